/*
 * alloc.h - the one allocation path (alloc.c): blocks from the caller's
 * allocator, with size and limit checks, released through the allocator
 * that made them.
 */
#ifndef NPYIO_ALLOC_H
#define NPYIO_ALLOC_H

#include "internal.h"

/*
 * An allocation context: the allocator and the limit on single allocations,
 * copied out of an npyio_options when a handle is made. Every allocation of
 * the library goes through one of these.
 */
typedef struct npyio__mem {
    npyio_allocator ops; /* all members filled in; realloc may be NULL */
    void *user;
    uint64_t max_alloc; /* NPYIO_LIMIT_ALLOC_BYTES */
    npyio__faults faults; /* the tests' OS faults (internal.h); none: NULL */
} npyio__mem;


/*
 * Which allocator a call uses: that of the options it is given; without
 * options, that of the dtype or header it is given (npyio__mem_like); the
 * default allocator only where no handle exists, each such place saying
 * why in a comment.
 */

/* The default allocator: aligned blocks from the C library. */
extern const npyio_allocator npyio__default_allocator;

/* Fill `mem` with the default allocator and no allocation limit (what
 * npyio_options_new() starts with). Cannot fail. */
void npyio__mem_default(npyio__mem *mem);

/* Fill `mem` with the allocator that made `block` (a live block from
 * npyio__alloc, or NULL for the default allocator) and the default
 * limits: what a call given a handle but no options allocates with.
 * Cannot fail. */
void npyio__mem_like(const void *block, npyio__mem *mem);

/*
 * Allocate `size` bytes (0 is allowed and gives a valid block). Fails with
 * NPYIO_E_LIMIT above the allocation limit, NPYIO_E_OVERFLOW if the size
 * cannot be represented, NPYIO_E_NOMEM if the allocator fails; `what` names
 * the purpose in the message ("header text"). The block is released with
 * npyio__free() (the same as the public npyio_free()).
 */
npyio_status npyio__alloc(const npyio__mem *mem, size_t size,
                          const char *what, void **out) NPYIO__WARN_UNUSED;

/* As npyio__alloc, for `count` items of `item_size` bytes, with the product
 * checked for overflow first. */
npyio_status npyio__alloc_array(const npyio__mem *mem, size_t count,
                                size_t item_size, const char *what,
                                void **out) NPYIO__WARN_UNUSED;

/* As npyio__alloc, zero-filled. */
npyio_status npyio__alloc_zero(const npyio__mem *mem, size_t size,
                               const char *what, void **out)
    NPYIO__WARN_UNUSED;

/*
 * Resize a block from npyio__alloc to `size` bytes, keeping its contents.
 * On failure `*block` is left as it was (still valid, still owned by the
 * caller). A NULL `*block` allocates.
 */
npyio_status npyio__realloc(const npyio__mem *mem, void **block, size_t size,
                            const char *what) NPYIO__WARN_UNUSED;

/* The usable size of a block from npyio__alloc (what was asked for). */
size_t npyio__block_size(const void *block);

/* Release a block from npyio__alloc; NULL is ignored. */
void npyio__free(void *block);

/* zlib's zalloc and zfree over an npyio__mem (the opaque pointer), so that
 * zlib's allocations go through the caller's allocator too. The types are
 * zlib's (voidpf, uInt) spelled without its header. */
void *npyio__zalloc(void *mem, unsigned items, unsigned size);
void npyio__zfree(void *mem, void *block);

#endif /* NPYIO_ALLOC_H */
