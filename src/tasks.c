/*
 * tasks.c - the task calls in plain C: arrays described by a type string,
 * a number of dimensions and a shape, in this host's byte order and C
 * order, as a C program holds them. Each call is the handle calls it
 * stands for (open, write, close), so the files it writes are theirs.
 *
 * Copyright (c) 2026 The libnpyio developers.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "error.h"
#include "header.h"
#include "npz_write_core.h"

#include <string.h>

/* The header of plain C data: the type must be in this host's byte order
 * (or have none), since the elements are a C program's. */
static npyio_status plain_header(const char *type, int ndim,
                                 const int64_t *shape,
                                 const npyio_options *options,
                                 const char *where, npyio_header **out)
{
    npyio_dtype *dt = NULL;
    npyio_status st;

    *out = NULL;
    if (type == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: type is NULL", where);
    st = npyio_dtype_parse(type, strlen(type), options, &dt);
    if (st == NPYIO_OK && !npyio_dtype_is_native(dt))
        st = npyio__fail(NPYIO_E_INVALID_ARG, "%s: type \"%s\" is in the "
                         "other byte order than this host's, in which the "
                         "data must be", where, type);
    if (st == NPYIO_OK)
        st = npyio_header_new(dt, ndim, shape, 0, out);
    npyio_dtype_unref(dt);
    return st;
}

/* Write all of data through a writer just opened, and close it. */
static npyio_status write_whole(npyio_writer *w, const void *data,
                                size_t len)
{
    npyio_status st = npyio_writer_write(w, data, len);

    if (st != NPYIO_OK) {
        npyio_writer_abort(w);
        return st;
    }
    return npyio_writer_close(w);
}

npyio_status npyio_save(const char *path, const char *type, int ndim,
                        const int64_t *shape, const void *data, size_t len,
                        uint32_t flags, const npyio_options *options)
{
    npyio_header *h = NULL;
    npyio_status st = plain_header(type, ndim, shape, options, "npyio_save",
                                   &h);

    if (st == NPYIO_OK)
        st = npyio_save_with_header(path, h, data, len, flags, options);
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
    st = npyio_writer_open_append_path(path, rows, flags, options, &w);
    return st == NPYIO_OK ? write_whole(w, data, len) : st;
}

npyio_status npyio_append(const char *path, const char *type, int ndim,
                          const int64_t *shape, const void *data, size_t len,
                          uint32_t flags, const npyio_options *options)
{
    npyio_header *rows = NULL;
    npyio_status st = plain_header(type, ndim, shape, options,
                                   "npyio_append", &rows);

    if (st == NPYIO_OK && ndim < 1)
        st = npyio__fail(NPYIO_E_INVALID_ARG, "npyio_append: rows need at "
                         "least one dimension (shape[0] is their number)");
    if (st == NPYIO_OK)
        st = append_body(path, rows, data, len, flags, options);
    npyio_header_free(rows);
    return npyio__as_called(st, "npyio_append");
}

/* ---- archives ------------------------------------------------------------------ */

npyio_status npyio_npz_writer_add(npyio_npz_writer *npz, const char *key,
                                  const char *type, int ndim,
                                  const int64_t *shape, const void *data,
                                  size_t len, int level, uint32_t flags)
{
    static const char where[] = "npyio_npz_writer_add";
    npyio_header *h = NULL;
    npyio_status st;

    if (npz == NULL || npz->magic != NPYIO__MAGIC_NPZ_WRITER)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: npz is not an "
                           "npyio_npz_writer", where);
    st = npyio__check_flags(flags, 0, where);
    if (st == NPYIO_OK)
        st = plain_header(type, ndim, shape, npz->options, where, &h);
    if (st == NPYIO_OK)
        st = npyio_npz_writer_add_with_header(npz, key, h, data, len, level,
                                              0);
    npyio_header_free(h);
    return npyio__as_called(st, where);
}

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
                            size_t i)
{
    int level = a->levels != NULL ? a->levels[i] : 0;

    if (a->headers != NULL)
        return npyio_npz_writer_add_with_header(w, a->keys[i], a->headers[i],
                                                a->data[i], a->lens[i],
                                                level, 0);
    return npyio_npz_writer_add(w, a->keys[i], a->types[i], a->ndims[i],
                                a->shapes[i], a->data[i], a->lens[i], level,
                                0);
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
    st = npyio_npz_writer_create_path(path, flags, options, &w);
    for (i = 0; st == NPYIO_OK && i < a->count; i++)
        st = add_one(w, a, i);
    if (st != NPYIO_OK) {
        npyio_npz_writer_abort(w);
        return st;
    }
    return npyio_npz_writer_close(w);
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
    npyio_npz_writer *w = NULL;
    npyio_status st = npyio_npz_writer_open_append_path(path, flags, options,
                                                        &w);

    if (st == NPYIO_OK)
        st = npyio_npz_writer_add(w, key, type, ndim, shape, data, len,
                                  level, 0);
    if (st == NPYIO_OK)
        st = npyio_npz_writer_close(w);
    else
        npyio_npz_writer_abort(w);
    return npyio__as_called(st, "npyio_savez_append");
}
