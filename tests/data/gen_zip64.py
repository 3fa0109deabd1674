#!/usr/bin/python3
"""Generate archives with the rarer parts of the ZIP format, written byte
by byte (struct, zlib, bz2, lzma: no zipfile writer), for test_zipdir.c:

    /usr/bin/python3 tests/data/gen_zip64.py

zipfile itself never writes a ZIP64 end record below 65,535 members or
4 GiB, nor saturated 32-bit fields with the values in a ZIP64 extra field,
nor extra fields of other kinds before that one; NumPy's archives (force
_zip64 local headers with the real sizes beside the extra field) have none
of these either. Here every such form is built by hand around the .npy
files of tests/data/arrays/ (i1.npy, f8_be.npy), and each archive is
checked against Python 3.11's zipfile and NumPy 1.24 (np.load), whose
verdict the manifests record.

Output (tests/data/zip64/, removed and rewritten on every run; the same
bytes every run with the same zlib, bz2 and lzma):

  valid.tsv    one row per member of the archives that must be read:
               archive, index, name, key, source (.npy under arrays/),
               method, csize, usize, crc32, header_offset, data_offset,
               array_offset (-1: not a stored .npy whose data offset is
               known) -- the offsets as the file has them, prefix included.
               Every one is read by zipfile (the member's bytes are the
               source's) and by np.load (the arrays equal the source's).
  refused.tsv  archives that must be refused: archive, stage ("open": the
               archive is refused; "member": it opens, member INDEX is
               refused), index, status, what the message must contain,
               and what the damage is with Python's verdict.
"""
import bz2
import io
import lzma
import os
import shutil
import struct
import sys
import zipfile
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gen_npz import python_verdict  # noqa: E402 (Python's verdict, as there)

OUT = os.path.join(HERE, "zip64")
ARRAYS = os.path.join(HERE, "arrays")

SAT16 = 0xFFFF
SAT32 = 0xFFFFFFFF
DOS_DATE = 0x21  # 1980-01-01
STORED, DEFLATED = 0, 8


def source(name):
    with open(os.path.join(ARRAYS, name), "rb") as f:
        return f.read()


I1 = source("i1.npy")
F8 = source("f8_be.npy")


def deflate(data):
    c = zlib.compressobj(6, zlib.DEFLATED, -15, 9)
    return c.compress(data) + c.flush()


class Member:
    """One member and how it is written. payload: the bytes as stored
    (compressed with `method`); data: what they stand for."""

    def __init__(self, name, data, method=STORED, payload=None, flags=0,
                 local64=False, central64=(), extra_first=b"",
                 descriptor=None, source=None):
        self.name = name.encode("utf-8")
        self.data = data
        self.method = method
        if payload is None:
            payload = deflate(data) if method == DEFLATED else data
        self.payload = payload
        self.flags = flags | (0x8 if descriptor else 0)
        self.local64 = local64          # local sizes 0xFFFFFFFF + extra
        self.central64 = central64      # central fields saturated
        self.extra_first = extra_first  # another extra field before ZIP64
        self.descriptor = descriptor    # None, "sig" or "nosig"
        self.source = source
        self.crc = zlib.crc32(data)
        self.need = 45                  # central "version needed"
        # Damage, set by the cases: raw replacements of computed parts.
        self.local_extra = None
        self.central_extra = None
        self.local_sizes = None         # (csize, usize) in the local header
        self.central_sizes = None       # (csize, usize) in the entry


def local_header(m):
    csize, usize = len(m.payload), len(m.data)
    extra = m.extra_first
    if m.local64:
        extra += struct.pack("<HHQQ", 1, 16, usize, csize)
        csize = usize = SAT32
    if m.local_sizes is not None:
        csize, usize = m.local_sizes
    if m.local_extra is not None:
        extra = m.local_extra
    crc = m.crc
    if m.descriptor:
        crc = csize = usize = 0
    return struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, m.flags, m.method, 0,
                       DOS_DATE, crc, csize, usize, len(m.name),
                       len(extra)) + m.name + extra


def descriptor(m):
    body = struct.pack("<III", m.crc, len(m.payload), len(m.data))
    return (struct.pack("<I", 0x08074B50) + body if m.descriptor == "sig"
            else body)


def central_entry(m, offset):
    csize, usize = len(m.payload), len(m.data)
    values = []
    if "usize" in m.central64:
        values.append(usize)
        usize = SAT32
    if "csize" in m.central64:
        values.append(csize)
        csize = SAT32
    if "offset" in m.central64:
        values.append(offset)
        offset = SAT32
    extra = m.extra_first
    if values:
        extra += struct.pack("<HH", 1, 8 * len(values)) + struct.pack(
            "<%dQ" % len(values), *values)
    if m.central_sizes is not None:
        csize, usize = m.central_sizes
    if m.central_extra is not None:
        extra = m.central_extra
    return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x031E, m.need,
                       m.flags, m.method, 0, DOS_DATE, m.crc, csize, usize,
                       len(m.name), len(extra), 0, 0, 0, 0o600 << 16,
                       offset) + m.name + extra


class Archive:
    def __init__(self, members, prefix=b"", order=None, zip64_end=False,
                 saturate_end=False, comment=b""):
        self.members = members
        self.prefix = prefix
        self.order = order or list(range(len(members)))
        self.zip64_end = zip64_end
        self.saturate_end = saturate_end
        self.comment = comment
        # Damage to the end records, applied by build(): field -> value.
        self.locator = {}
        self.record = {}
        self.eocd = {}

    def build(self):
        out = bytearray()
        offsets = []
        for m in self.members:
            offsets.append(len(out))
            out += local_header(m) + m.payload
            if m.descriptor:
                out += descriptor(m)
        cd_start = len(out)
        for i in self.order:
            out += central_entry(self.members[i], offsets[i])
        cd_size = len(out) - cd_start
        count = len(self.order)
        self.offsets = [len(self.prefix) + o for o in offsets]
        if self.zip64_end:
            rec = dict(sig=0x06064B50, size=44, made=45, need=45, disk=0,
                       cd_disk=0, disk_count=count, count=count,
                       cd_size=cd_size, cd_offset=cd_start)
            rec.update(self.record)
            at = len(out)
            out += struct.pack("<IQHHIIQQQQ", rec["sig"], rec["size"],
                               rec["made"], rec["need"], rec["disk"],
                               rec["cd_disk"], rec["disk_count"],
                               rec["count"], rec["cd_size"],
                               rec["cd_offset"])
            loc = dict(disk=0, offset=at, disks=1)
            loc.update(self.locator)
            out += struct.pack("<IIQI", 0x07064B50, loc["disk"],
                               loc["offset"], loc["disks"])
        end = dict(count=count, cd_size=cd_size, cd_offset=cd_start)
        if self.saturate_end:
            end = dict(count=SAT16, cd_size=SAT32, cd_offset=SAT32)
        end.update(self.eocd)
        out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, end["count"],
                           end["count"], end["cd_size"], end["cd_offset"],
                           len(self.comment)) + self.comment
        return self.prefix + bytes(out)


def pair(**kw):
    """a.npy (i1, stored) and b.npy (f8_be, deflated), both with the same
    options."""
    return [Member("a.npy", I1, STORED, source="arrays/i1.npy", **kw),
            Member("b.npy", F8, DEFLATED, source="arrays/f8_be.npy", **kw)]


TIMESTAMP = struct.pack("<HHBI", 0x5455, 5, 1, 0)  # extended timestamp
ALL64 = ("usize", "csize", "offset")

# ---- archives that must be read ------------------------------------------------


def npy_version(arr, version):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, arr, version=version)
    return buf.getvalue()


def valid_cases():
    cases = {}

    # Every ZIP64 form at once: end record and locator with the plain end
    # record saturated; every central field saturated, its value in the
    # extra field after an extended-timestamp field; local sizes
    # saturated, theirs in a local ZIP64 extra field.
    cases["zip64_all.npz"] = Archive(
        pair(local64=True, central64=ALL64, extra_first=TIMESTAMP),
        zip64_end=True, saturate_end=True)
    # The same behind 100 bytes of a self-extractor's stub: every offset in
    # the archive (the locator's too) is short by 100.
    cases["zip64_prefix.npz"] = Archive(
        pair(local64=True, central64=ALL64), prefix=b"#!stub\n" * 14 +
        b"xx", zip64_end=True, saturate_end=True)
    # A ZIP64 end record whose plain twin holds the real values (not
    # saturated), and entries with only their offset in the extra field.
    cases["zip64_unsaturated.npz"] = Archive(
        pair(central64=("offset",)), zip64_end=True)
    # The directory lists the members in the reverse order of their data.
    cases["reversed.npz"] = Archive(pair(), order=[1, 0])
    # Data descriptors, with and without their signature, and an archive
    # comment.
    a = Member("a.npy", I1, STORED, source="arrays/i1.npy", descriptor="sig")
    b = Member("b.npy", F8, DEFLATED, source="arrays/f8_be.npy",
               descriptor="nosig")
    cases["descriptors.npz"] = Archive(
        [a, b], comment=b"an archive comment")
    # Stored .npy files of format 2.0 and 3.0 (their header length is 4
    # bytes): the array's data offset is still known.
    arr = np.load(io.BytesIO(F8))
    v2 = npy_version(arr, (2, 0))
    v3 = npy_version(arr, (3, 0))
    cases["versions.npz"] = Archive(
        [Member("v2.npy", v2, STORED, source="zip64/f8_be_v2.npy"),
         Member("v3.npy", v3, STORED, source="zip64/f8_be_v3.npy")])
    # np.savez's data may hold an end record's signature, even a whole
    # end record, far from the archive's end: the real one is still found.
    fake_end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, 46, 0, 0)
    sig = npy_version(np.frombuffer(fake_end * 8, dtype=np.uint8), (1, 0))
    cases["end_sig_in_data.npz"] = Archive(
        [Member("sig.npy", sig, STORED, source="zip64/end_sig.npy"),
         Member("b.npy", F8, DEFLATED, source="arrays/f8_be.npy")])
    return cases, {"f8_be_v2.npy": v2, "f8_be_v3.npy": v3,
                   "end_sig.npy": sig}


def check_valid(name, data, archive, extra_sources):
    """zipfile and np.load read it: the member bytes are the sources'."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        infos = zf.infolist()
        assert [i.filename.encode() for i in infos] == \
            [archive.members[k].name for k in archive.order], name
        for zi in infos:
            m = next(x for x in archive.members
                     if x.name == zi.filename.encode())
            assert zf.read(zi) == m.data, (name, zi.filename)
    if archive.prefix:
        return  # np.load takes a file that does not start "PK" for a pickle
    with np.load(io.BytesIO(data)) as npz:
        for m in archive.members:
            key = m.name.decode()[:-4]
            want = np.load(io.BytesIO(m.data))
            got = npz[key]
            assert got.dtype == want.dtype and np.array_equal(got, want), \
                (name, key)


def valid_rows(name, archive):
    rows = []
    for index, i in enumerate(archive.order):
        m = archive.members[i]
        header_at = archive.offsets[i]
        data_at = header_at + len(local_header(m))
        array_at = -1
        if m.method == STORED and m.data[6] == 1:
            array_at = data_at + 10 + struct.unpack("<H", m.data[8:10])[0]
        elif m.method == STORED:
            array_at = data_at + 12 + struct.unpack("<I", m.data[8:12])[0]
        n = m.name.decode()
        rows.append([name, index, n, n[:-4], m.source, m.method,
                     len(m.payload), len(m.data), m.crc, header_at, data_at,
                     array_at])
    return rows


# ---- archives that must be refused ---------------------------------------------


def refused_cases():
    cases = []

    def case(name, stage, index, status, message, what, archive):
        cases.append((name, stage, index, status, message, what, archive))

    # The end records damaged, one field each: (archive, part, field,
    # value, status, message, what). The plain end record is saturated
    # but for record_disagrees, where it holds real values.
    end_damage = [
        ("split_locator.npz", "locator", "disks", 2, "E_UNSUPPORTED",
         "the archive is split over 2 disks",
         "the ZIP64 locator counts 2 disks"),
        ("record_short.npz", "record", "size", 40, "E_FORMAT",
         "no ZIP64 end record before its locator",
         "the ZIP64 end record says it is 40 bytes long (44 at least)"),
        ("record_disks.npz", "record", "cd_disk", 1, "E_UNSUPPORTED",
         "the archive is split over several disks",
         "the ZIP64 end record puts the directory on disk 1"),
        ("record_disagrees.npz", "eocd", "count", 1, "E_FORMAT",
         "the ZIP64 end record disagrees with the end record",
         "the end record counts 1 entry (not saturated), the ZIP64 end "
         "record 2"),
        ("record_disk_count.npz", "record", "disk_count", 1, "E_FORMAT",
         "the ZIP64 end record disagrees with the end record",
         "the ZIP64 end record counts 1 entry on this disk and 2 in all"),
        ("locator_offset.npz", "locator", "offset", 7, "E_FORMAT",
         "the ZIP64 locator points at offset 7, not at its end record",
         "the ZIP64 locator's offset is 7"),
        ("record_cd_size.npz", "record", "cd_size", 1 << 40, "E_FORMAT",
         "not at its end record",
         "the ZIP64 end record's directory size is 2**40 bytes"),
    ]
    for name, part, field, value, status, message, what in end_damage:
        a = Archive(pair(central64=ALL64), zip64_end=True,
                    saturate_end=part != "eocd")
        getattr(a, part)[field] = value
        case(name, "open", -1, status, message, what, a)

    a = Archive([], zip64_end=True, saturate_end=True)
    a.locator["offset"] = 0
    raw = a.build()
    # Only the locator and the end record: no room for a ZIP64 record.
    small = Archive([])
    small.build_bytes = raw[56:]
    case("no_room.npz", "open", -1, "E_FORMAT",
         "no room for the ZIP64 end record before its locator at offset 0",
         "an empty archive of a ZIP64 locator and an end record (42 "
         "bytes): the 56-byte ZIP64 end record cannot precede the locator",
         small)

    ms = pair(central64=("usize", "csize"))
    ms[1].central_extra = struct.pack("<HHQ", 1, 8, len(F8))
    case("extra_short.npz", "open", -1, "E_FORMAT",
         "central directory entry 1: the ZIP64 extra field is too short "
         "for the values it stands for",
         "entry 1 has csize and usize saturated, its ZIP64 extra field "
         "holds one value", Archive(ms))

    ms = pair(local64=True)
    ms[0].local_extra = TIMESTAMP
    case("local_extra_missing.npz", "open", -1, "E_FORMAT",
         "a local header: a size or offset says it is in a ZIP64 extra "
         "field, and there is none",
         "member 0's local sizes are saturated, its local extra holds only "
         "a timestamp", Archive(ms))

    ms = pair(local64=True)
    ms[1].local_extra = struct.pack("<HHQQ", 1, 16, len(F8), 99)
    case("local_extra_sizes.npz", "open", -1, "E_FORMAT",
         "differs from the directory (sizes)",
         "member 1's local ZIP64 extra field gives csize 99", Archive(ms))

    ms = [Member("a.npy", I1, STORED, source="arrays/i1.npy", local64=True)]
    ms[0].local_extra = struct.pack("<HH", 1, 16)
    small = Archive(ms)
    raw = bytearray(small.build())
    # The local extra length grows to 65535: it runs past the end of the
    # file (the local header's name is still the entry's).
    struct.pack_into("<H", raw, 28, 0xFFFF)
    small.build_bytes = bytes(raw)
    case("local_extra_past_eof.npz", "open", -1, "E_TRUNCATED",
         "a local extra field at offset 35 runs past the end of the file",
         "member 0's local sizes are saturated and its extra field length "
         "is 65535, past the end of the file", small)

    ms = pair()
    ms[0].local_sizes = (len(I1) - 4, len(I1))
    ms[0].central_sizes = (len(I1) - 4, len(I1))
    case("stored_sizes_differ.npz", "member", 0, "E_FORMAT",
         "member 0 ('a.npy') is stored, yet its sizes differ (136 in the "
         "archive, 140 declared)",
         "member 0 stored with csize 136 and usize 140 in both headers",
         Archive(ms))

    # Two end records: the real one's comment holds a second directory
    # (listing only b.npy) and a second end record, whose own comment
    # length runs past the end of the file. zipfile takes the second one
    # (the last signature), a reader that checks comment lengths the
    # first: the two would read different members.
    a = Archive(pair())
    raw = a.build()
    cd_at = len(raw) + 0  # the comment starts after the plain end record
    second_cd = central_entry(a.members[1], a.offsets[1])
    second_end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1,
                             len(second_cd), cd_at + 0, 100)
    a = Archive(pair(), comment=second_cd + second_end)
    raw = bytearray(a.build())
    # The second directory's offset: where its entry lies in the file.
    struct.pack_into("<I", raw, len(raw) - 6, len(raw) - len(second_cd) -
                     len(second_end))
    a.build_bytes = bytes(raw)
    case("two_ends.npz", "open", -1, "E_FORMAT",
         "two end records: Python's zipfile would take the one at offset "
         "%d, this reader the one at offset %d" % (
             len(raw) - len(second_end), len(raw) - len(second_end) -
             len(second_cd) - 22),
         "the end record's comment holds a second directory (b.npy only) "
         "and a second end record whose comment runs past the file", a)

    # An end-record signature in the last 21 bytes (in the comment):
    # zipfile takes it, finds fewer than 22 bytes, and refuses the file.
    a = Archive(pair(), comment=b"note PK\x05\x06 end")
    raw = a.build()
    case("end_sig_in_comment.npz", "open", -1, "E_FORMAT",
         "the last end-record signature, at offset %d, lies 8 bytes "
         "before the end of the file (a record takes 22), so Python's "
         "zipfile refuses the archive" % (len(raw) - 8),
         "the archive comment ends with an end-record signature and 4 "
         "bytes", a)

    # A version needed to extract above 6.3 (zipfile's limit).
    ms = pair()
    ms[1].need = 64
    case("version_64.npz", "open", -1, "E_UNSUPPORTED",
         "member 1 ('b.npy') needs ZIP version 6.4 to extract",
         "entry 1 says version 6.4 is needed to extract it", Archive(ms))

    methods = [(1, "shrink", "shrink"), (6, "implode", "implode"),
               (12, "bzip2", "bzip2"), (14, "lzma", "lzma"),
               (93, "zstandard", "zstandard"), (95, "xz", "xz"),
               (98, "ppmd", "ppmd"), (99, "AES encryption", "aes"),
               (7, "an unknown method", "unknown")]
    for number, label, word in methods:
        if number == 12:
            payload = bz2.compress(F8, 9)
        elif number == 14:
            comp = lzma.LZMACompressor(lzma.FORMAT_RAW, filters=[
                {"id": lzma.FILTER_LZMA1}])
            props = lzma._encode_filter_properties({"id": lzma.FILTER_LZMA1})
            payload = (struct.pack("<BBH", 9, 4, len(props)) + props +
                       comp.compress(F8) + comp.flush())
        else:
            payload = F8  # the bytes as they are, under another method
        ms = [Member("a.npy", I1, STORED, source="arrays/i1.npy"),
              Member("b.npy", F8, number, payload=payload,
                     source="arrays/f8_be.npy")]
        case("method_%d_%s.npz" % (number, word),
             "member", 1, "E_UNSUPPORTED",
             "member 1 ('b.npy') is compressed with %s (method %d); only "
             "stored and deflate are read" % (label, number),
             "member 1 with compression method %d (%s)" % (number, label),
             Archive(ms))
    return cases


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def main():
    assert np.__version__ == "1.24.2", np.__version__
    assert sys.version_info[:2] == (3, 11), sys.version
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    valid, extra_sources = valid_cases()
    rows = []
    for name in sorted(valid):
        archive = valid[name]
        data = archive.build()
        check_valid(name, data, archive, extra_sources)
        write(os.path.join(OUT, name), data)
        rows += valid_rows(name, archive)
    for src, data in sorted(extra_sources.items()):
        write(os.path.join(OUT, src), data)
    with open(os.path.join(OUT, "valid.tsv"), "w", newline="\n") as f:
        f.write("#archive\tindex\tname\tkey\tsource\tmethod\tcsize\tusize"
                "\tcrc32\theader_offset\tdata_offset\tarray_offset\n")
        for r in rows:
            f.write("\t".join(str(v) for v in r) + "\n")
    with open(os.path.join(OUT, "refused.tsv"), "w", newline="\n") as f:
        f.write("#archive\tstage\tindex\tstatus\tmessage\twhat\n")
        for name, stage, index, status, message, what, archive in \
                refused_cases():
            data = getattr(archive, "build_bytes", None) or archive.build()
            write(os.path.join(OUT, name), data)
            full = "%s; Python 3.11: %s" % (
                what, python_verdict(data, stage, index)[1])
            assert not any(c in full + message for c in "\t\n"), full
            f.write("\t".join(str(v) for v in
                              [name, stage, index, status, message, full])
                    + "\n")


if __name__ == "__main__":
    main()
