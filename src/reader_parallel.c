/*
 * reader_parallel.c - whole reads on several threads (NPYIO_LIMIT_THREADS):
 * the data cut into parts, each read with positioned reads and converted
 * by one thread into its own range of the caller's buffer, on the
 * stream's read in parts (stream.h), .npy files and stored archive
 * members alike. The whole reads of reader.c come here first; the parts
 * read through the data section of reader_rows.c (reader_core.h).
 */
#include "convert.h"
#include "error.h"
#include "reader_core.h"
#include "stream.h"
#include "threads.h"

#include <string.h>

/*
 * A whole read cut into parts: contiguous ranges of units (elements, or
 * rows when Fortran data is reordered), each read with pread and
 * converted by one thread straight into its own range of dst (so the
 * thread that fills fresh pages touches them first), on the stream's
 * read in parts (npyio__stream_read_parts). Parts share only what no one
 * writes: the reader's header, stream and plans.
 */
typedef struct parts {
    npyio_reader *r;
    const npyio__converter *swap; /* flat reads: the swap plan */
    npyio__converter *conv;       /* npyio__reorders: one per part */
    void *bounce[NPYIO__MAX_PARTS]; /* conversions: one per part */
    reorder_block block[NPYIO__MAX_PARTS]; /* reordered conversions */
    bool reorder;
    size_t made; /* converters made */
    uint64_t units;
    uint64_t per_unit; /* elements per unit */
    unsigned char *dst;
    npyio__stream_parts read;
} parts;

/* Elements [a, b) as stored, read and swapped a block at a time. */
static npyio_status part_flat(const parts *p, npyio__stream_part *part,
                              uint64_t a, uint64_t b)
{
    npyio_reader *r = p->r;
    size_t fs = r->header->dtype->itemsize;
    size_t nbytes = (size_t)((b - a) * fs), done = 0, step;
    unsigned char *dst = p->dst + (size_t)a * fs;
    npyio_status st = NPYIO_OK;

    if (p->swap->plan.count == 0)
        return npyio__pread_data(r, part, dst, nbytes, a * fs);
    step = npyio__block_bytes(fs);
    while (st == NPYIO_OK && done < nbytes) {
        size_t want = nbytes - done < step ? nbytes - done : step;

        st = npyio__pread_data(r, part, dst + done, want, a * fs + done);
        if (st == NPYIO_OK)
            npyio__converter_swap(p->swap, dst + done, want);
        done += want;
    }
    return st;
}

static void run_part(void *ctx, size_t k, npyio__stream_part *part)
{
    parts *p = ctx;
    npyio_reader *r = p->r;
    uint64_t a = part->first, b = part->end;
    npyio__converter *c = p->conv != NULL ? &p->conv[k] : NULL;

    if (r->casting)
        part->status = npyio__cast_blocks(
            r, c, p->reorder, part, a * p->per_unit, (b - a) * p->per_unit,
            p->dst + (size_t)(a * p->per_unit) * r->cast.to.size, p->bounce[k],
            &p->block[k]);
    else if (p->reorder)
        part->status = npyio__read_band(
            r, c, a, b - a,
            p->dst + (size_t)(a * p->per_unit) * r->header->dtype->itemsize);
    else
        part->status = part_flat(p, part, a, b);
}

/* Each part's converter (npyio__reorders) and bounce buffer (conversions),
 * made on the calling thread: the allocator is called from it only. */
static npyio_status parts_prepare(parts *p, uint32_t flags)
{
    npyio_reader *r = p->r;
    npyio_status st = NPYIO_OK;
    size_t k;

    if (p->reorder)
        st = npyio__alloc_array(&r->mem, p->read.count, sizeof *p->conv,
                                "converters", (void **)&p->conv);
    for (k = 0; st == NPYIO_OK && k < p->read.count; k++) {
        uint64_t end = p->read.part[k].end;
        uint64_t rows = end - p->read.part[k].first;
        uint64_t band = rows;

        if (p->reorder && r->casting) { /* the threads share the block's
                                           bytes */
            npyio__block_open(r,
                              npyio__block_rows(r, rows,
                                                (unsigned)p->read.count),
                              end, &p->block[k]);
            band = p->block[k].rows != 0 ? p->block[k].rows
                                         : npyio__cast_band_rows(r);
        }
        if (p->reorder) {
            st = npyio__make_converter(r, flags, true, band, &p->conv[k]);
            if (st != NPYIO_OK)
                break;
            p->made++;
        }
        if (r->casting)
            st = npyio__cast_bounce(r, rows * p->per_unit, &p->bounce[k]);
    }
    return st;
}

static void parts_free(parts *p)
{
    size_t k;

    for (k = 0; k < p->read.count; k++) {
        npyio__free(p->bounce[k]);
        npyio__block_close(&p->block[k]);
    }
    for (k = 0; k < p->made; k++)
        npyio__converter_free(&p->conv[k]);
    npyio__free(p->conv);
}

/*
 * Whether the whole read goes on several threads (the thread policy's
 * count, npyio__thread_count, above 1), and its parts cut if so. Small
 * data never asks what the stream is (see npyio__reader_seekable). A
 * stream whose reads keep a sum (an archive member's CRC) is read in
 * parts only in file order: reordered reads jump across the parts.
 */
static bool parts_cut(parts *p)
{
    npyio_reader *r = p->r;
    const npyio_header *h = r->header;
    uint64_t work = (uint64_t)h->nbytes;
    bool positioned = npyio__thread_count(r->thread_limit, work, true) > 1 &&
                      npyio__reader_positioned(r) &&
                      npyio__stream_reads_in_parts(r->stream) &&
                      (!p->reorder || !npyio__stream_has_finish(r->stream));
    unsigned threads = npyio__thread_count(r->thread_limit, work,
                                           positioned);

    if (threads < 2)
        return false;
    npyio__stream_parts_cut(&p->read, r->stream, r->data_start, p->units,
                            (size_t)p->per_unit * h->dtype->itemsize,
                            threads);
    return p->read.count > 1;
}

/*
 * The whole read on several threads, where it can be (parts_cut). *done
 * false: read it on the calling thread, also after a part failed (that
 * read reports the failure, and the buffer up to it, exactly as one
 * thread does), a member's parts did not add up to its CRC-32 (the same),
 * or memory for the parts ran out. On success a read in file order
 * leaves the stream after the data, as one thread does.
 */
npyio_status npyio__read_parallel(npyio_reader *r, uint32_t flags,
                                  const npyio__converter *swap, void *dst,
                                  bool *done)
{
    const npyio_header *h = r->header;
    npyio__saved_message saved;
    bool whole = false;
    parts p;
    npyio_status st;

    *done = false;
    if (h->nbytes == 0)
        return NPYIO_OK;
    memset(&p, 0, sizeof p);
    p.r = r;
    p.swap = swap;
    p.reorder = npyio__reorders(r, flags);
    p.dst = dst;
    p.per_unit = p.reorder ? npyio__row_elements(h) : 1;
    p.units = npyio__element_count(h) / p.per_unit;
    if (!parts_cut(&p))
        return NPYIO_OK;
    npyio__message_save(&saved);
    st = parts_prepare(&p, flags);
    if (st == NPYIO_OK)
        whole = npyio__stream_read_parts(&p.read, run_part, &p);
    parts_free(&p);
    if (st != NPYIO_OK) { /* no memory for the parts: one thread */
        npyio__message_restore(&saved);
        return NPYIO_OK;
    }
    if (!whole)
        return NPYIO_OK;
    if (!p.reorder)
        st = npyio__seek_data(r, (uint64_t)h->nbytes);
    *done = st == NPYIO_OK;
    return st;
}
