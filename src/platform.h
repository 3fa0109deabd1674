/*
 * platform.h - the one place for code that differs between operating
 * systems. Everything else in libnpyio is plain C11 and POSIX; what depends
 * on a particular kernel or C library (huge-page advice, aligned allocation)
 * is declared here and implemented in platform.c.
 */
#ifndef NPYIO_PLATFORM_H
#define NPYIO_PLATFORM_H

#include <stddef.h>

/* The default allocator: aligned blocks from the C library, with huge pages
 * advised for large ones. Signatures match npyio_allocator. */
void *npyio__sys_alloc(void *user, size_t size, size_t alignment);
void npyio__sys_free(void *user, void *ptr, size_t size);

#endif /* NPYIO_PLATFORM_H */
