/*
 * win_text_mode.c DIR - descriptors and FILEs in the C runtime's text
 * mode (the Windows build's test windows_text_mode, run under Wine).
 *
 * msvcrt opens files in text mode unless told otherwise: _write turns each
 * 0x0A into 0x0D 0x0A and _read stops at 0x1A. A caller who opens a file
 * with open() or fopen(path, "w") and hands it to npyio_stream_open_fd or
 * npyio_stream_open_file must still get the .npy bytes npyio_save writes
 * to a path. A '|u1' array of the 256 byte values (0x0A, 0x0D and 0x1A
 * among them) is written through a text-mode descriptor and a text-mode
 * FILE, each compared byte for byte with npyio_save's file, then read back
 * through text-mode ones. Fails without the library's switch to binary
 * mode (platform_win.c, npyio__fd_binary): the file grows by one byte per
 * 0x0A. Prints "text mode OK" or the first failure; exit 0 or 1.
 */
#include "npyio.h"

#include <direct.h>
#include <fcntl.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 256, NPY = 128 + N };

static unsigned char values[N];
static char dir[900];

static int fail(const char *what, const char *file)
{
    printf("win_text_mode: %s: %s (last error: %s)\n", file, what,
           npyio_last_error());
    return 1;
}

static void path_of(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s\\%s", dir, name);
}

/* The whole file, read in binary mode, into buf (at most cap bytes). */
static long file_bytes(const char *path, unsigned char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n;

    if (f == NULL)
        return -1;
    n = fread(buf, 1, cap, f);
    fclose(f);
    return (long)n;
}

/* Write the array as an .npy through the stream; closes it. */
static npyio_status write_npy(npyio_stream *s)
{
    npyio_dtype *dt = NULL;
    npyio_header *h = NULL;
    npyio_writer *w = NULL;
    int64_t shape[1] = {N};
    npyio_status st = npyio_dtype_parse("|u1", 3, NULL, &dt);

    if (st == NPYIO_OK)
        st = npyio_header_new(dt, 1, shape, 0, &h);
    if (st == NPYIO_OK)
        st = npyio_writer_create_stream(s, h, 0, NULL, &w);
    if (st == NPYIO_OK)
        st = npyio_writer_write(w, values, sizeof values);
    if (w != NULL && npyio_writer_close(w) != NPYIO_OK && st == NPYIO_OK)
        st = NPYIO_E_IO;
    npyio_header_free(h);
    npyio_dtype_unref(dt);
    if (npyio_stream_close(s) != NPYIO_OK && st == NPYIO_OK)
        st = NPYIO_E_IO;
    return st;
}

/* The array read back through the stream equals values; closes it. */
static int read_back_equal(npyio_stream *s)
{
    npyio_reader *r = NULL;
    unsigned char back[N + 1];
    int ok = npyio_reader_open_stream(s, NULL, &r) == NPYIO_OK &&
             npyio_reader_read(r, back, N, 0) == NPYIO_OK &&
             memcmp(back, values, N) == 0;

    npyio_reader_close(r);
    npyio_stream_close(s);
    return ok;
}

static int same_as_saved(const char *path, const unsigned char *saved)
{
    unsigned char got[NPY + 64];
    long n = file_bytes(path, got, sizeof got);

    if (n != NPY)
        return fail(n < 0 ? "cannot be read" : "not 384 bytes long", path);
    if (memcmp(got, saved, NPY) != 0)
        return fail("not npyio_save's bytes", path);
    return 0;
}

static int through_descriptor(const unsigned char *saved)
{
    char path[1024];
    npyio_stream *s = NULL;
    int fd, ok;

    path_of(path, sizeof path, "fd.npy");
    fd = _open(path, _O_RDWR | _O_CREAT | _O_TRUNC | _O_TEXT, 0600);
    if (fd < 0 || npyio_stream_open_fd(fd, NULL, &s) != NPYIO_OK ||
        write_npy(s) != NPYIO_OK)
        return fail("writing through a text-mode descriptor", path);
    _close(fd);
    if (same_as_saved(path, saved) != 0)
        return 1;
    fd = _open(path, _O_RDONLY | _O_TEXT);
    ok = fd >= 0 && npyio_stream_open_fd(fd, NULL, &s) == NPYIO_OK &&
         read_back_equal(s);
    if (fd >= 0)
        _close(fd);
    return ok ? 0 : fail("reading through a text-mode descriptor", path);
}

static int through_file(const unsigned char *saved)
{
    char path[1024];
    npyio_stream *s = NULL;
    FILE *f;
    int ok;

    path_of(path, sizeof path, "file.npy");
    f = fopen(path, "w");
    if (f == NULL || npyio_stream_open_file(f, NULL, &s) != NPYIO_OK ||
        write_npy(s) != NPYIO_OK)
        return fail("writing through a text-mode FILE", path);
    fclose(f);
    if (same_as_saved(path, saved) != 0)
        return 1;
    f = fopen(path, "r");
    ok = f != NULL && npyio_stream_open_file(f, NULL, &s) == NPYIO_OK &&
         read_back_equal(s);
    if (f != NULL)
        fclose(f);
    return ok ? 0 : fail("reading through a text-mode FILE", path);
}

int main(int argc, char **argv)
{
    unsigned char saved[NPY + 64];
    char path[1024];
    int64_t shape[1] = {N};
    int i;

    if (argc != 2) {
        fprintf(stderr, "usage: win_text_mode DIR\n");
        return 2;
    }
    snprintf(dir, sizeof dir, "%s", argv[1]);
    _mkdir(dir);
    for (i = 0; i < N; i++)
        values[i] = (unsigned char)i;
    path_of(path, sizeof path, "saved.npy");
    if (npyio_save(path, "|u1", 1, shape, values, sizeof values, 0,
                   NULL) != NPYIO_OK)
        return fail("npyio_save", path);
    if (file_bytes(path, saved, sizeof saved) != NPY)
        return fail("npyio_save's file is not 384 bytes long", path);
    if (through_descriptor(saved) != 0 || through_file(saved) != 0)
        return 1;
    printf("text mode OK\n");
    return 0;
}
