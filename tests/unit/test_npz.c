/*
 * test_npz.c - reading .npz archives against what NumPy and Python's
 * zipfile wrote (tests/data/npz, gen_npz.py): every member's directory
 * facts, its bytes equal to np.save's file of the same array, its reads
 * with every flag equal to reading that file, NumPy's choice among
 * duplicate names; every malformed archive of tests/data/npz/bad refused
 * with its status; cut and damaged archives never crash.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "testdata.h"
#include "hostile.h"

enum { M_ARCHIVE, M_INDEX, M_FILE, M_KEY, M_METHOD, M_FLAGS, M_CSIZE,
       M_USIZE, M_CRC, M_HEADER_OFFSET, M_DATA_OFFSET, M_IS_ARRAY, M_SOURCE,
       M_CHOICE, M_COLUMNS };
enum { B_ARCHIVE, B_STAGE, B_INDEX, B_STATUS, B_WHAT, B_COLUMNS };

static const char *data_path(const char *relative, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s", NPYIO_TEST_DATA_DIR, relative);
    return buf;
}

static npyio_npz *open_archive(const char *name, const npyio_options *o)
{
    char rel[256], path[1024];
    npyio_npz *npz = NULL;

    snprintf(rel, sizeof rel, "npz/%s", name);
    assert_ok(npyio_npz_open_path(data_path(rel, path, sizeof path), o,
                                  &npz));
    return npz;
}

static int64_t stat_of(const npyio_npz *npz, size_t i, npyio_npz_field f)
{
    int64_t v = -2;

    assert_ok(npyio_npz_stat(npz, i, f, &v));
    return v;
}

/* A stream's bytes to its end (malloc'd). */
static unsigned char *read_stream(npyio_stream *s, size_t *len)
{
    size_t cap = 1 << 12, have = 0, got = 0;
    unsigned char *buf = malloc(cap);

    for (;;) {
        assert_ok(npyio_stream_read(s, buf + have, cap - have, &got));
        have += got;
        if (have < cap)
            break;
        cap *= 2;
        buf = realloc(buf, cap);
    }
    *len = have;
    return buf;
}

/* ---- the valid corpus -------------------------------------------------------- */

/* Everything the manifest says of member i, through npyio_npz_stat. */
static void check_facts(const npyio_npz *npz, size_t i, const tsv_row *r)
{
    assert_string_equal(npyio_npz_name(npz, i), r->field[M_FILE]);
    assert_string_equal(npyio_npz_key(npz, i), r->field[M_KEY]);
    assert_int_equal(stat_of(npz, i, NPYIO_NPZ_METHOD),
                     atoll(r->field[M_METHOD]));
    assert_int_equal(stat_of(npz, i, NPYIO_NPZ_FLAGS),
                     atoll(r->field[M_FLAGS]));
    assert_int_equal(stat_of(npz, i, NPYIO_NPZ_COMPRESSED_SIZE),
                     atoll(r->field[M_CSIZE]));
    assert_int_equal(stat_of(npz, i, NPYIO_NPZ_SIZE),
                     atoll(r->field[M_USIZE]));
    assert_int_equal(stat_of(npz, i, NPYIO_NPZ_CRC32),
                     atoll(r->field[M_CRC]));
    assert_int_equal(stat_of(npz, i, NPYIO_NPZ_HEADER_OFFSET),
                     atoll(r->field[M_HEADER_OFFSET]));
    assert_int_equal(stat_of(npz, i, NPYIO_NPZ_DATA_OFFSET),
                     atoll(r->field[M_DATA_OFFSET]));
    /* Members this library cannot decompress are neither. */
    if (strcmp(r->field[M_METHOD], "0") == 0 ||
        strcmp(r->field[M_METHOD], "8") == 0)
        assert_int_equal(stat_of(npz, i, NPYIO_NPZ_IS_ARRAY),
                         atoll(r->field[M_IS_ARRAY]));
    else
        assert_int_equal(stat_of(npz, i, NPYIO_NPZ_IS_ARRAY), -1);
}

/* NumPy's bytes of a member: the .npy file of its source array, or the
 * .bin the generator wrote. */
static unsigned char *expected_bytes(const tsv_row *r, size_t *len)
{
    char rel[256];

    if (strcmp(r->field[M_SOURCE], "-") != 0)
        snprintf(rel, sizeof rel, "arrays/%s.npy", r->field[M_SOURCE]);
    else
        snprintf(rel, sizeof rel, "npz/%s.%s.bin", r->field[M_ARCHIVE],
                 r->field[M_INDEX]);
    return read_data_file(rel, len);
}

/* The member's uncompressed bytes are NumPy's, and its CRC checks. */
static void check_member_stream(npyio_npz *npz, size_t i, const tsv_row *r)
{
    npyio_stream *s = NULL;
    unsigned char *want, *got;
    size_t want_len, got_len;

    assert_ok(npyio_npz_open_member(npz, i, &s));
    got = read_stream(s, &got_len);
    assert_ok(npyio_stream_close(s));
    want = expected_bytes(r, &want_len);
    assert_int_equal(got_len, want_len);
    assert_memory_equal(got, want, want_len);
    free(got);
    free(want);
    assert_ok(npyio_npz_verify(npz, i));
}

/* Reading an .npy member with each flag gives what reading NumPy's file
 * of the same array gives (itself checked against NumPy's values). */
static void check_member_reads(npyio_npz *npz, size_t i, const tsv_row *r)
{
    npyio_header *fh = NULL, *mh = NULL;
    npyio_reader *fr = NULL, *mr = NULL;
    char rel[256], path[1024];
    unsigned flags;

    if (strcmp(r->field[M_SOURCE], "-") == 0)
        return;
    snprintf(rel, sizeof rel, "arrays/%s.npy", r->field[M_SOURCE]);
    data_path(rel, path, sizeof path);
    for (flags = 0; flags < 4; flags++) {
        void *a = NULL, *b = NULL;
        size_t alen = 0, blen = 0;

        assert_ok(npyio_reader_open_path(path, NULL, &fr));
        assert_ok(npyio_npz_open_reader(npz, i, &mr));
        fh = (npyio_header *)npyio_reader_header(fr);
        mh = (npyio_header *)npyio_reader_header(mr);
        assert_int_equal(npyio_header_nbytes(fh), npyio_header_nbytes(mh));
        assert_int_equal(npyio_header_data_offset(fh),
                         npyio_header_data_offset(mh));
        if (npyio_dtype_contains_objects(npyio_header_dtype(fh))) {
            assert_ok(npyio_reader_read_pickle(fr, &a, &alen));
            assert_ok(npyio_reader_read_pickle(mr, &b, &blen));
        } else {
            assert_ok(npyio_reader_read_alloc(fr, flags, &a, &alen));
            assert_ok(npyio_reader_read_alloc(mr, flags, &b, &blen));
        }
        assert_int_equal(alen, blen);
        assert_memory_equal(a, b, alen);
        npyio_free(a);
        npyio_free(b);
        assert_ok(npyio_reader_close(fr));
        assert_ok(npyio_reader_close(mr));
        if (npyio_dtype_contains_objects(npyio_header_dtype(fh)))
            break;
    }
}

/* Every member: its bytes, and its reads where it is an array. */
static void check_member_bytes(npyio_npz *npz, size_t i, const tsv_row *r)
{
    const char *method = r->field[M_METHOD];
    npyio_reader *reader = NULL;

    if (strcmp(method, "0") != 0 && strcmp(method, "8") != 0) {
        assert_int_equal(stat_of(npz, i, NPYIO_NPZ_READABLE), 0);
        assert_status(npyio_npz_open_reader(npz, i, &reader),
                      NPYIO_E_UNSUPPORTED);
        assert_error_contains(method[1] == '2' ? "bzip2" : "lzma");
        assert_null(reader);
        return;
    }
    assert_int_equal(stat_of(npz, i, NPYIO_NPZ_READABLE), 1);
    check_member_stream(npz, i, r);
    check_member_reads(npz, i, r);
}

static void test_valid_corpus(void **state)
{
    tsv_table t;
    npyio_npz *npz = NULL;
    const char *open_name = "";
    size_t k, members = 0;

    (void)state;
    tsv_load("npz/manifest.tsv", &t);
    for (k = 0; k < t.count; k++) {
        const tsv_row *r = &t.rows[k];
        long long index = atoll(r->field[M_INDEX]);

        assert_int_equal(r->count, M_COLUMNS);
        if (strcmp(open_name, r->field[M_ARCHIVE]) != 0) {
            if (npz != NULL)
                assert_ok(npyio_npz_close(npz));
            open_name = r->field[M_ARCHIVE];
            npz = open_archive(open_name, NULL);
        }
        if (index < 0) {
            assert_int_equal(npyio_npz_count(npz), 0);
            continue;
        }
        assert_true((size_t)index < npyio_npz_count(npz));
        check_facts(npz, (size_t)index, r);
        check_member_bytes(npz, (size_t)index, r);
        if (strcmp(r->field[M_CHOICE], "1") == 0) {
            size_t found = 99;

            assert_ok(npyio_npz_find(npz, r->field[M_KEY], &found, NULL));
            assert_int_equal(found, index);
        }
        members++;
    }
    assert_ok(npyio_npz_close(npz));
    assert_true(members > 50);
    tsv_free(&t);
}

/* ---- the malformed corpus ------------------------------------------------------- */

static npyio_status read_member_fully(npyio_npz *npz, size_t index)
{
    npyio_reader *r = NULL;
    void *data = NULL;
    npyio_status st = npyio_npz_open_reader(npz, index, &r);

    if (st != NPYIO_OK)
        return st;
    st = npyio_reader_read_alloc(r, 0, &data, NULL);
    npyio_free(data);
    npyio_reader_close(r);
    return st;
}

static void test_bad_corpus(void **state)
{
    npyio_options *o = NULL;
    tsv_table t;
    size_t k;

    (void)state;
    assert_ok(npyio_options_new(&o));
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_NPZ_RATIO, 100));
    tsv_load("npz/bad/manifest.tsv", &t);
    for (k = 0; k < t.count; k++) {
        const tsv_row *r = &t.rows[k];
        npyio_status want = status_named(r->field[B_STATUS] + 2);
        char rel[256], path[1024];
        npyio_npz *npz = NULL;
        npyio_status st;

        snprintf(rel, sizeof rel, "npz/bad/%s", r->field[B_ARCHIVE]);
        st = npyio_npz_open_path(data_path(rel, path, sizeof path), o, &npz);
        if (strcmp(r->field[B_STAGE], "open") == 0) {
            if (st != want)
                fail_msg("%s: open gave %s (%s), want %s", rel,
                         npyio_status_string(st), npyio_last_error(),
                         r->field[B_STATUS]);
            assert_null(npz);
            continue;
        }
        if (st != NPYIO_OK)
            fail_msg("%s: open failed: %s", rel, npyio_last_error());
        st = npyio_npz_verify(npz, (size_t)atoll(r->field[B_INDEX]));
        if (st != want && want != NPYIO_E_FORMAT)
            fail_msg("%s: verify gave %s (%s), want %s", rel,
                     npyio_status_string(st), npyio_last_error(),
                     r->field[B_STATUS]);
        st = read_member_fully(npz, (size_t)atoll(r->field[B_INDEX]));
        if (st != want)
            fail_msg("%s: reading gave %s (%s), want %s", rel,
                     npyio_status_string(st), npyio_last_error(),
                     r->field[B_STATUS]);
        assert_non_null(strstr(npyio_last_error(), "member"));
        /* The other members still read. */
        assert_ok(npyio_npz_verify(npz, 0));
        assert_ok(npyio_npz_close(npz));
    }
    tsv_free(&t);
    npyio_options_free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_corpus),
        cmocka_unit_test(test_bad_corpus),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
