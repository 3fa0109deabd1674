/*
 * options.h - the npyio_options handle, private side (options.c): the allocator
 * and limits a handle copies when it is made.
 */
#ifndef NPYIO_OPTIONS_H
#define NPYIO_OPTIONS_H

#include "alloc.h"

/* Fill `mem` from options (NULL: defaults): its allocator and its
 * NPYIO_LIMIT_ALLOC_BYTES. Cannot fail. */
void npyio__mem_init(npyio__mem *mem, const npyio_options *options);

/*
 * npyio_options_new() with the handle allocated through mem instead of
 * malloc(): for options the library makes for a handle it opens itself,
 * which must carry the opening handle's allocator and not bypass it.
 * Released with npyio_options_free(), as any other.
 */
npyio_status npyio__options_new_in(const npyio__mem *mem,
                                   npyio_options **out);

/* Options with what `mem` was made from: its allocator (the handle
 * allocated through it), allocation limit and fault hook; the other
 * limits the defaults. For work a handle hands to another public call. */
npyio_status npyio__options_from_mem(const npyio__mem *mem,
                                     npyio_options **out);

/* A copy of `from` (NULL: the defaults) allocated through mem: options
 * a handle keeps for work it does after it was opened. */
npyio_status npyio__options_copy_in(const npyio__mem *mem,
                                    const npyio_options *from,
                                    npyio_options **out);

/* The tests' OS fault hook options carry (internal.h), or NULL: for OS
 * calls made on the caller's behalf before a handle holds a copy. */
const npyio__faults *npyio__options_faults(const npyio_options *options);

/* Make options carry a fault hook for the tests (NULL fn: none). Not
 * exported; production code never sets one. */
void npyio__options_set_faults(npyio_options *options,
                               int (*fn)(void *ctx, const char *call),
                               void *ctx);

/* Make options choose the inflater of whole member reads (internal.h,
 * NPYIO__INFLATE_*; 0: by size) and fail libdeflate's decompressor, for
 * the tests. Not exported. */
void npyio__options_set_inflate(npyio_options *options, int inflate,
                                bool no_decompressor);

/* Make libdeflate's compressor fail (whole members written, npz_entry.c),
 * for the tests. Not exported. */
void npyio__options_set_deflate(npyio_options *options, bool no_compressor);

/* Fetch a limit without the public call's argument checks; `options` may be
 * NULL (defaults). `which` must be a known limit. */
int64_t npyio__limit(const npyio_options *options, npyio_limit which);

#endif /* NPYIO_OPTIONS_H */
