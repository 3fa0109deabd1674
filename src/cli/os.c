/*
 * os.c - the `npyio` tool's calls beyond POSIX.1-2008 (see os.h). Every
 * #if of the tool on the host is here, and each capability is chosen once
 * below; a portable build (NPYIO_PORTABLE) takes none of Linux's own
 * calls, as macOS and the BSDs would not have them.
 */
#if defined(__linux__) && !defined(NPYIO_PORTABLE)
#define _GNU_SOURCE /* madvise(MADV_HUGEPAGE), F_SETPIPE_SZ, copy_file_range */
#endif
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "os.h"

/* ---- the capabilities, chosen once --------------------------------------------
 * 1 where this build uses the call, 0 where it takes the plain path. */
#if defined(MADV_HUGEPAGE) && !defined(NPYIO_PORTABLE)
#define CLI_HAVE_HUGE_PAGES 1
#else
#define CLI_HAVE_HUGE_PAGES 0
#endif
#if defined(F_SETPIPE_SZ) && !defined(NPYIO_PORTABLE)
#define CLI_HAVE_PIPE_SIZE 1
#else
#define CLI_HAVE_PIPE_SIZE 0
#endif
#if defined(__linux__) && !defined(NPYIO_PORTABLE)
#define CLI_HAVE_COPY_RANGE 1
#else
#define CLI_HAVE_COPY_RANGE 0
#endif

void cli_os_advise_huge_pages(void *p, size_t size)
{
#if CLI_HAVE_HUGE_PAGES
    (void)madvise(p, size, MADV_HUGEPAGE); /* advice: failure is harmless */
#else
    (void)p;
    (void)size;
#endif
}

void cli_os_widen_pipe(int fd)
{
#if CLI_HAVE_PIPE_SIZE
    /* 1 MiB, not 64 KiB: 16 times fewer wake-ups (the system may refuse). */
    (void)fcntl(fd, F_SETPIPE_SZ, 1 << 20);
#else
    (void)fd;
#endif
}

#if CLI_HAVE_COPY_RANGE
/* Errors of copy_file_range() that mean "not between these two files"
 * (another file system, a pipe, a file open for appending, an old
 * kernel), which a copy through a buffer then does instead. */
static int cannot_copy_here(int err)
{
    return err == EXDEV || err == EINVAL || err == ENOSYS ||
           err == EOPNOTSUPP || err == EBADF;
}
#endif

int cli_os_copy_range(int from, int64_t at, int to, uint64_t len,
                      uint64_t *done)
{
    *done = 0;
#if CLI_HAVE_COPY_RANGE
    loff_t in = (loff_t)at;

    while (*done < len) {
        uint64_t left = len - *done;
        size_t ask = left < ((uint64_t)1 << 30) ? (size_t)left
                                                : (size_t)1 << 30;
        ssize_t n = copy_file_range(from, &in, to, NULL, ask, 0);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && *done == 0 && cannot_copy_here(errno))
            return CLI_OS_ELSEWHERE; /* nothing copied yet */
        if (n < 0)
            return -1;
        if (n == 0)
            break; /* the source ended */
        *done += (uint64_t)n;
    }
    return 0;
#else
    (void)from;
    (void)at;
    (void)to;
    (void)len;
    return CLI_OS_ELSEWHERE;
#endif
}

/* ---- what POSIX has as such ------------------------------------------------------ */

void cli_os_start(int *argc, char ***argv)
{
    (void)argc; /* binary streams and UTF-8 arguments already */
    (void)argv;
}

int cli_os_seekable(int fd)
{
    return lseek(fd, 0, SEEK_CUR) >= 0;
}

long cli_os_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    return n < 1 ? 1 : n;
}

int cli_os_pread(int fd, void *buf, size_t cap, int64_t offset, size_t *got)
{
    ssize_t n;

    do
        n = pread(fd, buf, cap, (off_t)offset);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
    *got = (size_t)n;
    return 0;
}

void *cli_os_big_buffer(size_t size)
{
    const size_t huge = (size_t)2 << 20;
    void *p = NULL;

    if (posix_memalign(&p, huge, size) != 0)
        return NULL;
    cli_os_advise_huge_pages(p, size);
    return p;
}

FILE *cli_os_fopen(const char *path, const char *mode)
{
    return fopen(path, mode);
}

int cli_os_mkdir(const char *path)
{
    return mkdir(path, 0777);
}

static int kind_of(const struct stat *info)
{
    return S_ISREG(info->st_mode)   ? CLI_OS_FILE
           : S_ISDIR(info->st_mode) ? CLI_OS_FOLDER
                                    : CLI_OS_OTHER;
}

int cli_os_path_kind(const char *path)
{
    struct stat info;

    if (stat(path, &info) != 0)
        return errno == ENOENT ? CLI_OS_MISSING : -1;
    return kind_of(&info);
}

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_CLOEXEC)

int cli_os_dir_open(const char *path)
{
    return open(path, DIR_FLAGS);
}

int cli_os_dir_open_at(int fd, const char *part)
{
    return openat(fd, part, DIR_FLAGS | O_NOFOLLOW);
}

int cli_os_kind_at(int fd, const char *name)
{
    struct stat info;

    if (fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? CLI_OS_MISSING : -1;
    return kind_of(&info);
}

int cli_os_dir_dup(int fd)
{
    return fcntl(fd, F_DUPFD_CLOEXEC, 0);
}

void cli_os_dir_close(int fd)
{
    (void)close(fd);
}

FILE *cli_os_temporary_file(void)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    FILE *f;
    int fd, e;

    if (dir == NULL || dir[0] == '\0')
        dir = "/tmp";
    if ((size_t)snprintf(path, sizeof path, "%s/npyio-XXXXXX", dir) >=
        sizeof path) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    fd = mkstemp(path);
    if (fd < 0)
        return NULL;
    unlink(path);
    f = fdopen(fd, "w+b");
    if (f == NULL) {
        e = errno;
        close(fd);
        errno = e;
    }
    return f;
}

FILE *cli_os_memstream(char **text, size_t *len)
{
    return open_memstream(text, len);
}

int cli_os_memstream_close(FILE *f, char **text, size_t *len)
{
    if (fclose(f) == 0)
        return 0;
    free(*text);
    *text = NULL;
    *len = 0;
    return -1;
}
