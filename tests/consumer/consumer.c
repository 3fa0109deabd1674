/*
 * consumer.c - a program of the kind a user writes, compiled against the
 * *installed* libnpyio (headers, library and pkg-config or CMake package
 * from a temporary prefix), to prove the installation is usable as shipped.
 * Exits 0 only if every check holds.
 */
#include <npyio.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
    npyio_options *options = NULL;
    int64_t ndim = 0;
    npyio_status st;

    printf("libnpyio %s (header %s)\n", npyio_version_string(),
           NPYIO_VERSION_STRING);
    if (npyio_version_number() / 10000 != NPYIO_VERSION_MAJOR) {
        fprintf(stderr, "major version of the library differs\n");
        return 1;
    }
    if (npyio_options_new(&options) != NPYIO_OK ||
        npyio_options_set_limit(options, NPYIO_LIMIT_NDIM, 8) != NPYIO_OK ||
        npyio_options_get_limit(options, NPYIO_LIMIT_NDIM, &ndim) != NPYIO_OK ||
        ndim != 8) {
        fprintf(stderr, "options: %s\n", npyio_last_error());
        return 1;
    }
    st = npyio_options_set_limit(options, NPYIO_LIMIT_NDIM, -1);
    printf("expected failure: %s: %s\n", npyio_status_string(st),
           npyio_last_error());
    npyio_options_free(options);
    if (st != NPYIO_E_INVALID_ARG || strstr(npyio_last_error(), "-1") == NULL)
        return 1;
    puts("consumer OK");
    return 0;
}
