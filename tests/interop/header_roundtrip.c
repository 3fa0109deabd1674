/*
 * header_roundtrip.c - the C side of the interop test: for each .npy
 * header file named on the command line (written by the live NumPy in
 * random_records.py), parse it with libnpyio, emit it again and compare the
 * bytes with NumPy's. Prints "ok FILE" or "FAIL FILE: reason" per file and
 * "N passed, M failed" last; exits 0 only if every file passed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npyio.h"

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    long size;

    if (f == NULL)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 &&
        fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc(size > 0 ? (size_t)size : 1);
        if (buf != NULL && fread(buf, 1, (size_t)size, f) != (size_t)size) {
            free(buf);
            buf = NULL;
        }
        *len = (size_t)size;
    }
    fclose(f);
    return buf;
}

/* Empty string if the header round-trips, else the reason. */
static const char *check(const char *path, const npyio_options *options,
                         char *why, size_t cap)
{
    size_t len = 0, used = 0, out_len = 0;
    unsigned char *bytes = slurp(path, &len), *out = NULL;
    npyio_header *h = NULL;
    npyio_status st;

    why[0] = '\0';
    if (bytes == NULL) {
        snprintf(why, cap, "cannot read the file");
        return why;
    }
    st = npyio_header_parse(bytes, len, options, &h, &used);
    if (st != NPYIO_OK) {
        snprintf(why, cap, "parse: %s", npyio_last_error());
    } else if (used != len) {
        snprintf(why, cap, "header is %zu bytes, file %zu", used, len);
    } else if ((out = malloc(len)) == NULL ||
               npyio_header_emit(h, 0, out, len, &out_len) != NPYIO_OK) {
        snprintf(why, cap, "emit: %s", npyio_last_error());
    } else if (out_len != len || memcmp(out, bytes, len) != 0) {
        snprintf(why, cap, "emitted bytes differ: %.*s", (int)out_len,
                 (const char *)out + 10);
    }
    npyio_header_free(h);
    free(out);
    free(bytes);
    return why;
}

int main(int argc, char **argv)
{
    npyio_options *options = NULL;
    int passed = 0, failed = 0, i;

    /* NumPy writes headers beyond its own default read limit; take them. */
    if (npyio_options_new(&options) != NPYIO_OK ||
        npyio_options_set_limit(options, NPYIO_LIMIT_HEADER_SIZE,
                                INT64_C(1) << 30) != NPYIO_OK)
        return 2;
    for (i = 1; i < argc; i++) {
        char why[512];

        if (check(argv[i], options, why, sizeof why)[0] == '\0') {
            printf("ok %s\n", argv[i]);
            passed++;
        } else {
            printf("FAIL %s: %s\n", argv[i], why);
            failed++;
        }
    }
    npyio_options_free(options);
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 && passed > 0 ? 0 : 1;
}
