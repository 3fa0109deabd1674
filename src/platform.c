/*
 * platform.c - operating-system specific code (see platform.h). Keep every
 * #ifdef on the host here.
 */
#define _POSIX_C_SOURCE 200809L
#if defined(__linux__)
#define _DEFAULT_SOURCE /* madvise() and MADV_HUGEPAGE */
#endif

#include "platform.h"
#include "internal.h"

#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/*
 * Ask the kernel to back a large block with transparent huge pages. On the
 * machines we measured, faulting fresh 4 KiB pages costs about 12 us each,
 * so a read() into a small-page buffer runs at a tenth of the speed of one
 * into a huge-page buffer. Advice only: failure changes nothing.
 */
static void advise_huge_pages(void *ptr, size_t size)
{
#if defined(MADV_HUGEPAGE)
    if (size >= NPYIO__HUGE_THRESHOLD)
        (void)madvise(ptr, size, MADV_HUGEPAGE);
#else
    (void)ptr;
    (void)size;
#endif
}

void *npyio__sys_alloc(void *user, size_t size, size_t alignment)
{
    void *ptr = NULL;

    (void)user;
    /* malloc() is much faster than posix_memalign() and already aligns to
     * 16 on the hosts we know; small blocks come at a high rate. */
    if (alignment <= 16 && alignment <= _Alignof(max_align_t))
        return malloc(size);
    if (alignment < sizeof(void *))
        alignment = sizeof(void *);
    if (posix_memalign(&ptr, alignment, size) != 0)
        return NULL;
    if (alignment >= NPYIO__HUGE_ALIGN)
        advise_huge_pages(ptr, size);
    return ptr;
}

void npyio__sys_free(void *user, void *ptr, size_t size)
{
    (void)user;
    (void)size;
    free(ptr);
}

/* ---- errors --------------------------------------------------------------- */

int npyio__os_fail(const char *what, int err)
{
    char reason[128];

    /* The XSI strerror_r (int result): thread-safe, unlike strerror(). */
    if (strerror_r(err, reason, sizeof reason) != 0)
        snprintf(reason, sizeof reason, "error %d", err);
    npyio__fail(NPYIO_E_IO, "%s: %s", what, reason);
    return -1;
}

/* ---- descriptors ----------------------------------------------------------- */

int npyio__fd_read(int fd, void *buf, size_t cap, size_t *got)
{
    ssize_t n;

    /* Linux moves at most 0x7ffff000 bytes per call; ask for no more. */
    if (cap > (size_t)0x40000000)
        cap = (size_t)0x40000000;
    do
        n = read(fd, buf, cap);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return npyio__os_fail("read", errno);
    *got = (size_t)n;
    return 0;
}

/*
 * Block SIGPIPE for this thread around a write, and if the write raised
 * one that was not pending before, consume it: the program sees EPIPE
 * and is not killed. (The usual technique; MSG_NOSIGNAL only covers
 * sockets, and changing the process's handler is not a library's call.)
 */
typedef struct pipe_guard {
    sigset_t blocked, saved;
    bool was_pending;
} pipe_guard;

static void guard_begin(pipe_guard *g)
{
    sigset_t pending;

    sigemptyset(&g->blocked);
    sigaddset(&g->blocked, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &g->blocked, &g->saved);
    sigpending(&pending);
    g->was_pending = sigismember(&pending, SIGPIPE) == 1;
}

static void guard_end(pipe_guard *g, bool got_epipe)
{
    if (got_epipe && !g->was_pending) {
        const struct timespec zero = {0, 0};

        while (sigtimedwait(&g->blocked, NULL, &zero) < 0 && errno == EINTR)
            ;
    }
    pthread_sigmask(SIG_SETMASK, &g->saved, NULL);
}

int npyio__fd_write(int fd, const void *buf, size_t len, size_t *put)
{
    pipe_guard guard;
    ssize_t n;
    int err;

    if (len > (size_t)0x40000000)
        len = (size_t)0x40000000;
    guard_begin(&guard);
    do
        n = write(fd, buf, len);
    while (n < 0 && errno == EINTR);
    err = errno;
    guard_end(&guard, n < 0 && err == EPIPE);
    if (n < 0)
        return npyio__os_fail("write", err);
    *put = (size_t)n;
    return 0;
}

static int whence_of(int whence)
{
    return whence == NPYIO_SEEK_SET ? SEEK_SET
           : whence == NPYIO_SEEK_CUR ? SEEK_CUR
                                      : SEEK_END;
}

int npyio__fd_seek(int fd, int64_t offset, int whence, int64_t *pos)
{
    off_t at;

    if ((int64_t)(off_t)offset != offset)
        return npyio__os_fail("seek", EOVERFLOW);
    at = lseek(fd, (off_t)offset, whence_of(whence));
    if (at < 0)
        return npyio__os_fail("seek", errno);
    *pos = (int64_t)at;
    return 0;
}

bool npyio__fd_seekable(int fd)
{
    return lseek(fd, 0, SEEK_CUR) >= 0;
}

int npyio__fd_close(int fd)
{
    /* POSIX leaves the descriptor's state after EINTR unspecified; on
     * Linux it is closed, so never retry (that could close another). */
    if (close(fd) != 0 && errno != EINTR)
        return npyio__os_fail("close", errno);
    return 0;
}

int npyio__fd_sync(int fd)
{
    int r;

    do
        r = fsync(fd);
    while (r != 0 && errno == EINTR);
    /* Directories on some file systems refuse fsync: nothing to sync. */
    if (r != 0 && errno != EINVAL && errno != EROFS)
        return npyio__os_fail("fsync", errno);
    return 0;
}

int npyio__fd_open(const char *path, int flags, unsigned mode)
{
    int fd;

    do
        fd = open(path, flags | O_CLOEXEC, (mode_t)mode);
    while (fd < 0 && errno == EINTR);
    return fd;
}

/* ---- stdio ----------------------------------------------------------------- */

int npyio__file_read(FILE *f, void *buf, size_t cap, size_t *got)
{
    size_t n;

    for (;;) {
        n = fread(buf, 1, cap, f);
        if (n > 0 || !ferror(f))
            break;
        if (errno != EINTR)
            return npyio__os_fail("fread", errno);
        clearerr(f);
    }
    *got = n;
    return 0;
}

int npyio__file_write(FILE *f, const void *buf, size_t len, size_t *put)
{
    pipe_guard guard;
    size_t n;
    int err = 0;

    guard_begin(&guard);
    for (;;) {
        n = fwrite(buf, 1, len, f);
        if (n > 0 || !ferror(f))
            break;
        err = errno;
        if (err != EINTR)
            break;
        clearerr(f);
    }
    guard_end(&guard, n == 0 && err == EPIPE);
    if (n == 0 && err != 0)
        return npyio__os_fail("fwrite", err);
    *put = n;
    return 0;
}

int npyio__file_seek(FILE *f, int64_t offset, int whence, int64_t *pos)
{
    off_t at;

    if ((int64_t)(off_t)offset != offset)
        return npyio__os_fail("fseeko", EOVERFLOW);
    if (fseeko(f, (off_t)offset, whence_of(whence)) != 0)
        return npyio__os_fail("fseeko", errno);
    at = ftello(f);
    if (at < 0)
        return npyio__os_fail("ftello", errno);
    *pos = (int64_t)at;
    return 0;
}

int npyio__file_flush(FILE *f)
{
    if (fflush(f) != 0)
        return npyio__os_fail("fflush", errno);
    return 0;
}

/* ---- atomic replacement ------------------------------------------------------ */

static npyio_status dup_string(const npyio__mem *mem, const char *s, size_t n,
                               char **out)
{
    npyio_status st = npyio__alloc(mem, n + 1, "file name", (void **)out);

    if (st == NPYIO_OK) {
        memcpy(*out, s, n);
        (*out)[n] = '\0';
    }
    return st;
}

/* The directory part of a path ("." for a bare name). */
static npyio_status dir_of(const npyio__mem *mem, const char *path,
                           char **out)
{
    const char *slash = strrchr(path, '/');

    if (slash == NULL)
        return dup_string(mem, ".", 1, out);
    if (slash == path)
        return dup_string(mem, "/", 1, out);
    return dup_string(mem, path, (size_t)(slash - path), out);
}

/*
 * Follow symbolic links at the end of the path (not in its directories,
 * which rename() goes through anyway), so that replacing a link writes its
 * target as the user meant, rather than replacing the link by a file.
 */
static npyio_status resolve_links(const npyio__mem *mem, const char *path,
                                  char **out)
{
    char *current = NULL;
    npyio_status st = dup_string(mem, path, strlen(path), &current);
    int hops;

    for (hops = 0; st == NPYIO_OK && hops < 40; hops++) {
        struct stat info;
        char link[4096];
        ssize_t n;
        char *next = NULL, *dir = NULL;

        if (lstat(current, &info) != 0 || !S_ISLNK(info.st_mode)) {
            *out = current;
            return NPYIO_OK;
        }
        n = readlink(current, link, sizeof link - 1);
        if (n < 0) {
            npyio__os_fail(current, errno);
            st = NPYIO_E_IO;
            break;
        }
        link[n] = '\0';
        if (link[0] == '/') {
            st = dup_string(mem, link, (size_t)n, &next);
        } else { /* relative to the link's own directory */
            st = dir_of(mem, current, &dir);
            if (st == NPYIO_OK) {
                size_t dn = strlen(dir);

                st = npyio__alloc(mem, dn + 1 + (size_t)n + 1, "file name",
                                  (void **)&next);
                if (st == NPYIO_OK) {
                    memcpy(next, dir, dn);
                    next[dn] = '/';
                    memcpy(next + dn + 1, link, (size_t)n + 1);
                }
            }
            npyio__free(dir);
        }
        npyio__free(current);
        current = next;
    }
    if (st == NPYIO_OK)
        st = npyio__fail(NPYIO_E_IO, "%s: too many levels of symbolic links",
                         path);
    npyio__free(current);
    return st;
}

/* A name no other writer will pick: ".<base>.<pid>-<counter>-<clock>". */
static npyio_status temp_name(const npyio__mem *mem, const char *target,
                              unsigned attempt, char **out)
{
    const char *slash = strrchr(target, '/');
    const char *base = slash ? slash + 1 : target;
    size_t dir_len = slash ? (size_t)(slash - target) + 1 : 0;
    struct timespec now;
    char suffix[64];
    size_t n;
    npyio_status st;

    clock_gettime(CLOCK_MONOTONIC, &now);
    snprintf(suffix, sizeof suffix, ".%ld-%u-%lx.tmp", (long)getpid(),
             attempt, (unsigned long)now.tv_nsec);
    n = dir_len + 1 + strlen(base) + strlen(suffix);
    st = npyio__alloc(mem, n + 1, "file name", (void **)out);
    if (st == NPYIO_OK)
        snprintf(*out, n + 1, "%.*s.%s%s", (int)dir_len, target, base,
                 suffix);
    return st;
}

void npyio__atomic_abandon(npyio__atomic *a)
{
    if (a->fd >= 0)
        npyio__fd_close(a->fd);
    if (a->temp != NULL)
        unlink(a->temp);
    npyio__free(a->temp);
    npyio__free(a->target);
    npyio__free(a->dir);
    a->fd = -1;
    a->temp = a->target = a->dir = NULL;
}

static npyio_status create_temp(npyio__atomic *a, const npyio__mem *mem,
                                const char *path)
{
    unsigned attempt;
    int err = 0;
    npyio_status st;

    for (attempt = 0; attempt < 100; attempt++) {
        st = temp_name(mem, a->target, attempt, &a->temp);
        if (st != NPYIO_OK)
            return st;
        /* 0666 and the umask: the mode a plain open(O_CREAT) gives. */
        a->fd = npyio__fd_open(a->temp, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (a->fd >= 0)
            return NPYIO_OK;
        err = errno;
        npyio__free(a->temp);
        a->temp = NULL;
        if (err != EEXIST)
            break;
    }
    npyio__os_fail(a->dir, err);
    return npyio__fail(err == ENOENT || err == ENOTDIR ? NPYIO_E_NOT_FOUND
                                                       : NPYIO_E_IO,
                       "%s: cannot create a file in its directory: %s", path,
                       npyio_last_error());
}

/* A device, FIFO or socket: nothing to replace, written in order. */
static npyio_status open_directly(const char *path, const npyio__mem *mem,
                                  npyio__atomic *a)
{
    npyio_status st = dup_string(mem, path, strlen(path), &a->target);

    if (st != NPYIO_OK)
        return st;
    a->fd = npyio__fd_open(path, O_WRONLY | O_TRUNC, 0);
    if (a->fd >= 0)
        return NPYIO_OK;
    npyio__os_fail(path, errno);
    npyio__atomic_abandon(a);
    return NPYIO_E_IO;
}

npyio_status npyio__atomic_open(const char *path, const npyio__mem *mem,
                                npyio__atomic *a)
{
    struct stat info;
    npyio_status st;

    a->fd = -1;
    a->temp = a->target = a->dir = NULL;
    /* stat() before resolving links by hand: /dev/stdout is a link to a
     * link the kernel makes up (/proc/self/fd/1 -> "pipe:[...]"). */
    if (stat(path, &info) == 0 && !S_ISREG(info.st_mode) &&
        !S_ISDIR(info.st_mode))
        return open_directly(path, mem, a);
    st = resolve_links(mem, path, &a->target);
    if (st == NPYIO_OK)
        st = dir_of(mem, a->target, &a->dir);
    if (st == NPYIO_OK && stat(a->target, &info) == 0 &&
        S_ISDIR(info.st_mode))
        st = npyio__fail(NPYIO_E_IO, "%s: is a directory", path);
    if (st == NPYIO_OK)
        st = create_temp(a, mem, path);
    /* Replacing a file keeps its mode, as writing it in place would. */
    if (st == NPYIO_OK && stat(a->target, &info) == 0 &&
        fchmod(a->fd, info.st_mode & 07777) != 0) {
        npyio__os_fail(a->temp, errno);
        st = NPYIO_E_IO;
    }
    if (st != NPYIO_OK)
        npyio__atomic_abandon(a);
    return st;
}

static int sync_dir(const char *dir)
{
    int fd = npyio__fd_open(dir, O_RDONLY, 0);
    int r;

    if (fd < 0)
        return npyio__os_fail(dir, errno);
    r = npyio__fd_sync(fd);
    npyio__fd_close(fd);
    return r;
}

npyio_status npyio__atomic_commit(npyio__atomic *a, bool durable)
{
    const char *what = NULL;
    char cause[256];
    int fd = a->fd;
    int synced = durable && a->temp != NULL ? npyio__fd_sync(fd) : 0;
    int closed;

    a->fd = -1;
    if (synced != 0)
        snprintf(cause, sizeof cause, "%s", npyio_last_error());
    closed = npyio__fd_close(fd); /* always, even after a failed fsync */
    if (synced != 0 || closed != 0) {
        what = "writing the file";
    } else if (a->temp == NULL) {
        /* Written directly: a device or FIFO has nothing to sync. */
    } else if (rename(a->temp, a->target) != 0) {
        npyio__os_fail("rename", errno);
        what = "replacing the file";
    } else {
        npyio__free(a->temp);
        a->temp = NULL; /* in place now: nothing to remove */
        if (durable && sync_dir(a->dir) != 0)
            what = "syncing its directory";
    }
    if (what != NULL) {
        if (synced == 0)
            snprintf(cause, sizeof cause, "%s", npyio_last_error());
        npyio__fail(NPYIO_E_IO, "%s: %s: %s", a->target, what, cause);
    }
    npyio__atomic_abandon(a);
    return what == NULL ? NPYIO_OK : NPYIO_E_IO;
}

/* ---- positional I/O ----------------------------------------------------------- */

int npyio__fd_pwrite_all(int fd, const void *buf, size_t len, int64_t offset)
{
    const unsigned char *p = buf;
    pipe_guard guard;
    int err = 0;

    guard_begin(&guard);
    while (len > 0) {
        size_t step = len > (size_t)0x40000000 ? (size_t)0x40000000 : len;
        ssize_t n = pwrite(fd, p, step, (off_t)offset);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            err = n < 0 ? errno : EIO;
            break;
        }
        p += n;
        len -= (size_t)n;
        offset += n;
    }
    guard_end(&guard, err == EPIPE);
    return err ? npyio__os_fail("pwrite", err) : 0;
}

int npyio__fd_pread_all(int fd, void *buf, size_t len, int64_t offset,
                        size_t *got)
{
    unsigned char *p = buf;
    size_t done = 0;

    while (done < len) {
        size_t step = len - done > (size_t)0x40000000 ? (size_t)0x40000000
                                                     : len - done;
        ssize_t n = pread(fd, p + done, step, (off_t)(offset + (int64_t)done));

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return npyio__os_fail("pread", errno);
        if (n == 0)
            break;
        done += (size_t)n;
    }
    *got = done;
    return 0;
}

int npyio__fd_datasync(int fd)
{
    int r;

    do
        r = fdatasync(fd);
    while (r != 0 && errno == EINTR);
    if (r != 0 && errno != EINVAL && errno != EROFS)
        return npyio__os_fail("fdatasync", errno);
    return 0;
}

int npyio__fd_size(int fd, int64_t *size)
{
    struct stat info;

    if (fstat(fd, &info) != 0)
        return npyio__os_fail("fstat", errno);
    *size = (int64_t)info.st_size;
    return 0;
}
