/*
 * pickle.h - checking that an object array's data is one whole Python
 * pickle, without running it (see pickle.c).
 */
#ifndef NPYIO_CLI_PICKLE_H
#define NPYIO_CLI_PICKLE_H

#include <stddef.h>
#include <stdint.h>

/* What the walker is in the middle of. */
typedef enum pk_state {
    PK_OPCODE,  /* the next byte is an opcode */
    PK_GATHER,  /* a fixed-size argument or a length, gathered */
    PK_SKIP,    /* the bytes a length announced, skipped */
    PK_LINE,    /* text arguments: skipped up to each newline */
    PK_AFTER,   /* past STOP: bytes counted, ignored */
    PK_BAD      /* an error was found: see message */
} pk_state;

/* One walk over one pickle, fed in pieces of any size. Plain data: the
 * walker allocates nothing, whatever lengths the pickle announces. */
typedef struct pk_walk {
    pk_state state;
    uint64_t pos;        /* bytes fed so far */
    uint64_t op_pos;     /* where the current opcode starts */
    unsigned char op;    /* the current opcode */
    unsigned gather;     /* bytes of the argument still to gather */
    unsigned gathered;   /* bytes gathered so far */
    uint64_t value;      /* the gathered argument, little-endian */
    uint64_t skip;       /* bytes still to skip */
    unsigned lines;      /* text lines still to skip */
    uint64_t frame_pos;  /* the FRAME reaching furthest: its opcode */
    uint64_t frame_len;  /* and length */
    uint64_t frame_end;  /* where it ends (saturated) */
    uint64_t stop_pos;   /* where STOP is, once seen */
    uint64_t error_pos;  /* in PK_BAD: see pk_walk_error_pos() */
    char message[200];   /* in PK_BAD: what is wrong */
} pk_walk;

/* Start a walk. */
void pk_walk_init(pk_walk *w);

/* Feed the next n bytes. Returns 0 while all is well (the walk may be
 * past STOP already: what follows is only counted), -1 once an error is
 * found (then w->message says what, and at which byte of the pickle). */
int pk_walk_feed(pk_walk *w, const unsigned char *p, size_t n);

/* The data ended: 0 if it held a whole pickle, -1 with w->message
 * otherwise (no STOP; an argument or a frame cut short). */
int pk_walk_end(pk_walk *w);

/* The byte of the pickle where the error was found (an opcode's start),
 * or UINT64_MAX when it is about the whole (no STOP at all). */
uint64_t pk_walk_error_pos(const pk_walk *w);

#endif
