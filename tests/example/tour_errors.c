/* Every call that can fail returns a status; npyio_last_error() says what
 * and where, per thread. Options carry limits (and an allocator). */
#include <npyio.h>
#include <stdio.h>

int main(void)
{
    npyio_header *h;
    void *data;
    npyio_status st = npyio_load_with_header("no-such.npy", 0, NULL, &h, &data);

    printf("%s (%s)\n", npyio_status_string(st), npyio_last_error());
    /* not found (npyio_load_with_header: cannot open no-such.npy: No such file ...) */

    npyio_options *opts;
    npyio_options_new(&opts);
    npyio_options_set_limit(opts, NPYIO_LIMIT_HEADER_SIZE, 4096);
    npyio_options_set_limit(opts, NPYIO_LIMIT_NDIM, 2);
    int64_t shape[3] = {2, 2, 2};
    double cube[8] = {0};
    npyio_save("cube.npy", "f8", 3, shape, cube, sizeof cube,
                     NPYIO_WRITE_NO_SYNC, NULL);
    st = npyio_load_with_header("cube.npy", 0, opts, &h, &data);
    printf("%s (%s)\n", npyio_status_string(st), npyio_last_error());
    npyio_options_free(opts);
    return st == NPYIO_E_LIMIT ? 0 : 1;
}
