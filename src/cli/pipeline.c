/*
 * pipeline.c - parts produced on N threads into 2N reusable buffers,
 * written in order by the calling thread (pipeline.h).
 *
 * Part k goes into buffer k mod 2N, and is claimed only once part
 * k - 2N has been written: a thread never waits for a buffer while
 * holding a claim the writer waits for, so the writer always makes
 * progress. One mutex and one condition variable: a handful of waits per
 * part of megabytes.
 */
#define _POSIX_C_SOURCE 200809L
#include "pipeline.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NO_PART UINT64_MAX

typedef struct slot {
    unsigned char *buf;
    uint64_t ready; /* the part it holds, once produced; NO_PART */
} slot;

typedef struct run {
    const cli_pipeline *p;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t per;     /* units a part holds (the last may hold fewer) */
    uint64_t parts;
    uint64_t claimed; /* the next part to claim */
    uint64_t written; /* the next part to write */
    uint64_t failed;  /* the first part that could not be produced */
    int stop;         /* the writer is done: claim nothing more */
    npyio_status st;
    char *message;
    size_t cap;
    slot *slots;
    size_t nslots;
} run;

typedef struct worker {
    run *r;
    unsigned id;
} worker;

uint64_t cli_part_units(size_t out_unit)
{
    uint64_t n = out_unit == 0 ? CLI_PART_BYTES : CLI_PART_BYTES / out_unit;

    return n < 1 ? 1 : n;
}

static uint64_t part_count(const run *r, uint64_t k)
{
    uint64_t first = k * r->per;

    return r->p->units - first < r->per ? r->p->units - first : r->per;
}

/* The next part whose buffer is free, claimed; 0 when there is none. */
static int claim(run *r, uint64_t *k)
{
    for (;;) {
        if (r->stop || r->claimed >= r->parts || r->claimed >= r->failed)
            return 0;
        if (r->claimed < r->written + r->nslots) {
            *k = r->claimed++;
            return 1;
        }
        pthread_cond_wait(&r->cv, &r->mu);
    }
}

/* A part that could not be produced: the first such one is reported
 * (what one thread, producing in order, would have met first). */
static void record_failure(run *r, uint64_t k, npyio_status st)
{
    if (k >= r->failed)
        return;
    r->failed = k;
    r->st = st;
    if (r->cap > 0)
        snprintf(r->message, r->cap, "%s", npyio_last_error());
}

static void *work(void *arg)
{
    worker *w = arg;
    run *r = w->r;
    uint64_t k = 0;

    pthread_mutex_lock(&r->mu);
    while (claim(r, &k)) {
        slot *s = &r->slots[k % r->nslots];
        npyio_status st;

        pthread_mutex_unlock(&r->mu);
        st = r->p->produce(r->p->ctx, w->id, k * r->per, part_count(r, k),
                           s->buf);
        pthread_mutex_lock(&r->mu);
        if (st != NPYIO_OK)
            record_failure(r, k, st);
        else
            s->ready = k;
        pthread_cond_broadcast(&r->cv);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

/* Write part `written` once it is produced; 0, or -1 when the writing
 * ends (everything written, a part failed, or the sink failed). */
static int write_next(run *r)
{
    slot *s = &r->slots[r->written % r->nslots];
    uint64_t k = r->written;
    size_t len;
    npyio_status st;

    if (k >= r->parts || k >= r->failed)
        return -1;
    if (s->ready != k) {
        pthread_cond_wait(&r->cv, &r->mu);
        return 0;
    }
    len = (size_t)(part_count(r, k) * r->p->out_unit);
    pthread_mutex_unlock(&r->mu);
    st = r->p->sink(r->p->ctx, s->buf, len);
    if (st == NPYIO_OK && r->p->bar != NULL)
        cli_progress_update(r->p->bar, (k * r->per + part_count(r, k)) *
                                           r->p->out_unit);
    pthread_mutex_lock(&r->mu);
    if (st != NPYIO_OK) {
        r->st = st;
        r->stop = 2;
        return -1;
    }
    s->ready = NO_PART;
    r->written++;
    pthread_cond_broadcast(&r->cv);
    return 0;
}

/* No thread could be started: the calling thread produces each part
 * into the first buffer, then writes it. */
static void run_alone(run *r)
{
    slot *s = &r->slots[0];
    uint64_t k;

    for (k = 0; k < r->parts; k++) {
        npyio_status st = r->p->produce(r->p->ctx, 0, k * r->per,
                                        part_count(r, k), s->buf);

        if (st != NPYIO_OK) {
            record_failure(r, k, st);
            return;
        }
        s->ready = k;
        if (write_next(r) != 0)
            return;
    }
}

/* The threads started, the writing done, the threads joined. */
static void run_threads(run *r)
{
    pthread_t started[CLI_PIPE_MAX_THREADS];
    worker ws[CLI_PIPE_MAX_THREADS];
    unsigned n = 0, i;

    for (i = 0; i < r->p->threads && i < CLI_PIPE_MAX_THREADS; i++) {
        ws[n].r = r;
        ws[n].id = n;
        if (pthread_create(&started[n], NULL, work, &ws[n]) == 0)
            n++;
    }
    if (n == 0)
        run_alone(r);
    while (n > 0 && write_next(r) == 0)
        ;
    if (r->stop == 0)
        r->stop = 1;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    for (i = 0; i < n; i++)
        pthread_join(started[i], NULL);
    pthread_mutex_lock(&r->mu);
}

static int buffers_new(run *r)
{
    size_t i, size = (size_t)(r->per * r->p->out_unit);

    r->nslots = 2 * (size_t)r->p->threads;
    r->slots = calloc(r->nslots, sizeof *r->slots);
    if (r->slots == NULL)
        return -1;
    for (i = 0; i < r->nslots; i++) {
        r->slots[i].ready = NO_PART;
        if ((r->slots[i].buf = cli_buffer(size)) == NULL)
            return -1;
    }
    return 0;
}

static void buffers_free(run *r, size_t n)
{
    size_t i;

    for (i = 0; r->slots != NULL && i < n; i++)
        free(r->slots[i].buf);
    free(r->slots);
}

int cli_pipeline_run(const cli_pipeline *p, npyio_status *st, char *message,
                     size_t cap)
{
    run r;
    size_t allocated;
    int rc;

    memset(&r, 0, sizeof r);
    r.p = p;
    r.per = cli_part_units(p->out_unit);
    r.parts = p->units / r.per + (p->units % r.per != 0);
    r.failed = NO_PART;
    r.st = NPYIO_OK;
    r.message = message;
    r.cap = cap;
    if (cap > 0)
        message[0] = '\0';
    if (p->units > 0 && buffers_new(&r) != 0) {
        buffers_free(&r, r.nslots);
        *st = NPYIO_E_NOMEM;
        if (cap > 0)
            snprintf(message, cap, "out of memory (the threads' buffers)");
        return CLI_PIPE_READ;
    }
    allocated = r.nslots;
    pthread_mutex_init(&r.mu, NULL);
    pthread_cond_init(&r.cv, NULL);
    pthread_mutex_lock(&r.mu);
    if (r.parts > 0)
        run_threads(&r);
    pthread_mutex_unlock(&r.mu);
    pthread_cond_destroy(&r.cv);
    pthread_mutex_destroy(&r.mu);
    buffers_free(&r, allocated);
    *st = r.st;
    rc = r.stop == 2 ? CLI_PIPE_WRITE
         : r.failed != NO_PART ? CLI_PIPE_READ
                               : CLI_PIPE_DONE;
    return rc;
}
