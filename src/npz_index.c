/*
 * npz_index.c - the block index of a member deflated on several threads
 * (npz_index.h): its encoding, and finding and checking it in a member's
 * local extra field.
 */
#include "error.h"
#include "npz_index.h"

#include <stdio.h>
#include <string.h>

#define LOCAL_LEN 30

void npyio__index_encode(const npyio__index_block *blocks, size_t count,
                         unsigned char *out)
{
    size_t i;

    npyio__put_le16(out, NPYIO__INDEX_ID);
    npyio__put_le16(out + 2, (uint16_t)(npyio__index_field_len(count) - 4));
    memset(out + 4, 0, NPYIO__INDEX_FIXED);
    out[4] = NPYIO__INDEX_VERSION;
    npyio__put_le32(out + 8, (uint32_t)count);
    for (i = 0; i < count; i++) {
        unsigned char *p = out + 4 + NPYIO__INDEX_FIXED +
                           i * NPYIO__INDEX_ENTRY;

        npyio__put_le64(p, blocks != NULL ? blocks[i].coff : 0);
        npyio__put_le64(p + 8, blocks != NULL ? blocks[i].uoff : 0);
    }
}

/* Our block among the extra field's blocks: its data and length, or NULL. */
static const unsigned char *find_block(const unsigned char *x, size_t len,
                                       size_t *data_len)
{
    size_t at = 0;

    while (at + 4 <= len) {
        size_t n = npyio__le16(x + at + 2);

        if (n > len - at - 4)
            return NULL;
        if (npyio__le16(x + at) == NPYIO__INDEX_ID) {
            *data_len = n;
            return x + at + 4;
        }
        at += 4 + n;
    }
    return NULL;
}

/* The blocks, checked against the member's sizes: why, or NULL. */
static const char *check_blocks(const npyio__index_block *b, size_t count,
                                const npyio__zip_entry *e)
{
    size_t i;

    if (b[0].coff != 0 || b[0].uoff != 0)
        return "its first block does not start at the member's start";
    for (i = 1; i < count; i++) {
        if (b[i].coff <= b[i - 1].coff || b[i].uoff <= b[i - 1].uoff)
            return "its offsets do not increase";
        if (b[i].coff >= e->csize || b[i].uoff >= e->usize)
            return "an offset lies past the member's end";
    }
    return NULL;
}

/* Decode the index's data (len bytes at p) into idx, or say why not. */
static npyio_status decode(const unsigned char *p, size_t len,
                           const npyio__zip_entry *e, const npyio__mem *mem,
                           npyio__npz_index *idx, int *found,
                           const char **why)
{
    size_t count, i;
    npyio_status st;

    *found = -1;
    if (len < NPYIO__INDEX_FIXED) {
        *why = "its field is too short";
        return NPYIO_OK;
    }
    if (p[0] != NPYIO__INDEX_VERSION) {
        *found = 0; /* a later layout: not ours to judge */
        return NPYIO_OK;
    }
    count = npyio__le32(p + 4);
    if (count == 0 || count > NPYIO__INDEX_MAX_BLOCKS ||
        len != NPYIO__INDEX_FIXED + count * NPYIO__INDEX_ENTRY) {
        *why = "its block count does not match its length";
        return NPYIO_OK;
    }
    st = npyio__alloc_array(mem, count, sizeof *idx->blocks, "a block index",
                            (void **)&idx->blocks);
    if (st != NPYIO_OK)
        return st;
    for (i = 0; i < count; i++) {
        const unsigned char *q = p + NPYIO__INDEX_FIXED +
                                 i * NPYIO__INDEX_ENTRY;

        idx->blocks[i].coff = npyio__le64(q);
        idx->blocks[i].uoff = npyio__le64(q + 8);
    }
    idx->count = count;
    *why = check_blocks(idx->blocks, count, e);
    *found = *why == NULL ? 1 : -1;
    return NPYIO_OK;
}

npyio_status npyio__index_read(npyio_stream *s, const npyio__zip_entry *e,
                               const npyio__mem *mem, npyio__npz_index *idx,
                               int *found, char *why, size_t cap)
{
    unsigned char fixed[LOCAL_LEN], *x = NULL;
    const unsigned char *p;
    const char *reason = NULL;
    size_t nlen, xlen, got = 0, len = 0;
    npyio_status st;

    memset(idx, 0, sizeof *idx);
    *found = 0;
    why[0] = '\0';
    if (e->method != NPYIO__ZIP_DEFLATED)
        return NPYIO_OK;
    st = npyio__stream_read_at(s, fixed, LOCAL_LEN, e->header_offset, &got,
                               "a local header");
    if (st != NPYIO_OK || got < LOCAL_LEN)
        return st;
    nlen = npyio__le16(fixed + 26);
    xlen = npyio__le16(fixed + 28);
    if (xlen == 0 || e->header_offset + LOCAL_LEN + (int64_t)(nlen + xlen) !=
                         e->data_offset)
        return NPYIO_OK;
    st = npyio__alloc(mem, xlen, "a local extra field", (void **)&x);
    if (st == NPYIO_OK)
        st = npyio__stream_read_at(s, x, xlen,
                                   e->header_offset + LOCAL_LEN +
                                       (int64_t)nlen,
                                   &got, "a local extra field");
    p = st == NPYIO_OK && got == xlen ? find_block(x, xlen, &len) : NULL;
    if (p != NULL)
        st = decode(p, len, e, mem, idx, found, &reason);
    npyio__free(x);
    if (st == NPYIO_OK && *found != 1)
        npyio__index_free(idx);
    if (reason != NULL)
        snprintf(why, cap, "its block index is ignored: %s", reason);
    return st;
}

void npyio__index_free(npyio__npz_index *idx)
{
    npyio__free(idx->blocks);
    idx->blocks = NULL;
    idx->count = 0;
}
