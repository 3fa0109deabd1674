/* Memory maps: create a file and fill it in place (NumPy's
 * open_memmap(mode='w+')), then map it read-only and sum it. */
#include <npyio.h>
#include <stdio.h>

int main(void)
{
    npyio_dtype *f8;
    npyio_header *h;
    npyio_map *m;
    int64_t shape[2] = {1000, 100};

    npyio_dtype_parse("f8", 2, NULL, &f8);
    npyio_header_new(f8, 2, shape, 0, &h);
    npyio_dtype_unref(f8);
    /* Disk blocks reserved: a full disk fails here, not as SIGBUS later. */
    if (npyio_map_create_path("big.npy", h, 0, NULL, &m) != NPYIO_OK)
        return 1;
    double *d = npyio_map_data(m);
    for (int i = 0; i < 1000 * 100; i++)
        d[i] = i % 7;
    npyio_map_close(m);                            /* msync, unless NO_SYNC */
    npyio_header_free(h);

    if (npyio_map_open_path("big.npy", 0, NULL,
                            &m) != NPYIO_OK)  /* read-only */
        return 1;
    const double *v = npyio_map_data(m);           /* bytes as stored */
    double sum = 0;
    for (int64_t i = 0; i < npyio_header_count(npyio_map_header(m)); i++)
        sum += v[i];
    printf("sum %g\n", sum);
    npyio_map_close(m);

    /* A stored archive member, mapped in place (np.load ignores mmap_mode
     * for archives): members are written 64-byte aligned for this. */
    const char *key = "big";
    const char *type = "f8";
    int ndim = 2;
    const int64_t *shapes[1] = {shape};
    static double all[1000][100];
    const void *data[1] = {all};
    size_t len = sizeof all;
    npyio_npz *npz;

    if (npyio_savez("big.npz", 1, &key, &type, &ndim, shapes, data, &len,
                    NULL, 0, NULL) != NPYIO_OK ||
        npyio_npz_open_path("big.npz", NULL, &npz) != NPYIO_OK)
        return 1;
    if (npyio_map_open_member(npz, 0, &m) != NPYIO_OK)
        return 1;
    printf("member mapped: %lld values\n",
           (long long)npyio_header_count(npyio_map_header(m)));
    npyio_map_close(m);
    npyio_npz_close(npz);
    return 0;
}
