/*
 * parts.h - one reader per thread of a pipeline (pipeline.h) over the
 * same array, each reading the parts its thread is given by position
 * (npyio_reader_read_rows) through positioned reads, so that the threads
 * share no handle (parts.c). An .npy file's data is read as the 1-D
 * array of its elements in the order they are stored (a header of the
 * tool's own in front of IN's data section, read with pread), so that a
 * part is any run of elements, whatever the shape (0-d included).
 *
 * Archive members are not read in parts: rows read by position skip a
 * stored member's CRC-32 check, a deflated member without a block index
 * would be inflated from its start by every thread, and one with an
 * index proven whole by every reader (npyio.h, NPYIO_LIMIT_THREADS).
 */
#ifndef NPYIO_CLI_PARTS_H
#define NPYIO_CLI_PARTS_H

#include "cli.h"
#include "pipeline.h"

typedef struct cli_parts {
    unsigned n; /* readers */
    npyio_reader *readers[CLI_PIPE_MAX_THREADS];
    cli_splice *splices[CLI_PIPE_MAX_THREADS];
    npyio_stream *streams[CLI_PIPE_MAX_THREADS];
    npyio_options *options; /* the views' readers' */
    uint64_t units;         /* elements */
    uint32_t flags;         /* for every read */
} cli_parts;

/* A reader of in's data section behind the header `view` (np.save's
 * form of it), through a splice of its own: *options made on the first
 * call (the user's limits, the header's raised to the view's, the thread
 * limit set to threads when above 0) and shared by later calls. */
npyio_status cli_view_open(const cli_input *in, const npyio_header *view,
                           int64_t threads, npyio_options **options,
                           cli_splice **sp, npyio_stream **stream,
                           npyio_reader **reader);

/* Whether in's data can be read in parts in the order wanted (C order,
 * or Fortran order for fortran != 0) as stored: an .npy file (not an
 * archive) without objects, read through a file that has positioned
 * reads (not a pipe), whose stored order is the order wanted (reordering
 * stays on one thread, as npyio_reader_read_chunk does it). */
int cli_parts_fit(const cli_input *in, int fortran);

/* n readers over in's data, or a failure (the library's message set);
 * cli_parts_close in either case. flags: NPYIO_READ_NATIVE and the
 * like, for every read. */
npyio_status cli_parts_open(cli_input *in, unsigned n, uint32_t flags,
                            cli_parts *parts);

/* npyio_reader_set_type on every reader. */
npyio_status cli_parts_set_type(cli_parts *parts, const char *type,
                                uint32_t flags);

/* Units [first, first + count) into buf, by reader `worker`. */
npyio_status cli_parts_read(cli_parts *parts, unsigned worker,
                            uint64_t first, uint64_t count, void *buf,
                            size_t cap);

void cli_parts_close(cli_parts *parts);

#endif
