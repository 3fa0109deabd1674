/*
 * dump.c - `npyio dump FILE [MEMBER]`: the data section to standard
 * output, in C order and this host's byte order. Built on the public API
 * only.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <string.h>

#include "cli.h"
#include "parts.h"
#include "pipeline.h"

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

/* --threads N above 1 on an .npy file: its data in parts, each read (and
 * swapped) by one of N threads, written to standard output in order. */
typedef struct dump_job {
    cli_parts parts;
    size_t unit;
    int error; /* errno of a failed write */
} dump_job;

static npyio_status produce_part(void *ctx, unsigned worker, uint64_t first,
                                 uint64_t count, unsigned char *buf)
{
    dump_job *j = ctx;

    return cli_parts_read(&j->parts, worker, first, count, buf,
                          (size_t)count * j->unit);
}

static npyio_status write_part(void *ctx, const unsigned char *buf,
                               size_t len)
{
    dump_job *j = ctx;

    if (cli_write_all(fileno(stdout), buf, len) == 0)
        return NPYIO_OK;
    j->error = errno;
    return NPYIO_E_IO;
}

static int dump_parts(const cli_args *a, cli_input *in)
{
    const npyio_header *h = npyio_reader_header(in->reader);
    dump_job j = {.unit = npyio_dtype_itemsize(npyio_header_dtype(h))};
    cli_pipeline p = {produce_part, write_part, &j, 0, j.unit,
                      (unsigned)a->threads, NULL};
    char message[1024] = "";
    cli_progress bar;
    npyio_status st = cli_parts_open(in, (unsigned)a->threads,
                                     NPYIO_READ_NATIVE, &j.parts);
    int how = CLI_PIPE_READ, rc = 0;

    if (st == NPYIO_OK && fflush(stdout) != 0) {
        how = CLI_PIPE_WRITE;
        j.error = errno;
    } else if (st == NPYIO_OK) {
        p.units = j.parts.units;
        p.bar = &bar;
        cli_progress_start(&bar, "dumping", (uint64_t)npyio_header_nbytes(h));
        how = cli_pipeline_run(&p, &st, message, sizeof message);
        cli_progress_end(&bar);
    } else {
        snprintf(message, sizeof message, "%s", npyio_last_error());
    }
    if (how == CLI_PIPE_WRITE)
        rc = cli_error(NULL, "writing: %s", strerror(j.error));
    else if (how == CLI_PIPE_READ)
        rc = cli_fail_with(in->name, message);
    cli_parts_close(&j.parts);
    return rc;
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
    /* --threads N: an .npy file in parts on the threads. Anything else
     * (a pipe, reordering, an archive member beyond the one libdeflate
     * call above) streams in chunks: a read into a whole-array buffer,
     * whose pages are all faulted in, was slower (0.4-0.8x for a member
     * without a block index). The library inflates the chunks of a
     * member with a block index on the threads (NPYIO_LIMIT_THREADS,
     * set from --threads), which the tool cannot tell without parsing
     * ZIP headers itself. */
    if (a->threads > 1 && cli_parts_fit(in, 0))
        return dump_parts(a, in);
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
