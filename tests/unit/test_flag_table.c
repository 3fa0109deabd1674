/*
 * test_flag_table.c - every public flag is refused, by name, by every call
 * that does not take it, before the call does anything: no file appears,
 * none changes. The table below lists each call that takes flags with the
 * flags it takes; tests/abi/check_names.py checks that the table and the
 * flag list agree with the header (every call with a flags parameter is
 * here, with the flags its documentation names), so a new call or flag
 * cannot be forgotten.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "scratch.h"

/* Every public flag (checked against the header by check_names.py). */
static const struct {
    uint32_t bit;
    const char *name;
} all_flags[] = {
#define FLAG(name) {name, #name}
    FLAG(NPYIO_READ_NATIVE),         FLAG(NPYIO_READ_C_ORDER),
    FLAG(NPYIO_READ_CAST_SAME_KIND), FLAG(NPYIO_READ_CAST_UNSAFE),
    FLAG(NPYIO_WRITE_NO_SYNC),       FLAG(NPYIO_WRITE_UNKNOWN_ROWS),
    FLAG(NPYIO_WRITE_WAIT_FOR_LOCK), FLAG(NPYIO_MAP_WRITE),
    FLAG(NPYIO_MAP_SPARSE),          FLAG(NPYIO_NPZ_WRITE_NO_ALIGN),
    FLAG(NPYIO_RECORD_ALIGNED),      FLAG(NPYIO_STREAM_READ),
    FLAG(NPYIO_STREAM_WRITE),        FLAG(NPYIO_WRITE_REPLACE),
    FLAG(NPYIO_NPZ_WRITE_ZLIB),
#undef FLAG
};

static const double d[6] = {1, 2, 3, 4, 5, 6};
static const int64_t two[1] = {2}, row[2] = {1, 3};
static char npy[128], npz[128], fresh_npy[128], fresh_npz[128],
    scratch_tmp[128];
static npyio_header *h23; /* '<f8' (2, 3), the file npy's */

static npyio_header *row_header(void)
{
    return make_header("=f8", 2, row, 0);
}

/* ---- one invoker per call: the call with `flags`, everything it makes
 * released again ---------------------------------------------------------- */

static npyio_status call_save(uint32_t f)
{
    return npyio_save(fresh_npy, "=f8", 1, two, d, 16, f, NULL);
}

static npyio_status call_append(uint32_t f)
{
    return npyio_append(npy, "=f8", 2, row, d, 24, f, NULL);
}

static npyio_status call_savez(uint32_t f)
{
    return npyio_savez(fresh_npz, 0, NULL, NULL, NULL, NULL, NULL, NULL,
                       NULL, f, NULL);
}

static npyio_status call_savez_with_header(uint32_t f)
{
    return npyio_savez_with_header(fresh_npz, 0, NULL, NULL, NULL, NULL,
                                   NULL, f, NULL);
}

static npyio_status call_savez_append(uint32_t f)
{
    return npyio_savez_append(npz, "k", "=f8", 1, two, d, 16, 0, f, NULL);
}

static npyio_status call_record_builder_new(uint32_t f)
{
    npyio_record_builder *b = NULL;
    npyio_status st = npyio_record_builder_new(f, NULL, &b);

    npyio_record_builder_free(b);
    return st;
}

static npyio_status call_header_new_as_read(uint32_t f)
{
    npyio_header *out = NULL;
    npyio_status st = npyio_header_new_as_read(h23, f, &out);

    npyio_header_free(out);
    return st;
}

static npyio_status call_load_with_header(uint32_t f)
{
    npyio_header *h = NULL;
    void *data = NULL;
    npyio_status st = npyio_load_with_header(npy, f, NULL, &h, &data);

    npyio_header_free(h);
    npyio_free(data);
    return st;
}

/* The reader calls, on a fresh reader of npy each. */
static npyio_status call_reader(uint32_t f, int which)
{
    npyio_reader *r = NULL;
    double buf[6];
    void *data = NULL;
    size_t got = 0;
    npyio_status st = npyio_reader_open_path(npy, NULL, &r);

    assert_ok(st);
    if (which == 0)
        st = npyio_reader_read(r, buf, sizeof buf, f);
    else if (which == 1)
        st = npyio_reader_read_alloc(r, f, &data, &got);
    else if (which == 2)
        st = npyio_reader_read_chunk(r, buf, sizeof buf, f, &got);
    else
        st = npyio_reader_read_rows(r, 0, 1, buf, sizeof buf, f);
    npyio_free(data);
    npyio_reader_close(r);
    return st;
}

static npyio_status call_reader_read(uint32_t f) { return call_reader(f, 0); }
static npyio_status call_reader_read_alloc(uint32_t f)
{
    return call_reader(f, 1);
}
static npyio_status call_reader_read_chunk(uint32_t f)
{
    return call_reader(f, 2);
}
static npyio_status call_reader_read_rows(uint32_t f)
{
    return call_reader(f, 3);
}

static npyio_status call_writer_create_path(uint32_t f)
{
    npyio_writer *w = NULL;
    npyio_status st = npyio_writer_create_path(fresh_npy, h23, f, NULL, &w);

    npyio_writer_abort(w);
    return st;
}

static npyio_status call_writer_create_stream(uint32_t f)
{
    npyio_stream *s = NULL;
    npyio_writer *w = NULL;
    npyio_status st;

    assert_ok(npyio_stream_create_memory(NULL, &s));
    st = npyio_writer_create_stream(s, h23, f, NULL, &w);
    npyio_writer_abort(w);
    npyio_stream_close(s);
    return st;
}

static npyio_status call_writer_open_append_path(uint32_t f)
{
    npyio_header *rows = row_header();
    npyio_writer *w = NULL;
    npyio_status st = npyio_writer_open_append_path(npy, rows, f, NULL, &w);

    npyio_writer_abort(w);
    npyio_header_free(rows);
    return st;
}

static npyio_status call_writer_open_in_place_path(uint32_t f)
{
    npyio_writer *w = NULL;
    npyio_status st = npyio_writer_open_in_place_path(npy, f, NULL, &w);

    npyio_writer_abort(w);
    return st;
}

/* The stream forms, on a read-write stream over npy or npz (and an empty
 * read-write file as the archive's temporary). */
static npyio_status call_on_stream(uint32_t f, int which)
{
    npyio_stream *s = NULL, *tmp = NULL;
    npyio_header *rows = row_header();
    npyio_writer *w = NULL;
    npyio_npz_writer *z = NULL;
    npyio_status st;

    assert_ok(npyio_stream_open_path(which == 2 ? npz : npy,
                                     NPYIO_STREAM_READ | NPYIO_STREAM_WRITE,
                                     NULL, &s));
    assert_ok(npyio_stream_open_path(scratch_tmp, NPYIO_STREAM_WRITE, NULL,
                                     &tmp));
    assert_ok(npyio_stream_close(tmp));
    assert_ok(npyio_stream_open_path(scratch_tmp, NPYIO_STREAM_READ |
                                     NPYIO_STREAM_WRITE, NULL, &tmp));
    if (which == 0)
        st = npyio_writer_open_append_stream(s, rows, f, NULL, &w);
    else if (which == 1)
        st = npyio_writer_open_in_place_stream(s, f, NULL, &w);
    else
        st = npyio_npz_writer_open_append_stream(s, tmp, f, NULL, &z);
    npyio_writer_abort(w);
    npyio_npz_writer_abort(z);
    npyio_stream_close(tmp);
    npyio_stream_close(s);
    npyio_header_free(rows);
    return st;
}

static npyio_status call_writer_open_append_stream(uint32_t f)
{
    return call_on_stream(f, 0);
}
static npyio_status call_writer_open_in_place_stream(uint32_t f)
{
    return call_on_stream(f, 1);
}
static npyio_status call_npz_writer_open_append_stream(uint32_t f)
{
    return call_on_stream(f, 2);
}

static npyio_status call_save_with_header(uint32_t f)
{
    return npyio_save_with_header(fresh_npy, h23, d, 48, f, NULL);
}

static npyio_status call_map_open_path(uint32_t f)
{
    npyio_map *m = NULL;
    npyio_status st = npyio_map_open_path(npy, f, NULL, &m);

    npyio_map_close(m);
    return st;
}

static npyio_status call_map_create_path(uint32_t f)
{
    npyio_map *m = NULL;
    npyio_status st = npyio_map_create_path(fresh_npy, h23, f, NULL, &m);

    npyio_map_close(m);
    return st;
}

static npyio_status call_stream_open_path(uint32_t f)
{
    npyio_stream *s = NULL;
    /* Writing would truncate: a fresh file then. */
    npyio_status st = npyio_stream_open_path(
        (f & NPYIO_STREAM_WRITE) != 0 ? fresh_npy : npy, f, NULL, &s);

    npyio_stream_close(s);
    return st;
}

/* The bytes of a memory stream saved as fresh.npy below the scratch
 * folder. */
static npyio_status call_stream_save_under(uint32_t f)
{
    npyio_stream *s = NULL;
    npyio_status st;

    assert_ok(npyio_stream_open_memory(d, sizeof d, NULL, &s));
    st = npyio_stream_save_under(s, dir, "fresh.npy", f, NULL);
    npyio_stream_close(s);
    return st;
}

/* The conversions: npyio_load_as, and on an archive opened once,
 * npyio_npz_load_as; npyio_reader_set_type on a fresh reader. */
static npyio_status call_load_as(uint32_t f)
{
    void *data = NULL;
    size_t len = 0;
    int ndim = 0;
    int64_t shape[4];
    npyio_status st = npyio_load_as(npy, "f4", f, NULL, &data, &len, &ndim,
                                    shape, 4);

    npyio_free(data);
    return st;
}

static npyio_status call_npz_load_as(uint32_t f)
{
    npyio_npz *z = NULL;
    void *data = NULL;
    size_t len = 0;
    int ndim = 0;
    int64_t shape[4];
    npyio_status st;

    assert_ok(npyio_npz_open_path(npz, NULL, &z));
    st = npyio_npz_load_as(z, 0, "f4", f, &data, &len, &ndim, shape, 4);
    npyio_free(data);
    npyio_npz_close(z);
    return st;
}

static npyio_status call_reader_set_type(uint32_t f)
{
    npyio_reader *r = NULL;
    npyio_status st;

    assert_ok(npyio_reader_open_path(npy, NULL, &r));
    st = npyio_reader_set_type(r, "f4", f);
    npyio_reader_close(r);
    return st;
}

static npyio_status call_npz_writer_create_path(uint32_t f)
{
    npyio_npz_writer *w = NULL;
    npyio_status st = npyio_npz_writer_create_path(fresh_npz, f, NULL, &w);

    npyio_npz_writer_abort(w);
    return st;
}

static npyio_status call_npz_writer_create_stream(uint32_t f)
{
    npyio_stream *s = NULL;
    npyio_npz_writer *w = NULL;
    npyio_status st;

    assert_ok(npyio_stream_create_memory(NULL, &s));
    st = npyio_npz_writer_create_stream(s, f, NULL, &w);
    npyio_npz_writer_abort(w);
    npyio_stream_close(s);
    return st;
}

static npyio_status call_npz_writer_open_append_path(uint32_t f)
{
    npyio_npz_writer *w = NULL;
    npyio_status st = npyio_npz_writer_open_append_path(npz, f, NULL, &w);

    npyio_npz_writer_abort(w);
    return st;
}

/* The calls on an archive writer: each on a fresh one of fresh_npz,
 * aborted (so fresh_npz never appears). */
static npyio_status call_member(uint32_t f, int which)
{
    npyio_npz_writer *z = NULL;
    npyio_writer *w = NULL;
    npyio_stream *s = NULL;
    npyio_status st;

    assert_ok(npyio_npz_writer_create_path(fresh_npz, 0, NULL, &z));
    if (which == 0)
        st = npyio_writer_create_member(z, "k", h23, 0, f, &w);
    else if (which == 1)
        st = npyio_npz_writer_add(z, "k", "=f8", 1, two, d, 16, 0, f);
    else if (which == 2)
        st = npyio_npz_writer_add_with_header(z, "k", h23, d, 48, 0, f);
    else {
        assert_ok(npyio_stream_open_path(npy, NPYIO_STREAM_READ, NULL, &s));
        st = npyio_npz_writer_add_npy(z, "k", s, 0, f);
    }
    npyio_writer_abort(w);
    npyio_stream_close(s);
    npyio_npz_writer_abort(z);
    return st;
}

static npyio_status call_writer_create_member(uint32_t f)
{
    return call_member(f, 0);
}
static npyio_status call_npz_writer_add(uint32_t f) { return call_member(f, 1); }
static npyio_status call_npz_writer_add_with_header(uint32_t f)
{
    return call_member(f, 2);
}
static npyio_status call_npz_writer_add_npy(uint32_t f)
{
    return call_member(f, 3);
}

/* ---- the table ------------------------------------------------------------ */

typedef struct flag_call {
    const char *name;
    uint32_t takes;
    npyio_status (*call)(uint32_t flags);
} flag_call;

/* One line per call: FLAG_CALL(function, the flags it takes), each flag
 * by name (abi_names reads them; NPYIO_NPZ_WRITE_ZLIB has
 * NPYIO_NPZ_WRITE_NO_ALIGN's scope). */
#define FLAG_CALL(fn, takes) {#fn, takes, call_##fn}
static const flag_call table[] = {
    FLAG_CALL(save, NPYIO_WRITE_NO_SYNC),
    FLAG_CALL(append, NPYIO_WRITE_NO_SYNC | NPYIO_WRITE_WAIT_FOR_LOCK),
    FLAG_CALL(savez, NPYIO_WRITE_NO_SYNC | NPYIO_NPZ_WRITE_NO_ALIGN |
                         NPYIO_NPZ_WRITE_ZLIB),
    FLAG_CALL(savez_with_header, NPYIO_WRITE_NO_SYNC |
                                     NPYIO_NPZ_WRITE_NO_ALIGN |
                                     NPYIO_NPZ_WRITE_ZLIB),
    FLAG_CALL(savez_append, NPYIO_WRITE_NO_SYNC | NPYIO_NPZ_WRITE_NO_ALIGN |
                                NPYIO_NPZ_WRITE_ZLIB |
                                NPYIO_WRITE_WAIT_FOR_LOCK),
    FLAG_CALL(record_builder_new, NPYIO_RECORD_ALIGNED),
    FLAG_CALL(header_new_as_read, NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER),
    FLAG_CALL(load_with_header, NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER),
    FLAG_CALL(reader_read, NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER),
    FLAG_CALL(reader_read_alloc, NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER),
    FLAG_CALL(reader_read_chunk, NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER),
    FLAG_CALL(reader_read_rows, NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER),
    FLAG_CALL(writer_create_path,
              NPYIO_WRITE_NO_SYNC | NPYIO_WRITE_UNKNOWN_ROWS),
    FLAG_CALL(writer_create_stream, NPYIO_WRITE_UNKNOWN_ROWS),
    FLAG_CALL(writer_open_append_path,
              NPYIO_WRITE_NO_SYNC | NPYIO_WRITE_WAIT_FOR_LOCK),
    FLAG_CALL(writer_open_in_place_path,
              NPYIO_WRITE_NO_SYNC | NPYIO_WRITE_WAIT_FOR_LOCK),
    FLAG_CALL(writer_open_append_stream,
              NPYIO_WRITE_NO_SYNC | NPYIO_WRITE_WAIT_FOR_LOCK),
    FLAG_CALL(writer_open_in_place_stream,
              NPYIO_WRITE_NO_SYNC | NPYIO_WRITE_WAIT_FOR_LOCK),
    FLAG_CALL(npz_writer_open_append_stream,
              NPYIO_NPZ_WRITE_NO_ALIGN | NPYIO_NPZ_WRITE_ZLIB |
                  NPYIO_WRITE_WAIT_FOR_LOCK),
    FLAG_CALL(save_with_header, NPYIO_WRITE_NO_SYNC),
    FLAG_CALL(map_open_path, NPYIO_MAP_WRITE | NPYIO_WRITE_NO_SYNC),
    FLAG_CALL(map_create_path, NPYIO_WRITE_NO_SYNC | NPYIO_MAP_SPARSE),
    FLAG_CALL(stream_open_path, NPYIO_STREAM_READ | NPYIO_STREAM_WRITE),
    FLAG_CALL(stream_save_under, NPYIO_WRITE_NO_SYNC | NPYIO_WRITE_REPLACE),
    FLAG_CALL(load_as, NPYIO_READ_CAST_SAME_KIND | NPYIO_READ_CAST_UNSAFE),
    FLAG_CALL(npz_load_as,
              NPYIO_READ_CAST_SAME_KIND | NPYIO_READ_CAST_UNSAFE),
    FLAG_CALL(reader_set_type,
              NPYIO_READ_CAST_SAME_KIND | NPYIO_READ_CAST_UNSAFE),
    FLAG_CALL(npz_writer_create_path, NPYIO_WRITE_NO_SYNC |
                                          NPYIO_NPZ_WRITE_NO_ALIGN |
                                          NPYIO_NPZ_WRITE_ZLIB),
    FLAG_CALL(npz_writer_create_stream,
              NPYIO_NPZ_WRITE_NO_ALIGN | NPYIO_NPZ_WRITE_ZLIB),
    FLAG_CALL(npz_writer_open_append_path, NPYIO_WRITE_NO_SYNC |
                                               NPYIO_NPZ_WRITE_NO_ALIGN |
                                               NPYIO_NPZ_WRITE_ZLIB |
                                               NPYIO_WRITE_WAIT_FOR_LOCK),
    FLAG_CALL(writer_create_member, NPYIO_WRITE_UNKNOWN_ROWS),
    FLAG_CALL(npz_writer_add, 0),
    FLAG_CALL(npz_writer_add_with_header, 0),
    FLAG_CALL(npz_writer_add_npy, 0),
};

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = malloc(1 << 16);

    assert_non_null(f);
    *len = fread(buf, 1, 1 << 16, f);
    fclose(f);
    return buf;
}

static void assert_untouched(const char *path, const char *before,
                             size_t len)
{
    size_t now_len = 0;
    char *now = slurp(path, &now_len);

    assert_int_equal(now_len, len);
    assert_memory_equal(now, before, len);
    free(now);
}

static void test_every_flag_refused_where_it_does_not_belong(void **state)
{
    size_t i, k, npy_len, npz_len, refused = 0;
    char *npy_before = slurp(npy, &npy_len), *npz_before = slurp(npz,
                                                                 &npz_len);
    char want[160];

    (void)state;
    for (i = 0; i < sizeof table / sizeof table[0]; i++)
        for (k = 0; k < sizeof all_flags / sizeof all_flags[0]; k++) {
            if ((table[i].takes & all_flags[k].bit) != 0)
                continue;
            assert_status(table[i].call(all_flags[k].bit),
                          NPYIO_E_INVALID_ARG);
            snprintf(want, sizeof want, "npyio_%s: flag %s (0x%x) is not "
                     "one this function takes", table[i].name,
                     all_flags[k].name, (unsigned)all_flags[k].bit);
            assert_error_contains(want);
            assert_int_equal(access(fresh_npy, F_OK), -1);
            assert_int_equal(access(fresh_npz, F_OK), -1);
            assert_untouched(npy, npy_before, npy_len);
            assert_untouched(npz, npz_before, npz_len);
            refused++;
        }
    assert_true(refused > 150);
    free(npy_before);
    free(npz_before);
}

/* The flags a call takes are not refused as foreign (whatever else the
 * call then does with them). */
static void test_every_flag_taken_where_it_belongs(void **state)
{
    size_t i, k;

    (void)state;
    for (i = 0; i < sizeof table / sizeof table[0]; i++)
        for (k = 0; k < sizeof all_flags / sizeof all_flags[0]; k++) {
            if ((table[i].takes & all_flags[k].bit) == 0)
                continue;
            if (table[i].call(all_flags[k].bit | NPYIO_WRITE_NO_SYNC *
                              ((table[i].takes & NPYIO_WRITE_NO_SYNC) != 0))
                != NPYIO_OK)
                assert_null(strstr(npyio_last_error(), "is not one this "
                                   "function takes"));
            unlink(fresh_npy);
            unlink(fresh_npz);
        }
}

static void test_flags_are_distinct_bits(void **state)
{
    size_t i, k;

    (void)state;
    for (i = 0; i < sizeof all_flags / sizeof all_flags[0]; i++) {
        uint32_t b = all_flags[i].bit;

        assert_true(b != 0 && (b & (b - 1)) == 0);
        for (k = i + 1; k < sizeof all_flags / sizeof all_flags[0]; k++)
            assert_true(b != all_flags[k].bit);
    }
}

static int setup(void **state)
{
    if (scratch_make("npyio-flag-table") != 0)
        return -1;
    path_in_dir(npy, sizeof npy, "a.npy");
    path_in_dir(npz, sizeof npz, "z.npz");
    path_in_dir(fresh_npy, sizeof fresh_npy, "fresh.npy");
    path_in_dir(fresh_npz, sizeof fresh_npz, "fresh.npz");
    path_in_dir(scratch_tmp, sizeof scratch_tmp, "temporary.bin");
    h23 = make_header("=f8", 2, (const int64_t[]){2, 3}, 0);
    if (npyio_save_with_header(npy, h23, d, 48, NPYIO_WRITE_NO_SYNC,
                               NULL) != NPYIO_OK ||
        npyio_savez_with_header(npz, 1, (const char *const[]){"x"},
                                (const npyio_header *const[]){h23},
                                (const void *const[]){d},
                                (const size_t[]){48}, NULL,
                                NPYIO_WRITE_NO_SYNC, NULL) != NPYIO_OK)
        return -1;
    (void)state;
    return 0;
}

static int teardown(void **state)
{
    npyio_header_free(h23);
    return scratch_remove(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flags_are_distinct_bits),
        cmocka_unit_test(test_every_flag_refused_where_it_does_not_belong),
        cmocka_unit_test(test_every_flag_taken_where_it_belongs),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
