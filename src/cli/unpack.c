/*
 * unpack.c - `npyio unpack FILE.npz DIR`: every .npy member to
 * DIR/<member file name>, byte for byte, checked (header, size, CRC-32)
 * before it takes its place. Built on the public API only.
 *
 * An archive names its own files, so its names are hostile until shown
 * otherwise. Before anything is written the whole archive is refused
 * when a name could land outside DIR or two names collide, or a target
 * is a folder or (without --force) a file. Each file is then written by
 * the library's atomic replacement below DIR (npyio_stream_save_under):
 * every folder on the way opened relative to the one before without
 * following a link (O_NOFOLLOW; on Windows, no link or junction, each
 * folder held so that it cannot be renamed meanwhile), so a symbolic link
 * planted in DIR is never followed, even one that appears while we work; an existing file refused at the commit
 * itself without --force; no temporary of ours left by a failure or a
 * kill.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "os.h"

/* The first len bytes of s as a string of their own (strndup, which
 * POSIX has and Windows lacks); NULL when out of memory. */
static char *prefix_of(const char *s, size_t len)
{
    char *p = malloc(len + 1);

    if (p != NULL) {
        memcpy(p, s, len);
        p[len] = '\0';
    }
    return p;
}

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
            char *folder = prefix_of(names[i], len);
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
    char *path = prefix_of(dir, strlen(dir)), *p;
    int rc = 0;

    if (path == NULL)
        return cli_error(NULL, "out of memory");
    for (p = path + 1; rc == 0; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        {
            char c = *p;

            *p = '\0';
            if (cli_os_mkdir(path) != 0 && errno != EEXIST)
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
 * O_NOFOLLOW; *base points at the file's own name. Returns the folder's
 * descriptor; -1 after a message; -2 when a folder is missing (nothing
 * there yet). */
static int open_folder(const char *shown, int root, const char *name,
                       const char **base)
{
    int fd = cli_os_dir_dup(root);
    const char *p = name, *slash;

    while (fd >= 0 && (slash = strchr(p, '/')) != NULL) {
        char *part = prefix_of(p, (size_t)(slash - p));
        int next;

        if (part == NULL) {
            cli_os_dir_close(fd);
            return cli_error(NULL, "out of memory"), -1;
        }
        next = cli_os_dir_open_at(fd, part);
        if (next < 0) {
            int e = errno;

            cli_os_dir_close(fd);
            if (e == ENOENT) {
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
        cli_os_dir_close(fd);
        fd = next;
        p = slash + 1;
    }
    if (fd < 0)
        return cli_error(shown, "%s", strerror(errno)), -1;
    *base = p;
    return fd;
}

/* Before anything is written: every path can be made, and nothing is
 * replaced without --force. (The library refuses both again as it
 * writes: this check only spares a half-unpacked archive.) */
static int check_target(const cli_args *a, const char *shown, int root,
                        const char *name)
{
    const char *base = NULL;
    int fd = open_folder(shown, root, name, &base), rc = 0, kind;

    if (fd == -2)
        return 0;
    if (fd < 0)
        return EXIT_INVALID;
    kind = cli_os_kind_at(fd, base);
    if (kind == CLI_OS_FOLDER)
        rc = cli_error(shown, "'%s' is a folder", name);
    else if (kind > CLI_OS_MISSING && !a->force)
        rc = cli_error(shown, "'%s' exists (--force replaces it)", name);
    else if (kind < 0)
        rc = cli_error(shown, "'%s': %s", name, strerror(errno));
    cli_os_dir_close(fd);
    return rc;
}

/* ---- writing one member ------------------------------------------------------------ */

/* A member's stream seen through callbacks, so that each read moves the
 * progress bar; a failed read keeps the library's message (the callback
 * table can only say that the callback failed). */
typedef struct counted_member {
    npyio_stream *member;
    cli_progress *bar;
    uint64_t *done;
    int failed;
    char message[1024];
} counted_member;

static int counted_read(void *user, void *buf, size_t cap, size_t *got)
{
    counted_member *c = user;

    if (npyio_stream_read(c->member, buf, cap, got) != NPYIO_OK) {
        c->failed = 1;
        snprintf(c->message, sizeof c->message, "%s", npyio_last_error());
        return 1;
    }
    *c->done += *got;
    cli_progress_update(c->bar, *c->done);
    return 0;
}

/* The member's bytes (CRC checked at their end) saved as DIR/<name> by
 * the library's atomic replacement: no link below DIR followed, no file
 * replaced without --force (refused at the commit itself too), synced
 * unless --no-sync; a failure or a kill leaves no temporary. */
static int save_member(const cli_args *a, cli_input *in, size_t i,
                       counted_member *c)
{
    npyio_stream_ops ops = {sizeof ops, counted_read, NULL, NULL, NULL,
                            NULL, NULL, NULL, NULL, NULL, NULL};
    npyio_stream *source = NULL;
    uint32_t flags = (a->force ? NPYIO_WRITE_REPLACE : 0) |
                     (a->no_sync ? NPYIO_WRITE_NO_SYNC : 0);
    npyio_status st;

    if (npyio_stream_open_member(in->npz, i, &c->member) != NPYIO_OK)
        return cli_fail(in->name);
    st = npyio_stream_open_ops(&ops, c, a->options, &source);
    if (st == NPYIO_OK)
        st = npyio_stream_save_under(source, a->files[1],
                                     npyio_npz_name(in->npz, i), flags,
                                     a->options);
    if (st != NPYIO_OK && c->failed)
        cli_fail_with(in->name, c->message);
    npyio_stream_close(source);
    npyio_stream_close(c->member);
    return st == NPYIO_OK ? 0 : c->failed ? EXIT_INVALID : -1;
}

/* A member refused as it was written: a file that exists now (made since
 * the check) or a link is said as the check says it; else the library's
 * message (which starts with DIR/<name>). */
static int refused(const cli_args *a, int root, const char *name)
{
    char why[1024], *path;

    snprintf(why, sizeof why, "%s", npyio_last_error());
    if (check_target(a, a->files[1], root, name) != 0)
        return EXIT_INVALID;
    path = malloc(strlen(a->files[1]) + strlen(name) + 2);
    if (path == NULL)
        return cli_error(NULL, "out of memory");
    sprintf(path, "%s/%s", a->files[1], name);
    cli_fail_with(path, why);
    free(path);
    return EXIT_INVALID;
}

static int unpack_member(const cli_args *a, cli_input *in, int root,
                         size_t i, cli_progress *bar, uint64_t *done)
{
    counted_member c = {NULL, bar, done, 0, ""};
    const char *name = npyio_npz_name(in->npz, i);
    int rc = cli_open_member(in, i); /* its header */

    if (rc != 0)
        return rc;
    rc = save_member(a, in, i, &c);
    if (rc != -1)
        return rc;
    return refused(a, root, name);
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
    cli_progress_start(&bar, "unpacking", total);
    for (i = 0; i < n; i++)
        if (what[i] == 1 &&
            unpack_member(a, in, root, i, &bar, &done) != 0)
            rc = EXIT_INVALID;
    cli_progress_end(&bar);
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
    if (rc == 0 && (root = cli_os_dir_open(a->files[1])) < 0)
        rc = cli_error(a->files[1], "%s", strerror(errno));
    if (rc == 0)
        rc = unpack_archive(a, &in, root, what, total);
    if (root >= 0)
        cli_os_dir_close(root);
    free(what);
    cli_close_input(&in);
    return rc;
}
