/* The common tasks, one call each (C11: the element type comes from the
 * pointer's type, so a double * cannot be saved as "i8" by a typo). */
#include <npyio.h>
#include <stdio.h>

static int check(npyio_status st)
{
    if (st != NPYIO_OK)
        fprintf(stderr, "%s\n", npyio_last_error());
    return st != NPYIO_OK;
}

int main(void)
{
    double grid[2][3] = {{1, 2, 3}, {4, 5, 6}}, more[1][3] = {{7, 8, 9}};
    int32_t ids[4] = {10, 20, 30, 40};
    float small[2] = {0.5f, 1.5f};
    int64_t grid_shape[2] = {2, 3}, more_shape[2] = {1, 3}, n4[1] = {4},
            n2[1] = {2};

    /* 1. Save a 2-D array of doubles (np.save). */
    if (check(NPYIO_SAVE("grid.npy", 2, grid_shape, &grid[0][0],
                         sizeof grid, 0, NULL)))
        return 1;
    /* 2. Append rows to it: grid.npy is now (3, 3). */
    if (check(NPYIO_APPEND("grid.npy", 2, more_shape, &more[0][0],
                           sizeof more, 0, NULL)))
        return 1;

    /* 3. Load any numeric .npy as doubles, whatever its type and byte
     *    order (np.load(f).astype('f8')), then one free. */
    double *values = NULL;
    size_t len = 0;
    int ndim = 0;
    int64_t shape[8];

    if (check(NPYIO_LOAD_AS("grid.npy", &values, 0, NULL, &len, &ndim, shape,
                            8)))
        return 1;
    printf("grid.npy: %d-D, %lld x %lld, last %g\n", ndim,
           (long long)shape[0], (long long)shape[1], values[len / 8 - 1]);
    npyio_free(values);

    /* 4. An archive of three arrays, two stored and one compressed. */
    const char *keys[3] = {"grid", "ids", "small"};
    const char *types[3] = {NPYIO_TYPE_OF(&grid[0][0]), NPYIO_TYPE_OF(ids),
                            NPYIO_TYPE_OF(small)};
    const int ndims[3] = {2, 1, 1}, levels[3] = {0, 0, 6};
    const int64_t *shapes[3] = {grid_shape, n4, n2};
    const void *data[3] = {grid, ids, small};
    const size_t lens[3] = {sizeof grid, sizeof ids, sizeof small};

    if (check(npyio_savez("three.npz", 3, keys, types, ndims, shapes, data,
                          lens, levels, 0, NULL)))
        return 1;
    /* 5. Add a member to it. */
    if (check(NPYIO_SAVEZ_APPEND("three.npz", "extra", 1, n4, ids,
                                 sizeof ids, 6, 0, NULL)))
        return 1;

    /* 6. Read it member by member, the archive opened once: every member
     *    as doubles (the type from `values`' type, as in 1-5). */
    npyio_npz *npz = NULL;

    if (check(npyio_npz_open_path("three.npz", NULL, &npz)))
        return 1;
    for (size_t i = 0; i < npyio_npz_count(npz); i++) {
        if (check(NPYIO_NPZ_LOAD_AS(npz, i, &values, 0, &len, &ndim, shape,
                                    8))) {
            npyio_npz_close(npz);
            return 1;
        }
        printf("%s: %zu values, first %g\n", npyio_npz_key(npz, i), len / 8,
               values[0]);
        npyio_free(values);
    }
    return check(npyio_npz_close(npz));
}
