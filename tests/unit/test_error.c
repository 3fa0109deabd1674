/*
 * test_error.c - status codes, status strings, the version API and the
 * thread-local message of the last failure.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "testdata.h"

/* Every pinned status, with the value the header promises forever. */
static const struct {
    npyio_status status;
    int value;
} pinned[] = {
    {NPYIO_OK, 0},
    {NPYIO_END, 1},
    {NPYIO_E_INVALID_ARG, -1},
    {NPYIO_E_NOMEM, -2},
    {NPYIO_E_IO, -3},
    {NPYIO_E_FORMAT, -4},
    {NPYIO_E_UNSUPPORTED, -5},
    {NPYIO_E_LIMIT, -6},
    {NPYIO_E_TRUNCATED, -7},
    {NPYIO_E_NOT_FOUND, -8},
    {NPYIO_E_CHECKSUM, -9},
    {NPYIO_E_STATE, -10},
    {NPYIO_E_OVERFLOW, -11},
    {NPYIO_E_BUFFER_TOO_SMALL, -12},
    {NPYIO_E_LOCKED, -13},
};
#define PINNED_COUNT (sizeof pinned / sizeof pinned[0])

static void test_status_values_are_pinned(void **state)
{
    size_t i;

    (void)state;
    assert_int_equal(sizeof(npyio_status), 4);
    assert_true((npyio_status)-1 < 0); /* signed */
    for (i = 0; i < PINNED_COUNT; i++)
        assert_int_equal(pinned[i].status, pinned[i].value);
}

static void test_every_status_has_its_own_string(void **state)
{
    const char *unknown = npyio_status_string(-9999);
    size_t i, j;

    (void)state;
    assert_string_equal(unknown, "unknown status");
    assert_string_equal(npyio_status_string(NPYIO_OK), "success");
    assert_string_equal(npyio_status_string(NPYIO_E_NOMEM), "out of memory");
    for (i = 0; i < PINNED_COUNT; i++) {
        const char *s = npyio_status_string(pinned[i].status);

        assert_non_null(s);
        assert_true(strlen(s) > 0);
        assert_string_not_equal(s, unknown);
        for (j = 0; j < i; j++)
            assert_string_not_equal(s, npyio_status_string(pinned[j].status));
    }
    /* Neighbours of the known range are unknown, not a neighbour's text. */
    assert_string_equal(npyio_status_string(2), unknown);
    assert_string_equal(npyio_status_string(-14), unknown);
    assert_string_equal(npyio_status_string(INT32_MIN), unknown);
    assert_string_equal(npyio_status_string(INT32_MAX), unknown);
}

/* ---- every status, produced by a real call ---------------------------------- */

static void *failing_alloc(void *user, size_t size, size_t alignment)
{
    (void)user;
    (void)size;
    (void)alignment;
    return NULL;
}

static void *failing_realloc(void *user, void *ptr, size_t old_size,
                             size_t new_size, size_t alignment)
{
    (void)user;
    (void)ptr;
    (void)old_size;
    (void)new_size;
    (void)alignment;
    return NULL;
}

static void no_free(void *user, void *ptr, size_t size)
{
    (void)user;
    (void)ptr;
    (void)size;
}

static int failing_read(void *user, void *buf, size_t cap, size_t *got)
{
    (void)user;
    (void)buf;
    (void)cap;
    *got = 0;
    return -1;
}

/* A whole .npy file of 4 int32 in memory. */
static size_t small_npy(unsigned char *buf, size_t cap)
{
    static const int64_t shape[1] = {4};
    npyio_dtype *dt = NULL;
    npyio_header *h = NULL;
    size_t len = 0;

    assert_ok(npyio_dtype_parse("<i4", 3, NULL, &dt));
    assert_ok(npyio_header_new(dt, 1, shape, 0, &h));
    assert_ok(npyio_header_emit(h, 0, buf, cap, &len));
    memset(buf + len, 7, 16);
    npyio_header_free(h);
    npyio_dtype_unref(dt);
    return len + 16;
}

static npyio_status produce_end(void)
{
    unsigned char file[256], out[64];
    size_t len = small_npy(file, sizeof file), got = 0;
    npyio_stream *s = NULL;
    npyio_reader *r = NULL;
    npyio_status st;

    assert_ok(npyio_stream_open_memory(file, len, NULL, &s));
    assert_ok(npyio_reader_open_stream(s, NULL, &r));
    assert_ok(npyio_reader_read_chunk(r, out, sizeof out, 0, &got));
    st = npyio_reader_read_chunk(r, out, sizeof out, 0, &got);
    npyio_reader_close(r);
    npyio_stream_close(s);
    return st;
}

static npyio_status produce_nomem(void)
{
    npyio_allocator a = {sizeof a, failing_alloc, failing_realloc, no_free};
    npyio_options *o = NULL;
    npyio_dtype *dt = NULL;
    npyio_status st;

    assert_ok(npyio_options_new(&o));
    assert_ok(npyio_options_set_allocator(o, &a, NULL));
    st = npyio_dtype_parse("[('a', '<i4'), ('b', '<f8')]", 28, o, &dt);
    npyio_options_free(o);
    return st;
}

static npyio_status produce_io(void)
{
    npyio_stream_ops ops = {.size = sizeof ops, .read = failing_read};
    npyio_stream *s = NULL;
    npyio_reader *r = NULL;
    npyio_status st;

    assert_ok(npyio_stream_open_ops(&ops, NULL, NULL, &s));
    st = npyio_reader_open_stream(s, NULL, &r);
    npyio_stream_close(s);
    return st;
}

static npyio_status parse_text(const char *bytes, size_t len,
                               const npyio_options *o)
{
    npyio_header *h = NULL;
    npyio_status st = npyio_header_parse(bytes, len, o, &h, NULL);

    npyio_header_free(h);
    return st;
}

static npyio_status produce_limit(void)
{
    unsigned char file[256];
    size_t len = small_npy(file, sizeof file);
    npyio_options *o = NULL;
    npyio_status st;

    assert_ok(npyio_options_new(&o));
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_HEADER_SIZE, 10));
    st = parse_text((const char *)file, len, o);
    npyio_options_free(o);
    return st;
}

static npyio_status produce_checksum(void)
{
    npyio_npz *npz = NULL;
    npyio_status st;

    assert_ok(npyio_npz_open_path(NPYIO_TEST_DATA_DIR
                                  "/npz/bad/stored_crc_mismatch.npz", NULL,
                                  &npz));
    st = npyio_npz_verify(npz, 1);
    npyio_npz_close(npz);
    return st;
}

static npyio_status produce_state(void)
{
    static const int64_t shape[1] = {2};
    npyio_stream *s = NULL;
    npyio_npz_writer *w = NULL;
    npyio_writer *m = NULL, *again = NULL;
    npyio_dtype *dt = NULL;
    npyio_header *h = NULL;
    npyio_status st;

    assert_ok(npyio_dtype_parse("<i4", 3, NULL, &dt));
    assert_ok(npyio_header_new(dt, 1, shape, 0, &h));
    assert_ok(npyio_stream_create_memory(NULL, &s));
    assert_ok(npyio_npz_writer_create_stream(s, 0, NULL, &w));
    assert_ok(npyio_writer_create_member(w, "a", h, 0, 0, &m));
    st = npyio_writer_create_member(w, "b", h, 0, 0,
                                    &again); /* a's writer is open */
    npyio_writer_abort(m);
    npyio_npz_writer_abort(w);
    npyio_stream_close(s);
    npyio_header_free(h);
    npyio_dtype_unref(dt);
    return st;
}

static npyio_status produce_buffer_too_small(void)
{
    unsigned char file[256];
    size_t len = small_npy(file, sizeof file), need = 0;
    npyio_header *h = NULL;
    npyio_status st;

    assert_ok(npyio_header_parse(file, len, NULL, &h, NULL));
    st = npyio_header_emit(h, 0, file, 10, &need);
    npyio_header_free(h);
    return st;
}

static npyio_status produce_locked(void)
{
    char path[] = "/tmp/test_error_locked-XXXXXX";
    int fd = mkstemp(path);
    npyio_writer *first = NULL, *second = NULL;
    npyio_dtype *dt = NULL;
    npyio_header *rows = NULL;
    npyio_status st;
    const int32_t v[2] = {1, 2};

    assert_true(fd >= 0);
    close(fd);
    assert_ok(npyio_save(path, "=i4", 1, (const int64_t[]){2}, v,
                               sizeof v, NPYIO_WRITE_NO_SYNC, NULL));
    assert_ok(npyio_dtype_parse("=i4", 3, NULL, &dt));
    assert_ok(npyio_header_new(dt, 1, (const int64_t[]){1}, 0, &rows));
    assert_ok(npyio_writer_open_append_path(path, rows, 0, NULL, &first));
    st = npyio_writer_open_append_path(path, rows, 0, NULL, &second);
    npyio_writer_abort(first);
    npyio_header_free(rows);
    npyio_dtype_unref(dt);
    unlink(path);
    return st;
}

static void test_every_status_is_produced(void **state)
{
    static const char magic_v4[] = "\x93NUMPY\x04\x00\x10\x00\x00\x00"
                                   "{}              ";
    static const char huge[] =
        "\x93NUMPY\x01\x00\x56\x00{'descr': '<f8', 'fortran_order': False, "
        "'shape': (4611686018427387904, 4), }        \n";
    npyio_status produced[PINNED_COUNT];
    npyio_reader *r = NULL;
    npyio_options *o = NULL;
    size_t i, j;

    (void)state;
    produced[0] = npyio_options_new(&o);
    npyio_options_free(o);
    produced[1] = produce_end();
    produced[2] = npyio_options_set_limit(NULL, NPYIO_LIMIT_NDIM, 1);
    produced[3] = produce_nomem();
    produced[4] = produce_io();
    produced[5] = parse_text("hello, world, this is text", 26, NULL);
    produced[6] = parse_text(magic_v4, sizeof magic_v4 - 1, NULL);
    produced[7] = produce_limit();
    produced[8] = parse_text("\x93NUMPY\x01\x00", 8, NULL);
    produced[9] = npyio_reader_open_path("/nonexistent-npyio/x.npy", NULL, &r);
    produced[10] = produce_checksum();
    produced[11] = produce_state();
    produced[12] = parse_text(huge, sizeof huge - 1, NULL);
    produced[13] = produce_buffer_too_small();
    produced[14] = produce_locked();
    /* Each call gave its status, and the list is every status there is:
     * a new one fails here until a call that produces it is added. */
    for (i = 0; i < PINNED_COUNT; i++) {
        if (produced[i] != pinned[i].status)
            fail_msg("call %zu gave %d (%s), expected %d (%s)", i,
                     (int)produced[i], npyio_status_string(produced[i]),
                     (int)pinned[i].status,
                     npyio_status_string(pinned[i].status));
        for (j = 0; j < i; j++)
            assert_int_not_equal(produced[i], produced[j]);
    }
    assert_string_equal(npyio_status_string(NPYIO_E_LOCKED - 1),
                        npyio_status_string(-9999));
    assert_string_equal(npyio_status_string(NPYIO_END + 1),
                        npyio_status_string(-9999));
}

static void test_version_matches_header(void **state)
{
    char expected[32];

    (void)state;
    snprintf(expected, sizeof expected, "%d.%d.%d", NPYIO_VERSION_MAJOR,
             NPYIO_VERSION_MINOR, NPYIO_VERSION_PATCH);
    assert_string_equal(NPYIO_VERSION_STRING, expected);
    assert_string_equal(npyio_version_string(), expected);
    assert_int_equal(NPYIO_VERSION_NUMBER,
                     NPYIO_VERSION_MAJOR * 10000 + NPYIO_VERSION_MINOR * 100 +
                         NPYIO_VERSION_PATCH);
    assert_int_equal(npyio_version_number(), NPYIO_VERSION_NUMBER);
    assert_int_equal(NPYIO_VERSION_MAJOR, 1);
}

/* A failing public call fills the message with the function and the cause. */
static void test_failure_sets_message(void **state)
{
    int64_t value = 123;

    (void)state;
    assert_status(npyio_options_get_limit(NULL, 99, &value),
                  NPYIO_E_INVALID_ARG);
    assert_int_equal(value, 0);
    assert_string_equal(npyio_last_error(),
                        "npyio_options_get_limit: limit 99 is not known to "
                        "libnpyio " NPYIO_VERSION_STRING);
    /* Success does not clear it. */
    assert_ok(npyio_options_get_limit(NULL, NPYIO_LIMIT_NDIM, &value));
    assert_error_contains("limit 99 is not known");
}

/* Messages longer than the buffer are cut, terminated, and never end in
 * the middle of a UTF-8 sequence. */
static void test_long_message_is_cut_at_utf8_boundary(void **state)
{
    char name[3 * NPYIO__MESSAGE_CAP];
    size_t shift, len, i;

    (void)state;
    for (shift = 0; shift < 4; shift++) {
        memset(name, 'a', shift);
        for (i = shift; i + 2 < sizeof name - 1; i += 2) {
            name[i] = (char)0xC4; /* U+0109, two bytes */
            name[i + 1] = (char)0x89;
        }
        name[i] = '\0';
        assert_status(npyio__fail(NPYIO_E_FORMAT, "field %s", name),
                      NPYIO_E_FORMAT);
        len = strlen(npyio_last_error());
        assert_true(len < NPYIO__MESSAGE_CAP);
        assert_true(len >= NPYIO__MESSAGE_CAP - 4);
        /* The last character is complete: its lead byte has both bytes. */
        for (i = len; i > 0; i--)
            if (((unsigned char)npyio_last_error()[i - 1] & 0xC0u) != 0x80u)
                break;
        if ((unsigned char)npyio_last_error()[i - 1] == 0xC4u)
            assert_int_equal(len - i, 1);
    }
}

/*
 * Two threads fail with different messages while the other's message is
 * live; each must read back its own. The barrier makes both messages exist
 * at once, so one shared buffer could not pass.
 */
struct thread_case {
    pthread_barrier_t *barrier;
    npyio_limit limit;
    char seen_before[NPYIO__MESSAGE_CAP];
    char seen_after[NPYIO__MESSAGE_CAP];
    npyio_status status;
};

static void *fail_in_thread(void *arg)
{
    struct thread_case *c = arg;
    int64_t value;

    snprintf(c->seen_before, sizeof c->seen_before, "%s", npyio_last_error());
    c->status = npyio_options_get_limit(NULL, c->limit, &value);
    pthread_barrier_wait(c->barrier); /* both have failed */
    pthread_barrier_wait(c->barrier); /* the main thread has failed too */
    snprintf(c->seen_after, sizeof c->seen_after, "%s", npyio_last_error());
    return NULL;
}

static void test_message_is_per_thread(void **state)
{
    pthread_barrier_t barrier;
    struct thread_case cases[2] = {{.limit = 1000}, {.limit = 2000}};
    pthread_t threads[2];
    int i;

    (void)state;
    assert_int_equal(pthread_barrier_init(&barrier, NULL, 3), 0);
    for (i = 0; i < 2; i++) {
        cases[i].barrier = &barrier;
        assert_int_equal(
            pthread_create(&threads[i], NULL, fail_in_thread, &cases[i]), 0);
    }
    pthread_barrier_wait(&barrier);
    assert_status(npyio_options_set_limit(NULL, NPYIO_LIMIT_NDIM, 1),
                  NPYIO_E_INVALID_ARG);
    pthread_barrier_wait(&barrier);
    for (i = 0; i < 2; i++)
        assert_int_equal(pthread_join(threads[i], NULL), 0);
    pthread_barrier_destroy(&barrier);

    assert_string_equal(npyio_last_error(),
                        "npyio_options_set_limit: options is NULL");
    for (i = 0; i < 2; i++) {
        char expected[128];

        snprintf(expected, sizeof expected,
                 "npyio_options_get_limit: limit %d is not known to "
                 "libnpyio %s", (int)cases[i].limit, NPYIO_VERSION_STRING);
        assert_int_equal(cases[i].status, NPYIO_E_INVALID_ARG);
        assert_string_equal(cases[i].seen_before, ""); /* new thread: empty */
        assert_string_equal(cases[i].seen_after, expected);
    }
}

/*
 * The rule of npyio_last_error(): the message of the last call that
 * failed. Calls that succeed must leave it, even when they recovered from
 * an internal step that failed (the reader probes 8 bytes before the
 * length field; a FILE* stream probes whether it can seek). A sentinel
 * failure, then every kind of successful call over the corpora.
 */
static char sentinel[NPYIO__MESSAGE_CAP];

static void set_sentinel(void)
{
    int64_t value;

    assert_status(npyio_options_get_limit(NULL, 12345, &value),
                  NPYIO_E_INVALID_ARG);
    snprintf(sentinel, sizeof sentinel, "%s", npyio_last_error());
}

#define assert_kept(what)                                                    \
    do {                                                                     \
        if (strcmp(npyio_last_error(), sentinel) != 0)                       \
            fail_msg("%s succeeded but changed the message to \"%s\"",      \
                     (what), npyio_last_error());                            \
    } while (0)

static void read_every_way(const char *file)
{
    npyio_reader *r = NULL;
    npyio_header *h = NULL;
    void *data = NULL;
    unsigned char buf[4096];
    size_t got = 0, len = 0;
    unsigned char *bytes = read_data_file_abs(file, &len);
    npyio_stream *s = NULL;
    npyio_status st;

    assert_ok(npyio_reader_open_path(file, NULL, &r));
    if (!npyio_dtype_has_objects(
            npyio_header_dtype(npyio_reader_header(r)))) {
        assert_ok(npyio_reader_read_alloc(r, NPYIO_READ_NATIVE |
                                                 NPYIO_READ_C_ORDER,
                                          &data, NULL));
        npyio_free(data);
        assert_ok(npyio_reader_close(r));
        assert_ok(npyio_reader_open_path(file, NULL, &r));
        while ((st = npyio_reader_read_chunk(r, buf, sizeof buf,
                                             NPYIO_READ_NATIVE |
                                                 NPYIO_READ_C_ORDER,
                                             &got)) == NPYIO_OK)
            ;
        assert_int_equal(st, NPYIO_END);
        assert_ok(npyio_load_with_header(file, NPYIO_READ_NATIVE, NULL, &h,
                                         &data));
        npyio_header_free(h);
        npyio_free(data);
    }
    assert_ok(npyio_reader_close(r));
    /* The same bytes through a memory stream and a FILE* on a pipe. */
    assert_ok(npyio_stream_open_memory(bytes, len, NULL, &s));
    assert_ok(npyio_reader_open_stream(s, NULL, &r));
    assert_ok(npyio_reader_close(r));
    assert_ok(npyio_stream_close(s));
    {
        int fds[2];
        FILE *f;

        assert_int_equal(pipe(fds), 0);
        assert_true(len < 60000); /* fits the pipe's buffer */
        assert_int_equal(write(fds[1], bytes, len), (ssize_t)len);
        close(fds[1]);
        f = fdopen(fds[0], "rb");
        assert_ok(npyio_stream_open_file(f, NULL, &s));
        assert_ok(npyio_reader_open_stream(s, NULL, &r));
        assert_ok(npyio_reader_close(r));
        assert_ok(npyio_stream_close(s));
        fclose(f);
    }
    free(bytes);
}

static void test_success_keeps_the_message(void **state)
{
    tsv_table arrays, headers, types;
    char path[1024], dir[] = "/tmp/npyio-msg-XXXXXX";
    size_t i;

    (void)state;
    set_sentinel();
    tsv_load("arrays/manifest.tsv", &arrays);
    for (i = 0; i < arrays.count; i++) {
        snprintf(path, sizeof path, "%s/arrays/%s", NPYIO_TEST_DATA_DIR,
                 arrays.rows[i].field[1]);
        read_every_way(path);
        assert_kept(path);
    }
    tsv_free(&arrays);
    tsv_load("headers/valid/manifest.tsv", &headers);
    for (i = 0; i < headers.count; i++) {
        char rel[512];
        size_t len;
        unsigned char *bytes;
        npyio_header *h = NULL;

        snprintf(rel, sizeof rel, "headers/valid/%s",
                 headers.rows[i].field[1]);
        bytes = read_data_file(rel, &len);
        assert_ok(npyio_header_parse(bytes, len, NULL, &h, NULL));
        assert_kept(rel);
        npyio_header_free(h);
        free(bytes);
    }
    tsv_free(&headers);
    tsv_load("headers/dtype_strings.tsv", &types);
    for (i = 0; i < types.count; i++) {
        const char *text = types.rows[i].field[0];
        npyio_dtype *dt = NULL;

        /* Every string, accepted or not: after a refusal, a new sentinel. */
        if (npyio_dtype_parse(text, strlen(text), NULL, &dt) ==
            NPYIO_OK)
            assert_kept(text);
        else
            set_sentinel();
        npyio_dtype_unref(dt);
    }
    tsv_free(&types);
    /* Writing: save, append, in place, maps, in a fresh directory. */
    assert_non_null(mkdtemp(dir));
    {
        npyio_dtype *dt = NULL;
        npyio_header *h = NULL, *rows = NULL;
        npyio_writer *w = NULL;
        npyio_map *m = NULL;
        int64_t shape[2] = {4, 3}, one[2] = {1, 3};
        double zeros[12] = {0};

        assert_ok(npyio_dtype_parse("<f8", 3, NULL, &dt));
        assert_ok(npyio_header_new(dt, 2, shape, 0, &h));
        assert_ok(npyio_header_new(dt, 2, one, 0, &rows));
        snprintf(path, sizeof path, "%s/a.npy", dir);
        assert_ok(npyio_save_with_header(path, h, zeros, (size_t)npyio_header_nbytes(h), 0,
                             NULL));
        assert_kept("npyio_save_with_header");
        assert_ok(npyio_writer_open_append_path(path, rows, 0, NULL, &w));
        assert_ok(npyio_writer_write(w, zeros, 24));
        assert_ok(npyio_writer_close(w));
        assert_kept("append");
        assert_ok(npyio_writer_open_in_place_path(path, 0, NULL, &w));
        assert_ok(npyio_writer_write_rows(w, 0, 1, zeros, 24));
        assert_ok(npyio_writer_close(w));
        assert_kept("in place");
        assert_ok(npyio_map_open_path(path, NPYIO_MAP_WRITE, NULL, &m));
        assert_ok(npyio_map_close(m));
        snprintf(path, sizeof path, "%s/b.npy", dir);
        assert_ok(npyio_map_create_path(path, h, 0, NULL, &m));
        assert_ok(npyio_map_close(m));
        assert_kept("maps");
        npyio_header_free(h);
        npyio_header_free(rows);
        npyio_dtype_unref(dt);
    }
    snprintf(path, sizeof path, "rm -rf %s", dir);
    assert_int_equal(system(path), 0);
}

/* A failing call's message names the function the caller called (never
 * one used inside it), then the path, then the OS's cause. */
#define assert_called(function, path, cause)                                 \
    do {                                                                     \
        const char *m_ = npyio_last_error();                                 \
        if (strncmp(m_, function ": ", strlen(function) + 2) != 0 ||         \
            strstr(m_, path) == NULL || strstr(m_, cause) == NULL ||         \
            strstr(m_ + strlen(function), "npyio_") != NULL)                 \
            fail_msg("message \"%s\": expected %s, the path and \"%s\"", m_,\
                     function, cause);                                       \
    } while (0)

/* Every function that takes a path, given one that fails with `cause`:
 * each returns `want`, and its message starts with its own name, then
 * the path and the cause. */
static void every_path_function_fails(const char *path, npyio_status want,
                                      const char *cause)
{
    npyio_dtype *dt = NULL;
    npyio_header *h = NULL, *back = NULL;
    npyio_writer *w = NULL;
    npyio_reader *r = NULL;
    npyio_stream *s = NULL;
    npyio_map *m = NULL;
    int64_t n = 3;
    double v[3] = {0};
    void *d = NULL;

    assert_ok(npyio_dtype_parse("<f8", 3, NULL, &dt));
    assert_ok(npyio_header_new(dt, 1, &n, 0, &h));
    assert_status(npyio_save_with_header(path, h, v, (size_t)npyio_header_nbytes(h), 0,
                             NULL), want);
    assert_called("npyio_save_with_header", path, cause);
    assert_status(npyio_load_with_header(path, 0, NULL, &back, &d), want);
    assert_called("npyio_load_with_header", path, cause);
    assert_status(npyio_reader_open_path(path, NULL, &r), want);
    assert_called("npyio_reader_open_path", path, cause);
    assert_status(npyio_stream_open_path(path, NPYIO_STREAM_READ, NULL, &s),
                  want);
    assert_called("npyio_stream_open_path", path, cause);
    assert_status(npyio_stream_open_path(path, NPYIO_STREAM_WRITE, NULL, &s),
                  want);
    assert_called("npyio_stream_open_path", path, cause);
    assert_status(npyio_writer_create_path(path, h, 0, NULL, &w), want);
    assert_called("npyio_writer_create_path", path, cause);
    assert_status(npyio_writer_create_path(path, h, NPYIO_WRITE_UNKNOWN_ROWS,
                                         NULL, &w), want);
    assert_called("npyio_writer_create_path", path, cause);
    assert_status(npyio_writer_open_append_path(path, h, 0, NULL, &w), want);
    assert_called("npyio_writer_open_append_path", path, cause);
    assert_status(npyio_writer_open_in_place_path(path, 0, NULL, &w), want);
    assert_called("npyio_writer_open_in_place_path", path, cause);
    assert_status(npyio_map_open_path(path, 0, NULL, &m), want);
    assert_called("npyio_map_open_path", path, cause);
    assert_status(npyio_map_create_path(path, h, 0, NULL, &m), want);
    assert_called("npyio_map_create_path", path, cause);
    npyio_header_free(h);
    npyio_dtype_unref(dt);
}

static void test_messages_name_the_called_function(void **state)
{
    npyio_dtype *dt = NULL;
    npyio_header *h = NULL, *back = NULL;
    int64_t n = 3;
    double v[3] = {0};
    void *d = NULL;

    (void)state;
    every_path_function_fails("/nonexistent-npyio-dir/x.npy",
                              NPYIO_E_NOT_FOUND, "No such file or directory");
    /* A directory where a file is expected. */
    assert_ok(npyio_dtype_parse("<f8", 3, NULL, &dt));
    assert_ok(npyio_header_new(dt, 1, &n, 0, &h));
    assert_status(npyio_load_with_header("/", 0, NULL, &back, &d), NPYIO_E_IO);
    assert_called("npyio_load_with_header", "/", "Is a directory");
    assert_status(npyio_save_with_header("/tmp", h, v, (size_t)npyio_header_nbytes(h), 0,
                             NULL), NPYIO_E_IO);
    assert_called("npyio_save_with_header", "/tmp", "is a directory");
    npyio_header_free(h);
    npyio_dtype_unref(dt);
}

/* A regular file where the path needs a directory (ENOTDIR) is
 * NPYIO_E_NOT_FOUND from every function that takes a path, as a missing
 * directory is: one mapping of the OS's errors. */
static void test_not_a_directory_is_not_found(void **state)
{
    (void)state;
    every_path_function_fails(NPYIO_TEST_DATA_DIR "/sample.npy/x.npy",
                              NPYIO_E_NOT_FOUND, "Not a directory");
}


/* The message starts with the called function and names no other. */
#define assert_named(function, cause)                                        \
    do {                                                                     \
        const char *m_ = npyio_last_error();                                 \
        if (strncmp(m_, function ": ", strlen(function) + 2) != 0 ||         \
            strstr(m_, cause) == NULL ||                                     \
            strstr(m_ + strlen(function), "npyio_") != NULL)                 \
            fail_msg("message \"%s\": expected %s and \"%s\"", m_,         \
                     function, cause);                                       \
    } while (0)

/* A read callback that serves `left` bytes of `bytes`, then fails. */
struct failing_source {
    const unsigned char *bytes;
    size_t left;
};

static int read_then_fail(void *user, void *buf, size_t cap, size_t *got)
{
    struct failing_source *src = user;
    size_t n = cap < src->left ? cap : src->left;

    if (n == 0)
        return 1;
    memcpy(buf, src->bytes, n);
    src->bytes += n;
    src->left -= n;
    *got = n;
    return 0;
}

static int write_fails(void *user, const void *buf, size_t len, size_t *put)
{
    (void)user, (void)buf, (void)len, (void)put;
    return 1;
}

/* Opens a reader over a source that fails after the header (128 bytes) of
 * sample.npy. */
static npyio_reader *reader_failing_in_data(struct failing_source *src,
                                            const unsigned char *file,
                                            npyio_stream **stream)
{
    npyio_stream_ops ops = {.size = sizeof ops, .read = read_then_fail};
    npyio_reader *r = NULL;

    src->bytes = file;
    src->left = 128 + 8;
    assert_ok(npyio_stream_open_ops(&ops, src, NULL, stream));
    assert_ok(npyio_reader_open_stream(*stream, NULL, &r));
    return r;
}

/* Failures inside the stream, header and I/O layers reach the caller under
 * the name of the function the caller called, with no inner name. */
static void test_io_messages_name_the_called_function(void **state)
{
    /* 64 bytes: a well-formed frame around a dict whose descr is 1. */
    static const char bad[] = "\x93NUMPY\x01\x00\x36\x00{'descr': 1}"
                              "                                         \n";
    char path[] = "/tmp/npyio-test-error-XXXXXX";
    struct failing_source src;
    unsigned char *file, buf[256];
    size_t len, got;
    npyio_stream_ops ops = {.size = sizeof ops, .write = write_fails};
    npyio_stream *s = NULL;
    npyio_reader *r = NULL;
    npyio_writer *w = NULL;
    npyio_header *h = NULL;
    npyio_map *m = NULL;
    void *data = NULL;
    int fd;

    (void)state;
    assert_int_equal(sizeof bad - 1, 64);
    file = read_data_file("sample.npy", &len);
    r = reader_failing_in_data(&src, file, &s);
    assert_status(npyio_reader_read(r, buf, sizeof buf, 0), NPYIO_E_IO);
    assert_named("npyio_reader_read", "read callback failed");
    npyio_reader_close(r);
    npyio_stream_close(s);
    r = reader_failing_in_data(&src, file, &s);
    assert_status(npyio_reader_read_alloc(r, 0, &data, &got), NPYIO_E_IO);
    assert_named("npyio_reader_read_alloc", "read callback failed");
    npyio_reader_close(r);
    npyio_stream_close(s);
    r = reader_failing_in_data(&src, file, &s);
    assert_status(npyio_reader_read_chunk(r, buf, sizeof buf, 0, &got),
                  NPYIO_E_IO);
    assert_named("npyio_reader_read_chunk", "read callback failed");
    npyio_reader_close(r);
    npyio_stream_close(s);

    /* A bad header: the parser's words under the called function. */
    assert_status(npyio_header_parse(bad, sizeof bad - 1, NULL, &h, NULL),
                  NPYIO_E_FORMAT);
    assert_named("npyio_header_parse", "descr");
    assert_ok(npyio_stream_open_memory(bad, sizeof bad - 1, NULL, &s));
    assert_status(npyio_reader_open_stream(s, NULL, &r), NPYIO_E_FORMAT);
    assert_named("npyio_reader_open_stream", "descr");
    npyio_stream_close(s);
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, bad, sizeof bad - 1), (ssize_t)(sizeof bad - 1));
    close(fd);
    assert_status(npyio_map_open_path(path, 0, NULL, &m),
                  NPYIO_E_FORMAT);
    assert_named("npyio_map_open_path", "descr");
    assert_called("npyio_map_open_path", path, "descr");
    assert_status(npyio_writer_open_in_place_path(path, 0, NULL, &w),
                  NPYIO_E_FORMAT);
    assert_called("npyio_writer_open_in_place_path", path, "descr");
    assert_status(npyio_load_with_header(path, 0, NULL, &h,
                                         &data), NPYIO_E_FORMAT);
    assert_called("npyio_load_with_header", path, "descr");
    unlink(path);

    /* A writer whose sink fails: the header cannot be written. */
    assert_ok(npyio_stream_open_memory(file, len, NULL, &s));
    assert_ok(npyio_reader_open_stream(s, NULL, &r));
    {
        npyio_stream *sink = NULL;

        assert_ok(npyio_stream_open_ops(&ops, NULL, NULL, &sink));
        assert_status(npyio_writer_create_stream(sink, npyio_reader_header(r), 0,
                                               NULL, &w), NPYIO_E_IO);
        assert_named("npyio_writer_create_stream", "write callback failed");
        npyio_stream_close(sink);
    }
    npyio_reader_close(r);
    npyio_stream_close(s);
    free(file);
}

/* Calls made of other calls (the task calls, an archive member added by
 * type, a native dtype): a failure inside names the call the caller made
 * and no other, as the library calls its internal bodies, never its
 * public functions that return a status (abi_internal_calls). */
static void test_composite_calls_name_only_the_called_function(void **state)
{
    char path[] = "/tmp/npyio-test-error-XXXXXX";
    static const char *const keys[] = {"a"}, *const types[] = {"=i4"};
    static const int ndims[] = {1}, levels[] = {10};
    static const int64_t shape[] = {-1}, one[] = {1};
    static const int64_t *const shapes[] = {one};
    const void *const data[] = {"abcd"};
    static const size_t lens[] = {4};
    npyio_npz_writer *npz = NULL;
    npyio_dtype *dt = NULL;
    void *out = NULL;
    size_t len = 0;
    int nd = 0, fd;
    int64_t got[4];

    (void)state;
    /* npyio_save: its header is made as npyio_header_new makes one. */
    assert_status(npyio_save("/tmp/npyio-test-unused.npy", "=i4", 1, shape,
                             "", 0, 0, NULL), NPYIO_E_INVALID_ARG);
    assert_named("npyio_save", "shape[0] is negative (-1)");
    /* npyio_savez: members added as npyio_npz_writer_add adds them. */
    fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_status(npyio_savez(path, 1, keys, types, ndims, shapes, data,
                              lens, levels, 0, NULL), NPYIO_E_INVALID_ARG);
    assert_named("npyio_savez", "level 10: 0 stores, 1 to 9 deflate");
    assert_ok(npyio_npz_writer_create_path(path, 0, NULL, &npz));
    assert_status(npyio_npz_writer_add(npz, "a", "=i4", 1, one, "abcd", 4,
                                       10, 0), NPYIO_E_INVALID_ARG);
    assert_named("npyio_npz_writer_add", "level 10");
    npyio_npz_writer_abort(npz);
    unlink(path);
    /* npyio_savez_append and npyio_append open what is not there. */
    assert_status(npyio_savez_append(path, "a", "=i4", 1, one, "abcd", 4, 0,
                                     0, NULL), NPYIO_E_NOT_FOUND);
    assert_called("npyio_savez_append", path, "No such file");
    assert_status(npyio_append(path, "=i4", 1, one, "abcd", 4, 0, NULL),
                  NPYIO_E_NOT_FOUND);
    assert_called("npyio_append", path, "No such file");
    /* npyio_load reads the whole array as the reader's read_alloc does. */
    assert_status(npyio_load(NPYIO_TEST_DATA_DIR "/arrays/object_mixed.npy",
                             NULL, &out, &len, NULL, 0, &nd, got, 4),
                  NPYIO_E_UNSUPPORTED);
    /* (The advice names npyio_reader_read_pickle: no call made.) */
    assert_string_equal(npyio_last_error(),
                        "npyio_load: " NPYIO_TEST_DATA_DIR
                        "/arrays/object_mixed.npy: the array holds Python "
                        "objects, stored as a pickle, which libnpyio never "
                        "unpickles (npyio_reader_read_pickle gives the raw "
                        "bytes)");
    /* npyio_dtype_new_native names itself, not npyio_dtype_new_byteorder
     * (it was a call of that public function). */
    assert_status(npyio_dtype_new_native(NULL, &dt), NPYIO_E_INVALID_ARG);
    assert_named("npyio_dtype_new_native", "dtype");
    assert_null(dt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_values_are_pinned),
        cmocka_unit_test(test_every_status_has_its_own_string),
        cmocka_unit_test(test_version_matches_header),
        cmocka_unit_test(test_every_status_is_produced),
        cmocka_unit_test(test_failure_sets_message),
        cmocka_unit_test(test_long_message_is_cut_at_utf8_boundary),
        cmocka_unit_test(test_message_is_per_thread),
        cmocka_unit_test(test_success_keeps_the_message),
        cmocka_unit_test(test_messages_name_the_called_function),
        cmocka_unit_test(test_io_messages_name_the_called_function),
        cmocka_unit_test(test_composite_calls_name_only_the_called_function),
        cmocka_unit_test(test_not_a_directory_is_not_found),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
