/*
 * bench_mpi.c - many ranks filling one .npy array three ways (not part of
 * ctest; built where CMake finds MPI):
 *
 *   mpirun -np 4 bench_mpi [--dir DIR] [--mib-per-rank N] [--rounds N]
 *
 * Each round, rank 0 lays out DIR/bench_mpi.npy (np.save's header for
 * ranks * rows float64 rows of 1 KiB, the data a sparse hole, through
 * npyio_map_create_path), and then, the three contenders interleaved round by
 * round over the same file and the same buffers:
 *   - npyio: every rank npyio_writer_open_in_place_path + write_rows of its
 *     block + close (NPYIO_WRITE_NO_SYNC);
 *   - MPI-IO: MPI_File_open of the same file, MPI_File_write_at_all of
 *     each rank's block at the header's data offset + its rows, close;
 *   - pwrite: every rank open + pwrite of its block + close, the plain
 *     system-call floor.
 * The time of a contender is from the barrier before to the barrier after
 * (the slowest rank). Prints medians (min..max) and the ratios of the
 * medians to pwrite's. Durability is off for all three (no fsync), so the
 * figures are the writing paths, not the disk.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npyio.h"
#include "bench.h"

#define COLS 128 /* float64 per row: 1 KiB rows */
#define MAX_ROUNDS 64

static void die(const char *what)
{
    fprintf(stderr, "bench_mpi: %s: %s\n", what, npyio_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static npyio_header *rows_header(int64_t rows)
{
    npyio_dtype *dt = NULL;
    npyio_header *h = NULL;
    const int64_t shape[2] = {rows, COLS};

    if (npyio_dtype_parse("=f8", 3, NULL, &dt) != NPYIO_OK ||
        npyio_header_new(dt, 2, shape, 0, &h) != NPYIO_OK)
        die("a header");
    npyio_dtype_unref(dt);
    return h;
}

static void lay_out(const char *path, const npyio_header *h, int rank)
{
    npyio_map *m = NULL;

    if (rank == 0) {
        unlink(path);
        if (npyio_map_create_path(path, h, NPYIO_MAP_SPARSE |
                                          NPYIO_WRITE_NO_SYNC,
                             NULL, &m) != NPYIO_OK ||
            npyio_map_close(m) != NPYIO_OK)
            die("creating the file");
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void by_npyio(const char *path, int64_t first, int64_t rows,
                     const double *block)
{
    npyio_writer *w = NULL;

    if (npyio_writer_open_in_place_path(path, NPYIO_WRITE_NO_SYNC, NULL, &w) !=
            NPYIO_OK ||
        npyio_writer_write_rows(w, first, rows, block,
                                (size_t)rows * COLS * 8) != NPYIO_OK ||
        npyio_writer_close(w) != NPYIO_OK)
        die("npyio's rows");
}

static void by_mpi_io(const char *path, int64_t offset, int64_t rows,
                      const double *block)
{
    MPI_File f;
    MPI_Status status;
    int64_t left = rows * COLS, at = 0;

    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY, MPI_INFO_NULL,
                      &f) != MPI_SUCCESS)
        die("MPI_File_open");
    while (left > 0) { /* counts are ints: 1 GiB at most per call */
        int n = left > (1 << 27) ? 1 << 27 : (int)left;

        if (MPI_File_write_at_all(f, offset + at * 8, block + at, n,
                                  MPI_DOUBLE, &status) != MPI_SUCCESS)
            die("MPI_File_write_at_all");
        left -= n;
        at += n;
    }
    MPI_File_close(&f);
}

static void by_pwrite(const char *path, int64_t offset, int64_t rows,
                      const double *block)
{
    size_t len = (size_t)rows * COLS * 8, done = 0;
    int fd = open(path, O_WRONLY | O_CLOEXEC);

    if (fd < 0)
        die("open");
    while (done < len) {
        ssize_t n = pwrite(fd, (const char *)block + done, len - done,
                           (off_t)(offset + (int64_t)done));

        if (n <= 0)
            die("pwrite");
        done += (size_t)n;
    }
    close(fd);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, by_value);
    return t[n / 2];
}

int main(int argc, char **argv)
{
    const char *dir = "/dev/shm";
    int rank = 0, ranks = 1, rounds = 7, mib = 64, r, c, i;
    double t[3][MAX_ROUNDS], med[3];
    static const char *const names[3] = {"npyio write_rows", "MPI-IO write_at_all",
                                         "pwrite"};
    char path[4096];
    npyio_header *h;
    double *block;
    int64_t rows, first, data_at;
    const bench_option options[] = {
        {"--dir", BENCH_TEXT, &dir}, {"--mib-per-rank", BENCH_INT, &mib},
        {"--rounds", BENCH_INT, &rounds}, BENCH_END};

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    bench_args(argc, argv, 1, options);
    if (rounds < 1 || rounds > MAX_ROUNDS || mib < 1)
        die("--rounds 1..64, --mib-per-rank >= 1");
    snprintf(path, sizeof path, "%s/bench_mpi.npy", dir);
    rows = (int64_t)mib * 1024; /* 1 KiB rows */
    first = rank * rows;
    h = rows_header(rows * ranks);
    data_at = npyio_header_data_offset(h);
    block = malloc((size_t)rows * COLS * 8);
    if (block == NULL)
        die("memory");
    for (i = 0; i < rows * COLS; i++)
        block[i] = (double)(first * COLS + i);
    for (r = 0; r < rounds; r++) {
        for (c = 0; c < 3; c++) {
            int k = (c + r) % 3; /* interleaved, the order rotating */
            double t0;

            lay_out(path, h, rank);
            t0 = MPI_Wtime();
            if (k == 0)
                by_npyio(path, first, rows, block);
            else if (k == 1)
                by_mpi_io(path, data_at + first * COLS * 8, rows, block);
            else
                by_pwrite(path, data_at + first * COLS * 8, rows, block);
            MPI_Barrier(MPI_COMM_WORLD);
            t[k][r] = MPI_Wtime() - t0;
        }
    }
    if (rank == 0) {
        printf("%d ranks x %d MiB = %d MiB into %s, %d rounds (medians, "
               "min..max)\n", ranks, mib, ranks * mib, path, rounds);
        for (c = 0; c < 3; c++) {
            double lo, hi;

            med[c] = median(t[c], rounds);
            lo = t[c][0];
            hi = t[c][rounds - 1];
            printf("  %-22s %7.3f s (%.3f..%.3f)  %6.0f MB/s\n", names[c],
                   med[c], lo, hi, ranks * mib * 1.048576 / med[c]);
        }
        printf("  npyio / pwrite %.2f, MPI-IO / pwrite %.2f, npyio / MPI-IO "
               "%.2f\n", med[0] / med[2], med[1] / med[2], med[0] / med[1]);
        unlink(path);
    }
    free(block);
    npyio_header_free(h);
    MPI_Finalize();
    return 0;
}
