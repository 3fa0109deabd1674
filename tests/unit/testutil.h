/*
 * testutil.h - what every unit test program includes: cmocka, the public and
 * internal headers, and assertions that print the library's last error
 * message next to the values when they fail.
 */
#ifndef NPYIO_TESTUTIL_H
#define NPYIO_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "npyio.h"
#include "error.h"
#include "options.h"
#include "table.h"

/* A call must return `expected`; on failure, show both statuses by number
 * and name, the expression, and the thread's last error message. */
#define assert_status(expr, expected)                                        \
    do {                                                                     \
        npyio_status st_ = (expr);                                           \
        npyio_status ex_ = (expected);                                       \
        if (st_ != ex_)                                                      \
            fail_msg("%s returned %d (%s), expected %d (%s); last error: %s",\
                     #expr, (int)st_, npyio_status_string(st_), (int)ex_,    \
                     npyio_status_string(ex_), npyio_last_error());          \
    } while (0)

#define assert_ok(expr) assert_status((expr), NPYIO_OK)

/* The last error message must contain `needle`. */
#define assert_error_contains(needle)                                        \
    do {                                                                     \
        const char *msg_ = npyio_last_error();                               \
        if (strstr(msg_, (needle)) == NULL)                                  \
            fail_msg("last error \"%s\" does not contain \"%s\"", msg_,      \
                     (needle));                                              \
    } while (0)

/* The last error message must name the public call made, `called`, and
 * no call inside it: "called: ..." with no "npyio_...: " after it (the
 * library calls its internal bodies, which report the caller's call). */
#define assert_names_only(called)                                            \
    do {                                                                     \
        const char *msg_ = npyio_last_error();                               \
        size_t n_ = strlen(called);                                          \
        if (strncmp(msg_, (called), n_) != 0 ||                              \
            strncmp(msg_ + n_, ": ", 2) != 0 ||                              \
            strncmp(msg_ + n_ + 2, "npyio_", 6) == 0)                        \
            fail_msg("last error \"%s\" names another call than %s alone", \
                     msg_, (called));                                        \
    } while (0)

/* This host's byte order character, '<' or '>', found independently of
 * the library. */
static inline char host_order(void)
{
    const uint16_t one = 1;
    unsigned char first;

    memcpy(&first, &one, 1);
    return first == 1 ? '<' : '>';
}

/* Open member index of an archive as an array and read it whole: the
 * first failure, or NPYIO_OK. */
static inline npyio_status read_member_whole(npyio_npz *npz, size_t index)
{
    npyio_reader *r = NULL;
    void *data = NULL;
    npyio_status st = npyio_reader_open_member(npz, index, &r);

    if (st != NPYIO_OK)
        return st;
    st = npyio_reader_read_alloc(r, 0, &data, NULL);
    npyio_free(data);
    npyio_reader_close(r);
    return st;
}

/* A key's array from the archive at path, as the 1.0 API loads it: the
 * archive opened once, the key found, npyio_npz_load() (native byte
 * order, C order), the archive closed. *len may be NULL. */
static inline npyio_status npz_load_key(const char *path, const char *key,
                                        const npyio_options *o, void **data,
                                        size_t *len)
{
    npyio_npz *npz = NULL;
    size_t index = 0, got = 0;
    char type[512];
    int ndim = 0;
    int64_t shape[64];
    npyio_status st, closed;

    *data = NULL;
    st = npyio_npz_open_path(path, o, &npz);
    if (st != NPYIO_OK)
        return st;
    st = npyio_npz_find(npz, key, &index, NULL);
    if (st == NPYIO_OK)
        st = npyio_npz_load(npz, index, data, &got, type, sizeof type, &ndim,
                            shape, 64);
    closed = npyio_npz_close(npz);
    if (st == NPYIO_OK && closed != NPYIO_OK) {
        npyio_free(*data);
        *data = NULL;
        st = closed;
    }
    if (len != NULL)
        *len = got;
    return st;
}

#endif /* NPYIO_TESTUTIL_H */
