/*
 * pipeline.h - --threads N of convert and dump: the array's data cut into
 * parts of whole units (elements, or rows along axis 0), each part
 * produced (read and converted, or inflated) by one of N threads into one
 * of 2N reusable buffers, and written out in order by the calling thread
 * while the next parts are produced (pipeline.c). Memory: 2N buffers of
 * about CLI_PART_BYTES, whatever the array's size; each buffer is touched
 * on its first use and then reused, so no page of a whole-array buffer
 * is faulted in. Built on POSIX threads, as the library is.
 */
#ifndef NPYIO_CLI_PIPELINE_H
#define NPYIO_CLI_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"

/* A part's size: large enough that a thread's wake-up and a write() cost
 * little beside it, small enough that 2N of them stay in the caches'
 * neighbourhood (4 MiB: 16 MiB in all on two threads). */
#define CLI_PART_BYTES ((size_t)4 << 20)

/* The most threads a pipeline runs (the library's NPYIO_LIMIT_THREADS
 * bound). */
#define CLI_PIPE_MAX_THREADS 64

/* Put units [first, first + count) into buf (count * out_unit bytes),
 * on the thread numbered `worker` (0 to threads - 1: its own reader). */
typedef npyio_status (*cli_produce_fn)(void *ctx, unsigned worker,
                                       uint64_t first, uint64_t count,
                                       unsigned char *buf);
/* Write len bytes of buf out (on the calling thread, parts in order). */
typedef npyio_status (*cli_sink_fn)(void *ctx, const unsigned char *buf,
                                    size_t len);

typedef struct cli_pipeline {
    cli_produce_fn produce;
    cli_sink_fn sink;
    void *ctx;
    uint64_t units;   /* in the whole array */
    size_t out_unit;  /* bytes one unit takes in the output */
    unsigned threads; /* producers, 1 to CLI_PIPE_MAX_THREADS */
    cli_progress *bar; /* moved as parts are written, or NULL */
} cli_pipeline;

/* How the run ended. */
#define CLI_PIPE_DONE 0
#define CLI_PIPE_READ 1  /* a part could not be produced: the parts
                          * before it were written, in order */
#define CLI_PIPE_WRITE 2 /* the sink failed */

/* Run the pipeline: CLI_PIPE_DONE, or how it failed, with the status in
 * *st and, for CLI_PIPE_READ, the producing thread's library message in
 * message (cap bytes). NPYIO_E_NOMEM (CLI_PIPE_READ) when the buffers
 * cannot be had. A thread that cannot be started leaves its share to
 * the others (none started: the calling thread does it all). */
int cli_pipeline_run(const cli_pipeline *p, npyio_status *st, char *message,
                     size_t cap);

/* Units of out_unit bytes a part holds: at least 1. */
uint64_t cli_part_units(size_t out_unit);

#endif
