/*
 * test_npz_truncate.c - an archive truncated by another process while a
 * member is read. A reader that does not map the member reads with pread
 * and finds the bytes missing: NPYIO_E_TRUNCATED, naming the member, and
 * no signal (a map of the same member would take SIGBUS: npyio_map_open_member()
 * says so). Stored and deflated members, read whole, in chunks, as a raw
 * member stream, and checked by npyio_npz_verify(); the truncation is an
 * ftruncate() on a descriptor of the test's own, as another process's
 * would be.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "scratch.h"

/* The members: 1 MiB of float64 each, stored and deflated; the values
 * pseudo-random, so that the deflated one stays near 1 MiB too, more than
 * its reader takes in at once (256 KiB), and a cut can fall inside it. */
enum { COUNT = 1 << 17, BYTES = COUNT * 8 };

static char archive[128];
static double *values;

static int make_archive(void **state)
{
    int64_t shape[1] = {COUNT};
    npyio_header *h = NULL;
    npyio_dtype *dt = NULL;
    npyio_npz_writer *w = NULL;
    uint64_t bits = 27;
    int ok, i;

    (void)state;
    if (scratch_make("npyio-npz-truncate") != 0)
        return -1;
    values = malloc(BYTES);
    if (values == NULL)
        return -1;
    for (i = 0; i < COUNT; i++) {
        bits = bits * 6364136223846793005u + 1442695040888963407u;
        values[i] = (double)(bits >> 11);
    }
    path_in_dir(archive, sizeof archive, "a.npz");
    ok = npyio_dtype_parse("=f8", 3, NULL, &dt) == NPYIO_OK &&
         npyio_header_new(dt, 1, shape, 0, &h) == NPYIO_OK &&
         npyio_npz_writer_create_path(archive, NPYIO_WRITE_NO_SYNC, NULL, &w) ==
             NPYIO_OK &&
         npyio_npz_writer_add_with_header(w, "stored", h, values, BYTES, 0, 0) == NPYIO_OK &&
         npyio_npz_writer_add_with_header(w, "deflated", h, values, BYTES, 1, 0) ==
             NPYIO_OK;
    if (w != NULL && npyio_npz_writer_close(w) != NPYIO_OK)
        ok = 0;
    npyio_header_free(h);
    npyio_dtype_unref(dt);
    return ok ? 0 : -1;
}

static int remove_archive(void **state)
{
    free(values);
    return scratch_remove(state);
}

/* A copy of the archive, so that each test truncates its own. */
static void copy_archive(char *out, size_t cap)
{
    char cmd[400];

    path_in_dir(out, cap, "copy.npz");
    snprintf(cmd, sizeof cmd, "cp %s %s", archive, out);
    assert_int_equal(system(cmd), 0);
}

/* Cut the file to `size` bytes through a descriptor of its own, as
 * another process would. */
static void truncate_from_outside(const char *path, off_t size)
{
    int fd = open(path, O_WRONLY);

    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, size), 0);
    assert_int_equal(close(fd), 0);
}

static size_t member_index(npyio_npz *npz, const char *key)
{
    size_t i, n = npyio_npz_count(npz);

    for (i = 0; i < n; i++)
        if (strcmp(npyio_npz_key(npz, i), key) == 0)
            return i;
    fail_msg("no member %s", key);
    return 0;
}

/* The message names the member. */
static void assert_names(const char *key)
{
    if (strstr(npyio_last_error(), key) == NULL)
        fail_msg("message does not name %s: %s", key, npyio_last_error());
}

/*
 * Read the member in chunks; after the first, the archive is cut to
 * `fraction` quarters of its size (1: inside the stored member, 3: inside
 * the deflated one). The next chunks give NPYIO_E_TRUNCATED.
 */
static void truncated_mid_chunks(const char *key, int fraction)
{
    static double chunk[COUNT / 8];
    char path[128];
    npyio_npz *npz = NULL;
    npyio_reader *r = NULL;
    struct stat info;
    npyio_status st = NPYIO_OK;
    size_t got = 0;
    int chunks = 0;

    copy_archive(path, sizeof path);
    assert_ok(npyio_npz_open_path(path, NULL, &npz));
    assert_ok(npyio_reader_open_member(npz, member_index(npz, key), &r));
    assert_ok(npyio_reader_read_chunk(r, chunk, sizeof chunk, 0, &got));
    assert_int_equal(got, sizeof chunk);
    assert_memory_equal(chunk, values, sizeof chunk);
    assert_int_equal(stat(path, &info), 0);
    truncate_from_outside(path, info.st_size / 4 * fraction);
    while (st == NPYIO_OK && chunks++ < 8)
        st = npyio_reader_read_chunk(r, chunk, sizeof chunk, 0, &got);
    assert_status(st, NPYIO_E_TRUNCATED);
    assert_names(key);
    npyio_reader_close(r);
    npyio_npz_close(npz);
    assert_int_equal(unlink(path), 0);
}

static void test_stored_truncated_mid_read(void **state)
{
    (void)state;
    truncated_mid_chunks("stored", 1);
}

static void test_deflated_truncated_mid_read(void **state)
{
    (void)state;
    truncated_mid_chunks("deflated", 3);
}

/* Opened before the cut, read whole after it (npyio_reader_read): the
 * same, for both members, and npyio_npz_verify says so too. */
static void test_whole_read_after_truncation(void **state)
{
    static const char *const keys[] = {"stored", "deflated"};
    char path[128];
    npyio_npz *npz = NULL;
    npyio_reader *r[2] = {NULL, NULL};
    double *back = malloc(BYTES);
    size_t i;

    (void)state;
    assert_non_null(back);
    copy_archive(path, sizeof path);
    assert_ok(npyio_npz_open_path(path, NULL, &npz));
    for (i = 0; i < 2; i++)
        assert_ok(npyio_reader_open_member(npz, member_index(npz, keys[i]),
                                        &r[i]));
    truncate_from_outside(path, BYTES / 2);
    for (i = 0; i < 2; i++) {
        assert_status(npyio_reader_read(r[i], back, BYTES, 0),
                      NPYIO_E_TRUNCATED);
        assert_names(keys[i]);
        npyio_reader_close(r[i]);
        assert_status(npyio_npz_verify(npz, member_index(npz, keys[i])),
                      NPYIO_E_TRUNCATED);
        assert_names(keys[i]);
    }
    npyio_npz_close(npz);
    free(back);
    assert_int_equal(unlink(path), 0);
}

/* The member's raw stream (npyio_stream_open_member): a short read is the
 * end of the file, which the stream reports as truncation too. */
static void test_member_stream_truncated(void **state)
{
    char path[128];
    npyio_npz *npz = NULL;
    npyio_stream *s = NULL;
    npyio_reader *r = NULL;
    double *back = malloc(BYTES);

    (void)state;
    assert_non_null(back);
    copy_archive(path, sizeof path);
    assert_ok(npyio_npz_open_path(path, NULL, &npz));
    assert_ok(npyio_stream_open_member(npz, member_index(npz, "stored"), &s));
    assert_ok(npyio_reader_open_stream(s, NULL, &r));
    truncate_from_outside(path, 4096);
    assert_status(npyio_reader_read(r, back, BYTES, 0), NPYIO_E_TRUNCATED);
    npyio_reader_close(r);
    npyio_stream_close(s);
    npyio_npz_close(npz);
    free(back);
    assert_int_equal(unlink(path), 0);
}

/*
 * What npyio_map_open_member() documents: a map of the stored member touched
 * after the cut raises SIGBUS (in a child, which it kills; the default
 * action is restored there, over a sanitizer's handler).
 */
static void test_map_truncated_raises_sigbus(void **state)
{
    char path[128];
    npyio_npz *npz = NULL;
    npyio_map *m = NULL;
    int status = 0;
    pid_t pid;

    (void)state;
    copy_archive(path, sizeof path);
    assert_ok(npyio_npz_open_path(path, NULL, &npz));
    assert_ok(npyio_map_open_member(npz, member_index(npz, "stored"), &m));
    assert_memory_equal(npyio_map_data(m), values, BYTES);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* no cmocka in here */
        const volatile unsigned char *data = npyio_map_data(m);
        int fd = open(path, O_WRONLY);
        unsigned sum = 0;
        size_t i;

        signal(SIGBUS, SIG_DFL);
        if (fd < 0 || ftruncate(fd, 4096) != 0)
            _exit(2);
        for (i = 0; i < BYTES; i += 4096)
            sum += data[i];
        _exit(sum == 12345 ? 3 : 0); /* not reached */
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGBUS)
        fail_msg("the child was not killed by SIGBUS (status %#x)", status);
    npyio_map_close(m);
    npyio_npz_close(npz);
    assert_int_equal(unlink(path), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stored_truncated_mid_read),
        cmocka_unit_test(test_deflated_truncated_mid_read),
        cmocka_unit_test(test_whole_read_after_truncation),
        cmocka_unit_test(test_member_stream_truncated),
        cmocka_unit_test(test_map_truncated_raises_sigbus),
    };

    return cmocka_run_group_tests(tests, make_archive, remove_archive);
}
