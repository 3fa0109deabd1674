/*
 * test_map.c - npyio_map_create_path(): the layout of the file it creates
 * whatever file its header came from, and the disk blocks it reserves so
 * that a full disk is a clean error rather than SIGBUS later. (The path's
 * treatment, links and owners, is test_io.c's: it is the writers'.) And
 * arrays mapped where they lie inside a larger file, as an archive's
 * stored members do.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#include "testutil.h"
#include "testdata.h"
#include "scratch.h"
#include "small_mount.h"
#include "map.h"
#include <fcntl.h>

static int make_dir(void **state)
{
    (void)state;
    return scratch_make("npyio-map");
}

/* ---- the created file's layout --------------------------------------------------- */

/*
 * A header laid out as older or other writers did: format version
 * `major`, the dict, then spaces and a newline up to `total` bytes in all
 * (NumPy < 1.24 aligned the data to 16 bytes; 2.0 headers have a 4-byte
 * length; some writers pad more). np.save's own layout is (1, 128) here.
 */
static void old_header(unsigned char *buf, int major, size_t total,
                       const char *dict)
{
    size_t prefix = major == 1 ? 10 : 12, text = total - prefix,
           n = strlen(dict);

    assert_true(n + 1 <= text);
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    buf[8] = (unsigned char)(text & 0xff);
    buf[9] = (unsigned char)(text >> 8 & 0xff);
    if (major != 1) {
        buf[10] = (unsigned char)(text >> 16 & 0xff);
        buf[11] = (unsigned char)(text >> 24 & 0xff);
    }
    memcpy(buf + prefix, dict, n);
    memset(buf + prefix + n, ' ', text - n - 1);
    buf[total - 1] = '\n';
}

/* A double's bytes in the given order ('<' or '>'). */
static void put_f64(unsigned char *p, double v, char order)
{
    uint64_t u;
    int i;

    memcpy(&u, &v, 8);
    for (i = 0; i < 8; i++)
        p[order == '<' ? i : 7 - i] = (unsigned char)(u >> (8 * i) & 0xff);
}

/*
 * The header handed to npyio_map_create_path() describes a file whose data
 * starts elsewhere than np.save's (at 80, 96, 192): the created file gets
 * np.save's own header, data at 128, and the map's header says so. (The
 * library used to write np.save's header but map the data at the old
 * offset, over the end of the header.)
 */
static void test_create_from_another_layout(void **state)
{
    static const struct {
        int major;
        size_t total;
        const char *descr; /* '<f8' or '>f8' */
        int fortran;
    } cases[] = {
        {1, 80, "<f8", 0},  /* 16-byte aligned, NumPy < 1.24 */
        {1, 80, "<f8", 1},  /* the same, Fortran order */
        {2, 96, ">f8", 0},  /* a 2.0 header, big-endian data */
        {1, 192, "<f8", 0}, /* extra padding */
        {1, 128, "<f8", 0}, /* np.save's own layout */
    };
    size_t k;

    (void)state;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char dict[128], path[128];
        unsigned char bytes[256], expected[128], *file;
        size_t consumed = 0, len = 0, i;
        npyio_header *h = NULL, *back = NULL;
        const npyio_header *mh;
        npyio_map *m = NULL;
        double *values = NULL;
        char order = cases[k].descr[0];
        struct stat info;

        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, "
                 "'shape': (4, 3), }", cases[k].descr,
                 cases[k].fortran ? "True" : "False");
        old_header(bytes, cases[k].major, cases[k].total, dict);
        assert_ok(npyio_header_parse(bytes, cases[k].total, NULL, &h,
                                     &consumed));
        assert_int_equal(consumed, cases[k].total);
        assert_int_equal(npyio_header_data_offset(h), cases[k].total);
        assert_int_equal(npyio_header_version(h), cases[k].major);

        path_in_dir(path, sizeof path, "created.npy");
        assert_ok(npyio_map_create_path(path, h, 0, NULL, &m));
        assert_non_null(m);
        mh = npyio_map_header(m);
        assert_int_equal(npyio_header_data_offset(mh), 128);
        assert_int_equal(npyio_header_version(mh), 1);
        assert_int_equal(npyio_header_ndim(mh), 2);
        assert_int_equal(npyio_header_shape(mh)[0], 4);
        assert_int_equal(npyio_header_shape(mh)[1], 3);
        assert_int_equal(npyio_header_is_fortran_order(mh), cases[k].fortran);
        assert_int_equal(npyio_header_nbytes(mh), 96);
        assert_true(npyio_dtype_is_equal(npyio_header_dtype(mh),
                                      npyio_header_dtype(h)));
        assert_true(npyio_map_is_aligned(m));
        for (i = 0; i < 12; i++)
            put_f64((unsigned char *)npyio_map_data(m) + 8 * i,
                    (double)i * 1.25 - 3.0, order);
        assert_ok(npyio_map_close(m));

        /* The file: np.save's bytes for the header, then the data. */
        assert_int_equal(stat(path, &info), 0);
        assert_int_equal(info.st_size, 128 + 96);
        file = read_file(path, &len);
        assert_int_equal(len, 128 + 96);
        old_header(expected, 1, 128, dict); /* the same dict */
        assert_memory_equal(file, expected, 128);
        free(file);

        /* And it loads back, values and header. */
        assert_ok(npyio_load_with_header(path, NPYIO_READ_NATIVE, NULL, &back,
                             (void **)&values));
        assert_int_equal(npyio_header_ndim(back), 2);
        assert_int_equal(npyio_header_shape(back)[0], 4);
        assert_int_equal(npyio_header_shape(back)[1], 3);
        assert_int_equal(npyio_header_is_fortran_order(back), cases[k].fortran);
        assert_int_equal(npyio_dtype_kind(npyio_header_dtype(back)),
                         NPYIO_KIND_FLOAT);
        assert_int_equal(npyio_dtype_itemsize(npyio_header_dtype(back)), 8);
        /* The header handed back describes the native values handed
         * back; the file keeps the order it was made with. */
        assert_true(npyio_dtype_is_native(npyio_header_dtype(back)));
        {
            npyio_reader *r = NULL;

            assert_ok(npyio_reader_open_path(path, NULL, &r));
            assert_int_equal(npyio_dtype_byteorder(npyio_header_dtype(
                                 npyio_reader_header(r))),
                             order);
            npyio_reader_close(r);
        }
        for (i = 0; i < 12; i++)
            if (values[i] != (double)i * 1.25 - 3.0)
                fail_msg("case %zu: value %zu is %g, expected %g", k, i,
                         values[i], (double)i * 1.25 - 3.0);
        npyio_free(values);
        npyio_header_free(back);
        npyio_header_free(h);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(entries(dir), 0);
    }
}

/* ---- a full disk ------------------------------------------------------------------ */

/*
 * npyio_map_create_path() reserves the data's blocks: a file system too small
 * for the array fails at once with NPYIO_E_IO, leaving nothing behind and
 * an existing file as it was, instead of creating a sparse file whose
 * pages raise SIGBUS when written. NPYIO_MAP_SPARSE opts out.
 */
static void test_full_disk(void **state)
{
    int64_t big = 262144, mid = 32768, four = 4; /* 2 MiB, 256 KiB, 32 B */
    npyio_header *hb, *hm, *hs, *back = NULL;
    npyio_options *o = NULL;
    npyio_map *m = NULL;
    char path[300], sparse[300], fits[300];
    unsigned char *before, *after, *data = NULL, *pattern;
    size_t before_len = 0, after_len = 0;
    const char *msg;
    struct stat info;

    (void)state;
    if (small_mounted != SMALL_MOUNTED)
        skip(); /* not root, or no tmpfs to be had */
    hb = make_header("<f8", 1, &big, 0);
    hm = make_header("<f8", 1, &mid, 0);
    hs = make_header("<f8", 1, &four, 0);
    snprintf(path, sizeof path, "%s/big.npy", small);
    snprintf(sparse, sizeof sparse, "%s/sparse.npy", small);
    snprintf(fits, sizeof fits, "%s/fits.npy", small);

    /* No room: an error, and no file, no temporary. */
    assert_status(npyio_map_create_path(path, hb, 0, NULL, &m), NPYIO_E_IO);
    assert_null(m);
    msg = npyio_last_error();
    if (strstr(msg, "posix_fallocate") == NULL &&
        strstr(msg, "No space") == NULL)
        fail_msg("last error \"%s\" names neither posix_fallocate nor "
                 "the lack of space", msg);
    assert_error_contains("big.npy");
    assert_int_equal(entries(small), 0);

    /* The same over an existing file: it stays as it was. */
    assert_ok(npyio_save_with_header(path, hs,
                         "\0\0\0\0\0\0\360\77\0\0\0\0\0\0\0\100"
                         "\0\0\0\0\0\0\10\100\0\0\0\0\0\0\20\100", (size_t)npyio_header_nbytes(hs), 0,
                         NULL));
    before = read_file(path, &before_len);
    assert_int_equal(before_len, 128 + 32);
    assert_status(npyio_map_create_path(path, hb, 0, NULL, &m), NPYIO_E_IO);
    assert_null(m);
    assert_error_contains("big.npy");
    after = read_file(path, &after_len);
    assert_int_equal(after_len, before_len);
    assert_memory_equal(after, before, before_len);
    assert_int_equal(entries(small), 1);
    free(before);
    free(after);

    /* Sparse on request: created at once, no space taken; the data is
     * not touched (it would raise SIGBUS). */
    assert_ok(npyio_options_new(&o));
    assert_ok(npyio_map_create_path(sparse, hb, NPYIO_MAP_SPARSE, o, &m));
    assert_non_null(m);
    assert_int_equal(npyio_header_data_offset(npyio_map_header(m)), 128);
    assert_int_equal(stat(sparse, &info), 0);
    assert_int_equal(info.st_size, 128 + (8 << 18));
    assert_true((long long)info.st_blocks * 512 < (1 << 20));
    assert_ok(npyio_map_close(m));
    assert_int_equal(unlink(sparse), 0);
    assert_int_equal(entries(small), 1);

    /* What fits is reserved, then written and read back. */
    assert_ok(npyio_map_create_path(fits, hm, 0, NULL, &m));
    assert_non_null(m);
    assert_int_equal(stat(fits, &info), 0);
    assert_int_equal(info.st_size, 128 + (8 << 15));
    assert_true((long long)info.st_blocks * 512 >= 128 + (8 << 15));
    memset(npyio_map_data(m), 0x5a, 8 << 15);
    assert_ok(npyio_map_close(m));
    assert_ok(npyio_load_with_header(fits, 0, NULL, &back, (void **)&data));
    assert_int_equal(npyio_header_count(back), mid);
    pattern = malloc(8 << 15);
    assert_non_null(pattern);
    memset(pattern, 0x5a, 8 << 15);
    assert_memory_equal(data, pattern, 8 << 15);
    free(pattern);
    npyio_free(data);
    npyio_header_free(back);
    assert_int_equal(unlink(fits), 0);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(entries(small), 0);

    npyio_options_free(o);
    npyio_header_free(hs);
    npyio_header_free(hm);
    npyio_header_free(hb);
}

/* ---- arrays inside other files ------------------------------------------------------ */

/* sample.npy at byte `at` of a file of junk; returns the open file. */
static int embed_sample(const char *name, int64_t at, unsigned char **file,
                        size_t *len)
{
    char path[128];
    unsigned char junk[8192];
    int fd;

    *file = read_data_file("sample.npy", len);
    memset(junk, 0xA5, sizeof junk);
    path_in_dir(path, sizeof path, name);
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, junk, sizeof junk, 0), (ssize_t)sizeof junk);
    assert_int_equal(pwrite(fd, *file, *len, at), (ssize_t)*len);
    assert_int_equal(pwrite(fd, junk, 100, at + (int64_t)*len), 100);
    return fd;
}

/* npyio__map_array_at over a stream on the descriptor (borrowed). */
static npyio_status map_at_fd(int fd, int64_t start, int64_t length,
                              uint32_t flags, const npyio_options *options,
                              npyio_map **out)
{
    npyio_stream *s = NULL;
    npyio_status st = npyio_stream_open_fd(fd, options, &s);

    if (st == NPYIO_OK)
        st = npyio__map_array_at(s, start, length, flags, options, out);
    npyio_stream_close(s);
    return st;
}

static void test_map_an_array_inside_a_file(void **state)
{
    static const int64_t offsets[] = {0, 3, 4093, 4096, 6001};
    size_t i;

    (void)state;
    for (i = 0; i < sizeof offsets / sizeof offsets[0]; i++) {
        int64_t at = offsets[i];
        unsigned char *file, *data;
        size_t len;
        npyio_map *m = NULL;
        const npyio_header *h;
        int64_t offset;
        int fd = embed_sample("inside.bin", at, &file, &len);

        assert_ok(map_at_fd(fd, at, (int64_t)len, 0, NULL, &m));
        h = npyio_map_header(m);
        assert_int_equal(npyio_header_ndim(h), 2);
        assert_int_equal(npyio_header_nbytes(h), 96);
        offset = npyio_header_data_offset(h);
        data = npyio_map_data(m);
        assert_memory_equal(data, file + offset, 96);
        assert_ok(npyio_map_close(m));
        /* Read-write: a change lands at the array's bytes in the file. */
        assert_ok(map_at_fd(fd, at, (int64_t)len, NPYIO_MAP_WRITE,
                                      NULL,
                                      &m));
        data = npyio_map_data(m);
        data[0] ^= 0xFF;
        assert_ok(npyio_map_close(m));
        {
            unsigned char b = 0;

            assert_int_equal(pread(fd, &b, 1, at + offset), 1);
            assert_int_equal(b, file[offset] ^ 0xFF);
        }
        close(fd);
        free(file);
    }
}

static void test_map_an_array_needs_its_range(void **state)
{
    unsigned char *file;
    size_t len;
    npyio_map *m = NULL;
    int fd = embed_sample("short.bin", 1000, &file, &len);

    (void)state;
    /* A range that ends before the data does: truncated, nothing mapped. */
    assert_status(map_at_fd(fd, 1000, (int64_t)len - 1, 0, NULL,
                                      &m),
                  NPYIO_E_TRUNCATED);
    assert_null(m);
    /* Junk where the header should be. */
    assert_status(map_at_fd(fd, 999, (int64_t)len, 0, NULL, &m),
                  NPYIO_E_FORMAT);
    assert_null(m);
    close(fd);
    free(file);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_from_another_layout),
        cmocka_unit_test(test_map_an_array_inside_a_file),
        cmocka_unit_test(test_map_an_array_needs_its_range),
        cmocka_unit_test_setup_teardown(test_full_disk, mount_small,
                                        unmount_small),
    };

    return cmocka_run_group_tests(tests, make_dir, scratch_remove);
}
