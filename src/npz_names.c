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

/* np.load could take one member for the other when (it looks a key up
 * as a member name first, then among the names without ".npy": "x" and
 * "x.npy" both answer to key "x"; "x.npy" shadows key "x.npy" of
 * "x.npy.npy"): their keys are equal, or one's key is the other's name.
 * The set finds each in one probe sequence: strings of kind KEY are
 * members' keys, of kind NAME their names. */
enum { NAME = 0, KEY = 1 };

static uint64_t hash_text(const char *s, size_t len, unsigned kind)
{
    uint64_t h = 14695981039346656037ull ^ kind;
    size_t i;

    for (i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    h ^= h >> 33; /* FNV's low bits mix poorly: a finalizer's do */
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

/* A slot: the hash's high half, then 2 * index + kind + 1 (0: empty). */
#define SLOT_ENTRY(v) ((size_t)((v) & 0xFFFFFFFFu))
#define SLOT_TAG(h) ((uint64_t)(h) >> 32 << 32)

/* The slot holding (s, kind), or the empty slot where it would go; *tag
 * what a slot holding it carries besides the entry. */
static uint64_t *find_slot(const npyio__npz_names *n, const char *s,
                           size_t len, unsigned kind, uint64_t *tag)
{
    uint64_t h = hash_text(s, len, kind);
    size_t mask = n->nslots - 1, j = (size_t)h & mask;

    *tag = SLOT_TAG(h);
    for (;; j = (j + 1) & mask) {
        uint64_t v = n->slots[j];
        size_t e = SLOT_ENTRY(v), i = (e - 1) >> 1;

        if (e == 0)
            return &n->slots[j];
        if ((v & ~(uint64_t)0xFFFFFFFFu) == *tag &&
            ((e - 1) & 1) == kind &&
            (kind == KEY ? key_length(n->list[i])
                         : strlen(n->list[i])) == len &&
            memcmp(n->list[i], s, len) == 0)
            return &n->slots[j];
    }
}

/* Member i into the set by name and by key; a string already there keeps
 * its first member (appends copy old archives as they are). */
static void hash_member(npyio__npz_names *n, size_t i)
{
    const char *name = n->list[i];
    uint64_t tag = 0, *p = find_slot(n, name, strlen(name), NAME, &tag);

    if (*p == 0)
        *p = tag | (2 * i + NAME + 1);
    p = find_slot(n, name, key_length(name), KEY, &tag);
    if (*p == 0)
        *p = tag | (2 * i + KEY + 1);
}

/* The first member (+ 1) that (s, kind) names, or 0. */
static size_t lookup(const npyio__npz_names *n, const char *s, size_t len,
                     unsigned kind)
{
    uint64_t tag = 0;
    size_t e = n->nslots ? SLOT_ENTRY(*find_slot(n, s, len, kind, &tag))
                         : 0;

    return e == 0 ? 0 : ((e - 1) >> 1) + 1;
}

/* The first member np.load could confuse with `name`, + 1; or 0. */
static size_t first_clash(const npyio__npz_names *n, const char *name)
{
    size_t len = strlen(name), k = key_length(name), best = 0, c[3], i;

    c[0] = lookup(n, name, k, KEY);  /* the same key */
    c[1] = lookup(n, name, k, NAME); /* a member named as our key */
    c[2] = lookup(n, name, len, KEY); /* a member keyed as our name */
    for (i = 0; i < 3; i++)
        if (c[i] != 0 && (best == 0 || c[i] < best))
            best = c[i];
    return best;
}

/* Room for one more name, in the list and in the set. */
static npyio_status make_room(npyio__npz_names *n, const npyio__mem *mem)
{
    size_t cap = n->cap ? 2 * n->cap : 16, slots, i;
    uint64_t *fresh = NULL;
    npyio_status st = NPYIO_OK;

    if (n->count >= n->cap) {
        st = npyio__realloc(mem, (void **)&n->list, cap * sizeof *n->list,
                            "member names");
        if (st != NPYIO_OK)
            return st;
        n->cap = cap;
    }
    if (4 * (n->count + 1) <= n->nslots)
        return NPYIO_OK;
    if (n->count >= 0x7FFFFFFF) /* entries fit 32 bits */
        return npyio__fail(NPYIO_E_OVERFLOW, "member names: more than "
                           "2^31 - 1 members");
    slots = n->nslots ? 2 * n->nslots : 64;
    st = npyio__alloc_array(mem, slots, sizeof *n->slots, "member names",
                            (void **)&fresh);
    if (st != NPYIO_OK)
        return st; /* the old set stays whole */
    memset(fresh, 0, slots * sizeof *fresh);
    npyio__free(n->slots);
    n->slots = fresh;
    n->nslots = slots;
    for (i = 0; i < n->count; i++)
        hash_member(n, i);
    return NPYIO_OK;
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
    i = first_clash(n, name);
    if (i != 0) {
        npyio__free(name);
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: key '%s': the archive "
                           "already has a member '%s', which np.load would "
                           "find under the same key", where,
                           npyio__show(key, len, shown, sizeof shown),
                           npyio__show(n->list[i - 1],
                                       strlen(n->list[i - 1]), other,
                                       sizeof other));
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
    n->list[n->count] = name; /* room made by npyio__npz_names_new */
    hash_member(n, n->count++);
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
    n->list[n->count] = copy;
    hash_member(n, n->count++);
    return NPYIO_OK;
}

void npyio__npz_names_free(npyio__npz_names *n)
{
    size_t i;

    for (i = 0; i < n->count; i++)
        npyio__free(n->list[i]);
    npyio__free(n->list);
    npyio__free(n->slots);
    memset(n, 0, sizeof *n);
}
