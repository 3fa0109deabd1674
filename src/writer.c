/*
 * writer.c - writing .npy arrays: the header as np.save writes it, then
 * the caller's data in any number of calls, with the byte count checked on
 * close; to a path through an atomically replaced temporary file. Part of
 * the array I/O core; knows nothing of zip archives.
 */
#include "header.h"
#include "platform.h"
#include "stream.h"

#include <string.h>

#define NPYIO__MAGIC_WRITER 0x57525452u /* "WRTR" */

struct npyio_writer {
    uint32_t magic;
    npyio_stream *stream;
    bool to_path;          /* stream and temporary file are ours */
    npyio__atomic file;    /* with to_path */
    bool durable;
    bool objects;          /* a pickle: no byte count applies */
    uint64_t expected;     /* nbytes from the header */
    uint64_t written;
    npyio_status failed;   /* the first error, repeated afterwards */
    char first_error[NPYIO__MESSAGE_CAP];
    npyio__mem mem;
};

static npyio_status check_writer(const npyio_writer *w, const char *where)
{
    if (w == NULL || w->magic != NPYIO__MAGIC_WRITER)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: %s", where,
                           w == NULL ? "writer is NULL"
                                     : "the pointer given as a writer is not "
                                       "an npyio_writer (or was closed)");
    return NPYIO_OK;
}

/* A writer that failed stays failed: remember the first error. */
static npyio_status fail_writer(npyio_writer *w, npyio_status st)
{
    if (st != NPYIO_OK && w->failed == NPYIO_OK) {
        w->failed = st;
        snprintf(w->first_error, sizeof w->first_error, "%s",
                 npyio_last_error());
    }
    return st;
}

static npyio_status repeat_failure(const npyio_writer *w, const char *where)
{
    return npyio__fail(NPYIO_E_STATE, "%s: the writer failed earlier (%s: "
                       "%s)", where, npyio_status_string(w->failed),
                       w->first_error);
}

/* Emit the header into a buffer and write it. */
static npyio_status write_header(npyio_writer *w, const npyio_header *h)
{
    unsigned char small[512];
    unsigned char *bytes = small;
    size_t len = 0;
    npyio_status st = npyio_header_emit(h, 0, small, sizeof small, &len);

    if (st == NPYIO_E_BUFFER_TOO_SMALL) {
        st = npyio__alloc(&w->mem, len, "header", (void **)&bytes);
        if (st == NPYIO_OK)
            st = npyio_header_emit(h, 0, bytes, len, &len);
    }
    if (st == NPYIO_OK)
        st = npyio__stream_write(w->stream, bytes, len, "the header");
    if (bytes != small)
        npyio__free(bytes);
    return st;
}

static npyio_status new_writer(const npyio_header *h,
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
    w->durable = npyio__flag(options, NPYIO_FLAG_DURABLE);
    w->objects = npyio_dtype_contains_objects(h->dtype) != 0;
    w->expected = (uint64_t)h->nbytes;
    w->file.fd = -1;
    *out = w;
    return NPYIO_OK;
}

static void release(npyio_writer *w)
{
    if (w->to_path) {
        npyio_stream_close(w->stream);
        npyio__atomic_abandon(&w->file); /* removes the temporary, if any */
    }
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

npyio_status npyio_writer_open_stream(npyio_stream *stream,
                                      const npyio_header *header,
                                      const npyio_options *options,
                                      npyio_writer **out)
{
    static const char where[] = "npyio_writer_open_stream";
    npyio_writer *w;
    npyio_status st = check_open_args(header, out, where);

    if (st == NPYIO_OK)
        st = npyio__check_stream(stream, where);
    if (st == NPYIO_OK)
        st = new_writer(header, options, &w);
    if (st != NPYIO_OK)
        return st;
    w->stream = stream;
    st = write_header(w, header);
    if (st != NPYIO_OK) {
        release(w);
        return st;
    }
    *out = w;
    return NPYIO_OK;
}

npyio_status npyio_writer_open_path(const char *path,
                                    const npyio_header *header,
                                    const npyio_options *options,
                                    npyio_writer **out)
{
    static const char where[] = "npyio_writer_open_path";
    npyio_writer *w;
    npyio_status st = check_open_args(header, out, where);

    if (st == NPYIO_OK && path == NULL)
        st = npyio__fail(NPYIO_E_INVALID_ARG, "%s: path is NULL", where);
    if (st == NPYIO_OK)
        st = new_writer(header, options, &w);
    if (st != NPYIO_OK)
        return st;
    st = npyio__atomic_open(path, &w->mem, &w->file);
    if (st == NPYIO_OK) {
        w->to_path = true;
        st = npyio_stream_open_fd(w->file.fd, options, &w->stream);
    }
    if (st == NPYIO_OK)
        st = write_header(w, header);
    if (st != NPYIO_OK) {
        release(w);
        return st;
    }
    *out = w;
    return NPYIO_OK;
}

npyio_status npyio_writer_write(npyio_writer *writer, const void *data,
                                size_t len)
{
    static const char where[] = "npyio_writer_write";
    npyio_writer *w = writer;
    npyio_status st = check_writer(w, where);

    if (st != NPYIO_OK)
        return st;
    if (w->failed != NPYIO_OK)
        return repeat_failure(w, where);
    if (data == NULL && len > 0)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: data is NULL", where);
    if (!w->objects && len > w->expected - w->written)
        return fail_writer(w, npyio__fail(NPYIO_E_INVALID_ARG,
                                          "%s: %llu more bytes would make "
                                          "%llu, but the header promises "
                                          "%llu", where,
                                          (unsigned long long)len,
                                          (unsigned long long)(w->written +
                                                               len),
                                          (unsigned long long)w->expected));
    st = npyio__stream_write(w->stream, data, len, "array data");
    if (st != NPYIO_OK)
        return fail_writer(w, st);
    w->written += len;
    return NPYIO_OK;
}

npyio_status npyio_writer_close(npyio_writer *writer)
{
    static const char where[] = "npyio_writer_close";
    npyio_writer *w = writer;
    npyio_status st = check_writer(w, where);

    if (st != NPYIO_OK)
        return st;
    if (w->failed != NPYIO_OK)
        st = repeat_failure(w, where);
    else if (!w->objects && w->written != w->expected)
        st = npyio__fail(NPYIO_E_TRUNCATED, "%s: %llu bytes of data were "
                         "written, but the header promises %llu", where,
                         (unsigned long long)w->written,
                         (unsigned long long)w->expected);
    else if (!w->to_path)
        st = npyio__stream_sync(w->stream, false);
    else {
        /* The stream only borrows the descriptor; the commit syncs,
         * closes and renames it. */
        npyio_stream_close(w->stream);
        w->stream = NULL;
        w->to_path = false;
        st = npyio__atomic_commit(&w->file, w->durable);
    }
    if (st != NPYIO_OK && w->to_path) {
        npyio_stream_close(w->stream);
        w->stream = NULL;
    }
    release(w);
    return st;
}

void npyio_writer_abort(npyio_writer *writer)
{
    if (writer == NULL || writer->magic != NPYIO__MAGIC_WRITER)
        return;
    release(writer);
}

npyio_status npyio_save(const char *path, const npyio_header *header,
                        const void *data, const npyio_options *options)
{
    npyio_writer *w = NULL;
    npyio_status st;

    if (header != NULL && header->magic == NPYIO__MAGIC_HEADER &&
        npyio_dtype_contains_objects(header->dtype))
        return npyio__fail(NPYIO_E_INVALID_ARG, "npyio_save: the array holds "
                           "Python objects; write its pickle with "
                           "npyio_writer_write");
    if (header != NULL && header->magic == NPYIO__MAGIC_HEADER &&
        (uint64_t)header->nbytes > SIZE_MAX)
        return npyio__fail(NPYIO_E_OVERFLOW, "npyio_save: the data is larger "
                           "than this host's address space");
    st = npyio_writer_open_path(path, header, options, &w);
    if (st != NPYIO_OK)
        return st;
    st = npyio_writer_write(w, data, (size_t)header->nbytes);
    if (st != NPYIO_OK) {
        npyio_writer_abort(w);
        return st;
    }
    return npyio_writer_close(w);
}
