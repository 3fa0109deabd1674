/*
 * win_replace.c DIR - atomic replacement on Windows (the Windows build's
 * test windows_replace, run under Wine): what another program holding
 * the file gives, and what a crash leaves.
 *
 *  - a holder that does not share deletion (a sharing violation): the
 *    save fails, NPYIO_E_IO, with a message saying the file is in use by
 *    another program; the old file is intact and no temporary is left;
 *  - a holder that shares reading, writing and deletion (as this library
 *    and most programs that read .npy files do): the save replaces it;
 *  - a save killed (TerminateProcess) between its temporary and the
 *    rename, in a child process: the old file is intact, the child's
 *    named temporary is left beside it, and the next save, the child's
 *    process gone, removes it;
 * and a file's offsets past 4 GiB: a stream over a UTF-8-named file
 * written at 5 GiB (a sparse file under Wine), its length and those bytes
 * read back at their offset.
 * Prints "replace OK" or the first failure; exit 0 or 1.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include "npyio.h"
#include "options.h"
#include "stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char path[1024], dir[1024];

static int fail(const char *what)
{
    printf("win_replace: %s (last error: %s)\n", what, npyio_last_error());
    return 1;
}

/* Save a 1-D '<f8' array of n copies of v at path. */
static npyio_status save(double v, const npyio_options *o)
{
    double a[4] = {v, v, v, v};
    int64_t shape[1] = {4};

    return npyio_save(path, "<f8", 1, shape, a, sizeof a, 0, o);
}

/* The first value stored at path, or -1. */
static double first_value(void)
{
    void *data = NULL;
    size_t len = 0;
    char type[16];
    int ndim = 0;
    int64_t shape[2];
    double v = -1;

    if (npyio_load(path, NULL, &data, &len, type, sizeof type, &ndim, shape,
                   2) == NPYIO_OK && len >= sizeof v)
        memcpy(&v, data, sizeof v);
    npyio_free(data);
    return v;
}

/* Entries of dir other than the file itself ("." and ".." aside). */
static int others_in_dir(void)
{
    char pattern[1100];
    WIN32_FIND_DATAA e;
    HANDLE find;
    int n = 0;

    snprintf(pattern, sizeof pattern, "%s\\*", dir);
    find = FindFirstFileA(pattern, &e);
    if (find == INVALID_HANDLE_VALUE)
        return -1;
    do
        n += strcmp(e.cFileName, ".") != 0 && strcmp(e.cFileName, "..") != 0 &&
             strcmp(e.cFileName, "a.npy") != 0;
    while (FindNextFileA(find, &e));
    FindClose(find);
    return n;
}

static HANDLE hold(DWORD share)
{
    return CreateFileA(path, GENERIC_READ, share, NULL, OPEN_EXISTING, 0,
                       NULL);
}

static int sharing_violation(void)
{
    HANDLE h = hold(FILE_SHARE_READ);
    npyio_status st;

    if (h == INVALID_HANDLE_VALUE)
        return fail("cannot hold the file");
    st = save(2, NULL);
    CloseHandle(h);
    if (st != NPYIO_E_IO ||
        strstr(npyio_last_error(), "in use by another program") == NULL)
        return fail("a save over a file held without sharing deletion");
    if (first_value() != 1 || others_in_dir() != 0)
        return fail("the old file changed, or a temporary was left");
    h = hold(FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE);
    st = save(3, NULL);
    CloseHandle(h);
    if (st != NPYIO_OK || first_value() != 3 || others_in_dir() != 0)
        return fail("a save over a file held, sharing deletion");
    return 0;
}

/* The child: killed at the rename, its temporary written and closed. */
static int kill_at_rename(void *ctx, const char *call)
{
    (void)ctx;
    if (strcmp(call, "rename") == 0)
        TerminateProcess(GetCurrentProcess(), 9);
    return 0;
}

static int child(void)
{
    npyio_options *o = NULL;

    if (npyio_options_new(&o) != NPYIO_OK)
        return 2;
    npyio__options_set_faults(o, kill_at_rename, NULL);
    save(4, o);
    return 3; /* not reached: killed at the rename */
}

static int crash(const char *self)
{
    char cmd[3000];
    STARTUPINFOA si;
    PROCESS_INFORMATION pi;
    DWORD code = 0;

    memset(&si, 0, sizeof si);
    si.cb = sizeof si;
    snprintf(cmd, sizeof cmd, "\"%s\" \"%s\" child", self, dir);
    if (!CreateProcessA(NULL, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si,
                        &pi))
        return fail("cannot start the child");
    WaitForSingleObject(pi.hProcess, INFINITE);
    GetExitCodeProcess(pi.hProcess, &code);
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
    if (code != 9)
        return fail("the child was not killed at the rename");
    if (first_value() != 3 || others_in_dir() != 1)
        return fail("after the kill: the old file, its temporary beside it");
    if (save(5, NULL) != NPYIO_OK || first_value() != 5 ||
        others_in_dir() != 0)
        return fail("the next save: the dead one's temporary removed");
    return 0;
}

/* DeleteFileW of a UTF-8 name (the C runtime's remove() would take it
 * in the ANSI code page). */
static BOOL remove_utf8(const char *name)
{
    wchar_t w[1100];

    return MultiByteToWideChar(CP_UTF8, 0, name, -1, w, 1100) > 0 &&
           DeleteFileW(w);
}

static int past_4_gib(void)
{
    static const char bytes[8] = "far away";
    const int64_t at = (int64_t)5 << 30;
    char name[1100], back[8];
    npyio_stream *s = NULL;
    int64_t pos = 0, len = 0;
    size_t got = 0;
    int bad;

    snprintf(name, sizeof name, "%s/big-\xc3\xa9.bin", dir);
    if (npyio_stream_open_path(name, NPYIO_STREAM_WRITE, NULL, &s) !=
            NPYIO_OK ||
        npyio__stream_seek(s, at, NPYIO_SEEK_SET, &pos) != NPYIO_OK ||
        npyio__stream_write(s, bytes, sizeof bytes, "test") != NPYIO_OK ||
        npyio_stream_close(s) != NPYIO_OK)
        return fail("writing at 5 GiB");
    s = NULL;
    bad = npyio_stream_open_path(name, NPYIO_STREAM_READ, NULL, &s) !=
              NPYIO_OK ||
          npyio__stream_length(s, &len) != NPYIO_OK ||
          len != at + 8 ||
          npyio__stream_read_at(s, back, sizeof back, at, &got, "test") !=
              NPYIO_OK ||
          got != sizeof back || memcmp(back, bytes, sizeof back) != 0;
    npyio_stream_close(s);
    if (bad)
        return fail("reading back at 5 GiB");
    return remove_utf8(name) ? 0 : fail("removing the 5 GiB file");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: win_replace DIR\n");
        return 2;
    }
    snprintf(dir, sizeof dir, "%s", argv[1]);
    snprintf(path, sizeof path, "%s\\a.npy", dir);
    if (argc == 3 && strcmp(argv[2], "child") == 0)
        return child();
    CreateDirectoryA(dir, NULL);
    if (save(1, NULL) != NPYIO_OK)
        return fail("the first save");
    if (sharing_violation() != 0 || crash(argv[0]) != 0 ||
        past_4_gib() != 0)
        return 1;
    printf("replace OK\n");
    return 0;
}
