/*
 * benchutil.h - what the benchmarks share: timing, huge-page buffers,
 * priming (see PERF-NOTES), a persistent NumPy child fed commands through
 * a pipe (so its start-up is never timed), and medians of per-round
 * ratios. Benchmarks are run by hand, never by ctest.
 */
#ifndef NPYIO_BENCHUTIL_H
#define NPYIO_BENCHUTIL_H

#include <errno.h>
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
 * everyone alike (freed memory returns to the host at once here). */
static inline void prime(void)
{
    size_t size = (size_t)64 << 20, i;
    unsigned char *p = thp_alloc(size);

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

/* One line: our rate, then each reference's rate and our ratio to it. */
static inline void report(const char *name, size_t nbytes, int n,
                          const double *ours,
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

#endif /* NPYIO_BENCHUTIL_H */
