/*
 * stream_path.c - streams from paths: a file opened for reading or for
 * writing in place (npyio_stream_open_path), a file replaced atomically
 * (the writers' way), and the one opener that decides whether a reader or
 * writer owns its stream.
 */
#define _POSIX_C_SOURCE 200809L
#include "stream.h"
#include "platform.h"
#include "replace.h"

#include <fcntl.h>

static npyio_status stream_open_path_body(const char *path, uint32_t mode,
                                          const npyio_options *options,
                                          npyio_stream **out)
{
    static const char where[] = "npyio_stream_open_path";
    int fd;
    npyio_status st;

    if (out == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: out is NULL", where);
    *out = NULL;
    st = npyio__check_path(path, where);
    if (st != NPYIO_OK)
        return st;
    if (mode != NPYIO_OPEN_READ && mode != NPYIO_OPEN_WRITE)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: mode must be "
                           "NPYIO_OPEN_READ or NPYIO_OPEN_WRITE", where);
    st = npyio__open_path(path, mode == NPYIO_OPEN_READ
                                    ? O_RDONLY
                                    : O_WRONLY | O_CREAT | O_TRUNC,
                          0666, where, &fd);
    if (st != NPYIO_OK)
        return st;
    st = mode == NPYIO_OPEN_READ
             ? npyio__stream_open_fd_reading(fd, options, out)
             : npyio__stream_open_fd(fd, true, options, out);
    if (st != NPYIO_OK)
        npyio__fd_close(fd);
    return st;
}

npyio_status npyio_stream_open_path(const char *path, uint32_t mode,
                                    const npyio_options *options,
                                    npyio_stream **out)
{
    if (out != NULL)
        *out = NULL; /* outputs are cleared whatever is refused */
    return npyio__as_called(stream_open_path_body(path, mode, options, out),
                            "npyio_stream_open_path");
}

/* ---- a file replaced atomically -------------------------------------------------- */

typedef struct replacing_state {
    npyio__atomic file;
    const npyio__mem *mem; /* the stream's allocator */
} replacing_state;

static npyio_status os_status(int result)
{
    return result == 0 ? NPYIO_OK : NPYIO_E_IO;
}

static int fd_of(void *state)
{
    return ((replacing_state *)state)->file.fd;
}

static npyio_status replacing_read(void *state, void *buf, size_t cap,
                                   size_t *got)
{
    return os_status(npyio__fd_read(fd_of(state), buf, cap, got));
}

static npyio_status replacing_write(void *state, const void *buf, size_t len,
                                    size_t *put)
{
    replacing_state *r = state;

    /* The temporary is a regular file; a device written directly is not
     * (a FIFO may raise SIGPIPE). */
    return os_status(r->file.temp != NULL || r->file.unnamed
                         ? npyio__fd_write_file(fd_of(state), buf, len, put)
                         : npyio__fd_write(fd_of(state), buf, len, put));
}

static npyio_status replacing_seek(void *state, int64_t offset, int whence,
                                   int64_t *pos)
{
    return os_status(npyio__fd_seek(fd_of(state), offset, whence, pos));
}

static npyio_status replacing_commit(void *state, bool durable)
{
    replacing_state *r = state;

    return npyio__atomic_commit(&r->file, r->mem, durable);
}

static void replacing_abort(void *state)
{
    npyio__atomic_abandon(&((replacing_state *)state)->file);
}

static npyio_status replacing_close(void *state)
{
    replacing_abort(state); /* nothing left after a commit */
    return NPYIO_OK;
}

static const npyio__stream_backend replacing_backend = {
    .name = "replacing file", .read = replacing_read,
    .write = replacing_write, .seek = replacing_seek,
    .commit = replacing_commit, .abort = replacing_abort,
    .close = replacing_close};

npyio_status npyio__stream_open_replacing(const char *path,
                                          const npyio_options *options,
                                          npyio_stream **out)
{
    replacing_state *r;
    npyio_status st;

    st = npyio__stream_new(&replacing_backend, sizeof *r, options, out,
                           (void **)&r);
    if (st != NPYIO_OK)
        return st;
    r->mem = &(*out)->mem;
    r->file.fd = -1;
    st = npyio__atomic_open(path, r->mem, &r->file);
    if (st == NPYIO_OK) {
        /* A device or FIFO is written directly, in order; a temporary
         * file is regular, at its start. */
        (*out)->seekable = r->file.temp != NULL || r->file.unnamed ||
                           npyio__fd_seekable(r->file.fd);
        (*out)->position_known = (*out)->seekable;
        return NPYIO_OK;
    }
    npyio_stream_close(*out);
    *out = NULL;
    return st;
}

/* ---- owned or borrowed ------------------------------------------------------------ */

npyio_status npyio__stream_acquire(const char *path, npyio_stream *stream,
                                   bool for_writing,
                                   const npyio_options *options,
                                   const char *where, npyio_stream **out,
                                   bool *owned)
{
    npyio_status st;

    *out = NULL;
    *owned = false;
    if (path == NULL) {
        st = npyio__check_stream(stream, where);
        if (st == NPYIO_OK)
            *out = stream;
        return st;
    }
    st = for_writing ? npyio__stream_open_replacing(path, options, out)
                     : stream_open_path_body(path, NPYIO_OPEN_READ, options,
                                             out);
    *owned = st == NPYIO_OK;
    return st;
}
