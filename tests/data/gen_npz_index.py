#!/usr/bin/python3
"""Generate archives whose block index lies about its member's data.

    /usr/bin/python3 tests/data/gen_npz_index.py

A deflated member may carry libnpyio's block index in its local extra
field (id 0x494E; include/npyio.h, NPYIO_LIMIT_THREADS, gives the layout):
where independent deflate blocks start, so that readers inflate them on
several threads. Every archive here is a valid archive: zipfile and
np.load read it (the generator checks both), and they ignore the field.
The index lies: it names a place where a sequential inflate does not
stand (inside a stored block's content, where the archive's author hid
bytes that inflate, alone, to other data), or lengths that are not the
blocks'. Where a threaded read would take the lie, the CRC-32 of what it
would return is made equal to the directory's, so that only the rule
"an index is used only when every block from the member's start is
proven" keeps the bytes np.load's.

Output (tests/data/npz/index/, the same bytes on every run) and a
manifest, one row per archive (each has one member, key `a`):

  archive  block_index  dtype  shape  data_hex  what

block_index is what NPYIO_NPZ_STAT_BLOCK_INDEX must say (-1: present and
not matching; 0: none, as for a stored member; else the block count),
worked out here from the construction, not from libnpyio. data_hex is
np.load's array data (arr.tobytes()), hex. test_npz_threads reads every
archive at 1, 2 and 3 threads, whole, by chunks and by rows, and
index_cli_check.py (interop_index_cli) dumps and validates each.
"""
import io
import os
import struct
import sys
import zipfile
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import npgen  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "npz", "index")
COLUMNS = ["archive", "block_index", "dtype", "shape", "data_hex", "what"]
# Bytes, so that every host reads the same bytes (no byte order).
DTYPE = np.dtype("u1")
ROW = 8  # bytes: shape (n, 8)
INDEX_ID = 0x494E
LIE = b"NOT-NUMPY-BYTES!"


# ---- deflate pieces ------------------------------------------------------

def full_flush(data):
    """Blocks that end on a byte boundary, not final, referring to nothing
    before their start (a fresh compressor, ended by a full flush)."""
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush(zlib.Z_FULL_FLUSH)


def final(data):
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush(zlib.Z_FINISH)


def stored(content, last):
    assert len(content) <= 0xFFFF
    n = len(content)
    return bytes([1 if last else 0]) + struct.pack("<HH", n, n ^ 0xFFFF) + \
        content


def payload(n, seed):
    """n bytes of array data, a pattern of its own per seed."""
    return bytes((i * (2 * seed + 7) + seed * 31 + (i >> 5)) & 0xFF
                 for i in range(n))


def inflate(stream):
    d = zlib.decompressobj(-15)
    out = d.decompress(stream) + d.flush()
    assert d.eof and d.unused_data == b"", "not one whole deflate stream"
    return out


# ---- a CRC-32 made to match ----------------------------------------------

def forge(build):
    """Four bytes f for which build(f) = (a, b), equal lengths, gives
    crc32(a) == crc32(b). build must place f verbatim (CRC-32 is affine in
    the bits of bytes that are copied as they are), so the difference of
    the two CRCs is an affine function of f's 32 bits: solve it over
    GF(2)."""
    def diff(f):
        a, b = build(f)
        assert len(a) == len(b)
        return zlib.crc32(a) ^ zlib.crc32(b)

    base = diff(bytes(4))
    cols = [diff((1 << i).to_bytes(4, "little")) ^ base for i in range(32)]
    # Rows of the system: for each output bit, which input bits flip it.
    rows = []
    for bit in range(32):
        mask = sum(1 << i for i in range(32) if cols[i] >> bit & 1)
        rows.append([mask, base >> bit & 1])
    pivots = []
    for col in range(32):
        r = next((k for k in range(len(pivots), 32)
                  if rows[k][0] >> col & 1), None)
        if r is None:
            continue
        k = len(pivots)
        rows[k], rows[r] = rows[r], rows[k]
        for j in range(32):
            if j != k and rows[j][0] >> col & 1:
                rows[j][0] ^= rows[k][0]
                rows[j][1] ^= rows[k][1]
        pivots.append(col)
    assert all(rows[k][1] == 0 for k in range(len(pivots), 32)), "no root"
    x = 0
    for k, col in enumerate(pivots):
        if rows[k][1]:
            x |= 1 << col
    f = x.to_bytes(4, "little")
    assert diff(f) == 0
    return f


# ---- the archive ---------------------------------------------------------

def index_field(blocks):
    data = bytes([1, 0, 0, 0]) + struct.pack("<I", len(blocks))
    for coff, uoff in blocks:
        data += struct.pack("<QQ", coff, uoff)
    return struct.pack("<HH", INDEX_ID, len(data)) + data


def archive(name, stream, out, blocks, method=8, descriptor=False):
    """A one-member archive (key a): the member's data `stream` (raw
    deflate for method 8, the bytes for 0) inflating to `out`, the index
    `blocks` in the local extra field, sizes in a data descriptor if
    asked."""
    crc = zlib.crc32(out)
    fname = b"a.npy"
    extra = index_field(blocks)
    flags = 8 if descriptor else 0
    sizes = (0, 0, 0) if descriptor else (crc, len(stream), len(out))
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, flags, method, 0,
                        0x21, *sizes, len(fname), len(extra)) + fname + extra
    body = local + stream
    if descriptor:
        body += struct.pack("<IIII", 0x08074B50, crc, len(stream), len(out))
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, flags,
                          method, 0, 0x21, crc, len(stream), len(out),
                          len(fname), 0, 0, 0, 0, 0o600 << 16, 0) + fname
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central),
                      len(body), 0)
    return body + central + end


class Case:
    def __init__(self, name, block_index, what):
        self.name, self.block_index, self.what = name, block_index, what
        self.bytes = self.data = None


def header_for(ndata):
    assert ndata % ROW == 0
    return npgen.canonical_header(DTYPE, (ndata // ROW, ROW), False)


def hidden(p1_len, inner, fill_seed):
    """P1, the content of a stored block: filler holding the four free
    bytes, then `inner` (deflate bytes that inflate alone to other data)
    at its end."""
    def make(f):
        fill = bytearray(payload(p1_len - len(inner), fill_seed))
        fill[8:12] = f
        return bytes(fill) + inner
    return make


def lie_header_tail():
    """The issue's construction: a stored block holding the .npy header
    and P1; the index's block 1 starts inside P1, at deflate bytes that
    inflate alone to the header's last 16 bytes and then other bytes; a
    final block. A read from the header's end on several threads would
    start in block 1 and, before 1.1, trusted it: 3 blocks."""
    p1_len, p2 = 608, payload(400, 2)
    hdr = header_for(p1_len + len(p2))
    tail = 16
    fake = hdr[-tail:] + (LIE * (p1_len // len(LIE) + 1))[:p1_len - 8] + \
        bytes(8)
    inner = full_flush(fake)
    make_p1 = hidden(p1_len, inner, 1)
    # The CRC of what a threaded read would return equals np.load's.
    f = forge(lambda f: (hdr + make_p1(f) + p2,
                         hdr + fake[tail:] + p2))
    p1 = make_p1(f)
    s0 = stored(hdr + p1, False)
    s1 = final(p2)
    coff1 = len(s0) - len(inner)
    blocks = [(0, 0), (coff1, len(hdr) - tail), (len(s0), len(hdr) + p1_len)]
    return s0 + s1, hdr + p1 + p2, blocks


def case_lie_header_tail(c):
    return lie_header_tail()


def case_lie_first(c):
    """Block 0 is declared to end (100 bytes in) where the header's stored
    block does not: its length is a lie, and so every later start."""
    pb, pc = payload(512, 3), payload(304, 4)
    hdr = header_for(len(pb) + len(pc))
    s0, s1, s2 = stored(hdr, False), full_flush(pb), final(pc)
    blocks = [(0, 0), (len(s0), 100), (len(s0) + len(s1), 100 + len(pb))]
    return s0 + s1 + s2, hdr + pb + pc, blocks


def case_lie_middle(c):
    """4 blocks: the header and data, a stored block whose content hides
    deflate bytes, the index's block 2 at those bytes, a final block."""
    pa, p1_len, pc = payload(256, 5), 600, payload(200, 6)
    inner = full_flush((LIE * 40)[:500])
    make_p1 = hidden(p1_len, inner, 7)
    p1 = make_p1(bytes(4))
    hdr = header_for(len(pa) + p1_len + len(pc))
    s0, s1, s2 = full_flush(hdr + pa), stored(p1, False), final(pc)
    u1 = len(hdr) + len(pa)
    u3 = u1 + p1_len
    blocks = [(0, 0), (len(s0), u1), (len(s0) + len(s1) - len(inner),
                                     u3 - 500), (len(s0) + len(s1), u3)]
    return s0 + s1 + s2, hdr + pa + p1 + pc, blocks


def case_lie_last(c):
    """The last block lies: it starts inside the final stored block's
    content, at a final deflate stream of other bytes ending the member."""
    pa, p1_len = payload(256, 8), 704
    inner = final((LIE * 40)[:600])
    p1 = hidden(p1_len, inner, 9)(bytes(4))
    hdr = header_for(len(pa) + p1_len)
    s0, s1 = full_flush(hdr + pa), stored(p1, True)
    u1 = len(hdr) + len(pa)
    usize = u1 + p1_len
    blocks = [(0, 0), (len(s0), u1),
              (len(s0) + len(s1) - len(inner), usize - 600)]
    return s0 + s1, hdr + pa + p1, blocks


def case_overlap(c):
    """Block 1 is declared to start 3 compressed and 8 uncompressed bytes
    before block 0 really ends: the two overlap."""
    pa, pb, pc = payload(256, 10), payload(400, 11), payload(160, 12)
    hdr = header_for(len(pa) + len(pb) + len(pc))
    s0, s1, s2 = full_flush(hdr + pa), full_flush(pb), final(pc)
    u1 = len(hdr) + len(pa)
    blocks = [(0, 0), (len(s0) - 3, u1 - 8),
              (len(s0) + len(s1), u1 + len(pb))]
    return s0 + s1 + s2, hdr + pa + pb + pc, blocks


def case_honest(c):
    """A true index (a stored header block, two blocks of data): every
    block proven, so readers may use it."""
    pb, pc = payload(512, 13), payload(304, 14)
    hdr = header_for(len(pb) + len(pc))
    s0, s1, s2 = stored(hdr, False), full_flush(pb), final(pc)
    blocks = [(0, 0), (len(s0), len(hdr)),
              (len(s0) + len(s1), len(hdr) + len(pb))]
    return s0 + s1 + s2, hdr + pb + pc, blocks


CASES = [
    (Case("lie_header_tail.npz", -1, "block 1 starts inside the header's "
          "stored block, at bytes that inflate alone to the header's tail "
          "and other data; CRC-32 made to match"), case_lie_header_tail,
     {}),
    (Case("lie_first.npz", -1, "block 0's declared length is not the "
          "header block's"), case_lie_first, {}),
    (Case("lie_middle.npz", -1, "block 2 of 4 starts inside a stored "
          "block, at bytes that inflate alone to other data"),
     case_lie_middle, {}),
    (Case("lie_last.npz", -1, "the last block starts inside the final "
          "stored block, at a final stream of other data"), case_lie_last,
     {}),
    (Case("overlap.npz", -1, "block 1 starts before block 0 ends"),
     case_overlap, {}),
    (Case("descriptor.npz", -1, "lie_header_tail's member with its sizes "
          "in a data descriptor"), case_lie_header_tail, {"descriptor": True}),
    (Case("stored_member.npz", 0, "a stored member carrying "
          "lie_header_tail's index: an index of a stored member is never "
          "read"), None, {}),
    (Case("honest.npz", 3, "a true index of 3 blocks (stored header "
          "block): readers may use it"), case_honest, {}),
]


def build(case, fn, opts):
    if fn is None:  # the stored member: the bytes np.load reads, as they are
        _, out, blocks = lie_header_tail()
        return archive(case.name, out, out, blocks, method=0), out
    stream, out, blocks = fn(case)
    assert inflate(stream) == out, case.name
    return archive(case.name, stream, out, blocks, **opts), out


def numpy_view(data):
    """What zipfile and np.load make of the archive: the member's bytes
    (CRC-32 checked by zipfile) and np.load's array."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert z.testzip() is None
        raw = z.read("a.npy")
    with np.load(io.BytesIO(data)) as f:
        arr = f["a"]
    return raw, arr


def main():
    npgen.check_host("gen_npz_index.py")
    npgen.clean_dir(OUT, (".npz", ".tsv"))
    rows = []
    for case, fn, opts in CASES:
        data, out = build(case, fn, opts)
        raw, arr = numpy_view(data)
        assert raw == out, case.name
        offset = npgen.preamble(raw)[2]
        assert arr.tobytes() == raw[offset:], case.name
        with open(os.path.join(OUT, case.name), "wb") as f:
            f.write(data)
        rows.append([case.name, case.block_index, arr.dtype.str,
                     ",".join(str(d) for d in arr.shape),
                     arr.tobytes().hex(), case.what])
    npgen.write_tsv(os.path.join(OUT, "manifest.tsv"), COLUMNS, rows)
    print("wrote %d archives to %s" % (len(rows), OUT))


if __name__ == "__main__":
    main()
