/*
 * tasks_tool.c - the one-call task functions, driven by tasks_check.py,
 * which compares what they write with what NumPy writes and reads:
 *
 *   tasks_tool typed DIR               one file per C type (NPYIO_SAVE)
 *   tasks_tool append PATH N           N rows of 3 doubles (NPYIO_APPEND)
 *   tasks_tool savez PATH              a, b stored, c deflated (npyio_savez)
 *   tasks_tool savez-append PATH KEY LEVEL   a float32 pair
 *   tasks_tool load PATH               npyio_load: "TYPE NDIM D0 D1 .. NBYTES"
 *
 * The values are formulas tasks_check.py computes again: element i of
 * every typed file is i * 3 - 5 (unsigned: i * 3; _Bool: i % 2).
 */
#include <npyio.h>

#include <complex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, npyio_status st)
{
    fprintf(stderr, "tasks_tool: %s: %s (%s)\n", what,
            npyio_status_string(st), npyio_last_error());
    return 1;
}

/* One file per C type, each a (2, 3) array; the type string is the
 * compiler's choice (NPYIO_TYPE_OF), printed for the check to compare with
 * NumPy's dtype of the same C type. */
#define TYPED(T, name, expr)                                                 \
    do {                                                                     \
        T v[6];                                                              \
        char path[4096];                                                     \
        npyio_status st;                                                     \
        for (int i = 0; i < 6; i++)                                          \
            v[i] = (T)(expr);                                                \
        snprintf(path, sizeof path, "%s/%s.npy", dir, name);                 \
        st = NPYIO_SAVE(path, 2, shape, v, sizeof v, NPYIO_WRITE_NO_SYNC,    \
                        NULL);                                               \
        if (st != NPYIO_OK)                                                  \
            return fail(path, st);                                           \
        printf("%s %s\n", name, NPYIO_TYPE_OF(v));                           \
    } while (0)

static int typed_cmd(const char *dir)
{
    const int64_t shape[2] = {2, 3};

    TYPED(_Bool, "bool", i % 2);
    TYPED(signed char, "schar", i * 3 - 5);
    TYPED(unsigned char, "uchar", i * 3);
    TYPED(short, "short", i * 3 - 5);
    TYPED(unsigned short, "ushort", i * 3);
    TYPED(int, "int", i * 3 - 5);
    TYPED(unsigned int, "uint", i * 3);
    TYPED(long, "long", i * 3 - 5);
    TYPED(unsigned long, "ulong", i * 3);
    TYPED(long long, "longlong", i * 3 - 5);
    TYPED(unsigned long long, "ulonglong", i * 3);
    TYPED(float, "float", i * 3 - 5);
    TYPED(double, "double", i * 3 - 5);
    TYPED(long double, "longdouble", i * 3 - 5);
    TYPED(float _Complex, "cfloat", i * 3 - 5 + I * i);
    TYPED(double _Complex, "cdouble", i * 3 - 5 + I * i);
    TYPED(long double _Complex, "clongdouble", i * 3 - 5 + I * i);
    return 0;
}

/* n rows of 3 doubles, row r holding 100 + 3r + c. */
static int append_cmd(const char *path, int n)
{
    double *rows = malloc((size_t)n * 3 * sizeof *rows + 1);
    const int64_t shape[2] = {n, 3};
    npyio_status st;

    for (int i = 0; i < n * 3; i++)
        rows[i] = 100 + i;
    st = NPYIO_APPEND(path, 2, shape, rows, (size_t)n * 3 * sizeof *rows,
                      NPYIO_WRITE_NO_SYNC, NULL);
    free(rows);
    return st == NPYIO_OK ? 0 : fail("append", st);
}

/* Three arrays in one call: a and b stored, c deflated. */
static int savez_cmd(const char *path)
{
    static int32_t a[4] = {1, -2, 3, -4};
    static double b[5] = {0.5, 1.5, 2.5, 3.5, 4.5};
    static double c[1000];
    const int64_t sa[2] = {2, 2}, sb[1] = {5}, sc[1] = {1000};
    const char *keys[3] = {"a", "b", "c"};
    const char *types[3] = {NPYIO_TYPE_OF(a), NPYIO_TYPE_OF(b),
                            NPYIO_TYPE_OF(c)};
    const int ndims[3] = {2, 1, 1}, levels[3] = {0, 0, 6};
    const int64_t *shapes[3] = {sa, sb, sc};
    const void *data[3] = {a, b, c};
    const size_t lens[3] = {sizeof a, sizeof b, sizeof c};
    npyio_status st;

    for (int i = 0; i < 1000; i++)
        c[i] = i % 7;
    st = npyio_savez(path, 3, keys, types, ndims, shapes, data, lens, levels,
                     NPYIO_WRITE_NO_SYNC, NULL);
    return st == NPYIO_OK ? 0 : fail("savez", st);
}

static int savez_append_cmd(const char *path, const char *key, int level)
{
    const float pair[2] = {1.5f, 2.5f};
    const int64_t shape[1] = {2};
    npyio_status st = npyio_savez_append(path, key, NPYIO_TYPE_OF(pair), 1,
                                         shape, pair, sizeof pair, level,
                                         NPYIO_WRITE_NO_SYNC, NULL);

    return st == NPYIO_OK ? 0 : fail("savez_append", st);
}

static int load_cmd(const char *path)
{
    void *data = NULL;
    size_t len = 0;
    char type[256];
    int ndim = 0;
    int64_t shape[64];
    npyio_status st = npyio_load(path, NULL, &data, &len, type, sizeof type,
                                 &ndim, shape, 64);

    if (st != NPYIO_OK)
        return fail("load", st);
    printf("%s %d", type, ndim);
    for (int i = 0; i < ndim; i++)
        printf(" %lld", (long long)shape[i]);
    printf(" %zu\n", len);
    npyio_free(data);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "typed") == 0)
        return typed_cmd(argv[2]);
    if (argc == 4 && strcmp(argv[1], "append") == 0)
        return append_cmd(argv[2], atoi(argv[3]));
    if (argc == 3 && strcmp(argv[1], "savez") == 0)
        return savez_cmd(argv[2]);
    if (argc == 5 && strcmp(argv[1], "savez-append") == 0)
        return savez_append_cmd(argv[2], argv[3], atoi(argv[4]));
    if (argc == 3 && strcmp(argv[1], "load") == 0)
        return load_cmd(argv[2]);
    fprintf(stderr, "usage: tasks_tool typed DIR | append PATH N | savez PATH"
                    " | savez-append PATH KEY LEVEL | load PATH\n");
    return 2;
}
