/*
 * test_stream.c - the stream back ends (memory, growable, callbacks, fd,
 * pipe, FILE*, path) and their contracts: short transfers, seeking,
 * errors with messages, no SIGPIPE.
 */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "stream.h"

static void test_memory_stream(void **state)
{
    static const char text[] = "0123456789";
    npyio_stream *s = NULL;
    char buf[16];
    size_t got = 0;
    int64_t pos = -1;

    (void)state;
    assert_ok(npyio_stream_open_memory(text, 10, NULL, &s));
    assert_ok(npyio__stream_read(s, buf, 4, &got, "test"));
    assert_int_equal(got, 4);
    assert_memory_equal(buf, "0123", 4);
    assert_ok(npyio__stream_seek(s, -3, NPYIO_SEEK_END, &pos));
    assert_int_equal(pos, 7);
    assert_ok(npyio__stream_read(s, buf, 16, &got, "test"));
    assert_int_equal(got, 3); /* short only at the end */
    assert_memory_equal(buf, "789", 3);
    assert_ok(npyio__stream_read(s, buf, 16, &got, "test"));
    assert_int_equal(got, 0);
    assert_status(npyio__stream_seek(s, -1, NPYIO_SEEK_SET, &pos), NPYIO_E_IO);
    assert_error_contains("seeking to -1");
    assert_status(npyio__stream_write(s, "x", 1, "test"), NPYIO_E_INVALID_ARG);
    assert_error_contains("not writable");
    assert_ok(npyio_stream_close(s));
    assert_ok(npyio_stream_close(NULL));
    assert_status(npyio_stream_open_memory(NULL, 3, NULL, &s),
                  NPYIO_E_INVALID_ARG);
}

static void test_growable_stream(void **state)
{
    npyio_stream *s = NULL, *m = NULL;
    void *bytes = NULL;
    size_t len = 0, got = 0, i;
    char buf[8];
    unsigned char big[10000];

    (void)state;
    assert_ok(npyio_stream_create_memory(NULL, &s));
    assert_ok(npyio__stream_write(s, "hello", 5, "test"));
    assert_ok(npyio__stream_seek(s, 1, NPYIO_SEEK_SET, NULL));
    assert_ok(npyio__stream_write(s, "EL", 2, "test"));
    assert_ok(npyio__stream_seek(s, 8, NPYIO_SEEK_SET, NULL));
    assert_ok(npyio__stream_write(s, "!", 1, "test")); /* gap: zeros */
    assert_ok(npyio__stream_seek(s, 0, NPYIO_SEEK_SET, NULL));
    assert_ok(npyio__stream_read(s, buf, 8, &got, "test"));
    assert_int_equal(got, 8);
    assert_memory_equal(buf, "hELlo\0\0\0", 8);
    for (i = 0; i < sizeof big; i++)
        big[i] = (unsigned char)i;
    assert_ok(npyio__stream_write(s, big, sizeof big, "test"));
    assert_ok(npyio_stream_take_bytes(s, &bytes, &len));
    assert_int_equal(len, 8 + sizeof big);
    assert_memory_equal((char *)bytes + 8, big, sizeof big);
    npyio_free(bytes);
    /* Empty afterwards; taking again gives an empty block. */
    assert_ok(npyio_stream_take_bytes(s, &bytes, &len));
    assert_int_equal(len, 0);
    assert_non_null(bytes);
    npyio_free(bytes);
    assert_ok(npyio_stream_open_memory("x", 1, NULL, &m));
    assert_status(npyio_stream_take_bytes(m, &bytes, &len),
                  NPYIO_E_INVALID_ARG);
    assert_ok(npyio_stream_close(m));
    assert_ok(npyio_stream_close(s));
}

/* ---- callbacks: a hostile source and sink ----------------------------------- */

typedef struct hostile {
    const unsigned char *data;
    size_t len, pos;
    unsigned calls;
    size_t fail_after; /* fail once this many bytes moved; SIZE_MAX: never */
    unsigned char *sink;
    size_t sink_len;
} hostile;

/* 1 to 7 bytes per call, in a pattern. */
static size_t dribble(hostile *h, size_t cap)
{
    size_t n = 1 + h->calls++ % 7;

    return n < cap ? n : cap;
}

static int hostile_read(void *user, void *buf, size_t cap, size_t *got)
{
    hostile *h = user;
    size_t n = dribble(h, cap);

    if (h->pos >= h->fail_after)
        return -1;
    if (n > h->len - h->pos)
        n = h->len - h->pos;
    memcpy(buf, h->data + h->pos, n);
    h->pos += n;
    *got = n;
    return 0;
}

static int hostile_write(void *user, const void *buf, size_t len, size_t *put)
{
    hostile *h = user;
    size_t n = dribble(h, len);

    if (h->sink_len >= h->fail_after)
        return -1;
    memcpy(h->sink + h->sink_len, buf, n);
    h->sink_len += n;
    *put = n;
    return 0;
}

static int lazy_write(void *user, const void *buf, size_t len, size_t *put)
{
    (void)user;
    (void)buf;
    (void)len;
    *put = 0; /* accepts nothing, reports success */
    return 0;
}

static void test_hostile_callbacks(void **state)
{
    static const npyio_stream_ops ops = {
        .size = sizeof ops, .read = hostile_read, .write = hostile_write};
    static const npyio_stream_ops lazy = {
        .size = sizeof lazy, .write = lazy_write};
    unsigned char data[1000], out[1000], sink[1000];
    hostile h = {data, sizeof data, 0, 0, SIZE_MAX, sink, 0};
    npyio_stream *s = NULL;
    size_t got = 0, i;

    (void)state;
    for (i = 0; i < sizeof data; i++)
        data[i] = (unsigned char)(i * 13);
    assert_ok(npyio_stream_open_ops(&ops, &h, NULL, &s));
    assert_false(npyio__stream_seekable(s));
    assert_ok(npyio__stream_read(s, out, sizeof out, &got, "test"));
    assert_int_equal(got, sizeof out);
    assert_memory_equal(out, data, sizeof data);
    assert_true(h.calls > 200); /* it really dribbled */
    assert_ok(npyio__stream_write(s, data, sizeof data, "test"));
    assert_memory_equal(sink, data, sizeof data);
    assert_status(npyio__stream_seek(s, 0, NPYIO_SEEK_SET, NULL),
                  NPYIO_E_UNSUPPORTED);
    assert_error_contains("cannot seek");
    /* A failing callback is an I/O error naming the offset. */
    h.pos = 0;
    h.fail_after = 500;
    assert_status(npyio__stream_read(s, out, sizeof out, &got, "array data"),
                  NPYIO_E_IO);
    assert_error_contains("reading array data at stream offset");
    assert_error_contains("the read callback failed");
    h.sink_len = 0;
    assert_status(npyio__stream_write(s, data, sizeof data, "array data"),
                  NPYIO_E_IO);
    assert_error_contains("the write callback failed");
    assert_ok(npyio_stream_close(s));
    /* A write that makes no progress is an error, not a hang. */
    assert_ok(npyio_stream_open_ops(&lazy, NULL, NULL, &s));
    assert_status(npyio__stream_write(s, data, 10, "test"), NPYIO_E_IO);
    assert_error_contains("made no progress");
    assert_ok(npyio_stream_close(s));
}

static int failing_close(void *user)
{
    (void)user;
    return 1;
}

static void test_ops_table_checks(void **state)
{
    npyio_stream_ops ops = {
        .size = sizeof ops, .read = hostile_read, .close = failing_close};
    npyio_stream_ops none = {.size = sizeof none};
    npyio_stream_ops shrt = ops;
    npyio_stream *s = NULL;

    (void)state;
    shrt.size = offsetof(npyio_stream_ops, close);
    assert_status(npyio_stream_open_ops(&shrt, NULL, NULL, &s),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_stream_open_ops(&none, NULL, NULL, &s),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("read and write are both NULL");
    assert_status(npyio_stream_open_ops(NULL, NULL, NULL, &s),
                  NPYIO_E_INVALID_ARG);
    /* A failing close callback is reported, and the stream is freed. */
    assert_ok(npyio_stream_open_ops(&ops, NULL, NULL, &s));
    assert_status(npyio_stream_close(s), NPYIO_E_IO);
    assert_error_contains("the close callback failed");
}

/* ---- the operating system ------------------------------------------------------ */

static void test_pipe_is_not_seekable(void **state)
{
    int fds[2];
    npyio_stream *r = NULL, *w = NULL;
    char buf[8];
    size_t got = 0;

    (void)state;
    assert_int_equal(pipe(fds), 0);
    assert_ok(npyio_stream_open_fd(fds[0], NULL, &r));
    assert_ok(npyio_stream_open_fd(fds[1], NULL, &w));
    assert_false(npyio__stream_seekable(r));
    assert_ok(npyio__stream_write(w, "abc", 3, "test"));
    close(fds[1]); /* the stream does not own the descriptor */
    assert_ok(npyio_stream_close(w));
    assert_ok(npyio__stream_read(r, buf, sizeof buf, &got, "test"));
    assert_int_equal(got, 3);
    assert_ok(npyio_stream_close(r));
    assert_int_equal(close(fds[0]), 0); /* still open: not ours to close */
}

/* Writing to a pipe whose reader is gone must be an error, not a SIGPIPE
 * that kills the program (this test would die with the default action). */
static void test_closed_pipe_is_an_error_not_a_signal(void **state)
{
    int fds[2];
    npyio_stream *w = NULL;
    FILE *f;
    char data[4096] = {0};
    sigset_t pending;

    (void)state;
    assert_int_equal(pipe(fds), 0);
    close(fds[0]);
    assert_ok(npyio_stream_open_fd(fds[1], NULL, &w));
    assert_status(npyio__stream_write(w, data, sizeof data, "array data"),
                  NPYIO_E_IO);
    assert_error_contains("Broken pipe");
    assert_ok(npyio_stream_close(w));
    sigpending(&pending);
    assert_false(sigismember(&pending, SIGPIPE)); /* consumed, not queued */
    /* The same through stdio. */
    f = fdopen(fds[1], "w");
    assert_non_null(f);
    setvbuf(f, NULL, _IONBF, 0);
    assert_ok(npyio_stream_open_file(f, NULL, &w));
    assert_status(npyio__stream_write(w, data, sizeof data, "array data"),
                  NPYIO_E_IO);
    assert_ok(npyio_stream_close(w));
    fclose(f);
}

static void test_file_and_path_streams(void **state)
{
    char path[] = "/tmp/npyio-test-XXXXXX";
    npyio_stream *s = NULL;
    FILE *f;
    char buf[8];
    size_t got = 0;
    int64_t pos = 0;
    int fd = mkstemp(path);

    (void)state;
    assert_true(fd >= 0);
    close(fd);
    assert_ok(npyio_stream_open_path(path, NPYIO_STREAM_WRITE, NULL, &s));
    assert_ok(npyio__stream_write(s, "abcdef", 6, "test"));
    assert_ok(npyio_stream_close(s));
    assert_ok(npyio_stream_open_path(path, NPYIO_STREAM_READ, NULL, &s));
    assert_true(npyio__stream_seekable(s));
    assert_ok(npyio__stream_seek(s, 2, NPYIO_SEEK_SET, &pos));
    assert_ok(npyio__stream_read(s, buf, sizeof buf, &got, "test"));
    assert_int_equal(got, 4);
    assert_memory_equal(buf, "cdef", 4);
    assert_ok(npyio_stream_close(s));
    f = fopen(path, "rb");
    assert_non_null(f);
    fgetc(f);
    assert_ok(npyio_stream_open_file(f, NULL, &s));
    {
        int64_t at = -1;

        assert_true(npyio__stream_known_position(s, &at));
        assert_int_equal(at, 1); /* from the FILE's position */
    }
    assert_ok(npyio__stream_read(s, buf, sizeof buf, &got, "test"));
    assert_int_equal(got, 5);
    assert_ok(npyio_stream_close(s));
    fclose(f);
    unlink(path);
    assert_status(npyio_stream_open_path(path, NPYIO_STREAM_READ, NULL, &s),
                  NPYIO_E_NOT_FOUND);
    assert_error_contains("No such file or directory");
    assert_status(npyio_stream_open_path(path, 3, NULL, &s),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_stream_open_fd(-1, NULL, &s), NPYIO_E_INVALID_ARG);
}

#if defined(__GLIBC__)
/*
 * A FILE* whose writes go to a cookie that takes at most `max_per_call`
 * bytes a call and fails every `eintr_every`-th call (or only the
 * `eintr_once`-th) with EINTR, as a
 * write interrupted by a signal does: deterministic, unlike timed
 * signals. Whatever happens, the library must never report success for
 * bytes that did not arrive.
 */
typedef struct cookie_sink {
    unsigned char *bytes;
    size_t len, cap, max_per_call;
    unsigned calls, eintr_every, eintr_once;
} cookie_sink;

static ssize_t cookie_write(void *c, const char *buf, size_t len)
{
    cookie_sink *k = c;

    k->calls++;
    if ((k->eintr_every != 0 && k->calls % k->eintr_every == 0) ||
        k->calls == k->eintr_once) {
        errno = EINTR;
        return -1;
    }
    if (len > k->max_per_call)
        len = k->max_per_call;
    if (k->len + len > k->cap)
        return -1;
    memcpy(k->bytes + k->len, buf, len);
    k->len += len;
    return (ssize_t)len;
}

/* Write a header and `n` bytes of data through a FILE* on the sink;
 * returns the first failing status, or NPYIO_OK. */
static npyio_status write_through_cookie(cookie_sink *k, const void *data,
                                         int64_t n, size_t *expected)
{
    cookie_io_functions_t io = {NULL, cookie_write, NULL, NULL};
    FILE *f = fopencookie(k, "w", io);
    npyio_stream *s = NULL;
    npyio_writer *w = NULL;
    npyio_dtype *dt = NULL;
    npyio_header *h = NULL;
    npyio_status st;
    int64_t i, step = 4099;

    assert_non_null(f);
    assert_ok(npyio_dtype_parse("|u1", 3, NULL, &dt));
    assert_ok(npyio_header_new(dt, 1, &n, 0, &h));
    *expected = (size_t)npyio_header_data_offset(h) + (size_t)n;
    assert_ok(npyio_stream_open_file(f, NULL, &s));
    st = npyio_writer_create_stream(s, h, 0, NULL, &w);
    for (i = 0; st == NPYIO_OK && i < n; i += step)
        st = npyio_writer_write(w, (const unsigned char *)data + i,
                                (size_t)(n - i < step ? n - i : step));
    if (w != NULL) {
        npyio_status closed = npyio_writer_close(w);

        if (st == NPYIO_OK)
            st = closed;
    }
    {
        npyio_status closed = npyio_stream_close(s);

        if (st == NPYIO_OK)
            st = closed;
    }
    fclose(f);
    npyio_header_free(h);
    npyio_dtype_unref(dt);
    return st;
}

static void test_file_stream_never_loses_bytes(void **state)
{
    enum { N = 200000 };
    unsigned char *data = malloc(N);
    cookie_sink k;
    size_t expected = 0, i;
    unsigned every;

    (void)state;
    for (i = 0; i < N; i++)
        data[i] = (unsigned char)(i * 131 + 7);
    memset(&k, 0, sizeof k);
    k.cap = 2 * N;
    k.bytes = malloc(k.cap);
    /* A sink that takes everything: every byte arrives, in order. (glibc
     * takes a short count from a cookie for an error, like EINTR.) */
    k.max_per_call = k.cap;
    assert_ok(write_through_cookie(&k, data, N, &expected));
    assert_int_equal(k.len, expected);
    assert_memory_equal(k.bytes + expected - N, data, N);
    /* Interrupted writes: an error, or every byte. */
    for (every = 2; every < 40; every += 3) {
        npyio_status st;

        k.len = 0;
        k.calls = 0;
        k.eintr_every = every;
        k.max_per_call = every % 2 ? k.cap : 700; /* and short counts */
        st = write_through_cookie(&k, data, N, &expected);
        if (st == NPYIO_OK) {
            assert_int_equal(k.len, expected);
            assert_memory_equal(k.bytes + expected - N, data, N);
        } else {
            assert_int_equal(st, NPYIO_E_IO);
            assert_error_contains("may have been lost");
        }
    }
    /* One interruption, the rest going through: stdio dropped what it had
     * buffered, so success would mean lost bytes. */
    k.eintr_every = 0;
    k.max_per_call = k.cap;
    for (every = 1; every < 12; every++) {
        npyio_status st;

        k.len = 0;
        k.calls = 0;
        k.eintr_once = every;
        st = write_through_cookie(&k, data, N, &expected);
        if (st == NPYIO_OK) {
            assert_int_equal(k.len, expected);
            assert_memory_equal(k.bytes + expected - N, data, N);
        } else {
            assert_int_equal(st, NPYIO_E_IO);
        }
    }
    free(k.bytes);
    free(data);
}
#endif

/* A FILE* with a descriptor: bytes the caller had buffered in it come
 * first, and stdio's position afterwards is where the data ends. */
static void test_file_stream_keeps_order_and_position(void **state)
{
    FILE *f = tmpfile();
    npyio_stream *s = NULL;
    unsigned char back[32];

    (void)state;
    assert_non_null(f);
    assert_int_equal(fwrite("prefix", 1, 6, f), 6); /* still buffered */
    assert_ok(npyio_stream_open_file(f, NULL, &s));
    assert_ok(npyio__stream_write(s, "-data-", 6, "test"));
    assert_ok(npyio_stream_close(s));
    assert_int_equal(ftello(f), 12);
    assert_int_equal(fwrite("suffix", 1, 6, f), 6);
    assert_int_equal(fflush(f), 0);
    rewind(f);
    assert_int_equal(fread(back, 1, sizeof back, f), 18);
    assert_memory_equal(back, "prefix-data-suffix", 18);
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_stream),
        cmocka_unit_test(test_growable_stream),
        cmocka_unit_test(test_hostile_callbacks),
        cmocka_unit_test(test_ops_table_checks),
        cmocka_unit_test(test_pipe_is_not_seekable),
        cmocka_unit_test(test_closed_pipe_is_an_error_not_a_signal),
        cmocka_unit_test(test_file_and_path_streams),
#if defined(__GLIBC__)
        cmocka_unit_test(test_file_stream_never_loses_bytes),
#endif
        cmocka_unit_test(test_file_stream_keeps_order_and_position),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
