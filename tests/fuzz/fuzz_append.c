/*
 * fuzz_append.c - libFuzzer target for the writers that change an
 * existing file: the input is the file (any bytes), written to a scratch
 * path, then
 *   - npyio_writer_open_append_path() of one row of the file's own dtype and
 *     trailing shape, written and closed: the file must then load as the
 *     old rows plus that row (the old bytes as read before), or, if any
 *     step failed, be byte for byte what it was;
 *   - npyio_writer_open_in_place_path() writing row 0: afterwards row 0 is the
 *     new row and every other byte of the data is unchanged, or the file
 *     is as it was;
 *   - npyio_writer_create_path() with NPYIO_WRITE_UNKNOWN_ROWS replacing the
 *     file: the old rows written back in pieces and one more, which then
 *     load back with the count in the header, or the file as it was.
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

    if (npyio_load_with_header(path, 0, tight(), h, &d) != NPYIO_OK)
        return NULL;
    return d;
}

/* One row of the file's dtype and trailing shape; NULL if it has none. */
static npyio_header *one_row(const npyio_header *h)
{
    int64_t shape[64];
    int i, n = npyio_header_ndim(h);
    npyio_header *row = NULL;

    if (n < 1 || n > 64 || npyio_header_is_fortran_order(h))
        return NULL;
    shape[0] = 1;
    for (i = 1; i < n; i++)
        shape[i] = npyio_header_shape(h)[i];
    if (npyio_header_new(npyio_header_dtype(h), n, shape, 0, &row) !=
        NPYIO_OK)
        return NULL;
    return row;
}

/* A row of the file's dtype and trailing shape: its header in *row, its
 * bytes (all `fill`, *row_len of them) returned; NULL if the file has no
 * rows to add to, or a row is over 1 MiB. */
static unsigned char *new_row(const npyio_header *h, int fill,
                              npyio_header **row, size_t *row_len)
{
    unsigned char *bytes;

    *row = one_row(h);
    if (*row == NULL)
        return NULL;
    *row_len = (size_t)npyio_header_nbytes(*row);
    if (*row_len > (1u << 20)) {
        npyio_header_free(*row);
        *row = NULL;
        return NULL;
    }
    bytes = malloc(*row_len + 1);
    check(bytes != NULL);
    memset(bytes, fill, *row_len);
    return bytes;
}

/* Close w if every step went well, else abort it. */
static npyio_status finish(npyio_writer *w, npyio_status st)
{
    if (st == NPYIO_OK)
        return npyio_writer_close(w);
    npyio_writer_abort(w);
    return st;
}

/* After an attempt to add one row: the file loads as the old rows plus
 * it, its header counting them; or, the attempt failed, it is as it was. */
static void check_grown(npyio_status st, const char *path,
                        const uint8_t *file, size_t size,
                        const npyio_header *h, const void *old,
                        size_t old_len, const unsigned char *row,
                        size_t row_len)
{
    npyio_header *after = NULL;
    unsigned char *now;

    if (st != NPYIO_OK) {
        fuzz_check_file(path, file, size);
        return;
    }
    now = load_raw(path, &after);
    check(now != NULL);
    check(npyio_header_nbytes(after) == (int64_t)(old_len + row_len));
    check(row_len == 0 ||
          npyio_header_shape(after)[0] == npyio_header_shape(h)[0] + 1);
    check(memcmp(now, old, old_len) == 0);
    check(memcmp(now + old_len, row, row_len) == 0);
    npyio_free(now);
    npyio_header_free(after);
}

static void try_append(const char *path, const uint8_t *file, size_t size,
                       const npyio_header *h, const void *old, size_t old_len)
{
    npyio_header *row = NULL;
    npyio_writer *w = NULL;
    size_t row_len = 0;
    unsigned char *bytes = new_row(h, 0xA5, &row, &row_len);
    npyio_status st;

    if (bytes == NULL)
        return;
    st = npyio_writer_open_append_path(path, row, NPYIO_WRITE_NO_SYNC, tight(),
                                  &w);
    if (st == NPYIO_OK)
        st = npyio_writer_write(w, bytes, row_len);
    check_grown(finish(w, st), path, file, size, h, old, old_len, bytes,
                row_len);
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

    if (rows < 1 || npyio_header_is_fortran_order(h))
        return;
    row_len = old_len / (size_t)rows;
    row = malloc(row_len + 1);
    check(row != NULL);
    memset(row, 0x5A, row_len);
    st = npyio_writer_open_in_place_path(path, NPYIO_WRITE_NO_SYNC, tight(), &w);
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

/* The unknown-row-count writer replacing the file: its old rows written
 * back in pieces, then one more. */
static void try_unknown_rows(const char *path, const uint8_t *file,
                             size_t size, const npyio_header *h,
                             const void *old, size_t old_len)
{
    npyio_header *row = NULL;
    npyio_writer *w = NULL;
    size_t row_len = 0, at = 0, piece = 1 + size % 13;
    unsigned char *bytes = new_row(h, 0x3C, &row, &row_len);
    npyio_status st;

    if (bytes == NULL)
        return;
    st = npyio_writer_create_path(path, h, NPYIO_WRITE_UNKNOWN_ROWS |
                                             NPYIO_WRITE_NO_SYNC,
                                tight(), &w);
    for (; st == NPYIO_OK && at < old_len; at += piece)
        st = npyio_writer_write(w, (const unsigned char *)old + at,
                                old_len - at < piece ? old_len - at : piece);
    if (st == NPYIO_OK)
        st = npyio_writer_write(w, bytes, row_len);
    check_grown(finish(w, st), path, file, size, h, old, old_len, bytes,
                row_len);
    free(bytes);
    npyio_header_free(row);
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
        !npyio_dtype_has_objects(npyio_header_dtype(h))) {
        len = (size_t)npyio_header_nbytes(h);
        try_append(path, data, size, h, old, len);
        fuzz_put_file(path, data, size);
        try_in_place(path, data, size, h, old, len);
        fuzz_put_file(path, data, size);
        try_unknown_rows(path, data, size, h, old, len);
    }
    npyio_free(old);
    npyio_header_free(h);
    unlink(path);
    return 0;
}
