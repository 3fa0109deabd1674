/*
 * test_chunks.c - reading large arrays in pieces, against NumPy's bytes
 * (tests/data/arrays): chunked reads of 1 element, odd primes and more
 * than the array, and row ranges, through every back end and flag
 * combination, must give exactly the corresponding slices of what NumPy
 * computed; memory maps must show the file's bytes and write through.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "testdata.h"
#include "arrays.h"
#include "hostile.h"
#include "header.h"

/* ---- streams ---------------------------------------------------------------- */


typedef struct source {
    hostile h;
    npyio_stream *stream;
    npyio_reader *reader;
} source;

static void open_source(source *src, const unsigned char *file, size_t len,
                        bool seekable)
{
    assert_ok(hostile_open(&src->h, file, len, seekable, &src->stream));
    assert_ok(npyio_reader_open_stream(src->stream, NULL, &src->reader));
}

static void close_source(source *src)
{
    assert_ok(npyio_reader_close(src->reader));
    assert_ok(npyio_stream_close(src->stream));
}

/* ---- expectations -------------------------------------------------------------- */

typedef struct array_case {
    const tsv_row *row;
    unsigned char *file;
    size_t len;
    npyio_header *header;
    size_t nbytes, itemsize, row_bytes;
    int64_t rows;
    bool fortran_data;
} array_case;

/* NumPy's bytes for a whole read with these flags on this host. */
static unsigned char *expected(const array_case *a, unsigned flags)
{
    size_t n;
    unsigned char *copy = array_expected(a->row->field[A_NAME], a->file,
                                         a->header->data_offset, a->nbytes,
                                         flags, &n);

    assert_int_equal(n, a->nbytes);
    return copy;
}

/* Rows [first, first + count) as the reader must give them: a slice of the
 * C-order bytes, or for Fortran data kept in Fortran order, the runs of
 * each column one after the other. */
static unsigned char *expected_rows(const array_case *a, unsigned flags,
                                    int64_t first, int64_t count,
                                    size_t *len)
{
    unsigned char *full = expected(a, flags);
    unsigned char *out = malloc((size_t)count * a->row_bytes + 1);
    size_t run = (size_t)count * a->itemsize, m, columns;

    *len = (size_t)count * a->row_bytes;
    if (!a->fortran_data || (flags & NPYIO_READ_C_ORDER)) {
        memcpy(out, full + (size_t)first * a->row_bytes, *len);
    } else {
        columns = a->itemsize ? a->row_bytes / a->itemsize : 0;
        for (m = 0; m < columns; m++)
            memcpy(out + m * run,
                   full + (m * (size_t)a->rows + (size_t)first) * a->itemsize,
                   run);
    }
    free(full);
    return out;
}

static bool load_case(const tsv_row *r, array_case *a)
{
    int i;

    if (strcmp(r->field[A_OBJECT], "0") != 0)
        return false;
    a->row = r;
    a->file = array_file(r->field[A_NAME], ".npy", &a->len);
    assert_ok(npyio_header_parse(a->file, a->len, NULL, &a->header, NULL));
    a->nbytes = (size_t)a->header->nbytes;
    a->itemsize = a->header->dtype->itemsize;
    a->rows = a->header->ndim > 0 ? a->header->shape[0] : 1;
    a->row_bytes = a->itemsize;
    for (i = 1; i < a->header->ndim; i++)
        a->row_bytes *= (size_t)a->header->shape[i];
    a->fortran_data = npyio__header_fortran_data(a->header);
    return true;
}

static void free_case(array_case *a)
{
    npyio_header_free(a->header);
    free(a->file);
}

/* ---- chunks ----------------------------------------------------------------------- */

static void check_chunks(const array_case *a, bool seekable, unsigned flags,
                         size_t cap)
{
    bool by_rows = (flags & NPYIO_READ_C_ORDER) && a->fortran_data;
    unsigned char *want = expected(a, flags);
    unsigned char *all = malloc(a->nbytes + 1), *buf = malloc(cap + 1);
    size_t have = 0, got = 0;
    source src;
    npyio_status st;

    open_source(&src, a->file, a->len, seekable);
    if (by_rows && !seekable) {
        assert_status(npyio_reader_read_chunk(src.reader, buf, cap, flags,
                                              &got),
                      NPYIO_E_UNSUPPORTED);
        assert_error_contains("needs a stream that can seek");
    } else {
        while ((st = npyio_reader_read_chunk(src.reader, buf, cap, flags,
                                             &got)) == NPYIO_OK) {
            size_t fit = cap / a->itemsize * a->itemsize;

            /* As many whole elements as fit (in C order of Fortran data
             * too: chunks may start and end inside rows). */
            assert_int_equal(got, fit < a->nbytes - have ? fit
                                                         : a->nbytes - have);
            memcpy(all + have, buf, got);
            have += got;
        }
        assert_int_equal(st, NPYIO_END);
        assert_int_equal(got, 0);
        assert_int_equal(have, a->nbytes);
        if (memcmp(all, want, a->nbytes) != 0)
            fail_msg("%s: chunks of %zu (flags %u, %s) differ from NumPy's",
                     a->row->field[A_NAME], cap, flags,
                     seekable ? "seekable" : "not seekable");
    }
    close_source(&src);
    free(want);
    free(all);
    free(buf);
}

static void test_chunked_reads(void **state)
{
    tsv_table t;
    size_t i;

    (void)state;
    arrays_manifest(&t);
    for (i = 0; i < t.count; i++) {
        array_case a;
        unsigned flags;
        int seekable;

        if (!load_case(&t.rows[i], &a))
            continue;
        print_message("%s\n", t.rows[i].field[A_NAME]);
        for (flags = 0; flags < 4; flags++)
            for (seekable = 0; seekable < 2; seekable++) {
                size_t unit = (flags & NPYIO_READ_C_ORDER) && a.fortran_data
                                  ? a.row_bytes
                                  : a.itemsize;

                if (unit == 0 || a.nbytes == 0)
                    continue;
                check_chunks(&a, seekable, flags, unit);       /* 1 */
                check_chunks(&a, seekable, flags, 7 * unit);   /* a prime */
                check_chunks(&a, seekable, flags, 13 * unit + unit / 2);
                check_chunks(&a, seekable, flags, a.nbytes + 100); /* more */
                /* Chunks that start and end inside rows: of every NumPy
                 * array in C order, checked against NumPy's bytes. */
                if (unit != a.itemsize && a.itemsize > 0) {
                    check_chunks(&a, seekable, flags, a.itemsize);
                    check_chunks(&a, seekable, flags, 3 * a.itemsize + 1);
                    check_chunks(&a, seekable, flags,
                                 unit + 2 * a.itemsize);
                }
            }
        free_case(&a);
    }
    tsv_free(&t);
}

/* ---- rows ------------------------------------------------------------------------------ */

static void check_rows(const array_case *a, bool seekable, unsigned flags,
                       int64_t first, int64_t count)
{
    size_t want_len;
    unsigned char *want = expected_rows(a, flags, first, count, &want_len);
    unsigned char *got = malloc(want_len + 2);
    source src;

    open_source(&src, a->file, a->len, seekable);
    memset(got, 0xEE, want_len + 2);
    assert_status(npyio_reader_read_rows(src.reader, first, count, got,
                                         want_len ? want_len - 1 : 0, flags),
                  want_len ? NPYIO_E_BUFFER_TOO_SMALL : NPYIO_OK);
    assert_ok(npyio_reader_read_rows(src.reader, first, count, got,
                                     want_len + 1, flags));
    if (memcmp(got, want, want_len) != 0)
        fail_msg("%s: rows [%lld, %lld) (flags %u, %s) differ from NumPy's",
                 a->row->field[A_NAME], (long long)first,
                 (long long)(first + count), flags,
                 seekable ? "seekable" : "not seekable");
    assert_int_equal(got[want_len], 0xEE);
    close_source(&src);
    free(want);
    free(got);
}

static void test_row_ranges(void **state)
{
    tsv_table t;
    size_t i;

    (void)state;
    arrays_manifest(&t);
    for (i = 0; i < t.count; i++) {
        array_case a;
        unsigned flags;
        int seekable;

        if (!load_case(&t.rows[i], &a))
            continue;
        if (a.header->ndim == 0 || a.nbytes == 0) {
            free_case(&a);
            continue;
        }
        for (flags = 0; flags < 4; flags++)
            for (seekable = 0; seekable < 2; seekable++) {
                int64_t n = a.rows;

                check_rows(&a, seekable, flags, 0, n);
                check_rows(&a, seekable, flags, n - 1, 1);
                check_rows(&a, seekable, flags, n / 2, 0);
                if (n >= 4)
                    check_rows(&a, seekable, flags, 1, n - 3);
            }
        free_case(&a);
    }
    tsv_free(&t);
}

static void test_row_errors(void **state)
{
    size_t len;
    unsigned char *file = array_file("f8be_3x5_c", ".npy", &len);
    unsigned char buf[4096];
    source src;
    npyio_reader *r;

    (void)state;
    open_source(&src, file, len, false);
    r = src.reader;
    assert_status(npyio_reader_read_rows(r, 2, 2, buf, sizeof buf, 0),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("rows [2, 4) are not within the 3 rows");
    assert_status(npyio_reader_read_rows(r, -1, 1, buf, sizeof buf, 0),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_reader_read_rows(r, 0, INT64_MAX, buf, sizeof buf, 0),
                  NPYIO_E_INVALID_ARG);
    assert_ok(npyio_reader_read_rows(r, 1, 1, buf, sizeof buf, 0));
    /* A stream that cannot seek cannot go back. */
    assert_status(npyio_reader_read_rows(r, 0, 1, buf, sizeof buf, 0),
                  NPYIO_E_UNSUPPORTED);
    assert_error_contains("cannot seek");
    assert_status(npyio_reader_read_rows(r, 0, 1, buf, sizeof buf, 8),
                  NPYIO_E_INVALID_ARG);
    close_source(&src);
    free(file);
}

/* ---- maps --------------------------------------------------------------------------------- */

static void test_maps(void **state)
{
    tsv_table t;
    size_t i;

    (void)state;
    arrays_manifest(&t);
    for (i = 0; i < t.count; i++) {
        const tsv_row *r = &t.rows[i];
        char path[512];
        size_t len;
        unsigned char *file = array_file(r->field[A_NAME], ".npy", &len);
        size_t offset = (size_t)atoll(r->field[A_OFFSET]);
        npyio_map *m = NULL;

        array_path(path, sizeof path, r->field[A_NAME]);
        if (strcmp(r->field[A_OBJECT], "0") != 0) {
            assert_status(npyio_map_open_path(path, 0, NULL, &m),
                          NPYIO_E_UNSUPPORTED);
            assert_error_contains("cannot be mapped");
            assert_null(m);
        } else {
            assert_ok(npyio_map_open_path(path, 0, NULL, &m));
            assert_memory_equal(npyio_map_data(m), file + offset,
                                len - offset);
            assert_true(npyio_map_is_aligned(m)); /* data at a multiple of 64 */
            assert_int_equal(npyio_header_nbytes(npyio_map_header(m)),
                             len - offset);
            assert_ok(npyio_map_close(m));
        }
        free(file);
    }
    tsv_free(&t);
}

static void test_map_write_and_create(void **state)
{
    char path[64];
    size_t len;
    unsigned char *file = array_file("f8be_3x5_c", ".npy", &len), *back;
    npyio_header *h = NULL, *made = NULL;
    npyio_map *m = NULL;
    FILE *f;
    int64_t shape[2] = {1000, 1000};
    npyio_dtype *f8 = NULL;
    double *d;
    size_t k;

    (void)state;
    array_scratch_path(path, sizeof path, "map");
    f = fopen(path, "wb");
    assert_int_equal(fwrite(file, 1, len, f), len);
    fclose(f);
    assert_ok(npyio_map_open_path(path, NPYIO_MAP_WRITE, NULL, &m));
    memset(npyio_map_data(m), 0x42, 8);
    assert_ok(npyio_map_close(m));
    back = read_data_file_abs(path, &len);
    assert_int_equal(back[128], 0x42);
    assert_int_equal(back[135], 0x42);
    assert_memory_equal(back + 136, file + 136, len - 136);
    free(back);
    /* A truncated file is refused before it could fault. */
    assert_int_equal(truncate(path, (off_t)len - 1), 0);
    assert_status(npyio_map_open_path(path, 0, NULL, &m),
                  NPYIO_E_TRUNCATED);
    /* Create and map (1000, 1000), fill, read back with the reader. */
    assert_ok(npyio_dtype_parse("=f8", 3, NULL, &f8));
    assert_ok(npyio_header_new(f8, 2, shape, 0, &made));
    npyio_dtype_unref(f8);
    assert_ok(npyio_map_create_path(path, made, 0, NULL, &m));
    d = npyio_map_data(m);
    assert_int_equal(d[999999], 0.0); /* sized, reads as zeros */
    for (k = 0; k < 1000000; k++)
        d[k] = (double)k;
    assert_ok(npyio_map_close(m));
    assert_ok(npyio_load_with_header(path, 0, NULL, &h, (void **)&d));
    assert_int_equal(npyio_header_count(h), 1000000);
    assert_true(d[123456] == 123456.0);
    npyio_free(d);
    npyio_header_free(h);
    npyio_header_free(made);
    unlink(path);
    free(file);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chunked_reads),
        cmocka_unit_test(test_row_ranges),
        cmocka_unit_test(test_row_errors),
        cmocka_unit_test(test_maps),
        cmocka_unit_test(test_map_write_and_create),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
