/*
 * test_parallel_read.c - whole reads on several threads (NPYIO_LIMIT_THREADS)
 * give the bytes one thread gives: every .npy file of the corpus
 * (tests/data/arrays) with every read flag and numeric type conversion,
 * arrays of odd sizes (prime element counts, arrays smaller than a part,
 * 0 elements) in C and Fortran order, through npyio_reader_read,
 * npyio_reader_read_alloc, npyio_load, npyio_load_as and
 * npyio_load_with_header, with 1, 2, 3 and 7 threads. Failures (a file
 * cut after it was opened, a conversion that overflows in several parts)
 * are reported exactly as with one thread: the same status and message,
 * and the same bytes before the failing element. A caller's allocator is
 * called from the caller's thread only, and an allocation that fails
 * gives NPYIO_E_NOMEM or one thread's bytes. Parts are cut as small
 * as one element here (npyio__part_bytes_min), so that small arrays take
 * every thread. CI runs this test under ThreadSanitizer (.ci/run).
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "testutil.h"
#include "scratch.h"
#include "threads.h"

static const unsigned thread_counts[] = {2, 3, 7};
#define COUNTS (sizeof thread_counts / sizeof thread_counts[0])

static const uint32_t read_flags[] = {
    0, NPYIO_READ_NATIVE, NPYIO_READ_C_ORDER,
    NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER};
#define FLAGS (sizeof read_flags / sizeof read_flags[0])

/* Target types of the conversions, with the rule that allows them all. */
static const char *const cast_types[] = {"<f8", ">f4", "<i8", ">i2", "u1",
                                         "|b1", "<c16", ">f2"};
#define CASTS (sizeof cast_types / sizeof cast_types[0])

static npyio_options *with_threads(unsigned threads)
{
    npyio_options *o = NULL;

    assert_ok(npyio_options_new(&o));
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_THREADS, threads));
    return o;
}

/* What one read gave: its status, message and bytes. */
typedef struct outcome {
    npyio_status st;
    char message[NPYIO__MESSAGE_CAP];
    unsigned char *data;
    size_t len;
    size_t item; /* bytes of an element delivered */
} outcome;

static void outcome_free(outcome *o)
{
    free(o->data);
    o->data = NULL;
}

static void same_outcome(const outcome *one, const outcome *many,
                         const char *what, unsigned threads)
{
    if (one->st != many->st || strcmp(one->message, many->message) != 0)
        fail_msg("%s on %u threads: status %d \"%s\", one thread: %d \"%s\"",
                 what, threads, (int)many->st, many->message, (int)one->st,
                 one->message);
    size_t len = one->len;
    const char *at = strstr(one->message, "element ");

    /* A failed read leaves the elements before the failing one as one
     * thread does; what lies past it is not specified. */
    if (one->st != NPYIO_OK) {
        unsigned long long first = at != NULL ? strtoull(at + 8, NULL, 10)
                                              : 0;

        len = (size_t)first * one->item < len ? (size_t)first * one->item
                                              : len;
    }
    if (one->len != many->len ||
        (len > 0 && memcmp(one->data, many->data, len) != 0))
        fail_msg("%s on %u threads: the bytes differ from one thread's",
                 what, threads);
}

/* The itemsize of a type string (0 for NULL: not needed). */
static size_t type_size(const char *type)
{
    npyio_dtype *dt = NULL;
    size_t size;

    if (type == NULL)
        return 0;
    assert_ok(npyio_dtype_parse(type, strlen(type), NULL, &dt));
    size = npyio_dtype_itemsize(dt);
    npyio_dtype_unref(dt);
    return size;
}

/*
 * Read `path` whole with `threads` threads: into a buffer of ours
 * (npyio_reader_read, filled with 0xA5 first: bytes a failed read leaves
 * are compared up to the failing element too) or allocated
 * (npyio_reader_read_alloc), with `type` set (NULL: none).
 */
static void read_whole(const char *path, unsigned threads, uint32_t flags,
                       const char *type, bool alloc, outcome *out)
{
    npyio_options *o = with_threads(threads);
    npyio_reader *r = NULL;
    void *block = NULL;

    memset(out, 0, sizeof *out);
    out->item = type_size(type);
    out->st = npyio_reader_open_path(path, o, &r);
    if (out->st == NPYIO_OK && type != NULL)
        out->st = npyio_reader_set_type(r, type, NPYIO_READ_CAST_UNSAFE);
    if (out->st == NPYIO_OK && alloc) {
        out->st = npyio_reader_read_alloc(r, flags, &block, &out->len);
        if (out->st == NPYIO_OK) {
            out->data = malloc(out->len + 1);
            assert_non_null(out->data);
            memcpy(out->data, block, out->len);
        }
        npyio_free(block);
    } else if (out->st == NPYIO_OK) {
        size_t cap = 0;
        const npyio_header *h = npyio_reader_header(r);
        size_t size = type != NULL ? 16 : npyio_dtype_itemsize(npyio_header_dtype(h));

        cap = (size_t)npyio_header_nbytes(h) / (npyio_dtype_itemsize(npyio_header_dtype(h)) | 1) * size +
              (size_t)npyio_header_nbytes(h);
        out->data = malloc(cap + 1);
        assert_non_null(out->data);
        memset(out->data, 0xA5, cap + 1);
        out->st = npyio_reader_read(r, out->data, cap, flags);
        out->len = cap;
    }
    if (out->st != NPYIO_OK)
        snprintf(out->message, sizeof out->message, "%s", npyio_last_error());
    npyio_reader_close(r);
    npyio_options_free(o);
}

/* One read with 1 thread, then with each other count: the same. */
static void compare_read(const char *path, uint32_t flags, const char *type,
                         bool alloc)
{
    outcome one, many;
    size_t i;
    char what[1200];

    snprintf(what, sizeof what, "%s (flags 0x%x, type %s, %s)", path,
             (unsigned)flags, type != NULL ? type : "as stored",
             alloc ? "read_alloc" : "read");
    read_whole(path, 1, flags, type, alloc, &one);
    for (i = 0; i < COUNTS; i++) {
        read_whole(path, thread_counts[i], flags, type, alloc, &many);
        same_outcome(&one, &many, what, thread_counts[i]);
        outcome_free(&many);
    }
    outcome_free(&one);
}

/* Every flag, as stored and converted to every type, both reads. */
static void compare_all(const char *path, bool casts)
{
    size_t f, t;

    for (f = 0; f < FLAGS; f++) {
        compare_read(path, read_flags[f], NULL, true);
        compare_read(path, read_flags[f], NULL, false);
        for (t = 0; casts && t < CASTS; t++) {
            compare_read(path, read_flags[f], cast_types[t], true);
            compare_read(path, read_flags[f], cast_types[t], false);
        }
    }
}

/* Can the file be converted (a numeric scalar type)? */
static bool numeric(const char *path)
{
    npyio_reader *r = NULL;
    bool yes = false;

    if (npyio_reader_open_path(path, NULL, &r) == NPYIO_OK)
        yes = npyio_reader_set_type(r, "<f8", NPYIO_READ_CAST_UNSAFE) ==
              NPYIO_OK;
    npyio_reader_close(r);
    return yes;
}

static void corpus(void **state)
{
    char path[1024];
    struct dirent *e;
    DIR *d = opendir(NPYIO_TEST_DATA_DIR "/arrays");
    size_t files = 0;

    (void)state;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);

        if (n < 4 || strcmp(e->d_name + n - 4, ".npy") != 0)
            continue;
        snprintf(path, sizeof path, "%s/arrays/%s", NPYIO_TEST_DATA_DIR,
                 e->d_name);
        compare_all(path, numeric(path));
        files++;
    }
    closedir(d);
    assert_true(files > 50);
}

/* ---- arrays of odd sizes, written here ------------------------------------- */

/* An array of `type` and shape, its bytes i * 37 + 11 (mod 256), with a
 * few whole values set to something each type converts (small integers). */
static void write_array(const char *name, const char *type, int ndim,
                        const int64_t *shape, int fortran, char *path)
{
    npyio_header *h = make_header(type, ndim, shape, fortran);
    size_t n = (size_t)npyio_header_nbytes(h), i;
    unsigned char *data = malloc(n + 1);

    assert_non_null(data);
    for (i = 0; i < n; i++)
        data[i] = (unsigned char)(i * 37 + 11);
    if (type[1] == 'f' && type[2] == '8') /* finite doubles: whole values */
        for (i = 0; i < n / 8; i++) {
            double v = (double)(i % 1000) - 500.0;

            memcpy(data + i * 8, &v, 8);
            if (type[0] != '=' && type[0] != host_order()) {
                unsigned char *b = data + i * 8, t;
                int k;

                for (k = 0; k < 4; k++) {
                    t = b[k];
                    b[k] = b[7 - k];
                    b[7 - k] = t;
                }
            }
        }
    path_in_dir(path, 1024, name);
    assert_ok(npyio_save_with_header(path, h, data, n, NPYIO_WRITE_NO_SYNC,
                                     NULL));
    free(data);
    npyio_header_free(h);
}

typedef struct odd_case {
    const char *type;
    int ndim;
    int64_t shape[3];
} odd_case;

static const odd_case odd_cases[] = {
    {"<f8", 1, {0, 0, 0}},     {">f8", 1, {1, 0, 0}},
    {">f8", 1, {2, 0, 0}},     {"<f8", 1, {7, 0, 0}},
    {">f8", 1, {1009, 0, 0}},  {"<i2", 1, {65537, 0, 0}},
    {">f8", 2, {13, 17, 0}},   {"<f8", 2, {31, 1, 0}},
    {">i4", 2, {1, 31, 0}},    {">f8", 3, {5, 7, 3}},
    {"<f8", 3, {97, 3, 2}},    {">c16", 2, {11, 3, 0}},
    {"<f8", 2, {0, 5, 0}},     {"|u1", 2, {101, 3, 0}},
    {">f8", 0, {0, 0, 0}},
};

static void odd_sizes(void **state)
{
    char path[1024], name[64];
    size_t i;
    int fortran;

    (void)state;
    for (i = 0; i < sizeof odd_cases / sizeof odd_cases[0]; i++)
        for (fortran = 0; fortran < 2; fortran++) {
            snprintf(name, sizeof name, "odd%zu_%d.npy", i, fortran);
            write_array(name, odd_cases[i].type, odd_cases[i].ndim,
                        odd_cases[i].shape, fortran, path);
            compare_all(path, true);
        }
}

/* Parts of the usual size too: 2 MiB and more, one part per thread. */
static void large_parts(void **state)
{
    static const int64_t flat[1] = {(1 << 20) + 7}; /* 8 MiB of >f8 */
    static const int64_t rows[2] = {1031, 1021};    /* Fortran, 8 MiB */
    char path[1024];
    size_t saved = npyio__part_bytes_min;

    (void)state;
    npyio__part_bytes_min = (size_t)2 << 20;
    write_array("large_flat.npy", ">f8", 1, flat, 0, path);
    compare_read(path, NPYIO_READ_NATIVE, NULL, true);
    compare_read(path, 0, "<f4", true);
    write_array("large_fortran.npy", ">f8", 2, rows, 1, path);
    compare_read(path, NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER, NULL, true);
    compare_read(path, NPYIO_READ_C_ORDER, "<f4", false);
    npyio__part_bytes_min = saved;
}

/* ---- the one-call loads ----------------------------------------------------- */

static void one_call_loads(void **state)
{
    static const int64_t shape[2] = {61, 37};
    char path[1024], type_one[64], type_many[64];
    size_t i;

    (void)state;
    write_array("loads.npy", ">f8", 2, shape, 1, path);
    for (i = 0; i < COUNTS; i++) {
        npyio_options *o1 = with_threads(1);
        npyio_options *on = with_threads(thread_counts[i]);
        void *a = NULL, *b = NULL;
        size_t la = 0, lb = 0;
        int nd = 0;
        int64_t sh[4];
        npyio_header *ha = NULL, *hb = NULL;

        assert_ok(npyio_load(path, o1, &a, &la, type_one, sizeof type_one,
                             &nd, sh, 4));
        assert_ok(npyio_load(path, on, &b, &lb, type_many, sizeof type_many,
                             &nd, sh, 4));
        assert_int_equal(la, lb);
        assert_memory_equal(a, b, la);
        assert_string_equal(type_one, type_many);
        npyio_free(a);
        npyio_free(b);
        assert_ok(npyio_load_as(path, "<i4", NPYIO_READ_CAST_UNSAFE, o1, &a,
                                &la, &nd, sh, 4));
        assert_ok(npyio_load_as(path, "<i4", NPYIO_READ_CAST_UNSAFE, on, &b,
                                &lb, &nd, sh, 4));
        assert_int_equal(la, lb);
        assert_memory_equal(a, b, la);
        npyio_free(a);
        npyio_free(b);
        assert_ok(npyio_load_with_header(path, NPYIO_READ_NATIVE |
                                         NPYIO_READ_C_ORDER, o1, &ha, &a));
        assert_ok(npyio_load_with_header(path, NPYIO_READ_NATIVE |
                                         NPYIO_READ_C_ORDER, on, &hb, &b));
        assert_memory_equal(a, b, (size_t)npyio_header_nbytes(ha));
        npyio_free(a);
        npyio_free(b);
        npyio_header_free(ha);
        npyio_header_free(hb);
        npyio_options_free(o1);
        npyio_options_free(on);
    }
}

/* ---- failures ----------------------------------------------------------------- */

/* A conversion to int32 that overflows at two elements in different
 * parts: the first by index is named, as one thread names it. */
static void overflow_first_by_index(void **state)
{
    static const int64_t shape[2] = {101, 13};
    char path[1024];
    double *v = NULL;
    npyio_header *h = NULL;
    size_t n = 101 * 13, i, f;

    (void)state;
    for (f = 0; f < 2; f++) {
        h = make_header("=f8", 2, shape, (int)f);
        v = malloc(n * sizeof *v);
        assert_non_null(v);
        for (i = 0; i < n; i++)
            v[i] = (double)i;
        v[1000] = 1e30; /* in a later part */
        v[400] = -1e30; /* the first by index (in file order) */
        path_in_dir(path, sizeof path, "overflow.npy");
        assert_ok(npyio_save_with_header(path, h, v, n * sizeof *v,
                                         NPYIO_WRITE_NO_SYNC, NULL));
        compare_read(path, 0, "<i4", true);
        compare_read(path, 0, "<i4", false);
        compare_read(path, NPYIO_READ_C_ORDER, "<i4", false);
        free(v);
        npyio_header_free(h);
    }
}

/* The file cut after the reader opened it: the read fails as one
 * thread's does (status and message), wherever the cut falls. */
static void cut_after_open(const char *path, off_t keep, unsigned threads,
                           uint32_t flags, const char *type, outcome *out)
{
    npyio_options *o = with_threads(threads);
    npyio_reader *r = NULL;
    size_t cap = (size_t)1 << 20;

    memset(out, 0, sizeof *out);
    assert_ok(npyio_reader_open_path(path, o, &r));
    if (type != NULL)
        assert_ok(npyio_reader_set_type(r, type, NPYIO_READ_CAST_UNSAFE));
    assert_int_equal(truncate(path, keep), 0);
    out->data = malloc(cap);
    assert_non_null(out->data);
    memset(out->data, 0xA5, cap);
    out->st = npyio_reader_read(r, out->data, cap, flags);
    out->len = cap;
    out->item = type != NULL ? type_size(type) : 8;
    snprintf(out->message, sizeof out->message, "%s", npyio_last_error());
    npyio_reader_close(r);
    npyio_options_free(o);
}

static void short_file(void **state)
{
    static const int64_t shape[2] = {67, 29};
    static const uint32_t flags[] = {0, NPYIO_READ_NATIVE,
                                     NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER};
    static const char *const types[] = {NULL, "<f4"};
    char path[1024];
    outcome one, many;
    size_t f, t, i;
    int fortran;

    (void)state;
    for (fortran = 0; fortran < 2; fortran++)
        for (f = 0; f < 3; f++)
            for (t = 0; t < 2; t++)
                for (i = 0; i < COUNTS; i++) {
                    write_array("short.npy", ">f8", 2, shape, fortran, path);
                    cut_after_open(path, 128 + 67 * 29 * 8 / 2 + 3, 1,
                                   flags[f], types[t], &one);
                    write_array("short.npy", ">f8", 2, shape, fortran, path);
                    cut_after_open(path, 128 + 67 * 29 * 8 / 2 + 3,
                                   thread_counts[i], flags[f], types[t],
                                   &many);
                    assert_int_equal(one.st, NPYIO_E_TRUNCATED);
                    same_outcome(&one, &many, "a file cut short",
                                 thread_counts[i]);
                    outcome_free(&one);
                    outcome_free(&many);
                }
}

/* ---- the caller's allocator ---------------------------------------------------- */

/* Counts calls, fails the one numbered fail_at (0: none), and notes any
 * call from another thread than the caller's. */
typedef struct counting {
    pthread_t caller;
    int calls, fail_at, foreign;
} counting;

static void *count_alloc(void *user, size_t size, size_t alignment)
{
    counting *c = user;
    void *p = NULL;

    if (!pthread_equal(pthread_self(), c->caller))
        c->foreign++; /* a race TSan reports too */
    if (++c->calls == c->fail_at)
        return NULL;
    if (posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *)
                                                     : alignment,
                       size ? size : 1) != 0)
        return NULL;
    return p;
}

static void count_free(void *user, void *ptr, size_t size)
{
    (void)user;
    (void)size;
    free(ptr);
}

/* Every allocation is made on the caller's thread; one that fails makes
 * the read fail with NPYIO_E_NOMEM or take one thread: never other bytes
 * or another failure. */
static void allocator_calls(void **state)
{
    static const npyio_allocator table = {sizeof table, count_alloc, NULL,
                                          count_free};
    static const int64_t shape[2] = {41, 23};
    static const char *const types[] = {NULL, "<f4"};
    char path[1024];
    outcome one;
    size_t t;
    int k;

    (void)state;
    write_array("alloc.npy", ">f8", 2, shape, 1, path);
    for (t = 0; t < 2; t++) {
        read_whole(path, 1, NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER, types[t],
                   true, &one);
        assert_ok(one.st);
        for (k = 0; k < 40; k++) {
            counting c = {pthread_self(), 0, k, 0};
            npyio_options *o = with_threads(3);
            npyio_reader *r = NULL;
            void *data = NULL;
            size_t len = 0;
            npyio_status st;

            assert_ok(npyio_options_set_allocator(o, &table, &c));
            st = npyio_reader_open_path(path, o, &r);
            if (st == NPYIO_OK && types[t] != NULL)
                st = npyio_reader_set_type(r, types[t],
                                           NPYIO_READ_CAST_UNSAFE);
            if (st == NPYIO_OK)
                st = npyio_reader_read_alloc(r, NPYIO_READ_NATIVE |
                                             NPYIO_READ_C_ORDER, &data, &len);
            assert_true(st == NPYIO_OK || st == NPYIO_E_NOMEM);
            if (st == NPYIO_OK) {
                assert_int_equal(len, one.len);
                assert_memory_equal(data, one.data, len);
            }
            npyio_free(data);
            npyio_reader_close(r);
            npyio_options_free(o);
            assert_int_equal(c.foreign, 0);
        }
        outcome_free(&one);
    }
}

static int setup(void **state)
{
    (void)state;
    npyio__part_bytes_min = 1; /* before any thread starts */
    return scratch_make("npyio-parallel");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(corpus),
        cmocka_unit_test(odd_sizes),
        cmocka_unit_test(large_parts),
        cmocka_unit_test(one_call_loads),
        cmocka_unit_test(overflow_first_by_index),
        cmocka_unit_test(short_file),
        cmocka_unit_test(allocator_calls),
    };

    return cmocka_run_group_tests(tests, setup, scratch_remove);
}
