/*
 * replace.c - the atomic-replacement policy (see replace.h): where the
 * temporary goes and what it is called, which symbolic links are followed,
 * what a replaced file keeps, and which stale temporaries are removed.
 * It calls the operating system only through platform.c (names, file
 * facts, descriptors), which also has what only some systems have
 * (unnamed temporaries).
 */
#define _POSIX_C_SOURCE 200809L /* O_NOFOLLOW */

#include "alloc.h"
#include "error.h"
#include "platform.h"
#include "replace.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What is said of a destination that exists where none may
 * (npyio__atomic_open_under without `replace`). */
#define TAKEN "exists, and is not replaced (NPYIO_WRITE_REPLACE replaces it)"

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

/* The last separator of path's folders (platform.h's), or NULL. */
static const char *last_separator(const char *path)
{
    const char *last = NULL;

    for (; *path != '\0'; path++)
        if (npyio__is_separator(*path))
            last = path;
    return last;
}

/* The directory part of a path ("." for a bare name). */
static npyio_status dir_of(const npyio__mem *mem, const char *path,
                           char **out)
{
    const char *slash = last_separator(path);

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
                                     const npyio__file_info *info)
{
    char *dir = NULL;
    npyio__file_info d;
    npyio_status st = dir_of(mem, link, &dir);

    if (st != NPYIO_OK)
        return st;
    if (npyio__path_info(NPYIO__AT_CWD, dir, true, &d) != 0) {
        npyio__os_fail(dir, errno);
        st = NPYIO_E_IO;
    } else if (d.sticky_shared && info->uid != npyio__user_id() &&
               info->uid != d.uid) {
        st = npyio__fail(NPYIO_E_IO, "%s: refusing to follow this symbolic "
                         "link: it lies in a sticky world-writable directory "
                         "(%s) and belongs to uid %lu, neither the caller "
                         "(uid %lu) nor the directory's owner (uid %lu); the "
                         "kernel's protected_symlinks rule", link, dir,
                         info->uid, npyio__user_id(), d.uid);
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
    size_t n = 0, dn;
    npyio_status st;

    if (npyio__read_link(current, link, sizeof link, &n) != 0)
        return NPYIO_E_IO;
    if (npyio__is_absolute(link))
        return dup_string(mem, link, n, out);
    st = dir_of(mem, current, &dir);
    if (st != NPYIO_OK)
        return st;
    dn = strlen(dir);
    st = npyio__alloc(mem, dn + 1 + n + 1, "file name", (void **)out);
    if (st == NPYIO_OK) {
        memcpy(*out, dir, dn);
        (*out)[dn] = '/';
        memcpy(*out + dn + 1, link, n + 1);
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
                                  char **out, npyio__file_info *final,
                                  bool *exists)
{
    char *current = NULL;
    npyio_status st = dup_string(mem, path, strlen(path), &current);
    int hops;

    for (hops = 0; st == NPYIO_OK && hops < 40; hops++) {
        npyio__file_info info;
        char *next = NULL;

        *exists = npyio__path_info(NPYIO__AT_CWD, current, false, &info) == 0;
        if (!*exists || info.kind != NPYIO__FILE_LINK) {
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
 * Temporaries' names. Each is hidden beside the file it replaces and
 * carries a fixed marker, so that no file of the user's is ever taken for
 * one (".thesis.4000000-1-beef.tmp" is not ours):
 *
 *   ".<base>.npyio-<pid>-<attempt>-<clock>.tmp"  a named temporary, for
 *       the whole of its write (systems or file systems without unnamed
 *       files); unique among writers, and with the process that made it,
 *       so that a later save of the same file removes it once that
 *       process has died.
 *   ".<base>.npyio.tmp"  an unnamed (O_TMPFILE) temporary, for the moment
 *       between linkat() and rename() at commit only; the writer holds a
 *       lock on it meanwhile, so that a later save of the same file, which
 *       meets it when it links its own, can tell a stray of a killed
 *       process (no lock) from a live save.
 *
 * <base> is the destination's name, cut to TEMP_BASE_MAX bytes so that a
 * temporary's name fits wherever the destination's does (NAME_MAX, 255).
 */
#define TEMP_MARKER ".npyio"
#define TEMP_SUFFIX ".tmp"
#define TEMP_BASE_MAX 200
#define NAMED_MARKER TEMP_MARKER "-" /* what a named one's pid follows */

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

/* Split target into its directory (the first dir_len bytes, with the
 * slash) and <base>, the part of its name temporaries' names keep. */
static void temp_stem(const char *target, size_t *dir_len, const char **base,
                      size_t *base_len)
{
    const char *slash = last_separator(target);

    *base = slash ? slash + 1 : target;
    *dir_len = slash ? (size_t)(slash - target) + 1 : 0;
    *base_len = strlen(*base);
    if (*base_len > TEMP_BASE_MAX)
        *base_len = TEMP_BASE_MAX;
}

/* "<dir>/.<base>" + ending, in a fresh block. */
static npyio_status stem_plus(const npyio__mem *mem, const char *target,
                              const char *ending, size_t ending_len,
                              char **out)
{
    size_t dir_len, base_len;
    const char *base;
    npyio_status st;

    temp_stem(target, &dir_len, &base, &base_len);
    st = npyio__alloc(mem, dir_len + 1 + base_len + ending_len + 1,
                      "file name", (void **)out);
    if (st == NPYIO_OK) {
        char *o = *out;

        memcpy(o, target, dir_len);
        o[dir_len] = '.';
        memcpy(o + dir_len + 1, base, base_len);
        memcpy(o + dir_len + 1 + base_len, ending, ending_len);
        o[dir_len + 1 + base_len + ending_len] = '\0';
    }
    return st;
}

/* A named temporary's name (the first form above). */
static npyio_status temp_name(const npyio__mem *mem, const char *target,
                              unsigned attempt, char **out)
{
    char ending[80], *p = ending;

    memcpy(p, NAMED_MARKER, sizeof NAMED_MARKER - 1);
    p += sizeof NAMED_MARKER - 1;
    p = put_number(p, npyio__process_id(), 10);
    *p++ = '-';
    p = put_number(p, attempt, 10);
    *p++ = '-';
    p = put_number(p, npyio__clock_nanoseconds(), 16);
    memcpy(p, TEMP_SUFFIX, sizeof TEMP_SUFFIX - 1);
    p += sizeof TEMP_SUFFIX - 1;
    return stem_plus(mem, target, ending, (size_t)(p - ending), out);
}

/* An unnamed temporary's name at commit (the second form above). */
static npyio_status commit_name(const npyio__mem *mem, const char *target,
                                char **out)
{
    static const char ending[] = TEMP_MARKER TEMP_SUFFIX;

    return stem_plus(mem, target, ending, sizeof ending - 1, out);
}

/* Skip n > 0 decimal (or hex) digits at p; NULL if there are none. */
static const char *skip_digits(const char *p, bool hex)
{
    const char *start = p;

    while (hex ? isxdigit((unsigned char)*p) : isdigit((unsigned char)*p))
        p++;
    return p == start ? NULL : p;
}

/* The pid in `rest`, what follows ".<base>.npyio-" in a named
 * temporary's name ("<pid>-<attempt>-<clock>.tmp"), or 0 if it is not
 * one. */
static long temp_pid(const char *rest)
{
    const char *p = skip_digits(rest, false);

    if (p == NULL || p - rest > 9 || *p != '-' ||
        (p = skip_digits(p + 1, false)) == NULL || *p != '-' ||
        (p = skip_digits(p + 1, true)) == NULL ||
        strcmp(p, TEMP_SUFFIX) != 0)
        return 0;
    return strtol(rest, NULL, 10);
}

/*
 * Remove the named temporaries of this destination whose process is dead:
 * files of ours (owned by the caller, regular) named ".<base>.npyio-<pid>-
 * ...tmp" for this target's <base>, whose pid no longer exists on this
 * host. A process killed while writing through a named temporary leaves
 * one; nothing else would remove it. Other files, the temporaries of
 * other destinations included, are not touched. Best effort: failures
 * change nothing. (A directory shared over NFS by several hosts: a pid is
 * only checked on this host.)
 */
/* The prefix ".<base>.npyio-" of one destination's named temporaries. */
typedef struct stale_prefix {
    const char *text;
    size_t len;
} stale_prefix;

/* A named temporary of this destination whose process has died. */
static bool is_stale(const char *name, void *ctx)
{
    const stale_prefix *prefix = ctx;
    long pid = strncmp(name, prefix->text, prefix->len) == 0
                   ? temp_pid(name + prefix->len)
                   : 0;

    return pid > 0 && (unsigned long)pid != npyio__process_id() &&
           npyio__process_gone(pid);
}

static void remove_stale_temporaries(const npyio__mem *mem,
                                     const npyio__atomic *a)
{
    const char *target = a->target;
    char *text = NULL;
    const char *base;
    size_t dir_len, base_len;
    stale_prefix prefix;

    temp_stem(target, &dir_len, &base, &base_len);
    /* ".<base>.npyio-", without the directory. */
    if (stem_plus(mem, target + dir_len, NAMED_MARKER,
                  sizeof NAMED_MARKER - 1, &text) != NPYIO_OK)
        return;
    prefix.text = text;
    prefix.len = strlen(text);
    npyio__dir_remove_owned(a->at, a->dir, is_stale, &prefix);
    npyio__free(text);
}

void npyio__atomic_abandon(npyio__atomic *a)
{
    if (a->fd >= 0)
        /* an unnamed temporary vanishes with it */
        npyio__fd_close(a->faults, a->fd);
    if (a->temp != NULL)
        (void)npyio__path_remove(a->at, a->temp);
    if (a->at >= 0)
        npyio__fd_close_quietly(a->at); /* a folder: nothing to lose */
    npyio__free(a->temp);
    npyio__free(a->target);
    npyio__free(a->dir);
    npyio__free(a->shown);
    a->fd = -1;
    a->at = NPYIO__AT_CWD;
    a->unnamed = false;
    a->temp = a->target = a->dir = a->shown = NULL;
}

/*
 * An unnamed file in the directory where the system has them (Linux's
 * O_TMPFILE), which a crash cannot leave behind: it gets a name only just
 * before the rename. Elsewhere, a named temporary.
 */
static bool create_unnamed(npyio__atomic *a)
{
    a->fd = npyio__fd_open_unnamed(a->faults, a->at, a->dir);
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
        a->fd = npyio__fd_open_at(a->faults, a->at, a->temp,
                                  O_RDWR | O_CREAT | O_EXCL, 0666);
        if (a->fd >= 0)
            return NPYIO_OK;
        err = errno;
        npyio__free(a->temp);
        a->temp = NULL;
        if (err != EEXIST)
            break;
    }
    /* (below a base, the folder is "." to us: the call is named) */
    npyio__os_fail(a->shown != NULL ? "open" : a->dir, err);
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
    a->fd = npyio__fd_open(a->faults, path, O_WRONLY | O_TRUNC, 0);
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
                                        const npyio__file_info *old)
{
    npyio__file_info mine;
    bool known, same_owner;

    if (old == NULL)
        return NPYIO_OK; /* a new file */
    known = npyio__fd_info(a->fd, &mine) == 0;
    same_owner = known && mine.uid == old->uid && mine.gid == old->gid;
    /* The usual case, a file of ours with the mode a new one gets:
     * nothing to change. */
    if (same_owner && mine.mode == old->mode)
        return NPYIO_OK;
    if (known && !same_owner &&
        npyio__fd_chown(a->fd, old->uid, old->gid) != 0 &&
        (errno != EPERM ||
         (mine.gid != old->gid &&
          npyio__fd_chown(a->fd, (unsigned long)-1, old->gid) != 0 &&
          errno != EPERM))) {
        npyio__os_fail("fchown", errno);
        return NPYIO_E_IO;
    }
    if (npyio__fd_chmod(a->fd, old->mode) != 0) {
        npyio__os_fail("fchmod", errno);
        return NPYIO_E_IO;
    }
    return NPYIO_OK;
}

/* An empty `a`, owning nothing. */
static void start(npyio__atomic *a, const npyio__mem *mem)
{
    a->faults = &mem->faults;
    a->fd = -1;
    a->at = NPYIO__AT_CWD;
    a->unnamed = a->fresh = a->no_replace = a->taken = false;
    a->temp = a->target = a->dir = a->shown = NULL;
}

npyio_status npyio__atomic_open(const char *path, const npyio__mem *mem,
                                npyio__atomic *a)
{
    npyio__file_info info, final = {0};
    bool exists = false, regular;
    npyio_status st;

    start(a, mem);
    /* Links are resolved (and the protected_symlinks rule applied) before
     * anything is opened, the device case included. The final name's
     * lstat says the rest for a regular file (the usual case: one call). */
    st = resolve_links(mem, path, &a->target, &final, &exists);
    regular = st == NPYIO_OK && exists && final.kind == NPYIO__FILE_REGULAR;
    a->fresh = st == NPYIO_OK && !exists;
    /* Otherwise stat() the path as given, for devices: /dev/stdout is a
     * link to a link the kernel makes up (/proc/self/fd/1 -> "pipe:[...]"),
     * which no lstat of ours resolves. (A missing name reached without
     * links is missing for stat() too.) */
    if (st == NPYIO_OK && !regular &&
        (exists || strcmp(a->target, path) != 0) &&
        npyio__path_info(NPYIO__AT_CWD, path, true, &info) == 0 &&
        info.kind != NPYIO__FILE_REGULAR &&
        info.kind != NPYIO__FILE_DIRECTORY) {
        npyio__free(a->target);
        a->target = NULL;
        return open_directly(path, mem, a);
    }
    if (st == NPYIO_OK)
        st = dir_of(mem, a->target, &a->dir);
    if (st == NPYIO_OK && exists && final.kind == NPYIO__FILE_DIRECTORY)
        st = npyio__fail(NPYIO_E_IO, "%s: is a directory", path);
    if (st == NPYIO_OK)
        st = create_temp(a, mem, path);
    /* Only a named temporary's save lists the directory: an unnamed one
     * cannot leave a stray in the middle of its write, and meets the one
     * it can leave (at commit) by its fixed name (name_unnamed). */
    if (st == NPYIO_OK && !a->unnamed)
        remove_stale_temporaries(mem, a);
    if (st == NPYIO_OK)
        st = keep_owner_and_mode(a, regular ? &final : NULL);
    if (st != NPYIO_OK)
        npyio__atomic_abandon(a);
    return st;
}

/* ---- a file below a base folder ----------------------------------------------- */

/* A path below a base is relative and plain: each component a name, none
 * empty, "." or ".." (which could climb out of the base, or name a
 * folder where a file is meant). */
static npyio_status check_below(const char *path)
{
    char shown[128];
    const char *p = path;

    if (npyio__is_absolute(path))
        return npyio__fail(NPYIO_E_INVALID_ARG, "path '%s' is absolute, "
                           "not a path below the base folder",
                           npyio__show(path, strlen(path), shown,
                                       sizeof shown));
    for (; *p != '\0'; p++) /* Windows' other separator, '\\': refused */
        if (npyio__is_separator(*p) && *p != '/')
            return npyio__fail(NPYIO_E_INVALID_ARG, "path '%s' holds a "
                               "backslash, a separator on this system",
                               npyio__show(path, strlen(path), shown,
                                           sizeof shown));
    for (p = path;;) {
        size_t len = strcspn(p, "/");

        if (len == 0 || (len == 1 && p[0] == '.') ||
            (len == 2 && p[0] == '.' && p[1] == '.'))
            return npyio__fail(NPYIO_E_INVALID_ARG, "path '%s' has an "
                               "empty, '.' or '..' component",
                               npyio__show(path, strlen(path), shown,
                                           sizeof shown));
        if (p[len] == '\0')
            return NPYIO_OK;
        p += len + 1;
    }
}

/* "<base>/<path>", the destination as messages name it. */
static npyio_status join(const npyio__mem *mem, const char *base,
                         const char *path, char **out)
{
    size_t b = strlen(base), n = strlen(path);
    npyio_status st = npyio__alloc(mem, b + 1 + n + 1, "file name",
                                   (void **)out);

    if (st == NPYIO_OK) {
        memcpy(*out, base, b);
        (*out)[b] = '/';
        memcpy(*out + b + 1, path, n + 1);
    }
    return st;
}

/* The final name in folder a->at: a directory is never replaced, and
 * nothing at all without `replace` (a->fresh says whether there was
 * anything: a->no_replace holds that again at the commit); *old receives a regular file's facts
 * (its owner and mode are kept), else NULL. */
static npyio_status check_final(npyio__atomic *a, bool replace,
                                npyio__file_info *info,
                                const npyio__file_info **old)
{
    bool exists = npyio__path_info(a->at, a->target, false, info) == 0;

    *old = exists && info->kind == NPYIO__FILE_REGULAR ? info : NULL;
    a->fresh = !exists;
    if (exists && info->kind == NPYIO__FILE_DIRECTORY)
        return npyio__fail(NPYIO_E_IO, "%s: is a directory", a->shown);
    if (exists && !replace)
        return npyio__fail(NPYIO_E_IO, "%s: " TAKEN, a->shown);
    return NPYIO_OK;
}

npyio_status npyio__atomic_open_under(const char *base, const char *path,
                                      bool replace, const npyio__mem *mem,
                                      npyio__atomic *a)
{
    npyio__file_info info;
    const npyio__file_info *old = NULL;
    const char *leaf = NULL;
    npyio_status st;

    start(a, mem);
    a->no_replace = !replace;
    st = check_below(path);
    if (st == NPYIO_OK)
        st = join(mem, base, path, &a->shown);
    if (st == NPYIO_OK &&
        (st = npyio__dir_open_beneath(base, path, &a->at, &leaf)) != NPYIO_OK)
        st = npyio__fail(st, "%s: %s", a->shown, npyio_last_error());
    if (st == NPYIO_OK)
        st = dup_string(mem, leaf, strlen(leaf), &a->target);
    if (st == NPYIO_OK)
        st = dup_string(mem, ".", 1, &a->dir);
    if (st == NPYIO_OK)
        st = check_final(a, replace, &info, &old);
    if (st == NPYIO_OK)
        st = create_temp(a, mem, a->shown);
    if (st == NPYIO_OK && !a->unnamed)
        remove_stale_temporaries(mem, a);
    if (st == NPYIO_OK)
        st = keep_owner_and_mode(a, old);
    if (st != NPYIO_OK)
        npyio__atomic_abandon(a);
    return st;
}

/* The directory, opened before the file is renamed into it, so that the
 * only failure left after the rename is the sync itself. */
static int open_dir(const npyio__atomic *a)
{
    int fd = npyio__fd_open_at(a->faults, a->at, a->dir, O_RDONLY, 0);

    if (fd < 0)
        npyio__os_fail(a->dir, errno);
    return fd;
}

static int sync_dir(const npyio__atomic *a, int dir_fd)
{
    int r = npyio__fd_sync(a->faults, dir_fd);

    npyio__fd_close(a->faults, dir_fd); /* read-only: nothing to lose */
    return r;
}

/*
 * Remove a stray at an unnamed temporary's commit name: the file of a
 * save killed between linkat() and rename(). A live save holds a lock on
 * its file there (link_at_commit_name), so a file we can lock as well,
 * regular, ours and still at that name, is one no process will rename.
 * Opened without following a link or waiting on a FIFO. Returns whether
 * it went. (Between the check of the name and the unlink, another save
 * could remove the stray too and a third link its file there; that third
 * save then fails at its rename, NPYIO_E_IO, leaving the old file: a
 * window of two system calls, and nothing committed is lost.)
 */
static bool remove_stray(const npyio__atomic *a, const char *name)
{
    npyio__file_info by_fd, by_name;
    bool busy = false, removed = false;
    int fd = npyio__fd_open_at(a->faults, a->at, name,
                               O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);

    if (fd < 0)
        return false;
    if (npyio__fd_info(fd, &by_fd) == 0 &&
        by_fd.kind == NPYIO__FILE_REGULAR && by_fd.uid == npyio__user_id() &&
        npyio__fd_lock(fd, false, false, &busy) == 0 &&
        npyio__path_info(a->at, name, false, &by_name) == 0 &&
        by_name.device == by_fd.device && by_name.inode == by_fd.inode)
        removed = npyio__path_remove(a->at, name) == 0;
    /* read-only: nothing to lose; the lock goes too */
    npyio__fd_close(a->faults, fd);
    return removed;
}

/*
 * Link the unnamed file at its commit name, ".<base>.npyio.tmp", locked so
 * that no other save takes it for a stray. The lock must outlive the
 * descriptor, which is closed before the rename (a failed close must
 * leave the old file): *holder, a duplicate, keeps it until after the
 * rename. A stray at the name is removed and the name taken. Sets a->temp
 * on success; NPYIO_E_IO (the name is held by a live save, or the file
 * system has no locks) leaves the caller to choose another name.
 */
static npyio_status link_at_commit_name(npyio__atomic *a,
                                        const npyio__mem *mem, int *holder)
{
    bool busy;
    npyio_status st = commit_name(mem, a->target, &a->temp);

    if (st != NPYIO_OK)
        return st;
    if (npyio__fd_lock(a->fd, true, false, &busy) == 0 &&
        (*holder = npyio__fd_duplicate(a->fd)) >= 0 &&
        (npyio__fd_link_unnamed(a->faults, a->fd, a->at, a->temp) == 0 ||
         (errno == EEXIST && remove_stray(a, a->temp) &&
          npyio__fd_link_unnamed(a->faults, a->fd, a->at, a->temp) == 0)))
        return NPYIO_OK;
    if (*holder >= 0)
        npyio__fd_close_quietly(*holder);
    *holder = -1;
    npyio__free(a->temp);
    a->temp = NULL;
    return NPYIO_E_IO;
}

/*
 * Give an unnamed temporary its name. A file that did not exist at open
 * is linked as the destination itself: nothing to replace, so nothing to
 * rename and no moment at which a crash leaves a temporary behind. Else
 * (or if the name was taken since) the commit name, just before the
 * rename; a crash in between leaves that one, which the next save that
 * replaces the same file removes (link_at_commit_name). Only if a live
 * save holds that name at this very moment (or locks fail) does the file
 * get a named temporary's unique name, which a crash in between would
 * leave for a save through named temporaries to remove. Sets *placed
 * when the file is in place already, *holder to a descriptor to close
 * after the rename (or -1).
 */
static npyio_status name_unnamed(npyio__atomic *a, const npyio__mem *mem,
                                 bool *placed, int *holder)
{
    unsigned attempt;
    npyio_status st;

    *placed = false;
    if (a->fresh || a->no_replace) {
        if (npyio__fd_link_unnamed(a->faults, a->fd, a->at, a->target) == 0) {
            *placed = true;
            return NPYIO_OK;
        }
        a->taken = errno == EEXIST && a->no_replace;
        if (errno != EEXIST || a->no_replace)
            return NPYIO_E_IO;
    }
    st = link_at_commit_name(a, mem, holder);
    if (st != NPYIO_E_IO)
        return st; /* linked, or out of memory: said as such */
    for (attempt = 0; attempt < 100; attempt++) {
        st = temp_name(mem, a->target, attempt, &a->temp);
        if (st != NPYIO_OK)
            return st;
        if (npyio__fd_link_unnamed(a->faults, a->fd, a->at, a->temp) == 0)
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
        (void)npyio__path_remove(a->at, a->target);
}

/*
 * A named temporary to its destination: renamed over it; or, with
 * no_replace, linked there (which refuses a name taken since the open)
 * and then unlinked. A crash between the two leaves the temporary for the
 * next save of this destination to remove (its process is then gone).
 */
static int place_named(npyio__atomic *a)
{
    if (!a->no_replace)
        return npyio__path_rename(a->faults, a->at, a->temp, a->target);
    if (npyio__path_link(a->faults, a->at, a->temp, a->target) != 0) {
        a->taken = errno == EEXIST;
        return -1;
    }
    (void)npyio__path_remove(a->at, a->temp);
    return 0;
}

npyio_status npyio__atomic_commit(npyio__atomic *a, const npyio__mem *mem,
                                  bool durable)
{
    const char *what = NULL;
    char cause[256];
    bool replace = a->temp != NULL || a->unnamed, placed = false;
    int fd = a->fd, dir_fd = -1, holder = -1;
    int synced = durable && replace ? npyio__fd_sync(a->faults, fd) : 0;
    npyio_status named;
    int closed;

    if (synced == 0 && durable && replace &&
        (dir_fd = open_dir(a)) < 0)
        synced = -1; /* before anything is placed: the old file stays */
    named = synced == 0 && a->unnamed ? name_unnamed(a, mem, &placed,
                                                     &holder)
                                      : NPYIO_OK;
    a->fd = -1;
    if (synced != 0 || named != NPYIO_OK)
        snprintf(cause, sizeof cause, "%s", npyio_last_error());
    /* always, even after a failed fsync */
    closed = npyio__fd_close(a->faults, fd);
    if (synced != 0 || named != NPYIO_OK || closed != 0) {
        unplace(a, placed);
        what = a->taken ? TAKEN : "writing the file";
    } else if (!replace) {
        /* Written directly: a device or FIFO has nothing to sync. */
    } else if (!placed && place_named(a) != 0) {
        what = a->taken ? TAKEN : "replacing the file";
    } else {
        npyio__free(a->temp);
        a->temp = NULL; /* in place now: nothing to remove */
        if (dir_fd >= 0 && sync_dir(a, dir_fd) != 0)
            what = "replaced, but syncing its directory failed (the new "
                   "file may not survive a crash)";
        dir_fd = -1;
    }
    if (dir_fd >= 0)
        npyio__fd_close(a->faults, dir_fd);
    if (what != NULL) {
        if (synced == 0 && named == NPYIO_OK)
            snprintf(cause, sizeof cause, "%s", npyio_last_error());
        /* Out of memory naming the file is said as such, not as I/O. */
        npyio__fail(named == NPYIO_E_NOMEM ? NPYIO_E_NOMEM : NPYIO_E_IO,
                    "%s: %s: %s", a->shown ? a->shown : a->target, what,
                    cause);
    }
    npyio__atomic_abandon(a);
    /* The commit name's lock, held past the rename. A duplicate: its
     * close has nothing to report (and must not replace the message). */
    if (holder >= 0)
        npyio__fd_close_quietly(holder);
    return what == NULL ? NPYIO_OK
           : named == NPYIO_E_NOMEM ? NPYIO_E_NOMEM
                                    : NPYIO_E_IO;
}
