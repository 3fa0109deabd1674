/*
 * test_printable.c - the npyio tool's own str.isprintable()
 * (src/cli/text.c, text_printable, over the table the build copies into
 * its folder) against the library's (src/printable.c, npyio__printable):
 * the same answer for every code point and beyond U+10FFFF, so that the
 * tool's reprs escape what the library's do. A few answers of Python 3.11
 * (chr(c).isprintable(), Unicode 14) pin both, the ends of table ranges
 * and of Latin-1 among them. Runs without Python.
 */
#include <stdint.h>
#include <stdio.h>

#include "printable.h"
#include "text.h"

/* Python 3.11's chr(c).isprintable() for c. */
static const struct {
    uint32_t c;
    int printable;
} python[] = {
    {0x20, 1},    {0x7E, 1},  {0x7F, 0},    {0x9F, 0},    {0xA0, 0},
    {0xA1, 1},    {0xAD, 0},  {0xAE, 1},    {0xFF, 1},    {0x100, 1},
    {0x377, 1},   {0x378, 0}, {0x379, 0},   {0x37A, 1},   {0x2028, 0},
    {0xE000, 0},  {0xFFFD, 1}, {0xFFFF, 0}, {0x1F600, 1}, {0xE0001, 0},
    {0x10FFFD, 0}, {0x10FFFF, 0},
};

int main(void)
{
    uint64_t c;
    size_t i;
    unsigned long differ = 0, wrong = 0;

    for (c = 0; c <= 0x110100; c++)
        if (!text_printable((uint32_t)c) != !npyio__printable((uint32_t)c) &&
            differ++ < 10)
            printf("FAIL U+%04lX: the tool says %d, the library %d\n",
                   (unsigned long)c, text_printable((uint32_t)c),
                   (int)npyio__printable((uint32_t)c));
    if (text_printable(UINT32_MAX) || npyio__printable(UINT32_MAX))
        differ++, printf("FAIL 0xFFFFFFFF is printable\n");
    for (i = 0; i < sizeof python / sizeof python[0]; i++)
        if (!text_printable(python[i].c) != !python[i].printable) {
            wrong++;
            printf("FAIL U+%04lX: the tool says %d, Python %d\n",
                   (unsigned long)python[i].c, text_printable(python[i].c),
                   python[i].printable);
        }
    if (differ || wrong) {
        printf("%lu code points differ, %lu answers are not Python's\n",
               differ, wrong);
        return 1;
    }
    printf("printable: the tool and the library agree on U+0000..U+110100"
           " and %zu answers of Python\n", i);
    return 0;
}
