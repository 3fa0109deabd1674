/*
 * stream_fd.c - stream back ends over the operating system: a descriptor
 * (the caller's, or one opened from a path) and a stdio FILE. The system
 * calls themselves, with their EINTR and SIGPIPE handling, are in
 * platform.c; each leaves the OS's reason as the thread's message.
 */
#define _POSIX_C_SOURCE 200809L
#include "stream.h"
#include "platform.h"

#include <errno.h>
#include <string.h>


/* ---- descriptors ---------------------------------------------------------------- */

/* A file opened here for reading is read ahead in blocks of this size, so
 * that a small file's header and data arrive in one read() (a pipe or a
 * caller's descriptor never is: nothing past what is asked for is taken
 * from them). */
#define AHEAD 4096

typedef struct fd_state {
    int fd;
    bool owned;       /* opened from a path: closed with the stream */
    bool regular;     /* a regular file: no SIGPIPE to guard against */
    bool readahead;   /* opened here for reading, not a pipe: see AHEAD */
    bool untried;     /* opened here, nothing read yet: the first read
                         tells a file from a pipe (see fd_read) */
    bool positional;  /* read with pread at pos (the system's offset is
                         not used: seeks cost no call) */
    int64_t pos;      /* the logical position (readahead) */
    int64_t known_end; /* the file's end, seen by the last short read of a
                          block (readahead), or -1 */
    size_t ahead_pos, ahead_len; /* unread bytes: ahead[ahead_pos..len) */
    unsigned char ahead[];       /* AHEAD bytes with readahead */
} fd_state;

static npyio_status os_status(int result)
{
    return result == 0 ? NPYIO_OK : NPYIO_E_IO;
}

/* From the system: at the logical position for a file read positionally,
 * else from the descriptor's offset (pipes: exactly what was asked). */
static npyio_status os_read(fd_state *f, void *buf, size_t cap, size_t *got)
{
    if (f->positional)
        return os_status(npyio__fd_pread(f->fd, buf, cap, f->pos, got));
    return os_status(npyio__fd_read(f->fd, buf, cap, got));
}

/*
 * The first read of a file opened here, before anyone asked what it is: a
 * positioned read of the first block. A pipe or socket refuses it
 * (ESPIPE) without losing a byte, and is then read exactly as asked, so
 * that a FIFO keeps what follows the array for its next reader; anything
 * else is read ahead, positionally, from then on.
 */
static npyio_status first_read(fd_state *f)
{
    npyio__saved_message saved;

    f->untried = false;
    npyio__message_save(&saved);
    if (npyio__fd_pread_all(f->fd, f->ahead, AHEAD, f->pos, &f->ahead_len) ==
        0) {
        f->positional = true;
        return NPYIO_OK;
    }
    f->ahead_len = 0;
    if (errno != ESPIPE)
        return NPYIO_E_IO;
    npyio__message_restore(&saved);
    f->readahead = false;
    return NPYIO_OK;
}

static npyio_status fd_read(void *state, void *buf, size_t cap, size_t *got)
{
    fd_state *f = state;
    npyio_status st;

    bool block = f->untried || (f->readahead && f->ahead_pos == f->ahead_len &&
                                cap < AHEAD);

    if (block) {
        /* Whole blocks (pread_all): a block that comes back short must
         * mean the end of the file, not a read cut short by a signal. */
        st = f->untried ? first_read(f)
                        : os_status(npyio__fd_pread_all(f->fd, f->ahead,
                                                        AHEAD, f->pos,
                                                        &f->ahead_len));
        f->ahead_pos = 0;
        if (st != NPYIO_OK) {
            f->ahead_len = 0;
            return st;
        }
        /* A short block ends at the file's end (as of this read): the
         * length checks that follow need no fstat. */
        f->known_end = f->readahead && f->ahead_len < AHEAD
                           ? f->pos + (int64_t)f->ahead_len
                           : -1;
    }
    if (!f->readahead)
        return os_status(npyio__fd_read(f->fd, buf, cap, got));
    if (f->ahead_pos < f->ahead_len) {
        size_t n = f->ahead_len - f->ahead_pos;

        *got = cap < n ? cap : n;
        memcpy(buf, f->ahead + f->ahead_pos, *got);
        f->ahead_pos += *got;
    } else {
        f->known_end = -1;
        st = os_read(f, buf, cap, got);
        if (st != NPYIO_OK)
            return st;
    }
    f->pos += (int64_t)*got;
    return NPYIO_OK;
}

static npyio_status fd_write(void *state, const void *buf, size_t len,
                             size_t *put)
{
    fd_state *f = state;

    return os_status(f->regular ? npyio__fd_write_file(f->fd, buf, len, put)
                                : npyio__fd_write(f->fd, buf, len, put));
}

static npyio_status fd_seek(void *state, int64_t offset, int whence,
                            int64_t *pos)
{
    fd_state *f = state;
    int64_t target, window_start;

    if (!f->readahead || whence == NPYIO_SEEK_END) {
        f->ahead_pos = f->ahead_len = 0;
        f->known_end = -1;
        if (npyio__fd_seek(f->fd, offset, whence, pos) != 0)
            return NPYIO_E_IO;
        f->pos = *pos;
        return NPYIO_OK;
    }
    target = whence == NPYIO_SEEK_SET ? offset : f->pos + offset;
    /* Within what was read ahead: no system call. */
    window_start = f->pos - (int64_t)f->ahead_pos;
    if (target >= window_start &&
        target <= window_start + (int64_t)f->ahead_len) {
        f->ahead_pos = (size_t)(target - window_start);
        f->pos = *pos = target;
        return NPYIO_OK;
    }
    f->ahead_pos = f->ahead_len = 0;
    f->known_end = -1;
    if (f->positional || f->untried) {
        /* Reads say where: only the position changes. */
        if (target < 0) {
            npyio__os_fail("lseek", EINVAL);
            return NPYIO_E_IO;
        }
        f->pos = *pos = target;
        return NPYIO_OK;
    }
    if (npyio__fd_seek(f->fd, target, NPYIO_SEEK_SET, pos) != 0)
        return NPYIO_E_IO;
    f->pos = *pos;
    return NPYIO_OK;
}

static npyio_status fd_pread(void *state, void *buf, size_t cap,
                             int64_t offset, size_t *got)
{
    return os_status(npyio__fd_pread_all(((fd_state *)state)->fd, buf, cap,
                                         offset, got));
}

static npyio_status fd_size(void *state, int64_t *size)
{
    fd_state *f = state;

    if (f->known_end >= 0) {
        *size = f->known_end;
        return NPYIO_OK;
    }
    return os_status(npyio__fd_size(f->fd, size));
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

static size_t fd_buffered(void *state)
{
    fd_state *f = state;

    return f->ahead_len - f->ahead_pos;
}

/* Regular files know their size (fstat); devices and pipes do not. */
static const npyio__stream_backend fd_backend = {
    .name = "descriptor", .read = fd_read, .write = fd_write,
    .seek = fd_seek, .pread = fd_pread, .sync = fd_sync, .close = fd_close,
    .buffered = fd_buffered};
static const npyio__stream_backend regular_fd_backend = {
    .name = "descriptor", .read = fd_read, .write = fd_write,
    .seek = fd_seek, .pread = fd_pread, .size = fd_size, .sync = fd_sync,
    .close = fd_close, .buffered = fd_buffered};

/*
 * A file opened here for reading is not asked what it is (fstat) until
 * something needs to know: a small file read whole never does, since its
 * header and data arrive in the first block. Until then it is read ahead
 * from offset 0 like a regular file; a pipe or device found later keeps
 * its read-ahead (the descriptor is ours) but loses the length of a short
 * block, which says nothing there.
 */
static void fd_probe(void *state, bool *seekable,
                     const npyio__stream_backend **backend)
{
    fd_state *f = state;
    bool regular = false;
    int64_t pos = 0;

    npyio__fd_probe(f->fd, true, seekable, &regular, &pos);
    f->regular = regular;
    if (!regular)
        f->known_end = -1;
    *backend = regular ? &regular_fd_backend : &fd_backend;
}

static const npyio__stream_backend unprobed_fd_backend = {
    .name = "descriptor", .read = fd_read, .seek = fd_seek, .pread = fd_pread,
    .size = fd_size, .sync = fd_sync, .close = fd_close,
    .buffered = fd_buffered, .probe = fd_probe};

/* A descriptor opened here for reading, not probed yet (see fd_probe). */
static npyio_status open_unprobed(int fd, const npyio_options *options,
                                  npyio_stream **out)
{
    fd_state *f;
    npyio_status st = npyio__stream_new_scratch(&unprobed_fd_backend,
                                                sizeof *f, AHEAD, options,
                                                out, (void **)&f);

    if (st != NPYIO_OK)
        return st;
    f->fd = fd;
    f->owned = true;
    f->readahead = true;
    f->untried = true;
    f->known_end = -1;
    (*out)->probe_pending = true;
    (*out)->position_known = true; /* at 0: opened a moment ago */
    return NPYIO_OK;
}

static npyio_status open_fd(int fd, bool owned, const npyio_options *options,
                            npyio_stream **out)
{
    bool seekable = false, regular = false;
    int64_t pos = 0;
    fd_state *f;
    npyio_status st;

    /* Pipes, sockets and terminals cannot seek (nor pread): say so, so
     * that nothing tries. */
    npyio__fd_probe(fd, false, &seekable, &regular, &pos);
    st = npyio__stream_new(regular ? &regular_fd_backend : &fd_backend,
                           sizeof *f, options, out, (void **)&f);
    if (st != NPYIO_OK)
        return st;
    f->fd = fd;
    f->owned = owned;
    f->regular = regular;
    f->known_end = -1;
    f->pos = pos;
    (*out)->seekable = seekable;
    (*out)->position = pos;
    (*out)->position_known = seekable;
    return NPYIO_OK;
}

npyio_status npyio__stream_open_fd(int fd, bool owned,
                                   const npyio_options *options,
                                   npyio_stream **out)
{
    return open_fd(fd, owned, options, out);
}

npyio_status npyio__stream_open_fd_reading(int fd,
                                           const npyio_options *options,
                                           npyio_stream **out)
{
    return open_unprobed(fd, options, out);
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

    if (out != NULL)
        *out = NULL;
    if (out == NULL || file == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "npyio_stream_open_file: %s "
                           "is NULL", out == NULL ? "out" : "file");
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
        (*out)->position_known = seekable;
    }
    return st;
}
