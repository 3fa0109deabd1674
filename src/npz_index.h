/*
 * npz_index.h - the block index of a member deflated on several threads:
 * where each independent block starts, kept in the member's local header
 * extra field (include/npyio.h, NPYIO_LIMIT_THREADS, gives the layout).
 * The writer reserves the field when it opens the member and fills it in
 * after the data; readers use it only once it is proven on the member's
 * data, every block from the first (npz_member.c, index_run): a block
 * that inflates alone says nothing of where a sequential inflate stands,
 * and a CRC-32 can be made to match by an archive's author.
 */
#ifndef NPYIO_NPZ_INDEX_H
#define NPYIO_NPZ_INDEX_H

#include "zip_dir.h"

#define NPYIO__INDEX_ID 0x494Eu     /* "NI" on disk */
#define NPYIO__INDEX_VERSION 1
#define NPYIO__INDEX_FIXED 8        /* version, 3 zero bytes, u32 count */
#define NPYIO__INDEX_ENTRY 16       /* u64 compressed, u64 uncompressed */
/* 4 + 8 + 16 * 4000 + minizip's 20-byte ZIP64 block < 65,535. */
#define NPYIO__INDEX_MAX_BLOCKS 4000

typedef struct npyio__index_block {
    uint64_t coff, uoff; /* from the member's first data byte */
} npyio__index_block;

typedef struct npyio__npz_index {
    size_t count;               /* 0: none usable */
    npyio__index_block *blocks; /* count of them, from mem */
} npyio__npz_index;

/* The whole extra block (id, length, data) for `count` blocks. */
static inline size_t npyio__index_field_len(size_t count)
{
    return 4 + NPYIO__INDEX_FIXED + NPYIO__INDEX_ENTRY * count;
}

/* Write the extra block for the blocks given into out
 * (npyio__index_field_len(count) bytes). A field reserved before the data
 * is this with every offset 0: no reader takes it. */
void npyio__index_encode(const npyio__index_block *blocks, size_t count,
                         unsigned char *out);

/*
 * The index of entry e of the archive in s: found in its local extra
 * field and checked against e's sizes (first block at 0/0, offsets
 * increasing, inside csize and usize). *found: 0 none (or a version this
 * library does not know), 1 usable (idx filled: npyio__index_free), -1
 * present and malformed (why says how). Failures: NPYIO_E_NOMEM and the
 * archive's I/O; never the index's content.
 */
npyio_status npyio__index_read(npyio_stream *s, const npyio__zip_entry *e,
                               const npyio__mem *mem, npyio__npz_index *idx,
                               int *found, char *why, size_t cap);

void npyio__index_free(npyio__npz_index *idx);

#endif /* NPYIO_NPZ_INDEX_H */
