/* low.c - layer 10 of the fixture, calling up into high.c (layer 20). */
#include "fixture.h"

int fixture_low(int x)
{
    return fixture_high(x) + 1;
}
