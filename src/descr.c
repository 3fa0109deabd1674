/*
 * descr.c - dtypes from their text: NumPy's type strings (np.dtype(str),
 * comma-separated lists of types included) and the descr literals of .npy
 * headers (numpy.lib.format's descr_to_dtype: type strings, lists of
 * fields, (descr, shape) pairs), handed over as nodes of a literal parsed
 * by literal.c; and npyio_dtype_parse, which takes either as text.
 * Builds through the dtype model (dtype.c) and the record module
 * (record.c), neither of which calls back; knows nothing of streams or of
 * the rest of the header dict.
 */
#include "descr.h"
#include "error.h"
#include "options.h"
#include "record.h"

#include <stdio.h>
#include <string.h>

/* C types NumPy maps platform-dependent names to. */
#define SIZE_LONG sizeof(long)
#define SIZE_INTP sizeof(void *)
#define SIZE_LONGDOUBLE sizeof(long double)

#define MAX_SUBARRAY_NDIM NPYIO__MAX_SUBARRAY_NDIM

/* ---- type strings ----------------------------------------------------------------------------- */

/* Names NumPy's np.dtype() takes, with what they mean on this host. Sizes
 * of 0 for flexible kinds mean "no size given" (S0, U0, V0). */
typedef struct type_name {
    const char *name;
    npyio_kind kind;
    size_t itemsize;
} type_name;

static const type_name type_names[] = {
    /* single-character codes */
    {"?", NPYIO_KIND_BOOL, 1}, {"b", NPYIO_KIND_INT, 1},
    {"B", NPYIO_KIND_UINT, 1}, {"h", NPYIO_KIND_INT, sizeof(short)},
    {"H", NPYIO_KIND_UINT, sizeof(short)}, {"i", NPYIO_KIND_INT, sizeof(int)},
    {"I", NPYIO_KIND_UINT, sizeof(int)}, {"l", NPYIO_KIND_INT, SIZE_LONG},
    {"L", NPYIO_KIND_UINT, SIZE_LONG}, {"q", NPYIO_KIND_INT, 8},
    {"Q", NPYIO_KIND_UINT, 8}, {"p", NPYIO_KIND_INT, SIZE_INTP},
    {"P", NPYIO_KIND_UINT, SIZE_INTP}, {"e", NPYIO_KIND_FLOAT, 2},
    {"f", NPYIO_KIND_FLOAT, 4}, {"d", NPYIO_KIND_FLOAT, 8},
    {"g", NPYIO_KIND_FLOAT, SIZE_LONGDOUBLE}, {"F", NPYIO_KIND_COMPLEX, 8},
    {"D", NPYIO_KIND_COMPLEX, 16},
    {"G", NPYIO_KIND_COMPLEX, 2 * SIZE_LONGDOUBLE},
    {"S", NPYIO_KIND_BYTES, 0}, {"a", NPYIO_KIND_BYTES, 0},
    {"U", NPYIO_KIND_STR, 0}, {"V", NPYIO_KIND_VOID, 0},
    {"O", NPYIO_KIND_OBJECT, SIZE_INTP}, {"M", NPYIO_KIND_DATETIME, 8},
    {"m", NPYIO_KIND_TIMEDELTA, 8}, {"c", NPYIO_KIND_BYTES, 1},
    /* names */
    {"bool", NPYIO_KIND_BOOL, 1}, {"bool_", NPYIO_KIND_BOOL, 1},
    {"bool8", NPYIO_KIND_BOOL, 1},
    {"byte", NPYIO_KIND_INT, 1}, {"ubyte", NPYIO_KIND_UINT, 1},
    {"short", NPYIO_KIND_INT, sizeof(short)},
    {"ushort", NPYIO_KIND_UINT, sizeof(short)},
    {"intc", NPYIO_KIND_INT, sizeof(int)},
    {"uintc", NPYIO_KIND_UINT, sizeof(int)},
    {"int", NPYIO_KIND_INT, SIZE_LONG}, {"int_", NPYIO_KIND_INT, SIZE_LONG},
    {"long", NPYIO_KIND_INT, SIZE_LONG},
    {"uint", NPYIO_KIND_UINT, SIZE_LONG},
    {"ulong", NPYIO_KIND_UINT, SIZE_LONG},
    {"longlong", NPYIO_KIND_INT, 8}, {"ulonglong", NPYIO_KIND_UINT, 8},
    {"intp", NPYIO_KIND_INT, SIZE_INTP}, {"uintp", NPYIO_KIND_UINT, SIZE_INTP},
    {"int0", NPYIO_KIND_INT, SIZE_INTP}, {"uint0", NPYIO_KIND_UINT, SIZE_INTP},
    {"int8", NPYIO_KIND_INT, 1}, {"int16", NPYIO_KIND_INT, 2},
    {"int32", NPYIO_KIND_INT, 4}, {"int64", NPYIO_KIND_INT, 8},
    {"uint8", NPYIO_KIND_UINT, 1}, {"uint16", NPYIO_KIND_UINT, 2},
    {"uint32", NPYIO_KIND_UINT, 4}, {"uint64", NPYIO_KIND_UINT, 8},
    {"half", NPYIO_KIND_FLOAT, 2}, {"single", NPYIO_KIND_FLOAT, 4},
    {"double", NPYIO_KIND_FLOAT, 8}, {"float", NPYIO_KIND_FLOAT, 8},
    {"float_", NPYIO_KIND_FLOAT, 8},
    {"longdouble", NPYIO_KIND_FLOAT, SIZE_LONGDOUBLE},
    {"longfloat", NPYIO_KIND_FLOAT, SIZE_LONGDOUBLE},
    {"float16", NPYIO_KIND_FLOAT, 2}, {"float32", NPYIO_KIND_FLOAT, 4},
    {"float64", NPYIO_KIND_FLOAT, 8},
    {"csingle", NPYIO_KIND_COMPLEX, 8},
    {"singlecomplex", NPYIO_KIND_COMPLEX, 8},
    {"cdouble", NPYIO_KIND_COMPLEX, 16}, {"cfloat", NPYIO_KIND_COMPLEX, 16},
    {"complex", NPYIO_KIND_COMPLEX, 16}, {"complex_", NPYIO_KIND_COMPLEX, 16},
    {"clongdouble", NPYIO_KIND_COMPLEX, 2 * SIZE_LONGDOUBLE},
    {"clongfloat", NPYIO_KIND_COMPLEX, 2 * SIZE_LONGDOUBLE},
    {"longcomplex", NPYIO_KIND_COMPLEX, 2 * SIZE_LONGDOUBLE},
    {"complex64", NPYIO_KIND_COMPLEX, 8},
    {"complex128", NPYIO_KIND_COMPLEX, 16},
    {"object", NPYIO_KIND_OBJECT, SIZE_INTP},
    {"object_", NPYIO_KIND_OBJECT, SIZE_INTP},
    {"object0", NPYIO_KIND_OBJECT, SIZE_INTP},
    {"str", NPYIO_KIND_STR, 0}, {"str_", NPYIO_KIND_STR, 0},
    {"str0", NPYIO_KIND_STR, 0}, {"unicode", NPYIO_KIND_STR, 0},
    {"unicode_", NPYIO_KIND_STR, 0},
    {"bytes", NPYIO_KIND_BYTES, 0}, {"bytes_", NPYIO_KIND_BYTES, 0},
    {"bytes0", NPYIO_KIND_BYTES, 0}, {"string_", NPYIO_KIND_BYTES, 0},
    {"void", NPYIO_KIND_VOID, 0}, {"void0", NPYIO_KIND_VOID, 0},
    {"datetime64", NPYIO_KIND_DATETIME, 8},
    {"timedelta64", NPYIO_KIND_TIMEDELTA, 8},
};

/* The sized long-double names exist under the host's size only, as in
 * NumPy (float128 on x86-64, float96 on 32-bit x86). */
static bool long_double_name(const char *s, size_t len, type_name *found)
{
    char name[16];

    snprintf(name, sizeof name, "float%zu", 8 * SIZE_LONGDOUBLE);
    if (SIZE_LONGDOUBLE > 8 && strlen(name) == len &&
        memcmp(name, s, len) == 0) {
        *found = (type_name){"", NPYIO_KIND_FLOAT, SIZE_LONGDOUBLE};
        return true;
    }
    snprintf(name, sizeof name, "complex%zu", 16 * SIZE_LONGDOUBLE);
    if (SIZE_LONGDOUBLE > 8 && strlen(name) == len &&
        memcmp(name, s, len) == 0) {
        *found = (type_name){"", NPYIO_KIND_COMPLEX, 2 * SIZE_LONGDOUBLE};
        return true;
    }
    return false;
}

static bool lookup_name(const char *s, size_t len, type_name *found)
{
    size_t i;

    for (i = 0; i < sizeof type_names / sizeof type_names[0]; i++)
        if (type_names[i].name[0] == s[0] &&
            strlen(type_names[i].name) == len &&
            memcmp(type_names[i].name, s, len) == 0) {
            *found = type_names[i];
            return true;
        }
    return long_double_name(s, len, found);
}

/* Parse decimal digits s[0..len) (all digits, len > 0) into *value,
 * refusing values above `max`. */
static bool parse_count(const char *s, size_t len, uint64_t max,
                        uint64_t *value)
{
    uint64_t v = 0;
    size_t i;

    if (len == 0)
        return false;
    for (i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        if (v > (max - (uint64_t)(s[i] - '0')) / 10)
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *value = v;
    return true;
}

typedef struct type_spec {
    char order;  /* as written, 0 if none */
    npyio_kind kind;
    size_t itemsize;
    int unit;    /* NPYIO__DT_NONE unless a datetime */
    int32_t mult;
} type_spec;

/* A message about a type string, with where it was found. */
static npyio_status bad_type(const char *s, size_t len, size_t offset,
                             npyio_status status, const char *why)
{
    char shown[80];

    npyio__show(s, len, shown, sizeof shown);
    if (offset == SIZE_MAX)
        return npyio__fail(status, "type string \"%s\": %s", shown, why);
    return npyio__fail(status, "header byte %zu: descr '%s' is not a valid "
                               "dtype: %s", offset, shown, why);
}

/* Kind character followed by a size: "f8", "S10", "U3", "b1", "c16". */
static bool sized_code(const char *s, size_t len, type_spec *spec,
                       bool *too_big)
{
    static const char codes[] = "biufcSaUVOMm";
    uint64_t n;

    *too_big = false;
    if (len < 2 || memchr(codes, s[0], sizeof codes - 1) == NULL)
        return false;
    if (!parse_count(s + 1, len - 1, UINT64_MAX / 8, &n)) {
        size_t i;

        for (i = 1; i < len && s[i] >= '0' && s[i] <= '9'; i++)
            ;
        *too_big = i == len; /* all digits, too many of them */
        return false;
    }
    switch (s[0]) {
    case 'b':
        spec->kind = NPYIO_KIND_BOOL;
        break;
    case 'i': spec->kind = NPYIO_KIND_INT; break;
    case 'u': spec->kind = NPYIO_KIND_UINT; break;
    case 'f': spec->kind = NPYIO_KIND_FLOAT; break;
    case 'c': spec->kind = NPYIO_KIND_COMPLEX; break;
    case 'S':
    case 'a': spec->kind = NPYIO_KIND_BYTES; break;
    case 'U':
        spec->kind = NPYIO_KIND_STR;
        n *= 4; /* U<n> counts characters of 4 bytes */
        break;
    case 'V': spec->kind = NPYIO_KIND_VOID; break;
    case 'O':
        spec->kind = NPYIO_KIND_OBJECT;
        if (n == 4 || n == 8)
            n = SIZE_INTP; /* NumPy takes both as "object" */
        break;
    case 'M': spec->kind = NPYIO_KIND_DATETIME; break;
    default: spec->kind = NPYIO_KIND_TIMEDELTA; break;
    }
    if (n > NPYIO__MAX_ITEMSIZE) {
        *too_big = true;
        return false;
    }
    spec->itemsize = (size_t)n;
    return npyio__dtype_valid_size(spec->kind, spec->itemsize);
}

/* "[unit]" or "[25unit]" after a datetime type. */
static bool parse_unit(const char *s, size_t len, type_spec *spec)
{
    size_t digits = 0;
    uint64_t mult = 1;

    if (len < 3 || s[0] != '[' || s[len - 1] != ']')
        return false;
    s++;
    len -= 2;
    while (digits < len && s[digits] >= '0' && s[digits] <= '9')
        digits++;
    if (digits > 0 && !parse_count(s, digits, INT32_MAX, &mult))
        return false;
    if (mult == 0)
        return false;
    spec->unit = npyio__dtype_unit_from_name(s + digits, len - digits);
    if (spec->unit == NPYIO__DT_NONE ||
        (spec->unit == NPYIO__DT_GENERIC && digits > 0))
        return false;
    spec->mult = (int32_t)mult;
    return true;
}

/* The unit of type string s[0..len), whose kind spec already has: the
 * "[...]" from `bracket` on, or none (NULL: a datetime's unit is then
 * generic). */
static npyio_status type_unit(const char *s, size_t len, size_t offset,
                              const char *bracket, type_spec *spec)
{
    if (bracket == NULL) {
        if (spec->kind == NPYIO_KIND_DATETIME ||
            spec->kind == NPYIO_KIND_TIMEDELTA)
            spec->unit = NPYIO__DT_GENERIC;
        return NPYIO_OK;
    }
    if (spec->kind != NPYIO_KIND_DATETIME &&
        spec->kind != NPYIO_KIND_TIMEDELTA)
        return bad_type(s, len, offset, NPYIO_E_FORMAT,
                        "only datetime64 and timedelta64 take a [unit]");
    if (!parse_unit(bracket, len - (size_t)(bracket - s), spec))
        return bad_type(s, len, offset, NPYIO_E_FORMAT,
                        "the datetime unit must be [unit] or [<n>unit] with "
                        "unit one of Y M W D h m s ms us ns ps fs as "
                        "generic and 1 <= n <= 2147483647");
    return NPYIO_OK;
}

static npyio_status parse_type(const char *s, size_t len, size_t offset,
                               type_spec *spec)
{
    const char *body = s;
    const char *bracket;
    size_t body_len = len;
    type_name named;
    bool too_big = false;

    spec->order = 0;
    spec->unit = NPYIO__DT_NONE;
    spec->mult = 1;
    if (len > 0 && (s[0] == '<' || s[0] == '>' || s[0] == '=' ||
                    s[0] == '|' || s[0] == '!')) {
        spec->order = s[0];
        body++;
        body_len--;
    }
    bracket = memchr(body, '[', body_len);
    if (bracket != NULL)
        body_len = (size_t)(bracket - body);
    if (body_len == 0)
        return bad_type(s, len, offset, NPYIO_E_FORMAT, "no type is named");
    if (sized_code(body, body_len, spec, &too_big)) {
        /* the common form: kind character and size ("f8", "S10") */
    } else if (too_big) {
        return bad_type(s, len, offset, NPYIO_E_OVERFLOW,
                        "the size is above NumPy's limit of 2147483647 "
                        "bytes");
    } else if (lookup_name(body, body_len, &named)) {
        bool is_datetime_word = named.kind == NPYIO_KIND_DATETIME ||
                                named.kind == NPYIO_KIND_TIMEDELTA;

        /* NumPy takes a byte order before a one-letter code, but before a
         * word ("float64") only for datetime64 and timedelta64; and a unit
         * after M8, m8 and those two words, not after a bare M or m. */
        if (spec->order != 0 && body_len > 1 && !is_datetime_word)
            return bad_type(s, len, offset, NPYIO_E_FORMAT,
                            "a byte order cannot precede a type name");
        if (bracket != NULL && body_len == 1)
            return bad_type(s, len, offset, NPYIO_E_FORMAT,
                            "a datetime unit needs M8 or m8, not M or m");
        spec->kind = named.kind;
        spec->itemsize = named.itemsize;
    } else {
        return bad_type(s, len, offset, NPYIO_E_FORMAT,
                        "unknown type or size");
    }
    return type_unit(s, len, offset, bracket, spec);
}

/* One type: "<f8", "S10", "datetime64[ns]" (no commas, no shape). */
static npyio_status single_from_str(const char *s, size_t len, size_t offset,
                                    const npyio__mem *mem, npyio_dtype **out)
{
    type_spec spec = {0, 0, 0, NPYIO__DT_NONE, 1};
    npyio_status st;

    *out = NULL;
    st = parse_type(s, len, offset, &spec);
    if (st != NPYIO_OK)
        return st;
    if (spec.unit != NPYIO__DT_NONE)
        return npyio__dtype_make_datetime(mem, spec.kind, spec.unit,
                                          spec.mult, spec.order, out);
    return npyio__dtype_make_scalar(mem, spec.kind, spec.itemsize, spec.order,
                                    out);
}

/* ---- comma-separated type strings ------------------------------------------------------ */

/*
 * np.dtype("i4, (2,3)f8") -- NumPy 1.24's _check_for_commastring (C) and
 * _commastring (numpy/core/_internal.py), reproduced rule for rule:
 *
 *   - a string is a list of types if it starts with a digit, a byte order
 *     and a digit, "()" or a byte order and "()" (at least 4 bytes), or has
 *     a comma outside [...];
 *   - each item matches  [<>|=]? ( *\(?[ ,0-9]*\)? *)? [<>|=]?
 *     [A-Za-z0-9.?]*(\[[a-zA-Z0-9,.]+\])?  (byte order, a shape, byte
 *     order, type), items are separated by \s*,\s* and trailing white
 *     space ends the list;
 *   - the two byte orders must agree ('=' is the host's); '|', '=' and the
 *     host's order are dropped, so the type is parsed as if written
 *     without one ("<float64" alone is refused, "<float64,i4" is not);
 *   - the shape is a Python literal: an int or a tuple of ints; with a type
 *     of no size (S, U, V) it is the size instead ("3S" is S3); () and the
 *     int 1 give the type itself (NumPy 1.x's deprecated synonym);
 *   - one item is that type (a subarray if it has a shape); several are a
 *     record of fields f0, f1, ... packed in order, the last dropped if it
 *     is empty ("i4,<" is a record of one field, "i4," is i4).
 *
 * Where NumPy builds an inconsistent dtype (a size given to a subarray of
 * 0 bytes, sizes it wraps negative) the string is refused. Subarray shapes
 * may have 64 dimensions, as in descr lists (NumPy 1.24 allows 32).
 */

#define TYPE_STRING_DEPTH 4 /* items nest at most 3 deep: "(2,)3f8" */

/* Python's \s for a str (str.isspace()): the byte length of the white-space
 * character at s[0..len) of UTF-8 text, 0 if there is none. */
static size_t space_at(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    uint32_t c;

    if (len == 0)
        return 0;
    if (u[0] < 0x80)
        return u[0] == ' ' || (u[0] >= '\t' && u[0] <= '\r') ||
               (u[0] >= 0x1c && u[0] <= 0x1f);
    if (u[0] == 0xC2 && len >= 2)
        return u[1] == 0x85 || u[1] == 0xA0 ? 2 : 0; /* NEL, NBSP */
    if (u[0] < 0xE1 || u[0] > 0xE3 || len < 3 || (u[1] & 0xC0) != 0x80 ||
        (u[2] & 0xC0) != 0x80)
        return 0;
    c = ((uint32_t)(u[0] & 0x0F) << 12) | ((uint32_t)(u[1] & 0x3F) << 6) |
        (u[2] & 0x3F);
    return c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
                   c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000
               ? 3
               : 0;
}

static size_t skip_spaces(const char *s, size_t len, size_t i)
{
    size_t n;

    while ((n = space_at(s + i, len - i)) > 0)
        i += n;
    return i;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_order(char c)
{
    return c == '<' || c == '>' || c == '=' || c == '|';
}

static bool is_comma_string(const char *s, size_t len)
{
    int brackets = 0;
    size_t i;

    if (len == 0)
        return false;
    if (is_digit(s[0]) || (len > 1 && is_order(s[0]) && is_digit(s[1])))
        return true;
    if ((len > 1 && s[0] == '(' && s[1] == ')') ||
        (len > 3 && is_order(s[0]) && s[1] == '(' && s[2] == ')'))
        return true;
    for (i = 0; i < len; i++) {
        if (s[i] == ',' && brackets == 0)
            return true;
        brackets += (s[i] == '[') - (s[i] == ']');
    }
    return false;
}

/* One item as the pattern splits it. */
typedef struct comma_item {
    char order;          /* after combining and dropping; 0 for none */
    const char *shape;   /* the shape text, NULL if the item has none */
    size_t shape_len;
    const char *type;    /* the type text (may be empty) */
    size_t type_len;
} comma_item;

static bool is_type_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || is_digit(c) ||
           c == '.' || c == '?';
}

/* Match the item pattern at s[i..len): never fails (every part is
 * optional); returns the end. order1/order2 are the two byte orders. */
static size_t match_item(const char *s, size_t len, size_t i,
                         comma_item *item, char *order1, char *order2)
{
    size_t start, j;

    *order1 = *order2 = 0;
    if (i < len && is_order(s[i]))
        *order1 = s[i++];
    start = i;
    while (i < len && s[i] == ' ')
        i++;
    if (i < len && s[i] == '(')
        i++;
    while (i < len && (s[i] == ' ' || s[i] == ',' || is_digit(s[i])))
        i++;
    if (i < len && s[i] == ')')
        i++;
    while (i < len && s[i] == ' ')
        i++;
    item->shape = i > start ? s + start : NULL;
    item->shape_len = i - start;
    if (i < len && is_order(s[i]))
        *order2 = s[i++];
    start = i;
    while (i < len && is_type_char(s[i]))
        i++;
    if (i < len && s[i] == '[') {
        j = i + 1;
        while (j < len && s[j] != '?' && (is_type_char(s[j]) || s[j] == ','))
            j++; /* [a-zA-Z0-9,.]+ */
        if (j > i + 1 && j < len && s[j] == ']')
            i = j + 1;
    }
    item->type = s + start;
    item->type_len = i - start;
    return i;
}

/* The shape text evaluated as Python's literal_eval would: an int or a
 * tuple of ints (decimal, no leading zeros but 0, 00, ...). Values beyond
 * int64_t are kept as INT64_MAX (refused later as too big). */
typedef struct shape_value {
    bool is_tuple;
    int ndim;                            /* how many ints (may exceed 64) */
    int64_t dims[NPYIO__MAX_SUBARRAY_NDIM];
} shape_value;

static bool eval_shape(const char *r, size_t n, shape_value *v)
{
    size_t i = 0, end = n, start, k;
    bool paren = false, comma = false, want_int = true;

    v->is_tuple = false;
    v->ndim = 0;
    while (i < end && r[i] == ' ')
        i++;
    while (end > i && r[end - 1] == ' ')
        end--;
    if (i < end && r[i] == '(') {
        paren = true;
        i++;
    }
    if (end > i && r[end - 1] == ')') {
        if (!paren)
            return false; /* unmatched ')' */
        end--;
    } else if (paren) {
        return false; /* '(' never closed */
    }
    for (;;) {
        while (i < end && r[i] == ' ')
            i++;
        if (i == end)
            break;
        if (r[i] == ',') {
            if (want_int)
                return false; /* a leading or doubled comma */
            comma = want_int = true;
            i++;
            continue;
        }
        if (!want_int)
            return false; /* two ints side by side */
        start = i;
        while (i < end && is_digit(r[i]))
            i++;
        if (i == start)
            return false;
        for (k = start; k < i && r[start] == '0'; k++)
            if (r[k] != '0')
                return false; /* leading zeros */
        if (v->ndim < NPYIO__MAX_SUBARRAY_NDIM) {
            uint64_t value;

            v->dims[v->ndim] =
                parse_count(r + start, i - start, INT64_MAX, &value)
                    ? (int64_t)value
                    : INT64_MAX;
        }
        v->ndim++;
        want_int = false;
    }
    if (v->ndim == 0) {
        v->is_tuple = true; /* "()" is the empty tuple */
        return paren;       /* "" is no expression at all */
    }
    v->is_tuple = comma;
    return true;
}

static npyio_status type_from_str(const char *s, size_t len, size_t offset,
                                  int depth, const npyio__mem *mem,
                                  npyio_dtype **out);

/* Whole-string context for a message about one item. */
static npyio_status item_context(npyio_status st, const char *s, size_t len,
                                 size_t offset, size_t number)
{
    char context[256], shown[80];

    npyio__show(s, len, shown, sizeof shown);
    if (offset == SIZE_MAX)
        snprintf(context, sizeof context, "type string \"%s\", format "
                 "number %zu", shown, number);
    else
        snprintf(context, sizeof context, "header byte %zu: descr '%s' is "
                 "not a valid dtype: format number %zu", offset, shown,
                 number);
    return npyio__with_context(st, context);
}

/* NumPy's _convert_from_tuple for (type, shape) from a comma string. */
static npyio_status apply_shape(npyio_dtype *base, const shape_value *v,
                                const npyio__mem *mem, npyio_dtype **out)
{
    static const char where[] = "the shape";
    bool unsized = base->itemsize == 0 && (base->kind == NPYIO_KIND_BYTES ||
                                           base->kind == NPYIO_KIND_STR ||
                                           base->kind == NPYIO_KIND_VOID);
    int64_t size;

    *out = NULL;
    if (unsized) { /* "3S": the number is the size */
        if (v->is_tuple)
            return npyio__fail(NPYIO_E_FORMAT, "%s gives the size of a "
                               "type without one (S, U, V), which must be "
                               "an int, not a tuple", where);
        size = v->dims[0];
        if (base->kind == NPYIO_KIND_STR)
            size = size > INT32_MAX / 4 ? INT64_MAX : 4 * size;
        if (size > INT32_MAX)
            return npyio__fail(NPYIO_E_OVERFLOW, "%s: the size is above "
                               "NumPy's limit of 2147483647 bytes", where);
        return npyio__dtype_make_scalar(mem, base->kind, (size_t)size,
                                        base->byteorder, out);
    }
    if (base->itemsize == 0 && base->kind == NPYIO_KIND_SUBARRAY)
        return npyio__fail(NPYIO_E_FORMAT, "%s applies to a subarray of 0 "
                           "bytes, of which NumPy makes an inconsistent "
                           "dtype", where);
    /* (type, ()) and (type, 1) are the type itself in NumPy 1.x. */
    if ((v->is_tuple && v->ndim == 0) || (!v->is_tuple && v->dims[0] == 1)) {
        *out = npyio_dtype_ref(base);
        return NPYIO_OK;
    }
    if (v->ndim > NPYIO__MAX_SUBARRAY_NDIM)
        return npyio__fail(NPYIO_E_LIMIT, "%s has more than %d dimensions",
                           where, NPYIO__MAX_SUBARRAY_NDIM);
    return npyio__make_subarray(base, v->ndim, v->dims, where, mem, out);
}

static npyio_status convert_item(const comma_item *item, size_t offset,
                                 int depth, const npyio__mem *mem,
                                 npyio_dtype **out)
{
    char inline_buf[64], *text = inline_buf;
    npyio_dtype *base = NULL;
    shape_value v;
    size_t n = (item->order != 0) + item->type_len;
    npyio_status st = NPYIO_OK;

    *out = NULL;
    if (n > sizeof inline_buf) {
        st = npyio__alloc(mem, n, "type string", (void **)&text);
        if (st != NPYIO_OK)
            return st;
    }
    if (item->order != 0)
        text[0] = item->order;
    memcpy(text + (item->order != 0), item->type, item->type_len);
    st = type_from_str(text, n, offset, depth + 1, mem, &base);
    if (text != inline_buf)
        npyio__free(text);
    if (st != NPYIO_OK || item->shape == NULL) {
        *out = base;
        return st;
    }
    eval_shape(item->shape, item->shape_len, &v); /* checked when split */
    st = apply_shape(base, &v, mem, out);
    npyio_dtype_unref(base);
    return st;
}

/* The next item from s[*pos] on, through the comma after it (*pos moves
 * past it and the spaces around it): its byte orders combined, "|", "="
 * and the host's dropped, its shape checked. */
static npyio_status next_item(const char *s, size_t len, size_t offset,
                              size_t *pos, comma_item *item)
{
    char host = npyio__host_order(), o1, o2, order;
    size_t at = match_item(s, len, *pos, item, &o1, &o2);
    shape_value v;

    if (at < len) {
        size_t after = skip_spaces(s, len, at);

        if (after == len)
            at = len;
        else if (s[after] != ',')
            return bad_type(s, len, offset, NPYIO_E_FORMAT,
                            "an item of a comma-separated type string is "
                            "[byte order][shape][byte order]type");
        else
            at = skip_spaces(s, len, after + 1);
    }
    *pos = at;
    order = o2 == 0 ? o1 : o1 == 0 ? o2 : 0;
    if (o1 != 0 && o2 != 0) {
        char a = o1 == '=' ? host : o1, b = o2 == '=' ? host : o2;

        if (a != b)
            return bad_type(s, len, offset, NPYIO_E_FORMAT,
                            "an item has two different byte orders");
        order = a;
    }
    item->order = order == '|' || order == '=' || order == host ? 0 : order;
    if (item->shape != NULL && !eval_shape(item->shape, item->shape_len, &v))
        return bad_type(s, len, offset, NPYIO_E_FORMAT,
                        "the shape of an item is not an int or a tuple "
                        "of ints (as Python writes them)");
    return NPYIO_OK;
}

/* Split into items (the whole string first, as NumPy does, so syntax is
 * checked before any item is converted). */
static npyio_status split_items(const char *s, size_t len, size_t offset,
                                const npyio__mem *mem, comma_item **items,
                                size_t *count)
{
    comma_item *list = NULL;
    size_t pos = 0, n = 0, cap = 0;
    npyio_status st = NPYIO_OK;

    while (pos < len && st == NPYIO_OK) {
        comma_item item;

        st = next_item(s, len, offset, &pos, &item);
        if (st != NPYIO_OK)
            break;
        if (n == cap) {
            void *block = list;

            cap = cap ? 2 * cap : 8;
            st = npyio__realloc(mem, &block, cap * sizeof *list,
                                "type string items");
            if (st != NPYIO_OK)
                break;
            list = block;
        }
        list[n++] = item;
    }
    if (st != NPYIO_OK) {
        npyio__free(list);
        return st;
    }
    *items = list;
    *count = n;
    return NPYIO_OK;
}

static npyio_status comma_from_str(const char *s, size_t len, size_t offset,
                                   int depth, const npyio__mem *mem,
                                   npyio_dtype **out)
{
    comma_item *items = NULL;
    npyio_dtype **types = NULL;
    size_t n = 0, i, made = 0;
    npyio_status st;

    st = split_items(s, len, offset, mem, &items, &n);
    if (st != NPYIO_OK)
        return st;
    if (n == 1) {
        st = convert_item(&items[0], SIZE_MAX, depth, mem, out);
        npyio__free(items);
        return item_context(st, s, len, offset, 1);
    }
    /* Two items or more are a record, even when an empty last item
     * without a shape is then ignored (_convert_from_list). */
    if (items[n - 1].shape == NULL && items[n - 1].order == 0 &&
        items[n - 1].type_len == 0)
        n--;
    st = npyio__alloc_array(mem, n, sizeof *types, "record fields",
                            (void **)&types);
    for (i = 0; i < n && st == NPYIO_OK; i++, made++) {
        st = convert_item(&items[i], SIZE_MAX, depth, mem, &types[i]);
        st = item_context(st, s, len, offset, i + 1);
    }
    if (st == NPYIO_OK)
        st = npyio__record_numbered(types, n, offset == SIZE_MAX
                                                  ? "type string"
                                                  : "descr",
                                    mem, out);
    for (i = 0; i < made; i++)
        npyio_dtype_unref(types[i]);
    npyio__free(types);
    npyio__free(items);
    return st;
}

/* np.dtype(str): a list of types or one type. */
static npyio_status type_from_str(const char *s, size_t len, size_t offset,
                                  int depth, const npyio__mem *mem,
                                  npyio_dtype **out)
{
    *out = NULL;
    if (!is_comma_string(s, len))
        return single_from_str(s, len, offset, mem, out);
    if (depth >= TYPE_STRING_DEPTH)
        return bad_type(s, len, offset, NPYIO_E_FORMAT,
                        "type strings nested too deep");
    return comma_from_str(s, len, offset, depth, mem, out);
}

npyio_status npyio__dtype_from_str(const char *s, size_t len, size_t offset,
                                   const npyio__mem *mem, npyio_dtype **out)
{
    return type_from_str(s, len, offset, 0, mem, out);
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
                               npyio__pending_field *f)
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
static bool is_padding(const npyio__pending_field *f)
{
    return f->title == NULL && f->name_len == 0 &&
           (f->dtype->kind == NPYIO_KIND_VOID ||
            f->dtype->kind == NPYIO_KIND_SUBARRAY);
}

static npyio_status field_from_node(list_parser *lp,
                                    const npyio__lit_node *entry, int depth,
                                    npyio__pending_field *f)
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
    npyio__pending p;
    uint64_t offset = 0;
    npyio_status st = NPYIO_OK;

    npyio__pending_init(&p, lp->mem);
    st = npyio__pending_reserve(&p, list->count);
    for (entry = npyio__lit_child(lp->doc, list);
         entry != NULL && st == NPYIO_OK;
         entry = npyio__lit_next(lp->doc, entry)) {
        npyio__pending_field f;

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
            st = npyio__pending_push(&p, &f);
        }
    }
    if (st == NPYIO_OK)
        st = npyio__record_pack(&p, (size_t)offset, 1, "descr", out);
    npyio__pending_release(&p);
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

/* ---- any descr, and the public parser ------------------------------------------ */

npyio_status npyio__dtype_from_node(const npyio__lit_doc *doc,
                                    const npyio__lit_node *node,
                                    const npyio_options *options,
                                    npyio_dtype **out)
{
    return npyio__dtype_from_node_at(doc, node, options, 0, out);
}

npyio_status npyio__dtype_from_node_at(const npyio__lit_doc *doc,
                                       const npyio__lit_node *node,
                                       const npyio_options *options,
                                       int depth, npyio_dtype **out)
{
    size_t offset = npyio__lit_offset(doc, node);
    char small[64];

    *out = NULL;
    if (node->kind == NPYIO__LIT_STR) {
        const char *text = doc->text + node->pos;
        char *decoded = small;
        size_t len = node->len;
        npyio__mem mem;
        npyio_status st;

        npyio__mem_init(&mem, options);
        /* Type strings are ASCII (white space between the items of a
         * comma-separated one may not be); only a string with escapes or
         * other characters needs decoding. */
        if (node->flags != 0) {
            if (npyio__lit_str_room(node) > sizeof small) {
                st = npyio__alloc(&mem, npyio__lit_str_room(node),
                                  "type string", (void **)&decoded);
                if (st != NPYIO_OK)
                    return st;
            }
            len = npyio__lit_str_decode(doc, node, decoded);
            text = decoded;
        }
        st = npyio__dtype_from_str(text, len, offset, &mem, out);
        if (decoded != small)
            npyio__free(decoded);
        return st;
    }
    if (node->kind == NPYIO__LIT_LIST || node->kind == NPYIO__LIT_TUPLE)
        return npyio__compound_from_node(doc, node, options, depth, out);
    return npyio__fail(NPYIO_E_FORMAT,
                       "header byte %zu: descr is not a valid dtype "
                       "descriptor: it is %s, not a string or a list",
                       offset, npyio__lit_kind_name(node));
}

/* A Python literal starts with a quote (maybe after a u or b prefix) or a
 * bracket; no type string does, except a shape: "(2,)f8" and "()f8" are
 * type strings, while a literal tuple ('<f8', (2,)) opens with a quote or
 * another bracket. */
static bool looks_like_literal(const char *text, size_t len)
{
    size_t i = 0;

    if (len > 1 && (text[0] == 'u' || text[0] == 'U' || text[0] == 'b' ||
                    text[0] == 'B'))
        i = 1;
    if (len > i && (text[i] == '\'' || text[i] == '"'))
        return true;
    if (i > 0 || len == 0)
        return false;
    if (text[0] == '[')
        return true;
    if (text[0] != '(')
        return false;
    for (i = 1; i < len && text[i] == ' '; i++)
        ;
    return i < len && !is_digit(text[i]) && text[i] != ',' && text[i] != ')';
}

npyio_status npyio__dtype_parse(const char *text, size_t len,
                                const npyio_options *options,
                                const char *where, npyio_dtype **out)
{
    npyio__lit_config config;
    npyio__lit_doc doc;
    npyio__mem mem;
    npyio_status st;
    size_t bad;

    if (out != NULL)
        *out = NULL;
    if (out == NULL || text == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: %s is NULL", where,
                           out == NULL ? "out" : "text");
    npyio__mem_init(&mem, options);
    if (!looks_like_literal(text, len))
        return npyio__dtype_from_str(text, len, SIZE_MAX, &mem, out);
    /* The literal parser takes text checked as the header layer checks
     * it: strict UTF-8 without NUL bytes (as Python's source code). */
    bad = npyio__utf8_invalid_at((const unsigned char *)text, len);
    if (bad < len)
        return npyio__fail(NPYIO_E_FORMAT, "%s: byte %zu of the descr "
                           "(0x%02x) is %s", where, bad,
                           (unsigned char)text[bad],
                           text[bad] == 0 ? "a NUL byte"
                                          : "not valid UTF-8");
    config.encoding = NPYIO__LIT_UTF8;
    config.allow_long_suffix = false;
    config.max_depth = npyio__limit(options, NPYIO_LIMIT_DEPTH);
    config.base_offset = 0;
    st = npyio__lit_parse(&doc, text, len, &config, &mem);
    if (st == NPYIO_OK)
        st = npyio__dtype_from_node(&doc, npyio__lit_resolve(&doc, doc.nodes),
                                    options, out);
    npyio__lit_free(&doc);
    return st;
}

npyio_status npyio_dtype_parse(const char *text, size_t len,
                               const npyio_options *options, npyio_dtype **out)
{
    return npyio__dtype_parse(text, len, options, "npyio_dtype_parse", out);
}
