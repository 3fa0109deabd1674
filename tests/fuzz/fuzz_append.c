/*
 * fuzz_append.c - libFuzzer target for the writers that change an
 * existing file: the input is the file (any bytes), written to a scratch
 * path, then
 *   - npyio_writer_open_append() of one row of the file's own dtype and
 *     trailing shape, written and closed: the file must then load as the
 *     old rows plus that row (the old bytes as read before), or, if any
 *     step failed, be byte for byte what it was;
 *   - npyio_writer_open_in_place() writing row 0: afterwards row 0 is the
 *     new row and every other byte of the data is unchanged, or the file
 *     is as it was.
 * Never a crash, leak or hang, under the untrusted limits.
 *
 * Built two ways: with clang -fsanitize=fuzzer for fuzzing (NPYIO_FUZZ=ON),
 * and always with replay.c, which runs the stored corpus under ctest.
 */
#include "fuzz_common.h"

static npyio_options *tight(void)
{
    return fuzz_options(1 << 22, 0);
}


/* The file's data as stored, and its header (NULL if it does not load). */
static void *load_raw(const char *path, npyio_header **h)
{
    void *d = NULL;

    if (npyio_load(path, 0, tight(), h, &d) != NPYIO_OK)
        return NULL;
    return d;
}

/* One row of the file's dtype and trailing shape; NULL if it has none. */
static npyio_header *one_row(const npyio_header *h)
{
    int64_t shape[64];
    int i, n = npyio_header_ndim(h);
    npyio_header *row = NULL;

    if (n < 1 || n > 64 || npyio_header_fortran_order(h))
        return NULL;
    shape[0] = 1;
    for (i = 1; i < n; i++)
        shape[i] = npyio_header_shape(h)[i];
    if (npyio_header_new(npyio_header_dtype(h), n, shape, 0, &row) !=
        NPYIO_OK)
        return NULL;
    return row;
}

static void try_append(const char *path, const uint8_t *file, size_t size,
                       const npyio_header *h, const void *old, size_t old_len)
{
    npyio_header *row = one_row(h), *after = NULL;
    npyio_writer *w = NULL;
    unsigned char *bytes, *now;
    size_t len, row_len;
    npyio_status st;

    if (row == NULL)
        return;
    row_len = (size_t)npyio_header_nbytes(row);
    if (row_len > (1u << 20)) {
        npyio_header_free(row);
        return;
    }
    bytes = malloc(row_len + 1);
    check(bytes != NULL);
    memset(bytes, 0xA5, row_len);
    st = npyio_writer_open_append(path, row, NPYIO_WRITE_NO_SYNC, tight(),
                                  &w);
    if (st == NPYIO_OK)
        st = npyio_writer_write(w, bytes, row_len);
    if (st == NPYIO_OK)
        st = npyio_writer_close(w);
    else if (w != NULL)
        npyio_writer_abort(w);
    if (st == NPYIO_OK) {
        now = load_raw(path, &after);
        check(now != NULL);
        check(npyio_header_shape(after)[0] == npyio_header_shape(h)[0] + 1);
        len = (size_t)npyio_header_nbytes(after);
        check(len == old_len + row_len);
        check(memcmp(now, old, old_len) == 0);
        check(memcmp((unsigned char *)now + old_len, bytes, row_len) == 0);
        npyio_free(now);
        npyio_header_free(after);
    } else {
        fuzz_check_file(path, file, size);
    }
    free(bytes);
    npyio_header_free(row);
}

static void try_in_place(const char *path, const uint8_t *file, size_t size,
                         const npyio_header *h, const void *old,
                         size_t old_len)
{
    npyio_writer *w = NULL;
    npyio_header *after = NULL;
    unsigned char *row, *now;
    int64_t rows = npyio_header_ndim(h) > 0 ? npyio_header_shape(h)[0] : 0;
    size_t row_len;
    npyio_status st;

    if (rows < 1 || npyio_header_fortran_order(h))
        return;
    row_len = old_len / (size_t)rows;
    row = malloc(row_len + 1);
    check(row != NULL);
    memset(row, 0x5A, row_len);
    st = npyio_writer_open_in_place(path, NPYIO_WRITE_NO_SYNC, tight(), &w);
    if (st == NPYIO_OK)
        st = npyio_writer_write_rows(w, 0, 1, row, row_len);
    if (st == NPYIO_OK)
        st = npyio_writer_close(w);
    else if (w != NULL)
        npyio_writer_abort(w);
    if (st == NPYIO_OK) {
        now = load_raw(path, &after);
        check(now != NULL && npyio_header_nbytes(after) == (int64_t)old_len);
        check(memcmp(now, row, row_len) == 0);
        check(memcmp(now + row_len, (const unsigned char *)old + row_len,
                     old_len - row_len) == 0);
        npyio_free(now);
        npyio_header_free(after);
    } else {
        fuzz_check_file(path, file, size);
    }
    free(row);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_scratch("fuzz_append", 0, ".npy");
    npyio_header *h = NULL;
    size_t len;
    void *old;

    fuzz_put_file(path, data, size);
    old = load_raw(path, &h);
    if (old != NULL &&
        !npyio_dtype_contains_objects(npyio_header_dtype(h))) {
        len = (size_t)npyio_header_nbytes(h);
        try_append(path, data, size, h, old, len);
        fuzz_put_file(path, data, size);
        try_in_place(path, data, size, h, old, len);
    }
    npyio_free(old);
    npyio_header_free(h);
    unlink(path);
    return 0;
}
