/*
 * stream_path.c - streams from paths: a file opened for reading or
 * writing (npyio_stream_open_path), an existing file read-write and
 * locked (appends, rows in place, maps), the one opener that decides
 * whether a reader or writer owns its stream, and a stream's bytes saved
 * below a folder (npyio_stream_save_under). The streams are stream_fd.c's
 * descriptor back ends, the replacing file among them.
 */
#define _POSIX_C_SOURCE 200809L
#include "error.h"
#include "options.h"
#include "platform.h"
#include "stream.h"

#include <errno.h>
#include <fcntl.h>

/* open() (O_CLOEXEC, EINTR retried) on behalf of the public function
 * `where`: on failure "<where>: cannot open <path>: <reason>", status by
 * npyio__status_of_errno. */
static npyio_status open_path(const npyio__faults *faults, const char *path,
                              int flags, unsigned mode, const char *where,
                              int *fd)
{
    int err;

    *fd = npyio__fd_open(faults, path, flags, mode);
    if (*fd >= 0)
        return NPYIO_OK;
    err = errno;
    npyio__os_fail(path, err);
    return npyio__fail(npyio__status_of_errno(err), "%s: cannot open %s",
                       where, npyio_last_error());
}

/* Open an existing file read-write and lock it (exclusive or shared,
 * waiting or not): NPYIO_E_LOCKED if another holds a conflicting lock.
 * A file replaced at the path while we waited is let go and the new one
 * locked instead. */
static npyio_status open_locked(const npyio__faults *faults,
                                const char *path, bool exclusive, bool wait,
                                const char *where, int *fd)
{
    int attempt;

    for (attempt = 0; attempt < 100; attempt++) {
        bool busy = false;
        npyio_status st = open_path(faults, path, O_RDWR, 0, where, fd);

        if (st != NPYIO_OK)
            return st;
        if (npyio__fd_lock(*fd, exclusive, wait, &busy) != 0) {
            st = npyio__fail(busy ? NPYIO_E_LOCKED : NPYIO_E_IO, "%s: %s: "
                             "%s", where, path, npyio_last_error());
            npyio__fd_close(faults, *fd);
            *fd = -1;
            return st;
        }
        /* Locked, but perhaps after the file was replaced (by an archive
         * appender's rename): then lock the file now at the path. */
        if (npyio__fd_is_path(*fd, path))
            return NPYIO_OK;
        npyio__fd_close(faults, *fd);
        *fd = -1;
    }
    return npyio__fail(NPYIO_E_IO, "%s: %s: the file was replaced each "
                       "time it was locked", where, path);
}

/* Open path with open(2)'s flags (messages name `where`) and make a
 * stream of the descriptor, which the stream owns: read ahead when
 * opened for reading, for appending or writing in place when read-write,
 * plain otherwise. */
static npyio_status open_owned(const char *path, int flags,
                               const npyio_options *options,
                               const char *where, npyio_stream **out)
{
    int fd = -1;
    int access = flags & O_ACCMODE;
    npyio_status st = open_path(npyio__options_faults(options), path, flags,
                                0666, where, &fd);

    if (st != NPYIO_OK)
        return st;
    st = access == O_RDONLY ? npyio__stream_open_fd_reading(fd, options, out)
         : access == O_RDWR ? npyio__stream_open_fd_file(fd, options, out)
                            : npyio__stream_open_fd(fd, true, options, out);
    if (st != NPYIO_OK)
        npyio__fd_close(npyio__options_faults(options), fd);
    return st;
}

/* open(2)'s flags for npyio_stream_open_path's: read, write (create or
 * truncate), or both (an existing file read-write, kept as it is). */
static int open_flags(uint32_t flags)
{
    const uint32_t both = NPYIO_STREAM_READ | NPYIO_STREAM_WRITE;

    return flags == both                 ? O_RDWR
           : flags == NPYIO_STREAM_READ ? O_RDONLY
                                         : O_WRONLY | O_CREAT | O_TRUNC;
}

static npyio_status stream_open_path_body(const char *path, uint32_t flags,
                                          const npyio_options *options,
                                          npyio_stream **out)
{
    static const char where[] = "npyio_stream_open_path";
    npyio_status st;

    st = npyio__check_opener(out, path, where);
    if (st != NPYIO_OK)
        return st;
    st = npyio__check_flags(flags, NPYIO_STREAM_READ | NPYIO_STREAM_WRITE,
                            where);
    if (st == NPYIO_OK && flags == 0)
        st = npyio__fail(NPYIO_E_INVALID_ARG, "%s: flags 0: give "
                         "NPYIO_STREAM_READ, NPYIO_STREAM_WRITE or both",
                         where);
    if (st != NPYIO_OK)
        return st;
    return open_owned(path, open_flags(flags), options, where, out);
}

npyio_status npyio_stream_open_path(const char *path, uint32_t flags,
                                    const npyio_options *options,
                                    npyio_stream **out)
{
    if (out != NULL)
        *out = NULL; /* outputs are cleared whatever is refused */
    return npyio__as_called(stream_open_path_body(path, flags, options, out),
                            "npyio_stream_open_path");
}

/* ---- an existing file, read-write ------------------------------------------------ */

npyio_status npyio__stream_open_locked(const char *path, bool exclusive,
                                       bool wait, const npyio_options *options,
                                       const char *where, npyio_stream **out)
{
    int fd = -1;
    npyio_status st = open_locked(npyio__options_faults(options),
                                         path, exclusive, wait, where, &fd);

    if (st != NPYIO_OK)
        return st;
    st = npyio__stream_open_fd_file(fd, options, out);
    if (st != NPYIO_OK)
        npyio__fd_close(npyio__options_faults(options), fd);
    return st;
}

npyio_status npyio__stream_open_existing(const char *path, bool writable,
                                         const npyio_options *options,
                                         const char *where,
                                         npyio_stream **out)
{
    return open_owned(path, writable ? O_RDWR : O_RDONLY, options, where,
                      out);
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
                     : open_owned(path, O_RDONLY, options, where, out);
    *owned = st == NPYIO_OK;
    return st;
}

/* ---- a stream's bytes saved below a folder ---------------------------------------- */

/* The rest of `from` into `to`, through a block from to's allocator; a
 * failed write names the file, "<base>/<path>" (a failed read is the
 * source's to say). */
static npyio_status copy_rest(npyio_stream *to, npyio_stream *from,
                              const char *base, const char *path)
{
    const size_t block = (size_t)1 << 16;
    unsigned char *buf = NULL;
    size_t got = block;
    npyio_status st = npyio__alloc(npyio__stream_mem(to), block,
                                   "a copy buffer", (void **)&buf);

    while (st == NPYIO_OK && got == block) {
        st = npyio__stream_read(from, buf, block, &got, "the source");
        if (st == NPYIO_OK && got > 0 &&
            (st = npyio__stream_write(to, buf, got, "the file")) != NPYIO_OK)
            st = npyio__fail(st, "%s/%s: %s", base, path,
                             npyio_last_error());
    }
    npyio__free(buf);
    return st;
}

static npyio_status save_under_body(npyio_stream *source, const char *base,
                                    const char *path, uint32_t flags,
                                    const npyio_options *options)
{
    static const char where[] = "npyio_stream_save_under";
    npyio_stream *file = NULL;
    npyio_status st = npyio__check_stream(source, where);

    if (st == NPYIO_OK)
        st = npyio__check_flags(flags, NPYIO_WRITE_NO_SYNC |
                                           NPYIO_WRITE_REPLACE, where);
    if (st == NPYIO_OK && base == NULL)
        st = npyio__fail(NPYIO_E_INVALID_ARG, "%s: base is NULL", where);
    if (st == NPYIO_OK)
        st = npyio__check_path(path, where);
    if (st == NPYIO_OK)
        st = npyio__stream_open_replacing_under(
            base, path, (flags & NPYIO_WRITE_REPLACE) != 0, options, &file);
    if (st == NPYIO_OK)
        st = copy_rest(file, source, base, path);
    if (st == NPYIO_OK)
        st = npyio__stream_commit(file, (flags & NPYIO_WRITE_NO_SYNC) == 0);
    else if (file != NULL)
        npyio__stream_abort(file); /* the temporary goes, the old file stays */
    if (file != NULL)
        (void)npyio__stream_close(file); /* committed or aborted: no news */
    return st;
}

npyio_status npyio_stream_save_under(npyio_stream *source, const char *base,
                                     const char *path, uint32_t flags,
                                     const npyio_options *options)
{
    return npyio__as_called(
        save_under_body(source, base, path, flags, options),
        "npyio_stream_save_under");
}
