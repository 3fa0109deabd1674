/*
 * scratch.h - a scratch directory per test program, and the small file
 * helpers the tests of writers and maps share: make the directory in the
 * group setup (scratch_make), remove it in the teardown (scratch_remove).
 * Include after testutil.h, with _POSIX_C_SOURCE 200809L defined.
 */
#ifndef NPYIO_SCRATCH_H
#define NPYIO_SCRATCH_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char dir[64];

static inline int scratch_make(const char *prefix)
{
    snprintf(dir, sizeof dir, "/tmp/%s-XXXXXX", prefix);
    return mkdtemp(dir) != NULL ? 0 : -1;
}

static inline int scratch_remove(void **state)
{
    char cmd[128];

    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static inline void path_in_dir(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

/* Entries of folder `path` whose names start with '.' (temporaries and
 * look-alikes), "." and ".." left out; -1 if it cannot be listed. */
static inline int scratch_hidden_entries(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    int n = 0;

    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] == '.' && strcmp(e->d_name, ".") != 0 &&
            strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

static inline npyio_header *make_header(const char *type, int ndim,
                                 const int64_t *shape, int fortran)
{
    npyio_dtype *dt = NULL;
    npyio_header *h = NULL;

    assert_ok(npyio_dtype_parse(type, strlen(type), NULL, &dt));
    assert_ok(npyio_header_new(dt, ndim, shape, fortran, &h));
    npyio_dtype_unref(dt);
    return h;
}

/* At most 1 MiB of a file. */
static inline unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = malloc(1 << 20);

    assert_non_null(f);
    assert_non_null(buf);
    *len = fread(buf, 1, 1 << 20, f);
    fclose(f);
    return buf;
}

/* Entries of a directory, "." and ".." aside. */
static inline int entries(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    int n = 0;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

#endif /* NPYIO_SCRATCH_H */
