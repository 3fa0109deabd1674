/*
 * platform.h - the one place for code that differs between operating
 * systems. Everything else in libnpyio is plain C11 and POSIX; what depends
 * on a particular kernel or C library (huge-page advice, aligned allocation)
 * is declared here and implemented in platform.c.
 */
#ifndef NPYIO_PLATFORM_H
#define NPYIO_PLATFORM_H

#include "internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The default allocator: aligned blocks from the C library. Signatures
 * match npyio_allocator. */
void *npyio__sys_alloc(void *user, size_t size, size_t alignment);
void npyio__sys_free(void *user, void *ptr, size_t size);
/* Ask for transparent huge pages over [ptr, ptr + size) (advice only). */
void npyio__advise_huge_pages(void *ptr, size_t size);


/* ---- descriptors (POSIX), each retried on EINTR ----------------------------
 * On failure they return -1 and leave "<what>: <OS reason>" as the thread's
 * message; callers add where. */
/*
 * Fault injection, for the tests only (tests/unit/test_pathfault.c): when
 * npyio__fault_hook is set, every OS call of this module (and rename() in
 * replace.c) asks it first, by name ("read", "write", "fsync", ...): 0
 * makes the call; an errno value fails it with that error (EINTR is then
 * retried as a real one would be); NPYIO__FAULT_SHORT makes a read or
 * write move at most one byte. NULL in production. Not thread-safe to
 * change while calls run.
 */
#define NPYIO__FAULT_SHORT (-1)
typedef int (*npyio__fault_fn)(const char *call);
extern npyio__fault_fn npyio__fault_hook;

/* The hook's answer for `call`: nonzero (errno set) to fail it; count, if
 * given, cut to 1 for a short read or write. */
int npyio__faulted(const char *call, size_t *count);

int npyio__fd_read(int fd, void *buf, size_t cap, size_t *got);
/* One pread() at offset (short at the end of a file); errno is kept on
 * failure (ESPIPE: a pipe, nothing consumed). */
int npyio__fd_pread(int fd, void *buf, size_t cap, int64_t offset,
                    size_t *got);
/* Never raises SIGPIPE: a closed pipe or socket is an error (EPIPE). */
int npyio__fd_write(int fd, const void *buf, size_t len, size_t *put);
/* The same for a regular file, which cannot raise SIGPIPE: without the
 * signal mask calls the guard costs. */
int npyio__fd_write_file(int fd, const void *buf, size_t len, size_t *put);
int npyio__fd_seek(int fd, int64_t offset, int whence, int64_t *pos);
/* Make the file `to` (empty, open for writing) a copy of the first `len`
 * bytes of `from`: shared blocks where the file system can clone them
 * (Linux FICLONE: no data moves), else a copy in the kernel
 * (copy_file_range) of its data only, holes left holes (SEEK_DATA,
 * SEEK_HOLE), so a sparse file's copy is as sparse. Ends with `to`'s
 * offset at len; `from`'s is kept. Where neither works
 * between these files, nothing is copied and NPYIO__COPY_BUFFERED comes
 * back: copy with npyio__fd_copy_buffered() through a buffer the caller
 * allocates (this module has no allocator, and the library allocates
 * only through the caller's). *how says which ("clone", "kernel copy",
 * "buffered copy"). */
#define NPYIO__COPY_BUFFERED 1
int npyio__fd_copy_file(int to, int from, int64_t len, const char **how);
/* Copy the first len bytes of `from` to `to` (from its offset) through
 * buf, cap bytes. */
int npyio__fd_copy_buffered(int to, int from, int64_t len, void *buf,
                            size_t cap);
bool npyio__fd_seekable(int fd);
/* What kind of descriptor: seekable (and then its offset in *pos), a
 * regular file. just_opened: opened by us a moment ago (a regular file is
 * then at offset 0). Never fails: a descriptor it cannot tell is neither. */
void npyio__fd_probe(int fd, bool just_opened, bool *seekable,
                     bool *regular, int64_t *pos);
int npyio__fd_close(int fd);
int npyio__fd_sync(int fd);
/* open() with O_CLOEXEC; flags as for open(); mode applies with O_CREAT. */
int npyio__fd_open(const char *path, int flags, unsigned mode);

/* The same for a FILE* (write again without SIGPIPE). */
int npyio__file_read(FILE *f, void *buf, size_t cap, size_t *got);
int npyio__file_write(FILE *f, const void *buf, size_t len, size_t *put);
int npyio__file_seek(FILE *f, int64_t offset, int whence, int64_t *pos);
int npyio__file_flush(FILE *f);

/* Set the thread's message to "<what>: <strerror(err)>"; returns -1. */
int npyio__os_fail(const char *what, int err);

/* The one mapping of OS errors to statuses: ENOENT and ENOTDIR (no such
 * file, or a file where the path needs a directory) are
 * NPYIO_E_NOT_FOUND, ENOMEM NPYIO_E_NOMEM, all else NPYIO_E_IO. */
npyio_status npyio__status_of_errno(int err);

/* open() (O_CLOEXEC, EINTR retried) on behalf of the public function
 * `where`: on failure "<where>: cannot open <path>: <reason>", status by
 * npyio__status_of_errno. */
npyio_status npyio__open_path(const char *path, int flags, unsigned mode,
                              const char *where, int *fd);

/* ---- unnamed files -----------------------------------------------------------
 * An unnamed regular file in directory `dir`, open read-write (Linux's
 * O_TMPFILE); -1 where the system or the file system has none. */
int npyio__fd_open_unnamed(const char *dir);
/* Give such a file the name `name`: 0, or -1 with errno kept (EEXIST: the
 * name is taken) and the thread's message set. */
int npyio__fd_link_unnamed(int fd, const char *name);

/* Positional I/O (no shared file offset) and data sync, retried on EINTR,
 * looping until all is moved; -1 with a message on failure. */
int npyio__fd_pwrite_all(int fd, const void *buf, size_t len, int64_t offset);
int npyio__fd_pread_all(int fd, void *buf, size_t len, int64_t offset,
                        size_t *got);
int npyio__fd_datasync(int fd);
int npyio__fd_size(int fd, int64_t *size);

/* Truncate or extend to `size` bytes. */
int npyio__fd_truncate(int fd, int64_t size);
/* Reserve the blocks of [0, size) (posix_fallocate), extending the file:
 * a full disk fails here, not later when a mapping is written. */
int npyio__fd_reserve(int fd, int64_t size);

/* Advisory whole-file lock on an open file description (Linux: OFD lock,
 * elsewhere flock(), both owned by the description, not the process):
 * shared or exclusive; waiting for it, or failing at once. Returns 0, or
 * -1 with the thread's message set; *busy says the lock is held by
 * another description (and by what kind of lock, in the message). */
int npyio__fd_lock(int fd, bool exclusive, bool wait, bool *busy);

/* Open an existing file read-write and lock it (exclusive or shared,
 * waiting or not): NPYIO_E_LOCKED if another holds a conflicting lock.
 * A file replaced at the path while we waited is let go and the new one
 * locked instead. */
npyio_status npyio__open_locked(const char *path, bool exclusive, bool wait,
                                const char *where, int *fd);

/* Does `path` (following symbolic links, as open() does) still name the
 * file open as fd? */
bool npyio__fd_is_path(int fd, const char *path);

/* ---- memory maps --------------------------------------------------------- */

size_t npyio__page_size(void);
/* A shared mapping of len bytes of fd from offset (a multiple of the page
 * size), read-only or read-write. */
npyio_status npyio__map_fd(int fd, int64_t offset, size_t len, bool writable,
                           void **base);
/* Unmap, after msync when `sync` (writable maps with durability). */
npyio_status npyio__unmap(void *base, size_t len, bool sync);

#endif /* NPYIO_PLATFORM_H */
