/*
 * npz_member_core.h - the state of a member stream, shared by the two
 * files that read members (and npz_member_core.c, their CRC-32 and
 * failures): npz_member.c (the stream: stored members,
 * zlib's streaming inflate, the one libdeflate call, seeks) and
 * npz_blocks.c (a block index's blocks inflated alone on the threads,
 * proven as they go: whole reads to the end and chunks read ahead).
 *
 * Copyright (c) 2026 The libnpyio developers.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef NPYIO_NPZ_MEMBER_CORE_H
#define NPYIO_NPZ_MEMBER_CORE_H

#include "alloc.h"
#include "npz_index.h"
#include "stream.h"
#include "zip_dir.h"

#include <stdbool.h>
#include <stdint.h>
#include <zlib.h>

/* Compressed input read per refill, and the sink for skipped output. */
#define INPUT_BYTES ((size_t)256 << 10)
#define SKIP_BYTES ((size_t)64 << 10)

typedef struct member_state {
    npyio_stream *archive; /* borrowed */
    npyio__zip_entry entry;
    npyio__mem mem;
    uint64_t pos;          /* in the uncompressed bytes */
    uint64_t crc_pos;      /* the CRC covers [0, crc_pos) */
    uint32_t crc;
    int64_t thread_limit;  /* NPYIO_LIMIT_THREADS, for npyio__thread_count */
    npyio_status failed;   /* a checksum or format failure, repeated */
    char why[160];         /* its reason, without the member's name */
    /* deflated members */
    z_stream z;
    bool z_ready, ended;
    uint64_t in_pos;       /* compressed bytes taken from the archive */
    uint64_t in_at;        /* the compressed offset of in[0] */
    unsigned char *in, *skip;
    size_t in_cap;
    /* The block index (npz_index.h): 0 not looked for yet, 1 usable, 2
     * usable and every block checked (seeks may use it), -1 none or
     * ignored. */
    int index_state;
    int index_found;       /* npyio__index_read's: 0, 1, -1 */
    npyio__npz_index index;
    size_t chain;          /* blocks [0, chain) proven in order from block 0 */
    bool tail_proven;      /* the last block proven to end the stream */
    /* Where the streaming inflate stands: at pos, or behind it after a
     * read another way (ahead_fill, whole_read, index_read) moved pos;
     * z_catch_up brings it back. */
    uint64_t z_pos;
    /* Blocks inflated ahead on the threads (ahead_fill): the member's
     * bytes [ahead_at, ahead_end), proven, in ahead. */
    unsigned char *ahead;
    size_t ahead_cap;
    uint64_t ahead_at, ahead_end;
    /* The CRC-32 of the last batch's bytes from ahead_crc_from (where it
     * began) to ahead_end: taken when they are all handed out. */
    uint32_t ahead_crc;
    uint64_t ahead_crc_from;
    uint64_t ahead_handed; /* handed out in order from ahead_crc_from */
    /* The batch after it, inflating in the background (npz_blocks.c). */
    struct npyio__ahead_next *next;
} member_state;

/* ---- npz_member_core.c ---- */

/* The member's name as messages show it (escaped), in buf. */
const char *npyio__member_name(const member_state *m, char *buf, size_t cap);
/* A failure of the member's bytes (`what`, without its name): kept, and
 * repeated by later reads. */
npyio_status npyio__member_fail(member_state *m, npyio_status st,
                                const char *what);
/* Extend the CRC over the part of [at, at + len) just past what it
 * covers, and check it once it covers the whole member. */
npyio_status npyio__member_crc_over(member_state *m, const unsigned char *buf,
                                    size_t len, uint64_t at);
/* Once the CRC covers the whole member: checked, once. */
npyio_status npyio__member_crc_check(member_state *m);

/* ---- npz_blocks.c ---- */

/* The index, looked for once: index_state 1 if usable, else -1. */
void npyio__blocks_load(member_state *m);
/* The block holding uncompressed byte `at`. */
size_t npyio__block_of(const member_state *m, uint64_t at);
/* Every block inflated alone and checked, once (index_state 2 or -1). */
npyio_status npyio__blocks_prove(member_state *m);
/* NPYIO_NPZ_STAT_BLOCK_INDEX: every block proven, then *blocks is their
 * count, -1 for an index that does not prove, 0 for none. */
npyio_status npyio__blocks_check(member_state *m, int64_t *blocks);
/* A read of want bytes to the end that the blocks take (rather than the
 * one libdeflate call, when whole_fits says it could), and that read: *got = 0 when the blocks do not
 * prove or their CRC-32 differs (the caller streams). */
bool npyio__blocks_win(member_state *m, uint64_t want, bool whole_fits);
npyio_status npyio__blocks_read(member_state *m, unsigned char *buf,
                                size_t want, size_t *got);
/* A read of want bytes that blocks read ahead take, and that read
 * (*got = 0: the caller streams); and what the blocks read ahead hold
 * at pos (*took bytes). */
bool npyio__ahead_fits(member_state *m, size_t want);
npyio_status npyio__ahead_fill(member_state *m, unsigned char *buf,
                               size_t want, size_t *got);
npyio_status npyio__ahead_take(member_state *m, unsigned char *buf,
                               size_t want, size_t *took);
/* The 32 KiB before pos (all before it, if fewer), when the blocks read
 * ahead hold them: a window for the streaming inflate. */
bool npyio__ahead_window(const member_state *m, const unsigned char **window,
                         size_t *len);
/* A batch inflated in the background starts at pos: reads take it
 * before any other way (npyio__ahead_fill). */
bool npyio__ahead_ready(const member_state *m);
/* At the member's close: the batch in the background waited for, and
 * its memory freed. */
void npyio__ahead_free(member_state *m);

#endif /* NPYIO_NPZ_MEMBER_CORE_H */
