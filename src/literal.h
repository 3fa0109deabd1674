/*
 * literal.h - the Python-literal subset of .npy headers: parsing it into a
 * flat tree of nodes, decoding its strings, and writing Python's repr() of
 * strings. Knows nothing of NPY files or dtypes.
 *
 * The grammar (what np.save writes, and what NumPy or other writers have
 * written in the past):
 *
 *   value   := dict | list | tuple | '(' value ')' | string | int
 *            | 'True' | 'False' | 'None'
 *   dict    := '{' [ value ':' value { ',' value ':' value } [ ',' ] ] '}'
 *   list    := '[' [ value { ',' value } [ ',' ] ] ']'
 *   tuple   := '(' ')' | '(' value ',' [ value { ',' value } [ ',' ] ] ')'
 *   string  := [ 'u' | 'U' | 'b' | 'B' ] ( "'" chars "'" | '"' chars '"' )
 *   int     := [ '+' | '-' ] digits [ 'L' ]      ('L' in 1.0/2.0 only)
 *
 * White space (space, tab, form feed, CR, LF) may stand between any two
 * tokens and around the value. Strings take Python's escapes: \\ \' \" \a
 * \b \f \n \r \t \v, \ooo, \xhh, \uhhhh, \Uhhhhhhhh and backslash-newline;
 * an unknown escape such as \q stays as written, as in Python. Integers are
 * decimal without leading zeros (0 and 00 are fine) and must fit in int64_t.
 *
 * Python's literal_eval, which NumPy uses, also accepts forms that no .npy
 * writer produces; they are refused here with a message naming them: hex,
 * octal, binary and underscored integers, floats and complex numbers,
 * comments, backslash line continuation outside strings, implicit string
 * concatenation, triple-quoted and raw strings, \N{...} escapes, sets and
 * top-level tuples without brackets.
 */
#ifndef NPYIO_LITERAL_H
#define NPYIO_LITERAL_H

#include "alloc.h"

enum npyio__lit_kind {
    NPYIO__LIT_DICT = 1, /* children alternate key, value */
    NPYIO__LIT_LIST,
    NPYIO__LIT_TUPLE,
    NPYIO__LIT_GROUP, /* '(' value ')': stands for its one child */
    NPYIO__LIT_STR,
    NPYIO__LIT_BYTES, /* b'...': parsed so that it can be refused by name */
    NPYIO__LIT_INT,
    NPYIO__LIT_TRUE,
    NPYIO__LIT_FALSE,
    NPYIO__LIT_NONE
};

/* String flags. */
#define NPYIO__LIT_ESCAPES 1u /* contains a backslash */
#define NPYIO__LIT_HIGH 2u    /* contains bytes >= 0x80 */

/*
 * One node. Nodes are stored in document order, so a container's first
 * child is the node right after it; siblings are linked by index.
 */
typedef struct npyio__lit_node {
    uint8_t kind;
    uint8_t flags;
    uint32_t count; /* containers: number of children (dict: keys + values) */
    uint32_t next;  /* index of the next sibling; 0 for the last one */
    size_t pos;     /* offset in the text of the node's first byte */
    size_t len;     /* STR/BYTES: bytes between the quotes; others: token */
    int64_t value;  /* INT */
} npyio__lit_node;

/* Text encodings of header versions 1.0/2.0 and 3.0. */
#define NPYIO__LIT_LATIN1 0
#define NPYIO__LIT_UTF8 1

#define NPYIO__LIT_INLINE_NODES 64
#define NPYIO__LIT_INLINE_DEPTH 33

typedef struct npyio__lit_config {
    int encoding;           /* NPYIO__LIT_LATIN1 or NPYIO__LIT_UTF8 */
    bool allow_long_suffix; /* Python 2's 2L (headers 1.0 and 2.0) */
    int64_t max_depth;      /* deepest bracket nesting accepted */
    size_t base_offset;     /* added to text offsets in messages */
} npyio__lit_config;

/* A parsed literal. Lives where it was declared (it may point into itself):
 * do not copy it; release with npyio__lit_free(). */
typedef struct npyio__lit_doc {
    const char *text;
    size_t len;
    int encoding;
    size_t base_offset;
    npyio__lit_node *nodes; /* nodes[0] is the root */
    uint32_t count;
    uint32_t capacity;
    const npyio__mem *mem;
    npyio__lit_node inline_nodes[NPYIO__LIT_INLINE_NODES];
} npyio__lit_doc;

/*
 * Parse `text[0..len)` (already checked to be valid in its encoding, and
 * free of NUL bytes: the header layer does both). NPYIO_E_FORMAT for syntax
 * errors, NPYIO_E_OVERFLOW for an integer beyond int64_t, NPYIO_E_LIMIT for
 * nesting deeper than max_depth, NPYIO_E_NOMEM; messages give the absolute
 * byte offset (base_offset + position). The doc must be freed even on
 * failure.
 */
npyio_status npyio__lit_parse(npyio__lit_doc *doc, const char *text,
                              size_t len, const npyio__lit_config *config,
                              const npyio__mem *mem);

void npyio__lit_free(npyio__lit_doc *doc);

/* The node a node stands for (a GROUP stands for its child). */
const npyio__lit_node *npyio__lit_resolve(const npyio__lit_doc *doc,
                                          const npyio__lit_node *node);

/* First child and next sibling, resolved; NULL at the end. */
const npyio__lit_node *npyio__lit_child(const npyio__lit_doc *doc,
                                        const npyio__lit_node *node);
const npyio__lit_node *npyio__lit_next(const npyio__lit_doc *doc,
                                       const npyio__lit_node *node);

/* Absolute byte offset of a node, for messages. */
size_t npyio__lit_offset(const npyio__lit_doc *doc,
                         const npyio__lit_node *node);

/* Room needed to decode a STR node: its UTF-8 text is never longer than
 * twice its raw bytes; one more for the terminating NUL. */
size_t npyio__lit_str_room(const npyio__lit_node *node);

/* Decode a STR node into `out` (npyio__lit_str_room() bytes) as UTF-8,
 * NUL-terminated; returns the length (the text may contain NUL bytes if the
 * string has \x00 escapes). */
size_t npyio__lit_str_decode(const npyio__lit_doc *doc,
                             const npyio__lit_node *node, char *out);

/* Does a STR node decode to exactly `s[0..len)`? Allocation-free. */
bool npyio__lit_str_equals(const npyio__lit_doc *doc,
                           const npyio__lit_node *node, const char *s,
                           size_t len);

/* Name of a node's kind for messages: "a dict", "an int", ... */
const char *npyio__lit_kind_name(const npyio__lit_node *node);

/*
 * Python's repr() of a str given as UTF-8: quotes chosen as Python chooses
 * them, escapes where Python escapes. Writes at most `cap` bytes to `out`
 * (no NUL) and returns the full length, so a first call with cap 0 sizes
 * the output.
 */
size_t npyio__lit_repr_str(const char *s, size_t len, char *out, size_t cap);

#endif /* NPYIO_LITERAL_H */
