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
 */
#define _POSIX_C_SOURCE 200809L
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

int main(int argc, char **argv)
{
    const char *dir = "/dev/shm";
    int rounds = 9, mib = 200, r, k;
    char file[512], out[512];
    static char cat[] = "/bin/cat", dump[] = "dump";
    const char *targets[2];
    const bench_option options[] = {
        {"--dir", BENCH_TEXT, &dir}, {"--mib", BENCH_INT, &mib},
        {"--rounds", BENCH_INT, &rounds}, BENCH_END};

    if (argc < 2)
        die("usage: bench_dump NPYIO [--dir DIR] [--mib N] [--rounds N]");
    bench_args(argc, argv, 2, options);
    if (rounds < 1 || rounds > MAX_ROUNDS || mib < 1)
        die("--rounds or --mib");
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
