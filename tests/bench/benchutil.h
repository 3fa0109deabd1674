/*
 * benchutil.h - what the benchmarks share: timing, huge-page buffers,
 * priming (see prime()), a persistent NumPy child fed commands through
 * a pipe (so its start-up is never timed), and medians of per-round
 * ratios. Benchmarks are timed by hand, never by ctest (its bench_report
 * test, label slow, only runs them tiny, once).
 *
 * Machine-readable results: when the environment variable
 * NPYIO_BENCH_JSON names a file, every result line is also appended to
 * it as one JSON object a line (JSON Lines), written by bench_json():
 *   {"bench": program, "path": row name, "unit": "GB/s", "files/s", ...,
 *    "ours": median, "ours_min": .., "ours_max": ..,
 *    "contenders": [{"name": .., "ratio": median, "min": .., "max": ..}],
 *    "rounds": n}
 * where each ratio is the contender's time over ours, round by round
 * (> 1: ours is faster). The program is NPYIO_BENCH_NAME, else the name
 * the kernel gives the process. tests/bench/report.py reads these.
 */
#ifndef NPYIO_BENCHUTIL_H
#define NPYIO_BENCHUTIL_H

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "npyio.h"

#define MAX_ROUNDS 64
#define HUGE ((size_t)2 << 20)

static inline double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void die(const char *what)
{
    fprintf(stderr, "bench: %s: %s\n", what,
            errno ? strerror(errno) : npyio_last_error());
    exit(1);
}

static inline void *thp_alloc(size_t size)
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
 * everyone alike. On the 2-vCPU virtual machines these benchmarks run on,
 * memory freed goes back to the host at once, and a 4 KiB page fault
 * costs about 12 us: read() into fresh 4 KiB pages runs at 0.2-0.4 GB/s,
 * into huge pages at 5-7 GB/s. Memory freed seconds before a timed run
 * would fault again slowly for whoever runs next; priming before each
 * timed run, and ratios taken only within one run, keep that out. */
static inline void prime(void)
{
    size_t size = (size_t)64 << 20, i;
    unsigned char *p = (unsigned char *)thp_alloc(size);

    for (i = 0; i < size; i += 4096)
        p[i] = 1;
    free(p);
}

/* Peak RSS that work(path) adds, measured in a fresh child process so
 * nothing else the benchmark did counts. -1 if the child failed. */
static inline long child_peak_rss_kib(void (*work)(const char *),
                                      const char *path)
{
    int p[2];
    long extra = -1;
    pid_t pid;

    if (pipe(p) != 0)
        die("pipe");
    pid = fork();
    if (pid == 0) {
        struct rusage before, after;
        long d;

        getrusage(RUSAGE_SELF, &before);
        work(path);
        getrusage(RUSAGE_SELF, &after);
        d = after.ru_maxrss - before.ru_maxrss;
        _exit(write(p[1], &d, sizeof d) == sizeof d ? 0 : 1);
    }
    close(p[1]);
    if (read(p[0], &extra, sizeof extra) != sizeof extra)
        extra = -1;
    close(p[0]);
    waitpid(pid, NULL, 0);
    return extra;
}

/* The seconds an archive's open + member `key` read into fresh memory
 * (CRC checked) take, after priming; its size into *len if len. */
static inline double member_read(const char *path, const char *key,
                                 const npyio_options *o, size_t *len)
{
    npyio_npz *npz = NULL;
    npyio_reader *r = NULL;
    void *data = NULL;
    size_t index = 0, size = 0;
    double t0, t;

    prime();
    t0 = now();
    if (npyio_npz_open_path(path, o, &npz) != NPYIO_OK ||
        npyio_npz_find(npz, key, &index, NULL) != NPYIO_OK ||
        npyio_reader_open_member(npz, index, &r) != NPYIO_OK ||
        npyio_reader_read_alloc(r, 0, &data, &size) != NPYIO_OK)
        die(path);
    npyio_reader_close(r);
    npyio_npz_close(npz);
    t = now() - t0;
    npyio_free(data);
    if (len != NULL)
        *len = size;
    return t;
}

/* len bytes at offset `at` of descriptor fd into buf, with pread. */
static inline void pread_all(int fd, void *buf, size_t len, int64_t at)
{
    size_t done = 0;

    while (done < len) {
        ssize_t n = pread(fd, (unsigned char *)buf + done, len - done,
                          at + (off_t)done);

        if (n <= 0)
            die("pread");
        done += (size_t)n;
    }
}

/* The floor of a member read: the seconds open + pread of len bytes at
 * offset `at` of the file into fresh memory take, after priming. */
static inline double plain_pread(const char *path, int64_t at, size_t len)
{
    unsigned char *buf;
    double t0, t;
    int fd;

    prime();
    t0 = now();
    fd = open(path, O_RDONLY | O_CLOEXEC);
    buf = thp_alloc(len);
    pread_all(fd, buf, len, at);
    close(fd);
    t = now() - t0;
    free(buf);
    return t;
}

static FILE *py_in, *py_out;

/* A persistent NumPy child running `script`, which reads one command a
 * line from stdin and answers each with the seconds it took. */
static inline void start_numpy_script(const char *script)
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
        execl("/usr/bin/python3", "python3", "-c", script, (char *)NULL);
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    py_in = fdopen(to[1], "w");
    py_out = fdopen(from[0], "r");
}

/* Commands: "OP PATH [A B]"; the child answers with the seconds OP took. */
static inline void start_numpy(void)
{
    start_numpy_script(
        "import sys, time, numpy as np\n"
        "cache = {}\n"
        "for line in sys.stdin:\n"
        "    w = line.split(); op, path = w[0], w[1]\n"
        "    t0 = time.perf_counter()\n"
        "    if op == 'load': a = np.load(path)\n"
        "    elif op == 'astype': a = np.load(path).astype('=f8')\n"
        "    elif op == 'tof4': a = np.load(path).astype('=f4')\n"
        "    elif op == 'contig': a = np.ascontiguousarray(np.load(path))\n"
        "    elif op == 'save': np.save(path, cache['a'])\n"
        "    elif op == 'keep': cache['a'] = np.load(path)\n"
        "    elif op == 'rows':\n"
        "        m = np.load(path, mmap_mode='r')\n"
        "        for a0 in map(int, w[2].split(',')):\n"
        "            r = m[a0:a0 + int(w[3])].copy()\n"
        "    elif op == 'mapsum': s = np.load(path, mmap_mode='r').sum()\n"
        "    elif op == 'savemany':\n"
        "        a = np.zeros(int(w[3]), w[4] if len(w) > 4 else 'f8')\n"
        "        for i in range(int(w[2])): np.save('%s%06d.npy' % (path, i), a)\n"
        "    elif op == 'loadmany':\n"
        "        for i in range(int(w[2])): a = np.load('%s%06d.npy' % (path, i))\n"
        "    t = time.perf_counter() - t0\n"
        "    a = None\n"
        "    print(t, flush=True)\n");
}

static inline double numpy_time(const char *command)
{
    double t;

    prime();
    fprintf(py_in, "%s\n", command);
    fflush(py_in);
    if (fscanf(py_out, "%lf", &t) != 1)
        die("NumPy child (is python3-numpy installed?)");
    return t;
}

static inline void stop_numpy(void)
{
    fclose(py_in);
    fclose(py_out);
}

static inline int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static inline void stats(const double *v, int n, double *med, double *lo,
                  double *hi)
{
    double s[MAX_ROUNDS];

    memcpy(s, v, (size_t)n * sizeof *v);
    qsort(s, (size_t)n, sizeof *s, compare);
    *med = s[n / 2];
    *lo = s[0];
    *hi = s[n - 1];
}

/* A contender of a result line: the median (min..max) of the per-round
 * ratios of its time over ours (> 1: ours is faster). */
typedef struct bench_ratio {
    const char *name;
    double med, lo, hi;
} bench_ratio;

/* The ratios theirs[r] / ours[r] of n rounds, as a contender. */
static inline bench_ratio bench_ratio_of(const char *name,
                                         const double *theirs,
                                         const double *ours, int n)
{
    double ratio[MAX_ROUNDS] = {0};
    bench_ratio c = {name, 0, 0, 0};
    int i;

    for (i = 0; i < n; i++)
        ratio[i] = theirs[i] / ours[i];
    stats(ratio, n, &c.med, &c.lo, &c.hi);
    return c;
}

static inline void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;

        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* A number, or null where JSON has none (a round that took no time). */
static inline void json_number(FILE *f, const char *key, double v)
{
    if (isfinite(v))
        fprintf(f, "\"%s\": %.6g", key, v);
    else
        fprintf(f, "\"%s\": null", key);
}

/* The program's name for the JSON lines: NPYIO_BENCH_NAME, else
 * /proc/self/comm, else "bench". */
static inline void bench_program(char *name, size_t cap)
{
    const char *env = getenv("NPYIO_BENCH_NAME");
    FILE *f;

    snprintf(name, cap, "%s", env != NULL && *env ? env : "bench");
    if ((env == NULL || !*env) && (f = fopen("/proc/self/comm", "r"))) {
        if (fgets(name, (int)cap, f) != NULL)
            name[strcspn(name, "\n")] = '\0';
        fclose(f);
    }
}

/* One result line appended to $NPYIO_BENCH_JSON (nothing if unset): our
 * rate rates[0..n) in `unit` (median, min, max) and the contenders. */
static inline void bench_json(const char *path, const char *unit,
                              const double *rates, int n,
                              const bench_ratio *contenders, int count)
{
    const char *file = getenv("NPYIO_BENCH_JSON");
    char program[64];
    double med, lo, hi;
    FILE *f;
    int k;

    if (file == NULL || *file == '\0')
        return;
    f = fopen(file, "a");
    if (f == NULL)
        die(file);
    bench_program(program, sizeof program);
    stats(rates, n, &med, &lo, &hi);
    fputs("{\"bench\": ", f);
    json_string(f, program);
    fputs(", \"path\": ", f);
    json_string(f, path);
    fputs(", \"unit\": ", f);
    json_string(f, unit);
    fputs(", ", f);
    json_number(f, "ours", med);
    fputs(", ", f);
    json_number(f, "ours_min", lo);
    fputs(", ", f);
    json_number(f, "ours_max", hi);
    fputs(", \"contenders\": [", f);
    for (k = 0; k < count; k++) {
        fputs(k ? ", {\"name\": " : "{\"name\": ", f);
        json_string(f, contenders[k].name);
        fputs(", ", f);
        json_number(f, "ratio", contenders[k].med);
        fputs(", ", f);
        json_number(f, "min", contenders[k].lo);
        fputs(", ", f);
        json_number(f, "max", contenders[k].hi);
        fputs("}", f);
    }
    fprintf(f, "], \"rounds\": %d}\n", n);
    if (fclose(f) != 0)
        die(file);
}

/* The human-readable tail of a result line: " | vs NAME 1.23x (lo..hi)"
 * for each contender, then the newline. */
static inline void print_contenders(const bench_ratio *c, int count)
{
    int k;

    for (k = 0; k < count; k++)
        printf(" | vs %s %.2fx (%.2f..%.2f)", c[k].name, c[k].med, c[k].lo,
               c[k].hi);
    printf("\n");
}

/* One line: our rate, then each reference's rate and our ratio to it. */
static inline void report(const char *name, size_t nbytes, int n,
                          const double *ours,
                   const double *ref1, const char *ref1_name,
                   const double *ref2, const char *ref2_name)
{
    double rate[MAX_ROUNDS] = {0}, med, lo, hi, gb;
    bench_ratio c[2];
    int i, count = 0;

    gb = (double)nbytes / 1e9;
    for (i = 0; i < n; i++)
        rate[i] = gb / ours[i];
    stats(rate, n, &med, &lo, &hi);
    printf("%-30s libnpyio %5.2f GB/s", name, med);
    c[count++] = bench_ratio_of(ref1_name, ref1, ours, n);
    if (ref2 != NULL)
        c[count++] = bench_ratio_of(ref2_name, ref2, ours, n);
    print_contenders(c, count);
    bench_json(name, "GB/s", rate, n, c, count);
}

/* The first line bench_io and bench_large print: what they time, where
 * and how. */
static inline void print_float64_banner(size_t mib, const char *dir,
                                        int rounds)
{
    printf("%zu MiB of float64 in %s, %d interleaved rounds; medians "
           "(min..max) of per-round ratios, >1 means libnpyio is faster\n",
           mib, dir, rounds);
}

#endif /* NPYIO_BENCHUTIL_H */
