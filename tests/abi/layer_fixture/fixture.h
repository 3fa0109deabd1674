/*
 * fixture.h - the functions of the layer check's fixture objects
 * (check_layer_symbols.sh must fail on them: see tests/CMakeLists.txt):
 * low calls high, a higher layer; ring_a, ring_b and ring_c call each
 * other in a loop of three.
 */
#ifndef NPYIO_LAYER_FIXTURE_H
#define NPYIO_LAYER_FIXTURE_H

int fixture_low(int x);
int fixture_high(int x);
int fixture_ring_a(int x);
int fixture_ring_b(int x);
int fixture_ring_c(int x);

#endif
