/*
 * npz_write.c - writing .npz archives: the archive's lifecycle, adding
 * members (arrays, .npy files as they are, copies from another archive),
 * closing. minizip (the system's zip.h, over our streams: npz_zipio.c)
 * writes the archive's structure: local headers with ZIP64 always on, the
 * central directory, the end records. We write the members' bytes
 * (npz_entry.c): stored as given, or deflated by our own zlib stream,
 * with our own CRC. Appending to an archive is npz_append.c.
 *
 * Member names are NumPy's (key + ".npy"), with fixed dates and
 * attributes, so the same arrays give the same bytes. Stored members'
 * data starts at a multiple of 64 (a padding extra field, as zipalign
 * writes), unless NPYIO_NPZ_WRITE_NO_ALIGN.
 */
#include "crc.h"
#include "error.h"
#include "header.h"
#include "npz.h"
#include "npz_write_core.h"
#include "options.h"
#include "writer.h"

#include <string.h>

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

void npyio__npz_writer_release(npyio_npz_writer *w)
{
    if (w->open_entry != NULL)
        npyio__npz_entry_detach(w->open_entry);
    if (w->zip != NULL)
        zipClose(w->zip, NULL); /* frees it; the archive is dropped */
    /* The caller's stream gets what was written, as without a buffer. */
    (void)npyio__npz_zip_unbuffer(w, !w->owns_stream);
    if (w->owns_stream) {
        npyio__stream_abort(w->stream);
        npyio__stream_close(w->stream);
    }
    if (w->owns_original)
        npyio__stream_close(w->original); /* and its lock */
    npyio__zip_dir_free(&w->old);
    npyio__free(w->comment);
    npyio__npz_names_free(&w->names);
    npyio_options_free(w->options);
    w->magic = NPYIO__MAGIC_DEAD;
    npyio__free(w);
}

npyio_status npyio__npz_writer_new(uint32_t flags,
                                   const npyio_options *options,
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
    w->durable = !(flags & NPYIO_WRITE_NO_SYNC);
    w->align = !(flags & NPYIO_NPZ_WRITE_NO_ALIGN);
    w->zlib = (flags & NPYIO_NPZ_WRITE_ZLIB) != 0;
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
    npyio_npz_writer *w = NULL;
    npyio_status st = npyio__npz_writer_new(flags, options, &w);

    if (st != NPYIO_OK)
        return st;
    st = npyio__stream_acquire(path, stream, true, options, where,
                                   &w->stream, &w->owns_stream);
    if (st == NPYIO_OK && !npyio__stream_seekable(w->stream))
        st = npyio__fail(NPYIO_E_UNSUPPORTED, "%s: an archive is written "
                         "with seeks back to each member's header, and the "
                         "stream cannot seek (write to a file, then copy "
                         "it)", where);
    if (st == NPYIO_OK)
        st = npyio__npz_zip_open(w, APPEND_STATUS_CREATE, where);
    if (st != NPYIO_OK) {
        npyio__npz_writer_release(w);
        return st;
    }
    *out = w;
    return NPYIO_OK;
}

npyio_status npyio__npz_writer_create_path(const char *path, uint32_t flags,
                                           const npyio_options *options,
                                           const char *where,
                                           npyio_npz_writer **out)
{
    npyio_status st;

    st = npyio__check_opener(out, path, where);
    if (st != NPYIO_OK)
        return st;
    st = npyio__check_flags(flags, NPYIO_WRITE_NO_SYNC |
                                       NPYIO_NPZ_WRITE_NO_ALIGN |
                                       NPYIO_NPZ_WRITE_ZLIB,
                            where);
    return st != NPYIO_OK ? st
                          : create(path, NULL, flags, options, where, out);
}

npyio_status npyio_npz_writer_create_path(const char *path, uint32_t flags,
                                          const npyio_options *options,
                                          npyio_npz_writer **out)
{
    if (out != NULL)
        *out = NULL; /* outputs are cleared whatever is refused */
    return npyio__as_called(npyio__npz_writer_create_path(
                                path, flags, options,
                                "npyio_npz_writer_create_path", out),
                            "npyio_npz_writer_create_path");
}

static npyio_status npz_create_stream_body(npyio_stream *stream,
                                           uint32_t flags,
                                           const npyio_options *options,
                                           npyio_npz_writer **out)
{
    static const char where[] = "npyio_npz_writer_create_stream";
    npyio_status st;

    if (out == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: out is NULL", where);
    *out = NULL;
    st = npyio__check_flags(flags, NPYIO_NPZ_WRITE_NO_ALIGN |
                                       NPYIO_NPZ_WRITE_ZLIB, where);
    return st != NPYIO_OK ? st
                          : create(NULL, stream, flags, options, where, out);
}

npyio_status npyio_npz_writer_create_stream(npyio_stream *stream,
                                            uint32_t flags,
                                            const npyio_options *options,
                                            npyio_npz_writer **out)
{
    return npyio__as_called(npz_create_stream_body(stream, flags, options,
                                                   out),
                            "npyio_npz_writer_create_stream");
}

/* ---- adding members ------------------------------------------------------------ */

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

/* whole_len: the member's bytes when the caller's data is in memory and
 * comes in one write (npyio__npz_entry_open), else 0. */
static npyio_status npz_add_body(npyio_npz_writer *npz, const char *key,
                                 const npyio_header *header, int level,
                                 uint32_t flags, uint64_t whole_len,
                                 const char *where, npyio_writer **out)
{
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
        st = npyio__npz_names_new(&npz->names, &npz->mem, key, ".npy",
                                  where, &name);
    if (st == NPYIO_OK)
        st = npyio__npz_entry_open(npz, name, header, level, flags, false,
                                   whole_len, where, &s);
    if (st == NPYIO_OK)
        st = npyio__writer_adopt(s, header, flags, npz->options, where, out);
    return st;
}

npyio_status npyio_writer_create_member(npyio_npz_writer *npz, const char *key,
                                        const npyio_header *header, int level,
                                        uint32_t flags, npyio_writer **out)
{
    static const char where[] = "npyio_writer_create_member";

    return npyio__as_called(npz_add_body(npz, key, header, level, flags, 0,
                                         where, out),
                            where);
}

npyio_status npyio__npz_writer_add(npyio_npz_writer *npz, const char *key,
                                   const npyio_header *header,
                                   const void *data, size_t len, int level,
                                   const char *where)
{
    npyio_writer *w = NULL;
    npyio_status st;

    if (header != NULL && (uint64_t)len != (uint64_t)npyio_header_nbytes(
                                                header))
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: the buffer is %zu "
                           "bytes, the header describes %lld", where, len,
                           (long long)npyio_header_nbytes(header));
    if (data == NULL && len > 0)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: data is NULL", where);
    /* The data is the caller's, in memory, written in one call. */
    st = npz_add_body(npz, key, header, level, 0,
                      header != NULL && !npyio_dtype_has_objects(
                                            npyio_header_dtype(header))
                          ? (uint64_t)npyio_header_data_offset(header) + len
                          : 0,
                      where, &w);
    return st == NPYIO_OK ? npyio__writer_write_whole(w, data, len, where)
                          : st;
}

npyio_status npyio_npz_writer_add_with_header(npyio_npz_writer *npz,
                                              const char *key,
                                              const npyio_header *header,
                                              const void *data, size_t len,
                                              int level, uint32_t flags)
{
    npyio_status st = npyio__check_flags(flags, 0,
                                         "npyio_npz_writer_add_with_header");

    if (st == NPYIO_OK)
        st = npyio__npz_writer_add(npz, key, header, data, len, level,
                                   "npyio_npz_writer_add_with_header");
    return npyio__as_called(st, "npyio_npz_writer_add_with_header");
}

npyio_status npyio__npz_writer_add_plain(npyio_npz_writer *npz,
                                         const char *key, const char *type,
                                         int ndim, const int64_t *shape,
                                         const void *data, size_t len,
                                         int level, uint32_t flags,
                                         const char *where)
{
    npyio_header *h = NULL;
    npyio_status st;

    if (npz == NULL || npz->magic != NPYIO__MAGIC_NPZ_WRITER)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: npz is not an "
                           "npyio_npz_writer", where);
    st = npyio__check_flags(flags, 0, where);
    if (st == NPYIO_OK)
        st = npyio__plain_header(type, ndim, shape, npz->options, where, &h);
    if (st == NPYIO_OK)
        st = npyio__npz_writer_add(npz, key, h, data, len, level, where);
    npyio_header_free(h);
    return st;
}

npyio_status npyio_npz_writer_add(npyio_npz_writer *npz, const char *key,
                                  const char *type, int ndim,
                                  const int64_t *shape, const void *data,
                                  size_t len, int level, uint32_t flags)
{
    static const char where[] = "npyio_npz_writer_add";

    return npyio__as_called(npyio__npz_writer_add_plain(npz, key, type, ndim,
                                                        shape, data, len,
                                                        level, flags, where),
                            where);
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
        st = npyio__header_parse(*buf, *have, w->options, header, &need);
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
static npyio_status copy_npy_bytes(npyio_stream *member, npyio_stream *from,
                                   unsigned char *buf, size_t have,
                                   size_t cap, uint64_t *total)
{
    npyio_status st = NPYIO_OK;
    size_t got = have;

    *total = 0;
    while (st == NPYIO_OK && got > 0) {
        st = npyio__npz_entry_append(member, buf, got);
        *total += got;
        if (st == NPYIO_OK)
            st = npyio__stream_read(from, buf, cap, &got, "the .npy file");
    }
    return st;
}

/* A file shorter than its header describes (not for object arrays, whose
 * pickle has no declared length). */
static npyio_status check_npy_total(const npyio_header *h, uint64_t total,
                                    const char *where)
{
    uint64_t need = (uint64_t)npyio_header_data_offset(h) +
                    (uint64_t)npyio_header_nbytes(h);

    if (total < need && !npyio_dtype_has_objects(npyio_header_dtype(h)))
        return npyio__fail(NPYIO_E_TRUNCATED, "%s: the .npy file is %llu "
                           "bytes; its header describes %llu", where,
                           (unsigned long long)total,
                           (unsigned long long)need);
    return NPYIO_OK;
}

/* The rest of `from` read into one block (*buf, *len), when a member of
 * its size would be deflated whole (npyio__npz_entry_whole): a stream
 * that can seek, of a known length. False, nothing read and the thread's
 * message kept, when it cannot be: the bytes then go through a buffer.
 * (Read, not mapped: a file that shrinks meanwhile is then a short read,
 * never a fault.) */
static npyio_status read_npy_whole(npyio_npz_writer *w, npyio_stream *from,
                                   int level, unsigned char **buf,
                                   size_t *len)
{
    npyio__saved_message saved;
    uint64_t rest = 0;
    bool whole;

    *buf = NULL;
    if (level == 0 || w->zlib || !npyio__stream_seekable(from))
        return NPYIO_OK;
    npyio__message_save(&saved);
    whole = npyio__stream_remaining(from, &rest) == NPYIO_OK &&
            npyio__npz_entry_whole(w, level, rest);
    npyio__message_restore(&saved);
    if (!whole)
        return NPYIO_OK;
    if (npyio__alloc(&w->mem, (size_t)rest, "an .npy file",
                     (void **)buf) != NPYIO_OK) {
        npyio__message_restore(&saved); /* a buffer reads it instead */
        return NPYIO_OK;
    }
    return npyio__stream_read(from, *buf, (size_t)rest, len, "the .npy file");
}

/* The member from the file read whole: its header parsed there, its
 * bytes written in one piece. */
static npyio_status add_npy_whole(npyio_npz_writer *npz, char *name,
                                   const unsigned char *p, size_t len,
                                   int level, const char *where)
{
    npyio_header *h = NULL;
    npyio_stream *s = NULL;
    size_t need = 0;
    npyio_status st = npyio__header_parse(p, len, npz->options, &h, &need);

    if (st == NPYIO_E_TRUNCATED)
        st = npyio__fail(NPYIO_E_TRUNCATED, "%s: the .npy file ends inside "
                         "its header (%zu bytes of %zu)", where, len, need);
    if (st != NPYIO_OK) {
        npyio__free(name);
        return st;
    }
    st = npyio__npz_entry_open(npz, name, h, level, 0, false, len, where,
                               &s);
    if (st == NPYIO_OK)
        st = npyio__npz_entry_append(s, p, len);
    if (st == NPYIO_OK)
        st = check_npy_total(h, len, where);
    if (st == NPYIO_OK)
        st = npyio__npz_entry_commit(s);
    if (s != NULL)
        npyio__stream_close(s); /* unfinished: the archive fails */
    npyio_header_free(h);
    return st;
}

/* The member through a buffer, the header read first. */
static npyio_status add_npy_read(npyio_npz_writer *npz, char *name,
                                 npyio_stream *from, int level,
                                 const char *where)
{
    npyio_header *h = NULL;
    npyio_stream *s = NULL;
    unsigned char *buf = NULL;
    size_t have = 0, cap = 0;
    uint64_t total = 0;
    npyio_status st = read_npy_head(npz, from, where, &buf, &cap, &have, &h);

    if (st != NPYIO_OK)
        npyio__free(name);
    else
        st = npyio__npz_entry_open(npz, name, h, level, 0, false, 0, where,
                                   &s);
    if (st == NPYIO_OK)
        st = copy_npy_bytes(s, from, buf, have, cap, &total);
    if (st == NPYIO_OK)
        st = check_npy_total(h, total, where);
    if (st == NPYIO_OK)
        st = npyio__npz_entry_commit(s);
    if (s != NULL)
        npyio__stream_close(s); /* unfinished: the archive fails */
    npyio_header_free(h);
    npyio__free(buf);
    return st;
}

static npyio_status npz_add_npy_body(npyio_npz_writer *npz, const char *key,
                                     npyio_stream *from, int level)
{
    static const char where[] = "npyio_npz_writer_add_npy";
    unsigned char *whole = NULL;
    char *name = NULL;
    size_t len = 0;
    npyio_status st = check_add(npz, key, level, where);

    if (st == NPYIO_OK && from == NULL)
        st = npyio__fail(NPYIO_E_INVALID_ARG, "%s: the stream is NULL",
                         where);
    /* The key first: a refused key reads nothing from the stream. */
    if (st == NPYIO_OK)
        st = npyio__npz_names_new(&npz->names, &npz->mem, key, ".npy",
                                  where, &name);
    if (st == NPYIO_OK)
        st = read_npy_whole(npz, from, level, &whole, &len);
    if (st != NPYIO_OK) {
        npyio__free(name);
        return st;
    }
    if (whole == NULL)
        return add_npy_read(npz, name, from, level, where);
    st = add_npy_whole(npz, name, whole, len, level, where);
    npyio__free(whole);
    return st;
}

npyio_status npyio_npz_writer_add_npy(npyio_npz_writer *npz, const char *key,
                                      npyio_stream *from, int level,
                                      uint32_t flags)
{
    npyio_status st = npyio__check_flags(flags, 0, "npyio_npz_writer_add_npy");

    if (st == NPYIO_OK)
        st = npz_add_npy_body(npz, key, from, level);
    return npyio__as_called(st, "npyio_npz_writer_add_npy");
}

/* ---- copying ------------------------------------------------------------------- */

/* The member's bytes as stored, from the source archive to ours; a stored
 * member's CRC is checked on the way. */
static npyio_status copy_bytes(npyio_npz_writer *npz, npyio_stream *member,
                               npyio_stream *from, const npyio__zip_entry *se,
                               const char *label)
{
    const size_t block = (size_t)1 << 20;
    unsigned char *buf = NULL;
    uint64_t done = 0;
    uint32_t crc = 0;
    npyio_status st = npyio__alloc(&npz->mem, block, "a copy buffer",
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
            st = npyio__npz_entry_raw_write(member, buf, got);
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
    static const char where[] = "npyio_npz_writer_copy";
    const npyio__zip_entry *se = NULL;
    npyio_stream *from = NULL, *s = NULL;
    char *name = NULL, label[160], shown[96];
    npyio_status st = check_writer(npz, where);

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
    st = key != NULL ? npyio__npz_names_new(&npz->names, &npz->mem, key,
                                            ".npy", where, &name)
                     : npyio__npz_names_new(&npz->names, &npz->mem,
                                            se->name, "", where, &name);
    if (st == NPYIO_OK)
        st = npyio__npz_entry_open(npz, name, NULL, se->method == 0 ? 0 : 6, 0,
                                   true, 0, where, &s);
    if (st != NPYIO_OK)
        return st;
    st = copy_bytes(npz, s, from, se, label);
    if (st == NPYIO_OK)
        st = npyio__npz_entry_finish_raw(s, se->usize, se->crc, where);
    npyio__stream_close(s); /* unfinished: the archive fails */
    return st;
}

npyio_status npyio_npz_writer_copy(npyio_npz_writer *npz, const char *key,
                                   npyio_npz *src, size_t index)
{
    return npyio__as_called(npz_copy_body(npz, src, index, key),
                            "npyio_npz_writer_copy");
}

/* ---- closing ------------------------------------------------------------------- */

npyio_status npyio__npz_writer_close(npyio_npz_writer *npz,
                                     const char *where)
{
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
            st = npyio__npz_zip_failure(npz, where, rc);
    }
    if (st == NPYIO_OK)
        st = npyio__npz_zip_unbuffer(npz, true);
    if (st == NPYIO_OK && npz->finish != NULL)
        st = npz->finish(npz, where);
    else if (st == NPYIO_OK)
        st = npz->owns_stream ? npyio__stream_commit(npz->stream,
                                                     npz->durable)
                              : npyio__stream_sync(npz->stream, false);
    if (st == NPYIO_OK && npz->owns_stream) {
        st = npyio__stream_close(npz->stream);
        npz->owns_stream = false;
    }
    npyio__npz_writer_release(npz);
    return st;
}

npyio_status npyio_npz_writer_close(npyio_npz_writer *npz)
{
    return npyio__as_called(npyio__npz_writer_close(npz,
                                                    "npyio_npz_writer_close"),
                            "npyio_npz_writer_close");
}

void npyio_npz_writer_abort(npyio_npz_writer *npz)
{
    if (npz == NULL || npz->magic != NPYIO__MAGIC_NPZ_WRITER)
        return;
    npyio__npz_writer_release(npz);
}
