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

uint32_t npyio__crc32_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b)
{
    return (uint32_t)crc32_combine64(crc_a, crc_b, (z_off64_t)len_b);
}
