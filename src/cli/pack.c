/*
 * pack.c - `npyio pack OUT.npz NAME=FILE.npy...`: .npy files into an
 * archive, each member byte for byte its file (npyio_npz_writer_add_npy), to a
 * new archive replaced atomically or appended crash-safely. Built on the
 * public API only. A regular file to deflate goes to the library as its
 * own file stream, which it reads whole to deflate it in one libdeflate
 * call (npyio.h, NPYIO_NPZ_WRITE_ZLIB); other inputs go through a stream
 * that moves the progress bar.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

/* One NAME=FILE argument. */
typedef struct pack_item {
    const char *file;
    char *key;
} pack_item;

/* NAME=FILE, or FILE alone: its base name without ".npy". */
static int parse_item(const char *arg, pack_item *item)
{
    const char *eq = strchr(arg, '='), *base;
    size_t len;

    if (eq != NULL) {
        item->file = eq + 1;
        len = (size_t)(eq - arg);
        base = arg;
    } else {
        item->file = arg;
        base = strrchr(arg, '/') != NULL ? strrchr(arg, '/') + 1 : arg;
        len = strlen(base);
        if (len > 4 && strcmp(base + len - 4, ".npy") == 0)
            len -= 4;
    }
    if (item->file[0] == '\0')
        return cli_error(arg, "no FILE after NAME=");
    if (eq == NULL && strcmp(arg, "-") == 0)
        return cli_error(NULL, "standard input needs a key: NAME=-");
    if (len == 0)
        return cli_error(arg, "an empty NAME");
    item->key = malloc(len + 1);
    if (item->key == NULL)
        return cli_error(NULL, "out of memory");
    memcpy(item->key, base, len);
    item->key[len] = '\0';
    return 0;
}

/* The input read through a stream that moves the progress bar. A
 * failed read keeps the input stream's own message (the library would
 * only say that the callback failed: EISDIR, EIO would be lost). */
typedef struct counted {
    npyio_stream *inner;
    cli_progress *bar;
    uint64_t *done;
    char read_error[512]; /* "" while the reads succeed */
} counted;

static int counted_read(void *user, void *buf, size_t cap, size_t *got)
{
    counted *c = user;

    if (npyio_stream_read(c->inner, buf, cap, got) != NPYIO_OK) {
        snprintf(c->read_error, sizeof c->read_error, "%s",
                 npyio_last_error());
        return -1;
    }
    *c->done += *got;
    cli_progress_update(c->bar, *c->done);
    return 0;
}

/* Whose fault a failed npyio_npz_writer_add_npy was: the input's (it could not
 * be read, or it is no .npy file) or the archive's (writing it failed,
 * the only I/O error left once the input's reads succeeded). */
static int report_add_failure(const counted *c, npyio_status st,
                              const char *input, const char *archive)
{
    if (c->read_error[0] != '\0')
        return cli_fail_with(input, c->read_error);
    return cli_fail(st == NPYIO_E_IO ? archive : input);
}

/* Is the file regular, of a known size (for the progress bar)? */
static int regular_file(const char *file, uint64_t *size)
{
    struct stat info;

    if (strcmp(file, "-") == 0 || stat(file, &info) != 0 ||
        !S_ISREG(info.st_mode))
        return 0;
    *size = (uint64_t)info.st_size;
    return 1;
}

/* A regular file deflated whole: the library reads it through its own
 * stream, whose failures name the file. */
static int add_whole(npyio_npz_writer *w, const pack_item *item,
                     const cli_args *a, cli_progress *bar, uint64_t *done,
                     uint64_t size)
{
    npyio_stream *in = NULL;
    npyio_status st = npyio_stream_open_path(item->file, NPYIO_STREAM_READ,
                                             a->options, &in);

    if (st != NPYIO_OK)
        return cli_fail(item->file);
    st = npyio_npz_writer_add_npy(w, item->key, in, a->level, 0);
    npyio_stream_close(in);
    if (st != NPYIO_OK)
        return cli_fail(item->file);
    *done += size;
    cli_progress_update(bar, *done);
    return 0;
}

/* One member from its file. */
static int add_item(npyio_npz_writer *w, const pack_item *item,
                    const cli_args *a, cli_progress *bar, uint64_t *done)
{
    npyio_stream_ops ops = {.size = sizeof ops, .read = counted_read};
    npyio_stream *inner = NULL, *outer = NULL;
    counted c;
    uint64_t size = 0;
    npyio_status st;

    if (a->level > 0 && !a->zlib && regular_file(item->file, &size))
        return add_whole(w, item, a, bar, done, size);
    st = strcmp(item->file, "-") == 0
             ? npyio_stream_open_fd(0, a->options, &inner)
             : npyio_stream_open_path(item->file, NPYIO_STREAM_READ,
                                      a->options, &inner);
    if (st != NPYIO_OK)
        return cli_fail(item->file);
    c.inner = inner;
    c.bar = bar;
    c.done = done;
    c.read_error[0] = '\0';
    st = npyio_stream_open_ops(&ops, &c, a->options, &outer);
    if (st == NPYIO_OK)
        st = npyio_npz_writer_add_npy(w, item->key, outer, a->level, 0);
    npyio_stream_close(outer);
    npyio_stream_close(inner);
    return st == NPYIO_OK ? 0
                          : report_add_failure(&c, st, item->file,
                                               a->files[0]);
}

/* The files' sizes summed, for the progress bar (0: unknown). */
static uint64_t total_size(const pack_item *items, int n)
{
    uint64_t total = 0;
    struct stat info;
    int i;

    for (i = 0; i < n; i++) {
        if (strcmp(items[i].file, "-") == 0 ||
            stat(items[i].file, &info) != 0 || !S_ISREG(info.st_mode))
            return 0;
        total += (uint64_t)info.st_size;
    }
    return total;
}

static int pack_items(const cli_args *a, const pack_item *items, int n)
{
    const char *out = a->files[0];
    uint32_t flags = (a->no_sync ? NPYIO_WRITE_NO_SYNC : 0) |
                     (a->no_align ? NPYIO_NPZ_WRITE_NO_ALIGN : 0) |
                     (a->zlib ? NPYIO_NPZ_WRITE_ZLIB : 0);
    npyio_npz_writer *w = NULL;
    cli_progress bar;
    uint64_t done = 0;
    npyio_status st;
    int i, rc = 0;

    /* Appenders take turns: wait for one that holds the archive. */
    st = a->append ? npyio_npz_writer_open_append_path(out,
                                           flags | NPYIO_WRITE_WAIT_FOR_LOCK,
                                           a->options, &w)
                   : npyio_npz_writer_create_path(out, flags, a->options, &w);
    if (st != NPYIO_OK)
        return cli_fail(out);
    cli_progress_start(&bar, "packing", total_size(items, n));
    for (i = 0; i < n && rc == 0; i++)
        rc = add_item(w, &items[i], a, &bar, &done);
    cli_progress_end(&bar);
    if (rc != 0) {
        npyio_npz_writer_abort(w); /* OUT stays as it was */
        return rc;
    }
    if (npyio_npz_writer_close(w) != NPYIO_OK)
        return cli_fail(out);
    return 0;
}

int cli_pack(const cli_args *a)
{
    int i, n = a->nfiles - 1, rc = 0, stdin_used = 0;
    pack_item *items = calloc((size_t)n, sizeof *items);

    if (items == NULL)
        return cli_error(NULL, "out of memory");
    for (i = 0; i < n && rc == 0; i++) {
        rc = parse_item(a->files[i + 1], &items[i]);
        if (rc == 0 && strcmp(items[i].file, "-") == 0 && stdin_used++)
            rc = cli_error(NULL, "standard input can be packed once");
    }
    if (rc == 0)
        rc = pack_items(a, items, n);
    for (i = 0; i < n; i++)
        free(items[i].key);
    free(items);
    return rc;
}
