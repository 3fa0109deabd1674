/*
 * cast_direct.c - the conversions a plain C conversion makes exactly as
 * NumPy's astype does, between native integers and floats: one typed loop
 * per pair, which the compiler vectorizes (cast.c's general path goes
 * through 64-bit values a step at a time, several times slower). Used
 * only where the result is the same: both sides in this host's byte
 * order; integers and f4/f8 on either side, but not floats to integers
 * (those need cast.c's range checks and NPYIO_E_OVERFLOW), not bool
 * (any nonzero byte is true), not halves, long doubles or complex.
 *
 * Integer to integer wraps modulo 2^n as GCC and Clang define the
 * conversion to a narrower signed type (C leaves it to the
 * implementation; both documented compilers wrap, which is NumPy's
 * result). Integer and double to float round once, to nearest even.
 */
#include "cast.h"

#include <string.h>

/* The types, numbered: i1 i2 i4 i8 u1 u2 u4 u8 f4 f8. */
enum { T_I1, T_I2, T_I4, T_I8, T_U1, T_U2, T_U4, T_U8, T_F4, T_F8, T_NONE };

static int type_code(const npyio__cast_side *s)
{
    static const char sizes[] = {1, 2, 4, 8};
    int k;

    if (s->swap)
        return T_NONE;
    for (k = 0; k < 4; k++) {
        if ((size_t)sizes[k] != s->size)
            continue;
        if (s->kind == 'i')
            return T_I1 + k;
        if (s->kind == 'u')
            return T_U1 + k;
        if (s->kind == 'f' && k >= 2)
            return T_F4 + k - 2;
    }
    return T_NONE;
}

/* n elements of TF at s as TT at d (any alignment: memcpy, which the
 * compiler turns into plain loads and stores). */
#define LOOP(TF, TT)                                                         \
    for (i = 0; i < n; i++) {                                                \
        TF x;                                                                \
        TT y;                                                                \
        memcpy(&x, s + i * sizeof x, sizeof x);                              \
        y = (TT)x;                                                           \
        memcpy(d + i * sizeof y, &y, sizeof y);                              \
    }                                                                        \
    break

/* One function per target type, switching once on the source type. */
#define TO(name, TT)                                                         \
    static void name(int from, const unsigned char *s, unsigned char *d,     \
                     size_t n)                                               \
    {                                                                        \
        size_t i;                                                            \
        switch (from) {                                                      \
        case T_I1: LOOP(int8_t, TT);                                         \
        case T_I2: LOOP(int16_t, TT);                                        \
        case T_I4: LOOP(int32_t, TT);                                        \
        case T_I8: LOOP(int64_t, TT);                                        \
        case T_U1: LOOP(uint8_t, TT);                                        \
        case T_U2: LOOP(uint16_t, TT);                                       \
        case T_U4: LOOP(uint32_t, TT);                                       \
        case T_U8: LOOP(uint64_t, TT);                                       \
        case T_F4: LOOP(float, TT);                                          \
        default: LOOP(double, TT);                                           \
        }                                                                    \
    }

TO(to_i1, int8_t)
TO(to_i2, int16_t)
TO(to_i4, int32_t)
TO(to_i8, int64_t)
TO(to_u1, uint8_t)
TO(to_u2, uint16_t)
TO(to_u4, uint32_t)
TO(to_u8, uint64_t)
TO(to_f4, float)
TO(to_f8, double)

bool npyio__cast_direct(const npyio__cast_plan *plan, const void *src,
                        void *dst, size_t n)
{
    static void (*const to[])(int, const unsigned char *, unsigned char *,
                              size_t) = {to_i1, to_i2, to_i4, to_i8, to_u1,
                                         to_u2, to_u4, to_u8, to_f4, to_f8};
    int from = type_code(&plan->from), target = type_code(&plan->to);

    if (from == T_NONE || target == T_NONE ||
        (from >= T_F4 && target < T_F4))
        return false;
    to[target](from, src, dst, n);
    return true;
}
