/* ring_b.c - one of three fixture modules calling each other in a loop:
 * ring_b calls ring_c. */
#include "fixture.h"

int fixture_ring_b(int x)
{
    return x > 0 ? fixture_ring_c(x - 1) : 0;
}
