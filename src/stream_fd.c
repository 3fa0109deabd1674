/*
 * stream_fd.c - stream back ends over the operating system: a descriptor
 * (the caller's, or one opened from a path) and a stdio FILE. The system
 * calls themselves, with their EINTR and SIGPIPE handling, are in
 * platform.c; each leaves the OS's reason as the thread's message.
 */
#define _POSIX_C_SOURCE 200809L
#include "alloc.h"
#include "error.h"
#include "platform.h"
#include "replace.h"
#include "stream.h"

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
    const npyio__faults *faults; /* the tests' OS faults: the stream's */
    bool owned;       /* opened from a path: closed with the stream */
    bool regular;     /* a regular file: no SIGPIPE to guard against */
    bool readahead;   /* opened here for reading, not a pipe: see AHEAD */
    bool untried;     /* opened here, nothing read yet: the first read
                         tells a file from a pipe (see fd_read) */
    bool positional;  /* read with pread at pos (the system's offset is
                         not used: seeks cost no call) */
    bool data_sync;   /* a durable sync is fdatasync (rows appended or
                         written in place: their data and the length) */
    int64_t pos;      /* the logical position (readahead) */
    int64_t known_end; /* the file's end, seen by the last short read of a
                          block (readahead), or -1 */
    size_t ahead_pos, ahead_len; /* unread bytes: ahead[ahead_pos..len) */
    unsigned char *ahead;        /* AHEAD bytes with readahead (the
                                    stream's scratch space) */
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
        return os_status(npyio__fd_pread(f->faults, f->fd, buf, cap, f->pos,
                                         got));
    return os_status(npyio__fd_read(f->faults, f->fd, buf, cap, got));
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
    if (npyio__fd_pread_all(f->faults, f->fd, f->ahead, AHEAD, f->pos,
                            &f->ahead_len) == 0) {
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
                        : os_status(npyio__fd_pread_all(f->faults, f->fd,
                                                        f->ahead, AHEAD,
                                                        f->pos,
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
        return os_status(npyio__fd_read(f->faults, f->fd, buf, cap, got));
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

    return os_status(f->regular
                         ? npyio__fd_write_file(f->faults, f->fd, buf, len,
                                                put)
                         : npyio__fd_write(f->faults, f->fd, buf, len, put));
}

static npyio_status fd_seek(void *state, int64_t offset, int whence,
                            int64_t *pos)
{
    fd_state *f = state;
    int64_t target, window_start;

    if (!f->readahead || whence == NPYIO_SEEK_END) {
        f->ahead_pos = f->ahead_len = 0;
        f->known_end = -1;
        if (npyio__fd_seek(f->faults, f->fd, offset, whence, pos) != 0)
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
    if (npyio__fd_seek(f->faults, f->fd, target, NPYIO_SEEK_SET, pos) != 0)
        return NPYIO_E_IO;
    f->pos = *pos;
    return NPYIO_OK;
}

static npyio_status fd_pread(void *state, void *buf, size_t cap,
                             int64_t offset, size_t *got)
{
    fd_state *f = state;

    return os_status(npyio__fd_pread_all(f->faults, f->fd, buf, cap, offset,
                                         got));
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
    fd_state *f = state;

    if (!durable)
        return NPYIO_OK;
    return os_status(f->data_sync ? npyio__fd_datasync(f->faults, f->fd)
                                  : npyio__fd_sync(f->faults, f->fd));
}

/* What was read ahead may be stale once bytes are written at offsets or
 * the length changes: it is read again. */
static void forget_ahead(fd_state *f)
{
    f->ahead_pos = f->ahead_len = 0;
    f->known_end = -1;
}

static npyio_status fd_pwrite(void *state, const void *buf, size_t len,
                              int64_t offset, size_t *put)
{
    fd_state *f = state;

    forget_ahead(f);
    if (npyio__fd_pwrite_all(f->faults, f->fd, buf, len, offset) != 0)
        return NPYIO_E_IO;
    *put = len;
    return NPYIO_OK;
}

static npyio_status fd_resize(void *state, int64_t size, bool reserve)
{
    fd_state *f = state;

    forget_ahead(f);
    return os_status(reserve ? npyio__fd_reserve(f->faults, f->fd, size)
                             : npyio__fd_truncate(f->faults, f->fd, size));
}

static npyio_status fd_lock(void *state, bool exclusive, bool wait)
{
    bool busy = false;

    if (npyio__fd_lock(((fd_state *)state)->fd, exclusive, wait, &busy) == 0)
        return NPYIO_OK;
    return busy ? NPYIO_E_LOCKED : NPYIO_E_IO;
}

static int fd_descriptor(void *state)
{
    return ((fd_state *)state)->fd;
}

/* Between two descriptors: a clone or a kernel copy, holes kept (see
 * npyio__fd_copy_file); whatever a clone brought beyond len cut off. */
static npyio_status fd_copy_from(void *state, npyio_stream *from,
                                 int64_t len, const char **how)
{
    fd_state *f = state;
    int source = npyio__stream_descriptor(from);
    int rc;

    if (source < 0)
        return npyio__fail(NPYIO_E_UNSUPPORTED, "no descriptor to copy "
                           "from");
    forget_ahead(f);
    rc = npyio__fd_copy_file(f->faults, f->fd, source, len, how);
    if (rc == NPYIO__COPY_BUFFERED)
        return npyio__fail(NPYIO_E_UNSUPPORTED, "no copy in the kernel "
                           "between these files");
    if (rc == 0)
        rc = npyio__fd_truncate(f->faults, f->fd, len);
    return os_status(rc);
}

/* mmap's offsets are whole pages: the region starts at the page holding
 * the byte asked for. */
static npyio_status fd_map(void *state, int64_t offset, size_t len,
                           bool writable, npyio__region *region)
{
    fd_state *f = state;
    size_t skip = (size_t)((uint64_t)offset % npyio__page_size());
    void *base = NULL;
    npyio_status st;

    if (len > SIZE_MAX - skip)
        return npyio__fail(NPYIO_E_OVERFLOW, "%zu bytes do not fit this "
                           "host's address space", len);
    st = npyio__map_fd(f->faults, f->fd, offset - (int64_t)skip, skip + len,
                       writable, &base);
    if (st != NPYIO_OK)
        return st;
    region->base = base;
    region->len = skip + len;
    region->data = (unsigned char *)base + skip;
    region->release = npyio__unmap;
    return NPYIO_OK;
}

static npyio_status fd_close(void *state)
{
    fd_state *f = state;

    return f->owned ? os_status(npyio__fd_close(f->faults, f->fd)) : NPYIO_OK;
}

static size_t fd_buffered(void *state)
{
    fd_state *f = state;

    return f->ahead_len - f->ahead_pos;
}

/* Regular files know their size (fstat); devices and pipes do not. */
#define FD_OPS                                                             \
    .read = fd_read, .write = fd_write, .seek = fd_seek, .pread = fd_pread, \
    .pwrite = fd_pwrite, .resize = fd_resize, .lock = fd_lock,             \
    .copy_from = fd_copy_from, .map = fd_map, .descriptor = fd_descriptor
static const npyio__stream_backend fd_backend = {
    .name = "descriptor", FD_OPS, .sync = fd_sync, .close = fd_close,
    .buffered = fd_buffered};
static const npyio__stream_backend regular_fd_backend = {
    .name = "descriptor", FD_OPS, .size = fd_size, .sync = fd_sync,
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
    .buffered = fd_buffered, .probe = fd_probe, .map = fd_map,
    .descriptor = fd_descriptor};

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
    f->faults = &npyio__stream_mem(*out)->faults;
    f->owned = true;
    f->readahead = true;
    f->untried = true;
    f->known_end = -1;
    f->ahead = (unsigned char *)(f + 1);
    npyio__stream_defer_probe(*out);
    npyio__stream_set_position(*out, 0, true); /* opened a moment ago */
    return NPYIO_OK;
}

static npyio_status open_fd(int fd, bool owned, const npyio_options *options,
                            npyio_stream **out, fd_state **state)
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
    f->faults = &npyio__stream_mem(*out)->faults;
    f->owned = owned;
    f->regular = regular;
    f->known_end = -1;
    f->pos = pos;
    npyio__stream_set_seekable(*out, seekable);
    npyio__stream_set_position(*out, pos, seekable);
    if (state != NULL)
        *state = f;
    return NPYIO_OK;
}

npyio_status npyio__stream_open_fd(int fd, bool owned,
                                   const npyio_options *options,
                                   npyio_stream **out)
{
    return open_fd(fd, owned, options, out, NULL);
}

npyio_status npyio__stream_open_fd_file(int fd, const npyio_options *options,
                                        npyio_stream **out)
{
    fd_state *f = NULL;
    npyio_status st = open_fd(fd, true, options, out, &f);

    if (st == NPYIO_OK)
        f->data_sync = true;
    return st;
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
    npyio__fd_binary(fd); /* the caller's: ours are opened binary */
    return npyio__stream_open_fd(fd, false, options, out);
}

/* ---- a file replaced atomically -------------------------------------------------- */

/* A descriptor stream (the temporary, or a device written directly) whose
 * commit renames the temporary over its destination (replace.h). */
typedef struct replacing_state {
    fd_state f; /* first: the descriptor's operations work on it */
    npyio__atomic file;
    const npyio__mem *mem; /* the stream's allocator */
} replacing_state;

static npyio_status replacing_commit(void *state, bool durable)
{
    replacing_state *r = state;

    r->f.fd = -1; /* the commit closes it */
    return npyio__atomic_commit(&r->file, r->mem, durable);
}

static void replacing_abort(void *state)
{
    replacing_state *r = state;

    r->f.fd = -1;
    npyio__atomic_abandon(&r->file);
}

static npyio_status replacing_close(void *state)
{
    replacing_abort(state); /* nothing left after a commit */
    return NPYIO_OK;
}

static const npyio__stream_backend replacing_backend = {
    .name = "replacing file", FD_OPS, .size = fd_size,
    .commit = replacing_commit, .abort = replacing_abort,
    .close = replacing_close};

/* A replacing stream over the file `path`, below `base` if not NULL. */
static npyio_status open_replacing(const char *base, const char *path,
                                   bool replace, const npyio_options *options,
                                   npyio_stream **out)
{
    replacing_state *r;
    bool seekable;
    npyio_status st;

    st = npyio__stream_new(&replacing_backend, sizeof *r, options, out,
                           (void **)&r);
    if (st != NPYIO_OK)
        return st;
    r->mem = npyio__stream_mem(*out);
    r->f.faults = &r->mem->faults;
    r->file.fd = r->f.fd = -1;
    r->file.at = NPYIO__AT_CWD; /* an abort before the open owns nothing */
    r->file.temp = r->file.target = r->file.dir = r->file.shown = NULL;
    r->f.known_end = -1;
    st = base == NULL
             ? npyio__atomic_open(path, r->mem, &r->file)
             : npyio__atomic_open_under(base, path, replace, r->mem,
                                        &r->file);
    if (st != NPYIO_OK) {
        npyio__stream_close(*out);
        *out = NULL;
        return st;
    }
    r->f.fd = r->file.fd;
    /* The temporary is a regular file at its start; a device or FIFO is
     * written directly, in order (and may raise SIGPIPE). */
    r->f.regular = r->file.temp != NULL || r->file.unnamed;
    seekable = r->f.regular || npyio__fd_seekable(r->file.fd);
    npyio__stream_set_seekable(*out, seekable);
    npyio__stream_set_position(*out, 0, seekable);
    return NPYIO_OK;
}

npyio_status npyio__stream_open_replacing(const char *path,
                                          const npyio_options *options,
                                          npyio_stream **out)
{
    return open_replacing(NULL, path, true, options, out);
}

npyio_status npyio__stream_open_replacing_under(const char *base,
                                                const char *path,
                                                bool replace,
                                                const npyio_options *options,
                                                npyio_stream **out)
{
    return open_replacing(base, path, replace, options, out);
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
    npyio__file_binary(file);
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
        npyio__stream_set_seekable(*out, seekable);
        npyio__stream_set_position(*out, pos, seekable);
    }
    return st;
}
