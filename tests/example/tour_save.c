/* Save a 2-D array of doubles as grid.npy: np.load("grid.npy") in Python. */
#include <npyio.h>
#include <stdio.h>

int main(void)
{
    double grid[3][4];
    int64_t shape[2] = {3, 4};

    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            grid[i][j] = i + j / 4.0;
    if (npyio_save("grid.npy", "f8", 2, shape, grid, sizeof grid, 0,
                         NULL) != NPYIO_OK) {
        fprintf(stderr, "%s\n", npyio_last_error());
        return 1;
    }
    return 0;
}
