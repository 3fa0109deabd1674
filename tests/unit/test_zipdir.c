/*
 * test_zipdir.c - the rarer parts of the ZIP format, from the archives
 * tests/data/gen_zip64.py builds by hand (tests/data/zip64/, checked there
 * against zipfile and np.load): ZIP64 end records and locators, saturated
 * fields with their values in ZIP64 extra fields (central and local),
 * other extra fields before them, bytes in front of the archive, data
 * descriptors, a directory out of the members' order, stored .npy files
 * of format 2.0 and 3.0. Every member must read as its source file, with
 * the directory facts the generator worked out; every damaged archive
 * must be refused with its status and a message naming the fault, and
 * every run must give back every block it took (inject.h's counting
 * allocator). Limits on the member count and on the declared total, and
 * every cut and every flipped byte of a ZIP64 archive (never a crash).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "testdata.h"
#include "inject.h"

enum { V_ARCHIVE, V_INDEX, V_NAME, V_KEY, V_SOURCE, V_METHOD, V_CSIZE,
       V_USIZE, V_CRC, V_HEADER_OFFSET, V_DATA_OFFSET, V_ARRAY_OFFSET };
enum { R_ARCHIVE, R_STAGE, R_INDEX, R_STATUS, R_MESSAGE, R_WHAT };

static const char *zip_path(const char *name, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/zip64/%s", NPYIO_TEST_DATA_DIR, name);
    return buf;
}

static int64_t stat_of(const npyio_npz *npz, size_t i, npyio_npz_stat_id f)
{
    int64_t v = -2;

    assert_ok(npyio_npz_stat(npz, i, f, &v));
    return v;
}

#define assert_stat(npz, i, field, text)                                     \
    assert_int_equal(stat_of((npz), (i), (field)), atoll(text))

/* A member's bytes through its stream (malloc'd). */
static unsigned char *member_bytes(npyio_npz *npz, size_t i, size_t *len)
{
    npyio_stream *s = NULL;
    unsigned char *buf = malloc(1 << 16);
    size_t got = 0;

    *len = 0;
    assert_ok(npyio_stream_open_member(npz, i, &s));
    do {
        assert_ok(npyio_stream_read(s, buf + *len, (1 << 16) - *len, &got));
        *len += got;
    } while (got > 0 && *len < (1 << 16));
    assert_ok(npyio_stream_close(s));
    return buf;
}

/* One member against its manifest row: facts, bytes, a verified CRC, and
 * npyio_npz_load's array equal to npyio_load_with_header's of the source file. */
static void check_member(npyio_npz *npz, const tsv_row *r, int by_path)
{
    size_t i = (size_t)atoll(r->field[V_INDEX]), len = 0, want_len = 0;
    unsigned char *got = member_bytes(npz, i, &len);
    unsigned char *want = read_data_file(r->field[V_SOURCE], &want_len);

    assert_string_equal(npyio_npz_name(npz, i), r->field[V_NAME]);
    assert_string_equal(npyio_npz_key(npz, i), r->field[V_KEY]);
    assert_stat(npz, i, NPYIO_NPZ_STAT_METHOD, r->field[V_METHOD]);
    assert_stat(npz, i, NPYIO_NPZ_STAT_COMPRESSED_SIZE, r->field[V_CSIZE]);
    assert_stat(npz, i, NPYIO_NPZ_STAT_SIZE, r->field[V_USIZE]);
    assert_stat(npz, i, NPYIO_NPZ_STAT_CRC32, r->field[V_CRC]);
    assert_stat(npz, i, NPYIO_NPZ_STAT_HEADER_OFFSET, r->field[V_HEADER_OFFSET]);
    assert_stat(npz, i, NPYIO_NPZ_STAT_DATA_OFFSET, r->field[V_DATA_OFFSET]);
    assert_stat(npz, i, NPYIO_NPZ_STAT_ARRAY_OFFSET, r->field[V_ARRAY_OFFSET]);
    assert_int_equal(stat_of(npz, i, NPYIO_NPZ_STAT_IS_ARRAY), 1);
    if (len != want_len || memcmp(got, want, len) != 0)
        fail_msg("%s member %zu: %zu bytes, not those of %s (%zu)",
                 r->field[V_ARCHIVE], i, len, r->field[V_SOURCE], want_len);
    assert_ok(npyio_npz_verify(npz, i));
    if (by_path) {
        char path[1024], src[1024];
        npyio_header *hb = NULL;
        void *a = NULL, *b = NULL;
        size_t alen = 0;

        snprintf(src, sizeof src, "%s/%s", NPYIO_TEST_DATA_DIR,
                 r->field[V_SOURCE]);
        assert_ok(npz_load_key(zip_path(r->field[V_ARCHIVE], path,
                                        sizeof path),
                               r->field[V_KEY], NULL, &a, &alen));
        assert_ok(npyio_load_with_header(src, NPYIO_READ_NATIVE |
                                         NPYIO_READ_C_ORDER, NULL, &hb, &b));
        assert_int_equal(alen, npyio_header_nbytes(hb));
        assert_memory_equal(a, b, (size_t)npyio_header_nbytes(hb));
        npyio_free(a);
        npyio_free(b);
        npyio_header_free(hb);
    }
    free(got);
    free(want);
}

/* Every archive of valid.tsv, from its path and from memory. */
static void test_valid_archives(void **state)
{
    npyio_options *o = failing_options(1);
    tsv_table t;
    size_t k = 0;

    (void)state;
    inj.fail_at = 0;
    tsv_load("zip64/valid.tsv", &t);
    while (k < t.count) {
        const char *name = t.rows[k].field[V_ARCHIVE];
        size_t first = k, n, len = 0;
        char path[1024];
        int by_path;

        while (k < t.count && strcmp(t.rows[k].field[V_ARCHIVE], name) == 0)
            k++;
        n = k - first;
        for (by_path = 1; by_path >= 0; by_path--) {
            unsigned char *bytes = NULL;
            npyio_stream *s = NULL;
            npyio_npz *npz = NULL;
            size_t i;

            inj.live = 0;
            if (by_path) {
                assert_ok(npyio_npz_open_path(zip_path(name, path,
                                                       sizeof path),
                                              o, &npz));
            } else {
                bytes = read_data_file_abs(zip_path(name, path, sizeof path),
                                           &len);
                assert_ok(npyio_stream_open_memory(bytes, len, o, &s));
                assert_ok(npyio_npz_open_stream(s, o, &npz));
            }
            assert_int_equal(npyio_npz_count(npz), n);
            for (i = first; i < k; i++)
                check_member(npz, &t.rows[i], by_path);
            assert_ok(npyio_npz_close(npz));
            assert_ok(npyio_stream_close(s));
            free(bytes);
            if (inj.live != 0)
                fail_msg("%s: %ld blocks not given back", name, inj.live);
        }
    }
    tsv_free(&t);
    npyio_options_free(o);
}

#define assert_refused(expr, want, text, name)                               \
    do {                                                                     \
        npyio_status got_ = (expr);                                          \
        if (got_ != (want) || strstr(npyio_last_error(), (text)) == NULL)    \
            fail_msg("%s: %s gave %s (%s), want %s saying \"%s\"", (name),   \
                     #expr, npyio_status_string(got_), npyio_last_error(),   \
                     npyio_status_string(want), (text));                    \
    } while (0)

/* Every archive of refused.tsv: refused at open with its status and
 * message, or opened with the one member refused (every way of reading
 * it) while the other still reads. */
static void test_refused_archives(void **state)
{
    npyio_options *o = failing_options(1);
    tsv_table t;
    size_t k;

    (void)state;
    inj.fail_at = 0;
    tsv_load("zip64/refused.tsv", &t);
    for (k = 0; k < t.count; k++) {
        const tsv_row *r = &t.rows[k];
        const char *name = r->field[R_ARCHIVE], *text = r->field[R_MESSAGE];
        npyio_status want = status_named(r->field[R_STATUS] + 2);
        size_t index = (size_t)atoll(r->field[R_INDEX]);
        npyio_npz *npz = (npyio_npz *)&t; /* must be set to NULL */
        npyio_stream *m = (npyio_stream *)&t;
        npyio_reader *rd = NULL;
        char path[1024];

        inj.live = 0;
        zip_path(name, path, sizeof path);
        if (strcmp(r->field[R_STAGE], "open") == 0) {
            assert_refused(npyio_npz_open_path(path, o, &npz), want, text,
                           name);
            assert_null(npz);
            assert_non_null(strstr(npyio_last_error(), path));
        } else {
            assert_ok(npyio_npz_open_path(path, o, &npz));
            assert_int_equal(npyio_npz_count(npz), 2);
            assert_refused(npyio_stream_open_member(npz, index,
                                                    &m), want, text,
                           name);
            assert_null(m);
            assert_refused(npyio_npz_verify(npz, index), want, text, name);
            assert_refused(npyio_reader_open_member(npz, index, &rd), want,
                           text, name);
            assert_null(rd);
            assert_int_equal(stat_of(npz, index, NPYIO_NPZ_STAT_READABLE),
                             want == NPYIO_E_UNSUPPORTED ? 0 : 1);
            assert_int_equal(stat_of(npz, index, NPYIO_NPZ_STAT_IS_ARRAY),
                             want == NPYIO_E_UNSUPPORTED ? -1 : 0);
            assert_ok(npyio_npz_verify(npz, 1 - index));
            assert_ok(npyio_npz_close(npz));
        }
        if (inj.live != 0)
            fail_msg("%s: %ld blocks not given back", name, inj.live);
    }
    tsv_free(&t);
    npyio_options_free(o);
}

/* NPYIO_LIMIT_NPZ_MEMBERS counts the entries of the directory walked by
 * its size; NPYIO_LIMIT_NPZ_TOTAL_BYTES the sizes the entries declare
 * (ZIP64 values included, 140 + 224 bytes here): both refused before any
 * member is read, and the archive opens once they allow it. */
static void test_limits(void **state)
{
    static const struct {
        int64_t members, total;
        const char *refusal; /* NULL: opens */
    } cases[] = {
        {1, 1000, "the archive has more than 1 members "
                  "(NPYIO_LIMIT_NPZ_MEMBERS)"},
        {2, 363, "the members declare 364 bytes in all, over "
                 "NPYIO_LIMIT_NPZ_TOTAL_BYTES (363)"},
        {2, 364, NULL},
    };
    npyio_options *o = failing_options(1);
    char path[1024];
    size_t i;

    (void)state;
    inj.fail_at = 0;
    inj.live = 0;
    zip_path("zip64_all.npz", path, sizeof path);
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        npyio_npz *npz = NULL;

        assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_NPZ_MEMBERS,
                                          cases[i].members));
        assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_NPZ_TOTAL_BYTES,
                                          cases[i].total));
        if (cases[i].refusal != NULL) {
            assert_refused(npyio_npz_open_path(path, o, &npz), NPYIO_E_LIMIT,
                           cases[i].refusal, "limits");
            assert_null(npz);
            continue;
        }
        assert_ok(npyio_npz_open_path(path, o, &npz));
        assert_int_equal(npyio_npz_count(npz), 2);
        assert_ok(npyio_npz_close(npz));
    }
    assert_int_equal(inj.live, 0);
    npyio_options_free(o);
}

/* Every cut of a ZIP64 archive is refused as malformed or cut short, and
 * every byte of it flipped is refused (with a message) or read; never a
 * crash, never a block kept. */
static void test_cut_and_flipped(void **state)
{
    npyio_options *o = failing_options(1);
    char path[1024];
    size_t len, cut, i;
    unsigned char *file =
        read_data_file_abs(zip_path("zip64_prefix.npz", path, sizeof path),
                           &len);

    (void)state;
    inj.fail_at = 0;
    for (cut = 0; cut < len; cut++) {
        npyio_stream *s = NULL;
        npyio_npz *npz = NULL;
        npyio_status st;

        inj.live = 0;
        assert_ok(npyio_stream_open_memory(file, cut, o, &s));
        st = npyio_npz_open_stream(s, o, &npz);
        if ((st != NPYIO_E_FORMAT && st != NPYIO_E_TRUNCATED) ||
            strncmp(npyio_last_error(), "npyio_npz_open_stream: ", 23) != 0)
            fail_msg("cut at %zu: %s (%s)", cut, npyio_status_string(st),
                     npyio_last_error());
        assert_ok(npyio_stream_close(s));
        assert_int_equal(inj.live, 0);
    }
    for (i = 0; i < len; i++) {
        unsigned char *copy = malloc(len);
        npyio_stream *s = NULL;
        npyio_npz *npz = NULL;
        npyio_status st;
        size_t k;

        memcpy(copy, file, len);
        copy[i] ^= 0x5a;
        inj.live = 0;
        assert_ok(npyio_stream_open_memory(copy, len, o, &s));
        st = npyio_npz_open_stream(s, o, &npz);
        if (st == NPYIO_OK) {
            for (k = 0; k < npyio_npz_count(npz); k++)
                (void)npyio_npz_verify(npz, k);
            assert_ok(npyio_npz_close(npz));
        } else if (npyio_last_error()[0] == '\0' || npz != NULL) {
            fail_msg("byte %zu flipped: %s without a message",
                     i, npyio_status_string(st));
        }
        assert_ok(npyio_stream_close(s));
        assert_int_equal(inj.live, 0);
        free(copy);
    }
    free(file);
    npyio_options_free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_archives),
        cmocka_unit_test(test_refused_archives),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_cut_and_flipped),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
