/*
 * stream_mem.c - stream back ends over memory: the caller's bytes, read
 * only (npyio_stream_open_memory), and a block that grows as it is written
 * (npyio_stream_create_memory, npyio_stream_take_bytes). Both read at an
 * offset too (pread), so windows can be opened over them.
 */
#include "alloc.h"
#include "error.h"
#include "stream.h"

#include <string.h>

typedef struct mem_state {
    unsigned char *bytes; /* growable: an npyio__alloc block, or NULL */
    size_t len, pos;
    const npyio__mem *mem;     /* growable: the stream's allocator */
} mem_state;

/* A seek within [0, len]. */
static npyio_status mem_seek(void *state, int64_t offset, int whence,
                             int64_t *out)
{
    mem_state *m = state;
    int64_t base = whence == NPYIO_SEEK_SET   ? 0
                   : whence == NPYIO_SEEK_CUR ? (int64_t)m->pos
                                              : (int64_t)m->len;

    if (offset > INT64_MAX - base || base + offset < 0 ||
        (uint64_t)(base + offset) > (uint64_t)SIZE_MAX)
        return npyio__fail(NPYIO_E_IO, "offset out of range");
    m->pos = (size_t)(base + offset);
    *out = base + offset;
    return NPYIO_OK;
}

static size_t copy_out(const mem_state *m, size_t from, void *buf, size_t cap)
{
    size_t left = from < m->len ? m->len - from : 0;
    size_t n = cap < left ? cap : left;

    if (n > 0)
        memcpy(buf, m->bytes + from, n);
    return n;
}

static npyio_status mem_read(void *state, void *buf, size_t cap, size_t *got)
{
    mem_state *m = state;

    *got = copy_out(m, m->pos, buf, cap);
    m->pos += *got;
    return NPYIO_OK;
}

static npyio_status mem_pread(void *state, void *buf, size_t cap,
                              int64_t offset, size_t *got)
{
    const mem_state *m = state;

    *got = (uint64_t)offset < (uint64_t)m->len
               ? copy_out(m, (size_t)offset, buf, cap)
               : 0;
    return NPYIO_OK;
}

static npyio_status mem_size(void *state, int64_t *size)
{
    *size = (int64_t)((const mem_state *)state)->len;
    return NPYIO_OK;
}

static const npyio__stream_backend memory_backend = {
    .name = "memory", .read = mem_read, .seek = mem_seek,
    .pread = mem_pread, .size = mem_size};

npyio_status npyio_stream_open_memory(const void *bytes, size_t len,
                                      const npyio_options *options,
                                      npyio_stream **out)
{
    mem_state *m;
    npyio_status st;

    if (out == NULL || (bytes == NULL && len > 0))
        return npyio__fail(NPYIO_E_INVALID_ARG, "npyio_stream_open_memory: "
                           "%s is NULL", out == NULL ? "out" : "bytes");
    st = npyio__stream_new(&memory_backend, sizeof *m, options, out,
                           (void **)&m);
    if (st == NPYIO_OK) {
        npyio__stream_set_position(*out, 0, true);
        /* Never written through: the memory backend has no write. */
        m->bytes = (unsigned char *)(uintptr_t)bytes;
        m->len = len;
    }
    return st;
}

/* ---- growable memory ------------------------------------------------------------------ */

static npyio_status growable_write(void *state, const void *buf, size_t len,
                                   size_t *put)
{
    mem_state *m = state;
    size_t end, have = npyio__block_size(m->bytes);

    *put = 0;
    if (!npyio__add_size(m->pos, len, &end))
        return npyio__fail(NPYIO_E_OVERFLOW, "the stream would exceed the "
                           "address space");
    if (end > have) {
        /* Double, so that n writes cost O(n) copies in all. */
        size_t grown = have < 4096 ? 4096 : have;
        void *block = m->bytes;
        npyio_status st;

        while (grown < end)
            grown = grown > SIZE_MAX / 2 ? end : grown * 2;
        st = npyio__realloc(m->mem, &block, grown, "growable stream");
        if (st != NPYIO_OK)
            return st;
        m->bytes = block;
    }
    if (m->pos > m->len) /* after a seek past the end */
        memset(m->bytes + m->len, 0, m->pos - m->len);
    memcpy(m->bytes + m->pos, buf, len);
    m->pos = end;
    if (end > m->len)
        m->len = end;
    *put = len;
    return NPYIO_OK;
}

static npyio_status growable_close(void *state)
{
    mem_state *m = state;

    npyio__free(m->bytes);
    m->bytes = NULL;
    return NPYIO_OK;
}

static const npyio__stream_backend growable_backend = {
    .name = "growable memory", .read = mem_read, .write = growable_write,
    .seek = mem_seek, .pread = mem_pread, .size = mem_size,
    .close = growable_close};

npyio_status npyio_stream_create_memory(const npyio_options *options,
                                        npyio_stream **out)
{
    mem_state *m;
    npyio_status st;

    if (out == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "npyio_stream_create_memory: out is NULL");
    st = npyio__stream_new(&growable_backend, sizeof *m, options, out,
                           (void **)&m);
    if (st == NPYIO_OK) {
        m->mem = npyio__stream_mem(*out);
        npyio__stream_set_position(*out, 0, true);
    }
    return st;
}

static npyio_status stream_take_bytes_body(npyio_stream *stream, void **bytes,
                                           size_t *len)
{
    static const char where[] = "npyio_stream_take_bytes";
    mem_state *m;
    npyio_status st;

    if (bytes == NULL || len == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: %s is NULL", where,
                           bytes == NULL ? "bytes" : "len");
    *bytes = NULL;
    *len = 0;
    st = npyio__check_stream(stream, where);
    if (st != NPYIO_OK)
        return st;
    if (!npyio__stream_is(stream, &growable_backend))
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: not a growable stream",
                           where);
    m = npyio__stream_state(stream);
    if (m->bytes == NULL)
        return npyio__alloc(npyio__stream_mem(stream), 0, "growable stream",
                            bytes);
    *bytes = m->bytes;
    *len = m->len;
    m->bytes = NULL;
    m->len = m->pos = 0;
    npyio__stream_set_position(stream, 0, true);
    return NPYIO_OK;
}

npyio_status npyio_stream_take_bytes(npyio_stream *stream, void **bytes,
                                     size_t *len)
{
    if (bytes != NULL)
        *bytes = NULL; /* outputs are cleared whatever is refused */
    if (len != NULL)
        *len = 0;
    return npyio__as_called(stream_take_bytes_body(stream, bytes, len),
                            "npyio_stream_take_bytes");
}
