/*
 * npz_member.c - member streams (npz_member.h). A stored member is a
 * range of the archive, read with the archive's positioned reads; a
 * deflated one is inflated by zlib's raw inflate into whatever buffer the
 * read was given (no staging copy), its input read in large blocks.
 *
 * The CRC covers the bytes from the start in order: every read extends it
 * over whatever part of its bytes lies just past what was covered, so a
 * whole read, chunks, or a header read twice all end with the check; a
 * caller that jumps around (rows of a stored member) is not checked, and
 * npyio_npz_verify() exists for it.
 */
#include "crc.h"
#include "error.h"
#include "npz_member.h"
#include "npz_member_core.h"
#include "options.h"
#include "threads.h"

#include <limits.h>
#include <string.h>
#include <libdeflate.h>
#include <zlib.h>

/* Compressed input read by the first reads (the .npy header). */
#define PROBE_INPUT_BYTES ((size_t)1 << 10)
/* Stored data read while its CRC runs: in blocks that stay in L2. */
#define CRC_BLOCK ((size_t)256 << 10)

/* ---- stored ------------------------------------------------------------------ */

/*
 * want bytes of the member at `offset`, read from the archive: where they
 * reach the end of what a sum covers (*sum_at: the member's CRC, or one
 * part's of a read in parts) in blocks that stay in L2, each added to
 * *sum while it is still in cache. *got is short only where the archive
 * ends. Changes nothing of m: parts run it on several threads at once.
 */
static npyio_status stored_span(const member_state *m, unsigned char *buf,
                                size_t want, uint64_t offset,
                                uint64_t *sum_at, uint32_t *sum, size_t *got)
{
    npyio_status st = NPYIO_OK;

    *got = 0;
    while (st == NPYIO_OK && *got < want) {
        uint64_t at = offset + *got;
        size_t step = want - *got, n = 0;

        if (at <= *sum_at && step > CRC_BLOCK)
            step = CRC_BLOCK;
        st = npyio__stream_read_at(m->archive, buf + *got, step,
                                   m->entry.data_offset + (int64_t)at, &n,
                                   "member data");
        if (st == NPYIO_OK && at <= *sum_at && at + n > *sum_at) {
            size_t skip = (size_t)(*sum_at - at);

            *sum = npyio__crc32(*sum, buf + *got + skip, n - skip);
            *sum_at = at + n;
        }
        *got += n;
        if (n < step)
            break;
    }
    return st;
}

/* The bytes of a read of cap at offset that lie in the member. */
static size_t stored_want(const member_state *m, size_t cap, int64_t offset)
{
    uint64_t left = (uint64_t)offset < m->entry.usize
                        ? m->entry.usize - (uint64_t)offset
                        : 0;

    return (uint64_t)cap < left ? cap : (size_t)left;
}

/* The parts of a read in parts, read whole, taken as the member's own
 * reads where they continue its CRC, in order, and agree with the
 * directory if they end the member; else nothing is taken (the bytes are
 * read again in order, which reports what is wrong as one thread does). */
static bool stored_parts_done(void *state, const npyio__stream_part *parts,
                              size_t count)
{
    member_state *m = state;
    uint64_t at = m->crc_pos;
    uint32_t crc = m->crc;
    size_t k;

    for (k = 0; k < count; k++) {
        if ((uint64_t)parts[k].start != at || parts[k].summed != parts[k].len)
            return false;
        crc = npyio__crc32_combine(crc, parts[k].sum, parts[k].len);
        at += parts[k].len;
    }
    if (at == m->entry.usize && crc != m->entry.crc)
        return false;
    m->crc = crc;
    m->crc_pos = at;
    return true;
}

/* A read of the member on several threads: its buffer and first byte. */
typedef struct stored_job {
    const member_state *m;
    unsigned char *buf;
    int64_t offset;
} stored_job;

static void stored_part_job(void *ctx, size_t k, npyio__stream_part *part)
{
    const stored_job *j = ctx;
    uint64_t sum_at = (uint64_t)part->start;
    size_t got = 0;

    (void)k;
    part->status = stored_span(j->m, j->buf + (part->start - j->offset),
                               (size_t)part->len, (uint64_t)part->start,
                               &sum_at, &part->sum, &got);
    part->summed = sum_at - (uint64_t)part->start;
    if (part->status == NPYIO_OK && got < part->len)
        part->status = NPYIO_E_TRUNCATED;
}

/* A read of `want` bytes where the CRC ends, on the threads the thread
 * policy gives (the archive's read in parts). False: read it on one
 * thread (nothing was taken). */
static bool stored_parallel(member_state *m, unsigned char *buf, size_t want,
                            int64_t offset)
{
    stored_job job = {m, buf, offset};
    npyio__stream_parts parts;
    unsigned threads = npyio__thread_count(
        m->thread_limit, want, npyio__stream_has_pread(m->archive));

    if (threads < 2 || (uint64_t)offset != m->crc_pos)
        return false;
    npyio__stream_parts_cut(&parts, m->archive, offset, want, 1, threads);
    return parts.count > 1 &&
           npyio__stream_read_parts(&parts, stored_part_job, &job) &&
           stored_parts_done(m, parts.part, parts.count);
}

static npyio_status stored_pread(void *state, void *buf, size_t cap,
                                 int64_t offset, size_t *got)
{
    member_state *m = state;
    size_t want = stored_want(m, cap, offset);
    npyio_status st;

    *got = 0;
    if (m->failed != NPYIO_OK)
        return npyio__member_fail(m, m->failed, "failed earlier");
    if (want > 0 && stored_parallel(m, buf, want, offset)) {
        *got = want;
        return npyio__member_crc_over(m, buf, 0, m->crc_pos);
    }
    st = stored_span(m, buf, want, (uint64_t)offset, &m->crc_pos, &m->crc,
                     got);
    if (st == NPYIO_OK && *got < want)
        st = npyio__member_fail(m, NPYIO_E_TRUNCATED, "the archive ends inside "
                         "it (was it cut short after it was opened?)");
    return st == NPYIO_OK ? npyio__member_crc_over(m, buf, 0, (uint64_t)offset + *got)
                          : st;
}

/* A pread by one part's job of a read in parts of the member stream (the
 * reader's parallel loads): the part keeps the CRC of its bytes. */
static npyio_status stored_pread_part(void *state, void *buf, size_t cap,
                                      int64_t offset, size_t *got,
                                      npyio__stream_part *part)
{
    const member_state *m = state;
    uint64_t sum_at = (uint64_t)part->start + part->summed;
    char shown[96];
    npyio_status st;

    *got = 0;
    if (m->failed != NPYIO_OK)
        return npyio__fail(m->failed, "member '%s': failed earlier",
                           npyio__member_name(m, shown, sizeof shown));
    st = stored_span(m, buf, stored_want(m, cap, offset), (uint64_t)offset,
                     &sum_at, &part->sum, got);
    part->summed = sum_at - (uint64_t)part->start;
    return st;
}

static npyio_status stored_read(void *state, void *buf, size_t cap,
                                size_t *got)
{
    member_state *m = state;
    npyio_status st = stored_pread(state, buf, cap, (int64_t)m->pos, got);

    if (st == NPYIO_OK)
        m->pos += *got;
    return st;
}

static npyio_status member_seek(void *state, int64_t offset, int whence,
                                int64_t *pos);

static npyio_status member_size(void *state, int64_t *size)
{
    *size = (int64_t)((const member_state *)state)->entry.usize;
    return NPYIO_OK;
}

static npyio_status member_close(void *state)
{
    member_state *m = state;

    if (m->z_ready)
        inflateEnd(&m->z);
    npyio__ahead_free(m); /* first: its threads read the archive */
    npyio__index_free(&m->index);
    npyio__free(m->in);
    npyio__free(m->skip);
    npyio__free(m->ahead);
    return NPYIO_OK;
}

/* What the CRC has not covered yet, read and dropped (nothing when a
 * whole read covered the member). */
static npyio_status stored_finish(void *state)
{
    member_state *m = state;
    unsigned char block[4096];
    size_t got = 1;
    npyio_status st = NPYIO_OK;

    while (st == NPYIO_OK && got > 0 && m->crc_pos <= m->entry.usize &&
           m->failed == NPYIO_OK)
        st = stored_pread(m, block, sizeof block, (int64_t)m->crc_pos, &got);
    return st;
}

/* Positioned reads only where the archive has them: then windows of one
 * archive may be read from several threads. */
static const npyio__stream_backend stored_backend = {
    .name = "archive member", .read = stored_read, .seek = member_seek,
    .pread = stored_pread, .size = member_size, .close = member_close,
    .finish = stored_finish, .pread_part = stored_pread_part,
    .parts_done = stored_parts_done};
static const npyio__stream_backend stored_seeking_backend = {
    .name = "archive member", .read = stored_read, .seek = member_seek,
    .size = member_size, .close = member_close, .finish = stored_finish};

/* ---- deflated ----------------------------------------------------------------- */

/* More compressed bytes (some are left: the caller checks). */
static npyio_status refill(member_state *m)
{
    uint64_t left = m->entry.csize - m->in_pos;
    size_t want = left < m->in_cap ? (size_t)left : m->in_cap, got = 0;
    npyio_status st;

    st = npyio__stream_read_at(m->archive, m->in, want,
                               m->entry.data_offset + (int64_t)m->in_pos,
                               &got, "compressed member data");
    if (st == NPYIO_OK && got < want)
        st = npyio__member_fail(m, NPYIO_E_TRUNCATED, "the archive ends inside it");
    if (st != NPYIO_OK)
        return st;
    m->in_at = m->in_pos;
    m->in_pos += got;
    m->z.next_in = m->in;
    m->z.avail_in = (uInt)got;
    return NPYIO_OK;
}

/* Inflate into out (at most cap bytes, cap <= UINT_MAX) until some output
 * came or the deflate stream ended. */
static npyio_status inflate_some(member_state *m, unsigned char *out,
                                 size_t cap, size_t *made)
{
    char what[160];
    npyio_status st;
    int ret;

    m->z.next_out = out;
    m->z.avail_out = (uInt)cap;
    while (m->z.avail_out == cap && !m->ended) {
        bool more = m->in_pos < m->entry.csize;

        if (m->z.avail_in == 0 && more) {
            st = refill(m);
            if (st != NPYIO_OK)
                return st;
        }
        /* Even with all input taken, zlib may hold output back (the rest
         * of a match, the last bits in its buffer): it gives it now, and
         * only when it can make no progress is the stream cut short. */
        ret = inflate(&m->z, Z_NO_FLUSH);
        if (ret == Z_STREAM_END)
            m->ended = true;
        else if (ret == Z_BUF_ERROR && m->z.avail_in == 0 && !more)
            return npyio__member_fail(m, NPYIO_E_TRUNCATED, "its compressed data "
                               "ends before its deflate stream does");
        else if (ret == Z_MEM_ERROR)
            return npyio__fail(NPYIO_E_NOMEM, "inflating a member: out of "
                               "memory");
        else if (ret != Z_OK && ret != Z_BUF_ERROR) {
            snprintf(what, sizeof what, "its deflate data is corrupt after "
                     "%llu compressed bytes: %s",
                     (unsigned long long)(m->in_pos - m->z.avail_in),
                     m->z.msg != NULL ? m->z.msg : "zlib error");
            return npyio__member_fail(m, NPYIO_E_FORMAT, what);
        }
    }
    *made = cap - m->z.avail_out;
    m->z_pos += *made;
    return NPYIO_OK;
}

static npyio_status z_catch_up(member_state *m);

/* At the declared size the deflate stream must end: one more byte of
 * output means the member inflates to more than its directory says. */
static npyio_status check_stream_end(member_state *m)
{
    unsigned char extra;
    size_t made = 0;
    npyio_status st = NPYIO_OK;

    if (!m->ended && !m->tail_proven) {
        st = z_catch_up(m);
        if (st == NPYIO_OK)
            st = inflate_some(m, &extra, 1, &made);
    }
    if (st == NPYIO_OK && made > 0)
        st = npyio__member_fail(m, NPYIO_E_FORMAT, "it inflates to more bytes than "
                         "the directory declares (a possible zip bomb)");
    return st;
}

/* The deflate stream ended before the declared size. Its CRC decides
 * what that is, as zipfile decides at the same point: when the bytes it
 * gave (all of them seen in order) do not match the directory's CRC-32,
 * the data is damaged (a flipped bit that ended a block early); when
 * they match, the directory declares too many bytes. */
static npyio_status ended_early(member_state *m)
{
    char what[160];

    if (m->crc_pos == m->pos && m->crc != m->entry.crc) {
        snprintf(what, sizeof what, "its deflate stream ends after %llu of "
                 "the %llu bytes declared, and their CRC-32 is %08lx; the "
                 "directory says %08lx", (unsigned long long)m->pos,
                 (unsigned long long)m->entry.usize, (unsigned long)m->crc,
                 (unsigned long)m->entry.crc);
        return npyio__member_fail(m, NPYIO_E_CHECKSUM, what);
    }
    snprintf(what, sizeof what, "it inflates to only %llu bytes; the "
             "directory declares %llu", (unsigned long long)m->pos,
             (unsigned long long)m->entry.usize);
    return npyio__member_fail(m, NPYIO_E_TRUNCATED, what);
}

/* ---- deflated, whole, in one libdeflate call ------------------------------------ */

/*
 * A read of everything a deflated member has left, its CRC continuous up
 * to there, inflates the whole member in one libdeflate call (about twice
 * zlib's speed) when the member declares at most WHOLE_MAX bytes and both
 * its sizes are within NPYIO_LIMIT_ALLOC_BYTES: its compressed bytes are
 * read into one block. libdeflate takes no window, so its output must
 * start at the stream's start: it goes straight into the read's buffer
 * when the read starts at the member's first byte, or when the caller
 * gave room for the bytes before the read just before its buffer
 * (npyio__stream_read_room: a reader's block for a whole load, the .npy
 * header landing in the room); else into a scratch block of the whole
 * member whose tail is copied into the buffer (a read into the caller's
 * own buffer, which has no room before it). Anything short
 * of a clean inflate to exactly the declared size (corrupt data, a stream
 * ending early or late, a cut archive) leaves the member as it was and
 * the streaming inflate below reads it, finding and saying what is wrong
 * as it always has, and so does a CRC-32 that differs (zlib refuses some
 * data libdeflate takes, such as dynamic blocks declaring 287 or 288
 * literal/length codes: damaged data gets zlib's verdict; only bytes of
 * the directory's CRC-32 are taken from libdeflate).
 */
#define WHOLE_MAX ((uint64_t)257 << 20) /* 256 MiB of data, its header */
#define WHOLE_PREFIX_MAX ((uint64_t)1 << 20)

static bool whole_fits(const member_state *m, uint64_t want)
{
    int choice = m->mem.faults.inflate;
    uint64_t bound = choice == NPYIO__INFLATE_ZLIB    ? 0
                     : choice == NPYIO__INFLATE_WHOLE ? UINT64_MAX
                                                      : WHOLE_MAX;

    if (bound > m->mem.max_alloc)
        bound = m->mem.max_alloc;
    /* It inflates the member from its start: not for the last chunk of
     * a long pass (pos > want, beyond the .npy header), which streaming
     * inflates alone faster. */
    return want > 0 && want == m->entry.usize - m->pos &&
           (m->pos <= want || m->pos <= WHOLE_PREFIX_MAX) &&
           m->crc_pos == m->pos && !m->ended && m->entry.usize <= bound &&
           m->entry.csize <= bound && m->entry.usize <= SIZE_MAX &&
           m->entry.csize <= SIZE_MAX;
}

/* libdeflate's decompressor (its own malloc: include/npyio.h says so at
 * npyio_options_set_allocator), or NPYIO_E_NOMEM. */
static npyio_status decompressor_new(const npyio__mem *mem,
                                     struct libdeflate_decompressor **out)
{
    *out = mem->faults.no_decompressor ? NULL
                                       : libdeflate_alloc_decompressor();
    if (*out == NULL)
        return npyio__fail(NPYIO_E_NOMEM, "inflating a member: out of "
                           "memory (libdeflate_alloc_decompressor)");
    return NPYIO_OK;
}

/* The member's compressed bytes in one block: the streaming inflate's
 * own when it holds them all, else a new one (*owned); *in NULL (and
 * NPYIO_OK) when the archive ends before them (the streaming inflate
 * says so). */
static npyio_status whole_input(member_state *m, unsigned char **in,
                                bool *owned)
{
    size_t len = (size_t)m->entry.csize, got = 0;
    npyio_status st;

    *owned = !(m->in_at == 0 && m->in_pos == m->entry.csize);
    *in = m->in;
    if (!*owned)
        return NPYIO_OK;
    st = npyio__alloc(&m->mem, len, "compressed member data", (void **)in);
    if (st == NPYIO_OK)
        st = npyio__stream_read_at(m->archive, *in, len,
                                   m->entry.data_offset, &got,
                                   "compressed member data");
    if (st != NPYIO_OK || got < len) {
        npyio__free(*in);
        *in = NULL;
    }
    return st;
}

/* The streaming inflate takes over the block whole_input read (in place
 * of its own), from where it stands: the compressed bytes are read from
 * the archive once whichever inflater finishes. */
static void whole_hand_over(member_state *m, unsigned char *in)
{
    uint64_t used = m->in_pos - m->z.avail_in;

    if (m->entry.csize - used > UINT_MAX) {
        npyio__free(in);
        return;
    }
    npyio__free(m->in);
    m->in = in;
    m->in_cap = (size_t)m->entry.csize;
    m->in_at = 0;
    m->in_pos = m->entry.csize;
    m->z.next_in = in + used;
    m->z.avail_in = (uInt)(m->entry.csize - used);
}

/* The member inflated whole into out (usize bytes); false if it does not
 * inflate cleanly to exactly that. */
static npyio_status whole_inflate(member_state *m, const unsigned char *in,
                                  unsigned char *out, bool *clean)
{
    struct libdeflate_decompressor *d = NULL;
    size_t used = 0, made = 0;
    npyio_status st = decompressor_new(&m->mem, &d);

    *clean = false;
    if (st != NPYIO_OK)
        return st;
    *clean = libdeflate_deflate_decompress_ex(
                 d, in, (size_t)m->entry.csize, out,
                 (size_t)m->entry.usize, &used,
                 &made) == LIBDEFLATE_SUCCESS &&
             made == m->entry.usize;
    libdeflate_free_decompressor(d);
    return NPYIO_OK;
}

/* Where the whole member goes: before buf if the room holds its first
 * pos bytes, else a new scratch block (*scratch). */
static npyio_status whole_out(member_state *m, unsigned char *buf,
                              size_t room, unsigned char **scratch,
                              unsigned char **out)
{
    npyio_status st = NPYIO_OK;

    if (m->pos > room) {
        st = npyio__alloc(&m->mem, (size_t)m->entry.usize, "inflated member",
                          (void **)scratch);
        *out = *scratch;
    } else {
        *out = buf - m->pos;
    }
    return st;
}

/* The rest of the inflated member (at out + pos) in buf, if its CRC-32
 * makes the member's the directory's: the member is then read to its
 * end. Else false: the streaming inflate reads it again and says what is
 * wrong (zlib may refuse data libdeflate takes: it is its message that
 * damage has always had). */
static bool whole_keep(member_state *m, unsigned char *buf,
                       const unsigned char *out, size_t want)
{
    uint32_t crc;

    if (out + m->pos != buf)
        memcpy(buf, out + m->pos, want);
    crc = npyio__crc32(m->crc, buf, want);
    if (crc != m->entry.crc)
        return false;
    m->crc = crc;
    m->crc_pos = m->entry.usize + 1; /* checked */
    m->ended = true;
    m->pos = m->entry.usize;
    return true;
}

/* The rest of the member (want bytes from pos) into buf in one call, the
 * member's first pos bytes into the `room` bytes before buf if they fit
 * (npyio__stream_read_room), else into a scratch. *got = 0 (NPYIO_OK) if
 * it did not inflate cleanly to bytes of the directory's CRC-32: the
 * caller streams. */
static npyio_status whole_read(member_state *m, unsigned char *buf,
                               size_t want, size_t room, size_t *got)
{
    unsigned char *in = NULL, *scratch = NULL, *out = NULL;
    bool clean = false, owned = false;
    npyio_status st = whole_input(m, &in, &owned);

    *got = 0;
    if (st == NPYIO_OK && in != NULL)
        st = whole_out(m, buf, room, &scratch, &out);
    if (st == NPYIO_OK && in != NULL)
        st = whole_inflate(m, in, out, &clean);
    if (st == NPYIO_OK && clean)
        clean = whole_keep(m, buf, out, want);
    if (owned && st == NPYIO_OK && !clean && in != NULL)
        whole_hand_over(m, in);
    else if (owned)
        npyio__free(in);
    npyio__free(scratch);
    if (clean)
        *got = want;
    return st;
}

/* Where the streaming inflate may start again for pos, with the state a
 * sequential inflate has there: block b's start, if b inflates alone
 * (proven: b < chain; *window NULL), or if pos is the start of the
 * first block not proven and its window (the 32 KiB before pos) is among
 * the blocks read ahead; else the stream's start (block 0). */
static size_t z_restart_block(const member_state *m,
                              const unsigned char **window, size_t *len)
{
    size_t b;

    *window = NULL;
    *len = 0;
    if (m->index.count == 0)
        return 0;
    b = npyio__block_of(m, m->pos);
    if (b < m->chain)
        return b;
    if (b == m->chain && m->index.blocks[b].uoff == m->pos &&
        npyio__ahead_window(m, window, len))
        return b;
    return 0;
}

/*
 * The streaming inflate brought to pos, where reads another way left it
 * behind (or ahead): it starts again where z_restart_block says, unless
 * it already stands between there and pos, and inflates up to pos into
 * the skip buffer. Those bytes were delivered already: the CRC is not
 * extended. A block that is not proven may refer to bytes before its
 * start: starting there with no window would fail where a sequential
 * inflate does not (found by fuzz_npz_threads).
 */
static npyio_status z_catch_up(member_state *m)
{
    const unsigned char *window = NULL;
    size_t b, len = 0;
    uint64_t start;
    npyio_status st = NPYIO_OK;

    if (m->z_pos == m->pos)
        return NPYIO_OK;
    b = z_restart_block(m, &window, &len);
    start = b > 0 ? m->index.blocks[b].uoff : 0;
    if (m->z_pos > m->pos || m->z_pos < start) {
        inflateReset(&m->z);
        if (len > 0 && inflateSetDictionary(&m->z, window, (uInt)len) != Z_OK)
            return npyio__fail(NPYIO_E_IO, "inflating a member: zlib "
                               "refused a window");
        m->z.avail_in = 0;
        m->in_pos = b > 0 ? m->index.blocks[b].coff : 0;
        m->z_pos = start;
        m->ended = false;
    }
    if (m->skip == NULL)
        st = npyio__alloc(&m->mem, SKIP_BYTES, "member skip buffer",
                          (void **)&m->skip);
    while (st == NPYIO_OK && m->z_pos < m->pos) {
        uint64_t left = m->pos - m->z_pos;
        size_t made = 0;

        st = inflate_some(m, m->skip, left < SKIP_BYTES ? (size_t)left
                                                         : SKIP_BYTES,
                          &made);
        if (st == NPYIO_OK && made == 0)
            st = npyio__member_fail(m, NPYIO_E_TRUNCATED, "its deflate stream "
                             "ends before bytes already read");
    }
    return st;
}

/* want bytes from pos into buf, by the first way that takes them: the
 * index's blocks or the one call to the end, blocks ahead, streaming. */
static npyio_status deflated_fetch(member_state *m, unsigned char *buf,
                                   size_t want, size_t room, size_t *got)
{
    size_t made = 0;
    npyio_status st = NPYIO_OK;

    *got = 0;
    if (npyio__ahead_ready(m) && want > 0) {
        st = npyio__ahead_fill(m, buf, want, got);
        if (st != NPYIO_OK || *got > 0)
            return st;
    }
    if (npyio__blocks_win(m, want, whole_fits(m, want))) {
        st = npyio__blocks_read(m, buf, want, got);
        if (st != NPYIO_OK || *got > 0)
            return st;
    }
    if (whole_fits(m, want)) {
        st = whole_read(m, buf, want, room, got);
        if (st != NPYIO_OK || *got > 0)
            return st;
    }
    if (npyio__ahead_fits(m, want)) {
        st = npyio__ahead_fill(m, buf, want, got);
        if (st != NPYIO_OK || *got > 0)
            return st;
    }
    if (want > UINT_MAX)
        want = UINT_MAX;
    if (want > 0)
        st = z_catch_up(m);
    if (st == NPYIO_OK && want > 0)
        st = inflate_some(m, buf, want, &made);
    if (st == NPYIO_OK && want > 0 && made == 0)
        st = ended_early(m);
    if (st == NPYIO_OK)
        st = npyio__member_crc_over(m, buf, made, m->pos);
    if (st != NPYIO_OK)
        return st;
    m->pos += made;
    *got = made;
    return m->pos == m->entry.usize ? check_stream_end(m) : NPYIO_OK;
}

/* A read of cap bytes, the room bytes before buf free to overwrite:
 * first what the blocks read ahead hold. */
static npyio_status deflated_read_in(member_state *m, unsigned char *buf,
                                     size_t cap, size_t room, size_t *got)
{
    uint64_t left = m->entry.usize - m->pos;
    size_t want = (uint64_t)cap < left ? cap : (size_t)left, took = 0,
           more = 0;
    npyio_status st;

    *got = 0;
    if (m->failed != NPYIO_OK)
        return npyio__member_fail(m, m->failed, "failed earlier");
    st = npyio__ahead_take(m, buf, want, &took);
    if (st == NPYIO_OK)
        st = deflated_fetch(m, buf + took, want - took, took > 0 ? 0 : room,
                            &more);
    *got = took + more;
    return st;
}

static npyio_status deflated_read(void *state, void *buf, size_t cap,
                                  size_t *got)
{
    return deflated_read_in(state, buf, cap, 0, got);
}

static npyio_status deflated_read_room(void *state, void *buf, size_t cap,
                                       size_t room, size_t *got)
{
    return deflated_read_in(state, buf, cap, room, got);
}

/* The room a read of cap bytes from here would use: the bytes before
 * pos, when it inflates the whole member in one call (whole_read). */
static size_t deflated_room(void *state, size_t cap)
{
    member_state *m = state;
    uint64_t left = m->entry.usize - m->pos;
    size_t want = (uint64_t)cap < left ? cap : (size_t)left;

    return m->failed == NPYIO_OK && !npyio__blocks_win(m, want, whole_fits(m, want)) &&
                   whole_fits(m, want)
               ? (size_t)m->pos
               : 0;
}

/* Back to the member's first byte: the inflater starts again. */
static void rewind_member(member_state *m)
{
    inflateReset(&m->z);
    m->z.avail_in = 0;
    m->in_pos = 0;
    m->ended = false;
    m->pos = m->z_pos = 0;
    m->crc = 0;
    m->crc_pos = 0;
}

/* Inflate forward to `target` into the skip buffer (the CRC still runs). */
static npyio_status skip_to(member_state *m, uint64_t target)
{
    npyio_status st = NPYIO_OK;

    if (m->skip == NULL)
        st = npyio__alloc(&m->mem, SKIP_BYTES, "member skip buffer",
                          (void **)&m->skip);
    while (st == NPYIO_OK && m->pos < target) {
        uint64_t left = target - m->pos;
        size_t got = 0;

        st = deflated_read(m, m->skip, left < SKIP_BYTES ? (size_t)left
                                                          : SKIP_BYTES,
                           &got);
    }
    return st;
}

/* A seek to `target` that the index shortens: backward past the first
 * block, or forward past the next block's start. The inflater starts
 * again at the block holding target (the CRC keeps what it covered). */
static npyio_status index_seek(member_state *m, uint64_t target,
                               bool *jumped)
{
    size_t b;
    npyio_status st;

    *jumped = false;
    npyio__blocks_load(m);
    if (m->index_state <= 0)
        return NPYIO_OK;
    b = npyio__block_of(m, target);
    if (b == 0 || (target >= m->pos && m->index.blocks[b].uoff <= m->pos))
        return NPYIO_OK;
    st = npyio__blocks_prove(m);
    if (st != NPYIO_OK || m->index_state != 2)
        return st;
    inflateReset(&m->z);
    m->z.avail_in = 0;
    m->in_pos = m->index.blocks[b].coff;
    m->pos = m->z_pos = m->index.blocks[b].uoff;
    m->ended = false;
    *jumped = true;
    return NPYIO_OK;
}

static npyio_status member_seek(void *state, int64_t offset, int whence,
                                int64_t *pos)
{
    member_state *m = state;
    int64_t base = whence == NPYIO_SEEK_SET   ? 0
                   : whence == NPYIO_SEEK_CUR ? (int64_t)m->pos
                                              : (int64_t)m->entry.usize;
    uint64_t target;
    npyio_status st = NPYIO_OK;

    if (offset > INT64_MAX - base || base + offset < 0)
        return npyio__fail(NPYIO_E_IO, "offset out of range");
    target = (uint64_t)(base + offset);
    if (m->z_ready) {
        bool jumped = false;

        if (target > m->entry.usize)
            target = m->entry.usize;
        st = index_seek(m, target, &jumped);
        if (st == NPYIO_OK && !jumped && target < m->pos)
            rewind_member(m);
        if (st == NPYIO_OK)
            st = skip_to(m, target);
    } else {
        m->pos = target;
    }
    *pos = (int64_t)m->pos;
    return st;
}

/* The rest of a deflated member, inflated and dropped: the CRC and the
 * stream's end are checked. A member of 0 bytes has nothing to skip: a
 * read of 0 bytes checks both (found by fuzz_npz: its CRC went
 * unchecked, so that verify passed a member whose read failed). */
static npyio_status deflated_finish(void *state)
{
    member_state *m = state;
    size_t got = 0;
    npyio_status st;

    if (m->failed != NPYIO_OK)
        return NPYIO_OK;
    st = skip_to(m, m->entry.usize);
    if (st == NPYIO_OK && m->crc_pos <= m->entry.usize)
        st = deflated_read(m, m->skip, 0, &got);
    return st;
}

static const npyio__stream_backend deflated_backend = {
    .name = "archive member", .read = deflated_read, .seek = member_seek,
    .size = member_size, .close = member_close, .finish = deflated_finish,
    .room = deflated_room, .read_room = deflated_read_room};

static npyio_status start_inflating(member_state *m, bool small)
{
    npyio_status st;
    int ret;

    m->in_cap = small ? PROBE_INPUT_BYTES : INPUT_BYTES;
    st = npyio__alloc(&m->mem, m->in_cap, "member input", (void **)&m->in);
    if (st != NPYIO_OK)
        return st;
    m->z.zalloc = npyio__zalloc;
    m->z.zfree = npyio__zfree;
    m->z.opaque = &m->mem;
    ret = inflateInit2(&m->z, -MAX_WBITS);
    if (ret != Z_OK)
        return npyio__fail(ret == Z_MEM_ERROR ? NPYIO_E_NOMEM : NPYIO_E_IO,
                           "starting to inflate a member: zlib error %d",
                           ret);
    m->z_ready = true;
    return NPYIO_OK;
}

npyio_status npyio__member_open(npyio_stream *archive,
                                const npyio__zip_entry *e, bool small,
                                const npyio_options *options,
                                npyio_stream **out)
{
    bool deflated = e->method == NPYIO__ZIP_DEFLATED;
    const npyio__stream_backend *backend =
        deflated                          ? &deflated_backend
        : npyio__stream_has_pread(archive) ? &stored_backend
                                           : &stored_seeking_backend;
    member_state *m;
    npyio_status st = npyio__stream_new(backend, sizeof *m, options, out,
                                        (void **)&m);

    if (st != NPYIO_OK)
        return st;
    m->archive = archive;
    m->entry = *e;
    m->thread_limit = npyio__limit(options, NPYIO_LIMIT_THREADS);
    npyio__mem_init(&m->mem, options);
    npyio__stream_set_position(*out, 0, true);
    if (deflated)
        st = start_inflating(m, small);
    if (st != NPYIO_OK) {
        npyio__stream_close(*out);
        *out = NULL;
    }
    return st;
}

npyio_status npyio__member_verify(npyio_stream *member, char *why,
                                  size_t cap)
{
    member_state *m = npyio__stream_state(member);
    npyio_status st = m->failed != NPYIO_OK ? m->failed
                                            : npyio__stream_finish(member);

    why[0] = '\0';
    if (st != NPYIO_OK && m->failed == st)
        snprintf(why, cap, "%s", m->why);
    return st;
}


npyio_status npyio__member_check_index(npyio_stream *member, int64_t *blocks)
{
    member_state *m = npyio__stream_state(member);

    *blocks = 0;
    return m->z_ready ? npyio__blocks_check(m, blocks) : NPYIO_OK;
}
