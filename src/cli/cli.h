/*
 * cli.h - what the commands of the `npyio` tool share: exit codes, the
 * parsed command line, and opening an input file. Built on the public API
 * only (include/npyio.h).
 */
#ifndef NPYIO_CLI_H
#define NPYIO_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "npyio.h"
#include "splice.h"

#define EXIT_INVALID 1 /* invalid, unsupported or unreadable input */
#define EXIT_USAGE 2   /* the command line is wrong */

/* The command line of one command, once parsed. */
typedef struct cli_args {
    const char *command; /* its name */
    char **files;        /* the positional arguments */
    int nfiles;
    int json;            /* info --json */
    int64_t max;         /* print --max N */
    char order;          /* convert --order: 'C' or 'F' */
    char byteorder;      /* convert --byteorder: '=', '<' or '>' */
    int no_sync;         /* convert --no-sync */
    npyio_options *options;
} cli_args;

/* An input file opened for reading one .npy array. */
typedef struct cli_input {
    const char *name;
    FILE *file;          /* ours unless stdin */
    int64_t start;       /* the file offset where the .npy begins */
    const npyio_options *options;
    cli_splice *splice;
    npyio_stream *stream;
    npyio_reader *reader;
} cli_input;

/* Open name ("-" is stdin) and read its header. On failure, prints
 * "npyio: NAME: problem" and returns EXIT_INVALID. */
int cli_open_input(const char *name, const npyio_options *options,
                   cli_input *in);
void cli_close_input(cli_input *in);

/* Reordering Fortran and C data needs seeks. For a pipe, copy the rest of
 * the input to an unlinked temporary file (in $TMPDIR, else /tmp) and read
 * from there: memory stays bounded, the disk holds the array. Nothing
 * happens if the input can seek. On failure, prints a message and returns
 * EXIT_INVALID. */
int cli_input_make_seekable(cli_input *in);

/* The data section's bytes as stored, read past the reader: an object
 * array's pickle, which the reader delivers only whole. Seek to the data
 * first (a pipe must not have been read beyond the header), then read
 * until *got is 0. On failure, prints a message and returns
 * EXIT_INVALID. */
int cli_input_seek_data(cli_input *in);
int cli_input_read_raw(cli_input *in, void *buf, size_t cap, size_t *got);

/* The data section as stored, copied to descriptor `out` inside the
 * kernel (copy_file_range on Linux, as cat does) when input and output
 * are regular files. Returns 0 when copied, 1 when that cannot be done
 * here (nothing was written: copy through a buffer instead), or
 * EXIT_INVALID after printing a message. */
int cli_input_copy_data(cli_input *in, int out);

/* Chunk sizes: for reading as stored, and for reordering. A reordered
 * chunk is gathered by the library from every column of the file its rows
 * touch: short columns cost one pass over the file per chunk (long ones a
 * positioned read per column), so the time grows with the number of
 * chunks. 64 MiB: three or four chunks for a 200 MB array, which then
 * converts faster than NumPy's load + asfortranarray in memory
 * (tests/bench/bench_reorder.c), in a bounded buffer. */
#define CLI_CHUNK ((size_t)1 << 20)
#define CLI_REORDER_CHUNK ((size_t)64 << 20)

/* Whether C and Fortran order lay the array out differently: at least two
 * axes longer than 1. */
int cli_layouts_differ(const npyio_header *h);

/* A data buffer, from free(): large ones 2 MiB aligned and advised for
 * huge pages, so that filling it does not fault on every 4 KiB page. NULL
 * if out of memory. */
void *cli_buffer(size_t size);

/* A buffer size for chunks of the array h describes: whole elements
 * within at_least (one element if that is more), as few as give the same
 * number of chunks (the whole array, if it is smaller). */
size_t cli_chunk_capacity(const npyio_header *h, size_t at_least);

/* File names and the user's other words go into text escaped: as
 * Python's repr() of os.fsdecode(name) shows it, without the quotes
 * (text_escape), so that no control character reaches a terminal and
 * every name reads back one way. info --json gives names exactly. */

/* Write name to `to`, escaped. */
void cli_put_name(FILE *to, const char *name);

/* "npyio: NAME: message" on stderr, NAME escaped, the message's control
 * and non-printable characters too; name NULL leaves out "NAME: ".
 * Returns EXIT_INVALID. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
int cli_error(const char *name, const char *format, ...);

/* Report the library's last error for name, as cli_error does; returns
 * EXIT_INVALID. */
int cli_fail(const char *name);

/* A progress bar on stderr, drawn only when stderr is a terminal. */
typedef struct cli_progress {
    const char *label;
    uint64_t total;
    int shown;           /* last percentage drawn, -1 before the first */
    int active;
} cli_progress;

void cli_progress_start(cli_progress *p, const char *label, uint64_t total);
void cli_progress_update(cli_progress *p, uint64_t done);
void cli_progress_end(cli_progress *p);

int cli_convert(const cli_args *a);

#endif
