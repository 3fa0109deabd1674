/*
 * test_reorder.c - Fortran data read in C order, against a naive
 * element-by-element reordering computed here: whole reads, chunks and
 * row ranges with every flag combination, over 1-D to 4-D shapes (axes of
 * 0 and 1, odd sizes, tall and wide), itemsizes 1, 2, 3, 8, 16 and a
 * padded record, big-endian files brought to native order, through files,
 * memory, a seekable stream of short reads and a pipe of short reads. The
 * converter itself (convert.h) is driven with tiny bounce buffers and
 * both extreme policies, so that every way of filling a band (spans,
 * runs, cut runs, boxes across axes) is reached with small arrays; its
 * fills must stay in bounds and, without seeking, in file order. A reader
 * whose read failed midway stays failed.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "testutil.h"
#include "hostile.h"
#include "convert.h"
#include "reader.h"

/* A scratch directory for the files, made by the group setup. */
static char dir[64];

static void path_in_dir(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

/* ---- element types, with the units a byte-order change reverses -------------- */

typedef struct unit {
    size_t offset, size;
} unit;

typedef struct type_case {
    const char *descr;
    size_t itemsize;
    char order; /* the file's byte order: '<', '>', or '|' for none */
    int units;
    unit unit[2];
} type_case;

static const type_case types[] = {
    {"|u1", 1, '|', 0, {{0, 0}}},
    {"<u2", 2, '<', 1, {{0, 2}}},
    {">u2", 2, '>', 1, {{0, 2}}},
    {"|S3", 3, '|', 0, {{0, 0}}},
    {">i4", 4, '>', 1, {{0, 4}}},
    {"<f8", 8, '<', 1, {{0, 8}}},
    {">f8", 8, '>', 1, {{0, 8}}},
    {">c16", 16, '>', 2, {{0, 8}, {8, 8}}},
    /* Padding at bytes 2-3 and 8-11, left as they are. */
    {"[('a', '>u2'), ('', '|V2'), ('b', '>i4'), ('', '|V4')]", 12, '>', 2,
     {{0, 2}, {4, 4}}},
};
#define TYPES (sizeof types / sizeof types[0])

/* ---- shapes ------------------------------------------------------------------- */

typedef struct shape_case {
    int ndim;
    int64_t shape[4];
} shape_case;

static const shape_case shapes[] = {
    {1, {0}},          {1, {1}},          {1, {7}},
    {2, {1, 1}},       {2, {5, 1}},       {2, {1, 5}},
    {2, {2, 3}},       {2, {13, 3}},      {2, {3, 17}},
    {2, {31, 29}},     {2, {0, 5}},       {2, {5, 0}},
    {2, {64, 2}},      {3, {2, 3, 4}},    {3, {5, 1, 7}},
    {3, {1, 1, 6}},    {3, {6, 1, 1}},    {3, {3, 0, 4}},
    {3, {7, 5, 3}},    {3, {1, 4, 9}},    {4, {4, 3, 2, 5}},
    {4, {3, 5, 7, 2}}, {4, {2, 1, 3, 1}}, {4, {1, 2, 1, 3}},
};
#define SHAPES (sizeof shapes / sizeof shapes[0])

/* ---- an array, its file and what every read must give ---------------------------------- */

typedef struct array {
    const type_case *type;
    int ndim;
    const int64_t *shape;
    bool fortran;      /* the header says Fortran order */
    size_t count, itemsize, nbytes;
    size_t rows, row_elements, row_bytes;
    bool reorders;     /* Fortran data whose C order differs */
    unsigned char *file;
    size_t file_len, data_offset;
    size_t *file_of_c; /* the file position of the element at each C position */
    char path[256];
} array;

/* Byte b of the element stored at file position f. */
static unsigned char pattern(size_t f, size_t b)
{
    uint32_t x = (uint32_t)f * 2654435761u + (uint32_t)b * 40503u + 17u;

    return (unsigned char)((x >> 24) ^ (x >> 8) ^ x);
}

static bool layouts_differ(int ndim, const int64_t *shape)
{
    int longer = 0, i;

    for (i = 0; i < ndim; i++)
        longer += shape[i] > 1;
    return longer >= 2;
}

static void make_array(array *a, const type_case *type, int ndim,
                       const int64_t *shape, bool fortran)
{
    npyio_dtype *dt = NULL;
    npyio_header *h = NULL;
    size_t hlen = 0, c, f, b;
    int d;

    memset(a, 0, sizeof *a);
    a->type = type;
    a->ndim = ndim;
    a->shape = shape;
    a->fortran = fortran;
    a->itemsize = type->itemsize;
    a->count = 1;
    for (d = 0; d < ndim; d++)
        a->count *= (size_t)shape[d];
    a->nbytes = a->count * a->itemsize;
    a->rows = ndim > 0 ? (size_t)shape[0] : 1;
    a->row_elements = 1;
    for (d = 1; d < ndim; d++)
        a->row_elements *= (size_t)shape[d];
    a->row_bytes = a->row_elements * a->itemsize;
    a->reorders = fortran && a->count > 0 && layouts_differ(ndim, shape);
    assert_ok(npyio_dtype_parse(type->descr, strlen(type->descr), NULL,
                                     &dt));
    assert_int_equal(npyio_dtype_itemsize(dt), type->itemsize);
    assert_ok(npyio_header_new(dt, ndim, shape, fortran, &h));
    npyio_dtype_unref(dt);
    assert_status(npyio_header_emit(h, 0, NULL, 0, &hlen),
                  NPYIO_E_BUFFER_TOO_SMALL);
    a->data_offset = hlen;
    a->file_len = hlen + a->nbytes;
    a->file = malloc(a->file_len + 1);
    assert_non_null(a->file);
    assert_ok(npyio_header_emit(h, 0, a->file, hlen, &hlen));
    npyio_header_free(h);
    for (f = 0; f < a->count; f++)
        for (b = 0; b < a->itemsize; b++)
            a->file[hlen + f * a->itemsize + b] = pattern(f, b);
    /* Where each C position's element lies in the file. */
    a->file_of_c = malloc((a->count + 1) * sizeof *a->file_of_c);
    assert_non_null(a->file_of_c);
    for (c = 0; c < a->count; c++) {
        size_t rest = c, fpos = 0, fstride = 1;
        size_t index[4] = {0, 0, 0, 0};

        for (d = ndim - 1; d >= 0; d--) {
            index[d] = rest % (size_t)shape[d];
            rest /= (size_t)shape[d];
        }
        if (!fortran) {
            a->file_of_c[c] = c;
            continue;
        }
        for (d = 0; d < ndim; d++) {
            fpos += index[d] * fstride;
            fstride *= (size_t)shape[d];
        }
        a->file_of_c[c] = fpos;
    }
    path_in_dir(a->path, sizeof a->path, "array.npy");
}

static void free_array(array *a)
{
    free(a->file);
    free(a->file_of_c);
}

/* Copy the element at file position f to out, converted as flags say. */
static void put_element(const array *a, size_t f, unsigned flags,
                        unsigned char *out)
{
    const type_case *t = a->type;
    int u;

    memcpy(out, a->file + a->data_offset + f * a->itemsize, a->itemsize);
    if (!(flags & NPYIO_READ_NATIVE) || t->order == '|' ||
        t->order == host_order())
        return;
    for (u = 0; u < t->units; u++) {
        unsigned char *p = out + t->unit[u].offset;
        size_t n = t->unit[u].size, i;

        for (i = 0; i < n / 2; i++) {
            unsigned char x = p[i];

            p[i] = p[n - 1 - i];
            p[n - 1 - i] = x;
        }
    }
}

/* All of the data as a whole read gives it. */
static unsigned char *expect_whole(const array *a, unsigned flags)
{
    unsigned char *out = malloc(a->nbytes + 1);
    size_t k;

    for (k = 0; k < a->count; k++)
        put_element(a, (flags & NPYIO_READ_C_ORDER) ? a->file_of_c[k] : k,
                    flags, out + k * a->itemsize);
    return out;
}

/* Rows [first, first + count): C order, or for Fortran data read as
 * stored, the band in Fortran order (each column's run in turn). */
static unsigned char *expect_rows(const array *a, unsigned flags,
                                  size_t first, size_t count)
{
    unsigned char *out = malloc(count * a->row_bytes + 1);
    size_t i, m, k = 0;

    if (a->fortran && !(flags & NPYIO_READ_C_ORDER)) {
        for (m = 0; m < a->row_elements; m++)
            for (i = first; i < first + count; i++)
                put_element(a, m * a->rows + i, flags,
                            out + k++ * a->itemsize);
        return out;
    }
    for (i = first * a->row_elements; i < (first + count) * a->row_elements;
         i++)
        put_element(a, a->fortran ? a->file_of_c[i] : i, flags,
                    out + k++ * a->itemsize);
    return out;
}

/* ---- sources --------------------------------------------------------------------- */

enum { K_FILE, K_MEMORY, K_SEEK, K_PIPE, KINDS };
static const char *const kind_names[KINDS] = {"file", "memory",
                                               "short reads, seekable",
                                               "pipe of short reads"};

typedef struct source {
    hostile h;
    npyio_stream *stream;
    npyio_reader *reader;
} source;

/* The bytes of the block that reordering chunk passes go through, set
 * on every reader opened (SIZE_MAX: the library's default). */
static size_t block_setting = SIZE_MAX;

static npyio_reader *open_source(source *s, const array *a, int kind)
{
    s->stream = NULL;
    if (kind == K_FILE)
        assert_ok(npyio_reader_open_path(a->path, NULL, &s->reader));
    else {
        if (kind == K_MEMORY)
            assert_ok(npyio_stream_open_memory(a->file, a->file_len, NULL,
                                               &s->stream));
        else
            assert_ok(hostile_open(&s->h, a->file, a->file_len,
                                   kind == K_SEEK, &s->stream));
        assert_ok(npyio_reader_open_stream(s->stream, NULL, &s->reader));
    }
    if (block_setting != SIZE_MAX)
        npyio__reader_set_block_bytes(s->reader, block_setting);
    return s->reader;
}

static void close_source(source *s)
{
    assert_ok(npyio_reader_close(s->reader));
    assert_ok(npyio_stream_close(s->stream));
}

static void write_file(const array *a)
{
    FILE *f = fopen(a->path, "wb");

    assert_non_null(f);
    assert_int_equal(fwrite(a->file, 1, a->file_len, f), a->file_len);
    assert_int_equal(fclose(f), 0);
}

static void describe(char *out, size_t cap, const array *a, int kind,
                     unsigned flags)
{
    size_t at;
    int d;

    at = (size_t)snprintf(out, cap, "%s %s (", a->type->descr,
                          a->fortran ? "Fortran" : "C");
    for (d = 0; d < a->ndim && at < cap; d++)
        at += (size_t)snprintf(out + at, cap - at, "%s%lld", d ? ", " : "",
                               (long long)a->shape[d]);
    if (at < cap)
        snprintf(out + at, cap - at, "), %s, flags %u", kind_names[kind],
                 flags);
}

#define check_bytes(got, want, len, what, a, kind, flags)                    \
    do {                                                                     \
        if ((len) > 0 && memcmp((got), (want), (len)) != 0) {                \
            char where_[512];                                                \
            describe(where_, sizeof where_, (a), (kind), (flags));           \
            fail_msg("%s differs from the naive reordering: %s", (what),     \
                     where_);                                                \
        }                                                                    \
    } while (0)

/* ---- the reads ---------------------------------------------------------------------- */

static void check_whole(const array *a, int kind, unsigned flags)
{
    unsigned char *want = expect_whole(a, flags);
    unsigned char *got = malloc(a->nbytes + 1);
    void *alloc = NULL;
    size_t len = 99;
    source s;

    open_source(&s, a, kind);
    assert_ok(npyio_reader_read(s.reader, got, a->nbytes, flags));
    check_bytes(got, want, a->nbytes, "a whole read", a, kind, flags);
    close_source(&s);
    open_source(&s, a, kind);
    assert_ok(npyio_reader_read_alloc(s.reader, flags, &alloc, &len));
    assert_int_equal(len, a->nbytes);
    check_bytes(alloc, want, a->nbytes, "a whole read_alloc", a, kind,
                flags);
    npyio_free(alloc);
    close_source(&s);
    free(want);
    free(got);
}

/* A chunked pass being checked: what arrived so far. */
typedef struct pass {
    const array *a;
    int kind;
    unsigned flags;
    size_t unit; /* every chunk is as many whole elements as fit */
    unsigned char *all;
    size_t have;
} pass;

/* One chunk, appended to what arrived; the call's status. */
static npyio_status next_chunk(pass *p, npyio_reader *r, unsigned char *buf,
                               size_t cap)
{
    size_t got = 1;
    npyio_status st = npyio_reader_read_chunk(r, buf, cap, p->flags, &got);

    if (st != NPYIO_OK) {
        assert_int_equal(got, 0);
        return st;
    }
    {
        size_t fit = cap / p->unit * p->unit, left = p->a->nbytes - p->have;

        assert_int_equal(got, fit < left ? fit : left);
    }
    memcpy(p->all + p->have, buf, got);
    p->have += got;
    return st;
}

/* The last rows, read in the middle of a chunked pass: independent of the
 * chunks' cursor (streams that can go back). */
static void rows_between(const pass *p, npyio_reader *r)
{
    const array *a = p->a;
    size_t n = a->rows > 1 ? 2 : 1, first = a->rows - n;
    unsigned char *rows = malloc(n * a->row_bytes + 1);
    unsigned char *want = expect_rows(a, p->flags, first, n);

    assert_ok(npyio_reader_read_rows(r, (int64_t)first, (int64_t)n, rows,
                                     n * a->row_bytes, p->flags));
    check_bytes(rows, want, n * a->row_bytes, "rows between chunks", a,
                p->kind, p->flags);
    free(rows);
    free(want);
}

static void check_chunks(const array *a, int kind, unsigned flags,
                         size_t cap)
{
    bool by_rows = a->reorders && (flags & NPYIO_READ_C_ORDER);
    unsigned char *want = expect_whole(a, flags), *buf = malloc(cap + 1);
    pass p = {a, kind, flags, a->itemsize, malloc(a->nbytes + 1), 0};
    size_t got = 0;
    npyio_status st;
    source s;
    int calls;

    open_source(&s, a, kind);
    if (by_rows && kind == K_PIPE) {
        assert_status(npyio_reader_read_chunk(s.reader, buf, cap, flags,
                                              &got),
                      NPYIO_E_UNSUPPORTED);
        assert_error_contains("needs a stream that can seek");
    } else {
        for (calls = 1; (st = next_chunk(&p, s.reader, buf, cap)) ==
                        NPYIO_OK;
             calls++)
            if (calls == 2 && kind != K_PIPE && a->ndim > 0 && a->rows > 0)
                rows_between(&p, s.reader);
        assert_status(st, NPYIO_END);
        assert_int_equal(p.have, a->nbytes);
        check_bytes(p.all, want, a->nbytes, "chunks", a, kind, flags);
        /* The end stays the end. */
        assert_status(next_chunk(&p, s.reader, buf, cap), NPYIO_END);
    }
    close_source(&s);
    free(want);
    free(p.all);
    free(buf);
}

static void check_rows(const array *a, int kind, unsigned flags,
                       size_t first, size_t count)
{
    size_t len = count * a->row_bytes;
    unsigned char *want = expect_rows(a, flags, first, count);
    unsigned char *got = malloc(len + 2);
    source s;

    open_source(&s, a, kind);
    memset(got, 0xEE, len + 2);
    assert_ok(npyio_reader_read_rows(s.reader, (int64_t)first,
                                     (int64_t)count, got, len + 1, flags));
    check_bytes(got, want, len, "rows", a, kind, flags);
    assert_int_equal(got[len], 0xEE);
    close_source(&s);
    free(want);
    free(got);
}

static void check_chunk_sizes(const array *a, int kind, unsigned flags)
{
    bool by_rows = a->reorders && (flags & NPYIO_READ_C_ORDER);
    size_t u = by_rows ? a->row_bytes : a->itemsize;

    if (u > 0 && a->nbytes > 0) {
        check_chunks(a, kind, flags, u);             /* 1 */
        check_chunks(a, kind, flags, 2 * u + u / 2); /* 2.5 */
        check_chunks(a, kind, flags, 7 * u);
        check_chunks(a, kind, flags, a->nbytes + 100); /* more */
    }
    /* Chunks in C order of Fortran data start and end inside rows: one
     * element, a row but one element, a row and three. */
    if (by_rows && a->nbytes > 0) {
        check_chunks(a, kind, flags, a->itemsize);
        if (a->row_bytes > a->itemsize)
            check_chunks(a, kind, flags, u - a->itemsize);
        check_chunks(a, kind, flags, u + 3 * a->itemsize + 1);
    }
}

/* Reordering chunk passes with each block setting: the default (these
 * arrays fit in it), none (piece by piece), and two rows and a byte
 * (refilled, chunks across blocks, chunks larger than the block read
 * directly); other passes with the default only. */
static void check_blocks(const array *a, int kind, unsigned flags,
                         void (*check)(const array *, int, unsigned))
{
    size_t settings[3] = {SIZE_MAX, 0, 2 * a->row_bytes + 1}, i;
    bool by_rows = a->reorders && (flags & NPYIO_READ_C_ORDER);

    for (i = 0; i < (by_rows ? 3u : 1u); i++) {
        block_setting = settings[i];
        check(a, kind, flags);
    }
    block_setting = SIZE_MAX;
}

/* Rows [first, first + count) read by an open reader, as the naive
 * reordering has them. */
static void check_rows_of(const array *a, source *s, int kind,
                          unsigned flags, size_t first, size_t count)
{
    size_t len = count * a->row_bytes;
    unsigned char *want = expect_rows(a, flags, first, count);
    unsigned char *got = malloc(len + 1);

    assert_ok(npyio_reader_read_rows(s->reader, (int64_t)first,
                                     (int64_t)count, got, len, flags));
    check_bytes(got, want, len, "rows in sequence", a, kind, flags);
    free(want);
    free(got);
}

/* Fortran data read in C order `band` rows at a time, in sequence
 * (through the reader's block after the first request), then the last
 * band again (held by the block), the first band (behind it), and the
 * first two bands with the other byte-order flag (a block filled for
 * other flags is not used; the second is a sequence of the first). */
static void check_rows_by(const array *a, int kind, unsigned flags,
                          size_t band)
{
    unsigned other = flags ^ NPYIO_READ_NATIVE;
    size_t first, n = 0, first_n = band < a->rows ? band : a->rows;
    source s;

    if (!a->reorders || !(flags & NPYIO_READ_C_ORDER) || kind == K_PIPE ||
        a->nbytes == 0)
        return;
    open_source(&s, a, kind);
    for (first = 0; first < a->rows; first += n) {
        n = a->rows - first < band ? a->rows - first : band;
        check_rows_of(a, &s, kind, flags, first, n);
    }
    check_rows_of(a, &s, kind, flags, a->rows - n, n);
    check_rows_of(a, &s, kind, flags, 0, first_n);
    check_rows_of(a, &s, kind, other, 0, first_n);
    if (a->rows > first_n)
        check_rows_of(a, &s, kind, other, first_n,
                      a->rows - first_n < band ? a->rows - first_n : band);
    close_source(&s);
}

static void check_row_sequences(const array *a, int kind, unsigned flags)
{
    size_t band;

    for (band = 1; band <= 3; band++)
        check_rows_by(a, kind, flags, band);
}

static void check_array(const array *a)
{
    unsigned flags;
    int kind;

    write_file(a);
    for (kind = 0; kind < KINDS; kind++)
        for (flags = 0; flags < 4; flags++) {
            check_whole(a, kind, flags);
            check_blocks(a, kind, flags, check_chunk_sizes);
            check_blocks(a, kind, flags, check_row_sequences);
            if (a->ndim == 0 || a->nbytes == 0)
                continue;
            check_rows(a, kind, flags, 0, a->rows);
            check_rows(a, kind, flags, a->rows - 1, 1);
            check_rows(a, kind, flags, a->rows / 2, 0);
            if (a->rows >= 3)
                check_rows(a, kind, flags, 1, a->rows - 2);
        }
}

static void test_small_arrays(void **state)
{
    size_t t, s;
    int fortran;

    (void)state;
    for (s = 0; s < SHAPES; s++)
        for (t = 0; t < TYPES; t++)
            for (fortran = 0; fortran < 2; fortran++) {
                array a;

                make_array(&a, &types[t], shapes[s].ndim, shapes[s].shape,
                           fortran);
                check_array(&a);
                free_array(&a);
            }
}

/* Larger than the default bounce buffer (2 MiB), in both spans (short
 * columns) and runs (long ones), through every kind of source. */
static void check_large_chunks(const array *a, int kind, unsigned flags)
{
    size_t u = (flags & NPYIO_READ_C_ORDER) ? a->row_bytes : a->itemsize;

    check_chunks(a, kind, flags, (size_t)3 << 20);
    check_chunks(a, kind, flags, 3 * u + 5);
    check_rows_by(a, kind, flags, a->rows / 97 + 1);
}

static void test_large_arrays(void **state)
{
    static const int64_t wide[2] = {3, 150001}, tall[2] = {150001, 3},
                         square[2] = {601, 587}, cube[3] = {41, 67, 97};
    static const struct {
        int ndim;
        const int64_t *shape;
    } cases[] = {{2, wide}, {2, tall}, {2, square}, {3, cube}};
    size_t c;

    (void)state;
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        array a;
        unsigned flags;
        int kind;

        make_array(&a, &types[6], cases[c].ndim, cases[c].shape, true);
        write_file(&a);
        for (kind = 0; kind < KINDS; kind++)
            for (flags = 0; flags < 4; flags++) {
                if (flags == NPYIO_READ_NATIVE)
                    continue;
                check_whole(&a, kind, flags);
                check_blocks(&a, kind, flags, check_large_chunks);
                check_rows(&a, kind, flags, a.rows / 3, a.rows / 2);
            }
        free_array(&a);
    }
}

/* ---- the converter itself -------------------------------------------------------------------- */

/* Run a band through the converter, reading fills from the file bytes;
 * every fill must lie in the data and in the bounce buffer or the band,
 * and without seeking, come in file order. */
static void run_band_part(npyio__converter *c, const array *a, size_t first,
                          size_t count, size_t skip, size_t last_end,
                          unsigned char *dst, bool seekable)
{
    npyio__fill fill;
    uint64_t end = 0;
    size_t band = count * a->row_bytes, fills = 0;

    npyio__converter_band_part(c, first, count, skip, last_end, dst);
    while (npyio__converter_next(c, &fill)) {
        size_t k;

        assert_true(fill.count >= 1 && fill.len > 0);
        for (k = 0; k < fill.count; k++) {
            uint64_t at = fill.offset + k * fill.stride;
            unsigned char *into = fill.buf + k * fill.buf_stride;
            bool in_bounce = into >= c->bounce &&
                             into + fill.len <= c->bounce + c->bounce_cap;
            bool in_dst = into >= dst && into + fill.len <= dst + band;

            assert_true(at + fill.len <= a->nbytes);
            assert_true(in_bounce || in_dst);
            if (!seekable)
                assert_true(at >= end);
            end = at + fill.len;
            memcpy(into, a->file + a->data_offset + at, fill.len);
        }
        npyio__converter_place(c);
        assert_true(++fills <= 4 * a->nbytes + 4); /* it ends */
    }
}

static void run_band(npyio__converter *c, const array *a, size_t first,
                     size_t count, unsigned char *dst, bool seekable)
{
    run_band_part(c, a, first, count, 0, a->row_elements, dst, seekable);
}

/*
 * Bands that start and end inside rows (chunks of whole elements in C
 * order): the same bytes as the whole rows, cut, and nothing written
 * outside them (dst is exactly their size, between guard bytes).
 */
static void check_band_parts(npyio__converter *c, const array *a,
                             unsigned flags, size_t first, size_t count,
                             bool seekable)
{
    size_t r = a->row_elements, size = a->itemsize, i, k;
    size_t cuts[4][2] = {{1, r}, {0, r - 1}, {r / 2, r / 2 + 1},
                         {r / 3, r - r / 3}};
    unsigned char *want = expect_rows(a, flags, first, count);

    for (k = 0; k < 4; k++) {
        size_t skip = cuts[k][0], last_end = cuts[k][1], len;
        unsigned char *buf;

        if (count == 0 || r < 2 || (count == 1 && skip >= last_end))
            continue;
        len = count * a->row_bytes - skip * size - (r - last_end) * size;
        buf = malloc(len + 32);
        memset(buf, 0xA5, len + 32);
        run_band_part(c, a, first, count, skip, last_end, buf + 16,
                      seekable);
        if (memcmp(buf + 16, want + skip * size, len) != 0)
            fail_msg("band [%zu, %zu) from %zu to %zu of %s, flags %u, %s, "
                     "differs", first, first + count, skip, last_end,
                     a->type->descr, flags,
                     seekable ? "seekable" : "in file order");
        for (i = 0; i < 16; i++)
            if (buf[i] != 0xA5 || buf[16 + len + i] != 0xA5)
                fail_msg("band part of %s wrote outside its bytes",
                         a->type->descr);
        free(buf);
    }
    free(want);
}

static void converter_case(const array *a, unsigned flags, bool seekable,
                           size_t bounce, size_t seek_cost)
{
    npyio__converter c;
    npyio__converter_spec spec;
    npyio__mem mem;
    npyio_dtype *dt = NULL;
    unsigned char *dst = malloc(a->nbytes + 1);
    size_t first, count;

    assert_ok(npyio_dtype_parse(a->type->descr,
                                     strlen(a->type->descr), NULL, &dt));
    npyio__mem_init(&mem, NULL);
    memset(&spec, 0, sizeof spec);
    spec.dtype = dt;
    spec.ndim = a->ndim;
    spec.shape = a->shape;
    spec.fortran = true;
    spec.native = (flags & NPYIO_READ_NATIVE) != 0;
    spec.c_order = (flags & NPYIO_READ_C_ORDER) != 0;
    spec.bands = true;
    spec.seekable = seekable;
    spec.positioned = seekable;
    spec.bounce_bytes = bounce;
    spec.seek_cost = seek_cost;
    assert_ok(npyio__converter_make(&c, &spec, &mem));
    for (first = 0; first <= a->rows; first++)
        for (count = 0; first + count <= a->rows; count++) {
            size_t rest = a->rows - first;
            unsigned char *want;

            /* Every band of short arrays; of longer ones, bands at the
             * edges and the middle. */
            if (a->rows > 9 && ((first > 1 && first != a->rows / 2 &&
                                 first + 1 < a->rows) ||
                                (count > 2 && count + 1 < rest)))
                continue;
            want = expect_rows(a, flags, first, count);
            if (flags & NPYIO_READ_C_ORDER)
                check_band_parts(&c, a, flags, first, count, seekable);
            run_band(&c, a, first, count, dst, seekable);
            if (memcmp(dst, want, count * a->row_bytes) != 0)
                fail_msg("band [%zu, %zu) of %s, flags %u, %s, bounce %zu, "
                         "seek cost %zu, differs", first, first + count,
                         a->type->descr, flags,
                         seekable ? "seekable" : "in file order", bounce,
                         seek_cost);
            free(want);
        }
    /* The whole array from memory. */
    if (flags & NPYIO_READ_C_ORDER) {
        unsigned char *raw = malloc(a->nbytes + 1);
        unsigned char *want = expect_whole(a, flags);

        memcpy(raw, a->file + a->data_offset, a->nbytes);
        npyio__converter_swap(&c, raw, a->nbytes);
        npyio__converter_place_all(&c, raw, dst);
        if (memcmp(dst, want, a->nbytes) != 0)
            fail_msg("the whole %s from memory differs", a->type->descr);
        free(raw);
        free(want);
    }
    npyio__converter_free(&c);
    npyio_dtype_unref(dt);
    free(dst);
}

static void test_converter_policies(void **state)
{
    /* Itemsizes 1, 2, 3, 4, 8, 16 and 12 (the record). */
    static const size_t type_index[] = {0, 2, 3, 4, 6, 7, 8};
    /* A positioned read that costs more than any copy (as large as size_t
     * allows on this host). */
    static const size_t costs[] = {
        1, (size_t)1 << (sizeof(size_t) > 4 ? 40 : 30)};
    size_t s, t, b, k;
    unsigned flags;
    int seekable;

    (void)state;
    for (s = 0; s < SHAPES; s++) {
        if (!layouts_differ(shapes[s].ndim, shapes[s].shape))
            continue;
        for (t = 0; t < sizeof type_index / sizeof type_index[0]; t++) {
            array a;
            size_t item = types[type_index[t]].itemsize;
            size_t bounces[] = {1, item, 3 * item, 5 * item + 1, 64, 1000,
                                0};

            make_array(&a, &types[type_index[t]], shapes[s].ndim,
                       shapes[s].shape, true);
            for (flags = 0; flags < 4; flags++)
                for (seekable = 0; seekable < 2; seekable++)
                    for (b = 0; b < sizeof bounces / sizeof bounces[0]; b++)
                        for (k = 0; k < 2; k++)
                            converter_case(&a, flags, seekable, bounces[b],
                                           costs[k]);
            free_array(&a);
        }
    }
}

/* ---- a failed read stays failed ------------------------------------------------------------ */

/* Short reads (hostile.h) that fail from byte fail_at on. */
typedef struct failing {
    hostile h;
    size_t fail_at;
} failing;

static int failing_read(void *user, void *buf, size_t cap, size_t *got)
{
    failing *f = user;

    if (f->h.pos >= f->fail_at)
        return -1;
    if (cap > f->fail_at - f->h.pos)
        cap = f->fail_at - f->h.pos;
    return hostile_read(&f->h, buf, cap, got);
}

static int failing_seek(void *user, int64_t offset, int whence, int64_t *pos)
{
    return hostile_seek(&((failing *)user)->h, offset, whence, pos);
}

/* Without memory for the block (NPYIO_LIMIT_ALLOC_BYTES below its 2.4
 * MB) a reordering chunk pass reads piece by piece: the same bytes, no
 * failure, no message left behind. */
static void test_block_without_memory(void **state)
{
    static const int64_t shape[2] = {1000, 300};
    const unsigned flags = NPYIO_READ_C_ORDER | NPYIO_READ_NATIVE;
    unsigned char *want, *all, buf[4096];
    npyio_options *o = NULL;
    npyio_reader *r = NULL;
    size_t got = 0, have = 0;
    npyio_status st;
    array a;

    (void)state;
    make_array(&a, &types[6], 2, shape, true);
    write_file(&a);
    want = expect_whole(&a, flags);
    all = malloc(a.nbytes);
    assert_ok(npyio_options_new(&o));
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_ALLOC_BYTES,
                                      (int64_t)1 << 20));
    assert_ok(npyio_reader_open_path(a.path, o, &r));
    while ((st = npyio_reader_read_chunk(r, buf, sizeof buf, flags, &got)) ==
           NPYIO_OK) {
        assert_true(have + got <= a.nbytes);
        memcpy(all + have, buf, got);
        have += got;
    }
    assert_status(st, NPYIO_END);
    assert_int_equal(have, a.nbytes);
    check_bytes(all, want, a.nbytes, "chunks without a block", &a, K_FILE,
                flags);
    assert_ok(npyio_reader_close(r));
    npyio_options_free(o);
    free(all);
    free(want);
    free_array(&a);
}

/* Memory behind callbacks that count their calls. */
typedef struct counted {
    const unsigned char *data;
    size_t len, pos;
    unsigned calls;
} counted;

static int counted_pread(void *user, void *buf, size_t cap, int64_t offset,
                         size_t *got)
{
    counted *c = user;
    size_t at = (size_t)offset < c->len ? (size_t)offset : c->len;

    c->calls++;
    *got = c->len - at < cap ? c->len - at : cap;
    memcpy(buf, c->data + at, *got);
    return 0;
}

static int counted_read(void *user, void *buf, size_t cap, size_t *got)
{
    counted *c = user;
    int rc = counted_pread(user, buf, cap, (int64_t)c->pos, got);

    c->pos += *got;
    return rc;
}

static int counted_seek(void *user, int64_t offset, int whence, int64_t *pos)
{
    counted *c = user;
    int64_t base = whence == NPYIO_SEEK_SET   ? 0
                   : whence == NPYIO_SEEK_CUR ? (int64_t)c->pos
                                              : (int64_t)c->len;

    c->calls++;
    c->pos = (size_t)(base + offset);
    *pos = (int64_t)c->pos;
    return 0;
}

/* The stream calls of reading a (400, 300) Fortran array in C order a row
 * at a time, in sequence, with a block of `block` bytes (SIZE_MAX: the
 * default); every row checked. */
static unsigned calls_of_rows_one_by_one(const array *a, size_t block)
{
    static const npyio_stream_ops ops = {.size = sizeof ops,
                                         .read = counted_read,
                                         .seek = counted_seek,
                                         .pread = counted_pread};
    const unsigned flags = NPYIO_READ_C_ORDER | NPYIO_READ_NATIVE;
    unsigned char *want = expect_whole(a, flags), *row = malloc(a->row_bytes);
    counted c = {a->file, a->file_len, 0, 0};
    npyio_stream *s = NULL;
    npyio_reader *r = NULL;
    size_t i;

    assert_ok(npyio_stream_open_ops(&ops, &c, NULL, &s));
    assert_ok(npyio_reader_open_stream(s, NULL, &r));
    if (block != SIZE_MAX)
        npyio__reader_set_block_bytes(r, block);
    c.calls = 0;
    for (i = 0; i < a->rows; i++) {
        assert_ok(npyio_reader_read_rows(r, (int64_t)i, 1, row,
                                         a->row_bytes, flags));
        check_bytes(row, want + i * a->row_bytes, a->row_bytes, "a row",
                    a, K_SEEK, flags);
    }
    assert_ok(npyio_reader_close(r));
    assert_ok(npyio_stream_close(s));
    free(row);
    free(want);
    return c.calls;
}

/* Rows read in sequence go through the block: a few calls for the first
 * row and one fill of the rest, where each row alone costs calls of its
 * own (a pass over the file's spans). Counts, not times. */
static void test_rows_in_sequence_use_the_block(void **state)
{
    static const int64_t shape[2] = {400, 300};
    unsigned with, without;
    array a;

    (void)state;
    make_array(&a, &types[6], 2, shape, true);
    with = calls_of_rows_one_by_one(&a, SIZE_MAX);
    without = calls_of_rows_one_by_one(&a, 0);
    print_message("stream calls for 400 rows one by one: %u through the "
                  "block, %u without\n", with, without);
    assert_true(with < 100);
    assert_true(without >= 400);
    free_array(&a);
}

static void test_failed_reads_stay_failed(void **state)
{
    static const npyio_stream_ops ops = {
        .size = sizeof ops, .read = failing_read, .seek = failing_seek};
    static const int64_t shape[2] = {40, 30};
    unsigned char buf[16384];
    size_t got = 0;
    void *data = NULL, *bytes = NULL;
    npyio_stream *s = NULL;
    npyio_reader *r = NULL;
    failing f;
    array a;

    (void)state;
    make_array(&a, &types[6], 2, shape, true);
    memset(&f, 0, sizeof f);
    f.h.data = a.file;
    f.h.len = a.file_len;
    f.fail_at = SIZE_MAX;
    assert_ok(npyio_stream_open_ops(&ops, &f, NULL, &s));
    assert_ok(npyio_reader_open_stream(s, NULL, &r));
    /* Refusals before any byte moves leave it usable. */
    assert_status(npyio_reader_read_rows(r, 39, 2, buf, sizeof buf, 0),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_reader_read_chunk(r, buf, 7, NPYIO_READ_C_ORDER,
                                          &got),
                  NPYIO_E_BUFFER_TOO_SMALL); /* under one element */
    assert_ok(npyio_reader_read_rows(r, 0, 1, buf, sizeof buf,
                                     NPYIO_READ_C_ORDER));
    /* A chunk that reaches failing bytes (the middle of the data): the
     * reader is failed. */
    f.fail_at = a.data_offset + a.nbytes / 2;
    assert_status(npyio_reader_read_chunk(r, buf, sizeof buf,
                                          NPYIO_READ_C_ORDER, &got),
                  NPYIO_E_IO);
    assert_status(npyio_reader_read_chunk(r, buf, sizeof buf,
                                          NPYIO_READ_C_ORDER, &got),
                  NPYIO_E_STATE);
    assert_error_contains("npyio_reader_read_chunk: the reader failed "
                          "earlier (I/O error: ");
    assert_error_contains("read callback failed");
    f.fail_at = SIZE_MAX; /* even once the stream works again */
    assert_status(npyio_reader_read_rows(r, 0, 1, buf, sizeof buf, 0),
                  NPYIO_E_STATE);
    assert_error_contains("npyio_reader_read_rows: the reader failed earlier");
    assert_status(npyio_reader_read(r, buf, sizeof buf, 0), NPYIO_E_STATE);
    assert_status(npyio_reader_read_alloc(r, 0, &data, NULL), NPYIO_E_STATE);
    assert_null(data);
    assert_status(npyio_reader_read_pickle(r, &bytes, &got), NPYIO_E_STATE);
    assert_non_null(npyio_reader_header(r));
    assert_ok(npyio_reader_close(r));
    /* A whole read that fails: the same. */
    f.h.pos = 0;
    f.fail_at = a.data_offset + 100;
    assert_ok(npyio_reader_open_stream(s, NULL, &r));
    assert_status(npyio_reader_read(r, buf, sizeof buf, NPYIO_READ_C_ORDER),
                  NPYIO_E_IO);
    assert_status(npyio_reader_read_chunk(r, buf, sizeof buf, 0, &got),
                  NPYIO_E_STATE);
    assert_error_contains("failed earlier (I/O error");
    assert_ok(npyio_reader_close(r));
    assert_ok(npyio_stream_close(s));
    /* A pipe that ends early: found in the middle of a band. */
    {
        hostile h;

        assert_ok(hostile_open(&h, a.file, a.file_len - 8, false, &s));
        assert_ok(npyio_reader_open_stream(s, NULL, &r));
        assert_status(npyio_reader_read_rows(r, 0, 40, buf, sizeof buf,
                                             NPYIO_READ_C_ORDER),
                      NPYIO_E_TRUNCATED);
        assert_error_contains("the header promises 9600");
        assert_status(npyio_reader_read_rows(r, 39, 1, buf, sizeof buf,
                                             NPYIO_READ_C_ORDER),
                      NPYIO_E_STATE);
        assert_error_contains("failed earlier (truncated data: ");
        assert_ok(npyio_reader_close(r));
        assert_ok(npyio_stream_close(s));
    }
    free_array(&a);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/npyio-reorder-XXXXXX");
    return mkdtemp(dir) != NULL ? 0 : -1;
}

static int teardown(void **state)
{
    char path[128];

    (void)state;
    path_in_dir(path, sizeof path, "array.npy");
    unlink(path);
    return rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_arrays),
        cmocka_unit_test(test_large_arrays),
        cmocka_unit_test(test_converter_policies),
        cmocka_unit_test(test_block_without_memory),
        cmocka_unit_test(test_rows_in_sequence_use_the_block),
        cmocka_unit_test(test_failed_reads_stay_failed),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
