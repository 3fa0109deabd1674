/*
 * input.c - opening the tool's input files, and its progress bar.
 *
 * Every input is read through a "spliced" stream: a few bytes held in
 * memory followed by the rest of a FILE* from some offset on. It lets the
 * tool look at the first bytes of a pipe (to tell an .npz archive from an
 * .npy file by content) and give them back, and lets `convert` put a header
 * of its own in front of another file's data (see convert.c).
 */
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "cli.h"
#include "os.h"
#include "splice.h"
#include "text.h"

struct cli_splice {
    unsigned char *prefix; /* held bytes, owned */
    size_t prefix_len;
    FILE *file;            /* borrowed */
    int64_t base;          /* file offset of the byte after the prefix */
    int64_t pos;           /* position in the spliced stream */
    int seekable;
};

static int splice_pread(void *user, void *buf, size_t cap, int64_t offset,
                        size_t *got);

/* Where the stream is: a seekable file is read with pread at the stream's
 * position (no stdio buffer in between, whose refills would cut a large
 * read in two), a pipe through stdio. */
static int splice_read(void *user, void *buf, size_t cap, size_t *got)
{
    cli_splice *s = user;

    if (s->seekable) {
        int rc = splice_pread(s, buf, cap, s->pos, got);

        s->pos += (int64_t)*got;
        return rc;
    }

    if ((uint64_t)s->pos < s->prefix_len) {
        size_t n = s->prefix_len - (size_t)s->pos;

        if (n > cap)
            n = cap;
        memcpy(buf, s->prefix + s->pos, n);
        s->pos += (int64_t)n;
        *got = n;
        return 0;
    }
    *got = fread(buf, 1, cap, s->file);
    s->pos += (int64_t)*got;
    return *got == 0 && ferror(s->file) ? -1 : 0;
}

static int splice_seek(void *user, int64_t offset, int whence, int64_t *pos)
{
    cli_splice *s = user;
    int64_t target;

    if (whence == NPYIO_SEEK_SET) {
        target = offset;
    } else if (whence == NPYIO_SEEK_CUR) {
        target = s->pos + offset;
    } else {
        off_t end = lseek(fileno(s->file), 0, SEEK_END);

        if (end < 0)
            return -1;
        target = (int64_t)s->prefix_len + ((int64_t)end - s->base) + offset;
    }
    if (target < 0)
        return -1;
    /* Only seekable streams seek, and they read at s->pos (splice_read):
     * the file's own offset is not used. */
    s->pos = target;
    *pos = target;
    return 0;
}

/* A read at an offset, without moving the stream: from the prefix, or a
 * pread of the file's descriptor (safe on several threads at once, so
 * that --threads reads a file in parts). */
static int splice_pread(void *user, void *buf, size_t cap, int64_t offset,
                        size_t *got)
{
    cli_splice *s = user;
    *got = 0;
    if (offset < 0)
        return -1;
    if ((uint64_t)offset < s->prefix_len) {
        size_t k = s->prefix_len - (size_t)offset;

        *got = k < cap ? k : cap;
        memcpy(buf, s->prefix + offset, *got);
        return 0;
    }
    return cli_os_pread(fileno(s->file), buf, cap,
                        s->base + (offset - (int64_t)s->prefix_len), got);
}

npyio_status cli_splice_open(const void *prefix, size_t prefix_len,
                             FILE *file, int64_t base,
                             const npyio_options *options, cli_splice **sp,
                             npyio_stream **out)
{
    npyio_stream_ops ops = {.size = sizeof ops, .read = splice_read};
    cli_splice *s = calloc(1, sizeof *s);
    npyio_status st;

    *out = NULL;
    *sp = NULL;
    if (s == NULL || (s->prefix = malloc(prefix_len ? prefix_len : 1)) == NULL) {
        free(s);
        return NPYIO_E_NOMEM;
    }
    if (prefix_len > 0)
        memcpy(s->prefix, prefix, prefix_len);
    s->prefix_len = prefix_len;
    s->file = file;
    s->base = base;
    /* Seekable only if the file is (a pipe is not). */
    if (cli_os_seekable(fileno(file)) &&
        fseeko(file, (off_t)base, SEEK_SET) == 0) {
        ops.seek = splice_seek;
        ops.pread = splice_pread;
        s->seekable = 1;
    }
    st = npyio_stream_open_ops(&ops, s, options, out);
    if (st != NPYIO_OK) {
        cli_splice_free(s);
        return st;
    }
    *sp = s;
    return NPYIO_OK;
}

int cli_splice_seekable(const cli_splice *s)
{
    return s != NULL && s->seekable;
}

void cli_splice_free(cli_splice *s)
{
    if (s != NULL)
        free(s->prefix);
    free(s);
}

/* ---- inputs ------------------------------------------------------------- */

/* .npz archives start like any ZIP file (an empty one with its end record). */
static int looks_like_zip(const unsigned char *magic, size_t n)
{
    return n >= 4 && magic[0] == 'P' && magic[1] == 'K' &&
           ((magic[2] == 3 && magic[3] == 4) || (magic[2] == 5 && magic[3] == 6));
}

int cli_layouts_differ(const npyio_header *h)
{
    int i, longer = 0;

    for (i = 0; i < npyio_header_ndim(h); i++)
        longer += npyio_header_shape(h)[i] > 1;
    return longer >= 2;
}

void *cli_buffer(size_t size)
{
    /* Below two huge pages, no alignment is worth asking for. */
    if (size < (size_t)4 << 20)
        return malloc(size ? size : 1);
    return cli_os_big_buffer(size);
}

size_t cli_chunk_capacity(const npyio_header *h, size_t at_least)
{
    uint64_t all = (uint64_t)npyio_header_nbytes(h);
    uint64_t item = npyio_dtype_itemsize(npyio_header_dtype(h));
    uint64_t elements, per, chunks;

    if (all <= at_least)
        return all > 0 ? (size_t)all : 1; /* the whole array at once */
    if (item == 0)
        return at_least;
    if (item > SIZE_MAX)
        return SIZE_MAX; /* cannot be allocated: reported as out of memory */
    /* Whole elements, as few chunks as at_least allows, the elements
     * shared out evenly among them: no more memory than the chunks need
     * (a reordered chunk costs about a pass over the file whatever its
     * size). */
    elements = all / item;
    per = at_least / item > 0 ? at_least / item : 1;
    chunks = (elements + per - 1) / per;
    per = (elements + chunks - 1) / chunks;
    return (size_t)(per * item);
}

/* ---- names and messages -------------------------------------------------- */

void cli_put_name(FILE *to, const char *name)
{
    sbuf b = {0};

    text_escape(&b, name, strlen(name), 1);
    /* An empty name leaves the buffer unallocated (NULL, not ""). */
    fputs(b.nomem ? "(a name too long to escape)" : b.p != NULL ? b.p : "",
          to);
    free(b.p);
}

/* "npyio: NAME: what\n", what escaped too (it may quote user text and
 * library messages, which may hold paths), but its backslashes kept. */
static void put_error(const char *name, const char *what)
{
    sbuf b = {0};

    sb_str(&b, "npyio: ");
    if (name != NULL) {
        text_escape(&b, name, strlen(name), 1);
        sb_str(&b, ": ");
    }
    text_escape(&b, what, strlen(what), 0);
    sb_chr(&b, '\n');
    if (b.nomem)
        fputs("npyio: out of memory\n", stderr);
    else
        fputs(b.p, stderr);
    free(b.p);
}

int cli_error(const char *name, const char *format, ...)
{
    va_list ap;
    sbuf b = {0};

    va_start(ap, format);
    sb_vfmt(&b, format, ap);
    va_end(ap);
    put_error(name, b.nomem ? "out of memory" : b.p);
    free(b.p);
    return EXIT_INVALID;
}

/* Length of a leading "npyio_<function>: " in a library message, or 0. */
static size_t function_name_length(const char *message)
{
    size_t n = strlen("npyio_");

    if (strncmp(message, "npyio_", n) != 0)
        return 0;
    while ((message[n] >= 'a' && message[n] <= 'z') || message[n] == '_')
        n++;
    return message[n] == ':' && message[n + 1] == ' ' ? n + 2 : 0;
}

int cli_fail(const char *name)
{
    return cli_fail_with(name, npyio_last_error());
}

int cli_fail_reading(cli_input *in)
{
    char first[1024];
    npyio_status st;

    if (in->npz == NULL)
        return cli_fail(in->name);
    /* A member's bytes that failed (a CRC at the end, zlib's error): the
     * library's check of the whole member says it once, "member 'b.npy'
     * is damaged (...)", where the read's message wraps it in where the
     * reader was. */
    snprintf(first, sizeof first, "%s", npyio_last_error());
    st = npyio_npz_verify(in->npz, in->member);
    if (st == NPYIO_E_CHECKSUM || st == NPYIO_E_FORMAT ||
        st == NPYIO_E_TRUNCATED)
        return cli_fail(in->name);
    return cli_fail_with(in->name, first);
}

const char *cli_library_message(void)
{
    const char *message = npyio_last_error();

    return message + function_name_length(message);
}

int cli_fail_with(const char *name, const char *message)
{
    size_t n = strlen(name);

    /* The tool's user called no library function: drop its name. */
    message += function_name_length(message);
    /* Messages about paths may name the file already. */
    if (strncmp(message, name, n) == 0 && message[n] == ':' &&
        message[n + 1] == ' ')
        put_error(name, message + n + 2);
    else
        put_error(name, message);
    return EXIT_INVALID;
}

/* .npy files start with this. */
static int looks_like_npy(const unsigned char *magic, size_t n)
{
    return n >= 4 && magic[0] == 0x93 && memcmp(magic + 1, "NUM", 3) == 0;
}

#define COPY_TOO_LONG 1
static int copy_rest(FILE *from, FILE *to, uint64_t max);

/* A regular file read from its start: an archive there is read in place. */
static int reads_in_place(const cli_input *in)
{
    struct stat info;

    return fstat(fileno(in->file), &info) == 0 && S_ISREG(info.st_mode) &&
           in->start == 0;
}

/* a + b, or UINT64_MAX where that overflows. */
static uint64_t add_saturating(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The longest archive the limits let through, as copied from a pipe:
 * what the members may declare in all, 128 KiB a member for its
 * headers, name, ZIP64 extras, descriptor and what deflate adds to
 * incompressible data, and 64 KiB for the end records and the comment.
 * The defaults (no limits) give UINT64_MAX: no bound. A copy is spent
 * disk, so it is bounded before the library sees a byte of it. */
#define SPOOL_PER_MEMBER ((uint64_t)128 << 10)
#define SPOOL_END ((uint64_t)64 << 10)
static uint64_t spool_limit(const npyio_options *options)
{
    int64_t total = INT64_MAX, members = INT64_MAX;

    npyio_options_get_limit(options, NPYIO_LIMIT_NPZ_TOTAL_BYTES, &total);
    npyio_options_get_limit(options, NPYIO_LIMIT_NPZ_MEMBERS, &members);
    if ((uint64_t)members > UINT64_MAX / SPOOL_PER_MEMBER)
        return UINT64_MAX;
    return add_saturating(add_saturating((uint64_t)total,
                                         (uint64_t)members *
                                             SPOOL_PER_MEMBER),
                          SPOOL_END);
}

/* Copy the archive in in->file, whose first n bytes (magic) were read,
 * to an unlinked temporary file, which becomes in->file. Returns 0, or
 * -1 after a message. */
static int spool_archive(cli_input *in, const unsigned char *magic, size_t n)
{
    uint64_t max = spool_limit(in->options);
    FILE *tmp = cli_os_temporary_file();
    int rc = -1, e;

    if (tmp != NULL && fwrite(magic, 1, n, tmp) == n)
        rc = copy_rest(in->file, tmp, max > n ? max - n : 0);
    if (rc == 0 && fflush(tmp) != 0)
        rc = -1;
    e = errno;
    if (rc == COPY_TOO_LONG)
        cli_error(in->name, "the archive is longer than %" PRIu64 " bytes, "
                            "over the most its limits allow "
                            "(NPYIO_LIMIT_NPZ_TOTAL_BYTES + "
                            "NPYIO_LIMIT_NPZ_MEMBERS x 128 KiB + 64 KiB): "
                            "not copied further",
                  max);
    else if (rc != 0)
        cli_error(in->name, "copying the archive to a temporary file: %s",
                  strerror(e));
    if (rc != 0) {
        if (tmp != NULL)
            fclose(tmp);
        return -1;
    }
    if (in->file != stdin)
        fclose(in->file);
    in->file = tmp;
    in->start = 0;
    return 0;
}

/* The archive in in->file (whose first n bytes, magic, were read). A
 * regular file read from its start is read in place; anything else (a
 * pipe, a FIFO, standard input opened at some offset) is copied to a
 * temporary file first (spool_archive): the directory is at the end.
 * Returns 1 if the library failed, 0 on success, or -1 after a message
 * of our own. */
static int open_archive(cli_input *in, const unsigned char *magic, size_t n)
{
    int fd;

    if (!reads_in_place(in)) {
        if (spool_archive(in, magic, n) != 0)
            return -1;
    }
    fd = fileno(in->file);
    /* The stream reads with pread() from offset 0: the FILE's buffer and
     * position no longer matter. */
    if (lseek(fd, 0, SEEK_SET) != 0) {
        cli_error(in->name, "seeking: %s", strerror(errno));
        return -1;
    }
    return npyio_stream_open_fd(fd, in->options, &in->archive_stream) ==
                   NPYIO_OK &&
                   npyio_npz_open_stream(in->archive_stream, in->options,
                                         &in->npz) == NPYIO_OK
               ? 0
               : 1;
}

/* Close what open_archive opened (a failed attempt included). */
static void close_archive(cli_input *in)
{
    npyio_stream_close(in->member_raw);
    npyio_npz_close(in->npz);
    npyio_stream_close(in->archive_stream);
    in->member_raw = NULL;
    in->npz = NULL;
    in->archive_stream = NULL;
}

/* The header of an .npy file the reader refused as cut short (found so
 * at open only where the file seeks): parsed again from the file's first
 * bytes, as many as npyio_header_parse asks for. NULL if that fails too
 * (the file ends inside its header). */
static npyio_header *header_of_cut_file(cli_input *in)
{
    size_t need = 16, got, consumed = 0;
    unsigned char *bytes = NULL, *more;
    npyio_header *h = NULL;

    while ((more = realloc(bytes, need)) != NULL) {
        bytes = more;
        if (fseeko(in->file, (off_t)in->start, SEEK_SET) != 0)
            break;
        got = fread(bytes, 1, need, in->file);
        if (npyio_header_parse(bytes, got, in->options, &h, &consumed) !=
                NPYIO_E_TRUNCATED ||
            got < need || consumed <= need)
            break;
        need = consumed; /* the whole header, then */
    }
    free(bytes);
    return h;
}

/* An .npy file the reader refused (status st): the message, or, where
 * the caller takes them (cut set) and the data is shorter than the header
 * says, the header in *cut and the message in *why, printed by nobody
 * yet. EXIT_INVALID, in closed. */
static int refuse_npy(cli_input *in, npyio_status st, npyio_header **cut,
                      char **why)
{
    if (cut != NULL && st == NPYIO_E_TRUNCATED &&
        (*why = strdup(npyio_last_error())) != NULL &&
        (*cut = header_of_cut_file(in)) == NULL) {
        free(*why);
        *why = NULL;
    }
    if (cut == NULL || *cut == NULL)
        cli_fail(in->name);
    cli_close_input(in);
    return EXIT_INVALID;
}

int cli_open_input(const char *name, const npyio_options *options,
                   cli_input *in)
{
    return cli_open_input_cut(name, options, in, NULL, NULL);
}

int cli_open_input_cut(const char *name, const npyio_options *options,
                       cli_input *in, npyio_header **cut, char **why)
{
    npyio_status st;
    unsigned char magic[4];
    struct stat info;
    off_t start;
    size_t n;
    int rc;

    memset(in, 0, sizeof *in);
    in->name = name;
    in->options = options;
    in->file = strcmp(name, "-") == 0 ? stdin : cli_os_fopen(name, "rb");
    if (in->file == NULL) {
        return cli_error(name, "%s", strerror(errno));
    }
    if (fstat(fileno(in->file), &info) == 0 && S_ISDIR(info.st_mode)) {
        cli_close_input(in);
        return cli_error(name, "is a directory");
    }
    /* stdin may be a file opened at some offset: the array starts there. */
    start = cli_os_seekable(fileno(in->file)) ? ftello(in->file) : 0;
    if (start < 0)
        start = 0;
    in->start = (int64_t)start;
    n = fread(magic, 1, sizeof magic, in->file);
    /* A file that is neither: perhaps an archive with bytes in front (a
     * self-extractor's stub), which zipfile opens too. If not, it is
     * reported as what it is not: an .npy file. Only a file read in
     * place is tried: a pipe that starts neither way is never copied
     * (np.load, too, takes only what starts as a ZIP file for one). */
    if (!looks_like_zip(magic, n) && !looks_like_npy(magic, n) &&
        reads_in_place(in)) {
        if (open_archive(in, magic, n) == 0)
            return 0;
        close_archive(in);
    }
    if (looks_like_zip(magic, n)) {
        rc = open_archive(in, magic, n);
        if (rc != 0) {
            if (rc > 0)
                cli_fail(name);
            cli_close_input(in);
            return EXIT_INVALID;
        }
        return 0;
    }
    st = cli_splice_open(magic, n, in->file, in->start + (int64_t)n, options,
                         &in->splice, &in->stream);
    if (st == NPYIO_OK)
        st = npyio_reader_open_stream(in->stream, options, &in->reader);
    return st == NPYIO_OK ? 0 : refuse_npy(in, st, cut, why);
}

const char *cli_member_label(const cli_input *in, size_t index)
{
    static char label[320];
    const char *name = npyio_npz_name(in->npz, index);
    sbuf b = {0};

    text_escape(&b, name != NULL ? name : "?", name != NULL ? strlen(name) : 1,
                1);
    snprintf(label, sizeof label, "member '%s'",
             b.nomem ? "(a name too long to show)" : b.p != NULL ? b.p : "");
    free(b.p);
    return label;
}

int cli_open_member(cli_input *in, size_t index)
{
    npyio_reader_close(in->reader);
    npyio_stream_close(in->member_raw);
    in->reader = NULL;
    in->member_raw = NULL;
    in->member = index;
    if (npyio_reader_open_member(in->npz, index, &in->reader) == NPYIO_OK)
        return 0;
    return cli_fail(in->name); /* the library's message names the member */
}

/* A member's bytes from the start of its data: read past its header. */
static int member_seek_data(cli_input *in, int64_t at)
{
    unsigned char skip[4096];
    size_t got = 0;

    npyio_stream_close(in->member_raw);
    in->member_raw = NULL;
    if (npyio_stream_open_member(in->npz, in->member, &in->member_raw) !=
        NPYIO_OK)
        return cli_fail(in->name);
    for (; at > 0; at -= (int64_t)got) {
        size_t want = at < (int64_t)sizeof skip ? (size_t)at : sizeof skip;

        if (npyio_stream_read(in->member_raw, skip, want, &got) != NPYIO_OK)
            return cli_fail(in->name);
        if (got == 0)
            return cli_error(in->name, "%s ends inside its header",
                             cli_member_label(in, in->member));
    }
    return 0;
}

int cli_input_seek_data(cli_input *in)
{
    int64_t at = npyio_header_data_offset(npyio_reader_header(in->reader)),
            pos;

    if (in->npz != NULL)
        return member_seek_data(in, at);

    if (cli_splice_seekable(in->splice)) {
        if (splice_seek(in->splice, at, NPYIO_SEEK_SET, &pos) != 0)
            return cli_error(in->name, "seeking to the data: %s",
                             strerror(errno));
        return 0;
    }
    /* A pipe: the reader has taken the header and nothing more. */
    if (in->splice->pos != at)
        return cli_error(in->name, "the data was read already");
    return 0;
}

int cli_input_read_raw(cli_input *in, void *buf, size_t cap, size_t *got)
{
    if (in->npz != NULL)
        return npyio_stream_read(in->member_raw, buf, cap, got) == NPYIO_OK
                   ? 0
                   : cli_fail(in->name); /* names the member */
    if (splice_read(in->splice, buf, cap, got) != 0)
        return cli_error(in->name, "reading the data: %s", strerror(errno));
    return 0;
}

int cli_input_copy_data(cli_input *in, int out)
{
    const npyio_header *h = npyio_reader_header(in->reader);
    int64_t at = in->start + npyio_header_data_offset(h);
    uint64_t total = (uint64_t)npyio_header_nbytes(h), done = 0;
    struct stat src, dst;
    int fd = in->file != NULL ? fileno(in->file) : -1, rc;

    /* A member's CRC is checked only when the reader reads it. */
    if (in->npz != NULL || fd < 0 || fstat(fd, &src) != 0 || !S_ISREG(src.st_mode) ||
        fstat(out, &dst) != 0 || !S_ISREG(dst.st_mode))
        return CLI_COPY_ELSEWHERE;
    rc = cli_os_copy_range(fd, at, out, total, &done);
    if (rc == CLI_OS_ELSEWHERE)
        return CLI_COPY_ELSEWHERE;
    if (rc != 0)
        return cli_error(in->name, "copying the data: %s", strerror(errno));
    if (done < total)
        return cli_error(in->name, "the file ended %" PRIu64 " bytes "
                         "into its %" PRIu64 "-byte data section",
                         done, total);
    return 0;
}

/* The header again, as bytes (np.save's form of it: equivalent). */
static int emit_header(const npyio_header *h, FILE *to)
{
    size_t len = 0;
    char *bytes;
    int rc = -1;

    if (npyio_header_emit(h, 0, NULL, 0, &len) != NPYIO_E_BUFFER_TOO_SMALL)
        return -1;
    bytes = malloc(len);
    if (bytes != NULL && npyio_header_emit(h, 0, bytes, len,
                                           &len) == NPYIO_OK &&
        fwrite(bytes, 1, len, to) == len)
        rc = 0;
    free(bytes);
    return rc;
}

/* The rest of from, to to, through a bounded buffer: 0, -1 with errno,
 * or COPY_TOO_LONG if from holds more than max bytes (max are copied). */
static int copy_rest(FILE *from, FILE *to, uint64_t max)
{
    enum { STEP = 1 << 20 };
    char *buf = malloc(STEP);
    size_t n;
    int rc = 0;

    if (buf == NULL)
        return -1;
    cli_os_widen_pipe(fileno(from)); /* a pipe read in 1 MiB steps */
    /* One byte past max is asked for: it tells a longer input. */
    while (rc == 0 &&
           (n = fread(buf, 1, max < STEP ? (size_t)max + 1 : STEP, from)) > 0) {
        if (n > max)
            rc = COPY_TOO_LONG;
        else if (fwrite(buf, 1, n, to) != n)
            rc = -1;
        else
            max -= n;
    }
    if (rc == 0 && ferror(from))
        rc = -1;
    free(buf);
    return rc;
}

npyio_options *cli_options_for_own_header(const npyio_options *user,
                                          int64_t len)
{
    npyio_options *o = NULL;
    npyio_limit which;
    int64_t v = 0;

    if (npyio_options_new(&o) != NPYIO_OK)
        return NULL;
    /* Every limit this library knows (an unknown one ends the walk), a
     * limit of 0 included. */
    for (which = NPYIO_LIMIT_HEADER_SIZE;
         npyio_options_get_limit(user, which, &v) == NPYIO_OK; which++) {
        if (which == NPYIO_LIMIT_HEADER_SIZE && v < len)
            v = len;
        if (npyio_options_set_limit(o, which, v) != NPYIO_OK) {
            npyio_options_free(o);
            return NULL;
        }
    }
    return o;
}

int cli_input_make_seekable(cli_input *in)
{
    const npyio_options *options;
    long header_len = 0;
    FILE *tmp;

    if (in->npz != NULL || cli_splice_seekable(in->splice))
        return 0; /* members can seek */
    tmp = cli_os_temporary_file();
    if (tmp == NULL || emit_header(npyio_reader_header(in->reader), tmp) != 0 ||
        (header_len = ftell(tmp)) < 0 ||
        copy_rest(in->file, tmp, UINT64_MAX) != 0 ||
        fflush(tmp) != 0) {
        int e = errno;

        if (tmp != NULL)
            fclose(tmp);
        return cli_error(in->name, "copying the data to a temporary file: %s",
                         strerror(e));
    }
    npyio_reader_close(in->reader);
    npyio_stream_close(in->stream);
    cli_splice_free(in->splice);
    if (in->file != stdin)
        fclose(in->file);
    in->reader = NULL;
    in->stream = NULL;
    in->splice = NULL;
    in->file = tmp;
    in->start = 0;
    npyio_options_free(in->own_options);
    in->own_options = cli_options_for_own_header(in->options, header_len);
    if (in->own_options == NULL)
        return cli_error(in->name, "out of memory");
    options = in->own_options;
    if (cli_splice_open(NULL, 0, tmp, 0, options, &in->splice, &in->stream) !=
            NPYIO_OK ||
        npyio_reader_open_stream(in->stream, options, &in->reader) != NPYIO_OK)
        return cli_fail(in->name);
    return 0;
}

void cli_close_input(cli_input *in)
{
    npyio_reader_close(in->reader);
    in->reader = NULL;
    close_archive(in);
    npyio_stream_close(in->stream);
    cli_splice_free(in->splice);
    if (in->file != NULL && in->file != stdin)
        fclose(in->file);
    npyio_options_free(in->own_options);
    memset(in, 0, sizeof *in);
}

/* ---- progress ------------------------------------------------------------ */

#define BAR_WIDTH 40

void cli_progress_start(cli_progress *p, const char *label, uint64_t total)
{
    p->label = label;
    p->total = total;
    p->shown = -1;
    p->active = isatty(STDERR_FILENO) && total > 0;
    cli_progress_update(p, 0);
}

void cli_progress_update(cli_progress *p, uint64_t done)
{
    int percent, filled;

    if (!p->active)
        return;
    percent = (int)(done >= p->total ? 100 : done * 100 / p->total);
    if (percent == p->shown)
        return; /* redraw only when the figure changes */
    p->shown = percent;
    filled = percent * BAR_WIDTH / 100;
    fprintf(stderr, "\r%s [%.*s%*s] %3d%%", p->label, filled,
            "========================================", BAR_WIDTH - filled,
            "", percent);
    fflush(stderr);
}

void cli_progress_end(cli_progress *p)
{
    if (p->active)
        fputc('\n', stderr);
    p->active = 0;
}

void cli_progress_attach(cli_input *in, cli_progress *p, const char *label,
                         uint64_t total)
{
    if (total < CLI_PROGRESS_MIN)
        return;
    cli_progress_start(p, label, total);
    in->progress = p;
    in->progress_done = 0;
}

void cli_progress_detach(cli_input *in)
{
    if (in->progress != NULL)
        cli_progress_end(in->progress);
    in->progress = NULL;
}
