/*
 * header.h - the NPY preamble and header dict, private to the library: what
 * the array I/O core needs beyond the public header API.
 */
#ifndef NPYIO_HEADER_H
#define NPYIO_HEADER_H

#include "alloc.h"
#include "dtype.h"

#define NPYIO__MAGIC_HEADER 0x48454144u /* "HEAD" */

/* "\x93NUMPY": the first six bytes of every .npy file. */
#define NPYIO__NPY_MAGIC "\x93NUMPY"
#define NPYIO__NPY_MAGIC_LEN 6
/* Magic, version and the longest length field (2.0 and 3.0). */
#define NPYIO__PREAMBLE_MAX 12

struct npyio_header {
    uint32_t magic;
    npyio_dtype *dtype;
    int ndim;
    bool fortran_order;
    int version;         /* 1, 2 or 3 */
    int64_t count;       /* elements */
    int64_t nbytes;      /* count * itemsize */
    int64_t hlen;        /* value of the header-length field */
    int64_t data_offset; /* preamble + hlen */
    int64_t shape[];     /* ndim sizes */
};

/* What the first bytes of a file say: version, length-field size, HLEN. */
typedef struct npyio__preamble {
    int version;
    size_t prefix; /* 10 for 1.0, 12 for 2.0 and 3.0 */
    uint64_t hlen;
} npyio__preamble;

/*
 * Read the preamble from bytes[0..len). On NPYIO_E_TRUNCATED, *need is the
 * total number of bytes required to go on. Checks NPYIO_LIMIT_HEADER_SIZE
 * against the length field as far as that is possible without the text.
 */
npyio_status npyio__preamble_parse(const unsigned char *bytes, size_t len,
                                   const npyio_options *options,
                                   npyio__preamble *pre, size_t *need);

/*
 * Is the data in Fortran order in a way that matters: fortran_order set
 * and the bytes not also in C order (they are for empty arrays and for
 * shapes with at most one dimension above 1). np.save writes
 * fortran_order True only then, and readers reorder only then.
 */
bool npyio__header_fortran_data(const npyio_header *h);

/*
 * Emit the header for `version` (1, 2 or 3) into exactly `total` bytes
 * (preamble included), padding with spaces: how a header is rewritten in
 * place when the shape grows. NPYIO_E_UNSUPPORTED if it does not fit, or
 * if its characters need a later format (a file of format 1.0 whose names
 * have \u escapes past latin-1).
 * Temporaries are allocated through mem (the emitting handle's).
 */
npyio_status npyio__header_emit_into(const npyio__mem *mem,
                                     const npyio_header *h, int version,
                                     size_t total, unsigned char *buf);

/* npyio_header_emit() with its temporaries allocated through mem (the
 * emitting handle's allocator). */
npyio_status npyio__header_emit(const npyio__mem *mem,
                                const npyio_header *header, int version,
                                void *buf, size_t cap, size_t *len);

/* npyio_header_parse() for the library's own callers: its message names
 * no public call (the caller's call is named by its entry). */
npyio_status npyio__header_parse(const void *bytes, size_t len,
                                 const npyio_options *options,
                                 npyio_header **out, size_t *consumed);

/* npyio_header_new() with the header allocated through mem: for handles
 * that make headers with their own allocator; `where` names the public
 * call made in messages. */
npyio_status npyio__header_new(const npyio__mem *mem,
                               const npyio_dtype *dtype, int ndim,
                               const int64_t *shape, int fortran_order,
                               const char *where, npyio_header **out);

/* npyio_header_new_as_read() through mem; `where` begins its messages
 * (the public call made, or the context a caller gives its messages). */
npyio_status npyio__header_as_read(const npyio__mem *mem,
                                   const npyio_header *header, uint32_t flags,
                                   const char *where, npyio_header **out);

/* The header of plain C data (npyio_save(), npyio_append(),
 * npyio_npz_writer_add()): the type must be in this host's byte order (or
 * have none), since the elements are a C program's. `where` names the
 * call in messages. */
npyio_status npyio__plain_header(const char *type, int ndim,
                                 const int64_t *shape,
                                 const npyio_options *options,
                                 const char *where, npyio_header **out);

#endif /* NPYIO_HEADER_H */
