/*
 * os.h - what the `npyio` tool asks of the operating system beyond
 * POSIX.1-2008: advice and kernel copies that Linux offers, each with the
 * plain behaviour where the system (or a portable build, NPYIO_PORTABLE)
 * has none. os.c is the tool's one file that knows the host; the rest of
 * cli/ calls these.
 */
#ifndef NPYIO_CLI_OS_H
#define NPYIO_CLI_OS_H

#include <stddef.h>
#include <stdint.h>

/* The printf archetype of the tool's format checks: printf, or gnu_printf
 * where the build says so (CMake, for mingw-w64: C99 printf, %zu and all,
 * where GCC takes plain printf for the Microsoft runtime's). */
#ifndef CLI_PRINTF_ARCHETYPE
#define CLI_PRINTF_ARCHETYPE printf
#endif

/* Ask for transparent huge pages over a large buffer (advice only). */
void cli_os_advise_huge_pages(void *p, size_t size);

/* Ask for a larger buffer on the pipe fd reads (advice only: fewer
 * wake-ups of the writer and the reader; nothing if fd is no pipe). */
void cli_os_widen_pipe(int fd);

/* Copy `len` bytes of regular file `from`, from offset `at`, to the
 * current offset of regular file `to`, inside the kernel. Returns 0 with
 * *done the bytes copied (fewer than len: `from` ended); CLI_OS_ELSEWHERE
 * when no byte could be copied between these files (or the system has no
 * such copy): copy through a buffer instead; or -1 with errno set and
 * *done the bytes copied before the failure. */
#define CLI_OS_ELSEWHERE 1
int cli_os_copy_range(int from, int64_t at, int to, uint64_t len,
                      uint64_t *done);

#endif
