/*
 * testdata.h - reading the data-driven corpora under tests/data: whole
 * files and tab-separated manifests. NPYIO_TEST_DATA_DIR is set by CMake.
 */
#ifndef NPYIO_TESTDATA_H
#define NPYIO_TESTDATA_H

#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#define TSV_MAX_FIELDS 24

typedef struct tsv_row {
    char *field[TSV_MAX_FIELDS];
    int count;
} tsv_row;

typedef struct tsv_table {
    char *text;
    tsv_row *rows;
    size_t count;
} tsv_table;

/* Read a file by its own path (exact size, for ASan). */
static inline unsigned char *read_data_file_abs(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf;
    long size;

    if (f == NULL)
        fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc(size > 0 ? (size_t)size : 1);
    if (buf == NULL || fread(buf, 1, (size_t)size, f) != (size_t)size)
        fail_msg("cannot read %s", path);
    fclose(f);
    *len = (size_t)size;
    return buf;
}

/* Read a file under the data directory; fails the test if missing. */
static inline unsigned char *read_data_file(const char *relative, size_t *len)
{
    char path[1024];

    snprintf(path, sizeof path, "%s/%s", NPYIO_TEST_DATA_DIR, relative);
    return read_data_file_abs(path, len);
}

/* Load a manifest: lines of tab-separated fields; '#' lines skipped. */
static inline void tsv_load(const char *relative, tsv_table *t)
{
    size_t len, i, lines = 0;
    char *p;

    t->text = (char *)read_data_file(relative, &len);
    t->text = realloc(t->text, len + 1);
    t->text[len] = '\0';
    for (i = 0; i < len; i++)
        lines += t->text[i] == '\n';
    t->rows = calloc(lines + 1, sizeof *t->rows);
    t->count = 0;
    for (p = t->text; *p != '\0';) {
        char *end = strchr(p, '\n');
        tsv_row *row;

        if (end != NULL)
            *end = '\0';
        if (*p != '#' && *p != '\0') {
            row = &t->rows[t->count++];
            row->count = 0;
            row->field[row->count++] = p;
            for (; *p != '\0'; p++)
                if (*p == '\t' && row->count < TSV_MAX_FIELDS) {
                    *p = '\0';
                    row->field[row->count++] = p + 1;
                }
        }
        if (end == NULL)
            break;
        p = end + 1;
    }
}

static inline void tsv_free(tsv_table *t)
{
    free(t->text);
    free(t->rows);
}

/* A status by the name the manifests use ("FORMAT" for NPYIO_E_FORMAT). */
static inline npyio_status status_named(const char *name)
{
    static const struct {
        const char *name;
        npyio_status status;
    } names[] = {
        {"OK", NPYIO_OK}, {"INVALID_ARG", NPYIO_E_INVALID_ARG},
        {"NOMEM", NPYIO_E_NOMEM}, {"IO", NPYIO_E_IO},
        {"FORMAT", NPYIO_E_FORMAT}, {"UNSUPPORTED", NPYIO_E_UNSUPPORTED},
        {"LIMIT", NPYIO_E_LIMIT}, {"TRUNCATED", NPYIO_E_TRUNCATED},
        {"NOT_FOUND", NPYIO_E_NOT_FOUND}, {"CHECKSUM", NPYIO_E_CHECKSUM},
        {"STATE", NPYIO_E_STATE}, {"OVERFLOW", NPYIO_E_OVERFLOW},
    };
    size_t i;

    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(names[i].name, name) == 0)
            return names[i].status;
    fail_msg("unknown status name %s", name);
    return 0;
}

/*
 * Corpus cases whose descr names no byte order ('f8', '=f8', 'd', ...),
 * or none but '>' beside types without one (the type strings 'i4,f8',
 * '(2,)i4, (2,3)>f4', '(1,1)f4'): those mean the reader's host order.
 * NumPy made their expectations on a little-endian host, so on a
 * big-endian one every '<' they expect is '>', and there every field is
 * big-endian: nothing is byte-swapped (on a little-endian host, NumPy's
 * little-endian units).
 */
static inline bool host_order_case(const char *name)
{
    static const char *const names[] = {
        "legacy_comma_in_field", "legacy_comma_kinds",
        "legacy_comma_one_field", "legacy_comma_shapes",
        "legacy_comma_string", "legacy_descr_d", "legacy_descr_eq_c8",
        "legacy_descr_eq_f8", "legacy_descr_f8", "legacy_descr_float64",
        "legacy_descr_i4", "legacy_descr_m8_s", "legacy_no_byteorder",
        "toplevel_string_one_2d",
    };
    size_t i;

    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

/* In text, turn every "'<" into "'>" (NumPy's little-endian expectation
 * for a host-order case, as a big-endian host must see it). */
static inline void flip_to_big_endian(char *text, size_t len)
{
    size_t i;

    for (i = 0; i + 1 < len; i++)
        if (text[i] == '\'' && text[i + 1] == '<')
            text[i + 1] = '>';
}

/* A file of `rows` rows of three native int32 whose header has no growth
 * room (as NumPy <= 1.23 wrote them): one more digit does not fit. */
static inline void write_roomless_file(const char *path, int rows)
{
    char text[80];
    unsigned char file[512];
    size_t n, at, i;
    int32_t v[3 * 20];
    FILE *f;

    assert_true(rows <= 20);
    snprintf(text, sizeof text, "{'descr': '%ci4', 'fortran_order': False, "
             "'shape': (%d, 3), }", host_order(), rows);
    n = strlen(text);
    at = 10 + n + 1;
    memcpy(file, "\x93NUMPY\x01\x00", 8);
    file[8] = (unsigned char)(n + 1);
    file[9] = 0;
    memcpy(file + 10, text, n);
    file[10 + n] = '\n';
    for (i = 0; i < (size_t)(3 * rows); i++)
        v[i] = (int32_t)(i / 3);
    memcpy(file + at, v, (size_t)(3 * rows) * sizeof *v);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(file, 1, at + (size_t)(3 * rows) * sizeof *v, f),
                     at + (size_t)(3 * rows) * sizeof *v);
    assert_int_equal(fclose(f), 0);
}

#endif /* NPYIO_TESTDATA_H */
