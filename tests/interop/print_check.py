#!/usr/bin/env python3
"""Interop test of `npyio print` (ctest label `interop`):

    print_check.py --tool PATH/npyio --data tests/data

- for arrays whose text is designed to equal NumPy's, `npyio print` (with
  --max N where NumPy's threshold is N) prints exactly repr(np.load(path))
  under NumPy's default print options;
- every file of tests/data/arrays prints with exit 0, except object
  arrays, which are refused with exit 1 and a message;
- Fortran-order data read from a pipe prints as from the file;
- truncated data, an impossible --max and every malformed header of
  tests/data/headers/invalid exit 1 with "npyio: ..." on stderr, never a
  signal;
- every code point but the surrogates, as '<U1' elements, prints as
  NumPy's repr shows it: escaped exactly where Python's str.isprintable()
  says no (Cc, Cf, Cs, Co, Cn, Zl, Zp, Zs but the space).
Prints "N passed, M failed"; exits 77 without NumPy.
"""
import argparse
import os
import subprocess
import sys
import tempfile

from tally import Tally

try:
    import numpy as np
except ImportError:
    print("NumPy is not available: skipped")
    sys.exit(77)


def exact_arrays():
    """(name, array, threshold) whose repr npyio reproduces exactly.

    Only native byte order: npyio shows byte order in the dtype as NumPy 2
    does, which NumPy 1.x leaves out."""
    rng = np.random.default_rng(12345)
    out = [
        ("int", np.array([1, 2, 3]), 1000),
        ("int_neg", np.array([-5, 100, 7, 0]), 1000),
        ("int8", np.arange(-100, 100, dtype=np.int8), 1000),
        ("uint64", np.array([2**64 - 1, 0, 5], dtype=np.uint64), 1000),
        ("int32_2d", np.arange(12, dtype=np.int32).reshape(3, 4), 1000),
        ("int_3d", np.arange(24).reshape(2, 3, 4), 1000),
        ("int_4d", np.arange(36).reshape(3, 2, 3, 2), 1000),
        ("int_wide", np.arange(100).reshape(10, 10) * 10**np.arange(10),
         1000),
        ("float", np.array([1.0, 2.5]), 1000),
        ("float_int", np.array([1.0, 2.0, 3.0]), 1000),
        ("float_thirds", np.array([0.1, 0.2, 0.3, 1 / 3, -2 / 3]), 1000),
        ("float_tiny", np.array([1e-5, 1.0]), 1000),
        ("float_big", np.array([1.5e20, -1.0]), 1000),
        ("float_ratio", np.array([1.0, 2000.0]), 1000),
        ("float_nonfinite", np.array([np.nan, 1.0, -np.inf, np.inf]), 1000),
        ("float_nan_only", np.array([np.nan, np.inf]), 1000),
        ("float_negzero", np.array([-0.0, 0.0]), 1000),
        ("float_extreme", np.array([1e300, -1e-300, 5e-324]), 1000),
        ("float_randn", rng.standard_normal(40), 1000),
        ("float_randn_2d", rng.standard_normal((5, 7)), 1000),
        ("float_mixed_exp",
         rng.standard_normal(12) * 10.0 ** rng.integers(-9, 9, 12), 1000),
        ("float32", rng.standard_normal(15).astype(np.float32), 1000),
        ("float32_exp", (rng.standard_normal(9) * 1e10).astype(np.float32),
         1000),
        ("float16", rng.standard_normal(15).astype(np.float16), 1000),
        ("float16_all", np.arange(0, 65536, 97, dtype=np.uint16)
         .view(np.float16), 100000),
        ("complex", rng.standard_normal(6) + 1j * rng.standard_normal(6),
         1000),
        ("complex_nonfinite", np.array([complex(np.nan, 1),
                                        complex(1, np.inf),
                                        complex(0, -np.inf)]), 1000),
        ("complex64", (rng.standard_normal(5) + 1j).astype(np.complex64),
         1000),
        ("bool", np.array([True, False, True]), 1000),
        ("bool_2d", rng.integers(0, 2, (3, 20)).astype(bool), 1000),
        ("float_0d", np.array(3.5), 1000),
        ("bool_0d", np.array(True), 1000),
        ("int16_0d", np.array(7, dtype=np.int16), 1000),
        ("empty", np.zeros((0,)), 1000),
        ("empty_2d", np.zeros((3, 0)), 1000),
        ("empty_int32_3d", np.zeros((2, 0, 4), np.int32), 1000),
        ("bytes", np.array([b"it's", b'say "hi"', b"\\\t\n\r\x00x",
                            b"\x7f\x80", b""]), 1000),
        ("str", np.array(["it's", 'say "hi"', "\\\t\n", "\u00e9\u4e2d",
                          "\U0001f600", "\x07", ""]), 1000),
        ("void", np.array([b"a\x00b", b"\xff\xfe\x00"], "V3"), 1000),
        ("datetime_D", np.array(["2020-01-01", "NaT", "1969-12-31",
                                 "-0005-03-01", "10000-01-01"], "M8[D]"),
         1000),
        ("timedelta", np.array([5, -100, "NaT"], "m8[s]"), 1000),
        ("record", np.array([(1, 2.5, b"x"), (-20, 1e-5, b"y")],
                            dtype=[("a", "<i4"), ("b", "<f8"),
                                   ("c", "S2")]), 1000),
        ("record_one_field", np.array([(1,), (2,)], dtype=[("a", "i2")]),
         1000),
        ("record_0d", np.array((1, True), dtype=[("a", "i2"), ("b", "?")]),
         1000),
        ("record_subarray", np.array(
            [([1, 2], [[1.5, 2], [3, 4]]), ([3, 4], [[5, 6], [7, 8e10]])],
            dtype=[("a", "i8", (2,)), ("b", "f8", (2, 2))]), 1000),
        ("record_padded", np.zeros(2, dtype={
            "names": ["a", "b"], "formats": ["i4", "f8"],
            "offsets": [0, 8], "itemsize": 16}), 1000),
        ("record_nested", np.zeros(2, dtype=[("a", [("x", "i4"),
                                                    ("y", "f4")]),
                                             ("b", "U3")]), 1000),
        ("record_title", np.array([(1, 2)], dtype=[(("T", "a"), "i4"),
                                                   ("b", "u1")]), 1000),
        # summarised, as with np.set_printoptions(threshold=N)
        ("sum_1d", np.arange(2000), 1000),
        ("sum_1d_max", np.arange(20), 10),
        ("sum_2d", np.arange(2000).reshape(40, 50), 1000),
        ("sum_2d_max", np.arange(64).reshape(8, 8) / 3, 20),
        ("sum_3d", np.arange(3000).reshape(10, 15, 20), 1000),
        ("sum_4d", np.arange(7 * 8 * 9 * 10).reshape(7, 8, 9, 10), 1000),
        ("sum_short_axes", np.arange(60).reshape(3, 20), 10),
        ("sum_float", rng.standard_normal(5000), 1000),
        ("sum_fortran", np.asfortranarray(np.arange(600.0).reshape(20, 30)),
         100),
        ("sum_bytes", np.array([b"ab%d" % i for i in range(2000)]), 1000),
        ("sum_record", np.array([(i, i * 0.5) for i in range(2000)],
                                dtype=[("a", "i4"), ("b", "f8")]), 1000),
        ("max_zero", np.arange(5), 0),
    ]
    for unit in ("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps",
                 "fs", "as", "10s", "3M"):
        out.append(("datetime_" + unit,
                    np.array([0, -1, 1, 12345, -800000], "i8")
                    .astype("M8[%s]" % unit), 1000))
    return out


def check_every_code_point(check, run, tmp):
    """All of Unicode but the surrogates, 65536 code points per array."""
    cps = np.array([c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF],
                   dtype=np.uint32)
    chars = cps.view("<U1")
    step = 1 << 16
    path = os.path.join(tmp, "code_points.npy")
    for first in range(0, len(chars), step):
        a = chars[first:first + step]
        np.save(path, a)
        with np.printoptions(threshold=step):
            want = (repr(a) + "\n").encode("utf-8")
        r = run("print", "--max", str(step), path)
        if r.returncode == 0 and r.stdout == want:
            check(True, "")
            continue
        got = r.stdout.decode("utf-8", "replace").splitlines()
        lines = want.decode("utf-8").splitlines()
        diff = [(x, y) for x, y in zip(lines, got) if x != y][:1]
        check(False, "print of code points U+%04X..: exit %d, first "
              "difference (NumPy, npyio): %r" % (cps[first], r.returncode,
                                                  diff))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--data", required=True)
    args = ap.parse_args()
    tally = Tally()
    check = tally.check

    def run(*words, stdin=None):
        return subprocess.run([args.tool] + list(words), capture_output=True,
                              stdin=stdin)

    np.set_printoptions(legacy=False)
    with tempfile.TemporaryDirectory() as tmp:
        # (a) the text NumPy prints
        for name, a, threshold in exact_arrays():
            path = os.path.join(tmp, name + ".npy")
            np.save(path, a)
            with np.printoptions(threshold=threshold):
                want = repr(np.load(path)) + "\n"
            r = run("print", "--max", str(threshold), path)
            got = r.stdout.decode("utf-8", "replace")
            check(r.returncode == 0 and got == want,
                  "print %s:\n--- NumPy:\n%s--- npyio (exit %d):\n%s%s"
                  % (name, want, r.returncode, got,
                     r.stderr.decode(errors="replace")))

        # a pipe: Fortran-order data is walked in file order, no seeking
        path = os.path.join(tmp, "fortran_pipe.npy")
        np.save(path, np.asfortranarray(np.arange(5000.0).reshape(50, 100)))
        with open(path, "rb") as f:
            r = run("print", "-", stdin=f)
        check(r.returncode == 0 and r.stdout == run("print", path).stdout,
              "print - of Fortran-order data from a pipe")

        # truncated data is an error, from a file and from a pipe
        with open(path, "rb") as f:
            head = f.read(1000)
        short = os.path.join(tmp, "short.npy")
        with open(short, "wb") as f:
            f.write(head)
        r = run("print", short)
        check(r.returncode == 1 and r.stderr.startswith(b"npyio: "),
              "print of truncated data: exit %d" % r.returncode)
        with open(short, "rb") as f:
            r = run("print", "-", stdin=f)
        check(r.returncode == 1 and r.stderr.startswith(b"npyio: "),
              "print - of truncated data: exit %d" % r.returncode)

        # more elements to show than print holds in memory
        big = os.path.join(tmp, "big.npy")
        np.save(big, np.zeros((4, 3000000), np.uint8))
        r = run("print", "--max", "100000000", big)
        check(r.returncode == 1 and r.stderr.startswith(b"npyio: "),
              "print --max beyond the memory bound: exit %d" % r.returncode)

        check_every_code_point(check, run, tmp)

    # (b) every test array
    arrays = os.path.join(args.data, "arrays")
    for name in sorted(os.listdir(arrays)):
        if not name.endswith(".npy"):
            continue
        path = os.path.join(arrays, name)
        a = np.load(path, allow_pickle=True)
        r = run("print", path)
        if a.dtype.hasobject:
            check(r.returncode == 1 and r.stdout == b"" and
                  b"Python objects" in r.stderr and
                  r.stderr.startswith(b"npyio: "),
                  "print refuses objects: " + name)
            continue
        check(r.returncode == 0 and r.stdout.startswith(b"array(") and
              r.stderr == b"",
              "print %s: exit %d %s" % (name, r.returncode, r.stderr))
        if a.dtype.names is None and a.dtype.isnative:
            with np.printoptions(threshold=1000):
                want = repr(a) + "\n"
            check(r.stdout.decode("utf-8", "replace") == want,
                  "print %s:\n--- NumPy:\n%s--- npyio:\n%s"
                  % (name, want, r.stdout.decode("utf-8", "replace")))

    # (c) malformed headers
    invalid = os.path.join(args.data, "headers", "invalid")
    for name in sorted(os.listdir(invalid)):
        if not name.endswith(".bin"):
            continue
        r = run("print", os.path.join(invalid, name))
        check(r.returncode == 1 and r.stderr.startswith(b"npyio: "),
              "print %s: exit %d %s" % (name, r.returncode, r.stderr[:200]))

    return tally.summary()


if __name__ == "__main__":
    sys.exit(main())
