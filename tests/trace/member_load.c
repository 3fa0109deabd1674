/*
 * member_load.c - one npyio_npz_load() of one member, for
 * member_path.py (the trace of the path a member load takes through the
 * library's modules).
 *
 *   member_load ARCHIVE INDEX [damage]
 *
 * With "damage" the member is expected to fail (its path through the
 * damage check is traced). Exit 0 when the load did as expected.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npyio.h"

int main(int argc, char **argv)
{
    npyio_npz *npz = NULL;
    void *data = NULL;
    size_t len = 0;
    char type[64];
    int ndim = 0;
    int64_t shape[32];
    npyio_status st;

    if (argc < 3) {
        fprintf(stderr, "usage: member_load ARCHIVE INDEX [damage]\n");
        return 2;
    }
    st = npyio_npz_open_path(argv[1], NULL, &npz);
    if (st == NPYIO_OK)
        st = npyio_npz_load(npz, (size_t)strtoull(argv[2], NULL, 10), &data,
                            &len, type, sizeof type, &ndim, shape, 32);
    printf("%s: %s\n", npyio_status_string(st),
           st == NPYIO_OK ? type : npyio_last_error());
    npyio_free(data);
    npyio_npz_close(npz);
    return (st == NPYIO_OK) == (argc < 4 || strcmp(argv[3], "damage") != 0)
               ? 0
               : 1;
}
