/*
 * bench_header.c - header parse + emit speed against NumPy, measured side
 * by side in one run (not part of ctest: machines here are shared and
 * noisy, so timings are reported, never asserted).
 *
 *   bench_header [ROUNDS]
 *
 * For each header: libnpyio parses it, emits it again and frees it, in a
 * loop; NumPy (/usr/bin/python3) runs read_magic + read_array_header_1_0
 * (or _2_0) on the same bytes, in a child started once. The two sides
 * alternate, round by round, ROUNDS rounds each (default 7) of at least
 * 0.3 s; the median rate, min and max are printed, and the ratio of the
 * medians.
 */
#define _POSIX_C_SOURCE 200809L
#include "benchutil.h"

/* Headers per second of parse + emit + free, one round. */
static double round_rate(const unsigned char *hdr, size_t len)
{
    unsigned char out[65536];
    long n = 0, batch = 1000;
    double start = now(), elapsed;

    do {
        long i;

        for (i = 0; i < batch; i++) {
            npyio_header *h = NULL;
            size_t olen;

            if (npyio_header_parse(hdr, len, NULL, &h, NULL) != NPYIO_OK ||
                npyio_header_emit(h, 0, out, sizeof out, &olen) != NPYIO_OK) {
                fprintf(stderr, "bench: %s\n", npyio_last_error());
                exit(1);
            }
            npyio_header_free(h);
        }
        n += batch;
        elapsed = now() - start;
    } while (elapsed < 0.3);
    return (double)n / elapsed;
}

/* A persistent NumPy child (started once, never timed): each line of hex
 * bytes gets one round of read_magic + read_array_header on them, and the
 * rate is printed. The rounds of both sides alternate. */
static void start_numpy_header(void)
{
    start_numpy_script(
        "import io, sys, time, numpy.lib.format as f\n"
        "for line in sys.stdin:\n"
        "    b = bytes.fromhex(line.strip())\n"
        "    read = f.read_array_header_1_0 if b[6] == 1 else "
        "f.read_array_header_2_0\n"
        "    n, t0 = 0, time.perf_counter()\n"
        "    while time.perf_counter() - t0 < 0.3:\n"
        "        for i in range(100):\n"
        "            fp = io.BytesIO(b); f.read_magic(fp); read(fp)\n"
        "        n += 100\n"
        "    print(n / (time.perf_counter() - t0), flush=True)\n");
}

static double numpy_round(const char *hex)
{
    double rate;

    fprintf(py_in, "%s\n", hex);
    fflush(py_in);
    if (fscanf(py_out, "%lf", &rate) != 1) {
        fprintf(stderr, "bench: NumPy run failed (is python3-numpy "
                        "installed?)\n");
        exit(1);
    }
    return rate;
}

static void bench(const char *name, const npyio_header *h, int rounds)
{
    unsigned char bytes[65536];
    char hex[2 * sizeof bytes + 1];
    double ours[64], theirs[64], times[2][64];
    bench_ratio numpy;
    size_t len, i;
    int r;

    npyio_header_emit(h, 0, bytes, sizeof bytes, &len);
    for (i = 0; i < len; i++)
        sprintf(hex + 2 * i, "%02x", bytes[i]);
    for (r = 0; r < rounds; r++) { /* interleaved, round by round */
        ours[r] = round_rate(bytes, len);
        theirs[r] = numpy_round(hex);
        times[0][r] = 1 / ours[r];
        times[1][r] = 1 / theirs[r];
    }
    numpy = bench_ratio_of("NumPy read_array_header", times[1], times[0],
                           rounds);
    bench_json(name, "headers/s", ours, rounds, &numpy, 1);
    qsort(ours, (size_t)rounds, sizeof *ours, compare);
    qsort(theirs, (size_t)rounds, sizeof *theirs, compare);
    printf("%-34s libnpyio %9.0f/s (%.0f..%.0f)  NumPy %7.0f/s "
           "(%.0f..%.0f)  ratio %.0fx\n", name, ours[rounds / 2], ours[0],
           ours[rounds - 1], theirs[rounds / 2], theirs[0],
           theirs[rounds - 1], ours[rounds / 2] / theirs[rounds / 2]);
}

/* A record of n fields of assorted types, subarrays and a title among
 * them, like a table of measurements. */
static npyio_header *record_header(int n)
{
    static const char *const types[] = {"<f8", "<i4", "|u1", ">f4", "<i8",
                                        "S8", "<U4", "<M8[ns]", "<c16"};
    npyio_record_builder *b = NULL;
    npyio_header *h = NULL;
    npyio_dtype *rec = NULL;
    int64_t three[1] = {3}, rows[1] = {1000};
    int i;

    npyio_record_builder_new(0, NULL, &b);
    for (i = 0; i < n; i++) {
        const char *type = types[i % 9];
        npyio_dtype *dt = NULL;
        char name[32];

        snprintf(name, sizeof name, "field_%02d", i);
        npyio_dtype_parse(type, strlen(type), NULL, &dt);
        if (npyio_record_builder_add(b, name, i == 7 ? "a title" : NULL, -1,
                                     dt, i % 5 == 4 ? 1 : 0, three) !=
            NPYIO_OK) {
            fprintf(stderr, "bench: %s\n", npyio_last_error());
            exit(1);
        }
        npyio_dtype_unref(dt);
    }
    npyio_record_builder_finish(b, 0, &rec);
    npyio_record_builder_free(b);
    if (npyio_header_new(rec, 1, rows, 0, &h) != NPYIO_OK) {
        fprintf(stderr, "bench: %s\n", npyio_last_error());
        exit(1);
    }
    npyio_dtype_unref(rec);
    return h;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 7;
    int64_t shape[2] = {1000, 1000};
    npyio_dtype *f8 = NULL;
    npyio_header *h = NULL;

    if (rounds < 1 || rounds > MAX_ROUNDS)
        rounds = 7;
    if (npyio_dtype_parse("<f8", 3, NULL, &f8) != NPYIO_OK ||
        npyio_header_new(f8, 2, shape, 0, &h) != NPYIO_OK) {
        fprintf(stderr, "bench: %s\n", npyio_last_error());
        return 1;
    }
    start_numpy_header();
    printf("header parse+emit (libnpyio) vs read_magic+read_array_header "
           "(NumPy), medians of %d interleaved rounds\n", rounds);
    bench("'<f8' (1000, 1000)", h, rounds);
    npyio_header_free(h);
    h = record_header(50);
    bench("50-field record (1000,)", h, rounds);
    npyio_header_free(h);
    npyio_dtype_unref(f8);
    stop_numpy();
    return 0;
}
