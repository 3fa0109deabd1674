/*
 * internal.h - helpers shared by every module of libnpyio: setting the
 * thread-local error message, checking handles, and allocating through the
 * caller's allocator with size and limit checks. Nothing here is exported;
 * the public interface is include/npyio.h.
 */
#ifndef NPYIO_INTERNAL_H
#define NPYIO_INTERNAL_H

#include "npyio.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define NPYIO__PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define NPYIO__WARN_UNUSED __attribute__((warn_unused_result))
#else
#define NPYIO__PRINTF(fmt, args)
#define NPYIO__WARN_UNUSED
#endif

/* ---- errors (error.c) -------------------------------------------------- */

/* Size of the thread-local message buffer, terminator included. */
#define NPYIO__MESSAGE_CAP 1024

/*
 * Record a failure for the calling thread and return `status`, so a failing
 * path reads `return npyio__fail(NPYIO_E_FORMAT, "header byte %zu: ...", i)`.
 * Messages are "<where>: <what>"; the text is cut to fit, never overrun.
 */
npyio_status npyio__fail(npyio_status status, const char *fmt, ...)
    NPYIO__PRINTF(2, 3);

/* Prefix the thread's current message with `context` ("<context>: ..."),
 * dropping a leading public function's name (the caller's goes first, by
 * npyio__as_called), keeping `status`; NPYIO_OK passes through untouched. */
npyio_status npyio__with_context(npyio_status status, const char *context);

/* At the return of a public function: the message starts with the name of
 * the function the caller called ("npyio_load: ..."), not with one used
 * inside it (a leading "npyio_<other>: " is replaced), nor with none.
 * Returns status. */
npyio_status npyio__as_called(npyio_status status, const char *function);

/*
 * Quote untrusted text for a message: printable ASCII as is, every other
 * byte as \xNN, cut to fit with "..." (messages stay valid UTF-8 whatever
 * the input holds). Returns buf.
 */
const char *npyio__show(const void *text, size_t len, char *buf, size_t cap);

/* Length of the UTF-8 sequence at s[0..avail) if it is one that Python's
 * strict decoder accepts (no overlong forms, surrogates or values beyond
 * U+10FFFF), else 0. avail > 0. */
size_t npyio__utf8_sequence(const unsigned char *s, size_t avail);

/* The offset of the first byte of s[0..len) that is NUL or not part of
 * strict UTF-8 (npyio__utf8_sequence), or len if there is none. */
size_t npyio__utf8_invalid_at(const unsigned char *s, size_t len);

/* The message saved around an internal step that may fail and be
 * recovered from, so that a call that succeeds leaves the thread's last
 * failure's message as it was . */
typedef struct npyio__saved_message {
    char text[NPYIO__MESSAGE_CAP];
} npyio__saved_message;
void npyio__message_save(npyio__saved_message *saved);
void npyio__message_restore(const npyio__saved_message *saved);

/* A reader or writer that failed once its bytes began to move stays
 * failed: its first error is kept, and every later call repeats it. */
typedef struct npyio__sticky {
    npyio_status failed; /* NPYIO_OK until the first failure */
    char first_error[NPYIO__MESSAGE_CAP];
} npyio__sticky;
/* Remember st (with the thread's message) if it is the first failure;
 * returns st. */
npyio_status npyio__sticky_fail(npyio__sticky *s, npyio_status st);
/* NPYIO_E_STATE: "<where>: the <handle> failed earlier (<status>:
 * <first message>)". */
npyio_status npyio__sticky_repeat(const npyio__sticky *s, const char *where,
                                  const char *handle);

/* ---- handles ----------------------------------------------------------- */

/*
 * Every handle starts with a 32-bit magic naming its kind, checked at every
 * entry point: a pointer to the wrong kind of handle (a common binding
 * mistake) is reported, not trusted. Freeing a handle clears its magic, so a
 * use after free is often caught too, though that cannot be guaranteed.
 */
#define NPYIO__MAGIC_OPTIONS 0x4f50544eu /* "OPTN" */
#define NPYIO__MAGIC_DEAD 0xdeaddeadu

/* ---- memory (alloc.c) -------------------------------------------------- */

/*
 * An allocation context: the allocator and the limit on single allocations,
 * copied out of an npyio_options when a handle is made. Every allocation of
 * the library goes through one of these.
 */
typedef struct npyio__mem {
    npyio_allocator ops; /* all members filled in; realloc may be NULL */
    void *user;
    uint64_t max_alloc; /* NPYIO_LIMIT_ALLOC_BYTES */
} npyio__mem;

/* Blocks of at least this many bytes are asked for 2 MiB aligned, so that
 * the kernel can back them with transparent huge pages (see PERF-NOTES). */
#define NPYIO__HUGE_THRESHOLD ((size_t)4 << 20)
#define NPYIO__HUGE_ALIGN ((size_t)2 << 20)
/* Alignment of blocks: small ones (names, dtypes, headers: allocated and
 * freed at a high rate) get what malloc() gives, enough for any scalar;
 * from NPYIO__MEDIUM_THRESHOLD on, a cache line, for data buffers. */
#define NPYIO__SMALL_ALIGN ((size_t)16)
#define NPYIO__BLOCK_ALIGN ((size_t)64)
#define NPYIO__MEDIUM_THRESHOLD ((size_t)64 << 10)

/*
 * Which allocator a call uses: that of the options it is given; without
 * options, that of the dtype or header it is given (npyio__mem_like); the
 * default allocator only where no handle exists, each such place saying
 * why in a comment.
 */

/* Fill `mem` from options (NULL: defaults). Cannot fail. */
void npyio__mem_init(npyio__mem *mem, const npyio_options *options);

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

/* The deepest nesting of dtypes (records in records, subarrays of
 * subarrays) the library builds; code that walks dtypes recurses at most
 * this deep. NPYIO_LIMIT_DEPTH cannot be set above it. */
#define NPYIO__MAX_DEPTH 256

/* ---- options (options.c) ----------------------------------------------- */

/* The allocator of options (NULL: the default one), all members filled. */
void npyio__options_allocator(const npyio_options *options,
                              npyio_allocator *ops, void **user);

/*
 * npyio_options_new() with the handle allocated through mem instead of
 * malloc(): for options the library makes for a handle it opens itself,
 * which must carry the opening handle's allocator and not bypass it.
 * Released with npyio_options_free(), as any other.
 */
npyio_status npyio__options_new_in(const npyio__mem *mem,
                                   npyio_options **out);

/* A copy of `from` (NULL: the defaults) allocated through mem: options
 * a handle keeps for work it does after it was opened. */
npyio_status npyio__options_copy_in(const npyio__mem *mem,
                                    const npyio_options *from,
                                    npyio_options **out);

/* Fetch a limit without the public call's argument checks; `options` may be
 * NULL (defaults). `which` must be a known limit. */
int64_t npyio__limit(const npyio_options *options, npyio_limit which);

/* NPYIO_E_INVALID_ARG, naming the first bit of flags that is not in
 * `accepted` and the function `where` refusing it; NPYIO_OK if none. */
npyio_status npyio__check_flags(uint32_t flags, uint32_t accepted,
                                const char *where);

/* NPYIO_E_INVALID_ARG for a path that is NULL ("path is NULL") or empty
 * ("path is empty": "" names no file; refused before any work, where the
 * kernel's ENOENT came only after it, when a save linked its temporary);
 * NPYIO_OK otherwise. */
npyio_status npyio__check_path(const char *path, const char *where);

/* NPYIO_E_INVALID_ARG for rows [first, first + count) outside `total`
 * rows: "WHERE: rows [1, 3) are not within WHOSE 2 rows". The end is
 * computed only where it fits in int64_t (the caller's numbers may be
 * anything): "rows [1, 1 + 9223372036854775807)" otherwise. */
npyio_status npyio__fail_rows(const char *where, int64_t first,
                              int64_t count, int64_t total,
                              const char *whose);

/* The header's name of a known limit ("NPYIO_LIMIT_NDIM"), for messages. */
const char *npyio__limit_name(npyio_limit which);

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

/*
 * Copy a caller's callback table that starts with its size: the members
 * within both sizes are copied, the rest of `dst` is zeroed. Members beyond
 * what this version knows must be zero, else NPYIO_E_UNSUPPORTED; a table
 * smaller than `min_size` is NPYIO_E_INVALID_ARG. `what` names the table in
 * messages ("npyio_options_set_allocator: allocator").
 */
npyio_status npyio__copy_table(void *dst, size_t dst_size, const void *src,
                               size_t min_size, const char *what);

#endif /* NPYIO_INTERNAL_H */
