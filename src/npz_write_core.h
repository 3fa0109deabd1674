/*
 * npz_write_core.h - what the files of the archive writer share: the
 * handle's layout, minizip's I/O over our stream (npz_zipio.c), the member
 * back end (npz_entry.c: stored, deflated, deflated on several threads),
 * and the archive's own calls that appending (npz_append.c) builds on
 * (npz_write.c). Private to those files; minizip writes the archive's
 * structure, we write the members' bytes.
 */
#ifndef NPYIO_NPZ_WRITE_CORE_H
#define NPYIO_NPZ_WRITE_CORE_H

#include "alloc.h"
#include "error.h"
#include "npz_names.h"
#include "stream.h"
#include "zip_dir.h"

#include <zip.h>

#define NPYIO__MAGIC_NPZ_WRITER 0x4e505a57u /* "NPZW" */

struct npyio_npz_writer {
    uint32_t magic;
    npyio__mem mem;
    npyio_options *options;
    npyio_stream *stream;
    /* While minizip has the archive: the stream under the buffer that
     * w->stream then is (npz_zipio.c); NULL otherwise. */
    npyio_stream *direct;
    bool owns_stream, durable, align;
    bool zlib;                /* NPYIO_NPZ_WRITE_ZLIB: zlib only */
    zipFile zip;
    npyio_status io_failed;   /* the first failure of a callback */
    npyio__sticky sticky;     /* the archive failed: repeated */
    bool member_open;
    /* The open member's stream state: an archive released with it open
     * (npyio_npz_writer_close refused, or an abort) detaches it, so that
     * its writer fails instead of reaching a freed archive. */
    struct npyio__npz_entry *open_entry;
    npyio__npz_names names;   /* members so far, for duplicates */
    /* At close, after minizip wrote the directory, instead of committing
     * the stream: an append's check and rename. NULL for a new archive. */
    npyio_status (*finish)(npyio_npz_writer *w, const char *where);
    /* Appending: the archive is copied to a temporary, which takes the
     * new members and replaces the original at close. */
    npyio_stream *original;   /* locked for the whole append; or NULL */
    bool owns_original;
    npyio__zip_dir old;       /* its directory, as our reader found it */
    unsigned char *comment;   /* its comment, given back at close */
};

/* ---- minizip's I/O over our stream (npz_zipio.c) ----------------------- */

/* Open minizip on w->stream (APPEND_STATUS_CREATE or _ADDINZIP): w->zip,
 * or the failure (zip_failure's). */
npyio_status npyio__npz_zip_open(npyio_npz_writer *w, int append,
                                 const char *where);

/* After minizip's close (or when the archive is dropped): w->stream is
 * the real stream again, the buffered bytes written out first if `flush`,
 * and the real stream left where the buffer's position was. */
npyio_status npyio__npz_zip_unbuffer(npyio_npz_writer *w, bool flush);

/* A failed minizip call: our stream's failure if there was one, else
 * minizip's code. Either way the archive is failed from now on. */
npyio_status npyio__npz_zip_failure(npyio_npz_writer *w, const char *call,
                                    int code);

/* ---- members (npz_entry.c) --------------------------------------------- */

/* A member's entry opened in minizip (its local header goes out now) and
 * a stream to write it through, which owns `name` from now on (added to
 * the archive's names). level 0 stores, 1-9 deflate (on up to
 * NPYIO_LIMIT_THREADS threads for a member of known length); flags:
 * NPYIO_WRITE_UNKNOWN_ROWS (header: the member's, whose header is then
 * rewritten at close). `raw`: the caller writes the member's bytes as
 * stored (npyio__npz_entry_raw_write, npyio__npz_entry_finish_raw).
 * whole_len: the member's bytes when they come whole (its header, then
 * its data in one write: deflated in one libdeflate call when the
 * archive, the size and the threads allow), else 0. */
npyio_status npyio__npz_entry_open(npyio_npz_writer *w, char *name,
                                   const npyio_header *header, int level,
                                   uint32_t flags, bool raw,
                                   uint64_t whole_len, const char *where,
                                   npyio_stream **out);

/* Would a member of whole_len bytes given whole at that level be deflated
 * in one libdeflate call (the archive's flags, the size, the threads)? */
bool npyio__npz_entry_whole(const npyio_npz_writer *w, int level,
                            uint64_t whole_len);

/* Bytes of the member's data, as a writer's would be (CRC, deflate). */
npyio_status npyio__npz_entry_append(npyio_stream *member, const void *p,
                                     size_t len);

/* The member's entry finished (npyio__stream_commit's). */
npyio_status npyio__npz_entry_commit(npyio_stream *member);

/* A raw member: bytes as stored, then the entry finished with the
 * uncompressed size and CRC-32 the caller knows. */
npyio_status npyio__npz_entry_raw_write(npyio_stream *member,
                                        const void *buf, size_t len);
npyio_status npyio__npz_entry_finish_raw(npyio_stream *member,
                                         uint64_t usize, uint32_t crc,
                                         const char *where);

/* The archive is released: its open member, if any, fails from now on. */
void npyio__npz_entry_detach(struct npyio__npz_entry *e);

/* ---- the archive (npz_write.c), for appending ------------------------- */

/* A writer with no stream yet (flags: durability, alignment). */
npyio_status npyio__npz_writer_new(uint32_t flags,
                                   const npyio_options *options,
                                   npyio_npz_writer **out);

/* Release everything the writer holds (an archive not closed is
 * abandoned: a stream of ours aborted). */
void npyio__npz_writer_release(npyio_npz_writer *w);

/* The archive writer's calls for the task calls: as the public ones, but
 * naming `where`, the public call the caller made, in messages.
 * npyio__npz_writer_add is npyio_npz_writer_add_with_header without
 * flags, npyio__npz_writer_add_plain is npyio_npz_writer_add. */
npyio_status npyio__npz_writer_create_path(const char *path, uint32_t flags,
                                           const npyio_options *options,
                                           const char *where,
                                           npyio_npz_writer **out);
npyio_status npyio__npz_writer_add(npyio_npz_writer *npz, const char *key,
                                   const npyio_header *header,
                                   const void *data, size_t len, int level,
                                   const char *where);
npyio_status npyio__npz_writer_add_plain(npyio_npz_writer *npz,
                                         const char *key, const char *type,
                                         int ndim, const int64_t *shape,
                                         const void *data, size_t len,
                                         int level, uint32_t flags,
                                         const char *where);
npyio_status npyio__npz_writer_close(npyio_npz_writer *npz,
                                     const char *where);

#endif /* NPYIO_NPZ_WRITE_CORE_H */
