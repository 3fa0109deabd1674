/*
 * zip_dir.h - the directory of a ZIP archive, read by our own code: the
 * end records (ZIP64 included), the central directory walked by its size,
 * and every member's local header checked against its entry. What the
 * members hold is not looked at here (npz_member.h reads them).
 *
 * minizip 1.1's reader (Debian 12's libminizip 1.1-8, the contrib code of
 * zlib 1.2.5) cannot do this job. On LP64 it compares 64-bit fields with
 * (unsigned long)-1, that is 2^64-1, so it never parses the ZIP64 extra
 * of a directory entry: a member of 4 GiB or more, or one that starts
 * past 4 GiB, cannot be read through it (a 4.5 GiB member stops at
 * 4 GiB - 1 with a CRC error). It also stops at the end record's entry
 * count (a count of 1 over 2 entries lists 1; zipfile walks the directory
 * by its size and lists 2) and accepts overlapping members.
 */
#ifndef NPYIO_ZIP_DIR_H
#define NPYIO_ZIP_DIR_H

#include "alloc.h"
#include <stdbool.h>

#include "stream.h"

/* Compression methods (APPNOTE 4.4.5). */
#define NPYIO__ZIP_STORED 0
#define NPYIO__ZIP_DEFLATED 8

/* General purpose flag bits. */
#define NPYIO__ZIP_ENCRYPTED 0x0001u
#define NPYIO__ZIP_DESCRIPTOR 0x0008u /* sizes and CRC after the data */
#define NPYIO__ZIP_PATCHED 0x0020u
#define NPYIO__ZIP_STRONG_ENCRYPTION 0x0040u
#define NPYIO__ZIP_UTF8 0x0800u

typedef struct npyio__zip_entry {
    const char *name;      /* the file name in UTF-8 (in the dir's block) */
    const char *key;       /* NumPy's key: the name without ".npy" */
    uint16_t flags, method;
    bool name_cut;         /* the stored name held a NUL: cut there */
    uint32_t crc;
    uint64_t csize, usize;
    int64_t header_offset; /* of the local header, in the stream */
    int64_t data_offset;   /* of the member's first byte, in the stream */
} npyio__zip_entry;

typedef struct npyio__zip_dir {
    npyio__zip_entry *entries; /* in directory order */
    size_t count;
    char *names;               /* every name and key */
    int64_t cd_offset;         /* where the directory lies in the stream */
    int64_t cd_end;            /* where it ends: the end records begin */
    int64_t shift;             /* bytes before the archive (a stub) */
    int64_t comment_at;        /* the archive comment, in the stream */
    size_t comment_len;
    uint64_t total_usize;      /* the members' declared sizes, summed */
} npyio__zip_dir;

/*
 * Read the directory of the archive in `s` (the whole stream; read with
 * npyio__stream_read_at). NPYIO_LIMIT_NPZ_MEMBERS bounds the entries;
 * memory grows with the directory's size and nothing else.
 * Failures: NPYIO_E_FORMAT (no end record, inconsistent records, a bad
 * entry or local header, overlapping members), NPYIO_E_TRUNCATED (records
 * or headers that run past the end), NPYIO_E_UNSUPPORTED (archives split
 * over several disks), NPYIO_E_LIMIT, NPYIO_E_NOMEM, NPYIO_E_IO.
 */
npyio_status npyio__zip_dir_read(npyio_stream *s, const npyio__mem *mem,
                                 const npyio_options *options,
                                 npyio__zip_dir *dir);

void npyio__zip_dir_free(npyio__zip_dir *dir);

/* Little-endian fields, for the writer too. */
static inline uint16_t npyio__le16(const unsigned char *p)
{
    return (uint16_t)(p[0] | (unsigned)p[1] << 8);
}

static inline uint32_t npyio__le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static inline uint64_t npyio__le64(const unsigned char *p)
{
    return (uint64_t)npyio__le32(p) | (uint64_t)npyio__le32(p + 4) << 32;
}

static inline void npyio__put_le16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static inline void npyio__put_le32(unsigned char *p, uint32_t v)
{
    npyio__put_le16(p, (uint16_t)v);
    npyio__put_le16(p + 2, (uint16_t)(v >> 16));
}

static inline void npyio__put_le64(unsigned char *p, uint64_t v)
{
    npyio__put_le32(p, (uint32_t)v);
    npyio__put_le32(p + 4, (uint32_t)(v >> 32));
}

#endif /* NPYIO_ZIP_DIR_H */
