/*
 * dtype.h - the dtype model, private to the library: the layout of
 * npyio_dtype and what the header module needs from it. Records and
 * subarrays share the one struct with scalars, so every kind of dtype is
 * a node of the same tree (a record's fields and a subarray's base are
 * dtypes in turn).
 */
#ifndef NPYIO_DTYPE_H
#define NPYIO_DTYPE_H

#include "internal.h"
#include "literal.h"

#include <stdatomic.h>

#define NPYIO__MAGIC_DTYPE 0x44545950u /* "DTYP" */

/* Datetime units in NumPy's order; index 0 is the generic (unit-less)
 * type. */
enum npyio__dt_unit {
    NPYIO__DT_NONE = -1,
    NPYIO__DT_GENERIC = 0,
    NPYIO__DT_Y, NPYIO__DT_M, NPYIO__DT_W, NPYIO__DT_D, NPYIO__DT_h,
    NPYIO__DT_m, NPYIO__DT_s, NPYIO__DT_ms, NPYIO__DT_us, NPYIO__DT_ns,
    NPYIO__DT_ps, NPYIO__DT_fs, NPYIO__DT_as,
    NPYIO__DT_COUNT
};

/* One field of a record. Names and titles are UTF-8 and NUL-terminated. */
typedef struct npyio__field {
    char *name;
    size_t name_len;
    char *title; /* NULL: no title */
    size_t title_len;
    int64_t offset;
    npyio_dtype *dtype;
} npyio__field;

struct npyio_dtype {
    uint32_t magic;
    bool immortal;     /* a static built-in: reference counts do not apply */
    atomic_uint refs;  /* references held; freed at zero */
    npyio_kind kind;   /* NPYIO_KIND_* */
    char byteorder;    /* '<', '>' or '|' */
    size_t itemsize;
    size_t alignment;
    int unit;           /* datetime: enum npyio__dt_unit; else NONE */
    int32_t multiplier; /* datetime: units per tick (1 when none) */
    /* NPYIO_KIND_SUBARRAY */
    npyio_dtype *base;
    int ndim;
    int64_t *shape;
    /* NPYIO_KIND_RECORD */
    size_t field_count;
    npyio__field *fields;
    bool has_objects;
};

/* The largest itemsize NumPy allows (its itemsize is a C int). */
#define NPYIO__MAX_ITEMSIZE ((size_t)INT32_MAX)

/* The host's byte order character. */
char npyio__host_order(void);

/* Check that a pointer is a live dtype; message names `where`. */
npyio_status npyio__check_dtype(const npyio_dtype *dtype, const char *where);

/*
 * Build a dtype from a descr node of a parsed header literal: a string
 * (type string) now; lists and (descr, shape) tuples with records.
 * `depth` counts the nesting already used, for NPYIO_LIMIT_DEPTH.
 */
npyio_status npyio__dtype_from_node(const npyio__lit_doc *doc,
                                    const npyio__lit_node *node,
                                    const npyio_options *options,
                                    npyio_dtype **out);

/* Build a dtype from a type string such as "<f8" or "datetime64[ns]".
 * `offset` is where the string starts in the file, for messages; pass
 * SIZE_MAX when it does not come from a file. */
npyio_status npyio__dtype_from_str(const char *s, size_t len, size_t offset,
                                   npyio_dtype **out);

/*
 * Append the descr literal as np.save writes it (`'<f8'`) to out[0..cap),
 * returning the full length (so cap 0 sizes it). NPYIO_E_UNSUPPORTED if no
 * descr can express the dtype.
 */
npyio_status npyio__dtype_descr(const npyio_dtype *dtype, char *out,
                                size_t cap, size_t *len);

/* NumPy's dtype.str into out[0..cap); returns the full length. */
size_t npyio__dtype_str(const npyio_dtype *dtype, char *out, size_t cap);

#endif /* NPYIO_DTYPE_H */
