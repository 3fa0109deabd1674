/*
 * fuzz_npz_threads.c - differential libFuzzer target for the rule "every
 * path returns the bytes a sequential inflate returns, or refuses": the
 * input is an archive, opened from memory four times: on one thread with
 * zlib's streaming inflate, on one with libdeflate's whole-member inflate
 * (both forced through the options' test hook, whatever the member's
 * size), and with NPYIO_LIMIT_THREADS 2 and 3. Every member (up to MAX_MEMBERS) is
 * read whole, in chunks (of 4 KiB to 512 KiB, by the input's size) and
 * by rows (bands of 1 to 3 rows, by the input's size: the last band, the
 * first, the middle: jumps both ways, which a block index may shorten;
 * members of every size take the threads: parts of one byte); each read's
 * status, length and bytes must be the same
 * with libdeflate and on 2 and 3 threads as with zlib on 1. On one thread, chunks that read to the end give
 * the whole read's bytes.
 *
 * Its corpus (fuzz/corpus/npz_threads) holds archives with block indexes,
 * true and lying: tests/data/npz/index and archives from
 * `npyio pack --compress --threads 3`.
 *
 * Built two ways: with clang -fsanitize=fuzzer for fuzzing (NPYIO_FUZZ=ON),
 * and always with replay.c, which runs the stored corpus under ctest.
 */
#include "fuzz_common.h"
#include "options.h" /* the inflater chosen */
#include "threads.h" /* parts of one byte */

#define MAX_MEMBERS 8
#define MAX_OPS (MAX_MEMBERS * 8)
/* A member over this is refused before it is inflated (two blocks of the
 * writer's 4 MiB, the second small, fit), and so is an allocation. */
#define MEMBER_BYTES ((int64_t)5 << 20)
#define ALLOC_BYTES ((int64_t)24 << 20)

/* What one read gave: its status, and its bytes' length and hash. */
typedef struct outcome {
    npyio_status st;
    size_t len;
    uint64_t hash;
} outcome;

typedef struct outcomes {
    outcome op[MAX_OPS];
    size_t count;
} outcomes;

static void record(outcomes *out, npyio_status st, size_t len, uint64_t hash)
{
    check(out->count < MAX_OPS);
    out->op[out->count].st = st;
    out->op[out->count].len = len;
    out->op[out->count].hash = hash;
    out->count++;
}

/* Run k: 0 one thread, zlib; 1 one thread, libdeflate; 2 and 3 threads. */
static npyio_options *with_threads(unsigned k)
{
    static npyio_options *o[4];
    unsigned threads = k < 2 ? 1 : k;

    if (o[k] == NULL) {
        /* Members of any size take the threads (the index's blocks, and
         * chunks read ahead): set before the first thread starts. */
        npyio__part_bytes_min = 1;
        check(npyio_options_new(&o[k]) == NPYIO_OK);
        npyio__options_set_inflate(o[k], k == 0   ? NPYIO__INFLATE_ZLIB
                                         : k == 1 ? NPYIO__INFLATE_WHOLE
                                                  : 0,
                                   false);
        check(npyio_options_set_untrusted(o[k]) == NPYIO_OK);
        check(npyio_options_set_limit(o[k], NPYIO_LIMIT_ALLOC_BYTES,
                                      ALLOC_BYTES) == NPYIO_OK);
        check(npyio_options_set_limit(o[k], NPYIO_LIMIT_NPZ_MEMBER_BYTES,
                                      MEMBER_BYTES) == NPYIO_OK);
        check(npyio_options_set_limit(o[k], NPYIO_LIMIT_THREADS, threads) ==
              NPYIO_OK);
    }
    return o[k];
}

/* The whole array, read at once: its bytes are kept in *whole. */
static void read_whole(npyio_npz *npz, size_t i, outcomes *out, void **whole,
                       size_t *len)
{
    npyio_reader *r = NULL;
    npyio_status st = npyio_reader_open_member(npz, i, &r);

    *whole = NULL;
    *len = 0;
    if (st == NPYIO_OK)
        st = npyio_reader_read_alloc(r, 0, whole, len);
    npyio_reader_close(r);
    record(out, st, *len, hash_bytes(14695981039346656037ull, *whole, *len));
}

/* In chunks of cap bytes to the end: 0 or NPYIO_END and the bytes'
 * hash; the bytes equal the whole read's where both succeed. */
static void read_chunks(npyio_npz *npz, size_t i, size_t cap, outcomes *out,
                        const void *whole, size_t whole_len)
{
    static unsigned char buf[(size_t)1 << 19];
    uint64_t h = 14695981039346656037ull;
    npyio_reader *r = NULL;
    size_t at = 0, got = 0;
    npyio_status st = npyio_reader_open_member(npz, i, &r);

    while (st == NPYIO_OK &&
           (st = npyio_reader_read_chunk(r, buf, cap, 0, &got)) == NPYIO_OK) {
        check(got > 0 && got <= cap);
        if (whole != NULL)
            check(at + got <= whole_len &&
                  memcmp((const char *)whole + at, buf, got) == 0);
        h = hash_bytes(h, buf, got);
        at += got;
    }
    check(st != NPYIO_END || whole == NULL || at == whole_len);
    npyio_reader_close(r);
    record(out, st, at, h);
}

/* The array's rows and the bytes of one row, or 0 if it has none. */
static int64_t row_shape(npyio_reader *r, size_t *row_bytes)
{
    const npyio_header *h = npyio_reader_header(r);
    int64_t rows, size = npyio_header_nbytes(h);

    *row_bytes = 0;
    if (npyio_header_ndim(h) < 1 || size < 0)
        return 0;
    rows = npyio_header_shape(h)[0];
    if (rows <= 0 || size % rows != 0)
        return 0;
    *row_bytes = (size_t)(size / rows);
    return rows;
}

/* Bands of `band` rows: the last, the first, the middle. */
static void read_bands(npyio_npz *npz, size_t i, int64_t band,
                       outcomes *out)
{
    npyio_reader *r = NULL;
    size_t row_bytes = 0;
    int64_t rows, firsts[3];
    unsigned char *buf = NULL;
    int k;

    if (npyio_reader_open_member(npz, i, &r) != NPYIO_OK)
        return;
    rows = row_shape(r, &row_bytes);
    if (rows >= band && row_bytes > 0 &&
        row_bytes <= (size_t)MEMBER_BYTES / (size_t)band)
        buf = malloc(row_bytes * (size_t)band);
    firsts[0] = rows - band;
    firsts[1] = 0;
    firsts[2] = rows / 2 < rows - band ? rows / 2 : rows - band;
    for (k = 0; buf != NULL && k < 3; k++) {
        npyio_status st = npyio_reader_read_rows(r, firsts[k], band, buf,
                                                 row_bytes * (size_t)band, 0);

        record(out, st, row_bytes * (size_t)band,
               st == NPYIO_OK ? hash_bytes(14695981039346656037ull, buf,
                                    row_bytes * (size_t)band)
                              : 0);
    }
    free(buf);
    npyio_reader_close(r);
}

/* Every way of reading every member, in run k (with_threads). */
static void read_all(const uint8_t *data, size_t size, unsigned k,
                     outcomes *out)
{
    npyio_stream *s = NULL;
    npyio_npz *npz = NULL;
    size_t i, cap = (size_t)4096 << (size % 8); /* 4 KiB to 512 KiB */
    int64_t band = 1 + (int64_t)(size % 3);
    npyio_status st;

    out->count = 0;
    check(npyio_stream_open_memory(data, size, NULL, &s) == NPYIO_OK);
    st = npyio_npz_open_stream(s, with_threads(k), &npz);
    record(out, st, 0, 0);
    for (i = 0; st == NPYIO_OK && i < npyio_npz_count(npz) &&
                i < MAX_MEMBERS; i++) {
        void *whole = NULL;
        size_t len = 0;

        read_whole(npz, i, out, &whole, &len);
        read_chunks(npz, i, cap, out, whole, len);
        npyio_free(whole);
        read_bands(npz, i, band, out);
    }
    npyio_npz_close(npz);
    npyio_stream_close(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static outcomes one, more;
    unsigned run;
    size_t k;

    read_all(data, size, 0, &one);
    for (run = 1; run <= 3; run++) {
        read_all(data, size, run, &more);
        check(more.count == one.count);
        for (k = 0; k < one.count; k++) {
            check(more.op[k].st == one.op[k].st);
            check(more.op[k].len == one.op[k].len);
            check(more.op[k].hash == one.op[k].hash);
        }
    }
    return 0;
}
