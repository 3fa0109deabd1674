/*
 * npz.h - archives opened for reading, private side: what the writer
 * needs to copy a member's bytes as they are stored.
 */
#ifndef NPYIO_NPZ_H
#define NPYIO_NPZ_H

#include "zip_dir.h"

/* The archive's stream and member index's entry (both borrowed from the
 * archive), for reading the member's stored bytes with
 * npyio__stream_read_at. NPYIO_E_INVALID_ARG for a bad handle or index. */
npyio_status npyio__npz_member_source(const npyio_npz *npz, size_t index,
                                      const char *where,
                                      npyio_stream **archive,
                                      const npyio__zip_entry **entry);

#endif /* NPYIO_NPZ_H */
