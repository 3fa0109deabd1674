/*
 * reader.c - reading .npy arrays from streams: the header, then the data
 * straight into the caller's buffer, swapped in cache-sized blocks as it
 * arrives; Fortran data that must come out in C order goes through a
 * converter (convert.h) made once per pass, which says what to read (the
 * reader reads it: positioned reads where the stream has them) and
 * reorders it in cache-line tiles. A read that fails midway leaves the
 * reader failed. Part of the array I/O core; knows nothing of zip
 * archives.
 */
#include "cast.h"
#include "convert.h"
#include "descr.h"
#include "error.h"
#include "header_io.h"
#include "options.h"
#include "reader.h"
#include "stream.h"
#include "threads.h"

#include <stdio.h>
#include <string.h>

#define NPYIO__MAGIC_READER 0x52454144u /* "READ" */

/* Bytes moved per block when converting: large enough to amortise the
 * calls, small enough to stay in cache while it is converted. */
#define BLOCK_BYTES ((size_t)1 << 20)

/* The most bytes of whole rows, in C order, that Fortran data read in C
 * order in small pieces goes through (see reorder_block): stated in
 * npyio.h at npyio_reader_read_chunk() and npyio_reader_set_type(). */
#define REORDER_BLOCK_BYTES ((size_t)64 << 20)

/*
 * Fortran data read in C order a piece at a time (chunks smaller than the
 * block, conversions a cache-sized block at a time) goes through one
 * block of whole rows reordered once: every column run of the file is
 * then read once per block, whatever the size of the pieces, instead of
 * once per piece (a 64 KiB chunk of a 5000 x 5000 array touches 2 rows:
 * 5000 reads of 16 bytes). Rows larger than the block are read piece by
 * piece, as they come.
 */
typedef struct reorder_block {
    bool opened;           /* asked for (it may have none: rows 0) */
    unsigned char *data;
    uint64_t rows;         /* rows it holds at most (0: no block) */
    uint64_t end_row;      /* fills stop before this row */
    uint64_t first, count; /* elements held, in C order */
} reorder_block;

/*
 * Where a reader is in reading its data. The whole read (or the pickle)
 * and the chunked pass are two ways to read the data once: each excludes
 * the other once begun. Rows are read by position, at any time. Every
 * read call consults check_state() before it starts and moves the state
 * when it does; a failure (the sticky error) overrides every state:
 * later reads repeat it.
 */
typedef enum reader_state {
    READER_FRESH,  /* nothing read yet */
    READER_ROWS,   /* rows read by position: the data is still to read */
    READER_CHUNKS, /* a chunked pass begun (with its flags), or ended */
    READER_DONE    /* the data read whole, or its pickle */
} reader_state;

typedef enum read_call { CALL_WHOLE, CALL_CHUNK, CALL_ROWS } read_call;

struct npyio_reader {
    uint32_t magic;
    npyio_stream *stream;
    bool owns_stream; /* opened from a path */
    reader_state state;
    uint32_t pass_flags; /* the chunked pass's flags, in READER_CHUNKS */
    npyio_header *header;
    npyio__mem mem;
    int64_t data_start; /* stream position of the data (seekable) */
    bool length_checked; /* the data section is known to be whole */
    uint64_t data_pos;  /* bytes of the data section consumed so far */
    uint64_t chunk_pos; /* read_chunk's cursor: bytes, or elements
                           reordered */
    /* The chunked pass's converter, made once per pass. */
    bool chunking;
    npyio__converter chunks;
    reorder_block chunk_block; /* its block, if it uses one */
    size_t block_bytes;        /* REORDER_BLOCK_BYTES (tests: less) */
    /* Rows read in sequence: the block (filled with rows_flags), and
     * the row after the last request (see read_rows_blocked). */
    reorder_block rows_block;
    uint32_t rows_flags;
    uint64_t rows_next;
    /* A failed read: the first failure, repeated by later reads. */
    npyio__sticky sticky;
    /* npyio_reader_set_type(): every read delivers elements converted
     * by this plan (its target's itemsize, byte order). */
    bool casting;
    npyio__cast_plan cast;
    /* NPYIO_LIMIT_THREADS: whole reads from positioned streams are cut
     * into parts read and converted on up to this many threads. */
    unsigned threads;
};

/*
 * Whether the stream can seek and read at positions, asked the first time
 * a read needs to know: a small file read whole never does, and a file
 * opened here is then not even asked what it is (see stream_fd.c).
 */
static bool reader_seekable(npyio_reader *r)
{
    return npyio__stream_seekable(r->stream);
}

/* Seekable, with positioned reads (pread). */
static bool reader_positioned(npyio_reader *r)
{
    return reader_seekable(r) && npyio__stream_has_pread(r->stream);
}

/* Where the data starts in the stream: known without a call where the
 * stream counts its position (a file opened here, memory), else asked of
 * a seekable stream (a pipe needs none). */
static npyio_status note_data_start(npyio_reader *r)
{
    if (npyio__stream_known_position(r->stream, &r->data_start))
        return NPYIO_OK;
    if (!reader_seekable(r))
        return NPYIO_OK;
    return npyio__stream_tell(r->stream, &r->data_start);
}

static void block_close(reorder_block *b);

/* The end of a chunked pass (or of the reader): its converter and block
 * go. */
static void end_chunks(npyio_reader *r)
{
    if (r->chunking)
        npyio__converter_free(&r->chunks);
    r->chunking = false;
    block_close(&r->chunk_block);
}

static npyio_status check_reader(const npyio_reader *r, const char *where)
{
    if (r == NULL || r->magic != NPYIO__MAGIC_READER)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: %s", where,
                           r == NULL ? "reader is NULL"
                                     : "the pointer given as a reader is not "
                                       "a live npyio_reader");
    return NPYIO_OK;
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
    r->threads = npyio__thread_limit(options);
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
        npyio_reader_close(r); /* closes only a stream of its own */
        return st;
    }
    *out = r;
    return NPYIO_OK;
}

npyio_status npyio__reader_adopt(npyio_stream *stream,
                                 const npyio_options *options,
                                 const char *where, npyio_reader **out)
{
    npyio_status st = open_reader(NULL, stream, options, where, out);

    if (st != NPYIO_OK) {
        npyio_stream_close(stream);
        return st;
    }
    (*out)->owns_stream = true;
    return NPYIO_OK;
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

static npyio_status reader_open_path_body(const char *path,
                                          const npyio_options *options,
                                          npyio_reader **out)
{
    static const char where[] = "npyio_reader_open_path";
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
    return npyio__as_called(reader_open_path_body(path, options, out),
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
    end_chunks(reader);
    block_close(&reader->rows_block);
    if (reader->owns_stream)
        st = npyio_stream_close(reader->stream);
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

/* ---- reading the data ------------------------------------------------------------ */

/*
 * Move to `offset` bytes into the data section: by seeking, or on a stream
 * that cannot seek, forward by reading and dropping (back is refused).
 */
static npyio_status seek_data(npyio_reader *r, uint64_t offset)
{
    unsigned char scratch[65536];

    if (offset == r->data_pos)
        return NPYIO_OK;
    if (reader_seekable(r)) {
        npyio_status st;

        if (offset > (uint64_t)(INT64_MAX - r->data_start))
            return npyio__fail(NPYIO_E_OVERFLOW, "data offset %llu is out "
                               "of range", (unsigned long long)offset);
        st = npyio__stream_seek(r->stream, r->data_start + (int64_t)offset,
                                NPYIO_SEEK_SET, NULL);
        if (st == NPYIO_OK)
            r->data_pos = offset;
        return st;
    }
    if (offset < r->data_pos)
        return npyio__fail(NPYIO_E_UNSUPPORTED, "the stream cannot seek, "
                           "and byte %llu of the data is behind its "
                           "position (%llu)", (unsigned long long)offset,
                           (unsigned long long)r->data_pos);
    while (r->data_pos < offset) {
        uint64_t left = offset - r->data_pos;
        size_t want = left < sizeof scratch ? (size_t)left : sizeof scratch;
        size_t got;
        npyio_status st = npyio__stream_read(r->stream, scratch, want, &got,
                                             "array data");

        if (st != NPYIO_OK)
            return st;
        r->data_pos += got;
        if (got < want)
            return npyio__fail(NPYIO_E_TRUNCATED, "the data section ends "
                               "after %llu bytes, but the header promises "
                               "%lld", (unsigned long long)r->data_pos,
                               (long long)r->header->nbytes);
    }
    return NPYIO_OK;
}

/* Read len bytes of data at the current position; short is truncated. */
static npyio_status read_data(npyio_reader *r, void *buf, size_t len)
{
    size_t got = 0;
    npyio_status st = npyio__stream_read(r->stream, buf, len, &got,
                                         "array data");

    r->data_pos += got;
    if (st == NPYIO_OK && got < len)
        st = npyio__fail(NPYIO_E_TRUNCATED, "the data section ends after "
                         "%llu bytes, but the header promises %lld",
                         (unsigned long long)r->data_pos,
                         (long long)r->header->nbytes);
    return st;
}

/* ---- failures -------------------------------------------------------------------- */

/*
 * A read that failed after it began to move the stream leaves the reader
 * failed: the stream's position and the cursors are no longer known, so
 * every later read repeats the first error (NPYIO_E_STATE naming it), as
 * a failed writer does. Refusals made before any byte moved (bad
 * arguments, going back on a pipe) leave the reader as it was.
 */
static npyio_status fail_reader(npyio_reader *r, npyio_status st)
{
    return npyio__sticky_fail(&r->sticky, st);
}

static npyio_status repeat_failure(const npyio_reader *r, const char *where)
{
    return npyio__sticky_repeat(&r->sticky, where, "reader");
}

/* ---- conversions ---------------------------------------------------------------- */

/* A live reader that has not failed, and no flags but `allowed`. */
static npyio_status check_call(npyio_reader *r, uint32_t flags,
                               uint32_t allowed, const char *where)
{
    npyio_status st = check_reader(r, where);

    if (st == NPYIO_OK)
        st = npyio__check_flags(flags, allowed, where);
    if (st != NPYIO_OK)
        return st;
    if (r->sticky.failed != NPYIO_OK)
        return repeat_failure(r, where);
    return NPYIO_OK;
}

/* Checks common to every read of numbers (whole, chunks, rows). */
static npyio_status check_numbers(npyio_reader *r, uint32_t flags,
                                  const char *where)
{
    npyio_status st = check_call(r, flags,
                                 NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER,
                                 where);

    if (st != NPYIO_OK)
        return st;
    if (npyio_dtype_has_objects(r->header->dtype))
        return npyio__fail(NPYIO_E_UNSUPPORTED, "%s: the array holds Python "
                           "objects, stored as a pickle, which libnpyio "
                           "never unpickles (npyio_reader_read_pickle gives "
                           "the raw bytes)", where);
    if ((uint64_t)r->header->nbytes > SIZE_MAX)
        return npyio__fail(NPYIO_E_OVERFLOW, "%s: the data is %lld bytes, "
                           "more than this host's address space", where,
                           (long long)r->header->nbytes);
    return NPYIO_OK;
}

/* Why `call` is refused in each state; NULL where it may go on. */
static const char *const refusals[4][3] = {
    [READER_FRESH] = {NULL, NULL, NULL},
    [READER_ROWS] = {NULL, NULL, NULL},
    [READER_CHUNKS] = {"a chunked pass has begun (npyio_reader_read_chunk)",
                       NULL, NULL},
    [READER_DONE] = {"the data was already read",
                     "the data was already read whole", NULL},
};

/* May `call` go on in the reader's state (a chunk: with the pass's
 * flags)? NPYIO_E_STATE, saying why, if not. */
static npyio_status check_state(const npyio_reader *r, read_call call,
                                uint32_t flags, const char *where)
{
    const char *why = refusals[r->state][call];

    if (why != NULL)
        return npyio__fail(NPYIO_E_STATE, "%s: %s", where, why);
    if (call == CALL_CHUNK && r->state == READER_CHUNKS &&
        flags != r->pass_flags)
        return npyio__fail(NPYIO_E_STATE, "%s: flags 0x%x differ from the "
                           "chunked pass's 0x%x (they must stay the same "
                           "for every chunk of one pass)", where,
                           (unsigned)flags, (unsigned)r->pass_flags);
    return NPYIO_OK;
}

/* The state a call moves the reader to (whatever its outcome: the stream
 * has moved on). */
static void enter_state(npyio_reader *r, read_call call, uint32_t flags)
{
    if (call == CALL_WHOLE) {
        r->state = READER_DONE;
    } else if (call == CALL_CHUNK) {
        r->state = READER_CHUNKS;
        r->pass_flags = flags;
    } else if (r->state == READER_FRESH) {
        r->state = READER_ROWS;
    }
}

/* A chunked pass that has delivered everything: its converter goes, the
 * stream is checked to end there, and NPYIO_END (or the failure). */
static npyio_status end_of_pass(npyio_reader *r, uint32_t flags)
{
    npyio_status st;

    enter_state(r, CALL_CHUNK, flags);
    end_chunks(r);
    st = fail_reader(r, npyio__stream_finish(r->stream));
    return st != NPYIO_OK ? st : NPYIO_END;
}

/* A whole read happens once, and not during a chunked pass. */
static npyio_status check_read(npyio_reader *r, uint32_t flags,
                               const char *where)
{
    npyio_status st = check_numbers(r, flags, where);

    return st == NPYIO_OK ? check_state(r, CALL_WHOLE, flags, where) : st;
}

/* The converter for one pass with these flags: the swap plan, and for
 * Fortran data read in bands (rows, chunks, whole reorders) of at most
 * band_rows rows (0: all) the cursor and bounce buffer. */
static npyio_status make_converter(npyio_reader *r, uint32_t flags,
                                   bool bands, uint64_t band_rows,
                                   npyio__converter *c)
{
    const npyio_header *h = r->header;
    npyio__converter_spec spec;

    memset(&spec, 0, sizeof spec);
    spec.dtype = h->dtype;
    spec.ndim = h->ndim;
    spec.shape = h->shape;
    spec.fortran = npyio__header_fortran_data(h);
    spec.native = (flags & NPYIO_READ_NATIVE) != 0 && !r->casting;
    spec.c_order = (flags & NPYIO_READ_C_ORDER) != 0;
    spec.bands = bands && spec.fortran;
    /* Only bands are read by seeks (asked only then: see
     * reader_seekable). */
    spec.seekable = spec.bands && reader_seekable(r);
    spec.positioned = spec.bands && reader_positioned(r);
    spec.band_rows = band_rows;
    return npyio__converter_make(c, &spec, &r->mem);
}

/* Would the Fortran data be reordered with these flags? */
static bool reorders(const npyio_reader *r, uint32_t flags)
{
    return (flags & NPYIO_READ_C_ORDER) &&
           npyio__header_fortran_data(r->header);
}

static npyio_status short_data(size_t got, size_t want)
{
    return npyio__fail(NPYIO_E_TRUNCATED, "the data section ends after %zu "
                       "bytes, but the header promises %zu", got, want);
}

/* Whole elements per block (any size for elements of 0 bytes). */
static size_t block_bytes(size_t itemsize)
{
    if (itemsize == 0 || itemsize >= BLOCK_BYTES)
        return itemsize;
    return BLOCK_BYTES / itemsize * itemsize;
}

/* Read len bytes of data at data offset `at` with a positioned read (the
 * position does not move; safe on several threads at once); short is
 * truncated. */
static npyio_status pread_data(npyio_reader *r, void *buf, size_t len,
                               uint64_t at)
{
    size_t got = 0;
    npyio_status st;

    if (at > (uint64_t)(INT64_MAX - r->data_start))
        return npyio__fail(NPYIO_E_OVERFLOW, "data offset %llu is out of "
                           "range", (unsigned long long)at);
    st = npyio__stream_pread(r->stream, buf, len, r->data_start + (int64_t)at,
                             &got, "array data");
    if (st == NPYIO_OK && got < len)
        st = npyio__fail(NPYIO_E_TRUNCATED, "the data section ends before "
                         "byte %llu, but the header promises %lld",
                         (unsigned long long)(at + len),
                         (long long)r->header->nbytes);
    return st;
}

/* The runs of one fill, each into its place: positioned reads where the
 * stream has them, else a seek (or, on a pipe, a skip forward) and a
 * read per run. */
static npyio_status read_fill(npyio_reader *r, const npyio__fill *f)
{
    size_t k;

    for (k = 0; k < f->count; k++) {
        uint64_t at = f->offset + (uint64_t)k * f->stride;
        unsigned char *into = f->buf + k * f->buf_stride;
        npyio_status st;

        if (reader_positioned(r)) {
            st = pread_data(r, into, f->len, at);
        } else {
            st = seek_data(r, at);
            if (st == NPYIO_OK)
                st = read_data(r, into, f->len);
        }
        if (st != NPYIO_OK)
            return st;
    }
    return NPYIO_OK;
}

/* Rows [first, first + count) of Fortran data, or for C order only from
 * C position skip of the first row to last_end of the last (see
 * npyio__converter_band_part). */
static npyio_status read_band_part(npyio_reader *r, npyio__converter *c,
                                   uint64_t first, uint64_t count,
                                   uint64_t skip, uint64_t last_end,
                                   void *dst)
{
    npyio__fill fill;
    npyio_status st = NPYIO_OK;

    npyio__converter_band_part(c, first, count, skip, last_end, dst);
    while (st == NPYIO_OK && npyio__converter_next(c, &fill)) {
        st = read_fill(r, &fill);
        if (st == NPYIO_OK)
            npyio__converter_place(c);
    }
    return st;
}

/* Rows [first, first + count) of Fortran data into dst, as the converter
 * delivers them (C order, or the band in Fortran order). */
static npyio_status read_band(npyio_reader *r, npyio__converter *c,
                              uint64_t first, uint64_t count, void *dst)
{
    return read_band_part(r, c, first, count, 0, c->columns, dst);
}

/* Read straight into dst; swap each block while it is in cache. */
static npyio_status read_in_place(npyio_reader *r, const npyio__converter *c,
                                  size_t nbytes, unsigned char *dst)
{
    size_t done = 0, step, got = 0;
    npyio_status st;

    if (c->plan.count == 0) { /* no conversion: one request, no copies */
        st = npyio__stream_read(r->stream, dst, nbytes, &got, "array data");
        r->data_pos += got;
        return st != NPYIO_OK || got == nbytes ? st : short_data(got, nbytes);
    }
    step = block_bytes(c->itemsize);
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

/* ---- reading with a type ------------------------------------------------------- */

/* Elements of the file's type per block of a conversion: the bounce
 * buffer and its converted block stay in cache together. */
#define CAST_BYTES ((size_t)1 << 16)

static uint64_t row_elements(const npyio_header *h);
static npyio_status check_forward(npyio_reader *r, uint64_t offset);
static npyio_status chunk_converter(npyio_reader *r, uint32_t flags,
                                    uint64_t rows);

/* Elements of the array (numeric types: itemsize > 0). */
static uint64_t element_count(const npyio_header *h)
{
    if (h->dtype->itemsize == 0)
        return 0;
    return (uint64_t)h->nbytes / h->dtype->itemsize;
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

/* Elements of the file's type in one block of a conversion. */
static size_t cast_step(const npyio_reader *r)
{
    size_t fs = r->header->dtype->itemsize;

    return fs == 0 || CAST_BYTES / fs == 0 ? 1 : CAST_BYTES / fs;
}

/* The most rows one block of a conversion touches (a converter's
 * band_rows). */
static uint64_t cast_band_rows(const npyio_reader *r)
{
    uint64_t row = row_elements(r->header);

    return row == 0 ? 1 : cast_step(r) / row + 2;
}

/* ---- the reorder block (see reorder_block) ------------------------------------- */

/* Rows a block holds: as many whole rows as fit in the reader's block
 * bytes shared by `shares` blocks, at most `rows`; 0 when a row does not
 * fit (pieces are then read as they come). */
static uint64_t block_rows(const npyio_reader *r, uint64_t rows,
                           unsigned shares)
{
    const npyio_header *h = r->header;
    uint64_t row = row_elements(h) * h->dtype->itemsize, fit;

    if (row == 0 || shares == 0)
        return 0;
    fit = r->block_bytes / shares / row;
    return fit < rows ? fit : rows;
}

/* A block of `rows` rows (0: none) filled with rows before end_row only.
 * Without memory for it (NPYIO_LIMIT_ALLOC_BYTES, say) there is none:
 * the pieces are read as they come, more slowly, and nothing fails. */
static void block_open(npyio_reader *r, uint64_t rows, uint64_t end_row,
                       reorder_block *b)
{
    size_t bytes = (size_t)(rows * row_elements(r->header)) *
                   r->header->dtype->itemsize;
    npyio__saved_message saved;

    memset(b, 0, sizeof *b);
    b->opened = true;
    if (rows == 0)
        return;
    npyio__message_save(&saved);
    if (npyio__alloc(&r->mem, bytes, "reorder block",
                     (void **)&b->data) != NPYIO_OK) {
        npyio__message_restore(&saved);
        return;
    }
    b->rows = rows;
    b->end_row = end_row;
}

static void block_close(reorder_block *b)
{
    npyio__free(b->data);
    memset(b, 0, sizeof *b);
}

void npyio__reader_set_block_bytes(npyio_reader *r, size_t bytes)
{
    r->block_bytes = bytes;
}

/* Element pos (C order; its row before the block's end_row) in the
 * block, which is filled through c with the rows from pos's on if it
 * holds other rows: *at points at it, *avail elements follow in the
 * block from it. */
static npyio_status block_at(npyio_reader *r, npyio__converter *c,
                             reorder_block *b, uint64_t pos,
                             const unsigned char **at, uint64_t *avail)
{
    uint64_t row = row_elements(r->header);

    if (pos < b->first || pos - b->first >= b->count) {
        uint64_t first = pos / row, n = b->end_row - first;
        npyio_status st;

        if (n > b->rows)
            n = b->rows;
        b->count = 0; /* holds nothing until filled */
        st = read_band(r, c, first, n, b->data);
        if (st != NPYIO_OK)
            return st;
        b->first = first * row;
        b->count = n * row;
    }
    *at = b->data + (size_t)(pos - b->first) * r->header->dtype->itemsize;
    *avail = b->first + b->count - pos;
    return NPYIO_OK;
}

/* Elements [pos, pos + n) in C order into dst, through the block. */
static npyio_status block_copy(npyio_reader *r, npyio__converter *c,
                               reorder_block *b, uint64_t pos, uint64_t n,
                               unsigned char *dst)
{
    size_t itemsize = r->header->dtype->itemsize;

    while (n > 0) {
        const unsigned char *at;
        uint64_t avail;
        npyio_status st = block_at(r, c, b, pos, &at, &avail);

        if (st != NPYIO_OK)
            return st;
        if (avail > n)
            avail = n;
        memcpy(dst, at, (size_t)avail * itemsize);
        dst += (size_t)avail * itemsize;
        pos += avail;
        n -= avail;
    }
    return NPYIO_OK;
}

/*
 * Elements [pos, pos + n) as delivered (C order when `reorder`, else in
 * file order), a block at a time through `bounce` (a block of the file's
 * type), converted into dst: never a second copy of the whole. Reordered
 * elements come from `block` where it has rows (else each block's rows
 * are read as a band). With `positioned`, blocks in file order are read
 * with pread (a part of a read on several threads), else at the stream's
 * position.
 */
static npyio_status cast_blocks(npyio_reader *r, npyio__converter *c,
                                bool reorder, bool positioned, uint64_t pos,
                                uint64_t n, unsigned char *dst, void *bounce,
                                reorder_block *block)
{
    size_t fs = r->header->dtype->itemsize, ts = r->cast.to.size;
    size_t step = cast_step(r);
    uint64_t row = row_elements(r->header), done = 0;
    npyio_status st = NPYIO_OK;

    while (st == NPYIO_OK && done < n) {
        uint64_t p = pos + done, k = n - done < step ? n - done : step;
        uint64_t last = p + k - 1;

        if (reorder && block != NULL && block->rows != 0) {
            const unsigned char *at = NULL;
            uint64_t avail = 0;

            st = block_at(r, c, block, p, &at, &avail);
            if (k > avail)
                k = avail;
            if (st == NPYIO_OK)
                st = npyio__cast_apply(&r->cast, at, dst + done * ts,
                                       (size_t)k, p);
            done += k;
            continue;
        }
        if (reorder) {
            st = read_band_part(r, c, p / row, last / row - p / row + 1,
                                p % row, last % row + 1, bounce);
        } else if (positioned) {
            st = pread_data(r, bounce, (size_t)k * fs, p * fs);
        } else {
            st = seek_data(r, p * fs);
            if (st == NPYIO_OK)
                st = read_data(r, bounce, (size_t)k * fs);
        }
        if (st == NPYIO_OK)
            st = npyio__cast_apply(&r->cast, bounce, dst + done * ts,
                                   (size_t)k, p);
        done += k;
    }
    return st;
}

/* The bounce buffer of a conversion of n elements. */
static npyio_status cast_bounce(npyio_reader *r, uint64_t n, void **bounce)
{
    size_t step = cast_step(r);

    return npyio__alloc(&r->mem, (n < step ? (size_t)n : step) *
                                     r->header->dtype->itemsize,
                        "conversion buffer", bounce);
}

/* cast_blocks at the stream's position, with a bounce buffer of its own. */
static npyio_status read_cast(npyio_reader *r, npyio__converter *c,
                              bool reorder, uint64_t pos, uint64_t n,
                              unsigned char *dst, reorder_block *block)
{
    void *bounce = NULL;
    npyio_status st = cast_bounce(r, n, &bounce);

    if (st == NPYIO_OK)
        st = cast_blocks(r, c, reorder, false, pos, n, dst, bounce, block);
    npyio__free(bounce);
    return st;
}

static npyio_status read_parallel(npyio_reader *r, uint32_t flags,
                                  const npyio__converter *swap, void *dst,
                                  bool *done);

static npyio_status refuse_pipe_reorder(const char *where)
{
    return npyio__fail(NPYIO_E_UNSUPPORTED, "%s: Fortran-order data in C "
                       "order needs a stream that can seek", where);
}

/* The whole array, converted, into dst. */
static npyio_status read_cast_whole(npyio_reader *r, uint32_t flags,
                                    void *dst)
{
    bool reorder = reorders(r, flags), parallel = false;
    uint64_t all = reorder ? (uint64_t)r->header->shape[0] : 0;
    uint64_t rows = block_rows(r, all, 1);
    reorder_block block;
    npyio__converter c;
    npyio_status st = seek_data(r, 0); /* refused if a pipe moved on */

    if (st == NPYIO_OK && reorder && !reader_seekable(r))
        st = refuse_pipe_reorder("reading with a type");
    if (st == NPYIO_OK)
        st = make_converter(r, flags, reorder,
                            rows != 0 ? rows : cast_band_rows(r), &c);
    if (st != NPYIO_OK)
        return st;
    enter_state(r, CALL_WHOLE, flags);
    st = read_parallel(r, flags, &c, dst, &parallel);
    if (st == NPYIO_OK && !parallel) {
        block_open(r, rows, all, &block);
        st = read_cast(r, &c, reorder, 0, element_count(r->header), dst,
                       &block);
        block_close(&block);
    }
    npyio__converter_free(&c);
    if (st == NPYIO_OK)
        st = npyio__stream_finish(r->stream);
    return fail_reader(r, st);
}

/* A block of the file's type read whole (from a pipe), converted into a
 * new block that replaces it. */
static npyio_status cast_block(npyio_reader *r, void **block)
{
    uint64_t n = element_count(r->header);
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

/* Rows of any layout, converted. Fortran data kept in Fortran order is
 * the one case read whole first (its band's runs, in the file's type):
 * the rows' layout is not the file's, nor a sequence of blocks. */
static npyio_status read_rows_cast(npyio_reader *r, npyio__converter *c,
                                   bool reorder, uint64_t first,
                                   uint64_t count, unsigned char *dst)
{
    const npyio_header *h = r->header;
    size_t fs = h->dtype->itemsize;
    uint64_t row = row_elements(h);
    bool fortran = npyio__header_fortran_data(h);
    void *band = NULL;
    npyio_status st = check_forward(r, fortran ? first * fs
                                               : first * row * fs);

    if (st != NPYIO_OK)
        return st;
    if (!fortran || reorder) {
        reorder_block block;

        block_open(r, reorder ? block_rows(r, count, 1) : 0, first + count,
                   &block);
        st = fail_reader(r, read_cast(r, c, reorder, first * row,
                                      count * row, dst, &block));
        block_close(&block);
        return st;
    }
    st = npyio__alloc(&r->mem, (size_t)(count * row) * fs, "rows", &band);
    if (st == NPYIO_OK)
        st = fail_reader(r, read_band(r, c, first, count, band));
    if (st == NPYIO_OK)
        st = fail_reader(r, npyio__cast_apply(&r->cast, band, dst,
                                              (size_t)(count * row),
                                              first * row));
    npyio__free(band);
    return st;
}

/* The chunked pass's block, opened by its first chunk that reorders in
 * pieces (kept to the pass's end: see end_chunks). */
static void open_chunk_block(npyio_reader *r)
{
    uint64_t all = (uint64_t)r->header->shape[0];

    if (!r->chunk_block.opened)
        block_open(r, block_rows(r, all, 1), all, &r->chunk_block);
}

/* The next chunk of a conversion: as many whole elements of the type as
 * fit (in C order for reordered data, inside rows as it comes). */
static npyio_status read_chunk_cast(npyio_reader *r, void *dst, size_t cap,
                                    uint32_t flags, size_t *got)
{
    static const char where[] = "npyio_reader_read_chunk";
    bool reorder = reorders(r, flags);
    uint64_t row = row_elements(r->header), n;
    uint64_t left = element_count(r->header) - r->chunk_pos;
    size_t fs = r->header->dtype->itemsize, ts = r->cast.to.size;
    npyio_status st;

    if (reorder && !reader_seekable(r))
        return refuse_pipe_reorder(where);
    if (left == 0)
        return end_of_pass(r, flags);
    if (cap < ts)
        return npyio__fail(NPYIO_E_BUFFER_TOO_SMALL, "%s: one element is %zu "
                           "bytes, the buffer %zu", where, ts, cap);
    n = cap / ts < left ? cap / ts : left;
    enter_state(r, CALL_CHUNK, flags);
    st = check_forward(r, reorder ? r->chunk_pos / row * fs
                                  : r->chunk_pos * fs);
    if (st == NPYIO_OK && reorder)
        open_chunk_block(r);
    if (st == NPYIO_OK)
        st = chunk_converter(r, flags, r->chunk_block.rows != 0
                                           ? r->chunk_block.rows
                                           : cast_band_rows(r));
    if (st == NPYIO_OK)
        st = fail_reader(r, read_cast(r, &r->chunks, reorder, r->chunk_pos,
                                      n, dst, &r->chunk_block));
    if (st == NPYIO_OK) {
        r->chunk_pos += n;
        *got = (size_t)(n * ts);
    }
    return st;
}

/* ---- whole reads on several threads --------------------------------------------- */

#define MAX_PARTS 64

/*
 * A whole read cut into parts: contiguous ranges of units (elements, or
 * rows when Fortran data is reordered), each read with pread and
 * converted by one thread straight into its own range of dst (so the
 * thread that fills fresh pages touches them first). Parts share only
 * what no one writes: the reader's header, stream and plans.
 */
typedef struct parts {
    npyio_reader *r;
    const npyio__converter *swap; /* flat reads: the swap plan */
    npyio__converter *conv;       /* reorders: one per part */
    void *bounce[MAX_PARTS];      /* conversions: one per part */
    reorder_block block[MAX_PARTS]; /* reordered conversions: one per part */
    npyio_status status[MAX_PARTS];
    bool reorder;
    size_t count;
    size_t made; /* converters made */
    uint64_t units;
    uint64_t per_unit; /* elements per unit */
    unsigned char *dst;
} parts;

/* Elements [a, b) as stored, read and swapped a block at a time. */
static npyio_status part_flat(const parts *p, uint64_t a, uint64_t b)
{
    npyio_reader *r = p->r;
    size_t fs = r->header->dtype->itemsize;
    size_t nbytes = (size_t)((b - a) * fs), done = 0, step;
    unsigned char *dst = p->dst + (size_t)a * fs;
    npyio_status st = NPYIO_OK;

    if (p->swap->plan.count == 0)
        return pread_data(r, dst, nbytes, a * fs);
    step = block_bytes(fs);
    while (st == NPYIO_OK && done < nbytes) {
        size_t want = nbytes - done < step ? nbytes - done : step;

        st = pread_data(r, dst + done, want, a * fs + done);
        if (st == NPYIO_OK)
            npyio__converter_swap(p->swap, dst + done, want);
        done += want;
    }
    return st;
}

static void run_part(void *ctx, size_t k)
{
    parts *p = ctx;
    npyio_reader *r = p->r;
    uint64_t a = npyio__part_start(p->units, p->count, k);
    uint64_t b = npyio__part_start(p->units, p->count, k + 1);
    npyio__converter *c = p->conv != NULL ? &p->conv[k] : NULL;

    if (r->casting)
        p->status[k] = cast_blocks(r, c, p->reorder, true, a * p->per_unit,
                                   (b - a) * p->per_unit,
                                   p->dst + (size_t)(a * p->per_unit) *
                                                r->cast.to.size,
                                   p->bounce[k], &p->block[k]);
    else if (p->reorder)
        p->status[k] = read_band(r, c, a, b - a,
                                 p->dst + (size_t)(a * p->per_unit) *
                                              r->header->dtype->itemsize);
    else
        p->status[k] = part_flat(p, a, b);
}

/* Each part's converter (reorders) and bounce buffer (conversions),
 * made on the calling thread: the allocator is called from it only. */
static npyio_status parts_prepare(parts *p, uint32_t flags)
{
    npyio_reader *r = p->r;
    npyio_status st = NPYIO_OK;
    size_t k;

    if (p->reorder)
        st = npyio__alloc_array(&r->mem, p->count, sizeof *p->conv,
                                "converters", (void **)&p->conv);
    for (k = 0; st == NPYIO_OK && k < p->count; k++) {
        uint64_t end = npyio__part_start(p->units, p->count, k + 1);
        uint64_t rows = end - npyio__part_start(p->units, p->count, k);
        uint64_t band = rows;

        if (p->reorder && r->casting) { /* the threads share the block's
                                           bytes */
            block_open(r, block_rows(r, rows, (unsigned)p->count), end,
                       &p->block[k]);
            band = p->block[k].rows != 0 ? p->block[k].rows
                                         : cast_band_rows(r);
        }
        if (p->reorder) {
            st = make_converter(r, flags, true, band, &p->conv[k]);
            if (st != NPYIO_OK)
                break;
            p->made++;
        }
        if (r->casting)
            st = cast_bounce(r, rows * p->per_unit, &p->bounce[k]);
    }
    return st;
}

static void parts_free(parts *p)
{
    size_t k;

    for (k = 0; k < p->count; k++) {
        npyio__free(p->bounce[k]);
        block_close(&p->block[k]);
    }
    for (k = 0; k < p->made; k++)
        npyio__converter_free(&p->conv[k]);
    npyio__free(p->conv);
}

/*
 * The whole read on several threads, where it can be: NPYIO_LIMIT_THREADS
 * above 1, a stream with positioned reads whose reads change nothing (not
 * an archive member, which sums a CRC as it is read), and data for two
 * parts at least. *done false: read it on the calling thread, also after
 * a part failed (that read reports the failure, and the buffer up to it,
 * exactly as one thread does) or memory for the parts ran out. On
 * success a read in file order leaves the stream after the data, as one
 * thread does.
 */
static npyio_status read_parallel(npyio_reader *r, uint32_t flags,
                                  const npyio__converter *swap, void *dst,
                                  bool *done)
{
    const npyio_header *h = r->header;
    npyio__saved_message saved;
    parts p;
    size_t k;
    npyio_status st;

    *done = false;
    if (r->threads < 2 || h->nbytes == 0)
        return NPYIO_OK;
    memset(&p, 0, sizeof p);
    p.r = r;
    p.swap = swap;
    p.reorder = reorders(r, flags);
    p.dst = dst;
    p.per_unit = p.reorder ? row_elements(h) : 1;
    p.units = element_count(h) / p.per_unit;
    p.count = npyio__part_count(p.units,
                                (size_t)p.per_unit * h->dtype->itemsize,
                                r->threads);
    /* Small data never asks what the stream is (see reader_seekable). */
    if (p.count < 2 || !reader_positioned(r) ||
        npyio__stream_has_finish(r->stream))
        return NPYIO_OK;
    npyio__message_save(&saved);
    st = parts_prepare(&p, flags);
    if (st == NPYIO_OK)
        npyio__run_parallel(p.count, r->threads, run_part, &p);
    parts_free(&p);
    if (st != NPYIO_OK) { /* no memory for the parts: one thread */
        npyio__message_restore(&saved);
        return NPYIO_OK;
    }
    for (k = 0; k < p.count; k++)
        if (p.status[k] != NPYIO_OK)
            return NPYIO_OK;
    if (!p.reorder)
        st = seek_data(r, (uint64_t)h->nbytes);
    *done = st == NPYIO_OK;
    return st;
}

/* The whole data into dst: in place, or reordered in one band of all the
 * rows (the converter reads long columns in runs and short ones in
 * spans; on a pipe, in file order). */
static npyio_status read_converted(npyio_reader *r, uint32_t flags, void *dst)
{
    const npyio_header *h = r->header;
    bool reorder = reorders(r, flags), parallel = false;
    npyio__converter c;
    npyio_status st;

    if (r->casting)
        return read_cast_whole(r, flags, dst);
    st = seek_data(r, 0); /* refused if a pipe moved on */
    if (st == NPYIO_OK)
        st = make_converter(r, flags, reorder, 0, &c);
    if (st != NPYIO_OK)
        return st;
    enter_state(r, CALL_WHOLE, flags); /* whatever happens, the stream
                                          moves on */
    st = read_parallel(r, flags, &c, dst, &parallel);
    if (st == NPYIO_OK && !parallel)
        st = reorder ? read_band(r, &c, 0, (uint64_t)h->shape[0], dst)
                     : read_in_place(r, &c, (size_t)h->nbytes, dst);
    npyio__converter_free(&c);
    if (st == NPYIO_OK)
        st = npyio__stream_finish(r->stream);
    return fail_reader(r, st);
}

static npyio_status reader_read_body(npyio_reader *reader, void *dst, size_t cap,
                                     uint32_t flags)
{
    static const char where[] = "npyio_reader_read";
    size_t need = 0;
    npyio_status st = check_read(reader, flags, where);

    if (st == NPYIO_OK)
        st = delivered_bytes(reader, element_count(reader->header), where,
                             &need);
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
    npyio_status st = seek_data(r, 0); /* refused if chunks moved on */

    if (st == NPYIO_OK)
        st = make_converter(r, flags, false, 0, &c);
    if (st != NPYIO_OK)
        return st;
    enter_state(r, CALL_WHOLE, flags);
    st = fail_reader(r, read_growing(r, nbytes, true, "array data", &raw,
                                     &got));
    r->data_pos += got;
    if (st == NPYIO_OK) {
        npyio__converter_swap(&c, raw, nbytes);
        if (reorders(r, flags)) {
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
        st = fail_reader(r, cast_block(r, &block));
    npyio__free(raw);
    npyio__converter_free(&c);
    *out = block;
    return st;
}

static npyio_status reader_read_alloc_body(npyio_reader *reader, uint32_t flags,
                                           void **data, size_t *len)
{
    static const char where[] = "npyio_reader_read_alloc";
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
    st = delivered_bytes(reader, element_count(reader->header), where,
                         &nbytes);
    if (st != NPYIO_OK)
        return st;
    if (reader->length_checked) { /* checked when it was opened */
        st = npyio__alloc(&reader->mem, nbytes, "array data", &block);
        if (st == NPYIO_OK)
            st = read_converted(reader, flags, block);
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
    return npyio__as_called(reader_read_alloc_body(reader, flags, data, len),
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
    st = check_reader(reader, where);
    if (st != NPYIO_OK)
        return st;
    if (reader->sticky.failed != NPYIO_OK)
        return repeat_failure(reader, where);
    if (!npyio_dtype_has_objects(reader->header->dtype))
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: the array holds no "
                           "Python objects; its data is not a pickle",
                           where);
    st = check_state(reader, CALL_WHOLE, 0, where);
    if (st != NPYIO_OK)
        return st;
    enter_state(reader, CALL_WHOLE, 0);
    st = fail_reader(reader, read_growing(reader, 0, false, "pickle", bytes,
                                          &got));
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

/* ---- chunks and rows ------------------------------------------------------------------ */

/* Elements in one row along axis 0 (the product of the other axes). */
static uint64_t row_elements(const npyio_header *h)
{
    uint64_t n = 1;
    int i;

    for (i = 1; i < h->ndim; i++)
        n *= (uint64_t)h->shape[i];
    return n;
}

/* A pipe cannot go back: refused before anything moves, so that the
 * reader stays usable. */
static npyio_status check_forward(npyio_reader *r, uint64_t offset)
{
    if (offset >= r->data_pos || reader_seekable(r))
        return NPYIO_OK;
    return npyio__fail(NPYIO_E_UNSUPPORTED, "the stream cannot seek, and "
                       "byte %llu of the data is behind its position "
                       "(%llu)", (unsigned long long)offset,
                       (unsigned long long)r->data_pos);
}

/* Rows of any layout into dst, with a converter made for the pass; the
 * caller checked ranges and sizes. Contiguous rows (C-order data) in one
 * read; Fortran data in a band. */
static npyio_status read_row_range(npyio_reader *r, npyio__converter *c,
                                   uint64_t first, uint64_t count,
                                   unsigned char *dst)
{
    const npyio_header *h = r->header;
    size_t itemsize = h->dtype->itemsize;
    size_t row_bytes = (size_t)row_elements(h) * itemsize;
    size_t len = (size_t)count * row_bytes;
    npyio_status st;

    if (len == 0)
        return NPYIO_OK;
    if (npyio__header_fortran_data(h)) {
        st = check_forward(r, first * itemsize); /* its first run */
        if (st == NPYIO_OK)
            st = fail_reader(r, read_band(r, c, first, count, dst));
        return st;
    }
    st = check_forward(r, first * row_bytes);
    if (st != NPYIO_OK)
        return st;
    st = seek_data(r, first * row_bytes);
    if (st == NPYIO_OK)
        st = read_data(r, dst, len);
    if (st == NPYIO_OK)
        npyio__converter_swap(c, dst, len);
    return fail_reader(r, st);
}

/*
 * Rows of Fortran data in C order read in sequence (a request that starts
 * where the last one ended, or that the block holds) go through a block
 * as chunks do, filled from the request's first row: reading a large
 * array a few rows at a time then reads each column run once per block,
 * not once per request. Random requests read their own band. Returns
 * whether it read the rows (*st says how it went).
 */
static bool read_rows_blocked(npyio_reader *r, uint32_t flags, uint64_t first,
                              uint64_t count, unsigned char *dst,
                              npyio_status *st)
{
    reorder_block *b = &r->rows_block;
    uint64_t row = row_elements(r->header), all = (uint64_t)r->header->shape[0];
    bool sequential = first == r->rows_next, held;
    npyio__converter c;

    r->rows_next = first + count;
    if (r->casting || !reorders(r, flags) || !reader_seekable(r))
        return false; /* (a pipe reads each band once, forward) */
    if (b->opened && r->rows_flags != flags)
        block_close(b); /* filled for other flags */
    held = b->rows != 0 && first * row >= b->first &&
           (first + count) * row <= b->first + b->count;
    if (!held && !(sequential && first > 0 && count < block_rows(r, all, 1)))
        return false;
    if (!b->opened) {
        block_open(r, block_rows(r, all, 1), all, b);
        r->rows_flags = flags;
    }
    if (b->rows == 0)
        return false; /* no memory for it: read the band */
    if (held) {
        memcpy(dst, b->data + (size_t)(first * row - b->first) *
                                  r->header->dtype->itemsize,
               (size_t)(count * row) * r->header->dtype->itemsize);
        *st = NPYIO_OK;
        return true;
    }
    *st = make_converter(r, flags, true, b->rows, &c);
    if (*st == NPYIO_OK) {
        *st = fail_reader(r, block_copy(r, &c, b, first * row, count * row,
                                        dst));
        npyio__converter_free(&c);
    }
    return true;
}

static npyio_status reader_read_rows_body(npyio_reader *reader, int64_t first,
                                          int64_t count, void *dst, size_t cap,
                                          uint32_t flags)
{
    static const char where[] = "npyio_reader_read_rows";
    const npyio_header *h;
    uint64_t need;
    npyio__converter c;
    npyio_status st = check_numbers(reader, flags, where);

    if (st != NPYIO_OK)
        return st;
    h = reader->header;
    if (h->ndim == 0)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: a 0-d array has no "
                           "rows", where);
    if (first < 0 || count < 0 || first > h->shape[0] ||
        count > h->shape[0] - first)
        return npyio__fail_rows(where, first, count, h->shape[0], "the");
    need = (uint64_t)count * row_elements(h) *
           (reader->casting ? reader->cast.to.size : h->dtype->itemsize);
    if (need > cap)
        return npyio__fail(NPYIO_E_BUFFER_TOO_SMALL, "%s: %lld rows are "
                           "%llu bytes, the buffer %zu", where,
                           (long long)count, (unsigned long long)need, cap);
    if (dst == NULL && need > 0)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: dst is NULL", where);
    st = check_state(reader, CALL_ROWS, flags, where);
    if (st != NPYIO_OK || need == 0)
        return st;
    enter_state(reader, CALL_ROWS, flags);
    if (read_rows_blocked(reader, flags, (uint64_t)first, (uint64_t)count,
                          dst, &st))
        return st;
    st = make_converter(reader, flags, true, (uint64_t)count, &c);
    if (st == NPYIO_OK && reader->casting)
        st = read_rows_cast(reader, &c, reorders(reader, flags),
                            (uint64_t)first, (uint64_t)count, dst);
    else if (st == NPYIO_OK)
        st = read_row_range(reader, &c, (uint64_t)first, (uint64_t)count,
                            dst);
    npyio__converter_free(&c);
    return st;
}

npyio_status npyio_reader_read_rows(npyio_reader *reader, int64_t first,
                                    int64_t count, void *dst, size_t cap,
                                    uint32_t flags)
{
    return npyio__as_called(reader_read_rows_body(reader, first, count, dst, cap, flags),
                            "npyio_reader_read_rows");
}

/* The converter of a chunked pass: made at its first chunk (the state
 * table keeps the flags the same for the whole pass), released at its
 * end, on failure and at close. Chunks of rows hold at most `rows` rows. */
static npyio_status chunk_converter(npyio_reader *r, uint32_t flags,
                                    uint64_t rows)
{
    npyio_status st;

    if (r->chunking)
        return NPYIO_OK;
    st = make_converter(r, flags, reorders(r, flags), rows, &r->chunks);
    if (st != NPYIO_OK)
        return st;
    r->chunking = true;
    return NPYIO_OK;
}

/*
 * A chunk of Fortran data in C order: as many whole elements as fit, which
 * may start and end inside rows. The band of rows they touch is read once
 * (its spans hold every row of the band), and only the chunk's elements
 * placed: a buffer of 1.6 rows reads the file once per chunk, not once per
 * row.
 */
static npyio_status read_chunk_reordered(npyio_reader *r, void *dst,
                                         size_t cap, uint32_t flags,
                                         size_t *got)
{
    static const char where[] = "npyio_reader_read_chunk";
    const npyio_header *h = r->header;
    size_t itemsize = h->dtype->itemsize;
    uint64_t row = row_elements(h), total = (uint64_t)h->shape[0] * row;
    uint64_t left = total - r->chunk_pos, n, end, first, last;
    /* Through the block only if it holds more than a chunk: else each
     * chunk reads its rows once anyway, and the block is only a copy. */
    bool blocked = cap < r->block_bytes &&
                   block_rows(r, (uint64_t)h->shape[0], 1) * row * itemsize >
                       cap;
    npyio_status st;

    if (!reader_seekable(r))
        return npyio__fail(NPYIO_E_UNSUPPORTED, "%s: Fortran-order data in "
                           "C order needs a stream that can seek", where);
    if (left == 0 || itemsize == 0) /* (elements of 0 bytes: nothing to
                                          deliver) */
        return end_of_pass(r, flags);
    n = cap / itemsize < left ? cap / itemsize : left;
    if (n == 0)
        return npyio__fail(NPYIO_E_BUFFER_TOO_SMALL, "%s: one element is "
                           "%zu bytes, the buffer %zu", where, itemsize, cap);
    end = r->chunk_pos + n;
    first = r->chunk_pos / row;
    last = (end - 1) / row;
    enter_state(r, CALL_CHUNK, flags);
    if (blocked)
        open_chunk_block(r);
    blocked = blocked && r->chunk_block.rows != 0;
    st = chunk_converter(r, flags, blocked ? r->chunk_block.rows
                                           : cap / itemsize / row + 2);
    if (st == NPYIO_OK && blocked)
        st = fail_reader(r, block_copy(r, &r->chunks, &r->chunk_block,
                                       r->chunk_pos, n, dst));
    else if (st == NPYIO_OK)
        st = fail_reader(r, read_band_part(r, &r->chunks, first,
                                           last - first + 1,
                                           r->chunk_pos % row,
                                           (end - 1) % row + 1, dst));
    if (st == NPYIO_OK) {
        r->chunk_pos = end;
        *got = (size_t)(n * itemsize);
    }
    return st;
}

static npyio_status reader_read_chunk_body(npyio_reader *reader, void *dst,
                                           size_t cap, uint32_t flags, size_t *got)
{
    static const char where[] = "npyio_reader_read_chunk";
    const npyio_header *h;
    size_t itemsize;
    uint64_t left, n;
    npyio_status st;

    if (got == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: got is NULL", where);
    *got = 0;
    st = check_numbers(reader, flags, where);
    if (st != NPYIO_OK)
        return st;
    if (dst == NULL && cap > 0)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: dst is NULL", where);
    st = check_state(reader, CALL_CHUNK, flags, where);
    if (st != NPYIO_OK)
        return st;
    h = reader->header;
    itemsize = h->dtype->itemsize;
    if (reader->casting)
        return read_chunk_cast(reader, dst, cap, flags, got);
    if (reorders(reader, flags))
        return read_chunk_reordered(reader, dst, cap, flags, got);
    left = (uint64_t)h->nbytes - reader->chunk_pos;
    if (left == 0)
        return end_of_pass(reader, flags);
    if (cap < itemsize)
        return npyio__fail(NPYIO_E_BUFFER_TOO_SMALL, "%s: one element is %zu "
                           "bytes, the buffer %zu", where, itemsize, cap);
    n = cap / itemsize * itemsize < left ? cap / itemsize * itemsize : left;
    enter_state(reader, CALL_CHUNK, flags);
    st = check_forward(reader, reader->chunk_pos);
    if (st == NPYIO_OK)
        st = chunk_converter(reader, flags & NPYIO_READ_NATIVE, 0);
    if (st != NPYIO_OK)
        return st;
    st = seek_data(reader, reader->chunk_pos);
    if (st == NPYIO_OK)
        st = read_data(reader, dst, (size_t)n);
    if (st == NPYIO_OK) {
        npyio__converter_swap(&reader->chunks, dst, (size_t)n);
        reader->chunk_pos += n;
        *got = (size_t)n;
    }
    return fail_reader(reader, st);
}

npyio_status npyio_reader_read_chunk(npyio_reader *reader, void *dst,
                                     size_t cap, uint32_t flags, size_t *got)
{
    return npyio__as_called(reader_read_chunk_body(reader, dst, cap, flags, got),
                            "npyio_reader_read_chunk");
}

/* ---- one call ------------------------------------------------------------------------ */

npyio_status npyio__reader_load(npyio_reader *r, uint32_t flags,
                                const char *context, npyio_header **header,
                                void **data)
{
    npyio_status st, closed;

    *header = NULL;
    st = npyio__with_context(npyio_reader_read_alloc(r, flags, data, NULL),
                             context);
    /* The header handed back describes the bytes handed back: converted
     * ones too, so that saving them with it writes the same array. */
    if (st == NPYIO_OK && flags != 0)
        st = npyio__header_as_read(&r->mem, r->header, flags, header);
    else if (st == NPYIO_OK) {
        *header = r->header; /* hand the file's header over */
        r->header = NULL;
    }
    if (st != NPYIO_OK) {
        npyio__free(*data);
        *data = NULL;
    }
    closed = npyio_reader_close(r);
    if (st == NPYIO_OK && closed != NPYIO_OK) {
        npyio_header_free(*header);
        npyio__free(*data);
        *header = NULL;
        *data = NULL;
        st = closed;
    }
    return st;
}

static npyio_status load_body(const char *path, uint32_t flags,
                              const npyio_options *options,
                              npyio_header **header, void **data)
{
    npyio_reader *r = NULL;
    npyio_status st;

    if (header == NULL || data == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "npyio_load_with_header: %s is NULL",
                           header == NULL ? "header" : "data");
    *header = NULL;
    *data = NULL;
    /* Refused flags open nothing. */
    st = npyio__check_flags(flags, NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER,
                            "npyio_load_with_header");
    if (st == NPYIO_OK)
        st = npyio_reader_open_path(path, options, &r);
    if (st != NPYIO_OK)
        return st;
    return npyio__reader_load(r, flags, path, header, data);
}

npyio_status npyio_load_with_header(const char *path, uint32_t flags,
                                    const npyio_options *options,
                                    npyio_header **header, void **data)
{
    if (header != NULL)
        *header = NULL; /* outputs are cleared whatever is refused */
    if (data != NULL)
        *data = NULL;
    return npyio__as_called(load_body(path, flags, options, header, data),
                            "npyio_load_with_header");
}

/* The type of a loaded array as npyio_load() names it: dtype.str,
 * or the descr list of a record (whose str, "|V12", would lose it). */
static npyio_status type_text(const npyio_dtype *dt, char *type,
                              size_t type_cap, const char *where)
{
    size_t need = 0;
    npyio_kind kind = npyio_dtype_kind(dt);
    npyio_status st = kind == NPYIO_KIND_RECORD || kind == NPYIO_KIND_SUBARRAY
                          ? npyio_dtype_descr(dt, type, type_cap, &need)
                          : npyio_dtype_str(dt, type, type_cap, &need);

    if (st == NPYIO_E_BUFFER_TOO_SMALL)
        return npyio__fail(st, "%s: the type needs %zu bytes (NUL "
                           "included), type_cap is %zu", where, need + 1,
                           type_cap);
    return st;
}

static npyio_status load_array_body(const char *path,
                                    const npyio_options *options, void **data,
                                    size_t *len, char *type, size_t type_cap,
                                    int *ndim, int64_t *shape, size_t shape_cap)
{
    static const char where[] = "npyio_load";
    npyio_header *h = NULL;
    npyio_status st;

    if (data == NULL || len == NULL || ndim == NULL ||
        (type == NULL && type_cap > 0) || (shape == NULL && shape_cap > 0))
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: %s is NULL", where,
                           data == NULL  ? "data"
                           : len == NULL ? "len"
                           : ndim == NULL ? "ndim"
                           : type == NULL ? "type"
                                          : "shape");
    *data = NULL;
    *len = 0;
    *ndim = 0;
    st = npyio_load_with_header(path, NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER, options, &h,
                    data);
    if (st == NPYIO_OK)
        st = type_text(h->dtype, type, type_cap, where);
    if (st == NPYIO_OK && (size_t)h->ndim > shape_cap)
        st = npyio__fail(NPYIO_E_BUFFER_TOO_SMALL, "%s: the array has %d "
                         "dimensions, shape_cap is %zu", where, h->ndim,
                         shape_cap);
    if (st == NPYIO_OK) {
        if (h->ndim > 0)
            memcpy(shape, h->shape, (size_t)h->ndim * sizeof *shape);
        *ndim = h->ndim;
        *len = (size_t)h->nbytes;
    } else {
        npyio__free(*data);
        *data = NULL;
    }
    npyio_header_free(h);
    return st;
}

npyio_status npyio_load(const char *path, const npyio_options *options,
                        void **data, size_t *len, char *type, size_t type_cap,
                        int *ndim, int64_t *shape, size_t shape_cap)
{
    if (data != NULL)
        *data = NULL; /* outputs are cleared whatever is refused */
    if (len != NULL)
        *len = 0;
    return npyio__as_called(load_array_body(path, options, data, len, type,
                                            type_cap, ndim, shape, shape_cap),
                            "npyio_load");
}

/* ---- reading with a type: the calls ----------------------------------------------- */

static npyio_status reader_set_type_body(npyio_reader *r, const char *type,
                                         uint32_t flags)
{
    static const char where[] = "npyio_reader_set_type";
    npyio_dtype *dt = NULL;
    npyio__cast_plan plan;
    npyio_status st = check_call(r, flags,
                                 NPYIO_READ_CAST_SAME_KIND |
                                     NPYIO_READ_CAST_UNSAFE,
                                 where);

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
    st = npyio_dtype_new_native(r->header->dtype, &native);
    if (st == NPYIO_OK)
        st = type_text(native, type, type_cap, where);
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
            npyio_reader_read_alloc(r, NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER,
                                    data, len),
            context);
    if (st == NPYIO_OK && nd > 0)
        memcpy(shape, r->header->shape, (size_t)nd * sizeof *shape);
    closed = npyio_reader_close(r);
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

static npyio_status load_as_body(const char *path, const char *type,
                                 uint32_t flags, const npyio_options *options,
                                 void **data, size_t *len, int *ndim,
                                 int64_t *shape, size_t shape_cap)
{
    static const char where[] = "npyio_load_as";
    npyio_reader *r = NULL;
    npyio_status st = npyio__check_load_outputs(data, len, ndim, shape,
                                                shape_cap, where);

    /* Refused flags open nothing. */
    if (st == NPYIO_OK)
        st = npyio__check_flags(flags, NPYIO_READ_CAST_SAME_KIND |
                                NPYIO_READ_CAST_UNSAFE, where);
    if (st == NPYIO_OK)
        st = npyio_reader_open_path(path, options, &r);
    if (st != NPYIO_OK)
        return st;
    return npyio__reader_load_as(r, type, flags, path, where, data, len,
                                 NULL, 0, ndim, shape, shape_cap);
}

npyio_status npyio_load_as(const char *path, const char *type, uint32_t flags,
                           const npyio_options *options, void **data,
                           size_t *len, int *ndim, int64_t *shape,
                           size_t shape_cap)
{
    if (data != NULL)
        *data = NULL; /* outputs are cleared whatever is refused */
    if (len != NULL)
        *len = 0;
    return npyio__as_called(load_as_body(path, type, flags, options, data,
                                         len, ndim, shape, shape_cap),
                            "npyio_load_as");
}

