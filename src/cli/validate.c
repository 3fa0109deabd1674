/*
 * validate.c - `npyio validate FILE...`: each file checked entirely, as
 * the reader checks it: an .npy file's header and data length (an object
 * array's pickle walked, never run), and an archive's every member. Built
 * on the public API only.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdlib.h>

#include "cli.h"
#include "pickle.h"

/* An object array's data must be one whole pickle: walk its opcodes
 * (pickle.c), streamed through a bounded buffer, never run. Returns 0, or
 * EXIT_INVALID after a message. */
static int check_pickle(cli_input *in)
{
    const npyio_header *h = npyio_reader_header(in->reader);
    uint64_t data_at = (uint64_t)in->start +
                       (uint64_t)npyio_header_data_offset(h),
             at;
    unsigned char *buf = malloc(CLI_CHUNK);
    size_t got = 0;
    pk_walk w;
    int rc;

    if (buf == NULL)
        return cli_error(in->name, "out of memory");
    pk_walk_init(&w);
    rc = cli_input_seek_data(in);
    while (rc == 0 &&
           (rc = cli_input_read_raw(in, buf, CLI_CHUNK, &got)) == 0 &&
           got > 0 && pk_walk_feed(&w, buf, got) == 0)
        ;
    free(buf);
    if (rc != 0 || pk_walk_end(&w) == 0)
        return rc;
    at = pk_walk_error_pos(&w);
    if (at == UINT64_MAX)
        return cli_error(in->name, "%s", w.message);
    return cli_error(in->name, "pickle byte %" PRIu64 " (file byte %" PRIu64
                               "): %s", at, data_at + at, w.message);
}

/* ---- an .npy file ------------------------------------------------------- */

static int validate_one(const cli_args *a, cli_input *in)
{
    cli_progress bar;
    int rc;

    (void)a;
    if (npyio_dtype_has_objects(
            npyio_header_dtype(npyio_reader_header(in->reader)))) {
        rc = check_pickle(in);
    } else {
        cli_progress_attach(in, &bar, "validating", (uint64_t)
                            npyio_header_nbytes(npyio_reader_header(in->reader)));
        rc = cli_read_through(in, 0, NULL);
        cli_progress_detach(in);
    }
    if (rc != 0)
        return EXIT_INVALID;
    cli_put_name(stdout, in->name);
    fputs(": valid\n", stdout);
    return 0;
}

/* ---- an archive --------------------------------------------------------- */

static int check_member_size(cli_input *in, size_t i)
{
    char why[512];

    return cli_member_too_short(in, i, why, sizeof why)
               ? cli_error(in->name, "%s", why)
               : 0;
}

static int validate_member(cli_input *in, size_t i)
{
    int64_t is_array = cli_member_stat(in, i, NPYIO_NPZ_STAT_IS_ARRAY);
    char buf[96];
    int rc;

    if (cli_member_stat(in, i, NPYIO_NPZ_STAT_READABLE) != 1)
        return cli_error(in->name, "%s cannot be checked: %s",
                         cli_member_label(in, i),
                         cli_unreadable_reason(in, i, buf));
    if (is_array != 1)
        return npyio_npz_verify(in->npz, i) == NPYIO_OK ? 0
                                                        : cli_fail(in->name);
    rc = cli_open_member(in, i);
    if (rc == 0)
        rc = check_member_size(in, i);
    if (rc != 0)
        return rc;
    /* A pickle is walked from a stream of the member's bytes; its CRC is
     * checked at the end of that stream, which the walk may not reach. */
    if (npyio_dtype_has_objects(
            npyio_header_dtype(npyio_reader_header(in->reader)))) {
        rc = check_pickle(in);
        if (rc == 0 && npyio_npz_verify(in->npz, i) != NPYIO_OK)
            rc = cli_fail(in->name);
        return rc;
    }
    return cli_read_through(in, 0, NULL);
}

/* A block index that does not match the member's data is no damage
 * (readers ignore it), but a warning: whoever wrote it made a mistake. */
static void check_block_index(cli_input *in, size_t i)
{
    int64_t blocks = 0;

    if (npyio_npz_stat(in->npz, i, NPYIO_NPZ_STAT_BLOCK_INDEX, &blocks) !=
            NPYIO_OK ||
        blocks != -1)
        return;
    cli_put_name(stderr, in->name);
    fprintf(stderr, ": warning: %s: its block index does not match its "
            "data (ignored: it is read from its start)\n",
            cli_member_label(in, i));
}

static int validate_archive(const cli_args *a, cli_input *in)
{
    size_t i, n = npyio_npz_count(in->npz);
    uint64_t total = 0, before;
    cli_progress bar;
    int rc = 0;

    (void)a;
    for (i = 0; i < n; i++)
        total += (uint64_t)cli_member_stat(in, i, NPYIO_NPZ_STAT_SIZE);
    cli_progress_attach(in, &bar, "validating", total);
    /* Every member, so that every problem is named. */
    for (i = 0; i < n; i++) {
        before = in->progress_done;
        if (validate_member(in, i) != 0)
            rc = EXIT_INVALID;
        else
            check_block_index(in, i);
        /* Headers and members read whole count too. */
        in->progress_done =
            before + (uint64_t)cli_member_stat(in, i, NPYIO_NPZ_STAT_SIZE);
        if (in->progress != NULL)
            cli_progress_update(in->progress, in->progress_done);
    }
    cli_progress_detach(in);
    if (rc != 0)
        return rc;
    cli_put_name(stdout, in->name);
    fputs(": valid\n", stdout);
    return 0;
}

int cli_validate(const cli_args *a)
{
    return cli_each_input(a, validate_one, validate_archive);
}
