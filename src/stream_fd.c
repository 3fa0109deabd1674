/*
 * stream_fd.c - stream back ends over the operating system: a descriptor
 * (the caller's, or one opened from a path) and a stdio FILE. The system
 * calls themselves, with their EINTR and SIGPIPE handling, are in
 * platform.c.
 */
#define _POSIX_C_SOURCE 200809L
#include "stream.h"
#include "platform.h"

#include <errno.h>
#include <fcntl.h>

/* ---- descriptors ---------------------------------------------------------------- */

static int fd_read(void *user, void *buf, size_t cap, size_t *got)
{
    return npyio__fd_read(((npyio_stream *)user)->u.fd.fd, buf, cap, got);
}

static int fd_write(void *user, const void *buf, size_t len, size_t *put)
{
    return npyio__fd_write(((npyio_stream *)user)->u.fd.fd, buf, len, put);
}

static int fd_seek(void *user, int64_t offset, int whence, int64_t *pos)
{
    return npyio__fd_seek(((npyio_stream *)user)->u.fd.fd, offset, whence,
                          pos);
}

static int fd_close(void *user)
{
    npyio_stream *s = user;

    return s->u.fd.owned ? npyio__fd_close(s->u.fd.fd) : 0;
}

static npyio_status open_fd(int fd, bool owned, const npyio_options *options,
                            npyio_stream **out)
{
    npyio_stream_ops ops = {sizeof ops, fd_read, fd_write, fd_seek,
                            fd_close};
    int64_t pos = 0;
    npyio_status st;

    /* Pipes, sockets and terminals cannot seek: leave seek out, so that
     * nothing tries. */
    if (!npyio__fd_seekable(fd))
        ops.seek = NULL;
    st = npyio__stream_new(NPYIO__STREAM_FD, &ops, options, out);
    if (st != NPYIO_OK)
        return st;
    (*out)->u.fd.fd = fd;
    (*out)->u.fd.owned = owned;
    if (ops.seek != NULL && npyio__fd_seek(fd, 0, NPYIO_SEEK_CUR, &pos) == 0)
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
    return open_fd(fd, false, options, out);
}

static npyio_status stream_open_path_body(const char *path, uint32_t mode,
                                          const npyio_options *options,
                                          npyio_stream **out)
{
    static const char where[] = "npyio_stream_open_path";
    int fd, err;
    npyio_status st;

    if (out == NULL || path == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: %s is NULL", where,
                           out == NULL ? "out" : "path");
    *out = NULL;
    if (mode != NPYIO_OPEN_READ && mode != NPYIO_OPEN_WRITE)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: mode must be "
                           "NPYIO_OPEN_READ or NPYIO_OPEN_WRITE", where);
    fd = npyio__fd_open(path, mode == NPYIO_OPEN_READ
                                  ? O_RDONLY
                                  : O_WRONLY | O_CREAT | O_TRUNC,
                        0666);
    if (fd < 0) {
        err = errno;
        npyio__os_fail(path, err);
        return npyio__fail(err == ENOENT ? NPYIO_E_NOT_FOUND : NPYIO_E_IO,
                           "%s: cannot open %s", where, npyio_last_error());
    }
    st = open_fd(fd, true, options, out);
    if (st != NPYIO_OK)
        npyio__fd_close(fd);
    return st;
}

npyio_status npyio_stream_open_path(const char *path, uint32_t mode,
                                    const npyio_options *options,
                                    npyio_stream **out)
{
    return npyio__as_called(stream_open_path_body(path, mode, options, out),
                            "npyio_stream_open_path");
}

/* ---- stdio ------------------------------------------------------------------------- */

static int file_read(void *user, void *buf, size_t cap, size_t *got)
{
    return npyio__file_read(((npyio_stream *)user)->u.file, buf, cap, got);
}

static int file_write(void *user, const void *buf, size_t len, size_t *put)
{
    return npyio__file_write(((npyio_stream *)user)->u.file, buf, len, put);
}

static int file_seek(void *user, int64_t offset, int whence, int64_t *pos)
{
    return npyio__file_seek(((npyio_stream *)user)->u.file, offset, whence,
                            pos);
}

static int file_close(void *user)
{
    return npyio__file_flush(((npyio_stream *)user)->u.file);
}

npyio_status npyio_stream_open_file(FILE *file, const npyio_options *options,
                                    npyio_stream **out)
{
    npyio_stream_ops ops = {sizeof ops, file_read, file_write, file_seek,
                            file_close};
    int64_t pos = 0;
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
        if (npyio__file_seek(file, 0, NPYIO_SEEK_CUR, &pos) != 0)
            ops.seek = NULL;
        npyio__message_restore(&saved);
    }
    st = npyio__stream_new(NPYIO__STREAM_FILE, &ops, options, out);
    if (st == NPYIO_OK) {
        (*out)->u.file = file;
        (*out)->position = pos;
    }
    return st;
}

npyio_status npyio__stream_sync(npyio_stream *s, bool durable)
{
    if (s->kind == NPYIO__STREAM_FILE && npyio__file_flush(s->u.file) != 0)
        return NPYIO_E_IO;
    if (durable && s->kind == NPYIO__STREAM_FD &&
        npyio__fd_sync(s->u.fd.fd) != 0)
        return NPYIO_E_IO;
    return NPYIO_OK;
}
