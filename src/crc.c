/*
 * crc.c - CRC-32 through libdeflate (see crc.h). Combining two CRCs
 * (crc32_combine) stays zlib's: libdeflate has no such call.
 */
#include "crc.h"

#include <libdeflate.h>
#include <zlib.h>

uint32_t npyio__crc32(uint32_t crc, const void *p, size_t len)
{
    return len == 0 ? crc : libdeflate_crc32(crc, p, len);
}

/*
 * zlib's z_off_t is a long, 32 bits on Windows, where crc32_combine64 is
 * not declared either. Combining is linear: crc_a shifted over len_b
 * zero bytes, then crc_b. So a long length is taken in steps of 1 GiB
 * (combining with a CRC of 0 only shifts), on every system alike.
 */
uint32_t npyio__crc32_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b)
{
    const uint64_t step = (uint64_t)1 << 30;
    uLong crc = crc_a;

    for (; len_b > step; len_b -= step)
        crc = crc32_combine(crc, 0, (z_off_t)step);
    return (uint32_t)crc32_combine(crc, crc_b, (z_off_t)len_b);
}
