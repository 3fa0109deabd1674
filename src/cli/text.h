/*
 * text.h - text for the `npyio` tool: a growable string buffer (sbuf),
 * Python's repr() of str and bytes text (field names, str_ and bytes_
 * elements, np.void), and the escaping of file names and messages.
 */
#ifndef NPYIO_CLI_TEXT_H
#define NPYIO_CLI_TEXT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "os.h"

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
/* Append vprintf-formatted text. */
#if defined(__GNUC__)
__attribute__((format(CLI_PRINTF_ARCHETYPE, 2, 0)))
#endif
void sb_vfmt(sbuf *b, const char *fmt, va_list ap);
/* Append printf-formatted text. */
#if defined(__GNUC__)
__attribute__((format(CLI_PRINTF_ARCHETYPE, 2, 3)))
#endif
void sb_fmt(sbuf *b, const char *fmt, ...);

/* The width of n bytes of UTF-8 in characters, as Python counts it. */
size_t text_width(const char *s, size_t n);

/* Python's str.isprintable() of the one-character string chr(c), as the
 * Python of cmake/gen_unicode_table.py answers it (3.11: Unicode 14). */
int text_printable(uint32_t c);

/* The length (1-4) of the UTF-8 sequence at s (n > 0 bytes left), with
 * its code point in *cp; 0 if s[0] starts none: a stray continuation
 * byte, an unused lead byte, a sequence cut short, an overlong form, a
 * surrogate or beyond U+10FFFF (as Python's strict decoder says). */
size_t text_utf8_next(const unsigned char *s, size_t n, uint32_t *cp);

/* Append n bytes of text as Python's repr() writes a str, without the
 * quotes (so no quote is escaped): \t \n \r, and \xhh \uhhhh
 * \Uhhhhhhhh for what str.isprintable() rejects. Bytes that are not
 * UTF-8 are taken as os.fsdecode() takes them, as lone surrogates, shown
 * \udc80 .. \udcff. With backslash, a backslash is doubled (file names:
 * then each escape reads back one way); without it, it stays single
 * (messages, whose backslashes may already be escapes). */
void text_escape(sbuf *b, const char *s, size_t n, int backslash);

/* repr() of a Python str given as n bytes of UTF-8. */
void text_repr_utf8(sbuf *b, const char *s, size_t n);
/* repr() of a NumPy str_ element of nchars UCS-4 characters in host order. */
void text_repr_ucs4(sbuf *b, const unsigned char *p, size_t nchars);
/* repr() of a NumPy bytes_ element of n bytes. */
void text_repr_bytes(sbuf *b, const unsigned char *p, size_t n);
/* str() of an np.void of n bytes. */
void text_repr_void(sbuf *b, const unsigned char *p, size_t n);

#endif
