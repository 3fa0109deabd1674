/*
 * bench_member.c - a big-endian stored archive member loaded with a
 * conversion, on one thread and on several (not part of ctest: figures
 * are reported, never asserted).
 *
 *   bench_member [--size MiB] [--rounds N] [--dir DIR] [--threads N]
 *
 * Defaults: a 256 MiB '>f8' member written by NumPy's np.savez (stored),
 * /dev/shm, 5 rounds, --threads 2. Each round runs every contender once,
 * interleaved, priming huge-page memory before each (benchutil.h's
 * prime()). Lines, for 1 thread and for --threads threads
 * (NPYIO_LIMIT_THREADS):
 *
 *   swap >f8 member, T threads  npyio_npz_open_path + the member read whole
 *                  into fresh memory as native '<f8' (a byte swap; CRC
 *                  checked) vs open + pread of the member's bytes into
 *                  fresh memory (the floor: no swap), and vs
 *                  np.load(path)['a'].astype('=f8')
 *   cast >f8 member to <f4, T threads  the same read with the type '<f4'
 *                  (NPYIO_READ_CAST_SAME_KIND) vs pread, and vs
 *                  np.load(path)['a'].astype('<f4')
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchutil.h"
#include "bench.h"

static char member_npz[512];

static npyio_options *with_threads(int threads)
{
    npyio_options *o = NULL;

    if (npyio_options_new(&o) != NPYIO_OK ||
        npyio_options_set_limit(o, NPYIO_LIMIT_THREADS, threads) != NPYIO_OK)
        die("options");
    return o;
}

/* Open the archive, read member "a" whole into fresh memory: as native
 * (type NULL) or converted to `type`. */
static double our_load(const char *type, int threads)
{
    npyio_options *o = with_threads(threads);
    npyio_npz *npz = NULL;
    npyio_reader *r = NULL;
    void *data = NULL;
    size_t index = 0;
    double t0, t;

    prime();
    t0 = now();
    if (npyio_npz_open_path(member_npz, o, &npz) != NPYIO_OK ||
        npyio_npz_find(npz, "a", &index, NULL) != NPYIO_OK ||
        npyio_reader_open_member(npz, index, &r) != NPYIO_OK ||
        (type != NULL &&
         npyio_reader_set_type(r, type, NPYIO_READ_CAST_SAME_KIND) !=
             NPYIO_OK) ||
        npyio_reader_read_alloc(r, type == NULL ? NPYIO_READ_NATIVE : 0,
                                &data, NULL) != NPYIO_OK)
        die(member_npz);
    npyio_reader_close(r);
    npyio_npz_close(npz);
    t = now() - t0;
    npyio_free(data);
    npyio_options_free(o);
    return t;
}

static void start_numpy_member(void)
{
    start_numpy_script(
        "import sys, time, numpy as np\n"
        "for line in sys.stdin:\n"
        "    w = line.split(); op, path = w[0], w[1]\n"
        "    t0 = time.perf_counter()\n"
        "    if op == 'make':\n"
        "        np.savez(path, a=np.arange(int(w[2]), dtype='>f8') * 0.5)\n"
        "    else:\n"
        "        with np.load(path) as z: a = z['a'].astype(op)\n"
        "    t = time.perf_counter() - t0\n"
        "    a = None\n"
        "    print(t, flush=True)\n");
}

static double numpy_load(const char *type)
{
    char command[600];

    snprintf(command, sizeof command, "%s %s", type, member_npz);
    return numpy_time(command);
}

/* Where member "a" lies: its data offset and stored size. */
static void member_place(int64_t *at, int64_t *size)
{
    npyio_npz *npz = NULL;
    size_t index = 0;

    if (npyio_npz_open_path(member_npz, NULL, &npz) != NPYIO_OK ||
        npyio_npz_find(npz, "a", &index, NULL) != NPYIO_OK ||
        npyio_npz_stat(npz, index, NPYIO_NPZ_STAT_DATA_OFFSET, at) !=
            NPYIO_OK ||
        npyio_npz_stat(npz, index, NPYIO_NPZ_STAT_COMPRESSED_SIZE, size) !=
            NPYIO_OK)
        die(member_npz);
    npyio_npz_close(npz);
}

/* One line: the load as `type` (NULL: native) on `threads` threads. */
static void bench_line(const char *name, const char *type, const char *np_type,
                       int threads, int rounds, size_t nbytes, int64_t at,
                       int64_t size)
{
    double ours[MAX_ROUNDS], floor_t[MAX_ROUNDS], np_t[MAX_ROUNDS];
    char label[96];
    int r;

    for (r = 0; r < rounds; r++) {
        ours[r] = our_load(type, threads);
        floor_t[r] = plain_pread(member_npz, at, (size_t)size);
        np_t[r] = numpy_load(np_type);
    }
    snprintf(label, sizeof label, "%s, %d thread%s", name, threads,
             threads == 1 ? "" : "s");
    report(label, nbytes, rounds, ours, floor_t, "pread", np_t,
           "np.load+astype");
}

int main(int argc, char **argv)
{
    const char *dir = "/dev/shm";
    int rounds = 5, threads = 2, i;
    size_t mib = 256;
    int64_t at = 0, size = 0;
    char command[600];
    const bench_option options[] = {BENCH_SIZE_ROUNDS_DIR(mib, rounds, dir),
                                    {"--threads", BENCH_INT, &threads},
                                    BENCH_END};

    bench_args(argc, argv, 1, options);
    if (rounds < 1 || rounds > MAX_ROUNDS)
        rounds = 5;
    if (mib < 1 || threads < 1)
        die("--size or --threads");
    snprintf(member_npz, sizeof member_npz, "%s/bench_member.npz", dir);
    start_numpy_member();
    snprintf(command, sizeof command, "make %s %zu", member_npz,
             (mib << 20) / 8);
    numpy_time(command);
    member_place(&at, &size);
    printf("bench_member: %zu MiB '>f8' stored member (np.savez), %s, %d "
           "rounds\n", mib, dir, rounds);
    for (i = 0; i < 2; i++) {
        int t = i == 0 ? 1 : threads;

        bench_line("swap >f8 member", NULL, "=f8", t, rounds, mib << 20, at,
                   size);
        bench_line("cast >f8 member to <f4", "<f4", "<f4", t, rounds,
                   mib << 20, at, size);
    }
    stop_numpy();
    unlink(member_npz);
    return 0;
}
