/*
 * platform.h - the operating system, in one place: every system call the
 * library makes on files, descriptors, names and maps, with EINTR,
 * SIGPIPE and the tests' fault hook handled once, and what depends on a
 * particular kernel or C library (huge-page advice, aligned allocation,
 * unnamed files, clones). Only the stream back ends (stream_fd.c,
 * stream_path.c), replace.c and alloc.c call it (abi_layer_symbols keeps
 * it so).
 */
#ifndef NPYIO_PLATFORM_H
#define NPYIO_PLATFORM_H

#include "internal.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* open()'s flags that a C library may lack (the Microsoft runtime that
 * mingw-w64 builds on has neither): values of our own, far above its
 * _O_* bits, which platform_win.c reads. Elsewhere the system's. */
#ifndef O_NOFOLLOW
#define O_NOFOLLOW 0x01000000
#endif
#ifndef O_NONBLOCK
#define O_NONBLOCK 0x02000000
#endif

/* The default allocator: aligned blocks from the C library. Signatures
 * match npyio_allocator. */
void *npyio__sys_alloc(void *user, size_t size, size_t alignment);
void npyio__sys_free(void *user, void *ptr, size_t size);
/* Ask for transparent huge pages over [ptr, ptr + size) (advice only). */
void npyio__advise_huge_pages(void *ptr, size_t size);

/* ---- descriptors (POSIX), each retried on EINTR ----------------------------
 * On failure they return -1 and leave "<what>: <OS reason>" as the thread's
 * message; callers add where. The calls that take `faults` ask the tests'
 * fault hook first (npyio__faulted, error.h); errno values are the
 * language of this module on every system (the Windows module maps its
 * own errors to them; npyio__status_of_errno, error.h, to statuses). */
int npyio__fd_read(const npyio__faults *faults, int fd, void *buf, size_t cap,
                   size_t *got);
/* One pread() at offset (short at the end of a file); errno is kept on
 * failure (ESPIPE: a pipe, nothing consumed). */
int npyio__fd_pread(const npyio__faults *faults, int fd, void *buf, size_t cap,
                    int64_t offset, size_t *got);
/* Never raises SIGPIPE: a closed pipe or socket is an error (EPIPE). */
int npyio__fd_write(const npyio__faults *faults, int fd, const void *buf,
                    size_t len, size_t *put);
/* The same for a regular file, which cannot raise SIGPIPE: without the
 * signal mask calls the guard costs. */
int npyio__fd_write_file(const npyio__faults *faults, int fd, const void *buf,
                         size_t len, size_t *put);
int npyio__fd_seek(const npyio__faults *faults, int fd, int64_t offset,
                   int whence, int64_t *pos);
/* Make the file `to` (empty, open for writing) a copy of the first `len`
 * bytes of `from`: shared blocks where the file system can clone them
 * (Linux FICLONE: no data moves), else a copy in the kernel
 * (copy_file_range) of its data only, holes left holes (SEEK_DATA,
 * SEEK_HOLE), so a sparse file's copy is as sparse. Ends with `to`'s
 * offset at len; `from`'s is kept. Where neither works between these
 * files, nothing is copied and NPYIO__COPY_BUFFERED comes back: the
 * caller copies through a buffer it allocates (this module has no
 * allocator, and the library allocates only through the caller's). *how
 * says which ("clone", "kernel copy", "buffered copy"). */
#define NPYIO__COPY_BUFFERED 1
int npyio__fd_copy_file(const npyio__faults *faults, int to, int from,
                        int64_t len, const char **how);
bool npyio__fd_seekable(int fd);
/* What kind of descriptor: seekable (and then its offset in *pos), a
 * regular file. just_opened: opened by us a moment ago (a regular file is
 * then at offset 0). Never fails: a descriptor it cannot tell is neither. */
void npyio__fd_probe(int fd, bool just_opened, bool *seekable,
                     bool *regular, int64_t *pos);
int npyio__fd_close(const npyio__faults *faults, int fd);
int npyio__fd_sync(const npyio__faults *faults, int fd);
/* open() with O_CLOEXEC; flags as for open(); mode applies with O_CREAT. */
int npyio__fd_open(const npyio__faults *faults, const char *path, int flags,
                   unsigned mode);
/* The calls below that take `at` take a name relative to the directory
 * open as descriptor `at` (openat() and its kin), or NPYIO__AT_CWD: then
 * the name is a path as open() takes it. */
#define NPYIO__AT_CWD (-100)
int npyio__fd_open_at(const npyio__faults *faults, int at, const char *path,
                      int flags, unsigned mode);

/* A descriptor or FILE the caller hands over passes bytes untranslated:
 * nothing to do on POSIX; on Windows, whose C runtime opens files in text
 * mode by default (a \n written as \r\n, a read ending at ^Z), it is
 * put in binary mode, and stays so after the stream closes. */
void npyio__fd_binary(int fd);
void npyio__file_binary(FILE *f);

/* The same for a FILE* (write again without SIGPIPE). */
int npyio__file_read(FILE *f, void *buf, size_t cap, size_t *got);
int npyio__file_write(FILE *f, const void *buf, size_t len, size_t *put);
int npyio__file_seek(FILE *f, int64_t offset, int whence, int64_t *pos);
int npyio__file_flush(FILE *f);

/* Set the thread's message to "<what>: <strerror(err)>"; returns -1. */
int npyio__os_fail(const char *what, int err);

/* ---- unnamed files -----------------------------------------------------------
 * An unnamed regular file in directory `dir`, open read-write (Linux's
 * O_TMPFILE); -1 where the system or the file system has none. */
int npyio__fd_open_unnamed(const npyio__faults *faults, int at,
                           const char *dir);
/* Give such a file the name `name`: 0, or -1 with errno kept (EEXIST: the
 * name is taken) and the thread's message set. */
int npyio__fd_link_unnamed(const npyio__faults *faults, int fd, int at,
                           const char *name);

/* Positional I/O (no shared file offset) and data sync, retried on EINTR,
 * looping until all is moved; -1 with a message on failure. */
int npyio__fd_pwrite_all(const npyio__faults *faults, int fd, const void *buf,
                         size_t len, int64_t offset);
int npyio__fd_pread_all(const npyio__faults *faults, int fd, void *buf,
                        size_t len, int64_t offset, size_t *got);
int npyio__fd_datasync(const npyio__faults *faults, int fd);
int npyio__fd_size(int fd, int64_t *size);

/* Truncate or extend to `size` bytes. */
int npyio__fd_truncate(const npyio__faults *faults, int fd, int64_t size);
/* Reserve the blocks of [0, size), extending the file (posix_fallocate;
 * without it, as on macOS, zeros written over the new part): a full disk
 * fails here, not later when a mapping is written. */
int npyio__fd_reserve(const npyio__faults *faults, int fd, int64_t size);

/* Advisory whole-file lock on an open file description (Linux: OFD lock;
 * elsewhere and in a portable build flock(); both owned by the
 * description, not the process, so two opens conflict in one process too;
 * the two kinds do not see each other on Linux):
 * shared or exclusive; waiting for it, or failing at once. Returns 0, or
 * -1 with the thread's message set; *busy says the lock is held by
 * another description (and by what kind of lock, in the message). */
int npyio__fd_lock(int fd, bool exclusive, bool wait, bool *busy);

/* Does `path` (following symbolic links, as open() does) still name the
 * file open as fd? */
bool npyio__fd_is_path(int fd, const char *path);

/* ---- names in the file system (replace.c's) -------------------------------- */

/* Does c separate a path's folders? '/' everywhere, and on Windows the
 * backslash too. Is path absolute? ("/..." everywhere; on Windows also a
 * path starting with a backslash, or with a drive's "C:".) */
bool npyio__is_separator(char c);
bool npyio__is_absolute(const char *path);

typedef enum npyio__file_kind {
    NPYIO__FILE_OTHER,     /* a device, FIFO, socket */
    NPYIO__FILE_REGULAR,
    NPYIO__FILE_DIRECTORY,
    NPYIO__FILE_LINK       /* (lstat only) */
} npyio__file_kind;

/* What stat() says of a file, in the terms replacing one needs. */
typedef struct npyio__file_info {
    npyio__file_kind kind;
    uint64_t device, inode;  /* its identity */
    unsigned long uid, gid;
    unsigned mode;           /* the permission bits (07777) */
    bool sticky_shared;      /* a sticky directory all may write (/tmp) */
} npyio__file_info;

/* stat() (follow: links followed) or lstat(); fstat() of a descriptor.
 * 0, or -1 with errno kept and no message: a missing name is an answer. */
int npyio__path_info(int at, const char *path, bool follow,
                     npyio__file_info *info);
int npyio__fd_info(int fd, npyio__file_info *info);

/* The effective user id (geteuid). */
unsigned long npyio__user_id(void);

/* The text of the symbolic link at path into buf (NUL-terminated): 0 and
 * *len, or -1 with "<path>: <reason>" as the thread's message. */
int npyio__read_link(const char *path, char *buf, size_t cap, size_t *len);

/* unlink(): 0, or -1 with errno kept and no message (callers remove what
 * is theirs, best effort). */
int npyio__path_remove(int at, const char *path);

/* rename(): 0, or -1 with "rename: <reason>" as the message. */
int npyio__path_rename(const npyio__faults *faults, int at, const char *from,
                       const char *to);
/* link() (a hard link, never replacing: EEXIST if `to` is taken): 0, or
 * -1 with errno kept and "linkat: <reason>" as the message. */
int npyio__path_link(const npyio__faults *faults, int at, const char *from,
                     const char *to);

/* The folder that holds `path` below the directory `base` (base itself
 * opened as open() would, links followed: it is the caller's own), every
 * folder of `path` opened relative to the one before without following a
 * symbolic link (openat(), O_NOFOLLOW), so that no link below base is
 * followed, even one planted while we walk; missing folders are made
 * (mode 0777 less the umask). *dir receives the last folder's descriptor
 * (the caller closes it), *leaf the file's own name within path.
 * NPYIO_E_NOT_FOUND (no base), NPYIO_E_IO (a link or a file where a
 * folder goes, other OS errors), NPYIO_E_UNSUPPORTED (a system without
 * openat() and O_NOFOLLOW), with a message that does not name base.
 * (No fault hook: the tests' faults are for the file's own calls.) */
npyio_status npyio__dir_open_beneath(const char *base, const char *path,
                                     int *dir, const char **leaf);

/* fchown() (uid (unsigned long)-1: the owner kept) and fchmod(): 0, or -1
 * with errno kept and no message (EPERM is the caller's to judge). */
int npyio__fd_chown(int fd, unsigned long uid, unsigned long gid);
int npyio__fd_chmod(int fd, unsigned mode);

/* A close-on-exec duplicate of fd, or -1. */
int npyio__fd_duplicate(int fd);
/* Close a descriptor whose close has nothing to report (a duplicate, a
 * read-only one): the thread's message is left alone. */
void npyio__fd_close_quietly(int fd);

/* What a temporary's unique name is made of: this process's id, and a
 * clock that moves (nanoseconds of the monotonic clock). */
unsigned long npyio__process_id(void);
unsigned long npyio__clock_nanoseconds(void);

/* Has process pid gone from this host (kill(pid, 0) says ESRCH)? */
bool npyio__process_gone(long pid);

/* Remove each entry of directory dir that pick(name, ctx) picks and that
 * is a regular file owned by the caller (links not followed). Best
 * effort: failures change nothing. */
void npyio__dir_remove_owned(int at, const char *dir,
                             bool (*pick)(const char *name, void *ctx),
                             void *ctx);

/* ---- memory maps --------------------------------------------------------- */

size_t npyio__page_size(void);
/* A shared mapping of len bytes of fd from offset (a multiple of the page
 * size), read-only or read-write. */
npyio_status npyio__map_fd(const npyio__faults *faults, int fd, int64_t offset,
                           size_t len, bool writable, void **base);
/* Unmap, after msync when `sync` (writable maps with durability). */
npyio_status npyio__unmap(void *base, size_t len, bool sync);

/* ---- what this build takes from the system ------------------------------------
 * Chosen once, at the top of platform.c, from the host and NPYIO_PORTABLE
 * (CMake -DNPYIO_PORTABLE=ON: only what POSIX.1-2008, macOS and FreeBSD
 * offer). For the tests, which choose their expectations from it. */
typedef struct npyio__platform_caps {
    bool portable;      /* built with NPYIO_PORTABLE */
    bool unnamed_files; /* O_TMPFILE temporaries (else named ones) */
    bool ofd_locks;     /* OFD locks (else flock()) */
    bool kernel_copy;   /* FICLONE, copy_file_range (else buffered) */
    bool fallocate;     /* posix_fallocate (else zeros written) */
} npyio__platform_caps;
npyio__platform_caps npyio__platform_capabilities(void);

#endif /* NPYIO_PLATFORM_H */
