/*
 * splice.h - a read stream of some bytes held in memory followed by a
 * FILE* from an offset on (see input.c).
 */
#ifndef NPYIO_CLI_SPLICE_H
#define NPYIO_CLI_SPLICE_H

#include <stdint.h>
#include <stdio.h>

#include "npyio.h"

typedef struct cli_splice cli_splice;

/* A stream reading prefix (copied) then file from offset base. It can seek
 * when the file can. Close the stream, then free the splice. */
npyio_status cli_splice_open(const void *prefix, size_t prefix_len,
                             FILE *file, int64_t base,
                             const npyio_options *options, cli_splice **sp,
                             npyio_stream **out);
void cli_splice_free(cli_splice *s);

/* Whether the spliced stream can seek (its file can). */
int cli_splice_seekable(const cli_splice *s);

#endif
