/*
 * test_dtype.c - scalar dtypes: every type string NumPy's np.dtype() was
 * asked about (tests/data/headers/dtype_strings.tsv, made by
 * gen_headers.py) parses to NumPy's dtype.str, kind, itemsize and
 * alignment, or is refused where NumPy refuses it; the constructors,
 * queries, equality, native order and the text buffer protocol.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "testdata.h"

/*
 * Where libnpyio departs from NumPy 1.24 on purpose (documented in
 * npyio.h): sizes that NumPy wraps to negative numbers ("S-1",
 * "S99999999999999999999", "U536870912") and zero datetime multipliers
 * ("M8[0s]"), both of which NumPy accepts and then cannot use.
 */
static bool deliberately_refused(const char *input, const char *numpy_str)
{
    return strchr(numpy_str, '-') != NULL || strstr(input, "[0s]") != NULL;
}

/* NumPy's expectations were taken on a little-endian host: a type string
 * without an explicit order gives '<' there and the host's order here. */
static void expected_str(const char *input, const char *numpy_str, char *out)
{
    strcpy(out, numpy_str);
    if (host_order() == '>' && out[0] == '<' && input[0] != '<')
        out[0] = '>';
}

static void test_numpy_type_strings(void **state)
{
    tsv_table t;
    size_t i, accepted = 0, refused = 0;

    (void)state;
    tsv_load("headers/dtype_strings.tsv", &t);
    assert_true(t.count > 1000);
    for (i = 0; i < t.count; i++) {
        const tsv_row *r = &t.rows[i];
        const char *input = r->field[0];
        bool numpy_accepts = strcmp(r->field[1], "1") == 0;
        bool host_dependent = strcmp(r->field[6], "1") == 0;
        npyio_dtype *dt = NULL;
        npyio_status st;
        char str[64], want[64];

        assert_int_equal(r->count, 7);
        if (host_dependent)
            continue; /* checked in test_host_dependent_names */
        st = npyio_dtype_parse(input, strlen(input), NULL, &dt);
        if (!numpy_accepts || deliberately_refused(input, r->field[2])) {
            if (st == NPYIO_OK)
                fail_msg("\"%s\" parsed, NumPy refuses it", input);
            assert_true(st == NPYIO_E_FORMAT || st == NPYIO_E_OVERFLOW);
            assert_null(dt);
            refused++;
            continue;
        }
        if (st != NPYIO_OK)
            fail_msg("\"%s\" refused (%s), NumPy gives %s", input,
                     npyio_last_error(), r->field[2]);
        expected_str(input, r->field[2], want);
        assert_ok(npyio_dtype_str(dt, str, sizeof str, NULL));
        if (strcmp(str, want) != 0)
            fail_msg("\"%s\" gives %s, NumPy %s", input, str, want);
        assert_int_equal(npyio_dtype_kind(dt), r->field[3][0]);
        assert_int_equal(npyio_dtype_itemsize(dt), atoll(r->field[4]));
#if defined(__x86_64__) /* NumPy's alignments are x86-64's */
        assert_int_equal(npyio_dtype_alignment(dt), atoll(r->field[5]));
#endif
        npyio_dtype_unref(dt);
        accepted++;
    }
    print_message("%zu type strings accepted, %zu refused, as NumPy\n",
                  accepted, refused);
    assert_true(accepted > 500 && refused > 500);
    tsv_free(&t);
}

/* Names whose meaning depends on C type sizes follow this host's C types;
 * long doubles of every platform (f12, f16, c24, c32) are accepted. */
static void test_host_dependent_names(void **state)
{
    static const struct {
        const char *input;
        npyio_kind kind;
        size_t itemsize;
    } cases[] = {
        {"l", NPYIO_KIND_INT, sizeof(long)},
        {"L", NPYIO_KIND_UINT, sizeof(long)},
        {"long", NPYIO_KIND_INT, sizeof(long)},
        {"int", NPYIO_KIND_INT, sizeof(long)},
        {"p", NPYIO_KIND_INT, sizeof(void *)},
        {"intp", NPYIO_KIND_INT, sizeof(void *)},
        {"g", NPYIO_KIND_FLOAT, sizeof(long double)},
        {"longdouble", NPYIO_KIND_FLOAT, sizeof(long double)},
        {"G", NPYIO_KIND_COMPLEX, 2 * sizeof(long double)},
        {"<f12", NPYIO_KIND_FLOAT, 12},
        {">f16", NPYIO_KIND_FLOAT, 16},
        {"<c24", NPYIO_KIND_COMPLEX, 24},
        {"<c32", NPYIO_KIND_COMPLEX, 32},
        {"O", NPYIO_KIND_OBJECT, sizeof(void *)},
        {"O8", NPYIO_KIND_OBJECT, sizeof(void *)},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        npyio_dtype *dt = NULL;

        assert_ok(npyio_dtype_parse(cases[i].input,
                                         strlen(cases[i].input), NULL, &dt));
        assert_int_equal(npyio_dtype_kind(dt), cases[i].kind);
        assert_int_equal(npyio_dtype_itemsize(dt), cases[i].itemsize);
        npyio_dtype_unref(dt);
    }
}

/* Decode the hex column of comma_strings.tsv into buf; returns the
 * length. */
static size_t from_hex(const char *hex, char *buf, size_t cap)
{
    size_t n = 0;

    for (; hex[0] != '\0' && hex[1] != '\0' && n < cap; hex += 2) {
        unsigned v;

        if (sscanf(hex, "%2x", &v) != 1)
            fail_msg("bad hex %s", hex);
        buf[n++] = (char)v;
    }
    return n;
}

/* Columns of comma_strings.tsv: NumPy's four answers on a little-endian
 * host, then on a big-endian one (see gen_headers.py). */
enum { C_HEX, C_LITTLE, C_BIG = 5, C_HOST_SIZES = 9, C_SHOWN, C_COLUMNS };
enum { A_ACCEPTED, A_DESCR, A_ITEMSIZE, A_INCONSISTENT };

/*
 * Comma-separated type strings and leading shapes, as np.dtype() parses
 * them: "i4,f8" is a record of fields f0 and f1, "(2,3)f4" a subarray, "3S"
 * is S3, "i4," is i4. Every string of headers/comma_strings.tsv (probed
 * with np.dtype by gen_headers.py) is accepted where NumPy accepts it, with
 * NumPy's descr and itemsize, and refused where NumPy refuses it, or where
 * NumPy builds a dtype that contradicts itself (sizes wrapped negative).
 *
 * NumPy reads the byte orders of a comma string relative to the host's
 * (_nbo in _commastring): "i4,<" is a record of one field on a
 * little-endian host and refused on a big-endian one ("i4,>" the other
 * way round), "=(2,)>i2" is refused on a little-endian host only, and
 * items without an order are the host's. The table gives NumPy's answers
 * for both byte orders (the big-endian ones derived by gen_headers.py from
 * NumPy's _commastring with _nbo set to '>'): this host's are checked.
 */
static void test_comma_strings_match_numpy(void **state)
{
    /* The C type sizes of x86-64 Linux, where NumPy answered. */
    const bool numpy_sizes = sizeof(long) == 8 && sizeof(void *) == 8 &&
                             sizeof(long double) == 16;
    tsv_table t;
    size_t i, accepted = 0, refused = 0, records = 0, subarrays = 0;

    (void)state;
    tsv_load("headers/comma_strings.tsv", &t);
    assert_true(t.count > 1000);
    for (i = 0; i < t.count; i++) {
        const tsv_row *r = &t.rows[i];
        char *const *a = &r->field[host_order() == '<' ? C_LITTLE : C_BIG];
        bool numpy_accepts = strcmp(a[A_ACCEPTED], "1") == 0;
        bool inconsistent = strcmp(a[A_INCONSISTENT], "1") == 0;
        bool host_sizes = strcmp(r->field[C_HOST_SIZES], "1") == 0;
        const char *shown = r->field[C_SHOWN];
        char input[512], text[4096];
        size_t len = from_hex(r->field[C_HEX], input, sizeof input);
        npyio_dtype *dt = NULL;
        npyio_status st;

        assert_int_equal(r->count, C_COLUMNS);
        /* Answers that depend on the sizes of long, pointers and long
         * double hold where they are x86-64's. */
        if (host_sizes && !numpy_sizes)
            continue;
        st = npyio_dtype_parse(input, len, NULL, &dt);
        /* Long doubles of other platforms (f12, c24) are accepted on
         * purpose, as in test_host_dependent_names. */
        if (!numpy_accepts && host_sizes) {
            npyio_dtype_unref(dt);
            continue;
        }
        if (!numpy_accepts || inconsistent) {
            if (st == NPYIO_OK)
                fail_msg("%s parsed, NumPy %s", shown,
                         inconsistent ? "makes an inconsistent dtype"
                                      : "refuses it");
            assert_true(st == NPYIO_E_FORMAT || st == NPYIO_E_OVERFLOW ||
                        st == NPYIO_E_LIMIT);
            assert_null(dt);
            refused++;
            continue;
        }
        if (st != NPYIO_OK)
            fail_msg("%s refused (%s), NumPy gives %s", shown,
                     npyio_last_error(), a[A_DESCR]);
        assert_ok(npyio_dtype_descr(dt, text, sizeof text, NULL));
        if (strcmp(text, a[A_DESCR]) != 0)
            fail_msg("%s gives %s, NumPy %s", shown, text, a[A_DESCR]);
        assert_int_equal(npyio_dtype_itemsize(dt), atoll(a[A_ITEMSIZE]));
        records += npyio_dtype_kind(dt) == NPYIO_KIND_RECORD;
        subarrays += npyio_dtype_kind(dt) == NPYIO_KIND_SUBARRAY;
        npyio_dtype_unref(dt);
        accepted++;
    }
    print_message("%zu comma strings accepted (%zu records, %zu "
                  "subarrays), %zu refused, as NumPy on a %s-endian host\n",
                  accepted, records, subarrays, refused,
                  host_order() == '<' ? "little" : "big");
    assert_true(records > 100 && subarrays > 100 && refused > 500);
    tsv_free(&t);
}

/* Messages name the item and the rule. */
static void test_comma_string_messages(void **state)
{
    npyio_dtype *dt = NULL;

    (void)state;
    assert_status(npyio_dtype_parse("i4,x8", 5, NULL, &dt),
                  NPYIO_E_FORMAT);
    assert_error_contains("type string \"i4,x8\", format number 2: type "
                          "string \"x8\": unknown type or size");
    /* '=' is the host's order (NumPy's _convorder): beside the other
     * order it is two orders, beside the host's one. */
    assert_status(npyio_dtype_parse(host_order() == '<' ? "i4,=(2,)>i2"
                                                             : "i4,=(2,)<i2",
                                         11, NULL, &dt),
                  NPYIO_E_FORMAT);
    assert_error_contains("two different byte orders");
    assert_status(npyio_dtype_parse("i4,<(2,)>i2", 11, NULL, &dt),
                  NPYIO_E_FORMAT);
    assert_error_contains("two different byte orders");
    assert_ok(npyio_dtype_parse(host_order() == '<' ? "i4,=(2,)<i2"
                                                         : "i4,=(2,)>i2",
                                     11, NULL, &dt));
    assert_int_equal(npyio_dtype_kind(dt), NPYIO_KIND_RECORD);
    assert_true(npyio_dtype_is_native(npyio_dtype_field_dtype(dt, 1)));
    npyio_dtype_unref(dt);
    dt = NULL;
    assert_status(npyio_dtype_parse("i4,(2,)S", 8, NULL, &dt),
                  NPYIO_E_FORMAT);
    assert_error_contains("format number 2: the shape gives the size of a "
                          "type without one (S, U, V)");
    assert_status(npyio_dtype_parse("i4;f8", 5, NULL, &dt),
                  NPYIO_E_FORMAT);
    assert_status(npyio_dtype_parse("02f8", 4, NULL, &dt),
                  NPYIO_E_FORMAT);
    assert_error_contains("not an int or a tuple of ints");
    assert_status(npyio_dtype_parse("i4,(2147483648,)u1", 18, NULL,
                                         &dt),
                  NPYIO_E_OVERFLOW);
    assert_error_contains("above NumPy's limit of 2147483647");
    assert_null(dt);
    /* A literal: quotes make it a string, as in a header. */
    assert_ok(npyio_dtype_parse("'(2,)<f8'", 9, NULL, &dt));
    assert_int_equal(npyio_dtype_kind(dt), NPYIO_KIND_SUBARRAY);
    npyio_dtype_unref(dt);
    assert_ok(npyio_dtype_parse("('(2,)<f8', (3,))", 17, NULL, &dt));
    assert_int_equal(npyio_dtype_kind(dt), NPYIO_KIND_SUBARRAY);
    assert_int_equal(npyio_dtype_itemsize(dt), 48);
    npyio_dtype_unref(dt);
}

static void test_descr_literals(void **state)
{
    /* `str` as on a little-endian host; `native` marks a literal without
     * a byte order, whose '<' is the host's order. */
    static const struct {
        const char *literal;
        const char *str;
        bool native;
    } cases[] = {
        {"'<f8'", "<f8", false},     {"\"<u1\"", "|u1", false},
        {"'\\x3cf8'", "<f8", false}, {"u'>i2'", ">i2", false},
        {"('<i4')", "<i4", false},   {"'M8[25s]'", "<M8[25s]", true},
    };
    char str[64];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        npyio_dtype *dt = NULL;
        char want[64];

        assert_ok(npyio_dtype_parse(cases[i].literal,
                                         strlen(cases[i].literal), NULL, &dt));
        expected_str(cases[i].native ? "" : "<", cases[i].str, want);
        assert_ok(npyio_dtype_str(dt, str, sizeof str, NULL));
        assert_string_equal(str, want);
        npyio_dtype_unref(dt);
    }
}

static void test_bad_descrs(void **state)
{
    npyio_dtype *dt = NULL;

    (void)state;
    assert_status(npyio_dtype_parse("'<x8'", 5, NULL, &dt),
                  NPYIO_E_FORMAT);
    assert_error_contains("unknown type or size");
    assert_status(npyio_dtype_parse("<x8", 3, NULL, &dt), NPYIO_E_FORMAT);
    assert_error_contains("type string \"<x8\"");
    assert_status(npyio_dtype_parse("'<f8", 4, NULL, &dt),
                  NPYIO_E_FORMAT);
    assert_error_contains("unterminated string");
    assert_status(npyio_dtype_parse("8", 1, NULL, &dt), NPYIO_E_FORMAT);
    assert_status(npyio_dtype_parse("", 0, NULL, &dt), NPYIO_E_FORMAT);
    assert_status(npyio_dtype_parse(NULL, 0, NULL, &dt),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_dtype_parse("<f8", 3, NULL, NULL),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_dtype_parse("S99999999999", 12, NULL, &dt),
                  NPYIO_E_OVERFLOW);
    assert_error_contains("above NumPy's limit");
    /* The text is read up to len only: "<f8" within a longer buffer. */
    assert_ok(npyio_dtype_parse("<f8junk", 3, NULL, &dt));
    assert_int_equal(npyio_dtype_itemsize(dt), 8);
    npyio_dtype_unref(dt);
}

static void test_scalar_constructor(void **state)
{
    npyio_dtype *dt = NULL, *parsed = NULL;
    char str[16];

    (void)state;
    assert_ok(npyio_dtype_new_scalar(NPYIO_KIND_FLOAT, 8, '>', &dt));
    assert_ok(npyio_dtype_parse(">f8", 3, NULL, &parsed));
    assert_true(npyio_dtype_is_equal(dt, parsed));
    npyio_dtype_unref(dt);
    npyio_dtype_unref(parsed);
    assert_ok(npyio_dtype_new_scalar(NPYIO_KIND_STR, 12, '<', &dt));
    assert_ok(npyio_dtype_str(dt, str, sizeof str, NULL));
    assert_string_equal(str, "<U3");
    npyio_dtype_unref(dt);
    assert_ok(npyio_dtype_new_scalar(NPYIO_KIND_UINT, 1, '>', &dt));
    assert_int_equal(npyio_dtype_byteorder(dt), '|');
    npyio_dtype_unref(dt);
    assert_ok(npyio_dtype_new_scalar(NPYIO_KIND_OBJECT, 0, '|', &dt));
    assert_int_equal(npyio_dtype_itemsize(dt), sizeof(void *));
    npyio_dtype_unref(dt);
    assert_status(npyio_dtype_new_scalar(NPYIO_KIND_INT, 3, '<', &dt),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("kind 'i' has no itemsize 3");
    assert_null(dt);
    assert_status(npyio_dtype_new_scalar(NPYIO_KIND_STR, 6, '<', &dt),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_dtype_new_scalar(NPYIO_KIND_FLOAT, 8, 'x', &dt),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_dtype_new_scalar(NPYIO_KIND_DATETIME, 8, '<', &dt),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_dtype_new_scalar('z', 8, '<', &dt), NPYIO_E_INVALID_ARG);
    assert_status(npyio_dtype_new_scalar(NPYIO_KIND_INT, 4, '<', NULL),
                  NPYIO_E_INVALID_ARG);
}

static void test_datetime_constructor(void **state)
{
    npyio_dtype *dt = NULL;
    char str[32];

    (void)state;
    assert_ok(npyio_dtype_new_datetime(NPYIO_KIND_TIMEDELTA, "s", 25, '<', &dt));
    assert_ok(npyio_dtype_str(dt, str, sizeof str, NULL));
    assert_string_equal(str, "<m8[25s]");
    assert_string_equal(npyio_dtype_datetime_unit(dt), "s");
    assert_int_equal(npyio_dtype_datetime_multiplier(dt), 25);
    npyio_dtype_unref(dt);
    assert_ok(npyio_dtype_new_datetime(NPYIO_KIND_DATETIME, NULL, 1, '>', &dt));
    assert_ok(npyio_dtype_str(dt, str, sizeof str, NULL));
    assert_string_equal(str, ">M8");
    assert_string_equal(npyio_dtype_datetime_unit(dt), "generic");
    npyio_dtype_unref(dt);
    assert_status(npyio_dtype_new_datetime(NPYIO_KIND_DATETIME, "sec", 1, '<', &dt),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("unknown unit \"sec\"");
    assert_status(npyio_dtype_new_datetime(NPYIO_KIND_DATETIME, "s", 0, '<', &dt),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_dtype_new_datetime(NPYIO_KIND_DATETIME, "", 2, '<', &dt),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_dtype_new_datetime(NPYIO_KIND_DATETIME, "s",
                                       INT64_C(1) << 31, '<', &dt),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_dtype_new_datetime(NPYIO_KIND_INT, "s", 1, '<', &dt),
                  NPYIO_E_INVALID_ARG);
}

static void test_equality_and_native(void **state)
{
    npyio_dtype *le = NULL, *be = NULL, *eq = NULL, *native = NULL;
    npyio_dtype *dt1 = NULL, *dt2 = NULL;

    (void)state;
    assert_ok(npyio_dtype_parse("<f8", 3, NULL, &le));
    assert_ok(npyio_dtype_parse(">f8", 3, NULL, &be));
    assert_ok(npyio_dtype_parse("=f8", 3, NULL, &eq));
    assert_false(npyio_dtype_is_equal(le, be));
    assert_true(npyio_dtype_is_equal(eq, host_order() == '<' ? le : be));
    assert_true(npyio_dtype_is_native(host_order() == '<' ? le : be));
    assert_false(npyio_dtype_is_native(host_order() == '<' ? be : le));
    assert_ok(npyio_dtype_new_native(be, &native));
    assert_true(npyio_dtype_is_equal(native, eq));
    assert_true(npyio_dtype_is_native(native));
    npyio_dtype_unref(native);
    /* Datetimes keep unit and multiplier through native(). */
    assert_ok(npyio_dtype_parse(">m8[25s]", 8, NULL, &dt1));
    assert_ok(npyio_dtype_new_native(dt1, &native));
    assert_int_equal(npyio_dtype_datetime_multiplier(native), 25);
    assert_true(npyio_dtype_is_native(native));
    assert_ok(npyio_dtype_parse("=m8[25s]", 8, NULL, &dt2));
    assert_true(npyio_dtype_is_equal(native, dt2));
    npyio_dtype_unref(dt2);
    assert_ok(npyio_dtype_parse("=m8[24s]", 8, NULL, &dt2));
    assert_false(npyio_dtype_is_equal(native, dt2));
    npyio_dtype_unref(dt2);
    npyio_dtype_unref(native);
    npyio_dtype_unref(dt1);
    assert_true(npyio_dtype_is_equal(NULL, NULL));
    assert_false(npyio_dtype_is_equal(le, NULL));
    assert_status(npyio_dtype_new_native(NULL, &native), NPYIO_E_INVALID_ARG);
    npyio_dtype_unref(le);
    npyio_dtype_unref(be);
    npyio_dtype_unref(eq);
}

/* with_byteorder's arguments, and is_native of records (their own order is
 * '|', so they are native only when every field is). The conversions
 * themselves are checked against NumPy's bytes in test_arrays. */
static void test_with_byteorder(void **state)
{
    static const char rec[] = "[('a', '>i4'), ('b', '|u1'), ('c', '<f8')]";
    static const char rec_le[] = "[('a', '<i4'), ('b', '|u1'), ('c', '<f8')]";
    npyio_dtype *dt = NULL, *out = NULL, *want = NULL;
    unsigned char data[16] = {1, 2, 3, 4};

    (void)state;
    assert_ok(npyio_dtype_parse(rec, strlen(rec), NULL, &dt));
    assert_false(npyio_dtype_is_native(dt));
    assert_status(npyio_dtype_new_byteorder(dt, '|', &out),
                  NPYIO_E_INVALID_ARG);
    assert_null(out);
    assert_error_contains("byte order must be");
    assert_status(npyio_dtype_new_byteorder(dt, 'x', &out),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_dtype_new_byteorder(NULL, '<', &out),
                  NPYIO_E_INVALID_ARG);
    assert_ok(npyio_dtype_new_byteorder(dt, '<', &out));
    assert_ok(npyio_dtype_parse(rec_le, strlen(rec_le), NULL, &want));
    assert_true(npyio_dtype_is_equal(out, want));
    assert_int_equal(npyio_dtype_is_native(out), host_order() == '<');
    npyio_dtype_unref(want);
    npyio_dtype_unref(out);
    /* Nothing to change: the same object back. */
    assert_ok(npyio_dtype_parse("|u1", 3, NULL, &want));
    assert_ok(npyio_dtype_new_byteorder(want, '>', &out));
    assert_ptr_equal(out, want);
    npyio_dtype_unref(out);
    npyio_dtype_unref(want);
    /* The record is 13 bytes: 16 is not a whole number of elements. */
    assert_status(npyio_dtype_swap(dt, data, sizeof data), NPYIO_E_INVALID_ARG);
    assert_error_contains("16 bytes are not a whole number of 13-byte");
    assert_status(npyio_dtype_swap(dt, NULL, 13), NPYIO_E_INVALID_ARG);
    assert_ok(npyio_dtype_swap(dt, NULL, 0));
    assert_ok(npyio_dtype_swap(dt, data, 13));
    assert_int_equal(data[0], host_order() == '<' ? 4 : 1);
    npyio_dtype_unref(dt);
    assert_ok(npyio_dtype_parse("|O", 2, NULL, &dt));
    assert_status(npyio_dtype_swap(dt, data, 8), NPYIO_E_UNSUPPORTED);
    npyio_dtype_unref(dt);
}

static void test_text_buffers(void **state)
{
    npyio_dtype *dt = NULL;
    char buf[16];
    size_t len = 0;

    (void)state;
    assert_ok(npyio_dtype_parse("M8[ns]", 6, NULL, &dt));
    assert_status(npyio_dtype_str(dt, NULL, 0, &len),
                  NPYIO_E_BUFFER_TOO_SMALL);
    assert_int_equal(len, 7);
    assert_status(npyio_dtype_str(dt, buf, 7, &len),
                  NPYIO_E_BUFFER_TOO_SMALL);
    assert_string_equal(buf, ""); /* never left unterminated */
    assert_ok(npyio_dtype_str(dt, buf, 8, &len));
    assert_int_equal(len, 7);
    assert_ok(npyio_dtype_descr(dt, buf, sizeof buf, &len));
    assert_int_equal(len, 9);
    assert_string_equal(buf, host_order() == '<' ? "'<M8[ns]'" : "'>M8[ns]'");
    assert_status(npyio_dtype_descr(dt, NULL, 4, &len), NPYIO_E_INVALID_ARG);
    npyio_dtype_unref(dt);
    assert_status(npyio_dtype_str(NULL, buf, sizeof buf, &len),
                  NPYIO_E_INVALID_ARG);
}

/* Reference counting: each reference is released once; the last release
 * frees (ASan reports a leak or a double free otherwise). Built-in dtypes
 * are shared and never freed. */
static void test_references(void **state)
{
    npyio_dtype *dt = NULL, *again = NULL, *a = NULL, *b = NULL;

    (void)state;
    assert_ok(npyio_dtype_parse("S7", 2, NULL, &dt));
    again = npyio_dtype_ref(dt);
    assert_ptr_equal(again, dt);
    npyio_dtype_unref(dt);
    assert_int_equal(npyio_dtype_itemsize(again), 7); /* still alive */
    npyio_dtype_unref(again);
    assert_ok(npyio_dtype_parse("=i4", 3, NULL, &a));
    assert_ok(npyio_dtype_parse("int32", 5, NULL, &b));
    assert_ptr_equal(a, b); /* the same built-in (both native) */
    npyio_dtype_unref(a);
    npyio_dtype_unref(b);
    npyio_dtype_unref(NULL);
    assert_null(npyio_dtype_ref(NULL));
    assert_int_equal(npyio_dtype_kind(NULL), 0);
    assert_int_equal(npyio_dtype_itemsize(NULL), 0);
    assert_int_equal(npyio_dtype_byteorder(NULL), 0);
    assert_null(npyio_dtype_datetime_unit(NULL));
}

/* A literal must be UTF-8 without NUL bytes: a raw latin-1 byte in a name
 * was once kept as it was and written back as another name (fuzz_descr). */
static void test_literal_text_is_utf8(void **state)
{
    static const char latin1[] = "[('a', '<i4'), ('\240', '<f4')]";
    static const char nul[] = "[('a\0', '<i4')]";
    static const char utf8[] = "[('a', '<i4'), ('\302\240', '<f4')]";
    npyio_dtype *dt = NULL;
    char text[128];
    size_t len = 0;

    (void)state;
    assert_status(npyio_dtype_parse(latin1, sizeof latin1 - 1, NULL,
                                         &dt), NPYIO_E_FORMAT);
    assert_error_contains("byte 17 of the descr (0xa0) is not valid UTF-8");
    assert_null(dt);
    assert_status(npyio_dtype_parse(nul, sizeof nul - 1, NULL, &dt),
                  NPYIO_E_FORMAT);
    assert_error_contains("byte 4 of the descr (0x00) is a NUL byte");
    /* U+00A0 spelled in UTF-8: NumPy's repr escapes it ('\xa0'). */
    assert_ok(npyio_dtype_parse(utf8, sizeof utf8 - 1, NULL, &dt));
    assert_ok(npyio_dtype_descr(dt, text, sizeof text, &len));
    assert_int_equal(len, strlen("[('a', '<i4'), ('\\xa0', '<f4')]"));
    assert_memory_equal(text, "[('a', '<i4'), ('\\xa0', '<f4')]", len);
    npyio_dtype_unref(dt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numpy_type_strings),
        cmocka_unit_test(test_host_dependent_names),
        cmocka_unit_test(test_comma_strings_match_numpy),
        cmocka_unit_test(test_comma_string_messages),
        cmocka_unit_test(test_descr_literals),
        cmocka_unit_test(test_bad_descrs),
        cmocka_unit_test(test_scalar_constructor),
        cmocka_unit_test(test_datetime_constructor),
        cmocka_unit_test(test_equality_and_native),
        cmocka_unit_test(test_with_byteorder),
        cmocka_unit_test(test_text_buffers),
        cmocka_unit_test(test_references),
        cmocka_unit_test(test_literal_text_is_utf8),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
