/*
 * version.c - the version of the running library. The numbers come from the
 * public header, the single place where the version is written.
 */
#include "internal.h"

const char *npyio_version_string(void)
{
    return NPYIO_VERSION_STRING;
}

uint32_t npyio_version_number(void)
{
    return NPYIO_VERSION_NUMBER;
}
