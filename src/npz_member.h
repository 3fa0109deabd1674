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

/*
 * Whether a member stream's bytes are whole: what its reads so far found
 * (a failure of its bytes they met, repeated), else the member read on to
 * its end from where they stopped (just opened: from its start; the
 * CRC-32 keeps what they covered, so a failed read's bytes are not read
 * again), checking its CRC-32 and that its deflate stream ends where
 * declared. NPYIO_OK if the member is whole. Otherwise the failure; when
 * it is one of the member's bytes (NPYIO_E_CHECKSUM, NPYIO_E_FORMAT,
 * NPYIO_E_TRUNCATED), why receives its reason without the member's name
 * ("its CRC-32 is 1a2b3c4d; the directory says ..."), else "" (the
 * archive's I/O, memory).
 */
npyio_status npyio__member_verify(npyio_stream *member, char *why,
                                  size_t cap);

/*
 * The block index of a member stream just opened (npz_index.h), checked
 * against its data: each block inflated alone on the stream's threads,
 * to its declared length. *blocks: 0 none (a stored member, or an index of
 * a later version), the block count if it matches, -1 if the member has
 * one that does not (readers ignore it). Failures: NPYIO_E_NOMEM.
 */
npyio_status npyio__member_check_index(npyio_stream *member, int64_t *blocks);

#endif /* NPYIO_NPZ_MEMBER_H */
