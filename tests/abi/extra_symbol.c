/*
 * extra_symbol.c - linked only into a deliberately broken copy of the
 * library, to show that the ABI check fails when an exported function is
 * not documented in the public header.
 */
#include "npyio.h"

NPYIO_API int npyio_undocumented_extra(void);

int npyio_undocumented_extra(void)
{
    return 42;
}
