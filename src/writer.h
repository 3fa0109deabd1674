/*
 * writer.h - writers, private side: what the archive layer needs to write
 * a member through a writer.
 */
#ifndef NPYIO_WRITER_H
#define NPYIO_WRITER_H

#include "internal.h"

/*
 * A writer of a new array over a stream it takes: closing the writer
 * commits the stream (an archive member's entry is finished) and closes
 * it; a writer released unfinished closes it without a commit, and a
 * failure here closes it too. flags: NPYIO_WRITE_UNKNOWN_ROWS. `where`
 * names the public function in messages.
 */
npyio_status npyio__writer_adopt(npyio_stream *stream,
                                 const npyio_header *header, uint32_t flags,
                                 const npyio_options *options,
                                 const char *where, npyio_writer **out);

/*
 * What such a writer would refuse about the header and flags (rows of a
 * 0-d, Fortran-order or object array with NPYIO_WRITE_UNKNOWN_ROWS; a
 * header that cannot be written), checked before an archive starts the
 * member: a refusal after that would fail the whole archive.
 */
/* npyio_writer_open_append_stream and npyio_writer_open_in_place_stream
 * without their check of the stream's abilities (tests reach the back
 * ends' own refusals through these), with those functions' names in
 * messages; the stream is borrowed (closed by the caller after the
 * writer) and read from offset 0: one that reads and writes at offsets
 * and, for an append, can be resized, locked here where its back end can.
 * An append whose header has no room for the new row count fails at
 * close (NPYIO_E_UNSUPPORTED): only a path can be rewritten through a
 * temporary. */
npyio_status npyio__writer_open_append_stream(npyio_stream *stream,
                                              const npyio_header *rows,
                                              uint32_t flags,
                                              const npyio_options *options,
                                              npyio_writer **out);
npyio_status npyio__writer_open_in_place_stream(npyio_stream *stream,
                                                uint32_t flags,
                                                const npyio_options *options,
                                                npyio_writer **out);

npyio_status npyio__writer_check(const npyio_header *header, uint32_t flags,
                                 const char *where);

/* The writer's calls for the library's own callers (the archive writer,
 * the task calls, appends rewritten through a copy): as the public ones,
 * but naming `where`, the public call the caller made, in messages. */
npyio_status npyio__writer_create_path(const char *path,
                                       const npyio_header *header,
                                       uint32_t flags,
                                       const npyio_options *options,
                                       const char *where, npyio_writer **out);
npyio_status npyio__writer_write(npyio_writer *writer, const void *data,
                                 size_t len, const char *where);
npyio_status npyio__writer_close(npyio_writer *writer, const char *where);
/* Write all of data and close the writer (aborted if the write fails). */
npyio_status npyio__writer_write_whole(npyio_writer *w, const void *data,
                                       size_t len, const char *where);
npyio_status npyio__writer_open_append_path(const char *path,
                                            const npyio_header *rows,
                                            uint32_t flags,
                                            const npyio_options *options,
                                            const char *where,
                                            npyio_writer **out);
/* npyio_save_with_header(), naming `where`. */
npyio_status npyio__save(const char *path, const npyio_header *header,
                         const void *data, size_t len, uint32_t flags,
                         const npyio_options *options, const char *where);

#endif /* NPYIO_WRITER_H */
