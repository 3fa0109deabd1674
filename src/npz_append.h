/*
 * npz_append.h - members added to an existing archive, private side.
 */
#ifndef NPYIO_NPZ_APPEND_H
#define NPYIO_NPZ_APPEND_H

#include "stream.h"

/*
 * npyio_npz_writer_open_append_path over streams instead of a path: the archive read
 * from `original` (read at offsets; locked exclusively here where its
 * back end can), and written whole into `out` (empty, at offset 0; the
 * back end needs pwrite and resize), whose commit at close makes the
 * result final. Both are borrowed: closed by the caller after the
 * writer. flags as for npyio_npz_writer_open_append_path but NPYIO_WRITE_NO_SYNC
 * (durability is the streams' own: a commit without it).
 */
npyio_status npyio__npz_open_append_streams(npyio_stream *original,
                                            npyio_stream *out,
                                            uint32_t flags,
                                            const npyio_options *options,
                                            npyio_npz_writer **writer);

/* npyio_npz_writer_open_append_path(), naming `where`, the public call
 * the caller made, in messages. */
npyio_status npyio__npz_open_append_path(const char *path, uint32_t flags,
                                         const npyio_options *options,
                                         const char *where,
                                         npyio_npz_writer **out);

#endif /* NPYIO_NPZ_APPEND_H */
