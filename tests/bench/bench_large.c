/*
 * bench_large.c - arrays larger than you want in memory: chunked reads,
 * random row ranges and memory maps, against plain read() and NumPy, side
 * by side in one run (not part of ctest).
 *
 *   bench_large [--size MiB] [--rounds N] [--dir DIR]
 *
 * Defaults: 1024 MiB of float64 in /dev/shm (run again with --dir on an
 * ext4 directory for the page-cache case), 9 rounds.
 *  - chunked read with a 1 MiB buffer vs read() in 1 MiB steps, and the
 *    peak RSS of the chunked read (target: under 8 MiB);
 *  - 200 random ranges of 1000 rows of a (N, 128) array vs NumPy's
 *    np.load(mmap_mode='r')[a:b].copy();
 *  - map + sum vs NumPy's memmap + sum.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "benchutil.h"
#include "bench.h"

#define STEP ((size_t)1 << 20)
#define RANGES 200
#define RANGE_ROWS 1000
#define COLS 128

static size_t nbytes;

static double plain_steps(const char *path, size_t offset, void *buf)
{
    double t0 = now();
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    size_t done = 0;

    if (fd < 0 || lseek(fd, (off_t)offset, SEEK_SET) < 0)
        die(path);
    while (done < nbytes) {
        ssize_t n = read(fd, buf, STEP);

        if (n <= 0)
            die("read");
        done += (size_t)n;
    }
    close(fd);
    return now() - t0;
}

static double our_chunks(const char *path, void *buf)
{
    double t0 = now();
    npyio_reader *r = NULL;
    size_t got = 0, total = 0;
    npyio_status st;

    if (npyio_reader_open_path(path, NULL, &r) != NPYIO_OK)
        die(path);
    while ((st = npyio_reader_read_chunk(r, buf, STEP, 0, &got)) == NPYIO_OK)
        total += got;
    if (st != NPYIO_END || total != nbytes)
        die("chunks");
    npyio_reader_close(r);
    return now() - t0;
}

/* One whole chunked pass, for the RSS measurement. */
static void one_pass(const char *path)
{
    our_chunks(path, malloc(STEP));
}

static double our_ranges(const char *path, const int64_t *starts, void *buf)
{
    double t0 = now();
    npyio_reader *r = NULL;
    int i;

    if (npyio_reader_open_path(path, NULL, &r) != NPYIO_OK)
        die(path);
    for (i = 0; i < RANGES; i++)
        if (npyio_reader_read_rows(r, starts[i], RANGE_ROWS, buf,
                                   RANGE_ROWS * COLS * 8, 0) != NPYIO_OK)
            die("rows");
    npyio_reader_close(r);
    return now() - t0;
}

static double our_map_sum(const char *path, double *sum)
{
    double t0 = now(), s = 0;
    npyio_map *m = NULL;
    const double *d;
    size_t i, n = nbytes / 8;

    if (npyio_map_open_path(path, 0, NULL, &m) != NPYIO_OK)
        die(path);
    d = npyio_map_data(m);
    {
        /* Eight partial sums: one would measure the adder's latency, not
         * the mapping (NumPy's sum is pairwise and vectorised). */
        double p[8] = {0};

        for (i = 0; i + 8 <= n; i += 8) {
            p[0] += d[i];
            p[1] += d[i + 1];
            p[2] += d[i + 2];
            p[3] += d[i + 3];
            p[4] += d[i + 4];
            p[5] += d[i + 5];
            p[6] += d[i + 6];
            p[7] += d[i + 7];
        }
        for (; i < n; i++)
            p[0] += d[i];
        s = p[0] + p[1] + p[2] + p[3] + p[4] + p[5] + p[6] + p[7];
    }
    npyio_map_close(m);
    *sum = s;
    return now() - t0;
}

int main(int argc, char **argv)
{
    const char *dir = "/dev/shm";
    size_t mib = 1024, k, offset;
    int rounds = 9, i, r;
    char path[512], command[8192];
    double *t[8], sum = 0, *data;
    int64_t shape[2], starts[RANGES];
    npyio_dtype *f8 = NULL;
    npyio_header *h = NULL;
    void *buf;
    unsigned seed = 12345;

    bench_size_rounds_dir(argc, argv, &mib, &rounds, &dir);
    if (rounds < 1 || rounds > MAX_ROUNDS || mib < 8)
        die("bad arguments");
    nbytes = mib << 20;
    snprintf(path, sizeof path, "%s/npyio-bench-large.npy", dir);
    shape[1] = COLS;
    shape[0] = (int64_t)(nbytes / 8 / COLS);
    npyio_dtype_parse("<f8", 3, NULL, &f8);
    npyio_header_new(f8, 2, shape, 0, &h);
    data = thp_alloc(nbytes);
    for (k = 0; k < nbytes / 8; k++)
        data[k] = (double)(k % 1000);
    if (npyio_save_with_header(path, h, data, (size_t)npyio_header_nbytes(h), 0,
                   NULL) != NPYIO_OK)
        die("writing the input");
    free(data);
    offset = (size_t)npyio_header_data_offset(h);
    buf = thp_alloc(RANGE_ROWS * COLS * 8 > STEP ? RANGE_ROWS * COLS * 8
                                                 : STEP);
    for (i = 0; i < RANGES; i++) {
        seed = seed * 1103515245u + 12345u;
        starts[i] = (int64_t)(seed % (unsigned)(shape[0] - RANGE_ROWS));
    }
    /* The same ranges for NumPy, as a comma-separated list. */
    k = (size_t)snprintf(command, sizeof command, "rows %s ", path);
    for (i = 0; i < RANGES; i++)
        k += (size_t)snprintf(command + k, sizeof command - k, "%s%lld",
                              i ? "," : "", (long long)starts[i]);
    snprintf(command + k, sizeof command - k, " %d", RANGE_ROWS);
    start_numpy();
    for (i = 0; i < 8; i++)
        t[i] = calloc(MAX_ROUNDS, sizeof(double));

    print_float64_banner(mib, dir, rounds);
    for (r = 0; r < rounds; r++) {
        char mapsum[600];

        t[0][r] = our_chunks(path, buf);
        t[1][r] = plain_steps(path, offset, buf);
        t[2][r] = our_ranges(path, starts, buf);
        t[3][r] = numpy_time(command);
        t[4][r] = our_map_sum(path, &sum);
        snprintf(mapsum, sizeof mapsum, "mapsum %s", path);
        t[5][r] = numpy_time(mapsum);
    }
    report("chunked read, 1 MiB buffer", nbytes, rounds, t[0], t[1],
           "read() 1 MiB steps", NULL, NULL);
    report("200 x 1000 random rows", (size_t)RANGES * RANGE_ROWS * COLS * 8,
           rounds, t[2], t[3], "NumPy mmap slice copy", NULL, NULL);
    report("map + sum", nbytes, rounds, t[4], t[5], "NumPy memmap + sum",
           NULL, NULL);
    printf("peak RSS of a chunked pass: %ld KiB over the baseline (target: "
           "under 8192); sum %.0f\n", child_peak_rss_kib(one_pass, path),
           sum);
    stop_numpy();
    unlink(path);
    return 0;
}
