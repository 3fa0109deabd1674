/*
 * test_alloc.c - the caller's allocator is the only one used: every call
 * given options allocates through their allocator, and every call given a
 * dtype or header made with them (and no options) allocates like it.
 *
 * Two checks, around each sequence of public calls:
 *  - a counting allocator installed on the options records each block it
 *    hands out; what the library returns or keeps (dtypes at every depth,
 *    headers, data) must lie in one of them, and once everything is
 *    released none may be left;
 *  - the C library's allocator must not be called at all meanwhile. Seen
 *    without LD_PRELOAD: where the linker has --wrap, this program's
 *    references to malloc, calloc, realloc, posix_memalign, aligned_alloc
 *    and free (the library's included: it is linked in statically) go
 *    through counting wrappers. Allocations made inside the C library
 *    itself (opendir()) are not seen.
 *
 * The default allocator remains only where there is no handle (built-in
 * dtypes, npyio_dtype_new_scalar()); headers for built-in dtypes are therefore
 * made before a sequence starts. minizip, which writes the structure of
 * .npz archives, allocates with the C library's malloc() and has no hook
 * for another allocator (documented at npyio_options_set_allocator());
 * being a shared library, its calls are not seen here, and zlib's go
 * through the caller's allocator (zalloc).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "testdata.h"
#include "header.h" /* the dtype and header structs, to walk them */
#include "platform.h" /* the fault hook: the buffered copy of an append */

/* ---- the counting allocator -------------------------------------------------- */

#define MAX_BLOCKS 8192

typedef struct live_block {
    unsigned char *base;
    size_t size;
} live_block;

typedef struct counter {
    size_t calls;    /* alloc and realloc */
    size_t frees;
    size_t bad;      /* frees of blocks it did not hand out, wrong sizes */
    size_t live;     /* blocks handed out and not freed */
    live_block blocks[MAX_BLOCKS];
} counter;

static counter tally;
/* In the counting allocator: its own calls of the C library. (volatile:
 * the compiler knows aligned_alloc() and free() as built-ins that touch
 * no variable of ours, and would move these updates across them.) */
static volatile int inside;

static void *count_alloc(void *user, size_t size, size_t alignment)
{
    counter *c = user;
    size_t rounded = (size + alignment - 1) / alignment * alignment;
    void *p;

    if (c->live == MAX_BLOCKS)
        return NULL;
    inside++;
    p = aligned_alloc(alignment, rounded); /* a multiple, as C11 asks */
    inside--;
    if (p == NULL)
        return NULL;
    c->calls++;
    c->blocks[c->live].base = p;
    c->blocks[c->live].size = size;
    c->live++;
    return p;
}

static size_t find_block(const counter *c, const void *ptr)
{
    size_t i;

    for (i = 0; i < c->live; i++)
        if (c->blocks[i].base == ptr)
            return i;
    return SIZE_MAX;
}

static void count_free(void *user, void *ptr, size_t size)
{
    counter *c = user;
    size_t i = find_block(c, ptr);

    if (i == SIZE_MAX || c->blocks[i].size != size) {
        c->bad++;
        return;
    }
    c->blocks[i] = c->blocks[--c->live];
    c->frees++;
    inside++;
    free(ptr);
    inside--;
}

static void *count_realloc(void *user, void *ptr, size_t old_size,
                           size_t new_size, size_t alignment)
{
    counter *c = user;
    size_t i = find_block(c, ptr),
           rounded = (new_size + alignment - 1) / alignment * alignment;
    void *p;

    if (i == SIZE_MAX || c->blocks[i].size != old_size) {
        c->bad++;
        return NULL;
    }
    inside++;
    p = aligned_alloc(alignment, rounded);
    if (p != NULL) {
        memcpy(p, ptr, old_size < new_size ? old_size : new_size);
        free(ptr);
    }
    inside--;
    if (p == NULL)
        return NULL;
    c->calls++;
    c->blocks[i].base = p;
    c->blocks[i].size = new_size;
    return p;
}

static const npyio_allocator counting = {sizeof counting, count_alloc,
                                         count_realloc, count_free};

/* Does p lie in a block the counting allocator handed out? (Its end
 * included: the library's block of 0 bytes points there, after the
 * prefix where the library keeps the block's allocator.) */
static bool ours(const void *p)
{
    const unsigned char *q = p;
    size_t i;

    for (i = 0; i < tally.live; i++)
        if (q >= tally.blocks[i].base &&
            q <= tally.blocks[i].base + tally.blocks[i].size)
            return true;
    return false;
}

/* ---- calls to the C library's allocator ------------------------------------- */

static volatile int armed;
static volatile size_t stray;

#ifdef NPYIO_TEST_WRAP_MALLOC
void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *ptr, size_t size);
int __real_posix_memalign(void **ptr, size_t alignment, size_t size);
void *__real_aligned_alloc(size_t alignment, size_t size);
void __real_free(void *ptr);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *ptr, size_t size);
int __wrap_posix_memalign(void **ptr, size_t alignment, size_t size);
void *__wrap_aligned_alloc(size_t alignment, size_t size);
void __wrap_free(void *ptr);

static void note(void)
{
    if (armed && !inside)
        stray++;
}

void *__wrap_malloc(size_t size)
{
    note();
    return __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
    note();
    return __real_calloc(n, size);
}

void *__wrap_realloc(void *ptr, size_t size)
{
    note();
    return __real_realloc(ptr, size);
}

int __wrap_posix_memalign(void **ptr, size_t alignment, size_t size)
{
    note();
    return __real_posix_memalign(ptr, alignment, size);
}

void *__wrap_aligned_alloc(size_t alignment, size_t size)
{
    note();
    return __real_aligned_alloc(alignment, size);
}

void __wrap_free(void *ptr)
{
    if (ptr != NULL)
        note();
    __real_free(ptr);
}
#endif

/* A sequence of calls: between begin() and end(), no call of the C
 * library's allocator and no bad free. */
static void begin(void)
{
    stray = 0;
    armed = 1;
}

#define end(what)                                                            \
    do {                                                                     \
        armed = 0;                                                           \
        if (stray != 0)                                                      \
            fail_msg("%s: %zu calls of the C library's allocator (malloc, "  \
                     "free, ...) beside the caller's", (what), stray);       \
        if (tally.bad != 0)                                                  \
            fail_msg("%s: %zu frees of blocks the caller's allocator did "   \
                     "not make", (what), tally.bad);                         \
    } while (0)

/* Everything released: no block of the caller's allocator is left. */
#define assert_all_freed()                                                   \
    do {                                                                     \
        assert_true(tally.calls > 0);                                        \
        if (tally.live != 0)                                                 \
            fail_msg("%zu blocks of the caller's allocator were not freed",  \
                     tally.live);                                            \
        assert_int_equal(tally.bad, 0);                                      \
    } while (0)

/* Every dtype in dt that is not a static built-in is the allocator's. */
static void assert_dtype_ours(const npyio_dtype *dt, const char *what)
{
    size_t i;

    if (dt->immortal)
        return;
    if (!ours(dt))
        fail_msg("%s: a dtype of kind '%c' (%zu bytes) is not from the "
                 "caller's allocator", what, (char)dt->kind, dt->itemsize);
    if (dt->base != NULL)
        assert_dtype_ours(dt->base, what);
    for (i = 0; i < dt->field_count; i++)
        assert_dtype_ours(dt->fields[i].dtype, what);
}

static void assert_header_ours(const npyio_header *h, const char *what)
{
    if (!ours(h))
        fail_msg("%s: the header is not from the caller's allocator", what);
    assert_dtype_ours(h->dtype, what);
}

static void assert_block_ours(const void *p, const char *what)
{
    if (!ours(p))
        fail_msg("%s: the block is not from the caller's allocator", what);
}

/* ---- fixtures --------------------------------------------------------------- */

static npyio_options *opts;
static char paths[4][64];

static int setup(void **state)
{
    int i;

    (void)state;
    memset(&tally, 0, sizeof tally);
    armed = 0;
    for (i = 0; i < 4; i++)
        snprintf(paths[i], sizeof paths[i], "/tmp/npyio-alloc-%ld-%d.npy",
                 (long)getpid(), i);
    if (npyio_options_new(&opts) != NPYIO_OK ||
        npyio_options_set_allocator(opts, &counting, &tally) != NPYIO_OK)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    int i;

    (void)state;
    armed = 0;
    npyio_options_free(opts);
    opts = NULL;
    for (i = 0; i < 4; i++)
        unlink(paths[i]);
    return 0;
}

/* Nested records with titles, subarrays (of fields, and as a field's
 * descr), names that need decoding, and non-built-in scalars. */
static const char nested_descr[] =
    "[(('Title A', 'a'), '<i4', (2, 3)),"
    " ('b', [('x', '>f8'), ('y', '<U40', (2,))]),"
    " ('c', ('>i2', (4,))),"
    " ('d\\u00e9', '>M8[25s]'),"
    " ('e', '>U100')]";

static npyio_dtype *descr(const char *text, const npyio_options *o)
{
    npyio_dtype *dt = NULL;

    assert_ok(npyio_dtype_parse(text, strlen(text), o, &dt));
    return dt;
}

static npyio_header *header_of(npyio_dtype *dt, int ndim,
                               const int64_t *shape, int fortran)
{
    npyio_header *h = NULL;

    assert_ok(npyio_header_new(dt, ndim, shape, fortran, &h));
    return h;
}

/* ---- dtypes ----------------------------------------------------------------- */

static void test_dtype_from_descr(void **state)
{
    static const char *const texts[] = {
        "<U100",                       /* a type string, not built in */
        "'>M8[25s]'",                  /* a literal */
        "i4, (2,3)f8, S100, 3U",       /* a record of numbered fields */
        "'i4,\\x20(2,)f8,\\x20u2,\\x20i8,\\x20f4,\\x20S3,\\x20U5,"
        "\\x20m8[25s],\\x20c16'",      /* decoded: escapes, > 64 bytes */
        nested_descr,
    };
    npyio_dtype *dt[sizeof texts / sizeof texts[0]];
    size_t i;

    (void)state;
    begin();
    for (i = 0; i < sizeof dt / sizeof dt[0]; i++)
        dt[i] = descr(texts[i], opts);
    end("npyio_dtype_parse");
    for (i = 0; i < sizeof dt / sizeof dt[0]; i++) {
        assert_false(dt[i]->immortal);
        assert_dtype_ours(dt[i], texts[i]);
    }
    begin();
    for (i = 0; i < sizeof dt / sizeof dt[0]; i++)
        npyio_dtype_unref(dt[i]);
    end("npyio_dtype_unref");
    assert_all_freed();
}

static void test_dtypes_derived(void **state)
{
    npyio_dtype *rec = descr(nested_descr, opts), *u100 = descr(">U100", opts);
    npyio_dtype *out[5] = {NULL, NULL, NULL, NULL, NULL};
    static const int64_t shape[2] = {2, 3};
    unsigned char data[8192];
    size_t i;

    (void)state;
    assert_true(npyio_dtype_itemsize(rec) * 6 <= sizeof data);
    memset(data, 0x5a, sizeof data);
    begin();
    assert_ok(npyio_dtype_new_byteorder(rec, '>', &out[0]));
    assert_ok(npyio_dtype_new_native(rec, &out[1]));
    assert_ok(npyio_dtype_new_byteorder(u100, '<', &out[2]));
    assert_ok(npyio_dtype_new_subarray(rec, 2, shape, &out[3]));
    assert_ok(npyio_dtype_new_native(out[3], &out[4]));
    assert_ok(npyio_dtype_swap(rec, data, 2 * npyio_dtype_itemsize(rec)));
    assert_ok(npyio_dtype_swap(u100, data, npyio_dtype_itemsize(u100)));
    assert_ok(npyio_dtype_swap(out[3], data, npyio_dtype_itemsize(out[3])));
    end("derived dtypes and swaps");
    for (i = 0; i < 5; i++)
        assert_dtype_ours(out[i], "a derived dtype");
    begin();
    for (i = 0; i < 5; i++)
        npyio_dtype_unref(out[i]);
    npyio_dtype_unref(rec);
    npyio_dtype_unref(u100);
    end("npyio_dtype_unref");
    assert_all_freed();
}

static void test_record_builder(void **state)
{
    npyio_dtype *f8 = descr("<f8", NULL); /* built in: no allocator */
    npyio_dtype *rec = descr(nested_descr, opts), *u100 = descr("<U100", opts);
    npyio_dtype *packed = NULL, *aligned = NULL, *swapped = NULL;
    npyio_record_builder *b = NULL, *c = NULL;
    static const int64_t shape[2] = {3, 2};

    (void)state;
    begin();
    assert_ok(npyio_record_builder_new(0, opts, &b));
    assert_ok(npyio_record_builder_add(b, "x", "The x", -1, f8, 2, shape));
    assert_ok(npyio_record_builder_add(b, "text", NULL, -1, u100, 0, NULL));
    assert_ok(npyio_record_builder_add(b, "inner", "Inner", -1, rec, 1,
                                       shape));
    assert_ok(npyio_record_builder_finish(b, 0, &packed));
    assert_ok(npyio_record_builder_new(NPYIO_RECORD_ALIGNED, opts, &c));
    assert_ok(npyio_record_builder_add(c, "p", NULL, -1, packed, 0, NULL));
    assert_ok(npyio_record_builder_add(c, "q", NULL, -1, f8, 1, shape));
    assert_ok(npyio_record_builder_finish(c, 0, &aligned));
    assert_ok(npyio_dtype_new_byteorder(aligned, '>', &swapped));
    npyio_record_builder_free(b);
    npyio_record_builder_free(c);
    end("record builder");
    assert_dtype_ours(packed, "a built record");
    assert_dtype_ours(aligned, "a built aligned record");
    assert_dtype_ours(swapped, "a built record in another order");
    begin();
    npyio_dtype_unref(packed);
    npyio_dtype_unref(aligned);
    npyio_dtype_unref(swapped);
    npyio_dtype_unref(rec);
    npyio_dtype_unref(u100);
    end("npyio_dtype_unref");
    assert_all_freed();
}

/* ---- headers ----------------------------------------------------------------- */

/* A record whose descr is several kB: header text beyond any inline
 * buffer. */
static npyio_dtype *wide_record(void)
{
    npyio_dtype *f4 = descr(">f4", NULL), *dt = NULL;
    npyio_record_builder *b = NULL;
    char name[64];
    int i;

    assert_ok(npyio_record_builder_new(0, opts, &b));
    for (i = 0; i < 300; i++) {
        snprintf(name, sizeof name, "a_rather_long_field_name_%03d", i);
        assert_ok(npyio_record_builder_add(b, name, NULL, -1, f4, 0, NULL));
    }
    assert_ok(npyio_record_builder_finish(b, 0, &dt));
    npyio_record_builder_free(b);
    return dt;
}

static void test_headers(void **state)
{
    npyio_dtype *rec = descr(nested_descr, opts), *wide = wide_record();
    npyio_header *h = NULL, *w = NULL, *parsed = NULL, *parsed_wide = NULL;
    static const int64_t shape[2] = {5, 7};
    unsigned char small[1024];
    unsigned char *big = NULL;
    size_t len = 0, big_len = 0, consumed = 0;

    (void)state;
    /* The wide header is above the default header size limit. */
    assert_ok(npyio_options_set_limit(opts, NPYIO_LIMIT_HEADER_SIZE,
                                      1 << 20));
    big = malloc(65536);
    assert_non_null(big);
    begin();
    assert_ok(npyio_header_new(rec, 2, shape, 1, &h));
    assert_ok(npyio_header_new(wide, 1, shape, 0, &w));
    assert_ok(npyio_header_emit(h, 0, small, sizeof small, &len));
    assert_ok(npyio_header_emit(w, 0, big, 65536, &big_len));
    assert_true(big_len > 4096);
    assert_ok(npyio_header_parse(small, len, opts, &parsed, &consumed));
    assert_int_equal(consumed, len);
    assert_ok(npyio_header_parse(big, big_len, opts, &parsed_wide, NULL));
    assert_ok(npyio_header_emit(parsed_wide, 3, big, 65536, &big_len));
    end("headers");
    assert_header_ours(h, "npyio_header_new");
    assert_header_ours(w, "npyio_header_new (wide)");
    assert_header_ours(parsed, "npyio_header_parse");
    assert_header_ours(parsed_wide, "npyio_header_parse (wide)");
    begin();
    npyio_header_free(h);
    npyio_header_free(w);
    npyio_header_free(parsed);
    npyio_header_free(parsed_wide);
    npyio_dtype_unref(rec);
    npyio_dtype_unref(wide);
    end("npyio_header_free");
    free(big);
    assert_all_freed();
}

/* ---- reading ----------------------------------------------------------------- */

/* (3, 4) records in Fortran order, big-endian: field a of element (i, j)
 * is 10 i + j. */
#define FILE_DESCR "[('a', '>i4'), ('b', '>f8', (2,)), ('c', '>U3')]"
#define ROWS 3
#define COLS 4
#define ITEM 32

static void fortran_big_endian_file(const char *path)
{
    npyio_dtype *dt = descr(FILE_DESCR, opts);
    static const int64_t shape[2] = {ROWS, COLS};
    npyio_header *h = header_of(dt, 2, shape, 1);
    unsigned char data[ROWS * COLS * ITEM];
    int k;

    assert_int_equal(npyio_dtype_itemsize(dt), ITEM);
    memset(data, 0, sizeof data);
    for (k = 0; k < ROWS * COLS; k++) {
        int v = 10 * (k % ROWS) + k / ROWS;

        data[k * ITEM + 3] = (unsigned char)v;
    }
    begin();
    assert_ok(npyio_save_with_header(path, h, data, (size_t)npyio_header_nbytes(h),
                         NPYIO_WRITE_NO_SYNC, opts));
    end("npyio_save_with_header");
    npyio_header_free(h);
    npyio_dtype_unref(dt);
}

static void check_c_order(const unsigned char *data, int first_row,
                          int rows)
{
    int i, j;

    for (i = 0; i < rows; i++)
        for (j = 0; j < COLS; j++) {
            int32_t a;

            memcpy(&a, data + (size_t)(i * COLS + j) * ITEM, 4);
            assert_int_equal(a, 10 * (first_row + i) + j);
        }
}

static void test_reading(void **state)
{
    const uint32_t flags = NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER;
    unsigned char dst[ROWS * COLS * ITEM], chunk[5 * ITEM];
    unsigned char *file = NULL;
    size_t file_len = 0, got = 0, at = 0, len = 0;
    npyio_reader *r = NULL;
    npyio_stream *s = NULL;
    npyio_header *loaded = NULL;
    void *data = NULL, *loaded_data = NULL;
    FILE *f;

    (void)state;
    fortran_big_endian_file(paths[0]);
    f = fopen(paths[0], "rb");
    assert_non_null(f);
    file = malloc(4096);
    assert_non_null(file);
    file_len = fread(file, 1, 4096, f);
    fclose(f);

    begin();
    assert_ok(npyio_reader_open_path(paths[0], opts, &r));
    assert_header_ours(npyio_reader_header(r), "reader's header");
    assert_ok(npyio_reader_read(r, dst, sizeof dst, flags));
    assert_ok(npyio_reader_close(r));
    end("npyio_reader_read");
    check_c_order(dst, 0, ROWS);

    begin();
    assert_ok(npyio_reader_open_path(paths[0], opts, &r));
    assert_ok(npyio_reader_read_alloc(r, flags, &data, &len));
    assert_ok(npyio_reader_close(r));
    end("npyio_reader_read_alloc");
    assert_block_ours(data, "npyio_reader_read_alloc");
    assert_int_equal(len, sizeof dst);
    check_c_order(data, 0, ROWS);

    begin();
    assert_ok(npyio_reader_open_path(paths[0], opts, &r));
    for (;;) {
        npyio_status st = npyio_reader_read_chunk(r, chunk, sizeof chunk,
                                                  flags, &got);

        if (st == NPYIO_END)
            break;
        assert_ok(st);
        assert_true(at + got <= sizeof dst);
        memcpy(dst + at, chunk, got);
        at += got;
    }
    assert_ok(npyio_reader_close(r));
    end("npyio_reader_read_chunk");
    assert_int_equal(at, sizeof dst);
    check_c_order(dst, 0, ROWS);

    begin();
    assert_ok(npyio_reader_open_path(paths[0], opts, &r));
    assert_ok(npyio_reader_read_rows(r, 1, 2, dst, sizeof dst, flags));
    assert_ok(npyio_reader_close(r));
    end("npyio_reader_read_rows");
    check_c_order(dst, 1, 2);

    begin();
    assert_ok(npyio_load_with_header(paths[0], flags, opts, &loaded,
                                     &loaded_data));
    end("npyio_load_with_header");
    assert_header_ours(loaded, "npyio_load_with_header");
    assert_block_ours(loaded_data, "npyio_load_with_header");
    check_c_order(loaded_data, 0, ROWS);

    begin();
    assert_ok(npyio_stream_open_memory(file, file_len, opts, &s));
    assert_ok(npyio_reader_open_stream(s, opts, &r));
    assert_ok(npyio_reader_read(r, dst, sizeof dst, flags));
    assert_ok(npyio_reader_close(r));
    assert_ok(npyio_stream_close(s));
    npyio_free(data);
    npyio_free(loaded_data);
    npyio_header_free(loaded);
    end("reading from memory, and releasing");
    check_c_order(dst, 0, ROWS);
    free(file);
    assert_all_freed();
}

/* ---- writing ----------------------------------------------------------------- */

static void test_writing(void **state)
{
    npyio_dtype *rec = descr(nested_descr, opts);
    npyio_dtype *i4 = descr("=i4", NULL);
    static const int64_t rec_shape[1] = {3}, rows_shape[2] = {2, 3},
                         row_shape[2] = {1, 3}, none_shape[2] = {0, 3};
    npyio_header *rec_h = header_of(rec, 1, rec_shape, 0);
    /* Headers of a built-in dtype have no allocator but the default one:
     * made before the sequences. */
    npyio_header *rows_h = header_of(i4, 2, rows_shape, 0);
    npyio_header *row_h = header_of(i4, 2, row_shape, 0);
    npyio_header *none_h = header_of(i4, 2, none_shape, 0);
    npyio_header *check = NULL;
    unsigned char *rec_data = calloc(3, npyio_dtype_itemsize(rec));
    static const int32_t six[6] = {0, 0, 0, 1, 1, 1}, row[3] = {9, 9, 9};
    npyio_writer *w = NULL;
    npyio_stream *s = NULL;
    void *bytes = NULL, *data = NULL;
    size_t len = 0;
    int i;

    (void)state;
    assert_non_null(rec_data);
    begin();
    assert_ok(npyio_writer_create_path(paths[0], rec_h, NPYIO_WRITE_NO_SYNC, opts,
                                     &w));
    assert_ok(npyio_writer_write(w, rec_data, 3 * npyio_dtype_itemsize(rec)));
    assert_ok(npyio_writer_close(w));
    end("npyio_writer_create_path");

    begin();
    assert_ok(npyio_save_with_header(paths[1], rows_h, six,
                         (size_t)npyio_header_nbytes(rows_h), NPYIO_WRITE_NO_SYNC, opts));
    end("npyio_save_with_header");

    begin(); /* append with room: the header is rewritten in place */
    assert_ok(npyio_writer_open_append_path(paths[1], row_h, NPYIO_WRITE_NO_SYNC,
                                       opts, &w));
    assert_ok(npyio_writer_write(w, row, sizeof row));
    assert_ok(npyio_writer_close(w));
    end("npyio_writer_open_append_path");

    begin(); /* in place */
    assert_ok(npyio_writer_open_in_place_path(paths[1], NPYIO_WRITE_NO_SYNC, opts,
                                         &w));
    assert_ok(npyio_writer_write_rows(w, 0, 1, row, sizeof row));
    assert_ok(npyio_writer_close(w));
    end("npyio_writer_open_in_place_path");

    begin(); /* an unknown row count */
    assert_ok(npyio_writer_create_path(paths[2], none_h,
                                     NPYIO_WRITE_UNKNOWN_ROWS | NPYIO_WRITE_NO_SYNC, opts, &w));
    for (i = 0; i < 4; i++)
        assert_ok(npyio_writer_write(w, row, sizeof row));
    assert_ok(npyio_writer_close(w));
    end("npyio_writer_open_path_rows");

    write_roomless_file(paths[3], 9);
    begin(); /* append without room: rewritten through a temporary */
    assert_ok(npyio_writer_open_append_path(paths[3], row_h, NPYIO_WRITE_NO_SYNC,
                                       opts, &w));
    assert_ok(npyio_writer_write(w, row, sizeof row));
    assert_ok(npyio_writer_close(w));
    end("npyio_writer_open_append_path (rewrite through a temporary)");

    begin(); /* to a growable stream, an unknown row count */
    assert_ok(npyio_stream_create_memory(opts, &s));
    assert_ok(npyio_writer_create_stream(s, none_h, NPYIO_WRITE_UNKNOWN_ROWS,
                                       opts, &w));
    assert_ok(npyio_writer_write(w, row, sizeof row));
    assert_ok(npyio_writer_close(w));
    assert_ok(npyio_stream_take_bytes(s, &bytes, &len));
    assert_ok(npyio_stream_close(s));
    end("npyio_writer_open_stream_rows");
    assert_block_ours(bytes, "npyio_stream_take_bytes");

    /* What was written reads back. */
    assert_ok(npyio_load_with_header(paths[1], 0, NULL, &check, &data));
    assert_int_equal(npyio_header_shape(check)[0], 3);
    assert_int_equal(((int32_t *)data)[0], 9);
    npyio_header_free(check);
    npyio_free(data);
    assert_ok(npyio_load_with_header(paths[2], 0, NULL, &check, &data));
    assert_int_equal(npyio_header_shape(check)[0], 4);
    npyio_header_free(check);
    npyio_free(data);
    assert_ok(npyio_load_with_header(paths[3], 0, NULL, &check, &data));
    assert_int_equal(npyio_header_shape(check)[0], 10);
    /* (rewritten: np.save's layout, where the roomless header was not) */
    assert_int_equal(npyio_header_data_offset(check), 128);
    assert_int_equal(((int32_t *)data)[27], 9);
    npyio_header_free(check);
    npyio_free(data);

    begin();
    npyio_free(bytes);
    npyio_header_free(rec_h);
    npyio_dtype_unref(rec);
    end("releasing");
    npyio_header_free(rows_h);
    npyio_header_free(row_h);
    npyio_header_free(none_h);
    free(rec_data);
    assert_all_freed();
}

/* ---- .npz archives --------------------------------------------------------------- */

/* Writing: every way to add a member, then an append. */
static void write_archive(const char *path, const npyio_header *h,
                          const void *data, size_t len)
{
    npyio_npz_writer *npz = NULL;
    npyio_writer *w = NULL;
    npyio_stream *npy = NULL;

    assert_ok(npyio_save_with_header(paths[1], h, data, len,
                                     NPYIO_WRITE_NO_SYNC, opts));
    assert_ok(npyio_npz_writer_create_path(path, NPYIO_WRITE_NO_SYNC, opts,
                                           &npz));
    assert_ok(npyio_npz_writer_add_with_header(npz, "stored", h, data, len, 0,
                                               0));
    assert_ok(npyio_npz_writer_add_with_header(npz, "deflated", h, data, len,
                                               6, 0));
    assert_ok(npyio_writer_create_member(npz, "rows", h, 1,
                                         NPYIO_WRITE_UNKNOWN_ROWS, &w));
    assert_ok(npyio_writer_write(w, data, len));
    assert_ok(npyio_writer_close(w));
    assert_ok(npyio_stream_open_path(paths[1], NPYIO_STREAM_READ, opts, &npy));
    assert_ok(npyio_npz_writer_add_npy(npz, "file", npy, 9, 0));
    assert_ok(npyio_stream_close(npy));
    assert_ok(npyio_npz_writer_close(npz));
}

/* Reading: each member every way there is; `stored` is mapped (if not
 * NULL), `key` loaded. */
static void read_archive(const char *path, size_t members, size_t len,
                         const char *stored, const char *key)
{
    npyio_npz *npz = NULL;
    npyio_reader *r = NULL;
    npyio_stream *s = NULL;
    npyio_map *m = NULL;
    unsigned char buf[256];
    void *data = NULL;
    size_t i, found = 0, got = 0;

    assert_ok(npyio_npz_open_path(path, opts, &npz));
    assert_int_equal(npyio_npz_count(npz), members);
    for (i = 0; i < members; i++) {
        assert_ok(npyio_reader_open_member(npz, i, &r));
        assert_header_ours(npyio_reader_header(r), "npyio_reader_open_member");
        assert_ok(npyio_reader_read_alloc(r, NPYIO_READ_NATIVE, &data, &got));
        assert_int_equal(got, len);
        assert_block_ours(data, "npyio_reader_read_alloc (member)");
        npyio_free(data);
        assert_ok(npyio_reader_close(r));
        assert_ok(npyio_stream_open_member(npz, i, &s));
        assert_ok(npyio_stream_read(s, buf, sizeof buf, &got));
        assert_ok(npyio_stream_close(s));
        assert_ok(npyio_npz_verify(npz, i));
    }
    if (stored != NULL) {
        assert_ok(npyio_npz_find(npz, stored, &found, NULL));
        assert_ok(npyio_map_open_member(npz, found, &m));
        assert_header_ours(npyio_map_header(m), "npyio_map_open_member");
    }
    assert_ok(npyio_npz_close(npz));
    assert_ok(npyio_map_close(m));
    assert_ok(npz_load_key(path, key, opts, &data, NULL));
    assert_block_ours(data, "npyio_npz_load");
    npyio_free(data);
}

/* Force the append's copy of the archive through a buffer, as on systems
 * without copy_file_range(): the buffer is the caller's too. */
static int no_kernel_copy(void *ctx, const char *call)
{
    (void)ctx;
    return strcmp(call, "copy_file_range") == 0 ? EXDEV : 0;
}

static void append_archive(const char *path, const npyio_header *h,
                           const void *data, size_t len, int buffered)
{
    npyio_npz_writer *npz = NULL;

    npyio__options_set_faults(opts, buffered ? no_kernel_copy : NULL, NULL);
    assert_ok(npyio_npz_writer_open_append_path(path, NPYIO_WRITE_NO_SYNC,
                                                opts, &npz));
    npyio__options_set_faults(opts, NULL, NULL);
    assert_ok(npyio_npz_writer_add_with_header(npz,
                                               buffered ? "more2" : "more", h,
                                               data, len, 3, 0));
    assert_ok(npyio_npz_writer_close(npz));
}

static void test_npz(void **state)
{
    npyio_dtype *rec = descr(nested_descr, opts);
    static const int64_t shape[1] = {3};
    npyio_header *h = header_of(rec, 1, shape, 0);
    const char *keys[2] = {"a", "b"};
    const npyio_header *hs[2];
    const void *ds[2];
    size_t len = (size_t)npyio_header_nbytes(h), lens[2];
    unsigned char *data = calloc(1, len);
    char path[80];

    (void)state;
    assert_non_null(data);
    snprintf(path, sizeof path, "%s.npz", paths[0]);
    hs[0] = hs[1] = h;
    ds[0] = ds[1] = data;
    lens[0] = lens[1] = len;
    begin();
    write_archive(path, h, data, len);
    read_archive(path, 4, len, "stored", "deflated");
    append_archive(path, h, data, len, 0);
    append_archive(path, h, data, len, 1);
    read_archive(path, 6, len, "stored", "more2");
    assert_ok(npyio_savez_with_header(path, 2, keys, hs, ds, lens, (const int[]){6, 6},
                             NPYIO_WRITE_NO_SYNC, opts));
    read_archive(path, 2, len, NULL, "b");
    npyio_header_free(h);
    npyio_dtype_unref(rec);
    end(".npz archives");
    unlink(path);
    free(data);
    assert_all_freed();
}

/* ---- maps and streams ---------------------------------------------------------- */

static void test_maps(void **state)
{
    npyio_dtype *rec = descr(nested_descr, opts);
    static const int64_t shape[1] = {4};
    npyio_header *h = header_of(rec, 1, shape, 0);
    npyio_map *m = NULL;

    (void)state;
    begin();
    assert_ok(npyio_map_create_path(paths[0], h, NPYIO_WRITE_NO_SYNC, opts,
                                    &m));
    assert_header_ours(npyio_map_header(m), "npyio_map_create_path");
    assert_ok(npyio_map_close(m));
    assert_ok(npyio_map_open_path(paths[0], 0, opts, &m));
    assert_header_ours(npyio_map_header(m), "npyio_map_open_path");
    assert_ok(npyio_map_close(m));
    assert_ok(npyio_map_open_path(paths[0], NPYIO_MAP_WRITE, opts, &m));
    assert_ok(npyio_map_close(m));
    npyio_header_free(h);
    npyio_dtype_unref(rec);
    end("maps");
    assert_all_freed();
}

static int null_read(void *user, void *buf, size_t cap, size_t *got)
{
    (void)user;
    (void)buf;
    (void)cap;
    *got = 0;
    return 0;
}

static void test_streams(void **state)
{
    static const npyio_stream_ops ops = {.size = sizeof ops,
                                         .read = null_read};
    static const unsigned char some[4] = {1, 2, 3, 4};
    npyio_stream *s[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    FILE *file = tmpfile();
    int fd = open("/dev/null", O_RDONLY);
    void *bytes = NULL;
    size_t len = 0;
    int i;

    (void)state;
    assert_non_null(file);
    assert_true(fd >= 0);
    begin();
    assert_ok(npyio_stream_open_ops(&ops, NULL, opts, &s[0]));
    assert_ok(npyio_stream_open_memory(some, sizeof some, opts, &s[1]));
    assert_ok(npyio_stream_create_memory(opts, &s[2]));
    assert_ok(npyio_stream_open_path(paths[0], NPYIO_STREAM_WRITE, opts,
                                     &s[3]));
    assert_ok(npyio_stream_open_fd(fd, opts, &s[4]));
    assert_ok(npyio_stream_open_file(file, opts, &s[5]));
    assert_ok(npyio_stream_take_bytes(s[2], &bytes, &len));
    for (i = 0; i < 6; i++)
        assert_ok(npyio_stream_close(s[i]));
    end("streams");
    assert_block_ours(bytes, "npyio_stream_take_bytes (empty)");
    npyio_free(bytes);
    fclose(file);
    close(fd);
    assert_all_freed();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_dtype_from_descr, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_dtypes_derived, setup, teardown),
        cmocka_unit_test_setup_teardown(test_record_builder, setup, teardown),
        cmocka_unit_test_setup_teardown(test_headers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reading, setup, teardown),
        cmocka_unit_test_setup_teardown(test_writing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_maps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_streams, setup, teardown),
        cmocka_unit_test_setup_teardown(test_npz, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
