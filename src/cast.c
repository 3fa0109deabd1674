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
        d = (double)m * 0x1p-24; /* exact: m < 2^10 */
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

/* The bounds of an integer target, for floats on their way to it: the
 * truncation of x fits when lo_excl < x < hi (lo_excl = min - 1, which
 * rounds onto min itself in a double for 64 bits: x >= lo_incl then). */
static void set_limits(npyio__cast_plan *plan)
{
    npyio__cast_limits *l = &plan->limits;
    int w = (int)(8 * plan->to.size);
    bool u = plan->to.kind == 'u';
    double half_range;

    if (plan->to.kind != 'i' && !u)
        return;
    /* 2^(w-1) exactly, without libm */
    half_range = (double)((uint64_t)1 << (w - 1));
    l->hi = u ? 2.0 * half_range : half_range;
    l->lo_incl = u ? 0.0 : -half_range;
    l->lo_excl = l->lo_incl - 1.0;
    l->lhi = l->hi;
    l->llo_incl = l->lo_incl;
    l->llo_excl = (long double)l->lo_incl - 1.0L;
}

/* A conversion the rule refuses, with the way out: the weakest flag
 * that allows it, and NumPy's default, which casts where the rule here
 * (np.can_cast's) does not: astype(casting='unsafe'). */
static npyio_status refuse(const npyio__cast_plan *plan, const char *a,
                           const char *b, npyio__casting casting)
{
    bool same_kind = npyio__cast_allowed(&plan->from, &plan->to,
                                         NPYIO__CAST_SAME_KIND);

    return npyio__fail(NPYIO_E_UNSUPPORTED, "cannot cast '%s' to '%s' "
                       "under the '%s' rule; %s allows it (NumPy's astype "
                       "casts unsafely by default)", a, b,
                       rule_names[casting],
                       same_kind ? "NPYIO_READ_CAST_SAME_KIND"
                                 : "NPYIO_READ_CAST_UNSAFE");
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
        return refuse(plan, a, b, casting);
    plan->copy = plan->from.kind == plan->to.kind &&
                 plan->from.size == plan->to.size;
    set_limits(plan);
    return NPYIO_OK;
}

void npyio__cast_plan_free(npyio__cast_plan *plan)
{
    if (plan != NULL)
        memset(plan, 0, sizeof *plan);
}

/* ---- elements ------------------------------------------------------------- */

/* Elements converted per step: a step's values stay in L1 cache, and each
 * loop below runs over one type, not a switch per element. */
#define STEP 256

enum { V_INT, V_UINT, V_DBL, V_LDBL };

/* A step's elements on their way, in one of four classes: integers as
 * their 64-bit two's complement bits (V_INT signed, V_UINT not, bool as
 * 0 or 1), floats and complex of up to 8 bytes a part as doubles (which
 * hold f2, f4 and f8 exactly), long doubles as long doubles. Real types
 * have imaginary parts 0. */
typedef struct values {
    int cls;
    uint64_t bits[STEP];
    double re[STEP], im[STEP];
    long double lre[STEP], lim[STEP];
} values;

static void reverse(unsigned char *b, size_t n)
{
    size_t i;

    for (i = 0; i < n / 2; i++) {
        unsigned char t = b[i];

        b[i] = b[n - 1 - i];
        b[n - 1 - i] = t;
    }
}

static uint32_t swap32(uint32_t x)
{
    return (x << 24) | ((x << 8) & 0xff0000u) | ((x >> 8) & 0xff00u) |
           (x >> 24);
}

static uint64_t swap64(uint64_t x)
{
    return (uint64_t)swap32((uint32_t)x) << 32 | swap32((uint32_t)(x >> 32));
}

/* An unsigned integer of w = 1, 2, 4 or 8 bytes at p (swapped first if the
 * bytes are in the other order than this host's). */
static uint64_t get_bits(const unsigned char *p, size_t w, bool swap)
{
    uint16_t h;
    uint32_t u;
    uint64_t d;

    switch (w) {
    case 1: return p[0];
    case 2:
        memcpy(&h, p, 2);
        return swap ? (uint16_t)(h << 8 | h >> 8) : h;
    case 4: memcpy(&u, p, 4); return swap ? swap32(u) : u;
    default: memcpy(&d, p, 8); return swap ? swap64(d) : d;
    }
}

/* The low w bytes of x at p, in this host's order or swapped. */
static void put_bits(unsigned char *p, size_t w, bool swap, uint64_t x)
{
    uint16_t h = (uint16_t)x;
    uint32_t u = (uint32_t)x;

    switch (w) {
    case 1: p[0] = (unsigned char)x; break;
    case 2:
        h = swap ? (uint16_t)(h << 8 | h >> 8) : h;
        memcpy(p, &h, 2);
        break;
    case 4: u = swap ? swap32(u) : u; memcpy(p, &u, 4); break;
    default: x = swap ? swap64(x) : x; memcpy(p, &x, 8); break;
    }
}

static void load_ints(const npyio__cast_side *s, const unsigned char *src,
                      size_t n, values *v)
{
    unsigned w = (unsigned)(8 * s->size);
    size_t i;

    v->cls = s->kind == 'i' ? V_INT : V_UINT;
    for (i = 0; i < n; i++) {
        uint64_t x = get_bits(src + i * s->size, s->size, s->swap);

        if (s->kind == 'b')
            x = x != 0;
        else if (s->kind == 'i' && w < 64 && (x >> (w - 1)))
            x |= ~0ULL << w; /* sign extension */
        v->bits[i] = x;
    }
}

/* A float of `size` (2, 4, 8) bytes at p, as a double (exact). */
static double get_double(const unsigned char *p, size_t size, bool swap)
{
    uint64_t x = get_bits(p, size, swap);
    uint32_t u = (uint32_t)x;
    float f;
    double d;

    if (size == 2)
        return npyio__half_to_double((uint16_t)x);
    if (size == 4) {
        memcpy(&f, &u, 4);
        return f;
    }
    memcpy(&d, &x, 8);
    return d;
}

static long double get_ldbl(const unsigned char *p, size_t size, bool swap)
{
    unsigned char b[sizeof(long double)];
    long double x;

    memcpy(b, p, size);
    if (swap)
        reverse(b, size);
    memcpy(&x, b, sizeof x);
    return x;
}

static void load_floats(const npyio__cast_side *s, const unsigned char *src,
                        size_t n, values *v)
{
    size_t part = real_size(s), i;
    bool cx = s->kind == 'c';

    v->cls = part > 8 ? V_LDBL : V_DBL;
    for (i = 0; part > 8 && i < n; i++) {
        const unsigned char *p = src + i * s->size;

        v->lre[i] = get_ldbl(p, part, s->swap);
        v->lim[i] = cx ? get_ldbl(p + part, part, s->swap) : 0.0L;
    }
    for (i = 0; part <= 8 && i < n; i++)
        v->re[i] = get_double(src + i * s->size, part, s->swap);
    for (i = 0; part <= 8 && i < n; i++)
        v->im[i] = cx ? get_double(src + i * s->size + part, part, s->swap)
                      : 0.0;
}

/* The integer's value as a signed one (two's complement bits). */
static int64_t as_signed(uint64_t bits)
{
    int64_t i;

    memcpy(&i, &bits, sizeof i);
    return i;
}

/* Element i's real (imag 0) or imaginary part in a float type, rounded
 * once from the exact value, as a C conversion rounds. */
static float to_float(const values *v, size_t i, int imag)
{
    switch (v->cls) {
    case V_INT: return imag ? 0.0f : (float)as_signed(v->bits[i]);
    case V_UINT: return imag ? 0.0f : (float)v->bits[i];
    case V_DBL: return (float)(imag ? v->im[i] : v->re[i]);
    default: return (float)(imag ? v->lim[i] : v->lre[i]);
    }
}

static double to_double(const values *v, size_t i, int imag)
{
    switch (v->cls) {
    case V_INT: return imag ? 0.0 : (double)as_signed(v->bits[i]);
    case V_UINT: return imag ? 0.0 : (double)v->bits[i];
    case V_DBL: return imag ? v->im[i] : v->re[i];
    default: return (double)(imag ? v->lim[i] : v->lre[i]);
    }
}

static long double to_ldbl(const values *v, size_t i, int imag)
{
    switch (v->cls) {
    case V_INT: return imag ? 0.0L : (long double)as_signed(v->bits[i]);
    case V_UINT: return imag ? 0.0L : (long double)v->bits[i];
    case V_DBL: return imag ? v->im[i] : v->re[i];
    default: return imag ? v->lim[i] : v->lre[i];
    }
}

/* A half from doubles directly (rounded once); from integers and long
 * doubles through f4, as NumPy converts them (integers: exact below 2^24,
 * infinity above 65519 either way). */
static uint16_t to_half(const values *v, size_t i, int imag)
{
    if (v->cls == V_DBL)
        return npyio__half_from_double(imag ? v->im[i] : v->re[i]);
    return npyio__half_from_double((double)to_float(v, i, imag));
}

/* Part `imag` of n elements as floats of `size` (4, 8 or long double)
 * bytes, `stride` bytes apart from q: one loop per target type. */
static void put_reals(const npyio__cast_plan *p, const values *v, int imag,
                      size_t size, unsigned char *q, size_t n)
{
    size_t stride = p->to.size, i;
    bool swap = p->to.swap;
    union { long double ld; double d; float f; uint32_t u; uint64_t x;
            unsigned char b[sizeof(long double)]; } u;

    if (size == 4) {
        for (i = 0; i < n; i++) {
            u.f = to_float(v, i, imag);
            put_bits(q + i * stride, 4, swap, u.u);
        }
    } else if (size == 8) {
        for (i = 0; i < n; i++) {
            u.d = to_double(v, i, imag);
            put_bits(q + i * stride, 8, swap, u.x);
        }
    } else {
        for (i = 0; i < n; i++) {
            memset(&u, 0, sizeof u); /* long doubles' padding is 0 */
            u.ld = to_ldbl(v, i, imag);
            if (swap)
                reverse(u.b, size);
            memcpy(q + i * stride, u.b, size);
        }
    }
}

static void store_floats(const npyio__cast_plan *p, const values *v,
                         unsigned char *dst, size_t n)
{
    size_t part = real_size(&p->to), i;
    int imag;

    for (imag = 0; imag <= (p->to.kind == 'c'); imag++) {
        unsigned char *q = dst + (size_t)imag * part;

        if (part == 2) {
            for (i = 0; i < n; i++)
                put_bits(q + i * p->to.size, 2, p->to.swap,
                         to_half(v, i, imag));
        } else {
            put_reals(p, v, imag, part, q, n);
        }
    }
}

static void store_bools(const values *v, unsigned char *dst, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (v->cls == V_DBL)
            dst[i] = v->re[i] != 0 || v->im[i] != 0;
        else if (v->cls == V_LDBL)
            dst[i] = v->lre[i] != 0 || v->lim[i] != 0;
        else
            dst[i] = v->bits[i] != 0;
    }
}

/* NPYIO_E_OVERFLOW for element i of the step starting at index first. */
static npyio_status unfit(const npyio__cast_plan *p, const values *v,
                          size_t i, uint64_t first)
{
    long double x = v->cls == V_DBL ? v->re[i] : v->lre[i];

    return npyio__fail(NPYIO_E_OVERFLOW, "element %llu: %.*Lg does not fit "
                       "in '%s' (converting '%s')",
                       (unsigned long long)(first + i),
                       v->cls == V_DBL ? 17 : LDBL_DECIMAL_DIG, x,
                       p->to.name, p->from.name);
}

/* Floats truncated to integer bits where the target holds them (x within
 * (lo_excl, hi), or lo_incl itself where lo_excl rounded onto it). */
static bool truncate(const npyio__cast_plan *p, const values *v, size_t i,
                     uint64_t *bits)
{
    const npyio__cast_limits *l = &p->limits;

    if (v->cls == V_DBL) {
        double x = v->re[i];

        if (!(x < l->hi && (x > l->lo_excl || x >= l->lo_incl)))
            return false;
        /* one signed conversion below 2^63 (the common case), the
         * unsigned one only above */
        *bits = x < 0x1p63 ? (uint64_t)(int64_t)x : (uint64_t)x;
    } else {
        long double x = v->lre[i];

        if (!(x < l->lhi && (x > l->llo_excl || x >= l->llo_incl)))
            return false;
        *bits = x < 0x1p63L ? (uint64_t)(int64_t)x : (uint64_t)x;
    }
    return true;
}

static npyio_status store_ints(const npyio__cast_plan *p, const values *v,
                               unsigned char *dst, size_t n, uint64_t first)
{
    bool floats = v->cls == V_DBL || v->cls == V_LDBL;
    size_t i;

    for (i = 0; i < n; i++) {
        uint64_t bits = v->bits[i];

        if (floats && !truncate(p, v, i, &bits))
            return unfit(p, v, i, first);
        put_bits(dst + i * p->to.size, p->to.size, p->to.swap, bits);
    }
    return NPYIO_OK; /* wrapped modulo 2^(8 size) by put_bits */
}

/* Same kind and size: the bytes, in the target's order (each part of
 * 2, 4 or 8 bytes swapped as an integer, long doubles byte by byte). */
static void copy_elements(const npyio__cast_plan *p, const unsigned char *src,
                          unsigned char *dst, size_t n)
{
    size_t part = real_size(&p->to), parts = p->to.size / part, i;

    if (p->from.order == p->to.order || p->to.size == 1) {
        memcpy(dst, src, n * p->to.size);
        return;
    }
    memcpy(dst, src, n * p->to.size);
    for (i = 0; part == 8 && i < n * parts; i++) {
        uint64_t x;

        memcpy(&x, dst + 8 * i, 8);
        x = swap64(x);
        memcpy(dst + 8 * i, &x, 8);
    }
    for (i = 0; part == 4 && i < n * parts; i++) {
        uint32_t x;

        memcpy(&x, dst + 4 * i, 4);
        x = swap32(x);
        memcpy(dst + 4 * i, &x, 4);
    }
    for (i = 0; (part == 2 || part > 8) && i < n * parts; i++)
        reverse(dst + i * part, part);
}

npyio_status npyio__cast_apply(const npyio__cast_plan *plan, const void *src,
                               void *dst, size_t n, uint64_t first)
{
    const unsigned char *s = src;
    unsigned char *d = dst;
    size_t done, k;
    values v;

    if (plan->copy) {
        copy_elements(plan, s, d, n);
        return NPYIO_OK;
    }
    if (npyio__cast_direct(plan, s, d, n))
        return NPYIO_OK;
    for (done = 0; done < n; done += k) {
        const unsigned char *from = s + done * plan->from.size;
        unsigned char *to = d + done * plan->to.size;
        npyio_status st = NPYIO_OK;

        k = n - done < STEP ? n - done : STEP;
        if (strchr("biu", plan->from.kind) != NULL)
            load_ints(&plan->from, from, k, &v);
        else
            load_floats(&plan->from, from, k, &v);
        if (plan->to.kind == 'b')
            store_bools(&v, to, k);
        else if (plan->to.kind == 'i' || plan->to.kind == 'u')
            st = store_ints(plan, &v, to, k, first + done);
        else
            store_floats(plan, &v, to, k);
        if (st != NPYIO_OK)
            return st;
    }
    return NPYIO_OK;
}
