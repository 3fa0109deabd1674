/*
 * convert.c - `npyio convert IN OUT [--order C|F] [--byteorder ORDER]
 * [--dtype TYPE [--casting RULE]] [--no-sync]`:
 * rewrite an .npy file as np.save would write the converted array
 * (np.load(IN).astype(TYPE, casting=RULE), then the order and byte order
 * asked for).
 *
 * With --dtype the reader converts (npyio_reader_set_type) to TYPE in
 * native byte order, chunk by chunk, and the chunks are swapped into
 * OUT's byte order as without it.
 *
 * The data streams through a bounded buffer: read in the order OUT needs
 * and in native byte order, then swapped into OUT's byte order
 * (npyio_dtype_swap is its own inverse) and written. Three reading plans:
 *
 *   OUT in C order             read IN with NPYIO_READ_C_ORDER;
 *   OUT and IN in Fortran      read IN as stored;
 *   OUT Fortran, IN C          read IN's data through a header of our own
 *                              that calls it the Fortran-order array of the
 *                              reversed shape: its C order is the original
 *                              array's Fortran order.
 *
 * Reordering reads bands of rows from every column, so it seeks; a
 * pipe's data is first copied to a temporary file
 * (cli_input_make_seekable).
 *
 * With --threads N above 1, when IN is a file (not a pipe) whose stored
 * order is OUT's, its data is cut into parts of about 4 MiB, read,
 * converted and swapped by N threads, each with a reader of its own, into
 * 2N reusable buffers, and written in order while the next parts are
 * made (pipeline.h): memory stays bounded, about 8N MiB. Reordering runs
 * on one thread as without --threads (the library's reordering reads
 * whole bands of rows: parts of them would each read every column).
 *
 * OUT goes through the library's atomic writer: an existing OUT is
 * replaced only when everything succeeded.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "parts.h"
#include "pipeline.h"
#include "text.h"


typedef struct source {
    npyio_reader *reader; /* IN's reader, or the reversed view's */
    uint32_t flags;
    /* The reversed view, when used. */
    cli_splice *splice;
    npyio_stream *stream;
    npyio_header *header;
    npyio_options *options; /* the view's reader's */
} source;

/* IN's data as the Fortran-order array of the reversed shape. */
static npyio_status open_reversed_view(const cli_input *in, source *src)
{
    const npyio_header *h = npyio_reader_header(in->reader);
    int i, n = npyio_header_ndim(h);
    int64_t shape[64];
    npyio_status st;

    if (n > 64)
        return NPYIO_E_UNSUPPORTED; /* beyond NumPy's limit: never parsed */
    for (i = 0; i < n; i++)
        shape[i] = npyio_header_shape(h)[n - 1 - i];
    st = npyio_header_new(npyio_header_dtype(h), n, shape, 1, &src->header);
    if (st == NPYIO_OK)
        st = cli_view_open(in, src->header, 0, &src->options, &src->splice,
                           &src->stream, &src->reader);
    return st;
}

static npyio_status open_source(const cli_input *in, char order, source *src)
{
    const npyio_header *h = npyio_reader_header(in->reader);

    memset(src, 0, sizeof *src);
    src->flags = NPYIO_READ_NATIVE;
    if (order == 'C') {
        src->reader = in->reader;
        src->flags |= NPYIO_READ_C_ORDER;
        return NPYIO_OK;
    }
    if (npyio_header_is_fortran_order(h)) {
        src->reader = in->reader;
        return NPYIO_OK;
    }
    src->flags |= NPYIO_READ_C_ORDER;
    return open_reversed_view(in, src);
}

/* --dtype: the readers deliver OUT's type in native byte order, named
 * in type (cap bytes). */
static npyio_status native_type(const npyio_header *out_header, char *type,
                                size_t cap)
{
    npyio_dtype *native = NULL;
    size_t len = 0;
    npyio_status st = npyio_dtype_new_native(npyio_header_dtype(out_header),
                                             &native);

    if (st == NPYIO_OK)
        st = npyio_dtype_str(native, type, cap, &len);
    npyio_dtype_unref(native);
    return st;
}

static npyio_status set_type(const source *src, const cli_args *a,
                             const npyio_header *out_header)
{
    char type[64];
    npyio_status st;

    if (a->dtype == NULL)
        return NPYIO_OK;
    st = native_type(out_header, type, sizeof type);
    if (st == NPYIO_OK)
        st = npyio_reader_set_type(src->reader, type, a->cast_flags);
    return st;
}

/* The library's message in the tool's words: the flags a refused cast
 * names are --casting's values here. */
static int fail_in_tool_words(const char *name, const char *message)
{
    static const char *const words[][2] = {
        {"NPYIO_READ_CAST_SAME_KIND", "--casting same_kind"},
        {"NPYIO_READ_CAST_UNSAFE", "--casting unsafe"}};
    const char *m = message;
    sbuf b = {0};
    size_t i;
    int rc;

    while (*m != '\0') {
        for (i = 0; i < 2; i++)
            if (strncmp(m, words[i][0], strlen(words[i][0])) == 0)
                break;
        if (i < 2) {
            sb_str(&b, words[i][1]);
            m += strlen(words[i][0]);
        } else {
            sb_chr(&b, *m++);
        }
    }
    rc = cli_fail_with(name, b.nomem || b.p == NULL ? message : b.p);
    free(b.p);
    return rc;
}

static void close_source(const cli_input *in, source *src)
{
    if (src->reader != in->reader)
        npyio_reader_close(src->reader);
    npyio_stream_close(src->stream);
    cli_splice_free(src->splice);
    npyio_header_free(src->header);
    npyio_options_free(src->options);
}

/* OUT's header: IN's dtype (or --dtype's) in the requested byte order,
 * IN's shape. */
static npyio_status output_header(const npyio_header *h, const cli_args *a,
                                  npyio_header **out)
{
    npyio_dtype *dt = NULL, *type = NULL;
    npyio_status st = NPYIO_OK;

    if (a->dtype != NULL)
        st = npyio_dtype_parse(a->dtype, strlen(a->dtype), NULL, &type);
    if (st == NPYIO_OK)
        st = npyio_dtype_new_byteorder(type != NULL ? type
                                                     : npyio_header_dtype(h),
                                        a->byteorder, &dt);
    npyio_dtype_unref(type);
    if (st == NPYIO_OK)
        st = npyio_header_new(dt, npyio_header_ndim(h), npyio_header_shape(h),
                              a->order == 'F', out);
    npyio_dtype_unref(dt);
    return st;
}

/* Native values into OUT's byte order, then out. */
static npyio_status put(npyio_writer *w, const npyio_dtype *dt, void *data,
                        size_t len)
{
    npyio_status st = npyio_dtype_swap(dt, data, len);

    return st == NPYIO_OK ? npyio_writer_write(w, data, len) : st;
}

/* --threads N above 1: IN's data in parts, each read, converted and
 * swapped by one of N threads (a reader each), written in order. */
typedef struct parts_job {
    cli_parts parts;
    const npyio_dtype *out; /* OUT's, to swap into */
    size_t out_unit;
    npyio_writer *w;
} parts_job;

static npyio_status produce_part(void *ctx, unsigned worker, uint64_t first,
                                 uint64_t count, unsigned char *buf)
{
    parts_job *j = ctx;
    size_t len = (size_t)count * j->out_unit;
    npyio_status st = cli_parts_read(&j->parts, worker, first, count, buf,
                                     len);

    return st == NPYIO_OK ? npyio_dtype_swap(j->out, buf, len) : st;
}

static npyio_status write_part(void *ctx, const unsigned char *buf,
                               size_t len)
{
    parts_job *j = ctx;

    return npyio_writer_write(j->w, buf, len);
}

/* The failure's message in message (cap bytes); *writing as copy_data. */
static npyio_status copy_parts(cli_input *in, const cli_args *a,
                               npyio_writer *w,
                               const npyio_header *out_header, int *writing,
                               char *message, size_t cap)
{
    parts_job j = {.out = npyio_header_dtype(out_header), .w = w};
    cli_pipeline p = {produce_part, write_part, &j, 0, 0,
                      (unsigned)a->threads, NULL};
    cli_progress bar;
    char type[64];
    npyio_status st = cli_parts_open(in, (unsigned)a->threads,
                                     NPYIO_READ_NATIVE, &j.parts);

    j.out_unit = npyio_dtype_itemsize(j.out);
    if (st == NPYIO_OK && a->dtype != NULL &&
        (st = native_type(out_header, type, sizeof type)) == NPYIO_OK)
        st = cli_parts_set_type(&j.parts, type, a->cast_flags);
    if (st != NPYIO_OK) {
        snprintf(message, cap, "%s", npyio_last_error());
    } else {
        p.units = j.parts.units;
        p.out_unit = j.out_unit;
        p.bar = &bar;
        cli_progress_start(&bar, "converting",
                           (uint64_t)npyio_header_nbytes(out_header));
        *writing = cli_pipeline_run(&p, &st, message, cap) == CLI_PIPE_WRITE;
        cli_progress_end(&bar);
    }
    cli_parts_close(&j.parts);
    return st;
}

/* Copy all of the data; on failure, *writing says whether OUT failed.
 * The chunks are whole elements of the type the reader hands out, OUT's
 * (--dtype's), not IN's: a 0-d int32 read as float64 needs 8 bytes. */
static npyio_status copy_data(const source *src, npyio_writer *w,
                              const npyio_header *out_header, int *writing)
{
    const npyio_dtype *dt = npyio_header_dtype(out_header);
    const npyio_header *in = npyio_reader_header(src->reader);
    int reorder = (src->flags & NPYIO_READ_C_ORDER) &&
                  npyio_header_is_fortran_order(in) && cli_layouts_differ(in);
    size_t got = 0,
           cap = cli_chunk_capacity(out_header, reorder ? CLI_REORDER_CHUNK
                                                        : CLI_CHUNK);
    unsigned char *buf = cli_buffer(cap);
    uint64_t done = 0;
    cli_progress bar;
    npyio_status st;

    if (buf == NULL)
        return NPYIO_E_NOMEM;
    cli_progress_start(&bar, "converting",
                       (uint64_t)npyio_header_nbytes(out_header));
    st = npyio_reader_read_chunk(src->reader, buf, cap, src->flags, &got);
    for (; st == NPYIO_OK;
         st = npyio_reader_read_chunk(src->reader, buf, cap, src->flags,
                                      &got)) {
        st = put(w, dt, buf, got);
        if (st != NPYIO_OK) {
            *writing = 1;
            break;
        }
        done += got;
        cli_progress_update(&bar, done);
    }
    cli_progress_end(&bar);
    free(buf);
    return st == NPYIO_END ? NPYIO_OK : st;
}

npyio_status cli_open_output(const char *name, const npyio_header *h,
                             int no_sync, const npyio_options *options,
                             npyio_stream **stream, npyio_writer **w)
{
    npyio_status st;

    *stream = NULL;
    if (strcmp(name, "-") != 0)
        return npyio_writer_create_path(name, h,
                                      no_sync ? NPYIO_WRITE_NO_SYNC : 0,
                                      options, w);
    st = npyio_stream_open_file(stdout, options, stream);
    if (st == NPYIO_OK)
        st = npyio_writer_create_stream(*stream, h, 0, options, w);
    return st;
}

/* IN must be one .npy array without Python objects; a pipe whose data
 * is to be reordered is first copied to a temporary file (reordering
 * seeks; memory stays bounded). 0, or EXIT_INVALID after a message. */
static int prepare_input(const char *in_name, const cli_args *a,
                         cli_input *in)
{
    if (in->npz != NULL)
        return cli_error(in_name, "an .npz archive: convert takes an .npy "
                                  "file (npyio unpack takes the arrays out "
                                  "of an archive)");
    if (npyio_dtype_has_objects(
            npyio_header_dtype(npyio_reader_header(in->reader))))
        return cli_error(in_name, "the array holds Python objects (a "
                                  "pickle), which npyio does not unpickle");
    if (cli_layouts_differ(npyio_reader_header(in->reader)) &&
        (a->order == 'F') != (npyio_header_is_fortran_order(
                                  npyio_reader_header(in->reader)) != 0) &&
        cli_input_make_seekable(in) != 0)
        return EXIT_INVALID;
    return 0;
}

int cli_convert(const cli_args *a)
{
    const char *in_name = a->files[0], *out_name = a->files[1];
    npyio_header *out_header = NULL;
    npyio_stream *out_stream = NULL;
    npyio_writer *w = NULL;
    const char *failed = in_name;
    char message[1024] = "";
    source src;
    cli_input in;
    npyio_status st;

    if (cli_open_input(in_name, a->options, &in) != 0)
        return EXIT_INVALID;
    if (prepare_input(in_name, a, &in) != 0) {
        cli_close_input(&in);
        return EXIT_INVALID;
    }
    memset(&src, 0, sizeof src);
    st = output_header(npyio_reader_header(in.reader), a, &out_header);
    if (st == NPYIO_OK)
        st = open_source(&in, a->order, &src);
    if (st == NPYIO_OK)
        st = set_type(&src, a, out_header);
    if (st == NPYIO_OK) {
        st = cli_open_output(out_name, out_header, a->no_sync, a->options,
                             &out_stream, &w);
        if (st != NPYIO_OK)
            failed = out_name;
    }
    if (st == NPYIO_OK) {
        int writing = 0;

        st = a->threads > 1 && cli_parts_fit(&in, a->order == 'F')
                 ? copy_parts(&in, a, w, out_header, &writing, message,
                              sizeof message)
                 : copy_data(&src, w, out_header, &writing);
        if (writing)
            failed = out_name;
    }
    if (st == NPYIO_OK) {
        failed = out_name;
        st = npyio_writer_close(w);
    } else {
        npyio_writer_abort(w); /* an existing OUT stays as it was */
    }
    if (st != NPYIO_OK)
        fail_in_tool_words(failed, message[0] != '\0' && failed == in_name
                                       ? message
                                       : npyio_last_error());
    npyio_stream_close(out_stream);
    close_source(&in, &src);
    npyio_header_free(out_header);
    cli_close_input(&in);
    if (out_stream != NULL && fflush(stdout) != 0 && st == NPYIO_OK)
        return EXIT_INVALID;
    return st == NPYIO_OK ? 0 : EXIT_INVALID;
}
