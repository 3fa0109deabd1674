/*
 * fuzz_cli.h - what the npyio tool's fuzz targets share. The input is a
 * file (an .npy file, an archive or anything), and commands run on it in
 * this process (the tool's sources are compiled in, main renamed), with
 * --untrusted for inputs of odd length. Each exits 0 or 1 (never 2: the
 * arguments are right), and what it writes must be right. The targets:
 *   - fuzz_cli_info: info, info --json and validate;
 *   - fuzz_cli_print: print and dump, and print and dump of each of an
 *     archive's first four members;
 *   - fuzz_cli_write: convert (to big-endian Fortran order), whose output
 *     loads to the input's array; and unpack, each file written being the
 *     bytes of a member of its name;
 *   - fuzz_cli_pack: pack, the member's bytes being the input's bytes;
 *   - fuzz_cli: all of them, one after the other (for replaying a finding
 *     through every command; the parts fuzz faster apart).
 * Never a crash, leak or hang. Standard output goes to /dev/null; run the
 * fuzzers with -close_fd_mask=2 to silence the tool's messages too.
 *
 * The cap: an input is run only if what the commands would inflate is
 * small. An archive whose compressed members declare more than
 * FUZZ_CLI_MAX_INFLATED bytes in all (256 KiB; the library refuses to
 * inflate a member past its declared size, or one declaring 1100 times
 * its compressed size, which is not counted) is skipped: each command
 * would inflate it again, up to 1100 times the input's size, and print
 * walks every element of it. Stored members and .npy files are always run: what
 * they read is in the input. Bombs are the library's business (fuzz_npz,
 * test_npz_bomb); the tool's handling of large data is left to its tests.
 *
 * Scratch files go to a directory in memory (fuzz_memory_dir: /dev/shm),
 * and convert, pack and unpack run with --no-sync: no disk is waited for.
 */
#ifndef NPYIO_FUZZ_CLI_H
#define NPYIO_FUZZ_CLI_H

#include "fuzz_common.h"

#include <dirent.h>
#include <stdarg.h>
#include <sys/stat.h>

/* See "The cap" above. */
#define FUZZ_CLI_MAX_INFLATED ((int64_t)256 << 10)

/* Under AddressSanitizer: clear the shadow of large blocks with memset, as
 * for small ones, instead of mapping fresh pages over it (then faulting
 * them in again). The library's buffers of 256 KiB to 1 MiB, made and
 * freed by every command, cost twice as much that way on a virtual
 * machine; what ASan detects is the same. ASAN_OPTIONS overrides it. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_CLI_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(FUZZ_CLI_ASAN)
#define FUZZ_CLI_ASAN 1
#endif
#ifdef FUZZ_CLI_ASAN
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "clear_shadow_mmap_threshold=1073741824";
}
#endif

int npyio_cli_main(int argc, char **argv);

/* The files of one run: the input, convert's output, pack's archive and
 * unpack's directory. */
typedef struct fuzz_cli_files {
    const char *in, *out, *npz, *dir;
} fuzz_cli_files;

static int fuzz_cli_untrusted;

/* Run the tool: "npyio" argv..., the args NULL-terminated. */
static inline int tool(const char *first, ...)
{
    char *argv[16];
    int argc = 0;
    va_list ap;
    const char *a;

    argv[argc++] = (char *)"npyio";
    argv[argc++] = (char *)first;
    if (fuzz_cli_untrusted)
        argv[argc++] = (char *)"--untrusted";
    va_start(ap, first);
    while ((a = va_arg(ap, const char *)) != NULL && argc < 15)
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    return npyio_cli_main(argc, argv);
}

static inline void ran(int rc)
{
    check(rc == 0 || rc == 1);
}

/* Whether the input is over the cap: an archive (as the tool opens one,
 * with the library's default limits) whose members that are not stored
 * declare more than FUZZ_CLI_MAX_INFLATED bytes in all. Members the
 * library refuses before inflating do not count: those declaring 1100
 * times their compressed size or more (NPYIO_LIMIT_NPZ_RATIO, the same by
 * default and in the untrusted preset). What no archive opens as
 * inflates nothing. */
static inline int fuzz_cli_over_cap(const char *path)
{
    npyio_npz *npz = NULL;
    int64_t total = 0, method = 0, size = 0, csize = 0;
    size_t i;
    int over = 0;

    if (npyio_npz_open_path(path, NULL, &npz) != NPYIO_OK)
        return 0;
    for (i = 0; i < npyio_npz_count(npz) && !over; i++) {
        if (npyio_npz_stat(npz, i, NPYIO_NPZ_STAT_METHOD, &method) != NPYIO_OK ||
            npyio_npz_stat(npz, i, NPYIO_NPZ_STAT_SIZE, &size) != NPYIO_OK ||
            npyio_npz_stat(npz, i, NPYIO_NPZ_STAT_COMPRESSED_SIZE, &csize) !=
                NPYIO_OK) {
            over = 1;
        } else if (method != 0 && size > 0 && csize > 0 &&
                   size / csize < 1100) {
            over = size > FUZZ_CLI_MAX_INFLATED - total;
            total += over ? 0 : size;
        }
    }
    npyio_npz_close(npz);
    return over;
}

/* The scratch paths (made once), the input written to in; 0 if the input
 * is to be run, 1 if it is over the cap (in is removed again). */
static inline int fuzz_cli_start(const uint8_t *data, size_t size,
                                 const char *target, fuzz_cli_files *f)
{
    static int ready;
    static fuzz_cli_files files;

    if (!ready) {
        const char *dir = fuzz_memory_dir();

        files.in = fuzz_scratch_in(dir, target, 0, ".npy");
        files.out = fuzz_scratch_in(dir, target, 1, ".npy");
        files.npz = fuzz_scratch_in(dir, target, 2, ".npz");
        files.dir = fuzz_scratch_in(dir, target, 3, ".d");
        if (freopen("/dev/null", "w", stdout) == NULL)
            abort();
        ready = 1;
    }
    *f = files;
    fuzz_cli_untrusted = size % 2;
    fuzz_put_file(f->in, data, size);
    if (fuzz_cli_over_cap(f->in)) {
        unlink(f->in);
        return 1;
    }
    return 0;
}

static inline void fuzz_cli_end(const fuzz_cli_files *f)
{
    fflush(stdout);
    unlink(f->in);
}

/* ---- read: info, validate, print, dump ---------------------------------- */

/* The keys of an archive's members, as the untrusted preset reads them;
 * NULL if it is none. */
static inline npyio_npz *fuzz_cli_archive(const char *path)
{
    npyio_npz *npz = NULL;

    if (npyio_npz_open_path(path, fuzz_options(1 << 23, 1 << 22), &npz) !=
        NPYIO_OK)
        npz = NULL;
    return npz;
}

/* info, info --json, validate. */
static inline void fuzz_cli_info(const fuzz_cli_files *f)
{
    ran(tool("info", f->in, (char *)NULL));
    ran(tool("info", "--json", f->in, (char *)NULL));
    ran(tool("validate", f->in, (char *)NULL));
}

/* print and dump, and of an archive's first four members. */
static inline void fuzz_cli_print(const fuzz_cli_files *f)
{
    npyio_npz *npz;
    size_t i;

    ran(tool("print", "--max", "50", f->in, (char *)NULL));
    ran(tool("dump", f->in, (char *)NULL));
    npz = fuzz_cli_archive(f->in);
    for (i = 0; npz != NULL && i < npyio_npz_count(npz) && i < 4; i++) {
        ran(tool("print", "--max", "50", f->in, npyio_npz_key(npz, i),
                 (char *)NULL));
        ran(tool("dump", f->in, npyio_npz_key(npz, i), (char *)NULL));
    }
    npyio_npz_close(npz);
}

/* ---- write: convert, pack, unpack --------------------------------------- */

/* The array in native order and C order, or NULL. */
static inline void *fuzz_cli_native(const char *path, npyio_header **h,
                                    size_t *len)
{
    void *d = NULL;

    *h = NULL;
    if (npyio_load_with_header(path, NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER,
                   fuzz_options(1 << 23, 1 << 22), h, &d) != NPYIO_OK) {
        npyio_header_free(*h);
        *h = NULL;
        return NULL;
    }
    *len = (size_t)npyio_header_nbytes(*h);
    return d;
}

static inline void check_convert(const char *in, const char *out)
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
    x = fuzz_cli_native(in, &a, &la);
    y = fuzz_cli_native(out, &b, &lb);
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
static inline int member_equals(const char *path, size_t i,
                                const unsigned char *bytes, size_t len)
{
    npyio_npz *npz = NULL;
    npyio_stream *s = NULL;
    unsigned char *got = malloc(len + 2);
    size_t n = 0;
    int same;

    check(got != NULL);
    check(npyio_npz_open_path(path, NULL, &npz) == NPYIO_OK);
    check(npyio_stream_open_member(npz, i, &s) == NPYIO_OK);
    same = npyio_stream_read(s, got, len + 1, &n) == NPYIO_OK && n == len &&
           memcmp(got, bytes, len) == 0;
    npyio_stream_close(s);
    npyio_npz_close(npz);
    free(got);
    return same;
}

static inline void check_pack(const char *in, const char *out,
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
static inline void check_unpacked(const char *dir, const char *archive,
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

static inline void remove_tree(const char *dir)
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
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) <
            (int)sizeof path)
            remove_tree(path);
    }
    closedir(d);
    rmdir(dir);
}

static inline void check_unpack(const char *in, const char *dir)
{
    npyio_npz *npz = fuzz_cli_archive(in);

    remove_tree(dir);
    /* Only a clean run vouches for every name: a refused archive may
     * name files outside dir, which were not written. */
    if (tool("unpack", "--no-sync", in, dir, (char *)NULL) == 0)
        check_unpacked(dir, in, npz);
    remove_tree(dir);
    npyio_npz_close(npz);
}

#endif
