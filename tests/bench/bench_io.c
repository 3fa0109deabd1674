/*
 * bench_io.c - array I/O speed against the plain system calls and NumPy,
 * side by side in one run (not part of ctest: the machines are shared and
 * noisy, so figures are reported, never asserted).
 *
 *   bench_io [--size MiB] [--rounds N] [--dir DIR]
 *
 * Defaults: 1024 MiB of float64 in /dev/shm, 9 rounds. Each round runs
 * every contender once, interleaved (ours, the syscall anchor, NumPy), and
 * primes huge-page memory before each timed run (see PERF-NOTES). Printed:
 * medians of the per-round rates and of the per-round ratios, with min and
 * max. NumPy runs in one persistent /usr/bin/python3 child fed commands
 * through a pipe, so its start-up is never timed.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* madvise */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "npyio.h"

#define MAX_ROUNDS 64
#define HUGE ((size_t)2 << 20)

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_io: %s: %s\n", what,
            errno ? strerror(errno) : npyio_last_error());
    exit(1);
}

static void *thp_alloc(size_t size)
{
    void *p = NULL;

    if (posix_memalign(&p, HUGE, size ? size : 1) != 0)
        die("posix_memalign");
#ifdef MADV_HUGEPAGE
    madvise(p, size, MADV_HUGEPAGE);
#endif
    return p;
}

/* Touch and release huge-page memory, so the next allocation is fast for
 * everyone alike (freed memory returns to the host at once here). */
static void prime(void)
{
    size_t size = (size_t)64 << 20, i;
    unsigned char *p = thp_alloc(size);

    for (i = 0; i < size; i += 4096)
        p[i] = 1;
    free(p);
}

/* ---- NumPy in a persistent child ------------------------------------------- */

static FILE *py_in, *py_out;

static void start_numpy(void)
{
    int to[2], from[2];
    pid_t pid;

    if (pipe(to) != 0 || pipe(from) != 0)
        die("pipe");
    pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        dup2(to[0], 0);
        dup2(from[1], 1);
        close(to[1]);
        close(from[0]);
        execl("/usr/bin/python3", "python3", "-c",
              "import sys, time, numpy as np\n"
              "cache = {}\n"
              "for line in sys.stdin:\n"
              "    op, path = line.split()\n"
              "    t0 = time.perf_counter()\n"
              "    if op == 'load': a = np.load(path)\n"
              "    elif op == 'astype': a = np.load(path).astype('=f8')\n"
              "    elif op == 'contig': a = np.ascontiguousarray(np.load(path))\n"
              "    elif op == 'save': np.save(path, cache['a'])\n"
              "    elif op == 'keep': cache['a'] = np.load(path)\n"
              "    t = time.perf_counter() - t0\n"
              "    a = None\n"
              "    print(t, flush=True)\n",
              (char *)NULL);
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    py_in = fdopen(to[1], "w");
    py_out = fdopen(from[0], "r");
}

static double numpy_time(const char *op, const char *path)
{
    double t;

    prime();
    fprintf(py_in, "%s %s\n", op, path);
    fflush(py_in);
    if (fscanf(py_out, "%lf", &t) != 1)
        die("NumPy child (is python3-numpy installed?)");
    return t;
}

/* ---- the anchors: plain system calls ----------------------------------------- */

static size_t nbytes, offset;

static double read_plain(const char *path, void *warm, int swap)
{
    double t0, t;
    int fd;
    unsigned char *buf;
    size_t done = 0;

    prime();
    t0 = now();
    fd = open(path, O_RDONLY | O_CLOEXEC);
    buf = warm ? warm : thp_alloc(nbytes);
    if (fd < 0 || lseek(fd, (off_t)offset, SEEK_SET) < 0)
        die(path);
    while (done < nbytes) {
        ssize_t n = read(fd, buf + done, nbytes - done);

        if (n <= 0)
            die("read");
        done += (size_t)n;
    }
    if (swap) {
        uint64_t *v = (uint64_t *)buf;
        size_t i;

        for (i = 0; i < nbytes / 8; i++)
            v[i] = __builtin_bswap64(v[i]);
    }
    close(fd);
    t = now() - t0;
    if (!warm)
        free(buf);
    return t;
}

static double write_plain(const char *path, const void *data, int sync)
{
    double t0 = now(), t;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    size_t done = 0;

    if (fd < 0)
        die(path);
    while (done < nbytes + offset) {
        ssize_t n = write(fd, (const char *)data + done,
                          nbytes + offset - done);

        if (n <= 0)
            die("write");
        done += (size_t)n;
    }
    if (sync && fsync(fd) != 0)
        die("fsync");
    close(fd);
    t = now() - t0;
    return t;
}

/* ---- libnpyio ---------------------------------------------------------------------- */

static double our_load(const char *path, unsigned flags)
{
    npyio_header *h = NULL;
    void *data = NULL;
    double t0, t;

    prime();
    t0 = now();
    if (npyio_load(path, flags, NULL, &h, &data) != NPYIO_OK)
        die(path);
    t = now() - t0;
    npyio_free(data);
    npyio_header_free(h);
    return t;
}

static double our_read_into(const char *path, void *warm)
{
    npyio_reader *r = NULL;
    double t0, t;

    prime();
    t0 = now();
    if (npyio_reader_open_path(path, NULL, &r) != NPYIO_OK ||
        npyio_reader_read(r, warm, nbytes, 0) != NPYIO_OK)
        die(path);
    npyio_reader_close(r);
    t = now() - t0;
    return t;
}

static double our_save(const char *path, const npyio_header *h,
                       const void *data, int durable)
{
    npyio_options *o = NULL;
    double t0, t;

    npyio_options_new(&o);
    npyio_options_set_flag(o, NPYIO_FLAG_DURABLE, durable);
    prime();
    t0 = now();
    if (npyio_save(path, h, data, o) != NPYIO_OK)
        die(path);
    t = now() - t0;
    npyio_options_free(o);
    return t;
}

/* Peak RSS of one load in a fresh child, minus the child's baseline. */
static long load_rss_kib(const char *path)
{
    int p[2];
    long extra = -1;
    pid_t pid;

    if (pipe(p) != 0)
        die("pipe");
    pid = fork();
    if (pid == 0) {
        struct rusage before, after;
        npyio_header *h = NULL;
        void *data = NULL;
        long d;

        getrusage(RUSAGE_SELF, &before);
        if (npyio_load(path, 0, NULL, &h, &data) != NPYIO_OK)
            _exit(1);
        getrusage(RUSAGE_SELF, &after);
        d = after.ru_maxrss - before.ru_maxrss;
        if (write(p[1], &d, sizeof d) != sizeof d)
            _exit(1);
        _exit(0);
    }
    close(p[1]);
    if (read(p[0], &extra, sizeof extra) != sizeof extra)
        extra = -1;
    close(p[0]);
    waitpid(pid, NULL, 0);
    return extra;
}

/* ---- reporting ---------------------------------------------------------------------- */

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static void stats(const double *v, int n, double *med, double *lo,
                  double *hi)
{
    double s[MAX_ROUNDS];

    memcpy(s, v, (size_t)n * sizeof *v);
    qsort(s, (size_t)n, sizeof *s, compare);
    *med = s[n / 2];
    *lo = s[0];
    *hi = s[n - 1];
}

/* One line: our rate, then each reference's rate and our ratio to it. */
static void report(const char *name, int n, const double *ours,
                   const double *ref1, const char *ref1_name,
                   const double *ref2, const char *ref2_name)
{
    double rate[MAX_ROUNDS] = {0}, ratio[MAX_ROUNDS] = {0}, med, lo, hi, gb;
    int i;

    gb = (double)nbytes / 1e9;
    for (i = 0; i < n; i++)
        rate[i] = gb / ours[i];
    stats(rate, n, &med, &lo, &hi);
    printf("%-30s libnpyio %5.2f GB/s", name, med);
    for (i = 0; i < n; i++)
        ratio[i] = ref1[i] / ours[i];
    stats(ratio, n, &med, &lo, &hi);
    printf(" | vs %s %.2fx (%.2f..%.2f)", ref1_name, med, lo, hi);
    if (ref2 != NULL) {
        for (i = 0; i < n; i++)
            ratio[i] = ref2[i] / ours[i];
        stats(ratio, n, &med, &lo, &hi);
        printf(" | vs %s %.2fx (%.2f..%.2f)", ref2_name, med, lo, hi);
    }
    printf("\n");
}

int main(int argc, char **argv)
{
    const char *dir = "/dev/shm";
    size_t mib = 1024;
    int rounds = 9, i, r;
    char le[512], be[512], ft[512], out[512], npout[512];
    double *t[16];
    npyio_header *h_le = NULL, *h_be = NULL, *h_f = NULL;
    npyio_dtype *f8 = NULL, *bf8 = NULL;
    unsigned char *data, *file_image;
    void *warm;
    int64_t count, shape2[2];
    size_t k;

    for (i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--size") == 0)
            mib = (size_t)atol(argv[i + 1]);
        else if (strcmp(argv[i], "--rounds") == 0)
            rounds = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--dir") == 0)
            dir = argv[i + 1];
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || mib < 1)
        die("bad arguments");
    nbytes = mib << 20;
    count = (int64_t)(nbytes / 8);
    snprintf(le, sizeof le, "%s/npyio-bench-le.npy", dir);
    snprintf(be, sizeof be, "%s/npyio-bench-be.npy", dir);
    snprintf(ft, sizeof ft, "%s/npyio-bench-f.npy", dir);
    snprintf(out, sizeof out, "%s/npyio-bench-out.npy", dir);
    snprintf(npout, sizeof npout, "%s/npyio-bench-np.npy", dir);

    /* Inputs, written by libnpyio (byte-identical to np.save's). */
    npyio_dtype_from_descr("<f8", 3, NULL, &f8);
    npyio_dtype_from_descr(">f8", 3, NULL, &bf8);
    shape2[1] = 1024;
    shape2[0] = count / shape2[1];
    npyio_header_new(f8, 1, &count, 0, &h_le);
    npyio_header_new(bf8, 1, &count, 0, &h_be);
    npyio_header_new(f8, 2, shape2, 1, &h_f);
    data = thp_alloc(nbytes);
    for (k = 0; k < nbytes / 8; k++)
        ((double *)data)[k] = (double)k * 0.5;
    if (npyio_save(le, h_le, data, NULL) != NPYIO_OK ||
        npyio_save(be, h_be, data, NULL) != NPYIO_OK ||
        npyio_save(ft, h_f, data, NULL) != NPYIO_OK)
        die("writing inputs");
    offset = (size_t)npyio_header_data_offset(h_le);
    file_image = thp_alloc(offset + nbytes); /* header + data for write() */
    npyio_header_emit(h_le, 0, file_image, offset, NULL);
    memcpy(file_image + offset, data, nbytes);
    warm = thp_alloc(nbytes);
    memset(warm, 1, nbytes);
    start_numpy();
    numpy_time("keep", le);
    for (i = 0; i < 16; i++)
        t[i] = calloc(MAX_ROUNDS, sizeof(double));

    printf("%zu MiB of float64 in %s, %d interleaved rounds; medians "
           "(min..max) of per-round ratios, >1 means libnpyio is faster\n",
           mib, dir, rounds);
    for (r = 0; r < rounds; r++) {
        t[0][r] = our_load(le, 0);
        t[1][r] = read_plain(le, NULL, 0);
        t[2][r] = numpy_time("load", le);
        t[3][r] = our_read_into(le, warm);
        t[4][r] = read_plain(le, warm, 0);
        t[5][r] = our_save(out, h_le, data, 1);
        t[6][r] = write_plain(out, file_image, 1);
        t[7][r] = our_save(out, h_le, data, 0);
        t[8][r] = write_plain(out, file_image, 0);
        t[9][r] = numpy_time("save", npout);
        t[10][r] = our_load(be, NPYIO_READ_NATIVE);
        t[11][r] = read_plain(be, NULL, 1);
        t[12][r] = numpy_time("astype", be);
        t[13][r] = our_load(ft, NPYIO_READ_C_ORDER);
        t[14][r] = numpy_time("contig", ft);
    }
    report("load (new buffer)", rounds, t[0], t[1], "read()", t[2],
           "np.load");
    report("load into caller's buffer", rounds, t[3], t[4], "read() warm",
           NULL, NULL);
    report("save, durable", rounds, t[5], t[6], "write()+fsync", t[9],
           "np.save");
    report("save, durability off", rounds, t[7], t[8], "write()", t[9],
           "np.save");
    report("load >f8 to native", rounds, t[10], t[11], "read()+bswap",
           t[12], "np.load+astype");
    report("load Fortran to C order", rounds, t[13], t[12 + 2], "NumPy",
           NULL, NULL);
    printf("peak RSS of a load: %ld KiB over the baseline for %zu KiB of "
           "data (target: data + 1024)\n", load_rss_kib(le), nbytes >> 10);
    fclose(py_in);
    fclose(py_out);
    unlink(le);
    unlink(be);
    unlink(ft);
    unlink(out);
    unlink(npout);
    return 0;
}
