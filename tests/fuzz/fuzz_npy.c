/*
 * fuzz_npy.c - libFuzzer target for reading whole .npy files: the input's
 * first byte steers the run (a short-read size of 1 to 7 bytes and a chunk
 * size), the rest is the file. It is read from memory (seekable) and from
 * a stream that hands out 1-7 bytes per read and cannot seek (a pipe),
 * with every flag set (native byte order, C order), each way the API
 * offers: whole into a buffer, whole into a new buffer, in chunks, and by
 * rows. Whatever succeeds must agree with the whole read from memory, and
 * the two streams must agree on the header. Never a crash, leak, hang or
 * out-of-bounds read; memory bounded by the untrusted limits.
 *
 * Built two ways: with clang -fsanitize=fuzzer for fuzzing (NPYIO_FUZZ=ON),
 * and always with replay.c, which runs the stored corpus under ctest.
 */
#include "fuzz_common.h"

static npyio_options *tight(void)
{
    return fuzz_options(1 << 23, 0);
}

/* A pipe: a few bytes per read, no seek. */
typedef struct trickle {
    const uint8_t *p;
    size_t left, step;
} trickle;

static int trickle_read(void *user, void *buf, size_t cap, size_t *got)
{
    trickle *t = user;
    size_t n = t->step < cap ? t->step : cap;

    if (n > t->left)
        n = t->left;
    memcpy(buf, t->p, n);
    t->p += n;
    t->left -= n;
    *got = n;
    return 0;
}

typedef struct source {
    const uint8_t *file;
    size_t size, step;
    trickle t;
    npyio_stream *stream;
    npyio_reader *reader;
} source;

static npyio_status open_source(source *s, int pipe)
{
    npyio_stream_ops ops = {sizeof ops, trickle_read, NULL, NULL, NULL};
    npyio_status st;

    s->stream = NULL;
    s->reader = NULL;
    if (pipe) {
        s->t = (trickle){s->file, s->size, s->step};
        st = npyio_stream_open_ops(&ops, &s->t, tight(), &s->stream);
    } else {
        st = npyio_stream_open_memory(s->file, s->size, tight(), &s->stream);
    }
    check(st == NPYIO_OK);
    return npyio_reader_open_stream(s->stream, tight(), &s->reader);
}

static void close_source(source *s)
{
    npyio_reader_close(s->reader);
    npyio_stream_close(s->stream);
}

/* Two headers alike: the same bytes emitted. */
static void same_header(const npyio_header *a, const npyio_header *b)
{
    static unsigned char x[1 << 16], y[1 << 16];
    size_t xn = 0, yn = 0;
    npyio_status sa = npyio_header_emit(a, 0, x, sizeof x, &xn),
                 sb = npyio_header_emit(b, 0, y, sizeof y, &yn);

    check(sa == sb);
    check(sa != NPYIO_OK || (xn == yn && memcmp(x, y, xn) == 0));
}

/* The whole array, read from memory with flags: the reference. */
static void *reference(source *s, uint32_t flags, size_t *len)
{
    void *whole = NULL;

    if (open_source(s, 0) != NPYIO_OK ||
        npyio_reader_read_alloc(s->reader, flags, &whole, len) != NPYIO_OK)
        whole = NULL;
    close_source(s);
    return whole;
}

static void compare_read(source *s, uint32_t flags, const void *whole,
                         size_t len)
{
    unsigned char *buf = malloc(len ? len : 1);

    check(buf != NULL);
    if (open_source(s, 0) == NPYIO_OK &&
        npyio_reader_read(s->reader, buf, len, flags) == NPYIO_OK)
        check(memcmp(buf, whole, len) == 0);
    close_source(s);
    free(buf);
}

static void compare_chunks(source *s, int pipe, uint32_t flags,
                           const void *whole, size_t len, size_t cap)
{
    unsigned char *chunk = malloc(cap);
    size_t at = 0, got = 0;
    npyio_status st = NPYIO_E_IO;

    check(chunk != NULL);
    if (open_source(s, pipe) == NPYIO_OK) {
        while ((st = npyio_reader_read_chunk(s->reader, chunk, cap, flags,
                                             &got)) == NPYIO_OK) {
            check(at + got <= len && memcmp(chunk, (const char *)whole + at,
                                            got) == 0);
            at += got;
        }
        check(st != NPYIO_END || at == len);
    }
    close_source(s);
    free(chunk);
}

/* Rows [first, first + count) are that span of the C-order whole. */
static void compare_rows(source *s, int pipe, uint32_t flags,
                         const void *whole, size_t len)
{
    const npyio_header *h;
    int64_t rows, first, count;
    size_t row_bytes;
    unsigned char *buf;

    if (open_source(s, pipe) != NPYIO_OK) {
        close_source(s);
        return;
    }
    h = npyio_reader_header(s->reader);
    rows = npyio_header_ndim(h) > 0 ? npyio_header_shape(h)[0] : 0;
    if (rows <= 0 || (npyio_header_is_fortran_order(h) &&
                      !(flags & NPYIO_READ_C_ORDER))) {
        close_source(s);
        return;
    }
    row_bytes = len / (size_t)rows;
    first = (int64_t)(s->step * 3) % rows;
    count = rows - first < 3 ? rows - first : 3;
    buf = malloc(row_bytes * (size_t)count + 1);
    check(buf != NULL);
    if (npyio_reader_read_rows(s->reader, first, count, buf,
                               row_bytes * (size_t)count, flags) == NPYIO_OK)
        check(memcmp(buf, (const char *)whole + row_bytes * (size_t)first,
                     row_bytes * (size_t)count) == 0);
    free(buf);
    close_source(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint32_t flag_sets[] = {0, NPYIO_READ_NATIVE,
                                         NPYIO_READ_C_ORDER,
                                         NPYIO_READ_NATIVE |
                                             NPYIO_READ_C_ORDER};
    source s, p;
    npyio_status sm, sp;
    size_t f;

    if (size < 1)
        return 0;
    s.file = data + 1;
    s.size = size - 1;
    s.step = 1 + data[0] % 7;
    p = s;
    /* The header: both streams agree on it. */
    sm = open_source(&s, 0);
    sp = open_source(&p, 1);
    check((sm == NPYIO_OK) == (sp == NPYIO_OK) ||
          sm == NPYIO_E_TRUNCATED || sp == NPYIO_E_TRUNCATED);
    if (sm == NPYIO_OK && sp == NPYIO_OK)
        same_header(npyio_reader_header(s.reader),
                    npyio_reader_header(p.reader));
    close_source(&s);
    close_source(&p);
    if (sm != NPYIO_OK)
        return 0;
    for (f = 0; f < sizeof flag_sets / sizeof flag_sets[0]; f++) {
        size_t len = 0, cap = 1 + (size_t)(data[0] >> 3) * 37;
        void *whole = reference(&s, flag_sets[f], &len);

        if (whole == NULL)
            continue;
        compare_read(&s, flag_sets[f], whole, len);
        compare_chunks(&s, 0, flag_sets[f], whole, len, cap);
        compare_chunks(&s, 1, flag_sets[f], whole, len, cap);
        compare_rows(&s, 0, flag_sets[f], whole, len);
        compare_rows(&s, 1, flag_sets[f], whole, len);
        npyio_free(whole);
    }
    return 0;
}
