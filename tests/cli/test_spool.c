/*
 * test_spool.c - how much of a pipe the npyio tool copies to $TMPDIR
 * before it reads an archive (src/cli/input.c, cli_open_input): at most
 * NPYIO_LIMIT_NPZ_TOTAL_BYTES + NPYIO_LIMIT_NPZ_MEMBERS x 128 KiB + 64
 * KiB, then a message naming the limits; nothing at all of a pipe whose
 * first bytes are neither PK\3\4 nor PK\5\6 (np.load's test); all of it
 * under the default (unbounded) limits. The limits are set low here
 * through the options the command line would have built, so that a few
 * MiB of junk show what 3 GB would do. A writer process counts the bytes
 * the pipe took before the tool let go of it. Runs without Python.
 *
 *   test_spool DATA_DIR
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "check.h"

#define MIB ((uint64_t)1 << 20)

/* What one run saw. */
typedef struct outcome {
    int rc;               /* cli_open_input's */
    size_t members;       /* of the archive opened, if it was */
    uint64_t written;     /* bytes the writer got into the pipe */
    char message[1024];   /* what the tool wrote on stderr */
} outcome;

/* Write head, then `junk` bytes, into fd until done or the reader goes;
 * then the count, as 8 bytes, into report. */
static void writer(int fd, const void *head, size_t head_len,
                   uint64_t junk, int report)
{
    static unsigned char block[1 << 16];
    uint64_t written = 0, left = junk;
    ssize_t n;

    signal(SIGPIPE, SIG_IGN);
    memset(block, 0xA5, sizeof block);
    if (write(fd, head, head_len) == (ssize_t)head_len)
        written = head_len;
    else
        left = 0;
    while (left > 0) {
        n = write(fd, block, left < sizeof block ? (size_t)left
                                                : sizeof block);
        if (n <= 0)
            break;
        written += (uint64_t)n;
        left -= (uint64_t)n;
    }
    if (write(report, &written, sizeof written) != sizeof written)
        _exit(2);
    _exit(0);
}

/* The tool's side, in a process of its own (its stdin FILE must start
 * empty): cli_open_input("-") on the pipe, stderr into err; rc and the
 * member count into report. */
static void reader(int fd, FILE *err, const npyio_options *options,
                   int report)
{
    cli_input in;
    int64_t got[2] = {0, 0};

    dup2(fd, 0);
    close(fd);
    dup2(fileno(err), 2);
    got[0] = cli_open_input("-", options, &in);
    if (got[0] == 0) {
        got[1] = (int64_t)npyio_npz_count(in.npz);
        cli_close_input(&in);
    }
    fflush(stderr);
    if (write(report, got, sizeof got) != sizeof got)
        _exit(2);
    _exit(0);
}

/* cli_open_input("-") with standard input a pipe fed by a writer of head
 * + junk. */
static outcome open_piped(const void *head, size_t head_len, uint64_t junk,
                          const npyio_options *options)
{
    int data[2], wrote[2], opened[2];
    int64_t got[2] = {-1, -1};
    FILE *err = tmpfile();
    pid_t w, r;
    outcome o;
    size_t n;

    memset(&o, 0, sizeof o);
    fflush(stdout);
    if (pipe(data) != 0 || pipe(wrote) != 0 || pipe(opened) != 0 ||
        err == NULL) {
        perror("setting up");
        exit(1);
    }
    w = fork();
    if (w == 0) {
        close(data[0]);
        writer(data[1], head, head_len, junk, wrote[1]);
    }
    r = fork();
    if (r == 0) {
        close(data[1]);
        reader(data[0], err, options, opened[1]);
    }
    close(data[0]);
    close(data[1]);
    close(wrote[1]);
    close(opened[1]);
    if (read(opened[0], got, sizeof got) != sizeof got)
        got[0] = -1;
    if (read(wrote[0], &o.written, sizeof o.written) != sizeof o.written)
        o.written = UINT64_MAX;
    waitpid(w, NULL, 0);
    waitpid(r, NULL, 0);
    close(wrote[0]);
    close(opened[0]);
    o.rc = (int)got[0];
    o.members = (size_t)got[1];
    rewind(err);
    n = fread(o.message, 1, sizeof o.message - 1, err);
    o.message[n] = '\0';
    fclose(err);
    return o;
}

static npyio_options *limits(int64_t total, int64_t members)
{
    npyio_options *o = NULL;

    if (npyio_options_new(&o) != NPYIO_OK ||
        npyio_options_set_limit(o, NPYIO_LIMIT_NPZ_TOTAL_BYTES, total) !=
            NPYIO_OK ||
        npyio_options_set_limit(o, NPYIO_LIMIT_NPZ_MEMBERS, members) !=
            NPYIO_OK) {
        fputs("out of memory\n", stderr);
        exit(1);
    }
    return o;
}

static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *p = malloc(1 << 20);

    if (f == NULL || p == NULL) {
        perror(path);
        exit(1);
    }
    *len = fread(p, 1, 1 << 20, f);
    fclose(f);
    return p;
}

int main(int argc, char **argv)
{
    static const unsigned char local[4] = {'P', 'K', 3, 4};
    static const unsigned char other[4] = {1, 2, 3, 4};
    /* 1 MiB in all, 32 members (savez.npz has 26): 1 MiB + 4 MiB +
     * 64 KiB. */
    const uint64_t bound = MIB + 32 * (128 << 10) + (64 << 10);
    /* What a pipe and the tool's buffers may hold beyond what it took:
     * the pipe (1 MiB once the tool widened it) and one read. */
    const uint64_t slack = 2 * MIB + (64 << 10);
    npyio_options *low = limits((int64_t)MIB, 32);
    unsigned char *archive;
    char path[4096];
    size_t len;
    outcome o;

    if (argc != 2) {
        fputs("usage: test_spool DATA_DIR\n", stderr);
        return 2;
    }
    /* 16 MiB of junk after a local header's signature: refused past the
     * bound, the limits named, the rest never read. */
    o = open_piped(local, sizeof local, 16 * MIB, low);
    CHECK(o.rc == EXIT_INVALID, "junk after PK\\3\\4: rc %d", o.rc);
    CHECK(o.written <= bound + slack,
          "junk after PK\\3\\4: the pipe took %" PRIu64 " bytes, over the "
          "%" PRIu64 "-byte bound", o.written, bound);
    CHECK(strstr(o.message, "NPYIO_LIMIT_NPZ_TOTAL_BYTES") != NULL &&
              strstr(o.message, "NPYIO_LIMIT_NPZ_MEMBERS") != NULL &&
              strncmp(o.message, "npyio: -: ", 10) == 0,
          "junk after PK\\3\\4: message %s", o.message);
    {
        char want[64];

        snprintf(want, sizeof want, "longer than %" PRIu64 " bytes", bound);
        CHECK(strstr(o.message, want) != NULL, "the bound in %s", o.message);
    }
    /* An end record's signature is a ZIP file's start too. */
    o = open_piped("PK\005\006", 4, 16 * MIB, low);
    CHECK(o.rc == EXIT_INVALID && o.written <= bound + slack &&
              strstr(o.message, "NPYIO_LIMIT_NPZ_TOTAL_BYTES") != NULL,
          "junk after PK\\5\\6: rc %d, %" PRIu64 " bytes taken, %s", o.rc,
          o.written, o.message);
    /* Neither a ZIP nor an .npy start: refused at once, nothing copied. */
    o = open_piped(other, sizeof other, 16 * MIB, NULL);
    CHECK(o.rc == EXIT_INVALID && o.written <= slack &&
              strstr(o.message, "not an .npy file") != NULL,
          "junk that is no ZIP: rc %d, %" PRIu64 " bytes taken, %s", o.rc,
          o.written, o.message);
    /* Without limits there is no bound: all of it is copied, then found
     * to be no archive. */
    o = open_piped(local, sizeof local, 6 * MIB, NULL);
    CHECK(o.rc == EXIT_INVALID && o.written == 6 * MIB + 4 &&
              strstr(o.message, "LIMIT") == NULL,
          "junk under the default limits: rc %d, %" PRIu64 " bytes taken, "
          "%s", o.rc, o.written, o.message);
    /* A real archive within the bound still opens from a pipe. */
    snprintf(path, sizeof path, "%s/npz/savez.npz", argv[1]);
    archive = read_file(path, &len);
    o = open_piped(archive, len, 0, low);
    CHECK(o.rc == 0 && o.members > 0 && o.written == len,
          "savez.npz from a pipe under low limits: rc %d, %zu members, %s",
          o.rc, o.members, o.message);
    /* Exactly at the bound is allowed; one byte more is not. Only the
     * limit decides, so a limit of 0 members and 0 bytes gives 64 KiB. */
    {
        npyio_options *none = limits(0, 0);

        o = open_piped(local, sizeof local, (64 << 10) - 4, none);
        CHECK(o.rc == EXIT_INVALID && strstr(o.message, "LIMIT") == NULL,
              "64 KiB at a 64 KiB bound: %s", o.message);
        o = open_piped(local, sizeof local, (64 << 10) - 3, none);
        CHECK(o.rc == EXIT_INVALID &&
                  strstr(o.message, "longer than 65536 bytes") != NULL,
              "64 KiB + 1 at a 64 KiB bound: %s", o.message);
        npyio_options_free(none);
    }
    free(archive);
    npyio_options_free(low);
    return check_summary();
}
