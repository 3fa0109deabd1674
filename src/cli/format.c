/*
 * format.c - element formatters and dtype text (see format.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "values.h"

/* ---- element formatters -------------------------------------------------- */

typedef enum {
    K_BOOL,
    K_INT,
    K_UINT,
    K_FLOAT,
    K_COMPLEX,
    K_BYTES,
    K_STR,
    K_VOID,
    K_DATETIME,
    K_TIMEDELTA,
    K_RECORD,
    K_SUBARRAY,
    K_RAW
} fkind;

typedef struct field {
    size_t offset;
    fmt *f;
} field;

/* How one dtype is printed, with the state NumPy's format classes keep:
 * widths gathered from all the values shown. Records and subarrays hold
 * one formatter per field, or one for their base. */
struct fmt {
    fkind kind;
    size_t itemsize;
    int zero_d;        /* in a 0-d array: bools get no alignment space */
    size_t width;      /* right-aligned kinds: the widest text */
    flfmt re, im;      /* K_FLOAT: re; K_COMPLEX: both */
    int unit;          /* datetimes: index in unit_names, -1 generic */
    int64_t mult;
    size_t nfields;    /* K_RECORD */
    field *fields;
    int ndim;          /* K_SUBARRAY: the shape, and the base formatter */
    const int64_t *shape;
    int64_t count;
    fmt *base;
    uint64_t work;     /* elements and brackets one value costs to print */
};

void fmt_free(fmt *f)
{
    size_t i;

    if (f == NULL)
        return;
    for (i = 0; i < f->nfields; i++)
        fmt_free(f->fields[i].f);
    free(f->fields);
    fmt_free(f->base);
    free(f);
}

uint64_t fmt_mul_sat(uint64_t a, uint64_t b)
{
    if (a != 0 && b > UINT64_MAX / a)
        return UINT64_MAX;
    return a * b;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint64_t fmt_work(const fmt *f) { return f->work; }

/* The scalar kinds: which printing family, and for floats whether this
 * host has the type (long doubles of another platform print as raw hex). */
static void fmt_scalar(fmt *f, const npyio_dtype *dt)
{
    size_t n = f->itemsize;

    switch (npyio_dtype_kind(dt)) {
    case NPYIO_KIND_BOOL:
        f->kind = K_BOOL;
        break;
    case NPYIO_KIND_INT:
    case NPYIO_KIND_UINT:
        f->kind = (n == 1 || n == 2 || n == 4 || n == 8)
                      ? (npyio_dtype_kind(dt) == NPYIO_KIND_INT ? K_INT
                                                                : K_UINT)
                      : K_RAW;
        break;
    case NPYIO_KIND_FLOAT:
    case NPYIO_KIND_COMPLEX:
        if (npyio_dtype_kind(dt) == NPYIO_KIND_COMPLEX)
            n /= 2;
        f->kind = npyio_dtype_kind(dt) == NPYIO_KIND_FLOAT ? K_FLOAT
                                                           : K_COMPLEX;
        f->re.prec = n == 2 ? FP_HALF : n == 4 ? FP_FLOAT : n == 8 ? FP_DOUBLE
                     : n == sizeof(long double) ? FP_LONG : -1;
        if (f->re.prec < 0)
            f->kind = K_RAW;
        f->im.prec = f->re.prec;
        f->im.plus = 1;
        break;
    case NPYIO_KIND_BYTES:
        f->kind = K_BYTES;
        break;
    case NPYIO_KIND_STR:
        f->kind = K_STR;
        break;
    case NPYIO_KIND_DATETIME:
    case NPYIO_KIND_TIMEDELTA: {
        const char *u = npyio_dtype_datetime_unit(dt);

        f->kind = npyio_dtype_kind(dt) == NPYIO_KIND_DATETIME ? K_DATETIME
                                                              : K_TIMEDELTA;
        f->unit = val_time_unit(u);
        f->mult = npyio_dtype_datetime_multiplier(dt);
        if (f->mult < 1)
            f->mult = 1;
        if (n != 8)
            f->kind = K_RAW;
        break;
    }
    case NPYIO_KIND_VOID:
        f->kind = K_VOID;
        break;
    default:
        f->kind = K_RAW;
        break;
    }
}

/* A subarray of shape (ndim, shape) of base: printing costs one bracket
 * pair per row at each level plus the elements. */
static int fmt_subarray(fmt *f, const npyio_dtype *base, int ndim,
                        const int64_t *shape)
{
    uint64_t rows = 1, work = 0;
    int d, rc;

    f->kind = K_SUBARRAY;
    f->ndim = ndim;
    f->shape = shape;
    if ((rc = fmt_new(base, 0, &f->base)) != 0)
        return rc;
    for (d = 0; d < ndim; d++) {
        rows = fmt_mul_sat(rows, shape[d] < 0 ? 0 : (uint64_t)shape[d]);
        work = add_sat(work, rows);
    }
    if (rows > SHOW_MAX_WORK)
        return -3;
    f->count = (int64_t)rows;
    f->work = fmt_mul_sat(work, f->base->work);
    if (fmt_mul_sat((uint64_t)f->count, f->base->itemsize) >
                            f->itemsize)
        return -1; /* larger than the field: never read past it */
    return 0;
}

static int fmt_record(fmt *f, const npyio_dtype *dt, int zero_d)
{
    size_t i;

    f->kind = K_RECORD;
    f->nfields = npyio_dtype_field_count(dt);
    f->fields = calloc(f->nfields ? f->nfields : 1, sizeof *f->fields);
    if (f->fields == NULL)
        return -2;
    f->work = 1;
    for (i = 0; i < f->nfields; i++) {
        const npyio_dtype *fd = npyio_dtype_field_dtype(dt, i);
        int64_t off = npyio_dtype_field_offset(dt, i);
        int ndim = npyio_dtype_field_ndim(dt, i);
        fmt *sub;
        int rc;

        if (ndim > 0) {
            sub = calloc(1, sizeof *sub);
            if (sub == NULL)
                return -2;
            f->fields[i].f = sub;
            sub->itemsize = f->itemsize; /* bound until the size is known */
            rc = fmt_subarray(sub, fd, ndim, npyio_dtype_field_shape(dt, i));
            if (rc == 0)
                sub->itemsize = (size_t)sub->count * sub->base->itemsize;
        } else {
            rc = fmt_new(fd, zero_d, &f->fields[i].f);
            sub = f->fields[i].f;
        }
        if (rc != 0)
            return rc;
        if (off < 0 || (uint64_t)off > f->itemsize ||
            sub->itemsize > f->itemsize - (size_t)off)
            return -1; /* a field beyond the record: never read past it */
        f->fields[i].offset = (size_t)off;
        f->work = add_sat(f->work, sub->work);
    }
    return 0;
}

/* Build the formatter of dtype dt. Returns 0, -1 for a dtype whose layout
 * makes no sense, -2 when out of memory. */
int fmt_new(const npyio_dtype *dt, int zero_d, fmt **out)
{
    fmt *f = calloc(1, sizeof *f);
    int rc = 0;

    *out = f;
    if (f == NULL)
        return -2;
    f->itemsize = npyio_dtype_itemsize(dt);
    f->zero_d = zero_d;
    f->work = 1;
    if (npyio_dtype_kind(dt) == NPYIO_KIND_RECORD)
        rc = fmt_record(f, dt, zero_d);
    else if (npyio_dtype_kind(dt) == NPYIO_KIND_SUBARRAY)
        rc = fmt_subarray(f, npyio_dtype_subarray_base(dt),
                          npyio_dtype_subarray_ndim(dt),
                          npyio_dtype_subarray_shape(dt));
    else
        fmt_scalar(f, dt);
    return rc;
}

static uint64_t read_u64(const unsigned char *p, size_t n)
{
    uint8_t v8;
    uint16_t v16;
    uint32_t v32;
    uint64_t v64;

    switch (n) {
    case 1:
        memcpy(&v8, p, 1);
        return v8;
    case 2:
        memcpy(&v16, p, 2);
        return v16;
    case 4:
        memcpy(&v32, p, 4);
        return v32;
    default:
        memcpy(&v64, p, 8);
        return v64;
    }
}

/* A signed integer of n bytes: read_u64, then the sign extended. */
static int64_t read_i64(const unsigned char *p, size_t n)
{
    uint64_t u = read_u64(p, n);
    unsigned bits = n < 8 ? 8 * (unsigned)n : 64;
    int64_t v;

    if (bits < 64 && (u >> (bits - 1)) & 1)
        u |= ~UINT64_C(0) << bits;
    memcpy(&v, &u, sizeof v); /* two's complement, without a narrowing cast */
    return v;
}

/* Whether this host stores the least significant byte first. */
static int host_little(void)
{
    const uint16_t one = 1;
    unsigned char b;

    memcpy(&b, &one, 1);
    return b == 1;
}

/* The text of a right-aligned scalar, before alignment. */
static int aligned_text(const fmt *f, const unsigned char *p, char *buf,
                        size_t cap)
{
    size_t i, k = 2;

    switch (f->kind) {
    case K_INT:
        return snprintf(buf, cap, "%" PRId64, read_i64(p, f->itemsize));
    case K_UINT:
        return snprintf(buf, cap, "%" PRIu64, read_u64(p, f->itemsize));
    case K_DATETIME:
        return val_datetime_text(buf, cap, read_i64(p, 8), f->unit, f->mult);
    case K_TIMEDELTA:
        if (read_i64(p, 8) == NAT)
            return snprintf(buf, cap, "'NaT'");
        return snprintf(buf, cap, "%" PRId64, read_i64(p, 8));
    default:
        /* a number this host has no type for: its bytes, most significant
         * first, as hex */
        snprintf(buf, cap, "0x");
        for (i = 0; i < f->itemsize && k + 3 < cap; i++, k += 2) {
            size_t j = host_little() ? f->itemsize - 1 - i : i;

            snprintf(buf + k, cap - k, "%02x", p[j]);
        }
        return (int)k;
    }
}

#define TEXT_CAP 96 /* the longest aligned text: a 2**64 year, raw f32 */

/* Pass 1 gathers ranges and aligned widths; pass 2 the float digit counts,
 * which depend on the notation chosen after pass 1. */
void fmt_scan(fmt *f, const unsigned char *p, int pass)
{
    char buf[TEXT_CAP];
    size_t i;

    switch (f->kind) {
    case K_FLOAT:
    case K_COMPLEX: {
        long double re = val_read_float(p, f->re.prec);

        if (pass == 1)
            fl_scan1(&f->re, re);
        else
            fl_scan2(&f->re, re);
        if (f->kind == K_COMPLEX) {
            long double im = val_read_float(p + f->itemsize / 2, f->im.prec);

            if (pass == 1)
                fl_scan1(&f->im, im);
            else
                fl_scan2(&f->im, im);
        }
        break;
    }
    case K_INT:
    case K_UINT:
    case K_DATETIME:
    case K_TIMEDELTA:
    case K_RAW:
        if (pass == 1 && aligned_text(f, p, buf, sizeof buf) > 0 &&
            strlen(buf) > f->width)
            f->width = strlen(buf);
        break;
    case K_RECORD:
        for (i = 0; i < f->nfields; i++)
            fmt_scan(f->fields[i].f, p + f->fields[i].offset, pass);
        break;
    case K_SUBARRAY:
        for (i = 0; i < (size_t)f->count; i++)
            fmt_scan(f->base, p + i * f->base->itemsize, pass);
        break;
    default:
        break;
    }
}

void fmt_settle(fmt *f, int pass)
{
    size_t i;

    if (f->kind == K_FLOAT || f->kind == K_COMPLEX) {
        if (pass == 1) {
            fl_decide(&f->re);
            fl_decide(&f->im);
        } else {
            fl_settle(&f->re);
            fl_settle(&f->im);
        }
    }
    for (i = 0; i < f->nfields; i++)
        fmt_settle(f->fields[i].f, pass);
    if (f->base != NULL)
        fmt_settle(f->base, pass);
}

/* NumPy's SubArrayFormat: nested lists, never summarised. */
static void emit_subarray(const fmt *f, int d, const unsigned char *p,
                          sbuf *b)
{
    int64_t i;
    uint64_t inner = 1;
    int k;

    /* saturating: the product only matters when shape[d] > 0, and then it
     * is at most count */
    for (k = d + 1; k < f->ndim; k++)
        inner = fmt_mul_sat(inner, (uint64_t)f->shape[k]);
    sb_chr(b, '[');
    for (i = 0; i < f->shape[d]; i++) {
        if (i > 0)
            sb_str(b, ", ");
        if (d == f->ndim - 1)
            fmt_emit(f->base, p + (size_t)i * f->base->itemsize, b);
        else
            emit_subarray(f, d + 1,
                          p + (size_t)((uint64_t)i * inner) *
                                  f->base->itemsize,
                          b);
    }
    sb_chr(b, ']');
}

void fmt_emit(const fmt *f, const unsigned char *p, sbuf *b)
{
    char buf[TEXT_CAP];
    size_t i;
    int n;

    switch (f->kind) {
    case K_BOOL:
        sb_str(b, p[0] ? (f->zero_d ? "True" : " True") : "False");
        break;
    case K_FLOAT:
        fl_emit(&f->re, val_read_float(p, f->re.prec), b);
        break;
    case K_COMPLEX: {
        size_t start, end, spaces = 0;

        fl_emit(&f->re, val_read_float(p, f->re.prec), b);
        start = b->len;
        fl_emit(&f->im, val_read_float(p + f->itemsize / 2, f->im.prec), b);
        /* the j goes before the imaginary part's padding */
        for (end = b->len; !b->nomem && end > start && b->p[end - 1] == ' ';
             end--)
            spaces++;
        b->len = b->nomem ? b->len : end;
        sb_chr(b, 'j');
        sb_fill(b, ' ', spaces);
        break;
    }
    case K_BYTES:
        text_repr_bytes(b, p, f->itemsize);
        break;
    case K_STR:
        text_repr_ucs4(b, p, f->itemsize / 4);
        break;
    case K_VOID:
        text_repr_void(b, p, f->itemsize);
        break;
    case K_RECORD:
        sb_chr(b, '(');
        for (i = 0; i < f->nfields; i++) {
            if (i > 0)
                sb_str(b, ", ");
            fmt_emit(f->fields[i].f, p + f->fields[i].offset, b);
        }
        sb_str(b, f->nfields == 1 ? ",)" : ")");
        break;
    case K_SUBARRAY:
        emit_subarray(f, 0, p, b);
        break;
    default:
        n = aligned_text(f, p, buf, sizeof buf);
        if (n < 0)
            n = 0;
        if (f->width > (size_t)n)
            sb_fill(b, ' ', f->width - (size_t)n);
        sb_add(b, buf, strlen(buf));
        break;
    }
}

/* ---- dtype text ------------------------------------------------------------- */

/* Python's repr of a shape tuple: (3,) or (2, 3). */
void fmt_put_shape(sbuf *b, int ndim, const int64_t *shape)
{
    int d;

    sb_chr(b, '(');
    for (d = 0; d < ndim; d++)
        sb_fmt(b, d == 0 ? "%" PRId64 : ", %" PRId64, shape[d]);
    sb_str(b, ndim == 1 ? ",)" : ")");
}

/* "[25s]", "[ns]", or "" for the generic unit. */
static void put_time_unit(sbuf *b, const npyio_dtype *dt)
{
    const char *u = npyio_dtype_datetime_unit(dt);
    int64_t m = npyio_dtype_datetime_multiplier(dt);

    if (u == NULL || strcmp(u, "generic") == 0)
        return;
    if (m > 1)
        sb_fmt(b, "[%" PRId64 "%s]", m, u);
    else
        sb_fmt(b, "[%s]", u);
}

static void put_construction(sbuf *b, const npyio_dtype *dt);

/* NumPy's _scalar_str(short=True): '<f8', 'u1', '?', 'S3', '<U2'. */
static void put_scalar_str(sbuf *b, const npyio_dtype *dt)
{
    char bo = npyio_dtype_byteorder(dt);
    const char *order = bo == '<' ? "<" : bo == '>' ? ">" : "";
    size_t n = npyio_dtype_itemsize(dt);
    npyio_kind kind = npyio_dtype_kind(dt);

    switch (kind) {
    case NPYIO_KIND_BOOL:
        sb_str(b, "'?'");
        break;
    case NPYIO_KIND_OBJECT:
        sb_str(b, "'O'");
        break;
    case NPYIO_KIND_BYTES:
        sb_fmt(b, "'S%zu'", n);
        break;
    case NPYIO_KIND_STR:
        sb_fmt(b, "'%sU%zu'", order, n / 4);
        break;
    case NPYIO_KIND_VOID:
        sb_fmt(b, "'V%zu'", n);
        break;
    case NPYIO_KIND_DATETIME:
    case NPYIO_KIND_TIMEDELTA:
        sb_fmt(b, "'%s%c8", order, kind == NPYIO_KIND_DATETIME ? 'M' : 'm');
        put_time_unit(b, dt);
        sb_chr(b, '\'');
        break;
    default:
        sb_fmt(b, "'%s%c%zu'", order, (char)kind, n);
        break;
    }
}

/* Fields in order, back to back, filling the record: NumPy then writes
 * the list form; otherwise the dict form with offsets. */
static int record_is_packed(const npyio_dtype *dt)
{
    size_t i, n = npyio_dtype_field_count(dt);
    uint64_t end = 0;

    for (i = 0; i < n; i++) {
        const npyio_dtype *fd = npyio_dtype_field_dtype(dt, i);
        const int64_t *shape = npyio_dtype_field_shape(dt, i);
        uint64_t size = npyio_dtype_itemsize(fd);
        int d;

        for (d = 0; d < npyio_dtype_field_ndim(dt, i); d++)
            size = fmt_mul_sat(size, (uint64_t)shape[d]);
        if (npyio_dtype_field_offset(dt, i) != (int64_t)end)
            return 0;
        end = add_sat(end, size);
    }
    return end == npyio_dtype_itemsize(dt);
}

/* A field's type as NumPy's _construction_repr writes it. */
static void put_field_type(sbuf *b, const npyio_dtype *dt, size_t i,
                           int as_tuple)
{
    int ndim = npyio_dtype_field_ndim(dt, i);

    if (ndim > 0 && as_tuple)
        sb_chr(b, '(');
    put_construction(b, npyio_dtype_field_dtype(dt, i));
    if (ndim > 0) {
        sb_str(b, ", ");
        fmt_put_shape(b, ndim, npyio_dtype_field_shape(dt, i));
        if (as_tuple)
            sb_chr(b, ')');
    }
}

/* NumPy's str() of a structured dtype: the list or the dict form. */
static void put_struct_str(sbuf *b, const npyio_dtype *dt)
{
    size_t i, len, n = npyio_dtype_field_count(dt);
    const char *s;
    int titles = 0;

    if (record_is_packed(dt)) {
        sb_chr(b, '[');
        for (i = 0; i < n; i++) {
            sb_str(b, i > 0 ? ", (" : "(");
            if ((s = npyio_dtype_field_title(dt, i, &len)) != NULL) {
                sb_chr(b, '(');
                text_repr_utf8(b, s, len);
                sb_str(b, ", ");
            }
            s = npyio_dtype_field_name(dt, i, &len);
            text_repr_utf8(b, s ? s : "", s ? len : 0);
            if (npyio_dtype_field_title(dt, i, &len) != NULL)
                sb_chr(b, ')');
            sb_str(b, ", ");
            put_field_type(b, dt, i, 0);
            sb_chr(b, ')');
        }
        sb_chr(b, ']');
        return;
    }
    sb_str(b, "{'names': [");
    for (i = 0; i < n; i++) {
        s = npyio_dtype_field_name(dt, i, &len);
        if (i > 0)
            sb_str(b, ", ");
        text_repr_utf8(b, s ? s : "", s ? len : 0);
        titles |= npyio_dtype_field_title(dt, i, &len) != NULL;
    }
    sb_str(b, "], 'formats': [");
    for (i = 0; i < n; i++) {
        if (i > 0)
            sb_str(b, ", ");
        put_field_type(b, dt, i, 1);
    }
    sb_str(b, "], 'offsets': [");
    for (i = 0; i < n; i++)
        sb_fmt(b, i > 0 ? ", %" PRId64 : "%" PRId64,
               npyio_dtype_field_offset(dt, i));
    if (titles) {
        sb_str(b, "], 'titles': [");
        for (i = 0; i < n; i++) {
            if (i > 0)
                sb_str(b, ", ");
            if ((s = npyio_dtype_field_title(dt, i, &len)) != NULL)
                text_repr_utf8(b, s, len);
            else
                sb_str(b, "None");
        }
    }
    sb_fmt(b, "], 'itemsize': %zu}", npyio_dtype_itemsize(dt));
}

/* NumPy's _construction_repr(short=True). */
static void put_construction(sbuf *b, const npyio_dtype *dt)
{
    if (npyio_dtype_kind(dt) == NPYIO_KIND_RECORD) {
        put_struct_str(b, dt);
    } else if (npyio_dtype_kind(dt) == NPYIO_KIND_SUBARRAY) {
        sb_chr(b, '(');
        put_construction(b, npyio_dtype_subarray_base(dt));
        sb_str(b, ", ");
        fmt_put_shape(b, npyio_dtype_subarray_ndim(dt),
                      npyio_dtype_subarray_shape(dt));
        sb_chr(b, ')');
    } else {
        put_scalar_str(b, dt);
    }
}

/* NumPy leaves out the dtype its default types would imply: native
 * float64, complex128, bool, and the C long (int_ in NumPy 1.x). */
int fmt_dtype_implied(const npyio_dtype *dt)
{
    size_t n = npyio_dtype_itemsize(dt);

    if (!npyio_dtype_is_native(dt))
        return 0;
    switch (npyio_dtype_kind(dt)) {
    case NPYIO_KIND_BOOL:
        return 1;
    case NPYIO_KIND_INT:
        return n == sizeof(long);
    case NPYIO_KIND_FLOAT:
        return n == 8;
    case NPYIO_KIND_COMPLEX:
        return n == 16;
    default:
        return 0;
    }
}

/* NumPy's dtype_short_repr: float32, 'datetime64[ns]', '<U3', '>f8', or a
 * record's field list. Byte order is shown as NumPy 2 shows it. */
void fmt_put_dtype_repr(sbuf *b, const npyio_dtype *dt)
{
    npyio_kind kind = npyio_dtype_kind(dt);
    size_t bits = npyio_dtype_itemsize(dt) * 8;
    char text[64];

    if (kind == NPYIO_KIND_RECORD || kind == NPYIO_KIND_SUBARRAY) {
        put_construction(b, dt);
        return;
    }
    if (kind == NPYIO_KIND_BYTES || kind == NPYIO_KIND_STR ||
        kind == NPYIO_KIND_VOID || !npyio_dtype_is_native(dt)) {
        if (npyio_dtype_str(dt, text, sizeof text, NULL) != NPYIO_OK)
            snprintf(text, sizeof text, "?");
        sb_fmt(b, "'%s'", text);
        return;
    }
    switch (kind) {
    case NPYIO_KIND_BOOL:
        sb_str(b, "bool");
        break;
    case NPYIO_KIND_INT:
        sb_fmt(b, "int%zu", bits);
        break;
    case NPYIO_KIND_UINT:
        sb_fmt(b, "uint%zu", bits);
        break;
    case NPYIO_KIND_FLOAT:
        sb_fmt(b, "float%zu", bits);
        break;
    case NPYIO_KIND_COMPLEX:
        sb_fmt(b, "complex%zu", bits);
        break;
    case NPYIO_KIND_DATETIME:
    case NPYIO_KIND_TIMEDELTA: {
        const char *name =
            kind == NPYIO_KIND_DATETIME ? "datetime64" : "timedelta64";
        sbuf unit = {0};

        /* quoted unless a plain name (the generic unit) */
        put_time_unit(&unit, dt);
        if (unit.len > 0)
            sb_fmt(b, "'%s%s'", name, unit.p);
        else
            sb_str(b, name);
        b->nomem |= unit.nomem;
        free(unit.p);
        break;
    }
    default:
        put_scalar_str(b, dt);
        break;
    }
}
