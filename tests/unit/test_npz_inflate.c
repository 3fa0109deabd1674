/*
 * test_npz_inflate.c - the two inflaters of whole member reads (issue 43):
 * libdeflate's one call (members up to 257 MiB) and zlib's streaming (the
 * others), chosen here through the options' test hook
 * (npyio__options_set_inflate). Every member of the NPZ corpus, the
 * damaged ones of tests/data/npz/damage, and members damaged here
 * (corrupt deflate data, a directory size too small and too large, a
 * wrong CRC-32) give the same status, message and bytes through both,
 * read four ways: npyio_npz_load (the header read first: libdeflate's
 * output lands in the load's own block, the header in room before the
 * data), npyio_reader_read into the caller's buffer (a scratch of the
 * member, then a copy), a member stream read whole from its first byte
 * (straight into the buffer) and npyio_npz_verify. That each way takes
 * libdeflate is shown by its decompressor made to fail: NPYIO_E_NOMEM,
 * naming the call; that a load needs no scratch, by its allocations.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "testutil.h"
#include "testdata.h"
#include "scratch.h"

#include "options.h"

typedef struct outcome {
    npyio_status st;
    char msg[1024];
    unsigned char *bytes;
    size_t len;
} outcome;

typedef npyio_status (*way)(npyio_npz *npz, size_t i, outcome *out);

static npyio_status way_load(npyio_npz *npz, size_t i, outcome *out)
{
    void *data = NULL;
    int ndim = 0;
    int64_t shape[64];
    npyio_status st = npyio_npz_load(npz, i, &data, &out->len, NULL, 0,
                                     &ndim, shape, 64);

    if (st == NPYIO_OK && out->len > 0) {
        out->bytes = malloc(out->len);
        assert_non_null(out->bytes);
        memcpy(out->bytes, data, out->len);
    }
    npyio_free(data);
    return st;
}

static npyio_status way_read(npyio_npz *npz, size_t i, outcome *out)
{
    npyio_reader *r = NULL;
    npyio_status st = npyio_reader_open_member(npz, i, &r);

    if (st != NPYIO_OK)
        return st;
    out->len = (size_t)npyio_header_nbytes(npyio_reader_header(r));
    out->bytes = malloc(out->len + 1);
    assert_non_null(out->bytes);
    st = npyio_reader_read(r, out->bytes, out->len, 0);
    npyio_reader_close(r);
    return st;
}

static npyio_status way_stream(npyio_npz *npz, size_t i, outcome *out)
{
    npyio_stream *s = NULL;
    int64_t usize = 0;
    npyio_status st = npyio_npz_stat(npz, i, NPYIO_NPZ_STAT_SIZE, &usize);

    if (st == NPYIO_OK)
        st = npyio_stream_open_member(npz, i, &s);
    if (st != NPYIO_OK)
        return st;
    out->bytes = malloc((size_t)usize + 1);
    assert_non_null(out->bytes);
    st = npyio_stream_read(s, out->bytes, (size_t)usize, &out->len);
    npyio_stream_close(s);
    return st;
}

static npyio_status way_verify(npyio_npz *npz, size_t i, outcome *out)
{
    (void)out;
    return npyio_npz_verify(npz, i);
}

static const way ways[] = {way_load, way_read, way_stream, way_verify};
static const char *const way_names[] = {"npyio_npz_load", "npyio_reader_read",
                                        "npyio_stream_read",
                                        "npyio_npz_verify"};
#define WAYS (sizeof ways / sizeof ways[0])

/* Options choosing an inflater (NPYIO__INFLATE_*), the decompressor
 * failing if asked. */
static npyio_options *choosing(int inflate, bool no_decompressor)
{
    npyio_options *o = NULL;

    assert_ok(npyio_options_new(&o));
    npyio__options_set_inflate(o, inflate, no_decompressor);
    return o;
}

/* Way w of member i of the archive in bytes, with options o. */
static void run_way(const unsigned char *bytes, size_t len,
                    const npyio_options *o, size_t i, size_t w, outcome *out)
{
    npyio_stream *s = NULL;
    npyio_npz *npz = NULL;

    memset(out, 0, sizeof *out);
    assert_ok(npyio_stream_open_memory(bytes, len, NULL, &s));
    out->st = npyio_npz_open_stream(s, o, &npz);
    if (out->st == NPYIO_OK)
        out->st = ways[w](npz, i, out);
    snprintf(out->msg, sizeof out->msg, "%s",
             out->st == NPYIO_OK ? "" : npyio_last_error());
    npyio_npz_close(npz);
    npyio_stream_close(s);
}

static size_t member_count(const unsigned char *bytes, size_t len)
{
    npyio_stream *s = NULL;
    npyio_npz *npz = NULL;
    size_t n = 0;

    assert_ok(npyio_stream_open_memory(bytes, len, NULL, &s));
    if (npyio_npz_open_stream(s, NULL, &npz) == NPYIO_OK)
        n = npyio_npz_count(npz);
    npyio_npz_close(npz);
    npyio_stream_close(s);
    return n;
}

/* Every way of every member: both inflaters agree. The first outcome of
 * member `first` way by way is returned in `want` (if given). */
static void same_both_ways(const char *name, const unsigned char *bytes,
                           size_t len, npyio_status *want)
{
    npyio_options *zlib = choosing(NPYIO__INFLATE_ZLIB, false);
    npyio_options *whole = choosing(NPYIO__INFLATE_WHOLE, false);
    size_t count = member_count(bytes, len), i, w;

    for (i = 0; i < count; i++) {
        for (w = 0; w < WAYS; w++) {
            outcome a, b;

            run_way(bytes, len, zlib, i, w, &a);
            run_way(bytes, len, whole, i, w, &b);
            if (a.st != b.st || strcmp(a.msg, b.msg) != 0 ||
                a.len != b.len ||
                (a.st == NPYIO_OK && a.len > 0 &&
                 memcmp(a.bytes, b.bytes, a.len) != 0))
                fail_msg("%s member %zu, %s: zlib %s \"%s\" (%zu bytes), "
                         "libdeflate %s \"%s\" (%zu bytes)", name, i,
                         way_names[w], npyio_status_string(a.st), a.msg,
                         a.len, npyio_status_string(b.st), b.msg, b.len);
            if (want != NULL && i == 0)
                want[w] = a.st;
            free(a.bytes);
            free(b.bytes);
        }
    }
    npyio_options_free(zlib);
    npyio_options_free(whole);
}

/* Every way of member i takes libdeflate: its decompressor failing is
 * the failure. */
static void takes_libdeflate(const unsigned char *bytes, size_t len, size_t i)
{
    npyio_options *o = choosing(NPYIO__INFLATE_WHOLE, true);
    size_t w;

    for (w = 0; w < WAYS; w++) {
        outcome out;

        run_way(bytes, len, o, i, w, &out);
        if (out.st != NPYIO_E_NOMEM ||
            strstr(out.msg, "libdeflate_alloc_decompressor") == NULL ||
            strncmp(out.msg, way_names[w], strlen(way_names[w])) != 0)
            fail_msg("member %zu, %s: %s \"%s\", not libdeflate's NOMEM",
                     i, way_names[w], npyio_status_string(out.st), out.msg);
        free(out.bytes);
    }
    npyio_options_free(o);
}

static void same_for_file(const char *rel)
{
    size_t len = 0;
    unsigned char *bytes = read_data_file(rel, &len);

    same_both_ways(rel, bytes, len, NULL);
    free(bytes);
}

/* The corpus, valid and damaged: the same through both. */
static void test_corpus(void **state)
{
    tsv_table t;
    size_t k;

    (void)state;
    same_for_file("npz/savez_compressed.npz");
    same_for_file("npz/savez.npz");
    same_for_file("npz/odd.npz");
    same_for_file("npz/inflate/hlit287_bad_crc.npz");
    tsv_load("npz/damage/manifest.tsv", &t);
    for (k = 0; k < t.count; k++) {
        char rel[256];

        snprintf(rel, sizeof rel, "npz/damage/%s", t.rows[k].field[0]);
        same_for_file(rel);
    }
    tsv_free(&t);
}

/* A dynamic block declaring 287 literal/length codes (gen_npz_inflate.py),
 * the CRC-32 that of the bytes libdeflate gives: zlib refuses it (as
 * np.load does), libdeflate takes it. The difference npyio.h states: a
 * read that inflates the whole member from its first byte (a member
 * stream read whole, verify) takes the bytes; a reader, whose header read
 * goes through zlib, refuses. */
static void test_zlib_refuses(void **state)
{
    static const npyio_status with_zlib[WAYS] = {
        NPYIO_E_FORMAT, NPYIO_E_FORMAT, NPYIO_E_FORMAT, NPYIO_E_FORMAT};
    static const npyio_status with_libdeflate[WAYS] = {
        NPYIO_E_FORMAT, NPYIO_E_FORMAT, NPYIO_OK, NPYIO_OK};
    npyio_options *zlib = choosing(NPYIO__INFLATE_ZLIB, false);
    npyio_options *whole = choosing(NPYIO__INFLATE_WHOLE, false);
    size_t len = 0, npy_len = 0, w;
    unsigned char *bytes = read_data_file("npz/inflate/hlit287.npz", &len);
    unsigned char *npy = read_data_file("arrays/u1.npy", &npy_len);

    (void)state;
    for (w = 0; w < WAYS; w++) {
        outcome a, b;

        run_way(bytes, len, zlib, 0, w, &a);
        run_way(bytes, len, whole, 0, w, &b);
        assert_int_equal(a.st, with_zlib[w]);
        assert_non_null(strstr(a.msg, "too many length or distance symbols"));
        assert_int_equal(b.st, with_libdeflate[w]);
        if (w == 2)
            assert_true(b.len == npy_len &&
                        memcmp(b.bytes, npy, npy_len) == 0);
        free(a.bytes);
        free(b.bytes);
    }
    free(bytes);
    free(npy);
    npyio_options_free(zlib);
    npyio_options_free(whole);
}

/* ---- members damaged here: the first of savez_compressed.npz ------------------ */

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

typedef struct first_member {
    unsigned char *bytes;
    size_t len;
    unsigned char *local, *central; /* its two headers in bytes */
    size_t data;                    /* its first compressed byte */
} first_member;

static void first_load(first_member *f)
{
    size_t k;

    f->bytes = read_data_file("npz/savez_compressed.npz", &f->len);
    f->local = f->bytes;
    assert_memory_equal(f->local, "PK\3\4", 4);
    assert_int_equal(f->local[8], 8); /* deflated */
    f->data = 30 + (size_t)(f->local[26] | f->local[27] << 8) +
              (size_t)(f->local[28] | f->local[29] << 8);
    for (k = 0; k + 4 <= f->len; k++)
        if (memcmp(f->bytes + k, "PK\1\2", 4) == 0)
            break;
    assert_true(k + 46 <= f->len);
    f->central = f->bytes + k;
}

/* Both headers' CRC-32 and uncompressed size set. */
static void first_set(first_member *f, uint32_t crc, uint32_t usize)
{
    put32(f->local + 14, crc);
    put32(f->local + 22, usize);
    put32(f->central + 16, crc);
    put32(f->central + 24, usize);
}

static void check_case(const char *name, first_member *f, npyio_status want)
{
    npyio_status got[WAYS];
    size_t w;

    same_both_ways(name, f->bytes, f->len, got);
    for (w = 0; w < WAYS; w++)
        if (got[w] != want)
            fail_msg("%s, %s: %s, not %s", name, way_names[w],
                     npyio_status_string(got[w]), npyio_status_string(want));
}

static void test_damaged_here(void **state)
{
    first_member f;
    uint32_t crc, usize;
    unsigned char *inflated;

    (void)state;
    first_load(&f);
    crc = get32(f.local + 14);
    usize = get32(f.local + 22);
    takes_libdeflate(f.bytes, f.len, 0);
    check_case("intact", &f, NPYIO_OK);
    /* A wrong CRC-32. */
    first_set(&f, crc ^ 1, usize);
    check_case("wrong CRC-32", &f, NPYIO_E_CHECKSUM);
    /* The directory declares 8 bytes more: the stream ends early, and
     * the bytes it gave have the CRC-32 declared. */
    first_set(&f, crc, usize + 8);
    check_case("size too large", &f, NPYIO_E_TRUNCATED);
    /* 8 bytes fewer, with the CRC-32 of those: it inflates to more. */
    inflated = malloc(usize);
    assert_non_null(inflated);
    {
        uLongf out_len = usize;
        z_stream z;

        memset(&z, 0, sizeof z);
        assert_int_equal(inflateInit2(&z, -MAX_WBITS), Z_OK);
        z.next_in = f.bytes + f.data;
        z.avail_in = get32(f.local + 18);
        z.next_out = inflated;
        z.avail_out = (uInt)out_len;
        assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
        inflateEnd(&z);
    }
    first_set(&f, (uint32_t)crc32(0, inflated, usize - 8), usize - 8);
    check_case("size too small", &f, NPYIO_E_FORMAT);
    free(inflated);
    /* Corrupt deflate data: the first block's type 3 (reserved). */
    first_set(&f, crc, usize);
    f.bytes[f.data] |= 0x06;
    check_case("corrupt deflate data", &f, NPYIO_E_FORMAT);
    free(f.bytes);
}

/* ---- a load's blocks: no scratch of the member ------------------------------ */

static size_t big_blocks, big_at_least;

static void *count_alloc(void *user, size_t size, size_t alignment)
{
    void *p = NULL;

    (void)user;
    if (size >= big_at_least && size < 2 * big_at_least)
        big_blocks++; /* the member's size, not the inflater's buffers */
    return posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *)
                                                         : alignment,
                          size) == 0
               ? p
               : NULL;
}

static void count_free(void *user, void *p, size_t size)
{
    (void)user;
    (void)size;
    free(p);
}

/* npyio_npz_load of a deflated member allocates one block as large as its
 * data (the load's own, with room for the header before the data); a read
 * into the caller's buffer takes a scratch of the member. */
static void test_load_blocks(void **state)
{
    static const npyio_allocator counting = {sizeof counting, count_alloc,
                                             NULL, count_free};
    static double values[1000];
    const char *key = "a", *type = "=f8";
    const int ndim = 1, level = 6;
    const int64_t shape[1] = {1000}, *shapes = shape;
    const void *data = values;
    const size_t lens = sizeof values;
    npyio_options *o = choosing(0, false);
    npyio_npz *npz = NULL;
    char path[1024];
    outcome out;
    size_t i;

    (void)state;
    for (i = 0; i < 1000; i++)
        values[i] = (double)(i % 100) * 0.25;
    path_in_dir(path, sizeof path, "blocks.npz");
    assert_ok(npyio_savez(path, 1, &key, &type, &ndim, &shapes, &data, &lens,
                          &level, NPYIO_WRITE_NO_SYNC, NULL));
    assert_ok(npyio_options_set_allocator(o, &counting, NULL));
    assert_ok(npyio_npz_open_path(path, o, &npz));
    big_at_least = sizeof values;
    big_blocks = 0;
    memset(&out, 0, sizeof out);
    assert_ok(way_load(npz, 0, &out));
    assert_int_equal(big_blocks, 1);
    assert_memory_equal(out.bytes, values, sizeof values);
    free(out.bytes);
    big_blocks = 0;
    memset(&out, 0, sizeof out);
    assert_ok(way_read(npz, 0, &out));
    assert_int_equal(big_blocks, 1); /* the scratch */
    assert_memory_equal(out.bytes, values, sizeof values);
    free(out.bytes);
    npyio_npz_close(npz);
    npyio_options_free(o);
}

/* A member with a block index that one libdeflate call can take: on 2
 * threads the one call inflates it (faster than zlib on two threads: its
 * decompressor made to fail is NPYIO_E_NOMEM), on 3 threads the index's
 * blocks do (no decompressor needed), with the same bytes. */
static void test_index_or_whole(void **state)
{
    static const int64_t threads[] = {2, 3};
    static const npyio_status want[] = {NPYIO_E_NOMEM, NPYIO_OK};
    const char *key = "a", *type = "=f8";
    const int ndim = 1, level = 1;
    const int64_t count = (int64_t)(9 << 20) / 8, *shapes = &count;
    const size_t lens = (size_t)count * 8;
    double *values = malloc(lens);
    const void *data = values;
    npyio_options *w = NULL;
    char path[1024];
    size_t i;

    (void)state;
    assert_non_null(values);
    for (i = 0; i < (size_t)count; i++)
        values[i] = (double)(i % 1000) * 0.5;
    assert_ok(npyio_options_new(&w));
    assert_ok(npyio_options_set_limit(w, NPYIO_LIMIT_THREADS, 2));
    path_in_dir(path, sizeof path, "indexed.npz");
    /* zlib's blocks and their index: on 2 threads without the flag the
     * member would be one libdeflate call, with no index. */
    assert_ok(npyio_savez(path, 1, &key, &type, &ndim, &shapes, &data, &lens,
                          &level, NPYIO_WRITE_NO_SYNC | NPYIO_NPZ_WRITE_ZLIB,
                          w));
    for (i = 0; i < 2; i++) {
        npyio_options *o = choosing(0, true);
        npyio_npz *npz = NULL;
        int64_t blocks = 0;
        outcome out;

        assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_THREADS, threads[i]));
        assert_ok(npyio_npz_open_path(path, o, &npz));
        assert_ok(npyio_npz_stat(npz, 0, NPYIO_NPZ_STAT_BLOCK_INDEX, &blocks));
        assert_true(blocks >= 2);
        memset(&out, 0, sizeof out);
        assert_int_equal(way_load(npz, 0, &out), want[i]);
        if (want[i] == NPYIO_OK)
            assert_memory_equal(out.bytes, values, lens);
        free(out.bytes);
        npyio_npz_close(npz);
        npyio_options_free(o);
    }
    npyio_options_free(w);
    free(values);
}

static int setup(void **state)
{
    (void)state;
    return scratch_make("test_npz_inflate");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_damaged_here),
        cmocka_unit_test(test_load_blocks),
        cmocka_unit_test(test_index_or_whole),
        cmocka_unit_test(test_zlib_refuses),
    };

    return cmocka_run_group_tests(tests, setup, scratch_remove);
}
