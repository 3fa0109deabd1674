/* ring_a.c - one of three fixture modules calling each other in a loop:
 * ring_a calls ring_b. */
#include "fixture.h"

int fixture_ring_a(int x)
{
    return x > 0 ? fixture_ring_b(x - 1) : 0;
}
