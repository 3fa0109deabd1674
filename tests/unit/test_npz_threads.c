/*
 * test_npz_threads.c - archive members read on NPYIO_LIMIT_THREADS
 * threads give the bytes, statuses and messages one thread gives: stored
 * members read in parts whose CRC-32s are combined (damaged and cut
 * archives included).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "scratch.h"

static const unsigned thread_counts[] = {1, 2, 3, 7};
#define N_COUNTS (sizeof thread_counts / sizeof thread_counts[0])

/* Member sizes around the 4 MiB parts and 2-part threshold. */
static const size_t sizes[] = {0, 1000, (size_t)8 << 20,
                               ((size_t)13 << 20) + 7,
                               ((size_t)17 << 20) + 5};
#define N_SIZES (sizeof sizes / sizeof sizes[0])

static unsigned char *pattern(size_t total)
{
    unsigned char *data = malloc(total ? total : 1);
    size_t i;

    assert_non_null(data);
    for (i = 0; i < total; i++)
        data[i] = (unsigned char)((i * 2654435761u) >> 11 & 0x7f);
    return data;
}

static npyio_options *with_threads(unsigned threads)
{
    npyio_options *o = NULL;

    assert_ok(npyio_options_new(&o));
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_THREADS, threads));
    return o;
}

/* An archive of one u1 member per size, at `level`, written on
 * `threads` threads. */
static void write_archive(const char *path, int level, unsigned threads,
                          const unsigned char *data)
{
    npyio_options *o = with_threads(threads);
    npyio_npz_writer *w = NULL;
    size_t k;

    assert_ok(npyio_npz_writer_create_path(path, NPYIO_WRITE_NO_SYNC, o, &w));
    for (k = 0; k < N_SIZES; k++) {
        int64_t shape = (int64_t)sizes[k];
        npyio_header *h = make_header("|u1", 1, &shape, 0);
        npyio_writer *mw = NULL;
        char key[16];

        snprintf(key, sizeof key, "m%zu", k);
        assert_ok(npyio_writer_create_member(w, key, h, level, 0, &mw));
        assert_ok(npyio_writer_write(mw, data, sizes[k]));
        assert_ok(npyio_writer_close(mw));
        npyio_header_free(h);
    }
    assert_ok(npyio_npz_writer_close(w));
    npyio_options_free(o);
}

/* Member k read whole on `threads` threads: its status, and its message
 * in msg; the bytes compared with data when it is read. */
static npyio_status load_member(const char *path, size_t k, unsigned threads,
                                const unsigned char *data, char *msg,
                                size_t cap)
{
    npyio_options *o = with_threads(threads);
    npyio_npz *npz = NULL;
    npyio_reader *r = NULL;
    void *got = NULL;
    size_t len = 0;
    npyio_status st;

    assert_ok(npyio_npz_open_path(path, o, &npz));
    assert_ok(npyio_reader_open_member(npz, k, &r));
    st = npyio_reader_read_alloc(r, 0, &got, &len);
    snprintf(msg, cap, "%s", st == NPYIO_OK ? "" : npyio_last_error());
    if (st == NPYIO_OK) {
        assert_int_equal(len, sizes[k]);
        assert_true(len == 0 || memcmp(got, data, len) == 0);
    }
    npyio_free(got);
    npyio_reader_close(r);
    npyio_npz_close(npz);
    npyio_options_free(o);
    return st;
}

static void test_stored_whole_reads(void **state)
{
    unsigned char *data = pattern(sizes[N_SIZES - 1]);
    char path[256], msg[512];
    size_t k, t;

    (void)state;
    path_in_dir(path, sizeof path, "stored.npz");
    write_archive(path, 0, 1, data);
    for (k = 0; k < N_SIZES; k++)
        for (t = 0; t < N_COUNTS; t++)
            assert_ok(load_member(path, k, thread_counts[t], data, msg,
                                  sizeof msg));
    free(data);
}

static int64_t member_stat(const char *path, size_t k, npyio_npz_stat_id id)
{
    npyio_npz *npz = NULL;
    int64_t v = 0;

    assert_ok(npyio_npz_open_path(path, NULL, &npz));
    assert_ok(npyio_npz_stat(npz, k, id, &v));
    npyio_npz_close(npz);
    return v;
}

static void flip_byte(const char *path, int64_t at)
{
    FILE *f = fopen(path, "r+b");
    int c;

    assert_non_null(f);
    assert_int_equal(fseek(f, (long)at, SEEK_SET), 0);
    c = fgetc(f);
    assert_int_equal(fseek(f, (long)at, SEEK_SET), 0);
    fputc(c ^ 0x10, f);
    fclose(f);
}

/* A flipped byte in each part of the largest member: NPYIO_E_CHECKSUM
 * naming it, the message one thread gives. */
static void test_stored_damage(void **state)
{
    unsigned char *data = pattern(sizes[N_SIZES - 1]);
    size_t k = N_SIZES - 1, t, i;
    char path[256], one[512], msg[512];

    (void)state;
    path_in_dir(path, sizeof path, "stored_bad.npz");
    for (i = 0; i < 5; i++) {
        int64_t at;

        write_archive(path, 0, 1, data);
        at = member_stat(path, k, NPYIO_NPZ_STAT_DATA_OFFSET) + 200 +
             (int64_t)(i * ((size_t)4 << 20) + i * 12345);
        flip_byte(path, at);
        assert_status(load_member(path, k, 1, data, one, sizeof one),
                      NPYIO_E_CHECKSUM);
        assert_non_null(strstr(one, "'m4.npy'"));
        for (t = 1; t < N_COUNTS; t++) {
            assert_status(load_member(path, k, thread_counts[t], data, msg,
                                      sizeof msg),
                          NPYIO_E_CHECKSUM);
            assert_string_equal(msg, one);
        }
    }
    free(data);
}

/* The archive cut inside the largest member after it was opened:
 * NPYIO_E_TRUNCATED naming it, as one thread reports it. */
static npyio_status read_cut(const char *path, unsigned threads, char *msg,
                             size_t cap)
{
    unsigned char *data = pattern(sizes[N_SIZES - 1]);
    npyio_options *o = with_threads(threads);
    npyio_npz *npz = NULL;
    npyio_reader *r = NULL;
    void *got = NULL;
    size_t len = 0;
    npyio_status st;

    write_archive(path, 0, 1, data);
    assert_ok(npyio_npz_open_path(path, o, &npz));
    assert_int_equal(truncate(path, (off_t)(member_stat(
                                  path, N_SIZES - 1,
                                  NPYIO_NPZ_STAT_DATA_OFFSET) +
                              (int64_t)(9 << 20) + 3)), 0);
    assert_ok(npyio_reader_open_member(npz, N_SIZES - 1, &r));
    st = npyio_reader_read_alloc(r, 0, &got, &len);
    snprintf(msg, cap, "%s", npyio_last_error());
    npyio_free(got);
    npyio_reader_close(r);
    npyio_npz_close(npz);
    npyio_options_free(o);
    free(data);
    return st;
}

static void test_stored_cut(void **state)
{
    char path[256], one[512], msg[512];
    size_t t;

    (void)state;
    path_in_dir(path, sizeof path, "stored_cut.npz");
    assert_status(read_cut(path, 1, one, sizeof one), NPYIO_E_TRUNCATED);
    assert_non_null(strstr(one, "'m4.npy'"));
    for (t = 1; t < N_COUNTS; t++) {
        assert_status(read_cut(path, thread_counts[t], msg, sizeof msg),
                      NPYIO_E_TRUNCATED);
        assert_string_equal(msg, one);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stored_whole_reads),
        cmocka_unit_test(test_stored_damage),
        cmocka_unit_test(test_stored_cut),
    };

    if (scratch_make("npyio-npz-threads") != 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, scratch_remove);
}
