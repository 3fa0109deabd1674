/*
 * common.c - what the reading commands (info, validate, dump, print)
 * share: running a command on each of its inputs or on the one input
 * (an .npy file, or the member of an archive a MEMBER argument names),
 * and reading an array's data through to its end. Built on the public
 * API only.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "text.h"

/* ---- reading everything ------------------------------------------------- */

/* Read all of the data in bounded chunks (for a pipe, this is how a short
 * data section is found); write each chunk to sink if given. */
int cli_write_all(int fd, const void *p, size_t len)
{
    const unsigned char *at = p;

    while (len > 0) {
        ssize_t n = write(fd, at, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        at += n;
        len -= (size_t)n;
    }
    return 0;
}

int cli_read_through(cli_input *in, uint32_t flags, FILE *sink)
{
    const npyio_header *h = npyio_reader_header(in->reader);
    int reorder = (flags & NPYIO_READ_C_ORDER) &&
                  npyio_header_is_fortran_order(h) && cli_layouts_differ(h);
    size_t got = 0,
           cap = cli_chunk_capacity(h, reorder ? CLI_REORDER_CHUNK
                                               : CLI_CHUNK);
    unsigned char *buf;
    npyio_status st;
    int rc = 0;

    if (npyio_dtype_has_objects(npyio_header_dtype(h))) {
        if (sink == NULL)
            return 0; /* a pickle's length is not in the header */
        return cli_error(in->name, "the array holds Python objects (a "
                                   "pickle), which npyio does not unpickle");
    }
    /* Chunks go to the descriptor whole: through stdio a chunk that
     * follows a partly filled buffer would take two write() calls. */
    if (sink != NULL && fflush(sink) != 0)
        return cli_error(NULL, "writing: %s", strerror(errno));
    buf = cli_buffer(cap);
    if (buf == NULL)
        return cli_error(in->name, "out of memory");
    st = npyio_reader_read_chunk(in->reader, buf, cap, flags, &got);
    if (st == NPYIO_E_UNSUPPORTED && sink != NULL) {
        /* Fortran data in C order from a pipe: gathering rows needs seeks. */
        if (cli_input_make_seekable(in) != 0) {
            free(buf);
            return EXIT_INVALID;
        }
        st = npyio_reader_read_chunk(in->reader, buf, cap, flags, &got);
    }
    for (; st == NPYIO_OK;
         st = npyio_reader_read_chunk(in->reader, buf, cap, flags, &got)) {
        if (sink != NULL && cli_write_all(fileno(sink), buf, got) != 0) {
            fprintf(stderr, "npyio: writing: %s\n", strerror(errno));
            rc = EXIT_INVALID;
            break;
        }
        if (in->progress != NULL)
            cli_progress_update(in->progress, in->progress_done += got);
    }
    if (rc == 0 && st != NPYIO_END)
        rc = cli_fail_reading(in);
    free(buf);
    return rc;
}

/* ---- the inputs of a command -------------------------------------------- */

/* A second argument of print or dump is a MEMBER: the name of an array
 * in an .npz archive. An .npy file has no members. */
static int refuse_member(const cli_args *a)
{
    sbuf name = {0};

    if (a->nfiles < 2)
        return 0;
    text_escape(&name, a->files[0], strlen(a->files[0]), 1);
    cli_error(NULL, "%s: a second argument is a MEMBER name (of an array "
                    "in an .npz archive), and %s is an .npy file, which has "
                    "no members", a->command,
              name.nomem ? "FILE" : name.p != NULL ? name.p : "");
    free(name.p);
    return EXIT_INVALID;
}

/* Run act on each FILE in turn; exit 1 if it failed for any of them. */
int cli_each_input(const cli_args *a,
                   int (*act)(const cli_args *a, cli_input *in),
                   int (*archive_act)(const cli_args *a, cli_input *in))
{
    return cli_each_input_cut(a, act, archive_act, NULL);
}

int cli_each_input_cut(const cli_args *a,
                       int (*act)(const cli_args *a, cli_input *in),
                       int (*archive_act)(const cli_args *a, cli_input *in),
                       cli_cut_act *cut_act)
{
    int i, rc = 0;

    for (i = 0; i < a->nfiles; i++) {
        npyio_header *cut = NULL;
        char *why = NULL;
        cli_input in;

        if (cli_open_input_cut(a->files[i], a->options, &in,
                               cut_act != NULL ? &cut : NULL, &why) != 0) {
            if (cut != NULL)
                cut_act(a, a->files[i], cut, why);
            npyio_header_free(cut);
            free(why);
            rc = EXIT_INVALID;
            continue;
        }
        if (in.npz != NULL ? archive_act(a, &in) != 0 : act(a, &in) != 0)
            rc = EXIT_INVALID;
        cli_close_input(&in);
    }
    return rc;
}

/* Run act on the one FILE, whose output goes to stdout. */
int cli_one_input(const cli_args *a,
                  int (*act)(const cli_args *a, cli_input *in))
{
    cli_input in;
    int rc = cli_open_input(a->files[0], a->options, &in);

    if (rc != 0)
        return rc;
    rc = in.npz != NULL ? cli_choose_member(a, &in) : refuse_member(a);
    if (rc == 0)
        rc = act(a, &in);
    cli_close_input(&in);
    if (fflush(stdout) != 0 && rc == 0) {
        fprintf(stderr, "npyio: writing: %s\n", strerror(errno));
        rc = EXIT_INVALID;
    }
    return rc;
}
