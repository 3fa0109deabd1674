/*
 * fuzz_npz.c - libFuzzer target for reading .npz archives: the input is an
 * archive, opened from memory under tight limits; every member is stat'ed,
 * found by its key, read whole as bytes and as an array (two flag sets,
 * and in chunks), verified, and the results must agree: a member whose
 * bytes read to the end passes verify and the other way round, and an
 * array read whole equals the same array read in chunks. Never a crash,
 * leak, hang or out-of-bounds read; memory bounded by the limits whatever
 * the archive claims. Every input runs twice, with zlib's streaming
 * inflate and with libdeflate's whole-member inflate (forced through the
 * options' test hook), and both runs must give the same statuses,
 * messages, lengths and bytes.
 *
 * Built two ways: with clang -fsanitize=fuzzer for fuzzing (NPYIO_FUZZ=ON),
 * and always with replay.c, which runs the stored corpus under ctest.
 */
#include "fuzz_common.h"
#include "options.h" /* the inflater chosen */

/* What a run saw: statuses, messages, lengths and bytes, hashed. */
static uint64_t seen;

static void see(npyio_status st, const void *bytes, size_t len)
{
    const char *msg = st == NPYIO_OK ? "" : npyio_last_error();

    seen = hash_bytes(seen, &st, sizeof st);
    seen = hash_bytes(seen, &len, sizeof len);
    seen = hash_bytes(seen, msg, strlen(msg));
    if (bytes != NULL)
        seen = hash_bytes(seen, bytes, len);
}

/* The tight options, choosing the inflater: 0 zlib, 1 libdeflate. */
static npyio_options *tight(int whole)
{
    static npyio_options *o[2];

    if (o[whole] == NULL) {
        check(npyio_options_new(&o[whole]) == NPYIO_OK);
        check(npyio_options_set_untrusted(o[whole]) == NPYIO_OK);
        check(npyio_options_set_limit(o[whole], NPYIO_LIMIT_ALLOC_BYTES,
                                      1 << 23) == NPYIO_OK);
        check(npyio_options_set_limit(o[whole], NPYIO_LIMIT_NPZ_MEMBER_BYTES,
                                      1 << 22) == NPYIO_OK);
        npyio__options_set_inflate(o[whole], whole ? NPYIO__INFLATE_WHOLE
                                                   : NPYIO__INFLATE_ZLIB,
                                   false);
    }
    return o[whole];
}

/* The member's bytes to its end: the status, and how many. */
static npyio_status read_bytes(npyio_npz *npz, size_t i, size_t *total)
{
    static unsigned char buf[65536];
    npyio_stream *s = NULL;
    size_t got = sizeof buf;
    npyio_status st = npyio_stream_open_member(npz, i, &s);

    *total = 0;
    while (st == NPYIO_OK && got == sizeof buf) {
        st = npyio_stream_read(s, buf, sizeof buf, &got);
        see(st, st == NPYIO_OK ? buf : NULL, got);
        *total += got;
    }
    npyio_stream_close(s);
    return st;
}

static void read_array(npyio_npz *npz, size_t i)
{
    static unsigned char chunk[4096];
    npyio_reader *r = NULL, *c = NULL;
    void *whole = NULL;
    size_t len = 0, at = 0, got = 0;
    npyio_status st;

    if (npyio_reader_open_member(npz, i, &r) != NPYIO_OK)
        return;
    st = npyio_reader_read_alloc(r, NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER,
                                 &whole, &len);
    npyio_reader_close(r);
    see(st, whole, len);
    if (st != NPYIO_OK)
        return;
    check(npyio_reader_open_member(npz, i, &c) == NPYIO_OK);
    while ((st = npyio_reader_read_chunk(c, chunk, sizeof chunk,
                                         NPYIO_READ_NATIVE |
                                             NPYIO_READ_C_ORDER,
                                         &got)) == NPYIO_OK) {
        check(at + got <= len && memcmp(chunk, (char *)whole + at, got) ==
                                     0);
        at += got;
    }
    check(st == NPYIO_END && at == len);
    npyio_reader_close(c);
    npyio_free(whole);
}

/* One run, with inflater `whole`: what it saw. */
static uint64_t run(const uint8_t *data, size_t size, int whole)
{
    npyio_stream *s = NULL;
    npyio_npz *npz = NULL;
    size_t i;

    seen = 14695981039346656037ull;
    check(npyio_stream_open_memory(data, size, NULL, &s) == NPYIO_OK);
    if (npyio_npz_open_stream(s, tight(whole), &npz) == NPYIO_OK) {
        for (i = 0; i < npyio_npz_count(npz); i++) {
            int64_t usize = -1, readable = 0, v;
            size_t found = 0, total = 0;
            npyio_npz_stat_id f;
            npyio_status bytes, verified;

            for (f = NPYIO_NPZ_STAT_METHOD; f <= NPYIO_NPZ_STAT_READABLE; f++)
                check(npyio_npz_stat(npz, i, f, &v) == NPYIO_OK);
            check(npyio_npz_find(npz, npyio_npz_key(npz, i), &found, NULL) ==
                  NPYIO_OK);
            npyio_npz_stat(npz, i, NPYIO_NPZ_STAT_SIZE, &usize);
            npyio_npz_stat(npz, i, NPYIO_NPZ_STAT_READABLE, &readable);
            bytes = read_bytes(npz, i, &total);
            verified = npyio_npz_verify(npz, i);
            see(verified, NULL, 0);
            check(bytes == verified);
            check(bytes != NPYIO_OK || (int64_t)total == usize);
            check(readable || bytes == NPYIO_E_UNSUPPORTED);
            read_array(npz, i);
        }
        npyio_npz_close(npz);
    }
    npyio_stream_close(s);
    return seen;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check(run(data, size, 0) == run(data, size, 1));
    return 0;
}
