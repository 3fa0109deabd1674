/*
 * options.c - the npyio_options handle: resource limits and the allocator
 * that handles made with it copy when they are created. Knows nothing of
 * the formats; the modules that enforce a limit read it through
 * npyio__limit().
 */
#include "error.h"
#include "options.h"
#include "table.h"

#include <stdlib.h>
#include <string.h>

/* One past the highest NPYIO_LIMIT_* this version knows. */
#define LIMIT_END 10


struct npyio_options {
    uint32_t magic;
    bool in_block;  /* from npyio__options_new_in: an npyio__alloc block */
    int64_t limits[LIMIT_END];
    npyio_allocator allocator;
    void *allocator_user;
    npyio__faults faults; /* the tests' only */
};

static const int64_t default_limits[LIMIT_END] = {
    [NPYIO_LIMIT_HEADER_SIZE] = 10000,
    [NPYIO_LIMIT_NDIM] = 64,
    [NPYIO_LIMIT_DEPTH] = 32,
    [NPYIO_LIMIT_NPZ_MEMBERS] = INT64_MAX,
    [NPYIO_LIMIT_NPZ_MEMBER_BYTES] = INT64_MAX,
    [NPYIO_LIMIT_NPZ_RATIO] = 1100,
    [NPYIO_LIMIT_ALLOC_BYTES] = INT64_MAX,
    [NPYIO_LIMIT_NPZ_TOTAL_BYTES] = INT64_MAX,
    [NPYIO_LIMIT_THREADS] = 1,
};

/* Names for messages, as the header spells them. */
static const char *const limit_names[LIMIT_END] = {
    [NPYIO_LIMIT_HEADER_SIZE] = "NPYIO_LIMIT_HEADER_SIZE",
    [NPYIO_LIMIT_NDIM] = "NPYIO_LIMIT_NDIM",
    [NPYIO_LIMIT_DEPTH] = "NPYIO_LIMIT_DEPTH",
    [NPYIO_LIMIT_NPZ_MEMBERS] = "NPYIO_LIMIT_NPZ_MEMBERS",
    [NPYIO_LIMIT_NPZ_MEMBER_BYTES] = "NPYIO_LIMIT_NPZ_MEMBER_BYTES",
    [NPYIO_LIMIT_NPZ_RATIO] = "NPYIO_LIMIT_NPZ_RATIO",
    [NPYIO_LIMIT_ALLOC_BYTES] = "NPYIO_LIMIT_ALLOC_BYTES",
    [NPYIO_LIMIT_NPZ_TOTAL_BYTES] = "NPYIO_LIMIT_NPZ_TOTAL_BYTES",
    [NPYIO_LIMIT_THREADS] = "NPYIO_LIMIT_THREADS",
};

static void set_defaults(npyio_options *options, bool in_block)
{
    options->magic = NPYIO__MAGIC_OPTIONS;
    options->in_block = in_block;
    memcpy(options->limits, default_limits, sizeof options->limits);
    options->allocator = npyio__default_allocator;
    options->allocator_user = NULL;
    memset(&options->faults, 0, sizeof options->faults);
}

static bool known_limit(npyio_limit which)
{
    return which >= NPYIO_LIMIT_HEADER_SIZE && which < LIMIT_END;
}

static npyio_status check_options(const npyio_options *options,
                                  const char *where)
{
    if (options == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: options is NULL", where);
    if (options->magic != NPYIO__MAGIC_OPTIONS)
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: the pointer given as options is not a "
                           "live npyio_options handle", where);
    return NPYIO_OK;
}

static npyio_status check_limit_name(npyio_limit which, const char *where)
{
    if (!known_limit(which))
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: limit %d is not known to libnpyio %s", where,
                           (int)which, NPYIO_VERSION_STRING);
    return NPYIO_OK;
}

npyio_status npyio_options_new(npyio_options **out)
{
    npyio_options *options;

    if (out == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "npyio_options_new: out is NULL");
    *out = NULL;
    /* The one allocation not routed through npyio__alloc: the handle that
     * carries the allocator cannot be made by it. */
    options = malloc(sizeof *options);
    if (options == NULL)
        return npyio__fail(NPYIO_E_NOMEM,
                           "npyio_options_new: allocating %zu bytes failed",
                           sizeof *options);
    set_defaults(options, false);
    *out = options;
    return NPYIO_OK;
}

npyio_status npyio__options_new_in(const npyio__mem *mem,
                                   npyio_options **out)
{
    npyio_status st = npyio__alloc(mem, sizeof **out, "options",
                                   (void **)out);

    if (st != NPYIO_OK)
        return st;
    set_defaults(*out, true);
    return NPYIO_OK;
}

npyio_status npyio__options_copy_in(const npyio__mem *mem,
                                    const npyio_options *from,
                                    npyio_options **out)
{
    npyio_status st = npyio__options_new_in(mem, out);

    if (st == NPYIO_OK && from != NULL) {
        memcpy((*out)->limits, from->limits, sizeof from->limits);
        (*out)->allocator = from->allocator;
        (*out)->allocator_user = from->allocator_user;
        (*out)->faults = from->faults;
    }
    return st;
}

npyio_status npyio__options_from_mem(const npyio__mem *mem,
                                     npyio_options **out)
{
    npyio_status st = npyio__options_new_in(mem, out);

    if (st == NPYIO_OK) {
        (*out)->allocator = mem->ops;
        (*out)->allocator_user = mem->user;
        (*out)->limits[NPYIO_LIMIT_ALLOC_BYTES] = (int64_t)mem->max_alloc;
        (*out)->faults = mem->faults;
    }
    return st;
}

void npyio_options_free(npyio_options *options)
{
    if (options == NULL || options->magic != NPYIO__MAGIC_OPTIONS)
        return;
    options->magic = NPYIO__MAGIC_DEAD;
    if (options->in_block)
        npyio__free(options);
    else
        free(options);
}

npyio_status npyio_options_set_limit(npyio_options *options,
                                     npyio_limit which, int64_t value)
{
    static const char where[] = "npyio_options_set_limit";
    npyio_status st;

    st = check_options(options, where);
    if (st == NPYIO_OK)
        st = check_limit_name(which, where);
    if (st != NPYIO_OK)
        return st;
    if (value < 0)
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: %s cannot be negative (%lld given)", where,
                           limit_names[which], (long long)value);
    if (which == NPYIO_LIMIT_DEPTH && value > NPYIO__MAX_DEPTH)
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: NPYIO_LIMIT_DEPTH can be at most %d (%lld "
                           "given)", where, NPYIO__MAX_DEPTH,
                           (long long)value);
    options->limits[which] = value;
    return NPYIO_OK;
}

npyio_status npyio_options_get_limit(const npyio_options *options,
                                     npyio_limit which, int64_t *value)
{
    static const char where[] = "npyio_options_get_limit";
    npyio_status st;

    if (value == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG, "%s: value is NULL", where);
    *value = 0;
    st = options == NULL ? NPYIO_OK : check_options(options, where);
    if (st == NPYIO_OK)
        st = check_limit_name(which, where);
    if (st != NPYIO_OK)
        return st;
    *value = npyio__limit(options, which);
    return NPYIO_OK;
}

npyio_status npyio_options_set_allocator(npyio_options *options,
                                         const npyio_allocator *allocator,
                                         void *user)
{
    static const char where[] = "npyio_options_set_allocator: allocator";
    npyio_allocator copy;
    npyio_status st;

    st = check_options(options, "npyio_options_set_allocator");
    if (st != NPYIO_OK)
        return st;
    if (allocator == NULL) {
        options->allocator = npyio__default_allocator;
        options->allocator_user = NULL;
        return NPYIO_OK;
    }
    st = npyio__copy_table(&copy, sizeof copy, allocator,
                           offsetof(npyio_allocator, free) +
                               sizeof allocator->free,
                           where);
    if (st != NPYIO_OK)
        return st;
    if (copy.alloc == NULL || copy.free == NULL)
        return npyio__fail(NPYIO_E_INVALID_ARG,
                           "%s: alloc and free are required, %s is NULL",
                           where, copy.alloc == NULL ? "alloc" : "free");
    options->allocator = copy;
    options->allocator_user = user;
    return NPYIO_OK;
}

void npyio__mem_init(npyio__mem *mem, const npyio_options *options)
{
    if (options == NULL) {
        npyio__mem_default(mem);
        return;
    }
    mem->ops = options->allocator;
    mem->user = options->allocator_user;
    mem->max_alloc = (uint64_t)options->limits[NPYIO_LIMIT_ALLOC_BYTES];
    mem->faults = options->faults;
}

const npyio__faults *npyio__options_faults(const npyio_options *options)
{
    return options != NULL ? &options->faults : NULL;
}

void npyio__options_set_faults(npyio_options *options,
                               int (*fn)(void *ctx, const char *call),
                               void *ctx)
{
    options->faults.fn = fn;
    options->faults.ctx = ctx;
}

void npyio__options_set_inflate(npyio_options *options, int inflate,
                                bool no_decompressor)
{
    options->faults.inflate = inflate;
    options->faults.no_decompressor = no_decompressor;
}

void npyio__options_set_deflate(npyio_options *options, bool no_compressor)
{
    options->faults.no_compressor = no_compressor;
}

int64_t npyio__limit(const npyio_options *options, npyio_limit which)
{
    const int64_t *limits = options ? options->limits : default_limits;

    return limits[which];
}

/* The preset for untrusted input, as the header documents it: only the
 * limits listed here are set, so that a limit added later (and the
 * caller's thread count, which bounds no input) keeps its value. */
static const struct {
    npyio_limit which;
    int64_t value;
} untrusted_limits[] = {
    {NPYIO_LIMIT_HEADER_SIZE, 10000},
    {NPYIO_LIMIT_NDIM, 32},
    {NPYIO_LIMIT_DEPTH, 16},
    {NPYIO_LIMIT_NPZ_MEMBERS, 4096},
    {NPYIO_LIMIT_NPZ_MEMBER_BYTES, (int64_t)256 << 20},
    {NPYIO_LIMIT_NPZ_RATIO, 1100},
    {NPYIO_LIMIT_ALLOC_BYTES, ((int64_t)256 << 20) + ((int64_t)1 << 20)},
    {NPYIO_LIMIT_NPZ_TOTAL_BYTES, (int64_t)1 << 30},
};

npyio_status npyio_options_set_untrusted(npyio_options *options)
{
    size_t i;

    if (options == NULL || options->magic != NPYIO__MAGIC_OPTIONS)
        return npyio__fail(NPYIO_E_INVALID_ARG, "npyio_options_set_untrusted:"
                           " %s", options == NULL ? "options is NULL"
                                                  : "not an options handle");
    for (i = 0; i < sizeof untrusted_limits / sizeof untrusted_limits[0]; i++)
        options->limits[untrusted_limits[i].which] = untrusted_limits[i].value;
    return NPYIO_OK;
}
