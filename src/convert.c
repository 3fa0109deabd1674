/*
 * convert.c - byte-swap plans for any dtype (mixed-endian records, nested
 * records, subarrays) and the kernel that applies them in place. Pure
 * functions over memory: the I/O core calls them on blocks while the data
 * is in cache.
 */
#include "convert.h"

#include <string.h>

typedef struct plan_builder {
    npyio__swap_plan *plan;
    size_t capacity;
    const npyio__mem *mem;
    char target;
} plan_builder;

static npyio_status push_op(plan_builder *b, const npyio__swap_op *op)
{
    npyio__swap_plan *p = b->plan;

    if (p->count == b->capacity) {
        size_t grown = b->capacity ? 2 * b->capacity : 8;
        void *block = p->ops;
        npyio_status st = npyio__realloc(b->mem, &block,
                                         grown * sizeof *p->ops,
                                         "byte-swap plan");

        if (st != NPYIO_OK)
            return st;
        p->ops = block;
        b->capacity = grown;
    }
    p->ops[p->count++] = *op;
    return NPYIO_OK;
}

/* Add `count` units; merged into the previous op when they continue it
 * (three adjacent '>f8' fields become one op of three units). `first` is
 * the first op of the current body: merging never crosses into a REPEAT. */
static npyio_status add_units(plan_builder *b, size_t first, size_t offset,
                              uint32_t unit, size_t count)
{
    npyio__swap_plan *p = b->plan;
    npyio__swap_op op = {NPYIO__SWAP_UNITS, unit, offset, count, 0, 0};

    if (p->count > first) {
        npyio__swap_op *last = &p->ops[p->count - 1];

        if (last->kind == NPYIO__SWAP_UNITS && last->unit == unit &&
            last->offset + last->count * unit == offset) {
            last->count += count;
            return NPYIO_OK;
        }
    }
    return push_op(b, &op);
}

/* Does a scalar need reversing to reach the target order? */
static bool needs_swap(const npyio_dtype *dt, char target)
{
    return (dt->byteorder == '<' || dt->byteorder == '>') &&
           dt->byteorder != target;
}

static npyio_status add_dtype(plan_builder *b, size_t first,
                              const npyio_dtype *dt, size_t offset,
                              size_t repeat);

/* A compound element repeated `repeat` times with stride `stride`: a
 * REPEAT op and its body, or nothing if the body is empty. */
static npyio_status add_repeat(plan_builder *b, const npyio_dtype *dt,
                               size_t offset, size_t repeat)
{
    npyio__swap_op op = {NPYIO__SWAP_REPEAT, 0, offset, repeat, dt->itemsize,
                         0};
    size_t at = b->plan->count;
    npyio_status st = push_op(b, &op);

    if (st == NPYIO_OK)
        st = add_dtype(b, at + 1, dt, 0, 1);
    if (st != NPYIO_OK)
        return st;
    b->plan->ops[at].body = b->plan->count - at - 1;
    if (b->plan->ops[at].body == 0)
        b->plan->count = at; /* nothing to swap inside */
    return NPYIO_OK;
}

static npyio_status add_fields(plan_builder *b, size_t first,
                               const npyio_dtype *dt, size_t offset)
{
    size_t i;
    npyio_status st = NPYIO_OK;

    for (i = 0; i < dt->field_count && st == NPYIO_OK; i++)
        st = add_dtype(b, first, dt->fields[i].dtype,
                       offset + (size_t)dt->fields[i].offset, 1);
    return st;
}

/* Add the ops for `repeat` consecutive elements of dt at offset. */
static npyio_status add_dtype(plan_builder *b, size_t first,
                              const npyio_dtype *dt, size_t offset,
                              size_t repeat)
{
    size_t elements = 1;
    int d;

    switch (dt->kind) {
    case NPYIO_KIND_RECORD:
        if (repeat == 1)
            return add_fields(b, first, dt, offset);
        return add_repeat(b, dt, offset, repeat);
    case NPYIO_KIND_SUBARRAY:
        for (d = 0; d < dt->ndim; d++)
            elements *= (size_t)dt->shape[d];
        if (elements == 0)
            return NPYIO_OK;
        /* Nested repetitions of one element type are one repetition. */
        return add_dtype(b, first, dt->base, offset, repeat * elements);
    case NPYIO_KIND_COMPLEX:
        if (!needs_swap(dt, b->target))
            return NPYIO_OK;
        return add_units(b, first, offset, (uint32_t)(dt->itemsize / 2),
                         2 * repeat);
    case NPYIO_KIND_STR:
        if (!needs_swap(dt, b->target) || dt->itemsize == 0)
            return NPYIO_OK;
        return add_units(b, first, offset, 4, dt->itemsize / 4 * repeat);
    default:
        if (!needs_swap(dt, b->target) || dt->itemsize < 2)
            return NPYIO_OK;
        return add_units(b, first, offset, (uint32_t)dt->itemsize, repeat);
    }
}

npyio_status npyio__swap_plan_make(const npyio_dtype *dtype, char target,
                                   const npyio__mem *mem,
                                   npyio__swap_plan *plan)
{
    plan_builder b = {plan, 0, mem, target};
    npyio_status st;

    plan->ops = NULL;
    plan->count = 0;
    plan->itemsize = dtype->itemsize;
    st = add_dtype(&b, 0, dtype, 0, 1);
    if (st != NPYIO_OK)
        npyio__swap_plan_free(plan);
    return st;
}

void npyio__swap_plan_free(npyio__swap_plan *plan)
{
    npyio__free(plan->ops);
    plan->ops = NULL;
    plan->count = 0;
}

/* ---- applying a plan ------------------------------------------------------------ */

static void reverse_units(unsigned char *p, size_t unit, size_t count)
{
    size_t k, i;

    switch (unit) {
    case 2:
        for (k = 0; k < count; k++, p += 2) {
            unsigned char t = p[0];

            p[0] = p[1];
            p[1] = t;
        }
        return;
    case 4:
        for (k = 0; k < count; k++, p += 4) {
            uint32_t v;

            memcpy(&v, p, 4);
            v = __builtin_bswap32(v);
            memcpy(p, &v, 4);
        }
        return;
    case 8:
        for (k = 0; k < count; k++, p += 8) {
            uint64_t v;

            memcpy(&v, p, 8);
            v = __builtin_bswap64(v);
            memcpy(p, &v, 8);
        }
        return;
    default: /* long doubles: 12 or 16 bytes, reversed whole */
        for (k = 0; k < count; k++, p += unit)
            for (i = 0; i < unit / 2; i++) {
                unsigned char t = p[i];

                p[i] = p[unit - 1 - i];
                p[unit - 1 - i] = t;
            }
        return;
    }
}

/* Run ops[0..n) on one element (or repetition) at base. */
static void run_ops(const npyio__swap_op *ops, size_t n, unsigned char *base)
{
    size_t i = 0;

    while (i < n) {
        const npyio__swap_op *op = &ops[i];

        if (op->kind == NPYIO__SWAP_UNITS) {
            reverse_units(base + op->offset, op->unit, op->count);
            i++;
        } else {
            size_t k;

            for (k = 0; k < op->count; k++)
                run_ops(op + 1, op->body, base + op->offset + k * op->stride);
            i += 1 + op->body;
        }
    }
}

void npyio__swap_apply(const npyio__swap_plan *plan, void *data,
                       size_t nbytes)
{
    unsigned char *p = data;
    size_t k, count;

    if (plan->count == 0 || plan->itemsize == 0)
        return;
    count = nbytes / plan->itemsize;
    /* One op of whole-element units covers the array in one pass. */
    if (plan->count == 1 && plan->ops[0].kind == NPYIO__SWAP_UNITS &&
        plan->ops[0].offset == 0 &&
        plan->ops[0].unit * plan->ops[0].count == plan->itemsize) {
        reverse_units(p, plan->ops[0].unit, plan->ops[0].count * count);
        return;
    }
    for (k = 0; k < count; k++)
        run_ops(plan->ops, plan->count, p + k * plan->itemsize);
}

/* ---- Fortran to C order ------------------------------------------------------------- */

void npyio__f2c_init(npyio__f2c *f, int ndim, const int64_t *shape,
                     size_t itemsize, size_t *c_stride, size_t *index)
{
    size_t stride = 1;
    int k;

    f->ndim = ndim;
    f->shape = shape;
    f->itemsize = itemsize;
    f->c_stride = c_stride;
    f->index = index;
    f->column = 0;
    for (k = ndim - 1; k >= 0; k--) {
        c_stride[k] = stride;
        stride *= (size_t)shape[k];
        index[k] = 0;
    }
}

/* Copy `n` elements of `size` bytes from contiguous src to dst with a
 * stride of `step` bytes: one run down a file column. */
static void strided_copy(unsigned char *dst, size_t step,
                         const unsigned char *src, size_t n, size_t size)
{
    size_t i;

    switch (size) {
    case 1:
        for (i = 0; i < n; i++)
            dst[i * step] = src[i];
        return;
    case 2:
        for (i = 0; i < n; i++)
            memcpy(dst + i * step, src + 2 * i, 2);
        return;
    case 4:
        for (i = 0; i < n; i++)
            memcpy(dst + i * step, src + 4 * i, 4);
        return;
    case 8:
        for (i = 0; i < n; i++)
            memcpy(dst + i * step, src + 8 * i, 8);
        return;
    case 16:
        for (i = 0; i < n; i++)
            memcpy(dst + i * step, src + 16 * i, 16);
        return;
    default:
        for (i = 0; i < n; i++)
            memcpy(dst + i * step, src + size * i, size);
        return;
    }
}

/* Move the cursor to the next file column (index[1..] as an odometer,
 * axis 1 fastest), keeping `column` equal to its C offset. */
static void next_column(npyio__f2c *f)
{
    int k = 1;

    while (k < f->ndim) {
        f->index[k]++;
        f->column += f->c_stride[k];
        if (f->index[k] < (size_t)f->shape[k])
            return;
        f->column -= f->index[k] * f->c_stride[k];
        f->index[k] = 0;
        k++;
    }
}

/* Columns per tile: a cache line of output per row for small items. */
#define TILE_BYTES 128

/*
 * A tile of `cols` whole file columns of a 2-D array: row by row, each row
 * of the tile is a run of adjacent elements in C order, so every output
 * cache line is written once, whole, instead of once per column.
 */
static void transpose_tile(unsigned char *dst, size_t dst_row,
                           const unsigned char *src, size_t rows,
                           size_t cols, size_t size)
{
    size_t i, j;

    for (i = 0; i < rows; i++) {
        unsigned char *out = dst + i * dst_row;

        switch (size) {
        case 8:
            for (j = 0; j < cols; j++)
                memcpy(out + 8 * j, src + (j * rows + i) * 8, 8);
            break;
        case 4:
            for (j = 0; j < cols; j++)
                memcpy(out + 4 * j, src + (j * rows + i) * 4, 4);
            break;
        case 2:
            for (j = 0; j < cols; j++)
                memcpy(out + 2 * j, src + (j * rows + i) * 2, 2);
            break;
        case 1:
            for (j = 0; j < cols; j++)
                out[j] = src[j * rows + i];
            break;
        default:
            for (j = 0; j < cols; j++)
                memcpy(out + size * j, src + (j * rows + i) * size, size);
            break;
        }
    }
}

void npyio__f2c_scatter(npyio__f2c *f, const void *src, size_t nbytes,
                        void *dst)
{
    const unsigned char *s = src;
    unsigned char *d = dst;
    size_t rows = (size_t)f->shape[0];
    size_t step = f->c_stride[0] * f->itemsize;
    size_t tile, count;

    /* Elements of 0 bytes, or an axis of length 0: nothing to place (and
     * nothing to divide by below). */
    if (f->itemsize == 0 || rows == 0)
        return;
    count = nbytes / f->itemsize;
    tile = f->itemsize < TILE_BYTES ? TILE_BYTES / f->itemsize : 1;

    /* 2-D: whole columns at a column boundary go through tiles. Adjacent
     * file columns are adjacent in C only in two dimensions. */
    while (f->ndim == 2 && f->index[0] == 0 && tile > 1) {
        size_t left = (size_t)f->shape[1] - f->index[1];
        size_t cols = count / rows < tile ? count / rows : tile;

        if (cols > left)
            cols = left;
        if (cols < 2)
            break;
        transpose_tile(d + f->column * f->itemsize, step, s, rows, cols,
                       f->itemsize);
        s += cols * rows * f->itemsize;
        count -= cols * rows;
        f->index[1] += cols;
        f->column += cols;
        if (f->index[1] == (size_t)f->shape[1]) { /* the last column */
            f->index[1] = 0;
            f->column = 0;
        }
    }
    while (count > 0) {
        size_t run = rows - f->index[0];

        if (run > count)
            run = count;
        strided_copy(d + (f->index[0] * f->c_stride[0] + f->column) *
                             f->itemsize,
                     step, s, run, f->itemsize);
        s += run * f->itemsize;
        count -= run;
        f->index[0] += run;
        if (f->index[0] == rows) {
            f->index[0] = 0;
            next_column(f);
        }
    }
}

/* ---- the public swap ------------------------------------------------------------ */

npyio_status npyio_dtype_swap(const npyio_dtype *dtype, void *data,
                              size_t nbytes)
{
    static const char where[] = "npyio_dtype_swap";
    npyio__swap_plan plan;
    npyio__mem mem;
    npyio_status st = npyio__check_dtype(dtype, where);

    if (st != NPYIO_OK)
        return st;
    if (data == NULL && nbytes > 0)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: data is NULL", where);
    if (npyio_dtype_contains_objects(dtype))
        return npyio__fail(NPYIO_E_UNSUPPORTED,
                           "%s: the dtype holds Python objects, whose bytes "
                           "are pointers, not values", where);
    /* Shared bytes would be reversed once per field (twice in all for
     * two fields of one type: not at all), so no swap of such a record
     * is its own inverse. Checked whatever the host's order, so the
     * answer does not depend on it. */
    st = npyio__check_disjoint(dtype, where, "their shared bytes would be "
                               "reversed once for each, so the conversion "
                               "would not be its own inverse; nothing was "
                               "changed");
    if (st != NPYIO_OK)
        return st;
    if (dtype->itemsize == 0 ? nbytes != 0 : nbytes % dtype->itemsize != 0)
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: %zu bytes are not a whole number of %zu-byte "
                           "elements", where, nbytes, dtype->itemsize);
    if (nbytes == 0 || npyio_dtype_is_native(dtype))
        return NPYIO_OK;
    npyio__dtype_mem(dtype, &mem); /* the plan is a temporary of dtype's */
    st = npyio__swap_plan_make(dtype, npyio__host_order(), &mem, &plan);
    if (st != NPYIO_OK)
        return st;
    npyio__swap_apply(&plan, data, nbytes);
    npyio__swap_plan_free(&plan);
    return NPYIO_OK;
}
