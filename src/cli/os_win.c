/*
 * os_win.c - os.h for Windows (built instead of os.c): the tool's
 * standard streams in binary mode (dump, pack - and unpack write bytes,
 * never CR/LF translated), its arguments as UTF-8 (from the UTF-16
 * command line, so names with "é" or "日本" arrive whole) and a console
 * that shows UTF-8 output (code page 65001: the UTF-8 the tool prints is
 * shown as the UTF-16 characters it encodes), paths through the UTF-16
 * calls (_wfopen, _wmkdir, CreateFileW), positioned reads that do not
 * move the file's offset, and folders held open below DIR so that unpack
 * follows no link or junction. No Linux advice or kernel copies.
 */
#define _WIN32_WINNT 0x0601
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <shellapi.h>

#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "os.h"

void cli_os_advise_huge_pages(void *p, size_t size)
{
    (void)p; /* no huge-page advice on Windows */
    (void)size;
}

void cli_os_widen_pipe(int fd)
{
    (void)fd; /* a pipe's size is set by its maker */
}

int cli_os_copy_range(int from, int64_t at, int to, uint64_t len,
                      uint64_t *done)
{
    (void)from, (void)at, (void)to, (void)len;
    *done = 0;
    return CLI_OS_ELSEWHERE;
}

/* ---- text: UTF-8 and UTF-16 ------------------------------------------------------ */

/* s as UTF-16 (malloc'd), or NULL with errno. */
static wchar_t *wide_of(const char *s)
{
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL,
                                0);
    wchar_t *w = n > 0 ? malloc((size_t)n * sizeof *w) : NULL;

    if (w == NULL) {
        errno = n > 0 ? ENOMEM : ENOENT;
        return NULL;
    }
    MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n);
    return w;
}

/* w as UTF-8 (malloc'd), or NULL. */
static char *utf8_of(const wchar_t *w)
{
    int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
    char *s = n > 0 ? malloc((size_t)n) : NULL;

    if (s != NULL)
        WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL);
    return s;
}

/* The arguments from the UTF-16 command line, as UTF-8; kept for the
 * whole run (the process owns them, as it does argv). Left as they were
 * when out of memory. */
static void utf8_arguments(int *argc, char ***argv)
{
    int n = 0, i;
    wchar_t **w = CommandLineToArgvW(GetCommandLineW(), &n);
    char **out = w != NULL ? calloc((size_t)n + 1, sizeof *out) : NULL;

    for (i = 0; out != NULL && i < n; i++)
        if ((out[i] = utf8_of(w[i])) == NULL)
            return; /* (what was converted stays for the process's life) */
    if (out != NULL) {
        *argc = n;
        *argv = out;
    }
    LocalFree(w);
}

void cli_os_start(int *argc, char ***argv)
{
    _setmode(_fileno(stdin), _O_BINARY);
    _setmode(_fileno(stdout), _O_BINARY);
    _setmode(_fileno(stderr), _O_BINARY);
    if (_isatty(_fileno(stdout)) || _isatty(_fileno(stderr)))
        SetConsoleOutputCP(CP_UTF8);
    utf8_arguments(argc, argv);
}

int cli_os_seekable(int fd)
{
    return GetFileType((HANDLE)_get_osfhandle(fd)) == FILE_TYPE_DISK;
}

long cli_os_cores(void)
{
    SYSTEM_INFO s;

    GetSystemInfo(&s);
    return s.dwNumberOfProcessors > 0 ? (long)s.dwNumberOfProcessors : 1;
}

/* ReadFile at an offset moves a synchronous handle's file pointer: it is
 * put back, under one lock for all positioned reads. */
static SRWLOCK positional = SRWLOCK_INIT;

int cli_os_pread(int fd, void *buf, size_t cap, int64_t offset, size_t *got)
{
    HANDLE h = (HANDLE)_get_osfhandle(fd);
    LARGE_INTEGER zero, kept;
    OVERLAPPED ov;
    DWORD n = 0, code = 0;
    BOOL ok;

    memset(&ov, 0, sizeof ov);
    ov.Offset = (DWORD)((uint64_t)offset & 0xffffffffu);
    ov.OffsetHigh = (DWORD)((uint64_t)offset >> 32);
    zero.QuadPart = 0;
    AcquireSRWLockExclusive(&positional);
    SetFilePointerEx(h, zero, &kept, FILE_CURRENT);
    ok = ReadFile(h, buf, cap > 0x40000000 ? 0x40000000 : (DWORD)cap, &n,
                  &ov);
    if (!ok)
        code = GetLastError();
    SetFilePointerEx(h, kept, NULL, FILE_BEGIN);
    ReleaseSRWLockExclusive(&positional);
    if (!ok && code != ERROR_HANDLE_EOF) {
        errno = EIO;
        return -1;
    }
    *got = ok ? n : 0;
    return 0;
}

void *cli_os_big_buffer(size_t size)
{
    return malloc(size); /* no huge pages to align for */
}

FILE *cli_os_fopen(const char *path, const char *mode)
{
    wchar_t *w = wide_of(path), *m = wide_of(mode);
    FILE *f = w != NULL && m != NULL ? _wfopen(w, m) : NULL;

    free(w);
    free(m);
    return f;
}

/* A missing folder on the way is ENOENT, as mkdir() says; a file there
 * ENOTDIR (Windows says "path not found" for both). */
static int mkdir_errno(const wchar_t *w)
{
    wchar_t *parent = _wcsdup(w), *cut;
    DWORD a;

    if (parent == NULL)
        return ENOMEM;
    cut = wcsrchr(parent, L'/');
    if (cut == NULL || (wcsrchr(parent, L'\\') > cut))
        cut = wcsrchr(parent, L'\\');
    if (cut != NULL)
        *cut = L'\0';
    a = cut != NULL ? GetFileAttributesW(parent) : INVALID_FILE_ATTRIBUTES;
    free(parent);
    return a != INVALID_FILE_ATTRIBUTES && !(a & FILE_ATTRIBUTE_DIRECTORY)
               ? ENOTDIR
               : ENOENT;
}

int cli_os_mkdir(const char *path)
{
    wchar_t *w = wide_of(path);
    int r = w != NULL ? _wmkdir(w) : -1;

    if (r != 0 && w != NULL && errno == ENOENT)
        errno = mkdir_errno(w);
    free(w);
    return r;
}

/* ---- what is at a path ------------------------------------------------------------ */

static int kind_of_attributes(DWORD a, bool follow)
{
    if (a == INVALID_FILE_ATTRIBUTES)
        return GetLastError() == ERROR_FILE_NOT_FOUND ||
                       GetLastError() == ERROR_PATH_NOT_FOUND
                   ? CLI_OS_MISSING
                   : (errno = EACCES, -1);
    if ((a & FILE_ATTRIBUTE_REPARSE_POINT) && !follow)
        return CLI_OS_OTHER;
    return (a & FILE_ATTRIBUTE_DIRECTORY) ? CLI_OS_FOLDER : CLI_OS_FILE;
}

int cli_os_path_kind(const char *path)
{
    wchar_t *w = wide_of(path);
    int kind;

    if (w == NULL)
        return -1;
    kind = kind_of_attributes(GetFileAttributesW(w), true);
    free(w);
    return kind;
}

/* ---- folders below DIR ---------------------------------------------------------- */

/* The path of `name` in the folder open as fd: the folder's final path
 * (without "\\?\", so "." resolves) and the name, UTF-16, malloc'd. */
static wchar_t *path_in(int fd, const char *name)
{
    wchar_t *w = wide_of(name), *full = NULL;
    HANDLE h = (HANDLE)_get_osfhandle(fd);
    DWORD n;

    if (w != NULL)
        full = malloc((32768 + wcslen(w) + 2) * sizeof *full);
    if (full == NULL) {
        free(w);
        return NULL;
    }
    n = GetFinalPathNameByHandleW(h, full, 32768, FILE_NAME_NORMALIZED);
    if (n == 0 || n >= 32768) {
        free(w);
        free(full);
        errno = EIO;
        return NULL;
    }
    if (wcsncmp(full, L"\\\\?\\", 4) == 0)
        memmove(full, full + 4, (n - 3) * sizeof *full);
    wcscat(full, L"\\");
    wcscat(full, w);
    free(w);
    return full;
}

/* A folder opened as a descriptor, held without sharing its deletion (it
 * and the folders above keep their names while it is open); a link or
 * junction itself when !follow, and then refused (ELOOP). */
static int open_folder(const wchar_t *w, bool follow)
{
    HANDLE h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE,
                           NULL, OPEN_EXISTING,
                           FILE_FLAG_BACKUP_SEMANTICS |
                               (follow ? 0 : FILE_FLAG_OPEN_REPARSE_POINT),
                           NULL);
    BY_HANDLE_FILE_INFORMATION info;
    int fd;

    if (h == INVALID_HANDLE_VALUE) {
        DWORD e = GetLastError();

        errno = e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND
                    ? ENOENT
                    : EACCES;
        return -1;
    }
    if (!GetFileInformationByHandle(h, &info) ||
        (info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) ||
        !(info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)) {
        errno = (info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)
                    ? ELOOP
                    : ENOTDIR;
        CloseHandle(h);
        return -1;
    }
    fd = _open_osfhandle((intptr_t)h, _O_RDONLY);
    if (fd < 0)
        CloseHandle(h);
    return fd;
}

int cli_os_dir_open(const char *path)
{
    wchar_t *w = wide_of(path);
    int fd = w != NULL ? open_folder(w, true) : -1;

    free(w);
    return fd;
}

int cli_os_dir_open_at(int fd, const char *part)
{
    wchar_t *w = path_in(fd, part);
    int next = w != NULL ? open_folder(w, false) : -1;

    free(w);
    return next;
}

int cli_os_kind_at(int fd, const char *name)
{
    wchar_t *w = path_in(fd, name);
    int kind;

    if (w == NULL)
        return -1;
    kind = kind_of_attributes(GetFileAttributesW(w), false);
    free(w);
    return kind;
}

int cli_os_dir_dup(int fd)
{
    return _dup(fd);
}

void cli_os_dir_close(int fd)
{
    (void)_close(fd);
}

/* ---- temporary files ------------------------------------------------------------- */

FILE *cli_os_temporary_file(void)
{
    wchar_t dir[MAX_PATH + 1], name[MAX_PATH + 1];
    HANDLE h;
    int fd;
    FILE *f;

    if (GetTempPathW(MAX_PATH + 1, dir) == 0 ||
        GetTempFileNameW(dir, L"npy", 0, name) == 0) {
        errno = EACCES;
        return NULL;
    }
    /* Deleted when its last handle closes, whatever happens to us. */
    h = CreateFileW(name, GENERIC_READ | GENERIC_WRITE,
                    FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                    NULL, CREATE_ALWAYS,
                    FILE_ATTRIBUTE_TEMPORARY | FILE_FLAG_DELETE_ON_CLOSE,
                    NULL);
    if (h == INVALID_HANDLE_VALUE) {
        DeleteFileW(name);
        errno = EACCES;
        return NULL;
    }
    fd = _open_osfhandle((intptr_t)h, _O_RDWR | _O_BINARY);
    f = fd >= 0 ? _fdopen(fd, "w+b") : NULL;
    if (f == NULL && fd >= 0)
        _close(fd);
    else if (fd < 0)
        CloseHandle(h);
    return f;
}

/* No open_memstream: a temporary file, read back into memory at close. */
FILE *cli_os_memstream(char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    return cli_os_temporary_file();
}

int cli_os_memstream_close(FILE *f, char **text, size_t *len)
{
    long n = 0;
    int ok = fflush(f) == 0 && fseek(f, 0, SEEK_END) == 0 &&
             (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0;

    *text = ok ? malloc((size_t)n + 1) : NULL;
    ok = *text != NULL && fread(*text, 1, (size_t)n, f) == (size_t)n;
    if (fclose(f) != 0 || !ok) {
        free(*text);
        *text = NULL;
        *len = 0;
        errno = ENOMEM;
        return -1;
    }
    (*text)[n] = '\0';
    *len = (size_t)n;
    return 0;
}
