/*
 * bench_dump.c - `npyio dump` of a native file against `cat` of the same
 * file (not part of ctest).
 *
 *   bench_dump NPYIO [--dir DIR] [--mib N] [--rounds N]
 *
 * Writes a C-order array of N MiB of native float64 into DIR (default
 * /dev/shm), then runs, round by round, `NPYIO dump FILE` and `cat FILE`
 * with standard output to a file in DIR (both to the same path, replaced
 * each time) and to /dev/null. dump copies the data section, cat the
 * whole file (128 bytes more). Prints the median (min..max) of cat's time
 * over dump's (> 1: dump is faster; the target is >= 0.95).
 *
 *   bench_dump NPYIO --threads N [--dir DIR] [--mib N] [--rounds N]
 *
 * --threads N compares the tool's --threads N with --threads 1 instead
 * (issue 43: never slower; >= 1.6x for an indexed member), round by round,
 * output to a file in DIR: dump and convert of an N MiB .npy of
 * measurement-like float64 (a sine plus noise, rounded to 2 decimals;
 * native: as stored; big-endian (convert --byteorder big of it), swapped;
 * converted to f4; convert's output to a file there too), and dump of archive
 * members packed with `pack --compress=1 --zlib --threads 2` (a block
 * index; without --zlib, 2 threads make one libdeflate call and no index):
 * one of N MiB (beyond the one libdeflate call when N > 257) and one of
 * N / 3 MiB. Prints the median (min..max) of one thread's time over N's
 * (> 1: the threads are faster) and each side's median peak RSS
 * (getrusage of the child).
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* wait4: the peak RSS of one child */
#include <fcntl.h>
#include <spawn.h>

#include "benchutil.h"
#include "bench.h"

extern char **environ;

/* Run argv with standard output to `out`; the seconds it took. */
static double run_to(char *const argv[], const char *out)
{
    posix_spawn_file_actions_t actions;
    double t0;
    pid_t pid;
    int status = 0;

    prime();
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out,
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    t0 = now();
    if (posix_spawn(&pid, argv[0], &actions, NULL, argv, environ) != 0)
        die(argv[0]);
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        die(argv[0]);
    t0 = now() - t0;
    posix_spawn_file_actions_destroy(&actions);
    return t0;
}

/* The same, with the child's peak RSS in KiB in *rss. By fork(), not
 * posix_spawn: a child that shares our memory until its exec (vfork)
 * inherits our high-water mark, so its peak would read as at least ours
 * (the 64 MiB prime() touched); a forked child starts from what we hold
 * now. */
static double run_rss(char *const argv[], const char *out, long *rss)
{
    struct rusage use;
    double t0;
    pid_t pid;
    int status = 0, fd;

    prime();
    t0 = now();
    pid = fork();
    if (pid == 0) {
        fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, 1) < 0)
            _exit(127);
        close(fd);
        execv(argv[0], argv);
        _exit(127);
    }
    if (pid < 0 || wait4(pid, &status, 0, &use) != pid ||
        !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        die(argv[0]);
    t0 = now() - t0;
    *rss = use.ru_maxrss;
    return t0;
}
/* Measurement-like float64: a sine plus noise, rounded to 2 decimals. */
static void save_measurements(const char *path, int mib)
{
    int64_t n = (int64_t)mib << 17, j;
    double *v = thp_alloc((size_t)n * 8);
    uint64_t x = 88172645463325252u;

    for (j = 0; j < n; j++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        v[j] = round((sin((double)j / 1000.0) * 100.0 +
                      (double)(x >> 11) / 9007199254740992.0) * 100.0) /
               100.0;
    }
    if (npyio_save(path, "=f8", 1, &n, v, (size_t)n * 8, NPYIO_WRITE_NO_SYNC,
                   NULL) != NPYIO_OK)
        die(path);
    free(v);
}

/* One row: argv with "--threads 1" and with "--threads N" (argv[2] and
 * argv[3] are "--threads" and its value, set here), round by round. */
static void threads_row(const char *name, char **argv, const char *threads,
                        const char *out, int mib, int rounds)
{
    double one[MAX_ROUNDS], many[MAX_ROUNDS], rate[MAX_ROUNDS], med, lo, hi;
    long rss_one[MAX_ROUNDS], rss_many[MAX_ROUNDS];
    double r1[MAX_ROUNDS], rn[MAX_ROUNDS], m1, mn;
    static char t1[] = "1";
    bench_ratio vs_one;
    int r;

    for (r = 0; r < rounds; r++) {
        argv[3] = t1;
        one[r] = run_rss(argv, out, &rss_one[r]);
        argv[3] = (char *)threads;
        many[r] = run_rss(argv, out, &rss_many[r]);
        rate[r] = (double)mib / many[r];
        r1[r] = (double)rss_one[r] / 1024.0;
        rn[r] = (double)rss_many[r] / 1024.0;
    }
    stats(rate, rounds, &med, &lo, &hi);
    stats(r1, rounds, &m1, &lo, &hi);
    stats(rn, rounds, &mn, &lo, &hi);
    printf("%-40s dump %6.0f MiB/s", name, med);
    vs_one = bench_ratio_of("one thread", one, many, rounds);
    print_contenders(&vs_one, 1);
    printf("%-40s peak RSS: %.0f MiB on 1 thread, %.0f MiB on %s\n", "",
           m1, mn, threads);
    bench_json(name, "MiB/s", rate, rounds, &vs_one, 1);
}

/* Pack `npy` as member a of `npz` with --compress=1 --zlib --threads 2. */
static void pack_indexed(const char *tool, const char *npz, const char *npy)
{
    char member[600];
    char *argv[] = {(char *)tool, "pack", "--compress=1", "--zlib",
                    "--threads", "2", "--no-sync", (char *)npz, member,
                    NULL};

    snprintf(member, sizeof member, "a=%s", npy);
    run_to(argv, "/dev/null");
}

static void threads_rows(char *tool, const char *threads, const char *dir,
                         int mib, int rounds)
{
    char le[512], be[512], big[512], small[512], smallnpy[512], out[512],
        conv[512], dump[] = "dump", convert[] = "convert", opt[] = "--threads",
        a[] = "a", bo[] = "--byteorder", bigw[] = "big", dt[] = "--dtype",
        f4[] = "f4", cast[] = "--casting", sk[] = "same_kind",
        ns[] = "--no-sync";
    char *d_le[] = {tool, dump, opt, NULL, le, NULL};
    char *d_be[] = {tool, dump, opt, NULL, be, NULL};
    char *c_sw[] = {tool, convert, opt, NULL, ns, bo, bigw, le, conv, NULL};
    char *c_f4[] = {tool, convert, opt, NULL, ns, dt, f4, cast, sk, le, conv,
                    NULL};
    char *d_big[] = {tool, dump, opt, NULL, big, a, NULL};
    char *d_small[] = {tool, dump, opt, NULL, small, a, NULL};
    char name[128];

#define IN_DIR(buf, leaf) snprintf(buf, sizeof buf, "%s/npyio-bench-%s", dir, leaf)
    IN_DIR(le, "le.npy"); IN_DIR(be, "be.npy"); IN_DIR(big, "big.npz");
    IN_DIR(small, "small.npz"); IN_DIR(smallnpy, "small.npy");
    IN_DIR(out, "out"); IN_DIR(conv, "conv.npy");
#undef IN_DIR
    save_measurements(le, mib);
    {
        char *argv[] = {tool, convert, ns, bo, bigw, le, be, NULL};

        run_to(argv, "/dev/null");
    }
    save_measurements(smallnpy, mib / 3 > 0 ? mib / 3 : 1);
    pack_indexed(tool, big, le);
    pack_indexed(tool, small, smallnpy);
    printf("npyio --threads %s vs --threads 1, %d MiB of measurement-like "
           "float64 in %s, output to a file there, %d interleaved rounds; "
           "> 1 means the threads are faster\n", threads, mib, dir, rounds);
    /* Native data to a file goes by copy_file_range, threads or not (to
     * a pipe it would take the threads, as the swapped rows do). */
    snprintf(name, sizeof name, "dump --threads %s, .npy (kernel copy)",
             threads);
    threads_row(name, d_le, threads, out, mib, rounds);
    snprintf(name, sizeof name, "dump --threads %s, .npy swapped", threads);
    threads_row(name, d_be, threads, out, mib, rounds);
    snprintf(name, sizeof name, "convert --threads %s, swap", threads);
    threads_row(name, c_sw, threads, "/dev/null", mib, rounds);
    snprintf(name, sizeof name, "convert --threads %s, to f4", threads);
    threads_row(name, c_f4, threads, "/dev/null", mib, rounds);
    snprintf(name, sizeof name, "dump --threads %s, indexed member", threads);
    threads_row(name, d_big, threads, out, mib, rounds);
    snprintf(name, sizeof name, "dump --threads %s, %d MiB member", threads,
             mib / 3);
    threads_row(name, d_small, threads, out, mib / 3, rounds);
    unlink(le), unlink(be), unlink(big), unlink(small), unlink(smallnpy);
    unlink(out), unlink(conv);
}

int main(int argc, char **argv)
{
    const char *dir = "/dev/shm", *threads = NULL;
    int rounds = 9, mib = 200, r, k;
    char file[512], out[512];
    static char cat[] = "/bin/cat", dump[] = "dump";
    const char *targets[2];
    const bench_option options[] = {
        {"--dir", BENCH_TEXT, &dir}, {"--mib", BENCH_INT, &mib},
        {"--rounds", BENCH_INT, &rounds}, {"--threads", BENCH_TEXT, &threads},
        BENCH_END};

    if (argc < 2)
        die("usage: bench_dump NPYIO [--threads N] [--dir DIR] [--mib N] "
            "[--rounds N]");
    bench_args(argc, argv, 2, options);
    if (rounds < 1 || rounds > MAX_ROUNDS || mib < 1)
        die("--rounds or --mib");
    if (threads != NULL) {
        threads_rows(argv[1], threads, dir, mib, rounds);
        return 0;
    }
    snprintf(file, sizeof file, "%s/npyio-bench-dump.npy", dir);
    snprintf(out, sizeof out, "%s/npyio-bench-dump.out", dir);
    {
        int64_t n = (int64_t)mib << 17; /* 8-byte values */
        double *v = thp_alloc((size_t)n * 8);
        int64_t j;

        for (j = 0; j < n; j++)
            v[j] = (double)j;
        if (npyio_save(file, "=f8", 1, &n, v, (size_t)n * 8,
                             NPYIO_WRITE_NO_SYNC, NULL) != NPYIO_OK)
            die(file);
        free(v);
    }
    targets[0] = out;
    targets[1] = "/dev/null";
    printf("npyio dump vs cat of a %d MiB native file in %s, %d interleaved "
           "rounds; > 1 means dump is faster\n", mib, dir, rounds);
    for (k = 0; k < 2; k++) {
        double d_t[MAX_ROUNDS], c_t[MAX_ROUNDS], d_med[MAX_ROUNDS], med, lo,
            hi;
        char path[64];
        bench_ratio vs_cat;
        char *dump_argv[] = {argv[1], dump, file, NULL};
        char *cat_argv[] = {cat, file, NULL};

        for (r = 0; r < rounds; r++) {
            d_t[r] = run_to(dump_argv, targets[k]);
            c_t[r] = run_to(cat_argv, targets[k]);
            d_med[r] = (double)mib / d_t[r];
        }
        stats(d_med, rounds, &med, &lo, &hi);
        printf("to %-40s dump %6.0f MiB/s", targets[k], med);
        vs_cat = bench_ratio_of("cat", c_t, d_t, rounds);
        print_contenders(&vs_cat, 1);
        snprintf(path, sizeof path, "dump to %s",
                 k == 0 ? "a file" : "/dev/null");
        bench_json(path, "MiB/s", d_med, rounds, &vs_cat, 1);
    }
    unlink(out);
    unlink(file);
    return 0;
}
