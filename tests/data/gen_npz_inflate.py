#!/usr/bin/python3
"""Generate archives whose deflate data zlib refuses and libdeflate takes.

    /usr/bin/python3 tests/data/gen_npz_inflate.py

Needs only Python (zlib, struct). Each archive holds one member, a.npy
(the bytes of tests/data/arrays/u1.npy), deflated by hand as one dynamic
block that declares 287 literal/length codes: RFC 1951's field allows it,
symbols 286 and 287 are never valid, and zlib refuses the block ("too many
length or distance symbols", as np.load does) where libdeflate 1.14
inflates it to the member's bytes. Written to tests/data/npz/inflate/
(the same bytes every time):

  hlit287.npz            the directory's CRC-32 is that of the bytes
                         libdeflate gives: the one-call inflate takes them
                         (the difference npyio.h states), zlib refuses;
  hlit287_bad_crc.npz    the CRC-32 is wrong: both inflaters give zlib's
                         refusal (test_npz_inflate).
"""
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "npz", "inflate")


class Bits:
    def __init__(self):
        self.bits = []

    def field(self, value, n):  # header fields: least significant bit first
        self.bits += [(value >> i) & 1 for i in range(n)]

    def code(self, value, n):  # Huffman codes: most significant bit first
        self.bits += [(value >> i) & 1 for i in reversed(range(n))]

    def bytes(self):
        b = self.bits + [0] * (-len(self.bits) % 8)
        return bytes(sum(b[i + j] << j for j in range(8))
                     for i in range(0, len(b), 8))


def deflate_287(data):
    """One final dynamic block of 287 literal/length codes: literals 0-254
    8 bits, 255 and end-of-block 9 bits, no distance code."""
    w = Bits()
    w.field(1, 1)
    w.field(2, 2)
    w.field(287 - 257, 5)
    w.field(0, 5)
    w.field(19 - 4, 4)
    order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
    cl_len = {0: 1, 8: 2, 9: 2}  # codes: 0 -> 0, 8 -> 10, 9 -> 11
    cl_code = {0: (0, 1), 8: (2, 2), 9: (3, 2)}
    for s in order:
        w.field(cl_len.get(s, 0), 3)
    lengths = [8] * 255 + [9, 9] + [0] * 30 + [0]  # 287 + one distance
    for n in lengths:
        w.code(*cl_code[n])
    for byte in data:
        w.code(byte, 8) if byte < 255 else w.code(510, 9)
    w.code(511, 9)
    return w.bytes()


def archive(name, data, packed, crc):
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, crc,
                        len(packed), len(data), len(name), 0) + name
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0,
                          0x21, crc, len(packed), len(data), len(name), 0, 0,
                          0, 0, 0o644 << 16, 0) + name
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central),
                      len(local) + len(packed), 0)
    return local + packed + central + end


def main():
    with open(os.path.join(HERE, "arrays", "u1.npy"), "rb") as f:
        data = f.read()
    packed = deflate_287(data)
    try:
        zlib.decompress(packed, -15)
        raise SystemExit("zlib took the 287-code block")
    except zlib.error:
        pass
    os.makedirs(OUT, exist_ok=True)
    crc = zlib.crc32(data)
    for name, c in (("hlit287.npz", crc), ("hlit287_bad_crc.npz", crc ^ 1)):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(archive(b"a.npy", data, packed, c))


if __name__ == "__main__":
    main()
