/*
 * archive.c - what the commands share about an .npz archive's members:
 * their statistics, compression names and why npyio cannot read one, a
 * member shorter than its .npy header says, and choosing the member print
 * and dump work on (info.c and validate.c list and check every member).
 * Built on the public API only.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "text.h"

/* ---- members ------------------------------------------------------------ */

int64_t cli_member_stat(const cli_input *in, size_t i, npyio_npz_stat_id field)
{
    int64_t v = -1;

    npyio_npz_stat(in->npz, i, field, &v);
    return v;
}

/* The compression method's name: "stored" and "deflate", else the name
 * Python's zipfile gives it (zipfile.compressor_names), else "method N". */
const char *cli_method_name(int64_t method, char buf[32])
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

/* Why npyio cannot read a member (NPYIO_NPZ_STAT_READABLE is 0). */
const char *cli_unreadable_reason(const cli_input *in, size_t i,
                                  char buf[96])
{
    int64_t flags = cli_member_stat(in, i, NPYIO_NPZ_STAT_FLAGS);
    char name[32];

    if (flags & 0x41)
        return "it is encrypted, which npyio does not decrypt";
    if (flags & 0x20)
        return "it is compressed patched data, which npyio does not read";
    snprintf(buf, 96, "its compression is %s, which npyio cannot "
                      "decompress (only stored and deflate)",
             cli_method_name(cli_member_stat(in, i, NPYIO_NPZ_STAT_METHOD), name));
    return buf;
}

/* An .npy member's data must be as long as its header says (object
 * arrays excepted: a pickle has no declared length). 0, or 1 with the
 * problem in why. */
int cli_member_too_short(cli_input *in, size_t i, char *why, size_t cap)
{
    const npyio_header *h = npyio_reader_header(in->reader);
    uint64_t need = (uint64_t)npyio_header_data_offset(h) +
                    (uint64_t)npyio_header_nbytes(h),
             size = (uint64_t)cli_member_stat(in, i, NPYIO_NPZ_STAT_SIZE);

    if (npyio_dtype_has_objects(npyio_header_dtype(h)) || size >= need)
        return 0;
    snprintf(why, cap, "%s is %" PRIu64 " bytes; its .npy header describes %"
             PRIu64, cli_member_label(in, i), size, need);
    return 1;
}

/* ---- choosing a member -------------------------------------------------- */

/* Messages name at most LIST_KEYS keys, each cut to KEY_CHARS characters
 * as shown (escaped): an archive of 100,000 members, or of keys thousands
 * of bytes long, still gets a message of one short line. */
#define LIST_KEYS 10
#define KEY_CHARS 60

/* Append s escaped, cut to KEY_CHARS characters ("..." ending a cut
 * one). Escaped a character at a time, stopping soon past the limit:
 * a name can be 65,535 bytes. */
static void put_cut(sbuf *b, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, n = strlen(s), width = 0, fits = 0;
    sbuf shown = {0};

    while (i < n && width <= KEY_CHARS) {
        uint32_t c;
        size_t len = text_utf8_next(u + i, n - i, &c), at = shown.len;

        len = len > 0 ? len : 1; /* a byte that is no UTF-8: one escape */
        text_escape(&shown, s + i, len, 1);
        width += text_width(shown.p + at, shown.len - at);
        if (width <= KEY_CHARS - 3)
            fits = shown.len; /* where a cut would end, "..." after it */
        i += len;
    }
    if (width > KEY_CHARS) {
        sb_add(b, shown.p, fits);
        sb_str(b, "...");
    } else {
        sb_add(b, shown.p, shown.len);
    }
    b->nomem |= shown.nomem;
    free(shown.p);
}

/* Append name as a shell word for the hint a long list ends with: as it
 * is, or in single quotes if the shell would split or expand it. */
static void put_shell_word(sbuf *b, const char *name)
{
    const char *p;

    if (name[0] != '\0' &&
        strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     "0123456789_./+,:@%=-") == strlen(name)) {
        text_escape(b, name, strlen(name), 1);
        return;
    }
    sb_chr(b, '\'');
    for (p = name; *p != '\0'; p += *p == '\'') {
        size_t run = strcspn(p, "'"); /* escaped whole: UTF-8 stays */

        text_escape(b, p, run, 1);
        p += run;
        if (*p == '\'')
            sb_str(b, "'\\''");
    }
    sb_chr(b, '\'');
}

/* "npyio: FILE: problem; its members: a, b, c" (keys, escaped), the
 * first LIST_KEYS of them, then how many more and where to see them. */
static int name_members(cli_input *in, const char *problem)
{
    size_t i, n = npyio_npz_count(in->npz);
    sbuf b = {0};
    int rc;

    sb_str(&b, problem);
    sb_str(&b, n == 0 ? "; the archive has no members" : "; its members:");
    for (i = 0; i < n && i < LIST_KEYS; i++) {
        sb_str(&b, i ? ", " : " ");
        put_cut(&b, npyio_npz_key(in->npz, i));
        if (cli_member_stat(in, i, NPYIO_NPZ_STAT_IS_ARRAY) == 0)
            sb_str(&b, " (not an array)");
    }
    if (n > LIST_KEYS) {
        sb_fmt(&b, " and %zu more; `npyio info --short ", n - LIST_KEYS);
        put_shell_word(&b, in->name);
        sb_str(&b, "` lists them");
    }
    rc = cli_error(in->name, "%s", b.nomem ? problem : b.p);
    free(b.p);
    return rc;
}

/* npyio_npz_find chose member `index` among several of its name or key:
 * say which member is read (by index: names repeat) and why, as np.load
 * chooses: of several members of one name the last (zipfile's table of
 * names keeps the last), else the one named exactly as asked, which
 * np.load prefers to one that has the name plus ".npy". */
static void say_choice(cli_input *in, size_t index)
{
    const char *name = npyio_npz_name(in->npz, index),
               *key = npyio_npz_key(in->npz, index);
    size_t i, n = npyio_npz_count(in->npz), same = 0, other = n;
    sbuf b = {0};

    for (i = 0; i < n; i++) {
        if (strcmp(npyio_npz_name(in->npz, i), name) == 0)
            same++;
        else if (other == n && strcmp(npyio_npz_key(in->npz, i), key) == 0)
            other = i;
    }
    if (same > 1) {
        sb_fmt(&b, "%zu members are named '", same);
        put_cut(&b, name);
        sb_fmt(&b, "'; reading the last of them, member %zu, as np.load "
                   "does", index);
    } else {
        sb_fmt(&b, "reading member %zu ('", index);
        put_cut(&b, name);
        sb_str(&b, "'), named exactly as asked, as np.load does");
        if (other < n) {
            sb_fmt(&b, "; member %zu ('", other);
            put_cut(&b, npyio_npz_name(in->npz, other));
            sb_str(&b, "') has the same key");
        }
    }
    cli_error(in->name, "%s", b.nomem ? "several members have that name "
                                        "or key" : b.p);
    free(b.p);
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
        say_choice(in, index);
    return cli_open_member(in, index);
}
