/*
 * kill_writer.h - a writer process killed in the middle of its data (the
 * crash tests of test_io and test_replace): a child opens a writer on a
 * path, writes part of the data and tells the parent so through a pipe;
 * the parent kills it with SIGKILL there, reaps it and checks that the
 * signal is what ended it. What the killed writer left behind is the
 * caller's to check. Include after testutil.h, with _POSIX_C_SOURCE
 * 200809L defined.
 */
#ifndef NPYIO_KILL_WRITER_H
#define NPYIO_KILL_WRITER_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* What the child writes before it is killed. */
typedef struct kill_writer_job {
    const char *path;
    const npyio_header *header;
    const npyio_options *options; /* for npyio_writer_create_path */
    const void *data;
    size_t len;                   /* the bytes written before the kill */
    void (*before)(void);         /* run first in the child; may be NULL */
} kill_writer_job;

/* The child's part: no cmocka in here, it reports through the pipe (a
 * byte once it is mid-write, or exit status 1 if it never got there). */
static inline _Noreturn void kill_writer_child(const kill_writer_job *job, int out)
{
    npyio_writer *w = NULL;

    if (job->before != NULL)
        job->before();
    if (npyio_writer_create_path(job->path, job->header, 0, job->options,
                                 &w) != NPYIO_OK ||
        npyio_writer_write(w, job->data, job->len) != NPYIO_OK ||
        write(out, "w", 1) != 1)
        _exit(1);
    for (;;)
        pause();
}

/* Run job in a child killed mid-write; its pid (names it made hold it). */
static inline pid_t kill_writer_mid_write(const kill_writer_job *job)
{
    char ready = 0;
    int fds[2], status = 0;
    pid_t pid;

    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        kill_writer_child(job, fds[1]);
    }
    close(fds[1]);
    assert_int_equal(read(fds[0], &ready, 1), 1); /* it is mid-write */
    assert_int_equal(kill(pid, SIGKILL), 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    close(fds[0]);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGKILL);
    return pid;
}

#endif /* NPYIO_KILL_WRITER_H */
