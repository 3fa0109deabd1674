/*
 * writer.c - writing .npy arrays: the header as np.save writes it, then
 * the caller's data in any number of calls, with the byte count checked on
 * close; to a path through an atomically replaced temporary file. Part of
 * the array I/O core; knows nothing of zip archives.
 */
#include "header_io.h"
#include "platform.h"
#include "stream.h"
#include "writer.h"

#include <fcntl.h>
#include <string.h>

#define NPYIO__MAGIC_WRITER 0x57525452u /* "WRTR" */

/*
 * One writer core (the stream, the byte count, the sticky failure) over
 * sinks, which say what closing means: a new array on a stream (the
 * caller's, or a replacing file that close commits), rows appended to an
 * existing file, or rows written in place. An archive member is the next.
 */
typedef struct writer_sink {
    const char *name;
    /* At close, after every write succeeded: the last checks, the header
     * rewritten if it must be, the result made final. */
    npyio_status (*finish)(npyio_writer *w);
    /* When the writer is released unfinished (failed, aborted, or finish
     * failed): put back what it changed, where it can. May be NULL. */
    void (*undo)(npyio_writer *w);
} writer_sink;

static const writer_sink new_array_sink, append_sink, in_place_sink;

struct npyio_writer {
    uint32_t magic;
    const writer_sink *sink;
    npyio_stream *stream;  /* where the bytes go; none in place */
    bool owns_stream;      /* closed with the writer (a close before the
                              sink's finish aborts it) */
    bool unknown_rows;     /* the row count goes into the header at close */
    bool durable;
    bool objects;          /* a pickle: no byte count applies */
    uint64_t expected;     /* nbytes from the header */
    uint64_t written;
    npyio__sticky sticky;  /* the first error, repeated afterwards */
    npyio__mem mem;
    /* A new file's header, not written yet: it goes out with the first
     * data, in one write when both are small (nobody sees the file before
     * the commit, so the order of the system calls is ours to choose). */
    unsigned char pending[256];
    size_t pending_len;
    /* unknown rows, append, in place: */
    npyio_header *layout;  /* the file's header, as it stands */
    uint64_t row_bytes;
    int64_t header_at;     /* stream position of the header (unknown rows) */
    int fd;                /* append, in place: the file, ours */
    char *path;            /* append: for a rewrite through a temporary */
    /* append: */
    int64_t rows_added;    /* the rows header's shape[0] */
    int64_t old_size;      /* the file's length at open, restored if the
                              append fails or is aborted */
    unsigned char *old_header; /* the header's bytes as read at open */
    bool undo_append;      /* until the new header is in place */
    unsigned char *tail;   /* the bytes the rows overwrote (those the file
                              had after its data), to put back on failure */
    size_t tail_len, tail_cap;
};

static npyio_status write_data(npyio_writer *w, const void *data,
                               size_t len);

static npyio_status check_writer(const npyio_writer *w, const char *where)
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

static npyio_status new_writer(const npyio_header *h, uint32_t flags,
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
    w->objects = npyio_dtype_contains_objects(h->dtype) != 0;
    w->expected = (uint64_t)h->nbytes;
    w->sink = &new_array_sink;
    w->fd = -1;
    *out = w;
    return NPYIO_OK;
}

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
        (void)npyio__fd_pwrite_all(w->fd, w->tail, w->tail_len,
                                   w->layout->data_offset +
                                       w->layout->nbytes);
    (void)npyio__fd_truncate(w->fd, w->old_size);
    npyio__message_restore(&saved);
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
    npyio_status st = NPYIO_OK;

    if (len == 0 || at >= w->old_size)
        return NPYIO_OK;
    n = (uint64_t)(w->old_size - at) < len ? (size_t)(w->old_size - at)
                                            : len;
    if (n > w->tail_cap - w->tail_len) {
        size_t cap = w->tail_cap > n ? 2 * w->tail_cap : w->tail_len + n;

        if (cap > (uint64_t)(w->old_size - (w->layout->data_offset +
                                            w->layout->nbytes)))
            cap = w->tail_len + n;
        st = npyio__realloc(&w->mem, (void **)&w->tail, cap,
                            "the bytes after the data");
        if (st != NPYIO_OK)
            return st;
        w->tail_cap = cap;
    }
    if (npyio__fd_pread_all(w->fd, w->tail + w->tail_len, n, at, &got) != 0)
        return npyio__with_context(NPYIO_E_IO, w->path);
    if (got < n)
        return npyio__fail(NPYIO_E_TRUNCATED, "%s: the file shrank while "
                           "rows were appended", w->path);
    w->tail_len += n;
    return NPYIO_OK;
}

/* Release the writer: what the sink left unfinished is undone, a stream
 * of ours closed (a replacing file not committed is removed). */
static void release(npyio_writer *w)
{
    if (w->sink->undo != NULL)
        w->sink->undo(w);
    if (w->owns_stream)
        npyio_stream_close(w->stream);
    if (w->fd >= 0)
        npyio__fd_close(w->fd);
    npyio_header_free(w->layout);
    npyio__free(w->path);
    npyio__free(w->old_header);
    npyio__free(w->tail);
    w->magic = NPYIO__MAGIC_DEAD;
    npyio__free(w);
}

static npyio_status check_open_args(const npyio_header *h, npyio_writer **out,
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

static npyio_status writer_write_body(npyio_writer *writer, const void *data,
                                      size_t len)
{
    static const char where[] = "npyio_writer_write";
    npyio_writer *w = writer;
    npyio_status st = check_writer(w, where);

    if (st != NPYIO_OK)
        return st;
    if (w->sticky.failed != NPYIO_OK)
        return repeat_failure(w, where);
    if (data == NULL && len > 0)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: data is NULL", where);
    if (w->sink == &in_place_sink)
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
    if (w->undo_append)
        st = keep_overwritten(w, len);
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
    return npyio__as_called(writer_write_body(writer, data, len),
                            "npyio_writer_write");
}

/* ---- rows: unknown counts, appending, writing in place ----------------------------- */

/* Bytes per row along axis 0, and that the layout allows rows to be added
 * or written there: C order (rows contiguous), numbers, at least 1-D. */
static npyio_status row_layout(const npyio_header *h, uint64_t *row_bytes,
                               const char *where)
{
    uint64_t n = h->dtype->itemsize;
    int i;

    if (h->ndim < 1)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: a 0-d array has no "
                           "rows", where);
    if (npyio__header_fortran_data(h))
        return npyio__fail(NPYIO_E_UNSUPPORTED, "%s: rows along axis 0 of "
                           "Fortran-order data are not contiguous", where);
    if (npyio_dtype_contains_objects(h->dtype))
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
        st = row_layout(h, &row_bytes, where);
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
static npyio_status with_rows(npyio_writer *w, const npyio_header *h,
                              int64_t rows, npyio_header **out)
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
    st = npyio__header_new(&w->mem, dt, h->ndim, shape, 0, out);
    npyio__free(shape);
    return st;
}

static npyio_status open_unknown_rows(npyio_writer *w, const npyio_header *h,
                                      const char *where)
{
    npyio_header *empty = NULL;
    npyio_status st = row_layout(h, &w->row_bytes, where);

    if (st == NPYIO_OK && !npyio__stream_seekable(w->stream))
        st = npyio__fail(NPYIO_E_UNSUPPORTED, "%s: the row count is "
                         "written into the header at the end, which needs a "
                         "stream that can seek", where);
    /* Shape (0, ...) has the most growth room: any final count fits. */
    if (st == NPYIO_OK)
        st = with_rows(w, h, 0, &empty);
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

static npyio_status finish_unknown_rows(npyio_writer *w)
{
    npyio_header *final = NULL;
    unsigned char small[512], *bytes = small;
    size_t total = (size_t)w->layout->data_offset;
    int64_t end = 0;
    npyio_status st;

    if (w->row_bytes != 0 && w->written % w->row_bytes != 0)
        return npyio__fail(NPYIO_E_TRUNCATED, "npyio_writer_close: %llu "
                           "bytes are not a whole number of %llu-byte rows",
                           (unsigned long long)w->written,
                           (unsigned long long)w->row_bytes);
    /* (Rows of 0 bytes cannot be counted from the bytes: the count stays
     * 0, as documented.) */
    st = with_rows(w, w->layout,
                   w->row_bytes ? (int64_t)(w->written / w->row_bytes) : 0,
                   &final);
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
    npyio_status st = check_open_args(header, out, where);

    if (st == NPYIO_OK)
        st = npyio__check_flags(flags,
                                path != NULL ? NPYIO_WRITE_NO_SYNC |
                                                   NPYIO_WRITE_UNKNOWN_ROWS
                                             : NPYIO_WRITE_UNKNOWN_ROWS,
                                where);
    if (st == NPYIO_OK)
        st = new_writer(header, flags, options, &w);
    if (st != NPYIO_OK)
        return st;
    st = npyio__stream_acquire(path, stream, true, options, where,
                               &w->stream, &w->owns_stream);
    if (st == NPYIO_OK)
        st = start(w, header, (flags & NPYIO_WRITE_UNKNOWN_ROWS) != 0,
                   path != NULL, where);
    if (st != NPYIO_OK) {
        release(w);
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
    npyio_status st = check_open_args(header, out, where);

    if (st == NPYIO_OK)
        st = npyio__check_flags(flags, NPYIO_WRITE_UNKNOWN_ROWS, where);
    if (st == NPYIO_OK)
        st = new_writer(header, flags, options, &w);
    if (st != NPYIO_OK) {
        npyio_stream_close(stream);
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
        release(w);
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
                    "npyio_writer_open_stream", out);
}

npyio_status npyio_writer_open_stream(npyio_stream *stream,
                                      const npyio_header *header,
                                      uint32_t flags,
                                      const npyio_options *options,
                                      npyio_writer **out)
{
    return npyio__as_called(writer_open_stream_body(stream, header, flags,
                                                    options, out),
                            "npyio_writer_open_stream");
}

static npyio_status writer_open_path_body(const char *path,
                                          const npyio_header *header,
                                          uint32_t flags,
                                          const npyio_options *options,
                                          npyio_writer **out)
{
    static const char where[] = "npyio_writer_open_path";
    npyio_status st = check_open_args(header, out, where);

    if (st == NPYIO_OK)
        st = npyio__check_path(path, where);
    if (st != NPYIO_OK)
        return st;
    return open_new(path, NULL, header, flags, options, where, out);
}

npyio_status npyio_writer_open_path(const char *path,
                                    const npyio_header *header,
                                    uint32_t flags,
                                    const npyio_options *options,
                                    npyio_writer **out)
{
    return npyio__as_called(writer_open_path_body(path, header, flags,
                                                  options, out),
                            "npyio_writer_open_path");
}

/* Read the header of the locked file through a stream on the descriptor
 * (which the stream borrows), and check that the data is all there. */
static npyio_status open_existing(npyio_writer *w, const char *path,
                                  uint32_t flags,
                                  const npyio_options *options,
                                  bool exclusive, const char *where)
{
    npyio_stream *s = NULL;
    bool checked = false;
    /* Appenders lock exclusively, writers of rows in place shared (so an
     * append never runs beside them or another append). */
    npyio_status st = npyio__open_locked(path, exclusive,
                                         (flags & NPYIO_WRITE_WAIT_FOR_LOCK)
                                             != 0,
                                         where, &w->fd);

    if (st != NPYIO_OK)
        return st;
    st = npyio__stream_open_fd(w->fd, false, options, &s);
    if (st == NPYIO_OK)
        st = npyio__header_read(s, options, &w->mem, &w->layout);
    if (st == NPYIO_OK)
        st = npyio__header_check_data(s, w->layout, &checked);
    npyio_stream_close(s);
    if (st == NPYIO_OK)
        st = row_layout(w->layout, &w->row_bytes, where);
    return npyio__with_context(st, path);
}

/* The rows to append must be rows of the file: same dtype, same trailing
 * dimensions, in C order. */
static npyio_status check_same_rows(const npyio_header *file,
                                    const npyio_header *rows,
                                    const char *where)
{
    int i;

    if (!npyio_dtype_equal(file->dtype, rows->dtype) ||
        file->ndim != rows->ndim)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: the rows' dtype or "
                           "number of dimensions differs from the file's",
                           where);
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
    npyio_status st = npyio__alloc(&w->mem, n, "header", (void **)&w->old_header);

    if (st != NPYIO_OK)
        return st;
    if (npyio__fd_pread_all(w->fd, w->old_header, n, 0, &got) != 0 ||
        npyio__fd_size(w->fd, &w->old_size) != 0)
        return npyio__with_context(NPYIO_E_IO, w->path);
    if (got < n)
        return npyio__fail(NPYIO_E_TRUNCATED, "%s: the file shrank while it "
                           "was opened", w->path);
    return NPYIO_OK;
}

static npyio_status writer_open_append_body(const char *path,
                                            const npyio_header *rows,
                                            uint32_t flags,
                                            const npyio_options *options,
                                            npyio_writer **out)
{
    static const char where[] = "npyio_writer_open_append";
    npyio_writer *w;
    npyio_status st = check_open_args(rows, out, where);

    if (st == NPYIO_OK)
        st = npyio__check_path(path, where);
    if (st == NPYIO_OK)
        st = npyio__check_flags(flags, NPYIO_WRITE_NO_SYNC |
                                           NPYIO_WRITE_WAIT_FOR_LOCK,
                                where);
    if (st == NPYIO_OK)
        st = new_writer(rows, flags, options, &w);
    if (st != NPYIO_OK)
        return st;
    w->sink = &append_sink;
    st = open_existing(w, path, flags, options, true, where);
    if (st == NPYIO_OK)
        st = check_same_rows(w->layout, rows, where);
    if (st == NPYIO_OK)
        st = npyio__alloc(&w->mem, strlen(path) + 1, "path",
                          (void **)&w->path);
    if (st == NPYIO_OK) {
        strcpy(w->path, path);
        st = remember_file(w);
    }
    if (st == NPYIO_OK) {
        st = npyio__stream_open_fd(w->fd, false, options, &w->stream);
        w->owns_stream = st == NPYIO_OK;
    }
    /* New rows go right after the data the header accounts for (over
     * any bytes a crashed append left beyond it). */
    if (st == NPYIO_OK)
        st = npyio__stream_seek(w->stream,
                                w->layout->data_offset + w->layout->nbytes,
                                NPYIO_SEEK_SET, NULL);
    if (st != NPYIO_OK) {
        release(w);
        return st;
    }
    w->rows_added = rows->shape[0];
    w->undo_append = true;
    *out = w;
    return NPYIO_OK;
}

npyio_status npyio_writer_open_append(const char *path,
                                      const npyio_header *rows,
                                      uint32_t flags,
                                      const npyio_options *options,
                                      npyio_writer **out)
{
    return npyio__as_called(writer_open_append_body(path, rows, flags,
                                                    options, out),
                            "npyio_writer_open_append");
}

/* The file no longer has room for its header: write header and data to a
 * temporary and rename it over the file (the data is copied: time in
 * proportion to the file, and twice its disk space meanwhile). */
static npyio_status rewrite_through_temporary(npyio_writer *w,
                                              const npyio_header *grown)
{
    npyio_writer *copy = NULL;
    unsigned char *buf = NULL;
    uint64_t done = 0, total = (uint64_t)grown->nbytes;
    npyio_status st;

    st = npyio__alloc(&w->mem, (size_t)1 << 20, "copy buffer",
                      (void **)&buf);
    if (st == NPYIO_OK) {
        npyio_options *o = NULL;

        /* A writer to the path does the temporary and the rename, with
         * this writer's allocator, allocation limit and durability. */
        st = npyio__options_new_in(&w->mem, &o);
        if (st == NPYIO_OK)
            st = npyio_options_set_allocator(o, &w->mem.ops, w->mem.user);
        if (st == NPYIO_OK)
            st = npyio_options_set_limit(o, NPYIO_LIMIT_ALLOC_BYTES,
                                         (int64_t)w->mem.max_alloc);
        if (st == NPYIO_OK)
            st = npyio_writer_open_path(w->path, grown,
                                        w->durable ? 0 : NPYIO_WRITE_NO_SYNC,
                                        o, &copy);
        npyio_options_free(o);
    }
    while (st == NPYIO_OK && done < total) {
        size_t want = total - done < ((uint64_t)1 << 20)
                          ? (size_t)(total - done)
                          : (size_t)1 << 20;
        size_t got = 0;

        if (npyio__fd_pread_all(w->fd, buf, want,
                                w->layout->data_offset + (int64_t)done,
                                &got) != 0)
            st = npyio__with_context(NPYIO_E_IO, w->path);
        else if (got < want)
            st = npyio__fail(NPYIO_E_TRUNCATED, "the file shrank while "
                             "rows were appended");
        else
            st = npyio_writer_write(copy, buf, want);
        done += want;
    }
    if (st == NPYIO_OK)
        st = npyio_writer_close(copy);
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

    while (first < total && bytes[first] == w->old_header[first])
        first++;
    while (end > first && bytes[end - 1] == w->old_header[end - 1])
        end--;
    if (first == end)
        return NPYIO_OK;
    if (npyio__fd_pwrite_all(w->fd, bytes + first, end - first,
                             (int64_t)first) == 0)
        return NPYIO_OK;
    npyio__with_context(NPYIO_E_IO, w->path);
    {
        npyio__saved_message saved;

        npyio__message_save(&saved);
        (void)npyio__fd_pwrite_all(w->fd, w->old_header + first, end - first,
                                   (int64_t)first);
        npyio__message_restore(&saved);
    }
    return NPYIO_E_IO;
}

/*
 * Close an append: the rows are on disk (fdatasync with durability) before
 * the header says they exist; the header is rewritten in place within its
 * length (the bytes that change, at the file's start); a crash before that
 * leaves the old header, which NumPy loads, ignoring the extra bytes.
 */
static npyio_status finish_append(npyio_writer *w)
{
    static const char where[] = "npyio_writer_close";
    npyio_header *grown = NULL;
    size_t total = (size_t)w->layout->data_offset;
    unsigned char small[512], *bytes = small;
    npyio_status st = NPYIO_OK;

    if (w->written != w->expected)
        return npyio__fail(NPYIO_E_TRUNCATED, "%s: %llu bytes of rows were "
                           "written, but %llu were announced", where,
                           (unsigned long long)w->written,
                           (unsigned long long)w->expected);
    if (w->durable && npyio__fd_datasync(w->fd) != 0)
        return npyio__with_context(NPYIO_E_IO, w->path);
    /* Counted from the rows announced, not the bytes: rows of 0 bytes
     * ((k, 0) arrays) count too. */
    st = with_rows(w, w->layout, w->layout->shape[0] + w->rows_added,
                   &grown);
    if (st == NPYIO_OK && total > sizeof small)
        st = npyio__alloc(&w->mem, total, "header", (void **)&bytes);
    if (st == NPYIO_OK) {
        st = npyio__header_emit_into(&w->mem, grown, w->layout->version,
                                     total, bytes);
        if (st == NPYIO_E_UNSUPPORTED) /* no room: the slow, safe way */
            st = rewrite_through_temporary(w, grown);
        else if (st == NPYIO_OK)
            st = write_changed_bytes(w, bytes, total);
        if (st == NPYIO_OK)
            w->undo_append = false; /* the new header is in place */
        /* Past the point of no return: the old file is gone (either
         * state is a valid array should the machine crash). */
        if (st == NPYIO_OK && w->durable && npyio__fd_datasync(w->fd) != 0)
            st = npyio__fail(NPYIO_E_IO, "%s: the rows are appended, but "
                             "syncing the new header failed (the new file "
                             "may not survive a crash): %s", w->path,
                             npyio_last_error());
    }
    if (bytes != small)
        npyio__free(bytes);
    npyio_header_free(grown);
    return st;
}

static npyio_status writer_open_in_place_body(const char *path,
                                              uint32_t flags,
                                              const npyio_options *options,
                                              npyio_writer **out)
{
    static const char where[] = "npyio_writer_open_in_place";
    npyio_writer *w;
    npyio__mem mem;
    npyio_status st;

    if (out == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: out is NULL", where);
    *out = NULL;
    st = npyio__check_path(path, where);
    if (st != NPYIO_OK)
        return st;
    st = npyio__check_flags(flags, NPYIO_WRITE_NO_SYNC |
                                       NPYIO_WRITE_WAIT_FOR_LOCK,
                            where);
    if (st != NPYIO_OK)
        return st;
    npyio__mem_init(&mem, options);
    st = npyio__alloc_zero(&mem, sizeof *w, "writer", (void **)&w);
    if (st != NPYIO_OK)
        return st;
    w->magic = NPYIO__MAGIC_WRITER;
    w->mem = mem;
    w->durable = !(flags & NPYIO_WRITE_NO_SYNC);
    w->fd = -1;
    w->sink = &in_place_sink;
    st = open_existing(w, path, flags, options, false, where);
    if (st != NPYIO_OK) {
        release(w);
        return st;
    }
    *out = w;
    return NPYIO_OK;
}

npyio_status npyio_writer_open_in_place(const char *path, uint32_t flags,
                                        const npyio_options *options,
                                        npyio_writer **out)
{
    if (out != NULL)
        *out = NULL; /* outputs are cleared whatever is refused */
    return npyio__as_called(writer_open_in_place_body(path, flags, options,
                                                      out),
                            "npyio_writer_open_in_place");
}

static npyio_status writer_write_rows_body(npyio_writer *writer, int64_t first,
                                           int64_t count, const void *data,
                                           size_t len)
{
    static const char where[] = "npyio_writer_write_rows";
    npyio_writer *w = writer;
    const npyio_header *h;
    npyio_status st = check_writer(w, where);

    if (st != NPYIO_OK)
        return st;
    if (w->sink != &in_place_sink)
        return npyio__fail(NPYIO_E_STATE, "%s: the writer was not opened "
                           "with npyio_writer_open_in_place", where);
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
    if (npyio__fd_pwrite_all(w->fd, data, len,
                             h->data_offset +
                                 first * (int64_t)w->row_bytes) != 0)
        return npyio__with_context(NPYIO_E_IO, where);
    return NPYIO_OK;
}

npyio_status npyio_writer_write_rows(npyio_writer *writer, int64_t first,
                                     int64_t count, const void *data,
                                     size_t len)
{
    return npyio__as_called(writer_write_rows_body(writer, first, count, data, len),
                            "npyio_writer_write_rows");
}

static npyio_status writer_close_body(npyio_writer *writer)
{
    static const char where[] = "npyio_writer_close";
    npyio_writer *w = writer;
    npyio_status st;

    if (w == NULL)
        return NPYIO_OK; /* as every _close: NULL is nothing to do */
    st = check_writer(w, where);
    if (st != NPYIO_OK)
        return st;
    /* A failure of the sink's finish is this call's own (the I/O error of
     * a header rewrite, say), not an earlier one to repeat. */
    st = w->sticky.failed != NPYIO_OK ? repeat_failure(w, where)
                               : w->sink->finish(w);
    release(w);
    return st;
}

npyio_status npyio_writer_close(npyio_writer *writer)
{
    return npyio__as_called(writer_close_body(writer),
                            "npyio_writer_close");
}

void npyio_writer_abort(npyio_writer *writer)
{
    if (writer == NULL || writer->magic != NPYIO__MAGIC_WRITER)
        return;
    release(writer);
}

static npyio_status save_body(const char *path, const npyio_header *header,
                              const void *data, size_t len, uint32_t flags,
                              const npyio_options *options)
{
    static const char where[] = "npyio_save";
    npyio_writer *w = NULL;
    npyio_status st;

    if (header == NULL || header->magic != NPYIO__MAGIC_HEADER)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: header is not an "
                           "npyio_header", where);
    if (npyio_dtype_contains_objects(header->dtype))
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
        st = npyio_writer_open_path(path, header, flags, options, &w);
    if (st != NPYIO_OK)
        return st;
    st = npyio_writer_write(w, data, len);
    if (st != NPYIO_OK) {
        npyio_writer_abort(w);
        return st;
    }
    return npyio_writer_close(w);
}

npyio_status npyio_save(const char *path, const npyio_header *header,
                        const void *data, size_t len, uint32_t flags,
                        const npyio_options *options)
{
    return npyio__as_called(save_body(path, header, data, len, flags,
                                      options),
                            "npyio_save");
}

static npyio_status save_array_body(const char *path, const char *type,
                                    int ndim, const int64_t *shape,
                                    const void *data, size_t len,
                                    uint32_t flags,
                                    const npyio_options *options)
{
    static const char where[] = "npyio_save_array";
    npyio_dtype *dt = NULL;
    npyio_header *h = NULL;
    npyio_status st;

    if (type == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: type is NULL", where);
    st = npyio_dtype_from_descr(type, strlen(type), options, &dt);
    /* The elements are a C program's: in this host's byte order. */
    if (st == NPYIO_OK && !npyio_dtype_is_native(dt))
        st = npyio__fail(NPYIO_E_INVALID_ARG, "%s: type \"%s\" is in the "
                         "other byte order than this host's, in which the "
                         "data must be", where, type);
    if (st == NPYIO_OK)
        st = npyio_header_new(dt, ndim, shape, 0, &h);
    npyio_dtype_unref(dt);
    if (st == NPYIO_OK)
        st = npyio_save(path, h, data, len, flags, options);
    npyio_header_free(h);
    return st;
}

npyio_status npyio_save_array(const char *path, const char *type, int ndim,
                              const int64_t *shape, const void *data,
                              size_t len, uint32_t flags,
                              const npyio_options *options)
{
    return npyio__as_called(save_array_body(path, type, ndim, shape, data,
                                            len, flags, options),
                            "npyio_save_array");
}

/* ---- sinks ------------------------------------------------------------------------- */

/* A new array: every promised byte written (or, with an unknown row count,
 * whole rows, counted into the header now), then the result made final:
 * a replacing file of ours committed (renamed over its destination), the
 * caller's stream flushed. */
static npyio_status finish_new_array(npyio_writer *w)
{
    npyio_status st = NPYIO_OK;

    if (w->unknown_rows)
        st = finish_unknown_rows(w);
    else if (!w->objects && w->written != w->expected)
        st = npyio__fail(NPYIO_E_TRUNCATED, "npyio_writer_close: %llu bytes "
                         "of data were written, but the header promises %llu",
                         (unsigned long long)w->written,
                         (unsigned long long)w->expected);
    if (st == NPYIO_OK && w->pending_len > 0)
        st = write_data(w, NULL, 0); /* no data came: a 0-byte array */
    if (st != NPYIO_OK)
        return st;
    return w->owns_stream ? npyio__stream_commit(w->stream, w->durable)
                          : npyio__stream_sync(w->stream, false);
}

/* Rows written in place are positioned writes: nothing to finish but
 * durability. */
static npyio_status finish_in_place(npyio_writer *w)
{
    if (w->durable && npyio__fd_datasync(w->fd) != 0)
        return npyio__with_context(NPYIO_E_IO, "npyio_writer_close");
    return NPYIO_OK;
}

static const writer_sink new_array_sink = {"new array", finish_new_array,
                                           NULL};
static const writer_sink append_sink = {"append", finish_append,
                                        undo_append};
static const writer_sink in_place_sink = {"in place", finish_in_place, NULL};
