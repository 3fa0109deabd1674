/*
 * reader.h - readers, private side: what the archive layer needs to hand
 * a member to a reader.
 */
#ifndef NPYIO_READER_H
#define NPYIO_READER_H

#include "internal.h"

/*
 * A reader over a stream it takes: closed with the reader, or here if
 * opening fails. `where` names the public function in messages.
 */
npyio_status npyio__reader_adopt(npyio_stream *stream,
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

#endif /* NPYIO_READER_H */
