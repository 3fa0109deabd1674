/*
 * descr.h - dtypes from their text (descr.c): NumPy's type strings ("<f8",
 * "datetime64[ns]", "i4, (2,3)f8") and the descr literals of .npy headers
 * (a type string, a list of fields, a (descr, shape) pair), given as nodes
 * of a parsed literal. The one dtype header that brings in the literal
 * parser, so that the modules that only handle dtypes do not see it.
 */
#ifndef NPYIO_DESCR_H
#define NPYIO_DESCR_H

#include "alloc.h"
#include "dtype.h"
#include "literal.h"

/*
 * Build a dtype from a descr node of a parsed header literal: a string
 * (type string), a list (a record) or a (descr, shape) tuple (a subarray).
 */
npyio_status npyio__dtype_from_node(const npyio__lit_doc *doc,
                                    const npyio__lit_node *node,
                                    const npyio_options *options,
                                    npyio_dtype **out);

/* The same, for any descr node (string, list or tuple) found `depth`
 * dtypes deep, for the nesting limit. */
npyio_status npyio__dtype_from_node_at(const npyio__lit_doc *doc,
                                       const npyio__lit_node *node,
                                       const npyio_options *options,
                                       int depth, npyio_dtype **out);

/* Parse a descr that is a list (a record) or a 2-tuple (a subarray).
 * `depth` is the dtype nesting already used. */
npyio_status npyio__compound_from_node(const npyio__lit_doc *doc,
                                       const npyio__lit_node *node,
                                       const npyio_options *options, int depth,
                                       npyio_dtype **out);

/* Build a dtype from a type string such as "<f8" or "datetime64[ns]".
 * `offset` is where the string starts in the file, for messages; pass
 * SIZE_MAX when it does not come from a file. */
npyio_status npyio__dtype_from_str(const char *s, size_t len, size_t offset,
                                   const npyio__mem *mem, npyio_dtype **out);

/* npyio_dtype_parse(), naming `where` (the public call made) in
 * messages. */
npyio_status npyio__dtype_parse(const char *text, size_t len,
                                const npyio_options *options,
                                const char *where, npyio_dtype **out);

#endif /* NPYIO_DESCR_H */
