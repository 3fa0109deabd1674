/*
 * print.c - `npyio print` (see print.h).
 */
#include "print.h"

int cli_print(npyio_reader *reader, const char *name, int64_t max, FILE *out)
{
    (void)reader;
    (void)max;
    (void)out;
    fprintf(stderr, "npyio: %s: print is not implemented yet\n", name);
    return 1;
}
