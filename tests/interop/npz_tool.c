/*
 * npz_tool.c - the C side of the NPZ interop test (npz_check.py):
 *   npz_tool pack OUT LEVEL UNKNOWN ALIGN KEY=FILE.npy ...
 *       write an archive of those .npy files with npyio_npz_*: deflate
 *       LEVEL (0 stores), UNKNOWN 1 writes C-order arrays with an unknown
 *       row count in pieces, ALIGN 0 passes NPYIO_NPZ_WRITE_NO_ALIGN; the
 *       environment's NPZ_TOOL_THREADS sets NPYIO_LIMIT_THREADS, its
 *       NPZ_TOOL_ZLIB (set, non-empty) passes NPYIO_NPZ_WRITE_ZLIB
 *   npz_tool append ARCHIVE LEVEL KEY=FILE.npy ...
 *       add those .npy files to an existing archive (npyio_npz_writer_open_append_path)
 *   npz_tool unpack ARCHIVE DIR
 *       print "index<TAB>key<TAB>is_array<TAB>method<TAB>aligned" per
 *       member and write each readable member's bytes to DIR/<index>.bin
 *   npz_tool list ARCHIVE [untrusted]
 *       print the member count, then "key<TAB>size<TAB>data offset" per
 *       member (with the untrusted preset when asked)
 *   npz_tool rows ARCHIVE KEY FIRST COUNT OUT
 *       read rows [FIRST, FIRST + COUNT) of member KEY into the file OUT,
 *       then verify the member's CRC
 *   npz_tool churn ARCHIVE save|append
 *       forever (the crash test kills it): save, the archive rewritten as
 *       generation g = 1, 2, ... (members "a" and "b", deflated and
 *       stored, every element g); append, one member "g<n>" added per
 *       round, n counting on from the archive's members, every element n
 *   npz_tool minizip ARCHIVE
 *       read every member through minizip's own reader (the cross-check;
 *       archives below 4 GiB): print "name<TAB>size" per member, exit 1
 *       on any error or CRC mismatch
 * Before the command, --via-callbacks=KIND (KIND full, nolock or old, as
 * fd_ops.h makes them) sends pack, append, unpack, list and rows through
 * streams of the caller's callbacks over descriptors
 * (npyio_stream_open_ops): npyio_npz_writer_create_stream,
 * npyio_npz_writer_open_append_stream (into ARCHIVE.tmp, renamed over
 * ARCHIVE after the close) and npyio_npz_open_stream instead of the path
 * calls.
 * Exit 0 on success, 1 with a message on stderr.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unzip.h>

#include "npyio.h"
#include "fd_ops.h"

static int fail(const char *what)
{
    fprintf(stderr, "npz_tool: %s: %s\n", what, npyio_last_error());
    return 1;
}

/* ---- by path or through callbacks ------------------------------------- */

/* --via-callbacks=KIND, or NULL: the path calls. */
static const char *via;

/* The callback stream of the one archive open at a time, and its state. */
static npyio_stream *via_stream;
static fd_user *via_user;

static npyio_status via_open(const char *path, int oflags)
{
    npyio_status st = fd_ops_open(path, oflags, via, &via_stream, &via_user);

    if (st == NPYIO_E_IO)
        fprintf(stderr, "npz_tool: %s: %s\n", path, strerror(errno));
    return st;
}

static npyio_status via_close(void)
{
    npyio_status st = NPYIO_OK;

    if (via_stream != NULL)
        st = fd_ops_close(via_stream, via_user);
    via_stream = NULL;
    via_user = NULL;
    return st;
}

static npyio_status npz_open_any(const char *path, const npyio_options *o,
                                 npyio_npz **npz)
{
    npyio_status st;

    if (via == NULL)
        return npyio_npz_open_path(path, o, npz);
    st = via_open(path, O_RDONLY);
    if (st == NPYIO_OK)
        st = npyio_npz_open_stream(via_stream, o, npz);
    if (st != NPYIO_OK)
        via_close();
    return st;
}

/* st, then the callback stream closed: the first failure. */
static npyio_status then_via_close(npyio_status st)
{
    npyio_status closed = via_close();

    return st != NPYIO_OK ? st : closed;
}

static npyio_status create_any(const char *path, uint32_t flags,
                               const npyio_options *o, npyio_npz_writer **w)
{
    npyio_status st;

    if (via == NULL)
        return npyio_npz_writer_create_path(path, flags, o, w);
    st = via_open(path, O_RDWR | O_CREAT | O_TRUNC);
    if (st == NPYIO_OK)
        st = npyio_npz_writer_create_stream(via_stream, flags & ~NPYIO_WRITE_NO_SYNC,
                                     o, w);
    if (st != NPYIO_OK)
        via_close();
    return st;
}

/* The temporary of an append through callbacks, and its state. */
static npyio_stream *tmp_stream;
static fd_user *tmp_user;
static char tmp_path[4096];

/* An append through callbacks: the archive read-write (so that it can be
 * locked), the new archive written into ARCHIVE.tmp. */
static npyio_status append_open_any(const char *path, npyio_npz_writer **w)
{
    npyio_status st;

    if (via == NULL)
        return npyio_npz_writer_open_append_path(path, NPYIO_WRITE_NO_SYNC,
                                                 NULL, w);
    snprintf(tmp_path, sizeof tmp_path, "%s.tmp", path);
    st = via_open(path, O_RDWR);
    if (st == NPYIO_OK)
        st = fd_ops_open(tmp_path, O_RDWR | O_CREAT | O_TRUNC, via,
                         &tmp_stream, &tmp_user);
    if (st == NPYIO_OK)
        st = npyio_npz_writer_open_append_stream(via_stream, tmp_stream, 0,
                                                 NULL, w);
    if (st != NPYIO_OK) {
        if (tmp_stream != NULL)
            fd_ops_close(tmp_stream, tmp_user);
        tmp_stream = NULL;
        remove(tmp_path);
        via_close();
    }
    return st;
}

/* Close an append (committed: the temporary renamed over the archive) or
 * abandon it (the temporary removed). */
static npyio_status append_close_any(npyio_npz_writer *w, int commit,
                                     const char *path)
{
    npyio_status st = NPYIO_OK;

    if (commit)
        st = npyio_npz_writer_close(w);
    else
        npyio_npz_writer_abort(w);
    if (via == NULL)
        return st;
    if (tmp_stream != NULL && fd_ops_close(tmp_stream, tmp_user) != NPYIO_OK)
        st = st != NPYIO_OK ? st : NPYIO_E_IO;
    tmp_stream = NULL;
    if (st == NPYIO_OK && commit && rename(tmp_path, path) != 0)
        st = NPYIO_E_IO;
    if (st != NPYIO_OK || !commit)
        remove(tmp_path);
    if (via_close() != NPYIO_OK && st == NPYIO_OK)
        st = NPYIO_E_IO;
    return st;
}

/* Write a C-order array's rows in three pieces through a writer of
 * unknown row count. */
static npyio_status add_unknown(npyio_npz_writer *w, const char *key,
                                const npyio_header *h, const void *data,
                                size_t len, int level)
{
    npyio_writer *mw = NULL;
    int64_t rows = npyio_header_shape(h)[0];
    size_t row = rows > 0 ? len / (size_t)rows : 0, first = 0, k;
    npyio_status st = npyio_writer_create_member(w, key, h, level,
                                    NPYIO_WRITE_UNKNOWN_ROWS, &mw);

    for (k = 1; st == NPYIO_OK && k <= 3; k++) {
        size_t upto = (size_t)rows * k / 3;

        st = npyio_writer_write(mw, (const char *)data + first * row,
                                (upto - first) * row);
        first = upto;
    }
    if (st != NPYIO_OK) {
        npyio_writer_abort(mw);
        return st;
    }
    return npyio_writer_close(mw);
}

static int add_file(npyio_npz_writer *w, const char *spec, int level,
                    int unknown)
{
    const char *eq = strchr(spec, '=');
    char key[1024];
    npyio_reader *r = NULL;
    const npyio_header *h;
    npyio_writer *mw = NULL;
    void *data = NULL;
    size_t len = 0;
    npyio_status st;

    if (eq == NULL || (size_t)(eq - spec) >= sizeof key)
        return fprintf(stderr, "npz_tool: bad member %s\n", spec), 1;
    memcpy(key, spec, (size_t)(eq - spec));
    key[eq - spec] = '\0';
    if (npyio_reader_open_path(eq + 1, NULL, &r) != NPYIO_OK)
        return fail(eq + 1);
    h = npyio_reader_header(r);
    if (npyio_dtype_has_objects(npyio_header_dtype(h))) {
        st = npyio_reader_read_pickle(r, &data, &len);
        if (st == NPYIO_OK)
            st = npyio_writer_create_member(w, key, h, level, 0, &mw);
        if (st == NPYIO_OK)
            st = npyio_writer_write(mw, data, len);
        if (st == NPYIO_OK)
            st = npyio_writer_close(mw);
    } else {
        st = npyio_reader_read_alloc(r, 0, &data, &len);
        if (st == NPYIO_OK && unknown && npyio_header_ndim(h) > 0 &&
            !npyio_header_is_fortran_order(h))
            st = add_unknown(w, key, h, data, len, level);
        else if (st == NPYIO_OK)
            st = npyio_npz_writer_add_with_header(w, key, h, data, len, level,
                                                  0);
    }
    npyio_free(data);
    npyio_reader_close(r);
    return st == NPYIO_OK ? 0 : fail(key);
}

static int pack(int argc, char **argv)
{
    int level = atoi(argv[3]), unknown = atoi(argv[4]), i;
    const char *threads = getenv("NPZ_TOOL_THREADS"),
               *zlib = getenv("NPZ_TOOL_ZLIB");
    uint32_t flags = NPYIO_WRITE_NO_SYNC |
                     (atoi(argv[5]) ? 0 : NPYIO_NPZ_WRITE_NO_ALIGN) |
                     (zlib != NULL && *zlib ? NPYIO_NPZ_WRITE_ZLIB : 0);
    npyio_npz_writer *w = NULL;
    npyio_options *o = NULL;
    npyio_status st;

    if (npyio_options_new(&o) != NPYIO_OK ||
        (threads != NULL &&
         npyio_options_set_limit(o, NPYIO_LIMIT_THREADS, atoi(threads)) !=
             NPYIO_OK))
        return fail("options");
    st = create_any(argv[2], flags, o, &w);
    npyio_options_free(o);
    if (st != NPYIO_OK)
        return fail(argv[2]);
    for (i = 6; i < argc; i++) {
        if (add_file(w, argv[i], level, unknown) != 0) {
            npyio_npz_writer_abort(w);
            via_close();
            return 1;
        }
    }
    if (then_via_close(npyio_npz_writer_close(w)) != NPYIO_OK)
        return fail(argv[2]);
    return 0;
}

static int append(int argc, char **argv)
{
    int level = atoi(argv[3]), i;
    npyio_npz_writer *w = NULL;

    if (append_open_any(argv[2], &w) != NPYIO_OK)
        return fail(argv[2]);
    for (i = 4; i < argc; i++) {
        if (add_file(w, argv[i], level, 0) != 0) {
            append_close_any(w, 0, argv[2]);
            return 1;
        }
    }
    return append_close_any(w, 1, argv[2]) == NPYIO_OK ? 0 : fail(argv[2]);
}

static int write_member(npyio_npz *npz, size_t i, const char *dir)
{
    char path[4096], buf[65536];
    npyio_stream *s = NULL;
    size_t got = sizeof buf;
    FILE *f;

    snprintf(path, sizeof path, "%s/%zu.bin", dir, i);
    f = fopen(path, "wb");
    if (f == NULL || npyio_stream_open_member(npz, i, &s) != NPYIO_OK)
        return fail(path);
    while (got == sizeof buf) {
        if (npyio_stream_read(s, buf, sizeof buf, &got) != NPYIO_OK)
            return fail(path);
        fwrite(buf, 1, got, f);
    }
    npyio_stream_close(s);
    return fclose(f) == 0 ? 0 : 1;
}

static int unpack(const char *archive, const char *dir)
{
    npyio_npz *npz = NULL;
    size_t i;

    if (npz_open_any(archive, NULL, &npz) != NPYIO_OK)
        return fail(archive);
    for (i = 0; i < npyio_npz_count(npz); i++) {
        int64_t is_array = 0, method = 0, aligned = 0, readable = 0;

        npyio_npz_stat(npz, i, NPYIO_NPZ_STAT_IS_ARRAY, &is_array);
        npyio_npz_stat(npz, i, NPYIO_NPZ_STAT_METHOD, &method);
        npyio_npz_stat(npz, i, NPYIO_NPZ_STAT_ALIGNED, &aligned);
        npyio_npz_stat(npz, i, NPYIO_NPZ_STAT_READABLE, &readable);
        printf("%zu\t%s\t%lld\t%lld\t%lld\n", i, npyio_npz_key(npz, i),
               (long long)is_array, (long long)method, (long long)aligned);
        if (readable && write_member(npz, i, dir) != 0)
            return 1;
    }
    if (then_via_close(npyio_npz_close(npz)) != NPYIO_OK)
        return fail(archive);
    return 0;
}

static int list(const char *archive, int untrusted)
{
    npyio_options *o = NULL;
    npyio_npz *npz = NULL;
    npyio_status st;
    size_t i;

    if (npyio_options_new(&o) != NPYIO_OK ||
        (untrusted && npyio_options_set_untrusted(o) != NPYIO_OK))
        return fail("options");
    st = npz_open_any(archive, o, &npz);
    npyio_options_free(o);
    if (st != NPYIO_OK) {
        printf("%s\n", npyio_status_string(st));
        return fail(archive);
    }
    printf("%zu\n", npyio_npz_count(npz));
    for (i = 0; i < npyio_npz_count(npz); i++) {
        int64_t size = 0, at = 0;

        npyio_npz_stat(npz, i, NPYIO_NPZ_STAT_SIZE, &size);
        npyio_npz_stat(npz, i, NPYIO_NPZ_STAT_DATA_OFFSET, &at);
        printf("%s\t%lld\t%lld\n", npyio_npz_key(npz, i), (long long)size,
               (long long)at);
    }
    if (then_via_close(npyio_npz_close(npz)) != NPYIO_OK)
        return fail(archive);
    return 0;
}

static int rows(char **argv)
{
    npyio_npz *npz = NULL;
    npyio_reader *r = NULL;
    int64_t first = atoll(argv[4]), count = atoll(argv[5]);
    size_t index = 0, len;
    void *buf;
    FILE *f;

    if (npz_open_any(argv[2], NULL, &npz) != NPYIO_OK ||
        npyio_npz_find(npz, argv[3], &index, NULL) != NPYIO_OK ||
        npyio_reader_open_member(npz, index, &r) != NPYIO_OK)
        return fail(argv[2]);
    len = (size_t)count *
          npyio_dtype_itemsize(npyio_header_dtype(npyio_reader_header(r)));
    buf = malloc(len + 1);
    if (npyio_reader_read_rows(r, first, count, buf, len, 0) != NPYIO_OK)
        return fail("rows");
    f = fopen(argv[6], "wb");
    fwrite(buf, 1, len, f);
    fclose(f);
    free(buf);
    npyio_reader_close(r);
    if (npyio_npz_verify(npz, index) != NPYIO_OK)
        return fail("verify");
    if (then_via_close(npyio_npz_close(npz)) != NPYIO_OK)
        return fail(argv[2]);
    return 0;
}

static int churn(const char *archive, const char *mode)
{
    static int64_t values[4096];
    int64_t shape = 4096, g, k;
    npyio_dtype *i8 = NULL;
    npyio_header *h = NULL;

    if (npyio_dtype_parse("<i8", 3, NULL, &i8) != NPYIO_OK ||
        npyio_header_new(i8, 1, &shape, 0, &h) != NPYIO_OK)
        return fail("header");
    for (g = 1;; g++) {
        npyio_npz_writer *w = NULL;
        npyio_npz *npz = NULL;
        char key[32];
        int64_t n = g;

        if (strcmp(mode, "append") == 0) {
            if (npyio_npz_open_path(archive, NULL, &npz) != NPYIO_OK)
                return fail(archive);
            n = (int64_t)npyio_npz_count(npz);
            npyio_npz_close(npz);
        }
        for (k = 0; k < shape; k++)
            values[k] = n;
        if (strcmp(mode, "append") == 0) {
            snprintf(key, sizeof key, "g%lld", (long long)n);
            if (npyio_npz_writer_open_append_path(archive, NPYIO_WRITE_WAIT_FOR_LOCK,
                                      NULL, &w) != NPYIO_OK ||
                npyio_npz_writer_add_with_header(w, key, h, values,
                                                 sizeof values,
                                                 (int)(n % 2) * 6,
                                                 0) != NPYIO_OK ||
                npyio_npz_writer_close(w) != NPYIO_OK)
                return fail(archive);
        } else {
            const char *keys[2] = {"a", "b"};
            const npyio_header *hs[2] = {h, h};
            const void *ds[2] = {values, values};
            size_t ls[2] = {sizeof values, sizeof values};

            if (npyio_npz_writer_create_path(archive, 0, NULL,
                                             &w) != NPYIO_OK ||
                npyio_npz_writer_add_with_header(w, keys[0], hs[0], ds[0],
                                                 ls[0], 6, 0) !=
                    NPYIO_OK ||
                npyio_npz_writer_add_with_header(w, keys[1], hs[1], ds[1],
                                                 ls[1], 0, 0) !=
                    NPYIO_OK ||
                npyio_npz_writer_close(w) != NPYIO_OK)
                return fail(archive);
        }
    }
}

static int minizip_read(const char *archive)
{
    unzFile z = unzOpen64(archive);
    static char buf[1 << 16];
    int rc;

    if (z == NULL)
        return fprintf(stderr, "npz_tool: minizip cannot open %s\n",
                       archive), 1;
    for (rc = unzGoToFirstFile(z); rc == UNZ_OK; rc = unzGoToNextFile(z)) {
        char name[65536];
        unz_file_info64 info;
        long long total = 0;
        int n;

        if (unzGetCurrentFileInfo64(z, &info, name, sizeof name, NULL, 0,
                                    NULL, 0) != UNZ_OK ||
            unzOpenCurrentFile(z) != UNZ_OK)
            return fprintf(stderr, "npz_tool: minizip: %s\n", name), 1;
        while ((n = unzReadCurrentFile(z, buf, sizeof buf)) > 0)
            total += n;
        if (n < 0 || (unsigned long long)total != info.uncompressed_size ||
            unzCloseCurrentFile(z) != UNZ_OK)
            return fprintf(stderr, "npz_tool: minizip read %s: %d\n", name,
                           n), 1;
        printf("%s\t%lld\n", name, total);
    }
    unzClose(z);
    return rc == UNZ_END_OF_LIST_OF_FILE ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (!fd_ops_option(&argc, &argv, &via)) {
        fprintf(stderr, "npz_tool: unknown kind of table %s\n", via);
        return 2;
    }
    if (argc >= 6 && strcmp(argv[1], "pack") == 0)
        return pack(argc, argv);
    if (argc >= 4 && strcmp(argv[1], "append") == 0)
        return append(argc, argv);
    if (argc == 4 && strcmp(argv[1], "unpack") == 0)
        return unpack(argv[2], argv[3]);
    if ((argc == 3 || argc == 4) && strcmp(argv[1], "list") == 0)
        return list(argv[2], argc == 4);
    if (argc == 7 && strcmp(argv[1], "rows") == 0)
        return rows(argv);
    if (argc == 4 && strcmp(argv[1], "churn") == 0)
        return churn(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "minizip") == 0)
        return minizip_read(argv[2]);
    fprintf(stderr, "usage: see npz_tool.c\n");
    return 2;
}
