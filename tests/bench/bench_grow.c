/*
 * bench_grow.c - growing and sharing files (not part of ctest).
 *
 *   bench_grow [--dir DIR] [--rounds N]
 *
 *  - appending one row to a 1 MiB and to a 1 GiB file: the cost must not
 *    depend on the file's size (the header is rewritten in place);
 *  - writing 512 MiB of rows in place from 2 processes (interleaved row
 *    blocks, positional writes) vs one process writing the same bytes.
 * Durability off for the append timing (fsync costs would dominate and are
 * the file system's, not ours); medians (min..max) of N rounds.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include <sys/wait.h>

#include "benchutil.h"
#include "bench.h"

#define COLS 128 /* f8 per row: 1 KiB rows */

static npyio_header *f8_rows(int64_t rows)
{
    npyio_dtype *f8 = NULL;
    npyio_header *h = NULL;
    int64_t shape[2] = {rows, COLS};

    npyio_dtype_parse("<f8", 3, NULL, &f8);
    npyio_header_new(f8, 2, shape, 0, &h);
    npyio_dtype_unref(f8);
    return h;
}

static void make_file(const char *path, int64_t rows)
{
    npyio_header *h = f8_rows(rows);
    size_t n = (size_t)npyio_header_nbytes(h);
    void *zeros = calloc(1, n ? n : 1);

    if (npyio_save_with_header(path, h, zeros, (size_t)npyio_header_nbytes(h), 0,
                   NULL) != NPYIO_OK)
        die(path);
    free(zeros);
    npyio_header_free(h);
}

/* Median time of `appends` one-row appends. */
static double append_one(const char *path, int appends)
{
    static double row[COLS];
    npyio_header *one = f8_rows(1);
    npyio_options *o = NULL;
    double t0 = now();
    int i;

    npyio_options_new(&o);
    for (i = 0; i < appends; i++) {
        npyio_writer *w = NULL;

        if (npyio_writer_open_append_path(path, one, NPYIO_WRITE_NO_SYNC, o,
                                     &w) != NPYIO_OK ||
            npyio_writer_write(w, row, sizeof row) != NPYIO_OK ||
            npyio_writer_close(w) != NPYIO_OK)
            die(path);
    }
    npyio_options_free(o);
    npyio_header_free(one);
    return (now() - t0) / appends;
}

/* Write all rows of the file in blocks, process p of `procs` taking every
 * procs-th block; return the wall time of all of them. */
static double fill(const char *path, int64_t rows, int procs)
{
    enum { BLOCK = 1024 }; /* rows: 1 MiB */
    double t0 = now();
    int p, status;

    for (p = 0; p < procs; p++) {
        pid_t pid = fork();

        if (pid < 0)
            die("fork");
        if (pid == 0) {
            npyio_options *o = NULL;
            npyio_writer *w = NULL;
            double *block = thp_alloc((size_t)BLOCK * COLS * 8);
            int64_t first;

            memset(block, 1, (size_t)BLOCK * COLS * 8);
            npyio_options_new(&o);
            if (npyio_writer_open_in_place_path(path, NPYIO_WRITE_NO_SYNC, o,
                                           &w) != NPYIO_OK)
                _exit(1);
            for (first = (int64_t)p * BLOCK; first < rows;
                 first += (int64_t)procs * BLOCK)
                if (npyio_writer_write_rows(w, first, BLOCK, block,
                                            (size_t)BLOCK * COLS * 8) !=
                    NPYIO_OK)
                    _exit(2);
            _exit(npyio_writer_close(w) == NPYIO_OK ? 0 : 3);
        }
    }
    for (p = 0; p < procs; p++)
        if (wait(&status) < 0 || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            die("a writer process failed");
    return now() - t0;
}

int main(int argc, char **argv)
{
    const char *dir = "/dev/shm";
    int rounds = 9, i, r;
    char small[512], big[512], shared[512];
    double t[4][MAX_ROUNDS], us[MAX_ROUNDS], med, lo, hi;
    bench_ratio one;
    int64_t fill_rows = 512 * 1024; /* 512 MiB */
    const bench_option options[] = {
        {"--dir", BENCH_TEXT, &dir}, {"--rounds", BENCH_INT, &rounds},
        BENCH_END};

    bench_args(argc, argv, 1, options);
    if (rounds < 1 || rounds > MAX_ROUNDS)
        die("bad arguments");
    snprintf(small, sizeof small, "%s/npyio-bench-small.npy", dir);
    snprintf(big, sizeof big, "%s/npyio-bench-big.npy", dir);
    snprintf(shared, sizeof shared, "%s/npyio-bench-shared.npy", dir);
    make_file(small, 1024);        /* 1 MiB */
    make_file(big, 1024 * 1024);   /* 1 GiB */
    make_file(shared, fill_rows);
    for (r = 0; r < rounds; r++) {
        t[0][r] = append_one(small, 200);
        t[1][r] = append_one(big, 200);
        t[2][r] = fill(shared, fill_rows, 1);
        t[3][r] = fill(shared, fill_rows, 2);
    }
    printf("in %s, %d rounds, medians (min..max)\n", dir, rounds);
    for (i = 0; i < 2; i++) {
        const char *name = i ? "append 1 row to a 1 GiB file"
                             : "append 1 row to a 1 MiB file";

        for (r = 0; r < rounds; r++)
            us[r] = t[i][r] * 1e6;
        stats(us, rounds, &med, &lo, &hi);
        printf("%s: %6.1f us (%.1f..%.1f)\n", name, med, lo, hi);
        bench_json(name, "us", us, rounds, NULL, 0);
    }
    one = bench_ratio_of("1 process", t[2], t[3], rounds);
    printf("512 MiB of rows in place, 2 processes vs 1: %.2fx faster "
           "(%.2f..%.2f)\n", one.med, one.lo, one.hi);
    for (r = 0; r < rounds; r++)
        us[r] = (double)fill_rows * COLS * 8 / 1e9 / t[3][r];
    bench_json("512 MiB of rows in place, 2 processes", "GB/s", us, rounds,
               &one, 1);
    unlink(small);
    unlink(big);
    unlink(shared);
    return 0;
}
