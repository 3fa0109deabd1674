/* Load any .npy file NumPy wrote (any byte order, C or Fortran order)
 * into native values in C order: ./tour_load FILE.npy */
#include <npyio.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    void *data;
    size_t len;
    char type[256];
    int ndim;
    int64_t shape[32];

    if (argc != 2 || npyio_load(argv[1], NULL, &data, &len, type,
                                      sizeof type, &ndim, shape,
                                      32) != NPYIO_OK) {
        fprintf(stderr, "%s\n", argc == 2 ? npyio_last_error() : "FILE?");
        return 1;
    }
    printf("%s, %zu bytes, shape (", type, len);
    for (int i = 0; i < ndim; i++)
        printf("%s%lld", i ? ", " : "", (long long)shape[i]);
    printf(")\n");
    if (strcmp(type + 1, "f8") == 0 && len >= 2 * sizeof(double))
        printf("first values %g %g\n", ((double *)data)[0],
               ((double *)data)[1]);
    npyio_free(data);
    return 0;
}
