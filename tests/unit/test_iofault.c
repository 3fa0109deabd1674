/*
 * test_iofault.c - every I/O call failed in turn, and every call made
 * short. Streams over the caller's callbacks (a file kept in memory here)
 * fail their k-th call (read, write, seek or close) for k = 1, 2, ...
 * until an operation no longer makes a k-th call; each run must give a
 * clean NPYIO_E_IO naming the callback, give back every block it took
 * (the counting allocator of inject.h), and never crash or hang. A second
 * pass hands out at most a few bytes per read and write: everything must
 * then come out exactly as without it (the loop: fault.h).
 *
 * The operations: reading an .npy file whole, in chunks and by rows, in C
 * order from Fortran data (seeks); a file of the other byte order whole
 * (swapped), and by rows and whole from a stream that cannot seek; reading
 * every member of an archive (NumPy's, and a ZIP64 one behind a prefix)
 * and verifying it; writing an .npy file of an unknown row count (its header
 * rewritten at the end); writing an archive with stored, deflated and
 * unknown-row members.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"
#include "inject.h"
#include "fault.h"

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

enum { READING, WRITING, PIPE };

/* A stream over f from its start, for reading (its bytes), writing
 * (emptied first), or reading as from a pipe (no seek callback). */
static npyio_stream *open_vfile(vfile *f, int mode, const npyio_options *o)
{
    npyio_stream_ops ops = {sizeof ops, v_read,
                            mode == WRITING ? v_write : NULL,
                            mode == PIPE ? NULL : v_seek, v_close};
    npyio_stream *s = NULL;

    if (mode == WRITING)
        f->len = 0;
    f->pos = 0;
    assert_ok(npyio_stream_open_ops(&ops, f, o, &s));
    return s;
}

static void load_file(vfile *f, const char *relative)
{
    char path[1024];

    memset(f, 0, sizeof *f);
    snprintf(path, sizeof path, "%s/%s", NPYIO_TEST_DATA_DIR, relative);
    f->bytes = snapshot(path, &f->len);
    assert_non_null(f->bytes);
    f->cap = f->len;
}

/* The fault source: the vfile's callbacks. */
static void v_arm(void *ctx, fault_kind kind, long at, size_t most)
{
    vfile *f = ctx;

    f->calls = 0;
    f->fail_at = kind == FAULT_FAIL ? at : 0;
    f->failed = 0;
    f->most = kind == FAULT_SHORT ? most : 0;
}

static long v_calls(const void *ctx)
{
    return ((const vfile *)ctx)->calls;
}

static const fault_source *callbacks(vfile *f)
{
    static fault_source src = {v_arm, NULL, v_calls, NULL, NULL,
                               "callback failed", 0, 3, NULL};

    src.ctx = f;
    return &src;
}

/* ---- the operations ------------------------------------------------------------- */

/* Close the reader and stream of a previous step (NULL: none), then open
 * new ones on f in `mode`, if all went well so far. */
static npyio_status reopen(vfile *f, int mode, npyio_status st,
                           const npyio_options *o, npyio_stream **s,
                           npyio_reader **rd)
{
    npyio_reader_close(*rd);
    *rd = NULL;
    npyio_stream_close(*s); /* read-only: its close may fail, unseen */
    *s = open_vfile(f, mode, o);
    return st == NPYIO_OK ? npyio_reader_open_stream(*s, o, rd) : st;
}

static size_t data_bytes(const npyio_reader *rd)
{
    return (size_t)npyio_header_nbytes(npyio_reader_header(rd));
}

static npyio_status read_npy(void *ctx, const npyio_options *o,
                             fault_result *r)
{
    const uint32_t flags = NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER;
    npyio_stream *s = NULL;
    npyio_reader *rd = NULL;
    unsigned char chunk[96], rows[2048];
    void *whole = NULL;
    size_t len = 0, got = 0;
    npyio_status st = reopen(ctx, READING, NPYIO_OK, o, &s, &rd);

    if (st == NPYIO_OK)
        st = npyio_reader_read_alloc(rd, flags, &whole, &len);
    if (st == NPYIO_OK)
        result_add(r, whole, len);
    npyio_free(whole);
    st = reopen(ctx, READING, st, o, &s, &rd);
    while (st == NPYIO_OK &&
           (st = npyio_reader_read_chunk(rd, chunk, sizeof chunk, flags,
                                         &got)) == NPYIO_OK)
        result_add(r, chunk, got);
    if (st == NPYIO_END)
        st = npyio_reader_read_rows(rd, 1, 2, rows, sizeof rows, flags);
    if (st == NPYIO_OK)
        result_add(r, rows, 2 * len / 3);
    npyio_reader_close(rd);
    npyio_stream_close(s);
    return st;
}

/* A C-order file of another byte order: read whole into the caller's
 * buffer, swapped block by block; then as from a pipe, rows 1 and 2
 * (row 0 skipped by reading), and whole into a block of its own. */
static npyio_status read_swapped(void *ctx, const npyio_options *o,
                                 fault_result *r)
{
    npyio_stream *s = NULL;
    npyio_reader *rd = NULL;
    unsigned char whole[4096];
    void *block = NULL;
    size_t len = 0;
    npyio_status st = reopen(ctx, READING, NPYIO_OK, o, &s, &rd);

    if (st == NPYIO_OK)
        st = npyio_reader_read(rd, whole, sizeof whole, NPYIO_READ_NATIVE);
    if (st == NPYIO_OK)
        result_add(r, whole, data_bytes(rd));
    st = reopen(ctx, PIPE, st, o, &s, &rd);
    if (st == NPYIO_OK)
        st = npyio_reader_read_rows(rd, 1, 2, whole, sizeof whole,
                                    NPYIO_READ_NATIVE);
    if (st == NPYIO_OK)
        result_add(r, whole, data_bytes(rd) / 3 * 2);
    st = reopen(ctx, PIPE, st, o, &s, &rd);
    if (st == NPYIO_OK)
        st = npyio_reader_read_alloc(rd, NPYIO_READ_NATIVE, &block, &len);
    if (st == NPYIO_OK)
        result_add(r, block, len);
    npyio_free(block);
    npyio_reader_close(rd);
    npyio_stream_close(s);
    return st;
}

static npyio_status read_npz(void *ctx, const npyio_options *o,
                             fault_result *r)
{
    npyio_stream *s = open_vfile(ctx, READING, o);
    npyio_npz *npz = NULL;
    npyio_status st = npyio_npz_open_stream(s, o, &npz);

    st = fault_read_members(st, npz, 1, r);
    npyio_stream_close(s);
    return st;
}

static const double values[40] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -1, -2};

/* The bytes written, once the stream is closed. */
static npyio_status written(npyio_status st, npyio_stream *s, vfile *f,
                            fault_result *r)
{
    st = fault_stream_close(st, s);
    if (st == NPYIO_OK)
        result_add(r, f->bytes, f->len);
    return st;
}

static npyio_status write_npy(void *ctx, const npyio_options *o,
                              fault_result *r)
{
    npyio_stream *s = open_vfile(ctx, WRITING, o);
    npyio_header *h = NULL;
    npyio_writer *w = NULL;
    npyio_status st =
        fault_header(o, "<f8", 2, (const int64_t[]){4, 10}, &h);

    if (st == NPYIO_OK)
        st = npyio_writer_create_stream(s, h, NPYIO_WRITE_UNKNOWN_ROWS, o, &w);
    st = fault_write_close(st, w, values, sizeof values);
    npyio_header_free(h);
    return written(st, s, ctx, r);
}

static npyio_status write_npz(void *ctx, const npyio_options *o,
                              fault_result *r)
{
    npyio_stream *s = open_vfile(ctx, WRITING, o);
    npyio_npz_writer *w = NULL;
    npyio_writer *m = NULL;
    npyio_header *h = NULL;
    npyio_status st =
        fault_header(o, "<f8", 1, (const int64_t[]){40}, &h);

    if (st == NPYIO_OK)
        st = npyio_npz_writer_create_stream(s, 0, o, &w);
    st = fault_npz_add_both(st, w, h, values, sizeof values);
    if (st == NPYIO_OK)
        st = npyio_writer_create_member(w, "rows", h, 6, NPYIO_WRITE_UNKNOWN_ROWS, &m);
    if (st == NPYIO_OK)
        st = npyio_writer_write(m, values, sizeof values / 2);
    if (m != NULL) {
        npyio_status closed = npyio_writer_close(m);

        if (st == NPYIO_OK)
            st = closed;
    }
    st = fault_npz_close(st, w);
    npyio_header_free(h);
    return written(st, s, ctx, r);
}

/* ---- the tests ------------------------------------------------------------------ */

static void test_reading(void **state)
{
    static const struct {
        fault_op op;
        const char *file;
    } reads[] = {
        {{"read .npy", read_npy, NULL, 0},
         "arrays/rec_nested_padded_3x4_f.npy"},
        {{"read swapped .npy", read_swapped, NULL, 0},
         "arrays/c16be_3x5_c.npy"},
        {{"read .npz", read_npz, NULL, 0}, "npz/savez_compressed.npz"},
        {{"read ZIP64 .npz", read_npz, NULL, 0}, "zip64/zip64_prefix.npz"},
    };
    vfile f;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof reads / sizeof reads[0]; i++) {
        load_file(&f, reads[i].file);
        fault_every_call(&reads[i].op, callbacks(&f));
        free(f.bytes);
    }
}

static void test_writing(void **state)
{
    const fault_op npy = {"write .npy", write_npy, NULL, 0};
    const fault_op npz = {"write .npz", write_npz, NULL, 0};
    vfile f = {0};

    (void)state;
    fault_every_call(&npy, callbacks(&f));
    fault_every_call(&npz, callbacks(&f));
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
