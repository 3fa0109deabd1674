/*
 * table.c - copying callback tables supplied by callers. Every public table
 * (allocator, stream operations) starts with its own size so it can grow in
 * later versions; this is the one place that reads such a table, so the
 * rules for shorter and longer tables are the same everywhere.
 */
#include "error.h"
#include "table.h"

#include <string.h>

#define TABLE_SIZE_MAX ((size_t)4096)

npyio_status npyio__copy_table(void *dst, size_t dst_size, const void *src,
                               size_t min_size, const char *what)
{
    size_t src_size;
    const unsigned char *extra;
    size_t i;

    memcpy(&src_size, src, sizeof src_size);
    if (src_size < min_size)
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: size is %zu, the table needs at least %zu "
                           "(set size = sizeof the table)",
                           what, src_size, min_size);
    /* An uninitialised size would have us read far past the caller's
     * table; no table will ever grow this large. */
    if (src_size > TABLE_SIZE_MAX)
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: size is %zu, which no version's table has "
                           "(set size = sizeof the table)", what, src_size);
    /* A caller built against a newer header may pass a longer table; what
     * we would ignore must be empty, or the caller expects behaviour this
     * version does not have. Tables hold only pointer-sized members, so
     * there is no padding whose bytes could be garbage. */
    extra = (const unsigned char *)src;
    for (i = dst_size; i < src_size; i++)
        if (extra[i] != 0)
            return npyio__fail(NPYIO_E_UNSUPPORTED,
                               "%s: the table is %zu bytes and sets members "
                               "beyond the %zu bytes libnpyio %s knows",
                               what, src_size, dst_size,
                               NPYIO_VERSION_STRING);
    memset(dst, 0, dst_size);
    memcpy(dst, src, src_size < dst_size ? src_size : dst_size);
    *(size_t *)dst = dst_size;
    return NPYIO_OK;
}
