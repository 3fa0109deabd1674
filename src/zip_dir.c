/*
 * zip_dir.c - reading a ZIP archive's directory (zip_dir.h): the end of
 * central directory record and its ZIP64 forms, the central directory
 * walked by its size (the entry count is a hint, as in Python's zipfile),
 * names decoded as zipfile decodes them, each local header compared with
 * its entry, and no two members allowed to overlap.
 *
 * Offsets in an archive are relative to its first member; bytes put in
 * front of it (a self-extractor's stub) shift everything, and like zipfile
 * we find the shift from where the directory must end: right before the
 * end records.
 */
#include "error.h"
#include "options.h"
#include "zip_dir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EOCD_SIG 0x06054b50u
#define EOCD_LEN 22
#define LOC64_SIG 0x07064b50u
#define LOC64_LEN 20
#define EOCD64_SIG 0x06064b50u
#define EOCD64_LEN 56
#define CENTRAL_SIG 0x02014b50u
#define CENTRAL_LEN 46
#define LOCAL_SIG 0x04034b50u
#define LOCAL_LEN 30
#define SAT16 0xFFFFu
#define SAT32 0xFFFFFFFFu
#define ZIP64_EXTRA 0x0001u
#define MAX_EXTRACT_VERSION 63 /* zipfile's MAX_EXTRACT_VERSION */

/* What the end records say. */
typedef struct end_records {
    uint64_t count;      /* entries promised: a hint */
    uint64_t cd_size, cd_offset;
    int64_t records_at;  /* the first end record: the directory ends here */
    int64_t comment_at;  /* the archive comment, after the end record */
    size_t comment_len;
} end_records;

static npyio_status read_exact(npyio_stream *s, void *buf, size_t len,
                               int64_t offset, const char *what)
{
    size_t got = 0;
    npyio_status st = npyio__stream_read_at(s, buf, len, offset, &got, what);

    if (st == NPYIO_OK && got < len)
        st = npyio__fail(NPYIO_E_TRUNCATED, "%s at offset %lld runs past the "
                         "end of the file (%zu of %zu bytes)", what,
                         (long long)offset, got, len);
    return st;
}

/* ---- the end records -------------------------------------------------------- */

/* The end records are looked for where Python's zipfile looks (3.11,
 * _EndRecData): in the final 64 KiB + 22 bytes. */
#define END_SEARCH (EOCD_LEN + 0x10000)

/* The last end-record signature in buf, or -1. */
static int64_t last_signature(const unsigned char *buf, size_t len)
{
    size_t p;

    for (p = len - 3; p-- > 0;)
        if (npyio__le32(buf + p) == EOCD_SIG)
            return (int64_t)p;
    return -1;
}

/*
 * The end record zipfile takes: the last 22 bytes when they are one with
 * an empty comment; otherwise the last signature, whatever its comment
 * length says, and none (zipfile refuses) when fewer than 22 bytes follow
 * it. -1: none.
 */
static int64_t zipfile_end(const unsigned char *buf, size_t len)
{
    const unsigned char *last = buf + len - EOCD_LEN;
    int64_t p;

    if (npyio__le32(last) == EOCD_SIG && npyio__le16(last + 20) == 0)
        return (int64_t)(len - EOCD_LEN);
    p = last_signature(buf, len);
    return p >= 0 && len - (size_t)p >= EOCD_LEN ? p : -1;
}

/* Ours: the last end record whose comment ends within the file, or -1. */
static int64_t fitting_end(const unsigned char *buf, size_t len)
{
    size_t p;

    for (p = len - EOCD_LEN + 1; p-- > 0;)
        if (npyio__le32(buf + p) == EOCD_SIG &&
            p + EOCD_LEN + npyio__le16(buf + p + 20) <= len)
            return (int64_t)p;
    return -1;
}

/*
 * zipfile and we chose differently (`theirs`, `ours`: offsets in buf, -1
 * for none): the archive is refused, since the two would read different
 * members, or zipfile (and so np.load) none at all.
 */
static npyio_status ends_disagree(const unsigned char *buf, size_t len,
                                  int64_t base, int64_t theirs, int64_t ours)
{
    int64_t sig = last_signature(buf, len);

    if (theirs < 0 && ours < 0)
        return npyio__fail(NPYIO_E_FORMAT, "not a ZIP archive: no end of "
                           "central directory record in its last %zu bytes",
                           len);
    if (theirs < 0)
        return npyio__fail(NPYIO_E_FORMAT, "two end records: the last "
                           "end-record signature, at offset %lld, lies %zu "
                           "bytes before the end of the file (a record "
                           "takes 22), so Python's zipfile refuses the "
                           "archive; the one at offset %lld would be read "
                           "here", (long long)(base + sig),
                           len - (size_t)sig, (long long)(base + ours));
    if (ours < 0)
        return npyio__fail(NPYIO_E_FORMAT, "the end record at offset %lld "
                           "declares a comment of %u bytes, which runs past "
                           "the end of the file", (long long)(base + theirs),
                           (unsigned)npyio__le16(buf + theirs + 20));
    return npyio__fail(NPYIO_E_FORMAT, "two end records: Python's zipfile "
                       "would take the one at offset %lld, this reader the "
                       "one at offset %lld (whose comment holds the other); "
                       "they would read different members",
                       (long long)(base + theirs), (long long)(base + ours));
}

/* The end record, found as zipfile finds it, and refused unless our own
 * rule (the comment must fit) finds the same one. */
static npyio_status find_end(npyio_stream *s, int64_t length,
                             const npyio__mem *mem, unsigned char *eocd,
                             int64_t *at)
{
    size_t tail = length < END_SEARCH ? (size_t)length : END_SEARCH;
    int64_t base = length - (int64_t)tail, theirs, ours;
    unsigned char *buf = NULL;
    npyio_status st;

    if (tail < EOCD_LEN)
        return npyio__fail(NPYIO_E_FORMAT, "not a ZIP archive: %lld bytes "
                           "are too few for its end record",
                           (long long)length);
    st = npyio__alloc(mem, tail, "the archive's tail", (void **)&buf);
    if (st == NPYIO_OK)
        st = read_exact(s, buf, tail, base, "the archive's tail");
    if (st == NPYIO_OK) {
        theirs = zipfile_end(buf, tail);
        ours = fitting_end(buf, tail);
        if (theirs >= 0 && theirs == ours) {
            memcpy(eocd, buf + ours, EOCD_LEN);
            *at = base + ours;
        } else {
            st = ends_disagree(buf, tail, base, theirs, ours);
        }
    }
    npyio__free(buf);
    return st;
}

/* Where a ZIP64 end record's value and the plain record's must agree: a
 * plain field holds the value unless it is saturated. */
static bool agrees(uint64_t plain, uint64_t saturated, uint64_t wide)
{
    return plain == saturated || plain == wide;
}

/* The ZIP64 end record, right before its locator (where zipfile looks),
 * which must also point at it once the shift is known. */
static npyio_status read_end64(npyio_stream *s, const unsigned char *eocd,
                               int64_t locator_at, const unsigned char *loc,
                               end_records *end)
{
    unsigned char rec[EOCD64_LEN];
    int64_t at = locator_at - EOCD64_LEN, shift;
    npyio_status st;

    if (npyio__le32(loc + 16) > 1)
        return npyio__fail(NPYIO_E_UNSUPPORTED, "the archive is split over "
                           "%u disks", (unsigned)npyio__le32(loc + 16));
    if (at < 0)
        return npyio__fail(NPYIO_E_FORMAT, "no room for the ZIP64 end record "
                           "before its locator at offset %lld",
                           (long long)locator_at);
    st = read_exact(s, rec, sizeof rec, at, "the ZIP64 end record");
    if (st != NPYIO_OK)
        return st;
    if (npyio__le32(rec) != EOCD64_SIG || npyio__le64(rec + 4) < 44)
        return npyio__fail(NPYIO_E_FORMAT, "no ZIP64 end record before its "
                           "locator at offset %lld", (long long)locator_at);
    if (npyio__le32(rec + 16) != 0 || npyio__le32(rec + 20) != 0)
        return npyio__fail(NPYIO_E_UNSUPPORTED, "the archive is split over "
                           "several disks");
    end->count = npyio__le64(rec + 32);
    end->cd_size = npyio__le64(rec + 40);
    end->cd_offset = npyio__le64(rec + 48);
    end->records_at = at;
    if (!agrees(npyio__le16(eocd + 10), SAT16, end->count) ||
        !agrees(npyio__le32(eocd + 12), SAT32, end->cd_size) ||
        !agrees(npyio__le32(eocd + 16), SAT32, end->cd_offset) ||
        npyio__le64(rec + 24) != end->count)
        return npyio__fail(NPYIO_E_FORMAT, "the ZIP64 end record disagrees "
                           "with the end record (entries, directory size "
                           "or offset)");
    /* The locator's offset, shifted as the directory is. */
    shift = at - (int64_t)(end->cd_size + end->cd_offset);
    if (end->cd_size > (uint64_t)at || end->cd_offset > (uint64_t)at ||
        npyio__le64(loc + 8) != (uint64_t)(at - shift))
        return npyio__fail(NPYIO_E_FORMAT, "the ZIP64 locator points at "
                           "offset %llu, not at its end record (%lld)",
                           (unsigned long long)npyio__le64(loc + 8),
                           (long long)at);
    return NPYIO_OK;
}

static npyio_status read_end(npyio_stream *s, int64_t length,
                             const npyio__mem *mem, end_records *end)
{
    unsigned char eocd[EOCD_LEN] = {0}, loc[LOC64_LEN];
    int64_t at = 0;
    npyio_status st = find_end(s, length, mem, eocd, &at);

    if (st != NPYIO_OK)
        return st;
    if (npyio__le16(eocd + 4) != 0 || npyio__le16(eocd + 6) != 0)
        return npyio__fail(NPYIO_E_UNSUPPORTED, "the archive is split over "
                           "several disks");
    end->count = npyio__le16(eocd + 10);
    end->cd_size = npyio__le32(eocd + 12);
    end->cd_offset = npyio__le32(eocd + 16);
    end->records_at = at;
    end->comment_at = at + EOCD_LEN;
    end->comment_len = npyio__le16(eocd + 20);
    if (at >= LOC64_LEN) {
        st = read_exact(s, loc, sizeof loc, at - LOC64_LEN,
                        "the ZIP64 locator");
        if (st != NPYIO_OK)
            return st;
        if (npyio__le32(loc) == LOC64_SIG)
            return read_end64(s, eocd, at - LOC64_LEN, loc, end);
    }
    return NPYIO_OK;
}

/* ---- names --------------------------------------------------------------------- */

/* Code page 437's upper half (what zipfile decodes names without the UTF-8
 * flag as), from Python's codec table. */
static const uint16_t cp437_high[128] = {
    0x00c7, 0x00fc, 0x00e9, 0x00e2, 0x00e4, 0x00e0, 0x00e5, 0x00e7,
    0x00ea, 0x00eb, 0x00e8, 0x00ef, 0x00ee, 0x00ec, 0x00c4, 0x00c5,
    0x00c9, 0x00e6, 0x00c6, 0x00f4, 0x00f6, 0x00f2, 0x00fb, 0x00f9,
    0x00ff, 0x00d6, 0x00dc, 0x00a2, 0x00a3, 0x00a5, 0x20a7, 0x0192,
    0x00e1, 0x00ed, 0x00f3, 0x00fa, 0x00f1, 0x00d1, 0x00aa, 0x00ba,
    0x00bf, 0x2310, 0x00ac, 0x00bd, 0x00bc, 0x00a1, 0x00ab, 0x00bb,
    0x2591, 0x2592, 0x2593, 0x2502, 0x2524, 0x2561, 0x2562, 0x2556,
    0x2555, 0x2563, 0x2551, 0x2557, 0x255d, 0x255c, 0x255b, 0x2510,
    0x2514, 0x2534, 0x252c, 0x251c, 0x2500, 0x253c, 0x255e, 0x255f,
    0x255a, 0x2554, 0x2569, 0x2566, 0x2560, 0x2550, 0x256c, 0x2567,
    0x2568, 0x2564, 0x2565, 0x2559, 0x2558, 0x2552, 0x2553, 0x256b,
    0x256a, 0x2518, 0x250c, 0x2588, 0x2584, 0x258c, 0x2590, 0x2580,
    0x03b1, 0x00df, 0x0393, 0x03c0, 0x03a3, 0x03c3, 0x00b5, 0x03c4,
    0x03a6, 0x0398, 0x03a9, 0x03b4, 0x221e, 0x03c6, 0x03b5, 0x2229,
    0x2261, 0x00b1, 0x2265, 0x2264, 0x2320, 0x2321, 0x00f7, 0x2248,
    0x00b0, 0x2219, 0x00b7, 0x221a, 0x207f, 0x00b2, 0x25a0, 0x00a0,
};

/* Bytes of UTF-8 for one code point below U+10000, written to out if it
 * is not NULL. */
static size_t put_utf8(uint16_t cp, char *out)
{
    unsigned char b[3];
    size_t n;

    if (cp < 0x80) {
        b[0] = (unsigned char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (unsigned char)(0xC0 | cp >> 6);
        b[1] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 2;
    } else {
        b[0] = (unsigned char)(0xE0 | cp >> 12);
        b[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        b[2] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 3;
    }
    if (out != NULL)
        memcpy(out, b, n);
    return n;
}

/* The name's bytes up to a NUL (zipfile cuts names there). */
static size_t name_length(const unsigned char *raw, size_t len)
{
    const unsigned char *nul = memchr(raw, 0, len);

    return nul != NULL ? (size_t)(nul - raw) : len;
}

/*
 * Decode a raw name as zipfile does (UTF-8 under flag 0x800, checked
 * strictly; else code page 437) into out (NULL: only count). Returns the
 * UTF-8 length, or (size_t)-1 for invalid UTF-8.
 */
static size_t decode_name(const unsigned char *raw, size_t len, bool utf8,
                          char *out)
{
    size_t i, n = 0;

    len = name_length(raw, len);
    if (utf8) {
        for (i = 0; i < len;) {
            size_t step = npyio__utf8_sequence(raw + i, len - i);

            if (step == 0)
                return (size_t)-1;
            i += step;
        }
        if (out != NULL && len > 0)
            memcpy(out, raw, len);
        return len;
    }
    for (i = 0; i < len; i++) {
        uint16_t cp = raw[i] < 0x80 ? raw[i] : cp437_high[raw[i] - 0x80];

        n += put_utf8(cp, out != NULL ? out + n : NULL);
    }
    return n;
}

/* ---- the central directory --------------------------------------------------- */

/* One entry's fixed part and the lengths that follow it. */
typedef struct raw_entry {
    const unsigned char *fixed; /* CENTRAL_LEN bytes */
    const unsigned char *name, *extra;
    size_t name_len, extra_len;
} raw_entry;

static npyio_status next_entry(const unsigned char *cd, size_t size,
                               size_t *pos, size_t index, raw_entry *e)
{
    const unsigned char *p = cd + *pos;
    size_t total;

    if (size - *pos < CENTRAL_LEN || npyio__le32(p) != CENTRAL_SIG)
        return npyio__fail(NPYIO_E_FORMAT, "central directory entry %zu (at "
                           "directory byte %zu): %s", index, *pos,
                           size - *pos < CENTRAL_LEN ? "cut off by the "
                           "directory's end" : "no entry signature");
    e->fixed = p;
    e->name_len = npyio__le16(p + 28);
    e->extra_len = npyio__le16(p + 30);
    total = CENTRAL_LEN + e->name_len + e->extra_len + npyio__le16(p + 32);
    if (size - *pos < total)
        return npyio__fail(NPYIO_E_FORMAT, "central directory entry %zu (at "
                           "directory byte %zu): its name and fields run "
                           "past the directory's end", index, *pos);
    e->name = p + CENTRAL_LEN;
    e->extra = e->name + e->name_len;
    *pos += total;
    return NPYIO_OK;
}

/*
 * The ZIP64 extra field's values replace the saturated fields among
 * `fields` (in the order of the format: uncompressed size, compressed
 * size, header offset), which must all be there.
 */
static npyio_status zip64_values(const unsigned char *extra, size_t len,
                                 uint64_t **fields, size_t count,
                                 const char *what)
{
    size_t p = 0, i, at = 0;

    while (len - p >= 4) {
        size_t id = npyio__le16(extra + p), n = npyio__le16(extra + p + 2);

        if (n > len - p - 4)
            return npyio__fail(NPYIO_E_FORMAT, "%s: extra field %04zx runs "
                               "past the extra data", what, id);
        if (id == ZIP64_EXTRA) {
            for (i = 0; i < count; i++) {
                if (*fields[i] != SAT32)
                    continue;
                if (n - at < 8)
                    return npyio__fail(NPYIO_E_FORMAT, "%s: the ZIP64 extra "
                                       "field is too short for the values "
                                       "it stands for", what);
                *fields[i] = npyio__le64(extra + p + 4 + at);
                at += 8;
            }
            return NPYIO_OK;
        }
        p += 4 + n;
    }
    for (i = 0; i < count; i++)
        if (*fields[i] == SAT32)
            return npyio__fail(NPYIO_E_FORMAT, "%s: a size or offset says "
                               "it is in a ZIP64 extra field, and there is "
                               "none", what);
    return NPYIO_OK;
}

static npyio_status fill_entry(const raw_entry *r, size_t index,
                               int64_t shift, int64_t cd_start,
                               npyio__zip_entry *e)
{
    uint64_t offset = npyio__le32(r->fixed + 42);
    uint64_t *fields[3] = {&e->usize, &e->csize, &offset};
    int64_t room;
    char what[64];
    npyio_status st;

    e->flags = npyio__le16(r->fixed + 8);
    e->method = npyio__le16(r->fixed + 10);
    e->crc = npyio__le32(r->fixed + 16);
    e->csize = npyio__le32(r->fixed + 20);
    e->usize = npyio__le32(r->fixed + 24);
    snprintf(what, sizeof what, "central directory entry %zu", index);
    st = zip64_values(r->extra, r->extra_len, fields, 3, what);
    if (st != NPYIO_OK)
        return st;
    /* A local header must fit before the directory. */
    room = cd_start - shift - LOCAL_LEN;
    if (room < 0 || offset > (uint64_t)room)
        return npyio__fail(NPYIO_E_FORMAT, "%s: its local header offset "
                           "%llu lies beyond the members (the directory "
                           "starts at %lld)", what,
                           (unsigned long long)offset,
                           (long long)(cd_start - shift));
    e->header_offset = (int64_t)offset + shift;
    return NPYIO_OK;
}

/* Every name decoded into one block: "name\0key\0" per entry. */
static npyio_status decode_names(npyio__zip_dir *dir, const raw_entry *raw,
                                 const npyio__mem *mem)
{
    size_t i, total = 0, n;
    char *p;
    npyio_status st;

    for (i = 0; i < dir->count; i++) {
        n = decode_name(raw[i].name, raw[i].name_len,
                        dir->entries[i].flags & NPYIO__ZIP_UTF8, NULL);
        if (n == (size_t)-1)
            return npyio__fail(NPYIO_E_FORMAT, "central directory entry %zu: "
                               "its name is flagged UTF-8 but is not", i);
        total += 2 * n + 2;
    }
    st = npyio__alloc(mem, total, "member names", (void **)&dir->names);
    if (st != NPYIO_OK)
        return st;
    for (p = dir->names, i = 0; i < dir->count; i++) {
        npyio__zip_entry *e = &dir->entries[i];

        n = decode_name(raw[i].name, raw[i].name_len, e->flags &
                        NPYIO__ZIP_UTF8, p);
        p[n] = '\0';
        e->name = p;
        e->name_cut = memchr(raw[i].name, 0, raw[i].name_len) != NULL;
        p += n + 1;
        if (n >= 4 && memcmp(e->name + n - 4, ".npy", 4) == 0)
            n -= 4;
        memcpy(p, e->name, n);
        p[n] = '\0';
        e->key = p;
        p += n + 1;
    }
    return NPYIO_OK;
}

/* ---- local headers ------------------------------------------------------------ */

/*
 * The local headers are read through a window of the file: where members
 * are small, one read brings in the headers of many (an archive of 70,000
 * small members took 3 reads a member). A window reaches from a header as
 * far as the following entries' headers (in directory order, rising) fit
 * in WINDOW_MAX bytes, with room for their local extra fields, so a large
 * member's data is not read. A read the window does not hold goes to the
 * stream as before, with the same messages.
 */
#define WINDOW_MAX ((size_t)256 << 10)
#define EXTRA_ROOM 96 /* a local extra field beyond the central one's:
                         ZIP64 (20) and alignment padding (4 + 63) */

typedef struct local_window {
    npyio_stream *s;
    const raw_entry *raw;
    const npyio__zip_entry *entries;
    size_t count;
    unsigned char *buf;  /* WINDOW_MAX bytes */
    int64_t at;          /* the file offset of buf[0] */
    size_t len;          /* bytes held */
} local_window;

/* Entry i's local header and the next ones', as far as they fit. */
static size_t window_span(const local_window *w, size_t i)
{
    int64_t start = w->entries[i].header_offset, prev = start;
    size_t span = 0, j;

    for (j = i; j < w->count; j++) {
        int64_t h = w->entries[j].header_offset;
        uint64_t end = (uint64_t)(h - start) + LOCAL_LEN +
                       w->raw[j].name_len + w->raw[j].extra_len + EXTRA_ROOM;

        if (h < prev || end > WINDOW_MAX)
            break;
        span = (size_t)end;
        prev = h;
    }
    return span > 0 ? span : LOCAL_LEN;
}

/* Bring entry i's header into the window, unless it is there. A failed
 * read leaves the window empty: the header's own reads then fail as they
 * would without a window, with their messages. */
static void window_load(local_window *w, size_t i)
{
    int64_t h = w->entries[i].header_offset;
    size_t got = 0;
    npyio_status st;

    if (w->buf == NULL || (h >= w->at && h - w->at + LOCAL_LEN <=
                                             (int64_t)w->len))
        return;
    st = npyio__stream_read_at(w->s, w->buf, window_span(w, i), h, &got,
                               "local headers");
    w->at = h;
    w->len = st == NPYIO_OK ? got : 0;
}

/* len bytes at offset: from the window where it holds them. */
static npyio_status window_read(local_window *w, void *buf, size_t len,
                                int64_t offset, const char *what)
{
    if (w->buf != NULL && offset >= w->at &&
        (uint64_t)(offset - w->at) + len <= w->len) {
        memcpy(buf, w->buf + (offset - w->at), len);
        return NPYIO_OK;
    }
    return read_exact(w->s, buf, len, offset, what);
}

static npyio_status local_mismatch(const npyio__zip_entry *e, size_t index,
                                   const char *what)
{
    char shown[96];

    return npyio__fail(NPYIO_E_FORMAT, "member %zu ('%s'): the local header "
                       "at offset %lld differs from the directory (%s)",
                       index, npyio__show(e->name, strlen(e->name), shown,
                                          sizeof shown),
                       (long long)e->header_offset, what);
}

/* The local header's sizes and CRC must be the entry's, unless they follow
 * the data (flag 8); saturated sizes are in its ZIP64 extra field. */
static npyio_status check_local_sizes(local_window *s,
                                      const unsigned char *h,
                                      const npyio__zip_entry *e, size_t index,
                                      const npyio__mem *mem)
{
    uint64_t csize = npyio__le32(h + 18), usize = npyio__le32(h + 22);
    uint64_t *fields[2] = {&usize, &csize};
    size_t nlen = npyio__le16(h + 26), xlen = npyio__le16(h + 28);
    unsigned char *extra = NULL;
    npyio_status st = NPYIO_OK;

    if (npyio__le16(h + 6) & NPYIO__ZIP_DESCRIPTOR)
        return NPYIO_OK;
    if (npyio__le32(h + 14) != e->crc)
        return local_mismatch(e, index, "CRC-32");
    if (csize == SAT32 || usize == SAT32) {
        st = npyio__alloc(mem, xlen, "a local extra field", (void **)&extra);
        if (st == NPYIO_OK)
            st = window_read(s, extra, xlen,
                             e->header_offset + LOCAL_LEN + (int64_t)nlen,
                             "a local extra field");
        if (st == NPYIO_OK)
            st = zip64_values(extra, xlen, fields, 2, "a local header");
        npyio__free(extra);
        if (st != NPYIO_OK)
            return st;
    }
    if (csize != e->csize || usize != e->usize)
        return local_mismatch(e, index, "sizes");
    return NPYIO_OK;
}

static npyio_status check_local(local_window *s, const raw_entry *r,
                                npyio__zip_entry *e, size_t index,
                                int64_t cd_start, int64_t length,
                                const npyio__mem *mem)
{
    unsigned char fixed[LOCAL_LEN], *name = NULL;
    size_t nlen, xlen;
    npyio_status st = window_read(s, fixed, LOCAL_LEN, e->header_offset,
                                  "a local header");

    if (st != NPYIO_OK)
        return st;
    if (npyio__le32(fixed) != LOCAL_SIG)
        return local_mismatch(e, index, "no local header signature");
    nlen = npyio__le16(fixed + 26);
    xlen = npyio__le16(fixed + 28);
    if (nlen != r->name_len)
        return local_mismatch(e, index, "name length");
    st = npyio__alloc(mem, nlen, "a local name", (void **)&name);
    if (st == NPYIO_OK)
        st = window_read(s, name, nlen, e->header_offset + LOCAL_LEN,
                         "a local header's name");
    if (st == NPYIO_OK && nlen > 0 && memcmp(name, r->name, nlen) != 0)
        st = local_mismatch(e, index, "name");
    npyio__free(name);
    if (st == NPYIO_OK && npyio__le16(fixed + 8) != e->method)
        st = local_mismatch(e, index, "compression method");
    if (st == NPYIO_OK)
        st = check_local_sizes(s, fixed, e, index, mem);
    if (st != NPYIO_OK)
        return st;
    e->data_offset = e->header_offset + LOCAL_LEN + (int64_t)(nlen + xlen);
    if (e->data_offset > length ||
        e->csize > (uint64_t)(length - e->data_offset))
        return npyio__fail(NPYIO_E_TRUNCATED, "member %zu: its %llu bytes "
                           "at offset %lld run past the end of the file "
                           "(%lld bytes)", index,
                           (unsigned long long)e->csize,
                           (long long)e->data_offset, (long long)length);
    if (e->data_offset > cd_start ||
        e->csize > (uint64_t)(cd_start - e->data_offset))
        return npyio__fail(NPYIO_E_FORMAT, "member %zu: its %llu bytes at "
                           "offset %lld run into the central directory (at "
                           "%lld)", index, (unsigned long long)e->csize,
                           (long long)e->data_offset, (long long)cd_start);
    return NPYIO_OK;
}

/* The version needed to extract (its low byte: the high one names a
 * system): zipfile refuses the whole archive above 6.3, and so np.load. */
static npyio_status check_version(const raw_entry *r,
                                  const npyio__zip_entry *e, size_t index)
{
    unsigned need = r->fixed[6];
    char shown[96];

    if (need <= MAX_EXTRACT_VERSION)
        return NPYIO_OK;
    return npyio__fail(NPYIO_E_UNSUPPORTED, "member %zu ('%s') needs ZIP "
                       "version %u.%u to extract (at most %u.%u is read, "
                       "as by Python's zipfile)", index,
                       npyio__show(e->name, strlen(e->name), shown,
                                   sizeof shown),
                       need / 10, need % 10, MAX_EXTRACT_VERSION / 10,
                       MAX_EXTRACT_VERSION % 10);
}

/* ---- overlaps ------------------------------------------------------------------- */

/*
 * No member's data may reach into the next member's local header (the
 * zip bomb that points many entries at one compressed stream). qsort has
 * no context argument in C11, so the order is built by a merge sort of
 * our own rather than through a global.
 */
static void merge_sort(size_t *idx, size_t *tmp, size_t n,
                       const npyio__zip_entry *e)
{
    size_t half = n / 2, i = 0, j = half, k = 0;

    if (n < 2)
        return;
    merge_sort(idx, tmp, half, e);
    merge_sort(idx + half, tmp, n - half, e);
    while (i < half && j < n)
        tmp[k++] = e[idx[j]].header_offset < e[idx[i]].header_offset
                       ? idx[j++]
                       : idx[i++];
    while (i < half)
        tmp[k++] = idx[i++];
    while (j < n)
        tmp[k++] = idx[j++];
    memcpy(idx, tmp, n * sizeof *idx);
}

static npyio_status check_overlaps(const npyio__zip_dir *dir,
                                   const npyio__mem *mem)
{
    size_t *idx = NULL, i;
    npyio_status st = npyio__alloc_array(mem, 2 * dir->count + 1,
                                         sizeof *idx, "member order",
                                         (void **)&idx);

    if (st != NPYIO_OK)
        return st;
    for (i = 0; i < dir->count; i++)
        idx[i] = i;
    merge_sort(idx, idx + dir->count, dir->count, dir->entries);
    for (i = 0; st == NPYIO_OK && i + 1 < dir->count; i++) {
        const npyio__zip_entry *a = &dir->entries[idx[i]];
        const npyio__zip_entry *b = &dir->entries[idx[i + 1]];

        if (a->data_offset + (int64_t)a->csize > b->header_offset)
            st = npyio__fail(NPYIO_E_FORMAT, "members %zu and %zu overlap "
                             "(a possible zip bomb): the data of one at "
                             "offset %lld runs into the header of the other "
                             "at %lld", idx[i], idx[i + 1],
                             (long long)a->data_offset,
                             (long long)b->header_offset);
    }
    npyio__free(idx);
    return st;
}

/* ---- the whole directory ----------------------------------------------------- */

static npyio_status count_entries(const unsigned char *cd, size_t size,
                                  const npyio_options *options, size_t *count)
{
    int64_t limit = npyio__limit(options, NPYIO_LIMIT_NPZ_MEMBERS);
    size_t pos = 0, n = 0;
    raw_entry r;
    npyio_status st;

    while (pos < size) {
        st = next_entry(cd, size, &pos, n, &r);
        if (st != NPYIO_OK)
            return st;
        if ((uint64_t)++n > (uint64_t)limit)
            return npyio__fail(NPYIO_E_LIMIT, "the archive has more than "
                               "%lld members (NPYIO_LIMIT_NPZ_MEMBERS)",
                               (long long)limit);
    }
    *count = n;
    return NPYIO_OK;
}

/* Every entry's local header checked, read through a window. */
static npyio_status check_locals(npyio_stream *s, const raw_entry *raw,
                                 npyio__zip_dir *dir, int64_t length,
                                 const npyio__mem *mem)
{
    local_window w = {s, raw, dir->entries, dir->count, NULL, 0, 0};
    size_t i;
    npyio_status st = NPYIO_OK;

    if (dir->count > 1)
        st = npyio__alloc(mem, WINDOW_MAX, "local headers",
                          (void **)&w.buf);
    for (i = 0; st == NPYIO_OK && i < dir->count; i++) {
        window_load(&w, i);
        st = check_local(&w, &raw[i], &dir->entries[i], i, dir->cd_offset,
                         length, mem);
    }
    npyio__free(w.buf);
    return st;
}

static npyio_status parse_entries(npyio_stream *s, const unsigned char *cd,
                                  size_t size, int64_t shift, int64_t length,
                                  const npyio__mem *mem, npyio__zip_dir *dir)
{
    raw_entry *raw = NULL;
    size_t pos = 0, i;
    npyio_status st = npyio__alloc_array(mem, dir->count + 1, sizeof *raw,
                                         "directory entries", (void **)&raw);

    if (st == NPYIO_OK)
        st = npyio__alloc_array(mem, dir->count + 1, sizeof *dir->entries,
                                "directory entries",
                                (void **)&dir->entries);
    for (i = 0; st == NPYIO_OK && i < dir->count; i++) {
        st = next_entry(cd, size, &pos, i, &raw[i]);
        if (st == NPYIO_OK)
            st = fill_entry(&raw[i], i, shift, dir->cd_offset,
                            &dir->entries[i]);
        if (st == NPYIO_OK) {
            uint64_t u = dir->entries[i].usize;

            dir->total_usize = u > UINT64_MAX - dir->total_usize
                                   ? UINT64_MAX
                                   : dir->total_usize + u;
        }
    }
    if (st == NPYIO_OK)
        st = decode_names(dir, raw, mem);
    for (i = 0; st == NPYIO_OK && i < dir->count; i++)
        st = check_version(&raw[i], &dir->entries[i], i);
    if (st == NPYIO_OK)
        st = check_locals(s, raw, dir, length, mem);
    npyio__free(raw);
    return st;
}

/* Where the directory lies: it must end where the end records begin. */
static npyio_status locate_directory(const end_records *end, int64_t length,
                                     int64_t *shift)
{
    uint64_t stated_end = end->cd_offset + end->cd_size;

    if (end->cd_size > (uint64_t)end->records_at ||
        end->cd_offset > (uint64_t)end->records_at - end->cd_size) {
        if (end->cd_offset > (uint64_t)length ||
            end->cd_size > (uint64_t)length - end->cd_offset)
            return npyio__fail(NPYIO_E_TRUNCATED, "the central directory "
                               "(%llu bytes at offset %llu) runs past the "
                               "end of the file (%lld bytes)",
                               (unsigned long long)end->cd_size,
                               (unsigned long long)end->cd_offset,
                               (long long)length);
        return npyio__fail(NPYIO_E_FORMAT, "the central directory (%llu "
                           "bytes at offset %llu) runs into the end record "
                           "at %lld", (unsigned long long)end->cd_size,
                           (unsigned long long)end->cd_offset,
                           (long long)end->records_at);
    }
    *shift = end->records_at - (int64_t)stated_end;
    return NPYIO_OK;
}

npyio_status npyio__zip_dir_read(npyio_stream *s, const npyio__mem *mem,
                                 const npyio_options *options,
                                 npyio__zip_dir *dir)
{
    end_records end = {0, 0, 0, 0, 0, 0};
    unsigned char *cd = NULL;
    int64_t length = 0, shift = 0;
    npyio_status st;

    memset(dir, 0, sizeof *dir);
    st = npyio__stream_length(s, &length);
    if (st == NPYIO_OK)
        st = read_end(s, length, mem, &end);
    if (st == NPYIO_OK)
        st = locate_directory(&end, length, &shift);
    if (st == NPYIO_OK && end.cd_size > SIZE_MAX)
        st = npyio__fail(NPYIO_E_OVERFLOW, "a central directory of %llu "
                         "bytes does not fit this host's address space",
                         (unsigned long long)end.cd_size);
    if (st == NPYIO_OK) {
        dir->cd_offset = (int64_t)end.cd_offset + shift;
        dir->cd_end = end.records_at;
        dir->shift = shift;
        dir->comment_at = end.comment_at;
        dir->comment_len = end.comment_len;
        st = npyio__alloc(mem, (size_t)end.cd_size, "the central directory",
                          (void **)&cd);
    }
    if (st == NPYIO_OK)
        st = read_exact(s, cd, (size_t)end.cd_size, dir->cd_offset,
                        "the central directory");
    if (st == NPYIO_OK)
        st = count_entries(cd, (size_t)end.cd_size, options, &dir->count);
    if (st == NPYIO_OK && end.count > dir->count)
        st = npyio__fail(NPYIO_E_FORMAT, "the end record promises %llu "
                         "entries; the central directory holds %zu",
                         (unsigned long long)end.count, dir->count);
    if (st == NPYIO_OK)
        st = parse_entries(s, cd, (size_t)end.cd_size, shift, length, mem,
                           dir);
    if (st == NPYIO_OK)
        st = check_overlaps(dir, mem);
    npyio__free(cd);
    if (st != NPYIO_OK)
        npyio__zip_dir_free(dir);
    return st;
}

void npyio__zip_dir_free(npyio__zip_dir *dir)
{
    npyio__free(dir->entries);
    npyio__free(dir->names);
    memset(dir, 0, sizeof *dir);
}
