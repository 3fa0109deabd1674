/*
 * print.h - `npyio print`: an array's values for a person, in the spirit
 * of NumPy's repr(). Built on the public API only.
 */
#ifndef NPYIO_CLI_PRINT_H
#define NPYIO_CLI_PRINT_H

#include <stdint.h>
#include <stdio.h>

#include "npyio.h"

/*
 * Print the values of the array behind reader (opened, data not yet read)
 * to out, as NumPy's repr() would: array([...], dtype=...), records as
 * tuples. When the array has more than max elements, only the first and
 * last three along each axis are shown, with "..." between (NumPy's
 * threshold and edgeitems). Memory stays bounded whatever the array's
 * size: the data streams through in chunks.
 *
 * Returns 0, or 1 after writing "npyio: NAME: problem" to stderr.
 */
int cli_print(npyio_reader *reader, const char *name, int64_t max, FILE *out);

#endif
