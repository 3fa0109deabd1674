/*
 * npyio.h - the public interface of libnpyio, a C library that reads and
 * writes NumPy's .npy and .npz files.
 *
 * Copyright (c) 2026 The libnpyio developers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * This header is the manual. It is written for C and C++ programmers and for
 * the authors of bindings (ctypes, cffi, Julia ccall, Rust bindgen, Go cgo),
 * so the interface keeps to what every binding handles well:
 *
 *  - Every object is an opaque handle: no struct layout of the library is
 *    visible, so the ABI of libnpyio.so.1 can stay fixed for all of 1.x. The
 *    only public structs are callback tables, and each starts with its own
 *    size so that it can grow.
 *  - Every call that can fail returns an npyio_status: 0 (NPYIO_OK) on
 *    success, a positive value for a non-error outcome (NPYIO_END), a
 *    negative value for an error class. Results come out through trailing
 *    pointer parameters, which are set to NULL or 0 when the call fails.
 *  - A failing call also records a message for the calling thread, with the
 *    specifics ("header byte 37: shape entry -3 is negative"); read it with
 *    npyio_last_error().
 *  - Fixed-width integers: int64_t for shapes, counts and file offsets,
 *    size_t for sizes of memory, int32_t for statuses and enumerations (C
 *    enums have no fixed width, so the header uses #define constants).
 *  - No varargs, no struct passed by value, no macro that computes anything
 *    a binding would have to re-implement.
 *
 * Conventions that hold for every function unless its comment says
 * otherwise:
 *
 *  - Functions whose names end in _free or _close accept NULL and do nothing.
 *  - Pointers returned by getters are borrowed: valid while the object that
 *    returned them lives, never to be freed by the caller.
 *  - Calls that can be tuned take `const npyio_options *` as their last input
 *    parameter; NULL means the defaults. A handle copies what it needs from
 *    the options when it is created: the options may be changed or freed
 *    afterwards without affecting it.
 *  - Memory that the library allocates and hands over to the caller is
 *    released with npyio_free(), whichever allocator made it.
 *  - Thread safety: the library has no global mutable state. Distinct handles
 *    may be used from distinct threads at once. A handle that is not declared
 *    immutable must not be used by two threads at the same time.
 *
 * Every declaration says since which version it exists; nothing documented
 * here will change or disappear within major version 1.
 */
#ifndef NPYIO_H
#define NPYIO_H

#include <stddef.h>
#include <stdint.h>

/*
 * NPYIO_API marks the functions that the shared library exports. The library
 * is built with hidden visibility, so everything else stays internal.
 */
#if defined(__GNUC__) && __GNUC__ >= 4
#define NPYIO_API __attribute__((visibility("default")))
#else
#define NPYIO_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Version                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * The version of this header. The build system reads these lines; they are
 * the single place where the version is written down.
 */
#define NPYIO_VERSION_MAJOR 1
#define NPYIO_VERSION_MINOR 0
#define NPYIO_VERSION_PATCH 0
/** MAJOR * 10000 + MINOR * 100 + PATCH, so 1.2.3 is 10203. */
#define NPYIO_VERSION_NUMBER 10000
#define NPYIO_VERSION_STRING "1.0.0"

/**
 * The version of the library that is running, as "MAJOR.MINOR.PATCH".
 *
 * This can differ from NPYIO_VERSION_STRING, the version of the header a
 * program was compiled against, when a newer libnpyio.so.1 is installed.
 *
 * @return a static NUL-terminated string; never NULL.
 * @since 1.0
 */
NPYIO_API const char *npyio_version_string(void);

/**
 * The version of the library that is running, as MAJOR * 10000 + MINOR * 100
 * + PATCH (the encoding of NPYIO_VERSION_NUMBER).
 *
 * A program that relies on a function added in 1.N can check
 * `npyio_version_number() >= 10000 + N * 100` before calling it.
 *
 * @return the version number; 10000 or more for every 1.x release.
 * @since 1.0
 */
NPYIO_API uint32_t npyio_version_number(void);

/* ------------------------------------------------------------------------ */
/* Status codes and error messages                                          */
/* ------------------------------------------------------------------------ */

/**
 * The result of every call that can fail.
 *
 * A 32-bit signed integer (not an enum, whose width C leaves open). The
 * values below are pinned forever: new ones may be added, none will be
 * renumbered or reused. Callers should treat any negative value they do not
 * know as an error of an unknown class.
 */
typedef int32_t npyio_status;

/** Success. */
#define NPYIO_OK 0
/** Not an error: there is no more data (for example, after the last chunk). */
#define NPYIO_END 1

/** An argument is invalid: a NULL where an object is needed, a value out of
 * its documented range, or a handle of the wrong kind. */
#define NPYIO_E_INVALID_ARG (-1)
/** An allocation failed. */
#define NPYIO_E_NOMEM (-2)
/** The operating system or a stream callback reported an I/O failure. */
#define NPYIO_E_IO (-3)
/** The input is not a valid .npy or .npz file: malformed header, bad magic,
 * invalid descr, and the like. */
#define NPYIO_E_FORMAT (-4)
/** The input is valid but asks for something this library does not do (for
 * example, reading the numbers of an object array). */
#define NPYIO_E_UNSUPPORTED (-5)
/** The input exceeds a resource limit set in npyio_options. */
#define NPYIO_E_LIMIT (-6)
/** The input ends before the data it promises (a short data section). */
#define NPYIO_E_TRUNCATED (-7)
/** A file, archive member or field that was asked for does not exist. */
#define NPYIO_E_NOT_FOUND (-8)
/** A checksum (the CRC-32 of an .npz member) does not match the data. */
#define NPYIO_E_CHECKSUM (-9)
/** The call is not allowed in the object's current state (for example,
 * writing to a writer that has already failed or been finished). */
#define NPYIO_E_STATE (-10)
/** A size, count or offset does not fit the integer type that must hold it:
 * a shape whose element count overflows int64_t, or an array larger than
 * the address space of this host (size_t). */
#define NPYIO_E_OVERFLOW (-11)
/** The caller's output buffer is too small; the call reports the size it
 * needs through its length out-parameter. */
#define NPYIO_E_BUFFER_TOO_SMALL (-12)

/**
 * A short English description of a status class, such as "invalid argument".
 *
 * @param[in] status any value, known or not.
 * @return a static NUL-terminated string; never NULL. Unknown values give
 *         "unknown status".
 * @since 1.0
 */
NPYIO_API const char *npyio_status_string(npyio_status status);

/**
 * The detailed message of the calling thread's most recent failed call.
 *
 * The message says where and what, for example
 * "npyio_options_set_limit: limit 99 is not known to libnpyio 1.0.0".
 * It is UTF-8 and NUL-terminated, and is cut (not overrun) if very long.
 *
 * Each thread has its own message, so the call must be made on the thread
 * that saw the failure (Go programs: lock the goroutine to its OS thread
 * around the failing call and this one). A successful call does not clear
 * the message.
 *
 * @return a thread-local string, valid until the calling thread's next
 *         failing npyio call or its exit. An empty string if no call has
 *         failed on this thread. Never NULL.
 * @since 1.0
 */
NPYIO_API const char *npyio_last_error(void);

/* ------------------------------------------------------------------------ */
/* Memory                                                                   */
/* ------------------------------------------------------------------------ */

/**
 * A caller-supplied allocator, attached to an npyio_options handle with
 * npyio_options_set_allocator(). Every allocation made by a handle created
 * with those options, and every block handed to the caller from it, goes
 * through these callbacks.
 *
 * The table starts with its own size so that later versions can add
 * members: set `size = sizeof(npyio_allocator)`. The library reads only the
 * members that lie within `size`, and copies the table, so it need not
 * outlive the call that installs it.
 *
 * Every callback receives the `user` pointer given to
 * npyio_options_set_allocator() as its first argument; it is kept beside the
 * table rather than in it so that one static const table can serve many
 * users (the same convention as npyio stream callbacks).
 *
 * alloc   (required) Return `size` bytes (size > 0) aligned to `alignment`
 *         (a power of two, at least 64: the library asks for 2 MiB when a
 *         block is large enough to benefit from huge pages), or NULL on
 *         failure. posix_memalign() and aligned_alloc() qualify.
 * realloc (optional, may be NULL) Resize a block from this allocator from
 *         `old_size` to `new_size` bytes, keeping its contents up to the
 *         smaller size, with the new block aligned to `alignment`; return
 *         NULL on failure and leave the old block intact. When NULL the
 *         library allocates, copies and frees instead.
 * free    (required) Release a block returned by alloc or realloc. `size` is
 *         the size it was allocated with, for sized allocators.
 *
 * The callbacks may be called from any thread that uses a handle made with
 * the options; they must be safe for that.
 */
typedef struct npyio_allocator {
    size_t size;
    void *(*alloc)(void *user, size_t size, size_t alignment);
    void *(*realloc)(void *user, void *ptr, size_t old_size, size_t new_size,
                     size_t alignment);
    void (*free)(void *user, void *ptr, size_t size);
} npyio_allocator;

/**
 * Release a block of memory that the library handed to the caller (for
 * example, the data of npyio_load()).
 *
 * The block remembers the allocator that made it, so it is released through
 * that allocator even if the npyio_options it came from has been freed.
 * Blocks from elsewhere (malloc(), another library) must not be passed here.
 *
 * @param[in] ptr a block from libnpyio, or NULL (nothing happens).
 * @since 1.0
 */
NPYIO_API void npyio_free(void *ptr);

/* ------------------------------------------------------------------------ */
/* Options: resource limits and allocator                                   */
/* ------------------------------------------------------------------------ */

/**
 * Settings shared by the calls that create handles: resource limits and the
 * allocator. Opaque; create with npyio_options_new().
 *
 * An options handle may be read by several threads at once (passed to
 * openers), as long as no thread changes it meanwhile. The handle itself is
 * allocated with the C library's malloc(), since it exists before any
 * allocator can be attached to it.
 */
typedef struct npyio_options npyio_options;

/**
 * Names of resource limits, for npyio_options_set_limit(). Each limit is a
 * non-negative int64_t; the default applies until it is set. Input that
 * exceeds a limit fails with NPYIO_E_LIMIT and a message naming the limit.
 * Values are pinned; later versions may add limits.
 */
typedef int32_t npyio_limit;

/** Largest .npy header accepted, in bytes (the length field's value).
 * Default 16 MiB. NumPy's own default is 10000 characters, which refuses
 * some headers NumPy writes (records with hundreds of fields); libnpyio's
 * parser is linear in the header size, so it can afford a higher default. */
#define NPYIO_LIMIT_HEADER_BYTES 1
/** Largest number of dimensions accepted in a shape. Default 64 (NumPy 2's
 * maximum; NumPy 1.x writes at most 32). */
#define NPYIO_LIMIT_NDIM 2
/** Deepest nesting accepted in a header: brackets of the header literal,
 * nested records and subarrays. Default 32. */
#define NPYIO_LIMIT_DEPTH 3
/** Largest number of members accepted in an .npz archive. Default 65536. */
#define NPYIO_LIMIT_NPZ_MEMBERS 4
/** Largest uncompressed size of one .npz member, in bytes. Default
 * INT64_MAX (no limit). */
#define NPYIO_LIMIT_NPZ_MEMBER_BYTES 5
/** Largest ratio of uncompressed to compressed size of an .npz member.
 * Default 1100: deflate cannot exceed about 1032:1, so every honest member
 * passes and a member that claims more is refused before it is inflated. */
#define NPYIO_LIMIT_NPZ_RATIO 6
/** Largest single allocation the library will make, in bytes. Default
 * INT64_MAX (bounded only by the host's size_t). */
#define NPYIO_LIMIT_ALLOC_BYTES 7

/**
 * Create an options handle holding the defaults.
 *
 * @param[out] out receives the handle; NULL on failure.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG if out is NULL; NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_options_new(npyio_options **out);

/**
 * Release an options handle. Handles created with it are not affected.
 *
 * @param[in] options the handle, or NULL.
 * @since 1.0
 */
NPYIO_API void npyio_options_free(npyio_options *options);

/**
 * Set a resource limit.
 *
 * @param[in,out] options the handle.
 * @param[in] which one of the NPYIO_LIMIT_* names.
 * @param[in] value the new limit, >= 0.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG if options is NULL or not an options
 *         handle, if `which` is not a limit this version knows (a program
 *         built against a newer header gets an error rather than a silent
 *         default), or if value is negative.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_options_set_limit(npyio_options *options,
                                               npyio_limit which,
                                               int64_t value);

/**
 * Read a resource limit: the value set, or the default.
 *
 * @param[in] options the handle, or NULL for the defaults.
 * @param[in] which one of the NPYIO_LIMIT_* names.
 * @param[out] value receives the limit; 0 on failure.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG if value is NULL, options is not an
 *         options handle, or `which` is unknown.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_options_get_limit(const npyio_options *options,
                                               npyio_limit which,
                                               int64_t *value);

/**
 * Attach an allocator (see npyio_allocator), or restore the default.
 *
 * The table is copied. Members beyond those this version knows (when the
 * caller's `size` is larger than this version's table) must be zero: a
 * callback the library would ignore is refused rather than silently unused.
 *
 * @param[in,out] options the handle.
 * @param[in] allocator the table, or NULL for the default allocator (the C
 *            library's, with huge pages advised for large blocks).
 * @param[in] user passed as the first argument of every callback.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG if options is not an options handle,
 *         if `size` is too small to hold alloc and free, or if alloc or free
 *         is NULL; NPYIO_E_UNSUPPORTED if members unknown to this version are
 *         set.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_options_set_allocator(
    npyio_options *options, const npyio_allocator *allocator, void *user);

#ifdef __cplusplus
}
#endif

#endif /* NPYIO_H */
