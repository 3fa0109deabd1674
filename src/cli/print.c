/*
 * print.c - `npyio print` (see print.h).
 *
 * The text follows NumPy's arrayprint module (repr() of an ndarray with the
 * default print options): the same bracket nesting and hanging indents,
 * lines wrapped at 75 columns, one width per array for its elements, the
 * same choice of float digits, and the same summarising with "...".
 *
 * It works in three steps, so that memory stays bounded:
 *
 *  1. gather: decide which elements will be shown (all of them, or the
 *     first and last EDGE along each long axis), stream the data through a
 *     chunk buffer in file order and copy only those into a small C-order
 *     array of the shown elements;
 *  2. scan: pass over the shown elements to settle each formatter's widths,
 *     as NumPy's format classes do from the data they are about to print;
 *  3. layout: write the brackets, separators and wrapped lines, formatting
 *     each element as it is reached.
 *
 * Only the public API of npyio.h is used, and no libm function (the tool
 * is not linked with libm): the few float helpers needed are written here.
 */
#include <float.h>
#include <inttypes.h>
#include <math.h> /* NAN and INFINITY only: no libm function is called */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "print.h"

#define LINE_WIDTH 75     /* NumPy's default linewidth */
#define EDGE 3            /* NumPy's default edgeitems */
#define PRECISION 8       /* NumPy's default float precision */
#define PREFIX "array("
#define PREFIX_LEN 6

/* What we are willing to hold and print. The shown elements are kept in
 * memory (they must be, to settle common widths before printing), so a
 * huge --max or a pathological shape is refused rather than allocated. */
#define SHOW_MAX_COUNT INT64_C(10000000)
#define SHOW_MAX_BYTES ((uint64_t)256 << 20)
#define SHOW_MAX_WORK UINT64_C(100000000) /* elements + brackets formatted */
#define CHUNK_BYTES ((size_t)4 << 20)

/* ---- growable text ------------------------------------------------------ */

/* A growable string. An allocation failure sets nomem and turns every
 * later call into a no-op, so callers check once at the end. */
typedef struct sbuf {
    char *p;
    size_t len, cap;
    int nomem;
} sbuf;

static void sb_reserve(sbuf *b, size_t more)
{
    size_t need, cap;
    char *p;

    if (b->nomem)
        return;
    if (more > SIZE_MAX / 2 - b->len) {
        b->nomem = 1;
        return;
    }
    need = b->len + more + 1;
    if (need <= b->cap)
        return;
    cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap *= 2;
    p = realloc(b->p, cap);
    if (p == NULL) {
        b->nomem = 1;
        return;
    }
    b->p = p;
    b->cap = cap;
}

static void sb_add(sbuf *b, const char *s, size_t n)
{
    if (n == 0)
        return;
    sb_reserve(b, n);
    if (b->nomem)
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_str(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

static void sb_fill(sbuf *b, char c, size_t n)
{
    sb_reserve(b, n);
    if (b->nomem)
        return;
    memset(b->p + b->len, c, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_chr(sbuf *b, char c) { sb_fill(b, c, 1); }

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void sb_fmt(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->nomem = 1;
        return;
    }
    sb_reserve(b, (size_t)n);
    if (b->nomem)
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* Python measures lines in characters (code points), not bytes: count the
 * UTF-8 bytes that start a character. */
static size_t text_width(const char *s, size_t n)
{
    size_t i, w = 0;

    for (i = 0; i < n; i++)
        w += ((unsigned char)s[i] & 0xC0) != 0x80;
    return w;
}

/* ---- Python reprs of text ---------------------------------------------- */

/* Python's str.isprintable(), approximated without the Unicode database:
 * controls, surrogates, private use, non-characters and the usual format
 * and separator characters are escaped; unassigned code points are not
 * known here and print as themselves. */
static int py_printable(uint32_t c)
{
    if (c < 0x20 || (c >= 0x7F && c <= 0xA0) || c == 0xAD)
        return 0;
    if ((c >= 0xD800 && c <= 0xDFFF) || (c >= 0xE000 && c <= 0xF8FF) ||
        c >= 0xF0000 || (c & 0xFFFE) == 0xFFFE)
        return 0;
    if (c == 0x1680 || (c >= 0x2000 && c <= 0x200F) ||
        (c >= 0x2028 && c <= 0x202F) || (c >= 0x205F && c <= 0x2064) ||
        c == 0x3000 || c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFB))
        return 0;
    return 1;
}

static void put_utf8(sbuf *b, uint32_t c)
{
    char u[4];

    if (c < 0x80) {
        u[0] = (char)c;
        sb_add(b, u, 1);
    } else if (c < 0x800) {
        u[0] = (char)(0xC0 | (c >> 6));
        u[1] = (char)(0x80 | (c & 0x3F));
        sb_add(b, u, 2);
    } else if (c < 0x10000) {
        u[0] = (char)(0xE0 | (c >> 12));
        u[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        u[2] = (char)(0x80 | (c & 0x3F));
        sb_add(b, u, 3);
    } else {
        u[0] = (char)(0xF0 | (c >> 18));
        u[1] = (char)(0x80 | ((c >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((c >> 6) & 0x3F));
        u[3] = (char)(0x80 | (c & 0x3F));
        sb_add(b, u, 4);
    }
}

/* The quote Python's repr picks: ' unless the text has ' and no ". */
static char py_quote(int has_single, int has_double)
{
    return has_single && !has_double ? '"' : '\'';
}

/* An escape both str and bytes reprs use, or 0. */
static const char *py_common_escape(uint32_t c, char quote)
{
    if (c == '\\')
        return "\\\\";
    if (c == '\t')
        return "\\t";
    if (c == '\n')
        return "\\n";
    if (c == '\r')
        return "\\r";
    if (c == (uint32_t)quote)
        return quote == '\'' ? "\\'" : "\\\"";
    return NULL;
}

/* repr() of a Python str given as n code points. */
static void repr_codepoints(sbuf *b, const uint32_t *cp, size_t n)
{
    int has1 = 0, has2 = 0;
    size_t i;
    char q;

    for (i = 0; i < n; i++) {
        has1 |= cp[i] == '\'';
        has2 |= cp[i] == '"';
    }
    q = py_quote(has1, has2);
    sb_chr(b, q);
    for (i = 0; i < n; i++) {
        uint32_t c = cp[i];
        const char *e = py_common_escape(c, q);

        if (e != NULL)
            sb_str(b, e);
        else if (py_printable(c))
            put_utf8(b, c);
        else if (c < 0x100)
            sb_fmt(b, "\\x%02" PRIx32, c);
        else if (c < 0x10000)
            sb_fmt(b, "\\u%04" PRIx32, c);
        else /* beyond U+10FFFF too: Python has no such str, show it */
            sb_fmt(b, "\\U%08" PRIx32, c);
    }
    sb_chr(b, q);
}

/* Decode UTF-8 leniently (a bad byte becomes U+FFFD) into cp, which has
 * room for n code points; returns how many were written. */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    size_t i = 0, k = 0;

    while (i < n) {
        unsigned char c = s[i];
        size_t len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 :
                     c >= 0xC0 ? 2 : 0;
        uint32_t v = len == 1 ? c : len == 2 ? (c & 0x1Fu) :
                     len == 3 ? (c & 0x0Fu) : (c & 0x07u);
        size_t j;

        if (len == 0 || len > n - i) {
            cp[k++] = 0xFFFD;
            i++;
            continue;
        }
        for (j = 1; j < len && (s[i + j] & 0xC0) == 0x80; j++)
            v = (v << 6) | (s[i + j] & 0x3Fu);
        if (j < len) {
            cp[k++] = 0xFFFD;
            i++;
            continue;
        }
        cp[k++] = v;
        i += len;
    }
    return k;
}

/* repr() of a Python str given as UTF-8 (field names and titles). */
static void repr_utf8(sbuf *b, const char *s, size_t n)
{
    uint32_t *cp = malloc((n ? n : 1) * sizeof *cp);

    if (cp == NULL) {
        b->nomem = 1;
        return;
    }
    repr_codepoints(b, cp, utf8_decode((const unsigned char *)s, n, cp));
    free(cp);
}

/* repr() of a NumPy str_ element: UCS-4 in host order, trailing NULs
 * dropped as NumPy drops them. */
static void repr_ucs4(sbuf *b, const unsigned char *p, size_t nchars)
{
    uint32_t *cp = malloc((nchars ? nchars : 1) * sizeof *cp);
    size_t i;

    if (cp == NULL) {
        b->nomem = 1;
        return;
    }
    for (i = 0; i < nchars; i++)
        memcpy(&cp[i], p + 4 * i, 4);
    while (nchars > 0 && cp[nchars - 1] == 0)
        nchars--;
    repr_codepoints(b, cp, nchars);
    free(cp);
}

/* repr() of a bytes_ element, trailing NULs dropped. */
static void repr_bytes(sbuf *b, const unsigned char *p, size_t n)
{
    int has1 = 0, has2 = 0;
    size_t i;
    char q;

    while (n > 0 && p[n - 1] == 0)
        n--;
    for (i = 0; i < n; i++) {
        has1 |= p[i] == '\'';
        has2 |= p[i] == '"';
    }
    q = py_quote(has1, has2);
    sb_chr(b, 'b');
    sb_chr(b, q);
    for (i = 0; i < n; i++) {
        const char *e = py_common_escape(p[i], q);

        if (e != NULL)
            sb_str(b, e);
        else if (p[i] >= 0x20 && p[i] < 0x7F)
            sb_chr(b, (char)p[i]);
        else
            sb_fmt(b, "\\x%02x", p[i]);
    }
    sb_chr(b, q);
}

/* str() of an np.void: every byte as an upper-case escape, as NumPy does. */
static void repr_void(sbuf *b, const unsigned char *p, size_t n)
{
    size_t i;

    sb_str(b, "b'");
    for (i = 0; i < n; i++)
        sb_fmt(b, "\\x%02X", p[i]);
    sb_chr(b, '\'');
}

/* ---- floats ------------------------------------------------------------- */

/* The stored precision of a float, which decides how digits round-trip. */
enum { FP_HALF, FP_FLOAT, FP_DOUBLE, FP_LONG };

/* Classification without libm: NaN is unequal to itself, and x - x is NaN
 * for both infinities and NaN. */
static int fp_isnan(long double x) { return x != x; }
static int fp_isfinite(long double x) { return (x - x) == (x - x); }
static long double fp_abs(long double x) { return x < 0 ? -x : x; }

/* 2**k for small k, exactly. */
static double pow2i(int k)
{
    double v = 1.0;

    for (; k > 0; k--)
        v *= 2.0;
    for (; k < 0; k++)
        v /= 2.0;
    return v;
}

/* The value of an IEEE half (bits in host order). */
static double half_value(uint16_t h)
{
    int e = (h >> 10) & 0x1F;
    double m = h & 0x3FF, v;

    if (e == 0)
        v = m * pow2i(-24);
    else if (e == 31)
        v = m != 0 ? (double)NAN : (double)INFINITY;
    else
        v = (m + 1024.0) * pow2i(e - 25);
    return (h & 0x8000) ? -v : v;
}

/* Whether y rounds (to nearest, ties to even) to the finite half whose
 * magnitude bits are hm: y must lie between the midpoints to hm's
 * neighbours, which are exact in double. Done by hand because converting
 * double to half is not in C11. */
static int half_rounds_to(double y, uint16_t hm, int negative)
{
    double cur = half_value(hm), lo, hi;
    int even = (hm & 1) == 0;

    if (y != 0 && (y < 0) != negative)
        return 0;
    if (y < 0)
        y = -y;
    lo = hm > 0 ? (half_value((uint16_t)(hm - 1)) + cur) / 2 : -1.0;
    /* beyond the largest half (65504) lies 65536, the first overflow */
    hi = ((hm < 0x7BFF ? half_value((uint16_t)(hm + 1)) : 65536.0) + cur) / 2;
    return (y > lo || (y == lo && even)) && (y < hi || (y == hi && even));
}

static int fp_roundtrips(const char *s, long double x, int prec)
{
    switch (prec) {
    case FP_HALF: {
        /* x is exactly a half: find its bits from its magnitude */
        double ax = (double)fp_abs(x);
        uint16_t lo = 0, hi = 0x7BFF;

        while (lo < hi) {
            uint16_t mid = (uint16_t)(lo + (hi - lo) / 2);

            if (half_value(mid) < ax)
                lo = (uint16_t)(mid + 1);
            else
                hi = mid;
        }
        return half_rounds_to(strtod(s, NULL), lo, x < 0);
    }
    case FP_FLOAT:
        return strtof(s, NULL) == (float)x;
    case FP_DOUBLE:
        return strtod(s, NULL) == (double)x;
    default:
        return strtold(s, NULL) == x;
    }
}

static int fp_max_digits(int prec)
{
    switch (prec) {
    case FP_HALF:
        return 5;
    case FP_FLOAT:
        return 9;
    case FP_DOUBLE:
        return 17;
    default:
#ifdef LDBL_DECIMAL_DIG
        return LDBL_DECIMAL_DIG;
#else
        return 36;
#endif
    }
}

/* x in scientific notation with `digits` significant digits, correctly
 * rounded by the C library. */
static void fp_sci(char *buf, size_t cap, long double x, int prec, int digits)
{
    if (prec == FP_LONG)
        snprintf(buf, cap, "%.*Le", digits - 1, x);
    else
        snprintf(buf, cap, "%.*e", digits - 1, (double)x);
}

/* The fewest significant digits that read back as x (what NumPy's Dragon4
 * calls unique). More digits never stop round-tripping, so bisect. */
static void fp_shortest(char *buf, size_t cap, long double x, int prec)
{
    int lo = 1, hi = fp_max_digits(prec);

    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;

        fp_sci(buf, cap, x, prec, mid);
        if (fp_roundtrips(buf, x, prec))
            hi = mid;
        else
            lo = mid + 1;
    }
    fp_sci(buf, cap, x, prec, lo);
}

/* A finite number cut into the pieces NumPy pads separately: sign and
 * integer digits, fraction digits (without trailing zeros), exponent. */
typedef struct fparts {
    char ipart[104];
    char frac[80];
    int exp;
} fparts;

/* Split "-d.ddde+XX" into digits (no point) and exponent. */
static void sci_split(const char *s, int *neg, char *digits, size_t cap,
                      int *exp)
{
    size_t n = 0;

    *neg = *s == '-';
    if (*neg)
        s++;
    for (; *s != '\0' && *s != 'e'; s++)
        if (*s >= '0' && *s <= '9' && n + 1 < cap)
            digits[n++] = *s;
    digits[n] = '\0';
    *exp = *s == 'e' ? atoi(s + 1) : 0;
}

static void strip_zeros(char *frac)
{
    size_t n = strlen(frac);

    while (n > 0 && frac[n - 1] == '0')
        frac[--n] = '\0';
}

/* NumPy's dragon4_positional(x, precision=8, unique=True, trim='.'): the
 * shortest digits, unless they need more than 8 decimals, in which case
 * the value rounded to 8 decimals. */
static void fp_positional(fparts *fp, const char *sign, long double x,
                          int prec)
{
    char buf[96], d[64];
    int neg, e, nd, i;
    size_t k = 0;

    fp_shortest(buf, sizeof buf, x, prec);
    sci_split(buf, &neg, d, sizeof d, &e);
    nd = (int)strlen(d);
    if (nd - 1 - e > PRECISION) {
        char *dot;

        if (prec == FP_LONG)
            snprintf(buf, sizeof buf, "%.*Lf", PRECISION, fp_abs(x));
        else
            snprintf(buf, sizeof buf, "%.*f", PRECISION, (double)fp_abs(x));
        dot = strchr(buf, '.');
        if (dot == NULL)
            dot = buf + strlen(buf);
        snprintf(fp->frac, sizeof fp->frac, "%s", *dot ? dot + 1 : "");
        *dot = '\0';
        snprintf(fp->ipart, sizeof fp->ipart, "%s%s", sign, buf);
        strip_zeros(fp->frac);
        return;
    }
    if (e >= nd) {
        /* digits cut short before the point: NumPy writes the integer's
         * own digits there (float16 20512 is 20512., not 20510.) */
        if (prec == FP_LONG)
            snprintf(buf, sizeof buf, "%.0Lf", fp_abs(x));
        else
            snprintf(buf, sizeof buf, "%.0f", (double)fp_abs(x));
        snprintf(fp->ipart, sizeof fp->ipart, "%s%s", sign, buf);
        fp->frac[0] = '\0';
        return;
    }
    k = (size_t)snprintf(fp->ipart, sizeof fp->ipart, "%s", sign);
    if (e < 0) {
        fp->ipart[k++] = '0';
    } else {
        for (i = 0; i <= e && k + 1 < sizeof fp->ipart; i++)
            fp->ipart[k++] = i < nd ? d[i] : '0';
    }
    fp->ipart[k] = '\0';
    k = 0;
    for (i = e + 1; i < nd; i++)
        if (k + 1 < sizeof fp->frac)
            fp->frac[k++] = i < 0 ? '0' : d[i];
    fp->frac[k] = '\0';
}

/* NumPy's dragon4_scientific(x, precision=8, unique=True, trim='.'). */
static void fp_scientific(fparts *fp, const char *sign, long double x,
                          int prec)
{
    char buf[96], d[64];
    int neg;

    fp_shortest(buf, sizeof buf, x, prec);
    sci_split(buf, &neg, d, sizeof d, &fp->exp);
    if (strlen(d) - 1 > PRECISION) {
        fp_sci(buf, sizeof buf, x, prec, PRECISION + 1);
        sci_split(buf, &neg, d, sizeof d, &fp->exp);
    }
    snprintf(fp->ipart, sizeof fp->ipart, "%s%c", sign, d[0]);
    snprintf(fp->frac, sizeof fp->frac, "%s", d + 1);
    strip_zeros(fp->frac);
}

/* NumPy's FloatingFormat: one per array (or record field, or half of a
 * complex), its widths settled from every value it will print. */
typedef struct flfmt {
    int prec;          /* FP_* */
    int plus;          /* always show a sign: imaginary parts */
    int nonzero;       /* pass 1: finite nonzero values seen, their range */
    long double amax, amin;
    int nan, inf, neginf;
    int sci;           /* scientific notation for the whole array */
    size_t pad_left, pad_right, frac_max;
    int exp_digits;
} flfmt;

static void fl_parts(const flfmt *f, long double x, fparts *fp)
{
    /* the sign of -0.0 shows, as in NumPy: read it from the C library */
    char probe[8];
    const char *sign;

    snprintf(probe, sizeof probe, "%.0e", (double)x);
    sign = probe[0] == '-' ? "-" : f->plus ? "+" : "";
    if (f->sci)
        fp_scientific(fp, sign, x, f->prec);
    else
        fp_positional(fp, sign, x, f->prec);
}

static void fl_scan1(flfmt *f, long double x)
{
    if (fp_isnan(x)) {
        f->nan = 1;
    } else if (!fp_isfinite(x)) {
        f->inf = 1;
        f->neginf |= x < 0;
    } else if (x != 0) {
        long double a = fp_abs(x);

        if (!f->nonzero || a > f->amax)
            f->amax = a;
        if (!f->nonzero || a < f->amin)
            f->amin = a;
        f->nonzero = 1;
    }
}

/* max/min > 1000 as NumPy computes it: in the array's own precision. */
static int fl_ratio_large(const flfmt *f)
{
    switch (f->prec) {
    case FP_HALF: {
        /* a half rounds to above 1000 only from above 1000.25 */
        volatile float r = (float)f->amax / (float)f->amin;
        return r > 1000.25f;
    }
    case FP_FLOAT: {
        volatile float r = (float)f->amax / (float)f->amin;
        return r > 1000.0f;
    }
    case FP_DOUBLE: {
        volatile double r = (double)f->amax / (double)f->amin;
        return r > 1000.0;
    }
    default:
        return f->amax / f->amin > 1000.0L;
    }
}

static void fl_decide(flfmt *f)
{
    f->sci = f->nonzero && (f->amax >= 1e8L || f->amin < 1e-4L ||
                            fl_ratio_large(f));
}

static void fl_scan2(flfmt *f, long double x)
{
    fparts fp;
    size_t n;

    if (!fp_isfinite(x))
        return;
    fl_parts(f, x, &fp);
    if ((n = strlen(fp.ipart)) > f->pad_left)
        f->pad_left = n;
    n = strlen(fp.frac);
    if (f->sci) {
        int e = fp.exp < 0 ? -fp.exp : fp.exp;
        int digits = e >= 1000 ? 4 : e >= 100 ? 3 : 2;

        if (n > f->frac_max)
            f->frac_max = n;
        if (digits > f->exp_digits)
            f->exp_digits = digits;
    } else if (n > f->pad_right) {
        f->pad_right = n;
    }
}

static void fl_settle(flfmt *f)
{
    if (f->sci)
        f->pad_right = (size_t)f->exp_digits + 2 + f->frac_max;
    if (f->nan || f->inf) {
        /* room for nan and inf, which align with the decimal point */
        size_t inflen = 3 + (size_t)(f->plus || f->neginf);
        size_t right = f->pad_right + 1;

        if (3 > right && 3 - right > f->pad_left)
            f->pad_left = 3 - right;
        if (inflen > right && inflen - right > f->pad_left)
            f->pad_left = inflen - right;
    }
}

/* In scientific notation NumPy gives every value as many decimals as the
 * longest needs (min_digits), and the extra ones are the value's own
 * digits, correctly rounded, rather than zeros. */
static void fl_more_digits(const flfmt *f, long double x, fparts *fp)
{
    char buf[96], d[64];
    int neg;

    fp_sci(buf, sizeof buf, x, f->prec, (int)f->frac_max + 1);
    sci_split(buf, &neg, d, sizeof d, &fp->exp);
    /* rounding may carry into the first digit: 2.99996 gives 3.0000 */
    fp->ipart[strlen(fp->ipart) - 1] = d[0];
    snprintf(fp->frac, sizeof fp->frac, "%s", d + 1);
}

static void fl_emit(const flfmt *f, long double x, sbuf *b)
{
    fparts fp;
    size_t n;

    if (!fp_isfinite(x)) {
        const char *t = fp_isnan(x) ? (f->plus ? "+nan" : "nan")
                        : x < 0     ? "-inf"
                        : f->plus   ? "+inf"
                                    : "inf";
        size_t w = f->pad_left + f->pad_right + 1;

        if (w > strlen(t))
            sb_fill(b, ' ', w - strlen(t));
        sb_str(b, t);
        return;
    }
    fl_parts(f, x, &fp);
    if (f->sci && strlen(fp.frac) < f->frac_max)
        fl_more_digits(f, x, &fp);
    n = strlen(fp.ipart);
    if (f->pad_left > n)
        sb_fill(b, ' ', f->pad_left - n);
    sb_str(b, fp.ipart);
    sb_chr(b, '.');
    sb_str(b, fp.frac);
    n = strlen(fp.frac);
    if (f->sci) {
        int e = fp.exp;

        if (f->frac_max > n)
            sb_fill(b, '0', f->frac_max - n);
        sb_fmt(b, "e%c%0*d", e < 0 ? '-' : '+', f->exp_digits, e < 0 ? -e : e);
    } else if (f->pad_right > n) {
        sb_fill(b, ' ', f->pad_right - n);
    }
}

static long double read_float(const unsigned char *p, int prec)
{
    switch (prec) {
    case FP_HALF: {
        uint16_t h;

        memcpy(&h, p, 2);
        return half_value(h);
    }
    case FP_FLOAT: {
        float v;

        memcpy(&v, p, sizeof v);
        return v;
    }
    case FP_DOUBLE: {
        double v;

        memcpy(&v, p, sizeof v);
        return v;
    }
    default: {
        long double v;

        memcpy(&v, p, sizeof v);
        return v;
    }
    }
}

/* ---- datetimes ---------------------------------------------------------- */

static const char *const unit_names[] = {"Y",  "M",  "W",  "D",  "h",
                                         "m",  "s",  "ms", "us", "ns",
                                         "ps", "fs", "as"};
enum { U_Y, U_M, U_W, U_D, U_H, U_MIN, U_S }; /* then ms .. as */
#define NUNITS (int)(sizeof unit_names / sizeof unit_names[0])
#define NAT INT64_MIN

static int64_t floordiv(int64_t a, int64_t b) /* b > 0 */
{
    int64_t q = a / b;

    return (a % b < 0) ? q - 1 : q;
}

static int64_t floormod(int64_t a, int64_t b) /* b > 0 */
{
    int64_t r = a % b;

    return r < 0 ? r + b : r;
}

/* The civil date of day q * 146097 + r after 1970-01-01 (0 <= r < 146097,
 * 146097 days being 400 Gregorian years): Howard Hinnant's days-to-civil
 * reasoning, counted in 400-year eras so that no int64 overflows. */
static void civil(int64_t q, int64_t r, int64_t *year, int *month, int *day)
{
    /* 1970-01-01 is day 719468 after 0000-03-01, = 4 eras + 135080 days */
    int64_t z = r + 135080;
    int64_t era = q + 4 + z / 146097;
    int64_t doe = z % 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int m = (int)(mp < 10 ? mp + 3 : mp - 9);

    *day = (int)(doy - (153 * mp + 2) / 5 + 1);
    *month = m;
    *year = yoe + era * 400 + (m <= 2);
}

/* NumPy's datetime_as_string() of a datetime64[mult unit] value, quoted,
 * into buf; unit -1 is the generic unit, for which NumPy has no text.
 * Values whose date would overflow int64 print as their raw integer. */
static int datetime_text(char *buf, size_t cap, int64_t v, int unit,
                         int64_t mult)
{
    int64_t days = 0, sod = 0, frac = 0, year;
    int month, day, fdigits = 0;

    if (v == NAT)
        return snprintf(buf, cap, "'NaT'");
    if (unit < 0 || (mult > 1 && (v > INT64_MAX / mult ||
                                  v < INT64_MIN / mult)))
        return snprintf(buf, cap, "%" PRId64, v);
    v *= mult;
    if (unit == U_Y)
        return v > INT64_MAX - 1970
                   ? snprintf(buf, cap, "%" PRId64, v)
                   : snprintf(buf, cap, "'%04" PRId64 "'", v + 1970);
    if (unit == U_M)
        return snprintf(buf, cap, "'%04" PRId64 "-%02d'",
                        floordiv(v, 12) + 1970, (int)floormod(v, 12) + 1);
    if (unit == U_W) {
        /* 146097 days are exactly 20871 weeks */
        civil(floordiv(v, 20871), floormod(v, 20871) * 7, &year, &month,
              &day);
        return snprintf(buf, cap, "'%04" PRId64 "-%02d-%02d'", year, month,
                        day);
    }
    if (unit == U_D) {
        days = v;
    } else if (unit == U_H) {
        days = floordiv(v, 24);
        sod = floormod(v, 24) * 3600;
    } else if (unit == U_MIN) {
        days = floordiv(v, 1440);
        sod = floormod(v, 1440) * 60;
    } else {
        int64_t scale = 1, secs;

        for (fdigits = 0; fdigits < (unit - U_S) * 3; fdigits++)
            scale *= 10;
        secs = floordiv(v, scale);
        frac = floormod(v, scale);
        days = floordiv(secs, 86400);
        sod = floormod(secs, 86400);
    }
    civil(floordiv(days, 146097), floormod(days, 146097), &year, &month,
          &day);
    if (unit == U_D)
        return snprintf(buf, cap, "'%04" PRId64 "-%02d-%02d'", year, month,
                        day);
    if (unit == U_H)
        return snprintf(buf, cap, "'%04" PRId64 "-%02d-%02dT%02d'", year,
                        month, day, (int)(sod / 3600));
    if (unit == U_MIN)
        return snprintf(buf, cap, "'%04" PRId64 "-%02d-%02dT%02d:%02d'",
                        year, month, day, (int)(sod / 3600),
                        (int)(sod / 60 % 60));
    if (fdigits == 0)
        return snprintf(buf, cap,
                        "'%04" PRId64 "-%02d-%02dT%02d:%02d:%02d'", year,
                        month, day, (int)(sod / 3600), (int)(sod / 60 % 60),
                        (int)(sod % 60));
    return snprintf(buf, cap,
                    "'%04" PRId64 "-%02d-%02dT%02d:%02d:%02d.%0*" PRId64 "'",
                    year, month, day, (int)(sod / 3600), (int)(sod / 60 % 60),
                    (int)(sod % 60), fdigits, frac);
}

/* ---- element formatters -------------------------------------------------- */

typedef enum {
    K_BOOL,
    K_INT,
    K_UINT,
    K_FLOAT,
    K_COMPLEX,
    K_BYTES,
    K_STR,
    K_VOID,
    K_DATETIME,
    K_TIMEDELTA,
    K_RECORD,
    K_SUBARRAY,
    K_RAW
} fkind;

typedef struct fmt fmt;

typedef struct field {
    size_t offset;
    fmt *f;
} field;

/* How one dtype is printed, with the state NumPy's format classes keep:
 * widths gathered from all the values shown. Records and subarrays hold
 * one formatter per field, or one for their base. */
struct fmt {
    fkind kind;
    size_t itemsize;
    int zero_d;        /* in a 0-d array: bools get no alignment space */
    size_t width;      /* right-aligned kinds: the widest text */
    flfmt re, im;      /* K_FLOAT: re; K_COMPLEX: both */
    int unit;          /* datetimes: index in unit_names, -1 generic */
    int64_t mult;
    size_t nfields;    /* K_RECORD */
    field *fields;
    int ndim;          /* K_SUBARRAY: the shape, and the base formatter */
    const int64_t *shape;
    int64_t count;
    fmt *base;
    uint64_t work;     /* elements and brackets one value costs to print */
};

static void fmt_free(fmt *f)
{
    size_t i;

    if (f == NULL)
        return;
    for (i = 0; i < f->nfields; i++)
        fmt_free(f->fields[i].f);
    free(f->fields);
    fmt_free(f->base);
    free(f);
}

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    if (a != 0 && b > UINT64_MAX / a)
        return UINT64_MAX;
    return a * b;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static int fmt_new(const npyio_dtype *dt, int zero_d, fmt **out);

/* The scalar kinds: which printing family, and for floats whether this
 * host has the type (long doubles of another platform print as raw hex). */
static void fmt_scalar(fmt *f, const npyio_dtype *dt)
{
    size_t n = f->itemsize;

    switch (npyio_dtype_kind(dt)) {
    case NPYIO_KIND_BOOL:
        f->kind = K_BOOL;
        break;
    case NPYIO_KIND_INT:
    case NPYIO_KIND_UINT:
        f->kind = (n == 1 || n == 2 || n == 4 || n == 8)
                      ? (npyio_dtype_kind(dt) == NPYIO_KIND_INT ? K_INT
                                                                : K_UINT)
                      : K_RAW;
        break;
    case NPYIO_KIND_FLOAT:
    case NPYIO_KIND_COMPLEX:
        if (npyio_dtype_kind(dt) == NPYIO_KIND_COMPLEX)
            n /= 2;
        f->kind = npyio_dtype_kind(dt) == NPYIO_KIND_FLOAT ? K_FLOAT
                                                           : K_COMPLEX;
        f->re.prec = n == 2 ? FP_HALF : n == 4 ? FP_FLOAT : n == 8 ? FP_DOUBLE
                     : n == sizeof(long double) ? FP_LONG : -1;
        if (f->re.prec < 0)
            f->kind = K_RAW;
        f->im.prec = f->re.prec;
        f->im.plus = 1;
        break;
    case NPYIO_KIND_BYTES:
        f->kind = K_BYTES;
        break;
    case NPYIO_KIND_STR:
        f->kind = K_STR;
        break;
    case NPYIO_KIND_DATETIME:
    case NPYIO_KIND_TIMEDELTA: {
        const char *u = npyio_dtype_datetime_unit(dt);
        int i;

        f->kind = npyio_dtype_kind(dt) == NPYIO_KIND_DATETIME ? K_DATETIME
                                                              : K_TIMEDELTA;
        f->unit = -1;
        for (i = 0; u != NULL && i < NUNITS; i++)
            if (strcmp(u, unit_names[i]) == 0)
                f->unit = i;
        f->mult = npyio_dtype_datetime_multiplier(dt);
        if (f->mult < 1)
            f->mult = 1;
        if (n != 8)
            f->kind = K_RAW;
        break;
    }
    case NPYIO_KIND_VOID:
        f->kind = K_VOID;
        break;
    default:
        f->kind = K_RAW;
        break;
    }
}

/* A subarray of shape (ndim, shape) of base: printing costs one bracket
 * pair per row at each level plus the elements. */
static int fmt_subarray(fmt *f, const npyio_dtype *base, int ndim,
                        const int64_t *shape)
{
    uint64_t rows = 1, work = 0;
    int d, rc;

    f->kind = K_SUBARRAY;
    f->ndim = ndim;
    f->shape = shape;
    if ((rc = fmt_new(base, 0, &f->base)) != 0)
        return rc;
    for (d = 0; d < ndim; d++) {
        rows = mul_sat(rows, shape[d] < 0 ? 0 : (uint64_t)shape[d]);
        work = add_sat(work, rows);
    }
    if (rows > SHOW_MAX_WORK)
        return -3;
    f->count = (int64_t)rows;
    f->work = mul_sat(work, f->base->work);
    if (mul_sat((uint64_t)f->count, f->base->itemsize) >
                            f->itemsize)
        return -1; /* larger than the field: never read past it */
    return 0;
}

static int fmt_record(fmt *f, const npyio_dtype *dt, int zero_d)
{
    size_t i;

    f->kind = K_RECORD;
    f->nfields = npyio_dtype_field_count(dt);
    f->fields = calloc(f->nfields ? f->nfields : 1, sizeof *f->fields);
    if (f->fields == NULL)
        return -2;
    f->work = 1;
    for (i = 0; i < f->nfields; i++) {
        const npyio_dtype *fd = npyio_dtype_field_dtype(dt, i);
        int64_t off = npyio_dtype_field_offset(dt, i);
        int ndim = npyio_dtype_field_ndim(dt, i);
        fmt *sub;
        int rc;

        if (ndim > 0) {
            sub = calloc(1, sizeof *sub);
            if (sub == NULL)
                return -2;
            f->fields[i].f = sub;
            sub->itemsize = f->itemsize; /* bound until the size is known */
            rc = fmt_subarray(sub, fd, ndim, npyio_dtype_field_shape(dt, i));
            if (rc == 0)
                sub->itemsize = (size_t)sub->count * sub->base->itemsize;
        } else {
            rc = fmt_new(fd, zero_d, &f->fields[i].f);
            sub = f->fields[i].f;
        }
        if (rc != 0)
            return rc;
        if (off < 0 || (uint64_t)off > f->itemsize ||
            sub->itemsize > f->itemsize - (size_t)off)
            return -1; /* a field beyond the record: never read past it */
        f->fields[i].offset = (size_t)off;
        f->work = add_sat(f->work, sub->work);
    }
    return 0;
}

/* Build the formatter of dtype dt. Returns 0, -1 for a dtype whose layout
 * makes no sense, -2 when out of memory. */
static int fmt_new(const npyio_dtype *dt, int zero_d, fmt **out)
{
    fmt *f = calloc(1, sizeof *f);
    int rc = 0;

    *out = f;
    if (f == NULL)
        return -2;
    f->itemsize = npyio_dtype_itemsize(dt);
    f->zero_d = zero_d;
    f->work = 1;
    if (npyio_dtype_kind(dt) == NPYIO_KIND_RECORD)
        rc = fmt_record(f, dt, zero_d);
    else if (npyio_dtype_kind(dt) == NPYIO_KIND_SUBARRAY)
        rc = fmt_subarray(f, npyio_dtype_subarray_base(dt),
                          npyio_dtype_subarray_ndim(dt),
                          npyio_dtype_subarray_shape(dt));
    else
        fmt_scalar(f, dt);
    return rc;
}

static uint64_t read_u64(const unsigned char *p, size_t n)
{
    uint8_t v8;
    uint16_t v16;
    uint32_t v32;
    uint64_t v64;

    switch (n) {
    case 1:
        memcpy(&v8, p, 1);
        return v8;
    case 2:
        memcpy(&v16, p, 2);
        return v16;
    case 4:
        memcpy(&v32, p, 4);
        return v32;
    default:
        memcpy(&v64, p, 8);
        return v64;
    }
}

static int64_t read_i64(const unsigned char *p, size_t n)
{
    int8_t v8;
    int16_t v16;
    int32_t v32;
    int64_t v64;

    switch (n) {
    case 1:
        memcpy(&v8, p, 1);
        return v8;
    case 2:
        memcpy(&v16, p, 2);
        return v16;
    case 4:
        memcpy(&v32, p, 4);
        return v32;
    default:
        memcpy(&v64, p, 8);
        return v64;
    }
}

/* Whether this host stores the least significant byte first. */
static int host_little(void)
{
    const uint16_t one = 1;
    unsigned char b;

    memcpy(&b, &one, 1);
    return b == 1;
}

/* The text of a right-aligned scalar, before alignment. */
static int aligned_text(const fmt *f, const unsigned char *p, char *buf,
                        size_t cap)
{
    size_t i, k = 2;

    switch (f->kind) {
    case K_INT:
        return snprintf(buf, cap, "%" PRId64, read_i64(p, f->itemsize));
    case K_UINT:
        return snprintf(buf, cap, "%" PRIu64, read_u64(p, f->itemsize));
    case K_DATETIME:
        return datetime_text(buf, cap, read_i64(p, 8), f->unit, f->mult);
    case K_TIMEDELTA:
        if (read_i64(p, 8) == NAT)
            return snprintf(buf, cap, "'NaT'");
        return snprintf(buf, cap, "%" PRId64, read_i64(p, 8));
    default:
        /* a number this host has no type for: its bytes, most significant
         * first, as hex */
        snprintf(buf, cap, "0x");
        for (i = 0; i < f->itemsize && k + 3 < cap; i++, k += 2) {
            size_t j = host_little() ? f->itemsize - 1 - i : i;

            snprintf(buf + k, cap - k, "%02x", p[j]);
        }
        return (int)k;
    }
}

#define TEXT_CAP 96 /* the longest aligned text: a 2**64 year, raw f32 */

/* Pass 1 gathers ranges and aligned widths; pass 2 the float digit counts,
 * which depend on the notation chosen after pass 1. */
static void fmt_scan(fmt *f, const unsigned char *p, int pass)
{
    char buf[TEXT_CAP];
    size_t i;

    switch (f->kind) {
    case K_FLOAT:
    case K_COMPLEX: {
        long double re = read_float(p, f->re.prec);

        if (pass == 1)
            fl_scan1(&f->re, re);
        else
            fl_scan2(&f->re, re);
        if (f->kind == K_COMPLEX) {
            long double im = read_float(p + f->itemsize / 2, f->im.prec);

            if (pass == 1)
                fl_scan1(&f->im, im);
            else
                fl_scan2(&f->im, im);
        }
        break;
    }
    case K_INT:
    case K_UINT:
    case K_DATETIME:
    case K_TIMEDELTA:
    case K_RAW:
        if (pass == 1 && aligned_text(f, p, buf, sizeof buf) > 0 &&
            strlen(buf) > f->width)
            f->width = strlen(buf);
        break;
    case K_RECORD:
        for (i = 0; i < f->nfields; i++)
            fmt_scan(f->fields[i].f, p + f->fields[i].offset, pass);
        break;
    case K_SUBARRAY:
        for (i = 0; i < (size_t)f->count; i++)
            fmt_scan(f->base, p + i * f->base->itemsize, pass);
        break;
    default:
        break;
    }
}

static void fmt_settle(fmt *f, int pass)
{
    size_t i;

    if (f->kind == K_FLOAT || f->kind == K_COMPLEX) {
        if (pass == 1) {
            fl_decide(&f->re);
            fl_decide(&f->im);
        } else {
            fl_settle(&f->re);
            fl_settle(&f->im);
        }
    }
    for (i = 0; i < f->nfields; i++)
        fmt_settle(f->fields[i].f, pass);
    if (f->base != NULL)
        fmt_settle(f->base, pass);
}

static void fmt_emit(const fmt *f, const unsigned char *p, sbuf *b);

/* NumPy's SubArrayFormat: nested lists, never summarised. */
static void emit_subarray(const fmt *f, int d, const unsigned char *p,
                          sbuf *b)
{
    int64_t i;
    uint64_t inner = 1;
    int k;

    /* saturating: the product only matters when shape[d] > 0, and then it
     * is at most count */
    for (k = d + 1; k < f->ndim; k++)
        inner = mul_sat(inner, (uint64_t)f->shape[k]);
    sb_chr(b, '[');
    for (i = 0; i < f->shape[d]; i++) {
        if (i > 0)
            sb_str(b, ", ");
        if (d == f->ndim - 1)
            fmt_emit(f->base, p + (size_t)i * f->base->itemsize, b);
        else
            emit_subarray(f, d + 1,
                          p + (size_t)((uint64_t)i * inner) *
                                  f->base->itemsize,
                          b);
    }
    sb_chr(b, ']');
}

static void fmt_emit(const fmt *f, const unsigned char *p, sbuf *b)
{
    char buf[TEXT_CAP];
    size_t i;
    int n;

    switch (f->kind) {
    case K_BOOL:
        sb_str(b, p[0] ? (f->zero_d ? "True" : " True") : "False");
        break;
    case K_FLOAT:
        fl_emit(&f->re, read_float(p, f->re.prec), b);
        break;
    case K_COMPLEX: {
        size_t start, end, spaces = 0;

        fl_emit(&f->re, read_float(p, f->re.prec), b);
        start = b->len;
        fl_emit(&f->im, read_float(p + f->itemsize / 2, f->im.prec), b);
        /* the j goes before the imaginary part's padding */
        for (end = b->len; !b->nomem && end > start && b->p[end - 1] == ' ';
             end--)
            spaces++;
        b->len = b->nomem ? b->len : end;
        sb_chr(b, 'j');
        sb_fill(b, ' ', spaces);
        break;
    }
    case K_BYTES:
        repr_bytes(b, p, f->itemsize);
        break;
    case K_STR:
        repr_ucs4(b, p, f->itemsize / 4);
        break;
    case K_VOID:
        repr_void(b, p, f->itemsize);
        break;
    case K_RECORD:
        sb_chr(b, '(');
        for (i = 0; i < f->nfields; i++) {
            if (i > 0)
                sb_str(b, ", ");
            fmt_emit(f->fields[i].f, p + f->fields[i].offset, b);
        }
        sb_str(b, f->nfields == 1 ? ",)" : ")");
        break;
    case K_SUBARRAY:
        emit_subarray(f, 0, p, b);
        break;
    default:
        n = aligned_text(f, p, buf, sizeof buf);
        if (n < 0)
            n = 0;
        if (f->width > (size_t)n)
            sb_fill(b, ' ', f->width - (size_t)n);
        sb_add(b, buf, strlen(buf));
        break;
    }
}

/* ---- dtype text ------------------------------------------------------------- */

/* Python's repr of a shape tuple: (3,) or (2, 3). */
static void put_shape(sbuf *b, int ndim, const int64_t *shape)
{
    int d;

    sb_chr(b, '(');
    for (d = 0; d < ndim; d++)
        sb_fmt(b, d == 0 ? "%" PRId64 : ", %" PRId64, shape[d]);
    sb_str(b, ndim == 1 ? ",)" : ")");
}

/* "[25s]", "[ns]", or "" for the generic unit. */
static void put_time_unit(sbuf *b, const npyio_dtype *dt)
{
    const char *u = npyio_dtype_datetime_unit(dt);
    int64_t m = npyio_dtype_datetime_multiplier(dt);

    if (u == NULL || strcmp(u, "generic") == 0)
        return;
    if (m > 1)
        sb_fmt(b, "[%" PRId64 "%s]", m, u);
    else
        sb_fmt(b, "[%s]", u);
}

static void put_construction(sbuf *b, const npyio_dtype *dt);

/* NumPy's _scalar_str(short=True): '<f8', 'u1', '?', 'S3', '<U2'. */
static void put_scalar_str(sbuf *b, const npyio_dtype *dt)
{
    char bo = npyio_dtype_byteorder(dt);
    const char *order = bo == '<' ? "<" : bo == '>' ? ">" : "";
    size_t n = npyio_dtype_itemsize(dt);
    npyio_kind kind = npyio_dtype_kind(dt);

    switch (kind) {
    case NPYIO_KIND_BOOL:
        sb_str(b, "'?'");
        break;
    case NPYIO_KIND_OBJECT:
        sb_str(b, "'O'");
        break;
    case NPYIO_KIND_BYTES:
        sb_fmt(b, "'S%zu'", n);
        break;
    case NPYIO_KIND_STR:
        sb_fmt(b, "'%sU%zu'", order, n / 4);
        break;
    case NPYIO_KIND_VOID:
        sb_fmt(b, "'V%zu'", n);
        break;
    case NPYIO_KIND_DATETIME:
    case NPYIO_KIND_TIMEDELTA:
        sb_fmt(b, "'%s%c8", order, kind == NPYIO_KIND_DATETIME ? 'M' : 'm');
        put_time_unit(b, dt);
        sb_chr(b, '\'');
        break;
    default:
        sb_fmt(b, "'%s%c%zu'", order, (char)kind, n);
        break;
    }
}

/* Fields in order, back to back, filling the record: NumPy then writes
 * the list form; otherwise the dict form with offsets. */
static int record_is_packed(const npyio_dtype *dt)
{
    size_t i, n = npyio_dtype_field_count(dt);
    uint64_t end = 0;

    for (i = 0; i < n; i++) {
        const npyio_dtype *fd = npyio_dtype_field_dtype(dt, i);
        const int64_t *shape = npyio_dtype_field_shape(dt, i);
        uint64_t size = npyio_dtype_itemsize(fd);
        int d;

        for (d = 0; d < npyio_dtype_field_ndim(dt, i); d++)
            size = mul_sat(size, (uint64_t)shape[d]);
        if (npyio_dtype_field_offset(dt, i) != (int64_t)end)
            return 0;
        end = add_sat(end, size);
    }
    return end == npyio_dtype_itemsize(dt);
}

/* A field's type as NumPy's _construction_repr writes it. */
static void put_field_type(sbuf *b, const npyio_dtype *dt, size_t i,
                           int as_tuple)
{
    int ndim = npyio_dtype_field_ndim(dt, i);

    if (ndim > 0 && as_tuple)
        sb_chr(b, '(');
    put_construction(b, npyio_dtype_field_dtype(dt, i));
    if (ndim > 0) {
        sb_str(b, ", ");
        put_shape(b, ndim, npyio_dtype_field_shape(dt, i));
        if (as_tuple)
            sb_chr(b, ')');
    }
}

/* NumPy's str() of a structured dtype: the list or the dict form. */
static void put_struct_str(sbuf *b, const npyio_dtype *dt)
{
    size_t i, len, n = npyio_dtype_field_count(dt);
    const char *s;
    int titles = 0;

    if (record_is_packed(dt)) {
        sb_chr(b, '[');
        for (i = 0; i < n; i++) {
            sb_str(b, i > 0 ? ", (" : "(");
            if ((s = npyio_dtype_field_title(dt, i, &len)) != NULL) {
                sb_chr(b, '(');
                repr_utf8(b, s, len);
                sb_str(b, ", ");
            }
            s = npyio_dtype_field_name(dt, i, &len);
            repr_utf8(b, s ? s : "", s ? len : 0);
            if (npyio_dtype_field_title(dt, i, &len) != NULL)
                sb_chr(b, ')');
            sb_str(b, ", ");
            put_field_type(b, dt, i, 0);
            sb_chr(b, ')');
        }
        sb_chr(b, ']');
        return;
    }
    sb_str(b, "{'names': [");
    for (i = 0; i < n; i++) {
        s = npyio_dtype_field_name(dt, i, &len);
        if (i > 0)
            sb_str(b, ", ");
        repr_utf8(b, s ? s : "", s ? len : 0);
        titles |= npyio_dtype_field_title(dt, i, &len) != NULL;
    }
    sb_str(b, "], 'formats': [");
    for (i = 0; i < n; i++) {
        if (i > 0)
            sb_str(b, ", ");
        put_field_type(b, dt, i, 1);
    }
    sb_str(b, "], 'offsets': [");
    for (i = 0; i < n; i++)
        sb_fmt(b, i > 0 ? ", %" PRId64 : "%" PRId64,
               npyio_dtype_field_offset(dt, i));
    if (titles) {
        sb_str(b, "], 'titles': [");
        for (i = 0; i < n; i++) {
            if (i > 0)
                sb_str(b, ", ");
            if ((s = npyio_dtype_field_title(dt, i, &len)) != NULL)
                repr_utf8(b, s, len);
            else
                sb_str(b, "None");
        }
    }
    sb_fmt(b, "], 'itemsize': %zu}", npyio_dtype_itemsize(dt));
}

/* NumPy's _construction_repr(short=True). */
static void put_construction(sbuf *b, const npyio_dtype *dt)
{
    if (npyio_dtype_kind(dt) == NPYIO_KIND_RECORD) {
        put_struct_str(b, dt);
    } else if (npyio_dtype_kind(dt) == NPYIO_KIND_SUBARRAY) {
        sb_chr(b, '(');
        put_construction(b, npyio_dtype_subarray_base(dt));
        sb_str(b, ", ");
        put_shape(b, npyio_dtype_subarray_ndim(dt),
                  npyio_dtype_subarray_shape(dt));
        sb_chr(b, ')');
    } else {
        put_scalar_str(b, dt);
    }
}

/* NumPy leaves out the dtype its default types would imply: native
 * float64, complex128, bool, and the C long (int_ in NumPy 1.x). */
static int dtype_implied(const npyio_dtype *dt)
{
    size_t n = npyio_dtype_itemsize(dt);

    if (!npyio_dtype_is_native(dt))
        return 0;
    switch (npyio_dtype_kind(dt)) {
    case NPYIO_KIND_BOOL:
        return 1;
    case NPYIO_KIND_INT:
        return n == sizeof(long);
    case NPYIO_KIND_FLOAT:
        return n == 8;
    case NPYIO_KIND_COMPLEX:
        return n == 16;
    default:
        return 0;
    }
}

/* NumPy's dtype_short_repr: float32, 'datetime64[ns]', '<U3', '>f8', or a
 * record's field list. Byte order is shown as NumPy 2 shows it. */
static void put_dtype_repr(sbuf *b, const npyio_dtype *dt)
{
    npyio_kind kind = npyio_dtype_kind(dt);
    size_t bits = npyio_dtype_itemsize(dt) * 8;
    char text[64];

    if (kind == NPYIO_KIND_RECORD || kind == NPYIO_KIND_SUBARRAY) {
        put_construction(b, dt);
        return;
    }
    if (kind == NPYIO_KIND_BYTES || kind == NPYIO_KIND_STR ||
        kind == NPYIO_KIND_VOID || !npyio_dtype_is_native(dt)) {
        if (npyio_dtype_str(dt, text, sizeof text, NULL) != NPYIO_OK)
            snprintf(text, sizeof text, "?");
        sb_fmt(b, "'%s'", text);
        return;
    }
    switch (kind) {
    case NPYIO_KIND_BOOL:
        sb_str(b, "bool");
        break;
    case NPYIO_KIND_INT:
        sb_fmt(b, "int%zu", bits);
        break;
    case NPYIO_KIND_UINT:
        sb_fmt(b, "uint%zu", bits);
        break;
    case NPYIO_KIND_FLOAT:
        sb_fmt(b, "float%zu", bits);
        break;
    case NPYIO_KIND_COMPLEX:
        sb_fmt(b, "complex%zu", bits);
        break;
    case NPYIO_KIND_DATETIME:
    case NPYIO_KIND_TIMEDELTA: {
        const char *name =
            kind == NPYIO_KIND_DATETIME ? "datetime64" : "timedelta64";
        sbuf unit = {0};

        /* quoted unless a plain name (the generic unit) */
        put_time_unit(&unit, dt);
        if (unit.len > 0)
            sb_fmt(b, "'%s%s'", name, unit.p);
        else
            sb_str(b, name);
        b->nomem |= unit.nomem;
        free(unit.p);
        break;
    }
    default:
        put_scalar_str(b, dt);
        break;
    }
}

/* ---- which elements are shown, and gathering them --------------------------- */

/* The shown part of the array: per axis, whether it is summarised and how
 * many indices are kept; the kept elements in C order. */
typedef struct shown {
    int ndim;
    const int64_t *shape;
    int64_t count;
    int *summ;         /* axis longer than 2 * EDGE, when summarising */
    int64_t *kept;     /* indices kept along each axis */
    int64_t *kstride;  /* C strides of the kept array, in elements */
    int64_t nkept;
    size_t itemsize;
    unsigned char *data;
} shown;

static int fail(const char *name, const char *what)
{
    fprintf(stderr, "npyio: %s: %s\n", name, what);
    return 1;
}

static int fail_lib(const char *name)
{
    return fail(name, npyio_last_error());
}

/* Work out the kept shape and refuse what would not fit in bounded memory
 * or time. */
static int plan(shown *s, const npyio_header *h, int64_t max,
                const fmt *f, const char *name)
{
    int d;
    uint64_t n = 1;
    size_t nd;

    s->ndim = npyio_header_ndim(h);
    s->shape = npyio_header_shape(h);
    s->count = npyio_header_count(h);
    s->itemsize = npyio_dtype_itemsize(npyio_header_dtype(h));
    nd = (size_t)s->ndim + 1;
    s->summ = calloc(nd, sizeof *s->summ);
    s->kept = calloc(nd, sizeof *s->kept);
    s->kstride = calloc(nd, sizeof *s->kstride);
    if (s->summ == NULL || s->kept == NULL || s->kstride == NULL)
        return fail(name, "out of memory");
    for (d = 0; d < s->ndim; d++) {
        s->summ[d] = s->count > max && s->shape[d] > 2 * EDGE;
        s->kept[d] = s->summ[d] ? 2 * EDGE : s->shape[d];
        n = s->kept[d] == 0 ? 0 : mul_sat(n, (uint64_t)s->kept[d]);
    }
    if (s->count == 0)
        n = 0;
    if (n > (uint64_t)SHOW_MAX_COUNT ||
        mul_sat(n, s->itemsize) > SHOW_MAX_BYTES ||
        mul_sat(n, f->work) > SHOW_MAX_WORK) {
        fprintf(stderr,
                "npyio: %s: showing %s%" PRIu64 " elements of %" PRIu64
                " bytes is more than print holds in memory; use a smaller "
                "--max\n",
                name, n == UINT64_MAX ? "over " : "", n,
                (uint64_t)s->itemsize);
        return 1;
    }
    s->nkept = (int64_t)n;
    for (d = s->ndim - 1; d >= 0 && n > 0; d--)
        s->kstride[d] = d == s->ndim - 1 ? 1 : s->kstride[d + 1] * s->kept[d + 1];
    s->data = calloc((size_t)n * s->itemsize + 1, 1);
    if (s->data == NULL)
        return fail(name, "out of memory");
    return 0;
}

/* Whether index i along axis d falls in the summarised-away middle. */
static int skipped(const shown *s, int d, int64_t i)
{
    return s->summ[d] && i >= EDGE && i < s->shape[d] - EDGE;
}

/* Where the element at multi-index idx lands in the kept array. */
static int64_t kept_offset(const shown *s, const int64_t *idx)
{
    int64_t off = 0;
    int d;

    for (d = 0; d < s->ndim; d++) {
        int64_t i = idx[d];

        if (s->summ[d] && i >= s->shape[d] - EDGE)
            i -= s->shape[d] - 2 * EDGE;
        off += i * s->kstride[d];
    }
    return off;
}

/* Step idx to the next element in file order (order[] lists the axes from
 * fastest to slowest), keeping count of axes in their skipped middle. */
static void advance(const shown *s, int64_t *idx, const int *order,
                    int *nskip)
{
    int j;

    for (j = 0; j < s->ndim; j++) {
        int d = order[j];
        int was = skipped(s, d, idx[d]);

        if (++idx[d] < s->shape[d]) {
            *nskip += skipped(s, d, idx[d]) - was;
            return;
        }
        idx[d] = 0;
        *nskip -= was;
    }
}

/* Stream the data in file order through a bounded buffer, keeping only the
 * shown elements. Fortran-order data is walked in its own order rather
 * than asking the library to reorder it, which would need whole rows
 * along axis 0 in memory and a seekable input. */
static int gather(shown *s, npyio_reader *r, int fortran, const char *name)
{
    size_t cap;
    uint64_t nbytes = (uint64_t)s->count * s->itemsize;
    int64_t *idx = NULL, done = 0;
    int *order = NULL, nskip = 0, rc = 0, j;
    unsigned char *buf = NULL;

    if (s->count == 0 || s->itemsize == 0)
        return 0; /* no data bytes to read */
    cap = CHUNK_BYTES / s->itemsize * s->itemsize;
    if (cap == 0)
        cap = s->itemsize;
    if (nbytes < cap)
        cap = (size_t)nbytes;
    buf = malloc(cap);
    idx = calloc((size_t)s->ndim + 1, sizeof *idx);
    order = calloc((size_t)s->ndim + 1, sizeof *order);
    if (buf == NULL || idx == NULL || order == NULL) {
        rc = fail(name, "out of memory");
        goto done;
    }
    for (j = 0; j < s->ndim; j++)
        order[j] = fortran ? j : s->ndim - 1 - j;
    while (done < s->count && rc == 0) {
        size_t got = 0, i, n;
        npyio_status st =
            npyio_reader_read_chunk(r, buf, cap, NPYIO_READ_NATIVE, &got);

        if (st == NPYIO_END) {
            rc = fail(name, "the data ends before the last element");
        } else if (st != NPYIO_OK) {
            rc = fail_lib(name);
        } else if (got == 0 || got % s->itemsize != 0) {
            rc = fail(name, "the library delivered a partial element");
        } else {
            n = got / s->itemsize;
            for (i = 0; i < n && done < s->count; i++, done++) {
                if (nskip == 0)
                    memcpy(s->data +
                               (size_t)kept_offset(s, idx) * s->itemsize,
                           buf + i * s->itemsize, s->itemsize);
                advance(s, idx, order, &nskip);
            }
        }
    }
done:
    free(buf);
    free(idx);
    free(order);
    return rc;
}

/* ---- layout ------------------------------------------------------------------ */

/* The text being written: whole output in out (flushed as it grows), the
 * current wrapped line in line, one element in word. col is the width of
 * the output's last line, which decides where the dtype goes. */
typedef struct layout {
    FILE *file;
    const shown *s;
    const fmt *f;
    sbuf out, line, word;
    size_t col;
} layout;

static void put(layout *L, const char *t, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        L->col = t[i] == '\n' ? 0 : L->col + (((unsigned char)t[i] & 0xC0) != 0x80);
    sb_add(&L->out, t, n);
    if (L->out.len >= 65536 && !L->out.nomem) {
        fwrite(L->out.p, 1, L->out.len, L->file);
        L->out.len = 0;
    }
}

static void put_str(layout *L, const char *t) { put(L, t, strlen(t)); }

static void put_spaces(layout *L, size_t n)
{
    for (; n > 0; n--)
        put(L, " ", 1);
}

/* NumPy's _extendLine: start a new line at the hanging indent when the
 * word would pass the limit, unless the line holds nothing yet. */
static void row_word(layout *L, size_t *linew, const char *w, size_t n,
                     size_t hang, size_t limit)
{
    size_t ww = text_width(w, n);

    if (*linew + ww > limit && *linew > hang) {
        size_t len = L->line.len;

        while (len > 0 && L->line.p[len - 1] == ' ')
            len--;
        put(L, L->line.p, len);
        put(L, "\n", 1);
        L->line.len = 0;
        sb_fill(&L->line, ' ', hang);
        *linew = hang;
    }
    sb_add(&L->line, w, n);
    *linew += ww;
}

/* The innermost axis: elements separated by ", ", wrapped. The first
 * line's indent is virtual: its columns are taken by "array([[" already. */
static void emit_row(layout *L, int d, int64_t base)
{
    const shown *s = L->s;
    size_t hang = PREFIX_LEN + 1 + (size_t)d;
    size_t limit = LINE_WIDTH - 1 - (size_t)d - 1;
    size_t linew = hang;
    int64_t k;

    L->line.len = 0;
    for (k = 0; k < s->kept[d]; k++) {
        if (s->summ[d] && k == EDGE) {
            row_word(L, &linew, "...", 3, hang, limit);
            sb_str(&L->line, ", ");
            linew += 2;
        }
        L->word.len = 0;
        fmt_emit(L->f, s->data + (size_t)(base + k) * s->itemsize, &L->word);
        row_word(L, &linew, L->word.p ? L->word.p : "", L->word.len, hang,
                 limit);
        if (k + 1 < s->kept[d]) {
            sb_str(&L->line, ", ");
            linew += 2;
        }
    }
    put(L, L->line.p ? L->line.p : "", L->line.len);
}

/* One bracketed block along axis d: rows for the last axis, else nested
 * blocks separated by "," and one newline per axis below, at the hanging
 * indent. */
static void emit_block(layout *L, int d, int64_t base)
{
    const shown *s = L->s;
    int64_t t, items = s->kept[d] + (s->summ[d] ? 1 : 0);
    int nl;

    put(L, "[", 1);
    if (d == s->ndim - 1) {
        emit_row(L, d, base);
    } else {
        for (t = 0; t < items; t++) {
            int64_t k = s->summ[d] && t > EDGE ? t - 1 : t;

            if (t > 0)
                put_spaces(L, PREFIX_LEN + 1 + (size_t)d);
            if (s->summ[d] && t == EDGE)
                put(L, "...", 3);
            else
                emit_block(L, d + 1, base + k * s->kstride[d]);
            if (t + 1 < items) {
                put(L, ",", 1);
                for (nl = d + 1; nl < s->ndim; nl++)
                    put(L, "\n", 1);
            }
        }
    }
    put(L, "]", 1);
}

/* array(...) as NumPy's array_repr writes it. */
static void emit_repr(layout *L, const npyio_dtype *dt)
{
    const shown *s = L->s;
    int show_dtype = !(dtype_implied(dt) && s->count > 0);
    sbuf d = {0};

    put_str(L, PREFIX);
    if (s->count == 0) {
        put_str(L, "[]");
        if (s->ndim != 1) {
            sbuf shape = {0};

            put_shape(&shape, s->ndim, s->shape);
            put_str(L, ", shape=");
            put(L, shape.p ? shape.p : "", shape.len);
            L->out.nomem |= shape.nomem;
            free(shape.p);
        }
    } else if (s->ndim == 0) {
        fmt_emit(L->f, s->data, &L->word);
        put(L, L->word.p ? L->word.p : "", L->word.len);
    } else {
        emit_block(L, 0, 0);
    }
    if (!show_dtype) {
        put_str(L, ")\n");
        return;
    }
    put_str(L, ",");
    sb_str(&d, "dtype=");
    put_dtype_repr(&d, dt);
    sb_chr(&d, ')');
    /* the dtype moves to its own line rather than pass the line width */
    if (L->col + text_width(d.p ? d.p : "", d.len) + 1 > LINE_WIDTH)
        put_str(L, "\n      ");
    else
        put_str(L, " ");
    put(L, d.p ? d.p : "", d.len);
    put_str(L, "\n");
    L->out.nomem |= d.nomem;
    free(d.p);
}

int cli_print(npyio_reader *reader, const char *name, int64_t max, FILE *out)
{
    const npyio_header *h = npyio_reader_header(reader);
    const npyio_dtype *dt = npyio_header_dtype(h);
    shown s;
    layout L;
    fmt *f = NULL;
    int64_t i;
    int rc;

    memset(&s, 0, sizeof s);
    memset(&L, 0, sizeof L);
    if (dt == NULL)
        return fail_lib(name);
    if (npyio_dtype_contains_objects(dt))
        return fail(name, "the array holds Python objects (a pickle), "
                          "which npyio does not unpickle");
    if (max < 0)
        max = 0;
    rc = fmt_new(dt, npyio_header_ndim(h) == 0, &f);
    if (rc != 0) {
        rc = fail(name, rc == -2   ? "out of memory"
                        : rc == -3 ? "a subarray field is too large to print"
                                   : "the dtype's layout is inconsistent");
        goto done;
    }
    if ((rc = plan(&s, h, max, f, name)) != 0 ||
        (rc = gather(&s, reader, npyio_header_fortran_order(h), name)) != 0)
        goto done;
    for (i = 0; i < s.nkept; i++)
        fmt_scan(f, s.data + (size_t)i * s.itemsize, 1);
    fmt_settle(f, 1);
    for (i = 0; i < s.nkept; i++)
        fmt_scan(f, s.data + (size_t)i * s.itemsize, 2);
    fmt_settle(f, 2);

    L.file = out;
    L.s = &s;
    L.f = f;
    emit_repr(&L, dt);
    if (L.out.nomem || L.line.nomem || L.word.nomem)
        rc = fail(name, "out of memory");
    else if (L.out.len > 0)
        fwrite(L.out.p, 1, L.out.len, out);
    free(L.out.p);
    free(L.line.p);
    free(L.word.p);
done:
    fmt_free(f);
    free(s.summ);
    free(s.kept);
    free(s.kstride);
    free(s.data);
    return rc;
}
