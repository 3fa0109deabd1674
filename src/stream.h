/*
 * stream.h - the I/O abstraction, private side: what readers and writers
 * call. Every back end (callbacks, fd, path, FILE*, memory, growable)
 * presents the same npyio_stream_ops; the loops over short transfers and
 * the error messages live in stream.c, once.
 */
#ifndef NPYIO_STREAM_H
#define NPYIO_STREAM_H

#include "internal.h"

#include <stdio.h>

#define NPYIO__MAGIC_STREAM 0x5354524du /* "STRM" */

enum npyio__stream_kind {
    NPYIO__STREAM_OPS,
    NPYIO__STREAM_FD,   /* a descriptor: the caller's, or ours (path) */
    NPYIO__STREAM_FILE,
    NPYIO__STREAM_MEMORY,
    NPYIO__STREAM_GROWABLE
};

struct npyio_stream {
    uint32_t magic;
    int kind;
    npyio_stream_ops ops; /* the back end's callbacks */
    void *user;           /* their first argument */
    npyio__mem mem;
    int64_t position;     /* bytes from where the stream was opened, or
                             the absolute offset once known by seeking */
    union {
        struct {
            int fd;
            bool owned; /* opened from a path: closed with the stream */
        } fd;
        FILE *file;
        struct {
            const unsigned char *bytes;
            size_t len, pos;
        } memory;
        struct {
            unsigned char *bytes; /* an npyio__alloc block, or NULL */
            size_t len, pos;
        } growable;
    } u;
};

/* Read up to len bytes, looping on short reads; *got < len only at the
 * end of the data. `what` names the data in messages ("array data"). */
npyio_status npyio__stream_read(npyio_stream *s, void *buf, size_t len,
                                size_t *got, const char *what);

/* Write all len bytes, looping on short writes. */
npyio_status npyio__stream_write(npyio_stream *s, const void *buf, size_t len,
                                 const char *what);

bool npyio__stream_seekable(const npyio_stream *s);

npyio_status npyio__stream_seek(npyio_stream *s, int64_t offset, int whence,
                                int64_t *pos);

/* Bytes between the current position and the end (seekable streams). */
npyio_status npyio__stream_remaining(npyio_stream *s, uint64_t *bytes);

/* Check that a pointer is a live stream. */
npyio_status npyio__check_stream(const npyio_stream *s, const char *where);

/* Allocate and set up a stream of a kind with the given callbacks. */
npyio_status npyio__stream_new(int kind, const npyio_stream_ops *ops,
                               const npyio_options *options,
                               npyio_stream **out);

/* Flush and fsync a descriptor-backed stream (no-op for others). */
npyio_status npyio__stream_sync(npyio_stream *s, bool durable);

#endif /* NPYIO_STREAM_H */
