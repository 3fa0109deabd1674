/*
 * alloc.c - the one allocation path of the library.
 *
 * Every block starts with a hidden 64-byte prefix that records the allocator
 * that made it (callbacks and user pointer) and its sizes. That is what lets
 * npyio_free() release any block the library handed out, through the right
 * allocator, even after the npyio_options that named the allocator is gone;
 * and it lets sized allocators be told the size on free. For alignments up
 * to 64 the caller's pointer is the byte after the prefix, so it keeps the
 * alignment the allocator was asked for (the prefix is 64 bytes, a
 * multiple of each). Large blocks are promised 2 MiB alignment (huge
 * pages): their caller's pointer is 2 MiB into a block 2 MiB larger, the
 * prefix just before it. The skipped 2 MiB is address space only: the one
 * page holding the prefix is all of it that is ever touched (huge pages are
 * advised for the caller's part alone).
 */
#include "alloc.h"
#include "error.h"
#include "platform.h"

#include <string.h>

#define BLOCK_MAGIC UINT64_C(0x4e505949424c4b31) /* "NPYIBLK1" */
#define BLOCK_FREED UINT64_C(0x4e5059494652454b) /* "NPYIFREK" */

typedef struct block_prefix {
    uint64_t magic;
    void *(*alloc)(void *user, size_t size, size_t alignment);
    void *(*realloc)(void *user, void *ptr, size_t old_size, size_t new_size,
                     size_t alignment);
    void (*free)(void *user, void *ptr, size_t size);
    void *user;
    void *base;   /* what the allocator returned */
    size_t total; /* bytes obtained from the allocator, prefix included */
    size_t size;  /* bytes the library asked for */
} block_prefix;

#define PREFIX_SIZE NPYIO__BLOCK_ALIGN
_Static_assert(sizeof(block_prefix) <= PREFIX_SIZE,
               "the block prefix must fit in front of an aligned block");

static block_prefix *prefix_of(const void *block)
{
    return (block_prefix *)((unsigned char *)block - PREFIX_SIZE);
}

static size_t alignment_for(size_t total)
{
    return total >= NPYIO__HUGE_THRESHOLD    ? NPYIO__HUGE_ALIGN
           : total >= NPYIO__MEDIUM_THRESHOLD ? NPYIO__BLOCK_ALIGN
                                              : NPYIO__SMALL_ALIGN;
}

const npyio_allocator npyio__default_allocator = {
    sizeof(npyio_allocator),
    npyio__sys_alloc,
    NULL, /* realloc of posix_memalign blocks would lose their alignment */
    npyio__sys_free,
};

void npyio__mem_default(npyio__mem *mem)
{
    mem->ops = npyio__default_allocator;
    mem->user = NULL;
    mem->max_alloc = INT64_MAX; /* NPYIO_LIMIT_ALLOC_BYTES' default */
    memset(&mem->faults, 0, sizeof mem->faults);
}

void npyio__mem_like(const void *block, npyio__mem *mem)
{
    const block_prefix *p;

    npyio__mem_default(mem);
    if (block == NULL)
        return;
    p = prefix_of(block);
    if (p->magic != BLOCK_MAGIC) /* not live: keep the default */
        return;
    mem->ops.alloc = p->alloc;
    mem->ops.realloc = p->realloc;
    mem->ops.free = p->free;
    mem->user = p->user;
}

/* Where the caller's pointer lies in a block of `alignment`: right after
 * the prefix, or for larger alignments one whole alignment in. */
static size_t offset_for(size_t alignment)
{
    return alignment > PREFIX_SIZE ? alignment : PREFIX_SIZE;
}

/* Size checks shared by alloc and realloc: representability, then limit. */
static npyio_status check_request(const npyio__mem *mem, size_t size,
                                  const char *what, size_t *total)
{
    /* (Any size this allows has room for the largest offset.) */
    if (size > SIZE_MAX - NPYIO__HUGE_ALIGN)
        return npyio__fail(NPYIO_E_OVERFLOW,
                           "%s: %zu bytes do not fit this host's address "
                           "space", what, size);
    if ((uint64_t)size > mem->max_alloc)
        return npyio__fail(NPYIO_E_LIMIT,
                           "%s: %zu bytes needed, above the allocation limit "
                           "of %llu bytes (NPYIO_LIMIT_ALLOC_BYTES)",
                           what, size, (unsigned long long)mem->max_alloc);
    *total = size + offset_for(alignment_for(size + PREFIX_SIZE));
    return NPYIO_OK;
}

static void *init_block(void *base, const npyio__mem *mem, size_t total,
                        size_t size, size_t offset)
{
    unsigned char *block = (unsigned char *)base + offset;
    block_prefix *p = prefix_of(block);

    p->magic = BLOCK_MAGIC;
    p->alloc = mem->ops.alloc;
    p->realloc = mem->ops.realloc;
    p->free = mem->ops.free;
    p->user = mem->user;
    p->base = base;
    p->total = total;
    p->size = size;
    return block;
}

/* The prefix and the data behind it rely on the alignment the allocator
 * was asked for (npyio_allocator promises it); a block without it is a
 * broken allocator, refused rather than used. */
static bool aligned_to(const void *base, size_t alignment)
{
    return ((uintptr_t)base & (alignment - 1)) == 0;
}

static npyio_status misaligned(const char *what, size_t alignment)
{
    return npyio__fail(NPYIO_E_INVALID_ARG, "%s: the caller's allocator "
                       "returned a block that is not aligned to %zu bytes, "
                       "as it was asked (see npyio_allocator)", what,
                       alignment);
}

npyio_status npyio__alloc(const npyio__mem *mem, size_t size,
                          const char *what, void **out)
{
    size_t total = 0, alignment;
    void *base;
    npyio_status st;

    *out = NULL;
    st = check_request(mem, size, what, &total);
    if (st != NPYIO_OK)
        return st;
    alignment = alignment_for(size + PREFIX_SIZE);
    base = mem->ops.alloc(mem->user, total, alignment);
    if (base == NULL)
        return npyio__fail(NPYIO_E_NOMEM, "%s: allocating %zu bytes failed",
                           what, size);
    if (!aligned_to(base, alignment)) {
        mem->ops.free(mem->user, base, total);
        return misaligned(what, alignment);
    }
    *out = init_block(base, mem, total, size, offset_for(alignment));
    if (alignment >= NPYIO__HUGE_ALIGN)
        npyio__advise_huge_pages(*out, size);
    return NPYIO_OK;
}

npyio_status npyio__alloc_array(const npyio__mem *mem, size_t count,
                                size_t item_size, const char *what,
                                void **out)
{
    size_t size;

    *out = NULL;
    if (!npyio__mul_size(count, item_size, &size))
        return npyio__fail(NPYIO_E_OVERFLOW,
                           "%s: %zu items of %zu bytes do not fit this "
                           "host's address space", what, count, item_size);
    return npyio__alloc(mem, size, what, out);
}

npyio_status npyio__alloc_zero(const npyio__mem *mem, size_t size,
                               const char *what, void **out)
{
    npyio_status st = npyio__alloc(mem, size, what, out);

    if (st == NPYIO_OK)
        memset(*out, 0, size);
    return st;
}

/* Resize in place through the allocator's own realloc, when it has one and
 * the block stays in an alignment class whose data follows the prefix
 * (a realloc keeps the data at the same offset from the base). */
static void *realloc_base(block_prefix *p, size_t size, size_t total)
{
    size_t alignment = alignment_for(size + PREFIX_SIZE);

    if (p->realloc == NULL || offset_for(alignment) != PREFIX_SIZE ||
        alignment != alignment_for(p->size + PREFIX_SIZE))
        return NULL;
    return p->realloc(p->user, p->base, p->total, total, alignment);
}

npyio_status npyio__realloc(const npyio__mem *mem, void **block, size_t size,
                            const char *what)
{
    block_prefix *old;
    npyio__mem same;
    size_t total = 0;
    void *base;
    void *fresh;
    npyio_status st;

    if (*block == NULL)
        return npyio__alloc(mem, size, what, block);
    st = check_request(mem, size, what, &total);
    if (st != NPYIO_OK)
        return st;
    old = prefix_of(*block);
    base = realloc_base(old, size, total);
    if (base != NULL) {
        block_prefix *p = base;

        p->base = base;
        p->total = total;
        p->size = size;
        *block = (unsigned char *)base + PREFIX_SIZE;
        return NPYIO_OK;
    }
    /* Allocate, copy, free, with the allocator that made the block. */
    same = *mem;
    same.ops.alloc = old->alloc;
    same.ops.realloc = old->realloc;
    same.ops.free = old->free;
    same.user = old->user;
    st = npyio__alloc(&same, size, what, &fresh);
    if (st != NPYIO_OK)
        return st;
    memcpy(fresh, *block, size < old->size ? size : old->size);
    npyio__free(*block);
    *block = fresh;
    return NPYIO_OK;
}

size_t npyio__block_size(const void *block)
{
    return block == NULL ? 0 : prefix_of(block)->size;
}

void npyio__free(void *block)
{
    block_prefix *p;

    if (block == NULL)
        return;
    p = prefix_of(block);
    /* A pointer that is not a live block of ours is left alone rather than
     * handed to an allocator that would corrupt its heap. */
    if (p->magic != BLOCK_MAGIC)
        return;
    p->magic = BLOCK_FREED;
    p->free(p->user, p->base, p->total);
}

void npyio_free(void *ptr)
{
    npyio__free(ptr);
}

void *npyio__zalloc(void *mem, unsigned items, unsigned size)
{
    void *block = NULL;

    if (npyio__alloc_array(mem, items, size, "zlib state", &block) !=
        NPYIO_OK)
        return NULL;
    return block;
}

void npyio__zfree(void *mem, void *block)
{
    (void)mem;
    npyio__free(block);
}
