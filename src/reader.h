/*
 * reader.h - readers, private side: what the archive layer needs to hand
 * a member to a reader.
 */
#ifndef NPYIO_READER_H
#define NPYIO_READER_H

#include "internal.h"

/*
 * A reader over a stream that stays the caller's: open, and on failure
 * too, until the caller closes it after the reader (an archive member's
 * stream, kept to ask it what a failed read learnt of the member's
 * bytes), or hands it to the reader with npyio__reader_take_stream.
 * `where` names the public function in messages.
 */
npyio_status npyio__reader_open_on(npyio_stream *stream,
                                   const npyio_options *options,
                                   const char *where, npyio_reader **out);

/* The reader closes its stream from now on (npyio_reader_close). */
void npyio__reader_take_stream(npyio_reader *r);

/* npyio_reader_open_path(), naming `where`, the public call the caller
 * made, in messages. */
npyio_status npyio__reader_open_path(const char *path,
                                     const npyio_options *options,
                                     const char *where, npyio_reader **out);

/*
 * Read all of an open reader's data (npyio_reader_read_alloc) and close
 * it: npyio_load_with_header()'s second half. `context` (a path, a member) prefixes
 * failures. The header handed back describes the data handed back. The
 * reader is closed whatever happens; on failure *header and *data are
 * NULL.
 */
npyio_status npyio__reader_load(npyio_reader *r, uint32_t flags,
                                const char *context, npyio_header **header,
                                void **data);

/*
 * The one-call loads' second half over an open reader: with `type` (NULL:
 * as stored) set as npyio_reader_set_type() sets it under `flags`, the
 * whole data in C order (native byte order when no type is given), its
 * size, the type's text (type_out NULL: not asked; a record's descr
 * list), ndim and shape (NPYIO_E_BUFFER_TOO_SMALL if shape_cap < ndim).
 * `context` prefixes the reader's failures, `where` names the call. The
 * reader is closed whatever happens; on failure *data is NULL, *len 0.
 */
npyio_status npyio__reader_load_as(npyio_reader *r, const char *type,
                                   uint32_t flags, const char *context,
                                   const char *where, void **data,
                                   size_t *len, char *type_out,
                                   size_t type_cap, int *ndim,
                                   int64_t *shape, size_t shape_cap);

/* The type of a loaded array as npyio_load() names it into type (type_cap
 * bytes): dtype.str, or the descr list of a record. `where` names the
 * call. */
npyio_status npyio__type_text(const npyio_dtype *dt, char *type,
                              size_t type_cap, const char *where);

/* The most bytes of the block that Fortran data read in C order in
 * pieces goes through (64 MiB; 0: none, every piece read as it comes).
 * For tests, to reach both ways with small arrays. */
void npyio__reader_set_block_bytes(npyio_reader *r, size_t bytes);

/* Check and clear the outputs of a one-call load (data, len, ndim, and
 * shape unless shape_cap is 0). */
npyio_status npyio__check_load_outputs(void **data, size_t *len, int *ndim,
                                       int64_t *shape, size_t shape_cap,
                                       const char *where);

#endif /* NPYIO_READER_H */
