/*
 * test_npz_damage.c - damaged members of .npz archives (issue 27 item 5):
 * archives of np.savez_compressed with one bit flipped in a member's
 * deflate data (tests/data/npz/damage, gen_npz_damage.py, which records
 * zipfile's and np.load's verdicts). Whatever the flip does to the
 * inflated bytes (a garbled magic or header, a stream that ends early,
 * changed values), the library checks the member's CRC-32 (or meets
 * zlib's error) before it blames the bytes, and says so as zipfile does:
 * NPYIO_E_CHECKSUM where zipfile says "Bad CRC-32", NPYIO_E_FORMAT where
 * zlib refuses the data, in one message naming the member once and the
 * archive once ("member 'b.npy' of PATH is damaged (...)"). The other
 * members still read. Refusals and intact members with bad headers keep
 * their own messages, the member and the archive named once too. The
 * damage check after a failed load reads no byte of the member again.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "testdata.h"

enum { D_ARCHIVE, D_MEMBER, D_STATUS, D_SYMPTOM, D_ZIPFILE, D_NUMPY,
       D_COLUMNS };

static const char *data_path(const char *relative, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s", NPYIO_TEST_DATA_DIR, relative);
    return buf;
}

static size_t occurrences(const char *text, const char *needle)
{
    size_t n = 0, len = strlen(needle);

    for (text = strstr(text, needle); text != NULL;
         text = strstr(text + len, needle))
        n++;
    return n;
}

/* The last error names `what` exactly once. */
#define assert_named_once(what)                                              \
    do {                                                                     \
        if (occurrences(npyio_last_error(), (what)) != 1)                    \
            fail_msg("\"%s\" is not named once in \"%s\"", (what),           \
                     npyio_last_error());                                    \
    } while (0)

/* "member 'b.npy' of PATH is damaged (" (PATH NULL: no " of "). */
static void damage_message(const char *member, const char *path, char *buf,
                           size_t cap)
{
    if (path != NULL)
        snprintf(buf, cap, "member '%s' of %s is damaged (", member, path);
    else
        snprintf(buf, cap, "member '%s' is damaged (", member);
}

/* The symptoms never stand in for the damage. */
static void assert_no_symptom(void)
{
    const char *m = npyio_last_error();

    if (strstr(m, "not an .npy file") != NULL ||
        strstr(m, "inflates to only") != NULL ||
        strstr(m, "header byte") != NULL || strstr(m, "member 1 (") != NULL)
        fail_msg("a symptom reported: \"%s\"", m);
}

/* np.load's keys other than the damaged one load whole. */
static void others_load(const char *path, const char *damaged)
{
    static const char *const keys[] = {"a", "b", "c"};
    size_t i;

    for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        void *data = NULL;

        if (strncmp(damaged, keys[i], 1) == 0)
            continue;
        assert_ok(npz_load_key(path, keys[i], NULL, &data, NULL));
        npyio_free(data);
    }
}

/* npyio_npz_load of the damaged member: zipfile's verdict, said once. */
static void test_load(void **state)
{
    tsv_table t;
    size_t k;

    (void)state;
    tsv_load("npz/damage/manifest.tsv", &t);
    assert_true(t.count >= 7);
    for (k = 0; k < t.count; k++) {
        const tsv_row *r = &t.rows[k];
        char rel[256], path[1024], want[1400], key[64];
        void *data = NULL;

        snprintf(rel, sizeof rel, "npz/damage/%s", r->field[D_ARCHIVE]);
        data_path(rel, path, sizeof path);
        snprintf(key, sizeof key, "%.*s", (int)strlen(r->field[D_MEMBER]) - 4,
                 r->field[D_MEMBER]);
        assert_status(npz_load_key(path, key, NULL, &data, NULL),
                      status_named(r->field[D_STATUS] + 2));
        assert_null(data);
        damage_message(r->field[D_MEMBER], path, want, sizeof want);
        assert_error_contains("npyio_npz_load: ");
        assert_error_contains(want);
        assert_named_once(path);
        assert_named_once(r->field[D_MEMBER]);
        assert_no_symptom();
        others_load(path, key);
    }
    tsv_free(&t);
}

/* From a path and from a stream: open_reader (and the read) and verify
 * give the same verdict; verify's message is the damage message. */
static void test_reader_and_verify(void **state)
{
    tsv_table t;
    size_t k;

    (void)state;
    tsv_load("npz/damage/manifest.tsv", &t);
    for (k = 0; k < t.count; k++) {
        const tsv_row *r = &t.rows[k];
        npyio_status want = status_named(r->field[D_STATUS] + 2);
        char rel[256], path[1024], message[1400];
        unsigned char *bytes;
        npyio_stream *s = NULL;
        npyio_npz *npz = NULL;
        size_t len = 0, index = 0;
        int from_stream;

        snprintf(rel, sizeof rel, "npz/damage/%s", r->field[D_ARCHIVE]);
        data_path(rel, path, sizeof path);
        bytes = read_data_file(rel, &len);
        for (from_stream = 0; from_stream < 2; from_stream++) {
            if (from_stream) {
                assert_ok(npyio_stream_open_memory(bytes, len, NULL, &s));
                assert_ok(npyio_npz_open_stream(s, NULL, &npz));
            } else {
                assert_ok(npyio_npz_open_path(path, NULL, &npz));
            }
            assert_ok(npyio_npz_find(npz, r->field[D_MEMBER], &index, NULL));
            damage_message(r->field[D_MEMBER], from_stream ? NULL : path,
                           message, sizeof message);
            /* The first failure, of the open or of the read (the header
             * may be intact), is zipfile's verdict. */
            assert_status(read_member_whole(npz, index), want);
            assert_no_symptom();
            assert_status(npyio_npz_verify(npz, index), want);
            assert_error_contains(message);
            assert_named_once(r->field[D_MEMBER]);
            if (!from_stream)
                assert_named_once(path);
            /* The other members are whole. */
            assert_ok(npyio_npz_verify(npz, 0));
            assert_ok(npyio_npz_verify(npz, 2));
            assert_ok(npyio_npz_close(npz));
            assert_ok(npyio_stream_close(s));
            s = NULL;
        }
        free(bytes);
    }
    tsv_free(&t);
}

/* Failures that are not damage keep their messages, with the member
 * named once: a refused method, an object array, an intact member whose
 * header lacks a key. (npyio_npz_load() takes an open archive, not a
 * path: its messages name the member, as npyio_reader_open_member()'s do;
 * only damage names the archive's path too.) */
static void test_other_failures_named_once(void **state)
{
    static const struct {
        const char *archive, *key, *member;
        npyio_status status;
        const char *says;
    } cases[] = {
        {"npz/odd.npz", "bzip2", "bzip2.npy", NPYIO_E_UNSUPPORTED,
         "is compressed with bzip2"},
        {"npz/savez.npz", "object_mixed", "object_mixed.npy",
         NPYIO_E_UNSUPPORTED, "Python objects"},
        {"npz/bad/npy_header_no_shape.npz", "b", "b.npy", NPYIO_E_FORMAT,
         "key 'shape' is missing"},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[1024];
        void *data = NULL;

        data_path(cases[i].archive, path, sizeof path);
        assert_status(npz_load_key(path, cases[i].key, NULL, &data, NULL),
                      cases[i].status);
        assert_error_contains(cases[i].says);
        assert_error_contains("npyio_npz_load: ");
        if (strstr(npyio_last_error(), path) != NULL)
            fail_msg("%s named: %s", path, npyio_last_error());
        assert_named_once(cases[i].member);
        if (strstr(npyio_last_error(), "damaged") != NULL)
            fail_msg("%s: not damage: %s", path, npyio_last_error());
    }
}

/* ---- a damaged member's bytes are read once --------------------------------- */

/* An archive in memory behind the caller's callbacks, counting the bytes
 * its reads hand out. */
typedef struct counted {
    const unsigned char *data;
    size_t len;
    int64_t pos;
    size_t served;
} counted;

static size_t counted_at(counted *c, void *buf, size_t cap, int64_t at)
{
    size_t n = at < 0 || (size_t)at >= c->len ? 0 : c->len - (size_t)at;

    n = n < cap ? n : cap;
    memcpy(buf, c->data + (n > 0 ? at : 0), n);
    c->served += n;
    return n;
}

static int counted_read(void *user, void *buf, size_t cap, size_t *got)
{
    counted *c = user;

    *got = counted_at(c, buf, cap, c->pos);
    c->pos += (int64_t)*got;
    return 0;
}

static int counted_pread(void *user, void *buf, size_t cap, int64_t offset,
                         size_t *got)
{
    *got = counted_at(user, buf, cap, offset);
    return 0;
}

static int counted_seek(void *user, int64_t offset, int whence, int64_t *pos)
{
    counted *c = user;

    c->pos = (whence == NPYIO_SEEK_SET   ? 0
              : whence == NPYIO_SEEK_CUR ? c->pos
                                         : (int64_t)c->len) + offset;
    *pos = c->pos;
    return 0;
}

static int counted_length(void *user, int64_t *length)
{
    *length = (int64_t)((counted *)user)->len;
    return 0;
}

/* The damage check after a failed load asks the member's stream what the
 * failed read learnt, and reads on from where it stopped: the member's
 * compressed bytes are read once, not once by the load and again by the
 * check. */
static void test_damage_read_once(void **state)
{
    npyio_stream_ops ops = {sizeof ops, counted_read, NULL, counted_seek,
                            NULL, counted_pread, NULL, counted_length,
                            NULL, NULL, NULL};
    tsv_table t;
    size_t k;

    (void)state;
    tsv_load("npz/damage/manifest.tsv", &t);
    for (k = 0; k < t.count; k++) {
        char rel[256], key[64];
        counted c = {NULL, 0, 0, 0};
        npyio_stream *s = NULL;
        npyio_npz *npz = NULL;
        size_t index = 0;
        int64_t csize = 0;
        void *data = NULL;
        size_t len = 0;
        int ndim = 0;
        int64_t shape[32];

        snprintf(rel, sizeof rel, "npz/damage/%s", t.rows[k].field[D_ARCHIVE]);
        c.data = read_data_file(rel, &c.len);
        snprintf(key, sizeof key, "%.*s",
                 (int)strlen(t.rows[k].field[D_MEMBER]) - 4,
                 t.rows[k].field[D_MEMBER]);
        assert_ok(npyio_stream_open_ops(&ops, &c, NULL, &s));
        assert_ok(npyio_npz_open_stream(s, NULL, &npz));
        assert_ok(npyio_npz_find(npz, key, &index, NULL));
        assert_ok(npyio_npz_stat(npz, index, NPYIO_NPZ_STAT_COMPRESSED_SIZE,
                                 &csize));
        c.served = 0;
        assert_status(npyio_npz_load(npz, index, &data, &len, NULL, 0, &ndim,
                                     shape, 32),
                      status_named(t.rows[k].field[D_STATUS] + 2));
        if (c.served > (size_t)csize)
            fail_msg("%s: %zu bytes read for a member of %lld", rel,
                     c.served, (long long)csize);
        npyio_npz_close(npz);
        npyio_stream_close(s);
        free((void *)c.data);
    }
    tsv_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_reader_and_verify),
        cmocka_unit_test(test_other_failures_named_once),
        cmocka_unit_test(test_damage_read_once),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
