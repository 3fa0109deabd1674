/*
 * npz_append.c - members added to an existing .npz archive.
 *
 * Our reader alone decides where anything is in the archive. minizip's
 * append mode would find the old directory again with its own reader,
 * which takes the last ZIP64 locator signature in the final 64 KiB
 * wherever it lies (in a comment, in an array's data), else the last end
 * record: it would then drop or replace every old member. So the
 * temporary holds the archive's bytes up to the end of the directory we
 * found, then end records of ours with no comment, the only ones minizip
 * can find. (Its append mode also writes the new members over the old
 * directory in place and the new one only at zipClose: a crash between
 * the two would lose every old member, one more reason for a temporary.)
 * The comment is given back after minizip's close, and the result is
 * read back by our reader and compared with the old directory before it
 * replaces the archive.
 */
#include "alloc.h"
#include "error.h"
#include "npz_append.h"
#include "npz_write_core.h"

#include <string.h>

#define EOCD64_LEN 56
#define LOC64_LEN 20
#define EOCD_LEN 22
#define LOC64_SIG 0x07064b50u

/* len bytes at `offset` of a stream we hold (and have checked is long
 * enough): a short read means it changed under us. */
static npyio_status pread_exact(npyio_stream *s, void *buf, size_t len,
                                int64_t offset)
{
    size_t got = 0;
    npyio_status st = npyio__stream_read_at(s, buf, len, offset, &got,
                                            "the archive");

    if (st != NPYIO_OK)
        return st;
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
    size_t i;
    npyio_status st = npyio__zip_dir_read(w->original, &w->mem, w->options,
                                          &w->old);

    if (st == NPYIO_OK && w->old.comment_len > 0)
        st = npyio__alloc(&w->mem, w->old.comment_len, "the archive comment",
                          (void **)&w->comment);
    if (st == NPYIO_OK && w->old.comment_len > 0)
        st = pread_exact(w->original, w->comment, w->old.comment_len,
                         w->old.comment_at);
    for (i = 0; st == NPYIO_OK && i < w->old.count; i++)
        st = npyio__npz_names_copy(&w->names, &w->mem,
                                   w->old.entries[i].name);
    return npyio__with_context(st, path);
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
    return npyio__stream_pwrite(w->stream, rec, sizeof rec, d->cd_end,
                                "the end records");
}

/* The temporary (w->stream): the archive's bytes up to the end of its
 * directory (cloned or copied in the kernel where the system can, else
 * through a buffer of the caller's allocator), end records of ours, then
 * minizip opened on it to add members where its directory was. */
static npyio_status copy_archive(npyio_npz_writer *w, const char *path,
                                 const char *where)
{
    const char *how = "";
    int64_t at = -1;
    /* Nothing before the end records: no members to keep, and a ZIP64
     * record at offset 0 that minizip would take for none. */
    bool empty = w->old.cd_end == 0;
    npyio_status st = npyio__stream_copy(w->stream, w->original,
                                         w->old.cd_end, &how);

    if (st == NPYIO_OK && !empty)
        st = write_end_records(w, where);
    if (st != NPYIO_OK)
        return npyio__fail(st, "%s: %s: copying the archive: %s", where,
                           path, npyio_last_error());
    st = npyio__npz_zip_open(w, empty ? APPEND_STATUS_CREATE
                                      : APPEND_STATUS_ADDINZIP,
                             where);
    /* minizip is left where the new members go: where the directory was. */
    if (st == NPYIO_OK)
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
    npyio_status st;

    if (n == 0)
        return NPYIO_OK;
    st = pread_exact(w->stream, eocd, sizeof eocd, *end - EOCD_LEN);
    if (st != NPYIO_OK)
        return st;
    if (npyio__le32(eocd) != 0x06054b50u || npyio__le16(eocd + 20) != 0)
        return npyio__fail(NPYIO_E_FORMAT, "minizip's end record is not "
                           "where it closed the archive");
    npyio__put_le16(len, (uint16_t)n);
    st = npyio__stream_pwrite(w->stream, len, 2, *end - 2, "the comment");
    if (st == NPYIO_OK)
        st = npyio__stream_pwrite(w->stream, w->comment, n, *end,
                                  "the comment");
    if (st == NPYIO_OK)
        *end += (int64_t)n;
    return st;
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

    const npyio__npz_names *names = &w->names;

    for (i = 0; i < now->count && i < names->count; i++) {
        if (i < w->old.count ? !same_entry(&now->entries[i],
                                           &w->old.entries[i])
                             : strcmp(now->entries[i].name,
                                      names->list[i]) != 0)
            return (int64_t)i;
    }
    return now->count == names->count ? -1 : (int64_t)i;
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
 * temporary replaces the archive (the stream's commit). On failure the
 * temporary is removed when the archive is released. */
static npyio_status finish_append(npyio_npz_writer *w, const char *where)
{
    int64_t end = 0;
    npyio_status st = npyio__stream_tell(w->stream, &end);

    if (st == NPYIO_OK)
        st = give_comment_back(w, &end);
    if (st == NPYIO_OK)
        st = npyio__stream_resize(w->stream, end, false);
    if (st != NPYIO_OK)
        st = npyio__fail(st, "%s: %s", where, npyio_last_error());
    if (st == NPYIO_OK)
        st = check_appended(w, where);
    if (st == NPYIO_OK)
        st = npyio__stream_commit(w->stream, w->durable);
    return st;
}

/* An append from `original` (w->original) into the temporary w->stream:
 * the old archive read by our reader, its bytes copied, minizip opened
 * after them. `label` names the archive in messages. */
static npyio_status start_append(npyio_npz_writer *w, const char *label,
                                 const char *where)
{
    npyio_status st = read_old_archive(w, label);

    if (st == NPYIO_OK)
        st = copy_archive(w, label, where);
    w->finish = finish_append;
    return st;
}

/* What an append is given: a path, or two live streams; flags it takes
 * (durability only for a path: the caller's streams have their own). */
static npyio_status check_append_args(bool by_path, const char *path,
                                      npyio_stream *original,
                                      npyio_stream *out_stream,
                                      uint32_t flags, const char *where)
{
    npyio_status st;

    if (by_path) {
        st = npyio__check_path(path, where);
        return st != NPYIO_OK
                   ? st
                   : npyio__check_flags(flags, NPYIO_WRITE_NO_SYNC |
                                                   NPYIO_NPZ_WRITE_NO_ALIGN |
                                                   NPYIO_NPZ_WRITE_ZLIB |
                                                   NPYIO_WRITE_WAIT_FOR_LOCK,
                                        where);
    }
    st = npyio__check_stream(original, where);
    if (st == NPYIO_OK)
        st = npyio__check_stream(out_stream, where);
    return st != NPYIO_OK
               ? st
               : npyio__check_flags(flags, NPYIO_NPZ_WRITE_NO_ALIGN |
                                               NPYIO_NPZ_WRITE_ZLIB |
                                               NPYIO_WRITE_WAIT_FOR_LOCK,
                                    where);
}

/* The streams of an append. From a path: the file, locked, and a
 * replacing temporary, both ours. Else the caller's, the original locked
 * where its back end can. */
static npyio_status take_streams(npyio_npz_writer *w, const char *path,
                                 npyio_stream *original,
                                 npyio_stream *out_stream, uint32_t flags,
                                 const char *where)
{
    bool wait = (flags & NPYIO_WRITE_WAIT_FOR_LOCK) != 0;
    npyio_status st;

    if (path == NULL) {
        w->original = original;
        w->stream = out_stream;
        w->durable = false; /* synced at close, not made durable */
        return npyio__stream_lock(original, true, wait);
    }
    st = npyio__stream_open_locked(path, true, wait, w->options, where,
                                   &w->original);
    w->owns_original = st == NPYIO_OK;
    if (st == NPYIO_OK)
        st = npyio__stream_open_replacing(path, w->options, &w->stream);
    w->owns_stream = st == NPYIO_OK;
    return st;
}

/* An appending archive writer on a path (by_path) or on the caller's
 * streams. */
static npyio_status open_appender(bool by_path, const char *path,
                                  npyio_stream *original,
                                  npyio_stream *out_stream, uint32_t flags,
                                  const npyio_options *options,
                                  const char *where, npyio_npz_writer **out)
{
    npyio_npz_writer *w = NULL;
    npyio_status st;

    if (out == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: out is NULL", where);
    *out = NULL;
    st = check_append_args(by_path, path, original, out_stream, flags,
                           where);
    if (st == NPYIO_OK)
        st = npyio__npz_writer_new(flags, options, &w);
    if (st != NPYIO_OK)
        return st;
    st = take_streams(w, path, original, out_stream, flags, where);
    if (st == NPYIO_OK)
        st = start_append(w, path != NULL ? path : "the archive", where);
    if (st != NPYIO_OK) {
        npyio__npz_writer_release(w);
        return st;
    }
    *out = w;
    return NPYIO_OK;
}

npyio_status npyio__npz_open_append_streams(npyio_stream *original,
                                            npyio_stream *out_stream,
                                            uint32_t flags,
                                            const npyio_options *options,
                                            npyio_npz_writer **out)
{
    return open_appender(false, NULL, original, out_stream, flags, options,
                         "npyio_npz_writer_open_append_path", out);
}

/* The public opener on the caller's two streams: distinct, the
 * temporary able to do what the copy and minizip ask of it. */
npyio_status npyio_npz_writer_open_append_stream(npyio_stream *stream,
                                                 npyio_stream *temporary,
                                                 uint32_t flags,
                                                 const npyio_options *options,
                                                 npyio_npz_writer **out)
{
    static const char where[] = "npyio_npz_writer_open_append_stream";
    npyio_status st;

    if (out != NULL)
        *out = NULL; /* outputs are cleared whatever is refused */
    st = npyio__check_stream(stream, where);
    if (st == NPYIO_OK)
        st = npyio__check_stream(temporary, where);
    if (st == NPYIO_OK && stream == temporary)
        st = npyio__fail(NPYIO_E_INVALID_ARG, "%s: the temporary is the "
                         "archive's own stream", where);
    if (st == NPYIO_OK)
        st = npyio__stream_require(temporary, true, where);
    if (st == NPYIO_OK)
        st = open_appender(false, NULL, stream, temporary, flags, options,
                           where, out);
    return npyio__as_called(st, where);
}

npyio_status npyio__npz_open_append_path(const char *path, uint32_t flags,
                                         const npyio_options *options,
                                         const char *where,
                                         npyio_npz_writer **out)
{
    return open_appender(true, path, NULL, NULL, flags, options, where, out);
}

npyio_status npyio_npz_writer_open_append_path(const char *path,
                                               uint32_t flags,
                                               const npyio_options *options,
                                               npyio_npz_writer **out)
{
    static const char where[] = "npyio_npz_writer_open_append_path";

    if (out != NULL)
        *out = NULL; /* outputs are cleared whatever is refused */
    return npyio__as_called(npyio__npz_open_append_path(path, flags, options,
                                                        where, out),
                            where);
}
