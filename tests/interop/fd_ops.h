/*
 * fd_ops.h - a caller's stream: npyio_stream_ops callbacks over a file
 * descriptor, as a program that keeps its own I/O layer would write them.
 * Shared by the interop tools' --via-callbacks mode (io_tool.c,
 * npz_tool.c) and the table's unit test (tests/unit/test_callbacks.c).
 *
 * Kinds of table:
 *   "full"    every member, the lock an open file description lock
 *             (Linux; flock() elsewhere and in a portable build,
 *             NPYIO_PORTABLE), the kind libnpyio's own path appenders
 *             take, so that the two exclude each other (on Linux the two
 *             kinds do not see each other);
 *   "nolock"  every member but lock (appends are the caller's to
 *             serialise);
 *   "old"     a table as a caller built against the four-member header
 *             made it: size = offsetof(npyio_stream_ops, pread). The later
 *             members are set all the same: the library must not read
 *             them.
 * The user state counts calls and can be told to misbehave (the unit
 * test's knobs). The includer defines _GNU_SOURCE (or _POSIX_C_SOURCE)
 * before any system header.
 */
#ifndef NPYIO_TEST_FD_OPS_H
#define NPYIO_TEST_FD_OPS_H

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npyio.h"

typedef struct fd_user {
    int fd;
    /* knobs */
    int lock_busy;       /* the lock callback answers NPYIO_E_LOCKED */
    long pwrite_fail_at; /* the n-th pwrite (1-based) fails; 0 never */
    long write_fail_at;  /* the n-th write (1-based) fails; 0 never */
    /* counts */
    atomic_long preads, pwrites, writes, reads, seeks, lengths, truncates,
        syncs, durable_syncs, locks, closes;
    int last_lock_exclusive, last_lock_wait;
} fd_user;

static int fdo_read(void *user, void *buf, size_t cap, size_t *got)
{
    fd_user *u = user;
    ssize_t n;

    atomic_fetch_add(&u->reads, 1);
    do
        n = read(u->fd, buf, cap);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
    *got = (size_t)n;
    return 0;
}

static int fdo_write(void *user, const void *buf, size_t len, size_t *put)
{
    fd_user *u = user;
    long k = atomic_fetch_add(&u->writes, 1) + 1;
    ssize_t n;

    if (u->write_fail_at != 0 && k == u->write_fail_at)
        return -1;
    do
        n = write(u->fd, buf, len);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
    *put = (size_t)n;
    return 0;
}

static int fdo_seek(void *user, int64_t offset, int whence, int64_t *pos)
{
    fd_user *u = user;
    int w = whence == NPYIO_SEEK_SET   ? SEEK_SET
            : whence == NPYIO_SEEK_CUR ? SEEK_CUR
                                       : SEEK_END;
    off_t at;

    atomic_fetch_add(&u->seeks, 1);
    at = lseek(u->fd, (off_t)offset, w);
    if (at < 0)
        return -1;
    *pos = (int64_t)at;
    return 0;
}

static int fdo_close(void *user)
{
    fd_user *u = user;
    int rc = close(u->fd);

    /* The state outlives the stream when the test keeps it (fd -1). */
    u->fd = -1;
    atomic_fetch_add(&u->closes, 1);
    return rc == 0 ? 0 : -1;
}

static int fdo_pread(void *user, void *buf, size_t cap, int64_t offset,
                     size_t *got)
{
    fd_user *u = user;
    ssize_t n;

    atomic_fetch_add(&u->preads, 1);
    do
        n = pread(u->fd, buf, cap, (off_t)offset);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
    *got = (size_t)n;
    return 0;
}

static int fdo_pwrite(void *user, const void *buf, size_t len,
                      int64_t offset, size_t *put)
{
    fd_user *u = user;
    long k = atomic_fetch_add(&u->pwrites, 1) + 1;
    ssize_t n;

    if (u->pwrite_fail_at != 0 && k == u->pwrite_fail_at)
        return -1;
    do
        n = pwrite(u->fd, buf, len, (off_t)offset);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
    *put = (size_t)n;
    return 0;
}

static int fdo_length(void *user, int64_t *length)
{
    fd_user *u = user;
    struct stat sb;

    atomic_fetch_add(&u->lengths, 1);
    if (fstat(u->fd, &sb) != 0)
        return -1;
    *length = (int64_t)sb.st_size;
    return 0;
}

static int fdo_truncate(void *user, int64_t length)
{
    fd_user *u = user;

    atomic_fetch_add(&u->truncates, 1);
    return ftruncate(u->fd, (off_t)length) == 0 ? 0 : -1;
}

static int fdo_sync(void *user, int durable)
{
    fd_user *u = user;

    atomic_fetch_add(&u->syncs, 1);
    if (!durable)
        return 0; /* nothing buffered here */
    atomic_fetch_add(&u->durable_syncs, 1);
    return fsync(u->fd) == 0 ? 0 : -1;
}

static int fdo_lock(void *user, int exclusive, int wait)
{
    fd_user *u = user;
    int rc;

    atomic_fetch_add(&u->locks, 1);
    u->last_lock_exclusive = exclusive;
    u->last_lock_wait = wait;
    if (u->lock_busy)
        return NPYIO_E_LOCKED;
#if defined(F_OFD_SETLK) && !defined(NPYIO_PORTABLE)
    {
        struct flock fl;

        memset(&fl, 0, sizeof fl);
        fl.l_type = exclusive ? F_WRLCK : F_RDLCK;
        fl.l_whence = SEEK_SET;
        do
            rc = fcntl(u->fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl);
        while (rc != 0 && errno == EINTR);
    }
    if (rc != 0 && (errno == EAGAIN || errno == EACCES))
        return NPYIO_E_LOCKED;
#else
    do
        rc = flock(u->fd, (exclusive ? LOCK_EX : LOCK_SH) |
                              (wait ? 0 : LOCK_NB));
    while (rc != 0 && errno == EINTR);
    if (rc != 0 && errno == EWOULDBLOCK)
        return NPYIO_E_LOCKED;
#endif
    return rc == 0 ? 0 : -1;
}

/* The table of a kind ("full", "nolock", "old"); 0 for an unknown kind. */
static inline int fd_ops_table(const char *kind, npyio_stream_ops *ops)
{
    memset(ops, 0, sizeof *ops);
    ops->size = sizeof *ops;
    ops->read = fdo_read;
    ops->write = fdo_write;
    ops->seek = fdo_seek;
    ops->close = fdo_close;
    ops->pread = fdo_pread;
    ops->pwrite = fdo_pwrite;
    ops->length = fdo_length;
    ops->truncate = fdo_truncate;
    ops->sync = fdo_sync;
    ops->lock = fdo_lock;
    if (strcmp(kind, "nolock") == 0)
        ops->lock = NULL;
    else if (strcmp(kind, "old") == 0)
        ops->size = offsetof(npyio_stream_ops, pread);
    else if (strcmp(kind, "full") != 0)
        return 0;
    return 1;
}

/* A callback stream of that kind over `path` opened with open(2)'s
 * flags, and its user state in *user (freed by fd_ops_close()).
 * NPYIO_E_IO with errno when open(2) fails; the library's status
 * otherwise. */
static inline npyio_status fd_ops_open(const char *path, int oflags,
                                       const char *kind, npyio_stream **out,
                                       fd_user **user)
{
    npyio_stream_ops ops;
    fd_user *u;
    npyio_status st;

    *out = NULL;
    if (!fd_ops_table(kind, &ops))
        return NPYIO_E_INVALID_ARG;
    u = calloc(1, sizeof *u);
    if (u == NULL)
        return NPYIO_E_NOMEM;
    u->fd = open(path, oflags | O_CLOEXEC, 0666);
    if (u->fd < 0) {
        free(u);
        return NPYIO_E_IO;
    }
    st = npyio_stream_open_ops(&ops, u, NULL, out);
    if (st != NPYIO_OK) {
        close(u->fd);
        free(u);
        return st;
    }
    *user = u;
    return NPYIO_OK;
}

/* A tool's leading --via-callbacks=KIND, taken off its arguments: 1 and
 * *kind set (NULL without the option), or 0 for a kind fd_ops_table()
 * does not know. */
static inline int fd_ops_option(int *argc, char ***argv, const char **kind)
{
    npyio_stream_ops probe;

    *kind = NULL;
    if (*argc < 2 || strncmp((*argv)[1], "--via-callbacks=", 16) != 0)
        return 1;
    *kind = (*argv)[1] + 16;
    (*argv)[1] = (*argv)[0];
    (*argv)++;
    (*argc)--;
    return fd_ops_table(*kind, &probe);
}

/* Close the stream, then free its user state. */
static inline npyio_status fd_ops_close(npyio_stream *s, fd_user *u)
{
    npyio_status st = npyio_stream_close(s);

    free(u);
    return st;
}

#endif /* NPYIO_TEST_FD_OPS_H */
