/*
 * bench_small.c - saving many small files into one directory (not part of
 * ctest).
 *
 *   bench_small [--dir DIR] [--rounds N]
 *
 * Each round saves `files` arrays of 16 float64 (256 bytes each) with
 * npyio_save (durability off: fsync would dominate and is the file
 * system's), with plain open(O_CREAT|O_TRUNC) + write() + close() of the
 * same bytes (the anchor), with the same steps through a temporary and a
 * rename (the atomic floor), and with np.save, interleaved, each
 * overwriting its own files of the previous round. Then loads of those
 * files: npyio_load against open + read + close of the same bytes. Twice: 150 files into a small
 * directory (450 entries), and 1,000 into one that already holds 10,000
 * other files (atomic writes look for
 * stale temporaries only in small directories; listing a large one per
 * save would cost more than the save). Medians (min..max) of files/s and
 * of the per-round ratios.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include <fcntl.h>

#include "benchutil.h"

#define VALUES 16

static double save_ours(const char *dir, int files, const npyio_header *h,
                        const double *v, const npyio_options *o)
{
    char path[512];
    double t0 = now();
    int i;

    for (i = 0; i < files; i++) {
        snprintf(path, sizeof path, "%s/ours%06d.npy", dir, i);
        if (npyio_save(path, h, v, (size_t)npyio_header_nbytes(h),
                       NPYIO_WRITE_NO_SYNC, o) != NPYIO_OK)
            die(path);
    }
    return now() - t0;
}

static double save_plain(const char *dir, int files,
                         const unsigned char *bytes, size_t len)
{
    char path[512];
    double t0 = now();
    int i;

    for (i = 0; i < files; i++) {
        int fd;

        snprintf(path, sizeof path, "%s/plain%06d.npy", dir, i);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (fd < 0 || write(fd, bytes, len) != (ssize_t)len || close(fd))
            die(path);
    }
    return now() - t0;
}

/* The atomic floor: what a replacing save must do at least. */
static double save_renamed(const char *dir, int files,
                           const unsigned char *bytes, size_t len)
{
    char path[512], temp[520];
    double t0 = now();
    int i;

    for (i = 0; i < files; i++) {
        int fd;

        snprintf(path, sizeof path, "%s/renamed%06d.npy", dir, i);
        snprintf(temp, sizeof temp, "%s.tmp", path);
        fd = open(temp, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd < 0 || write(fd, bytes, len) != (ssize_t)len || close(fd) ||
            rename(temp, path) != 0)
            die(path);
    }
    return now() - t0;
}

static double load_ours(const char *dir, int files, const npyio_options *o)
{
    char path[512];
    double t0 = now();
    int i;

    for (i = 0; i < files; i++) {
        npyio_header *h = NULL;
        void *data = NULL;

        snprintf(path, sizeof path, "%s/ours%06d.npy", dir, i);
        if (npyio_load(path, 0, o, &h, &data) != NPYIO_OK)
            die(path);
        npyio_free(data);
        npyio_header_free(h);
    }
    return now() - t0;
}

static double load_plain(const char *dir, int files, size_t len)
{
    static unsigned char buf[4096];
    char path[512];
    double t0 = now();
    int i;

    for (i = 0; i < files; i++) {
        int fd;

        snprintf(path, sizeof path, "%s/plain%06d.npy", dir, i);
        fd = open(path, O_RDONLY);
        if (fd < 0 || read(fd, buf, sizeof buf) != (ssize_t)len || close(fd))
            die(path);
    }
    return now() - t0;
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

/* One line: our rate, then the median (min..max) of each other
 * contender's time over ours (> 1: libnpyio is faster). */
static void report_contenders(const char *name, int files, int n,
                              const double *ours,
                              const char *const *names,
                              const double *const *others,
                              int count)
{
    double rate[MAX_ROUNDS], ratio[MAX_ROUNDS], med, lo, hi;
    int i, k;

    for (i = 0; i < n; i++)
        rate[i] = files / ours[i];
    stats(rate, n, &med, &lo, &hi);
    printf("%-26s libnpyio %6.0f files/s", name, med);
    for (k = 0; k < count; k++) {
        for (i = 0; i < n; i++)
            ratio[i] = others[k][i] / ours[i];
        stats(ratio, n, &med, &lo, &hi);
        printf(" | vs %s %.2fx (%.2f..%.2f)", names[k], med, lo, hi);
    }
    printf("\n");
}

int main(int argc, char **argv)
{
    const char *base = "/tmp";
    int rounds = 7, i, r, big;
    double zeros[VALUES] = {0};
    unsigned char bytes[128 + sizeof zeros];
    npyio_dtype *f8 = NULL;
    npyio_header *h = NULL;
    npyio_options *o = NULL;
    int64_t n = VALUES;

    for (i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--dir") == 0)
            base = argv[i + 1];
        else if (strcmp(argv[i], "--rounds") == 0)
            rounds = atoi(argv[i + 1]);
    }
    if (rounds < 1 || rounds > MAX_ROUNDS)
        die("--rounds");
    npyio_dtype_from_descr("<f8", 3, NULL, &f8);
    npyio_header_new(f8, 1, &n, 0, &h);
    npyio_options_new(&o);
    npyio_header_emit(h, 0, bytes, 128, NULL);
    memcpy(bytes + 128, zeros, sizeof zeros);
    start_numpy();
    printf("files of %zu bytes, %d interleaved rounds, durability off; >1 "
           "means libnpyio is faster\n", sizeof bytes, rounds);
    for (big = 0; big < 2; big++) {
        double ours[MAX_ROUNDS], plain[MAX_ROUNDS], numpy[MAX_ROUNDS];
        double renamed[MAX_ROUNDS], loads[MAX_ROUNDS], reads[MAX_ROUNDS];
        char dir[256], cmd[512];
        int files = big ? 1000 : 150;

        snprintf(dir, sizeof dir, "%s/npyio-bench-small-XXXXXX", base);
        if (mkdtemp(dir) == NULL)
            die(dir);
        if (big)
            fill_dir(dir, 10000);
        for (r = 0; r < rounds; r++) {
            ours[r] = save_ours(dir, files, h, zeros, o);
            plain[r] = save_plain(dir, files, bytes, sizeof bytes);
            renamed[r] = save_renamed(dir, files, bytes, sizeof bytes);
            snprintf(cmd, sizeof cmd, "savemany %s/numpy %d %d", dir, files,
                     VALUES);
            numpy[r] = numpy_time(cmd);
        }
        for (r = 0; r < rounds; r++) {
            loads[r] = load_ours(dir, files, o);
            reads[r] = load_plain(dir, files, sizeof bytes);
        }
        {
            const char *save_names[] = {"open+write+close",
                                        "temp+write+close+rename", "np.save"};
            const double *saves[] = {plain, renamed, numpy};
            const char *load_names[] = {"open+read+close"};
            const double *loaded[] = {reads};

            report_contenders(big ? "save 1,000 among 10,000" : "save 150, small dir",
                   files, rounds, ours, save_names, saves, 3);
            report_contenders(big ? "load 1,000 among 10,000" : "load 150, small dir",
                   files, rounds, loads, load_names, loaded, 1);
        }
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        if (system(cmd) != 0)
            die(cmd);
    }
    stop_numpy();
    npyio_options_free(o);
    npyio_header_free(h);
    npyio_dtype_unref(f8);
    return 0;
}
