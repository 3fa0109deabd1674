/*
 * bench_small.c - saving and loading many small files in one directory
 * (not part of ctest).
 *
 *   bench_small [--dir DIR] [--files N] [--rounds N]
 *
 * Files of (16,) float32 (192 bytes), by default 10,000 of them into a new
 * directory under DIR (default /dev/shm, a tmpfs; on a disk file system
 * the durable rounds sync between contenders). Every contender writes the
 * same paths, one after the other within a round, so each replaces the
 * files of the one before (a first, unmeasured round creates them):
 *
 *   save, durability off: npyio_save_with_header (NPYIO_WRITE_NO_SYNC) against
 *     open(O_TRUNC) + write + close (the plain floor), the atomic steps by
 *     hand (temporary + write + close + rename), the same as the
 *     outside-testing fixes require them (lstat, an unnamed temporary
 *     named just before the rename; then also the directory's stat, the
 *     temporary's fstat and a per-process name), and np.save;
 *   save, durable: npyio_save_with_header against the durable atomic steps by hand
 *     (temporary + write + fsync + close + rename + fsync of the directory),
 *     on a tenth of the files;
 *   new files: npyio_save_with_header (durability off) of names that do not exist yet,
 *     against open(O_EXCL) + write + close;
 *   load: npyio_load_with_header against open + read + close, and np.load.
 *
 * Then the same saves into a directory that already holds 10,000 other
 * files (atomic writes look for stale temporaries only in small
 * directories). Each line: our files/s, then the median (min..max) over
 * rounds of each contender's time divided by ours (> 1: libnpyio faster).
 */
#define _POSIX_C_SOURCE 200809L
#define _GNU_SOURCE /* O_TMPFILE */
#include <fcntl.h>
#include <sys/stat.h>
#include <stdbool.h>

#include "benchutil.h"
#include "bench.h"

#define VALUES 16

typedef struct bench {
    char dir[256];
    int files;
    npyio_header *h;
    const float *values;
    const unsigned char *bytes; /* the whole file, header and data */
    size_t len;
    bool disk;                  /* sync between durable contenders */
} bench;

static void path_of(const bench *b, const char *stem, int i, char *path,
                    size_t cap)
{
    snprintf(path, cap, "%s/%s%06d.npy", b->dir, stem, i);
}

static double save_ours(const bench *b, const char *stem, uint32_t flags,
                        int files)
{
    char path[512];
    double t0 = now();
    int i;

    for (i = 0; i < files; i++) {
        path_of(b, stem, i, path, sizeof path);
        if (npyio_save_with_header(path, b->h, b->values, VALUES * sizeof(float), flags,
                       NULL) != NPYIO_OK)
            die(path);
    }
    return now() - t0;
}

static void write_all(int fd, const bench *b, const char *path)
{
    if (fd < 0 || write(fd, b->bytes, b->len) != (ssize_t)b->len)
        die(path);
}

static double save_plain(const bench *b, const char *stem, int open_flags)
{
    char path[512];
    double t0 = now();
    int i;

    for (i = 0; i < b->files; i++) {
        int fd;

        path_of(b, stem, i, path, sizeof path);
        fd = open(path, O_WRONLY | O_CREAT | open_flags, 0666);
        write_all(fd, b, path);
        if (close(fd) != 0)
            die(path);
    }
    return now() - t0;
}

/* The atomic steps by hand, durable or not. A durable save of one file
 * opens its directory to sync it, as a program saving files one by one
 * must. */
static double save_renamed(const bench *b, const char *stem, bool durable,
                           int files)
{
    char path[512], temp[520];
    double t0 = now();
    int i;

    for (i = 0; i < files; i++) {
        int fd, dir_fd;

        path_of(b, stem, i, path, sizeof path);
        snprintf(temp, sizeof temp, "%s.tmp", path);
        fd = open(temp, O_WRONLY | O_CREAT | O_EXCL, 0666);
        write_all(fd, b, path);
        if ((durable && fsync(fd) != 0) || close(fd) != 0 ||
            rename(temp, path) != 0)
            die(path);
        if (durable) {
            dir_fd = open(b->dir, O_RDONLY);
            if (dir_fd < 0 || fsync(dir_fd) != 0 || close(dir_fd) != 0)
                die(b->dir);
        }
    }
    return now() - t0;
}

/*
 * The same steps as the outside-testing fixes require them, by hand: the
 * destination's lstat (symbolic links are followed under the
 * protected_symlinks rule), an unnamed temporary (a killed writer leaves
 * nothing), write, naming it, close, rename. `checks` adds the rest of
 * what those fixes ask of a replacing save: the directory's stat (whether
 * to look for stale temporaries), the temporary's fstat (to keep a
 * replaced file's owner and mode) and a name unique to the process (its
 * pid). Linux only; elsewhere the named steps above.
 */
static double save_hardened(const bench *b, const char *stem, bool checks,
                            bool durable, int files)
{
#if defined(O_TMPFILE) && defined(AT_EMPTY_PATH)
    char path[512], temp[540];
    double t0 = now();
    int i;

    for (i = 0; i < files; i++) {
        struct stat info;
        int fd;

        path_of(b, stem, i, path, sizeof path);
        (void)lstat(path, &info);
        fd = open(b->dir, O_TMPFILE | O_RDWR, 0666);
        if (checks) {
            (void)stat(b->dir, &info);
            (void)fstat(fd, &info);
            snprintf(temp, sizeof temp, "%s.%ld.tmp", path, (long)getpid());
        } else {
            snprintf(temp, sizeof temp, "%s.tmp", path);
        }
        write_all(fd, b, path);
        if ((durable && fsync(fd) != 0) ||
            linkat(fd, "", AT_FDCWD, temp, AT_EMPTY_PATH) != 0 ||
            close(fd) != 0 || rename(temp, path) != 0)
            die(path);
        if (durable) {
            int dir_fd = open(b->dir, O_RDONLY);

            if (dir_fd < 0 || fsync(dir_fd) != 0 || close(dir_fd) != 0)
                die(b->dir);
        }
    }
    return now() - t0;
#else
    (void)checks;
    return save_renamed(b, stem, durable, files);
#endif
}

static double load_ours(const bench *b, const char *stem)
{
    char path[512];
    double t0 = now();
    int i;

    for (i = 0; i < b->files; i++) {
        npyio_header *h = NULL;
        void *data = NULL;

        path_of(b, stem, i, path, sizeof path);
        if (npyio_load_with_header(path, 0, NULL, &h, &data) != NPYIO_OK)
            die(path);
        npyio_free(data);
        npyio_header_free(h);
    }
    return now() - t0;
}

static double load_plain(const bench *b, const char *stem)
{
    static unsigned char buf[4096];
    char path[512];
    double t0 = now();
    int i;

    for (i = 0; i < b->files; i++) {
        int fd;

        path_of(b, stem, i, path, sizeof path);
        fd = open(path, O_RDONLY);
        if (fd < 0 || read(fd, buf, sizeof buf) != (ssize_t)b->len ||
            close(fd))
            die(path);
    }
    return now() - t0;
}

static void remove_files(const bench *b, const char *stem)
{
    char path[512];
    int i;

    for (i = 0; i < b->files; i++) {
        path_of(b, stem, i, path, sizeof path);
        unlink(path);
    }
}

static double numpy_many(const bench *b, const char *op, const char *stem)
{
    char cmd[600];

    snprintf(cmd, sizeof cmd, "%s %s/%s %d %d f4", op, b->dir, stem,
             b->files, VALUES);
    return numpy_time(cmd);
}

static void fill_dir(const char *dir, int count)
{
    char path[512];
    int i;

    for (i = 0; i < count; i++) {
        int fd;

        snprintf(path, sizeof path, "%s/other%06d", dir, i);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (fd < 0 || close(fd) != 0)
            die(path);
    }
}

/* Between durable contenders on a disk: start each from a clean cache. */
static void settle(const bench *b)
{
    if (b->disk)
        sync();
}

/* One line: our rate, then the median (min..max) of each other
 * contender's time over ours (> 1: libnpyio is faster). */
static void report_contenders(const char *name, int files, int n,
                              const double *ours,
                              const char *const *names,
                              double others[][MAX_ROUNDS], int count)
{
    double rate[MAX_ROUNDS], med, lo, hi;
    bench_ratio c[8];
    int i, k;

    for (i = 0; i < n; i++)
        rate[i] = files / ours[i];
    stats(rate, n, &med, &lo, &hi);
    printf("%-28s libnpyio %7.0f files/s", name, med);
    for (k = 0; k < count; k++)
        c[k] = bench_ratio_of(names[k], others[k], ours, n);
    print_contenders(c, count);
    fflush(stdout);
    bench_json(name, "files/s", rate, n, c, count);
}

/* Every contender writes the same names ("f"), replacing the files the
 * one before wrote. */
static void bench_saves(bench *b, int rounds, bool large_dir)
{
    static const char *const off_names[] = {
        "open+write+close", "temp+write+close+rename",
        "lstat+O_TMPFILE+write+link+close+rename",
        "the same + stat dir, fstat, getpid", "np.save"};
    static const char *const durable_names[] = {
        "temp+write+fsync+close+rename+fsync dir",
        "the same hardened, with the checks"};
    static const char *const new_names[] = {"open(O_EXCL)+write+close"};
    double ours[MAX_ROUNDS], off[5][MAX_ROUNDS];
    double durable[MAX_ROUNDS], by_hand[2][MAX_ROUNDS];
    double fresh[MAX_ROUNDS], excl[1][MAX_ROUNDS];
    int r, few = b->files / 10 > 0 ? b->files / 10 : 1;

    save_ours(b, "f", NPYIO_WRITE_NO_SYNC, b->files); /* create them */
    for (r = 0; r < rounds; r++) {
        ours[r] = save_ours(b, "f", NPYIO_WRITE_NO_SYNC, b->files);
        off[0][r] = save_plain(b, "f", O_TRUNC);
        off[1][r] = save_renamed(b, "f", false, b->files);
        off[2][r] = save_hardened(b, "f", false, false, b->files);
        off[3][r] = save_hardened(b, "f", true, false, b->files);
        off[4][r] = numpy_many(b, "savemany", "f");
        settle(b);
        durable[r] = save_ours(b, "f", 0, few);
        settle(b);
        by_hand[0][r] = save_renamed(b, "f", true, few);
        settle(b);
        by_hand[1][r] = save_hardened(b, "f", true, true, few);
        settle(b);
        remove_files(b, "f");
        fresh[r] = save_ours(b, "f", NPYIO_WRITE_NO_SYNC, b->files);
        remove_files(b, "f");
        excl[0][r] = save_plain(b, "f", O_EXCL);
    }
    report_contenders(large_dir ? "save, 10,000 other files"
                                : "save (durability off)",
                      b->files, rounds, ours, off_names, off, 5);
    report_contenders(large_dir ? "save durable, 10,000 others"
                                : "save (durable)",
                      few, rounds, durable, durable_names, by_hand, 2);
    report_contenders(large_dir ? "new files, 10,000 others" : "new files",
                      b->files, rounds, fresh, new_names, excl, 1);
}

static void bench_loads(bench *b, int rounds)
{
    static const char *const names[] = {"open+read+close", "np.load"};
    double ours[MAX_ROUNDS], others[2][MAX_ROUNDS];
    int r;

    for (r = 0; r < rounds; r++) {
        ours[r] = load_ours(b, "f");
        others[0][r] = load_plain(b, "f");
        others[1][r] = numpy_many(b, "loadmany", "f");
    }
    report_contenders("load", b->files, rounds, ours, names, others, 2);
}

static void run(bench *b, const char *base, int rounds, bool large_dir)
{
    char cmd[600];

    snprintf(b->dir, sizeof b->dir, "%s/npyio-bench-small-XXXXXX", base);
    if (mkdtemp(b->dir) == NULL)
        die(b->dir);
    if (large_dir)
        fill_dir(b->dir, 10000);
    bench_saves(b, rounds, large_dir);
    if (!large_dir)
        bench_loads(b, rounds);
    snprintf(cmd, sizeof cmd, "rm -rf %s", b->dir);
    if (system(cmd) != 0)
        die(cmd);
}

int main(int argc, char **argv)
{
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    int rounds = 5;
    float zeros[VALUES] = {0};
    unsigned char bytes[128 + sizeof zeros];
    char fstype[300];
    npyio_dtype *f4 = NULL;
    bench b = {.files = 10000, .values = zeros, .bytes = bytes,
               .len = sizeof bytes};
    int64_t n = VALUES;
    const bench_option options[] = {
        {"--dir", BENCH_TEXT, &base}, {"--rounds", BENCH_INT, &rounds},
        {"--files", BENCH_INT, &b.files}, BENCH_END};

    bench_args(argc, argv, 1, options);
    if (rounds < 1 || rounds > MAX_ROUNDS || b.files < 1)
        die("--rounds or --files");
    if (npyio_dtype_parse("=f4", 3, NULL, &f4) != NPYIO_OK ||
        npyio_header_new(f4, 1, &n, 0, &b.h) != NPYIO_OK ||
        npyio_header_emit(b.h, 0, bytes, 128, NULL) != NPYIO_OK)
        die("header");
    npyio_dtype_unref(f4);
    memcpy(bytes + 128, zeros, sizeof zeros);
    snprintf(fstype, sizeof fstype, "stat -f -c %%T %s | grep -qx tmpfs",
             base);
    b.disk = system(fstype) != 0;
    start_numpy();
    printf("%d files of %zu bytes in %s (%s), %d interleaved rounds; > 1 "
           "means libnpyio is faster\n", b.files, sizeof bytes, base,
           b.disk ? "disk: sync between durable contenders" : "tmpfs",
           rounds);
    run(&b, base, rounds, false);
    run(&b, base, rounds, true);
    stop_numpy();
    npyio_header_free(b.h);
    return 0;
}
