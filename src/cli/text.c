/*
 * text.c - the growable string and Python's reprs of text (see text.h).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void sb_fmt(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->nomem = 1;
        return;
    }
    sb_reserve(b, (size_t)n);
    if (b->nomem)
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
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

/* Python's str.isprintable(), approximated without the Unicode database:
 * controls, surrogates, private use, non-characters and the usual format
 * and separator characters are escaped; unassigned code points are not
 * known here and print as themselves. */
static int py_printable(uint32_t c)
{
    if (c < 0x20 || (c >= 0x7F && c <= 0xA0) || c == 0xAD)
        return 0;
    if ((c >= 0xD800 && c <= 0xDFFF) || (c >= 0xE000 && c <= 0xF8FF) ||
        c >= 0xF0000 || (c & 0xFFFE) == 0xFFFE)
        return 0;
    if (c == 0x1680 || (c >= 0x2000 && c <= 0x200F) ||
        (c >= 0x2028 && c <= 0x202F) || (c >= 0x205F && c <= 0x2064) ||
        c == 0x3000 || c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFB))
        return 0;
    return 1;
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

/* An escape both str and bytes reprs use, or 0. */
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
    if (c == (uint32_t)quote)
        return quote == '\'' ? "\\'" : "\\\"";
    return NULL;
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
    for (i = 0; i < n; i++) {
        uint32_t c = cp[i];
        const char *e = py_common_escape(c, q);

        if (e != NULL)
            sb_str(b, e);
        else if (py_printable(c))
            put_utf8(b, c);
        else if (c < 0x100)
            sb_fmt(b, "\\x%02" PRIx32, c);
        else if (c < 0x10000)
            sb_fmt(b, "\\u%04" PRIx32, c);
        else /* beyond U+10FFFF too: Python has no such str, show it */
            sb_fmt(b, "\\U%08" PRIx32, c);
    }
    sb_chr(b, q);
}

/* Decode UTF-8 leniently (a bad byte becomes U+FFFD) into cp, which has
 * room for n code points; returns how many were written. */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    size_t i = 0, k = 0;

    while (i < n) {
        unsigned char c = s[i];
        size_t len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 :
                     c >= 0xC0 ? 2 : 0;
        uint32_t v = len == 1 ? c : len == 2 ? (c & 0x1Fu) :
                     len == 3 ? (c & 0x0Fu) : (c & 0x07u);
        size_t j;

        if (len == 0 || len > n - i) {
            cp[k++] = 0xFFFD;
            i++;
            continue;
        }
        for (j = 1; j < len && (s[i + j] & 0xC0) == 0x80; j++)
            v = (v << 6) | (s[i + j] & 0x3Fu);
        if (j < len) {
            cp[k++] = 0xFFFD;
            i++;
            continue;
        }
        cp[k++] = v;
        i += len;
    }
    return k;
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
