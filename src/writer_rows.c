/*
 * writer_rows.c - rows written into an existing .npy file: appended after
 * its data (the header's row count rewritten at close), or written in
 * place at their positions. Both work on a stream that reads and writes at
 * offsets (a locked file opened from a path, or any back end with pread,
 * pwrite and resize); built on the writer's core (writer_core.h).
 */
#include "error.h"
#include "header_io.h"
#include "options.h"
#include "writer.h"
#include "writer_core.h"

#include <string.h>

static const npyio__writer_sink append_sink, in_place_sink;

/* The file in messages: its path, or what a stream is. */
static const char *file_name(const npyio_writer *w)
{
    return w->path != NULL ? w->path : "the stream";
}

/* ---- appending ----------------------------------------------------------------- */

/* A failed or abandoned append leaves the file as it was: the rows written
 * after the data are cut off again (best effort: the header still
 * describes the old data either way). */
static void undo_append(npyio_writer *w)
{
    npyio__saved_message saved;

    if (!w->undo_append)
        return;
    w->undo_append = false;
    npyio__message_save(&saved);
    if (w->tail_len > 0)
        (void)npyio__stream_pwrite(w->stream, w->tail, w->tail_len,
                                   w->layout->data_offset +
                                       w->layout->nbytes,
                                   "the bytes after the data");
    (void)npyio__stream_resize(w->stream, w->old_size, false);
    npyio__message_restore(&saved);
}

/* Room for n more bytes in the tail kept: doubling, up to all the bytes
 * the file has after its data. */
static npyio_status grow_tail(npyio_writer *w, size_t n)
{
    uint64_t after = (uint64_t)(w->old_size - (w->layout->data_offset +
                                               w->layout->nbytes));
    size_t cap = w->tail_cap > n ? 2 * w->tail_cap : w->tail_len + n;
    npyio_status st;

    if (n <= w->tail_cap - w->tail_len)
        return NPYIO_OK;
    if (cap > after)
        cap = w->tail_len + n;
    st = npyio__realloc(&w->mem, (void **)&w->tail, cap,
                        "the bytes after the data");
    if (st == NPYIO_OK)
        w->tail_cap = cap;
    return st;
}

/* Appended rows start where the data the header describes ends, over any
 * bytes the file has after it (a crashed append's rows, or whatever else
 * was there: np.load ignores them). Before the next `len` bytes overwrite
 * some of those, they are kept, so that a failed append can put the file
 * back byte for byte (found by fuzz_append). Bounded by the allocation
 * limit: past it the write fails before it overwrites anything. */
static npyio_status keep_overwritten(npyio_writer *w, size_t len)
{
    int64_t at = w->layout->data_offset + w->layout->nbytes +
                 (int64_t)w->written;
    size_t n, got = 0;
    npyio_status st;

    if (!w->undo_append || len == 0 || at >= w->old_size)
        return NPYIO_OK;
    n = (uint64_t)(w->old_size - at) < len ? (size_t)(w->old_size - at)
                                            : len;
    st = grow_tail(w, n);
    if (st == NPYIO_OK)
        st = npyio__stream_pread(w->stream, w->tail + w->tail_len, n, at,
                                 &got, "the bytes after the data");
    if (st != NPYIO_OK)
        return npyio__with_context(st, file_name(w));
    if (got < n)
        return npyio__fail(NPYIO_E_TRUNCATED, "%s: the file shrank while "
                           "rows were appended", file_name(w));
    w->tail_len += n;
    return NPYIO_OK;
}

/* Read the header of the file open as w->stream (at its start), and check
 * that the data is all there; failures name the file (the caller's entry
 * names its call in front). */
static npyio_status read_layout(npyio_writer *w, const npyio_options *options)
{
    bool checked = false;
    npyio_status st = npyio__header_read(w->stream, options, &w->mem,
                                         &w->layout);

    if (st == NPYIO_OK)
        st = npyio__header_check_data(w->stream, w->layout, &checked);
    if (st == NPYIO_OK)
        st = npyio__writer_row_layout(w->layout, &w->row_bytes,
                                      file_name(w));
    return npyio__with_context(st, file_name(w));
}

/* What an appender or a writer in place opens on, checked: a path, or
 * the caller's stream; flags of those two writers only. */
static npyio_status check_target(bool by_path, const char *path,
                                 npyio_stream *stream, uint32_t flags,
                                 const char *where)
{
    npyio_status st = by_path ? npyio__check_path(path, where)
                              : npyio__check_stream(stream, where);

    if (st == NPYIO_OK)
        st = npyio__check_flags(flags, NPYIO_WRITE_NO_SYNC |
                                           NPYIO_WRITE_WAIT_FOR_LOCK,
                                where);
    return st;
}

/* The writer's stream, locked (appenders exclusively, writers of rows in
 * place shared, so an append never runs beside them or another append):
 * the file at path, opened here (by_path; the path is kept for messages
 * and for a rewrite through a temporary), or the caller's, already in
 * w->stream (locked where its back end can, and taken from offset 0,
 * wherever an earlier writer left it: the array is the whole stream, as
 * the offsets of its header and rows say). */
static npyio_status lock_target(npyio_writer *w, bool by_path,
                                const char *path, uint32_t flags,
                                const npyio_options *options, bool exclusive,
                                const char *where)
{
    npyio_status st;

    if (!by_path) {
        st = npyio__stream_lock(w->stream, exclusive,
                                flags & NPYIO_WRITE_WAIT_FOR_LOCK);
        return st != NPYIO_OK ? st
                              : npyio__stream_seek(w->stream, 0,
                                                   NPYIO_SEEK_SET, NULL);
    }
    st = npyio__alloc(&w->mem, strlen(path) + 1, "path", (void **)&w->path);
    if (st != NPYIO_OK)
        return st;
    strcpy(w->path, path);
    st = npyio__stream_open_locked(path, exclusive,
                                   (flags & NPYIO_WRITE_WAIT_FOR_LOCK) != 0,
                                   options, where, &w->stream);
    w->owns_stream = st == NPYIO_OK;
    return st;
}

/* A dtype as a message shows it: its descr as np.save writes it ('<f8',
 * [('a', '<i4')]), or dtype.str ('|V24') when that is long; escaped and
 * cut to fit (field names are anyone's text). */
static const char *dtype_text(const npyio_dtype *dt, char *buf, size_t cap)
{
    char text[200];
    size_t len = 0;

    if (npyio__dtype_descr(dt, text, sizeof text, &len) != NPYIO_OK ||
        len > sizeof text)
        len = npyio__dtype_str(dt, text, sizeof text);
    return npyio__show(text, len < sizeof text ? len : sizeof text, buf, cap);
}

/* The rows' and the file's dtype and number of dimensions, both named. */
static npyio_status refuse_rows(const npyio_header *file,
                                const npyio_header *rows, const char *where)
{
    char a[96], b[96];

    return npyio__fail(NPYIO_E_INVALID_ARG, "%s: the rows' dtype or number "
                       "of dimensions differs from the file's: the rows are "
                       "%s with %d dimension%s, the file %s with %d",
                       where, dtype_text(rows->dtype, a, sizeof a),
                       rows->ndim, rows->ndim == 1 ? "" : "s",
                       dtype_text(file->dtype, b, sizeof b), file->ndim);
}

/* The rows to append must be rows of the file: same dtype, same trailing
 * dimensions, in C order. */
static npyio_status check_same_rows(const npyio_header *file,
                                    const npyio_header *rows,
                                    const char *where)
{
    int i;

    if (!npyio_dtype_is_equal(file->dtype, rows->dtype) ||
        file->ndim != rows->ndim)
        return refuse_rows(file, rows, where);
    for (i = 1; i < file->ndim; i++)
        if (file->shape[i] != rows->shape[i])
            return npyio__fail(NPYIO_E_INVALID_ARG, "%s: dimension %d of the "
                               "rows is %lld, the file's is %lld", where, i,
                               (long long)rows->shape[i],
                               (long long)file->shape[i]);
    if (npyio__header_fortran_data(rows))
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: the rows are described "
                           "in Fortran order; rows are appended in C order",
                           where);
    return NPYIO_OK;
}

/* What the file holds at open: its header's bytes (to rewrite only those
 * that change) and its length (restored if the append fails). */
static npyio_status remember_file(npyio_writer *w)
{
    size_t n = (size_t)w->layout->data_offset, got = 0;
    npyio_status st = npyio__alloc(&w->mem, n, "header",
                                   (void **)&w->old_header);

    if (st == NPYIO_OK)
        st = npyio__stream_pread(w->stream, w->old_header, n, 0, &got,
                                 "the header");
    if (st == NPYIO_OK)
        st = npyio__stream_length(w->stream, &w->old_size);
    if (st != NPYIO_OK)
        return npyio__with_context(st, file_name(w));
    if (got < n)
        return npyio__fail(NPYIO_E_TRUNCATED, "%s: the file shrank while it "
                           "was opened", file_name(w));
    return NPYIO_OK;
}

/* The writer's stream holds the file: its layout read, the rows checked
 * against it, the file remembered, and the stream left where new rows go:
 * right after the data the header accounts for (over any bytes a crashed
 * append left beyond it). */
static npyio_status start_append(npyio_writer *w, const npyio_header *rows,
                                 const npyio_options *options,
                                 const char *where)
{
    npyio_status st = read_layout(w, options);

    if (st == NPYIO_OK)
        st = check_same_rows(w->layout, rows, where);
    if (st == NPYIO_OK)
        st = remember_file(w);
    if (st == NPYIO_OK)
        st = npyio__stream_seek(w->stream,
                                w->layout->data_offset + w->layout->nbytes,
                                NPYIO_SEEK_SET, NULL);
    if (st == NPYIO_OK) {
        w->rows_added = rows->shape[0];
        w->undo_append = true;
    }
    return st;
}

/* A writer of rows to append, on the stream of a file opened here
 * (by_path) or on the caller's (locked here where its back end can). */
static npyio_status open_append(bool by_path, const char *path,
                                npyio_stream *stream,
                                const npyio_header *rows, uint32_t flags,
                                const npyio_options *options,
                                const char *where, npyio_writer **out)
{
    npyio_writer *w;
    npyio_status st = npyio__writer_check_open_args(rows, out, where);

    if (st == NPYIO_OK)
        st = check_target(by_path, path, stream, flags, where);
    if (st == NPYIO_OK)
        st = npyio__writer_new(rows, flags, options, &w);
    if (st != NPYIO_OK)
        return st;
    w->sink = &append_sink;
    w->stream = stream;
    st = lock_target(w, by_path, path, flags, options, true, where);
    if (st == NPYIO_OK)
        st = start_append(w, rows, options, where);
    if (st != NPYIO_OK) {
        npyio__writer_release(w);
        return st;
    }
    *out = w;
    return NPYIO_OK;
}

npyio_status npyio__writer_open_append_stream(npyio_stream *stream,
                                              const npyio_header *rows,
                                              uint32_t flags,
                                              const npyio_options *options,
                                              npyio_writer **out)
{
    return open_append(false, NULL, stream, rows, flags, options,
                       "npyio_writer_open_append_stream", out);
}

/* The public openers on a stream: one that cannot do what the writer
 * needs (seek, read and write at offsets, and for an append resize) is
 * refused before anything is locked or read. */
static npyio_status check_caller_stream(npyio_stream *stream, bool append,
                                        npyio_writer **out,
                                        const char *where)
{
    npyio_status st;

    if (out != NULL)
        *out = NULL; /* outputs are cleared whatever is refused */
    st = npyio__check_stream(stream, where);
    return st != NPYIO_OK ? st
                          : npyio__stream_require(stream, append, where);
}

npyio_status npyio_writer_open_append_stream(npyio_stream *stream,
                                             const npyio_header *rows,
                                             uint32_t flags,
                                             const npyio_options *options,
                                             npyio_writer **out)
{
    static const char where[] = "npyio_writer_open_append_stream";
    npyio_status st = check_caller_stream(stream, true, out, where);

    if (st == NPYIO_OK)
        st = open_append(false, NULL, stream, rows, flags, options, where,
                         out);
    return npyio__as_called(st, where);
}

npyio_status npyio__writer_open_append_path(const char *path,
                                            const npyio_header *rows,
                                            uint32_t flags,
                                            const npyio_options *options,
                                            const char *where,
                                            npyio_writer **out)
{
    return open_append(true, path, NULL, rows, flags, options, where, out);
}

npyio_status npyio_writer_open_append_path(const char *path,
                                           const npyio_header *rows,
                                           uint32_t flags,
                                           const npyio_options *options,
                                           npyio_writer **out)
{
    static const char where[] = "npyio_writer_open_append_path";

    return npyio__as_called(npyio__writer_open_append_path(path, rows, flags,
                                                           options, where,
                                                           out),
                            where);
}

/* A writer of the file at w->path, through a temporary and a rename, with
 * this writer's allocator, allocation limit, durability (and the tests'
 * OS faults). */
static npyio_status open_rewrite(npyio_writer *w, const npyio_header *grown,
                                 const char *where, npyio_writer **copy)
{
    npyio_options *o = NULL;
    npyio_status st = npyio__options_from_mem(&w->mem, &o);

    if (st == NPYIO_OK)
        st = npyio__writer_create_path(w->path, grown,
                                       w->durable ? 0 : NPYIO_WRITE_NO_SYNC,
                                       o, where, copy);
    npyio_options_free(o);
    return st;
}

/* The file no longer has room for its header: write header and data to a
 * temporary and rename it over the file (the data is copied: time in
 * proportion to the file, and twice its disk space meanwhile). A stream
 * has no path to rename over: NPYIO_E_UNSUPPORTED. */
static npyio_status rewrite_through_temporary(npyio_writer *w,
                                              const npyio_header *grown,
                                              const char *where)
{
    const size_t block = (size_t)1 << 20;
    npyio_writer *copy = NULL;
    unsigned char *buf = NULL;
    uint64_t done = 0, total = (uint64_t)grown->nbytes;
    npyio_status st;

    if (w->path == NULL)
        return npyio__fail(NPYIO_E_UNSUPPORTED, "%s: the header has no "
                           "room for the new row count, and a stream cannot "
                           "be rewritten through a temporary file", where);
    st = npyio__alloc(&w->mem, block, "copy buffer", (void **)&buf);
    if (st == NPYIO_OK)
        st = open_rewrite(w, grown, where, &copy);
    while (st == NPYIO_OK && done < total) {
        size_t want = total - done < block ? (size_t)(total - done) : block;
        size_t got = 0;

        st = npyio__stream_pread(w->stream, buf, want,
                                 w->layout->data_offset + (int64_t)done,
                                 &got, "array data");
        if (st != NPYIO_OK)
            st = npyio__with_context(st, w->path);
        else if (got < want)
            st = npyio__fail(NPYIO_E_TRUNCATED, "the file shrank while "
                             "rows were appended");
        else
            st = npyio__writer_write(copy, buf, want, where);
        done += want;
    }
    if (st == NPYIO_OK)
        st = npyio__writer_close(copy, where);
    else
        npyio_writer_abort(copy);
    npyio__free(buf);
    return st;
}

/*
 * Rewrite the header in place: only the bytes that differ from the header
 * as it was read, in one pwrite (usually the shape's digits and the
 * padding after them, a few bytes within one disk sector, so a power loss
 * cannot tear the rest of the header). If the write fails, the old bytes
 * are put back.
 */
static npyio_status write_changed_bytes(npyio_writer *w,
                                        const unsigned char *bytes,
                                        size_t total)
{
    size_t first = 0, end = total;
    npyio__saved_message saved;
    npyio_status st;

    while (first < total && bytes[first] == w->old_header[first])
        first++;
    while (end > first && bytes[end - 1] == w->old_header[end - 1])
        end--;
    if (first == end)
        return NPYIO_OK;
    st = npyio__stream_pwrite(w->stream, bytes + first, end - first,
                              (int64_t)first, "the header");
    if (st == NPYIO_OK)
        return NPYIO_OK;
    npyio__with_context(st, file_name(w));
    npyio__message_save(&saved);
    (void)npyio__stream_pwrite(w->stream, w->old_header + first,
                               end - first, (int64_t)first, "the header");
    npyio__message_restore(&saved);
    return st;
}

/* The header with the new row count, in place within its length, or,
 * where it has no room, the file rewritten through a temporary. */
static npyio_status write_grown_header(npyio_writer *w,
                                       const npyio_header *grown,
                                       const char *where)
{
    size_t total = (size_t)w->layout->data_offset;
    unsigned char small[512], *bytes = small;
    npyio_status st = NPYIO_OK;

    if (total > sizeof small)
        st = npyio__alloc(&w->mem, total, "header", (void **)&bytes);
    if (st == NPYIO_OK)
        st = npyio__header_emit_into(&w->mem, grown, w->layout->version,
                                     total, bytes);
    if (st == NPYIO_E_UNSUPPORTED) /* no room: the slow, safe way */
        st = rewrite_through_temporary(w, grown, where);
    else if (st == NPYIO_OK)
        st = write_changed_bytes(w, bytes, total);
    if (bytes != small)
        npyio__free(bytes);
    return st;
}

/*
 * Close an append: the rows are on disk (a data sync with durability)
 * before the header says they exist; the header is rewritten in place
 * within its length (the bytes that change, at the file's start); a crash
 * before that leaves the old header, which NumPy loads, ignoring the extra
 * bytes.
 */
static npyio_status finish_append(npyio_writer *w, const char *where)
{
    npyio_header *grown = NULL;
    npyio_status st;

    if (w->written != w->expected)
        return npyio__fail(NPYIO_E_TRUNCATED, "%s: %llu bytes of rows were "
                           "written, but %llu were announced", where,
                           (unsigned long long)w->written,
                           (unsigned long long)w->expected);
    if (w->durable) {
        st = npyio__stream_sync(w->stream, true);
        if (st != NPYIO_OK)
            return npyio__with_context(st, file_name(w));
    }
    /* Counted from the rows announced, not the bytes: rows of 0 bytes
     * ((k, 0) arrays) count too. */
    st = npyio__writer_with_rows(w, w->layout,
                                 w->layout->shape[0] + w->rows_added, where,
                                 &grown);
    if (st == NPYIO_OK)
        st = write_grown_header(w, grown, where);
    if (st == NPYIO_OK)
        w->undo_append = false; /* the new header is in place */
    /* Past the point of no return: the old file is gone (either state is
     * a valid array should the machine crash). Without durability the
     * stream is flushed all the same, as every writer's close does. */
    if (st == NPYIO_OK &&
        npyio__stream_sync(w->stream, w->durable) != NPYIO_OK)
        st = npyio__fail(NPYIO_E_IO, "%s: the rows are appended, but "
                         "syncing the new header failed (the new file may "
                         "not survive a crash): %s", file_name(w),
                         npyio_last_error());
    npyio_header_free(grown);
    return st;
}

/* ---- in place ------------------------------------------------------------------- */

/* A writer of rows in place, on a file opened here (by_path) or on the
 * caller's stream (locked shared here where its back end can). */
static npyio_status open_in_place(bool by_path, const char *path,
                                  npyio_stream *stream,
                                  uint32_t flags,
                                  const npyio_options *options,
                                  const char *where, npyio_writer **out)
{
    npyio_writer *w;
    npyio_status st;

    if (out == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: out is NULL", where);
    *out = NULL;
    st = check_target(by_path, path, stream, flags, where);
    if (st != NPYIO_OK)
        return st;
    st = npyio__writer_new(NULL, flags, options, &w);
    if (st != NPYIO_OK)
        return st;
    w->sink = &in_place_sink;
    w->stream = stream;
    st = lock_target(w, by_path, path, flags, options, false, where);
    if (st == NPYIO_OK)
        st = read_layout(w, options);
    if (st != NPYIO_OK) {
        npyio__writer_release(w);
        return st;
    }
    *out = w;
    return NPYIO_OK;
}

npyio_status npyio__writer_open_in_place_stream(npyio_stream *stream,
                                                uint32_t flags,
                                                const npyio_options *options,
                                                npyio_writer **out)
{
    return open_in_place(false, NULL, stream, flags, options,
                         "npyio_writer_open_in_place_stream", out);
}

npyio_status npyio_writer_open_in_place_stream(npyio_stream *stream,
                                               uint32_t flags,
                                               const npyio_options *options,
                                               npyio_writer **out)
{
    static const char where[] = "npyio_writer_open_in_place_stream";
    npyio_status st = check_caller_stream(stream, false, out, where);

    if (st == NPYIO_OK)
        st = open_in_place(false, NULL, stream, flags, options, where, out);
    return npyio__as_called(st, where);
}

npyio_status npyio_writer_open_in_place_path(const char *path, uint32_t flags,
                                             const npyio_options *options,
                                             npyio_writer **out)
{
    if (out != NULL)
        *out = NULL; /* outputs are cleared whatever is refused */
    return npyio__as_called(open_in_place(true, path, NULL, flags, options,
                                          "npyio_writer_open_in_place_path", out),
                            "npyio_writer_open_in_place_path");
}

static npyio_status writer_write_rows_body(npyio_writer *writer, int64_t first,
                                           int64_t count, const void *data,
                                           size_t len)
{
    static const char where[] = "npyio_writer_write_rows";
    npyio_writer *w = writer;
    const npyio_header *h;
    npyio_status st = npyio__writer_check_handle(w, where);

    if (st != NPYIO_OK)
        return st;
    if (w->sink != &in_place_sink)
        return npyio__fail(NPYIO_E_STATE, "%s: the writer was not opened "
                           "with npyio_writer_open_in_place_path", where);
    h = w->layout;
    if (first < 0 || count < 0 || first > h->shape[0] ||
        count > h->shape[0] - first)
        return npyio__fail_rows(where, first, count, h->shape[0],
                                "the file's");
    if ((uint64_t)len != (uint64_t)count * w->row_bytes)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: %lld rows are %llu "
                           "bytes, not %zu", where, (long long)count,
                           (unsigned long long)((uint64_t)count *
                                                w->row_bytes),
                           len);
    if (data == NULL && len > 0)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: data is NULL", where);
    /* Positional: no shared file offset, so other writers may write other
     * rows of the same file at the same time. */
    st = npyio__stream_pwrite(w->stream, data, len,
                              h->data_offset + first * (int64_t)w->row_bytes,
                              "rows");
    return npyio__with_context(st, where);
}

npyio_status npyio_writer_write_rows(npyio_writer *writer, int64_t first,
                                     int64_t count, const void *data,
                                     size_t len)
{
    return npyio__as_called(writer_write_rows_body(writer, first, count,
                                                   data, len),
                            "npyio_writer_write_rows");
}

/* Rows written in place are positioned writes: nothing to finish but
 * the sync (a flush without durability). */
static npyio_status finish_in_place(npyio_writer *w, const char *where)
{
    return npyio__with_context(npyio__stream_sync(w->stream, w->durable),
                               where);
}

static const npyio__writer_sink append_sink = {
    "append", finish_append, undo_append, keep_overwritten, false};
static const npyio__writer_sink in_place_sink = {
    "in place", finish_in_place, NULL, NULL, true};
