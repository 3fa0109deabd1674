/*
 * printable.h - Python's str.isprintable() of one code point: what
 * repr() shows as itself rather than as an escape. One home for the
 * generated table (unicode_table.h) that both the library (literal.c's
 * repr of field names) and the tool (reprs of strings, escaped names)
 * need, so that the two always agree and the table is searched by one
 * function. Depends on nothing but the C library: the tool, built on the
 * public API only, links this module alone (the npyio_printable archive)
 * and includes this header, never the table.
 */
#ifndef NPYIO_PRINTABLE_H
#define NPYIO_PRINTABLE_H

#include <stdbool.h>
#include <stdint.h>

/* Whether chr(code_point).isprintable() is True in the Python of
 * cmake/gen_unicode_table.py (3.11: Unicode 14). False above U+10FFFF,
 * where Python has no characters. Hidden in the shared library, as every
 * npyio__ name is. */
bool npyio__printable(uint32_t code_point);

#endif /* NPYIO_PRINTABLE_H */
