/*
 * test_pathfault.c - every OS call of an operation on paths failed in
 * turn, through the platform module's test hook (carried by the options
 * each operation is given, npyio__options_set_faults): for
 * k = 1, 2, ... the k-th call fails with EIO, and separately is
 * interrupted (EINTR, once), and in a third pass every read and write
 * moves one byte at a time. A failed run must give NPYIO_E_IO (or succeed
 * with the same result, when only a read-only close failed), give back
 * every block (inject.h's allocator), leave the destination file as it
 * was and no temporary file beside it; interrupted and one-byte runs must
 * give exactly the result of a run without faults (the loop: fault.h).
 *
 * The operations: load (a small file in C order, a larger one as it lies),
 * save over a file and to a new name, append (with header room, and to a
 * file without: rewritten through a temporary), rows in place, create a
 * map and map a file; read, load from, map a member of, write and append
 * to an archive. Single faults after them: OS calls out of memory, a
 * stream read again after its first read failed, and a failed directory
 * sync under npyio_map_create_path; then a full disk.
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
#include "testdata.h"
#include "scratch.h"
#include "small_mount.h"
#include "inject.h"
#include "fault.h"
#include "platform.h"

/* ---- the hook ----------------------------------------------------------------- */

static struct {
    int armed;      /* a run is on: calls are counted */
    long calls, at; /* the call to fault (1-based); 0: none */
    int error;      /* EIO, EINTR, or NPYIO__FAULT_SHORT for every call */
    int hit;
    const char *name; /* the call faulted */
} fault;

/* The calls a signal can interrupt (EINTR); lseek, mmap, linkat, rename
 * and the like cannot be. (copy_file_range: before it copied a byte.) */
static int interruptible(const char *call)
{
    static const char *const calls[] = {"read", "pread", "write", "pwrite",
                                        "open", "close", "fsync",
                                        "fdatasync", "ftruncate",
                                        "posix_fallocate",
                                        "copy_file_range"};
    size_t i;

    for (i = 0; i < sizeof calls / sizeof calls[0]; i++)
        if (strcmp(call, calls[i]) == 0)
            return 1;
    return 0;
}

static int hook(void *ctx, const char *call)
{
    (void)ctx;
    if (!fault.armed)
        return 0;
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

/* The fault source for fault.h: the hook, armed for one run. */
static void arm(void *ctx, fault_kind kind, long at, size_t most)
{
    (void)ctx;
    (void)most; /* the hook's short calls move one byte */
    fault.calls = 0;
    fault.at = at;
    fault.error = kind == FAULT_FAIL        ? EIO
                  : kind == FAULT_INTERRUPT ? EINTR
                  : kind == FAULT_SHORT     ? NPYIO__FAULT_SHORT
                                            : 0;
    fault.hit = 0;
    fault.name = NULL;
    fault.armed = 1;
}

static void disarm(void *ctx)
{
    (void)ctx;
    fault.armed = 0;
}

/* The loop's options carry the hook (inert between runs). */
static void attach(void *ctx, npyio_options *o)
{
    (void)ctx;
    npyio__options_set_faults(o, hook, NULL);
}

static long calls_made(const void *ctx)
{
    (void)ctx;
    return fault.calls;
}

static const char *faulted(const void *ctx)
{
    (void)ctx;
    return fault.name;
}

/* A failed call's message names the OS's reason (EIO's). */
static const fault_source os_calls = {arm, disarm, calls_made, faulted,
                                      NULL, "Input/output error", 1, 1,
                                      attach};
/* The same, with big_npy as the operations' context. */
static fault_source big_file;

/* ---- the operations ------------------------------------------------------------------ */

static char src_npy[1024], big_npy[1024], src_npz[1024], aligned_npz[1024],
    out_npy[256], out_npz[256], new_npy[256], map_npy[256],
    roomless_npy[256];

/* ctx: NULL for src_npy in C order; else the path of a larger file,
 * read as it lies (past its first block, by reads of their own). */
static npyio_status load(void *ctx, const npyio_options *o, fault_result *r)
{
    npyio_header *h = NULL;
    void *data = NULL;
    npyio_status st =
        ctx == NULL ? npyio_load_with_header(src_npy, NPYIO_READ_NATIVE |
                                              NPYIO_READ_C_ORDER,
                                 o, &h, &data)
                    : npyio_load_with_header(ctx, NPYIO_READ_NATIVE, o, &h,
                                             &data);

    return fault_keep_loaded(st, r, h, data);
}

static const double values[64] = {1, 2, 3, 4, 5, 6, 7, 8, -1, -2};

static npyio_status save(void *ctx, const npyio_options *o, fault_result *r)
{
    npyio_header *h = NULL;
    npyio_writer *w = NULL;
    npyio_status st =
        fault_header(o, "<f8", 2, (const int64_t[]){8, 8}, &h);

    (void)ctx;
    if (st == NPYIO_OK)
        st = npyio_writer_create_path(out_npy, h, NPYIO_WRITE_UNKNOWN_ROWS, o,
                                    &w);
    st = fault_write_close(st, w, values, sizeof values);
    npyio_header_free(h);
    return result_add_file(st, r, out_npy);
}

static npyio_status append(void *ctx, const npyio_options *o,
                           fault_result *r)
{
    npyio_header *h = NULL;
    npyio_writer *w = NULL;
    npyio_status st =
        fault_header(o, "=f8", 2, (const int64_t[]){2, 8}, &h);

    (void)ctx;
    if (st == NPYIO_OK)
        st = npyio_writer_open_append_path(out_npy, h, 0, o, &w);
    st = fault_write_close(st, w, values, 16 * sizeof values[0]);
    npyio_header_free(h);
    return result_add_file(st, r, out_npy);
}

/* An append to a file whose header has no room for the new row count:
 * the whole file rewritten through a temporary. */
static npyio_status append_roomless(void *ctx, const npyio_options *o,
                                   fault_result *r)
{
    static const int32_t rows[6] = {7, 7, 7, 8, 8, 8};
    npyio_header *h = NULL;
    npyio_writer *w = NULL;
    npyio_status st = fault_header(o, "=i4", 2, (const int64_t[]){2, 3}, &h);

    (void)ctx;
    if (st == NPYIO_OK)
        st = npyio_writer_open_append_path(roomless_npy, h, 0, o, &w);
    st = fault_write_close(st, w, rows, sizeof rows);
    npyio_header_free(h);
    return result_add_file(st, r, roomless_npy);
}

/* The same through npyio_append, which closes its writer inside: a
 * failure of the rewrite names npyio_append, the call made, alone. */
static npyio_status append_roomless_task(void *ctx, const npyio_options *o,
                                         fault_result *r)
{
    static const int32_t rows[6] = {7, 7, 7, 8, 8, 8};
    npyio_status st = npyio_append(roomless_npy, "=i4", 2,
                                   (const int64_t[]){2, 3}, rows, sizeof rows,
                                   0, o);

    (void)ctx;
    if (st != NPYIO_OK)
        assert_names_only("npyio_append");
    return result_add_file(st, r, roomless_npy);
}

/* A new file (nothing to replace: the unnamed file gets the name
 * itself). */
static npyio_status save_new(void *ctx, const npyio_options *o,
                             fault_result *r)
{
    (void)ctx;
    return result_add_file(npyio_save(new_npy, "=f8", 2,
                                            (const int64_t[]){4, 16}, values,
                                            sizeof values, 0, o),
                           r, new_npy);
}

/* Row 0 of the old file replaced where it lies. */
static npyio_status rows_in_place(void *ctx, const npyio_options *o,
                                  fault_result *r)
{
    npyio_writer *w = NULL;
    npyio_status st = npyio_writer_open_in_place_path(out_npy, 0, o, &w);

    (void)ctx;
    if (st == NPYIO_OK)
        st = npyio_writer_write_rows(w, 0, 1, values + 8,
                                     8 * sizeof values[0]);
    if (st == NPYIO_OK)
        st = npyio_writer_close(w);
    else
        npyio_writer_abort(w);
    return result_add_file(st, r, out_npy);
}

/* A new file mapped and filled: a record of 40 fields, whose header does
 * not fit the 512 bytes the creator first tries. (Not synced: see
 * test_map_create_failure_after_rename for a failed sync.) */
static npyio_status map_create(void *ctx, const npyio_options *o,
                               fault_result *r)
{
    char descr[1024];
    size_t at = 0;
    npyio_header *h = NULL;
    npyio_map *m = NULL;
    npyio_status st;
    int i;

    (void)ctx;
    at += (size_t)snprintf(descr, sizeof descr, "[");
    for (i = 0; i < 40; i++)
        at += (size_t)snprintf(descr + at, sizeof descr - at,
                               "('field_%02d', '<i2'), ", i);
    snprintf(descr + at, sizeof descr - at, "]");
    st = fault_header(o, descr, 1, (const int64_t[]){2}, &h);
    if (st == NPYIO_OK)
        st = npyio_map_create_path(map_npy, h, NPYIO_WRITE_NO_SYNC, o, &m);
    if (st == NPYIO_OK) {
        memcpy(npyio_map_data(m), values, 160);
        st = npyio_map_close(m);
    }
    npyio_header_free(h);
    return result_add_file(st, r, map_npy);
}

/* A file mapped read-only: its data. */
static npyio_status map_open(void *ctx, const npyio_options *o,
                             fault_result *r)
{
    npyio_map *m = NULL;
    npyio_status st = npyio_map_open_path(src_npy, 0, o, &m);

    (void)ctx;
    if (st == NPYIO_OK) {
        result_add(r, npyio_map_data(m),
                   (size_t)npyio_header_nbytes(npyio_map_header(m)));
        st = npyio_map_close(m);
    }
    return st;
}

static npyio_status read_npz(void *ctx, const npyio_options *o,
                             fault_result *r)
{
    npyio_npz *npz = NULL;
    npyio_status st = npyio_npz_open_path(src_npz, o, &npz);

    (void)ctx;
    return fault_read_members(st, npz, 0, r);
}

/* One array of an archive, by its key. */
static npyio_status load_npz(void *ctx, const npyio_options *o,
                             fault_result *r)
{
    void *data = NULL;
    size_t len = 0;
    npyio_status st = npz_load_key(src_npz, "plain", o, &data, &len);

    (void)ctx;
    if (st == NPYIO_OK)
        result_add(r, data, len);
    npyio_free(data);
    return st;
}

/* A stored member mapped. */
static npyio_status map_npz(void *ctx, const npyio_options *o,
                            fault_result *r)
{
    npyio_npz *npz = NULL;
    npyio_map *m = NULL;
    npyio_status st = npyio_npz_open_path(aligned_npz, o, &npz);

    (void)ctx;
    if (st == NPYIO_OK)
        st = npyio_map_open_member(npz, 2, &m);
    if (st == NPYIO_OK) {
        result_add(r, npyio_map_data(m),
                   (size_t)npyio_header_nbytes(npyio_map_header(m)));
        st = npyio_map_close(m);
    }
    if (npz != NULL) {
        npyio_status closed = npyio_npz_close(npz);

        st = st == NPYIO_OK ? closed : st;
    }
    return st;
}

static npyio_status write_npz(void *ctx, const npyio_options *o,
                              fault_result *r)
{
    npyio_npz_writer *w = NULL;
    npyio_header *h = NULL;
    npyio_status st =
        fault_header(o, "<f8", 1, (const int64_t[]){64}, &h);

    (void)ctx;
    if (st == NPYIO_OK)
        st = npyio_npz_writer_create_path(out_npz, 0, o, &w);
    st = fault_npz_add_both(st, w, h, values, sizeof values);
    st = fault_npz_close(st, w);
    npyio_header_free(h);
    return result_add_file(st, r, out_npz);
}

static npyio_status append_npz(void *ctx, const npyio_options *o,
                               fault_result *r)
{
    npyio_npz_writer *w = NULL;
    npyio_header *h = NULL;
    npyio_status st =
        fault_header(o, "<f8", 1, (const int64_t[]){8}, &h);

    (void)ctx;
    if (st == NPYIO_OK)
        st = npyio_npz_writer_open_append_path(out_npz, 0, o, &w);
    if (st == NPYIO_OK)
        st = npyio_npz_writer_add_with_header(w, "more", h, values,
                                              8 * sizeof values[0], 6, 0);
    st = fault_npz_close(st, w);
    npyio_header_free(h);
    return result_add_file(st, r, out_npz);
}

/* ---- the tests ------------------------------------------------------------------------- */

static void test_npy(void **state)
{
    const fault_op ops[] = {{"load", load, NULL, 0},
                            {"save", save, out_npy, 0},
                            {"append", append, out_npy, 0},
                            {"append to a file without room",
                             append_roomless, roomless_npy, 0},
                            {"npyio_append to a file without room",
                             append_roomless_task, roomless_npy, 0},
                            {"save a new file", save_new, new_npy, 0},
                            {"rows in place", rows_in_place, out_npy, 1},
                            {"create a map", map_create, map_npy, 0},
                            {"map", map_open, NULL, 0}};
    const fault_op larger = {"load a larger file", load, NULL, 0};

    (void)state;
    fault_every_op(ops, sizeof ops / sizeof ops[0], &os_calls);
    big_file = os_calls;
    big_file.ctx = big_npy;
    fault_every_call(&larger, &big_file);
}

static void test_npz(void **state)
{
    const fault_op ops[] = {{"read .npz", read_npz, NULL, 0},
                            {"load from .npz", load_npz, NULL, 0},
                            {"map a member", map_npz, NULL, 0},
                            {"write .npz", write_npz, out_npz, 0},
                            {"append .npz", append_npz, out_npz, 0}};

    (void)state;
    fault_every_op(ops, sizeof ops / sizeof ops[0], &os_calls);
}

/* ---- single faults ------------------------------------------------------------- */

/* Fail the n-th call named `name` with `error`. */
static struct {
    const char *name;
    int n, seen, error;
} named;

static int fail_named(void *ctx, const char *call)
{
    (void)ctx;
    if (named.name != NULL && strcmp(call, named.name) == 0 &&
        ++named.seen == named.n)
        return named.error;
    return 0;
}

/* Options whose hook fails the call arm_named names (inert until then);
 * made once, freed by the test runner's exit. */
static npyio_options *named_options(void)
{
    static npyio_options *o;

    if (o == NULL) {
        assert_ok(npyio_options_new(&o));
        npyio__options_set_faults(o, fail_named, NULL);
    }
    return o;
}

static void arm_named(const char *name, int n, int error)
{
    named.name = name;
    named.n = n;
    named.seen = 0;
    named.error = error;
}

static void disarm_named(void)
{
    named.name = NULL;
}

/* An OS call that fails for want of memory is NPYIO_E_NOMEM, with the
 * OS's reason, from every function: an open, and a map. */
static void test_os_out_of_memory(void **state)
{
    npyio_header *h = NULL;
    npyio_map *m = (npyio_map *)&named;
    void *data = &named;

    (void)state;
    arm_named("open", 1, ENOMEM);
    assert_status(npyio_load_with_header(src_npy, 0, named_options(), &h,
                                         &data),
                  NPYIO_E_NOMEM);
    disarm_named();
    assert_error_contains("npyio_load_with_header: cannot open");
    assert_error_contains("Cannot allocate memory");
    assert_null(h);
    assert_null(data);
    arm_named("mmap", 1, ENOMEM);
    assert_status(npyio_map_open_path(src_npy, 0, named_options(), &m),
                  NPYIO_E_NOMEM);
    disarm_named();
    assert_error_contains("npyio_map_open_path: ");
    assert_error_contains("mmap: Cannot allocate memory");
    assert_null(m);
}

/* A path stream whose first read (the positioned read of its first
 * block) failed is read again from its start, by plain reads since it
 * never learnt that it could read by position; such a read that fails
 * says so too. */
static void test_stream_read_again(void **state)
{
    npyio_stream *s = NULL;
    size_t len = 0, got = 9;
    unsigned char *want = snapshot(src_npy, &len), buf[8192];

    (void)state;
    assert_true(len < sizeof buf);
    assert_ok(npyio_stream_open_path(src_npy, NPYIO_STREAM_READ,
                                     named_options(), &s));
    arm_named("pread", 1, EIO);
    assert_status(npyio_stream_read(s, buf, 100, &got), NPYIO_E_IO);
    disarm_named();
    assert_error_contains("npyio_stream_read: reading the stream at stream "
                          "offset 0: pread: Input/output error");
    assert_int_equal(got, 0);
    arm_named("read", 1, EIO);
    assert_status(npyio_stream_read(s, buf, sizeof buf, &got), NPYIO_E_IO);
    disarm_named();
    assert_error_contains("npyio_stream_read: reading the stream at stream "
                          "offset 0: read: Input/output error");
    assert_ok(npyio_stream_read(s, buf, sizeof buf, &got));
    assert_int_equal(got, len);
    assert_memory_equal(buf, want, len);
    assert_ok(npyio_stream_close(s));
    free(want);
}

/*
 * npyio_map_create_path past the point of no return: a sync of the directory
 * that fails after the new file took the path is NPYIO_E_IO ("may not
 * survive a crash") with no map, and the path holds the new file (its
 * header, zeros), as the header documents, for an existing file and a
 * fresh path alike. (A failure before the rename: the fault loop.)
 */
static void test_map_create_failure_after_rename(void **state)
{
    const char *paths[2] = {out_npy, new_npy};
    npyio_header *h = make_header("=f8", 2, (const int64_t[]){1, 8}, 0);
    size_t i;

    (void)state;
    for (i = 0; i < 2; i++) {
        size_t old_len = 0;
        unsigned char *old = snapshot(paths[i], &old_len);
        npyio_map *m = (npyio_map *)&named;
        npyio_header *back = NULL;
        double zeros[8] = {0}, *data = NULL;
        npyio_status st;

        /* The file's sync, then the directory's. */
        arm_named("fsync", 2, EIO);
        st = npyio_map_create_path(paths[i], h, 0, named_options(), &m);
        disarm_named();
        assert_int_equal(st, NPYIO_E_IO);
        assert_error_contains("may not survive a crash");
        assert_null(m);
        assert_ok(npyio_load_with_header(paths[i], 0, NULL, &back,
                                         (void **)&data));
        assert_int_equal(npyio_header_nbytes(back), sizeof zeros);
        assert_memory_equal(data, zeros, sizeof zeros);
        npyio_free(data);
        npyio_header_free(back);
        restore(paths[i], old, old_len);
        free(old);
    }
    npyio_header_free(h);
}

static int setup(void **state)
{
    (void)state;
    snprintf(src_npy, sizeof src_npy, "%s/arrays/%s", NPYIO_TEST_DATA_DIR,
             "rec_nested_padded_3x4_f.npy");
    snprintf(src_npz, sizeof src_npz, "%s/npz/%s", NPYIO_TEST_DATA_DIR,
             "keys.npz");
    snprintf(big_npy, sizeof big_npy, "%s/arrays/%s", NPYIO_TEST_DATA_DIR,
             "big_f8_fortran.npy");
    if (scratch_make("test_pathfault") != 0)
        return -1;
    path_in_dir(out_npy, sizeof out_npy, "out.npy");
    path_in_dir(out_npz, sizeof out_npz, "out.npz");
    path_in_dir(new_npy, sizeof new_npy, "new.npy");
    path_in_dir(map_npy, sizeof map_npy, "map.npy");
    path_in_dir(roomless_npy, sizeof roomless_npy, "roomless.npy");
    write_roomless_file(roomless_npy, 9); /* (9, 3): (11, 3) needs room */
    snprintf(aligned_npz, sizeof aligned_npz, "%s/npz/%s",
             NPYIO_TEST_DATA_DIR, "aligned_store.npz");
    /* An old file to replace and to append to, and an old archive. */
    if (npyio_save(out_npy, "=f8", 2, (const int64_t[]){1, 8}, values,
                         8 * sizeof values[0], NPYIO_WRITE_NO_SYNC,
                         NULL) != NPYIO_OK)
        return -1;
    {
        const char *keys[1] = {"old"};
        npyio_header *h = NULL;
        npyio_dtype *dt = NULL;
        const void *data[1] = {values};
        size_t lens[1] = {sizeof values};
        npyio_status st = npyio_dtype_parse("=f8", 3, NULL, &dt);

        if (st == NPYIO_OK)
            st = npyio_header_new(dt, 1, (const int64_t[]){64}, 0, &h);
        npyio_dtype_unref(dt);
        if (st == NPYIO_OK)
            st = npyio_savez_with_header(out_npz, 1, keys,
                                (const npyio_header *const[]){h}, data,
                                lens, NULL, NPYIO_WRITE_NO_SYNC, NULL);
        npyio_header_free(h);
        if (st != NPYIO_OK)
            return -1;
    }
    return 0;
}

/* ---- a full disk --------------------------------------------------------------- */

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
    if (small_mounted != SMALL_MOUNTED) {
        /* Root can mount one, so CI must, but for the cross hosts under
         * qemu (which set NPYIO_CROSS). */
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
    assert_ok(npyio_save_with_header(npy, h1, values, 8 * sizeof values[0], 0,
                                     NULL));
    assert_ok(npyio_savez_with_header(npz, 1, keys, (const npyio_header *const[]){h1},
                             (const void *const[]){values},
                             (const size_t[]){8 * sizeof values[0]}, NULL, 0,
                             NULL));
    old_npy = snapshot(npy, &npy_len);
    old_npz = snapshot(npz, &npz_len);

    no_space(npyio_save_with_header(npy, hb, big, sizeof big, 0, NULL));
    unchanged(npy, old_npy, npy_len);
    no_space(npyio_save_with_header(fresh, hb, big, sizeof big, 0, NULL));
    /* An append: the rows do not fit; the file is cut back. */
    st = npyio_writer_open_append_path(npy, hrows, 0, NULL, &w);
    assert_ok(st);
    st = npyio_writer_write(w, big, sizeof big);
    if (st == NPYIO_OK)
        st = npyio_writer_close(w);
    else
        npyio_writer_abort(w);
    no_space(st);
    unchanged(npy, old_npy, npy_len);
    /* Archives: a new one, and an append. */
    no_space(npyio_savez_with_header(npz, 1, keys, (const npyio_header *const[]){hb},
                            (const void *const[]){big},
                            (const size_t[]){sizeof big}, NULL, 0, NULL));
    unchanged(npz, old_npz, npz_len);
    assert_ok(npyio_npz_writer_open_append_path(npz, 0, NULL, &zw));
    st = npyio_npz_writer_add_with_header(zw, "big", hb, big, sizeof big, 0,
                                          0);
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
        cmocka_unit_test(test_os_out_of_memory),
        cmocka_unit_test(test_stream_read_again),
        cmocka_unit_test(test_map_create_failure_after_rename),
        cmocka_unit_test_setup_teardown(test_full_disk, mount_small,
                                        unmount_small),
    };

    return cmocka_run_group_tests(tests, setup, scratch_remove);
}
