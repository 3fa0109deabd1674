/*
 * stream.c - streams: the loops over short reads and writes, seeking,
 * caller callbacks, and the memory and growable back ends. Descriptor,
 * path and FILE* back ends are in stream_fd.c. Knows nothing of NPY.
 */
#include "stream.h"

#include <string.h>

/* ---- the common core ---------------------------------------------------------- */

/* Why a back end failed: built-in back ends leave the OS's reason in the
 * thread's message (copied out here, since the message is about to be
 * rewritten); caller callbacks say nothing, so their failure is named. */
static const char *cause_of(const npyio_stream *s, const char *callback,
                            char *buf, size_t cap)
{
    if (s->kind == NPYIO__STREAM_OPS)
        snprintf(buf, cap, "the %s callback failed", callback);
    else
        snprintf(buf, cap, "%s", npyio_last_error());
    return buf;
}

npyio_status npyio__check_stream(const npyio_stream *s, const char *where)
{
    if (s == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: stream is NULL", where);
    if (s->magic != NPYIO__MAGIC_STREAM)
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: the pointer given as a stream is not an "
                           "npyio_stream (or was closed)", where);
    return NPYIO_OK;
}

npyio_status npyio__stream_new(int kind, const npyio_stream_ops *ops,
                               const npyio_options *options,
                               npyio_stream **out)
{
    npyio__mem mem;
    npyio_stream *s;
    npyio_status st;

    *out = NULL;
    npyio__mem_init(&mem, options);
    st = npyio__alloc_zero(&mem, sizeof *s, "stream", (void **)&s);
    if (st != NPYIO_OK)
        return st;
    s->magic = NPYIO__MAGIC_STREAM;
    s->kind = kind;
    s->ops = *ops;
    s->user = s; /* built-in back ends find their state in the stream */
    s->mem = mem;
    *out = s;
    return NPYIO_OK;
}

npyio_status npyio__stream_read(npyio_stream *s, void *buf, size_t len,
                                size_t *got, const char *what)
{
    unsigned char *p = buf;
    size_t done = 0;

    *got = 0;
    if (s->ops.read == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "reading %s: the stream is "
                           "not readable", what);
    while (done < len) {
        size_t n = 0;

        if (s->ops.read(s->user, p + done, len - done, &n) != 0) {
            char cause[256];

            return npyio__fail(NPYIO_E_IO, "reading %s at stream offset "
                               "%lld: %s", what,
                               (long long)s->position + (long long)done,
                               cause_of(s, "read", cause, sizeof cause));
        }
        if (n == 0)
            break; /* the end of the data */
        if (n > len - done)
            return npyio__fail(NPYIO_E_IO, "reading %s: the read callback "
                               "reported %zu bytes for a request of %zu",
                               what, n, len - done);
        done += n;
    }
    s->position += (int64_t)done;
    *got = done;
    return NPYIO_OK;
}

npyio_status npyio__stream_write(npyio_stream *s, const void *buf, size_t len,
                                 const char *what)
{
    const unsigned char *p = buf;
    size_t done = 0;

    if (s->ops.write == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "writing %s: the stream is "
                           "not writable", what);
    while (done < len) {
        size_t n = 0;

        int failed = s->ops.write(s->user, p + done, len - done, &n);

        if (failed || n == 0 || n > len - done) {
            char cause[256];

            s->position += (int64_t)done;
            if (!failed)
                snprintf(cause, sizeof cause, "the write %s",
                         n == 0 ? "made no progress" : "reported too much");
            return npyio__fail(NPYIO_E_IO, "writing %s at stream offset "
                               "%lld: %s", what, (long long)s->position,
                               failed ? cause_of(s, "write", cause,
                                                 sizeof cause)
                                      : cause);
        }
        done += n;
    }
    s->position += (int64_t)done;
    return NPYIO_OK;
}

bool npyio__stream_seekable(const npyio_stream *s)
{
    return s->ops.seek != NULL;
}

npyio_status npyio__stream_seek(npyio_stream *s, int64_t offset, int whence,
                                int64_t *pos)
{
    int64_t at = 0;

    if (s->ops.seek == NULL)
        return npyio__fail(NPYIO_E_UNSUPPORTED, "the stream cannot seek (a "
                           "pipe or a socket?)");
    if (s->ops.seek(s->user, offset, whence, &at) != 0) {
        char cause[256];

        return npyio__fail(NPYIO_E_IO, "seeking to %lld (from %s): %s",
                           (long long)offset,
                           whence == NPYIO_SEEK_SET   ? "the start"
                           : whence == NPYIO_SEEK_CUR ? "the position"
                                                      : "the end",
                           cause_of(s, "seek", cause, sizeof cause));
    }
    s->position = at;
    if (pos != NULL)
        *pos = at;
    return NPYIO_OK;
}

npyio_status npyio__stream_remaining(npyio_stream *s, uint64_t *bytes)
{
    int64_t here = 0, end = 0;
    npyio_status st;

    *bytes = 0;
    st = npyio__stream_seek(s, 0, NPYIO_SEEK_CUR, &here);
    if (st == NPYIO_OK)
        st = npyio__stream_seek(s, 0, NPYIO_SEEK_END, &end);
    if (st == NPYIO_OK)
        st = npyio__stream_seek(s, here, NPYIO_SEEK_SET, NULL);
    if (st == NPYIO_OK && end > here)
        *bytes = (uint64_t)(end - here);
    return st;
}

/* ---- caller callbacks ----------------------------------------------------------- */

npyio_status npyio_stream_open_ops(const npyio_stream_ops *ops, void *user,
                                   const npyio_options *options,
                                   npyio_stream **out)
{
    static const char where[] = "npyio_stream_open_ops: ops";
    npyio_stream_ops copy;
    npyio_status st;

    if (out == NULL || ops == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "npyio_stream_open_ops: %s "
                           "is NULL", out == NULL ? "out" : "ops");
    *out = NULL;
    st = npyio__copy_table(&copy, sizeof copy, ops,
                           offsetof(npyio_stream_ops, close) +
                               sizeof ops->close,
                           where);
    if (st != NPYIO_OK)
        return st;
    if (copy.read == NULL && copy.write == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: read and write are both NULL", where);
    st = npyio__stream_new(NPYIO__STREAM_OPS, &copy, options, out);
    if (st == NPYIO_OK)
        (*out)->user = user;
    return st;
}

/* ---- memory ------------------------------------------------------------------------ */

/* Shared by the memory and growable back ends: a seek within [0, len]. */
static int seek_in(size_t len, size_t *pos, int64_t offset, int whence,
                   int64_t *out)
{
    int64_t base = whence == NPYIO_SEEK_SET   ? 0
                   : whence == NPYIO_SEEK_CUR ? (int64_t)*pos
                                              : (int64_t)len;

    if (offset > INT64_MAX - base || base + offset < 0 ||
        (uint64_t)(base + offset) > (uint64_t)SIZE_MAX) {
        npyio__fail(NPYIO_E_IO, "offset out of range");
        return -1;
    }
    *pos = (size_t)(base + offset);
    *out = base + offset;
    return 0;
}

static int memory_read(void *user, void *buf, size_t cap, size_t *got)
{
    npyio_stream *s = user;
    size_t left = s->u.memory.pos < s->u.memory.len
                      ? s->u.memory.len - s->u.memory.pos
                      : 0;

    *got = cap < left ? cap : left;
    memcpy(buf, s->u.memory.bytes + s->u.memory.pos, *got);
    s->u.memory.pos += *got;
    return 0;
}

static int memory_seek(void *user, int64_t offset, int whence, int64_t *pos)
{
    npyio_stream *s = user;

    return seek_in(s->u.memory.len, &s->u.memory.pos, offset, whence, pos);
}

npyio_status npyio_stream_open_memory(const void *bytes, size_t len,
                                      const npyio_options *options,
                                      npyio_stream **out)
{
    static const npyio_stream_ops ops = {sizeof ops, memory_read, NULL,
                                         memory_seek, NULL};
    npyio_status st;

    if (out == NULL || (bytes == NULL && len > 0))
        return npyio__fail(NPYIO_E_INVALID_ARG, "npyio_stream_open_memory: "
                           "%s is NULL", out == NULL ? "out" : "bytes");
    st = npyio__stream_new(NPYIO__STREAM_MEMORY, &ops, options, out);
    if (st == NPYIO_OK) {
        (*out)->u.memory.bytes = bytes;
        (*out)->u.memory.len = len;
    }
    return st;
}

/* ---- growable memory ------------------------------------------------------------------ */

static int growable_write(void *user, const void *buf, size_t len,
                          size_t *put)
{
    npyio_stream *s = user;
    size_t end, have = npyio__block_size(s->u.growable.bytes);

    *put = 0;
    if (!npyio__add_size(s->u.growable.pos, len, &end)) {
        npyio__fail(NPYIO_E_OVERFLOW, "the stream would exceed the address "
                    "space");
        return -1;
    }
    if (end > have) {
        /* Double, so that n writes cost O(n) copies in all. */
        size_t grown = have < 4096 ? 4096 : have;
        void *block = s->u.growable.bytes;

        while (grown < end)
            grown = grown > SIZE_MAX / 2 ? end : grown * 2;
        if (npyio__realloc(&s->mem, &block, grown, "growable stream") !=
            NPYIO_OK)
            return -1;
        s->u.growable.bytes = block;
    }
    if (s->u.growable.pos > s->u.growable.len) /* after a seek past the end */
        memset(s->u.growable.bytes + s->u.growable.len, 0,
               s->u.growable.pos - s->u.growable.len);
    memcpy(s->u.growable.bytes + s->u.growable.pos, buf, len);
    s->u.growable.pos = end;
    if (end > s->u.growable.len)
        s->u.growable.len = end;
    *put = len;
    return 0;
}

static int growable_read(void *user, void *buf, size_t cap, size_t *got)
{
    npyio_stream *s = user;
    size_t left = s->u.growable.pos < s->u.growable.len
                      ? s->u.growable.len - s->u.growable.pos
                      : 0;

    *got = cap < left ? cap : left;
    if (*got > 0)
        memcpy(buf, s->u.growable.bytes + s->u.growable.pos, *got);
    s->u.growable.pos += *got;
    return 0;
}

static int growable_seek(void *user, int64_t offset, int whence, int64_t *pos)
{
    npyio_stream *s = user;

    return seek_in(s->u.growable.len, &s->u.growable.pos, offset, whence,
                   pos);
}

npyio_status npyio_stream_open_growable(const npyio_options *options,
                                        npyio_stream **out)
{
    static const npyio_stream_ops ops = {sizeof ops, growable_read,
                                         growable_write, growable_seek, NULL};

    if (out == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "npyio_stream_open_growable: out is NULL");
    return npyio__stream_new(NPYIO__STREAM_GROWABLE, &ops, options, out);
}

static npyio_status stream_take_bytes_body(npyio_stream *stream, void **bytes,
                                           size_t *len)
{
    static const char where[] = "npyio_stream_take_bytes";
    npyio_status st;

    if (bytes == NULL || len == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: %s is NULL", where,
                           bytes == NULL ? "bytes" : "len");
    *bytes = NULL;
    *len = 0;
    st = npyio__check_stream(stream, where);
    if (st != NPYIO_OK)
        return st;
    if (stream->kind != NPYIO__STREAM_GROWABLE)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: not a growable stream",
                           where);
    if (stream->u.growable.bytes == NULL) {
        st = npyio__alloc(&stream->mem, 0, "growable stream", bytes);
        return st;
    }
    *bytes = stream->u.growable.bytes;
    *len = stream->u.growable.len;
    stream->u.growable.bytes = NULL;
    stream->u.growable.len = stream->u.growable.pos = 0;
    stream->position = 0;
    return NPYIO_OK;
}

npyio_status npyio_stream_take_bytes(npyio_stream *stream, void **bytes,
                                     size_t *len)
{
    return npyio__as_called(stream_take_bytes_body(stream, bytes, len),
                            "npyio_stream_take_bytes");
}

/* ---- closing --------------------------------------------------------------------------- */

static npyio_status stream_close_body(npyio_stream *stream)
{
    npyio_status st = NPYIO_OK;

    if (stream == NULL || stream->magic != NPYIO__MAGIC_STREAM)
        return NPYIO_OK;
    if (stream->ops.close != NULL && stream->ops.close(stream->user) != 0) {
        char cause[256];

        st = npyio__fail(NPYIO_E_IO, "closing the stream: %s",
                         cause_of(stream, "close", cause, sizeof cause));
    }
    if (stream->kind == NPYIO__STREAM_GROWABLE)
        npyio__free(stream->u.growable.bytes);
    stream->magic = NPYIO__MAGIC_DEAD;
    npyio__free(stream);
    return st;
}

npyio_status npyio_stream_close(npyio_stream *stream)
{
    return npyio__as_called(stream_close_body(stream),
                            "npyio_stream_close");
}
