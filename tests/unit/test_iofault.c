/*
 * test_iofault.c - every I/O call failed in turn, and every call made
 * short. Streams over the caller's callbacks (a file kept in memory here)
 * fail their k-th call (read, write, seek or close) for k = 1, 2, ...
 * until an operation no longer makes a k-th call; each run must give a
 * clean NPYIO_E_IO naming the callback, give back every block it took
 * (the counting allocator of inject.h), and never crash or hang. A second
 * pass hands out at most a few bytes per read and write: everything must
 * then come out exactly as without it.
 *
 * The operations: reading an .npy file whole, in chunks and by rows, in C
 * order from Fortran data (seeks); reading every member of an archive and
 * verifying it; writing an .npy file of an unknown row count (its header
 * rewritten at the end); writing an archive with stored, deflated and
 * unknown-row members.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"
#include "inject.h"

/* ---- a file in memory behind callbacks that fail on demand ------------------ */

typedef struct vfile {
    unsigned char *bytes;
    size_t len, cap;
    int64_t pos;
    long calls;   /* callback calls so far */
    long fail_at; /* the call that fails (1-based); 0: none */
    int failed;
    size_t most;  /* bytes per read or write at most; 0: no limit */
} vfile;

static int faulty(vfile *f)
{
    if (++f->calls != f->fail_at)
        return 0;
    f->failed = 1;
    return 1;
}

static size_t limited(const vfile *f, size_t n)
{
    return f->most > 0 && n > f->most ? f->most : n;
}

static int v_read(void *user, void *buf, size_t cap, size_t *got)
{
    vfile *f = user;
    size_t left = f->pos < (int64_t)f->len ? f->len - (size_t)f->pos : 0;

    *got = 0;
    if (faulty(f))
        return -1;
    *got = limited(f, cap < left ? cap : left);
    memcpy(buf, f->bytes + f->pos, *got);
    f->pos += (int64_t)*got;
    return 0;
}

static int v_write(void *user, const void *buf, size_t len, size_t *put)
{
    vfile *f = user;
    size_t n, end;

    *put = 0;
    if (faulty(f))
        return -1;
    n = limited(f, len);
    end = (size_t)f->pos + n;
    if (end > f->cap) {
        size_t cap = end * 2;
        unsigned char *more = realloc(f->bytes, cap);

        if (more == NULL)
            return -1;
        f->bytes = more;
        f->cap = cap;
    }
    if ((size_t)f->pos > f->len)
        memset(f->bytes + f->len, 0, (size_t)f->pos - f->len);
    memcpy(f->bytes + f->pos, buf, n);
    f->pos += (int64_t)n;
    if (end > f->len)
        f->len = end;
    *put = n;
    return 0;
}

static int v_seek(void *user, int64_t offset, int whence, int64_t *pos)
{
    vfile *f = user;
    int64_t base = whence == NPYIO_SEEK_SET   ? 0
                   : whence == NPYIO_SEEK_CUR ? f->pos
                                              : (int64_t)f->len;

    if (faulty(f) || base + offset < 0)
        return -1;
    f->pos = base + offset;
    *pos = f->pos;
    return 0;
}

static int v_close(void *user)
{
    return faulty(user) ? -1 : 0;
}

/* A stream over f from its start, for reading (its bytes) or writing
 * (emptied first). */
static npyio_stream *open_vfile(vfile *f, int writing,
                                const npyio_options *o)
{
    npyio_stream_ops ops = {sizeof ops, v_read, writing ? v_write : NULL,
                            v_seek, v_close};
    npyio_stream *s = NULL;

    if (writing)
        f->len = 0;
    f->pos = 0;
    assert_ok(npyio_stream_open_ops(&ops, f, o, &s));
    return s;
}

static void load_file(vfile *f, const char *relative)
{
    char path[1024];

    snprintf(path, sizeof path, "%s/%s", NPYIO_TEST_DATA_DIR, relative);
    f->bytes = snapshot(path, &f->len);
    assert_non_null(f->bytes);
    f->cap = f->len;
}

/* ---- the operations: each returns its status and what it produced -------------- */

typedef struct result {
    unsigned char *bytes; /* what was read, or the file written */
    size_t len;
} result;

static void keep(result *r, const void *p, size_t n)
{
    unsigned char *more = realloc(r->bytes, r->len + n + 1);

    assert_non_null(more);
    memcpy(more + r->len, p, n);
    r->bytes = more;
    r->len += n;
}

static npyio_status read_npy(vfile *f, const npyio_options *o, result *r)
{
    npyio_stream *s = open_vfile(f, 0, o);
    npyio_reader *rd = NULL;
    const uint32_t flags = NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER;
    unsigned char chunk[96], rows[2048];
    void *whole = NULL;
    size_t len = 0, got = 0;
    npyio_status st = npyio_reader_open_stream(s, o, &rd);

    if (st == NPYIO_OK)
        st = npyio_reader_read_alloc(rd, flags, &whole, &len);
    if (st == NPYIO_OK)
        keep(r, whole, len);
    npyio_free(whole);
    npyio_reader_close(rd);
    rd = NULL;
    npyio_stream_close(s); /* read-only: its close may fail, unseen */
    s = open_vfile(f, 0, o);
    if (st == NPYIO_OK)
        st = npyio_reader_open_stream(s, o, &rd);
    while (st == NPYIO_OK &&
           (st = npyio_reader_read_chunk(rd, chunk, sizeof chunk, flags,
                                         &got)) == NPYIO_OK)
        keep(r, chunk, got);
    if (st == NPYIO_END)
        st = npyio_reader_read_rows(rd, 1, 2, rows, sizeof rows, flags);
    if (st == NPYIO_OK)
        keep(r, rows, 2 * len / 3);
    npyio_reader_close(rd);
    npyio_stream_close(s);
    return st;
}

static npyio_status read_npz(vfile *f, const npyio_options *o, result *r)
{
    npyio_stream *s = open_vfile(f, 0, o);
    npyio_npz *npz = NULL;
    size_t i;
    npyio_status st = npyio_npz_open_stream(s, o, &npz);

    for (i = 0; st == NPYIO_OK && i < npyio_npz_count(npz); i++) {
        npyio_stream *m = NULL;
        unsigned char buf[512];
        size_t got = 0;

        st = npyio_npz_open_member(npz, i, &m);
        while (st == NPYIO_OK &&
               (st = npyio_stream_read(m, buf, sizeof buf, &got)) ==
                   NPYIO_OK &&
               got > 0)
            keep(r, buf, got);
        npyio_stream_close(m);
        if (st == NPYIO_OK)
            st = npyio_npz_verify(npz, i);
    }
    npyio_npz_close(npz);
    npyio_stream_close(s);
    return st;
}

static const double values[40] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -1, -2};

static npyio_status write_npy(vfile *f, const npyio_options *o, result *r)
{
    npyio_stream *s = open_vfile(f, 1, o);
    npyio_header *h = NULL;
    npyio_writer *w = NULL;
    npyio_dtype *dt = NULL;
    npyio_status st = npyio_dtype_from_descr("<f8", 3, o, &dt);

    if (st == NPYIO_OK)
        st = npyio_header_new(dt, 2, (const int64_t[]){4, 10}, 0, &h);
    npyio_dtype_unref(dt);
    if (st == NPYIO_OK)
        st = npyio_writer_open_stream(s, h, NPYIO_WRITE_UNKNOWN_ROWS, o, &w);
    if (st == NPYIO_OK)
        st = npyio_writer_write(w, values, sizeof values);
    if (st == NPYIO_OK)
        st = npyio_writer_close(w);
    else
        npyio_writer_abort(w);
    if (st == NPYIO_OK)
        st = npyio_stream_close(s);
    else
        npyio_stream_close(s);
    if (st == NPYIO_OK)
        keep(r, f->bytes, f->len);
    npyio_header_free(h);
    return st;
}

static npyio_status write_npz(vfile *f, const npyio_options *o, result *r)
{
    npyio_stream *s = open_vfile(f, 1, o);
    npyio_npz_writer *w = NULL;
    npyio_writer *m = NULL;
    npyio_dtype *dt = NULL;
    npyio_header *h = NULL;
    npyio_status st = npyio_dtype_from_descr("<f8", 3, o, &dt);

    if (st == NPYIO_OK)
        st = npyio_header_new(dt, 1, (const int64_t[]){40}, 0, &h);
    npyio_dtype_unref(dt);
    if (st == NPYIO_OK)
        st = npyio_npz_create_stream(s, 0, o, &w);
    if (st == NPYIO_OK)
        st = npyio_npz_add_array(w, "stored", h, values, sizeof values, 0);
    if (st == NPYIO_OK)
        st = npyio_npz_add_array(w, "deflated", h, values, sizeof values, 6);
    if (st == NPYIO_OK)
        st = npyio_npz_add(w, "rows", h, 6, NPYIO_WRITE_UNKNOWN_ROWS, &m);
    if (st == NPYIO_OK)
        st = npyio_writer_write(m, values, sizeof values / 2);
    if (m != NULL) {
        npyio_status closed = npyio_writer_close(m);

        if (st == NPYIO_OK)
            st = closed;
    }
    if (st == NPYIO_OK)
        st = npyio_npz_writer_close(w);
    else
        npyio_npz_writer_abort(w);
    if (st == NPYIO_OK)
        st = npyio_stream_close(s);
    else
        npyio_stream_close(s);
    if (st == NPYIO_OK)
        keep(r, f->bytes, f->len);
    npyio_header_free(h);
    return st;
}

typedef npyio_status (*operation)(vfile *f, const npyio_options *o,
                                  result *r);

/* ---- the loops ------------------------------------------------------------------------ */

/* One run with its faults; the status, and the result in *r. */
static npyio_status run(operation op, vfile *f, long fail_at, size_t most,
                        const npyio_options *o, result *r)
{
    npyio_status st;

    f->calls = 0;
    f->fail_at = fail_at;
    f->failed = 0;
    f->most = most;
    inj.live = 0;
    memset(r, 0, sizeof *r);
    st = op(f, o, r);
    if (inj.live != 0)
        fail_msg("call %ld failed: %ld blocks not given back (%s)", fail_at,
                 inj.live, npyio_status_string(st));
    return st;
}

static void every_call_fails(const char *name, operation op, vfile *f)
{
    npyio_options *o = failing_options(1);
    result want, got;
    long k, calls;

    inj.fail_at = 0; /* the allocator never fails here: it counts */
    assert_ok(run(op, f, 0, 0, o, &want));
    calls = f->calls;
    assert_true(calls > 2);
    for (k = 1; k <= calls; k++) {
        npyio_status st = run(op, f, k, 0, o, &got);

        /* A failure the library never sees (the close of a stream it
         * only read) leaves the result whole. */
        if (st == NPYIO_OK)
            assert_true(got.len == want.len &&
                        memcmp(got.bytes, want.bytes, want.len) == 0);
        else if (st != NPYIO_E_IO || strstr(npyio_last_error(), "callback "
                                            "failed") == NULL)
            fail_msg("%s: call %ld of %ld failed: %s (%s)", name, k, calls,
                     npyio_status_string(st), npyio_last_error());
        free(got.bytes);
    }
    /* Short reads and writes change nothing. */
    for (k = 1; k <= 3; k++) {
        assert_ok(run(op, f, 0, (size_t)k, o, &got));
        if (got.len != want.len ||
            memcmp(got.bytes, want.bytes, want.len) != 0)
            fail_msg("%s: %ld bytes per call gave other bytes", name, k);
        free(got.bytes);
    }
    free(want.bytes);
    npyio_options_free(o);
}

static void test_reading(void **state)
{
    vfile f = {0};

    (void)state;
    load_file(&f, "arrays/rec_nested_padded_3x4_f.npy");
    every_call_fails("read .npy", read_npy, &f);
    free(f.bytes);
    memset(&f, 0, sizeof f);
    load_file(&f, "npz/savez_compressed.npz");
    every_call_fails("read .npz", read_npz, &f);
    free(f.bytes);
}

static void test_writing(void **state)
{
    vfile f = {0};

    (void)state;
    every_call_fails("write .npy", write_npy, &f);
    every_call_fails("write .npz", write_npz, &f);
    free(f.bytes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reading),
        cmocka_unit_test(test_writing),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
