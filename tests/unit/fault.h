/*
 * fault.h - what the I/O fault tests share (test_iofault: the caller's
 * stream callbacks fail; test_pathfault: the OS calls of the platform
 * module fail, through the hook the loop's npyio_options carry): the loop that runs an operation
 * once without faults (its result and how many calls it makes), then once
 * with each call k failed, interrupted or made short, and checks every run;
 * and the pieces the operations are made of. Include after testutil.h and
 * inject.h (its counting allocator and file snapshots).
 *
 * Every failed run must give NPYIO_E_IO with the source's message, give
 * back every block it took, leave the destination file as it was (or, past
 * the point of no return, as the run without faults left it, saying so)
 * and leave nothing else beside it. A failure the library never sees (the
 * close of a stream it only read) may leave the run successful: its result
 * must then be whole. Interrupted and short runs must give exactly the
 * result of the run without faults.
 */
#ifndef NPYIO_FAULT_H
#define NPYIO_FAULT_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- what an operation produced ---------------------------------------------- */

typedef struct fault_result {
    unsigned char *bytes; /* what was read, or the file written */
    size_t len;
} fault_result;

static inline void result_add(fault_result *r, const void *p, size_t n)
{
    unsigned char *more = realloc(r->bytes, r->len + n + 1);

    assert_non_null(more);
    if (n > 0)
        memcpy(more + r->len, p, n);
    r->bytes = more;
    r->len += n;
}

/* After a successful writer: the destination's bytes. Passes st on. */
static inline npyio_status result_add_file(npyio_status st, fault_result *r,
                                           const char *path)
{
    size_t len = 0;
    unsigned char *b;

    if (st != NPYIO_OK)
        return st;
    b = snapshot(path, &len);
    result_add(r, b, len);
    free(b);
    return st;
}

static inline int result_same(const fault_result *a, const fault_result *b)
{
    return a->len == b->len &&
           (a->len == 0 || memcmp(a->bytes, b->bytes, a->len) == 0);
}

/* ---- the pieces of the operations ---------------------------------------------- */

/* A header of type `descr` (through o's allocator). */
static inline npyio_status fault_header(const npyio_options *o,
                                        const char *descr, int ndim,
                                        const int64_t *shape,
                                        npyio_header **h)
{
    npyio_dtype *dt = NULL;
    npyio_status st = npyio_dtype_parse(descr, strlen(descr), o, &dt);

    if (st == NPYIO_OK)
        st = npyio_header_new(dt, ndim, shape, 0, h);
    npyio_dtype_unref(dt);
    return st;
}

/* After a load (st OK): the data's bytes kept; data and header freed. */
static inline npyio_status fault_keep_loaded(npyio_status st,
                                             fault_result *r,
                                             npyio_header *h, void *data)
{
    if (st == NPYIO_OK)
        result_add(r, data, (size_t)npyio_header_nbytes(h));
    npyio_free(data);
    npyio_header_free(h);
    return st;
}

/* Write len bytes through w (opened if st is OK) and close it; abort it
 * after a failure. */
static inline npyio_status fault_write_close(npyio_status st, npyio_writer *w,
                                             const void *data, size_t len)
{
    if (st == NPYIO_OK)
        st = npyio_writer_write(w, data, len);
    if (st == NPYIO_OK)
        return npyio_writer_close(w);
    npyio_writer_abort(w);
    return st;
}

/* Close an archive writer, or abort it after a failure. */
static inline npyio_status fault_npz_close(npyio_status st,
                                           npyio_npz_writer *w)
{
    if (st != NPYIO_OK) {
        npyio_npz_writer_abort(w);
        return st;
    }
    return npyio_npz_writer_close(w);
}

/* Add the array `data` twice (if st is OK): stored as "stored", deflated
 * as "deflated". */
static inline npyio_status fault_npz_add_both(npyio_status st,
                                              npyio_npz_writer *w,
                                              const npyio_header *h,
                                              const void *data, size_t len)
{
    if (st == NPYIO_OK)
        st = npyio_npz_writer_add_with_header(w, "stored", h, data, len, 0, 0);
    if (st == NPYIO_OK)
        st = npyio_npz_writer_add_with_header(w, "deflated", h, data, len, 6, 0);
    return st;
}

/* Close the stream a writer wrote to; its failure counts only if all
 * went well before. */
static inline npyio_status fault_stream_close(npyio_status st,
                                              npyio_stream *s)
{
    npyio_status closed = npyio_stream_close(s);

    return st == NPYIO_OK ? closed : st;
}

/* Every member of an open archive (st OK) read through its stream, each
 * verified if asked; the archive is closed. */
static inline npyio_status fault_read_members(npyio_status st, npyio_npz *npz,
                                              int verify, fault_result *r)
{
    size_t i;

    for (i = 0; st == NPYIO_OK && i < npyio_npz_count(npz); i++) {
        npyio_stream *m = NULL;
        unsigned char buf[1024];
        size_t got = 0;

        st = npyio_stream_open_member(npz, i, &m);
        while (st == NPYIO_OK &&
               (st = npyio_stream_read(m, buf, sizeof buf, &got)) ==
                   NPYIO_OK &&
               got > 0)
            result_add(r, buf, got);
        npyio_stream_close(m);
        if (st == NPYIO_OK && verify)
            st = npyio_npz_verify(npz, i);
    }
    npyio_npz_close(npz);
    return st;
}

/* ---- the loop -------------------------------------------------------------------- */

typedef enum fault_kind {
    FAULT_NONE,      /* no fault: every call made as asked */
    FAULT_FAIL,      /* call `at` fails */
    FAULT_INTERRUPT, /* call `at` is interrupted (EINTR), where it can be */
    FAULT_SHORT      /* every read and write moves at most `most` bytes */
} fault_kind;

/* Where the faults come from: a test's callbacks over its own state. */
typedef struct fault_source {
    void (*arm)(void *ctx, fault_kind kind, long at, size_t most);
    void (*disarm)(void *ctx);         /* after each run; may be NULL */
    long (*calls)(const void *ctx);    /* calls made by the last run */
    const char *(*faulted)(const void *ctx); /* the one failed, or NULL */
    void *ctx;
    const char *failure;  /* what a failed run's message contains */
    int interrupts;       /* also interrupt each call in turn */
    size_t most;          /* short runs: 1, 2, ..., most bytes per call */
    /* Give the loop's options what the source needs (its OS hook); may
     * be NULL. */
    void (*attach)(void *ctx, npyio_options *o);
} fault_source;

/* An operation: its status, and what it read or wrote in *r. */
typedef npyio_status (*fault_fn)(void *ctx, const npyio_options *o,
                                 fault_result *r);

typedef struct fault_op {
    const char *name;
    fault_fn run;
    const char *dest; /* the file it writes (put back before each run), or
                         NULL */
    int in_place;     /* it writes dest in place: a failure may leave some
                         of the new bytes there */
} fault_op;

/* The names in dest's folder but dest's own, one per line between
 * newlines (malloc'd). */
static inline char *fault_neighbours(const char *dest)
{
    char folder[512], *list = malloc(2);
    const char *slash = strrchr(dest, '/'), *base = slash + 1;
    size_t len = 1;
    struct dirent *e;
    DIR *d;

    assert_non_null(slash);
    assert_non_null(list);
    snprintf(folder, sizeof folder, "%.*s", (int)(slash - dest), dest);
    d = opendir(folder);
    assert_non_null(d);
    strcpy(list, "\n");
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);

        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            strcmp(e->d_name, base) == 0)
            continue;
        list = realloc(list, len + n + 2);
        assert_non_null(list);
        memcpy(list + len, e->d_name, n);
        memcpy(list + len + n, "\n", 2);
        len += n + 1;
    }
    closedir(d);
    return list;
}

/* One run with its faults; the status, and the result in *r. */
static inline npyio_status fault_run(const fault_op *op,
                                     const fault_source *src,
                                     const npyio_options *o, fault_kind kind,
                                     long at, size_t most, fault_result *r,
                                     const unsigned char *old, size_t old_len)
{
    npyio_status st;

    if (op->dest != NULL)
        restore(op->dest, old, old_len);
    memset(r, 0, sizeof *r);
    inj.live = 0;
    src->arm(src->ctx, kind, at, most);
    st = op->run(src->ctx, o, r);
    if (src->disarm != NULL)
        src->disarm(src->ctx);
    if (inj.live != 0)
        fail_msg("%s: call %ld failed: %ld blocks not given back (%s)",
                 op->name, at, inj.live, npyio_status_string(st));
    return st;
}

/* After a failed run: the destination as it was, or (after a sync that
 * failed once the new file had taken the old one's place, which the
 * message says) as the run without faults left it; nothing beside it
 * that was not there before. */
static inline void fault_check_dest(const fault_op *op,
                                    const fault_source *src, long k,
                                    npyio_status st, const fault_result *want,
                                    const unsigned char *old, size_t old_len,
                                    const char *neighbours)
{
    const char *call = src->faulted != NULL ? src->faulted(src->ctx) : NULL;
    fault_result now = {NULL, 0};
    char *after;
    const char *line;

    if (op->dest == NULL)
        return;
    if (call == NULL)
        call = "?";
    now.bytes = snapshot(op->dest, &now.len);
    if (st != NPYIO_OK &&
        strstr(npyio_last_error(), "may not survive a crash") != NULL) {
        if (strstr(call, "sync") == NULL || !result_same(&now, want))
            fail_msg("%s: call %ld (%s) failed past the point of no return, "
                     "and %s is not the new file (%s)", op->name, k, call,
                     op->dest, npyio_last_error());
    } else if (st != NPYIO_OK && !op->in_place &&
               (now.len != old_len ||
                (old_len > 0 && memcmp(now.bytes, old, old_len) != 0))) {
        fail_msg("%s: call %ld (%s) failed: %s changed (%s)", op->name, k,
                 call, op->dest, npyio_last_error());
    }
    free(now.bytes);
    after = fault_neighbours(op->dest);
    for (line = after + 1; *line != '\0'; line = strchr(line, '\n') + 1) {
        char name[300];

        snprintf(name, sizeof name, "\n%.*s\n",
                 (int)(strchr(line, '\n') - line), line);
        if (strstr(neighbours, name) == NULL)
            fail_msg("%s: call %ld (%s) failed: %.*s left behind", op->name,
                     k, call, (int)(strlen(name) - 2), name + 1);
    }
    free(after);
}

/* The whole loop for one operation; returns the calls it makes. */
static inline long fault_every_call(const fault_op *op,
                                    const fault_source *src);

/* The loop for each of n operations. */
static inline void fault_every_op(const fault_op *ops, size_t n,
                                  const fault_source *src)
{
    size_t i;

    for (i = 0; i < n; i++)
        fault_every_call(&ops[i], src);
}

static inline long fault_every_call(const fault_op *op,
                                    const fault_source *src)
{
    npyio_options *o = failing_options(1);
    size_t old_len = 0;
    unsigned char *old =
        op->dest != NULL ? snapshot(op->dest, &old_len) : NULL;
    char *neighbours = op->dest != NULL ? fault_neighbours(op->dest) : NULL;
    fault_result want, got;
    long k, calls;
    size_t most;

    if (src->attach != NULL)
        src->attach(src->ctx, o);
    inj.fail_at = 0; /* the allocator never fails here: it counts */
    assert_ok(fault_run(op, src, o, FAULT_NONE, 0, 0, &want, old, old_len));
    calls = src->calls(src->ctx);
    assert_true(calls > 2);
    for (k = 1; k <= calls; k++) {
        npyio_status st =
            fault_run(op, src, o, FAULT_FAIL, k, 0, &got, old, old_len);

        if (st == NPYIO_OK ? !result_same(&got, &want)
                           : st != NPYIO_E_IO ||
                                 strstr(npyio_last_error(), src->failure) ==
                                     NULL)
            fail_msg("%s: call %ld of %ld (%s) failed: %s (%s), expected "
                     "NPYIO_E_IO saying \"%s\" or the whole result",
                     op->name, k, calls,
                     src->faulted != NULL && src->faulted(src->ctx) != NULL
                         ? src->faulted(src->ctx)
                         : "?",
                     npyio_status_string(st), npyio_last_error(),
                     src->failure);
        fault_check_dest(op, src, k, st, &want, old, old_len, neighbours);
        free(got.bytes);
        if (!src->interrupts)
            continue;
        st = fault_run(op, src, o, FAULT_INTERRUPT, k, 0, &got, old,
                       old_len);
        if (st != NPYIO_OK || !result_same(&got, &want))
            fail_msg("%s: call %ld interrupted: %s (%s)", op->name, k,
                     npyio_status_string(st), npyio_last_error());
        free(got.bytes);
    }
    for (most = 1; most <= src->most; most++) {
        npyio_status st =
            fault_run(op, src, o, FAULT_SHORT, 0, most, &got, old, old_len);

        if (st != NPYIO_OK || !result_same(&got, &want))
            fail_msg("%s: %zu bytes per read and write: %s (%s)", op->name,
                     most, npyio_status_string(st), npyio_last_error());
        free(got.bytes);
    }
    free(want.bytes);
    if (op->dest != NULL)
        restore(op->dest, old, old_len);
    free(old);
    free(neighbours);
    npyio_options_free(o);
    return calls;
}

#endif /* NPYIO_FAULT_H */
