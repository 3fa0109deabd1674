/*
 * cast.h - conversion of numeric elements from one type to another, as
 * NumPy's astype does it: the rule that allows a conversion (np.can_cast),
 * decided once into a plan, then applied to any number of elements (a
 * block at a time: the plan keeps no position). Pure functions over
 * memory; knows nothing of streams, headers or files.
 */
#ifndef NPYIO_CAST_H
#define NPYIO_CAST_H

#include "alloc.h"
#include "dtype.h"

/* NumPy's casting rules, weakest first ('no' and 'equiv' are not
 * offered: a conversion that changes nothing needs no rule). */
typedef enum npyio__casting {
    NPYIO__CAST_SAFE = 0,
    NPYIO__CAST_SAME_KIND,
    NPYIO__CAST_UNSAFE
} npyio__casting;

/* One side of a conversion: a numeric scalar type. */
typedef struct npyio__cast_side {
    char kind;     /* 'b', 'i', 'u', 'f', 'c' (NPYIO_KIND_*) */
    size_t size;   /* itemsize in bytes */
    char order;    /* '<', '>', or '|' for one byte */
    bool swap;     /* stored in the other byte order than this host's */
    char name[16]; /* NumPy's dtype.str, for messages */
} npyio__cast_side;

/* An integer target's bounds for floats (see cast.c's set_limits), in
 * doubles and in long doubles. */
typedef struct npyio__cast_limits {
    double hi, lo_excl, lo_incl;
    long double lhi, llo_excl, llo_incl;
} npyio__cast_limits;

typedef struct npyio__cast_plan {
    npyio__cast_side from, to;
    bool copy; /* the same type: bytes moved, swapped if the orders differ */
    npyio__cast_limits limits;
} npyio__cast_plan;

/* The rule the read flags ask for: NPYIO_READ_CAST_UNSAFE (with or
 * without SAME_KIND) is unsafe, SAME_KIND alone same_kind, else safe. */
npyio__casting npyio__cast_rule(uint32_t flags);

/* The rule's name as NumPy spells it ("safe", "same_kind", "unsafe"). */
const char *npyio__cast_rule_name(npyio__casting casting);

/*
 * Plan the conversion of elements of `from` into elements of `to` under
 * `casting`. NPYIO_E_UNSUPPORTED, naming both types, for a type that is
 * not numeric (records, S, U, V, O, M, m, subarrays), a long double of
 * another size than this host's, or a conversion the rule does not allow
 * ("cannot cast '<f8' to '<i4' under the 'safe' rule"). The plan owns no
 * memory (`mem` is for plans that will); free it all the same.
 */
npyio_status npyio__cast_plan_make(const npyio_dtype *from,
                                   const npyio_dtype *to,
                                   npyio__casting casting,
                                   const npyio__mem *mem,
                                   npyio__cast_plan *plan);

void npyio__cast_plan_free(npyio__cast_plan *plan);

/* Whether np.can_cast(from, to, casting) holds for two numeric sides. */
bool npyio__cast_allowed(const npyio__cast_side *from,
                         const npyio__cast_side *to, npyio__casting casting);

/*
 * Convert n elements at src (from's type and byte order) into n elements
 * at dst (to's); the two must not overlap. `first` is the index of src's
 * first element in the whole array, for messages. A float (or complex)
 * that converts to an integer type with a value the type cannot hold
 * (NaN, infinity, out of range: undefined in C, host-dependent in NumPy)
 * is NPYIO_E_OVERFLOW naming the element's index and value; the elements
 * before it are converted, the rest not.
 */
npyio_status npyio__cast_apply(const npyio__cast_plan *plan, const void *src,
                               void *dst, size_t n, uint64_t first);

/* IEEE binary16 from a double, rounded once to nearest even (subnormals,
 * overflow to infinity, NaN payloads kept as NumPy keeps them), and back
 * (exact). */
uint16_t npyio__half_from_double(double d);
double npyio__half_to_double(uint16_t h);

/* The conversions a plain C conversion makes exactly as astype does
 * (cast_direct.c: native integers and f4/f8, not floats to integers),
 * applied to n elements; false, touching nothing, for every other plan. */
bool npyio__cast_direct(const npyio__cast_plan *plan, const void *src,
                        void *dst, size_t n);

#endif /* NPYIO_CAST_H */
