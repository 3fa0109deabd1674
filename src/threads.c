/*
 * threads.c - work cut into jobs, run on a few threads (POSIX threads):
 * for deflating an archive member's blocks at once. No lock is shared
 * between jobs: each claims the next index with one atomic add.
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
