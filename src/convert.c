/*
 * convert.c - byte-swap plans for any dtype (mixed-endian records, nested
 * records, subarrays) and the kernel that applies them in place, and the
 * converter: one pass's plan, reorder cursor, bounce buffer and tiling
 * policy, which turns Fortran-order data into C order band by band. Pure
 * functions over memory: the I/O core reads what a fill asks for and
 * calls them on it while the data is in cache.
 */
#include "alloc.h"
#include "convert.h"
#include "error.h"

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

/* ---- the converter -------------------------------------------------------------- */

/*
 * The tiling policy. The figures were measured on the machines the
 * project is developed and tested on (2-vCPU AMD EPYC virtual machines,
 * Debian 12, files in the page cache; other jobs share the cores, so only
 * ratios taken in one run count): read() into a buffer that stays in cache
 * runs at 8-11 GB/s, and a positioned read (pread) costs 2.4 us whatever
 * its size (lseek + read: 3.9 us), the time to copy some 24 KiB.
 */
/* The bounce buffer: large enough that a fill's system call is paid for
 * many times over and spans hold many short columns (a 3-D box holds more
 * of its last axis), small enough to stay in cache between the read and
 * the placement; and at the allocator's huge-page threshold, so that its
 * reads and tiles do not miss the TLB every 4 KiB. Measured against 0.5,
 * 1, 2 and 8 MiB over the shapes of bench_reorder: the fastest, by up to
 * 40% against 2 MiB. */
#define BOUNCE_BYTES NPYIO__HUGE_THRESHOLD
/* The bounce buffer of passes whose bands are small (ranges of a few
 * rows) is only as large as a band, but not smaller than this: spans over
 * short columns still take few calls. */
#define MIN_BOUNCE_BYTES ((size_t)256 << 10)
/* A positioned read's cost in bytes it could have copied. */
#define SEEK_COST_BYTES ((size_t)24 << 10)
/* A tile's width along dst's fastest axis: a whole cache line (two, for
 * the adjacent-line prefetcher) of every dst row is written at once. */
#define TILE_BYTES ((size_t)128)
/* Runs are not cut shorter than this for more columns per fill. */
#define MIN_RUN_BYTES ((size_t)64 << 10)

/* The cursor and the box scratch of a Fortran pass: four uint64_t per
 * axis for the cursor, four size_t per axis for a box, in one block;
 * then the axes' lengths and strides from the shape. */
static npyio_status make_cursor(npyio__converter *c,
                                const npyio__converter_spec *spec,
                                const npyio__mem *mem)
{
    size_t n = (size_t)spec->ndim;
    unsigned char *block = NULL;
    int a, k = spec->ndim - 1;
    npyio_status st = npyio__alloc_array(
        mem, n, 4 * sizeof(uint64_t) + 4 * sizeof(size_t),
        "conversion state", (void **)&block);

    if (st != NPYIO_OK)
        return st;
    c->dim = (uint64_t *)block;
    c->below = c->dim + n;
    c->c_stride = c->below + n;
    c->index = c->c_stride + n;
    c->ext = (size_t *)(c->index + n);
    c->src_stride = c->ext + n;
    c->dst_stride = c->src_stride + n;
    c->odometer = c->dst_stride + n;
    c->rows = (uint64_t)spec->shape[0];
    c->columns = 1;
    for (a = 1; a <= k; a++) {
        c->dim[a] = (uint64_t)spec->shape[a];
        c->below[a] = c->columns;
        c->columns *= c->dim[a];
    }
    c->c_stride[k] = 1;
    for (a = k - 1; a >= 1; a--)
        c->c_stride[a] = c->c_stride[a + 1] * c->dim[a + 1];
    return NPYIO_OK;
}

/* The bounce buffer's size: the spec's, else the data's (or, for small
 * bands, a band's, but no less than MIN_BOUNCE_BYTES) up to BOUNCE_BYTES;
 * never less than an element, nor 0. */
static size_t bounce_size(const npyio__converter *c,
                          const npyio__converter_spec *spec)
{
    /* The product is checked by the caller. */
    uint64_t nbytes = c->rows * c->columns * c->itemsize;
    size_t bytes;

    if (spec->band_rows != 0 && spec->band_rows < c->rows) {
        uint64_t band = spec->band_rows * c->columns * c->itemsize;

        if (nbytes > band)
            nbytes = band < MIN_BOUNCE_BYTES ? MIN_BOUNCE_BYTES : band;
    }
    if (spec->bounce_bytes != 0)
        bytes = spec->bounce_bytes;
    else
        bytes = nbytes < BOUNCE_BYTES ? (size_t)nbytes : BOUNCE_BYTES;
    if (bytes < c->itemsize)
        bytes = c->itemsize;
    if (bytes == 0)
        bytes = 1;
    return bytes;
}

npyio_status npyio__converter_make(npyio__converter *c,
                                   const npyio__converter_spec *spec,
                                   const npyio__mem *mem)
{
    size_t bytes;
    npyio_status st;

    memset(c, 0, sizeof *c);
    c->itemsize = spec->dtype->itemsize;
    c->plan.itemsize = c->itemsize;
    c->fortran = spec->fortran;
    c->c_order = spec->c_order;
    c->seekable = spec->seekable;
    c->seek_cost = spec->seek_cost        ? spec->seek_cost
                   : spec->positioned     ? SEEK_COST_BYTES
                                          : 2 * SEEK_COST_BYTES;
    c->ndim = spec->ndim;
    if (spec->native) {
        st = npyio__swap_plan_make(spec->dtype, npyio__host_order(), mem,
                                   &c->plan);
        if (st != NPYIO_OK)
            return st;
    }
    if (!spec->fortran)
        return NPYIO_OK;
    st = make_cursor(c, spec, mem);
    if (st == NPYIO_OK && spec->bands) {
        bytes = bounce_size(c, spec);
        st = npyio__alloc(mem, bytes, "conversion buffer",
                          (void **)&c->bounce);
        if (st == NPYIO_OK)
            c->bounce_cap = bytes;
    }
    if (st != NPYIO_OK)
        npyio__converter_free(c);
    return st;
}

void npyio__converter_free(npyio__converter *c)
{
    npyio__swap_plan_free(&c->plan);
    npyio__free(c->dim);
    npyio__free(c->bounce);
    c->dim = NULL;
    c->bounce = NULL;
}

void npyio__converter_swap(const npyio__converter *c, void *data,
                           size_t nbytes)
{
    npyio__swap_apply(&c->plan, data, nbytes);
}

/* ---- placing: strided copies in tiles ---------------------------------------------- */

/* Copy `n` elements of `size` bytes from contiguous src to dst with a
 * stride of `step` bytes: one run down a column. */
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

/* One tile: `cols` columns of `rows` contiguous elements each (src, one
 * column every scol bytes) into dst, row i at i * drow, column j at
 * j * dcol. Row by row, so each row's piece of dst is written at once. */
#define TRANSPOSE_LOOP(SIZE)                                                 \
    for (i = 0; i < rows; i++) {                                             \
        unsigned char *out = dst + i * drow;                                 \
        const unsigned char *in = src + i * (SIZE);                          \
        for (j = 0; j < cols; j++)                                           \
            memcpy(out + j * dcol, in + j * scol, (SIZE));                   \
    }

static void transpose(unsigned char *dst, size_t drow, size_t dcol,
                      const unsigned char *src, size_t scol, size_t rows,
                      size_t cols, size_t size)
{
    size_t i, j;

    switch (size) {
    case 1:
        TRANSPOSE_LOOP(1)
        return;
    case 2:
        TRANSPOSE_LOOP(2)
        return;
    case 4:
        TRANSPOSE_LOOP(4)
        return;
    case 8:
        TRANSPOSE_LOOP(8)
        return;
    case 16:
        TRANSPOSE_LOOP(16)
        return;
    default:
        TRANSPOSE_LOOP(size)
        return;
    }
}

/*
 * Copy a box of d axes: ext[a] elements along axis a, at src_stride[a]
 * bytes apart in src and dst_stride[a] in dst; axis 0 is contiguous in
 * src (its stride is the itemsize). The axis with the smallest dst stride
 * (b) and axis 0 are copied in tiles of whole dst cache lines; the other
 * axes run on an odometer.
 */
static void copy_box(int d, const size_t *ext, const unsigned char *src,
                     const size_t *src_stride, unsigned char *dst,
                     const size_t *dst_stride, size_t size, size_t *odometer)
{
    size_t rows = ext[0], tile = size < TILE_BYTES ? TILE_BYTES / size : 1;
    bool runs = dst_stride[0] == size; /* axis 0 contiguous in both */
    int a, b = -1;

    if (!runs)
        for (a = 1; a < d; a++)
            if (ext[a] > 1 && (b < 0 || dst_stride[a] < dst_stride[b]))
                b = a;
    /* A row or two (bands of wide arrays): each row's piece of dst is
     * written whole in one sweep anyway; tiles would only add calls. */
    if (b >= 0 && rows <= 2)
        tile = ext[b];
    for (a = 1; a < d; a++)
        odometer[a] = 0;
    for (;;) {
        if (runs) {
            memcpy(dst, src, rows * size);
        } else if (b < 0) {
            strided_copy(dst, dst_stride[0], src, rows, size);
        } else {
            size_t c0, w;

            for (c0 = 0; c0 < ext[b]; c0 += w) {
                w = ext[b] - c0 < tile ? ext[b] - c0 : tile;
                transpose(dst + c0 * dst_stride[b], dst_stride[0],
                          dst_stride[b], src + c0 * src_stride[b],
                          src_stride[b], rows, w, size);
            }
        }
        for (a = 1; a < d; a++) {
            if (a == b)
                continue;
            if (++odometer[a] < ext[a]) {
                src += src_stride[a];
                dst += dst_stride[a];
                break;
            }
            src -= (ext[a] - 1) * src_stride[a];
            dst -= (ext[a] - 1) * dst_stride[a];
            odometer[a] = 0;
        }
        if (a >= d)
            return;
    }
}

void npyio__converter_place_all(npyio__converter *c, const void *src,
                                void *dst)
{
    size_t size = c->itemsize;
    int a;

    if (size == 0 || c->rows == 0 || c->columns == 0)
        return;
    c->ext[0] = (size_t)c->rows;
    c->src_stride[0] = size;
    c->dst_stride[0] = (size_t)c->columns * size;
    for (a = 1; a < c->ndim; a++) {
        c->ext[a] = (size_t)c->dim[a];
        c->src_stride[a] = (size_t)(c->rows * c->below[a]) * size;
        c->dst_stride[a] = (size_t)c->c_stride[a] * size;
    }
    copy_box(c->ndim, c->ext, src, c->src_stride, dst, c->dst_stride, size,
             c->odometer);
}

/* ---- bands ------------------------------------------------------------------------ */

/* How many columns' spans fit in the bounce buffer: the band's run of
 * the last one and the whole extent of those before it (0: not even a
 * run fits). */
static uint64_t span_columns_fit(const npyio__converter *c)
{
    uint64_t size = c->itemsize, run = c->count * size;
    uint64_t extent = c->rows * size, room = c->bounce_cap;
    uint64_t span_columns = 0;

    if (run <= room)
        span_columns = 1 + (room - run) / extent;
    return span_columns > c->columns ? c->columns : span_columns;
}

/* Rows per run: the whole band when `wide` runs fit in the bounce buffer,
 * else cut (never below MIN_RUN_BYTES, nor beyond the buffer). */
static uint64_t rows_per_run(const npyio__converter *c, uint64_t wide)
{
    uint64_t size = c->itemsize, room = c->bounce_cap, sub = c->count;

    if (sub * size * wide > room) {
        sub = room / (wide * size);
        if (sub * size < MIN_RUN_BYTES)
            sub = MIN_RUN_BYTES / size;
        if (sub * size > room)
            sub = room / size;
        if (sub == 0)
            sub = 1;
        if (sub > c->count)
            sub = c->count;
    }
    return sub;
}

/* Fortran bands: runs go straight to their place in dst, unless spans
 * cost less (short gaps). A pipe reads every gap anyway. */
static void choose_fortran_fills(npyio__converter *c, uint64_t span_columns)
{
    uint64_t span_cost = c->rows * c->itemsize, run = c->count * c->itemsize;

    c->sub_rows = c->count;
    c->box_columns = c->columns;
    c->direct = true;
    if (c->seekable && span_columns >= 2 && span_cost <= run + c->seek_cost) {
        c->spans = true;
        c->direct = false;
        c->box_columns = span_columns;
    }
}

/* C order from a stream that cannot go back, in file order: spans (any
 * gap skipped by reading), or for runs longer than the buffer, one column
 * at a time in pieces. */
static void choose_file_order_fills(npyio__converter *c,
                                    uint64_t span_columns)
{
    uint64_t size = c->itemsize, room = c->bounce_cap;

    if (span_columns >= 1) {
        c->spans = true;
        c->box_columns = span_columns;
    } else {
        c->sub_rows = room / size ? room / size : 1;
        c->box_columns = 1;
    }
}

/*
 * How to fill a band: spans or runs, how many rows per run and columns per
 * fill. Costs are per column, in bytes copied: a span reads the column's
 * whole extent (gap included) for one call per bounce buffer; runs read
 * only the band's rows but pay a call per run.
 */
static void choose_fills(npyio__converter *c)
{
    uint64_t size = c->itemsize, run = c->count * size;
    uint64_t tile = size < TILE_BYTES ? TILE_BYTES / size : 1;
    uint64_t wide = c->columns < tile ? c->columns : tile;
    uint64_t span_columns = span_columns_fit(c), sub, per;
    uint64_t runs_cost, span_cost = c->rows * size;

    c->spans = false;
    c->direct = false;
    if (!c->c_order) {
        choose_fortran_fills(c, span_columns);
        return;
    }
    if (!c->seekable) {
        choose_file_order_fills(c, span_columns);
        return;
    }
    sub = rows_per_run(c, wide);
    per = c->bounce_cap / (sub * size);
    if (per == 0)
        per = 1;
    runs_cost = run + c->seek_cost * ((c->count + sub - 1) / sub);
    if (span_columns >= wide && span_cost <= runs_cost) {
        c->spans = true;
        c->box_columns = span_columns;
        return;
    }
    c->sub_rows = sub;
    c->box_columns = per < c->columns ? per : c->columns;
}

void npyio__converter_band_part(npyio__converter *c, uint64_t first,
                                uint64_t count, uint64_t skip,
                                uint64_t last_end, void *dst)
{
    int a;

    c->dst = dst;
    c->first = first;
    c->count = count;
    c->skip = skip;
    c->last_end = last_end;
    c->column = 0;
    c->column_end = c->columns;
    c->in_box = false;
    for (a = 1; a < c->ndim; a++)
        c->index[a] = 0;
    if (count == 0 || c->columns == 0 || c->itemsize == 0) {
        c->column = c->columns; /* nothing to place */
        return;
    }
    if (count == 1 && c->ndim == 2) { /* columns are C positions */
        c->column = c->index[1] = skip;
        c->column_end = last_end;
    }
    choose_fills(c);
}

/* The next box from the cursor: whole lower axes while they fit in
 * box_columns and the cursor is at their start, then a range of one axis
 * within its length. Its columns are consecutive in the file. */
static void open_box(npyio__converter *c)
{
    int j = 1, k = c->ndim - 1, a;
    uint64_t range;

    while (j < k && c->index[j] == 0 && c->below[j + 1] <= c->box_columns)
        j++;
    range = c->box_columns / c->below[j];
    if (range > c->dim[j] - c->index[j])
        range = c->dim[j] - c->index[j];
    if (range > c->column_end - c->column) /* a part of a 2-D row */
        range = c->column_end - c->column;
    c->box_axis = j;
    c->box_range = range;
    c->box_count = range * c->below[j];
    c->box_offset = 0;
    for (a = 1; a <= k; a++)
        c->box_offset += c->index[a] * c->c_stride[a];
    c->sub = 0;
    c->in_box = true;
}

bool npyio__converter_next(npyio__converter *c, npyio__fill *fill)
{
    uint64_t size = c->itemsize;

    if (!c->in_box) {
        if (c->column >= c->column_end)
            return false;
        open_box(c);
    }
    fill->offset = (c->column * c->rows + c->first + c->sub) * size;
    fill->stride = c->rows * size;
    if (c->spans) {
        c->fill_rows = c->count;
        fill->len = (size_t)(((c->box_count - 1) * c->rows + c->count) *
                             size);
        fill->count = 1;
        fill->buf = c->bounce;
        fill->buf_stride = 0;
        return true;
    }
    c->fill_rows = c->count - c->sub < c->sub_rows ? c->count - c->sub
                                                   : c->sub_rows;
    fill->len = (size_t)(c->fill_rows * size);
    fill->count = (size_t)c->box_count;
    fill->buf_stride = fill->len;
    fill->buf = c->direct ? c->dst + (size_t)(c->column * c->count * size)
                          : c->bounce;
    return true;
}

/* Swap the fill's runs: a span whole when most of it is runs (one pass
 * is cheaper than a call per run), else run by run. */
static void swap_fill(const npyio__converter *c, unsigned char *at,
                      size_t column_stride)
{
    size_t run = (size_t)(c->fill_rows * c->itemsize), k;

    if (c->plan.count == 0)
        return;
    if (column_stride == run || 4 * c->fill_rows >= c->rows) {
        npyio__swap_apply(&c->plan, at,
                          (size_t)(c->box_count - 1) * column_stride + run);
        return;
    }
    for (k = 0; k < c->box_count; k++)
        npyio__swap_apply(&c->plan, at + k * column_stride, run);
}

/*
 * One row of the fill (band row b, at src in the bounce buffer) of which
 * only C positions [lo, hi) are delivered: element by element over the
 * box's columns (the first or last row of a chunk that starts or ends
 * inside a row; every other row goes through copy_box). Position p of
 * band row b lands at element b * columns + p - skip of dst, which lo and
 * hi keep inside the chunk.
 */
static void place_row_part(npyio__converter *c, int j,
                           const unsigned char *src, uint64_t b, uint64_t lo,
                           uint64_t hi)
{
    size_t size = c->itemsize;
    uint64_t p = c->box_offset, base = b * c->columns - c->skip;
    int a;

    if (j == 1) {
        /* A range of axis 1: C positions p + i * cs, i < ext[1]; those in
         * [lo, hi) are one run of i, copied as a one-row transpose. */
        uint64_t cs = c->c_stride[1], n = c->ext[1], i0 = 0, i1 = n;

        if (lo > p)
            i0 = (lo - p + cs - 1) / cs;
        if (hi <= p)
            i1 = 0;
        else if ((hi - p + cs - 1) / cs < n)
            i1 = (hi - p + cs - 1) / cs;
        if (i0 < i1)
            transpose(c->dst + (size_t)(base + p + i0 * cs) * size, 0,
                      (size_t)cs * size, src + (size_t)i0 * c->src_stride[1],
                      c->src_stride[1], 1, (size_t)(i1 - i0), size);
        return;
    }
    for (a = 1; a <= j; a++)
        c->odometer[a] = 0;
    for (;;) {
        if (p >= lo && p < hi)
            memcpy(c->dst + (size_t)(base + p) * size, src, size);
        for (a = 1; a <= j; a++) {
            if (++c->odometer[a] < c->ext[a]) {
                src += c->src_stride[a];
                p += c->c_stride[a];
                break;
            }
            src -= (c->ext[a] - 1) * c->src_stride[a];
            p -= (c->ext[a] - 1) * c->c_stride[a];
            c->odometer[a] = 0;
        }
        if (a > j)
            return;
    }
}

/* Place a fill of a band that starts or ends inside a row: its whole rows
 * by copy_box, the cut first and last rows by place_row_part. */
static void place_part(npyio__converter *c, int j)
{
    size_t size = c->itemsize;
    uint64_t b0 = c->sub, b1 = c->sub + c->fill_rows;
    uint64_t last = c->count - 1;
    uint64_t whole0 = c->skip > 0 ? 1 : 0;
    uint64_t whole1 = c->last_end < c->columns ? last : c->count;
    uint64_t f0 = b0 > whole0 ? b0 : whole0, f1 = b1 < whole1 ? b1 : whole1;

    if (f0 < f1) {
        c->ext[0] = (size_t)(f1 - f0);
        copy_box(j + 1, c->ext, c->bounce + (size_t)(f0 - b0) * size,
                 c->src_stride,
                 c->dst + (size_t)(f0 * c->columns + c->box_offset -
                                   c->skip) * size,
                 c->dst_stride, size, c->odometer);
    }
    if (c->skip > 0 && b0 == 0)
        place_row_part(c, j, c->bounce, 0, c->skip,
                       last == 0 ? c->last_end : c->columns);
    if (c->last_end < c->columns && last >= b0 && last < b1 &&
        !(last == 0 && c->skip > 0))
        place_row_part(c, j, c->bounce + (size_t)(last - b0) * size, last,
                       last == 0 ? c->skip : 0, c->last_end);
}

void npyio__converter_place(npyio__converter *c)
{
    size_t size = c->itemsize;
    size_t column_stride = c->spans ? (size_t)(c->rows * size)
                                    : (size_t)(c->fill_rows * size);
    int a, j = c->box_axis, k = c->ndim - 1;

    if (c->direct) {
        swap_fill(c, c->dst + (size_t)(c->column * c->count * size),
                  column_stride);
    } else {
        unsigned char *at;

        swap_fill(c, c->bounce, column_stride);
        c->ext[0] = (size_t)c->fill_rows;
        c->src_stride[0] = size;
        for (a = 1; a <= j; a++) {
            c->ext[a] = (size_t)(a < j ? c->dim[a] : c->box_range);
            c->src_stride[a] = column_stride * (size_t)c->below[a];
        }
        if (c->c_order) {
            c->dst_stride[0] = (size_t)c->columns * size;
            for (a = 1; a <= j; a++)
                c->dst_stride[a] = (size_t)c->c_stride[a] * size;
            if (c->skip > 0 || c->last_end < c->columns) {
                place_part(c, j);
                goto placed;
            }
            at = c->dst + (size_t)(c->sub * c->columns + c->box_offset) * size;
        } else {
            c->dst_stride[0] = size;
            for (a = 1; a <= j; a++)
                c->dst_stride[a] = (size_t)(c->count * c->below[a]) * size;
            at = c->dst + (size_t)(c->column * c->count + c->sub) * size;
        }
        copy_box(j + 1, c->ext, c->bounce, c->src_stride, at, c->dst_stride,
                 size, c->odometer);
    }
placed:
    c->sub += c->fill_rows;
    if (c->sub < c->count)
        return; /* the next rows of the same box */
    c->column += c->box_count;
    c->index[j] += c->box_range;
    for (a = j; a < k && c->index[a] >= c->dim[a]; a++) {
        c->index[a] = 0;
        c->index[a + 1]++;
    }
    c->in_box = false;
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
    if (npyio_dtype_has_objects(dtype))
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
