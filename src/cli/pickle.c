/*
 * pickle.c - walking the opcodes of a Python pickle (protocols 0 to 5)
 * without running any of them, to tell whether an object array's data is
 * one whole pickle: what `npyio validate` checks for object arrays.
 *
 * Each opcode is one byte; its argument, if any, is one of (as CPython's
 * Lib/pickletools.py describes them):
 *
 *   fixed    1, 2, 4 or 8 bytes (BININT1, BININT2, BININT, BINFLOAT,
 *            BINGET, LONG_BINPUT, PROTO, EXT1/2/4, FRAME, ...);
 *   counted  a little-endian length of 1, 4 or 8 bytes, then that many
 *            bytes (SHORT_BINUNICODE, BINUNICODE, BINUNICODE8, the BINBYTES
 *            and BINSTRING families, LONG1, LONG4, BYTEARRAY8); BINSTRING
 *            and LONG4 have signed lengths, and a negative one is an error,
 *            as it is for the unpickler;
 *   lines    text up to a newline, once (INT, LONG, FLOAT, STRING, UNICODE,
 *            GET, PUT, PERSID) or twice (GLOBAL, INST).
 *
 * The walk is a state machine fed the data in pieces of any size (one
 * byte at a time gives the same answer as all at once), so it works on a
 * pipe in bounded memory: announced lengths are only counted down while
 * the bytes stream past, never allocated, so a length of 2^64 - 1 costs
 * nothing but the wait for the end of the data.
 *
 * Decisions (see also pk_walk_end):
 *  - bytes after STOP are accepted: pickle.load, which np.load uses,
 *    ignores them;
 *  - PROTO above 5 is an error (the unpickler refuses it), and so is
 *    NEXT_BUFFER: it asks for an out-of-band buffer, which np.load never
 *    supplies;
 *  - a FRAME must end within the data, since the unpickler reads each
 *    frame whole; opcodes may still follow a frame;
 *  - text arguments are not parsed (a "1x" after INT would fail to
 *    unpickle): the walk checks the framing of the opcode stream, not what
 *    running it would do, which only the unpickler can tell.
 *
 * This module knows nothing of .npy files or of the library.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pickle.h"

#define HIGHEST_PROTOCOL 5

typedef enum arg_kind {
    ARG_NONE,
    ARG_FIXED,      /* n bytes */
    ARG_LEN,        /* an n-byte unsigned length, then that many bytes */
    ARG_LEN_SIGNED, /* the same with a signed length */
    ARG_LINES       /* n lines of text */
} arg_kind;

typedef struct opinfo {
    const char *name; /* NULL: not an opcode */
    unsigned char kind;
    unsigned char n;
} opinfo;

#define OP_STOP '.'
#define OP_PROTO 0x80
#define OP_FRAME 0x95
#define OP_NEXT_BUFFER 0x97

/* Every opcode of protocols 0 to 5, by its byte. */
static const opinfo opcodes[256] = {
    ['('] = {"MARK", ARG_NONE, 0},
    [')'] = {"EMPTY_TUPLE", ARG_NONE, 0},
    ['.'] = {"STOP", ARG_NONE, 0},
    ['0'] = {"POP", ARG_NONE, 0},
    ['1'] = {"POP_MARK", ARG_NONE, 0},
    ['2'] = {"DUP", ARG_NONE, 0},
    ['B'] = {"BINBYTES", ARG_LEN, 4},
    ['C'] = {"SHORT_BINBYTES", ARG_LEN, 1},
    ['F'] = {"FLOAT", ARG_LINES, 1},
    ['G'] = {"BINFLOAT", ARG_FIXED, 8},
    ['I'] = {"INT", ARG_LINES, 1},
    ['J'] = {"BININT", ARG_FIXED, 4},
    ['K'] = {"BININT1", ARG_FIXED, 1},
    ['L'] = {"LONG", ARG_LINES, 1},
    ['M'] = {"BININT2", ARG_FIXED, 2},
    ['N'] = {"NONE", ARG_NONE, 0},
    ['P'] = {"PERSID", ARG_LINES, 1},
    ['Q'] = {"BINPERSID", ARG_NONE, 0},
    ['R'] = {"REDUCE", ARG_NONE, 0},
    ['S'] = {"STRING", ARG_LINES, 1},
    ['T'] = {"BINSTRING", ARG_LEN_SIGNED, 4},
    ['U'] = {"SHORT_BINSTRING", ARG_LEN, 1},
    ['V'] = {"UNICODE", ARG_LINES, 1},
    ['X'] = {"BINUNICODE", ARG_LEN, 4},
    [']'] = {"EMPTY_LIST", ARG_NONE, 0},
    ['a'] = {"APPEND", ARG_NONE, 0},
    ['b'] = {"BUILD", ARG_NONE, 0},
    ['c'] = {"GLOBAL", ARG_LINES, 2},
    ['d'] = {"DICT", ARG_NONE, 0},
    ['e'] = {"APPENDS", ARG_NONE, 0},
    ['g'] = {"GET", ARG_LINES, 1},
    ['h'] = {"BINGET", ARG_FIXED, 1},
    ['i'] = {"INST", ARG_LINES, 2},
    ['j'] = {"LONG_BINGET", ARG_FIXED, 4},
    ['l'] = {"LIST", ARG_NONE, 0},
    ['o'] = {"OBJ", ARG_NONE, 0},
    ['p'] = {"PUT", ARG_LINES, 1},
    ['q'] = {"BINPUT", ARG_FIXED, 1},
    ['r'] = {"LONG_BINPUT", ARG_FIXED, 4},
    ['s'] = {"SETITEM", ARG_NONE, 0},
    ['t'] = {"TUPLE", ARG_NONE, 0},
    ['u'] = {"SETITEMS", ARG_NONE, 0},
    ['}'] = {"EMPTY_DICT", ARG_NONE, 0},
    [0x80] = {"PROTO", ARG_FIXED, 1},
    [0x81] = {"NEWOBJ", ARG_NONE, 0},
    [0x82] = {"EXT1", ARG_FIXED, 1},
    [0x83] = {"EXT2", ARG_FIXED, 2},
    [0x84] = {"EXT4", ARG_FIXED, 4},
    [0x85] = {"TUPLE1", ARG_NONE, 0},
    [0x86] = {"TUPLE2", ARG_NONE, 0},
    [0x87] = {"TUPLE3", ARG_NONE, 0},
    [0x88] = {"NEWTRUE", ARG_NONE, 0},
    [0x89] = {"NEWFALSE", ARG_NONE, 0},
    [0x8a] = {"LONG1", ARG_LEN, 1},
    [0x8b] = {"LONG4", ARG_LEN_SIGNED, 4},
    [0x8c] = {"SHORT_BINUNICODE", ARG_LEN, 1},
    [0x8d] = {"BINUNICODE8", ARG_LEN, 8},
    [0x8e] = {"BINBYTES8", ARG_LEN, 8},
    [0x8f] = {"EMPTY_SET", ARG_NONE, 0},
    [0x90] = {"ADDITEMS", ARG_NONE, 0},
    [0x91] = {"FROZENSET", ARG_NONE, 0},
    [0x92] = {"NEWOBJ_EX", ARG_NONE, 0},
    [0x93] = {"STACK_GLOBAL", ARG_NONE, 0},
    [0x94] = {"MEMOIZE", ARG_NONE, 0},
    [0x95] = {"FRAME", ARG_FIXED, 8},
    [0x96] = {"BYTEARRAY8", ARG_LEN, 8},
    [0x97] = {"NEXT_BUFFER", ARG_NONE, 0},
    [0x98] = {"READONLY_BUFFER", ARG_NONE, 0},
};

void pk_walk_init(pk_walk *w)
{
    memset(w, 0, sizeof *w);
    w->state = PK_OPCODE;
}

uint64_t pk_walk_error_pos(const pk_walk *w)
{
    return w->error_pos;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int bad(pk_walk *w, uint64_t at, const char *format, ...);

static int bad(pk_walk *w, uint64_t at, const char *format, ...)
{
    va_list ap;

    va_start(ap, format);
    vsnprintf(w->message, sizeof w->message, format, ap);
    va_end(ap);
    w->error_pos = at;
    w->state = PK_BAD;
    return -1;
}

/* The opcode byte c, at w->op_pos: what comes next. */
static void start_opcode(pk_walk *w, unsigned char c)
{
    const opinfo *op = &opcodes[c];

    w->op = c;
    if (op->name == NULL) {
        bad(w, w->op_pos, "unknown opcode 0x%02x", c);
    } else if (c == OP_STOP) {
        w->stop_pos = w->op_pos;
        w->state = PK_AFTER;
    } else if (c == OP_NEXT_BUFFER) {
        bad(w, w->op_pos, "opcode NEXT_BUFFER: an out-of-band buffer, which "
                          "np.load cannot supply");
    } else if (op->kind == ARG_LINES) {
        w->lines = op->n;
        w->state = PK_LINE;
    } else if (op->kind != ARG_NONE) {
        w->gather = op->n;
        w->gathered = 0;
        w->value = 0;
        w->state = PK_GATHER;
    }
}

/* A FRAME of len bytes starts at w->pos: remember the furthest end. */
static void note_frame(pk_walk *w, uint64_t len)
{
    uint64_t end = len > UINT64_MAX - w->pos ? UINT64_MAX : w->pos + len;

    if (end > w->frame_end) {
        w->frame_end = end;
        w->frame_pos = w->op_pos;
        w->frame_len = len;
    }
}

/* The fixed argument or length in w->value is complete. */
static void finish_gather(pk_walk *w)
{
    const opinfo *op = &opcodes[w->op];

    w->state = PK_OPCODE;
    if (op->kind == ARG_FIXED) {
        if (w->op == OP_PROTO && w->value > HIGHEST_PROTOCOL)
            bad(w, w->op_pos, "PROTO %" PRIu64 ": pickle protocols above %d "
                              "are unknown", w->value, HIGHEST_PROTOCOL);
        else if (w->op == OP_FRAME)
            note_frame(w, w->value);
        return;
    }
    if (op->kind == ARG_LEN_SIGNED && (w->value & UINT32_C(0x80000000))) {
        bad(w, w->op_pos, "opcode %s: negative length %" PRId64, op->name,
            (int64_t)w->value - (INT64_C(1) << 32));
        return;
    }
    w->skip = w->value;
    if (w->skip > 0)
        w->state = PK_SKIP;
}

/* Consume what the current state can of p[0..n); returns the count. */
static size_t step(pk_walk *w, const unsigned char *p, size_t n)
{
    const unsigned char *newline;
    size_t k;

    switch (w->state) {
    case PK_OPCODE:
        w->op_pos = w->pos;
        start_opcode(w, p[0]);
        return 1;
    case PK_GATHER:
        w->value |= (uint64_t)p[0] << (8 * w->gathered);
        if (++w->gathered == w->gather)
            finish_gather(w);
        return 1;
    case PK_SKIP:
        k = w->skip < n ? (size_t)w->skip : n;
        w->skip -= k;
        if (w->skip == 0)
            w->state = PK_OPCODE;
        return k;
    case PK_LINE:
        newline = memchr(p, '\n', n);
        if (newline == NULL)
            return n;
        if (--w->lines == 0)
            w->state = PK_OPCODE;
        return (size_t)(newline - p) + 1;
    case PK_AFTER:
        return n;
    case PK_BAD:
        break;
    }
    return n;
}

int pk_walk_feed(pk_walk *w, const unsigned char *p, size_t n)
{
    while (n > 0 && w->state != PK_BAD) {
        size_t k = step(w, p, n);

        w->pos += k;
        p += k;
        n -= k;
    }
    return w->state == PK_BAD ? -1 : 0;
}

int pk_walk_end(pk_walk *w)
{
    switch (w->state) {
    case PK_BAD:
        return -1;
    case PK_AFTER:
        if (w->frame_end > w->pos)
            return bad(w, w->frame_pos, "FRAME of %" PRIu64 " bytes runs "
                                        "past the end of the data at pickle "
                                        "byte %" PRIu64, w->frame_len, w->pos);
        return 0;
    case PK_OPCODE:
        return bad(w, UINT64_MAX, "the pickle ends after %" PRIu64 " bytes "
                                  "without STOP: the data is cut short",
                   w->pos);
    case PK_GATHER:
    case PK_SKIP:
    case PK_LINE:
        break;
    }
    return bad(w, w->op_pos, "opcode %s: its argument is truncated: the data "
                             "ends at pickle byte %" PRIu64,
               opcodes[w->op].name, w->pos);
}
