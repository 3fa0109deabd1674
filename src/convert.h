/*
 * convert.h - the hot kernels of the I/O core, as pure functions over
 * memory: the byte-swap plan of a dtype and its application. Knows nothing
 * of streams, headers or files.
 */
#ifndef NPYIO_CONVERT_H
#define NPYIO_CONVERT_H

#include "dtype.h"

enum npyio__swap_op_kind {
    NPYIO__SWAP_UNITS = 1, /* reverse `count` units of `unit` bytes */
    NPYIO__SWAP_REPEAT     /* run the next `body` ops `count` times */
};

/*
 * One step of a swap plan. Offsets are relative to the element (or to the
 * repetition) the op belongs to. A REPEAT op applies the `body` ops that
 * follow it at offset + k * stride for k < count; plans stay as small as
 * the dtype's description, whatever its itemsize.
 */
typedef struct npyio__swap_op {
    uint8_t kind;
    uint32_t unit;   /* UNITS: 2, 4, 8, 12, 16, ... bytes */
    size_t offset;
    size_t count;    /* UNITS: units; REPEAT: repetitions */
    size_t stride;   /* REPEAT */
    size_t body;     /* REPEAT: number of ops in the body */
} npyio__swap_op;

typedef struct npyio__swap_plan {
    npyio__swap_op *ops;
    size_t count;
    size_t itemsize; /* bytes per element */
} npyio__swap_plan;

/*
 * The units that must be reversed to bring one element of `dtype` to byte
 * order `target` ('<' or '>'): every multi-byte scalar of the other order,
 * through nested records and subarrays; complex values as two halves, U as
 * 4-byte characters, long doubles as whole units; padding and one-byte
 * types untouched. An empty plan means nothing to do.
 */
npyio_status npyio__swap_plan_make(const npyio_dtype *dtype, char target,
                                   const npyio__mem *mem,
                                   npyio__swap_plan *plan);

void npyio__swap_plan_free(npyio__swap_plan *plan);

/* Apply a plan in place to the whole elements in `nbytes` bytes (the
 * caller passes whole elements; elements of 0 bytes have nothing to swap).
 * Taking bytes, not a count, keeps every division by an itemsize here. */
void npyio__swap_apply(const npyio__swap_plan *plan, void *data,
                       size_t nbytes);

/*
 * Fortran-to-C reordering: a cursor over a Fortran-order array's elements
 * as they arrive from a file (axis 0 fastest) that puts each where a
 * C-order array keeps it, so data can be read in small blocks straight
 * into its final place.
 */
typedef struct npyio__f2c {
    int ndim;
    const int64_t *shape;
    size_t itemsize;
    size_t *c_stride; /* ndim C strides in elements (caller-provided) */
    size_t *index;    /* ndim indices of the next element (caller-provided) */
    size_t column;    /* C offset (elements) of index[1..] with index[0] = 0 */
} npyio__f2c;

/* Set up for an array of `ndim` >= 1 dimensions; c_stride and index point
 * to ndim size_t each. */
void npyio__f2c_init(npyio__f2c *f, int ndim, const int64_t *shape,
                     size_t itemsize, size_t *c_stride, size_t *index);

/* Place the next `nbytes` bytes of whole elements (from src, in file
 * order) into dst, the whole C-order array. Elements of 0 bytes: nothing
 * to place. */
void npyio__f2c_scatter(npyio__f2c *f, const void *src, size_t nbytes,
                        void *dst);

#endif /* NPYIO_CONVERT_H */
