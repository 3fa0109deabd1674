/*
 * bench_npz.c - .npz speed against plain system calls, zlib and NumPy,
 * side by side in one run (not part of ctest: figures are reported, never
 * asserted).
 *
 *   bench_npz [--size MiB] [--rounds N] [--dir DIR] [--threads N]
 *             [--only read|inflate|write|deflate|append|many] [--walk MiB]
 *             [--members N]
 *
 * Defaults: a 256 MiB float64 member, 8 x 32 MiB (--walk) of random-walk
 * float64 for deflate, /dev/shm, 5 rounds, --threads 2 for the parallel
 * deflate line, --members 10000 for the many-members lines. Each round
 * runs every contender once, interleaved, priming huge-page memory before
 * each (benchutil.h's prime()). Lines:
 *
 *   stored read    npyio_reader_open_member + read_alloc (CRC checked) vs
 *                  open + pread of the member's bytes into fresh memory,
 *                  and vs np.load(path)[key]
 *   stored read, N threads  the same read on --threads threads vs on one
 *                  thread, and vs pread
 *   mapped sum     npyio_map_open_member of a stored member + sum vs npyio_map_open_path
 *                  of the same .npy + sum
 *   deflated read  the member read (inflate straight into the destination,
 *                  CRC) vs zlib's one-call inflate of the same stream read
 *                  with pread, and vs np.load(path)[key]
 *   indexed deflated, N threads  the first walk member written on 2
 *                  threads (it has a block index) read on --threads
 *                  threads vs on one, and vs zlib's one-call inflate
 *   savez_compressed load  npyio_npz_load of a --size MiB member of
 *                  measurement-like float64 (a sine plus noise, rounded to
 *                  2 decimals) written by np.savez_compressed (one
 *                  libdeflate call) vs zlib's one-call inflate of the same
 *                  stream read with pread, and vs np.load(path)[key]
 *   20 random rows, indexed  20 single rows read at random in the
 *                  indexed member (one thread) vs in the same member
 *                  without an index (GB/s: of the member's size)
 *   stored write   npyio_savez_with_header, one stored member, no fsync, vs open +
 *                  write of the same bytes, and vs np.savez
 *   deflate 6      8 members of random walk at level 6 (threads 1 and N)
 *                  vs zlib deflate of each into memory + write, and vs
 *                  np.savez_compressed
 *   append         npyio_npz_writer_open_append_path + one 40-byte member + close, no
 *                  fsync, on a copy of the stored archive (the old bytes
 *                  cloned or copied in the kernel, our end records, the
 *                  result read back), vs the archive rewritten through
 *                  minizip from scratch with every old member copied raw
 *                  (npyio_npz_writer_copy: the other design issue 27 weighed),
 *                  vs read() + write() of the archive's bytes, and vs
 *                  NumPy (np.load every array + np.savez with the new)
 *   many write     npyio_savez_with_header of 10,000, 20,000 and 40,000
 *                  (--members N: N, 2N, 4N) stored (16,) float32 members
 *                  (no fsync) vs np.savez of the same; the time per
 *                  doubling shows the scaling
 *   many list      npyio_npz_open_path + every key of 70,000 (7N) such
 *                  members (every local header checked) vs
 *                  np.load(path).files
 *
 * --only many runs the last two alone. --only libdeflate runs these alone
 * (issue 43: whole members deflated in one libdeflate call), on a --size
 * MiB array (128 suggested):
 *
 *   savez 6, 1 thread  npyio_savez of measurement-like float64 (a sine
 *                  plus noise, rounded to 2 decimals, made by NumPy) at
 *                  level 6 on one thread (one libdeflate call) vs zlib's
 *                  one-call deflate of the same bytes into memory (+ CRC),
 *                  and vs np.savez_compressed; then the archive's size
 *                  over NumPy's
 *   pack --compress  the tool (`npyio pack --compress --no-sync`, --tool
 *                  PATH, default beside this program: ../src/npyio) of
 *                  the .npy file vs the same two
 *   2 threads, KIND level L  npyio_savez on 2 threads (one libdeflate
 *                  call) vs npyio_savez with NPYIO_NPZ_WRITE_ZLIB on 2
 *                  threads (zlib's blocks with their index, 1.0's), and vs
 *                  one zlib thread; for the float64 and for int32 ramps
 *                  (np.arange), levels 1 and 6: the crossover NPYIO_NPZ_WRITE_ZLIB's
 *                  documentation states
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "benchutil.h"
#include "bench.h"

#define WALK_MEMBERS 8

static size_t nbytes, walk_bytes;
static char walk_par_npz[512];
static char stored_npz[512], plain_npy[512], walk_npz[512], out_npz[512],
    out_raw[512], walk_npy[512];
static double *values, *walk[WALK_MEMBERS];
static npyio_header *big_header, *walk_header;
static int threads = 2;

/* ---- files ------------------------------------------------------------------------ */

static void make_inputs(void)
{
    uint64_t rng = 88172645463325252ull;
    const char *keys[WALK_MEMBERS] = {"w0", "w1", "w2", "w3",
                                      "w4", "w5", "w6", "w7"};
    const npyio_header *hs[WALK_MEMBERS];
    const void *ds[WALK_MEMBERS];
    size_t ls[WALK_MEMBERS], i, k;
    int levels[WALK_MEMBERS];
    int64_t shape = (int64_t)(nbytes / 8), wshape = (int64_t)(walk_bytes / 8);
    const char *key = "a";
    const void *d;
    double v = 0;

    values = thp_alloc(nbytes);
    for (i = 0; i < nbytes / 8; i++)
        values[i] = (double)i * 0.5;
    {
        npyio_dtype *f8 = NULL;

        if (npyio_dtype_parse("<f8", 3, NULL, &f8) != NPYIO_OK ||
            npyio_header_new(f8, 1, &shape, 0, &big_header) != NPYIO_OK ||
            npyio_header_new(f8, 1, &wshape, 0, &walk_header) != NPYIO_OK)
            die("header");
        npyio_dtype_unref(f8);
    }
    d = values;
    if (npyio_savez_with_header(stored_npz, 1, &key, (const npyio_header **)&big_header,
                       &d, &nbytes, NULL, NPYIO_WRITE_NO_SYNC, NULL) != NPYIO_OK ||
        npyio_save_with_header(plain_npy, big_header, values, nbytes,
                   NPYIO_WRITE_NO_SYNC, NULL) != NPYIO_OK)
        die("inputs");
    for (k = 0; k < WALK_MEMBERS; k++) {
        walk[k] = thp_alloc(walk_bytes);
        for (i = 0; i < walk_bytes / 8; i++) {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            v += (double)(rng >> 11) * 0x1p-53 - 0.5;
            walk[k][i] = v;
        }
        hs[k] = walk_header;
        ds[k] = walk[k];
        ls[k] = walk_bytes;
    }
    for (k = 0; k < WALK_MEMBERS; k++)
        levels[k] = 6;
    if (npyio_savez_with_header(walk_npz, WALK_MEMBERS, keys, hs, ds, ls, levels,
                       NPYIO_WRITE_NO_SYNC, NULL) != NPYIO_OK ||
        npyio_save_with_header(walk_npy, walk_header, walk[0], walk_bytes,
                   NPYIO_WRITE_NO_SYNC, NULL) != NPYIO_OK)
        die("walk inputs");
    {
        npyio_options *o = NULL;

        /* The first walk deflated on 2 threads: it has a block index. */
        if (npyio_options_new(&o) != NPYIO_OK ||
            npyio_options_set_limit(o, NPYIO_LIMIT_THREADS, 2) != NPYIO_OK ||
            npyio_savez_with_header(walk_par_npz, 1, keys, hs, ds, ls,
                                    levels, NPYIO_WRITE_NO_SYNC,
                                    o) != NPYIO_OK)
            die("indexed walk");
        npyio_options_free(o);
    }
}

/* ---- reading ------------------------------------------------------------------------ */

static double our_member_read_on(const char *path, const char *key,
                                 int nthreads)
{
    npyio_options *o = NULL;
    double t;

    if (npyio_options_new(&o) != NPYIO_OK ||
        npyio_options_set_limit(o, NPYIO_LIMIT_THREADS, nthreads) !=
            NPYIO_OK)
        die("options");
    t = member_read(path, key, o, NULL);
    npyio_options_free(o);
    return t;
}

static double our_member_read(const char *path, const char *key)
{
    return our_member_read_on(path, key, 1);
}

/* 20 single rows read at random places of member `key` (in one reader):
 * going back inflates again from the start, or from the block holding
 * the row where the member has a block index. */
static double our_random_rows(const char *path, const char *key)
{
    npyio_npz *npz = NULL;
    npyio_reader *r = NULL;
    uint64_t rng = 4242;
    size_t index = 0;
    double row, t0, t;
    int64_t rows;
    int i;

    prime();
    t0 = now();
    if (npyio_npz_open_path(path, NULL, &npz) != NPYIO_OK ||
        npyio_npz_find(npz, key, &index, NULL) != NPYIO_OK ||
        npyio_reader_open_member(npz, index, &r) != NPYIO_OK)
        die(path);
    rows = npyio_header_shape(npyio_reader_header(r))[0];
    for (i = 0; i < 20; i++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        if (npyio_reader_read_rows(r, (int64_t)((rng >> 33) %
                                                 (uint64_t)rows),
                                   1, &row, sizeof row, 0) != NPYIO_OK)
            die(npyio_last_error());
    }
    npyio_reader_close(r);
    npyio_npz_close(npz);
    t = now() - t0;
    return t;
}

/* Where member `key` of an archive lies (found once, outside the timing). */
static void member_place(const char *path, const char *key, int64_t *at,
                         int64_t *csize)
{
    npyio_npz *npz = NULL;
    size_t index = 0;

    if (npyio_npz_open_path(path, NULL, &npz) != NPYIO_OK ||
        npyio_npz_find(npz, key, &index, NULL) != NPYIO_OK ||
        npyio_npz_stat(npz, index, NPYIO_NPZ_STAT_DATA_OFFSET,
                       at) != NPYIO_OK ||
        npyio_npz_stat(npz, index, NPYIO_NPZ_STAT_COMPRESSED_SIZE, csize) !=
            NPYIO_OK)
        die(path);
    npyio_npz_close(npz);
}

/* zlib's own: the compressed bytes read, inflated in one call. */
static double zlib_inflate(const char *path, int64_t at, size_t csize,
                           size_t usize)
{
    unsigned char *in, *out;
    z_stream z;
    double t0, t;
    int fd;

    prime();
    t0 = now();
    fd = open(path, O_RDONLY | O_CLOEXEC);
    in = malloc(csize);
    out = thp_alloc(usize);
    pread_all(fd, in, csize, at);
    close(fd);
    memset(&z, 0, sizeof z);
    inflateInit2(&z, -MAX_WBITS);
    z.next_in = in;
    z.avail_in = (uInt)csize;
    z.next_out = out;
    z.avail_out = (uInt)usize;
    if (inflate(&z, Z_FINISH) != Z_STREAM_END)
        die("inflate");
    inflateEnd(&z);
    t = now() - t0;
    free(in);
    free(out);
    return t;
}

static double numpy_op(const char *op, const char *a, const char *b);

/* npyio_npz_load of member `key`, as a program loads one. */
static double our_npz_load(const char *path, const char *key)
{
    npyio_npz *npz = NULL;
    void *data = NULL;
    size_t index = 0, len = 0;
    int64_t shape[4];
    int ndim = 0;
    double t0, t;

    prime();
    t0 = now();
    if (npyio_npz_open_path(path, NULL, &npz) != NPYIO_OK ||
        npyio_npz_find(npz, key, &index, NULL) != NPYIO_OK ||
        npyio_npz_load(npz, index, &data, &len, NULL, 0, &ndim, shape,
                       4) != NPYIO_OK)
        die(npyio_last_error());
    npyio_npz_close(npz);
    t = now() - t0;
    npyio_free(data);
    return t;
}

/* A member written by np.savez_compressed loaded whole by the three. */
static void bench_inflate(const char *dir, size_t mib, int rounds)
{
    double ours[MAX_ROUNDS], ref1[MAX_ROUNDS], ref2[MAX_ROUNDS];
    char path[512], size[32];
    int64_t at = 0, csize = 0;
    int r;

    snprintf(path, sizeof path, "%s/bench_npz_measure.npz", dir);
    snprintf(size, sizeof size, "%zu", mib);
    numpy_op("measure", path, size);
    member_place(path, "m", &at, &csize);
    for (r = 0; r < rounds; r++) {
        ours[r] = our_npz_load(path, "m");
        ref1[r] = zlib_inflate(path, at, (size_t)csize, (mib << 20) + 128);
        ref2[r] = numpy_op("member", path, "m");
    }
    report("savez_compressed load", mib << 20, rounds, ours, ref1,
           "zlib inflate", ref2, "np.load[key]");
    unlink(path);
}

static double map_sum(const char *path, int member, double *sum)
{
    npyio_npz *npz = NULL;
    npyio_map *m = NULL;
    const double *v;
    double t0, t, s = 0;
    size_t i, n;

    t0 = now();
    if (member) {
        if (npyio_npz_open_path(path, NULL, &npz) != NPYIO_OK ||
            npyio_map_open_member(npz, 0, &m) != NPYIO_OK)
            die(path);
    } else if (npyio_map_open_path(path, 0, NULL, &m) != NPYIO_OK) {
        die(path);
    }
    v = npyio_map_data(m);
    n = (size_t)npyio_header_count(npyio_map_header(m));
    for (i = 0; i < n; i++)
        s += v[i];
    npyio_map_close(m);
    npyio_npz_close(npz);
    t = now() - t0;
    *sum = s;
    return t;
}

/* ---- writing ------------------------------------------------------------------------ */

static double our_save(const char *path, size_t count, const void *const *d,
                       size_t len, int level, int nthreads)
{
    static const char *const keys[WALK_MEMBERS] = {"w0", "w1", "w2", "w3",
                                                   "w4", "w5", "w6", "w7"};
    const npyio_header *hs[WALK_MEMBERS];
    size_t ls[WALK_MEMBERS], i;
    int levels[WALK_MEMBERS];
    npyio_options *o = NULL;
    double t0, t;

    for (i = 0; i < count; i++) {
        hs[i] = count == 1 ? big_header : walk_header;
        ls[i] = len;
        levels[i] = level;
    }
    npyio_options_new(&o);
    npyio_options_set_limit(o, NPYIO_LIMIT_THREADS, nthreads);
    prime();
    t0 = now();
    if (npyio_savez_with_header(path, count, count == 1 ? (const char *const[]){"a"}
                                               : keys,
                       hs, d, ls, levels, NPYIO_WRITE_NO_SYNC, o) != NPYIO_OK)
        die(path);
    t = now() - t0;
    npyio_options_free(o);
    unlink(path);
    return t;
}

static void write_all(int fd, const void *p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len);

        if (n <= 0)
            die("write");
        p = (const char *)p + n;
        len -= (size_t)n;
    }
}

/* The anchor of a stored write: the same bytes, one file, write(). */
static double plain_write(const char *path, const void *data, size_t len)
{
    double t0 = now(), t;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);

    if (fd < 0)
        die(path);
    write_all(fd, data, len);
    close(fd);
    t = now() - t0;
    unlink(path);
    return t;
}

/* The anchor of a deflated write: zlib's deflate of each member in one
 * call into memory, written with write(). */
static double zlib_deflate_write(const char *path, int level)
{
    double t0, t;
    size_t k, cap;
    unsigned char *out;
    int fd;

    prime();
    t0 = now();
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    cap = compressBound((uLong)walk_bytes);
    out = malloc(cap);
    for (k = 0; k < WALK_MEMBERS; k++) {
        z_stream z;

        memset(&z, 0, sizeof z);
        deflateInit2(&z, level, Z_DEFLATED, -MAX_WBITS, 8,
                     Z_DEFAULT_STRATEGY);
        z.next_in = (unsigned char *)walk[k];
        z.avail_in = (uInt)walk_bytes;
        z.next_out = out;
        z.avail_out = (uInt)cap;
        if (deflate(&z, Z_FINISH) != Z_STREAM_END)
            die("deflate");
        (void)crc32_z(0, (const unsigned char *)walk[k], walk_bytes);
        write_all(fd, out, cap - z.avail_out);
        deflateEnd(&z);
    }
    close(fd);
    t = now() - t0;
    free(out);
    unlink(path);
    return t;
}

/* ---- appending ---------------------------------------------------------------------- */

static const int64_t tiny_shape[1] = {5};
static const int64_t tiny[5] = {1, 2, 3, 4, 5};

/* The timed append starts from a fresh copy of the stored archive. */
static void fresh_copy(const char *from, const char *to)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    static char buf[1 << 20];
    ssize_t n;

    if (in < 0 || out < 0)
        die(to);
    while ((n = read(in, buf, sizeof buf)) > 0)
        write_all(out, buf, (size_t)n);
    close(in);
    close(out);
}

static double our_append(const char *path, npyio_header *h)
{
    npyio_npz_writer *w = NULL;
    double t0, t;

    fresh_copy(stored_npz, path);
    prime();
    t0 = now();
    if (npyio_npz_writer_open_append_path(path, NPYIO_WRITE_NO_SYNC, NULL,
                                          &w) !=
            NPYIO_OK ||
        npyio_npz_writer_add_with_header(w, "new", h, tiny, sizeof tiny, 0,
                                         0) != NPYIO_OK ||
        npyio_npz_writer_close(w) != NPYIO_OK)
        die(npyio_last_error());
    t = now() - t0;
    unlink(path);
    return t;
}

/* The design not taken: a new archive through minizip, every old member
 * copied raw, then the new one. */
static double rewrite_append(const char *path, npyio_header *h)
{
    npyio_npz *src = NULL;
    npyio_npz_writer *w = NULL;
    double t0, t;
    size_t i;

    prime();
    t0 = now();
    if (npyio_npz_open_path(stored_npz, NULL, &src) != NPYIO_OK ||
        npyio_npz_writer_create_path(path, NPYIO_WRITE_NO_SYNC, NULL, &w) !=
            NPYIO_OK)
        die(npyio_last_error());
    for (i = 0; i < npyio_npz_count(src); i++)
        if (npyio_npz_writer_copy(w, NULL, src, i) != NPYIO_OK)
            die(npyio_last_error());
    if (npyio_npz_writer_add_with_header(w, "new", h, tiny, sizeof tiny, 0,
                                         0) != NPYIO_OK ||
        npyio_npz_writer_close(w) != NPYIO_OK)
        die(npyio_last_error());
    npyio_npz_close(src);
    t = now() - t0;
    unlink(path);
    return t;
}

/* The anchor: the archive's bytes read and written by plain calls. */
static double plain_copy(const char *path)
{
    double t0, t;

    prime();
    t0 = now();
    fresh_copy(stored_npz, path);
    t = now() - t0;
    unlink(path);
    return t;
}


/* ---- many small members ------------------------------------------------------------- */

static size_t many_members = 10000; /* --members: the first count */
#define MANY_MAX (7 * many_members)

static char **many_keys;
static const npyio_header **many_headers;
static const void **many_data;
static size_t *many_lens;
static int *many_levels;
static float many_values[16];

static void make_many(void)
{
    npyio_dtype *f4 = NULL;
    npyio_header *h = NULL;
    int64_t n = 16;
    size_t i;

    if (npyio_dtype_parse("<f4", 3, NULL, &f4) != NPYIO_OK ||
        npyio_header_new(f4, 1, &n, 0, &h) != NPYIO_OK)
        die("header");
    npyio_dtype_unref(f4);
    many_keys = calloc(MANY_MAX, sizeof *many_keys);
    many_headers = calloc(MANY_MAX, sizeof *many_headers);
    many_data = calloc(MANY_MAX, sizeof *many_data);
    many_lens = calloc(MANY_MAX, sizeof *many_lens);
    many_levels = calloc(MANY_MAX, sizeof *many_levels);
    for (i = 0; i < MANY_MAX; i++) {
        many_keys[i] = malloc(24);
        snprintf(many_keys[i], 24, "a%zu", i);
        many_headers[i] = h;
        many_data[i] = many_values;
        many_lens[i] = sizeof many_values;
    }
}

/* The first `count` members into an archive at path. */
static void many_write(const char *path, size_t count)
{
    if (npyio_savez_with_header(path, count,
                                (const char *const *)many_keys,
                                many_headers, many_data, many_lens,
                                many_levels, NPYIO_WRITE_NO_SYNC,
                                NULL) != NPYIO_OK)
        die(npyio_last_error());
}

static double many_save(const char *path, size_t count)
{
    double t0, t;

    prime();
    t0 = now();
    many_write(path, count);
    t = now() - t0;
    unlink(path);
    return t;
}

static double many_list(const char *path)
{
    npyio_npz *npz = NULL;
    size_t i, n, total = 0;
    double t0, t;

    prime();
    t0 = now();
    if (npyio_npz_open_path(path, NULL, &npz) != NPYIO_OK)
        die(npyio_last_error());
    n = npyio_npz_count(npz);
    for (i = 0; i < n; i++)
        total += strlen(npyio_npz_key(npz, i));
    npyio_npz_close(npz);
    t = now() - t0;
    if (n != MANY_MAX || total == 0)
        die("many list");
    return t;
}

static void bench_many(const char *dir, int rounds)
{
    const size_t counts[3] = {many_members, 2 * many_members,
                              4 * many_members};
    double ours[3][MAX_ROUNDS], np_t[3][MAX_ROUNDS];
    char path[600], list_npz[600], cmd[1300], name[96];
    int r, k;

    make_many();
    snprintf(path, sizeof path, "%s/bench_npz_many.npz", dir);
    snprintf(list_npz, sizeof list_npz, "%s/bench_npz_list.npz", dir);
    for (r = 0; r < rounds; r++)
        for (k = 0; k < 3; k++) {
            ours[k][r] = many_save(path, counts[k]);
            snprintf(cmd, sizeof cmd, "%zu", counts[k]);
            np_t[k][r] = numpy_op("savezmany", path, cmd);
        }
    for (k = 0; k < 3; k++) {
        char med_line[64];
        double med, lo, hi, ratio[MAX_ROUNDS];

        snprintf(name, sizeof name, "write %zu small members", counts[k]);
        report(name, counts[k] * 192, rounds, ours[k], np_t[k], "np.savez",
               NULL, NULL);
        if (k == 0)
            continue;
        for (r = 0; r < rounds; r++)
            ratio[r] = ours[k][r] / ours[k - 1][r];
        stats(ratio, rounds, &med, &lo, &hi);
        snprintf(med_line, sizeof med_line, "%zu -> %zu", counts[k - 1],
                 counts[k]);
        printf("  time per doubling %-14s %.2fx (%.2f..%.2f)\n", med_line,
               med, lo, hi);
        snprintf(name, sizeof name, "time per doubling %s", med_line);
        bench_json(name, "x (time over the half's)", ratio, rounds, NULL,
                   0);
    }
    many_write(list_npz, MANY_MAX);
    for (r = 0; r < rounds; r++) {
        ours[0][r] = many_list(list_npz);
        np_t[0][r] = numpy_op("listmany", list_npz, "-");
    }
    snprintf(name, sizeof name, "open + list %zu members", MANY_MAX);
    report(name, MANY_MAX * 192, rounds, ours[0],
           np_t[0], "np.load(f).files", NULL, NULL);
    unlink(list_npz);
}

/* ---- one libdeflate call (--only libdeflate) -------------------------------------- */

/* npyio_savez of one array at level on nthreads, with flags. */
static double savez_one(const char *path, const npyio_header *h,
                        const void *data, size_t len, int level,
                        int nthreads, uint32_t flags, int64_t *size)
{
    const char *key = "m";
    npyio_options *o = NULL;
    struct stat st;
    double t0, t;

    npyio_options_new(&o);
    npyio_options_set_limit(o, NPYIO_LIMIT_THREADS, nthreads);
    prime();
    t0 = now();
    if (npyio_savez_with_header(path, 1, &key, &h, &data, &len, &level,
                                NPYIO_WRITE_NO_SYNC | flags, o) != NPYIO_OK)
        die(npyio_last_error());
    t = now() - t0;
    npyio_options_free(o);
    if (size != NULL && stat(path, &st) == 0)
        *size = (int64_t)st.st_size;
    unlink(path);
    return t;
}

/* zlib's deflate of the bytes in one call into memory, and their CRC. */
static double zlib_once(const void *data, size_t len, int level)
{
    size_t cap = compressBound((uLong)len);
    unsigned char *out = malloc(cap);
    z_stream z;
    double t0, t;

    prime();
    t0 = now();
    memset(&z, 0, sizeof z);
    deflateInit2(&z, level, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    z.next_in = (unsigned char *)data;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END)
        die("deflate");
    (void)crc32_z(0, data, len);
    deflateEnd(&z);
    t = now() - t0;
    free(out);
    return t;
}

static double tool_pack(const char *tool, const char *out, const char *npy)
{
    char command[2048];
    double t0, t;

    snprintf(command, sizeof command, "%s pack --compress --no-sync %s m=%s",
             tool, out, npy);
    prime();
    t0 = now();
    if (system(command) != 0)
        die(command);
    t = now() - t0;
    unlink(out);
    return t;
}

/* An array NumPy made, loaded here (header and data). */
static void *load_made(const char *npy, npyio_header **h, size_t *len)
{
    npyio_reader *r = NULL;
    const npyio_header *rh;
    void *data = NULL;

    if (npyio_reader_open_path(npy, NULL, &r) != NPYIO_OK)
        die(npyio_last_error());
    rh = npyio_reader_header(r);
    if (npyio_header_new(npyio_header_dtype(rh), npyio_header_ndim(rh),
                         npyio_header_shape(rh),
                         npyio_header_is_fortran_order(rh), h) != NPYIO_OK ||
        npyio_reader_read_alloc(r, 0, &data, len) != NPYIO_OK)
        die(npyio_last_error());
    npyio_reader_close(r);
    return data;
}

/* The size of the archive np.savez_compressed writes of the array kept
 * as `key` (the child prints it before its time). */
static int64_t numpy_size(const char *path, const char *key)
{
    long long size = 0;
    double t;

    fprintf(py_in, "sizec1 %s %s\n", path, key);
    fflush(py_in);
    if (fscanf(py_out, "%lld %lf", &size, &t) != 2)
        die("NumPy child");
    return (int64_t)size;
}

/* One thread: ours, the tool, zlib, NumPy; the sizes. */
static void libdeflate_one_thread(const char *dir, const char *tool,
                                  const char *npy, int rounds)
{
    double ours[MAX_ROUNDS], pack[MAX_ROUNDS], ref1[MAX_ROUNDS],
        ref2[MAX_ROUNDS];
    char out[512], np_out[512];
    npyio_header *h = NULL;
    size_t len = 0;
    void *data = load_made(npy, &h, &len);
    int64_t size = 0, np_size;
    int r;

    snprintf(out, sizeof out, "%s/bench_npz_whole.npz", dir);
    snprintf(np_out, sizeof np_out, "%s/bench_npz_numpy.npz", dir);
    numpy_op("keepas", npy, "m");
    for (r = 0; r < rounds; r++) {
        ours[r] = savez_one(out, h, data, len, 6, 1, 0, &size);
        pack[r] = tool_pack(tool, out, npy);
        ref1[r] = zlib_once(data, len, 6);
        ref2[r] = numpy_op("savezc1", np_out, "m");
    }
    report("savez 6, 1 thread (measure)", len, rounds, ours, ref1,
           "zlib deflate", ref2, "np.savez_compressed");
    report("pack --compress (measure)", len, rounds, pack, ref1,
           "zlib deflate", ref2, "np.savez_compressed");
    np_size = numpy_size(np_out, "m");
    printf("  archive size: ours %lld, NumPy's %lld (%.4fx)\n",
           (long long)size, (long long)np_size,
           (double)size / (double)np_size);
    npyio_header_free(h);
    npyio_free(data);
}

/* Two threads: one libdeflate call vs zlib's blocks (the flag), and vs
 * one zlib thread, at levels 1 and 6. */
static void libdeflate_two_threads(const char *dir, const char *npy,
                                   const char *kind, int rounds)
{
    double ours[MAX_ROUNDS], blocks[MAX_ROUNDS], one[MAX_ROUNDS];
    static const int levels[2] = {1, 6};
    char out[512], name[96];
    npyio_header *h = NULL;
    size_t len = 0;
    void *data = load_made(npy, &h, &len);
    int r, k;

    snprintf(out, sizeof out, "%s/bench_npz_whole2.npz", dir);
    for (k = 0; k < 2; k++) {
        for (r = 0; r < rounds; r++) {
            ours[r] = savez_one(out, h, data, len, levels[k], 2, 0, NULL);
            blocks[r] = savez_one(out, h, data, len, levels[k], 2,
                                  NPYIO_NPZ_WRITE_ZLIB, NULL);
            one[r] = savez_one(out, h, data, len, levels[k], 1,
                               NPYIO_NPZ_WRITE_ZLIB, NULL);
        }
        snprintf(name, sizeof name, "2 threads, %s level %d", kind,
                 levels[k]);
        report(name, len, rounds, ours, blocks, "zlib blocks, 2 threads",
               one, "zlib, 1 thread");
    }
    npyio_header_free(h);
    npyio_free(data);
}

static void bench_libdeflate(const char *dir, const char *tool, size_t mib,
                             int rounds)
{
    char npy[512], ramp[512], size[32];

    snprintf(npy, sizeof npy, "%s/bench_npz_measure.npy", dir);
    snprintf(ramp, sizeof ramp, "%s/bench_npz_ramp.npy", dir);
    snprintf(size, sizeof size, "%zu", mib);
    numpy_op("measurenpy", npy, size);
    numpy_op("rampnpy", ramp, size);
    libdeflate_one_thread(dir, tool, npy, rounds);
    libdeflate_two_threads(dir, npy, "float64", rounds);
    libdeflate_two_threads(dir, ramp, "int32 ramp", rounds);
    unlink(npy);
    unlink(ramp);
}

/* ---- NumPy -------------------------------------------------------------------------- */

static void start_numpy_npz(void)
{
    start_numpy_script(
        "import sys, time, os, numpy as np\n"
        "keep = {}\n"
        "for line in sys.stdin:\n"
        "    w = line.split(); op = w[0]\n"
        "    t0 = time.perf_counter()\n"
        "    if op == 'member':\n"
        "        with np.load(w[1]) as z: a = z[w[2]]\n"
        "    elif op == 'keep': keep[w[2]] = np.load(w[1])\n"
        "    elif op == 'savez': np.savez(w[1], a=keep['a'])\n"
        "    elif op == 'append':\n"
        "        with np.load(w[1]) as z: d = {k: z[k] for k in z.files}\n"
        "        d['new'] = np.arange(1, 6); np.savez(w[2], **d); d = None\n"
        "        os.unlink(w[2])\n"
        "    elif op == 'savezmany':\n"
        "        a = np.zeros(16, '<f4')\n"
        "        np.savez(w[1], **{'a%d' % i: a for i in range(int(w[2]))})\n"
        "    elif op == 'listmany':\n"
        "        with np.load(w[1]) as z: f = z.files\n"
        "    elif op == 'measure':\n"
        "        n = int(w[2]) << 17; x = np.arange(n) * 1e-3\n"
        "        g = np.random.default_rng(7)\n"
        "        m = np.round(np.sin(x) * 50 + g.normal(0, 1, n), 2)\n"
        "        np.savez_compressed(w[1], m=m); m = x = None\n"
        "    elif op == 'measurenpy':\n"
        "        n = int(w[2]) << 17; x = np.arange(n) * 1e-3\n"
        "        g = np.random.default_rng(7)\n"
        "        np.save(w[1], np.round(np.sin(x) * 50 + g.normal(0, 1, n), 2))\n"
        "        x = None\n"
        "    elif op == 'rampnpy':\n"
        "        np.save(w[1], np.arange(int(w[2]) << 18, dtype='<i4'))\n"
        "    elif op == 'keepas': keep[w[2]] = np.load(w[1])\n"
        "    elif op == 'savezc1': np.savez_compressed(w[1], m=keep[w[2]])\n"
        "    elif op == 'sizec1':\n"
        "        np.savez_compressed(w[1], m=keep[w[2]])\n"
        "        a = os.path.getsize(w[1]); os.unlink(w[1]); print(a)\n"
        "    elif op == 'savezc':\n"
        "        np.savez_compressed(w[1], **{'w%d' % i: keep['w']\n"
        "                                     for i in range(8)})\n"
        "    t = time.perf_counter() - t0\n"
        "    if op.startswith('save'): os.unlink(w[1])\n"
        "    a = None\n"
        "    print(t, flush=True)\n");
}

static double numpy_op(const char *op, const char *a, const char *b)
{
    char command[4096];

    snprintf(command, sizeof command, "%s %s %s", op, a, b);
    return numpy_time(command);
}

int main(int argc, char **argv)
{
    const char *dir = "/dev/shm", *only = "", *tool = NULL;
    char tool_path[4096];
    int rounds = 5, r, i;
    size_t mib = 256, walk_mib = 32;
    double ours[MAX_ROUNDS], ref1[MAX_ROUNDS], ref2[MAX_ROUNDS],
        par[MAX_ROUNDS], sum1 = 0, sum2 = 0;
    int64_t at = 0, csize = 0, wat = 0, wcsize = 0;
    const void *big;
    const void *walks[WALK_MEMBERS];
    const bench_option options[] = {
        BENCH_SIZE_ROUNDS_DIR(mib, rounds, dir),
        {"--threads", BENCH_INT, &threads}, {"--only", BENCH_TEXT, &only},
        {"--walk", BENCH_SIZE, &walk_mib},
        {"--members", BENCH_SIZE, &many_members},
        {"--tool", BENCH_TEXT, &tool}, BENCH_END};

    bench_args(argc, argv, 1, options);
    if (rounds < 1 || rounds > MAX_ROUNDS)
        rounds = 5;
    if (mib < 1 || walk_mib < 1 || many_members < 1)
        die("--size, --walk or --members");
    nbytes = mib << 20;
    walk_bytes = walk_mib << 20;
    snprintf(stored_npz, sizeof stored_npz, "%s/bench_npz_stored.npz", dir);
    snprintf(plain_npy, sizeof plain_npy, "%s/bench_npz_plain.npy", dir);
    snprintf(walk_npz, sizeof walk_npz, "%s/bench_npz_walk.npz", dir);
    snprintf(walk_par_npz, sizeof walk_par_npz, "%s/bench_npz_walk2.npz",
             dir);
    snprintf(walk_npy, sizeof walk_npy, "%s/bench_npz_walk.npy", dir);
    snprintf(out_npz, sizeof out_npz, "%s/bench_npz_out.npz", dir);
    snprintf(out_raw, sizeof out_raw, "%s/bench_npz_out.raw", dir);
    if (strcmp(only, "inflate") == 0) {
        start_numpy_npz();
        printf("bench_npz: np.savez_compressed member of %zu MiB, %s, %d "
               "rounds\n", mib, dir, rounds);
        bench_inflate(dir, mib, rounds);
        stop_numpy();
        return 0;
    }
    if (strcmp(only, "libdeflate") == 0) {
        if (tool == NULL) {
            const char *slash = strrchr(argv[0], '/');

            snprintf(tool_path, sizeof tool_path, "%.*s/../src/npyio",
                     slash != NULL ? (int)(slash - argv[0]) : 1,
                     slash != NULL ? argv[0] : ".");
            tool = tool_path;
        }
        start_numpy_npz();
        printf("bench_npz: whole members, one libdeflate call, %zu MiB, %s, "
               "%d rounds\n", mib, dir, rounds);
        bench_libdeflate(dir, tool, mib, rounds);
        stop_numpy();
        return 0;
    }
    if (strcmp(only, "many") == 0) {
        start_numpy_npz();
        printf("bench_npz: many small members, %s, %d rounds\n", dir,
               rounds);
        bench_many(dir, rounds);
        stop_numpy();
        return 0;
    }
    make_inputs();
    member_place(stored_npz, "a", &at, &csize);
    member_place(walk_npz, "w0", &wat, &wcsize);
    start_numpy_npz();
    numpy_op("keep", plain_npy, "a");
    numpy_op("keep", walk_npy, "w");
    printf("bench_npz: %zu MiB stored member, %d x %zu MiB random walk, %s, "
           "%d rounds\n", mib, WALK_MEMBERS, walk_mib, dir, rounds);

    for (r = 0; r < rounds && (!*only || !strcmp(only, "read")); r++) {
        ours[r] = our_member_read(stored_npz, "a");
        ref1[r] = plain_pread(stored_npz, at, (size_t)csize);
        ref2[r] = numpy_op("member", stored_npz, "a");
    }
    if (!*only || !strcmp(only, "read"))
        report("stored read (CRC)", nbytes, rounds, ours, ref1, "pread",
               ref2, "np.load[key]");
    for (r = 0; r < rounds && (!*only || !strcmp(only, "read")); r++) {
        ours[r] = our_member_read_on(stored_npz, "a", threads);
        ref2[r] = our_member_read_on(stored_npz, "a", 1);
        ref1[r] = plain_pread(stored_npz, at, (size_t)csize);
    }
    if (!*only || !strcmp(only, "read"))
        report("stored read (CRC), N threads", nbytes, rounds, ours, ref2,
               "1 thread", ref1, "pread");
    for (r = 0; r < rounds && (!*only || !strcmp(only, "read")); r++) {
        ours[r] = map_sum(stored_npz, 1, &sum1);
        ref1[r] = map_sum(plain_npy, 0, &sum2);
    }
    if (sum1 != sum2)
        die("mapped sums differ");
    if (!*only || !strcmp(only, "read"))
        report("mapped member + sum", nbytes, rounds, ours, ref1,
               "mapped .npy", NULL, NULL);
    for (r = 0; r < rounds && (!*only || !strcmp(only, "read")); r++) {
        ours[r] = our_member_read(walk_npz, "w0");
        ref1[r] = zlib_inflate(walk_npz, wat, (size_t)wcsize,
                               walk_bytes + 128);
        ref2[r] = numpy_op("member", walk_npz, "w0");
    }
    if (!*only || !strcmp(only, "read"))
        report("deflated read", walk_bytes, rounds, ours, ref1,
               "zlib inflate", ref2, "np.load[key]");
    if (!*only || !strcmp(only, "read"))
        bench_inflate(dir, mib, rounds);
    member_place(walk_par_npz, "w0", &wat, &wcsize);
    for (r = 0; r < rounds && (!*only || !strcmp(only, "read")); r++) {
        ours[r] = our_member_read_on(walk_par_npz, "w0", threads);
        ref2[r] = our_member_read_on(walk_par_npz, "w0", 1);
        ref1[r] = zlib_inflate(walk_par_npz, wat, (size_t)wcsize,
                               walk_bytes + 128);
    }
    if (!*only || !strcmp(only, "read"))
        report("indexed deflated, N threads", walk_bytes, rounds, ours,
               ref2, "1 thread", ref1, "zlib inflate");
    for (r = 0; r < rounds && (!*only || !strcmp(only, "read")); r++) {
        ours[r] = our_random_rows(walk_par_npz, "w0");
        ref1[r] = our_random_rows(walk_npz, "w0");
    }
    if (!*only || !strcmp(only, "read"))
        report("20 random rows, indexed", walk_bytes, rounds, ours, ref1,
               "no index", NULL, NULL);
    big = values;
    for (r = 0; r < rounds && (!*only || !strcmp(only, "write")); r++) {
        ours[r] = our_save(out_npz, 1, &big, nbytes, 0, 1);
        ref1[r] = plain_write(out_raw, values, nbytes);
        ref2[r] = numpy_op("savez", out_npz, "-");
    }
    if (!*only || !strcmp(only, "write"))
        report("stored write", nbytes, rounds, ours, ref1, "write()", ref2,
               "np.savez");
    for (i = 0; i < WALK_MEMBERS; i++)
        walks[i] = walk[i];
    for (r = 0; r < rounds && (!*only || !strcmp(only, "deflate")); r++) {
        ours[r] = our_save(out_npz, WALK_MEMBERS, walks, walk_bytes, 6, 1);
        par[r] = our_save(out_npz, WALK_MEMBERS, walks, walk_bytes, 6,
                          threads);
        ref1[r] = zlib_deflate_write(out_raw, 6);
        ref2[r] = numpy_op("savezc", out_npz, "-");
    }
    if (!*only || !strcmp(only, "deflate")) {
        report("deflate 6, 1 thread", WALK_MEMBERS * walk_bytes, rounds,
               ours, ref1, "zlib deflate", ref2, "np.savez_compressed");
        report("deflate 6, N threads", WALK_MEMBERS * walk_bytes, rounds,
               par, ref1, "zlib deflate", ref2, "np.savez_compressed");
    }
    for (r = 0; r < rounds && (!*only || !strcmp(only, "append")); r++) {
        npyio_header *h = NULL;
        npyio_dtype *i8 = NULL;

        if (npyio_dtype_parse("<i8", 3, NULL, &i8) != NPYIO_OK ||
            npyio_header_new(i8, 1, tiny_shape, 0, &h) != NPYIO_OK)
            die(npyio_last_error());
        npyio_dtype_unref(i8);
        ours[r] = our_append(out_npz, h);
        par[r] = rewrite_append(out_npz, h);
        ref1[r] = plain_copy(out_raw);
        ref2[r] = numpy_op("append", stored_npz, out_npz);
        npyio_header_free(h);
    }
    if (!*only || !strcmp(only, "append")) {
        report("append (kernel copy)", nbytes, rounds, ours, ref1,
               "read+write", ref2, "np.load+savez");
        report("append (minizip copy)", nbytes, rounds, par, ref1,
               "read+write", ref2, "np.load+savez");
    }
    stop_numpy();
    unlink(stored_npz);
    unlink(plain_npy);
    unlink(walk_npz);
    unlink(walk_par_npz);
    unlink(walk_npy);
    return 0;
}
