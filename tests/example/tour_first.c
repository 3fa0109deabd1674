/* A first program: save a 2-D array of doubles (np.save), then load it
 * back as doubles (np.load(f).astype('f8'): any numeric .npy loads so). */
#include <npyio.h>
#include <stdio.h>

int main(void)
{
    double grid[2][3] = {{1, 2, 3}, {4, 5, 6}};
    int64_t shape[2] = {2, 3};

    if (npyio_save("grid.npy", "f8", 2, shape, grid, sizeof grid, 0,
                   NULL) != NPYIO_OK) {
        fprintf(stderr, "%s\n", npyio_last_error());
        return 1;
    }

    void *data = NULL;
    size_t len = 0;
    int ndim = 0;
    int64_t dims[8];

    if (npyio_load_as("grid.npy", "f8", 0, NULL, &data, &len, &ndim, dims,
                      8) != NPYIO_OK) {
        fprintf(stderr, "%s\n", npyio_last_error());
        return 1;
    }
    const double *v = data;
    printf("%d-D, %lld x %lld, last %g\n", ndim, (long long)dims[0],
           (long long)dims[1], v[len / sizeof *v - 1]);
    npyio_free(data);
    return 0;
}
