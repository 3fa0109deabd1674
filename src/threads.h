/*
 * threads.h - run independent jobs on several threads (threads.c).
 */
#ifndef NPYIO_THREADS_H
#define NPYIO_THREADS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Run fn(ctx, i) for every i in [0, jobs) on up to `threads` threads (the
 * caller's among them, at most 64), each job once; returns when all are
 * done. If a thread cannot be started, the threads that could (at least
 * the caller) do the remaining jobs: never a failure. */
void npyio__run_parallel(size_t jobs, unsigned threads,
                         void (*fn)(void *ctx, size_t job), void *ctx);

/* Jobs run as npyio__run_parallel runs them, on threads of their own
 * while the caller goes on: npyio__background_wait before using what
 * they make or letting ctx go. If no thread can be started, the jobs run
 * in npyio__background_start, on the caller's thread. */
typedef struct npyio__background {
    void (*fn)(void *ctx, size_t job);
    void *ctx;
    size_t jobs;
    unsigned threads;
    bool started;
    pthread_t thread;
} npyio__background;

void npyio__background_start(npyio__background *bg, size_t jobs,
                             unsigned threads,
                             void (*fn)(void *ctx, size_t job), void *ctx);
void npyio__background_wait(npyio__background *bg);

/* The smallest part of an array's data one thread of a parallel load or
 * conversion takes, in bytes (2 MiB: a thread costs tens of
 * microseconds). Tests lower it, before starting any thread, to cut
 * small arrays into parts; nothing else writes it. */
extern size_t npyio__part_bytes_min;

/* Work whose size is not known when its threads are chosen. */
#define NPYIO__WORK_UNKNOWN UINT64_MAX

/*
 * The thread policy: how many threads a call gets, the one place that
 * decides it. NPYIO_LIMIT_THREADS (`limit`, as the options hold it: below
 * 1 counts as 1, above 64 as 64) bounds it; work of `work_bytes` bytes
 * gets no more threads than it has parts of npyio__part_bytes_min (work
 * of NPYIO__WORK_UNKNOWN bytes: the limit alone); a source without
 * positioned reads gets one (threads would take turns at its one
 * position). Always at least 1.
 */
unsigned npyio__thread_count(int64_t limit, uint64_t work_bytes,
                             bool positioned);

/* How many parts `units` units of `unit_bytes` bytes each are cut into
 * for `threads` threads: at most one per thread and per unit, none
 * smaller than npyio__part_bytes_min (at least 1 part). */
size_t npyio__part_count(uint64_t units, size_t unit_bytes, unsigned threads);

/* The first unit of part k of `parts` over `units` units (k == parts:
 * units); the parts differ in size by at most one unit. */
uint64_t npyio__part_start(uint64_t units, size_t parts, size_t k);

#endif /* NPYIO_THREADS_H */
