/*
 * test_record.c - record and subarray dtypes against NumPy: every header of
 * the NumPy-generated record corpus (tests/data/records, gen_records.py) is
 * parsed, every field fact compared with NumPy's (fields.tsv), the header
 * re-emitted and compared byte for byte, and the byte-swap plan compared
 * with the units NumPy's dtype says must be reversed (swaps.tsv). Then the
 * builder: the same dtypes built field by field give NumPy's descr.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "testdata.h"
#include "convert.h"

enum {
    M_NAME, M_FILE, M_VERSION, M_HLEN, M_OFFSET, M_DESCR, M_ITEMSIZE,
    M_ALIGN, M_NFIELDS, M_NDIM, M_SHAPE, M_FORTRAN, M_COUNT, M_NBYTES,
    M_OBJECT, M_CANON, M_COLUMNS
};
enum {
    F_CASE, F_DEPTH, F_INDEX, F_NAME, F_TITLE, F_OFFSET, F_SHAPE, F_BASE_STR,
    F_BASE_KIND, F_BASE_ITEMSIZE, F_ITEMSIZE, F_COLUMNS
};

static npyio_options *big_headers;

static int setup(void **state)
{
    (void)state;
    /* The corpus has headers of thousands of fields, beyond NumPy's (and
     * libnpyio's) default limit of 10000 characters. */
    npyio_options_new(&big_headers);
    return npyio_options_set_limit(big_headers, NPYIO_LIMIT_HEADER_SIZE,
                                   INT64_C(1) << 24) == NPYIO_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    npyio_options_free(big_headers);
    return 0;
}

static unsigned char *record_file(const char *name, size_t *len)
{
    char rel[256];

    snprintf(rel, sizeof rel, "records/valid/%s", name);
    return read_data_file(rel, len);
}

static const tsv_row *find_case(const tsv_table *t, const char *name)
{
    size_t i;

    for (i = 0; i < t->count; i++)
        if (strcmp(t->rows[i].field[0], name) == 0)
            return &t->rows[i];
    return NULL;
}

static npyio_header *parse_case(const tsv_row *r)
{
    size_t len;
    unsigned char *bytes = record_file(r->field[M_FILE], &len);
    npyio_header *h = NULL;

    assert_ok(npyio_header_parse(bytes, len, big_headers, &h, NULL));
    free(bytes);
    return h;
}

/* Hex of UTF-8 (the corpus's encoding of names) to text. */
static size_t unhex(const char *hex, char *out)
{
    size_t i, n = strlen(hex) / 2;

    for (i = 0; i < n; i++) {
        unsigned v;

        sscanf(hex + 2 * i, "%2x", &v);
        out[i] = (char)v;
    }
    out[n] = '\0';
    return n;
}

static void expect_str(const npyio_dtype *dt, const char *numpy_str)
{
    char str[64], want[64];

    strcpy(want, numpy_str);
    assert_ok(npyio_dtype_str(dt, str, sizeof str, NULL));
    if (strcmp(str, want) != 0)
        fail_msg("dtype.str %s, NumPy %s", str, want);
}

/* Our kinds for NumPy's: records and subarrays are 'V' there. */
static npyio_kind numpy_kind(const npyio_dtype *dt)
{
    npyio_kind k = npyio_dtype_kind(dt);

    return k == NPYIO_KIND_RECORD || k == NPYIO_KIND_SUBARRAY ? 'V' : k;
}

/* Check the fields of `dt` against the rows that follow `*row` at `depth`,
 * recursing into record-valued fields as fields.tsv lists them. */
static void check_fields(const tsv_table *t, size_t *row, const char *name,
                         const npyio_dtype *dt, int depth)
{
    bool flip = host_order() == '>' && host_order_case(name);
    size_t i;

    for (i = 0; i < npyio_dtype_field_count(dt); i++) {
        const tsv_row *r = &t->rows[*row];
        const npyio_dtype *elem = npyio_dtype_field_dtype(dt, i);
        char text[1024];
        size_t n, len;
        int ndim = npyio_dtype_field_ndim(dt, i);

        assert_true(*row < t->count);
        assert_string_equal(r->field[F_CASE], name);
        assert_int_equal(atoi(r->field[F_DEPTH]), depth);
        assert_int_equal(atoi(r->field[F_INDEX]), i);
        n = unhex(r->field[F_NAME], text);
        assert_non_null(npyio_dtype_field_name(dt, i, &len));
        assert_int_equal(len, n);
        assert_memory_equal(npyio_dtype_field_name(dt, i, NULL), text, n);
        if (strcmp(r->field[F_TITLE], "-") == 0) {
            assert_null(npyio_dtype_field_title(dt, i, &len));
            assert_int_equal(len, 0);
        } else {
            n = unhex(r->field[F_TITLE], text);
            assert_non_null(npyio_dtype_field_title(dt, i, &len));
            assert_int_equal(len, n);
            assert_memory_equal(npyio_dtype_field_title(dt, i, NULL), text,
                                n);
        }
        assert_int_equal(npyio_dtype_field_offset(dt, i),
                         atoll(r->field[F_OFFSET]));
        if (strcmp(r->field[F_SHAPE], "-") == 0) {
            assert_int_equal(ndim, 0);
            assert_null(npyio_dtype_field_shape(dt, i));
        } else {
            const char *p = r->field[F_SHAPE];
            int d;

            for (d = 0; d < ndim; d++) {
                char *end;

                assert_int_equal(npyio_dtype_field_shape(dt, i)[d],
                                 strtoll(p, &end, 10));
                p = *end == ',' ? end + 1 : end;
            }
            assert_int_equal(*p, '\0');
        }
        snprintf(text, sizeof text, "%s", r->field[F_BASE_STR]);
        if (flip && text[0] == '<')
            text[0] = '>';
        expect_str(elem, text);
        assert_int_equal(numpy_kind(elem), r->field[F_BASE_KIND][0]);
        assert_int_equal(npyio_dtype_itemsize(elem),
                         atoll(r->field[F_BASE_ITEMSIZE]));
        (*row)++;
        /* Sub-fields of a record field, or of the record inside (nested)
         * subarrays. */
        while (npyio_dtype_kind(elem) == NPYIO_KIND_SUBARRAY)
            elem = npyio_dtype_subarray_base(elem);
        if (npyio_dtype_kind(elem) == NPYIO_KIND_RECORD)
            check_fields(t, row, name, elem, depth + 1);
    }
}

/* Expand a plan to "offset:unit" words, sorted, as swaps.tsv lists them. */
static void expand(const npyio__swap_op *ops, size_t n, size_t base,
                   char *out, size_t *len)
{
    size_t i = 0;

    while (i < n) {
        const npyio__swap_op *op = &ops[i];
        size_t k;

        if (op->kind == NPYIO__SWAP_UNITS) {
            for (k = 0; k < op->count; k++)
                *len += (size_t)sprintf(out + *len, "%s%zu:%u",
                                        *len ? " " : "",
                                        base + op->offset + k * op->unit,
                                        op->unit);
            i++;
        } else {
            for (k = 0; k < op->count; k++)
                expand(op + 1, op->body, base + op->offset + k * op->stride,
                       out, len);
            i += 1 + op->body;
        }
    }
}

static int compare_units(const void *a, const void *b)
{
    long x = atol(*(char *const *)a), y = atol(*(char *const *)b);

    return (x > y) - (x < y);
}

/* Sort the words of a unit list by offset, in place. */
static void sort_units(char *text)
{
    char *words[65536], *copy = strdup(text), *w;
    size_t n = 0, i, at = 0;

    for (w = strtok(copy, " "); w != NULL; w = strtok(NULL, " "))
        words[n++] = w;
    qsort(words, n, sizeof *words, compare_units);
    for (i = 0; i < n; i++)
        at += (size_t)sprintf(text + at, "%s%s", i ? " " : "", words[i]);
    text[at] = '\0';
    free(copy);
}

/* The units to swap on this host: NumPy's column for this byte order, but
 * none for a host-order case on a big-endian host (its fields are all
 * big-endian there: see host_order_case). */
static const char *swap_units(const tsv_row *s)
{
    if (host_order() == '>' && host_order_case(s->field[0]))
        return "";
    return s->count > 1 ? s->field[host_order() == '<' ? 1 : 2] : "";
}

static void check_swaps(const tsv_row *s, const npyio_dtype *dt)
{
    npyio__swap_plan plan;
    npyio__mem mem;
    size_t len = 0;
    char *got = malloc(1 << 20);
    const char *want = swap_units(s);

    npyio__mem_init(&mem, NULL);
    got[0] = '\0';
    assert_ok(npyio__swap_plan_make(dt, host_order(), &mem, &plan));
    expand(plan.ops, plan.count, 0, got, &len);
    sort_units(got);
    if (strcmp(got, want) != 0)
        fail_msg("swap units\n got  %.300s\n want %.300s", got, want);
    npyio__swap_plan_free(&plan);
    free(got);
}

static void test_record_corpus(void **state)
{
    tsv_table manifest, fields, swaps;
    size_t i, row = 0;

    (void)state;
    tsv_load("records/valid/manifest.tsv", &manifest);
    tsv_load("records/valid/fields.tsv", &fields);
    tsv_load("records/valid/swaps.tsv", &swaps);
    assert_true(manifest.count >= 40);
    for (i = 0; i < manifest.count; i++) {
        const tsv_row *r = &manifest.rows[i];
        npyio_header *h;
        const npyio_dtype *dt;
        size_t canon_len, len;
        unsigned char *canon, *out;

        assert_int_equal(r->count, M_COLUMNS);
        print_message("%s\n", r->field[M_NAME]);
        h = parse_case(r);
        dt = npyio_header_dtype(h);
        assert_int_equal(npyio_dtype_has_objects(dt),
                         atoi(r->field[M_OBJECT]));
        /* Objects are pointers: sizes and offsets of records holding them
         * are the host's, and NumPy's were taken where pointers are 8. */
        if (sizeof(void *) != 8 && npyio_dtype_has_objects(dt)) {
            while (row < fields.count &&
                   strcmp(fields.rows[row].field[F_CASE],
                          r->field[M_NAME]) == 0)
                row++;
            npyio_header_free(h);
            continue;
        }
        assert_int_equal(npyio_header_version(h), atoi(r->field[M_VERSION]));
        assert_int_equal(npyio_header_length(h), atoll(r->field[M_HLEN]));
        assert_int_equal(npyio_header_data_offset(h),
                         atoll(r->field[M_OFFSET]));
        assert_int_equal(npyio_dtype_itemsize(dt),
                         atoll(r->field[M_ITEMSIZE]));
#if defined(__x86_64__) /* NumPy's alignments are x86-64's */
        assert_int_equal(npyio_dtype_alignment(dt), atoll(r->field[M_ALIGN]));
#endif
        assert_int_equal(npyio_dtype_field_count(dt),
                         atoll(r->field[M_NFIELDS]));
        assert_int_equal(npyio_header_ndim(h), atoi(r->field[M_NDIM]));
        assert_int_equal(npyio_header_is_fortran_order(h),
                         atoi(r->field[M_FORTRAN]));
        assert_int_equal(npyio_header_count(h),
                         strtoll(r->field[M_COUNT], NULL, 10));
        assert_int_equal(npyio_header_nbytes(h),
                         strtoll(r->field[M_NBYTES], NULL, 10));
        assert_int_equal(npyio_dtype_has_objects(dt),
                         atoi(r->field[M_OBJECT]));
        /* Field facts: rows for this case follow in order. */
        /* (fields.tsv lists no fields for folded top-level subarrays) */
        if (npyio_dtype_kind(dt) == NPYIO_KIND_RECORD &&
            strncmp(r->field[M_NAME], "toplevel_", 9) != 0)
            check_fields(&fields, &row, r->field[M_NAME], dt, 0);
        if (strncmp(r->field[M_NAME], "toplevel_", 9) == 0) {
            /* swaps.tsv covers the whole subarray element, before the
             * header folds it into the shape: plan the descr itself. */
            npyio_dtype *sub = NULL;

            assert_ok(npyio_dtype_parse(r->field[M_DESCR],
                                             strlen(r->field[M_DESCR]), NULL,
                                             &sub));
            assert_int_equal(npyio_dtype_kind(sub), NPYIO_KIND_SUBARRAY);
            check_swaps(find_case(&swaps, r->field[M_NAME]), sub);
            npyio_dtype_unref(sub);
        } else {
            check_swaps(find_case(&swaps, r->field[M_NAME]), dt);
        }
        /* Re-emitted as np.save writes the array NumPy loads. */
        canon = record_file(r->field[M_CANON], &canon_len);
        if (host_order() == '>' && host_order_case(r->field[M_NAME]))
            flip_to_big_endian((char *)canon, canon_len);
        out = malloc(canon_len);
        assert_ok(npyio_header_emit(h, 0, out, canon_len, &len));
        assert_int_equal(len, canon_len);
        if (memcmp(out, canon, len) != 0)
            fail_msg("emitted header differs from %s:\n got  %.*s\n want "
                     "%.*s", r->field[M_CANON], (int)(len > 400 ? 400 : len),
                     (const char *)out, (int)(len > 400 ? 400 : len),
                     (const char *)canon);
        free(out);
        free(canon);
        npyio_header_free(h);
    }
    assert_int_equal(row, fields.count); /* every field row was checked */
    tsv_free(&manifest);
    tsv_free(&fields);
    tsv_free(&swaps);
}

/* The descr parsed from the manifest's text gives the same dtype as the
 * header, and npyio_dtype_descr writes NumPy's text back (for the cases
 * NumPy itself wrote). */
static void test_descr_text_round_trip(void **state)
{
    tsv_table manifest;
    size_t i;

    (void)state;
    tsv_load("records/valid/manifest.tsv", &manifest);
    for (i = 0; i < manifest.count; i++) {
        const tsv_row *r = &manifest.rows[i];
        const char *descr = r->field[M_DESCR];
        npyio_dtype *dt = NULL;
        npyio_header *h;
        size_t len = 0;
        char *text;

        if (strncmp(r->field[M_NAME], "toplevel_", 9) == 0)
            continue;
        h = parse_case(r);
        assert_ok(npyio_dtype_parse(descr, strlen(descr), NULL, &dt));
        assert_true(npyio_dtype_is_equal(dt, npyio_header_dtype(h)));
        if (strcmp(r->field[M_FILE], r->field[M_CANON]) == 0) {
            assert_status(npyio_dtype_descr(dt, NULL, 0, &len),
                          NPYIO_E_BUFFER_TOO_SMALL);
            assert_int_equal(len, strlen(descr));
            text = malloc(len + 1);
            assert_ok(npyio_dtype_descr(dt, text, len + 1, &len));
            assert_string_equal(text, descr);
            free(text);
        }
        npyio_dtype_unref(dt);
        npyio_header_free(h);
    }
    tsv_free(&manifest);
}

/* ---- the builder: the same dtypes built field by field ---------------------- */

static npyio_dtype *scalar(const char *type)
{
    npyio_dtype *dt = NULL;

    assert_ok(npyio_dtype_parse(type, strlen(type), NULL, &dt));
    return dt;
}

/* Add a field whose dtype is given as a type string. */
static void add(npyio_record_builder *b, const char *name, const char *title,
                int64_t offset, const char *type, int ndim,
                const int64_t *shape)
{
    npyio_dtype *dt = scalar(type);

    assert_ok(npyio_record_builder_add(b, name, title, offset, dt, ndim,
                                       shape));
    npyio_dtype_unref(dt); /* the builder keeps its own reference */
}

static void add_dtype(npyio_record_builder *b, const char *name,
                      npyio_dtype *dt, int ndim, const int64_t *shape)
{
    assert_ok(npyio_record_builder_add(b, name, NULL, -1, dt, ndim, shape));
    npyio_dtype_unref(dt);
}

static npyio_dtype *finish(npyio_record_builder *b, size_t itemsize)
{
    npyio_dtype *dt = NULL;

    assert_ok(npyio_record_builder_finish(b, itemsize, &dt));
    npyio_record_builder_free(b);
    return dt;
}

static npyio_record_builder *builder(uint32_t flags)
{
    npyio_record_builder *b = NULL;

    assert_ok(npyio_record_builder_new(flags, NULL, &b));
    return b;
}

/* The built dtype's descr must be NumPy's text for the corpus case. */
static void expect_numpy_descr(const tsv_table *t, const char *name,
                               npyio_dtype *dt)
{
    const tsv_row *r = find_case(t, name);
    char text[4096];
    npyio_header *h;

    assert_non_null(r);
    assert_ok(npyio_dtype_descr(dt, text, sizeof text, NULL));
    if (strcmp(text, r->field[M_DESCR]) != 0)
        fail_msg("%s: built %s\n NumPy %s", name, text, r->field[M_DESCR]);
    if (sizeof(void *) == 8 || !npyio_dtype_has_objects(dt))
        assert_int_equal(npyio_dtype_itemsize(dt),
                         atoll(r->field[M_ITEMSIZE]));
    h = parse_case(r);
    assert_true(npyio_dtype_is_equal(dt, npyio_header_dtype(h)));
    npyio_header_free(h);
    npyio_dtype_unref(dt);
}

static void test_builder_matches_numpy(void **state)
{
    static const int64_t three[1] = {3}, two_three[2] = {2, 3},
                         four[1] = {4}, two[1] = {2};
    npyio_record_builder *b, *inner;
    npyio_dtype *rec, *sub;
    tsv_table t;

    (void)state;
    tsv_load("records/valid/manifest.tsv", &t);

    b = builder(0);
    add(b, "id", NULL, -1, "<u4", 0, NULL);
    add(b, "pos", NULL, -1, "<f4", 1, three);
    add(b, "name", NULL, -1, "S8", 0, NULL);
    expect_numpy_descr(&t, "flat_doc_example", finish(b, 0));

    b = builder(0);
    add(b, "a", "Title A", -1, "<i4", 0, NULL);
    add(b, "b", NULL, -1, "<f4", 0, NULL);
    expect_numpy_descr(&t, "titled_basic", finish(b, 0));

    /* Offsets with gaps and trailing padding. */
    b = builder(0);
    add(b, "a", NULL, 0, "u1", 0, NULL);
    add(b, "b", NULL, 4, "<i4", 0, NULL);
    expect_numpy_descr(&t, "offsets_trailing_pad", finish(b, 12));
    b = builder(0);
    add(b, "a", NULL, 4, "<i4", 0, NULL);
    expect_numpy_descr(&t, "offsets_leading_gap", finish(b, 8));

    /* align=True: the builder places and pads as NumPy does (with
     * x86-64's alignments, where NumPy made the expectations). */
    if (_Alignof(double) != 8)
        goto after_aligned;
    b = builder(NPYIO_RECORD_ALIGNED);
    add(b, "a", NULL, -1, "u1", 0, NULL);
    add(b, "b", NULL, -1, "<i4", 0, NULL);
    rec = finish(b, 0);
    assert_int_equal(npyio_dtype_alignment(rec), 4);
    expect_numpy_descr(&t, "align_u1_i4", rec);
    b = builder(NPYIO_RECORD_ALIGNED);
    add(b, "a", NULL, -1, "u1", 0, NULL);
    add(b, "b", NULL, -1, "<f8", 0, NULL);
    add(b, "c", NULL, -1, "<i2", 0, NULL);
    add(b, "d", NULL, -1, "u1", 0, NULL);
    expect_numpy_descr(&t, "align_trailing", finish(b, 0));
    b = builder(NPYIO_RECORD_ALIGNED);
    add(b, "a", NULL, -1, "u1", 0, NULL);
    add(b, "b", NULL, -1, "<f4", 1, three);
    add(b, "c", NULL, -1, "u1", 0, NULL);
    expect_numpy_descr(&t, "align_subarray", finish(b, 0));
after_aligned:

    /* Subarrays, records in subarrays in records. */
    b = builder(0);
    add(b, "m", NULL, -1, "<f4", 2, two_three);
    add(b, "v", NULL, -1, ">i2", 1, four);
    expect_numpy_descr(&t, "subarray_2d", finish(b, 0));
    inner = builder(0);
    add(inner, "b", NULL, -1, "<i4", 0, NULL);
    b = builder(0);
    add_dtype(b, "a", finish(inner, 0), 1, two);
    expect_numpy_descr(&t, "subarray_of_record", finish(b, 0));
    rec = scalar("<i4");
    assert_ok(npyio_dtype_new_subarray(rec, 1, two, &sub));
    npyio_dtype_unref(rec); /* the subarray keeps its own reference */
    b = builder(0);
    add_dtype(b, "a", sub, 1, three);
    expect_numpy_descr(&t, "subarray_nested", finish(b, 0));

    /* Nested three deep, with titles. */
    inner = builder(0);
    add(inner, "s", "inner title", -1, ">i2", 0, NULL);
    add(inner, "t", NULL, -1, "<f4", 0, NULL);
    rec = finish(inner, 0);
    b = builder(0);
    assert_ok(npyio_record_builder_add(b, "r", "outer title", -1, rec, 0,
                                       NULL));
    npyio_dtype_unref(rec);
    add(b, "v", "sub title", -1, "<u2", 1, three);
    expect_numpy_descr(&t, "titled_nested", finish(b, 0));

    b = builder(0);
    add_dtype(b, "a", finish(builder(0), 0), 0, NULL);
    add(b, "b", NULL, -1, "<i4", 0, NULL);
    expect_numpy_descr(&t, "empty_record_field", finish(b, 0));
    expect_numpy_descr(&t, "empty_record", finish(builder(0), 0));

    b = builder(0);
    add(b, "a", NULL, -1, "<i4", 0, NULL);
    add(b, "o", NULL, -1, "O", 0, NULL);
    rec = finish(b, 0);
    assert_true(npyio_dtype_has_objects(rec));
    expect_numpy_descr(&t, "object_field", rec);
    tsv_free(&t);
}

static void test_builder_errors(void **state)
{
    npyio_record_builder *b = builder(0);
    npyio_dtype *f8 = scalar("<f8"), *rec = NULL;
    int64_t bad[1] = {-1};
    char text[256];

    (void)state;
    assert_ok(npyio_record_builder_add(b, "a", "T", -1, f8, 0, NULL));
    assert_status(npyio_record_builder_add(b, "a", NULL, -1, f8, 0, NULL),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("field name 'a' is already used");
    assert_status(npyio_record_builder_add(b, "T", NULL, -1, f8, 0, NULL),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_record_builder_add(b, "b", "a", -1, f8, 0, NULL),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("title 'a' is already used");
    assert_status(npyio_record_builder_add(b, "c", NULL, -2, f8, 0, NULL),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_record_builder_add(b, "c", NULL, -1, f8, 1, bad),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_record_builder_add(b, NULL, NULL, -1, f8, 0, NULL),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_record_builder_add(b, "c", NULL, -1, NULL, 0, NULL),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_record_builder_add(b, "c", NULL, INT64_C(1) << 40, f8,
                                           0, NULL),
                  NPYIO_E_OVERFLOW);
    /* The failed adds left one field. */
    assert_ok(npyio_record_builder_finish(b, 0, &rec));
    assert_int_equal(npyio_dtype_field_count(rec), 1);
    npyio_dtype_unref(rec);
    assert_status(npyio_record_builder_finish(b, 4, &rec),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("smaller than the end of the fields");
    /* Overlapping fields exist, but no descr can express them. */
    assert_ok(npyio_record_builder_add(b, "c", NULL, 4, f8, 0, NULL));
    assert_ok(npyio_record_builder_finish(b, 0, &rec));
    assert_int_equal(npyio_dtype_itemsize(rec), 12);
    assert_status(npyio_dtype_descr(rec, text, sizeof text, NULL),
                  NPYIO_E_UNSUPPORTED);
    assert_error_contains("overlaps the field before it");
    npyio_dtype_unref(rec);
    npyio_record_builder_free(b);
    npyio_record_builder_free(NULL);
    assert_status(npyio_record_builder_new(8, NULL, &b), NPYIO_E_INVALID_ARG);
    assert_status(npyio_record_builder_finish(NULL, 0, &rec),
                  NPYIO_E_INVALID_ARG);
    npyio_dtype_unref(f8);
}

/* Names and titles must be strict UTF-8: otherwise the format 3.0 header
 * npyio_save_with_header writes is one npyio_header_parse refuses ("invalid UTF-8").
 * They were accepted; a valid non-ASCII name saves and reads back. */
static void test_builder_refuses_invalid_utf8(void **state)
{
    static const struct {
        const char *name, *title, *message;
    } bad[] = {
        {"\xff\xfe", NULL, "byte 0 of the name (0xff) is not valid UTF-8"},
        {"\xc0\x80", NULL, "byte 0 of the name (0xc0) is not valid UTF-8"},
        {"ok\xe2\x82", NULL, "byte 2 of the name (0xe2) is not valid UTF-8"},
        {"\xed\xa0\x80", NULL,
         "byte 0 of the name (0xed) is not valid UTF-8"},
        {"t", "\xf5\x80\x80\x80",
         "byte 0 of the title (0xf5) is not valid UTF-8"},
    };
    static const int64_t shape[1] = {2};
    npyio_record_builder *b = builder(0);
    npyio_dtype *i4 = scalar("<i4"), *rec = NULL;
    npyio_header *h = NULL, *back = NULL;
    unsigned char *bytes = NULL;
    size_t i, len = 0, used = 0;

    (void)state;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_status(npyio_record_builder_add(b, bad[i].name, bad[i].title,
                                               -1, i4, 0, NULL),
                      NPYIO_E_INVALID_ARG);
        assert_error_contains(bad[i].message);
    }
    assert_ok(npyio_record_builder_add(b, "\xc3\xa9t\xc3\xa9",
                                       "\xe2\x82\xac", -1, i4, 0, NULL));
    assert_ok(npyio_record_builder_finish(b, 0, &rec));
    assert_int_equal(npyio_dtype_field_count(rec), 1);
    assert_ok(npyio_header_new(rec, 1, shape, 0, &h));
    assert_status(npyio_header_emit(h, 0, NULL, 0, &len),
                  NPYIO_E_BUFFER_TOO_SMALL);
    bytes = malloc(len);
    assert_non_null(bytes);
    assert_ok(npyio_header_emit(h, 0, bytes, len, &len));
    assert_int_equal(bytes[6], 3); /* format 3.0: UTF-8 */
    assert_ok(npyio_header_parse(bytes, len, NULL, &back, &used));
    assert_true(npyio_dtype_is_equal(npyio_header_dtype(back), rec));
    free(bytes);
    npyio_header_free(back);
    npyio_header_free(h);
    npyio_dtype_unref(rec);
    npyio_dtype_unref(i4);
    npyio_record_builder_free(b);
}

/* Allocations counted, for the cost of many adds. */
static long builder_allocs;

static void *count_alloc(void *user, size_t size, size_t alignment)
{
    (void)user;
    builder_allocs++;
    return aligned_alloc(alignment, (size + alignment - 1) / alignment *
                                        alignment);
}

static void *count_realloc(void *user, void *ptr, size_t old_size,
                           size_t new_size, size_t alignment)
{
    void *p = count_alloc(user, new_size, alignment);

    if (p != NULL) {
        memcpy(p, ptr, old_size < new_size ? old_size : new_size);
        free(ptr);
    }
    return p;
}

static void count_free(void *user, void *ptr, size_t size)
{
    (void)user;
    (void)size;
    free(ptr);
}

/* 20,000 fields: duplicates are still found, and the builder works in
 * linear time: one allocation per add (the name) plus O(log n) for the
 * tables. It rebuilt its name table at every add before (2 allocations an
 * add and quadratic time: 7 s for 4,000 fields, found by fuzz_descr). */
static void test_builder_many_fields(void **state)
{
    enum { N = 20000 };
    npyio_allocator a = {sizeof a, count_alloc, count_realloc, count_free};
    npyio_options *o = NULL;
    npyio_record_builder *b = NULL;
    npyio_dtype *i4 = scalar("<i4"), *rec = NULL;
    size_t index = 0;
    char name[16];
    int k;

    (void)state;
    assert_ok(npyio_options_new(&o));
    assert_ok(npyio_options_set_allocator(o, &a, NULL));
    assert_ok(npyio_record_builder_new(0, o, &b));
    builder_allocs = 0;
    for (k = 0; k < N; k++) {
        snprintf(name, sizeof name, "f%05d", k);
        assert_ok(npyio_record_builder_add(b, name, k == 7 ? "T" : NULL, -1,
                                           i4, 0, NULL));
    }
    assert_true(builder_allocs < N + N / 8);
    assert_status(npyio_record_builder_add(b, "f12345", NULL, -1, i4, 0,
                                           NULL),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("field name 'f12345' is already used");
    assert_status(npyio_record_builder_add(b, "new", "f00000", -1, i4, 0,
                                           NULL),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_record_builder_add(b, "T", NULL, -1, i4, 0, NULL),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_record_builder_add(b, "same", "same", -1, i4, 0,
                                           NULL),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("title 'same' is already used");
    assert_ok(npyio_record_builder_add(b, "new", "also new", -1, i4, 0,
                                       NULL));
    assert_ok(npyio_record_builder_finish(b, 0, &rec));
    assert_int_equal(npyio_dtype_field_count(rec), N + 1);
    assert_int_equal(npyio_dtype_itemsize(rec), 4 * (N + 1));
    assert_ok(npyio_dtype_find_field(rec, "f19999", &index));
    assert_int_equal(index, N - 1);
    npyio_dtype_unref(rec);
    npyio_record_builder_free(b);
    npyio_options_free(o);
    npyio_dtype_unref(i4);
}

/* Out-of-order fields: a header cannot be made for them, as np.save
 * fails before writing anything. */
static void test_out_of_order_fields_cannot_be_saved(void **state)
{
    npyio_record_builder *b = builder(0);
    npyio_dtype *rec;
    npyio_header *h = NULL;
    int64_t shape[1] = {2};

    (void)state;
    add(b, "a", NULL, 4, "<i4", 0, NULL);
    add(b, "b", NULL, 0, "<i4", 0, NULL);
    rec = finish(b, 0);
    assert_int_equal(npyio_dtype_field_offset(rec, 1), 0);
    assert_status(npyio_header_new(rec, 1, shape, 0, &h), NPYIO_E_UNSUPPORTED);
    assert_error_contains("out of order");
    assert_null(h);
    npyio_dtype_unref(rec);
}

/*
 * npyio_dtype_swap is its own inverse, so it refuses records whose fields
 * share bytes (the builder can make them; no descr can): such bytes would
 * be reversed once per field. It fails with the status descr emission
 * gives them, before touching the data. Disjoint fields in any order are
 * swapped field by field and come back after a second swap.
 */
static void test_swap_refuses_overlapping_fields(void **state)
{
    static const unsigned char input[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
                                            11, 12};
    npyio_record_builder *b;
    npyio_dtype *overlap, *alias, *out_of_order, *outer, *sub;
    unsigned char data[12];
    char text[256];
    int64_t two[1] = {2};
    size_t i;

    (void)state;
    /* The reproducer: '>i4' at 0 and at 2 in 6 bytes. */
    b = builder(0);
    add(b, "a", NULL, 0, ">i4", 0, NULL);
    add(b, "b", NULL, 2, ">i4", 0, NULL);
    overlap = finish(b, 6);
    /* Two fields over the same bytes: each swap reversed them twice. */
    b = builder(0);
    add(b, "x", NULL, 0, "<u4", 0, NULL);
    add(b, "y", NULL, 0, "<u4", 0, NULL);
    alias = finish(b, 4);
    /* Disjoint, out of order, with a one-byte field between. */
    b = builder(0);
    add(b, "c", NULL, 6, ">u2", 0, NULL);
    add(b, "d", NULL, 0, ">i4", 0, NULL);
    add(b, "e", NULL, 5, "u1", 0, NULL);
    out_of_order = finish(b, 8);
    /* The overlap two levels down, inside a subarray field. */
    b = builder(0);
    add(b, "p", NULL, -1, "|u1", 0, NULL);
    assert_ok(npyio_record_builder_add(b, "q", NULL, -1, alias, 1, two));
    outer = finish(b, 0);
    assert_ok(npyio_dtype_new_subarray(outer, 1, two, &sub));

    for (i = 0; i < 4; i++) {
        npyio_dtype *dt = i == 0 ? overlap : i == 1 ? alias : i == 2 ? outer
                                                                     : sub;
        size_t n = npyio_dtype_itemsize(dt) <= sizeof data
                       ? npyio_dtype_itemsize(dt)
                       : 0;

        memcpy(data, input, sizeof data);
        assert_status(npyio_dtype_swap(dt, data, n), NPYIO_E_UNSUPPORTED);
        assert_error_contains("overlap");
        assert_error_contains("would not be its own inverse");
        assert_memory_equal(data, input, sizeof data); /* untouched */
        /* The status descr emission (and so a header) gives them. */
        assert_status(npyio_dtype_descr(dt, text, sizeof text, NULL),
                      NPYIO_E_UNSUPPORTED);
    }
    assert_status(npyio_dtype_swap(overlap, data, 6), NPYIO_E_UNSUPPORTED);
    assert_error_contains("fields 'a' (bytes 0 to 3) and 'b' (bytes 2 to 5) "
                          "overlap");

    /* Disjoint fields out of order: 'd' and 'c' reversed (big-endian data
     * on a little-endian host and the other way round), 'e' and the gap
     * left alone; a second swap restores the input. */
    memcpy(data, input, 8);
    assert_ok(npyio_dtype_swap(out_of_order, data, 8));
    if (host_order() == '<') {
        static const unsigned char want[8] = {4, 3, 2, 1, 5, 6, 8, 7};

        assert_memory_equal(data, want, 8);
    } else {
        assert_memory_equal(data, input, 8); /* already native */
    }
    assert_ok(npyio_dtype_swap(out_of_order, data, 8));
    assert_memory_equal(data, input, 8);

    npyio_dtype_unref(sub);
    npyio_dtype_unref(outer);
    npyio_dtype_unref(out_of_order);
    npyio_dtype_unref(alias);
    npyio_dtype_unref(overlap);
}

static void test_field_queries(void **state)
{
    const char *descr = "[('x', '<i4'), (('T', 'y'), '>f8', (2, 3))]";
    npyio_dtype *rec = NULL, *native = NULL;
    size_t index = 9, len = 9;

    (void)state;
    assert_ok(npyio_dtype_parse(descr, strlen(descr), NULL, &rec));
    assert_int_equal(npyio_dtype_kind(rec), NPYIO_KIND_RECORD);
    assert_int_equal(npyio_dtype_byteorder(rec), '|');
    assert_int_equal(npyio_dtype_alignment(rec), 1);
    assert_int_equal(npyio_dtype_field_count(rec), 2);
    assert_ok(npyio_dtype_find_field(rec, "y", &index));
    assert_int_equal(index, 1);
    assert_ok(npyio_dtype_find_field(rec, "T", &index));
    assert_int_equal(index, 1);
    assert_status(npyio_dtype_find_field(rec, "z", &index),
                  NPYIO_E_NOT_FOUND);
    assert_error_contains("no field named 'z'");
    assert_string_equal(npyio_dtype_field_title(rec, 1, &len), "T");
    assert_int_equal(len, 1);
    assert_int_equal(npyio_dtype_field_offset(rec, 1), 4);
    assert_int_equal(npyio_dtype_field_ndim(rec, 1), 2);
    assert_int_equal(npyio_dtype_field_shape(rec, 1)[1], 3);
    assert_int_equal(npyio_dtype_itemsize(npyio_dtype_field_dtype(rec, 1)), 8);
    assert_null(npyio_dtype_field_name(rec, 2, &len));
    assert_int_equal(len, 0);
    assert_int_equal(npyio_dtype_field_offset(rec, 2), -1);
    assert_null(npyio_dtype_field_dtype(rec, 2));
    assert_false(npyio_dtype_has_objects(rec));
    /* Native order: every field, through subarrays. */
    assert_ok(npyio_dtype_new_native(rec, &native));
    assert_true(npyio_dtype_is_native(npyio_dtype_field_dtype(native, 1)));
    assert_true(npyio_dtype_is_native(npyio_dtype_field_dtype(native, 0)));
    assert_string_equal(npyio_dtype_field_title(native, 1, NULL), "T");
    assert_int_equal(npyio_dtype_field_ndim(native, 1), 2);
    assert_false(npyio_dtype_is_equal(rec, native) &&
                 !npyio_dtype_is_native(npyio_dtype_field_dtype(rec, 1)));
    npyio_dtype_unref(native);
    npyio_dtype_unref(rec);
}

static void test_subarray_constructor(void **state)
{
    npyio_dtype *f8 = scalar("<f8"), *sub = NULL, *same = NULL;
    int64_t shape[2] = {2, 3}, bad[1] = {-1}, huge[2] = {1 << 20, 1 << 20};
    char text[64];

    (void)state;
    assert_ok(npyio_dtype_new_subarray(f8, 2, shape, &sub));
    assert_int_equal(npyio_dtype_kind(sub), NPYIO_KIND_SUBARRAY);
    assert_int_equal(npyio_dtype_itemsize(sub), 48);
    assert_int_equal(npyio_dtype_alignment(sub), npyio_dtype_alignment(f8));
    assert_ptr_equal(npyio_dtype_subarray_base(sub), f8);
    assert_int_equal(npyio_dtype_subarray_ndim(sub), 2);
    assert_int_equal(npyio_dtype_subarray_shape(sub)[1], 3);
    assert_ok(npyio_dtype_descr(sub, text, sizeof text, NULL));
    assert_string_equal(text, "('<f8', (2, 3))");
    assert_ok(npyio_dtype_str(sub, text, sizeof text, NULL));
    assert_string_equal(text, "|V48");
    assert_ok(npyio_dtype_new_subarray(f8, 0, NULL, &same));
    assert_ptr_equal(same, f8); /* () is the base itself, as in NumPy */
    npyio_dtype_unref(same);
    assert_status(npyio_dtype_new_subarray(f8, 1, bad, &same),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_dtype_new_subarray(f8, 2, huge, &same), NPYIO_E_OVERFLOW);
    assert_status(npyio_dtype_new_subarray(f8, 65, shape, &same),
                  NPYIO_E_INVALID_ARG);
    /* Each dimension must fit in a C int, as NumPy requires ("dimension
     * does not fit into a C int"), even when another is 0. */
    {
        int64_t wide[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 0};
        int64_t edge[2] = {INT32_MAX, 0};

        assert_status(npyio_dtype_new_subarray(f8, 3, wide, &same),
                      NPYIO_E_OVERFLOW);
        assert_error_contains("subarray dimension 0 (1099511627776) is "
                              "above NumPy's limit of 2147483647");
        assert_null(same);
        assert_ok(npyio_dtype_new_subarray(f8, 2, edge, &same));
        assert_int_equal(npyio_dtype_itemsize(same), 0);
        npyio_dtype_unref(same);
    }
    assert_null(npyio_dtype_subarray_base(f8));
    assert_null(npyio_dtype_subarray_shape(f8));
    npyio_dtype_unref(sub);
    npyio_dtype_unref(f8);
}

/* A header for a subarray dtype folds its shape in, as np.save does. */
static void test_header_folds_subarray(void **state)
{
    npyio_dtype *sub = NULL, *i4 = scalar("<i4");
    npyio_header *h = NULL;
    int64_t inner[2] = {2, 3}, outer[1] = {5};
    char text[64];

    (void)state;
    assert_ok(npyio_dtype_new_subarray(i4, 2, inner, &sub));
    assert_ok(npyio_header_new(sub, 1, outer, 0, &h));
    assert_int_equal(npyio_header_ndim(h), 3);
    assert_int_equal(npyio_header_shape(h)[0], 5);
    assert_int_equal(npyio_header_shape(h)[2], 3);
    assert_true(npyio_dtype_is_equal(npyio_header_dtype(h), i4));
    assert_int_equal(npyio_header_count(h), 30);
    assert_ok(npyio_dtype_str(npyio_header_dtype(h), text, sizeof text, NULL));
    assert_string_equal(text, "<i4");
    npyio_header_free(h);
    npyio_dtype_unref(sub);
    npyio_dtype_unref(i4);
}

/* Applying a plan reverses exactly the units NumPy lists (swaps.tsv) and
 * leaves every other byte (padding, one-byte fields) alone, in every
 * element. */
static void test_swap_apply(void **state)
{
    tsv_table manifest, swaps;
    size_t i;

    (void)state;
    tsv_load("records/valid/manifest.tsv", &manifest);
    tsv_load("records/valid/swaps.tsv", &swaps);
    for (i = 0; i < manifest.count; i++) {
        const tsv_row *r = &manifest.rows[i];
        const tsv_row *s = find_case(&swaps, r->field[M_NAME]);
        const char *units = swap_units(s);
        npyio_dtype *dt = NULL;
        npyio__swap_plan plan;
        npyio__mem mem;
        size_t size, k, elements = 3;
        unsigned char *data, *want;
        const char *p;

        if (atoll(r->field[M_ITEMSIZE]) > 100000 ||
            (sizeof(void *) != 8 && atoi(r->field[M_OBJECT]) != 0))
            continue; /* (object sizes: see test_record_corpus) */
        assert_ok(npyio_dtype_parse(r->field[M_DESCR],
                                         strlen(r->field[M_DESCR]), NULL,
                                         &dt));
        size = npyio_dtype_itemsize(dt);
        data = malloc(size * elements + 1);
        want = malloc(size * elements + 1);
        for (k = 0; k < size * elements; k++)
            data[k] = want[k] = (unsigned char)(k * 7 + 1);
        for (k = 0; k < elements; k++)
            for (p = units; *p != '\0';) {
                char *end;
                size_t off = strtoul(p, &end, 10), unit, j;

                unit = strtoul(end + 1, &end, 10);
                for (j = 0; j < unit; j++)
                    want[k * size + off + j] = data[k * size + off + unit - 1 - j];
                p = *end == ' ' ? end + 1 : end;
            }
        npyio__mem_init(&mem, NULL);
        assert_ok(npyio__swap_plan_make(dt, host_order(), &mem, &plan));
        npyio__swap_apply(&plan, data, size * elements);
        if (memcmp(data, want, size * elements) != 0)
            fail_msg("%s: swapped bytes differ", r->field[M_NAME]);
        npyio__swap_plan_free(&plan);
        free(data);
        free(want);
        npyio_dtype_unref(dt);
    }
    tsv_free(&manifest);
    tsv_free(&swaps);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_corpus),
        cmocka_unit_test(test_descr_text_round_trip),
        cmocka_unit_test(test_builder_matches_numpy),
        cmocka_unit_test(test_builder_errors),
        cmocka_unit_test(test_builder_many_fields),
        cmocka_unit_test(test_builder_refuses_invalid_utf8),
        cmocka_unit_test(test_out_of_order_fields_cannot_be_saved),
        cmocka_unit_test(test_swap_refuses_overlapping_fields),
        cmocka_unit_test(test_field_queries),
        cmocka_unit_test(test_subarray_constructor),
        cmocka_unit_test(test_header_folds_subarray),
        cmocka_unit_test(test_swap_apply),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
