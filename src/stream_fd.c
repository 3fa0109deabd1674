/*
 * stream_fd.c - stream back ends over the operating system: a descriptor
 * (the caller's, or one opened from a path) and a stdio FILE. The system
 * calls themselves, with their EINTR and SIGPIPE handling, are in
 * platform.c; each leaves the OS's reason as the thread's message.
 */
#define _POSIX_C_SOURCE 200809L
#include "stream.h"
#include "platform.h"


/* ---- descriptors ---------------------------------------------------------------- */

typedef struct fd_state {
    int fd;
    bool owned; /* opened from a path: closed with the stream */
} fd_state;

static npyio_status os_status(int result)
{
    return result == 0 ? NPYIO_OK : NPYIO_E_IO;
}

static npyio_status fd_read(void *state, void *buf, size_t cap, size_t *got)
{
    return os_status(npyio__fd_read(((fd_state *)state)->fd, buf, cap, got));
}

static npyio_status fd_write(void *state, const void *buf, size_t len,
                             size_t *put)
{
    return os_status(npyio__fd_write(((fd_state *)state)->fd, buf, len, put));
}

static npyio_status fd_seek(void *state, int64_t offset, int whence,
                            int64_t *pos)
{
    return os_status(npyio__fd_seek(((fd_state *)state)->fd, offset, whence,
                                    pos));
}

static npyio_status fd_pread(void *state, void *buf, size_t cap,
                             int64_t offset, size_t *got)
{
    return os_status(npyio__fd_pread_all(((fd_state *)state)->fd, buf, cap,
                                         offset, got));
}

static npyio_status fd_sync(void *state, bool durable)
{
    return durable ? os_status(npyio__fd_sync(((fd_state *)state)->fd))
                   : NPYIO_OK;
}

static npyio_status fd_close(void *state)
{
    fd_state *f = state;

    return f->owned ? os_status(npyio__fd_close(f->fd)) : NPYIO_OK;
}

static const npyio__stream_backend fd_backend = {
    .name = "descriptor", .read = fd_read, .write = fd_write,
    .seek = fd_seek, .pread = fd_pread, .sync = fd_sync, .close = fd_close};

npyio_status npyio__stream_open_fd(int fd, bool owned,
                                   const npyio_options *options,
                                   npyio_stream **out)
{
    fd_state *f;
    int64_t pos = 0;
    npyio_status st;

    st = npyio__stream_new(&fd_backend, sizeof *f, options, out, (void **)&f);
    if (st != NPYIO_OK)
        return st;
    f->fd = fd;
    f->owned = owned;
    /* Pipes, sockets and terminals cannot seek (nor pread): say so, so
     * that nothing tries. */
    (*out)->seekable = npyio__fd_seekable(fd);
    if ((*out)->seekable && npyio__fd_seek(fd, 0, NPYIO_SEEK_CUR, &pos) == 0)
        (*out)->position = pos;
    return NPYIO_OK;
}

npyio_status npyio_stream_open_fd(int fd, const npyio_options *options,
                                  npyio_stream **out)
{
    if (out == NULL || fd < 0)
        return npyio__fail(NPYIO_E_INVALID_ARG, "npyio_stream_open_fd: %s",
                           out == NULL ? "out is NULL"
                                       : "the descriptor is negative");
    *out = NULL;
    return npyio__stream_open_fd(fd, false, options, out);
}

/* ---- stdio ------------------------------------------------------------------------- */

static FILE *file_of(void *state)
{
    return *(FILE **)state;
}

static npyio_status file_read(void *state, void *buf, size_t cap, size_t *got)
{
    return os_status(npyio__file_read(file_of(state), buf, cap, got));
}

static npyio_status file_write(void *state, const void *buf, size_t len,
                               size_t *put)
{
    return os_status(npyio__file_write(file_of(state), buf, len, put));
}

static npyio_status file_seek(void *state, int64_t offset, int whence,
                              int64_t *pos)
{
    return os_status(npyio__file_seek(file_of(state), offset, whence, pos));
}

/* Flushing is the FILE's own business at close too; durability of a FILE
 * the caller owns is the caller's. */
static npyio_status file_sync(void *state, bool durable)
{
    (void)durable;
    return os_status(npyio__file_flush(file_of(state)));
}

static npyio_status file_close(void *state)
{
    return os_status(npyio__file_flush(file_of(state)));
}

static const npyio__stream_backend file_backend = {
    .name = "FILE", .read = file_read, .write = file_write,
    .seek = file_seek, .sync = file_sync, .close = file_close};

npyio_status npyio_stream_open_file(FILE *file, const npyio_options *options,
                                    npyio_stream **out)
{
    FILE **state;
    int64_t pos = 0;
    bool seekable;
    npyio_status st;

    if (out == NULL || file == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "npyio_stream_open_file: %s "
                           "is NULL", out == NULL ? "out" : "file");
    *out = NULL;
    /* A probe: a FILE on a pipe cannot tell its position, which is no
     * failure of this call (its message is not kept). */
    {
        npyio__saved_message saved;

        npyio__message_save(&saved);
        seekable = npyio__file_seek(file, 0, NPYIO_SEEK_CUR, &pos) == 0;
        npyio__message_restore(&saved);
    }
    st = npyio__stream_new(&file_backend, sizeof *state, options, out,
                           (void **)&state);
    if (st == NPYIO_OK) {
        *state = file;
        (*out)->seekable = seekable;
        (*out)->position = pos;
    }
    return st;
}
