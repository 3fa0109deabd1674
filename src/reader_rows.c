/*
 * reader_rows.c - the reader's data section, under its whole reads
 * (reader.c) and its reads on several threads (reader_parallel.c): the
 * states every read call consults, the failures that stick, positions
 * and bands of rows (Fortran data read in C order goes through a
 * converter, convert.h), the reorder block, reads converted to the type
 * set, and the calls that read rows and chunks. Part of the array I/O
 * core; knows nothing of zip archives. The handle's layout is in
 * reader_core.h.
 */
#include "cast.h"
#include "convert.h"
#include "error.h"
#include "reader_core.h"
#include "stream.h"

#include <string.h>

/* Bytes moved per block when converting: large enough to amortise the
 * calls, small enough to stay in cache while it is converted. */
#define BLOCK_BYTES ((size_t)1 << 20)

/*
 * Whether the stream can seek and read at positions, asked the first time
 * a read needs to know: a small file read whole never does, and a file
 * opened here is then not even asked what it is (see stream_fd.c).
 */
bool npyio__reader_seekable(npyio_reader *r)
{
    return npyio__stream_seekable(r->stream);
}

/* Seekable, with positioned reads (pread). */
bool npyio__reader_positioned(npyio_reader *r)
{
    return npyio__reader_seekable(r) && npyio__stream_has_pread(r->stream);
}

/* The end of a chunked pass (or of the reader): its converter and block
 * go. */
void npyio__end_chunks(npyio_reader *r)
{
    if (r->chunking)
        npyio__converter_free(&r->chunks);
    r->chunking = false;
    npyio__block_close(&r->chunk_block);
}

npyio_status npyio__check_reader(const npyio_reader *r, const char *where)
{
    if (r == NULL || r->magic != NPYIO__MAGIC_READER)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: %s", where,
                           r == NULL ? "reader is NULL"
                                     : "the pointer given as a reader is not "
                                       "a live npyio_reader");
    return NPYIO_OK;
}

/* ---- reading the data ------------------------------------------------------------ */

/*
 * Move to `offset` bytes into the data section: by seeking, or on a stream
 * that cannot seek, forward by reading and dropping (back is refused).
 */
npyio_status npyio__seek_data(npyio_reader *r, uint64_t offset)
{
    unsigned char scratch[65536];

    if (offset == r->data_pos)
        return NPYIO_OK;
    if (npyio__reader_seekable(r)) {
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
npyio_status npyio__fail_reader(npyio_reader *r, npyio_status st)
{
    return npyio__sticky_fail(&r->sticky, st);
}

npyio_status npyio__repeat_failure(const npyio_reader *r, const char *where)
{
    return npyio__sticky_repeat(&r->sticky, where, "reader");
}

/* ---- the states -------------------------------------------------------------- */

/* A live reader that has not failed, and no flags but `allowed`. */
npyio_status npyio__check_call(npyio_reader *r, uint32_t flags,
                               uint32_t allowed, const char *where)
{
    npyio_status st = npyio__check_reader(r, where);

    if (st == NPYIO_OK)
        st = npyio__check_flags(flags, allowed, where);
    if (st != NPYIO_OK)
        return st;
    if (r->sticky.failed != NPYIO_OK)
        return npyio__repeat_failure(r, where);
    return NPYIO_OK;
}

/* Checks common to every read of numbers (whole, chunks, rows). */
npyio_status npyio__check_numbers(npyio_reader *r, uint32_t flags,
                                  const char *where)
{
    npyio_status st = npyio__check_call(
        r, flags, NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER, where);

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
npyio_status npyio__check_state(const npyio_reader *r, read_call call,
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
void npyio__enter_state(npyio_reader *r, read_call call, uint32_t flags)
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

    npyio__enter_state(r, CALL_CHUNK, flags);
    npyio__end_chunks(r);
    st = npyio__fail_reader(r, npyio__stream_finish(r->stream));
    return st != NPYIO_OK ? st : NPYIO_END;
}

/* ---- bands of rows ----------------------------------------------------------- */

/* The converter for one pass with these flags: the swap plan, and for
 * Fortran data read in bands (rows, chunks, whole npyio__reorders) of at most
 * band_rows rows (0: all) the cursor and bounce buffer. */
npyio_status npyio__make_converter(npyio_reader *r, uint32_t flags, bool bands,
                                   uint64_t band_rows, npyio__converter *c)
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
     * npyio__reader_seekable). */
    spec.seekable = spec.bands && npyio__reader_seekable(r);
    spec.positioned = spec.bands && npyio__reader_positioned(r);
    spec.band_rows = band_rows;
    return npyio__converter_make(c, &spec, &r->mem);
}

/* Would the Fortran data be reordered with these flags? */
bool npyio__reorders(const npyio_reader *r, uint32_t flags)
{
    return (flags & NPYIO_READ_C_ORDER) &&
           npyio__header_fortran_data(r->header);
}

/* Whole elements per block (any size for elements of 0 bytes). */
size_t npyio__block_bytes(size_t itemsize)
{
    if (itemsize == 0 || itemsize >= BLOCK_BYTES)
        return itemsize;
    return BLOCK_BYTES / itemsize * itemsize;
}

/* Read len bytes of data at data offset `at` with a positioned read (the
 * position does not move; safe on several threads at once), by the job
 * of `part` of a read in parts (NULL: none); short is truncated. */
npyio_status npyio__pread_data(npyio_reader *r, npyio__stream_part *part,
                               void *buf, size_t len, uint64_t at)
{
    size_t got = 0;
    npyio_status st;

    if (at > (uint64_t)(INT64_MAX - r->data_start))
        return npyio__fail(NPYIO_E_OVERFLOW, "data offset %llu is out of "
                           "range", (unsigned long long)at);
    st = npyio__stream_pread_part(r->stream, part, buf, len,
                                  r->data_start + (int64_t)at, &got,
                                  "array data");
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

        if (npyio__reader_positioned(r)) {
            st = npyio__pread_data(r, NULL, into, f->len, at);
        } else {
            st = npyio__seek_data(r, at);
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
npyio_status npyio__read_band(npyio_reader *r, npyio__converter *c,
                              uint64_t first, uint64_t count, void *dst)
{
    return read_band_part(r, c, first, count, 0, c->columns, dst);
}

/* ---- reading with a type ------------------------------------------------------- */

/* Elements of the file's type per block of a conversion: the bounce
 * buffer and its converted block stay in cache together. */
#define CAST_BYTES ((size_t)1 << 16)

static npyio_status check_forward(npyio_reader *r, uint64_t offset);
static npyio_status chunk_converter(npyio_reader *r, uint32_t flags,
                                    uint64_t rows);

/* Elements of the array (numeric types: itemsize > 0). */
uint64_t npyio__element_count(const npyio_header *h)
{
    if (h->dtype->itemsize == 0)
        return 0;
    return (uint64_t)h->nbytes / h->dtype->itemsize;
}

/* Elements of the file's type in one block of a conversion. */
static size_t cast_step(const npyio_reader *r)
{
    size_t fs = r->header->dtype->itemsize;

    return fs == 0 || CAST_BYTES / fs == 0 ? 1 : CAST_BYTES / fs;
}

/* The most rows one block of a conversion touches (a converter's
 * band_rows). */
uint64_t npyio__cast_band_rows(const npyio_reader *r)
{
    uint64_t row = npyio__row_elements(r->header);

    return row == 0 ? 1 : cast_step(r) / row + 2;
}

/* ---- the reorder block (see reorder_block) ------------------------------------- */

/* Rows a block holds: as many whole rows as fit in the reader's block
 * bytes shared by `shares` blocks, at most `rows`; 0 when a row does not
 * fit (pieces are then read as they come). */
uint64_t npyio__block_rows(const npyio_reader *r, uint64_t rows,
                           unsigned shares)
{
    const npyio_header *h = r->header;
    uint64_t row = npyio__row_elements(h) * h->dtype->itemsize, fit;

    if (row == 0 || shares == 0)
        return 0;
    fit = r->block_bytes / shares / row;
    return fit < rows ? fit : rows;
}

/* A block of `rows` rows (0: none) filled with rows before end_row only.
 * Without memory for it (NPYIO_LIMIT_ALLOC_BYTES, say) there is none:
 * the pieces are read as they come, more slowly, and nothing fails. */
void npyio__block_open(npyio_reader *r, uint64_t rows, uint64_t end_row,
                       reorder_block *b)
{
    size_t bytes = (size_t)(rows * npyio__row_elements(r->header)) *
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

void npyio__block_close(reorder_block *b)
{
    npyio__free(b->data);
    memset(b, 0, sizeof *b);
}

/* Element pos (C order; its row before the block's end_row) in the
 * block, which is filled through c with the rows from pos's on if it
 * holds other rows: *at points at it, *avail elements follow in the
 * block from it. */
static npyio_status block_at(npyio_reader *r, npyio__converter *c,
                             reorder_block *b, uint64_t pos,
                             const unsigned char **at, uint64_t *avail)
{
    uint64_t row = npyio__row_elements(r->header);

    if (pos < b->first || pos - b->first >= b->count) {
        uint64_t first = pos / row, n = b->end_row - first;
        npyio_status st;

        if (n > b->rows)
            n = b->rows;
        b->count = 0; /* holds nothing until filled */
        st = npyio__read_band(r, c, first, n, b->data);
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
 * are read as a band). With `part`, blocks in file order are read with
 * pread by that part's job of a read on several threads, else at the
 * stream's position.
 */
npyio_status npyio__cast_blocks(npyio_reader *r, npyio__converter *c,
                                bool reorder, npyio__stream_part *part,
                                uint64_t pos, uint64_t n, unsigned char *dst,
                                void *bounce, reorder_block *block)
{
    size_t fs = r->header->dtype->itemsize, ts = r->cast.to.size;
    size_t step = cast_step(r);
    uint64_t row = npyio__row_elements(r->header), done = 0;
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
        } else if (part != NULL) {
            st = npyio__pread_data(r, part, bounce, (size_t)k * fs, p * fs);
        } else {
            st = npyio__seek_data(r, p * fs);
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
npyio_status npyio__cast_bounce(npyio_reader *r, uint64_t n, void **bounce)
{
    size_t step = cast_step(r);

    return npyio__alloc(&r->mem, (n < step ? (size_t)n : step) *
                                     r->header->dtype->itemsize,
                        "conversion buffer", bounce);
}

/* npyio__cast_blocks at the stream's position, with a bounce buffer of
 * its own. */
npyio_status npyio__read_cast(npyio_reader *r, npyio__converter *c,
                              bool reorder, uint64_t pos, uint64_t n,
                              unsigned char *dst, reorder_block *block)
{
    void *bounce = NULL;
    npyio_status st = npyio__cast_bounce(r, n, &bounce);

    if (st == NPYIO_OK)
        st = npyio__cast_blocks(r, c, reorder, NULL, pos, n, dst, bounce,
                                block);
    npyio__free(bounce);
    return st;
}

npyio_status npyio__refuse_pipe_reorder(const char *where)
{
    return npyio__fail(NPYIO_E_UNSUPPORTED, "%s: Fortran-order data in C "
                       "order needs a stream that can seek", where);
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
    uint64_t row = npyio__row_elements(h);
    bool fortran = npyio__header_fortran_data(h);
    void *band = NULL;
    npyio_status st = check_forward(r, fortran ? first * fs
                                               : first * row * fs);

    if (st != NPYIO_OK)
        return st;
    if (!fortran || reorder) {
        reorder_block block;

        npyio__block_open(r, reorder ? npyio__block_rows(r, count, 1) : 0,
                          first + count, &block);
        st = npyio__fail_reader(r, npyio__read_cast(r, c, reorder, first * row,
                                                    count * row, dst, &block));
        npyio__block_close(&block);
        return st;
    }
    st = npyio__alloc(&r->mem, (size_t)(count * row) * fs, "rows", &band);
    if (st == NPYIO_OK)
        st = npyio__fail_reader(r, npyio__read_band(r, c, first, count, band));
    if (st == NPYIO_OK)
        st = npyio__fail_reader(r, npyio__cast_apply(&r->cast, band, dst,
                                                     (size_t)(count * row),
                                                     first * row));
    npyio__free(band);
    return st;
}

/* The chunked pass's block, opened by its first chunk that npyio__reorders in
 * pieces (kept to the pass's end: see npyio__end_chunks). */
static void open_chunk_block(npyio_reader *r)
{
    uint64_t all = (uint64_t)r->header->shape[0];

    if (!r->chunk_block.opened)
        npyio__block_open(r, npyio__block_rows(r, all, 1), all,
                          &r->chunk_block);
}

/* The next chunk of a conversion: as many whole elements of the type as
 * fit (in C order for reordered data, inside rows as it comes). */
static npyio_status read_chunk_cast(npyio_reader *r, void *dst, size_t cap,
                                    uint32_t flags, size_t *got)
{
    static const char where[] = "npyio_reader_read_chunk";
    bool reorder = npyio__reorders(r, flags);
    uint64_t row = npyio__row_elements(r->header), n;
    uint64_t left = npyio__element_count(r->header) - r->chunk_pos;
    size_t fs = r->header->dtype->itemsize, ts = r->cast.to.size;
    npyio_status st;

    if (reorder && !npyio__reader_seekable(r))
        return npyio__refuse_pipe_reorder(where);
    if (left == 0)
        return end_of_pass(r, flags);
    if (cap < ts)
        return npyio__fail(NPYIO_E_BUFFER_TOO_SMALL, "%s: one element is %zu "
                           "bytes, the buffer %zu", where, ts, cap);
    n = cap / ts < left ? cap / ts : left;
    npyio__enter_state(r, CALL_CHUNK, flags);
    st = check_forward(r, reorder ? r->chunk_pos / row * fs
                                  : r->chunk_pos * fs);
    if (st == NPYIO_OK && reorder)
        open_chunk_block(r);
    if (st == NPYIO_OK)
        st = chunk_converter(r, flags,
                             r->chunk_block.rows != 0
                                 ? r->chunk_block.rows
                                 : npyio__cast_band_rows(r));
    if (st == NPYIO_OK)
        st = npyio__fail_reader(r, npyio__read_cast(r, &r->chunks, reorder,
                                                    r->chunk_pos, n, dst,
                                                    &r->chunk_block));
    if (st == NPYIO_OK) {
        r->chunk_pos += n;
        *got = (size_t)(n * ts);
    }
    return st;
}

/* ---- chunks and rows ------------------------------------------------------------------ */

/* Elements in one row along axis 0 (the product of the other axes). */
uint64_t npyio__row_elements(const npyio_header *h)
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
    if (offset >= r->data_pos || npyio__reader_seekable(r))
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
    size_t row_bytes = (size_t)npyio__row_elements(h) * itemsize;
    size_t len = (size_t)count * row_bytes;
    npyio_status st;

    if (len == 0)
        return NPYIO_OK;
    if (npyio__header_fortran_data(h)) {
        st = check_forward(r, first * itemsize); /* its first run */
        if (st == NPYIO_OK)
            st = npyio__fail_reader(r,
                                    npyio__read_band(r, c, first, count, dst));
        return st;
    }
    st = check_forward(r, first * row_bytes);
    if (st != NPYIO_OK)
        return st;
    st = npyio__seek_data(r, first * row_bytes);
    if (st == NPYIO_OK)
        st = read_data(r, dst, len);
    if (st == NPYIO_OK)
        npyio__converter_swap(c, dst, len);
    return npyio__fail_reader(r, st);
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
    uint64_t row = npyio__row_elements(r->header),
             all = (uint64_t)r->header->shape[0];
    bool sequential = first == r->rows_next, held;
    npyio__converter c;

    r->rows_next = first + count;
    if (r->casting || !npyio__reorders(r, flags) || !npyio__reader_seekable(r))
        return false; /* (a pipe reads each band once, forward) */
    if (b->opened && r->rows_flags != flags)
        npyio__block_close(b); /* filled for other flags */
    held = b->rows != 0 && first * row >= b->first &&
           (first + count) * row <= b->first + b->count;
    if (!held &&
        !(sequential && first > 0 && count < npyio__block_rows(r, all, 1)))
        return false;
    if (!b->opened) {
        npyio__block_open(r, npyio__block_rows(r, all, 1), all, b);
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
    *st = npyio__make_converter(r, flags, true, b->rows, &c);
    if (*st == NPYIO_OK) {
        *st = npyio__fail_reader(r, block_copy(r, &c, b, first * row, count * row,
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
    npyio_status st = npyio__check_numbers(reader, flags, where);

    if (st != NPYIO_OK)
        return st;
    h = reader->header;
    if (h->ndim == 0)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: a 0-d array has no "
                           "rows", where);
    if (first < 0 || count < 0 || first > h->shape[0] ||
        count > h->shape[0] - first)
        return npyio__fail_rows(where, first, count, h->shape[0], "the");
    need = (uint64_t)count * npyio__row_elements(h) *
           (reader->casting ? reader->cast.to.size : h->dtype->itemsize);
    if (need > cap)
        return npyio__fail(NPYIO_E_BUFFER_TOO_SMALL, "%s: %lld rows are "
                           "%llu bytes, the buffer %zu", where,
                           (long long)count, (unsigned long long)need, cap);
    if (dst == NULL && need > 0)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: dst is NULL", where);
    st = npyio__check_state(reader, CALL_ROWS, flags, where);
    if (st != NPYIO_OK || need == 0)
        return st;
    npyio__enter_state(reader, CALL_ROWS, flags);
    if (read_rows_blocked(reader, flags, (uint64_t)first, (uint64_t)count,
                          dst, &st))
        return st;
    st = npyio__make_converter(reader, flags, true, (uint64_t)count, &c);
    if (st == NPYIO_OK && reader->casting)
        st = read_rows_cast(reader, &c, npyio__reorders(reader, flags),
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
    st = npyio__make_converter(r, flags, npyio__reorders(r, flags), rows,
                               &r->chunks);
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
    uint64_t row = npyio__row_elements(h), total = (uint64_t)h->shape[0] * row;
    uint64_t left = total - r->chunk_pos, n, end, first, last;
    /* Through the block only if it holds more than a chunk: else each
     * chunk reads its rows once anyway, and the block is only a copy. */
    bool blocked =
        cap < r->block_bytes &&
        npyio__block_rows(r, (uint64_t)h->shape[0], 1) * row * itemsize > cap;
    npyio_status st;

    if (!npyio__reader_seekable(r))
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
    npyio__enter_state(r, CALL_CHUNK, flags);
    if (blocked)
        open_chunk_block(r);
    blocked = blocked && r->chunk_block.rows != 0;
    st = chunk_converter(r, flags, blocked ? r->chunk_block.rows
                                           : cap / itemsize / row + 2);
    if (st == NPYIO_OK && blocked)
        st = npyio__fail_reader(r, block_copy(r, &r->chunks, &r->chunk_block,
                                              r->chunk_pos, n, dst));
    else if (st == NPYIO_OK)
        st = npyio__fail_reader(
            r, read_band_part(r, &r->chunks, first, last - first + 1,
                              r->chunk_pos % row, (end - 1) % row + 1, dst));
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
    st = npyio__check_numbers(reader, flags, where);
    if (st != NPYIO_OK)
        return st;
    if (dst == NULL && cap > 0)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: dst is NULL", where);
    st = npyio__check_state(reader, CALL_CHUNK, flags, where);
    if (st != NPYIO_OK)
        return st;
    h = reader->header;
    itemsize = h->dtype->itemsize;
    if (reader->casting)
        return read_chunk_cast(reader, dst, cap, flags, got);
    if (npyio__reorders(reader, flags))
        return read_chunk_reordered(reader, dst, cap, flags, got);
    left = (uint64_t)h->nbytes - reader->chunk_pos;
    if (left == 0)
        return end_of_pass(reader, flags);
    if (cap < itemsize)
        return npyio__fail(NPYIO_E_BUFFER_TOO_SMALL, "%s: one element is %zu "
                           "bytes, the buffer %zu", where, itemsize, cap);
    n = cap / itemsize * itemsize < left ? cap / itemsize * itemsize : left;
    npyio__enter_state(reader, CALL_CHUNK, flags);
    st = check_forward(reader, reader->chunk_pos);
    if (st == NPYIO_OK)
        st = chunk_converter(reader, flags & NPYIO_READ_NATIVE, 0);
    if (st != NPYIO_OK)
        return st;
    st = npyio__seek_data(reader, reader->chunk_pos);
    if (st == NPYIO_OK)
        st = read_data(reader, dst, (size_t)n);
    if (st == NPYIO_OK) {
        npyio__converter_swap(&reader->chunks, dst, (size_t)n);
        reader->chunk_pos += n;
        *got = (size_t)n;
    }
    return npyio__fail_reader(reader, st);
}

npyio_status npyio_reader_read_chunk(npyio_reader *reader, void *dst,
                                     size_t cap, uint32_t flags, size_t *got)
{
    return npyio__as_called(reader_read_chunk_body(reader, dst, cap, flags, got),
                            "npyio_reader_read_chunk");
}
