/*
 * test_io.c - readers and writers: byte counts, truncation, object arrays,
 * allocation bounds, failures midway, and writing to paths: atomic
 * replacement, modes, symbolic links, missing directories, no temporary
 * left behind. The NumPy-made array corpus is test_arrays.c's.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "scratch.h"
#include "kill_writer.h"
#include "platform.h"

static int make_dir(void **state)
{
    (void)state;
    return scratch_make("npyio-io");
}

static void write_file(const char *path, const void *bytes, size_t len)
{
    FILE *f = fopen(path, "wb");

    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* Temporary files of `name` in the test directory (".name.*"). */
static int stray_files(const char *name)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n_len = strlen(name);
    int n = 0;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] == '.' && strncmp(e->d_name + 1, name, n_len) == 0 &&
            e->d_name[1 + n_len] == '.')
            n++;
    closedir(d);
    return n;
}

/* ---- writer and reader over memory ---------------------------------------------- */

static void test_round_trip_in_memory(void **state)
{
    int64_t shape[2] = {3, 4};
    npyio_header *h = make_header("=f8", 2, shape, 0); /* native doubles */
    double data[12], back[12];
    npyio_stream *s = NULL, *m = NULL;
    npyio_writer *w = NULL;
    npyio_reader *r = NULL;
    void *bytes = NULL;
    size_t len = 0, i;

    (void)state;
    for (i = 0; i < 12; i++)
        data[i] = (double)i * 1.5;
    assert_ok(npyio_stream_create_memory(NULL, &s));
    assert_ok(npyio_writer_create_stream(s, h, 0, NULL, &w));
    assert_ok(npyio_writer_write(w, data, 40)); /* in two parts */
    assert_ok(npyio_writer_write(w, (char *)data + 40, 56));
    assert_ok(npyio_writer_close(w));
    assert_ok(npyio_stream_take_bytes(s, &bytes, &len));
    assert_int_equal(len, 128 + 96);
    assert_ok(npyio_stream_open_memory(bytes, len, NULL, &m));
    assert_ok(npyio_reader_open_stream(m, NULL, &r));
    assert_int_equal(npyio_header_ndim(npyio_reader_header(r)), 2);
    assert_status(npyio_reader_read(r, back, 95, 0), NPYIO_E_BUFFER_TOO_SMALL);
    assert_ok(npyio_reader_read(r, back, sizeof back, NPYIO_READ_NATIVE));
    assert_memory_equal(back, data, sizeof data);
    assert_status(npyio_reader_read(r, back, sizeof back, 0), NPYIO_E_STATE);
    assert_error_contains("already read");
    assert_ok(npyio_reader_close(r));
    assert_ok(npyio_stream_close(m));
    assert_ok(npyio_stream_close(s));
    npyio_free(bytes);
    npyio_header_free(h);
}

static void test_write_counts(void **state)
{
    int64_t shape[1] = {4};
    npyio_header *h = make_header("<i4", 1, shape, 0);
    npyio_stream *s = NULL;
    npyio_writer *w = NULL;
    char data[20] = {0};

    (void)state;
    assert_ok(npyio_stream_create_memory(NULL, &s));
    assert_ok(npyio_writer_create_stream(s, h, 0, NULL, &w));
    assert_ok(npyio_writer_write(w, data, 12));
    assert_status(npyio_writer_write(w, data, 8), NPYIO_E_INVALID_ARG);
    assert_error_contains("8 more bytes would make 20, but the header "
                          "promises 16");
    /* The writer stays failed and says why. */
    assert_status(npyio_writer_write(w, data, 4), NPYIO_E_STATE);
    assert_error_contains("failed earlier (invalid argument");
    assert_status(npyio_writer_close(w), NPYIO_E_STATE);
    assert_ok(npyio_writer_create_stream(s, h, 0, NULL, &w));
    assert_ok(npyio_writer_write(w, data, 12));
    assert_status(npyio_writer_close(w), NPYIO_E_TRUNCATED);
    assert_error_contains("12 bytes of data were written, but the header "
                          "promises 16");
    assert_ok(npyio_stream_close(s));
    npyio_header_free(h);
    npyio_writer_abort(NULL);
    assert_status(npyio_writer_write(NULL, data, 1), NPYIO_E_INVALID_ARG);
}

/* A sink that fails after some bytes: the writer reports it, and stays
 * failed. */
typedef struct sink {
    size_t taken, limit;
} sink;

static int sink_write(void *user, const void *buf, size_t len, size_t *put)
{
    sink *k = user;

    (void)buf;
    if (k->taken >= k->limit)
        return -1;
    *put = len < k->limit - k->taken ? len : k->limit - k->taken;
    k->taken += *put;
    return 0;
}

static void test_write_failing_midway(void **state)
{
    static const npyio_stream_ops ops = {
        .size = sizeof ops, .write = sink_write};
    int64_t shape[1] = {1000};
    npyio_header *h = make_header("<f8", 1, shape, 0);
    sink k = {0, 128 + 1000};
    npyio_stream *s = NULL;
    npyio_writer *w = NULL;
    static double data[1000];

    (void)state;
    assert_ok(npyio_stream_open_ops(&ops, &k, NULL, &s));
    assert_ok(npyio_writer_create_stream(s, h, 0, NULL, &w));
    assert_status(npyio_writer_write(w, data, sizeof data), NPYIO_E_IO);
    assert_error_contains("writing array data at stream offset 1128");
    assert_status(npyio_writer_write(w, data, 8), NPYIO_E_STATE);
    assert_status(npyio_writer_close(w), NPYIO_E_STATE);
    assert_error_contains("the write callback failed");
    assert_ok(npyio_stream_close(s));
    /* The header itself failing. */
    k.taken = 0;
    k.limit = 50;
    assert_ok(npyio_stream_open_ops(&ops, &k, NULL, &s));
    assert_status(npyio_writer_create_stream(s, h, 0, NULL, &w), NPYIO_E_IO);
    assert_null(w);
    assert_ok(npyio_stream_close(s));
    npyio_header_free(h);
}

/* ---- truncation and hostile sizes ---------------------------------------------- */

/* A whole .npy file of n zeros, in a block from the library (npyio_free). */
static unsigned char *npy_bytes(const char *type, int64_t n, size_t *len)
{
    npyio_header *h = make_header(type, 1, &n, 0);
    npyio_stream *s = NULL;
    npyio_writer *w = NULL;
    unsigned char *data = calloc(1, (size_t)npyio_header_nbytes(h) + 1);
    void *bytes = NULL;

    assert_ok(npyio_stream_create_memory(NULL, &s));
    assert_ok(npyio_writer_create_stream(s, h, 0, NULL, &w));
    assert_ok(npyio_writer_write(w, data, (size_t)npyio_header_nbytes(h)));
    assert_ok(npyio_writer_close(w));
    assert_ok(npyio_stream_take_bytes(s, &bytes, len));
    assert_ok(npyio_stream_close(s));
    npyio_header_free(h);
    free(data);
    return bytes;
}

/* A non-seekable source over memory: a pipe without the plumbing. */
typedef struct source {
    const unsigned char *data;
    size_t len, pos;
} source;

static int source_read(void *user, void *buf, size_t cap, size_t *got)
{
    source *src = user;
    size_t n = src->len - src->pos < cap ? src->len - src->pos : cap;

    memcpy(buf, src->data + src->pos, n);
    src->pos += n;
    *got = n;
    return 0;
}

static const npyio_stream_ops source_ops = {
    .size = sizeof source_ops, .read = source_read};

static void test_truncated_data(void **state)
{
    size_t len;
    unsigned char *bytes = npy_bytes("<f8", 100, &len);
    char path[128];
    npyio_reader *r = NULL;
    npyio_stream *s = NULL;
    source src = {bytes, len - 8, 0};
    void *data = NULL;
    double buf[100];

    (void)state;
    /* Seekable: found when opening, before any data is read. */
    path_in_dir(path, sizeof path, "short.npy");
    write_file(path, bytes, len - 8);
    assert_status(npyio_reader_open_path(path, NULL, &r), NPYIO_E_TRUNCATED);
    assert_error_contains("the data section is 792 bytes, but the header "
                          "promises 800");
    assert_error_contains("short.npy");
    assert_null(r);
    /* A pipe: found while reading, with both counts. */
    assert_ok(npyio_stream_open_ops(&source_ops, &src, NULL, &s));
    assert_ok(npyio_reader_open_stream(s, NULL, &r));
    assert_status(npyio_reader_read(r, buf, sizeof buf, 0), NPYIO_E_TRUNCATED);
    assert_error_contains("ends after 792 bytes, but the header promises 800");
    assert_ok(npyio_reader_close(r));
    src.pos = 0;
    assert_ok(npyio_reader_open_stream(s, NULL, &r));
    assert_status(npyio_reader_read_alloc(r, NPYIO_READ_NATIVE, &data, NULL),
                  NPYIO_E_TRUNCATED);
    assert_null(data);
    assert_ok(npyio_reader_close(r));
    assert_ok(npyio_stream_close(s));
    /* A header cut short. */
    write_file(path, bytes, 100);
    assert_status(npyio_reader_open_path(path, NULL, &r), NPYIO_E_TRUNCATED);
    assert_error_contains("inside its 128-byte header");
    write_file(path, bytes, 9);
    assert_status(npyio_reader_open_path(path, NULL, &r), NPYIO_E_TRUNCATED);
    unlink(path);
    npyio_free(bytes);
}

/* ---- allocation bounds ---------------------------------------------------------- */

static size_t largest;

static void *track_alloc(void *user, size_t size, size_t alignment)
{
    void *p = NULL;

    (void)user;
    if (size > largest)
        largest = size;
    return posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *)
                                                         : alignment,
                          size) == 0
               ? p
               : NULL;
}

static void track_free(void *user, void *ptr, size_t size)
{
    (void)user;
    (void)size;
    free(ptr);
}

static void test_hostile_sizes_allocate_little(void **state)
{
    static const npyio_allocator tracker = {sizeof tracker, track_alloc, NULL,
                                            track_free};
    /* 12 bytes claiming a 4 GiB header, with the header limit raised. */
    static const unsigned char claim[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', 2,
                                            0, 0xff, 0xff, 0xff, 0xff};
    npyio_options *o = NULL;
    npyio_stream *s = NULL;
    npyio_reader *r = NULL;
    source src;
    size_t len;
    unsigned char *bytes;
    void *data = NULL;
    int64_t big = INT64_C(1) << 37; /* a 1 TiB promise with 800 bytes */

    (void)state;
    assert_ok(npyio_options_new(&o));
    assert_ok(npyio_options_set_allocator(o, &tracker, NULL));
    assert_ok(npyio_options_set_limit(o, NPYIO_LIMIT_HEADER_SIZE,
                                      INT64_C(1) << 33));
    largest = 0;
    assert_ok(npyio_stream_open_memory(claim, sizeof claim, o, &s));
    /* (4 GiB does not fit a 32-bit address space: a clear error there.) */
    assert_status(npyio_reader_open_stream(s, o, &r),
                  sizeof(size_t) >= 8 ? NPYIO_E_TRUNCATED : NPYIO_E_OVERFLOW);
    assert_ok(npyio_stream_close(s));
    assert_true(largest < 4096);
    /* The same from a pipe, whose length cannot be asked: the header is
     * read in growing steps, so memory follows the bytes that arrive. */
    src.data = claim;
    src.len = sizeof claim;
    src.pos = 0;
    largest = 0;
    assert_ok(npyio_stream_open_ops(&source_ops, &src, o, &s));
    assert_status(npyio_reader_open_stream(s, o, &r),
                  sizeof(size_t) >= 8 ? NPYIO_E_TRUNCATED : NPYIO_E_OVERFLOW);
    assert_ok(npyio_stream_close(s));
    assert_true(largest <= (2u << 20));
    /* Data: a file promising 1 TiB but holding 800 bytes, from a pipe. */
    bytes = npy_bytes("<f8", 100, &len);
    {
        npyio_header *h = make_header("<f8", 1, &big, 0);
        unsigned char hdr[128];
        size_t hlen;

        assert_ok(npyio_header_emit(h, 0, hdr, sizeof hdr, &hlen));
        memcpy(bytes, hdr, hlen);
        npyio_header_free(h);
    }
    src.data = bytes;
    src.len = len;
    src.pos = 0;
    largest = 0;
    assert_ok(npyio_stream_open_ops(&source_ops, &src, o, &s));
    assert_ok(npyio_reader_open_stream(s, o, &r));
    /* 1 TiB does not fit a 32-bit address space: a clear error there. */
    assert_status(npyio_reader_read_alloc(r, 0, &data, NULL),
                  sizeof(size_t) >= 8 ? NPYIO_E_TRUNCATED : NPYIO_E_OVERFLOW);
    assert_true(largest <= (2u << 20)); /* bounded steps, not 1 TiB */
    assert_ok(npyio_reader_close(r));
    assert_ok(npyio_stream_close(s));
    npyio_free(bytes);
    npyio_options_free(o);
}

/* ---- object arrays ---------------------------------------------------------------- */

static void test_object_arrays(void **state)
{
    static const unsigned char pickle[] = {0x80, 0x03, 'f', 'a', 'k', 'e',
                                           '.'};
    int64_t shape[1] = {3};
    npyio_header *h = make_header("O", 1, shape, 0);
    npyio_stream *s = NULL, *m = NULL;
    npyio_writer *w = NULL;
    npyio_reader *r = NULL;
    void *bytes = NULL, *got = NULL;
    size_t len = 0, got_len = 0;
    char buf[64];

    (void)state;
    assert_ok(npyio_stream_create_memory(NULL, &s));
    assert_ok(npyio_writer_create_stream(s, h, 0, NULL, &w));
    /* A pickle of any length: no count applies. */
    assert_ok(npyio_writer_write(w, pickle, sizeof pickle));
    assert_ok(npyio_writer_close(w));
    assert_ok(npyio_stream_take_bytes(s, &bytes, &len));
    assert_int_equal(len, 128 + sizeof pickle);
    assert_ok(npyio_stream_open_memory(bytes, len, NULL, &m));
    assert_ok(npyio_reader_open_stream(m, NULL, &r));
    assert_status(npyio_reader_read(r, buf, sizeof buf, 0),
                  NPYIO_E_UNSUPPORTED);
    assert_error_contains("never unpickles");
    assert_ok(npyio_reader_read_pickle(r, &got, &got_len));
    assert_int_equal(got_len, sizeof pickle);
    assert_memory_equal(got, pickle, sizeof pickle);
    npyio_free(got);
    assert_ok(npyio_reader_close(r));
    assert_ok(npyio_stream_close(m));
    assert_ok(npyio_stream_close(s));
    npyio_free(bytes);
    assert_status(npyio_save_with_header("/tmp/x.npy", h, pickle,
                             (size_t)npyio_header_nbytes(h), 0, NULL),
                  NPYIO_E_INVALID_ARG);
    npyio_header_free(h);
}

/* ---- writing to paths ----------------------------------------------------------------- */

static void test_save_and_load_path(void **state)
{
    int64_t shape[1] = {5};
    npyio_header *h = make_header(">i2", 1, shape, 0), *back = NULL;
    static const unsigned char data[10] = {0, 1, 0, 2, 0, 3, 0, 4, 0, 5};
    char path[128];
    unsigned char *native = NULL;
    struct stat info;
    mode_t mask = umask(022);

    (void)state;
    umask(mask);
    path_in_dir(path, sizeof path, "a.npy");
    assert_ok(npyio_save_with_header(path, h, data, (size_t)npyio_header_nbytes(h), 0,
                         NULL));
    assert_int_equal(stray_files("a.npy"), 0);
    assert_int_equal(stat(path, &info), 0);
    assert_int_equal(info.st_mode & 0777, 0666 & ~mask);
    assert_ok(npyio_load_with_header(path, NPYIO_READ_NATIVE, NULL, &back,
                         (void **)&native));
    assert_int_equal(npyio_header_count(back), 5);
    assert_int_equal(((int16_t *)native)[4], 5);
    npyio_free(native);
    npyio_header_free(back);
    /* A replaced file keeps its mode. */
    assert_int_equal(chmod(path, 0640), 0);
    assert_ok(npyio_save_with_header(path, h, data, (size_t)npyio_header_nbytes(h), 0,
                         NULL));
    assert_int_equal(stat(path, &info), 0);
    assert_int_equal(info.st_mode & 0777, 0640);
    npyio_header_free(h);
}

static void test_failed_write_keeps_the_old_file(void **state)
{
    int64_t shape[1] = {4};
    npyio_header *h = make_header("<i4", 1, shape, 0);
    npyio_options *o = NULL;
    npyio_writer *w = NULL;
    char path[128];
    size_t len;
    unsigned char *before, *after;
    char data[16] = {0};

    (void)state;
    path_in_dir(path, sizeof path, "keep.npy");
    write_file(path, "previous contents", 17);
    /* Too few bytes: close fails, the old file stays, no temporary. */
    assert_ok(npyio_writer_create_path(path, h, 0, NULL, &w));
    /* With unnamed temporaries (O_TMPFILE: Linux, not a portable build)
     * the temporary has no name while it is written, so a process killed
     * now leaves nothing behind; else the named temporary exists. */
    assert_int_equal(stray_files("keep.npy"),
                     npyio__platform_capabilities().unnamed_files ? 0 : 1);
    assert_ok(npyio_writer_write(w, data, 8));
    assert_status(npyio_writer_close(w), NPYIO_E_TRUNCATED);
    before = read_file(path, &len);
    assert_int_equal(len, 17);
    assert_memory_equal(before, "previous contents", 17);
    assert_int_equal(stray_files("keep.npy"), 0);
    /* Abandoned: the same. */
    assert_ok(npyio_writer_create_path(path, h, 0, NULL, &w));
    assert_ok(npyio_writer_write(w, data, 16));
    npyio_writer_abort(w);
    after = read_file(path, &len);
    assert_memory_equal(after, "previous contents", 17);
    assert_int_equal(stray_files("keep.npy"), 0);
    /* Durability off still replaces atomically. */
    assert_ok(npyio_options_new(&o));
    assert_ok(npyio_save_with_header(path, h, data, (size_t)npyio_header_nbytes(h),
                         NPYIO_WRITE_NO_SYNC, o));
    free(after);
    after = read_file(path, &len);
    assert_int_equal(len, 128 + 16);
    assert_int_equal(stray_files("keep.npy"), 0);
    npyio_options_free(o);
    free(before);
    free(after);
    npyio_header_free(h);
}

static void test_symlink_is_written_through(void **state)
{
    int64_t shape[1] = {2};
    npyio_header *h = make_header("|u1", 1, shape, 0);
    char target[128], link[128];
    struct stat info;
    size_t len;
    unsigned char *bytes;

    (void)state;
    path_in_dir(target, sizeof target, "target.npy");
    path_in_dir(link, sizeof link, "link.npy");
    write_file(target, "old", 3);
    assert_int_equal(symlink("target.npy", link), 0);
    assert_ok(npyio_save_with_header(link, h, "\x07\x08", (size_t)npyio_header_nbytes(h), 0,
                         NULL));
    assert_int_equal(lstat(link, &info), 0);
    assert_true(S_ISLNK(info.st_mode)); /* still a link */
    bytes = read_file(target, &len);
    assert_int_equal(len, 130);
    assert_int_equal(bytes[129], 8);
    free(bytes);
    unlink(link);
    unlink(target);
    npyio_header_free(h);
}

/* A FIFO (like a device such as /dev/stdout) is written directly, not
 * replaced by a regular file. */
static void test_fifo_is_written_directly(void **state)
{
    int64_t shape[1] = {2};
    npyio_header *h = make_header("|u1", 1, shape, 0);
    unsigned char got[256];
    char path[128];
    struct stat info;
    ssize_t n;
    int fd;

    (void)state;
    path_in_dir(path, sizeof path, "fifo.npy");
    unlink(path);
    assert_int_equal(mkfifo(path, 0600), 0);
    /* A reader first, so that opening for writing does not block. */
    fd = open(path, O_RDONLY | O_NONBLOCK);
    assert_true(fd >= 0);
    assert_ok(npyio_save_with_header(path, h, "\x07\x08", (size_t)npyio_header_nbytes(h), 0,
                         NULL));
    assert_int_equal(stray_files("fifo.npy"), 0);
    assert_int_equal(lstat(path, &info), 0);
    assert_true(S_ISFIFO(info.st_mode));
    n = read(fd, got, sizeof got);
    assert_int_equal(n, 130);
    assert_memory_equal(got, "\x93NUMPY\x01\x00\x76\x00{'descr': '|u1'", 25);
    assert_int_equal(got[128], 7);
    assert_int_equal(got[129], 8);
    close(fd);
    unlink(path);
    npyio_header_free(h);
}

/* A child writes `len` bytes of `bytes` into the FIFO at path in pieces
 * of `piece` bytes, 20 ms apart, then closes it. */
static pid_t feed_fifo(const char *path, const unsigned char *bytes,
                       size_t len, size_t piece)
{
    pid_t pid = fork();

    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(path, O_WRONLY);
        size_t at;

        for (at = 0; fd >= 0 && at < len; at += piece) {
            size_t n = len - at < piece ? len - at : piece;

            if (write(fd, bytes + at, n) != (ssize_t)n)
                _exit(1);
            nanosleep(&(struct timespec){0, 20000000}, NULL);
        }
        _exit(fd >= 0 ? 0 : 1);
    }
    return pid;
}

static void reap(pid_t pid)
{
    int status = 0;

    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
}

/*
 * A FIFO named as the file to read: a file opened here is not asked what
 * it is until a read needs to know, so these check that a pipe is still
 * found to be one. Whole in one write, in pieces shorter than the header,
 * cut short (the length of a short block says nothing on a pipe: the
 * reader must wait for the end), a reader that wants to go back, and two
 * arrays in one FIFO (a pipe is read exactly, never ahead).
 */
static void test_fifo_is_read_as_a_pipe(void **state)
{
    int64_t shape[1] = {16};
    npyio_header *h = make_header("<i4", 1, shape, 0), *back = NULL;
    unsigned char file[128 + 64];
    npyio_reader *r = NULL;
    void *data = NULL;
    char path[128];
    size_t pieces[] = {sizeof file, 50, 150};
    int32_t rows[2];
    unsigned i;

    (void)state;
    assert_ok(npyio_header_emit(h, 0, file, 128, NULL));
    for (i = 0; i < 64; i++)
        file[128 + i] = (unsigned char)i;
    path_in_dir(path, sizeof path, "in.fifo");
    unlink(path);
    assert_int_equal(mkfifo(path, 0600), 0);
    for (i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
        pid_t pid = feed_fifo(path, file, sizeof file, pieces[i]);

        assert_ok(npyio_load_with_header(path, 0, NULL, &back, &data));
        assert_int_equal(npyio_header_nbytes(back), 64);
        assert_memory_equal(data, file + 128, 64);
        npyio_free(data);
        npyio_header_free(back);
        data = NULL;
        back = NULL;
        reap(pid);
    }
    /* 22 bytes of data where the header promises 64. */
    {
        pid_t pid = feed_fifo(path, file, 150, 150);

        assert_status(npyio_load_with_header(path, 0, NULL, &back, &data),
                      NPYIO_E_TRUNCATED);
        assert_null(data);
        reap(pid);
    }
    /* Rows, then back to an earlier row: a pipe cannot. */
    {
        pid_t pid = feed_fifo(path, file, sizeof file, sizeof file);

        assert_ok(npyio_reader_open_path(path, NULL, &r));
        assert_ok(npyio_reader_read_rows(r, 4, 2, rows, sizeof rows, 0));
        assert_memory_equal(rows, file + 128 + 16, sizeof rows);
        assert_status(npyio_reader_read_rows(r, 0, 2, rows, sizeof rows, 0),
                      NPYIO_E_UNSUPPORTED);
        assert_error_contains("cannot seek");
        npyio_reader_close(r);
        reap(pid);
    }
    /* Two arrays back to back in one FIFO, loaded one after the other:
     * the first load takes exactly its own bytes (no read-ahead on a
     * pipe), so the second finds its array. */
    {
        unsigned char two[2 * sizeof file];
        int sync_pipe[2];
        pid_t pid;

        memcpy(two, file, sizeof file);
        memcpy(two + sizeof file, file, sizeof file);
        two[sizeof file + 128] = 0xEE; /* the second array's first byte */
        assert_int_equal(pipe(sync_pipe), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            int fd = open(path, O_WRONLY);
            char done;

            if (fd < 0 || write(fd, two, sizeof two) != (ssize_t)sizeof two)
                _exit(1);
            /* Keep the FIFO open until both loads are done. */
            _exit(read(sync_pipe[0], &done, 1) == 1 ? 0 : 1);
        }
        /* A reader that took the second array's bytes would wait for
         * more forever: the alarm ends the test instead. */
        alarm(30);
        assert_ok(npyio_load_with_header(path, 0, NULL, &back, &data));
        assert_memory_equal(data, file + 128, 64);
        npyio_free(data);
        npyio_header_free(back);
        assert_ok(npyio_load_with_header(path, 0, NULL, &back, &data));
        alarm(0);
        assert_int_equal(((unsigned char *)data)[0], 0xEE);
        assert_memory_equal((unsigned char *)data + 1, file + 129, 63);
        npyio_free(data);
        npyio_header_free(back);
        assert_int_equal(write(sync_pipe[1], "x", 1), 1);
        close(sync_pipe[0]);
        close(sync_pipe[1]);
        reap(pid);
    }
    unlink(path);
    npyio_header_free(h);
}

static void test_path_errors(void **state)
{
    int64_t shape[1] = {2};
    npyio_header *h = make_header("|u1", 1, shape, 0), *back = NULL;
    npyio_writer *w = NULL;
    char path[128];
    void *data = NULL;

    (void)state;
    path_in_dir(path, sizeof path, "missing/dir/a.npy");
    assert_status(npyio_writer_create_path(path, h, 0, NULL, &w),
                  NPYIO_E_NOT_FOUND);
    assert_error_contains("missing/dir/a.npy");
    assert_null(w);
    assert_status(npyio_writer_create_path(dir, h, 0, NULL, &w), NPYIO_E_IO);
    assert_error_contains("is a directory");
    path_in_dir(path, sizeof path, "absent.npy");
    assert_status(npyio_load_with_header(path, 0, NULL, &back,
                                         &data), NPYIO_E_NOT_FOUND);
    assert_null(back);
    assert_null(data);
    assert_status(npyio_writer_create_path(NULL, h, 0, NULL, &w),
                  NPYIO_E_INVALID_ARG);
    assert_status(npyio_writer_create_path(path, NULL, 0, NULL, &w),
                  NPYIO_E_INVALID_ARG);
    npyio_header_free(h);
}

/* Pipes: writing works when the shape is known up front, and reading
 * needs no seek. */
static void test_through_a_pipe(void **state)
{
    int64_t shape[2] = {2, 3};
    npyio_header *h = make_header(">u2", 2, shape, 1);
    static const unsigned char data[12] = {0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6};
    unsigned char back[12];
    npyio_stream *in = NULL, *out = NULL;
    npyio_writer *w = NULL;
    npyio_reader *r = NULL;
    int fds[2];

    (void)state;
    assert_int_equal(pipe(fds), 0);
    assert_ok(npyio_stream_open_fd(fds[1], NULL, &out));
    assert_ok(npyio_writer_create_stream(out, h, 0, NULL, &w));
    assert_ok(npyio_writer_write(w, data, sizeof data));
    assert_ok(npyio_writer_close(w));
    assert_ok(npyio_stream_close(out));
    close(fds[1]);
    assert_ok(npyio_stream_open_fd(fds[0], NULL, &in));
    assert_ok(npyio_reader_open_stream(in, NULL, &r));
    /* Fortran (2, 3) to C order: column-major 1..6 becomes 1 3 5 / 2 4 6,
     * and each value to native order. */
    assert_ok(npyio_reader_read(r, back, sizeof back,
                                NPYIO_READ_C_ORDER | NPYIO_READ_NATIVE));
    {
        static const uint16_t want[6] = {1, 3, 5, 2, 4, 6};
        uint16_t got[6];

        memcpy(got, back, sizeof got);
        assert_memory_equal(got, want, sizeof want);
    }
    assert_ok(npyio_reader_close(r));
    assert_ok(npyio_stream_close(in));
    close(fds[0]);
    npyio_header_free(h);
}

/* Chunks and rows from a real pipe: no seek, forward only. */
static void test_chunks_from_a_pipe(void **state)
{
    int64_t shape[2] = {25, 4};
    npyio_header *h = make_header(">i4", 2, shape, 0);
    unsigned char data[400], chunk[28], two_rows[32];
    int32_t values[100];
    npyio_stream *in = NULL, *out = NULL;
    npyio_writer *w = NULL;
    npyio_reader *r = NULL;
    size_t got = 0, have = 0, i;
    int fds[2];

    (void)state;
    for (i = 0; i < 100; i++) { /* big-endian i */
        data[4 * i] = data[4 * i + 1] = data[4 * i + 2] = 0;
        data[4 * i + 3] = (unsigned char)i;
    }
    assert_int_equal(pipe(fds), 0);
    assert_ok(npyio_stream_open_fd(fds[1], NULL, &out));
    assert_ok(npyio_writer_create_stream(out, h, 0, NULL, &w));
    assert_ok(npyio_writer_write(w, data, sizeof data));
    assert_ok(npyio_writer_close(w));
    assert_ok(npyio_stream_close(out));
    close(fds[1]);
    assert_ok(npyio_stream_open_fd(fds[0], NULL, &in));
    assert_ok(npyio_reader_open_stream(in, NULL, &r));
    /* Rows 2 and 3 first (skipping rows 0 and 1), then chunks of 7
     * elements from where the chunk cursor is: the start, behind the
     * pipe's position, which a pipe cannot go back to. */
    assert_ok(npyio_reader_read_rows(r, 2, 2, two_rows, sizeof two_rows,
                                     NPYIO_READ_NATIVE));
    memcpy(values, two_rows, sizeof two_rows);
    assert_int_equal(values[0], 8);
    assert_int_equal(values[7], 15);
    assert_status(npyio_reader_read_chunk(r, chunk, sizeof chunk,
                                          NPYIO_READ_NATIVE, &got),
                  NPYIO_E_UNSUPPORTED);
    assert_ok(npyio_reader_close(r));
    assert_ok(npyio_stream_close(in));
    close(fds[0]);
    /* Again, chunks only: every element, in order, converted. */
    assert_int_equal(pipe(fds), 0);
    assert_ok(npyio_stream_open_fd(fds[1], NULL, &out));
    assert_ok(npyio_writer_create_stream(out, h, 0, NULL, &w));
    assert_ok(npyio_writer_write(w, data, sizeof data));
    assert_ok(npyio_writer_close(w));
    assert_ok(npyio_stream_close(out));
    close(fds[1]);
    assert_ok(npyio_stream_open_fd(fds[0], NULL, &in));
    assert_ok(npyio_reader_open_stream(in, NULL, &r));
    while (npyio_reader_read_chunk(r, chunk, sizeof chunk, NPYIO_READ_NATIVE,
                                   &got) == NPYIO_OK) {
        memcpy((unsigned char *)values + have, chunk, got);
        have += got;
    }
    assert_int_equal(have, 400);
    for (i = 0; i < 100; i++)
        assert_int_equal(values[i], (int32_t)i);
    assert_ok(npyio_reader_close(r));
    assert_ok(npyio_stream_close(in));
    close(fds[0]);
    npyio_header_free(h);
}

/* ---- links, owners and temporaries -------------------------------------------- */

/* nobody:nogroup, an owner other than the (root) caller. */
#define NOBODY 65534

/* The array [1, 2, 3] as "<i4" bytes, saved by the tests below. */
static const unsigned char le123[12] = {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0};

static void assert_file_is(const char *path, const void *bytes, size_t len)
{
    size_t got = 0;
    unsigned char *now = read_file(path, &got);

    assert_int_equal(got, len);
    assert_memory_equal(now, bytes, len);
    free(now);
}

/* The file loads as the int32 array [a, b, c]. */
static void assert_npy_is(const char *path, int32_t a, int32_t b, int32_t c)
{
    npyio_header *h = NULL;
    int32_t *v = NULL;

    assert_ok(npyio_load_with_header(path, NPYIO_READ_NATIVE, NULL, &h,
                                     (void **)&v));
    assert_int_equal(npyio_header_ndim(h), 1);
    assert_int_equal(npyio_header_shape(h)[0], 3);
    assert_int_equal(npyio_dtype_kind(npyio_header_dtype(h)), NPYIO_KIND_INT);
    assert_int_equal(npyio_dtype_itemsize(npyio_header_dtype(h)), 4);
    assert_int_equal(v[0], a);
    assert_int_equal(v[1], b);
    assert_int_equal(v[2], c);
    npyio_free(v);
    npyio_header_free(h);
}

/* path is still a symbolic link owned by uid. */
static void assert_link_of(const char *path, uid_t uid)
{
    struct stat info;

    assert_int_equal(lstat(path, &info), 0);
    assert_true(S_ISLNK(info.st_mode));
    assert_int_equal(info.st_uid, uid);
}

static int exists(const char *path)
{
    struct stat info;

    return lstat(path, &info) == 0;
}

/* A sticky world-writable directory (as /tmp), owned by uid:uid. */
static void make_sticky_dir(const char *path, uid_t uid)
{
    assert_int_equal(mkdir(path, 0700), 0);
    assert_int_equal(chmod(path, 01777), 0);
    assert_int_equal(chown(path, uid, (gid_t)uid), 0);
}

/* A link at `link` to `target`, owned by uid:uid. */
static void make_link(const char *target, const char *link, uid_t uid)
{
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(lchown(link, uid, (gid_t)uid), 0);
}

/*
 * The kernel's protected_symlinks rule, applied by the library whatever
 * the system's setting: in a sticky world-writable directory a link is
 * followed only if it belongs to the caller or to the directory's owner.
 * Otherwise anyone could make root's writer clobber any file through a
 * link planted in /tmp. Root only (links of another owner).
 */
static void test_protected_symlinks(void **state)
{
    int64_t shape[1] = {3};
    npyio_header *h = NULL;
    npyio_writer *w = NULL;
    npyio_map *m = NULL;
    char sticky[128], victim[128], link[160], hop[128], sticky2[128],
        victim2[128], link2[160], plain[128], victim3[128], link3[160];

    (void)state;
    if (geteuid() != 0)
        skip(); /* only root can make links of another owner */
    h = make_header("<i4", 1, shape, 0);
    path_in_dir(sticky, sizeof sticky, "sticky");
    path_in_dir(victim, sizeof victim, "victim.npy");
    snprintf(link, sizeof link, "%s/out.npy", sticky);
    make_sticky_dir(sticky, 0);
    write_file(victim, "victim's contents", 17);
    make_link(victim, link, NOBODY);

    /* Refused by every writer of a path: the victim untouched, the link
     * still there, nothing else left in the directory. */
    assert_status(npyio_save_with_header(link, h, le123, (size_t)npyio_header_nbytes(h), 0,
                             NULL), NPYIO_E_IO);
    assert_error_contains("protected_symlinks");
    assert_error_contains("refusing to follow this symbolic link");
    assert_error_contains("belongs to uid 65534");
    assert_error_contains(link);
    assert_file_is(victim, "victim's contents", 17);
    assert_link_of(link, NOBODY);
    assert_int_equal(entries(sticky), 1);
    assert_status(npyio_writer_create_path(link, h, 0, NULL, &w), NPYIO_E_IO);
    assert_error_contains("protected_symlinks");
    assert_null(w);
    assert_status(npyio_map_create_path(link, h, 0, NULL, &m), NPYIO_E_IO);
    assert_error_contains("protected_symlinks");
    assert_null(m);
    assert_file_is(victim, "victim's contents", 17);
    assert_link_of(link, NOBODY);
    assert_int_equal(entries(sticky), 1);
    /* Every hop of a chain is checked: the caller's own link elsewhere,
     * pointing at the refused one, does not launder it. */
    path_in_dir(hop, sizeof hop, "hop.npy");
    make_link(link, hop, 0);
    assert_status(npyio_save_with_header(hop, h, le123, (size_t)npyio_header_nbytes(h), 0,
                             NULL), NPYIO_E_IO);
    assert_error_contains("protected_symlinks");
    assert_file_is(victim, "victim's contents", 17);
    assert_link_of(hop, 0);
    assert_link_of(link, NOBODY);

    /* Followed: the caller's own link in the sticky directory. */
    assert_int_equal(unlink(link), 0);
    make_link(victim, link, 0);
    assert_ok(npyio_save_with_header(link, h, le123, (size_t)npyio_header_nbytes(h), 0,
                         NULL));
    assert_link_of(link, 0);
    assert_npy_is(victim, 1, 2, 3);
    assert_int_equal(entries(sticky), 1);
    /* ... through the chain too, by map_create as well. */
    assert_ok(npyio_map_create_path(hop, h, 0, NULL, &m));
    assert_non_null(m);
    memcpy(npyio_map_data(m), "\7\0\0\0\10\0\0\0\11\0\0\0", 12);
    assert_ok(npyio_map_close(m));
    assert_link_of(hop, 0);
    assert_link_of(link, 0);
    assert_npy_is(victim, 7, 8, 9);

    /* Followed: a link of the sticky directory's owner. */
    path_in_dir(sticky2, sizeof sticky2, "sticky-nobody");
    path_in_dir(victim2, sizeof victim2, "victim2.npy");
    snprintf(link2, sizeof link2, "%s/out.npy", sticky2);
    make_sticky_dir(sticky2, NOBODY);
    write_file(victim2, "old", 3);
    make_link(victim2, link2, NOBODY);
    assert_ok(npyio_save_with_header(link2, h, le123, (size_t)npyio_header_nbytes(h), 0,
                         NULL));
    assert_link_of(link2, NOBODY);
    assert_npy_is(victim2, 1, 2, 3);
    assert_int_equal(entries(sticky2), 1);

    /* Followed: another user's link in a directory that is not sticky. */
    path_in_dir(plain, sizeof plain, "plain");
    path_in_dir(victim3, sizeof victim3, "victim3.npy");
    snprintf(link3, sizeof link3, "%s/out.npy", plain);
    assert_int_equal(mkdir(plain, 0700), 0);
    assert_int_equal(chmod(plain, 0755), 0);
    write_file(victim3, "old", 3);
    make_link(victim3, link3, NOBODY);
    assert_ok(npyio_save_with_header(link3, h, le123, (size_t)npyio_header_nbytes(h), 0,
                         NULL));
    assert_link_of(link3, NOBODY);
    assert_npy_is(victim3, 1, 2, 3);
    assert_int_equal(entries(plain), 1);
    npyio_header_free(h);
}

/* A replaced file keeps its owner and group, as writing it in place
 * would, then its mode (set-id bits included, which chown clears). Root
 * only (giving a file away). */
static void test_replaced_file_keeps_owner(void **state)
{
    int64_t shape[1] = {3};
    npyio_header *h = NULL;
    npyio_map *m = NULL;
    char path[128];
    struct stat info;

    (void)state;
    if (geteuid() != 0)
        skip();
    h = make_header("<i4", 1, shape, 0);
    path_in_dir(path, sizeof path, "owned.npy");
    write_file(path, "old", 3);
    assert_int_equal(chown(path, NOBODY, NOBODY), 0);
    assert_int_equal(chmod(path, 0640), 0);
    assert_ok(npyio_save_with_header(path, h, le123, (size_t)npyio_header_nbytes(h), 0,
                         NULL));
    assert_int_equal(stat(path, &info), 0);
    assert_int_equal(info.st_uid, NOBODY);
    assert_int_equal(info.st_gid, NOBODY);
    assert_int_equal(info.st_mode & 07777, 0640);
    assert_int_equal(info.st_size, 128 + 12);
    assert_npy_is(path, 1, 2, 3);
    assert_int_equal(stray_files("owned.npy"), 0);
    /* A set-group-id mode survives the chown; map_create keeps all too. */
    assert_int_equal(chmod(path, 02750), 0);
    assert_ok(npyio_map_create_path(path, h, 0, NULL, &m));
    memcpy(npyio_map_data(m), "\4\0\0\0\5\0\0\0\6\0\0\0", 12);
    assert_ok(npyio_map_close(m));
    assert_int_equal(stat(path, &info), 0);
    assert_int_equal(info.st_uid, NOBODY);
    assert_int_equal(info.st_gid, NOBODY);
    assert_int_equal(info.st_mode & 07777, 02750);
    assert_npy_is(path, 4, 5, 6);
    assert_int_equal(unlink(path), 0);
    npyio_header_free(h);
}

/* A writer killed (SIGKILL) in the middle of its data leaves no temporary
 * (on Linux none has a name until it is renamed into place; elsewhere the
 * next write removes it) and the old file as it was. (Whether Linux uses
 * unnamed ones is test_failed_write_keeps_the_old_file's to check.) */
static void test_killed_writer_leaves_no_temporary(void **state)
{
    int64_t shape[1] = {4096}, three = 3;
    npyio_header *h = make_header("<f8", 1, shape, 0);
    npyio_header *small = make_header("<i4", 1, &three, 0);
    static unsigned char data[4096 * 8];
    unsigned char *before;
    size_t before_len = 0;
    char path[128];
    int n, unnamed;
    npyio_writer *w = NULL;
    kill_writer_job job = {path, h, NULL, data, sizeof data / 2, NULL};

    (void)state;
    path_in_dir(path, sizeof path, "k.npy");
    assert_ok(npyio_save_with_header(path, small, le123, (size_t)npyio_header_nbytes(small),
                         0, NULL));
    before = read_file(path, &before_len);
    /* Whether writers here have unnamed temporaries (O_TMPFILE: Linux,
     * where the file system has it). */
    assert_ok(npyio_writer_create_path(path, h, 0, NULL, &w));
    n = stray_files("k.npy");
    npyio_writer_abort(w);
    assert_true(n <= 1);
    unnamed = n == 0;
    kill_writer_mid_write(&job);
    /* Unnamed temporaries leave nothing; a named one (no O_TMPFILE in
     * this kernel or file system) is left for the next write to remove. */
    assert_int_equal(stray_files("k.npy"), unnamed ? 0 : 1);
    assert_file_is(path, before, before_len);
    assert_npy_is(path, 1, 2, 3);
    /* The next write: the file replaced, and no temporary anywhere. */
    assert_ok(npyio_save_with_header(path, h, data, (size_t)npyio_header_nbytes(h), 0,
                         NULL));
    assert_int_equal(stray_files("k.npy"), 0);
    assert_int_equal(unlink(path), 0);
    free(before);
    npyio_header_free(small);
    npyio_header_free(h);
}

/*
 * A file that did not exist is created whole at commit: nothing under its
 * name (or any temporary's) while it is written, then the file. If
 * another process creates the name meanwhile, the commit replaces that
 * file, as a rename would (the last writer wins), and leaves no temporary.
 */
static void test_new_file_appears_whole(void **state)
{
    int64_t shape[1] = {3};
    npyio_header *h = make_header("<i4", 1, shape, 0);
    npyio_writer *w = NULL;
    char path[128];

    (void)state;
    path_in_dir(path, sizeof path, "new.npy");
    assert_false(exists(path));
    assert_ok(npyio_writer_create_path(path, h, NPYIO_WRITE_NO_SYNC, NULL,
                                       &w));
    assert_ok(npyio_writer_write(w, le123, 8));
    assert_false(exists(path));
    assert_int_equal(stray_files("new.npy"),
                     npyio__platform_capabilities().unnamed_files ? 0 : 1);
    assert_ok(npyio_writer_write(w, le123 + 8, 4));
    assert_ok(npyio_writer_close(w));
    assert_npy_is(path, 1, 2, 3);
    assert_int_equal(stray_files("new.npy"), 0);
    assert_int_equal(unlink(path), 0);

    /* The name taken while the writer runs. */
    assert_ok(npyio_writer_create_path(path, h, 0, NULL, &w));
    assert_ok(npyio_writer_write(w, le123, sizeof le123));
    write_file(path, "someone else's", 14);
    assert_ok(npyio_writer_close(w));
    assert_npy_is(path, 1, 2, 3);
    assert_int_equal(stray_files("new.npy"), 0);

    /* A 0-byte array: the header alone, written at close. */
    shape[0] = 0;
    npyio_header_free(h);
    h = make_header("<i4", 1, shape, 0);
    assert_int_equal(unlink(path), 0);
    assert_ok(npyio_save_with_header(path, h, NULL, 0, NPYIO_WRITE_NO_SYNC,
                                     NULL));
    {
        npyio_header *back = NULL;
        void *data = NULL;

        assert_ok(npyio_load_with_header(path, 0, NULL, &back, &data));
        assert_int_equal(npyio_header_nbytes(back), 0);
        assert_int_equal(npyio_header_data_offset(back), 128);
        npyio_free(data);
        npyio_header_free(back);
    }
    assert_int_equal(unlink(path), 0);
    npyio_header_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_in_memory),
        cmocka_unit_test(test_write_counts),
        cmocka_unit_test(test_write_failing_midway),
        cmocka_unit_test(test_truncated_data),
        cmocka_unit_test(test_hostile_sizes_allocate_little),
        cmocka_unit_test(test_object_arrays),
        cmocka_unit_test(test_save_and_load_path),
        cmocka_unit_test(test_failed_write_keeps_the_old_file),
        cmocka_unit_test(test_symlink_is_written_through),
        cmocka_unit_test(test_fifo_is_written_directly),
        cmocka_unit_test(test_path_errors),
        cmocka_unit_test(test_through_a_pipe),
        cmocka_unit_test(test_chunks_from_a_pipe),
        cmocka_unit_test(test_protected_symlinks),
        cmocka_unit_test(test_replaced_file_keeps_owner),
        cmocka_unit_test(test_killed_writer_leaves_no_temporary),
        cmocka_unit_test(test_new_file_appears_whole),
        cmocka_unit_test(test_fifo_is_read_as_a_pipe),
    };

    return cmocka_run_group_tests(tests, make_dir, scratch_remove);
}
