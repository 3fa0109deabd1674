#!/usr/bin/python3
"""Generate the array-data corpus for libnpyio's C reader tests.

Run with a Python that has NumPy (the reference build is NumPy 1.24.2 on
x86_64 Linux; the script refuses other long double formats, see below):

    /usr/bin/python3 tests/data/gen_arrays.py

Output (under tests/data/arrays/, next to this script), per case <name>:

  <name>.npy       written by np.save
  <name>.le.bin    the data with every element converted to little-endian,
                   in the file's memory order (Fortran order stays Fortran)
  <name>.be.bin    the same, big-endian
  <name>.c.bin     the data in C order, byte order as stored (for a C-order
                   file this is the file's data section itself)
  <name>.c_le.bin  C order and little-endian
  <name>.c_be.bin  C order and big-endian
  manifest.tsv     one row per case (columns below)

so the C tests can check npyio_reader_read() with every flag combination on
either host byte order without NumPy: NPYIO_READ_NATIVE gives .le.bin or
.be.bin, adding NPYIO_READ_C_ORDER gives .c_le.bin or .c_be.bin, and
NPYIO_READ_C_ORDER alone gives .c.bin.

Object arrays (has_object 1) have only the .npy: their data is a pickle.

manifest.tsv is UTF-8, '\n' terminated, with one header line starting with
'#' that lists the columns, then tab-separated:

  name         the case name (file names start with it)
  file         <name>.npy
  fortran      0/1, fortran_order as np.save wrote it in the header (np.save
               writes C order for arrays that are both C and F contiguous:
               empty arrays, 0-d, and those with at most one dimension > 1)
  ndim         number of dimensions
  shape        comma-separated, empty for 0-d
  itemsize     of the dtype
  nbytes       count * itemsize (count = product of shape, 1 for 0-d);
               the size of every .bin of the case
  data_offset  where the data starts in the .npy
  has_object   0/1

Conversion rules the .bin files follow (the reader's contract):
  * Every field is converted, recursively through nested records and
    subarrays: integers, floats, datetimes as one unit of their size
    (long double: all 16 bytes, including the 6 unused ones of x87's
    80-bit format), complex as two halves, U<n> as n units of 4.  Fields
    without a byte order ('|': bool, 1-byte ints, S, V) are untouched.
  * Bytes that belong to no field (gaps and trailing padding of records
    with explicit offsets) are kept as stored: a reader moves whole
    elements and swaps fields in place.  The records with gaps fill them
    with PAD_BYTE (0xA5), not zero, so a reader that clears or moves them
    fails.

Why the bytes are built by hand instead of taken from NumPy conversions:
NumPy 1.24 does not keep the bytes outside fields when it copies a record
array (astype, ascontiguousarray, even .copy() leave them uninitialised),
and a cast that creates long doubles (e.g. int -> f16) leaves garbage in
their 6 unused bytes.  So every array is written field by field into a
buffer we own, long doubles are cleaned after the cast, and conversions are
done by in-place byte swaps and whole-element (void) copies, which NumPy
does byte-exactly.  NumPy's own conversions (astype to
dtype.newbyteorder(), a C-order copy) then check the values, and for
dtypes without fields the bytes too.

Values are distinct and spread over every byte of an element (integer kinds
get a byte pattern in which no two bytes of an element are equal), so a
byte-swap of the wrong unit or an element reorder shows.  No NaNs.

The output is deterministic; every run removes the old files and rewrites
them, then re-reads everything and checks it against NumPy.
"""

import io
import math
import os
import sys
import warnings

import numpy as np
from numpy.lib import format as npf

import npgen
from npgen import leaf_view, leaves, masked_dtype, preamble

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "arrays")
MANIFEST = os.path.join(OUT_DIR, "manifest.tsv")

MAX_TOTAL_BYTES = 300 * 1024  # the whole directory, to keep the repo small

MANIFEST_COLUMNS = ["name", "file", "fortran", "ndim", "shape", "itemsize",
                    "nbytes", "data_offset", "has_object"]

# The .bin files of a case: suffix -> (byte order or None for "as stored",
# C order?).
BIN_FILES = {
    ".le.bin": ("<", False),
    ".be.bin": (">", False),
    ".c.bin": (None, True),
    ".c_le.bin": ("<", True),
    ".c_be.bin": (">", True),
}

# Filled into the bytes of a record that belong to no field (see module doc).
PAD_BYTE = 0xA5

N1D = 12  # elements of the 1-D cases: a few dozen bytes to ~200 each


class Case:
    """One array.  raw is the buffer the array lives in: exactly the bytes
    np.save must write as the data section (checked after writing)."""

    def __init__(self, name, group, arr, raw, pad=0):
        self.name = name
        self.group = group
        self.arr = arr
        self.raw = raw
        self.pad = pad


# ---------------------------------------------------------------------------
# dtype helpers
# ---------------------------------------------------------------------------

def is_long_double(leaf):
    return leaf.kind in "fc" and leaf.type in (np.longdouble, np.clongdouble)


# Bytes 10..15 of an x87 long double (as stored little-endian) are unused.
X87_USED = 10


# ---------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------

def clean_long_double(native):
    """Zero the 6 unused bytes of every long double (the part of each
    element, or of each complex half, past X87_USED)."""
    u8 = native.view(np.uint8).reshape(-1, 16)
    u8[:, X87_USED:] = 0
    return native


def native_values(leaf, n, start):
    """n distinct values for a scalar dtype, as a 1-D array of the native
    byte order version of that dtype (values differ with `start`)."""
    k = np.arange(n, dtype=np.int64) * 3 + start
    sign = np.where(np.arange(n) % 2 == 1, -1, 1)
    native = leaf.newbyteorder("=")
    kind = leaf.kind
    if kind == "b":
        return (k % 3 == 0).astype(native)
    if kind in "iumMV":
        # Byte j of element i is ((start + i) * size + j) * 5 + 1 mod 256:
        # within an element no two bytes are equal (5 is invertible mod
        # 256), and for even sizes byte 0 is odd, so no datetime is NaT
        # (-2**63, whose byte 0 is zero).
        size = leaf.itemsize
        pos = np.arange(start * size, (start + n) * size, dtype=np.int64)
        pattern = ((pos * 5 + 1) % 256).astype(np.uint8)
        # The pattern is little-endian integer bytes; the reference host is
        # little-endian (check_host), so this view is the native value.
        return pattern.view(native).copy()
    if kind == "f":
        if leaf.itemsize == 16:
            # Long double: small integers, exact in any format.
            vals = (k * sign).astype(native)
            return clean_long_double(vals)
        if leaf.itemsize == 2:
            return (k * sign / 8).astype(native)  # exact in half precision
        return (k * sign / 7).astype(native)  # uses the whole mantissa
    if kind == "c":
        if leaf.itemsize == 32:
            vals = (k * sign - 1j * (2 * k + 1)).astype(native)
            return clean_long_double(vals)
        return (k * sign / 7 - 1j * (2 * k + 1) / 3).astype(native)
    if kind == "S":
        # Lengths 0..itemsize, high bytes too; never a NUL byte, since
        # NumPy drops trailing NULs when it reads an S value.
        out = []
        for i in range(n):
            length = (start + i) % (leaf.itemsize + 1)
            out.append(bytes((start * 7 + i * 11 + j * 29 + 0x41) % 256 or 1
                             for j in range(length)))
        return np.array(out, dtype=native)
    if kind == "U":
        # Non-ASCII and non-BMP characters, so each UCS4 unit has several
        # non-zero bytes and a swap of the wrong width shows.
        chars = "aZ\u00e9\u20ac\u03a9\u4e2d\U0001F600\u00ff0~"
        out = []
        for i in range(n):
            length = (start + i) % (leaf.itemsize // 4 + 1)
            out.append("".join(chars[(start + i + 3 * j) % len(chars)]
                               for j in range(length)))
        return np.array(out, dtype=native)
    raise AssertionError("no values for %s" % leaf)


def values(leaf, n, start):
    """native_values in leaf's own byte order.  byteswap() reverses each
    unit (whole long double, complex halves, UCS4 characters) and, unlike
    a value cast, copies the long doubles' unused bytes as they are."""
    vals = native_values(leaf, n, start)
    if leaf.isnative:  # True for '|' types too
        return vals.view(leaf)
    return vals.byteswap().view(leaf)


def build(dtype, shape, fortran=False, pad=0):
    """An array of dtype and shape (Fortran memory order if fortran) living
    in a bytearray we own: bytes outside fields are `pad`, each field gets
    its own values, in C index order (so Fortran memory order differs)."""
    dtype = np.dtype(dtype)
    count = math.prod(shape)
    raw = bytearray([pad]) * (count * dtype.itemsize)
    arr = np.ndarray(shape, dtype, buffer=raw, order="F" if fortran else "C")
    for i, (offset, leaf) in enumerate(leaves(dtype)):
        # Same-dtype assignment is a byte copy, so the values' bytes land
        # unchanged (unused long double bytes included).
        leaf_view(arr, offset, leaf)[...] = \
            values(leaf, count, 1 + 5 * i).reshape(shape)
    return arr, raw


# ---------------------------------------------------------------------------
# The cases
# ---------------------------------------------------------------------------

# Multi-byte scalar kinds: each in both byte orders.  Name -> type code
# without the byte order character.
ORDERED_KINDS = [
    ("i2", "i2"), ("i4", "i4"), ("i8", "i8"),
    ("u2", "u2"), ("u4", "u4"), ("u8", "u8"),
    ("f2", "f2"), ("f4", "f4"), ("f8", "f8"),
    ("f16", "f16"),  # long double
    ("c8", "c8"), ("c16", "c16"),
    ("c32", "c32"),  # complex long double
    ("u3_str", "U3"),
    ("datetime_ns", "M8[ns]"),
    ("timedelta_25s", "m8[25s]"),
]
# Kinds without a byte order ('|').
UNORDERED_KINDS = [("bool", "b1"), ("i1", "i1"), ("u1", "u1"),
                   ("s5", "S5"), ("v4", "V4")]

# A 24-byte record: nested, mixed-endian, no gaps.
REC24 = np.dtype([("x", ">f8"), ("p", [("y", "<i4"), ("z", ">u2")]),
                  ("s", "S2"), ("w", "<c8")])
assert REC24.itemsize == 24

# Nested, mixed-endian, a subarray of records, gaps (explicit offsets):
#   0..1 gap | id 2..5 | gap 6..7 | pts 8..31 (3 x INNER) | gap 32 |
#   flag 33 | gap 34..39 | when 40..47 | trailing 48..51
INNER = np.dtype({"names": ["p", "q"], "formats": [">i2", "<f4"],
                  "offsets": [0, 4], "itemsize": 8})  # gap 2..3
PADDED = np.dtype({"names": ["id", "pts", "flag", "when"],
                   "formats": ["<u4", (INNER, (3,)), "b1", ">m8[s]"],
                   "offsets": [2, 8, 33, 40], "itemsize": 52})

# Same itemsize ladder for the 2-D and 3-D layout cases (byte orders mixed
# so both are exercised).
LAYOUT_DTYPES_2D = [("u1", "u1"), ("i2be", ">i2"), ("f4le", "<f4"),
                    ("f8be", ">f8"), ("c16be", ">c16"), ("rec24", REC24)]
LAYOUT_DTYPES_3D = [("i1", "i1"), ("u2le", "<u2"), ("i4be", ">i4"),
                    ("i8le", "<i8"), ("f16be", ">f16"), ("rec24", REC24)]


def make_cases():
    cases = []

    def add(name, group, dtype, shape, fortran=False, pad=0):
        arr, raw = build(dtype, shape, fortran, pad)
        cases.append(Case(name, group, arr, raw, pad))

    # --- every scalar kind, 1-D ---------------------------------------------
    for name, code in UNORDERED_KINDS:
        add(name, "scalar", code, (N1D,))
    for name, code in ORDERED_KINDS:
        add(name + "_le", "scalar", "<" + code, (N1D,))
        add(name + "_be", "scalar", ">" + code, (N1D,))

    # --- memory layouts: C and Fortran order, 2-D and 3-D -------------------
    for label, dt in LAYOUT_DTYPES_2D:
        for fortran in (False, True):
            add("%s_3x5_%s" % (label, "f" if fortran else "c"), "layout",
                dt, (3, 5), fortran)
    for label, dt in LAYOUT_DTYPES_3D:
        for fortran in (False, True):
            add("%s_2x3x4_%s" % (label, "f" if fortran else "c"), "layout",
                dt, (2, 3, 4), fortran)
    # Built Fortran, but with only one dimension above 1 the array is also C
    # contiguous, and np.save writes fortran_order False.
    add("f8be_1x5_f", "layout", ">f8", (1, 5), fortran=True)
    add("i4le_4x1_f", "layout", "<i4", (4, 1), fortran=True)
    add("f8le_300x2_f", "layout", "<f8", (300, 2), fortran=True)  # tall
    add("f4be_2x300_f", "layout", ">f4", (2, 300), fortran=True)  # wide

    # --- 0-d and empty ------------------------------------------------------
    add("i4le_0d", "edge", "<i4", ())
    add("f8be_0d", "edge", ">f8", ())
    add("rec24_0d", "edge", REC24, ())
    add("i4be_empty", "edge", ">i4", (0,))
    add("f8le_3x0_f", "edge", "<f8", (3, 0), fortran=True)  # written as C
    add("rec24_empty", "edge", REC24, (0,))
    # Elements of 0 bytes in Fortran order, more than one of them: np.save
    # writes fortran_order True and no data; a reader reordering them must
    # not divide by the itemsize (found by outside testing).
    add("void0_2x3_f", "edge", [], (2, 3), fortran=True)
    add("sub0_2x3_f", "edge", [("a", ">i4", (0,))], (2, 3), fortran=True)
    add("void0_4x2x3_f", "edge", [], (4, 2, 3), fortran=True)

    # --- records -------------------------------------------------------------
    add("rec_flat_mixed", "record",
        [("a", ">i4"), ("b", "<f8"), ("c", "S3"), ("d", ">u2", (2,))], (6,))
    add("rec_nested_padded", "record", PADDED, (5,), pad=PAD_BYTE)
    add("rec_nested_padded_3x4_f", "record", PADDED, (3, 4), fortran=True,
        pad=PAD_BYTE)
    add("rec_unicode_complex", "record",
        [("name", ">U2"), ("z", ">c8"), ("alias", "<U2"), ("n", ">i4")],
        (6,))
    add("rec_subarrays", "record",
        [("m", "<f4", (2, 3)), ("n", ">i2", (3,)), ("t", "S2", (2,)),
         ("g", ">u4", (2, 2))], (4,))
    add("rec_long_double", "record",
        [("g", ">f16"), ("G", "<c32"), ("b", "u1"), ("h", "<f16", (2,))],
        (3,))

    # --- the bigger one ------------------------------------------------------
    add("big_f8_fortran", "big", ">f8", (64, 48), fortran=True)

    # --- object array: only the .npy -----------------------------------------
    obj = np.array([1, "a", None], dtype=object)
    cases.append(Case("object_mixed", "object", obj, None))
    return cases


# ---------------------------------------------------------------------------
# Conversions (byte-exact; checked against NumPy's own in check_case)
# ---------------------------------------------------------------------------

def to_byte_order(data, dtype, order):
    """data (whole elements) with every field of the other byte order
    reversed, so all fields are `order` ('<' or '>'); '|' fields and bytes
    outside fields unchanged."""
    buf = bytearray(data)
    other = ">" if order == "<" else "<"
    if buf:
        np.frombuffer(buf, masked_dtype(dtype, other)).byteswap(inplace=True)
    return bytes(buf)


def to_c_order(data, dtype, shape):
    """Fortran-order data rearranged into C order, moving whole elements
    (as void, which NumPy copies byte for byte)."""
    if dtype.itemsize == 0:
        return b""  # no bytes to move (and no V0 dtype to view them as)
    void = np.dtype("V%d" % dtype.itemsize)
    f = np.frombuffer(data, void).reshape(shape, order="F")
    return f.copy(order="C").tobytes()


def expected_bins(case, fortran):
    """suffix -> bytes for every .bin of the case."""
    dt, shape = case.arr.dtype, case.arr.shape
    out = {}
    for suffix, (order, c_order) in BIN_FILES.items():
        data = bytes(case.raw)
        if order is not None:
            data = to_byte_order(data, dt, order)
        if c_order and fortran:
            data = to_c_order(data, dt, shape)
        out[suffix] = data
    return out


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------

def read_header(data):
    """(shape, fortran_order, dtype, data_offset) as np.load reads them."""
    fp = io.BytesIO(data)
    version = npf.read_magic(fp)
    shape, fortran, dtype = npf._read_array_header(fp, version)
    offset = fp.tell()
    assert offset == preamble(data)[2]
    return shape, fortran, dtype, offset


def write_all(cases):
    npgen.clean_dir(OUT_DIR, (".npy", ".bin", ".tsv"))

    names = [c.name for c in cases]
    assert len({n.lower() for n in names}) == len(names), "duplicate name"
    assert all(n == n.lower() for n in names)

    rows = []
    for case in cases:
        path = os.path.join(OUT_DIR, case.name + ".npy")
        has_object = case.arr.dtype.hasobject
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # all of these are format 1.0
            np.save(path, case.arr, allow_pickle=has_object)
        with open(path, "rb") as f:
            data = f.read()
        shape, fortran, _, offset = read_header(data)
        if not has_object:
            # np.save wrote the buffer we built, byte for byte.
            assert data[offset:] == case.raw, case.name
            for suffix, blob in expected_bins(case, fortran).items():
                with open(os.path.join(OUT_DIR, case.name + suffix),
                          "wb") as f:
                    f.write(blob)
        rows.append([
            case.name, case.name + ".npy", int(fortran), len(shape),
            ",".join(str(n) for n in shape), case.arr.dtype.itemsize,
            math.prod(shape) * case.arr.dtype.itemsize, offset,
            int(has_object)])

    npgen.write_tsv(MANIFEST, MANIFEST_COLUMNS, rows)


# ---------------------------------------------------------------------------
# Self-check: re-read the written files and compare them with NumPy by
# routes independent of the code that wrote them.
# ---------------------------------------------------------------------------

def same_values(x, y):
    """x and y hold the same values field by field (their dtypes may differ
    in byte order only).  Compares through NumPy's reading of each scalar,
    so it does not care how the bytes were produced."""
    assert x.shape == y.shape
    lx, ly = list(leaves(x.dtype)), list(leaves(y.dtype))
    assert [(o, d.newbyteorder("<")) for o, d in lx] == \
        [(o, d.newbyteorder("<")) for o, d in ly]
    for (off, dx), (_, dy) in zip(lx, ly):
        vx, vy = leaf_view(x, off, dx), leaf_view(y, off, dy)
        if dx.kind == "V":  # no values, only bytes
            if vx.tobytes() != vy.tobytes():
                return False
        elif not np.array_equal(vx, vy):  # no NaNs anywhere
            return False
    return True


def check_clean(blob, dtype, pad):
    """Bytes outside fields are `pad`, and long doubles' unused bytes are
    zero (so the files do not depend on uninitialised memory)."""
    if not blob:
        return
    elems = np.frombuffer(blob, np.uint8).reshape(-1, dtype.itemsize)
    in_field = np.zeros(dtype.itemsize, bool)
    for off, leaf in leaves(dtype):
        in_field[off:off + leaf.itemsize] = True
        if is_long_double(leaf):
            for half in range(leaf.itemsize // 16):
                start = off + 16 * half
                unused = (slice(start + X87_USED, start + 16)
                          if leaf.str[0] == "<"
                          else slice(start, start + 16 - X87_USED))
                assert (elems[:, unused] == 0).all()
    assert (elems[:, ~in_field] == pad).all()


def check_case(case, row):
    path = os.path.join(OUT_DIR, row["file"])
    with open(path, "rb") as f:
        data = f.read()
    shape, fortran, dtype, offset = read_header(data)
    arr = case.arr
    # The manifest row, from NumPy's reading of the file.
    assert row["name"] == case.name and row["file"] == case.name + ".npy"
    assert int(row["fortran"]) == int(fortran)
    assert int(row["ndim"]) == len(shape)
    assert row["shape"] == ",".join(str(n) for n in shape)
    assert int(row["itemsize"]) == dtype.itemsize
    count = math.prod(shape)
    assert int(row["nbytes"]) == count * dtype.itemsize
    assert int(row["data_offset"]) == offset and offset % 64 == 0
    assert int(row["has_object"]) == int(dtype.hasobject)
    assert fortran == npgen.saved_fortran(arr)
    assert dtype == arr.dtype and shape == arr.shape

    if dtype.hasobject:
        loaded = np.load(path, allow_pickle=True)
        assert loaded.tolist() == arr.tolist() and loaded.dtype == arr.dtype
        for suffix in BIN_FILES:
            assert not os.path.exists(os.path.join(OUT_DIR,
                                                   case.name + suffix))
        return

    loaded = np.load(path)
    assert loaded.dtype == dtype and loaded.shape == shape
    # (Elements of 0 bytes are both C and F contiguous once loaded.)
    assert dtype.itemsize == 0 or fortran == npgen.saved_fortran(loaded)
    assert same_values(loaded, arr)
    assert len(data) == offset + count * dtype.itemsize
    stored = data[offset:]
    check_clean(stored, dtype, case.pad)
    mem_order = "F" if fortran else "C"

    for suffix, (order, c_order) in BIN_FILES.items():
        with open(os.path.join(OUT_DIR, case.name + suffix), "rb") as f:
            blob = f.read()
        assert len(blob) == count * dtype.itemsize, (case.name, suffix)
        check_clean(blob, dtype, case.pad)
        want = dtype if order is None else dtype.newbyteorder(order)
        if order is not None:
            # newbyteorder converts every field, recursively; '|' stays.
            for _, leaf in leaves(want):
                assert leaf.str[0] in "|" + order, (case.name, want)
        if dtype.itemsize == 0:
            continue  # no bytes (and frombuffer cannot count 0-byte items)
        got = np.frombuffer(blob, want).reshape(
            shape, order="C" if c_order else mem_order)
        # NumPy's own conversion of the loaded array.
        ref = loaded if order is None else loaded.astype(want)
        if c_order:
            # Not np.ascontiguousarray: in NumPy 1.x it makes 0-d arrays 1-d.
            ref = ref.copy(order="C")
        assert same_values(got, ref), (case.name, suffix)
        # Without fields NumPy's conversions are byte-exact too (a byte-order
        # astype and a same-dtype copy move long doubles' bytes unchanged).
        if dtype.names is None:
            assert blob == ref.tobytes(order="A"), (case.name, suffix)
    # C order for a C-order file changes nothing, and the file's own byte
    # order (when it has one) changes nothing either.
    bins = {}
    for suffix in BIN_FILES:
        with open(os.path.join(OUT_DIR, case.name + suffix), "rb") as f:
            bins[suffix] = f.read()
    if not fortran:
        assert bins[".c.bin"] == stored
        assert bins[".c_le.bin"] == bins[".le.bin"]
        assert bins[".c_be.bin"] == bins[".be.bin"]
    orders = {leaf.str[0] for _, leaf in leaves(dtype)} - {"|"}
    if orders == {"<"}:
        assert bins[".le.bin"] == stored
    if orders == {">"}:
        assert bins[".be.bin"] == stored
    if not orders:
        assert bins[".le.bin"] == bins[".be.bin"] == stored


def check_all(cases):
    rows = npgen.read_tsv(MANIFEST, MANIFEST_COLUMNS)
    assert [r["name"] for r in rows] == [c.name for c in cases]
    expected = {"manifest.tsv"}
    for case, row in zip(cases, rows):
        check_case(case, row)
        expected.add(case.name + ".npy")
        if not case.arr.dtype.hasobject:
            expected.update(case.name + s for s in BIN_FILES)
    files = set(os.listdir(OUT_DIR))
    assert files == expected, sorted(files ^ expected)
    # Determinism: a second build gives the same bytes (guards against
    # uninitialised memory sneaking into a buffer).
    for case, again in zip(cases, make_cases()):
        if case.raw is not None:
            assert case.raw == again.raw, case.name
    return rows, files


def main():
    npgen.check_host("gen_arrays.py")
    print("NumPy %s, Python %s" % (np.__version__, sys.version.split()[0]))
    cases = make_cases()
    write_all(cases)
    rows, files = check_all(cases)

    by_group = {}
    for c in cases:
        by_group[c.group] = by_group.get(c.group, 0) + 1
    total = sum(os.path.getsize(os.path.join(OUT_DIR, f)) for f in files)
    print("arrays/: %d cases (%s)" % (len(cases), ", ".join(
        "%s %d" % kv for kv in sorted(by_group.items()))))
    print("  fortran_order True: %d, 0-d: %d, empty: %d, records: %d"
          % (sum(r["fortran"] == "1" for r in rows),
             sum(r["ndim"] == "0" for r in rows),
             sum(r["nbytes"] == "0" for r in rows),
             sum(c.arr.dtype.names is not None for c in cases)))
    print("  %d files, %d bytes in total" % (len(files), total))
    assert total < MAX_TOTAL_BYTES, total
    print("all checks passed")


if __name__ == "__main__":
    main()
