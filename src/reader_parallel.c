/*
 * reader_parallel.c - whole reads on several threads (NPYIO_LIMIT_THREADS):
 * the data cut into parts, each read with positioned reads and converted
 * by one thread into its own range of the caller's buffer. The whole
 * reads of reader.c come here first; the parts read through the data
 * section of reader_rows.c (reader_core.h).
 */
#include "convert.h"
#include "error.h"
#include "reader_core.h"
#include "stream.h"
#include "threads.h"

#include <string.h>

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
    npyio__converter *conv;       /* npyio__reorders: one per part */
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
        return npyio__pread_data(r, dst, nbytes, a * fs);
    step = npyio__block_bytes(fs);
    while (st == NPYIO_OK && done < nbytes) {
        size_t want = nbytes - done < step ? nbytes - done : step;

        st = npyio__pread_data(r, dst + done, want, a * fs + done);
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
        p->status[k] = npyio__cast_blocks(
            r, c, p->reorder, true, a * p->per_unit, (b - a) * p->per_unit,
            p->dst + (size_t)(a * p->per_unit) * r->cast.to.size, p->bounce[k],
            &p->block[k]);
    else if (p->reorder)
        p->status[k] = npyio__read_band(
            r, c, a, b - a,
            p->dst + (size_t)(a * p->per_unit) * r->header->dtype->itemsize);
    else
        p->status[k] = part_flat(p, a, b);
}

/* Each part's converter (npyio__reorders) and bounce buffer (conversions),
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
            npyio__block_open(r,
                              npyio__block_rows(r, rows, (unsigned)p->count),
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

    for (k = 0; k < p->count; k++) {
        npyio__free(p->bounce[k]);
        npyio__block_close(&p->block[k]);
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
npyio_status npyio__read_parallel(npyio_reader *r, uint32_t flags,
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
    p.reorder = npyio__reorders(r, flags);
    p.dst = dst;
    p.per_unit = p.reorder ? npyio__row_elements(h) : 1;
    p.units = npyio__element_count(h) / p.per_unit;
    p.count = npyio__part_count(p.units,
                                (size_t)p.per_unit * h->dtype->itemsize,
                                r->threads);
    /* Small data never asks what the stream is (see
     * npyio__reader_seekable). */
    if (p.count < 2 || !npyio__reader_positioned(r) ||
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
        st = npyio__seek_data(r, (uint64_t)h->nbytes);
    *done = st == NPYIO_OK;
    return st;
}
