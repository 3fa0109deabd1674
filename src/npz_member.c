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
#include "npz_index.h"
#include "npz_member.h"
#include "options.h"
#include "threads.h"

#include <limits.h>
#include <string.h>
#include <libdeflate.h>
#include <zlib.h>

/* Compressed input read per refill, and the sink for skipped output. */
#define INPUT_BYTES ((size_t)256 << 10)
#define PROBE_INPUT_BYTES ((size_t)1 << 10)
#define SKIP_BYTES ((size_t)64 << 10)
/* Stored data read while its CRC runs: in blocks that stay in L2. */
#define CRC_BLOCK ((size_t)256 << 10)

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
} member_state;

static const char *member_name(const member_state *m, char *buf, size_t cap)
{
    return npyio__show(m->entry.name, strlen(m->entry.name), buf, cap);
}

/* A failure of the member's bytes: kept, and repeated by later reads. */
static npyio_status member_fail(member_state *m, npyio_status st,
                                const char *what)
{
    char shown[96];

    if (m->failed == NPYIO_OK)
        snprintf(m->why, sizeof m->why, "%s", what);
    m->failed = st;
    return npyio__fail(st, "member '%s': %s", member_name(m, shown,
                                                          sizeof shown),
                       what);
}

/* Once the CRC covers the whole member: checked, once. */
static npyio_status crc_check(member_state *m)
{
    char what[96];

    if (m->crc_pos != m->entry.usize)
        return NPYIO_OK;
    m->crc_pos = m->entry.usize + 1; /* checked */
    if (m->crc == m->entry.crc)
        return NPYIO_OK;
    snprintf(what, sizeof what, "its CRC-32 is %08lx; the directory says "
             "%08lx", (unsigned long)m->crc, (unsigned long)m->entry.crc);
    return member_fail(m, NPYIO_E_CHECKSUM, what);
}

/* Extend the CRC over the part of [at, at + len) just past what it covers,
 * and check it once it covers the whole member. */
static npyio_status crc_over(member_state *m, const unsigned char *buf,
                             size_t len, uint64_t at)
{
    if (m->crc_pos > m->entry.usize)
        return NPYIO_OK; /* checked already */
    if (at <= m->crc_pos && len > m->crc_pos - at) {
        size_t skip = (size_t)(m->crc_pos - at);

        m->crc = npyio__crc32(m->crc, buf + skip, len - skip);
        m->crc_pos = at + len;
    }
    return crc_check(m);
}

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
        return member_fail(m, m->failed, "failed earlier");
    if (want > 0 && stored_parallel(m, buf, want, offset)) {
        *got = want;
        return crc_over(m, buf, 0, m->crc_pos);
    }
    st = stored_span(m, buf, want, (uint64_t)offset, &m->crc_pos, &m->crc,
                     got);
    if (st == NPYIO_OK && *got < want)
        st = member_fail(m, NPYIO_E_TRUNCATED, "the archive ends inside "
                         "it (was it cut short after it was opened?)");
    return st == NPYIO_OK ? crc_over(m, buf, 0, (uint64_t)offset + *got)
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
                           member_name(m, shown, sizeof shown));
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
        st = member_fail(m, NPYIO_E_TRUNCATED, "the archive ends inside it");
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
            return member_fail(m, NPYIO_E_TRUNCATED, "its compressed data "
                               "ends before its deflate stream does");
        else if (ret == Z_MEM_ERROR)
            return npyio__fail(NPYIO_E_NOMEM, "inflating a member: out of "
                               "memory");
        else if (ret != Z_OK && ret != Z_BUF_ERROR) {
            snprintf(what, sizeof what, "its deflate data is corrupt after "
                     "%llu compressed bytes: %s",
                     (unsigned long long)(m->in_pos - m->z.avail_in),
                     m->z.msg != NULL ? m->z.msg : "zlib error");
            return member_fail(m, NPYIO_E_FORMAT, what);
        }
    }
    *made = cap - m->z.avail_out;
    m->z_pos += *made;
    return NPYIO_OK;
}

/* At the declared size the deflate stream must end: one more byte of
 * output means the member inflates to more than its directory says. */
static npyio_status z_catch_up(member_state *m);

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
        st = member_fail(m, NPYIO_E_FORMAT, "it inflates to more bytes than "
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
        return member_fail(m, NPYIO_E_CHECKSUM, what);
    }
    snprintf(what, sizeof what, "it inflates to only %llu bytes; the "
             "directory declares %llu", (unsigned long long)m->pos,
             (unsigned long long)m->entry.usize);
    return member_fail(m, NPYIO_E_TRUNCATED, what);
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
static void index_load(member_state *m)
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
static size_t index_block_of(const member_state *m, uint64_t at)
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

    *ok = false;
    *crc = 0;
    if (st != NPYIO_OK)
        return st;
    index_parts(m, from, out, ip.parts);
    /* Threads share the archive only through positioned reads. */
    npyio__run_parallel(count,
                        npyio__thread_count(
                            m->thread_limit, m->entry.usize,
                            npyio__stream_has_pread(m->archive)),
                        inflate_part_job, &ip);
    *ok = true;
    for (i = 0; i < count; i++) {
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
    index_load(m);
    return m->index_state > 0 &&
           m->index.count - index_block_of(m, m->pos) >= 2;
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

static bool index_wins(member_state *m, uint64_t want)
{
    return index_fits(m, want) &&
           (npyio__thread_count(m->thread_limit, want,
                                npyio__stream_has_pread(m->archive)) >
                WHOLE_BEATS_THREADS ||
            !whole_fits(m, want));
}

/* The rest of the member inflated on the threads into buf. NPYIO_OK with
 * *got = 0 when the index is not proven (index_run) or the CRC-32
 * differs: the caller inflates as without an index (it decides what is
 * wrong). */
static npyio_status index_read(member_state *m, unsigned char *buf,
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
    return crc_over(m, buf, 0, m->pos);
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
 * Memory: the blocks ahead, at most one per thread of at most
 * AHEAD_BLOCK_MAX each (4 MiB as npyio writes them).
 */
#define AHEAD_BLOCK_MAX ((uint64_t)16 << 20)
#ifndef AHEAD_PER_THREAD
#define AHEAD_PER_THREAD 1
#endif

static unsigned ahead_threads(const member_state *m)
{
    return npyio__thread_count(m->thread_limit, m->entry.usize - m->pos,
                               npyio__stream_has_pread(m->archive));
}

/* Reads of at least this many bytes take ahead_fill (the .npy header's
 * small reads stream: a whole read after them takes the one call). */
static size_t ahead_min_read(void)
{
    return npyio__part_bytes_min / 8;
}

static bool ahead_fits(member_state *m, size_t want)
{
    if (want == 0 || want < ahead_min_read() || m->crc_pos != m->pos ||
        ahead_threads(m) < 2)
        return false;
    index_load(m);
    return m->index_state > 0 && index_block_of(m, m->pos) <= m->chain;
}

/* What ahead holds at pos, into buf (at most want bytes): *took. */
static npyio_status ahead_take(member_state *m, unsigned char *buf,
                               size_t want, size_t *took)
{
    uint64_t have = m->ahead_end - m->pos;
    npyio_status st;

    *took = 0;
    if (m->pos < m->ahead_at || m->pos >= m->ahead_end || want == 0)
        return NPYIO_OK;
    if (have < want)
        want = (size_t)have;
    memcpy(buf, m->ahead + (m->pos - m->ahead_at), want);
    st = crc_over(m, buf, want, m->pos);
    if (st != NPYIO_OK)
        return st;
    m->pos += want;
    *took = want;
    return NPYIO_OK;
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
        if ((!cut && d + k >= AHEAD_PER_THREAD * threads) ||
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

/* want bytes from pos, the blocks on the threads (above). *got = 0 when
 * the batch cannot be held or does not prove: the caller streams. */
static npyio_status ahead_fill(member_state *m, unsigned char *buf,
                               size_t want, size_t *got)
{
    size_t b = index_block_of(m, m->pos), d = 0, k = 0, more = 0, done;
    uint64_t bytes = 0, start = m->pos, end;
    uint32_t crc = 0;
    bool ok = false;
    npyio_status st;

    *got = 0;
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
    /* The CRC runs ahead to the batch's end (each block's own, from the
     * threads, combined): a damaged member fails at this read. */
    m->crc = npyio__crc32_combine(m->crc, crc, end - m->pos);
    m->crc_pos = end;
    if (k > 0)
        m->ahead_end = end;
    m->pos = k > 0 ? m->ahead_at : end;
    done = (size_t)(m->pos - start);
    st = crc_check(m);
    if (st == NPYIO_OK)
        st = ahead_take(m, buf + done, want - done, &more);
    if (st != NPYIO_OK)
        return st;
    *got = done + more;
    return m->pos == m->entry.usize ? check_stream_end(m) : NPYIO_OK;
}

/*
 * The streaming inflate brought to pos, where reads another way left it
 * behind (or ahead): it starts again at the last proven block start at
 * or before pos (m->chain), or at the member's start, unless it already
 * stands between there and pos, and inflates up to pos into the skip
 * buffer. Those bytes were delivered already: the CRC is not extended.
 */
static npyio_status z_catch_up(member_state *m)
{
    size_t b = 0;
    uint64_t start = 0;
    npyio_status st = NPYIO_OK;

    if (m->z_pos == m->pos)
        return NPYIO_OK;
    if (m->index.count > 0) {
        b = index_block_of(m, m->pos);
        if (b > m->chain)
            b = m->chain;
        start = m->index.blocks[b].uoff;
    }
    if (m->z_pos > m->pos || m->z_pos < start) {
        inflateReset(&m->z);
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
            st = member_fail(m, NPYIO_E_TRUNCATED, "its deflate stream "
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
    if (index_wins(m, want)) {
        st = index_read(m, buf, want, got);
        if (st != NPYIO_OK || *got > 0)
            return st;
    }
    if (whole_fits(m, want)) {
        st = whole_read(m, buf, want, room, got);
        if (st != NPYIO_OK || *got > 0)
            return st;
    }
    if (ahead_fits(m, want)) {
        st = ahead_fill(m, buf, want, got);
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
        st = crc_over(m, buf, made, m->pos);
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
        return member_fail(m, m->failed, "failed earlier");
    st = ahead_take(m, buf, want, &took);
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

    return m->failed == NPYIO_OK && !index_wins(m, want) &&
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

/* Every block inflated alone to its declared length, once: then, and
 * only then, the index says where the stream's blocks start. */
static npyio_status index_prove(member_state *m)
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

/* A seek to `target` that the index shortens: backward past the first
 * block, or forward past the next block's start. The inflater starts
 * again at the block holding target (the CRC keeps what it covered). */
static npyio_status index_seek(member_state *m, uint64_t target,
                               bool *jumped)
{
    size_t b;
    npyio_status st;

    *jumped = false;
    index_load(m);
    if (m->index_state <= 0)
        return NPYIO_OK;
    b = index_block_of(m, target);
    if (b == 0 || (target >= m->pos && m->index.blocks[b].uoff <= m->pos))
        return NPYIO_OK;
    st = index_prove(m);
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
    uint32_t crc = 0;
    bool ok = false;
    npyio_status st = NPYIO_OK;

    *blocks = 0;
    if (!m->z_ready)
        return NPYIO_OK;
    index_load(m);
    if (m->index_state > 0)
        st = index_run(m, 0, NULL, &ok, &crc);
    if (st == NPYIO_OK)
        *blocks = m->index_state > 0 && ok ? (int64_t)m->index.count
                  : m->index_found != 0   ? -1
                                          : 0;
    return st;
}
