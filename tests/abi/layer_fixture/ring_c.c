/* ring_c.c - one of three fixture modules calling each other in a loop:
 * ring_c calls ring_a. */
#include "fixture.h"

int fixture_ring_c(int x)
{
    return x > 0 ? fixture_ring_a(x - 1) : 0;
}
