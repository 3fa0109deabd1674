/*
 * fuzz_npz_write.c - libFuzzer target for writing .npz archives, driven by
 * the input: a first byte of options (alignment, whether to append), then
 * up to 8 members, each chosen by the next bytes:
 *   - how it is added: a whole array (npyio_npz_writer_add_with_header), a member writer
 *     fed in input-sized pieces (npyio_writer_create_member, sometimes with
 *     NPYIO_WRITE_UNKNOWN_ROWS), or a length-prefixed slice of the input
 *     taken as an .npy file (npyio_npz_writer_add_npy);
 *   - its key (usually "m<i>", sometimes bytes of the input, which may be
 *     refused), its zlib level (0 to 9, sometimes out of range), and its
 *     dtype and shape from a table and the input.
 * The archive is written over an existing file. Then:
 *   - closed successfully, it holds exactly the members whose add
 *     succeeded, in order, each reading back to its header and bytes
 *     (add_npy members byte for byte), each passing verify;
 *   - a refusal before a member started (a key, a level, an input that is
 *     no .npy file) leaves the archive usable: it still closes;
 *   - closed with a failure, the old file is byte for byte as it was;
 *   - appended to (one more member), the old members read as before.
 * Never a crash, leak or hang.
 *
 * Built two ways: with clang -fsanitize=fuzzer for fuzzing (NPYIO_FUZZ=ON),
 * and always with replay.c, which runs the stored corpus under ctest.
 */
#include "fuzz_common.h"

#define MAX_MEMBERS 8

static npyio_options *tight(void)
{
    return fuzz_options(1 << 23, 1 << 22);
}

static const char *const descrs[] = {
    "'<i4'", "'>f8'", "'|u1'", "'<c16'", "'|b1'", "'<U3'", "'|S5'",
    "'>i2'", "'<M8[s]'", "'|V3'", "'<f2'",
    "[('a', '<i2'), ('b', '>f4', (2,))]",
    "[('y', '|i1'), ('', '|V3'), ('x', '<u2'), ('', '|V2')]",
};

/* The input, consumed a byte at a time (zeros once it runs out). */
typedef struct input {
    const uint8_t *p;
    size_t left;
} input;

static unsigned next(input *in)
{
    if (in->left == 0)
        return 0;
    in->left--;
    return *in->p++;
}

/* What a member should be when read back. */
typedef struct expect {
    char key[40];
    npyio_header *header; /* NULL: compare raw bytes instead */
    unsigned char *bytes; /* the array's data, or the whole .npy file */
    size_t len;
} expect;

typedef struct plan {
    expect m[MAX_MEMBERS + 1];
    size_t count;
    int usable; /* every failure so far was a refusal up front */
} plan;

static npyio_header *make_header(input *in)
{
    npyio_dtype *dt = NULL;
    npyio_header *h = NULL;
    const char *d = descrs[next(in) % (sizeof descrs / sizeof descrs[0])];
    int64_t shape[3];
    int i, ndim = (int)(next(in) % 4);

    check(npyio_dtype_parse(d, strlen(d), NULL, &dt) == NPYIO_OK);
    for (i = 0; i < ndim; i++)
        shape[i] = next(in) % 5;
    check(npyio_header_new(dt, ndim, shape, ndim > 1 && (next(in) & 1),
                           &h) == NPYIO_OK);
    npyio_dtype_unref(dt);
    return h;
}

/* len bytes of data from the input, a pattern once it runs out. */
static unsigned char *take(input *in, size_t len)
{
    unsigned char *b = malloc(len + 1);
    size_t i;

    check(b != NULL);
    for (i = 0; i < len; i++)
        b[i] = in->left > 0 ? (unsigned char)next(in)
                            : (unsigned char)(i * 7 + 1);
    return b;
}

static void pick_key(input *in, size_t i, char *key, size_t cap)
{
    unsigned n = next(in);

    if (n % 8 != 0) {
        snprintf(key, cap, "m%zu", i);
        return;
    }
    n = (n >> 3) % (unsigned)(cap - 1);
    memset(key, 0, cap);
    while (n-- > 0 && in->left > 0) {
        unsigned c = next(in);
        key[strlen(key)] = (char)(c ? c : '_');
    }
}

/* Refusals before the member starts leave the archive usable. */
static int refused_up_front(npyio_status st)
{
    return st == NPYIO_E_INVALID_ARG || st == NPYIO_E_FORMAT ||
           st == NPYIO_E_UNSUPPORTED || st == NPYIO_E_LIMIT;
}

/* Rows of 0 bytes written with an unknown count: a count of 0. */
static npyio_header *no_rows(npyio_header *h)
{
    int64_t shape[3];
    npyio_header *zero = NULL;
    int i, n = npyio_header_ndim(h);

    for (i = 0; i < n; i++)
        shape[i] = i == 0 ? 0 : npyio_header_shape(h)[i];
    check(npyio_header_new(npyio_header_dtype(h), n, shape,
                           npyio_header_is_fortran_order(h), &zero) == NPYIO_OK);
    npyio_header_free(h);
    return zero;
}

static npyio_status add_by_writer(npyio_npz_writer *npz, input *in,
                                  expect *e, int level)
{
    npyio_header *h = make_header(in);
    uint32_t flags = next(in) & 1 ? NPYIO_WRITE_UNKNOWN_ROWS : 0;
    size_t len = (size_t)npyio_header_nbytes(h), at = 0;
    npyio_writer *w = NULL;
    npyio_status st;

    if (flags && npyio_header_ndim(h) == 0)
        flags = 0;
    st = npyio_writer_create_member(npz, e->key, h, level, flags, &w);
    if (st != NPYIO_OK) {
        npyio_header_free(h);
        return st;
    }
    e->bytes = take(in, len);
    while (st == NPYIO_OK && at < len) {
        size_t piece = 1 + next(in) % 64;

        if (piece > len - at)
            piece = len - at;
        st = npyio_writer_write(w, e->bytes + at, piece);
        at += piece;
    }
    e->len = len;
    e->header = flags && len == 0 ? no_rows(h) : h;
    if (st == NPYIO_OK)
        return npyio_writer_close(w);
    npyio_writer_abort(w);
    return st;
}

static npyio_status add_whole(npyio_npz_writer *npz, input *in, expect *e,
                              int level)
{
    e->header = make_header(in);
    e->len = (size_t)npyio_header_nbytes(e->header);
    e->bytes = take(in, e->len);
    return npyio_npz_writer_add_with_header(npz, e->key, e->header, e->bytes, e->len, level, 0);
}

static npyio_status add_file(npyio_npz_writer *npz, input *in, expect *e,
                             int level)
{
    npyio_stream *s = NULL;
    npyio_status st;

    e->len = next(in) * 4u;
    e->len += next(in);
    if (e->len > in->left)
        e->len = in->left;
    e->bytes = take(in, e->len);
    check(npyio_stream_open_memory(e->bytes, e->len, NULL, &s) == NPYIO_OK);
    st = npyio_npz_writer_add_npy(npz, e->key, s, level, 0);
    npyio_stream_close(s);
    return st;
}

static void forget(expect *e)
{
    npyio_header_free(e->header);
    free(e->bytes);
    memset(e, 0, sizeof *e);
}

/* Add one member; a success is kept in the plan. */
static void add_member(npyio_npz_writer *npz, input *in, plan *p, size_t i)
{
    expect *e = &p->m[p->count];
    unsigned how = next(in) % 3, lv = next(in);
    int level = lv % 16 == 15 ? -1 : (int)(lv % 11); /* 10, -1: refused */
    npyio_status st;

    pick_key(in, i, e->key, sizeof e->key);
    if (how == 0)
        st = add_whole(npz, in, e, level);
    else if (how == 1)
        st = add_by_writer(npz, in, e, level);
    else
        st = add_file(npz, in, e, level);
    if (st == NPYIO_OK) {
        p->count++;
        return;
    }
    if (!refused_up_front(st))
        p->usable = 0;
    forget(e);
}

/* As np.save: Fortran order is recorded only for an array that is not
 * also C-contiguous (some element, and two dimensions over 1). */
static int order_matters(const npyio_header *h)
{
    int i, over_one = 0;

    if (npyio_header_count(h) == 0)
        return 0;
    for (i = 0; i < npyio_header_ndim(h); i++)
        over_one += npyio_header_shape(h)[i] > 1;
    return over_one > 1;
}

/* A member read back: its header and data, or its bytes. */
static void check_member(npyio_npz *npz, size_t i, const expect *e)
{
    npyio_stream *s = NULL;
    npyio_reader *r = NULL;
    const npyio_header *h;
    unsigned char *got;
    void *data = NULL;
    size_t len = 0, n = 0;

    check(strcmp(npyio_npz_key(npz, i), e->key) == 0);
    check(npyio_npz_verify(npz, i) == NPYIO_OK);
    if (e->header == NULL) {
        got = malloc(e->len + 2);
        check(got != NULL);
        check(npyio_stream_open_member(npz, i, &s) == NPYIO_OK);
        check(npyio_stream_read(s, got, e->len + 1, &n) == NPYIO_OK);
        check(n == e->len && memcmp(got, e->bytes, n) == 0);
        npyio_stream_close(s);
        free(got);
        return;
    }
    check(npyio_reader_open_member(npz, i, &r) == NPYIO_OK);
    check(npyio_reader_read_alloc(r, 0, &data, &len) == NPYIO_OK);
    check(len == e->len && memcmp(data, e->bytes, len) == 0);
    h = npyio_reader_header(r);
    check(npyio_dtype_is_equal(npyio_header_dtype(h),
                            npyio_header_dtype(e->header)));
    check(npyio_header_ndim(h) == npyio_header_ndim(e->header));
    check(npyio_header_ndim(h) == 0 ||
          memcmp(npyio_header_shape(h), npyio_header_shape(e->header),
                 sizeof(int64_t) * (size_t)npyio_header_ndim(h)) == 0);
    check(npyio_header_is_fortran_order(h) ==
              npyio_header_is_fortran_order(e->header) ||
          !order_matters(h));
    npyio_free(data);
    npyio_reader_close(r);
}

static void check_archive(const char *path, const plan *p)
{
    npyio_npz *npz = NULL;
    size_t i;

    check(npyio_npz_open_path(path, tight(), &npz) == NPYIO_OK);
    check(npyio_npz_count(npz) == p->count);
    for (i = 0; i < p->count; i++)
        check_member(npz, i, &p->m[i]);
    npyio_npz_close(npz);
}

static void append_one(const char *path, input *in, plan *p, uint32_t flags)
{
    npyio_npz_writer *npz = NULL;
    expect *e = &p->m[p->count];

    check(npyio_npz_writer_open_append_path(path, flags, tight(), &npz) == NPYIO_OK);
    snprintf(e->key, sizeof e->key, "appended");
    if (add_whole(npz, in, e, (int)(next(in) % 10)) == NPYIO_OK)
        p->count++;
    else
        forget(e);
    check(npyio_npz_writer_close(npz) == NPYIO_OK);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t old[] = "an old file, kept unless the archive closes";
    const char *path = fuzz_scratch("fuzz_npz_write", 0, ".npz");
    input in = {data, size};
    unsigned opts = next(&in);
    uint32_t flags = NPYIO_WRITE_NO_SYNC | (opts & 1 ? NPYIO_NPZ_WRITE_NO_ALIGN : 0);
    npyio_npz_writer *npz = NULL;
    plan p;
    size_t i;

    memset(&p, 0, sizeof p);
    p.usable = 1;
    fuzz_put_file(path, old, sizeof old);
    check(npyio_npz_writer_create_path(path, flags, tight(), &npz) == NPYIO_OK);
    for (i = 0; i < MAX_MEMBERS && in.left > 0; i++)
        add_member(npz, &in, &p, i);
    if (npyio_npz_writer_close(npz) == NPYIO_OK) {
        check_archive(path, &p);
        if (opts & 2) {
            append_one(path, &in, &p, flags);
            check_archive(path, &p);
        }
    } else {
        check(!p.usable);
        fuzz_check_file(path, old, sizeof old);
    }
    for (i = 0; i <= MAX_MEMBERS; i++)
        forget(&p.m[i]);
    unlink(path);
    return 0;
}
