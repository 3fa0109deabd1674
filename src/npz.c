/*
 * npz.c - .npz archives opened for reading: the directory (zip_dir.h),
 * what each member is (probed once, at open, so the handle never changes
 * afterwards and threads can share it), and members handed out as
 * readers, streams and maps over the archive's stream.
 */
#include "error.h"
#include "header.h"
#include "map.h"
#include "npz.h"
#include "npz_member.h"
#include "options.h"
#include "reader.h"
#include "zip_dir.h"

#include <string.h>

#define NPYIO__MAGIC_NPZ 0x4e50495au /* "NPIZ" */

/* The first bytes of an .npy file: magic, version, header length. */
#define PROBE_BYTES NPYIO__PREAMBLE_MAX

/* What a member is, found at open. */
typedef struct member_kind {
    bool readable;        /* stored or deflated, not encrypted or patched */
    bool is_array;        /* starts with the NPY magic */
    int64_t array_offset; /* stored arrays: where the array data lies */
} member_kind;

struct npyio_npz {
    uint32_t magic;
    npyio__mem mem;
    npyio_options *options; /* a copy: members are opened later */
    npyio_stream *stream;
    bool owns_stream;
    char *path;             /* that path, for messages; else NULL */
    npyio__zip_dir dir;
    member_kind *kinds;
};

static npyio_status check_npz(const npyio_npz *npz, const char *where)
{
    if (npz == NULL || npz->magic != NPYIO__MAGIC_NPZ)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: %s", where,
                           npz == NULL ? "npz is NULL"
                                       : "the pointer given as an archive is "
                                         "not a live npyio_npz");
    return NPYIO_OK;
}

static const npyio_npz *live(const npyio_npz *npz)
{
    return npz != NULL && npz->magic == NPYIO__MAGIC_NPZ ? npz : NULL;
}

static npyio_status check_index(const npyio_npz *npz, size_t index,
                                const char *where)
{
    npyio_status st = check_npz(npz, where);

    if (st == NPYIO_OK && index >= npz->dir.count)
        st = npyio__fail(NPYIO_E_INVALID_ARG, "%s: member %zu of an archive "
                         "of %zu", where, index, npz->dir.count);
    return st;
}

/* "member 3 ('a.npy')", for messages. */
static const char *member_label(const npyio__zip_entry *e, size_t index,
                                char *buf, size_t cap)
{
    char shown[96];

    snprintf(buf, cap, "member %zu ('%s')", index,
             npyio__show(e->name, strlen(e->name), shown, sizeof shown));
    return buf;
}

/* ---- what a member is ---------------------------------------------------------- */

static const char *method_name(unsigned method)
{
    switch (method) {
    case 1: return "shrink";
    case 6: return "implode";
    case 9: return "deflate64";
    case 12: return "bzip2";
    case 14: return "lzma";
    case 93: return "zstandard";
    case 95: return "xz";
    case 98: return "ppmd";
    case 99: return "AES encryption";
    default: return "an unknown method";
    }
}

static bool can_read(const npyio__zip_entry *e)
{
    return (e->method == NPYIO__ZIP_STORED ||
            e->method == NPYIO__ZIP_DEFLATED) &&
           !(e->flags & (NPYIO__ZIP_ENCRYPTED | NPYIO__ZIP_PATCHED |
                         NPYIO__ZIP_STRONG_ENCRYPTION));
}

/* Whether this library may read the member at all, and within limits:
 * nothing is inflated before this passes. */
static npyio_status check_member(const npyio_npz *npz, size_t index)
{
    const npyio__zip_entry *e = &npz->dir.entries[index];
    int64_t max_bytes = npyio__limit(npz->options,
                                     NPYIO_LIMIT_NPZ_MEMBER_BYTES);
    int64_t ratio = npyio__limit(npz->options, NPYIO_LIMIT_NPZ_RATIO);
    char label[128];

    member_label(e, index, label, sizeof label);
    if (e->flags & (NPYIO__ZIP_ENCRYPTED | NPYIO__ZIP_STRONG_ENCRYPTION))
        return npyio__fail(NPYIO_E_UNSUPPORTED, "%s is encrypted", label);
    if (e->flags & NPYIO__ZIP_PATCHED)
        return npyio__fail(NPYIO_E_UNSUPPORTED, "%s is compressed patched "
                           "data", label);
    if (!can_read(e))
        return npyio__fail(NPYIO_E_UNSUPPORTED, "%s is compressed with %s "
                           "(method %u); only stored and deflate are read",
                           label, method_name(e->method), e->method);
    if (e->method == NPYIO__ZIP_STORED && e->csize != e->usize)
        return npyio__fail(NPYIO_E_FORMAT, "%s is stored, yet its sizes "
                           "differ (%llu in the archive, %llu declared)",
                           label, (unsigned long long)e->csize,
                           (unsigned long long)e->usize);
    if (e->usize > (uint64_t)max_bytes)
        return npyio__fail(NPYIO_E_LIMIT, "%s declares %llu bytes, over "
                           "NPYIO_LIMIT_NPZ_MEMBER_BYTES (%lld)", label,
                           (unsigned long long)e->usize,
                           (long long)max_bytes);
    if (e->method == NPYIO__ZIP_DEFLATED &&
        (e->csize == 0 ? e->usize > 0
                       : e->usize / e->csize >= (uint64_t)ratio))
        return npyio__fail(NPYIO_E_LIMIT, "%s declares %llu bytes from %llu "
                           "compressed: a ratio over NPYIO_LIMIT_NPZ_RATIO "
                           "(%lld), refused before inflating", label,
                           (unsigned long long)e->usize,
                           (unsigned long long)e->csize, (long long)ratio);
    return NPYIO_OK;
}

/* The offset of a stored array's data, from its first bytes, or -1. The
 * preamble is read by the rule every reader uses (npyio__preamble_parse:
 * versions 1.0, 2.0 and 3.0 only, the header-size limit), so that an
 * offset is given only for a member that loads and maps would read (its
 * failure message is the caller's to drop: the member is only probed). */
static int64_t array_data_offset(const npyio_npz *npz,
                                 const npyio__zip_entry *e,
                                 const unsigned char *b, size_t got)
{
    npyio__preamble pre;
    size_t need;
    uint64_t end;

    if (e->method != NPYIO__ZIP_STORED ||
        npyio__preamble_parse(b, got, npz->options, &pre, &need) != NPYIO_OK)
        return -1;
    end = pre.prefix + pre.hlen;
    return end <= e->usize ? e->data_offset + (int64_t)end : -1;
}

/*
 * Stored members' first bytes are read through a window of the file:
 * where members are small, one read holds the starts of many (before, a
 * member stream and a read each). A window reaches from a member's data
 * as far as the following members' starts (in directory order, rising)
 * fit in PROBE_WINDOW bytes. Deflated members, and a start the window
 * cannot give, are read through a member stream as before.
 */
#define PROBE_WINDOW ((size_t)256 << 10)

typedef struct probe_window {
    unsigned char *buf; /* PROBE_WINDOW bytes, or NULL: no window */
    int64_t at;         /* the file offset of buf[0] */
    size_t len;         /* bytes held */
} probe_window;

/* The first `want` bytes of stored member `index` from the window
 * (loaded if it does not hold them): false if it cannot give them. */
static bool window_first(npyio_npz *npz, probe_window *w, size_t index,
                         unsigned char *first, size_t want)
{
    const npyio__zip_entry *e = npz->dir.entries;
    int64_t at = e[index].data_offset, prev = at;
    size_t span = want, j, got = 0;

    if (w->buf == NULL || e[index].method != NPYIO__ZIP_STORED)
        return false;
    if (at < w->at || (uint64_t)(at - w->at) + want > w->len) {
        for (j = index + 1; j < npz->dir.count; j++) {
            int64_t d = e[j].data_offset;

            if (d < prev || (uint64_t)(d - at) + PROBE_BYTES > PROBE_WINDOW)
                break;
            span = (size_t)(d - at) + PROBE_BYTES;
            prev = d;
        }
        w->at = at;
        w->len = 0;
        if (npyio__stream_read_at(npz->stream, w->buf, span, at, &got,
                                  "members' starts") != NPYIO_OK ||
            got < want)
            return false;
        w->len = got;
    }
    memcpy(first, w->buf + (at - w->at), want);
    return true;
}

/* Up to PROBE_BYTES of a member's first bytes (inflated if deflated). */
static npyio_status read_first(npyio_npz *npz, probe_window *w,
                               size_t index, unsigned char *first,
                               size_t *got)
{
    const npyio__zip_entry *e = &npz->dir.entries[index];
    size_t want = e->usize < PROBE_BYTES ? (size_t)e->usize : PROBE_BYTES;
    npyio_stream *s = NULL;
    npyio_status st;

    if (window_first(npz, w, index, first, want)) {
        *got = want;
        return NPYIO_OK;
    }
    st = npyio__member_open(npz->stream, e, true, npz->options, &s);
    if (st != NPYIO_OK)
        return st;
    st = npyio__stream_read(s, first, PROBE_BYTES, got, "a member's start");
    npyio__stream_close(s);
    return st;
}

/* Read a member's first bytes to learn whether it is an .npy file. A
 * member that cannot be read now (corrupt data) is listed as no array;
 * opening it reports why. */
static npyio_status probe_member(npyio_npz *npz, probe_window *w,
                                 size_t index)
{
    const npyio__zip_entry *e = &npz->dir.entries[index];
    member_kind *k = &npz->kinds[index];
    unsigned char first[PROBE_BYTES];
    npyio__saved_message saved;
    size_t got = 0;
    npyio_status st;

    k->array_offset = -1;
    k->is_array = false;
    k->readable = can_read(e);
    if (!k->readable || check_member(npz, index) != NPYIO_OK)
        return NPYIO_OK; /* said again when it is opened */
    npyio__message_save(&saved);
    st = read_first(npz, w, index, first, &got);
    if (st == NPYIO_OK && got >= NPYIO__NPY_MAGIC_LEN &&
        memcmp(first, NPYIO__NPY_MAGIC, NPYIO__NPY_MAGIC_LEN) == 0) {
        k->is_array = true;
        k->array_offset = array_data_offset(npz, e, first, got);
    }
    npyio__message_restore(&saved);
    return st == NPYIO_E_NOMEM ? st : NPYIO_OK;
}

/* ---- opening ------------------------------------------------------------------- */

static npyio_status read_archive(npyio_npz *npz)
{
    int64_t total = npyio__limit(npz->options, NPYIO_LIMIT_NPZ_TOTAL_BYTES);
    probe_window w = {NULL, 0, 0};
    npyio_status st;
    size_t i;

    if (!npyio__stream_seekable(npz->stream))
        return npyio__fail(NPYIO_E_UNSUPPORTED, "a ZIP archive is read from "
                           "its end, and the stream cannot seek (copy a "
                           "pipe to a file first)");
    st = npyio__zip_dir_read(npz->stream, &npz->mem, npz->options,
                             &npz->dir);
    if (st == NPYIO_OK && npz->dir.total_usize > (uint64_t)total)
        st = npyio__fail(NPYIO_E_LIMIT, "the members declare %llu bytes in "
                         "all, over NPYIO_LIMIT_NPZ_TOTAL_BYTES (%lld)",
                         (unsigned long long)npz->dir.total_usize,
                         (long long)total);
    if (st == NPYIO_OK)
        st = npyio__alloc_array(&npz->mem, npz->dir.count + 1,
                                sizeof *npz->kinds, "member kinds",
                                (void **)&npz->kinds);
    if (st == NPYIO_OK && npz->dir.count > 1)
        st = npyio__alloc(&npz->mem, PROBE_WINDOW, "members' starts",
                          (void **)&w.buf);
    for (i = 0; st == NPYIO_OK && i < npz->dir.count; i++)
        st = probe_member(npz, &w, i);
    npyio__free(w.buf);
    return st;
}

static npyio_status new_npz(const npyio_options *options, npyio_npz **out)
{
    npyio__mem mem;
    npyio_npz *npz;
    npyio_status st;

    npyio__mem_init(&mem, options);
    st = npyio__alloc_zero(&mem, sizeof *npz, "archive", (void **)&npz);
    if (st != NPYIO_OK)
        return st;
    npz->magic = NPYIO__MAGIC_NPZ;
    npz->mem = mem;
    st = npyio__options_copy_in(&mem, options, &npz->options);
    if (st != NPYIO_OK) {
        npyio__free(npz);
        return st;
    }
    *out = npz;
    return NPYIO_OK;
}

static npyio_status npz_close_body(npyio_npz *npz)
{
    npyio_status st = NPYIO_OK;

    if (live(npz) == NULL)
        return NPYIO_OK;
    if (npz->owns_stream)
        st = npyio__stream_close(npz->stream);
    npyio__zip_dir_free(&npz->dir);
    npyio__free(npz->kinds);
    npyio__free(npz->path);
    npyio_options_free(npz->options);
    npz->magic = NPYIO__MAGIC_DEAD;
    npyio__free(npz);
    return st;
}

npyio_status npyio_npz_close(npyio_npz *npz)
{
    return npyio__as_called(npz_close_body(npz), "npyio_npz_close");
}

/* An archive on the caller's stream, or on the file at path (see
 * npyio__stream_acquire), whose arguments were checked; failures to
 * read the archive name its path. */
static npyio_status open_npz(const char *path, npyio_stream *stream,
                             const npyio_options *options, const char *where,
                             npyio_npz **out)
{
    npyio_npz *npz = NULL;
    npyio_status st = new_npz(options, &npz);

    if (st != NPYIO_OK)
        return st;
    if (path != NULL) {
        st = npyio__alloc(&npz->mem, strlen(path) + 1, "the archive's path",
                          (void **)&npz->path);
        if (st == NPYIO_OK)
            memcpy(npz->path, path, strlen(path) + 1);
    }
    if (st == NPYIO_OK)
        st = npyio__stream_acquire(path, stream, false, npz->options, where,
                                   &npz->stream, &npz->owns_stream);
    if (st == NPYIO_OK) {
        st = read_archive(npz);
        if (path != NULL)
            st = npyio__with_context(st, path);
    }
    if (st != NPYIO_OK) {
        npz_close_body(npz);
        return st;
    }
    *out = npz;
    return NPYIO_OK;
}

static npyio_status npz_open_path_body(const char *path,
                                       const npyio_options *options,
                                       npyio_npz **out)
{
    static const char where[] = "npyio_npz_open_path";
    npyio_status st;

    st = npyio__check_opener(out, path, where);
    if (st != NPYIO_OK)
        return st;
    return open_npz(path, NULL, options, where, out);
}

npyio_status npyio_npz_open_path(const char *path,
                                 const npyio_options *options,
                                 npyio_npz **out)
{
    if (out != NULL)
        *out = NULL; /* outputs are cleared whatever is refused */
    return npyio__as_called(npz_open_path_body(path, options, out),
                            "npyio_npz_open_path");
}

static npyio_status npz_open_stream_body(npyio_stream *stream,
                                         const npyio_options *options,
                                         npyio_npz **out)
{
    static const char where[] = "npyio_npz_open_stream";
    npyio_status st;

    if (out == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: out is NULL", where);
    *out = NULL;
    /* Refused before the options are copied, like a bad path. */
    st = npyio__check_stream(stream, where);
    if (st != NPYIO_OK)
        return st;
    return open_npz(NULL, stream, options, where, out);
}

npyio_status npyio_npz_open_stream(npyio_stream *stream,
                                   const npyio_options *options,
                                   npyio_npz **out)
{
    return npyio__as_called(npz_open_stream_body(stream, options, out),
                            "npyio_npz_open_stream");
}

/* ---- listing ------------------------------------------------------------------- */

size_t npyio_npz_count(const npyio_npz *npz)
{
    return live(npz) != NULL ? npz->dir.count : 0;
}

const char *npyio_npz_name(const npyio_npz *npz, size_t index)
{
    if (live(npz) == NULL || index >= npz->dir.count)
        return NULL;
    return npz->dir.entries[index].name;
}

const char *npyio_npz_key(const npyio_npz *npz, size_t index)
{
    if (live(npz) == NULL || index >= npz->dir.count)
        return NULL;
    return npz->dir.entries[index].key;
}

/* The last member named `name` (zipfile keeps the last of a name), and
 * whether others share it. */
static bool last_named(const npyio__zip_dir *dir, const char *name,
                       size_t *index, size_t *matches)
{
    size_t i;

    *matches = 0;
    for (i = 0; i < dir->count; i++) {
        if (strcmp(dir->entries[i].name, name) == 0) {
            *index = i;
            ++*matches;
        }
    }
    return *matches > 0;
}

static size_t count_keys(const npyio__zip_dir *dir, const char *key)
{
    size_t i, n = 0;

    for (i = 0; i < dir->count; i++)
        n += strcmp(dir->entries[i].key, key) == 0;
    return n;
}

static npyio_status find_member(const npyio_npz *npz, const char *key,
                                size_t *index, int *ambiguous)
{
    size_t matches = 0, len = strlen(key);
    char *with_npy = NULL, shown[96];
    bool found = last_named(&npz->dir, key, index, &matches);
    npyio_status st = NPYIO_OK;

    if (!found) {
        st = npyio__alloc(&npz->mem, len + 5, "a member name",
                          (void **)&with_npy);
        if (st != NPYIO_OK)
            return st;
        memcpy(with_npy, key, len);
        memcpy(with_npy + len, ".npy", 5);
        found = last_named(&npz->dir, with_npy, index, &matches);
        npyio__free(with_npy);
    }
    if (!found)
        return npyio__fail(NPYIO_E_NOT_FOUND, "no member '%s' (nor '%s.npy') "
                           "in the archive", npyio__show(key, len, shown,
                                                         sizeof shown),
                           shown);
    if (ambiguous != NULL)
        *ambiguous = matches > 1 ||
                     count_keys(&npz->dir,
                                npz->dir.entries[*index].key) > 1;
    return NPYIO_OK;
}

static npyio_status npz_find_body(const npyio_npz *npz, const char *key,
                                  size_t *index, int *ambiguous)
{
    static const char where[] = "npyio_npz_find";
    npyio_status st = check_npz(npz, where);

    if (st == NPYIO_OK && (key == NULL || index == NULL))
        st = npyio__fail(NPYIO_E_INVALID_ARG, "%s: %s is NULL", where,
                         key == NULL ? "key" : "index");
    if (st != NPYIO_OK)
        return st;
    if (ambiguous != NULL)
        *ambiguous = 0;
    return find_member(npz, key, index, ambiguous);
}

npyio_status npyio_npz_find(const npyio_npz *npz, const char *key,
                            size_t *index, int *ambiguous)
{
    if (index != NULL)
        *index = 0; /* outputs are cleared whatever is refused */
    if (ambiguous != NULL)
        *ambiguous = 0;
    return npyio__as_called(npz_find_body(npz, key, index, ambiguous),
                            "npyio_npz_find");
}

/* NPYIO_NPZ_STAT_BLOCK_INDEX: the member's index checked on its data. */
static npyio_status index_value(const npyio_npz *npz,
                                const npyio__zip_entry *e, int64_t *value)
{
    npyio_stream *s = NULL;
    npyio_status st;

    *value = 0;
    if (e->method != NPYIO__ZIP_DEFLATED)
        return NPYIO_OK;
    st = npyio__member_open(npz->stream, e, true, npz->options, &s);
    if (st == NPYIO_OK)
        st = npyio__member_check_index(s, value);
    npyio__stream_close(s);
    return st;
}

static npyio_status field_value(const npyio_npz *npz, size_t index,
                                npyio_npz_stat_id field, int64_t *value)
{
    const npyio__zip_entry *e = &npz->dir.entries[index];
    const member_kind *k = &npz->kinds[index];

    switch (field) {
    case NPYIO_NPZ_STAT_METHOD: *value = e->method; break;
    case NPYIO_NPZ_STAT_FLAGS: *value = e->flags; break;
    case NPYIO_NPZ_STAT_CRC32: *value = e->crc; break;
    case NPYIO_NPZ_STAT_COMPRESSED_SIZE: *value = (int64_t)e->csize; break;
    case NPYIO_NPZ_STAT_SIZE: *value = (int64_t)e->usize; break;
    case NPYIO_NPZ_STAT_HEADER_OFFSET: *value = e->header_offset; break;
    case NPYIO_NPZ_STAT_DATA_OFFSET: *value = e->data_offset; break;
    case NPYIO_NPZ_STAT_IS_ARRAY: *value = k->readable ? k->is_array : -1; break;
    case NPYIO_NPZ_STAT_ARRAY_OFFSET: *value = k->array_offset; break;
    case NPYIO_NPZ_STAT_ALIGNED:
        *value = k->array_offset >= 0 && k->array_offset % 64 == 0;
        break;
    case NPYIO_NPZ_STAT_READABLE: *value = k->readable; break;
    case NPYIO_NPZ_STAT_NAME_CUT: *value = e->name_cut; break;
    case NPYIO_NPZ_STAT_BLOCK_INDEX:
        return k->readable ? index_value(npz, e, value) : NPYIO_OK;
    default:
        return npyio__fail(NPYIO_E_INVALID_ARG, "npyio_npz_stat: field %d "
                           "is unknown to libnpyio %s", (int)field,
                           NPYIO_VERSION_STRING);
    }
    return NPYIO_OK;
}

static npyio_status npz_stat_body(const npyio_npz *npz, size_t index,
                                  npyio_npz_stat_id field, int64_t *value)
{
    static const char where[] = "npyio_npz_stat";
    npyio_status st = check_index(npz, index, where);

    if (st == NPYIO_OK && value == NULL)
        st = npyio__fail(NPYIO_E_INVALID_ARG, "%s: value is NULL", where);
    if (st != NPYIO_OK)
        return st;
    return field_value(npz, index, field, value);
}

npyio_status npyio_npz_stat(const npyio_npz *npz, size_t index,
                            npyio_npz_stat_id field, int64_t *value)
{
    return npyio__as_called(npz_stat_body(npz, index, field, value),
                            "npyio_npz_stat");
}

npyio_status npyio__npz_member_source(const npyio_npz *npz, size_t index,
                                      const char *where,
                                      npyio_stream **archive,
                                      const npyio__zip_entry **entry)
{
    npyio_status st = check_index(npz, index, where);

    if (st != NPYIO_OK)
        return st;
    *archive = npz->stream;
    *entry = &npz->dir.entries[index];
    return NPYIO_OK;
}

/* ---- members ------------------------------------------------------------------- */

/* A live archive, a member of it, and somewhere to put what is opened. */
static npyio_status check_open(const npyio_npz *npz, size_t index,
                               const char *where, const void *out)
{
    npyio_status st = check_index(npz, index, where);

    if (st == NPYIO_OK && out == NULL)
        st = npyio__fail(NPYIO_E_INVALID_ARG, "%s: out is NULL", where);
    return st;
}

/* The stream of member index, of a checked index: the member's own facts
 * (check_member) are checked here, once per open. */
static npyio_status member_stream(npyio_npz *npz, size_t index,
                                  npyio_stream **out)
{
    npyio_status st = check_member(npz, index);

    *out = NULL;
    if (st == NPYIO_OK)
        st = npyio__member_open(npz->stream, &npz->dir.entries[index],
                                false, npz->options, out);
    return st;
}

/* Whether the bytes of member index, in its stream s, are damaged: a
 * CRC-32 that does not match, deflate data that does not inflate, or a
 * deflate stream that ends early, as far as earlier reads of s found or
 * s read on to its end finds (npyio__member_verify: a failed read's bytes
 * are not read again). Damage is the failure, said once: "member 'b.npy'
 * of ARCHIVE is damaged (its CRC-32 is ...)" (the archive named when it
 * was opened from a path). NPYIO_OK if the member is whole; other
 * failures (I/O, memory) as they come. */
static npyio_status stream_damage(const npyio_npz *npz, size_t index,
                                  npyio_stream *s)
{
    const npyio__zip_entry *e = &npz->dir.entries[index];
    char why[160], shown[96];
    npyio_status st = npyio__member_verify(s, why, sizeof why);

    if (st == NPYIO_OK || why[0] == '\0')
        return st;
    return npyio__fail(st, "member '%s'%s%s is damaged (%s)",
                       npyio__show(e->name, strlen(e->name), shown,
                                   sizeof shown),
                       npz->path != NULL ? " of " : "",
                       npz->path != NULL ? npz->path : "", why);
}

/* Member index read whole to learn whether its bytes are damaged
 * (npyio_npz_verify): refused members and the failures of stream_damage
 * as they come. */
static npyio_status check_damage(npyio_npz *npz, size_t index)
{
    npyio_stream *s = NULL;
    npyio_status st = member_stream(npz, index, &s);

    if (st == NPYIO_OK)
        st = stream_damage(npz, index, s);
    npyio__stream_close(s);
    return st;
}

static bool may_be_damage(npyio_status st)
{
    /* What garbled bytes can make a reader say: not an .npy file, a bad
     * header, a version or a length out of bounds, data cut short, and
     * the member stream's own findings. */
    return st == NPYIO_E_FORMAT || st == NPYIO_E_TRUNCATED ||
           st == NPYIO_E_CHECKSUM || st == NPYIO_E_UNSUPPORTED ||
           st == NPYIO_E_LIMIT;
}

/* A reader of member index failed with st, reading its stream s. If the
 * member's bytes are damaged, that is the failure to report: the
 * reader's complaint ("not an .npy file: it starts with 93 4e 55 ...",
 * "it inflates to only 3355 bytes") was its symptom, as NumPy reports
 * the CRC (zipfile checks it before np.load parses). Else st, with its
 * message as it was, and *named false. */
static npyio_status damage_instead(npyio_npz *npz, size_t index,
                                   npyio_stream *s, npyio_status st,
                                   bool *named)
{
    npyio__saved_message saved;
    npyio_status damage;

    *named = false;
    if (!may_be_damage(st))
        return st;
    npyio__message_save(&saved);
    damage = stream_damage(npz, index, s);
    if (damage == NPYIO_E_CHECKSUM || damage == NPYIO_E_FORMAT ||
        damage == NPYIO_E_TRUNCATED) {
        *named = true;
        return damage;
    }
    npyio__message_restore(&saved);
    return st;
}

static npyio_status npz_open_member_body(npyio_npz *npz, size_t index,
                                         npyio_stream **out)
{
    npyio_status st = check_open(npz, index, "npyio_stream_open_member",
                                 out);

    return st == NPYIO_OK ? member_stream(npz, index, out) : st;
}

npyio_status npyio_stream_open_member(npyio_npz *npz, size_t index,
                                      npyio_stream **out)
{
    return npyio__as_called(npz_open_member_body(npz, index, out),
                            "npyio_stream_open_member");
}

/* How a member's reader failed, for naming it once in messages. */
typedef enum reader_failure {
    READER_OPENED,   /* no failure */
    REFUSED,         /* the member was refused: the message names it */
    DAMAGED,         /* damage: the message names it, and its archive */
    READER_FAILED    /* the reader's own failure: the caller names it */
} reader_failure;

/* A reader of member index (of a checked index) on the member's stream,
 * opened here once and handed to the reader: *s, the caller's to close
 * after the reader (NULL on failure). */
static npyio_status open_reader(npyio_npz *npz, size_t index,
                                const char *where, npyio_stream **s,
                                npyio_reader **out, reader_failure *how)
{
    bool damaged = false;
    npyio_status st = member_stream(npz, index, s);

    *how = REFUSED;
    if (st != NPYIO_OK)
        return st;
    st = npyio__reader_open_on(*s, npz->options, where, out);
    if (st != NPYIO_OK) {
        st = damage_instead(npz, index, *s, st, &damaged);
        npyio__stream_close(*s);
        *s = NULL;
    }
    *how = st == NPYIO_OK ? READER_OPENED : damaged ? DAMAGED : READER_FAILED;
    return st;
}

static npyio_status npz_open_reader_body(npyio_npz *npz, size_t index,
                                         npyio_reader **out)
{
    static const char where[] = "npyio_reader_open_member";
    npyio_stream *s = NULL;
    char label[128];
    reader_failure how;
    npyio_status st;

    if (out != NULL)
        *out = NULL;
    st = check_open(npz, index, where, out);
    if (st != NPYIO_OK)
        return st;
    st = open_reader(npz, index, where, &s, out, &how);
    if (st == NPYIO_OK)
        npyio__reader_take_stream(*out);
    if (how == READER_FAILED)
        st = npyio__with_context(st, member_label(&npz->dir.entries[index],
                                                  index, label,
                                                  sizeof label));
    return st;
}

npyio_status npyio_reader_open_member(npyio_npz *npz, size_t index,
                                      npyio_reader **out)
{
    return npyio__as_called(npz_open_reader_body(npz, index, out),
                            "npyio_reader_open_member");
}

static npyio_status npz_map_body(npyio_npz *npz, size_t index,
                                 npyio_map **out)
{
    static const char where[] = "npyio_map_open_member";
    const npyio__zip_entry *e;
    char label[128];
    npyio_status st = check_index(npz, index, where);

    if (st == NPYIO_OK && out == NULL)
        st = npyio__fail(NPYIO_E_INVALID_ARG, "%s: out is NULL", where);
    if (st != NPYIO_OK)
        return st;
    *out = NULL;
    e = &npz->dir.entries[index];
    member_label(e, index, label, sizeof label);
    st = check_member(npz, index);
    if (st == NPYIO_OK && e->method != NPYIO__ZIP_STORED)
        st = npyio__fail(NPYIO_E_UNSUPPORTED, "%s is deflated: only stored "
                         "members can be mapped (read it instead)", label);
    if (st == NPYIO_OK && npz->path == NULL)
        st = npyio__fail(NPYIO_E_UNSUPPORTED, "%s: maps need an archive "
                         "opened from a path", label);
    if (st != NPYIO_OK)
        return st;
    return npyio__with_context(npyio__map_array_at(npz->stream, e->data_offset,
                                                   (int64_t)e->csize, 0,
                                                   npz->options, out),
                               label);
}

npyio_status npyio_map_open_member(npyio_npz *npz, size_t index,
                                   npyio_map **out)
{
    return npyio__as_called(npz_map_body(npz, index, out),
                            "npyio_map_open_member");
}

static npyio_status npz_verify_body(npyio_npz *npz, size_t index)
{
    npyio_status st = check_index(npz, index, "npyio_npz_verify");

    return st == NPYIO_OK ? check_damage(npz, index) : st;
}

npyio_status npyio_npz_verify(npyio_npz *npz, size_t index)
{
    return npyio__as_called(npz_verify_body(npz, index), "npyio_npz_verify");
}

/* The arguments of a one-call load, checked before the member is. */
static npyio_status check_load(const npyio_npz *npz, size_t index,
                               uint32_t flags, const char *where,
                               void **data, size_t *len, char *type_out,
                               size_t type_cap, int *ndim, int64_t *shape,
                               size_t shape_cap)
{
    npyio_status st = npyio__check_load_outputs(data, len, ndim, shape,
                                                shape_cap, where);

    if (st == NPYIO_OK && type_out == NULL && type_cap > 0)
        st = npyio__fail(NPYIO_E_INVALID_ARG, "%s: type is NULL", where);
    if (st == NPYIO_OK)
        st = npyio__check_flags(flags, NPYIO_READ_CAST_SAME_KIND |
                                NPYIO_READ_CAST_UNSAFE, where);
    return st == NPYIO_OK ? check_index(npz, index, where) : st;
}

/*
 * Member index read whole in one call (npyio__reader_load_as), with
 * `type` (NULL: as stored): the arguments, the index and the member
 * checked once, its stream opened once and handed to the reader, and
 * after a failed read the same stream asked whether the member is
 * damaged. Failures name the member once: damage as damage ("member
 * 'b.npy' of PATH is damaged"), else the member's label in front.
 */
static npyio_status load_member(npyio_npz *npz, size_t index,
                                const char *type, uint32_t flags,
                                const char *where, void **data, size_t *len,
                                char *type_out, size_t type_cap, int *ndim,
                                int64_t *shape, size_t shape_cap)
{
    npyio_stream *s = NULL;
    npyio_reader *r = NULL;
    char label[128];
    reader_failure how;
    bool damaged = false;
    npyio_status st = check_load(npz, index, flags, where, data, len,
                                 type_out, type_cap, ndim, shape, shape_cap);

    if (st != NPYIO_OK)
        return st;
    st = open_reader(npz, index, where, &s, &r, &how);
    member_label(&npz->dir.entries[index], index, label, sizeof label);
    if (how == READER_FAILED)
        return npyio__with_context(st, label);
    if (how != READER_OPENED)
        return st;
    st = npyio__reader_load_as(r, type, flags, label, where, data, len,
                               type_out, type_cap, ndim, shape, shape_cap);
    if (st != NPYIO_OK)
        st = damage_instead(npz, index, s, st, &damaged);
    npyio__stream_close(s); /* a member's close cannot fail */
    return st;
}

npyio_status npyio_npz_load(npyio_npz *npz, size_t index, void **data,
                            size_t *len, char *type, size_t type_cap,
                            int *ndim, int64_t *shape, size_t shape_cap)
{
    if (data != NULL)
        *data = NULL; /* outputs are cleared whatever is refused */
    if (len != NULL)
        *len = 0;
    return npyio__as_called(load_member(npz, index, NULL, 0,
                                        "npyio_npz_load", data, len, type,
                                        type_cap, ndim, shape, shape_cap),
                            "npyio_npz_load");
}

npyio_status npyio_npz_load_as(npyio_npz *npz, size_t index, const char *type,
                               uint32_t flags, void **data, size_t *len,
                               int *ndim, int64_t *shape, size_t shape_cap)
{
    if (data != NULL)
        *data = NULL; /* outputs are cleared whatever is refused */
    if (len != NULL)
        *len = 0;
    return npyio__as_called(load_member(npz, index, type, flags,
                                        "npyio_npz_load_as", data, len, NULL,
                                        0, ndim, shape, shape_cap),
                            "npyio_npz_load_as");
}
