/*
 * map.h - maps, private side: an array mapped where it lies in a stream,
 * for archives whose stored members are .npy files at any offset.
 */
#ifndef NPYIO_MAP_H
#define NPYIO_MAP_H

#include "stream.h"

/*
 * Map the .npy array in bytes [start, start + length) of `file` (a stream
 * whose back end maps: a file): its header is read and checked there (the
 * data must lie within the range), then only the pages of its data are
 * mapped, shared, read-only or read-write (flags: NPYIO_MAP_WRITE,
 * NPYIO_WRITE_NO_SYNC as for npyio_map_open_path()). The stream may be closed
 * afterwards (the mapping keeps the file).
 */
npyio_status npyio__map_array_at(npyio_stream *file, int64_t start,
                                 int64_t length, uint32_t flags,
                                 const npyio_options *options,
                                 npyio_map **out);

#endif /* NPYIO_MAP_H */
