/*
 * npyio.c - the `npyio` command: inspect and validate .npy files from a
 * terminal or a pipeline. Built only on the public API (include/npyio.h).
 *
 * This version has `info`, `dump` and `validate`; `print` and `convert`,
 * and .npz support, come later (see the issue tracker). Exit codes: 0
 * success, 1 invalid, unsupported or unreadable input, 2 usage errors.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npyio.h"

#define EXIT_INVALID 1
#define EXIT_USAGE 2
#define CHUNK ((size_t)1 << 20)

static const char usage_text[] =
    "usage: npyio [--version] [--help] COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  info [--json] FILE...   header facts of .npy files\n"
    "  dump FILE               the data on stdout, C order, native bytes\n"
    "  validate FILE...        exit 0 only if every file is entirely valid\n"
    "\n"
    "options of every command:\n"
    "  --max-header-size N     accept headers up to N bytes (default 1 MiB)\n"
    "FILE may be - for standard input.\n";

static int usage(const char *problem)
{
    if (problem != NULL)
        fprintf(stderr, "npyio: %s\n", problem);
    fputs(usage_text, stderr);
    return EXIT_USAGE;
}

/* ---- opening ------------------------------------------------------------------ */

typedef struct input {
    const char *name;
    FILE *file;          /* ours unless stdin */
    npyio_stream *stream;
    npyio_reader *reader;
} input;

static void close_input(input *in)
{
    npyio_reader_close(in->reader);
    npyio_stream_close(in->stream);
    if (in->file != NULL && in->file != stdin)
        fclose(in->file);
    memset(in, 0, sizeof *in);
}

/* .npz archives start like any ZIP file. */
static int looks_like_zip(FILE *f)
{
    unsigned char magic[4];
    size_t n = fread(magic, 1, sizeof magic, f);
    int zip = n == 4 && magic[0] == 'P' && magic[1] == 'K' &&
              ((magic[2] == 3 && magic[3] == 4) ||
               (magic[2] == 5 && magic[3] == 6));

    if (fseek(f, 0, SEEK_SET) != 0 && n > 0)
        return -1; /* cannot look ahead on a pipe: let the reader judge */
    return zip;
}

static int open_input(const char *name, const npyio_options *options,
                      input *in)
{
    npyio_status st;

    memset(in, 0, sizeof *in);
    in->name = name;
    in->file = strcmp(name, "-") == 0 ? stdin : fopen(name, "rb");
    if (in->file == NULL) {
        fprintf(stderr, "npyio: %s: %s\n", name, strerror(errno));
        return EXIT_INVALID;
    }
    if (in->file != stdin && looks_like_zip(in->file) == 1) {
        fprintf(stderr, "npyio: %s: an .npz archive; NPZ archives are not "
                        "supported by this version\n", name);
        close_input(in);
        return EXIT_INVALID;
    }
    st = npyio_stream_open_file(in->file, options, &in->stream);
    if (st == NPYIO_OK)
        st = npyio_reader_open_stream(in->stream, options, &in->reader);
    if (st != NPYIO_OK) {
        fprintf(stderr, "npyio: %s: %s\n", name, npyio_last_error());
        close_input(in);
        return EXIT_INVALID;
    }
    return 0;
}

/* Read all of the data in bounded chunks (for a pipe, this is how a short
 * data section is found); hand each chunk to `sink` if given. */
static int read_through(input *in, uint32_t flags, FILE *sink)
{
    const npyio_header *h = npyio_reader_header(in->reader);
    unsigned char *buf;
    size_t got = 0, cap = CHUNK;
    npyio_status st;
    int rc = 0;

    if (npyio_dtype_contains_objects(npyio_header_dtype(h))) {
        if (sink != NULL) {
            fprintf(stderr, "npyio: %s: the array holds Python objects (a "
                            "pickle), which npyio does not unpickle\n",
                    in->name);
            return EXIT_INVALID;
        }
        return 0; /* a pickle's length is not in the header */
    }
    /* Whole rows for Fortran data in C order: at least one row. */
    {
        int64_t rows = npyio_header_ndim(h) > 0 ? npyio_header_shape(h)[0]
                                                : 1;
        uint64_t row = rows > 0 ? (uint64_t)npyio_header_nbytes(h) /
                                      (uint64_t)rows
                                : 0;

        if (row > cap)
            cap = (size_t)row;
    }
    buf = malloc(cap);
    if (buf == NULL) {
        fprintf(stderr, "npyio: %s: out of memory\n", in->name);
        return EXIT_INVALID;
    }
    st = npyio_reader_read_chunk(in->reader, buf, cap, flags, &got);
    if (st == NPYIO_E_UNSUPPORTED && sink != NULL) {
        /* Fortran data in C order from a pipe: chunks would need seeks;
         * take it whole (memory in proportion to the array). */
        void *all = NULL;
        size_t len = 0;

        free(buf);
        if (npyio_reader_read_alloc(in->reader, flags, &all, &len) !=
            NPYIO_OK) {
            fprintf(stderr, "npyio: %s: %s\n", in->name, npyio_last_error());
            return EXIT_INVALID;
        }
        rc = fwrite(all, 1, len, sink) == len ? 0 : EXIT_INVALID;
        npyio_free(all);
        return rc;
    }
    for (; st == NPYIO_OK;
         st = npyio_reader_read_chunk(in->reader, buf, cap, flags, &got))
        if (sink != NULL && fwrite(buf, 1, got, sink) != got) {
            fprintf(stderr, "npyio: writing: %s\n", strerror(errno));
            rc = EXIT_INVALID;
            break;
        }
    if (rc == 0 && st != NPYIO_END) {
        fprintf(stderr, "npyio: %s: %s\n", in->name, npyio_last_error());
        rc = EXIT_INVALID;
    }
    free(buf);
    return rc;
}

/* ---- info ------------------------------------------------------------------------ */

/* NumPy's descr text: dtype.str for scalars, the list for records. */
static char *descr_text(const npyio_dtype *dt)
{
    size_t len = 0;
    char *text;

    if (npyio_dtype_kind(dt) != NPYIO_KIND_RECORD) {
        npyio_dtype_str(dt, NULL, 0, &len);
        text = malloc(len + 1);
        if (text != NULL)
            npyio_dtype_str(dt, text, len + 1, &len);
        return text;
    }
    if (npyio_dtype_descr(dt, NULL, 0, &len) != NPYIO_E_BUFFER_TOO_SMALL)
        return NULL;
    text = malloc(len + 1);
    if (text != NULL && npyio_dtype_descr(dt, text, len + 1, &len) != NPYIO_OK)
        text[0] = '\0';
    return text;
}

static void json_string(const char *s)
{
    putchar('"');
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;

        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c); /* UTF-8 passes through */
    }
    putchar('"');
}

static void print_shape(const npyio_header *h, int json)
{
    int i, n = npyio_header_ndim(h);

    putchar(json ? '[' : '(');
    for (i = 0; i < n; i++)
        printf("%s%" PRId64, i ? ", " : "", npyio_header_shape(h)[i]);
    if (!json && n == 1)
        putchar(',');
    putchar(json ? ']' : ')');
}

static void print_info(const char *name, const npyio_header *h, int json)
{
    const npyio_dtype *dt = npyio_header_dtype(h);
    char *descr = descr_text(dt);
    int64_t hlen = npyio_header_length(h);

    if (json) {
        printf("{\"version\": \"%d.0\", \"header_len\": %" PRId64
               ", \"data_offset\": %" PRId64 ", \"descr\": ",
               npyio_header_version(h), hlen, npyio_header_data_offset(h));
        json_string(descr ? descr : "");
        printf(", \"shape\": ");
        print_shape(h, 1);
        printf(", \"fortran_order\": %s, \"itemsize\": %zu, \"count\": %" PRId64
               ", \"nbytes\": %" PRId64 "}\n",
               npyio_header_fortran_order(h) ? "true" : "false",
               npyio_dtype_itemsize(dt), npyio_header_count(h),
               npyio_header_nbytes(h));
    } else {
        printf("%s:\n  format version  %d.0\n  header length   %" PRId64
               "\n  data offset     %" PRId64 "\n  descr           %s\n"
               "  shape           ",
               name, npyio_header_version(h), hlen,
               npyio_header_data_offset(h), descr ? descr : "?");
        print_shape(h, 0);
        printf("\n  fortran order   %s\n  itemsize        %zu\n"
               "  elements        %" PRId64 "\n  data bytes      %" PRId64
               "\n",
               npyio_header_fortran_order(h) ? "True" : "False",
               npyio_dtype_itemsize(dt), npyio_header_count(h),
               npyio_header_nbytes(h));
    }
    free(descr);
}

/* ---- commands --------------------------------------------------------------------- */

typedef struct args {
    int json;
    char **files;
    int nfiles;
    npyio_options *options;
} args;

static int parse_args(int argc, char **argv, int allow_json, args *a)
{
    int i;

    memset(a, 0, sizeof *a);
    a->files = calloc((size_t)argc + 1, sizeof *a->files);
    if (a->files == NULL || npyio_options_new(&a->options) != NPYIO_OK ||
        npyio_options_set_limit(a->options, NPYIO_LIMIT_HEADER_SIZE,
                                1 << 20) != NPYIO_OK)
        return usage("out of memory");
    for (i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0 && allow_json) {
            a->json = 1;
        } else if (strcmp(argv[i], "--max-header-size") == 0 && i + 1 < argc) {
            char *end;
            long long n = strtoll(argv[++i], &end, 10);

            if (*end != '\0' || n < 0 ||
                npyio_options_set_limit(a->options, NPYIO_LIMIT_HEADER_SIZE,
                                        n) != NPYIO_OK)
                return usage("--max-header-size takes a byte count");
        } else if (strcmp(argv[i], "--help") == 0) {
            fputs(usage_text, stdout);
            exit(0);
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "npyio: unknown option %s\n", argv[i]);
            return usage(NULL);
        } else {
            a->files[a->nfiles++] = argv[i];
        }
    }
    if (a->nfiles == 0)
        return usage("no FILE given");
    return 0;
}

static void free_args(args *a)
{
    npyio_options_free(a->options);
    free(a->files);
}

static int cmd_info(int argc, char **argv)
{
    args a;
    int i, rc = parse_args(argc, argv, 1, &a);

    for (i = 0; rc != EXIT_USAGE && i < a.nfiles; i++) {
        input in;

        if (open_input(a.files[i], a.options, &in) != 0) {
            rc = EXIT_INVALID;
            continue;
        }
        /* A short data section is an error for info too: on a pipe it is
         * only found by reading through. */
        if (strcmp(a.files[i], "-") == 0 && read_through(&in, 0, NULL)) {
            rc = EXIT_INVALID;
        } else {
            print_info(a.files[i], npyio_reader_header(in.reader), a.json);
        }
        close_input(&in);
    }
    free_args(&a);
    return rc;
}

static int cmd_validate(int argc, char **argv)
{
    args a;
    int i, rc = parse_args(argc, argv, 0, &a);

    for (i = 0; rc != EXIT_USAGE && i < a.nfiles; i++) {
        input in;

        if (open_input(a.files[i], a.options, &in) != 0 ||
            read_through(&in, 0, NULL) != 0)
            rc = EXIT_INVALID;
        else
            printf("%s: valid\n", a.files[i]);
        if (in.reader != NULL || in.stream != NULL)
            close_input(&in);
    }
    free_args(&a);
    return rc;
}

static int cmd_dump(int argc, char **argv)
{
    args a;
    input in;
    int rc = parse_args(argc, argv, 0, &a);

    if (rc == 0 && a.nfiles != 1)
        rc = usage("dump takes one FILE");
    if (rc == 0) {
        rc = open_input(a.files[0], a.options, &in);
        if (rc == 0) {
            rc = read_through(&in, NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER,
                              stdout);
            close_input(&in);
        }
    }
    if (fflush(stdout) != 0 && rc == 0)
        rc = EXIT_INVALID;
    free_args(&a);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage(NULL);
    if (strcmp(argv[1], "--version") == 0) {
        printf("npyio %s\n", npyio_version_string());
        return 0;
    }
    if (strcmp(argv[1], "--help") == 0) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (strcmp(argv[1], "info") == 0)
        return cmd_info(argc - 2, argv + 2);
    if (strcmp(argv[1], "validate") == 0)
        return cmd_validate(argc - 2, argv + 2);
    if (strcmp(argv[1], "dump") == 0)
        return cmd_dump(argc - 2, argv + 2);
    fprintf(stderr, "npyio: unknown command %s\n", argv[1]);
    return usage(NULL);
}
