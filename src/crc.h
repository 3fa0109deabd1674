/*
 * crc.h - CRC-32 (the ZIP and zlib polynomial) at the speed the archive
 * layer needs: libdeflate's, which folds with carry-less multiplication
 * where the processor has it (about 3x zlib's crc32 here, so that a stored
 * member read with its check stays near the speed of pread).
 */
#ifndef NPYIO_CRC_H
#define NPYIO_CRC_H

#include <stddef.h>
#include <stdint.h>

/* The CRC-32 of len bytes continued from crc (0 to start), as zlib's
 * crc32() computes it. */
uint32_t npyio__crc32(uint32_t crc, const void *p, size_t len);

/* The CRC-32 of A followed by B, from crc_a of A, crc_b of B and B's
 * length (zlib's crc32_combine, in steps that fit its z_off_t). */
uint32_t npyio__crc32_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b);

#endif /* NPYIO_CRC_H */
