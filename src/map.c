/*
 * map.c - memory-mapped .npy files: the header is read through a stream
 * on the file, the data is used in place through the stream's map (mmap(2)
 * for a file). An array may start anywhere in its file (an archive's
 * stored member): only the pages of its data are mapped. Part of the
 * array I/O core.
 */
#include "error.h"
#include "header_io.h"
#include "map.h"
#include "options.h"

#include <string.h>

#define NPYIO__MAGIC_MAP 0x4d415050u /* "MAPP" */

struct npyio_map {
    uint32_t magic;
    bool writable;
    bool durable;
    npyio__region region; /* the mapping: its data is the data's first
                             byte */
    npyio_header *header;
    npyio__mem mem;
};

static const npyio_map *live(const npyio_map *m)
{
    return m != NULL && m->magic == NPYIO__MAGIC_MAP ? m : NULL;
}

void *npyio_map_data(const npyio_map *map)
{
    return live(map) ? map->region.data : NULL;
}

const npyio_header *npyio_map_header(const npyio_map *map)
{
    return live(map) ? map->header : NULL;
}

int npyio_map_is_aligned(const npyio_map *map)
{
    size_t alignment;

    if (!live(map))
        return 0;
    alignment = map->header->dtype->alignment;
    return alignment <= 1 ||
           (uintptr_t)npyio_map_data(map) % alignment == 0;
}

static npyio_status map_close_body(npyio_map *map)
{
    npyio_status st;

    if (!live(map))
        return NPYIO_OK;
    st = npyio__region_release(&map->region, map->writable && map->durable);
    npyio_header_free(map->header);
    map->magic = NPYIO__MAGIC_DEAD;
    npyio__free(map);
    return st;
}

npyio_status npyio_map_close(npyio_map *map)
{
    return npyio__as_called(map_close_body(map),
                            "npyio_map_close");
}

/* The mapping's length: header and data, if the host can address it. */
static npyio_status map_length(const npyio_header *h, size_t *len)
{
    uint64_t total = (uint64_t)h->data_offset + (uint64_t)h->nbytes;

    if (npyio_dtype_has_objects(h->dtype))
        return npyio__fail(NPYIO_E_UNSUPPORTED, "the array holds Python "
                           "objects (a pickle): it cannot be mapped");
    if (total > SIZE_MAX)
        return npyio__fail(NPYIO_E_OVERFLOW, "%llu bytes do not fit this "
                           "host's address space",
                           (unsigned long long)total);
    *len = (size_t)total;
    return NPYIO_OK;
}

/* Map the data of the array whose header h was read at offset start of
 * the stream, and fill the handle; the header moves into it. An empty
 * array still gets a (one-byte) mapping: a valid pointer. */
static npyio_status map_at(npyio_stream *file, int64_t start, npyio_header *h,
                           uint32_t flags, const npyio_options *options,
                           npyio_map **out)
{
    bool writable = (flags & NPYIO_MAP_WRITE) != 0;
    npyio__mem mem;
    npyio_map *m = NULL;
    size_t file_len = 0;
    npyio_status st = map_length(h, &file_len);

    npyio__mem_init(&mem, options);
    if (st == NPYIO_OK)
        st = npyio__alloc_zero(&mem, sizeof *m, "map", (void **)&m);
    if (st == NPYIO_OK)
        st = npyio__stream_map(file, start + h->data_offset,
                               (size_t)h->nbytes, writable, &m->region);
    if (st != NPYIO_OK) {
        npyio__free(m);
        npyio_header_free(h);
        return st;
    }
    m->magic = NPYIO__MAGIC_MAP;
    m->writable = writable;
    m->durable = !(flags & NPYIO_WRITE_NO_SYNC);
    m->header = h;
    m->mem = mem;
    *out = m;
    return NPYIO_OK;
}

npyio_status npyio__map_array_at(npyio_stream *file, int64_t start,
                                 int64_t length, uint32_t flags,
                                 const npyio_options *options,
                                 npyio_map **out)
{
    npyio_stream *s = NULL;
    npyio_header *h = NULL;
    npyio__mem mem;
    bool checked = false;
    npyio_status st;

    *out = NULL;
    npyio__mem_init(&mem, options);
    /* The header, and a check that the range holds the data: a mapping
     * past the end of a file faults (SIGBUS) when read. */
    st = npyio__stream_open_window(file, start, length, options, &s);
    if (st == NPYIO_OK)
        st = npyio__header_read(s, options, &mem, &h);
    if (st == NPYIO_OK)
        st = npyio__header_check_data(s, h, &checked);
    npyio__stream_close(s);
    if (st != NPYIO_OK) {
        npyio_header_free(h);
        return st;
    }
    return map_at(file, start, h, flags, options, out);
}

static npyio_status map_open_body(const char *path, uint32_t flags,
                                  const npyio_options *options,
                                  npyio_map **out)
{
    static const char where[] = "npyio_map_open_path";
    npyio_stream *file = NULL;
    int64_t size = 0;
    npyio_status st;

    st = npyio__check_opener(out, path, where);
    if (st != NPYIO_OK)
        return st;
    st = npyio__check_flags(flags, NPYIO_MAP_WRITE | NPYIO_WRITE_NO_SYNC,
                            where);
    if (st != NPYIO_OK)
        return st;
    st = npyio__stream_open_existing(path, (flags & NPYIO_MAP_WRITE) != 0,
                                     options, where, &file);
    if (st != NPYIO_OK)
        return st;
    st = npyio__stream_length(file, &size);
    if (st == NPYIO_OK)
        st = npyio__map_array_at(file, 0, size, flags, options, out);
    npyio__stream_close(file); /* the mapping keeps the file */
    return npyio__with_context(st, path);
}

npyio_status npyio_map_open_path(const char *path, uint32_t flags,
                                 const npyio_options *options, npyio_map **out)
{
    if (out != NULL)
        *out = NULL; /* outputs are cleared whatever is refused */
    return npyio__as_called(map_open_body(path, flags, options, out),
                            "npyio_map_open_path");
}

/* The header np.save would write for h's array: the layout the created
 * file gets, whatever file h was read from (its data offset may differ:
 * 16-byte aligned legacy headers, 2.0 headers, extra padding). */
static npyio_status fresh_header(const npyio_header *h, const npyio__mem *mem,
                                 const char *path, npyio_header **out)
{
    return npyio__header_new(mem, h->dtype, h->ndim, h->shape,
                             h->fortran_order, path, out);
}

/* Write the header, then size the file for its data: blocks reserved, so
 * that a full disk fails here and not as SIGBUS in the caller's hands, or
 * with NPYIO_MAP_SPARSE a hole that reads as zeros. */
static npyio_status lay_out(npyio_stream *file, const npyio_header *h,
                            size_t total, const npyio__mem *mem, bool sparse)
{
    unsigned char small[512], *bytes = small;
    size_t hlen = 0;
    npyio_status st = npyio__header_emit(mem, h, 0, small, sizeof small,
                                         &hlen);

    if (st == NPYIO_E_BUFFER_TOO_SMALL) {
        st = npyio__alloc(mem, hlen, "header", (void **)&bytes);
        if (st == NPYIO_OK)
            st = npyio__header_emit(mem, h, 0, bytes, hlen, &hlen);
    }
    if (st == NPYIO_OK)
        st = npyio__stream_write(file, bytes, hlen, "the header");
    if (bytes != small)
        npyio__free(bytes);
    if (st == NPYIO_OK && (int64_t)hlen != h->data_offset)
        st = npyio__fail(NPYIO_E_STATE, "the emitted header is %zu bytes, "
                         "its layout says %lld", hlen,
                         (long long)h->data_offset);
    if (st == NPYIO_OK)
        st = npyio__stream_resize(file, (int64_t)total, !sparse);
    return st;
}

static npyio_status map_create_body(const char *path,
                                    const npyio_header *header,
                                    uint32_t flags,
                                    const npyio_options *options,
                                    npyio_map **out)
{
    static const char where[] = "npyio_map_create_path";
    npyio_stream *file = NULL;
    npyio__mem mem;
    npyio_header *h = NULL;
    size_t total = 0;
    bool durable = !(flags & NPYIO_WRITE_NO_SYNC);
    npyio_status st;

    st = npyio__check_opener(out, path, where);
    if (st != NPYIO_OK)
        return st;
    if (header == NULL || header->magic != NPYIO__MAGIC_HEADER)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: header is not an "
                           "npyio_header", where);
    st = npyio__check_flags(flags, NPYIO_WRITE_NO_SYNC | NPYIO_MAP_SPARSE,
                            where);
    if (st != NPYIO_OK)
        return st;
    npyio__mem_init(&mem, options);
    st = fresh_header(header, &mem, path, &h);
    if (st == NPYIO_OK)
        st = map_length(h, &total);
    if (st != NPYIO_OK) {
        npyio_header_free(h);
        return npyio__with_context(st, path);
    }
    /*
     * Built as a temporary and renamed into place before the caller
     * writes: a failure (a full disk) leaves an existing file as it was,
     * and the path gets the same symbolic-link, mode and owner treatment
     * as every writer's.
     */
    st = npyio__stream_open_replacing(path, options, &file);
    if (st != NPYIO_OK) { /* (names the path) */
        npyio_header_free(h);
        return st;
    }
    st = npyio__with_context(lay_out(file, h, total, &mem,
                                     (flags & NPYIO_MAP_SPARSE) != 0),
                             path);
    if (st == NPYIO_OK)
        st = npyio__with_context(map_at(file, 0, h,
                                        NPYIO_MAP_WRITE |
                                            (flags & NPYIO_WRITE_NO_SYNC),
                                        options, out),
                                 path);
    else
        npyio_header_free(h);
    if (st == NPYIO_OK) {
        st = npyio__stream_commit(file, durable);
        if (st != NPYIO_OK) {
            map_close_body(*out);
            *out = NULL;
        }
    }
    npyio__stream_close(file); /* (uncommitted: removed) */
    return st; /* (a failed commit names the path) */
}

npyio_status npyio_map_create_path(const char *path,
                                   const npyio_header *header, uint32_t flags,
                                   const npyio_options *options,
                                   npyio_map **out)
{
    if (out != NULL)
        *out = NULL; /* outputs are cleared whatever is refused */
    return npyio__as_called(map_create_body(path, header, flags, options,
                                            out),
                            "npyio_map_create_path");
}
