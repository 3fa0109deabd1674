/*
 * fuzz_cli.c - libFuzzer target for the npyio tool: the input is a file
 * (an .npy file, an archive or anything), and every command runs on it in
 * this process (the tool's sources are compiled in, main renamed):
 * info, info --json, validate, print, dump (of each member of an
 * archive), convert (to big-endian Fortran order), pack and unpack; with
 * --untrusted for inputs of odd length. Each exits 0 or 1 (never 2: the
 * arguments are right), and what it writes must be right:
 *   - convert: the output loads to the input's array;
 *   - pack: the member's bytes are the input's bytes;
 *   - unpack: each file written is the bytes of a member of its name.
 * Never a crash, leak or hang. Standard output goes to /dev/null; run the
 * fuzzer with -close_fd_mask=2 to silence the tool's messages too.
 *
 * Built two ways: with clang -fsanitize=fuzzer for fuzzing (NPYIO_FUZZ=ON),
 * and always with replay.c, which runs the stored corpus under ctest.
 */
#include "fuzz_common.h"

#include <dirent.h>
#include <stdarg.h>
#include <sys/stat.h>

int npyio_cli_main(int argc, char **argv);

static int untrusted;

/* Run the tool: "npyio" argv..., the args NULL-terminated. */
static int tool(const char *first, ...)
{
    char *argv[16];
    int argc = 0;
    va_list ap;
    const char *a;

    argv[argc++] = (char *)"npyio";
    argv[argc++] = (char *)first;
    if (untrusted)
        argv[argc++] = (char *)"--untrusted";
    va_start(ap, first);
    while ((a = va_arg(ap, const char *)) != NULL && argc < 15)
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    return npyio_cli_main(argc, argv);
}

static void ran(int rc)
{
    check(rc == 0 || rc == 1);
}

/* The array in native order and C order, or NULL. */
static void *native(const char *path, npyio_header **h, size_t *len)
{
    void *d = NULL;

    *h = NULL;
    if (npyio_load(path, NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER,
                   fuzz_options(1 << 23, 1 << 22), h, &d) != NPYIO_OK) {
        npyio_header_free(*h);
        *h = NULL;
        return NULL;
    }
    *len = (size_t)npyio_header_nbytes(*h);
    return d;
}

static void check_convert(const char *in, const char *out)
{
    npyio_header *a = NULL, *b = NULL;
    size_t la = 0, lb = 0;
    void *x, *y;

    unlink(out);
    if (tool("convert", "--order", "F", "--byteorder", "big", "--no-sync",
             in, out, (char *)NULL) != 0) {
        check(access(out, F_OK) != 0);
        return;
    }
    x = native(in, &a, &la);
    y = native(out, &b, &lb);
    /* Object arrays are copied as pickles: nothing to compare natively. */
    check((x == NULL) == (y == NULL));
    check(x == NULL || (la == lb && memcmp(x, y, la) == 0));
    npyio_free(x);
    npyio_free(y);
    npyio_header_free(a);
    npyio_header_free(b);
    unlink(out);
}

/* Whether member `i` of the archive at path is these bytes. */
static int member_equals(const char *path, size_t i,
                         const unsigned char *bytes, size_t len)
{
    npyio_npz *npz = NULL;
    npyio_stream *s = NULL;
    unsigned char *got = malloc(len + 2);
    size_t n = 0;
    int same;

    check(got != NULL);
    check(npyio_npz_open_path(path, NULL, &npz) == NPYIO_OK);
    check(npyio_npz_open_member(npz, i, &s) == NPYIO_OK);
    same = npyio_stream_read(s, got, len + 1, &n) == NPYIO_OK && n == len &&
           memcmp(got, bytes, len) == 0;
    npyio_stream_close(s);
    npyio_npz_close(npz);
    free(got);
    return same;
}

static void check_pack(const char *in, const char *out,
                       const uint8_t *data, size_t size)
{
    char arg[512];

    unlink(out);
    snprintf(arg, sizeof arg, "x=%s", in);
    if (tool("pack", "--no-sync", out, arg, (char *)NULL) != 0) {
        check(access(out, F_OK) != 0);
        return;
    }
    check(member_equals(out, 0, data, size));
    unlink(out);
}

/* Each file unpack wrote is the bytes of a member of its name (members
 * that are no .npy file are skipped, and may share a written one's). */
static void check_unpacked(const char *dir, const char *archive,
                           npyio_npz *npz)
{
    size_t i, j;

    for (i = 0; npz != NULL && i < npyio_npz_count(npz); i++) {
        const char *name = npyio_npz_name(npz, i);
        char path[4200];
        size_t len = 0;
        unsigned char *b;
        int found = 0;

        snprintf(path, sizeof path, "%s/%s", dir, name);
        b = fuzz_get_file(path, &len);
        for (j = 0; b != NULL && !found && j < npyio_npz_count(npz); j++)
            found = strcmp(npyio_npz_name(npz, j), name) == 0 &&
                    member_equals(archive, j, b, len);
        check(b == NULL || found);
        free(b);
    }
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    if (d == NULL) {
        unlink(dir);
        return;
    }
    while ((e = readdir(d)) != NULL) {
        char path[4200];

        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        remove_tree(path);
    }
    closedir(d);
    rmdir(dir);
}

static void archive_commands(const char *path, const char *dir)
{
    npyio_npz *npz = NULL;
    size_t i;

    if (npyio_npz_open_path(path, fuzz_options(1 << 23, 1 << 22), &npz) !=
        NPYIO_OK)
        npz = NULL;
    for (i = 0; npz != NULL && i < npyio_npz_count(npz) && i < 4; i++) {
        ran(tool("print", "--max", "50", path, npyio_npz_key(npz, i),
                 (char *)NULL));
        ran(tool("dump", path, npyio_npz_key(npz, i), (char *)NULL));
    }
    remove_tree(dir);
    /* Only a clean run vouches for every name: a refused archive may
     * name files outside dir, which were not written. */
    if (tool("unpack", "--no-sync", path, dir, (char *)NULL) == 0)
        check_unpacked(dir, path, npz);
    remove_tree(dir);
    npyio_npz_close(npz);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = fuzz_scratch("fuzz_cli", 0, ".npy");
    const char *out = fuzz_scratch("fuzz_cli", 1, ".npy");
    const char *npz = fuzz_scratch("fuzz_cli", 2, ".npz");
    const char *dir = fuzz_scratch("fuzz_cli", 3, ".d");

    if (freopen("/dev/null", "w", stdout) == NULL)
        abort();
    untrusted = size % 2;
    fuzz_put_file(in, data, size);
    ran(tool("info", in, (char *)NULL));
    ran(tool("info", "--json", in, (char *)NULL));
    ran(tool("validate", in, (char *)NULL));
    ran(tool("print", "--max", "50", in, (char *)NULL));
    ran(tool("dump", in, (char *)NULL));
    check_convert(in, out);
    check_pack(in, npz, data, size);
    archive_commands(in, dir);
    fflush(stdout);
    unlink(in);
    return 0;
}
