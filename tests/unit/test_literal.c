/*
 * test_literal.c - the header literal parser on its own: the tree it
 * builds, string decoding, integer bounds, the Python 2 'L' suffix, depth
 * limits without recursion, refused Python forms, reading only the given
 * length, and Python's repr() of strings (tests/data/headers/repr.tsv,
 * written by CPython in gen_invalid.py).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "testdata.h"
#include "literal.h"

static npyio__mem mem;

static npyio__lit_config config(int encoding, bool long_suffix, int depth)
{
    npyio__lit_config c;

    c.encoding = encoding;
    c.allow_long_suffix = long_suffix;
    c.max_depth = depth;
    c.base_offset = 10;
    return c;
}

/* Parse a copy of `text` in a buffer of exactly its length (no NUL), so
 * ASan catches any read past the end. */
static npyio_status parse(npyio__lit_doc *doc, const char *text,
                          const npyio__lit_config *c, char **copy)
{
    size_t n = strlen(text);

    *copy = malloc(n > 0 ? n : 1);
    memcpy(*copy, text, n);
    return npyio__lit_parse(doc, *copy, n, c, &mem);
}

static void test_tree_of_a_header(void **state)
{
    npyio__lit_config c = config(NPYIO__LIT_LATIN1, true, 32);
    npyio__lit_doc doc;
    const npyio__lit_node *root, *key, *value, *dim;
    char *copy;

    (void)state;
    npyio__mem_init(&mem, NULL);
    assert_ok(parse(&doc,
                    " {'descr': '<f8', \"fortran_order\": True,\n"
                    "  'shape': ( 3 , 4L , ), 'n': None, 'l': [1, [2], ()],}\n",
                    &c, &copy));
    root = npyio__lit_resolve(&doc, doc.nodes);
    assert_int_equal(root->kind, NPYIO__LIT_DICT);
    assert_int_equal(root->count, 10);
    key = npyio__lit_child(&doc, root);
    assert_true(npyio__lit_str_equals(&doc, key, "descr", 5));
    value = npyio__lit_next(&doc, key);
    assert_true(npyio__lit_str_equals(&doc, value, "<f8", 3));
    assert_int_equal(npyio__lit_offset(&doc, value), 10 + 12);
    key = npyio__lit_next(&doc, value);
    assert_true(npyio__lit_str_equals(&doc, key, "fortran_order", 13));
    value = npyio__lit_next(&doc, key);
    assert_int_equal(value->kind, NPYIO__LIT_TRUE);
    value = npyio__lit_next(&doc, npyio__lit_next(&doc, value));
    assert_int_equal(value->kind, NPYIO__LIT_TUPLE);
    assert_int_equal(value->count, 2);
    dim = npyio__lit_child(&doc, value);
    assert_int_equal(dim->value, 3);
    dim = npyio__lit_next(&doc, dim);
    assert_int_equal(dim->value, 4);
    assert_null(npyio__lit_next(&doc, dim));
    value = npyio__lit_next(&doc, npyio__lit_next(&doc, value));
    assert_int_equal(value->kind, NPYIO__LIT_NONE);
    value = npyio__lit_next(&doc, npyio__lit_next(&doc, value));
    assert_int_equal(value->kind, NPYIO__LIT_LIST);
    assert_int_equal(value->count, 3);
    assert_null(npyio__lit_next(&doc, value));
    npyio__lit_free(&doc);
    free(copy);
}

/* '(' x ')' is x; '(' x ',' ')' is a tuple; '()' is the empty tuple. */
static void test_parentheses(void **state)
{
    npyio__lit_config c = config(NPYIO__LIT_UTF8, false, 32);
    npyio__lit_doc doc;
    const npyio__lit_node *root, *item;
    char *copy;

    (void)state;
    npyio__mem_init(&mem, NULL);
    assert_ok(parse(&doc, "[((2)), (2,), (), ((1, 2)), 7]", &c, &copy));
    root = npyio__lit_resolve(&doc, doc.nodes);
    item = npyio__lit_child(&doc, root);
    assert_int_equal(item->kind, NPYIO__LIT_INT);
    assert_int_equal(item->value, 2);
    item = npyio__lit_next(&doc, item);
    assert_int_equal(item->kind, NPYIO__LIT_TUPLE);
    assert_int_equal(item->count, 1);
    item = npyio__lit_next(&doc, item);
    assert_int_equal(item->kind, NPYIO__LIT_TUPLE);
    assert_int_equal(item->count, 0);
    item = npyio__lit_next(&doc, item);
    assert_int_equal(item->kind, NPYIO__LIT_TUPLE);
    assert_int_equal(item->count, 2);
    item = npyio__lit_next(&doc, item);
    assert_int_equal(item->value, 7);
    assert_null(npyio__lit_next(&doc, item));
    npyio__lit_free(&doc);
    free(copy);
}

static void test_integers(void **state)
{
    static const struct {
        const char *text;
        int64_t value;
    } good[] = {
        {"0", 0}, {"00", 0}, {"-0", 0}, {"+2", 2}, {"- 7", -7},
        {"9223372036854775807", INT64_MAX},
        {"-9223372036854775808", INT64_MIN},
        {"12L", 12}, {"12 L", 12},
    };
    static const struct {
        const char *text;
        npyio_status status;
        const char *needle;
    } bad[] = {
        {"9223372036854775808", NPYIO_E_OVERFLOW, "does not fit in 64 bits"},
        {"-9223372036854775809", NPYIO_E_OVERFLOW, "does not fit"},
        {"012", NPYIO_E_FORMAT, "leading zeros"},
        {"0x10", NPYIO_E_FORMAT, "hexadecimal"},
        {"1_000", NPYIO_E_FORMAT, "'_' separators"},
        {"1.5", NPYIO_E_FORMAT, "floating-point"},
        {"1e3", NPYIO_E_FORMAT, "floating-point"},
        {"2j", NPYIO_E_FORMAT, "complex"},
        {"2l", NPYIO_E_FORMAT, "lowercase 'l'"},
        {"2Lx", NPYIO_E_FORMAT, "unexpected"},
        {"--2", NPYIO_E_FORMAT, "digits after a sign"},
        {"-", NPYIO_E_FORMAT, "digits after a sign"},
    };
    npyio__lit_config c = config(NPYIO__LIT_LATIN1, true, 32);
    npyio__lit_doc doc;
    char *copy;
    size_t i;

    (void)state;
    npyio__mem_init(&mem, NULL);
    for (i = 0; i < sizeof good / sizeof good[0]; i++) {
        assert_ok(parse(&doc, good[i].text, &c, &copy));
        assert_int_equal(doc.nodes[0].kind, NPYIO__LIT_INT);
        assert_int_equal(doc.nodes[0].value, good[i].value);
        npyio__lit_free(&doc);
        free(copy);
    }
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        print_message("%s\n", bad[i].text);
        assert_status(parse(&doc, bad[i].text, &c, &copy), bad[i].status);
        assert_error_contains(bad[i].needle);
        npyio__lit_free(&doc);
        free(copy);
    }
    /* The Python 2 suffix belongs to 1.0 and 2.0 headers only. */
    c.allow_long_suffix = false;
    assert_status(parse(&doc, "(3L,)", &c, &copy), NPYIO_E_FORMAT);
    assert_error_contains("header byte 12: the Python 2 long suffix 'L'");
    npyio__lit_free(&doc);
    free(copy);
}

static void test_string_decoding(void **state)
{
    static const struct {
        const char *text;
        int encoding;
        const char *decoded;
        size_t len;
    } cases[] = {
        {"'plain'", NPYIO__LIT_LATIN1, "plain", 5},
        {"\"it's\"", NPYIO__LIT_LATIN1, "it's", 4},
        {"'\\x3cf8'", NPYIO__LIT_LATIN1, "<f8", 3},
        {"'a\\'b\\\\c\\\"'", NPYIO__LIT_LATIN1, "a'b\\c\"", 6},
        {"'\\n\\t\\r\\a\\b\\f\\v'", NPYIO__LIT_LATIN1, "\n\t\r\a\b\f\v", 7},
        {"'\\101\\7'", NPYIO__LIT_LATIN1, "A\a", 2},
        {"'\\u0109\\U0001F600'", NPYIO__LIT_LATIN1,
         "\xc4\x89\xf0\x9f\x98\x80", 6},
        {"'\\q'", NPYIO__LIT_LATIN1, "\\q", 2},
        {"'a\\\nb'", NPYIO__LIT_LATIN1, "ab", 2},
        {"'\\x00'", NPYIO__LIT_LATIN1, "\0", 1},
        /* latin-1 byte E9 is U+00E9, two bytes of UTF-8 */
        {"'caf\xe9'", NPYIO__LIT_LATIN1, "caf\xc3\xa9", 5},
        {"'caf\xc3\xa9'", NPYIO__LIT_UTF8, "caf\xc3\xa9", 5},
        {"'\xff\\xff'", NPYIO__LIT_LATIN1, "\xc3\xbf\xc3\xbf", 4},
        {"u'x'", NPYIO__LIT_LATIN1, "x", 1},
    };
    npyio__lit_doc doc;
    char *copy;
    size_t i;

    (void)state;
    npyio__mem_init(&mem, NULL);
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        npyio__lit_config c = config(cases[i].encoding, true, 32);
        char *out;
        size_t n;

        print_message("%s\n", cases[i].text);
        assert_ok(parse(&doc, cases[i].text, &c, &copy));
        assert_int_equal(doc.nodes[0].kind, NPYIO__LIT_STR);
        out = malloc(npyio__lit_str_room(&doc.nodes[0]));
        n = npyio__lit_str_decode(&doc, &doc.nodes[0], out);
        assert_int_equal(n, cases[i].len);
        assert_memory_equal(out, cases[i].decoded, n);
        assert_true(npyio__lit_str_equals(&doc, &doc.nodes[0],
                                          cases[i].decoded, cases[i].len));
        free(out);
        npyio__lit_free(&doc);
        free(copy);
    }
}

static void test_refused_forms(void **state)
{
    static const struct {
        const char *text;
        const char *needle;
    } cases[] = {
        {"'''x'''", "triple-quoted"},
        {"r'x'", "raw"},
        {"'a' 'b'", "implicit string concatenation"},
        {"['a' 'b']", "implicit string concatenation"},
        {"{1, 2}", "sets are not supported"},
        {"{1}", "sets are not supported"},
        {"1, 2", "top-level tuple"},
        {"[1] # c", "comments"},
        {"[1, # c\n 2]", "comments"},
        {"[1,\\\n 2]", "line continuation"},
        {"'\\N{DIGIT ONE}'", "\\N{...} escapes"},
        {"'\\x4'", "truncated \\x"},
        {"'\\ud800'", "surrogate"},
        {"'\\U00110000'", "beyond U+10FFFF"},
        {"'abc", "unterminated string"},
        {"'ab\\", "backslash at the end"},
        {"[1,,2]", "unexpected ','"},
        {"[,]", "unexpected ','"},
        {"(,)", "unexpected ','"},
        {"{'a' 1}", "expected"},
        {"{'a': }", "unexpected '}'"},
        {"{:1}", "unexpected ':'"},
        {"[1 2]", "',' or ']'"},
        {"[1)", "',' or ']'"},
        {"true", "bare name 'true'"},
        {"\xc3\xa9", "unexpected '\\xc3'"},
        {"", "ends where a value was expected"},
        {"   ", "ends where a value was expected"},
        {"[", "ends where a value or a closing bracket"},
        {"{'a': 1", "ends where"},
    };
    npyio__lit_config c = config(NPYIO__LIT_UTF8, false, 32);
    npyio__lit_doc doc;
    char *copy;
    size_t i;

    (void)state;
    npyio__mem_init(&mem, NULL);
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        print_message("%s\n", cases[i].text);
        assert_status(parse(&doc, cases[i].text, &c, &copy), NPYIO_E_FORMAT);
        assert_error_contains(cases[i].needle);
        assert_error_contains("header byte ");
        npyio__lit_free(&doc);
        free(copy);
    }
}

/* Nesting: within the limit any depth parses (on an explicit stack, no
 * recursion), beyond it NPYIO_E_LIMIT; the node array grows past its
 * inline size. */
static void test_depth_and_size(void **state)
{
    enum { DEEP = 5000 };
    char *text = malloc(2 * DEEP + 1);
    npyio__lit_config c = config(NPYIO__LIT_UTF8, false, DEEP);
    npyio__lit_doc doc;
    char *copy;
    size_t i;

    (void)state;
    npyio__mem_init(&mem, NULL);
    for (i = 0; i < DEEP; i++) {
        text[i] = '[';
        text[2 * DEEP - 1 - i] = ']';
    }
    text[2 * DEEP] = '\0';
    assert_ok(parse(&doc, text, &c, &copy));
    assert_int_equal(doc.count, DEEP);
    npyio__lit_free(&doc);
    free(copy);
    c.max_depth = DEEP - 1;
    assert_status(parse(&doc, text, &c, &copy), NPYIO_E_LIMIT);
    assert_error_contains("nested deeper than 4999 (NPYIO_LIMIT_DEPTH)");
    npyio__lit_free(&doc);
    free(copy);
    free(text);

    /* A long flat list: many nodes, one level. */
    text = malloc(4 * 10000 + 3);
    strcpy(text, "[");
    for (i = 0; i < 10000; i++)
        strcat(text + i * 2, "1,");
    strcat(text, "]");
    assert_ok(parse(&doc, text, &c, &copy));
    assert_int_equal(doc.count, 10001);
    assert_int_equal(doc.nodes[0].count, 10000);
    npyio__lit_free(&doc);
    free(copy);
    free(text);
}

/* A failing allocation while the node array grows is reported, and the
 * document can still be freed. */
static void *fail_alloc(void *user, size_t size, size_t alignment)
{
    (void)user;
    (void)size;
    (void)alignment;
    return NULL;
}

static void fail_free(void *user, void *ptr, size_t size)
{
    (void)user;
    (void)ptr;
    (void)size;
}

static void test_allocation_failure(void **state)
{
    static const npyio_allocator failing = {sizeof(npyio_allocator),
                                            fail_alloc, NULL, fail_free};
    npyio__lit_config c = config(NPYIO__LIT_UTF8, false, 32);
    npyio_options *o = NULL;
    npyio__lit_doc doc;
    char text[400];
    char *copy;
    int i;

    (void)state;
    assert_ok(npyio_options_new(&o));
    assert_ok(npyio_options_set_allocator(o, &failing, NULL));
    npyio__mem_init(&mem, o);
    npyio_options_free(o);
    strcpy(text, "[");
    for (i = 0; i < 100; i++)
        strcat(text, "1,");
    strcat(text, "]");
    assert_status(parse(&doc, text, &c, &copy), NPYIO_E_NOMEM);
    assert_error_contains("header literal nodes");
    npyio__lit_free(&doc);
    free(copy);
}

/* repr() of strings, as CPython writes them (repr.tsv). */
static void test_repr_matches_python(void **state)
{
    tsv_table t;
    size_t i;

    (void)state;
    tsv_load("headers/repr.tsv", &t);
    assert_true(t.count >= 20);
    for (i = 0; i < t.count; i++) {
        const char *hex = t.rows[i].field[0];
        const char *want = t.rows[i].field[1];
        size_t n = strlen(hex) / 2, j, len;
        char in[128], out[256];

        for (j = 0; j < n; j++) {
            unsigned v;

            sscanf(hex + 2 * j, "%2x", &v);
            in[j] = (char)v;
        }
        len = npyio__lit_repr_str(in, n, NULL, 0);
        assert_int_equal(len, strlen(want));
        assert_int_equal(npyio__lit_repr_str(in, n, out, sizeof out), len);
        out[len] = '\0';
        if (strcmp(out, want) != 0)
            fail_msg("repr of %s: got %s, Python %s", hex, out, want);
    }
    tsv_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_of_a_header),
        cmocka_unit_test(test_parentheses),
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_string_decoding),
        cmocka_unit_test(test_refused_forms),
        cmocka_unit_test(test_depth_and_size),
        cmocka_unit_test(test_allocation_failure),
        cmocka_unit_test(test_repr_matches_python),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
