/*
 * test_backend.c - a back end defined here and nowhere else (a growable
 * memory buffer: positioned writes, resize, sync, commit; no descriptor,
 * lock, map or copy_from) is appended to, written in place and archived
 * into through the stream seam alone (issue 29). Each result is compared
 * byte for byte with what the path API makes of the same operations on
 * real files, with NumPy's own files as inputs where they fit.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "scratch.h"
#include "testdata.h"
#include "stream.h"
#include "writer.h"
#include "npz_append.h"
#include "map.h"

/* ---- the back end --------------------------------------------------------- */

/* The bytes, and what the core asked of them: the test's, so that they
 * outlive the stream and are checked after its close. */
typedef struct backing {
    unsigned char *bytes;
    size_t len;
    int syncs, durable_syncs, commits, closes;
    unsigned char head_at_first_sync[128]; /* the header then, and */
    size_t len_at_first_sync;              /* the length */
} backing;

/* The stream's state: its backing and its own position. */
typedef struct buf_state {
    backing *b;
    size_t pos;
} buf_state;

#define BACKING(state) (((buf_state *)(state))->b)

/* At least `size` bytes of data, the new ones zero: a gap left by a write
 * past the end reads as zeros, as a file's hole does. (Grown to the byte:
 * the test's buffers are small.) */
static npyio_status extend(backing *b, size_t size)
{
    void *p = size > b->len ? realloc(b->bytes, size) : b->bytes;

    if (p == NULL && size > b->len)
        return npyio__fail(NPYIO_E_NOMEM, "a test buffer of %zu bytes", size);
    b->bytes = p;
    if (size > b->len)
        memset(b->bytes + b->len, 0, size - b->len);
    b->len = size > b->len ? size : b->len;
    return NPYIO_OK;
}

static npyio_status buf_pread(void *state, void *buf, size_t cap,
                              int64_t offset, size_t *got)
{
    const backing *b = BACKING(state);
    size_t left = (uint64_t)offset < b->len ? b->len - (size_t)offset : 0;

    *got = cap < left ? cap : left;
    if (*got > 0)
        memcpy(buf, b->bytes + offset, *got);
    return NPYIO_OK;
}

static npyio_status buf_pwrite(void *state, const void *buf, size_t len,
                               int64_t offset, size_t *put)
{
    backing *b = BACKING(state);
    npyio_status st = (uint64_t)offset <= SIZE_MAX - len
                          ? extend(b, (size_t)offset + len)
                          : npyio__fail(NPYIO_E_OVERFLOW, "offset %lld",
                                        (long long)offset);

    *put = st == NPYIO_OK ? len : 0;
    if (st == NPYIO_OK)
        memcpy(b->bytes + offset, buf, len);
    return st;
}

static npyio_status buf_read(void *state, void *buf, size_t cap, size_t *got)
{
    buf_state *s = state;
    npyio_status st = buf_pread(state, buf, cap, (int64_t)s->pos, got);

    s->pos += *got;
    return st;
}

static npyio_status buf_write(void *state, const void *buf, size_t len,
                              size_t *put)
{
    buf_state *s = state;
    npyio_status st = buf_pwrite(state, buf, len, (int64_t)s->pos, put);

    s->pos += *put;
    return st;
}

static npyio_status buf_seek(void *state, int64_t offset, int whence,
                             int64_t *pos)
{
    buf_state *s = state;
    int64_t base = whence == NPYIO_SEEK_SET   ? 0
                   : whence == NPYIO_SEEK_CUR ? (int64_t)s->pos
                                              : (int64_t)s->b->len;

    if (offset < -base || offset > INT64_MAX - base)
        return npyio__fail(NPYIO_E_IO, "a seek to %lld is out of range",
                           (long long)offset);
    s->pos = (size_t)(base + offset);
    *pos = base + offset;
    return NPYIO_OK;
}

static npyio_status buf_size(void *state, int64_t *size)
{
    *size = (int64_t)BACKING(state)->len;
    return NPYIO_OK;
}

/* Cut, or extend with zeros; `reserve` only ever extends. */
static npyio_status buf_resize(void *state, int64_t size, bool reserve)
{
    backing *b = BACKING(state);

    if (size < 0 || (uint64_t)size > SIZE_MAX)
        return npyio__fail(NPYIO_E_INVALID_ARG, "size %lld", (long long)size);
    if ((size_t)size < b->len && !reserve)
        b->len = (size_t)size;
    return extend(b, (size_t)size);
}

/* Counted, and what the first one found kept: the test checks what was
 * already written when the core first asked for durability. */
static npyio_status buf_sync(void *state, bool durable)
{
    backing *b = BACKING(state);

    b->durable_syncs += durable;
    if (++b->syncs == 1 && b->len >= sizeof b->head_at_first_sync) {
        memcpy(b->head_at_first_sync, b->bytes, sizeof b->head_at_first_sync);
        b->len_at_first_sync = b->len;
    }
    return NPYIO_OK;
}

static npyio_status buf_commit(void *state, bool durable)
{
    (void)durable;
    BACKING(state)->commits++;
    return NPYIO_OK;
}

static npyio_status buf_close(void *state)
{
    BACKING(state)->closes++;
    return NPYIO_OK;
}

static const npyio__stream_backend buffer_backend = {
    .name = "test buffer", .read = buf_read, .write = buf_write,
    .seek = buf_seek, .pread = buf_pread, .size = buf_size,
    .sync = buf_sync, .commit = buf_commit, .close = buf_close,
    .pwrite = buf_pwrite, .resize = buf_resize};

/* b made to hold a copy of bytes (none: empty), and a stream of the test
 * back end over it, at offset 0. */
static npyio_stream *open_backing(backing *b, const void *bytes, size_t len)
{
    npyio_stream *s = NULL;
    buf_state *state = NULL;

    memset(b, 0, sizeof *b);
    assert_ok(extend(b, len));
    if (len > 0)
        memcpy(b->bytes, bytes, len);
    assert_ok(npyio__stream_new(&buffer_backend, sizeof *state, NULL, &s,
                                (void **)&state));
    state->b = b;
    npyio__stream_set_position(s, 0, true);
    return s;
}

static void backing_free(backing *b)
{
    free(b->bytes);
    memset(b, 0, sizeof *b);
}

/* ---- files and comparisons ------------------------------------------------ */

static void write_whole(const char *path, const void *bytes, size_t len)
{
    FILE *f = fopen(path, "wb");

    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* The whole buffer must be these bytes. */
static void assert_buffer_is(const backing *b, const void *bytes, size_t len)
{
    assert_int_equal(b->len, len);
    assert_memory_equal(b->bytes, bytes, len);
}

static void assert_same_as_file(const backing *b, const char *path)
{
    size_t len = 0;
    unsigned char *file = read_data_file_abs(path, &len);

    assert_buffer_is(b, file, len);
    free(file);
}

/* An .npy file of (rows, 2) native int32, saved by the path API (as
 * np.save writes it), read back whole. */
static unsigned char *saved_i4(int64_t rows, size_t *len)
{
    const int64_t shape[2] = {rows, 2};
    int32_t v[2 * 16];
    char path[128];
    int i;

    assert_true(rows <= 16);
    for (i = 0; i < 2 * rows; i++)
        v[i] = 100 + i;
    path_in_dir(path, sizeof path, "saved.npy");
    assert_ok(npyio_save(path, "i4", 2, shape, v,
                               (size_t)(2 * rows) * sizeof *v,
                               NPYIO_WRITE_NO_SYNC, NULL));
    return read_data_file_abs(path, len);
}

/* The bytes with `extra` bytes of 0xA5 after them: a crashed append's
 * leftovers after an .npy file's data. */
static unsigned char *with_leftovers(const void *file, size_t len,
                                     size_t extra)
{
    unsigned char *out = malloc(len + extra);

    assert_non_null(out);
    memcpy(out, file, len);
    memset(out + len, 0xA5, extra);
    return out;
}

/* `after` must load (header parsed, data read by a reader over its
 * bytes) as `before` (data as stored, after its header) with the rows
 * `added` after its own: the shape grown by k along axis 0 only. */
static void assert_rows_appended(const unsigned char *before, size_t len,
                                 const backing *after, const void *added,
                                 size_t added_len, int64_t k)
{
    npyio_header *h0 = NULL, *h1 = NULL;
    npyio_stream *s = NULL;
    npyio_reader *r = NULL;
    void *d1 = NULL;
    size_t n0, n1 = 0;
    int i;

    assert_ok(npyio_header_parse(before, len, NULL, &h0, NULL));
    assert_ok(npyio_header_parse(after->bytes, after->len, NULL, &h1, NULL));
    assert_int_equal(npyio_header_ndim(h1), npyio_header_ndim(h0));
    for (i = 0; i < npyio_header_ndim(h0); i++)
        assert_int_equal(npyio_header_shape(h1)[i],
                         npyio_header_shape(h0)[i] + (i == 0 ? k : 0));
    assert_ok(npyio_stream_open_memory(after->bytes, after->len, NULL, &s));
    assert_ok(npyio_reader_open_stream(s, NULL, &r));
    assert_ok(npyio_reader_read_alloc(r, 0, &d1, &n1));
    n0 = (size_t)npyio_header_nbytes(h0);
    assert_int_equal(n1, n0 + added_len);
    assert_memory_equal(d1, before + npyio_header_data_offset(h0), n0);
    assert_memory_equal((unsigned char *)d1 + n0, added, added_len);
    npyio_free(d1);
    npyio_reader_close(r);
    npyio_stream_close(s);
    npyio_header_free(h0);
    npyio_header_free(h1);
}

/* ---- 1. appending rows ---------------------------------------------------- */

/* Append the same rows to `file` through the path API (a copy in the
 * scratch directory) and through the test back end (into b): the same
 * bytes both ways, and what np.load would see. */
static void append_both_ways(const void *file, size_t len, size_t clean_len,
                             const npyio_header *rows, const void *data,
                             size_t n, uint32_t flags, backing *b)
{
    char path[128];
    npyio_stream *s;
    npyio_writer *w = NULL;

    path_in_dir(path, sizeof path, "append.npy");
    write_whole(path, file, len);
    assert_ok(npyio_writer_open_append_path(path, rows, NPYIO_WRITE_NO_SYNC, NULL,
                                       &w));
    assert_ok(npyio_writer_write(w, data, n));
    assert_ok(npyio_writer_close(w));
    s = open_backing(b, file, len);
    assert_ok(npyio__writer_open_append_stream(s, rows, flags, NULL, &w));
    assert_ok(npyio_writer_write(w, data, n));
    assert_ok(npyio_writer_close(w));
    assert_ok(npyio_stream_close(s));
    assert_int_equal(b->closes, 1);
    assert_int_equal(b->commits, 0); /* the caller's stream */
    assert_same_as_file(b, path);
    assert_rows_appended(file, clean_len, b, data, n,
                         npyio_header_shape(rows)[0]);
}

/* NumPy's own file: (3, 5) '>f8' in C order, 2 rows appended. */
static void append_to_numpy_file(void)
{
    const int64_t shape[2] = {2, 5};
    unsigned char rows[80];
    npyio_header *h = make_header(">f8", 2, shape, 0);
    size_t len = 0, i;
    unsigned char *file = read_data_file("arrays/f8be_3x5_c.npy", &len);
    backing b;

    for (i = 0; i < sizeof rows; i++)
        rows[i] = (unsigned char)(0x40 + i % 7);
    append_both_ways(file, len, len, h, rows, sizeof rows, 0, &b);
    backing_free(&b);
    npyio_header_free(h);
    free(file);
}

static void test_append_rows(void **state)
{
    const int64_t shape[2] = {3, 2};
    const int32_t rows[6] = {7, 8, 9, 10, 11, 12};
    npyio_header *h = make_header("i4", 2, shape, 0);
    size_t len = 0;
    unsigned char *file = saved_i4(4, &len);
    unsigned char *dirty = with_leftovers(file, len, 40);
    backing b;

    (void)state;
    append_both_ways(file, len, len, h, rows, sizeof rows, 0, &b);
    /* Durable: the rows synced before the header names them (the old
     * header still there then), the new header synced after. */
    assert_int_equal(b.durable_syncs, 2);
    assert_int_equal(b.len_at_first_sync, b.len);
    assert_memory_equal(b.head_at_first_sync, file, 128);
    backing_free(&b);
    append_both_ways(file, len, len, h, rows, sizeof rows,
                     NPYIO_WRITE_NO_SYNC, &b);
    /* Without durability: flushed once at close, as every writer is. */
    assert_int_equal(b.syncs, 1);
    assert_int_equal(b.durable_syncs, 0);
    backing_free(&b);
    /* The rows go over leftovers after the data, as on a path. */
    append_both_ways(dirty, len + 40, len, h, rows, sizeof rows, 0, &b);
    backing_free(&b);
    npyio_header_free(h);
    free(dirty);
    free(file);
    append_to_numpy_file();
}

/* A writer appending k rows of `cols` int32 to `file` in the test back
 * end b, `n` bytes of them written: they changed the buffer. */
static npyio_writer *start_append(backing *b, npyio_stream **s,
                                  const void *file, size_t len, int64_t k,
                                  int64_t cols, size_t n)
{
    const int64_t shape[2] = {k, cols};
    npyio_header *h = make_header("i4", 2, shape, 0);
    unsigned char rows[16 * 8];
    npyio_writer *w = NULL;

    assert_true(n <= sizeof rows);
    memset(rows, 0x3C, sizeof rows);
    *s = open_backing(b, file, len);
    assert_ok(npyio__writer_open_append_stream(*s, h, 0, NULL, &w));
    assert_ok(npyio_writer_write(w, rows, n));
    assert_true(b->len != len || memcmp(b->bytes, file, len) != 0);
    npyio_header_free(h);
    return w;
}

/* An aborted append puts the buffer back exactly as it was (the undo's
 * pwrite of the bytes it went over, and resize). */
static void abort_append(const void *file, size_t len, int64_t k, size_t n)
{
    npyio_stream *s;
    backing b;

    npyio_writer_abort(start_append(&b, &s, file, len, k, 2, n));
    assert_ok(npyio_stream_close(s));
    assert_buffer_is(&b, file, len);
    assert_int_equal(b.commits, 0);
    backing_free(&b);
}

/* A header with no room for the new count (NumPy <= 1.23's): a stream
 * cannot be rewritten through a temporary, so close refuses, and the
 * buffer is put back as an abort puts it. */
static void close_roomless_append(void)
{
    char path[128];
    size_t len = 0;
    unsigned char *file;
    npyio_stream *s;
    backing b;

    path_in_dir(path, sizeof path, "roomless.npy");
    write_roomless_file(path, 9);
    file = read_data_file_abs(path, &len);
    assert_status(npyio_writer_close(start_append(&b, &s, file, len, 1, 3,
                                                  12)),
                  NPYIO_E_UNSUPPORTED);
    assert_error_contains("no room for the new row count");
    assert_ok(npyio_stream_close(s));
    assert_buffer_is(&b, file, len);
    backing_free(&b);
    free(file);
}

static void test_aborted_append_restores(void **state)
{
    size_t len = 0;
    unsigned char *file = saved_i4(3, &len);
    unsigned char *dirty = with_leftovers(file, len, 40);

    (void)state;
    abort_append(file, len, 2, 8);          /* the buffer grew: cut back */
    abort_append(dirty, len + 40, 2, 8);    /* within the leftovers */
    abort_append(dirty, len + 40, 16, 128); /* past them */
    close_roomless_append();
    free(dirty);
    free(file);
}

/* ---- 2. rows in place ----------------------------------------------------- */

/* Rows 1 and 2 of NumPy's (3, 5) '<f4' file written in place both ways;
 * the result must also be the file with just those bytes replaced. */
static void in_place_both_ways(uint32_t flags, backing *b)
{
    unsigned char rows[2 * 5 * 4];
    size_t len = 0;
    unsigned char *file = read_data_file("arrays/f4le_3x5_c.npy", &len);
    char path[128];
    npyio_writer *w = NULL;
    npyio_stream *s;

    memset(rows, 0x5A, sizeof rows);
    path_in_dir(path, sizeof path, "in_place.npy");
    write_whole(path, file, len);
    assert_ok(npyio_writer_open_in_place_path(path, NPYIO_WRITE_NO_SYNC, NULL, &w));
    assert_ok(npyio_writer_write_rows(w, 1, 2, rows, sizeof rows));
    assert_ok(npyio_writer_close(w));
    s = open_backing(b, file, len);
    assert_ok(npyio__writer_open_in_place_stream(s, flags, NULL, &w));
    assert_ok(npyio_writer_write_rows(w, 1, 2, rows, sizeof rows));
    assert_ok(npyio_writer_close(w));
    assert_ok(npyio_stream_close(s));
    assert_same_as_file(b, path);
    memcpy(file + 128 + 5 * 4, rows, sizeof rows); /* data_offset + a row */
    assert_buffer_is(b, file, len);
    assert_int_equal(b->commits, 0);
    free(file);
}

static void test_rows_in_place(void **state)
{
    backing b;

    (void)state;
    in_place_both_ways(0, &b);
    assert_int_equal(b.durable_syncs, 1);
    backing_free(&b);
    in_place_both_ways(NPYIO_WRITE_NO_SYNC, &b);
    assert_int_equal(b.syncs, 1); /* a flush, not durable */
    assert_int_equal(b.durable_syncs, 0);
    backing_free(&b);
}

/* ---- 3. an archive into the back end -------------------------------------- */

static const int32_t member_a[6] = {1, 2, 3, 4, 5, 6};
static const double member_b[4] = {0.5, -1.25, 1e300, 0};
static const int16_t member_c[5] = {-3, 1, 4, 1, 5};

/* Two members, stored and deflated, into any archive writer. */
static void add_members(npyio_npz_writer *w)
{
    const int64_t sa[2] = {3, 2}, sb[1] = {4};
    npyio_header *ha = make_header("i4", 2, sa, 0);
    npyio_header *hb = make_header("f8", 1, sb, 0);

    assert_ok(npyio_npz_writer_add_with_header(w, "a", ha, member_a, sizeof member_a, 0, 0));
    assert_ok(npyio_npz_writer_add_with_header(w, "b", hb, member_b, sizeof member_b, 6, 0));
    npyio_header_free(ha);
    npyio_header_free(hb);
}

/* One member (deflated) to append to archives: a key none of them has. */
static void add_member_c(npyio_npz_writer *w)
{
    const int64_t shape[1] = {5};
    npyio_header *h = make_header("i2", 1, shape, 0);

    assert_ok(npyio_npz_writer_add_with_header(w, "added", h, member_c, sizeof member_c, 6, 0));
    npyio_header_free(h);
}

/* The archive of add_members made into b by the test back end, and at
 * `path` by the path API. */
static void archive_both_ways(backing *b, const char *path)
{
    npyio_npz_writer *w = NULL;
    npyio_stream *s;

    assert_ok(npyio_npz_writer_create_path(path, NPYIO_WRITE_NO_SYNC, NULL, &w));
    add_members(w);
    assert_ok(npyio_npz_writer_close(w));
    s = open_backing(b, NULL, 0);
    assert_ok(npyio_npz_writer_create_stream(s, 0, NULL, &w));
    add_members(w);
    assert_ok(npyio_npz_writer_close(w));
    assert_ok(npyio_stream_close(s));
}

/* Member `key` of the archive in bytes must hold exactly `data`. */
static void assert_member(const backing *b, const char *key,
                          const void *data, size_t n)
{
    npyio_stream *s = NULL;
    npyio_npz *npz = NULL;
    npyio_reader *r = NULL;
    void *got = NULL;
    size_t index = 0, got_len = 0;

    assert_ok(npyio_stream_open_memory(b->bytes, b->len, NULL, &s));
    assert_ok(npyio_npz_open_stream(s, NULL, &npz));
    assert_ok(npyio_npz_find(npz, key, &index, NULL));
    assert_ok(npyio_reader_open_member(npz, index, &r));
    assert_ok(npyio_reader_read_alloc(r, 0, &got, &got_len));
    assert_int_equal(got_len, n);
    assert_memory_equal(got, data, n);
    npyio_free(got);
    npyio_reader_close(r);
    npyio_npz_close(npz);
    npyio_stream_close(s);
}

static void test_archive_into_backend(void **state)
{
    char path[128];
    backing b;

    (void)state;
    path_in_dir(path, sizeof path, "made.npz");
    archive_both_ways(&b, path);
    assert_same_as_file(&b, path);
    /* The caller's stream: flushed once at close, neither made durable
     * nor committed. */
    assert_int_equal(b.syncs, 1);
    assert_int_equal(b.durable_syncs, 0);
    assert_int_equal(b.commits, 0);
    assert_member(&b, "a", member_a, sizeof member_a);
    assert_member(&b, "b", member_b, sizeof member_b);
    backing_free(&b);
}

/* ---- 4. a member appended to an archive ----------------------------------- */

/* An append from the archive in `zip` (a memory stream, *orig) into a
 * fresh test back end (*s over out), member c added. */
static npyio_npz_writer *start_member_append(const void *zip, size_t len,
                                             backing *out,
                                             npyio_stream **orig,
                                             npyio_stream **s)
{
    npyio_npz_writer *w = NULL;

    assert_ok(npyio_stream_open_memory(zip, len, NULL, orig));
    *s = open_backing(out, NULL, 0);
    assert_ok(npyio__npz_open_append_streams(*orig, *s, 0, NULL, &w));
    add_member_c(w);
    return w;
}

/* Member c appended to `zip` both ways: the same bytes, committed once. */
static void append_member_both_ways(const void *zip, size_t len)
{
    char path[128];
    npyio_npz_writer *w = NULL;
    npyio_stream *orig = NULL, *s = NULL;
    backing out;

    path_in_dir(path, sizeof path, "append.npz");
    write_whole(path, zip, len);
    assert_ok(npyio_npz_writer_open_append_path(path, NPYIO_WRITE_NO_SYNC, NULL, &w));
    add_member_c(w);
    assert_ok(npyio_npz_writer_close(w));
    w = start_member_append(zip, len, &out, &orig, &s);
    assert_ok(npyio_npz_writer_close(w));
    assert_int_equal(out.commits, 1);
    assert_ok(npyio_stream_close(s));
    assert_ok(npyio_stream_close(orig));
    assert_same_as_file(&out, path);
    assert_member(&out, "added", member_c, sizeof member_c);
    backing_free(&out);
}

static void test_append_member(void **state)
{
    /* NumPy's and zipfile's: stored, deflated, empty, bytes before the
     * archive, a comment, data descriptors. */
    static const char *const made_elsewhere[] = {
        "npz/savez.npz", "npz/savez_compressed.npz", "npz/empty.npz",
        "npz/prefix.npz", "npz/odd.npz", "npz/stream.npz"};
    char path[128];
    backing made;
    size_t i, len = 0;

    (void)state;
    path_in_dir(path, sizeof path, "made.npz");
    archive_both_ways(&made, path);
    append_member_both_ways(made.bytes, made.len);
    backing_free(&made);
    for (i = 0; i < sizeof made_elsewhere / sizeof made_elsewhere[0]; i++) {
        unsigned char *zip = read_data_file(made_elsewhere[i], &len);

        append_member_both_ways(zip, len);
        free(zip);
    }
}

/* An aborted append never commits (what it wrote is the caller's to
 * drop). */
static void test_aborted_member_append(void **state)
{
    size_t len = 0;
    unsigned char *zip = read_data_file("npz/savez.npz", &len);
    npyio_stream *orig = NULL, *s = NULL;
    backing out;

    (void)state;
    npyio_npz_writer_abort(start_member_append(zip, len, &out, &orig, &s));
    assert_true(out.len >= len); /* the old archive was copied */
    assert_ok(npyio_stream_close(s));
    assert_ok(npyio_stream_close(orig));
    assert_int_equal(out.commits, 0);
    assert_int_equal(out.closes, 1);
    backing_free(&out);
    free(zip);
}

/* ---- 5. no map ------------------------------------------------------------ */

static void test_map_refused(void **state)
{
    size_t len = 0;
    unsigned char *file = saved_i4(3, &len);
    npyio_map *m = (npyio_map *)&len; /* must be cleared */
    npyio_stream *s;
    backing b;

    (void)state;
    s = open_backing(&b, file, len);
    assert_status(npyio__map_array_at(s, 0, (int64_t)len, 0, NULL, &m),
                  NPYIO_E_UNSUPPORTED);
    assert_null(m);
    assert_error_contains("the test buffer stream cannot be mapped");
    assert_ok(npyio_stream_close(s));
    assert_buffer_is(&b, file, len);
    backing_free(&b);
    free(file);
}

static int group_setup(void **state)
{
    (void)state;
    return scratch_make("npyio-backend");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_append_rows),
        cmocka_unit_test(test_aborted_append_restores),
        cmocka_unit_test(test_rows_in_place),
        cmocka_unit_test(test_archive_into_backend),
        cmocka_unit_test(test_append_member),
        cmocka_unit_test(test_aborted_member_append),
        cmocka_unit_test(test_map_refused),
    };

    return cmocka_run_group_tests(tests, group_setup, scratch_remove);
}
