/*
 * format.h - element and dtype text for `npyio print`: one formatter per
 * dtype, which settles its widths from the values it will print (as
 * NumPy's format classes do) and then writes each element; and the dtype
 * as NumPy's repr() of an array names it.
 */
#ifndef NPYIO_CLI_FORMAT_H
#define NPYIO_CLI_FORMAT_H

#include <stdint.h>

#include "npyio.h"
#include "text.h"

/* The most elements + brackets print formats for one array (with print.c's
 * other limits); fmt_new refuses a subarray field that alone costs more. */
#define SHOW_MAX_WORK UINT64_C(100000000) /* elements + brackets formatted */

/* How one dtype is printed: widths gathered from the values shown. */
typedef struct fmt fmt;

/* Build dt's formatter: 0, -1 bad layout, -2 no memory, -3 too large. */
int fmt_new(const npyio_dtype *dt, int zero_d, fmt **out);
/* Free a formatter (NULL is fine). */
void fmt_free(fmt *f);
/* The elements and brackets one value costs to print. */
uint64_t fmt_work(const fmt *f);
/* Pass 1 or 2 over the element at p, gathering widths. */
void fmt_scan(fmt *f, const unsigned char *p, int pass);
/* Settle the widths after pass 1 or 2. */
void fmt_settle(fmt *f, int pass);
/* Append the element at p as the settled formatter writes it. */
void fmt_emit(const fmt *f, const unsigned char *p, sbuf *b);

/* a * b, saturating at UINT64_MAX. */
uint64_t fmt_mul_sat(uint64_t a, uint64_t b);

/* Append Python's repr of a shape tuple: (3,) or (2, 3). */
void fmt_put_shape(sbuf *b, int ndim, const int64_t *shape);
/* Whether NumPy's repr leaves out dtype dt (float64, bool, ...). */
int fmt_dtype_implied(const npyio_dtype *dt);
/* Append dt as NumPy's repr of an array names it after "dtype=". */
void fmt_put_dtype_repr(sbuf *b, const npyio_dtype *dt);

#endif
