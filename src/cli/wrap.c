/*
 * wrap.c - `npyio wrap --dtype T --shape D0,D1,... [--order C|F] RAW OUT`:
 * the way back from dump. RAW holds bare elements (dump's output, a
 * program's fwrite, ndarray.tofile); OUT becomes, byte for byte, the file
 * np.save writes for np.fromfile(RAW, T).reshape(shape, order=ORDER).
 * Built on the public API only.
 *
 * No element is touched: reshaping a contiguous buffer in Fortran order
 * gives an F-contiguous array, whose bytes np.save writes as they are,
 * with 'fortran_order': True where the two layouts differ (at least two
 * axes longer than 1, no axis 0: npyio_header_new and npyio_header_emit
 * decide that as np.save does). So RAW is copied through in bounded
 * chunks, and must hold exactly the array's bytes.
 *
 * Refused before OUT is touched: object dtypes (their data is a pickle,
 * not elements), subarray dtypes (np.fromfile turns their shape into
 * axes: give the base type and the whole shape), shapes whose size
 * overflows, and headers the reading limits would refuse (--untrusted:
 * 32 dimensions, 10000 header bytes, depth 16), so that OUT reads back
 * under the options it was made with. OUT goes through the library's
 * atomic writer: it is replaced only when all of RAW was copied.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "format.h"
#include "text.h"

typedef struct wrap_job {
    const char *raw_name;
    FILE *raw;           /* ours unless stdin */
    int64_t raw_size;    /* bytes left in a regular file RAW, else -1 */
    npyio_header *header;
    uint64_t nbytes;     /* the array's data bytes */
    char *what;          /* "shape (3, 5) of f8 (8 bytes each)" */
} wrap_job;

/* A wrong command line: the problem, the usage line, exit 2. */
static int usage(const char *problem)
{
    fprintf(stderr, "npyio: %s\n%s\nTry 'npyio wrap --help'.\n", problem,
            CLI_WRAP_USAGE);
    return EXIT_USAGE;
}

/* One dimension of --shape: decimal digits only, within int64_t. */
static int parse_dimension(const char *text, size_t n, int64_t *out)
{
    uint64_t v = 0;
    size_t i;

    if (n == 0)
        return usage("--shape: an empty dimension (D0,D1,...: "
                                 "sizes >= 0; '' for a 0-d array)");
    for (i = 0; i < n; i++) {
        unsigned d = (unsigned)(text[i] - '0');

        if (d > 9)
            return usage("--shape: dimensions are sizes >= 0 "
                                     "in decimal, separated by commas");
        if (v > ((uint64_t)INT64_MAX - d) / 10)
            return cli_error("--shape", "a dimension beyond 2**63 - 1 (%.*s)",
                             (int)n, text);
        v = v * 10 + d;
    }
    *out = (int64_t)v;
    return 0;
}

/* --shape D0,D1,...: '' is 0-d. *shape is malloc'ed (NULL for 0-d). */
static int parse_shape(const char *text, int64_t **shape, int *ndim)
{
    size_t commas = 0, i;
    const char *p = text;
    int rc = 0;

    *shape = NULL;
    *ndim = 0;
    if (*text == '\0')
        return 0;
    for (i = 0; text[i] != '\0'; i++)
        commas += text[i] == ',';
    *shape = malloc((commas + 1) * sizeof **shape);
    if (*shape == NULL)
        return cli_error(NULL, "out of memory");
    while (rc == 0) {
        const char *end = strchr(p, ',');
        size_t n = end != NULL ? (size_t)(end - p) : strlen(p);

        rc = parse_dimension(p, n, &(*shape)[(*ndim)++]);
        if (end == NULL)
            break;
        p = end + 1;
    }
    return rc;
}

/* --dtype: a type np.fromfile reads element by element. */
static int parse_type(const cli_args *a, npyio_dtype **dt)
{
    char problem[512];

    if (npyio_dtype_parse(a->dtype, strlen(a->dtype), a->options, dt) !=
        NPYIO_OK) {
        snprintf(problem, sizeof problem, "--dtype: %s",
                 cli_library_message());
        return usage(problem);
    }
    if (npyio_dtype_has_objects(*dt))
        return cli_error("--dtype", "%s holds Python objects, whose data is "
                                    "a pickle, not raw elements", a->dtype);
    if (npyio_dtype_kind(*dt) == NPYIO_KIND_SUBARRAY)
        return cli_error("--dtype", "%s is a subarray type, whose axes "
                                    "np.fromfile makes the array's own: give "
                                    "its base type and the whole --shape",
                         a->dtype);
    return 0;
}

/* OUT's header must read back under the user's limits (--untrusted,
 * --max-header-size): it is emitted as np.save writes it and parsed. */
static int check_limits(const npyio_header *h, const cli_args *a)
{
    npyio_header *back = NULL;
    unsigned char *bytes;
    size_t len = 0;
    npyio_status st;

    if (npyio_header_emit(h, 0, NULL, 0, &len) != NPYIO_E_BUFFER_TOO_SMALL)
        return cli_fail("--dtype");
    bytes = malloc(len);
    if (bytes == NULL)
        return cli_error(NULL, "out of memory");
    st = npyio_header_emit(h, 0, bytes, len, &len);
    if (st == NPYIO_OK)
        st = npyio_header_parse(bytes, len, a->options, &back, NULL);
    free(bytes);
    npyio_header_free(back);
    if (st != NPYIO_OK)
        return cli_error(a->files[1], "its header (%zu bytes, as np.save "
                                      "writes it) would be refused on "
                                      "reading: %s",
                         len, cli_library_message());
    return 0;
}

/* The array OUT will hold, and the words that describe it in messages. */
static int make_header(const cli_args *a, wrap_job *j)
{
    npyio_dtype *dt = NULL;
    int64_t *shape = NULL, limit = 0;
    int ndim = 0, rc = parse_shape(a->shape, &shape, &ndim);

    if (rc == 0)
        rc = parse_type(a, &dt);
    if (rc == 0 &&
        npyio_options_get_limit(a->options, NPYIO_LIMIT_NDIM, &limit) ==
            NPYIO_OK &&
        ndim > limit)
        rc = cli_error("--shape", "%d dimensions, more than the %" PRId64
                                  " the limits allow (NPYIO_LIMIT_NDIM)",
                       ndim, limit);
    if (rc == 0 && npyio_header_new(dt, ndim, shape, a->order == 'F',
                                    &j->header) != NPYIO_OK)
        rc = cli_fail("--shape");
    if (rc == 0)
        rc = check_limits(j->header, a);
    if (rc == 0) {
        sbuf b = {0};

        j->nbytes = (uint64_t)npyio_header_nbytes(j->header);
        sb_str(&b, "shape ");
        fmt_put_shape(&b, ndim, shape);
        sb_fmt(&b, " of %s (%zu bytes each)", a->dtype,
               npyio_dtype_itemsize(dt));
        j->what = b.p;
        if (b.nomem)
            rc = cli_error(NULL, "out of memory");
    }
    npyio_dtype_unref(dt);
    free(shape);
    return rc;
}

/* RAW holds got bytes (more: more than that), not the array's. */
static int wrong_size(const wrap_job *j, uint64_t got, int more)
{
    if (more)
        return cli_error(j->raw_name, "more than the %" PRIu64
                                      " bytes of %s", j->nbytes, j->what);
    return cli_error(j->raw_name, "%" PRIu64 " bytes, not the %" PRIu64
                                  " bytes of %s", got, j->nbytes, j->what);
}

/* RAW opened; a regular file's size is checked before OUT is made. */
static int open_raw(wrap_job *j)
{
    struct stat info;

    j->raw_size = -1;
    j->raw = strcmp(j->raw_name, "-") == 0 ? stdin : cli_os_fopen(j->raw_name, "rb");
    if (j->raw == NULL)
        return cli_error(j->raw_name, "%s", strerror(errno));
    if (fstat(fileno(j->raw), &info) != 0)
        return 0; /* its length is found by reading */
    if (S_ISDIR(info.st_mode))
        return cli_error(j->raw_name, "is a directory");
    if (!S_ISREG(info.st_mode))
        return 0;
    /* Standard input may be a file opened at some offset. */
    off_t at = ftello(j->raw);
    j->raw_size = (int64_t)info.st_size - (at > 0 ? (int64_t)at : 0);
    if (j->raw_size >= 0 && (uint64_t)j->raw_size != j->nbytes)
        return wrong_size(j, (uint64_t)j->raw_size, 0);
    return 0;
}

/* All of RAW into w, which must be exactly the array's bytes. */
static int copy_raw(const wrap_job *j, npyio_writer *w, const char *out_name)
{
    unsigned char *buf = cli_buffer(CLI_CHUNK);
    uint64_t done = 0;
    cli_progress bar;
    size_t got;
    int rc = 0;

    if (buf == NULL)
        return cli_error(NULL, "out of memory");
    cli_progress_start(&bar, "wrapping", j->nbytes);
    while (rc == 0 && (got = fread(buf, 1, CLI_CHUNK, j->raw)) > 0) {
        if (got > j->nbytes - done)
            rc = wrong_size(j, j->nbytes, 1);
        else if (npyio_writer_write(w, buf, got) != NPYIO_OK)
            rc = cli_fail(out_name);
        done += got;
        cli_progress_update(&bar, done);
    }
    cli_progress_end(&bar);
    free(buf);
    if (rc == 0 && ferror(j->raw))
        rc = cli_error(j->raw_name, "reading: %s", strerror(errno));
    if (rc == 0 && done != j->nbytes)
        rc = wrong_size(j, done, 0);
    return rc;
}

static int write_out(const cli_args *a, wrap_job *j)
{
    const char *out_name = a->files[1];
    npyio_stream *stream = NULL;
    npyio_writer *w = NULL;
    int rc;

    if (cli_open_output(out_name, j->header, a->no_sync, a->options, &stream,
                        &w) != NPYIO_OK) {
        npyio_stream_close(stream);
        return cli_fail(out_name);
    }
    rc = copy_raw(j, w, out_name);
    if (rc != 0)
        npyio_writer_abort(w); /* an existing OUT stays as it was */
    else if (npyio_writer_close(w) != NPYIO_OK)
        rc = cli_fail(out_name);
    npyio_stream_close(stream);
    return rc;
}

int cli_wrap(const cli_args *a)
{
    wrap_job j;
    int rc;

    memset(&j, 0, sizeof j);
    j.raw_name = a->files[0];
    if (a->dtype == NULL || a->shape == NULL)
        return usage("wrap needs --dtype TYPE and --shape "
                                 "D0,D1,...");
    rc = make_header(a, &j);
    if (rc == 0)
        rc = open_raw(&j);
    if (rc == 0)
        rc = write_out(a, &j);
    if (j.raw != NULL && j.raw != stdin)
        fclose(j.raw);
    npyio_header_free(j.header);
    free(j.what);
    return rc;
}
