/*
 * header_io.c - .npy headers read from and written to streams (see
 * header_io.h). The parsing and emitting themselves are header.c's.
 */
#include "alloc.h"
#include "error.h"
#include "header_io.h"

#include <string.h>

static npyio_status truncated_header(size_t got, size_t want)
{
    return npyio__fail(NPYIO_E_TRUNCATED, "the file ends after %zu bytes, "
                       "inside its %zu-byte header", got, want);
}

/* Magic, version and length field: 8 bytes tell the version, which tells
 * how many more the length field needs. */
static npyio_status read_preamble(npyio_stream *s,
                                  const npyio_options *options,
                                  unsigned char *bytes, size_t *got,
                                  npyio__preamble *pre)
{
    size_t need = 0, more = 0;
    npyio_status st;

    st = npyio__stream_read(s, bytes, 8, got, "the header");
    if (st != NPYIO_OK)
        return st;
    /* The version tells how long the length field is: read the rest of
     * the preamble before parsing it, so that a good file never goes
     * through the parser's "too short" path (whose message costs a fifth
     * of a small file's load). Anything else is the parser's to name. */
    if (*got == 8 && memcmp(bytes, "\x93NUMPY", 6) == 0 && bytes[6] >= 1 &&
        bytes[6] <= 3) {
        need = bytes[6] == 1 ? 10 : 12;
        st = npyio__stream_read(s, bytes + 8, need - 8, &more, "the header");
        *got += more;
        if (st != NPYIO_OK)
            return st;
    }
    return npyio__preamble_parse(bytes, *got, options, pre, &need);
}

npyio_status npyio__header_read(npyio_stream *s, const npyio_options *options,
                                const npyio__mem *mem, npyio_header **out)
{
    unsigned char pre_bytes[NPYIO__PREAMBLE_MAX];
    npyio__preamble pre;
    unsigned char *buf = NULL;
    size_t got = 0, more = 0, total;
    uint64_t left;
    bool whole;
    npyio_status st;

    *out = NULL;
    st = read_preamble(s, options, pre_bytes, &got, &pre);
    if (st != NPYIO_OK)
        return st;
    if (pre.hlen > SIZE_MAX - pre.prefix)
        return npyio__fail(NPYIO_E_OVERFLOW, "the header is larger than this "
                           "host's address space");
    total = pre.prefix + (size_t)pre.hlen;
    /* A header read ahead whole needs no length check: most files. */
    whole = npyio__stream_buffered(s) >= total - got;
    if (whole || npyio__stream_seekable(s)) {
        /* A failed length check is the stream's failure, never a short
         * file: its position may be anywhere now. */
        if (!whole && (st = npyio__stream_remaining(s, &left)) != NPYIO_OK)
            return st;
        if (!whole && left < pre.hlen)
            return truncated_header(got + (size_t)left, total);
        st = npyio__alloc(mem, total, "header", (void **)&buf);
        if (st == NPYIO_OK)
            st = npyio__stream_read(s, buf + got, total - got, &more,
                                    "the header");
    } else {
        /* A pipe's length is unknown: memory follows the bytes that
         * arrive, then the whole header is put together. */
        void *rest = NULL;

        st = npyio__stream_read_all(s, mem, total - got, "the header", &rest,
                                    &more);
        if (st == NPYIO_OK && more == total - got)
            st = npyio__alloc(mem, total, "header", (void **)&buf);
        if (st == NPYIO_OK && buf != NULL)
            memcpy(buf + got, rest, more);
        npyio__free(rest);
    }
    if (buf != NULL)
        memcpy(buf, pre_bytes, got);
    if (st == NPYIO_OK && more < total - got)
        st = truncated_header(got + more, total);
    if (st == NPYIO_OK)
        st = npyio__header_parse(buf, total, options, out, NULL);
    npyio__free(buf);
    return st;
}

npyio_status npyio__header_check_data(npyio_stream *s, const npyio_header *h,
                                      bool *checked)
{
    uint64_t left;
    npyio_status st;

    *checked = false;
    if (npyio_dtype_has_objects(h->dtype))
        return NPYIO_OK; /* a pickle's length is not in the header */
    /* Read ahead already: no need to ask the stream what it is. */
    *checked = npyio__stream_buffered(s) >= (uint64_t)h->nbytes;
    if (*checked || !npyio__stream_seekable(s))
        return NPYIO_OK;
    st = npyio__stream_remaining(s, &left);
    if (st != NPYIO_OK)
        return st;
    if (left < (uint64_t)h->nbytes)
        return npyio__fail(NPYIO_E_TRUNCATED, "the data section is %llu "
                           "bytes, but the header promises %lld",
                           (unsigned long long)left, (long long)h->nbytes);
    *checked = true;
    return NPYIO_OK;
}

npyio_status npyio__header_write(npyio_stream *s, const npyio__mem *mem,
                                 const npyio_header *h, int version)
{
    unsigned char small[512];
    unsigned char *bytes = small;
    size_t len = 0;
    npyio_status st = npyio__header_emit(mem, h, version, small, sizeof small,
                                         &len);

    if (st == NPYIO_E_BUFFER_TOO_SMALL) {
        st = npyio__alloc(mem, len, "header", (void **)&bytes);
        if (st == NPYIO_OK)
            st = npyio__header_emit(mem, h, version, bytes, len, &len);
    }
    if (st == NPYIO_OK)
        st = npyio__stream_write(s, bytes, len, "the header");
    if (bytes != small)
        npyio__free(bytes);
    return st;
}
