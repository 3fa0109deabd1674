/*
 * test_seam.c - the stream core's side of the seam every byte goes
 * through: positioned writes, resizing, locks, copies between streams and
 * maps, on the library's own back ends (memory, descriptors) and on a
 * small back end of this test that misbehaves on request. Each refusal
 * and each back end's failure is a specific status with a message naming
 * what was being done; a copy falls back to a buffer wherever the back
 * ends cannot copy themselves.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "scratch.h"
#include "npz_append.h"
#include "stream.h"

/* ---- a back end with positioned writes and resizing, faulty on request --- */

typedef enum quirk { FINE, NO_PROGRESS, TOO_MUCH, FAILING } quirk;

typedef struct quirky {
    quirk how;
    unsigned char bytes[256];
    size_t len;
} quirky;

static npyio_status quirky_pwrite(void *state, const void *buf, size_t len,
                                  int64_t offset, size_t *put)
{
    quirky *q = state;

    if (q->how == FAILING)
        return npyio__fail(NPYIO_E_IO, "the test's disk is on fire");
    if (q->how != FINE) {
        *put = q->how == NO_PROGRESS ? 0 : len + 1;
        return NPYIO_OK;
    }
    assert_true((size_t)offset + len <= sizeof q->bytes);
    memcpy(q->bytes + offset, buf, len);
    if ((size_t)offset + len > q->len)
        q->len = (size_t)offset + len;
    *put = len;
    return NPYIO_OK;
}

static npyio_status quirky_resize(void *state, int64_t size, bool reserve)
{
    quirky *q = state;

    (void)reserve;
    if (q->how == FAILING)
        return npyio__fail(NPYIO_E_IO, "the test's disk is full");
    q->len = (size_t)size;
    return NPYIO_OK;
}

static npyio_status quirky_seek(void *state, int64_t offset, int whence,
                                int64_t *pos)
{
    (void)state;
    (void)whence;
    *pos = offset; /* (the copy's final seek only: from the start) */
    return NPYIO_OK;
}

static const npyio__stream_backend quirky_backend = {
    .name = "quirky", .seek = quirky_seek, .pwrite = quirky_pwrite,
    .resize = quirky_resize};

static npyio_stream *open_quirky(quirk how, quirky **state)
{
    npyio_stream *s = NULL;

    assert_ok(npyio__stream_new(&quirky_backend, sizeof **state, NULL, &s,
                                (void **)state));
    (*state)->how = how;
    npyio__stream_set_position(s, 0, true);
    return s;
}

/* ---- positioned writes and resizing --------------------------------------- */

static void test_pwrite(void **state)
{
    static const unsigned char bytes[8] = "abcdefg";
    npyio_stream *mem = NULL, *s;
    quirky *q;

    (void)state;
    assert_ok(npyio_stream_open_memory(bytes, sizeof bytes, NULL, &mem));
    assert_status(npyio__stream_pwrite(mem, "x", 1, 0, "a byte"),
                  NPYIO_E_UNSUPPORTED);
    assert_error_contains("writing a byte: the stream cannot write at an "
                          "offset");
    assert_ok(npyio_stream_close(mem));
    s = open_quirky(FINE, &q);
    assert_ok(npyio__stream_pwrite(s, "xyz", 3, 5, "three bytes"));
    assert_int_equal(q->len, 8);
    assert_memory_equal(q->bytes + 5, "xyz", 3);
    assert_status(npyio__stream_pwrite(s, "x", 1, -1, "a byte"),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("writing a byte: 1 bytes at offset -1 are out of "
                          "range");
    assert_status(npyio__stream_pwrite(s, "xy", 2, INT64_MAX - 1, "two"),
                  NPYIO_E_INVALID_ARG);
    q->how = NO_PROGRESS;
    assert_status(npyio__stream_pwrite(s, "x", 1, 0, "a byte"), NPYIO_E_IO);
    assert_error_contains("writing a byte at offset 0: the write made no "
                          "progress");
    q->how = TOO_MUCH;
    assert_status(npyio__stream_pwrite(s, "x", 1, 7, "a byte"), NPYIO_E_IO);
    assert_error_contains("writing a byte at offset 7: the write reported "
                          "too much");
    q->how = FAILING;
    assert_status(npyio__stream_pwrite(s, "x", 1, 2, "a byte"), NPYIO_E_IO);
    assert_error_contains("writing a byte at offset 2: the test's disk is "
                          "on fire");
    assert_ok(npyio_stream_close(s));
}

static void test_resize(void **state)
{
    static const unsigned char bytes[4] = "abc";
    npyio_stream *mem = NULL, *s;
    quirky *q;

    (void)state;
    assert_ok(npyio_stream_open_memory(bytes, sizeof bytes, NULL, &mem));
    assert_status(npyio__stream_resize(mem, 2, false), NPYIO_E_UNSUPPORTED);
    assert_error_contains("the memory stream cannot change its length");
    /* Nothing else can reach memory: no lock to take, and no failure. */
    assert_ok(npyio__stream_lock(mem, true, false));
    assert_int_equal(npyio__stream_descriptor(mem), -1);
    assert_null(npyio__stream_state_of(mem, &quirky_backend));
    assert_ok(npyio_stream_close(mem));
    s = open_quirky(FINE, &q);
    assert_ok(npyio__stream_resize(s, 17, true));
    assert_int_equal(q->len, 17);
    assert_ptr_equal(npyio__stream_state_of(s, &quirky_backend), q);
    q->how = FAILING;
    assert_status(npyio__stream_resize(s, 3, false), NPYIO_E_IO);
    assert_error_contains("resizing the stream to 3 bytes: the test's disk "
                          "is full");
    assert_status(npyio__stream_resize(s, 30, true), NPYIO_E_IO);
    assert_error_contains("reserving the stream to 30 bytes");
    assert_ok(npyio_stream_close(s));
}

/* ---- locks on descriptors --------------------------------------------------- */

/* Two descriptors of one file: an exclusive lock through one stream makes
 * the other's NPYIO_E_LOCKED, not a wait, when it asks not to wait. */
static void test_lock(void **state)
{
    char path[256];
    int a, b;
    npyio_stream *sa = NULL, *sb = NULL;

    (void)state;
    path_in_dir(path, sizeof path, "locked.bin");
    a = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    b = open(path, O_RDWR);
    assert_true(a >= 0 && b >= 0);
    assert_ok(npyio_stream_open_fd(a, NULL, &sa));
    assert_ok(npyio_stream_open_fd(b, NULL, &sb));
    assert_int_equal(npyio__stream_descriptor(sa), a);
    assert_ok(npyio__stream_lock(sa, true, false));
    assert_status(npyio__stream_lock(sb, false, false), NPYIO_E_LOCKED);
    assert_error_contains("locked");
    assert_ok(npyio_stream_close(sa));
    assert_ok(npyio_stream_close(sb));
    close(a);
    close(b);
    unlink(path);
}

/* ---- copies between streams ----------------------------------------------------- */

/* From memory (no descriptor) into a descriptor stream: its copy_from has
 * nothing to clone from, so the core copies through a buffer; into this
 * test's back end (no copy_from at all) the same. The destination ends at
 * the copy's length either way; a source shorter than asked is
 * NPYIO_E_TRUNCATED. */
static void test_copy_falls_back_to_a_buffer(void **state)
{
    static const unsigned char bytes[100] = "the archive's bytes";
    char path[256];
    npyio_stream *from = NULL, *to = NULL, *s;
    const char *how = NULL;
    int64_t pos = 0;
    quirky *q;
    int fd;

    (void)state;
    assert_ok(npyio_stream_open_memory(bytes, sizeof bytes, NULL, &from));
    path_in_dir(path, sizeof path, "copy.bin");
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_ok(npyio_stream_open_fd(fd, NULL, &to));
    assert_ok(npyio__stream_copy(to, from, 60, &how));
    assert_string_equal(how, "buffered copy");
    assert_ok(npyio__stream_tell(to, &pos));
    assert_int_equal(pos, 60);
    {
        unsigned char back[100];

        assert_int_equal(pread(fd, back, sizeof back, 0), 60);
        assert_memory_equal(back, bytes, 60);
    }
    assert_ok(npyio_stream_close(to));
    close(fd);
    unlink(path);
    s = open_quirky(FINE, &q);
    assert_ok(npyio__stream_copy(s, from, 40, &how));
    assert_string_equal(how, "buffered copy");
    assert_int_equal(q->len, 40);
    assert_memory_equal(q->bytes, bytes, 40);
    assert_status(npyio__stream_copy(s, from, 101, &how),
                  NPYIO_E_TRUNCATED);
    assert_error_contains("the file ends at offset 100, before the 101 "
                          "bytes to copy");
    assert_ok(npyio_stream_close(s));
    assert_ok(npyio_stream_close(from));
}

/* ---- maps ------------------------------------------------------------------------- */

/* A descriptor stream maps any offset (the region starts at its page);
 * a length of 0 still gives a valid pointer; memory and negative offsets
 * are refused; a region never mapped releases as nothing. */
static void test_map(void **state)
{
    static const unsigned char bytes[8] = "1234567";
    char path[256];
    unsigned char data[5000];
    npyio_stream *s = NULL;
    npyio__region r, none;
    size_t i;
    int fd;

    (void)state;
    for (i = 0; i < sizeof data; i++)
        data[i] = (unsigned char)(i * 7);
    path_in_dir(path, sizeof path, "mapped.bin");
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, sizeof data), (ssize_t)sizeof data);
    assert_ok(npyio_stream_open_fd(fd, NULL, &s));
    assert_ok(npyio__stream_map(s, 4097, 100, false, &r));
    assert_memory_equal(r.data, data + 4097, 100);
    assert_ok(npyio__region_release(&r, false));
    assert_null(r.base);
    assert_ok(npyio__stream_map(s, 3, 0, false, &r));
    assert_non_null(r.data);
    assert_ok(npyio__region_release(&r, false));
    assert_status(npyio__stream_map(s, -1, 10, false, &r),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("mapping at offset -1");
    assert_ok(npyio_stream_close(s));
    close(fd);
    unlink(path);
    assert_ok(npyio_stream_open_memory(bytes, sizeof bytes, NULL, &s));
    assert_status(npyio__stream_map(s, 0, 4, false, &r), NPYIO_E_UNSUPPORTED);
    assert_error_contains("the memory stream cannot be mapped into memory");
    assert_ok(npyio_stream_close(s));
    memset(&none, 0, sizeof none);
    assert_ok(npyio__region_release(&none, true));
}

/* ---- an archive append on streams refuses what it is not given ----------- */

static void test_append_streams_refusals(void **state)
{
    static const unsigned char bytes[22] = {0x50, 0x4b, 5, 6};
    npyio_npz_writer *w = (npyio_npz_writer *)&w;
    npyio_stream *mem = NULL;

    (void)state;
    assert_ok(npyio_stream_open_memory(bytes, sizeof bytes, NULL, &mem));
    assert_status(npyio__npz_open_append_streams(mem, mem, 0, NULL, NULL),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("npyio_npz_writer_open_append_path: out is NULL");
    assert_status(npyio__npz_open_append_streams(NULL, mem, 0, NULL, &w),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("stream is NULL");
    assert_null(w);
    assert_status(npyio__npz_open_append_streams(mem, mem,
                                                 NPYIO_WRITE_NO_SYNC, NULL,
                                                 &w),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("is not one this function takes");
    assert_null(w);
    assert_ok(npyio_stream_close(mem));
}

static int group_setup(void **state)
{
    (void)state;
    return scratch_make("npyio-seam");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pwrite),
        cmocka_unit_test(test_resize),
        cmocka_unit_test(test_lock),
        cmocka_unit_test(test_copy_falls_back_to_a_buffer),
        cmocka_unit_test(test_map),
        cmocka_unit_test(test_append_streams_refusals),
    };

    return cmocka_run_group_tests(tests, group_setup, scratch_remove);
}
