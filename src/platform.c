/*
 * platform.c - operating-system specific code (see platform.h). Keep every
 * #ifdef on the host here.
 */
#define _POSIX_C_SOURCE 200809L
#if defined(__linux__)
/* madvise() and MADV_HUGEPAGE, O_TMPFILE, F_OFD_SETLK, linkat() */
#define _GNU_SOURCE
#else
#define _DEFAULT_SOURCE /* flock(), fchown() on the BSDs */
#endif

#include "platform.h"
#include "internal.h"

#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <stdlib.h>
#include <dirent.h>
#include <sys/file.h>
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
void npyio__advise_huge_pages(void *ptr, size_t size)
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
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
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

npyio_status npyio__status_of_errno(int err)
{
    switch (err) {
    case ENOENT:
    case ENOTDIR: /* a file where the path needs a directory */
        return NPYIO_E_NOT_FOUND;
    case ENOMEM:
        return NPYIO_E_NOMEM;
    default:
        return NPYIO_E_IO;
    }
}

npyio_status npyio__open_path(const char *path, int flags, unsigned mode,
                              const char *where, int *fd)
{
    int err;

    *fd = npyio__fd_open(path, flags, mode);
    if (*fd >= 0)
        return NPYIO_OK;
    err = errno;
    npyio__os_fail(path, err);
    return npyio__fail(npyio__status_of_errno(err), "%s: cannot open %s",
                       where, npyio_last_error());
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

int npyio__fd_write_file(int fd, const void *buf, size_t len, size_t *put)
{
    ssize_t n;

    if (len > (size_t)0x40000000)
        len = (size_t)0x40000000;
    do
        n = write(fd, buf, len);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return npyio__os_fail("write", errno);
    *put = (size_t)n;
    return 0;
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
    if (npyio__fd_write(fd, buf, len, put) != 0)
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
 * The kernel's fs.protected_symlinks rule, applied by us whatever the
 * sysctl says, since we follow the final link by hand (and rename() over
 * its target, which the kernel never sees as following it): in a sticky
 * world-writable directory such as /tmp, a link is followed only if the
 * caller or the directory's owner owns it. Otherwise another user could
 * plant `out.npy -> /etc/passwd` and have root's save replace that.
 */
static npyio_status check_link_owner(const npyio__mem *mem, const char *link,
                                     const struct stat *info)
{
    char *dir = NULL;
    struct stat d;
    npyio_status st = dir_of(mem, link, &dir);

    if (st != NPYIO_OK)
        return st;
    if (stat(dir, &d) != 0) {
        npyio__os_fail(dir, errno);
        st = NPYIO_E_IO;
    } else if ((d.st_mode & S_ISVTX) && (d.st_mode & S_IWOTH) &&
               info->st_uid != geteuid() && info->st_uid != d.st_uid) {
        st = npyio__fail(NPYIO_E_IO, "%s: refusing to follow this symbolic "
                         "link: it lies in a sticky world-writable directory "
                         "(%s) and belongs to uid %lu, neither the caller "
                         "(uid %lu) nor the directory's owner (uid %lu); the "
                         "kernel's protected_symlinks rule", link, dir,
                         (unsigned long)info->st_uid,
                         (unsigned long)geteuid(), (unsigned long)d.st_uid);
    }
    npyio__free(dir);
    return st;
}

/* The path a link points to: absolute, or relative to the link's own
 * directory. */
static npyio_status link_target(const npyio__mem *mem, const char *current,
                                char **out)
{
    char link[4096], *dir = NULL;
    ssize_t n = readlink(current, link, sizeof link - 1);
    npyio_status st;
    size_t dn;

    if (n < 0) {
        npyio__os_fail(current, errno);
        return NPYIO_E_IO;
    }
    link[n] = '\0';
    if (link[0] == '/')
        return dup_string(mem, link, (size_t)n, out);
    st = dir_of(mem, current, &dir);
    if (st != NPYIO_OK)
        return st;
    dn = strlen(dir);
    st = npyio__alloc(mem, dn + 1 + (size_t)n + 1, "file name", (void **)out);
    if (st == NPYIO_OK) {
        memcpy(*out, dir, dn);
        (*out)[dn] = '/';
        memcpy(*out + dn + 1, link, (size_t)n + 1);
    }
    npyio__free(dir);
    return st;
}

/*
 * Follow symbolic links at the end of the path (not in its directories,
 * which rename() goes through anyway), so that replacing a link writes its
 * target as the user meant, rather than replacing the link by a file.
 */
static npyio_status resolve_links(const npyio__mem *mem, const char *path,
                                  char **out, struct stat *final,
                                  bool *exists)
{
    char *current = NULL;
    npyio_status st = dup_string(mem, path, strlen(path), &current);
    int hops;

    for (hops = 0; st == NPYIO_OK && hops < 40; hops++) {
        struct stat info;
        char *next = NULL;

        *exists = lstat(current, &info) == 0;
        if (!*exists || !S_ISLNK(info.st_mode)) {
            /* What the final name is, for the caller: one lstat does. */
            *final = info;
            *out = current;
            return NPYIO_OK;
        }
        st = check_link_owner(mem, current, &info);
        if (st == NPYIO_OK)
            st = link_target(mem, current, &next);
        npyio__free(current);
        current = next;
    }
    if (st == NPYIO_OK)
        st = npyio__fail(NPYIO_E_IO, "%s: too many levels of symbolic links",
                         path);
    npyio__free(current);
    return st;
}

/*
 * Temporaries are named ".<base>.<pid>-<attempt>-<clock>.tmp": unique among
 * writers, and recognisable, with the process that made them, so that a
 * later writer can remove those whose process died (SIGKILL, power loss).
 */
#define TEMP_SUFFIX ".tmp"

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
    snprintf(suffix, sizeof suffix, ".%ld-%u-%lx" TEMP_SUFFIX,
             (long)getpid(), attempt, (unsigned long)now.tv_nsec);
    n = dir_len + 1 + strlen(base) + strlen(suffix);
    st = npyio__alloc(mem, n + 1, "file name", (void **)out);
    if (st == NPYIO_OK)
        snprintf(*out, n + 1, "%.*s.%s%s", (int)dir_len, target, base,
                 suffix);
    return st;
}

/* Skip decimal (or hex) digits backwards from end; NULL if none. */
static const char *digits_before(const char *start, const char *end, bool hex)
{
    const char *p = end;

    while (p > start && (hex ? isxdigit((unsigned char)p[-1])
                             : isdigit((unsigned char)p[-1])))
        p--;
    return p == end ? NULL : p;
}

/* The pid in a name of our temporaries' form, or 0 if it is not one. */
static long temp_pid(const char *name)
{
    size_t len = strlen(name), sl = strlen(TEMP_SUFFIX);
    const char *end, *p;

    if (name[0] != '.' || len <= sl ||
        strcmp(name + len - sl, TEMP_SUFFIX) != 0)
        return 0;
    end = name + len - sl;
    if ((p = digits_before(name, end, true)) == NULL || *--p != '-' ||
        (p = digits_before(name, p, false)) == NULL || *--p != '-')
        return 0;
    end = p;
    if ((p = digits_before(name, end, false)) == NULL || p - name < 3 ||
        p[-1] != '.' || end - p > 9)
        return 0;
    return strtol(p, NULL, 10);
}

/*
 * Remove our temporaries in dir whose process is dead: files of ours
 * (owned by the caller, regular) named as temp_name() names them, whose
 * pid no longer exists on this host. A process killed while writing
 * through a named temporary leaves one; nothing else would remove it.
 * Best effort: failures change nothing. (A directory shared over NFS by
 * several hosts: a pid is only checked on this host.)
 */
static void remove_stale_temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        long pid = temp_pid(e->d_name);
        struct stat info;

        if (pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 ||
            errno != ESRCH)
            continue;
        if (fstatat(dirfd(d), e->d_name, &info, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISREG(info.st_mode) && info.st_uid == geteuid())
            (void)unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}

/*
 * Listing a directory costs time in proportion to its entries (about 1 ms
 * for 10,000 on ext4), more than a small file's whole save. Unnamed
 * temporaries (O_TMPFILE) leave nothing behind unless a process dies in
 * the microseconds between naming one and renaming it, so writes through
 * them look for strays only in small directories (a listing of at most
 * 64 KiB: some thousand entries); writes through named temporaries, which
 * a killed process does leave behind, always look.
 */
#define SMALL_DIR_BYTES ((off_t)64 << 10)

static bool small_dir(const char *dir)
{
    struct stat info;

    return stat(dir, &info) == 0 && info.st_size <= SMALL_DIR_BYTES;
}

void npyio__atomic_abandon(npyio__atomic *a)
{
    if (a->fd >= 0)
        npyio__fd_close(a->fd); /* an unnamed temporary vanishes with it */
    if (a->temp != NULL)
        unlink(a->temp);
    npyio__free(a->temp);
    npyio__free(a->target);
    npyio__free(a->dir);
    a->fd = -1;
    a->unnamed = false;
    a->temp = a->target = a->dir = NULL;
}

/*
 * Linux: an unnamed file in the directory (O_TMPFILE), which a crash
 * cannot leave behind; it gets a name only just before the rename. Where
 * the kernel or file system lacks O_TMPFILE, a named temporary.
 */
static bool create_unnamed(npyio__atomic *a)
{
#if defined(O_TMPFILE)
    a->fd = npyio__fd_open(a->dir, O_TMPFILE | O_RDWR, 0666);
    a->unnamed = a->fd >= 0;
    return a->unnamed;
#else
    (void)a;
    return false;
#endif
}

static npyio_status create_temp(npyio__atomic *a, const npyio__mem *mem,
                                const char *path)
{
    unsigned attempt;
    int err = 0;
    npyio_status st;

    if (create_unnamed(a))
        return NPYIO_OK;
    for (attempt = 0; attempt < 100; attempt++) {
        st = temp_name(mem, a->target, attempt, &a->temp);
        if (st != NPYIO_OK)
            return st;
        /* 0666 and the umask: the mode a plain open(O_CREAT) gives. */
        a->fd = npyio__fd_open(a->temp, O_RDWR | O_CREAT | O_EXCL, 0666);
        if (a->fd >= 0)
            return NPYIO_OK;
        err = errno;
        npyio__free(a->temp);
        a->temp = NULL;
        if (err != EEXIST)
            break;
    }
    npyio__os_fail(a->dir, err);
    return npyio__fail(npyio__status_of_errno(err), "%s: cannot create a "
                       "file in its directory: %s", path, npyio_last_error());
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

/*
 * Replacing a file keeps what writing it in place would keep: its owner
 * and group where the caller may set them (root may; others may set a
 * group they belong to), then its mode (chown clears set-id bits).
 */
static npyio_status keep_owner_and_mode(npyio__atomic *a,
                                        const struct stat *old_info)
{
    struct stat mine;
    const struct stat *old = old_info;
    bool known, same_owner;

    if (old == NULL)
        return NPYIO_OK; /* a new file */
    known = fstat(a->fd, &mine) == 0;
    same_owner = known && mine.st_uid == old->st_uid &&
                 mine.st_gid == old->st_gid;
    /* The usual case, a file of ours with the mode a new one gets:
     * nothing to change. */
    if (same_owner && (mine.st_mode & 07777) == (old->st_mode & 07777))
        return NPYIO_OK;
    if (known && !same_owner &&
        fchown(a->fd, old->st_uid, old->st_gid) != 0 &&
        (errno != EPERM || (mine.st_gid != old->st_gid &&
                            fchown(a->fd, (uid_t)-1, old->st_gid) != 0 &&
                            errno != EPERM))) {
        npyio__os_fail("fchown", errno);
        return NPYIO_E_IO;
    }
    if (fchmod(a->fd, old->st_mode & 07777) != 0) {
        npyio__os_fail("fchmod", errno);
        return NPYIO_E_IO;
    }
    return NPYIO_OK;
}

npyio_status npyio__atomic_open(const char *path, const npyio__mem *mem,
                                npyio__atomic *a)
{
    struct stat info, final = {0};
    bool exists = false, regular;
    npyio_status st;

    a->fd = -1;
    a->unnamed = false;
    a->temp = a->target = a->dir = NULL;
    /* Links are resolved (and the protected_symlinks rule applied) before
     * anything is opened, the device case included. The final name's
     * lstat says the rest for a regular file (the usual case: one call). */
    st = resolve_links(mem, path, &a->target, &final, &exists);
    regular = st == NPYIO_OK && exists && S_ISREG(final.st_mode);
    /* Otherwise stat() the path as given, for devices: /dev/stdout is a
     * link to a link the kernel makes up (/proc/self/fd/1 -> "pipe:[...]"),
     * which no lstat of ours resolves. */
    if (st == NPYIO_OK && !regular && stat(path, &info) == 0 &&
        !S_ISREG(info.st_mode) && !S_ISDIR(info.st_mode)) {
        npyio__free(a->target);
        a->target = NULL;
        return open_directly(path, mem, a);
    }
    if (st == NPYIO_OK)
        st = dir_of(mem, a->target, &a->dir);
    if (st == NPYIO_OK && exists && S_ISDIR(final.st_mode))
        st = npyio__fail(NPYIO_E_IO, "%s: is a directory", path);
    if (st == NPYIO_OK)
        st = create_temp(a, mem, path);
    if (st == NPYIO_OK && (!a->unnamed || small_dir(a->dir)))
        remove_stale_temporaries(a->dir);
    if (st == NPYIO_OK)
        st = keep_owner_and_mode(a, regular ? &final : NULL);
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

/* Give an unnamed temporary a name in its directory, just before the
 * rename (a crash in between leaves a named temporary, which the next
 * writer to the directory removes). */
static int name_unnamed(npyio__atomic *a, const npyio__mem *mem)
{
#if defined(O_TMPFILE)
    char proc[64];
    unsigned attempt;

    snprintf(proc, sizeof proc, "/proc/self/fd/%d", a->fd);
    for (attempt = 0; attempt < 100; attempt++) {
        if (temp_name(mem, a->target, attempt, &a->temp) != NPYIO_OK)
            return -1;
        if (linkat(AT_FDCWD, proc, AT_FDCWD, a->temp, AT_SYMLINK_FOLLOW) ==
                0 ||
            (errno == ENOENT &&
             linkat(a->fd, "", AT_FDCWD, a->temp, AT_EMPTY_PATH) == 0))
            return 0;
        npyio__os_fail("linkat", errno);
        npyio__free(a->temp);
        a->temp = NULL;
        if (errno != EEXIST)
            return -1;
    }
    return -1;
#else
    (void)a;
    (void)mem;
    return npyio__os_fail("linkat", ENOSYS);
#endif
}

npyio_status npyio__atomic_commit(npyio__atomic *a, const npyio__mem *mem,
                                  bool durable)
{
    const char *what = NULL;
    char cause[256];
    bool replace = a->temp != NULL || a->unnamed;
    int fd = a->fd;
    int synced = durable && replace ? npyio__fd_sync(fd) : 0;
    int named = synced == 0 && a->unnamed ? name_unnamed(a, mem) : 0;
    int closed;

    a->fd = -1;
    if (synced != 0 || named != 0)
        snprintf(cause, sizeof cause, "%s", npyio_last_error());
    closed = npyio__fd_close(fd); /* always, even after a failed fsync */
    if (synced != 0 || named != 0 || closed != 0) {
        what = "writing the file";
    } else if (!replace) {
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
        if (synced == 0 && named == 0)
            snprintf(cause, sizeof cause, "%s", npyio_last_error());
        npyio__fail(NPYIO_E_IO, "%s: %s: %s", a->target, what, cause);
    }
    npyio__atomic_abandon(a);
    return what == NULL ? NPYIO_OK : NPYIO_E_IO;
}

/* ---- sizes, space and locks ---------------------------------------------------- */

int npyio__fd_truncate(int fd, int64_t size)
{
    int r;

    if ((int64_t)(off_t)size != size)
        return npyio__os_fail("ftruncate", EOVERFLOW);
    do
        r = ftruncate(fd, (off_t)size);
    while (r != 0 && errno == EINTR);
    return r == 0 ? 0 : npyio__os_fail("ftruncate", errno);
}

int npyio__fd_reserve(int fd, int64_t size)
{
    int err;

    if ((int64_t)(off_t)size != size)
        return npyio__os_fail("posix_fallocate", EOVERFLOW);
    if (size == 0)
        return 0;
    /* posix_fallocate returns the error rather than setting errno. */
    do
        err = posix_fallocate(fd, 0, (off_t)size);
    while (err == EINTR);
    return err == 0 ? 0 : npyio__os_fail("posix_fallocate", err);
}

/* What holds a conflicting lock, for the message. */
static const char *holder(int fd, bool exclusive)
{
#if defined(F_OFD_GETLK)
    struct flock l;

    memset(&l, 0, sizeof l);
    l.l_type = exclusive ? F_WRLCK : F_RDLCK;
    l.l_whence = SEEK_SET;
    if (fcntl(fd, F_OFD_GETLK, &l) == 0 && l.l_type == F_RDLCK)
        return "writers of rows in place hold a shared lock on it";
    if (l.l_type == F_WRLCK)
        return "an appender holds an exclusive lock on it";
#else
    (void)fd;
#endif
    return exclusive ? "another writer holds a lock on it"
                     : "an appender holds an exclusive lock on it";
}

int npyio__fd_lock(int fd, bool exclusive, bool wait, bool *busy)
{
    int r, err;

    *busy = false;
#if defined(F_OFD_SETLK)
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

/* ---- memory maps ----------------------------------------------------------------- */

size_t npyio__page_size(void)
{
    long n = sysconf(_SC_PAGESIZE);

    return n > 0 ? (size_t)n : 4096;
}

npyio_status npyio__map_fd(int fd, int64_t offset, size_t len, bool writable,
                           void **base)
{
    void *p = mmap(NULL, len, writable ? PROT_READ | PROT_WRITE : PROT_READ,
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
