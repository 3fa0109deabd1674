/*
 * io_tool.c - the C side of the two-way I/O interop test (io_roundtrip.py):
 *   io_tool read FILE FLAGS OUT   read FILE with flags (1 native byte
 *                                 order, 2 C order, 3 both), write the
 *                                 data bytes to OUT
 *   io_tool copy IN OUT           read IN and write it again with the
 *                                 writer to OUT (same header, same bytes)
 * Exit 0 on success, 1 with a message on stderr.
 */
#include <stdio.h>
#include <stdlib.h>

#include "npyio.h"

static int fail(const char *what)
{
    fprintf(stderr, "io_tool: %s: %s\n", what, npyio_last_error());
    return 1;
}

static int read_cmd(const char *in, unsigned flags, const char *out)
{
    npyio_header *h = NULL;
    void *data = NULL;
    FILE *f;
    size_t n;

    if (npyio_load(in, flags, NULL, &h, &data) != NPYIO_OK)
        return fail(in);
    n = (size_t)npyio_header_nbytes(h);
    f = fopen(out, "wb");
    if (f == NULL || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "io_tool: cannot write %s\n", out);
        return 1;
    }
    npyio_free(data);
    npyio_header_free(h);
    return 0;
}

static int copy_cmd(const char *in, const char *out)
{
    npyio_header *h = NULL;
    void *data = NULL;
    int rc = 0;

    if (npyio_load(in, 0, NULL, &h, &data) != NPYIO_OK)
        return fail(in);
    if (npyio_save(out, h, data, NULL) != NPYIO_OK)
        rc = fail(out);
    npyio_free(data);
    npyio_header_free(h);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 5 && argv[1][0] == 'r')
        return read_cmd(argv[2], (unsigned)atoi(argv[3]), argv[4]);
    if (argc == 4 && argv[1][0] == 'c')
        return copy_cmd(argv[2], argv[3]);
    fprintf(stderr, "usage: io_tool read FILE FLAGS OUT | copy IN OUT\n");
    return 2;
}
