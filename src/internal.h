/*
 * internal.h - what every module of libnpyio shares and no module owns:
 * the public types (npyio.h), attributes, handle magics, the deepest
 * nesting, checked size arithmetic. Errors, allocation, options and
 * callback tables have their own headers (error.h, alloc.h, options.h,
 * table.h). Nothing here is exported; the public interface is
 * include/npyio.h.
 */
#ifndef NPYIO_INTERNAL_H
#define NPYIO_INTERNAL_H

#include "npyio.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* NPYIO_PRINTF_ARCHETYPE: printf, or gnu_printf where the build names
 * it (mingw-w64, whose C99 printf CMake asks for: GCC takes plain printf
 * there for the Microsoft runtime's, which has no %zu). */
#ifndef NPYIO_PRINTF_ARCHETYPE
#define NPYIO_PRINTF_ARCHETYPE printf
#endif
#if defined(__GNUC__)
#define NPYIO__PRINTF(fmt, args) \
    __attribute__((format(NPYIO_PRINTF_ARCHETYPE, fmt, args)))
#define NPYIO__WARN_UNUSED __attribute__((warn_unused_result))
#else
#define NPYIO__PRINTF(fmt, args)
#define NPYIO__WARN_UNUSED
#endif

/* ---- handles ----------------------------------------------------------- */

/*
 * Every handle starts with a 32-bit magic naming its kind, checked at every
 * entry point: a pointer to the wrong kind of handle (a common binding
 * mistake) is reported, not trusted. Freeing a handle clears its magic, so a
 * use after free is often caught too, though that cannot be guaranteed.
 */
#define NPYIO__MAGIC_OPTIONS 0x4f50544eu /* "OPTN" */
#define NPYIO__MAGIC_DEAD 0xdeaddeadu

/* Blocks of at least this many bytes are asked for 2 MiB aligned, so that
 * the kernel can back them with transparent huge pages. New memory is what
 * a load pays for: on the 2-vCPU virtual machines the project is measured
 * on, a 4 KiB page fault costs about 12 us, so read() into fresh 4 KiB
 * pages runs at 0.2-0.4 GB/s and into huge pages at 5-7 GB/s. NumPy asks
 * for huge pages from 4 MiB on; so do we. */
#define NPYIO__HUGE_THRESHOLD ((size_t)4 << 20)
#define NPYIO__HUGE_ALIGN ((size_t)2 << 20)
/* Alignment of blocks: small ones (names, dtypes, headers: allocated and
 * freed at a high rate) get what malloc() gives, enough for any scalar;
 * from NPYIO__MEDIUM_THRESHOLD on, a cache line, for data buffers. */
#define NPYIO__SMALL_ALIGN ((size_t)16)
#define NPYIO__BLOCK_ALIGN ((size_t)64)
#define NPYIO__MEDIUM_THRESHOLD ((size_t)64 << 10)

/*
 * Fault injection, for the tests only: a hook an npyio_options carries
 * (npyio__options_set_faults, unexported) into every handle made with it
 * and every OS call made for them (platform.c asks it first, by the
 * call's name: "read", "write", "fsync", "rename", ...). No hook in
 * production: fn is NULL.
 */
typedef struct npyio__faults {
    int (*fn)(void *ctx, const char *call);
    void *ctx;
    /* Which inflater whole member reads take (npz_member.c): 0 as chosen
     * by the member's size, NPYIO__INFLATE_ZLIB always zlib's streaming,
     * NPYIO__INFLATE_WHOLE libdeflate whatever the size (within
     * NPYIO_LIMIT_ALLOC_BYTES); and libdeflate_alloc_decompressor() made
     * to give NULL; and libdeflate_alloc_compressor() made to give NULL
     * (npz_entry.c). Apart from fn: the call-counting hooks must not
     * change which inflater runs. */
    int inflate;
    bool no_decompressor, no_compressor;
} npyio__faults;

#define NPYIO__INFLATE_ZLIB 1
#define NPYIO__INFLATE_WHOLE 2

/* The deepest nesting of dtypes (records in records, subarrays of
 * subarrays) the library builds; code that walks dtypes recurses at most
 * this deep. NPYIO_LIMIT_DEPTH cannot be set above it. */
#define NPYIO__MAX_DEPTH 256

/* Checked size arithmetic: false on overflow (and *out is left unset). */
static inline bool npyio__mul_size(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a)
        return false;
    *out = a * b;
    return true;
}

static inline bool npyio__add_size(size_t a, size_t b, size_t *out)
{
    if (b > SIZE_MAX - a)
        return false;
    *out = a + b;
    return true;
}

/* Decimal digits of v into out (at least 20 bytes, no NUL); returns the
 * count. Used instead of snprintf on hot paths (headers are written and
 * read millions of times per second). */
static inline size_t npyio__format_u64(uint64_t v, char *out)
{
    char tmp[20];
    size_t n = 0, i;

    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    for (i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

#endif /* NPYIO_INTERNAL_H */
