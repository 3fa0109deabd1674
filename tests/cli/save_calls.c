/*
 * save_calls.c - N atomic saves of one small array to one path (the first
 * creates it, the others replace it), durability off, for
 * save_calls.sh to count their system calls under strace.
 *
 *   save_calls PATH N
 */
#include <stdio.h>
#include <stdlib.h>

#include "npyio.h"

int main(int argc, char **argv)
{
    static const float values[16];
    npyio_dtype *f4 = NULL;
    npyio_header *h = NULL;
    int64_t n = 16;
    long i, count;

    if (argc != 3 || (count = atol(argv[2])) < 1)
        return 2;
    if (npyio_dtype_parse("<f4", 3, NULL, &f4) != NPYIO_OK ||
        npyio_header_new(f4, 1, &n, 0, &h) != NPYIO_OK)
        return 1;
    for (i = 0; i < count; i++)
        if (npyio_save_with_header(argv[1], h, values, sizeof values,
                                   NPYIO_WRITE_NO_SYNC, NULL) != NPYIO_OK) {
            fprintf(stderr, "save_calls: %s\n", npyio_last_error());
            return 1;
        }
    npyio_header_free(h);
    npyio_dtype_unref(f4);
    return 0;
}
