/*
 * printable.c - Python's str.isprintable() of one code point (see
 * printable.h). The only library file that includes the generated
 * table.
 */
#include "printable.h"

#include <stddef.h>

#include "unicode_table.h"

/* The Latin-1 rule spelled out (the table starts above U+00FF), then a
 * binary search of the generated ranges of non-printable code points. */
bool npyio__printable(uint32_t code_point)
{
    size_t lo = 0,
           hi = sizeof nonprintable_ranges / sizeof nonprintable_ranges[0];

    if (code_point < 0x100)
        return !(code_point < 0x20 || code_point == 0x7F ||
                 (code_point >= 0x80 && code_point <= 0xA0) ||
                 code_point == 0xAD);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (code_point < nonprintable_ranges[mid][0])
            hi = mid;
        else if (code_point > nonprintable_ranges[mid][1])
            lo = mid + 1;
        else
            return false;
    }
    return code_point <= 0x10FFFF;
}
