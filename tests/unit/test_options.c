/*
 * test_options.c - the options handle (limits, allocator tables) and the
 * library's one allocation path: every allocation is seen by the caller's
 * allocator, blocks remember their allocator, sizes and limits are checked
 * before anything is allocated.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* ---- a counting allocator ------------------------------------------------ */

struct counter {
    int allocs, reallocs, frees;
    size_t live_bytes;
    size_t last_alignment;
    int fail_after; /* fail the allocation after this many; -1: never */
};

static void *count_alloc(void *user, size_t size, size_t alignment)
{
    struct counter *c = user;
    void *p = NULL;

    if (c->fail_after >= 0 && c->allocs >= c->fail_after)
        return NULL;
    if (posix_memalign(&p, alignment, size) != 0)
        return NULL;
    c->allocs++;
    c->live_bytes += size;
    c->last_alignment = alignment;
    return p;
}

static void *count_realloc(void *user, void *ptr, size_t old_size,
                           size_t new_size, size_t alignment)
{
    struct counter *c = user;
    void *p = count_alloc(user, new_size, alignment);

    if (p == NULL)
        return NULL;
    c->allocs--; /* counted as a realloc, not an alloc */
    c->reallocs++;
    memcpy(p, ptr, old_size < new_size ? old_size : new_size);
    c->live_bytes -= old_size;
    free(ptr);
    return p;
}

static void count_free(void *user, void *ptr, size_t size)
{
    struct counter *c = user;

    c->frees++;
    c->live_bytes -= size;
    free(ptr);
}

static const npyio_allocator counting = {
    sizeof(npyio_allocator), count_alloc, NULL, count_free};
static const npyio_allocator counting_realloc = {
    sizeof(npyio_allocator), count_alloc, count_realloc, count_free};

static npyio_options *options_with(const npyio_allocator *a, struct counter *c)
{
    npyio_options *o = NULL;

    c->fail_after = -1;
    assert_ok(npyio_options_new(&o));
    assert_ok(npyio_options_set_allocator(o, a, c));
    return o;
}

/* ---- limits ----------------------------------------------------------------- */

static void test_default_limits(void **state)
{
    static const struct {
        npyio_limit which;
        int64_t value;
    } defaults[] = {
        {NPYIO_LIMIT_HEADER_SIZE, 10000},
        {NPYIO_LIMIT_NDIM, 64},
        {NPYIO_LIMIT_DEPTH, 32},
        {NPYIO_LIMIT_NPZ_MEMBERS, INT64_MAX},
        {NPYIO_LIMIT_NPZ_MEMBER_BYTES, INT64_MAX},
        {NPYIO_LIMIT_NPZ_RATIO, 1100},
        {NPYIO_LIMIT_ALLOC_BYTES, INT64_MAX},
        {NPYIO_LIMIT_NPZ_TOTAL_BYTES, INT64_MAX},
        {NPYIO_LIMIT_THREADS, 1},
    };
    npyio_options *o = NULL;
    int64_t value;
    size_t i;

    (void)state;
    assert_ok(npyio_options_new(&o));
    for (i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
        assert_ok(npyio_options_get_limit(NULL, defaults[i].which, &value));
        assert_int_equal(value, defaults[i].value);
        assert_ok(npyio_options_get_limit(o, defaults[i].which, &value));
        assert_int_equal(value, defaults[i].value);
    }
    npyio_options_free(o);
}

static void test_set_and_get_limit(void **state)
{
    npyio_options *o = NULL;
    int64_t value = -1;

    (void)state;
    assert_ok(npyio_options_new(&o));
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_NDIM, 3));
    assert_ok(npyio_options_get_limit(o, NPYIO_LIMIT_NDIM, &value));
    assert_int_equal(value, 3);
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_DEPTH, 0));
    assert_ok(npyio_options_get_limit(o, NPYIO_LIMIT_DEPTH, &value));
    assert_int_equal(value, 0);
    /* Other limits and other handles keep their defaults. */
    assert_ok(npyio_options_get_limit(o, NPYIO_LIMIT_HEADER_SIZE, &value));
    assert_int_equal(value, 10000);
    assert_ok(npyio_options_get_limit(NULL, NPYIO_LIMIT_NDIM, &value));
    assert_int_equal(value, 64);
    npyio_options_free(o);
}

/* The untrusted preset sets exactly the documented values, and only
 * those: a caller's thread count survives it (1.1; 1.0 reset it to 1). */
static void test_untrusted_preset(void **state)
{
    static const struct {
        npyio_limit which;
        int64_t value;
    } preset[] = {
        {NPYIO_LIMIT_HEADER_SIZE, 10000},
        {NPYIO_LIMIT_NDIM, 32},
        {NPYIO_LIMIT_DEPTH, 16},
        {NPYIO_LIMIT_NPZ_MEMBERS, 4096},
        {NPYIO_LIMIT_NPZ_MEMBER_BYTES, 268435456},
        {NPYIO_LIMIT_NPZ_RATIO, 1100},
        {NPYIO_LIMIT_ALLOC_BYTES, 268435456 + 1048576},
        {NPYIO_LIMIT_NPZ_TOTAL_BYTES, 1073741824},
    };
    npyio_options *o = NULL;
    int64_t value;
    size_t i;

    (void)state;
    assert_ok(npyio_options_new(&o));
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_NDIM, 3));
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_THREADS, 4));
    assert_ok(npyio_options_set_untrusted(o));
    for (i = 0; i < sizeof preset / sizeof preset[0]; i++) {
        assert_ok(npyio_options_get_limit(o, preset[i].which, &value));
        assert_int_equal(value, preset[i].value);
    }
    assert_ok(npyio_options_get_limit(o, NPYIO_LIMIT_THREADS, &value));
    assert_int_equal(value, 4);
    assert_status(npyio_options_set_untrusted(NULL), NPYIO_E_INVALID_ARG);
    npyio_options_free(o);
}

static void test_bad_limit_calls(void **state)
{
    npyio_options *o = NULL;
    int64_t value = 7;

    (void)state;
    assert_ok(npyio_options_new(&o));
    assert_status(npyio_options_set_limit(o, NPYIO_LIMIT_NDIM, -1),
                  NPYIO_E_INVALID_ARG);
    assert_string_equal(npyio_last_error(), "npyio_options_set_limit: "
                        "NPYIO_LIMIT_NDIM cannot be negative (-1 given)");
    assert_status(npyio_options_set_limit(o, 0, 1), NPYIO_E_INVALID_ARG);
    assert_error_contains("limit 0 is not known");
    assert_status(npyio_options_set_limit(o, 10, 1), NPYIO_E_INVALID_ARG);
    assert_error_contains("limit 10 is not known");
    assert_status(npyio_options_set_limit(o, -5, 1), NPYIO_E_INVALID_ARG);
    assert_status(npyio_options_set_limit(NULL, NPYIO_LIMIT_NDIM, 1),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("options is NULL");
    assert_status(npyio_options_get_limit(o, NPYIO_LIMIT_NDIM, NULL),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("value is NULL");
    assert_status(npyio_options_get_limit(o, 77, &value), NPYIO_E_INVALID_ARG);
    assert_int_equal(value, 0);
    /* The failed set left the limit alone. */
    assert_ok(npyio_options_get_limit(o, NPYIO_LIMIT_NDIM, &value));
    assert_int_equal(value, 64);
    assert_status(npyio_options_new(NULL), NPYIO_E_INVALID_ARG);
    npyio_options_free(o);
    npyio_options_free(NULL);
}

/* A pointer to something that is not an options handle is refused. */
static void test_wrong_handle_is_refused(void **state)
{
    uint64_t not_options[16] = {0};
    int64_t value;

    (void)state;
    assert_status(npyio_options_set_limit((npyio_options *)not_options,
                                          NPYIO_LIMIT_NDIM, 1),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("is not a live npyio_options handle");
    assert_status(npyio_options_get_limit((npyio_options *)not_options,
                                          NPYIO_LIMIT_NDIM, &value),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_options_set_allocator((npyio_options *)not_options,
                                              NULL, NULL),
                  NPYIO_E_INVALID_ARG);
    npyio_options_free((npyio_options *)not_options); /* ignored */
    assert_int_equal(not_options[0], 0);
}

/* ---- allocator tables -------------------------------------------------------- */

/* A table as a program built against a newer header would pass it: ours
 * followed by members this version does not know. */
struct newer_allocator {
    npyio_allocator known;
    void (*future_callback)(void *);
    void *future_pointer;
};

static void future_callback(void *p)
{
    (void)p;
}

static void test_allocator_table_checks(void **state)
{
    struct counter c = {0};
    npyio_options *o = NULL;
    npyio_allocator short_table = counting;
    npyio_allocator no_alloc = counting;
    npyio_allocator no_free = counting;
    npyio_allocator garbage_size = counting;
    struct newer_allocator newer = {counting, NULL, NULL};

    (void)state;
    assert_ok(npyio_options_new(&o));
    short_table.size = offsetof(npyio_allocator, free);
    assert_status(npyio_options_set_allocator(o, &short_table, &c),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("the table needs at least");
    garbage_size.size = SIZE_MAX / 2;
    assert_status(npyio_options_set_allocator(o, &garbage_size, &c),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("which no version's table has");
    no_alloc.alloc = NULL;
    assert_status(npyio_options_set_allocator(o, &no_alloc, &c),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("alloc is NULL");
    no_free.free = NULL;
    assert_status(npyio_options_set_allocator(o, &no_free, &c),
                  NPYIO_E_INVALID_ARG);
    assert_error_contains("free is NULL");

    /* A longer table is fine while the members we do not know are empty. */
    newer.known.size = sizeof newer;
    assert_ok(npyio_options_set_allocator(o, &newer.known, &c));
    newer.future_callback = future_callback;
    assert_status(npyio_options_set_allocator(o, &newer.known, &c),
                  NPYIO_E_UNSUPPORTED);
    assert_error_contains("sets members beyond");
    npyio_options_free(o);
}

/* ---- allocation through the helper ------------------------------------------ */

static void test_counting_allocator_sees_every_allocation(void **state)
{
    struct counter c;
    npyio_options *o;
    npyio__mem mem;
    void *blocks[5];
    size_t i;

    (void)state;
    memset(&c, 0, sizeof c);
    o = options_with(&counting, &c);
    npyio__mem_init(&mem, o);
    npyio_options_free(o); /* the context and blocks outlive the options */
    for (i = 0; i < 5; i++) {
        assert_ok(npyio__alloc(&mem, i * 100, "test block", &blocks[i]));
        assert_non_null(blocks[i]);
        assert_int_equal((uintptr_t)blocks[i] % NPYIO__SMALL_ALIGN, 0);
        assert_int_equal(npyio__block_size(blocks[i]), i * 100);
        memset(blocks[i], 0xAB, i * 100);
    }
    assert_int_equal(c.allocs, 5);
    assert_true(c.live_bytes >= 1000);
    for (i = 0; i < 5; i++)
        npyio_free(blocks[i]);
    assert_int_equal(c.frees, 5);
    assert_int_equal(c.live_bytes, 0); /* free was told the right sizes */
    npyio_free(NULL);
    assert_int_equal(c.frees, 5);
}

static void test_large_blocks_ask_for_huge_page_alignment(void **state)
{
    struct counter c;
    npyio_options *o;
    npyio__mem mem;
    void *small, *medium, *large;

    (void)state;
    memset(&c, 0, sizeof c);
    o = options_with(&counting, &c);
    npyio__mem_init(&mem, o);
    npyio_options_free(o);
    assert_ok(npyio__alloc(&mem, 1000, "small", &small));
    assert_int_equal(c.last_alignment, NPYIO__SMALL_ALIGN);
    assert_int_equal((uintptr_t)small % NPYIO__SMALL_ALIGN, 0);
    assert_ok(npyio__alloc(&mem, NPYIO__MEDIUM_THRESHOLD, "medium", &medium));
    assert_int_equal(c.last_alignment, NPYIO__BLOCK_ALIGN);
    assert_int_equal((uintptr_t)medium % NPYIO__BLOCK_ALIGN, 0);
    assert_ok(npyio__alloc(&mem, NPYIO__HUGE_THRESHOLD, "large", &large));
    assert_int_equal(c.last_alignment, NPYIO__HUGE_ALIGN);
    /* The caller's pointer itself, not only the allocator's block. */
    assert_int_equal((uintptr_t)large % NPYIO__HUGE_ALIGN, 0);
    npyio_free(small);
    npyio_free(medium);
    npyio_free(large);
    assert_int_equal(c.live_bytes, 0);
}

static void test_default_allocator(void **state)
{
    npyio__mem mem;
    void *block, *big;

    (void)state;
    npyio__mem_init(&mem, NULL);
    assert_ok(npyio__alloc_zero(&mem, 4096, "zeroed", &block));
    assert_int_equal(((unsigned char *)block)[4095], 0);
    assert_int_equal((uintptr_t)block % NPYIO__SMALL_ALIGN, 0);
    assert_ok(npyio__realloc(&mem, &block, 8192, "grown"));
    assert_int_equal(((unsigned char *)block)[4095], 0);
    assert_int_equal(npyio__block_size(block), 8192);
    assert_ok(npyio__alloc(&mem, 5u << 20, "huge", &big));
    assert_int_equal((uintptr_t)big % NPYIO__HUGE_ALIGN, 0);
    memset(big, 1, 5u << 20);
    npyio_free(big);
    npyio_free(block);
}

/* npyio_reader_read_alloc's promise: large buffers 2 MiB aligned. */
static void test_read_alloc_buffers_are_2mib_aligned(void **state)
{
    int64_t n = (int64_t)1 << 20; /* 8 MiB of doubles */
    npyio_dtype *dt = NULL;
    npyio_header *h = NULL;
    npyio_stream *s = NULL;
    npyio_reader *r = NULL;
    unsigned char *file;
    size_t len = 0;
    void *data = NULL;

    (void)state;
    assert_ok(npyio_dtype_parse("<f8", 3, NULL, &dt));
    assert_ok(npyio_header_new(dt, 1, &n, 0, &h));
    len = (size_t)npyio_header_data_offset(h) + (size_t)npyio_header_nbytes(h);
    file = calloc(len, 1);
    assert_non_null(file);
    assert_ok(npyio_header_emit(h, 0, file, len, NULL));
    assert_ok(npyio_stream_open_memory(file, len, NULL, &s));
    assert_ok(npyio_reader_open_stream(s, NULL, &r));
    assert_ok(npyio_reader_read_alloc(r, 0, &data, NULL));
    assert_int_equal((uintptr_t)data % ((uintptr_t)2 << 20), 0);
    npyio_free(data);
    assert_ok(npyio_reader_close(r));
    assert_ok(npyio_stream_close(s));
    free(file);
    npyio_header_free(h);
    npyio_dtype_unref(dt);
}

static void test_limits_and_overflow_are_checked_first(void **state)
{
    struct counter c;
    npyio_options *o;
    npyio__mem mem;
    void *block = (void *)&c;

    (void)state;
    memset(&c, 0, sizeof c);
    o = options_with(&counting, &c);
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_ALLOC_BYTES, 1000));
    npyio__mem_init(&mem, o);
    npyio_options_free(o);

    assert_ok(npyio__alloc(&mem, 1000, "at the limit", &block));
    npyio_free(block);
    assert_status(npyio__alloc(&mem, 1001, "header text", &block),
                  NPYIO_E_LIMIT);
    assert_null(block);
    assert_string_equal(npyio_last_error(),
                        "header text: 1001 bytes needed, above the allocation "
                        "limit of 1000 bytes (NPYIO_LIMIT_ALLOC_BYTES)");
    assert_status(npyio__alloc_array(&mem, SIZE_MAX / 2, 3, "shape", &block),
                  NPYIO_E_OVERFLOW);
    assert_error_contains("shape: ");
    assert_error_contains("do not fit this host's address space");

    npyio__mem_init(&mem, NULL);
    assert_status(npyio__alloc(&mem, SIZE_MAX - 10, "everything", &block),
                  NPYIO_E_OVERFLOW);
    assert_null(block);
    assert_int_equal(c.allocs, 1); /* refused requests reached no allocator */
}

static void test_allocator_failure_is_nomem(void **state)
{
    struct counter c;
    npyio_options *o;
    npyio__mem mem;
    void *block = NULL, *other = NULL;

    (void)state;
    memset(&c, 0, sizeof c);
    o = options_with(&counting_realloc, &c);
    npyio__mem_init(&mem, o);
    npyio_options_free(o);
    assert_ok(npyio__alloc(&mem, 10, "first", &block));
    memcpy(block, "0123456789", 10);
    c.fail_after = 1;
    assert_status(npyio__alloc(&mem, 64, "dtype fields", &other),
                  NPYIO_E_NOMEM);
    assert_string_equal(npyio_last_error(),
                        "dtype fields: allocating 64 bytes failed");
    /* A failed resize leaves the block as it was. */
    assert_status(npyio__realloc(&mem, &block, 100, "growth"), NPYIO_E_NOMEM);
    assert_memory_equal(block, "0123456789", 10);
    assert_int_equal(npyio__block_size(block), 10);
    c.fail_after = -1;
    assert_ok(npyio__realloc(&mem, &block, 10000, "growth"));
    assert_int_equal(c.reallocs, 1); /* the allocator's own realloc */
    assert_memory_equal(block, "0123456789", 10);
    /* Into another alignment class: allocate, copy, free instead. */
    assert_ok(npyio__realloc(&mem, &block, 100000, "growth"));
    assert_int_equal(c.reallocs, 1);
    assert_int_equal(c.last_alignment, NPYIO__BLOCK_ALIGN);
    assert_memory_equal(block, "0123456789", 10);
    assert_ok(npyio__realloc(&mem, &block, 5, "shrink"));
    assert_memory_equal(block, "01234", 5);
    npyio_free(block);
    assert_int_equal(c.live_bytes, 0);
}

/* Without a realloc callback, resizing allocates, copies and frees through
 * the allocator that made the block. */
static void test_realloc_without_callback(void **state)
{
    struct counter c;
    npyio_options *o;
    npyio__mem mem;
    void *block = NULL;
    size_t i;

    (void)state;
    memset(&c, 0, sizeof c);
    o = options_with(&counting, &c);
    npyio__mem_init(&mem, o);
    npyio_options_free(o);
    assert_ok(npyio__realloc(&mem, &block, 16, "new"));
    for (i = 0; i < 16; i++)
        ((unsigned char *)block)[i] = (unsigned char)i;
    assert_ok(npyio__realloc(&mem, &block, 5u << 20, "grown past huge"));
    for (i = 0; i < 16; i++)
        assert_int_equal(((unsigned char *)block)[i], i);
    assert_int_equal(c.allocs, 2);
    assert_int_equal(c.frees, 1);
    assert_int_equal(c.last_alignment, NPYIO__HUGE_ALIGN);
    npyio_free(block);
    assert_int_equal(c.live_bytes, 0);
}

static void test_restore_default_allocator(void **state)
{
    struct counter c;
    npyio_options *o;
    npyio__mem mem;
    void *block;

    (void)state;
    memset(&c, 0, sizeof c);
    o = options_with(&counting, &c);
    assert_ok(npyio_options_set_allocator(o, NULL, NULL));
    npyio__mem_init(&mem, o);
    npyio_options_free(o);
    assert_ok(npyio__alloc(&mem, 100, "default", &block));
    npyio_free(block);
    assert_int_equal(c.allocs, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_limits),
        cmocka_unit_test(test_set_and_get_limit),
        cmocka_unit_test(test_bad_limit_calls),
        cmocka_unit_test(test_untrusted_preset),
        cmocka_unit_test(test_wrong_handle_is_refused),
        cmocka_unit_test(test_allocator_table_checks),
        cmocka_unit_test(test_counting_allocator_sees_every_allocation),
        cmocka_unit_test(test_large_blocks_ask_for_huge_page_alignment),
        cmocka_unit_test(test_default_allocator),
        cmocka_unit_test(test_read_alloc_buffers_are_2mib_aligned),
        cmocka_unit_test(test_limits_and_overflow_are_checked_first),
        cmocka_unit_test(test_allocator_failure_is_nomem),
        cmocka_unit_test(test_realloc_without_callback),
        cmocka_unit_test(test_restore_default_allocator),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
