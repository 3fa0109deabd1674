/*
 * stream_ops.c - the stream back end over the caller's callbacks
 * (npyio_stream_open_ops). Their failures say nothing of why, so each is
 * named: "the read callback failed", as NPYIO_E_IO.
 */
#include "error.h"
#include "stream.h"
#include "table.h"

#include <stddef.h>

typedef struct ops_state {
    npyio_stream_ops ops; /* the caller's table, copied */
    void *user;
} ops_state;

static npyio_status callback_failed(const char *callback)
{
    return npyio__fail(NPYIO_E_IO, "the %s callback failed", callback);
}

static npyio_status ops_read(void *state, void *buf, size_t cap, size_t *got)
{
    ops_state *o = state;

    return o->ops.read(o->user, buf, cap, got) == 0 ? NPYIO_OK
                                                    : callback_failed("read");
}

static npyio_status ops_write(void *state, const void *buf, size_t len,
                              size_t *put)
{
    ops_state *o = state;

    return o->ops.write(o->user, buf, len, put) == 0
               ? NPYIO_OK
               : callback_failed("write");
}

static npyio_status ops_seek(void *state, int64_t offset, int whence,
                             int64_t *pos)
{
    ops_state *o = state;

    return o->ops.seek(o->user, offset, whence, pos) == 0
               ? NPYIO_OK
               : callback_failed("seek");
}

static npyio_status ops_close(void *state)
{
    ops_state *o = state;

    if (o->ops.close == NULL || o->ops.close(o->user) == 0)
        return NPYIO_OK;
    return callback_failed("close");
}

/* Tables for each combination the caller may leave NULL: the core reads a
 * NULL operation as "cannot". */
static const npyio__stream_backend ops_backends[2][2][2] = {
#define OPS_BACKEND(r, w, s)                                                 \
    {.name = "callbacks", .read = (r) ? ops_read : NULL,                     \
     .write = (w) ? ops_write : NULL, .seek = (s) ? ops_seek : NULL,         \
     .close = ops_close}
    {{OPS_BACKEND(0, 0, 0), OPS_BACKEND(0, 0, 1)},
     {OPS_BACKEND(0, 1, 0), OPS_BACKEND(0, 1, 1)}},
    {{OPS_BACKEND(1, 0, 0), OPS_BACKEND(1, 0, 1)},
     {OPS_BACKEND(1, 1, 0), OPS_BACKEND(1, 1, 1)}},
#undef OPS_BACKEND
};

npyio_status npyio_stream_open_ops(const npyio_stream_ops *ops, void *user,
                                   const npyio_options *options,
                                   npyio_stream **out)
{
    static const char where[] = "npyio_stream_open_ops: ops";
    npyio_stream_ops copy;
    ops_state *o;
    npyio_status st;

    if (out == NULL || ops == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "npyio_stream_open_ops: %s "
                           "is NULL", out == NULL ? "out" : "ops");
    *out = NULL;
    st = npyio__copy_table(&copy, sizeof copy, ops,
                           offsetof(npyio_stream_ops, close) +
                               sizeof ops->close,
                           where);
    if (st != NPYIO_OK)
        return st;
    if (copy.read == NULL && copy.write == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: read and write are both NULL", where);
    st = npyio__stream_new(&ops_backends[copy.read != NULL]
                                        [copy.write != NULL]
                                        [copy.seek != NULL],
                           sizeof *o, options, out, (void **)&o);
    if (st == NPYIO_OK) {
        o->ops = copy;
        o->user = user;
    }
    return st;
}
