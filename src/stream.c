/*
 * stream.c - the stream core: the loops over short reads and writes,
 * seeking, the position and the messages, over any back end's table
 * (stream.h). The back ends are in stream_ops.c (the caller's callbacks),
 * stream_mem.c (memory, growable), stream_fd.c (descriptors, files
 * replaced atomically, FILE*), stream_window.c (windows of another
 * stream), npz_member.c and npz_entry.c (archive members read and
 * written). Knows nothing of NPY, and nothing of any back end's state:
 * the stream's own fields are private to this file (stream.h's
 * accessors).
 */
#include "error.h"
#include "options.h"
#include "stream.h"
#include "threads.h"

#include <string.h>

struct npyio_stream {
    uint32_t magic;
    const npyio__stream_backend *backend;
    void *state;       /* the back end's, allocated with the stream */
    bool seekable;     /* backend->seek exists and works on this object
                          (once probed: use npyio__stream_seekable()) */
    bool probe_pending; /* backend->probe has not been asked yet */
    npyio__mem mem;
    int64_t position;  /* bytes from where the stream was opened, or the
                          absolute offset once known (position_known) */
    bool position_known; /* position is the absolute offset: set by back
                            ends that know it at open, and by any seek */
};

/* The state follows the stream in one block, at this alignment. */
#define STATE_ALIGN _Alignof(max_align_t)
#define STATE_OFFSET \
    ((sizeof(npyio_stream) + STATE_ALIGN - 1) / STATE_ALIGN * STATE_ALIGN)

npyio_status npyio__check_stream(const npyio_stream *s, const char *where)
{
    if (s == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: stream is NULL", where);
    if (s->magic != NPYIO__MAGIC_STREAM)
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: the pointer given as a stream is not a "
                           "live npyio_stream", where);
    return NPYIO_OK;
}

npyio_status npyio__stream_new_scratch(const npyio__stream_backend *backend,
                                       size_t state_size, size_t scratch,
                                       const npyio_options *options,
                                       npyio_stream **out, void **state)
{
    size_t total;
    npyio__mem mem;
    npyio_stream *s;
    npyio_status st;

    *out = NULL;
    npyio__mem_init(&mem, options);
    /* Zeroed: the stream and the back end's state; not the scratch space
     * at its end (a read-ahead buffer), which would cost more to zero
     * than a small file takes to load. */
    if (!npyio__add_size(STATE_OFFSET + state_size, scratch, &total))
        return npyio__fail(NPYIO_E_OVERFLOW, "stream: too large");
    st = npyio__alloc(&mem, total, "stream", (void **)&s);
    if (st != NPYIO_OK)
        return st;
    memset(s, 0, STATE_OFFSET + state_size);
    s->magic = NPYIO__MAGIC_STREAM;
    s->backend = backend;
    s->state = (unsigned char *)s + STATE_OFFSET;
    s->seekable = backend->seek != NULL;
    s->mem = mem;
    *out = s;
    if (state != NULL)
        *state = s->state;
    return NPYIO_OK;
}

npyio_status npyio__stream_new(const npyio__stream_backend *backend,
                               size_t state_size,
                               const npyio_options *options,
                               npyio_stream **out, void **state)
{
    return npyio__stream_new_scratch(backend, state_size, 0, options, out,
                                     state);
}

bool npyio__stream_is(const npyio_stream *s,
                      const npyio__stream_backend *backend)
{
    return s != NULL && s->magic == NPYIO__MAGIC_STREAM &&
           s->backend == backend;
}

/* The position after `done` more bytes. A seek callback may report any
 * position, INT64_MAX included: one that a read or write cannot pass is
 * NPYIO_E_IO rather than an overflow. */
static npyio_status advance(npyio_stream *s, size_t done, const char *verb,
                            const char *what)
{
    if ((uint64_t)done > (uint64_t)(INT64_MAX - s->position))
        return npyio__fail(NPYIO_E_IO, "%s %s: the stream's position %lld "
                           "plus %zu bytes passes the largest offset, "
                           "2^63 - 1 (a position its seek reported)", verb,
                           what, (long long)s->position, done);
    s->position += (int64_t)done;
    return NPYIO_OK;
}

npyio_status npyio__stream_read(npyio_stream *s, void *buf, size_t len,
                                size_t *got, const char *what)
{
    unsigned char *p = buf;
    size_t done = 0;
    npyio_status st;

    *got = 0;
    if (s->backend->read == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "reading %s: the stream is "
                           "not readable", what);
    while (done < len) {
        size_t n = 0;

        st = s->backend->read(s->state, p + done, len - done, &n);

        if (st != NPYIO_OK)
            return npyio__fail(st, "reading %s at stream offset %llu: %s",
                               what,
                               (unsigned long long)s->position +
                                   (unsigned long long)done,
                               npyio_last_error());
        if (n == 0)
            break; /* the end of the data */
        if (n > len - done)
            return npyio__fail(NPYIO_E_IO, "reading %s: the read callback "
                               "reported %zu bytes for a request of %zu",
                               what, n, len - done);
        done += n;
    }
    st = advance(s, done, "reading", what);
    if (st == NPYIO_OK)
        *got = done;
    return st;
}

size_t npyio__stream_room(const npyio_stream *s, size_t len)
{
    return s->backend->room != NULL && len > 0
               ? s->backend->room(s->state, len)
               : 0;
}

npyio_status npyio__stream_read_room(npyio_stream *s, void *buf, size_t len,
                                     size_t room, size_t *got,
                                     const char *what)
{
    size_t n = 0, more = 0;
    npyio_status st;

    *got = 0;
    if (room == 0 || s->backend->read_room == NULL || len == 0)
        return npyio__stream_read(s, buf, len, got, what);
    st = s->backend->read_room(s->state, buf, len, room, &n);
    if (st != NPYIO_OK)
        return npyio__fail(st, "reading %s at stream offset %llu: %s", what,
                           (unsigned long long)s->position,
                           npyio_last_error());
    st = advance(s, n, "reading", what);
    if (st == NPYIO_OK && n > 0 && n < len)
        st = npyio__stream_read(s, (unsigned char *)buf + n, len - n, &more,
                                what);
    if (st == NPYIO_OK)
        *got = n + more;
    return st;
}

npyio_status npyio__stream_write(npyio_stream *s, const void *buf, size_t len,
                                 const char *what)
{
    const unsigned char *p = buf;
    size_t done = 0;

    if (s->backend->write == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "writing %s: the stream is "
                           "not writable", what);
    while (done < len) {
        size_t n = 0;
        npyio_status st = s->backend->write(s->state, p + done, len - done,
                                            &n);

        if (st == NPYIO_OK && (n == 0 || n > len - done))
            st = npyio__fail(NPYIO_E_IO, "the write %s",
                             n == 0 ? "made no progress"
                                    : "reported too much");
        if (st != NPYIO_OK) {
            npyio__saved_message saved;

            npyio__message_save(&saved);
            (void)advance(s, done, "writing", what);
            npyio__message_restore(&saved);
            return npyio__fail(st, "writing %s at stream offset %lld: %s",
                               what, (long long)s->position,
                               npyio_last_error());
        }
        done += n;
    }
    return advance(s, done, "writing", what);
}

bool npyio__stream_seekable(npyio_stream *s)
{
    if (s->probe_pending) {
        s->probe_pending = false;
        s->backend->probe(s->state, &s->seekable, &s->backend);
    }
    return s->seekable;
}

size_t npyio__stream_buffered(npyio_stream *s)
{
    return s->backend->buffered != NULL ? s->backend->buffered(s->state) : 0;
}

npyio_status npyio__stream_seek(npyio_stream *s, int64_t offset, int whence,
                                int64_t *pos)
{
    int64_t at = 0;
    npyio_status st;

    if (!npyio__stream_seekable(s))
        return npyio__fail(NPYIO_E_UNSUPPORTED, "the stream cannot seek (a "
                           "pipe or a socket?)");
    st = s->backend->seek(s->state, offset, whence, &at);
    if (st == NPYIO_OK && at < 0)
        st = npyio__fail(NPYIO_E_IO, "the %s stream's seek reported position "
                         "%lld, before the start", s->backend->name,
                         (long long)at);
    if (st != NPYIO_OK)
        return npyio__fail(st, "seeking to %lld (from %s): %s",
                           (long long)offset,
                           whence == NPYIO_SEEK_SET   ? "the start"
                           : whence == NPYIO_SEEK_CUR ? "the position"
                                                      : "the end",
                           npyio_last_error());
    s->position = at;
    s->position_known = true;
    if (pos != NULL)
        *pos = at;
    return NPYIO_OK;
}

npyio_status npyio__stream_tell(npyio_stream *s, int64_t *pos)
{
    if (s->position_known && npyio__stream_seekable(s)) {
        *pos = s->position;
        return NPYIO_OK;
    }
    return npyio__stream_seek(s, 0, NPYIO_SEEK_CUR, pos);
}

npyio_status npyio__stream_remaining(npyio_stream *s, uint64_t *bytes)
{
    int64_t here = 0, end = 0;
    npyio_status st;

    *bytes = 0;
    if (s->position_known && npyio__stream_seekable(s) &&
        s->backend->size != NULL) {
        /* No seeks: the back end knows the length. */
        st = s->backend->size(s->state, &end);
        if (st != NPYIO_OK)
            return npyio__fail(st, "the stream's length: %s",
                               npyio_last_error());
        if (end > s->position)
            *bytes = (uint64_t)(end - s->position);
        return NPYIO_OK;
    }
    st = npyio__stream_seek(s, 0, NPYIO_SEEK_CUR, &here);
    if (st == NPYIO_OK)
        st = npyio__stream_seek(s, 0, NPYIO_SEEK_END, &end);
    if (st == NPYIO_OK)
        st = npyio__stream_seek(s, here, NPYIO_SEEK_SET, NULL);
    if (st == NPYIO_OK && end > here)
        *bytes = (uint64_t)(end - here);
    return st;
}

/* A transfer of len bytes at offset that the back end can make (`able`),
 * within the offsets of int64_t; reading: a read, else a write. */
static npyio_status check_positioned(bool able, bool reading,
                                     const char *what, size_t len,
                                     int64_t offset)
{
    const char *doing = reading ? "reading" : "writing";

    if (!able)
        return npyio__fail(NPYIO_E_UNSUPPORTED, "%s %s: the stream cannot "
                           "%s at an offset", doing, what,
                           reading ? "read" : "write");
    if (offset < 0 || (uint64_t)len > (uint64_t)(INT64_MAX - offset))
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s %s: %zu bytes at "
                           "offset %lld are out of range", doing, what, len,
                           (long long)offset);
    return NPYIO_OK;
}

npyio_status npyio__stream_pread(npyio_stream *s, void *buf, size_t len,
                                 int64_t offset, size_t *got,
                                 const char *what)
{
    return npyio__stream_pread_part(s, NULL, buf, len, offset, got, what);
}

npyio_status npyio__stream_pread_part(npyio_stream *s,
                                      npyio__stream_part *part, void *buf,
                                      size_t len, int64_t offset,
                                      size_t *got, const char *what)
{
    bool parts = part != NULL && s->backend->pread_part != NULL;
    unsigned char *p = buf;
    size_t done = 0;

    npyio_status st = check_positioned(s->backend->pread != NULL, true,
                                       what, len, offset);

    *got = 0;
    if (st != NPYIO_OK)
        return st;
    while (done < len) {
        size_t n = 0;

        st = parts ? s->backend->pread_part(s->state, p + done, len - done,
                                            offset + (int64_t)done, &n, part)
                   : s->backend->pread(s->state, p + done, len - done,
                                       offset + (int64_t)done, &n);

        if (st != NPYIO_OK)
            return npyio__fail(st, "reading %s at offset %lld: %s", what,
                               (long long)offset + (long long)done,
                               npyio_last_error());
        if (n == 0)
            break;
        if (n > len - done)
            return npyio__fail(NPYIO_E_IO, "reading %s: %zu bytes reported "
                               "for a request of %zu", what, n, len - done);
        done += n;
    }
    *got = done;
    return NPYIO_OK;
}

npyio_status npyio__stream_read_all(npyio_stream *s, const npyio__mem *mem,
                                    size_t want, const char *what, void **out,
                                    size_t *len)
{
    const size_t first_step = (size_t)1 << 20;
    void *block = NULL;
    size_t have = 0, size = 0, got;
    npyio_status st = NPYIO_OK;

    for (;;) {
        size_t next = size == 0 ? first_step : size > SIZE_MAX / 2 ? SIZE_MAX
                                                                   : 2 * size;

        if (want != 0 && next > want)
            next = want;
        if (next > size) {
            st = npyio__realloc(mem, &block, next, what);
            if (st != NPYIO_OK)
                break;
            size = next;
        }
        st = npyio__stream_read(s, (unsigned char *)block + have, size - have,
                                &got, what);
        if (st != NPYIO_OK)
            break;
        have += got;
        if (have < size || (want != 0 && have == want))
            break; /* the end of the stream, or all of it */
    }
    if (st == NPYIO_OK && block == NULL)
        st = npyio__alloc(mem, 0, what, &block);
    if (st != NPYIO_OK) {
        npyio__free(block);
        return st;
    }
    *out = block;
    *len = have;
    return NPYIO_OK;
}

npyio_status npyio__stream_sync(npyio_stream *s, bool durable)
{
    npyio_status st;

    if (s->backend->sync == NULL)
        return NPYIO_OK;
    st = s->backend->sync(s->state, durable);
    if (st != NPYIO_OK)
        return npyio__fail(st, "%s the stream: %s",
                           durable ? "syncing" : "flushing",
                           npyio_last_error());
    return NPYIO_OK;
}

npyio_status npyio__stream_commit(npyio_stream *s, bool durable)
{
    npyio_status st;

    if (s->backend->commit == NULL)
        return npyio__stream_sync(s, durable);
    st = s->backend->commit(s->state, durable);
    if (st != NPYIO_OK)
        return npyio__fail(st, "finishing the stream: %s",
                           npyio_last_error());
    return NPYIO_OK;
}

npyio_status npyio__stream_finish(npyio_stream *s)
{
    return s->backend->finish != NULL ? s->backend->finish(s->state)
                                      : NPYIO_OK;
}

void npyio__stream_abort(npyio_stream *s)
{
    if (s->backend->abort != NULL)
        s->backend->abort(s->state);
}

/* ---- reading, for the caller ------------------------------------------------------ */

static npyio_status stream_read_body(npyio_stream *stream, void *buf,
                                     size_t cap, size_t *got)
{
    static const char where[] = "npyio_stream_read";
    npyio_status st;

    if (got == NULL || (buf == NULL && cap > 0))
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: %s is NULL", where,
                           got == NULL ? "got" : "buf");
    *got = 0;
    st = npyio__check_stream(stream, where);
    if (st != NPYIO_OK)
        return st;
    return npyio__stream_read(stream, buf, cap, got, "the stream");
}

npyio_status npyio_stream_read(npyio_stream *stream, void *buf, size_t cap,
                               size_t *got)
{
    if (got != NULL)
        *got = 0; /* outputs are cleared whatever is refused */
    return npyio__as_called(stream_read_body(stream, buf, cap, got),
                            "npyio_stream_read");
}

/* ---- closing --------------------------------------------------------------------------- */

npyio_status npyio__stream_close(npyio_stream *stream)
{
    npyio_status st = NPYIO_OK;

    if (stream == NULL || stream->magic != NPYIO__MAGIC_STREAM)
        return NPYIO_OK;
    if (stream->backend->close != NULL) {
        st = stream->backend->close(stream->state);
        if (st != NPYIO_OK)
            st = npyio__fail(st, "closing the stream: %s",
                             npyio_last_error());
    }
    stream->magic = NPYIO__MAGIC_DEAD;
    npyio__free(stream);
    return st;
}

npyio_status npyio_stream_close(npyio_stream *stream)
{
    return npyio__as_called(npyio__stream_close(stream),
                            "npyio_stream_close");
}

npyio_status npyio__stream_read_at(npyio_stream *s, void *buf, size_t len,
                                   int64_t offset, size_t *got,
                                   const char *what)
{
    npyio_status st;

    if (s->backend->pread != NULL)
        return npyio__stream_pread(s, buf, len, offset, got, what);
    *got = 0;
    st = npyio__stream_seek(s, offset, NPYIO_SEEK_SET, NULL);
    if (st != NPYIO_OK)
        return npyio__fail(st, "reading %s at offset %lld: %s", what,
                           (long long)offset, npyio_last_error());
    return npyio__stream_read(s, buf, len, got, what);
}

npyio_status npyio__stream_length(npyio_stream *s, int64_t *length)
{
    int64_t here = 0;
    npyio_status st;

    *length = 0;
    if (!npyio__stream_seekable(s))
        return npyio__fail(NPYIO_E_UNSUPPORTED, "the stream cannot seek (a "
                           "pipe or a socket?)");
    if (s->backend->size != NULL) {
        st = s->backend->size(s->state, length);
        return st == NPYIO_OK ? st : npyio__fail(st, "the stream's length: "
                                                 "%s", npyio_last_error());
    }
    st = npyio__stream_tell(s, &here);
    if (st == NPYIO_OK)
        st = npyio__stream_seek(s, 0, NPYIO_SEEK_END, length);
    if (st == NPYIO_OK)
        st = npyio__stream_seek(s, here, NPYIO_SEEK_SET, NULL);
    return st;
}

/* ---- positioned writes, sizes, locks, copies, maps --------------------------------- */

npyio_status npyio__stream_pwrite(npyio_stream *s, const void *buf,
                                  size_t len, int64_t offset,
                                  const char *what)
{
    const unsigned char *p = buf;
    size_t done = 0;

    npyio_status st = check_positioned(s->backend->pwrite != NULL, false,
                                       what, len, offset);

    if (st != NPYIO_OK)
        return st;
    while (done < len) {
        size_t n = 0;

        st = s->backend->pwrite(s->state, p + done, len - done,
                                offset + (int64_t)done, &n);

        if (st == NPYIO_OK && (n == 0 || n > len - done))
            st = npyio__fail(NPYIO_E_IO, "the write %s",
                             n == 0 ? "made no progress"
                                    : "reported too much");
        if (st != NPYIO_OK)
            return npyio__fail(st, "writing %s at offset %lld: %s", what,
                               (long long)offset + (long long)done,
                               npyio_last_error());
        done += n;
    }
    return NPYIO_OK;
}

npyio_status npyio__stream_resize(npyio_stream *s, int64_t size, bool reserve)
{
    npyio_status st;

    if (s->backend->resize == NULL)
        return npyio__fail(NPYIO_E_UNSUPPORTED, "the %s stream cannot "
                           "change its length", s->backend->name);
    st = s->backend->resize(s->state, size, reserve);
    if (st != NPYIO_OK)
        return npyio__fail(st, "%s the stream to %lld bytes: %s",
                           reserve ? "reserving" : "resizing",
                           (long long)size, npyio_last_error());
    return NPYIO_OK;
}

npyio_status npyio__stream_lock(npyio_stream *s, bool exclusive, bool wait)
{
    return s->backend->lock != NULL ? s->backend->lock(s->state, exclusive,
                                                       wait)
                                    : NPYIO_OK;
}

/* Whether n bytes at p are all zero (each byte equal to the one before). */
static bool all_zeros(const unsigned char *p, size_t n)
{
    return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

/*
 * The copy when the back end cannot: through a buffer, at offsets. Where
 * the (empty) destination can set its length, blocks of zeros are not
 * written but left as holes, its length set at the end: a sparse
 * archive's copy stays sparse, as the kernel copy keeps it where there is
 * one (not in a portable build, NPYIO_PORTABLE, nor between file systems).
 */
static npyio_status copy_buffered(npyio_stream *to, npyio_stream *from,
                                  int64_t len)
{
    const size_t block = (size_t)1 << 16;
    const bool holes = to->backend->resize != NULL;
    unsigned char *buf = NULL;
    int64_t done = 0;
    npyio_status st = npyio__alloc(&to->mem, block, "a copy buffer",
                                   (void **)&buf);

    while (st == NPYIO_OK && done < len) {
        size_t want = len - done < (int64_t)block ? (size_t)(len - done)
                                                  : block;
        size_t got = 0;

        st = npyio__stream_read_at(from, buf, want, done, &got, "a copy");
        if (st == NPYIO_OK && got < want)
            st = npyio__fail(NPYIO_E_TRUNCATED, "the file ends at offset "
                             "%lld, before the %lld bytes to copy",
                             (long long)(done + (int64_t)got),
                             (long long)len);
        if (st == NPYIO_OK && !(holes && all_zeros(buf, want)))
            st = npyio__stream_pwrite(to, buf, want, done, "a copy");
        done += (int64_t)want;
    }
    npyio__free(buf);
    if (st == NPYIO_OK && holes)
        st = npyio__stream_resize(to, len, false);
    return st;
}

npyio_status npyio__stream_copy(npyio_stream *to, npyio_stream *from,
                                int64_t len, const char **how)
{
    npyio_status st = NPYIO_E_UNSUPPORTED;

    if (to->backend->copy_from != NULL) {
        npyio__saved_message saved;

        npyio__message_save(&saved);
        st = to->backend->copy_from(to->state, from, len, how);
        if (st == NPYIO_E_UNSUPPORTED)
            npyio__message_restore(&saved);
    }
    if (st == NPYIO_E_UNSUPPORTED) {
        *how = "buffered copy";
        st = copy_buffered(to, from, len);
    }
    if (st == NPYIO_OK)
        st = npyio__stream_seek(to, len, NPYIO_SEEK_SET, NULL);
    return st;
}

npyio_status npyio__stream_map(npyio_stream *s, int64_t offset, size_t len,
                               bool writable, npyio__region *region)
{
    memset(region, 0, sizeof *region);
    if (s->backend->map == NULL)
        return npyio__fail(NPYIO_E_UNSUPPORTED, "the %s stream cannot be "
                           "mapped into memory", s->backend->name);
    if (offset < 0)
        return npyio__fail(NPYIO_E_INVALID_ARG, "mapping at offset %lld",
                           (long long)offset);
    return s->backend->map(s->state, offset, len > 0 ? len : 1, writable,
                           region);
}

npyio_status npyio__region_release(npyio__region *region, bool sync)
{
    npyio_status st = NPYIO_OK;

    if (region->base != NULL && region->release != NULL)
        st = region->release(region->base, region->len, sync);
    memset(region, 0, sizeof *region);
    return st;
}

npyio_status npyio__stream_require(npyio_stream *s, bool resize,
                                   const char *where)
{
    const char *lacks = !npyio__stream_seekable(s)       ? "seek"
                        : s->backend->read == NULL       ? "read"
                        : s->backend->pread == NULL      ? "read at an offset"
                        : s->backend->pwrite == NULL     ? "write at an offset"
                        : resize && s->backend->resize == NULL
                            ? "change its length"
                            : NULL;

    if (lacks == NULL)
        return NPYIO_OK;
    return npyio__fail(NPYIO_E_UNSUPPORTED, "%s: the %s stream cannot %s",
                       where, s->backend->name, lacks);
}

int npyio__stream_descriptor(npyio_stream *s)
{
    return s->backend->descriptor != NULL ? s->backend->descriptor(s->state)
                                          : -1;
}

/* ---- the stream's own fields ------------------------------------------------------- */

void *npyio__stream_state(npyio_stream *s)
{
    return s->state;
}

npyio_status npyio__stream_pread_some(npyio_stream *s, void *buf, size_t cap,
                                      int64_t offset, size_t *got)
{
    return s->backend->pread(s->state, buf, cap, offset, got);
}

void *npyio__stream_state_of(npyio_stream *s,
                             const npyio__stream_backend *backend)
{
    return npyio__stream_is(s, backend) ? s->state : NULL;
}

const npyio__mem *npyio__stream_mem(npyio_stream *s)
{
    return &s->mem;
}

void npyio__stream_set_backend(npyio_stream *s,
                               const npyio__stream_backend *backend)
{
    s->backend = backend;
    s->seekable = backend->seek != NULL;
}

void npyio__stream_set_seekable(npyio_stream *s, bool seekable)
{
    s->seekable = seekable;
}

void npyio__stream_set_position(npyio_stream *s, int64_t pos, bool known)
{
    s->position = pos;
    s->position_known = known;
}

void npyio__stream_defer_probe(npyio_stream *s)
{
    s->probe_pending = true;
}

bool npyio__stream_known_position(const npyio_stream *s, int64_t *pos)
{
    if (s->position_known)
        *pos = s->position;
    return s->position_known;
}

const char *npyio__stream_kind(const npyio_stream *s)
{
    return s->backend->name;
}

bool npyio__stream_has_pread(const npyio_stream *s)
{
    return s->backend->pread != NULL;
}

bool npyio__stream_has_finish(const npyio_stream *s)
{
    return s->backend->finish != NULL;
}

bool npyio__stream_reads_in_parts(const npyio_stream *s)
{
    return s->backend->pread != NULL &&
           (s->backend->finish == NULL || s->backend->pread_part != NULL);
}

void npyio__stream_parts_cut(npyio__stream_parts *p, npyio_stream *s,
                             int64_t start, uint64_t units,
                             size_t unit_bytes, unsigned threads)
{
    size_t k;

    p->stream = s;
    p->threads = threads;
    p->count = npyio__part_count(units, unit_bytes, threads);
    if (p->count > NPYIO__MAX_PARTS)
        p->count = NPYIO__MAX_PARTS;
    for (k = 0; k < p->count; k++) {
        npyio__stream_part *part = &p->part[k];

        part->first = npyio__part_start(units, p->count, k);
        part->end = npyio__part_start(units, p->count, k + 1);
        part->start = start + (int64_t)(part->first * unit_bytes);
        part->len = (part->end - part->first) * unit_bytes;
        part->summed = 0;
        part->sum = 0;
        part->status = NPYIO_OK;
    }
}

/* npyio__run_parallel's job: the caller's job on part k. */
typedef struct parts_run {
    npyio__stream_parts *p;
    void (*job)(void *ctx, size_t k, npyio__stream_part *part);
    void *ctx;
} parts_run;

static void run_part_job(void *ctx, size_t k)
{
    parts_run *run = ctx;

    run->job(run->ctx, k, &run->p->part[k]);
}

bool npyio__stream_read_parts(npyio__stream_parts *p,
                              void (*job)(void *ctx, size_t k,
                                          npyio__stream_part *part),
                              void *ctx)
{
    const npyio__stream_backend *b = p->stream->backend;
    parts_run run = {p, job, ctx};
    npyio__saved_message saved;
    size_t k;

    npyio__message_save(&saved);
    npyio__run_parallel(p->count, p->threads, run_part_job, &run);
    npyio__message_restore(&saved);
    for (k = 0; k < p->count; k++)
        if (p->part[k].status != NPYIO_OK)
            return false;
    return b->parts_done == NULL ||
           b->parts_done(p->stream->state, p->part, p->count);
}
