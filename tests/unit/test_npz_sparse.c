/*
 * test_npz_sparse.c - appending to a sparse archive keeps it sparse. An
 * append copies the archive to a temporary; a kernel copy
 * (copy_file_range) writes the zeros of every hole, so that appending to
 * a 4.5 GiB archive of holes wrote 4.5 GiB. The copy now skips holes
 * (SEEK_DATA, SEEK_HOLE): the result has the same bytes and about the
 * blocks of its source. The archive here: a 64 MiB stored member of
 * zeros, made sparse by punching a hole over it (where the file system
 * can: else skipped), then a small member. Also, for the platform copy itself, a hole at the end of the
 * copied range, one at its start, and ranges cut inside either.
 */
#define _GNU_SOURCE /* fallocate, FALLOC_FL_PUNCH_HOLE */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "scratch.h"
#include "stream.h"

enum { BIG = 64 << 20 };

static int make_dir(void **state)
{
    (void)state;
    return scratch_make("npyio-npz-sparse");
}

static npyio_header *bytes_header(int64_t n)
{
    npyio_dtype *dt = NULL;
    npyio_header *h = NULL;

    assert_ok(npyio_dtype_parse("|u1", 3, NULL, &dt));
    assert_ok(npyio_header_new(dt, 1, &n, 0, &h));
    npyio_dtype_unref(dt);
    return h;
}

static int64_t blocks_bytes(const char *path)
{
    struct stat info;

    assert_int_equal(stat(path, &info), 0);
    return (int64_t)info.st_blocks * 512;
}

/* Punch a hole over [from, to) of path (page-aligned inside); false
 * where the file system cannot. */
static int punch(const char *path, off_t from, off_t to)
{
    int fd = open(path, O_RDWR);
    int ok;

    assert_true(fd >= 0);
    from = (from + 4095) / 4096 * 4096;
    to = to / 4096 * 4096;
    ok = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, from,
                   to - from) == 0;
    close(fd);
    return ok;
}

static void add_small(npyio_npz_writer *w, const char *key, uint8_t v)
{
    uint8_t data[5] = {v, v, v, v, v};
    npyio_header *h = bytes_header(5);

    assert_ok(npyio_npz_writer_add_with_header(w, key, h, data, sizeof data, 0,
                                               0));
    npyio_header_free(h);
}

/* Every member of the archive checked (CRC, lengths): the content is
 * whole. */
static void assert_verified(const char *path, size_t count)
{
    npyio_npz *npz = NULL;
    size_t i;

    assert_ok(npyio_npz_open_path(path, NULL, &npz));
    assert_int_equal(npyio_npz_count(npz), count);
    for (i = 0; i < count; i++)
        assert_ok(npyio_npz_verify(npz, i));
    npyio_npz_close(npz);
}

/* The append of the test below with `options` (NULL: none). */
static void append_keeps_holes(const npyio_options *options)
{
    char path[128];
    unsigned char *zeros = calloc(1, BIG);
    npyio_header *h = bytes_header(BIG);
    npyio_npz_writer *w = NULL;
    int64_t before, after;

    assert_non_null(zeros);
    path_in_dir(path, sizeof path, "sparse.npz");
    assert_ok(npyio_npz_writer_create_path(path, NPYIO_WRITE_NO_SYNC, NULL,
                                           &w));
    assert_ok(npyio_npz_writer_add_with_header(w, "big", h, zeros, BIG, 0, 0));
    add_small(w, "a", 1);
    assert_ok(npyio_npz_writer_close(w));
    if (!punch(path, 4096, BIG)) {
        free(zeros);
        npyio_header_free(h);
        skip(); /* no holes in this file system */
    }
    before = blocks_bytes(path);
    assert_true(before < BIG / 4);
    assert_ok(npyio_npz_writer_open_append_path(path, NPYIO_WRITE_NO_SYNC,
                                                options, &w));
    add_small(w, "b", 2);
    assert_ok(npyio_npz_writer_close(w));
    after = blocks_bytes(path);
    if (after > before + (1 << 20))
        fail_msg("the append filled the holes: %lld bytes of blocks, "
                 "%lld before", (long long)after, (long long)before);
    assert_verified(path, 3);
    assert_int_equal(unlink(path), 0);
    npyio_header_free(h);
    free(zeros);
}

static void test_append_keeps_holes(void **state)
{
    (void)state;
    append_keeps_holes(NULL);
}

/* No kernel copy between the files (another file system; a portable
 * build, NPYIO_PORTABLE, has none at all): the copy through a buffer
 * leaves the blocks of zeros holes too. */
static int no_kernel_copy(void *ctx, const char *call)
{
    (void)ctx;
    return strcmp(call, "copy_file_range") == 0 ? EXDEV : 0;
}

/* The options with that hook, made and freed around the test (freed even
 * when it is skipped). */
static int make_buffered(void **state)
{
    npyio_options *o = NULL;

    if (npyio_options_new(&o) != NPYIO_OK)
        return -1;
    npyio__options_set_faults(o, no_kernel_copy, NULL);
    *state = o;
    return 0;
}

static int free_buffered(void **state)
{
    npyio_options_free(*state);
    return 0;
}

static void test_buffered_append_keeps_holes(void **state)
{
    append_keeps_holes(*state);
}

/* The streams' copy between descriptors (a clone, a kernel copy, or a
 * buffer): a hole at the end of the range (the copy's length is set all
 * the same), then a file with no hole, then a hole at the start; the
 * bytes equal, the position of `to` at len, the descriptor's too. */
static void copy_and_compare(const char *src, int64_t len)
{
    char dst[128];
    int from = open(src, O_RDONLY), to;
    npyio_stream *in = NULL, *out = NULL;
    const char *how = NULL;
    unsigned char *a, *b;
    int64_t pos = 0;
    size_t la = 0, lb = 0;

    path_in_dir(dst, sizeof dst, "copy.bin");
    to = open(dst, O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(from >= 0 && to >= 0);
    assert_ok(npyio_stream_open_fd(from, NULL, &in));
    assert_ok(npyio_stream_open_fd(to, NULL, &out));
    assert_ok(npyio__stream_copy(out, in, len, &how));
    assert_non_null(how);
    assert_ok(npyio__stream_tell(out, &pos));
    assert_int_equal(pos, len);
    assert_int_equal(lseek(to, 0, SEEK_CUR), (off_t)len);
    assert_ok(npyio_stream_close(out));
    assert_ok(npyio_stream_close(in));
    close(to);
    close(from);
    a = read_file(src, &la);
    b = read_file(dst, &lb);
    assert_int_equal(lb, (size_t)len);
    assert_memory_equal(a, b, (size_t)len);
    free(a);
    free(b);
    assert_int_equal(unlink(dst), 0);
}

static void test_copy_edges(void **state)
{
    char src[128];
    int fd;
    static const char text[] = "data at the start";

    (void)state;
    path_in_dir(src, sizeof src, "src.bin");
    fd = open(src, O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, sizeof text), (ssize_t)sizeof text);
    assert_int_equal(ftruncate(fd, 512 << 10), 0); /* a hole to the end */
    close(fd);
    copy_and_compare(src, 512 << 10);
    copy_and_compare(src, 100 << 10); /* cut inside the hole */
    copy_and_compare(src, 10);        /* cut inside the data */
    copy_and_compare(src, 0);
    /* Data after a hole at the start. */
    fd = open(src, O_RDWR | O_TRUNC);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, text, sizeof text, 300 << 10),
                     (ssize_t)sizeof text);
    close(fd);
    copy_and_compare(src, (300 << 10) + (int64_t)sizeof text);
    assert_int_equal(unlink(src), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_append_keeps_holes),
        cmocka_unit_test_setup_teardown(test_buffered_append_keeps_holes,
                                        make_buffered, free_buffered),
        cmocka_unit_test(test_copy_edges),
    };

    return cmocka_run_group_tests(tests, make_dir, scratch_remove);
}
