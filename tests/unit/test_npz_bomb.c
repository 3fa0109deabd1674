/*
 * test_npz_bomb.c - a member of 1 GiB of zeros in a 1 MB archive (label
 * slow): under the default limits it reads in chunks in bounded memory
 * (peak RSS checked) and its CRC checks; under the untrusted preset it is
 * refused before anything is inflated.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "testutil.h"
#include "scratch.h"

#define GIB ((int64_t)1 << 30)

static char path[256];

static long peak_rss_kib(void)
{
    struct rusage u;

    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

static int make_bomb(void **state)
{
    static const int64_t shape[1] = {GIB};
    npyio_header *h = make_header("|u1", 1, shape, 0);
    unsigned char *zeros = calloc(1, 1 << 20);
    npyio_npz_writer *w = NULL;
    npyio_writer *mw = NULL;
    struct stat st;
    int64_t k;

    (void)state;
    if (scratch_make("test_npz_bomb") != 0)
        return -1;
    path_in_dir(path, sizeof path, "bomb.npz");
    assert_ok(npyio_npz_writer_create_path(path, NPYIO_WRITE_NO_SYNC, NULL, &w));
    assert_ok(npyio_writer_create_member(w, "zeros", h, 9, 0, &mw));
    for (k = 0; k < GIB >> 20; k++)
        assert_ok(npyio_writer_write(mw, zeros, 1 << 20));
    assert_ok(npyio_writer_close(mw));
    assert_ok(npyio_npz_writer_close(w));
    assert_int_equal(stat(path, &st), 0);
    assert_true(st.st_size < 1100000); /* about 1 MB */
    free(zeros);
    npyio_header_free(h);
    return 0;
}

static void test_default_limits_read_in_bounded_memory(void **state)
{
    size_t cap = 1 << 20, got = 0;
    unsigned char *buf = malloc(cap);
    npyio_npz *npz = NULL;
    npyio_reader *r = NULL;
    long before = peak_rss_kib();
    int64_t total = 0;
    npyio_status st;

    (void)state;
    assert_ok(npyio_npz_open_path(path, NULL, &npz));
    assert_ok(npyio_reader_open_member(npz, 0, &r));
    while ((st = npyio_reader_read_chunk(r, buf, cap, 0, &got)) ==
           NPYIO_OK) {
        assert_true(buf[0] == 0 && buf[got - 1] == 0);
        total += (int64_t)got;
    }
    assert_int_equal(st, NPYIO_END); /* the CRC checked at the end */
    assert_int_equal(total, GIB);
    assert_ok(npyio_reader_close(r));
    assert_ok(npyio_npz_verify(npz, 0));
    assert_ok(npyio_npz_close(npz));
    /* Inflating 1 GiB through a 1 MiB buffer: memory grows by the buffers,
     * not the data (allow for the sanitizers' own). */
    assert_true(peak_rss_kib() - before < 64 * 1024);
    free(buf);
}

static void test_untrusted_refuses_before_inflating(void **state)
{
    npyio_options *o = NULL;
    npyio_npz *npz = NULL;
    npyio_reader *r = NULL;

    (void)state;
    assert_ok(npyio_options_new(&o));
    assert_ok(npyio_options_set_untrusted(o));
    assert_status(npyio_npz_open_path(path, o, &npz), NPYIO_E_LIMIT);
    assert_error_contains("NPYIO_LIMIT_NPZ_TOTAL_BYTES");
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_NPZ_TOTAL_BYTES,
                                      2 * GIB));
    assert_ok(npyio_npz_open_path(path, o, &npz));
    assert_status(npyio_reader_open_member(npz, 0, &r), NPYIO_E_LIMIT);
    assert_error_contains("NPYIO_LIMIT_NPZ_MEMBER_BYTES");
    assert_status(npyio_npz_verify(npz, 0), NPYIO_E_LIMIT);
    assert_ok(npyio_npz_close(npz));
    npyio_options_free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_limits_read_in_bounded_memory),
        cmocka_unit_test(test_untrusted_refuses_before_inflating),
    };

    return cmocka_run_group_tests(tests, make_bomb, scratch_remove);
}
