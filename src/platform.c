/*
 * platform.c - operating-system specific code (see platform.h). Every #if
 * on the host is here, and each capability is chosen once, in the block
 * below, as an NPYIO_HAVE_* name that the code under it uses. A build
 * with NPYIO_PORTABLE (CMake -DNPYIO_PORTABLE=ON) takes only what
 * POSIX.1-2008, macOS and FreeBSD all offer, on Linux too, so that the
 * paths those systems take are built and tested as a whole in CI.
 */
#if defined(__linux__) || defined(__GLIBC__)
/* glibc shows only what is asked for: POSIX.1-2008, and either Linux's
 * own calls (O_TMPFILE, F_OFD_SETLK, linkat(AT_EMPTY_PATH),
 * copy_file_range) or, portable, only the BSD ones every target has
 * (flock). macOS and the BSDs show everything when no standard is named
 * (naming POSIX there would hide flock), so nothing is defined for them. */
#define _POSIX_C_SOURCE 200809L
#if defined(NPYIO_PORTABLE)
#define _DEFAULT_SOURCE
#else
#define _GNU_SOURCE
#endif
#endif

#include <fcntl.h>
#include <sys/mman.h>

/* ---- the capabilities, chosen once -------------------------------------------
 * Each is 1 where this build uses the call and 0 where it takes the
 * fallback written beside it; NPYIO_PORTABLE takes every fallback. */
#if defined(NPYIO_PORTABLE)
#define NPYIO_LINUX_CALLS 0
#else
#define NPYIO_LINUX_CALLS 1
#endif
/* Unnamed temporaries: O_TMPFILE, named by linkat() of the descriptor.
 * Else named temporaries for the whole write (replace.c). */
#if NPYIO_LINUX_CALLS && defined(O_TMPFILE) && defined(AT_EMPTY_PATH)
#define NPYIO_HAVE_UNNAMED_FILES 1
#else
#define NPYIO_HAVE_UNNAMED_FILES 0
#endif
/* Open file description locks (F_OFD_SETLK). Else flock(), also owned by
 * the open file description; never classic fcntl() record locks, which a
 * process drops when it closes any descriptor of the file. */
#if NPYIO_LINUX_CALLS && defined(F_OFD_SETLK) && defined(F_OFD_GETLK)
#define NPYIO_HAVE_OFD_LOCKS 1
#else
#define NPYIO_HAVE_OFD_LOCKS 0
#endif
/* Copies in the kernel: FICLONE, copy_file_range() over SEEK_DATA and
 * SEEK_HOLE. Else the caller copies through a buffer. */
#if NPYIO_LINUX_CALLS && defined(__linux__)
#define NPYIO_HAVE_KERNEL_COPY 1
#else
#define NPYIO_HAVE_KERNEL_COPY 0
#endif
/* posix_fallocate() (macOS has none). Else zeros are written over the
 * new part of the file, which allocates its blocks as surely. */
#if NPYIO_LINUX_CALLS && !defined(__APPLE__)
#define NPYIO_HAVE_FALLOCATE 1
#else
#define NPYIO_HAVE_FALLOCATE 0
#endif
/* fdatasync() (macOS declares none). Else fsync(), which syncs more. */
#if NPYIO_LINUX_CALLS && !defined(__APPLE__)
#define NPYIO_HAVE_FDATASYNC 1
#else
#define NPYIO_HAVE_FDATASYNC 0
#endif
/* sigtimedwait() (macOS has none). Else sigwait() once SIGPIPE is seen
 * pending, which then returns at once. */
#if NPYIO_LINUX_CALLS && !defined(__APPLE__)
#define NPYIO_HAVE_SIGTIMEDWAIT 1
#else
#define NPYIO_HAVE_SIGTIMEDWAIT 0
#endif
/* Transparent huge-page advice. Else none: advice only. */
#if NPYIO_LINUX_CALLS && defined(MADV_HUGEPAGE)
#define NPYIO_HAVE_HUGE_PAGES 1
#else
#define NPYIO_HAVE_HUGE_PAGES 0
#endif
/* glibc's GNU strerror_r() (a char *), declared under _GNU_SOURCE. Else
 * the POSIX one (an int). */
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
#define NPYIO_HAVE_GNU_STRERROR_R 1
#else
#define NPYIO_HAVE_GNU_STRERROR_R 0
#endif
/* Folders opened without following links: openat() with O_NOFOLLOW and
 * O_DIRECTORY (POSIX.1-2008). Else npyio_stream_save_under() refuses. */
#if defined(O_NOFOLLOW) && defined(O_DIRECTORY)
#define NPYIO_HAVE_BENEATH 1
#else
#define NPYIO_HAVE_BENEATH 0
#endif

#include "error.h"
#include "platform.h"

#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <signal.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <stdlib.h>
#include <dirent.h>
#include <sys/file.h>
#if NPYIO_HAVE_KERNEL_COPY
#include <linux/fs.h>
#include <sys/ioctl.h>
#endif
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
void npyio__advise_huge_pages(void *ptr, size_t size)
{
#if NPYIO_HAVE_HUGE_PAGES
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
    /* (Larger alignments are powers of two of at least 32: multiples of
     * sizeof(void *), as posix_memalign() requires.) */
    if (posix_memalign(&ptr, alignment, size) != 0)
        return NULL;
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

    /* strerror_r: thread-safe, unlike strerror(). glibc gives its GNU
     * form under _GNU_SOURCE (a char * that may not be our buffer). */
#if NPYIO_HAVE_GNU_STRERROR_R
    const char *text = strerror_r(err, reason, sizeof reason);

    if (text != reason)
        snprintf(reason, sizeof reason, "%s", text);
#else
    if (strerror_r(err, reason, sizeof reason) != 0)
        snprintf(reason, sizeof reason, "error %d", err);
#endif
    npyio__fail(NPYIO_E_IO, "%s: %s", what, reason);
    return -1;
}

/* ---- descriptors ----------------------------------------------------------- */

int npyio__fd_read(const npyio__faults *faults, int fd, void *buf, size_t cap,
                   size_t *got)
{
    ssize_t n;

    /* Linux moves at most 0x7ffff000 bytes per call; ask for no more. */
    if (cap > (size_t)0x40000000)
        cap = (size_t)0x40000000;
    do {
        size_t ask = cap;

        n = npyio__faulted(faults, "read", &ask) ? -1 : read(fd, buf, ask);
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return npyio__os_fail("read", errno);
    *got = (size_t)n;
    return 0;
}

int npyio__fd_pread(const npyio__faults *faults, int fd, void *buf, size_t cap,
                    int64_t offset, size_t *got)
{
    ssize_t n;

    if (cap > (size_t)0x40000000)
        cap = (size_t)0x40000000;
    do {
        size_t ask = cap;

        n = npyio__faulted(faults, "pread", &ask) ? -1
                                          : pread(fd, buf, ask, (off_t)offset);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        int err = errno;

        npyio__os_fail("pread", err);
        errno = err; /* callers tell a pipe (ESPIPE) from a failure */
        return -1;
    }
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

/* Consume the SIGPIPE a write raised, without waiting if there is none. */
static void consume_sigpipe(const pipe_guard *g)
{
#if NPYIO_HAVE_SIGTIMEDWAIT
    const struct timespec zero = {0, 0};

    while (sigtimedwait(&g->blocked, NULL, &zero) < 0 && errno == EINTR)
        ;
#else
    sigset_t pending;
    int sig;

    /* Pending (a write raises it on its own thread): sigwait() returns at
     * once. Not pending (the system reported EPIPE without it): no wait. */
    if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1)
        (void)sigwait(&g->blocked, &sig);
#endif
}

static void guard_end(pipe_guard *g, bool got_epipe)
{
    if (got_epipe && !g->was_pending)
        consume_sigpipe(g);
    pthread_sigmask(SIG_SETMASK, &g->saved, NULL);
}

int npyio__fd_write_file(const npyio__faults *faults, int fd, const void *buf,
                         size_t len, size_t *put)
{
    ssize_t n;

    if (len > (size_t)0x40000000)
        len = (size_t)0x40000000;
    do {
        size_t ask = len;

        n = npyio__faulted(faults, "write", &ask) ? -1 : write(fd, buf, ask);
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return npyio__os_fail("write", errno);
    *put = (size_t)n;
    return 0;
}

int npyio__fd_write(const npyio__faults *faults, int fd, const void *buf,
                    size_t len, size_t *put)
{
    pipe_guard guard;
    ssize_t n;
    int err;

    if (len > (size_t)0x40000000)
        len = (size_t)0x40000000;
    guard_begin(&guard);
    do {
        size_t ask = len;

        n = npyio__faulted(faults, "write", &ask) ? -1 : write(fd, buf, ask);
    } while (n < 0 && errno == EINTR);
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

int npyio__fd_seek(const npyio__faults *faults, int fd, int64_t offset,
                   int whence, int64_t *pos)
{
    off_t at;

    if ((int64_t)(off_t)offset != offset)
        return npyio__os_fail("seek", EOVERFLOW);
    at = npyio__faulted(faults, "lseek", NULL)
             ? -1
             : lseek(fd, (off_t)offset, whence_of(whence));
    if (at < 0)
        return npyio__os_fail("seek", errno);
    *pos = (int64_t)at;
    return 0;
}

bool npyio__fd_seekable(int fd)
{
    return lseek(fd, 0, SEEK_CUR) >= 0;
}

void npyio__fd_probe(int fd, bool just_opened, bool *seekable,
                     bool *regular, int64_t *pos)
{
    struct stat info;
    off_t at;

    *regular = fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
    if (*regular && just_opened) { /* at its start: no need to ask */
        *seekable = true;
        *pos = 0;
        return;
    }
    at = lseek(fd, 0, SEEK_CUR);
    *seekable = at >= 0;
    *pos = at >= 0 ? (int64_t)at : 0;
    *regular = *regular && *seekable;
}

int npyio__fd_close(const npyio__faults *faults, int fd)
{
    /* POSIX leaves the descriptor's state after EINTR unspecified; on
     * Linux it is closed, so never retry (that could close another). */
    if (npyio__faulted(faults, "close", NULL) && errno != EINTR) {
        int err = errno;

        close(fd); /* the descriptor goes anyway, as after a real failure */
        return npyio__os_fail("close", err);
    }
    if (close(fd) != 0 && errno != EINTR)
        return npyio__os_fail("close", errno);
    return 0;
}

int npyio__fd_sync(const npyio__faults *faults, int fd)
{
    int r;

    do
        r = npyio__faulted(faults, "fsync", NULL) ? -1 : fsync(fd);
    while (r != 0 && errno == EINTR);
    /* Directories on some file systems refuse fsync: nothing to sync. */
    if (r != 0 && errno != EINVAL && errno != EROFS)
        return npyio__os_fail("fsync", errno);
    return 0;
}

/* The `at` of the *at() calls: NPYIO__AT_CWD is the C library's own. */
static int at_of(int at)
{
    return at == NPYIO__AT_CWD ? AT_FDCWD : at;
}

int npyio__fd_open_at(const npyio__faults *faults, int at, const char *path,
                      int flags, unsigned mode)
{
    int fd;

    do
        fd = npyio__faulted(faults, "open", NULL)
                 ? -1
                 : openat(at_of(at), path, flags | O_CLOEXEC, (mode_t)mode);
    while (fd < 0 && errno == EINTR);
    return fd;
}

int npyio__fd_open(const npyio__faults *faults, const char *path, int flags,
                   unsigned mode)
{
    return npyio__fd_open_at(faults, NPYIO__AT_CWD, path, flags, mode);
}

/* ---- stdio ----------------------------------------------------------------- */

/* POSIX has no text mode. */
void npyio__fd_binary(int fd)
{
    (void)fd;
}

void npyio__file_binary(FILE *f)
{
    (void)f;
}

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

/*
 * stdio cannot be trusted with a failed write: glibc drops what was
 * buffered when a flush fails (EINTR from a signal included), while the
 * fwrite() that triggered it may report a partial success. So a FILE with
 * a descriptor is flushed and then written through the descriptor, where
 * interruptions are retried without loss (as for descriptor streams), and
 * stdio's idea of the position is brought back in step afterwards. A FILE
 * without one (fopencookie, fmemopen) goes through fwrite(), and any error
 * it reports fails the write: the bytes that reached the file are unknown.
 */
static int file_write_through_fd(FILE *f, int fd, const void *buf, size_t len,
                                 size_t *put)
{
    off_t at;

    if (fflush(f) != 0)
        return npyio__os_fail("fflush (buffered bytes may have been lost)",
                              errno);
    if (npyio__fd_write(NULL, fd, buf, len, put) != 0)
        return -1;
    /* Seekable: tell stdio where the descriptor now is (a pipe has no
     * position to keep in step). */
    at = lseek(fd, 0, SEEK_CUR);
    if (at >= 0 && fseeko(f, at, SEEK_SET) != 0)
        return npyio__os_fail("fseeko", errno);
    return 0;
}

int npyio__file_write(FILE *f, const void *buf, size_t len, size_t *put)
{
    pipe_guard guard;
    size_t n;
    int err, fd = fileno(f);

    if (fd >= 0)
        return file_write_through_fd(f, fd, buf, len, put);
    guard_begin(&guard);
    n = fwrite(buf, 1, len, f);
    err = ferror(f) ? errno : 0;
    guard_end(&guard, err == EPIPE);
    if (err != 0 || n < len)
        return npyio__os_fail("fwrite (bytes may have been lost)",
                              err != 0 ? err : EIO);
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

/* ---- unnamed files ----------------------------------------------------------- */

int npyio__fd_open_unnamed(const npyio__faults *faults, int at,
                           const char *dir)
{
#if NPYIO_HAVE_UNNAMED_FILES
    return npyio__fd_open_at(faults, at, dir, O_TMPFILE | O_RDWR, 0666);
#else
    (void)faults;
    (void)at;
    (void)dir;
    errno = EOPNOTSUPP;
    return -1;
#endif
}

#if NPYIO_HAVE_UNNAMED_FILES
/*
 * linkat() with AT_EMPTY_PATH names the file in one step but needs
 * CAP_DAC_READ_SEARCH; through /proc/self/fd it works for every user, at
 * the price of a path lookup in /proc. Which one this process may use is
 * learnt at the first link and remembered (a hint: a wrong guess costs one
 * failed call).
 */
static atomic_int empty_path_links; /* 0 unknown, 1 allowed, -1 not */
#endif

int npyio__fd_link_unnamed(const npyio__faults *faults, int fd, int at,
                           const char *name)
{
#if NPYIO_HAVE_UNNAMED_FILES
    char proc[64];
    int allowed = atomic_load_explicit(&empty_path_links,
                                       memory_order_relaxed);
    int err = 0;

    if (npyio__faulted(faults, "linkat", NULL)) {
        err = errno;
        goto failed;
    }
    if (allowed >= 0) {
        if (linkat(fd, "", at_of(at), name, AT_EMPTY_PATH) == 0) {
            if (allowed == 0)
                atomic_store_explicit(&empty_path_links, 1,
                                      memory_order_relaxed);
            return 0;
        }
        err = errno;
        if (err == EEXIST)
            goto failed;
        if (err == EPERM || err == ENOENT || err == EINVAL)
            atomic_store_explicit(&empty_path_links, -1,
                                  memory_order_relaxed);
    }
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    if (linkat(AT_FDCWD, proc, at_of(at), name, AT_SYMLINK_FOLLOW) == 0)
        return 0;
    /* Without /proc, the first error says more. */
    if (err == 0 || errno == EEXIST || errno != ENOENT)
        err = errno;
failed:
    npyio__os_fail("linkat", err);
    errno = err;
    return -1;
#else
    (void)faults;
    (void)fd;
    (void)at;
    (void)name;
    npyio__os_fail("linkat", ENOSYS);
    errno = ENOSYS;
    return -1;
#endif
}

/* ---- sizes, space and locks ---------------------------------------------------- */

int npyio__fd_truncate(const npyio__faults *faults, int fd, int64_t size)
{
    int r;

    if ((int64_t)(off_t)size != size)
        return npyio__os_fail("ftruncate", EOVERFLOW);
    do
        r = npyio__faulted(faults, "ftruncate", NULL)
                ? -1
                : ftruncate(fd, (off_t)size);
    while (r != 0 && errno == EINTR);
    return r == 0 ? 0 : npyio__os_fail("ftruncate", errno);
}

#if NPYIO_HAVE_FALLOCATE
static int reserve_blocks(const npyio__faults *faults, int fd, int64_t size)
{
    int err;

    /* posix_fallocate returns the error rather than setting errno. */
    do
        err = npyio__faulted(faults, "posix_fallocate", NULL)
                  ? errno
                  : posix_fallocate(fd, 0, (off_t)size);
    while (err == EINTR);
    return err == 0 ? 0 : npyio__os_fail("posix_fallocate", err);
}
#else
/*
 * Without posix_fallocate (macOS): zeros written from the file's end up to
 * size, which allocates the blocks as surely (a full disk fails this write,
 * not a later store through a mapping), at the cost of writing them. The
 * file is never shortened, as posix_fallocate never shortens it.
 */
static int reserve_blocks(const npyio__faults *faults, int fd, int64_t size)
{
    static const unsigned char zeros[65536];
    int64_t at;

    if (npyio__fd_size(fd, &at) != 0)
        return -1;
    while (at < size) {
        size_t step = size - at < (int64_t)sizeof zeros
                          ? (size_t)(size - at)
                          : sizeof zeros;

        if (npyio__fd_pwrite_all(faults, fd, zeros, step, at) != 0)
            return -1;
        at += (int64_t)step;
    }
    return 0;
}
#endif

int npyio__fd_reserve(const npyio__faults *faults, int fd, int64_t size)
{
    if ((int64_t)(off_t)size != size)
        return npyio__os_fail("reserving disk blocks", EOVERFLOW);
    return size == 0 ? 0 : reserve_blocks(faults, fd, size);
}

/* What holds a conflicting lock, for the message. */
static const char *holder(int fd, bool exclusive)
{
#if NPYIO_HAVE_OFD_LOCKS
    struct flock l;

    memset(&l, 0, sizeof l);
    l.l_type = exclusive ? F_WRLCK : F_RDLCK;
    l.l_whence = SEEK_SET;
    if (fcntl(fd, F_OFD_GETLK, &l) == 0 && l.l_type == F_RDLCK)
        return "writers of rows in place hold a shared lock on it";
    if (l.l_type == F_WRLCK)
        return "an appender holds an exclusive lock on it";
#else
    /* flock() cannot be asked. The exclusive lock was refused: a shared
     * one taken at once (and let go again) tells shared holders. The fd
     * holds no lock either way (flock drops the old one of a conversion
     * that fails). */
    if (exclusive && flock(fd, LOCK_SH | LOCK_NB) == 0) {
        (void)flock(fd, LOCK_UN);
        return "writers of rows in place hold a shared lock on it";
    }
    if (exclusive)
        return "an appender holds an exclusive lock on it";
#endif
    return exclusive ? "another writer holds a lock on it"
                     : "an appender holds an exclusive lock on it";
}

int npyio__fd_lock(int fd, bool exclusive, bool wait, bool *busy)
{
    int r, err;

    *busy = false;
#if NPYIO_HAVE_OFD_LOCKS
    {
        struct flock l;

        memset(&l, 0, sizeof l);
        l.l_type = exclusive ? F_WRLCK : F_RDLCK;
        l.l_whence = SEEK_SET; /* l_start 0, l_len 0: the whole file */
        do
            r = fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &l);
        while (r != 0 && errno == EINTR);
    }
#else
    do
        r = flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | (wait ? 0 : LOCK_NB));
    while (r != 0 && errno == EINTR);
#endif
    if (r == 0)
        return 0;
    err = errno;
    if (err == EAGAIN || err == EACCES || err == EWOULDBLOCK) {
        *busy = true;
        npyio__fail(NPYIO_E_LOCKED, "the file is locked: %s",
                    holder(fd, exclusive));
        return -1;
    }
    return npyio__os_fail("lock", err);
}

bool npyio__fd_is_path(int fd, const char *path)
{
    struct stat by_fd, by_path;

    return fstat(fd, &by_fd) == 0 && stat(path, &by_path) == 0 &&
           by_fd.st_dev == by_path.st_dev && by_fd.st_ino == by_path.st_ino;
}

/* ---- positional I/O ----------------------------------------------------------- */

int npyio__fd_pwrite_all(const npyio__faults *faults, int fd, const void *buf,
                         size_t len, int64_t offset)
{
    const unsigned char *p = buf;
    pipe_guard guard;
    int err = 0;

    guard_begin(&guard);
    while (len > 0) {
        size_t step = len > (size_t)0x40000000 ? (size_t)0x40000000 : len;
        ssize_t n = npyio__faulted(faults, "pwrite", &step)
                        ? -1
                        : pwrite(fd, p, step, (off_t)offset);

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

int npyio__fd_pread_all(const npyio__faults *faults, int fd, void *buf,
                        size_t len, int64_t offset, size_t *got)
{
    unsigned char *p = buf;
    size_t done = 0;

    while (done < len) {
        size_t step = len - done > (size_t)0x40000000 ? (size_t)0x40000000
                                                     : len - done;
        ssize_t n = npyio__faulted(faults, "pread", &step)
                        ? -1
                        : pread(fd, p + done, step,
                                (off_t)(offset + (int64_t)done));

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int err = errno;

            npyio__os_fail("pread", err);
            errno = err; /* callers tell a pipe (ESPIPE) from a failure */
            return -1;
        }
        if (n == 0)
            break;
        done += (size_t)n;
    }
    *got = done;
    return 0;
}

#if NPYIO_HAVE_FDATASYNC
#define DATASYNC fdatasync
#else
#define DATASYNC fsync
#endif

int npyio__fd_datasync(const npyio__faults *faults, int fd)
{
    int r;

    do
        r = npyio__faulted(faults, "fdatasync", NULL) ? -1 : DATASYNC(fd);
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

/* ---- names in the file system ------------------------------------------------- */

bool npyio__is_separator(char c)
{
    return c == '/';
}

bool npyio__is_absolute(const char *path)
{
    return path[0] == '/';
}

static void info_of(const struct stat *s, npyio__file_info *info)
{
    info->kind = S_ISREG(s->st_mode)   ? NPYIO__FILE_REGULAR
                 : S_ISDIR(s->st_mode) ? NPYIO__FILE_DIRECTORY
                 : S_ISLNK(s->st_mode) ? NPYIO__FILE_LINK
                                       : NPYIO__FILE_OTHER;
    info->device = (uint64_t)s->st_dev;
    info->inode = (uint64_t)s->st_ino;
    info->uid = (unsigned long)s->st_uid;
    info->gid = (unsigned long)s->st_gid;
    info->mode = (unsigned)(s->st_mode & 07777);
    info->sticky_shared = (s->st_mode & S_ISVTX) && (s->st_mode & S_IWOTH);
}

int npyio__path_info(int at, const char *path, bool follow,
                     npyio__file_info *info)
{
    struct stat s;

    if (fstatat(at_of(at), path, &s, follow ? 0 : AT_SYMLINK_NOFOLLOW) != 0)
        return -1;
    info_of(&s, info);
    return 0;
}

int npyio__fd_info(int fd, npyio__file_info *info)
{
    struct stat s;

    if (fstat(fd, &s) != 0)
        return -1;
    info_of(&s, info);
    return 0;
}

unsigned long npyio__user_id(void)
{
    return (unsigned long)geteuid();
}

int npyio__read_link(const char *path, char *buf, size_t cap, size_t *len)
{
    ssize_t n = readlink(path, buf, cap - 1);

    if (n < 0)
        return npyio__os_fail(path, errno);
    buf[n] = '\0';
    *len = (size_t)n;
    return 0;
}

int npyio__path_remove(int at, const char *path)
{
    return unlinkat(at_of(at), path, 0);
}

int npyio__path_rename(const npyio__faults *faults, int at, const char *from,
                       const char *to)
{
    if (npyio__faulted(faults, "rename", NULL) ||
        renameat(at_of(at), from, at_of(at), to) != 0)
        return npyio__os_fail("rename", errno);
    return 0;
}

int npyio__path_link(const npyio__faults *faults, int at, const char *from,
                     const char *to)
{
    if (npyio__faulted(faults, "linkat", NULL) ||
        linkat(at_of(at), from, at_of(at), to, 0) != 0) {
        int err = errno;

        npyio__os_fail("linkat", err);
        errno = err;
        return -1;
    }
    return 0;
}

int npyio__fd_chown(int fd, unsigned long uid, unsigned long gid)
{
    return fchown(fd, (uid_t)uid, (gid_t)gid);
}

int npyio__fd_chmod(int fd, unsigned mode)
{
    return fchmod(fd, (mode_t)mode);
}

int npyio__fd_duplicate(int fd)
{
    return fcntl(fd, F_DUPFD_CLOEXEC, 0);
}

void npyio__fd_close_quietly(int fd)
{
    (void)close(fd);
}

unsigned long npyio__process_id(void)
{
    return (unsigned long)getpid();
}

unsigned long npyio__clock_nanoseconds(void)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (unsigned long)now.tv_nsec;
}

bool npyio__process_gone(long pid)
{
    return pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

void npyio__dir_remove_owned(int at, const char *dir,
                             bool (*pick)(const char *name, void *ctx),
                             void *ctx)
{
    struct dirent *e;
    struct stat info;
    int fd = openat(at_of(at), dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

    if (d == NULL) {
        if (fd >= 0)
            close(fd);
        return;
    }
    while ((e = readdir(d)) != NULL)
        if (pick(e->d_name, ctx) &&
            fstatat(dirfd(d), e->d_name, &info, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISREG(info.st_mode) && info.st_uid == geteuid())
            (void)unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
}

/* ---- folders below a base, no link followed ------------------------------------- */

#if NPYIO_HAVE_BENEATH
#define BENEATH_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW)

/* Folder `part` of folder fd, made when missing; -1 with errno. */
static int open_or_make(int fd, const char *part)
{
    int next = npyio__fd_open_at(NULL, fd, part, BENEATH_FLAGS, 0);

    if (next < 0 && errno == ENOENT &&
        (mkdirat(fd, part, 0777) == 0 || errno == EEXIST))
        next = npyio__fd_open_at(NULL, fd, part, BENEATH_FLAGS, 0);
    return next;
}

/* Why folder `part` of fd could not be opened (err): a link or a file is
 * named as such (openat() says ELOOP, ENOTDIR or, on some BSDs, EMLINK). */
static npyio_status beneath_fail(int fd, const char *part, int err)
{
    struct stat s;
    bool there = fstatat(fd, part, &s, AT_SYMLINK_NOFOLLOW) == 0;

    if (there && S_ISLNK(s.st_mode))
        return npyio__fail(NPYIO_E_IO, "folder '%s' is a symbolic link, "
                           "which is not followed", part);
    if (there && !S_ISDIR(s.st_mode))
        return npyio__fail(NPYIO_E_IO, "folder '%s' is not a folder", part);
    npyio__os_fail(part, err);
    return npyio__status_of_errno(err) == NPYIO_E_NOMEM ? NPYIO_E_NOMEM
                                                        : NPYIO_E_IO;
}

npyio_status npyio__dir_open_beneath(const char *base, const char *path,
                                     int *dir, const char **leaf)
{
    char part[256]; /* a component: NAME_MAX bytes at most */
    const char *p = path, *slash;
    int fd = npyio__fd_open(NULL, base, O_RDONLY | O_DIRECTORY, 0);

    if (fd < 0) {
        int err = errno;

        npyio__os_fail("the base folder", err);
        return npyio__status_of_errno(err);
    }
    while ((slash = strchr(p, '/')) != NULL) {
        size_t len = (size_t)(slash - p);
        int next = -1, err = ENAMETOOLONG;

        if (len < sizeof part) {
            memcpy(part, p, len);
            part[len] = '\0';
            next = open_or_make(fd, part);
            err = errno;
        }
        if (next < 0) {
            npyio_status st = len < sizeof part ? beneath_fail(fd, part, err)
                              : (npyio__os_fail("a folder's name", err),
                                 NPYIO_E_IO);

            close(fd);
            return st;
        }
        close(fd);
        fd = next;
        p = slash + 1;
    }
    *dir = fd;
    *leaf = p;
    return NPYIO_OK;
}
#else
npyio_status npyio__dir_open_beneath(const char *base, const char *path,
                                     int *dir, const char **leaf)
{
    (void)base, (void)path, (void)dir, (void)leaf;
    return npyio__fail(NPYIO_E_UNSUPPORTED, "opening folders without "
                       "following symbolic links needs openat() and "
                       "O_NOFOLLOW, which this system lacks");
}
#endif

/* ---- memory maps ----------------------------------------------------------------- */

size_t npyio__page_size(void)
{
    long n = sysconf(_SC_PAGESIZE);

    return n > 0 ? (size_t)n : 4096;
}

npyio_status npyio__map_fd(const npyio__faults *faults, int fd, int64_t offset,
                           size_t len, bool writable, void **base)
{
    void *p = npyio__faulted(faults, "mmap", NULL)
                  ? MAP_FAILED
                  : mmap(NULL, len,
                         writable ? PROT_READ | PROT_WRITE : PROT_READ,
                         MAP_SHARED, fd, (off_t)offset);

    *base = NULL;
    if (p == MAP_FAILED) {
        int err = errno;

        npyio__os_fail("mmap", err);
        return npyio__status_of_errno(err);
    }
    *base = p;
    return NPYIO_OK;
}

npyio_status npyio__unmap(void *base, size_t len, bool sync)
{
    npyio_status st = NPYIO_OK;

    if (sync && msync(base, len, MS_SYNC) != 0) {
        npyio__os_fail("msync", errno);
        st = NPYIO_E_IO;
    }
    munmap(base, len);
    return st;
}

/* ---- copying a file ------------------------------------------------------------ */

#if NPYIO_HAVE_KERNEL_COPY
/*
 * Where the next data of fd lies in [at, len): [*start, *end), by
 * SEEK_DATA and SEEK_HOLE, so that a copy skips holes and stays as sparse
 * as its source (a kernel copy would write their zeros: appending to a
 * sparse 4.5 GiB archive wrote 4.5 GiB). *start is len when only a hole
 * is left; where the system cannot tell, the rest is data. Moves fd's
 * offset.
 */
static void next_data(int fd, loff_t at, loff_t len, loff_t *start,
                      loff_t *end)
{
    off_t data = lseek(fd, (off_t)at, SEEK_DATA), hole;

    if (data < 0) {
        *start = errno == ENXIO ? len : at; /* ENXIO: a hole to the end */
        *end = len;
        return;
    }
    hole = lseek(fd, data, SEEK_HOLE);
    *start = data < len ? data : len;
    *end = hole > data && hole < len ? hole : len;
}

/* Copy [0, len) of from into the empty file `to` in the kernel, its data
 * only (holes stay holes). 0; NPYIO__COPY_BUFFERED if no byte could be
 * copied between these files; or -1 with the message set. */
static int kernel_copy(const npyio__faults *faults, int to, int from,
                       loff_t len)
{
    loff_t in = 0, end = 0;
    bool copied = false;

    while (in < len) {
        loff_t out;
        ssize_t n;

        if (in == end)
            next_data(from, in, len, &in, &end);
        if (in == len)
            break;
        out = in;
        n = npyio__faulted(faults, "copy_file_range", NULL)
                ? -1
                : copy_file_range(from, &in, to, &out, (size_t)(end - in), 0);
        if (n > 0) {
            copied = true;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && !copied && (errno == EXDEV || errno == EINVAL ||
                                 errno == ENOSYS || errno == EOPNOTSUPP ||
                                 errno == EBADF))
            return NPYIO__COPY_BUFFERED; /* not between these files */
        return npyio__os_fail(n == 0 ? "copying a file: it got shorter"
                                     : "copy_file_range",
                              n < 0 ? errno : EIO);
    }
    /* A hole at the end is the file's length still to set. */
    return npyio__fd_truncate(faults, to, (int64_t)len);
}
#endif

int npyio__fd_copy_file(const npyio__faults *faults, int to, int from,
                        int64_t len, const char **how)
{
#if NPYIO_HAVE_KERNEL_COPY
    off_t kept = lseek(from, 0, SEEK_CUR); /* next_data moves it */
    int64_t at;
    int rc;

    *how = "clone";
    if (npyio__faulted(faults, "copy", NULL))
        return npyio__os_fail("copying a file", errno);
    if (ioctl(to, FICLONE, from) == 0)
        return npyio__fd_seek(faults, to, len, NPYIO_SEEK_SET, &at);
    *how = "kernel copy";
    rc = kernel_copy(faults, to, from, (loff_t)len);
    if (kept >= 0)
        (void)lseek(from, kept, SEEK_SET);
    if (rc == 0)
        return npyio__fd_seek(faults, to, len, NPYIO_SEEK_SET, &at);
    if (rc != NPYIO__COPY_BUFFERED)
        return rc;
#else
    (void)faults;
    (void)to;
    (void)from;
    (void)len;
#endif
    *how = "buffered copy";
    return NPYIO__COPY_BUFFERED;
}

npyio__platform_caps npyio__platform_capabilities(void)
{
    npyio__platform_caps caps;

    caps.portable = NPYIO_LINUX_CALLS == 0;
    caps.unnamed_files = NPYIO_HAVE_UNNAMED_FILES;
    caps.ofd_locks = NPYIO_HAVE_OFD_LOCKS;
    caps.kernel_copy = NPYIO_HAVE_KERNEL_COPY;
    caps.fallocate = NPYIO_HAVE_FALLOCATE;
    return caps;
}
