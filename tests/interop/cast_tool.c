/*
 * cast_tool.c - the C side of the conversion interop test (cast_check.py):
 *   cast_tool load-as IN TYPE FLAGS OUT    npyio_load_as; the data to OUT,
 *                                          "ndim d0 d1 ..." on stdout
 *   cast_tool modes IN TYPE FLAGS PREFIX   a reader with the type, every
 *                                          way of reading, each into
 *                                          PREFIX.<mode> (see modes[])
 *   cast_tool pipe TYPE FLAGS OUT          the .npy on stdin (a stream
 *                                          that cannot seek), read whole
 *                                          in C order with the type
 *   cast_tool npz IN INDEX TYPE FLAGS OUT  npyio_npz_load_as of a member
 *                                          (the environment's
 *                                          CAST_TOOL_THREADS sets
 *                                          NPYIO_LIMIT_THREADS)
 * TYPE "-" is NULL (as stored). FLAGS: the NPYIO_READ_CAST_* bits, in
 * decimal. Exit 0 on success; 1 with "cast_tool: STATUS: message" on
 * stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npyio.h"

static int fail(npyio_status st, const char *what)
{
    fprintf(stderr, "cast_tool: %s: %s: %s\n", what,
            npyio_status_string(st), npyio_last_error());
    return 1;
}

static int put(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");

    if (f == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "cast_tool: cannot write %s\n", path);
        return 1;
    }
    return 0;
}

static const char *type_arg(const char *s)
{
    return strcmp(s, "-") == 0 ? NULL : s;
}

static int load_as(const char *in, const char *type, uint32_t flags,
                   const char *out)
{
    void *data = NULL;
    size_t len = 0;
    int ndim = 0, i, rc;
    int64_t shape[64];
    npyio_status st = npyio_load_as(in, type, flags, NULL, &data, &len,
                                    &ndim, shape, 64);

    if (st != NPYIO_OK)
        return fail(st, in);
    printf("%d", ndim);
    for (i = 0; i < ndim; i++)
        printf(" %lld", (long long)shape[i]);
    printf("\n");
    rc = put(out, data, len);
    npyio_free(data);
    return rc;
}

/* One way of reading: whole (cap 0), by chunks of `chunk` elements, or
 * by `rows` rows at a time; with read flags `rflags`. */
typedef struct mode {
    const char *name;
    uint32_t rflags;
    size_t chunk;  /* elements per chunk (0: not chunks) */
    int64_t rows;  /* rows per call (0: not rows) */
    int alloc;
} mode;

static const mode modes[] = {
    {"whole_c", NPYIO_READ_C_ORDER, 0, 0, 0},
    {"whole_file", 0, 0, 0, 0},
    {"alloc_c", NPYIO_READ_C_ORDER, 0, 0, 1},
    {"chunk1_c", NPYIO_READ_C_ORDER, 1, 0, 0},
    {"chunk7_c", NPYIO_READ_C_ORDER, 7, 0, 0},
    {"chunk4096_c", NPYIO_READ_C_ORDER, 4096, 0, 0},
    {"chunk5_file", 0, 5, 0, 0},
    {"rows1_c", NPYIO_READ_C_ORDER, 0, 1, 0},
    {"rows3_c", NPYIO_READ_C_ORDER, 0, 3, 0},
};

/* The reader's elements as `m` reads them, into buf (cap bytes). */
static npyio_status read_mode(npyio_reader *r, const mode *m,
                              unsigned char *buf, size_t cap, size_t item,
                              size_t *done)
{
    const npyio_header *h = npyio_reader_header(r);
    npyio_status st = NPYIO_OK;
    size_t got = 0;

    *done = 0;
    if (m->chunk > 0) {
        while ((st = npyio_reader_read_chunk(r, buf + *done,
                                             m->chunk * item, m->rflags,
                                             &got)) == NPYIO_OK)
            *done += got;
        return st == NPYIO_END ? NPYIO_OK : st;
    }
    if (m->rows > 0 && npyio_header_ndim(h) > 0) {
        int64_t n = npyio_header_shape(h)[0], first;
        size_t row = (size_t)(npyio_header_count(h) / (n > 0 ? n : 1)) * item;

        for (first = 0; first < n && st == NPYIO_OK; first += m->rows) {
            int64_t k = n - first < m->rows ? n - first : m->rows;

            st = npyio_reader_read_rows(r, first, k, buf + *done,
                                        cap - *done, m->rflags);
            *done += (size_t)k * row;
        }
        return st;
    }
    *done = cap;
    return npyio_reader_read(r, buf, cap, m->rflags);
}

static int modes_cmd(const char *in, const char *type, uint32_t flags,
                     const char *prefix)
{
    size_t k;

    for (k = 0; k < sizeof modes / sizeof modes[0]; k++) {
        const mode *m = &modes[k];
        npyio_reader *r = NULL;
        unsigned char *buf = NULL;
        void *all = NULL;
        size_t item = 0, cap = 0, done = 0;
        char path[4096];
        npyio_status st = npyio_reader_open_path(in, NULL, &r);

        if (st == NPYIO_OK)
            st = npyio_reader_set_type(r, type, flags);
        if (st != NPYIO_OK)
            return fail(st, m->name);
        /* the delivered itemsize: the type's, as one element read says */
        {
            npyio_dtype *dt = NULL;

            if (type != NULL &&
                npyio_dtype_parse(type, strlen(type), NULL, &dt) !=
                    NPYIO_OK)
                return fail(NPYIO_E_FORMAT, type);
            item = dt != NULL ? npyio_dtype_itemsize(dt)
                              : npyio_dtype_itemsize(npyio_header_dtype(
                                    npyio_reader_header(r)));
            npyio_dtype_unref(dt);
        }
        cap = (size_t)npyio_header_count(npyio_reader_header(r)) * item;
        if (m->alloc) {
            st = npyio_reader_read_alloc(r, m->rflags, &all, &done);
            buf = all;
        } else {
            buf = malloc(cap + 1);
            st = read_mode(r, m, buf, cap, item, &done);
        }
        npyio_reader_close(r);
        snprintf(path, sizeof path, "%s.%s", prefix, m->name);
        if (st != NPYIO_OK || put(path, buf, done) != 0) {
            m->alloc ? npyio_free(buf) : free(buf);
            return st != NPYIO_OK ? fail(st, m->name) : 1;
        }
        m->alloc ? npyio_free(buf) : free(buf);
    }
    return 0;
}

static int pipe_cmd(const char *type, uint32_t flags, const char *out)
{
    npyio_stream *s = NULL;
    npyio_reader *r = NULL;
    void *data = NULL;
    size_t len = 0;
    npyio_status st = npyio_stream_open_file(stdin, NULL, &s);

    if (st == NPYIO_OK)
        st = npyio_reader_open_stream(s, NULL, &r);
    if (st == NPYIO_OK)
        st = npyio_reader_set_type(r, type, flags);
    if (st == NPYIO_OK)
        st = npyio_reader_read_alloc(r, NPYIO_READ_C_ORDER |
                                            NPYIO_READ_NATIVE,
                                     &data, &len);
    npyio_reader_close(r);
    npyio_stream_close(s);
    if (st != NPYIO_OK)
        return fail(st, "stdin");
    st = put(out, data, len) == 0 ? NPYIO_OK : NPYIO_E_IO;
    npyio_free(data);
    return st == NPYIO_OK ? 0 : 1;
}

/* The member through its reader with the type set, in chunks of 3 bytes
 * more than 2 elements in C order: the same bytes as `want`. */
static npyio_status member_chunks(npyio_npz *npz, size_t index,
                                  const char *type, uint32_t flags,
                                  const void *want, size_t len)
{
    npyio_reader *r = NULL;
    unsigned char *buf = malloc(len + 64);
    size_t done = 0, got = 0, item = len;
    npyio_status st = buf == NULL ? NPYIO_E_NOMEM
                                  : npyio_reader_open_member(npz, index, &r);

    if (st == NPYIO_OK)
        st = npyio_reader_set_type(r, type, flags);
    if (st == NPYIO_OK && npyio_header_count(npyio_reader_header(r)) > 0)
        item = len / (size_t)npyio_header_count(npyio_reader_header(r));
    while (st == NPYIO_OK && item > 0 &&
           (st = npyio_reader_read_chunk(r, buf + done, 2 * item + 3,
                                         NPYIO_READ_C_ORDER, &got)) ==
               NPYIO_OK)
        done += got;
    if (st == NPYIO_END)
        st = done == len && memcmp(buf, want, len) == 0 ? NPYIO_OK
                                                         : NPYIO_E_FORMAT;
    if (st == NPYIO_E_FORMAT)
        fprintf(stderr, "cast_tool: the member's reader delivered other "
                        "bytes than npyio_npz_load_as\n");
    npyio_reader_close(r);
    free(buf);
    return st;
}

static int npz_cmd(const char *in, size_t index, const char *type,
                   uint32_t flags, const char *out)
{
    npyio_npz *npz = NULL;
    void *data = NULL;
    size_t len = 0;
    int ndim = 0, rc;
    int64_t shape[64];
    const char *threads = getenv("CAST_TOOL_THREADS");
    npyio_options *o = NULL;
    npyio_status st = npyio_options_new(&o);

    if (st == NPYIO_OK && threads != NULL)
        st = npyio_options_set_limit(o, NPYIO_LIMIT_THREADS, atoi(threads));
    if (st == NPYIO_OK)
        st = npyio_npz_open_path(in, o, &npz);
    npyio_options_free(o);
    if (st == NPYIO_OK)
        st = npyio_npz_load_as(npz, index, type, flags, &data, &len, &ndim,
                               shape, 64);
    if (st == NPYIO_OK)
        st = member_chunks(npz, index, type, flags, data, len);
    npyio_npz_close(npz);
    if (st != NPYIO_OK) {
        npyio_free(data);
        return fail(st, in);
    }
    rc = put(out, data, len);
    npyio_free(data);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 6 && strcmp(argv[1], "load-as") == 0)
        return load_as(argv[2], type_arg(argv[3]),
                       (uint32_t)strtoul(argv[4], NULL, 10), argv[5]);
    if (argc == 6 && strcmp(argv[1], "modes") == 0)
        return modes_cmd(argv[2], type_arg(argv[3]),
                         (uint32_t)strtoul(argv[4], NULL, 10), argv[5]);
    if (argc == 5 && strcmp(argv[1], "pipe") == 0)
        return pipe_cmd(type_arg(argv[2]),
                        (uint32_t)strtoul(argv[3], NULL, 10), argv[4]);
    if (argc == 7 && strcmp(argv[1], "npz") == 0)
        return npz_cmd(argv[2], (size_t)strtoull(argv[3], NULL, 10),
                       type_arg(argv[4]),
                       (uint32_t)strtoul(argv[5], NULL, 10), argv[6]);
    fprintf(stderr, "usage: cast_tool load-as|modes|pipe|npz ...\n");
    return 2;
}
