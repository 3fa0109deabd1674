/*
 * npyio_example.c - a small program on the public API alone, as a user's
 * would be (built with the tests, run by ctest as `example`):
 * it reads the header of an .npy file, prints what it says, writes the
 * header again as np.save would and compares, and shows how a failure is
 * reported.
 *
 *   npyio_example FILE.npy
 */
#include <npyio.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first bytes of a file: enough for any header up to 64 KiB. */
static unsigned char *read_head(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = malloc(65536);

    if (f == NULL || buf == NULL) {
        perror(path);
        exit(1);
    }
    *len = fread(buf, 1, 65536, f);
    fclose(f);
    return buf;
}

static void print_header(const npyio_header *h)
{
    const npyio_dtype *dt = npyio_header_dtype(h);
    char descr[128];
    int i;

    npyio_dtype_str(dt, descr, sizeof descr, NULL);
    printf("format version  %d.0\n", npyio_header_version(h));
    printf("header length   %" PRId64 " (data at byte %" PRId64 ")\n",
           npyio_header_length(h), npyio_header_data_offset(h));
    printf("descr           %s (%s-endian%s, %zu bytes per element)\n",
           descr,
           npyio_dtype_byteorder(dt) == '>' ? "big" : "little",
           npyio_dtype_is_native(dt) ? ", native" : ", not native",
           npyio_dtype_itemsize(dt));
    printf("shape           (");
    for (i = 0; i < npyio_header_ndim(h); i++)
        printf("%s%" PRId64, i ? ", " : "", npyio_header_shape(h)[i]);
    printf("%s)\n", npyio_header_ndim(h) == 1 ? "," : "");
    printf("order           %s\n",
           npyio_header_is_fortran_order(h) ? "Fortran" : "C");
    printf("elements        %" PRId64 " (%" PRId64 " bytes of data)\n",
           npyio_header_count(h), npyio_header_nbytes(h));
}

int main(int argc, char **argv)
{
    unsigned char *bytes, again[65536];
    size_t len, used = 0, elen = 0;
    npyio_header *h = NULL;
    npyio_options *options = NULL;
    npyio_status st;

    if (argc != 2) {
        fprintf(stderr, "usage: npyio_example FILE.npy\n");
        return 2;
    }
    printf("libnpyio %s\n\n%s:\n", npyio_version_string(), argv[1]);
    bytes = read_head(argv[1], &len);
    st = npyio_header_parse(bytes, len, NULL, &h, &used);
    if (st != NPYIO_OK) {
        fprintf(stderr, "%s: %s: %s\n", argv[1], npyio_status_string(st),
                npyio_last_error());
        return 1;
    }
    print_header(h);
    st = npyio_header_emit(h, 0, again, sizeof again, &elen);
    printf("re-emitted      %zu bytes, %s np.save's\n", elen,
           st == NPYIO_OK && elen == used && memcmp(again, bytes, used) == 0
               ? "identical to"
               : "different from");
    npyio_header_free(h);

    /* A failure: a limit smaller than this header. */
    npyio_options_new(&options);
    npyio_options_set_limit(options, NPYIO_LIMIT_HEADER_SIZE, 64);
    st = npyio_header_parse(bytes, len, options, &h, NULL);
    printf("\nwith a 64-character header limit: %s\n  %s\n",
           npyio_status_string(st), npyio_last_error());
    npyio_options_free(options);
    free(bytes);
    return st == NPYIO_E_LIMIT ? 0 : 1;
}
