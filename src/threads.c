/*
 * threads.c - work cut into jobs, run on a few threads (POSIX threads):
 * for deflating an archive member's blocks at once, inflating an indexed
 * member's, and reads cut into parts (stream.c's read in parts); and the
 * thread policy, the one place that says how many threads a call gets
 * (npyio__thread_count). No lock is shared between jobs: each claims the
 * next index with one atomic add.
 */
#include "threads.h"

#include <pthread.h>
#include <stdatomic.h>

#define MAX_THREADS 64

typedef struct parallel {
    void (*fn)(void *ctx, size_t job);
    void *ctx;
    size_t jobs;
    atomic_size_t next; /* the next job to claim */
} parallel;

static void *parallel_worker(void *arg)
{
    parallel *p = arg;
    size_t i;

    while ((i = atomic_fetch_add(&p->next, 1)) < p->jobs)
        p->fn(p->ctx, i);
    return NULL;
}

void npyio__run_parallel(size_t jobs, unsigned threads,
                         void (*fn)(void *ctx, size_t job), void *ctx)
{
    pthread_t started[MAX_THREADS];
    parallel p;
    unsigned n = 0, i;

    p.fn = fn;
    p.ctx = ctx;
    p.jobs = jobs;
    atomic_init(&p.next, 0);
    if ((size_t)threads > jobs)
        threads = (unsigned)jobs;
    for (i = 1; i < threads && n < MAX_THREADS - 1; i++)
        if (pthread_create(&started[n], NULL, parallel_worker, &p) == 0)
            n++;
    parallel_worker(&p);
    for (i = 0; i < n; i++)
        pthread_join(started[i], NULL);
}

static void *background_main(void *arg)
{
    npyio__background *bg = arg;

    npyio__run_parallel(bg->jobs, bg->threads, bg->fn, bg->ctx);
    return NULL;
}

void npyio__background_start(npyio__background *bg, size_t jobs,
                             unsigned threads,
                             void (*fn)(void *ctx, size_t job), void *ctx)
{
    bg->fn = fn;
    bg->ctx = ctx;
    bg->jobs = jobs;
    bg->threads = threads;
    bg->started = pthread_create(&bg->thread, NULL, background_main, bg) == 0;
    if (!bg->started)
        npyio__run_parallel(jobs, threads, fn, ctx);
}

void npyio__background_wait(npyio__background *bg)
{
    if (bg->started)
        pthread_join(bg->thread, NULL);
    bg->started = false;
}

size_t npyio__part_bytes_min = (size_t)2 << 20;

unsigned npyio__thread_count(int64_t limit, uint64_t work_bytes,
                             bool positioned)
{
    uint64_t bytes_min = npyio__part_bytes_min == 0 ? 1 : npyio__part_bytes_min;
    uint64_t threads = limit > MAX_THREADS ? MAX_THREADS
                       : limit < 1         ? 1
                                           : (uint64_t)limit;

    if (!positioned)
        return 1;
    if (work_bytes != NPYIO__WORK_UNKNOWN && work_bytes / bytes_min < threads)
        threads = work_bytes / bytes_min;
    return threads < 1 ? 1u : (unsigned)threads;
}

size_t npyio__part_count(uint64_t units, size_t unit_bytes, unsigned threads)
{
    uint64_t bytes_min = npyio__part_bytes_min == 0 ? 1 : npyio__part_bytes_min;
    uint64_t parts = threads < 1 ? 1 : threads;

    if (parts > MAX_THREADS)
        parts = MAX_THREADS;
    if (parts > units)
        parts = units;
    if (unit_bytes != 0 && units <= UINT64_MAX / unit_bytes &&
        units * unit_bytes / bytes_min < parts)
        parts = units * unit_bytes / bytes_min;
    return parts < 1 ? 1 : (size_t)parts;
}

uint64_t npyio__part_start(uint64_t units, size_t parts, size_t k)
{
    uint64_t q = units / parts, rem = units % parts;

    return q * k + (k < rem ? k : rem);
}
