/*
 * unpack.c - `npyio unpack FILE.npz DIR`: every .npy member to
 * DIR/<member file name>, byte for byte, checked (header, size, CRC-32)
 * before it is renamed into place. Built on the public API only.
 *
 * An archive names its own files, so its names are hostile until shown
 * otherwise. Before anything is written the whole archive is refused
 * when a name could land outside DIR or two names collide, and every
 * folder on the way is opened with O_NOFOLLOW relative to the one before
 * (openat): a symbolic link planted in DIR is never followed, even one
 * that appears while we work.
 */
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif
#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* ---- names ------------------------------------------------------------------------ */

/* Why a member's name may not be used under DIR, or NULL. Every member:
 * nothing may point outside; members to be written: also no empty or
 * "." component (a file needs a plain path). */
static const char *unsafe_name(const cli_input *in, size_t i, int written)
{
    const char *name = npyio_npz_name(in->npz, i), *p = name;

    if (cli_member_stat(in, i, NPYIO_NPZ_STAT_NAME_CUT) == 1)
        return "its stored name holds a NUL byte";
    if (name[0] == '/')
        return "its name is an absolute path";
    if (strchr(name, '\\') != NULL)
        return "its name holds a backslash";
    for (;;) {
        size_t len = strcspn(p, "/");

        if (len == 2 && p[0] == '.' && p[1] == '.')
            return "its name has a '..' component";
        if (written && (len == 0 || (len == 1 && p[0] == '.')))
            return "its name has an empty or '.' component";
        if (written && len > 255)
            return "its name has a component longer than 255 bytes (a "
                   "file name's limit on most systems)";
        if (p[len] == '\0')
            return NULL;
        p += len + 1;
    }
}

static int compare_names(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* Two members to one path, or one member's path a folder of another's. */
static int check_collisions(const cli_input *in, const char **names,
                            size_t n)
{
    size_t i;

    qsort(names, n, sizeof *names, compare_names);
    for (i = 0; i + 1 < n; i++)
        if (strcmp(names[i], names[i + 1]) == 0)
            return cli_error(in->name, "two members are named '%s': "
                                       "refusing the archive", names[i]);
    for (i = 0; i < n; i++) {
        const char *slash;

        for (slash = strchr(names[i], '/'); slash != NULL;
             slash = strchr(slash + 1, '/')) {
            size_t len = (size_t)(slash - names[i]);
            char *folder = strndup(names[i], len);
            const char *key = folder;
            int clash;

            if (folder == NULL)
                return cli_error(NULL, "out of memory");
            clash = bsearch(&key, names, n, sizeof *names, compare_names) !=
                    NULL;
            free(folder);
            if (clash)
                return cli_error(in->name, "member '%s' needs a folder "
                                           "that another member's file "
                                           "would be: refusing the archive",
                                 names[i]);
        }
    }
    return 0;
}

/* ---- paths under DIR -------------------------------------------------------------- */

/* mkdir -p of DIR itself (the user's own path: links followed). */
static int make_dir(const char *dir)
{
    char *path = strdup(dir), *p;
    int rc = 0;

    if (path == NULL)
        return cli_error(NULL, "out of memory");
    for (p = path + 1; rc == 0; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        {
            char c = *p;

            *p = '\0';
            if (mkdir(path, 0777) != 0 && errno != EEXIST)
                rc = cli_error(dir, "making the folder: %s", strerror(errno));
            *p = c;
            if (c == '\0')
                break;
        }
    }
    free(path);
    return rc;
}

/* The folder of `name` under root, opened component by component with
 * O_NOFOLLOW (made when `create`); *base points at the file's own name.
 * Returns the folder's descriptor; -1 after a message; -2 when a folder
 * is missing and create is 0 (nothing there yet). */
static int open_folder(const char *shown, int root, const char *name,
                       int create, const char **base)
{
    int fd = dup(root);
    const char *p = name, *slash;

    while (fd >= 0 && (slash = strchr(p, '/')) != NULL) {
        char *part = strndup(p, (size_t)(slash - p));
        int next;

        if (part == NULL) {
            close(fd);
            return cli_error(NULL, "out of memory"), -1;
        }
        next = openat(fd, part, DIR_FLAGS);
        if (next < 0 && errno == ENOENT && create &&
            (mkdirat(fd, part, 0777) == 0 || errno == EEXIST))
            next = openat(fd, part, DIR_FLAGS);
        if (next < 0) {
            int e = errno;

            close(fd);
            if (e == ENOENT && !create) {
                free(part);
                return -2;
            }
            cli_error(shown, "folder '%s' of '%s': %s", part, name,
                      e == ELOOP || e == ENOTDIR
                          ? "a symbolic link or not a folder, which npyio "
                            "does not follow"
                          : strerror(e));
            free(part);
            return -1;
        }
        free(part);
        close(fd);
        fd = next;
        p = slash + 1;
    }
    if (fd < 0)
        return cli_error(shown, "%s", strerror(errno)), -1;
    *base = p;
    return fd;
}

/* Before anything is written: every path can be made, and nothing is
 * replaced without --force. */
static int check_target(const cli_args *a, const char *shown, int root,
                        const char *name)
{
    const char *base = NULL;
    struct stat info;
    int fd = open_folder(shown, root, name, 0, &base), rc = 0;

    if (fd == -2)
        return 0;
    if (fd < 0)
        return EXIT_INVALID;
    if (fstatat(fd, base, &info, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISDIR(info.st_mode))
            rc = cli_error(shown, "'%s' is a folder", name);
        else if (!a->force)
            rc = cli_error(shown, "'%s' exists (--force replaces it)", name);
    } else if (errno != ENOENT) {
        rc = cli_error(shown, "'%s': %s", name, strerror(errno));
    }
    close(fd);
    return rc;
}

/* ---- writing one member ------------------------------------------------------------ */

/* A new temporary file in folder fd; its name goes to tmp. */
static int open_temporary(int fd, char tmp[64])
{
    static unsigned counter;
    int out, tries;

    for (tries = 0; tries < 1000; tries++) {
        snprintf(tmp, 64, ".npyio-unpack-%ld-%u.tmp", (long)getpid(),
                 counter++);
        out = openat(fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
                                  O_CLOEXEC, 0666);
        if (out >= 0 || errno != EEXIST)
            return out;
    }
    return -1;
}

/* The member's bytes (CRC checked at their end) into descriptor out. */
static int copy_member(cli_input *in, size_t i, int out, unsigned char *buf,
                       size_t cap, cli_progress *bar, uint64_t *done)
{
    npyio_stream *s = NULL;
    size_t got = 0;
    int rc = 0;

    if (npyio_stream_open_member(in->npz, i, &s) != NPYIO_OK)
        return cli_fail(in->name);
    do {
        if (npyio_stream_read(s, buf, cap, &got) != NPYIO_OK) {
            rc = cli_fail(in->name);
            break;
        }
        if (cli_write_all(out, buf, got) != 0) {
            rc = cli_error(in->name, "writing %s: %s",
                           cli_member_label(in, i), strerror(errno));
            break;
        }
        *done += got;
        cli_progress_update(bar, *done);
    } while (got > 0);
    npyio_stream_close(s);
    return rc;
}

/* Into place: renamed over an old file with --force, else linked (which
 * refuses an existing name, even one made since the check). */
static int commit(const cli_args *a, int fd, const char *tmp,
                  const char *base)
{
    if (a->force)
        return renameat(fd, tmp, fd, base);
    if (linkat(fd, tmp, fd, base, 0) != 0)
        return -1;
    return unlinkat(fd, tmp, 0);
}

static int unpack_member(const cli_args *a, cli_input *in, int root,
                         size_t i, unsigned char *buf, size_t cap,
                         cli_progress *bar, uint64_t *done)
{
    const char *name = npyio_npz_name(in->npz, i), *base = NULL;
    char tmp[64];
    int fd, out, rc;

    rc = cli_open_member(in, i); /* its header */
    if (rc != 0)
        return rc;
    fd = open_folder(a->files[1], root, name, 1, &base);
    if (fd < 0)
        return EXIT_INVALID;
    out = open_temporary(fd, tmp);
    if (out < 0) {
        rc = cli_error(a->files[1], "a temporary file for '%s': %s", name,
                       strerror(errno));
        close(fd);
        return rc;
    }
    rc = copy_member(in, i, out, buf, cap, bar, done);
    if (rc == 0 && !a->no_sync && fsync(out) != 0)
        rc = cli_error(a->files[1], "'%s': %s", name, strerror(errno));
    if (close(out) != 0 && rc == 0)
        rc = cli_error(a->files[1], "'%s': %s", name, strerror(errno));
    if (rc == 0 && commit(a, fd, tmp, base) != 0)
        rc = cli_error(a->files[1], "'%s': %s", name,
                       errno == EEXIST ? "exists (--force replaces it)"
                                       : strerror(errno));
    if (rc != 0)
        unlinkat(fd, tmp, 0);
    else if (!a->no_sync)
        fsync(fd); /* the new name on disk (advice if it fails) */
    close(fd);
    return rc;
}

/* ---- the command -------------------------------------------------------------------- */

/* Which members are written (1), skipped (0) or unreadable (-1); the
 * archive refused (EXIT_INVALID) on a hostile name or a collision. */
static int plan(cli_input *in, signed char *what, uint64_t *total)
{
    size_t i, n = npyio_npz_count(in->npz), k = 0;
    const char **names = calloc(n ? n : 1, sizeof *names);
    int rc = 0;

    if (names == NULL)
        return cli_error(NULL, "out of memory");
    *total = 0;
    for (i = 0; i < n && rc == 0; i++) {
        int64_t is_array = cli_member_stat(in, i, NPYIO_NPZ_STAT_IS_ARRAY);
        const char *why = unsafe_name(in, i, is_array == 1);

        what[i] = (signed char)is_array;
        if (why != NULL) {
            rc = cli_error(in->name, "%s: %s: refusing the archive",
                           cli_member_label(in, i), why);
        } else if (is_array == 1) {
            names[k++] = npyio_npz_name(in->npz, i);
            *total += (uint64_t)cli_member_stat(in, i, NPYIO_NPZ_STAT_SIZE);
        }
    }
    if (rc == 0)
        rc = check_collisions(in, names, k);
    free(names);
    return rc;
}

/* Members that are not written are named first, then every target is
 * checked, then the files are written under one progress bar. */
static int unpack_archive(const cli_args *a, cli_input *in, int root,
                          const signed char *what, uint64_t total)
{
    size_t i, n = npyio_npz_count(in->npz);
    const size_t cap = (size_t)1 << 20;
    unsigned char *buf;
    cli_progress bar;
    uint64_t done = 0;
    int rc = 0, skipped = 0;

    for (i = 0; i < n; i++) {
        if (what[i] == 0) {
            fprintf(stderr, "npyio: ");
            cli_put_name(stderr, in->name);
            fprintf(stderr, ": %s skipped: not an .npy file\n",
                    cli_member_label(in, i));
        } else if (what[i] < 0) {
            cli_error(in->name, "%s skipped: npyio cannot decompress it",
                      cli_member_label(in, i));
            skipped = 1;
        }
    }
    for (i = 0; i < n && rc == 0; i++)
        if (what[i] == 1)
            rc = check_target(a, a->files[1], root, npyio_npz_name(in->npz, i));
    if (rc != 0)
        return rc;
    buf = malloc(cap);
    if (buf == NULL)
        return cli_error(NULL, "out of memory");
    cli_progress_start(&bar, "unpacking", total);
    for (i = 0; i < n; i++)
        if (what[i] == 1 &&
            unpack_member(a, in, root, i, buf, cap, &bar, &done) != 0)
            rc = EXIT_INVALID;
    cli_progress_end(&bar);
    free(buf);
    return rc != 0 || skipped ? EXIT_INVALID : 0;
}

int cli_unpack(const cli_args *a)
{
    cli_input in;
    signed char *what = NULL;
    uint64_t total = 0;
    int rc, root = -1;

    if (cli_open_input(a->files[0], a->options, &in) != 0)
        return EXIT_INVALID;
    if (in.npz == NULL) {
        cli_close_input(&in);
        return cli_error(a->files[0], "an .npy file, not an .npz archive: "
                                      "nothing to unpack");
    }
    what = malloc(npyio_npz_count(in.npz) + 1);
    rc = what == NULL ? cli_error(NULL, "out of memory")
                      : plan(&in, what, &total);
    if (rc == 0)
        rc = make_dir(a->files[1]);
    if (rc == 0 && (root = open(a->files[1], O_RDONLY | O_DIRECTORY |
                                                 O_CLOEXEC)) < 0)
        rc = cli_error(a->files[1], "%s", strerror(errno));
    if (rc == 0)
        rc = unpack_archive(a, &in, root, what, total);
    if (root >= 0)
        close(root);
    free(what);
    cli_close_input(&in);
    return rc;
}
