/*
 * info.c - the header facts `npyio info` prints, for .npy files and for
 * the .npy members of archives alike: JSON (the contract scripts read)
 * or text for people. Built on the public API only.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "text.h"

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
            npyio_header_fortran_order(h) ? "true" : "false",
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
            indent, "", npyio_header_fortran_order(h) ? "True" : "False",
            indent, "", npyio_dtype_itemsize(dt), indent, "",
            npyio_header_count(h), indent, "", npyio_header_nbytes(h));
    free(descr);
}
