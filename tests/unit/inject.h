/*
 * inject.h - what the failure-injection tests share: an allocator that
 * fails its k-th call and counts the blocks it has out (locked: worker
 * threads allocate too), and file snapshots to show that a failed write
 * left a file as it was. Include after testutil.h, with pthread.h.
 */
#ifndef NPYIO_INJECT_H
#define NPYIO_INJECT_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- the failing allocator ---------------------------------------------------- */

typedef struct injector {
    pthread_mutex_t lock;
    long calls;   /* allocations and reallocations so far */
    long fail_at; /* the call that fails (1-based); 0: none */
    long live;    /* blocks handed out and not freed */
    int failed;   /* the failure was injected */
} injector;

static injector inj = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0};

static inline int should_fail(void)
{
    int fail;

    pthread_mutex_lock(&inj.lock);
    fail = ++inj.calls == inj.fail_at;
    if (fail)
        inj.failed = 1;
    pthread_mutex_unlock(&inj.lock);
    return fail;
}

static inline void count_live(long delta)
{
    pthread_mutex_lock(&inj.lock);
    inj.live += delta;
    pthread_mutex_unlock(&inj.lock);
}

static inline void *inj_alloc(void *user, size_t size, size_t alignment)
{
    void *p;

    (void)user;
    if (should_fail())
        return NULL;
    p = aligned_alloc(alignment, (size + alignment - 1) / alignment *
                                     alignment);
    if (p != NULL)
        count_live(1);
    return p;
}

static inline void *inj_realloc(void *user, void *ptr, size_t old_size,
                         size_t new_size, size_t alignment)
{
    void *p;

    (void)user;
    if (should_fail())
        return NULL;
    p = aligned_alloc(alignment, (new_size + alignment - 1) / alignment *
                                     alignment);
    if (p != NULL) {
        memcpy(p, ptr, old_size < new_size ? old_size : new_size);
        free(ptr);
    }
    return p;
}

static inline void inj_free(void *user, void *ptr, size_t size)
{
    (void)user;
    (void)size;
    free(ptr);
    count_live(-1);
}

static inline npyio_options *failing_options(int64_t threads)
{
    npyio_allocator a = {sizeof a, inj_alloc, inj_realloc, inj_free};
    npyio_options *o = NULL;

    assert_ok(npyio_options_new(&o));
    assert_ok(npyio_options_set_allocator(o, &a, NULL));
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_THREADS, threads));
    return o;
}

/* ---- the loop ------------------------------------------------------------------- */

/* A file's bytes (malloc'd; NULL and 0 if it does not exist). */
static inline unsigned char *snapshot(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *b = NULL;
    long n;

    *len = 0;
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    b = malloc(n > 0 ? (size_t)n : 1);
    *len = fread(b, 1, (size_t)n, f);
    fclose(f);
    return b;
}

/* Put the file back as it was (or remove it, if there was none). */
static inline void restore(const char *path, const unsigned char *bytes,
                           size_t len)
{
    FILE *f;

    if (bytes == NULL) {
        remove(path);
        return;
    }
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

#endif
