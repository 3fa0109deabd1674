/*
 * hostile.h - a deliberately unpleasant source for reader tests: it hands
 * out 1 to 7 bytes per call, with or without a seek callback, over bytes
 * in memory. Every reader path must work through it exactly as through a
 * file.
 */
#ifndef NPYIO_HOSTILE_H
#define NPYIO_HOSTILE_H

#include <stdbool.h>
#include <string.h>

#include "npyio.h"

typedef struct hostile {
    const unsigned char *data;
    size_t len, pos;
    unsigned calls;
} hostile;

static inline int hostile_read(void *user, void *buf, size_t cap, size_t *got)
{
    hostile *h = user;
    size_t n = 1 + h->calls++ % 7;

    if (n > cap)
        n = cap;
    if (n > h->len - h->pos)
        n = h->len - h->pos;
    memcpy(buf, h->data + h->pos, n);
    h->pos += n;
    *got = n;
    return 0;
}

static inline int hostile_seek(void *user, int64_t offset, int whence,
                               int64_t *pos)
{
    hostile *h = user;
    int64_t base = whence == NPYIO_SEEK_SET   ? 0
                   : whence == NPYIO_SEEK_CUR ? (int64_t)h->pos
                                              : (int64_t)h->len;

    if (base + offset < 0 || base + offset > (int64_t)h->len)
        return -1;
    h->pos = (size_t)(base + offset);
    *pos = base + offset;
    return 0;
}

/* Open a stream over data[0..len); `h` must outlive it. */
static inline npyio_status hostile_open(hostile *h, const unsigned char *data,
                                        size_t len, bool seekable,
                                        npyio_stream **out)
{
    static const npyio_stream_ops seeking = {
        .size = sizeof seeking, .read = hostile_read, .seek = hostile_seek};
    static const npyio_stream_ops plain = {
        .size = sizeof plain, .read = hostile_read};

    h->data = data;
    h->len = len;
    h->pos = 0;
    h->calls = 0;
    return npyio_stream_open_ops(seekable ? &seeking : &plain, h, NULL, out);
}

#endif /* NPYIO_HOSTILE_H */
