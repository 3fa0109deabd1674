/*
 * test_threads.c - many threads at once doing what the API says threads
 * may do together: share dtypes (reference counted), headers and options
 * (read-only), read one .npy file and one archive handle at once, write
 * files of their own, and keep their own last error. Every result is
 * checked here; data races are ThreadSanitizer's to find: CI runs this
 * test in a build with NPYIO_TSAN=ON (.ci/run).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "scratch.h"

#define THREADS 8
#define ROUNDS 12
#define COUNT 4096    /* elements of the shared array */
#define MEMBERS 4

typedef struct shared {
    const npyio_options *options;
    const npyio_dtype *dtype;   /* '>f8', borrowed from header */
    const npyio_header *header; /* (COUNT,) of '>f8' */
    unsigned char *emitted;     /* the header's bytes, emitted once */
    size_t emitted_len;
    double want[COUNT];         /* native values */
    char npy_path[256];
    npyio_npz *npz;             /* MEMBERS members m0..m3, stored and
                                   deflated alternately */
} shared;

typedef struct worker {
    shared *s;
    int id;
    int failures;
    char first[256]; /* what failed first */
} worker;

static void failed(worker *w, const char *what, int round)
{
    if (w->failures++ == 0)
        snprintf(w->first, sizeof w->first, "thread %d round %d: %s (%s)",
                 w->id, round, what, npyio_last_error());
}

/* Member m holds want[] times (m + 1). */
static int member_ok(const shared *s, const double *got, size_t len, int m)
{
    size_t i;

    if (len != sizeof s->want)
        return 0;
    for (i = 0; i < COUNT; i++)
        if (got[i] != s->want[i] * (m + 1))
            return 0;
    return 1;
}

/* A dtype and header from the shared ones: reference, read, emit. */
static void use_shared_types(worker *w, int round)
{
    const shared *s = w->s;
    npyio_dtype *d = npyio_dtype_ref((npyio_dtype *)s->dtype);
    npyio_header *h = NULL;
    int64_t shape[1] = {COUNT};
    unsigned char buf[256];
    size_t len = 0;

    if (npyio_dtype_itemsize(d) != 8 || npyio_dtype_byteorder(d) != '>' ||
        npyio_header_new(d, 1, shape, 0, &h) != NPYIO_OK ||
        npyio_header_emit(h, 0, buf, sizeof buf, &len) != NPYIO_OK ||
        len != s->emitted_len || memcmp(buf, s->emitted, len) != 0 ||
        npyio_header_emit(s->header, 0, buf, sizeof buf, &len) != NPYIO_OK ||
        len != s->emitted_len)
        failed(w, "shared dtype and header", round);
    npyio_header_free(h);
    npyio_dtype_unref(d);
}

static void read_shared_file(worker *w, int round)
{
    const shared *s = w->s;
    npyio_header *h = NULL;
    npyio_reader *r = NULL;
    double rows[16];
    void *data = NULL;
    int64_t first = (int64_t)((w->id * 131 + round * 17) % (COUNT - 16));
    int ok;

    ok = npyio_load_with_header(s->npy_path, NPYIO_READ_NATIVE, s->options, &h,
                                &data) ==
             NPYIO_OK &&
         member_ok(s, data, (size_t)npyio_header_nbytes(h), 0);
    npyio_free(data);
    npyio_header_free(h);
    ok = ok && npyio_reader_open_path(s->npy_path, s->options, &r) ==
                   NPYIO_OK &&
         npyio_reader_read_rows(r, first, 16, rows, sizeof rows,
                                NPYIO_READ_NATIVE) == NPYIO_OK &&
         memcmp(rows, s->want + first, sizeof rows) == 0;
    npyio_reader_close(r);
    if (!ok)
        failed(w, "reading the shared file", round);
}

static void read_shared_archive(worker *w, int round)
{
    const shared *s = w->s;
    int m = (w->id + round) % MEMBERS;
    npyio_reader *r = NULL;
    void *data = NULL;
    size_t len = 0;
    int ok = npyio_reader_open_member(s->npz, (size_t)m, &r) == NPYIO_OK &&
             npyio_reader_read_alloc(r, NPYIO_READ_NATIVE, &data, &len) ==
                 NPYIO_OK &&
             member_ok(s, data, len, m);

    npyio_free(data);
    npyio_reader_close(r);
    if (!ok || npyio_npz_verify(s->npz, (size_t)((m + 1) % MEMBERS)) !=
                   NPYIO_OK)
        failed(w, "reading the shared archive", round);
}

/* A file and an archive of the thread's own, written and read back. */
static void write_own_files(worker *w, int round)
{
    const shared *s = w->s;
    char npy[256], npz[256], key[32];
    const char *keys[1] = {key};
    const npyio_header *headers[1] = {s->header};
    npyio_header *h = NULL;
    void *data = NULL, *raw = NULL;
    size_t len = 0;
    int ok;

    snprintf(npy, sizeof npy, "%s/own-%d.npy", dir, w->id);
    snprintf(npz, sizeof npz, "%s/own-%d.npz", dir, w->id);
    snprintf(key, sizeof key, "t%dr%d", w->id, round);
    /* The shared array's file bytes, as stored ('>f8'). */
    ok = npyio_load_with_header(s->npy_path, 0, s->options, &h,
                                &raw) == NPYIO_OK;
    npyio_header_free(h);
    h = NULL;
    ok = ok && npyio_save_with_header(npy, s->header, raw, sizeof s->want,
                          NPYIO_WRITE_NO_SYNC, s->options) == NPYIO_OK;
    {
        const void *arrays[1] = {raw};
        size_t lens[1] = {sizeof s->want};
        int levels[1] = {round % 2 ? 6 : 0};

        ok = ok && npyio_savez_with_header(npz, 1, keys, headers, arrays, lens,
                                  levels, NPYIO_WRITE_NO_SYNC,
                                  s->options) == NPYIO_OK;
    }
    ok = ok && npyio_load_with_header(npy, NPYIO_READ_NATIVE, s->options, &h,
                                      &data) ==
                   NPYIO_OK &&
         member_ok(s, data, (size_t)npyio_header_nbytes(h), 0);
    npyio_free(data);
    npyio_header_free(h);
    h = NULL;
    data = NULL;
    ok = ok && npz_load_key(npz, key, s->options, &data, &len) == NPYIO_OK &&
         member_ok(s, data, len, 0);
    npyio_free(data);
    npyio_free(raw);
    npyio_header_free(h);
    (void)len;
    if (!ok)
        failed(w, "writing files of its own", round);
}

/* A failure whose message only this thread can have made, still there
 * after the others' work and after this thread's own successes. */
static void own_last_error(worker *w, int round)
{
    char path[256], mine[64];
    npyio_header *h = NULL;
    void *data = NULL;

    snprintf(mine, sizeof mine, "missing-thread-%d-round-%d", w->id, round);
    snprintf(path, sizeof path, "%s/%s.npy", dir, mine);
    if (npyio_load_with_header(path, 0, w->s->options, &h,
                               &data) != NPYIO_E_NOT_FOUND ||
        strstr(npyio_last_error(), mine) == NULL)
        failed(w, "its own failure", round);
    use_shared_types(w, round); /* successes leave the message alone */
    if (strstr(npyio_last_error(), mine) == NULL)
        failed(w, "its last error kept", round);
}

static void *work(void *arg)
{
    worker *w = arg;
    int round;

    for (round = 0; round < ROUNDS; round++) {
        use_shared_types(w, round);
        read_shared_file(w, round);
        read_shared_archive(w, round);
        write_own_files(w, round);
        own_last_error(w, round);
    }
    return NULL;
}

/* The shared file and archive, written before the threads start. */
static void make_shared(shared *s, npyio_options *o)
{
    static double scaled[MEMBERS][COUNT];
    npyio_header *h = NULL;
    npyio_npz_writer *w = NULL;
    char npz[256];
    size_t i;
    int m;

    for (i = 0; i < COUNT; i++)
        s->want[i] = (double)i * 0.5 - 7.0;
    h = make_header(">f8", 1, (const int64_t[]){COUNT}, 0);
    {
        /* The file holds big-endian bytes: want[] swapped. */
        double be[COUNT];

        memcpy(be, s->want, sizeof be);
        assert_ok(npyio_dtype_swap(npyio_header_dtype(h), be, sizeof be));
        if (host_order() == '>')
            assert_ok(npyio_dtype_swap(npyio_header_dtype(h), be,
                                       sizeof be)); /* already big */
        assert_ok(npyio_save_with_header(s->npy_path, h, be, sizeof be,
                             NPYIO_WRITE_NO_SYNC, o));
    }
    s->header = h;
    s->dtype = npyio_header_dtype(h);
    assert_status(npyio_header_emit(h, 0, NULL, 0, &s->emitted_len),
                  NPYIO_E_BUFFER_TOO_SMALL);
    s->emitted = malloc(s->emitted_len);
    assert_ok(npyio_header_emit(h, 0, s->emitted, s->emitted_len,
                                &s->emitted_len));
    path_in_dir(npz, sizeof npz, "shared.npz");
    assert_ok(npyio_npz_writer_create_path(npz, NPYIO_WRITE_NO_SYNC, o, &w));
    for (m = 0; m < MEMBERS; m++) {
        npyio_header *native = NULL;
        char key[8];

        for (i = 0; i < COUNT; i++)
            scaled[m][i] = s->want[i] * (m + 1);
        snprintf(key, sizeof key, "m%d", m);
        native = make_header("=f8", 1, (const int64_t[]){COUNT}, 0);
        assert_ok(npyio_npz_writer_add_with_header(w, key, native, scaled[m],
                                                   sizeof scaled[m],
                                                   m % 2 ? 6 : 0, 0));
        npyio_header_free(native);
    }
    assert_ok(npyio_npz_writer_close(w));
    assert_ok(npyio_npz_open_path(npz, o, &s->npz));
}

static void test_many_threads(void **state)
{
    static shared s;
    npyio_options *o = NULL;
    pthread_t t[THREADS];
    worker w[THREADS];
    int i;

    (void)state;
    assert_ok(npyio_options_new(&o));
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_THREADS, 2));
    s.options = o;
    path_in_dir(s.npy_path, sizeof s.npy_path, "shared.npy");
    make_shared(&s, o);
    for (i = 0; i < THREADS; i++) {
        w[i] = (worker){&s, i, 0, ""};
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    for (i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    for (i = 0; i < THREADS; i++)
        if (w[i].failures > 0)
            fail_msg("%d failures; first: %s", w[i].failures, w[i].first);
    assert_ok(npyio_npz_close(s.npz));
    npyio_header_free((npyio_header *)s.header);
    free(s.emitted);
    npyio_options_free(o);
}

/* ---- readers while another process appends ------------------------------------------ */

#define READERS 4
#define APPENDS 300 /* one row each, by the other process */
#define LOADS 60    /* whole loads by each reader thread */

typedef struct reader_job {
    const char *path;
    int loaded, torn, wrong;
    int64_t most_rows;
    char first[256];
} reader_job;

/* Load the growing file again and again on a handle of its own: every
 * load that succeeds is a prefix of the rows (i, i, i); the header may be
 * caught mid-rewrite (a count past the file's end: NPYIO_E_TRUNCATED, or
 * a garbled header), which is counted, not a failure. */
static void *load_growing(void *arg)
{
    reader_job *j = arg;
    int n;

    for (n = 0; n < LOADS; n++) {
        npyio_header *h = NULL;
        int32_t *d = NULL;
        npyio_status st = npyio_load_with_header(j->path, NPYIO_READ_NATIVE, NULL, &h,
                                     (void **)&d);
        int64_t rows, i;

        if (st == NPYIO_E_TRUNCATED || st == NPYIO_E_FORMAT) {
            j->torn++;
            continue;
        }
        if (st != NPYIO_OK) {
            if (j->wrong++ == 0)
                snprintf(j->first, sizeof j->first, "%s",
                         npyio_last_error());
            continue;
        }
        rows = npyio_header_shape(h)[0];
        for (i = 0; i < 3 * rows; i++)
            if (d[i] != (int32_t)(i / 3) && j->wrong++ == 0)
                snprintf(j->first, sizeof j->first, "element %lld is %d",
                         (long long)i, d[i]);
        if (rows > j->most_rows)
            j->most_rows = rows;
        j->loaded++;
        npyio_free(d);
        npyio_header_free(h);
    }
    return NULL;
}

/* Four threads, each with handles of its own, load one file while another
 * process appends rows to it (issue 28): every load they complete is whole
 * and right; ThreadSanitizer (CI) watches the threads. */
static void test_readers_while_another_process_appends(void **state)
{
    static const int64_t two[2] = {2, 3};
    static const int32_t first[6] = {0, 0, 0, 1, 1, 1};
    char path[256];
    pthread_t t[READERS];
    reader_job j[READERS];
    pid_t child;
    int i, status = 0;

    (void)state;
    path_in_dir(path, sizeof path, "growing.npy");
    assert_ok(npyio_save(path, "=i4", 2, two, first, sizeof first,
                               NPYIO_WRITE_NO_SYNC, NULL));
    child = fork();
    assert_true(child >= 0);
    if (child == 0) { /* the appender: no cmocka here */
        static const int64_t one[2] = {1, 3};
        npyio_dtype *dt = NULL;
        npyio_header *row = NULL;
        int k;

        if (npyio_dtype_parse("'=i4'", 5, NULL, &dt) != NPYIO_OK ||
            npyio_header_new(dt, 2, one, 0, &row) != NPYIO_OK)
            _exit(2);
        for (k = 2; k < 2 + APPENDS; k++) {
            int32_t v[3] = {k, k, k};
            npyio_writer *w = NULL;

            if (npyio_writer_open_append_path(path, row, NPYIO_WRITE_NO_SYNC |
                                                        NPYIO_WRITE_WAIT_FOR_LOCK,
                                         NULL, &w) != NPYIO_OK ||
                npyio_writer_write(w, v, sizeof v) != NPYIO_OK ||
                npyio_writer_close(w) != NPYIO_OK)
                _exit(1);
        }
        _exit(0);
    }
    for (i = 0; i < READERS; i++) {
        j[i] = (reader_job){path, 0, 0, 0, 0, ""};
        assert_int_equal(pthread_create(&t[i], NULL, load_growing, &j[i]),
                         0);
    }
    for (i = 0; i < READERS; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    for (i = 0; i < READERS; i++) {
        if (j[i].wrong > 0)
            fail_msg("reader %d: %d wrong loads; first: %s", i, j[i].wrong,
                     j[i].first);
        assert_true(j[i].loaded > 0);
        print_message("reader %d: %d loads (at most %lld rows), %d caught "
                      "mid-rewrite\n", i, j[i].loaded,
                      (long long)j[i].most_rows, j[i].torn);
    }
    {
        npyio_header *h = NULL;
        void *d = NULL;

        assert_ok(npyio_load_with_header(path, 0, NULL, &h, &d));
        assert_int_equal(npyio_header_shape(h)[0], 2 + APPENDS);
        npyio_free(d);
        npyio_header_free(h);
    }
}

static int setup(void **state)
{
    (void)state;
    return scratch_make("test_threads");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_many_threads),
        cmocka_unit_test(test_readers_while_another_process_appends),
    };

    return cmocka_run_group_tests(tests, setup, scratch_remove);
}
