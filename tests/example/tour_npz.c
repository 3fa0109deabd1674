/* .npz archives: save two arrays as np.savez_compressed would, list the
 * archive's members, and load one back by its NumPy key. */
#include <npyio.h>
#include <stdio.h>

int main(void)
{
    double x[3] = {0.5, 1.5, 2.5};
    int32_t y[2][2] = {{1, 2}, {3, 4}};
    int64_t nx = 3, ny[2] = {2, 2};
    npyio_dtype *f8, *i4;
    npyio_header *hx, *hy;
    npyio_npz *npz;
    int32_t *data = NULL;

    npyio_dtype_parse("f8", 2, NULL, &f8);
    npyio_dtype_parse("i4", 2, NULL, &i4);
    npyio_header_new(f8, 1, &nx, 0, &hx);
    npyio_header_new(i4, 2, ny, 0, &hy);
    const char *keys[2] = {"x", "y"};
    const npyio_header *headers[2] = {hx, hy};
    const void *arrays[2] = {x, y};
    size_t lens[2] = {sizeof x, sizeof y};
    /* level 6: np.savez_compressed's; 0 stores, as np.savez does */
    if (npyio_savez_with_header("pair.npz", 2, keys, headers, arrays, lens, (const int[]){6, 6},
                       NPYIO_WRITE_NO_SYNC, NULL) != NPYIO_OK)
        return 1;

    npyio_npz_open_path("pair.npz", NULL, &npz);
    for (size_t i = 0; i < npyio_npz_count(npz); i++) {
        int64_t size;
        npyio_npz_stat(npz, i, NPYIO_NPZ_STAT_SIZE, &size);
        printf("%s (%s): %lld bytes\n", npyio_npz_key(npz, i),
               npyio_npz_name(npz, i), (long long)size);
    }
    npyio_npz_close(npz);

    /* One member in one call, from an archive opened once. */
    npyio_status st = npyio_npz_open_path("pair.npz", NULL, &npz);
    size_t index = 0, len = 0;
    char type[16];
    int ndim = 0;
    int64_t shape[2];

    if (st == NPYIO_OK)
        st = npyio_npz_find(npz, "y", &index, NULL);
    if (st == NPYIO_OK)
        st = npyio_npz_load(npz, index, (void **)&data, &len, type,
                            sizeof type, &ndim, shape, 2);
    npyio_npz_close(npz);
    printf("y: %s, y[1][0] = %d\n", npyio_status_string(st),
           st == NPYIO_OK ? data[2] : -1);
    npyio_free(data);
    npyio_header_free(hy);
    npyio_header_free(hx);
    npyio_dtype_unref(i4);
    npyio_dtype_unref(f8);
    return st != NPYIO_OK;
}
