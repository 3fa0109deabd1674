/*
 * stream_ops.c - the stream back end over the caller's callbacks
 * (npyio_stream_open_ops). Their failures say nothing of why, so each is
 * named: "the read callback failed", as NPYIO_E_IO (a lock callback's
 * NPYIO_E_LOCKED excepted). The back end's table is built per stream, in
 * its state, with exactly the operations whose callbacks the caller set:
 * the core reads a NULL operation as "cannot" (no positioned reads, no
 * appends), as it does for every back end.
 */
#include "error.h"
#include "stream.h"
#include "table.h"

#include <stddef.h>

typedef struct ops_state {
    npyio__stream_backend backend; /* this stream's operations */
    npyio_stream_ops ops;          /* the caller's table, copied */
    void *user;
} ops_state;

static npyio_status callback_failed(const char *callback)
{
    return npyio__fail(NPYIO_E_IO, "the %s callback failed", callback);
}

static npyio_status answer(int rc, const char *callback)
{
    return rc == 0 ? NPYIO_OK : callback_failed(callback);
}

static npyio_status ops_read(void *state, void *buf, size_t cap, size_t *got)
{
    ops_state *o = state;

    return answer(o->ops.read(o->user, buf, cap, got), "read");
}

static npyio_status ops_write(void *state, const void *buf, size_t len,
                              size_t *put)
{
    ops_state *o = state;

    return answer(o->ops.write(o->user, buf, len, put), "write");
}

static npyio_status ops_seek(void *state, int64_t offset, int whence,
                             int64_t *pos)
{
    ops_state *o = state;

    return answer(o->ops.seek(o->user, offset, whence, pos), "seek");
}

static npyio_status ops_close(void *state)
{
    ops_state *o = state;

    if (o->ops.close == NULL)
        return NPYIO_OK;
    return answer(o->ops.close(o->user), "close");
}

static npyio_status ops_pread(void *state, void *buf, size_t cap,
                              int64_t offset, size_t *got)
{
    ops_state *o = state;

    return answer(o->ops.pread(o->user, buf, cap, offset, got), "pread");
}

static npyio_status ops_pwrite(void *state, const void *buf, size_t len,
                               int64_t offset, size_t *put)
{
    ops_state *o = state;

    return answer(o->ops.pwrite(o->user, buf, len, offset, put), "pwrite");
}

static npyio_status ops_size(void *state, int64_t *size)
{
    ops_state *o = state;
    npyio_status st = answer(o->ops.length(o->user, size), "length");

    if (st == NPYIO_OK && *size < 0)
        st = npyio__fail(NPYIO_E_IO, "the length callback gave %lld bytes",
                         (long long)*size);
    return st;
}

/* Resize by truncate. A reservation (maps, which callback streams do not
 * serve) only extends: a longer stream is left as it is. */
static npyio_status ops_resize(void *state, int64_t size, bool reserve)
{
    ops_state *o = state;
    int64_t now = 0;

    if (reserve) {
        npyio_status st = o->ops.length != NULL ? ops_size(state, &now)
                                                : NPYIO_E_UNSUPPORTED;

        if (st == NPYIO_E_UNSUPPORTED)
            return npyio__fail(st, "the callbacks cannot reserve storage");
        if (st != NPYIO_OK || now >= size)
            return st;
    }
    return answer(o->ops.truncate(o->user, size), "truncate");
}

static npyio_status ops_sync(void *state, bool durable)
{
    ops_state *o = state;

    return answer(o->ops.sync(o->user, durable ? 1 : 0), "sync");
}

static npyio_status ops_lock(void *state, bool exclusive, bool wait)
{
    ops_state *o = state;
    int rc = o->ops.lock(o->user, exclusive ? 1 : 0, wait ? 1 : 0);

    if (rc == NPYIO_E_LOCKED)
        return npyio__fail(NPYIO_E_LOCKED, "the lock callback says another "
                           "holds a lock that conflicts with the %s",
                           exclusive ? "exclusive lock of an appender"
                                     : "shared lock of a writer in place");
    return answer(rc, "lock");
}

/* This stream's table: the caller's NULL callbacks stay NULL. */
static void build_backend(ops_state *o)
{
    const npyio_stream_ops *c = &o->ops;
    npyio__stream_backend *b = &o->backend;

    b->name = "callbacks";
    b->read = c->read != NULL ? ops_read : NULL;
    b->write = c->write != NULL ? ops_write : NULL;
    b->seek = c->seek != NULL ? ops_seek : NULL;
    b->close = ops_close;
    b->pread = c->pread != NULL ? ops_pread : NULL;
    b->pwrite = c->pwrite != NULL ? ops_pwrite : NULL;
    b->size = c->length != NULL ? ops_size : NULL;
    b->resize = c->truncate != NULL ? ops_resize : NULL;
    b->sync = c->sync != NULL ? ops_sync : NULL;
    b->lock = c->lock != NULL ? ops_lock : NULL;
}

/* Served by the table built in the state once the state exists. */
static const npyio__stream_backend ops_opening = {.name = "callbacks",
                                                  .close = ops_close};

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
    st = npyio__stream_new(&ops_opening, sizeof *o, options, out,
                           (void **)&o);
    if (st != NPYIO_OK)
        return st;
    o->ops = copy;
    o->user = user;
    build_backend(o);
    npyio__stream_set_backend(*out, &o->backend);
    return NPYIO_OK;
}
