/*
 * test_npz_deflate.c - how members are deflated at write (issue 43): a
 * member given whole (npyio_savez, npyio_npz_writer_add*, add_npy of a
 * stream that seeks, read whole) of up to 257 MiB on at most 2 threads is
 * its .npy header in a non-final stored block, then libdeflate's one-call
 * stream of the data at the caller's level: the compressed bytes are
 * compared with libdeflate's own output here. NPYIO_NPZ_WRITE_ZLIB gives 1.0's
 * bytes: on one thread zlib's raw deflate of the whole member, as
 * zipfile writes (np.savez_compressed); on 2 threads zlib's blocks with
 * their index. Without the flag, more than 2 threads keep the blocks;
 * members in pieces, from a stream that cannot seek, or over
 * NPYIO_LIMIT_ALLOC_BYTES keep zlib. The flag is refused by calls that store every array.
 */
#define _POSIX_C_SOURCE 200809L
#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "testutil.h"
#include "scratch.h"

#include "npz_write_core.h"

#define N_VALUES ((size_t)9 << 17) /* 9 MiB of float64: 3 blocks of 4 MiB */

static double *values;

/* Measurement-like data: a slow ramp plus noise, in hundredths. */
static int setup(void **state)
{
    size_t i;
    uint32_t x = 12345;

    (void)state;
    values = malloc(N_VALUES * sizeof *values);
    for (i = 0; i < N_VALUES; i++) {
        x = x * 1103515245u + 12345u;
        values[i] = (double)((long)(i % 20000) / 4 +
                             (long)((x >> 16) % 200)) / 100.0;
    }
    return scratch_make("npyio-deflate");
}

static int teardown(void **state)
{
    free(values);
    return scratch_remove(state);
}

static npyio_options *threads_options(int threads)
{
    npyio_options *o = NULL;

    assert_ok(npyio_options_new(&o));
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_THREADS, threads));
    return o;
}

/* One array saved as member "a" at level, with flags and options. */
static void save_one(const char *path, const char *type, int ndim,
                     const int64_t *shape, const void *data, size_t len,
                     int level, uint32_t flags, const npyio_options *o)
{
    const char *keys[1] = {"a"}, *types[1] = {type};
    const int64_t *shapes[1] = {shape};
    const void *datas[1] = {data};
    int ndims[1] = {ndim}, levels[1] = {level};

    assert_ok(npyio_savez(path, 1, keys, types, ndims, shapes, datas, &len,
                          levels, NPYIO_WRITE_NO_SYNC | flags, o));
}

/* The compressed bytes of member 0 (malloc'd), after checking that it
 * verifies; *usize its size. */
static unsigned char *member_bytes(const char *path, size_t *csize,
                                   int64_t *usize, int64_t *blocks)
{
    npyio_npz *npz = NULL;
    int64_t at = 0, c = 0;
    unsigned char *buf;
    FILE *f;

    assert_ok(npyio_npz_open_path(path, NULL, &npz));
    assert_ok(npyio_npz_verify(npz, 0));
    assert_ok(npyio_npz_stat(npz, 0, NPYIO_NPZ_STAT_DATA_OFFSET, &at));
    assert_ok(npyio_npz_stat(npz, 0, NPYIO_NPZ_STAT_COMPRESSED_SIZE, &c));
    assert_ok(npyio_npz_stat(npz, 0, NPYIO_NPZ_STAT_SIZE, usize));
    assert_ok(npyio_npz_stat(npz, 0, NPYIO_NPZ_STAT_BLOCK_INDEX, blocks));
    assert_ok(npyio_npz_close(npz));
    buf = malloc((size_t)c + 1);
    f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, (long)at, SEEK_SET), 0);
    assert_int_equal(fread(buf, 1, (size_t)c, f), (size_t)c);
    fclose(f);
    *csize = (size_t)c;
    return buf;
}

/* What a whole member must be: head in one stored block, not final, then
 * libdeflate's stream of data at level. */
static unsigned char *expected_whole(const void *head, size_t head_len,
                                     const void *data, size_t len, int level,
                                     size_t *out_len)
{
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(level);
    size_t cap = 5 + head_len + libdeflate_deflate_compress_bound(c, len);
    unsigned char *out = malloc(cap);

    assert_true(head_len <= 0xFFFF);
    out[0] = 0;
    out[1] = (unsigned char)(head_len & 0xFF);
    out[2] = (unsigned char)(head_len >> 8);
    out[3] = (unsigned char)(~head_len & 0xFF);
    out[4] = (unsigned char)((~head_len >> 8) & 0xFF);
    memcpy(out + 5, head, head_len);
    *out_len = 5 + head_len +
               libdeflate_deflate_compress(c, data, len, out + 5 + head_len,
                                           cap - 5 - head_len);
    libdeflate_free_compressor(c);
    return out;
}

/* zlib's raw deflate of the whole member in one stream (zipfile's, so
 * np.savez_compressed's at level 6). */
static unsigned char *expected_zlib(const void *head, size_t head_len,
                                    const void *data, size_t len, int level,
                                    size_t *out_len)
{
    z_stream z;
    size_t cap = compressBound((uLong)(head_len + len)) + 64;
    unsigned char *out = malloc(cap);

    memset(&z, 0, sizeof z);
    assert_int_equal(deflateInit2(&z, level, Z_DEFLATED, -MAX_WBITS, 8,
                                  Z_DEFAULT_STRATEGY), Z_OK);
    z.next_out = out;
    z.avail_out = (uInt)cap;
    z.next_in = (unsigned char *)head;
    z.avail_in = (uInt)head_len;
    assert_int_equal(deflate(&z, Z_NO_FLUSH), Z_OK);
    z.next_in = (unsigned char *)data;
    z.avail_in = (uInt)len;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    *out_len = cap - z.avail_out;
    deflateEnd(&z);
    return out;
}

/* The member's bytes are those expected; both are freed. */
static void same_bytes(unsigned char *got, size_t got_len,
                       unsigned char *want, size_t want_len)
{
    assert_int_equal(got_len, want_len);
    assert_memory_equal(got, want, got_len);
    free(got);
    free(want);
}

/* The .npy header np.save writes for the array. */
static size_t npy_head(const char *type, int ndim, const int64_t *shape,
                       unsigned char *out, size_t cap)
{
    npyio_header *h = make_header(type, ndim, shape, 0);
    size_t len = 0;

    assert_ok(npyio_header_emit(h, 0, out, cap, &len));
    npyio_header_free(h);
    return len;
}

/* The member saved with (level, flags, threads) is `want` byte for byte,
 * with `blocks` as its block index stat. */
static void check_saved(const char *type, int ndim, const int64_t *shape,
                        const void *data, size_t len, int level,
                        uint32_t flags, int threads, bool whole,
                        int64_t want_blocks)
{
    unsigned char head[512], *got, *want;
    size_t head_len = npy_head(type, ndim, shape, head, sizeof head);
    size_t got_len = 0, want_len = 0;
    npyio_options *o = threads_options(threads);
    int64_t usize = 0, blocks = -2;
    char path[256];

    path_in_dir(path, sizeof path, "one.npz");
    save_one(path, type, ndim, shape, data, len, level, flags, o);
    got = member_bytes(path, &got_len, &usize, &blocks);
    assert_int_equal(usize, (int64_t)(head_len + len));
    assert_int_equal(blocks, want_blocks);
    if (want_blocks == 0) {
        want = whole ? expected_whole(head, head_len, data, len, level,
                                      &want_len)
                     : expected_zlib(head, head_len, data, len, level,
                                     &want_len);
        same_bytes(got, got_len, want, want_len);
    } else {
        free(got);
    }
    npyio_options_free(o);
}

/* Levels 1, 6 and 9 on 1 and 2 threads: libdeflate's stream after the
 * stored header; with the flag, on one thread, zlib's (NumPy's) and not
 * the same bytes. */
static void test_whole_members_are_libdeflate(void **state)
{
    static const int levels[] = {1, 6, 9};
    int64_t shape = (int64_t)(N_VALUES / 8);
    size_t len = (size_t)shape * sizeof(double), i;
    int threads;

    (void)state;
    for (i = 0; i < sizeof levels / sizeof levels[0]; i++) {
        for (threads = 1; threads <= 2; threads++)
            check_saved("=f8", 1, &shape, values, len, levels[i], 0,
                        threads, true, 0);
        check_saved("=f8", 1, &shape, values, len, levels[i],
                    NPYIO_NPZ_WRITE_ZLIB, 1, false, 0);
    }
}

/* An empty array, a 0-d one and a structured one: the same rule. */
static void test_whole_small_shapes(void **state)
{
    static const unsigned char rec[3 * 12] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    int64_t empty[2] = {0, 4}, three = 3;

    (void)state;
    check_saved("=u4", 2, empty, values, 0, 6, 0, 1, true, 0);
    check_saved("=u4", 2, empty, values, 0, 6, NPYIO_NPZ_WRITE_ZLIB, 1,
                false, 0);
    check_saved("=f8", 0, NULL, values, 8, 6, 0, 2, true, 0);
    check_saved("=f8", 0, NULL, values, 8, 9, NPYIO_NPZ_WRITE_ZLIB, 1,
                false, 0);
    check_saved("[('x', '=i4'), ('y', '=f8')]", 1, &three, rec, sizeof rec,
                1, 0, 1, true, 0);
    check_saved("[('x', '=i4'), ('y', '=f8')]", 1, &three, rec, sizeof rec,
                1, NPYIO_NPZ_WRITE_ZLIB, 1, false, 0);
}

/* Threads: the flag on 2 keeps zlib's blocks and their index (3 blocks of
 * 4 MiB); without it 3 and more threads keep them too. */
static void test_threads_rule(void **state)
{
    int64_t shape = (int64_t)(N_VALUES * 8) - 100;

    (void)state;
    check_saved("=u1", 1, &shape, values, (size_t)shape, 6,
                NPYIO_NPZ_WRITE_ZLIB, 2, false, 3);
    check_saved("=u1", 1, &shape, values, (size_t)shape, 6, 0, 3, false, 3);
    check_saved("=u1", 1, &shape, values, (size_t)shape, 6, 0, 7, false, 3);
    check_saved("=u1", 1, &shape, values, (size_t)shape, 6, 0, 2, true, 0);
}

/* Over NPYIO_LIMIT_ALLOC_BYTES the member is zlib's stream. */
static void test_alloc_limit_keeps_zlib(void **state)
{
    int64_t shape = (int64_t)(1 << 20);
    unsigned char head[512], *got, *want;
    size_t head_len = npy_head("=u1", 1, &shape, head, sizeof head);
    size_t got_len = 0, want_len = 0;
    npyio_options *o = threads_options(1);
    int64_t usize = 0, blocks = 0;
    char path[256];

    (void)state;
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_ALLOC_BYTES, 1 << 20));
    path_in_dir(path, sizeof path, "limit.npz");
    save_one(path, "=u1", 1, &shape, values, (size_t)shape, 6, 0, o);
    got = member_bytes(path, &got_len, &usize, &blocks);
    want = expected_zlib(head, head_len, values, (size_t)shape, 6,
                         &want_len);
    same_bytes(got, got_len, want, want_len);
    npyio_options_free(o);
}

/* A member written in pieces (a member writer) is zlib's stream. */
static void test_pieces_keep_zlib(void **state)
{
    int64_t shape = 300000;
    npyio_header *h = make_header("=f8", 1, &shape, 0);
    unsigned char head[512], *got, *want;
    size_t head_len = npy_head("=f8", 1, &shape, head, sizeof head);
    size_t got_len = 0, want_len = 0;
    npyio_options *o = threads_options(1);
    npyio_npz_writer *w = NULL;
    npyio_writer *mw = NULL;
    int64_t usize = 0, blocks = 0;
    char path[256];

    (void)state;
    path_in_dir(path, sizeof path, "pieces.npz");
    assert_ok(npyio_npz_writer_create_path(path, NPYIO_WRITE_NO_SYNC, o,
                                           &w));
    assert_ok(npyio_writer_create_member(w, "a", h, 6, 0, &mw));
    assert_ok(npyio_writer_write(mw, values, 1000 * 8));
    assert_ok(npyio_writer_write(mw, values + 1000, 299000 * 8));
    assert_ok(npyio_writer_close(mw));
    assert_ok(npyio_npz_writer_close(w));
    got = member_bytes(path, &got_len, &usize, &blocks);
    want = expected_zlib(head, head_len, values, 300000 * 8, 6, &want_len);
    same_bytes(got, got_len, want, want_len);
    npyio_header_free(h);
    npyio_options_free(o);
}

/* A stream of read callbacks only (it cannot seek: its length is not
 * known before its end). */
typedef struct pipe_like {
    const unsigned char *p;
    size_t len, at;
} pipe_like;

static int pipe_read(void *user, void *buf, size_t cap, size_t *got)
{
    pipe_like *q = user;

    *got = q->len - q->at < cap ? q->len - q->at : cap;
    memcpy(buf, q->p + q->at, *got);
    q->at += *got;
    return 0;
}

/* add_npy: a file and memory (streams that seek) are read whole and
 * deflated whole; a stream that cannot seek goes through a buffer to
 * zlib's stream; with the flag the file is zlib's too. */
static void add_npy_case(const char *npy, int from, uint32_t flags,
                         const unsigned char *file, size_t file_len,
                         size_t head_len, bool whole)
{
    npyio_stream_ops ops = {.size = sizeof ops, .read = pipe_read};
    pipe_like q = {file, file_len, 0};
    npyio_options *o = threads_options(1);
    npyio_npz_writer *w = NULL;
    npyio_stream *s = NULL;
    unsigned char *got, *want;
    size_t got_len = 0, want_len = 0;
    int64_t usize = 0, blocks = 0;
    char path[256];

    path_in_dir(path, sizeof path, "added.npz");
    assert_ok(npyio_npz_writer_create_path(path, NPYIO_WRITE_NO_SYNC | flags,
                                           o, &w));
    if (from == 0)
        assert_ok(npyio_stream_open_path(npy, NPYIO_STREAM_READ, NULL, &s));
    else if (from == 1)
        assert_ok(npyio_stream_open_memory(file, file_len, NULL, &s));
    else
        assert_ok(npyio_stream_open_ops(&ops, &q, NULL, &s));
    assert_ok(npyio_npz_writer_add_npy(w, "a", s, 6, 0));
    assert_ok(npyio_stream_close(s));
    assert_ok(npyio_npz_writer_close(w));
    got = member_bytes(path, &got_len, &usize, &blocks);
    assert_int_equal(usize, (int64_t)file_len);
    want = whole ? expected_whole(file, head_len, file + head_len,
                                  file_len - head_len, 6, &want_len)
                 : expected_zlib(file, head_len, file + head_len,
                                 file_len - head_len, 6, &want_len);
    same_bytes(got, got_len, want, want_len);
    npyio_options_free(o);
}

static void test_add_npy(void **state)
{
    int64_t shape = 200000;
    size_t head_len, file_len;
    unsigned char *file;
    char npy[256];
    FILE *f;

    (void)state;
    path_in_dir(npy, sizeof npy, "in.npy");
    assert_ok(npyio_save(npy, "=f8", 1, &shape, values, 200000 * 8,
                         NPYIO_WRITE_NO_SYNC, NULL));
    file_len = 200000 * 8 + 4096;
    file = malloc(file_len);
    f = fopen(npy, "rb");
    assert_non_null(f);
    file_len = fread(file, 1, file_len, f);
    fclose(f);
    head_len = file_len - 200000 * 8;
    add_npy_case(npy, 0, 0, file, file_len, head_len, true);
    add_npy_case(npy, 1, 0, file, file_len, head_len, true);
    add_npy_case(npy, 2, 0, file, file_len, head_len, false);
    add_npy_case(npy, 0, NPYIO_NPZ_WRITE_ZLIB, file, file_len, head_len,
                 false);
    free(file);
}

/* A call that deflates nothing refuses the flag, naming it; an add
 * (which takes no archive flag) refuses it as any foreign flag. */
static void test_flag_refused_where_it_means_nothing(void **state)
{
    const char *keys[1] = {"a"}, *types[1] = {"=f8"};
    int64_t two = 2;
    const int64_t *shapes[1] = {&two};
    const void *datas[1] = {values};
    int ndims[1] = {1}, zero[1] = {0};
    size_t len = 16;
    npyio_npz_writer *w = NULL;
    char path[256];

    (void)state;
    path_in_dir(path, sizeof path, "refused.npz");
    assert_status(npyio_savez(path, 1, keys, types, ndims, shapes, datas,
                              &len, NULL, NPYIO_NPZ_WRITE_ZLIB, NULL),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("npyio_savez: NPYIO_NPZ_WRITE_ZLIB chooses how "
                          "members are deflated");
    assert_status(npyio_savez(path, 1, keys, types, ndims, shapes, datas,
                              &len, zero, NPYIO_NPZ_WRITE_ZLIB, NULL),
                  NPYIO_E_INVALID_ARG);
    assert_int_equal(access(path, F_OK), -1);
    save_one(path, "=f8", 1, &two, values, 16, 6, NPYIO_NPZ_WRITE_ZLIB,
             NULL);
    assert_status(npyio_savez_append(path, "b", "=f8", 1, &two, values, 16,
                                     0, NPYIO_NPZ_WRITE_ZLIB, NULL),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("npyio_savez_append: NPYIO_NPZ_WRITE_ZLIB");
    assert_ok(npyio_savez_append(path, "b", "=f8", 1, &two, values, 16, 6,
                                 NPYIO_NPZ_WRITE_ZLIB | NPYIO_WRITE_NO_SYNC,
                                 NULL));
    assert_ok(npyio_npz_writer_open_append_path(path, NPYIO_NPZ_WRITE_ZLIB,
                                                NULL, &w));
    assert_status(npyio_npz_writer_add(w, "c", "=f8", 1, &two, values, 16, 6,
                                       NPYIO_NPZ_WRITE_ZLIB),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("flag NPYIO_NPZ_WRITE_ZLIB (0x2000) is not one");
    npyio_npz_writer_abort(w);
}

/* Data that comes in pieces after the entry chose one libdeflate call
 * (no caller does that: a safeguard) goes to zlib's stream after the
 * stored header, and the member is right. */
static void test_whole_entry_given_pieces(void **state)
{
    int64_t shape = 100000;
    npyio_header *h = make_header("=f8", 1, &shape, 0);
    unsigned char head[512], *got;
    size_t head_len = npy_head("=f8", 1, &shape, head, sizeof head);
    size_t got_len = 0;
    npyio_npz_writer *w = NULL;
    npyio_stream *s = NULL;
    npyio_options *o = threads_options(1);
    int64_t usize = 0, blocks = 0;
    char path[256], *name = NULL;

    (void)state;
    path_in_dir(path, sizeof path, "safeguard.npz");
    assert_ok(npyio_npz_writer_create_path(path, NPYIO_WRITE_NO_SYNC, o,
                                           &w));
    assert_ok(npyio__npz_names_new(&w->names, &w->mem, "a", ".npy", "test",
                                   &name));
    assert_ok(npyio__npz_entry_open(w, name, h, 6, 0, false,
                                    head_len + 800000, "test", &s));
    assert_ok(npyio__npz_entry_append(s, head, head_len));
    assert_ok(npyio__npz_entry_append(s, values, 1000));
    assert_ok(npyio__npz_entry_append(s, (char *)values + 1000, 799000));
    assert_ok(npyio__npz_entry_commit(s));
    assert_ok(npyio_stream_close(s));
    assert_ok(npyio_npz_writer_close(w));
    got = member_bytes(path, &got_len, &usize, &blocks);
    assert_int_equal(usize, (int64_t)(head_len + 800000));
    assert_int_equal(got[0], 0); /* the stored header block */
    assert_memory_equal(got + 5, head, head_len);
    free(got);
    npyio_header_free(h);
    npyio_options_free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_members_are_libdeflate),
        cmocka_unit_test(test_whole_small_shapes),
        cmocka_unit_test(test_threads_rule),
        cmocka_unit_test(test_alloc_limit_keeps_zlib),
        cmocka_unit_test(test_pieces_keep_zlib),
        cmocka_unit_test(test_add_npy),
        cmocka_unit_test(test_flag_refused_where_it_means_nothing),
        cmocka_unit_test(test_whole_entry_given_pieces),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
