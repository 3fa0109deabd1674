/*
 * dtype.h - the dtype model (dtype.c), private to the library: the layout
 * of npyio_dtype, scalar construction, references, equality and text.
 * Records and subarrays share the one struct with scalars, so every kind
 * of dtype is a node of the same tree (a record's fields and a subarray's
 * base are dtypes in turn). Building records and subarrays is record.h's;
 * parsing descrs and type strings is descr.h's (the only dtype header that
 * brings in the literal parser).
 */
#ifndef NPYIO_DTYPE_H
#define NPYIO_DTYPE_H

#include "alloc.h"

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

/* One field of a record. Names and titles are UTF-8 and NUL-terminated;
 * `dtype` is the whole field's dtype, a SUBARRAY for subarray fields. */
typedef struct npyio__field {
    const char *name;
    size_t name_len;
    const char *title; /* NULL: no title */
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
    int depth;          /* nesting: 0 for scalars */
    bool has_objects;   /* an O anywhere inside */
    /* NPYIO_KIND_SUBARRAY (shape points into the same allocation) */
    npyio_dtype *base;
    int ndim;
    int64_t *shape;
    /* NPYIO_KIND_RECORD (fields, names and titles live in the same
     * allocation as the dtype) */
    size_t field_count;
    npyio__field *fields;
};

/* NumPy's NPY_MAXDIMS in 2.x: subarray shapes have at most this many
 * dimensions (NumPy 1.x: 32). */
#define NPYIO__MAX_SUBARRAY_NDIM 64

/* The largest itemsize NumPy allows (its itemsize is a C int). */
#define NPYIO__MAX_ITEMSIZE ((size_t)INT32_MAX)

/* The host's byte order character. */
char npyio__host_order(void);

/* Check that a pointer is a live dtype; message names `where`. */
npyio_status npyio__check_dtype(const npyio_dtype *dtype, const char *where);

/* The unit (enum npyio__dt_unit) named s[0..len) ("ns", "generic"), or
 * NPYIO__DT_NONE. */
int npyio__dtype_unit_from_name(const char *s, size_t len);

/* Sizes each kind can have; flexible kinds take any size. Long doubles of
 * every platform are accepted (12 and 16 bytes), whatever this host has. */
bool npyio__dtype_valid_size(npyio_kind kind, size_t itemsize);

/* A scalar of a checked kind and size (a built-in if there is one), in the
 * requested byte order ('<', '>', '=', '|', '!', or 0 for none). */
npyio_status npyio__dtype_make_scalar(const npyio__mem *mem, npyio_kind kind,
                                      size_t itemsize, char requested_order,
                                      npyio_dtype **out);

/* A datetime or timedelta of a checked unit and multiplier (a built-in for
 * multiplier 1), byte order as for npyio__dtype_make_scalar. */
npyio_status npyio__dtype_make_datetime(const npyio__mem *mem,
                                        npyio_kind kind, int unit,
                                        int32_t mult, char requested_order,
                                        npyio_dtype **out);

/* Descr literal of a record or subarray into the writer's buffer. */
npyio_status npyio__compound_descr(const npyio_dtype *dtype, char *out,
                                   size_t cap, size_t *len);

/* Equality of records and subarrays. */
bool npyio__compound_equal(const npyio_dtype *a, const npyio_dtype *b);

/* NPYIO_E_UNSUPPORTED, naming two fields and ending with `why`, if any
 * record in dtype (nested ones included) has fields sharing a byte. */
npyio_status npyio__check_disjoint(const npyio_dtype *dtype,
                                   const char *where, const char *why);

/* Free what a dtype owns besides itself (fields' and base references). */
void npyio__compound_release(npyio_dtype *dtype);

/* Allocate a zeroed dtype of `extra` more bytes (for fields, names and
 * shapes kept in the same block), magic and one reference set. */
npyio_status npyio__dtype_alloc(const npyio__mem *mem, size_t extra,
                                npyio_dtype **out);

/* The allocator that made dtype, with default limits: what calls given a
 * dtype and no options allocate with. Built-in dtypes are static and name
 * no allocator: for them (and NULL, or what is not a dtype) the default
 * one. */
void npyio__dtype_mem(const npyio_dtype *dtype, npyio__mem *mem);

/*
 * Append the descr literal as np.save writes it (`'<f8'`) to out[0..cap),
 * returning the full length (so cap 0 sizes it). NPYIO_E_UNSUPPORTED if no
 * descr can express the dtype.
 */
npyio_status npyio__dtype_descr(const npyio_dtype *dtype, char *out,
                                size_t cap, size_t *len);

/* NumPy's dtype.str into out[0..cap); returns the full length. */
size_t npyio__dtype_str(const npyio_dtype *dtype, char *out, size_t cap);

/* npyio_dtype_descr() (descr) or npyio_dtype_str(), naming `where` in
 * messages. */
npyio_status npyio__dtype_text(const npyio_dtype *dtype, bool descr,
                               char *buf, size_t cap, size_t *len,
                               const char *where);

#endif /* NPYIO_DTYPE_H */
