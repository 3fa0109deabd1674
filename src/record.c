/*
 * record.c - making compound dtypes: subarrays, records packed into one
 * block from collected fields (names and titles checked unique), the
 * numbered records of comma-separated type strings, the public record
 * builder, and dtypes derived in another byte order (which rebuilds records
 * and subarrays). Sits on the dtype model (dtype.c), which it calls and
 * which never calls it; knows nothing of descr text or the literal parser
 * (descr.c parses descrs and builds through this module).
 *
 * A record is one allocation: the dtype, its field array and the names and
 * titles, so parsing a 50-field header costs one allocation for the record
 * (plus any non-built-in field dtypes). Walking nested dtypes recurses at
 * most NPYIO__MAX_DEPTH deep: every dtype records its depth and none deeper
 * is built.
 */
#include "error.h"
#include "options.h"
#include "record.h"

#include <stdio.h>
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

npyio_status npyio_dtype_new_subarray(const npyio_dtype *base, int ndim,
                                      const int64_t *shape, npyio_dtype **out)
{
    static const char where[] = "npyio_dtype_new_subarray";
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

void npyio__pending_init(npyio__pending *p, const npyio__mem *mem)
{
    memset(p, 0, sizeof *p);
    p->mem = *mem;
}

void npyio__pending_release(npyio__pending *p)
{
    size_t i;

    for (i = 0; i < p->count; i++)
        npyio_dtype_unref(p->fields[i].dtype);
    npyio__free(p->fields);
    p->fields = NULL;
    p->count = p->capacity = 0;
}

npyio_status npyio__pending_reserve(npyio__pending *p, size_t n)
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

npyio_status npyio__pending_push(npyio__pending *p,
                                 const npyio__pending_field *f)
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

/* The slot holding s, or the empty one where it would go. Open
 * addressing, half full at most. */
static size_t name_set_slot(const name_set *set, const char *s, size_t n)
{
    size_t i = (size_t)(hash_text(s, n) & (set->slots - 1));

    while (set->text[i] != NULL &&
           !(set->len[i] == n && memcmp(set->text[i], s, n) == 0))
        i = (i + 1) & (set->slots - 1);
    return i;
}

static bool name_set_has(const name_set *set, const char *s, size_t n)
{
    return set->text[name_set_slot(set, s, n)] != NULL;
}

/* Insert; false if already present. */
static bool name_set_add(name_set *set, const char *s, size_t n)
{
    size_t i = name_set_slot(set, s, n);

    if (set->text[i] != NULL)
        return false;
    set->text[i] = s;
    set->len[i] = n;
    return true;
}

/* A table for `count` texts at most a quarter full (a power of two). */
static size_t name_set_slots(size_t count)
{
    size_t slots = 16;

    while (slots < 4 * count)
        slots *= 2;
    return slots;
}

/* NumPy's words for a name or title used twice. */
static npyio_status used_twice(npyio_status status, const char *where,
                               const char *what, const char *s, size_t n)
{
    char shown[64];

    return npyio__fail(status, "%s: %s '%s' is already used as a name or "
                       "title", where, what,
                       npyio__show(s, n, shown, sizeof shown));
}

/* The names and titles of fields[0, count) into the set; `status` naming
 * the first one already there. */
static npyio_status name_set_fill(name_set *set,
                                  const npyio__pending_field *fields,
                                  size_t count, const char *where,
                                  npyio_status status)
{
    size_t i;

    for (i = 0; i < count; i++) {
        const npyio__pending_field *f = &fields[i];

        if (!name_set_add(set, f->name, f->name_len))
            return used_twice(status, where, "field name", f->name,
                              f->name_len);
        if (f->title != NULL && !name_set_add(set, f->title, f->title_len))
            return used_twice(status, where, "title", f->title,
                              f->title_len);
    }
    return NPYIO_OK;
}

/* An empty table of `slots` entries in one block of mem's. */
static npyio_status name_set_new(const npyio__mem *mem, size_t slots,
                                 name_set *set, void **block)
{
    npyio_status st = npyio__alloc_zero(mem,
                                        slots * (sizeof(char *) +
                                                 sizeof(size_t)),
                                        "record name check", block);

    if (st == NPYIO_OK) {
        set->text = *block;
        set->len = (size_t *)(set->text + slots);
        set->slots = slots;
    }
    return st;
}

/* NumPy refuses a record in which a name or title is used twice ("name
 * already used as a name or title"). Linear time, whatever the count. */
static npyio_status check_unique(const npyio__pending *p, const char *where,
                                 npyio_status status)
{
    enum { SMALL_SLOTS = 256 };
    const char *small_text[SMALL_SLOTS];
    size_t small_len[SMALL_SLOTS];
    name_set set;
    void *block = NULL;
    size_t slots = name_set_slots(p->count);
    npyio_status st;

    if (slots <= SMALL_SLOTS) { /* most records: no allocation */
        memset(small_text, 0, slots * sizeof *small_text);
        set.text = small_text;
        set.len = small_len;
        set.slots = slots;
    } else {
        st = name_set_new(&p->mem, slots, &set, &block);
        if (st != NPYIO_OK)
            return st;
    }
    st = name_set_fill(&set, p->fields, p->count, where, status);
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

npyio_status npyio__record_pack(npyio__pending *p, size_t itemsize,
                                size_t alignment, const char *where,
                                npyio_dtype **out)
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
        const npyio__pending_field *f = &p->fields[i];
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

/* ---- numbered fields (comma-separated type strings) ----------------------------- */

npyio_status npyio__record_numbered(npyio_dtype *const *types, size_t n,
                                    const char *where, const npyio__mem *mem,
                                    npyio_dtype **out)
{
    enum { NAME_ROOM = 24 }; /* "f" and 20 digits */
    npyio__pending p;
    char *names = NULL;
    uint64_t offset = 0;
    size_t i;
    npyio_status st;

    *out = NULL;
    npyio__pending_init(&p, mem);
    st = npyio__pending_reserve(&p, n);
    if (st == NPYIO_OK)
        st = npyio__alloc_array(mem, n, NAME_ROOM, "field names",
                                (void **)&names);
    for (i = 0; i < n && st == NPYIO_OK; i++) {
        npyio__pending_field f = {names + i * NAME_ROOM, 0, NULL, 0,
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
        st = npyio__pending_push(&p, &f);
    }
    if (st == NPYIO_OK)
        st = npyio__record_pack(&p, (size_t)offset, 1, where, out);
    npyio__pending_release(&p);
    npyio__free(names);
    return st;
}

/* ---- the builder ------------------------------------------------------------------ */

#define NPYIO__MAGIC_BUILDER 0x42554c44u /* "BULD" */

struct npyio_record_builder {
    uint32_t magic;
    uint32_t flags;
    npyio__pending fields; /* names and titles are separate blocks it owns */
    uint64_t end;     /* end of the last field added: where -1 places */
    uint64_t max_end; /* end of the field that ends last */
    size_t alignment;
    /* Every name and title so far (the texts are the fields'), kept from
     * add to add so that a record of n fields is built in O(n). */
    name_set names;
    void *names_block;
    size_t names_count;
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
    st = npyio__check_flags(flags, NPYIO_RECORD_ALIGNED, where);
    if (st != NPYIO_OK)
        return st;
    npyio__mem_init(&mem, options);
    st = npyio__alloc_zero(&mem, sizeof *b, "record builder", (void **)&b);
    if (st != NPYIO_OK)
        return st;
    b->magic = NPYIO__MAGIC_BUILDER;
    b->flags = flags;
    npyio__pending_init(&b->fields, &mem);
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
    npyio__pending_release(&builder->fields);
    npyio__free(builder->names_block);
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

/* Room in the builder's name set for `more` texts: a table twice as
 * large, refilled from the fields, when it would be over a quarter full
 * (amortised O(1) an add). */
static npyio_status reserve_names(npyio_record_builder *b, size_t more,
                                  const char *where)
{
    size_t slots = name_set_slots(b->names_count + more);
    name_set set;
    void *block = NULL;
    npyio_status st;

    if (slots <= b->names.slots)
        return NPYIO_OK;
    st = name_set_new(&b->fields.mem, slots, &set, &block);
    if (st == NPYIO_OK) /* the fields' names are known to be unique */
        st = name_set_fill(&set, b->fields.fields, b->fields.count, where,
                           NPYIO_E_INVALID_ARG);
    if (st != NPYIO_OK) {
        npyio__free(block);
        return st;
    }
    npyio__free(b->names_block);
    b->names_block = block;
    b->names = set;
    return NPYIO_OK;
}

/* The new field's name and title against the builder's and each other. */
static npyio_status check_new_names(const npyio_record_builder *b,
                                    const npyio__pending_field *f,
                                    const char *where)
{
    if (name_set_has(&b->names, f->name, f->name_len))
        return used_twice(NPYIO_E_INVALID_ARG, where, "field name", f->name,
                          f->name_len);
    if (f->title != NULL &&
        (name_set_has(&b->names, f->title, f->title_len) ||
         (f->title_len == f->name_len &&
          memcmp(f->title, f->name, f->name_len) == 0)))
        return used_twice(NPYIO_E_INVALID_ARG, where, "title", f->title,
                          f->title_len);
    return NPYIO_OK;
}

static uint64_t align_up(uint64_t v, size_t alignment)
{
    return (v + alignment - 1) / alignment * alignment;
}

/* Names and titles go into headers as they are given: they must be
 * strict UTF-8 (format 3.0 writes them so, and the header parser refuses
 * anything else), or a record would be saved that cannot be read back. */
static npyio_status check_utf8_text(const char *text, const char *what,
                                    const char *where)
{
    size_t len = strlen(text);
    size_t bad = npyio__utf8_invalid_at((const unsigned char *)text, len);

    if (bad == len)
        return NPYIO_OK;
    return npyio__fail(NPYIO_E_INVALID_ARG, "%s: byte %zu of the %s (0x%02x) "
                       "is not valid UTF-8", where, bad, what,
                       (unsigned char)text[bad]);
}

/* npyio_record_builder_add's arguments, before anything is made. */
static npyio_status check_add(const npyio_record_builder *builder,
                              const char *name, const char *title,
                              int64_t offset, const npyio_dtype *dtype,
                              const char *where)
{
    npyio_status st = check_builder(builder, where);

    if (st == NPYIO_OK)
        st = npyio__check_dtype(dtype, where);
    if (st != NPYIO_OK)
        return st;
    if (name == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: name is NULL", where);
    st = check_utf8_text(name, "name", where);
    if (st == NPYIO_OK && title != NULL)
        st = check_utf8_text(title, "title", where);
    if (st != NPYIO_OK)
        return st;
    if (offset < -1)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: offset %lld is negative "
                           "(-1 places the field after the previous one)",
                           where, (long long)offset);
    return NPYIO_OK;
}

/* The field f, ending at byte `end`, is in: its name and title join the
 * builder's set (room was reserved), and the record's end and alignment
 * grow to hold it. */
static void note_field(npyio_record_builder *b, const npyio__pending_field *f,
                       uint64_t end)
{
    name_set_add(&b->names, f->name, f->name_len);
    b->names_count++;
    if (f->title != NULL) {
        name_set_add(&b->names, f->title, f->title_len);
        b->names_count++;
    }
    b->end = end;
    if (end > b->max_end)
        b->max_end = end;
    if ((b->flags & NPYIO_RECORD_ALIGNED) != 0 &&
        f->dtype->alignment > b->alignment)
        b->alignment = f->dtype->alignment;
}

npyio_status npyio_record_builder_add(npyio_record_builder *builder,
                                      const char *name, const char *title,
                                      int64_t offset, const npyio_dtype *dtype,
                                      int ndim, const int64_t *shape)
{
    static const char where[] = "npyio_record_builder_add";
    npyio__pending_field f;
    npyio_status st;
    bool aligned;
    uint64_t at, end;

    st = check_add(builder, name, title, offset, dtype, where);
    if (st != NPYIO_OK)
        return st;
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
    /* Duplicates refused, and room made, before the field goes in: a
     * failed add leaves the builder as it was. */
    if (st == NPYIO_OK)
        st = reserve_names(builder, 2, where);
    if (st == NPYIO_OK)
        st = check_new_names(builder, &f, where);
    if (st == NPYIO_OK)
        st = npyio__pending_push(&builder->fields, &f); /* or unrefs */
    else
        npyio_dtype_unref(f.dtype);
    if (st != NPYIO_OK) {
        npyio__free((void *)f.name);
        npyio__free((void *)f.title);
        return st;
    }
    note_field(builder, &f, end);
    return NPYIO_OK;
}

npyio_status npyio_record_builder_finish(const npyio_record_builder *builder,
                                         size_t itemsize, npyio_dtype **out)
{
    static const char where[] = "npyio_record_builder_finish";
    const npyio_record_builder *b = builder;
    uint64_t size;
    npyio__pending copy;
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
    /* npyio__record_pack takes over references: give it its own. */
    copy = b->fields;
    copy.fields = NULL;
    copy.count = copy.capacity = copy.text_bytes = 0;
    for (i = 0; i < b->fields.count && st == NPYIO_OK; i++) {
        npyio__pending_field f = b->fields.fields[i];

        f.dtype = npyio_dtype_ref(f.dtype);
        st = npyio__pending_push(&copy, &f);
    }
    if (st == NPYIO_OK)
        st = npyio__record_pack(&copy, (size_t)size, b->alignment, where,
                                out);
    npyio__pending_release(&copy);
    return st;
}

/* ---- byte order: records and subarrays are rebuilt ---------------------------- */

npyio_status npyio__compound_with_order(const npyio_dtype *dtype, char order,
                                        const npyio__mem *mem,
                                        const char *where, npyio_dtype **out)
{
    npyio_dtype *base = NULL;
    npyio__pending p;
    size_t i;
    npyio_status st = NPYIO_OK;

    *out = NULL;
    if (dtype->kind == NPYIO_KIND_SUBARRAY) {
        st = npyio__dtype_with_order(dtype->base, order, mem, where, &base);
        if (st == NPYIO_OK)
            st = npyio__make_subarray(base, dtype->ndim, dtype->shape, where,
                                      mem, out);
        npyio_dtype_unref(base);
        return st;
    }
    npyio__pending_init(&p, mem);
    for (i = 0; i < dtype->field_count && st == NPYIO_OK; i++) {
        const npyio__field *f = &dtype->fields[i];
        npyio__pending_field g = {f->name, f->name_len, f->title,
                                  f->title_len, f->offset, NULL};

        st = npyio__dtype_with_order(f->dtype, order, mem, where, &g.dtype);
        if (st == NPYIO_OK)
            st = npyio__pending_push(&p, &g);
    }
    if (st == NPYIO_OK)
        st = npyio__record_pack(&p, dtype->itemsize, dtype->alignment, where,
                                out);
    npyio__pending_release(&p);
    return st;
}

npyio_status npyio__dtype_with_order(const npyio_dtype *dtype, char order,
                                     const npyio__mem *mem, const char *where,
                                     npyio_dtype **out)
{
    *out = NULL;
    if (dtype->kind == NPYIO_KIND_RECORD || dtype->kind == NPYIO_KIND_SUBARRAY)
        return npyio__compound_with_order(dtype, order, mem, where, out);
    if (dtype->byteorder == '|' || dtype->byteorder == order) {
        *out = npyio_dtype_ref(dtype);
        return NPYIO_OK;
    }
    if (dtype->unit != NPYIO__DT_NONE)
        return npyio__dtype_make_datetime(mem, dtype->kind, dtype->unit,
                                          dtype->multiplier, order, out);
    return npyio__dtype_make_scalar(mem, dtype->kind, dtype->itemsize, order,
                                    out);
}

static npyio_status new_byteorder_body(const npyio_dtype *dtype,
                                       char byteorder, npyio_dtype **out,
                                       const char *where)
{
    char order = byteorder == '=' ? npyio__host_order() : byteorder;
    npyio__mem mem;
    npyio_status st;

    if (out == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: out is NULL", where);
    *out = NULL;
    st = npyio__check_dtype(dtype, where);
    if (st != NPYIO_OK)
        return st;
    if (order != '<' && order != '>')
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: byte order must be '<', '>' or '=', not %#x",
                           where, (unsigned)(unsigned char)byteorder);
    /* Derived from the dtype, made like it (the default allocator for a
     * built-in, which names none). */
    npyio__dtype_mem(dtype, &mem);
    return npyio__dtype_with_order(dtype, order, &mem, where, out);
}

npyio_status npyio_dtype_new_byteorder(const npyio_dtype *dtype,
                                       char byteorder, npyio_dtype **out)
{
    return new_byteorder_body(dtype, byteorder, out,
                              "npyio_dtype_new_byteorder");
}

npyio_status npyio_dtype_new_native(const npyio_dtype *dtype,
                                    npyio_dtype **out)
{
    return new_byteorder_body(dtype, '=', out, "npyio_dtype_new_native");
}

npyio_status npyio__dtype_new_native(const npyio_dtype *dtype,
                                     const char *where, npyio_dtype **out)
{
    npyio__mem mem;

    npyio__dtype_mem(dtype, &mem);
    return npyio__dtype_with_order(dtype, npyio__host_order(), &mem, where,
                                   out);
}

