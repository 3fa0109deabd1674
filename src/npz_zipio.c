/*
 * npz_zipio.c - minizip's I/O over our stream: minizip writes the
 * archive's structure through its 64-bit ioapi table, whose calls become
 * the stream's; the first failure of one is kept for the archive
 * (minizip's own codes say less).
 *
 * While minizip has the archive open, the archive's stream is a buffer
 * over the real one: minizip writes a member's local header in several
 * small writes and seeks back to patch it at the member's close (about 20
 * writes and 2 seeks a member), and our members' bytes, their header
 * rewrites and tells go through the same stream (npz_entry.c), so the
 * buffer serves them all. Bytes go out in writes of up to BUFFER_SIZE;
 * a patch of bytes still held costs no system call. Reads, seeks from
 * the end and the close push the buffer out first.
 */
#include "error.h"
#include "npz_write_core.h"

#include <string.h>

#define BUFFER_SIZE ((size_t)128 << 10)

/* The buffer's state; its bytes follow it (the stream's scratch). */
typedef struct zip_buffer {
    npyio_stream *under;
    int64_t base;        /* the offset of the first byte held */
    size_t fill;         /* bytes held */
    int64_t pos;         /* the buffered stream's position */
    unsigned char *bytes;
} zip_buffer;

/* Put the real stream at `at`, without a call where it is there. */
static npyio_status under_at(zip_buffer *b, int64_t at)
{
    int64_t here = -1;
    npyio_status st = npyio__stream_tell(b->under, &here);

    if (st == NPYIO_OK && here != at)
        st = npyio__stream_seek(b->under, at, NPYIO_SEEK_SET, NULL);
    return st;
}

static npyio_status buffer_flush(zip_buffer *b)
{
    npyio_status st = NPYIO_OK;

    if (b->fill > 0) {
        st = under_at(b, b->base);
        if (st == NPYIO_OK)
            st = npyio__stream_write(b->under, b->bytes, b->fill,
                                     "the archive");
        b->fill = 0;
    }
    return st;
}

static npyio_status buffer_write(void *state, const void *buf, size_t len,
                                 size_t *put)
{
    zip_buffer *b = state;
    npyio_status st = NPYIO_OK;

    if (b->fill > 0 && (b->pos < b->base ||
                        (uint64_t)(b->pos - b->base) > b->fill ||
                        (uint64_t)(b->pos - b->base) + len > BUFFER_SIZE))
        st = buffer_flush(b);
    if (st == NPYIO_OK && b->fill == 0)
        b->base = b->pos;
    if (st == NPYIO_OK && len >= BUFFER_SIZE) { /* large: straight out */
        st = under_at(b, b->pos);
        if (st == NPYIO_OK)
            st = npyio__stream_write(b->under, buf, len, "the archive");
    } else if (st == NPYIO_OK) {
        size_t at = (size_t)(b->pos - b->base);

        memcpy(b->bytes + at, buf, len);
        if (at + len > b->fill)
            b->fill = at + len;
    }
    if (st != NPYIO_OK)
        return st;
    b->pos += (int64_t)len;
    *put = len;
    return NPYIO_OK;
}

static npyio_status buffer_read(void *state, void *buf, size_t cap,
                                size_t *got)
{
    zip_buffer *b = state;
    npyio_status st = buffer_flush(b);

    if (st == NPYIO_OK)
        st = under_at(b, b->pos);
    if (st == NPYIO_OK)
        st = npyio__stream_read(b->under, buf, cap, got, "the archive");
    if (st == NPYIO_OK)
        b->pos += (int64_t)*got;
    return st;
}

static npyio_status buffer_seek(void *state, int64_t offset, int whence,
                                int64_t *pos)
{
    zip_buffer *b = state;
    npyio_status st = NPYIO_OK;

    if (whence == NPYIO_SEEK_END) {
        st = buffer_flush(b);
        if (st == NPYIO_OK)
            st = npyio__stream_seek(b->under, offset, whence, &b->pos);
    } else {
        b->pos = (whence == NPYIO_SEEK_SET ? 0 : b->pos) + offset;
    }
    *pos = b->pos;
    return st;
}

static npyio_status buffer_close(void *state)
{
    (void)state; /* the real stream is the writer's */
    return NPYIO_OK;
}

static const npyio__stream_backend buffer_backend = {
    .name = "archive buffer",
    .read = buffer_read,
    .write = buffer_write,
    .seek = buffer_seek,
    .close = buffer_close,
};

/* w->stream becomes a buffer over itself (w->direct). */
static npyio_status buffer_open(npyio_npz_writer *w)
{
    npyio_stream *s = NULL;
    zip_buffer *b = NULL;
    int64_t at = 0;
    npyio_status st = npyio__stream_tell(w->stream, &at);

    if (st == NPYIO_OK)
        st = npyio__stream_new_scratch(&buffer_backend, sizeof *b,
                                       BUFFER_SIZE, w->options, &s,
                                       (void **)&b);
    if (st != NPYIO_OK)
        return st;
    b->under = w->stream;
    b->bytes = (unsigned char *)(b + 1);
    b->base = b->pos = at;
    npyio__stream_set_position(s, at, true);
    w->direct = w->stream;
    w->stream = s;
    return NPYIO_OK;
}

npyio_status npyio__npz_zip_unbuffer(npyio_npz_writer *w, bool flush)
{
    zip_buffer *b;
    npyio_status st = NPYIO_OK;

    if (w->direct == NULL)
        return NPYIO_OK;
    b = npyio__stream_state(w->stream);
    if (flush)
        st = buffer_flush(b);
    if (flush && st == NPYIO_OK)
        st = under_at(b, b->pos);
    npyio__stream_close(w->stream);
    w->stream = w->direct;
    w->direct = NULL;
    return st;
}

static void io_failure(npyio_npz_writer *w, npyio_status st)
{
    if (w->io_failed == NPYIO_OK) {
        w->io_failed = st;
        npyio__sticky_fail(&w->sticky, st);
    }
}

static voidpf io_open(voidpf opaque, const void *stream, int mode)
{
    (void)opaque;
    (void)mode;
    return (voidpf)stream; /* ours, passed through as the "file name" */
}

static uLong io_read(voidpf opaque, voidpf stream, void *buf, uLong size)
{
    size_t got = 0;
    npyio_status st = npyio__stream_read(stream, buf, size, &got,
                                         "the archive");

    if (st != NPYIO_OK)
        io_failure(opaque, st);
    return (uLong)got;
}

static uLong io_write(voidpf opaque, voidpf stream, const void *buf,
                      uLong size)
{
    npyio_status st = npyio__stream_write(stream, buf, size, "the archive");

    if (st != NPYIO_OK) {
        io_failure(opaque, st);
        return 0;
    }
    return size;
}

static ZPOS64_T io_tell(voidpf opaque, voidpf stream)
{
    int64_t pos = 0;
    npyio_status st = npyio__stream_tell(stream, &pos);

    if (st != NPYIO_OK) {
        io_failure(opaque, st);
        return (ZPOS64_T)-1;
    }
    return (ZPOS64_T)pos;
}

static long io_seek(voidpf opaque, voidpf stream, ZPOS64_T offset,
                    int origin)
{
    /* minizip sends negative relative offsets as huge unsigned ones. */
    int whence = origin == ZLIB_FILEFUNC_SEEK_SET   ? NPYIO_SEEK_SET
                 : origin == ZLIB_FILEFUNC_SEEK_CUR ? NPYIO_SEEK_CUR
                                                    : NPYIO_SEEK_END;
    npyio_status st = npyio__stream_seek(stream, (int64_t)offset, whence,
                                         NULL);

    if (st != NPYIO_OK) {
        io_failure(opaque, st);
        return -1;
    }
    return 0;
}

static int io_close(voidpf opaque, voidpf stream)
{
    (void)opaque;
    (void)stream;
    return 0; /* the stream is closed by its owner */
}

static int io_error(voidpf opaque, voidpf stream)
{
    (void)stream;
    return ((npyio_npz_writer *)opaque)->io_failed != NPYIO_OK;
}

/* Callers check io_failed as well as minizip's code: minizip leaves the
 * results of some of its writes unchecked (found by failing each write in
 * turn, tests/unit/test_iofault.c). */
npyio_status npyio__npz_zip_failure(npyio_npz_writer *w, const char *call,
                                    int code)
{
    if (w->io_failed != NPYIO_OK)
        return npyio__fail(w->io_failed, "%s: %s", call,
                           w->sticky.first_error);
    return npyio__sticky_fail(&w->sticky,
                              npyio__fail(NPYIO_E_IO, "%s: minizip returned "
                                          "%d", call, code));
}

npyio_status npyio__npz_zip_open(npyio_npz_writer *w, int append,
                                 const char *where)
{
    zlib_filefunc64_def io = {io_open, io_read, io_write, io_tell, io_seek,
                              io_close, io_error, NULL};

    npyio_status st = buffer_open(w);

    if (st != NPYIO_OK)
        return st;
    io.opaque = w;
    w->zip = zipOpen2_64(w->stream, append, NULL, &io);
    if (w->zip == NULL || w->io_failed != NPYIO_OK)
        return npyio__npz_zip_failure(w, where, 0);
    return NPYIO_OK;
}
