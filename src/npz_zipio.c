/*
 * npz_zipio.c - minizip's I/O over our stream: minizip writes the
 * archive's structure through its 64-bit ioapi table, whose calls become
 * the stream's; the first failure of one is kept for the archive
 * (minizip's own codes say less).
 */
#include "error.h"
#include "npz_write_core.h"

static void io_failure(npyio_npz_writer *w, npyio_status st)
{
    if (w->io_failed == NPYIO_OK) {
        w->io_failed = st;
        npyio__sticky_fail(&w->sticky, st);
    }
}

static voidpf io_open(voidpf opaque, const void *stream, int mode)
{
    (void)opaque;
    (void)mode;
    return (voidpf)stream; /* ours, passed through as the "file name" */
}

static uLong io_read(voidpf opaque, voidpf stream, void *buf, uLong size)
{
    size_t got = 0;
    npyio_status st = npyio__stream_read(stream, buf, size, &got,
                                         "the archive");

    if (st != NPYIO_OK)
        io_failure(opaque, st);
    return (uLong)got;
}

static uLong io_write(voidpf opaque, voidpf stream, const void *buf,
                      uLong size)
{
    npyio_status st = npyio__stream_write(stream, buf, size, "the archive");

    if (st != NPYIO_OK) {
        io_failure(opaque, st);
        return 0;
    }
    return size;
}

static ZPOS64_T io_tell(voidpf opaque, voidpf stream)
{
    int64_t pos = 0;
    npyio_status st = npyio__stream_tell(stream, &pos);

    if (st != NPYIO_OK) {
        io_failure(opaque, st);
        return (ZPOS64_T)-1;
    }
    return (ZPOS64_T)pos;
}

static long io_seek(voidpf opaque, voidpf stream, ZPOS64_T offset,
                    int origin)
{
    /* minizip sends negative relative offsets as huge unsigned ones. */
    int whence = origin == ZLIB_FILEFUNC_SEEK_SET   ? NPYIO_SEEK_SET
                 : origin == ZLIB_FILEFUNC_SEEK_CUR ? NPYIO_SEEK_CUR
                                                    : NPYIO_SEEK_END;
    npyio_status st = npyio__stream_seek(stream, (int64_t)offset, whence,
                                         NULL);

    if (st != NPYIO_OK) {
        io_failure(opaque, st);
        return -1;
    }
    return 0;
}

static int io_close(voidpf opaque, voidpf stream)
{
    (void)opaque;
    (void)stream;
    return 0; /* the stream is closed by its owner */
}

static int io_error(voidpf opaque, voidpf stream)
{
    (void)stream;
    return ((npyio_npz_writer *)opaque)->io_failed != NPYIO_OK;
}

/* Callers check io_failed as well as minizip's code: minizip leaves the
 * results of some of its writes unchecked (found by failing each write in
 * turn, tests/unit/test_iofault.c). */
npyio_status npyio__npz_zip_failure(npyio_npz_writer *w, const char *call,
                                    int code)
{
    if (w->io_failed != NPYIO_OK)
        return npyio__fail(w->io_failed, "%s: %s", call,
                           w->sticky.first_error);
    return npyio__sticky_fail(&w->sticky,
                              npyio__fail(NPYIO_E_IO, "%s: minizip returned "
                                          "%d", call, code));
}

npyio_status npyio__npz_zip_open(npyio_npz_writer *w, int append,
                                 const char *where)
{
    zlib_filefunc64_def io = {io_open, io_read, io_write, io_tell, io_seek,
                              io_close, io_error, NULL};

    io.opaque = w;
    w->zip = zipOpen2_64(w->stream, append, NULL, &io);
    if (w->zip == NULL || w->io_failed != NPYIO_OK)
        return npyio__npz_zip_failure(w, where, 0);
    return NPYIO_OK;
}
