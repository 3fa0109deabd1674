/*
 * windows_shim.h - the few POSIX calls the unit tests use that
 * mingw-w64's C runtime (msvcrt) lacks, for the Windows build only: it is
 * force-included there (tests/windows.cmake), never in the sources.
 * mkdtemp and mkdir(path, mode) on the runtime's _mktemp and _mkdir, the
 * scratch folders' `rm -rf DIR` (scratch.h's system() call, which has no
 * rm under Windows) as a recursive removal, and C11's aligned_alloc and
 * POSIX's posix_memalign, which msvcrt lacks: its _aligned_malloc blocks
 * need _aligned_free, so every block the tests allocate (malloc, calloc,
 * realloc, strdup too) is one of those, and free() is _aligned_free. (The
 * library's own blocks are never freed here: npyio_free frees them.)
 * Files the tests open themselves (open, fopen) are binary, as on POSIX:
 * the runtime's default mode is set before main (mingw-w64's binmode.o,
 * linked, leaves it text under Debian 12's toolchain).
 */
#ifndef NPYIO_WINDOWS_SHIM_H
#define NPYIO_WINDOWS_SHIM_H

#include <direct.h>
#include <fcntl.h>
#include <malloc.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static inline char *npyio_shim_mkdtemp(char *t)
{
    return _mktemp(t) != NULL && _mkdir(t) == 0 ? t : NULL;
}
#define mkdtemp npyio_shim_mkdtemp
#define mkdir(path, mode) _mkdir(path)

__attribute__((constructor)) static void npyio_shim_binary_files(void)
{
    _fmode = _O_BINARY;
}

/* Remove folder `path` and all in it; 0 or -1. */
static inline int npyio_shim_remove_tree(const char *path)
{
    char pattern[4096], child[4096];
    struct _finddata64i32_t e;
    intptr_t find;
    int rc = 0;

    snprintf(pattern, sizeof pattern, "%s/*", path);
    find = _findfirst64i32(pattern, &e);
    while (find != -1) {
        if (strcmp(e.name, ".") != 0 && strcmp(e.name, "..") != 0) {
            snprintf(child, sizeof child, "%s/%s", path, e.name);
            rc |= (e.attrib & _A_SUBDIR) ? npyio_shim_remove_tree(child)
                                         : _unlink(child);
        }
        if (_findnext64i32(find, &e) != 0)
            break;
    }
    if (find != -1)
        _findclose(find);
    return rc | _rmdir(path);
}

/* system("rm -rf DIR"), the one command the tests run. */
static inline int npyio_shim_system(const char *cmd)
{
    if (strncmp(cmd, "rm -rf ", 7) == 0)
        return npyio_shim_remove_tree(cmd + 7) == 0 ? 0 : 1;
    return (system)(cmd);
}
#define system npyio_shim_system

static inline void *npyio_shim_calloc(size_t n, size_t size)
{
    void *p = n != 0 && size > (size_t)-1 / n ? NULL
                                               : _aligned_malloc(n * size, 16);

    if (p != NULL)
        memset(p, 0, n * size);
    return p;
}

static inline int npyio_shim_posix_memalign(void **p, size_t al, size_t n)
{
    *p = _aligned_malloc(n ? n : 1, al);
    return *p != NULL ? 0 : 12; /* ENOMEM */
}

/* (a size of 0 asks for 1 byte: _aligned_malloc(0) may give NULL) */
static inline void *npyio_shim_aligned(size_t al, size_t n)
{
    return _aligned_malloc(n > 0 ? n : 1, al);
}

static inline void *npyio_shim_realloc(void *p, size_t n)
{
    return _aligned_realloc(p, n > 0 ? n : 1, 16);
}

static inline char *npyio_shim_strdup(const char *s)
{
    char *p = _aligned_malloc(strlen(s) + 1, 16);

    return p != NULL ? strcpy(p, s) : NULL;
}
#define malloc(n) npyio_shim_aligned(16, n)
#define calloc(n, size) npyio_shim_calloc(n, size)
#define realloc(p, n) npyio_shim_realloc(p, n)
#define aligned_alloc(al, n) npyio_shim_aligned(al, n)

#define free(p) _aligned_free(p)

#define posix_memalign(p, al, n) npyio_shim_posix_memalign(p, al, n)

/* pipe() as the runtime's _pipe, in binary mode. */
#define pipe(fds) _pipe(fds, 65536, _O_BINARY)

/* pread and pwrite through the file's offset, put back after (the tests
 * call them on one thread). */
static inline long long npyio_shim_at(int fd, void *buf, size_t n,
                                      long long at, int write)
{
    long long kept = _lseeki64(fd, 0, SEEK_CUR);
    long long r = -1;

    if (kept >= 0 && _lseeki64(fd, at, SEEK_SET) == at)
        r = write ? _write(fd, buf, (unsigned)n) : _read(fd, buf, (unsigned)n);
    if (kept >= 0)
        _lseeki64(fd, kept, SEEK_SET);
    return r;
}
#define pread(fd, buf, n, at) npyio_shim_at(fd, buf, n, at, 0)
#define pwrite(fd, buf, n, at) npyio_shim_at(fd, (void *)(buf), n, at, 1)
#define fsync(fd) _commit(fd)
#define strdup(s) npyio_shim_strdup(s)

#endif
