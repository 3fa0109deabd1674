/*
 * test_save_under.c - npyio_stream_save_under(): a stream's bytes saved
 * as a file below a base folder by atomic replacement. Its bytes and
 * mode; folders made; its refusals (NULL arguments, hostile and empty
 * names, other flags, a link or a file where a folder goes, an existing
 * file without NPYIO_WRITE_REPLACE, at the open and at the commit itself,
 * a directory); a link planted while it runs is not followed; a source or
 * a write that fails, and a process killed mid-write, leave the old file
 * and no temporary (a named one, on systems without unnamed files, is
 * removed by the next save of that name). The source is the caller's
 * callbacks, whose reads do the planting between the open and the commit.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
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
#include "no_unnamed.h"

static const char text[] = "the new bytes of the file";

/* ---- a source over callbacks, with something done mid-read ---------------- */

typedef struct source {
    const char *bytes;
    size_t len, at;
    size_t fail_at;       /* fail the read that reaches this offset (0: no) */
    void (*during)(void); /* run at the first read, between open and commit */
    int signal_fd;        /* (a child) say "mid-write" here and wait */
} source;

static int source_read(void *user, void *buf, size_t cap, size_t *got)
{
    source *s = user;
    size_t n = s->len - s->at < 4 ? s->len - s->at : 4; /* small steps */

    if (s->during != NULL) {
        s->during();
        s->during = NULL;
    }
    if (s->signal_fd >= 0 && s->at > 0) {
        if (write(s->signal_fd, "w", 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    if (s->fail_at > 0 && s->at + n >= s->fail_at)
        return 1;
    (void)cap;
    memcpy(buf, s->bytes + s->at, n);
    s->at += n;
    *got = n;
    return 0;
}

static npyio_stream *open_source(source *s)
{
    npyio_stream_ops ops = {0};
    npyio_stream *out = NULL;

    ops.size = sizeof ops;
    ops.read = source_read;
    assert_ok(npyio_stream_open_ops(&ops, s, NULL, &out));
    return out;
}

/* Save `text` as path below dir; s's extras set by the caller. */
static npyio_status save_from(source *s, const char *path, uint32_t flags,
                              const npyio_options *o)
{
    npyio_stream *in = open_source(s);
    npyio_status st = npyio_stream_save_under(in, dir, path, flags, o);

    npyio_stream_close(in);
    return st;
}

static npyio_status save(const char *path, uint32_t flags)
{
    source s = {text, sizeof text - 1, 0, 0, NULL, -1};

    return save_from(&s, path, flags, NULL);
}

/* ---- what is on disk -------------------------------------------------------- */

static int make_dir(void **state)
{
    (void)state;
    umask(022);
    return scratch_make("npyio-save-under");
}

static void put(const char *name, const char *bytes)
{
    char path[256];
    FILE *f;

    path_in_dir(path, sizeof path, name);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, strlen(bytes), f), strlen(bytes));
    assert_int_equal(fclose(f), 0);
}

static void assert_holds(const char *name, const char *bytes)
{
    char path[256];
    size_t len = 0;
    unsigned char *now;

    path_in_dir(path, sizeof path, name);
    now = read_file(path, &len);
    assert_non_null(now);
    assert_int_equal(len, strlen(bytes));
    assert_memory_equal(now, bytes, len);
    free(now);
}

static int there(const char *name)
{
    char path[256];
    struct stat info;

    path_in_dir(path, sizeof path, name);
    return lstat(path, &info) == 0;
}

/* Hidden entries (temporaries) of folder `name` below dir. */
static int hidden_in(const char *name)
{
    char path[256];

    path_in_dir(path, sizeof path, name);
    return scratch_hidden_entries(path);
}

static void assert_message_has(const char *what)
{
    const char *m = npyio_last_error();

    if (strstr(m, what) == NULL)
        fail_msg("message '%s' lacks '%s'", m, what);
    assert_true(strncmp(m, "npyio_stream_save_under: ", 25) == 0);
}

static void run(const char *command)
{
    char cmd[512];

    snprintf(cmd, sizeof cmd, "cd %s && %s", dir, command);
    assert_int_equal(system(cmd), 0);
}

static int fail_writes(void *ctx, const char *call)
{
    (void)ctx;
    return strcmp(call, "write") == 0 ? EIO : 0;
}

static npyio_options *with_hook(int (*hook)(void *, const char *))
{
    npyio_options *o = NULL;

    assert_ok(npyio_options_new(&o));
    npyio__options_set_faults(o, hook, NULL);
    return o;
}

/* ---- success ---------------------------------------------------------------- */

/* A new file: the bytes, mode 0666 less the umask (022 here), its
 * folders made, synced by default; then replaced with the flag, keeping
 * the old file's mode. */
static void test_saves_and_replaces(void **state)
{
    char path[256];
    struct stat info;

    (void)state;
    assert_ok(save("a/b/new.bin", 0));
    assert_holds("a/b/new.bin", text);
    path_in_dir(path, sizeof path, "a/b/new.bin");
    assert_int_equal(stat(path, &info), 0);
    assert_int_equal(info.st_mode & 07777, 0644);
    assert_int_equal(chmod(path, 0600), 0);
    assert_ok(save("a/b/new.bin", NPYIO_WRITE_REPLACE | NPYIO_WRITE_NO_SYNC));
    assert_holds("a/b/new.bin", text);
    assert_int_equal(stat(path, &info), 0);
    assert_int_equal(info.st_mode & 07777, 0600);
    assert_int_equal(hidden_in("a/b"), 0);
    run("rm -r a");
}

/* ---- refusals ----------------------------------------------------------------- */

static void test_refuses_arguments(void **state)
{
    static const char *const hostile[] = {
        "/etc/x", "../x", "a/../../x", "./x", "a//x", "a/", "..", ".",
        "a/./x"};
    npyio_stream *in;
    source s = {text, sizeof text - 1, 0, 0, NULL, -1};
    size_t i;

    (void)state;
    in = open_source(&s);
    assert_int_equal(npyio_stream_save_under(NULL, dir, "x", 0, NULL),
                     NPYIO_E_INVALID_ARG);
    assert_message_has("stream is NULL");
    assert_int_equal(npyio_stream_save_under(in, NULL, "x", 0, NULL),
                     NPYIO_E_INVALID_ARG);
    assert_message_has("base is NULL");
    assert_int_equal(npyio_stream_save_under(in, dir, NULL, 0, NULL),
                     NPYIO_E_INVALID_ARG);
    assert_message_has("path is NULL");
    assert_int_equal(npyio_stream_save_under(in, dir, "", 0, NULL),
                     NPYIO_E_INVALID_ARG);
    assert_message_has("path is empty");
    assert_int_equal(npyio_stream_save_under(in, dir, "x",
                                             NPYIO_READ_NATIVE, NULL),
                     NPYIO_E_INVALID_ARG);
    assert_message_has("NPYIO_READ_NATIVE");
    for (i = 0; i < sizeof hostile / sizeof *hostile; i++) {
        assert_int_equal(npyio_stream_save_under(in, dir, hostile[i], 0,
                                                 NULL),
                         NPYIO_E_INVALID_ARG);
        assert_message_has(hostile[i][0] == '/' ? "is absolute"
                                                : "'..' component");
    }
    assert_int_equal(npyio_stream_save_under(in, dir, "a\nb/../x", 0, NULL),
                     NPYIO_E_INVALID_ARG);
    assert_message_has("'a\\x0ab/../x'"); /* shown escaped */
    assert_int_equal(npyio_stream_save_under(in, "/nonexistent-npyio", "x",
                                             0, NULL),
                     NPYIO_E_NOT_FOUND);
    assert_message_has("the base folder");
    npyio_stream_close(in);
    assert_int_equal(hidden_in("."), 0);
    assert_false(there("x") || there("a"));
}

/* A symbolic link, or a file, where a folder of the path goes: refused,
 * nothing written through it. */
static void test_refuses_links_in_folders(void **state)
{
    (void)state;
    run("mkdir real && ln -s real link && ln -s /tmp abs && touch file");
    assert_int_equal(save("link/x", 0), NPYIO_E_IO);
    assert_message_has("folder 'link' is a symbolic link, which is not "
                       "followed");
    assert_int_equal(save("abs/npyio-save-under-escaped", 0), NPYIO_E_IO);
    assert_false(there("real/x"));
    assert_int_equal(access("/tmp/npyio-save-under-escaped", F_OK), -1);
    assert_int_equal(save("file/x", 0), NPYIO_E_IO);
    assert_message_has("folder 'file' is not a folder");
    /* A link at the final name is a name: refused without the flag,
     * replaced (not followed) with it. */
    assert_int_equal(save("link", 0), NPYIO_E_IO);
    assert_message_has("exists, and is not replaced");
    assert_ok(save("link", NPYIO_WRITE_REPLACE | NPYIO_WRITE_NO_SYNC));
    assert_holds("link", text);
    assert_false(there("real/link"));
    assert_int_equal(save("real", NPYIO_WRITE_REPLACE), NPYIO_E_IO);
    assert_message_has("is a directory");
    assert_int_equal(hidden_in("."), 0);
    run("rm -r real link abs file");
}

/* An existing file without NPYIO_WRITE_REPLACE: refused at the open. */
static void test_refuses_existing(void **state)
{
    (void)state;
    put("old.bin", "old");
    assert_int_equal(save("old.bin", 0), NPYIO_E_IO);
    assert_message_has("old.bin: exists, and is not replaced");
    assert_holds("old.bin", "old");
    assert_int_equal(hidden_in("."), 0);
    run("rm old.bin");
}

/* ---- between the open and the commit ---------------------------------------- */

static void make_late_file(void)
{
    put("late/x.bin", "made meanwhile");
}

/* A file made at the name after the open: refused at the commit itself,
 * through an unnamed and a named temporary. */
static void test_refuses_existing_at_commit(void **state)
{
    npyio_options *o = without_unnamed_files();
    int named;

    (void)state;
    for (named = 0; named < 2; named++) {
        source s = {text, sizeof text - 1, 0, 0, make_late_file, -1};

        fail_next_open = named;
        assert_int_equal(save_from(&s, "late/x.bin", 0, o), NPYIO_E_IO);
        assert_int_equal(fail_next_open, 0);
        assert_message_has("late/x.bin: exists, and is not replaced");
        assert_holds("late/x.bin", "made meanwhile");
        assert_int_equal(hidden_in("late"), 0);
        run("rm -r late");
    }
    npyio_options_free(o);
}

/* The folder replaced by a link to another while the file is written: the
 * file lands in the folder opened (now moved), nothing through the link. */
static void plant_link(void)
{
    run("mv sub moved && mkdir elsewhere && ln -s elsewhere sub");
}

static void test_link_planted_during(void **state)
{
    source s = {text, sizeof text - 1, 0, 0, plant_link, -1};

    (void)state;
    run("mkdir sub");
    assert_ok(save_from(&s, "sub/x.bin", NPYIO_WRITE_NO_SYNC, NULL));
    assert_holds("moved/x.bin", text);
    assert_false(there("elsewhere/x.bin"));
    assert_int_equal(save("sub/y.bin", 0), NPYIO_E_IO); /* now a link */
    assert_message_has("folder 'sub' is a symbolic link");
    run("rm -r sub moved elsewhere");
}

/* ---- failures leave the old file ------------------------------------------- */

static void test_failures_keep_the_old_file(void **state)
{
    npyio_options *named = without_unnamed_files();
    npyio_options *broken = with_hook(fail_writes);
    int kind;

    (void)state;
    put("f.bin", "old");
    for (kind = 0; kind < 2; kind++) {
        source s = {text, sizeof text - 1, 0, 9, NULL, -1};

        fail_next_open = kind;
        assert_int_equal(save_from(&s, "f.bin", NPYIO_WRITE_REPLACE, named),
                         NPYIO_E_IO);
        assert_message_has("read");
        assert_holds("f.bin", "old");
        assert_int_equal(hidden_in("."), 0);
    }
    {
        source s = {text, sizeof text - 1, 0, 0, NULL, -1};

        assert_int_equal(save_from(&s, "f.bin", NPYIO_WRITE_REPLACE, broken),
                         NPYIO_E_IO);
        assert_message_has("f.bin: writing the file");
        assert_holds("f.bin", "old");
        assert_int_equal(hidden_in("."), 0);
    }
    npyio_options_free(named);
    npyio_options_free(broken);
    run("rm f.bin");
}

/* A process killed mid-write leaves no temporary through an unnamed one;
 * through a named one (always, in a build without unnamed files:
 * NPYIO_PORTABLE), it leaves that one, which the next save of the name
 * removes. The old file stays either way. */
static void killed_mid_write(int named)
{
    npyio_options *o = without_unnamed_files();
    int fds[2], status = 0;
    char ready = 0;
    pid_t pid;

    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        source s = {text, sizeof text - 1, 0, 0, NULL, fds[1]};

        fail_next_open = named;
        (void)save_from(&s, "k/k.bin", NPYIO_WRITE_REPLACE, o);
        _exit(1);
    }
    close(fds[1]);
    assert_int_equal(read(fds[0], &ready, 1), 1);
    assert_int_equal(kill(pid, SIGKILL), 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    close(fds[0]);
    assert_true(WIFSIGNALED(status));
    assert_holds("k/k.bin", "old");
    assert_int_equal(hidden_in("k"),
                     named || !npyio__platform_capabilities().unnamed_files);
    fail_next_open = 1;
    assert_ok(save_from(&(source){text, sizeof text - 1, 0, 0, NULL, -1},
                        "k/k.bin", NPYIO_WRITE_REPLACE, o));
    assert_holds("k/k.bin", text);
    assert_int_equal(hidden_in("k"), 0);
    npyio_options_free(o);
}

static void test_killed_mid_write(void **state)
{
    (void)state;
    run("mkdir k");
    put("k/k.bin", "old");
    killed_mid_write(0);
    put("k/k.bin", "old");
    killed_mid_write(1);
    run("rm -r k");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_saves_and_replaces),
        cmocka_unit_test(test_refuses_arguments),
        cmocka_unit_test(test_refuses_links_in_folders),
        cmocka_unit_test(test_refuses_existing),
        cmocka_unit_test(test_refuses_existing_at_commit),
        cmocka_unit_test(test_link_planted_during),
        cmocka_unit_test(test_failures_keep_the_old_file),
        cmocka_unit_test(test_killed_mid_write),
    };

    return cmocka_run_group_tests(tests, make_dir, scratch_remove);
}
