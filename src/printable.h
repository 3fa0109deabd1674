/*
 * printable.h - Python's str.isprintable() of one code point: what
 * repr() shows as itself rather than as an escape, for the library's
 * reprs (literal.c's field names). The generated table (unicode_table.h)
 * is included by printable.c only. The npyio tool, built on the public API alone,
 * searches the same table on its own (src/cli/text.c): the build copies
 * the file into the tool's build folder, so the two always agree.
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
