/*
 * npz_member_core.c - what both files that read a member share
 * (npz_member_core.h): its failures, kept and repeated, and its CRC-32,
 * extended as bytes arrive in order and checked at the member's end.
 *
 * Copyright (c) 2026 The libnpyio developers.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "crc.h"
#include "error.h"
#include "npz_member_core.h"

#include <stdio.h>
#include <string.h>

const char *npyio__member_name(const member_state *m, char *buf, size_t cap)
{
    return npyio__show(m->entry.name, strlen(m->entry.name), buf, cap);
}

/* A failure of the member's bytes: kept, and repeated by later reads. */
npyio_status npyio__member_fail(member_state *m, npyio_status st,
                                const char *what)
{
    char shown[96];

    if (m->failed == NPYIO_OK)
        snprintf(m->why, sizeof m->why, "%s", what);
    m->failed = st;
    return npyio__fail(st, "member '%s': %s", npyio__member_name(m, shown,
                                                          sizeof shown),
                       what);
}

/* Once the CRC covers the whole member: checked, once. */
npyio_status npyio__member_crc_check(member_state *m)
{
    char what[96];

    if (m->crc_pos != m->entry.usize)
        return NPYIO_OK;
    m->crc_pos = m->entry.usize + 1; /* checked */
    if (m->crc == m->entry.crc)
        return NPYIO_OK;
    snprintf(what, sizeof what, "its CRC-32 is %08lx; the directory says "
             "%08lx", (unsigned long)m->crc, (unsigned long)m->entry.crc);
    return npyio__member_fail(m, NPYIO_E_CHECKSUM, what);
}

/* Extend the CRC over the part of [at, at + len) just past what it covers,
 * and check it once it covers the whole member. */
npyio_status npyio__member_crc_over(member_state *m, const unsigned char *buf,
                             size_t len, uint64_t at)
{
    if (m->crc_pos > m->entry.usize)
        return NPYIO_OK; /* checked already */
    if (at <= m->crc_pos && len > m->crc_pos - at) {
        size_t skip = (size_t)(m->crc_pos - at);

        m->crc = npyio__crc32(m->crc, buf + skip, len - skip);
        m->crc_pos = at + len;
    }
    return npyio__member_crc_check(m);
}

