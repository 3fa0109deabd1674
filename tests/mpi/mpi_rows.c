/*
 * mpi_rows.c - many MPI ranks, one .npy array (ctest label mpi, run by
 * tests/mpi/run_mpi.sh under mpirun):
 *
 *   mpi_rows FILE fill     rank 0 creates FILE with the header of the final
 *                          shape (ranks * ROWS, COLS) of float64, its data a
 *                          sparse hole; after a barrier every rank writes
 *                          its own block of ROWS rows in place (positional
 *                          writes of whole rows: no shared offset, no
 *                          lock between writers), and after another each
 *                          reads back a random range of the block of the
 *                          next rank and checks every value;
 *   mpi_rows FILE append   rank 0 creates FILE with 0 rows; every rank
 *                          then appends BATCHES blocks of ROWS rows, each
 *                          append waiting for the file's append lock
 *                          (NPYIO_WRITE_WAIT_FOR_LOCK), and rank 0 checks
 *                          the final row count and that every block is
 *                          there once, whole.
 *
 * Element (r, c) of the fill is r * 1000 + c + 0.5; rows of an appended
 * block hold (rank * 100 + batch) * 1000 + row-in-block in every column.
 * Exits 0 when every rank's checks passed (the verdict is reduced to rank
 * 0, which prints "mpi_rows MODE OK"); tests/mpi/check_mpi.py then loads
 * FILE with NumPy.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npyio.h"

enum { ROWS = 300, COLS = 7, BATCHES = 3 };

static int failures;

static void fail(int rank, const char *what, npyio_status st)
{
    fprintf(stderr, "rank %d: %s: %s (%s)\n", rank, what,
            npyio_status_string(st), npyio_last_error());
    failures++;
}

/* A float64 header of `rows` rows, in this host's byte order. */
static npyio_header *rows_header(int64_t rows)
{
    npyio_dtype *dt = NULL;
    npyio_header *h = NULL;
    const int64_t shape[2] = {rows, COLS};

    if (npyio_dtype_parse("=f8", 3, NULL, &dt) != NPYIO_OK ||
        npyio_header_new(dt, 2, shape, 0, &h) != NPYIO_OK)
        h = NULL;
    npyio_dtype_unref(dt);
    return h;
}

static void fill_values(double *block, int64_t first, int64_t count)
{
    int64_t r;
    int c;

    for (r = 0; r < count; r++)
        for (c = 0; c < COLS; c++)
            block[r * COLS + c] = (double)(first + r) * 1000 + c + 0.5;
}

static void run_fill(const char *path, int rank, int ranks)
{
    static double mine[ROWS * COLS], back[ROWS * COLS], want[ROWS * COLS];
    npyio_header *h = rows_header((int64_t)ranks * ROWS);
    npyio_writer *w = NULL;
    npyio_reader *r = NULL;
    npyio_map *m = NULL;
    npyio_status st;
    int64_t first, count, other;

    if (h == NULL) {
        fail(rank, "making the header", NPYIO_E_NOMEM);
        return;
    }
    /* Rank 0 lays out the file: the final header, the data a hole. */
    if (rank == 0) {
        st = npyio_map_create_path(path, h, NPYIO_MAP_SPARSE, NULL, &m);
        if (st == NPYIO_OK)
            st = npyio_map_close(m);
        if (st != NPYIO_OK)
            fail(rank, "creating the file", st);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* Every rank its own rows, in place. */
    fill_values(mine, (int64_t)rank * ROWS, ROWS);
    st = npyio_writer_open_in_place_path(path, 0, NULL, &w);
    if (st == NPYIO_OK)
        st = npyio_writer_write_rows(w, (int64_t)rank * ROWS, ROWS, mine,
                                     sizeof mine);
    if (st == NPYIO_OK)
        st = npyio_writer_close(w);
    else
        npyio_writer_abort(w);
    if (st != NPYIO_OK)
        fail(rank, "writing its rows", st);
    MPI_Barrier(MPI_COMM_WORLD);
    /* A random range of the next rank's block. */
    srand((unsigned)(rank * 7919 + 17));
    other = (rank + 1) % ranks;
    count = 1 + rand() % ROWS;
    first = other * ROWS + rand() % (ROWS - count + 1);
    fill_values(want, first, count);
    st = npyio_reader_open_path(path, NULL, &r);
    if (st == NPYIO_OK)
        st = npyio_reader_read_rows(r, first, count, back,
                                    (size_t)count * COLS * sizeof(double),
                                    NPYIO_READ_NATIVE);
    npyio_reader_close(r);
    if (st != NPYIO_OK)
        fail(rank, "reading another rank's rows", st);
    else if (memcmp(back, want, (size_t)count * COLS * sizeof(double)) != 0)
        fail(rank, "another rank's rows read back wrong", NPYIO_E_FORMAT);
    npyio_header_free(h);
}

/* The block a row belongs to, from its value; -1 if no block's. */
static int block_of(const double *row, int ranks, int *index)
{
    double v = row[0];
    long id = (long)(v / 1000), in = (long)v % 1000;
    int c;

    for (c = 1; c < COLS; c++)
        if (row[c] != v)
            return -1;
    if (v != (double)(id * 1000 + in) || id / 100 >= ranks ||
        id % 100 >= BATCHES || in >= ROWS)
        return -1;
    *index = (int)in;
    return (int)((id / 100) * BATCHES + id % 100);
}

/* Rank 0: the count, and every block there once, its rows in order. */
static void check_appends(const char *path, int ranks)
{
    npyio_header *h = NULL;
    double *data = NULL;
    int64_t rows, r;
    int *seen = calloc((size_t)ranks * BATCHES, sizeof *seen), b, at = 0;
    int current = -1;
    npyio_status st = npyio_load_with_header(path, NPYIO_READ_NATIVE, NULL, &h,
                                 (void **)&data);

    if (st != NPYIO_OK || seen == NULL) {
        fail(0, "loading the appended file", st);
        free(seen);
        return;
    }
    rows = npyio_header_shape(h)[0];
    if (rows != (int64_t)ranks * BATCHES * ROWS)
        fail(0, "the appended file's row count", NPYIO_E_FORMAT);
    for (r = 0; r < rows; r++) {
        b = block_of(data + r * COLS, ranks, &at);
        if (at == 0 && b >= 0)
            current = b;
        if (b < 0 || b != current || at != (int)(r % ROWS) ||
            (at == 0 && seen[b]++ != 0)) {
            fail(0, "an appended block is torn, repeated or foreign",
                 NPYIO_E_FORMAT);
            break;
        }
    }
    for (b = 0; b < ranks * BATCHES; b++)
        if (seen[b] != 1)
            fail(0, "an appended block is missing", NPYIO_E_FORMAT);
    free(seen);
    npyio_free(data);
    npyio_header_free(h);
}

static void run_append(const char *path, int rank, int ranks)
{
    static double block[ROWS * COLS];
    npyio_header *empty = rows_header(0), *batch = rows_header(ROWS);
    npyio_status st;
    int k, r, c;

    if (empty == NULL || batch == NULL) {
        fail(rank, "making the headers", NPYIO_E_NOMEM);
        return;
    }
    if (rank == 0) {
        st = npyio_save_with_header(path, empty, NULL, 0, 0, NULL);
        if (st != NPYIO_OK)
            fail(rank, "creating the empty file", st);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (k = 0; k < BATCHES; k++) {
        npyio_writer *w = NULL;

        for (r = 0; r < ROWS; r++)
            for (c = 0; c < COLS; c++)
                block[r * COLS + c] = (double)((rank * 100 + k) * 1000 + r);
        st = npyio_writer_open_append_path(path, batch, NPYIO_WRITE_WAIT_FOR_LOCK,
                                      NULL, &w);
        if (st == NPYIO_OK)
            st = npyio_writer_write(w, block, sizeof block);
        if (st == NPYIO_OK)
            st = npyio_writer_close(w);
        else
            npyio_writer_abort(w);
        if (st != NPYIO_OK)
            fail(rank, "appending a block", st);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        check_appends(path, ranks);
    npyio_header_free(empty);
    npyio_header_free(batch);
}

int main(int argc, char **argv)
{
    int rank = 0, ranks = 1, total = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (argc != 3 || (strcmp(argv[2], "fill") != 0 &&
                      strcmp(argv[2], "append") != 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi_rows FILE fill|append\n");
        MPI_Finalize();
        return 2;
    }
    if (strcmp(argv[2], "fill") == 0)
        run_fill(argv[1], rank, ranks);
    else
        run_append(argv[1], rank, ranks);
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && total == 0)
        printf("mpi_rows %s OK: %d ranks\n", argv[2], ranks);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
