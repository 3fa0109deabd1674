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
 *  - A handle that was closed or freed must not be passed to any call
 *    again (as with zlib's and libarchive's handles): its memory is gone.
 *    A pointer that is not a handle of the right type is refused with
 *    NPYIO_E_INVALID_ARG where the library can tell (a NULL pointer, a
 *    live handle of another type, most stray pointers), but a freed one
 *    cannot be told apart reliably; set yours to NULL after closing.
 *  - Paths are NUL-terminated, in the OS's encoding. A NULL or empty path
 *    is refused at once with NPYIO_E_INVALID_ARG ("path is empty"), before
 *    any work (an empty path names no file).
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
 * Names follow one rule, so that a name says what a call does and which
 * object it acts on:
 *
 *  - npyio_<family>_<verb or noun>: the family is the handle the call
 *    takes first (options, dtype, record_builder, header, stream, reader,
 *    writer, map, npz for an archive read, npz_writer for one written).
 *  - A call that makes a handle belongs to the family of what it makes:
 *    _new (from values), _parse (from text), _open_<source> (existing
 *    bytes: _path, _stream, _fd, _file, _memory, _member of an archive,
 *    _ops), _create_<destination> (a new file, array or member),
 *    _open_append_<source> and _open_in_place_<source> (writers over an
 *    existing file).
 *  - Predicates answer 1 or 0 and are named _is_ or _has_; getters are
 *    nouns; _find looks an index up; _set_/_get_ only on options.
 *  - Each handle has one end (see "Handles" below): _unref (shared),
 *    _free (memory), _close (I/O, can fail), and writers an _abort.
 *  - The task calls have no family: npyio_save, npyio_load,
 *    npyio_load_as, npyio_append, npyio_savez, npyio_savez_append, on
 *    plain C values; _with_header names the same task on an npyio_header.
 *  - Parameters come in one order: the handle or path, what is addressed
 *    in it (key, index, rows), the description (type, ndim, shape, or a
 *    header), data and len, level, flags, options, then outputs.
 *  - Integers: sizes of memory, counts of items in memory and indexes are
 *    size_t; quantities of a file (rows, shape entries, element counts,
 *    offsets) are int64_t; ndim is int; statuses and ids int32_t; flags
 *    uint32_t.
 *  - Constants are NPYIO_<GROUP>_<NAME>: flags by where they go (see
 *    "Per-call flags"), NPYIO_E_* statuses, NPYIO_LIMIT_*, NPYIO_KIND_*,
 *    NPYIO_NPZ_STAT_*.
 * tests/abi/check_names.py checks this rule on every name of this header.
 *
 * Contents, in order: version; statuses and messages; handles and their
 * lifetimes; tasks, one call each (start here); memory; options (limits,
 * allocator); per-call flags; data types; records and subarrays; headers;
 * streams; reading arrays; writing arrays; memory maps; archives read;
 * archives written. Each section after "Tasks" says when to reach for it.
 *
 * Every declaration says since which version it exists; nothing documented
 * here will change or disappear within major version 1.
 */
#ifndef NPYIO_H
#define NPYIO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h> /* FILE, for npyio_stream_open_file() */

/*
 * NPYIO_API marks the functions that the shared library exports. The library
 * is built with hidden visibility, so everything else stays internal.
 *
 * On Windows a DLL's functions are exported and imported explicitly: the
 * build of libnpyio.dll defines NPYIO_BUILDING_DLL, for dllexport; a
 * program using the DLL defines nothing, for dllimport through the import
 * library libnpyio.dll.a; a program linking the static library defines
 * NPYIO_STATIC, which leaves the declarations plain: the static build's
 * npyio.pc and CMake package add it.
 */
#if defined(_WIN32) && defined(NPYIO_STATIC)
#define NPYIO_API
#elif defined(_WIN32) && defined(NPYIO_BUILDING_DLL)
#define NPYIO_API __declspec(dllexport)
#elif defined(_WIN32)
#define NPYIO_API __declspec(dllimport)
#elif defined(__GNUC__) && __GNUC__ >= 4
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
#define NPYIO_VERSION_MINOR 1
#define NPYIO_VERSION_PATCH 0
/** MAJOR * 10000 + MINOR * 100 + PATCH, so 1.2.3 is 10203. */
#define NPYIO_VERSION_NUMBER 10100
#define NPYIO_VERSION_STRING "1.1.0"

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
/** A file, archive member or field that was asked for does not exist. For
 * paths: no such file or directory, or a part of the path that should be
 * a directory is not one (every function taking a path maps the OS's
 * errors alike). */
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
/** Another writer holds a lock on the file that conflicts with the one
 * asked for (an appender and in-place row writers, see
 * npyio_writer_open_append_path()); the message says which kind of lock. Set
 * NPYIO_WRITE_WAIT_FOR_LOCK to wait for it instead. */
#define NPYIO_E_LOCKED (-13)

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
 * around the failing call and this one).
 *
 * The rule: the message is that of the last call on this thread that
 * returned an error status. A call that succeeds (or returns NPYIO_END)
 * neither clears nor changes it, even when it recovered internally from a
 * failed step on the way.
 *
 * @return a thread-local string, valid until the calling thread's next
 *         failing npyio call or its exit. An empty string if no call has
 *         failed on this thread. Never NULL.
 * @since 1.0
 */
NPYIO_API const char *npyio_last_error(void);

/* ------------------------------------------------------------------------ */
/* Handles and their lifetimes                                              */
/* ------------------------------------------------------------------------ */

/*
 * Every object is one of these opaque handles. How each one ends says what
 * it owns:
 *
 *   handle                 made by                          ends with
 *   npyio_options          npyio_options_new                npyio_options_free
 *   npyio_dtype            npyio_dtype_parse, _new_*,       npyio_dtype_unref
 *                          npyio_record_builder_finish
 *   npyio_record_builder   npyio_record_builder_new         npyio_record_builder_free
 *   npyio_header           npyio_header_new, _parse,        npyio_header_free
 *                          _new_as_read, loads
 *   npyio_stream           npyio_stream_open_*, _create_*   npyio_stream_close
 *   npyio_reader           npyio_reader_open_*              npyio_reader_close
 *   npyio_writer           npyio_writer_create_*, _open_*   npyio_writer_close,
 *                                                           npyio_writer_abort
 *   npyio_map              npyio_map_open_*, _create_path   npyio_map_close
 *   npyio_npz              npyio_npz_open_*                 npyio_npz_close
 *   npyio_npz_writer       npyio_npz_writer_create_*,       npyio_npz_writer_close,
 *                          npyio_npz_writer_open_append_*   npyio_npz_writer_abort
 *
 *  - _unref: dtypes are immutable and shared (reference counted, atomically;
 *    npyio_dtype_ref() takes another reference); the last unref frees.
 *  - _free: plain memory that owns no file; cannot fail.
 *  - _close: a handle over bytes somewhere (a file, a stream, a mapping);
 *    finishing it can fail (a flush, a sync, a rename), so it returns a
 *    status, and it releases the handle either way.
 *  - _abort: writers only: release the handle and drop what was written
 *    (a path keeps its old file).
 * Every one of them accepts NULL and does nothing.
 */

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
 * An array's element type: NumPy's dtype. Opaque, immutable and reference
 * counted (atomically), so a dtype may be shared by any number of threads
 * and handles. Obtain one from npyio_dtype_parse(),
 * npyio_dtype_new_scalar(), npyio_dtype_new_datetime(), npyio_dtype_new_native() or a
 * header; release it with npyio_dtype_unref(). Getters on a header return
 * borrowed dtypes: take npyio_dtype_ref() to keep one longer than its header.
 */
typedef struct npyio_dtype npyio_dtype;
/**
 * Builds a record dtype field by field, so that no field struct is ever
 * part of the ABI. Create, add fields, finish, free. Not thread-safe;
 * the dtype it finishes is immutable and thread-safe.
 */
typedef struct npyio_record_builder npyio_record_builder;
/**
 * The description of an array in a .npy file: dtype, shape and memory
 * order, plus, for a header parsed from a file, its format version and
 * layout. Opaque and immutable: may be shared between threads. Release with
 * npyio_header_free().
 *
 * The format (NumPy's NEP 1): the 6-byte magic "\x93NUMPY", a major and a
 * minor version byte, a little-endian header length (2 bytes in 1.0, 4 in
 * 2.0 and 3.0), then that many bytes of a Python dict literal
 * `{'descr': ..., 'fortran_order': ..., 'shape': (...), }` padded with spaces
 * and ending in a newline, so that the data begins at a multiple of 64.
 * 1.0 and 2.0 headers are latin-1, 3.0 headers UTF-8.
 */
typedef struct npyio_header npyio_header;
/**
 * A source or sink of bytes: a file, a descriptor, a FILE*, memory, or the
 * caller's own callbacks. Opaque. Readers and writers borrow a stream: it
 * must stay open until they are closed, and the caller closes it after
 * them. One thread at a time.
 *
 * The library loops on short reads and writes, retries calls interrupted
 * by signals (EINTR), treats a read of zero bytes as the end of the data
 * and a write of zero bytes as an I/O error. Offsets are 64-bit on every
 * host. Writing to a closed pipe or socket through the built-in back ends
 * is NPYIO_E_IO, never a SIGPIPE that would kill the program.
 */
typedef struct npyio_stream npyio_stream;
/** A .npy array being read: its header and then its data. Opaque; one
 * thread at a time. */
typedef struct npyio_reader npyio_reader;
/** A .npy array being written. Opaque; one thread at a time. */
typedef struct npyio_writer npyio_writer;
/**
 * A .npy file mapped into memory: its data is used in place, with no
 * copy, at a cost independent of the file's size. Opaque.
 *
 * The bytes are as stored (the file's byte order and memory order): check
 * npyio_header_dtype() and npyio_header_is_fortran_order() before using them
 * as numbers. A mapping stays valid until npyio_map_close(); the file may
 * be closed or renamed meanwhile. If another process truncates a mapped
 * file, touching the lost pages raises SIGBUS: no library can prevent
 * that, so map only files nobody shrinks underneath you.
 */
typedef struct npyio_map npyio_map;
/**
 * An .npz archive open for reading: a ZIP archive whose members are
 * usually .npy files (np.savez, np.savez_compressed). Opaque. Opening
 * reads and checks the whole directory: the end records (ZIP64 included),
 * every central directory entry, and every member's local header, which
 * must agree with its entry; members may not overlap. Afterwards the
 * handle does not change, so several threads may open and read different
 * members at once when the archive was opened from a path (or a stream
 * with positioned reads: a descriptor, memory, callbacks with a pread
 * member); on other streams, one thread at a time.
 *
 * Members are numbered from 0 in the order of the archive's directory;
 * every member stays reachable by its index, duplicates included.
 */
typedef struct npyio_npz npyio_npz;
/**
 * An .npz archive being written. Opaque; one thread at a time.
 *
 * Members are added one after the other, each as an .npy file named key +
 * ".npy" (as np.savez names them: "x.npy" becomes "x.npy.npy"), with its
 * bytes exactly what np.save writes; archives load in np.load with the
 * same keys and arrays. The same arrays give the same bytes (fixed dates
 * and attributes). Names that are not ASCII are flagged UTF-8. ZIP64
 * records are written where sizes, offsets or the member count need them.
 * Stored members' data starts at an offset that is a multiple of 64 (a
 * padding extra field, as Android's zipalign writes), so their arrays can
 * be mapped aligned (npyio_map_open_member()), unless NPYIO_NPZ_WRITE_NO_ALIGN.
 */
typedef struct npyio_npz_writer npyio_npz_writer;

/* ------------------------------------------------------------------------ */
/* Tasks: one call each                                                     */
/* ------------------------------------------------------------------------ */

/*
 * The common tasks, each one call on plain C values: a type string
 * ("f8", "<i4", "U10", a record's descr list), a number of dimensions and a
 * shape, and the elements in this host's byte order and C order, as a C
 * program holds them. No dtype or header object is needed; every lower
 * level call below stays available for what these do not cover (records in
 * another byte order, streams, chunks, rows, unknown row counts).
 *
 *   task                                     call
 *   save an array (np.save)                  npyio_save()
 *   load an array as stored                  npyio_load(), then npyio_free()
 *   load an array as a given numeric type    npyio_load_as()
 *   append rows to an .npy file              npyio_append()
 *   save arrays as an archive (np.savez,     npyio_savez(), a level per array
 *     np.savez_compressed, or a mix)
 *   add an array to an existing archive      npyio_savez_append()
 *   read an archive's members one by one     npyio_npz_open_path(), then
 *                                            npyio_npz_load() or
 *                                            npyio_npz_load_as() per member
 *
 * With a C11 compiler (not C++: see npyio.hpp), NPYIO_SAVE(),
 * NPYIO_APPEND(), NPYIO_LOAD_AS(), NPYIO_SAVEZ_APPEND(),
 * NPYIO_NPZ_LOAD_AS() and NPYIO_NPZ_WRITER_ADD() below deduce the type
 * string from the pointer's type (NPYIO_TYPE_OF()).
 */

/**
 * Save a plain array in one call, without dtype or header objects: the
 * elements in this host's byte order and C order, as a C program holds
 * them, written as np.save would write them.
 *
 * @param[in] path the destination (replaced atomically, as by
 *            npyio_writer_create_path()).
 * @param[in] type the element type, as npyio_dtype_parse() takes it:
 *            a type string ("f8", "<f8", "float64", "i4", "U10") or a
 *            record's descr list. Byte-order characters must say this
 *            host's order or none.
 * @param[in] ndim the number of dimensions (0 for a scalar).
 * @param[in] shape ndim lengths (may be NULL when ndim is 0).
 * @param[in] data the elements.
 * @param[in] len their size in bytes: the product of the shape times the
 *            itemsize, exactly.
 * @param[in] flags NPYIO_WRITE_NO_SYNC.
 * @param[in] options limits and allocator, or NULL.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG (a len that does not match, naming
 *         both numbers; a type in the other byte order; object dtypes);
 *         the statuses of npyio_dtype_parse(), npyio_header_new()
 *         and npyio_save_with_header().
 * @since 1.0
 */
NPYIO_API npyio_status npyio_save(const char *path, const char *type, int ndim,
                                  const int64_t *shape, const void *data,
                                  size_t len, uint32_t flags,
                                  const npyio_options *options);

/**
 * Load a plain array in one call and one free: the data in native byte
 * order and C order, with its type and shape written into the caller's
 * buffers. For any file NumPy can load without pickles: the type of a
 * record is its descr list, which npyio_dtype_parse() and
 * npyio_save() take back.
 *
 * @param[in] path the file.
 * @param[in] options limits and allocator, or NULL.
 * @param[out] data receives the elements (npyio_free(); never NULL on
 *             success, even for an empty array).
 * @param[out] len receives their size in bytes.
 * @param[out] type receives the type as a NUL-terminated string: NumPy's
 *             dtype.str for a plain type ("<f8", "|b1", "<U3", "<M8[ns]"),
 *             the descr list for records ("[('x', '<i4'), ('y', '<f8')]").
 * @param[in] type_cap the size of type, NUL included; 64 holds every
 *            plain type.
 * @param[out] ndim receives the number of dimensions.
 * @param[out] shape receives ndim lengths.
 * @param[in] shape_cap the number of elements shape holds.
 * @return NPYIO_OK; NPYIO_E_BUFFER_TOO_SMALL (type or shape too small: the
 *         message gives the size needed; nothing is handed back);
 *         NPYIO_E_UNSUPPORTED (object arrays); the statuses of
 *         npyio_load_with_header(). On failure *data is NULL and *len 0.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_load(const char *path,
                                  const npyio_options *options, void **data,
                                  size_t *len, char *type, size_t type_cap,
                                  int *ndim, int64_t *shape, size_t shape_cap);

/**
 * Load a .npy file in one call as elements of a numeric type: the data in
 * C order converted to `type` as npyio_reader_set_type() converts it (same
 * types, rule and values; `f8` is this host's byte order), with its shape
 * written into the caller's buffer.
 *
 * @param[in] path the file.
 * @param[in] type the numeric type to deliver ("f8", "<i4", "c16"), or NULL
 *            for the type as stored, in native byte order.
 * @param[in] flags NPYIO_READ_CAST_SAME_KIND, NPYIO_READ_CAST_UNSAFE, or 0
 *            (the 'safe' rule).
 * @param[in] options limits and allocator, or NULL.
 * @param[out] data receives the elements (npyio_free(); never NULL on
 *             success, even for an empty array).
 * @param[out] len receives their size in bytes: elements * itemsize.
 * @param[out] ndim receives the number of dimensions.
 * @param[out] shape receives ndim lengths (may be NULL if shape_cap is 0).
 * @param[in] shape_cap the number of elements shape holds.
 * @return NPYIO_OK; NPYIO_E_BUFFER_TOO_SMALL (shape_cap < ndim: nothing is
 *         handed back); the statuses of npyio_reader_set_type() (a
 *         conversion refused, naming both types and the rule),
 *         npyio_reader_open_path() and npyio_reader_read_alloc();
 *         NPYIO_E_OVERFLOW (a value that does not fit an integer type,
 *         with its index); NPYIO_E_INVALID_ARG (NULL outputs, unknown
 *         flags). On failure *data is NULL and *len 0.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_load_as(const char *path, const char *type,
                                     uint32_t flags,
                                     const npyio_options *options,
                                     void **data, size_t *len, int *ndim,
                                     int64_t *shape, size_t shape_cap);

/**
 * Append rows along axis 0 to an existing C-order .npy file in one call:
 * npyio_writer_open_append_path(), one write, close, with everything that
 * call promises (the file locked meanwhile; a failure leaves it byte for
 * byte as it was; the new shape written last, crash-safely).
 *
 * @param[in] path an existing .npy file whose dtype is `type` in this
 *            host's byte order and whose dimensions after the first are
 *            shape[1..ndim-1].
 * @param[in] type the file's element type, as npyio_save() takes it, in
 *            this host's byte order (for a file in the other byte
 *            order, use npyio_writer_open_append_path() with a header
 *            of the file's dtype: the rows go in as they are).
 * @param[in] ndim >= 1.
 * @param[in] shape shape[0] the number of rows appended, then the
 *            file's other dimensions.
 * @param[in] data the rows, in C order.
 * @param[in] len their size in bytes, exactly.
 * @param[in] flags NPYIO_WRITE_NO_SYNC, NPYIO_WRITE_WAIT_FOR_LOCK.
 * @param[in] options limits and allocator, or NULL.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG (ndim 0, a len that does not
 *         match, rows that are not the file's); the statuses of
 *         npyio_writer_open_append_path() and npyio_writer_close().
 * @since 1.0
 */
NPYIO_API npyio_status npyio_append(const char *path, const char *type,
                                    int ndim, const int64_t *shape,
                                    const void *data, size_t len,
                                    uint32_t flags,
                                    const npyio_options *options);

/**
 * Save several arrays as an .npz archive in one call, each stored or
 * deflated at its own level: np.savez (every level 0),
 * np.savez_compressed (every level 6), or a mix. The path is replaced
 * atomically when every array was written, and not at all otherwise.
 * Deflated arrays take one libdeflate call each (since 1.1; the bytes
 * differ from np.savez_compressed's) unless NPYIO_NPZ_WRITE_ZLIB, which
 * gives NumPy's bytes.
 *
 * @param[in] path the destination.
 * @param[in] count the number of arrays (0 writes an empty archive).
 * @param[in] keys count NumPy keys (member "a.npy" for key "a").
 * @param[in] types, ndims, shapes, data, lens count entries each, as one
 *            npyio_save() takes them.
 * @param[in] levels count zlib levels (0 stores, 1 to 9 deflate), or NULL
 *            to store every array.
 * @param[in] flags NPYIO_WRITE_NO_SYNC, NPYIO_NPZ_WRITE_NO_ALIGN,
 *            NPYIO_NPZ_WRITE_ZLIB (since 1.1).
 * @param[in] options limits and allocator, or NULL.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG (NULL arrays for count > 0; the
 *         refusals of npyio_npz_writer_add(), naming the key); the
 *         statuses of npyio_npz_writer_create_path() and
 *         npyio_npz_writer_close().
 * @since 1.0
 */
NPYIO_API npyio_status npyio_savez(const char *path, size_t count,
                                   const char *const *keys,
                                   const char *const *types,
                                   const int *ndims,
                                   const int64_t *const *shapes,
                                   const void *const *data,
                                   const size_t *lens, const int *levels,
                                   uint32_t flags,
                                   const npyio_options *options);

/**
 * Add one array to an existing .npz archive in one call:
 * npyio_npz_writer_open_append_path(), npyio_npz_writer_add(), close,
 * with everything the append promises (crash-safe, locked, old members
 * untouched, the key refused if np.load would confuse it with an old one).
 *
 * @param[in] level 0 stores the array, 1 to 9 deflate it.
 * @param[in] flags NPYIO_WRITE_NO_SYNC, NPYIO_NPZ_WRITE_NO_ALIGN,
 *            NPYIO_NPZ_WRITE_ZLIB (since 1.1),
 *            NPYIO_WRITE_WAIT_FOR_LOCK.
 * @return NPYIO_OK; the statuses of npyio_npz_writer_open_append_path(),
 *         npyio_npz_writer_add() and npyio_npz_writer_close(); on failure
 *         the archive is as it was.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_savez_append(const char *path, const char *key,
                                          const char *type, int ndim,
                                          const int64_t *shape,
                                          const void *data, size_t len,
                                          int level, uint32_t flags,
                                          const npyio_options *options);

/*
 * Types the compiler checks (C11, not C++). NPYIO_TYPE_OF(p) is the type
 * string of the elements p points to, in this host's byte order, chosen
 * by the compiler from p's type: "|b1" for _Bool, "=i1" .. "=i8" and
 * "=u1" .. "=u8" for the standard integer types (char itself has no
 * entry: whether it is signed differs between hosts; use signed char,
 * unsigned char or int8_t), "=f4", "=f8" and the host's long double,
 * and the complex types. A pointer to anything else does not compile.
 * The macros below are the plain calls with their type argument filled
 * in that way; `data` is not evaluated twice.
 */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && \
    !defined(__cplusplus)
#define NPYIO__INT_TYPE(t, s)                                               \
    (sizeof(t) == 1 ? s "1" : sizeof(t) == 2 ? s "2"                         \
     : sizeof(t) == 4 ? s "4" : s "8")
#define NPYIO__FLOAT_TYPE(t, k)                                             \
    (sizeof(t) == 4 ? k "4" : sizeof(t) == 8 ? k "8"                         \
     : sizeof(t) == 12 ? k "12" : sizeof(t) == 16 ? k "16"                   \
     : sizeof(t) == 24 ? k "24" : k "32")
#if !defined(__STDC_NO_COMPLEX__)
#define NPYIO__COMPLEX_TYPES                                                \
    , float _Complex: "=c8", double _Complex: "=c16",                        \
    long double _Complex: NPYIO__FLOAT_TYPE(long double _Complex, "=c")
#else
#define NPYIO__COMPLEX_TYPES
#endif
#define NPYIO_TYPE_OF(p)                                                    \
    _Generic(*(p),                                                          \
        _Bool: "|b1",                                                       \
        signed char: "|i1", unsigned char: "|u1",                           \
        short: NPYIO__INT_TYPE(short, "=i"),                             \
        unsigned short: NPYIO__INT_TYPE(short, "=u"),                    \
        int: NPYIO__INT_TYPE(int, "=i"),                                 \
        unsigned int: NPYIO__INT_TYPE(int, "=u"),                        \
        long: NPYIO__INT_TYPE(long, "=i"),                               \
        unsigned long: NPYIO__INT_TYPE(long, "=u"),                      \
        long long: NPYIO__INT_TYPE(long long, "=i"),                     \
        unsigned long long: NPYIO__INT_TYPE(long long, "=u"),            \
        float: "=f4", double: "=f8",                                        \
        long double: NPYIO__FLOAT_TYPE(long double, "=f")                   \
        NPYIO__COMPLEX_TYPES)
/** npyio_save() with the type of *data. */
#define NPYIO_SAVE(path, ndim, shape, data, len, flags, options)            \
    npyio_save((path), NPYIO_TYPE_OF(data), (ndim), (shape), (data), (len),  \
               (flags), (options))
/** npyio_append() with the type of *data. */
#define NPYIO_APPEND(path, ndim, shape, data, len, flags, options)          \
    npyio_append((path), NPYIO_TYPE_OF(data), (ndim), (shape), (data),       \
                 (len), (flags), (options))
/** npyio_savez_append() with the type of *data. */
#define NPYIO_SAVEZ_APPEND(path, key, ndim, shape, data, len, level, flags, \
                           options)                                          \
    npyio_savez_append((path), (key), NPYIO_TYPE_OF(data), (ndim), (shape),  \
                       (data), (len), (level), (flags), (options))
/** npyio_load_as() into the type of **datap (a double ** gets doubles). */
#define NPYIO_LOAD_AS(path, datap, flags, options, len, ndim, shape,        \
                      shape_cap)                                             \
    npyio_load_as((path), NPYIO_TYPE_OF(*(datap)), (flags), (options),       \
                  (void **)(datap), (len), (ndim), (shape), (shape_cap))
/** npyio_npz_load_as() into the type of **datap. */
#define NPYIO_NPZ_LOAD_AS(npz, index, datap, flags, len, ndim, shape,       \
                          shape_cap)                                         \
    npyio_npz_load_as((npz), (index), NPYIO_TYPE_OF(*(datap)), (flags),      \
                      (void **)(datap), (len), (ndim), (shape), (shape_cap))
/** npyio_npz_writer_add() with the type of *data. */
#define NPYIO_NPZ_WRITER_ADD(npz, key, ndim, shape, data, len, level, flags) \
    npyio_npz_writer_add((npz), (key), NPYIO_TYPE_OF(data), (ndim),          \
                         (shape), (data), (len), (level), (flags))
#elif !defined(__cplusplus)
/* Before C11 (C89, C99: no _Generic), a use of one of these macros fails
 * to compile, naming what it needs ("NPYIO_SAVE_needs_C11_or_later
 * undeclared"), where an unknown name would compile as an implicit
 * declaration and fail only at link time. Call the plain functions with a
 * type string there. (Since 1.1; C++ has npyio.hpp.) */
#define NPYIO_TYPE_OF(p) (NPYIO_TYPE_OF_needs_C11_or_later)
#define NPYIO_SAVE(path, ndim, shape, data, len, flags, options)            \
    (NPYIO_SAVE_needs_C11_or_later)
#define NPYIO_APPEND(path, ndim, shape, data, len, flags, options)          \
    (NPYIO_APPEND_needs_C11_or_later)
#define NPYIO_SAVEZ_APPEND(path, key, ndim, shape, data, len, level, flags, \
                           options)                                          \
    (NPYIO_SAVEZ_APPEND_needs_C11_or_later)
#define NPYIO_LOAD_AS(path, datap, flags, options, len, ndim, shape,        \
                      shape_cap)                                             \
    (NPYIO_LOAD_AS_needs_C11_or_later)
#define NPYIO_NPZ_LOAD_AS(npz, index, datap, flags, len, ndim, shape,       \
                          shape_cap)                                         \
    (NPYIO_NPZ_LOAD_AS_needs_C11_or_later)
#define NPYIO_NPZ_WRITER_ADD(npz, key, ndim, shape, data, len, level, flags) \
    (NPYIO_NPZ_WRITER_ADD_needs_C11_or_later)
#endif

/* ------------------------------------------------------------------------ */
/* Memory                                                                   */
/* ------------------------------------------------------------------------ */


/**
 * Release a block of memory that the library handed to the caller (for
 * example, the data of npyio_load_with_header()).
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
 * Names of resource limits, for npyio_options_set_limit(). Each limit is a
 * non-negative int64_t; the default applies until it is set. Input that
 * exceeds a limit fails with NPYIO_E_LIMIT and a message naming the limit.
 * Values are pinned; later versions may add limits.
 */
typedef int32_t npyio_limit;

/** Largest .npy header accepted, counted as NumPy's max_header_size counts:
 * in characters after decoding (latin-1 for 1.0/2.0, UTF-8 for 3.0),
 * padding and newline included. Default 10000, NumPy's default, which
 * refuses some headers NumPy itself writes (records with hundreds of
 * fields): raise it to read those. */
#define NPYIO_LIMIT_HEADER_SIZE 1
/** Largest number of dimensions accepted in a shape. Default 64 (NumPy 2's
 * maximum; NumPy 1.x writes at most 32). */
#define NPYIO_LIMIT_NDIM 2
/** Deepest nesting accepted in a header: brackets of the header literal,
 * nested records and subarrays. Default 32, at most 256 (nested dtypes are
 * processed recursively; the cap keeps that recursion bounded). */
#define NPYIO_LIMIT_DEPTH 3
/** Largest number of members accepted in an .npz archive. Default
 * INT64_MAX (no limit: memory grows with the archive's directory, which
 * the file holds; NumPy writes and reads archives of 70,000 members). */
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
/** Largest sum of the uncompressed sizes an .npz archive's directory
 * declares, in bytes, checked when it is opened. Default INT64_MAX. */
#define NPYIO_LIMIT_NPZ_TOTAL_BYTES 8
/** The most threads one call may use for array data, the caller's
 * included: what this means is fixed for all of 1.x; which calls use
 * threads may grow. In this version:
 *  - deflated archive members of known length are compressed in
 *    independent 4 MiB blocks on that many threads (an ordinary deflate
 *    stream every reader takes, about 0.01% larger; its bytes differ from
 *    a one-thread stream's);
 *  - whole reads of a .npy file's data (npyio_load, npyio_load_as,
 *    npyio_load_with_header, npyio_reader_read_alloc, npyio_reader_read)
 *    from a stream with positioned reads (a file; a stream whose
 *    npyio_stream_ops has pread, called from several threads at once) cut
 *    the data into contiguous parts of 2 MiB or more, one per thread, each
 *    read with pread and converted (byte order, Fortran to C order,
 *    npyio_reader_set_type's conversion) by its thread straight into its
 *    part of the result, whose fresh pages that thread touches first. The
 *    bytes are those one thread gives; a failure (a file cut short, a
 *    conversion that overflows) is reported as one thread reports it, the
 *    same status and message naming the first failing element by index,
 *    with the elements before it in the buffer (npyio_reader_read: what
 *    lies after it is not specified). An allocator's callbacks are called
 *    on the caller's thread only.
 *  - whole reads of a stored archive member of an archive with
 *    positioned reads (npyio_npz_load(), npyio_reader_read_alloc() of a
 *    member, ...) are cut the same way, each part's CRC-32 computed by its
 *    thread and the parts' combined and checked; the parts are converted
 *    by their threads too (byte order, npyio_reader_set_type's
 *    conversion; since 1.1: before, the conversion ran on the caller's
 *    thread), except Fortran to C order, which a member does on the
 *    caller's thread. A deflated member with a block index (below)
 *    inflates its blocks on that many threads;
 *  - since 1.1, chunks of such a member (npyio_reader_read_chunk(), rows,
 *    a member stream read in pieces), each read of 256 KiB or more:
 *    the blocks a read covers whole are inflated on the threads straight
 *    into its buffer, and the next blocks, one per thread, into a buffer
 *    from which the next reads are served while the threads inflate the
 *    batch after it, of up to three blocks per thread, into a second one
 *    (memory: up to six blocks per thread and 128 MiB in all, in blocks
 *    of 4 MiB as npyio writes them; blocks above 16 MiB are not read
 *    ahead; within NPYIO_LIMIT_ALLOC_BYTES, else zlib streams). The bytes and statuses are one thread's; a failure's
 *    message may name another offset of the read (the data is checked a
 *    batch of blocks at a time).
 * Everything else runs on the caller's thread: saves (they write the
 * caller's bytes as they are), other chunked and row reads, and reads of
 * streams without pread (pipes). Default 1: no thread is started. At most
 * 64 are used.
 *
 * A member deflated on 2 or more threads, of known length, in 2 to 4,000
 * blocks, records where its blocks start (the block index), so that
 * readers inflate its blocks on that many threads and seek inside it
 * without inflating from its start.
 * The index lies in the member's LOCAL header extra field (never in the
 * central directory), before minizip's ZIP64 block; fields little-endian:
 *
 *   u16 id 0x494E ("NI" on disk)   u16 data length = 8 + 16 * count
 *   u8  version 1                  3 bytes 0
 *   u32 count (blocks)
 *   count times: u64 compressed offset, u64 uncompressed offset of the
 *                block's start, from the member's first data byte
 *
 * The first block starts at 0/0; each ends where the next starts, the
 * last at the member's sizes. Every block but the last ends in a full
 * flush (an empty stored block): it inflates alone, with no reference
 * before its start. Such members are written when a member of known
 * length is deflated on 3 or more threads, or on 2 with
 * NPYIO_NPZ_WRITE_ZLIB: a member given whole on 1 or 2 threads is instead
 * deflated in one libdeflate call (faster on 2 threads than zlib's two
 * blocks at once; see NPYIO_NPZ_WRITE_ZLIB). Members written on one
 * thread, in one libdeflate call, of unknown length, or of more than
 * 4,000 blocks carry no index (with NPYIO_NPZ_WRITE_ZLIB, one-thread
 * members are byte-identical to np.savez_compressed's). Other readers (zipfile,
 * np.load, unzip, minizip) ignore the field. Every read returns the bytes
 * a sequential inflate from the member's start returns (np.load's), or
 * fails as it would. An index is used (a read to the member's end on
 * several threads, a seek) only once it is proven on the data, every
 * block from the member's first, whatever part the read wants: offsets
 * in range and increasing; each block inflating alone to exactly its
 * declared length and ending, on a byte boundary and not final, exactly
 * where the next begins (the last ending the stream at the member's
 * end). Then a sequential inflate stands at each block's start with
 * nothing carried over, so the blocks' bytes are its bytes; a CRC-32 is
 * no such proof (an archive's author can make one match). The proof is
 * made by the first read that would use the index (the blocks it wants
 * inflated into the destination, those before only checked) and kept
 * for the handle; an index that fails it is never used again, and the
 * member is inflated from its start as without one. An index never
 * changes the bytes read or the errors, and is never a reason to refuse
 * a member. An index of another version is ignored. See
 * NPYIO_NPZ_STAT_BLOCK_INDEX (since 1.1: before, a read that started
 * past block 0 checked only the blocks from its start, and a lying index
 * could change the bytes returned). */
#define NPYIO_LIMIT_THREADS 9

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
 *         default), if value is negative, or above a limit's maximum
 *         (NPYIO_LIMIT_DEPTH: 256).
 * @since 1.0
 */
NPYIO_API npyio_status npyio_options_set_limit(npyio_options *options,
                                               npyio_limit which,
                                               int64_t value);

/**
 * Set the limits for input from a source that is not trusted (files from
 * the internet, uploads): bounded memory and work, whatever the file
 * claims. Sets, and only these:
 *   NPYIO_LIMIT_HEADER_SIZE       10000 (NumPy's default)
 *   NPYIO_LIMIT_NDIM              32
 *   NPYIO_LIMIT_DEPTH             16
 *   NPYIO_LIMIT_NPZ_MEMBERS       4096
 *   NPYIO_LIMIT_NPZ_MEMBER_BYTES  256 MiB (268435456)
 *   NPYIO_LIMIT_NPZ_TOTAL_BYTES   1 GiB (1073741824)
 *   NPYIO_LIMIT_NPZ_RATIO         1100 (the default: deflate's maximum)
 *   NPYIO_LIMIT_ALLOC_BYTES       256 MiB + 1 MiB (one member and room)
 * Raise any of them afterwards with npyio_options_set_limit(). Other
 * limits keep their values, the thread count among them (threads bound no
 * input).
 * Changed in 1.1: 1.0 also set NPYIO_LIMIT_THREADS to 1; set it after
 * this call where that is wanted.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG (not an options handle).
 * @since 1.0
 */
NPYIO_API npyio_status npyio_options_set_untrusted(npyio_options *options);

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
 * A caller-supplied allocator, attached to an npyio_options handle with
 * npyio_options_set_allocator(). Every allocation made by a handle created
 * with those options, and every block handed to the caller from it, goes
 * through these callbacks.
 *
 * Which allocator a call uses:
 *  - a call given options uses theirs, for everything it allocates: the
 *    handles, dtypes and headers it makes, the blocks it hands out and its
 *    temporaries. A handle made with options (reader, writer, map, stream,
 *    record builder) keeps that allocator for everything it does later,
 *    the headers and dtypes it makes included (and an append's rewrite
 *    through a temporary file);
 *  - a call given no options uses the allocator that made the dtype or
 *    header it is given: npyio_header_new() makes the header like its
 *    dtype; npyio_dtype_new_byteorder(), npyio_dtype_new_native() and
 *    npyio_dtype_new_subarray() make dtypes like the one given;
 *    npyio_header_emit() and npyio_dtype_swap() make their temporaries
 *    like the header or dtype;
 *  - the default allocator is used only where there is no such handle:
 *    calls given NULL options, npyio_dtype_new_scalar(), npyio_dtype_new_datetime(),
 *    and calls given a built-in dtype. The common dtypes (bool, integers,
 *    floats, complex, objects, short S and U, datetimes without a
 *    multiplier) are static, belong to no allocator and allocate nothing;
 *    what is made from them without options (npyio_header_new() of '<f8')
 *    comes from the default allocator.
 * The npyio_options handle itself is allocated with malloc() (see
 * npyio_options). One more exception: while an .npz archive is written
 * (npyio_npz_writer_create_path() and the other writers), minizip, which writes
 * its ZIP structure, allocates a few small blocks of its own with
 * malloc(); it has no hook for another allocator. The second: the
 * decompressor of libdeflate (about 10 KiB), made for each whole read of a
 * deflated member (see npyio_reader_open_member()), and its compressor
 * (hundreds of KiB, by level), made for each member deflated in one
 * libdeflate call (see NPYIO_NPZ_WRITE_ZLIB), come from libdeflate's own
 * malloc() (libdeflate's only other hook is process-wide, which the
 * library never sets); if one cannot be made the read or the member fails
 * with NPYIO_E_NOMEM. The buffers handed to libdeflate (the compressed
 * bytes, a whole member's output block), compression and decompression
 * through zlib, and everything else use this allocator.
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
 *         (a power of two: 16 for small blocks, 64 from 64 KiB, 2 MiB from
 *         4 MiB, where huge pages pay off), or NULL on failure.
 *         posix_memalign() and aligned_alloc() qualify. A block without
 *         that alignment is given back and the call fails with
 *         NPYIO_E_INVALID_ARG (the message names the allocator).
 * realloc (optional, may be NULL) Resize a block from this allocator from
 *         `old_size` to `new_size` bytes, keeping its contents up to the
 *         smaller size, with the new block aligned to `alignment`; return
 *         NULL on failure and leave the old block intact (its result's
 *         alignment is trusted, not checked). When NULL the library
 *         allocates, copies and frees instead.
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
 * Attach an allocator (see npyio_allocator), or restore the default.
 * Calls and handles given these options use it from then on (see
 * npyio_allocator for which allocator each call uses); blocks already
 * made keep the allocator that made them.
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

/* ------------------------------------------------------------------------ */
/* Per-call flags                                                           */
/* ------------------------------------------------------------------------ */

/*
 * How one call runs is said by its `flags` argument: a bitwise OR of the
 * values below. Every flag is its own bit, and its prefix says which calls
 * take it:
 *   NPYIO_READ_*       reads and loads (0x1 .. 0x8)
 *   NPYIO_WRITE_*      writers and saves (0x10 .. 0x80)
 *   NPYIO_MAP_*        memory maps (0x100 .. 0x800)
 *   NPYIO_NPZ_WRITE_*  archive writers (0x1000 .. 0x8000)
 *   NPYIO_RECORD_*     the record builder (0x10000 .. 0x80000)
 *   NPYIO_STREAM_*     npyio_stream_open_path() (0x100000 .. 0x800000)
 * Each function lists the flags it accepts; any other bit is
 * NPYIO_E_INVALID_ARG, refused before the call does anything, with a
 * message naming the flag and those the call takes, so a flag meant for
 * another call is never silently ignored. What a program sets once
 * (limits, the allocator) lives in npyio_options instead. Values are
 * pinned.
 */

/** Reading: convert every element to this host's byte order (records
 * field by field, through nested records and subarrays; complex halves, U
 * characters and long doubles as whole units). Without it the bytes
 * arrive in the file's byte order. */
#define NPYIO_READ_NATIVE 0x1u
/** Reading: deliver Fortran-order data in C order (the element at index
 * (i, j, ..) lands where a C array's would). No effect on C-order files. */
#define NPYIO_READ_C_ORDER 0x2u
/** Reading with a type (npyio_reader_set_type(), npyio_load_as()): allow
 * the conversions np.can_cast(from, to, 'same_kind') allows: the safe ones
 * and those within a kind or up the order bool, unsigned, signed, float,
 * complex (f8 to f4, i8 to i2, u2 to i1). Without either cast flag the
 * rule is 'safe'. */
#define NPYIO_READ_CAST_SAME_KIND 0x4u
/** Reading with a type: allow every conversion between numeric types
 * (np.can_cast(..., 'unsafe')): integers wrap modulo 2**n, complex to real
 * keeps the real part, float to integer truncates (a value the integer
 * type cannot hold is NPYIO_E_OVERFLOW). With NPYIO_READ_CAST_SAME_KIND
 * too, the rule is 'unsafe' (the wider of the two). */
#define NPYIO_READ_CAST_UNSAFE 0x8u
/** Writing: skip the fsync calls. By default a file written to a path, its
 * directory entry, appended rows and mapped changes are on stable storage
 * when the call that finishes them returns, so a completed write survives
 * a crash or power loss. With this flag they reach the disk when the
 * system writes them back; the replacement stays atomic either way (a
 * killed process leaves the old file or the new one). */
#define NPYIO_WRITE_NO_SYNC 0x10u
/** Writer openers: the first dimension (rows along axis 0) is not known
 * yet: the header's shape[0] is ignored, rows are written in any number
 * of calls, and close writes the final count into the header. C order
 * only (rows are contiguous there). At close the bytes written must be a
 * whole number of rows (else NPYIO_E_TRUNCATED, and nothing replaces the
 * destination); the count is the bytes divided by a row's, so rows of 0
 * bytes (shape (k, 0)) give a count of 0. On a stream it must be able to
 * seek (the header is rewritten at close). */
#define NPYIO_WRITE_UNKNOWN_ROWS 0x20u
/** Appenders and in-place writers: wait for a conflicting lock to be
 * released instead of failing at once with NPYIO_E_LOCKED. The wait has
 * no time limit. */
#define NPYIO_WRITE_WAIT_FOR_LOCK 0x40u
/** npyio_stream_save_under(): replace a file that exists at the path.
 * Without it such a file is refused, at the open and again at the commit
 * itself, so one made in between is not replaced either. @since 1.1 */
#define NPYIO_WRITE_REPLACE 0x80u
/** npyio_map_create_path(): leave the data sparse (a hole, allocated as it is
 * written) instead of reserving its disk blocks. Sparse is instant and uses
 * no space until written, but a disk that fills while the mapping is
 * written kills the process with SIGBUS; reserved, a full disk is a clean
 * NPYIO_E_IO from npyio_map_create_path(). */
#define NPYIO_MAP_SPARSE 0x200u
/** npyio_map_open_path(): map read-write, shared: changes reach the file.
 * Without it the mapping is read-only (writing through it faults). */
#define NPYIO_MAP_WRITE 0x100u
/** npyio_npz_writer_create_path(), npyio_npz_writer_create_stream(): do not pad stored
 * members so that their data starts at a multiple of 64. */
#define NPYIO_NPZ_WRITE_NO_ALIGN 0x1000u
/** Archive writers (the calls that take NPYIO_NPZ_WRITE_NO_ALIGN): deflate
 * every member with zlib, as 1.0 did. On one thread a member's bytes are
 * then np.savez_compressed's (zipfile's zlib) byte for byte; on two or
 * more, zlib's independent blocks with their block index.
 *
 * Without it (since 1.1), a member given whole (npyio_savez(),
 * npyio_savez_with_header(), npyio_savez_append(), npyio_npz_writer_add(),
 * npyio_npz_writer_add_with_header(), npyio_npz_writer_add_npy() of a
 * stream that can seek, such as a file, which is read whole) of up to
 * 257 MiB (header included) and within NPYIO_LIMIT_ALLOC_BYTES, at level
 * 1 to 9, on 1 or 2 threads (NPYIO_LIMIT_THREADS), is deflated in one
 * libdeflate call at the same level: its .npy header goes out as a stored
 * block, then the data is compressed where it lies (no copy) into one
 * block (libdeflate's bound: about the data's size). About 2 to 6 times
 * zlib's speed on one core, and within a few per cent of its size
 * (smaller or larger by data); the bytes depend on libdeflate's version,
 * and every zip reader reads them. Why 2 threads: measured there, one
 * libdeflate call beat zlib's two blocks at once at levels 1 and 6
 * (tests/bench/bench_npz.c --only deflate); 3 or more threads were not
 * measured and keep zlib's blocks and their index (zlib's blocks scale
 * with threads, and the index lets reads use threads too). Larger
 * members, members written in pieces (npyio_writer_create_member()), of
 * unknown row count, or read from a stream that cannot seek keep zlib.
 *
 * Refused (NPYIO_E_INVALID_ARG) by a call that stores every array
 * (npyio_savez() and npyio_savez_with_header() with no level above 0,
 * npyio_savez_append() at level 0). @since 1.1 */
#define NPYIO_NPZ_WRITE_ZLIB 0x2000u


/* ------------------------------------------------------------------------ */
/* Data types                                                               */
/* ------------------------------------------------------------------------ */

/*
 * When to reach for it: to check a file's element type before using its
 * data, to describe types the task calls cannot (another byte order,
 * datetimes), or to convert byte orders in place.
 */

/**
 * The kind of a dtype. For scalars the value is NumPy's `dtype.kind`
 * character; records and subarray types, which NumPy files under kind 'V'
 * with fields or a shape, have kinds of their own here.
 */
typedef int32_t npyio_kind;

#define NPYIO_KIND_BOOL 'b'      /**< bool: |b1 */
#define NPYIO_KIND_INT 'i'       /**< signed integer: i1 i2 i4 i8 */
#define NPYIO_KIND_UINT 'u'      /**< unsigned integer: u1 u2 u4 u8 */
#define NPYIO_KIND_FLOAT 'f'     /**< float: f2 f4 f8, long double f12 f16 */
#define NPYIO_KIND_COMPLEX 'c'   /**< complex: c8 c16, long double c24 c32 */
#define NPYIO_KIND_BYTES 'S'     /**< fixed-size bytes: S<n>, n bytes */
#define NPYIO_KIND_STR 'U'       /**< fixed-size UCS-4 text: U<n>, 4n bytes */
#define NPYIO_KIND_VOID 'V'      /**< raw bytes without fields: V<n> */
#define NPYIO_KIND_OBJECT 'O'    /**< Python objects: the data is a pickle */
#define NPYIO_KIND_DATETIME 'M'  /**< datetime64: M8, M8[unit], M8[25s] */
#define NPYIO_KIND_TIMEDELTA 'm' /**< timedelta64: m8, m8[unit], m8[3h] */
#define NPYIO_KIND_RECORD 'R'    /**< structured: named fields (NumPy: 'V') */
#define NPYIO_KIND_SUBARRAY 'A'  /**< a fixed-shape array of a base dtype */

/**
 * Make a dtype from its description: a type string as NumPy's np.dtype()
 * takes it (`<f8`, `f8`, `=i4`, `float64`, `d`, `U10`, `M8[ns]`,
 * `datetime64[25s]`, ...), or a descr as it is written in a .npy header,
 * which is a Python literal: `'<f8'` with its quotes, a record list such
 * as `[('x', '<i4'), ('y', '<f8', (2,))]` with every form NumPy reads
 * (titles, `('', '|V4')` padding, lists for tuples, int shapes), or a
 * subarray `('<f8', (2, 3))`. The two are told apart by the first
 * character: a quote (after an optional u or b), a `[`, or a `(` not
 * followed by a digit, `,` or `)` starts a literal.
 *
 * Type strings may also be comma-separated lists and carry shapes, read
 * as NumPy 1.24's np.dtype() reads them: `i4,f8` is a record of fields
 * `f0` and `f1` packed in order; an item may start with a shape, an int
 * or a tuple as Python writes it, and a byte order before or after it
 * (`(2,3)>f4`, `3i2`: subarrays; with S, U or V the number is the size
 * instead, so `3S` is `S3`); white space may surround the commas; one
 * item alone is that item (`(2,)<f8` is a subarray, `i4,` is `i4`), and
 * an empty last item still makes a record (`i4,<` has one field). The
 * deprecated `(type, 1)` synonym gives the type itself, as in NumPy 1.x.
 * Refused although NumPy takes them: shapes whose dtype NumPy builds
 * inconsistently (a size given to a subarray of 0 bytes) or with sizes
 * wrapped negative. Subarray shapes may have up to 64 dimensions (NumPy
 * 2's limit; 1.24 allows 32).
 *
 * Byte order: `<` little, `>` big, `=` or none the host's, `|` not
 * applicable; `!` is big-endian. As in NumPy, 1-byte numbers and `b1 S V O`
 * always report `|`, and `=` is resolved to the host's order, so `f8` and
 * `'<f8'` give equal dtypes on a little-endian host. Long doubles of every
 * platform are accepted (f12/c24 from 32-bit x86, f16/c32 from x86-64,
 * POWER, s390x or AArch64): their bytes are carried unchanged, never
 * converted. Type names whose size depends on the C platform (`l`, `long`,
 * `g`, `longdouble`, `p`, `intp`, ...) mean this host's sizes, as in NumPy.
 *
 * @param[in] text the description, not necessarily NUL-terminated; a
 *            literal is UTF-8 (bytes that are not, and NUL bytes, are
 *            NPYIO_E_FORMAT, as Python refuses them in source code).
 * @param[in] len its length in bytes.
 * @param[in] options limits (nesting depth) and allocator, or NULL.
 * @param[out] out receives a new reference; NULL on failure.
 * @return NPYIO_OK; NPYIO_E_FORMAT for a description NumPy would reject
 *         (the message says why); NPYIO_E_OVERFLOW for an itemsize beyond
 *         2**31 - 1 (NumPy's limit); NPYIO_E_INVALID_ARG for NULL text or
 *         out; NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_dtype_parse(const char *text, size_t len,
                                         const npyio_options *options,
                                         npyio_dtype **out);

/**
 * Make a scalar dtype from its kind, size and byte order.
 *
 * @param[in] kind one of NPYIO_KIND_BOOL .. NPYIO_KIND_OBJECT (for
 *            datetimes use npyio_dtype_new_datetime()).
 * @param[in] itemsize the size in bytes (for NPYIO_KIND_STR: 4 per
 *            character); must be a size NumPy allows for the kind. Object
 *            dtypes take 0, or the size of a pointer.
 * @param[in] byteorder '<', '>', '=' (this host's), or '|' (also accepted
 *            for multi-byte kinds, meaning the host's order, as in NumPy).
 * @param[out] out receives a new reference; NULL on failure.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG for an unknown kind, a size the
 *         kind does not have, or an unknown byte order; NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_dtype_new_scalar(npyio_kind kind, size_t itemsize,
                                              char byteorder,
                                              npyio_dtype **out);

/**
 * Make a datetime64 or timedelta64 dtype.
 *
 * @param[in] kind NPYIO_KIND_DATETIME or NPYIO_KIND_TIMEDELTA.
 * @param[in] unit "Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns",
 *            "ps", "fs", "as", or NULL or "" for the generic (unit-less)
 *            type.
 * @param[in] multiplier the number of units per tick, 1 .. 2**31 - 1
 *            (25 in `m8[25s]`); must be 1 for the generic type.
 * @param[in] byteorder '<', '>', '=' or '|' (the host's).
 * @param[out] out receives a new reference; NULL on failure.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG; NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_dtype_new_datetime(npyio_kind kind,
                                                const char *unit,
                                                int64_t multiplier,
                                                char byteorder,
                                                npyio_dtype **out);

/**
 * Take another reference to a dtype.
 *
 * @param[in] dtype a dtype, or NULL.
 * @return dtype itself (now with one more reference), or NULL.
 * @since 1.0
 */
NPYIO_API npyio_dtype *npyio_dtype_ref(const npyio_dtype *dtype);

/**
 * Drop a reference; the dtype is freed with its last reference.
 *
 * @param[in] dtype a dtype, or NULL.
 * @since 1.0
 */
NPYIO_API void npyio_dtype_unref(npyio_dtype *dtype);

/**
 * The kind: an NPYIO_KIND_* value, or 0 if dtype is NULL or not a dtype.
 * @return an NPYIO_KIND_* value; 0 for NULL or a pointer that is not a dtype.
 * @since 1.0
 */
NPYIO_API npyio_kind npyio_dtype_kind(const npyio_dtype *dtype);

/**
 * The size of one element in bytes (NumPy's `dtype.itemsize`); 0 for NULL.
 * Object dtypes report the size of a pointer, as NumPy does.
 * @return the itemsize in bytes; 0 for NULL.
 * @since 1.0
 */
NPYIO_API size_t npyio_dtype_itemsize(const npyio_dtype *dtype);

/**
 * The alignment this host's NumPy gives the type (`dtype.alignment`): that
 * of the matching C type, so it can differ between hosts (int64 is aligned
 * to 4 on 32-bit x86). 0 for NULL.
 * @return the alignment in bytes; 0 for NULL.
 * @since 1.0
 */
NPYIO_API size_t npyio_dtype_alignment(const npyio_dtype *dtype);

/**
 * The byte order: '<' (little-endian), '>' (big-endian) or '|' (not
 * applicable: one-byte types, bytes, void, objects, records). Never '='.
 * 0 for NULL.
 * @return '<', '>' or '|'; 0 for NULL.
 * @since 1.0
 */
NPYIO_API char npyio_dtype_byteorder(const npyio_dtype *dtype);

/**
 * 1 if the dtype's bytes are in this host's order (or order does not
 * apply), else 0. A record or subarray is native when every field in it,
 * recursively, is.
 * @return 1 or 0 (0 for NULL).
 * @since 1.0
 */
NPYIO_API int npyio_dtype_is_native(const npyio_dtype *dtype);

/**
 * The unit of a datetime64 or timedelta64 dtype: "Y" .. "as" as in
 * npyio_dtype_new_datetime(), or "generic" for the unit-less type. NULL for
 * other kinds.
 * @return a static NUL-terminated string, or NULL for other kinds and NULL.
 * @since 1.0
 */
NPYIO_API const char *npyio_dtype_datetime_unit(const npyio_dtype *dtype);

/**
 * The multiplier of a datetime64 or timedelta64 dtype (25 for `m8[25s]`,
 * 1 when none is written); 0 for other kinds.
 * @return the multiplier (>= 1), or 0 for other kinds and NULL.
 * @since 1.0
 */
NPYIO_API int64_t npyio_dtype_datetime_multiplier(const npyio_dtype *dtype);

/**
 * 1 if the two dtypes describe the same type (as NumPy's `==`: kind, size,
 * byte order, datetime unit and multiplier), else 0. NULL equals only NULL.
 * @return 1 if equal, else 0.
 * @since 1.0
 */
NPYIO_API int npyio_dtype_is_equal(const npyio_dtype *a, const npyio_dtype *b);

/**
 * The same type in this host's byte order (NumPy's
 * `dtype.newbyteorder('=')`). If dtype already is native, that is another
 * reference to it.
 *
 * @param[in] dtype the dtype.
 * @param[out] out receives a new reference; NULL on failure.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG; NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_dtype_new_native(const npyio_dtype *dtype,
                                              npyio_dtype **out);

/**
 * The same type with every field in one byte order (NumPy's
 * `dtype.newbyteorder(byteorder)`): '<' little-endian, '>' big-endian, '='
 * this host's. Types where order does not apply ('|') stay as they are;
 * records keep their names, titles, offsets and itemsize, and nested
 * records and subarrays are converted throughout. If nothing changes, that
 * is another reference to dtype.
 *
 * @param[in] dtype the dtype.
 * @param[in] byteorder '<', '>' or '='.
 * @param[out] out receives a new reference; NULL on failure.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG (another byteorder); NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_dtype_new_byteorder(const npyio_dtype *dtype,
                                                 char byteorder,
                                                 npyio_dtype **out);

/**
 * Convert elements in place between dtype's byte order and this host's:
 * reverses the bytes of every multi-byte value whose order is not the
 * host's, through nested records and subarrays (complex values as two
 * halves, U text as 4-byte characters, long doubles as whole units);
 * padding and one-byte values are left alone. The conversion is its own
 * inverse: it turns the bytes of a file of dtype into native values, and
 * native values into the bytes a file of dtype holds -- so native data can
 * be written under a header of any byte order with
 * npyio_dtype_new_byteorder() and this call.
 *
 * Records whose fields share bytes (possible with the record builder,
 * never in a header) are refused, at any depth and whatever the host's
 * order: their shared bytes would be reversed once per field, so no
 * conversion of them is its own inverse. Nothing is changed then; the
 * status is the one npyio_dtype_descr() gives such records.
 *
 * @param[in] dtype the element type.
 * @param[in,out] data nbytes bytes of elements (any alignment).
 * @param[in] nbytes a whole number of elements.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG (nbytes not a multiple of the
 *         itemsize, NULL data); NPYIO_E_UNSUPPORTED (object dtypes, or
 *         fields that overlap: the message names two of them);
 *         NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_dtype_swap(const npyio_dtype *dtype, void *data,
                                        size_t nbytes);

/**
 * NumPy's `dtype.str`, such as "<f8", "|u1", "<U3", "<M8[ns]" or "|O".
 *
 * Writes at most cap bytes including a terminating NUL. If cap is too
 * small, returns NPYIO_E_BUFFER_TOO_SMALL and sets *len to the length
 * needed (without the NUL): call once with cap 0 to size the buffer.
 *
 * @param[in] dtype the dtype.
 * @param[out] buf where the text goes (may be NULL when cap is 0).
 * @param[in] cap the size of buf.
 * @param[out] len the length of the text without its NUL (may be NULL).
 * @return NPYIO_OK; NPYIO_E_BUFFER_TOO_SMALL; NPYIO_E_INVALID_ARG.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_dtype_str(const npyio_dtype *dtype, char *buf,
                                       size_t cap, size_t *len);

/**
 * The descr as np.save writes it in a header: a Python literal, such as
 * `'<f8'` (with its quotes). Same buffer protocol as npyio_dtype_str().
 *
 * @return NPYIO_OK; NPYIO_E_BUFFER_TOO_SMALL; NPYIO_E_INVALID_ARG;
 *         NPYIO_E_UNSUPPORTED for dtypes no descr can express.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_dtype_descr(const npyio_dtype *dtype, char *buf,
                                         size_t cap, size_t *len);

/* ------------------------------------------------------------------------ */
/* Records and subarrays                                                    */
/* ------------------------------------------------------------------------ */

/*
 * When to reach for it: to build a structured (record) type field by
 * field, or to walk a record file's fields by name and offset.
 */

/**
 * Make a subarray dtype: a fixed-shape array of `base` as one element
 * (NumPy's `np.dtype((base, shape))`). Its itemsize is the base's times
 * the number of elements; its kind is NPYIO_KIND_SUBARRAY. As in NumPy, a
 * shape of no dimensions gives the base itself.
 *
 * @param[in] base the element type (the new dtype takes a reference).
 * @param[in] ndim number of dimensions, 0 .. 64.
 * @param[in] shape ndim sizes >= 0 (may be NULL when ndim is 0).
 * @param[out] out receives a new reference; NULL on failure.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG; NPYIO_E_OVERFLOW if the itemsize
 *         or a dimension would exceed 2**31 - 1 (NumPy's limits, a C int:
 *         NumPy checks each dimension even when another is 0);
 *         NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_dtype_new_subarray(const npyio_dtype *base,
                                                int ndim, const int64_t *shape,
                                                npyio_dtype **out);

/** The element type of a subarray dtype (borrowed); NULL for other kinds.
 * @return the element dtype (borrowed), or NULL.
 * @since 1.0 */
NPYIO_API const npyio_dtype *npyio_dtype_subarray_base(
    const npyio_dtype *dtype);

/** The number of dimensions of a subarray dtype; 0 for other kinds.
 * @return the number of dimensions (>= 1), or 0.
 * @since 1.0 */
NPYIO_API int npyio_dtype_subarray_ndim(const npyio_dtype *dtype);

/** The shape of a subarray dtype (borrowed, ndim sizes); NULL for other
 * kinds.
 * @return ndim sizes (borrowed), or NULL.
 * @since 1.0 */
NPYIO_API const int64_t *npyio_dtype_subarray_shape(const npyio_dtype *dtype);

/**
 * The number of fields of a record dtype (0 for an empty record and for
 * every other kind).
 * @return the number of fields, or 0.
 * @since 1.0
 */
NPYIO_API size_t npyio_dtype_field_count(const npyio_dtype *dtype);

/**
 * A field's name: UTF-8, borrowed, followed by a NUL; NULL if i is out of
 * range. Names may be empty (NumPy keeps a non-padding field named '') and,
 * read from a file, may contain NUL characters (NumPy allows "a\x00b"):
 * use the length to see all of such a name.
 *
 * @param[in] dtype a record dtype.
 * @param[in] i the field's index.
 * @param[out] len receives the name's length in bytes (may be NULL).
 * @return the name (borrowed, NUL-terminated), or NULL.
 * @since 1.0
 */
NPYIO_API const char *npyio_dtype_field_name(const npyio_dtype *dtype,
                                             size_t i, size_t *len);

/** A field's title (NumPy's `(title, name)` form), as for the name; NULL
 * (and length 0) if it has none or i is out of range.
 * @return the title (borrowed, NUL-terminated), or NULL.
 * @since 1.0 */
NPYIO_API const char *npyio_dtype_field_title(const npyio_dtype *dtype,
                                              size_t i, size_t *len);

/** A field's byte offset within the record; -1 if i is out of range.
 * @return the offset in bytes, or -1.
 * @since 1.0 */
NPYIO_API int64_t npyio_dtype_field_offset(const npyio_dtype *dtype,
                                           size_t i);

/**
 * A field's element dtype (borrowed): for a subarray field such as
 * `('pos', '<f4', (3,))`, the element ('<f4'), whose shape
 * npyio_dtype_field_shape() gives; for other fields, the field's dtype.
 * NULL if i is out of range.
 * @return the field's element dtype (borrowed), or NULL.
 * @since 1.0
 */
NPYIO_API const npyio_dtype *npyio_dtype_field_dtype(const npyio_dtype *dtype,
                                                     size_t i);

/** The number of dimensions of a subarray field (0 for a plain field or i
 * out of range).
 * @return the number of dimensions, or 0.
 * @since 1.0 */
NPYIO_API int npyio_dtype_field_ndim(const npyio_dtype *dtype, size_t i);

/** The shape of a subarray field (borrowed, ndim sizes), or NULL for a
 * plain field.
 * @return ndim sizes (borrowed), or NULL.
 * @since 1.0 */
NPYIO_API const int64_t *npyio_dtype_field_shape(const npyio_dtype *dtype,
                                                 size_t i);

/**
 * Find a field by name or title.
 *
 * @param[in] dtype a record dtype.
 * @param[in] name the name or title, NUL-terminated UTF-8.
 * @param[out] index receives the field's index.
 * @return NPYIO_OK; NPYIO_E_NOT_FOUND (also for dtypes that are not
 *         records); NPYIO_E_INVALID_ARG.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_dtype_find_field(const npyio_dtype *dtype,
                                              const char *name, size_t *index);

/**
 * 1 if the dtype holds Python objects anywhere (an `O` scalar, or an `O`
 * field at any depth, inside subarrays too), else 0. Such arrays are
 * stored as pickles, which libnpyio never unpickles.
 * @return 1 or 0 (0 for NULL).
 * @since 1.0
 */
NPYIO_API int npyio_dtype_has_objects(const npyio_dtype *dtype);

/** Flags for npyio_record_builder_new(). */
/** Place fields added with offset -1 at the next offset aligned for them,
 * pad the record to a multiple of its largest alignment, and give it that
 * alignment: NumPy's `align=True`. Without it fields are packed and the
 * record's alignment is 1, as for every record NumPy reads from a file. */
#define NPYIO_RECORD_ALIGNED 0x10000u

/**
 * Start a record.
 *
 * @param[in] flags 0 or NPYIO_RECORD_ALIGNED.
 * @param[in] options allocator, or NULL.
 * @param[out] out receives the builder; NULL on failure.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG (unknown flags, NULL out);
 *         NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_record_builder_new(uint32_t flags,
                                                const npyio_options *options,
                                                npyio_record_builder **out);

/**
 * Add a field.
 *
 * @param[in,out] builder the builder.
 * @param[in] name the name, NUL-terminated UTF-8 (may be empty).
 * @param[in] title a title (UTF-8), or NULL for none.
 * @param[in] offset the byte offset, or -1 for the end of the previous
 *            field (aligned with NPYIO_RECORD_ALIGNED). Fields may
 *            overlap or be out of order, as in NumPy; such a record cannot
 *            be written to a file.
 * @param[in] dtype the element dtype (the record takes a reference).
 * @param[in] ndim 0 for a plain field, else the subarray's dimensions.
 * @param[in] shape ndim sizes >= 0 (NULL when ndim is 0).
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG for a name or title already used
 *         as a name or title, one that is not strict UTF-8 (overlong forms
 *         and surrogates included; the message names the byte: a header
 *         holding it could not be read back), a negative offset other than
 *         -1, bad shape;
 *         NPYIO_E_OVERFLOW for sizes beyond NumPy's limit;
 *         NPYIO_E_LIMIT for nesting deeper than 256 levels; NPYIO_E_NOMEM.
 *         A failed add leaves the builder as it was.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_record_builder_add(
    npyio_record_builder *builder, const char *name, const char *title,
    int64_t offset, const npyio_dtype *dtype, int ndim, const int64_t *shape);

/**
 * Finish the record. The builder stays valid (and can be freed or used to
 * finish again).
 *
 * @param[in] builder the builder.
 * @param[in] itemsize the record's total size, or 0 for the end of the
 *            field that ends last (rounded up to the record's alignment
 *            with NPYIO_RECORD_ALIGNED); a nonzero itemsize smaller than
 *            that end is an error.
 * @param[out] out receives a new reference; NULL on failure.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG; NPYIO_E_OVERFLOW; NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_record_builder_finish(
    const npyio_record_builder *builder, size_t itemsize, npyio_dtype **out);

/** Release a builder (NULL is fine); dtypes it finished live on. @since 1.0 */
NPYIO_API void npyio_record_builder_free(npyio_record_builder *builder);

/* ------------------------------------------------------------------------ */
/* Headers                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * When to reach for it: to describe an array as an object (dtype, shape,
 * memory order) for the reader, writer, map and archive calls, or to
 * parse and emit .npy headers byte for byte as np.save writes them.
 */

/**
 * Describe an array to be written.
 *
 * A subarray dtype is folded into the shape, as np.save does (a (5,) array
 * of ('<i4', (2, 3)) is a (5, 2, 3) array of '<i4'). The version and layout
 * reported for the new header are those np.save would choose: the lowest
 * version that can hold it.
 *
 * What npyio_header_parse() refuses with default options is refused here
 * too: more than 64 dimensions in all, the folded ones included (NumPy 2's
 * maximum and NPYIO_LIMIT_NDIM's default), and shapes beyond NumPy's size
 * rule: the itemsize times every dimension other than 0 must fit in
 * int64_t, even when a dimension is 0 (NumPy: "array is too big"; so
 * (0, 2**60) of '<f8' is refused, (0, 2**63 - 1) of '|i1' is not).
 *
 * @param[in] dtype the element type (the header takes its own reference).
 * @param[in] ndim number of dimensions, 0 for a 0-d array.
 * @param[in] shape ndim sizes, each >= 0 (may be NULL when ndim is 0).
 * @param[in] fortran_order nonzero: the data is in column-major order.
 * @param[out] out receives the header; NULL on failure.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG for NULL dtype or out, negative
 *         ndim or sizes; NPYIO_E_LIMIT for more than 64 dimensions after
 *         folding; NPYIO_E_OVERFLOW if the element count or byte size
 *         overflows int64_t, or the size rule above fails; NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_header_new(const npyio_dtype *dtype, int ndim,
                                        const int64_t *shape,
                                        int fortran_order,
                                        npyio_header **out);

/**
 * Parse the header at the start of a .npy file.
 *
 * Accepts what NumPy >= 1.9 reads from a header that any writer produces
 * (any key order, white space, double quotes, Python 2 `L` suffixes in 1.0
 * and 2.0, old 16-byte alignment, no final newline, a higher version than
 * needed, duplicate keys of which the last wins), and refuses what NumPy
 * refuses, with a message naming the problem and its byte offset.
 *
 * The header text must be this subset of Python literals:
 *
 *     value  := dict | list | tuple | '(' value ')' | string | int
 *             | 'True' | 'False' | 'None'
 *     dict   := '{' [ value ':' value { ',' value ':' value } [','] ] '}'
 *     list   := '[' [ value { ',' value } [','] ] ']'
 *     tuple  := '(' ')' | '(' value ',' [ value { ',' value } [','] ] ')'
 *     string := [u|U|b|B] ( "'" chars "'" | '"' chars '"' )
 *     int    := ['+'|'-'] decimal-digits ['L']   ('L': 1.0 and 2.0 only)
 *
 * with spaces, tabs, form feeds, CR and LF between tokens, Python's string
 * escapes (\\ \' \" \a \b \f \n \r \t \v \ooo \xhh \uhhhh
 * \Uhhhhhhhh, backslash-newline), and integers that fit in int64_t. Python
 * forms that NumPy's literal_eval also takes but no writer produces are
 * refused by name: hex, octal, binary and underscored integers, floats,
 * comments, line continuations outside strings, implicit string
 * concatenation, triple-quoted and raw strings, \N{} escapes, sets.
 * The dict must have exactly the keys 'descr' (a string or a list),
 * 'fortran_order' (True or False) and 'shape' (a tuple of ints >= 0).
 *
 * A descr is read as npyio_dtype_parse() reads it. A subarray descr
 * is folded into the shape, as NumPy 2 does: ('<f8', (2,)) over (3,) is a
 * (3, 2) array of '<f8', and the folded dimensions count against
 * NPYIO_LIMIT_NDIM with the shape's. A subarray written as a type string
 * ('(2,)<f8') is read only where NumPy 1.24 loads it, which is when the
 * array has no elements or the subarray exactly one (then folded the
 * same way: (0,) gives (0, 2)); otherwise NPYIO_E_FORMAT. The sizes obey
 * NumPy's rule: the itemsize times every dimension other than 0 fits in
 * int64_t, for empty arrays too (NPYIO_E_OVERFLOW, "array is too big").
 *
 * Limits from options: NPYIO_LIMIT_HEADER_SIZE (checked against the length
 * field before anything is read or allocated), NPYIO_LIMIT_NDIM,
 * NPYIO_LIMIT_DEPTH.
 *
 * @param[in] bytes the beginning of the file (may be NULL when len is 0:
 *            NPYIO_E_TRUNCATED, 8 bytes needed).
 * @param[in] len how many bytes are available; bytes after the header
 *            (the data) are ignored.
 * @param[in] options limits and allocator, or NULL.
 * @param[out] out receives the header; NULL on failure.
 * @param[out] consumed on success, the data offset (magic + length field +
 *            header); on NPYIO_E_TRUNCATED, the total number of bytes
 *            needed to go on (so a caller reading from its own source can
 *            fetch the rest and call again); otherwise 0. May be NULL.
 * @return NPYIO_OK; NPYIO_E_TRUNCATED (too few bytes, see consumed);
 *         NPYIO_E_FORMAT (not an .npy header, or a malformed one);
 *         NPYIO_E_UNSUPPORTED (format version other than 1.0, 2.0, 3.0, or
 *         a descr this version cannot represent); NPYIO_E_LIMIT;
 *         NPYIO_E_OVERFLOW (an integer beyond int64_t, an element count or
 *         byte size beyond int64_t); NPYIO_E_INVALID_ARG; NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_header_parse(const void *bytes, size_t len,
                                          const npyio_options *options,
                                          npyio_header **out,
                                          size_t *consumed);

/**
 * Write the header as np.save (NumPy >= 1.24) writes it: the same bytes,
 * growth padding and 64-byte alignment included.
 *
 * @param[in] header the header.
 * @param[in] version 0 to choose as np.save does (1.0 if the text is latin-1
 *            and fits a 16-bit length, else 2.0 if latin-1, else 3.0), or
 *            1, 2 or 3 to force a version.
 * @param[out] buf where the bytes go (may be NULL when cap is 0).
 * @param[in] cap the size of buf.
 * @param[out] len the number of bytes written, or needed when buf is too
 *            small (may be NULL).
 * @return NPYIO_OK; NPYIO_E_BUFFER_TOO_SMALL (see len);
 *         NPYIO_E_INVALID_ARG for an unknown version, or a forced version
 *         that cannot hold the header (1.0 beyond 65535 bytes, 1.0/2.0 with
 *         text that is not latin-1); NPYIO_E_UNSUPPORTED for dtypes no descr
 *         can express; NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_header_emit(const npyio_header *header,
                                         int version, void *buf, size_t cap,
                                         size_t *len);

/**
 * Release a header. Dtypes borrowed from it become invalid unless a
 * reference was taken.
 * @param[in] header the header, or NULL.
 * @since 1.0
 */
NPYIO_API void npyio_header_free(npyio_header *header);

/** The element type, borrowed from the header; NULL for NULL.
 * @return the dtype (borrowed from the header), or NULL for NULL.
 * @since 1.0 */
NPYIO_API const npyio_dtype *npyio_header_dtype(const npyio_header *header);

/** The number of dimensions (0 for a 0-d array, or NULL).
 * @return the number of dimensions (0 for a 0-d array and for NULL).
 * @since 1.0 */
NPYIO_API int npyio_header_ndim(const npyio_header *header);

/**
 * The shape: ndim sizes, borrowed from the header. Never NULL for a valid
 * header (a 0-d array gives a pointer that must not be read).
 * @return ndim sizes (borrowed), or NULL for NULL.
 * @since 1.0
 */
NPYIO_API const int64_t *npyio_header_shape(const npyio_header *header);

/** 1 if the data is in Fortran (column-major) order, else 0.
 * @return 1 if the data is in Fortran order, else 0.
 * @since 1.0 */
NPYIO_API int npyio_header_is_fortran_order(const npyio_header *header);

/** The number of elements: the product of the shape (1 for 0-d).
 * @return the number of elements; 0 for NULL.
 * @since 1.0 */
NPYIO_API int64_t npyio_header_count(const npyio_header *header);

/** The size of the data in bytes: count * itemsize.
 * @return the data size in bytes; 0 for NULL.
 * @since 1.0 */
NPYIO_API int64_t npyio_header_nbytes(const npyio_header *header);

/**
 * The format's major version: that of the file for a parsed header, or
 * the one np.save would choose for a new one (1, 2 or 3).
 * @return 1, 2 or 3, or 0 for NULL.
 * @since 1.0
 */
NPYIO_API int npyio_header_version(const npyio_header *header);

/**
 * The value of the header-length field (the dict text with its padding
 * and newline): the file's, or what np.save would write.
 * @return the header length in bytes; 0 for NULL.
 * @since 1.0
 */
NPYIO_API int64_t npyio_header_length(const npyio_header *header);

/**
 * Where the data begins: the total size of magic, version, length field and
 * header. A multiple of 64 for files NumPy >= 1.24 wrote.
 * @return the offset in bytes; 0 for NULL.
 * @since 1.0
 */
NPYIO_API int64_t npyio_header_data_offset(const npyio_header *header);

/**
 * The header that describes a file's data as read with flags: with
 * NPYIO_READ_NATIVE the dtype in this host's byte order (every field of a
 * record), with NPYIO_READ_C_ORDER C order; dtype and shape otherwise the
 * same, laid out as np.save would write it. Saving data read with those
 * flags under this header writes the array the file holds.
 * @param[in] header the file's header.
 * @param[in] flags NPYIO_READ_NATIVE, NPYIO_READ_C_ORDER, or 0 (a copy).
 * @param[out] out receives the new header (npyio_header_free()).
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG (other flags, NULL arguments);
 *         NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_header_new_as_read(const npyio_header *header,
                                                uint32_t flags,
                                                npyio_header **out);

/* ------------------------------------------------------------------------ */
/* Streams                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * When to reach for it: to read or write .npy and .npz data somewhere
 * other than a path (memory, a descriptor, a FILE, your own callbacks).
 */

/** Origins for a seek callback (values pinned; not the C library's). */
#define NPYIO_SEEK_SET 0
#define NPYIO_SEEK_CUR 1
#define NPYIO_SEEK_END 2

/**
 * Callbacks of a caller-defined stream. Set `size = sizeof(npyio_stream_ops)`;
 * the library reads only members within `size` and copies the table, so a
 * table built against an older header (a smaller `size`, without the later
 * members) keeps working: its missing members count as NULL. Members
 * beyond what this version knows (a table from a newer header) must be
 * zero, else npyio_stream_open_ops() refuses it with NPYIO_E_UNSUPPORTED.
 * The table only ever grows at its end: fill it by member name (a
 * designated initializer, or zeroed and then assigned), so that code
 * written for this header builds against later ones. Every callback gets
 * the `user` pointer given to npyio_stream_open_ops() first, and returns
 * 0 on success, nonzero on failure (reported as NPYIO_E_IO, naming the
 * callback; `lock` has one more answer, below).
 *
 * read   Read up to cap bytes (cap > 0); set *got to the number read, 0 at
 *        the end of the data. May return fewer than cap at any time. NULL
 *        for a write-only stream.
 * write  Write up to len bytes (len > 0); set *put to the number written
 *        (> 0, or the call counts as failed). NULL for a read-only stream.
 * seek   Move to offset from whence (NPYIO_SEEK_*) and set *pos to the new
 *        absolute position. NULL if the stream cannot seek (a pipe): then
 *        the library never seeks, and features that need it say so
 *        (NPYIO_E_UNSUPPORTED), even when the members below are set.
 * close  Release the user's resources; called once by npyio_stream_close().
 *        May be NULL.
 *
 * The members below are optional (NULL: the stream cannot). With them a
 * caller's stream does what a file opened from a path does, except
 * mapping into memory, which stays with paths.
 *
 * pread  Read up to cap bytes (cap > 0) at absolute offset `offset`
 *        without moving the position read, write and seek use; set *got
 *        (0 only at the end of the data). The library calls it from
 *        several threads at once (when the caller's threads read members
 *        of an archive opened from the stream, and in whole reads of an
 *        array under NPYIO_LIMIT_THREADS above 1), so it must be
 *        thread-safe, as pread(2) is.
 *        With it, archives opened from the stream read members in
 *        parallel and open them as seekable streams, and readers read at
 *        offsets, as they do on files. Appends and rows in place need it.
 * pwrite Write up to len bytes (len > 0) at absolute offset `offset`
 *        without moving the position; set *put (> 0). Past the end the
 *        data grows (any gap reads as zeros). Called by one thread per
 *        stream at a time. Appends (the header's row count) and rows in
 *        place need it.
 * length Set *length to the data's total length in bytes, without moving
 *        the position. Without it the library seeks to the end and back.
 * truncate  Make the data exactly `length` bytes long: cut, or extended
 *        with zero bytes. A failed or abandoned append cuts the data back
 *        to its old length with it; appends need it.
 * sync   Push what was written to the underlying object; with durable
 *        nonzero, to stable storage too (fsync(2)). Called when a writer
 *        over the stream closes (appenders and writers in place: durable
 *        unless NPYIO_WRITE_NO_SYNC; new arrays and archives: not
 *        durable), and, for a durable append, between writing the rows
 *        and rewriting the header.
 *        Without it the library takes every write as done and durable:
 *        the crash safety npyio_writer_open_append_path() describes then holds
 *        only as far as the caller's own writes are ordered and durable.
 * lock   Take an advisory lock on the whole object: exclusive nonzero for
 *        an exclusive lock (appenders), zero for a shared one (writers of
 *        rows in place); wait nonzero to block until it is granted
 *        (NPYIO_WRITE_WAIT_FOR_LOCK), zero to answer at once. Return 0
 *        when the lock is held; NPYIO_E_LOCKED when another holder's lock
 *        conflicts (with wait zero; the opener then fails with
 *        NPYIO_E_LOCKED and writes nothing); any other nonzero value is a
 *        failure (NPYIO_E_IO). The library never releases the lock: it is
 *        the stream's until its close callback (which should release it),
 *        as the built-in descriptor streams' locks belong to their open
 *        file. A later lock call on the same stream (another writer
 *        opened on it after the first closed) asks again, perhaps for the
 *        other kind: treat it as a change of this stream's own lock, never
 *        as a conflict with itself. The caller may also release the lock
 *        itself once the writers over the stream are closed. Without
 *        this member nothing is locked: appends and rows in place through
 *        the stream are the caller's to serialise against each other.
 */
typedef struct npyio_stream_ops {
    size_t size;
    int (*read)(void *user, void *buf, size_t cap, size_t *got);
    int (*write)(void *user, const void *buf, size_t len, size_t *put);
    int (*seek)(void *user, int64_t offset, int whence, int64_t *pos);
    int (*close)(void *user);
    /* Since 1.0, optional (see above): */
    int (*pread)(void *user, void *buf, size_t cap, int64_t offset,
                 size_t *got);
    int (*pwrite)(void *user, const void *buf, size_t len, int64_t offset,
                  size_t *put);
    int (*length)(void *user, int64_t *length);
    int (*truncate)(void *user, int64_t length);
    int (*sync)(void *user, int durable);
    int (*lock)(void *user, int exclusive, int wait);
} npyio_stream_ops;

/** Flags of npyio_stream_open_path(): one of them, or both (values pinned,
 * one bit each). */
#define NPYIO_STREAM_READ 0x100000u  /**< read an existing file */
#define NPYIO_STREAM_WRITE 0x200000u /**< create or truncate, then write */

/**
 * A stream over callbacks.
 * @param[in] ops the callbacks (copied).
 * @param[in] user passed to every callback.
 * @param[in] options allocator, or NULL.
 * @param[out] out receives the stream; NULL on failure.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG (bad table: no read and no write,
 *         or size too small); NPYIO_E_UNSUPPORTED (members this version
 *         does not know are set); NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_stream_open_ops(const npyio_stream_ops *ops,
                                             void *user,
                                             const npyio_options *options,
                                             npyio_stream **out);

/**
 * A stream over a file, opened with O_CLOEXEC. For writing .npy files use
 * npyio_writer_create_path(), which replaces files atomically; this opener
 * writes in place.
 *
 * NPYIO_STREAM_READ alone reads an existing file (read ahead in blocks).
 * NPYIO_STREAM_WRITE alone creates the file or truncates it, then writes.
 * Both together open an existing file read-write, without truncating it
 * (NPYIO_E_NOT_FOUND if there is none): a stream that reads and writes
 * at offsets, changes its length, syncs and locks, on which
 * npyio_writer_open_append_stream(), npyio_writer_open_in_place_stream()
 * and npyio_npz_open_stream() work as on the path (the lock is an open
 * file description lock, held until the stream is closed).
 * @param[in] path the file's path (NUL-terminated, in the OS's encoding;
 *            on Windows UTF-8, given to the system as UTF-16).
 * @param[in] flags NPYIO_STREAM_READ, NPYIO_STREAM_WRITE, or both.
 * @return NPYIO_OK; NPYIO_E_NOT_FOUND (no such file or directory, or
 *         not a directory);
 *         NPYIO_E_IO (other OS errors, named in the message);
 *         NPYIO_E_INVALID_ARG (other flags, or neither); NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_stream_open_path(const char *path,
                                              uint32_t flags,
                                              const npyio_options *options,
                                              npyio_stream **out);

/**
 * A stream over an open file descriptor, from its current position. The
 * stream does not close the descriptor. Pipes and sockets work (not
 * seekable). On Windows a descriptor belongs to one C runtime: it must
 * come from the runtime the library was built with (msvcrt.dll for
 * mingw-w64's builds, as _open and _fileno give it there); a program of
 * another runtime (MSVC's UCRT) passes paths or callback streams, which
 * always work. On Windows the descriptor is put in binary mode
 * (_setmode(fd, _O_BINARY)), where it stays: the runtime opens files in
 * text mode by default, which would write each 0x0A byte as 0x0D 0x0A.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG (NULL out, a negative descriptor);
 *        NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_stream_open_fd(int fd,
                                            const npyio_options *options,
                                            npyio_stream **out);

/**
 * A stream over a C stdio FILE, from its current position. The stream does
 * not close the FILE; closing the stream flushes what it wrote. On
 * Windows the FILE must come from the library's own C runtime, as
 * descriptors must (npyio_stream_open_fd()), and is put in binary mode
 * as they are: fopen(path, "w") works as "wb" would.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG (NULL file or out); NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_stream_open_file(FILE *file,
                                              const npyio_options *options,
                                              npyio_stream **out);

/**
 * A read-only, seekable stream over memory the caller keeps alive and
 * unchanged until the stream is closed.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG (NULL out, or NULL bytes with len >
 *        0); NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_stream_open_memory(const void *bytes,
                                                size_t len,
                                                const npyio_options *options,
                                                npyio_stream **out);

/**
 * A writable, seekable stream into memory that grows as needed (through
 * the options' allocator). Take the bytes with npyio_stream_take_bytes().
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG (NULL out); NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_stream_create_memory(
    const npyio_options *options, npyio_stream **out);

/**
 * Take the bytes written to a growable stream: the caller owns them and
 * releases them with npyio_free(); the stream is empty afterwards.
 * @param[out] bytes receives the block (never NULL on success, even when
 *             empty).
 * @param[out] len receives the number of bytes.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG (not a growable stream).
 * @since 1.0
 */
NPYIO_API npyio_status npyio_stream_take_bytes(npyio_stream *stream,
                                               void **bytes, size_t *len);

/**
 * Read up to cap bytes from a readable stream at its position: the
 * library's own loop (short reads continued, EINTR retried), so *got is
 * below cap only at the end of the data. For the bytes of an archive
 * member (npyio_stream_open_member()) or a stream the caller did not make.
 * @param[out] got receives the number of bytes read (0 at the end).
 * @return NPYIO_OK; NPYIO_E_IO; NPYIO_E_INVALID_ARG (not a live, readable
 *         stream); a member stream's own statuses (NPYIO_E_CHECKSUM at
 *         its end, ...).
 * @since 1.0
 */
NPYIO_API npyio_status npyio_stream_read(npyio_stream *stream, void *buf,
                                         size_t cap, size_t *got);

/**
 * Close a stream: flush, run the close callback, release it. The stream is
 * released even when this reports an error.
 * @return NPYIO_OK; NPYIO_E_IO if flushing or the close callback failed.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_stream_close(npyio_stream *stream);

/**
 * Save the rest of a readable stream, from its position to its end, as
 * the file `path` below the folder `base`, by atomic replacement: for
 * extracting files whose names come from untrusted data (an archive's
 * members). The bytes go to a temporary in the file's folder, as for
 * npyio_writer_create_path() (unnamed where the system has O_TMPFILE, so
 * a process killed mid-write leaves nothing; else a hidden marked
 * temporary, which the next save of that name removes once its process
 * has died), which becomes the file only when every byte has been read
 * and written. A source that fails (a member's NPYIO_E_CHECKSUM at its
 * end, a callback's error) or a write that fails leaves the previous
 * file as it was and no temporary.
 *
 * `base` is opened as any path is (symbolic links followed: it is the
 * caller's own). Below it no symbolic link is followed, even one planted
 * while the call runs: the folders of `path` are opened one by one
 * relative to the one before without following links (made, mode 0777
 * less the umask, where missing, and left if the save then fails), and
 * whatever the final name holds is replaced as a name, never opened. A
 * new file gets the mode open(O_CREAT, 0666) would give it; a replaced
 * regular file keeps its mode (and owner and group where the caller may
 * set them). A file that exists at the path is refused unless flags has
 * NPYIO_WRITE_REPLACE: at the open and again at the commit itself (the
 * new file is linked, which fails on a taken name), so one made while the
 * call runs is never replaced either; a directory is never replaced. The
 * file and its folder are fsynced before the call returns, unless
 * NPYIO_WRITE_NO_SYNC. The source is read, not closed.
 * Needs openat() and O_NOFOLLOW on POSIX systems; elsewhere
 * NPYIO_E_UNSUPPORTED. On Windows no symbolic link or junction below
 * base is followed, each folder on the way is held open without sharing
 * its deletion (so neither it nor a folder above it can be renamed while
 * the call runs), and a path with a backslash is refused.
 * @param[in] source a live, readable stream (a member's, a file's, the
 *            caller's callbacks).
 * @param[in] base the folder (NUL-terminated; "." for the working one).
 * @param[in] path relative, in '/'-separated components, none empty, "."
 *            or ".." (on Windows, no backslash).
 * @param[in] flags NPYIO_WRITE_NO_SYNC, NPYIO_WRITE_REPLACE.
 * @param[in] options allocator and limits, or NULL.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG (source not a live stream or not
 *         readable, NULL base, NULL or empty path, an absolute path or one
 *         with an empty, "." or ".." component, other flags);
 *         NPYIO_E_NOT_FOUND (no folder `base`); NPYIO_E_IO (a symbolic link
 *         or a file where a folder of path goes, an existing file without
 *         NPYIO_WRITE_REPLACE, a directory at path, OS errors: the message
 *         says which); the source's own statuses (NPYIO_E_CHECKSUM, ...);
 *         NPYIO_E_UNSUPPORTED; NPYIO_E_NOMEM.
 * @since 1.1
 */
NPYIO_API npyio_status npyio_stream_save_under(npyio_stream *source,
                                               const char *base,
                                               const char *path,
                                               uint32_t flags,
                                               const npyio_options *options);

/* ------------------------------------------------------------------------ */
/* Reading arrays                                                           */
/* ------------------------------------------------------------------------ */

/*
 * When to reach for it: data into your own buffer, in bounded chunks,
 * by rows, converted on the way, or from a stream.
 */

/* Reads take the flags NPYIO_READ_NATIVE and NPYIO_READ_C_ORDER (above);
 * with none, the bytes arrive exactly as stored. After
 * npyio_reader_set_type() every read delivers elements of the type set:
 * sizes below are then count * that type's itemsize, not
 * npyio_header_nbytes(). */

/**
 * Open a .npy file for reading: parse its header and check that the data
 * it promises is there (seekable files: before anything is read).
 * @return NPYIO_OK; the statuses of npyio_header_parse(); NPYIO_E_NOT_FOUND;
 *         NPYIO_E_IO; NPYIO_E_TRUNCATED (file shorter than its header says,
 *         with both byte counts in the message); NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_reader_open_path(const char *path,
                                              const npyio_options *options,
                                              npyio_reader **out);

/**
 * Open a .npy array from a stream, at its current position. The stream is
 * borrowed. On a seekable stream the data's length is checked at once; on
 * a pipe, a short data section is found while reading it.
 * @return as npyio_reader_open_path(), for the stream; NPYIO_E_INVALID_ARG
 *        (not a live stream).
 * @since 1.0
 */
NPYIO_API npyio_status npyio_reader_open_stream(npyio_stream *stream,
                                                const npyio_options *options,
                                                npyio_reader **out);

/** The header, borrowed from the reader (valid until it is closed).
 * @return the header (borrowed), or NULL for NULL.
 * @since 1.0 */
NPYIO_API const npyio_header *npyio_reader_header(const npyio_reader *reader);

/**
 * Read all of the data into the caller's buffer, converting as flags ask,
 * in cache-sized blocks (no second full-size copy).
 *
 * @param[in,out] reader a reader whose data has not been read.
 * @param[out] dst at least npyio_header_nbytes() bytes.
 * @param[in] cap the size of dst.
 * @param[in] flags NPYIO_READ_NATIVE, NPYIO_READ_C_ORDER, or 0.
 * @return NPYIO_OK; NPYIO_E_BUFFER_TOO_SMALL; NPYIO_E_UNSUPPORTED (object
 *         arrays: their data is a pickle, see npyio_reader_read_pickle());
 *         NPYIO_E_TRUNCATED; NPYIO_E_IO; NPYIO_E_STATE (already read,
 *         or a chunked pass has begun); NPYIO_E_INVALID_ARG (unknown
 *         flags, NULL dst).
 * @since 1.0
 */
NPYIO_API npyio_status npyio_reader_read(npyio_reader *reader, void *dst,
                                         size_t cap, uint32_t flags);

/**
 * Read all of the data into a new buffer (release it with npyio_free()),
 * allocated through the options' allocator, 2 MiB aligned when large.
 * Never allocates more than the stream can supply: the length is checked
 * first when the stream is seekable, and the buffer grows in bounded steps
 * as data arrives when it is not.
 * @param[in] flags NPYIO_READ_NATIVE, NPYIO_READ_C_ORDER, or 0.
 * @param[out] data receives the buffer (non-NULL even for 0 bytes).
 * @param[out] len receives its size (may be NULL).
 * @return as npyio_reader_read(); NPYIO_E_OVERFLOW if the data is larger
 *         than this host's address space.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_reader_read_alloc(npyio_reader *reader,
                                               uint32_t flags, void **data,
                                               size_t *len);

/**
 * The raw bytes after the header of an object array: a Python pickle,
 * which libnpyio never runs. Everything to the end of the stream is taken
 * (the header does not give the pickle's length), in bounded steps,
 * through the options' allocator; release with npyio_free().
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG if the dtype holds no objects;
 *         NPYIO_E_IO; NPYIO_E_STATE; NPYIO_E_NOMEM; NPYIO_E_LIMIT
 *         (beyond NPYIO_LIMIT_ALLOC_BYTES).
 * @since 1.0
 */
NPYIO_API npyio_status npyio_reader_read_pickle(npyio_reader *reader,
                                                void **bytes, size_t *len);

/**
 * Read the next elements in a bounded buffer: as many whole elements as
 * fit in cap, in the order the flags ask (with NPYIO_READ_C_ORDER on
 * Fortran-order data, C order: a chunk may start and end inside a row
 * along axis 0), converted as flags ask. Memory stays bounded whatever
 * the array's size: by the caller's buffer, and for Fortran-order data in
 * C order by a block of up to 64 MiB (below). Call repeatedly; the flags
 * must be the same for every chunk of one pass (other flags are
 * NPYIO_E_STATE). A reader reads its data once, whole (npyio_reader_read,
 * _read_alloc, _read_pickle) or in one chunked pass: once either has
 * begun the other is NPYIO_E_STATE, and a pass that ended keeps giving
 * NPYIO_END. npyio_reader_read_rows() reads by position at any time. A
 * call refused before it reads (a buffer too small, a NULL buffer)
 * begins nothing; a failed read fails every later one (NPYIO_E_STATE,
 * "the reader failed earlier (...)").
 *
 * Fortran-order data in C order needs a seekable stream: rows are read in
 * large contiguous spans (short columns) or one positioned read per
 * column (long ones) and reordered in cache-sized tiles. Chunks go
 * through an internal block of as many whole rows as fit in 64 MiB (less
 * for a smaller array), reordered once and handed out chunk by chunk:
 * the reader holds up to 64 MiB more than your buffer during the pass,
 * and each column run of the file is read once per block whatever your
 * chunk size. Short columns (wide arrays) still cost about one pass over
 * the file per block, so an array of N MiB is read about N / 64 times.
 * Chunks no smaller than the block, rows larger than 64 MiB, and a block
 * that NPYIO_LIMIT_ALLOC_BYTES refuses take no block: each chunk reads
 * its own rows (a chunk inside one row of a 2-D array only its own
 * columns). On a stream that cannot seek this combination is refused.
 *
 * @param[in] flags NPYIO_READ_NATIVE, NPYIO_READ_C_ORDER, or 0.
 * @param[out] got receives the number of bytes delivered.
 * @return NPYIO_OK; NPYIO_END when no data is left (got 0);
 *         NPYIO_E_BUFFER_TOO_SMALL (cap below one element);
 *         NPYIO_E_UNSUPPORTED (objects; reordering without seek);
 *         NPYIO_E_TRUNCATED; NPYIO_E_IO; NPYIO_E_STATE (after a whole read;
 *         flags other than the pass's); NPYIO_E_INVALID_ARG (NULL got, a
 *         NULL dst with cap > 0, unknown flags).
 * @since 1.0
 */
NPYIO_API npyio_status npyio_reader_read_chunk(npyio_reader *reader,
                                               void *dst, size_t cap,
                                               uint32_t flags, size_t *got);

/**
 * Read rows [first, first + count) along axis 0 (elements, for a 1-D
 * array) into dst, converted as flags ask. The rows come out as a
 * (count, shape[1], ...) array: in C order for C-order files, and for
 * Fortran-order files in Fortran order, or in C order with
 * NPYIO_READ_C_ORDER. Seeks where it can; on a stream that cannot seek,
 * reads forward and skips (rows before the current position are then
 * refused). Independent of npyio_reader_read_chunk()'s position, and
 * allowed before, during and after a whole read or a chunked pass.
 *
 * Fortran-order data in C order from a seekable stream, read in sequence
 * (a request that starts where the previous one ended) goes through a
 * block of whole rows as npyio_reader_read_chunk() does: from the second
 * request on, as many rows as fit in 64 MiB are reordered at once and
 * later requests inside them are copies, so reading a large array a few
 * rows at a time costs about what a chunked pass costs. The block (up to
 * 64 MiB) is held until the reader closes; random requests, and requests
 * of as many rows as the block holds, read their own rows.
 *
 * @param[in] cap the size of dst: at least count rows.
 * @param[in] flags NPYIO_READ_NATIVE, NPYIO_READ_C_ORDER, or 0.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG (rows out of range, a 0-d array,
 *         unknown flags); NPYIO_E_BUFFER_TOO_SMALL; NPYIO_E_UNSUPPORTED
 *         (objects; going back on a stream that cannot seek);
 *         NPYIO_E_TRUNCATED; NPYIO_E_IO; NPYIO_E_OVERFLOW; NPYIO_E_STATE
 *         (the reader failed earlier).
 * @since 1.0
 */
NPYIO_API npyio_status npyio_reader_read_rows(npyio_reader *reader,
                                              int64_t first, int64_t count,
                                              void *dst, size_t cap,
                                              uint32_t flags);

/**
 * Read the data as elements of another numeric type, converted as NumPy's
 * astype converts them: every later read of this reader
 * (npyio_reader_read(), _read_alloc(), _read_chunk(), _read_rows(), with
 * NPYIO_READ_C_ORDER as before) delivers elements of `type`, count *
 * its itemsize bytes. npyio_reader_header() still describes the file.
 *
 * Types: bool `b1`, integers `i1 i2 i4 i8 u1 u2 u4 u8`, floats `f2 f4 f8`
 * and long double, complex `c8 c16` and long-double complex; a long
 * double (complex) only of this host's sizeof(long double) (f16 on
 * x86-64, f12 on 32-bit x86), read as this host's format. Any byte order
 * on both sides: the file's, and the type string's (`f8` and `=f8` are
 * this host's order; NPYIO_READ_NATIVE has no effect on a converted
 * read). The conversion must be allowed by np.can_cast(from, to, rule):
 * the rule is 'safe' unless flags ask for NPYIO_READ_CAST_SAME_KIND or
 * NPYIO_READ_CAST_UNSAFE (both: unsafe).
 *
 * Values are NumPy's: integers wrap modulo 2**n, integer and float
 * conversions round once to nearest even (int64 to f4, f8 to f2; long
 * double to f2 rounds through f4, as NumPy does), complex to real keeps
 * the real part, anything to bool is x != 0 (NaN is true). A float that
 * converts to an integer type it does not fit (NaN, infinity, out of
 * range after truncation: undefined in C, host-dependent in NumPy) is
 * NPYIO_E_OVERFLOW naming the element's index and value, and the reader
 * fails (later reads repeat it); what was converted before it is in the
 * buffer.
 *
 * The conversion runs where the data arrives, in blocks of 64 KiB of the
 * file's type through one bounce buffer (no second full-size copy); a
 * whole read from a file runs on NPYIO_LIMIT_THREADS threads, each with a
 * bounce buffer of its own, chunks and rows on the calling thread. Three
 * cases hold more: Fortran-order data in C order goes through a block of
 * whole rows of the file's type reordered once, of up to 64 MiB (shared
 * by the threads of a whole read; the rows asked for, for rows), as
 * npyio_reader_read_chunk() says; rows of Fortran-order data read without
 * NPYIO_READ_C_ORDER (the rows' band in the file's type, then
 * converted); and a whole read from a stream that cannot seek (the
 * file's data, then the converted copy). Fortran-order data in C order
 * with a type needs a seekable stream.
 *
 * @param[in,out] reader a reader that has read nothing yet.
 * @param[in] type a numeric type string ("<f4", "i8", ">c16", "b1"), or
 *            NULL for the data as stored (undoes an earlier call).
 * @param[in] flags NPYIO_READ_CAST_SAME_KIND, NPYIO_READ_CAST_UNSAFE, or 0.
 * @return NPYIO_OK; NPYIO_E_UNSUPPORTED (a type on either side that is not
 *         numeric, named: records, S, U, V, O, M, m; a long double of
 *         another size than this host's; a conversion the rule refuses:
 *         "cannot cast '<f8' to '<i4' under the 'safe' rule;
 *         NPYIO_READ_CAST_UNSAFE allows it (NumPy's astype casts unsafely
 *         by default)", naming the weakest flag that allows it);
 *         NPYIO_E_FORMAT (type is not a type string); NPYIO_E_STATE (a read
 *         has begun, or the reader failed); NPYIO_E_INVALID_ARG (not a
 *         reader, unknown flags).
 * @since 1.0
 */
NPYIO_API npyio_status npyio_reader_set_type(npyio_reader *reader,
                                             const char *type,
                                             uint32_t flags);

/**
 * Close a reader (not its stream). NULL is fine.
 * @return NPYIO_OK, or NPYIO_E_IO if closing a file it opened failed; the
 *         reader is released either way.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_reader_close(npyio_reader *reader);

/**
 * Load a whole .npy file in one call: npyio_reader_open_path(),
 * npyio_reader_read_alloc(), close.
 *
 * The header handed back describes the data handed back: with conversion
 * flags it is npyio_header_new_as_read() of the file's (native byte order, C
 * order), not the file's own, so that npyio_save_with_header() of the two writes the
 * same array NumPy loaded.
 * @param[in] flags NPYIO_READ_NATIVE, NPYIO_READ_C_ORDER.
 * @param[out] header receives the header (npyio_header_free()).
 * @param[out] data receives npyio_header_nbytes(*header) bytes
 *             (npyio_free()).
 * @return NPYIO_OK; the statuses of npyio_reader_open_path() and
 *         npyio_reader_read_alloc(); NPYIO_E_INVALID_ARG (NULL out
 *         arguments, unknown flags). On failure *header and *data are NULL.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_load_with_header(const char *path, uint32_t flags,
                                              const npyio_options *options,
                                              npyio_header **header,
                                              void **data);

/* ------------------------------------------------------------------------ */
/* Writing arrays                                                           */
/* ------------------------------------------------------------------------ */

/*
 * When to reach for it: data written in pieces, with a row count not
 * known in advance, rows appended or written in place by several writers.
 */

/**
 * Start writing a .npy file at a path. The header is written as np.save
 * writes it. The data goes to a temporary file in the destination's
 * directory, which replaces the destination only when npyio_writer_close()
 * succeeds; until then, and if anything fails, an existing file is left as
 * it was and no temporary remains. Temporaries are hidden beside the
 * destination and carry a fixed marker, so that no file of yours is ever
 * taken for one: NAME below is the destination's name (its first 200
 * bytes, so that a temporary's name fits wherever the destination's does).
 * On Linux (but not in a portable build, below) the temporary has no name
 * (O_TMPFILE) while it is written, so a process killed mid-write leaves
 * nothing; a file that did not exist is linked at its name directly, and
 * one that is replaced is named ".NAME.npyio.tmp" between linkat() and
 * rename() only, locked by the writer meanwhile. A process killed in
 * those microseconds leaves that file (the complete new contents); the
 * next save that replaces the same destination removes it (a file there
 * that no writer holds locked, is regular and yours) and takes the name;
 * until then it is harmless. If a
 * live save holds the name at that moment, the file is named as below
 * instead. These saves list no directory. Elsewhere (macOS, the BSDs, a
 * build with the CMake option NPYIO_PORTABLE, which takes only what
 * POSIX.1-2008, macOS and FreeBSD offer, and file systems without
 * O_TMPFILE, as some network ones) the temporary is
 * ".NAME.npyio-<pid>-<n>-<hex>.tmp" for the whole write, so a process
 * killed mid-write leaves it behind (with part of the data), and every
 * save of NAME through such a temporary first removes NAME's temporaries of
 * this form whose process has died (regular files of yours; a pid is
 * checked on this host only), which costs a listing of the directory.
 * Temporaries of other destinations are never touched.
 * A path that is a symbolic link is written through to its target,
 * under the kernel's protected_symlinks rule whatever the system's setting:
 * in a sticky world-writable directory (/tmp) a link is followed only if it
 * belongs to the caller or to the directory's owner (else NPYIO_E_IO, with
 * a message saying so). A new file gets the mode open(O_CREAT, 0666) would
 * give it (umask applied); a replaced file keeps its mode, and its owner
 * and group where the caller may set them (as root). A
 * path that names a device, FIFO or socket (/dev/stdout, a named pipe) is
 * written directly, in order, since there is no file to replace.
 * At close the file and then its directory are fsynced, unless flags has
 * NPYIO_WRITE_NO_SYNC.
 *
 * On Windows (mingw-w64 builds) paths are UTF-8, given to the system as
 * UTF-16, with '/' or a backslash between folders. The temporary is
 * named as in a portable build, flushed with FlushFileBuffers and moved
 * over the destination with MoveFileExW(MOVEFILE_REPLACE_EXISTING |
 * MOVEFILE_WRITE_THROUGH). A destination another program holds open
 * while sharing its deletion (as this library and most readers open
 * files) is replaced all the same (Windows 10's rename with POSIX
 * semantics; else the old file is first moved aside, as
 * "NAME.npyio-old-<pid>-<n>", and deleted once its holders close it: a
 * crash between the two moves leaves it there, and the destination
 * missing). One held without sharing deletion stays as it was, and the
 * save fails with NPYIO_E_IO, its message saying the file is in use by
 * another program (a sharing violation), and no temporary left. Files
 * have no owner or mode to keep there.
 * @param[in] flags NPYIO_WRITE_NO_SYNC, NPYIO_WRITE_UNKNOWN_ROWS.
 * @return NPYIO_OK; NPYIO_E_NOT_FOUND (missing directory); NPYIO_E_IO;
 *         NPYIO_E_UNSUPPORTED (a dtype no descr can express; with unknown
 *         rows, Fortran order or object dtypes); NPYIO_E_INVALID_ARG (also:
 *         unknown rows of a 0-d header); NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_writer_create_path(const char *path,
                                                const npyio_header *header,
                                                uint32_t flags,
                                                const npyio_options *options,
                                                npyio_writer **out);

/**
 * Start writing a .npy array to a stream (borrowed) at its position. The
 * header is written at once (with NPYIO_WRITE_UNKNOWN_ROWS, rewritten at
 * close). Close flushes the stream; syncing it is the caller's business.
 * @param[in] flags NPYIO_WRITE_UNKNOWN_ROWS.
 * @return as npyio_writer_create_path(); NPYIO_E_UNSUPPORTED (unknown rows
 *         on a stream that cannot seek).
 * @since 1.0
 */
NPYIO_API npyio_status npyio_writer_create_stream(npyio_stream *stream,
                                                  const npyio_header *header,
                                                  uint32_t flags,
                                                  const npyio_options *options,
                                                  npyio_writer **out);

/**
 * Write the next len bytes of data, in the header's memory order and byte
 * order, in any number of calls. For an object dtype the bytes are a
 * pickle the caller made, written verbatim (no count applies).
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG (more bytes than the header's
 *         nbytes: the message gives both numbers); NPYIO_E_IO; NPYIO_E_STATE
 *         (the writer failed earlier: the first error is repeated).
 * @since 1.0
 */
NPYIO_API npyio_status npyio_writer_write(npyio_writer *writer,
                                          const void *data, size_t len);

/**
 * Finish: check that exactly nbytes were written (NPYIO_E_TRUNCATED naming
 * both numbers if fewer), flush, and for paths fsync and rename into place.
 * The writer is released even when this fails; a failed writer to a path
 * removes its temporary file and leaves the destination untouched, with
 * one exception no writer can avoid: a sync that fails after the new file
 * took the old one's place (the directory's, after the rename; an append's
 * header, rewritten in place) is NPYIO_E_IO with a message saying that the
 * new file "may not survive a crash": it is in place, and either it or
 * the old one is there after a crash.
 * @return NPYIO_OK; NPYIO_E_TRUNCATED (fewer bytes than promised, or not
 *        whole rows); NPYIO_E_IO; NPYIO_E_STATE (the writer failed earlier:
 *        the first error is repeated); NPYIO_E_INVALID_ARG.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_writer_close(npyio_writer *writer);

/**
 * Abandon a writer: nothing replaces the destination, the temporary file
 * is removed, the writer is released. NULL is fine.
 * @since 1.0
 */
NPYIO_API void npyio_writer_abort(npyio_writer *writer);

/**
 * Append rows along axis 0 to an existing C-order .npy file.
 *
 * `rows` describes what will be appended: its dtype and dimensions after
 * the first must be the file's, in C order (NPYIO_E_INVALID_ARG otherwise,
 * the file untouched), its shape[0] is the number of rows (counted even
 * when a row has 0 bytes); write them with npyio_writer_write() and close.
 * A file whose header says fortran_order True but whose C and Fortran
 * layouts coincide (at most one dimension above 1, or no elements) takes
 * rows too; its new header says False, as np.save would write it.
 *
 * Locking: the appender holds an exclusive lock on the file (an open file
 * description lock, advisory: it excludes other libnpyio appenders and
 * in-place writers, in any process, not programs that ignore it) from
 * open to close. Two writers in one process exclude each other as two
 * processes do: the lock belongs to the open file, not the process. On
 * Linux it is an OFD lock (F_OFD_SETLK); on macOS, the BSDs and in a
 * portable build (NPYIO_PORTABLE, see npyio_writer_create_path()) it is
 * flock(), which behaves the same here; never a classic fcntl() record
 * lock, which a process drops when it closes any descriptor of the file.
 * On Linux the two kinds do not see each other: a portable build and an
 * ordinary one do not exclude each other. If another holds a conflicting
 * lock, this fails at once with NPYIO_E_LOCKED (the message says whether
 * an appender or in-place writers hold it), or with
 * NPYIO_WRITE_WAIT_FOR_LOCK waits for it. The lock belongs to the open
 * file: a process forked while the writer is
 * open shares it (and keeps it held until it too has closed the file, or
 * exited), so fork before opening writers that must exclude each other.
 *
 * A failed or aborted append (a full disk, too few bytes, an error at
 * close, npyio_writer_abort()) leaves the file byte for byte as it was:
 * cut back to its length at open, and any bytes it had after its data
 * (which the rows go over) put back; those are kept in memory as they
 * are overwritten, within NPYIO_LIMIT_ALLOC_BYTES.
 *
 * Crash safety: the rows are written after the data, then (unless
 * NPYIO_WRITE_NO_SYNC, fdatasync'd, and only then) the header's shape is
 * rewritten in place, within the header's existing length (NumPy >= 1.24
 * leaves room for it: up to 21 digits). Only the bytes that change are
 * written, in one write: usually the shape's digits and the padding after
 * them, a few bytes. A process killed at any moment, or with durability a
 * power loss, leaves a file that loads with either the old shape (extra
 * bytes after the data are ignored, and overwritten by the next append) or
 * the new one. The residual risk: a power loss during that one small
 * write on a device that does not write a sector atomically, or when the
 * changed bytes straddle a sector boundary, can leave a torn header. When the new header does not fit (files
 * from NumPy <= 1.23 have no growth room), the file is rewritten through a
 * temporary file and a rename: time in proportion to the file's size, and
 * twice its disk space meanwhile; still never a half-written file. So is a
 * format 1.0 or 2.0 file whose header names characters past latin-1 with
 * \u escapes: its new header is written in format 3.0, as np.save would.
 * @param[in] flags NPYIO_WRITE_NO_SYNC, NPYIO_WRITE_WAIT_FOR_LOCK.
 * @return NPYIO_OK; NPYIO_E_NOT_FOUND; NPYIO_E_IO; NPYIO_E_LOCKED; the
 *         header statuses of the file; NPYIO_E_TRUNCATED (the file is
 *         shorter than its header says); NPYIO_E_INVALID_ARG (rows that do
 *         not match the file's); NPYIO_E_UNSUPPORTED (Fortran-order data,
 *         object dtypes); NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_writer_open_append_path(
    const char *path, const npyio_header *rows, uint32_t flags,
    const npyio_options *options, npyio_writer **out);

/**
 * Open an existing C-order .npy file to write rows in place with
 * npyio_writer_write_rows(): positional writes with no shared file offset,
 * so several writers (threads, each with its own handle, or processes)
 * can fill disjoint row ranges of one file at once. The header is never
 * touched. Close syncs the data unless NPYIO_WRITE_NO_SYNC. Each such
 * writer holds a shared lock on the file, so that no append runs meanwhile
 * (see npyio_writer_open_append_path(): NPYIO_E_LOCKED,
 * NPYIO_WRITE_WAIT_FOR_LOCK).
 * @param[in] flags NPYIO_WRITE_NO_SYNC, NPYIO_WRITE_WAIT_FOR_LOCK.
 * @return as npyio_writer_open_append_path().
 * @since 1.0
 */
NPYIO_API npyio_status npyio_writer_open_in_place_path(
    const char *path, uint32_t flags, const npyio_options *options,
    npyio_writer **out);

/**
 * npyio_writer_open_append_path() on a stream instead of a path: append rows
 * along axis 0 to the .npy array the stream holds from offset 0 (its
 * whole data: a stream from npyio_stream_open_path() with both
 * NPYIO_STREAM_READ and NPYIO_STREAM_WRITE, or the caller's callbacks
 * with read, seek, pread, pwrite and truncate). The stream is borrowed:
 * the caller closes it after the writer; the writer leaves its position
 * undefined.
 *
 * Locking: the stream is locked exclusively (its lock member, for the
 * caller's callbacks; the descriptor's lock for a path stream, held until
 * the stream closes), waiting with NPYIO_WRITE_WAIT_FOR_LOCK. A callback
 * stream without a lock member is not locked: appends through it are the
 * caller's to serialise, against each other and against writers in place.
 *
 * Failures and crashes: as npyio_writer_open_append_path(): the rows go after
 * the data, the stream is synced (its sync member, durable unless
 * NPYIO_WRITE_NO_SYNC), then only the header's changed bytes are
 * rewritten in one positioned write; a failed or aborted append puts
 * back the bytes it overwrote and truncates the stream to its old length
 * (best effort: if those calls fail too, the header still describes the
 * old data, so the array loads as it was, perhaps with bytes after it).
 * One difference: a header with no room for the new row count (files
 * from NumPy <= 1.23) cannot be rewritten through a temporary file, so
 * npyio_writer_close() fails with NPYIO_E_UNSUPPORTED and the append is
 * undone.
 * @param[in] stream the array's stream (borrowed).
 * @param[in] rows as npyio_writer_open_append_path().
 * @param[in] flags NPYIO_WRITE_NO_SYNC, NPYIO_WRITE_WAIT_FOR_LOCK.
 * @param[in] options allocator, limits, or NULL.
 * @param[out] out receives the writer; NULL on failure.
 * @return as npyio_writer_open_append_path(), without NPYIO_E_NOT_FOUND;
 *         NPYIO_E_UNSUPPORTED (a stream that cannot read, write or change
 *         its length at offsets, or cannot seek); NPYIO_E_INVALID_ARG
 *         (not a live stream).
 * @since 1.0
 */
NPYIO_API npyio_status npyio_writer_open_append_stream(
    npyio_stream *stream, const npyio_header *rows, uint32_t flags,
    const npyio_options *options, npyio_writer **out);

/**
 * npyio_writer_open_in_place_path() on a stream instead of a path: rows of the
 * .npy array the stream holds from offset 0 written at their positions
 * with npyio_writer_write_rows() (the stream's pwrite: several writers,
 * each over its own stream of one object, may fill disjoint rows at
 * once). The stream is borrowed: the caller closes it after the writer.
 * It must read (read, seek) and write at offsets (pwrite). Each writer
 * takes a shared lock where the stream can lock (as
 * npyio_writer_open_append_stream() says: without a lock member, nothing
 * keeps an append away meanwhile). Close syncs (durably unless
 * NPYIO_WRITE_NO_SYNC) where the stream can.
 * @param[in] flags NPYIO_WRITE_NO_SYNC, NPYIO_WRITE_WAIT_FOR_LOCK.
 * @return as npyio_writer_open_append_stream().
 * @since 1.0
 */
NPYIO_API npyio_status npyio_writer_open_in_place_stream(
    npyio_stream *stream, uint32_t flags, const npyio_options *options,
    npyio_writer **out);

/**
 * Write rows [first, first + count) of a writer opened in place; len must
 * be count rows' bytes, in the file's byte order.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG (rows beyond the file's, wrong
 *         length); NPYIO_E_STATE (not opened in place); NPYIO_E_IO.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_writer_write_rows(npyio_writer *writer,
                                               int64_t first, int64_t count,
                                               const void *data, size_t len);

/**
 * Save a whole array in one call: open, write, close (as
 * npyio_writer_create_path(): atomic replacement, synced unless
 * NPYIO_WRITE_NO_SYNC).
 * @param[in] data the array's bytes, in the header's byte and memory order.
 * @param[in] len their number: npyio_header_nbytes() exactly.
 * @param[in] flags NPYIO_WRITE_NO_SYNC.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG (len is not the header's nbytes:
 *         the message gives both; object dtypes, whose pickle is written
 *         with the writer API); the statuses of npyio_writer_create_path()
 *         and npyio_writer_close().
 * @since 1.0
 */
NPYIO_API npyio_status npyio_save_with_header(const char *path,
                                              const npyio_header *header,
                                              const void *data, size_t len,
                                              uint32_t flags,
                                              const npyio_options *options);

/* ------------------------------------------------------------------------ */
/* Memory mapping                                                           */
/* ------------------------------------------------------------------------ */

/*
 * When to reach for it: arrays larger than memory, or used in place
 * without a copy (also stored archive members).
 */

/**
 * Map an existing .npy file, read-only, or read-write with
 * NPYIO_MAP_WRITE; changes through a read-write mapping are synced to the
 * disk at npyio_map_close() unless NPYIO_WRITE_NO_SYNC.
 * @param[in] flags NPYIO_MAP_WRITE, NPYIO_WRITE_NO_SYNC.
 * @return NPYIO_OK; NPYIO_E_NOT_FOUND; NPYIO_E_IO; the header statuses;
 *         NPYIO_E_TRUNCATED (the file is shorter than its header says);
 *         NPYIO_E_UNSUPPORTED (object dtypes: a pickle is not an array);
 *         NPYIO_E_OVERFLOW (larger than this host's address space).
 * @since 1.0
 */
NPYIO_API npyio_status npyio_map_open_path(const char *path, uint32_t flags,
                                           const npyio_options *options,
                                           npyio_map **out);

/**
 * Create a .npy file for a header and map it read-write so the caller
 * fills it in place: NumPy's `open_memmap(mode='w+')`. The file gets the
 * header np.save would write for the header's dtype, shape and order
 * (whatever file the header came from: npyio_map_header() describes the
 * created file), and its data reads as zeros until written.
 *
 * The disk blocks of the data are reserved (posix_fallocate; on macOS and
 * in a portable build, NPYIO_PORTABLE, which lack it, by writing the
 * zeros), so a disk too full for the array fails here with NPYIO_E_IO
 * rather than killing the process with SIGBUS while the mapping is
 * written; this costs time in proportion to the size on file systems
 * that cannot reserve blocks without writing them (and always where the
 * zeros are written). With NPYIO_MAP_SPARSE the data is a hole instead,
 * allocated as it is written: instant and using no space until then,
 * with the SIGBUS risk on a full disk.
 *
 * The file is built under a temporary name and renamed into place before
 * this returns: a failure leaves an existing file at the path as it was,
 * except the one past the point of no return, as for npyio_writer_close():
 * a sync of the directory that fails after the rename (NPYIO_E_IO, the
 * message saying the new file may not survive a crash). The path then
 * holds the new file, its data zeros, and no map is handed back.
 * The path is treated as by npyio_writer_create_path() (symbolic links,
 * mode and owner of a replaced file); the file and its directory are
 * synced before this returns, and the data at npyio_map_close(), unless
 * NPYIO_WRITE_NO_SYNC.
 * @param[in] flags NPYIO_WRITE_NO_SYNC, NPYIO_MAP_SPARSE.
 * @return as npyio_map_open_path(); NPYIO_E_UNSUPPORTED for object dtypes.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_map_create_path(const char *path,
                                             const npyio_header *header,
                                             uint32_t flags,
                                             const npyio_options *options,
                                             npyio_map **out);

/** The data (borrowed; NULL for a NULL map). For an array of 0 bytes, a
 * pointer that must not be read.
 * @return the data (borrowed), or NULL for NULL.
 * @since 1.0 */
NPYIO_API void *npyio_map_data(const npyio_map *map);

/** The header (borrowed).
 * @return the header (borrowed), or NULL for NULL.
 * @since 1.0 */
NPYIO_API const npyio_header *npyio_map_header(const npyio_map *map);

/**
 * 1 if the data's address is a multiple of the dtype's alignment (so it can
 * be used as a C array of the type), else 0. Files NumPy >= 1.24 writes
 * always are (their data starts at a multiple of 64).
 * @return 1 or 0 (0 for NULL).
 * @since 1.0
 */
NPYIO_API int npyio_map_is_aligned(const npyio_map *map);

/**
 * Unmap. For a read-write map opened without NPYIO_WRITE_NO_SYNC, first
 * flush the changes to the file (msync). NULL is fine; the map is released
 * even when flushing fails.
 * @return NPYIO_OK; NPYIO_E_IO.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_map_close(npyio_map *map);

/* ------------------------------------------------------------------------ */
/* .npz archives: reading                                                   */
/* ------------------------------------------------------------------------ */

/*
 * When to reach for it: an archive's members one by one (listed,
 * found, loaded, read in chunks or mapped) with the archive opened once.
 */

/**
 * Open an archive file.
 *
 * Names are decoded as Python's zipfile decodes them: UTF-8 when the entry
 * says so (flag 0x800, checked strictly), code page 437 otherwise, cut at
 * a NUL byte. Bytes in front of the archive (a self-extractor's stub) are
 * allowed, as zipfile allows them.
 * @param[in] options limits (NPYIO_LIMIT_NPZ_*, and those of the members'
 *            headers) and allocator, copied; NULL for the defaults.
 * @return NPYIO_OK; NPYIO_E_NOT_FOUND; NPYIO_E_IO; NPYIO_E_FORMAT (not a
 *         ZIP archive, inconsistent end records, a bad directory entry or
 *         local header, overlapping members), NPYIO_E_TRUNCATED (records
 *         or headers that run past the end of the file);
 *         NPYIO_E_UNSUPPORTED (an archive split over several disks);
 *         NPYIO_E_LIMIT (NPYIO_LIMIT_NPZ_MEMBERS,
 *         NPYIO_LIMIT_NPZ_TOTAL_BYTES); NPYIO_E_NOMEM. Messages name the
 *         entry or member and the offset.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_npz_open_path(const char *path,
                                           const npyio_options *options,
                                           npyio_npz **out);

/**
 * Open an archive from a seekable stream (borrowed: it must stay open
 * until the archive and every reader of its members are closed). The
 * archive is the whole stream, from offset 0.
 * @return as npyio_npz_open_path(); NPYIO_E_UNSUPPORTED for a stream that
 *         cannot seek (a ZIP archive's directory is at its end: copy a
 *         pipe to a file first).
 * @since 1.0
 */
NPYIO_API npyio_status npyio_npz_open_stream(npyio_stream *stream,
                                             const npyio_options *options,
                                             npyio_npz **out);

/**
 * Close an archive. Readers, streams and maps of its members must be
 * closed first, except maps (which keep the file). NULL is fine.
 * @return NPYIO_OK, or NPYIO_E_IO if closing a file it opened failed.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_npz_close(npyio_npz *npz);

/** The number of members.
 * @return the count; 0 for NULL.
 * @since 1.0 */
NPYIO_API size_t npyio_npz_count(const npyio_npz *npz);

/** A member's file name in UTF-8 ("a.npy").
 * @return the name, borrowed until the archive is closed; NULL for an
 *         index out of range.
 * @since 1.0 */
NPYIO_API const char *npyio_npz_name(const npyio_npz *npz, size_t index);

/** A member's NumPy key: its file name without a final ".npy" ("a").
 * @return the key, borrowed until the archive is closed; NULL for an
 *         index out of range.
 * @since 1.0 */
NPYIO_API const char *npyio_npz_key(const npyio_npz *npz, size_t index);

/**
 * Find a member as np.load's archive does: the member whose file name is
 * `key`, else the one named `key` + ".npy"; among members of one name,
 * the last (as zipfile's and NumPy's lookups do).
 * @param[out] index receives the member's index.
 * @param[out] ambiguous receives 1 if another member has the chosen
 *             one's name or key (NumPy's choice was made among several),
 *             else 0; may be NULL.
 * @return NPYIO_OK; NPYIO_E_NOT_FOUND; NPYIO_E_INVALID_ARG.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_npz_find(const npyio_npz *npz, const char *key,
                                      size_t *index, int *ambiguous);

/** What npyio_npz_stat() reports of a member. Values are pinned. */
typedef int32_t npyio_npz_stat_id;
/** The compression method: 0 stored, 8 deflate; others as found (12
 * bzip2, 14 lzma, ...), which this library lists but cannot read. */
#define NPYIO_NPZ_STAT_METHOD 1
/** The entry's general purpose flags (bit 0: encrypted; bit 3: sizes
 * after the data; bit 11: UTF-8 name). */
#define NPYIO_NPZ_STAT_FLAGS 2
/** The CRC-32 of the uncompressed bytes, as the directory declares it. */
#define NPYIO_NPZ_STAT_CRC32 3
/** The member's size in the archive, in bytes. */
#define NPYIO_NPZ_STAT_COMPRESSED_SIZE 4
/** The member's uncompressed size (an .npy member's file size). */
#define NPYIO_NPZ_STAT_SIZE 5
/** The absolute offset of the member's local header in the archive. */
#define NPYIO_NPZ_STAT_HEADER_OFFSET 6
/** The absolute offset of the member's first byte of data. */
#define NPYIO_NPZ_STAT_DATA_OFFSET 7
/** 1 if the member is an .npy file (it starts with NumPy's magic
 * "\x93NUMPY", whatever its name), else 0; -1 if this library cannot
 * tell, because it cannot decompress the member (see NPYIO_NPZ_STAT_READABLE).
 * Also 0 for a member it can decompress but declines to read (a stored
 * member whose two sizes differ, one over a limit) and for one whose first
 * bytes cannot be read (damage): npyio_reader_open_member() says why. */
#define NPYIO_NPZ_STAT_IS_ARRAY 8
/** For a stored .npy member: the absolute offset of its array data (after
 * its .npy header); -1 for other members, and for one whose preamble
 * every reader refuses (a version other than 1.0, 2.0 and 3.0, a header
 * length over NPYIO_LIMIT_HEADER_SIZE or past the member's end; 1.0 gave
 * an offset for versions 1.x, 2.x and 3.x). */
#define NPYIO_NPZ_STAT_ARRAY_OFFSET 9
/** 1 if NPYIO_NPZ_STAT_ARRAY_OFFSET is a multiple of 64 (the member can be
 * mapped with its data aligned for any type); 0 otherwise, always for
 * deflated members. */
#define NPYIO_NPZ_STAT_ALIGNED 10
/** 1 if this library can read the member (stored or deflated, neither
 * encrypted nor patched), else 0. */
#define NPYIO_NPZ_STAT_READABLE 11
/** 1 if the name stored in the archive holds a NUL byte, else 0. The name
 * is cut there (npyio_npz_name()), as zipfile cuts it; a tool that
 * extracts files should refuse such a member rather than trust the cut. */
#define NPYIO_NPZ_STAT_NAME_CUT 12
/** The member's block index (see NPYIO_LIMIT_THREADS), checked against
 * its data: 0 if it has none (stored members, members written on one
 * thread, an index of a later version), its block count if it is proven
 * as readers prove it (every block from the first inflating alone to its
 * declared length and ending where the next begins: readers may use it),
 * -1 if it has one that is not (readers never use it and inflate from
 * the start; `npyio validate` warns). This one reads and inflates the
 * member (on NPYIO_LIMIT_THREADS threads): as costly as a read; it may
 * fail with NPYIO_E_NOMEM or NPYIO_E_IO. */
#define NPYIO_NPZ_STAT_BLOCK_INDEX 13

/**
 * One fact about a member.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG (an index out of range, an
 *         unknown field, NULL arguments); for NPYIO_NPZ_STAT_BLOCK_INDEX
 *         also NPYIO_E_NOMEM and NPYIO_E_IO.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_npz_stat(const npyio_npz *npz, size_t index,
                                      npyio_npz_stat_id field, int64_t *value);

/**
 * Open a member for reading as an .npy array: every reader call and flag
 * works (whole, into a buffer, chunks, rows, conversions). Stored members
 * are read where they lie in the archive (positioned reads, seeking is
 * free); deflated ones are inflated, and reading backwards (rows before
 * the last ones read) inflates again from the member's start.
 *
 * How a deflated member is inflated, and the memory it takes beyond the
 * destination:
 *  - a read of everything left of a member that declares at most 257 MiB
 *    (an array of 256 MiB and its header; and at most
 *    NPYIO_LIMIT_ALLOC_BYTES, its compressed size too), in the stored
 *    byte order and layout (npyio_npz_load(),
 *    npyio_reader_read_alloc(), npyio_reader_read() into the caller's
 *    buffer, a member stream read whole): one libdeflate call, about twice
 *    zlib's speed. Its compressed bytes are read into one block (the
 *    compressed size). libdeflate writes a stream from its start, .npy
 *    header included: a load (npyio_npz_load(), npyio_reader_read_alloc())
 *    allocates its block with room for the header before the data, which
 *    lands in place and is moved to the block's start (nothing more); a
 *    member stream read from its first byte inflates into the buffer
 *    given; a read into the caller's buffer after the header
 *    (npyio_reader_read()) inflates into a scratch block of the member
 *    whose data is then copied (the member's size more);
 *  - larger members, chunks, rows, reads that convert or reorder (in
 *    blocks; a block that is all of a small member takes the one call,
 *    through a scratch), and members whose sizes do not allow the one
 *    call: zlib's streaming inflate straight into the destination, in
 *    bounded memory (its window and 256 KiB of compressed input);
 *  - with NPYIO_LIMIT_THREADS above 1, a member with a block index
 *    (see NPYIO_LIMIT_THREADS) inflates its blocks on the threads, through
 *    zlib, into the destination; except, on 2 threads, a read the one
 *    libdeflate call above takes, which is faster than zlib on two
 *    threads (since 1.1; from 3 threads on, the blocks). Chunks of such a
 *    member inflate the blocks ahead on the threads too (since 1.1), in
 *    up to six blocks per thread (NPYIO_LIMIT_THREADS says how).
 * Both inflaters give the same bytes, statuses and messages: data that
 * does not inflate in the one call cleanly to exactly the declared size
 * and the directory's CRC-32 is read by the streaming inflate, which says
 * what is wrong. One difference remains, for deflate data made to show
 * it: libdeflate takes some streams zlib (and so np.load) refuses, such
 * as a dynamic block declaring 287 or 288 literal/length codes; when the
 * bytes it gives have the directory's CRC-32, a read that inflates the
 * whole member from its first byte (a member stream read whole,
 * npyio_npz_verify(), `npyio validate`) takes them, while a reader, whose
 * .npy header read goes through zlib, refuses the member (NPYIO_E_FORMAT,
 * zlib's message).
 *
 * The CRC-32 is checked whenever a read reaches the member's end having
 * read every byte from its start (a whole read, or chunks to the end);
 * npyio_npz_verify() checks it at any time.
 *
 * Before anything is inflated, a member whose declared size exceeds
 * NPYIO_LIMIT_NPZ_MEMBER_BYTES, or NPYIO_LIMIT_NPZ_RATIO times its
 * compressed size, is refused; inflating past the declared size, or
 * ending short of it, is an error.
 * @param[out] out the reader (npyio_reader_close(); the archive must stay
 *             open until then).
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG (index out of range);
 *         NPYIO_E_UNSUPPORTED (encrypted or patched members, compression
 *         methods other than stored and deflate: named); NPYIO_E_LIMIT;
 *         NPYIO_E_FORMAT (not an .npy member, a malformed header, corrupt
 *         deflate data); the statuses of npyio_reader_open_stream(). Later
 *         reads may also fail with NPYIO_E_CHECKSUM, NPYIO_E_FORMAT (more
 *         data than declared) and NPYIO_E_TRUNCATED (less), naming the
 *         member.
 *
 * Damage is reported as damage, not as its symptom: when a failure could
 * come from garbled bytes (no .npy magic, a malformed header, short data),
 * the member is read whole and checked, and if its bytes are damaged that
 * is the failure: NPYIO_E_CHECKSUM (a CRC-32 that does not match),
 * NPYIO_E_FORMAT (deflate data that does not inflate) or
 * NPYIO_E_TRUNCATED (a deflate stream that ends early), with the message
 * "member 'b.npy' of PATH is damaged (...)" ("of PATH" for archives
 * opened from a path), as np.load reports zipfile's CRC check. The same
 * holds for npyio_npz_load() and npyio_npz_verify().
 * @since 1.0
 */
NPYIO_API npyio_status npyio_reader_open_member(npyio_npz *npz, size_t index,
                                                npyio_reader **out);

/**
 * Open a member's uncompressed bytes as a read-only, seekable stream (any
 * member, .npy or not), checked as npyio_reader_open_member() checks them.
 * Close it with npyio_stream_close() before the archive.
 * @return as npyio_reader_open_member(), without the header statuses.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_stream_open_member(npyio_npz *npz, size_t index,
                                                npyio_stream **out);

/**
 * Map a stored .npy member of an archive opened from a path, read-only,
 * where it lies in the file: npyio_map_data(), npyio_map_header() and
 * npyio_map_is_aligned() as for a .npy file (see NPYIO_NPZ_STAT_ALIGNED). The CRC
 * is not checked (that would read every page); call npyio_npz_verify()
 * for that. The map outlives the archive.
 *
 * The pages are the archive file's own, as for npyio_map: if another
 * process truncates the archive while it is mapped, touching a page past
 * the new end raises SIGBUS, which kills the process unless it handles
 * the signal; no library can turn that into an error. libnpyio's own
 * writers never shrink an archive in place (a save replaces the file
 * through a rename, which leaves the mapped one as it was). Where another
 * program may cut the archive, read the member instead
 * (npyio_reader_open_member(), npyio_npz_load()): reads use pread() and a
 * cut archive is NPYIO_E_TRUNCATED, naming the member ("the archive ends
 * inside it"), never a signal; or map a copy the other program cannot
 * reach.
 * @return NPYIO_OK; NPYIO_E_UNSUPPORTED (a deflated member, an archive
 *         opened from a stream, object dtypes); the statuses of
 *         npyio_map_open_path().
 * @since 1.0
 */
NPYIO_API npyio_status npyio_map_open_member(npyio_npz *npz, size_t index,
                                             npyio_map **out);

/**
 * Read a member to its end and check its CRC-32 (and, for a deflated
 * member, that it inflates to exactly its declared size).
 * @return NPYIO_OK; NPYIO_E_CHECKSUM; NPYIO_E_FORMAT; NPYIO_E_TRUNCATED;
 *         NPYIO_E_UNSUPPORTED; NPYIO_E_LIMIT; NPYIO_E_IO; the message names
 *         the member.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_npz_verify(npyio_npz *npz, size_t index);

/**
 * Load member `index` of an open archive in one call and one free, as
 * npyio_load() loads a file: the data in native byte order and C
 * order (CRC checked), its type and shape written into the caller's
 * buffers. Open the archive once (npyio_npz_open_path()) and load each
 * member with one call; find a key's index with npyio_npz_find().
 *
 * @param[in] npz the archive.
 * @param[in] index the member (0 .. npyio_npz_count() - 1).
 * @param[out] data receives the elements (npyio_free(); never NULL on
 *             success).
 * @param[out] len receives their size in bytes.
 * @param[out] type receives NumPy's dtype.str, NUL-terminated, or the
 *             descr list of a record (as npyio_load()).
 * @param[in] type_cap the size of type, NUL included.
 * @param[out] ndim receives the number of dimensions.
 * @param[out] shape receives ndim lengths.
 * @param[in] shape_cap the number of elements shape holds.
 * @return NPYIO_OK; NPYIO_E_BUFFER_TOO_SMALL (type or shape too small);
 *         NPYIO_E_INVALID_ARG (index out of range, as for every call
 *         taking an index); the statuses of
 *         npyio_reader_open_member() and npyio_reader_read_alloc(), damage
 *         reported as damage (see npyio_reader_open_member()). On failure
 *         *data is NULL and *len 0.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_npz_load(npyio_npz *npz, size_t index,
                                      void **data, size_t *len, char *type,
                                      size_t type_cap, int *ndim,
                                      int64_t *shape, size_t shape_cap);

/**
 * Load member `index` of an open archive in one call as elements of a
 * numeric type: npyio_load_as() for a member (the same types, rules,
 * values and statuses, with npyio_npz_load()'s for the member).
 *
 * @param[in] type the numeric type to deliver, or NULL for the type as
 *            stored in native byte order.
 * @param[in] flags NPYIO_READ_CAST_SAME_KIND, NPYIO_READ_CAST_UNSAFE, or 0.
 * @return as npyio_load_as() and npyio_npz_load().
 * @since 1.0
 */
NPYIO_API npyio_status npyio_npz_load_as(npyio_npz *npz, size_t index,
                                         const char *type, uint32_t flags,
                                         void **data, size_t *len, int *ndim,
                                         int64_t *shape, size_t shape_cap);

/* ------------------------------------------------------------------------ */
/* .npz archives: writing                                                   */
/* ------------------------------------------------------------------------ */

/*
 * When to reach for it: members written in pieces or with unknown row
 * counts, .npy files or other archives' members copied in, an archive
 * written to a stream, or several members appended at once.
 */

/**
 * Create an archive at path, replaced atomically as npyio_writer_create_path()
 * replaces .npy files (a temporary file renamed over the path at
 * npyio_npz_writer_close(), synced unless NPYIO_WRITE_NO_SYNC; a failed or
 * aborted archive leaves an existing file untouched).
 * @param[in] flags NPYIO_WRITE_NO_SYNC, NPYIO_NPZ_WRITE_NO_ALIGN,
 *            NPYIO_NPZ_WRITE_ZLIB (since 1.1).
 * @return NPYIO_OK; the statuses of npyio_writer_create_path();
 *         NPYIO_E_INVALID_ARG.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_npz_writer_create_path(
    const char *path, uint32_t flags, const npyio_options *options,
    npyio_npz_writer **out);

/**
 * Write an archive to a stream (borrowed), from its position, which must
 * be able to seek (each member's local header is completed after its
 * data): a pipe is refused with NPYIO_E_UNSUPPORTED; write to a file and
 * copy it.
 * @param[in] flags NPYIO_NPZ_WRITE_NO_ALIGN, NPYIO_NPZ_WRITE_ZLIB (since
 *            1.1).
 * @return NPYIO_OK; NPYIO_E_UNSUPPORTED; NPYIO_E_IO; NPYIO_E_INVALID_ARG;
 *         NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_npz_writer_create_stream(
    npyio_stream *stream, uint32_t flags, const npyio_options *options,
    npyio_npz_writer **out);

/**
 * Add members to an existing archive, crash-safely: the archive is read
 * and checked whole (as npyio_npz_open_path() does), copied to a temporary
 * file in its directory (blocks shared where the file system can clone
 * them, else a copy in the kernel: time and space in proportion to the
 * archive), the new members go where its directory was, and
 * npyio_npz_writer_close() renames the copy over the archive. A process
 * killed at any moment leaves the old archive or the new one; a failed or
 * aborted append leaves the old one. New keys may not repeat old ones,
 * nor be taken by np.load for them: key K is refused when a member is
 * named K or K.npy (NPYIO_E_INVALID_ARG from the add, naming it).
 *
 * Only this library's reader decides where the old members and directory
 * are (minizip, which writes the new members, is given end records of
 * ours, so that bytes in a comment or in an array that look like end
 * records cannot mislead it), and before the rename the result is read
 * back: every old member unchanged (name, offsets, sizes, CRC-32), then
 * exactly the new ones, the comment kept; otherwise
 * npyio_npz_writer_close() fails with NPYIO_E_FORMAT and the old archive
 * stays. An archive whose directory ends at an offset whose bytes spell a
 * ZIP64 locator's signature (0x07064b50 modulo 4 GiB, and a few offsets
 * past 30 GB) cannot be given such records: NPYIO_E_UNSUPPORTED.
 *
 * Locking: as npyio_writer_open_append_path(), an exclusive lock on the archive
 * from open to close excludes other appenders (NPYIO_E_LOCKED, or wait
 * with NPYIO_WRITE_WAIT_FOR_LOCK); an appender that waited appends to the
 * archive the previous one left.
 * @param[in] flags NPYIO_WRITE_NO_SYNC, NPYIO_NPZ_WRITE_NO_ALIGN,
 *            NPYIO_NPZ_WRITE_ZLIB (since 1.1),
 *            NPYIO_WRITE_WAIT_FOR_LOCK.
 * @return NPYIO_OK; NPYIO_E_LOCKED; NPYIO_E_UNSUPPORTED (above); the
 *         statuses of npyio_npz_open_path() and npyio_npz_writer_create_path().
 * @since 1.0
 */
NPYIO_API npyio_status npyio_npz_writer_open_append_path(
    const char *path, uint32_t flags, const npyio_options *options,
    npyio_npz_writer **out);

/**
 * npyio_npz_writer_open_append_path() on streams: add members to the archive that
 * `stream` holds (the whole stream from offset 0), writing the new
 * archive into `temporary`, a second stream the caller supplies (empty,
 * at offset 0), never into `stream`. The archive is read and checked
 * whole by this library's reader, its bytes up to the end of its
 * directory copied to the temporary (through a 64 KiB buffer), the new
 * members go where its directory was, and npyio_npz_writer_close()
 * writes the new directory, reads the result back as
 * npyio_npz_writer_open_append_path() does (every old member unchanged, then exactly
 * the new ones, the comment kept: else NPYIO_E_FORMAT), and syncs the
 * temporary (its sync callback, not durable).
 *
 * Why two streams: an archive's end records must end it, so members
 * written into the archive's own stream (over its directory, or after
 * its end) leave, until the new directory is complete, a stream that no
 * zip reader can open once a crash interrupts them, and only a caller
 * who knew the old length could cut it back. With a temporary the
 * archive is never written: the caller replaces it with the temporary
 * after a successful close (a rename of the temporary's file over the
 * archive's, after making it durable if it must survive a power loss),
 * and after a failure, an abort or a crash simply discards the
 * temporary, whose content is then undefined. Until that replacement,
 * `stream` is the archive.
 *
 * Both streams are borrowed: the caller closes them after the writer.
 * `stream` must seek and read (at offsets where it can: pread);
 * `temporary` must read, write, seek, read and write at offsets and
 * change its length (npyio_stream_ops' pread, pwrite and truncate, or a
 * path stream opened with NPYIO_STREAM_READ | NPYIO_STREAM_WRITE).
 * Locking: `stream` is locked exclusively where it can (its lock member;
 * NPYIO_WRITE_WAIT_FOR_LOCK waits), as npyio_writer_open_append_stream()
 * says; without a lock member, appends are the caller's to serialise.
 * @param[in] stream the archive (borrowed; only read).
 * @param[in] temporary where the new archive is written (borrowed).
 * @param[in] flags NPYIO_NPZ_WRITE_NO_ALIGN, NPYIO_NPZ_WRITE_ZLIB (since
 *            1.1), NPYIO_WRITE_WAIT_FOR_LOCK.
 * @param[in] options allocator, limits, threads, or NULL.
 * @param[out] out receives the archive writer; NULL on failure.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG (not live streams, the same
 *         stream twice, other flags); NPYIO_E_UNSUPPORTED (a stream that
 *         cannot do the above; the end-record case of
 *         npyio_npz_writer_open_append_path()); NPYIO_E_LOCKED; the statuses of
 *         npyio_npz_open_stream() for the archive; NPYIO_E_IO;
 *         NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_npz_writer_open_append_stream(
    npyio_stream *stream, npyio_stream *temporary, uint32_t flags,
    const npyio_options *options, npyio_npz_writer **out);

/**
 * Add a member and get a writer for its array: write the data with
 * npyio_writer_write() and finish the member with npyio_writer_close()
 * (which checks the byte count, as for a file) before adding the next.
 *
 * With NPYIO_WRITE_UNKNOWN_ROWS the row count is the rows written, put
 * into the member's header at its close (for a deflated member the header
 * goes out as a stored deflate block so that it can be rewritten in place,
 * and the CRC is recombined). What this call refuses (the key, the
 * level, the header or the flags) is refused before the member starts:
 * the archive goes on. A member writer aborted or failed leaves half a
 * member behind: the archive then fails (npyio_npz_writer_close()
 * reports it, and a path keeps its old file).
 * @param[in] key the NumPy key: UTF-8, no backslash, not absolute, no ".."
 *            component, not already in the archive.
 * @param[in] level 0 stores the member; 1 to 9 deflate it at that zlib
 *            level (6 is np.savez_compressed's), with zlib (written in
 *            pieces: see NPYIO_NPZ_WRITE_ZLIB).
 * @param[in] flags NPYIO_WRITE_UNKNOWN_ROWS.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG (a key refused, named; a level
 *         out of range); NPYIO_E_STATE (a member's writer is still open;
 *         the archive failed earlier); the statuses of
 *         npyio_writer_create_stream(); NPYIO_E_IO.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_writer_create_member(npyio_npz_writer *npz,
                                                  const char *key,
                                                  const npyio_header *header,
                                                  int level, uint32_t flags,
                                                  npyio_writer **out);

/**
 * Add a member from a whole array in plain C (as npyio_save() takes
 * one): the elements in this host's byte order and C order.
 * @param[in] key the NumPy key, as for npyio_writer_create_member().
 * @param[in] type, ndim, shape, data, len as for npyio_save().
 * @param[in] level 0 stores the member, 1 to 9 deflate it.
 * @param[in] flags none is defined yet: 0.
 * @return as npyio_npz_writer_add_with_header(); NPYIO_E_INVALID_ARG (a
 *         type in the other byte order, a len that does not match).
 * @since 1.0
 */
NPYIO_API npyio_status npyio_npz_writer_add(npyio_npz_writer *npz,
                                            const char *key, const char *type,
                                            int ndim, const int64_t *shape,
                                            const void *data, size_t len,
                                            int level, uint32_t flags);

/**
 * Add a member from a whole array in memory: npyio_writer_create_member(), one write,
 * close.
 * @param[in] len npyio_header_nbytes(header) exactly.
 * @param[in] level 0 stores the member, 1 to 9 deflate it.
 * @param[in] flags none is defined yet: 0.
 * @return as npyio_writer_create_member(); NPYIO_E_INVALID_ARG (len does
 *         not match).
 * @since 1.0
 */
NPYIO_API npyio_status npyio_npz_writer_add_with_header(
    npyio_npz_writer *npz, const char *key, const npyio_header *header,
    const void *data, size_t len, int level, uint32_t flags);

/**
 * Add an .npy file as it is: the bytes of `from` (borrowed), from its
 * position to its end, become member key + ".npy" byte for byte (its
 * header as written, not as np.save would write it; bytes after the data
 * too). The header is parsed first, under the archive's limits: a stream
 * that is not an .npy file is refused before anything is written, and the
 * archive stays usable. A file shorter than its header describes (not
 * for object arrays, whose pickle has no declared length) fails the
 * member, and with it the archive, as a failed member writer does.
 * Stored members are aligned unless NPYIO_NPZ_WRITE_NO_ALIGN; deflated ones use
 * NPYIO_LIMIT_THREADS threads. A stream that can seek (a file, memory) of
 * up to 257 MiB to deflate is read whole into one block and deflated in
 * one libdeflate call (see NPYIO_NPZ_WRITE_ZLIB); others go through a
 * 1 MiB buffer.
 * @param[in] key the NumPy key, as for npyio_writer_create_member().
 * @param[in] level 0 stores the member, 1 to 9 deflate it.
 * @param[in] flags none is defined yet: 0.
 * @return NPYIO_OK; NPYIO_E_INVALID_ARG (a key refused, a level out of
 *         range, NULL arguments); NPYIO_E_FORMAT, NPYIO_E_UNSUPPORTED,
 *         NPYIO_E_LIMIT (the header, as npyio_header_parse());
 *         NPYIO_E_TRUNCATED (the file ends inside its header or data);
 *         NPYIO_E_STATE; NPYIO_E_IO; NPYIO_E_NOMEM.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_npz_writer_add_npy(npyio_npz_writer *npz,
                                                const char *key,
                                                npyio_stream *from, int level,
                                                uint32_t flags);

/**
 * Copy member `index` of an archive being read into this one as it is
 * stored: a deflated member is not inflated and deflated again. A stored
 * member's CRC-32 is checked on the way (NPYIO_E_CHECKSUM); a deflated
 * member's is carried over unchecked (npyio_npz_verify() it first if the
 * source is in doubt). A member that fails half-copied fails the archive,
 * as a failed member writer does.
 * @param[in] key the new NumPy key (the member becomes key + ".npy"), or
 *            NULL to keep the member's file name (checked as keys are).
 * @return NPYIO_OK; NPYIO_E_UNSUPPORTED (encrypted members, methods other
 *         than stored and deflate); NPYIO_E_INVALID_ARG (a name refused,
 *         an index out of range); NPYIO_E_CHECKSUM; NPYIO_E_STATE;
 *         NPYIO_E_IO.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_npz_writer_copy(npyio_npz_writer *npz,
                                             const char *key, npyio_npz *src,
                                             size_t index);

/**
 * Finish the archive: its central directory and end records, then for a
 * path the atomic replacement (synced unless NPYIO_WRITE_NO_SYNC). The
 * writer is released even when this fails; a failure leaves a path's old
 * file, except after the rename, as npyio_writer_close() says.
 * @return NPYIO_OK; NPYIO_E_STATE (a member's writer is still open, or a
 *         member failed: the first failure is repeated); NPYIO_E_IO.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_npz_writer_close(npyio_npz_writer *npz);

/**
 * Abandon an archive: a path's existing file stays as it was; what was
 * written to a stream stays there. NULL is fine.
 * @since 1.0
 */
NPYIO_API void npyio_npz_writer_abort(npyio_npz_writer *npz);

/**
 * The same as npyio_savez(), for arrays described by headers (any byte
 * order, records of any layout): npyio_npz_writer_create_path(), one
 * npyio_npz_writer_add_with_header() per array, close.
 * @param[in] count the number of arrays (0 writes an empty archive).
 * @param[in] keys, headers, data, lens count entries each.
 * @param[in] levels count levels (0 stores, 1 to 9 deflate), or NULL to
 *            store every array.
 * @param[in] flags NPYIO_WRITE_NO_SYNC, NPYIO_NPZ_WRITE_NO_ALIGN,
 *            NPYIO_NPZ_WRITE_ZLIB (since 1.1).
 * @return NPYIO_OK; the statuses of the calls above; nothing replaces the
 *         path unless every array was written.
 * @since 1.0
 */
NPYIO_API npyio_status npyio_savez_with_header(
    const char *path, size_t count, const char *const *keys,
    const npyio_header *const *headers, const void *const *data,
    const size_t *lens, const int *levels, uint32_t flags,
    const npyio_options *options);

#ifdef __cplusplus
}
#endif

#endif /* NPYIO_H */
