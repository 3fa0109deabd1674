/*
 * dump.c - `npyio dump FILE [MEMBER]`: the data section to standard
 * output, in C order and this host's byte order. Built on the public API
 * only.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <string.h>

#include "cli.h"

/* Data whose stored bytes are what dump writes: native values in C
 * order. */
static int stored_as_dumped(const npyio_header *h)
{
    const npyio_dtype *dt = npyio_header_dtype(h);

    return !npyio_dtype_has_objects(dt) && npyio_dtype_is_native(dt) &&
           (!npyio_header_is_fortran_order(h) || !cli_layouts_differ(h));
}

/* --threads above 1, or a deflated member the library inflates in one
 * call: the data read whole (on that many threads, where the library
 * can: a file), then written at once. */
static int dump_whole(cli_input *in)
{
    void *data = NULL;
    size_t len = 0;
    int rc = 0;

    if (npyio_dtype_has_objects(npyio_header_dtype(
            npyio_reader_header(in->reader))))
        return cli_error(in->name, "the array holds Python objects (a "
                                   "pickle), which npyio does not unpickle");
    if (npyio_reader_read_alloc(in->reader,
                                NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER,
                                &data, &len) != NPYIO_OK)
        return cli_fail_reading(in);
    if (len > 0 && fwrite(data, 1, len, stdout) != len)
        rc = cli_error(NULL, "writing: %s", strerror(errno));
    npyio_free(data);
    return rc;
}

/* The library inflates a deflated member read whole in one libdeflate
 * call up to this size (npyio.h, npyio_npz_load): such a member, dumped
 * as stored, is read whole rather than in chunks through zlib. */
#define WHOLE_INFLATE_MAX ((int64_t)257 << 20)

static int inflated_whole(const cli_input *in)
{
    int64_t method = 0, size = 0;

    return in->npz != NULL &&
           npyio_npz_stat(in->npz, in->member, NPYIO_NPZ_STAT_METHOD,
                          &method) == NPYIO_OK &&
           method == 8 &&
           npyio_npz_stat(in->npz, in->member, NPYIO_NPZ_STAT_SIZE,
                          &size) == NPYIO_OK &&
           size <= WHOLE_INFLATE_MAX;
}

static int dump_one(const cli_args *a, cli_input *in)
{
    cli_progress bar;
    int rc;

    if (stored_as_dumped(npyio_reader_header(in->reader))) {
        /* A plain copy, done by the kernel where it can (no buffer). */
        if (fflush(stdout) != 0)
            return cli_error(NULL, "writing: %s", strerror(errno));
        rc = cli_input_copy_data(in, fileno(stdout));
        if (rc != CLI_COPY_ELSEWHERE)
            return rc;
        if (inflated_whole(in))
            return dump_whole(in);
    }
    if (a->threads > 1)
        return dump_whole(in);
    cli_progress_attach(in, &bar, "dumping", (uint64_t)npyio_header_nbytes(
                                                  npyio_reader_header(in->reader)));
    rc = cli_read_through(in, NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER, stdout);
    cli_progress_detach(in);
    return rc;
}

int cli_dump(const cli_args *a)
{
    return cli_one_input(a, dump_one);
}
