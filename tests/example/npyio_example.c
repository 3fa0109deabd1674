/*
 * npyio_example.c - the README's first command runs this until the `npyio`
 * tool exists: it uses only the public API, as a program of a user would,
 * and shows what the library offers so far: its version, the status codes
 * with their meanings, the resource limits, and a failure with its detailed
 * message.
 */
#include <npyio.h>

#include <inttypes.h>
#include <stdio.h>

static const struct {
    npyio_limit which;
    const char *name;
} limits[] = {
    {NPYIO_LIMIT_HEADER_SIZE, "NPYIO_LIMIT_HEADER_SIZE"},
    {NPYIO_LIMIT_NDIM, "NPYIO_LIMIT_NDIM"},
    {NPYIO_LIMIT_DEPTH, "NPYIO_LIMIT_DEPTH"},
    {NPYIO_LIMIT_NPZ_MEMBERS, "NPYIO_LIMIT_NPZ_MEMBERS"},
    {NPYIO_LIMIT_NPZ_MEMBER_BYTES, "NPYIO_LIMIT_NPZ_MEMBER_BYTES"},
    {NPYIO_LIMIT_NPZ_RATIO, "NPYIO_LIMIT_NPZ_RATIO"},
    {NPYIO_LIMIT_ALLOC_BYTES, "NPYIO_LIMIT_ALLOC_BYTES"},
};

int main(void)
{
    npyio_options *options = NULL;
    npyio_status st;
    int64_t value;
    size_t i;
    int s;

    printf("libnpyio %s (library number %" PRIu32 ", header %s)\n\n",
           npyio_version_string(), npyio_version_number(),
           NPYIO_VERSION_STRING);

    puts("status codes:");
    for (s = NPYIO_END; s >= NPYIO_E_BUFFER_TOO_SMALL; s--)
        printf("  %3d  %s\n", s, npyio_status_string(s));

    puts("\ndefault limits:");
    for (i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        if (npyio_options_get_limit(NULL, limits[i].which, &value) != NPYIO_OK)
            return 1;
        printf("  %-30s %" PRId64 "\n", limits[i].name, value);
    }

    if (npyio_options_new(&options) != NPYIO_OK)
        return 1;
    st = npyio_options_set_limit(options, NPYIO_LIMIT_NDIM, -3);
    printf("\nsetting a negative limit: %s\n  %s\n", npyio_status_string(st),
           npyio_last_error());
    npyio_options_free(options);
    return st == NPYIO_E_INVALID_ARG ? 0 : 1;
}
