/*
 * test_npz_threads.c - archive members read on NPYIO_LIMIT_THREADS
 * threads give the bytes, statuses and messages one thread gives: stored
 * members read in parts whose CRC-32s are combined (damaged and cut
 * archives included).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "scratch.h"
#include "testdata.h"
#include "threads.h"

static const unsigned thread_counts[] = {1, 2, 3, 7};
#define N_COUNTS (sizeof thread_counts / sizeof thread_counts[0])

/* Member sizes around the 4 MiB parts and 2-part threshold. */
static const size_t sizes[] = {0, 1000, (size_t)8 << 20,
                               ((size_t)13 << 20) + 7,
                               ((size_t)17 << 20) + 5};
#define N_SIZES (sizeof sizes / sizeof sizes[0])

static unsigned char *pattern(size_t total)
{
    unsigned char *data = malloc(total ? total : 1);
    size_t i;

    assert_non_null(data);
    for (i = 0; i < total; i++)
        data[i] = (unsigned char)((i * 2654435761u) >> 11 & 0x7f);
    return data;
}

static npyio_options *with_threads(unsigned threads)
{
    npyio_options *o = NULL;

    assert_ok(npyio_options_new(&o));
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_THREADS, threads));
    return o;
}

/* An archive of one u1 member per size, at `level`, written on
 * `threads` threads. */
static void write_archive(const char *path, int level, unsigned threads,
                          const unsigned char *data)
{
    npyio_options *o = with_threads(threads);
    npyio_npz_writer *w = NULL;
    size_t k;

    assert_ok(npyio_npz_writer_create_path(path, NPYIO_WRITE_NO_SYNC, o, &w));
    for (k = 0; k < N_SIZES; k++) {
        int64_t shape = (int64_t)sizes[k];
        npyio_header *h = make_header("|u1", 1, &shape, 0);
        npyio_writer *mw = NULL;
        char key[16];

        snprintf(key, sizeof key, "m%zu", k);
        assert_ok(npyio_writer_create_member(w, key, h, level, 0, &mw));
        assert_ok(npyio_writer_write(mw, data, sizes[k]));
        assert_ok(npyio_writer_close(mw));
        npyio_header_free(h);
    }
    assert_ok(npyio_npz_writer_close(w));
    npyio_options_free(o);
}

/* Member k read whole on `threads` threads, the archive cut at `cut`
 * once it is open (if cut > 0): its status, and its message in msg; the
 * bytes compared with data when it is read. */
static npyio_status load_cut(const char *path, size_t k, unsigned threads,
                             const unsigned char *data, char *msg,
                             size_t cap, int64_t cut)
{
    npyio_options *o = with_threads(threads);
    npyio_npz *npz = NULL;
    npyio_reader *r = NULL;
    void *got = NULL;
    size_t len = 0;
    npyio_status st;

    assert_ok(npyio_npz_open_path(path, o, &npz));
    if (cut > 0)
        assert_int_equal(truncate(path, (off_t)cut), 0);
    assert_ok(npyio_reader_open_member(npz, k, &r));
    st = npyio_reader_read_alloc(r, 0, &got, &len);
    snprintf(msg, cap, "%s", st == NPYIO_OK ? "" : npyio_last_error());
    if (st == NPYIO_OK) {
        assert_int_equal(len, sizes[k]);
        assert_true(len == 0 || memcmp(got, data, len) == 0);
    }
    npyio_free(got);
    npyio_reader_close(r);
    npyio_npz_close(npz);
    npyio_options_free(o);
    return st;
}

static npyio_status load_member(const char *path, size_t k, unsigned threads,
                                const unsigned char *data, char *msg,
                                size_t cap)
{
    return load_cut(path, k, threads, data, msg, cap, 0);
}

static void test_stored_whole_reads(void **state)
{
    unsigned char *data = pattern(sizes[N_SIZES - 1]);
    char path[256], msg[512];
    size_t k, t;

    (void)state;
    path_in_dir(path, sizeof path, "stored.npz");
    write_archive(path, 0, 1, data);
    for (k = 0; k < N_SIZES; k++)
        for (t = 0; t < N_COUNTS; t++)
            assert_ok(load_member(path, k, thread_counts[t], data, msg,
                                  sizeof msg));
    free(data);
}

static int64_t member_stat(const char *path, size_t k, npyio_npz_stat_id id)
{
    npyio_npz *npz = NULL;
    int64_t v = 0;

    assert_ok(npyio_npz_open_path(path, NULL, &npz));
    assert_ok(npyio_npz_stat(npz, k, id, &v));
    npyio_npz_close(npz);
    return v;
}

static void flip_byte(const char *path, int64_t at)
{
    FILE *f = fopen(path, "r+b");
    int c;

    assert_non_null(f);
    assert_int_equal(fseek(f, (long)at, SEEK_SET), 0);
    c = fgetc(f);
    assert_int_equal(fseek(f, (long)at, SEEK_SET), 0);
    fputc(c ^ 0x10, f);
    fclose(f);
}

/* A flipped byte in each part of the largest member: NPYIO_E_CHECKSUM
 * naming it, the message one thread gives. */
static void test_stored_damage(void **state)
{
    unsigned char *data = pattern(sizes[N_SIZES - 1]);
    size_t k = N_SIZES - 1, t, i;
    char path[256], one[512], msg[512];

    (void)state;
    path_in_dir(path, sizeof path, "stored_bad.npz");
    for (i = 0; i < 5; i++) {
        int64_t at;

        write_archive(path, 0, 1, data);
        at = member_stat(path, k, NPYIO_NPZ_STAT_DATA_OFFSET) + 200 +
             (int64_t)(i * ((size_t)4 << 20) + i * 12345);
        flip_byte(path, at);
        assert_status(load_member(path, k, 1, data, one, sizeof one),
                      NPYIO_E_CHECKSUM);
        assert_non_null(strstr(one, "'m4.npy'"));
        for (t = 1; t < N_COUNTS; t++) {
            assert_status(load_member(path, k, thread_counts[t], data, msg,
                                      sizeof msg),
                          NPYIO_E_CHECKSUM);
            assert_string_equal(msg, one);
        }
    }
    free(data);
}

/* The archive cut inside the largest member after it was opened:
 * NPYIO_E_TRUNCATED naming it, as one thread reports it. */
static npyio_status read_cut(const char *path, unsigned threads, char *msg,
                             size_t cap)
{
    unsigned char *data = pattern(sizes[N_SIZES - 1]);
    npyio_status st;

    write_archive(path, 0, 1, data);
    st = load_cut(path, N_SIZES - 1, threads, data, msg, cap,
                  member_stat(path, N_SIZES - 1, NPYIO_NPZ_STAT_DATA_OFFSET) +
                      (int64_t)(9 << 20) + 3);
    free(data);
    return st;
}

static void test_stored_cut(void **state)
{
    char path[256], one[512], msg[512];
    size_t t;

    (void)state;
    path_in_dir(path, sizeof path, "stored_cut.npz");
    assert_status(read_cut(path, 1, one, sizeof one), NPYIO_E_TRUNCATED);
    assert_non_null(strstr(one, "'m4.npy'"));
    for (t = 1; t < N_COUNTS; t++) {
        assert_status(read_cut(path, thread_counts[t], msg, sizeof msg),
                      NPYIO_E_TRUNCATED);
        assert_string_equal(msg, one);
    }
}

/* ---- deflated members with a block index ---------------------------------- */

/* The largest member's local extra field: its offset in the file. */
static int64_t index_at(const char *path, size_t k)
{
    int64_t header = member_stat(path, k, NPYIO_NPZ_STAT_HEADER_OFFSET);
    unsigned char fixed[30];
    FILE *f = fopen(path, "rb");

    assert_non_null(f);
    assert_int_equal(fseek(f, (long)header, SEEK_SET), 0);
    assert_int_equal(fread(fixed, 1, 30, f), 30);
    fclose(f);
    assert_true(fixed[28] | fixed[29] << 8);
    return header + 30 + (fixed[26] | fixed[27] << 8);
}

static void put_bytes(const char *path, int64_t at, const void *p, size_t n)
{
    FILE *f = fopen(path, "r+b");

    assert_non_null(f);
    assert_int_equal(fseek(f, (long)at, SEEK_SET), 0);
    assert_int_equal(fwrite(p, 1, n, f), n);
    fclose(f);
}

static void get_bytes(const char *path, int64_t at, void *p, size_t n)
{
    FILE *f = fopen(path, "rb");

    assert_non_null(f);
    assert_int_equal(fseek(f, (long)at, SEEK_SET), 0);
    assert_int_equal(fread(p, 1, n, f), n);
    fclose(f);
}

/* Written on 1, 2 and 3 threads, each member read whole on 1, 2, 3 and 7
 * threads: the bytes written. */
static void test_deflated_whole_reads(void **state)
{
    unsigned char *data = pattern(sizes[N_SIZES - 1]);
    char path[256], msg[512];
    unsigned w;
    size_t k, t;

    (void)state;
    path_in_dir(path, sizeof path, "deflated.npz");
    for (w = 1; w <= 3; w++) {
        write_archive(path, w == 3 ? 1 : 6, w, data);
        for (k = 0; k < N_SIZES; k++) {
            int64_t usize = member_stat(path, k, NPYIO_NPZ_STAT_SIZE);
            int64_t blocks = (usize + (4 << 20) - 1) / (4 << 20);

            /* An index of one entry a 4 MiB block, on 2+ threads only. */
            assert_int_equal(member_stat(path, k,
                                         NPYIO_NPZ_STAT_BLOCK_INDEX),
                             w > 1 && blocks >= 2 ? blocks : 0);
        }
        for (k = 0; k < N_SIZES; k++)
            for (t = 0; t < N_COUNTS; t++)
                assert_ok(load_member(path, k, thread_counts[t], data, msg,
                                      sizeof msg));
    }
    free(data);
}

/* Index damage, each field: (offset in the field, bytes). The member
 * reads the same, on every thread count. */
typedef struct damage {
    size_t at;
    unsigned char bytes[8];
    size_t len;
} damage;

static const damage damages[] = {
    {2, {0x07, 0x00}, 2},             /* data length */
    {4, {2}, 1},                      /* version (a later one) */
    {8, {1, 0, 0, 0}, 4},             /* count, smaller */
    {8, {0xff, 0xff, 0, 0}, 4},       /* count, larger */
    {12, {1}, 1},                     /* first block's compressed offset */
    {20, {1}, 1},                     /* first block's uncompressed one */
    {28, {1}, 1},                     /* a block one byte later */
    {36, {1, 0, 0x40}, 3},            /* a block's length, wrong */
    {28, {0, 0, 0, 0, 0, 0, 0, 0}, 8},/* not increasing */
    {36, {0, 0, 0, 0, 0, 0, 0, 0x7f}, 8}, /* out of range */
    {44, {0xff, 0xff, 0xff}, 3},      /* past the compressed size */
};

static void test_index_damage(void **state)
{
    unsigned char *data = pattern(sizes[N_SIZES - 1]);
    char path[256], msg[512];
    size_t d, t, k = N_SIZES - 1;

    (void)state;
    path_in_dir(path, sizeof path, "index_bad.npz");
    for (d = 0; d < sizeof damages / sizeof damages[0]; d++) {
        unsigned char old[8];
        int64_t at;

        write_archive(path, 6, 2, data);
        at = index_at(path, k);
        get_bytes(path, at + (int64_t)damages[d].at, old, damages[d].len);
        if (damages[d].len == 1)
            old[0] = (unsigned char)(old[0] + damages[d].bytes[0]);
        else
            memcpy(old, damages[d].bytes, damages[d].len);
        put_bytes(path, at + (int64_t)damages[d].at, old, damages[d].len);
        /* Ignored: a later version silently, the others with a warning. */
        assert_int_equal(member_stat(path, k, NPYIO_NPZ_STAT_BLOCK_INDEX),
                         damages[d].at == 4 ? 0 : -1);
        for (t = 0; t < N_COUNTS; t++)
            assert_ok(load_member(path, k, thread_counts[t], data, msg,
                                  sizeof msg));
    }
    free(data);
}

static npyio_status chunks_of(const char *path, size_t k, unsigned threads,
                              size_t cap, bool mixed,
                              const unsigned char *data, char *msg,
                              size_t msg_cap, size_t *largest);

/* Member k's CRC-32 made wrong where the archive gives it: in its local
 * header and in every copy after its data (the central directory). */
static void break_crc(const char *path, size_t k)
{
    uint32_t crc = (uint32_t)member_stat(path, k, NPYIO_NPZ_STAT_CRC32);
    int64_t after = member_stat(path, k, NPYIO_NPZ_STAT_DATA_OFFSET) +
                    member_stat(path, k, NPYIO_NPZ_STAT_COMPRESSED_SIZE);
    unsigned char le[4] = {(unsigned char)crc, (unsigned char)(crc >> 8),
                           (unsigned char)(crc >> 16),
                           (unsigned char)(crc >> 24)},
                  got[4], bad[4] = {(unsigned char)(le[0] ^ 1), le[1], le[2],
                                    le[3]};
    FILE *f = fopen(path, "rb");
    int64_t at, end;

    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    end = (int64_t)ftell(f);
    fclose(f);
    put_bytes(path, member_stat(path, k, NPYIO_NPZ_STAT_HEADER_OFFSET) + 14,
              bad, 4);
    for (at = after; at + 4 <= end; at++) {
        get_bytes(path, at, got, 4);
        if (memcmp(got, le, 4) == 0)
            put_bytes(path, at, bad, 4);
    }
}

/* The member damaged, read whole and in chunks (of 1 MiB, and of 9 MiB
 * and 3 bytes, that take blocks directly): on every thread count the
 * status and message one thread gives. */
static void same_damage(const char *path, size_t k,
                        const unsigned char *data)
{
    static const size_t caps[] = {0, (size_t)1 << 20, ((size_t)9 << 20) + 3};
    char one[512], msg[512];
    size_t t, c, largest = 0;

    for (c = 0; c < sizeof caps / sizeof caps[0]; c++) {
        npyio_status st1 =
            caps[c] == 0 ? load_member(path, k, 1, data, one, sizeof one)
                         : chunks_of(path, k, 1, caps[c], false, NULL, one,
                                     sizeof one, &largest);

        assert_int_not_equal(st1, NPYIO_OK);
        assert_non_null(strstr(one, "'m4.npy'"));
        for (t = 1; t < N_COUNTS; t++) {
            npyio_status st =
                caps[c] == 0
                    ? load_member(path, k, thread_counts[t], data, msg,
                                  sizeof msg)
                    : chunks_of(path, k, thread_counts[t], caps[c], false,
                                NULL, msg, sizeof msg, &largest);

            assert_status(st, st1);
            /* Chunks on several threads may name another offset of the
             * read (npyio.h, NPYIO_LIMIT_THREADS): the rest is the same. */
            if (caps[c] == 0)
                assert_string_equal(msg, one);
            else
                assert_string_equal(strstr(msg, "member '"),
                                    strstr(one, "member '"));
        }
    }
}

/* A flipped byte of compressed data in a later block, and a wrong
 * CRC-32: the status and the message one thread gives. */
static void test_deflated_damage(void **state)
{
    unsigned char *data = pattern(sizes[N_SIZES - 1]);
    char path[256];
    size_t k = N_SIZES - 1, i;

    (void)state;
    path_in_dir(path, sizeof path, "deflated_bad.npz");
    for (i = 1; i < 4; i++) {
        int64_t csize;

        write_archive(path, 6, 2, data);
        csize = member_stat(path, k, NPYIO_NPZ_STAT_COMPRESSED_SIZE);
        flip_byte(path, member_stat(path, k, NPYIO_NPZ_STAT_DATA_OFFSET) +
                            csize * (int64_t)i / 4);
        same_damage(path, k, data);
    }
    write_archive(path, 6, 2, data);
    break_crc(path, k);
    same_damage(path, k, data);
    free(data);
}

/* Rows read at random places (backward and forward, across blocks) in
 * the largest member, as a 2-D u1 array of 1000-byte rows: the bytes
 * written, with a good index, with a wrong one, and without one. */
static void read_rows_at_random(const char *path, unsigned threads,
                                const unsigned char *data, int64_t rows)
{
    npyio_options *o = with_threads(threads);
    npyio_npz *npz = NULL;
    npyio_reader *r = NULL;
    unsigned char got[3000];
    uint64_t rng = 12345;
    int i;

    assert_ok(npyio_npz_open_path(path, o, &npz));
    assert_ok(npyio_reader_open_member(npz, 0, &r));
    for (i = 0; i < 40; i++) {
        int64_t first;

        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        first = (int64_t)((rng >> 33) % (uint64_t)(rows - 2));
        assert_ok(npyio_reader_read_rows(r, first, 3, got, sizeof got, 0));
        assert_memory_equal(got, data + first * 1000, sizeof got);
    }
    assert_ok(npyio_reader_read_rows(r, rows - 1, 1, got, 1000, 0));
    assert_memory_equal(got, data + (rows - 1) * 1000, 1000);
    npyio_reader_close(r);
    npyio_npz_close(npz);
    npyio_options_free(o);
}

static void write_rows(const char *path, unsigned threads,
                       const unsigned char *data, int64_t rows)
{
    npyio_options *o = with_threads(threads);
    npyio_npz_writer *w = NULL;
    int64_t shape[2] = {rows, 1000};
    npyio_header *h = make_header("|u1", 2, shape, 0);
    npyio_writer *mw = NULL;

    assert_ok(npyio_npz_writer_create_path(path, NPYIO_WRITE_NO_SYNC, o, &w));
    assert_ok(npyio_writer_create_member(w, "rows", h, 6, 0, &mw));
    assert_ok(npyio_writer_write(mw, data, (size_t)rows * 1000));
    assert_ok(npyio_writer_close(mw));
    assert_ok(npyio_npz_writer_close(w));
    npyio_header_free(h);
    npyio_options_free(o);
}

static void test_random_rows(void **state)
{
    int64_t rows = 17000;
    unsigned char *data = pattern((size_t)rows * 1000), one = 1;
    char path[256];
    unsigned w;
    size_t t;

    (void)state;
    path_in_dir(path, sizeof path, "rows.npz");
    for (w = 1; w <= 3; w++) {
        write_rows(path, w == 3 ? 2 : w, data, rows);
        if (w == 3) /* the third block's offset changed: ignored */
            put_bytes(path, index_at(path, 0) + 4 + 8 + 2 * 16, &one, 1);
        assert_int_equal(member_stat(path, 0, NPYIO_NPZ_STAT_BLOCK_INDEX),
                         w == 1 ? 0 : w == 2 ? 5 : -1);
        for (t = 0; t < N_COUNTS; t++)
            read_rows_at_random(path, thread_counts[t], data, rows);
    }
    free(data);
}

/* Through a FILE stream (no positioned reads): one thread does the work,
 * whatever the limit; the same bytes, stored and indexed deflated. */
static void test_file_stream(void **state)
{
    unsigned char *data = pattern(sizes[N_SIZES - 1]);
    char path[256];
    int level;
    size_t t;

    (void)state;
    path_in_dir(path, sizeof path, "file.npz");
    for (level = 0; level <= 6; level += 6) {
        write_archive(path, level, 2, data);
        for (t = 0; t < N_COUNTS; t++) {
            npyio_options *o = with_threads(thread_counts[t]);
            FILE *f = fopen(path, "rb");
            npyio_stream *s = NULL;
            npyio_npz *npz = NULL;
            void *got = NULL;
            size_t len = 0;
            char type[32];
            int64_t shape[4];
            int ndim = 0;

            assert_non_null(f);
            assert_ok(npyio_stream_open_file(f, o, &s));
            assert_ok(npyio_npz_open_stream(s, o, &npz));
            assert_ok(npyio_npz_load(npz, N_SIZES - 1, &got, &len, type,
                                     sizeof type, &ndim, shape, 4));
            assert_int_equal(len, sizes[N_SIZES - 1]);
            assert_memory_equal(got, data, len);
            npyio_free(got);
            npyio_npz_close(npz);
            npyio_stream_close(s);
            fclose(f);
            npyio_options_free(o);
        }
    }
    free(data);
}


/* ---- chunks of an indexed member: blocks read ahead on the threads ---------- */

/* The largest block asked of the allocator, from any thread: the blocks
 * read ahead show in it. */
static atomic_size_t largest_block;

static void *largest_alloc(void *user, size_t size, size_t alignment)
{
    size_t seen = atomic_load(&largest_block);
    void *p = NULL;

    (void)user;
    while (size > seen &&
           !atomic_compare_exchange_weak(&largest_block, &seen, size))
        ;
    if (posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *)
                                                     : alignment,
                       size ? size : 1) != 0)
        return NULL;
    return p;
}

static void largest_free(void *user, void *ptr, size_t size)
{
    (void)user;
    (void)size;
    free(ptr);
}

/* Member k in chunks of cap bytes on `threads` threads, each checked
 * against data as it comes. With `mixed`, every chunk is followed by a
 * chunk of 1000 bytes (below the size that reads ahead: streaming takes
 * it, caught up from the last proven block start) and, every third
 * chunk, by rows read behind and ahead of the position (seeks). The
 * status of the pass and its message; *largest: the largest block
 * allocated. data NULL: the bytes are not compared (damaged members). */
static npyio_status chunks_of(const char *path, size_t k, unsigned threads,
                              size_t cap, bool mixed,
                              const unsigned char *data, char *msg,
                              size_t msg_cap, size_t *largest)
{
    static const npyio_allocator table = {sizeof table, largest_alloc, NULL,
                                          largest_free};
    npyio_options *o = with_threads(threads);
    unsigned char *buf = malloc(cap);
    npyio_npz *npz = NULL;
    npyio_reader *r = NULL;
    size_t at = 0, got = 0, n = 0;
    npyio_status st;

    assert_non_null(buf);
    assert_ok(npyio_options_set_allocator(o, &table, NULL));
    atomic_store(&largest_block, 0);
    assert_ok(npyio_npz_open_path(path, o, &npz));
    assert_ok(npyio_reader_open_member(npz, k, &r));
    while ((st = npyio_reader_read_chunk(r, buf, mixed && n % 2 ? 1000 : cap,
                                         0, &got)) == NPYIO_OK) {
        assert_true(got > 0 && at + got <= sizes[k]);
        if (data != NULL)
            assert_memory_equal(buf, data + at, got);
        at += got;
        if (mixed && ++n % 3 == 0) {
            int64_t first = (int64_t)(at * 7 % sizes[k]);
            size_t len = sizes[k] - (size_t)first < cap
                             ? sizes[k] - (size_t)first : cap;

            assert_ok(npyio_reader_read_rows(r, first, (int64_t)len, buf,
                                             cap, 0));
            assert_memory_equal(buf, data + first, len);
        }
    }
    snprintf(msg, msg_cap, "%s", st == NPYIO_END ? "" : npyio_last_error());
    if (st == NPYIO_END) {
        assert_int_equal(at, sizes[k]);
        st = NPYIO_OK;
    }
    *largest = atomic_load(&largest_block);
    free(buf);
    npyio_reader_close(r);
    npyio_npz_close(npz);
    npyio_options_free(o);
    return st;
}

/* The largest member (5 blocks of 4 MiB, the last cut short) read in
 * chunks of sizes around the blocks', on every thread count: the bytes
 * written, plain and mixed with small reads and seeks. On one thread no
 * block of a block's size is allocated; on two, blocks read ahead are,
 * in batches of at most six (npyio.h: three per thread). */
static void test_chunks_ahead(void **state)
{
    static const size_t caps[] = {(size_t)300 << 10, (size_t)1 << 20,
                                  ((size_t)4 << 20) + 1,
                                  ((size_t)9 << 20) + 3};
    const size_t k = N_SIZES - 1, block = (size_t)4 << 20;
    unsigned char *data = pattern(sizes[k]);
    char path[256], msg[512];
    size_t c, t, largest = 0;
    int mixed;

    (void)state;
    path_in_dir(path, sizeof path, "chunks.npz");
    write_archive(path, 1, 3, data);
    assert_int_equal(member_stat(path, k, NPYIO_NPZ_STAT_BLOCK_INDEX), 5);
    for (c = 0; c < sizeof caps / sizeof caps[0]; c++)
        for (t = 0; t < N_COUNTS; t++)
            for (mixed = 0; mixed < 2; mixed++) {
                assert_ok(chunks_of(path, k, thread_counts[t], caps[c],
                                    mixed, data, msg, sizeof msg,
                                    &largest));
                if (caps[c] == ((size_t)1 << 20) && !mixed &&
                    thread_counts[t] == 1)
                    assert_true(largest < ((size_t)1 << 20));
                if (caps[c] == ((size_t)1 << 20) && !mixed &&
                    thread_counts[t] == 2)
                    /* 2 MiB of it the alignment's slack (npyio.h) */
                    assert_true(largest > block &&
                                largest <= 6 * block + (block >> 1));
            }
    free(data);
}

/* ---- indexes that lie (tests/data/npz/index, gen_npz_index.py) -------------- */

/* One archive of the corpus: np.load's bytes (from the manifest's hex),
 * its row length and NPYIO_NPZ_STAT_BLOCK_INDEX as the generator made it. */
typedef struct lying_case {
    char path[1024];
    unsigned char *want;
    size_t len, row;
    int64_t rows, block_index;
} lying_case;

static void lying_case_from(const tsv_row *r, lying_case *c)
{
    const char *hex = r->field[4];
    size_t i;

    assert_int_equal(r->count, 6);
    snprintf(c->path, sizeof c->path, "%s/npz/index/%s", NPYIO_TEST_DATA_DIR,
             r->field[0]);
    c->block_index = strtoll(r->field[1], NULL, 10);
    c->len = strlen(hex) / 2;
    c->want = malloc(c->len + 1);
    assert_non_null(c->want);
    for (i = 0; i < c->len; i++) {
        unsigned v = 0;

        assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
        c->want[i] = (unsigned char)v;
    }
    c->rows = strtoll(r->field[3], NULL, 10);
    assert_true(c->rows > 0);
    c->row = c->len / (size_t)c->rows;
}

static npyio_reader *open_lying(const lying_case *c, unsigned threads,
                                npyio_npz **npz)
{
    npyio_options *o = with_threads(threads);
    npyio_reader *r = NULL;

    assert_ok(npyio_npz_open_path(c->path, o, npz));
    assert_ok(npyio_reader_open_member(*npz, 0, &r));
    npyio_options_free(o);
    return r;
}

/* Whole: npyio_npz_load and npyio_reader_read_alloc. */
static void lying_whole(const lying_case *c, unsigned threads)
{
    npyio_npz *npz = NULL;
    npyio_reader *r = open_lying(c, threads, &npz);
    void *got = NULL;
    size_t len = 0;
    char type[32];
    int64_t shape[4];
    int ndim = 0;

    assert_ok(npyio_reader_read_alloc(r, 0, &got, &len));
    assert_int_equal(len, c->len);
    assert_memory_equal(got, c->want, len);
    npyio_free(got);
    npyio_reader_close(r);
    assert_ok(npyio_npz_load(npz, 0, &got, &len, type, sizeof type, &ndim,
                             shape, 4));
    assert_int_equal(len, c->len);
    assert_memory_equal(got, c->want, len);
    npyio_free(got);
    npyio_npz_close(npz);
}

/* In chunks of at most cap bytes, to the end. */
static void lying_chunks(const lying_case *c, unsigned threads, size_t cap)
{
    npyio_npz *npz = NULL;
    npyio_reader *r = open_lying(c, threads, &npz);
    unsigned char *buf = malloc(cap);
    size_t at = 0, got = 0;
    npyio_status st;

    assert_non_null(buf);
    while ((st = npyio_reader_read_chunk(r, buf, cap, 0, &got)) ==
           NPYIO_OK) {
        assert_true(got > 0 && at + got <= c->len);
        assert_memory_equal(buf, c->want + at, got);
        at += got;
    }
    assert_status(st, NPYIO_END);
    assert_int_equal(at, c->len);
    free(buf);
    npyio_reader_close(r);
    npyio_npz_close(npz);
}

/* Bands of `band` rows: the last band first, then every band from the
 * first on (forward), then a backward jump to the middle. */
static void lying_rows(const lying_case *c, unsigned threads, int64_t band)
{
    npyio_npz *npz = NULL;
    npyio_reader *r = open_lying(c, threads, &npz);
    unsigned char *buf = malloc((size_t)band * c->row);
    int64_t first, n, order[3] = {c->rows - band, 0, c->rows / 2};
    int k;

    assert_non_null(buf);
    for (k = 0; k < 3; k++) {
        for (first = order[k]; first < c->rows; first += band) {
            n = c->rows - first < band ? c->rows - first : band;
            assert_ok(npyio_reader_read_rows(r, first, n, buf,
                                             (size_t)band * c->row, 0));
            assert_memory_equal(buf, c->want + (size_t)first * c->row,
                                (size_t)n * c->row);
            if (k != 1)
                break; /* single jumps; the forward pass runs on */
        }
    }
    free(buf);
    npyio_reader_close(r);
    npyio_npz_close(npz);
}

static int64_t lying_stat(const lying_case *c, unsigned threads)
{
    npyio_options *o = with_threads(threads);
    npyio_npz *npz = NULL;
    int64_t v = 99;

    assert_ok(npyio_npz_open_path(c->path, o, &npz));
    assert_ok(npyio_npz_stat(npz, 0, NPYIO_NPZ_STAT_BLOCK_INDEX, &v));
    npyio_npz_close(npz);
    npyio_options_free(o);
    return v;
}

/* Every archive of the corpus, on 1, 2 and 3 threads, whole, in chunks
 * (of one row, of odd sizes, of more than the whole) and by rows (bands
 * of 1, 2 and 3, with jumps both ways): np.load's bytes every time, and
 * the block index stat the generator worked out. Before 1.1 a whole read
 * of lie_header_tail.npz on 2 threads returned other bytes. Run again
 * with parts of one byte (npyio__part_bytes_min), so that these small
 * members take the threads: whole reads the index's blocks, and chunks
 * of every size the blocks read ahead. */
static void test_lying_index(void **state)
{
    tsv_table t;
    size_t i, caps[] = {8, 24, 600, 1 << 20}, saved = npyio__part_bytes_min;
    unsigned threads;

    (void)state;
    tsv_load("npz/index/manifest.tsv", &t);
    assert_true(t.count >= 8);
    for (i = 0; i < 2 * t.count; i++) {
        lying_case c;
        size_t k;
        int64_t band;

        npyio__part_bytes_min = i < t.count ? saved : 1; /* no thread runs */
        lying_case_from(&t.rows[i % t.count], &c);
        for (threads = 1; threads <= 3; threads++) {
            assert_int_equal(lying_stat(&c, threads), c.block_index);
            lying_whole(&c, threads);
            for (k = 0; k < sizeof caps / sizeof caps[0]; k++)
                lying_chunks(&c, threads, caps[k] < c.row ? c.row : caps[k]);
            for (band = 1; band <= 3; band++)
                lying_rows(&c, threads, band);
        }
        free(c.want);
    }
    npyio__part_bytes_min = saved;
    tsv_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stored_whole_reads),
        cmocka_unit_test(test_stored_damage),
        cmocka_unit_test(test_stored_cut),
        cmocka_unit_test(test_deflated_whole_reads),
        cmocka_unit_test(test_index_damage),
        cmocka_unit_test(test_deflated_damage),
        cmocka_unit_test(test_random_rows),
        cmocka_unit_test(test_chunks_ahead),
        cmocka_unit_test(test_file_stream),
        cmocka_unit_test(test_lying_index),
    };

    if (scratch_make("npyio-npz-threads") != 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, scratch_remove);
}
