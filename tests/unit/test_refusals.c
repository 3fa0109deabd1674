/*
 * test_refusals.c - what public functions must refuse: NULL arguments,
 * pointers that are not (or no longer) their handle, indices and row
 * ranges out of range, operations in the wrong state or on the wrong kind
 * of array or stream. Each refusal is checked for its status and its
 * whole message (the function called, then what is wrong), for the
 * outputs it must clear, and for what it must leave alone (no file made,
 * the handle still usable); every block is given back (inject.h's
 * counting allocator).
 */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <pthread.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "testutil.h"
#include "scratch.h"
#include "testdata.h"
#include "stream.h"
#include "inject.h"

/* A refusal: the status, and the message exactly. */
#define assert_refused(expr, want, text)                                     \
    do {                                                                     \
        npyio_status got_ = (expr);                                          \
        if (got_ != (want) || strcmp(npyio_last_error(), (text)) != 0)       \
            fail_msg("%s gave %s (\"%s\"), want %s (\"%s\")", #expr,         \
                     npyio_status_string(got_), npyio_last_error(),          \
                     npyio_status_string(want), (text));                     \
    } while (0)

#define assert_invalid(expr, text) \
    assert_refused((expr), NPYIO_E_INVALID_ARG, (text))

/* An opener refuses a NULL path and a NULL out. */
#define assert_opener_checked(null_path_call, null_out_call, fn)             \
    do {                                                                     \
        assert_invalid(null_path_call, fn ": path is NULL");                 \
        assert_invalid(null_out_call, fn ": out is NULL");                   \
    } while (0)

/* A function refuses a NULL handle (the call with NULL) and a pointer
 * that is no handle of its type (the call with `fake`): named `name` in
 * its messages, `as` the kind of handle. (The message promises nothing
 * about closed handles, which must not be passed again: their memory is
 * gone, and reading it to check would be a use after free.) */
#define assert_handle_checked(null_call, fake_call, fn, name, as, type)      \
    do {                                                                     \
        assert_invalid(null_call, fn ": " name " is NULL");                  \
        assert_invalid(fake_call, fn ": the pointer given as " as " is not " \
                                  "a live " type);                           \
    } while (0)

static char sample[1024], zero_d[1024], objects[1024], keys_npz[1024],
    fortran[1024];

static const char *data_path(char *buf, const char *relative)
{
    snprintf(buf, 1024, "%s/%s", NPYIO_TEST_DATA_DIR, relative);
    return buf;
}

/* A block of zeros where a handle is expected: not one of ours. */
static _Alignas(max_align_t) unsigned char not_a_handle[1024];
#define GARBAGE ((void *)not_a_handle)

static int setup(void **state)
{
    (void)state;
    data_path(sample, "sample.npy");
    data_path(zero_d, "arrays/i4le_0d.npy");
    data_path(objects, "arrays/object_mixed.npy");
    data_path(keys_npz, "npz/keys.npz");
    data_path(fortran, "arrays/big_f8_fortran.npy");
    inj.fail_at = 0;
    return scratch_make("test_refusals");
}

/* ---- streams ------------------------------------------------------------------ */

static int write_only(void *user, const void *buf, size_t len, size_t *put)
{
    (void)user;
    (void)buf;
    *put = len;
    return 0;
}

/* Reports more bytes than it was asked for. */
static int boastful(void *user, void *buf, size_t cap, size_t *got)
{
    (void)user;
    memset(buf, 0, cap);
    *got = cap + 5;
    return 0;
}

static void test_streams(void **state)
{
    static const unsigned char bytes[4] = {1, 2, 3, 4};
    const npyio_stream_ops writing = {
        .size = sizeof writing, .write = write_only};
    const npyio_stream_ops boasting = {
        .size = sizeof boasting, .read = boastful};
    npyio_options *o = failing_options(1);
    npyio_stream *s = NULL, *w = NULL;
    unsigned char buf[8];
    size_t got = 99;

    (void)state;
    inj.live = 0;
    assert_ok(npyio_stream_open_memory(bytes, sizeof bytes, o, &s));
    assert_invalid(npyio_stream_read(s, buf, sizeof buf, NULL),
                   "npyio_stream_read: got is NULL");
    got = 99;
    assert_invalid(npyio_stream_read(s, NULL, sizeof buf, &got),
                   "npyio_stream_read: buf is NULL");
    assert_handle_checked(npyio_stream_read(NULL, buf, sizeof buf, &got),
                          npyio_stream_read(GARBAGE, buf, sizeof buf, &got),
                          "npyio_stream_read", "stream", "a stream",
                          "npyio_stream");
    assert_int_equal(got, 0);
    /* The stream refused nothing of its own: all four bytes are there. */
    assert_ok(npyio_stream_read(s, buf, sizeof buf, &got));
    assert_int_equal(got, 4);
    assert_memory_equal(buf, bytes, 4);
    assert_ok(npyio_stream_close(s));
    assert_invalid(npyio_stream_open_file(NULL, o, &s),
                   "npyio_stream_open_file: file is NULL");
    assert_invalid(npyio_stream_open_file(stdout, o, NULL),
                   "npyio_stream_open_file: out is NULL");
    assert_invalid(npyio_stream_create_memory(o, NULL),
                   "npyio_stream_create_memory: out is NULL");
    {
        void *taken = GARBAGE;
        size_t taken_len = 5;

        assert_invalid(npyio_stream_take_bytes((npyio_stream *)not_a_handle,
                                               &taken, &taken_len),
                       "npyio_stream_take_bytes: the pointer given as a "
                       "stream is not a live npyio_stream");
        assert_null(taken);
        assert_int_equal(taken_len, 0);
    }
    /* Callbacks without a read, and one that reports too much. */
    assert_ok(npyio_stream_open_ops(&writing, NULL, o, &w));
    assert_invalid(npyio_stream_read(w, buf, sizeof buf, &got),
                   "npyio_stream_read: reading the stream: the stream is not "
                   "readable");
    assert_ok(npyio_stream_close(w));
    assert_ok(npyio_stream_open_ops(&boasting, NULL, o, &w));
    assert_refused(npyio_stream_read(w, buf, 4, &got), NPYIO_E_IO,
                   "npyio_stream_read: reading the stream: the read callback "
                   "reported 9 bytes for a request of 4");
    assert_int_equal(got, 0);
    assert_ok(npyio_stream_close(w));
    assert_int_equal(inj.live, 0);
    npyio_options_free(o);
}

/* ---- readers --------------------------------------------------------------------- */

static void test_readers(void **state)
{
    npyio_options *o = failing_options(1);
    npyio_reader *r = NULL, *z = NULL, *obj = NULL;
    npyio_header *h = (npyio_header *)not_a_handle;
    npyio_stream *s = NULL;
    unsigned char buf[512];
    void *data = buf, *bytes = buf;
    size_t len = 99, got = 99;
    char type[64];
    int64_t shape[4];
    int ndim = 9;

    (void)state;
    inj.live = 0;
    assert_opener_checked(npyio_reader_open_path(NULL, o, &r),
                          npyio_reader_open_path(sample, o, NULL),
                          "npyio_reader_open_path");
    assert_ok(npyio_stream_open_path(sample, NPYIO_STREAM_READ, o, &s));
    assert_invalid(npyio_reader_open_stream(s, o, NULL),
                   "npyio_reader_open_stream: out is NULL");
    assert_ok(npyio_stream_close(s));
    assert_null(npyio_reader_header(NULL));
    assert_null(npyio_reader_header((npyio_reader *)not_a_handle));
    assert_ok(npyio_reader_open_path(sample, o, &r));
    assert_handle_checked(npyio_reader_read(NULL, buf, sizeof buf, 0),
                          npyio_reader_read(GARBAGE, buf, sizeof buf, 0),
                          "npyio_reader_read", "reader", "a reader",
                          "npyio_reader");
    assert_invalid(npyio_reader_read(r, NULL, 1 << 20, 0),
                   "npyio_reader_read: dst is NULL");
    assert_invalid(npyio_reader_read_alloc(r, 0, NULL, &len),
                   "npyio_reader_read_alloc: data is NULL");
    assert_int_equal(len, 0);
    assert_invalid(npyio_reader_read_rows(NULL, 0, 1, buf, sizeof buf, 0),
                   "npyio_reader_read_rows: reader is NULL");
    assert_invalid(npyio_reader_read_rows(r, 0, 1, NULL, sizeof buf, 0),
                   "npyio_reader_read_rows: dst is NULL");
    assert_invalid(npyio_reader_read_chunk(r, buf, sizeof buf, 0, NULL),
                   "npyio_reader_read_chunk: got is NULL");
    /* A NULL buffer with a capacity, as read and read_rows refuse it (the
     * chunk was copied into NULL); with no capacity, too small. */
    assert_invalid(npyio_reader_read_chunk(r, NULL, 100, 0, &got),
                   "npyio_reader_read_chunk: dst is NULL");
    assert_int_equal(got, 0);
    assert_refused(npyio_reader_read_chunk(r, NULL, 0, 0, &got),
                   NPYIO_E_BUFFER_TOO_SMALL,
                   "npyio_reader_read_chunk: one element is 8 bytes, the "
                   "buffer 0");
    assert_ok(npyio_reader_open_path(fortran, o, &z));
    assert_invalid(npyio_reader_read_chunk(z, NULL, 100, NPYIO_READ_C_ORDER,
                                           &got),
                   "npyio_reader_read_chunk: dst is NULL");
    assert_ok(npyio_reader_close(z));
    assert_invalid(npyio_reader_read_pickle(r, NULL, &len),
                   "npyio_reader_read_pickle: bytes is NULL");
    assert_invalid(npyio_reader_read_pickle(r, &bytes, NULL),
                   "npyio_reader_read_pickle: len is NULL");
    assert_invalid(npyio_reader_read_pickle(NULL, &bytes, &len),
                   "npyio_reader_read_pickle: reader is NULL");
    assert_null(bytes);
    assert_invalid(npyio_reader_read_pickle(r, &bytes, &len),
                   "npyio_reader_read_pickle: the array holds no Python "
                   "objects; its data is not a pickle");
    /* None of it moved the reader: the data still reads whole. */
    assert_ok(npyio_reader_read(r, buf, sizeof buf, 0));
    assert_ok(npyio_reader_close(r));
    /* A 0-d array has no rows; a pickle is read once. */
    assert_ok(npyio_reader_open_path(zero_d, o, &z));
    assert_invalid(npyio_reader_read_rows(z, 0, 1, buf, sizeof buf, 0),
                   "npyio_reader_read_rows: a 0-d array has no rows");
    assert_ok(npyio_reader_close(z));
    assert_ok(npyio_reader_open_path(objects, o, &obj));
    assert_ok(npyio_reader_read_pickle(obj, &bytes, &len));
    assert_true(len > 2 && ((unsigned char *)bytes)[0] == 0x80);
    npyio_free(bytes);
    assert_refused(npyio_reader_read_pickle(obj, &bytes, &len),
                   NPYIO_E_STATE,
                   "npyio_reader_read_pickle: the data was already read");
    assert_null(bytes);
    assert_int_equal(len, 0);
    assert_ok(npyio_reader_close(obj));
    /* The one-call loaders. */
    assert_invalid(npyio_load_with_header(sample, 0, o, NULL, &data),
                   "npyio_load_with_header: header is NULL");
    assert_invalid(npyio_load_with_header(sample, 0, o, &h, NULL),
                   "npyio_load_with_header: data is NULL");
    assert_invalid(npyio_load(sample, o, &data, &got, type, sizeof type,
                                    NULL, shape, 4),
                   "npyio_load: ndim is NULL");
    assert_invalid(npyio_load(sample, o, &data, &got, NULL, sizeof type,
                                    &ndim, shape, 4),
                   "npyio_load: type is NULL");
    assert_invalid(npyio_load(sample, o, &data, &got, type, sizeof type,
                                    &ndim, NULL, 4),
                   "npyio_load: shape is NULL");
    assert_int_equal(inj.live, 0);
    npyio_options_free(o);
}

/* ---- writers and maps --------------------------------------------------------------- */

static void test_writers_and_maps(void **state)
{
    npyio_options *o = failing_options(1);
    npyio_header *h = make_header("<f8", 2, (const int64_t[]){2, 2}, 0);
    npyio_header *obj = make_header("O", 1, (const int64_t[]){2}, 0);
    npyio_writer *w = NULL;
    npyio_map *m = (npyio_map *)not_a_handle;
    char path[300], text[1400];
    double v[4] = {1, 2, 3, 4};

    (void)state;
    inj.live = 0;
    path_in_dir(path, sizeof path, "w.npy");
    assert_invalid(npyio_writer_create_path(path, h, 0, o, NULL),
                   "npyio_writer_create_path: out is NULL");
    assert_ok(npyio_writer_create_path(path, h, 0, o, &w));
    assert_invalid(npyio_writer_write(w, NULL, 8),
                   "npyio_writer_write: data is NULL");
    assert_refused(npyio_writer_write_rows(w, 0, 1, v, 16), NPYIO_E_STATE,
                   "npyio_writer_write_rows: the writer was not opened with "
                   "npyio_writer_open_in_place_path");
    /* Refused without harm: the writer goes on. */
    assert_ok(npyio_writer_write(w, v, sizeof v));
    assert_ok(npyio_writer_close(w));
    assert_ok(npyio_writer_open_in_place_path(path, 0, o, &w));
    assert_invalid(npyio_writer_write_rows(w, 1, 2, v, 32),
                   "npyio_writer_write_rows: rows [1, 3) are not within the "
                   "file's 2 rows");
    assert_invalid(npyio_writer_write_rows(w, -1, 1, v, 16),
                   "npyio_writer_write_rows: rows [-1, 0) are not within the "
                   "file's 2 rows");
    assert_ok(npyio_writer_write_rows(w, 1, 1, v, 16));
    assert_ok(npyio_writer_close(w));
    assert_invalid(npyio_writer_write_rows(NULL, 1, 1, v, 16),
                   "npyio_writer_write_rows: writer is NULL");
    assert_ok(npyio_writer_open_in_place_path(path, NPYIO_WRITE_NO_SYNC, o,
                                              &w));
    assert_invalid(npyio_writer_write_rows(w, 1, 1, NULL, 16),
                   "npyio_writer_write_rows: data is NULL");
    assert_ok(npyio_writer_close(w));
    assert_invalid(npyio_writer_open_in_place_path(path, NPYIO_WRITE_UNKNOWN_ROWS,
                                              o, &w),
                   "npyio_writer_open_in_place_path: flag "
                   "NPYIO_WRITE_UNKNOWN_ROWS (0x20) is not one this function "
                   "takes (it takes NPYIO_WRITE_NO_SYNC (0x10) | "
                   "NPYIO_WRITE_WAIT_FOR_LOCK (0x40))");
    assert_null(w);
    assert_invalid(npyio_writer_open_append_path(NULL, h, 0, o, &w),
                   "npyio_writer_open_append_path: path is NULL");
    assert_null(w);
    assert_invalid(npyio_save_with_header(path, NULL, v, sizeof v, 0, o),
                   "npyio_save_with_header: header is not an npyio_header");
    assert_invalid(npyio_header_emit(GARBAGE, 0, NULL, 0, NULL),
                   "npyio_header_emit: the pointer given as a header is not "
                   "a live npyio_header");
    /* Rows of a 0-d array or of objects. */
    snprintf(text, sizeof text, "npyio_writer_open_in_place_path: %s: a 0-d "
             "array has no rows", zero_d);
    assert_invalid(npyio_writer_open_in_place_path(zero_d, 0, o, &w), text);
    assert_null(w);
    snprintf(text, sizeof text, "npyio_writer_open_in_place_path: %s: the array "
             "holds Python objects (a pickle)", objects);
    assert_refused(npyio_writer_open_in_place_path(objects, 0, o, &w),
                   NPYIO_E_UNSUPPORTED, text);
    assert_null(w);
    /* Maps. */
    assert_opener_checked(npyio_map_open_path(NULL, 0, o, &m),
                          npyio_map_open_path(path, 0, o, NULL),
                          "npyio_map_open_path");
    assert_opener_checked(npyio_map_create_path(NULL, h, 0, o, &m),
                          npyio_map_create_path(path, h, 0, o, NULL),
                          "npyio_map_create_path");
    assert_invalid(npyio_map_create_path(path, NULL, 0, o, &m),
                   "npyio_map_create_path: header is not an npyio_header");
    assert_null(m);
    path_in_dir(path, sizeof path, "objects.npy");
    snprintf(text, sizeof text, "npyio_map_create_path: %s: the array holds "
             "Python objects (a pickle): it cannot be mapped", path);
    assert_refused(npyio_map_create_path(path, obj, 0, o, &m),
                   NPYIO_E_UNSUPPORTED, text);
    assert_int_equal(access(path, F_OK), -1); /* nothing made */
    assert_null(npyio_map_data(NULL));
    assert_null(npyio_map_header((npyio_map *)not_a_handle));
    assert_int_equal(npyio_map_is_aligned(NULL), 0);
    assert_int_equal(npyio_map_is_aligned((npyio_map *)not_a_handle), 0);
    assert_ok(npyio_map_close(NULL));
    assert_int_equal(entries(dir), 1); /* w.npy alone */
    npyio_header_free(h);
    npyio_header_free(obj);
    assert_int_equal(inj.live, 0);
    npyio_options_free(o);
}

/* ---- archives ------------------------------------------------------------------------- */

static void test_archives(void **state)
{
    npyio_options *o = failing_options(1);
    npyio_npz *npz = NULL, *from_stream = NULL;
    npyio_npz_writer *w = NULL;
    npyio_stream *s = NULL, *m = (npyio_stream *)not_a_handle;
    npyio_map *map = (npyio_map *)not_a_handle;
    void *data = not_a_handle;
    unsigned char *bytes;
    size_t i = 7, len = 0;
    int64_t v = 5;
    int ambiguous = 3, nd = 0;
    char path[300];

    (void)state;
    inj.live = 0;
    assert_opener_checked(npyio_npz_open_path(NULL, o, &npz),
                          npyio_npz_open_path(keys_npz, o, NULL),
                          "npyio_npz_open_path");
    bytes = snapshot(keys_npz, &len);
    assert_ok(npyio_stream_open_memory(bytes, len, o, &s));
    assert_invalid(npyio_npz_open_stream(s, o, NULL),
                   "npyio_npz_open_stream: out is NULL");
    assert_ok(npyio_npz_open_path(keys_npz, o, &npz));
    assert_int_equal(npyio_npz_count(npz), 4);
    assert_int_equal(npyio_npz_count(NULL), 0);
    assert_null(npyio_npz_name(npz, 4));
    assert_null(npyio_npz_key(npz, 4));
    assert_null(npyio_npz_key(NULL, 0));
    assert_null(npyio_npz_key((npyio_npz *)not_a_handle, 0));
    assert_invalid(npyio_npz_find(npz, NULL, &i, &ambiguous),
                   "npyio_npz_find: key is NULL");
    assert_invalid(npyio_npz_find(npz, "plain", NULL, &ambiguous),
                   "npyio_npz_find: index is NULL");
    assert_handle_checked(npyio_npz_find(NULL, "plain", &i, &ambiguous),
                          npyio_npz_find(GARBAGE, "plain", &i, NULL),
                          "npyio_npz_find", "npz", "an archive",
                          "npyio_npz");
    assert_invalid(npyio_npz_stat(npz, 0, NPYIO_NPZ_STAT_SIZE, NULL),
                   "npyio_npz_stat: value is NULL");
    assert_invalid(npyio_npz_stat(npz, 4, NPYIO_NPZ_STAT_SIZE, &v),
                   "npyio_npz_stat: member 4 of an archive of 4");
    assert_invalid(npyio_stream_open_member(npz, 0, NULL),
                   "npyio_stream_open_member: out is NULL");
    assert_invalid(npyio_stream_open_member(npz, 9, &m),
                   "npyio_stream_open_member: member 9 of an archive of 4");
    assert_invalid(npyio_map_open_member(npz, 3, NULL),
                   "npyio_map_open_member: out is NULL");
    /* From a stream: members read, but do not map. */
    assert_ok(npyio_npz_open_stream(s, o, &from_stream));
    assert_refused(npyio_map_open_member(from_stream, 3,
                                         &map), NPYIO_E_UNSUPPORTED,
                   "npyio_map_open_member: member 3 ('plain.npy'): maps need an "
                   "archive opened from a path");
    assert_null(map);
    assert_ok(npyio_npz_verify(from_stream, 3));
    assert_ok(npyio_npz_close(from_stream));
    /* Copying a member that is not there. */
    path_in_dir(path, sizeof path, "copy.npz");
    assert_ok(npyio_npz_writer_create_path(path, NPYIO_WRITE_NO_SYNC, o, &w));
    assert_invalid(npyio_npz_writer_copy(w, NULL, npz, 4),
                   "npyio_npz_writer_copy: member 4 of an archive of 4");
    assert_ok(npyio_npz_writer_copy(w, "copied", npz, 3));
    assert_ok(npyio_npz_writer_close(w));
    {
        size_t mlen = 0;

        assert_ok(npz_load_key(path, "copied", o, &data, &mlen));
        assert_int_equal(mlen, 192); /* 10 complex128 */
        npyio_free(data);
        /* The one-call loaders of a member. */
        assert_invalid(npyio_npz_load(npz, 3, NULL, &mlen, NULL, 0, &nd,
                                      NULL, 0),
                       "npyio_npz_load: data is NULL");
        assert_invalid(npyio_npz_load(npz, 3, &data, NULL, NULL, 0, &nd,
                                      NULL, 0),
                       "npyio_npz_load: len is NULL");
        assert_invalid(npyio_npz_load(npz, 3, &data, &mlen, NULL, 8, &nd,
                                      NULL, 0),
                       "npyio_npz_load: type is NULL");
        assert_invalid(npyio_npz_load_as(npz, 3, "f8", 0, &data, &mlen, NULL,
                                         NULL, 0),
                       "npyio_npz_load_as: ndim is NULL");
        assert_invalid(npyio_npz_load_as(npz, 9, "f8", 0, &data, &mlen, &nd,
                                         NULL, 0),
                       "npyio_npz_load_as: member 9 of an archive of 4");
    }
    /* None of it harmed the archive. */
    assert_ok(npyio_npz_find(npz, "plain", &i, &ambiguous));
    assert_int_equal(i, 3);
    assert_int_equal(ambiguous, 0);
    assert_ok(npyio_npz_verify(npz, 3));
    assert_ok(npyio_npz_close(npz));
    assert_ok(npyio_stream_close(s));
    free(bytes);
    assert_int_equal(inj.live, 0);
    npyio_options_free(o);
}

/* ---- options ------------------------------------------------------------------------- */

static void test_options(void **state)
{
    npyio_options *o = NULL;
    int64_t v = 0;
    char text[200];

    (void)state;
    assert_ok(npyio_options_new(&o));
    snprintf(text, sizeof text, "npyio_options_set_limit: NPYIO_LIMIT_DEPTH "
             "can be at most %d (%d given)", NPYIO__MAX_DEPTH,
             NPYIO__MAX_DEPTH + 1);
    assert_invalid(npyio_options_set_limit(o, NPYIO_LIMIT_DEPTH,
                                           NPYIO__MAX_DEPTH + 1),
                   text);
    /* The limit kept its value; the largest allowed is taken. */
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_DEPTH,
                                      NPYIO__MAX_DEPTH));
    assert_ok(npyio_options_get_limit(o, NPYIO_LIMIT_DEPTH, &v));
    assert_int_equal(v, NPYIO__MAX_DEPTH);
    npyio_options_free(o);
}

/* ---- archive writers ----------------------------------------------------------------- */

static void test_archive_writers(void **state)
{
    npyio_options *o = failing_options(1);
    npyio_header *h = make_header("<i4", 1, (const int64_t[]){4}, 0);
    static const int32_t v[4] = {1, 2, 3, 4};
    const char *keys[1] = {"a"};
    npyio_stream *s = NULL, *back = NULL;
    npyio_npz_writer *w = GARBAGE;
    npyio_npz *src = NULL, *npz = NULL;
    npyio_writer *m = GARBAGE;
    void *bytes = NULL;
    size_t len = 0;
    char *long_key = malloc(0x10000), path[300];

    (void)state;
    inj.live = 0;
    assert_ok(npyio_npz_open_path(keys_npz, o, &src));
    assert_ok(npyio_stream_create_memory(o, &s));
    assert_invalid(npyio_npz_writer_create_stream(s, 0, o, NULL),
                   "npyio_npz_writer_create_stream: out is NULL");
    assert_ok(npyio_npz_writer_create_stream(s, 0, o, &w));
    assert_invalid(npyio_writer_create_member(w, "a", h, 0, 0, NULL),
                   "npyio_writer_create_member: out is NULL");
    assert_invalid(npyio_writer_create_member(w, NULL, h, 0, 0, &m),
                   "npyio_writer_create_member: key is NULL");
    assert_null(m);
    assert_invalid(npyio_writer_create_member(w, "a", NULL, 0, 0, &m),
                   "npyio_writer_create_member: header is NULL");
    assert_invalid(npyio_writer_create_member(NULL, "a", h, 0, 0, &m),
                   "npyio_writer_create_member: npz is NULL");
    memset(long_key, 'k', 0xFFF0 - 3);
    long_key[0xFFF0 - 3] = '\0';
    assert_invalid(npyio_writer_create_member(w, long_key, h, 0, 0, &m),
                   "npyio_writer_create_member: key of 65517 bytes is too long for a ZIP "
                   "name");
    assert_invalid(npyio_npz_writer_add_with_header(w, "a", h, NULL, 16, 0, 0),
                   "npyio_npz_writer_add_with_header: data is NULL");
    /* A member's writer open: no copy, no other member, no close. */
    assert_ok(npyio_writer_create_member(w, "m", h, 6, 0, &m));
    assert_refused(npyio_npz_writer_copy(w, NULL, src, 3), NPYIO_E_STATE,
                   "npyio_npz_writer_copy: a member's writer is still open (close "
                   "it first)");
    assert_ok(npyio_writer_write(m, v, sizeof v));
    assert_ok(npyio_writer_close(m));
    /* Every refusal left the archive going: it holds member m alone. */
    assert_ok(npyio_npz_writer_close(w));
    assert_ok(npyio_stream_take_bytes(s, &bytes, &len));
    assert_ok(npyio_stream_open_memory(bytes, len, o, &back));
    assert_ok(npyio_npz_open_stream(back, o, &npz));
    assert_int_equal(npyio_npz_count(npz), 1);
    assert_string_equal(npyio_npz_name(npz, 0), "m.npy");
    assert_ok(npyio_npz_verify(npz, 0));
    assert_ok(npyio_npz_close(npz));
    assert_ok(npyio_stream_close(back));
    npyio_free(bytes);
    /* An archive failed by an abandoned member repeats its failure. */
    assert_ok(npyio_npz_writer_create_stream(s, 0, o, &w));
    assert_ok(npyio_writer_create_member(w, "gone", h, 0, 0, &m));
    npyio_writer_abort(m);
    assert_refused(npyio_npz_writer_copy(w, NULL, src, 3), NPYIO_E_STATE,
                   "npyio_npz_writer_copy: the archive failed earlier (wrong "
                   "state: member 'gone.npy' was not finished (failed or "
                   "abandoned))");
    npyio_npz_writer_abort(w);
    assert_ok(npyio_stream_close(s));
    /* The one-call saver. */
    path_in_dir(path, sizeof path, "saved.npz");
    assert_invalid(npyio_savez_with_header(path, 1, NULL,
                                  (const npyio_header *const[]){h},
                                  (const void *const[]){v},
                                  (const size_t[]){sizeof v}, NULL, 0, o),
                   "npyio_savez_with_header: keys, headers, data and lens must be "
                   "given for 1 arrays");
    assert_int_equal(access(path, F_OK), -1);
    assert_ok(npyio_savez_with_header(path, 1, keys, (const npyio_header *const[]){h},
                             (const void *const[]){v},
                             (const size_t[]){sizeof v}, NULL,
                             NPYIO_WRITE_NO_SYNC, o));
    assert_int_equal(unlink(path), 0);
    assert_ok(npyio_npz_close(src));
    npyio_header_free(h);
    free(long_key);
    assert_int_equal(inj.live, 0);
    npyio_options_free(o);
}

/* ---- dtypes --------------------------------------------------------------------------- */

static npyio_dtype *dtype_of(const char *descr)
{
    npyio_dtype *dt = NULL;

    assert_ok(npyio_dtype_parse(descr, strlen(descr), NULL, &dt));
    return dt;
}

static void test_dtypes(void **state)
{
    npyio_dtype *rec = dtype_of("[('a', '<i4'), ('b', '<i4')]");
    npyio_dtype *one = dtype_of("[('a', '<i8')]");
    npyio_dtype *sub23 = dtype_of("('<i4', (2, 3))");
    npyio_dtype *sub32 = dtype_of("('<i4', (3, 2))");
    npyio_dtype *sub23b = dtype_of("('<i4', (2, 3))");
    npyio_dtype *out = (npyio_dtype *)not_a_handle;
    char buf[64];
    size_t need = 0, index = 5;

    (void)state;
    assert_invalid(npyio_dtype_new_datetime(NPYIO_KIND_DATETIME, "s", 1, '<',
                                        NULL),
                   "npyio_dtype_new_datetime: out is NULL");
    assert_invalid(npyio_dtype_new_datetime(NPYIO_KIND_DATETIME, "s", 1, '!',
                                        &out),
                   "npyio_dtype_new_datetime: byte order must be '<', '>', '=' "
                   "or '|'");
    assert_null(out);
    assert_handle_checked(npyio_dtype_str(NULL, buf, sizeof buf, &need),
                          npyio_dtype_str(GARBAGE, buf, sizeof buf, &need),
                          "npyio_dtype_str", "dtype", "a dtype",
                          "npyio_dtype");
    assert_invalid(npyio_dtype_find_field(rec, NULL, &index),
                   "npyio_dtype_find_field: name is NULL");
    assert_invalid(npyio_dtype_find_field(rec, "b", NULL),
                   "npyio_dtype_find_field: index is NULL");
    assert_invalid(npyio_dtype_find_field(NULL, "b", &index),
                   "npyio_dtype_find_field: dtype is NULL");
    assert_ok(npyio_dtype_find_field(rec, "b", &index));
    assert_int_equal(index, 1);
    assert_int_equal(npyio_dtype_is_native(NULL), 0);
    assert_int_equal(npyio_dtype_field_count(NULL), 0);
    assert_int_equal(npyio_dtype_field_count((npyio_dtype *)not_a_handle),
                     0);
    assert_invalid(npyio_dtype_new_subarray(rec, 1, (const int64_t[]){2},
                                            NULL),
                   "npyio_dtype_new_subarray: out is NULL");
    assert_invalid(npyio_dtype_new_subarray(NULL, 1, (const int64_t[]){2},
                                            &out),
                   "npyio_dtype_new_subarray: dtype is NULL");
    assert_invalid(npyio_dtype_new_byteorder(rec, '>', NULL),
                   "npyio_dtype_new_byteorder: out is NULL");
    /* As NumPy compares them: np.dtype('(2,3)i4') != np.dtype('(3,2)i4'),
     * and records of the same size with other fields differ. */
    assert_true(npyio_dtype_is_equal(sub23, sub23b));
    assert_false(npyio_dtype_is_equal(sub23, sub32));
    assert_false(npyio_dtype_is_equal(rec, one));
    assert_false(npyio_dtype_is_equal(one, rec));
    /* ndim is checked against the limit before shape is read: a shape of
     * one entry with ndim INT_MAX (it was read past its end). */
    {
        static const int64_t one_dim[1] = {2};
        npyio_header *h = (npyio_header *)not_a_handle;

        assert_refused(npyio_header_new(one, INT_MAX, one_dim, 0, &h),
                       NPYIO_E_LIMIT,
                       "npyio_header_new: the shape has 2147483647 "
                       "dimensions, more than the limit of 64 "
                       "(NPYIO_LIMIT_NDIM)");
        assert_null(h);
        /* No bytes at all: 8 are needed (NULL was given to memcmp). */
        need = 5;
        assert_status(npyio_header_parse(NULL, 0, NULL, &h, &need),
                      NPYIO_E_TRUNCATED);
        assert_int_equal(need, 8);
        assert_null(h);
    }
    npyio_dtype_unref(rec);
    npyio_dtype_unref(one);
    npyio_dtype_unref(sub23);
    npyio_dtype_unref(sub32);
    npyio_dtype_unref(sub23b);
}

/* Dtypes nest at most 256 levels deep (subarrays of subarrays, or a
 * record around them), and a record is at most 2**31 - 1 bytes. */
static void test_dtype_limits(void **state)
{
    npyio_dtype *dt = NULL, *next = NULL, *rec = NULL;
    npyio_record_builder *b = NULL;
    int levels = 0; /* subarrays around the int32 */

    (void)state;
    assert_ok(npyio_dtype_parse("<i4", 3, NULL, &dt));
    for (;;) {
        npyio_status st = npyio_dtype_new_subarray(dt, 1, (const int64_t[]){1},
                                               &next);

        if (st != NPYIO_OK) {
            assert_refused(st, NPYIO_E_LIMIT, "npyio_dtype_new_subarray: "
                           "dtypes nested deeper than 256");
            break;
        }
        npyio_dtype_unref(dt);
        dt = next;
        levels++;
    }
    assert_int_equal(levels, 256);
    assert_null(next);
    /* A field at that depth would make a record one deeper. */
    assert_invalid(npyio_record_builder_new(0, NULL, NULL),
                   "npyio_record_builder_new: out is NULL");
    assert_ok(npyio_record_builder_new(0, NULL, &b));
    assert_refused(npyio_record_builder_add(b, "deep", NULL, -1, dt, 0, NULL),
                   NPYIO_E_LIMIT, "npyio_record_builder_add: dtypes nested "
                   "deeper than 256");
    assert_invalid(npyio_record_builder_finish(b, 0, NULL),
                   "npyio_record_builder_finish: out is NULL");
    npyio_record_builder_free(b);
    /* np.load refuses records over 2**31 - 1 bytes ("integer won't fit
     * into a C int"). */
    assert_ok(npyio_record_builder_new(0, NULL, &b));
    assert_ok(npyio_record_builder_add(b, "a", NULL, -1,
                                       npyio_dtype_subarray_base(dt), 0,
                                       NULL));
    assert_refused(npyio_record_builder_finish(b, (size_t)3000000000u,
                                               &rec),
                   NPYIO_E_OVERFLOW, "npyio_record_builder_finish: itemsize "
                   "3000000000 is above NumPy's limit of 2147483647");
    assert_null(rec);
    npyio_record_builder_free(b);
    npyio_dtype_unref(dt);
}

/* Descrs NumPy refuses too: a subarray of more than 64 dimensions
 * (np.dtype(('<i4', (1,)*65)): "invalid shape in fixed-type tuple"), in a
 * tuple or a type string; a header dict whose last key has no value
 * (ast.literal_eval: SyntaxError). */
static void test_descr_limits(void **state)
{
    static const char dict[] = "{'descr': '<i4', 'fortran_order': False, "
                               "'shape'}";
    char descr[400], text[128];
    npyio_dtype *dt = GARBAGE;
    npyio_header *h = GARBAGE;
    size_t at, need = 0;
    int i;

    (void)state;
    at = (size_t)sprintf(descr, "('<i4', (");
    for (i = 0; i < 65; i++)
        at += (size_t)sprintf(descr + at, "1, ");
    sprintf(descr + at, "))");
    assert_refused(npyio_dtype_parse(descr, strlen(descr), NULL, &dt),
                   NPYIO_E_LIMIT, "header byte 8: a subarray has more "
                   "than 64 dimensions"); /* byte 8: the shape */
    assert_null(dt);
    at = (size_t)sprintf(descr, "(");
    for (i = 0; i < 65; i++)
        at += (size_t)sprintf(descr + at, "1,");
    sprintf(descr + at, ")i4");
    dt = GARBAGE;
    assert_status(npyio_dtype_parse(descr, strlen(descr), NULL, &dt),
                  NPYIO_E_LIMIT);
    assert_error_contains("has more than 64 dimensions");
    assert_null(dt);
    /* 10 bytes of preamble, the dict, spaces and '\n' (118 bytes). */
    memset(text, ' ', sizeof text);
    memcpy(text, "\x93NUMPY\x01\x00\x76\x00", 10);
    memcpy(text + 10, dict, strlen(dict));
    text[127] = '\n';
    assert_status(npyio_header_parse(text, sizeof text, NULL, &h, &need),
                  NPYIO_E_FORMAT);
    assert_error_contains("header byte 58: sets are not supported (a dict "
                          "key needs ': value')");
    assert_null(h);
}

/* ---- outputs on refusal ------------------------------------------------------------ */

/*
 * npyio.h: "Results come out through trailing pointer parameters, which
 * are set to NULL or 0 when the call fails." So a refused call clears its
 * outputs whichever argument it refuses: a caller may then free or close
 * them unconditionally. Each call below is refused (NPYIO_E_INVALID_ARG,
 * or not found) with its outputs set to garbage first. FAILS today for
 * most of them (a bug; see the report): an output is cleared only after
 * every argument checked before it passed.
 */
static int kept;

#define assert_cleared(expr, want, cleared)                                  \
    do {                                                                     \
        npyio_status st_ = (expr);                                           \
        if (st_ != (want))                                                   \
            fail_msg("%s gave %s (%s)", #expr, npyio_status_string(st_),     \
                     npyio_last_error());                                    \
        if (!(cleared)) {                                                    \
            fprintf(stderr, "refused, but kept an output: %s (%s)\n", #expr, \
                    #cleared);                                               \
            kept++;                                                          \
        }                                                                    \
    } while (0)

static void test_outputs_cleared_on_refusal(void **state)
{
    npyio_header *h = make_header("<f8", 1, (const int64_t[]){2}, 0);
    npyio_dtype *rec = NULL;
    npyio_stream *s = GARBAGE, *mem = NULL;
    npyio_reader *r = GARBAGE, *obj = NULL;
    npyio_npz *npz = GARBAGE, *keys = NULL;
    npyio_map *m = GARBAGE;
    npyio_npz_writer *zw = GARBAGE;
    npyio_writer *w = GARBAGE;
    npyio_dtype *dt = GARBAGE;
    void *data = GARBAGE, *bytes = GARBAGE;
    size_t len = 77, got = 77, index = 77;
    int ndim = 77, ambiguous = 77;
    char type[64];
    int64_t shape[4];
    unsigned char buf[4];

    (void)state;
    kept = 0;
    assert_ok(npyio_dtype_parse("[('a', '<i4')]", 14, NULL, &rec));
    assert_ok(npyio_npz_open_path(keys_npz, NULL, &keys));
    assert_ok(npyio_reader_open_path(objects, NULL, &obj));
    assert_ok(npyio_stream_create_memory(NULL, &mem));
    assert_cleared(npyio_stream_open_path(NULL, NPYIO_STREAM_READ, NULL, &s),
                   NPYIO_E_INVALID_ARG, s == NULL);
    s = GARBAGE;
    assert_cleared(npyio_stream_open_file(NULL, NULL, &s),
                   NPYIO_E_INVALID_ARG, s == NULL);
    assert_cleared(npyio_reader_open_path(NULL, NULL, &r),
                   NPYIO_E_INVALID_ARG, r == NULL);
    assert_cleared(npyio_npz_open_path(NULL, NULL, &npz),
                   NPYIO_E_INVALID_ARG, npz == NULL);
    assert_cleared(npyio_map_open_path(NULL, 0, NULL, &m), NPYIO_E_INVALID_ARG,
                   m == NULL);
    m = GARBAGE;
    assert_cleared(npyio_map_create_path(NULL, h, 0, NULL, &m),
                   NPYIO_E_INVALID_ARG, m == NULL);
    assert_cleared(npyio_npz_writer_create_path(NULL, 0, NULL, &zw),
                   NPYIO_E_INVALID_ARG, zw == NULL);
    zw = GARBAGE;
    assert_cleared(npyio_npz_writer_open_append_path(NULL, 0, NULL, &zw),
                   NPYIO_E_INVALID_ARG, zw == NULL);
    assert_cleared(npyio_writer_open_in_place_path(NULL, 0, NULL, &w),
                   NPYIO_E_INVALID_ARG, w == NULL);
    w = GARBAGE;
    assert_cleared(npyio_writer_create_path(NULL, h, 0, NULL, &w),
                   NPYIO_E_INVALID_ARG, w == NULL);
    assert_cleared(npyio_dtype_parse(NULL, 3, NULL, &dt),
                   NPYIO_E_INVALID_ARG, dt == NULL);
    assert_cleared(npyio_load_with_header(sample, 0, NULL, NULL, &data),
                   NPYIO_E_INVALID_ARG, data == NULL);
    data = GARBAGE;
    len = 77;
    assert_cleared(npyio_npz_load(NULL, 0, &data, &len, NULL, 0, NULL,
                                  NULL, 0),
                   NPYIO_E_INVALID_ARG, data == NULL && len == 0);
    data = GARBAGE;
    len = 77;
    assert_cleared(npyio_load_as(sample, "f8", 0, NULL, &data, &len, NULL,
                                 NULL, 0),
                   NPYIO_E_INVALID_ARG, data == NULL && len == 0);
    data = GARBAGE;
    assert_cleared(npyio_load(sample, NULL, &data, &len, type,
                                    sizeof type, NULL, shape, 4),
                   NPYIO_E_INVALID_ARG, data == NULL && len == 0);
    assert_cleared(npyio_reader_read_pickle(obj, NULL, &len),
                   NPYIO_E_INVALID_ARG, len == 0);
    len = 77;
    assert_cleared(npyio_stream_take_bytes(mem, NULL, &len),
                   NPYIO_E_INVALID_ARG, len == 0);
    assert_cleared(npyio_stream_read(mem, NULL, sizeof buf, &got),
                   NPYIO_E_INVALID_ARG, got == 0);
    assert_cleared(npyio_dtype_find_field(rec, NULL, &index),
                   NPYIO_E_INVALID_ARG, index == 0);
    index = 77;
    assert_cleared(npyio_npz_find(keys, NULL, &index, &ambiguous),
                   NPYIO_E_INVALID_ARG, index == 0 && ambiguous == 0);
    index = 77;
    ambiguous = 77;
    assert_cleared(npyio_npz_find(keys, "no such key", &index, &ambiguous),
                   NPYIO_E_NOT_FOUND, index == 0 && ambiguous == 0);
    (void)bytes;
    (void)ndim;
    npyio_reader_close(obj);
    npyio_npz_close(keys);
    npyio_stream_close(mem);
    npyio_dtype_unref(rec);
    npyio_header_free(h);
    if (kept > 0)
        fail_msg("%d refused calls kept an output (listed above)", kept);
}

/* ---- callers' numbers at their extremes ------------------------------------------ */

static const int64_t extremes[4] = {INT64_MAX, INT64_MIN, -1, 0};

/* A stream over sample.npy's bytes whose seek reports `lie` as the
 * position it reached (or the truth when lie is 0). */
typedef struct lying {
    const unsigned char *bytes;
    size_t len, pos;
    int64_t lie;
} lying;

static int lying_read(void *user, void *buf, size_t cap, size_t *got)
{
    lying *l = user;
    size_t n = l->len - l->pos < cap ? l->len - l->pos : cap;

    memcpy(buf, l->bytes + l->pos, n);
    l->pos += n;
    *got = n;
    return 0;
}

static int lying_seek(void *user, int64_t offset, int whence, int64_t *pos)
{
    lying *l = user;
    int64_t base = whence == NPYIO_SEEK_SET   ? 0
                   : whence == NPYIO_SEEK_CUR ? (int64_t)l->pos
                                              : (int64_t)l->len;

    if (offset < -base || offset > (int64_t)l->len - base)
        return -1;
    l->pos = (size_t)(base + offset);
    *pos = l->lie != 0 ? l->lie : (int64_t)l->pos;
    return 0;
}

/* A refusal of rows [first, first + count) shows the true end, or the
 * sum unevaluated where it does not fit: never a wrapped number. */
static void assert_rows_shown(int64_t first, int64_t count)
{
    char want[96];
    int64_t end;

    if (__builtin_add_overflow(first, count, &end))
        snprintf(want, sizeof want, "rows [%lld, %lld + %lld)",
                 (long long)first, (long long)first, (long long)count);
    else
        snprintf(want, sizeof want, "rows [%lld, %lld)", (long long)first,
                 (long long)end);
    if (strstr(npyio_last_error(), want) == NULL)
        fail_msg("'%s' does not show %s", npyio_last_error(), want);
}

/*
 * Every int64_t a caller passes, at INT64_MAX, INT64_MIN, -1 and 0 (run
 * under UBSan in CI: any overflow in the library's arithmetic on them
 * fails it), and positions a seek callback reports (-7, INT64_MAX): a
 * clear status each, never a wrapped number. Row ranges near INT64_MAX
 * said "rows [1, -9223372036854775808)"; a callback's -7 or INT64_MAX
 * overflowed the stream's position arithmetic.
 */
static void test_extreme_numbers(void **state)
{
    npyio_dtype *f8 = NULL, *out = NULL;
    npyio_header *h = NULL;
    npyio_options *o = NULL;
    npyio_record_builder *b = NULL;
    npyio_reader *r = NULL;
    npyio_writer *w = NULL;
    unsigned char buf[96];
    char copy[1024];
    size_t i, j, len = 0;
    int64_t got = 0;
    npyio_status st;

    (void)state;
    assert_ok(npyio_dtype_parse("'<f8'", 5, NULL, &f8));
    assert_ok(npyio_options_new(&o));
    for (i = 0; i < 4; i++) {
        int64_t v = extremes[i];

        /* Limits: negative ones refused, others kept as given. */
        st = npyio_options_set_limit(o, NPYIO_LIMIT_ALLOC_BYTES, v);
        if (v < 0) {
            assert_int_equal(st, NPYIO_E_INVALID_ARG);
        } else {
            assert_ok(st);
            assert_ok(npyio_options_get_limit(o, NPYIO_LIMIT_ALLOC_BYTES,
                                              &got));
            assert_int_equal(got, v);
        }
        /* Datetime multipliers: only 1 .. INT32_MAX, as NumPy. */
        st = npyio_dtype_new_datetime(NPYIO_KIND_DATETIME, "s", v, '<', &out);
        assert_true(st == NPYIO_E_INVALID_ARG || st == NPYIO_E_OVERFLOW);
        assert_null(out);
        /* Shapes of subarrays, headers, fields and saved arrays. */
        st = npyio_dtype_new_subarray(f8, 1, &v, &out);
        assert_int_equal(st, v < 0   ? NPYIO_E_INVALID_ARG
                             : v > 0 ? NPYIO_E_OVERFLOW
                                     : NPYIO_OK);
        npyio_dtype_unref(out);
        out = NULL;
        st = npyio_header_new(f8, 1, &v, 0, &h);
        assert_int_equal(st, v < 0   ? NPYIO_E_INVALID_ARG
                             : v > 0 ? NPYIO_E_OVERFLOW
                                     : NPYIO_OK);
        npyio_header_free(h);
        h = NULL;
        path_in_dir(copy, sizeof copy, "extreme.npy");
        st = npyio_save(copy, "=f8", 1, &v, buf, 0, 0, NULL);
        assert_int_equal(st, v == 0 ? NPYIO_OK : v < 0 ? NPYIO_E_INVALID_ARG
                                                       : NPYIO_E_OVERFLOW);
        /* A field's offset and shape. */
        assert_ok(npyio_record_builder_new(0, NULL, &b));
        st = npyio_record_builder_add(b, "x", NULL, v, f8, 0, NULL);
        assert_int_equal(st, v == INT64_MIN  ? NPYIO_E_INVALID_ARG
                             : v == INT64_MAX ? NPYIO_E_OVERFLOW
                                              : NPYIO_OK);
        st = npyio_record_builder_add(b, "y", NULL, -1, f8, 1, &v);
        assert_int_equal(st, v < 0   ? NPYIO_E_INVALID_ARG
                             : v > 0 ? NPYIO_E_OVERFLOW
                                     : NPYIO_OK);
        npyio_record_builder_free(b);
        b = NULL;
    }
    /* Row ranges: every pair, reading and writing in place. */
    snprintf(copy, sizeof copy, "%s/extreme_rows.npy", dir);
    {
        static const int64_t shape[2] = {3, 4};
        static const double zeros[12];

        assert_ok(npyio_save(copy, "=f8", 2, shape, zeros,
                                   sizeof zeros, NPYIO_WRITE_NO_SYNC, NULL));
    }
    assert_ok(npyio_reader_open_path(copy, NULL, &r));
    assert_ok(npyio_writer_open_in_place_path(copy, NPYIO_WRITE_NO_SYNC, NULL,
                                         &w));
    for (i = 0; i < 4; i++)
        for (j = 0; j < 4; j++) {
            int64_t first = extremes[i], count = extremes[j];
            npyio_status want = first == 0 && count == 0
                                    ? NPYIO_OK
                                    : NPYIO_E_INVALID_ARG;

            assert_int_equal(npyio_reader_read_rows(r, first, count, buf,
                                                    sizeof buf, 0),
                             want);
            if (want != NPYIO_OK)
                assert_rows_shown(first, count);
            assert_int_equal(npyio_writer_write_rows(w, first, count, buf,
                                                     0),
                             want);
            if (want != NPYIO_OK)
                assert_rows_shown(first, count);
        }
    assert_refused(npyio_reader_read_rows(r, 1, INT64_MAX, buf, sizeof buf,
                                          0),
                   NPYIO_E_INVALID_ARG,
                   "npyio_reader_read_rows: rows [1, 1 + 9223372036854775807) "
                   "are not within the 3 rows");
    assert_ok(npyio_writer_close(w));
    assert_ok(npyio_reader_close(r));
    /* Positions a seek callback reports. */
    {
        static const int64_t lies[2] = {-7, INT64_MAX};
        size_t file_len = 0;
        unsigned char *file = read_data_file_abs(copy, &file_len);
        const npyio_stream_ops ops = {
            .size = sizeof ops, .read = lying_read, .seek = lying_seek};
        npyio_stream *s = NULL;
        void *data = NULL;

        for (i = 0; i < 2; i++) {
            lying l = {file, file_len, 0, lies[i]};

            assert_ok(npyio_stream_open_ops(&ops, &l, NULL, &s));
            st = npyio_reader_open_stream(s, NULL, &r);
            if (st == NPYIO_OK) {
                st = npyio_reader_read_alloc(r, 0, &data, &len);
                npyio_reader_close(r);
            }
            /* (INT64_MAX: the seek back to it fails in the callback, or
             * a read from it would pass the largest offset.) */
            if (st != NPYIO_E_IO ||
                (i == 0 && strstr(npyio_last_error(),
                                  "the callbacks stream's seek reported "
                                  "position -7") == NULL) ||
                (i == 1 && strstr(npyio_last_error(), "seek callback") ==
                               NULL &&
                 strstr(npyio_last_error(), "largest offset") == NULL))
                fail_msg("lie %lld: %s (%s)", (long long)lies[i],
                         npyio_status_string(st), npyio_last_error());
            assert_null(data);
            assert_ok(npyio_stream_close(s));
        }
        free(file);
    }
    /* A stream whose position is near the largest offset (as a seek
     * callback may leave it): a read or write past it is NPYIO_E_IO. */
    {
        static const unsigned char bytes[16];
        npyio_stream *s = NULL;
        size_t n = 0;

        assert_ok(npyio_stream_open_memory(bytes, sizeof bytes, NULL, &s));
        npyio__stream_set_position(s, INT64_MAX - 4, true);
        assert_refused(npyio_stream_read(s, buf, 8, &n), NPYIO_E_IO,
                       "npyio_stream_read: reading the stream: the "
                       "stream's position 9223372036854775803 plus 8 bytes "
                       "passes the largest offset, 2^63 - 1 (a position its "
                       "seek reported)");
        assert_int_equal(n, 0);
        assert_ok(npyio_stream_close(s));
    }
    npyio_options_free(o);
    npyio_dtype_unref(f8);
}

/* The reader's states (fresh, rows, chunks, done; failed overrides all)
 * and every transition between them, on sample.npy ((3, 4) '>f8', 96
 * bytes): the whole read and the chunked pass each read the data once and
 * exclude each other; rows are read by position at any time; a chunked
 * pass keeps its flags. (A chunk after a whole read returned data, and
 * flags changed within a pass were taken.) */
static void test_reader_states(void **state)
{
    unsigned char whole[96], buf[96], part[32];
    npyio_reader *r = NULL;
    size_t got = 0, at = 0;
    /* (sample.npy is in Fortran order: everything read in C order.) */
    const uint32_t C = NPYIO_READ_C_ORDER;

    (void)state;
    /* fresh -> done (read): read, chunk and pickle refused; rows go on. */
    assert_ok(npyio_reader_open_path(sample, NULL, &r));
    assert_ok(npyio_reader_read(r, whole, sizeof whole, C));
    assert_refused(npyio_reader_read(r, buf, sizeof buf, C), NPYIO_E_STATE,
                   "npyio_reader_read: the data was already read");
    assert_refused(npyio_reader_read_chunk(r, buf, sizeof buf, C, &got),
                   NPYIO_E_STATE,
                   "npyio_reader_read_chunk: the data was already read "
                   "whole");
    assert_int_equal(got, 0);
    assert_ok(npyio_reader_read_rows(r, 1, 1, buf, sizeof buf, C));
    assert_memory_equal(buf, whole + 32, 32);
    assert_refused(npyio_reader_read(r, buf, sizeof buf, C), NPYIO_E_STATE,
                   "npyio_reader_read: the data was already read");
    assert_ok(npyio_reader_close(r));
    /* fresh -> done (read_alloc) likewise. */
    {
        void *data = NULL;

        assert_ok(npyio_reader_open_path(sample, NULL, &r));
        assert_ok(npyio_reader_read_alloc(r, C, &data, NULL));
        npyio_free(data);
        assert_refused(npyio_reader_read_alloc(r, C, &data, NULL),
                       NPYIO_E_STATE,
                       "npyio_reader_read_alloc: the data was already read");
        assert_ok(npyio_reader_close(r));
    }
    /* fresh -> chunks: other flags refused, the whole read refused, rows
     * between chunks; the pass goes on where it was, ends, and stays
     * ended. */
    assert_ok(npyio_reader_open_path(sample, NULL, &r));
    assert_ok(npyio_reader_read_chunk(r, part, sizeof part, C, &got));
    memcpy(buf, part, got);
    at = got;
    assert_refused(npyio_reader_read_chunk(r, part, sizeof part,
                                           C | NPYIO_READ_NATIVE, &got),
                   NPYIO_E_STATE,
                   "npyio_reader_read_chunk: flags 0x3 differ from the "
                   "chunked pass's 0x2 (they must stay the same for every "
                   "chunk of one pass)");
    assert_refused(npyio_reader_read(r, whole, sizeof whole, C),
                   NPYIO_E_STATE,
                   "npyio_reader_read: a chunked pass has begun "
                   "(npyio_reader_read_chunk)");
    assert_ok(npyio_reader_read_rows(r, 2, 1, part, sizeof part, C));
    assert_memory_equal(part, whole + 64, 32);
    while (npyio_reader_read_chunk(r, part, sizeof part, C, &got) ==
           NPYIO_OK) {
        assert_true(at + got <= sizeof buf);
        memcpy(buf + at, part, got);
        at += got;
    }
    assert_int_equal(at, 96);
    assert_memory_equal(buf, whole, 96);
    assert_int_equal(npyio_reader_read_chunk(r, part, sizeof part, C, &got),
                     NPYIO_END);
    assert_refused(npyio_reader_read(r, buf, sizeof buf, C), NPYIO_E_STATE,
                   "npyio_reader_read: a chunked pass has begun "
                   "(npyio_reader_read_chunk)");
    assert_ok(npyio_reader_close(r));
    /* fresh -> rows -> done: rows leave the whole read possible; then
     * rows -> chunks. */
    assert_ok(npyio_reader_open_path(sample, NULL, &r));
    assert_ok(npyio_reader_read_rows(r, 0, 2, buf, sizeof buf, C));
    assert_memory_equal(buf, whole, 64);
    assert_ok(npyio_reader_read(r, buf, sizeof buf, C));
    assert_memory_equal(buf, whole, 96);
    assert_ok(npyio_reader_close(r));
    assert_ok(npyio_reader_open_path(sample, NULL, &r));
    assert_ok(npyio_reader_read_rows(r, 2, 1, buf, sizeof buf, C));
    assert_ok(npyio_reader_read_chunk(r, buf, sizeof buf,
                                      C | NPYIO_READ_NATIVE, &got));
    assert_int_equal(got, 96);
    assert_refused(npyio_reader_read_chunk(r, buf, sizeof buf, C, &got),
                   NPYIO_E_STATE,
                   "npyio_reader_read_chunk: flags 0x2 differ from the "
                   "chunked pass's 0x3 (they must stay the same for every "
                   "chunk of one pass)");
    assert_int_equal(npyio_reader_read_chunk(r, buf, sizeof buf,
                                             C | NPYIO_READ_NATIVE, &got),
                     NPYIO_END);
    assert_ok(npyio_reader_close(r));
    /* A refused call moves nothing: a chunk too small for an element, or
     * with a NULL buffer, begins no pass. */
    assert_ok(npyio_reader_open_path(sample, NULL, &r));
    assert_status(npyio_reader_read_chunk(r, buf, 4, NPYIO_READ_NATIVE,
                                          &got),
                  NPYIO_E_BUFFER_TOO_SMALL);
    assert_ok(npyio_reader_read(r, buf, sizeof buf, C));
    assert_memory_equal(buf, whole, 96);
    assert_ok(npyio_reader_close(r));
}

/* Every call that takes a path refuses an empty one at once (npyio_save_with_header
 * wrote the whole array to an unnamed temporary, then failed to link it:
 * "finishing the stream: : ... linkat"), and makes nothing: run in an
 * empty directory, which stays empty. */
static void test_empty_paths(void **state)
{
    static const int64_t shape[1] = {4};
    static const double v[4] = {1, 2, 3, 4};
    npyio_header *h = make_header("<f8", 1, shape, 0), *got_h = NULL;
    const npyio_header *headers[1] = {h};
    const void *data[1] = {v};
    const char *keys[1] = {"a"};
    const size_t lens[1] = {sizeof v};
    char cwd[1024], empty_dir[128], type[16];
    void *got = NULL;
    size_t got_len = 0;
    int got_nd = 0;
    size_t len = 0;
    int ndim = 0;
    int64_t got_shape[4];
    npyio_stream *s = NULL;
    npyio_reader *r = NULL;
    npyio_writer *w = NULL;
    npyio_map *m = NULL;
    npyio_npz *z = NULL;
    npyio_npz_writer *zw = NULL;
    DIR *d;
    struct dirent *e;
    int entries = 0;

    (void)state;
    assert_non_null(getcwd(cwd, sizeof cwd));
    path_in_dir(empty_dir, sizeof empty_dir, "empty");
    assert_int_equal(mkdir(empty_dir, 0700), 0);
    assert_int_equal(chdir(empty_dir), 0);
#define EMPTY(call, fn) assert_invalid((call), fn ": path is empty")
    EMPTY(npyio_stream_open_path("", NPYIO_STREAM_READ, NULL, &s),
          "npyio_stream_open_path");
    EMPTY(npyio_stream_open_path("", NPYIO_STREAM_WRITE, NULL, &s),
          "npyio_stream_open_path");
    EMPTY(npyio_reader_open_path("", NULL, &r), "npyio_reader_open_path");
    EMPTY(npyio_load_with_header("", 0, NULL, &got_h,
                                 &got), "npyio_load_with_header");
    EMPTY(npyio_load("", NULL, &got, &len, type, sizeof type, &ndim,
                           got_shape, 4),
          "npyio_load");
    EMPTY(npyio_writer_create_path("", h, 0, NULL, &w),
          "npyio_writer_create_path");
    EMPTY(npyio_writer_open_append_path("", h, 0, NULL, &w),
          "npyio_writer_open_append_path");
    EMPTY(npyio_writer_open_in_place_path("", 0, NULL, &w),
          "npyio_writer_open_in_place_path");
    EMPTY(npyio_save_with_header("", h, v, sizeof v, 0,
                                 NULL), "npyio_save_with_header");
    EMPTY(npyio_save("", "=f8", 1, shape, v, sizeof v, 0, NULL),
          "npyio_save");
    EMPTY(npyio_map_open_path("", 0, NULL, &m), "npyio_map_open_path");
    EMPTY(npyio_map_create_path("", h, 0, NULL, &m), "npyio_map_create_path");
    EMPTY(npyio_npz_open_path("", NULL, &z), "npyio_npz_open_path");
    EMPTY(npyio_load_as("", "f8", 0, NULL, &got, &got_len, &got_nd, NULL,
                        0),
          "npyio_load_as");
    EMPTY(npyio_npz_writer_create_path("", 0, NULL,
                                       &zw), "npyio_npz_writer_create_path");
    EMPTY(npyio_npz_writer_open_append_path("", 0, NULL,
                                            &zw), "npyio_npz_writer_open_append_path");
    EMPTY(npyio_savez_with_header("", 1, keys, headers, data, lens, NULL, 0,
                                  NULL),
          "npyio_savez_with_header");
#undef EMPTY
    assert_null(s);
    assert_null(r);
    assert_null(w);
    assert_null(m);
    assert_null(z);
    assert_null(zw);
    assert_null(got);
    assert_null(got_h);
    d = opendir(".");
    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            entries++;
    closedir(d);
    assert_int_equal(entries, 0);
    assert_int_equal(chdir(cwd), 0);
    npyio_header_free(h);
}

/* npyio.h: "Functions whose names end in _free or _close accept NULL and
 * do nothing" -- so a cleanup path may close what an open that failed
 * left NULL without losing the open's message. FAILS today for the two
 * writers' closes (a bug; see the report): they refuse NULL with
 * NPYIO_E_INVALID_ARG and replace the thread's message. */
static void test_close_accepts_null(void **state)
{
    npyio_stream *s = NULL;
    int refused = 0;

    (void)state;
    /* A failure whose message the cleanup must keep. */
    assert_status(npyio_stream_open_path("/nonexistent-npyio/x.npy",
                                         NPYIO_STREAM_READ, NULL, &s),
                  NPYIO_E_NOT_FOUND);
#define CLOSES_NULL(expr)                                                    \
    do {                                                                     \
        npyio_status st_ = (expr);                                           \
        if (st_ != NPYIO_OK ||                                               \
            strstr(npyio_last_error(), "/nonexistent-npyio/x.npy") == NULL) {\
            fprintf(stderr, "%s: %s (\"%s\")\n", #expr,                       \
                    npyio_status_string(st_), npyio_last_error());           \
            refused++;                                                       \
        }                                                                    \
    } while (0)
    CLOSES_NULL(npyio_stream_close(NULL));
    CLOSES_NULL(npyio_reader_close(NULL));
    CLOSES_NULL(npyio_npz_close(NULL));
    CLOSES_NULL(npyio_map_close(NULL));
    CLOSES_NULL(npyio_writer_close(NULL));
    CLOSES_NULL(npyio_npz_writer_close(NULL));
#undef CLOSES_NULL
    if (refused > 0)
        fail_msg("%d _close functions refused NULL or lost the message "
                 "(listed above)", refused);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_streams),
        cmocka_unit_test(test_readers),
        cmocka_unit_test(test_writers_and_maps),
        cmocka_unit_test(test_archives),
        cmocka_unit_test(test_archive_writers),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_dtypes),
        cmocka_unit_test(test_dtype_limits),
        cmocka_unit_test(test_descr_limits),
        cmocka_unit_test(test_outputs_cleared_on_refusal),
        cmocka_unit_test(test_close_accepts_null),
        cmocka_unit_test(test_empty_paths),
        cmocka_unit_test(test_reader_states),
        cmocka_unit_test(test_extreme_numbers),
    };

    return cmocka_run_group_tests(tests, setup, scratch_remove);
}
