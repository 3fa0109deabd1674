/*
 * replace.h - atomic replacement of a file. A new file is written as a
 * temporary in the destination's directory and renamed over the
 * destination on commit; abandoning removes it. A destination that exists
 * and is neither a regular file nor a directory (a device such as
 * /dev/stdout, a FIFO, a socket) is written directly: there is no file to
 * replace, and replacing the node would break it.
 */
#ifndef NPYIO_REPLACE_H
#define NPYIO_REPLACE_H

#include "alloc.h"

#include <stdbool.h>

typedef struct npyio__atomic {
    const npyio__faults *faults; /* the tests' OS faults (the mem's) */
    int fd;         /* the temporary (read-write: maps use it too), or the
                       device, open for writing */
    char *temp;     /* its path (an npyio__alloc block); NULL if direct or
                       while it is still unnamed (O_TMPFILE) */
    bool unnamed;   /* an O_TMPFILE file, linked as `temp` at commit */
    bool fresh;     /* the destination did not exist at open: an unnamed
                       file is linked there directly */
    char *target;   /* the destination, symbolic links resolved */
    char *dir;      /* the destination's directory */
    int at;         /* what the names above are relative to: NPYIO__AT_CWD
                       (platform.h), or the folder a file below a base is
                       made in (owned: closed with the rest) */
    bool no_replace; /* refuse a destination that exists, at open and at
                        the commit itself */
    bool taken;     /* the commit found the destination taken (no_replace) */
    char *shown;    /* the destination as messages name it, if not target */
} npyio__atomic;

/* NPYIO_E_NOT_FOUND for a missing directory, NPYIO_E_IO otherwise.
 * Symbolic links at the end of the path are followed under the kernel's
 * protected_symlinks rule, applied whatever the sysctl says: in a sticky
 * world-writable directory only a link owned by the caller or by the
 * directory's owner is followed. Through a named temporary (no unnamed
 * files here), this destination's stale named temporaries, left by
 * processes that died, are removed first (replace.c says how they are
 * named; an unnamed temporary's stray is met at commit). A replaced
 * file's mode is kept, and its owner and group where the caller may set
 * them. */
npyio_status npyio__atomic_open(const char *path, const npyio__mem *mem,
                                npyio__atomic *a);
/*
 * The same for the file `path` below the folder `base`: base is opened as
 * any path is, links followed (the caller's own), but no symbolic link
 * below it is followed: path's folders are opened one by one relative to
 * the one before (made where missing), and whatever its final name holds
 * is replaced as a name, never opened. path is relative and plain: no
 * empty, "." or ".." component (NPYIO_E_INVALID_ARG). Without `replace`,
 * a destination that exists is refused, here and again at the commit
 * (NPYIO_E_IO, "exists"), so that one made in between is not replaced
 * either. A directory is never replaced.
 */
npyio_status npyio__atomic_open_under(const char *base, const char *path,
                                      bool replace, const npyio__mem *mem,
                                      npyio__atomic *a);
/* fsync (if durable), close, rename, fsync the directory (if durable).
 * On failure the temporary is removed. Releases `a` either way. */
npyio_status npyio__atomic_commit(npyio__atomic *a, const npyio__mem *mem,
                                  bool durable);
void npyio__atomic_abandon(npyio__atomic *a);

#endif /* NPYIO_REPLACE_H */
