/*
 * header_pedantic.c - the public header must compile on its own as strict
 * C99 and C11 (and C++) and warn about nothing (checked with -pedantic
 * -Werror by ctest), so that any C program, old or strict, can include it.
 *
 * The C11 type layer exists in C11 and later; in C99 its macros are
 * refusals, and C++ has none (npyio.hpp is its layer). Where it exists,
 * every standard arithmetic type has its type string, and (built with
 * -DNPYIO_EXPECT_REFUSAL, a test that must fail to compile) plain char
 * has none.
 */
#include "npyio.h"

int npyio_header_compiles(void);

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && \
    !defined(__cplusplus)
#ifndef NPYIO_TYPE_OF
#error "C11: NPYIO_TYPE_OF is missing"
#endif
static int typed_calls_compile(void)
{
    const double d[2] = {1, 2};
    const int64_t shape[1] = {2};
    unsigned long long u = 0;
    long double g = 0;
    const char *types[3] = {NPYIO_TYPE_OF(&u), NPYIO_TYPE_OF(&g),
                            NPYIO_TYPE_OF(d)};
#ifdef NPYIO_EXPECT_REFUSAL
    char c = 0;
    const char *refused = NPYIO_TYPE_OF(&c);
    (void)refused;
#endif
    (void)types;
    return NPYIO_SAVE("x.npy", 1, shape, d, sizeof d, 0, NULL) == NPYIO_OK;
}
#else
/* C++ has no such macros (npyio.hpp is its layer); before C11 they exist
 * as refusals (tests/abi/check_c11_macros.sh shows that a use fails to
 * compile), which warn about nothing here. */
#if defined(__cplusplus) && defined(NPYIO_TYPE_OF)
#error "C++: NPYIO_TYPE_OF must not exist (npyio.hpp is the C++ layer)"
#elif !defined(__cplusplus) &&                                          \
    (!defined(NPYIO_TYPE_OF) || !defined(NPYIO_SAVE) ||                 \
     !defined(NPYIO_NPZ_WRITER_ADD))
#error "C99: the C11 macros must exist, as compile-time refusals"
#endif
static int typed_calls_compile(void)
{
    return 1;
}
#endif

int npyio_header_compiles(void)
{
    return npyio_version_number() > 0 && typed_calls_compile() >= 0;
}
