/*
 * test_caller_edges.c - what callers may hand the library at the edges of
 * its contracts (issue 28): allocators that fail every request, return
 * blocks without the alignment asked for, or move every block they
 * resize; and every limit at 0, 1 and INT64_MAX for every kind of read.
 * Each ends in a clear status or the right data, with every block given
 * back (run under ASan and UBSan in CI).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "testdata.h"

/* ---- allocators ------------------------------------------------------------------ */

typedef struct tally {
    long live;  /* blocks handed out and not freed */
    long moves; /* reallocs (each one moved its block) */
} tally;

/* Blocks 8 bytes off the alignment asked for: the first 8 bytes of the
 * real block hold nothing, free() steps back over them. */
static void *misaligned_alloc(void *user, size_t size, size_t alignment)
{
    tally *t = user;
    size_t total = (size + 8 + alignment - 1) / alignment * alignment;
    unsigned char *raw = aligned_alloc(alignment, total);

    if (raw == NULL)
        return NULL;
    t->live++;
    return raw + 8;
}

static void misaligned_free(void *user, void *ptr, size_t size)
{
    tally *t = user;

    (void)size;
    t->live--;
    free((unsigned char *)ptr - 8);
}

static void *null_alloc(void *user, size_t size, size_t alignment)
{
    (void)user;
    (void)size;
    (void)alignment;
    return NULL;
}

static void *aligned_block(void *user, size_t size, size_t alignment)
{
    tally *t = user;
    void *p = aligned_alloc(alignment, (size + alignment - 1) / alignment *
                                           alignment);

    if (p != NULL)
        t->live++;
    return p;
}

/* Every resize moves: a new block, the contents copied, the old one
 * scribbled over and freed (a pointer kept into it would read 0xDD, or
 * ASan would report the use after free). */
static void *moving_realloc(void *user, void *ptr, size_t old_size,
                            size_t new_size, size_t alignment)
{
    tally *t = user;
    void *p = aligned_block(user, new_size, alignment);

    if (p == NULL)
        return NULL;
    memcpy(p, ptr, old_size < new_size ? old_size : new_size);
    memset(ptr, 0xDD, old_size);
    free(ptr);
    t->live--;
    t->moves++;
    return p;
}

static void counted_free(void *user, void *ptr, size_t size)
{
    tally *t = user;

    (void)size;
    t->live--;
    free(ptr);
}

static npyio_options *with_allocator(const npyio_allocator *a, tally *t)
{
    npyio_options *o = NULL;

    assert_ok(npyio_options_new(&o));
    assert_ok(npyio_options_set_allocator(o, a, t));
    return o;
}

static char sample[1024], keys_npz[1024];

static int setup(void **state)
{
    (void)state;
    snprintf(sample, sizeof sample, "%s/sample.npy", NPYIO_TEST_DATA_DIR);
    snprintf(keys_npz, sizeof keys_npz, "%s/npz/keys.npz",
             NPYIO_TEST_DATA_DIR);
    return 0;
}

/* An allocator that returns blocks off the alignment asked for: refused
 * at once (the block prefix and the data rely on it), each block given
 * back. */
static void test_misaligned_allocator(void **state)
{
    static const npyio_allocator a = {sizeof a, misaligned_alloc, NULL,
                                      misaligned_free};
    tally t = {0, 0};
    npyio_options *o = with_allocator(&a, &t);
    npyio_header *h = NULL;
    npyio_dtype *dt = NULL;
    void *data = NULL;

    (void)state;
    assert_status(npyio_load_with_header(sample, 0, o, &h,
                                         &data), NPYIO_E_INVALID_ARG);
    assert_error_contains("the caller's allocator returned a block that is "
                          "not aligned to 16 bytes, as it was asked");
    assert_null(h);
    assert_null(data);
    assert_status(npyio_dtype_parse("[('a', '<i4')]", 14, o, &dt),
                  NPYIO_E_INVALID_ARG);
    assert_null(dt);
    assert_int_equal(t.live, 0);
    npyio_options_free(o);
}

/* An allocator that never gives memory: NPYIO_E_NOMEM wherever memory is
 * needed, nothing half made. */
static void test_allocator_without_memory(void **state)
{
    static const npyio_allocator a = {sizeof a, null_alloc, NULL,
                                      counted_free};
    tally t = {0, 0};
    npyio_options *o = with_allocator(&a, &t);
    npyio_header *h = NULL;
    npyio_dtype *dt = NULL;
    npyio_npz *z = NULL;
    npyio_reader *r = NULL;
    void *data = NULL;

    (void)state;
    assert_status(npyio_load_with_header(sample, 0, o, &h,
                                         &data), NPYIO_E_NOMEM);
    assert_status(npyio_reader_open_path(sample, o, &r), NPYIO_E_NOMEM);
    assert_status(npyio_dtype_parse("[('a', '<i4')]", 14, o, &dt),
                  NPYIO_E_NOMEM);
    assert_status(npyio_npz_open_path(keys_npz, o, &z), NPYIO_E_NOMEM);
    assert_status(npz_load_key(keys_npz, "plain", o, &data, NULL),
                  NPYIO_E_NOMEM);
    assert_null(data);
    assert_null(dt);
    assert_null(z);
    assert_null(r);
    assert_int_equal(t.live, 0);
    npyio_options_free(o);
}

/* A realloc that always moves the block: everything the library keeps
 * across a resize is found again (a record of 3000 fields, a pipe read
 * whole as it arrives, an archive's members); the results equal those of
 * the default allocator. */
static void test_moving_realloc(void **state)
{
    static const npyio_allocator a = {sizeof a, aligned_block,
                                      moving_realloc, counted_free};
    tally t = {0, 0};
    npyio_options *o = with_allocator(&a, &t);
    npyio_record_builder *b = NULL;
    npyio_dtype *i4 = NULL, *rec = NULL;
    npyio_header *h0 = NULL;
    npyio_stream *s = NULL;
    npyio_reader *r = NULL;
    unsigned char *file;
    void *data = NULL, *data0 = NULL;
    size_t len = 0, got = 0, i;
    char name[16];

    (void)state;
    assert_ok(npyio_dtype_parse("'<i4'", 5, NULL, &i4));
    assert_ok(npyio_record_builder_new(0, o, &b));
    for (i = 0; i < 3000; i++) {
        snprintf(name, sizeof name, "f%zu", i);
        assert_ok(npyio_record_builder_add(b, name, NULL, -1, i4, 0, NULL));
    }
    assert_ok(npyio_record_builder_finish(b, 0, &rec));
    assert_int_equal(npyio_dtype_field_count(rec), 3000);
    assert_int_equal(npyio_dtype_field_offset(rec, 2999), 4 * 2999);
    assert_string_equal(npyio_dtype_field_name(rec, 2999, NULL), "f2999");
    npyio_dtype_unref(rec);
    npyio_record_builder_free(b);
    /* A stream that cannot seek, read whole: the buffer grows. */
    file = read_data_file("sample.npy", &len);
    assert_ok(npyio_load_with_header(sample, 0, NULL, &h0, &data0));
    assert_ok(npyio_stream_open_memory(file, len, o, &s));
    assert_ok(npyio_reader_open_stream(s, o, &r));
    assert_ok(npyio_reader_read_alloc(r, 0, &data, &got));
    assert_int_equal(got, (size_t)npyio_header_nbytes(h0));
    assert_memory_equal(data, data0, got);
    npyio_free(data);
    data = NULL;
    assert_ok(npyio_reader_close(r));
    assert_ok(npyio_stream_close(s));
    free(file);
    /* An archive's member. */
    assert_ok(npz_load_key(keys_npz, "plain", o, &data, NULL));
    assert_non_null(data);
    npyio_free(data);
    npyio_free(data0);
    npyio_header_free(h0);
    npyio_dtype_unref(i4);
    npyio_options_free(o);
    assert_true(t.moves > 0);
    assert_int_equal(t.live, 0);
}

/* ---- limits ------------------------------------------------------------------------ */

/* Every limit at 0, 1 and INT64_MAX, for a whole load, chunks, rows, a map
 * and an archive's member: a status each (never a crash); at INT64_MAX
 * every read succeeds, and a limit of 0 or 1 that does not bind changes
 * nothing. */
static void test_every_limit_at_its_edges(void **state)
{
    static const int64_t values[3] = {0, 1, INT64_MAX};
    npyio_limit which;
    size_t v;

    (void)state;
    for (which = NPYIO_LIMIT_HEADER_SIZE; which <= NPYIO_LIMIT_THREADS;
         which++)
        for (v = 0; v < 3; v++) {
            npyio_options *o = NULL;
            npyio_header *h = NULL;
            npyio_reader *r = NULL;
            npyio_map *m = NULL;
            void *data = NULL;
            unsigned char buf[256];
            size_t got = 0;
            npyio_status st[5];
            int k;

            assert_ok(npyio_options_new(&o));
            if (npyio_options_set_limit(o, which, values[v]) != NPYIO_OK) {
                /* A value the limit cannot take (NPYIO_LIMIT_DEPTH above
                 * 256): refused, named. */
                assert_error_contains("NPYIO_LIMIT_");
                assert_error_contains("can be at most");
                npyio_options_free(o);
                continue;
            }
            st[0] = npyio_load_with_header(sample, 0, o, &h, &data);
            npyio_free(data);
            npyio_header_free(h);
            st[1] = npyio_reader_open_path(sample, o, &r);
            if (st[1] == NPYIO_OK) {
                do
                    st[1] = npyio_reader_read_chunk(r, buf, 16, 0, &got);
                while (st[1] == NPYIO_OK);
                if (st[1] == NPYIO_END)
                    st[1] = NPYIO_OK;
                npyio_reader_close(r);
            }
            st[2] = npyio_reader_open_path(sample, o, &r);
            if (st[2] == NPYIO_OK) {
                st[2] = npyio_reader_read_rows(r, 1, 2, buf, sizeof buf,
                                               NPYIO_READ_NATIVE);
                npyio_reader_close(r);
            }
            st[3] = npyio_map_open_path(sample, 0, o, &m);
            npyio_map_close(m);
            h = NULL;
            data = NULL;
            st[4] = npz_load_key(keys_npz, "plain", o, &data, NULL);
            npyio_free(data);
            for (k = 0; k < 5; k++) {
                if (values[v] == INT64_MAX && st[k] != NPYIO_OK)
                    fail_msg("limit %d at INT64_MAX: read %d gave %s (%s)",
                             (int)which, k, npyio_status_string(st[k]),
                             npyio_last_error());
                if (st[k] != NPYIO_OK && st[k] != NPYIO_E_LIMIT)
                    fail_msg("limit %d at %lld: read %d gave %s (%s)",
                             (int)which, (long long)values[v], k,
                             npyio_status_string(st[k]), npyio_last_error());
            }
            npyio_options_free(o);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_misaligned_allocator),
        cmocka_unit_test(test_allocator_without_memory),
        cmocka_unit_test(test_moving_realloc),
        cmocka_unit_test(test_every_limit_at_its_edges),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
