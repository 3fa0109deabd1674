/*
 * bench_reorder.c - reordering at memory speed (issue 16, part 2): Fortran
 * files read into C order through chunks and row ranges, and C data
 * written in Fortran order by the tool, against NumPy's in-memory
 * equivalent and against the library's own whole-array reorder, side by
 * side in one run (not part of ctest).
 *
 *   bench_reorder [--size MB] [--rounds N] [--dir DIR] [--chunk SIZE]
 *                 [--tool PATH] [--tmpdir DIR] [--only SHAPE]
 *
 * Defaults: arrays of 200 MB of float64 (the size) in /dev/shm,
 * 7 rounds, chunks of 64 MiB (the tool's; at least one row; --chunk 64K
 * for KiB), shapes tall
 * (5,000,000, 5), wide (5, 5,000,000), square (5000, 5000) and 3-D
 * (200, 250, 500), scaled with --size.
 *
 * Read into C order (a Fortran file):
 *   chunks       npyio_reader_read_chunk, NPYIO_READ_C_ORDER, one buffer
 *   rows         npyio_reader_read_rows, bands of the same size
 *   dump file    `npyio dump FILE > /dev/null`
 *   dump pipe    the same from a pipe (the tool copies it to a temporary
 *                file in $TMPDIR, else /tmp, or --tmpdir's directory,
 *                then reads that copy)
 * against NumPy np.ascontiguousarray(np.load(FILE)) (from the pipe:
 * np.load(io.BytesIO(pipe.read())), as NumPy cannot load a pipe) and the
 * library's npyio_load_with_header(FILE, NPYIO_READ_C_ORDER).
 *
 * Written in Fortran order (a C file):
 *   convert file `npyio convert --order F FILE OUT`
 *   convert pipe the same from a pipe
 * against NumPy np.save(OUT, np.asfortranarray(np.load(FILE))) and the
 * library's whole-array equivalent: npyio_load_with_header with NPYIO_READ_C_ORDER of
 * the same bytes under a header that calls them the Fortran array of the
 * reversed shape (what the tool reads), then npyio_save_with_header of the result.
 *
 * Every contender writes to the same OUT and reads the same files; each
 * round runs every contender once, in a rotating order, each after
 * priming (benchutil.h's prime()). Printed: medians (min..max) of the per-round
 * ratios, > 1 meaning ours is faster; the targets are >= 1 against NumPy
 * and >= 0.5 against the whole-array load. Then the peak RSS of each of
 * ours (chunks and rows: what a pass adds in a fresh child; the tool: its
 * whole process), beside the whole-array load's.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "benchutil.h"
#include "bench.h"

#ifndef NPYIO_TOOL
#define NPYIO_TOOL "npyio"
#endif

enum {
    /* Fortran file, read in C order */
    A_CHUNKS, A_ROWS, A_DUMP, A_DUMP_PIPE, A_WHOLE, A_WHOLE_PIPE, A_NUMPY,
    A_NUMPY_PIPE,
    /* C file, written in Fortran order */
    B_CONVERT, B_CONVERT_PIPE, B_WHOLE, B_WHOLE_PIPE, B_NUMPY, B_NUMPY_PIPE,
    CONTENDERS
};

typedef struct shape_case {
    const char *name;
    int ndim;
    int64_t shape[3];
} shape_case;

static const char *tool = NPYIO_TOOL, *dir = "/dev/shm", *tmpdir;
static size_t chunk_bytes = (size_t)64 << 20;

/* ---- files ------------------------------------------------------------------------- */

static npyio_header *header_of(int ndim, const int64_t *shape, int fortran)
{
    npyio_dtype *f8 = NULL;
    npyio_header *h = NULL;

    if (npyio_dtype_parse("<f8", 3, NULL, &f8) != NPYIO_OK ||
        npyio_header_new(f8, ndim, shape, fortran, &h) != NPYIO_OK)
        die("header");
    npyio_dtype_unref(f8);
    return h;
}

/* The Fortran file (read into C order), the C file (converted to Fortran)
 * and the C file's data under the Fortran header of the reversed shape. */
static void make_files(const shape_case *s, const char *f_path,
                       const char *c_path, const char *view_path)
{
    int64_t reversed[3];
    npyio_header *hf = header_of(s->ndim, s->shape, 1);
    npyio_header *hc = header_of(s->ndim, s->shape, 0);
    npyio_header *hv;
    size_t n = (size_t)npyio_header_count(hf), k;
    double *data = thp_alloc(n * sizeof *data);
    int i;

    for (i = 0; i < s->ndim; i++)
        reversed[i] = s->shape[s->ndim - 1 - i];
    hv = header_of(s->ndim, reversed, 1);
    for (k = 0; k < n; k++)
        data[k] = (double)k;
    if (npyio_save_with_header(f_path, hf, data, n * sizeof *data, 0,
                               NULL) != NPYIO_OK ||
        npyio_save_with_header(c_path, hc, data, n * sizeof *data, 0,
                               NULL) != NPYIO_OK ||
        npyio_save_with_header(view_path, hv, data, n * sizeof *data, 0,
                               NULL) != NPYIO_OK)
        die("writing the inputs");
    free(data);
    npyio_header_free(hf);
    npyio_header_free(hc);
    npyio_header_free(hv);
}

/* ---- libnpyio: chunks, rows, whole loads ---------------------------------------------- */

static size_t chunk_cap(const npyio_header *h)
{
    size_t row = (size_t)npyio_header_nbytes(h) / (size_t)npyio_header_shape(h)[0];
    size_t cap = chunk_bytes, all = (size_t)npyio_header_nbytes(h);

    if (cap > all) /* as the tool: no more than the array */
        cap = all;
    return cap < row ? row : cap;
}

static uint64_t sample; /* a checksum of what was read, so it is used */
static int priming = 1;  /* off for the RSS measurements */

static void maybe_prime(void)
{
    if (priming)
        prime();
}

static void take(const unsigned char *buf, size_t len)
{
    size_t i;

    for (i = 0; i < len; i += 4093)
        sample += buf[i];
}

static double our_chunks(const char *path, unsigned char *buf)
{
    npyio_reader *r = NULL;
    size_t got = 0, total = 0;
    double t0;
    npyio_status st;

    maybe_prime();
    t0 = now();
    if (npyio_reader_open_path(path, NULL, &r) != NPYIO_OK)
        die(path);
    while ((st = npyio_reader_read_chunk(r, buf, chunk_cap(npyio_reader_header(r)),
                                         NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER,
                                         &got)) == NPYIO_OK) {
        take(buf, got);
        total += got;
    }
    if (st != NPYIO_END || total != (size_t)npyio_header_nbytes(npyio_reader_header(r)))
        die("chunks");
    npyio_reader_close(r);
    return now() - t0;
}

static double our_rows(const char *path, unsigned char *buf)
{
    npyio_reader *r = NULL;
    const npyio_header *h;
    int64_t first, rows, band;
    size_t cap, row;
    double t0;

    maybe_prime();
    t0 = now();
    if (npyio_reader_open_path(path, NULL, &r) != NPYIO_OK)
        die(path);
    h = npyio_reader_header(r);
    rows = npyio_header_shape(h)[0];
    row = (size_t)npyio_header_nbytes(h) / (size_t)rows;
    cap = chunk_cap(h);
    band = (int64_t)(cap / row);
    for (first = 0; first < rows; first += band) {
        int64_t n = rows - first < band ? rows - first : band;

        if (npyio_reader_read_rows(r, first, n, buf, cap,
                                   NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER) !=
            NPYIO_OK)
            die("rows");
        take(buf, (size_t)n * row);
    }
    npyio_reader_close(r);
    return now() - t0;
}

static void feed(const char *path, int fd);

/* The whole array in memory, reordered, from the file or through a pipe
 * fed by a child (npyio_reader_read_alloc on a stream that cannot seek:
 * the data arrives whole, then is placed in C order); with save_to, then
 * saved as the Fortran array it is (for the C -> F direction). */
static double our_whole(const char *path, int piped, const char *save_to)
{
    npyio_header *h = NULL, *out = NULL;
    npyio_stream *s = NULL;
    npyio_reader *r = NULL;
    const npyio_header *in;
    void *data = NULL;
    pid_t feeder = -1;
    int p[2] = {-1, -1};
    double t0, t;

    maybe_prime();
    t0 = now();
    if (!piped) {
        if (npyio_load_with_header(path, NPYIO_READ_NATIVE | NPYIO_READ_C_ORDER, NULL,
                       &h, &data) != NPYIO_OK)
            die(path);
        in = h;
    } else {
        if (pipe(p) != 0)
            die("pipe");
        feeder = fork();
        if (feeder == 0) {
            close(p[0]);
            feed(path, p[1]);
        }
        close(p[1]);
        if (npyio_stream_open_fd(p[0], NULL, &s) != NPYIO_OK ||
            npyio_reader_open_stream(s, NULL, &r) != NPYIO_OK ||
            npyio_reader_read_alloc(r, NPYIO_READ_NATIVE |
                                           NPYIO_READ_C_ORDER,
                                    &data, NULL) != NPYIO_OK)
            die("reading a pipe");
        in = npyio_reader_header(r);
    }
    take(data, (size_t)npyio_header_nbytes(in));
    if (save_to != NULL) {
        /* The loaded array is the original's Fortran order: write it as
         * the Fortran array of the original (reversed again) shape. */
        int64_t shape[3];
        int i, n = npyio_header_ndim(in);

        for (i = 0; i < n; i++)
            shape[i] = npyio_header_shape(in)[n - 1 - i];
        out = header_of(n, shape, 1);
        if (npyio_save_with_header(save_to, out, data, (size_t)npyio_header_nbytes(in),
                       0, NULL) != NPYIO_OK)
            die(save_to);
        npyio_header_free(out);
    }
    npyio_reader_close(r);
    npyio_stream_close(s);
    if (piped) {
        close(p[0]);
        waitpid(feeder, NULL, 0);
    }
    t = now() - t0;
    npyio_free(data);
    npyio_header_free(h);
    return t;
}

/* For the RSS measurements (in a fresh child, see benchutil.h). */
static unsigned char *rss_buf;

/* One pass of chunks or rows through a buffer of the bench's size. */
static void one_pass(const char *path,
                     double (*pass)(const char *, unsigned char *))
{
    npyio_reader *r = NULL;
    size_t cap;

    priming = 0;
    if (npyio_reader_open_path(path, NULL, &r) != NPYIO_OK)
        _exit(1);
    cap = chunk_cap(npyio_reader_header(r));
    npyio_reader_close(r);
    rss_buf = thp_alloc(cap);
    pass(path, rss_buf);
}

static void one_chunk_pass(const char *path)
{
    one_pass(path, our_chunks);
}

static void one_rows_pass(const char *path)
{
    one_pass(path, our_rows);
}

static void one_whole(const char *path)
{
    priming = 0;
    our_whole(path, 0, NULL);
}

/* ---- the tool -------------------------------------------------------------------------- */

/* Copy path into fd in 1 MiB steps (a pipe's writer), then exit. */
static void feed(const char *path, int fd)
{
    static char block[1 << 20];
    int in = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n;

    if (in < 0)
        _exit(1);
    while ((n = read(in, block, sizeof block)) > 0) {
        ssize_t done = 0;

        while (done < n) {
            ssize_t w = write(fd, block + done, (size_t)(n - done));

            if (w <= 0)
                _exit(1);
            done += w;
        }
    }
    _exit(n == 0 ? 0 : 1);
}

/*
 * Run the tool with argv, stdin from `in` (a path), or through a pipe fed
 * by a child when `piped`, stdout to /dev/null. Returns the seconds from
 * the start to the tool's exit.
 *
 * With rss_kib, the tool runs instead under this program started afresh
 * (--rss-of, below), which reports the tool's peak RSS: a child forked
 * from this process would count the benchmark's own pages (Linux keeps a
 * forked child's high-water mark across exec).
 */
static double run_tool(char *const argv[], const char *in, int piped,
                       long *rss_kib)
{
    int p[2] = {-1, -1}, out[2] = {-1, -1}, status = 0, n;
    pid_t feeder = -1, pid;
    char *helper[16];
    double t0;

    if (rss_kib != NULL) {
        helper[0] = "bench_reorder";
        helper[1] = "--rss-of";
        helper[2] = (char *)tool;
        for (n = 1; argv[n - 1] != NULL && n < 13; n++)
            helper[n + 2] = argv[n];
        helper[n + 1] = NULL;
        if (pipe(out) != 0)
            die("pipe");
    }
    prime();
    t0 = now();
    if (piped) {
        if (pipe(p) != 0)
            die("pipe");
        feeder = fork();
        if (feeder == 0) {
            close(p[0]);
            feed(in, p[1]);
        }
    }
    pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        int src = piped ? p[0] : open(in, O_RDONLY);

        if (null < 0 || src < 0)
            _exit(127);
        dup2(src, 0);
        dup2(rss_kib != NULL ? out[1] : null, 1);
        if (piped)
            close(p[1]);
        if (tmpdir != NULL)
            setenv("TMPDIR", tmpdir, 1); /* the pipe's temporary copy */
        if (rss_kib != NULL)
            execv("/proc/self/exe", helper);
        else
            execv(tool, argv);
        _exit(127);
    }
    if (piped) {
        close(p[0]);
        close(p[1]);
    }
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        errno = 0;
        fprintf(stderr, "bench: %s %s failed\n", tool, argv[1]);
        exit(1);
    }
    t0 = now() - t0;
    if (piped)
        waitpid(feeder, NULL, 0);
    if (rss_kib != NULL) {
        FILE *f;

        close(out[1]);
        f = fdopen(out[0], "r");
        if (f == NULL || fscanf(f, "%ld", rss_kib) != 1)
            *rss_kib = -1;
        if (f != NULL)
            fclose(f);
    }
    return t0;
}

/* --rss-of TOOL ARGS...: run the tool, stdout to /dev/null, and print its
 * peak RSS in KiB. */
static int rss_of(char **argv)
{
    struct rusage ru;
    int status = 0;
    pid_t pid = fork();

    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);

        if (null < 0)
            _exit(127);
        dup2(null, 1);
        execv(argv[0], argv);
        _exit(127);
    }
    if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        return 1;
    printf("%ld\n", ru.ru_maxrss);
    return 0;
}

/* ---- NumPy ------------------------------------------------------------------------------ */

static void start_numpy_reorder(void)
{
    start_numpy_script(
        "import io, sys, time, numpy as np\n"
        "for line in sys.stdin:\n"
        "    op, src = line.split()[:2]\n"
        "    t0 = time.perf_counter()\n"
        "    if op == 'contig':\n"
        "        a = np.ascontiguousarray(np.load(src))\n"
        "    elif op == 'contig_pipe':\n"
        "        with open(src, 'rb') as f:\n"
        "            a = np.ascontiguousarray(np.load(io.BytesIO(f.read())))\n"
        "    elif op == 'fortran':\n"
        "        np.save(line.split()[2], np.asfortranarray(np.load(src)))\n"
        "    elif op == 'fortran_pipe':\n"
        "        with open(src, 'rb') as f:\n"
        "            a = np.load(io.BytesIO(f.read()))\n"
        "        np.save(line.split()[2], np.asfortranarray(a))\n"
        "    t = time.perf_counter() - t0\n"
        "    a = None\n"
        "    print(t, flush=True)\n");
}

/* NumPy reading `path` through a FIFO fed by a child. */
static double numpy_piped(const char *op, const char *path, const char *fifo,
                          const char *out)
{
    char command[2048];
    pid_t feeder;
    double t;

    feeder = fork();
    if (feeder == 0) {
        int fd = open(fifo, O_WRONLY); /* waits for NumPy to open it */

        if (fd < 0)
            _exit(1);
        feed(path, fd);
    }
    snprintf(command, sizeof command, "%s %s %s", op, fifo, out ? out : "");
    t = numpy_time(command);
    waitpid(feeder, NULL, 0);
    return t;
}

/* ---- main ------------------------------------------------------------------------------ */

/* A square root, without libm: Newton's steps from above. */
static double root(double x)
{
    double y = x > 1 ? x : 1;
    int i;

    for (i = 0; i < 60; i++)
        y = (y + x / y) / 2;
    return y;
}

static void ratio_line(const char *name, size_t nbytes, int rounds,
                       const double *ours, const double *numpy,
                       const char *numpy_name, const double *whole,
                       const char *whole_name)
{
    report(name, nbytes, rounds, ours, numpy, numpy_name, whole,
           whole_name);
}

int main(int argc, char **argv)
{
    shape_case shapes[4] = {
        {"tall", 2, {5000000, 5, 0}},
        {"wide", 2, {5, 5000000, 0}},
        {"square", 2, {5000, 5000, 0}},
        {"3-D", 3, {200, 250, 500}},
    };
    const char *only = NULL;
    double size_mb = 200, *t[CONTENDERS];
    int rounds = 7, i, r, s, c;
    const bench_option options[] = {
        {"--size", BENCH_DOUBLE, &size_mb}, {"--rounds", BENCH_INT, &rounds},
        {"--dir", BENCH_TEXT, &dir}, {"--chunk", BENCH_BYTES, &chunk_bytes},
        {"--tool", BENCH_TEXT, &tool}, {"--tmpdir", BENCH_TEXT, &tmpdir},
        {"--only", BENCH_TEXT, &only}, BENCH_END};

    if (argc > 2 && strcmp(argv[1], "--rss-of") == 0)
        return rss_of(argv + 2);
    bench_args(argc, argv, 1, options);
    if (rounds < 1 || rounds > MAX_ROUNDS || size_mb < 1 || chunk_bytes < 1)
        die("bad arguments");
    if (size_mb != 200) { /* scale every shape to size_mb of float64 */
        double f = size_mb / 200;

        shapes[0].shape[0] = (int64_t)(5000000 * f);
        shapes[1].shape[1] = (int64_t)(5000000 * f);
        shapes[2].shape[0] = shapes[2].shape[1] = (int64_t)(5000 * root(f));
        shapes[3].shape[0] = (int64_t)(200 * f) > 0 ? (int64_t)(200 * f) : 1;
    }
    for (c = 0; c < CONTENDERS; c++)
        t[c] = calloc(MAX_ROUNDS, sizeof(double));
    signal(SIGPIPE, SIG_IGN);
    start_numpy_reorder();
    if (tmpdir == NULL)
        tmpdir = getenv("TMPDIR");
    printf("float64 arrays of %.0f MB in %s, chunks of %zu KiB (at least one "
           "row), the tool's temporary copies of pipes in %s, %d interleaved "
           "rounds; medians (min..max) of per-round ratios, >1 means ours is "
           "faster (targets: >= 1 vs NumPy, >= 0.5 vs the whole-array "
           "load)\n",
           size_mb, dir, chunk_bytes >> 10,
           tmpdir != NULL && tmpdir[0] != '\0' ? tmpdir : "/tmp", rounds);
    for (s = 0; s < 4; s++) {
        const shape_case *sc = &shapes[s];
        char f_path[512], c_path[512], v_path[512], out[512], fifo[512];
        char command[2048];
        char *dump[] = {"npyio", "dump", f_path, NULL};
        char *dump_pipe[] = {"npyio", "dump", "-", NULL};
        char *conv[] = {"npyio", "convert", "--order", "F", c_path, out, NULL};
        char *conv_pipe[] = {"npyio", "convert", "--order", "F", "-", out,
                             NULL};
        long rss[CONTENDERS] = {0};
        npyio_header *h = header_of(sc->ndim, sc->shape, 1);
        size_t nbytes = (size_t)npyio_header_nbytes(h);
        unsigned char *buf = thp_alloc(chunk_cap(h));

        if (only != NULL && strcmp(only, sc->name) != 0) {
            npyio_header_free(h);
            free(buf);
            continue;
        }
        snprintf(f_path, sizeof f_path, "%s/npyio-bench-reorder-f.npy", dir);
        snprintf(c_path, sizeof c_path, "%s/npyio-bench-reorder-c.npy", dir);
        snprintf(v_path, sizeof v_path, "%s/npyio-bench-reorder-v.npy", dir);
        snprintf(out, sizeof out, "%s/npyio-bench-reorder-out.npy", dir);
        snprintf(fifo, sizeof fifo, "%s/npyio-bench-reorder.fifo", dir);
        unlink(fifo);
        if (mkfifo(fifo, 0600) != 0)
            die("mkfifo");
        make_files(sc, f_path, c_path, v_path);
        memset(buf, 0, chunk_cap(h));
        for (r = 0; r < rounds; r++) {
            for (i = 0; i < CONTENDERS; i++) {
                c = (i + r) % CONTENDERS; /* a rotating order */
                switch (c) {
                case A_CHUNKS: t[c][r] = our_chunks(f_path, buf); break;
                case A_ROWS: t[c][r] = our_rows(f_path, buf); break;
                case A_DUMP:
                    t[c][r] = run_tool(dump, f_path, 0, NULL);
                    break;
                case A_DUMP_PIPE:
                    t[c][r] = run_tool(dump_pipe, f_path, 1, NULL);
                    break;
                case A_WHOLE: t[c][r] = our_whole(f_path, 0, NULL); break;
                case A_WHOLE_PIPE:
                    t[c][r] = our_whole(f_path, 1, NULL);
                    break;
                case A_NUMPY:
                    snprintf(command, sizeof command, "contig %s", f_path);
                    t[c][r] = numpy_time(command);
                    break;
                case A_NUMPY_PIPE:
                    t[c][r] = numpy_piped("contig_pipe", f_path, fifo, NULL);
                    break;
                case B_CONVERT:
                    t[c][r] = run_tool(conv, c_path, 0, NULL);
                    break;
                case B_CONVERT_PIPE:
                    t[c][r] = run_tool(conv_pipe, c_path, 1, NULL);
                    break;
                case B_WHOLE: t[c][r] = our_whole(v_path, 0, out); break;
                case B_WHOLE_PIPE: t[c][r] = our_whole(v_path, 1, out); break;
                case B_NUMPY:
                    snprintf(command, sizeof command, "fortran %s %s", c_path,
                             out);
                    t[c][r] = numpy_time(command);
                    break;
                default:
                    t[c][r] = numpy_piped("fortran_pipe", c_path, fifo, out);
                    break;
                }
            }
        }
        printf("\n%s (", sc->name);
        for (i = 0; i < sc->ndim; i++)
            printf("%s%lld", i ? ", " : "", (long long)sc->shape[i]);
        printf(")\n");
        ratio_line("F->C chunks", nbytes, rounds, t[A_CHUNKS], t[A_NUMPY],
                   "NumPy", t[A_WHOLE], "whole load");
        ratio_line("F->C rows", nbytes, rounds, t[A_ROWS], t[A_NUMPY],
                   "NumPy", t[A_WHOLE], "whole load");
        ratio_line("F->C dump, file", nbytes, rounds, t[A_DUMP], t[A_NUMPY],
                   "NumPy", t[A_WHOLE], "whole load");
        ratio_line("F->C dump, pipe", nbytes, rounds, t[A_DUMP_PIPE],
                   t[A_NUMPY_PIPE], "NumPy, pipe", t[A_WHOLE_PIPE],
                   "whole load, pipe");
        ratio_line("  (the same)", nbytes, rounds, t[A_DUMP_PIPE],
                   t[A_NUMPY], "NumPy, file", t[A_WHOLE], "whole load, file");
        ratio_line("C->F convert, file", nbytes, rounds, t[B_CONVERT],
                   t[B_NUMPY], "NumPy", t[B_WHOLE], "whole load+save");
        ratio_line("C->F convert, pipe", nbytes, rounds, t[B_CONVERT_PIPE],
                   t[B_NUMPY_PIPE], "NumPy, pipe", t[B_WHOLE_PIPE],
                   "whole load+save, pipe");
        ratio_line("  (the same)", nbytes, rounds, t[B_CONVERT_PIPE],
                   t[B_NUMPY], "NumPy, file", t[B_WHOLE],
                   "whole load+save, file");
        run_tool(dump, f_path, 0, &rss[A_DUMP]);
        run_tool(dump_pipe, f_path, 1, &rss[A_DUMP_PIPE]);
        run_tool(conv, c_path, 0, &rss[B_CONVERT]);
        run_tool(conv_pipe, c_path, 1, &rss[B_CONVERT_PIPE]);
        printf("peak RSS (KiB): chunks +%ld, rows +%ld, whole-array load "
               "+%ld; the tool's process: dump %ld, dump from a pipe %ld, "
               "convert %ld, convert from a pipe %ld\n",
               child_peak_rss_kib(one_chunk_pass, f_path),
               child_peak_rss_kib(one_rows_pass, f_path),
               child_peak_rss_kib(one_whole, f_path), rss[A_DUMP],
               rss[A_DUMP_PIPE], rss[B_CONVERT], rss[B_CONVERT_PIPE]);
        fflush(stdout);
        unlink(f_path);
        unlink(c_path);
        unlink(v_path);
        unlink(out);
        unlink(fifo);
        npyio_header_free(h);
        free(buf);
    }
    printf("(checksum %llu)\n", (unsigned long long)sample);
    stop_numpy();
    for (c = 0; c < CONTENDERS; c++)
        free(t[c]);
    return 0;
}
