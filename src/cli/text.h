/*
 * text.h - text for `npyio print`: a growable string buffer (sbuf) and
 * Python's repr() of str and bytes text (field names, str_ and bytes_
 * elements, np.void).
 */
#ifndef NPYIO_CLI_TEXT_H
#define NPYIO_CLI_TEXT_H

#include <stddef.h>

/* A growable string. An allocation failure sets nomem and turns every
 * later call into a no-op, so callers check once at the end. */
typedef struct sbuf {
    char *p;
    size_t len, cap;
    int nomem;
} sbuf;

/* Append n bytes of s. */
void sb_add(sbuf *b, const char *s, size_t n);
/* Append the NUL-terminated s. */
void sb_str(sbuf *b, const char *s);
/* Append n copies of c. */
void sb_fill(sbuf *b, char c, size_t n);
/* Append the character c. */
void sb_chr(sbuf *b, char c);
/* Append printf-formatted text. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void sb_fmt(sbuf *b, const char *fmt, ...);

/* The width of n bytes of UTF-8 in characters, as Python counts it. */
size_t text_width(const char *s, size_t n);

/* repr() of a Python str given as n bytes of UTF-8. */
void text_repr_utf8(sbuf *b, const char *s, size_t n);
/* repr() of a NumPy str_ element of nchars UCS-4 characters in host order. */
void text_repr_ucs4(sbuf *b, const unsigned char *p, size_t nchars);
/* repr() of a NumPy bytes_ element of n bytes. */
void text_repr_bytes(sbuf *b, const unsigned char *p, size_t n);
/* str() of an np.void of n bytes. */
void text_repr_void(sbuf *b, const unsigned char *p, size_t n);

#endif
