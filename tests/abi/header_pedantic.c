/*
 * header_pedantic.c - the public header must compile on its own as strict
 * C99 and warn about nothing (checked with -std=c99 -pedantic -Werror by
 * ctest), so that any C program, old or strict, can include it.
 */
#include "npyio.h"

int npyio_header_compiles(void);

int npyio_header_compiles(void)
{
    return npyio_version_number() > 0;
}
