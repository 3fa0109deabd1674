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
#include <sys/mman.h>
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
