/*
 * platform_win.c - platform.h for Windows (built with mingw-w64 instead of
 * platform.c). Descriptors are the C runtime's (msvcrt: int descriptors
 * over HANDLEs, binary mode always, no CR/LF translation); files are
 * opened with CreateFileW, so that paths, UTF-8 in the API, reach the
 * system as UTF-16 ("é", "日本" work), and shared for reading, writing and
 * deletion as POSIX files are: a file open here can still be renamed over
 * or removed, which atomic replacement needs. Errors are mapped to errno
 * values, the module's language on every system (platform.h).
 *
 * What Windows has no meaning for, and what is done instead:
 *  - owners and permission bits: a file's uid is 0, as is the user's
 *    (npyio__user_id), and chown/chmod change nothing;
 *  - unnamed files: none (replace.c takes named temporaries);
 *  - kernel copies: none (copies go through a buffer);
 *  - folder descriptors (the `at` of the *_at calls): a folder opened
 *    below a base is held without sharing its deletion, so that it, and
 *    every folder above it, keeps its path while open, and names under
 *    it are that path (GetFinalPathNameByHandleW) and the name;
 *  - huge-page advice: none.
 * Locks are LockFileEx() locks of one byte far beyond any data (Windows
 * locks are mandatory: a lock over the data would stop the other
 * holders' reads and writes); like OFD locks they belong to the open
 * file, so two opens conflict in one process too.
 */
#define _WIN32_WINNT 0x0601 /* Windows 7: SetFileInformationByHandle */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include "error.h"
#include "platform.h"

#include <errno.h>
#include <io.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Where the locks live: one byte at 2^63 - 2, past any file's data. */
#define LOCK_OFFSET_HIGH 0x7fffffffUL
#define LOCK_OFFSET_LOW 0xfffffffeUL

void npyio__advise_huge_pages(void *ptr, size_t size)
{
    (void)ptr; /* advice only, and Windows has none to give */
    (void)size;
}

/* Every block through _aligned_malloc (at least 16), so that one free
 * serves all: the runtime's free() cannot take an aligned block. */
void *npyio__sys_alloc(void *user, size_t size, size_t alignment)
{
    (void)user;
    return _aligned_malloc(size ? size : 1, alignment < 16 ? 16 : alignment);
}

void npyio__sys_free(void *user, void *ptr, size_t size)
{
    (void)user;
    (void)size;
    _aligned_free(ptr);
}

/* ---- errors ------------------------------------------------------------------- */

/* The errno value of a Windows error. Sharing and lock violations (another
 * program holds the file) are EBUSY, which only they give here. */
static int errno_of(DWORD code)
{
    switch (code) {
    case ERROR_FILE_NOT_FOUND: case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_DRIVE: case ERROR_BAD_NETPATH: case ERROR_INVALID_NAME:
    case ERROR_BAD_PATHNAME:
        return ENOENT;
    case ERROR_DIRECTORY: return ENOTDIR;
    case ERROR_ACCESS_DENIED: case ERROR_WRITE_PROTECT: return EACCES;
    case ERROR_SHARING_VIOLATION: case ERROR_LOCK_VIOLATION:
    case ERROR_USER_MAPPED_FILE:
        return EBUSY;
    case ERROR_FILE_EXISTS: case ERROR_ALREADY_EXISTS: return EEXIST;
    case ERROR_NOT_ENOUGH_MEMORY: case ERROR_OUTOFMEMORY:
    case ERROR_COMMITMENT_LIMIT:
        return ENOMEM;
    case ERROR_DISK_FULL: case ERROR_HANDLE_DISK_FULL: return ENOSPC;
    case ERROR_BROKEN_PIPE: case ERROR_NO_DATA: return EPIPE;
    case ERROR_INVALID_HANDLE: return EBADF;
    case ERROR_FILENAME_EXCED_RANGE: return ENAMETOOLONG;
    case ERROR_NOT_SUPPORTED: case ERROR_INVALID_FUNCTION: return EOPNOTSUPP;
    case ERROR_NEGATIVE_SEEK: case ERROR_INVALID_PARAMETER: return EINVAL;
    case ERROR_DIR_NOT_EMPTY: return ENOTEMPTY;
    case ERROR_NOT_SAME_DEVICE: return EXDEV;
    case ERROR_CANT_RESOLVE_FILENAME: return ELOOP;
    default: return EIO;
    }
}

/* errno set from GetLastError(); returns -1. */
static int set_errno_win(void)
{
    errno = errno_of(GetLastError());
    return -1;
}

/* What the runtime's strerror() cannot say, or says too vaguely. */
static const char *reason_of(int err)
{
    switch (err) {
    case EBUSY:
        return "the file is in use by another program (a sharing or lock "
               "violation: it holds the file open without sharing it)";
    case ELOOP:
        return "a symbolic link or junction, which is not followed";
    case EOPNOTSUPP: case ENOSYS:
        return "not supported on Windows";
    case ESPIPE:
        return "not a seekable file (a pipe or console)";
    default:
        return strerror(err); /* the runtime's is per thread */
    }
}

int npyio__os_fail(const char *what, int err)
{
    npyio__fail(NPYIO_E_IO, "%s: %s", what, reason_of(err));
    return -1;
}

/* npyio__os_fail for GetLastError(), errno set too. */
static int win_fail(const char *what)
{
    int err = errno_of(GetLastError());

    npyio__os_fail(what, err);
    errno = err;
    return -1;
}

/* ---- paths: UTF-8 to UTF-16 --------------------------------------------------- */

/* The path as UTF-16 (malloc'd), or NULL with errno (ENOENT: not UTF-8). */
static wchar_t *wide_of(const char *path)
{
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1,
                                NULL, 0);
    wchar_t *w;

    if (n <= 0) {
        errno = ENOENT;
        return NULL;
    }
    w = malloc((size_t)n * sizeof *w);
    if (w == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, w, n);
    return w;
}

static HANDLE handle_of(int fd)
{
    return (HANDLE)_get_osfhandle(fd);
}

/* The full path of the folder open as descriptor `at` (without "\\?\",
 * so that "." and ".." after it are resolved), UTF-16, into w. */
static int folder_path(int at, wchar_t *w, DWORD cap)
{
    DWORD n = GetFinalPathNameByHandleW(handle_of(at), w, cap,
                                        FILE_NAME_NORMALIZED);

    if (n == 0 || n >= cap)
        return n == 0 ? set_errno_win() : (errno = ENAMETOOLONG, -1);
    if (wcsncmp(w, L"\\\\?\\", 4) == 0)
        memmove(w, w + 4, (n - 3) * sizeof *w);
    return 0;
}

/* The name relative to the folder open as `at` (NPYIO__AT_CWD: a path as
 * it is), as a UTF-16 path (malloc'd); NULL with errno. A folder opened
 * below a base (npyio__dir_open_beneath) is held without sharing its
 * deletion, so neither it nor a folder above can be renamed while it is
 * open: its path stays its own. */
static wchar_t *wide_at(int at, const char *name)
{
    wchar_t *w, *full;
    size_t n;

    if (at == NPYIO__AT_CWD)
        return wide_of(name);
    if ((w = wide_of(name)) == NULL)
        return NULL;
    n = 32768 + wcslen(w) + 2;
    full = malloc(n * sizeof *full);
    if (full == NULL || folder_path(at, full, 32768) != 0) {
        if (full != NULL)
            errno = errno ? errno : EIO;
        else
            errno = ENOMEM;
        free(full);
        free(w);
        return NULL;
    }
    wcscat(full, L"\\");
    wcscat(full, w);
    free(w);
    return full;
}

/* ---- opening ------------------------------------------------------------------- */

static DWORD disposition_of(int flags)
{
    if ((flags & O_CREAT) && (flags & O_EXCL))
        return CREATE_NEW;
    if (flags & O_CREAT)
        return (flags & O_TRUNC) ? CREATE_ALWAYS : OPEN_ALWAYS;
    return (flags & O_TRUNC) ? TRUNCATE_EXISTING : OPEN_EXISTING;
}

static DWORD access_of(int flags)
{
    switch (flags & O_ACCMODE) {
    case O_WRONLY: return GENERIC_WRITE;
    case O_RDWR: return GENERIC_READ | GENERIC_WRITE;
    default: return GENERIC_READ;
    }
}

/* Windows says "path not found" where POSIX tells a missing folder on
 * the way (ENOENT) from a file there (ENOTDIR): the folders above w are
 * looked at, nearest first. */
static int missing_path_errno(const wchar_t *w)
{
    wchar_t *up = _wcsdup(w), *cut;
    int err = ENOENT;
    DWORD a;

    while (up != NULL && (cut = wcspbrk(up, L"/\\")) != NULL) {
        while (wcspbrk(cut + 1, L"/\\") != NULL)
            cut = wcspbrk(cut + 1, L"/\\");
        *cut = L'\0';
        a = GetFileAttributesW(up);
        if (a != INVALID_FILE_ATTRIBUTES) {
            err = (a & FILE_ATTRIBUTE_DIRECTORY) ? ENOENT : ENOTDIR;
            break;
        }
    }
    free(up);
    return err;
}

/* CreateFileW as open() would: shared every way, folders too (backup
 * semantics), a link itself with O_NOFOLLOW (and then refused: ELOOP). */
static HANDLE create_file(const wchar_t *w, int flags)
{
    DWORD attrs = FILE_ATTRIBUTE_NORMAL | FILE_FLAG_BACKUP_SEMANTICS;
    BY_HANDLE_FILE_INFORMATION info;
    HANDLE h;

    if (flags & O_NOFOLLOW)
        attrs |= FILE_FLAG_OPEN_REPARSE_POINT;
    h = CreateFileW(w, access_of(flags),
                    FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                    NULL, disposition_of(flags), attrs, NULL);
    if (h == INVALID_HANDLE_VALUE) {
        DWORD code = GetLastError();

        errno = code == ERROR_PATH_NOT_FOUND ? missing_path_errno(w)
                                             : errno_of(code);
        return h;
    }
    if ((flags & O_NOFOLLOW) && GetFileInformationByHandle(h, &info) &&
        (info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)) {
        CloseHandle(h);
        errno = ELOOP;
        return INVALID_HANDLE_VALUE;
    }
    return h;
}

int npyio__fd_open_at(const npyio__faults *faults, int at, const char *path,
                      int flags, unsigned mode)
{
    wchar_t *w;
    HANDLE h;
    int fd;

    (void)mode; /* no permission bits: every file is the user's */
    if (npyio__faulted(faults, "open", NULL) || (w = wide_at(at, path)) == NULL)
        return -1;
    h = create_file(w, flags);
    free(w);
    if (h == INVALID_HANDLE_VALUE)
        return -1;
    fd = _open_osfhandle((intptr_t)h, _O_BINARY | (flags & O_ACCMODE) |
                                          (flags & O_APPEND));
    if (fd < 0) {
        CloseHandle(h);
        errno = EMFILE;
    }
    return fd;
}

int npyio__fd_open(const npyio__faults *faults, const char *path, int flags,
                   unsigned mode)
{
    return npyio__fd_open_at(faults, NPYIO__AT_CWD, path, flags, mode);
}

int npyio__fd_open_unnamed(const npyio__faults *faults, int at,
                           const char *dir)
{
    (void)faults, (void)at, (void)dir;
    errno = EOPNOTSUPP; /* Windows has no unnamed files */
    return -1;
}

int npyio__fd_link_unnamed(const npyio__faults *faults, int fd, int at,
                           const char *name)
{
    (void)faults, (void)fd, (void)at, (void)name;
    npyio__os_fail("linking an unnamed file", ENOSYS);
    errno = ENOSYS;
    return -1;
}

/* ---- descriptors --------------------------------------------------------------- */

/* A read's error: a folder (opened as POSIX opens one, for reading) is
 * EISDIR, as read() says, where Windows says only that it cannot. */
static int read_errno(int fd, int err)
{
    BY_HANDLE_FILE_INFORMATION info;

    if (GetFileInformationByHandle((HANDLE)_get_osfhandle(fd), &info) &&
        (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY))
        return EISDIR;
    return err;
}

int npyio__fd_read(const npyio__faults *faults, int fd, void *buf, size_t cap,
                   size_t *got)
{
    int n;

    if (cap > (size_t)0x40000000)
        cap = (size_t)0x40000000;
    n = npyio__faulted(faults, "read", &cap) ? -1
                                             : _read(fd, buf, (unsigned)cap);
    if (n < 0)
        return npyio__os_fail("read", read_errno(fd, errno));
    *got = (size_t)n;
    return 0;
}

int npyio__fd_write_file(const npyio__faults *faults, int fd, const void *buf,
                         size_t len, size_t *put)
{
    int n;

    if (len > (size_t)0x40000000)
        len = (size_t)0x40000000;
    n = npyio__faulted(faults, "write", &len) ? -1
                                              : _write(fd, buf, (unsigned)len);
    if (n < 0)
        return npyio__os_fail("write", errno);
    *put = (size_t)n;
    return 0;
}

/* No SIGPIPE on Windows: a closed pipe is EPIPE already. */
int npyio__fd_write(const npyio__faults *faults, int fd, const void *buf,
                    size_t len, size_t *put)
{
    return npyio__fd_write_file(faults, fd, buf, len, put);
}

static int whence_of(int whence)
{
    return whence == NPYIO_SEEK_SET ? SEEK_SET
           : whence == NPYIO_SEEK_CUR ? SEEK_CUR
                                      : SEEK_END;
}

int npyio__fd_seek(const npyio__faults *faults, int fd, int64_t offset,
                   int whence, int64_t *pos)
{
    __int64 at = npyio__faulted(faults, "lseek", NULL)
                     ? -1
                     : _lseeki64(fd, offset, whence_of(whence));

    if (at < 0)
        return npyio__os_fail("seek", errno);
    *pos = (int64_t)at;
    return 0;
}

bool npyio__fd_seekable(int fd)
{
    return GetFileType(handle_of(fd)) == FILE_TYPE_DISK;
}

/* A regular file: on disk and no folder. */
static bool is_regular(HANDLE h)
{
    BY_HANDLE_FILE_INFORMATION info;

    return GetFileType(h) == FILE_TYPE_DISK &&
           GetFileInformationByHandle(h, &info) &&
           !(info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY);
}

void npyio__fd_probe(int fd, bool just_opened, bool *seekable,
                     bool *regular, int64_t *pos)
{
    HANDLE h = handle_of(fd);

    *regular = is_regular(h);
    *seekable = GetFileType(h) == FILE_TYPE_DISK;
    *pos = 0;
    if (*seekable && !just_opened) {
        __int64 at = _lseeki64(fd, 0, SEEK_CUR);

        *pos = at >= 0 ? (int64_t)at : 0;
    }
}

int npyio__fd_close(const npyio__faults *faults, int fd)
{
    if (npyio__faulted(faults, "close", NULL)) {
        int err = errno;

        _close(fd); /* the descriptor goes anyway, as after a real failure */
        return npyio__os_fail("close", err);
    }
    if (_close(fd) != 0)
        return npyio__os_fail("close", errno);
    return 0;
}

void npyio__fd_close_quietly(int fd)
{
    (void)_close(fd);
}

int npyio__fd_duplicate(int fd)
{
    return _dup(fd);
}

/* FlushFileBuffers; a folder (opened to sync a rename, which
 * MOVEFILE_WRITE_THROUGH made durable already), a pipe or a console has
 * nothing to flush. */
static int flush_handle(const npyio__faults *faults, const char *call, int fd)
{
    HANDLE h = handle_of(fd);
    BY_HANDLE_FILE_INFORMATION info;

    if (npyio__faulted(faults, call, NULL))
        return npyio__os_fail(call, errno);
    if (GetFileType(h) != FILE_TYPE_DISK ||
        (GetFileInformationByHandle(h, &info) &&
         (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)))
        return 0;
    if (!FlushFileBuffers(h))
        return win_fail(call);
    return 0;
}

int npyio__fd_sync(const npyio__faults *faults, int fd)
{
    return flush_handle(faults, "fsync", fd);
}

int npyio__fd_datasync(const npyio__faults *faults, int fd)
{
    return flush_handle(faults, "fdatasync", fd);
}

/* ---- positional I/O ------------------------------------------------------------ */

/* ReadFile and WriteFile at an offset move a synchronous handle's file
 * pointer, which pread and pwrite must not: it is put back, under one
 * lock, so that positional calls on other threads cannot interleave. */
static SRWLOCK positional = SRWLOCK_INIT;

/* One positional transfer of at most n bytes: 0 with *done, or -1 with
 * errno (ESPIPE: not a file on disk). */
static int transfer_at(int fd, bool write, void *buf, DWORD n,
                       int64_t offset, DWORD *done)
{
    HANDLE h = handle_of(fd);
    LARGE_INTEGER zero, kept;
    OVERLAPPED ov;
    BOOL ok;
    DWORD code = 0;

    if (GetFileType(h) != FILE_TYPE_DISK) {
        errno = ESPIPE;
        return -1;
    }
    memset(&ov, 0, sizeof ov);
    ov.Offset = (DWORD)((uint64_t)offset & 0xffffffffu);
    ov.OffsetHigh = (DWORD)((uint64_t)offset >> 32);
    zero.QuadPart = 0;
    AcquireSRWLockExclusive(&positional);
    SetFilePointerEx(h, zero, &kept, FILE_CURRENT);
    ok = write ? WriteFile(h, buf, n, done, &ov)
               : ReadFile(h, buf, n, done, &ov);
    if (!ok)
        code = GetLastError();
    SetFilePointerEx(h, kept, NULL, FILE_BEGIN);
    ReleaseSRWLockExclusive(&positional);
    if (!ok && code == ERROR_HANDLE_EOF) { /* reading past the end */
        *done = 0;
        return 0;
    }
    if (!ok) {
        errno = errno_of(code);
        return -1;
    }
    return 0;
}

int npyio__fd_pread(const npyio__faults *faults, int fd, void *buf, size_t cap,
                    int64_t offset, size_t *got)
{
    DWORD n = 0;

    if (cap > (size_t)0x40000000)
        cap = (size_t)0x40000000;
    if (npyio__faulted(faults, "pread", &cap) ||
        transfer_at(fd, false, buf, (DWORD)cap, offset, &n) != 0) {
        int err = read_errno(fd, errno);

        npyio__os_fail("pread", err);
        errno = err; /* callers tell a pipe (ESPIPE) from a failure */
        return -1;
    }
    *got = n;
    return 0;
}

int npyio__fd_pread_all(const npyio__faults *faults, int fd, void *buf,
                        size_t len, int64_t offset, size_t *got)
{
    unsigned char *p = buf;
    size_t done = 0, n = 0;

    while (done < len) {
        if (npyio__fd_pread(faults, fd, p + done, len - done,
                            offset + (int64_t)done, &n) != 0)
            return -1;
        if (n == 0)
            break;
        done += n;
    }
    *got = done;
    return 0;
}

int npyio__fd_pwrite_all(const npyio__faults *faults, int fd, const void *buf,
                         size_t len, int64_t offset)
{
    const unsigned char *p = buf;

    while (len > 0) {
        size_t step = len > (size_t)0x40000000 ? (size_t)0x40000000 : len;
        DWORD n = 0;

        if (npyio__faulted(faults, "pwrite", &step) ||
            transfer_at(fd, true, (void *)p, (DWORD)step, offset, &n) != 0)
            return npyio__os_fail("pwrite", errno);
        if (n == 0)
            return npyio__os_fail("pwrite", EIO);
        p += n;
        len -= n;
        offset += n;
    }
    return 0;
}

/* ---- stdio -------------------------------------------------------------------- */

/* msvcrt's default mode is text: _write would turn each 0x0A of the data
 * into 0x0D 0x0A and _read stop at 0x1A. A stdio stream is switched
 * before anything passes through it (the runtime flushes it first). */
void npyio__fd_binary(int fd)
{
    (void)_setmode(fd, _O_BINARY);
}

void npyio__file_binary(FILE *f)
{
    int fd = _fileno(f);

    if (fd >= 0)
        (void)_setmode(fd, _O_BINARY);
}

int npyio__file_read(FILE *f, void *buf, size_t cap, size_t *got)
{
    size_t n = fread(buf, 1, cap, f);

    if (n == 0 && ferror(f))
        return npyio__os_fail("fread", errno);
    *got = n;
    return 0;
}

int npyio__file_write(FILE *f, const void *buf, size_t len, size_t *put)
{
    size_t n = fwrite(buf, 1, len, f);

    if (n < len || ferror(f))
        return npyio__os_fail("fwrite (bytes may have been lost)",
                              errno ? errno : EIO);
    *put = n;
    return 0;
}

int npyio__file_seek(FILE *f, int64_t offset, int whence, int64_t *pos)
{
    __int64 at;

    if (_fseeki64(f, offset, whence_of(whence)) != 0)
        return npyio__os_fail("fseek", errno);
    at = _ftelli64(f);
    if (at < 0)
        return npyio__os_fail("ftell", errno);
    *pos = (int64_t)at;
    return 0;
}

int npyio__file_flush(FILE *f)
{
    if (fflush(f) != 0)
        return npyio__os_fail("fflush", errno);
    return 0;
}

/* ---- sizes, space and locks ---------------------------------------------------- */

int npyio__fd_size(int fd, int64_t *size)
{
    LARGE_INTEGER n;

    if (!GetFileSizeEx(handle_of(fd), &n))
        return win_fail("GetFileSizeEx");
    *size = (int64_t)n.QuadPart;
    return 0;
}

/* Set the end of file without moving the file pointer. */
static int set_end(int fd, int64_t size, const char *call)
{
    FILE_END_OF_FILE_INFO end;

    end.EndOfFile.QuadPart = size;
    if (!SetFileInformationByHandle(handle_of(fd), FileEndOfFileInfo, &end,
                                    sizeof end))
        return win_fail(call);
    return 0;
}

int npyio__fd_truncate(const npyio__faults *faults, int fd, int64_t size)
{
    if (npyio__faulted(faults, "ftruncate", NULL))
        return npyio__os_fail("ftruncate", errno);
    return set_end(fd, size, "ftruncate");
}

/* Setting the end of a (non-sparse) file allocates its clusters on NTFS,
 * zeroed, so a full disk fails here; never shortened. */
int npyio__fd_reserve(const npyio__faults *faults, int fd, int64_t size)
{
    int64_t now;

    if (npyio__faulted(faults, "posix_fallocate", NULL))
        return npyio__os_fail("reserving disk blocks", errno);
    if (npyio__fd_size(fd, &now) != 0)
        return -1;
    return size > now ? set_end(fd, size, "reserving disk blocks") : 0;
}

static BOOL lock_byte(HANDLE h, bool exclusive, bool wait)
{
    OVERLAPPED ov;

    memset(&ov, 0, sizeof ov);
    ov.Offset = LOCK_OFFSET_LOW;
    ov.OffsetHigh = LOCK_OFFSET_HIGH;
    return LockFileEx(h, (exclusive ? LOCKFILE_EXCLUSIVE_LOCK : 0) |
                             (wait ? 0 : LOCKFILE_FAIL_IMMEDIATELY),
                      0, 1, 0, &ov);
}

static void unlock_byte(HANDLE h)
{
    OVERLAPPED ov;

    memset(&ov, 0, sizeof ov);
    ov.Offset = LOCK_OFFSET_LOW;
    ov.OffsetHigh = LOCK_OFFSET_HIGH;
    UnlockFileEx(h, 0, 1, 0, &ov);
}

/* What holds a conflicting lock, for the message: a refused exclusive
 * lock that a shared one then gets (let go at once) means shared holders. */
static const char *holder(HANDLE h, bool exclusive)
{
    if (exclusive && lock_byte(h, false, false)) {
        unlock_byte(h);
        return "writers of rows in place hold a shared lock on it";
    }
    return "an appender holds an exclusive lock on it";
}

int npyio__fd_lock(int fd, bool exclusive, bool wait, bool *busy)
{
    HANDLE h = handle_of(fd);
    DWORD code;

    *busy = false;
    if (lock_byte(h, exclusive, wait))
        return 0;
    code = GetLastError();
    if (code == ERROR_LOCK_VIOLATION || code == ERROR_IO_PENDING) {
        *busy = true;
        npyio__fail(NPYIO_E_LOCKED, "the file is locked: %s",
                    holder(h, exclusive));
        return -1;
    }
    return npyio__os_fail("lock", errno_of(code));
}

/* ---- names in the file system ------------------------------------------------- */

bool npyio__is_separator(char c)
{
    return c == '/' || c == '\\';
}

bool npyio__is_absolute(const char *path)
{
    return npyio__is_separator(path[0]) ||
           (((path[0] | 0x20) >= 'a' && (path[0] | 0x20) <= 'z') &&
            path[1] == ':');
}

/* A handle to look at `path` (no data access), links followed or not;
 * INVALID_HANDLE_VALUE with errno. */
static HANDLE look_at(int at, const char *path, bool follow)
{
    wchar_t *w = wide_at(at, path);
    HANDLE h;

    if (w == NULL)
        return INVALID_HANDLE_VALUE;
    h = CreateFileW(w, FILE_READ_ATTRIBUTES,
                    FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                    NULL, OPEN_EXISTING,
                    FILE_FLAG_BACKUP_SEMANTICS |
                        (follow ? 0 : FILE_FLAG_OPEN_REPARSE_POINT),
                    NULL);
    if (h == INVALID_HANDLE_VALUE)
        set_errno_win();
    free(w);
    return h;
}

static int info_of(HANDLE h, npyio__file_info *info)
{
    BY_HANDLE_FILE_INFORMATION b;
    DWORD a;

    if (!GetFileInformationByHandle(h, &b))
        return set_errno_win();
    a = b.dwFileAttributes;
    info->kind = (a & FILE_ATTRIBUTE_REPARSE_POINT) ? NPYIO__FILE_LINK
                 : (a & FILE_ATTRIBUTE_DIRECTORY)   ? NPYIO__FILE_DIRECTORY
                 : GetFileType(h) == FILE_TYPE_DISK ? NPYIO__FILE_REGULAR
                                                    : NPYIO__FILE_OTHER;
    info->device = b.dwVolumeSerialNumber;
    info->inode = ((uint64_t)b.nFileIndexHigh << 32) | b.nFileIndexLow;
    info->uid = info->gid = 0;
    info->mode = (a & FILE_ATTRIBUTE_READONLY) ? 0444 : 0666;
    info->sticky_shared = false;
    return 0;
}

int npyio__path_info(int at, const char *path, bool follow,
                     npyio__file_info *info)
{
    HANDLE h;
    int r;

    h = look_at(at, path, follow);
    if (h == INVALID_HANDLE_VALUE)
        return -1;
    r = info_of(h, info);
    CloseHandle(h);
    return r;
}

int npyio__fd_info(int fd, npyio__file_info *info)
{
    return info_of(handle_of(fd), info);
}

bool npyio__fd_is_path(int fd, const char *path)
{
    npyio__file_info by_fd, by_path;

    return npyio__fd_info(fd, &by_fd) == 0 &&
           npyio__path_info(NPYIO__AT_CWD, path, true, &by_path) == 0 &&
           by_fd.device == by_path.device && by_fd.inode == by_path.inode;
}

unsigned long npyio__user_id(void)
{
    return 0; /* no POSIX owners: every file is the user's (info_of) */
}

/* The final target of the link at path (GetFinalPathNameByHandleW),
 * without its "\\?\" prefix, as UTF-8. */
int npyio__read_link(const char *path, char *buf, size_t cap, size_t *len)
{
    wchar_t w[32768];
    HANDLE h = look_at(NPYIO__AT_CWD, path, true);
    DWORD n;
    const wchar_t *p = w;
    int bytes;

    if (h == INVALID_HANDLE_VALUE)
        return npyio__os_fail(path, errno);
    n = GetFinalPathNameByHandleW(h, w, 32768, FILE_NAME_NORMALIZED);
    CloseHandle(h);
    if (n == 0 || n >= 32768)
        return win_fail(path);
    if (wcsncmp(w, L"\\\\?\\", 4) == 0)
        p += 4;
    bytes = WideCharToMultiByte(CP_UTF8, 0, p, -1, buf, (int)cap, NULL, NULL);
    if (bytes <= 0)
        return npyio__os_fail(path, ENAMETOOLONG);
    *len = (size_t)bytes - 1;
    return 0;
}

int npyio__path_remove(int at, const char *path)
{
    wchar_t *w;
    BOOL ok;

    if ((w = wide_at(at, path)) == NULL)
        return -1;
    ok = DeleteFileW(w);
    free(w);
    return ok ? 0 : set_errno_win();
}

/* Both names as UTF-16: 0, or -1 with errno. */
static int wide_pair(int at, const char *from, const char *to, wchar_t **wf,
                     wchar_t **wt)
{
    *wf = wide_at(at, from);
    *wt = *wf != NULL ? wide_at(at, to) : NULL;
    if (*wt != NULL)
        return 0;
    free(*wf);
    return -1;
}

/* Windows 10's rename with POSIX semantics (FileRenameInfoEx): it
 * replaces a file that others hold open, sharing its deletion, as
 * rename() does. FALSE where the system or file system lacks it. */
static BOOL posix_rename(const wchar_t *from, const wchar_t *to)
{
    size_t len = wcslen(to) * sizeof(wchar_t);
    FILE_RENAME_INFO *r = calloc(1, sizeof *r + len);
    HANDLE h = CreateFileW(from, DELETE, FILE_SHARE_READ | FILE_SHARE_WRITE |
                                             FILE_SHARE_DELETE,
                           NULL, OPEN_EXISTING, 0, NULL);
    BOOL ok = FALSE;

    if (r != NULL && h != INVALID_HANDLE_VALUE) {
        r->Flags = 0x1 | 0x2; /* REPLACE_IF_EXISTS | POSIX_SEMANTICS */
        r->FileNameLength = (DWORD)len;
        memcpy(r->FileName, to, len + sizeof(wchar_t));
        ok = SetFileInformationByHandle(h, 22 /* FileRenameInfoEx */, r,
                                        (DWORD)(sizeof *r + len));
    }
    if (h != INVALID_HANDLE_VALUE)
        CloseHandle(h);
    free(r);
    return ok;
}

/* Where POSIX semantics are missing (older Windows, Wine, FAT): the old
 * file is moved aside to "<to>.npyio-old-<pid>-<n>" (allowed while open
 * when its holders share deletion, as ours do), the new one moved in, and
 * the old one deleted (gone when its last holder closes it). A failure
 * moving in moves the old one back. A crash between the two moves leaves
 * the old file under that name, beside the destination. */
static BOOL rename_via_aside(const wchar_t *from, const wchar_t *to)
{
    static volatile LONG count;
    size_t n = wcslen(to) + 64;
    wchar_t *aside = malloc(n * sizeof *aside);
    BOOL ok = FALSE;
    DWORD code;

    if (aside == NULL)
        return FALSE;
    swprintf(aside, n, L"%ls.npyio-old-%lu-%ld", to,
             (unsigned long)GetCurrentProcessId(),
             (long)InterlockedIncrement(&count));
    if (MoveFileExW(to, aside, MOVEFILE_WRITE_THROUGH)) {
        ok = MoveFileExW(from, to, MOVEFILE_WRITE_THROUGH);
        code = GetLastError();
        if (ok)
            DeleteFileW(aside);
        else
            MoveFileExW(aside, to, MOVEFILE_WRITE_THROUGH);
        SetLastError(code);
    }
    free(aside);
    return ok;
}

/* MoveFileExW replacing the destination, through to the disk before it
 * returns. A destination held open by a program that shares its deletion
 * (as this library does: an appender holds the archive it replaces) is
 * replaced by a POSIX-semantics rename, else moved aside first. One held
 * by a program that does not share deletion stays, and the rename fails
 * (EBUSY: a sharing violation; or EACCES). */
int npyio__path_rename(const npyio__faults *faults, int at, const char *from,
                       const char *to)
{
    wchar_t *wf, *wt;
    BOOL ok;
    DWORD code;

    if (npyio__faulted(faults, "rename", NULL) ||
        wide_pair(at, from, to, &wf, &wt) != 0)
        return npyio__os_fail("rename", errno);
    ok = MoveFileExW(wf, wt, MOVEFILE_REPLACE_EXISTING |
                                 MOVEFILE_WRITE_THROUGH);
    code = GetLastError();
    if (!ok && code == ERROR_ACCESS_DENIED)
        ok = posix_rename(wf, wt) || rename_via_aside(wf, wt);
    if (!ok && GetLastError() == ERROR_INVALID_PARAMETER)
        SetLastError(code); /* the fallbacks' own refusal says less */
    free(wf);
    free(wt);
    return ok ? 0 : win_fail("rename");
}

int npyio__path_link(const npyio__faults *faults, int at, const char *from,
                     const char *to)
{
    wchar_t *wf, *wt;
    BOOL ok;
    int err;

    if (npyio__faulted(faults, "linkat", NULL) ||
        wide_pair(at, from, to, &wf, &wt) != 0) {
        err = errno;
        npyio__os_fail("linkat", err);
        errno = err;
        return -1;
    }
    ok = CreateHardLinkW(wt, wf, NULL);
    free(wf);
    free(wt);
    return ok ? 0 : win_fail("linkat");
}

int npyio__fd_chown(int fd, unsigned long uid, unsigned long gid)
{
    (void)fd, (void)uid, (void)gid;
    return 0; /* no POSIX owners to keep */
}

int npyio__fd_chmod(int fd, unsigned mode)
{
    (void)fd, (void)mode;
    return 0; /* no permission bits to keep */
}

unsigned long npyio__process_id(void)
{
    return (unsigned long)GetCurrentProcessId();
}

unsigned long npyio__clock_nanoseconds(void)
{
    LARGE_INTEGER now;

    QueryPerformanceCounter(&now);
    return (unsigned long)now.QuadPart;
}

bool npyio__process_gone(long pid)
{
    HANDLE h;
    bool gone;

    if (pid <= 0)
        return false;
    h = OpenProcess(SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION, FALSE,
                    (DWORD)pid);
    if (h == NULL)
        return GetLastError() == ERROR_INVALID_PARAMETER; /* no such id */
    gone = WaitForSingleObject(h, 0) == WAIT_OBJECT_0; /* it has ended */
    CloseHandle(h);
    return gone;
}

/* The UTF-8 name of a directory entry into buf; false if it does not fit. */
static bool name_of(const WIN32_FIND_DATAW *e, char *buf, int cap)
{
    return WideCharToMultiByte(CP_UTF8, 0, e->cFileName, -1, buf, cap, NULL,
                               NULL) > 0;
}

void npyio__dir_remove_owned(int at, const char *dir,
                             bool (*pick)(const char *name, void *ctx),
                             void *ctx)
{
    char name[MAX_PATH * 4], pattern[MAX_PATH * 4];
    WIN32_FIND_DATAW e;
    wchar_t *w;
    HANDLE find;

    if ((size_t)snprintf(pattern, sizeof pattern, "%s/*", dir) >=
            sizeof pattern ||
        (w = wide_at(at, pattern)) == NULL)
        return;
    find = FindFirstFileW(w, &e);
    free(w);
    if (find == INVALID_HANDLE_VALUE)
        return;
    do {
        if ((e.dwFileAttributes & (FILE_ATTRIBUTE_DIRECTORY |
                                   FILE_ATTRIBUTE_REPARSE_POINT)) ||
            !name_of(&e, name, (int)sizeof name) || !pick(name, ctx) ||
            (size_t)snprintf(pattern, sizeof pattern, "%s/%s", dir, name) >=
                sizeof pattern)
            continue;
        (void)npyio__path_remove(at, pattern);
    } while (FindNextFileW(find, &e));
    FindClose(find);
}

/* Folder `part` of the folder open as `at` (NPYIO__AT_CWD: a path, links
 * followed: the caller's own base), opened without sharing its deletion
 * (wide_at) and, below the base, without following a link or junction;
 * made when missing. -1 with errno (ELOOP: a link or junction). */
static int open_folder(int at, const char *part, bool follow)
{
    wchar_t *w = wide_at(at, part);
    DWORD flags = FILE_FLAG_BACKUP_SEMANTICS |
                  (follow ? 0 : FILE_FLAG_OPEN_REPARSE_POINT);
    HANDLE h;
    int fd;

    if (w == NULL)
        return -1;
    if (!follow && !CreateDirectoryW(w, NULL) &&
        GetLastError() != ERROR_ALREADY_EXISTS) {
        free(w);
        return set_errno_win();
    }
    h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
                    OPEN_EXISTING, flags, NULL);
    free(w);
    if (h == INVALID_HANDLE_VALUE)
        return set_errno_win();
    fd = _open_osfhandle((intptr_t)h, _O_RDONLY);
    if (fd < 0)
        CloseHandle(h);
    return fd;
}

/* Why folder `part` of fd is no folder to go into: a link or junction,
 * or a file; else the error itself. */
static npyio_status beneath_fail(int fd, const char *part)
{
    npyio__file_info info;
    int err = errno;

    if (npyio__path_info(fd, part, false, &info) == 0 &&
        info.kind == NPYIO__FILE_LINK)
        return npyio__fail(NPYIO_E_IO, "folder '%s' is a symbolic link or "
                           "junction, which is not followed", part);
    if (npyio__path_info(fd, part, false, &info) == 0 &&
        info.kind != NPYIO__FILE_DIRECTORY)
        return npyio__fail(NPYIO_E_IO, "folder '%s' is not a folder", part);
    npyio__os_fail(part, err);
    return err == ENOMEM ? NPYIO_E_NOMEM : NPYIO_E_IO;
}

/* A folder opened below the base that is a link or junction after all
 * (made one between the check and the open): refused. */
static bool is_plain_folder(int fd)
{
    npyio__file_info info;

    return npyio__fd_info(fd, &info) == 0 &&
           info.kind == NPYIO__FILE_DIRECTORY;
}

npyio_status npyio__dir_open_beneath(const char *base, const char *path,
                                     int *dir, const char **leaf)
{
    char part[256];
    const char *p = path, *slash;
    int fd = open_folder(NPYIO__AT_CWD, base, true), next;

    if (fd < 0) {
        npyio__os_fail("the base folder", errno);
        return npyio__status_of_errno(errno);
    }
    while ((slash = strchr(p, '/')) != NULL) {
        size_t len = (size_t)(slash - p);
        npyio_status st = NPYIO_OK;

        if (len >= sizeof part) {
            st = (npyio__os_fail("a folder's name", ENAMETOOLONG),
                  NPYIO_E_IO);
        } else {
            memcpy(part, p, len);
            part[len] = '\0';
            next = open_folder(fd, part, false);
            if (next >= 0 && !is_plain_folder(next)) {
                _close(next);
                next = -1;
                errno = ELOOP;
            }
            if (next < 0)
                st = beneath_fail(fd, part);
        }
        _close(fd);
        if (st != NPYIO_OK)
            return st;
        fd = next;
        p = slash + 1;
    }
    *dir = fd;
    *leaf = p;
    return NPYIO_OK;
}

/* ---- memory maps ----------------------------------------------------------------- */

/* Maps start at multiples of the allocation granularity (64 KiB), not of
 * the page size: that is the size the callers align offsets to. */
size_t npyio__page_size(void)
{
    SYSTEM_INFO s;

    GetSystemInfo(&s);
    return s.dwAllocationGranularity > 0 ? s.dwAllocationGranularity : 65536;
}

npyio_status npyio__map_fd(const npyio__faults *faults, int fd, int64_t offset,
                           size_t len, bool writable, void **base)
{
    HANDLE m = NULL;
    void *p = NULL;
    int64_t size = 0;

    *base = NULL;
    if (npyio__faulted(faults, "mmap", NULL)) {
        npyio__os_fail("mmap", errno);
        return npyio__status_of_errno(errno);
    }
    /* A view may not pass the file's end (mmap's may, within its last
     * page: an empty array's 1-byte map just after its header). */
    if (npyio__fd_size(fd, &size) == 0 && size > offset &&
        (uint64_t)(size - offset) < (uint64_t)len)
        len = (size_t)(size - offset);
    m = CreateFileMappingW(handle_of(fd), NULL,
                           writable ? PAGE_READWRITE : PAGE_READONLY, 0, 0,
                           NULL);
    if (m != NULL) {
        p = MapViewOfFile(m, writable ? FILE_MAP_WRITE : FILE_MAP_READ,
                          (DWORD)((uint64_t)offset >> 32),
                          (DWORD)((uint64_t)offset & 0xffffffffu), len);
    }
    if (p == NULL) {
        int err = errno_of(GetLastError());

        if (m != NULL)
            CloseHandle(m);
        npyio__os_fail("mmap", err);
        return npyio__status_of_errno(err);
    }
    CloseHandle(m); /* the view keeps the mapping */
    *base = p;
    return NPYIO_OK;
}

npyio_status npyio__unmap(void *base, size_t len, bool sync)
{
    npyio_status st = NPYIO_OK;

    (void)len; /* the whole view (0), which may be shorter than len */
    if (sync && !FlushViewOfFile(base, 0)) {
        win_fail("FlushViewOfFile");
        st = NPYIO_E_IO;
    }
    UnmapViewOfFile(base);
    return st;
}

/* ---- copying a file ------------------------------------------------------------ */

int npyio__fd_copy_file(const npyio__faults *faults, int to, int from,
                        int64_t len, const char **how)
{
    (void)faults, (void)to, (void)from, (void)len;
    *how = "buffered copy";
    return NPYIO__COPY_BUFFERED;
}

npyio__platform_caps npyio__platform_capabilities(void)
{
    npyio__platform_caps caps;

    caps.portable = true; /* none of Linux's own calls */
    caps.unnamed_files = false;
    caps.ofd_locks = false;
    caps.kernel_copy = false;
    caps.fallocate = false;
    return caps;
}
