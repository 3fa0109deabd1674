/*
 * tasks.c - the task calls in plain C: arrays described by a type string,
 * a number of dimensions and a shape, in this host's byte order and C
 * order, as a C program holds them. Each call is the handle calls it
 * stands for (open, write or read, close), so the files it writes and
 * the arrays it reads are theirs. Adding such an array to an archive
 * being written (npyio_npz_writer_add) is the archive writer's
 * (npz_write.c).
 *
 * Copyright (c) 2026 The libnpyio developers.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "error.h"
#include "header.h"
#include "npz_append.h"
#include "npz_write_core.h"
#include "reader.h"
#include "writer.h"

#include <string.h>

npyio_status npyio_save(const char *path, const char *type, int ndim,
                        const int64_t *shape, const void *data, size_t len,
                        uint32_t flags, const npyio_options *options)
{
    npyio_header *h = NULL;
    npyio_status st =
        npyio__plain_header(type, ndim, shape, options, "npyio_save", &h);

    if (st == NPYIO_OK)
        st = npyio__save(path, h, data, len, flags, options, "npyio_save");
    npyio_header_free(h);
    return npyio__as_called(st, "npyio_save");
}

static npyio_status append_body(const char *path, const npyio_header *rows,
                                const void *data, size_t len, uint32_t flags,
                                const npyio_options *options)
{
    npyio_writer *w = NULL;
    npyio_status st;

    if ((uint64_t)len != (uint64_t)npyio_header_nbytes(rows))
        return npyio__fail(NPYIO_E_INVALID_ARG, "npyio_append: the buffer "
                           "is %zu bytes, the rows are %lld", len,
                           (long long)npyio_header_nbytes(rows));
    if (data == NULL && len > 0)
        return npyio__fail(NPYIO_E_INVALID_ARG, "npyio_append: data is "
                           "NULL");
    st = npyio__writer_open_append_path(path, rows, flags, options,
                                        "npyio_append", &w);
    return st == NPYIO_OK ? npyio__writer_write_whole(w, data, len,
                                                      "npyio_append")
                          : st;
}

npyio_status npyio_append(const char *path, const char *type, int ndim,
                          const int64_t *shape, const void *data, size_t len,
                          uint32_t flags, const npyio_options *options)
{
    npyio_header *rows = NULL;
    npyio_status st =
        npyio__plain_header(type, ndim, shape, options, "npyio_append", &rows);

    if (st == NPYIO_OK && ndim < 1)
        st = npyio__fail(NPYIO_E_INVALID_ARG, "npyio_append: rows need at "
                         "least one dimension (shape[0] is their number)");
    if (st == NPYIO_OK)
        st = append_body(path, rows, data, len, flags, options);
    npyio_header_free(rows);
    return npyio__as_called(st, "npyio_append");
}

/* ---- loading ---------------------------------------------------------------- */

static npyio_status load_body(const char *path, uint32_t flags,
                              const npyio_options *options, const char *where,
                              npyio_header **header, void **data)
{
    npyio_reader *r = NULL;
    npyio_status st;

    if (header == NULL || data == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: %s is NULL", where,
                           header == NULL ? "header" : "data");
    *header = NULL;
    *data = NULL;
    /* Refused flags open nothing. */
    st = npyio__check_flags(flags, NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER,
                            where);
    if (st == NPYIO_OK)
        st = npyio__reader_open_path(path, options, where, &r);
    if (st != NPYIO_OK)
        return st;
    return npyio__reader_load(r, flags, path, header, data);
}

npyio_status npyio_load_with_header(const char *path, uint32_t flags,
                                    const npyio_options *options,
                                    npyio_header **header, void **data)
{
    if (header != NULL)
        *header = NULL; /* outputs are cleared whatever is refused */
    if (data != NULL)
        *data = NULL;
    return npyio__as_called(load_body(path, flags, options,
                                      "npyio_load_with_header", header, data),
                            "npyio_load_with_header");
}

static npyio_status load_array_body(const char *path,
                                    const npyio_options *options, void **data,
                                    size_t *len, char *type, size_t type_cap,
                                    int *ndim, int64_t *shape, size_t shape_cap)
{
    static const char where[] = "npyio_load";
    npyio_header *h = NULL;
    npyio_status st;

    if (data == NULL || len == NULL || ndim == NULL ||
        (type == NULL && type_cap > 0) || (shape == NULL && shape_cap > 0))
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: %s is NULL", where,
                           data == NULL  ? "data"
                           : len == NULL ? "len"
                           : ndim == NULL ? "ndim"
                           : type == NULL ? "type"
                                          : "shape");
    *data = NULL;
    *len = 0;
    *ndim = 0;
    st = load_body(path, NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER, options,
                   where, &h, data);
    if (st == NPYIO_OK)
        st = npyio__type_text(h->dtype, type, type_cap, where);
    if (st == NPYIO_OK && (size_t)h->ndim > shape_cap)
        st = npyio__fail(NPYIO_E_BUFFER_TOO_SMALL, "%s: the array has %d "
                         "dimensions, shape_cap is %zu", where, h->ndim,
                         shape_cap);
    if (st == NPYIO_OK) {
        if (h->ndim > 0)
            memcpy(shape, h->shape, (size_t)h->ndim * sizeof *shape);
        *ndim = h->ndim;
        *len = (size_t)h->nbytes;
    } else {
        npyio__free(*data);
        *data = NULL;
    }
    npyio_header_free(h);
    return st;
}

npyio_status npyio_load(const char *path, const npyio_options *options,
                        void **data, size_t *len, char *type, size_t type_cap,
                        int *ndim, int64_t *shape, size_t shape_cap)
{
    if (data != NULL)
        *data = NULL; /* outputs are cleared whatever is refused */
    if (len != NULL)
        *len = 0;
    return npyio__as_called(load_array_body(path, options, data, len, type,
                                            type_cap, ndim, shape, shape_cap),
                            "npyio_load");
}

static npyio_status load_as_body(const char *path, const char *type,
                                 uint32_t flags, const npyio_options *options,
                                 void **data, size_t *len, int *ndim,
                                 int64_t *shape, size_t shape_cap)
{
    static const char where[] = "npyio_load_as";
    npyio_reader *r = NULL;
    npyio_status st = npyio__check_load_outputs(data, len, ndim, shape,
                                                shape_cap, where);

    /* Refused flags open nothing. */
    if (st == NPYIO_OK)
        st = npyio__check_flags(flags, NPYIO_READ_CAST_SAME_KIND |
                                NPYIO_READ_CAST_UNSAFE, where);
    if (st == NPYIO_OK)
        st = npyio__reader_open_path(path, options, where, &r);
    if (st != NPYIO_OK)
        return st;
    return npyio__reader_load_as(r, type, flags, path, where, data, len,
                                 NULL, 0, ndim, shape, shape_cap);
}

npyio_status npyio_load_as(const char *path, const char *type, uint32_t flags,
                           const npyio_options *options, void **data,
                           size_t *len, int *ndim, int64_t *shape,
                           size_t shape_cap)
{
    if (data != NULL)
        *data = NULL; /* outputs are cleared whatever is refused */
    if (len != NULL)
        *len = 0;
    return npyio__as_called(load_as_body(path, type, flags, options, data,
                                         len, ndim, shape, shape_cap),
                            "npyio_load_as");
}

/* ---- archives ------------------------------------------------------------------ */

/* The arrays of a savez call: either plain (types, ndims, shapes) or
 * described by headers; one of the two is set. */
typedef struct savez_arrays {
    size_t count;
    const char *const *keys;
    const char *const *types;
    const int *ndims;
    const int64_t *const *shapes;
    const npyio_header *const *headers;
    const void *const *data;
    const size_t *lens;
    const int *levels;
} savez_arrays;

static npyio_status add_one(npyio_npz_writer *w, const savez_arrays *a,
                            size_t i, const char *where)
{
    int level = a->levels != NULL ? a->levels[i] : 0;

    if (a->headers != NULL)
        return npyio__npz_writer_add(w, a->keys[i], a->headers[i],
                                     a->data[i], a->lens[i], level, where);
    return npyio__npz_writer_add_plain(w, a->keys[i], a->types[i],
                                       a->ndims[i], a->shapes[i], a->data[i],
                                       a->lens[i], level, 0, where);
}

/* NPYIO_NPZ_WRITE_ZLIB says how members are deflated: a call that
 * deflates none (`deflates` false) refuses it rather than ignore it. */
static npyio_status check_zlib_flag(uint32_t flags, bool deflates,
                                    const char *where)
{
    if ((flags & NPYIO_NPZ_WRITE_ZLIB) && !deflates)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: NPYIO_NPZ_WRITE_ZLIB "
                           "chooses how members are deflated, and every "
                           "array here is stored (level 0)", where);
    return NPYIO_OK;
}

static bool any_deflated(const savez_arrays *a)
{
    size_t i;

    for (i = 0; a->levels != NULL && i < a->count; i++)
        if (a->levels[i] != 0)
            return true;
    return false;
}

static npyio_status savez_body(const char *path, const savez_arrays *a,
                               uint32_t flags, const npyio_options *options,
                               const char *where)
{
    npyio_npz_writer *w = NULL;
    npyio_status st;
    size_t i;

    if (a->count > 0 &&
        (a->keys == NULL || a->data == NULL || a->lens == NULL ||
         (a->headers == NULL && (a->types == NULL || a->ndims == NULL ||
                                 a->shapes == NULL))))
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: keys, %s, data and "
                           "lens must be given for %zu arrays", where,
                           a->types != NULL || a->headers == NULL
                               ? "types, ndims, shapes" : "headers",
                           a->count);
    st = check_zlib_flag(flags, any_deflated(a), where);
    if (st == NPYIO_OK)
        st = npyio__npz_writer_create_path(path, flags, options, where, &w);
    for (i = 0; st == NPYIO_OK && i < a->count; i++)
        st = add_one(w, a, i, where);
    if (st != NPYIO_OK) {
        npyio_npz_writer_abort(w);
        return st;
    }
    return npyio__npz_writer_close(w, where);
}

npyio_status npyio_savez(const char *path, size_t count,
                         const char *const *keys, const char *const *types,
                         const int *ndims, const int64_t *const *shapes,
                         const void *const *data, const size_t *lens,
                         const int *levels, uint32_t flags,
                         const npyio_options *options)
{
    savez_arrays a = {count, keys, types, ndims, shapes, NULL, data, lens,
                      levels};

    return npyio__as_called(savez_body(path, &a, flags, options,
                                       "npyio_savez"),
                            "npyio_savez");
}

npyio_status npyio_savez_with_header(const char *path, size_t count,
                                     const char *const *keys,
                                     const npyio_header *const *headers,
                                     const void *const *data,
                                     const size_t *lens, const int *levels,
                                     uint32_t flags,
                                     const npyio_options *options)
{
    static const char where[] = "npyio_savez_with_header";
    savez_arrays a = {count, keys, NULL, NULL, NULL, headers, data, lens,
                      levels};

    if (count > 0 && headers == NULL)
        return npyio__as_called(npyio__fail(NPYIO_E_INVALID_ARG, "%s: keys, "
                                            "headers, data and lens must be "
                                            "given for %zu arrays", where,
                                            count), where);
    return npyio__as_called(savez_body(path, &a, flags, options, where),
                            where);
}

npyio_status npyio_savez_append(const char *path, const char *key,
                                const char *type, int ndim,
                                const int64_t *shape, const void *data,
                                size_t len, int level, uint32_t flags,
                                const npyio_options *options)
{
    static const char where[] = "npyio_savez_append";
    npyio_npz_writer *w = NULL;
    npyio_status st = check_zlib_flag(flags, level != 0, where);

    if (st == NPYIO_OK)
        st = npyio__npz_open_append_path(path, flags, options, where, &w);

    if (st == NPYIO_OK)
        st = npyio__npz_writer_add_plain(w, key, type, ndim, shape, data,
                                         len, level, 0, where);
    if (st == NPYIO_OK)
        st = npyio__npz_writer_close(w, where);
    else
        npyio_npz_writer_abort(w);
    return npyio__as_called(st, where);
}
