/*
 * record.h - making compound dtypes (record.c), on top of the dtype model:
 * subarrays, records assembled from collected fields, numbered records,
 * and dtypes derived in another byte order. What descr.c needs to build
 * the records and subarrays its descr lists and type strings describe.
 */
#ifndef NPYIO_RECORD_H
#define NPYIO_RECORD_H

#include "alloc.h"
#include "dtype.h"

/* A subarray of base (ndim > 0), with the checks of npyio_dtype_new_subarray,
 * allocated through mem. */
npyio_status npyio__make_subarray(npyio_dtype *base, int ndim,
                                  const int64_t *shape, const char *where,
                                  const npyio__mem *mem, npyio_dtype **out);

/* A record of n fields named f0, f1, ... packed in order, as np.dtype()
 * makes of a comma-separated type string (takes its own references). */
npyio_status npyio__record_numbered(npyio_dtype *const *types, size_t n,
                                    const char *where, const npyio__mem *mem,
                                    npyio_dtype **out);

/* A field while a record is being assembled: the name and title point to
 * storage of the collector (parser or builder). */
typedef struct npyio__pending_field {
    const char *name;
    size_t name_len;
    const char *title;
    size_t title_len;
    int64_t offset;
    npyio_dtype *dtype; /* a reference owned by the pending list */
} npyio__pending_field;

/* The fields of a record being assembled, then packed by
 * npyio__record_pack. */
typedef struct npyio__pending {
    npyio__pending_field *fields;
    size_t count;
    size_t capacity;
    size_t text_bytes; /* names and titles with their NULs */
    npyio__mem mem;
} npyio__pending;

/* An empty list allocating through mem (copied). */
void npyio__pending_init(npyio__pending *p, const npyio__mem *mem);

/* Drop the fields' dtype references and the field array. */
void npyio__pending_release(npyio__pending *p);

/* Room for n fields at least, allocated once. */
npyio_status npyio__pending_reserve(npyio__pending *p, size_t n);

/* Append a field; takes over the dtype reference, even on failure. */
npyio_status npyio__pending_push(npyio__pending *p,
                                 const npyio__pending_field *f);

/*
 * Pack pending fields into a record dtype of the given itemsize and
 * alignment (NPYIO_E_FORMAT naming `where` if a name or title is used
 * twice). The dtype references move from the pending list into the
 * record.
 */
npyio_status npyio__record_pack(npyio__pending *p, size_t itemsize,
                                size_t alignment, const char *where,
                                npyio_dtype **out);

/* npyio_dtype_new_byteorder() for a checked dtype and order ('<' or
 * '>'), with whatever it makes allocated through mem; `where` names the
 * public call made in messages. */
npyio_status npyio__dtype_with_order(const npyio_dtype *dtype, char order,
                                     const npyio__mem *mem, const char *where,
                                     npyio_dtype **out);

/* npyio_dtype_new_native() for a checked dtype, made like it. */
npyio_status npyio__dtype_new_native(const npyio_dtype *dtype,
                                     const char *where, npyio_dtype **out);

/* The same for a record or subarray. */
npyio_status npyio__compound_with_order(const npyio_dtype *dtype, char order,
                                        const npyio__mem *mem,
                                        const char *where, npyio_dtype **out);

#endif /* NPYIO_RECORD_H */
