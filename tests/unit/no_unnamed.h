/*
 * no_unnamed.h - unnamed temporaries (O_TMPFILE) taken away through the
 * library's OS fault hook, so that a save goes through a named temporary
 * as on a system without them (test_replace, test_save_under): the hook
 * fails the next "open" while fail_next_open is set (the unnamed file's,
 * the first a save makes of its own), then lets every call through. In a
 * build without unnamed files the save is named anyway: nothing fails.
 * Include after testutil.h.
 */
#ifndef NPYIO_NO_UNNAMED_H
#define NPYIO_NO_UNNAMED_H

#include <errno.h>
#include <string.h>

#include "platform.h"

static int fail_next_open;

static inline int no_unnamed_files(void *ctx, const char *call)
{
    (void)ctx;
    if (fail_next_open && strcmp(call, "open") == 0) {
        fail_next_open = 0;
        /* A build without unnamed files (NPYIO_PORTABLE) makes no such
         * open: this first one is already the named temporary's. */
        return npyio__platform_capabilities().unnamed_files ? EOPNOTSUPP
                                                            : 0;
    }
    return 0;
}

/* Options whose OS fault hook is no_unnamed_files (freed by the caller). */
static inline npyio_options *without_unnamed_files(void)
{
    npyio_options *o = NULL;

    assert_ok(npyio_options_new(&o));
    npyio__options_set_faults(o, no_unnamed_files, NULL);
    return o;
}

#endif /* NPYIO_NO_UNNAMED_H */
