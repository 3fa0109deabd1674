/*
 * header_io.h - a .npy header read from, or written to, any stream: the
 * one place the reader (and through it archive members), the writers
 * (new files, appends and in-place opens, archive members) and maps get
 * or put their headers.
 */
#ifndef NPYIO_HEADER_IO_H
#define NPYIO_HEADER_IO_H

#include "alloc.h"
#include "header.h"
#include "stream.h"

/*
 * Read and parse the header at the stream's position without reading past
 * it (a pipe cannot give bytes back): magic and version, the length field,
 * then the text, whose size is checked against the limit and, on a
 * seekable stream, against what the stream holds before it is allocated.
 * The stream is left at the first byte of the data.
 */
npyio_status npyio__header_read(npyio_stream *s, const npyio_options *options,
                                const npyio__mem *mem, npyio_header **out);

/*
 * At the start of the data: NPYIO_E_TRUNCATED if a seekable stream holds
 * fewer bytes than the header promises (a map of a short file would fault
 * when read; a reader would fail after filling the caller's buffer).
 * *checked says whether the length is known to be there (read ahead
 * already, or counted): object arrays (a pickle of unknown length) and
 * pipes pass unchecked.
 */
npyio_status npyio__header_check_data(npyio_stream *s, const npyio_header *h,
                                     bool *checked);

/* Emit the header as np.save would (the smallest version that holds it, or
 * `version` if nonzero) and write it at the stream's position. */
npyio_status npyio__header_write(npyio_stream *s, const npyio__mem *mem,
                                 const npyio_header *h, int version);

#endif /* NPYIO_HEADER_IO_H */
