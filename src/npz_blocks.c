/*
 * npz_blocks.c - a deflated member's block index put to work
 * (npz_member_core.h): its blocks inflated alone on the threads, for a
 * read to the member's end (blocks_read) and for chunks (blocks read
 * ahead), each block proven before its bytes are used.
 *
 * Copyright (c) 2026 The libnpyio developers.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "crc.h"
#include "error.h"
#include "npz_member_core.h"
#include "threads.h"

#include <limits.h>
#include <string.h>

/* ---- deflated, on several threads through the block index ---------------------- */

/*
 * The blocks inflate through zlib, not libdeflate, because only zlib can
 * prove where a block ends. The proof (index_run) needs to know that a
 * block's inflate stopped at a block boundary, on a byte boundary, at
 * the block's last byte: zlib says so (data_type 128, nothing left in
 * avail_in). libdeflate (1.14) inflates only whole streams ending in a
 * final block and reports just the bytes it consumed, rounded up. The
 * block's bytes followed by an empty final block (0x03 0x00) prove
 * nothing: a crafted block that stops mid-block, or off a byte boundary,
 * can take those 16 bits as the rest of its own data and still inflate
 * cleanly to its declared length, while a sequential inflate (np.load's)
 * reads the next block's bytes there instead. Whole members inflate from
 * their first byte, as np.load does, so libdeflate takes those
 * (whole_read).
 */

/* One block inflated alone: compressed [cin, cin + clen) to ulen bytes,
 * the first `skip` of them dropped, the rest into out (NULL: dropped). */
typedef struct inflate_part {
    uint64_t cin, clen, ulen, skip;
    bool last;
    unsigned char *out;
    uint32_t crc;  /* of the bytes put into out */
    bool ok;       /* it inflated to exactly ulen, ending where it must */
} inflate_part;

typedef struct inflate_parts {
    member_state *m;
    inflate_part *parts;
} inflate_parts;

/* Where the next output goes: out past the skipped bytes, else scratch. */
static void part_out(const inflate_part *p, z_stream *z, uint64_t made,
                     unsigned char *scratch)
{
    uint64_t left = p->ulen - made;

    if (p->out != NULL && made >= p->skip) {
        z->next_out = p->out + (made - p->skip);
        z->avail_out = left > UINT_MAX ? UINT_MAX : (uInt)left;
        return;
    }
    if (p->out != NULL && p->skip - made < left)
        left = p->skip - made;
    z->next_out = scratch;
    z->avail_out = left > SKIP_BYTES ? (uInt)SKIP_BYTES : (uInt)left;
}

/* Inflate the part's input through z; false if it does not match. */
static bool part_run(member_state *m, inflate_part *p, z_stream *z,
                     unsigned char *in, unsigned char *scratch)
{
    uint64_t read = 0, made = 0;
    bool ended = false;
    int ret;

    for (;;) {
        size_t want = p->clen - read < INPUT_BYTES ? (size_t)(p->clen - read)
                                                   : INPUT_BYTES, got = 0;
        unsigned char *at;
        uInt give;

        if (z->avail_in == 0 && want > 0) {
            if (npyio__stream_read_at(m->archive, in, want,
                                      m->entry.data_offset +
                                          (int64_t)(p->cin + read),
                                      &got, "compressed member data") !=
                    NPYIO_OK || got < want)
                return false;
            z->next_in = in;
            z->avail_in = (uInt)got;
            read += got;
        }
        if (made < p->ulen)
            part_out(p, z, made, scratch);
        at = z->next_out;
        give = z->avail_out;
        ret = inflate(z, Z_NO_FLUSH);
        made += give - z->avail_out;
        if (p->out != NULL && at != scratch)
            p->crc = npyio__crc32(p->crc, at, give - z->avail_out);
        if (ret == Z_STREAM_END) {
            ended = true;
            break;
        }
        if ((ret != Z_OK && ret != Z_BUF_ERROR) ||
            (z->avail_in == 0 && read == p->clen) || ret == Z_BUF_ERROR)
            break;
    }
    /* All its input, its exact length, and then the stream's end (the
     * last) or a block boundary on a byte boundary (data_type 128). */
    if (!ended && ret != Z_OK && ret != Z_BUF_ERROR)
        return false;
    return made == p->ulen && z->avail_in == 0 && read == p->clen &&
           (p->last ? ended : !ended && z->data_type == 128);
}

static void inflate_part_job(void *ctx, size_t index)
{
    inflate_parts *ip = ctx;
    member_state *m = ip->m;
    inflate_part *p = &ip->parts[index];
    unsigned char *in = NULL, *scratch = NULL;
    z_stream z;

    p->ok = false;
    p->crc = 0;
    memset(&z, 0, sizeof z);
    z.zalloc = npyio__zalloc;
    z.zfree = npyio__zfree;
    z.opaque = &m->mem;
    if (npyio__alloc(&m->mem, INPUT_BYTES, "member input", (void **)&in) !=
            NPYIO_OK ||
        npyio__alloc(&m->mem, SKIP_BYTES, "member skip buffer",
                     (void **)&scratch) != NPYIO_OK) {
        npyio__free(in);
        return;
    }
    if (inflateInit2(&z, -MAX_WBITS) == Z_OK) {
        p->ok = part_run(m, p, &z, in, scratch);
        inflateEnd(&z);
    }
    npyio__free(in);
    npyio__free(scratch);
}

/* The index, looked for once: state 1 if usable, else -1. */
void npyio__blocks_load(member_state *m)
{
    char why[160];
    int found = 0;

    if (m->index_state != 0)
        return;
    m->index_state = -1;
    if (npyio__index_read(m->archive, &m->entry, &m->mem, &m->index, &found,
                          why, sizeof why) == NPYIO_OK)
        m->index_found = found;
    if (m->index_found == 1)
        m->index_state = 1;
}

/* The block holding uncompressed byte `at`. */
size_t npyio__block_of(const member_state *m, uint64_t at)
{
    size_t lo = 0, hi = m->index.count;

    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;

        if (m->index.blocks[mid].uoff <= at)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Block i of the index as a part: its compressed and inflated spans, to
 * be inflated whole and dropped (the caller sets skip and out). */
static void block_part(const member_state *m, size_t i, inflate_part *p)
{
    const npyio__index_block *b = m->index.blocks;
    size_t n = m->index.count;
    uint64_t cend = i + 1 < n ? b[i + 1].coff : m->entry.csize;
    uint64_t uend = i + 1 < n ? b[i + 1].uoff : m->entry.usize;

    p->cin = b[i].coff;
    p->clen = cend - b[i].coff;
    p->ulen = uend - b[i].uoff;
    p->last = i + 1 == n;
    p->skip = 0;
    p->out = NULL;
}

/* Every block as a part: the bytes from `from` on into out (NULL: every
 * block checked only), the blocks wholly before `from` checked only. */
static void index_parts(const member_state *m, uint64_t from,
                        unsigned char *out, inflate_part *parts)
{
    const npyio__index_block *b = m->index.blocks;
    size_t i;

    for (i = 0; i < m->index.count; i++) {
        inflate_part *p = &parts[i];

        block_part(m, i, p);
        if (out != NULL && b[i].uoff + p->ulen > from) {
            p->skip = from > b[i].uoff ? from - b[i].uoff : 0;
            p->out = out + (b[i].uoff + p->skip - from);
        }
    }
}

/*
 * Inflate every block alone, on the member's threads, the bytes from
 * `from` on into out (NULL: checked only). *ok: every block matched
 * (part_run), so that the index is proven: block 0 starts the stream,
 * and each block inflates alone to its declared length and ends, on a
 * byte boundary and not final, exactly where the next one starts (the
 * last ends the stream at the member's end). A sequential inflate then
 * stands at each block's start with nothing carried over (a block that
 * inflated alone refers to nothing before it), so the blocks' bytes are
 * its bytes. Blocks before the read's start are checked too: a block is
 * no proof of where it starts, only the chain from block 0 is. *crc: the
 * CRC-32 of the bytes put into out.
 */
static npyio_status index_run(member_state *m, uint64_t from,
                              unsigned char *out, bool *ok, uint32_t *crc)
{
    size_t count = m->index.count, i;
    inflate_parts ip = {m, NULL};
    npyio_status st = npyio__alloc_array(&m->mem, count, sizeof *ip.parts,
                                         "inflate parts",
                                         (void **)&ip.parts);

    size_t first = npyio__block_of(m, from);

    *ok = false;
    *crc = 0;
    if (st != NPYIO_OK)
        return st;
    /* Blocks wholly before `from` that a pass proved already (m->chain)
     * are not inflated again. */
    if (first > m->chain)
        first = m->chain;
    index_parts(m, from, out, ip.parts);
    ip.parts += first;
    /* Threads share the archive only through positioned reads. */
    npyio__run_parallel(count - first,
                        npyio__thread_count(
                            m->thread_limit, m->entry.usize,
                            npyio__stream_has_pread(m->archive)),
                        inflate_part_job, &ip);
    ip.parts -= first;
    *ok = true;
    for (i = first; i < count; i++) {
        *ok = *ok && ip.parts[i].ok;
        if (ip.parts[i].out != NULL)
            *crc = npyio__crc32_combine(*crc, ip.parts[i].crc,
                                        ip.parts[i].ulen - ip.parts[i].skip);
    }
    npyio__free(ip.parts);
    return NPYIO_OK;
}

/* Every block proven (index_run): seeks and chunks may start anywhere. */
static void index_proven(member_state *m)
{
    m->index_state = 2;
    m->chain = m->index.count;
}

/* A read from pos to the member's end that the index can take: on
 * several threads, with the CRC continuous up to pos, blocks ahead. */
static bool index_fits(member_state *m, uint64_t want)
{
    if (npyio__thread_count(m->thread_limit, want,
                            npyio__stream_has_pread(m->archive)) < 2 ||
        want == 0 || want != m->entry.usize - m->pos ||
        m->crc_pos != m->pos || m->ended)
        return false;
    npyio__blocks_load(m);
    return m->index_state > 0 &&
           m->index.count - npyio__block_of(m, m->pos) >= 2;
}

/*
 * Which of the two takes a read both can: libdeflate's one call, or zlib
 * on the index's blocks. Measured on 2 threads (npyio dump of a 128 MiB
 * member of measurement-like data written on 2 threads: 0.37-0.48 s in
 * one call, 0.75-0.87 s on the blocks), the one call wins: libdeflate
 * inflates at 2.1-2.5x zlib's speed, two zlib threads at most 2x. From 3
 * threads on the blocks are taken (3 x zlib passes 2.5x; not measured:
 * this was measured on a 2-core machine).
 */
#define WHOLE_BEATS_THREADS 2

bool npyio__blocks_win(member_state *m, uint64_t want, bool whole_fits)
{
    return index_fits(m, want) &&
           (npyio__thread_count(m->thread_limit, want,
                                npyio__stream_has_pread(m->archive)) >
                WHOLE_BEATS_THREADS ||
            !whole_fits);
}

/* The rest of the member inflated on the threads into buf. NPYIO_OK with
 * *got = 0 when the index is not proven (index_run) or the CRC-32
 * differs: the caller inflates as without an index (it decides what is
 * wrong). */
npyio_status npyio__blocks_read(member_state *m, unsigned char *buf,
                               size_t want, size_t *got)
{
    bool ok = false;
    uint32_t crc = 0;
    npyio_status st = index_run(m, m->pos, buf, &ok, &crc);

    *got = 0;
    if (st != NPYIO_OK || !ok) {
        if (!ok)
            m->index_state = -1; /* it does not match: never again */
        return st;
    }
    index_proven(m);
    crc = npyio__crc32_combine(m->crc, crc, want);
    if (crc != m->entry.crc)
        return NPYIO_OK;
    m->crc = crc;
    m->crc_pos = m->pos = m->entry.usize;
    m->ended = true;
    *got = want;
    return npyio__member_crc_over(m, buf, 0, m->pos);
}

/* ---- deflated, in chunks: blocks inflated ahead on the threads -------------- */

/*
 * A member read in chunks (npyio_reader_read_chunk, a member stream read
 * piece by piece) inflates its indexed blocks on the threads too: each
 * read of at least AHEAD_MIN_READ bytes that streaming would take
 * inflates, at once, the blocks it covers whole straight into its buffer
 * and, one per thread, the blocks after them into `ahead`, from which
 * the next reads are served. The chain of proof is index_run's, built as
 * the pass goes: a batch starts at a block whose start is proven (block
 * 0, or one that a proven block ends at: m->chain), and every block of
 * it must inflate alone to its length and end on a byte boundary exactly
 * where the next begins. A batch that does not prove is dropped, the
 * index is not used again, and streaming takes over from pos (the
 * streaming inflate catches up from the last proven block start:
 * z_catch_up), so that the bytes are always a sequential inflate's.
 * Memory: two batches of blocks ahead (the one reads take, and the next,
 * inflating in the background meanwhile), of up to three blocks per
 * thread and AHEAD_BATCH_MAX each, blocks of at most AHEAD_BLOCK_MAX (4
 * MiB as npyio writes them).
 */
#define AHEAD_BLOCK_MAX ((uint64_t)16 << 20)
/* A batch inflated in the background holds up to this many blocks per
 * thread, and at most AHEAD_BATCH_MAX bytes: deeper batches keep the
 * threads busy while the caller takes the one before (npyio dump
 * --threads 2 of a 384 MiB member, 4 MiB blocks, output to tmpfs:
 * 0.83-0.95 s with one block per thread, 0.78-0.87 s with two, 0.71-0.80
 * s with three; one thread 1.23-1.31 s). */
#define NEXT_PER_THREAD 3
#define AHEAD_BATCH_MAX ((uint64_t)64 << 20)

static unsigned ahead_threads(const member_state *m)
{
    return npyio__thread_count(m->thread_limit, m->entry.usize - m->pos,
                               npyio__stream_has_pread(m->archive));
}

/* Reads of at least this many bytes take npyio__ahead_fill (the .npy header's
 * small reads stream: a whole read after them takes the one call). */
static size_t ahead_min_read(void)
{
    return npyio__part_bytes_min / 8;
}

bool npyio__ahead_fits(member_state *m, size_t want)
{
    if (want == 0 || want < ahead_min_read() || m->crc_pos != m->pos ||
        ahead_threads(m) < 2)
        return false;
    npyio__blocks_load(m);
    return m->index_state > 0 && npyio__block_of(m, m->pos) <= m->chain;
}

/* What ahead holds at pos, into buf (at most want bytes): *took. */
/* The batch's CRC-32, computed by the threads, taken once its bytes are
 * all handed out in order, none skipped (ahead_handed: so that a damaged
 * member fails at the read a sequential inflate fails at, and a read
 * that jumped checks nothing, as streaming's), while the CRC stands
 * where the batch began. */
static npyio_status ahead_settle(member_state *m)
{
    if (m->crc_pos != m->ahead_crc_from || m->ahead_handed != m->ahead_end)
        return NPYIO_OK;
    m->crc = npyio__crc32_combine(m->crc, m->ahead_crc,
                                  m->ahead_end - m->ahead_crc_from);
    m->crc_pos = m->ahead_end;
    return npyio__member_crc_check(m);
}

npyio_status npyio__ahead_take(member_state *m, unsigned char *buf,
                               size_t want, size_t *took)
{
    uint64_t have = m->ahead_end - m->pos, at = m->pos;

    *took = 0;
    if (m->pos < m->ahead_at || m->pos >= m->ahead_end || want == 0)
        return NPYIO_OK;
    if (have < want)
        want = (size_t)have;
    memcpy(buf, m->ahead + (m->pos - m->ahead_at), want);
    m->pos += want;
    *took = want;
    if (at == m->ahead_handed)
        m->ahead_handed = m->pos; /* in order, no byte skipped */
    /* After a seek back past the batch's start, the CRC runs here. */
    return m->crc_pos == m->ahead_crc_from
               ? ahead_settle(m)
               : npyio__member_crc_over(m, buf, want, at);
}

/* The batch for a read of want bytes at pos from block b: *direct blocks
 * that lie wholly in the read, then *ahead blocks to fill the threads
 * (at least the one the read ends inside), none above AHEAD_BLOCK_MAX.
 * False if the read ends inside a block that cannot be held. */
static bool ahead_plan(const member_state *m, size_t b, size_t want,
                       unsigned threads, size_t *direct, size_t *ahead,
                       uint64_t *ahead_bytes)
{
    size_t n = m->index.count, d = 0, k = 0;
    uint64_t end = m->pos + want, bytes = 0;
    inflate_part p;

    for (; b + d < n; d++) {
        block_part(m, b + d, &p);
        if (m->index.blocks[b + d].uoff + p.ulen > end)
            break;
    }
    for (; b + d + k < n; k++) {
        bool cut = m->index.blocks[b + d + k].uoff < end;

        block_part(m, b + d + k, &p);
        if ((!cut && (d + k >= threads || bytes + p.ulen > AHEAD_BATCH_MAX)) ||
            p.ulen > AHEAD_BLOCK_MAX)
            break;
        bytes += p.ulen;
    }
    *direct = d;
    *ahead = k;
    *ahead_bytes = bytes;
    return b + d + k == n || m->index.blocks[b + d + k].uoff >= end;
}

/* The batch planned inflated on the threads, from pos: the direct
 * blocks into buf, the rest into m->ahead (from pos or from their
 * first block's start). *ok: every block proved; *crc: of all of it. */
static npyio_status ahead_run(member_state *m, size_t b, size_t d, size_t k,
                              unsigned char *buf, bool *ok, uint32_t *crc)
{
    inflate_parts ip = {m, NULL};
    npyio_status st = npyio__alloc_array(&m->mem, d + k, sizeof *ip.parts,
                                         "inflate parts",
                                         (void **)&ip.parts);
    uint64_t first = m->index.blocks[b].uoff, ahead_at = m->pos;
    size_t i;

    *ok = false;
    *crc = 0;
    if (st != NPYIO_OK)
        return st;
    if (d > 0 && b + d < m->index.count)
        ahead_at = m->index.blocks[b + d].uoff;
    for (i = 0; i < d + k; i++) {
        inflate_part *p = &ip.parts[i];
        uint64_t at;

        block_part(m, b + i, p);
        p->skip = i == 0 ? m->pos - first : 0;
        at = m->index.blocks[b + i].uoff + p->skip;
        p->out = i < d ? buf + (at - m->pos) : m->ahead + (at - ahead_at);
    }
    npyio__run_parallel(d + k, ahead_threads(m), inflate_part_job, &ip);
    *ok = true;
    for (i = 0; i < d + k; i++) {
        *ok = *ok && ip.parts[i].ok;
        *crc = npyio__crc32_combine(*crc, ip.parts[i].crc,
                                    ip.parts[i].ulen - ip.parts[i].skip);
    }
    npyio__free(ip.parts);
    m->ahead_at = ahead_at;
    return NPYIO_OK;
}

/* Room in m->ahead for `bytes`: NPYIO_OK or the allocator's failure. */
static npyio_status ahead_room(member_state *m, uint64_t bytes)
{
    if (bytes <= m->ahead_cap)
        return NPYIO_OK;
    npyio__free(m->ahead);
    m->ahead = NULL;
    m->ahead_cap = 0;
    if (npyio__alloc(&m->mem, (size_t)bytes, "blocks inflated ahead",
                     (void **)&m->ahead) != NPYIO_OK)
        return NPYIO_E_NOMEM;
    m->ahead_cap = (size_t)bytes;
    return NPYIO_OK;
}

/* ---- the next batch, in the background ---- */

/* While reads take one batch from m->ahead, the threads inflate the
 * next into a buffer of its own (two batches in memory): the caller's
 * work between reads (writing the bytes out) overlaps the inflating. */
struct npyio__ahead_next {
    npyio__background run;
    inflate_parts ip;         /* its parts (ip.parts owned) */
    size_t first, count;      /* its blocks; count 0: none */
    uint64_t bytes;           /* their inflated size */
    unsigned char *buf;       /* where they land */
    size_t cap;
};

static void next_wait(member_state *m)
{
    if (m->next != NULL && m->next->count > 0)
        npyio__background_wait(&m->next->run);
}

/* The blocks from `first` on, NEXT_PER_THREAD per thread (none above
 * AHEAD_BLOCK_MAX, at most AHEAD_BATCH_MAX in all), started in the
 * background. Nothing when none is
 * left or memory is short: reads then take the blocks in the caller's
 * read. */
static void next_start(member_state *m, size_t first)
{
    struct npyio__ahead_next *x = m->next;
    unsigned threads = ahead_threads(m);
    size_t n = m->index.count, count = 0, i;
    uint64_t bytes = 0;
    inflate_part p;

    for (; first + count < n && count < NEXT_PER_THREAD * threads; count++) {
        block_part(m, first + count, &p);
        if (p.ulen > AHEAD_BLOCK_MAX ||
            (count > 0 && bytes + p.ulen > AHEAD_BATCH_MAX))
            break;
        bytes += p.ulen;
    }
    if (count == 0 || threads < 2)
        return;
    if (x == NULL) {
        if (npyio__alloc(&m->mem, sizeof *x, "blocks read ahead",
                         (void **)&x) != NPYIO_OK)
            return;
        memset(x, 0, sizeof *x);
        x->ip.m = m;
        m->next = x;
    }
    if (bytes > x->cap) {
        npyio__free(x->buf);
        x->buf = NULL;
        x->cap = 0;
        if (npyio__alloc(&m->mem, (size_t)bytes, "blocks inflated ahead",
                         (void **)&x->buf) != NPYIO_OK)
            return;
        x->cap = (size_t)bytes;
    }
    npyio__free(x->ip.parts);
    if (npyio__alloc_array(&m->mem, count, sizeof *x->ip.parts,
                           "inflate parts", (void **)&x->ip.parts) !=
        NPYIO_OK) {
        x->ip.parts = NULL;
        return;
    }
    for (i = 0; i < count; i++) {
        block_part(m, first + i, &x->ip.parts[i]);
        x->ip.parts[i].out = x->buf + (m->index.blocks[first + i].uoff -
                                       m->index.blocks[first].uoff);
    }
    x->first = first;
    x->count = count;
    x->bytes = bytes;
    npyio__background_start(&x->run, count, threads, inflate_part_job,
                            &x->ip);
}

/* The next batch, if it starts at pos, waited for and made the one reads
 * take (*taken), the batch after it started. A batch that does not
 * prove drops the index (index_state -1): the caller streams. */
static void next_take(member_state *m, bool *taken)
{
    struct npyio__ahead_next *x = m->next;
    unsigned char *swap;
    size_t i, cap, end;
    uint32_t crc = 0;
    bool ok = true;

    *taken = false;
    if (x == NULL || x->count == 0)
        return;
    next_wait(m);
    end = x->first + x->count;
    for (i = 0; i < x->count; i++) {
        ok = ok && x->ip.parts[i].ok;
        crc = npyio__crc32_combine(crc, x->ip.parts[i].crc,
                                   x->ip.parts[i].ulen);
    }
    x->count = 0;
    if (m->index.blocks[x->first].uoff != m->pos)
        return; /* a seek went elsewhere */
    if (!ok) {
        m->index_state = -1; /* it does not match: never again */
        return;
    }
    swap = m->ahead;
    cap = m->ahead_cap;
    m->ahead = x->buf;
    m->ahead_cap = x->cap;
    x->buf = swap;
    x->cap = cap;
    m->ahead_at = m->ahead_crc_from = m->ahead_handed = m->pos;
    m->ahead_end = m->pos + x->bytes;
    m->ahead_crc = crc;
    if (end > m->chain)
        m->chain = end;
    m->tail_proven = m->tail_proven || end == m->index.count;
    *taken = true;
    next_start(m, end);
}

bool npyio__ahead_window(const member_state *m, const unsigned char **window,
                         size_t *len)
{
    uint64_t want = m->pos < 32768 ? m->pos : 32768;

    if (want == 0 || m->pos > m->ahead_end || m->pos - want < m->ahead_at)
        return false;
    *window = m->ahead + (m->pos - want - m->ahead_at);
    *len = (size_t)want;
    return true;
}

bool npyio__ahead_ready(const member_state *m)
{
    return m->next != NULL && m->next->count > 0 &&
           m->index.blocks[m->next->first].uoff == m->pos;
}

void npyio__ahead_free(member_state *m)
{
    if (m->next == NULL)
        return;
    next_wait(m);
    npyio__free(m->next->ip.parts);
    npyio__free(m->next->buf);
    npyio__free(m->next);
    m->next = NULL;
}

/* want bytes from pos, the blocks on the threads (above). *got = 0 when
 * the batch cannot be held or does not prove: the caller streams. */
npyio_status npyio__ahead_fill(member_state *m, unsigned char *buf,
                               size_t want, size_t *got)
{
    size_t b = npyio__block_of(m, m->pos), d = 0, k = 0, more = 0, done;
    uint64_t bytes = 0, start = m->pos, end;
    uint32_t crc = 0;
    bool ok = false, taken = false;
    npyio_status st;

    *got = 0;
    next_take(m, &taken);
    if (taken)
        return npyio__ahead_take(m, buf, want, got);
    if (m->index_state <= 0)
        return NPYIO_OK; /* the next batch did not prove: streaming */
    if (!ahead_plan(m, b, want, ahead_threads(m), &d, &k, &bytes) ||
        ahead_room(m, bytes) != NPYIO_OK)
        return NPYIO_OK; /* streaming reads it in bounded memory */
    m->ahead_at = m->ahead_end = 0;
    st = ahead_run(m, b, d, k, buf, &ok, &crc);
    if (st != NPYIO_OK || !ok) {
        m->ahead_at = 0;
        if (!ok)
            m->index_state = -1; /* it does not match: never again */
        return st;
    }
    if (b + d + k > m->chain)
        m->chain = b + d + k;
    m->tail_proven = m->tail_proven || b + d + k == m->index.count;
    end = b + d + k < m->index.count ? m->index.blocks[b + d + k].uoff
                                     : m->entry.usize;
    m->ahead_crc = crc;
    m->ahead_crc_from = m->pos;
    m->ahead_end = end;
    if (k == 0)
        m->ahead_at = end; /* nothing held */
    else
        next_start(m, b + d + k); /* chunks: the next batch meanwhile */
    m->pos = m->ahead_handed = m->ahead_at;
    done = (size_t)(m->pos - start);
    st = ahead_settle(m);
    if (st == NPYIO_OK)
        st = npyio__ahead_take(m, buf + done, want - done, &more);
    if (st != NPYIO_OK)
        return st;
    *got = done + more;
    return NPYIO_OK; /* at the end, tail_proven: the stream ends there */
}

/* Every block inflated alone to its declared length, once: then, and
 * only then, the index says where the stream's blocks start. */
npyio_status npyio__blocks_prove(member_state *m)
{
    uint32_t crc = 0;
    bool ok = false;
    npyio_status st = NPYIO_OK;

    if (m->index_state == 1)
        st = index_run(m, 0, NULL, &ok, &crc);
    if (st == NPYIO_OK && m->index_state == 1)
        ok ? index_proven(m) : (void)(m->index_state = -1);
    return st;
}

npyio_status npyio__blocks_check(member_state *m, int64_t *blocks)
{
    uint32_t crc = 0;
    bool ok = false;
    npyio_status st = NPYIO_OK;

    npyio__blocks_load(m);
    if (m->index_state > 0)
        st = index_run(m, 0, NULL, &ok, &crc);
    if (st == NPYIO_OK)
        *blocks = m->index_state > 0 && ok ? (int64_t)m->index.count
                  : m->index_found != 0   ? -1
                                          : 0;
    return st;
}
