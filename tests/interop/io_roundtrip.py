#!/usr/bin/env python3
"""Interop test: array data written by NumPy and read by libnpyio, and
files written by libnpyio and read by NumPy.

    io_roundtrip.py --tool PATH --workdir DIR [--seed N] [--via-callbacks KIND]

Builds a fixed matrix of arrays (every scalar kind in both byte orders,
long double and complex long double included; nested, padded and
mixed-endian records; C and Fortran order in 2-D and 3-D; 0-d and empty;
a few arrays over 1 MiB, so conversions cross libnpyio's block boundaries)
with values drawn from numpy.random.default_rng(N), and saves each with
np.save as DIR/<case>.npy.  Then for every file it runs the tool (io_tool.c)

    PATH read FILE FLAGS OUT    FLAGS 0..3 (1 native byte order, 2 C order,
                                3 both); OUT gets the data bytes read
    PATH copy IN OUT            read IN as stored, write it with libnpyio's
                                writer

and checks, per file (6 checks):
  read 0..3  OUT is the data NumPy gives for the same conversion on this
             host: 1 = every field in native byte order (sys.byteorder),
             memory order of the file; 2 = C order (as
             np.ascontiguousarray), byte order as stored; 3 = both;
             0 = the data section as stored.
  copy bytes the copy is byte-identical to NumPy's file;
  copy load  np.load of the copy has the original's dtype, shape, values
             and f_contiguous flag.
It prints one line per failed check, then exactly `N passed, M failed`, and
exits 0 only if every check passed; 77 (ctest: skipped) without NumPy.

Bytes outside record fields (gaps, trailing padding) hold random bytes in
these files, and a reader must keep them: it swaps fields in place and
moves whole elements.  NumPy's own conversions do not keep them (astype and
ascontiguousarray of a record array leave them uninitialised), so for
records the expected bytes come from in-place byte swaps and void copies,
which NumPy does byte-exactly, and the script checks them against astype /
ascontiguousarray field by field before it uses them.  For all other
dtypes the expected bytes are NumPy's conversions themselves, and the
swap route must agree with them byte for byte.

The values are deterministic for a given seed (and NumPy version), so a
failure is reproduced by rerunning with the printed seed.
"""

import argparse
import math
import os
import subprocess
import sys

from tally import Tally

try:
    import numpy as np
    from numpy.lib import format as npf
except ImportError:
    print("io_roundtrip.py: NumPy is not available to %s; skipping"
          % sys.executable)
    sys.exit(77)

# NumPy's facts about dtypes, as the data generators have them.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "data"))
from npgen import leaf_view, leaves, masked_dtype  # noqa: E402

SKIP = 77
DEFAULT_SEED = 20261202
TOOL_TIMEOUT = 120  # seconds per tool run; a hang is a failure, not a stall

NATIVE = "<" if sys.byteorder == "little" else ">"

# x87 extended precision (x86 long double) uses 10 bytes of its 12 or 16;
# a cast that creates long doubles leaves garbage in the rest.  Those bytes
# are zeroed so that the files depend only on the seed.
X87 = np.finfo(np.longdouble).nmant == 63
X87_USED = 10
LONG_DOUBLE = np.dtype(np.longdouble).itemsize


# ---------------------------------------------------------------------------
# dtype helpers
# ---------------------------------------------------------------------------

def same_values(x, y):
    """Same shape and, scalar by scalar, the same values (dtypes may differ
    in byte order).  No NaNs are ever generated, so == is exact."""
    if x.shape != y.shape:
        return False
    for (off, dx), (off_y, dy) in zip(leaves(x.dtype), leaves(y.dtype)):
        assert off == off_y
        vx, vy = leaf_view(x, off, dx), leaf_view(y, off, dy)
        if dx.kind == "V":
            if vx.tobytes() != vy.tobytes():
                return False
        elif not np.array_equal(vx, vy):
            return False
    return True


# ---------------------------------------------------------------------------
# Random arrays
# ---------------------------------------------------------------------------

def clean_x87(native):
    """Zero the unused bytes of x87 long doubles (each complex half too)."""
    if X87 and native.size:
        u8 = native.view(np.uint8).reshape(-1, LONG_DOUBLE)
        u8[:, X87_USED:] = 0
    return native


def random_native(rng, leaf, n):
    """n random values of scalar dtype leaf, in native byte order."""
    native = leaf.newbyteorder("=")
    kind = leaf.kind
    if kind == "b":
        return rng.integers(0, 2, n).astype(native)
    if kind in "iu":
        info = np.iinfo(native)
        return rng.integers(info.min, info.max, n, dtype=native,
                            endpoint=True)
    if kind in "mM":
        # Any int64 but -2**63, which is NaT (NaT != NaT).
        return rng.integers(-2**62, 2**62, n).astype(native)
    if kind == "f":
        if native.itemsize == 2:
            return rng.uniform(-2000, 2000, n).astype(native)  # no inf
        if native.type is np.longdouble:
            # Division in long double fills the longer mantissa.
            vals = rng.standard_normal(n).astype(native) * 1000 / 3
            return clean_x87(vals)
        return (rng.standard_normal(n) * 1000).astype(native)
    if kind == "c":
        vals = (rng.standard_normal(n) + 1j * rng.standard_normal(n)) * 100
        if native.type is np.clongdouble:
            return clean_x87(vals.astype(native) / 3)
        return vals.astype(native)
    if kind == "S":
        # No NUL bytes: NumPy drops trailing NULs when it reads S values.
        lengths = rng.integers(0, leaf.itemsize + 1, n)
        return np.array([rng.integers(1, 256, k, dtype=np.uint8).tobytes()
                         for k in lengths], dtype=native)
    if kind == "U":
        # Non-zero code points from ASCII to beyond the BMP, no surrogates.
        points = np.concatenate([np.arange(0x20, 0x7F),
                                 np.arange(0xA0, 0x800),
                                 np.arange(0x4E00, 0x4F00),
                                 np.arange(0x1F600, 0x1F650)])
        lengths = rng.integers(0, leaf.itemsize // 4 + 1, n)
        return np.array(["".join(chr(c) for c in rng.choice(points, k))
                         for k in lengths], dtype=native)
    if kind == "V":
        return np.frombuffer(rng.bytes(n * leaf.itemsize), native).copy()
    raise AssertionError("no values for %s" % leaf)


def random_array(rng, dtype, shape, fortran=False):
    """An array in a buffer we own: random bytes, then every scalar
    overwritten with random values (C index order), so the bytes outside
    fields stay random.  Same-dtype assignment is a byte copy, so values in
    the other byte order keep their exact bytes (byteswap() reverses each
    unit: whole long double, complex halves, UCS4 characters)."""
    dtype = np.dtype(dtype)
    count = math.prod(shape)
    raw = bytearray(rng.bytes(count * dtype.itemsize))
    arr = np.ndarray(shape, dtype, buffer=raw, order="F" if fortran else "C")
    for offset, leaf in leaves(dtype):
        vals = random_native(rng, leaf, count)
        if not leaf.isnative:  # True for '|' types too
            vals = vals.byteswap()
        leaf_view(arr, offset, leaf)[...] = vals.view(leaf).reshape(shape)
    return arr


# Scalar kinds.  'g'/'G' are long double / complex long double, whatever
# size this host has.
ORDERED = ["i2", "i4", "i8", "u2", "u4", "u8", "f2", "f4", "f8", "g",
           "c8", "c16", "G", "U1", "U4", "M8[us]", "m8[3h]", "M8[D]"]
UNORDERED = ["?", "i1", "u1", "S1", "S7", "V3", "V8"]
# File names for codes that are not one already ('U4' and 'u4', 'G' and
# 'g' must not differ only by case).
KIND_NAMES = {"?": "bool", "g": "longdouble", "G": "clongdouble",
              "M8[us]": "datetime_us", "m8[3h]": "timedelta_3h",
              "M8[D]": "datetime_day", "U1": "str1", "U4": "str4"}

# Nested, mixed-endian, a subarray of records, gaps (explicit offsets):
#   INNER:  p 0..1 | gap 2..3 | q 4..7 | trailing 8..9
#   PADDED: gap 0..1 | id 2..5 | gap 6..7 | pts 8..37 | gap 38 | flag 39 |
#           gap 40 | when 41..48 (unaligned) | gap 49..51 | z 52..59 |
#           trailing 60..62 (odd itemsize)
INNER = np.dtype({"names": ["p", "q"], "formats": [">i2", "<f4"],
                  "offsets": [0, 4], "itemsize": 10})
PADDED = np.dtype({"names": ["id", "pts", "flag", "when", "z"],
                   "formats": ["<u4", (INNER, (3,)), "?", ">M8[s]", ">c8"],
                   "offsets": [2, 8, 39, 41, 52], "itemsize": 63})
MIXED = np.dtype([("a", ">i4"), ("b", "<f8"), ("c", "S3"),
                  ("d", ">u2", (2,)),
                  ("e", [("f", "<c16"), ("g", [("h", ">U2"), ("i", "<i8"),
                                               ("j", ">g")])]),
                  ("k", "<G", (2,))])
# align=True: the padding a C compiler would add.
ALIGNED = np.dtype([("a", "u1"), ("b", ">f8"), ("c", "<i2"),
                    ("d", [("e", "u1"), ("f", ">i4")], (2,))], align=True)
SUBARRAYS = np.dtype([("m", "<f4", (2, 3)), ("n", ">i2", (3,)),
                      ("t", "S2", (2,)), ("u", ">U3", (2,)),
                      ("v", "V2", (2,)), ("w", "<m8[ms]", (1, 2))])
RECORDS = [("padded", PADDED), ("mixed", MIXED), ("aligned", ALIGNED),
           ("subarrays", SUBARRAYS)]


def make_cases(rng):
    """[(name, array)], a fixed list; only the values come from rng."""
    cases = []

    def add(name, dtype, shape, fortran=False):
        cases.append((name, random_array(rng, dtype, shape, fortran)))

    def kind_name(code, order):
        return "%s_%s" % (KIND_NAMES.get(code, code.lower()),
                          {"<": "le", ">": "be", "|": "na"}[order])

    # Every scalar kind, 1-D.
    for code in UNORDERED:
        add(kind_name(code, "|"), code, (17,))
    for code in ORDERED:
        for order in "<>":
            add(kind_name(code, order), order + code, (17,))

    # C and Fortran order, 2-D and 3-D, several itemsizes.
    layout = ["u1", ">i2", "<u2", "<f4", ">i4", ">f8", "<i8", ">c16", ">g",
              "<G", ">U3", "S5", PADDED, MIXED]
    for i, dt in enumerate(layout):
        dt = np.dtype(dt)
        label = "%s%d" % (dt.kind, dt.itemsize)
        for fortran in (False, True):
            o = "f" if fortran else "c"
            add("layout%02d_%s_4x3_%s" % (i, label, o), dt, (4, 3), fortran)
            add("layout%02d_%s_2x3x4_%s" % (i, label, o), dt, (2, 3, 4),
                fortran)
    add("f8_be_5x1x3_f", ">f8", (5, 1, 3), fortran=True)
    add("i4_le_1x6_f", "<i4", (1, 6), fortran=True)  # np.save: C order

    # 0-d and empty.
    for i, dt in enumerate([">i4", "<f8", ">G", PADDED, MIXED]):
        add("zero_d_%d" % i, dt, ())
    add("empty_0_be", ">f8", (0,))
    add("empty_2x0x3_f", "<c8", (2, 0, 3), fortran=True)
    add("empty_rec", MIXED, (0, 4))

    # Records, 1-D and Fortran 2-D.
    for label, dt in RECORDS:
        add("rec_%s" % label, dt, (7,))
        add("rec_%s_5x3_f" % label, dt, (5, 3), fortran=True)

    # Over 1 MiB (libnpyio converts in 1 MiB blocks), itemsizes that do
    # not divide a block.
    add("big_c16_be_f", ">c16", (300, 257), fortran=True)
    add("big_padded_f", PADDED, (150, 130), fortran=True)
    add("big_mixed_c", MIXED, (11000,))
    add("big_i2_le_3d_f", "<i2", (97, 101, 61), fortran=True)
    return cases


# ---------------------------------------------------------------------------
# What a reader must produce
# ---------------------------------------------------------------------------

def data_section(path):
    """(stored data bytes, fortran_order) of a .npy written by np.save."""
    with open(path, "rb") as f:
        version = npf.read_magic(f)
        _, fortran, _ = npf._read_array_header(f, version)
        return f.read(), fortran


def swap_to(data, dtype, order):
    """data with every scalar brought to byte order `order`, in place;
    '|' scalars and bytes outside fields untouched."""
    buf = bytearray(data)
    other = ">" if order == "<" else "<"
    if buf:
        np.frombuffer(buf, masked_dtype(dtype, other)).byteswap(inplace=True)
    return bytes(buf)


def c_order(data, dtype, shape):
    """Fortran-order data in C order, moving whole elements (void)."""
    f = np.frombuffer(data, "V%d" % dtype.itemsize).reshape(shape, order="F")
    return f.copy(order="C").tobytes()


def expected_reads(arr, stored, fortran):
    """flags -> bytes the tool's read must write, self-checked against
    NumPy's own conversions of arr (the array as np.load gives it)."""
    dt, shape = arr.dtype, arr.shape
    native = swap_to(stored, dt, NATIVE)
    want = {0: stored, 1: native,
            2: c_order(stored, dt, shape) if fortran else stored,
            3: c_order(native, dt, shape) if fortran else native}
    mem_order = "F" if fortran else "C"
    for flags, blob in want.items():
        ref = arr.astype(dt.newbyteorder("=")) if flags & 1 else arr
        if flags & 2:
            # copy(order='C'), as ascontiguousarray does, but keeping 0-d
            # (np.ascontiguousarray of a 0-d array is 1-d in NumPy 1.x).
            ref = ref.copy(order="C")
        got = np.frombuffer(blob, ref.dtype).reshape(
            shape, order="C" if flags & 2 else mem_order)
        assert same_values(got, ref), (flags, dt)
        if dt.names is None:
            # Without fields NumPy's conversions are byte-exact.
            assert blob == ref.tobytes(order="A"), (flags, dt)
    return want


# ---------------------------------------------------------------------------
# Running the tool
# ---------------------------------------------------------------------------

def run_tool(tool, args):
    """None on success, else a one-line reason."""
    try:
        proc = subprocess.run(tool + args, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE,
                              timeout=TOOL_TIMEOUT)
    except OSError as e:
        return "cannot run %s: %s" % (tool[0], e)
    except subprocess.TimeoutExpired:
        return "no answer within %d s" % TOOL_TIMEOUT
    if proc.returncode == 0:
        return None
    msg = proc.stderr.decode("utf-8", "replace").strip().replace("\n", " | ")
    if proc.returncode < 0:
        return "killed by signal %d %s" % (-proc.returncode, msg)
    if proc.returncode == 1 and not msg:
        return "exit 1 without a message on stderr"
    return "exit %d: %s" % (proc.returncode, msg)


def read_output(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def first_difference(got, want, itemsize):
    """A short description of how got differs from want."""
    if got is None:
        return "no output file"
    if len(got) != len(want):
        return "%d bytes, want %d" % (len(got), len(want))
    at = next(i for i in range(len(got)) if got[i] != want[i])
    return "first difference at byte %d (element %d, byte %d of it)" % (
        at, at // max(itemsize, 1), at % max(itemsize, 1))


def remove(path):
    if os.path.exists(path):
        os.remove(path)


def check_case(tool, workdir, name, arr, check):
    """Run the 6 checks of one case, each through check(ok, what)."""
    path = os.path.join(workdir, name + ".npy")
    np.save(path, arr, allow_pickle=False)
    stored, fortran = data_section(path)
    loaded = np.load(path)
    assert same_values(loaded, arr)
    want = expected_reads(loaded, stored, fortran)
    itemsize = arr.dtype.itemsize

    for flags in range(4):
        out = os.path.join(workdir, "%s.flags%d.out" % (name, flags))
        remove(out)  # a stale output must not pass
        err = run_tool(tool, ["read", path, str(flags), out])
        if err is None and read_output(out) != want[flags]:
            err = first_difference(read_output(out), want[flags], itemsize)
        check(err is None, "%s read flags=%d: %s" % (name, flags, err))

    copy = os.path.join(workdir, name + ".copy.npy")
    remove(copy)
    err = run_tool(tool, ["copy", path, copy])
    copied = read_output(copy)
    if err is None and copied is None:
        err = "no output file"
    if not check(err is None, "%s copy bytes: %s" % (name, err)):
        check(False, "%s copy load: not checked (copy failed)" % name)
        return
    with open(path, "rb") as f:
        original = f.read()
    same = copied == original
    check(same, "%s copy bytes: %s" % (
        name, "" if same else first_difference(copied, original, 1)))
    try:
        back = np.load(copy)
    except Exception as e:  # anything NumPy refuses is a failure
        check(False, "%s copy load: np.load: %s: %s"
              % (name, type(e).__name__, e))
        return
    problems = []
    if back.dtype != loaded.dtype:
        problems.append("dtype %s, want %s" % (back.dtype, loaded.dtype))
    elif not same_values(back, loaded):
        problems.append("values differ (shape %s, want %s)"
                        % (back.shape, loaded.shape))
    if back.flags.f_contiguous != loaded.flags.f_contiguous:
        problems.append("f_contiguous %s, want %s"
                        % (back.flags.f_contiguous,
                           loaded.flags.f_contiguous))
    check(not problems, "%s copy load: %s" % (name, "; ".join(problems)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tool", required=True, help="io_tool executable")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--via-callbacks", metavar="KIND",
                    help="the tool reads and writes through streams of "
                    "callbacks of that kind (full, nolock, old)")
    args = ap.parse_args()
    tool = [args.tool] + (["--via-callbacks=" + args.via_callbacks]
                          if args.via_callbacks else [])

    # Every file of a case is rewritten or removed before the tool runs
    # (see check_case), so files of an earlier run cannot pass a check.
    os.makedirs(args.workdir, exist_ok=True)

    rng = np.random.default_rng(args.seed)
    cases = make_cases(rng)
    names = [n for n, _ in cases]
    assert len({n.lower() for n in names}) == len(names), "duplicate name"
    print("io_roundtrip: seed %d, %d arrays, NumPy %s, %s-endian host"
          % (args.seed, len(cases), np.__version__, sys.byteorder))
    sys.stdout.flush()

    tally = Tally()
    for name, arr in cases:
        check_case(tool, args.workdir, name, arr, tally.check)
    return tally.summary()


if __name__ == "__main__":
    sys.exit(main())
