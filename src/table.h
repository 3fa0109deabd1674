/*
 * table.h - callback tables that start with their size (table.c).
 */
#ifndef NPYIO_TABLE_H
#define NPYIO_TABLE_H

#include "internal.h"

/*
 * Copy a caller's callback table that starts with its size: the members
 * within both sizes are copied, the rest of `dst` is zeroed. Members beyond
 * what this version knows must be zero, else NPYIO_E_UNSUPPORTED; a table
 * smaller than `min_size` is NPYIO_E_INVALID_ARG. `what` names the table in
 * messages ("npyio_options_set_allocator: allocator").
 */
npyio_status npyio__copy_table(void *dst, size_t dst_size, const void *src,
                               size_t min_size, const char *what);

#endif /* NPYIO_TABLE_H */
