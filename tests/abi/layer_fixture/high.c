/* high.c - layer 20 of the fixture: called from below (low.c). */
#include "fixture.h"

int fixture_high(int x)
{
    return 2 * x;
}
