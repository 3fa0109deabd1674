/*
 * test_pathfault.c - every OS call of an operation on paths failed in
 * turn, through the platform module's test hook (npyio__fault_hook): for
 * k = 1, 2, ... the k-th call fails with EIO, and separately is
 * interrupted (EINTR, once), and in a third pass every read and write
 * moves one byte at a time. A failed run must give NPYIO_E_IO (or succeed
 * with the same result, when only a read-only close failed), give back
 * every block (inject.h's allocator), leave the destination file as it
 * was and no temporary file beside it; interrupted and one-byte runs must
 * give exactly the result of a run without faults.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "testutil.h"
#include "scratch.h"
#include "inject.h"
#include "platform.h"

/* ---- the hook ----------------------------------------------------------------- */

static struct {
    long calls, at; /* the call to fault (1-based); 0: none */
    int error;      /* EIO, EINTR, or NPYIO__FAULT_SHORT for every call */
    int hit;
    const char *name; /* the call faulted */
} fault;

/* The calls a signal can interrupt (EINTR); lseek, mmap, linkat, rename
 * and the like cannot be. */
static int interruptible(const char *call)
{
    static const char *const calls[] = {"read", "pread", "write", "pwrite",
                                        "open", "close", "fsync",
                                        "fdatasync", "ftruncate",
                                        "posix_fallocate"};
    size_t i;

    for (i = 0; i < sizeof calls / sizeof calls[0]; i++)
        if (strcmp(call, calls[i]) == 0)
            return 1;
    return 0;
}

static int hook(const char *call)
{
    fault.calls++;
    if (fault.error == NPYIO__FAULT_SHORT)
        return NPYIO__FAULT_SHORT;
    if (fault.calls != fault.at ||
        (fault.error == EINTR && !interruptible(call)))
        return 0;
    fault.hit = 1;
    fault.name = call;
    return fault.error;
}

/* ---- the operations ------------------------------------------------------------------ */

static char src_npy[1024], src_npz[1024], out_npy[256], out_npz[256];

typedef struct result {
    unsigned char *bytes;
    size_t len;
} result;

static void keep(result *r, const void *p, size_t n)
{
    unsigned char *more = realloc(r->bytes, r->len + n + 1);

    assert_non_null(more);
    memcpy(more + r->len, p, n);
    r->bytes = more;
    r->len += n;
}

/* After a writer: the destination's bytes. */
static void keep_file(result *r, const char *path)
{
    size_t len = 0;
    unsigned char *b = snapshot(path, &len);

    keep(r, b, len);
    free(b);
}

static npyio_status load(const npyio_options *o, result *r)
{
    npyio_header *h = NULL;
    void *data = NULL;
    npyio_status st = npyio_load(src_npy, NPYIO_READ_NATIVE |
                                     NPYIO_READ_C_ORDER, o, &h, &data);

    if (st == NPYIO_OK)
        keep(r, data, (size_t)npyio_header_nbytes(h));
    npyio_free(data);
    npyio_header_free(h);
    return st;
}

static const double values[64] = {1, 2, 3, 4, 5, 6, 7, 8, -1, -2};

static npyio_status save(const npyio_options *o, result *r)
{
    npyio_header *h = NULL;
    npyio_writer *w = NULL;
    npyio_dtype *dt = NULL;
    npyio_status st = npyio_dtype_from_descr("<f8", 3, o, &dt);

    if (st == NPYIO_OK)
        st = npyio_header_new(dt, 2, (const int64_t[]){8, 8}, 0, &h);
    npyio_dtype_unref(dt);
    if (st == NPYIO_OK)
        st = npyio_writer_open_path(out_npy, h, NPYIO_WRITE_UNKNOWN_ROWS, o,
                                    &w);
    if (st == NPYIO_OK)
        st = npyio_writer_write(w, values, sizeof values);
    if (st == NPYIO_OK)
        st = npyio_writer_close(w);
    else
        npyio_writer_abort(w);
    npyio_header_free(h);
    if (st == NPYIO_OK)
        keep_file(r, out_npy);
    return st;
}

static npyio_status append(const npyio_options *o, result *r)
{
    npyio_header *h = NULL;
    npyio_writer *w = NULL;
    npyio_dtype *dt = NULL;
    npyio_status st = npyio_dtype_from_descr("=f8", 3, o, &dt);

    if (st == NPYIO_OK)
        st = npyio_header_new(dt, 2, (const int64_t[]){2, 8}, 0, &h);
    npyio_dtype_unref(dt);
    if (st == NPYIO_OK)
        st = npyio_writer_open_append(out_npy, h, 0, o, &w);
    if (st == NPYIO_OK)
        st = npyio_writer_write(w, values, 16 * sizeof values[0]);
    if (st == NPYIO_OK)
        st = npyio_writer_close(w);
    else
        npyio_writer_abort(w);
    npyio_header_free(h);
    if (st == NPYIO_OK)
        keep_file(r, out_npy);
    return st;
}

static npyio_status read_npz(const npyio_options *o, result *r)
{
    npyio_npz *npz = NULL;
    size_t i;
    npyio_status st = npyio_npz_open_path(src_npz, o, &npz);

    for (i = 0; st == NPYIO_OK && i < npyio_npz_count(npz); i++) {
        npyio_stream *m = NULL;
        unsigned char buf[1024];
        size_t got = 0;

        st = npyio_npz_open_member(npz, i, &m);
        while (st == NPYIO_OK &&
               (st = npyio_stream_read(m, buf, sizeof buf, &got)) ==
                   NPYIO_OK &&
               got > 0)
            keep(r, buf, got);
        npyio_stream_close(m);
    }
    npyio_npz_close(npz);
    return st;
}

static npyio_status write_npz(const npyio_options *o, result *r)
{
    npyio_npz_writer *w = NULL;
    npyio_header *h = NULL;
    npyio_dtype *dt = NULL;
    npyio_status st = npyio_dtype_from_descr("<f8", 3, o, &dt);

    if (st == NPYIO_OK)
        st = npyio_header_new(dt, 1, (const int64_t[]){64}, 0, &h);
    npyio_dtype_unref(dt);
    if (st == NPYIO_OK)
        st = npyio_npz_create_path(out_npz, 0, o, &w);
    if (st == NPYIO_OK)
        st = npyio_npz_add_array(w, "stored", h, values, sizeof values, 0);
    if (st == NPYIO_OK)
        st = npyio_npz_add_array(w, "deflated", h, values, sizeof values, 6);
    if (st == NPYIO_OK)
        st = npyio_npz_writer_close(w);
    else
        npyio_npz_writer_abort(w);
    npyio_header_free(h);
    if (st == NPYIO_OK)
        keep_file(r, out_npz);
    return st;
}

static npyio_status append_npz(const npyio_options *o, result *r)
{
    npyio_npz_writer *w = NULL;
    npyio_header *h = NULL;
    npyio_dtype *dt = NULL;
    npyio_status st = npyio_dtype_from_descr("<f8", 3, o, &dt);

    if (st == NPYIO_OK)
        st = npyio_header_new(dt, 1, (const int64_t[]){8}, 0, &h);
    npyio_dtype_unref(dt);
    if (st == NPYIO_OK)
        st = npyio_npz_open_append(out_npz, 0, o, &w);
    if (st == NPYIO_OK)
        st = npyio_npz_add_array(w, "more", h, values, 8 * sizeof values[0],
                                 6);
    if (st == NPYIO_OK)
        st = npyio_npz_writer_close(w);
    else
        npyio_npz_writer_abort(w);
    npyio_header_free(h);
    if (st == NPYIO_OK)
        keep_file(r, out_npz);
    return st;
}

typedef npyio_status (*operation)(const npyio_options *o, result *r);

/* ---- the loops ------------------------------------------------------------------------- */

/* Only the files a test made itself are in the scratch directory. */
static void no_temporaries(const char *name, long k)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.' && strcmp(e->d_name, "out.npy") != 0 &&
            strcmp(e->d_name, "out.npz") != 0)
            fail_msg("%s: call %ld failed: %s left behind", name, k,
                     e->d_name);
    closedir(d);
}

static npyio_status run(operation op, const npyio_options *o, long at,
                        int error, result *r, const char *dest,
                        const unsigned char *old, size_t old_len)
{
    npyio_status st;

    if (dest != NULL)
        restore(dest, old, old_len);
    memset(r, 0, sizeof *r);
    fault.calls = 0;
    fault.at = at;
    fault.error = error;
    fault.hit = 0;
    inj.live = 0;
    npyio__fault_hook = hook;
    st = op(o, r);
    npyio__fault_hook = NULL;
    if (inj.live != 0)
        fail_msg("call %ld failed: %ld blocks not given back", at, inj.live);
    return st;
}

static int same(const result *a, const result *b)
{
    return a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0;
}

static void every_call_fails(const char *name, operation op,
                             const char *dest)
{
    npyio_options *o = failing_options(1);
    size_t old_len = 0, now_len = 0;
    unsigned char *old = dest != NULL ? snapshot(dest, &old_len) : NULL;
    result want, got;
    long k, calls;

    inj.fail_at = 0;
    assert_ok(run(op, o, 0, 0, &want, dest, old, old_len));
    calls = fault.calls;
    assert_true(calls > 2);
    for (k = 1; k <= calls; k++) {
        npyio_status st = run(op, o, k, EIO, &got, dest, old, old_len);

        if (st == NPYIO_OK ? !same(&got, &want) : st != NPYIO_E_IO)
            fail_msg("%s: call %ld of %ld (%s) failed (EIO): %s (%s)", name,
                     k, calls, fault.name, npyio_status_string(st),
                     npyio_last_error());
        /* The one failure past the point of no return: a sync after the
         * new file took the old one's place, which says so. */
        if (st != NPYIO_OK && dest != NULL &&
            strstr(npyio_last_error(), "may not survive a crash") != NULL) {
            unsigned char *now = snapshot(dest, &now_len);

            assert_true(strstr(fault.name, "sync") != NULL);
            assert_true(now_len == want.len && memcmp(now, want.bytes,
                                                      now_len) == 0);
            free(now);
        } else if (st != NPYIO_OK && dest != NULL) {
            unsigned char *now = snapshot(dest, &now_len);

            if (now_len != old_len ||
                (old_len > 0 && memcmp(now, old, old_len) != 0))
                fail_msg("%s: call %ld (%s) failed: %s changed (%s)", name,
                         k, fault.name, dest, npyio_last_error());
            free(now);
        }
        no_temporaries(name, k);
        free(got.bytes);
        st = run(op, o, k, EINTR, &got, dest, old, old_len);
        if (st != NPYIO_OK || !same(&got, &want))
            fail_msg("%s: call %ld interrupted: %s (%s)", name, k,
                     npyio_status_string(st), npyio_last_error());
        free(got.bytes);
    }
    if (run(op, o, 0, NPYIO__FAULT_SHORT, &got, dest, old, old_len) !=
            NPYIO_OK ||
        !same(&got, &want))
        fail_msg("%s: one byte per read and write: %s", name,
                 npyio_last_error());
    free(got.bytes);
    free(want.bytes);
    if (dest != NULL)
        restore(dest, old, old_len);
    free(old);
    npyio_options_free(o);
}

static void test_npy(void **state)
{
    (void)state;
    every_call_fails("load", load, NULL);
    every_call_fails("save", save, out_npy);
    every_call_fails("append", append, out_npy);
}

static void test_npz(void **state)
{
    (void)state;
    every_call_fails("read .npz", read_npz, NULL);
    every_call_fails("write .npz", write_npz, out_npz);
    every_call_fails("append .npz", append_npz, out_npz);
}

static int setup(void **state)
{
    (void)state;
    snprintf(src_npy, sizeof src_npy, "%s/arrays/%s", NPYIO_TEST_DATA_DIR,
             "rec_nested_padded_3x4_f.npy");
    snprintf(src_npz, sizeof src_npz, "%s/npz/%s", NPYIO_TEST_DATA_DIR,
             "keys.npz");
    if (scratch_make("test_pathfault") != 0)
        return -1;
    path_in_dir(out_npy, sizeof out_npy, "out.npy");
    path_in_dir(out_npz, sizeof out_npz, "out.npz");
    /* An old file to replace and to append to, and an old archive. */
    if (npyio_save_array(out_npy, "=f8", 2, (const int64_t[]){1, 8}, values,
                         8 * sizeof values[0], NPYIO_WRITE_NO_SYNC,
                         NULL) != NPYIO_OK)
        return -1;
    {
        const char *keys[1] = {"old"};
        npyio_header *h = NULL;
        npyio_dtype *dt = NULL;
        const void *data[1] = {values};
        size_t lens[1] = {sizeof values};
        npyio_status st = npyio_dtype_from_descr("=f8", 3, NULL, &dt);

        if (st == NPYIO_OK)
            st = npyio_header_new(dt, 1, (const int64_t[]){64}, 0, &h);
        npyio_dtype_unref(dt);
        if (st == NPYIO_OK)
            st = npyio_npz_save(out_npz, 1, keys,
                                (const npyio_header *const[]){h}, data,
                                lens, 0, NPYIO_WRITE_NO_SYNC, NULL);
        npyio_header_free(h);
        if (st != NPYIO_OK)
            return -1;
    }
    return 0;
}

/* ---- a full disk --------------------------------------------------------------- */

/* A 1 MiB tmpfs (root can mount one; CI must: a failed mount fails the
 * test there, but for the cross hosts under qemu, which set NPYIO_CROSS). */
static char small[256];
static int mounted;

static int mount_small(void **state)
{
    char cmd[400];
    struct statvfs vfs;

    (void)state;
    mounted = 0;
    path_in_dir(small, sizeof small, "small");
    if (mkdir(small, 0700) != 0)
        return -1;
    snprintf(cmd, sizeof cmd,
             "mount -t tmpfs -o size=1m tmpfs %s >/dev/null 2>&1", small);
    if (geteuid() != 0 || system(cmd) != 0)
        return 0;
    mounted = statvfs(small, &vfs) == 0 &&
              (unsigned long long)vfs.f_blocks * vfs.f_frsize <= (1u << 20);
    return 0;
}

static int unmount_small(void **state)
{
    char cmd[600];
    int failed = 0;

    (void)state;
    snprintf(cmd, sizeof cmd, "umount %s 2>/dev/null || umount -l %s "
             "2>/dev/null", small, small);
    if (geteuid() == 0)
        failed = system(cmd) != 0 && mounted;
    mounted = 0;
    return rmdir(small) != 0 || failed ? -1 : 0;
}

static size_t entries_of(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    size_t n = 0;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* The file's bytes are still `old`. */
static void unchanged(const char *path, const unsigned char *old,
                      size_t old_len)
{
    size_t len = 0;
    unsigned char *now = snapshot(path, &len);

    assert_int_equal(len, old_len);
    assert_memory_equal(now, old, len);
    free(now);
}

static void no_space(npyio_status st)
{
    assert_int_equal(st, NPYIO_E_IO);
    assert_error_contains("No space");
}

/* Every writer to a path on a full file system: NPYIO_E_IO saying so,
 * the old file as it was, no temporary left. */
static void test_full_disk(void **state)
{
    static double big[262144]; /* 2 MiB: more than the file system */
    char npy[300], npz[300], fresh[300];
    const char *keys[1] = {"x"};
    npyio_header *hb = NULL, *hrows = NULL, *h1 = NULL;
    npyio_writer *w = NULL;
    npyio_npz_writer *zw = NULL;
    unsigned char *old_npy, *old_npz;
    size_t npy_len = 0, npz_len = 0;
    npyio_status st;

    (void)state;
    if (!mounted) {
        if (getenv("CI") != NULL && getenv("NPYIO_CROSS") == NULL)
            fail_msg("CI: cannot mount a 1 MiB tmpfs at %s", small);
        skip();
    }
    snprintf(npy, sizeof npy, "%s/a.npy", small);
    snprintf(npz, sizeof npz, "%s/a.npz", small);
    snprintf(fresh, sizeof fresh, "%s/fresh.npy", small);
    hb = make_header("<f8", 1, (const int64_t[]){262144}, 0);
    hrows = make_header("<f8", 2, (const int64_t[]){32768, 8}, 0);
    h1 = make_header("<f8", 2, (const int64_t[]){1, 8}, 0);
    assert_ok(npyio_save(npy, h1, values, 8 * sizeof values[0], 0, NULL));
    assert_ok(npyio_npz_save(npz, 1, keys, (const npyio_header *const[]){h1},
                             (const void *const[]){values},
                             (const size_t[]){8 * sizeof values[0]}, 0, 0,
                             NULL));
    old_npy = snapshot(npy, &npy_len);
    old_npz = snapshot(npz, &npz_len);

    no_space(npyio_save(npy, hb, big, sizeof big, 0, NULL));
    unchanged(npy, old_npy, npy_len);
    no_space(npyio_save(fresh, hb, big, sizeof big, 0, NULL));
    /* An append: the rows do not fit; the file is cut back. */
    st = npyio_writer_open_append(npy, hrows, 0, NULL, &w);
    assert_ok(st);
    st = npyio_writer_write(w, big, sizeof big);
    if (st == NPYIO_OK)
        st = npyio_writer_close(w);
    else
        npyio_writer_abort(w);
    no_space(st);
    unchanged(npy, old_npy, npy_len);
    /* Archives: a new one, and an append. */
    no_space(npyio_npz_save(npz, 1, keys, (const npyio_header *const[]){hb},
                            (const void *const[]){big},
                            (const size_t[]){sizeof big}, 0, 0, NULL));
    unchanged(npz, old_npz, npz_len);
    assert_ok(npyio_npz_open_append(npz, 0, NULL, &zw));
    st = npyio_npz_add_array(zw, "big", hb, big, sizeof big, 0);
    if (st == NPYIO_OK)
        st = npyio_npz_writer_close(zw);
    else
        npyio_npz_writer_abort(zw);
    no_space(st);
    unchanged(npz, old_npz, npz_len);
    assert_int_equal(entries_of(small), 2); /* a.npy, a.npz: nothing else */
    free(old_npy);
    free(old_npz);
    npyio_header_free(hb);
    npyio_header_free(hrows);
    npyio_header_free(h1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_npy),
        cmocka_unit_test(test_npz),
        cmocka_unit_test_setup_teardown(test_full_disk, mount_small,
                                        unmount_small),
    };

    return cmocka_run_group_tests(tests, setup, scratch_remove);
}
