/*
 * parts.c - one reader per pipeline thread over an .npy file's data
 * (parts.h), and the views they read through.
 */
#define _POSIX_C_SOURCE 200809L
#include "parts.h"

#include <stdlib.h>
#include <string.h>

/* The bytes of h as np.save writes them (free them). */
static npyio_status emit(const npyio_header *h, char **bytes, size_t *len)
{
    npyio_status st = npyio_header_emit(h, 0, NULL, 0, len);

    *bytes = NULL;
    if (st != NPYIO_E_BUFFER_TOO_SMALL)
        return st == NPYIO_OK ? NPYIO_E_STATE : st;
    if ((*bytes = malloc(*len)) == NULL)
        return NPYIO_E_NOMEM;
    return npyio_header_emit(h, 0, *bytes, *len, len);
}

/* The user's limits for a header of len bytes the tool wrote, the thread
 * limit set to threads when above 0. */
static npyio_status view_options(const cli_input *in, size_t len,
                                 int64_t threads, npyio_options **options)
{
    if (*options != NULL)
        return NPYIO_OK;
    *options = cli_options_for_own_header(in->options, (int64_t)len);
    if (*options == NULL)
        return NPYIO_E_NOMEM;
    return threads > 0 ? npyio_options_set_limit(*options,
                                                 NPYIO_LIMIT_THREADS, threads)
                       : NPYIO_OK;
}

npyio_status cli_view_open(const cli_input *in, const npyio_header *view,
                           int64_t threads, npyio_options **options,
                           cli_splice **sp, npyio_stream **stream,
                           npyio_reader **reader)
{
    const npyio_header *h = npyio_reader_header(in->reader);
    char *bytes = NULL;
    size_t len = 0;
    npyio_status st = emit(view, &bytes, &len);

    if (st == NPYIO_OK)
        st = cli_splice_open(bytes, len, in->file,
                             in->start + npyio_header_data_offset(h),
                             in->options, sp, stream);
    free(bytes);
    /* IN's limits, but the view's header is np.save's form, which may be
     * longer than IN's (a compact header --max-header-size let through). */
    if (st == NPYIO_OK)
        st = view_options(in, len, threads, options);
    if (st == NPYIO_OK)
        st = npyio_reader_open_stream(*stream, *options, reader);
    return st;
}

int cli_parts_fit(const cli_input *in, int fortran)
{
    const npyio_header *h = npyio_reader_header(in->reader);

    return in->npz == NULL && in->file != NULL &&
           !npyio_dtype_has_objects(npyio_header_dtype(h)) &&
           cli_os_seekable(fileno(in->file)) &&
           (!cli_layouts_differ(h) ||
            (npyio_header_is_fortran_order(h) != 0) == (fortran != 0));
}

npyio_status cli_parts_open(cli_input *in, unsigned n, uint32_t flags,
                            cli_parts *parts)
{
    const npyio_header *h = npyio_reader_header(in->reader);
    npyio_header *view = NULL;
    int64_t count = npyio_header_count(h);
    npyio_status st;

    memset(parts, 0, sizeof *parts);
    parts->units = (uint64_t)count;
    parts->flags = flags;
    /* Each reader is read by one thread: it starts none of its own. */
    st = npyio_header_new(npyio_header_dtype(h), 1, &count, 0, &view);
    for (; st == NPYIO_OK && parts->n < n && parts->n < CLI_PIPE_MAX_THREADS;
         parts->n++)
        st = cli_view_open(in, view, 1, &parts->options,
                           &parts->splices[parts->n],
                           &parts->streams[parts->n],
                           &parts->readers[parts->n]);
    npyio_header_free(view);
    return st;
}

npyio_status cli_parts_set_type(cli_parts *parts, const char *type,
                                uint32_t flags)
{
    npyio_status st = NPYIO_OK;
    unsigned i;

    for (i = 0; st == NPYIO_OK && i < parts->n; i++)
        st = npyio_reader_set_type(parts->readers[i], type, flags);
    return st;
}

npyio_status cli_parts_read(cli_parts *parts, unsigned worker,
                            uint64_t first, uint64_t count, void *buf,
                            size_t cap)
{
    return npyio_reader_read_rows(parts->readers[worker], (int64_t)first,
                                  (int64_t)count, buf, cap, parts->flags);
}

void cli_parts_close(cli_parts *parts)
{
    unsigned i;

    for (i = 0; i < CLI_PIPE_MAX_THREADS; i++) { /* NULL-safe */
        npyio_reader_close(parts->readers[i]);
        npyio_stream_close(parts->streams[i]);
        cli_splice_free(parts->splices[i]);
    }
    npyio_options_free(parts->options);
    memset(parts, 0, sizeof *parts);
}
