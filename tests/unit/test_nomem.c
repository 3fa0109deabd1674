/*
 * test_nomem.c - every allocation failed in turn. For each public
 * operation that allocates, run it with an allocator that fails its k-th
 * call, for k = 1, 2, ... until the operation no longer reaches a k-th
 * allocation. Each run must:
 *   - fail with NPYIO_E_NOMEM (or succeed, where a smaller fallback is
 *     the documented behaviour), never another status, a crash or a hang;
 *   - give back every block it took (the allocator counts live blocks;
 *     ASan sees what bypasses it);
 *   - leave a destination file as it was (writers, appends, archives).
 * Allocations made in worker threads (parallel deflate) count too: the
 * allocator is locked. minizip's own allocations do not go through it
 * (documented in the header), so they are not failed here.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "testutil.h"
#include "scratch.h"

#include "inject.h"
#include "options.h" /* the inflater chosen */
#include "platform.h" /* the fault hook: an append's buffered copy */

typedef npyio_status (*operation)(const npyio_options *o);

/* When set, the one public call an operation makes: a failed allocation's
 * message must name it, and no call inside it (the library calls its
 * internal bodies, which report the caller's call). And the file it
 * reads: once a failure's message names it (the file is open), every
 * later allocation's does. */
static const char *called, *called_on;
static int file_named;

static void assert_names_only_called(const char *name, long k)
{
    const char *msg = npyio_last_error();

    if (called == NULL)
        return;
    if (getenv("NOMEM_VERBOSE") != NULL)
        fprintf(stderr, "%s: allocation %ld failed: %s\n", name, k, msg);
    assert_names_only(called);
    if (called_on != NULL && strstr(msg, called_on) != NULL)
        file_named = 1;
    else if (called_on != NULL && file_named)
        fail_msg("%s: allocation %ld failed: \"%s\" does not name %s", name,
                 k, msg, called_on);
}

/* Run op failing allocation 1, 2, ... of it; `dest`, if given, is a path
 * the operation writes, put back as it was before each run, which a failure
 * must leave as it was. Returns the number of allocations the operation
 * makes. */
static long fail_each(const char *name, operation op, const char *dest,
                      int64_t threads)
{
    npyio_options *o = failing_options(threads);
    size_t before_len = 0, after_len = 0;
    unsigned char *before = dest != NULL ? snapshot(dest, &before_len) : NULL;
    long k;

    for (k = 1;; k++) {
        npyio_status st;

        if (dest != NULL)
            restore(dest, before, before_len);
        inj.calls = 0;
        inj.fail_at = k;
        inj.failed = 0;
        inj.live = 0;
        st = op(o);
        if (inj.live != 0)
            fail_msg("%s: allocation %ld failed: %ld blocks not given back "
                     "(status %s)", name, k, inj.live,
                     npyio_status_string(st));
        if (!inj.failed) {
            if (st != NPYIO_OK)
                fail_msg("%s: without a failure: %s (%s)", name,
                         npyio_status_string(st), npyio_last_error());
            break;
        }
        if (st != NPYIO_E_NOMEM && st != NPYIO_OK)
            fail_msg("%s: allocation %ld of %ld failed: status %s, not "
                     "NPYIO_E_NOMEM (%s)", name, k, inj.calls,
                     npyio_status_string(st), npyio_last_error());
        if (st == NPYIO_E_NOMEM)
            assert_names_only_called(name, k);
        /* A failure some steps recover from: a header that is not in
         * np.save's exact form is parsed again the general way. */
        if (st == NPYIO_OK && getenv("NOMEM_VERBOSE") != NULL)
            fprintf(stderr, "%s: allocation %ld failed, and it succeeded\n",
                    name, k);
        if (st != NPYIO_OK && dest != NULL) {
            unsigned char *after = snapshot(dest, &after_len);

            if (after_len != before_len ||
                (before_len > 0 && memcmp(after, before, before_len) != 0))
                fail_msg("%s: allocation %ld failed: %s changed", name, k,
                         dest);
            free(after);
        }
    }
    free(before);
    npyio_options_free(o);
    return k - 1;
}

/* ---- the operations --------------------------------------------------------------- */

static const char nested[] =
    "[('id', '<u4'), ('pts', [('p', '>i2'), ('', '|V2'), ('q', '<f4')], "
    "(3,)), (('the flag', 'flag'), '?'), ('when', '>M8[s]')]";

static char corpus_npy[1024], corpus_npz[1024], out_npy[256], out_npz[256];

static npyio_status op_descr(const npyio_options *o)
{
    npyio_dtype *dt = NULL, *native = NULL;
    char text[512];
    size_t len = 0;
    npyio_status st = npyio_dtype_parse(nested, sizeof nested - 1, o,
                                             &dt);

    if (st == NPYIO_OK)
        st = npyio_dtype_descr(dt, text, sizeof text, &len);
    if (st == NPYIO_OK)
        st = npyio_dtype_new_native(dt, &native);
    npyio_dtype_unref(native);
    npyio_dtype_unref(dt);
    return st;
}

static npyio_status op_builder(const npyio_options *o)
{
    static const int64_t shape[2] = {2, 3};
    npyio_record_builder *b = NULL;
    npyio_dtype *f8 = NULL, *rec = NULL;
    npyio_status st = npyio_dtype_parse("<f8", 3, o, &f8);

    if (st == NPYIO_OK)
        st = npyio_record_builder_new(NPYIO_RECORD_ALIGNED, o, &b);
    if (st == NPYIO_OK)
        st = npyio_record_builder_add(b, "x", NULL, -1, f8, 0, NULL);
    if (st == NPYIO_OK)
        st = npyio_record_builder_add(b, "y", "why", -1, f8, 2, shape);
    if (st == NPYIO_OK)
        st = npyio_record_builder_finish(b, 0, &rec);
    npyio_record_builder_free(b);
    npyio_dtype_unref(rec);
    npyio_dtype_unref(f8);
    return st;
}

static npyio_status op_header(const npyio_options *o)
{
    static const int64_t shape[3] = {4, 5, 6};
    npyio_dtype *dt = NULL;
    npyio_header *h = NULL, *back = NULL;
    unsigned char bytes[1024];
    size_t len = 0;
    npyio_status st = npyio_dtype_parse(nested, sizeof nested - 1, o,
                                             &dt);

    if (st == NPYIO_OK)
        st = npyio_header_new(dt, 3, shape, 1, &h);
    if (st == NPYIO_OK)
        st = npyio_header_emit(h, 0, bytes, sizeof bytes, &len);
    if (st == NPYIO_OK)
        st = npyio_header_parse(bytes, len, o, &back, NULL);
    npyio_header_free(back);
    npyio_header_free(h);
    npyio_dtype_unref(dt);
    return st;
}

/* Every way to read a Fortran-order, big-endian record file from a path. */
static npyio_status op_read(const npyio_options *o)
{
    npyio_header *h = NULL;
    npyio_reader *r = NULL;
    void *data = NULL;
    unsigned char chunk[200], rows[4096];
    size_t len = 0, got = 0;
    npyio_status st = npyio_load_with_header(corpus_npy, NPYIO_READ_NATIVE |
                                     NPYIO_READ_C_ORDER, o, &h, &data);

    npyio_free(data);
    npyio_header_free(h);
    if (st == NPYIO_OK)
        st = npyio_reader_open_path(corpus_npy, o, &r);
    while (st == NPYIO_OK)
        st = npyio_reader_read_chunk(r, chunk, sizeof chunk,
                                     NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER,
                                     &got);
    if (st == NPYIO_END)
        st = npyio_reader_read_rows(r, 1, 2, rows, sizeof rows,
                                    NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER);
    npyio_reader_close(r);
    (void)len;
    return st;
}

/* One whole load of a big-endian record file as native, C order: the
 * header handed back is made for the converted bytes. */
static npyio_status op_load_native(const npyio_options *o)
{
    npyio_header *h = NULL;
    void *data = NULL;
    npyio_status st = npyio_load_with_header(corpus_npy, NPYIO_READ_NATIVE |
                                             NPYIO_READ_C_ORDER, o, &h, &data);

    npyio_free(data);
    npyio_header_free(h);
    return st;
}

/* A header of `type` made with the failing allocator. */
static npyio_status header_with(const npyio_options *o, const char *type,
                                int ndim, const int64_t *shape,
                                npyio_header **h)
{
    npyio_dtype *dt = NULL;
    npyio_status st = npyio_dtype_parse(type, strlen(type), o, &dt);

    if (st == NPYIO_OK)
        st = npyio_header_new(dt, ndim, shape, 0, h);
    npyio_dtype_unref(dt); /* the header holds its own reference */
    return st;
}

/* The data through a writer opened with status st, then closed (or
 * abandoned after a failure); the header released. */
static npyio_status write_through(npyio_status st, npyio_writer *w,
                                  npyio_header *h, const void *data,
                                  size_t len)
{
    if (st == NPYIO_OK)
        st = npyio_writer_write(w, data, len);
    if (st == NPYIO_OK)
        st = npyio_writer_close(w);
    else
        npyio_writer_abort(w);
    npyio_header_free(h);
    return st;
}

static npyio_status op_write(const npyio_options *o)
{
    static const double v[12] = {1, 2, 3};
    npyio_header *h = NULL;
    npyio_writer *w = NULL;
    npyio_status st = header_with(o, ">f8", 2, (const int64_t[]){3, 4}, &h);

    if (st == NPYIO_OK)
        st = npyio_writer_create_path(out_npy, h, NPYIO_WRITE_NO_SYNC |
                                    NPYIO_WRITE_UNKNOWN_ROWS, o, &w);
    return write_through(st, w, h, v, sizeof v);
}

static npyio_status op_append(const npyio_options *o)
{
    static const double v[4] = {9, 8, 7, 6};
    npyio_header *h = NULL;
    npyio_writer *w = NULL;
    npyio_status st = header_with(o, ">f8", 2, (const int64_t[]){1, 4}, &h);

    if (st == NPYIO_OK)
        st = npyio_writer_open_append_path(out_npy, h, NPYIO_WRITE_NO_SYNC, o,
                                           &w);
    return write_through(st, w, h, v, sizeof v);
}

static npyio_status op_map(const npyio_options *o)
{
    npyio_map *m = NULL;
    npyio_status st = npyio_map_open_path(corpus_npy, 0, o, &m);

    npyio_map_close(m);
    return st;
}

static npyio_status op_npz_read(const npyio_options *o)
{
    unsigned char buf[4096];
    npyio_npz *npz = NULL;
    size_t i, got = 0;
    npyio_status st = npyio_npz_open_path(corpus_npz, o, &npz);

    for (i = 0; st == NPYIO_OK && i < npyio_npz_count(npz); i++) {
        npyio_reader *r = NULL;
        npyio_stream *s = NULL;
        void *data = NULL;
        size_t len = 0;
        int64_t is_array = 0;

        st = npyio_npz_stat(npz, i, NPYIO_NPZ_STAT_IS_ARRAY, &is_array);
        if (st == NPYIO_OK && is_array == 1) {
            st = npyio_reader_open_member(npz, i, &r);
            if (st == NPYIO_OK)
                st = npyio_reader_read_alloc(r, NPYIO_READ_NATIVE |
                                                 NPYIO_READ_C_ORDER,
                                             &data, &len);
            if (st == NPYIO_E_UNSUPPORTED) /* object arrays */
                st = NPYIO_OK;
            npyio_free(data);
            npyio_reader_close(r);
        }
        if (st == NPYIO_OK)
            st = npyio_npz_verify(npz, i);
        if (st == NPYIO_OK)
            st = npyio_stream_open_member(npz, i, &s);
        while (st == NPYIO_OK && (st = npyio_stream_read(s, buf, sizeof buf,
                                                         &got)) == NPYIO_OK &&
               got > 0)
            ;
        npyio_stream_close(s);
    }
    npyio_npz_close(npz);
    return st;
}

static npyio_status op_npz_load(const npyio_options *o)
{
    void *data = NULL;
    npyio_status st = npz_load_key(corpus_npz, "f8le_300x2_f", o, &data,
                                   NULL);

    npyio_free(data);
    return st;
}

/* The load again through zlib's streaming inflate (the libdeflate call
 * takes members of the corpus's sizes): its own allocations fail too. */
static npyio_status op_npz_load_zlib(const npyio_options *o)
{
    npyio_status st;

    npyio__options_set_inflate((npyio_options *)o, NPYIO__INFLATE_ZLIB,
                               false);
    st = op_npz_load(o);
    npyio__options_set_inflate((npyio_options *)o, 0, false);
    return st;
}

/* libdeflate allocates its decompressor with malloc, not through the
 * caller's allocator (include/npyio.h says so): the test hook makes it
 * give NULL, which is NPYIO_E_NOMEM naming the caller's call, nothing
 * kept. */
static void decompressor_fails(void)
{
    npyio_options *o = failing_options(1);
    npyio_status st;

    npyio__options_set_inflate(o, 0, true);
    inj.calls = 0;
    inj.fail_at = 0;
    inj.live = 0;
    st = op_npz_load(o);
    assert_status(st, NPYIO_E_NOMEM);
    assert_int_equal(inj.live, 0);
    assert_names_only("npyio_npz_load");
    assert_error_contains("libdeflate_alloc_decompressor");
    npyio_options_free(o);
}

static double big[1 << 15]; /* 256 KiB: one block of parallel deflate */

/* Stored, deflated (whole: one libdeflate call unless the flags say
 * NPYIO_NPZ_WRITE_ZLIB), unknown rows, an .npy file as it is (read whole), a
 * copy. */
static npyio_status npz_write_with(const npyio_options *o, uint32_t flags)
{
    npyio_npz_writer *w = NULL;
    npyio_writer *m = NULL;
    npyio_header *h = NULL;
    npyio_stream *s = NULL;
    npyio_npz *src = NULL;
    npyio_status st = header_with(o, "<f8", 1, (const int64_t[]){
                                      sizeof big / sizeof big[0]}, &h);

    if (st == NPYIO_OK)
        st = npyio_npz_writer_create_path(out_npz,
                                          NPYIO_WRITE_NO_SYNC | flags, o, &w);
    if (st == NPYIO_OK)
        st = npyio_npz_writer_add_with_header(w, "stored", h, big, sizeof big,
                                              0, 0);
    if (st == NPYIO_OK)
        st = npyio_npz_writer_add_with_header(w, "deflated", h, big,
                                              sizeof big, 1, 0);
    if (st == NPYIO_OK)
        st = npyio_writer_create_member(w, "rows", h, 6,
                                        NPYIO_WRITE_UNKNOWN_ROWS, &m);
    if (st == NPYIO_OK)
        st = npyio_writer_write(m, big, 4096);
    if (m != NULL) {
        npyio_status closed = npyio_writer_close(m);

        if (st == NPYIO_OK)
            st = closed;
    }
    if (st == NPYIO_OK)
        st = npyio_stream_open_path(corpus_npy, NPYIO_STREAM_READ, o, &s);
    if (st == NPYIO_OK)
        st = npyio_npz_writer_add_npy(w, "as_is", s, 6, 0);
    if (st == NPYIO_OK)
        st = npyio_npz_open_path(corpus_npz, o, &src);
    if (st == NPYIO_OK)
        st = npyio_npz_writer_copy(w, NULL, src, 16);
    if (st == NPYIO_OK)
        st = npyio_npz_writer_close(w);
    else
        npyio_npz_writer_abort(w);
    npyio_npz_close(src);
    npyio_stream_close(s);
    npyio_header_free(h);
    return st;
}

static npyio_status op_npz_write(const npyio_options *o)
{
    return npz_write_with(o, 0);
}

static npyio_status op_npz_write_zlib(const npyio_options *o)
{
    return npz_write_with(o, NPYIO_NPZ_WRITE_ZLIB);
}

/* libdeflate allocates its compressor with malloc too: the test hook
 * makes it give NULL, which is NPYIO_E_NOMEM naming npyio_savez, nothing
 * kept and no archive made. */
static void compressor_fails(void)
{
    npyio_options *o = failing_options(1);
    const char *keys[1] = {"a"}, *types[1] = {"=f8"};
    const int64_t n = sizeof big / sizeof big[0], *shapes[1] = {&n};
    const void *data[1] = {big};
    size_t lens[1] = {sizeof big};
    int ndims[1] = {1}, levels[1] = {6};
    char path[256];

    path_in_dir(path, sizeof path, "compressor.npz");
    npyio__options_set_deflate(o, true);
    inj.calls = 0;
    inj.fail_at = 0;
    inj.live = 0;
    assert_status(npyio_savez(path, 1, keys, types, ndims, shapes, data, lens,
                              levels, NPYIO_WRITE_NO_SYNC, o),
                  NPYIO_E_NOMEM);
    assert_int_equal(inj.live, 0);
    assert_names_only("npyio_savez");
    assert_error_contains("libdeflate_alloc_compressor");
    assert_int_equal(access(path, F_OK), -1);
    npyio_options_free(o);
}

static npyio_status append_member(const npyio_options *o, const char *key)
{
    npyio_npz_writer *w = NULL;
    npyio_header *h = NULL;
    npyio_status st = header_with(o, "<f8", 1, (const int64_t[]){16}, &h);

    if (st == NPYIO_OK)
        st = npyio_npz_writer_open_append_path(out_npz, NPYIO_WRITE_NO_SYNC, o,
                                               &w);
    if (st == NPYIO_OK)
        st = npyio_npz_writer_add_with_header(w, key, h, big,
                                              16 * sizeof big[0], 6, 0);
    if (st == NPYIO_OK)
        st = npyio_npz_writer_close(w);
    else
        npyio_npz_writer_abort(w);
    npyio_header_free(h);
    return st;
}

static npyio_status op_npz_append(const npyio_options *o)
{
    return append_member(o, "more");
}

/* The append again, its copy of the archive made through a buffer (as
 * where copy_file_range() does not work between the files), which is
 * allocated too. */
static int no_kernel_copy(void *ctx, const char *call)
{
    (void)ctx;
    return strcmp(call, "copy_file_range") == 0 ? EXDEV : 0;
}

static npyio_status op_npz_append_buffered(const npyio_options *o)
{
    npyio_status st;

    /* The loop's options, with the hook for this operation only. */
    npyio__options_set_faults((npyio_options *)o, no_kernel_copy, NULL);
    st = append_member(o, "more");
    npyio__options_set_faults((npyio_options *)o, NULL, NULL);
    return st;
}

/* ---- the tests ---------------------------------------------------------------------- */

static void test_types(void **state)
{
    (void)state;
    assert_true(fail_each("dtype_from_descr", op_descr, NULL, 1) > 2);
    assert_true(fail_each("record builder", op_builder, NULL, 1) > 2);
    assert_true(fail_each("headers", op_header, NULL, 1) > 2);
}

static void test_npy(void **state)
{
    static const double old[4] = {-1, -2, -3, -4};

    (void)state;
    assert_true(fail_each("read", op_read, NULL, 1) > 2);
    called = "npyio_load_with_header";
    called_on = corpus_npy;
    file_named = 0;
    assert_true(fail_each("load as native", op_load_native, NULL, 1) > 2);
    called = called_on = NULL;
    assert_true(fail_each("map", op_map, NULL, 1) > 0);
    /* An existing file replaced, appended to: kept on every failure. */
    assert_ok(npyio_save(out_npy, "=f8", 1, (const int64_t[]){4}, old,
                               sizeof old, NPYIO_WRITE_NO_SYNC, NULL));
    assert_true(fail_each("write", op_write, out_npy, 1) > 1);
    assert_true(fail_each("append", op_append, out_npy, 1) > 1);
}

static void test_npz(void **state)
{
    unsigned char *archive;
    size_t archive_len = 0;
    long appends;

    (void)state;
    assert_true(fail_each("npz read", op_npz_read, NULL, 1) > 10);
    assert_true(fail_each("npz load", op_npz_load, NULL, 1) > 2);
    assert_true(fail_each("npz load, zlib", op_npz_load_zlib, NULL, 1) > 2);
    decompressor_fails();
    assert_true(fail_each("npz write", op_npz_write, out_npz, 1) > 5);
    assert_true(fail_each("npz write, zlib", op_npz_write_zlib, out_npz, 1) >
                5);
    compressor_fails();
    assert_true(fail_each("npz write, 3 threads", op_npz_write, out_npz, 3) >
                5);
    archive = snapshot(out_npz, &archive_len);
    appends = fail_each("npz append", op_npz_append, out_npz, 1);
    assert_true(appends > 2);
    /* The same append on the same archive, one allocation more: the copy
     * buffer (none more in a build without kernel copies, NPYIO_PORTABLE,
     * whose every append copies through the buffer). */
    restore(out_npz, archive, archive_len);
    assert_int_equal(fail_each("npz append, buffered copy",
                               op_npz_append_buffered, out_npz, 1),
                     appends + (npyio__platform_capabilities().kernel_copy
                                    ? 1
                                    : 0));
    free(archive);
}

static int setup(void **state)
{
    size_t i;

    (void)state;
    snprintf(corpus_npy, sizeof corpus_npy, "%s/arrays/%s",
             NPYIO_TEST_DATA_DIR, "rec_nested_padded_3x4_f.npy");
    snprintf(corpus_npz, sizeof corpus_npz, "%s/npz/%s", NPYIO_TEST_DATA_DIR,
             "savez_compressed.npz");
    for (i = 0; i < sizeof big / sizeof big[0]; i++)
        big[i] = (double)(i % 1000) * 0.25;
    if (scratch_make("test_nomem") != 0)
        return -1;
    path_in_dir(out_npy, sizeof out_npy, "out.npy");
    path_in_dir(out_npz, sizeof out_npz, "out.npz");
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_types),
        cmocka_unit_test(test_npy),
        cmocka_unit_test(test_npz),
    };

    return cmocka_run_group_tests(tests, setup, scratch_remove);
}
