/*
 * test_callbacks.c - the contract of npyio_stream_ops' optional members
 * (issue 30), on a caller's stream over a descriptor (interop/fd_ops.h):
 * a table of an older caller (four members) still reads and writes and
 * is refused where positioned I/O is needed; members this version does
 * not know refused; the lock callback's answers; a positioned write that
 * fails undone; a stream without seek refused where seeking is needed;
 * members of an archive read on two threads at once through pread; and
 * the results of appends, rows in place and archive appends the same
 * bytes as the path calls make (an archive append refused with an old
 * temporary or a busy lock). npyio_stream_open_path's flags, read-write
 * without truncation among them.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "scratch.h"
#include "../interop/fd_ops.h"

enum { ROWS = 6, COLS = 5 };

/* A (rows, COLS) '=f8' array (host order: no byte order assumed), element
 * (i, j) = base + i * COLS + j, saved at path by the path writer. */
static void save_rows(const char *path, int64_t rows, double base)
{
    int64_t shape[2] = {rows, COLS}, i;
    npyio_header *h = make_header("=f8", 2, shape, 0);
    double *d = malloc(sizeof *d * (size_t)(rows * COLS + 1));

    assert_non_null(d);
    for (i = 0; i < rows * COLS; i++)
        d[i] = base + (double)i;
    assert_ok(npyio_save_with_header(path, h, d, sizeof *d * (size_t)(rows * COLS),
                         NPYIO_WRITE_NO_SYNC, NULL));
    npyio_header_free(h);
    free(d);
}

/* A whole file (archives here are over scratch.h's 1 MiB). */
static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf;
    long end;

    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    end = ftell(f);
    assert_true(end >= 0);
    rewind(f);
    buf = malloc((size_t)end + 1);
    assert_non_null(buf);
    *len = fread(buf, 1, (size_t)end, f);
    assert_int_equal(*len, (size_t)end);
    fclose(f);
    return buf;
}

static void copy_file(const char *from, const char *to)
{
    size_t len = 0;
    unsigned char *bytes = slurp(from, &len);
    FILE *f = fopen(to, "wb");

    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    free(bytes);
}

/* NAME.npy and NAME_COPY.npy in the scratch directory: the array of
 * save_rows() and a copy of it. */
static void saved_pair(const char *name, const char *copy, char *path,
                       char *other)
{
    char file[64];

    snprintf(file, sizeof file, "%s.npy", name);
    path_in_dir(path, 128, file);
    snprintf(file, sizeof file, "%s.npy", copy);
    path_in_dir(other, 128, file);
    save_rows(path, ROWS, 0);
    copy_file(path, other);
}

static void assert_same_files(const char *a, const char *b)
{
    size_t la = 0, lb = 0;
    unsigned char *x = slurp(a, &la), *y = slurp(b, &lb);

    assert_int_equal(la, lb);
    assert_memory_equal(x, y, la);
    free(x);
    free(y);
}

/* A stream of the caller's callbacks over path, read-write. */
static npyio_stream *open_cb(const char *path, const char *kind,
                             fd_user **u)
{
    npyio_stream *s = NULL;

    assert_ok(fd_ops_open(path, O_RDWR, kind, &s, u));
    return s;
}

/* Append k rows (values from 1000) through a writer opened by `open`
 * on s (NULL: by path). */
static npyio_status append_rows(const char *path, npyio_stream *s,
                                int64_t k, uint32_t flags)
{
    int64_t shape[2] = {k, COLS}, i;
    npyio_header *h = make_header("=f8", 2, shape, 0);
    double d[64];
    npyio_writer *w = NULL;
    npyio_status st;

    for (i = 0; i < k * COLS; i++)
        d[i] = 1000 + (double)i;
    st = s != NULL ? npyio_writer_open_append_stream(s, h, flags, NULL, &w)
                   : npyio_writer_open_append_path(path, h, flags, NULL, &w);
    npyio_header_free(h);
    if (st != NPYIO_OK)
        return st;
    st = npyio_writer_write(w, d, sizeof *d * (size_t)(k * COLS));
    if (st != NPYIO_OK) {
        npyio_writer_abort(w);
        return st;
    }
    return npyio_writer_close(w);
}

/* ---- the table ---------------------------------------------------------- */

/* A table of the four members an older caller knows: the members after
 * them are set too, and must not be read. */
static void test_old_table(void **state)
{
    char path[128];
    fd_user *u = NULL;
    npyio_stream *s;
    npyio_reader *r = NULL;
    npyio_writer *w = NULL;
    void *data = NULL;
    size_t len = 0;

    (void)state;
    path_in_dir(path, sizeof path, "old.npy");
    save_rows(path, ROWS, 0);
    s = open_cb(path, "old", &u);
    assert_ok(npyio_reader_open_stream(s, NULL, &r));
    assert_ok(npyio_reader_read_alloc(r, 0, &data, &len));
    assert_int_equal(len, sizeof(double) * ROWS * COLS);
    assert_true(((double *)data)[7] == 7.0);
    npyio_free(data);
    npyio_reader_close(r);
    assert_status(append_rows(path, s, 1, 0), NPYIO_E_UNSUPPORTED);
    assert_error_contains("npyio_writer_open_append_stream: the callbacks "
                          "stream cannot read at an offset");
    assert_status(npyio_writer_open_in_place_stream(s, 0, NULL, &w),
                  NPYIO_E_UNSUPPORTED);
    assert_null(w);
    assert_int_equal(atomic_load(&u->preads), 0);
    assert_int_equal(atomic_load(&u->pwrites), 0);
    assert_int_equal(atomic_load(&u->locks), 0);
    assert_ok(fd_ops_close(s, u));
}

/* A table from a newer header: members this version does not know must be
 * zero. */
static void test_unknown_members(void **state)
{
    struct {
        npyio_stream_ops ops;
        int (*later)(void *user);
    } newer;
    npyio_stream *s = NULL;

    (void)state;
    assert_true(fd_ops_table("full", &newer.ops));
    newer.ops.size = sizeof newer;
    newer.later = fdo_close;
    assert_status(npyio_stream_open_ops(&newer.ops, NULL, NULL, &s),
                  NPYIO_E_UNSUPPORTED);
    assert_error_contains("sets members beyond");
    assert_null(s);
    newer.later = NULL;
    newer.ops.close = NULL; /* nothing to close: user is NULL */
    assert_ok(npyio_stream_open_ops(&newer.ops, NULL, NULL, &s));
    assert_ok(npyio_stream_close(s));
}

/* ---- locks -------------------------------------------------------------- */

/* The kind of lock asked for, and a lock held by another. */
static void test_lock(void **state)
{
    char path[128], before[128];
    fd_user *u = NULL;
    npyio_stream *s;
    npyio_writer *w = NULL;

    (void)state;
    saved_pair("lock", "lock_before", path, before);
    s = open_cb(path, "full", &u);
    assert_ok(append_rows(path, s, 1, NPYIO_WRITE_WAIT_FOR_LOCK));
    assert_int_equal(u->last_lock_exclusive, 1);
    assert_int_equal(u->last_lock_wait, 1);
    assert_ok(npyio_writer_open_in_place_stream(s, 0, NULL, &w));
    assert_int_equal(u->last_lock_exclusive, 0);
    assert_int_equal(u->last_lock_wait, 0);
    assert_ok(npyio_writer_close(w));
    assert_ok(fd_ops_close(s, u));
    copy_file(before, path);
    s = open_cb(path, "full", &u);
    u->lock_busy = 1;
    assert_status(append_rows(path, s, 1, 0), NPYIO_E_LOCKED);
    assert_error_contains("holds a lock that conflicts with the exclusive");
    assert_status(npyio_writer_open_in_place_stream(s, 0, NULL, &w),
                  NPYIO_E_LOCKED);
    assert_null(w);
    assert_int_equal(atomic_load(&u->pwrites), 0);
    assert_int_equal(atomic_load(&u->writes), 0);
    assert_ok(fd_ops_close(s, u));
    assert_same_files(path, before);
}

/* The path appender's lock and the callbacks' (both open file description
 * locks) exclude each other. */
static void test_lock_against_path(void **state)
{
    char path[128];
    fd_user *u = NULL;
    npyio_stream *s;
    npyio_writer *w = NULL;
    int64_t shape[2] = {1, COLS};
    npyio_header *h = make_header("=f8", 2, shape, 0);

    (void)state;
    path_in_dir(path, sizeof path, "lock_path.npy");
    save_rows(path, ROWS, 0);
    assert_ok(npyio_writer_open_append_path(path, h, 0, NULL, &w));
    s = open_cb(path, "full", &u);
    assert_status(append_rows(path, s, 1, 0), NPYIO_E_LOCKED);
    npyio_writer_abort(w);
    assert_ok(fd_ops_close(s, u));
    npyio_header_free(h);
}

/* ---- failures undone ---------------------------------------------------- */

/* A positioned write that fails (the header's new row count), and a
 * write of the rows that fails: NPYIO_E_IO, the file as it was. */
static void test_failures_undone(void **state)
{
    char path[128], before[128];
    fd_user *u = NULL;
    npyio_stream *s;

    (void)state;
    saved_pair("undo", "undo_before", path, before);
    s = open_cb(path, "full", &u);
    u->pwrite_fail_at = 1;
    assert_status(append_rows(path, s, 2, 0), NPYIO_E_IO);
    assert_error_contains("the pwrite callback failed");
    assert_true(atomic_load(&u->truncates) >= 1);
    assert_ok(fd_ops_close(s, u));
    assert_same_files(path, before);
    s = open_cb(path, "nolock", &u);
    u->write_fail_at = 1;
    assert_status(append_rows(path, s, 2, 0), NPYIO_E_IO);
    assert_error_contains("the write callback failed");
    assert_ok(fd_ops_close(s, u));
    assert_same_files(path, before);
}

/* Without seek: refused where seeking is needed, whatever else is set. */
static void test_no_seek(void **state)
{
    char path[128];
    npyio_stream_ops ops;
    fd_user u;
    npyio_stream *s = NULL;
    npyio_writer *w = NULL;
    npyio_npz *npz = NULL;
    npyio_npz_writer *nw = NULL;

    (void)state;
    path_in_dir(path, sizeof path, "noseek.npy");
    save_rows(path, ROWS, 0);
    memset(&u, 0, sizeof u);
    u.fd = open(path, O_RDWR);
    assert_true(u.fd >= 0);
    assert_true(fd_ops_table("full", &ops));
    ops.seek = NULL;
    assert_ok(npyio_stream_open_ops(&ops, &u, NULL, &s));
    assert_status(append_rows(path, s, 1, 0), NPYIO_E_UNSUPPORTED);
    assert_error_contains("cannot seek");
    assert_status(npyio_writer_open_in_place_stream(s, 0, NULL, &w),
                  NPYIO_E_UNSUPPORTED);
    assert_status(npyio_npz_open_stream(s, NULL, &npz), NPYIO_E_UNSUPPORTED);
    assert_status(npyio_npz_writer_create_stream(s, 0, NULL, &nw),
                  NPYIO_E_UNSUPPORTED);
    assert_int_equal(atomic_load(&u.locks), 0);
    assert_ok(npyio_stream_close(s));
}

/* ---- the same bytes as the path calls ----------------------------------- */

/* Appends and rows in place through callbacks (and a path stream opened
 * read-write) give the bytes the path calls give; a durable sync unless
 * NPYIO_WRITE_NO_SYNC. */
static void test_same_as_path(void **state)
{
    char by_path[128], by_cb[128];
    fd_user *u = NULL;
    npyio_stream *s;
    npyio_writer *w = NULL;
    double row[COLS] = {-1, -2, -3, -4, -5};

    (void)state;
    saved_pair("same_path", "same_cb", by_path, by_cb);
    assert_ok(append_rows(by_path, NULL, 3, 0));
    s = open_cb(by_cb, "full", &u);
    assert_ok(append_rows(by_cb, s, 3, 0));
    assert_true(atomic_load(&u->durable_syncs) >= 1);
    assert_ok(fd_ops_close(s, u));
    assert_same_files(by_path, by_cb);
    assert_ok(npyio_writer_open_in_place_path(by_path, 0, NULL, &w));
    assert_ok(npyio_writer_write_rows(w, 4, 1, row, sizeof row));
    assert_ok(npyio_writer_close(w));
    s = open_cb(by_cb, "nolock", &u);
    assert_ok(npyio_writer_open_in_place_stream(s, NPYIO_WRITE_NO_SYNC, NULL,
                                                &w));
    assert_ok(npyio_writer_write_rows(w, 4, 1, row, sizeof row));
    assert_ok(npyio_writer_close(w));
    assert_int_equal(atomic_load(&u->durable_syncs), 0);
    assert_ok(fd_ops_close(s, u));
    assert_same_files(by_path, by_cb);
    assert_ok(append_rows(by_path, NULL, 2, 0));
    assert_ok(npyio_stream_open_path(by_cb,
                                     NPYIO_STREAM_READ | NPYIO_STREAM_WRITE,
                                     NULL, &s));
    assert_ok(append_rows(by_cb, s, 2, 0));
    assert_ok(npyio_stream_close(s));
    assert_same_files(by_path, by_cb);
}

/* npyio_stream_open_path's flags: read-write keeps an existing file and
 * needs one; no flags, or others, refused. */
static void test_open_path_flags(void **state)
{
    char path[128], missing[128], copy[128];
    npyio_stream *s = NULL;

    (void)state;
    saved_pair("flags", "flags_copy", path, copy);
    path_in_dir(missing, sizeof missing, "missing.npy");
    assert_ok(npyio_stream_open_path(path,
                                     NPYIO_STREAM_READ | NPYIO_STREAM_WRITE,
                                     NULL, &s));
    assert_ok(npyio_stream_close(s));
    assert_same_files(path, copy);
    assert_status(npyio_stream_open_path(missing, NPYIO_STREAM_READ |
                                                      NPYIO_STREAM_WRITE,
                                         NULL, &s),
                  NPYIO_E_NOT_FOUND);
    assert_status(npyio_stream_open_path(path, 0, NULL, &s),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("NPYIO_STREAM_READ, NPYIO_STREAM_WRITE or both");
    assert_status(npyio_stream_open_path(path, 1, NULL, &s),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("flag NPYIO_READ_NATIVE (0x1) is not one this "
                          "function takes");
    assert_null(s);
}

/* ---- archives ----------------------------------------------------------- */

enum { BIG = 1 << 18 }; /* doubles: 2 MiB, two deflate blocks */

static double *big_values(double base)
{
    double *d = malloc(sizeof *d * BIG);
    size_t i;

    assert_non_null(d);
    for (i = 0; i < BIG; i++)
        d[i] = base + (double)(i % 1000);
    return d;
}

/* An archive written through callbacks with two deflate threads:
 * members "a" (deflated) and "b" (stored), BIG doubles each. */
static void write_archive(const char *path)
{
    npyio_options *o = NULL;
    npyio_npz_writer *w = NULL;
    fd_user *u = NULL;
    npyio_stream *s = NULL;
    int64_t shape = BIG;
    npyio_header *h = make_header("=f8", 1, &shape, 0);
    double *a = big_values(0), *b = big_values(1);

    assert_ok(npyio_options_new(&o));
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_THREADS, 2));
    assert_ok(fd_ops_open(path, O_RDWR | O_CREAT | O_TRUNC, "full", &s, &u));
    assert_ok(npyio_npz_writer_create_stream(s, 0, o, &w));
    assert_ok(npyio_npz_writer_add_with_header(w, "a", h, a, sizeof *a * BIG, 6, 0));
    assert_ok(npyio_npz_writer_add_with_header(w, "b", h, b, sizeof *b * BIG, 0, 0));
    assert_ok(npyio_npz_writer_close(w));
    assert_ok(fd_ops_close(s, u));
    npyio_options_free(o);
    npyio_header_free(h);
    free(a);
    free(b);
}

typedef struct member_job {
    npyio_npz *npz;
    size_t index;
    pthread_barrier_t *start;
    npyio_status st;
    double first, last;
} member_job;

static void *read_member_job(void *arg)
{
    member_job *j = arg;
    npyio_reader *r = NULL;
    void *data = NULL;
    size_t len = 0;

    pthread_barrier_wait(j->start);
    j->st = npyio_reader_open_member(j->npz, j->index, &r);
    if (j->st == NPYIO_OK)
        j->st = npyio_reader_read_alloc(r, 0, &data, &len);
    if (j->st == NPYIO_OK && len == sizeof(double) * BIG) {
        j->first = ((double *)data)[0];
        j->last = ((double *)data)[BIG - 1];
    }
    npyio_free(data);
    npyio_reader_close(r);
    return NULL;
}

/* Both members read on two threads at once, through pread only: the
 * stream's position never moves meanwhile (no read or seek callback). */
static void test_parallel_members(void **state)
{
    char path[128];
    fd_user *u = NULL;
    npyio_stream *s = NULL;
    npyio_npz *npz = NULL;
    pthread_barrier_t start;
    member_job jobs[2];
    pthread_t t[2];
    long reads, seeks;
    int i;

    (void)state;
    path_in_dir(path, sizeof path, "members.npz");
    write_archive(path);
    assert_ok(fd_ops_open(path, O_RDONLY, "full", &s, &u));
    assert_ok(npyio_npz_open_stream(s, NULL, &npz));
    reads = atomic_load(&u->reads);
    seeks = atomic_load(&u->seeks);
    pthread_barrier_init(&start, NULL, 2);
    for (i = 0; i < 2; i++) {
        jobs[i] = (member_job){npz, (size_t)i, &start, NPYIO_E_STATE, -1, -1};
        assert_int_equal(pthread_create(&t[i], NULL, read_member_job,
                                        &jobs[i]),
                         0);
    }
    for (i = 0; i < 2; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_ok(jobs[i].st);
        assert_true(jobs[i].first == (double)i);
        assert_true(jobs[i].last == (double)i + (double)((BIG - 1) % 1000));
    }
    pthread_barrier_destroy(&start);
    assert_int_equal(atomic_load(&u->reads), reads);
    assert_int_equal(atomic_load(&u->seeks), seeks);
    assert_true(atomic_load(&u->preads) > 0);
    assert_ok(npyio_npz_close(npz));
    assert_ok(fd_ops_close(s, u));
}

/* A member appended through the caller's two streams: the bytes the path
 * append makes; the archive itself never written; refusals. */
static void test_archive_append(void **state)
{
    char by_path[128], by_cb[128], tmp[128], before[128];
    npyio_npz_writer *w = NULL;
    fd_user *u = NULL, *tu = NULL;
    npyio_stream *s = NULL, *t = NULL;
    int64_t shape = 3;
    npyio_header *h = make_header("=f8", 1, &shape, 0);
    double c[3] = {7, 8, 9};

    (void)state;
    path_in_dir(by_path, sizeof by_path, "app_path.npz");
    path_in_dir(by_cb, sizeof by_cb, "app_cb.npz");
    path_in_dir(tmp, sizeof tmp, "app_cb.npz.tmp");
    path_in_dir(before, sizeof before, "app_before.npz");
    write_archive(by_path);
    copy_file(by_path, before);
    copy_file(by_path, by_cb);
    assert_ok(npyio_npz_writer_open_append_path(by_path, NPYIO_WRITE_NO_SYNC, NULL, &w));
    assert_ok(npyio_npz_writer_add_with_header(w, "c", h, c, sizeof c, 0, 0));
    assert_ok(npyio_npz_writer_close(w));
    s = open_cb(by_cb, "full", &u);
    assert_ok(fd_ops_open(tmp, O_RDWR | O_CREAT | O_TRUNC, "full", &t, &tu));
    assert_status(npyio_npz_writer_open_append_stream(s, s, 0, NULL, &w),
                  NPYIO_E_INVALID_ARG);
    assert_ok(npyio_npz_writer_open_append_stream(s, t, 0, NULL, &w));
    assert_int_equal(u->last_lock_exclusive, 1);
    assert_ok(npyio_npz_writer_add_with_header(w, "c", h, c, sizeof c, 0, 0));
    assert_ok(npyio_npz_writer_close(w));
    assert_int_equal(atomic_load(&u->writes) + atomic_load(&u->pwrites) +
                         atomic_load(&u->truncates),
                     0);
    assert_ok(fd_ops_close(t, tu));
    assert_ok(fd_ops_close(s, u));
    assert_same_files(by_cb, before);
    assert_same_files(tmp, by_path);
    npyio_header_free(h);
}

/* An archive append refused: a temporary of the old table (no positioned
 * writes), an archive whose lock another holds; nothing written. */
static void test_archive_append_refused(void **state)
{
    char path[128], tmp[128], before[128];
    npyio_npz_writer *w = NULL;
    fd_user *u = NULL, *tu = NULL;
    npyio_stream *s = NULL, *t = NULL;

    (void)state;
    path_in_dir(path, sizeof path, "refused.npz");
    path_in_dir(tmp, sizeof tmp, "refused.npz.tmp");
    path_in_dir(before, sizeof before, "refused_before.npz");
    write_archive(path);
    copy_file(path, before);
    s = open_cb(path, "full", &u);
    assert_ok(fd_ops_open(tmp, O_RDWR | O_CREAT | O_TRUNC, "old", &t, &tu));
    assert_status(npyio_npz_writer_open_append_stream(s, t, 0, NULL, &w),
                  NPYIO_E_UNSUPPORTED);
    assert_error_contains("cannot read at an offset");
    assert_null(w);
    assert_ok(fd_ops_close(t, tu));
    assert_ok(fd_ops_open(tmp, O_RDWR | O_CREAT | O_TRUNC, "full", &t, &tu));
    u->lock_busy = 1;
    assert_status(npyio_npz_writer_open_append_stream(s, t, 0, NULL, &w),
                  NPYIO_E_LOCKED);
    assert_null(w);
    assert_int_equal(atomic_load(&tu->writes) + atomic_load(&tu->pwrites),
                     0);
    assert_ok(fd_ops_close(t, tu));
    assert_ok(fd_ops_close(s, u));
    assert_same_files(path, before);
}

static int group_setup(void **state)
{
    (void)state;
    return scratch_make("npyio-callbacks");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_old_table),
        cmocka_unit_test(test_unknown_members),
        cmocka_unit_test(test_lock),
        cmocka_unit_test(test_lock_against_path),
        cmocka_unit_test(test_failures_undone),
        cmocka_unit_test(test_no_seek),
        cmocka_unit_test(test_same_as_path),
        cmocka_unit_test(test_open_path_flags),
        cmocka_unit_test(test_parallel_members),
        cmocka_unit_test(test_archive_append),
        cmocka_unit_test(test_archive_append_refused),
    };

    return cmocka_run_group_tests(tests, group_setup, scratch_remove);
}
