/*
 * convert.h - the hot kernels of the I/O core, as pure functions over
 * memory: the byte-swap plan of a dtype and its application, and the
 * converter that reorders Fortran data into C order in bands. Knows
 * nothing of streams, headers or files.
 */
#ifndef NPYIO_CONVERT_H
#define NPYIO_CONVERT_H

#include "alloc.h"
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
 * The converter: what one pass over an array's data does to it, decided
 * once (the swap plan, the reorder cursor, the bounce buffer and the
 * policy that tiles the reordering), then applied band by band.
 *
 * A band is rows [first, first + count) along axis 0 of a Fortran-order
 * array of shape (n0, n1, ..., nk). In the file, each column (one index of
 * axes 1..k, axis 1 varying fastest) holds the band as one run of count
 * elements, n0 elements after the previous column's. The converter turns
 * the band into the (count, n1, ..., nk) array in C order (reordering) or
 * in Fortran order (the runs one after the other), in the caller's dst.
 *
 * It knows nothing of streams: it asks for data with fills (runs of the
 * data section to put into memory), which the caller reads, then places
 * what arrived. Two ways to fill:
 *
 *   spans  one read of consecutive columns, the gaps between the runs
 *          included: for short columns, where reading a gap costs less
 *          than a positioned read (one pass over the file per band);
 *   runs   one read per column of the band's run (or of part of it, a
 *          sub-band, so that several columns fit): for long columns.
 *
 * Columns go through the bounce buffer in boxes (whole lower axes, a
 * range of one axis, fixed higher ones) that are transposed into dst in
 * cache-line tiles, so that every line of dst is written whole.
 *
 *   npyio__converter_band_part(c, first, count, 0, c->columns, dst);
 *   while (npyio__converter_next(c, &fill)) {
 *       read each of fill's runs into its place;
 *       npyio__converter_place(c);
 *   }
 */

/* What a pass reads and delivers. */
typedef struct npyio__converter_spec {
    const npyio_dtype *dtype;
    int ndim;
    const int64_t *shape;
    bool fortran;     /* the data is Fortran-ordered and the layouts differ */
    bool native;      /* bring every element to this host's byte order */
    bool c_order;     /* deliver Fortran data in C order */
    bool bands;       /* bands will be read (a bounce buffer is needed) */
    bool seekable;    /* fills may go back and skip: else in file order */
    bool positioned;  /* a run costs one call (pread), not two */
    uint64_t band_rows; /* the most rows a band of the pass holds (0: all) */
    /* The policy, 0 for the defaults (tests set them to reach every
     * path with small arrays): the bounce buffer's size in bytes, and
     * what one positioned read costs, in bytes it could have copied. */
    size_t bounce_bytes;
    size_t seek_cost;
} npyio__converter_spec;

/* Runs to read: count runs of len bytes, the first at data-section byte
 * offset, each `stride` bytes after the previous; in memory at buf, each
 * buf_stride bytes after the previous. Runs come in file order. */
typedef struct npyio__fill {
    uint64_t offset;
    uint64_t stride;
    size_t len;
    size_t count;
    unsigned char *buf;
    size_t buf_stride;
} npyio__fill;

typedef struct npyio__converter {
    npyio__swap_plan plan; /* empty: bytes keep their order */
    size_t itemsize;
    bool fortran, c_order, seekable;
    size_t seek_cost;
    int ndim;
    uint64_t rows;    /* n0 */
    uint64_t columns; /* n1 * ... * nk */
    /* Per axis a = 1..k: its length, the columns one step along it spans
     * (n1 * ... * n(a-1)), its C stride in elements, and the cursor. */
    uint64_t *dim, *below, *c_stride, *index;
    /* Scratch for one box: extents, byte strides, an odometer. */
    size_t *ext, *src_stride, *dst_stride, *odometer;
    unsigned char *bounce;
    size_t bounce_cap;
    /* The band being placed. */
    unsigned char *dst;
    uint64_t first, count;
    bool spans;           /* filled by spans, else by runs */
    bool direct;          /* runs read straight into dst (Fortran bands) */
    uint64_t sub_rows;    /* rows of a run per fill (runs) */
    uint64_t box_columns; /* most columns per fill */
    uint64_t column;      /* first column of the current box */
    bool in_box;
    int box_axis;         /* the axis the box has a range of */
    uint64_t box_range;   /* its length along that axis */
    uint64_t box_count;   /* columns in the box */
    uint64_t box_offset;  /* C offset (elements) of its first column */
    uint64_t sub;         /* rows of the band already placed (runs) */
    uint64_t fill_rows;   /* rows in the current fill */
    /* A band that starts or ends inside a row (a chunk of whole elements):
     * the first row is delivered from C position skip, the last up to
     * last_end (exclusive); 0 and columns for whole rows. */
    uint64_t skip, last_end;
    uint64_t column_end;  /* the cursor stops here (columns, or less for
                             a part of one row of a 2-D array) */
} npyio__converter;

/* Make a converter for one pass (freed with npyio__converter_free, also
 * after a failure). Allocates through mem: the plan, the cursor and, for
 * bands, the bounce buffer. */
npyio_status npyio__converter_make(npyio__converter *c,
                                   const npyio__converter_spec *spec,
                                   const npyio__mem *mem);

void npyio__converter_free(npyio__converter *c);

/* Swap whole elements in place, as the plan says (nothing if empty). */
void npyio__converter_swap(const npyio__converter *c, void *data,
                           size_t nbytes);

/* Start placing rows [first, first + count) in dst (count rows of
 * n1 * ... * nk elements): a whole band is skip 0, last_end columns.
 * For C order, a band may leave out the first `skip` elements (in C
 * order) of its first row and its last row from C position last_end on:
 * dst then receives count * columns - skip - (columns - last_end)
 * elements. A part of one row of a 2-D array reads only its columns; of
 * more dimensions, every column of the row is read (and only the part
 * placed). */
void npyio__converter_band_part(npyio__converter *c, uint64_t first,
                                uint64_t count, uint64_t skip,
                                uint64_t last_end, void *dst);

/* The next fill of the band, or false when the band is placed. */
bool npyio__converter_next(npyio__converter *c, npyio__fill *fill);

/* Swap and place what the last fill brought. */
void npyio__converter_place(npyio__converter *c);

/* The whole array at once from memory (src in file order, already
 * swapped) into dst, in C order. Fortran, reordering converters only. */
void npyio__converter_place_all(npyio__converter *c, const void *src,
                                void *dst);

#endif /* NPYIO_CONVERT_H */
