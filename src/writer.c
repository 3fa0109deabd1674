/*
 * writer.c - writing .npy arrays: the header as np.save writes it, then
 * the caller's data in any number of calls, with the byte count checked on
 * close; to a path through an atomically replaced temporary file; with
 * the row count left for close to write. Part of the array I/O core;
 * knows nothing of zip archives. Appending rows and writing them in place
 * are in writer_rows.c, over this core (writer_core.h).
 */
#include "error.h"
#include "header_io.h"
#include "options.h"
#include "writer.h"
#include "writer_core.h"

#include <string.h>

static const npyio__writer_sink new_array_sink;

static npyio_status write_data(npyio_writer *w, const void *data,
                               size_t len);

npyio_status npyio__writer_check_handle(const npyio_writer *w,
                                        const char *where)
{
    if (w == NULL || w->magic != NPYIO__MAGIC_WRITER)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: %s", where,
                           w == NULL ? "writer is NULL"
                                     : "the pointer given as a writer is not "
                                       "a live npyio_writer");
    return NPYIO_OK;
}

/* A writer that failed stays failed: remember the first error. */
static npyio_status fail_writer(npyio_writer *w, npyio_status st)
{
    return npyio__sticky_fail(&w->sticky, st);
}

static npyio_status repeat_failure(const npyio_writer *w, const char *where)
{
    return npyio__sticky_repeat(&w->sticky, where, "writer");
}

npyio_status npyio__writer_new(const npyio_header *h, uint32_t flags,
                               const npyio_options *options,
                               npyio_writer **out)
{
    npyio__mem mem;
    npyio_writer *w;
    npyio_status st;

    npyio__mem_init(&mem, options);
    st = npyio__alloc_zero(&mem, sizeof *w, "writer", (void **)&w);
    if (st != NPYIO_OK)
        return st;
    w->magic = NPYIO__MAGIC_WRITER;
    w->mem = mem;
    w->durable = !(flags & NPYIO_WRITE_NO_SYNC);
    w->objects = h != NULL && npyio_dtype_has_objects(h->dtype) != 0;
    w->expected = h != NULL ? (uint64_t)h->nbytes : 0;
    w->sink = &new_array_sink;
    *out = w;
    return NPYIO_OK;
}


/* Release the writer: what the sink left unfinished is undone, a stream
 * of ours closed (a replacing file not committed is removed). */
void npyio__writer_release(npyio_writer *w)
{
    if (w->sink->undo != NULL)
        w->sink->undo(w);
    if (w->owns_stream)
        npyio__stream_close(w->stream);
    npyio_header_free(w->layout);
    npyio__free(w->path);
    npyio__free(w->old_header);
    npyio__free(w->tail);
    w->magic = NPYIO__MAGIC_DEAD;
    npyio__free(w);
}

npyio_status npyio__writer_check_open_args(const npyio_header *h,
                                           npyio_writer **out,
                                           const char *where)
{
    if (out == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: out is NULL", where);
    *out = NULL;
    if (h == NULL || h->magic != NPYIO__MAGIC_HEADER)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: header is not an "
                           "npyio_header", where);
    return NPYIO_OK;
}

npyio_status npyio__writer_write(npyio_writer *writer, const void *data,
                                 size_t len, const char *where)
{
    npyio_writer *w = writer;
    npyio_status st = npyio__writer_check_handle(w, where);

    if (st != NPYIO_OK)
        return st;
    if (w->sticky.failed != NPYIO_OK)
        return repeat_failure(w, where);
    if (data == NULL && len > 0)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: data is NULL", where);
    if (w->sink->rows_only)
        return npyio__fail(NPYIO_E_STATE, "%s: a writer opened in place "
                           "writes rows (npyio_writer_write_rows)", where);
    if (w->unknown_rows)
        w->expected = w->written + len; /* any number of rows */
    else if (!w->objects && len > w->expected - w->written)
        return fail_writer(w, npyio__fail(NPYIO_E_INVALID_ARG,
                                          "%s: %llu more bytes would make "
                                          "%llu, but the header promises "
                                          "%llu", where,
                                          (unsigned long long)len,
                                          (unsigned long long)(w->written +
                                                               len),
                                          (unsigned long long)w->expected));
    if (w->sink->before_write != NULL)
        st = w->sink->before_write(w, len);
    if (st == NPYIO_OK)
        st = write_data(w, data, len);
    if (st != NPYIO_OK)
        return fail_writer(w, st);
    w->written += len;
    return NPYIO_OK;
}

npyio_status npyio_writer_write(npyio_writer *writer, const void *data,
                                size_t len)
{
    return npyio__as_called(npyio__writer_write(writer, data, len,
                                                "npyio_writer_write"),
                            "npyio_writer_write");
}

/* ---- rows: unknown counts, appending, writing in place ----------------------------- */

/* Bytes per row along axis 0, and that the layout allows rows to be added
 * or written there: C order (rows contiguous), numbers, at least 1-D. */
npyio_status npyio__writer_row_layout(const npyio_header *h,
                                      uint64_t *row_bytes, const char *where)
{
    uint64_t n = h->dtype->itemsize;
    int i;

    if (h->ndim < 1)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: a 0-d array has no "
                           "rows", where);
    if (npyio__header_fortran_data(h))
        return npyio__fail(NPYIO_E_UNSUPPORTED, "%s: rows along axis 0 of "
                           "Fortran-order data are not contiguous", where);
    if (npyio_dtype_has_objects(h->dtype))
        return npyio__fail(NPYIO_E_UNSUPPORTED, "%s: the array holds Python "
                           "objects (a pickle)", where);
    for (i = 1; i < h->ndim; i++)
        n *= (uint64_t)h->shape[i];
    *row_bytes = n;
    return NPYIO_OK;
}

npyio_status npyio__writer_check(const npyio_header *h, uint32_t flags,
                                 const char *where)
{
    npyio__saved_message saved;
    npyio__mem mem;
    uint64_t row_bytes;
    size_t len = 0;
    npyio_status st = NPYIO_OK;

    if (flags & NPYIO_WRITE_UNKNOWN_ROWS)
        st = npyio__writer_row_layout(h, &row_bytes, where);
    if (st != NPYIO_OK)
        return st;
    /* Measured only: "the buffer is too small" is no news to keep. */
    npyio__message_save(&saved);
    npyio__mem_like(h, &mem);
    st = npyio__header_emit(&mem, h, 0, NULL, 0, &len);
    if (st != NPYIO_E_BUFFER_TOO_SMALL)
        return st;
    npyio__message_restore(&saved);
    return NPYIO_OK;
}

/*
 * A copy of h with shape[0] = rows (sizes recomputed), in C order: rows
 * are only ever added to data whose C and Fortran layouts coincide
 * (row_layout), and the header must say what the data is once it grows
 * ((1, 3) with fortran_order True plus rows is C-order data; np.save
 * writes False for such arrays too).
 */
npyio_status npyio__writer_with_rows(npyio_writer *w, const npyio_header *h,
                                     int64_t rows, const char *where,
                                     npyio_header **out)
{
    npyio_dtype *dt = h->dtype;
    npyio_status st;
    int64_t *shape;

    st = npyio__alloc_array(&w->mem, (size_t)h->ndim, sizeof *shape,
                            "shape", (void **)&shape);
    if (st != NPYIO_OK)
        return st;
    memcpy(shape, h->shape, (size_t)h->ndim * sizeof *shape);
    shape[0] = rows;
    st = npyio__header_new(&w->mem, dt, h->ndim, shape, 0, where, out);
    npyio__free(shape);
    return st;
}

static npyio_status open_unknown_rows(npyio_writer *w, const npyio_header *h,
                                      const char *where)
{
    npyio_header *empty = NULL;
    npyio_status st = npyio__writer_row_layout(h, &w->row_bytes, where);

    if (st == NPYIO_OK && !npyio__stream_seekable(w->stream))
        st = npyio__fail(NPYIO_E_UNSUPPORTED, "%s: the row count is "
                         "written into the header at the end, which needs a "
                         "stream that can seek", where);
    /* Shape (0, ...) has the most growth room: any final count fits. */
    if (st == NPYIO_OK)
        st = npyio__writer_with_rows(w, h, 0, where, &empty);
    if (st == NPYIO_OK)
        st = npyio__stream_tell(w->stream, &w->header_at);
    if (st == NPYIO_OK)
        st = npyio__header_write(w->stream, &w->mem, empty, 0);
    if (st == NPYIO_OK) {
        w->unknown_rows = true;
        w->layout = empty;
        w->expected = 0;
        return NPYIO_OK;
    }
    npyio_header_free(empty);
    return st;
}

static npyio_status finish_unknown_rows(npyio_writer *w, const char *where)
{
    npyio_header *final = NULL;
    unsigned char small[512], *bytes = small;
    size_t total = (size_t)w->layout->data_offset;
    int64_t end = 0;
    npyio_status st;

    if (w->row_bytes != 0 && w->written % w->row_bytes != 0)
        return npyio__fail(NPYIO_E_TRUNCATED, "%s: %llu bytes are not a "
                           "whole number of %llu-byte rows", where,
                           (unsigned long long)w->written,
                           (unsigned long long)w->row_bytes);
    /* (Rows of 0 bytes cannot be counted from the bytes: the count stays
     * 0, as documented.) */
    st = npyio__writer_with_rows(w, w->layout,
                   w->row_bytes ? (int64_t)(w->written / w->row_bytes) : 0,
                   where, &final);
    if (st == NPYIO_OK && total > sizeof small)
        st = npyio__alloc(&w->mem, total, "header", (void **)&bytes);
    if (st == NPYIO_OK)
        st = npyio__header_emit_into(&w->mem, final, w->layout->version,
                                     total, bytes);
    if (st == NPYIO_OK)
        st = npyio__stream_tell(w->stream, &end);
    if (st == NPYIO_OK)
        st = npyio__stream_seek(w->stream, w->header_at, NPYIO_SEEK_SET,
                                NULL);
    if (st == NPYIO_OK)
        st = npyio__stream_write(w->stream, bytes, total, "the header");
    if (st == NPYIO_OK)
        st = npyio__stream_seek(w->stream, end, NPYIO_SEEK_SET, NULL);
    if (bytes != small)
        npyio__free(bytes);
    npyio_header_free(final);
    return st;
}

/* Write the header and get ready for data: the given shape, or with an
 * unknown row count. A file of ours (`own_file`) keeps a small header
 * pending until the first data. */
static npyio_status start(npyio_writer *w, const npyio_header *header,
                          bool unknown_rows, bool own_file, const char *where)
{
    npyio_status st;

    if (unknown_rows)
        return open_unknown_rows(w, header, where);
    if (own_file) {
        st = npyio__header_emit(&w->mem, header, 0, w->pending,
                                sizeof w->pending, &w->pending_len);
        if (st != NPYIO_E_BUFFER_TOO_SMALL)
            return st;
        w->pending_len = 0;
    }
    return npyio__header_write(w->stream, &w->mem, header, 0);
}

/* Write what is pending of the header, then `len` bytes of data: in one
 * write when both fit in a small buffer (a small file then costs one
 * system call). */
static npyio_status write_data(npyio_writer *w, const void *data, size_t len)
{
    unsigned char joined[4096];
    size_t head = w->pending_len;
    npyio_status st = NPYIO_OK;

    w->pending_len = 0;
    if (head > 0 && len <= sizeof joined - head) {
        memcpy(joined, w->pending, head);
        if (len > 0)
            memcpy(joined + head, data, len);
        return npyio__stream_write(w->stream, joined, head + len,
                                   "the header and array data");
    }
    if (head > 0)
        st = npyio__stream_write(w->stream, w->pending, head, "the header");
    if (st == NPYIO_OK && len > 0)
        st = npyio__stream_write(w->stream, data, len, "array data");
    return st;
}

/* A writer of a new array on the caller's stream, or on a replacing file
 * at path (see npyio__stream_acquire). */
static npyio_status open_new(const char *path, npyio_stream *stream,
                             const npyio_header *header, uint32_t flags,
                             const npyio_options *options, const char *where,
                             npyio_writer **out)
{
    npyio_writer *w;
    npyio_status st = npyio__writer_check_open_args(header, out, where);

    if (st == NPYIO_OK)
        st = npyio__check_flags(flags,
                                path != NULL ? NPYIO_WRITE_NO_SYNC |
                                                   NPYIO_WRITE_UNKNOWN_ROWS
                                             : NPYIO_WRITE_UNKNOWN_ROWS,
                                where);
    if (st == NPYIO_OK)
        st = npyio__writer_new(header, flags, options, &w);
    if (st != NPYIO_OK)
        return st;
    st = npyio__stream_acquire(path, stream, true, options, where,
                               &w->stream, &w->owns_stream);
    if (st == NPYIO_OK)
        st = start(w, header, (flags & NPYIO_WRITE_UNKNOWN_ROWS) != 0,
                   path != NULL, where);
    if (st != NPYIO_OK) {
        npyio__writer_release(w);
        return st;
    }
    *out = w;
    return NPYIO_OK;
}

npyio_status npyio__writer_adopt(npyio_stream *stream,
                                 const npyio_header *header, uint32_t flags,
                                 const npyio_options *options,
                                 const char *where, npyio_writer **out)
{
    npyio_writer *w = NULL;
    npyio_status st = npyio__writer_check_open_args(header, out, where);

    if (st == NPYIO_OK)
        st = npyio__check_flags(flags, NPYIO_WRITE_UNKNOWN_ROWS, where);
    if (st == NPYIO_OK)
        st = npyio__writer_new(header, flags, options, &w);
    if (st != NPYIO_OK) {
        npyio__stream_close(stream);
        return st;
    }
    w->stream = stream;
    w->owns_stream = true;
    w->durable = false; /* the archive syncs once, at its close */
    /* Nobody sees the member before its commit: the header may wait for
     * the first data, as for a file of ours. */
    st = start(w, header, (flags & NPYIO_WRITE_UNKNOWN_ROWS) != 0, true,
               where);
    if (st != NPYIO_OK) {
        npyio__writer_release(w);
        return st;
    }
    *out = w;
    return NPYIO_OK;
}

static npyio_status writer_open_stream_body(npyio_stream *stream,
                                            const npyio_header *header,
                                            uint32_t flags,
                                            const npyio_options *options,
                                            npyio_writer **out)
{
    return open_new(NULL, stream, header, flags, options,
                    "npyio_writer_create_stream", out);
}

npyio_status npyio_writer_create_stream(npyio_stream *stream,
                                        const npyio_header *header,
                                        uint32_t flags,
                                        const npyio_options *options,
                                        npyio_writer **out)
{
    return npyio__as_called(writer_open_stream_body(stream, header, flags,
                                                    options, out),
                            "npyio_writer_create_stream");
}

npyio_status npyio__writer_create_path(const char *path,
                                       const npyio_header *header,
                                       uint32_t flags,
                                       const npyio_options *options,
                                       const char *where, npyio_writer **out)
{
    npyio_status st = npyio__writer_check_open_args(header, out, where);

    if (st == NPYIO_OK)
        st = npyio__check_path(path, where);
    if (st != NPYIO_OK)
        return st;
    return open_new(path, NULL, header, flags, options, where, out);
}

npyio_status npyio_writer_create_path(const char *path,
                                      const npyio_header *header,
                                      uint32_t flags,
                                      const npyio_options *options,
                                      npyio_writer **out)
{
    return npyio__as_called(npyio__writer_create_path(path, header, flags,
                                                      options,
                                                      "npyio_writer_create_path",
                                                      out),
                            "npyio_writer_create_path");
}


npyio_status npyio__writer_close(npyio_writer *writer, const char *where)
{
    npyio_writer *w = writer;
    npyio_status st;

    if (w == NULL)
        return NPYIO_OK; /* as every _close: NULL is nothing to do */
    st = npyio__writer_check_handle(w, where);
    if (st != NPYIO_OK)
        return st;
    /* A failure of the sink's finish is this call's own (the I/O error of
     * a header rewrite, say), not an earlier one to repeat. */
    st = w->sticky.failed != NPYIO_OK ? repeat_failure(w, where)
                               : w->sink->finish(w, where);
    npyio__writer_release(w);
    return st;
}

npyio_status npyio_writer_close(npyio_writer *writer)
{
    return npyio__as_called(npyio__writer_close(writer, "npyio_writer_close"),
                            "npyio_writer_close");
}

void npyio_writer_abort(npyio_writer *writer)
{
    if (writer == NULL || writer->magic != NPYIO__MAGIC_WRITER)
        return;
    npyio__writer_release(writer);
}

npyio_status npyio__writer_write_whole(npyio_writer *w, const void *data,
                                       size_t len, const char *where)
{
    npyio_status st = npyio__writer_write(w, data, len, where);

    if (st != NPYIO_OK) {
        npyio_writer_abort(w);
        return st;
    }
    return npyio__writer_close(w, where);
}

npyio_status npyio__save(const char *path, const npyio_header *header,
                         const void *data, size_t len, uint32_t flags,
                         const npyio_options *options, const char *where)
{
    npyio_writer *w = NULL;
    npyio_status st;

    if (header == NULL || header->magic != NPYIO__MAGIC_HEADER)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: header is not an "
                           "npyio_header", where);
    if (npyio_dtype_has_objects(header->dtype))
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: the array holds Python "
                           "objects; write its pickle with "
                           "npyio_writer_write", where);
    /* The caller's buffer is read for exactly what the header says. */
    if ((uint64_t)len != (uint64_t)header->nbytes)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: the buffer is %zu "
                           "bytes, the header describes %lld", where, len,
                           (long long)header->nbytes);
    if (data == NULL && len > 0)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: data is NULL", where);
    st = npyio__check_flags(flags, NPYIO_WRITE_NO_SYNC, where);
    if (st == NPYIO_OK)
        st = npyio__writer_create_path(path, header, flags, options, where,
                                       &w);
    if (st != NPYIO_OK)
        return st;
    return npyio__writer_write_whole(w, data, len, where);
}

npyio_status npyio_save_with_header(const char *path,
                                    const npyio_header *header,
                                    const void *data, size_t len,
                                    uint32_t flags,
                                    const npyio_options *options)
{
    return npyio__as_called(npyio__save(path, header, data, len, flags,
                                        options, "npyio_save_with_header"),
                            "npyio_save_with_header");
}

/* ---- sinks ------------------------------------------------------------------------- */

/* A new array: every promised byte written (or, with an unknown row count,
 * whole rows, counted into the header now), then the result made final:
 * a replacing file of ours committed (renamed over its destination), the
 * caller's stream flushed. */
static npyio_status finish_new_array(npyio_writer *w, const char *where)
{
    npyio_status st = NPYIO_OK;

    if (w->unknown_rows)
        st = finish_unknown_rows(w, where);
    else if (!w->objects && w->written != w->expected)
        st = npyio__fail(NPYIO_E_TRUNCATED, "%s: %llu bytes of data were "
                         "written, but the header promises %llu", where,
                         (unsigned long long)w->written,
                         (unsigned long long)w->expected);
    if (st == NPYIO_OK && w->pending_len > 0)
        st = write_data(w, NULL, 0); /* no data came: a 0-byte array */
    if (st != NPYIO_OK)
        return st;
    return w->owns_stream ? npyio__stream_commit(w->stream, w->durable)
                          : npyio__stream_sync(w->stream, false);
}


static const npyio__writer_sink new_array_sink = {
    "new array", finish_new_array, NULL, NULL, false};
