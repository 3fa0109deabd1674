/*
 * test_flags.c - per-call flags: durability by default and
 * NPYIO_WRITE_NO_SYNC per call (the C library's fsync, fdatasync and msync
 * are counted by wrapping them at link time), flags a call does not take
 * refused, npyio_save_with_header() reading exactly the length it is given, and the
 * one-call plain array functions (npyio_save, npyio_load).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "testutil.h"
#include "scratch.h"

static int syncs; /* fsync + fdatasync + msync(MS_SYNC) calls */

int __real_fsync(int fd);
int __wrap_fsync(int fd);
int __wrap_fsync(int fd)
{
    syncs++;
    return __real_fsync(fd);
}

int __real_fdatasync(int fd);
int __wrap_fdatasync(int fd);
int __wrap_fdatasync(int fd)
{
    syncs++;
    return __real_fdatasync(fd);
}

int __real_msync(void *addr, size_t len, int flags);
int __wrap_msync(void *addr, size_t len, int flags);
int __wrap_msync(void *addr, size_t len, int flags)
{
    syncs++;
    return __real_msync(addr, len, flags);
}

static int make_dir(void **state)
{
    (void)state;
    return scratch_make("npyio-flags");
}

static const double values[6] = {1, 2, 3, 4, 5, 6};

static void save_rows(const char *path, int64_t rows, uint32_t flags)
{
    npyio_header *h = make_header("<f8", 2, (int64_t[]){rows, 3}, 0);

    assert_ok(npyio_save_with_header(path, h, values, (size_t)rows * 24, flags,
                                     NULL));
    npyio_header_free(h);
}

static void test_writes_sync_unless_told(void **state)
{
    char path[128];
    npyio_header *row = make_header("<f8", 2, (int64_t[]){1, 3}, 0);
    npyio_writer *w = NULL;
    npyio_map *m = NULL;
    static const uint32_t modes[2] = {0, NPYIO_WRITE_NO_SYNC};
    int k;

    (void)state;
    path_in_dir(path, sizeof path, "a.npy");
    for (k = 0; k < 2; k++) {
        uint32_t flags = modes[k];
        bool durable = flags == 0;

        /* A save: the file, then its directory. */
        syncs = 0;
        save_rows(path, 2, flags);
        if (durable)
            assert_true(syncs >= 2);
        else
            assert_int_equal(syncs, 0);
        /* An append: the rows, then the header. */
        syncs = 0;
        assert_ok(npyio_writer_open_append_path(path, row, flags, NULL, &w));
        assert_ok(npyio_writer_write(w, values, 24));
        assert_ok(npyio_writer_close(w));
        if (durable)
            assert_true(syncs >= 2);
        else
            assert_int_equal(syncs, 0);
        /* Rows in place. */
        syncs = 0;
        assert_ok(npyio_writer_open_in_place_path(path, flags, NULL, &w));
        assert_ok(npyio_writer_write_rows(w, 0, 1, values, 24));
        assert_ok(npyio_writer_close(w));
        assert_int_equal(syncs, durable ? 1 : 0);
        /* A read-write map: msync at close; a read-only one never. */
        syncs = 0;
        assert_ok(npyio_map_open_path(path, NPYIO_MAP_WRITE | flags, NULL,
                                      &m));
        assert_ok(npyio_map_close(m));
        assert_int_equal(syncs, durable ? 1 : 0);
        syncs = 0;
        assert_ok(npyio_map_open_path(path, 0, NULL, &m));
        assert_ok(npyio_map_close(m));
        assert_int_equal(syncs, 0);
        /* A created map: the new file at once, the data at close. */
        syncs = 0;
        assert_ok(npyio_map_create_path(path, row, flags, NULL, &m));
        assert_ok(npyio_map_close(m));
        if (durable)
            assert_true(syncs >= 3);
        else
            assert_int_equal(syncs, 0);
    }
    npyio_header_free(row);
}

static void test_flags_a_call_does_not_take(void **state)
{
    char path[128];
    npyio_header *h = make_header("<f8", 2, (int64_t[]){2, 3}, 0);
    npyio_stream *s = NULL;
    npyio_writer *w = NULL;
    npyio_map *m = NULL;

    (void)state;
    path_in_dir(path, sizeof path, "refused.npy");
    assert_status(npyio_save_with_header(path, h, values, 48,
                                         NPYIO_READ_NATIVE, NULL),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("npyio_save_with_header: flag NPYIO_READ_NATIVE (0x1) is not one");
    assert_int_equal(access(path, F_OK), -1); /* nothing written */
    assert_ok(npyio_stream_create_memory(NULL, &s));
    assert_status(npyio_writer_create_stream(s, h, NPYIO_WRITE_NO_SYNC, NULL,
                                           &w),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("npyio_writer_create_stream: flag NPYIO_WRITE_NO_SYNC (0x10)");
    assert_null(w);
    npyio_stream_close(s);
    assert_status(npyio_map_create_path(path, h, NPYIO_MAP_WRITE, NULL, &m),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("npyio_map_create_path: flag NPYIO_MAP_WRITE (0x100)");
    save_rows(path, 2, NPYIO_WRITE_NO_SYNC);
    assert_status(npyio_map_open_path(path, NPYIO_MAP_SPARSE, NULL, &m),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("npyio_map_open_path: flag NPYIO_MAP_SPARSE (0x200)");
    assert_status(npyio_writer_open_in_place_path(path, NPYIO_WRITE_UNKNOWN_ROWS,
                                             NULL, &w),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_writer_open_append_path(path, h, NPYIO_MAP_SPARSE, NULL,
                                           &w),
                  NPYIO_E_INVALID_ARG);
    npyio_header_free(h);
}

static void test_save_reads_exactly_its_length(void **state)
{
    char path[128];
    npyio_header *h = make_header("<f8", 2, (int64_t[]){2, 3}, 0);

    (void)state;
    path_in_dir(path, sizeof path, "len.npy");
    /* A buffer one byte short is never read past: refused, naming both. */
    assert_status(npyio_save_with_header(path, h, values, 47, 0, NULL),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("npyio_save_with_header: the buffer is 47 bytes, the header "
                          "describes 48");
    assert_int_equal(access(path, F_OK), -1);
    assert_status(npyio_save_with_header(path, h, values, 49, 0, NULL),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_save_with_header(path, h, NULL, 48, 0, NULL),
                  NPYIO_E_INVALID_ARG);
    assert_ok(npyio_save_with_header(path, h, values, 48, NPYIO_WRITE_NO_SYNC,
                                     NULL));
    npyio_header_free(h);
}

static void test_plain_arrays_in_one_call(void **state)
{
    char path[128], type[64];
    uint16_t one = 1;
    bool little = *(unsigned char *)&one == 1;
    int64_t shape[3] = {2, 3, 0}, got_shape[2];
    void *data = NULL;
    size_t len = 7;
    int ndim = -1;

    (void)state;
    path_in_dir(path, sizeof path, "plain.npy");
    assert_ok(npyio_save(path, "float64", 2, shape, values,
                               sizeof values, NPYIO_WRITE_NO_SYNC, NULL));
    assert_ok(npyio_load(path, NULL, &data, &len, type, sizeof type,
                               &ndim, got_shape, 2));
    assert_int_equal(len, sizeof values);
    assert_memory_equal(data, values, sizeof values);
    assert_int_equal(ndim, 2);
    assert_int_equal(got_shape[0], 2);
    assert_int_equal(got_shape[1], 3);
    assert_string_equal(type, little ? "<f8" : ">f8");
    npyio_free(data);
    /* Too small a type or shape buffer: nothing handed back. */
    assert_status(npyio_load(path, NULL, &data, &len, type, 3, &ndim,
                                   got_shape, 2),
                  NPYIO_E_BUFFER_TOO_SMALL);
    assert_error_contains("npyio_load: the type needs 4 bytes");
    assert_null(data);
    assert_int_equal(len, 0);
    assert_status(npyio_load(path, NULL, &data, &len, type, sizeof type,
                                   &ndim, got_shape, 1),
                  NPYIO_E_BUFFER_TOO_SMALL);
    assert_error_contains("2 dimensions, shape_cap is 1");
    assert_null(data);
    /* A length that does not match the shape, naming both. */
    assert_status(npyio_save(path, "f8", 2, shape, values, 40, 0, NULL),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("npyio_save: the buffer is 40 bytes, the "
                          "header describes 48");
    /* Data in the other byte order than the host's is refused. */
    {
        const char *other = little ? ">f8" : "<f8";

        assert_status(npyio_save(path, other, 2, shape, values, 48, 0,
                                       NULL),
                      NPYIO_E_INVALID_ARG);
        assert_error_contains("other byte order");
    }
    assert_status(npyio_save(path, NULL, 2, shape, values, 48, 0, NULL),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_load(path, NULL, NULL, &len, type, sizeof type,
                                   &ndim, got_shape, 2),
                  NPYIO_E_INVALID_ARG);
    /* Records: their descr list, taken back by npyio_save. */
    {
        static const char rec[] = "[('x', '<i4'), ('y', '<f8')]";
        unsigned char bytes[24] = {1, 0, 0, 0};
        char back[128];

        if (little) {
            assert_ok(npyio_save(path, rec, 1, shape, bytes, 24,
                                       NPYIO_WRITE_NO_SYNC, NULL));
            assert_ok(npyio_load(path, NULL, &data, &len, back,
                                       sizeof back, &ndim, got_shape, 2));
            assert_string_equal(back, rec);
            assert_int_equal(len, 24);
            npyio_free(data);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writes_sync_unless_told),
        cmocka_unit_test(test_flags_a_call_does_not_take),
        cmocka_unit_test(test_save_reads_exactly_its_length),
        cmocka_unit_test(test_plain_arrays_in_one_call),
    };

    return cmocka_run_group_tests(tests, make_dir, scratch_remove);
}
