/*
 * bench.h - the benchmarks' command line: "--name value" pairs, read into
 * the variables a table names. Every bench takes its options this way
 * (bench_dump after its first, positional, argument), so they all treat a
 * command line alike: a name the table does not know is passed over with
 * its value, as is a last name without one, and a name given twice keeps
 * its last value. Numbers are read as atoi, atol and atof read them (no
 * error: the benches check the values they get).
 */
#ifndef NPYIO_BENCH_H
#define NPYIO_BENCH_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef enum bench_kind {
    BENCH_INT,    /* int, atoi */
    BENCH_SIZE,   /* size_t, atol */
    BENCH_DOUBLE, /* double, atof */
    BENCH_BYTES,  /* size_t, bench_bytes: "N", "NK" or "NM" */
    BENCH_TEXT    /* const char *, the argument itself */
} bench_kind;

/* One option: its name ("--size"), kind and variable. */
typedef struct bench_option {
    const char *name;
    bench_kind kind;
    void *value;
} bench_option;

/* The options most benches share, and the end of every table. */
#define BENCH_SIZE_ROUNDS_DIR(mib, rounds, dir)                              \
    {"--size", BENCH_SIZE, &(mib)}, {"--rounds", BENCH_INT, &(rounds)},     \
        {"--dir", BENCH_TEXT, &(dir)}
#define BENCH_END {NULL, BENCH_INT, NULL}

/* A byte count: "N" or "NM" MiB, "NK" KiB; 0 if it is neither. */
static inline size_t bench_bytes(const char *text)
{
    char *end;
    unsigned long n = strtoul(text, &end, 10);

    if (strcmp(end, "K") == 0 || strcmp(end, "k") == 0)
        return (size_t)n << 10;
    return strcmp(end, "M") == 0 || *end == '\0' ? (size_t)n << 20 : 0;
}

static inline void bench_set(const bench_option *o, char *text)
{
    switch (o->kind) {
    case BENCH_INT:
        *(int *)o->value = atoi(text);
        break;
    case BENCH_SIZE:
        *(size_t *)o->value = (size_t)atol(text);
        break;
    case BENCH_DOUBLE:
        *(double *)o->value = atof(text);
        break;
    case BENCH_BYTES:
        *(size_t *)o->value = bench_bytes(text);
        break;
    case BENCH_TEXT:
        *(const char **)o->value = text;
        break;
    }
}

/* Read argv[first..argc) as "--name value" pairs into the options of
 * table, which ends with an entry whose name is NULL. */
static inline void bench_args(int argc, char **argv, int first,
                              const bench_option *table)
{
    const bench_option *o;
    int i;

    for (i = first; i + 1 < argc; i += 2)
        for (o = table; o->name != NULL; o++)
            if (strcmp(argv[i], o->name) == 0) {
                bench_set(o, argv[i + 1]);
                break;
            }
}

/* A command line of just the options most benches share. */
static inline void bench_size_rounds_dir(int argc, char **argv, size_t *mib,
                                         int *rounds, const char **dir)
{
    const bench_option table[] = {BENCH_SIZE_ROUNDS_DIR(*mib, *rounds, *dir),
                                  BENCH_END};

    bench_args(argc, argv, 1, table);
}

#endif /* NPYIO_BENCH_H */
