/*
 * os.h - what the `npyio` tool asks of the operating system beyond the C
 * library: advice and kernel copies that Linux offers, each with the
 * plain behaviour where the system (or a portable build, NPYIO_PORTABLE)
 * has none, and the POSIX calls Windows spells otherwise (positioned
 * reads, folders, temporary files, UTF-8 names and arguments). os.c
 * (POSIX) or os_win.c (Windows, built instead) is the tool's one file
 * that knows the host; the rest of cli/ calls these.
 */
#ifndef NPYIO_CLI_OS_H
#define NPYIO_CLI_OS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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


/* At the start of main: standard input and output in binary mode, the
 * arguments as UTF-8, and a console that shows UTF-8 (Windows; nothing
 * elsewhere, where all of that is so already). */
void cli_os_start(int *argc, char ***argv);

/* Can descriptor fd seek? (A pipe cannot: where seeking one "succeeds",
 * as on Windows, the system is asked what the file is.) */
int cli_os_seekable(int fd);

/* The processors online (at least 1). */
long cli_os_cores(void);

/* Read at most cap bytes of file descriptor fd at offset, without moving
 * its offset (safe on several threads at once): 0 with *got (0 at the
 * end), or -1 with errno. */
int cli_os_pread(int fd, void *buf, size_t cap, int64_t offset, size_t *got);

/* A buffer for large data, released with free(): aligned for huge pages
 * (and advised to use them) where the system has them. */
void *cli_os_big_buffer(size_t size);

/* fopen() of a UTF-8 path. */
FILE *cli_os_fopen(const char *path, const char *mode);

/* mkdir() of a UTF-8 path (mode 0777 less the umask): 0 or -1 with errno. */
int cli_os_mkdir(const char *path);

/* What is at a UTF-8 path, links followed (path_kind) or not, relative to
 * a folder descriptor (kind_at). */
#define CLI_OS_MISSING 0
#define CLI_OS_FILE 1   /* a regular file */
#define CLI_OS_FOLDER 2
#define CLI_OS_OTHER 3  /* a link (kind_at), device, FIFO, socket */
int cli_os_path_kind(const char *path);

/* Folders as descriptors, for unpack's checks below DIR: dir_open opens
 * a folder by path (links followed: the user's own); dir_open_at the
 * folder `part` of folder fd, never following a link (ELOOP or ENOTDIR
 * for a link or a file, ENOENT for nothing); kind_at what `name` in
 * folder fd is (-1 with errno on failure). dir_close closes either. */
int cli_os_dir_open(const char *path);
int cli_os_dir_open_at(int fd, const char *part);
int cli_os_kind_at(int fd, const char *name);
int cli_os_dir_dup(int fd);
void cli_os_dir_close(int fd);

/* A temporary file, gone when closed whatever happens (unlinked, or
 * deleted on close): in $TMPDIR, else /tmp (POSIX) or the user's
 * temporary folder (Windows). NULL with errno. */
FILE *cli_os_temporary_file(void);

/* A FILE* whose bytes end up in memory (open_memstream): cli_os_memstream
 * opens it; cli_os_memstream_close closes it and gives *text (malloc'd,
 * released with free()) and *len; 0, or -1 with errno (no text then). */
FILE *cli_os_memstream(char **text, size_t *len);
int cli_os_memstream_close(FILE *f, char **text, size_t *len);

#endif
