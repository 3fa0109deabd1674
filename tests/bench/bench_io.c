/*
 * bench_io.c - array I/O speed against the plain system calls and NumPy,
 * side by side in one run (not part of ctest: the machines are shared and
 * noisy, so figures are reported, never asserted).
 *
 *   bench_io [--size MiB] [--rounds N] [--dir DIR]
 *
 * Defaults: 1024 MiB of float64 in /dev/shm, 9 rounds. Each round runs
 * every contender once, interleaved (ours, the syscall anchor, NumPy; the
 * loads again with NPYIO_LIMIT_THREADS = 2, against the same on 1), and
 * primes huge-page memory before each timed run (benchutil.h's prime()). Printed:
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

#include "benchutil.h"
#include "bench.h"

static double numpy_time_op(const char *op, const char *path)
{
    char command[1100];

    snprintf(command, sizeof command, "%s %s", op, path);
    return numpy_time(command);
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

/* Options with NPYIO_LIMIT_THREADS = threads (made outside the timing). */
static npyio_options *threads_options(unsigned threads)
{
    npyio_options *o = NULL;

    if (npyio_options_new(&o) != NPYIO_OK ||
        npyio_options_set_limit(o, NPYIO_LIMIT_THREADS, threads) != NPYIO_OK)
        die("options");
    return o;
}

static double our_load(const char *path, unsigned flags, unsigned threads)
{
    npyio_options *o = threads_options(threads);
    npyio_header *h = NULL;
    void *data = NULL;
    double t0, t;

    prime();
    t0 = now();
    if (npyio_load_with_header(path, flags, o, &h, &data) != NPYIO_OK)
        die(path);
    t = now() - t0;
    npyio_free(data);
    npyio_header_free(h);
    npyio_options_free(o);
    return t;
}

/* npyio_load_as: the file's doubles delivered as another type. */
static double our_load_as(const char *path, const char *type,
                          unsigned threads)
{
    npyio_options *o = threads_options(threads);
    void *data = NULL;
    size_t len = 0;
    int ndim = 0;
    int64_t shape[4];
    double t0, t;

    prime();
    t0 = now();
    if (npyio_load_as(path, type, NPYIO_READ_CAST_SAME_KIND, o, &data,
                      &len, &ndim, shape, 4) != NPYIO_OK)
        die(path);
    t = now() - t0;
    npyio_free(data);
    npyio_options_free(o);
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
    prime();
    t0 = now();
    if (npyio_save_with_header(path, h, data, (size_t)npyio_header_nbytes(h),
                   durable ? 0 : NPYIO_WRITE_NO_SYNC, o) != NPYIO_OK)
        die(path);
    t = now() - t0;
    npyio_options_free(o);
    return t;
}

/* One whole load, for the RSS measurement. */
static void one_load(const char *path)
{
    npyio_header *h = NULL;
    void *data = NULL;

    if (npyio_load_with_header(path, 0, NULL, &h, &data) != NPYIO_OK)
        _exit(1);
}

int main(int argc, char **argv)
{
    const char *dir = "/dev/shm";
    size_t mib = 1024;
    int rounds = 9, i, r;
    char le[512], be[512], ft[512], out[512], npout[512];
    double *t[22];
    npyio_header *h_le = NULL, *h_be = NULL, *h_f = NULL;
    npyio_dtype *f8 = NULL, *bf8 = NULL;
    unsigned char *data, *file_image;
    void *warm;
    int64_t count, shape2[2];
    size_t k;

    bench_size_rounds_dir(argc, argv, &mib, &rounds, &dir);
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
    npyio_dtype_parse("<f8", 3, NULL, &f8);
    npyio_dtype_parse(">f8", 3, NULL, &bf8);
    shape2[1] = 1024;
    shape2[0] = count / shape2[1];
    npyio_header_new(f8, 1, &count, 0, &h_le);
    npyio_header_new(bf8, 1, &count, 0, &h_be);
    npyio_header_new(f8, 2, shape2, 1, &h_f);
    data = thp_alloc(nbytes);
    for (k = 0; k < nbytes / 8; k++)
        ((double *)data)[k] = (double)k * 0.5;
    if (npyio_save_with_header(le, h_le, data, (size_t)npyio_header_nbytes(h_le), 0,
                   NULL) != NPYIO_OK ||
        npyio_save_with_header(be, h_be, data, (size_t)npyio_header_nbytes(h_be), 0,
                   NULL) != NPYIO_OK ||
        npyio_save_with_header(ft, h_f, data, (size_t)npyio_header_nbytes(h_f), 0,
                   NULL) != NPYIO_OK)
        die("writing inputs");
    offset = (size_t)npyio_header_data_offset(h_le);
    file_image = thp_alloc(offset + nbytes); /* header + data for write() */
    npyio_header_emit(h_le, 0, file_image, offset, NULL);
    memcpy(file_image + offset, data, nbytes);
    warm = thp_alloc(nbytes);
    memset(warm, 1, nbytes);
    start_numpy();
    numpy_time_op("keep", le);
    for (i = 0; i < 22; i++)
        t[i] = calloc(MAX_ROUNDS, sizeof(double));

    print_float64_banner(mib, dir, rounds);
    for (r = 0; r < rounds; r++) {
        t[0][r] = our_load(le, 0, 1);
        t[1][r] = read_plain(le, NULL, 0);
        t[2][r] = numpy_time_op("load", le);
        t[3][r] = our_read_into(le, warm);
        t[4][r] = read_plain(le, warm, 0);
        t[5][r] = our_save(out, h_le, data, 1);
        t[6][r] = write_plain(out, file_image, 1);
        t[7][r] = our_save(out, h_le, data, 0);
        t[8][r] = write_plain(out, file_image, 0);
        t[9][r] = numpy_time_op("save", npout);
        t[10][r] = our_load(be, NPYIO_READ_NATIVE, 1);
        t[11][r] = read_plain(be, NULL, 1);
        t[12][r] = numpy_time_op("astype", be);
        t[13][r] = our_load(ft, NPYIO_READ_C_ORDER, 1);
        t[14][r] = numpy_time_op("contig", ft);
        t[15][r] = our_load_as(le, "f4", 1);
        t[16][r] = numpy_time_op("tof4", le);
        /* NPYIO_LIMIT_THREADS = 2, each against the same on 1 thread. */
        t[17][r] = our_load(le, 0, 2);
        t[18][r] = our_load(be, NPYIO_READ_NATIVE, 2);
        t[19][r] = our_load(ft, NPYIO_READ_C_ORDER, 2);
        t[20][r] = our_load_as(le, "f4", 2);
    }
    report("load (new buffer)", nbytes, rounds, t[0], t[1], "read()", t[2],
           "np.load");
    report("load into caller's buffer", nbytes, rounds, t[3], t[4], "read() warm",
           NULL, NULL);
    report("save, durable", nbytes, rounds, t[5], t[6], "write()+fsync", t[9],
           "np.save");
    report("save, durability off", nbytes, rounds, t[7], t[8], "write()", t[9],
           "np.save");
    report("load >f8 to native", nbytes, rounds, t[10], t[11], "read()+bswap",
           t[12], "np.load+astype");
    report("load Fortran to C order", nbytes, rounds, t[13], t[12 + 2], "NumPy",
           NULL, NULL);
    report("load f8 as f4 (npyio_load_as)", nbytes, rounds, t[15], t[1],
           "read()", t[16], "np.load+astype");
    report("load, 2 threads", nbytes, rounds, t[17], t[0], "1 thread",
           t[2], "np.load");
    report("load >f8 to native, 2 threads", nbytes, rounds, t[18], t[10],
           "1 thread", t[12], "np.load+astype");
    report("load Fortran to C order, 2 threads", nbytes, rounds, t[19],
           t[13], "1 thread", t[14], "NumPy");
    report("load f8 as f4, 2 threads", nbytes, rounds, t[20], t[15],
           "1 thread", t[16], "np.load+astype");
    printf("peak RSS of a load: %ld KiB over the baseline for %zu KiB of "
           "data (target: data + 1024)\n", child_peak_rss_kib(one_load, le),
           nbytes >> 10);
    stop_numpy();
    unlink(le);
    unlink(be);
    unlink(ft);
    unlink(out);
    unlink(npout);
    /* Everything given back: the report's smoke test runs under
     * LeakSanitizer. */
    for (i = 0; i < 22; i++)
        free(t[i]);
    free(data);
    free(file_image);
    free(warm);
    npyio_header_free(h_le);
    npyio_header_free(h_be);
    npyio_header_free(h_f);
    npyio_dtype_unref(f8);
    npyio_dtype_unref(bf8);
    return 0;
}
