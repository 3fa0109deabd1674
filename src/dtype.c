/*
 * dtype.c - the dtype model: scalar kinds with their sizes, byte orders and
 * alignments, datetime units, the built-in dtypes and scalar construction;
 * reference counting, queries (fields and subarrays too), equality and
 * overlap checks; dtype.str and the descr literal of every dtype, records
 * and subarrays included. The lowest dtype layer: it calls neither
 * record.c (which builds compound dtypes on top of it) nor descr.c (which
 * parses descrs and type strings); it knows nothing of streams or files.
 *
 * The most common dtypes (bool, integers, floats, complex, object, in both
 * byte orders) are static and immortal, so parsing an ordinary header
 * allocates nothing for its dtype.
 */
#include "dtype.h"
#include "error.h"
#include "literal.h" /* Python's repr() of field names, for descrs */
#include "options.h"

#include <stdlib.h>
#include <string.h>

/* ---- the host ---------------------------------------------------------------- */

char npyio__host_order(void)
{
    const uint16_t probe = 1;
    unsigned char first;

    memcpy(&first, &probe, 1);
    return first == 1 ? '<' : '>';
}

/* C types NumPy maps platform-dependent names to. */
#define SIZE_INTP sizeof(void *)
#define SIZE_LONGDOUBLE sizeof(long double)

/* ---- datetime units --------------------------------------------------------------- */

static const char *const unit_names[NPYIO__DT_COUNT] = {
    "generic", "Y", "M", "W", "D", "h", "m", "s",
    "ms", "us", "ns", "ps", "fs", "as",
};

int npyio__dtype_unit_from_name(const char *s, size_t len)
{
    int i;

    for (i = 0; i < NPYIO__DT_COUNT; i++)
        if (strlen(unit_names[i]) == len && memcmp(unit_names[i], s, len) == 0)
            return i;
    return NPYIO__DT_NONE;
}

/* ---- sizes and alignment ------------------------------------------------------------- */

/* Alignment of a float of `size` bytes: the C type's where this host has
 * one; for another platform's long double, the largest power of two that
 * divides its size, as those platforms align it (f12: 4, f16: 16). */
static size_t float_alignment(size_t size)
{
    switch (size) {
    case 2: return _Alignof(uint16_t);
    case 4: return _Alignof(float);
    case 8: return _Alignof(double);
    default:
        if (size == SIZE_LONGDOUBLE)
            return _Alignof(long double);
        {
            size_t low_bit = size & (~size + 1);

            return low_bit > 16 ? 16 : low_bit;
        }
    }
}

static size_t int_alignment(size_t size)
{
    switch (size) {
    case 1: return _Alignof(int8_t);
    case 2: return _Alignof(int16_t);
    case 4: return _Alignof(int32_t);
    default: return _Alignof(int64_t);
    }
}

static size_t scalar_alignment(npyio_kind kind, size_t itemsize)
{
    switch (kind) {
    case NPYIO_KIND_INT:
    case NPYIO_KIND_UINT: return int_alignment(itemsize);
    case NPYIO_KIND_FLOAT: return float_alignment(itemsize);
    case NPYIO_KIND_COMPLEX: return float_alignment(itemsize / 2);
    case NPYIO_KIND_STR: return _Alignof(uint32_t);
    case NPYIO_KIND_OBJECT: return _Alignof(void *);
    case NPYIO_KIND_DATETIME:
    case NPYIO_KIND_TIMEDELTA: return _Alignof(int64_t);
    default: return 1; /* bool, bytes, void */
    }
}

bool npyio__dtype_valid_size(npyio_kind kind, size_t itemsize)
{
    switch (kind) {
    case NPYIO_KIND_BOOL: return itemsize == 1;
    case NPYIO_KIND_INT:
    case NPYIO_KIND_UINT:
        return itemsize == 1 || itemsize == 2 || itemsize == 4 ||
               itemsize == 8;
    case NPYIO_KIND_FLOAT:
        return itemsize == 2 || itemsize == 4 || itemsize == 8 ||
               itemsize == 12 || itemsize == 16;
    case NPYIO_KIND_COMPLEX:
        return itemsize == 8 || itemsize == 16 || itemsize == 24 ||
               itemsize == 32;
    case NPYIO_KIND_STR: return itemsize % 4 == 0;
    case NPYIO_KIND_OBJECT: return itemsize == SIZE_INTP;
    case NPYIO_KIND_DATETIME:
    case NPYIO_KIND_TIMEDELTA: return itemsize == 8;
    default: return true; /* bytes, void */
    }
}

/* Whether byte order means anything for a scalar of this kind and size. */
static bool order_applies(npyio_kind kind, size_t itemsize)
{
    switch (kind) {
    case NPYIO_KIND_BOOL:
    case NPYIO_KIND_BYTES:
    case NPYIO_KIND_VOID:
    case NPYIO_KIND_OBJECT:
    case NPYIO_KIND_RECORD:
    case NPYIO_KIND_SUBARRAY: return false;
    case NPYIO_KIND_INT:
    case NPYIO_KIND_UINT: return itemsize > 1;
    default: return true; /* floats, complex, str (even U0), datetimes */
    }
}

/* ---- built-in immortal dtypes ----------------------------------------------------------- */

#define BUILTIN(k, size, order, align)                                     \
    {                                                                       \
        .magic = NPYIO__MAGIC_DTYPE, .immortal = true, .kind = (k),         \
        .byteorder = (order), .itemsize = (size), .alignment = (align),     \
        .unit = NPYIO__DT_NONE, .multiplier = 1,                            \
        .has_objects = (k) == NPYIO_KIND_OBJECT                             \
    }
#define BUILTIN_BOTH(k, size, align)                                        \
    BUILTIN(k, size, '<', align), BUILTIN(k, size, '>', align)

static npyio_dtype builtins[] = {
    BUILTIN(NPYIO_KIND_BOOL, 1, '|', 1),
    BUILTIN(NPYIO_KIND_INT, 1, '|', 1),
    BUILTIN(NPYIO_KIND_UINT, 1, '|', 1),
    BUILTIN(NPYIO_KIND_OBJECT, sizeof(void *), '|', _Alignof(void *)),
    BUILTIN_BOTH(NPYIO_KIND_INT, 2, _Alignof(int16_t)),
    BUILTIN_BOTH(NPYIO_KIND_INT, 4, _Alignof(int32_t)),
    BUILTIN_BOTH(NPYIO_KIND_INT, 8, _Alignof(int64_t)),
    BUILTIN_BOTH(NPYIO_KIND_UINT, 2, _Alignof(int16_t)),
    BUILTIN_BOTH(NPYIO_KIND_UINT, 4, _Alignof(int32_t)),
    BUILTIN_BOTH(NPYIO_KIND_UINT, 8, _Alignof(int64_t)),
    BUILTIN_BOTH(NPYIO_KIND_FLOAT, 2, _Alignof(uint16_t)),
    BUILTIN_BOTH(NPYIO_KIND_FLOAT, 4, _Alignof(float)),
    BUILTIN_BOTH(NPYIO_KIND_FLOAT, 8, _Alignof(double)),
    BUILTIN_BOTH(NPYIO_KIND_COMPLEX, 8, _Alignof(float)),
    BUILTIN_BOTH(NPYIO_KIND_COMPLEX, 16, _Alignof(double)),
};

/*
 * Short strings and datetimes of unit multiplier 1 are common in record
 * fields; built in too, so a record of them is one allocation. Indexed,
 * not searched.
 */
#define SHORT_MAX 32
#define E8(M, a, b) M(a, b + 1), M(a, b + 2), M(a, b + 3), M(a, b + 4), \
                    M(a, b + 5), M(a, b + 6), M(a, b + 7), M(a, b + 8)
#define E32(M, a) E8(M, a, 0), E8(M, a, 8), E8(M, a, 16), E8(M, a, 24)
#define BYTES_ENTRY(order, n) BUILTIN(NPYIO_KIND_BYTES, n, order, 1)
#define STR_ENTRY(order, n) \
    BUILTIN(NPYIO_KIND_STR, 4 * (n), order, _Alignof(uint32_t))
#define DT_ENTRY(k, order, u)                                              \
    {                                                                       \
        .magic = NPYIO__MAGIC_DTYPE, .immortal = true, .kind = (k),         \
        .byteorder = (order), .itemsize = 8, .alignment = _Alignof(int64_t),\
        .unit = (u), .multiplier = 1                                         \
    }
#define DT_UNITS(k, order)                                                  \
    DT_ENTRY(k, order, 0), DT_ENTRY(k, order, 1), DT_ENTRY(k, order, 2),    \
        DT_ENTRY(k, order, 3), DT_ENTRY(k, order, 4), DT_ENTRY(k, order, 5),\
        DT_ENTRY(k, order, 6), DT_ENTRY(k, order, 7), DT_ENTRY(k, order, 8),\
        DT_ENTRY(k, order, 9), DT_ENTRY(k, order, 10),                      \
        DT_ENTRY(k, order, 11), DT_ENTRY(k, order, 12),                     \
        DT_ENTRY(k, order, 13)

static npyio_dtype builtin_bytes[SHORT_MAX] = {E32(BYTES_ENTRY, '|')};
static npyio_dtype builtin_str[2][SHORT_MAX] = {{E32(STR_ENTRY, '<')},
                                                {E32(STR_ENTRY, '>')}};
static npyio_dtype builtin_datetime[2][2][NPYIO__DT_COUNT] = {
    {{DT_UNITS(NPYIO_KIND_DATETIME, '<')},
     {DT_UNITS(NPYIO_KIND_DATETIME, '>')}},
    {{DT_UNITS(NPYIO_KIND_TIMEDELTA, '<')},
     {DT_UNITS(NPYIO_KIND_TIMEDELTA, '>')}},
};
_Static_assert(NPYIO__DT_COUNT == 14, "DT_UNITS lists every unit");

static npyio_dtype *find_builtin(npyio_kind kind, size_t itemsize,
                                 char byteorder)
{
    size_t i;

    if (kind == NPYIO_KIND_BYTES)
        return itemsize >= 1 && itemsize <= SHORT_MAX
                   ? &builtin_bytes[itemsize - 1]
                   : NULL;
    if (kind == NPYIO_KIND_STR)
        return itemsize >= 4 && itemsize <= 4 * SHORT_MAX
                   ? &builtin_str[byteorder == '>'][itemsize / 4 - 1]
                   : NULL;
    /* The others: numbers and objects of the common sizes. */
    if (itemsize > 16 || (kind != NPYIO_KIND_INT && kind != NPYIO_KIND_UINT &&
                          kind != NPYIO_KIND_FLOAT &&
                          kind != NPYIO_KIND_COMPLEX &&
                          kind != NPYIO_KIND_BOOL &&
                          kind != NPYIO_KIND_OBJECT))
        return NULL;
    for (i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
        if (builtins[i].kind == kind && builtins[i].itemsize == itemsize &&
            builtins[i].byteorder == byteorder)
            return &builtins[i];
    return NULL;
}

/* ---- construction ------------------------------------------------------------------------ */

static bool is_scalar_kind(npyio_kind kind)
{
    switch (kind) {
    case NPYIO_KIND_BOOL:
    case NPYIO_KIND_INT:
    case NPYIO_KIND_UINT:
    case NPYIO_KIND_FLOAT:
    case NPYIO_KIND_COMPLEX:
    case NPYIO_KIND_BYTES:
    case NPYIO_KIND_STR:
    case NPYIO_KIND_VOID:
    case NPYIO_KIND_OBJECT:
    case NPYIO_KIND_DATETIME:
    case NPYIO_KIND_TIMEDELTA: return true;
    default: return false;
    }
}

/* Resolve a requested byte order ('<', '>', '=', '|', '!', or 0 for none)
 * to what the dtype reports. */
static char resolve_order(npyio_kind kind, size_t itemsize, char requested)
{
    if (!order_applies(kind, itemsize))
        return '|';
    if (requested == '<' || requested == '>')
        return requested;
    if (requested == '!')
        return '>';
    return npyio__host_order();
}

npyio_status npyio__dtype_alloc(const npyio__mem *mem, size_t extra,
                                npyio_dtype **out)
{
    npyio_dtype *dt;
    size_t size;
    npyio_status st;

    *out = NULL;
    if (!npyio__add_size(sizeof *dt, extra, &size))
        return npyio__fail(NPYIO_E_OVERFLOW, "dtype: too large");
    st = npyio__alloc_zero(mem, size, "dtype", (void **)&dt);
    if (st != NPYIO_OK)
        return st;
    dt->magic = NPYIO__MAGIC_DTYPE;
    atomic_init(&dt->refs, 1);
    *out = dt;
    return NPYIO_OK;
}

void npyio__dtype_mem(const npyio_dtype *dtype, npyio__mem *mem)
{
    /* Built-ins are static, not blocks: they name no allocator. (What is
     * not a dtype is left for the caller's check to report.) */
    npyio__mem_like(dtype == NULL || dtype->magic != NPYIO__MAGIC_DTYPE ||
                            dtype->immortal
                        ? NULL
                        : dtype,
                    mem);
}

static npyio_status new_dtype(const npyio__mem *mem, npyio_kind kind,
                              size_t itemsize, char order, npyio_dtype **out)
{
    npyio_dtype *dt;
    npyio_status st;

    st = npyio__dtype_alloc(mem, 0, &dt);
    if (st != NPYIO_OK)
        return st;
    dt->kind = kind;
    dt->byteorder = order;
    dt->itemsize = itemsize;
    dt->alignment = scalar_alignment(kind, itemsize);
    dt->unit = NPYIO__DT_NONE;
    dt->multiplier = 1;
    dt->has_objects = kind == NPYIO_KIND_OBJECT;
    *out = dt;
    return NPYIO_OK;
}

npyio_status npyio__dtype_make_scalar(const npyio__mem *mem, npyio_kind kind,
                                      size_t itemsize, char requested_order,
                                      npyio_dtype **out)
{
    char order = resolve_order(kind, itemsize, requested_order);
    npyio_dtype *builtin = find_builtin(kind, itemsize, order);

    if (builtin != NULL) {
        *out = builtin;
        return NPYIO_OK;
    }
    return new_dtype(mem, kind, itemsize, order, out);
}

npyio_status npyio__dtype_make_datetime(const npyio__mem *mem,
                                        npyio_kind kind, int unit,
                                        int32_t mult, char requested_order,
                                        npyio_dtype **out)
{
    char order = resolve_order(kind, 8, requested_order);
    npyio_status st;

    if (mult == 1) {
        *out = &builtin_datetime[kind == NPYIO_KIND_TIMEDELTA][order == '>']
                                [unit];
        return NPYIO_OK;
    }
    st = new_dtype(mem, kind, 8, order, out);

    if (st == NPYIO_OK) {
        (*out)->unit = unit;
        (*out)->multiplier = mult;
    }
    return st;
}

static bool valid_order_char(char c)
{
    return c == '<' || c == '>' || c == '=' || c == '|';
}

npyio_status npyio_dtype_new_scalar(npyio_kind kind, size_t itemsize,
                                    char byteorder, npyio_dtype **out)
{
    static const char where[] = "npyio_dtype_new_scalar";
    npyio__mem mem;

    if (out == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: out is NULL", where);
    *out = NULL;
    if (!is_scalar_kind(kind) || kind == NPYIO_KIND_DATETIME ||
        kind == NPYIO_KIND_TIMEDELTA)
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: kind %d is not a scalar kind (datetimes: use "
                           "npyio_dtype_new_datetime)", where, (int)kind);
    if (kind == NPYIO_KIND_OBJECT && itemsize == 0)
        itemsize = SIZE_INTP;
    if (!npyio__dtype_valid_size(kind, itemsize) ||
        itemsize > NPYIO__MAX_ITEMSIZE)
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: kind '%c' has no itemsize %zu", where,
                           (char)kind, itemsize);
    if (!valid_order_char(byteorder))
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: byte order must be '<', '>', '=' or '|'",
                           where);
    /* No options and no handle to copy an allocator from: the default
     * one (for the sizes that are not built in). */
    npyio__mem_init(&mem, NULL);
    return npyio__dtype_make_scalar(&mem, kind, itemsize, byteorder, out);
}

npyio_status npyio_dtype_new_datetime(npyio_kind kind, const char *unit,
                                      int64_t multiplier, char byteorder,
                                      npyio_dtype **out)
{
    static const char where[] = "npyio_dtype_new_datetime";
    npyio__mem mem;
    int u;

    if (out == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: out is NULL", where);
    *out = NULL;
    if (kind != NPYIO_KIND_DATETIME && kind != NPYIO_KIND_TIMEDELTA)
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: kind must be NPYIO_KIND_DATETIME or "
                           "NPYIO_KIND_TIMEDELTA", where);
    u = unit == NULL || unit[0] == '\0'
            ? NPYIO__DT_GENERIC
            : npyio__dtype_unit_from_name(unit, strlen(unit));
    if (u == NPYIO__DT_NONE)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: unknown unit \"%s\"",
                           where, unit);
    if (multiplier < 1 || multiplier > INT32_MAX ||
        (u == NPYIO__DT_GENERIC && multiplier != 1))
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: multiplier %lld is out of range (1 .. "
                           "2147483647, and 1 for the generic unit)",
                           where, (long long)multiplier);
    if (!valid_order_char(byteorder))
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: byte order must be '<', '>', '=' or '|'",
                           where);
    /* No options and no handle: the default allocator (for multipliers
     * other than 1, which are not built in). */
    npyio__mem_init(&mem, NULL);
    return npyio__dtype_make_datetime(&mem, kind, u, (int32_t)multiplier,
                                      byteorder, out);
}

/* ---- references ---------------------------------------------------------------------------------- */

npyio_status npyio__check_dtype(const npyio_dtype *dtype, const char *where)
{
    if (dtype == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: dtype is NULL", where);
    if (dtype->magic != NPYIO__MAGIC_DTYPE)
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: the pointer given as a dtype is not a "
                           "live npyio_dtype", where);
    return NPYIO_OK;
}

static bool is_dtype(const npyio_dtype *dtype)
{
    return dtype != NULL && dtype->magic == NPYIO__MAGIC_DTYPE;
}

npyio_dtype *npyio_dtype_ref(const npyio_dtype *dtype)
{
    npyio_dtype *dt = (npyio_dtype *)dtype; /* references are not state */

    if (!is_dtype(dt))
        return NULL;
    if (!dt->immortal)
        atomic_fetch_add_explicit(&dt->refs, 1, memory_order_relaxed);
    return dt;
}

void npyio_dtype_unref(npyio_dtype *dtype)
{
    if (!is_dtype(dtype) || dtype->immortal)
        return;
    /* Release ordering so that the last owner sees all prior writes. */
    if (atomic_fetch_sub_explicit(&dtype->refs, 1, memory_order_acq_rel) != 1)
        return;
    npyio__compound_release(dtype);
    dtype->magic = NPYIO__MAGIC_DEAD;
    npyio__free(dtype);
}

/* ---- queries ---------------------------------------------------------------------------------------- */

npyio_kind npyio_dtype_kind(const npyio_dtype *dtype)
{
    return is_dtype(dtype) ? dtype->kind : 0;
}

size_t npyio_dtype_itemsize(const npyio_dtype *dtype)
{
    return is_dtype(dtype) ? dtype->itemsize : 0;
}

size_t npyio_dtype_alignment(const npyio_dtype *dtype)
{
    return is_dtype(dtype) ? dtype->alignment : 0;
}

char npyio_dtype_byteorder(const npyio_dtype *dtype)
{
    return is_dtype(dtype) ? dtype->byteorder : 0;
}

/* Records and subarrays are native when everything in them is (their own
 * byte order is '|'); depth is bounded by NPYIO_LIMIT_DEPTH. */
int npyio_dtype_is_native(const npyio_dtype *dtype)
{
    size_t i;

    if (!is_dtype(dtype))
        return 0;
    if (dtype->kind == NPYIO_KIND_SUBARRAY)
        return npyio_dtype_is_native(dtype->base);
    if (dtype->kind == NPYIO_KIND_RECORD) {
        for (i = 0; i < dtype->field_count; i++)
            if (!npyio_dtype_is_native(dtype->fields[i].dtype))
                return 0;
        return 1;
    }
    return dtype->byteorder == '|' || dtype->byteorder == npyio__host_order();
}

const char *npyio_dtype_datetime_unit(const npyio_dtype *dtype)
{
    if (!is_dtype(dtype) || dtype->unit == NPYIO__DT_NONE)
        return NULL;
    return unit_names[dtype->unit];
}

int64_t npyio_dtype_datetime_multiplier(const npyio_dtype *dtype)
{
    if (!is_dtype(dtype) || dtype->unit == NPYIO__DT_NONE)
        return 0;
    return dtype->multiplier;
}

int npyio_dtype_is_equal(const npyio_dtype *a, const npyio_dtype *b)
{
    if (a == b)
        return 1;
    if (!is_dtype(a) || !is_dtype(b))
        return 0;
    if (a->kind != b->kind)
        return 0;
    if (a->kind == NPYIO_KIND_RECORD || a->kind == NPYIO_KIND_SUBARRAY)
        return npyio__compound_equal(a, b);
    return a->itemsize == b->itemsize && a->byteorder == b->byteorder &&
           a->unit == b->unit && a->multiplier == b->multiplier;
}

/* ---- queries of records and subarrays ----------------------------------------------- */

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

npyio_status npyio_dtype_find_field(const npyio_dtype *dtype, const char *name,
                                    size_t *index)
{
    static const char where[] = "npyio_dtype_find_field";
    size_t i, n;
    npyio_status st;

    if (index != NULL)
        *index = 0;
    if (index == NULL || name == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: %s is NULL", where,
                           index == NULL ? "index" : "name");
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

int npyio_dtype_has_objects(const npyio_dtype *dtype)
{
    return dtype != NULL && dtype->magic == NPYIO__MAGIC_DTYPE &&
           dtype->has_objects;
}

/* ---- equality and release of records and subarrays ---------------------------------- */

bool npyio__compound_equal(const npyio_dtype *a, const npyio_dtype *b)
{
    size_t i;
    int d;

    if (a->kind == NPYIO_KIND_SUBARRAY) {
        if (a->ndim != b->ndim || !npyio_dtype_is_equal(a->base, b->base))
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
            !npyio_dtype_is_equal(f->dtype, g->dtype))
            return false;
    }
    return true;
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

/* ---- text ---------------------------------------------------------------------------------------------- */

/* dtype.str is: byte order, kind character, a number (bytes, or
 * characters for U), and for datetimes an optional [<mult>unit]. */
size_t npyio__dtype_str(const npyio_dtype *dtype, char *out, size_t cap)
{
    char text[64];
    size_t n = 0;
    bool record = dtype->kind == NPYIO_KIND_RECORD ||
                  dtype->kind == NPYIO_KIND_SUBARRAY;

    text[n++] = dtype->byteorder;
    text[n++] = record ? 'V' : (char)dtype->kind;
    if (dtype->kind == NPYIO_KIND_STR)
        n += npyio__format_u64(dtype->itemsize / 4, text + n);
    else if (dtype->kind != NPYIO_KIND_OBJECT)
        n += npyio__format_u64(dtype->itemsize, text + n);
    if (dtype->unit > NPYIO__DT_GENERIC) {
        size_t unit_len = strlen(unit_names[dtype->unit]);

        text[n++] = '[';
        if (dtype->multiplier != 1)
            n += npyio__format_u64((uint64_t)dtype->multiplier, text + n);
        memcpy(text + n, unit_names[dtype->unit], unit_len);
        n += unit_len;
        text[n++] = ']';
    }
    if (cap > 0)
        memcpy(out, text, n < cap ? n : cap);
    return n;
}

npyio_status npyio__dtype_descr(const npyio_dtype *dtype, char *out,
                                size_t cap, size_t *len)
{
    char text[64];
    size_t n;

    if (dtype->kind == NPYIO_KIND_RECORD || dtype->kind == NPYIO_KIND_SUBARRAY)
        return npyio__compound_descr(dtype, out, cap, len);
    n = npyio__dtype_str(dtype, text, sizeof text);
    *len = n + 2;
    if (cap >= *len) {
        out[0] = '\'';
        memcpy(out + 1, text, n);
        out[n + 1] = '\'';
    }
    return NPYIO_OK;
}

/* The text protocol of npyio_dtype_str and npyio_dtype_descr: check the
 * arguments, have `write` put the text into buf (as far as cap allows; it
 * reports the full length), then terminate it, or report the length needed
 * with NPYIO_E_BUFFER_TOO_SMALL. */
typedef npyio_status (*text_writer)(const npyio_dtype *dtype, char *out,
                                    size_t cap, size_t *len);

static npyio_status write_text(const npyio_dtype *dtype, text_writer write,
                               char *buf, size_t cap, size_t *len,
                               const char *where)
{
    size_t n = 0;
    npyio_status st = npyio__check_dtype(dtype, where);

    if (len != NULL)
        *len = 0;
    if (st == NPYIO_OK && buf == NULL && cap > 0)
        st = npyio__fail(NPYIO_E_INVALID_ARG, "%s: buf is NULL", where);
    if (st == NPYIO_OK)
        st = write(dtype, buf, cap, &n);
    if (st != NPYIO_OK)
        return st;
    if (len != NULL)
        *len = n;
    if (cap < n + 1) {
        if (cap > 0)
            buf[0] = '\0';
        return npyio__fail(NPYIO_E_BUFFER_TOO_SMALL,
                           "%s: the text needs %zu bytes and a NUL, the "
                           "buffer has %zu", where, n, cap);
    }
    buf[n] = '\0';
    return NPYIO_OK;
}

static npyio_status str_writer(const npyio_dtype *dtype, char *out,
                               size_t cap, size_t *len)
{
    *len = npyio__dtype_str(dtype, out, cap);
    return NPYIO_OK;
}

npyio_status npyio__dtype_text(const npyio_dtype *dtype, bool descr,
                               char *buf, size_t cap, size_t *len,
                               const char *where)
{
    /* Written straight into the caller's buffer: records can be long. */
    return write_text(dtype, descr ? npyio__dtype_descr : str_writer, buf,
                      cap, len, where);
}

npyio_status npyio_dtype_str(const npyio_dtype *dtype, char *buf, size_t cap,
                             size_t *len)
{
    return npyio__dtype_text(dtype, false, buf, cap, len, "npyio_dtype_str");
}

npyio_status npyio_dtype_descr(const npyio_dtype *dtype, char *buf,
                               size_t cap, size_t *len)
{
    return npyio__dtype_text(dtype, true, buf, cap, len, "npyio_dtype_descr");
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

