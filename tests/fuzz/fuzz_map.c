/*
 * fuzz_map.c - libFuzzer target for memory maps: the input is a file (any
 * bytes), written to a scratch path, then
 *   - npyio_map_open_path() read-only: it maps exactly when npyio_load_with_header() loads
 *     the file (object dtypes aside), with the same header and the same
 *     bytes as stored;
 *   - npyio_map_open_path(NPYIO_MAP_WRITE): one byte changed through the map
 *     changes that byte of the file and nothing else;
 *   - npyio_map_create_path() for the file's header, over an existing file (the
 *     input) or a new path, sparse or reserved: the created file holds the
 *     header np.save writes for it, the data written through the map, and
 *     loads back equal; a failed create leaves the existing file as it was;
 *   - if the input is an archive, npyio_map_open_member() of every member agrees
 *     with reading the member (where both succeed).
 * Never a crash, leak or out-of-bounds read; files bounded by the input.
 *
 * Built two ways: with clang -fsanitize=fuzzer for fuzzing (NPYIO_FUZZ=ON),
 * and always with replay.c, which runs the stored corpus under ctest.
 */
#include "fuzz_common.h"

static npyio_options *tight(void)
{
    return fuzz_options(1 << 23, 1 << 22);
}

/* The header as np.save would write it, in a new buffer. */
static unsigned char *emitted(const npyio_header *h, size_t *len)
{
    unsigned char *b;

    if (npyio_header_emit(h, 0, NULL, 0, len) != NPYIO_E_BUFFER_TOO_SMALL)
        return NULL;
    b = malloc(*len);
    check(b != NULL && npyio_header_emit(h, 0, b, *len, len) == NPYIO_OK);
    return b;
}

static void same_header(const npyio_header *a, const npyio_header *b)
{
    size_t la = 0, lb = 0;
    unsigned char *x = emitted(a, &la), *y = emitted(b, &lb);

    check((x == NULL) == (y == NULL));
    check(x == NULL || (la == lb && memcmp(x, y, la) == 0));
    free(x);
    free(y);
}

/* Read-only: agrees with npyio_load_with_header(). */
static void map_read(const char *path, const npyio_header *h,
                     const void *data)
{
    npyio_map *m = NULL;
    npyio_status st = npyio_map_open_path(path, 0, tight(), &m);

    if (h == NULL || npyio_dtype_has_objects(npyio_header_dtype(h))) {
        check(st != NPYIO_OK);
        return;
    }
    check(st == NPYIO_OK);
    same_header(npyio_map_header(m), h);
    check(memcmp(npyio_map_data(m), data,
                 (size_t)npyio_header_nbytes(h)) == 0);
    check(npyio_map_close(m) == NPYIO_OK);
}

/* Read-write: one byte flipped through the map, and only that byte. */
static void map_write(const char *path, const uint8_t *file, size_t size,
                      const npyio_header *h)
{
    npyio_map *m = NULL;
    unsigned char *p, *now;
    size_t at, len = 0;

    if (h == NULL || npyio_header_nbytes(h) == 0 ||
        npyio_map_open_path(path, NPYIO_MAP_WRITE | NPYIO_WRITE_NO_SYNC, tight(),
                       &m) != NPYIO_OK)
        return;
    p = npyio_map_data(m);
    at = (size_t)(p - (unsigned char *)npyio_map_data(m));
    p[0] ^= 0xFF;
    check(npyio_map_close(m) == NPYIO_OK);
    now = fuzz_get_file(path, &len);
    check(now != NULL && len == size);
    for (at = 0; at < size && now[at] == file[at]; at++)
        ;
    check(at < size && now[at] == (file[at] ^ 0xFF));
    check(memcmp(now + at + 1, file + at + 1, size - at - 1) == 0);
    free(now);
    fuzz_put_file(path, file, size);
}

/* Create-and-map over `path` (which holds `old`, or nothing). */
static void map_create(const char *path, const uint8_t *old, size_t old_size,
                       const npyio_header *h, const void *data,
                       uint32_t flags)
{
    npyio_map *m = NULL;
    npyio_header *back = NULL;
    void *loaded = NULL;
    unsigned char *head, *file;
    size_t nbytes = (size_t)npyio_header_nbytes(h), head_len = 0, len = 0;
    npyio_status st = npyio_map_create_path(path, h, flags, tight(), &m);

    if (st != NPYIO_OK) {
        check(npyio_dtype_has_objects(npyio_header_dtype(h)) ||
              st == NPYIO_E_LIMIT || st == NPYIO_E_OVERFLOW);
        if (old != NULL)
            fuzz_check_file(path, old, old_size);
        else
            check(access(path, F_OK) != 0);
        return;
    }
    same_header(npyio_map_header(m), h);
    if (nbytes > 0)
        memcpy(npyio_map_data(m), data, nbytes);
    check(npyio_map_close(m) == NPYIO_OK);
    /* The file: np.save's header, then the data. */
    head = emitted(h, &head_len);
    file = fuzz_get_file(path, &len);
    check(head != NULL && file != NULL && len == head_len + nbytes);
    check(memcmp(file, head, head_len) == 0);
    check(memcmp(file + head_len, data, nbytes) == 0);
    check(npyio_load_with_header(path, 0, tight(), &back, &loaded) == NPYIO_OK);
    same_header(back, h);
    free(head);
    free(file);
    npyio_free(loaded);
    npyio_header_free(back);
}

/* An archive: each member's map agrees with its read, where both work. */
static void map_members(const char *path)
{
    npyio_npz *npz = NULL;
    size_t i;

    if (npyio_npz_open_path(path, tight(), &npz) != NPYIO_OK)
        return;
    for (i = 0; i < npyio_npz_count(npz); i++) {
        npyio_map *m = NULL;
        npyio_reader *r = NULL;
        void *whole = NULL;
        size_t len = 0;

        if (npyio_map_open_member(npz, i, &m) != NPYIO_OK)
            continue;
        if (npyio_reader_open_member(npz, i, &r) == NPYIO_OK &&
            npyio_reader_read_alloc(r, 0, &whole, &len) == NPYIO_OK) {
            same_header(npyio_map_header(m), npyio_reader_header(r));
            check(len == (size_t)npyio_header_nbytes(npyio_map_header(m)));
            check(memcmp(npyio_map_data(m), whole, len) == 0);
        }
        npyio_reader_close(r);
        npyio_free(whole);
        check(npyio_map_close(m) == NPYIO_OK);
    }
    npyio_npz_close(npz);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_scratch("fuzz_map", 0, ".npy");
    const char *fresh = fuzz_scratch("fuzz_map", 1, ".npy");
    npyio_header *h = NULL;
    void *arr = NULL;
    uint32_t flags = NPYIO_WRITE_NO_SYNC;

    fuzz_put_file(path, data, size);
    if (npyio_load_with_header(path, 0, tight(), &h, &arr) != NPYIO_OK) {
        npyio_header_free(h);
        h = NULL;
    }
    map_read(path, h, arr);
    map_write(path, data, size, h);
    if (h != NULL) {
        if (size > 0 && (data[size - 1] & 1))
            flags |= NPYIO_MAP_SPARSE;
        map_create(path, data, size, h, arr, flags);
        map_create(fresh, NULL, 0, h, arr, flags);
        unlink(fresh);
    }
    npyio_free(arr);
    npyio_header_free(h);
    if (size >= 4 && memcmp(data, "PK", 2) == 0)
        map_members(path);
    unlink(path);
    return 0;
}
