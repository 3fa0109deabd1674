/*
 * npz_write.c - writing .npz archives. minizip (the system's zip.h, over
 * our streams through its 64-bit ioapi table) writes the archive's
 * structure: local headers with ZIP64 always on, the central directory,
 * the end records. We write the members' bytes raw: stored as given, or
 * deflated by our own zlib stream, with our own CRC, so that a member of
 * unknown row count can have its .npy header rewritten at the end (as a
 * stored deflate block when compressed) and its CRC rebuilt with
 * crc32_combine.
 *
 * Member names are NumPy's (key + ".npy"), with fixed dates and
 * attributes, so the same arrays give the same bytes. Stored members'
 * data starts at a multiple of 64 (a padding extra field, as zipalign
 * writes), unless NPYIO_NPZ_NO_ALIGN.
 */
/* zlib's 64-bit crc32_combine64, on 32-bit hosts too. */
#ifndef _LARGEFILE64_SOURCE
#define _LARGEFILE64_SOURCE 1
#endif
#include "crc.h"
#include "internal.h"
#include "npz.h"
#include "platform.h"
#include "replace.h"
#include "stream.h"
#include "writer.h"

#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <zip.h>
#include <zlib.h>

#define NPYIO__MAGIC_NPZ_WRITER 0x4e505a57u /* "NPZW" */

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
#define MAX_NAME 0xFFF0        /* minizip refuses names over 0xFFFF */

struct npyio_npz_writer {
    uint32_t magic;
    npyio__mem mem;
    npyio_options *options;
    npyio_stream *stream;
    bool owns_stream, durable, align;
    zipFile zip;
    npyio_status io_failed;   /* the first failure of a callback */
    npyio__sticky sticky;     /* the archive failed: repeated */
    bool member_open;
    /* The open member's stream state: an archive released with it open
     * (npyio_npz_writer_close refused, or an abort) detaches it, so that
     * its writer fails instead of reaching a freed archive. */
    struct entry_state *open_entry;
    char **names;             /* members so far, for duplicates */
    size_t count, cap;
    /* Appending: the archive is copied to a temporary, which takes the
     * new members and replaces the original at close. */
    bool appending;
    npyio__atomic atomic;
    int original;             /* locked for the whole append; or -1 */
    npyio__zip_dir old;       /* its directory, as our reader found it */
    unsigned char *comment;   /* its comment, given back at close */
};

/* ---- minizip's I/O, over our stream ------------------------------------------------ */

static void io_failure(npyio_npz_writer *w, npyio_status st)
{
    if (w->io_failed == NPYIO_OK) {
        w->io_failed = st;
        npyio__sticky_fail(&w->sticky, st);
    }
}

static voidpf io_open(voidpf opaque, const void *stream, int mode)
{
    (void)opaque;
    (void)mode;
    return (voidpf)stream; /* ours, passed through as the "file name" */
}

static uLong io_read(voidpf opaque, voidpf stream, void *buf, uLong size)
{
    size_t got = 0;
    npyio_status st = npyio__stream_read(stream, buf, size, &got,
                                         "the archive");

    if (st != NPYIO_OK)
        io_failure(opaque, st);
    return (uLong)got;
}

static uLong io_write(voidpf opaque, voidpf stream, const void *buf,
                      uLong size)
{
    npyio_status st = npyio__stream_write(stream, buf, size, "the archive");

    if (st != NPYIO_OK) {
        io_failure(opaque, st);
        return 0;
    }
    return size;
}

static ZPOS64_T io_tell(voidpf opaque, voidpf stream)
{
    int64_t pos = 0;
    npyio_status st = npyio__stream_tell(stream, &pos);

    if (st != NPYIO_OK) {
        io_failure(opaque, st);
        return (ZPOS64_T)-1;
    }
    return (ZPOS64_T)pos;
}

static long io_seek(voidpf opaque, voidpf stream, ZPOS64_T offset,
                    int origin)
{
    /* minizip sends negative relative offsets as huge unsigned ones. */
    int whence = origin == ZLIB_FILEFUNC_SEEK_SET   ? NPYIO_SEEK_SET
                 : origin == ZLIB_FILEFUNC_SEEK_CUR ? NPYIO_SEEK_CUR
                                                    : NPYIO_SEEK_END;
    npyio_status st = npyio__stream_seek(stream, (int64_t)offset, whence,
                                         NULL);

    if (st != NPYIO_OK) {
        io_failure(opaque, st);
        return -1;
    }
    return 0;
}

static int io_close(voidpf opaque, voidpf stream)
{
    (void)opaque;
    (void)stream;
    return 0; /* the stream is closed by its owner */
}

static int io_error(voidpf opaque, voidpf stream)
{
    (void)stream;
    return ((npyio_npz_writer *)opaque)->io_failed != NPYIO_OK;
}

/* A failed minizip call: our stream's failure if there was one, else
 * minizip's code. Either way the archive is failed from now on. Callers
 * check io_failed as well as minizip's code: minizip leaves the results
 * of some of its writes unchecked (found by failing each write in turn,
 * tests/unit/test_iofault.c). */
static npyio_status zip_failure(npyio_npz_writer *w, const char *call,
                                int code)
{
    if (w->io_failed != NPYIO_OK)
        return npyio__fail(w->io_failed, "%s: %s", call,
                           w->sticky.first_error);
    return npyio__sticky_fail(&w->sticky,
                              npyio__fail(NPYIO_E_IO, "%s: minizip returned "
                                          "%d", call, code));
}

/* ---- members --------------------------------------------------------------------- */

/* One member being written: the stream a writer writes through. */
typedef struct entry_state {
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
            return zip_failure(e->npz, "writing a member", rc);
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
        e->crc_rest = (uint32_t)crc32_combine64(e->crc_rest, j->crc,
                                                (z_off64_t)j->len);
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
    size_t in_head = e->usize < e->head_len
                         ? (size_t)(e->head_len - e->usize) < len
                               ? (size_t)(e->head_len - e->usize)
                               : len
                         : 0;
    npyio_status st;

    if (e->threads > 1)
        return append_parallel(e, p, len);
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

/* Put a rewritten header where its bytes lie in the archive. */
static npyio_status place_head(entry_state *e)
{
    npyio_stream *s = e->npz->stream;
    int64_t end = 0;
    npyio_status st = npyio__stream_tell(s, &end);

    if (st == NPYIO_OK)
        st = npyio__stream_seek(s, e->data_at + e->head_at, NPYIO_SEEK_SET,
                                NULL);
    if (st == NPYIO_OK)
        st = npyio__stream_write(s, e->head, e->head_len, "a member header");
    if (st == NPYIO_OK)
        st = npyio__stream_seek(s, end, NPYIO_SEEK_SET, NULL);
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
    else if (e->level != 0)
        st = deflate_out(e, Z_FINISH);
    if (st != NPYIO_OK)
        return st;
    /* The CRC of the header as it ends up, then of the rest. */
    crc_head = e->head != NULL ? npyio__crc32(0, e->head, e->head_len)
                               : e->crc_head;
    crc = (uint32_t)crc32_combine64(crc_head, e->crc_rest,
                                    (z_off64_t)(e->usize - e->head_len));
    rc = e->zip_crc ? zipCloseFileInZip(e->npz->zip)
                    : zipCloseFileInZipRaw64(e->npz->zip, e->usize, crc);
    if (rc != ZIP_OK || e->npz->io_failed != NPYIO_OK)
        return zip_failure(e->npz, "finishing a member", rc);
    e->committed = true;
    e->npz->member_open = false;
    e->npz->open_entry = NULL;
    return e->head != NULL ? place_head(e) : NPYIO_OK;
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

/* ---- the archive --------------------------------------------------------------- */

static npyio_status check_writer(const npyio_npz_writer *w, const char *where)
{
    if (w == NULL || w->magic != NPYIO__MAGIC_NPZ_WRITER)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: %s", where,
                           w == NULL ? "npz is NULL"
                                     : "the pointer given as an archive "
                                       "writer is not a live "
                                       "npyio_npz_writer");
    return NPYIO_OK;
}

static void release(npyio_npz_writer *w)
{
    size_t i;

    if (w->open_entry != NULL)
        w->open_entry->npz = NULL;
    if (w->zip != NULL)
        zipClose(w->zip, NULL); /* frees it; the archive is dropped */
    if (w->owns_stream) {
        npyio__stream_abort(w->stream);
        npyio_stream_close(w->stream);
    }
    if (w->appending)
        npyio__atomic_abandon(&w->atomic);
    if (w->original >= 0)
        npyio__fd_close(w->original); /* and its lock */
    npyio__zip_dir_free(&w->old);
    npyio__free(w->comment);
    for (i = 0; i < w->count; i++)
        npyio__free(w->names[i]);
    npyio__free(w->names);
    npyio_options_free(w->options);
    w->magic = NPYIO__MAGIC_DEAD;
    npyio__free(w);
}

static npyio_status new_writer(uint32_t flags, const npyio_options *options,
                               npyio_npz_writer **out)
{
    npyio_npz_writer *w;
    npyio__mem mem;
    npyio_status st;

    npyio__mem_init(&mem, options);
    st = npyio__alloc_zero(&mem, sizeof *w, "archive writer", (void **)&w);
    if (st != NPYIO_OK)
        return st;
    w->magic = NPYIO__MAGIC_NPZ_WRITER;
    w->mem = mem;
    w->original = -1;
    w->durable = !(flags & NPYIO_WRITE_NO_SYNC);
    w->align = !(flags & NPYIO_NPZ_NO_ALIGN);
    st = npyio__options_copy_in(&mem, options, &w->options);
    if (st != NPYIO_OK) {
        npyio__free(w);
        return st;
    }
    *out = w;
    return NPYIO_OK;
}

static npyio_status create(const char *path, npyio_stream *stream,
                           uint32_t flags, const npyio_options *options,
                           const char *where, npyio_npz_writer **out)
{
    zlib_filefunc64_def io = {io_open, io_read, io_write, io_tell, io_seek,
                              io_close, io_error, NULL};
    npyio_npz_writer *w = NULL;
    npyio_status st = new_writer(flags, options, &w);

    if (st != NPYIO_OK)
        return st;
    st = npyio__stream_acquire(path, stream, true, options, where,
                                   &w->stream, &w->owns_stream);
    if (st == NPYIO_OK && !npyio__stream_seekable(w->stream))
        st = npyio__fail(NPYIO_E_UNSUPPORTED, "%s: an archive is written "
                         "with seeks back to each member's header, and the "
                         "stream cannot seek (write to a file, then copy "
                         "it)", where);
    if (st == NPYIO_OK) {
        io.opaque = w;
        w->zip = zipOpen2_64(w->stream, APPEND_STATUS_CREATE, NULL, &io);
        if (w->zip == NULL || w->io_failed != NPYIO_OK)
            st = zip_failure(w, where, 0);
    }
    if (st != NPYIO_OK) {
        release(w);
        return st;
    }
    *out = w;
    return NPYIO_OK;
}

static npyio_status npz_create_path_body(const char *path, uint32_t flags,
                                         const npyio_options *options,
                                         npyio_npz_writer **out)
{
    static const char where[] = "npyio_npz_create_path";
    npyio_status st;

    if (out == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: out is NULL", where);
    *out = NULL;
    st = npyio__check_path(path, where);
    if (st != NPYIO_OK)
        return st;
    st = npyio__check_flags(flags, NPYIO_WRITE_NO_SYNC | NPYIO_NPZ_NO_ALIGN,
                            where);
    return st != NPYIO_OK ? st
                          : create(path, NULL, flags, options, where, out);
}

npyio_status npyio_npz_create_path(const char *path, uint32_t flags,
                                   const npyio_options *options,
                                   npyio_npz_writer **out)
{
    if (out != NULL)
        *out = NULL; /* outputs are cleared whatever is refused */
    return npyio__as_called(npz_create_path_body(path, flags, options, out),
                            "npyio_npz_create_path");
}

static npyio_status npz_create_stream_body(npyio_stream *stream,
                                           uint32_t flags,
                                           const npyio_options *options,
                                           npyio_npz_writer **out)
{
    static const char where[] = "npyio_npz_create_stream";
    npyio_status st;

    if (out == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: out is NULL", where);
    *out = NULL;
    st = npyio__check_flags(flags, NPYIO_NPZ_NO_ALIGN, where);
    return st != NPYIO_OK ? st
                          : create(NULL, stream, flags, options, where, out);
}

npyio_status npyio_npz_create_stream(npyio_stream *stream, uint32_t flags,
                                     const npyio_options *options,
                                     npyio_npz_writer **out)
{
    return npyio__as_called(npz_create_stream_body(stream, flags, options,
                                                   out),
                            "npyio_npz_create_stream");
}

/* ---- names --------------------------------------------------------------------- */

/* A key NumPy would accept and no extractor could misplace: UTF-8, no
 * backslash, no absolute name, no ".." component. */
static npyio_status check_key(const char *key, const char *where)
{
    const unsigned char *k = (const unsigned char *)key;
    size_t len = strlen(key), i, step;
    const char *c;
    char shown[96];

    npyio__show(key, len, shown, sizeof shown);
    if (len > MAX_NAME - 4)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: key of %zu bytes is "
                           "too long for a ZIP name", where, len);
    for (i = 0; i < len; i += step) {
        step = npyio__utf8_sequence(k + i, len - i);
        if (step == 0)
            return npyio__fail(NPYIO_E_INVALID_ARG, "%s: key '%s' is not "
                               "UTF-8", where, shown);
    }
    if (strchr(key, '\\') != NULL || key[0] == '/')
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: key '%s' %s", where,
                           shown, key[0] == '/' ? "is absolute"
                                                : "holds a backslash");
    for (c = key; c != NULL; c = strchr(c, '/')) {
        if (*c == '/')
            c++;
        if (strncmp(c, "..", 2) == 0 && (c[2] == '/' || c[2] == '\0'))
            return npyio__fail(NPYIO_E_INVALID_ARG, "%s: key '%s' has a "
                               "'..' component", where, shown);
    }
    return NPYIO_OK;
}

static npyio_status new_file_name(npyio_npz_writer *w, const char *key,
                                  const char *suffix, const char *where,
                                  char **out);

/* The member's name, key + ".npy" (NumPy's: "x.npy" becomes
 * "x.npy.npy"), new in this archive. */
static npyio_status new_name(npyio_npz_writer *w, const char *key,
                             const char *where, char **out)
{
    return new_file_name(w, key, ".npy", where, out);
}

/* The length of NumPy's key for a member name: without ".npy". */
static size_t key_length(const char *name)
{
    size_t len = strlen(name);

    return len >= 4 && strcmp(name + len - 4, ".npy") == 0 ? len - 4 : len;
}

/* Whether np.load could take one member for the other: it looks a key up
 * as a member name first, then among the names without ".npy" ("x" and
 * "x.npy" both answer to key "x"; "x.npy" shadows key "x.npy" of
 * "x.npy.npy"). */
static bool names_clash(const char *a, const char *b)
{
    size_t ka = key_length(a), kb = key_length(b);

    return strcmp(a, b) == 0 ||
           (ka == kb && strncmp(a, b, ka) == 0) ||
           (ka == strlen(b) && strncmp(a, b, ka) == 0) ||
           (kb == strlen(a) && strncmp(a, b, kb) == 0);
}

/* The member file name key + suffix, checked, new in this archive. */
static npyio_status new_file_name(npyio_npz_writer *w, const char *key,
                                  const char *suffix, const char *where,
                                  char **out)
{
    size_t len = strlen(key), more = strlen(suffix) + 1, i;
    char *name = NULL, shown[96], other[96];
    npyio_status st = check_key(key, where);

    if (st == NPYIO_OK)
        st = npyio__alloc(&w->mem, len + more, "a member name",
                          (void **)&name);
    if (st != NPYIO_OK)
        return st;
    memcpy(name, key, len);
    memcpy(name + len, suffix, more);
    for (i = 0; i < w->count; i++) {
        if (names_clash(w->names[i], name)) {
            npyio__free(name);
            return npyio__fail(NPYIO_E_INVALID_ARG, "%s: key '%s': the "
                               "archive already has a member '%s', which "
                               "np.load would find under the same key",
                               where,
                               npyio__show(key, len, shown, sizeof shown),
                               npyio__show(w->names[i], strlen(w->names[i]),
                                           other, sizeof other));
        }
    }
    if (w->count == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 16;

        st = npyio__realloc(&w->mem, (void **)&w->names,
                            cap * sizeof *w->names, "member names");
        if (st != NPYIO_OK) {
            npyio__free(name);
            return st;
        }
        w->cap = cap;
    }
    *out = name;
    return NPYIO_OK;
}

/* ---- adding members ------------------------------------------------------------ */

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
                               const char *where)
{
    unsigned char extra[4 + ALIGNMENT];
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
    rc = zipOpenNewFileInZip4_64(w->zip, e->name, &info,
                                 extra_len ? extra : NULL, (uInt)extra_len,
                                 NULL, 0, NULL,
                                 e->level ? Z_DEFLATED : 0, e->level,
                                 !e->zip_crc,
                                 -MAX_WBITS, 8, Z_DEFAULT_STRATEGY, NULL, 0,
                                 MADE_BY, is_ascii(e->name) ? 0 : 0x800, 1);
    if (rc != ZIP_OK || w->io_failed != NPYIO_OK)
        return zip_failure(w, where, rc);
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
    /* An unknown row count's header goes first at level 0 (stored). */
    ret = deflateInit2(&e->z, e->head_len > 0 ? 0 : e->level, Z_DEFLATED,
                       -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    if (ret != Z_OK)
        return npyio__fail(ret == Z_MEM_ERROR ? NPYIO_E_NOMEM : NPYIO_E_IO,
                           "starting to deflate a member: zlib error %d",
                           ret);
    e->z_ready = true;
    return NPYIO_OK;
}

/* The length of the header an unknown row count starts with (shape 0
 * along axis 0: the writer's own choice). */
static npyio_status unknown_rows_head(const npyio_header *h, size_t *len)
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
    st = npyio_header_new(npyio_header_dtype(h), npyio_header_ndim(h), shape,
                          0, &empty);
    if (st == NPYIO_OK)
        *len = (size_t)npyio_header_data_offset(empty);
    npyio_header_free(empty);
    npyio__free(shape);
    return st;
}

/* A member's entry opened and a stream to write it through; `raw`: the
 * caller writes the stored bytes itself (a copy), no deflate is set up. */
static npyio_status open_member_stream(npyio_npz_writer *w, char *name,
                                       const npyio_header *header, int level,
                                       uint32_t flags, bool raw,
                                       const char *where, npyio_stream **out)
{
    entry_state *e = NULL;
    size_t head_len = 0;
    npyio_status st = NPYIO_OK;

    if (flags & NPYIO_WRITE_UNKNOWN_ROWS)
        st = unknown_rows_head(header, &head_len);
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
    w->names[w->count++] = name; /* the archive owns it from now on */
    /* Several threads for a deflated member of known length. */
    e->threads = 1;
    if (level != 0 && head_len == 0 && !raw) {
        int64_t limit = npyio__limit(w->options, NPYIO_LIMIT_THREADS);

        e->threads = limit > 64 ? 64u : limit < 1 ? 1u : (unsigned)limit;
    }
    if (head_len > 0)
        st = npyio__alloc(&w->mem, head_len, "a member header",
                          (void **)&e->first);
    if (st == NPYIO_OK && e->threads > 1)
        st = start_parallel(w, e);
    else if (st == NPYIO_OK && level != 0 && !raw)
        st = start_deflate(w, e);
    if (st == NPYIO_OK)
        st = open_entry(w, e, where);
    if (st == NPYIO_OK) {
        e->committed = false;
        w->member_open = true;
        w->open_entry = e;
    }
    if (st != NPYIO_OK) {
        npyio__sticky_fail(&w->sticky, st);
        npyio_stream_close(*out);
        *out = NULL;
    }
    return st;
}

static npyio_status check_add(npyio_npz_writer *w, const char *key,
                              int level, const char *where)
{
    npyio_status st = check_writer(w, where);

    if (st != NPYIO_OK)
        return st;
    if (w->sticky.failed != NPYIO_OK)
        return npyio__sticky_repeat(&w->sticky, where, "archive");
    if (key == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: key is NULL", where);
    if (level < 0 || level > 9)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: level %d: 0 stores, 1 "
                           "to 9 deflate", where, level);
    if (w->member_open)
        return npyio__fail(NPYIO_E_STATE, "%s: the previous member's writer "
                           "is still open (close it first)", where);
    return NPYIO_OK;
}

static npyio_status npz_add_body(npyio_npz_writer *npz, const char *key,
                                 const npyio_header *header, int level,
                                 uint32_t flags, npyio_writer **out)
{
    static const char where[] = "npyio_npz_add";
    npyio_stream *s = NULL;
    char *name = NULL;
    npyio_status st;

    if (out == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: out is NULL", where);
    *out = NULL;
    st = check_add(npz, key, level, where);
    if (st == NPYIO_OK && header == NULL)
        st = npyio__fail(NPYIO_E_INVALID_ARG, "%s: header is NULL", where);
    if (st == NPYIO_OK)
        st = npyio__check_flags(flags, NPYIO_WRITE_UNKNOWN_ROWS, where);
    /* Refused now, the archive goes on; once the member starts, a refusal
     * would fail it. */
    if (st == NPYIO_OK)
        st = npyio__writer_check(header, flags, where);
    if (st == NPYIO_OK)
        st = new_name(npz, key, where, &name);
    if (st == NPYIO_OK)
        st = open_member_stream(npz, name, header, level, flags, false,
                                where, &s);
    if (st == NPYIO_OK)
        st = npyio__writer_adopt(s, header, flags, npz->options, where, out);
    return st;
}

npyio_status npyio_npz_add(npyio_npz_writer *npz, const char *key,
                           const npyio_header *header, int level,
                           uint32_t flags, npyio_writer **out)
{
    return npyio__as_called(npz_add_body(npz, key, header, level, flags, out),
                            "npyio_npz_add");
}

static npyio_status npz_add_array_body(npyio_npz_writer *npz,
                                       const char *key,
                                       const npyio_header *header,
                                       const void *data, size_t len,
                                       int level)
{
    static const char where[] = "npyio_npz_add_array";
    npyio_writer *w = NULL;
    npyio_status st;

    if (header != NULL && (uint64_t)len != (uint64_t)npyio_header_nbytes(
                                                header))
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: the buffer is %zu "
                           "bytes, the header describes %lld", where, len,
                           (long long)npyio_header_nbytes(header));
    if (data == NULL && len > 0)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: data is NULL", where);
    st = npz_add_body(npz, key, header, level, 0, &w);
    if (st == NPYIO_OK)
        st = npyio_writer_write(w, data, len);
    if (st != NPYIO_OK) {
        npyio_writer_abort(w);
        return st;
    }
    return npyio_writer_close(w);
}

npyio_status npyio_npz_add_array(npyio_npz_writer *npz, const char *key,
                                 const npyio_header *header,
                                 const void *data, size_t len, int level)
{
    return npyio__as_called(npz_add_array_body(npz, key, header, data, len,
                                               level),
                            "npyio_npz_add_array");
}

/* ---- adding .npy files as they are ------------------------------------------------ */

/* The first bytes of an .npy file from `from`, at least its whole header
 * (the buffer grows for a header longer than one block), and the header
 * parsed from them. */
static npyio_status read_npy_head(npyio_npz_writer *w, npyio_stream *from,
                                  const char *where, unsigned char **buf,
                                  size_t *cap, size_t *have,
                                  npyio_header **header)
{
    size_t need = 0, got = 0;
    npyio_status st;

    *cap = (size_t)1 << 20;
    st = npyio__alloc(&w->mem, *cap, "a copy buffer", (void **)buf);

    *have = 0;
    while (st == NPYIO_OK) {
        st = npyio__stream_read(from, *buf + *have, *cap - *have, &got,
                                "the .npy file");
        if (st != NPYIO_OK)
            break;
        *have += got;
        st = npyio_header_parse(*buf, *have, w->options, header, &need);
        if (st != NPYIO_E_TRUNCATED)
            break;
        if (*have < *cap || need <= *have)
            return npyio__fail(NPYIO_E_TRUNCATED, "%s: the .npy file ends "
                               "inside its header (%zu bytes of %zu)", where,
                               *have, need);
        /* A header longer than a block (the limits allowed it). */
        {
            unsigned char *more = NULL;

            st = npyio__alloc(&w->mem, need, "a header", (void **)&more);
            if (st != NPYIO_OK)
                break;
            memcpy(more, *buf, *have);
            npyio__free(*buf);
            *buf = more;
            *cap = need;
        }
    }
    return st;
}

/* Everything from `from` into the member: the bytes in buf first. */
static npyio_status copy_npy_bytes(entry_state *e, npyio_stream *from,
                                   unsigned char *buf, size_t have,
                                   size_t cap, uint64_t *total)
{
    npyio_status st = NPYIO_OK;
    size_t got = have;

    *total = 0;
    while (st == NPYIO_OK && got > 0) {
        st = append_bytes(e, buf, got);
        *total += got;
        if (st == NPYIO_OK)
            st = npyio__stream_read(from, buf, cap, &got, "the .npy file");
    }
    return st;
}

static npyio_status npz_add_npy_body(npyio_npz_writer *npz, const char *key,
                                     npyio_stream *from, int level)
{
    static const char where[] = "npyio_npz_add_npy";
    npyio_header *h = NULL;
    npyio_stream *s = NULL;
    unsigned char *buf = NULL;
    size_t have = 0, cap = 0;
    uint64_t total = 0, need;
    char *name = NULL;
    npyio_status st = check_add(npz, key, level, where);

    if (st == NPYIO_OK && from == NULL)
        st = npyio__fail(NPYIO_E_INVALID_ARG, "%s: the stream is NULL",
                         where);
    /* The key first: a refused key reads nothing from the stream. */
    if (st == NPYIO_OK)
        st = new_name(npz, key, where, &name);
    if (st == NPYIO_OK)
        st = read_npy_head(npz, from, where, &buf, &cap, &have, &h);
    if (st != NPYIO_OK)
        npyio__free(name);
    else
        st = open_member_stream(npz, name, NULL, level, 0, false, where, &s);
    if (st == NPYIO_OK)
        st = copy_npy_bytes(npyio__stream_state(s), from, buf, have, cap, &total);
    need = h != NULL ? (uint64_t)npyio_header_data_offset(h) +
                           (uint64_t)npyio_header_nbytes(h)
                     : 0;
    if (st == NPYIO_OK && total < need &&
        !npyio_dtype_contains_objects(npyio_header_dtype(h)))
        st = npyio__fail(NPYIO_E_TRUNCATED, "%s: the .npy file is %llu "
                         "bytes; its header describes %llu", where,
                         (unsigned long long)total, (unsigned long long)need);
    if (st == NPYIO_OK)
        st = entry_commit(npyio__stream_state(s), false);
    if (s != NULL)
        npyio_stream_close(s); /* unfinished: the archive fails */
    npyio_header_free(h);
    npyio__free(buf);
    return st;
}

npyio_status npyio_npz_add_npy(npyio_npz_writer *npz, const char *key,
                               npyio_stream *from, int level)
{
    return npyio__as_called(npz_add_npy_body(npz, key, from, level),
                            "npyio_npz_add_npy");
}

/* ---- copying ------------------------------------------------------------------- */

/* The member's bytes as stored, from the source archive to ours; a stored
 * member's CRC is checked on the way. */
static npyio_status copy_bytes(entry_state *e, npyio_stream *from,
                               const npyio__zip_entry *se, const char *label)
{
    const size_t block = (size_t)1 << 20;
    unsigned char *buf = NULL;
    uint64_t done = 0;
    uint32_t crc = 0;
    npyio_status st = npyio__alloc(&e->npz->mem, block, "a copy buffer",
                                   (void **)&buf);

    while (st == NPYIO_OK && done < se->csize) {
        size_t want = se->csize - done < block ? (size_t)(se->csize - done)
                                               : block, got = 0;

        st = npyio__stream_read_at(from, buf, want,
                                   se->data_offset + (int64_t)done, &got,
                                   "member data");
        if (st == NPYIO_OK && got < want)
            st = npyio__fail(NPYIO_E_TRUNCATED, "%s: the source archive "
                             "ends inside it", label);
        if (st == NPYIO_OK && se->method == 0)
            crc = npyio__crc32(crc, buf, got);
        if (st == NPYIO_OK)
            st = raw_write(e, buf, got);
        done += got;
    }
    npyio__free(buf);
    if (st == NPYIO_OK && se->method == 0 && crc != se->crc)
        st = npyio__fail(NPYIO_E_CHECKSUM, "%s: its CRC-32 is %08lx; the "
                         "directory says %08lx", label, (unsigned long)crc,
                         (unsigned long)se->crc);
    return st;
}

static npyio_status npz_copy_body(npyio_npz_writer *npz, npyio_npz *src,
                                  size_t index, const char *key)
{
    static const char where[] = "npyio_npz_copy";
    const npyio__zip_entry *se = NULL;
    npyio_stream *from = NULL, *s = NULL;
    char *name = NULL, label[160], shown[96];
    entry_state *e;
    npyio_status st = check_writer(npz, where);
    int rc;

    if (st == NPYIO_OK && npz->sticky.failed != NPYIO_OK)
        st = npyio__sticky_repeat(&npz->sticky, where, "archive");
    if (st == NPYIO_OK && npz->member_open)
        st = npyio__fail(NPYIO_E_STATE, "%s: a member's writer is still "
                         "open (close it first)", where);
    if (st == NPYIO_OK)
        st = npyio__npz_member_source(src, index, where, &from, &se);
    if (st != NPYIO_OK)
        return st;
    snprintf(label, sizeof label, "member %zu ('%s')", index,
             npyio__show(se->name, strlen(se->name), shown, sizeof shown));
    if ((se->method != 0 && se->method != 8) ||
        (se->flags & (NPYIO__ZIP_ENCRYPTED | NPYIO__ZIP_PATCHED |
                      NPYIO__ZIP_STRONG_ENCRYPTION)))
        return npyio__fail(NPYIO_E_UNSUPPORTED, "%s: %s: only unencrypted "
                           "stored or deflated members are copied", where,
                           label);
    st = key != NULL ? new_name(npz, key, where, &name)
                     : new_file_name(npz, se->name, "", where, &name);
    if (st == NPYIO_OK)
        st = open_member_stream(npz, name, NULL, se->method == 0 ? 0 : 6, 0,
                                true, where, &s);
    if (st != NPYIO_OK)
        return st;
    e = npyio__stream_state(s);
    st = copy_bytes(e, from, se, label);
    if (st == NPYIO_OK) {
        rc = zipCloseFileInZipRaw64(npz->zip, se->usize, se->crc);
        if (rc != ZIP_OK || npz->io_failed != NPYIO_OK)
            st = zip_failure(npz, where, rc);
    }
    if (st == NPYIO_OK) {
        e->committed = true;
        npz->member_open = false;
        npz->open_entry = NULL;
    }
    npyio_stream_close(s); /* unfinished: the archive fails */
    return st;
}

npyio_status npyio_npz_copy(npyio_npz_writer *npz, npyio_npz *src,
                            size_t index, const char *key)
{
    return npyio__as_called(npz_copy_body(npz, src, index, key),
                            "npyio_npz_copy");
}

/* ---- appending ----------------------------------------------------------------- */

/*
 * Our reader alone decides where anything is in the archive. minizip's
 * append mode would find the old directory again with its own reader,
 * which takes the last ZIP64 locator signature in the final 64 KiB
 * wherever it lies (in a comment, in an array's data), else the last end
 * record: it would then drop or replace every old member. So the
 * temporary holds the archive's bytes up to the end of the directory we
 * found, then end records of ours with no comment, the only ones minizip
 * can find (MINIZIP-NOTES.md). The comment is given back after minizip's
 * close, and the result is read back by our reader and compared with the
 * old directory before it replaces the archive.
 */

#define EOCD64_LEN 56
#define LOC64_LEN 20
#define EOCD_LEN 22
#define LOC64_SIG 0x07064b50u

/* len bytes at `offset` of a file we hold (and have checked is long
 * enough): a short read means it changed under us. */
static npyio_status pread_exact(int fd, void *buf, size_t len, int64_t offset)
{
    size_t got = 0;

    if (npyio__fd_pread_all(fd, buf, len, offset, &got) != 0)
        return NPYIO_E_IO;
    if (got < len)
        return npyio__fail(NPYIO_E_TRUNCATED, "the file ends at offset "
                           "%lld, before the %zu bytes expected there",
                           (long long)(offset + (int64_t)got), len);
    return NPYIO_OK;
}

/* The directory of the archive (read, and checked whole, by our own
 * reader), its comment, and its names, so that a new member cannot repeat
 * one. */
static npyio_status read_old_archive(npyio_npz_writer *w, const char *path)
{
    npyio_stream *s = NULL;
    size_t i, n;
    npyio_status st = npyio__stream_open_fd(w->original, false, w->options,
                                            &s);

    if (st == NPYIO_OK)
        st = npyio__zip_dir_read(s, &w->mem, w->options, &w->old);
    npyio_stream_close(s);
    n = w->old.count;
    if (st == NPYIO_OK && w->old.comment_len > 0)
        st = npyio__alloc(&w->mem, w->old.comment_len, "the archive comment",
                          (void **)&w->comment);
    if (st == NPYIO_OK && w->old.comment_len > 0)
        st = pread_exact(w->original, w->comment, w->old.comment_len,
                         w->old.comment_at);
    if (st == NPYIO_OK && n > 0) {
        st = npyio__alloc_array(&w->mem, n, sizeof *w->names, "member names",
                                (void **)&w->names);
        if (st == NPYIO_OK)
            w->cap = n;
    }
    for (i = 0; st == NPYIO_OK && i < n; i++) {
        const char *name = w->old.entries[i].name;
        size_t len = strlen(name) + 1;

        st = npyio__alloc(&w->mem, len, "a member name",
                          (void **)&w->names[i]);
        if (st == NPYIO_OK) {
            memcpy(w->names[i], name, len);
            w->count++;
        }
    }
    return npyio__with_context(st, path);
}

/* The archive's bytes up to the end of its directory into the temporary:
 * cloned or copied in the kernel where the system can, else through a
 * buffer of the caller's allocator; whatever a clone brought beyond that
 * end is cut off. */
static npyio_status copy_original(npyio_npz_writer *w, const char **how)
{
    static const size_t block = (size_t)1 << 16;
    int64_t len = w->old.cd_end;
    void *buf = NULL;
    npyio_status st;
    int rc = npyio__fd_copy_file(w->atomic.fd, w->original, len, how);

    if (rc == NPYIO__COPY_BUFFERED) {
        st = npyio__alloc(&w->mem, block, "a copy buffer", &buf);
        if (st != NPYIO_OK)
            return st;
        rc = npyio__fd_copy_buffered(w->atomic.fd, w->original, len, buf,
                                     block);
        npyio__free(buf);
    }
    if (rc == 0)
        rc = npyio__fd_truncate(w->atomic.fd, len);
    return rc == 0 ? NPYIO_OK : NPYIO_E_IO;
}

/* True if a ZIP64 locator signature starts anywhere in p[0, len). */
static bool holds_locator(const unsigned char *p, size_t len)
{
    size_t i;

    for (i = 0; i + 4 <= len; i++)
        if (npyio__le32(p + i) == LOC64_SIG)
            return true;
    return false;
}

/*
 * After the directory: a ZIP64 end record with the directory our reader
 * found, its locator, and a plain end record with every field saturated
 * and no comment. minizip takes the last locator signature in the file
 * (ours) and the ZIP64 record it points at; the locator holds the
 * record's position in the file (minizip seeks there; it works out the
 * bytes before the archive from it).
 */
static npyio_status write_end_records(npyio_npz_writer *w, const char *where)
{
    unsigned char rec[EOCD64_LEN + LOC64_LEN + EOCD_LEN] = {0};
    unsigned char *loc = rec + EOCD64_LEN, *end = loc + LOC64_LEN;
    const npyio__zip_dir *d = &w->old;

    npyio__put_le32(rec, 0x06064b50u);
    npyio__put_le64(rec + 4, EOCD64_LEN - 12);
    npyio__put_le16(rec + 12, 45);
    npyio__put_le16(rec + 14, 45);
    npyio__put_le64(rec + 24, d->count);
    npyio__put_le64(rec + 32, d->count);
    npyio__put_le64(rec + 40, (uint64_t)(d->cd_end - d->cd_offset));
    npyio__put_le64(rec + 48, (uint64_t)(d->cd_offset - d->shift));
    npyio__put_le32(loc, LOC64_SIG);
    npyio__put_le64(loc + 8, (uint64_t)d->cd_end);
    npyio__put_le32(loc + 16, 1);
    npyio__put_le32(end, 0x06054b50u);
    memset(end + 8, 0xFF, 12);
    /* minizip looks for the last signature: none may follow ours. */
    if (holds_locator(loc + 1, sizeof rec - EOCD64_LEN - 1))
        return npyio__fail(NPYIO_E_UNSUPPORTED, "%s: the archive's "
                           "directory ends at offset %lld, whose bytes "
                           "minizip would take for a ZIP64 locator; it "
                           "cannot be appended to", where,
                           (long long)d->cd_end);
    if (npyio__fd_pwrite_all(w->atomic.fd, rec, sizeof rec, d->cd_end) != 0)
        return NPYIO_E_IO;
    return NPYIO_OK;
}

/* The temporary: the archive with end records of ours, then minizip
 * opened on it to add members where its directory was. */
static npyio_status copy_archive(npyio_npz_writer *w, const char *path,
                                 const char *where)
{
    zlib_filefunc64_def io = {io_open, io_read, io_write, io_tell, io_seek,
                              io_close, io_error, NULL};
    const char *how = "";
    int64_t at = -1;
    /* Nothing before the end records: no members to keep, and a ZIP64
     * record at offset 0 that minizip would take for none. */
    bool empty = w->old.cd_end == 0;
    npyio_status st = npyio__atomic_open(path, &w->mem, &w->atomic);

    if (st != NPYIO_OK)
        return npyio__with_context(st, path);
    w->appending = true;
    st = copy_original(w, &how);
    if (st == NPYIO_OK && !empty)
        st = write_end_records(w, where);
    if (st != NPYIO_OK)
        return npyio__fail(st, "%s: %s: copying the archive: %s", where,
                           path, npyio_last_error());
    st = npyio__stream_open_fd(w->atomic.fd, false, w->options, &w->stream);
    if (st != NPYIO_OK)
        return st;
    w->owns_stream = true;
    io.opaque = w;
    w->zip = zipOpen2_64(w->stream, empty ? APPEND_STATUS_CREATE
                                          : APPEND_STATUS_ADDINZIP,
                         NULL, &io);
    if (w->zip == NULL || w->io_failed != NPYIO_OK)
        return zip_failure(w, where, 0);
    /* minizip is left where the new members go: where the directory was. */
    st = npyio__stream_tell(w->stream, &at);
    if (st == NPYIO_OK && at != w->old.cd_offset)
        st = npyio__fail(NPYIO_E_FORMAT, "%s: %s: minizip found the "
                         "directory at offset %lld, not at %lld", where,
                         path, (long long)at, (long long)w->old.cd_offset);
    return st;
}

/* minizip's end record, the last 22 bytes before `end`, gets the old
 * comment back (minizip would cut it at a NUL byte). */
static npyio_status give_comment_back(npyio_npz_writer *w, int64_t *end)
{
    unsigned char eocd[EOCD_LEN], len[2];
    size_t n = w->old.comment_len;
    int fd = w->atomic.fd;

    npyio_status st;

    if (n == 0)
        return NPYIO_OK;
    st = pread_exact(fd, eocd, sizeof eocd, *end - EOCD_LEN);
    if (st != NPYIO_OK)
        return st;
    if (npyio__le32(eocd) != 0x06054b50u || npyio__le16(eocd + 20) != 0)
        return npyio__fail(NPYIO_E_FORMAT, "minizip's end record is not "
                           "where it closed the archive");
    npyio__put_le16(len, (uint16_t)n);
    if (npyio__fd_pwrite_all(fd, len, 2, *end - 2) != 0 ||
        npyio__fd_pwrite_all(fd, w->comment, n, *end) != 0)
        return NPYIO_E_IO;
    *end += (int64_t)n;
    return NPYIO_OK;
}

/* Two directory entries that must be the same member, unmoved. */
static bool same_entry(const npyio__zip_entry *a, const npyio__zip_entry *b)
{
    return strcmp(a->name, b->name) == 0 &&
           a->header_offset == b->header_offset &&
           a->data_offset == b->data_offset && a->csize == b->csize &&
           a->usize == b->usize && a->crc == b->crc &&
           a->method == b->method && a->flags == b->flags;
}

/* The first entry of `now` that is not what the append should have left:
 * every old entry unchanged, then exactly the new names; -1 if none. */
static int64_t first_difference(const npyio_npz_writer *w,
                                const npyio__zip_dir *now)
{
    size_t i;

    for (i = 0; i < now->count && i < w->count; i++) {
        if (i < w->old.count ? !same_entry(&now->entries[i],
                                           &w->old.entries[i])
                             : strcmp(now->entries[i].name, w->names[i]) != 0)
            return (int64_t)i;
    }
    return now->count == w->count ? -1 : (int64_t)i;
}

/* The archive written, read back by our reader: the old members as they
 * were, then the new ones, and the old comment. */
static npyio_status check_appended(npyio_npz_writer *w, const char *where)
{
    npyio__zip_dir now;
    int64_t bad;
    npyio_status st = npyio__zip_dir_read(w->stream, &w->mem, w->options,
                                          &now);

    if (st != NPYIO_OK)
        return npyio__fail(st, "%s: the archive written does not read back "
                           "(the old one is kept): %s", where,
                           npyio_last_error());
    bad = first_difference(w, &now);
    if (bad < 0 && now.comment_len != w->old.comment_len)
        bad = (int64_t)now.count;
    npyio__zip_dir_free(&now);
    if (bad >= 0)
        return npyio__fail(NPYIO_E_FORMAT, "%s: the archive written differs "
                           "from the old one plus the new members at entry "
                           "%lld (the old one is kept)", where,
                           (long long)bad);
    return NPYIO_OK;
}

/* minizip wrote the directory: the comment back, whatever the old
 * directory left beyond the new end cut off, the result checked, then the
 * temporary replaces the archive. */
static npyio_status finish_append(npyio_npz_writer *w, const char *where)
{
    int64_t end = 0;
    npyio_status st = npyio__stream_tell(w->stream, &end);

    if (st == NPYIO_OK)
        st = give_comment_back(w, &end);
    if (st == NPYIO_OK && npyio__fd_truncate(w->atomic.fd, end) != 0)
        st = NPYIO_E_IO;
    if (st != NPYIO_OK)
        st = npyio__fail(st, "%s: %s", where, npyio_last_error());
    if (st == NPYIO_OK)
        st = check_appended(w, where);
    npyio_stream_close(w->stream);
    w->owns_stream = false;
    w->appending = false; /* committed or removed, either way */
    if (st != NPYIO_OK) {
        npyio__atomic_abandon(&w->atomic);
        return st;
    }
    return npyio__atomic_commit(&w->atomic, &w->mem, w->durable);
}

static npyio_status npz_open_append_body(const char *path, uint32_t flags,
                                         const npyio_options *options,
                                         npyio_npz_writer **out)
{
    static const char where[] = "npyio_npz_open_append";
    npyio_npz_writer *w = NULL;
    npyio_status st;

    if (out == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: out is NULL", where);
    *out = NULL;
    st = npyio__check_path(path, where);
    if (st != NPYIO_OK)
        return st;
    st = npyio__check_flags(flags, NPYIO_WRITE_NO_SYNC | NPYIO_NPZ_NO_ALIGN |
                                       NPYIO_WRITE_WAIT_FOR_LOCK,
                            where);
    if (st == NPYIO_OK)
        st = new_writer(flags, options, &w);
    if (st != NPYIO_OK)
        return st;
    st = npyio__open_locked(path, true,
                                (flags & NPYIO_WRITE_WAIT_FOR_LOCK) != 0,
                                where, &w->original);
    if (st == NPYIO_OK)
        st = read_old_archive(w, path);
    if (st == NPYIO_OK)
        st = copy_archive(w, path, where);
    if (st != NPYIO_OK) {
        release(w);
        return st;
    }
    *out = w;
    return NPYIO_OK;
}

npyio_status npyio_npz_open_append(const char *path, uint32_t flags,
                                   const npyio_options *options,
                                   npyio_npz_writer **out)
{
    if (out != NULL)
        *out = NULL; /* outputs are cleared whatever is refused */
    return npyio__as_called(npz_open_append_body(path, flags, options, out),
                            "npyio_npz_open_append");
}

/* ---- closing ------------------------------------------------------------------- */

static npyio_status npz_writer_close_body(npyio_npz_writer *npz)
{
    static const char where[] = "npyio_npz_writer_close";
    npyio_status st;
    int rc;

    if (npz == NULL)
        return NPYIO_OK; /* as every _close: NULL is nothing to do */
    st = check_writer(npz, where);
    if (st != NPYIO_OK)
        return st;
    if (npz->member_open)
        st = npyio__fail(NPYIO_E_STATE, "%s: a member's writer is still "
                         "open (close it first)", where);
    else if (npz->sticky.failed != NPYIO_OK)
        st = npyio__sticky_repeat(&npz->sticky, where, "archive");
    if (st == NPYIO_OK) {
        rc = zipClose(npz->zip, NULL);
        npz->zip = NULL;
        if (rc != ZIP_OK || npz->io_failed != NPYIO_OK)
            st = zip_failure(npz, where, rc);
    }
    if (st == NPYIO_OK && npz->appending)
        st = finish_append(npz, where);
    else if (st == NPYIO_OK)
        st = npz->owns_stream ? npyio__stream_commit(npz->stream,
                                                     npz->durable)
                              : npyio__stream_sync(npz->stream, false);
    if (st == NPYIO_OK && npz->owns_stream) {
        st = npyio_stream_close(npz->stream);
        npz->owns_stream = false;
    }
    release(npz);
    return st;
}

npyio_status npyio_npz_writer_close(npyio_npz_writer *npz)
{
    return npyio__as_called(npz_writer_close_body(npz),
                            "npyio_npz_writer_close");
}

void npyio_npz_writer_abort(npyio_npz_writer *npz)
{
    if (npz == NULL || npz->magic != NPYIO__MAGIC_NPZ_WRITER)
        return;
    release(npz);
}

static npyio_status npz_save_body(const char *path, size_t count,
                                  const char *const *keys,
                                  const npyio_header *const *headers,
                                  const void *const *data,
                                  const size_t *lens, int level,
                                  uint32_t flags,
                                  const npyio_options *options)
{
    static const char where[] = "npyio_npz_save";
    npyio_npz_writer *w = NULL;
    npyio_status st = NPYIO_OK;
    size_t i;

    if (count > 0 && (keys == NULL || headers == NULL || data == NULL ||
                      lens == NULL))
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: keys, headers, data "
                           "and lens must be given for %zu arrays", where,
                           count);
    st = npyio_npz_create_path(path, flags, options, &w);
    for (i = 0; st == NPYIO_OK && i < count; i++)
        st = npyio_npz_add_array(w, keys[i], headers[i], data[i], lens[i],
                                 level);
    if (st != NPYIO_OK) {
        npyio_npz_writer_abort(w);
        return st;
    }
    return npyio_npz_writer_close(w);
}

npyio_status npyio_npz_save(const char *path, size_t count,
                            const char *const *keys,
                            const npyio_header *const *headers,
                            const void *const *data, const size_t *lens,
                            int level, uint32_t flags,
                            const npyio_options *options)
{
    return npyio__as_called(npz_save_body(path, count, keys, headers, data,
                                          lens, level, flags, options),
                            "npyio_npz_save");
}
