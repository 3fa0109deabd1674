/*
 * test_header.c - .npy headers against NumPy's own: every header of the
 * NumPy-generated corpus (tests/data/headers, made by gen_headers.py and
 * gen_invalid.py) is parsed and its facts compared with NumPy's; headers
 * are re-emitted and compared byte for byte with what np.save writes; every
 * malformed header fails with its status and a message naming the fault.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "testdata.h"

enum {
    COL_NAME, COL_FILE, COL_VERSION, COL_HLEN, COL_OFFSET, COL_DESCR,
    COL_KIND, COL_ITEMSIZE, COL_ALIGN, COL_ORDER, COL_NDIM, COL_SHAPE,
    COL_FORTRAN, COL_COUNT, COL_NBYTES, COL_UNIT, COL_MULT, COL_CANON,
    COL_COUNT_ALL
};

static unsigned char *valid_file(const char *name, size_t *len)
{
    char rel[256];

    snprintf(rel, sizeof rel, "headers/valid/%s", name);
    return read_data_file(rel, len);
}

/* Parse the shape column ("3,4", "" for 0-d). */
static int parse_shape(const char *text, int64_t *shape)
{
    int n = 0;
    const char *p = text;

    while (*p != '\0') {
        char *end;

        shape[n++] = strtoll(p, &end, 10);
        p = *end == ',' ? end + 1 : end;
    }
    return n;
}

static void check_facts(const tsv_row *r, const npyio_header *h)
{
    const npyio_dtype *dt = npyio_header_dtype(h);
    bool flip = host_order() == '>' && host_order_case(r->field[COL_NAME]);
    int64_t shape[64];
    char str[64], want[64];
    int ndim = parse_shape(r->field[COL_SHAPE], shape);
    int i;

    assert_int_equal(npyio_header_version(h), atoi(r->field[COL_VERSION]));
    assert_int_equal(npyio_header_length(h), atoll(r->field[COL_HLEN]));
    assert_int_equal(npyio_header_data_offset(h),
                     atoll(r->field[COL_OFFSET]));
    assert_ok(npyio_dtype_str(dt, str, sizeof str, NULL));
    snprintf(want, sizeof want, "%s", r->field[COL_DESCR]);
    if (flip && want[0] == '<')
        want[0] = '>';
    assert_string_equal(str, want);
    assert_int_equal(npyio_dtype_kind(dt), r->field[COL_KIND][0]);
    /* An object is a pointer: its size is the host's (8 where NumPy ran). */
    if (sizeof(void *) != 8 && npyio_dtype_kind(dt) == NPYIO_KIND_OBJECT)
        return;
    assert_int_equal(npyio_dtype_itemsize(dt), atoll(r->field[COL_ITEMSIZE]));
    /* NumPy's alignments are x86-64's (C types align differently on
     * 32-bit x86 and on s390x). */
#if defined(__x86_64__)
    assert_int_equal(npyio_dtype_alignment(dt), atoll(r->field[COL_ALIGN]));
#endif
    assert_int_equal(npyio_dtype_byteorder(dt), want[0] == '|' ? '|'
                                                                : want[0]);
    assert_int_equal(npyio_dtype_is_native(dt),
                     want[0] != (host_order() == '<' ? '>' : '<'));
    assert_int_equal(npyio_header_ndim(h), atoi(r->field[COL_NDIM]));
    assert_int_equal(ndim, npyio_header_ndim(h));
    for (i = 0; i < ndim; i++)
        assert_int_equal(npyio_header_shape(h)[i], shape[i]);
    assert_int_equal(npyio_header_is_fortran_order(h),
                     atoi(r->field[COL_FORTRAN]));
    assert_int_equal(npyio_header_count(h), strtoll(r->field[COL_COUNT],
                                                     NULL, 10));
    assert_int_equal(npyio_header_nbytes(h), strtoll(r->field[COL_NBYTES],
                                                      NULL, 10));
    if (strcmp(r->field[COL_UNIT], "-") == 0) {
        assert_null(npyio_dtype_datetime_unit(dt));
        assert_int_equal(npyio_dtype_datetime_multiplier(dt), 0);
    } else {
        assert_string_equal(npyio_dtype_datetime_unit(dt), r->field[COL_UNIT]);
        assert_int_equal(npyio_dtype_datetime_multiplier(dt),
                         atoll(r->field[COL_MULT]));
    }
}

/* Emit with `version` and compare with a file of the corpus (flipped to
 * big-endian for host-order cases on a big-endian host). */
static void check_emit(const npyio_header *h, int version, const char *file,
                       bool flip)
{
    size_t want_len, len = 0;
    unsigned char *want = valid_file(file, &want_len);
    unsigned char *got;

    if (flip)
        flip_to_big_endian((char *)want, want_len);
    assert_status(npyio_header_emit(h, version, NULL, 0, &len),
                  NPYIO_E_BUFFER_TOO_SMALL);
    assert_int_equal(len, want_len);
    got = malloc(len);
    assert_status(npyio_header_emit(h, version, got, len - 1, &len),
                  NPYIO_E_BUFFER_TOO_SMALL);
    assert_ok(npyio_header_emit(h, version, got, want_len, &len));
    assert_int_equal(len, want_len);
    if (memcmp(got, want, len) != 0)
        fail_msg("emitted header differs from %s:\n got  %.*s\n want %.*s",
                 file, (int)len, (const char *)got, (int)want_len,
                 (const char *)want);
    free(got);
    free(want);
}

static void test_valid_corpus(void **state)
{
    tsv_table t;
    size_t i;

    (void)state;
    tsv_load("headers/valid/manifest.tsv", &t);
    assert_true(t.count >= 100);
    for (i = 0; i < t.count; i++) {
        const tsv_row *r = &t.rows[i];
        npyio_header *h = NULL;
        size_t len, consumed = 0;
        unsigned char *bytes;

        assert_int_equal(r->count, COL_COUNT_ALL);
        bytes = valid_file(r->field[COL_FILE], &len);
        print_message("%s\n", r->field[COL_NAME]);
        assert_ok(npyio_header_parse(bytes, len, NULL, &h, &consumed));
        assert_int_equal(consumed, atoll(r->field[COL_OFFSET]));
        check_facts(r, h);
        /* Re-emitted as np.save would write the array NumPy loads. */
        check_emit(h, 0, r->field[COL_CANON],
                   host_order() == '>' && host_order_case(r->field[COL_NAME]));
        /* A header written with a forced version comes back the same when
         * forced to that version again. */
        if (strncmp(r->field[COL_NAME], "forced_", 7) == 0)
            check_emit(h, atoi(r->field[COL_VERSION]), r->field[COL_FILE],
                       false);
        npyio_header_free(h);
        free(bytes);
    }
    tsv_free(&t);
}

/* New headers made from a dtype and shape are what np.save writes. */
static void test_new_headers_match_numpy(void **state)
{
    tsv_table t;
    size_t i;

    (void)state;
    tsv_load("headers/valid/manifest.tsv", &t);
    for (i = 0; i < t.count; i++) {
        const tsv_row *r = &t.rows[i];
        npyio_dtype *dt = NULL;
        npyio_header *h = NULL;
        int64_t shape[64];
        int ndim = parse_shape(r->field[COL_SHAPE], shape);
        size_t canon_len;
        unsigned char *canon = valid_file(r->field[COL_CANON], &canon_len);

        assert_ok(npyio_dtype_parse(r->field[COL_DESCR],
                                         strlen(r->field[COL_DESCR]), NULL,
                                         &dt));
        assert_ok(npyio_header_new(dt, ndim, shape,
                                   atoi(r->field[COL_FORTRAN]), &h));
        npyio_dtype_unref(dt); /* the header holds its own reference */
        assert_int_equal(npyio_header_data_offset(h), canon_len);
        assert_int_equal(npyio_header_version(h), canon[6]);
        check_emit(h, 0, r->field[COL_CANON], false);
        npyio_header_free(h);
        free(canon);
    }
    tsv_free(&t);
}

static void test_invalid_corpus(void **state)
{
    tsv_table t;
    size_t i;

    (void)state;
    tsv_load("headers/invalid/manifest.tsv", &t);
    assert_true(t.count >= 80);
    for (i = 0; i < t.count; i++) {
        const tsv_row *r = &t.rows[i];
        npyio_header *h = (npyio_header *)&t; /* must be reset to NULL */
        char rel[256];
        size_t len;
        unsigned char *bytes;

        snprintf(rel, sizeof rel, "headers/invalid/%s", r->field[1]);
        bytes = read_data_file(rel, &len);
        print_message("%s\n", r->field[0]);
        assert_status(npyio_header_parse(bytes, len, NULL, &h, NULL),
                      status_named(r->field[2]));
        assert_null(h);
        assert_error_contains(r->field[3]);
        free(bytes);
    }
    tsv_free(&t);
}

/* Every prefix of every valid header is truncated, with the number of
 * bytes needed to go on; nothing past the given length is read (each
 * prefix is copied into a buffer of exactly its size, for ASan). */
static void test_truncated_at_every_byte(void **state)
{
    tsv_table t;
    size_t i, cut;

    (void)state;
    tsv_load("headers/valid/manifest.tsv", &t);
    for (i = 0; i < t.count; i++) {
        size_t len;
        unsigned char *bytes = valid_file(t.rows[i].field[COL_FILE], &len);
        size_t prefix = bytes[6] == 1 ? 10 : 12;

        for (cut = 0; cut < len; cut++) {
            unsigned char *part = malloc(cut > 0 ? cut : 1);
            npyio_header *h = NULL;
            size_t need = 0;

            memcpy(part, bytes, cut);
            assert_status(npyio_header_parse(part, cut, NULL, &h, &need),
                          NPYIO_E_TRUNCATED);
            assert_int_equal(need, cut < 8 ? 8 : cut < prefix ? prefix : len);
            assert_true(need > cut);
            free(part);
        }
        free(bytes);
    }
    tsv_free(&t);
}

static unsigned char *make_header(const char *text, int version, size_t *len)
{
    size_t n = strlen(text), prefix = version == 1 ? 10 : 12;
    unsigned char *b = malloc(prefix + n);

    memcpy(b, "\x93NUMPY", 6);
    b[6] = (unsigned char)version;
    b[7] = 0;
    b[8] = (unsigned char)(n & 0xFF);
    b[9] = (unsigned char)(n >> 8);
    if (version != 1)
        b[10] = b[11] = 0;
    memcpy(b + prefix, text, n);
    *len = prefix + n;
    return b;
}

static void test_header_size_limit_counts_characters(void **state)
{
    /* 'é' is two bytes in UTF-8 and one character: a format 3.0 header of
     * this text has more bytes than characters. The first descr is a
     * duplicate key that loses to the second, so the header is valid. */
    const char *text = "{'descr': '\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9', "
                       "'descr': '<f8', 'fortran_order': False, "
                       "'shape': (2,), }\n";
    size_t len, chars = strlen(text) - 4;
    unsigned char *b = make_header(text, 3, &len);
    char needle[128];
    npyio_options *o = NULL;
    npyio_header *h = NULL;

    (void)state;
    assert_ok(npyio_options_new(&o));
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_HEADER_SIZE,
                                      (int64_t)chars));
    assert_ok(npyio_header_parse(b, len, o, &h, NULL));
    npyio_header_free(h);
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_HEADER_SIZE,
                                      (int64_t)chars - 1));
    assert_status(npyio_header_parse(b, len, o, &h, NULL), NPYIO_E_LIMIT);
    snprintf(needle, sizeof needle, "the header has %zu characters, more "
             "than the limit of %zu", chars, chars - 1);
    assert_error_contains(needle);
    free(b);
    /* In 1.0 the same bytes are 4 characters more (latin-1). */
    b = make_header(text, 1, &len);
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_HEADER_SIZE,
                                      (int64_t)chars));
    assert_status(npyio_header_parse(b, len, o, &h, NULL), NPYIO_E_LIMIT);
    assert_error_contains("NPYIO_LIMIT_HEADER_SIZE");
    npyio_options_free(o);
    free(b);
}

static void test_ndim_and_depth_limits(void **state)
{
    const char *text = "{'descr': '<f8', 'fortran_order': False, "
                       "'shape': (1, 2, 3), }\n";
    size_t len;
    unsigned char *b = make_header(text, 1, &len);
    npyio_options *o = NULL;
    npyio_header *h = NULL;

    (void)state;
    assert_ok(npyio_options_new(&o));
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_NDIM, 3));
    assert_ok(npyio_header_parse(b, len, o, &h, NULL));
    npyio_header_free(h);
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_NDIM, 2));
    assert_status(npyio_header_parse(b, len, o, &h, NULL), NPYIO_E_LIMIT);
    assert_error_contains("3 dimensions, more than the limit of 2");
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_NDIM, 64));
    /* The dict and the shape tuple nest two deep. */
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_DEPTH, 2));
    assert_ok(npyio_header_parse(b, len, o, &h, NULL));
    npyio_header_free(h);
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_DEPTH, 1));
    assert_status(npyio_header_parse(b, len, o, &h, NULL), NPYIO_E_LIMIT);
    assert_error_contains("NPYIO_LIMIT_DEPTH");
    npyio_options_free(o);
    free(b);
}

/*
 * np.save's form of the dict is read by a scan of its own, the rest by the
 * literal parser (header.c). The two must agree: each type string of the
 * dtype corpora (accepted or not), with shapes and orders, is parsed in
 * np.save's form and again with one space more after the brace (the
 * literal parser's alone): the same status, and the same header.
 */
static int parse_dict(const char *dict, bool general, npyio_header **h)
{
    char text[600];
    size_t len;
    unsigned char *b;
    int st, n;

    n = snprintf(text, sizeof text, "%s%s", general ? "{ " : "{",
                 dict + 1);
    /* Pad as np.save does (the same length both ways). */
    while (n < 200 - (general ? 0 : 1))
        text[n++] = ' ';
    if (!general)
        text[n++] = ' ';
    text[n++] = '\n';
    text[n] = '\0';
    b = make_header(text, 1, &len);
    st = npyio_header_parse(b, len, NULL, h, NULL);
    free(b);
    return st;
}

static void assert_same_header(const npyio_header *a, const npyio_header *b,
                               const char *dict)
{
    unsigned char ea[512], eb[512];
    size_t la = 0, lb = 0;
    int i;

    if (!npyio_dtype_is_equal(npyio_header_dtype(a), npyio_header_dtype(b)) ||
        npyio_header_ndim(a) != npyio_header_ndim(b) ||
        npyio_header_is_fortran_order(a) != npyio_header_is_fortran_order(b) ||
        npyio_header_nbytes(a) != npyio_header_nbytes(b) ||
        npyio_header_data_offset(a) != npyio_header_data_offset(b))
        fail_msg("%s: the two parsers disagree", dict);
    for (i = 0; i < npyio_header_ndim(a); i++)
        if (npyio_header_shape(a)[i] != npyio_header_shape(b)[i])
            fail_msg("%s: shape entry %d differs", dict, i);
    assert_ok(npyio_header_emit(a, 0, ea, sizeof ea, &la));
    assert_ok(npyio_header_emit(b, 0, eb, sizeof eb, &lb));
    if (la != lb || memcmp(ea, eb, la) != 0)
        fail_msg("%s: emitted headers differ", dict);
}

static void check_both_parsers(const char *descr, const char *shape,
                               const char *fortran, int *fast_ok)
{
    char dict[400];
    npyio_header *fast = NULL, *general = NULL;
    int a, b;

    snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, "
             "'shape': %s, }", descr, fortran, shape);
    a = parse_dict(dict, false, &fast);
    b = parse_dict(dict, true, &general);
    if (a != b)
        fail_msg("%s: %s in np.save's form, %s with a space more", dict,
                 npyio_status_string(a), npyio_status_string(b));
    if (a == NPYIO_OK) {
        assert_same_header(fast, general, dict);
        ++*fast_ok;
    }
    npyio_header_free(fast);
    npyio_header_free(general);
}

static void test_canonical_scan_matches_parser(void **state)
{
    static const char *const tables[] = {"headers/dtype_strings.tsv",
                                         "headers/comma_strings.tsv"};
    static const char *const shapes[] = {
        "()", "(0,)", "(3,)", "(2, 3)", "(1, 0, 7)", "(3)", "(3,,)",
        "(03,)", "(3, 4,)", "(3,4)", "(9223372036854775807,)",
        "(9223372036854775808,)", "(4611686018427387904, 2)", "(-1,)",
        "(3L,)", "( 3,)"};
    int ok = 0;
    size_t k, i, j;

    (void)state;
    for (k = 0; k < 2; k++) {
        tsv_table t;

        tsv_load(tables[k], &t);
        for (i = 0; i < t.count; i++) {
            const char *descr = t.rows[i].field[0];

            if (strpbrk(descr, "'\\") != NULL || strlen(descr) > 150)
                continue; /* needs escapes in a quoted string */
            check_both_parsers(descr, i % 2 ? "(2, 3)" : "(5,)",
                               i % 3 ? "False" : "True", &ok);
        }
        tsv_free(&t);
    }
    for (j = 0; j < sizeof shapes / sizeof shapes[0]; j++) {
        check_both_parsers("<f8", shapes[j], "False", &ok);
        check_both_parsers("|V0", shapes[j], "True", &ok);
        check_both_parsers("(2,)<i4", shapes[j], "False", &ok);
    }
    check_both_parsers("<f8", "(3,)", "false", &ok);
    check_both_parsers("<f8", "(3,)", "1", &ok);
    print_message("%d parsed\n", ok);
    assert_true(ok > 900); /* most of them parse */
}

static void test_header_new_checks(void **state)
{
    npyio_dtype *f8 = NULL, *u1 = NULL;
    npyio_header *h = NULL;
    int64_t shape[3] = {3, -1, 2};
    int64_t big[2] = {INT64_C(1) << 40, INT64_C(1) << 30};
    int64_t wide[1] = {INT64_C(1) << 61};

    (void)state;
    assert_ok(npyio_dtype_parse("<f8", 3, NULL, &f8));
    assert_ok(npyio_dtype_parse("u1", 2, NULL, &u1));
    assert_status(npyio_header_new(f8, 3, shape, 0, &h), NPYIO_E_INVALID_ARG);
    assert_error_contains("shape[1] is negative (-1)");
    assert_null(h);
    assert_status(npyio_header_new(f8, -1, shape, 0, &h), NPYIO_E_INVALID_ARG);
    assert_status(npyio_header_new(f8, 2, NULL, 0, &h), NPYIO_E_INVALID_ARG);
    assert_status(npyio_header_new(NULL, 0, NULL, 0, &h), NPYIO_E_INVALID_ARG);
    assert_status(npyio_header_new(f8, 0, NULL, 0, NULL), NPYIO_E_INVALID_ARG);
    assert_status(npyio_header_new(u1, 2, big, 0, &h), NPYIO_E_OVERFLOW);
    assert_error_contains("more elements than a 64-bit count");
    assert_status(npyio_header_new(f8, 1, wide, 0, &h), NPYIO_E_OVERFLOW);
    assert_error_contains("more bytes than a 64-bit size");
    /* 0-d: one element, no shape needed. */
    assert_ok(npyio_header_new(f8, 0, NULL, 0, &h));
    assert_int_equal(npyio_header_count(h), 1);
    assert_int_equal(npyio_header_nbytes(h), 8);
    assert_int_equal(npyio_header_data_offset(h), 128);
    /* Forced versions and the version argument's range. */
    assert_status(npyio_header_emit(h, 4, NULL, 0, NULL), NPYIO_E_INVALID_ARG);
    assert_error_contains("version must be 0 (automatic), 1, 2 or 3");
    npyio_header_free(h);
    npyio_header_free(NULL);
    npyio_dtype_unref(f8);
    npyio_dtype_unref(u1);
}

/* A dimension of zero makes the count zero, but the other dimensions
 * still obey NumPy's size rule: (2**40, 2**40, 0) of '<f8' is "array is
 * too big" for NumPy (8 * 2**80 bytes beyond int64), (2**30, 2**20, 0) is
 * an empty array. sizes.tsv holds the edges, checked against np.load. */
static void test_zero_dimension(void **state)
{
    npyio_dtype *f8 = NULL;
    npyio_header *h = NULL;
    int64_t huge[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 0};
    int64_t fine[3] = {INT64_C(1) << 30, INT64_C(1) << 20, 0};

    (void)state;
    assert_ok(npyio_dtype_parse("<f8", 3, NULL, &f8));
    assert_status(npyio_header_new(f8, 3, huge, 1, &h), NPYIO_E_OVERFLOW);
    assert_error_contains("array is too big");
    assert_null(h);
    assert_ok(npyio_header_new(f8, 3, fine, 1, &h));
    assert_int_equal(npyio_header_count(h), 0);
    assert_int_equal(npyio_header_nbytes(h), 0);
    npyio_header_free(h);
    npyio_dtype_unref(f8);
}

/* Parse the shape column of sizes.tsv, a Python tuple: "(0, 5)", "(3,)". */
static int parse_tuple(const char *text, int64_t *shape)
{
    int n = 0;
    const char *p = text;

    while (*p != '\0') {
        if (*p >= '0' && *p <= '9') {
            char *end;

            shape[n++] = strtoll(p, &end, 10);
            p = end;
        } else {
            p++;
        }
    }
    return n;
}

/*
 * NumPy's size rule at its edges (headers/sizes.tsv, made by
 * gen_headers.py from np.load of each header): the itemsize times every
 * dimension other than 0 must fit in int64, whether or not a dimension is
 * 0. Parsing a header and making one with npyio_header_new() both follow
 * it, with NPYIO_E_OVERFLOW and a message naming the rule.
 */
static void test_size_rule_matches_numpy(void **state)
{
    tsv_table t;
    size_t i, loads = 0, refused = 0;

    (void)state;
    tsv_load("headers/sizes.tsv", &t);
    assert_true(t.count >= 100);
    for (i = 0; i < t.count; i++) {
        const tsv_row *r = &t.rows[i];
        const char *descr = r->field[0];
        bool numpy_loads = strcmp(r->field[2], "1") == 0;
        char text[512];
        unsigned char *b;
        size_t len;
        int64_t shape[64];
        int ndim = parse_tuple(r->field[1], shape);
        npyio_header *h = NULL;
        npyio_dtype *dt = NULL;

        assert_int_equal(r->count, 5);
        print_message("%s %s\n", descr, r->field[1]);
        snprintf(text, sizeof text, "{'descr': %s, 'fortran_order': False, "
                 "'shape': %s, }\n", descr, r->field[1]);
        b = make_header(text, 1, &len);
        assert_ok(npyio_dtype_parse(descr, strlen(descr), NULL, &dt));
        if (numpy_loads) {
            assert_ok(npyio_header_parse(b, len, NULL, &h, NULL));
            npyio_header_free(h);
            assert_ok(npyio_header_new(dt, ndim, shape, 0, &h));
            npyio_header_free(h);
            loads++;
        } else {
            assert_status(npyio_header_parse(b, len, NULL, &h, NULL),
                          NPYIO_E_OVERFLOW);
            assert_error_contains(r->field[3]);
            assert_null(h);
            assert_status(npyio_header_new(dt, ndim, shape, 0, &h),
                          NPYIO_E_OVERFLOW);
            assert_error_contains(r->field[3]);
            assert_null(h);
            refused++;
        }
        npyio_dtype_unref(dt);
        free(b);
    }
    print_message("%zu shapes load, %zu refused, as in NumPy\n", loads,
                  refused);
    assert_true(loads > 50 && refused > 50);
    tsv_free(&t);
}

/* Emit a header made by npyio_header_new and parse it back with default
 * options: what construction accepts, reading must accept too. */
static void check_reads_back(const npyio_header *h)
{
    size_t len = 0;
    unsigned char *buf;
    npyio_header *again = NULL;

    assert_status(npyio_header_emit(h, 0, NULL, 0, &len),
                  NPYIO_E_BUFFER_TOO_SMALL);
    buf = malloc(len);
    assert_ok(npyio_header_emit(h, 0, buf, len, &len));
    assert_ok(npyio_header_parse(buf, len, NULL, &again, NULL));
    assert_int_equal(npyio_header_ndim(again), npyio_header_ndim(h));
    npyio_header_free(again);
    free(buf);
}

/*
 * At most 64 dimensions (NPYIO_LIMIT_NDIM's default, NumPy 2's maximum),
 * counted after a subarray dtype is folded into the shape, at
 * construction as on reading: npyio_header_new() used to accept 100
 * dimensions, and 64 + 64 folded ones, and emit headers that
 * npyio_header_parse() then refused.
 */
static void test_header_new_ndim_limit(void **state)
{
    int64_t ones[100], sub_shape[64];
    npyio_dtype *f8 = NULL, *sub32 = NULL, *sub64 = NULL, *nested = NULL;
    npyio_header *h = NULL;
    int i;

    (void)state;
    for (i = 0; i < 100; i++)
        ones[i] = 1;
    for (i = 0; i < 64; i++)
        sub_shape[i] = 1;
    assert_ok(npyio_dtype_parse("<f8", 3, NULL, &f8));
    assert_ok(npyio_dtype_new_subarray(f8, 32, sub_shape, &sub32));
    assert_ok(npyio_dtype_new_subarray(f8, 64, sub_shape, &sub64));
    assert_ok(npyio_dtype_new_subarray(sub32, 32, sub_shape, &nested));

    assert_ok(npyio_header_new(f8, 64, ones, 0, &h));
    check_reads_back(h);
    npyio_header_free(h);
    assert_status(npyio_header_new(f8, 65, ones, 0, &h), NPYIO_E_LIMIT);
    assert_error_contains("the shape has 65 dimensions, more than the limit "
                          "of 64 (NPYIO_LIMIT_NDIM)");
    assert_null(h);
    assert_status(npyio_header_new(f8, 100, ones, 0, &h), NPYIO_E_LIMIT);
    assert_null(h);
    /* Folded subarray dimensions count too. */
    assert_ok(npyio_header_new(sub32, 32, ones, 0, &h));
    assert_int_equal(npyio_header_ndim(h), 64);
    check_reads_back(h);
    npyio_header_free(h);
    assert_ok(npyio_header_new(sub64, 0, NULL, 0, &h));
    check_reads_back(h);
    npyio_header_free(h);
    assert_status(npyio_header_new(sub32, 33, ones, 0, &h), NPYIO_E_LIMIT);
    assert_error_contains("65 dimensions (33 + 32)");
    assert_status(npyio_header_new(sub64, 64, ones, 0, &h), NPYIO_E_LIMIT);
    assert_error_contains("128 dimensions (64 + 64)");
    assert_status(npyio_header_new(sub64, 1, ones, 0, &h), NPYIO_E_LIMIT);
    /* ... through every level of a nested subarray. */
    assert_ok(npyio_header_new(nested, 0, NULL, 0, &h));
    assert_int_equal(npyio_header_ndim(h), 64);
    check_reads_back(h);
    npyio_header_free(h);
    assert_status(npyio_header_new(nested, 1, ones, 0, &h), NPYIO_E_LIMIT);
    assert_error_contains("65 dimensions (1 + 64)");
    assert_null(h);
    npyio_dtype_unref(nested);
    npyio_dtype_unref(sub64);
    npyio_dtype_unref(sub32);
    npyio_dtype_unref(f8);
}

static void test_getters_on_null(void **state)
{
    (void)state;
    assert_null(npyio_header_dtype(NULL));
    assert_int_equal(npyio_header_ndim(NULL), 0);
    assert_null(npyio_header_shape(NULL));
    assert_int_equal(npyio_header_count(NULL), 0);
    assert_int_equal(npyio_header_version(NULL), 0);
    assert_status(npyio_header_parse(NULL, 10, NULL, NULL, NULL),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_header_emit(NULL, 0, NULL, 0, NULL),
                  NPYIO_E_INVALID_ARG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_corpus),
        cmocka_unit_test(test_new_headers_match_numpy),
        cmocka_unit_test(test_invalid_corpus),
        cmocka_unit_test(test_truncated_at_every_byte),
        cmocka_unit_test(test_header_size_limit_counts_characters),
        cmocka_unit_test(test_ndim_and_depth_limits),
        cmocka_unit_test(test_canonical_scan_matches_parser),
        cmocka_unit_test(test_header_new_checks),
        cmocka_unit_test(test_zero_dimension),
        cmocka_unit_test(test_size_rule_matches_numpy),
        cmocka_unit_test(test_header_new_ndim_limit),
        cmocka_unit_test(test_getters_on_null),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
