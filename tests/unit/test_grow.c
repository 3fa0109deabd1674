/*
 * test_grow.c - growing and sharing files: appending rows (in place, and
 * through a rewrite when the header has no room), writers of an unknown
 * row count, and positional row writes from several processes at once.
 * NumPy's view of the results is checked by tests/interop/grow_check.py.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "testdata.h"

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

    assert_ok(npyio_dtype_from_descr(type, strlen(type), NULL, &dt));
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

    assert_ok(npyio_load(file, NPYIO_READ_NATIVE, NULL, &h, (void **)&d));
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
    assert_ok(npyio_writer_open_append(file, rows, o, &w));
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
    assert_ok(npyio_options_set_flag(o, NPYIO_FLAG_DURABLE, 0)); /* speed */
    {
        npyio_header *h = header_of("=i4", 2, 3);
        static const int32_t first[6] = {0, 0, 0, 1, 1, 1};

        assert_ok(npyio_save(path, h, first, NULL));
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

/* A header without growth room (NumPy <= 1.23 padded to 16 or 64 with no
 * spare space): appending rewrites the file through a temporary. */
static void test_append_without_room(void **state)
{
    char text[80];
    unsigned char file[256];
    size_t n, i, at;
    int32_t v[27];

    (void)state;
    /* Native order, like the rows append_rows() adds. */
    snprintf(text, sizeof text, "{'descr': '%ci4', 'fortran_order': False, "
             "'shape': (9, 3), }", host_order());
    n = strlen(text);
    at = 10 + n + 1;
    /* The text and its newline, nothing more: no room for a digit. */
    memcpy(file, "\x93NUMPY\x01\x00", 8);
    file[8] = (unsigned char)(n + 1);
    file[9] = 0;
    memcpy(file + 10, text, n);
    file[10 + n] = '\n';
    for (i = 0; i < 27; i++)
        v[i] = (int32_t)(i / 3);
    memcpy(file + at, v, sizeof v);
    {
        FILE *f = fopen(path, "wb");

        assert_int_equal(fwrite(file, 1, at + sizeof v, f), at + sizeof v);
        fclose(f);
    }
    assert_int_equal(check_rows(path), 9);
    append_rows(path, 9, 1, NULL); /* "(10, 3)" is one digit longer */
    assert_int_equal(check_rows(path), 10);
    append_rows(path, 10, 5, NULL); /* now in place: the rewrite left room */
    assert_int_equal(check_rows(path), 15);
}

static void test_append_refusals(void **state)
{
    npyio_header *h = header_of("=i4", 2, 3), *wrong_type, *wrong_cols;
    npyio_writer *w = NULL;
    size_t len_before, len_after;
    unsigned char *before, *after;
    static const int32_t data[6] = {0, 0, 0, 1, 1, 1};

    (void)state;
    assert_ok(npyio_save(path, h, data, NULL));
    before = read_data_file_abs(path, &len_before);
    wrong_type = header_of("=f4", 1, 3);
    wrong_cols = header_of("=i4", 1, 4);
    assert_status(npyio_writer_open_append(path, wrong_type, NULL, &w),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("dtype or number of dimensions differs");
    assert_null(w);
    assert_status(npyio_writer_open_append(path, wrong_cols, NULL, &w),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("dimension 1 of the rows is 4, the file's is 3");
    /* Too few bytes at close: the header is not touched. */
    assert_ok(npyio_writer_open_append(path, h, NULL, &w));
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
    assert_ok(npyio_writer_open_path_rows(path, h, NULL, &w));
    for (i = 0; i < 37; i++) {
        row[0] = row[1] = row[2] = i;
        assert_ok(npyio_writer_write(w, row, sizeof row));
    }
    assert_ok(npyio_writer_close(w));
    assert_int_equal(check_rows(path), 37);
    /* Not a whole number of rows. */
    assert_ok(npyio_writer_open_path_rows(path, h, NULL, &w));
    assert_ok(npyio_writer_write(w, row, 8));
    assert_status(npyio_writer_close(w), NPYIO_E_TRUNCATED);
    assert_error_contains("not a whole number of 12-byte rows");
    assert_int_equal(check_rows(path), 37); /* the old file stands */
    /* A pipe cannot have its header rewritten: refused at open. */
    assert_int_equal(pipe(fds), 0);
    assert_ok(npyio_stream_open_fd(fds[1], NULL, &s));
    assert_status(npyio_writer_open_stream_rows(s, h, NULL, &w),
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
    assert_ok(npyio_save(path, h, zeros, NULL));
    for (p = 0; p < 4; p++) {
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0) {
            npyio_writer *mine = NULL;
            int32_t block[3 * BLOCK];
            int64_t first, i;

            if (npyio_writer_open_in_place(path, NULL, &mine) != NPYIO_OK)
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
    assert_ok(npyio_writer_open_in_place(path, NULL, &w));
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_append_in_a_loop),
        cmocka_unit_test(test_append_without_room),
        cmocka_unit_test(test_append_refusals),
        cmocka_unit_test(test_unknown_row_count),
        cmocka_unit_test(test_rows_from_four_processes),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
