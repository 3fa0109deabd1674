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
#include "os.h"
#include "splice.h"

#define EXIT_INVALID 1 /* invalid, unsupported or unreadable input */
#define EXIT_USAGE 2   /* the command line is wrong */

/* The command line of one command, once parsed. */
typedef struct cli_args {
    const char *command; /* its name */
    char **files;        /* the positional arguments */
    int nfiles;
    int json;            /* info --json */
    int short_list;      /* info --short */
    int no_header;       /* info --no-header: --short without column names */
    int64_t max;         /* print --max N */
    char order;          /* convert --order: 'C' or 'F' */
    char byteorder;      /* convert --byteorder: '=', '<' or '>' */
    const char *dtype;   /* convert, wrap --dtype TYPE, or NULL */
    const char *shape;   /* wrap --shape D0,D1,..., or NULL */
    uint32_t cast_flags; /* convert --casting: NPYIO_READ_CAST_* */
    int no_sync;         /* convert, pack, unpack --no-sync */
    int level;           /* pack --compress[=LEVEL]: 0 stores */
    int no_align;        /* pack --no-align */
    int zlib;            /* pack --zlib: NPYIO_NPZ_WRITE_ZLIB */
    int append;          /* pack --append */
    int force;           /* unpack --force */
    int untrusted;       /* --untrusted */
    int64_t threads;     /* --threads N (0: one per core), -1 if not given */
    int64_t header_limit; /* --max-header-size, -1 if not given */
    npyio_options *options;
} cli_args;

/* An input file opened for reading: one .npy array, or an .npz archive
 * (npz set) whose chosen member, once chosen (cli_choose_member), is
 * read as an .npy array is. */
typedef struct cli_input {
    const char *name;
    FILE *file;          /* ours unless stdin */
    int64_t start;       /* the file offset where the .npy begins */
    const npyio_options *options;
    cli_splice *splice;
    npyio_stream *stream;
    npyio_reader *reader;   /* the array's, or the chosen member's */
    /* An archive: read through a stream over file (for standard input
     * that is not a file read from its start: over an unlinked temporary
     * copy of it, since ZIP's directory is at its end). */
    npyio_stream *archive_stream;
    npyio_npz *npz;
    size_t member;          /* the chosen member, when reader is set */
    npyio_stream *member_raw; /* its bytes, for reading past the reader */
    /* A long read's progress bar, moved by cli_read_through. */
    struct cli_progress *progress;
    uint64_t progress_done;
    /* The options of a reader of a header the tool wrote (see
     * cli_options_for_own_header), kept while the reader is. */
    npyio_options *own_options;
} cli_input;

/* The user's options for reading back a header the tool wrote itself
 * (np.save's form, which may be longer than a compact original that
 * --max-header-size let through): the header limit raised to len where
 * it is lower, the other limits as they are. NULL if out of memory. */
npyio_options *cli_options_for_own_header(const npyio_options *user,
                                          int64_t len);

/* Open name ("-" is stdin): an .npy file's header is read; an archive
 * (it starts as a ZIP file does, or it is a file that is no .npy file
 * but opens as an archive: bytes in front of one are allowed) has its
 * directory read and checked. On failure, prints "npyio: NAME: problem"
 * and returns EXIT_INVALID. */
int cli_open_input(const char *name, const npyio_options *options,
                   cli_input *in);
/* The same, but an .npy file whose data section is shorter than its
 * header says (a seekable file: found at open) is left for the caller to
 * report: its header in *cut and the message in *why (free both; both
 * NULL, and the message printed, for any other failure). */
int cli_open_input_cut(const char *name, const npyio_options *options,
                       cli_input *in, npyio_header **cut, char **why);
void cli_close_input(cli_input *in);

/* Open member `index` of the archive as the input's array (in->reader).
 * On failure, prints a message naming the member and returns
 * EXIT_INVALID. */
int cli_open_member(cli_input *in, size_t index);

/* A member's name as messages show it: "member 'a.npy'" (escaped). The
 * result is static, valid until the next call. */
const char *cli_member_label(const cli_input *in, size_t index);

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
 * are regular files. Returns 0 when copied, CLI_COPY_ELSEWHERE when
 * that cannot be done here (nothing was written: copy through a buffer
 * instead), or EXIT_INVALID after printing a message. */
#define CLI_COPY_ELSEWHERE (-1)
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
__attribute__((format(CLI_PRINTF_ARCHETYPE, 2, 3)))
#endif
int cli_error(const char *name, const char *format, ...);

/* Report the library's last error for name, as cli_error does; returns
 * EXIT_INVALID. */
int cli_fail(const char *name);
/* The same for a library message kept from earlier. */
int cli_fail_with(const char *name, const char *message);
/* A failed read of the input's array: as cli_fail, but a member whose
 * bytes are damaged is reported as the library's check of the whole
 * member reports it. */
int cli_fail_reading(cli_input *in);
/* The library's last message as cli_fail shows it (without the name of
 * the library function, which the tool's user did not call). */
const char *cli_library_message(void);

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

/* Reads of at least this many bytes show a bar (shorter ones would only
 * flicker). */
#define CLI_PROGRESS_MIN ((uint64_t)64 << 20)

/* A bar for the input's reads when total is long enough; detach ends it. */
void cli_progress_attach(cli_input *in, cli_progress *p, const char *label,
                         uint64_t total);
void cli_progress_detach(cli_input *in);

/* ---- what the reading commands share (common.c) ---- */

/* Read all of the data in bounded chunks (for a pipe, this is how a short
 * data section is found); write each chunk to sink if given (flushed
 * first, then written to its descriptor: one write() a chunk). Returns 0,
 * or EXIT_INVALID after a message. */
int cli_read_through(cli_input *in, uint32_t flags, FILE *sink);

/* All of p to descriptor fd, through short writes and EINTR: 0, or -1
 * with errno. */
int cli_write_all(int fd, const void *p, size_t len);

/* Open each FILE in turn and run act on it, or archive_act when it is an
 * .npz archive. Returns EXIT_INVALID if any failed, else 0. */
int cli_each_input(const cli_args *a,
                   int (*act)(const cli_args *a, cli_input *in),
                   int (*archive_act)(const cli_args *a, cli_input *in));
/* The same, with cut_act (if not NULL) reporting an .npy file whose data
 * is shorter than its header says: given the header and the message. */
typedef void cli_cut_act(const cli_args *a, const char *name,
                         const npyio_header *h, const char *why);
int cli_each_input_cut(const cli_args *a,
                       int (*act)(const cli_args *a, cli_input *in),
                       int (*archive_act)(const cli_args *a, cli_input *in),
                       cli_cut_act *cut_act);

/* Open the one FILE and run act on it: an .npy file (a MEMBER argument
 * is refused), or the MEMBER of an archive (cli_choose_member). Output
 * goes to stdout, flushed before returning. */
int cli_one_input(const cli_args *a,
                  int (*act)(const cli_args *a, cli_input *in));

/* ---- an archive's members (archive.c) ---- */

/* A member's statistic (npyio_npz_stat), -1 where it has none. */
int64_t cli_member_stat(const cli_input *in, size_t i, npyio_npz_stat_id field);

/* A compression method's name as Python's zipfile gives it ("stored",
 * "deflate", ...), else "method N" written in buf. */
const char *cli_method_name(int64_t method, char buf[32]);

/* Why npyio cannot read member i (NPYIO_NPZ_STAT_READABLE is 0): static text
 * or buf. */
const char *cli_unreadable_reason(const cli_input *in, size_t i,
                                  char buf[96]);

/* Whether the open member i (in->reader) is shorter than its .npy
 * header says (object arrays never are: a pickle has no declared
 * length): 0, or 1 with the problem written to why. */
int cli_member_too_short(cli_input *in, size_t i, char *why, size_t cap);

/* The member print and dump work on: a->files[1], found as np.load finds
 * it, opened as in->reader. Without one, or without that member, an
 * error naming the members; returns 0 or EXIT_INVALID. */
int cli_choose_member(const cli_args *a, cli_input *in);

/* Header facts as info prints them (info.c): the nine keys of the JSON
 * contract, after a comma, or text lines indented by `indent` spaces. */
void cli_json_string(FILE *out, const char *s);
void cli_put_header_json(FILE *out, const npyio_header *h);
void cli_put_header_text(FILE *out, const npyio_header *h, int indent);

/* ---- the commands, one file each; npyio.c calls them ---- */
int cli_info(const cli_args *a);          /* info.c */
int cli_validate(const cli_args *a);      /* validate.c */
int cli_dump(const cli_args *a);          /* dump.c */
int cli_print_command(const cli_args *a); /* print.c */
int cli_convert(const cli_args *a);       /* convert.c */
int cli_pack(const cli_args *a);          /* pack.c */
int cli_unpack(const cli_args *a);        /* unpack.c */
int cli_wrap(const cli_args *a);          /* wrap.c */
/* wrap's usage line: its --help's first line, and its usage errors'. */
#define CLI_WRAP_USAGE                                                       \
    "usage: npyio wrap --dtype TYPE --shape D0,D1,... [--order C|F] "        \
    "[--no-sync] RAW OUT"

/* OUT for the commands that write one .npy file (convert.c): a path,
 * replaced atomically by the library's writer, or - for standard output
 * (through *stream, which the caller closes after the writer). */
npyio_status cli_open_output(const char *name, const npyio_header *h,
                             int no_sync, const npyio_options *options,
                             npyio_stream **stream, npyio_writer **w);

#endif
