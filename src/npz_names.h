/*
 * npz_names.h - the member names of an archive being written: NumPy's
 * (key + ".npy"), checked so that no extractor could misplace them, and
 * new in the archive under np.load's own lookup (where "x" and "x.npy"
 * both answer to key "x").
 */
#ifndef NPYIO_NPZ_NAMES_H
#define NPYIO_NPZ_NAMES_H

#include "alloc.h"

/* The names so far, in the order of the members; each an npyio__alloc
 * block owned by the set. `slots` is a hash set over them (open
 * addressing, a power of two of slots, at most half full), so that a new
 * name is checked in constant time: each member is there twice, by its
 * name and by its key (a slot: the hash's high 32 bits, then 2 * index
 * + kind + 1 in the low 32; 0 is empty). */
typedef struct npyio__npz_names {
    char **list;
    size_t count, cap;
    uint64_t *slots;
    size_t nslots;
} npyio__npz_names;

/*
 * The member name key + suffix (".npy", or "" for a name copied as it
 * is), checked (UTF-8, no backslash, not absolute, no ".." component, not
 * too long for ZIP) and new in the set, allocated from mem into *out,
 * with room made in the set for one more: the caller adds it
 * (npyio__npz_names_add) or frees it. `where` names the public function.
 */
npyio_status npyio__npz_names_new(npyio__npz_names *n, const npyio__mem *mem,
                                  const char *key, const char *suffix,
                                  const char *where, char **out);

/* Add a name from npyio__npz_names_new: the set owns it from now on. */
void npyio__npz_names_add(npyio__npz_names *n, char *name);

/* Add a copy of a name already in the archive (an append's old members),
 * unchecked. */
npyio_status npyio__npz_names_copy(npyio__npz_names *n, const npyio__mem *mem,
                                   const char *name);

/* Free every name and the list. */
void npyio__npz_names_free(npyio__npz_names *n);

#endif /* NPYIO_NPZ_NAMES_H */
