/*
 * values.h - number and date text for `npyio print`: floats of every
 * stored precision (float16 to long double) with NumPy's digit choices,
 * settled across all the values of an array, and datetime64 values as
 * NumPy's datetime_as_string() writes them. No libm function is used.
 */
#ifndef NPYIO_CLI_VALUES_H
#define NPYIO_CLI_VALUES_H

#include <stddef.h>
#include <stdint.h>

#include "text.h"

/* The stored precision of a float, which decides how digits round-trip. */
enum { FP_HALF, FP_FLOAT, FP_DOUBLE, FP_LONG };

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

/* Pass 1 over the values: note NaN, infinities and the range. */
void fl_scan1(flfmt *f, long double x);
/* After pass 1: choose positional or scientific notation. */
void fl_decide(flfmt *f);
/* Pass 2 over the values: note the digits each side of the point. */
void fl_scan2(flfmt *f, long double x);
/* After pass 2: settle the paddings. */
void fl_settle(flfmt *f);
/* Append x as the settled format writes it. */
void fl_emit(const flfmt *f, long double x, sbuf *b);
/* The float of precision prec (FP_*) stored at p in host order. */
long double val_read_float(const unsigned char *p, int prec);

#define NAT INT64_MIN /* NumPy's NaT, not a time */

/* The unit index of a datetime unit name ("Y" .. "as"), or -1 (generic). */
int val_time_unit(const char *u);
/* Write a datetime64[mult unit] value into buf as NumPy does (unit -1:
 * the raw integer); returns what snprintf returns. */
int val_datetime_text(char *buf, size_t cap, int64_t v, int unit,
                      int64_t mult);

#endif
