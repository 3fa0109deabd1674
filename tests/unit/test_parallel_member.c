/*
 * test_parallel_member.c - stored archive members read whole on several
 * threads (NPYIO_LIMIT_THREADS 1, 2, 3 and 7), and the thread policy.
 *
 * Members of np.savez's archive of the corpus (tests/data/npz/savez.npz:
 * big- and little-endian numbers, Fortran order, records, text) read as
 * native give NumPy's bytes (the corpus' .le.bin/.be.bin, made by NumPy)
 * on every count, and read with a type give one thread's bytes (NumPy's
 * casts of a stored big-endian member on 1, 2 and 3 threads:
 * tests/interop/member_threads_check.py). A member whose CRC-32 is wrong
 * or whose archive is cut after it was opened fails as with one thread:
 * the same status and message. Parts are cut as small as one element
 * here (npyio__part_bytes_min), so that small members take every thread.
 * npyio__thread_count gives what threads.h says.
 */
#define _POSIX_C_SOURCE 200809L
/* zlib's crc32_combine64, the reference below, where zlib declares it. */
#define _LARGEFILE64_SOURCE 1
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "testutil.h"
#include "testdata.h"
#include "arrays.h"
#include "scratch.h"
#include "threads.h"
#include "crc.h"

static const unsigned thread_counts[] = {1, 2, 3, 7};
#define COUNTS (sizeof thread_counts / sizeof thread_counts[0])

/* What one read gave: its status, message and bytes. */
typedef struct outcome {
    npyio_status st;
    char message[NPYIO__MESSAGE_CAP];
    unsigned char *data;
    size_t len;
} outcome;

/* Member `key` of the archive at path read whole with `flags` (and
 * `type`, unless NULL) on `threads` threads; `cut`: the archive is cut
 * to that many bytes once the reader is open (0: not cut). */
static void read_member(const char *path, const char *key, unsigned threads,
                        uint32_t flags, const char *type, off_t cut,
                        outcome *out)
{
    npyio_options *o = NULL;
    npyio_npz *npz = NULL;
    npyio_reader *r = NULL;
    size_t index = 0;
    void *block = NULL;

    memset(out, 0, sizeof *out);
    assert_ok(npyio_options_new(&o));
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_THREADS, threads));
    assert_ok(npyio_npz_open_path(path, o, &npz));
    assert_ok(npyio_npz_find(npz, key, &index, NULL));
    assert_ok(npyio_reader_open_member(npz, index, &r));
    if (type != NULL)
        assert_ok(npyio_reader_set_type(r, type, NPYIO_READ_CAST_UNSAFE));
    if (cut > 0)
        assert_int_equal(truncate(path, cut), 0);
    out->st = npyio_reader_read_alloc(r, flags, &block, &out->len);
    if (out->st != NPYIO_OK)
        snprintf(out->message, sizeof out->message, "%s",
                 npyio_last_error());
    out->data = malloc(out->len + 1);
    assert_non_null(out->data);
    if (out->len > 0)
        memcpy(out->data, block, out->len);
    npyio_free(block);
    npyio_reader_close(r);
    npyio_npz_close(npz);
    npyio_options_free(o);
}

static void same_outcome(const outcome *one, const outcome *many,
                         const char *what, unsigned threads)
{
    if (one->st != many->st || strcmp(one->message, many->message) != 0 ||
        one->len != many->len ||
        (one->len > 0 && memcmp(one->data, many->data, one->len) != 0))
        fail_msg("%s on %u threads: status %d \"%s\" (%zu bytes), one "
                 "thread: %d \"%s\" (%zu bytes)", what, threads,
                 (int)many->st, many->message, many->len, (int)one->st,
                 one->message, one->len);
}

/* The corpus members read here: numbers of both byte orders (one in
 * Fortran order), a record, text and times. */
static const char *const cases[] = {
    "f8_be", "u4_be", "i2_be", "c32_be", "i8_le", "f2_le",
    "timedelta_25s_be", "u3_str_be", "f8le_300x2_f", "rec_nested_padded"};
#define CASES (sizeof cases / sizeof cases[0])

static void native_is_numpys(void **state)
{
    static const uint32_t flags[] = {NPYIO_READ_NATIVE,
                                     NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER};
    const char *path = NPYIO_TEST_DATA_DIR "/npz/savez.npz";
    size_t c, f, t, len;
    outcome got;

    (void)state;
    for (c = 0; c < CASES; c++)
        for (f = 0; f < 2; f++) {
            unsigned char *want = array_expected(cases[c], NULL, 0, 0,
                                                 flags[f] & 3u, &len);

            for (t = 0; t < COUNTS; t++) {
                read_member(path, cases[c], thread_counts[t], flags[f], NULL,
                            0, &got);
                if (got.st != NPYIO_OK || got.len != len ||
                    memcmp(got.data, want, len) != 0)
                    fail_msg("member %s (flags 0x%x) on %u threads: %s",
                             cases[c], (unsigned)flags[f], thread_counts[t],
                             got.st != NPYIO_OK ? got.message
                                                : "not NumPy's bytes");
                free(got.data);
            }
            free(want);
        }
}

static void casts_as_one_thread(void **state)
{
    static const char *const types[] = {"<f4", ">f8", "<i8", "u1", "<c16"};
    const char *path = NPYIO_TEST_DATA_DIR "/npz/savez.npz";
    outcome one, many;
    size_t c, k, t;

    (void)state;
    for (c = 0; c < 2; c++)
        for (k = 0; k < sizeof types / sizeof types[0]; k++) {
            const char *key = c == 0 ? "f8_be" : "i2_be";

            read_member(path, key, 1, 0, types[k], 0, &one);
            for (t = 1; t < COUNTS; t++) {
                read_member(path, key, thread_counts[t], 0, types[k], 0,
                            &many);
                same_outcome(&one, &many, key, thread_counts[t]);
                free(many.data);
            }
            free(one.data);
        }
}

/* An archive of one stored '>f8' member "a" of 67 x 29 elements; the
 * offset of its data into *data_at. */
static void write_archive(char *path, int64_t *data_at)
{
    static const int64_t shape[2] = {67, 29};
    const char *keys[1] = {"a"};
    size_t len = 67 * 29 * 8, i;
    unsigned char *v = malloc(len);
    const void *data[1] = {v};
    int levels[1] = {0};
    const npyio_header *headers[1] = {make_header(">f8", 2, shape, 0)};
    npyio_npz *npz = NULL;

    assert_non_null(v);
    for (i = 0; i < len; i++)
        v[i] = (unsigned char)(i * 37 + 11);
    path_in_dir(path, 1024, "member.npz");
    assert_ok(npyio_savez_with_header(path, 1, keys, headers, data, &len,
                                      levels, NPYIO_WRITE_NO_SYNC, NULL));
    free(v);
    npyio_header_free((npyio_header *)headers[0]);
    assert_ok(npyio_npz_open_path(path, NULL, &npz));
    assert_ok(npyio_npz_stat(npz, 0, NPYIO_NPZ_STAT_DATA_OFFSET, data_at));
    npyio_npz_close(npz);
}

/* One byte of the member's data flipped (a CRC-32 failure), or the
 * archive cut in the middle of the data after the reader opened it. */
static void damaged_member(const char *type, uint32_t flags, bool cut,
                           unsigned threads, outcome *out)
{
    char path[1024];
    int64_t at = 0;
    FILE *f;

    write_archive(path, &at);
    if (!cut) {
        f = fopen(path, "r+b");
        assert_non_null(f);
        assert_int_equal(fseek(f, (long)at + 128 + 1000, SEEK_SET), 0);
        assert_int_equal(fputc(0x5A ^ 0xFF, f) != EOF, 1);
        assert_int_equal(fclose(f), 0);
    }
    read_member(path, "a", threads, flags, type, cut ? at + 128 + 7777 : 0,
                out);
}

static void failures_as_one_thread(void **state)
{
    static const char *const types[] = {NULL, "<f4"};
    static const uint32_t flags[] = {0, NPYIO_READ_NATIVE};
    outcome one, many;
    size_t k, f, t;
    int cut;

    (void)state;
    for (cut = 0; cut < 2; cut++)
        for (k = 0; k < 2; k++)
            for (f = 0; f < 2; f++) {
                damaged_member(types[k], flags[f], cut, 1, &one);
                assert_int_equal(one.st, cut ? NPYIO_E_TRUNCATED
                                             : NPYIO_E_CHECKSUM);
                for (t = 1; t < COUNTS; t++) {
                    damaged_member(types[k], flags[f], cut,
                                   thread_counts[t], &many);
                    same_outcome(&one, &many,
                                 cut ? "a cut archive" : "a bad CRC-32",
                                 thread_counts[t]);
                    free(many.data);
                }
                free(one.data);
            }
}

/* threads.h: the limit (1 to 64), parts of npyio__part_bytes_min of the
 * work at most, one thread without positioned reads. */
static void thread_policy(void **state)
{
    const uint64_t mib = (uint64_t)1 << 20;
    size_t saved = npyio__part_bytes_min;

    (void)state;
    npyio__part_bytes_min = (size_t)2 << 20;
    assert_int_equal(npyio__thread_count(1, 256 * mib, true), 1);
    assert_int_equal(npyio__thread_count(2, 256 * mib, true), 2);
    assert_int_equal(npyio__thread_count(0, 256 * mib, true), 1);
    assert_int_equal(npyio__thread_count(-5, 256 * mib, true), 1);
    assert_int_equal(npyio__thread_count(1000, 1024 * mib, true), 64);
    assert_int_equal(npyio__thread_count(8, 256 * mib, false), 1);
    assert_int_equal(npyio__thread_count(8, 5 * mib, true), 2);
    assert_int_equal(npyio__thread_count(8, 4 * mib - 1, true), 1);
    assert_int_equal(npyio__thread_count(8, 0, true), 1);
    assert_int_equal(npyio__thread_count(8, NPYIO__WORK_UNKNOWN, true), 8);
    assert_int_equal(npyio__thread_count(8, NPYIO__WORK_UNKNOWN, false), 1);
    npyio__part_bytes_min = saved;
}

static int setup(void **state)
{
    (void)state;
    npyio__part_bytes_min = 1; /* before any thread starts */
    return scratch_make("npyio-parallel-member");
}

/* Combining the CRCs of the parts of a member (threads deflate parts and
 * their CRCs are combined) agrees with zlib's for lengths past the 1 GiB
 * steps npyio__crc32_combine takes them in: against crc32_combine64
 * where zlib declares it (64-bit file offsets), else (Windows, where
 * z_off_t is 32 bits) against crc32_combine in steps of 2 GiB - 1. */
static void crc_combine_long_lengths(void **state)
{
    static const uint64_t lens[] = {0, 1, (1u << 30) - 1, 1u << 30,
                                    (1u << 30) + 1, 0x7fffffffu,
                                    (3ull << 30) + 5, (1ull << 33) + 7};
    size_t i;

    (void)state;
    for (i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        uint32_t got = npyio__crc32_combine(0x12345678u, 0x9abcdef0u, lens[i]);
#ifdef Z_LARGE64
        uLong want = crc32_combine64(0x12345678u, 0x9abcdef0u,
                                     (z_off64_t)lens[i]);
#else
        uLong want = 0x12345678u;
        uint64_t left = lens[i];

        for (; left > 0x7fffffffu; left -= 0x7fffffffu) /* other steps */
            want = crc32_combine(want, 0, (z_off_t)0x7fffffff);
        want = crc32_combine(want, 0x9abcdef0u, (z_off_t)left);
#endif
        assert_int_equal(got, (uint32_t)want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(native_is_numpys),
        cmocka_unit_test(crc_combine_long_lengths),
        cmocka_unit_test(casts_as_one_thread),
        cmocka_unit_test(failures_as_one_thread),
        cmocka_unit_test(thread_policy),
    };

    return cmocka_run_group_tests(tests, setup, scratch_remove);
}
