/*
 * io_tool.c - the C side of the two-way I/O interop test (io_roundtrip.py):
 *   io_tool read FILE FLAGS OUT   read FILE with flags (1 native byte
 *                                 order, 2 C order, 3 both), write the
 *                                 data bytes to OUT
 *   io_tool copy IN OUT           read IN and write it again with the
 *                                 writer to OUT (same header, same bytes)
 *   io_tool create OUT ROWS COLS  create-and-map a '<f8' (ROWS, COLS) file
 *                                 and fill element (i, j) with i * COLS + j
 *   io_tool negate FILE           map a '<f8' file read-write and negate
 *                                 every element in place
 *   io_tool append FILE N         append N rows (i, i, i) of '<i4' one call
 *                                 each, i counting on from the file's rows
 *   io_tool append-loop FILE      the same, forever (the crash test kills it)
 *   io_tool unknown FILE N        write N such rows through a writer of
 *                                 unknown row count
 *   io_tool fill FILE P           fill rows of block size 10 numbered
 *                                 P, P + 4, P + 8, ... in place
 *   io_tool append-empty FILE N   append N rows of the file's row shape
 *                                 when a row has 0 bytes (shape (k, 0))
 *   io_tool append-filled FILE N  append N rows of the file's dtype and
 *                                 row shape, every byte 0xA5
 *   io_tool loadsave IN FLAGS OUT npyio_load_with_header IN with FLAGS, npyio_save_with_header the
 *                                 header and data it hands back as OUT
 *   io_tool arrays IN OUT         npyio_load IN, print its type and
 *                                 shape, npyio_save them as OUT
 *   io_tool churn FILE save|map   forever (the crash test kills it):
 *                                 generation g = 1, 2, ... of a (65536,)
 *                                 '<i8' array of g's replaces FILE, by
 *                                 npyio_save_with_header (synced) or by create-and-map
 * Exit 0 on success, 1 with a message on stderr.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npyio.h"

static int fail(const char *what)
{
    fprintf(stderr, "io_tool: %s: %s\n", what, npyio_last_error());
    return 1;
}

static int read_cmd(const char *in, unsigned flags, const char *out)
{
    npyio_header *h = NULL;
    void *data = NULL;
    FILE *f;
    size_t n;

    if (npyio_load_with_header(in, flags, NULL, &h, &data) != NPYIO_OK)
        return fail(in);
    n = (size_t)npyio_header_nbytes(h);
    f = fopen(out, "wb");
    if (f == NULL || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "io_tool: cannot write %s\n", out);
        return 1;
    }
    npyio_free(data);
    npyio_header_free(h);
    return 0;
}

static int copy_cmd(const char *in, const char *out)
{
    npyio_header *h = NULL;
    void *data = NULL;
    int rc = 0;

    if (npyio_load_with_header(in, 0, NULL, &h, &data) != NPYIO_OK)
        return fail(in);
    if (npyio_save_with_header(out, h, data, (size_t)npyio_header_nbytes(h), 0,
                   NULL) != NPYIO_OK)
        rc = fail(out);
    npyio_free(data);
    npyio_header_free(h);
    return rc;
}

/* The value of a little-endian double, whatever the host. */
static double get_le(const unsigned char *p)
{
    uint64_t bits = 0;
    double v;
    int k;

    for (k = 7; k >= 0; k--)
        bits = bits << 8 | p[k];
    memcpy(&v, &bits, 8);
    return v;
}

static void put_le(unsigned char *p, double v)
{
    uint64_t bits;
    int k;

    memcpy(&bits, &v, 8);
    for (k = 0; k < 8; k++)
        p[k] = (unsigned char)(bits >> (8 * k));
}

static int create_cmd(const char *out, long rows, long cols)
{
    npyio_dtype *f8 = NULL;
    npyio_header *h = NULL;
    npyio_map *m = NULL;
    int64_t shape[2] = {rows, cols};
    unsigned char *d;
    long i;

    if (npyio_dtype_parse("<f8", 3, NULL, &f8) != NPYIO_OK ||
        npyio_header_new(f8, 2, shape, 0, &h) != NPYIO_OK ||
        npyio_map_create_path(out, h, 0, NULL, &m) != NPYIO_OK)
        return fail(out);
    d = npyio_map_data(m);
    for (i = 0; i < rows * cols; i++)
        put_le(d + 8 * i, (double)i);
    npyio_dtype_unref(f8);
    npyio_header_free(h);
    return npyio_map_close(m) == NPYIO_OK ? 0 : fail(out);
}

static int negate_cmd(const char *path)
{
    npyio_map *m = NULL;
    unsigned char *d;
    int64_t i, n;

    if (npyio_map_open_path(path, NPYIO_MAP_WRITE, NULL, &m) != NPYIO_OK)
        return fail(path);
    d = npyio_map_data(m);
    n = npyio_header_count(npyio_map_header(m));
    for (i = 0; i < n; i++)
        put_le(d + 8 * i, -get_le(d + 8 * i));
    return npyio_map_close(m) == NPYIO_OK ? 0 : fail(path);
}

static npyio_header *rows_header(int64_t rows)
{
    npyio_dtype *i4 = NULL;
    npyio_header *h = NULL;
    int64_t shape[2] = {rows, 3};

    npyio_dtype_parse("<i4", 3, NULL, &i4);
    npyio_header_new(i4, 2, shape, 0, &h);
    npyio_dtype_unref(i4);
    return h;
}

static void row_bytes(int64_t i, unsigned char *out)
{
    int k;

    for (k = 0; k < 12; k++) /* three little-endian int32 equal to i */
        out[k] = (unsigned char)((uint32_t)i >> (8 * (k % 4)));
}

static int append_cmd(const char *path, long n)
{
    npyio_header *one = rows_header(1);
    npyio_reader *r = NULL;
    unsigned char row[12];
    int64_t next;
    long k;

    if (npyio_reader_open_path(path, NULL, &r) != NPYIO_OK)
        return fail(path);
    next = npyio_header_shape(npyio_reader_header(r))[0];
    npyio_reader_close(r);
    for (k = 0; n < 0 || k < n; k++, next++) {
        npyio_writer *w = NULL;

        row_bytes(next, row);
        if (npyio_writer_open_append_path(path, one, 0, NULL, &w) != NPYIO_OK ||
            npyio_writer_write(w, row, sizeof row) != NPYIO_OK ||
            npyio_writer_close(w) != NPYIO_OK)
            return fail(path);
    }
    npyio_header_free(one);
    return 0;
}

/* Append n rows of the file's dtype and row shape, every byte 0xA5;
 * `empty`: the rows must have 0 bytes. */
static int append_like_cmd(const char *path, long n, bool empty)
{
    npyio_reader *r = NULL;
    npyio_header *rows = NULL;
    npyio_writer *w = NULL;
    const npyio_header *h;
    int64_t shape[64];
    unsigned char *bytes;
    size_t len;
    int i, ndim;

    if (npyio_reader_open_path(path, NULL, &r) != NPYIO_OK)
        return fail(path);
    h = npyio_reader_header(r);
    ndim = npyio_header_ndim(h);
    for (i = 0; i < ndim; i++)
        shape[i] = npyio_header_shape(h)[i];
    shape[0] = n;
    if (npyio_header_new(npyio_header_dtype(h), ndim, shape, 0, &rows) !=
        NPYIO_OK)
        return fail("npyio_header_new");
    npyio_reader_close(r);
    len = (size_t)npyio_header_nbytes(rows);
    if (empty && len != 0)
        return fail("a row of more than 0 bytes");
    bytes = malloc(len + 1);
    if (bytes == NULL)
        return fail("malloc");
    memset(bytes, 0xA5, len);
    if (npyio_writer_open_append_path(path, rows, 0, NULL, &w) != NPYIO_OK ||
        npyio_writer_write(w, bytes, len) != NPYIO_OK ||
        npyio_writer_close(w) != NPYIO_OK)
        return fail(path);
    free(bytes);
    npyio_header_free(rows);
    return 0;
}

static int unknown_cmd(const char *path, long n)
{
    npyio_header *h = rows_header(0);
    npyio_writer *w = NULL;
    unsigned char row[12];
    long k;

    if (npyio_writer_create_path(path, h, NPYIO_WRITE_UNKNOWN_ROWS, NULL,
                               &w) != NPYIO_OK)
        return fail(path);
    for (k = 0; k < n; k++) {
        row_bytes(k, row);
        if (npyio_writer_write(w, row, sizeof row) != NPYIO_OK)
            return fail(path);
    }
    npyio_header_free(h);
    return npyio_writer_close(w) == NPYIO_OK ? 0 : fail(path);
}

static int fill_cmd(const char *path, long p)
{
    enum { BLOCK = 10 };
    unsigned char block[12 * BLOCK];
    npyio_writer *w = NULL;
    int64_t first, i;

    if (npyio_writer_open_in_place_path(path, 0, NULL, &w) != NPYIO_OK)
        return fail(path);
    for (first = p * BLOCK;; first += 4 * BLOCK) {
        npyio_status st;

        for (i = 0; i < BLOCK; i++)
            row_bytes(first + i, block + 12 * i);
        st = npyio_writer_write_rows(w, first, BLOCK, block, sizeof block);
        if (st == NPYIO_E_INVALID_ARG)
            break; /* past the end: done */
        if (st != NPYIO_OK)
            return fail(path);
    }
    return npyio_writer_close(w) == NPYIO_OK ? 0 : fail(path);
}

static int loadsave_cmd(const char *in, unsigned flags, const char *out)
{
    npyio_header *h = NULL;
    void *data = NULL;
    npyio_status st = npyio_load_with_header(in, flags, NULL, &h, &data);

    if (st == NPYIO_OK)
        st = npyio_save_with_header(out, h, data, (size_t)npyio_header_nbytes(h),
                        NPYIO_WRITE_NO_SYNC, NULL);
    npyio_header_free(h);
    npyio_free(data);
    return st == NPYIO_OK ? 0 : fail(in);
}

static int arrays_cmd(const char *in, const char *out)
{
    char type[4096];
    int64_t shape[64];
    int ndim = 0, i;
    void *data = NULL;
    size_t len = 0;
    npyio_status st = npyio_load(in, NULL, &data, &len, type,
                                       sizeof type, &ndim, shape, 64);

    if (st != NPYIO_OK)
        return fail(in);
    printf("%s\n", type);
    for (i = 0; i < ndim; i++)
        printf("%s%lld", i ? " " : "", (long long)shape[i]);
    printf("\n");
    st = npyio_save(out, type, ndim, shape, data, len,
                          NPYIO_WRITE_NO_SYNC, NULL);
    npyio_free(data);
    return st == NPYIO_OK ? 0 : fail(out);
}

/* Generations of an array of one value, saved or created and mapped. */
static int churn_cmd(const char *path, const char *how)
{
    enum { COUNT = 65536 };
    static unsigned char data[8 * COUNT];
    npyio_dtype *i8 = NULL;
    npyio_header *h = NULL;
    int64_t shape[1] = {COUNT}, g;
    int i;

    if (npyio_dtype_parse("<i8", 3, NULL, &i8) != NPYIO_OK ||
        npyio_header_new(i8, 1, shape, 0, &h) != NPYIO_OK)
        return fail("churn");
    for (g = 1;; g++) {
        for (i = 0; i < 8 * COUNT; i++)
            data[i] = (unsigned char)((uint64_t)g >> (8 * (i % 8)));
        if (strcmp(how, "save") == 0) {
            if (npyio_save_with_header(path, h, data, sizeof data, 0, NULL) != NPYIO_OK)
                return fail(path);
        } else {
            npyio_map *m = NULL;

            if (npyio_map_create_path(path, h, 0, NULL, &m) != NPYIO_OK)
                return fail(path);
            memcpy(npyio_map_data(m), data, sizeof data);
            if (npyio_map_close(m) != NPYIO_OK)
                return fail(path);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "read") == 0)
        return read_cmd(argv[2], (unsigned)atoi(argv[3]), argv[4]);
    if (argc == 4 && strcmp(argv[1], "copy") == 0)
        return copy_cmd(argv[2], argv[3]);
    if (argc == 5 && strcmp(argv[1], "create") == 0)
        return create_cmd(argv[2], atol(argv[3]), atol(argv[4]));
    if (argc == 3 && strcmp(argv[1], "negate") == 0)
        return negate_cmd(argv[2]);
    if (argc == 4 && strcmp(argv[1], "append") == 0)
        return append_cmd(argv[2], atol(argv[3]));
    if (argc == 3 && strcmp(argv[1], "append-loop") == 0)
        return append_cmd(argv[2], -1);
    if (argc == 4 && strcmp(argv[1], "append-empty") == 0)
        return append_like_cmd(argv[2], atol(argv[3]), true);
    if (argc == 4 && strcmp(argv[1], "append-filled") == 0)
        return append_like_cmd(argv[2], atol(argv[3]), false);
    if (argc == 4 && strcmp(argv[1], "unknown") == 0)
        return unknown_cmd(argv[2], atol(argv[3]));
    if (argc == 4 && strcmp(argv[1], "fill") == 0)
        return fill_cmd(argv[2], atol(argv[3]));
    if (argc == 5 && strcmp(argv[1], "loadsave") == 0)
        return loadsave_cmd(argv[2], (unsigned)atoi(argv[3]), argv[4]);
    if (argc == 4 && strcmp(argv[1], "arrays") == 0)
        return arrays_cmd(argv[2], argv[3]);
    if (argc == 4 && strcmp(argv[1], "churn") == 0)
        return churn_cmd(argv[2], argv[3]);
    fprintf(stderr, "usage: io_tool read FILE FLAGS OUT | copy IN OUT | "
                    "create OUT ROWS COLS | negate FILE\n");
    return 2;
}
