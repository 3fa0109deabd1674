#!/usr/bin/python3
"""Generate the NPZ (zip archive) corpus for libnpyio's C reader tests.

Run with a Python that has NumPy 1.24 (the reference build is NumPy 1.24.2,
Python 3.11.2 on x86_64 Linux; the script refuses another NumPy or long
double format, like gen_arrays.py):

    /usr/bin/python3 tests/data/gen_npz.py

It needs tests/data/arrays/ (gen_arrays.py) and only reads it.  The C tests
run without Python (also on s390x and i386), so everything they need to know
about an archive is in a manifest, worked out here from the bytes written.

Array members are made FROM the .npy files of tests/data/arrays/: each case
is loaded with np.load and saved again (np.savez, or np.save bytes given to
zipfile), and the script asserts that the member's bytes are the case's .npy
file byte for byte.  A C test can then compare a member with
tests/data/arrays/<source>.npy and that case's .bin files.  (The itemsize-0
cases void0_* and sub0_* do NOT round-trip: NumPy loads them as both C and
Fortran contiguous and saves them back with fortran_order False, so they
are not used here.)

Output, under tests/data/npz/ (the directory is removed and rewritten on
every run; the output is byte-for-byte the same on every run):

Valid archives
  savez.npz            np.savez of CASES (keys = case names, members
                       "<case>.npy", stored).  NumPy 1.24 opens every
                       member with force_zip64=True, so every LOCAL header
                       carries a ZIP64 extra field (id 0x0001, 16 bytes:
                       usize, csize) although its 32-bit sizes are the real
                       ones (not 0xFFFFFFFF); the central directory has no
                       extra field.  Member dates are 1980-01-01 00:00.
  savez_compressed.npz the same with np.savez_compressed (deflate, 8).
  keys.npz             np.savez with keys "a/b", "\u00e9" (UTF-8 name, flag
                       0x800), "x.npy" (member "x.npy.npy", key "x.npy")
                       and "plain".
  empty.npz            np.savez with no arrays: an end record only.
  stream.npz           zipfile writing to a sink without seek/tell: flag
                       0x8, local headers with CRC and sizes 0, each member
                       followed by a data descriptor (signature
                       PK\\x07\\x08, crc, csize, usize: 4 bytes each).
                       Members deflated.npy (deflate) and stored.npy.
  odd.npz              zipfile: bzip2.npy (method 12), lzma.npy (method 14,
                       flag 0x2: EOS marker), notes.txt (stored text, not an
                       array), dir/ (directory entry, 0 bytes), x.bin (a
                       stored .npy under another name; key "x.bin"), and the
                       archive comment ODD_COMMENT (below).
  prefix.npz           PREFIX_LEN (100) junk bytes, then an np.savez
                       archive of 2 members written to memory: the offsets
                       stored in the archive are relative to the zip's own
                       start, i.e. PREFIX_LEN less than the real ones (what
                       `cat junk a.zip` gives; zipfile reads it by its
                       "concat" shift).  np.load cannot read it: the file
                       does not start with a zip signature, so it is taken
                       for a pickle and fails (UnpicklingError with
                       allow_pickle=True, ValueError without).
  dups.npz             zipfile, three stored members named "a", "a.npy",
                       "a.npy", holding three different arrays.  np.load
                       gives key "a" -> member 0 (a member named exactly
                       "a" wins over "a.npy"), and key "a.npy" -> member 2
                       (the LAST of the two "a.npy": zipfile keeps the last
                       one of a name).  Member 1 cannot be reached by name.
  aligned_store.npz    zipfile, stored members whose local AND central
                       headers carry an extra field id 0xD935 (data: the
                       alignment as 2 bytes little-endian, 64, then zero
                       padding) sized so that every member's data starts at
                       a multiple of 64 in the file (zipfile writes
                       ZipInfo.extra into both headers).

  manifest.tsv   one row per member, in central-directory order; an archive
                 without members has one row with index -1 and "-" in
                 every other column.  Columns (tab-separated, UTF-8, '\\n'
                 terminated, one header line starting with '#'):
    archive        file name of the archive (e.g. odd.npz)
    index          member index in central-directory order, from 0
    file           the member's name as zipfile decodes it (UTF-8 if flag
                   0x800, else cp437; all names here are ASCII or UTF-8);
                   never contains a tab, newline or backslash
    key            NumPy's key: file without one trailing ".npy"
    method         compression method: 0 stored, 8 deflate, 12 bzip2,
                   14 lzma
    flags          general-purpose flag bits of the central directory entry,
                   decimal
    csize, usize   compressed / uncompressed size, decimal
    crc32          CRC-32 of the uncompressed bytes, unsigned decimal
    header_offset  absolute offset of the member's local header in the FILE
                   (prefix.npz: includes the junk, so it is PREFIX_LEN more
                   than the value stored in the central directory)
    data_offset    absolute offset of the first data byte: header_offset
                   + 30 + the LOCAL name length + the LOCAL extra length
                   (read from the local header)
    is_array       1 if the uncompressed bytes start with b'\\x93NUMPY'
    source         tests/data/arrays case whose .npy file the uncompressed
                   bytes equal, or "-"
    np_key_choice  1 if np.load(archive)[key] returns this member, else 0
                   (exactly one member per distinct key has 1).  Found by
                   comparing what np.load returns with each member's
                   content.  Where np.load cannot open the archive
                   (prefix.npz) it is the member NumPy's lookup rule picks
                   with zipfile itself: the member named key if there is
                   one, else key + ".npy", and of several members with that
                   name zipfile.ZipFile.read() returns the LAST.
  <archive>.<index>.bin  the uncompressed bytes of every member whose
                 source is "-" (e.g. odd.npz.2.bin for notes.txt; the
                 directory entry's file is empty).

Malformed archives (tests/data/npz/bad/)
  <name>.npz     small archives (1-3 tiny members) made by zipfile and then
                 patched; each breaks exactly one thing (CRCs and sizes are
                 kept consistent with the bytes otherwise).
  manifest.tsv   one row per archive, same format, columns:
    archive   file name in bad/
    stage     "open": opening the archive must fail (index is -1);
              "member": the archive opens, and reading member `index`
              (central-directory order) completely, checking its size and
              CRC, must fail
    index     see stage
    status    the libnpyio status expected, without the NPYIO_ prefix
              (E_FORMAT is NPYIO_E_FORMAT, ...)
    what      what is broken, then what Python 3.11's zipfile / np.load do
              with it (the script asserts that, see BAD_CASES)

  The end-record cases follow these rules, with E the offset of the end
  record: a directory whose stored offset + size is past the end of the
  file is E_TRUNCATED; one ending past E (but inside the file), or one
  larger than everything before E (it would start before byte 0), is
  E_FORMAT; one ending before E is a prefix shift (prefix.npz, valid).

Compression output (deflate, bzip2, lzma) is that of the zlib (1.2.13),
libbz2 and liblzma the reference Python uses; another build may compress
differently, which changes compressed bytes, csize and the offsets after
them.  The committed files and their manifest go together; the C tests
never recompress anything.
"""

import io
import os
import random
import shutil
import struct
import sys
import time
import warnings
import zipfile
import zlib

import numpy as np
from numpy.lib import format as npf

import npgen
from npgen import MAGIC

HERE = os.path.dirname(os.path.abspath(__file__))
ARRAYS_DIR = os.path.join(HERE, "arrays")
OUT_DIR = os.path.join(HERE, "npz")
BAD_DIR = os.path.join(OUT_DIR, "bad")

MAX_TOTAL_BYTES = 1_500_000  # everything under npz/, to keep the repo small
MAX_SECONDS = 20

FIXED_DATE = (1980, 1, 1, 0, 0, 0)
PREFIX_LEN = 100
ODD_COMMENT = b"libnpyio odd.npz: bzip2, lzma, text, directory, x.bin"
ALIGN = 64
ALIGN_EXTRA_ID = 0xD935

MANIFEST_COLUMNS = ["archive", "index", "file", "key", "method", "flags",
                    "csize", "usize", "crc32", "header_offset", "data_offset",
                    "is_array", "source", "np_key_choice"]
BAD_COLUMNS = ["archive", "stage", "index", "status", "what"]

# The arrays cases in savez.npz / savez_compressed.npz: every dtype family
# of tests/data/arrays/manifest.tsv (bool, ints of both byte orders, half,
# double, long double, complex, S, V, U, M8/m8, Fortran order, records
# nested, with subarrays, with unicode/complex fields, 0-d, empty, object).
CASES = [
    "bool", "u1", "i2_be", "u4_be", "i8_le",
    "f2_le", "f8_be", "f16_le", "c8_le", "c32_be",
    "s5", "v4", "u3_str_be",
    "datetime_ns_le", "timedelta_25s_be",
    "i2be_3x5_f", "f8le_300x2_f", "rec_nested_padded_3x4_f",
    "rec_nested_padded", "rec_subarrays", "rec_unicode_complex",
    "i4le_0d", "rec24_0d", "i4be_empty", "f8le_3x0_f",
    "object_mixed",
]


# ---------------------------------------------------------------------------
# The arrays corpus
# ---------------------------------------------------------------------------

def read_arrays_corpus():
    """{case name: .npy bytes} for every case of arrays/manifest.tsv."""
    with open(os.path.join(ARRAYS_DIR, "manifest.tsv"), encoding="utf-8",
              newline="\n") as f:
        lines = f.read().split("\n")
    cols = lines[0].lstrip("#").split("\t")
    out = {}
    for line in lines[1:]:
        if not line:
            continue
        row = dict(zip(cols, line.split("\t")))
        with open(os.path.join(ARRAYS_DIR, row["file"]), "rb") as f:
            out[row["name"]] = f.read()
    by_bytes = {}
    for name, data in out.items():
        assert data not in by_bytes, (name, by_bytes.get(data))
        by_bytes[data] = name
    return out, by_bytes


def load_case(corpus, name):
    """The array of a case, loaded by NumPy from its .npy file.  Loaded
    from the file itself: np.load reads a real file with fromfile, which
    keeps the bytes of records that belong to no field (padding), while
    from any other stream it assigns into an uninitialised array field by
    field, leaving garbage there."""
    arr = np.load(os.path.join(ARRAYS_DIR, name + ".npy"), allow_pickle=True)
    # np.save of the loaded array gives the file again (what np.savez
    # writes into the member).
    assert npy_bytes(arr) == corpus[name], name
    return arr


def npy_bytes(arr):
    b = io.BytesIO()
    np.save(b, arr, allow_pickle=True)
    return b.getvalue()


# ---------------------------------------------------------------------------
# Zip structure, parsed by hand (independent of zipfile)
# ---------------------------------------------------------------------------

EOCD_SIG = b"PK\x05\x06"
CD_SIG = b"PK\x01\x02"
LOCAL_SIG = b"PK\x03\x04"
DD_SIG = b"PK\x07\x08"
EOCD_LEN = 22
CD_LEN = 46
LOCAL_LEN = 30

# Field offsets inside the records.
CD_FLAGS, CD_METHOD, CD_CRC, CD_CSIZE, CD_USIZE = 8, 10, 16, 20, 24
CD_NLEN, CD_XLEN, CD_CLEN, CD_OFFSET = 28, 30, 32, 42
LH_FLAGS, LH_METHOD, LH_CRC, LH_CSIZE, LH_USIZE = 6, 8, 14, 18, 22
LH_NLEN, LH_XLEN = 26, 28
EOCD_N_DISK, EOCD_N_TOTAL, EOCD_CD_SIZE, EOCD_CD_OFFSET = 8, 10, 12, 16


def u16(b, o):
    return struct.unpack_from("<H", b, o)[0]


def u32(b, o):
    return struct.unpack_from("<I", b, o)[0]


class Entry:
    """One central-directory entry and its local header."""


def parse_zip(buf):
    """Parse a zip without ZIP64 end records.  Returns (eocd offset, eocd
    fields dict, [Entry]) with cd_pos (the entry's offset in buf),
    stored_offset (the stored local header offset), header_offset (the
    absolute one: stored + shift, shift = where the directory really starts
    - its stored offset) and the local header's fields."""
    e = buf.rfind(EOCD_SIG)
    assert e >= 0 and e + EOCD_LEN + u16(buf, e + 20) == len(buf)
    eocd = {"n_disk": u16(buf, e + EOCD_N_DISK),
            "n_total": u16(buf, e + EOCD_N_TOTAL),
            "cd_size": u32(buf, e + EOCD_CD_SIZE),
            "cd_offset": u32(buf, e + EOCD_CD_OFFSET),
            "comment": buf[e + EOCD_LEN:]}
    start = e - eocd["cd_size"]
    shift = start - eocd["cd_offset"]
    assert shift >= 0
    eocd["shift"] = shift
    eocd["cd_start"] = start
    entries = []
    pos = start
    while pos < e:
        assert buf[pos:pos + 4] == CD_SIG
        x = Entry()
        x.cd_pos = pos
        x.flags = u16(buf, pos + CD_FLAGS)
        x.method = u16(buf, pos + CD_METHOD)
        x.crc = u32(buf, pos + CD_CRC)
        x.csize = u32(buf, pos + CD_CSIZE)
        x.usize = u32(buf, pos + CD_USIZE)
        nlen = u16(buf, pos + CD_NLEN)
        xlen = u16(buf, pos + CD_XLEN)
        clen = u16(buf, pos + CD_CLEN)
        x.stored_offset = u32(buf, pos + CD_OFFSET)
        x.name = buf[pos + CD_LEN:pos + CD_LEN + nlen]
        x.cd_extra = buf[pos + CD_LEN + nlen:pos + CD_LEN + nlen + xlen]
        pos += CD_LEN + nlen + xlen + clen
        h = x.header_offset = x.stored_offset + shift
        assert buf[h:h + 4] == LOCAL_SIG
        x.l_flags = u16(buf, h + LH_FLAGS)
        x.l_method = u16(buf, h + LH_METHOD)
        x.l_crc = u32(buf, h + LH_CRC)
        x.l_csize = u32(buf, h + LH_CSIZE)
        x.l_usize = u32(buf, h + LH_USIZE)
        lnlen = u16(buf, h + LH_NLEN)
        lxlen = u16(buf, h + LH_XLEN)
        x.l_name = buf[h + LOCAL_LEN:h + LOCAL_LEN + lnlen]
        x.l_extra = buf[h + LOCAL_LEN + lnlen:h + LOCAL_LEN + lnlen + lxlen]
        x.data_offset = h + LOCAL_LEN + lnlen + lxlen
        entries.append(x)
    assert pos == e
    assert len(entries) == eocd["n_total"] == eocd["n_disk"]
    return e, eocd, entries


def extra_fields(extra):
    """{id: data} of an extra field block (ids are unique here)."""
    out = {}
    o = 0
    while o < len(extra):
        fid, flen = struct.unpack_from("<HH", extra, o)
        assert fid not in out and o + 4 + flen <= len(extra)
        out[fid] = extra[o + 4:o + 4 + flen]
        o += 4 + flen
    return out


# ---------------------------------------------------------------------------
# Writing archives
# ---------------------------------------------------------------------------

def zinfo(name, method=zipfile.ZIP_STORED, extra=b""):
    zi = zipfile.ZipInfo(name, date_time=FIXED_DATE)
    zi.compress_type = method
    zi.external_attr = 0o644 << 16
    zi.extra = extra
    return zi


def zip_bytes(members, comment=b""):
    """A zip made by zipfile in memory: members are (name, data, method)."""
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as zf:
        for name, data, method in members:
            zf.writestr(zinfo(name, method), data)
        zf.comment = comment
    return b.getvalue()


class NoSeekSink:
    """A write-only sink (no seek, no tell): zipfile then streams, with
    data descriptors."""

    def __init__(self):
        self.chunks = []

    def write(self, data):
        self.chunks.append(bytes(data))
        return len(data)

    def flush(self):
        pass

    def getvalue(self):
        return b"".join(self.chunks)


def write_file(path, data):
    with open(path, "wb") as f:
        f.write(data)


def make_valid(corpus):
    """Write the valid archives; returns [(archive file name, notes)]."""
    arrays = {name: load_case(corpus, name) for name in CASES}
    order = []

    def path(name):
        order.append(name)
        return os.path.join(OUT_DIR, name)

    np.savez(path("savez.npz"), **arrays)
    np.savez_compressed(path("savez_compressed.npz"), **arrays)

    np.savez(path("keys.npz"), **{
        "a/b": load_case(corpus, "i1"),
        "\u00e9": load_case(corpus, "u3_str_le"),
        "x.npy": load_case(corpus, "f4_le"),
        "plain": load_case(corpus, "c16_le"),
    })

    np.savez(path("empty.npz"))

    sink = NoSeekSink()
    with zipfile.ZipFile(sink, "w") as zf:
        zf.writestr(zinfo("deflated.npy", zipfile.ZIP_DEFLATED),
                    corpus["i4be_2x3x4_c"])
        zf.writestr(zinfo("stored.npy"), corpus["rec_flat_mixed"])
    write_file(path("stream.npz"), sink.getvalue())

    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as zf:
        zf.writestr(zinfo("bzip2.npy", zipfile.ZIP_BZIP2),
                    corpus["f8le_300x2_f"])
        zf.writestr(zinfo("lzma.npy", zipfile.ZIP_LZMA),
                    corpus["rec_long_double"])
        zf.writestr(zinfo("notes.txt"),
                    b"libnpyio test archive: this member is not an array.\n")
        d = zinfo("dir/")
        d.external_attr = (0o40755 << 16) | 0x10
        d.CRC = d.compress_size = d.file_size = 0
        zf.mkdir(d)
        zf.writestr(zinfo("x.bin"), corpus["i2_le"])
        zf.comment = ODD_COMMENT
    write_file(path("odd.npz"), b.getvalue())

    b = io.BytesIO()
    np.savez(b, first=load_case(corpus, "u2_le"),
             second=load_case(corpus, "f8be_3x5_f"))
    junk = bytes((i * 37 + 11) % 251 for i in range(PREFIX_LEN))
    assert junk[:2] != b"PK" and junk[:6] != MAGIC
    write_file(path("prefix.npz"), junk + b.getvalue())

    b = io.BytesIO()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Duplicate name",
                                category=UserWarning)
        with zipfile.ZipFile(b, "w") as zf:
            zf.writestr(zinfo("a"), corpus["i1"])
            zf.writestr(zinfo("a.npy"), corpus["u1"])
            zf.writestr(zinfo("a.npy"), corpus["bool"])
    write_file(path("dups.npz"), b.getvalue())

    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as zf:
        for name, case in (("a.npy", "c16be_3x5_c"), ("b.npy", "i4le_0d"),
                           ("c.npy", "f8le_300x2_f")):
            header_offset = b.tell()
            base = header_offset + LOCAL_LEN + len(name) + 4 + 2
            pad = -base % ALIGN
            extra = struct.pack("<HHH", ALIGN_EXTRA_ID, 2 + pad, ALIGN)
            extra += bytes(pad)
            zf.writestr(zinfo(name, extra=extra), corpus[case])
    write_file(path("aligned_store.npz"), b.getvalue())
    return order


# ---------------------------------------------------------------------------
# Valid archives: facts from the bytes
# ---------------------------------------------------------------------------

def array_key(arr):
    """A comparable form of an array's dtype, shape, order and values.
    Not its bytes: an array np.load reads from a stream (a zip member) has
    garbage in the padding of records (see load_case)."""
    return ("array", str(arr.dtype.descr), arr.shape, np.isfortran(arr),
            repr(arr.tolist()))


def member_value(data):
    """What np.load would return for a member with these bytes, in the
    comparable form of returned_value."""
    if data.startswith(MAGIC):
        return array_key(np.load(io.BytesIO(data), allow_pickle=True))
    return ("bytes", data)


def returned_value(val):
    if isinstance(val, np.ndarray):
        return array_key(val)
    assert isinstance(val, bytes), type(val)
    return ("bytes", val)


def npz_key(name):
    return name[:-4] if name.endswith(".npy") else name


def describe_archive(name, by_bytes):
    """Manifest rows for one valid archive, plus {index: bytes} of the
    members that need a .bin file."""
    p = os.path.join(OUT_DIR, name)
    with open(p, "rb") as f:
        buf = f.read()
    e, eocd, entries = parse_zip(buf)
    with zipfile.ZipFile(p) as zf:
        infos = zf.infolist()
        assert zf.comment == eocd["comment"]
        contents = [zf.read(i) for i in infos]  # checks the CRCs
        assert zf.testzip() is None
        name_to_info = dict(zf.NameToInfo)
        names = zf.namelist()
    assert len(infos) == len(entries)

    rows, bins = [], {}
    for idx, (zi, x, data) in enumerate(zip(infos, entries, contents)):
        fname = zi.filename
        assert not any(c in fname for c in "\t\n\\"), fname
        enc = "utf-8" if x.flags & 0x800 else "cp437"
        assert x.name.decode(enc) == fname and x.l_name == x.name
        assert zi.header_offset == x.header_offset
        assert (zi.compress_type, zi.flag_bits, zi.compress_size,
                zi.file_size, zi.CRC) == (x.method, x.flags, x.csize,
                                          x.usize, x.crc)
        assert len(data) == x.usize and zlib.crc32(data) == x.crc
        assert x.l_method == x.method and x.l_flags == x.flags
        if x.flags & 0x8:
            # Streamed: zeros in the local header, a data descriptor after
            # the data.
            assert (x.l_crc, x.l_csize, x.l_usize) == (0, 0, 0)
            d = x.data_offset + x.csize
            assert buf[d:d + 16] == DD_SIG + struct.pack(
                "<III", x.crc, x.csize, x.usize)
        else:
            assert (x.l_crc, x.l_csize, x.l_usize) == (x.crc, x.csize,
                                                       x.usize)
        z64 = extra_fields(x.l_extra).get(1)
        if z64 is not None:  # np.savez's forced ZIP64 local extra
            assert z64 == struct.pack("<QQ", x.usize, x.csize)
        source = by_bytes.get(data, "-")
        if source == "-":
            bins[idx] = data
        rows.append({"archive": name, "index": idx, "file": fname,
                     "key": npz_key(fname), "method": x.method,
                     "flags": x.flags, "csize": x.csize, "usize": x.usize,
                     "crc32": x.crc, "header_offset": x.header_offset,
                     "data_offset": x.data_offset,
                     "is_array": int(data.startswith(MAGIC)),
                     "source": source, "_data": data})

    # np_key_choice.  NumPy's rule, modelled with zipfile: the member named
    # key if any, else key + ".npy"; zipfile gives the last of that name.
    def modelled(key):
        member = key if key in names else key + ".npy"
        return infos.index(name_to_info[member])

    keys = sorted({r["key"] for r in rows})
    chosen = {}
    try:
        npz = np.load(p, allow_pickle=True)
    except Exception as exc:  # prefix.npz: taken for a pickle
        assert name == "prefix.npz", (name, exc)
        chosen = {k: modelled(k) for k in keys}
    else:
        with npz:
            assert isinstance(npz, np.lib.npyio.NpzFile)
            for k in keys:
                got = returned_value(npz[k])
                hits = [r["index"] for r in rows if r["key"] == k
                        and member_value(r["_data"]) == got]
                assert len(hits) == 1, (name, k, hits)
                assert hits[0] == modelled(k), (name, k)
                chosen[k] = hits[0]
            if name == "dups.npz":
                got = returned_value(npz["a.npy"])
                assert member_value(rows[2]["_data"]) == got
                assert member_value(rows[1]["_data"]) != got
    for r in rows:
        r["np_key_choice"] = int(chosen[r["key"]] == r["index"])
    if not rows:
        rows.append(dict({c: "-" for c in MANIFEST_COLUMNS},
                         archive=name, index=-1))
    return rows, bins, buf, entries


def check_valid_specifics(facts, corpus):
    """Assertions on what each archive was meant to contain."""
    def rows(name):
        return facts[name][0]

    for name, method in (("savez.npz", 0), ("savez_compressed.npz", 8)):
        r = rows(name)
        assert [x["key"] for x in r] == CASES
        assert [x["source"] for x in r] == CASES
        assert all(x["method"] == method and x["flags"] == 0 for x in r)
        for x in facts[name][3]:
            assert 1 in extra_fields(x.l_extra) and not x.cd_extra
    r = rows("keys.npz")
    assert [x["file"] for x in r] == ["a/b.npy", "\u00e9.npy", "x.npy.npy",
                                     "plain.npy"]
    assert [x["flags"] for x in r] == [0, 0x800, 0, 0]
    assert rows("empty.npz")[0]["index"] == -1
    assert len(facts["empty.npz"][2]) == EOCD_LEN
    r = rows("stream.npz")
    assert [(x["method"], x["flags"]) for x in r] == [(8, 8), (0, 8)]
    r = rows("odd.npz")
    assert [(x["file"], x["method"], x["flags"]) for x in r] == [
        ("bzip2.npy", 12, 0), ("lzma.npy", 14, 2), ("notes.txt", 0, 0),
        ("dir/", 0, 0), ("x.bin", 0, 0)]
    assert [x["is_array"] for x in r] == [1, 1, 0, 0, 1]
    assert facts["odd.npz"][1].keys() == {2, 3}
    r = rows("prefix.npz")
    assert len(r) == 2
    for x in facts["prefix.npz"][3]:
        assert x.header_offset == x.stored_offset + PREFIX_LEN
    r = rows("dups.npz")
    assert [(x["file"], x["key"], x["source"], x["np_key_choice"])
            for x in r] == [("a", "a", "i1", 1), ("a.npy", "a", "u1", 0),
                            ("a.npy", "a", "bool", 0)]
    r = rows("aligned_store.npz")
    for x, e in zip(r, facts["aligned_store.npz"][3]):
        assert x["data_offset"] % ALIGN == 0 and x["method"] == 0
        f = extra_fields(e.l_extra)
        assert list(f) == [ALIGN_EXTRA_ID] and f[ALIGN_EXTRA_ID][:2] == \
            struct.pack("<H", ALIGN)


# ---------------------------------------------------------------------------
# Malformed archives
# ---------------------------------------------------------------------------

def tiny_npy(arr):
    b = io.BytesIO()
    np.save(b, arr, allow_pickle=False)
    return b.getvalue()


A_NPY = tiny_npy(np.arange(10, dtype="<i4"))
B_NPY = tiny_npy(np.arange(6, dtype="<f8").reshape(2, 3) * 0.5)
C_NPY = tiny_npy(np.array([b"ab", b"cd", b"ef"], dtype="S2"))
STORED, DEFLATED = zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED


def two(method_b=STORED, b_data=B_NPY):
    return [("a.npy", A_NPY, DEFLATED), ("b.npy", b_data, method_b)]


def put16(buf, o, v):
    struct.pack_into("<H", buf, o, v)


def put32(buf, o, v):
    struct.pack_into("<I", buf, o, v)


def patch_both(buf, x, cd_field, lh_field, fmt, value):
    """Set a field in the CD entry and the local header of entry x."""
    struct.pack_into(fmt, buf, x.cd_pos + cd_field, value)
    struct.pack_into(fmt, buf, x.header_offset + lh_field, value)


def deflate(data, level=-1):
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def replace_data(members, index, stream, usize, crc):
    """Build the archive with member `index`'s compressed bytes replaced by
    `stream` and its sizes/CRC set to (len(stream), usize, crc) in both
    headers.  The member must be deflated in `members`."""
    base = bytearray(zip_bytes(members))
    _, _, entries = parse_zip(bytes(base))
    x = entries[index]
    assert x.method == 8
    out = (base[:x.data_offset] + stream
           + base[x.data_offset + x.csize:])
    delta = len(stream) - x.csize
    out = bytearray(out)
    e = bytes(out).rfind(EOCD_SIG)
    # Later local headers and the directory move by delta.
    put32(out, e + EOCD_CD_OFFSET, u32(out, e + EOCD_CD_OFFSET) + delta)
    cd = u32(out, e + EOCD_CD_OFFSET)
    for j, y in enumerate(entries):
        pos = y.cd_pos + delta
        assert out[pos:pos + 4] == CD_SIG
        if j > index:
            put32(out, pos + CD_OFFSET, y.stored_offset + delta)
    assert cd == e - u32(out, e + EOCD_CD_SIZE)
    _, _, entries = parse_zip(bytes(out))
    patch_both(out, entries[index], CD_CSIZE, LH_CSIZE, "<I", len(stream))
    patch_both(out, entries[index], CD_USIZE, LH_USIZE, "<I", usize)
    patch_both(out, entries[index], CD_CRC, LH_CRC, "<I", crc)
    return bytes(out)


def bad_cases():
    """(name, stage, index, status, description, builder, python_rejects).
    builder() returns the bytes; python_rejects says whether Python 3.11's
    zipfile / np.load fails on the case (asserted)."""
    cases = []

    def case(name, stage, index, status, what, rejects=True):
        def deco(fn):
            cases.append((name, stage, index, status, what, fn, rejects))
            return fn
        return deco

    def patched(members=None):
        buf = bytearray(zip_bytes(members or two()))
        e, eocd, entries = parse_zip(bytes(buf))
        return buf, e, eocd, entries

    # --- open / E_FORMAT -------------------------------------------------
    @case("no_eocd.npz", "open", -1, "E_FORMAT",
          "256 random bytes, no end of central directory record")
    def _():
        data = random.Random(1234).randbytes(256)
        assert b"PK" not in data
        return data

    @case("cd_overlaps_eocd.npz", "open", -1, "E_FORMAT",
          "EOCD directory offset +16: offset+size ends 16 bytes past the "
          "EOCD start, inside the file")
    def _():
        buf, e, eocd, _ = patched()
        put32(buf, e + EOCD_CD_OFFSET, eocd["cd_offset"] + 16)
        assert eocd["cd_offset"] + 16 + eocd["cd_size"] <= len(buf)
        return bytes(buf)

    @case("cd_before_start.npz", "open", -1, "E_FORMAT",
          "EOCD directory size = EOCD offset + 10 (offset 0): the directory "
          "would start 10 bytes before byte 0")
    def _():
        buf, e, eocd, _ = patched()
        put32(buf, e + EOCD_CD_SIZE, e + 10)
        put32(buf, e + EOCD_CD_OFFSET, 0)
        return bytes(buf)

    @case("cd_bad_signature.npz", "open", -1, "E_FORMAT",
          "signature of central directory entry 1 is PK\\x01\\x03")
    def _():
        buf, e, eocd, entries = patched()
        buf[entries[1].cd_pos + 3] = 3
        return bytes(buf)

    @case("cd_count_too_large.npz", "open", -1, "E_FORMAT",
          "EOCD entry counts 60000 with 2 entries in the directory (walked "
          "by its size)", rejects=False)
    def _():
        buf, e, eocd, entries = patched()
        put16(buf, e + EOCD_N_DISK, 60000)
        put16(buf, e + EOCD_N_TOTAL, 60000)
        return bytes(buf)

    @case("overlapping_members.npz", "open", -1, "E_FORMAT",
          "central directory entry 1 is a copy of entry 0 (same name, same "
          "local header offset): two members share their bytes")
    def _():
        members = [("a.npy", A_NPY, STORED), ("b.npy", A_NPY, STORED)]
        buf, e, eocd, entries = patched(members)
        n = entries[1].cd_pos - entries[0].cd_pos
        buf[entries[1].cd_pos:entries[1].cd_pos + n] = \
            buf[entries[0].cd_pos:entries[0].cd_pos + n]
        return bytes(buf)

    @case("local_name_mismatch.npz", "open", -1, "E_FORMAT",
          "local header of member 1 names c.npy, central directory b.npy")
    def _():
        buf, e, eocd, entries = patched()
        x = entries[1]
        assert buf[x.header_offset + LOCAL_LEN] == ord("b")
        buf[x.header_offset + LOCAL_LEN] = ord("c")
        return bytes(buf)

    @case("local_method_mismatch.npz", "open", -1, "E_FORMAT",
          "member 1 stored: method 8 in its local header, 0 in the central "
          "directory", rejects=False)
    def _():
        buf, e, eocd, entries = patched()
        assert entries[1].method == 0
        put16(buf, entries[1].header_offset + LH_METHOD, 8)
        return bytes(buf)

    @case("local_sizes_mismatch.npz", "open", -1, "E_FORMAT",
          "member 1 (flag 8 clear): local header csize and usize 4 more "
          "than the central directory's", rejects=False)
    def _():
        buf, e, eocd, entries = patched()
        x = entries[1]
        assert x.flags == 0
        put32(buf, x.header_offset + LH_CSIZE, x.csize + 4)
        put32(buf, x.header_offset + LH_USIZE, x.usize + 4)
        return bytes(buf)

    @case("zip64_locator_garbage.npz", "open", -1, "E_FORMAT",
          "EOCD fields all 0xFFFF/0xFFFFFFFF (use ZIP64) and a ZIP64 end "
          "locator whose offset (0) points at a local header, not a ZIP64 "
          "end record")
    def _():
        buf, e, eocd, entries = patched()
        locator = struct.pack("<4sIQI", b"PK\x06\x07", 0, 0, 1)
        end = bytearray(buf[e:])
        put16(end, EOCD_N_DISK, 0xFFFF)
        put16(end, EOCD_N_TOTAL, 0xFFFF)
        put32(end, EOCD_CD_SIZE, 0xFFFFFFFF)
        put32(end, EOCD_CD_OFFSET, 0xFFFFFFFF)
        return bytes(buf[:e]) + locator + bytes(end)

    @case("zip64_sizes_without_extra.npz", "open", -1, "E_FORMAT",
          "central directory entry 0 has csize and usize 0xFFFFFFFF but no "
          "ZIP64 extra field")
    def _():
        buf, e, eocd, entries = patched()
        assert not entries[0].cd_extra
        put32(buf, entries[0].cd_pos + CD_CSIZE, 0xFFFFFFFF)
        put32(buf, entries[0].cd_pos + CD_USIZE, 0xFFFFFFFF)
        return bytes(buf)

    # --- open / E_TRUNCATED ----------------------------------------------
    @case("cd_past_eof.npz", "open", -1, "E_TRUNCATED",
          "EOCD directory offset = file size - 10: the directory it "
          "describes runs past the end of the file")
    def _():
        buf, e, eocd, _ = patched()
        put32(buf, e + EOCD_CD_OFFSET, len(buf) - 10)
        return bytes(buf)

    @case("local_header_past_eof.npz", "open", -1, "E_TRUNCATED",
          "local header of member 1 has extra length 65535: the header runs "
          "past the end of the file")
    def _():
        buf, e, eocd, entries = patched()
        x = entries[1]
        put16(buf, x.header_offset + LH_XLEN, 0xFFFF)
        assert x.header_offset + LOCAL_LEN + 5 + 0xFFFF > len(buf)
        return bytes(buf)

    # --- member / E_CHECKSUM ---------------------------------------------
    @case("stored_crc_mismatch.npz", "member", 1, "E_CHECKSUM",
          "member 1 stored: its last data byte flipped (CRC mismatch)")
    def _():
        buf, e, eocd, entries = patched()
        x = entries[1]
        buf[x.data_offset + x.csize - 1] ^= 0xFF
        return bytes(buf)

    @case("deflated_crc_mismatch.npz", "member", 1, "E_CHECKSUM",
          "member 1 deflated: CRC field low byte flipped in both headers "
          "(the stream is intact)")
    def _():
        buf, e, eocd, entries = patched(two(DEFLATED))
        x = entries[1]
        patch_both(buf, x, CD_CRC, LH_CRC, "<I", x.crc ^ 0xFF)
        return bytes(buf)

    # An empty member has no data to check, but its CRC-32 must still be
    # that of no bytes (0): zipfile says Bad CRC-32 reading it. (Found by
    # fuzz_npz: verify passed the deflated one, whose read failed.)
    for label, method in (("stored", STORED), ("deflated", DEFLATED)):
        @case("%s_empty_crc_mismatch.npz" % label, "member", 1, "E_CHECKSUM",
              "member 1 %s, 0 bytes: CRC 0010456e in both headers, not 0"
              % label)
        def _(method=method):
            buf, e, eocd, entries = patched(two(method, b""))
            x = entries[1]
            assert x.usize == 0 and x.crc == 0
            patch_both(buf, x, CD_CRC, LH_CRC, "<I", 0x0010456E)
            return bytes(buf)

    # --- member / E_FORMAT / E_TRUNCATED (deflate) -----------------------
    @case("deflated_usize_small.npz", "member", 1, "E_FORMAT",
          "member 1 deflated: the stream inflates to the .npy plus 64 "
          "bytes; usize and CRC (both headers) are those of the .npy alone",
          rejects=False)
    def _():
        stream = deflate(B_NPY + bytes(range(64)))
        return replace_data(two(DEFLATED), 1, stream, len(B_NPY),
                            zlib.crc32(B_NPY))

    @case("deflated_usize_zero.npz", "member", 1, "E_FORMAT",
          "member 1 deflated: usize 0 and CRC 0 (both headers), the stream "
          "inflates to the .npy (zipfile stops at the declared 0 bytes)",
          rejects=False)
    def _():
        return replace_data(two(DEFLATED), 1, deflate(B_NPY), 0, 0)

    @case("deflated_usize_large.npz", "member", 1, "E_TRUNCATED",
          "member 1 deflated: usize (both headers) 64 more than the stream "
          "inflates to; CRC that of the real content", rejects=False)
    def _():
        buf, e, eocd, entries = patched(two(DEFLATED))
        x = entries[1]
        patch_both(buf, x, CD_USIZE, LH_USIZE, "<I", x.usize + 64)
        return bytes(buf)

    @case("deflate_corrupt.npz", "member", 1, "E_FORMAT",
          "member 1 deflated: first block header has block type 3 "
          "(reserved)")
    def _():
        buf, e, eocd, entries = patched(two(DEFLATED))
        x = entries[1]
        buf[x.data_offset] |= 0x06
        return bytes(buf)

    # --- member / E_UNSUPPORTED ------------------------------------------
    @case("encrypted.npz", "member", 1, "E_UNSUPPORTED",
          "member 1: flag bit 0 (encrypted) set in both headers")
    def _():
        buf, e, eocd, entries = patched()
        patch_both(buf, entries[1], CD_FLAGS, LH_FLAGS, "<H", 1)
        return bytes(buf)

    @case("method_deflate64.npz", "member", 1, "E_UNSUPPORTED",
          "member 1: method 9 (deflate64) in both headers (data is a "
          "deflate stream)")
    def _():
        buf, e, eocd, entries = patched(two(DEFLATED))
        patch_both(buf, entries[1], CD_METHOD, LH_METHOD, "<H", 9)
        return bytes(buf)

    @case("patched_data.npz", "member", 1, "E_UNSUPPORTED",
          "member 1: flag bit 5 (compressed patched data) set in both "
          "headers")
    def _():
        buf, e, eocd, entries = patched()
        patch_both(buf, entries[1], CD_FLAGS, LH_FLAGS, "<H", 0x20)
        return bytes(buf)

    # --- member / E_LIMIT ------------------------------------------------
    @case("ratio_64mib_zeros.npz", "member", 1, "E_LIMIT",
          "member 1: a 64 MiB .npy of uint8 zeros deflated at level 9 "
          "(ratio about 1000; the test sets a ratio limit of 100)",
          rejects=False)
    def _():
        n = 64 * 2**20
        hdr = npf.header_data_from_array_1_0(np.zeros(0, np.uint8))
        hdr["shape"] = (n - 128,)
        b = io.BytesIO()
        npf.write_array_header_1_0(b, hdr)
        data = b.getvalue()
        assert len(data) == 128
        data += bytes(n - 128)
        b = io.BytesIO()
        with zipfile.ZipFile(b, "w") as zf:
            zf.writestr(zinfo("a.npy", DEFLATED), A_NPY)
            zf.writestr(zinfo("zeros.npy", DEFLATED), data, compresslevel=9)
        out = b.getvalue()
        assert len(out) < 100_000
        return out

    # --- member / E_FORMAT (the .npy inside) -----------------------------
    @case("npy_header_no_shape.npz", "member", 1, "E_FORMAT",
          "member 1 stored: an .npy whose header dict has no 'shape'")
    def _():
        text = b"{'descr': '<i4', 'fortran_order': False, }"
        hlen = len(text) + 1
        text += b" " * (-(10 + hlen) % 64) + b"\n"
        npy = MAGIC + b"\x01\x00" + struct.pack("<H", len(text)) + text
        npy += np.arange(10, dtype="<i4").tobytes()
        return zip_bytes([("a.npy", A_NPY, DEFLATED),
                          ("b.npy", npy, STORED),
                          ("c.npy", C_NPY, STORED)])

    # The minor-version byte is part of the version (np.load refuses
    # (1, 1)): a stored member that differs only there is an .npy file
    # (its magic) that no reader, map or stat offset takes as 1.0.
    @case("npy_version_1_1.npz", "member", 1, "E_UNSUPPORTED",
          "member 1 stored: np.save's .npy with version byte 1.1, not 1.0")
    def _():
        npy = bytearray(B_NPY)
        assert npy[6:8] == b"\x01\x00"
        npy[7] = 1
        return zip_bytes([("a.npy", A_NPY, DEFLATED),
                          ("b.npy", bytes(npy), STORED),
                          ("c.npy", C_NPY, STORED)])

    return cases


def python_verdict(data, stage, index):
    """Try Python on a malformed archive: open it, read the member(s) and
    np.load them.  Returns (rejected, text)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = zf.infolist()
            todo = infos if stage == "open" else [infos[index]]
            for zi in todo:
                content = zf.read(zi)
                if len(content) != zi.file_size:
                    return False, (
                        "zipfile reads %d bytes of %d without error"
                        % (len(content), zi.file_size))
                if content.startswith(MAGIC):
                    np.load(io.BytesIO(content), allow_pickle=False)
    except Exception as exc:
        msg = " ".join(str(exc).split())
        if len(msg) > 110:
            msg = msg[:107] + "..."
        return True, "%s: %s" % (type(exc).__name__, msg)
    return False, "zipfile and np.load read it without error"


def make_bad():
    os.makedirs(BAD_DIR)
    rows = []
    for name, stage, index, status, what, build, rejects in bad_cases():
        data = build()
        write_file(os.path.join(BAD_DIR, name), data)
        rejected, text = python_verdict(data, stage, index)
        assert rejected == rejects, (name, text)
        if name == "deflated_usize_large.npz":
            assert text.startswith("zipfile reads"), text
        full = "%s; Python 3.11: %s" % (what, text)
        assert not any(c in full for c in "\t\n"), full
        rows.append([name, stage, index, status, full])
    npgen.write_tsv(os.path.join(BAD_DIR, "manifest.tsv"), BAD_COLUMNS, rows)
    return rows


# ---------------------------------------------------------------------------

def main():
    t0 = time.monotonic()
    # The arrays corpus holds long double bytes, and NumPy's savez layout
    # (force_zip64 local extras, pickle protocol of object arrays) is that
    # of NumPy 1.24.
    npgen.check_host("gen_npz.py", "1.24.")
    print("NumPy %s, Python %s, zlib %s" % (
        np.__version__, sys.version.split()[0], zlib.ZLIB_RUNTIME_VERSION))
    corpus, by_bytes = read_arrays_corpus()
    assert set(CASES) <= set(corpus)

    # Only this script's own output goes: npz/append, npz/damage,
    # npz/hostile, ... are other generators'.
    if os.path.isdir(BAD_DIR):
        shutil.rmtree(BAD_DIR)
    os.makedirs(OUT_DIR, exist_ok=True)
    for name in os.listdir(OUT_DIR):
        if os.path.isfile(os.path.join(OUT_DIR, name)):
            os.remove(os.path.join(OUT_DIR, name))

    order = make_valid(corpus)
    facts = {name: describe_archive(name, by_bytes) for name in order}
    check_valid_specifics(facts, corpus)

    manifest = []
    for name in order:
        rows, bins, _, _ = facts[name]
        manifest += [[r[c] for c in MANIFEST_COLUMNS] for r in rows]
        for idx, data in sorted(bins.items()):
            write_file(os.path.join(OUT_DIR, "%s.%d.bin" % (name, idx)), data)
    npgen.write_tsv(os.path.join(OUT_DIR, "manifest.tsv"), MANIFEST_COLUMNS,
                    manifest)

    bad = make_bad()

    total, nfiles = 0, 0
    for dirpath, _, files in os.walk(OUT_DIR):
        for fn in sorted(files):
            total += os.path.getsize(os.path.join(dirpath, fn))
            nfiles += 1
    for name in order:
        rows = facts[name][0]
        print("  %-22s %7d bytes, %d members" % (
            name, len(facts[name][2]), sum(r["index"] != -1 for r in rows)))
    print("  bad/: %d archives (%s)" % (len(bad), ", ".join(
        "%s %d" % (s, sum(r[3] == s for r in bad))
        for s in sorted({r[3] for r in bad}))))
    print("  %d files, %d bytes in total" % (nfiles, total))
    assert total < MAX_TOTAL_BYTES, total
    elapsed = time.monotonic() - t0
    print("all checks passed (%.1f s)" % elapsed)
    assert elapsed < MAX_SECONDS, elapsed


if __name__ == "__main__":
    main()
