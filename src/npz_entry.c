/*
 * npz_entry.c - one member of an archive being written, as a stream back
 * end (the mirror of npz_member.c): its bytes stored, deflated by our own
 * zlib stream, deflated on several threads in independent blocks, or,
 * when they come whole, deflated in one libdeflate call; our
 * own CRC, so that a member of unknown row count can have its .npy header
 * rewritten at the end (as a stored deflate block when compressed) and
 * its CRC rebuilt with crc32_combine. minizip writes the entry's local
 * header and finishes it.
 */
#include "crc.h"
#include "error.h"
#include "header.h"
#include "npz_index.h"
#include "npz_write_core.h"
#include "options.h"
#include "threads.h"

#include <libdeflate.h>
#include <limits.h>
#include <string.h>
#include <zlib.h>

/* What NumPy's zipfile writes: 1980-01-01 00:00 in DOS format, -rw-------
 * as Unix attributes, made by Unix with ZIP 2.0. */
#define DOS_DATE 0x00210000ul
#define EXTERNAL_ATTR 0x1800000ul
#define MADE_BY 0x314
#define ALIGNMENT 64
#define ALIGN_EXTRA_ID 0xD935u /* Android's zipalign */
#define LOCAL_LEN 30
#define ZIP64_LOCAL_EXTRA 20   /* minizip's, after ours */
#define OUT_BYTES ((size_t)256 << 10)
/* Parallel deflate: blocks this large cost +0.014% in size (level 6). */
#define PAR_BLOCK ((size_t)4 << 20)
/* Whole members: as large as whole reads take (npz_member.c), 256 MiB of
 * data and its header, so that what we write we also read in one call. */
#define WHOLE_MAX ((uint64_t)257 << 20)
/* One libdeflate call beats zlib's blocks on this many threads (measured
 * on 2 at levels 1 and 6: tests/bench/bench_npz.c --only deflate); more
 * threads were not measured, and keep the blocks and their index. */
#define WHOLE_THREADS 2u

/* One member being written: the stream a writer writes through. */
typedef struct npyio__npz_entry {
    npyio_npz_writer *npz;
    char *name;
    int level;                 /* 0: stored */
    z_stream z;
    bool z_ready, committed;
    unsigned char *out;        /* deflate output */
    uint64_t usize;            /* bytes given so far */
    int64_t pos;               /* the writer's position in them */
    int64_t data_at;           /* the member's data in the archive */
    /* Unknown rows: the .npy header (the first head_len bytes) may be
     * rewritten at the end; the CRC is kept in two parts. */
    size_t head_len;
    uint32_t crc_head, crc_rest;
    unsigned char *first;      /* the header as first written */
    unsigned char *head;       /* the rewritten header, once it is */
    int64_t head_at;           /* where the header's bytes lie in the
                                  member's data as written */
    uint64_t cwritten;         /* bytes of the member's data written */
    /* Deflate on several threads: independent blocks, each ended with a
     * full flush (the last one finished), deflated a batch at a time. */
    bool zip_crc;              /* stored, of known length: minizip sums
                                  the CRC as it copies (once, not twice) */
    unsigned threads;          /* 1: one ordinary deflate stream */
    unsigned char *batch;      /* threads * PAR_BLOCK bytes of input */
    size_t batch_len;
    struct par_job *jobs;      /* threads of them */
    /* The block index of a member deflated on several threads, of known
     * length: its field reserved in the local header at open, its blocks
     * recorded as they are written, the field filled in at commit. */
    npyio__index_block *index;
    size_t index_cap, index_len;
    uint64_t index_uoff;       /* uncompressed bytes of blocks recorded */
    /* A member whose bytes come whole (whole_len of them: its header,
     * head_len bytes kept in `first`, then its data in one write): the
     * header goes out as stored blocks, the data in one libdeflate call;
     * data that comes in pieces after all goes to zlib's stream. */
    bool whole, whole_done;
    uint64_t whole_len;
} entry_state;

/* One block of a parallel deflate. */
typedef struct par_job {
    const unsigned char *in;
    size_t len;
    bool last;
    unsigned char *out;        /* deflateBound of a block */
    size_t out_len;
    uint32_t crc;
    int failed;                /* a zlib status, 0 if none */
} par_job;

/* A member whose archive was released before it: every call fails. */
static npyio_status archive_gone(void)
{
    return npyio__fail(NPYIO_E_STATE, "the archive of this member was "
                       "closed or aborted before the member was finished");
}

static npyio_status raw_write(entry_state *e, const void *buf, size_t len)
{
    const unsigned char *p = buf;

    while (len > 0) {
        unsigned n = len > (1u << 30) ? 1u << 30 : (unsigned)len;
        int rc = zipWriteInFileInZip(e->npz->zip, p, n);

        if (rc != ZIP_OK || e->npz->io_failed != NPYIO_OK)
            return npyio__npz_zip_failure(e->npz, "writing a member", rc);
        p += n;
        len -= n;
        e->cwritten += n;
    }
    return NPYIO_OK;
}

/* Deflate with `flush`, writing out what comes. */
static npyio_status deflate_out(entry_state *e, int flush)
{
    npyio_status st = NPYIO_OK;
    int ret;

    do {
        e->z.next_out = e->out;
        e->z.avail_out = (uInt)OUT_BYTES;
        ret = deflate(&e->z, flush);
        if (ret == Z_STREAM_ERROR)
            return npyio__fail(NPYIO_E_IO, "deflating a member: zlib error");
        st = raw_write(e, e->out, OUT_BYTES - e->z.avail_out);
    } while (st == NPYIO_OK && e->z.avail_out == 0);
    (void)ret;
    return st;
}

static npyio_status deflate_in(entry_state *e, const unsigned char *p,
                               size_t len)
{
    npyio_status st = NPYIO_OK;

    while (st == NPYIO_OK && len > 0) {
        uInt n = len > UINT_MAX ? UINT_MAX : (uInt)len;

        e->z.next_in = (unsigned char *)p;
        e->z.avail_in = n;
        st = deflate_out(e, Z_NO_FLUSH);
        p += n;
        len -= n;
    }
    return st;
}

/* The header's bytes of an unknown-row-count member: stored (in a stored
 * deflate block, found verbatim in the output, when compressed) so that
 * they can be rewritten in place. */
static npyio_status head_done(entry_state *e)
{
    size_t made, at;
    int ret;

    if (e->level == 0) {
        e->head_at = 0;
        return NPYIO_OK;
    }
    e->z.next_out = e->out;
    e->z.avail_out = (uInt)OUT_BYTES;
    ret = deflate(&e->z, Z_FULL_FLUSH);
    made = OUT_BYTES - e->z.avail_out;
    /* Level 0 holds a small input back until the flush, which puts it out
     * verbatim in a stored block: find it there. */
    for (at = 0; at + e->head_len <= made; at++)
        if (memcmp(e->out + at, e->first, e->head_len) == 0)
            break;
    if (ret != Z_OK || e->z.avail_out == 0 || at + e->head_len > made)
        return npyio__fail(NPYIO_E_IO, "deflating a member's header: it did "
                           "not come out as a stored block");
    e->head_at = (int64_t)(e->cwritten + at);
    ret = deflateParams(&e->z, e->level, Z_DEFAULT_STRATEGY);
    if (ret != Z_OK)
        return npyio__fail(NPYIO_E_IO, "deflating a member: zlib error %d",
                           ret);
    return raw_write(e, e->out, OUT_BYTES - e->z.avail_out);
}

/* ---- deflate in one libdeflate call ---------------------------------------------- */

/* libdeflate's compressor (its own malloc: include/npyio.h says so at
 * npyio_options_set_allocator), or NPYIO_E_NOMEM. */
static npyio_status compressor_new(const npyio__mem *mem, int level,
                                   struct libdeflate_compressor **out)
{
    *out = mem->faults.no_compressor ? NULL
                                     : libdeflate_alloc_compressor(level);
    if (*out == NULL)
        return npyio__fail(NPYIO_E_NOMEM, "deflating a member: out of "
                           "memory (libdeflate_alloc_compressor)");
    return NPYIO_OK;
}

/* The data, where it lies, in one call into one block: libdeflate's
 * stream ends with a final block, after the header's stored ones. */
static npyio_status deflate_whole(entry_state *e, const unsigned char *p,
                                  size_t len)
{
    struct libdeflate_compressor *c = NULL;
    unsigned char *out = NULL;
    size_t cap, made;
    npyio_status st = compressor_new(&e->npz->mem, e->level, &c);

    if (st != NPYIO_OK)
        return st;
    cap = libdeflate_deflate_compress_bound(c, len);
    st = npyio__alloc(&e->npz->mem, cap, "deflate output", (void **)&out);
    if (st == NPYIO_OK) {
        made = libdeflate_deflate_compress(c, p, len, out, cap);
        st = made == 0 ? npyio__fail(NPYIO_E_IO, "deflating a member: "
                                     "libdeflate's output did not fit its "
                                     "own bound")
                       : raw_write(e, out, made);
    }
    npyio__free(out);
    libdeflate_free_compressor(c);
    e->whole_done = st == NPYIO_OK;
    return st;
}

/* The header as stored deflate blocks, not final (as an unknown row
 * count's header goes out through zlib's level 0): they end on a byte
 * boundary, so that the data's own deflate stream follows as if one
 * stream had made both. */
static npyio_status stored_head(entry_state *e)
{
    npyio_status st = NPYIO_OK;
    size_t done = 0;

    e->crc_head = npyio__crc32(0, e->first, e->head_len);
    while (st == NPYIO_OK && done < e->head_len) {
        size_t n = e->head_len - done < 0xFFFF ? e->head_len - done : 0xFFFF;
        unsigned char block[5] = {0x00, (unsigned char)(n & 0xFF),
                                  (unsigned char)(n >> 8),
                                  (unsigned char)(~n & 0xFF),
                                  (unsigned char)((~n >> 8) & 0xFF)};

        st = raw_write(e, block, sizeof block);
        if (st == NPYIO_OK)
            st = raw_write(e, e->first + done, n);
        done += n;
    }
    return st;
}

static npyio_status start_deflate(npyio_npz_writer *w, entry_state *e);

/* The data: in one libdeflate call when it is all in this write, else
 * (it came in pieces after all) through zlib's stream. */
static npyio_status whole_data(entry_state *e, const unsigned char *p,
                               size_t len)
{
    npyio_status st = NPYIO_OK;

    if (e->whole_done)
        return npyio__fail(NPYIO_E_STATE, "an archive member was given "
                           "more bytes than it declared");
    if (!e->z_ready && e->usize + len == e->whole_len)
        return deflate_whole(e, p, len);
    if (!e->z_ready)
        st = start_deflate(e->npz, e);
    return st == NPYIO_OK ? deflate_in(e, p, len) : st;
}

/* How many of the next len bytes belong to the header (head_len). */
static size_t head_part(const entry_state *e, size_t len)
{
    if (e->usize >= e->head_len)
        return 0;
    return (size_t)(e->head_len - e->usize) < len
               ? (size_t)(e->head_len - e->usize)
               : len;
}

static npyio_status append_whole(entry_state *e, const unsigned char *p,
                                 size_t len)
{
    size_t in_head = head_part(e, len);
    npyio_status st = NPYIO_OK;

    if (in_head > 0) {
        memcpy(e->first + e->usize, p, in_head);
        e->usize += in_head;
        if (e->usize == e->head_len)
            st = stored_head(e);
    }
    if (st == NPYIO_OK && len > in_head) {
        e->crc_rest = npyio__crc32(e->crc_rest, p + in_head, len - in_head);
        st = whole_data(e, p + in_head, len - in_head);
        e->usize += len - in_head;
    }
    e->pos = (int64_t)e->usize;
    return st;
}

/* The end of a whole member's deflate stream: a member of no data gets
 * libdeflate's empty stream, one that came in pieces zlib's end. */
static npyio_status finish_whole(entry_state *e)
{
    if (e->z_ready)
        return deflate_out(e, Z_FINISH);
    return e->whole_done ? NPYIO_OK : deflate_whole(e, NULL, 0);
}

/* ---- deflate on several threads -------------------------------------------------- */

static void deflate_job(void *ctx, size_t index)
{
    entry_state *e = ctx;
    par_job *j = &e->jobs[index];
    z_stream z;
    uLong bound;
    int ret;

    memset(&z, 0, sizeof z);
    z.zalloc = npyio__zalloc;
    z.zfree = npyio__zfree;
    z.opaque = &e->npz->mem;
    j->failed = deflateInit2(&z, e->level, Z_DEFLATED, -MAX_WBITS, 8,
                             Z_DEFAULT_STRATEGY);
    if (j->failed != Z_OK)
        return;
    bound = deflateBound(&z, (uLong)PAR_BLOCK) + 16;
    z.next_in = (unsigned char *)j->in;
    z.avail_in = (uInt)j->len;
    z.next_out = j->out;
    z.avail_out = (uInt)bound;
    /* A full flush ends a block on a byte boundary with an empty stored
     * block: the next one, deflated by another stream, follows it as if
     * one stream had made both. */
    ret = deflate(&z, j->last ? Z_FINISH : Z_FULL_FLUSH);
    j->failed = ret == (j->last ? Z_STREAM_END : Z_OK) ? 0 : ret;
    j->out_len = bound - z.avail_out;
    j->crc = npyio__crc32(0, j->in, j->len);
    deflateEnd(&z);
}

/* A block about to be written: where it starts, for the index (the
 * stream's final empty block belongs to the last one). */
static void record_block(entry_state *e, size_t len)
{
    if (e->index == NULL || (len == 0 && e->index_len > 0))
        return;
    if (e->index_len < e->index_cap) {
        e->index[e->index_len].coff = e->cwritten;
        e->index[e->index_len].uoff = e->index_uoff;
    }
    e->index_len++;
    e->index_uoff += len;
}

/* Deflate what the batch holds, on the threads, and write it in order. */
static npyio_status run_batch(entry_state *e, bool last)
{
    size_t count = (e->batch_len + PAR_BLOCK - 1) / PAR_BLOCK, i;
    npyio_status st = NPYIO_OK;

    if (count == 0 && !last)
        return NPYIO_OK;
    if (count == 0)
        count = 1; /* the stream's final, empty block */
    for (i = 0; i < count; i++) {
        par_job *j = &e->jobs[i];

        j->in = e->batch + i * PAR_BLOCK;
        j->len = e->batch_len - i * PAR_BLOCK < PAR_BLOCK
                     ? e->batch_len - i * PAR_BLOCK
                     : PAR_BLOCK;
        j->last = last && i + 1 == count;
    }
    npyio__run_parallel(count, e->threads, deflate_job, e);
    for (i = 0; st == NPYIO_OK && i < count; i++) {
        par_job *j = &e->jobs[i];

        if (j->failed != 0)
            return npyio__fail(j->failed == Z_MEM_ERROR ? NPYIO_E_NOMEM
                                                        : NPYIO_E_IO,
                               "deflating a member: zlib error %d",
                               j->failed);
        e->crc_rest = npyio__crc32_combine(e->crc_rest, j->crc, j->len);
        record_block(e, j->len);
        st = raw_write(e, j->out, j->out_len);
    }
    e->batch_len = 0;
    return st;
}

static npyio_status append_parallel(entry_state *e, const unsigned char *p,
                                    size_t len)
{
    size_t room = (size_t)e->threads * PAR_BLOCK;
    npyio_status st = NPYIO_OK;

    e->usize += len;
    e->pos = (int64_t)e->usize;
    while (st == NPYIO_OK && len > 0) {
        size_t n = room - e->batch_len < len ? room - e->batch_len : len;

        memcpy(e->batch + e->batch_len, p, n);
        e->batch_len += n;
        p += n;
        len -= n;
        if (e->batch_len == room)
            st = run_batch(e, false);
    }
    return st;
}

static npyio_status start_parallel(npyio_npz_writer *w, entry_state *e)
{
    size_t bound = compressBound((uLong)PAR_BLOCK) + 64, i;
    npyio_status st = npyio__alloc_array(&w->mem, e->threads, PAR_BLOCK,
                                         "deflate input", (void **)&e->batch);

    if (st == NPYIO_OK)
        st = npyio__alloc_zero(&w->mem, e->threads * sizeof *e->jobs,
                               "deflate jobs", (void **)&e->jobs);
    for (i = 0; st == NPYIO_OK && i < e->threads; i++)
        st = npyio__alloc(&w->mem, bound, "deflate output",
                          (void **)&e->jobs[i].out);
    return st;
}

static void free_parallel(entry_state *e, unsigned threads)
{
    unsigned i;

    for (i = 0; e->jobs != NULL && i < threads; i++)
        npyio__free(e->jobs[i].out);
    npyio__free(e->jobs);
    npyio__free(e->batch);
}

static npyio_status append_bytes(entry_state *e, const unsigned char *p,
                                 size_t len)
{
    size_t in_head = head_part(e, len);
    npyio_status st;

    if (e->threads > 1)
        return append_parallel(e, p, len);
    if (e->whole)
        return append_whole(e, p, len);
    e->crc_head = npyio__crc32(e->crc_head, p, in_head);
    if (in_head > 0)
        memcpy(e->first + e->usize, p, in_head);
    if (!e->zip_crc)
        e->crc_rest = npyio__crc32(e->crc_rest, p + in_head,
                                        len - in_head);
    st = e->level == 0 ? raw_write(e, p, len)
                       : deflate_in(e, p, in_head);
    if (st == NPYIO_OK && in_head > 0 && e->usize + in_head == e->head_len)
        st = head_done(e);
    if (st == NPYIO_OK && e->level != 0)
        st = deflate_in(e, p + in_head, len - in_head);
    if (st == NPYIO_OK) {
        e->usize += len;
        e->pos = (int64_t)e->usize;
    }
    return st;
}

static npyio_status entry_write(void *state, const void *buf, size_t len,
                                size_t *put)
{
    entry_state *e = state;
    npyio_status st;

    *put = 0;
    if (e->npz == NULL)
        return archive_gone();
    if ((uint64_t)e->pos < e->usize) {
        /* A rewrite: only of the header of an unknown row count. */
        if ((uint64_t)e->pos + len > e->head_len)
            return npyio__fail(NPYIO_E_STATE, "an archive member is written "
                               "once; only an unknown row count's header "
                               "can be rewritten");
        if (e->head == NULL) {
            st = npyio__alloc(&e->npz->mem, e->head_len, "a member header",
                              (void **)&e->head);
            if (st != NPYIO_OK)
                return st;
        }
        memcpy(e->head + e->pos, buf, len);
        e->pos += (int64_t)len;
        *put = len;
        return NPYIO_OK;
    }
    st = append_bytes(e, buf, len);
    if (st == NPYIO_OK)
        *put = len;
    return st;
}

static npyio_status entry_seek(void *state, int64_t offset, int whence,
                               int64_t *pos)
{
    entry_state *e = state;
    int64_t base;

    if (e->npz == NULL)
        return archive_gone();
    base = whence == NPYIO_SEEK_SET   ? 0
                   : whence == NPYIO_SEEK_CUR ? e->pos
                                              : (int64_t)e->usize;

    if (offset > INT64_MAX - base || base + offset < 0 ||
        (uint64_t)(base + offset) > e->usize)
        return npyio__fail(NPYIO_E_IO, "an archive member cannot seek "
                           "outside what was written");
    e->pos = base + offset;
    *pos = e->pos;
    return NPYIO_OK;
}

/* Write bytes over what the archive holds at `at`, and come back. */
static npyio_status place_at(entry_state *e, int64_t at, const void *buf,
                             size_t len, const char *what)
{
    npyio_stream *s = e->npz->stream;
    int64_t end = 0;
    npyio_status st = npyio__stream_tell(s, &end);

    if (st == NPYIO_OK)
        st = npyio__stream_seek(s, at, NPYIO_SEEK_SET, NULL);
    if (st == NPYIO_OK)
        st = npyio__stream_write(s, buf, len, what);
    if (st == NPYIO_OK)
        st = npyio__stream_seek(s, end, NPYIO_SEEK_SET, NULL);
    return st;
}

/* Put a rewritten header where its bytes lie in the archive. */
static npyio_status place_head(entry_state *e)
{
    return place_at(e, e->data_at + e->head_at, e->head, e->head_len,
                    "a member header");
}

/* Fill in the block index reserved in the local header (just before
 * minizip's ZIP64 block): only if the blocks are those reserved, else
 * the reserved field stays, which no reader takes. */
static npyio_status place_index(entry_state *e)
{
    size_t len = npyio__index_field_len(e->index_cap);
    unsigned char *field = NULL;
    npyio_status st;

    if (e->index == NULL || e->index_len != e->index_cap ||
        e->index_uoff != e->usize)
        return NPYIO_OK;
    st = npyio__alloc(&e->npz->mem, len, "a block index", (void **)&field);
    if (st != NPYIO_OK)
        return st;
    npyio__index_encode(e->index, e->index_cap, field);
    st = place_at(e, e->data_at - ZIP64_LOCAL_EXTRA - (int64_t)len, field,
                  len, "a block index");
    npyio__free(field);
    return st;
}

static npyio_status entry_commit(void *state, bool durable)
{
    entry_state *e = state;
    uint32_t crc_head, crc;
    npyio_status st = NPYIO_OK;
    int rc;

    (void)durable;
    if (e->npz == NULL)
        return archive_gone();
    if (e->usize < e->head_len)
        return npyio__fail(NPYIO_E_TRUNCATED, "the member's header was not "
                           "written whole");
    if (e->threads > 1)
        st = run_batch(e, true);
    else if (e->whole)
        st = finish_whole(e);
    else if (e->level != 0)
        st = deflate_out(e, Z_FINISH);
    if (st != NPYIO_OK)
        return st;
    /* The CRC of the header as it ends up, then of the rest. */
    crc_head = e->head != NULL ? npyio__crc32(0, e->head, e->head_len)
                               : e->crc_head;
    crc = npyio__crc32_combine(crc_head, e->crc_rest,
                               e->usize - e->head_len);
    rc = e->zip_crc ? zipCloseFileInZip(e->npz->zip)
                    : zipCloseFileInZipRaw64(e->npz->zip, e->usize, crc);
    if (rc != ZIP_OK || e->npz->io_failed != NPYIO_OK)
        return npyio__npz_zip_failure(e->npz, "finishing a member", rc);
    e->committed = true;
    e->npz->member_open = false;
    e->npz->open_entry = NULL;
    st = place_index(e);
    return st == NPYIO_OK && e->head != NULL ? place_head(e) : st;
}

static npyio_status entry_close(void *state)
{
    entry_state *e = state;
    char shown[96];

    if (e->z_ready)
        deflateEnd(&e->z);
    free_parallel(e, e->threads);
    npyio__free(e->out);
    npyio__free(e->first);
    npyio__free(e->head);
    npyio__free(e->index);
    if (!e->committed && e->npz != NULL) {
        /* Half a member is in the archive and minizip cannot take it
         * back: the archive cannot be finished. The thread's message
         * stays that of the failure that got us here, if any. */
        npyio__saved_message saved;

        e->npz->member_open = false;
        e->npz->open_entry = NULL;
        npyio__message_save(&saved);
        npyio__sticky_fail(&e->npz->sticky,
                           npyio__fail(NPYIO_E_STATE, "member '%s' was not "
                                       "finished (failed or abandoned)",
                                       npyio__show(e->name, strlen(e->name),
                                                   shown, sizeof shown)));
        npyio__message_restore(&saved);
    }
    return NPYIO_OK;
}

static const npyio__stream_backend entry_backend = {
    .name = "archive member", .write = entry_write, .seek = entry_seek,
    .commit = entry_commit, .close = entry_close};

/* ---- opening a member ---------------------------------------------------------- */

/* The local extra field that pads a stored member's data to a multiple
 * of 64: one block of zeros under zipalign's id. Returns its length. */
static size_t align_extra(int64_t header_at, size_t name_len,
                          unsigned char extra[4 + ALIGNMENT])
{
    uint64_t base = (uint64_t)header_at + LOCAL_LEN + name_len +
                    ZIP64_LOCAL_EXTRA + 4;
    size_t pad = (size_t)((ALIGNMENT - base % ALIGNMENT) % ALIGNMENT);

    memset(extra, 0, 4 + pad);
    extra[0] = ALIGN_EXTRA_ID & 0xFF;
    extra[1] = ALIGN_EXTRA_ID >> 8;
    extra[2] = (unsigned char)pad;
    return 4 + pad;
}

static bool is_ascii(const char *s)
{
    for (; *s != '\0'; s++)
        if ((unsigned char)*s >= 0x80)
            return false;
    return true;
}

/* Open the entry in minizip: its local header goes out now. */
static npyio_status open_entry(npyio_npz_writer *w, entry_state *e,
                               const char *where, unsigned char *extra)
{
    size_t extra_len = 0;
    zip_fileinfo info;
    int64_t at = 0;
    int rc;
    npyio_status st = npyio__stream_tell(w->stream, &at);

    if (st != NPYIO_OK)
        return st;
    memset(&info, 0, sizeof info);
    info.dosDate = DOS_DATE;
    info.external_fa = EXTERNAL_ATTR;
    if (w->align && e->level == 0)
        extra_len = align_extra(at, strlen(e->name), extra);
    else if (e->index != NULL) {
        npyio__index_encode(NULL, e->index_cap, extra);
        extra_len = npyio__index_field_len(e->index_cap);
    }
    rc = zipOpenNewFileInZip4_64(w->zip, e->name, &info,
                                 extra_len ? extra : NULL, (uInt)extra_len,
                                 NULL, 0, NULL,
                                 e->level ? Z_DEFLATED : 0, e->level,
                                 !e->zip_crc,
                                 -MAX_WBITS, 8, Z_DEFAULT_STRATEGY, NULL, 0,
                                 MADE_BY, is_ascii(e->name) ? 0 : 0x800, 1);
    if (rc != ZIP_OK || w->io_failed != NPYIO_OK)
        return npyio__npz_zip_failure(w, where, rc);
    return npyio__stream_tell(w->stream, &e->data_at);
}

static npyio_status start_deflate(npyio_npz_writer *w, entry_state *e)
{
    int ret;
    npyio_status st = npyio__alloc(&w->mem, OUT_BYTES, "deflate output",
                                   (void **)&e->out);

    if (st != NPYIO_OK)
        return st;
    e->z.zalloc = npyio__zalloc;
    e->z.zfree = npyio__zfree;
    e->z.opaque = &w->mem;
    /* An unknown row count's header goes first at level 0 (stored); a
     * whole member's went out before. */
    ret = deflateInit2(&e->z, e->head_len > 0 && !e->whole ? 0 : e->level,
                       Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    if (ret != Z_OK)
        return npyio__fail(ret == Z_MEM_ERROR ? NPYIO_E_NOMEM : NPYIO_E_IO,
                           "starting to deflate a member: zlib error %d",
                           ret);
    e->z_ready = true;
    return NPYIO_OK;
}

/* The length of the header an unknown row count starts with (shape 0
 * along axis 0: the writer's own choice). */
static npyio_status unknown_rows_head(const npyio_header *h,
                                      const char *where, size_t *len)
{
    npyio_header *empty = NULL;
    int64_t *shape = NULL;
    npyio__mem mem;
    npyio_status st;

    npyio__mem_like(h, &mem); /* ndim >= 1: npyio__writer_check() */
    st = npyio__alloc_array(&mem, (size_t)npyio_header_ndim(h),
                            sizeof *shape, "a shape", (void **)&shape);
    if (st != NPYIO_OK)
        return st;
    memcpy(shape, npyio_header_shape(h),
           (size_t)npyio_header_ndim(h) * sizeof *shape);
    shape[0] = 0;
    st = npyio__header_new(&mem, npyio_header_dtype(h), npyio_header_ndim(h),
                           shape, 0, where, &empty);
    if (st == NPYIO_OK)
        *len = (size_t)npyio_header_data_offset(empty);
    npyio_header_free(empty);
    npyio__free(shape);
    return st;
}

/* A member of known length deflated on several threads in 2 to
 * NPYIO__INDEX_MAX_BLOCKS blocks gets a block index. */
static npyio_status start_index(npyio_npz_writer *w, entry_state *e,
                                const npyio_header *h)
{
    uint64_t usize, blocks;

    if (h == NULL || npyio_dtype_has_objects(npyio_header_dtype(h)) ||
        npyio_header_nbytes(h) < 0)
        return NPYIO_OK;
    usize = (uint64_t)npyio_header_data_offset(h) +
            (uint64_t)npyio_header_nbytes(h);
    blocks = (usize + PAR_BLOCK - 1) / PAR_BLOCK;
    if (blocks < 2 || blocks > NPYIO__INDEX_MAX_BLOCKS)
        return NPYIO_OK;
    e->index_cap = (size_t)blocks;
    return npyio__alloc_array(&w->mem, e->index_cap, sizeof *e->index,
                              "a block index", (void **)&e->index);
}

/* Open the entry with its local extra field: alignment or an index. */
static npyio_status open_with_extra(npyio_npz_writer *w, entry_state *e,
                                    const char *where)
{
    size_t len = e->index != NULL ? npyio__index_field_len(e->index_cap)
                                  : 4 + ALIGNMENT;
    unsigned char *extra = NULL;
    npyio_status st = npyio__alloc(&w->mem, len, "a local extra field",
                                   (void **)&extra);

    if (st == NPYIO_OK)
        st = open_entry(w, e, where, extra);
    npyio__free(extra);
    return st;
}

/* The threads a deflated member of known length gets: the thread
 * policy's count for work of a size not known here (the blocks, and so
 * the bytes written, are the same on any count above 1). */
static unsigned entry_threads(const npyio_npz_writer *w, int level,
                              size_t head_len, bool raw)
{
    if (level == 0 || head_len > 0 || raw)
        return 1;
    return npyio__thread_count(npyio__limit(w->options, NPYIO_LIMIT_THREADS),
                               NPYIO__WORK_UNKNOWN, true);
}

/* Is a member of whole_len bytes, given whole, deflated in one libdeflate
 * call: not with NPYIO_NPZ_WRITE_ZLIB, on at most WHOLE_THREADS threads,
 * up to WHOLE_MAX, its output block within NPYIO_LIMIT_ALLOC_BYTES. */
static bool whole_fits(const npyio_npz_writer *w, uint64_t whole_len,
                       unsigned threads)
{
    uint64_t bound = WHOLE_MAX < w->mem.max_alloc ? WHOLE_MAX
                                                  : w->mem.max_alloc;

    return whole_len > 0 && !w->zlib && threads <= WHOLE_THREADS &&
           whole_len <= bound &&
           libdeflate_deflate_compress_bound(NULL, (size_t)whole_len) <=
               w->mem.max_alloc;
}

bool npyio__npz_entry_whole(const npyio_npz_writer *w, int level,
                            uint64_t whole_len)
{
    return level != 0 && whole_fits(w, whole_len,
                                    entry_threads(w, level, 0, false));
}

/* The entry's way of deflating, and what it needs for it. */
static npyio_status entry_start(npyio_npz_writer *w, entry_state *e,
                                const npyio_header *header, bool raw)
{
    npyio_status st = NPYIO_OK;

    if (e->head_len > 0)
        st = npyio__alloc(&w->mem, e->head_len, "a member header",
                          (void **)&e->first);
    if (st == NPYIO_OK && e->threads > 1)
        st = start_parallel(w, e);
    else if (st == NPYIO_OK && e->level != 0 && !raw && !e->whole)
        st = start_deflate(w, e);
    if (st == NPYIO_OK && e->threads > 1)
        st = start_index(w, e, header);
    return st;
}

npyio_status npyio__npz_entry_open(npyio_npz_writer *w, char *name,
                                   const npyio_header *header, int level,
                                   uint32_t flags, bool raw,
                                   uint64_t whole_len, const char *where,
                                   npyio_stream **out)
{
    entry_state *e = NULL;
    size_t head_len = 0;
    npyio_status st = NPYIO_OK;

    if (flags & NPYIO_WRITE_UNKNOWN_ROWS)
        st = unknown_rows_head(header, where, &head_len);
    if (st == NPYIO_OK)
        st = npyio__stream_new(&entry_backend, sizeof *e, w->options, out,
                               (void **)&e);
    if (st != NPYIO_OK) {
        npyio__free(name);
        return st;
    }
    e->npz = w;
    e->name = name;
    e->level = level;
    e->head_len = head_len;
    e->zip_crc = level == 0 && head_len == 0 && !raw;
    e->committed = true; /* nothing to undo until the entry is open */
    npyio__stream_set_position(*out, 0, true);
    npyio__npz_names_add(&w->names, name); /* the archive owns it now */
    e->threads = entry_threads(w, level, head_len, raw);
    e->whole = level != 0 && !raw && head_len == 0 && header != NULL &&
               whole_fits(w, whole_len, e->threads);
    if (e->whole) {
        e->threads = 1;
        e->whole_len = whole_len;
        e->head_len = (size_t)npyio_header_data_offset(header);
    }
    st = entry_start(w, e, header, raw);
    if (st == NPYIO_OK)
        st = open_with_extra(w, e, where);
    if (st == NPYIO_OK) {
        e->committed = false;
        w->member_open = true;
        w->open_entry = e;
    }
    if (st != NPYIO_OK) {
        npyio__sticky_fail(&w->sticky, st);
        npyio__stream_close(*out);
        *out = NULL;
    }
    return st;
}

/* ---- the archive's own calls on a member --------------------------------------- */

npyio_status npyio__npz_entry_append(npyio_stream *member, const void *p,
                                     size_t len)
{
    return append_bytes(npyio__stream_state(member), p, len);
}

npyio_status npyio__npz_entry_commit(npyio_stream *member)
{
    return entry_commit(npyio__stream_state(member), false);
}

npyio_status npyio__npz_entry_raw_write(npyio_stream *member,
                                        const void *buf, size_t len)
{
    return raw_write(npyio__stream_state(member), buf, len);
}

npyio_status npyio__npz_entry_finish_raw(npyio_stream *member,
                                         uint64_t usize, uint32_t crc,
                                         const char *where)
{
    entry_state *e = npyio__stream_state(member);
    int rc = zipCloseFileInZipRaw64(e->npz->zip, usize, crc);

    if (rc != ZIP_OK || e->npz->io_failed != NPYIO_OK)
        return npyio__npz_zip_failure(e->npz, where, rc);
    e->committed = true;
    e->npz->member_open = false;
    e->npz->open_entry = NULL;
    return NPYIO_OK;
}

void npyio__npz_entry_detach(struct npyio__npz_entry *e)
{
    e->npz = NULL;
}
