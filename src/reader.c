/*
 * reader.c - reading .npy arrays from streams: the header, then the data
 * straight into the caller's buffer, swapped in cache-sized blocks as it
 * arrives; Fortran data that must come out in C order goes through a
 * converter (convert.h) made once per pass, which says what to read (the
 * reader reads it: positioned reads where the stream has them) and
 * reorders it in cache-line tiles. A read that fails midway leaves the
 * reader failed. Part of the array I/O core; knows nothing of zip
 * archives.
 *
 * This file is the handle's life (open, close, the type set) and the
 * whole reads, over reader_parallel.c (whole reads on several threads)
 * and reader_rows.c (the states, the data section, rows and chunks); the
 * handle's layout is in reader_core.h.
 */
#include "cast.h"
#include "convert.h"
#include "descr.h"
#include "error.h"
#include "header_io.h"
#include "options.h"
#include "reader.h"
#include "reader_core.h"
#include "record.h"
#include "stream.h"

#include <string.h>

/* The most bytes of whole rows, in C order, that Fortran data read in C
 * order in small pieces goes through (see reorder_block in
 * reader_core.h): stated in npyio.h at npyio_reader_read_chunk() and
 * npyio_reader_set_type(). */
#define REORDER_BLOCK_BYTES ((size_t)64 << 20)

/* Where the data starts in the stream: known without a call where the
 * stream counts its position (a file opened here, memory), else asked of
 * a seekable stream (a pipe needs none). */
static npyio_status note_data_start(npyio_reader *r)
{
    if (npyio__stream_known_position(r->stream, &r->data_start))
        return NPYIO_OK;
    if (!npyio__reader_seekable(r))
        return NPYIO_OK;
    return npyio__stream_tell(r->stream, &r->data_start);
}

/* ---- opening ------------------------------------------------------------------ */

static npyio_status short_data(size_t got, size_t want);

/*
 * Everything left in the stream, or at most `want` bytes: with `known`, a
 * stream shorter than that is NPYIO_E_TRUNCATED. Memory follows the data
 * that actually arrives (npyio__stream_read_all), for streams whose length
 * cannot be checked first.
 */
static npyio_status read_growing(npyio_reader *r, size_t want, bool known,
                                 const char *what, void **out, size_t *len)
{
    npyio_status st;

    *len = 0;
    if (known && want == 0) /* nothing to read (0 otherwise means all) */
        return npyio__alloc(&r->mem, 0, what, out);
    st = npyio__stream_read_all(r->stream, &r->mem, want, what, out, len);
    if (st == NPYIO_OK && known && *len < want) {
        npyio__free(*out);
        *out = NULL;
        st = short_data(*len, want);
    }
    return st;
}

/* A reader on the caller's stream, or on the file at path (see
 * npyio__stream_acquire); failures about a file name its path. */
static npyio_status reader_close_body(npyio_reader *reader);

static npyio_status open_reader(const char *path, npyio_stream *stream,
                                const npyio_options *options,
                                const char *where, npyio_reader **out)
{
    npyio__mem mem;
    npyio_reader *r;
    npyio_status st;

    npyio__mem_init(&mem, options);
    st = npyio__alloc_zero(&mem, sizeof *r, "reader", (void **)&r);
    if (st != NPYIO_OK)
        return st;
    r->magic = NPYIO__MAGIC_READER;
    r->mem = mem;
    r->thread_limit = npyio__limit(options, NPYIO_LIMIT_THREADS);
    r->block_bytes = REORDER_BLOCK_BYTES;
    st = npyio__stream_acquire(path, stream, false, options, where,
                               &r->stream, &r->owns_stream);
    if (st == NPYIO_OK) {
        st = npyio__header_read(r->stream, options, &r->mem, &r->header);
        if (st == NPYIO_OK)
            st = note_data_start(r);
        if (st == NPYIO_OK)
            st = npyio__header_check_data(r->stream, r->header,
                                          &r->length_checked);
        if (st != NPYIO_OK && path != NULL)
            st = npyio__with_context(st, path);
    }
    if (st != NPYIO_OK) {
        reader_close_body(r); /* closes only a stream of its own */
        return st;
    }
    *out = r;
    return NPYIO_OK;
}

npyio_status npyio__reader_open_on(npyio_stream *stream,
                                   const npyio_options *options,
                                   const char *where, npyio_reader **out)
{
    return open_reader(NULL, stream, options, where, out);
}

void npyio__reader_take_stream(npyio_reader *r)
{
    r->owns_stream = true;
}

static npyio_status reader_open_stream_body(npyio_stream *stream,
                                            const npyio_options *options,
                                            npyio_reader **out)
{
    static const char where[] = "npyio_reader_open_stream";

    if (out == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: out is NULL", where);
    *out = NULL;
    return open_reader(NULL, stream, options, where, out);
}

npyio_status npyio_reader_open_stream(npyio_stream *stream,
                                      const npyio_options *options,
                                      npyio_reader **out)
{
    return npyio__as_called(reader_open_stream_body(stream, options, out),
                            "npyio_reader_open_stream");
}

npyio_status npyio__reader_open_path(const char *path,
                                     const npyio_options *options,
                                     const char *where, npyio_reader **out)
{
    npyio_status st;

    st = npyio__check_opener(out, path, where);
    if (st != NPYIO_OK)
        return st;
    return open_reader(path, NULL, options, where, out);
}

npyio_status npyio_reader_open_path(const char *path,
                                    const npyio_options *options,
                                    npyio_reader **out)
{
    if (out != NULL)
        *out = NULL; /* outputs are cleared whatever is refused */
    return npyio__as_called(npyio__reader_open_path(path, options,
                                                    "npyio_reader_open_path",
                                                    out),
                            "npyio_reader_open_path");
}

const npyio_header *npyio_reader_header(const npyio_reader *reader)
{
    if (reader == NULL || reader->magic != NPYIO__MAGIC_READER)
        return NULL;
    return reader->header;
}

static npyio_status reader_close_body(npyio_reader *reader)
{
    npyio_status st = NPYIO_OK;

    if (reader == NULL || reader->magic != NPYIO__MAGIC_READER)
        return NPYIO_OK;
    npyio__end_chunks(reader);
    npyio__block_close(&reader->rows_block);
    if (reader->owns_stream)
        st = npyio__stream_close(reader->stream);
    npyio_header_free(reader->header);
    reader->magic = NPYIO__MAGIC_DEAD;
    npyio__free(reader);
    return st;
}

npyio_status npyio_reader_close(npyio_reader *reader)
{
    return npyio__as_called(reader_close_body(reader),
                            "npyio_reader_close");
}

void npyio__reader_set_block_bytes(npyio_reader *r, size_t bytes)
{
    r->block_bytes = bytes;
}

/* ---- whole reads ------------------------------------------------------------- */

/* A whole read happens once, and not during a chunked pass. */
static npyio_status check_read(npyio_reader *r, uint32_t flags,
                               const char *where)
{
    npyio_status st = npyio__check_numbers(r, flags, where);

    return st == NPYIO_OK ? npyio__check_state(r, CALL_WHOLE, flags, where)
                          : st;
}

static npyio_status short_data(size_t got, size_t want)
{
    return npyio__fail(NPYIO_E_TRUNCATED, "the data section ends after %zu "
                       "bytes, but the header promises %zu", got, want);
}

/* Read straight into dst; swap each block while it is in cache. */
static npyio_status read_in_place(npyio_reader *r, const npyio__converter *c,
                                  size_t nbytes, unsigned char *dst)
{
    size_t done = 0, step, got = 0;
    npyio_status st;

    if (c->plan.count == 0) { /* no conversion: one request, no copies */
        st = npyio__stream_read_room(r->stream, dst, nbytes, r->room, &got,
                                     "array data");
        r->data_pos += got;
        return st != NPYIO_OK || got == nbytes ? st : short_data(got, nbytes);
    }
    step = npyio__block_bytes(c->itemsize);
    while (done < nbytes) {
        size_t want = nbytes - done < step ? nbytes - done : step;

        st = npyio__stream_read(r->stream, dst + done, want, &got,
                                "array data");
        r->data_pos += got;
        if (st != NPYIO_OK)
            return st;
        if (got < want)
            return short_data(done + got, nbytes);
        npyio__converter_swap(c, dst + done, want);
        done += want;
    }
    return NPYIO_OK;
}

/* The bytes reads deliver for `elements` elements: of the type set, or as
 * stored. */
static npyio_status delivered_bytes(const npyio_reader *r, uint64_t elements,
                                    const char *where, size_t *out)
{
    size_t size = r->casting ? r->cast.to.size : r->header->dtype->itemsize;

    *out = 0;
    if (size != 0 && elements > SIZE_MAX / size)
        return npyio__fail(NPYIO_E_OVERFLOW, "%s: %llu elements of %zu "
                           "bytes are more than this host's address space",
                           where, (unsigned long long)elements, size);
    *out = (size_t)(elements * size);
    return NPYIO_OK;
}

/* The whole array, converted, into dst. */
static npyio_status read_cast_whole(npyio_reader *r, uint32_t flags,
                                    void *dst)
{
    bool reorder = npyio__reorders(r, flags), parallel = false;
    uint64_t all = reorder ? (uint64_t)r->header->shape[0] : 0;
    uint64_t rows = npyio__block_rows(r, all, 1);
    reorder_block block;
    npyio__converter c;
    npyio_status st = npyio__seek_data(r, 0); /* refused if a pipe moved on */

    if (st == NPYIO_OK && reorder && !npyio__reader_seekable(r))
        st = npyio__refuse_pipe_reorder("reading with a type");
    if (st == NPYIO_OK)
        st = npyio__make_converter(r, flags, reorder,
                                   rows != 0 ? rows : npyio__cast_band_rows(r),
                                   &c);
    if (st != NPYIO_OK)
        return st;
    npyio__enter_state(r, CALL_WHOLE, flags);
    st = npyio__read_parallel(r, flags, &c, dst, &parallel);
    if (st == NPYIO_OK && !parallel) {
        npyio__block_open(r, rows, all, &block);
        st = npyio__read_cast(r, &c, reorder, 0,
                              npyio__element_count(r->header), dst, &block);
        npyio__block_close(&block);
    }
    npyio__converter_free(&c);
    if (st == NPYIO_OK)
        st = npyio__stream_finish(r->stream);
    return npyio__fail_reader(r, st);
}

/* A block of the file's type read whole (from a pipe), converted into a
 * new block that replaces it. */
static npyio_status cast_block(npyio_reader *r, void **block)
{
    uint64_t n = npyio__element_count(r->header);
    void *out = NULL;
    npyio_status st = npyio__alloc(&r->mem, (size_t)n * r->cast.to.size,
                                   "array data", &out);

    if (st == NPYIO_OK)
        st = npyio__cast_apply(&r->cast, *block, out, (size_t)n, 0);
    if (st != NPYIO_OK) {
        npyio__free(out);
        return st;
    }
    npyio__free(*block);
    *block = out;
    return NPYIO_OK;
}

/* The whole data into dst: in place, or reordered in one band of all the
 * rows (the converter reads long columns in runs and short ones in
 * spans; on a pipe, in file order). */
static npyio_status read_converted(npyio_reader *r, uint32_t flags, void *dst)
{
    const npyio_header *h = r->header;
    bool reorder = npyio__reorders(r, flags), parallel = false;
    npyio__converter c;
    npyio_status st;

    if (r->casting)
        return read_cast_whole(r, flags, dst);
    st = npyio__seek_data(r, 0); /* refused if a pipe moved on */
    if (st == NPYIO_OK)
        st = npyio__make_converter(r, flags, reorder, 0, &c);
    if (st != NPYIO_OK)
        return st;
    npyio__enter_state(r, CALL_WHOLE, flags); /* whatever happens, the stream
                                          moves on */
    st = npyio__read_parallel(r, flags, &c, dst, &parallel);
    if (st == NPYIO_OK && !parallel)
        st = reorder ? npyio__read_band(r, &c, 0, (uint64_t)h->shape[0], dst)
                     : read_in_place(r, &c, (size_t)h->nbytes, dst);
    npyio__converter_free(&c);
    if (st == NPYIO_OK)
        st = npyio__stream_finish(r->stream);
    return npyio__fail_reader(r, st);
}

static npyio_status reader_read_body(npyio_reader *reader, void *dst, size_t cap,
                                     uint32_t flags)
{
    static const char where[] = "npyio_reader_read";
    size_t need = 0;
    npyio_status st = check_read(reader, flags, where);

    if (st == NPYIO_OK)
        st = delivered_bytes(reader, npyio__element_count(reader->header),
                             where, &need);
    if (st != NPYIO_OK)
        return st;
    if (cap < need)
        return npyio__fail(NPYIO_E_BUFFER_TOO_SMALL, "%s: the data is %zu "
                           "bytes, the buffer %zu", where, need, cap);
    if (dst == NULL && need > 0)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: dst is NULL", where);
    return read_converted(reader, flags, dst);
}

npyio_status npyio_reader_read(npyio_reader *reader, void *dst, size_t cap,
                               uint32_t flags)
{
    return npyio__as_called(reader_read_body(reader, dst, cap, flags),
                            "npyio_reader_read");
}

/* A pipe: the data grows in memory as it arrives (it might end early),
 * then is swapped in place and, for C order, placed in a second block:
 * the one case that needs two. */
static npyio_status read_alloc_unseekable(npyio_reader *r, uint32_t flags,
                                          size_t nbytes, void **out)
{
    void *raw = NULL, *block = NULL;
    size_t got = 0;
    npyio__converter c;
    npyio_status st = npyio__seek_data(r, 0); /* refused if chunks moved on */

    if (st == NPYIO_OK)
        st = npyio__make_converter(r, flags, false, 0, &c);
    if (st != NPYIO_OK)
        return st;
    npyio__enter_state(r, CALL_WHOLE, flags);
    st = npyio__fail_reader(
        r, read_growing(r, nbytes, true, "array data", &raw, &got));
    r->data_pos += got;
    if (st == NPYIO_OK) {
        npyio__converter_swap(&c, raw, nbytes);
        if (npyio__reorders(r, flags)) {
            st = npyio__alloc(&r->mem, nbytes, "array data", &block);
            if (st == NPYIO_OK)
                npyio__converter_place_all(&c, raw, block);
            npyio__free(raw);
        } else {
            block = raw;
        }
        raw = NULL;
    }
    if (st == NPYIO_OK && r->casting)
        st = npyio__fail_reader(r, cast_block(r, &block));
    npyio__free(raw);
    npyio__converter_free(&c);
    *out = block;
    return st;
}

/* A new block of nbytes read whole. Where the stream asks for room
 * before the destination (npyio__stream_room: an archive member inflated
 * in one call writes its bytes from its first, the .npy header before
 * the data), the block is larger by that much, the data read after the
 * room and moved to the block's start: one move of memory already
 * touched, instead of the stream's scratch block of the whole member. */
static npyio_status read_alloc_whole(npyio_reader *r, uint32_t flags,
                                     size_t nbytes, void **out)
{
    size_t room = npyio__stream_room(r->stream, nbytes), total = 0;
    unsigned char *block = NULL;
    npyio_status st;

    if (!npyio__add_size(nbytes, room, &total)) {
        room = 0;
        total = nbytes;
    }
    st = npyio__alloc(&r->mem, total, "array data", (void **)&block);
    if (st != NPYIO_OK)
        return st;
    r->room = room;
    st = read_converted(r, flags, block + room);
    r->room = 0;
    if (st == NPYIO_OK && room > 0)
        memmove(block, block + room, nbytes);
    *out = block;
    return st;
}

static npyio_status reader_read_alloc_body(npyio_reader *reader, uint32_t flags,
                                           void **data, size_t *len,
                                           const char *where)
{
    void *block = NULL;
    size_t nbytes;
    npyio_status st;

    if (len != NULL)
        *len = 0;
    if (data == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: data is NULL", where);
    *data = NULL;
    st = check_read(reader, flags, where);
    if (st != NPYIO_OK)
        return st;
    st = delivered_bytes(reader, npyio__element_count(reader->header), where,
                         &nbytes);
    if (st != NPYIO_OK)
        return st;
    if (reader->length_checked) { /* checked when it was opened */
        st = read_alloc_whole(reader, flags, nbytes, &block);
    } else {
        st = read_alloc_unseekable(reader, flags,
                                   (size_t)reader->header->nbytes, &block);
    }
    if (st != NPYIO_OK) {
        npyio__free(block);
        return st;
    }
    *data = block;
    if (len != NULL)
        *len = nbytes;
    return NPYIO_OK;
}

npyio_status npyio_reader_read_alloc(npyio_reader *reader, uint32_t flags,
                                     void **data, size_t *len)
{
    return npyio__as_called(reader_read_alloc_body(reader, flags, data, len,
                                                   "npyio_reader_read_alloc"),
                            "npyio_reader_read_alloc");
}

static npyio_status reader_read_pickle_body(npyio_reader *reader, void **bytes,
                                            size_t *len)
{
    static const char where[] = "npyio_reader_read_pickle";
    size_t got = 0;
    npyio_status st;

    if (bytes == NULL || len == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: %s is NULL", where,
                           bytes == NULL ? "bytes" : "len");
    *bytes = NULL;
    *len = 0;
    st = npyio__check_reader(reader, where);
    if (st != NPYIO_OK)
        return st;
    if (reader->sticky.failed != NPYIO_OK)
        return npyio__repeat_failure(reader, where);
    if (!npyio_dtype_has_objects(reader->header->dtype))
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: the array holds no "
                           "Python objects; its data is not a pickle",
                           where);
    st = npyio__check_state(reader, CALL_WHOLE, 0, where);
    if (st != NPYIO_OK)
        return st;
    npyio__enter_state(reader, CALL_WHOLE, 0);
    st = npyio__fail_reader(
        reader, read_growing(reader, 0, false, "pickle", bytes, &got));
    if (st == NPYIO_OK)
        *len = got;
    return st;
}

npyio_status npyio_reader_read_pickle(npyio_reader *reader, void **bytes,
                                      size_t *len)
{
    if (bytes != NULL)
        *bytes = NULL; /* outputs are cleared whatever is refused */
    if (len != NULL)
        *len = 0;
    return npyio__as_called(reader_read_pickle_body(reader, bytes, len),
                            "npyio_reader_read_pickle");
}

/* ---- one call ------------------------------------------------------------------------ */

npyio_status npyio__reader_load(npyio_reader *r, uint32_t flags,
                                const char *context, npyio_header **header,
                                void **data)
{
    npyio_status st, closed;

    *header = NULL;
    /* Its own checks name the context, as the public call's name it. */
    st = npyio__with_context(reader_read_alloc_body(r, flags, data, NULL,
                                                    context),
                             context);
    /* The header handed back describes the bytes handed back: converted
     * ones too, so that saving them with it writes the same array. */
    if (st == NPYIO_OK && flags != 0)
        st = npyio__with_context(npyio__header_as_read(&r->mem, r->header,
                                                       flags, context, header),
                                 context);
    else if (st == NPYIO_OK) {
        *header = r->header; /* hand the file's header over */
        r->header = NULL;
    }
    if (st != NPYIO_OK) {
        npyio__free(*data);
        *data = NULL;
    }
    closed = reader_close_body(r);
    if (st == NPYIO_OK && closed != NPYIO_OK) {
        npyio_header_free(*header);
        npyio__free(*data);
        *header = NULL;
        *data = NULL;
        st = closed;
    }
    return st;
}

/* The type of a loaded array as npyio_load() names it: dtype.str,
 * or the descr list of a record (whose str, "|V12", would lose it). */
npyio_status npyio__type_text(const npyio_dtype *dt, char *type,
                              size_t type_cap, const char *where)
{
    size_t need = 0;
    npyio_kind kind = npyio_dtype_kind(dt);
    npyio_status st = npyio__dtype_text(dt, kind == NPYIO_KIND_RECORD ||
                                                kind == NPYIO_KIND_SUBARRAY,
                                        type, type_cap, &need, where);

    if (st == NPYIO_E_BUFFER_TOO_SMALL)
        return npyio__fail(st, "%s: the type needs %zu bytes (NUL "
                           "included), type_cap is %zu", where, need + 1,
                           type_cap);
    return st;
}

/* ---- reading with a type: the calls ----------------------------------------------- */

static npyio_status reader_set_type_body(npyio_reader *r, const char *type,
                                         uint32_t flags)
{
    static const char where[] = "npyio_reader_set_type";
    npyio_dtype *dt = NULL;
    npyio__cast_plan plan;
    npyio_status st = npyio__check_call(
        r, flags, NPYIO_READ_CAST_SAME_KIND | NPYIO_READ_CAST_UNSAFE, where);

    if (st != NPYIO_OK)
        return st;
    if (r->state != READER_FRESH)
        return npyio__fail(NPYIO_E_STATE, "%s: the type is set before the "
                           "first read, and this reader has read", where);
    if (type == NULL) {
        r->casting = false;
        return NPYIO_OK;
    }
    st = npyio__dtype_from_str(type, strlen(type), SIZE_MAX, &r->mem, &dt);
    if (st == NPYIO_OK)
        st = npyio__cast_plan_make(r->header->dtype, dt,
                                   npyio__cast_rule(flags), &r->mem, &plan);
    npyio_dtype_unref(dt);
    if (st != NPYIO_OK)
        return st;
    r->cast = plan;
    r->casting = true;
    return NPYIO_OK;
}

npyio_status npyio_reader_set_type(npyio_reader *reader, const char *type,
                                   uint32_t flags)
{
    return npyio__as_called(reader_set_type_body(reader, type, flags),
                            "npyio_reader_set_type");
}

/* The type of the data a load hands back: the type set, or the file's in
 * native order (dtype.str, a record's descr list). */
static npyio_status reader_type_text(const npyio_reader *r, char *type,
                                     size_t type_cap, const char *where)
{
    npyio_dtype *native = NULL;
    npyio_status st;

    if (r->casting) {
        size_t need = strlen(r->cast.to.name) + 1;

        if (need > type_cap)
            return npyio__fail(NPYIO_E_BUFFER_TOO_SMALL, "%s: the type needs "
                               "%zu bytes (NUL included), type_cap is %zu",
                               where, need, type_cap);
        memcpy(type, r->cast.to.name, need);
        return NPYIO_OK;
    }
    st = npyio__dtype_new_native(r->header->dtype, where, &native);
    if (st == NPYIO_OK)
        st = npyio__type_text(native, type, type_cap, where);
    npyio_dtype_unref(native);
    return st;
}

npyio_status npyio__reader_load_as(npyio_reader *r, const char *type,
                                   uint32_t flags, const char *context,
                                   const char *where, void **data,
                                   size_t *len, char *type_out,
                                   size_t type_cap, int *ndim,
                                   int64_t *shape, size_t shape_cap)
{
    int nd = r->header->ndim;
    npyio_status st = NPYIO_OK, closed;

    if (nd > 0 && (size_t)nd > shape_cap)
        st = npyio__fail(NPYIO_E_BUFFER_TOO_SMALL, "%s: the array has %d "
                         "dimensions, shape_cap is %zu", where, nd,
                         shape_cap);
    if (st == NPYIO_OK)
        st = npyio__with_context(reader_set_type_body(r, type, flags),
                                 context);
    if (st == NPYIO_OK && type_out != NULL)
        st = reader_type_text(r, type_out, type_cap, where);
    if (st == NPYIO_OK)
        st = npyio__with_context(
            reader_read_alloc_body(r, NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER,
                                   data, len, context),
            context);
    if (st == NPYIO_OK && nd > 0)
        memcpy(shape, r->header->shape, (size_t)nd * sizeof *shape);
    closed = reader_close_body(r);
    if (st == NPYIO_OK)
        st = closed;
    if (st != NPYIO_OK) {
        npyio__free(*data);
        *data = NULL;
        *len = 0;
    } else {
        *ndim = nd;
    }
    return st;
}

npyio_status npyio__check_load_outputs(void **data, size_t *len, int *ndim,
                                       int64_t *shape, size_t shape_cap,
                                       const char *where)
{
    if (data == NULL || len == NULL || ndim == NULL ||
        (shape == NULL && shape_cap > 0))
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: %s is NULL", where,
                           data == NULL  ? "data"
                           : len == NULL ? "len"
                           : ndim == NULL ? "ndim"
                                          : "shape");
    *data = NULL;
    *len = 0;
    *ndim = 0;
    return NPYIO_OK;
}
