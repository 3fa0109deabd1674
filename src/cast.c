/*
 * cast.c - numeric conversions as NumPy's astype makes them: the casting
 * rule (np.can_cast over bool, integers, floats and complex), a plan made
 * once per read, and the element loop. Every element goes through one
 * value (an integer kept as an integer, a float as a long double, which
 * holds every f2, f4 and f8 exactly), and from it straight to the target,
 * so that each conversion rounds once (int64 to f4, f8 to f2). Half
 * floats are ours, bit by bit. Pure functions over memory: knows nothing
 * of streams, headers or files.
 */
#include "cast.h"
#include "error.h"

#include <float.h>
#include <math.h>
#include <string.h>

static const char *const rule_names[] = {"safe", "same_kind", "unsafe"};

/* dtype.str, NUL-terminated (cut short if it ever did not fit). */
static void type_name(const npyio_dtype *dt, char *out, size_t cap)
{
    size_t n = npyio__dtype_str(dt, out, cap - 1);

    out[n < cap - 1 ? n : cap - 1] = '\0';
}

npyio__casting npyio__cast_rule(uint32_t flags)
{
    if (flags & NPYIO_READ_CAST_UNSAFE)
        return NPYIO__CAST_UNSAFE;
    if (flags & NPYIO_READ_CAST_SAME_KIND)
        return NPYIO__CAST_SAME_KIND;
    return NPYIO__CAST_SAFE;
}

const char *npyio__cast_rule_name(npyio__casting casting)
{
    return rule_names[casting];
}

/* ---- half floats --------------------------------------------------------- */

uint16_t npyio__half_from_double(double d)
{
    uint64_t x, sig, m, q, rem, halfway;
    uint16_t sign;
    int e, shift;

    memcpy(&x, &d, sizeof x);
    sign = (uint16_t)((x >> 48) & 0x8000u);
    e = (int)((x >> 52) & 0x7ff);
    sig = x & 0xfffffffffffffULL;
    if (e == 0x7ff) { /* NaN keeps its payload's top bits, as NumPy */
        uint16_t r = (uint16_t)(0x7c00u + (sig >> 42));

        return (uint16_t)(sign | (sig != 0 && r == 0x7c00u ? r + 1 : r));
    }
    e -= 1023;
    if (e >= 16)
        return (uint16_t)(sign | 0x7c00u);
    if (e < -25 || e == -1023) /* below half the smallest subnormal */
        return sign;
    m = sig | (1ULL << 52); /* the value is m * 2^(e - 52) */
    shift = e >= -14 ? 42 : 28 - e; /* to 10 fraction bits, or to units
                                       of 2^-24 (subnormals) */
    q = m >> shift;
    rem = m & ((1ULL << shift) - 1);
    halfway = 1ULL << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1)))
        q++; /* a carry into the exponent is right, up to infinity */
    if (e >= -14)
        return (uint16_t)(sign + ((uint64_t)(e + 14) << 10) + q);
    return (uint16_t)(sign + q);
}

double npyio__half_to_double(uint16_t h)
{
    uint64_t sign = (uint64_t)(h & 0x8000u) << 48, m = h & 0x3ffu, bits;
    unsigned e = (h >> 10) & 0x1fu;
    double d;

    if (e == 0) {
        d = ldexp((double)m, -24);
        return sign ? -d : d;
    }
    if (e == 0x1f)
        bits = sign | 0x7ff0000000000000ULL | (m << 42);
    else
        bits = sign | ((uint64_t)(e - 15 + 1023) << 52) | (m << 42);
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* ---- the rule ------------------------------------------------------------- */

/* NumPy's order of kinds for same_kind: a cast may go up, never down. */
static int kind_rank(char kind)
{
    switch (kind) {
    case 'b': return 0;
    case 'u': return 1;
    case 'i': return 2;
    case 'f': return 3;
    default: return 4; /* 'c' */
    }
}

/* The bytes of one float component (a complex holds two). */
static size_t real_size(const npyio__cast_side *s)
{
    return s->kind == 'c' ? s->size / 2 : s->size;
}

/* np.can_cast(from, to, 'safe'): every value of from is a value of to. */
static bool safe(const npyio__cast_side *from, const npyio__cast_side *to)
{
    bool int_from = from->kind == 'i' || from->kind == 'u';

    if (from->kind == 'b')
        return true;
    if (from->kind == to->kind)
        return to->size >= from->size;
    if (from->kind == 'u' && to->kind == 'i')
        return to->size > from->size;
    if (int_from && (to->kind == 'f' || to->kind == 'c')) /* i1 -> f2 ... */
        return real_size(to) >= (from->size < 4 ? 2 * from->size : 8);
    if (from->kind == 'f' && to->kind == 'c')
        return real_size(to) >= from->size;
    return false;
}

bool npyio__cast_allowed(const npyio__cast_side *from,
                         const npyio__cast_side *to, npyio__casting casting)
{
    if (casting == NPYIO__CAST_UNSAFE || safe(from, to))
        return true;
    return casting == NPYIO__CAST_SAME_KIND &&
           kind_rank(from->kind) <= kind_rank(to->kind);
}

/* ---- plans ---------------------------------------------------------------- */

static const char *kind_word(npyio_kind kind)
{
    switch (kind) {
    case NPYIO_KIND_RECORD: return "a record type";
    case NPYIO_KIND_SUBARRAY: return "a subarray type";
    case NPYIO_KIND_BYTES: return "a bytes type (S)";
    case NPYIO_KIND_STR: return "a str type (U)";
    case NPYIO_KIND_VOID: return "a void type (V)";
    case NPYIO_KIND_OBJECT: return "an object type (O)";
    case NPYIO_KIND_DATETIME: return "a datetime64 type (M)";
    default: return "a timedelta64 type (m)";
    }
}

/* One side from a dtype, or why it cannot convert. */
static npyio_status make_side(const npyio_dtype *dt, npyio__cast_side *s,
                              const char *from_name, const char *to_name)
{
    size_t ld = sizeof(long double);
    size_t n;

    memset(s, 0, sizeof *s);
    type_name(dt, s->name, sizeof s->name);
    s->kind = (char)dt->kind;
    s->size = dt->itemsize;
    s->order = dt->byteorder;
    s->swap = dt->itemsize > 1 && dt->byteorder != npyio__host_order();
    if (strchr("biufc", s->kind) == NULL || dt->kind == NPYIO_KIND_RECORD)
        return npyio__fail(NPYIO_E_UNSUPPORTED, "cannot cast '%s' to '%s': "
                           "'%s' is %s; only bool, integers, floats and "
                           "complex convert", from_name, to_name, s->name,
                           kind_word(dt->kind));
    n = real_size(s);
    if ((s->kind == 'f' || s->kind == 'c') && n != 2 && n != 4 && n != 8 &&
        n != ld)
        return npyio__fail(NPYIO_E_UNSUPPORTED, "cannot cast '%s' to '%s': "
                           "'%s' is a long double of %zu bytes, and this "
                           "host's are %zu", from_name, to_name, s->name,
                           n, ld);
    if (s->kind == 'c' && n == 2)
        return npyio__fail(NPYIO_E_UNSUPPORTED, "cannot cast '%s' to '%s': "
                           "no complex type has halves of 2 bytes",
                           from_name, to_name);
    return NPYIO_OK;
}

npyio_status npyio__cast_plan_make(const npyio_dtype *from,
                                   const npyio_dtype *to,
                                   npyio__casting casting,
                                   const npyio__mem *mem,
                                   npyio__cast_plan *plan)
{
    char a[16], b[16];
    npyio_status st;

    (void)mem; /* a plan owns nothing yet */
    memset(plan, 0, sizeof *plan);
    type_name(from, a, sizeof a);
    type_name(to, b, sizeof b);
    st = make_side(from, &plan->from, a, b);
    if (st == NPYIO_OK)
        st = make_side(to, &plan->to, a, b);
    if (st != NPYIO_OK)
        return st;
    if (!npyio__cast_allowed(&plan->from, &plan->to, casting))
        return npyio__fail(NPYIO_E_UNSUPPORTED, "cannot cast '%s' to '%s' "
                           "under the '%s' rule", a, b, rule_names[casting]);
    plan->copy = plan->from.kind == plan->to.kind &&
                 plan->from.size == plan->to.size;
    plan->half_via_float = plan->to.kind == 'f' && plan->to.size == 2 &&
                           real_size(&plan->from) > 8;
    return NPYIO_OK;
}

void npyio__cast_plan_free(npyio__cast_plan *plan)
{
    if (plan != NULL)
        memset(plan, 0, sizeof *plan);
}

/* ---- elements ------------------------------------------------------------- */

enum { V_INT, V_UINT, V_REAL };

/* One element on its way: an integer as an integer (both views of its
 * bits), a float or complex as long doubles (exact for f2, f4, f8). */
typedef struct value {
    int cls;
    uint64_t bits; /* V_INT, V_UINT */
    long double re, im;
} value;

static void reverse(unsigned char *b, size_t n)
{
    size_t i;

    for (i = 0; i < n / 2; i++) {
        unsigned char t = b[i];

        b[i] = b[n - 1 - i];
        b[n - 1 - i] = t;
    }
}

/* A float of `size` bytes in host order at b. */
static long double load_real(const unsigned char *b, size_t size)
{
    uint16_t h;
    float f;
    double d;
    long double ld;

    switch (size) {
    case 2: memcpy(&h, b, 2); return npyio__half_to_double(h);
    case 4: memcpy(&f, b, 4); return f;
    case 8: memcpy(&d, b, 8); return d;
    default: memcpy(&ld, b, sizeof ld); return ld;
    }
}

static void load(const npyio__cast_side *s, const unsigned char *p,
                 value *v)
{
    union { long double align; unsigned char b[64]; } u;
    size_t n = real_size(s), k;

    memcpy(u.b, p, s->size);
    if (s->kind == 'f' || s->kind == 'c') {
        if (s->swap) {
            reverse(u.b, n);
            reverse(u.b + n, s->kind == 'c' ? n : 0);
        }
        v->cls = V_REAL;
        v->re = load_real(u.b, n);
        v->im = s->kind == 'c' ? load_real(u.b + n, n) : 0.0L;
        return;
    }
    v->bits = 0;
    for (k = 0; k < s->size; k++) /* integers by their stated order */
        v->bits |= (uint64_t)u.b[s->order == '>' ? s->size - 1 - k : k]
                   << (8 * k);
    if (s->kind == 'b')
        v->bits = v->bits != 0;
    else if (s->kind == 'i' && s->size < 8 &&
             (v->bits >> (8 * s->size - 1)))
        v->bits |= ~0ULL << (8 * s->size); /* sign extension */
    v->cls = s->kind == 'i' ? V_INT : V_UINT;
}

/* The integer's value as a signed one (two's complement bits). */
static int64_t as_signed(uint64_t bits)
{
    int64_t i;

    memcpy(&i, &bits, sizeof i);
    return i;
}

/* A float of `size` bytes in host order at b, from a value's part `x`
 * (or its integer): rounded once, as a C conversion rounds. */
static void store_real(const npyio__cast_plan *p, const value *v,
                       long double x, size_t size, unsigned char *b)
{
    union { long double ld; double d; float f; uint16_t h;
            unsigned char b[sizeof(long double)]; } u;

    memset(&u, 0, sizeof u); /* long doubles' padding bytes are 0 */
    if (size == 2) { /* integers through f4, as NumPy: exact up to 2^24,
                        infinity beyond */
        float f = v->cls == V_INT    ? (float)as_signed(v->bits)
                  : v->cls == V_UINT ? (float)v->bits
                                     : (float)x;

        u.h = npyio__half_from_double(v->cls == V_REAL && !p->half_via_float
                                          ? (double)x : (double)f);
    } else if (size == 4) {
        u.f = v->cls == V_INT    ? (float)as_signed(v->bits)
              : v->cls == V_UINT ? (float)v->bits : (float)x;
    } else if (size == 8) {
        u.d = v->cls == V_INT    ? (double)as_signed(v->bits)
              : v->cls == V_UINT ? (double)v->bits : (double)x;
    } else {
        u.ld = v->cls == V_INT    ? (long double)as_signed(v->bits)
               : v->cls == V_UINT ? (long double)v->bits : x;
    }
    memcpy(b, u.b, size);
}

/* A float's truncation as integer bits, if the target holds it. */
static npyio_status real_to_bits(const npyio__cast_plan *p, long double x,
                                 uint64_t index, uint64_t *bits)
{
    int w = (int)(8 * p->to.size);
    bool ok = p->to.kind == 'u'
                  ? x > -1.0L && x < ldexpl(1.0L, w)
                  : x > -ldexpl(1.0L, w - 1) - 1.0L && x < ldexpl(1.0L, w - 1);

    if (!ok)
        return npyio__fail(NPYIO_E_OVERFLOW, "element %llu: %.*Lg does not "
                           "fit in '%s' (converting '%s')",
                           (unsigned long long)index,
                           real_size(&p->from) > 8 ? LDBL_DECIMAL_DIG : 17,
                           x, p->to.name, p->from.name);
    if (x < 0)
        *bits = (uint64_t)(int64_t)x;
    else
        *bits = (uint64_t)x;
    return NPYIO_OK;
}

static npyio_status store(const npyio__cast_plan *p, const value *v,
                          unsigned char *dst, uint64_t index)
{
    const npyio__cast_side *s = &p->to;
    unsigned char b[64];
    size_t n = real_size(s), k;
    uint64_t bits = v->bits;
    npyio_status st;

    if (s->kind == 'f' || s->kind == 'c') {
        store_real(p, v, v->re, n, b);
        if (s->kind == 'c') {
            value im = {V_REAL, 0, v->cls == V_REAL ? v->im : 0.0L, 0.0L};

            store_real(p, &im, im.re, n, b + n);
        }
        if (s->swap) {
            reverse(b, n);
            reverse(b + n, s->kind == 'c' ? n : 0);
        }
        memcpy(dst, b, s->size);
        return NPYIO_OK;
    }
    if (s->kind == 'b') {
        dst[0] = v->cls == V_REAL ? (v->re != 0 || v->im != 0) : bits != 0;
        return NPYIO_OK;
    }
    if (v->cls == V_REAL) {
        st = real_to_bits(p, v->re, index, &bits);
        if (st != NPYIO_OK)
            return st;
    }
    for (k = 0; k < s->size; k++) /* wraps modulo 2^(8 size) */
        dst[s->order == '>' ? s->size - 1 - k : k] =
            (unsigned char)(bits >> (8 * k));
    return NPYIO_OK;
}

/* Same kind and size: the bytes, in the target's order. */
static void copy_elements(const npyio__cast_plan *p, const unsigned char *src,
                          unsigned char *dst, size_t n)
{
    size_t half = real_size(&p->to), i;

    memcpy(dst, src, n * p->to.size);
    if (p->from.order == p->to.order || p->to.size == 1)
        return;
    for (i = 0; i < n; i++) {
        reverse(dst + i * p->to.size, half);
        if (p->to.kind == 'c')
            reverse(dst + i * p->to.size + half, half);
    }
}

npyio_status npyio__cast_apply(const npyio__cast_plan *plan, const void *src,
                               void *dst, size_t n, uint64_t first)
{
    const unsigned char *s = src;
    unsigned char *d = dst;
    size_t i;

    if (plan->copy) {
        copy_elements(plan, s, d, n);
        return NPYIO_OK;
    }
    for (i = 0; i < n; i++) {
        value v;
        npyio_status st;

        load(&plan->from, s + i * plan->from.size, &v);
        st = store(plan, &v, d + i * plan->to.size, first + i);
        if (st != NPYIO_OK)
            return st;
    }
    return NPYIO_OK;
}
