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

#include "alloc.h"

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
 * pread_part  for a back end whose reads keep a sum (finish): a pread
 *        made by the job of one part of a read in parts
 *        (npyio__stream_read_parts), safe on several threads at once: it
 *        touches nothing but that part, whose sum it extends over bytes
 *        read where the sum ends (start + summed); the end of the data is
 *        a short read, not a failure.
 * parts_done  every part of such a read was read whole: the back end
 *        takes their sums, in order, as its own reads' (true), or keeps
 *        its own (false: the bytes are read again in order, which reports
 *        what is wrong with them as one thread does).
 * probe  learn what the object is (whether it can seek, and the table that
 *        serves it from now on), the first time that matters: a back end
 *        that opened its object itself may put the question off, so that
 *        a small file read whole never asks (one fstat fewer).
 *
 * What appenders, in-place writers, maps and archive appends need (the
 * public callback table, npyio_stream_ops, offers pwrite, resize as its
 * truncate, sync and lock among its optional members; stream_ops.c maps
 * them here):
 * pwrite up to len bytes (len > 0) at offset, without moving the
 *        position; *put > 0 on success.
 * resize make the stream's data exactly `size` bytes long (cut, or
 *        extended with zeros); reserve: extend it to `size` with its
 *        storage reserved (a full disk fails here, not later when a map is
 *        written), a longer stream left as it is.
 * lock   an advisory lock on the whole object, shared or exclusive,
 *        waiting for it or not: NPYIO_E_LOCKED if another holds it. NULL:
 *        nothing else can reach the object (memory), nothing to lock.
 * copy_from  make this stream (empty, at offset 0) hold the first len
 *        bytes of `from`, without the bytes passing through the process
 *        (a clone, a kernel copy); NPYIO_E_UNSUPPORTED, with nothing
 *        written, where it cannot between these two: the core then copies
 *        through a buffer.
 * map    a region of len bytes (len > 0) at offset mapped into memory,
 *        shared with the object (writes through it reach the object);
 *        region->release undoes it.
 * room   for a read of cap bytes at the current position, how many bytes
 *        just before the destination read_room would overwrite (its
 *        scratch: an archive member inflated whole writes its bytes from
 *        its first there, the .npy header before the data), or 0 when it
 *        would not use them. May be NULL (never).
 * read_room  read, as read does, with the `room` bytes just before buf
 *        the back end's to overwrite (room as its room op asked).
 * descriptor  the file descriptor under the stream, or -1: only for one
 *        descriptor back end's copy_from to find another's (never outside
 *        the back ends).
 */
typedef struct npyio__region npyio__region;

/* One part of a read in parts (see npyio__stream_read_parts). */
typedef struct npyio__stream_part {
    int64_t start;       /* the stream offset of its first byte */
    uint64_t len;        /* its bytes */
    uint64_t first, end; /* its units, [first, end) */
    uint64_t summed;     /* bytes from start a summing back end summed */
    uint32_t sum;        /* their sum (an archive member's: CRC-32) */
    npyio_status status; /* its job's outcome */
} npyio__stream_part;

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
    npyio_status (*pread_part)(void *state, void *buf, size_t cap,
                               int64_t offset, size_t *got,
                               npyio__stream_part *part);
    bool (*parts_done)(void *state, const npyio__stream_part *parts,
                       size_t count);
    void (*probe)(void *state, bool *seekable,
                  const struct npyio__stream_backend **backend);
    npyio_status (*pwrite)(void *state, const void *buf, size_t len,
                           int64_t offset, size_t *put);
    npyio_status (*resize)(void *state, int64_t size, bool reserve);
    npyio_status (*lock)(void *state, bool exclusive, bool wait);
    npyio_status (*copy_from)(void *state, npyio_stream *from, int64_t len,
                              const char **how);
    npyio_status (*map)(void *state, int64_t offset, size_t len,
                        bool writable, npyio__region *region);
    int (*descriptor)(void *state);
    size_t (*room)(void *state, size_t cap);
    npyio_status (*read_room)(void *state, void *buf, size_t cap,
                              size_t room, size_t *got);
} npyio__stream_backend;

/* A mapped region: `data` is the byte at the offset asked for; base and
 * len the whole mapping (page aligned), for release(base, len, sync),
 * which syncs writes to storage first when `sync` is set. */
struct npyio__region {
    void *data;
    void *base;
    size_t len;
    npyio_status (*release)(void *base, size_t len, bool sync);
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

/*
 * A read in parts: `units` units of unit_bytes bytes from stream offset
 * `start`, cut into parts (npyio__part_start) for `threads` threads (the
 * thread policy's, npyio__thread_count) by npyio__stream_parts_cut, each
 * read by job(ctx, k, part) on one thread with npyio__stream_pread_part,
 * which sets part->status. The one parallel positioned-read loop of the
 * library: whole loads of arrays (reader_parallel.c) and whole reads of
 * stored archive members (npz_member.c) run on it.
 */
#define NPYIO__MAX_PARTS 64

typedef struct npyio__stream_parts {
    npyio_stream *stream;
    unsigned threads;
    size_t count;
    npyio__stream_part part[NPYIO__MAX_PARTS];
} npyio__stream_parts;

/* Cut the read (count 1: not worth threads; count is at most
 * NPYIO__MAX_PARTS). */
void npyio__stream_parts_cut(npyio__stream_parts *p, npyio_stream *s,
                             int64_t start, uint64_t units,
                             size_t unit_bytes, unsigned threads);

/* Can s be read in parts: positioned reads, and a back end whose reads
 * keep a sum keeps one per part (pread_part)? */
bool npyio__stream_reads_in_parts(const npyio_stream *s);

/* Run the jobs. True: every part succeeded, and a back end whose reads
 * keep a sum took the parts' sums (parts_done); false: the caller reads
 * the bytes again on one thread, which reports any failure as one thread
 * does. The thread's message is as it was before the call. */
bool npyio__stream_read_parts(npyio__stream_parts *p,
                              void (*job)(void *ctx, size_t k,
                                          npyio__stream_part *part),
                              void *ctx);

/* npyio__stream_pread for the job of `part` (NULL: no read in parts):
 * through the back end's pread_part where it has one. */
npyio_status npyio__stream_pread_part(npyio_stream *s,
                                      npyio__stream_part *part, void *buf,
                                      size_t len, int64_t offset,
                                      size_t *got, const char *what);

/* One pread of the back end, as it answers (no loop, nothing added to its
 * message): for back ends that read through another stream. */
npyio_status npyio__stream_pread_some(npyio_stream *s, void *buf, size_t cap,
                                      int64_t offset, size_t *got);

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

/* npyio_stream_close() for the library's own streams: its message names
 * no public call (the caller's call is named by its entry). */
npyio_status npyio__stream_close(npyio_stream *stream);

/* Push what was written to the file; durable: to stable storage too. */
npyio_status npyio__stream_sync(npyio_stream *s, bool durable);

/* Commit (see the table above), or sync where the back end has no
 * commit. */
npyio_status npyio__stream_commit(npyio_stream *s, bool durable);

/* The consumer is done reading (see the table above). */
npyio_status npyio__stream_finish(npyio_stream *s);

/* Abort (see the table above); nothing where the back end cannot. */
void npyio__stream_abort(npyio_stream *s);

/* Write all len bytes at offset without moving the position, looping on
 * short writes (streams whose back end has pwrite). */
npyio_status npyio__stream_pwrite(npyio_stream *s, const void *buf,
                                  size_t len, int64_t offset,
                                  const char *what);

/* Resize (see the table above): NPYIO_E_UNSUPPORTED where the back end
 * cannot. */
npyio_status npyio__stream_resize(npyio_stream *s, int64_t size,
                                  bool reserve);

/* Lock (see the table above); NPYIO_OK where the back end has no lock. */
npyio_status npyio__stream_lock(npyio_stream *s, bool exclusive, bool wait);

/* Make `to` (empty, at offset 0) hold the first len bytes of `from` (read
 * at offsets: its position does not move), then leave `to` at offset len:
 * by the back end's copy_from where it can, else through a 64 KiB buffer
 * from to's allocator. *how says which ("clone", "kernel copy",
 * "buffered copy"). */
npyio_status npyio__stream_copy(npyio_stream *to, npyio_stream *from,
                                int64_t len, const char **how);

/* Map len bytes at offset (len 0 maps one byte: a valid pointer);
 * NPYIO_E_UNSUPPORTED where the back end cannot. */
npyio_status npyio__stream_map(npyio_stream *s, int64_t offset, size_t len,
                               bool writable, npyio__region *region);
/* Release a region from npyio__stream_map (after syncing its writes to
 * storage when `sync`); a region never mapped (base NULL) is nothing. */
npyio_status npyio__region_release(npyio__region *region, bool sync);

/* Can the stream do what rows written into an existing file need: seek,
 * read and write at offsets, and with `resize` change its length (an
 * append)? NPYIO_E_UNSUPPORTED naming the first it lacks, for `where`. */
npyio_status npyio__stream_require(npyio_stream *s, bool resize,
                                   const char *where);

/* The descriptor under a stream, or -1 (see the table above). */
int npyio__stream_descriptor(npyio_stream *s);

/* ---- what the stream's owner sets and asks --------------------------------
 * The stream's own fields are stream.c's; back ends and consumers reach
 * them through these. */

/* The back end's state, for a back end's own calls on its streams. */
void *npyio__stream_state(npyio_stream *s);
/* The back end's state if s is a stream of that back end, else NULL. */
void *npyio__stream_state_of(npyio_stream *s,
                             const npyio__stream_backend *backend);
/* The allocator the stream was made with (its options'). */
const npyio__mem *npyio__stream_mem(npyio_stream *s);
/* Serve the stream from `backend` from now on (a table the back end
 * built in its own state, for the operations its object has); seekable
 * when it has seek. */
void npyio__stream_set_backend(npyio_stream *s,
                               const npyio__stream_backend *backend);
/* A back end found its object cannot seek (a pipe), or can. */
void npyio__stream_set_seekable(npyio_stream *s, bool seekable);
/* The stream is at absolute offset pos (known), or at a position counted
 * from where it was opened (not known). */
void npyio__stream_set_position(npyio_stream *s, int64_t pos, bool known);
/* Ask the back end's probe what the object is the first time that
 * matters, not at open. */
void npyio__stream_defer_probe(npyio_stream *s);
/* The absolute position, if known without a call: true and *pos. */
bool npyio__stream_known_position(const npyio_stream *s, int64_t *pos);
/* The back end's name, for messages ("descriptor", "memory"). */
const char *npyio__stream_kind(const npyio_stream *s);
/* Does the back end read at offsets (pread)? */
bool npyio__stream_has_pread(const npyio_stream *s);

/* The bytes just before the destination a read of len bytes from here
 * would use as scratch (the back end's room op), or 0: a caller that can
 * give them (its own block, larger by that much) reads with
 * npyio__stream_read_room and saves the back end a scratch block. */
size_t npyio__stream_room(const npyio_stream *s, size_t len);

/* npyio__stream_read, the `room` bytes just before buf (as
 * npyio__stream_room asked) given to the back end to overwrite. */
npyio_status npyio__stream_read_room(npyio_stream *s, void *buf, size_t len,
                                     size_t room, size_t *got,
                                     const char *what);
/* Does the back end check what was read when the consumer is done
 * (finish: an archive member's CRC)? Its reads then keep a sum. */
bool npyio__stream_has_finish(const npyio_stream *s);

/* Check that a pointer is a live stream. */
npyio_status npyio__check_stream(const npyio_stream *s, const char *where);

/*
 * A read-only stream over `length` bytes of `parent` from `offset`, read
 * with the parent's pread: the parent's position does not move, and
 * windows of one parent may be read from several threads at once. The
 * parent must stay open while the window is. Seekable within the window.
 * NPYIO_E_UNSUPPORTED if the parent has no pread (pipes, FILEs, callbacks
 * without a pread member).
 */
npyio_status npyio__stream_open_window(npyio_stream *parent, int64_t offset,
                                       int64_t length,
                                       const npyio_options *options,
                                       npyio_stream **out);

/* A stream over a descriptor, closed with the stream when `owned`. */
npyio_status npyio__stream_open_fd(int fd, bool owned,
                                   const npyio_options *options,
                                   npyio_stream **out);

/* A stream that owns a descriptor of a regular file opened here
 * read-write, to append to or write in place: a durable sync is fdatasync
 * (the data and the length, not the times). */
npyio_status npyio__stream_open_fd_file(int fd, const npyio_options *options,
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
/* The same for the file `path` below the folder `base`, no link below
 * base followed, an existing file refused without `replace`, at the open
 * and at the commit (replace.h's npyio__atomic_open_under). */
npyio_status npyio__stream_open_replacing_under(const char *base,
                                                const char *path,
                                                bool replace,
                                                const npyio_options *options,
                                                npyio_stream **out);

/* An existing file read-write (npyio__stream_open_fd_file), locked
 * exclusive or shared, waiting for the lock or not: NPYIO_E_LOCKED if
 * another holds one that conflicts. A file replaced at the path while we
 * waited is let go and the new one locked instead. */
npyio_status npyio__stream_open_locked(const char *path, bool exclusive,
                                       bool wait, const npyio_options *options,
                                       const char *where, npyio_stream **out);

/* An existing file: read-write (not locked), or for reading as
 * npyio_stream_open_path does; messages name `where` and the path. */
npyio_status npyio__stream_open_existing(const char *path, bool writable,
                                         const npyio_options *options,
                                         const char *where,
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
