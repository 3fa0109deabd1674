#!/usr/bin/env python3
"""Interop and crash test for growing files (ctest labels `interop`,
`crash`):

    grow_check.py --tool PATH --workdir DIR [--trials N] [--via-callbacks KIND]

- append: NumPy saves (2, 3) '<i4'; libnpyio appends 500 rows one call
  at a time; NumPy loads the concatenation.
- unknown row count: libnpyio writes 123 rows without announcing them;
  NumPy loads them.
- appending to files whose header says fortran_order True though their
  C and Fortran layouts coincide ((1, 3), (0, 3): npy-matlab and NPZ.jl
  write such headers): NumPy loads the rows in order, and the new header
  says False; appending rows of 0 bytes to np.save's (3, 0) counts them.
- four processes fill interleaved row ranges of a file NumPy made;
  NumPy loads the expected array.
- crash: N times (default 200), a child appending rows in a loop is
  killed with SIGKILL at a random moment; at the end one NumPy process
  checks that every file loads and its rows are a prefix of what was
  appended. Row i of every file is (i, i, i).
- a format 1.0 header with a \\u escape past latin-1 grows to 3.0;
  rows appended over bytes after the data.
Prints "N passed, M failed"; exits 77 without NumPy.
"""
import argparse
import os
import random
import signal
import struct
import subprocess
import sys
import time

from tally import Tally

try:
    import numpy as np
    import numpy.lib.format as npf
except ImportError:
    print("NumPy is not available: skipped")
    sys.exit(77)


def rows(n):
    return np.repeat(np.arange(n, dtype="<i4"), 3).reshape(n, 3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--via-callbacks", metavar="KIND",
                    help="the tool appends, writes and fills through "
                    "streams of callbacks of that kind (full, nolock)")
    args = ap.parse_args()
    via = args.via_callbacks
    cmd = [args.tool] + (["--via-callbacks=" + via] if via else [])
    os.makedirs(args.workdir, exist_ok=True)
    tally = Tally()
    check = tally.check

    def tool(*words):
        return subprocess.run(cmd + [str(w) for w in words]).returncode

    f = os.path.join(args.workdir, "append.npy")
    np.save(f, rows(2))
    check(tool("append", f, 500) == 0, "io_tool append")
    a = np.load(f)
    check(a.dtype == np.dtype("<i4") and np.array_equal(a, rows(502)),
          "NumPy loads the appended rows")

    f = os.path.join(args.workdir, "unknown.npy")
    check(tool("unknown", f, 123) == 0, "io_tool unknown")
    check(np.array_equal(np.load(f), rows(123)), "NumPy loads unknown rows")

    def fortran_file(path, shape, data):
        d = "{'descr': '<i4', 'fortran_order': True, 'shape': %r, }" % (shape,)
        d = d + " " * (127 - 10 - len(d)) + "\n"
        with open(path, "wb") as out:
            out.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) +
                      d.encode() + np.asarray(data, "<i4").tobytes())

    for shape, data in (((1, 3), [0, 0, 0]), ((0, 3), [])):
        f = os.path.join(args.workdir, "fortran_%d.npy" % shape[0])
        fortran_file(f, shape, data)
        check(tool("append", f, 4) == 0, "io_tool append to %r F" % (shape,))
        a = np.load(f)
        with open(f, "rb") as fp:
            version = npf.read_magic(fp)
            _, fortran, _ = npf._read_array_header(fp, version)
        check(np.array_equal(a, rows(shape[0] + 4)) and not fortran,
              "NumPy loads rows appended to %r F in order, as C" % (shape,))

    f = os.path.join(args.workdir, "empty_rows.npy")
    np.save(f, np.zeros((3, 0)))
    check(tool("append-empty", f, 5) == 0, "io_tool append-empty")
    a = np.load(f)
    check(a.shape == (8, 0) and a.dtype == np.float64,
          "NumPy loads (3, 0) plus 5 empty rows as (8, 0): %r" % (a.shape,))

    # A format 1.0 header naming a field past latin-1 with a \u escape
    # (np.load takes it): the grown header needs format 3.0, so the
    # append rewrites the file (found by fuzz_append: the close failed
    # and the file was left changed).
    f = os.path.join(args.workdir, "escaped_name.npy")
    d = "{'descr': [('\\u0100', '<i4')], 'fortran_order': False, " \
        "'shape': (2,), }"
    d = d + " " * (63 - 10 - len(d)) + "\n"
    with open(f, "wb") as out:
        out.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) +
                  d.encode("latin-1") + np.array([7, 8], "<i4").tobytes())
    old = np.load(f)
    check(old.dtype.names == ("\u0100",), "NumPy reads the escaped name")
    if via:
        # A stream has no path to rewrite through a temporary: the close
        # refuses (NPYIO_E_UNSUPPORTED) and the append is undone.
        with open(f, "rb") as fp:
            before = fp.read()
        check(tool("append-filled", f, 1) != 0,
              "io_tool append-filled escaped refused through callbacks")
        with open(f, "rb") as fp:
            check(fp.read() == before, "the escaped-name file is untouched")
    else:
        check(tool("append-filled", f, 1) == 0,
              "io_tool append-filled escaped")
        a = np.load(f)
        with open(f, "rb") as fp:
            version = npf.read_magic(fp)
        check(version == (3, 0) and a.dtype == old.dtype and
              a["\u0100"].tolist() == [7, 8, -1515870811],
              "NumPy loads the escaped-name file grown to 3.0: %r %r"
              % (version, a))

    # Bytes after the data (np.load ignores them): rows go over them.
    f = os.path.join(args.workdir, "tail.npy")
    np.save(f, rows(2))
    with open(f, "ab") as out:
        out.write(b"\x5a" * 40)
    check(tool("append", f, 5) == 0, "io_tool append over a tail")
    check(np.array_equal(np.load(f), rows(7)),
          "NumPy loads rows appended over bytes after the data")

    f = os.path.join(args.workdir, "fill.npy")
    np.save(f, np.zeros((1000, 3), "<i4"))
    procs = [subprocess.Popen(cmd + ["fill", f, str(p)])
             for p in range(4)]
    check(all(p.wait() == 0 for p in procs), "four io_tool fill")
    check(np.array_equal(np.load(f), rows(1000)), "NumPy loads filled rows")

    rng = random.Random(20261202)
    files = []
    for k in range(args.trials):
        f = os.path.join(args.workdir, "crash%03d.npy" % k)
        np.save(f, rows(0))
        p = subprocess.Popen(cmd + ["append-loop", f])
        time.sleep(rng.uniform(0.001, 0.03))
        p.send_signal(signal.SIGKILL)
        p.wait()
        files.append(f)
    grown = 0
    for f in files:
        try:
            a = np.load(f)
            ok = a.dtype == np.dtype("<i4") and a.ndim == 2 and \
                a.shape[1] == 3 and np.array_equal(a, rows(a.shape[0]))
            grown += a.shape[0] > 0
        except Exception as e:  # a file NumPy cannot load is a failure
            print(f, e)
            ok = False
        check(ok, "killed appender left a loadable prefix in " + f)
    print("crash trials: %d files, %d had rows" % (len(files), grown))
    return tally.summary()


if __name__ == "__main__":
    sys.exit(main())
