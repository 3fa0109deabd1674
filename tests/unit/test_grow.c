/*
 * test_grow.c - growing and sharing files: appending rows (in place, and
 * through a rewrite when the header has no room), writers of an unknown
 * row count, and positional row writes from several processes at once.
 * NumPy's view of the results is checked by tests/interop/grow_check.py.
 */
#define _GNU_SOURCE /* F_OFD_SETLK, flock(): the other kind of lock */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "testdata.h"
#include "platform.h"

static char path[64];

static int setup(void **state)
{
    (void)state;
    snprintf(path, sizeof path, "/tmp/npyio-grow-%ld.npy", (long)getpid());
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(path);
    return 0;
}

static npyio_header *header_of(const char *type, int64_t rows, int64_t cols)
{
    npyio_dtype *dt = NULL;
    npyio_header *h = NULL;
    int64_t shape[2] = {rows, cols};

    assert_ok(npyio_dtype_parse(type, strlen(type), NULL, &dt));
    assert_ok(npyio_header_new(dt, 2, shape, 0, &h));
    npyio_dtype_unref(dt);
    return h;
}

/* Load the file: rows of three native int32 each equal to their index. */
static int64_t check_rows(const char *file)
{
    npyio_header *h = NULL;
    int32_t *d = NULL;
    int64_t rows, i;

    assert_ok(npyio_load_with_header(file, NPYIO_READ_NATIVE, NULL, &h,
                                     (void **)&d));
    assert_int_equal(npyio_header_shape(h)[1], 3);
    rows = npyio_header_shape(h)[0];
    for (i = 0; i < 3 * rows; i++)
        if (d[i] != (int32_t)(i / 3))
            fail_msg("%s: element %lld is %d", file, (long long)i, d[i]);
    npyio_free(d);
    npyio_header_free(h);
    return rows;
}

static void append_rows(const char *file, int64_t first, int64_t n,
                        const npyio_options *o)
{
    npyio_header *rows = header_of("=i4", n, 3);
    npyio_writer *w = NULL;
    int32_t *d = malloc((size_t)(3 * n + 1) * sizeof *d);
    int64_t i;

    for (i = 0; i < 3 * n; i++)
        d[i] = (int32_t)(first + i / 3);
    assert_ok(npyio_writer_open_append_path(file, rows, NPYIO_WRITE_NO_SYNC, o,
                                            &w));
    assert_ok(npyio_writer_write(w, d, (size_t)(3 * n) * sizeof *d));
    assert_ok(npyio_writer_close(w));
    npyio_header_free(rows);
    free(d);
}

static void test_append_in_a_loop(void **state)
{
    npyio_options *o = NULL;
    size_t len_before, len_after;
    unsigned char *before, *after;
    int i;

    (void)state;
    assert_ok(npyio_options_new(&o));
    {
        npyio_header *h = header_of("=i4", 2, 3);
        static const int32_t first[6] = {0, 0, 0, 1, 1, 1};

        assert_ok(npyio_save_with_header(path, h, first, (size_t)npyio_header_nbytes(h), 0,
                             NULL));
        npyio_header_free(h);
    }
    before = read_data_file_abs(path, &len_before);
    for (i = 0; i < 1000; i++)
        append_rows(path, 2 + i, 1, o);
    assert_int_equal(check_rows(path), 1002);
    after = read_data_file_abs(path, &len_after);
    /* In place: the header kept its length, the old rows their bytes. */
    assert_int_equal(len_after, len_before + 1000 * 12);
    assert_memory_equal(after + 128, before + 128, len_before - 128);
    /* And the header is what np.save writes for the whole array. */
    {
        npyio_header *whole = header_of("=i4", 1002, 3);
        unsigned char want[128];

        assert_ok(npyio_header_emit(whole, 0, want, sizeof want, NULL));
        assert_memory_equal(after, want, 128);
        npyio_header_free(whole);
    }
    free(before);
    free(after);
    npyio_options_free(o);
}

/* Appending to a file without growth room rewrites it through a
 * temporary. */
static void test_append_without_room(void **state)
{
    (void)state;
    write_roomless_file(path, 9);
    assert_int_equal(check_rows(path), 9);
    append_rows(path, 9, 1, NULL); /* "(10, 3)" is one digit longer */
    assert_int_equal(check_rows(path), 10);
    append_rows(path, 10, 5, NULL); /* now in place: the rewrite left room */
    assert_int_equal(check_rows(path), 15);
}


/* Rows of another dtype or rank (the last call appended '=f4' rows to the
 * file's '=i4', both 2-d): the message names both dtypes (descr, as
 * np.save writes it) and both numbers of dimensions. */
static void check_refusal_names_both(void)
{
    const uint16_t one = 1;
    const char o = *(const unsigned char *)&one ? '<' : '>';
    npyio_header *flat = NULL;
    npyio_dtype *rec = NULL;
    npyio_writer *w = NULL;
    int64_t n = 3;
    char want[160];

    snprintf(want, sizeof want, "the rows' dtype or number of dimensions "
             "differs from the file's: the rows are '%cf4' with 2 dimensions,"
             " the file '%ci4' with 2", o, o);
    assert_error_contains(want);
    assert_ok(npyio_dtype_parse("[('a', '<i4')]", 14, NULL, &rec));
    assert_ok(npyio_header_new(rec, 1, &n, 0, &flat));
    assert_status(npyio_writer_open_append_path(path, flat, 0, NULL, &w),
                  NPYIO_E_INVALID_ARG);
    snprintf(want, sizeof want, "the rows are [('a', '<i4')] with 1 "
             "dimension, the file '%ci4' with 2", o);
    assert_error_contains(want);
    assert_null(w);
    npyio_dtype_unref(rec);
    npyio_header_free(flat);
}
static void test_append_refusals(void **state)
{
    npyio_header *h = header_of("=i4", 2, 3), *wrong_type, *wrong_cols;
    npyio_writer *w = NULL;
    size_t len_before, len_after;
    unsigned char *before, *after;
    static const int32_t data[6] = {0, 0, 0, 1, 1, 1};

    (void)state;
    assert_ok(npyio_save_with_header(path, h, data, (size_t)npyio_header_nbytes(h), 0,
                         NULL));
    before = read_data_file_abs(path, &len_before);
    wrong_type = header_of("=f4", 1, 3);
    wrong_cols = header_of("=i4", 1, 4);
    assert_status(npyio_writer_open_append_path(path, wrong_type, 0, NULL, &w),
                  NPYIO_E_INVALID_ARG);
    check_refusal_names_both();
    assert_null(w);
    assert_status(npyio_writer_open_append_path(path, wrong_cols, 0, NULL, &w),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("dimension 1 of the rows is 4, the file's is 3");
    /* Too few bytes at close: the header is not touched. */
    assert_ok(npyio_writer_open_append_path(path, h, 0, NULL, &w));
    assert_ok(npyio_writer_write(w, data, 12));
    assert_status(npyio_writer_close(w), NPYIO_E_TRUNCATED);
    assert_int_equal(check_rows(path), 2);
    after = read_data_file_abs(path, &len_after);
    assert_memory_equal(after, before, len_before); /* old part unchanged */
    free(before);
    free(after);
    npyio_header_free(h);
    npyio_header_free(wrong_type);
    npyio_header_free(wrong_cols);
}

static void test_unknown_row_count(void **state)
{
    npyio_header *h = header_of("=i4", 999, 3);
    npyio_writer *w = NULL;
    npyio_stream *s = NULL;
    int32_t row[3];
    int fds[2];
    int i;

    (void)state;
    assert_ok(npyio_writer_create_path(path, h, NPYIO_WRITE_UNKNOWN_ROWS, NULL,
                                     &w));
    for (i = 0; i < 37; i++) {
        row[0] = row[1] = row[2] = i;
        assert_ok(npyio_writer_write(w, row, sizeof row));
    }
    assert_ok(npyio_writer_close(w));
    assert_int_equal(check_rows(path), 37);
    /* Not a whole number of rows. */
    assert_ok(npyio_writer_create_path(path, h, NPYIO_WRITE_UNKNOWN_ROWS, NULL,
                                     &w));
    assert_ok(npyio_writer_write(w, row, 8));
    assert_status(npyio_writer_close(w), NPYIO_E_TRUNCATED);
    assert_error_contains("not a whole number of 12-byte rows");
    assert_int_equal(check_rows(path), 37); /* the old file stands */
    /* A pipe cannot have its header rewritten: refused at open. */
    assert_int_equal(pipe(fds), 0);
    assert_ok(npyio_stream_open_fd(fds[1], NULL, &s));
    assert_status(npyio_writer_create_stream(s, h, NPYIO_WRITE_UNKNOWN_ROWS, NULL,
                                           &w),
                  NPYIO_E_UNSUPPORTED);
    assert_error_contains("needs a stream that can seek");
    assert_ok(npyio_stream_close(s));
    close(fds[0]);
    close(fds[1]);
    npyio_header_free(h);
}

/* Four processes fill interleaved row ranges of one preallocated file. */
static void test_rows_from_four_processes(void **state)
{
    enum { ROWS = 4000, BLOCK = 100 };
    npyio_header *h = header_of("=i4", ROWS, 3);
    npyio_writer *w = NULL;
    int32_t *zeros = calloc(3 * ROWS, sizeof *zeros);
    int p, status;

    (void)state;
    assert_ok(npyio_save_with_header(path, h, zeros, (size_t)npyio_header_nbytes(h), 0,
                         NULL));
    for (p = 0; p < 4; p++) {
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0) {
            npyio_writer *mine = NULL;
            int32_t block[3 * BLOCK];
            int64_t first, i;

            if (npyio_writer_open_in_place_path(path, 0, NULL,
                                                &mine) != NPYIO_OK)
                _exit(1);
            for (first = p * BLOCK; first < ROWS; first += 4 * BLOCK) {
                for (i = 0; i < 3 * BLOCK; i++)
                    block[i] = (int32_t)(first + i / 3);
                if (npyio_writer_write_rows(mine, first, BLOCK, block,
                                            sizeof block) != NPYIO_OK)
                    _exit(2);
            }
            _exit(npyio_writer_close(mine) == NPYIO_OK ? 0 : 3);
        }
    }
    for (p = 0; p < 4; p++) {
        assert_true(wait(&status) > 0);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    assert_int_equal(check_rows(path), ROWS);
    /* A range past the end is refused; so is writing rows elsewhere. */
    assert_ok(npyio_writer_open_in_place_path(path, 0, NULL, &w));
    assert_status(npyio_writer_write_rows(w, ROWS - 1, 2, zeros, 24),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("not within the file's 4000 rows");
    assert_status(npyio_writer_write_rows(w, 0, 1, zeros, 8),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_writer_write(w, zeros, 12), NPYIO_E_STATE);
    assert_ok(npyio_writer_close(w));
    free(zeros);
    npyio_header_free(h);
}

/* Write a .npy of '<i4' by hand with fortran_order True: what npy-matlab
 * and NPZ.jl write for arrays whose C and Fortran layouts coincide. */
static void write_fortran_file(const char *file_path, const char *shape,
                               const int32_t *v, size_t n)
{
    char text[128];
    unsigned char head[128];
    size_t len;
    FILE *f;

    snprintf(text, sizeof text, "{'descr': '%ci4', 'fortran_order': True, "
             "'shape': %s, }", host_order(), shape);
    len = strlen(text);
    memset(head, ' ', sizeof head);
    memcpy(head, "\x93NUMPY\x01\x00", 8);
    head[8] = 118;
    head[9] = 0;
    memcpy(head + 10, text, len);
    head[127] = '\n';
    f = fopen(file_path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(head, 1, 128, f), 128);
    assert_int_equal(fwrite(v, sizeof *v, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* Rows appended to a fortran_order True file of shape (1, 3) or (0, 3) are
 * C-order data: the new header must say False, or NumPy reads the rows
 * transposed. */
static void test_append_to_degenerate_fortran(void **state)
{
    static const int32_t one[3] = {0, 0, 0};
    npyio_header *h = NULL;
    void *d = NULL;

    (void)state;
    write_fortran_file(path, "(1, 3)", one, 3);
    append_rows(path, 1, 2, NULL);
    assert_int_equal(check_rows(path), 3);
    assert_ok(npyio_load_with_header(path, 0, NULL, &h, &d));
    assert_int_equal(npyio_header_is_fortran_order(h), 0);
    npyio_header_free(h);
    npyio_free(d);
    write_fortran_file(path, "(0, 3)", one, 0);
    append_rows(path, 0, 4, NULL);
    assert_int_equal(check_rows(path), 4);
    assert_ok(npyio_load_with_header(path, 0, NULL, &h, &d));
    assert_int_equal(npyio_header_is_fortran_order(h), 0);
    npyio_header_free(h);
    npyio_free(d);
    /* Rows described in Fortran order are refused. */
    {
        npyio_dtype *dt = NULL;
        npyio_header *rows = NULL;
        npyio_writer *w = NULL;
        int64_t shape[2] = {2, 3};
        char type[4] = {host_order(), 'i', '4', 0};

        assert_ok(npyio_dtype_parse(type, 3, NULL, &dt));
        assert_ok(npyio_header_new(dt, 2, shape, 1, &rows));
        assert_status(npyio_writer_open_append_path(path, rows, 0, NULL, &w),
                      NPYIO_E_INVALID_ARG);
        assert_error_contains("Fortran order");
        npyio_header_free(rows);
        npyio_dtype_unref(dt);
    }
}

/* Rows of 0 bytes count: (3, 0) plus 5 rows is (8, 0). */
static void test_append_zero_byte_rows(void **state)
{
    npyio_header *h = header_of("<f8", 3, 0), *rows = header_of("<f8", 5, 0);
    npyio_header *back = NULL;
    npyio_writer *w = NULL;
    void *d = NULL;

    (void)state;
    assert_ok(npyio_save_with_header(path, h, "",
                                     (size_t)npyio_header_nbytes(h), 0, NULL));
    assert_ok(npyio_writer_open_append_path(path, rows, 0, NULL, &w));
    assert_ok(npyio_writer_write(w, "", 0));
    assert_ok(npyio_writer_close(w));
    assert_ok(npyio_load_with_header(path, 0, NULL, &back, &d));
    assert_int_equal(npyio_header_shape(back)[0], 8);
    assert_int_equal(npyio_header_shape(back)[1], 0);
    npyio_header_free(back);
    npyio_free(d);
    npyio_header_free(h);
    npyio_header_free(rows);
}

static int64_t file_size(const char *file_path)
{
    struct stat st;

    assert_int_equal(stat(file_path, &st), 0);
    return (int64_t)st.st_size;
}

/* A failed or abandoned append leaves the file as long as it was. */
static void test_failed_append_cuts_back(void **state)
{
    npyio_header *h = header_of("=i4", 2, 3), *rows = header_of("=i4", 3, 3);
    static const int32_t first[6] = {0, 0, 0, 1, 1, 1};
    static const int32_t data[9] = {2, 2, 2, 3, 3, 3, 4, 4, 4};
    npyio_writer *w = NULL;
    size_t len_before, len_after;
    unsigned char *before, *after;

    (void)state;
    assert_ok(npyio_save_with_header(path, h, first, (size_t)npyio_header_nbytes(h), 0,
                         NULL));
    before = read_data_file_abs(path, &len_before);
    /* Aborted after two of three rows. */
    assert_ok(npyio_writer_open_append_path(path, rows, 0, NULL, &w));
    assert_ok(npyio_writer_write(w, data, 24));
    assert_true(file_size(path) > (int64_t)len_before); /* they are there */
    npyio_writer_abort(w);
    assert_int_equal(file_size(path), (int64_t)len_before);
    /* Closed short of the rows announced. */
    assert_ok(npyio_writer_open_append_path(path, rows, 0, NULL, &w));
    assert_ok(npyio_writer_write(w, data, 12));
    assert_status(npyio_writer_close(w), NPYIO_E_TRUNCATED);
    after = read_data_file_abs(path, &len_after);
    assert_int_equal(len_after, len_before);
    assert_memory_equal(after, before, len_before);
    /* Failed midway: more bytes than announced is refused and the writer
     * stays failed; closing it cuts the file back too. */
    assert_ok(npyio_writer_open_append_path(path, rows, 0, NULL, &w));
    assert_ok(npyio_writer_write(w, data, 36));
    assert_status(npyio_writer_write(w, data, 4), NPYIO_E_INVALID_ARG);
    assert_status(npyio_writer_close(w), NPYIO_E_STATE);
    assert_int_equal(file_size(path), (int64_t)len_before);
    assert_int_equal(check_rows(path), 2);
    free(before);
    free(after);
    npyio_header_free(h);
    npyio_header_free(rows);
}

/* The file holds exactly these bytes. */
static void assert_file_is(const char *file_path, const unsigned char *bytes,
                           size_t len)
{
    size_t now_len = 0;
    unsigned char *now = read_data_file_abs(file_path, &now_len);

    assert_int_equal(now_len, len);
    assert_memory_equal(now, bytes, len);
    free(now);
}

/* A file with bytes after its data (np.load ignores them): the rows go
 * over them, and an append that fails or is aborted puts them back, the
 * file byte for byte as it was (found by fuzz_append: they were lost). */
static void test_failed_append_keeps_bytes_after_data(void **state)
{
    npyio_header *h = header_of("=i4", 2, 3), *rows = header_of("=i4", 5, 3);
    static const int32_t first[6] = {0, 0, 0, 1, 1, 1};
    int32_t data[15];
    unsigned char tail[40], *before;
    size_t len_before, i;
    npyio_writer *w = NULL;
    FILE *f;

    (void)state;
    for (i = 0; i < 15; i++)
        data[i] = (int32_t)(2 + i / 3);
    for (i = 0; i < sizeof tail; i++)
        tail[i] = (unsigned char)(0x30 + i);
    assert_ok(npyio_save_with_header(path, h, first, (size_t)npyio_header_nbytes(h), 0,
                         NULL));
    f = fopen(path, "ab");
    assert_non_null(f);
    assert_int_equal(fwrite(tail, 1, sizeof tail, f), sizeof tail);
    assert_int_equal(fclose(f), 0);
    before = read_data_file_abs(path, &len_before);
    /* Aborted inside the tail, aborted past it, closed short of the rows
     * announced (past it, in two writes). */
    assert_ok(npyio_writer_open_append_path(path, rows, 0, NULL, &w));
    assert_ok(npyio_writer_write(w, data, 24));
    npyio_writer_abort(w);
    assert_file_is(path, before, len_before);
    assert_ok(npyio_writer_open_append_path(path, rows, 0, NULL, &w));
    assert_ok(npyio_writer_write(w, data, 48));
    npyio_writer_abort(w);
    assert_file_is(path, before, len_before);
    assert_ok(npyio_writer_open_append_path(path, rows, 0, NULL, &w));
    assert_ok(npyio_writer_write(w, data, 12));
    assert_ok(npyio_writer_write(w, data + 3, 36));
    assert_status(npyio_writer_close(w), NPYIO_E_TRUNCATED);
    assert_file_is(path, before, len_before);
    /* A whole append: the rows over the tail, NumPy's view 7 rows. */
    assert_ok(npyio_writer_open_append_path(path, rows, 0, NULL, &w));
    assert_ok(npyio_writer_write(w, data, sizeof data));
    assert_ok(npyio_writer_close(w));
    assert_int_equal(check_rows(path), 7);
    free(before);
    npyio_header_free(h);
    npyio_header_free(rows);
}

/* The in-place header rewrite writes only the bytes that change: a byte
 * changed on disk before it (one NumPy reads the same: "descr" in double
 * quotes) survives the append, which a rewrite of the whole header would
 * have put back. */
static void test_header_rewrite_touches_only_the_shape(void **state)
{
    npyio_header *h = header_of("=i4", 9, 3);
    int32_t data[27];
    unsigned char head[128];
    npyio_writer *w = NULL;
    int fd, i;
    char *q;

    (void)state;
    for (i = 0; i < 27; i++)
        data[i] = i / 3;
    assert_ok(npyio_save_with_header(path, h, data, (size_t)npyio_header_nbytes(h), 0,
                         NULL));
    {
        npyio_header *rows = header_of("=i4", 1, 3);
        int32_t row[3] = {9, 9, 9};

        assert_ok(npyio_writer_open_append_path(path, rows, 0, NULL, &w));
        assert_ok(npyio_writer_write(w, row, sizeof row));
        npyio_header_free(rows);
    }
    fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, head, 128, 0), 128);
    q = strstr((char *)head + 10, "'descr'");
    assert_non_null(q);
    q[0] = q[6] = '"';
    assert_int_equal(pwrite(fd, head, 128, 0), 128);
    close(fd);
    assert_ok(npyio_writer_close(w));
    assert_int_equal(check_rows(path), 10);
    fd = open(path, O_RDONLY);
    assert_int_equal(pread(fd, head, 128, 0), 128);
    close(fd);
    assert_non_null(strstr((char *)head + 10, "\"descr\""));
    assert_non_null(strstr((char *)head + 10, "'shape': (10, 3), }"));
    npyio_header_free(h);
}

/* Exclusive appenders, shared in-place writers: a conflict fails at once
 * with NPYIO_E_LOCKED naming the holder, or waits when asked. */
static void test_append_locks(void **state)
{
    npyio_header *h = header_of("=i4", 2, 3), *rows = header_of("=i4", 1, 3);
    static const int32_t data[6] = {0, 0, 0, 1, 1, 1};
    npyio_writer *a = NULL, *b = NULL, *p1 = NULL, *p2 = NULL;

    (void)state;
    assert_ok(npyio_save_with_header(path, h, data, (size_t)npyio_header_nbytes(h), 0,
                         NULL));
    assert_ok(npyio_writer_open_append_path(path, rows, 0, NULL, &a));
    assert_status(npyio_writer_open_append_path(path, rows, 0, NULL, &b),
                  NPYIO_E_LOCKED);
    assert_error_contains("an appender holds an exclusive lock");
    assert_null(b);
    assert_status(npyio_writer_open_in_place_path(path, 0, NULL, &p1),
                  NPYIO_E_LOCKED);
    assert_error_contains("an appender holds an exclusive lock");
    npyio_writer_abort(a);
    assert_ok(npyio_writer_open_in_place_path(path, 0, NULL, &p1));
    assert_ok(npyio_writer_open_in_place_path(path, 0, NULL,
                                              &p2)); /* shared */
    assert_status(npyio_writer_open_append_path(path, rows, 0, NULL, &a),
                  NPYIO_E_LOCKED);
    assert_error_contains("in place hold a shared lock");
    assert_ok(npyio_writer_close(p1));
    assert_ok(npyio_writer_close(p2));
    assert_ok(npyio_writer_open_append_path(path, rows, 0, NULL,
                                            &a)); /* free now */
    {
        int32_t row[3] = {2, 2, 2};

        assert_ok(npyio_writer_write(a, row, sizeof row));
    }
    assert_ok(npyio_writer_close(a));
    assert_int_equal(check_rows(path), 3);
    npyio_header_free(h);
    npyio_header_free(rows);
}

/* Take an exclusive lock on fd of the kind the library does not take:
 * flock() where it takes OFD locks, an OFD lock in a portable build. */
static void lock_other_kind(int fd)
{
    struct flock l;

    if (!npyio__platform_capabilities().ofd_locks) {
        memset(&l, 0, sizeof l);
        l.l_type = F_WRLCK;
        l.l_whence = SEEK_SET;
        assert_int_equal(fcntl(fd, F_OFD_SETLK, &l), 0);
    } else {
        assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
    }
}

/* On Linux an OFD lock and a flock() lock do not see each other (npyio.h):
 * a portable build's appender and an ordinary one's do not exclude each
 * other. Held by hand here, the other kind lets the appender in. */
static void test_other_lock_kind_unseen(void **state)
{
    npyio_header *h = header_of("=i4", 2, 3), *rows = header_of("=i4", 1, 3);
    static const int32_t data[6] = {0, 0, 0, 1, 1, 1};
    npyio_writer *a = NULL;
    int fd;

    (void)state;
    assert_ok(npyio_save_with_header(path, h, data,
                                     (size_t)npyio_header_nbytes(h), 0, NULL));
    fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    lock_other_kind(fd);
    assert_ok(npyio_writer_open_append_path(path, rows, 0, NULL, &a));
    npyio_writer_abort(a);
    close(fd);
    npyio_header_free(h);
    npyio_header_free(rows);
}

/* With NPYIO_WRITE_WAIT_FOR_LOCK an appender waits for the holder. (The
 * child is forked before the parent opens its writer: a child forked
 * later would share the parent's open file description, and its lock.) */
static void test_append_waits_for_the_lock(void **state)
{
    npyio_header *h = header_of("=i4", 2, 3);
    static const int32_t data[6] = {0, 0, 0, 1, 1, 1};
    npyio_writer *p1 = NULL;
    int go[2], ready[2], status;
    char byte;
    pid_t pid;

    (void)state;
    assert_ok(npyio_save_with_header(path, h, data, (size_t)npyio_header_nbytes(h), 0,
                         NULL));
    assert_int_equal(pipe(go), 0);
    assert_int_equal(pipe(ready), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        npyio_options *o = NULL;
        npyio_header *rows = header_of("=i4", 1, 3);
        npyio_writer *w = NULL;
        int32_t row[3] = {2, 2, 2};

        if (read(go[0], &byte, 1) != 1)
            _exit(1);
        if (npyio_options_new(&o) != NPYIO_OK)
            _exit(1);
        /* Without waiting: refused while the parent holds the lock. */
        if (npyio_writer_open_append_path(path, rows, 0, NULL,
                                          &w) != NPYIO_E_LOCKED)
            _exit(2);
        if (write(ready[1], "r", 1) != 1)
            _exit(3);
        if (npyio_writer_open_append_path(path, rows, NPYIO_WRITE_WAIT_FOR_LOCK, o,
                                     &w) != NPYIO_OK ||
            npyio_writer_write(w, row, sizeof row) != NPYIO_OK ||
            npyio_writer_close(w) != NPYIO_OK)
            _exit(4);
        _exit(0);
    }
    assert_ok(npyio_writer_open_in_place_path(path, 0, NULL, &p1));
    assert_int_equal(write(go[1], "g", 1), 1);
    assert_int_equal(read(ready[0], &byte, 1), 1);
    {
        struct timespec pause = {0, 100 * 1000 * 1000};

        nanosleep(&pause, NULL); /* let the child block on the lock */
    }
    assert_int_equal(check_rows(path), 2); /* it has appended nothing */
    assert_ok(npyio_writer_close(p1));
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(check_rows(path), 3);
    close(go[0]);
    close(go[1]);
    close(ready[0]);
    close(ready[1]);
    npyio_header_free(h);
}

/* Two processes appending one row at a time to one file: with the lock
 * (and waiting) no row is lost or interleaved, also when the first append
 * must rewrite the file through a temporary (the other then finds the
 * path naming a new file and locks that one). */
static void test_two_appenders(void **state)
{
    enum { EACH = 150 };
    int p, status;

    (void)state;
    write_roomless_file(path, 9);
    for (p = 0; p < 2; p++) {
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0) {
            npyio_options *o = NULL;
            npyio_header *rows = header_of("=i4", 1, 3);
            int i;

            if (npyio_options_new(&o) != NPYIO_OK)
                _exit(1);
            for (i = 0; i < EACH; i++) {
                npyio_writer *w = NULL;
                int32_t row[3] = {100 * (p + 1), 100 * (p + 1),
                                  100 * (p + 1)};

                if (npyio_writer_open_append_path(path, rows,
                                             NPYIO_WRITE_WAIT_FOR_LOCK | NPYIO_WRITE_NO_SYNC, o, &w) != NPYIO_OK)
                    _exit(2);
                if (npyio_writer_write(w, row, sizeof row) != NPYIO_OK ||
                    npyio_writer_close(w) != NPYIO_OK)
                    _exit(3);
            }
            _exit(0);
        }
    }
    for (p = 0; p < 2; p++) {
        assert_true(wait(&status) > 0);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    {
        npyio_header *h = NULL;
        int32_t *d = NULL;
        int64_t i, count[2] = {0, 0};

        assert_ok(npyio_load_with_header(path, NPYIO_READ_NATIVE, NULL, &h,
                                         (void **)&d));
        assert_int_equal(npyio_header_shape(h)[0], 9 + 2 * EACH);
        for (i = 0; i < 9 + 2 * EACH; i++) {
            int32_t v = d[3 * i];

            if (d[3 * i + 1] != v || d[3 * i + 2] != v)
                fail_msg("row %lld is not whole: %d %d %d", (long long)i, v,
                         d[3 * i + 1], d[3 * i + 2]);
            if (i < 9)
                assert_int_equal(v, i);
            else if (v == 100 || v == 200)
                count[v / 100 - 1]++;
            else
                fail_msg("row %lld holds %d", (long long)i, v);
        }
        assert_int_equal(count[0], EACH);
        assert_int_equal(count[1], EACH);
        npyio_free(d);
        npyio_header_free(h);
    }
}

/* The header rewrite of an unknown-count writer fails: close returns that
 * I/O error, not NPYIO_E_STATE. */
typedef struct failing_sink {
    unsigned char bytes[4096];
    size_t len, pos;
    bool fail_seeks;
} failing_sink;

static int sink_write(void *user, const void *buf, size_t len, size_t *put)
{
    failing_sink *s = user;

    if (s->pos + len > sizeof s->bytes)
        return -1;
    memcpy(s->bytes + s->pos, buf, len);
    s->pos += len;
    if (s->pos > s->len)
        s->len = s->pos;
    *put = len;
    return 0;
}

static int sink_seek(void *user, int64_t offset, int whence, int64_t *pos)
{
    failing_sink *s = user;
    int64_t base = whence == NPYIO_SEEK_SET   ? 0
                   : whence == NPYIO_SEEK_CUR ? (int64_t)s->pos
                                              : (int64_t)s->len;

    if (s->fail_seeks && !(whence == NPYIO_SEEK_CUR && offset == 0))
        return -1;
    s->pos = (size_t)(base + offset);
    *pos = base + offset;
    return 0;
}

static void test_unknown_rows_close_reports_io_errors(void **state)
{
    npyio_stream_ops ops = {
        .size = sizeof ops, .write = sink_write, .seek = sink_seek};
    failing_sink sink;
    npyio_header *h = header_of("=i4", 0, 3);
    npyio_stream *s = NULL;
    npyio_writer *w = NULL;
    int32_t row[3] = {0, 0, 0};

    (void)state;
    memset(&sink, 0, sizeof sink);
    assert_ok(npyio_stream_open_ops(&ops, &sink, NULL, &s));
    assert_ok(npyio_writer_create_stream(s, h, NPYIO_WRITE_UNKNOWN_ROWS, NULL,
                                       &w));
    assert_ok(npyio_writer_write(w, row, sizeof row));
    sink.fail_seeks = true;
    assert_status(npyio_writer_close(w), NPYIO_E_IO);
    assert_ok(npyio_stream_close(s));
    npyio_header_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_append_in_a_loop),
        cmocka_unit_test(test_append_without_room),
        cmocka_unit_test(test_append_refusals),
        cmocka_unit_test(test_unknown_row_count),
        cmocka_unit_test(test_rows_from_four_processes),
        cmocka_unit_test(test_append_to_degenerate_fortran),
        cmocka_unit_test(test_append_zero_byte_rows),
        cmocka_unit_test(test_failed_append_cuts_back),
        cmocka_unit_test(test_header_rewrite_touches_only_the_shape),
        cmocka_unit_test(test_append_locks),
        cmocka_unit_test(test_other_lock_kind_unseen),
        cmocka_unit_test(test_append_waits_for_the_lock),
        cmocka_unit_test(test_two_appenders),
        cmocka_unit_test(test_failed_append_keeps_bytes_after_data),
        cmocka_unit_test(test_unknown_rows_close_reports_io_errors),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
