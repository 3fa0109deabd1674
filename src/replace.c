/*
 * replace.c - the atomic-replacement policy (see replace.h): where the
 * temporary goes and what it is called, which symbolic links are followed,
 * what a replaced file keeps, and which stale temporaries are removed.
 * Plain POSIX; what only some systems have (unnamed temporaries) comes
 * from platform.c.
 */
#define _XOPEN_SOURCE 700 /* S_ISVTX */

#include "replace.h"
#include "internal.h"
#include "platform.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

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

/* Append the digits of v in base 10 or 16 at p; returns the end. (By
 * hand: snprintf cost a third of a small file's save.) */
static char *put_number(char *p, unsigned long v, unsigned base)
{
    char digits[24];
    int n = 0;

    do {
        digits[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v != 0);
    while (n > 0)
        *p++ = digits[--n];
    return p;
}

static npyio_status temp_name(const npyio__mem *mem, const char *target,
                              unsigned attempt, char **out)
{
    const char *slash = strrchr(target, '/');
    const char *base = slash ? slash + 1 : target;
    size_t dir_len = slash ? (size_t)(slash - target) + 1 : 0;
    size_t base_len = strlen(base);
    struct timespec now;
    char suffix[80], *p = suffix;
    npyio_status st;

    clock_gettime(CLOCK_MONOTONIC, &now);
    *p++ = '.';
    p = put_number(p, (unsigned long)getpid(), 10);
    *p++ = '-';
    p = put_number(p, attempt, 10);
    *p++ = '-';
    p = put_number(p, (unsigned long)now.tv_nsec, 16);
    memcpy(p, TEMP_SUFFIX, sizeof TEMP_SUFFIX); /* with its NUL */
    p += sizeof TEMP_SUFFIX - 1;
    st = npyio__alloc(mem, dir_len + 1 + base_len + (size_t)(p - suffix) + 1,
                      "file name", (void **)out);
    if (st == NPYIO_OK) {
        char *o = *out;

        memcpy(o, target, dir_len);
        o[dir_len] = '.';
        memcpy(o + dir_len + 1, base, base_len);
        memcpy(o + dir_len + 1 + base_len, suffix, (size_t)(p - suffix) + 1);
    }
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
 * Listing a directory costs time in proportion to its entries (about
 * 0.1 us each here: 2,000 entries made a small file's save 7 times
 * slower). Unnamed temporaries (O_TMPFILE) leave nothing behind unless a
 * process dies in the microseconds between naming one and renaming it, so
 * writes through them look for strays only in small directories: a
 * listing of at most 4 KiB, one block on ext4 (some hundred entries; on
 * tmpfs about 200), which costs a save at most about 20 us. Writes
 * through named temporaries, which a killed process does leave behind,
 * always look.
 */
#define SMALL_DIR_BYTES ((off_t)4 << 10)

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
 * An unnamed file in the directory where the system has them (Linux's
 * O_TMPFILE), which a crash cannot leave behind: it gets a name only just
 * before the rename. Elsewhere, a named temporary.
 */
static bool create_unnamed(npyio__atomic *a)
{
    a->fd = npyio__fd_open_unnamed(a->dir);
    a->unnamed = a->fd >= 0;
    return a->unnamed;
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
    a->fresh = st == NPYIO_OK && !exists;
    /* Otherwise stat() the path as given, for devices: /dev/stdout is a
     * link to a link the kernel makes up (/proc/self/fd/1 -> "pipe:[...]"),
     * which no lstat of ours resolves. (A missing name reached without
     * links is missing for stat() too.) */
    if (st == NPYIO_OK && !regular &&
        (exists || strcmp(a->target, path) != 0) && stat(path, &info) == 0 &&
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

/* The directory, opened before the file is renamed into it, so that the
 * only failure left after the rename is the sync itself. */
static int open_dir(const char *dir)
{
    int fd = npyio__fd_open(dir, O_RDONLY, 0);

    if (fd < 0)
        npyio__os_fail(dir, errno);
    return fd;
}

static int sync_dir(int dir_fd)
{
    int r = npyio__fd_sync(dir_fd);

    npyio__fd_close(dir_fd); /* read-only: nothing to lose */
    return r;
}

/*
 * Give an unnamed temporary its name. A file that did not exist at open
 * is linked as the destination itself: nothing to replace, so nothing to
 * rename and no moment at which a crash leaves a temporary behind. Else
 * (or if the name was taken since) a temporary's name, just before the
 * rename; a crash in between leaves that one, which the next writer to
 * the directory removes. Sets *placed when the file is in place already.
 */
static npyio_status name_unnamed(npyio__atomic *a, const npyio__mem *mem,
                                 bool *placed)
{
    unsigned attempt;
    npyio_status st;

    *placed = false;
    if (a->fresh) {
        if (npyio__fd_link_unnamed(a->fd, a->target) == 0) {
            *placed = true;
            return NPYIO_OK;
        }
        if (errno != EEXIST)
            return NPYIO_E_IO;
    }
    for (attempt = 0; attempt < 100; attempt++) {
        st = temp_name(mem, a->target, attempt, &a->temp);
        if (st != NPYIO_OK)
            return st; /* out of memory: said as such */
        if (npyio__fd_link_unnamed(a->fd, a->temp) == 0)
            return NPYIO_OK;
        npyio__free(a->temp);
        a->temp = NULL;
        if (errno != EEXIST)
            return NPYIO_E_IO;
    }
    return NPYIO_E_IO;
}

/*
 * A file placed at a fresh name (name_unnamed) whose close then failed is
 * taken away again, so that a failed write leaves no file where there was
 * none. (Closing cannot come first: an unnamed file is linked through its
 * descriptor.)
 */
static void unplace(npyio__atomic *a, bool placed)
{
    if (placed)
        unlink(a->target);
}

npyio_status npyio__atomic_commit(npyio__atomic *a, const npyio__mem *mem,
                                  bool durable)
{
    const char *what = NULL;
    char cause[256];
    bool replace = a->temp != NULL || a->unnamed, placed = false;
    int fd = a->fd, dir_fd = -1;
    int synced = durable && replace ? npyio__fd_sync(fd) : 0;
    npyio_status named;
    int closed;

    if (synced == 0 && durable && replace &&
        (dir_fd = open_dir(a->dir)) < 0)
        synced = -1; /* before anything is placed: the old file stays */
    named = synced == 0 && a->unnamed ? name_unnamed(a, mem, &placed)
                                      : NPYIO_OK;
    a->fd = -1;
    if (synced != 0 || named != NPYIO_OK)
        snprintf(cause, sizeof cause, "%s", npyio_last_error());
    closed = npyio__fd_close(fd); /* always, even after a failed fsync */
    if (synced != 0 || named != NPYIO_OK || closed != 0) {
        unplace(a, placed);
        what = "writing the file";
    } else if (!replace) {
        /* Written directly: a device or FIFO has nothing to sync. */
    } else if (!placed && (npyio__faulted("rename", NULL) ||
                           rename(a->temp, a->target) != 0)) {
        npyio__os_fail("rename", errno);
        what = "replacing the file";
    } else {
        npyio__free(a->temp);
        a->temp = NULL; /* in place now: nothing to remove */
        if (dir_fd >= 0 && sync_dir(dir_fd) != 0)
            what = "replaced, but syncing its directory failed (the new "
                   "file may not survive a crash)";
        dir_fd = -1;
    }
    if (dir_fd >= 0)
        npyio__fd_close(dir_fd);
    if (what != NULL) {
        if (synced == 0 && named == NPYIO_OK)
            snprintf(cause, sizeof cause, "%s", npyio_last_error());
        /* Out of memory naming the file is said as such, not as I/O. */
        npyio__fail(named == NPYIO_E_NOMEM ? NPYIO_E_NOMEM : NPYIO_E_IO,
                    "%s: %s: %s", a->target, what, cause);
    }
    npyio__atomic_abandon(a);
    return what == NULL ? NPYIO_OK
           : named == NPYIO_E_NOMEM ? NPYIO_E_NOMEM
                                    : NPYIO_E_IO;
}
