/*
 * header.c - the NPY header: preamble (magic, version, length field), the
 * header dict and its rules, and emission byte-identical to np.save of
 * NumPy >= 1.24. Knows nothing of streams: it parses and writes bytes in
 * memory. The literal syntax is literal.c's, the descr descr.c's.
 */
#include "descr.h"
#include "error.h"
#include "header.h"
#include "options.h"
#include "record.h"

#include <stdio.h>
#include <string.h>

/* np.save leaves room for a first (C order) or last (Fortran) dimension of
 * this many digits, so that appending can rewrite the header in place. */
#define GROWTH_AXIS_MAX_DIGITS 21
/* Data starts at a multiple of this. */
#define ARRAY_ALIGN 64
#define V1_MAX_HLEN 65535u

/* ---- preamble ------------------------------------------------------------------ */

static void describe_bytes(const unsigned char *b, size_t n, char *out,
                           size_t cap)
{
    size_t i, used = 0;

    out[0] = '\0';
    for (i = 0; i < n && used + 4 < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, "%s%02x",
                                 i ? " " : "", b[i]);
}

static npyio_status check_magic(const unsigned char *b, size_t len,
                                size_t *need)
{
    size_t n = len < NPYIO__NPY_MAGIC_LEN ? len : NPYIO__NPY_MAGIC_LEN;
    char shown[32];

    /* (b may be NULL when len is 0: nothing to compare, 8 bytes needed) */
    if (n > 0 && memcmp(b, NPYIO__NPY_MAGIC, n) != 0) {
        describe_bytes(b, n, shown, sizeof shown);
        if (n >= 4 && memcmp(b, "PK\x03\x04", 4) == 0)
            return npyio__fail(NPYIO_E_FORMAT,
                               "not an .npy file: it starts with %s, a ZIP "
                               "archive (an .npz file?)", shown);
        return npyio__fail(NPYIO_E_FORMAT,
                           "not an .npy file: it starts with %s, not the "
                           "magic string \\x93NUMPY", shown);
    }
    if (len < 8) {
        *need = 8;
        return npyio__fail(NPYIO_E_TRUNCATED,
                           "the file ends after %zu bytes, inside the NPY "
                           "magic string and version (8 bytes)", len);
    }
    return NPYIO_OK;
}

static uint64_t read_le(const unsigned char *b, size_t n)
{
    uint64_t v = 0;

    while (n-- > 0)
        v = (v << 8) | b[n];
    return v;
}

/* The header-size limit counts decoded characters: 1.0/2.0 headers are
 * latin-1 (one byte, one character); 3.0 headers are UTF-8, at most four
 * bytes per character, so only a length beyond four times the limit can be
 * refused before the text is read. */
static npyio_status check_length_field(const npyio__preamble *pre,
                                       const npyio_options *options)
{
    uint64_t limit = (uint64_t)npyio__limit(options, NPYIO_LIMIT_HEADER_SIZE);
    uint64_t bytes_per_char = pre->version == 3 ? 4 : 1;

    if (pre->hlen / bytes_per_char > limit)
        return npyio__fail(NPYIO_E_LIMIT,
                           "header length field says %llu bytes, more than "
                           "the limit of %llu characters "
                           "(NPYIO_LIMIT_HEADER_SIZE)",
                           (unsigned long long)pre->hlen,
                           (unsigned long long)limit);
    return NPYIO_OK;
}

npyio_status npyio__preamble_parse(const unsigned char *bytes, size_t len,
                                   const npyio_options *options,
                                   npyio__preamble *pre, size_t *need)
{
    npyio_status st;

    *need = 0;
    st = check_magic(bytes, len, need);
    if (st != NPYIO_OK)
        return st;
    if (bytes[6] < 1 || bytes[6] > 3 || bytes[7] != 0)
        return npyio__fail(NPYIO_E_UNSUPPORTED,
                           "NPY format version %u.%u is not supported (1.0, "
                           "2.0 and 3.0 are)", bytes[6], bytes[7]);
    pre->version = bytes[6];
    pre->prefix = pre->version == 1 ? 10 : 12;
    if (len < pre->prefix) {
        *need = pre->prefix;
        return npyio__fail(NPYIO_E_TRUNCATED,
                           "the file ends after %zu bytes, inside the %zu-byte "
                           "header length field of format %d.0", len,
                           pre->prefix - 8, pre->version);
    }
    pre->hlen = read_le(bytes + 8, pre->prefix - 8);
    return check_length_field(pre, options);
}

/* ---- text checks --------------------------------------------------------------- */

/* Check the header text: no NUL bytes (NumPy: "source code string cannot
 * contain null bytes"), valid UTF-8 in 3.0; count its characters. */
static npyio_status check_text(const unsigned char *text, size_t len,
                               const npyio__preamble *pre, size_t *chars)
{
    size_t i = 0;
    size_t n = 0;

    if (pre->version != 3) { /* latin-1: every byte is a character */
        const unsigned char *nul = memchr(text, 0, len);

        if (nul != NULL)
            return npyio__fail(NPYIO_E_FORMAT,
                               "header byte %zu: NUL byte in the header",
                               pre->prefix + (size_t)(nul - text));
        *chars = len;
        return NPYIO_OK;
    }

    while (i < len) {
        size_t step = 1;

        if (text[i] == 0)
            return npyio__fail(NPYIO_E_FORMAT,
                               "header byte %zu: NUL byte in the header",
                               pre->prefix + i);
        if (pre->version == 3 && text[i] >= 0x80) {
            step = npyio__utf8_sequence(text + i, len - i);
            if (step == 0)
                return npyio__fail(NPYIO_E_FORMAT,
                                   "header byte %zu: invalid UTF-8 (byte "
                                   "0x%02x) in a format 3.0 header",
                                   pre->prefix + i, text[i]);
        }
        i += step;
        n++;
    }
    *chars = n;
    return NPYIO_OK;
}

/* ---- the dict ----------------------------------------------------------------- */

typedef struct header_fields {
    const npyio__lit_node *descr;
    const npyio__lit_node *fortran;
    const npyio__lit_node *shape;
} header_fields;

static const char key_rule[] =
    "the keys must be exactly 'descr', 'fortran_order' and 'shape'";

static npyio_status find_keys(const npyio__lit_doc *doc,
                              const npyio__lit_node *dict, header_fields *f)
{
    const npyio__lit_node *key;
    char shown[64];

    memset(f, 0, sizeof *f);
    if (dict->kind != NPYIO__LIT_DICT)
        return npyio__fail(NPYIO_E_FORMAT,
                           "header byte %zu: the header is %s, not a dict",
                           npyio__lit_offset(doc, dict),
                           npyio__lit_kind_name(dict));
    for (key = npyio__lit_child(doc, dict); key != NULL;
         key = npyio__lit_next(doc, npyio__lit_next(doc, key))) {
        const npyio__lit_node *value = npyio__lit_next(doc, key);

        /* Duplicate keys are allowed; the last one wins, as in Python. */
        if (npyio__lit_str_equals(doc, key, "descr", 5))
            f->descr = value;
        else if (npyio__lit_str_equals(doc, key, "fortran_order", 13))
            f->fortran = value;
        else if (npyio__lit_str_equals(doc, key, "shape", 5))
            f->shape = value;
        else if (key->kind != NPYIO__LIT_STR)
            return npyio__fail(NPYIO_E_FORMAT,
                               "header byte %zu: a key is %s; %s",
                               npyio__lit_offset(doc, key),
                               npyio__lit_kind_name(key), key_rule);
        else
            return npyio__fail(NPYIO_E_FORMAT,
                               "header byte %zu: unexpected key '%s'; %s",
                               npyio__lit_offset(doc, key),
                               npyio__show(doc->text + key->pos, key->len,
                                           shown, sizeof shown),
                               key_rule);
    }
    if (f->descr == NULL || f->fortran == NULL || f->shape == NULL)
        return npyio__fail(NPYIO_E_FORMAT, "header: key '%s' is missing; %s",
                           f->descr == NULL     ? "descr"
                           : f->fortran == NULL ? "fortran_order"
                                                : "shape",
                           key_rule);
    return NPYIO_OK;
}

/* Shape entries: ints >= 0, at most NPYIO_LIMIT_NDIM of them. */
static npyio_status check_shape(const npyio__lit_doc *doc,
                                const npyio__lit_node *shape,
                                const npyio_options *options, int *ndim)
{
    int64_t limit = npyio__limit(options, NPYIO_LIMIT_NDIM);
    const npyio__lit_node *dim;
    int i = 0;

    if (shape->kind != NPYIO__LIT_TUPLE)
        return npyio__fail(NPYIO_E_FORMAT,
                           "header byte %zu: 'shape' is %s, not a tuple",
                           npyio__lit_offset(doc, shape),
                           npyio__lit_kind_name(shape));
    if ((int64_t)shape->count > limit)
        return npyio__fail(NPYIO_E_LIMIT,
                           "header byte %zu: the shape has %u dimensions, "
                           "more than the limit of %lld (NPYIO_LIMIT_NDIM)",
                           npyio__lit_offset(doc, shape),
                           (unsigned)shape->count, (long long)limit);
    for (dim = npyio__lit_child(doc, shape); dim != NULL;
         dim = npyio__lit_next(doc, dim), i++) {
        if (dim->kind != NPYIO__LIT_INT)
            return npyio__fail(NPYIO_E_FORMAT,
                               "header byte %zu: shape entry %d is %s, not "
                               "an int", npyio__lit_offset(doc, dim), i,
                               npyio__lit_kind_name(dim));
        if (dim->value < 0)
            return npyio__fail(NPYIO_E_FORMAT,
                               "header byte %zu: shape entry %d is negative "
                               "(%lld)", npyio__lit_offset(doc, dim), i,
                               (long long)dim->value);
    }
    *ndim = i;
    return NPYIO_OK;
}

static npyio_status check_fortran(const npyio__lit_doc *doc,
                                  const npyio__lit_node *node, bool *fortran)
{
    if (node->kind != NPYIO__LIT_TRUE && node->kind != NPYIO__LIT_FALSE)
        return npyio__fail(NPYIO_E_FORMAT,
                           "header byte %zu: 'fortran_order' is %s, not True "
                           "or False", npyio__lit_offset(doc, node),
                           npyio__lit_kind_name(node));
    *fortran = node->kind == NPYIO__LIT_TRUE;
    return NPYIO_OK;
}

/* ---- the header object -------------------------------------------------------- */

/*
 * NumPy's rule for the size of any array, empty ones included
 * (PyArray_NewFromDescr): the itemsize times every dimension that is not 0
 * must fit in its signed 64-bit npy_intp, else "array is too big". A 0
 * dimension is skipped, not multiplied in, so (0, 2**60) of '<f8' is
 * refused although it holds no data, while (0, 2**63 - 1) of '|i1' is
 * fine; with itemsize 0 nothing is ever too big.
 */
static npyio_status check_span(const npyio_header *h, const char *where)
{
    uint64_t span = h->dtype->itemsize;
    int i;

    for (i = 0; i < h->ndim && span != 0; i++) {
        uint64_t dim = (uint64_t)h->shape[i];

        if (dim == 0)
            continue;
        if (span > (uint64_t)INT64_MAX / dim)
            return npyio__fail(NPYIO_E_OVERFLOW,
                               "%s: array is too big: %zu-byte items times "
                               "the dimensions other than 0 exceed 2**63 - "
                               "1 bytes (NumPy's rule, which holds even "
                               "for an array with a dimension of 0)",
                               where, h->dtype->itemsize);
        span *= dim;
    }
    return NPYIO_OK;
}

/* Element count and byte size, refusing what int64_t cannot hold (NumPy
 * computes these in int64 and wraps silently). */
static npyio_status compute_sizes(npyio_header *h, const char *where)
{
    int64_t count = 1;
    int i;

    for (i = 0; i < h->ndim; i++)
        if (h->shape[i] == 0)
            count = 0;
    if (count == 0) {
        npyio_status st = check_span(h, where);

        if (st != NPYIO_OK)
            return st;
    }
    for (i = 0; i < h->ndim && count != 0; i++) {
        if (count > INT64_MAX / h->shape[i])
            return npyio__fail(NPYIO_E_OVERFLOW,
                               "%s: the shape has more elements than a 64-bit "
                               "count can hold", where);
        count *= h->shape[i];
    }
    if (h->dtype->itemsize != 0 &&
        (uint64_t)count > (uint64_t)INT64_MAX / h->dtype->itemsize)
        return npyio__fail(NPYIO_E_OVERFLOW,
                           "%s: %lld elements of %zu bytes are more bytes "
                           "than a 64-bit size can hold", where,
                           (long long)count, h->dtype->itemsize);
    h->count = count;
    h->nbytes = count * (int64_t)h->dtype->itemsize;
    return NPYIO_OK;
}

static npyio_status alloc_header(const npyio__mem *mem, int ndim,
                                 npyio_header **out)
{
    npyio_header *h;
    npyio_status st;

    st = npyio__alloc_zero(mem, sizeof *h + (size_t)ndim * sizeof(int64_t),
                           "header", (void **)&h);
    if (st != NPYIO_OK)
        return st;
    h->magic = NPYIO__MAGIC_HEADER;
    h->ndim = ndim;
    *out = h;
    return NPYIO_OK;
}

void npyio_header_free(npyio_header *header)
{
    if (header == NULL || header->magic != NPYIO__MAGIC_HEADER)
        return;
    npyio_dtype_unref(header->dtype);
    header->magic = NPYIO__MAGIC_DEAD;
    npyio__free(header);
}

/* ---- parse ------------------------------------------------------------------------ */

/* Dimensions a subarray dtype adds when folded into the array's shape, as
 * np.save does: (5,) of ('<i4', (2, 3)) is (5, 2, 3) of '<i4'. */
static int folded_ndim(const npyio_dtype *dt)
{
    int n = 0;

    for (; dt->kind == NPYIO_KIND_SUBARRAY; dt = dt->base)
        n += dt->ndim;
    return n;
}

/* Fill h->shape[from..] with the subarray dims and set h->dtype to the
 * innermost element type (a new reference). */
static void fold_subarray(npyio_header *h, int from, const npyio_dtype *dt)
{
    for (; dt->kind == NPYIO_KIND_SUBARRAY; dt = dt->base) {
        memcpy(h->shape + from, dt->shape, (size_t)dt->ndim * sizeof *dt->shape);
        from += dt->ndim;
    }
    h->dtype = npyio_dtype_ref(dt);
}

/* The shape's dimensions plus those a subarray dtype folds in count
 * against NPYIO_LIMIT_NDIM together (NumPy 2 allows 64 in all).
 * npyio_header_new() applies the default limit, the one a reader with
 * default options applies: no header the library makes fails to read
 * back for having too many dimensions. */
static npyio_status check_total_ndim(int64_t ndim, int64_t folded,
                                     const npyio_options *options,
                                     const char *where, const char *whose)
{
    int64_t limit = npyio__limit(options, NPYIO_LIMIT_NDIM);

    if (ndim + folded <= limit)
        return NPYIO_OK;
    if (folded == 0)
        return npyio__fail(NPYIO_E_LIMIT, "%s: the shape has %lld "
                           "dimensions, more than the limit of %lld "
                           "(NPYIO_LIMIT_NDIM)", where, (long long)ndim,
                           (long long)limit);
    return npyio__fail(NPYIO_E_LIMIT, "%s: the shape with the %s subarray "
                       "folded in has %lld dimensions (%lld + %lld), more "
                       "than the limit of %lld (NPYIO_LIMIT_NDIM)", where,
                       whose, (long long)(ndim + folded), (long long)ndim,
                       (long long)folded, (long long)limit);
}

/*
 * A descr string such as '(2,)<f8' is a subarray type (np.dtype() reads
 * the leading shape). NumPy 1.24's reader does not fold it into the shape:
 * it reads count elements of the subarray (count times its values) and
 * reshapes them to the header's shape, which works only when both have as
 * many values: the array is empty, or the subarray has exactly one
 * element. Those are read, folded as NumPy 2 folds ('(2,)<f8' of (0,) is
 * (0, 2) of '<f8'); the others NumPy cannot load ("cannot reshape"). A
 * tuple descr ('<f8', (2,)) is always folded.
 */
static npyio_status check_string_subarray(const npyio__lit_doc *doc,
                                          const npyio__lit_node *descr,
                                          const npyio__lit_node *shape,
                                          const npyio_dtype *dt)
{
    const npyio__lit_node *dim;
    bool empty = false, one = true;
    char shown[64];
    int i;

    for (dim = npyio__lit_child(doc, shape); dim != NULL;
         dim = npyio__lit_next(doc, dim))
        empty = empty || dim->value == 0;
    for (; dt->kind == NPYIO_KIND_SUBARRAY; dt = dt->base)
        for (i = 0; i < dt->ndim; i++)
            one = one && dt->shape[i] == 1;
    if (empty || one)
        return NPYIO_OK;
    return npyio__fail(NPYIO_E_FORMAT, "header byte %zu: descr '%s' is a "
                       "subarray type string, which NumPy reads only for an "
                       "array with no elements or a subarray of exactly one "
                       "(else \"cannot reshape array\"); a descr written as "
                       "a tuple, such as ('<f8', (2,)), has its subarray "
                       "folded into the shape",
                       npyio__lit_offset(doc, descr),
                       npyio__show(doc->text + descr->pos, descr->len, shown,
                                   sizeof shown));
}

static npyio_status build_from_dict(const npyio__lit_doc *doc,
                                    const npyio__preamble *pre,
                                    const npyio_options *options,
                                    const npyio__mem *mem,
                                    npyio_header **out)
{
    const npyio__lit_node *root = npyio__lit_resolve(doc, doc->nodes);
    header_fields f;
    const npyio__lit_node *dim;
    npyio_header *h = NULL;
    npyio_dtype *dt = NULL;
    bool fortran = false;
    int ndim = 0, extra = 0;
    int i = 0;
    npyio_status st;

    /* NumPy's order: keys, shape, fortran_order, descr. */
    st = find_keys(doc, root, &f);
    if (st == NPYIO_OK)
        st = check_shape(doc, f.shape, options, &ndim);
    if (st == NPYIO_OK)
        st = check_fortran(doc, f.fortran, &fortran);
    if (st == NPYIO_OK)
        st = npyio__dtype_from_node(doc, f.descr, options, &dt);
    if (st == NPYIO_OK && dt->kind == NPYIO_KIND_SUBARRAY &&
        f.descr->kind == NPYIO__LIT_STR)
        st = check_string_subarray(doc, f.descr, f.shape, dt);
    if (st == NPYIO_OK) {
        extra = folded_ndim(dt);
        st = check_total_ndim(ndim, extra, options, "header", "descr's");
    }
    if (st == NPYIO_OK)
        st = alloc_header(mem, ndim + extra, &h);
    if (st != NPYIO_OK) {
        npyio_dtype_unref(dt);
        return st;
    }
    for (dim = npyio__lit_child(doc, f.shape); dim != NULL;
         dim = npyio__lit_next(doc, dim))
        h->shape[i++] = dim->value;
    fold_subarray(h, ndim, dt);
    npyio_dtype_unref(dt);
    h->fortran_order = fortran;
    h->version = pre->version;
    h->hlen = (int64_t)pre->hlen;
    h->data_offset = (int64_t)(pre->prefix + pre->hlen);
    st = compute_sizes(h, "header");
    if (st != NPYIO_OK) {
        npyio_header_free(h);
        return st;
    }
    *out = h;
    return NPYIO_OK;
}

/*
 * np.save's own form of the dict, read in one scan:
 *
 *   {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }
 *
 * then spaces and a newline, with a type string of plain characters (no
 * quotes, backslashes or non-ASCII) and decimal ints without leading zeros
 * or suffixes. The literal parser builds a tree for any Python literal,
 * which costs more than the rest of a small file's load; a header in this
 * form gives the same result either way (test_header compares the two on
 * every corpus header). Anything else, and any failure, is left to the
 * literal parser, which also gives every error.
 */
#define CANONICAL_MAX_NDIM 64

typedef struct canonical {
    const char *descr;
    size_t descr_len;
    bool fortran;
    int ndim;
    int64_t shape[CANONICAL_MAX_NDIM];
} canonical;

static bool take(const char **p, const char *end, const char *word)
{
    size_t n = strlen(word);

    if ((size_t)(end - *p) < n || memcmp(*p, word, n) != 0)
        return false;
    *p += n;
    return true;
}

/* A non-negative decimal int as Python writes one, fitting int64. */
static bool take_int(const char **p, const char *end, int64_t *value)
{
    const char *q = *p;
    int64_t v = 0;

    if (q == end || *q < '0' || *q > '9' || (*q == '0' && q + 1 < end &&
                                            q[1] >= '0' && q[1] <= '9'))
        return false;
    for (; q < end && *q >= '0' && *q <= '9'; q++) {
        if (v > (INT64_MAX - (*q - '0')) / 10)
            return false;
        v = v * 10 + (*q - '0');
    }
    *value = v;
    *p = q;
    return true;
}

static bool take_shape(const char **p, const char *end, canonical *c)
{
    c->ndim = 0;
    if (take(p, end, ")"))
        return true; /* () */
    for (;;) {
        if (c->ndim == CANONICAL_MAX_NDIM ||
            !take_int(p, end, &c->shape[c->ndim]))
            return false;
        c->ndim++;
        if (take(p, end, ")"))
            return c->ndim > 1; /* (3) is no tuple; (3,) is */
        if (!take(p, end, ","))
            return false;
        if (take(p, end, ")"))
            return c->ndim == 1; /* NumPy writes (3,) but (3, 4) */
        if (!take(p, end, " "))
            return false;
    }
}

static bool parse_canonical(const char *text, size_t len, canonical *c)
{
    const char *p = text, *end = text + len;

    if (!take(&p, end, "{'descr': '"))
        return false;
    c->descr = p;
    while (p < end && *p != '\'' && *p >= 0x20 && *p < 0x7f && *p != '\\')
        p++;
    c->descr_len = (size_t)(p - c->descr);
    if (!take(&p, end, "', 'fortran_order': "))
        return false;
    c->fortran = take(&p, end, "True");
    if ((!c->fortran && !take(&p, end, "False")) ||
        !take(&p, end, ", 'shape': (") || !take_shape(&p, end, c) ||
        !take(&p, end, ", }"))
        return false;
    while (p < end && *p == ' ')
        p++;
    return end - p == 1 && *p == '\n';
}

/* The header of a canonical dict, or false (nothing kept) for the literal
 * parser to decide. */
static bool build_canonical(const canonical *c, const npyio__preamble *pre,
                            const npyio_options *options,
                            const npyio__mem *mem, npyio_header **out)
{
    npyio__saved_message saved;
    npyio_header *h = NULL;
    npyio_dtype *dt = NULL;
    bool built;

    /* The limits the literal parser applies: dimensions, and nesting (the
     * dict holds the shape tuple: two deep). */
    if (c->ndim > npyio__limit(options, NPYIO_LIMIT_NDIM) ||
        npyio__limit(options, NPYIO_LIMIT_DEPTH) < 2)
        return false;
    npyio__message_save(&saved);
    built = npyio__dtype_from_str(c->descr, c->descr_len, SIZE_MAX, mem,
                                  &dt) == NPYIO_OK &&
            dt->kind != NPYIO_KIND_SUBARRAY &&
            alloc_header(mem, c->ndim, &h) == NPYIO_OK;
    if (built) {
        memcpy(h->shape, c->shape, (size_t)c->ndim * sizeof *h->shape);
        h->dtype = dt;
        dt = NULL;
        h->fortran_order = c->fortran;
        h->version = pre->version;
        h->hlen = (int64_t)pre->hlen;
        h->data_offset = (int64_t)(pre->prefix + pre->hlen);
        built = compute_sizes(h, "header") == NPYIO_OK;
    }
    npyio_dtype_unref(dt);
    if (!built) {
        npyio_header_free(h);
        npyio__message_restore(&saved); /* the literal parser will say */
        return false;
    }
    *out = h;
    return true;
}

npyio_status npyio__header_parse(const void *bytes, size_t len,
                                      const npyio_options *options,
                                      npyio_header **out, size_t *consumed)
{
    const unsigned char *b = bytes;
    npyio__preamble pre;
    npyio__lit_config config;
    npyio__lit_doc doc;
    npyio__mem mem;
    canonical canonical_form;
    size_t need = 0;
    size_t chars = 0;
    npyio_status st;

    if (consumed != NULL)
        *consumed = 0;
    if (out == NULL || (bytes == NULL && len > 0))
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "npyio_header_parse: %s is NULL",
                           out == NULL ? "out" : "bytes");
    *out = NULL;
    st = npyio__preamble_parse(b, len, options, &pre, &need);
    if (st == NPYIO_OK && len - pre.prefix < pre.hlen) {
        need = pre.prefix + (size_t)pre.hlen;
        st = npyio__fail(NPYIO_E_TRUNCATED,
                         "the header length field says %llu bytes, but only "
                         "%zu follow it", (unsigned long long)pre.hlen,
                         len - pre.prefix);
    }
    if (st == NPYIO_OK)
        st = check_text(b + pre.prefix, (size_t)pre.hlen, &pre, &chars);
    if (st == NPYIO_OK &&
        (int64_t)chars > npyio__limit(options, NPYIO_LIMIT_HEADER_SIZE))
        st = npyio__fail(NPYIO_E_LIMIT,
                         "the header has %zu characters, more than the limit "
                         "of %lld (NPYIO_LIMIT_HEADER_SIZE)", chars,
                         (long long)npyio__limit(options,
                                                 NPYIO_LIMIT_HEADER_SIZE));
    if (st != NPYIO_OK) {
        if (st == NPYIO_E_TRUNCATED && consumed != NULL)
            *consumed = need;
        return st;
    }
    npyio__mem_init(&mem, options);
    if (parse_canonical((const char *)b + pre.prefix, (size_t)pre.hlen,
                        &canonical_form) &&
        build_canonical(&canonical_form, &pre, options, &mem, out)) {
        if (consumed != NULL)
            *consumed = pre.prefix + (size_t)pre.hlen;
        return NPYIO_OK;
    }
    config.encoding = pre.version == 3 ? NPYIO__LIT_UTF8 : NPYIO__LIT_LATIN1;
    config.allow_long_suffix = pre.version != 3;
    config.max_depth = npyio__limit(options, NPYIO_LIMIT_DEPTH);
    config.base_offset = pre.prefix;
    st = npyio__lit_parse(&doc, (const char *)b + pre.prefix,
                          (size_t)pre.hlen, &config, &mem);
    if (st == NPYIO_OK)
        st = build_from_dict(&doc, &pre, options, &mem, out);
    npyio__lit_free(&doc);
    if (st == NPYIO_OK && consumed != NULL)
        *consumed = pre.prefix + (size_t)pre.hlen;
    return st;
}

npyio_status npyio_header_parse(const void *bytes, size_t len,
                                const npyio_options *options,
                                npyio_header **out, size_t *consumed)
{
    return npyio__as_called(npyio__header_parse(bytes, len, options, out, consumed),
                            "npyio_header_parse");
}

/* ---- emit ---------------------------------------------------------------------------- */

/* The dict text, UTF-8, growth padding included (what NumPy encodes). */
typedef struct dict_text {
    char *text;
    size_t len;
    size_t max_code; /* largest code point: decides latin-1 or UTF-8 */
    char inline_buf[4096]; /* one pass for all but very large records */
} dict_text;

static size_t max_code_point(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t max = 0, i;
    unsigned char any = 0;

    for (i = 0; i < len; i++) /* the usual case: all ASCII */
        any |= u[i];
    if (any < 0x80)
        return 0x7F;
    for (i = 0; i < len; i++)
        if (u[i] >= 0x80) {
            /* Only lead bytes matter: a 2-byte lead C2/C3 is latin-1. */
            size_t code = u[i] >= 0xC4 ? 0x100 : 0xFF;

            if (u[i] >= 0xC0 && code > max)
                max = code;
        }
    return max;
}

bool npyio__header_fortran_data(const npyio_header *h)
{
    int big = 0, i;

    if (!h->fortran_order || h->count == 0)
        return false;
    for (i = 0; i < h->ndim; i++)
        big += h->shape[i] > 1;
    return big > 1;
}

static size_t put_str(char *out, size_t cap, size_t at, const char *s,
                      size_t n)
{
    if (at < cap)
        memcpy(out + at, s, n <= cap - at ? n : cap - at);
    return at + n;
}

/* Format the dict into out[0..cap); return the full length. */
static npyio_status format_dict(const npyio_header *h, char *out, size_t cap,
                                size_t *len)
{
    bool fortran = npyio__header_fortran_data(h);
    size_t at = 0, descr_len = 0;
    char num[32];
    int i, digits = 0;
    npyio_status st;

    at = put_str(out, cap, at, "{'descr': ", 10);
    st = npyio__dtype_descr(h->dtype, at < cap ? out + at : NULL,
                            at < cap ? cap - at : 0, &descr_len);
    if (st != NPYIO_OK)
        return st;
    at += descr_len;
    at = put_str(out, cap, at, ", 'fortran_order': ", 19);
    at = fortran ? put_str(out, cap, at, "True", 4)
                 : put_str(out, cap, at, "False", 5);
    at = put_str(out, cap, at, ", 'shape': (", 12);
    for (i = 0; i < h->ndim; i++) {
        if (i > 0)
            at = put_str(out, cap, at, ", ", 2);
        at = put_str(out, cap, at, num,
                     npyio__format_u64((uint64_t)h->shape[i], num));
    }
    if (h->ndim == 1)
        at = put_str(out, cap, at, ",", 1);
    at = put_str(out, cap, at, "), }", 4);
    if (h->ndim > 0) {
        int64_t grow = h->shape[fortran ? h->ndim - 1 : 0];

        static const char spaces[GROWTH_AXIS_MAX_DIGITS] = "                     ";

        digits = (int)npyio__format_u64((uint64_t)grow, num);
        at = put_str(out, cap, at, spaces,
                     (size_t)(GROWTH_AXIS_MAX_DIGITS - digits));
    }
    *len = at;
    return NPYIO_OK;
}

static npyio_status build_text(const npyio_header *h, const npyio__mem *mem,
                               dict_text *t)
{
    npyio_status st;

    t->text = t->inline_buf;
    st = format_dict(h, t->text, sizeof t->inline_buf, &t->len);
    if (st != NPYIO_OK)
        return st;
    if (t->len > sizeof t->inline_buf) {
        st = npyio__alloc(mem, t->len, "header text", (void **)&t->text);
        if (st == NPYIO_OK)
            st = format_dict(h, t->text, t->len, &t->len);
        if (st != NPYIO_OK) {
            npyio__free(t->text == t->inline_buf ? NULL : t->text);
            return st;
        }
    }
    t->max_code = max_code_point(t->text, t->len);
    return NPYIO_OK;
}

static void free_text(dict_text *t)
{
    if (t->text != t->inline_buf)
        npyio__free(t->text);
}

/* Number of bytes of the text in the version's encoding. */
static size_t encoded_length(const dict_text *t, int version)
{
    size_t n = 0, i;

    if (version == 3 || t->max_code < 0x80)
        return t->len;
    for (i = 0; i < t->len; i++) /* latin-1: one byte per character */
        n += ((unsigned char)t->text[i] & 0xC0u) != 0x80u;
    return n;
}

typedef struct layout {
    int version;
    size_t prefix;
    size_t text_bytes;
    uint64_t hlen; /* text + padding + newline; 64-bit even where size_t
                      is not, so that oversize is caught, not wrapped */
} layout;

static void compute_layout(const dict_text *t, int version, layout *l)
{
    uint64_t hlen;

    l->version = version;
    l->prefix = version == 1 ? 10 : 12;
    l->text_bytes = encoded_length(t, version);
    hlen = (uint64_t)l->text_bytes + 1;
    l->hlen = hlen + (ARRAY_ALIGN - (l->prefix + hlen) % ARRAY_ALIGN);
}

/* The version np.save would pick, or check a forced one. */
static npyio_status choose_layout(const dict_text *t, int version, layout *l)
{
    static const char where[] = "npyio_header_emit";
    bool latin1 = t->max_code <= 0xFF;

    if (version == 0) {
        compute_layout(t, 1, l);
        if (latin1 && l->hlen <= V1_MAX_HLEN)
            return NPYIO_OK;
        version = latin1 ? 2 : 3;
    }
    if (version < 1 || version > 3)
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: version must be 0 (automatic), 1, 2 or 3, "
                           "not %d", where, version);
    if (version != 3 && !latin1)
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: the header has characters outside latin-1, "
                           "which only format 3.0 can hold", where);
    compute_layout(t, version, l);
    if (version == 1 && l->hlen > V1_MAX_HLEN)
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: the header needs %llu bytes, more than the "
                           "65535 of format 1.0", where,
                           (unsigned long long)l->hlen);
    if (l->hlen > UINT32_MAX || l->hlen > SIZE_MAX - l->prefix)
        return npyio__fail(NPYIO_E_OVERFLOW,
                           "%s: the header needs %llu bytes, more than a "
                           "format %d.0 length field (or this host) can "
                           "hold", where, (unsigned long long)l->hlen,
                           version);
    return NPYIO_OK;
}

static void write_header(const dict_text *t, const layout *l,
                         unsigned char *out)
{
    size_t i, at;

    memcpy(out, NPYIO__NPY_MAGIC, NPYIO__NPY_MAGIC_LEN);
    out[6] = (unsigned char)l->version;
    out[7] = 0;
    for (i = 8; i < l->prefix; i++)
        out[i] = (unsigned char)(l->hlen >> (8 * (i - 8)));
    at = l->prefix;
    if (l->text_bytes == t->len) {
        memcpy(out + at, t->text, t->len);
    } else {
        /* UTF-8 to latin-1: every character is below U+0100 here, so a
         * lead byte is C2 or C3 and carries the top two bits. */
        const unsigned char *s = (const unsigned char *)t->text;

        for (i = 0; i < t->len; i++) {
            if (s[i] < 0x80)
                out[at++] = s[i];
            else if (s[i] >= 0xC0)
                out[at++] = (unsigned char)(((s[i] & 0x03u) << 6) |
                                            (s[i + 1] & 0x3Fu));
        }
    }
    memset(out + l->prefix + l->text_bytes, ' ',
           (size_t)l->hlen - l->text_bytes - 1);
    out[l->prefix + (size_t)l->hlen - 1] = '\n';
}

/* Version and layout np.save would choose; used for new headers. */
static npyio_status auto_layout(const npyio_header *h, const npyio__mem *mem,
                                layout *l)
{
    dict_text t;
    npyio_status st = build_text(h, mem, &t);

    if (st != NPYIO_OK)
        return st;
    st = choose_layout(&t, 0, l);
    free_text(&t);
    return st;
}

static npyio_status check_header(const npyio_header *h, const char *where)
{
    if (h == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: header is NULL", where);
    if (h->magic != NPYIO__MAGIC_HEADER)
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: the pointer given as a header is not a "
                           "live npyio_header", where);
    return NPYIO_OK;
}

npyio_status npyio__header_emit(const npyio__mem *mem,
                                const npyio_header *header, int version,
                                void *buf, size_t cap, size_t *len)
{
    static const char where[] = "npyio_header_emit";
    dict_text t;
    layout l;
    size_t total;
    npyio_status st;

    if (len != NULL)
        *len = 0;
    st = check_header(header, where);
    if (st != NPYIO_OK)
        return st;
    if (buf == NULL && cap > 0)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: buf is NULL", where);
    st = build_text(header, mem, &t);
    if (st != NPYIO_OK)
        return st;
    st = choose_layout(&t, version, &l);
    total = l.prefix + (size_t)l.hlen;
    if (st == NPYIO_OK && len != NULL)
        *len = total;
    if (st == NPYIO_OK && cap < total)
        st = npyio__fail(NPYIO_E_BUFFER_TOO_SMALL,
                         "%s: the header needs %zu bytes, the buffer has %zu",
                         where, total, cap);
    if (st == NPYIO_OK)
        write_header(&t, &l, buf);
    free_text(&t);
    return st;
}

npyio_status npyio_header_emit(const npyio_header *header, int version,
                               void *buf, size_t cap, size_t *len)
{
    npyio__mem mem;

    /* Temporaries (long header text) are made like the header. */
    npyio__mem_like(header != NULL && header->magic == NPYIO__MAGIC_HEADER
                        ? header
                        : NULL,
                    &mem);
    return npyio__header_emit(&mem, header, version, buf, cap, len);
}

npyio_status npyio__header_emit_into(const npyio__mem *mem,
                                     const npyio_header *h, int version,
                                     size_t total, unsigned char *buf)
{
    dict_text t;
    layout l;
    npyio_status st = build_text(h, mem, &t);

    if (st != NPYIO_OK)
        return st;
    /* A 1.0 or 2.0 header can name characters past latin-1 with \u
     * escapes, which np.load accepts; written again they need 3.0. */
    if (version != 3 && t.max_code > 0xFF)
        st = npyio__fail(NPYIO_E_UNSUPPORTED, "the header has characters "
                         "outside latin-1, which its format %d.0 cannot "
                         "hold", version);
    if (st == NPYIO_OK)
        st = choose_layout(&t, version, &l);
    if (st == NPYIO_OK &&
        (total < l.prefix + l.text_bytes + 1 || total - l.prefix > UINT32_MAX ||
         (l.version == 1 && total - l.prefix > V1_MAX_HLEN)))
        st = npyio__fail(NPYIO_E_UNSUPPORTED, "the header for the new shape "
                         "needs %zu bytes, more than the %zu the file has",
                         l.prefix + l.text_bytes + 1, total);
    if (st == NPYIO_OK) {
        /* The same bytes with the padding stretched to the file's length:
         * readers ignore padding, and data stays where it is. */
        l.hlen = total - l.prefix;
        write_header(&t, &l, buf);
    }
    free_text(&t);
    return st;
}

/* ---- new ------------------------------------------------------------------------------- */

npyio_status npyio__header_new(const npyio__mem *mem,
                               const npyio_dtype *dtype, int ndim,
                               const int64_t *shape, int fortran_order,
                               const char *where, npyio_header **out)
{
    npyio_header *h;
    layout l;
    int i;
    npyio_status st;

    if (out == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: out is NULL", where);
    *out = NULL;
    st = npyio__check_dtype(dtype, where);
    if (st != NPYIO_OK)
        return st;
    if (ndim < 0 || (ndim > 0 && shape == NULL))
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: ndim is %d%s", where, ndim,
                           ndim < 0 ? "" : " but shape is NULL");
    /* What reading would refuse with the default limits, construction
     * refuses too: no header the library writes fails to read back. The
     * limit first: ndim says how far shape may be read. */
    st = check_total_ndim(ndim, folded_ndim(dtype), NULL, where, "dtype's");
    if (st != NPYIO_OK)
        return st;
    for (i = 0; i < ndim; i++)
        if (shape[i] < 0)
            return npyio__fail(NPYIO_E_INVALID_ARG,
                               "%s: shape[%d] is negative (%lld)", where, i,
                               (long long)shape[i]);
    st = alloc_header(mem, ndim + folded_ndim(dtype), &h);
    if (st != NPYIO_OK)
        return st;
    if (ndim > 0)
        memcpy(h->shape, shape, (size_t)ndim * sizeof *shape);
    fold_subarray(h, ndim, dtype);
    h->fortran_order = fortran_order != 0;
    st = compute_sizes(h, where);
    if (st == NPYIO_OK)
        st = auto_layout(h, mem, &l);
    if (st == NPYIO_OK) {
        h->version = l.version;
        h->hlen = (int64_t)l.hlen;
        h->data_offset = (int64_t)(l.prefix + l.hlen);
    }
    if (st != NPYIO_OK) {
        npyio_header_free(h);
        return st;
    }
    *out = h;
    return NPYIO_OK;
}

npyio_status npyio_header_new(const npyio_dtype *dtype, int ndim,
                              const int64_t *shape, int fortran_order,
                              npyio_header **out)
{
    npyio__mem mem;

    /* Made like its dtype (the default allocator for a built-in dtype,
     * which names none). */
    npyio__dtype_mem(dtype, &mem);
    return npyio__header_new(&mem, dtype, ndim, shape, fortran_order,
                             "npyio_header_new", out);
}

/* The header of plain C data: the type must be in this host's byte order
 * (or have none), since the elements are a C program's. */
npyio_status npyio__plain_header(const char *type, int ndim,
                                 const int64_t *shape,
                                 const npyio_options *options,
                                 const char *where, npyio_header **out)
{
    npyio_dtype *dt = NULL;
    npyio_status st;

    *out = NULL;
    if (type == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: type is NULL", where);
    st = npyio__dtype_parse(type, strlen(type), options, where, &dt);
    if (st == NPYIO_OK && !npyio_dtype_is_native(dt))
        st = npyio__fail(NPYIO_E_INVALID_ARG, "%s: type \"%s\" is in the "
                         "other byte order than this host's, in which the "
                         "data must be", where, type);
    if (st == NPYIO_OK) {
        npyio__mem mem;

        npyio__dtype_mem(dt, &mem); /* as npyio_header_new() */
        st = npyio__header_new(&mem, dt, ndim, shape, 0, where, out);
    }
    npyio_dtype_unref(dt);
    return st;
}

npyio_status npyio__header_as_read(const npyio__mem *mem,
                                   const npyio_header *header, uint32_t flags,
                                   const char *where, npyio_header **out)
{
    npyio_dtype *dt = NULL;
    npyio_status st;

    *out = NULL;
    st = npyio__check_flags(flags, NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER,
                            where);
    if (st != NPYIO_OK)
        return st;
    if (flags & NPYIO_READ_NATIVE)
        st = npyio__dtype_new_native(header->dtype, where, &dt);
    else
        dt = npyio_dtype_ref(header->dtype);
    if (st != NPYIO_OK)
        return st;
    st = npyio__header_new(mem, dt, header->ndim, header->shape,
                           (flags & NPYIO_READ_C_ORDER) != 0
                               ? 0
                               : header->fortran_order,
                           where, out);
    npyio_dtype_unref(dt);
    return st;
}

npyio_status npyio_header_new_as_read(const npyio_header *header,
                                      uint32_t flags, npyio_header **out)
{
    npyio__mem mem;

    if (out == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "npyio_header_new_as_read: out is NULL");
    *out = NULL;
    if (header == NULL || header->magic != NPYIO__MAGIC_HEADER)
        return npyio__fail(NPYIO_E_INVALID_ARG, "npyio_header_new_as_read: "
                           "header is not an npyio_header");
    npyio__dtype_mem(header->dtype, &mem);
    return npyio__as_called(npyio__header_as_read(&mem, header, flags,
                                                  "npyio_header_new_as_read",
                                                  out),
                            "npyio_header_new_as_read");
}

/* ---- getters ---------------------------------------------------------------------------- */

static bool is_header(const npyio_header *h)
{
    return h != NULL && h->magic == NPYIO__MAGIC_HEADER;
}

const npyio_dtype *npyio_header_dtype(const npyio_header *header)
{
    return is_header(header) ? header->dtype : NULL;
}

int npyio_header_ndim(const npyio_header *header)
{
    return is_header(header) ? header->ndim : 0;
}

const int64_t *npyio_header_shape(const npyio_header *header)
{
    return is_header(header) ? header->shape : NULL;
}

int npyio_header_is_fortran_order(const npyio_header *header)
{
    return is_header(header) && header->fortran_order;
}

int64_t npyio_header_count(const npyio_header *header)
{
    return is_header(header) ? header->count : 0;
}

int64_t npyio_header_nbytes(const npyio_header *header)
{
    return is_header(header) ? header->nbytes : 0;
}

int npyio_header_version(const npyio_header *header)
{
    return is_header(header) ? header->version : 0;
}

int64_t npyio_header_length(const npyio_header *header)
{
    return is_header(header) ? header->hlen : 0;
}

int64_t npyio_header_data_offset(const npyio_header *header)
{
    return is_header(header) ? header->data_offset : 0;
}
