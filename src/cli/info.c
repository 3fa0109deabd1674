/*
 * info.c - `npyio info [--json | --short] FILE...`: the header facts of
 * .npy files and of the .npy members of archives alike, as JSON (the
 * contract scripts read), text for people, or one line each (--short, as
 * unzip -l); an archive lists every member. Built on the public API
 * only.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "text.h"

/* ---- header facts ------------------------------------------------------- */

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

/* A JSON string of s. Bytes that are not UTF-8 (a file name may hold
 * any) become lone surrogates \udc80 .. \udcff, as Python's
 * os.fsdecode() takes them: json.loads() then os.fsencode() gives the
 * bytes back, and the line stays valid UTF-8. What str.isprintable()
 * rejects is written as \u escapes too, so that no control or invisible
 * character reaches a terminal the line is shown on. */
void cli_json_string(FILE *out, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s), i = 0;

    fputc('"', out);
    while (i < n) {
        uint32_t c;
        size_t len = text_utf8_next(u + i, n - i, &c);

        if (len == 0)
            fprintf(out, "\\udc%02x", u[i++]);
        else if (c == '"' || c == '\\')
            fprintf(out, "\\%c", (int)c);
        else if (c >= 0x10000 && !text_printable(c))
            fprintf(out, "\\u%04x\\u%04x",
                    0xD800u + ((unsigned)(c - 0x10000) >> 10),
                    0xDC00u + ((unsigned)c & 0x3FFu)); /* a UTF-16 pair */
        else if (!text_printable(c))
            fprintf(out, "\\u%04x", (unsigned)c);
        else
            fwrite(u + i, 1, len, out); /* UTF-8 passes through */
        i += len;
    }
    fputc('"', out);
}

static void put_shape(FILE *out, const npyio_header *h, int json)
{
    int i, n = npyio_header_ndim(h);

    fputc(json ? '[' : '(', out);
    for (i = 0; i < n; i++)
        fprintf(out, "%s%" PRId64, i ? ", " : "", npyio_header_shape(h)[i]);
    if (!json && n == 1)
        fputc(',', out);
    fputc(json ? ']' : ')', out);
}

void cli_put_header_json(FILE *out, const npyio_header *h)
{
    const npyio_dtype *dt = npyio_header_dtype(h);
    char *descr = descr_text(dt);

    fprintf(out, ", \"version\": \"%d.0\", \"header_len\": %" PRId64
                 ", \"data_offset\": %" PRId64 ", \"descr\": ",
            npyio_header_version(h), npyio_header_length(h),
            npyio_header_data_offset(h));
    cli_json_string(out, descr ? descr : "");
    fputs(", \"shape\": ", out);
    put_shape(out, h, 1);
    fprintf(out, ", \"fortran_order\": %s, \"itemsize\": %zu, \"count\": %"
                 PRId64 ", \"nbytes\": %" PRId64,
            npyio_header_is_fortran_order(h) ? "true" : "false",
            npyio_dtype_itemsize(dt), npyio_header_count(h),
            npyio_header_nbytes(h));
    free(descr);
}

void cli_put_header_text(FILE *out, const npyio_header *h, int indent)
{
    const npyio_dtype *dt = npyio_header_dtype(h);
    char *descr = descr_text(dt);

    fprintf(out, "%*sformat version  %d.0\n%*sheader length   %" PRId64 "\n"
                 "%*sdata offset     %" PRId64 "\n%*sdescr           %s\n"
                 "%*sshape           ",
            indent, "", npyio_header_version(h), indent, "",
            npyio_header_length(h), indent, "", npyio_header_data_offset(h),
            indent, "", descr ? descr : "?", indent, "");
    put_shape(out, h, 0);
    fprintf(out, "\n%*sfortran order   %s\n%*sitemsize        %zu\n"
                 "%*selements        %" PRId64 "\n%*sdata bytes      %" PRId64
                 "\n",
            indent, "", npyio_header_is_fortran_order(h) ? "True" : "False",
            indent, "", npyio_dtype_itemsize(dt), indent, "",
            npyio_header_count(h), indent, "", npyio_header_nbytes(h));
    free(descr);
}

/* ---- an .npy file ------------------------------------------------------- */

static void print_info(const char *name, const npyio_header *h, int json)
{
    if (json) {
        fputs("{\"path\": ", stdout);
        cli_json_string(stdout, name);
        cli_put_header_json(stdout, h);
        fputs("}\n", stdout);
    } else {
        cli_put_name(stdout, name);
        fputs(":\n", stdout);
        cli_put_header_text(stdout, h, 2);
    }
}

/* --short: dtype, shape and order of a header, tab-separated (with the
 * tab before them). */
static void short_header(FILE *out, const npyio_header *h)
{
    char *descr = descr_text(npyio_header_dtype(h));

    fprintf(out, "\t%s\t", descr ? descr : "?");
    put_shape(out, h, 0);
    fprintf(out, "\t%c", npyio_header_is_fortran_order(h) ? 'F' : 'C');
    free(descr);
}

/* --short: the column names (as `info --help` lists them), after an
 * archive's name line and before a run of .npy files' lines. */
static const char short_columns[] =
    "name\tdtype\tshape\torder\tcompression\tsize\tcompressed_size\n";
/* The last line written is an .npy file's, under the column names. */
static int npy_run;

/* Text: the facts of the header read, then why the file fails (its data
 * is shorter than the header says); --json and --short give no line. */
static void info_cut(const cli_args *a, const char *name,
                     const npyio_header *h, const char *why)
{
    (void)a;
    print_info(name, h, 0);
    fflush(stdout);
    cli_fail_with(name, why);
}

static int info_one(const cli_args *a, cli_input *in)
{
    const npyio_header *h = npyio_reader_header(in->reader);
    int text = !a->json && !a->short_list;
    int64_t size;

    /* A short data section is an error for info too: on a seekable file
     * the reader checked the length (info_cut); a pipe is read through,
     * after the text's facts, before a line of --json or --short. */
    if (text)
        print_info(in->name, h, 0);
    if (strcmp(in->name, "-") == 0) {
        if (text && fflush(stdout) != 0)
            return cli_error(NULL, "writing: %s", strerror(errno));
        if (cli_read_through(in, 0, NULL) != 0)
            return EXIT_INVALID;
    }
    if (text)
        return 0;
    if (!a->short_list) {
        print_info(in->name, h, a->json);
        return 0;
    }
    size = npyio_header_data_offset(h) + npyio_header_nbytes(h);
    if (!a->no_header && !npy_run)
        fputs(short_columns, stdout);
    npy_run = 1;
    cli_put_name(stdout, in->name);
    short_header(stdout, h);
    printf("\tnone\t%" PRId64 "\t%" PRId64 "\n", size, size);
    return 0;
}

/* ---- an archive --------------------------------------------------------- */

/* What info says of one member. */
typedef struct listing {
    int64_t array;  /* 1: an .npy file; 0: not one; -1: npyio cannot tell */
    int failed;     /* why is an error: the member is bad (exit 1) */
    char why[1024]; /* the error, or why npyio cannot tell; "" if neither */
} listing;

static void listing_fail(listing *l, const char *why)
{
    l->failed = 1;
    snprintf(l->why, sizeof l->why, "%s", why);
}

/* An .npy member: its reader opened (in->reader) and its length checked,
 * or the error. */
static void list_array(cli_input *in, size_t i, listing *l)
{
    npyio_reader_close(in->reader);
    in->reader = NULL;
    in->member = i;
    if (npyio_reader_open_member(in->npz, i, &in->reader) != NPYIO_OK)
        listing_fail(l, cli_library_message());
    else if (cli_member_too_short(in, i, l->why, sizeof l->why))
        l->failed = 1;
}

/* A member the library found no .npy file in (from its first bytes):
 * so it is, unless the library declines to read it (stored with sizes
 * that differ, over a limit: npyio cannot tell, and says why) or it is
 * damaged. Its bytes are checked whole (CRC-32, deflate stream), as
 * np.load reads such a member whole: a flipped bit can garble an .npy
 * file's magic, and then npyio cannot tell either, and says so. */
static void list_other(cli_input *in, size_t i, listing *l)
{
    npyio_stream *s = NULL;

    if (npyio_stream_open_member(in->npz, i, &s) != NPYIO_OK) {
        l->array = -1;
        snprintf(l->why, sizeof l->why, "%s", cli_library_message());
        return;
    }
    npyio_stream_close(s);
    if (npyio_npz_verify(in->npz, i) != NPYIO_OK) {
        l->array = -1;
        listing_fail(l, cli_library_message()); /* "... is damaged (...)" */
    }
}

static void list_member(cli_input *in, size_t i, listing *l)
{
    l->array = cli_member_stat(in, i, NPYIO_NPZ_STAT_IS_ARRAY);
    l->failed = 0;
    l->why[0] = '\0';
    if (cli_member_stat(in, i, NPYIO_NPZ_STAT_READABLE) != 1) {
        char buf[96];

        l->array = -1;
        snprintf(l->why, sizeof l->why, "%s", cli_unreadable_reason(in, i, buf));
    } else if (l->array == 1) {
        list_array(in, i, l);
    } else {
        list_other(in, i, l);
    }
}

static void member_json(FILE *out, cli_input *in, size_t i, const listing *l)
{
    char buf[32];

    fputs("{\"name\": ", out);
    cli_json_string(out, npyio_npz_key(in->npz, i));
    fputs(", \"file\": ", out);
    cli_json_string(out, npyio_npz_name(in->npz, i));
    fputs(", \"compression\": ", out);
    cli_json_string(out, cli_method_name(cli_member_stat(in, i, NPYIO_NPZ_STAT_METHOD), buf));
    if (l->array != 1 || l->failed) {
        fprintf(out, ", \"array\": %s",
                l->array == 1 ? "true" : l->array == 0 ? "false" : "null");
        if (l->why[0] != '\0') {
            fputs(l->failed ? ", \"error\": " : ", \"reason\": ", out);
            cli_json_string(out, l->why);
        }
        fputc('}', out);
        return;
    }
    cli_put_header_json(out, npyio_reader_header(in->reader));
    fprintf(out, ", \"member_offset\": %" PRId64 ", \"compressed_size\": %"
                 PRId64 ", \"crc32\": %" PRId64 ", \"array\": true, "
                 "\"aligned\": %s}",
            cli_member_stat(in, i, NPYIO_NPZ_STAT_DATA_OFFSET),
            cli_member_stat(in, i, NPYIO_NPZ_STAT_COMPRESSED_SIZE),
            cli_member_stat(in, i, NPYIO_NPZ_STAT_CRC32),
            cli_member_stat(in, i, NPYIO_NPZ_STAT_ALIGNED) == 1 ? "true" : "false");
}

/* A message in text: escaped as messages are (its backslashes may be
 * escapes already, and stay single). */
static void put_message(FILE *out, const char *message)
{
    sbuf b = {0};

    text_escape(&b, message, strlen(message), 0);
    fputs(b.nomem ? "(a message too long to show)" : b.p != NULL ? b.p : "",
          out);
    free(b.p);
}

static void member_text(FILE *out, cli_input *in, size_t i, const listing *l)
{
    char buf[96];

    fprintf(out, "  member %zu: ", i);
    cli_put_name(out, npyio_npz_name(in->npz, i));
    fputs("\n    key             ", out);
    cli_put_name(out, npyio_npz_key(in->npz, i));
    fprintf(out, "\n    compression     %s\n    member offset   %" PRId64
                 "\n    size            %" PRId64 "\n    compressed size %"
                 PRId64 "\n    crc32           %08" PRIx64 "\n",
            cli_method_name(cli_member_stat(in, i, NPYIO_NPZ_STAT_METHOD), buf),
            cli_member_stat(in, i, NPYIO_NPZ_STAT_DATA_OFFSET),
            cli_member_stat(in, i, NPYIO_NPZ_STAT_SIZE),
            cli_member_stat(in, i, NPYIO_NPZ_STAT_COMPRESSED_SIZE),
            cli_member_stat(in, i, NPYIO_NPZ_STAT_CRC32));
    if (l->failed) {
        fprintf(out, "    %s\n    error           ",
                l->array == 1 ? "an .npy file" : "unknown content");
        put_message(out, l->why);
        fputc('\n', out);
    } else if (l->array == 1) {
        fprintf(out, "    aligned         %s\n",
                cli_member_stat(in, i, NPYIO_NPZ_STAT_ALIGNED) == 1 ? "True" : "False");
        cli_put_header_text(out, npyio_reader_header(in->reader), 4);
    } else if (l->array == 0) {
        fputs("    not an .npy file\n", out);
    } else {
        fputs("    unknown content: ", out);
        put_message(out, l->why);
        fputc('\n', out);
    }
}

/* --short: one line of a member. */
static void member_short(FILE *out, cli_input *in, size_t i,
                         const listing *l)
{
    char buf[96];

    cli_put_name(out, npyio_npz_key(in->npz, i));
    if (l->array == 1 && !l->failed)
        short_header(out, npyio_reader_header(in->reader));
    else
        fputs(l->array == 0 ? "\t-\t-\t-" : "\t?\t?\t?", out);
    fprintf(out, "\t%s\t%" PRId64 "\t%" PRId64 "\n",
            cli_method_name(cli_member_stat(in, i, NPYIO_NPZ_STAT_METHOD),
                            buf),
            cli_member_stat(in, i, NPYIO_NPZ_STAT_SIZE),
            cli_member_stat(in, i, NPYIO_NPZ_STAT_COMPRESSED_SIZE));
}

/* Every member is listed, as np.load lists them all: one that cannot be
 * read carries its error in its entry (and on standard error) and makes
 * the exit status 1. Everything goes to a buffer first, so that a failed
 * write is seen. */
static int archive_info(const cli_args *a, cli_input *in)
{
    size_t i, n = npyio_npz_count(in->npz), len = 0;
    char *text = NULL;
    FILE *out = cli_os_memstream(&text, &len);
    listing l;
    int rc = 0;

    if (out == NULL)
        return cli_error(in->name, "%s", strerror(errno));
    if (a->json) {
        fputs("{\"path\": ", out);
        cli_json_string(out, in->name);
        fputs(", \"members\": [", out);
    } else if (a->short_list) {
        cli_put_name(out, in->name);
        fprintf(out, ":\n%s", a->no_header ? "" : short_columns);
        npy_run = 0;
    } else {
        cli_put_name(out, in->name);
        fprintf(out, ": an .npz archive of %zu member%s\n", n,
                n == 1 ? "" : "s");
    }
    for (i = 0; i < n; i++) {
        list_member(in, i, &l);
        if (l.failed)
            rc = cli_error(in->name, "%s", l.why);
        if (a->json) {
            fputs(i ? ", " : "", out);
            member_json(out, in, i, &l);
        } else if (a->short_list) {
            member_short(out, in, i, &l);
        } else {
            member_text(out, in, i, &l);
        }
    }
    if (a->json)
        fputs("]}\n", out);
    if (cli_os_memstream_close(out, &text, &len) != 0)
        rc = cli_error(in->name, "out of memory");
    else if (fwrite(text, 1, len, stdout) != len)
        rc = cli_error(NULL, "writing: %s", strerror(errno));
    free(text);
    return rc;
}

int cli_info(const cli_args *a)
{
    if (a->json && a->short_list) {
        fputs("npyio: info: --json and --short exclude each other\n",
              stderr);
        return EXIT_USAGE;
    }
    if (a->no_header && !a->short_list) {
        fputs("npyio: info: --no-header goes with --short\n", stderr);
        return EXIT_USAGE;
    }
    npy_run = 0;
    return cli_each_input_cut(a, info_one, archive_info,
                              a->json || a->short_list ? NULL : info_cut);
}
