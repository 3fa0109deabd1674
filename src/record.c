/*
 * record.c - compound dtypes: records (named fields with offsets, titles,
 * padding) and subarrays; their descr lists as NumPy reads and writes them
 * (numpy.lib.format's descr_to_dtype and dtype.descr); the record builder;
 * equality, native order and field queries. Scalars are dtype.c's.
 *
 * A record is one allocation: the dtype, its field array and the names and
 * titles, so parsing a 50-field header costs one allocation for the record
 * (plus any non-built-in field dtypes). Walking nested dtypes recurses at
 * most NPYIO__MAX_DEPTH deep: every dtype records its depth and none deeper
 * is built.
 */
#include "dtype.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SUBARRAY_NDIM NPYIO__MAX_SUBARRAY_NDIM

/* ---- subarrays ---------------------------------------------------------------- */

npyio_status npyio__make_subarray(npyio_dtype *base, int ndim,
                                  const int64_t *shape, const char *where,
                                  const npyio__mem *mem, npyio_dtype **out)
{
    uint64_t count = 1;
    npyio_dtype *dt;
    npyio_status st;
    int i;

    *out = NULL;
    if (ndim < 0 || ndim > MAX_SUBARRAY_NDIM || (ndim > 0 && shape == NULL))
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: a subarray has 0 to %d dimensions (%d given)",
                           where, MAX_SUBARRAY_NDIM, ndim);
    for (i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return npyio__fail(NPYIO_E_INVALID_ARG,
                               "%s: subarray dimension %d is negative (%lld)",
                               where, i, (long long)shape[i]);
        /* NumPy checks each dimension, not only the product: (0, 2**40)
         * has no elements and is refused all the same. */
        if (shape[i] > INT32_MAX)
            return npyio__fail(NPYIO_E_OVERFLOW,
                               "%s: subarray dimension %d (%lld) is above "
                               "NumPy's limit of 2147483647 (a C int)",
                               where, i, (long long)shape[i]);
        if (shape[i] > 0 && count > NPYIO__MAX_ITEMSIZE / (uint64_t)shape[i])
            count = NPYIO__MAX_ITEMSIZE + (uint64_t)1; /* too big, below */
        else
            count *= (uint64_t)shape[i];
    }
    if (base->itemsize > 0 && count > NPYIO__MAX_ITEMSIZE / base->itemsize)
        return npyio__fail(NPYIO_E_OVERFLOW,
                           "%s: the subarray's size is above NumPy's limit "
                           "of 2147483647 bytes", where);
    if (base->depth + 1 > NPYIO__MAX_DEPTH)
        return npyio__fail(NPYIO_E_LIMIT,
                           "%s: dtypes nested deeper than %d", where,
                           NPYIO__MAX_DEPTH);
    if (ndim == 0) { /* np.dtype((base, ())) is base */
        *out = npyio_dtype_ref(base);
        return NPYIO_OK;
    }
    st = npyio__dtype_alloc(mem, (size_t)ndim * sizeof(int64_t), &dt);
    if (st != NPYIO_OK)
        return st;
    dt->kind = NPYIO_KIND_SUBARRAY;
    dt->byteorder = '|';
    dt->itemsize = base->itemsize * (size_t)count;
    dt->alignment = base->alignment;
    dt->unit = NPYIO__DT_NONE;
    dt->multiplier = 1;
    dt->depth = base->depth + 1;
    dt->has_objects = base->has_objects;
    dt->base = npyio_dtype_ref(base);
    dt->ndim = ndim;
    dt->shape = (int64_t *)(dt + 1);
    memcpy(dt->shape, shape, (size_t)ndim * sizeof *shape);
    *out = dt;
    return NPYIO_OK;
}

npyio_status npyio_dtype_subarray(const npyio_dtype *base, int ndim,
                                  const int64_t *shape, npyio_dtype **out)
{
    static const char where[] = "npyio_dtype_subarray";
    npyio__mem mem;
    npyio_status st;

    if (out == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: out is NULL", where);
    *out = NULL;
    st = npyio__check_dtype(base, where);
    if (st != NPYIO_OK)
        return st;
    /* Made like its base (the default allocator for a built-in base,
     * which names none). */
    npyio__dtype_mem(base, &mem);
    return npyio__make_subarray((npyio_dtype *)base, ndim, shape, where,
                                &mem, out);
}

/* ---- records: collecting fields, then packing them into one block ----------- */

/* A field while a record is being assembled: the name and title point to
 * storage of the collector (parser or builder). */
typedef struct pending_field {
    const char *name;
    size_t name_len;
    const char *title;
    size_t title_len;
    int64_t offset;
    npyio_dtype *dtype; /* a reference owned by the pending list */
} pending_field;

typedef struct pending {
    pending_field *fields;
    size_t count;
    size_t capacity;
    size_t text_bytes; /* names and titles with their NULs */
    npyio__mem mem;
} pending;

static void pending_init(pending *p, const npyio__mem *mem)
{
    memset(p, 0, sizeof *p);
    p->mem = *mem;
}

static void pending_release(pending *p)
{
    size_t i;

    for (i = 0; i < p->count; i++)
        npyio_dtype_unref(p->fields[i].dtype);
    npyio__free(p->fields);
    p->fields = NULL;
    p->count = p->capacity = 0;
}

/* Room for n fields at least, allocated once. */
static npyio_status pending_reserve(pending *p, size_t n)
{
    void *block = p->fields;
    npyio_status st;

    if (n <= p->capacity)
        return NPYIO_OK;
    st = npyio__realloc(&p->mem, &block, n * sizeof *p->fields,
                        "record fields");
    if (st == NPYIO_OK) {
        p->fields = block;
        p->capacity = n;
    }
    return st;
}

/* Append a field; takes over the dtype reference, even on failure. */
static npyio_status pending_push(pending *p, const pending_field *f)
{
    if (p->count == p->capacity) {
        size_t grown = p->capacity ? p->capacity * 2 : 16;
        void *block = p->fields;
        npyio_status st = npyio__realloc(&p->mem, &block,
                                         grown * sizeof *p->fields,
                                         "record fields");

        if (st != NPYIO_OK) {
            npyio_dtype_unref(f->dtype);
            return st;
        }
        p->fields = block;
        p->capacity = grown;
    }
    p->fields[p->count++] = *f;
    p->text_bytes += f->name_len + 1 + (f->title ? f->title_len + 1 : 0);
    return NPYIO_OK;
}

/* ---- duplicate names and titles ------------------------------------------------ */

typedef struct name_set {
    const char **text;
    size_t *len;
    size_t slots;
} name_set;

static uint64_t hash_text(const char *s, size_t n)
{
    uint64_t h = UINT64_C(14695981039346656037); /* FNV-1a */
    size_t i;

    for (i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * UINT64_C(1099511628211);
    return h;
}

/* Insert; false if already present. Open addressing, half full at most. */
static bool name_set_add(name_set *set, const char *s, size_t n)
{
    size_t i = (size_t)(hash_text(s, n) & (set->slots - 1));

    while (set->text[i] != NULL) {
        if (set->len[i] == n && memcmp(set->text[i], s, n) == 0)
            return false;
        i = (i + 1) & (set->slots - 1);
    }
    set->text[i] = s;
    set->len[i] = n;
    return true;
}

/* NumPy refuses a record in which a name or title is used twice ("name
 * already used as a name or title"). Linear time, whatever the count. */
static npyio_status check_unique(const pending *p, const char *where,
                                 npyio_status status)
{
    enum { SMALL_SLOTS = 256 };
    const char *small_text[SMALL_SLOTS];
    size_t small_len[SMALL_SLOTS];
    name_set set;
    void *block = NULL;
    size_t i, slots = 16;
    npyio_status st = NPYIO_OK;

    while (slots < 4 * p->count)
        slots *= 2;
    if (slots <= SMALL_SLOTS) { /* most records: no allocation */
        memset(small_text, 0, slots * sizeof *small_text);
        set.text = small_text;
        set.len = small_len;
    } else {
        st = npyio__alloc_zero(&p->mem,
                               slots * (sizeof(char *) + sizeof(size_t)),
                               "record name check", &block);
        if (st != NPYIO_OK)
            return st;
        set.text = block;
        set.len = (size_t *)(set.text + slots);
    }
    set.slots = slots;
    for (i = 0; i < p->count && st == NPYIO_OK; i++) {
        const pending_field *f = &p->fields[i];
        char shown[64];

        if (!name_set_add(&set, f->name, f->name_len))
            st = npyio__fail(status, "%s: field name '%s' is already "
                             "used as a name or title", where,
                             npyio__show(f->name, f->name_len, shown,
                                         sizeof shown));
        else if (f->title != NULL &&
                 !name_set_add(&set, f->title, f->title_len))
            st = npyio__fail(status, "%s: title '%s' is already used "
                             "as a name or title", where,
                             npyio__show(f->title, f->title_len, shown,
                                         sizeof shown));
    }
    npyio__free(block);
    return st;
}

static char *copy_text(char **cursor, const char *s, size_t n)
{
    char *at = *cursor;

    memcpy(at, s, n);
    at[n] = '\0';
    *cursor = at + n + 1;
    return at;
}

/*
 * Pack pending fields into a record dtype of the given itemsize and
 * alignment. The dtype references move from the pending list into the
 * record.
 */
static npyio_status pack_record(pending *p, size_t itemsize, size_t alignment,
                                const char *where, npyio_dtype **out)
{
    size_t fields_bytes, extra, i;
    npyio_dtype *dt;
    char *cursor;
    int depth = 0;
    bool objects = false;
    npyio_status st;

    *out = NULL;
    st = check_unique(p, where, NPYIO_E_FORMAT);
    if (st != NPYIO_OK)
        return st;
    if (!npyio__mul_size(p->count, sizeof(npyio__field), &fields_bytes) ||
        !npyio__add_size(fields_bytes, p->text_bytes, &extra))
        return npyio__fail(NPYIO_E_OVERFLOW, "%s: too many fields", where);
    for (i = 0; i < p->count; i++) {
        if (p->fields[i].dtype->depth > depth)
            depth = p->fields[i].dtype->depth;
        objects = objects || p->fields[i].dtype->has_objects;
    }
    if (depth + 1 > NPYIO__MAX_DEPTH)
        return npyio__fail(NPYIO_E_LIMIT, "%s: dtypes nested deeper than %d",
                           where, NPYIO__MAX_DEPTH);
    st = npyio__dtype_alloc(&p->mem, extra, &dt);
    if (st != NPYIO_OK)
        return st;
    dt->kind = NPYIO_KIND_RECORD;
    dt->byteorder = '|';
    dt->itemsize = itemsize;
    dt->alignment = alignment;
    dt->unit = NPYIO__DT_NONE;
    dt->multiplier = 1;
    dt->depth = depth + 1;
    dt->has_objects = objects;
    dt->field_count = p->count;
    dt->fields = (npyio__field *)(dt + 1);
    cursor = (char *)(dt->fields + p->count);
    for (i = 0; i < p->count; i++) {
        const pending_field *f = &p->fields[i];
        npyio__field *g = &dt->fields[i];

        g->name = copy_text(&cursor, f->name, f->name_len);
        g->name_len = f->name_len;
        g->title = f->title ? copy_text(&cursor, f->title, f->title_len)
                            : NULL;
        g->title_len = f->title_len;
        g->offset = f->offset;
        g->dtype = f->dtype;
    }
    p->count = 0; /* the references now belong to the record */
    *out = dt;
    return NPYIO_OK;
}

/* ---- descr lists (numpy.lib.format.descr_to_dtype) ------------------------------ */

/* A growable arena for decoded names: pending fields point into it, so it
 * only grows by new chunks, never moves. */
typedef struct chunk {
    struct chunk *next;
    size_t used, size;
    char data[];
} chunk;

typedef struct arena {
    chunk *head;
    const npyio__mem *mem;
    char inline_buf[512];
    size_t inline_used;
} arena;

static npyio_status arena_take(arena *a, size_t n, char **out)
{
    chunk *c;
    size_t size;
    npyio_status st;

    if (a->inline_used + n <= sizeof a->inline_buf) {
        *out = a->inline_buf + a->inline_used;
        a->inline_used += n;
        return NPYIO_OK;
    }
    if (a->head != NULL && a->head->used + n <= a->head->size) {
        *out = a->head->data + a->head->used;
        a->head->used += n;
        return NPYIO_OK;
    }
    size = n > 8192 ? n : 8192;
    st = npyio__alloc(a->mem, sizeof *c + size, "record names", (void **)&c);
    if (st != NPYIO_OK)
        return st;
    c->next = a->head;
    c->used = n;
    c->size = size;
    a->head = c;
    *out = c->data;
    return NPYIO_OK;
}

static void arena_free(arena *a)
{
    while (a->head != NULL) {
        chunk *next = a->head->next;

        npyio__free(a->head);
        a->head = next;
    }
}

typedef struct list_parser {
    const npyio__lit_doc *doc;
    const npyio_options *options;
    const npyio__mem *mem; /* the options' allocator */
    arena names;
} list_parser;

/* Decode a STR node into the arena. */
static npyio_status take_string(list_parser *lp, const npyio__lit_node *node,
                                const char **text, size_t *len)
{
    char *room;
    npyio_status st;

    if (node->flags == 0 || (node->flags == NPYIO__LIT_HIGH &&
                             lp->doc->encoding == NPYIO__LIT_UTF8)) {
        *text = lp->doc->text + node->pos; /* used as is: no NUL needed */
        *len = node->len;
    } else {
        st = arena_take(&lp->names, npyio__lit_str_room(node), &room);
        if (st != NPYIO_OK)
            return st;
        *len = npyio__lit_str_decode(lp->doc, node, room);
        *text = room;
    }
    return NPYIO_OK;
}

/* A shape as NumPy's np.dtype((dt, shape)) takes it: an int n, meaning (n,)
 * -- except 1, which NumPy 1.x reads as "no subarray" -- or a tuple of
 * ints. */
static npyio_status read_shape(const npyio__lit_doc *doc,
                               const npyio__lit_node *node, int64_t *shape,
                               int *ndim)
{
    const npyio__lit_node *dim;
    int n = 0;

    if (node->kind == NPYIO__LIT_INT) {
        if (node->value < 0)
            return npyio__fail(NPYIO_E_FORMAT, "header byte %zu: subarray "
                               "dimension is negative (%lld)",
                               npyio__lit_offset(doc, node),
                               (long long)node->value);
        shape[0] = node->value;
        *ndim = node->value == 1 ? 0 : 1;
        return NPYIO_OK;
    }
    /* np.dtype((dt, shape)) takes any sequence of ints. */
    if (node->kind != NPYIO__LIT_TUPLE && node->kind != NPYIO__LIT_LIST)
        return npyio__fail(NPYIO_E_FORMAT, "header byte %zu: a subarray "
                           "shape is %s, not an int or a tuple",
                           npyio__lit_offset(doc, node),
                           npyio__lit_kind_name(node));
    if (node->count > MAX_SUBARRAY_NDIM)
        return npyio__fail(NPYIO_E_LIMIT, "header byte %zu: a subarray has "
                           "more than %d dimensions",
                           npyio__lit_offset(doc, node), MAX_SUBARRAY_NDIM);
    for (dim = npyio__lit_child(doc, node); dim != NULL;
         dim = npyio__lit_next(doc, dim), n++) {
        if (dim->kind != NPYIO__LIT_INT || dim->value < 0)
            return npyio__fail(NPYIO_E_FORMAT, "header byte %zu: subarray "
                               "dimension %d is %s", npyio__lit_offset(doc, dim),
                               n, dim->kind == NPYIO__LIT_INT
                                      ? "negative"
                                      : npyio__lit_kind_name(dim));
        shape[n] = dim->value;
    }
    *ndim = n;
    return NPYIO_OK;
}

/* (descr, shape) */
static npyio_status subarray_from_node(list_parser *lp,
                                       const npyio__lit_node *node, int depth,
                                       npyio_dtype **out)
{
    const npyio__lit_node *first = npyio__lit_child(lp->doc, node);
    const npyio__lit_node *second = first ? npyio__lit_next(lp->doc, first)
                                          : NULL;
    int64_t shape[MAX_SUBARRAY_NDIM];
    npyio_dtype *base = NULL;
    int ndim = 0;
    npyio_status st;

    *out = NULL;
    if (node->count != 2)
        return npyio__fail(NPYIO_E_FORMAT, "header byte %zu: a subarray "
                           "descr is a (descr, shape) pair, not a %u-tuple",
                           npyio__lit_offset(lp->doc, node),
                           (unsigned)node->count);
    st = read_shape(lp->doc, second, shape, &ndim);
    if (st == NPYIO_OK)
        st = npyio__dtype_from_node_at(lp->doc, first, lp->options, depth + 1,
                                       &base);
    if (st == NPYIO_OK)
        st = npyio__make_subarray(base, ndim, shape, "descr", lp->mem, out);
    npyio_dtype_unref(base);
    return st;
}

/* A field entry's name: 'name' or ('title', 'name'). */
static npyio_status field_name(list_parser *lp, const npyio__lit_node *node,
                               pending_field *f)
{
    const npyio__lit_node *title, *name;
    npyio_status st;

    f->title = NULL;
    f->title_len = 0;
    if (node->kind == NPYIO__LIT_STR)
        return take_string(lp, node, &f->name, &f->name_len);
    if (node->kind != NPYIO__LIT_TUPLE || node->count != 2)
        return npyio__fail(NPYIO_E_FORMAT, "header byte %zu: field names "
                           "must be strings, or (title, name) pairs, not %s",
                           npyio__lit_offset(lp->doc, node),
                           npyio__lit_kind_name(node));
    title = npyio__lit_child(lp->doc, node);
    name = npyio__lit_next(lp->doc, title);
    if (name->kind != NPYIO__LIT_STR)
        return npyio__fail(NPYIO_E_FORMAT, "header byte %zu: field names "
                           "must be strings, not %s",
                           npyio__lit_offset(lp->doc, name),
                           npyio__lit_kind_name(name));
    if (title->kind != NPYIO__LIT_STR)
        return npyio__fail(NPYIO_E_UNSUPPORTED, "header byte %zu: a field "
                           "title is %s; only string titles are supported",
                           npyio__lit_offset(lp->doc, title),
                           npyio__lit_kind_name(title));
    st = take_string(lp, name, &f->name, &f->name_len);
    if (st == NPYIO_OK)
        st = take_string(lp, title, &f->title, &f->title_len);
    return st;
}

/* NumPy drops an entry named '' whose dtype is void without fields (a
 * subarray counts: its type is void too) and keeps its bytes as a gap. */
static bool is_padding(const pending_field *f)
{
    return f->title == NULL && f->name_len == 0 &&
           (f->dtype->kind == NPYIO_KIND_VOID ||
            f->dtype->kind == NPYIO_KIND_SUBARRAY);
}

static npyio_status field_from_node(list_parser *lp,
                                    const npyio__lit_node *entry, int depth,
                                    pending_field *f)
{
    const npyio__lit_node *name, *descr, *shape_node;
    npyio_dtype *element = NULL;
    npyio_status st;

    f->dtype = NULL;
    if ((entry->kind != NPYIO__LIT_TUPLE && entry->kind != NPYIO__LIT_LIST) ||
        entry->count < 2 || entry->count > 3)
        return npyio__fail(NPYIO_E_FORMAT, "header byte %zu: a field is "
                           "(name, descr) or (name, descr, shape), not %s "
                           "of %u items", npyio__lit_offset(lp->doc, entry),
                           npyio__lit_kind_name(entry),
                           (unsigned)entry->count);
    name = npyio__lit_child(lp->doc, entry);
    descr = npyio__lit_next(lp->doc, name);
    shape_node = npyio__lit_next(lp->doc, descr);
    st = field_name(lp, name, f);
    if (st == NPYIO_OK)
        st = npyio__dtype_from_node_at(lp->doc, descr, lp->options, depth + 1,
                                       &element);
    if (st != NPYIO_OK)
        return st;
    if (shape_node == NULL) {
        f->dtype = element;
        return NPYIO_OK;
    }
    {
        int64_t shape[MAX_SUBARRAY_NDIM];
        int ndim = 0;

        st = read_shape(lp->doc, shape_node, shape, &ndim);
        if (st == NPYIO_OK)
            st = npyio__make_subarray(element, ndim, shape, "descr",
                                      lp->mem, &f->dtype);
    }
    npyio_dtype_unref(element);
    return st;
}

static npyio_status record_from_node(list_parser *lp,
                                     const npyio__lit_node *list, int depth,
                                     npyio_dtype **out)
{
    const npyio__lit_node *entry;
    pending p;
    uint64_t offset = 0;
    npyio_status st = NPYIO_OK;

    pending_init(&p, lp->mem);
    st = pending_reserve(&p, list->count);
    for (entry = npyio__lit_child(lp->doc, list);
         entry != NULL && st == NPYIO_OK;
         entry = npyio__lit_next(lp->doc, entry)) {
        pending_field f;

        st = field_from_node(lp, entry, depth, &f);
        if (st != NPYIO_OK)
            break;
        f.offset = (int64_t)offset;
        offset += f.dtype->itemsize;
        if (offset > NPYIO__MAX_ITEMSIZE) {
            npyio_dtype_unref(f.dtype);
            st = npyio__fail(NPYIO_E_OVERFLOW, "header byte %zu: the "
                             "record's size is above NumPy's limit of "
                             "2147483647 bytes",
                             npyio__lit_offset(lp->doc, entry));
        } else if (is_padding(&f)) {
            npyio_dtype_unref(f.dtype);
        } else {
            st = pending_push(&p, &f);
        }
    }
    if (st == NPYIO_OK)
        st = pack_record(&p, (size_t)offset, 1, "descr", out);
    pending_release(&p);
    return st;
}

npyio_status npyio__compound_from_node(const npyio__lit_doc *doc,
                                       const npyio__lit_node *node,
                                       const npyio_options *options, int depth,
                                       npyio_dtype **out)
{
    list_parser lp;
    npyio__mem mem;
    npyio_status st;

    *out = NULL;
    lp.doc = doc;
    lp.options = options;
    npyio__mem_init(&mem, options);
    lp.mem = &mem;
    memset(&lp.names, 0, sizeof lp.names);
    lp.names.mem = &mem;
    if (depth >= NPYIO__MAX_DEPTH)
        return npyio__fail(NPYIO_E_LIMIT, "header byte %zu: dtypes nested "
                           "deeper than %d", npyio__lit_offset(doc, node),
                           NPYIO__MAX_DEPTH);
    if (node->kind == NPYIO__LIT_TUPLE)
        st = subarray_from_node(&lp, node, depth, out);
    else
        st = record_from_node(&lp, node, depth, out);
    arena_free(&lp.names);
    return st;
}

/* ---- numbered fields (comma-separated type strings) ----------------------------- */

npyio_status npyio__record_numbered(npyio_dtype *const *types, size_t n,
                                    const char *where, const npyio__mem *mem,
                                    npyio_dtype **out)
{
    enum { NAME_ROOM = 24 }; /* "f" and 20 digits */
    pending p;
    char *names = NULL;
    uint64_t offset = 0;
    size_t i;
    npyio_status st;

    *out = NULL;
    pending_init(&p, mem);
    st = pending_reserve(&p, n);
    if (st == NPYIO_OK)
        st = npyio__alloc_array(mem, n, NAME_ROOM, "field names",
                                (void **)&names);
    for (i = 0; i < n && st == NPYIO_OK; i++) {
        pending_field f = {names + i * NAME_ROOM, 0, NULL, 0,
                           (int64_t)offset, NULL};

        offset += types[i]->itemsize;
        if (offset > NPYIO__MAX_ITEMSIZE) {
            st = npyio__fail(NPYIO_E_OVERFLOW, "%s: the record's size is "
                             "above NumPy's limit of 2147483647 bytes",
                             where);
            break;
        }
        f.name_len = (size_t)snprintf(names + i * NAME_ROOM, NAME_ROOM,
                                      "f%zu", i);
        f.dtype = npyio_dtype_ref(types[i]);
        st = pending_push(&p, &f);
    }
    if (st == NPYIO_OK)
        st = pack_record(&p, (size_t)offset, 1, where, out);
    pending_release(&p);
    npyio__free(names);
    return st;
}

/* ---- the builder ------------------------------------------------------------------ */

#define NPYIO__MAGIC_BUILDER 0x42554c44u /* "BULD" */

struct npyio_record_builder {
    uint32_t magic;
    uint32_t flags;
    pending fields; /* names and titles are separate blocks it owns */
    uint64_t end;     /* end of the last field added: where -1 places */
    uint64_t max_end; /* end of the field that ends last */
    size_t alignment;
};

static npyio_status check_builder(const npyio_record_builder *b,
                                  const char *where)
{
    if (b == NULL || b->magic != NPYIO__MAGIC_BUILDER)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: %s", where,
                           b == NULL ? "builder is NULL"
                                     : "the pointer given as a builder is "
                                       "not an npyio_record_builder");
    return NPYIO_OK;
}

npyio_status npyio_record_builder_new(uint32_t flags,
                                      const npyio_options *options,
                                      npyio_record_builder **out)
{
    static const char where[] = "npyio_record_builder_new";
    npyio_record_builder *b;
    npyio__mem mem;
    npyio_status st;

    if (out == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: out is NULL", where);
    *out = NULL;
    if ((flags & ~NPYIO_RECORD_ALIGNED) != 0)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: unknown flags 0x%x",
                           where, (unsigned)flags);
    npyio__mem_init(&mem, options);
    st = npyio__alloc_zero(&mem, sizeof *b, "record builder", (void **)&b);
    if (st != NPYIO_OK)
        return st;
    b->magic = NPYIO__MAGIC_BUILDER;
    b->flags = flags;
    pending_init(&b->fields, &mem);
    b->alignment = 1;
    *out = b;
    return NPYIO_OK;
}

static void free_builder_texts(npyio_record_builder *b)
{
    size_t i;

    for (i = 0; i < b->fields.count; i++) {
        npyio__free((void *)b->fields.fields[i].name);
        npyio__free((void *)b->fields.fields[i].title);
    }
}

void npyio_record_builder_free(npyio_record_builder *builder)
{
    if (builder == NULL || builder->magic != NPYIO__MAGIC_BUILDER)
        return;
    free_builder_texts(builder);
    pending_release(&builder->fields);
    builder->magic = NPYIO__MAGIC_DEAD;
    npyio__free(builder);
}

static npyio_status dup_text(const npyio__mem *mem, const char *s,
                             const char **out, size_t *len)
{
    char *copy;
    npyio_status st;

    *len = strlen(s);
    st = npyio__alloc(mem, *len + 1, "field name", (void **)&copy);
    if (st == NPYIO_OK)
        memcpy(copy, s, *len + 1);
    *out = copy;
    return st;
}

static uint64_t align_up(uint64_t v, size_t alignment)
{
    return (v + alignment - 1) / alignment * alignment;
}

npyio_status npyio_record_builder_add(npyio_record_builder *builder,
                                      const char *name, const char *title,
                                      int64_t offset, const npyio_dtype *dtype,
                                      int ndim, const int64_t *shape)
{
    static const char where[] = "npyio_record_builder_add";
    pending_field f;
    npyio_status st;
    bool aligned;
    uint64_t at, end;

    st = check_builder(builder, where);
    if (st == NPYIO_OK)
        st = npyio__check_dtype(dtype, where);
    if (st != NPYIO_OK)
        return st;
    if (name == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: name is NULL", where);
    if (offset < -1)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: offset %lld is negative "
                           "(-1 places the field after the previous one)",
                           where, (long long)offset);
    memset(&f, 0, sizeof f);
    st = npyio__make_subarray((npyio_dtype *)dtype, ndim, shape, where,
                              &builder->fields.mem, &f.dtype);
    if (st != NPYIO_OK)
        return st;
    aligned = (builder->flags & NPYIO_RECORD_ALIGNED) != 0;
    at = offset >= 0 ? (uint64_t)offset
         : aligned   ? align_up(builder->end, f.dtype->alignment)
                     : builder->end;
    end = at + f.dtype->itemsize;
    if (end > NPYIO__MAX_ITEMSIZE) {
        npyio_dtype_unref(f.dtype);
        return npyio__fail(NPYIO_E_OVERFLOW, "%s: the field ends at byte "
                           "%llu, above NumPy's limit of 2147483647", where,
                           (unsigned long long)end);
    }
    f.offset = (int64_t)at;
    st = dup_text(&builder->fields.mem, name, &f.name, &f.name_len);
    if (st == NPYIO_OK && title != NULL)
        st = dup_text(&builder->fields.mem, title, &f.title, &f.title_len);
    if (st == NPYIO_OK)
        st = pending_push(&builder->fields, &f);
    else
        npyio_dtype_unref(f.dtype);
    if (st != NPYIO_OK) {
        npyio__free((void *)f.name);
        npyio__free((void *)f.title);
        return st;
    }
    /* Refuse duplicates now, so a failed add leaves the builder as it was. */
    st = check_unique(&builder->fields, where, NPYIO_E_INVALID_ARG);
    if (st != NPYIO_OK) {
        builder->fields.count--;
        builder->fields.text_bytes -= f.name_len + 1 +
                                      (f.title ? f.title_len + 1 : 0);
        npyio_dtype_unref(f.dtype);
        npyio__free((void *)f.name);
        npyio__free((void *)f.title);
        return st;
    }
    builder->end = end;
    if (end > builder->max_end)
        builder->max_end = end;
    if (aligned && f.dtype->alignment > builder->alignment)
        builder->alignment = f.dtype->alignment;
    return NPYIO_OK;
}

npyio_status npyio_record_builder_finish(const npyio_record_builder *builder,
                                         size_t itemsize, npyio_dtype **out)
{
    static const char where[] = "npyio_record_builder_finish";
    const npyio_record_builder *b = builder;
    uint64_t size;
    pending copy;
    size_t i;
    npyio_status st;

    if (out == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: out is NULL", where);
    *out = NULL;
    st = check_builder(b, where);
    if (st != NPYIO_OK)
        return st;
    size = align_up(b->max_end, b->alignment);
    if (itemsize != 0 && itemsize < b->max_end)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: itemsize %zu is smaller "
                           "than the end of the fields (%llu)", where,
                           itemsize, (unsigned long long)b->max_end);
    if (itemsize != 0)
        size = itemsize;
    if (size > NPYIO__MAX_ITEMSIZE)
        return npyio__fail(NPYIO_E_OVERFLOW, "%s: itemsize %llu is above "
                           "NumPy's limit of 2147483647", where,
                           (unsigned long long)size);
    /* pack_record takes over references: give it its own. */
    copy = b->fields;
    copy.fields = NULL;
    copy.count = copy.capacity = copy.text_bytes = 0;
    for (i = 0; i < b->fields.count && st == NPYIO_OK; i++) {
        pending_field f = b->fields.fields[i];

        f.dtype = npyio_dtype_ref(f.dtype);
        st = pending_push(&copy, &f);
    }
    if (st == NPYIO_OK)
        st = pack_record(&copy, (size_t)size, b->alignment, where, out);
    pending_release(&copy);
    return st;
}

/* ---- descr emission (NumPy's dtype.descr, then repr) ----------------------------- */

typedef struct writer {
    char *out;
    size_t cap;
    size_t len;
} writer;

static void put(writer *w, const char *s, size_t n)
{
    if (w->len < w->cap)
        memcpy(w->out + w->len, s, n <= w->cap - w->len ? n : w->cap - w->len);
    w->len += n;
}

static void put_repr(writer *w, const char *s, size_t n)
{
    size_t room = w->len < w->cap ? w->cap - w->len : 0;

    w->len += npyio__lit_repr_str(s, n, room ? w->out + w->len : NULL, room);
}

static void put_shape(writer *w, int ndim, const int64_t *shape)
{
    char num[24];
    int i;

    put(w, "(", 1);
    for (i = 0; i < ndim; i++) {
        if (i > 0)
            put(w, ", ", 2);
        put(w, num, npyio__format_u64((uint64_t)shape[i], num));
    }
    put(w, ndim == 1 ? ",)" : ")", ndim == 1 ? 2 : 1);
}

static void put_gap(writer *w, uint64_t bytes)
{
    char num[24];

    put(w, "('', '|V", 8);
    put(w, num, npyio__format_u64(bytes, num));
    put(w, "')", 2);
}

static npyio_status put_descr(writer *w, const npyio_dtype *dt);

static npyio_status put_field(writer *w, const npyio__field *f)
{
    const npyio_dtype *dt = f->dtype;
    npyio_status st;

    put(w, "(", 1);
    if (f->title != NULL) {
        put(w, "(", 1);
        put_repr(w, f->title, f->title_len);
        put(w, ", ", 2);
        put_repr(w, f->name, f->name_len);
        put(w, ")", 1);
    } else {
        put_repr(w, f->name, f->name_len);
    }
    put(w, ", ", 2);
    /* A subarray field is written (name, base, shape). */
    st = put_descr(w, dt->kind == NPYIO_KIND_SUBARRAY ? dt->base : dt);
    if (st != NPYIO_OK)
        return st;
    if (dt->kind == NPYIO_KIND_SUBARRAY) {
        put(w, ", ", 2);
        put_shape(w, dt->ndim, dt->shape);
    }
    put(w, ")", 1);
    return NPYIO_OK;
}

static npyio_status put_record(writer *w, const npyio_dtype *dt)
{
    uint64_t offset = 0;
    size_t i;
    bool first = true;
    npyio_status st;

    put(w, "[", 1);
    for (i = 0; i < dt->field_count; i++) {
        const npyio__field *f = &dt->fields[i];

        if ((uint64_t)f->offset < offset)
            return npyio__fail(NPYIO_E_UNSUPPORTED,
                               "field '%s' at offset %lld overlaps the field "
                               "before it or is out of order: no descr can "
                               "express such a record (np.save refuses it "
                               "too)", f->name, (long long)f->offset);
        if (!first)
            put(w, ", ", 2);
        if ((uint64_t)f->offset > offset) {
            put_gap(w, (uint64_t)f->offset - offset);
            put(w, ", ", 2);
        }
        first = false;
        st = put_field(w, f);
        if (st != NPYIO_OK)
            return st;
        offset = (uint64_t)f->offset + f->dtype->itemsize;
    }
    if (dt->itemsize > offset) {
        if (!first)
            put(w, ", ", 2);
        put_gap(w, dt->itemsize - offset);
    }
    put(w, "]", 1);
    return NPYIO_OK;
}

static npyio_status put_descr(writer *w, const npyio_dtype *dt)
{
    char text[64];
    npyio_status st;

    switch (dt->kind) {
    case NPYIO_KIND_RECORD: return put_record(w, dt);
    case NPYIO_KIND_SUBARRAY:
        put(w, "(", 1);
        st = put_descr(w, dt->base);
        if (st != NPYIO_OK)
            return st;
        put(w, ", ", 2);
        put_shape(w, dt->ndim, dt->shape);
        put(w, ")", 1);
        return NPYIO_OK;
    default:
        put(w, "'", 1);
        put(w, text, npyio__dtype_str(dt, text, sizeof text));
        put(w, "'", 1);
        return NPYIO_OK;
    }
}

npyio_status npyio__compound_descr(const npyio_dtype *dtype, char *out,
                                   size_t cap, size_t *len)
{
    writer w = {out, cap, 0};
    npyio_status st = put_descr(&w, dtype);

    *len = w.len;
    return st;
}

/* ---- equality, native order, release --------------------------------------------- */

bool npyio__compound_equal(const npyio_dtype *a, const npyio_dtype *b)
{
    size_t i;
    int d;

    if (a->kind == NPYIO_KIND_SUBARRAY) {
        if (a->ndim != b->ndim || !npyio_dtype_equal(a->base, b->base))
            return false;
        for (d = 0; d < a->ndim; d++)
            if (a->shape[d] != b->shape[d])
                return false;
        return true;
    }
    if (a->field_count != b->field_count || a->itemsize != b->itemsize)
        return false;
    for (i = 0; i < a->field_count; i++) {
        const npyio__field *f = &a->fields[i], *g = &b->fields[i];

        if (f->offset != g->offset || f->name_len != g->name_len ||
            memcmp(f->name, g->name, f->name_len) != 0 ||
            (f->title == NULL) != (g->title == NULL) ||
            (f->title != NULL && (f->title_len != g->title_len ||
                                  memcmp(f->title, g->title,
                                         f->title_len) != 0)) ||
            !npyio_dtype_equal(f->dtype, g->dtype))
            return false;
    }
    return true;
}

npyio_status npyio__compound_with_order(const npyio_dtype *dtype, char order,
                                        const npyio__mem *mem,
                                        npyio_dtype **out)
{
    npyio_dtype *base = NULL;
    pending p;
    size_t i;
    npyio_status st = NPYIO_OK;

    *out = NULL;
    if (dtype->kind == NPYIO_KIND_SUBARRAY) {
        st = npyio__dtype_with_order(dtype->base, order, mem, &base);
        if (st == NPYIO_OK)
            st = npyio__make_subarray(base, dtype->ndim, dtype->shape,
                                      "npyio_dtype_with_byteorder", mem, out);
        npyio_dtype_unref(base);
        return st;
    }
    pending_init(&p, mem);
    for (i = 0; i < dtype->field_count && st == NPYIO_OK; i++) {
        const npyio__field *f = &dtype->fields[i];
        pending_field g = {f->name, f->name_len, f->title, f->title_len,
                           f->offset, NULL};

        st = npyio__dtype_with_order(f->dtype, order, mem, &g.dtype);
        if (st == NPYIO_OK)
            st = pending_push(&p, &g);
    }
    if (st == NPYIO_OK)
        st = pack_record(&p, dtype->itemsize, dtype->alignment,
                         "npyio_dtype_with_byteorder", out);
    pending_release(&p);
    return st;
}

void npyio__compound_release(npyio_dtype *dtype)
{
    size_t i;

    for (i = 0; i < dtype->field_count; i++)
        npyio_dtype_unref(dtype->fields[i].dtype);
    npyio_dtype_unref(dtype->base);
}

/* ---- overlapping fields ---------------------------------------------------------- */

/* A field's byte range, for sorting. */
typedef struct span {
    uint64_t begin, end;
    size_t index;
} span;

static int span_order(const void *a, const void *b)
{
    const span *x = a, *y = b;

    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static npyio_status overlap_fail(const npyio_dtype *rec, const span *a,
                                 const span *b, const char *where,
                                 const char *why)
{
    const npyio__field *f = &rec->fields[a->index], *g = &rec->fields[b->index];
    char shown_f[64], shown_g[64];

    return npyio__fail(NPYIO_E_UNSUPPORTED, "%s: fields '%s' (bytes %llu to "
                       "%llu) and '%s' (bytes %llu to %llu) overlap: %s",
                       where,
                       npyio__show(f->name, f->name_len, shown_f,
                                   sizeof shown_f),
                       (unsigned long long)a->begin,
                       (unsigned long long)a->end - 1,
                       npyio__show(g->name, g->name_len, shown_g,
                                   sizeof shown_g),
                       (unsigned long long)b->begin,
                       (unsigned long long)b->end - 1, why);
}

/* One record's own fields: one pass when they are in offset order (every
 * record a descr describes), a sorted copy otherwise. Fields of 0 bytes
 * occupy no byte and overlap nothing. */
static npyio_status record_disjoint(const npyio_dtype *rec, const char *where,
                                    const char *why)
{
    span last = {0, 0, 0}, *sorted = NULL;
    npyio__mem mem;
    size_t i, n = 0;
    bool in_order = true;
    npyio_status st;

    for (i = 0; i < rec->field_count; i++) {
        span s = {(uint64_t)rec->fields[i].offset, 0, i};

        s.end = s.begin + rec->fields[i].dtype->itemsize;
        if (s.end == s.begin)
            continue;
        if (s.begin < last.begin) {
            in_order = false;
            break;
        }
        if (s.begin < last.end)
            return overlap_fail(rec, &last, &s, where, why);
        if (s.end > last.end)
            last = s;
    }
    if (in_order)
        return NPYIO_OK;
    npyio__dtype_mem(rec, &mem); /* a temporary of a call given rec */
    st = npyio__alloc_array(&mem, rec->field_count, sizeof *sorted,
                            "field ranges", (void **)&sorted);
    if (st != NPYIO_OK)
        return st;
    for (i = 0; i < rec->field_count; i++) {
        span s = {(uint64_t)rec->fields[i].offset, 0, i};

        s.end = s.begin + rec->fields[i].dtype->itemsize;
        if (s.end > s.begin)
            sorted[n++] = s;
    }
    qsort(sorted, n, sizeof *sorted, span_order);
    last = sorted[0]; /* n >= 2: two fields were out of order */
    for (i = 1; i < n && st == NPYIO_OK; i++) {
        if (sorted[i].begin < last.end)
            st = overlap_fail(rec, &last, &sorted[i], where, why);
        else if (sorted[i].end > last.end)
            last = sorted[i];
    }
    npyio__free(sorted);
    return st;
}

npyio_status npyio__check_disjoint(const npyio_dtype *dtype,
                                   const char *where, const char *why)
{
    size_t i;
    npyio_status st = NPYIO_OK;

    /* Nesting is bounded by NPYIO__MAX_DEPTH, so is this recursion. */
    if (dtype->kind == NPYIO_KIND_SUBARRAY)
        return npyio__check_disjoint(dtype->base, where, why);
    if (dtype->kind != NPYIO_KIND_RECORD)
        return NPYIO_OK;
    st = record_disjoint(dtype, where, why);
    for (i = 0; i < dtype->field_count && st == NPYIO_OK; i++)
        st = npyio__check_disjoint(dtype->fields[i].dtype, where, why);
    return st;
}

/* ---- queries ------------------------------------------------------------------------ */

static const npyio__field *field_at(const npyio_dtype *dtype, size_t i)
{
    if (dtype == NULL || dtype->magic != NPYIO__MAGIC_DTYPE ||
        dtype->kind != NPYIO_KIND_RECORD || i >= dtype->field_count)
        return NULL;
    return &dtype->fields[i];
}

static const npyio_dtype *subarray_of(const npyio_dtype *dtype)
{
    if (dtype == NULL || dtype->magic != NPYIO__MAGIC_DTYPE ||
        dtype->kind != NPYIO_KIND_SUBARRAY)
        return NULL;
    return dtype;
}

const npyio_dtype *npyio_dtype_subarray_base(const npyio_dtype *dtype)
{
    const npyio_dtype *s = subarray_of(dtype);

    return s ? s->base : NULL;
}

int npyio_dtype_subarray_ndim(const npyio_dtype *dtype)
{
    const npyio_dtype *s = subarray_of(dtype);

    return s ? s->ndim : 0;
}

const int64_t *npyio_dtype_subarray_shape(const npyio_dtype *dtype)
{
    const npyio_dtype *s = subarray_of(dtype);

    return s ? s->shape : NULL;
}

size_t npyio_dtype_field_count(const npyio_dtype *dtype)
{
    if (dtype == NULL || dtype->magic != NPYIO__MAGIC_DTYPE)
        return 0;
    return dtype->field_count;
}

const char *npyio_dtype_field_name(const npyio_dtype *dtype, size_t i,
                                   size_t *len)
{
    const npyio__field *f = field_at(dtype, i);

    if (len != NULL)
        *len = f ? f->name_len : 0;
    return f ? f->name : NULL;
}

const char *npyio_dtype_field_title(const npyio_dtype *dtype, size_t i,
                                    size_t *len)
{
    const npyio__field *f = field_at(dtype, i);

    if (len != NULL)
        *len = f && f->title ? f->title_len : 0;
    return f ? f->title : NULL;
}

int64_t npyio_dtype_field_offset(const npyio_dtype *dtype, size_t i)
{
    const npyio__field *f = field_at(dtype, i);

    return f ? f->offset : -1;
}

const npyio_dtype *npyio_dtype_field_dtype(const npyio_dtype *dtype, size_t i)
{
    const npyio__field *f = field_at(dtype, i);

    if (f == NULL)
        return NULL;
    return f->dtype->kind == NPYIO_KIND_SUBARRAY ? f->dtype->base : f->dtype;
}

int npyio_dtype_field_ndim(const npyio_dtype *dtype, size_t i)
{
    const npyio__field *f = field_at(dtype, i);

    return f && f->dtype->kind == NPYIO_KIND_SUBARRAY ? f->dtype->ndim : 0;
}

const int64_t *npyio_dtype_field_shape(const npyio_dtype *dtype, size_t i)
{
    const npyio__field *f = field_at(dtype, i);

    return f && f->dtype->kind == NPYIO_KIND_SUBARRAY ? f->dtype->shape
                                                       : NULL;
}

npyio_status npyio_dtype_field_index(const npyio_dtype *dtype,
                                     const char *name, size_t *index)
{
    static const char where[] = "npyio_dtype_field_index";
    size_t i, n;
    npyio_status st;

    if (index == NULL || name == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: %s is NULL", where,
                           index == NULL ? "index" : "name");
    *index = 0;
    st = npyio__check_dtype(dtype, where);
    if (st != NPYIO_OK)
        return st;
    n = strlen(name);
    for (i = 0; i < dtype->field_count; i++) {
        const npyio__field *f = &dtype->fields[i];

        if ((f->name_len == n && memcmp(f->name, name, n) == 0) ||
            (f->title != NULL && f->title_len == n &&
             memcmp(f->title, name, n) == 0)) {
            *index = i;
            return NPYIO_OK;
        }
    }
    return npyio__fail(NPYIO_E_NOT_FOUND, "%s: no field named '%s'", where,
                       name);
}

int npyio_dtype_contains_objects(const npyio_dtype *dtype)
{
    return dtype != NULL && dtype->magic == NPYIO__MAGIC_DTYPE &&
           dtype->has_objects;
}
