/*
 * writer_core.h - what the writer's core (writer.c: new arrays, unknown
 * row counts) shares with the row writers built on it (writer_rows.c:
 * appending rows, writing rows in place): the handle's layout, the sinks
 * that say what closing means, and the core's helpers. Private to those
 * two files; the rest of the library uses writer.h.
 */
#ifndef NPYIO_WRITER_CORE_H
#define NPYIO_WRITER_CORE_H

#include "alloc.h"
#include "error.h"
#include "header.h"
#include "stream.h"

#define NPYIO__MAGIC_WRITER 0x57525452u /* "WRTR" */

/*
 * One writer core (the stream, the byte count, the sticky failure) over
 * sinks, which say what closing means: a new array on a stream (the
 * caller's, or a replacing file that close commits), rows appended to an
 * existing file, or rows written in place.
 */
typedef struct npyio__writer_sink {
    const char *name;
    /* At close, after every write succeeded: the last checks, the header
     * rewritten if it must be, the result made final. `where` is the
     * public call that closes (npyio_writer_close, or a task call such as
     * npyio_append that closes its own writer). */
    npyio_status (*finish)(npyio_writer *w, const char *where);
    /* When the writer is released unfinished (failed, aborted, or finish
     * failed): put back what it changed, where it can. May be NULL. */
    void (*undo)(npyio_writer *w);
    /* Before `len` more bytes are written through the stream (an append
     * keeps what they overwrite). May be NULL. */
    npyio_status (*before_write)(npyio_writer *w, size_t len);
    /* Writes rows at positions (npyio_writer_write_rows), never bytes in
     * sequence (npyio_writer_write). */
    bool rows_only;
} npyio__writer_sink;

struct npyio_writer {
    uint32_t magic;
    const npyio__writer_sink *sink;
    npyio_stream *stream;  /* where the bytes go */
    bool owns_stream;      /* closed with the writer (a close before the
                              sink's finish aborts it) */
    bool unknown_rows;     /* the row count goes into the header at close */
    bool durable;
    bool objects;          /* a pickle: no byte count applies */
    uint64_t expected;     /* nbytes from the header */
    uint64_t written;
    npyio__sticky sticky;  /* the first error, repeated afterwards */
    npyio__mem mem;
    /* A new file's header, not written yet: it goes out with the first
     * data, in one write when both are small (nobody sees the file before
     * the commit, so the order of the system calls is ours to choose). */
    unsigned char pending[256];
    size_t pending_len;
    /* unknown rows, append, in place: */
    npyio_header *layout;  /* the file's header, as it stands */
    uint64_t row_bytes;
    int64_t header_at;     /* stream position of the header (unknown rows) */
    char *path;            /* append: for a rewrite through a temporary
                              (NULL: a stream, which cannot have one) */
    /* append: */
    int64_t rows_added;    /* the rows header's shape[0] */
    int64_t old_size;      /* the file's length at open, restored if the
                              append fails or is aborted */
    unsigned char *old_header; /* the header's bytes as read at open */
    bool undo_append;      /* until the new header is in place */
    unsigned char *tail;   /* the bytes the rows overwrote (those the file
                              had after its data), to put back on failure */
    size_t tail_len, tail_cap;
};

/* A writer for the array h describes (NULL: none yet, rows in place),
 * with `flags`' durability, on no stream yet, with the new-array sink. */
npyio_status npyio__writer_new(const npyio_header *h, uint32_t flags,
                               const npyio_options *options,
                               npyio_writer **out);

/* Release the writer: what the sink left unfinished is undone, a stream
 * of ours closed (a replacing file not committed is removed). */
void npyio__writer_release(npyio_writer *w);

/* NPYIO_E_INVALID_ARG unless w is a live writer. */
npyio_status npyio__writer_check_handle(const npyio_writer *w,
                                        const char *where);

/* out not NULL (and cleared), h a header. */
npyio_status npyio__writer_check_open_args(const npyio_header *h,
                                           npyio_writer **out,
                                           const char *where);

/* Bytes per row along axis 0, and that the layout allows rows to be added
 * or written there: C order (rows contiguous), numbers, at least 1-D. */
npyio_status npyio__writer_row_layout(const npyio_header *h,
                                      uint64_t *row_bytes, const char *where);

/* A copy of h with shape[0] = rows (sizes recomputed), in C order;
 * `where` names the public call made in messages. */
npyio_status npyio__writer_with_rows(npyio_writer *w, const npyio_header *h,
                                     int64_t rows, const char *where,
                                     npyio_header **out);

#endif /* NPYIO_WRITER_CORE_H */
