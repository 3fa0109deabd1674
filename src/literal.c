/*
 * literal.c - parser of the Python-literal subset of .npy headers (the
 * grammar is in literal.h), string decoding, and Python's str repr().
 *
 * The parser is iterative: open containers live on an explicit stack whose
 * size is the depth limit, so no input can drive recursion. Nodes go into an
 * array (inline for ordinary headers, so the common case allocates nothing)
 * in document order. It reads only text[0..len) and uses no locale-dependent
 * function: character classes are spelled out.
 */
#include "alloc.h"
#include "error.h"
#include "literal.h"

#include <string.h>

#include "printable.h"

/* ---- character classes (ASCII only, locale-free) ------------------------- */

static bool is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\f' || c == '\r' || c == '\n';
}

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* Names are only ever True, False or None, so ASCII is enough; a byte
 * above 0x7F is then reported as an unexpected character on its own. */
static bool is_name_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_name_char(unsigned char c)
{
    return is_name_start(c) || is_digit(c);
}

static int hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* ---- parser state ---------------------------------------------------------- */

/* The kind and child count are kept here as well as in the node: reading
 * them back from the node right after updating it stalled on store
 * forwarding (a fifth of the parser's time on record headers). */
typedef struct open_container {
    uint32_t node;    /* index of the container node */
    uint32_t last;    /* index of its last child, 0 if none yet */
    uint32_t count;   /* children so far (the node's count) */
    uint8_t kind;     /* the node's kind */
    bool after_comma; /* the last token was ',' (or the opener) */
    bool had_comma;   /* a ',' was seen (makes '(' x ')' a tuple) */
} open_container;

typedef struct parser {
    npyio__lit_doc *doc;
    const npyio__lit_config *config;
    const unsigned char *text;
    size_t len;
    size_t pos;
    open_container *stack;
    size_t depth;
    open_container inline_stack[NPYIO__LIT_INLINE_DEPTH];
} parser;

static size_t at(const parser *p, size_t pos)
{
    return p->config->base_offset + pos;
}

/* A character for a message: printable ASCII as is, anything else as a
 * Python-style escape, so messages stay readable and valid UTF-8. */
static const char *show_char(unsigned char c, char buf[8])
{
    static const char hex[] = "0123456789abcdef";

    if (c == '\'') {
        memcpy(buf, "\"'\"", 4); /* a quote in double quotes */
    } else if (c >= 0x20 && c < 0x7f) {
        buf[0] = '\'';
        buf[1] = (char)c;
        buf[2] = '\'';
        buf[3] = '\0';
    } else {
        memcpy(buf, "'\\x", 3);
        buf[3] = hex[c >> 4];
        buf[4] = hex[c & 15];
        buf[5] = '\'';
        buf[6] = '\0';
    }
    return buf;
}

static npyio_status syntax_error(const parser *p, size_t pos, const char *what)
{
    return npyio__fail(NPYIO_E_FORMAT, "header byte %zu: %s", at(p, pos),
                       what);
}

static npyio_status unexpected(const parser *p, size_t pos, const char *want)
{
    char buf[8];

    if (pos >= p->len)
        return npyio__fail(NPYIO_E_FORMAT,
                           "header byte %zu: the header ends where %s was "
                           "expected", at(p, pos), want);
    return npyio__fail(NPYIO_E_FORMAT,
                       "header byte %zu: unexpected %s where %s was expected",
                       at(p, pos), show_char(p->text[pos], buf), want);
}

static npyio_status add_node(parser *p, uint8_t kind, size_t pos,
                             uint32_t *index)
{
    npyio__lit_doc *doc = p->doc;
    npyio__lit_node *node;

    if (doc->count == doc->capacity) {
        size_t grown = (size_t)doc->capacity * 4;
        void *block = doc->nodes == doc->inline_nodes ? NULL : doc->nodes;
        npyio_status st;

        if (grown > UINT32_MAX)
            return npyio__fail(NPYIO_E_LIMIT,
                               "header byte %zu: more than %u literal nodes",
                               at(p, pos), (unsigned)UINT32_MAX);
        st = npyio__realloc(doc->mem, &block, grown * sizeof *node,
                            "header literal nodes");
        if (st != NPYIO_OK)
            return st;
        if (doc->nodes == doc->inline_nodes)
            memcpy(block, doc->inline_nodes, sizeof doc->inline_nodes);
        doc->nodes = block;
        doc->capacity = (uint32_t)grown;
    }
    *index = doc->count++;
    node = &doc->nodes[*index];
    memset(node, 0, sizeof *node);
    node->kind = kind;
    node->pos = pos;
    return NPYIO_OK;
}

/* Link a finished value into the innermost open container. */
static void attach(parser *p, uint32_t index)
{
    open_container *top;

    if (p->depth == 0)
        return;
    top = &p->stack[p->depth - 1];
    if (top->last != 0)
        p->doc->nodes[top->last].next = index;
    top->last = index;
    top->after_comma = false;
    p->doc->nodes[top->node].count = ++top->count;
}

/* Are the 8 bytes at t all spaces? (np.save pads every header with
 * spaces: they are skipped eight at a time.) */
static bool eight_spaces(const unsigned char *t)
{
    uint64_t word;

    memcpy(&word, t, sizeof word);
    return word == 0x2020202020202020u;
}

static void skip_space(parser *p)
{
    const unsigned char *t = p->text;
    size_t pos = p->pos, len = p->len;

    while (len - pos >= 8 && eight_spaces(t + pos))
        pos += 8;
    while (pos < len && is_space(t[pos]))
        pos++;
    p->pos = pos;
}

/* ---- scalars ---------------------------------------------------------------- */

static npyio_status refuse_number_form(const parser *p, size_t start,
                                       size_t pos)
{
    unsigned char c = pos < p->len ? p->text[pos] : 0;

    if (c == '.' || c == 'e' || c == 'E' || c == 'j' || c == 'J')
        return syntax_error(p, start, "floating-point and complex numbers "
                                      "are not allowed in a header");
    if (c == 'x' || c == 'X' || c == 'o' || c == 'O' || c == 'b' || c == 'B')
        return syntax_error(p, start, "hexadecimal, octal and binary "
                                      "integers are not supported");
    if (c == '_')
        return syntax_error(p, start, "integers with '_' separators are not "
                                      "supported");
    if (c == 'l')
        return syntax_error(p, pos, "lowercase 'l' after an integer (Python "
                                    "2 longs use 'L')");
    return unexpected(p, pos, "',' or a closing bracket after a number");
}

/* An integer, of digits from digits_at, beyond int64_t (the digit at
 * p->pos would take it there): the message shows up to 40 digits. */
static npyio_status int_overflow(const parser *p, size_t start,
                                 size_t digits_at, bool negative)
{
    size_t end = p->pos;

    while (end < p->len && is_digit(p->text[end]))
        end++;
    return npyio__fail(NPYIO_E_OVERFLOW,
                       "header byte %zu: integer %s%.*s%s does not fit in "
                       "64 bits", at(p, start), negative ? "-" : "",
                       (int)(end - digits_at > 40 ? 40 : end - digits_at),
                       (const char *)p->text + digits_at,
                       end - digits_at > 40 ? "..." : "");
}

/* After an integer's digits: Python 2 wrote longs as 2L; NumPy drops the
 * L from 1.0 and 2.0 headers, with or without white space before it.
 * Anything else that continues the number is a form we refuse. */
static npyio_status int_suffix(parser *p, size_t start)
{
    size_t after = p->pos;

    skip_space(p);
    if (p->pos < p->len && p->text[p->pos] == 'L' &&
        (p->pos + 1 >= p->len || !is_name_char(p->text[p->pos + 1]))) {
        if (!p->config->allow_long_suffix)
            return syntax_error(p, p->pos,
                                "the Python 2 long suffix 'L' is not "
                                "allowed in a format 3.0 header");
        p->pos++;
        return NPYIO_OK;
    }
    p->pos = after;
    if (p->pos < p->len &&
        (is_name_char(p->text[p->pos]) || p->text[p->pos] == '.'))
        return refuse_number_form(p, start, p->pos);
    return NPYIO_OK;
}

static npyio_status parse_int(parser *p, uint32_t *index)
{
    size_t start = p->pos;
    bool negative = false;
    uint64_t magnitude = 0;
    uint64_t bound;
    size_t digits_at;
    npyio_status st;

    if (p->text[p->pos] == '-' || p->text[p->pos] == '+') {
        negative = p->text[p->pos] == '-';
        p->pos++;
        skip_space(p);
        if (p->pos >= p->len || !is_digit(p->text[p->pos]))
            return unexpected(p, p->pos, "digits after a sign");
    }
    digits_at = p->pos;
    /* int64_t holds -2**63 but only 2**63 - 1. */
    bound = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    while (p->pos < p->len && is_digit(p->text[p->pos])) {
        unsigned digit = (unsigned)(p->text[p->pos] - '0');

        if (magnitude > (bound - digit) / 10)
            return int_overflow(p, start, digits_at, negative);
        magnitude = magnitude * 10 + digit;
        p->pos++;
    }
    /* Python forbids leading zeros on non-zero integers ("012"). */
    if (p->text[digits_at] == '0' && magnitude != 0)
        return syntax_error(p, digits_at, "integers with leading zeros are "
                                          "not valid Python");
    st = int_suffix(p, start);
    if (st != NPYIO_OK)
        return st;
    st = add_node(p, NPYIO__LIT_INT, start, index);
    if (st != NPYIO_OK)
        return st;
    p->doc->nodes[*index].value =
        negative ? (magnitude == (uint64_t)INT64_MAX + 1
                        ? INT64_MIN
                        : -(int64_t)magnitude)
                 : (int64_t)magnitude;
    p->doc->nodes[*index].len = p->pos - start;
    return NPYIO_OK;
}

static npyio_status parse_name(parser *p, uint32_t *index)
{
    static const struct {
        const char *name;
        uint8_t kind;
    } names[] = {{"True", NPYIO__LIT_TRUE},
                 {"False", NPYIO__LIT_FALSE},
                 {"None", NPYIO__LIT_NONE}};
    size_t start = p->pos;
    size_t n;
    size_t i;

    while (p->pos < p->len && is_name_char(p->text[p->pos]))
        p->pos++;
    n = p->pos - start;
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i].name) == n &&
            memcmp(names[i].name, p->text + start, n) == 0)
            return add_node(p, names[i].kind, start, index);
    return npyio__fail(NPYIO_E_FORMAT,
                       "header byte %zu: bare name '%.*s' (only True, False "
                       "and None are literals)", at(p, start),
                       (int)(n > 40 ? 40 : n), (const char *)p->text + start);
}

/* Check one escape sequence starting at the backslash; return its length
 * in bytes, or 0 after setting an error. */
static size_t check_escape(const parser *p, size_t pos, npyio_status *st)
{
    size_t need = 0;
    unsigned char c;
    uint32_t code = 0;
    size_t i;

    if (pos + 1 >= p->len) {
        *st = syntax_error(p, pos, "unterminated string (backslash at the "
                                   "end of the header)");
        return 0;
    }
    c = p->text[pos + 1];
    if (c == 'x')
        need = 2;
    else if (c == 'u')
        need = 4;
    else if (c == 'U')
        need = 8;
    else if (c == 'N') {
        *st = syntax_error(p, pos, "\\N{...} escapes are not supported");
        return 0;
    } else
        return 2; /* single-character, octal and unknown escapes */
    for (i = 0; i < need; i++) {
        int v = pos + 2 + i < p->len ? hex_value(p->text[pos + 2 + i]) : -1;

        if (v < 0) {
            *st = syntax_error(p, pos, "truncated \\x, \\u or \\U escape");
            return 0;
        }
        code = code * 16 + (uint32_t)v;
    }
    if (code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
        *st = syntax_error(p, pos, "escape of a surrogate or of a code "
                                   "point beyond U+10FFFF");
        return 0;
    }
    return 2 + need;
}

/* Bytes that end the fast scan inside a string: quotes, backslash, line
 * breaks and non-ASCII (which sets NPYIO__LIT_HIGH). */
static const bool string_special[256] = {
    ['\''] = true, ['"'] = true, ['\\'] = true, ['\n'] = true, ['\r'] = true,
#define HIGH8(n) [n] = true, [n + 1] = true, [n + 2] = true, [n + 3] = true, \
                 [n + 4] = true, [n + 5] = true, [n + 6] = true, [n + 7] = true
    HIGH8(0x80), HIGH8(0x88), HIGH8(0x90), HIGH8(0x98), HIGH8(0xA0),
    HIGH8(0xA8), HIGH8(0xB0), HIGH8(0xB8), HIGH8(0xC0), HIGH8(0xC8),
    HIGH8(0xD0), HIGH8(0xD8), HIGH8(0xE0), HIGH8(0xE8), HIGH8(0xF0),
    HIGH8(0xF8),
#undef HIGH8
};

static npyio_status parse_string(parser *p, uint32_t *index)
{
    size_t start = p->pos;
    uint8_t kind = NPYIO__LIT_STR;
    uint8_t flags = 0;
    unsigned char quote;
    size_t body;
    npyio_status st = NPYIO_OK;

    if (p->text[p->pos] == 'u' || p->text[p->pos] == 'U')
        p->pos++;
    else if (p->text[p->pos] == 'b' || p->text[p->pos] == 'B') {
        kind = NPYIO__LIT_BYTES;
        p->pos++;
    }
    quote = p->text[p->pos];
    if (p->pos + 2 < p->len && p->text[p->pos + 1] == quote &&
        p->text[p->pos + 2] == quote)
        return syntax_error(p, start, "triple-quoted strings are not "
                                      "supported");
    body = ++p->pos;
    for (;;) {
        unsigned char c;

        /* Skip ordinary characters in a tight loop: most of a header. */
        while (p->pos < p->len && !string_special[p->text[p->pos]])
            p->pos++;
        if (p->pos >= p->len)
            return syntax_error(p, start, "unterminated string");
        c = p->text[p->pos];
        if (c == quote)
            break;
        if (c == '\'' || c == '"') { /* the other quote: ordinary */
            p->pos++;
            continue;
        }
        if (c == '\n' || c == '\r')
            return syntax_error(p, start, "unterminated string (line break "
                                          "inside quotes)");
        if (c == '\\') {
            size_t n = check_escape(p, p->pos, &st);

            if (n == 0)
                return st;
            flags |= NPYIO__LIT_ESCAPES;
            p->pos += n;
            continue;
        }
        if (c >= 0x80)
            flags |= NPYIO__LIT_HIGH;
        p->pos++;
    }
    st = add_node(p, kind, start, index);
    if (st != NPYIO_OK)
        return st;
    p->doc->nodes[*index].flags = flags;
    p->doc->nodes[*index].len = p->pos - body;
    p->doc->nodes[*index].pos = body; /* strings point at their body */
    p->pos++;
    return NPYIO_OK;
}

/* ---- containers ---------------------------------------------------------------- */

static npyio_status open_container_at(parser *p, uint8_t kind,
                                      uint32_t *index)
{
    open_container *top;
    npyio_status st;

    if ((int64_t)p->depth >= p->config->max_depth)
        return npyio__fail(NPYIO_E_LIMIT,
                           "header byte %zu: brackets nested deeper than "
                           "%lld (NPYIO_LIMIT_DEPTH)", at(p, p->pos),
                           (long long)p->config->max_depth);
    if (p->depth == NPYIO__LIT_INLINE_DEPTH && p->stack == p->inline_stack) {
        void *block;

        /* Nesting can be no deeper than the text is long. */
        size_t room = (uint64_t)p->config->max_depth < p->len
                          ? (size_t)p->config->max_depth
                          : p->len;

        st = npyio__alloc_array(p->doc->mem, room,
                                sizeof *p->stack, "header nesting stack",
                                &block);
        if (st != NPYIO_OK)
            return st;
        memcpy(block, p->inline_stack, sizeof p->inline_stack);
        p->stack = block;
    }
    st = add_node(p, kind, p->pos, index);
    if (st != NPYIO_OK)
        return st;
    top = &p->stack[p->depth++];
    top->node = *index;
    top->last = 0;
    top->count = 0;
    top->kind = kind;
    top->after_comma = true;
    top->had_comma = false;
    p->pos++;
    return NPYIO_OK;
}

static char closer_of(uint8_t kind)
{
    return kind == NPYIO__LIT_DICT ? '}'
           : kind == NPYIO__LIT_LIST ? ']'
                                     : ')';
}

/*
 * Close the innermost container at its closing bracket. '(' x ')' without a
 * comma is a parenthesised value, not a tuple; a dict must not end after a
 * key; a set ({1, 2}) is refused.
 */
static npyio_status close_container(parser *p, uint32_t *index)
{
    open_container *top = &p->stack[p->depth - 1];
    npyio__lit_node *node = &p->doc->nodes[top->node];

    if (top->kind == NPYIO__LIT_DICT && top->count % 2 != 0)
        return unexpected(p, p->pos, "':' after a dict key");
    if (top->kind == NPYIO__LIT_TUPLE && top->count == 1 && !top->had_comma)
        node->kind = NPYIO__LIT_GROUP;
    node->len = p->pos + 1 - node->pos;
    *index = top->node;
    p->depth--;
    p->pos++;
    return NPYIO_OK;
}

/* What may follow a value inside the innermost container. */
static npyio_status after_value(parser *p, bool *closed, uint32_t *index)
{
    open_container *top = &p->stack[p->depth - 1];
    bool expect_colon = top->kind == NPYIO__LIT_DICT && top->count % 2 == 1;
    unsigned char c;

    *closed = false;
    skip_space(p);
    c = p->pos < p->len ? p->text[p->pos] : 0;
    if (expect_colon) {
        if (c == ',' || c == '}')
            return syntax_error(p, p->pos, "sets are not supported (a dict "
                                           "key needs ': value')");
        if (c != ':')
            return unexpected(p, p->pos, "':' after a dict key");
        p->pos++;
        top->after_comma = true; /* a value must follow */
        return NPYIO_OK;
    }
    if (c == ',') {
        p->pos++;
        top->after_comma = true;
        top->had_comma = true;
        return NPYIO_OK;
    }
    if (c == (unsigned char)closer_of(top->kind)) {
        *closed = true;
        return close_container(p, index);
    }
    if (c == '\'' || c == '"')
        return syntax_error(p, p->pos, "implicit string concatenation is not "
                                       "supported");
    return unexpected(p, p->pos, top->kind == NPYIO__LIT_DICT
                                     ? "',' or '}'"
                                 : top->kind == NPYIO__LIT_LIST
                                     ? "',' or ']'"
                                     : "',' or ')'");
}

/* Parse one value that is not a container opener. */
static npyio_status parse_scalar(parser *p, uint32_t *index)
{
    unsigned char c = p->text[p->pos];
    unsigned char next = p->pos + 1 < p->len ? p->text[p->pos + 1] : 0;

    if (c == '\'' || c == '"')
        return parse_string(p, index);
    if ((c == 'u' || c == 'U' || c == 'b' || c == 'B') &&
        (next == '\'' || next == '"'))
        return parse_string(p, index);
    if ((c == 'r' || c == 'R' || c == 'f' || c == 'F') &&
        (next == '\'' || next == '"'))
        return syntax_error(p, p->pos, "raw and f-strings are not supported");
    if (is_digit(c) || c == '-' || c == '+')
        return parse_int(p, index);
    if (is_name_start(c))
        return parse_name(p, index);
    if (c == '#')
        return syntax_error(p, p->pos, "comments are not supported");
    if (c == '\\')
        return syntax_error(p, p->pos, "line continuation is not supported");
    return unexpected(p, p->pos, "a value");
}

/* Handle the token at p->pos when a value (or a closer) is expected. */
static npyio_status value_step(parser *p, bool *done_value, uint32_t *index)
{
    unsigned char c = p->text[p->pos];
    open_container *top = p->depth ? &p->stack[p->depth - 1] : NULL;

    *done_value = false;
    if (c == '{')
        return open_container_at(p, NPYIO__LIT_DICT, index);
    if (c == '[')
        return open_container_at(p, NPYIO__LIT_LIST, index);
    if (c == '(')
        return open_container_at(p, NPYIO__LIT_TUPLE, index);
    /* An empty container, or a trailing comma before the closer (not after
     * a dict key's colon). */
    if (top != NULL &&
        c == (unsigned char)closer_of(top->kind) &&
        (top->kind != NPYIO__LIT_DICT || top->count % 2 == 0)) {
        *done_value = true;
        return close_container(p, index);
    }
    if (c == ',' || c == ':' || c == ')' || c == ']' || c == '}')
        return unexpected(p, p->pos, "a value");
    *done_value = true;
    return parse_scalar(p, index);
}

static npyio_status parse_all(parser *p)
{
    uint32_t index = 0;
    npyio_status st;

    for (;;) {
        bool have_value;

        skip_space(p);
        if (p->pos >= p->len)
            return unexpected(p, p->pos, p->depth ? "a value or a closing "
                                                    "bracket"
                                                  : "a value");
        st = value_step(p, &have_value, &index);
        if (st != NPYIO_OK)
            return st;
        /* A finished value is attached to its parent, which may then be
         * closed in turn, and so on up. */
        while (have_value) {
            bool closed;

            if (p->depth == 0)
                return NPYIO_OK;
            attach(p, index);
            st = after_value(p, &closed, &index);
            if (st != NPYIO_OK)
                return st;
            have_value = closed;
        }
    }
}

npyio_status npyio__lit_parse(npyio__lit_doc *doc, const char *text,
                              size_t len, const npyio__lit_config *config,
                              const npyio__mem *mem)
{
    parser p;
    npyio_status st;

    doc->text = text;
    doc->len = len;
    doc->encoding = config->encoding;
    doc->base_offset = config->base_offset;
    doc->nodes = doc->inline_nodes;
    doc->count = 0;
    doc->capacity = NPYIO__LIT_INLINE_NODES;
    doc->mem = mem;

    p.doc = doc;
    p.config = config;
    p.text = (const unsigned char *)text;
    p.len = len;
    p.pos = 0;
    p.stack = p.inline_stack;
    p.depth = 0;

    st = parse_all(&p);
    if (st == NPYIO_OK) {
        skip_space(&p);
        if (p.pos < p.len) {
            unsigned char c = p.text[p.pos];

            st = c == ',' ? syntax_error(&p, p.pos, "a top-level tuple is "
                                                    "not a header dict")
                 : c == '\'' || c == '"'
                     ? syntax_error(&p, p.pos, "implicit string "
                                               "concatenation is not "
                                               "supported")
                 : c == '#' ? syntax_error(&p, p.pos, "comments are not "
                                                      "supported")
                            : unexpected(&p, p.pos, "the end of the header");
        }
    }
    if (p.stack != p.inline_stack)
        npyio__free(p.stack);
    return st;
}

void npyio__lit_free(npyio__lit_doc *doc)
{
    if (doc->nodes != doc->inline_nodes)
        npyio__free(doc->nodes);
    doc->nodes = doc->inline_nodes;
    doc->count = 0;
}

/* ---- navigation ------------------------------------------------------------------ */

const npyio__lit_node *npyio__lit_resolve(const npyio__lit_doc *doc,
                                          const npyio__lit_node *node)
{
    while (node != NULL && node->kind == NPYIO__LIT_GROUP)
        node = node + 1;
    (void)doc;
    return node;
}

const npyio__lit_node *npyio__lit_child(const npyio__lit_doc *doc,
                                        const npyio__lit_node *node)
{
    if (node->count == 0)
        return NULL;
    return npyio__lit_resolve(doc, node + 1);
}

const npyio__lit_node *npyio__lit_next(const npyio__lit_doc *doc,
                                       const npyio__lit_node *node)
{
    /* A resolved node's sibling link is on the outermost GROUP around it;
     * groups are only ever wrapped around their single child, so walk back
     * to the outermost one. */
    while (node > doc->nodes && (node - 1)->kind == NPYIO__LIT_GROUP &&
           (node - 1)->count == 1)
        node--;
    if (node->next == 0)
        return NULL;
    return npyio__lit_resolve(doc, &doc->nodes[node->next]);
}

size_t npyio__lit_offset(const npyio__lit_doc *doc,
                         const npyio__lit_node *node)
{
    return doc->base_offset + node->pos;
}

const char *npyio__lit_kind_name(const npyio__lit_node *node)
{
    switch (node->kind) {
    case NPYIO__LIT_DICT: return "a dict";
    case NPYIO__LIT_LIST: return "a list";
    case NPYIO__LIT_TUPLE: return "a tuple";
    case NPYIO__LIT_STR: return "a string";
    case NPYIO__LIT_BYTES: return "a bytes literal";
    case NPYIO__LIT_INT: return "an int";
    case NPYIO__LIT_TRUE: return "True";
    case NPYIO__LIT_FALSE: return "False";
    case NPYIO__LIT_NONE: return "None";
    default: return "a value";
    }
}

/* ---- strings ------------------------------------------------------------------------ */

size_t npyio__lit_str_room(const npyio__lit_node *node)
{
    return node->len * 2 + 1;
}

static size_t put_utf8(uint32_t code, char *out)
{
    if (code < 0x80) {
        out[0] = (char)code;
        return 1;
    }
    if (code < 0x800) {
        out[0] = (char)(0xC0 | (code >> 6));
        out[1] = (char)(0x80 | (code & 0x3F));
        return 2;
    }
    if (code < 0x10000) {
        out[0] = (char)(0xE0 | (code >> 12));
        out[1] = (char)(0x80 | ((code >> 6) & 0x3F));
        out[2] = (char)(0x80 | (code & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (code >> 18));
    out[1] = (char)(0x80 | ((code >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((code >> 6) & 0x3F));
    out[3] = (char)(0x80 | (code & 0x3F));
    return 4;
}

/* Decode the escape at s[0] == '\\' (already validated by the parser);
 * return the number of input bytes used and the output through `out`. */
static size_t decode_escape(const unsigned char *s, size_t avail, char *out,
                            size_t *written)
{
    static const char simple_in[] = "\\'\"abfnrtv";
    static const char simple_out[] = "\\'\"\a\b\f\n\r\t\v";
    const char *hit;
    uint32_t code = 0;
    size_t n = 0, i;

    if (s[1] == '\n') { /* backslash-newline: nothing */
        *written = 0;
        return 2;
    }
    hit = memchr(simple_in, s[1], sizeof simple_in - 1);
    if (hit != NULL) {
        out[0] = simple_out[hit - simple_in];
        *written = 1;
        return 2;
    }
    if (s[1] >= '0' && s[1] <= '7') {
        for (i = 1; i < 4 && i < avail && s[i] >= '0' && s[i] <= '7'; i++)
            code = code * 8 + (uint32_t)(s[i] - '0');
        *written = put_utf8(code, out);
        return i;
    }
    n = s[1] == 'x' ? 2 : s[1] == 'u' ? 4 : s[1] == 'U' ? 8 : 0;
    if (n == 0) { /* unknown escape: kept as written, like Python */
        out[0] = '\\';
        *written = 1;
        return 1;
    }
    for (i = 0; i < n; i++)
        code = code * 16 + (uint32_t)hex_value(s[2 + i]);
    *written = put_utf8(code, out);
    return 2 + n;
}

size_t npyio__lit_str_decode(const npyio__lit_doc *doc,
                             const npyio__lit_node *node, char *out)
{
    const unsigned char *s = (const unsigned char *)doc->text + node->pos;
    size_t len = node->len;
    size_t i = 0, o = 0;

    if (node->flags == 0 ||
        (node->flags == NPYIO__LIT_HIGH && doc->encoding == NPYIO__LIT_UTF8)) {
        memcpy(out, s, len);
        out[len] = '\0';
        return len;
    }
    while (i < len) {
        size_t written;

        if (s[i] == '\\') {
            i += decode_escape(s + i, len - i, out + o, &written);
            o += written;
        } else if (s[i] >= 0x80 && doc->encoding == NPYIO__LIT_LATIN1) {
            o += put_utf8(s[i++], out + o); /* latin-1 byte = code point */
        } else {
            out[o++] = (char)s[i++];
        }
    }
    out[o] = '\0';
    return o;
}

bool npyio__lit_str_equals(const npyio__lit_doc *doc,
                           const npyio__lit_node *node, const char *s,
                           size_t len)
{
    char small[128];

    if (node->kind != NPYIO__LIT_STR)
        return false;
    if (node->flags == 0)
        return node->len == len &&
               memcmp(doc->text + node->pos, s, len) == 0;
    /* Escaped or non-ASCII: decode (it is never longer than twice the raw
     * text, and the raw text is at most twice the target here). */
    if (npyio__lit_str_room(node) > sizeof small || node->len > 2 * len + 8)
        return false;
    return npyio__lit_str_decode(doc, node, small) == len &&
           memcmp(small, s, len) == 0;
}

/* ---- repr ------------------------------------------------------------------------------ */

/* Read one UTF-8 character (the input is valid UTF-8). */
static uint32_t next_code(const unsigned char *s, size_t len, size_t *i)
{
    unsigned char c = s[*i];
    uint32_t code;
    size_t n, k;

    if (c < 0x80) {
        (*i)++;
        return c;
    }
    n = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : 1;
    code = c & (0x3Fu >> n);
    for (k = 1; k <= n && *i + k < len; k++)
        code = (code << 6) | (s[*i + k] & 0x3Fu);
    *i += k;
    return code;
}

typedef struct out_buf {
    char *out;
    size_t cap;
    size_t len;
} out_buf;

static void emit(out_buf *b, const char *s, size_t n)
{
    if (b->len < b->cap) {
        size_t room = b->cap - b->len;

        memcpy(b->out + b->len, s, n < room ? n : room);
    }
    b->len += n;
}

static void emit_escape(out_buf *b, uint32_t c)
{
    static const char hex[] = "0123456789abcdef";
    char tmp[10];
    int digits = c < 0x100 ? 2 : c < 0x10000 ? 4 : 8;
    int i;

    tmp[0] = '\\';
    tmp[1] = digits == 2 ? 'x' : digits == 4 ? 'u' : 'U';
    for (i = 0; i < digits; i++)
        tmp[2 + i] = hex[(c >> (4 * (digits - 1 - i))) & 15];
    emit(b, tmp, (size_t)(2 + digits));
}

/* Printable ASCII other than quotes and backslash: copied as is. */
static bool plain_ascii(const unsigned char *u, size_t len)
{
    size_t i;

    for (i = 0; i < len; i++)
        if (u[i] < 0x20 || u[i] > 0x7E || u[i] == '\'' || u[i] == '"' ||
            u[i] == '\\')
            return false;
    return true;
}

size_t npyio__lit_repr_str(const char *s, size_t len, char *out, size_t cap)
{
    const unsigned char *u = (const unsigned char *)s;
    out_buf b = {out, cap, 0};
    char quote = '\'';
    size_t i = 0;

    if (plain_ascii(u, len)) { /* the usual field name */
        emit(&b, "'", 1);
        emit(&b, s, len);
        emit(&b, "'", 1);
        return b.len;
    }

    /* Python uses double quotes only for a string with ' and no ". */
    if (memchr(s, '\'', len) != NULL && memchr(s, '"', len) == NULL)
        quote = '"';
    emit(&b, &quote, 1);
    while (i < len) {
        size_t start = i;
        uint32_t c = next_code(u, len, &i);

        if (c == (uint32_t)quote || c == '\\') {
            emit(&b, "\\", 1);
            emit(&b, s + start, 1);
        } else if (c == '\t') {
            emit(&b, "\\t", 2);
        } else if (c == '\n') {
            emit(&b, "\\n", 2);
        } else if (c == '\r') {
            emit(&b, "\\r", 2);
        } else if (!npyio__printable(c)) {
            emit_escape(&b, c);
        } else {
            emit(&b, s + start, i - start);
        }
    }
    emit(&b, &quote, 1);
    return b.len;
}
