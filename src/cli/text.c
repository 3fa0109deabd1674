/*
 * text.c - the growable string, Python's reprs of text, and the escaping
 * of names and messages (see text.h).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "printable_table.h"
#include "text.h"

/* ---- growable text ------------------------------------------------------ */

static void sb_reserve(sbuf *b, size_t more)
{
    size_t need, cap;
    char *p;

    if (b->nomem)
        return;
    if (more > SIZE_MAX / 2 - b->len) {
        b->nomem = 1;
        return;
    }
    need = b->len + more + 1;
    if (need <= b->cap)
        return;
    cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap *= 2;
    p = realloc(b->p, cap);
    if (p == NULL) {
        b->nomem = 1;
        return;
    }
    b->p = p;
    b->cap = cap;
}

/* Room for n more bytes at the end, counted in: where they go, or NULL. */
static char *sb_extend(sbuf *b, size_t n)
{
    char *at;

    sb_reserve(b, n);
    if (b->nomem)
        return NULL;
    at = b->p + b->len;
    b->len += n;
    b->p[b->len] = '\0';
    return at;
}

void sb_add(sbuf *b, const char *s, size_t n)
{
    char *at = n > 0 ? sb_extend(b, n) : NULL;

    if (at != NULL)
        memcpy(at, s, n);
}

void sb_str(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

void sb_fill(sbuf *b, char c, size_t n)
{
    char *at = sb_extend(b, n);

    if (at != NULL)
        memset(at, c, n);
}

void sb_chr(sbuf *b, char c) { sb_fill(b, c, 1); }

void sb_vfmt(sbuf *b, const char *fmt, va_list ap)
{
    va_list again;
    int n;

    va_copy(again, ap);
    n = vsnprintf(NULL, 0, fmt, ap);
    if (n < 0) {
        b->nomem = 1;
    } else {
        sb_reserve(b, (size_t)n);
        if (!b->nomem) {
            vsnprintf(b->p + b->len, (size_t)n + 1, fmt, again);
            b->len += (size_t)n;
        }
    }
    va_end(again);
}

void sb_fmt(sbuf *b, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    sb_vfmt(b, fmt, ap);
    va_end(ap);
}

/* Python measures lines in characters (code points), not bytes: count the
 * UTF-8 bytes that start a character. */
size_t text_width(const char *s, size_t n)
{
    size_t i, w = 0;

    for (i = 0; i < n; i++)
        w += ((unsigned char)s[i] & 0xC0) != 0x80;
    return w;
}

/* ---- Python reprs of text ---------------------------------------------- */

/* The tool's own search of the table (printable_table.h) that
 * cmake/gen_unicode_table.py wrote for the library's reprs; the build
 * puts it into the tool's build folder (src/CMakeLists.txt), so the tool
 * and the library's messages escape the same characters while the tool
 * includes and links nothing of the library but its public API. The table
 * holds the code points above U+00FF that str.isprintable() rejects, as
 * sorted, disjoint, inclusive ranges. */
static int range_order(const void *key, const void *range)
{
    uint32_t c = *(const uint32_t *)key;
    const uint32_t *r = range;

    return c < r[0] ? -1 : c > r[1];
}

/* Latin-1's rule is spelled out (the table starts above it): the C0 and
 * C1 controls, DEL, the no-break space and the soft hyphen are escaped.
 * Python has no code point above U+10FFFF. */
int text_printable(uint32_t c)
{
    size_t n = sizeof nonprintable_ranges / sizeof nonprintable_ranges[0];

    if (c < 0x100)
        return c >= 0x20 && c != 0x7F && (c < 0x80 || c > 0xA0) && c != 0xAD;
    if (c > 0x10FFFF)
        return 0;
    return bsearch(&c, nonprintable_ranges, n, sizeof nonprintable_ranges[0],
                   range_order) == NULL;
}

size_t text_utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned char c = s[0];
    size_t len, i;
    uint32_t v, min;

    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2, v = c & 0x1Fu, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3, v = c & 0x0Fu, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4, v = c & 0x07u, min = 0x10000;
    } else {
        return 0; /* a continuation byte, or a lead byte never used */
    }
    if (len > n)
        return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3Fu);
    }
    /* Overlong forms, surrogates and code points beyond U+10FFFF are not
     * UTF-8 (Python's decoder refuses them too). */
    if (v < min || (v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF)
        return 0;
    *cp = v;
    return len;
}

static void put_utf8(sbuf *b, uint32_t c)
{
    char u[4];

    if (c < 0x80) {
        u[0] = (char)c;
        sb_add(b, u, 1);
    } else if (c < 0x800) {
        u[0] = (char)(0xC0 | (c >> 6));
        u[1] = (char)(0x80 | (c & 0x3F));
        sb_add(b, u, 2);
    } else if (c < 0x10000) {
        u[0] = (char)(0xE0 | (c >> 12));
        u[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        u[2] = (char)(0x80 | (c & 0x3F));
        sb_add(b, u, 3);
    } else {
        u[0] = (char)(0xF0 | (c >> 18));
        u[1] = (char)(0x80 | ((c >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((c >> 6) & 0x3F));
        u[3] = (char)(0x80 | (c & 0x3F));
        sb_add(b, u, 4);
    }
}

/* The quote Python's repr picks: ' unless the text has ' and no ". */
static char py_quote(int has_single, int has_double)
{
    return has_single && !has_double ? '"' : '\'';
}

/* An escape both str and bytes reprs use, or 0 (quote 0: none). */
static const char *py_common_escape(uint32_t c, char quote)
{
    if (c == '\\')
        return "\\\\";
    if (c == '\t')
        return "\\t";
    if (c == '\n')
        return "\\n";
    if (c == '\r')
        return "\\r";
    if (quote != 0 && c == (uint32_t)quote)
        return quote == '\'' ? "\\'" : "\\\"";
    return NULL;
}

/* One code point as repr() writes it inside quote (0: no quotes, so no
 * quote is escaped); backslash: whether a backslash is doubled. */
static void put_escaped(sbuf *b, uint32_t c, char quote, int backslash)
{
    const char *e = c == '\\' && !backslash ? NULL
                                             : py_common_escape(c, quote);

    if (e != NULL)
        sb_str(b, e);
    else if (text_printable(c) || c == '\\')
        put_utf8(b, c);
    else if (c < 0x100)
        sb_fmt(b, "\\x%02" PRIx32, c);
    else if (c < 0x10000)
        sb_fmt(b, "\\u%04" PRIx32, c);
    else /* beyond U+10FFFF too: Python has no such str, show it */
        sb_fmt(b, "\\U%08" PRIx32, c);
}

/* repr() of a Python str given as n code points. */
static void repr_codepoints(sbuf *b, const uint32_t *cp, size_t n)
{
    int has1 = 0, has2 = 0;
    size_t i;
    char q;

    for (i = 0; i < n; i++) {
        has1 |= cp[i] == '\'';
        has2 |= cp[i] == '"';
    }
    q = py_quote(has1, has2);
    sb_chr(b, q);
    for (i = 0; i < n; i++)
        put_escaped(b, cp[i], q, 1);
    sb_chr(b, q);
}

/* Decode UTF-8 into cp, which has room for n code points; a byte that
 * does not start a valid sequence becomes U+FFFD. Returns the count. */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    size_t i = 0, k = 0;

    while (i < n) {
        size_t len = text_utf8_next(s + i, n - i, &cp[k]);

        if (len == 0) {
            cp[k] = 0xFFFD;
            len = 1;
        }
        k++;
        i += len;
    }
    return k;
}

void text_escape(sbuf *b, const char *s, size_t n, int backslash)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;

    while (i < n) {
        uint32_t c;
        size_t len = text_utf8_next(u + i, n - i, &c);

        if (len == 0) {
            /* os.fsdecode()'s surrogateescape: byte 0xXY is U+DCXY,
             * which repr() shows as \udcxy. Unambiguous, unlike \xXY,
             * which U+00XY would also give. */
            c = 0xDC00u | u[i];
            len = 1;
        }
        put_escaped(b, c, 0, backslash);
        i += len;
    }
}

/* repr() of a Python str given as UTF-8 (field names and titles). */
void text_repr_utf8(sbuf *b, const char *s, size_t n)
{
    uint32_t *cp = malloc((n ? n : 1) * sizeof *cp);

    if (cp == NULL) {
        b->nomem = 1;
        return;
    }
    repr_codepoints(b, cp, utf8_decode((const unsigned char *)s, n, cp));
    free(cp);
}

/* repr() of a NumPy str_ element: UCS-4 in host order, trailing NULs
 * dropped as NumPy drops them. */
void text_repr_ucs4(sbuf *b, const unsigned char *p, size_t nchars)
{
    uint32_t *cp = malloc((nchars ? nchars : 1) * sizeof *cp);
    size_t i;

    if (cp == NULL) {
        b->nomem = 1;
        return;
    }
    for (i = 0; i < nchars; i++)
        memcpy(&cp[i], p + 4 * i, 4);
    while (nchars > 0 && cp[nchars - 1] == 0)
        nchars--;
    repr_codepoints(b, cp, nchars);
    free(cp);
}

/* repr() of a bytes_ element, trailing NULs dropped. */
void text_repr_bytes(sbuf *b, const unsigned char *p, size_t n)
{
    int has1 = 0, has2 = 0;
    size_t i;
    char q;

    while (n > 0 && p[n - 1] == 0)
        n--;
    for (i = 0; i < n; i++) {
        has1 |= p[i] == '\'';
        has2 |= p[i] == '"';
    }
    q = py_quote(has1, has2);
    sb_chr(b, 'b');
    sb_chr(b, q);
    for (i = 0; i < n; i++) {
        const char *e = py_common_escape(p[i], q);

        if (e != NULL)
            sb_str(b, e);
        else if (p[i] >= 0x20 && p[i] < 0x7F)
            sb_chr(b, (char)p[i]);
        else
            sb_fmt(b, "\\x%02x", p[i]);
    }
    sb_chr(b, q);
}

/* str() of an np.void: every byte as an upper-case escape, as NumPy does. */
void text_repr_void(sbuf *b, const unsigned char *p, size_t n)
{
    size_t i;

    sb_str(b, "b'");
    for (i = 0; i < n; i++)
        sb_fmt(b, "\\x%02X", p[i]);
    sb_chr(b, '\'');
}
