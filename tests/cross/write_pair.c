/*
 * write_pair.c DIR - write the same .npy and .npz with whatever build of
 * libnpyio this is linked with (tests/cross/check_pair.sh compares the
 * Windows build's files with the Linux build's, byte for byte, and has
 * NumPy read them): DIR/pair.npy (3 x 4 '<f8'), DIR/pair.npz (a stored
 * and a deflated member) and DIR/<UTF-8 name>.npy, a name with "é" and
 * "日本", which Windows must get as UTF-16. Each is loaded back and
 * compared. Exits 0, or 1 naming what failed.
 */
#include "npyio.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failed(const char *what, npyio_status st)
{
    fprintf(stderr, "write_pair: %s: %s (%s)\n", what,
            npyio_status_string(st), npyio_last_error());
    return 1;
}

/* Load path back and compare its data with want. */
static int check_back(const char *path, const double *want, size_t len)
{
    void *data = NULL;
    size_t got = 0;
    char type[16];
    int ndim = 0, bad;
    int64_t shape[4];
    npyio_status st = npyio_load(path, NULL, &data, &got, type, sizeof type,
                                 &ndim, shape, 4);

    if (st != NPYIO_OK)
        return failed(path, st);
    bad = got != len || memcmp(data, want, len) != 0 || ndim != 2;
    if (bad)
        fprintf(stderr, "write_pair: %s: read back differs\n", path);
    npyio_free(data);
    return bad;
}

int main(int argc, char **argv)
{
    static const char *const keys[] = {"stored", "deflated"};
    static const char *const types[] = {"<f8", "<i4"};
    static const int ndims[] = {2, 1}, levels[] = {0, 6};
    static const int64_t shape[] = {3, 4}, ishape[] = {5};
    static const int64_t *const shapes[] = {shape, ishape};
    static const int32_t ints[] = {1, -2, 3, -4, 5};
    double grid[12];
    const void *const data[] = {grid, ints};
    const size_t lens[] = {sizeof grid, sizeof ints};
    char npy[4096], npz[4096], named[4096];
    npyio_status st;
    int i;

    if (argc != 2) {
        fprintf(stderr, "usage: write_pair DIR\n");
        return 2;
    }
    for (i = 0; i < 12; i++)
        grid[i] = i * 0.25 - 1.0;
    snprintf(npy, sizeof npy, "%s/pair.npy", argv[1]);
    snprintf(npz, sizeof npz, "%s/pair.npz", argv[1]);
    snprintf(named, sizeof named, "%s/caf\xc3\xa9-\xe6\x97\xa5\xe6\x9c\xac.npy",
             argv[1]);
    st = npyio_save(npy, "<f8", 2, shape, grid, sizeof grid, 0, NULL);
    if (st != NPYIO_OK)
        return failed(npy, st);
    st = npyio_save(named, "<f8", 2, shape, grid, sizeof grid, 0, NULL);
    if (st != NPYIO_OK)
        return failed(named, st);
    st = npyio_savez(npz, 2, keys, types, ndims, shapes, data, lens, levels,
                     0, NULL);
    if (st != NPYIO_OK)
        return failed(npz, st);
    return check_back(npy, grid, sizeof grid) |
           check_back(named, grid, sizeof grid);
}
