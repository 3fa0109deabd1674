/*
 * test_window.c - the stream seam that archives build on: window streams
 * (a range of a parent, read with pread, from several threads at once),
 * and a back end's own status and message reaching the caller of a
 * public function unchanged, and the read-ahead of files opened for
 * reading.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "testdata.h"
#include "stream.h"

static const char digits[] = "0123456789abcdefghij";

static void test_window_reads_its_range_only(void **state)
{
    npyio_stream *parent = NULL, *w = NULL;
    char buf[32];
    size_t got = 0;
    int64_t pos = -1;

    (void)state;
    assert_ok(npyio_stream_open_memory(digits, 20, NULL, &parent));
    assert_ok(npyio__stream_open_window(parent, 5, 10, NULL, &w));
    assert_ok(npyio__stream_read(w, buf, sizeof buf, &got, "test"));
    assert_int_equal(got, 10);
    assert_memory_equal(buf, "56789abcde", 10);
    assert_ok(npyio__stream_read(w, buf, sizeof buf, &got, "test"));
    assert_int_equal(got, 0); /* the window's end, not the parent's */
    assert_ok(npyio__stream_seek(w, 0, NPYIO_SEEK_END, &pos));
    assert_int_equal(pos, 10);
    assert_ok(npyio__stream_seek(w, 3, NPYIO_SEEK_SET, NULL));
    assert_ok(npyio__stream_read(w, buf, 4, &got, "test"));
    assert_memory_equal(buf, "89ab", 4);
    assert_ok(npyio__stream_pread(w, buf, 4, 8, &got, "test"));
    assert_int_equal(got, 2);
    assert_memory_equal(buf, "de", 2);
    assert_status(npyio__stream_seek(w, -1, NPYIO_SEEK_SET, NULL),
                  NPYIO_E_IO);
    assert_status(npyio__stream_write(w, "x", 1, "test"),
                  NPYIO_E_INVALID_ARG);
    /* The parent's own position never moved. */
    assert_ok(npyio__stream_read(parent, buf, 3, &got, "test"));
    assert_memory_equal(buf, "012", 3);
    /* A window of a window. */
    {
        npyio_stream *inner = NULL;

        assert_ok(npyio__stream_open_window(w, 2, 3, NULL, &inner));
        assert_ok(npyio__stream_read(inner, buf, sizeof buf, &got, "test"));
        assert_int_equal(got, 3);
        assert_memory_equal(buf, "789", 3);
        assert_ok(npyio_stream_close(inner));
    }
    assert_ok(npyio_stream_close(w));
    assert_ok(npyio_stream_close(parent));
}

static void test_window_past_the_parent_ends_early(void **state)
{
    npyio_stream *parent = NULL, *w = NULL;
    char buf[32];
    size_t got = 0;

    (void)state;
    assert_ok(npyio_stream_open_memory(digits, 20, NULL, &parent));
    assert_ok(npyio__stream_open_window(parent, 15, 100, NULL, &w));
    assert_ok(npyio__stream_read(w, buf, sizeof buf, &got, "test"));
    assert_int_equal(got, 5);
    assert_memory_equal(buf, "fghij", 5);
    assert_ok(npyio_stream_close(w));
    assert_ok(npyio__stream_open_window(parent, 40, 4, NULL, &w));
    assert_ok(npyio__stream_read(w, buf, sizeof buf, &got, "test"));
    assert_int_equal(got, 0);
    assert_ok(npyio_stream_close(w));
    assert_ok(npyio_stream_close(parent));
}

static int read_nothing(void *user, void *buf, size_t cap, size_t *got)
{
    (void)user, (void)buf, (void)cap;
    *got = 0;
    return 0;
}

static void test_window_needs_positional_reads(void **state)
{
    npyio_stream_ops ops = {sizeof ops, read_nothing, NULL, NULL, NULL};
    npyio_stream *parent = NULL, *w = NULL;
    int fds[2];

    (void)state;
    assert_ok(npyio_stream_open_ops(&ops, NULL, NULL, &parent));
    assert_status(npyio__stream_open_window(parent, 0, 1, NULL, &w),
                  NPYIO_E_UNSUPPORTED);
    assert_error_contains("callbacks stream cannot be read at an offset");
    assert_null(w);
    assert_ok(npyio_stream_close(parent));
    assert_int_equal(pipe(fds), 0);
    assert_ok(npyio_stream_open_fd(fds[0], NULL, &parent));
    assert_status(npyio__stream_open_window(parent, 0, 1, NULL, &w),
                  NPYIO_E_UNSUPPORTED);
    assert_ok(npyio_stream_close(parent));
    close(fds[0]);
    close(fds[1]);
    assert_ok(npyio_stream_open_memory(digits, 20, NULL, &parent));
    assert_status(npyio__stream_open_window(parent, -1, 1, NULL, &w),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio__stream_open_window(parent, INT64_MAX, 2, NULL, &w),
                  NPYIO_E_INVALID_ARG);
    assert_ok(npyio_stream_close(parent));
}

/* ---- several threads, one descriptor ------------------------------------ */

#define FILE_BYTES (4u << 20)
#define THREADS 4

static unsigned char pattern_byte(size_t i)
{
    return (unsigned char)((i * 2654435761u) >> 13);
}

struct reader_job {
    npyio_stream *parent;
    int64_t offset, length;
    int failures;
};

/* Reads its window in odd-sized pieces, many times over, and counts the
 * bytes that differ from the file's. */
static void *read_window(void *arg)
{
    struct reader_job *job = arg;
    unsigned char buf[4099];
    int round;

    for (round = 0; round < 8; round++) {
        npyio_stream *w = NULL;
        int64_t at = 0;
        size_t got = 0, i;

        if (npyio__stream_open_window(job->parent, job->offset, job->length,
                                      NULL, &w) != NPYIO_OK) {
            job->failures++;
            return NULL;
        }
        do {
            if (npyio__stream_read(w, buf, sizeof buf, &got, "test") !=
                NPYIO_OK) {
                job->failures++;
                break;
            }
            for (i = 0; i < got; i++)
                job->failures += buf[i] !=
                                 pattern_byte((size_t)(job->offset + at) + i);
            at += (int64_t)got;
        } while (got > 0);
        job->failures += at != job->length;
        npyio_stream_close(w);
    }
    return NULL;
}

static void test_windows_of_one_file_from_threads(void **state)
{
    char path[] = "/tmp/npyio-test-window-XXXXXX";
    unsigned char *bytes = malloc(FILE_BYTES);
    struct reader_job jobs[THREADS];
    pthread_t threads[THREADS];
    npyio_stream *parent = NULL;
    int64_t pos = -1;
    size_t i;
    int fd;

    (void)state;
    assert_non_null(bytes);
    for (i = 0; i < FILE_BYTES; i++)
        bytes[i] = pattern_byte(i);
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, bytes, FILE_BYTES), (ssize_t)FILE_BYTES);
    assert_int_equal(lseek(fd, 100, SEEK_SET), 100);
    assert_ok(npyio_stream_open_fd(fd, NULL, &parent));
    for (i = 0; i < THREADS; i++) {
        /* Overlapping ranges at odd offsets. */
        jobs[i].parent = parent;
        jobs[i].offset = (int64_t)(i * (FILE_BYTES / 5) + 7 * i);
        jobs[i].length = (int64_t)(FILE_BYTES / 3);
        jobs[i].failures = 0;
        assert_int_equal(pthread_create(&threads[i], NULL, read_window,
                                        &jobs[i]), 0);
    }
    for (i = 0; i < THREADS; i++) {
        assert_int_equal(pthread_join(threads[i], NULL), 0);
        assert_int_equal(jobs[i].failures, 0);
    }
    /* The descriptor's offset is where the caller left it. */
    assert_ok(npyio__stream_seek(parent, 0, NPYIO_SEEK_CUR, &pos));
    assert_int_equal(pos, 100);
    assert_ok(npyio_stream_close(parent));
    close(fd);
    unlink(path);
    free(bytes);
}

/* ---- read-ahead of files opened for reading -------------------------------- */

/* A file opened from a path for reading is read ahead in 4 KiB blocks;
 * reads, seeks within and beyond the block, the position and the length
 * must all be as without it. */
static void test_read_ahead_is_invisible(void **state)
{
    char path[] = "/tmp/npyio-test-ahead-XXXXXX";
    unsigned char *bytes = malloc(10000), buf[6000];
    npyio_stream *s = NULL;
    uint64_t left = 0;
    int64_t pos = -1;
    size_t got = 0, i;
    int fd;

    (void)state;
    for (i = 0; i < 10000; i++)
        bytes[i] = pattern_byte(i);
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, bytes, 10000), 10000);
    close(fd);
    assert_ok(npyio_stream_open_path(path, NPYIO_STREAM_READ, NULL, &s));
    assert_ok(npyio__stream_read(s, buf, 8, &got, "test"));
    assert_memory_equal(buf, bytes, 8);
    assert_ok(npyio__stream_remaining(s, &left));
    assert_int_equal(left, 10000 - 8);
    assert_ok(npyio__stream_tell(s, &pos));
    assert_int_equal(pos, 8);
    /* Back within the block, forward past it, across its end. */
    assert_ok(npyio__stream_seek(s, 3, NPYIO_SEEK_SET, NULL));
    assert_ok(npyio__stream_read(s, buf, 5, &got, "test"));
    assert_memory_equal(buf, bytes + 3, 5);
    assert_ok(npyio__stream_seek(s, 4090, NPYIO_SEEK_SET, NULL));
    assert_ok(npyio__stream_read(s, buf, 20, &got, "test"));
    assert_int_equal(got, 20);
    assert_memory_equal(buf, bytes + 4090, 20);
    assert_ok(npyio__stream_seek(s, 100, NPYIO_SEEK_CUR, &pos));
    assert_int_equal(pos, 4210);
    assert_ok(npyio__stream_read(s, buf, 6000, &got, "test"));
    assert_int_equal(got, 5790); /* short only at the end */
    assert_memory_equal(buf, bytes + 4210, 5790);
    assert_ok(npyio__stream_seek(s, -10, NPYIO_SEEK_END, &pos));
    assert_int_equal(pos, 9990);
    assert_ok(npyio__stream_read(s, buf, 100, &got, "test"));
    assert_int_equal(got, 10);
    assert_memory_equal(buf, bytes + 9990, 10);
    assert_ok(npyio__stream_remaining(s, &left));
    assert_int_equal(left, 0);
    /* Positional reads see the file, whatever was read ahead. */
    assert_ok(npyio__stream_pread(s, buf, 16, 5000, &got, "test"));
    assert_memory_equal(buf, bytes + 5000, 16);
    assert_ok(npyio_stream_close(s));
    unlink(path);
    free(bytes);
}

/* A small file is read in one block, whose short end tells the length:
 * a data section cut short is still found at open, and a file that grew
 * since another open is seen whole. */
static void test_read_ahead_knows_short_files(void **state)
{
    char path[] = "/tmp/npyio-test-short-XXXXXX";
    float values[16] = {0};
    int64_t n = 16;
    npyio_header *h = NULL;
    void *data = NULL;
    unsigned char *file;
    size_t len;
    int fd = mkstemp(path);

    (void)state;
    assert_true(fd >= 0);
    close(fd);
    assert_ok(npyio_save(path, "=f4", 1, &n, values, sizeof values,
                               NPYIO_WRITE_NO_SYNC, NULL));
    file = read_data_file_abs(path, &len);
    assert_int_equal(len, 192);
    assert_int_equal(truncate(path, 150), 0);
    assert_status(npyio_load_with_header(path, 0, NULL, &h, &data), NPYIO_E_TRUNCATED);
    assert_error_contains("the data section is 22 bytes, but the header "
                          "promises 64");
    assert_int_equal(truncate(path, 60), 0);
    assert_status(npyio_load_with_header(path, 0, NULL, &h, &data), NPYIO_E_TRUNCATED);
    assert_error_contains("the file ends after 60 bytes, inside its 128-byte "
                          "header");
    fd = open(path, O_WRONLY);
    assert_int_equal(pwrite(fd, file, len, 0), (ssize_t)len);
    close(fd);
    assert_ok(npyio_load_with_header(path, 0, NULL, &h, &data));
    assert_memory_equal(data, values, sizeof values);
    npyio_free(data);
    npyio_header_free(h);
    unlink(path);
    free(file);
}

/* ---- a back end's own status ---------------------------------------------- */

/* A back end standing for an archive member: serves its bytes, then
 * finds that their checksum is wrong. */
typedef struct checked_state {
    const unsigned char *bytes;
    size_t len, pos;
} checked_state;

static npyio_status checked_read(void *state, void *buf, size_t cap,
                                 size_t *got)
{
    checked_state *c = state;
    size_t n = cap < c->len - c->pos ? cap : c->len - c->pos;

    if (n == 0 && cap > 0)
        return npyio__fail(NPYIO_E_CHECKSUM, "member x.npy: CRC-32 "
                           "0x1234abcd, the directory says 0x00000000");
    memcpy(buf, c->bytes + c->pos, n);
    c->pos += n;
    *got = n;
    return NPYIO_OK;
}

static const npyio__stream_backend checked_backend = {
    .name = "checked", .read = checked_read};

static void test_backend_status_reaches_the_caller(void **state)
{
    unsigned char *file;
    size_t len;
    npyio_stream *s = NULL;
    checked_state *c = NULL;
    npyio_reader *r = NULL;
    void *data = NULL;
    size_t got = 0;

    (void)state;
    file = read_data_file("sample.npy", &len);
    /* All but the last byte: the reader asks for more, and the back end
     * reports its checksum failure then. */
    assert_ok(npyio__stream_new(&checked_backend, sizeof *c, NULL, &s,
                                (void **)&c));
    c->bytes = file;
    c->len = len - 1;
    assert_ok(npyio_reader_open_stream(s, NULL, &r));
    assert_status(npyio_reader_read_alloc(r, 0, &data, &got),
                  NPYIO_E_CHECKSUM);
    assert_error_contains("npyio_reader_read_alloc: ");
    assert_error_contains("CRC-32 0x1234abcd");
    assert_null(data);
    npyio_reader_close(r);
    assert_ok(npyio_stream_close(s));
    free(file);
}

/* A reader over a window: an .npy file inside other bytes, as an archive
 * holds its members. */
static void test_reader_over_a_window(void **state)
{
    unsigned char *file, *framed;
    size_t len;
    npyio_stream *parent = NULL, *w = NULL;
    npyio_reader *r = NULL;
    void *expected = NULL, *data = NULL;
    size_t got = 0;

    (void)state;
    file = read_data_file("sample.npy", &len);
    framed = malloc(len + 300);
    assert_non_null(framed);
    memset(framed, 0xEE, len + 300);
    memcpy(framed + 123, file, len);
    assert_ok(npyio_stream_open_memory(framed, len + 300, NULL, &parent));
    assert_ok(npyio__stream_open_window(parent, 123, (int64_t)len, NULL, &w));
    assert_ok(npyio_reader_open_stream(w, NULL, &r));
    assert_ok(npyio_reader_read_alloc(r, NPYIO_READ_NATIVE, &data, &got));
    npyio_reader_close(r);
    {
        npyio_stream *whole = NULL;

        assert_ok(npyio_stream_open_memory(file, len, NULL, &whole));
        assert_ok(npyio_reader_open_stream(whole, NULL, &r));
        assert_ok(npyio_reader_read_alloc(r, NPYIO_READ_NATIVE, &expected,
                                          &len));
        npyio_reader_close(r);
        npyio_stream_close(whole);
    }
    assert_int_equal(got, len);
    assert_memory_equal(data, expected, len);
    npyio_free(data);
    npyio_free(expected);
    npyio_stream_close(w);
    npyio_stream_close(parent);
    free(framed);
    free(file);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window_reads_its_range_only),
        cmocka_unit_test(test_window_past_the_parent_ends_early),
        cmocka_unit_test(test_window_needs_positional_reads),
        cmocka_unit_test(test_windows_of_one_file_from_threads),
        cmocka_unit_test(test_read_ahead_is_invisible),
        cmocka_unit_test(test_read_ahead_knows_short_files),
        cmocka_unit_test(test_backend_status_reaches_the_caller),
        cmocka_unit_test(test_reader_over_a_window),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
