/*
 * test_replace.c - the temporaries of atomic replacement (replace.c):
 * their names carry a fixed "npyio" marker, so that a user's own file that
 * merely looks like one (".thesis.4000000-1-beef.tmp") is never removed;
 * stale ones are looked for only for the file being saved; a save through
 * an unnamed (O_TMPFILE) temporary lists no directory, and removes the
 * stray a save killed between linkat and rename leaves at the commit name
 * ".<name>.npyio.tmp" (unless a live save holds it); names near NAME_MAX
 * still fit. Named temporaries (systems without O_TMPFILE) are forced
 * here through the platform module's test hook.
 */
#define _POSIX_C_SOURCE 200809L
#define _GNU_SOURCE /* O_TMPFILE, F_OFD_SETLK */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "scratch.h"
#include "kill_writer.h"
#include "no_unnamed.h"
#include "platform.h"

/* nobody:nogroup, an owner other than the (root) caller. */
#define NOBODY 65534

static int make_dir(void **state)
{
    (void)state;
    return scratch_make("npyio-replace");
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");

    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
}

static int exists(const char *path)
{
    struct stat info;

    return lstat(path, &info) == 0;
}

static void assert_text_is(const char *path, const char *text)
{
    size_t len = 0;
    unsigned char *now = read_file(path, &len);

    assert_int_equal(len, strlen(text));
    assert_memory_equal(now, text, len);
    free(now);
}

/* Hidden entries of the test directory (temporaries and look-alikes). */
static int hidden_entries(void)
{
    return scratch_hidden_entries(dir);
}

/* Does this build use unnamed files (not NPYIO_PORTABLE), and this
 * directory have them (O_TMPFILE)? */
static int has_unnamed_files(void)
{
    if (!npyio__platform_capabilities().unnamed_files)
        return 0;
#if defined(O_TMPFILE)
    int fd = open(dir, O_TMPFILE | O_RDWR, 0600);

    if (fd >= 0)
        close(fd);
    return fd >= 0;
#else
    return 0;
#endif
}

/* The pid of a process that has exited and been reaped. */
static pid_t dead_pid(void)
{
    pid_t pid = fork();
    int status = 0;

    assert_true(pid >= 0);
    if (pid == 0)
        _exit(0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(kill(pid, 0), -1);
    return pid;
}

/* ---- saving, through an unnamed or a named temporary ---------------------- */

/* For a child process, which sets its own copy. */
static void fail_the_next_open(void)
{
    fail_next_open = 1;
}

/* Save the int32 array [v, v, v] at path with options o. */
static npyio_status save_with(const char *path, int32_t v,
                              const npyio_options *o)
{
    int32_t data[3] = {v, v, v};
    int64_t n = 3;

    return npyio_save(path, "i4", 1, &n, data, sizeof data,
                            NPYIO_WRITE_NO_SYNC, o);
}

static npyio_status save(const char *path, int32_t v)
{
    return save_with(path, v, NULL);
}

/* The same through a named temporary. */
static npyio_status save_named(const char *path, int32_t v)
{
    npyio_options *o = without_unnamed_files();
    npyio_status st;

    fail_next_open = 1;
    st = save_with(path, v, o);
    npyio_options_free(o);
    assert_int_equal(fail_next_open, 0); /* it did fall back */
    return st;
}

static void assert_saved(const char *path, int32_t v)
{
    npyio_header *h = NULL;
    int32_t *got = NULL;

    assert_ok(npyio_load_with_header(path, NPYIO_READ_NATIVE, NULL, &h,
                                     (void **)&got));
    assert_int_equal(npyio_header_count(h), 3);
    assert_int_equal(got[0], v);
    assert_int_equal(got[2], v);
    npyio_free(got);
    npyio_header_free(h);
}

/* ---- look-alikes ---------------------------------------------------------- */

/*
 * Files of the user's whose names look like temporaries of the old naming
 * (".<name>.<pid>-<n>-<hex>.tmp", the pid not running) are the user's:
 * no save removes them, whether through an unnamed or a named temporary,
 * whether the destination is new or replaced.
 */
static void test_lookalikes_are_kept(void **state)
{
    enum { N = 4 };
    long dead = (long)dead_pid();
    char path[N][200], target[128];
    int i;

    (void)state;
    snprintf(path[0], sizeof path[0], "%s/.thesis.%ld-1-beef.tmp", dir, dead);
    snprintf(path[1], sizeof path[1], "%s/.x.npy.%ld-0-1a2b.tmp", dir, dead);
    snprintf(path[2], sizeof path[2], "%s/.x.npy.%ld-1-beef.tmp", dir, dead);
    snprintf(path[3], sizeof path[3], "%s/.x.npy.npyio.%ld-0-1.tmp", dir,
             dead);
    for (i = 0; i < N; i++)
        write_file(path[i], "mine");
    path_in_dir(target, sizeof target, "x.npy");
    assert_ok(save(target, 1));        /* a new file */
    assert_ok(save(target, 2));        /* replaced */
    assert_ok(save_named(target, 3));  /* replaced through a named one */
    assert_int_equal(unlink(target), 0);
    assert_ok(save_named(target, 4)); /* a new file through a named one */
    assert_saved(target, 4);
    for (i = 0; i < N; i++) {
        assert_text_is(path[i], "mine");
        assert_int_equal(unlink(path[i]), 0);
    }
    assert_int_equal(unlink(target), 0);
    assert_int_equal(hidden_entries(), 0);
}

/* ---- named temporaries ---------------------------------------------------- */

/*
 * A save through a named temporary removes the stale named temporaries of
 * its own destination (ours, regular, their process dead) and nothing
 * else: not another destination's, not a live process's (its own
 * included), not malformed names, directories, links or other users'
 * files. A save through an unnamed temporary lists no directory, so
 * leaves them all.
 */
static void test_stale_named_temporaries(void **state)
{
    enum { N = 11 };
    long dead = (long)dead_pid();
    /* Which of them a named save of x.npy removes, by index below. */
    int removed[N] = {1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    char path[N][200], target[128];
    int i;

    (void)state;
    snprintf(path[0], sizeof path[0], "%s/.x.npy.npyio-%ld-0-1a2b.tmp", dir,
             dead);
    snprintf(path[1], sizeof path[1], "%s/.x.npy.npyio-%ld-12-f.tmp", dir,
             dead);
    snprintf(path[2], sizeof path[2], "%s/.other.npy.npyio-%ld-3-ff.tmp", dir,
             dead);
    snprintf(path[3], sizeof path[3], "%s/.x.npy.npyio-%ld-0-1a2b.tmp", dir,
             (long)getppid());
    snprintf(path[4], sizeof path[4], "%s/.x.npy.npyio-%ld-0-1a2b.tmp", dir,
             (long)getpid());
    snprintf(path[5], sizeof path[5], "%s/.x.npy.npyio-abc-0-1.tmp", dir);
    snprintf(path[6], sizeof path[6], "%s/.x.npy.npyio-%ld-0-1a2b.tmp.bak",
             dir, dead);
    snprintf(path[7], sizeof path[7], "%s/.x.npy.npyio-%ld-0-xyz.tmp", dir,
             dead);
    snprintf(path[8], sizeof path[8], "%s/.x.npy.npyio-%ld-1-1a2b.tmp", dir,
             dead);
    snprintf(path[9], sizeof path[9], "%s/.x.npy.npyio-%ld-2-1a2b.tmp", dir,
             dead);
    snprintf(path[10], sizeof path[10], "%s/.x.npy.npyio-%ld-4-1a2b.tmp",
             dir, dead);
    write_file(path[N - 1], "x"); /* the links' target */
    for (i = 0; i < N - 1; i++)
        if (i == 8)
            assert_int_equal(mkdir(path[i], 0700), 0);
        else if (i == 9)
            assert_int_equal(symlink(path[N - 1], path[i]), 0);
        else
            write_file(path[i], "stale");
    /* Another user's file (root only: otherwise it is ours, and goes). */
    if (geteuid() == 0)
        assert_int_equal(chown(path[10], NOBODY, NOBODY), 0);
    else
        removed[10] = 1;

    path_in_dir(target, sizeof target, "x.npy");
    if (has_unnamed_files()) {
        assert_ok(save(target, 1));
        assert_ok(save(target, 2));
        for (i = 0; i < N; i++)
            if (!exists(path[i]))
                fail_msg("%s removed by a save through an unnamed file",
                         path[i]);
    }
    assert_ok(save_named(target, 3));
    assert_saved(target, 3);
    for (i = 0; i < N; i++)
        if (exists(path[i]) != !removed[i])
            fail_msg("%s: %s, expected %s", path[i],
                     exists(path[i]) ? "still there" : "removed",
                     removed[i] ? "removed" : "kept");
    assert_text_is(path[3], "stale");
    for (i = 0; i < N; i++)
        if (i == 8)
            assert_int_equal(rmdir(path[i]), 0);
        else if (exists(path[i]))
            assert_int_equal(unlink(path[i]), 0);
    assert_int_equal(unlink(target), 0);
}

/* The name of the only entry of the test directory starting with
 * prefix, in out; 0 if there is none, -1 if there are several. */
static int only_entry(const char *prefix, char *out, size_t cap)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && n++ == 0)
            snprintf(out, cap, "%s", e->d_name);
    closedir(d);
    return n <= 1 ? n : -1;
}

/*
 * A writer killed in the middle of a named temporary leaves it, named
 * ".k.npy.npyio-<its pid>-...tmp"; the next save of k.npy through a named
 * temporary removes it.
 */
static void test_killed_named_writer(void **state)
{
    int64_t n = 1 << 16;
    npyio_header *h = make_header("<f8", 1, &n, 0);
    static unsigned char data[1 << 16];
    char path[128], prefix[64], name[256];
    npyio_options *o = without_unnamed_files();
    kill_writer_job job = {path, h, o, data, sizeof data, fail_the_next_open};
    pid_t pid;

    (void)state;
    path_in_dir(path, sizeof path, "k.npy");
    assert_ok(save(path, 7));
    pid = kill_writer_mid_write(&job);
    npyio_options_free(o);
    snprintf(prefix, sizeof prefix, ".k.npy.npyio-%ld-", (long)pid);
    assert_int_equal(only_entry(prefix, name, sizeof name), 1);
    assert_int_equal(hidden_entries(), 1);
    assert_saved(path, 7);
    assert_ok(save_named(path, 8));
    assert_saved(path, 8);
    assert_int_equal(hidden_entries(), 0);
    assert_int_equal(unlink(path), 0);
    npyio_header_free(h);
}

/* ---- the commit name of unnamed temporaries ------------------------------- */

/*
 * Without unnamed files (a portable build, as on macOS and the BSDs, or a
 * file system without them) no save uses the commit name: a file there
 * (a stray of a Linux build's killed save) is no temporary of these saves
 * and is left as it is, while the saves go through named temporaries.
 */
static void commit_name_left_alone(const char *target, const char *stray)
{
    write_file(stray, "left by a killed save");
    assert_ok(save(target, 2));
    assert_saved(target, 2);
    assert_text_is(stray, "left by a killed save");
    assert_int_equal(hidden_entries(), 1);
    assert_int_equal(unlink(stray), 0);
    assert_int_equal(unlink(target), 0);
}

/*
 * A save killed between linkat and rename leaves its file at the commit
 * name ".x.npy.npyio.tmp". The next save that replaces x.npy removes it
 * (nobody holds its lock); one held by a live save (a lock on it) is
 * left, and the save goes through another name; what is not a regular
 * file is left. No other temporary remains.
 */
static void test_commit_name_stray(void **state)
{
    char target[128], stray[128], kept[128];
    struct flock lock;
    int held;

    (void)state;
    path_in_dir(target, sizeof target, "x.npy");
    path_in_dir(stray, sizeof stray, ".x.npy.npyio.tmp");
    assert_ok(save(target, 1));
    if (!has_unnamed_files()) {
        commit_name_left_alone(target, stray);
        return;
    }
    /* A stray: removed by the next save that replaces the file. */
    write_file(stray, "left by a killed save");
    assert_ok(save(target, 2));
    assert_saved(target, 2);
    assert_false(exists(stray));
    assert_int_equal(hidden_entries(), 0);
    /* A fresh file is linked at its own name: the stray stays until a
     * save replaces it. */
    assert_int_equal(unlink(target), 0);
    write_file(stray, "left by a killed save");
    assert_ok(save(target, 3));
    assert_true(exists(stray));
    assert_ok(save(target, 4));
    assert_false(exists(stray));
    /* Held by a live save (its lock): kept, and the save still lands. */
    write_file(stray, "a live save's");
    held = open(stray, O_RDWR);
    assert_true(held >= 0);
    memset(&lock, 0, sizeof lock);
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    assert_int_equal(fcntl(held, F_OFD_SETLK, &lock), 0);
    assert_ok(save(target, 5));
    assert_saved(target, 5);
    assert_text_is(stray, "a live save's");
    assert_int_equal(hidden_entries(), 1);
    close(held); /* the save died: the next one removes it */
    assert_ok(save(target, 6));
    assert_false(exists(stray));
    /* Not a regular file: left. */
    path_in_dir(kept, sizeof kept, "kept");
    write_file(kept, "kept");
    assert_int_equal(symlink(kept, stray), 0);
    assert_ok(save(target, 7));
    assert_text_is(kept, "kept");
    assert_int_equal(unlink(stray), 0);
    assert_int_equal(mkdir(stray, 0700), 0);
    assert_ok(save(target, 8));
    assert_saved(target, 8);
    assert_int_equal(rmdir(stray), 0);
    assert_int_equal(hidden_entries(), 0);
    assert_int_equal(unlink(kept), 0);
    assert_int_equal(unlink(target), 0);
}

/* Threads saving the same file at once: each save lands whole, and no
 * temporary remains (the commit name is taken by one at a time). */
enum { SAVES = 200 };

static void *save_often(void *arg)
{
    const char *path = arg;
    int i;

    for (i = 0; i < SAVES; i++)
        if (save(path, i) != NPYIO_OK)
            return (void *)npyio_last_error();
    return NULL;
}

static void test_concurrent_saves(void **state)
{
    pthread_t t[3];
    void *failed[3];
    char path[128];
    int i;

    (void)state;
    path_in_dir(path, sizeof path, "c.npy");
    assert_ok(save(path, 0));
    for (i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&t[i], NULL, save_often, path), 0);
    for (i = 0; i < 3; i++)
        assert_int_equal(pthread_join(t[i], &failed[i]), 0);
    for (i = 0; i < 3; i++)
        if (failed[i] != NULL)
            fail_msg("thread %d: %s", i, (const char *)failed[i]);
    assert_saved(path, SAVES - 1);
    assert_int_equal(hidden_entries(), 0);
    assert_int_equal(unlink(path), 0);
}

/* ---- long names ----------------------------------------------------------- */

/* A destination whose name nearly fills NAME_MAX (255) is replaced, through
 * an unnamed and a named temporary, since a temporary's name cuts it. */
static void test_long_names(void **state)
{
    char name[256], path[400];

    (void)state;
    memset(name, 'L', 250);
    memcpy(name + 250, ".npy", 5);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_ok(save(path, 1));
    assert_ok(save(path, 2));
    assert_saved(path, 2);
    assert_ok(save_named(path, 3));
    assert_saved(path, 3);
    assert_int_equal(hidden_entries(), 0);
    assert_int_equal(unlink(path), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookalikes_are_kept),
        cmocka_unit_test(test_stale_named_temporaries),
        cmocka_unit_test(test_killed_named_writer),
        cmocka_unit_test(test_commit_name_stray),
        cmocka_unit_test(test_concurrent_saves),
        cmocka_unit_test(test_long_names),
    };

    return cmocka_run_group_tests(tests, make_dir, scratch_remove);
}
