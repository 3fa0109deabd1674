/*
 * archive.c - the reading commands on .npz archives: info (a block or a
 * JSON object per member), validate (every member), and choosing the
 * member print and dump work on. Built on the public API only.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "text.h"

static int64_t stat_of(const cli_input *in, size_t i, npyio_npz_field field)
{
    int64_t v = -1;

    npyio_npz_stat(in->npz, i, field, &v);
    return v;
}

/* The compression method's name: "stored" and "deflate", else the name
 * Python's zipfile gives it (zipfile.compressor_names), else "method N". */
static const char *method_name(int64_t method, char buf[32])
{
    switch (method) {
    case 0: return "stored";
    case 1: return "shrink";
    case 2: case 3: case 4: case 5: return "reduce";
    case 6: case 10: return "implode";
    case 7: return "tokenize";
    case 8: return "deflate";
    case 9: return "deflate64";
    case 12: return "bzip2";
    case 14: return "lzma";
    case 18: return "terse";
    case 19: return "lz77";
    case 97: return "wavpack";
    case 98: return "ppmd";
    default:
        snprintf(buf, 32, "method %" PRId64, method);
        return buf;
    }
}

/* Why npyio cannot read a member (NPYIO_NPZ_READABLE is 0). */
static const char *unreadable_reason(const cli_input *in, size_t i,
                                     char buf[96])
{
    int64_t flags = stat_of(in, i, NPYIO_NPZ_FLAGS);
    char name[32];

    if (flags & 0x41)
        return "it is encrypted, which npyio does not decrypt";
    if (flags & 0x20)
        return "it is compressed patched data, which npyio does not read";
    snprintf(buf, 96, "its compression is %s, which npyio cannot "
                      "decompress (only stored and deflate)",
             method_name(stat_of(in, i, NPYIO_NPZ_METHOD), name));
    return buf;
}

/* An .npy member's data must be as long as its header says (object
 * arrays excepted: a pickle has no declared length). 0, or 1 with the
 * problem in why. */
static int member_too_short(cli_input *in, size_t i, char *why, size_t cap)
{
    const npyio_header *h = npyio_reader_header(in->reader);
    uint64_t need = (uint64_t)npyio_header_data_offset(h) +
                    (uint64_t)npyio_header_nbytes(h),
             size = (uint64_t)stat_of(in, i, NPYIO_NPZ_SIZE);

    if (npyio_dtype_contains_objects(npyio_header_dtype(h)) || size >= need)
        return 0;
    snprintf(why, cap, "%s is %" PRIu64 " bytes; its .npy header describes %"
             PRIu64, cli_member_label(in, i), size, need);
    return 1;
}

static int check_member_size(cli_input *in, size_t i)
{
    char why[512];

    return member_too_short(in, i, why, sizeof why)
               ? cli_error(in->name, "%s", why)
               : 0;
}

/* ---- info ------------------------------------------------------------------------ */

/* What info says of one member. */
typedef struct listing {
    int64_t array;  /* 1: an .npy file; 0: not one; -1: npyio cannot tell */
    int failed;     /* why is an error: the member is bad (exit 1) */
    char why[1024]; /* the error, or why npyio cannot tell; "" if neither */
} listing;

static void listing_fail(listing *l, const char *why)
{
    l->failed = 1;
    snprintf(l->why, sizeof l->why, "%s", why);
}

/* An .npy member: its reader opened (in->reader) and its length checked,
 * or the error. */
static void list_array(cli_input *in, size_t i, listing *l)
{
    npyio_reader_close(in->reader);
    in->reader = NULL;
    in->member = i;
    if (npyio_npz_open_reader(in->npz, i, &in->reader) != NPYIO_OK)
        listing_fail(l, cli_library_message());
    else if (member_too_short(in, i, l->why, sizeof l->why))
        l->failed = 1;
}

/* A member the library found no .npy file in (from its first bytes):
 * so it is, unless the library declines to read it (stored with sizes
 * that differ, over a limit: npyio cannot tell, and says why) or it is
 * damaged. Its bytes are checked whole (CRC-32, deflate stream), as
 * np.load reads such a member whole: a flipped bit can garble an .npy
 * file's magic, and then npyio cannot tell either, and says so. */
static void list_other(cli_input *in, size_t i, listing *l)
{
    npyio_stream *s = NULL;

    if (npyio_npz_open_member(in->npz, i, &s) != NPYIO_OK) {
        l->array = -1;
        snprintf(l->why, sizeof l->why, "%s", cli_library_message());
        return;
    }
    npyio_stream_close(s);
    if (npyio_npz_verify(in->npz, i) != NPYIO_OK) {
        l->array = -1;
        listing_fail(l, cli_library_message()); /* "... is damaged (...)" */
    }
}

static void list_member(cli_input *in, size_t i, listing *l)
{
    l->array = stat_of(in, i, NPYIO_NPZ_IS_ARRAY);
    l->failed = 0;
    l->why[0] = '\0';
    if (stat_of(in, i, NPYIO_NPZ_READABLE) != 1) {
        char buf[96];

        l->array = -1;
        snprintf(l->why, sizeof l->why, "%s", unreadable_reason(in, i, buf));
    } else if (l->array == 1) {
        list_array(in, i, l);
    } else {
        list_other(in, i, l);
    }
}

static void member_json(FILE *out, cli_input *in, size_t i, const listing *l)
{
    char buf[32];

    fputs("{\"name\": ", out);
    cli_json_string(out, npyio_npz_key(in->npz, i));
    fputs(", \"file\": ", out);
    cli_json_string(out, npyio_npz_name(in->npz, i));
    fputs(", \"compression\": ", out);
    cli_json_string(out, method_name(stat_of(in, i, NPYIO_NPZ_METHOD), buf));
    if (l->array != 1 || l->failed) {
        fprintf(out, ", \"array\": %s",
                l->array == 1 ? "true" : l->array == 0 ? "false" : "null");
        if (l->why[0] != '\0') {
            fputs(l->failed ? ", \"error\": " : ", \"reason\": ", out);
            cli_json_string(out, l->why);
        }
        fputc('}', out);
        return;
    }
    cli_put_header_json(out, npyio_reader_header(in->reader));
    fprintf(out, ", \"member_offset\": %" PRId64 ", \"compressed_size\": %"
                 PRId64 ", \"crc32\": %" PRId64 ", \"array\": true, "
                 "\"aligned\": %s}",
            stat_of(in, i, NPYIO_NPZ_DATA_OFFSET),
            stat_of(in, i, NPYIO_NPZ_COMPRESSED_SIZE),
            stat_of(in, i, NPYIO_NPZ_CRC32),
            stat_of(in, i, NPYIO_NPZ_ALIGNED) == 1 ? "true" : "false");
}

/* A message in text: escaped as messages are (its backslashes may be
 * escapes already, and stay single). */
static void put_message(FILE *out, const char *message)
{
    sbuf b = {0};

    text_escape(&b, message, strlen(message), 0);
    fputs(b.nomem ? "(a message too long to show)" : b.p != NULL ? b.p : "",
          out);
    free(b.p);
}

static void member_text(FILE *out, cli_input *in, size_t i, const listing *l)
{
    char buf[96];

    fprintf(out, "  member %zu: ", i);
    cli_put_name(out, npyio_npz_name(in->npz, i));
    fputs("\n    key             ", out);
    cli_put_name(out, npyio_npz_key(in->npz, i));
    fprintf(out, "\n    compression     %s\n    member offset   %" PRId64
                 "\n    size            %" PRId64 "\n    compressed size %"
                 PRId64 "\n    crc32           %08" PRIx64 "\n",
            method_name(stat_of(in, i, NPYIO_NPZ_METHOD), buf),
            stat_of(in, i, NPYIO_NPZ_DATA_OFFSET),
            stat_of(in, i, NPYIO_NPZ_SIZE),
            stat_of(in, i, NPYIO_NPZ_COMPRESSED_SIZE),
            stat_of(in, i, NPYIO_NPZ_CRC32));
    if (l->failed) {
        fprintf(out, "    %s\n    error           ",
                l->array == 1 ? "an .npy file" : "unknown content");
        put_message(out, l->why);
        fputc('\n', out);
    } else if (l->array == 1) {
        fprintf(out, "    aligned         %s\n",
                stat_of(in, i, NPYIO_NPZ_ALIGNED) == 1 ? "True" : "False");
        cli_put_header_text(out, npyio_reader_header(in->reader), 4);
    } else if (l->array == 0) {
        fputs("    not an .npy file\n", out);
    } else {
        fputs("    unknown content: ", out);
        put_message(out, l->why);
        fputc('\n', out);
    }
}

/* Every member is listed, as np.load lists them all: one that cannot be
 * read carries its error in its entry (and on standard error) and makes
 * the exit status 1. Everything goes to a buffer first, so that a failed
 * write is seen. */
int cli_archive_info(const cli_args *a, cli_input *in)
{
    size_t i, n = npyio_npz_count(in->npz), len = 0;
    char *text = NULL;
    FILE *out = open_memstream(&text, &len);
    listing l;
    int rc = 0;

    if (out == NULL)
        return cli_error(in->name, "%s", strerror(errno));
    if (a->json) {
        fputs("{\"path\": ", out);
        cli_json_string(out, in->name);
        fputs(", \"members\": [", out);
    } else {
        cli_put_name(out, in->name);
        fprintf(out, ": an .npz archive of %zu member%s\n", n,
                n == 1 ? "" : "s");
    }
    for (i = 0; i < n; i++) {
        list_member(in, i, &l);
        if (l.failed)
            rc = cli_error(in->name, "%s", l.why);
        if (a->json) {
            fputs(i ? ", " : "", out);
            member_json(out, in, i, &l);
        } else {
            member_text(out, in, i, &l);
        }
    }
    if (a->json)
        fputs("]}\n", out);
    if (fclose(out) != 0)
        rc = cli_error(in->name, "out of memory");
    else if (fwrite(text, 1, len, stdout) != len)
        rc = cli_error(NULL, "writing: %s", strerror(errno));
    free(text);
    return rc;
}

/* ---- validate ---------------------------------------------------------------------- */

static int validate_member(cli_input *in, size_t i)
{
    int64_t is_array = stat_of(in, i, NPYIO_NPZ_IS_ARRAY);
    char buf[96];
    int rc;

    if (stat_of(in, i, NPYIO_NPZ_READABLE) != 1)
        return cli_error(in->name, "%s cannot be checked: %s",
                         cli_member_label(in, i),
                         unreadable_reason(in, i, buf));
    if (is_array != 1)
        return npyio_npz_verify(in->npz, i) == NPYIO_OK ? 0
                                                        : cli_fail(in->name);
    rc = cli_open_member(in, i);
    if (rc == 0)
        rc = check_member_size(in, i);
    if (rc != 0)
        return rc;
    /* A pickle is walked from a stream of the member's bytes; its CRC is
     * checked at the end of that stream, which the walk may not reach. */
    if (npyio_dtype_contains_objects(
            npyio_header_dtype(npyio_reader_header(in->reader)))) {
        rc = cli_check_pickle(in);
        if (rc == 0 && npyio_npz_verify(in->npz, i) != NPYIO_OK)
            rc = cli_fail(in->name);
        return rc;
    }
    return cli_read_through(in, 0, NULL);
}

int cli_archive_validate(const cli_args *a, cli_input *in)
{
    size_t i, n = npyio_npz_count(in->npz);
    uint64_t total = 0, before;
    cli_progress bar;
    int rc = 0;

    (void)a;
    for (i = 0; i < n; i++)
        total += (uint64_t)stat_of(in, i, NPYIO_NPZ_SIZE);
    cli_progress_attach(in, &bar, "validating", total);
    /* Every member, so that every problem is named. */
    for (i = 0; i < n; i++) {
        before = in->progress_done;
        if (validate_member(in, i) != 0)
            rc = EXIT_INVALID;
        /* Headers and members read whole count too. */
        in->progress_done = before + (uint64_t)stat_of(in, i, NPYIO_NPZ_SIZE);
        if (in->progress != NULL)
            cli_progress_update(in->progress, in->progress_done);
    }
    cli_progress_detach(in);
    if (rc != 0)
        return rc;
    cli_put_name(stdout, in->name);
    fputs(": valid\n", stdout);
    return 0;
}

/* ---- choosing a member --------------------------------------------------------------- */

/* "npyio: FILE: problem; its members: a, b, c" (keys, escaped). */
static int name_members(cli_input *in, const char *problem)
{
    size_t i, n = npyio_npz_count(in->npz);
    sbuf b = {0};
    int rc;

    sb_str(&b, problem);
    sb_str(&b, n == 0 ? "; the archive has no members" : "; its members:");
    for (i = 0; i < n; i++) {
        const char *key = npyio_npz_key(in->npz, i);

        sb_str(&b, i ? ", " : " ");
        text_escape(&b, key, strlen(key), 1);
        if (stat_of(in, i, NPYIO_NPZ_IS_ARRAY) == 0)
            sb_str(&b, " (not an array)");
    }
    rc = cli_error(in->name, "%s", b.nomem ? problem : b.p);
    free(b.p);
    return rc;
}

int cli_choose_member(const cli_args *a, cli_input *in)
{
    size_t index = 0;
    int ambiguous = 0;
    npyio_status st;

    if (a->nfiles < 2)
        return name_members(in, "an .npz archive: say which MEMBER");
    st = npyio_npz_find(in->npz, a->files[1], &index, &ambiguous);
    if (st == NPYIO_E_NOT_FOUND) {
        sbuf b = {0};
        int rc;

        sb_str(&b, "no member '");
        text_escape(&b, a->files[1], strlen(a->files[1]), 1);
        sb_str(&b, "'");
        rc = name_members(in, b.nomem ? "no such member" : b.p);
        free(b.p);
        return rc;
    }
    if (st != NPYIO_OK)
        return cli_fail(in->name);
    if (ambiguous)
        fprintf(stderr, "npyio: %s: several members have that name; the "
                        "last one, as np.load chooses\n",
                cli_member_label(in, index));
    return cli_open_member(in, index);
}
