/*
 * print.c - `npyio print` (see print.h).
 *
 * The text follows NumPy's arrayprint module (repr() of an ndarray with the
 * default print options): the same bracket nesting and hanging indents,
 * lines wrapped at 75 columns, one width per array for its elements, the
 * same choice of float digits, and the same summarising with "...".
 *
 * It works in three steps, so that memory stays bounded:
 *
 *  1. gather: decide which elements will be shown (all of them, or the
 *     first and last EDGE along each long axis), stream the data through a
 *     chunk buffer in file order and copy only those into a small C-order
 *     array of the shown elements;
 *  2. scan: pass over the shown elements to settle each formatter's widths,
 *     as NumPy's format classes do from the data they are about to print;
 *  3. layout: write the brackets, separators and wrapped lines, formatting
 *     each element as it is reached.
 *
 * Only the public API of npyio.h is used, and no libm function (the tool
 * is not linked with libm): the few float helpers needed are written in
 * values.c.
 *
 * The text of elements and dtypes comes from format.c (with values.c for
 * numbers and dates, text.c for strings); this file decides which elements
 * are shown, gathers them and lays them out.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "format.h"
#include "print.h"
#include "text.h"

#define LINE_WIDTH 75     /* NumPy's default linewidth */
#define EDGE 3            /* NumPy's default edgeitems */
#define PREFIX "array("
#define PREFIX_LEN 6

/* What we are willing to hold and print. The shown elements are kept in
 * memory (they must be, to settle common widths before printing), so a
 * huge --max or a pathological shape is refused rather than allocated. */
#define SHOW_MAX_COUNT INT64_C(10000000)
#define SHOW_MAX_BYTES ((uint64_t)256 << 20)
/* SHOW_MAX_WORK, elements + brackets formatted, is in format.h */
#define CHUNK_BYTES ((size_t)4 << 20)

/* ---- which elements are shown, and gathering them ----------------------- */

/* The shown part of the array: per axis, whether it is summarised and how
 * many indices are kept; the kept elements in C order. */
typedef struct shown {
    int ndim;
    const int64_t *shape;
    int64_t count;
    int *summ;         /* axis longer than 2 * EDGE, when summarising */
    int64_t *kept;     /* indices kept along each axis */
    int64_t *kstride;  /* C strides of the kept array, in elements */
    int64_t nkept;
    size_t itemsize;
    unsigned char *data;
} shown;

static int fail(const char *name, const char *what)
{
    return cli_error(name, "%s", what);
}

static int fail_lib(const char *name)
{
    return cli_fail(name);
}

/* Work out the kept shape and refuse what would not fit in bounded memory
 * or time. */
static int plan(shown *s, const npyio_header *h, int64_t max,
                const fmt *f, const char *name)
{
    int d;
    uint64_t n = 1;
    size_t nd;

    s->ndim = npyio_header_ndim(h);
    s->shape = npyio_header_shape(h);
    s->count = npyio_header_count(h);
    s->itemsize = npyio_dtype_itemsize(npyio_header_dtype(h));
    nd = (size_t)s->ndim + 1;
    s->summ = calloc(nd, sizeof *s->summ);
    s->kept = calloc(nd, sizeof *s->kept);
    s->kstride = calloc(nd, sizeof *s->kstride);
    if (s->summ == NULL || s->kept == NULL || s->kstride == NULL)
        return fail(name, "out of memory");
    for (d = 0; d < s->ndim; d++) {
        s->summ[d] = s->count > max && s->shape[d] > 2 * EDGE;
        s->kept[d] = s->summ[d] ? 2 * EDGE : s->shape[d];
        n = s->kept[d] == 0 ? 0 : fmt_mul_sat(n, (uint64_t)s->kept[d]);
    }
    if (s->count == 0)
        n = 0;
    if (n > (uint64_t)SHOW_MAX_COUNT ||
        fmt_mul_sat(n, s->itemsize) > SHOW_MAX_BYTES ||
        fmt_mul_sat(n, fmt_work(f)) > SHOW_MAX_WORK) {
        return cli_error(name,
                         "showing %s%" PRIu64 " elements of %" PRIu64
                         " bytes is more than print holds in memory; use a "
                         "smaller --max",
                         n == UINT64_MAX ? "over " : "", n,
                         (uint64_t)s->itemsize);
    }
    s->nkept = (int64_t)n;
    for (d = s->ndim - 1; d >= 0 && n > 0; d--)
        s->kstride[d] = d == s->ndim - 1 ? 1 : s->kstride[d + 1] * s->kept[d + 1];
    s->data = calloc((size_t)n * s->itemsize + 1, 1);
    if (s->data == NULL)
        return fail(name, "out of memory");
    return 0;
}

/* Whether index i along axis d falls in the summarised-away middle. */
static int skipped(const shown *s, int d, int64_t i)
{
    return s->summ[d] && i >= EDGE && i < s->shape[d] - EDGE;
}

/* Where the element at multi-index idx lands in the kept array. */
static int64_t kept_offset(const shown *s, const int64_t *idx)
{
    int64_t off = 0;
    int d;

    for (d = 0; d < s->ndim; d++) {
        int64_t i = idx[d];

        if (s->summ[d] && i >= s->shape[d] - EDGE)
            i -= s->shape[d] - 2 * EDGE;
        off += i * s->kstride[d];
    }
    return off;
}

/* Step idx to the next element in file order (order[] lists the axes from
 * fastest to slowest), keeping count of axes in their skipped middle. */
static void advance(const shown *s, int64_t *idx, const int *order,
                    int *nskip)
{
    int j;

    for (j = 0; j < s->ndim; j++) {
        int d = order[j];
        int was = skipped(s, d, idx[d]);

        if (++idx[d] < s->shape[d]) {
            *nskip += skipped(s, d, idx[d]) - was;
            return;
        }
        idx[d] = 0;
        *nskip -= was;
    }
}

/* Stream the data in file order through a bounded buffer, keeping only the
 * shown elements. Fortran-order data is walked in its own order rather
 * than asking the library to reorder it, which would need a seekable
 * input and a pass over the file per chunk. */
static int gather(shown *s, npyio_reader *r, int fortran, const char *name)
{
    size_t cap;
    uint64_t nbytes = (uint64_t)s->count * s->itemsize;
    int64_t *idx = NULL, done = 0;
    int *order = NULL, nskip = 0, rc = 0, j;
    unsigned char *buf = NULL;

    if (s->count == 0 || s->itemsize == 0)
        return 0; /* no data bytes to read */
    cap = CHUNK_BYTES / s->itemsize * s->itemsize;
    if (cap == 0)
        cap = s->itemsize;
    if (nbytes < cap)
        cap = (size_t)nbytes;
    buf = malloc(cap);
    idx = calloc((size_t)s->ndim + 1, sizeof *idx);
    order = calloc((size_t)s->ndim + 1, sizeof *order);
    if (buf == NULL || idx == NULL || order == NULL) {
        rc = fail(name, "out of memory");
        goto done;
    }
    for (j = 0; j < s->ndim; j++)
        order[j] = fortran ? j : s->ndim - 1 - j;
    while (done < s->count && rc == 0) {
        size_t got = 0, i, n;
        npyio_status st =
            npyio_reader_read_chunk(r, buf, cap, NPYIO_READ_NATIVE, &got);

        if (st == NPYIO_END) {
            rc = fail(name, "the data ends before the last element");
        } else if (st != NPYIO_OK) {
            rc = fail_lib(name);
        } else if (got == 0 || got % s->itemsize != 0) {
            rc = fail(name, "the library delivered a partial element");
        } else {
            n = got / s->itemsize;
            for (i = 0; i < n && done < s->count; i++, done++) {
                if (nskip == 0)
                    memcpy(s->data +
                               (size_t)kept_offset(s, idx) * s->itemsize,
                           buf + i * s->itemsize, s->itemsize);
                advance(s, idx, order, &nskip);
            }
        }
    }
done:
    free(buf);
    free(idx);
    free(order);
    return rc;
}

/* ---- layout ------------------------------------------------------------- */

/* The text being written: whole output in out (flushed as it grows), the
 * current wrapped line in line, one element in word. col is the width of
 * the output's last line, which decides where the dtype goes. */
typedef struct layout {
    FILE *file;
    const shown *s;
    const fmt *f;
    sbuf out, line, word;
    size_t col;
} layout;

static void put(layout *L, const char *t, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        L->col = t[i] == '\n' ? 0 : L->col + (((unsigned char)t[i] & 0xC0) != 0x80);
    sb_add(&L->out, t, n);
    if (L->out.len >= 65536 && !L->out.nomem) {
        fwrite(L->out.p, 1, L->out.len, L->file);
        L->out.len = 0;
    }
}

static void put_str(layout *L, const char *t) { put(L, t, strlen(t)); }

static void put_spaces(layout *L, size_t n)
{
    for (; n > 0; n--)
        put(L, " ", 1);
}

/* NumPy's _extendLine: start a new line at the hanging indent when the
 * word would pass the limit, unless the line holds nothing yet. */
static void row_word(layout *L, size_t *linew, const char *w, size_t n,
                     size_t hang, size_t limit)
{
    size_t ww = text_width(w, n);

    if (*linew + ww > limit && *linew > hang) {
        size_t len = L->line.len;

        while (len > 0 && L->line.p[len - 1] == ' ')
            len--;
        put(L, L->line.p, len);
        put(L, "\n", 1);
        L->line.len = 0;
        sb_fill(&L->line, ' ', hang);
        *linew = hang;
    }
    sb_add(&L->line, w, n);
    *linew += ww;
}

/* The innermost axis: elements separated by ", ", wrapped. The first
 * line's indent is virtual: its columns are taken by "array([[" already. */
static void emit_row(layout *L, int d, int64_t base)
{
    const shown *s = L->s;
    size_t hang = PREFIX_LEN + 1 + (size_t)d;
    size_t limit = LINE_WIDTH - 1 - (size_t)d - 1;
    size_t linew = hang;
    int64_t k;

    L->line.len = 0;
    for (k = 0; k < s->kept[d]; k++) {
        if (s->summ[d] && k == EDGE) {
            row_word(L, &linew, "...", 3, hang, limit);
            sb_str(&L->line, ", ");
            linew += 2;
        }
        L->word.len = 0;
        fmt_emit(L->f, s->data + (size_t)(base + k) * s->itemsize, &L->word);
        row_word(L, &linew, L->word.p ? L->word.p : "", L->word.len, hang,
                 limit);
        if (k + 1 < s->kept[d]) {
            sb_str(&L->line, ", ");
            linew += 2;
        }
    }
    put(L, L->line.p ? L->line.p : "", L->line.len);
}

/* One bracketed block along axis d: rows for the last axis, else nested
 * blocks separated by "," and one newline per axis below, at the hanging
 * indent. */
static void emit_block(layout *L, int d, int64_t base)
{
    const shown *s = L->s;
    int64_t t, items = s->kept[d] + (s->summ[d] ? 1 : 0);
    int nl;

    put(L, "[", 1);
    if (d == s->ndim - 1) {
        emit_row(L, d, base);
    } else {
        for (t = 0; t < items; t++) {
            int64_t k = s->summ[d] && t > EDGE ? t - 1 : t;

            if (t > 0)
                put_spaces(L, PREFIX_LEN + 1 + (size_t)d);
            if (s->summ[d] && t == EDGE)
                put(L, "...", 3);
            else
                emit_block(L, d + 1, base + k * s->kstride[d]);
            if (t + 1 < items) {
                put(L, ",", 1);
                for (nl = d + 1; nl < s->ndim; nl++)
                    put(L, "\n", 1);
            }
        }
    }
    put(L, "]", 1);
}

/* array(...) as NumPy's array_repr writes it. */
static void emit_repr(layout *L, const npyio_dtype *dt)
{
    const shown *s = L->s;
    int show_dtype = !(fmt_dtype_implied(dt) && s->count > 0);
    sbuf d = {0};

    put_str(L, PREFIX);
    if (s->count == 0) {
        put_str(L, "[]");
        if (s->ndim != 1) {
            sbuf shape = {0};

            fmt_put_shape(&shape, s->ndim, s->shape);
            put_str(L, ", shape=");
            put(L, shape.p ? shape.p : "", shape.len);
            L->out.nomem |= shape.nomem;
            free(shape.p);
        }
    } else if (s->ndim == 0) {
        fmt_emit(L->f, s->data, &L->word);
        put(L, L->word.p ? L->word.p : "", L->word.len);
    } else {
        emit_block(L, 0, 0);
    }
    if (!show_dtype) {
        put_str(L, ")\n");
        return;
    }
    put_str(L, ",");
    sb_str(&d, "dtype=");
    fmt_put_dtype_repr(&d, dt);
    sb_chr(&d, ')');
    /* the dtype moves to its own line rather than pass the line width */
    if (L->col + text_width(d.p ? d.p : "", d.len) + 1 > LINE_WIDTH)
        put_str(L, "\n      ");
    else
        put_str(L, " ");
    put(L, d.p ? d.p : "", d.len);
    put_str(L, "\n");
    L->out.nomem |= d.nomem;
    free(d.p);
}

int cli_print(npyio_reader *reader, const char *name, int64_t max, FILE *out)
{
    const npyio_header *h = npyio_reader_header(reader);
    const npyio_dtype *dt = npyio_header_dtype(h);
    shown s;
    layout L;
    fmt *f = NULL;
    int64_t i;
    int rc;

    memset(&s, 0, sizeof s);
    memset(&L, 0, sizeof L);
    if (dt == NULL)
        return fail_lib(name);
    if (npyio_dtype_has_objects(dt))
        return fail(name, "the array holds Python objects (a pickle), "
                          "which npyio does not unpickle");
    if (max < 0)
        max = 0;
    rc = fmt_new(dt, npyio_header_ndim(h) == 0, &f);
    if (rc != 0) {
        rc = fail(name, rc == -2   ? "out of memory"
                        : rc == -3 ? "a subarray field is too large to print"
                                   : "the dtype's layout is inconsistent");
        goto done;
    }
    if ((rc = plan(&s, h, max, f, name)) != 0 ||
        (rc = gather(&s, reader, npyio_header_is_fortran_order(h), name)) != 0)
        goto done;
    for (i = 0; i < s.nkept; i++)
        fmt_scan(f, s.data + (size_t)i * s.itemsize, 1);
    fmt_settle(f, 1);
    for (i = 0; i < s.nkept; i++)
        fmt_scan(f, s.data + (size_t)i * s.itemsize, 2);
    fmt_settle(f, 2);

    L.file = out;
    L.s = &s;
    L.f = f;
    emit_repr(&L, dt);
    if (L.out.nomem || L.line.nomem || L.word.nomem)
        rc = fail(name, "out of memory");
    else if (L.out.len > 0)
        fwrite(L.out.p, 1, L.out.len, out);
    free(L.out.p);
    free(L.line.p);
    free(L.word.p);
done:
    fmt_free(f);
    free(s.summ);
    free(s.kept);
    free(s.kstride);
    free(s.data);
    return rc;
}

/* ---- the command -------------------------------------------------------- */

static int print_one(const cli_args *a, cli_input *in)
{
    return cli_print(in->reader, in->name, a->max, stdout);
}

/* `npyio print FILE [MEMBER]`: one array, an .npy file or a member. */
int cli_print_command(const cli_args *a)
{
    return cli_one_input(a, print_one);
}
