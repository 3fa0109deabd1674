/*
 * test_arrays.c - reading and writing NumPy's own files
 * (tests/data/arrays, made by gen_arrays.py): every array is read through
 * every back end (path, memory, and a hostile stream handing out 1 to 7
 * bytes per call, with and without seek) with every flag combination, and
 * compared with the bytes NumPy computed for that conversion; then written
 * back, byte-identical to np.save's file.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "testdata.h"
#include "arrays.h"
#include "hostile.h"

/* ---- a hostile stream over memory ---------------------------------------------- */


enum { BACK_PATH, BACK_FILE, BACK_MEMORY, BACK_HOSTILE_SEEK, BACK_HOSTILE,
       BACK_COUNT };
static const char *const back_names[BACK_COUNT] = {
    "path", "FILE*", "memory", "hostile stream with seek", "hostile stream"};
static FILE *open_file;

/* Open a reader on the file through one back end. */
static npyio_reader *open_reader(int back, const char *path,
                                 const unsigned char *file, size_t len,
                                 hostile *h, npyio_stream **s)
{
    npyio_reader *r = NULL;

    *s = NULL;
    switch (back) {
    case BACK_PATH:
        assert_ok(npyio_reader_open_path(path, NULL, &r));
        return r;
    case BACK_FILE:
        open_file = fopen(path, "rb");
        assert_non_null(open_file);
        assert_ok(npyio_stream_open_file(open_file, NULL, s));
        break;
    case BACK_MEMORY:
        assert_ok(npyio_stream_open_memory(file, len, NULL, s));
        break;
    case BACK_HOSTILE_SEEK:
        assert_ok(hostile_open(h, file, len, true, s));
        break;
    default:
        assert_ok(hostile_open(h, file, len, false, s));
        break;
    }
    assert_ok(npyio_reader_open_stream(*s, NULL, &r));
    return r;
}

static void close_reader(npyio_reader *reader, npyio_stream *s)
{
    assert_ok(npyio_reader_close(reader));
    assert_ok(npyio_stream_close(s));
    if (open_file != NULL) { /* the stream does not close a FILE */
        fclose(open_file);
        open_file = NULL;
    }
}

/* The bytes NumPy says a read with these flags gives on this host. */
static unsigned char *expected(const tsv_row *r, const unsigned char *file,
                               unsigned flags, size_t *len)
{
    return array_expected(r->field[A_NAME], file,
                          (size_t)atoll(r->field[A_OFFSET]),
                          (size_t)atoll(r->field[A_NBYTES]), flags, len);
}

static void check_reads(const tsv_row *r)
{
    char path[512];
    size_t len, want_len;
    unsigned char *file = array_file(r->field[A_NAME], ".npy", &len);
    size_t nbytes = (size_t)atoll(r->field[A_NBYTES]);
    unsigned char *got = malloc(nbytes + 1);
    unsigned flags;
    int back;

    array_path(path, sizeof path, r->field[A_NAME]);
    for (back = 0; back < BACK_COUNT; back++)
        for (flags = 0; flags < 4; flags++) {
            hostile h;
            npyio_stream *s;
            npyio_reader *reader = open_reader(back, path, file, len, &h, &s);
            unsigned char *want = expected(r, file, flags, &want_len);

            assert_int_equal(want_len, nbytes);
            memset(got, 0xEE, nbytes + 1);
            assert_ok(npyio_reader_read(reader, got, nbytes + 1, flags));
            if (memcmp(got, want, nbytes) != 0)
                fail_msg("%s via %s, flags %u: data differs from NumPy's",
                         r->field[A_NAME], back_names[back], flags);
            assert_int_equal(got[nbytes], 0xEE); /* nothing past the end */
            close_reader(reader, s);
            /* The allocating read, through the same back end. */
            reader = open_reader(back, path, file, len, &h, &s);
            {
                void *data = NULL;
                size_t n = 0;

                assert_ok(npyio_reader_read_alloc(reader, flags, &data, &n));
                assert_int_equal(n, nbytes);
                assert_memory_equal(data, want, nbytes);
                npyio_free(data);
            }
            close_reader(reader, s);
            free(want);
        }
    free(got);
    free(file);
}

/* Written back from the parsed header and the stored bytes, the file is
 * np.save's, byte for byte; and through a path too. */
static void check_write(const tsv_row *r)
{
    size_t len, out_len, saved_len;
    unsigned char *file = array_file(r->field[A_NAME], ".npy", &len);
    npyio_header *h = NULL;
    npyio_stream *s = NULL;
    npyio_writer *w = NULL;
    void *out = NULL;
    char path[64];
    unsigned char *saved;
    FILE *f;
    size_t offset = (size_t)atoll(r->field[A_OFFSET]);

    assert_ok(npyio_header_parse(file, len, NULL, &h, NULL));
    assert_ok(npyio_stream_create_memory(NULL, &s));
    assert_ok(npyio_writer_create_stream(s, h, 0, NULL, &w));
    assert_ok(npyio_writer_write(w, file + offset, len - offset));
    assert_ok(npyio_writer_close(w));
    assert_ok(npyio_stream_take_bytes(s, &out, &out_len));
    assert_int_equal(out_len, len);
    if (memcmp(out, file, len) != 0)
        fail_msg("%s: written bytes differ from np.save's", r->field[A_NAME]);
    npyio_free(out);
    assert_ok(npyio_stream_close(s));
    if (strcmp(r->field[A_OBJECT], "0") == 0) {
        array_scratch_path(path, sizeof path, "arrays");
        assert_ok(npyio_save_with_header(path, h, file + offset,
                             (size_t)npyio_header_nbytes(h), 0, NULL));
        f = fopen(path, "rb");
        saved = malloc(len + 1);
        saved_len = fread(saved, 1, len + 1, f);
        fclose(f);
        unlink(path);
        assert_int_equal(saved_len, len);
        assert_memory_equal(saved, file, len);
        free(saved);
    }
    npyio_header_free(h);
    free(file);
}

/* npyio_dtype_swap and npyio_dtype_new_byteorder against the conversions
 * NumPy's data was built with: file bytes -> native, and native bytes ->
 * little- and big-endian. */
static void check_swap(const tsv_row *r)
{
    static const char orders[2] = {'<', '>'};
    static const char *const suffix[2] = {".le.bin", ".be.bin"};
    size_t len, want_len, nbytes = (size_t)atoll(r->field[A_NBYTES]);
    size_t offset = (size_t)atoll(r->field[A_OFFSET]);
    unsigned char *file = array_file(r->field[A_NAME], ".npy", &len);
    unsigned char *native, *want, *data = malloc(nbytes + 1);
    npyio_header *h = NULL;
    const npyio_dtype *dt;
    int k;

    assert_ok(npyio_header_parse(file, len, NULL, &h, NULL));
    dt = npyio_header_dtype(h);
    native = array_file(r->field[A_NAME], suffix[host_order() == '>'],
                        &want_len);
    assert_int_equal(want_len, nbytes);
    memcpy(data, file + offset, nbytes);
    assert_ok(npyio_dtype_swap(dt, data, nbytes));
    if (memcmp(data, native, nbytes) != 0)
        fail_msg("%s: swap to native differs from NumPy's", r->field[A_NAME]);
    for (k = 0; k < 2; k++) {
        npyio_dtype *target = NULL, *nat = NULL;

        assert_ok(npyio_dtype_new_byteorder(dt, orders[k], &target));
        want = array_file(r->field[A_NAME], suffix[k], &want_len);
        memcpy(data, native, nbytes);
        assert_ok(npyio_dtype_swap(target, data, nbytes));
        if (memcmp(data, want, nbytes) != 0)
            fail_msg("%s: native -> '%c' differs from NumPy's",
                     r->field[A_NAME], orders[k]);
        /* A type is native exactly when it equals its native form. */
        assert_ok(npyio_dtype_new_native(target, &nat));
        assert_int_equal(npyio_dtype_is_native(target),
                         npyio_dtype_is_equal(target, nat));
        if (orders[k] == host_order())
            assert_true(npyio_dtype_is_native(target));
        npyio_dtype_unref(nat);
        npyio_dtype_unref(target);
        free(want);
    }
    if (nbytes > 0 && npyio_dtype_itemsize(dt) > 1)
        assert_status(npyio_dtype_swap(dt, data, nbytes - 1),
                      NPYIO_E_INVALID_ARG);
    npyio_header_free(h);
    free(native);
    free(data);
    free(file);
}

static void test_numpy_arrays(void **state)
{
    tsv_table t;
    size_t i;

    (void)state;
    arrays_manifest(&t);
    assert_true(t.count >= 40);
    for (i = 0; i < t.count; i++) {
        const tsv_row *r = &t.rows[i];

        assert_int_equal(r->count, A_COLUMNS);
        print_message("%s\n", r->field[A_NAME]);
        if (strcmp(r->field[A_OBJECT], "0") == 0) {
            check_reads(r);
            check_swap(r);
        }
        check_write(r);
    }
    tsv_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numpy_arrays),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
