/*
 * npz_tool.c - the C side of the NPZ interop test (npz_check.py):
 *   npz_tool pack OUT LEVEL UNKNOWN ALIGN KEY=FILE.npy ...
 *       write an archive of those .npy files with npyio_npz_*: deflate
 *       LEVEL (0 stores), UNKNOWN 1 writes C-order arrays with an unknown
 *       row count in pieces, ALIGN 0 passes NPYIO_NPZ_WRITE_NO_ALIGN; the
 *       environment's NPZ_TOOL_THREADS sets NPYIO_LIMIT_THREADS
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
 * Exit 0 on success, 1 with a message on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unzip.h>

#include "npyio.h"

static int fail(const char *what)
{
    fprintf(stderr, "npz_tool: %s: %s\n", what, npyio_last_error());
    return 1;
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
            st = npyio_npz_writer_add_with_header(w, key, h, data, len, level, 0);
    }
    npyio_free(data);
    npyio_reader_close(r);
    return st == NPYIO_OK ? 0 : fail(key);
}

static int pack(int argc, char **argv)
{
    int level = atoi(argv[3]), unknown = atoi(argv[4]), i;
    uint32_t flags = NPYIO_WRITE_NO_SYNC |
                     (atoi(argv[5]) ? 0 : NPYIO_NPZ_WRITE_NO_ALIGN);
    npyio_npz_writer *w = NULL;
    const char *threads = getenv("NPZ_TOOL_THREADS");
    npyio_options *o = NULL;
    npyio_status st;

    if (npyio_options_new(&o) != NPYIO_OK ||
        (threads != NULL &&
         npyio_options_set_limit(o, NPYIO_LIMIT_THREADS, atoi(threads)) !=
             NPYIO_OK))
        return fail("options");
    st = npyio_npz_writer_create_path(argv[2], flags, o, &w);
    npyio_options_free(o);
    if (st != NPYIO_OK)
        return fail(argv[2]);
    for (i = 6; i < argc; i++) {
        if (add_file(w, argv[i], level, unknown) != 0) {
            npyio_npz_writer_abort(w);
            return 1;
        }
    }
    return npyio_npz_writer_close(w) == NPYIO_OK ? 0 : fail(argv[2]);
}

static int append(int argc, char **argv)
{
    int level = atoi(argv[3]), i;
    npyio_npz_writer *w = NULL;

    if (npyio_npz_writer_open_append_path(argv[2], NPYIO_WRITE_NO_SYNC, NULL, &w) !=
        NPYIO_OK)
        return fail(argv[2]);
    for (i = 4; i < argc; i++) {
        if (add_file(w, argv[i], level, 0) != 0) {
            npyio_npz_writer_abort(w);
            return 1;
        }
    }
    return npyio_npz_writer_close(w) == NPYIO_OK ? 0 : fail(argv[2]);
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

    if (npyio_npz_open_path(archive, NULL, &npz) != NPYIO_OK)
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
    return npyio_npz_close(npz) == NPYIO_OK ? 0 : fail(archive);
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
    st = npyio_npz_open_path(archive, o, &npz);
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
    return npyio_npz_close(npz) == NPYIO_OK ? 0 : fail(archive);
}

static int rows(char **argv)
{
    npyio_npz *npz = NULL;
    npyio_reader *r = NULL;
    int64_t first = atoll(argv[4]), count = atoll(argv[5]);
    size_t index = 0, len;
    void *buf;
    FILE *f;

    if (npyio_npz_open_path(argv[2], NULL, &npz) != NPYIO_OK ||
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
    return npyio_npz_close(npz) == NPYIO_OK ? 0 : fail(argv[2]);
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
                npyio_npz_writer_add_with_header(w, key, h, values, sizeof values, (int)(n % 2) * 6, 0) != NPYIO_OK ||
                npyio_npz_writer_close(w) != NPYIO_OK)
                return fail(archive);
        } else {
            const char *keys[2] = {"a", "b"};
            const npyio_header *hs[2] = {h, h};
            const void *ds[2] = {values, values};
            size_t ls[2] = {sizeof values, sizeof values};

            if (npyio_npz_writer_create_path(archive, 0, NULL, &w) != NPYIO_OK ||
                npyio_npz_writer_add_with_header(w, keys[0], hs[0], ds[0], ls[0], 6, 0) !=
                    NPYIO_OK ||
                npyio_npz_writer_add_with_header(w, keys[1], hs[1], ds[1], ls[1], 0, 0) !=
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
