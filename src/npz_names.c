/*
 * npz_names.c - the member names of an archive being written (see
 * npz_names.h).
 */
#include "alloc.h"
#include "error.h"
#include "npz_names.h"

#include <string.h>

#define MAX_NAME 0xFFF0 /* minizip refuses names over 0xFFFF */

/* A key NumPy would accept and no extractor could misplace: UTF-8, no
 * backslash, no absolute name, no ".." component. */
static npyio_status check_key(const char *key, const char *where)
{
    const unsigned char *k = (const unsigned char *)key;
    size_t len = strlen(key), i, step;
    const char *c;
    char shown[96];

    npyio__show(key, len, shown, sizeof shown);
    if (len > MAX_NAME - 4)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: key of %zu bytes is "
                           "too long for a ZIP name", where, len);
    for (i = 0; i < len; i += step) {
        step = npyio__utf8_sequence(k + i, len - i);
        if (step == 0)
            return npyio__fail(NPYIO_E_INVALID_ARG, "%s: key '%s' is not "
                               "UTF-8", where, shown);
    }
    if (strchr(key, '\\') != NULL || key[0] == '/')
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: key '%s' %s", where,
                           shown, key[0] == '/' ? "is absolute"
                                                : "holds a backslash");
    for (c = key; c != NULL; c = strchr(c, '/')) {
        if (*c == '/')
            c++;
        if (strncmp(c, "..", 2) == 0 && (c[2] == '/' || c[2] == '\0'))
            return npyio__fail(NPYIO_E_INVALID_ARG, "%s: key '%s' has a "
                               "'..' component", where, shown);
    }
    return NPYIO_OK;
}

/* The length of NumPy's key for a member name: without ".npy". */
static size_t key_length(const char *name)
{
    size_t len = strlen(name);

    return len >= 4 && strcmp(name + len - 4, ".npy") == 0 ? len - 4 : len;
}

/* Whether np.load could take one member for the other: it looks a key up
 * as a member name first, then among the names without ".npy" ("x" and
 * "x.npy" both answer to key "x"; "x.npy" shadows key "x.npy" of
 * "x.npy.npy"). */
static bool names_clash(const char *a, const char *b)
{
    size_t ka = key_length(a), kb = key_length(b);

    return strcmp(a, b) == 0 ||
           (ka == kb && strncmp(a, b, ka) == 0) ||
           (ka == strlen(b) && strncmp(a, b, ka) == 0) ||
           (kb == strlen(a) && strncmp(a, b, kb) == 0);
}

/* Room for one more name. */
static npyio_status make_room(npyio__npz_names *n, const npyio__mem *mem)
{
    size_t cap = n->cap ? 2 * n->cap : 16;
    npyio_status st;

    if (n->count < n->cap)
        return NPYIO_OK;
    st = npyio__realloc(mem, (void **)&n->list, cap * sizeof *n->list,
                        "member names");
    if (st == NPYIO_OK)
        n->cap = cap;
    return st;
}

npyio_status npyio__npz_names_new(npyio__npz_names *n, const npyio__mem *mem,
                                  const char *key, const char *suffix,
                                  const char *where, char **out)
{
    size_t len = strlen(key), more = strlen(suffix) + 1, i;
    char *name = NULL, shown[96], other[96];
    npyio_status st = check_key(key, where);

    if (st == NPYIO_OK)
        st = npyio__alloc(mem, len + more, "a member name",
                          (void **)&name);
    if (st != NPYIO_OK)
        return st;
    memcpy(name, key, len);
    memcpy(name + len, suffix, more);
    for (i = 0; i < n->count; i++) {
        if (names_clash(n->list[i], name)) {
            npyio__free(name);
            return npyio__fail(NPYIO_E_INVALID_ARG, "%s: key '%s': the "
                               "archive already has a member '%s', which "
                               "np.load would find under the same key",
                               where,
                               npyio__show(key, len, shown, sizeof shown),
                               npyio__show(n->list[i], strlen(n->list[i]),
                                           other, sizeof other));
        }
    }
    st = make_room(n, mem);
    if (st != NPYIO_OK) {
        npyio__free(name);
        return st;
    }
    *out = name;
    return NPYIO_OK;
}

void npyio__npz_names_add(npyio__npz_names *n, char *name)
{
    n->list[n->count++] = name; /* room made by npyio__npz_names_new */
}

npyio_status npyio__npz_names_copy(npyio__npz_names *n, const npyio__mem *mem,
                                   const char *name)
{
    size_t len = strlen(name) + 1;
    char *copy = NULL;
    npyio_status st = make_room(n, mem);

    if (st == NPYIO_OK)
        st = npyio__alloc(mem, len, "a member name", (void **)&copy);
    if (st != NPYIO_OK)
        return st;
    memcpy(copy, name, len);
    n->list[n->count++] = copy;
    return NPYIO_OK;
}

void npyio__npz_names_free(npyio__npz_names *n)
{
    size_t i;

    for (i = 0; i < n->count; i++)
        npyio__free(n->list[i]);
    npyio__free(n->list);
    memset(n, 0, sizeof *n);
}
