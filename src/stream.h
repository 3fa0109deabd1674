/*
 * stream.h - the I/O abstraction, private side: what readers, writers and
 * archives call, and what a back end provides.
 *
 * A stream is a back end (a table of operations, below) over the back
 * end's own state, which the core never looks into: descriptors, stdio
 * FILEs, memory, growable memory, the caller's callbacks, and windows of
 * another stream each live in their own file and are reached only through
 * their table. The loops over short transfers, the position and the error
 * messages live in stream.c, once.
 */
#ifndef NPYIO_STREAM_H
#define NPYIO_STREAM_H

#include "internal.h"

#include <stdio.h>

#define NPYIO__MAGIC_STREAM 0x5354524du /* "STRM" */

/*
 * A back end's operations. Each returns NPYIO_OK, or a failure status with
 * the thread's message naming the cause (the core puts what was being
 * moved and where in front of it): a back end chooses its own status, so
 * a checksum failure reaches the caller as NPYIO_E_CHECKSUM. NULL means
 * the back end cannot do it.
 *
 * read   up to cap bytes (cap > 0); *got = 0 only at the end of the data.
 * write  up to len bytes (len > 0); *put > 0 on success.
 * seek   to offset from whence (NPYIO_SEEK_*); *pos the new position.
 * pread  up to cap bytes at offset, without moving the position, safe to
 *        call from several threads at once (windows use it).
 * size   the stream's total length, where the back end knows it without
 *        moving (fstat, a memory length): lengths are then checked with no
 *        seeks.
 * sync   push buffered bytes to the file (and, if durable, to stable
 *        storage); for the writers' close.
 * commit make what was written the result, all at once (a replacing
 *        file renamed over its destination; an archive member's entry
 *        finished); nothing may be written after it. Streams without
 *        commit sync instead.
 * abort  discard what was written, as far as the back end can (the
 *        replacing file removed); the stream is only closed after it.
 * close  release what the state holds (not the state's memory); a stream
 *        closed neither committed nor aborted is aborted.
 * buffered  bytes the back end holds that a read returns without I/O.
 * finish the consumer has read all it wants of the data: an archive
 *        member reads what is left of itself, to check its CRC-32 (a
 *        whole array read is then checked even when the member holds
 *        bytes after the array). May be NULL.
 * probe  learn what the object is (whether it can seek, and the table that
 *        serves it from now on), the first time that matters: a back end
 *        that opened its object itself may put the question off, so that
 *        a small file read whole never asks (one fstat fewer).
 */
typedef struct npyio__stream_backend {
    const char *name; /* for messages and tests: "descriptor", "memory" */
    npyio_status (*read)(void *state, void *buf, size_t cap, size_t *got);
    npyio_status (*write)(void *state, const void *buf, size_t len,
                          size_t *put);
    npyio_status (*seek)(void *state, int64_t offset, int whence,
                         int64_t *pos);
    npyio_status (*pread)(void *state, void *buf, size_t cap, int64_t offset,
                          size_t *got);
    npyio_status (*size)(void *state, int64_t *size);
    npyio_status (*sync)(void *state, bool durable);
    npyio_status (*commit)(void *state, bool durable);
    void (*abort)(void *state);
    npyio_status (*close)(void *state);
    size_t (*buffered)(void *state);
    npyio_status (*finish)(void *state);
    void (*probe)(void *state, bool *seekable,
                  const struct npyio__stream_backend **backend);
} npyio__stream_backend;

struct npyio_stream {
    uint32_t magic;
    const npyio__stream_backend *backend;
    void *state;       /* the back end's, allocated with the stream */
    bool seekable;     /* backend->seek exists and works on this object
                          (once probed: use npyio__stream_seekable()) */
    bool probe_pending; /* backend->probe has not been asked yet */
    npyio__mem mem;
    int64_t position;  /* bytes from where the stream was opened, or the
                          absolute offset once known (position_known) */
    bool position_known; /* position is the absolute offset: set by back
                            ends that know it at open, and by any seek */
};

/*
 * A new stream over `backend`, with state_size zeroed bytes of state
 * (max-aligned, allocated with the stream and released with it), given
 * back in *state. Seekable when the back end has seek; a back end that
 * finds its object cannot seek (a pipe) clears `seekable` after this.
 */
npyio_status npyio__stream_new(const npyio__stream_backend *backend,
                               size_t state_size,
                               const npyio_options *options,
                               npyio_stream **out, void **state);

/* The same, with `scratch` more bytes after the state, not zeroed. */
npyio_status npyio__stream_new_scratch(const npyio__stream_backend *backend,
                                       size_t state_size, size_t scratch,
                                       const npyio_options *options,
                                       npyio_stream **out, void **state);

/* Is this stream of that back end? (For a back end's own public calls.) */
bool npyio__stream_is(const npyio_stream *s,
                      const npyio__stream_backend *backend);

/* Read up to len bytes, looping on short reads; *got < len only at the
 * end of the data. `what` names the data in messages ("array data"). */
npyio_status npyio__stream_read(npyio_stream *s, void *buf, size_t len,
                                size_t *got, const char *what);

/* Write all len bytes, looping on short writes. */
npyio_status npyio__stream_write(npyio_stream *s, const void *buf, size_t len,
                                 const char *what);

bool npyio__stream_seekable(npyio_stream *s);
/* Bytes a read would return without I/O (the back end's read-ahead). */
size_t npyio__stream_buffered(npyio_stream *s);

npyio_status npyio__stream_seek(npyio_stream *s, int64_t offset, int whence,
                                int64_t *pos);

/* The absolute position of a seekable stream: without a system call where
 * it is known. */
npyio_status npyio__stream_tell(npyio_stream *s, int64_t *pos);

/* Bytes between the current position and the end (seekable streams). */
npyio_status npyio__stream_remaining(npyio_stream *s, uint64_t *bytes);

/* Read up to len bytes at offset without moving the position, looping on
 * short reads (streams whose back end has pread). */
npyio_status npyio__stream_pread(npyio_stream *s, void *buf, size_t len,
                                 int64_t offset, size_t *got,
                                 const char *what);

/* Read up to len bytes at offset, looping on short reads: with pread
 * where the back end has it (the position does not move), else by seeking
 * there and reading (the position moves; one thread at a time). */
npyio_status npyio__stream_read_at(npyio_stream *s, void *buf, size_t len,
                                   int64_t offset, size_t *got,
                                   const char *what);

/* The total length of a seekable stream (the back end's size, or a seek
 * to the end and back). */
npyio_status npyio__stream_length(npyio_stream *s, int64_t *length);

/*
 * Read to the end of the stream, or `want` bytes if want > 0, into one
 * block from mem that grows geometrically from 1 MiB (the allocation limit
 * applies to each step), so memory follows the bytes that actually arrive
 * where a stream's length cannot be known first (pipes). *len < want only
 * at the end of the data; the block is never NULL on success.
 */
npyio_status npyio__stream_read_all(npyio_stream *s, const npyio__mem *mem,
                                    size_t want, const char *what, void **out,
                                    size_t *len);

/* Push what was written to the file; durable: to stable storage too. */
npyio_status npyio__stream_sync(npyio_stream *s, bool durable);

/* Commit (see the table above), or sync where the back end has no
 * commit. */
npyio_status npyio__stream_commit(npyio_stream *s, bool durable);

/* The consumer is done reading (see the table above). */
npyio_status npyio__stream_finish(npyio_stream *s);

/* Abort (see the table above); nothing where the back end cannot. */
void npyio__stream_abort(npyio_stream *s);

/* Check that a pointer is a live stream. */
npyio_status npyio__check_stream(const npyio_stream *s, const char *where);

/*
 * A read-only stream over `length` bytes of `parent` from `offset`, read
 * with the parent's pread: the parent's position does not move, and
 * windows of one parent may be read from several threads at once. The
 * parent must stay open while the window is. Seekable within the window.
 * NPYIO_E_UNSUPPORTED if the parent has no pread (pipes, FILEs, callbacks).
 */
npyio_status npyio__stream_open_window(npyio_stream *parent, int64_t offset,
                                       int64_t length,
                                       const npyio_options *options,
                                       npyio_stream **out);

/* A stream over a descriptor, closed with the stream when `owned`. */
npyio_status npyio__stream_open_fd(int fd, bool owned,
                                   const npyio_options *options,
                                   npyio_stream **out);

/* A stream that owns a descriptor opened here for reading: a regular file
 * is read ahead in 4 KiB blocks (a small file's header and data in one
 * read), which no other stream does. */
npyio_status npyio__stream_open_fd_reading(int fd,
                                           const npyio_options *options,
                                           npyio_stream **out);

/*
 * A writable, seekable stream that replaces the file at `path` atomically
 * (replace.h's npyio__atomic: a temporary in its directory, renamed over
 * it by npyio__stream_commit, removed by an abort or a close without
 * commit). Messages name the path.
 */
npyio_status npyio__stream_open_replacing(const char *path,
                                          const npyio_options *options,
                                          npyio_stream **out);

/*
 * The one opener of what a reader or writer works on: the caller's stream
 * (borrowed: *owned false, the caller closes it), or, given a path, a
 * stream opened here (*owned true, closed with the handle): for reading,
 * the file; for writing, a replacing stream. `where` names the public
 * function in messages. Without a path, the stream is checked.
 */
npyio_status npyio__stream_acquire(const char *path, npyio_stream *stream,
                                   bool for_writing,
                                   const npyio_options *options,
                                   const char *where, npyio_stream **out,
                                   bool *owned);

#endif /* NPYIO_STREAM_H */
