/*
 * bench_cnpy.cpp - libnpyio against cnpy (https://github.com/rogersce/cnpy),
 * side by side in one run (not part of ctest, and not built by CMake: cnpy
 * is not packaged, and none of its code is in this tree).
 * tests/bench/report.py --cnpy DIR builds it against a cnpy checkout:
 *
 *   c++ -std=c++17 -O2 -w -c DIR/cnpy.cpp
 *   c++ -std=c++17 -O2 -isystem DIR -Iinclude -Itests/bench \
 *       tests/bench/bench_cnpy.cpp cnpy.o build/src/libnpyio.so -lz
 *
 *   bench_cnpy [--size MiB] [--npz-size MiB] [--rounds N] [--dir DIR]
 *
 * Defaults: 1024 MiB (.npy) and 256 MiB (.npz) of float64 in /dev/shm,
 * 9 rounds: bench_io's and bench_npz's sizes, and their row names, so a
 * report puts cnpy beside the other contenders of the same row. Each round
 * runs every contender once, interleaved, priming huge-page memory before
 * each (benchutil.h's prime()):
 *
 *   save, durability off  npyio_save (NPYIO_WRITE_NO_SYNC) vs cnpy::npy_save
 *                         (fopen + fwrite, no sync either)
 *   load (new buffer)     npyio_load vs cnpy::npy_load of the same file
 *                         (written by libnpyio, as np.save writes it)
 *   stored write          npyio_savez, one stored member, no sync, vs
 *                         cnpy::npz_save (mode "w")
 *   stored read (CRC)     npyio_npz_open_path + npyio_reader_open_member +
 *                         read_alloc (CRC checked) vs cnpy::npz_load(path,
 *                         key) of the archive cnpy::npz_save wrote (the
 *                         simplest archive, the one cnpy surely reads)
 *
 * Written against cnpy's documented API: npy_save(fname, const T *data,
 * std::vector<size_t> shape, mode), npz_save(zipname, key, data, shape,
 * mode), npy_load(fname), npz_load(fname, key), NpyArray::num_bytes()
 * (cnpy's master since 2018; older checkouts, with unsigned int shapes,
 * do not build). A cnpy call that throws ends the run with its message;
 * loaded sizes are checked, so a misread is never timed as a read. So far
 * it was built and run only against a stand-in with that API, not cnpy.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "cnpy.h"

#include "benchutil.h"

namespace {

size_t nbytes, npz_bytes;
double *values;

/* The seconds work() takes, after priming. */
template <typename Work> double timed(Work work)
{
    double t0;

    prime();
    t0 = now();
    work();
    return now() - t0;
}

void check(const char *what, size_t got, size_t want)
{
    if (got != want) {
        fprintf(stderr, "bench_cnpy: %s: %zu bytes, not %zu\n", what, got,
                want);
        exit(1);
    }
}

double ours_save(const char *path)
{
    int64_t n = (int64_t)(nbytes / 8);

    return timed([&] {
        if (npyio_save(path, "=f8", 1, &n, values, nbytes,
                       NPYIO_WRITE_NO_SYNC, NULL) != NPYIO_OK)
            die(path);
    });
}

double cnpy_save(const char *path)
{
    std::vector<size_t> shape{nbytes / 8};

    return timed([&] { cnpy::npy_save<double>(path, values, shape, "w"); });
}

double ours_load(const char *path)
{
    void *data = NULL;
    size_t len = 0;
    char type[64];
    int ndim = 0;
    int64_t shape[4];
    double t = timed([&] {
        if (npyio_load(path, NULL, &data, &len, type, sizeof type, &ndim,
                       shape, 4) != NPYIO_OK)
            die(path);
    });

    npyio_free(data); /* the free is not timed on either side */
    check("npyio_load", len, nbytes);
    return t;
}

double cnpy_load(const char *path)
{
    cnpy::NpyArray a;
    double t = timed([&] { a = cnpy::npy_load(path); });

    check("cnpy::npy_load", a.num_bytes(), nbytes);
    return t;
}

double ours_savez(const char *path)
{
    const char *keys[1] = {"a"}, *types[1] = {"=f8"};
    int64_t n = (int64_t)(npz_bytes / 8);
    const int64_t *shapes[1] = {&n};
    const void *data[1] = {values};
    int ndims[1] = {1};
    size_t lens[1] = {npz_bytes};

    return timed([&] {
        if (npyio_savez(path, 1, keys, types, ndims, shapes, data, lens,
                        NULL, NPYIO_WRITE_NO_SYNC, NULL) != NPYIO_OK)
            die(path);
    });
}

double cnpy_savez(const char *path)
{
    std::vector<size_t> shape{npz_bytes / 8};

    return timed(
        [&] { cnpy::npz_save<double>(path, "a", values, shape, "w"); });
}

double ours_member_read(const char *path)
{
    size_t len = 0;
    double t = member_read(path, "a", NULL, &len);

    check("npyio_reader_read_alloc", len, npz_bytes);
    return t;
}

double cnpy_member_read(const char *path)
{
    cnpy::NpyArray a;
    double t = timed([&] { a = cnpy::npz_load(path, "a"); });

    check("cnpy::npz_load", a.num_bytes(), npz_bytes);
    return t;
}

int run(int argc, char **argv)
{
    const char *dir = "/dev/shm";
    size_t mib = 1024, npz_mib = 256, k;
    int rounds = 9, i, r;
    static const char *const names[4] = {"in.npy", "out.npy", "out.npz",
                                         "in.npz"};
    char paths[4][512];
    const char *in = paths[0], *out = paths[1], *npz = paths[2],
               *cnpy_npz = paths[3];
    static double t[8][MAX_ROUNDS];

    for (i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--size") == 0)
            mib = (size_t)atol(argv[i + 1]);
        else if (strcmp(argv[i], "--npz-size") == 0)
            npz_mib = (size_t)atol(argv[i + 1]);
        else if (strcmp(argv[i], "--rounds") == 0)
            rounds = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--dir") == 0)
            dir = argv[i + 1];
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || mib < 1 || npz_mib < 1)
        die("bad arguments");
    nbytes = mib << 20;
    npz_bytes = npz_mib << 20;
    for (k = 0; k < 4; k++)
        snprintf(paths[k], sizeof paths[k], "%s/npyio-bench-cnpy-%s", dir,
                 names[k]);
    values = (double *)thp_alloc(nbytes > npz_bytes ? nbytes : npz_bytes);
    for (k = 0; k < (nbytes > npz_bytes ? nbytes : npz_bytes) / 8; k++)
        values[k] = (double)k * 0.5;
    ours_save(in);
    cnpy_savez(cnpy_npz);
    printf("libnpyio vs cnpy: %zu MiB (.npy) and %zu MiB (.npz) of float64 "
           "in %s, %d interleaved rounds; medians (min..max) of per-round "
           "ratios, >1 means libnpyio is faster\n", mib, npz_mib, dir,
           rounds);
    for (r = 0; r < rounds; r++) {
        t[0][r] = ours_save(out);
        t[1][r] = cnpy_save(out);
        t[2][r] = ours_load(in);
        t[3][r] = cnpy_load(in);
        t[4][r] = ours_savez(npz);
        t[5][r] = cnpy_savez(npz);
        t[6][r] = ours_member_read(cnpy_npz);
        t[7][r] = cnpy_member_read(cnpy_npz);
    }
    report("save, durability off", nbytes, rounds, t[0], t[1],
           "cnpy::npy_save", NULL, NULL);
    report("load (new buffer)", nbytes, rounds, t[2], t[3],
           "cnpy::npy_load", NULL, NULL);
    report("stored write", npz_bytes, rounds, t[4], t[5], "cnpy::npz_save",
           NULL, NULL);
    report("stored read (CRC)", npz_bytes, rounds, t[6], t[7],
           "cnpy::npz_load", NULL, NULL);
    for (k = 0; k < 4; k++)
        unlink(paths[k]);
    free(values);
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    try {
        return run(argc, argv);
    } catch (const std::exception &e) {
        fprintf(stderr, "bench_cnpy: cnpy failed: %s\n", e.what());
        return 1;
    }
}
