/*
 * arrays.h - the fixture of the tests on NumPy's array corpus
 * (tests/data/arrays, made by gen_arrays.py; test_arrays.c, test_chunks.c):
 * its manifest's columns, its files by case name, NumPy's bytes for a
 * whole read with each flag combination, and a scratch file per process.
 * Include after testutil.h and testdata.h, with _POSIX_C_SOURCE 200809L
 * defined.
 */
#ifndef NPYIO_ARRAYS_H
#define NPYIO_ARRAYS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The columns of arrays/manifest.tsv. */
enum { A_NAME, A_FILE, A_FORTRAN, A_NDIM, A_SHAPE, A_ITEMSIZE, A_NBYTES,
       A_OFFSET, A_OBJECT, A_COLUMNS };

/* The rows of arrays/manifest.tsv (tsv_free when done). */
static inline void arrays_manifest(tsv_table *t)
{
    tsv_load("arrays/manifest.tsv", t);
}

/* The file arrays/NAME SUFFIX (".npy", ".le.bin", ...), read whole. */
static inline unsigned char *array_file(const char *name, const char *suffix,
                                        size_t *len)
{
    char rel[256];

    snprintf(rel, sizeof rel, "arrays/%s%s", name, suffix);
    return read_data_file(rel, len);
}

/* The path of the case's .npy file. */
static inline void array_path(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/arrays/%s.npy", NPYIO_TEST_DATA_DIR, name);
}

/* NumPy's bytes for a whole read of case NAME with these flags on this
 * host: the NBYTES stored at OFFSET of its file for flags 0, else the
 * case's .bin file for the conversion. */
static inline unsigned char *array_expected(const char *name,
                                            const unsigned char *file,
                                            size_t offset, size_t nbytes,
                                            unsigned flags, size_t *len)
{
    static const char *const suffix[2][4] = {
        {NULL, ".le.bin", ".c.bin", ".c_le.bin"},
        {NULL, ".be.bin", ".c.bin", ".c_be.bin"}};
    unsigned char *copy;

    if (flags == 0) { /* as stored */
        copy = malloc(nbytes + 1);
        memcpy(copy, file + offset, nbytes);
        *len = nbytes;
        return copy;
    }
    return array_file(name, suffix[host_order() == '>'][flags], len);
}

/* A file of this process under /tmp for the test's own writes, named by
 * TAG ("/tmp/npyio-TAG-PID.npy"). */
static inline void array_scratch_path(char *out, size_t cap, const char *tag)
{
    snprintf(out, cap, "/tmp/npyio-%s-%ld.npy", tag, (long)getpid());
}

#endif /* NPYIO_ARRAYS_H */
