/*
 * fuzz_common.h - what the fuzz targets share: a check that aborts (so
 * libFuzzer and the replay both report it as a crash), the untrusted
 * options with a given allocation bound, and scratch files named by the
 * process (parallel fuzzing jobs never share one).
 *
 * Header-only and static: each target is one translation unit, linked
 * either with libFuzzer or with replay.c.
 */
#ifndef NPYIO_FUZZ_COMMON_H
#define NPYIO_FUZZ_COMMON_H

#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npyio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline void check(int condition)
{
    if (!condition)
        abort();
}

/* A hash of the bytes, eight at a time (reads of megabytes stay cheap). */
static inline uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t w;

    for (; n >= 8; n -= 8, b += 8) {
        memcpy(&w, b, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
    }
    for (; n > 0; n--, b++)
        h = (h ^ *b) * 0x100000001b3ull;
    return h;
}

/* The untrusted preset, made once; alloc_bytes > 0 also bounds a single
 * allocation and npz_member_bytes > 0 a member's size, so that a claimed
 * size costs nothing. */
static inline npyio_options *fuzz_options(int64_t alloc_bytes,
                                   int64_t npz_member_bytes)
{
    static npyio_options *o;

    if (o == NULL) {
        check(npyio_options_new(&o) == NPYIO_OK);
        check(npyio_options_set_untrusted(o) == NPYIO_OK);
        if (alloc_bytes > 0)
            check(npyio_options_set_limit(o, NPYIO_LIMIT_ALLOC_BYTES,
                                          alloc_bytes) == NPYIO_OK);
        if (npz_member_bytes > 0)
            check(npyio_options_set_limit(o, NPYIO_LIMIT_NPZ_MEMBER_BYTES,
                                          npz_member_bytes) == NPYIO_OK);
    }
    return o;
}

/* A path in directory dir for this process: which = 0, 1, 2, 3 for
 * several (each keeps its own buffer). */
static inline const char *fuzz_scratch_in(const char *dir, const char *target,
                                          int which, const char *suffix)
{
    static char paths[4][160];
    char *p = paths[which & 3];

    snprintf(p, sizeof paths[0], "%s/%s-%ld-%d%s", dir, target,
             (long)getpid(), which, suffix);
    return p;
}

/* A path in /tmp for this process: which = 0, 1, ... for several. */
static inline const char *fuzz_scratch(const char *target, int which,
                                const char *suffix)
{
    return fuzz_scratch_in("/tmp", target, which, suffix);
}

/* A directory in memory for scratch files that are written, renamed and
 * removed on every input: /dev/shm (tmpfs) where it can be written, else
 * /tmp. */
static inline const char *fuzz_memory_dir(void)
{
    return access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
}

static inline void fuzz_put_file(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");

    check(f != NULL && fwrite(p, 1, n, f) == n && fclose(f) == 0);
}

/* A whole file, in a new buffer (free()); NULL if it does not exist. */
static inline unsigned char *fuzz_get_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *b;
    long len = 0;

    if (f == NULL)
        return NULL;
    check(fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 &&
          fseek(f, 0, SEEK_SET) == 0);
    b = malloc(len > 0 ? (size_t)len : 1);
    check(b != NULL && fread(b, 1, (size_t)len, f) == (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return b;
}

/* The file is exactly these bytes. */
static inline void fuzz_check_file(const char *path, const uint8_t *p, size_t n)
{
    size_t len = 0;
    unsigned char *now = fuzz_get_file(path, &len);

    check(now != NULL && len == n && memcmp(now, p, n) == 0);
    free(now);
}

#endif
