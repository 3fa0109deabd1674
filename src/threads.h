/*
 * threads.h - run independent jobs on several threads (threads.c).
 */
#ifndef NPYIO_THREADS_H
#define NPYIO_THREADS_H

#include <stddef.h>

/* Run fn(ctx, i) for every i in [0, jobs) on up to `threads` threads (the
 * caller's among them, at most 64), each job once; returns when all are
 * done. If a thread cannot be started, the threads that could (at least
 * the caller) do the remaining jobs: never a failure. */
void npyio__run_parallel(size_t jobs, unsigned threads,
                         void (*fn)(void *ctx, size_t job), void *ctx);

#endif /* NPYIO_THREADS_H */
