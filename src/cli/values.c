/*
 * values.c - floats and datetimes as NumPy prints them (see values.h).
 */
#include <float.h>
#include <inttypes.h>
#include <math.h> /* NAN and INFINITY only: no libm function is called */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "values.h"

#define PRECISION 8       /* NumPy's default float precision */

/* ---- floats ------------------------------------------------------------- */

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

void fl_scan1(flfmt *f, long double x)
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

void fl_decide(flfmt *f)
{
    f->sci = f->nonzero && (f->amax >= 1e8L || f->amin < 1e-4L ||
                            fl_ratio_large(f));
}

void fl_scan2(flfmt *f, long double x)
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

void fl_settle(flfmt *f)
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

void fl_emit(const flfmt *f, long double x, sbuf *b)
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

long double val_read_float(const unsigned char *p, int prec)
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

/* The index in unit_names of a datetime unit, or -1 (the generic unit). */
int val_time_unit(const char *u)
{
    int i, unit = -1;

    for (i = 0; u != NULL && i < NUNITS; i++)
        if (strcmp(u, unit_names[i]) == 0)
            unit = i;
    return unit;
}

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

/* v, a count of `unit` (days or finer) from the epoch, as days from the
 * epoch (returned), the second of that day (*sod) and, for units below a
 * second, the fraction of that second in *fdigits decimal digits (*frac;
 * 0 digits otherwise). */
static int64_t split_days(int64_t v, int unit, int64_t *sod, int64_t *frac,
                          int *fdigits)
{
    int64_t scale = 1, secs;
    int digits;

    *sod = *frac = 0;
    *fdigits = 0;
    if (unit == U_D)
        return v;
    if (unit == U_H) {
        *sod = floormod(v, 24) * 3600;
        return floordiv(v, 24);
    }
    if (unit == U_MIN) {
        *sod = floormod(v, 1440) * 60;
        return floordiv(v, 1440);
    }
    for (digits = 0; digits < (unit - U_S) * 3; digits++)
        scale *= 10;
    *fdigits = digits;
    secs = floordiv(v, scale);
    *frac = floormod(v, scale);
    *sod = floormod(secs, 86400);
    return floordiv(secs, 86400);
}

/* NumPy's datetime_as_string() of a datetime64[mult unit] value, quoted,
 * into buf; unit -1 is the generic unit, for which NumPy has no text.
 * Values whose date would overflow int64 print as their raw integer. */
int val_datetime_text(char *buf, size_t cap, int64_t v, int unit,
                      int64_t mult)
{
    int64_t days, sod, frac, year;
    int month, day, fdigits;

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
    days = split_days(v, unit, &sod, &frac, &fdigits);
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
