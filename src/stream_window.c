/*
 * stream_window.c - a read-only stream over `length` bytes of another
 * stream from `offset`, read with the parent's pread: the parent's
 * position never moves, so windows of one file (the members of an
 * archive) can be read from several threads at once.
 */
#include "error.h"
#include "stream.h"

typedef struct window_state {
    npyio_stream *parent; /* borrowed: open while the window is */
    int64_t offset, length, pos;
} window_state;

static npyio_status window_pread(void *state, void *buf, size_t cap,
                                 int64_t offset, size_t *got)
{
    window_state *w = state;
    uint64_t left = offset < w->length ? (uint64_t)(w->length - offset) : 0;
    size_t want = (uint64_t)cap < left ? cap : (size_t)left;

    *got = 0;
    if (want == 0)
        return NPYIO_OK;
    return npyio__stream_pread_some(w->parent, buf, want, w->offset + offset,
                                    got);
}

static npyio_status window_read(void *state, void *buf, size_t cap,
                                size_t *got)
{
    window_state *w = state;
    npyio_status st = window_pread(state, buf, cap, w->pos, got);

    if (st == NPYIO_OK)
        w->pos += (int64_t)*got;
    return st;
}

static npyio_status window_seek(void *state, int64_t offset, int whence,
                                int64_t *pos)
{
    window_state *w = state;
    int64_t base = whence == NPYIO_SEEK_SET   ? 0
                   : whence == NPYIO_SEEK_CUR ? w->pos
                                              : w->length;

    if (offset > INT64_MAX - base || base + offset < 0)
        return npyio__fail(NPYIO_E_IO, "offset out of range");
    w->pos = base + offset;
    *pos = w->pos;
    return NPYIO_OK;
}

static npyio_status window_size(void *state, int64_t *size)
{
    *size = ((const window_state *)state)->length;
    return NPYIO_OK;
}

static const npyio__stream_backend window_backend = {
    .name = "window", .read = window_read, .seek = window_seek,
    .pread = window_pread, .size = window_size};

npyio_status npyio__stream_open_window(npyio_stream *parent, int64_t offset,
                                       int64_t length,
                                       const npyio_options *options,
                                       npyio_stream **out)
{
    window_state *w;
    npyio_status st;

    *out = NULL;
    if (!npyio__stream_seekable(parent) || !npyio__stream_has_pread(parent))
        return npyio__fail(NPYIO_E_UNSUPPORTED, "a %s stream cannot be read "
                           "at an offset", npyio__stream_kind(parent));
    if (offset < 0 || length < 0 || length > INT64_MAX - offset)
        return npyio__fail(NPYIO_E_INVALID_ARG, "a window of %lld bytes at "
                           "offset %lld is out of range", (long long)length,
                           (long long)offset);
    st = npyio__stream_new(&window_backend, sizeof *w, options, out,
                           (void **)&w);
    if (st != NPYIO_OK)
        return st;
    w->parent = parent;
    w->offset = offset;
    w->length = length;
    npyio__stream_set_position(*out, 0, true);
    return NPYIO_OK;
}
