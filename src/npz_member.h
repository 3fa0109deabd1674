/*
 * npz_member.h - the bytes of one archive member as a stream: stored
 * members read from the archive where they lie, deflated ones inflated as
 * they are read, straight into the caller's buffer. Either way the CRC-32
 * is checked when a read reaches the member's end having seen every byte
 * from the start (NPYIO_E_CHECKSUM, naming the member), and a deflate
 * stream must end exactly at the declared size.
 */
#ifndef NPYIO_NPZ_MEMBER_H
#define NPYIO_NPZ_MEMBER_H

#include "zip_dir.h"

/*
 * A read-only stream over the uncompressed bytes of entry e of the archive
 * in `archive` (borrowed, as is e: both must outlive the stream). Seekable:
 * a stored member at no cost (with positioned reads where the archive has
 * them); a deflated one by inflating forward, and backward by starting
 * again from the member's start. The method must be stored or deflated,
 * unencrypted (the caller checks). `small`: only the first bytes will be
 * read (a probe), so a small input buffer does. Failures: NPYIO_E_NOMEM.
 */
npyio_status npyio__member_open(npyio_stream *archive,
                                const npyio__zip_entry *e, bool small,
                                const npyio_options *options,
                                npyio_stream **out);

#endif /* NPYIO_NPZ_MEMBER_H */
