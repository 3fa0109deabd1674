#!/usr/bin/env python3
"""Interop test: the one-call task functions against NumPy.

    tasks_check.py --tool PATH --workdir DIR

- NPYIO_SAVE (npyio_save with the type the C11 layer picks for each C
  type) writes, byte for byte, np.save's file of the same values with
  NumPy's dtype for that C type (np.byte, np.intc, np.int_, np.longdouble,
  np.clongdouble, ...);
- npyio_append (NPYIO_APPEND) grows np.save's file to what np.save of the
  concatenation writes, and refuses rows of another type, leaving the file
  as it was;
- npyio_savez writes a, b stored and c deflated in one call: zipfile sees
  those methods, every member is np.save's bytes;
- npyio_savez_append adds a member (stored or deflated) with the old ones
  unchanged, and refuses a key np.load would confuse, leaving the archive;
- npyio_load reports NumPy's dtype.str and shape.
Prints one line per failure, then `N passed, M failed`; 77 without NumPy.
"""

import argparse
import io
import os
import subprocess
import sys
import zipfile

from tally import Tally

try:
    import numpy as np
except ImportError:
    print("tasks_check.py: NumPy is not available; skipping")
    sys.exit(77)

# The C type of each file of `typed`, as NumPy names it.
C_TYPES = {
    "bool": np.bool_, "schar": np.byte, "uchar": np.ubyte,
    "short": np.short, "ushort": np.ushort, "int": np.intc,
    "uint": np.uintc, "long": np.int_ if np.dtype(np.int_).itemsize ==
    np.dtype("l").itemsize else np.dtype("l"), "ulong": np.dtype("L"),
    "longlong": np.longlong, "ulonglong": np.ulonglong,
    "float": np.single, "double": np.double, "longdouble": np.longdouble,
    "cfloat": np.csingle, "cdouble": np.cdouble,
    "clongdouble": np.clongdouble,
}


def save_bytes(array):
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def expected_typed(name):
    i = np.arange(6)
    dt = np.dtype(C_TYPES[name])
    if name == "bool":
        values = i % 2
    elif dt.kind == "u":
        values = i * 3
    elif dt.kind == "c":
        values = (i * 3 - 5) + 1j * i
    else:
        values = i * 3 - 5
    return values.astype(dt).reshape(2, 3)


def run(tool, *args):
    return subprocess.run([tool] + [str(a) for a in args],
                          capture_output=True, text=True)


def check_typed(t, tool, work):
    got = run(tool, "typed", work)
    if not t.check(got.returncode == 0, "typed: %s" % got.stderr.strip()):
        return
    for line in got.stdout.splitlines():
        name, type_string = line.split()
        want = expected_typed(name)
        t.check(np.dtype(type_string) == want.dtype,
                "%s: C11 type %s, NumPy's is %s" % (name, type_string,
                                                   want.dtype.str))
        path = os.path.join(work, name + ".npy")
        with open(path, "rb") as f:
            data = f.read()
        if want.dtype.char in "gG":
            # x86's 80-bit long double leaves padding bytes in its 12 or
            # 16 that C does not set: compare the header and the values.
            size = len(save_bytes(want)) - want.nbytes
            t.check(data[:size] == save_bytes(want)[:size] and
                    np.array_equal(np.load(path), want),
                    "%s: not np.save's header and values of %r" % (name,
                                                                   want))
        else:
            t.check(data == save_bytes(want),
                    "%s: not np.save's bytes of %r" % (name, want))
    t.check(len(got.stdout.splitlines()) == len(C_TYPES), "typed: count")


def check_append(t, tool, work):
    path = os.path.join(work, "grow.npy")
    base = np.arange(6, dtype="=f8").reshape(2, 3)
    np.save(path, base)
    got = run(tool, "append", path, 4)
    t.check(got.returncode == 0, "append: %s" % got.stderr.strip())
    rows = (100 + np.arange(12, dtype="=f8")).reshape(4, 3)
    want = np.concatenate([base, rows])
    with open(path, "rb") as f:
        t.check(f.read() == save_bytes(want), "append: not np.save's file "
                "of the concatenation")
    # Rows of another type: refused by name, the file byte for byte kept.
    other = os.path.join(work, "ints.npy")
    np.save(other, np.arange(6, dtype="=i4").reshape(2, 3))
    with open(other, "rb") as f:
        before = f.read()
    got = run(tool, "append", other, 1)
    t.check(got.returncode != 0 and "npyio_append" in got.stderr,
            "append of doubles to int32 rows: %r" % got.stderr)
    with open(other, "rb") as f:
        t.check(f.read() == before, "append refused: file changed")


def check_savez(t, tool, work):
    path = os.path.join(work, "three.npz")
    got = run(tool, "savez", path)
    if not t.check(got.returncode == 0, "savez: %s" % got.stderr.strip()):
        return
    want = {"a": np.array([[1, -2], [3, -4]], dtype="=i4"),
            "b": np.arange(5, dtype="=f8") + 0.5,
            "c": (np.arange(1000) % 7).astype("=f8")}
    methods = {"a.npy": zipfile.ZIP_STORED, "b.npy": zipfile.ZIP_STORED,
               "c.npy": zipfile.ZIP_DEFLATED}
    with zipfile.ZipFile(path) as z:
        t.check(z.testzip() is None, "savez: zipfile's CRC check")
        t.check([i.filename for i in z.infolist()] == list(methods),
                "savez: members %r" % z.namelist())
        for info in z.infolist():
            key = info.filename[:-4]
            t.check(info.compress_type == methods[info.filename],
                    "savez: %s method %d" % (info.filename,
                                             info.compress_type))
            t.check(z.read(info) == save_bytes(want[key]),
                    "savez: %s is not np.save's bytes" % info.filename)
    with np.load(path) as z:
        for key, value in want.items():
            t.check(np.array_equal(z[key], value), "savez: np.load %s" % key)


def check_savez_append(t, tool, work):
    path = os.path.join(work, "grow.npz")
    old = {"x": np.arange(3, dtype="=i8"), "y": np.ones((2, 2), "=f4")}
    np.savez_compressed(path, **old)
    pair = np.array([1.5, 2.5], dtype="=f4")
    for key, level, method in (("s", 0, zipfile.ZIP_STORED),
                               ("d", 9, zipfile.ZIP_DEFLATED)):
        got = run(tool, "savez-append", path, key, level)
        t.check(got.returncode == 0, "savez_append %s: %s" %
                (key, got.stderr.strip()))
    with zipfile.ZipFile(path) as z:
        t.check(z.testzip() is None, "savez_append: CRC check")
        t.check(z.namelist() == ["x.npy", "y.npy", "s.npy", "d.npy"],
                "savez_append: members %r" % z.namelist())
        t.check(z.getinfo("s.npy").compress_type == zipfile.ZIP_STORED and
                z.getinfo("d.npy").compress_type == zipfile.ZIP_DEFLATED,
                "savez_append: methods")
        for key in ("s", "d"):
            t.check(z.read(key + ".npy") == save_bytes(pair),
                    "savez_append: %s bytes" % key)
    with np.load(path) as z:
        for key, value in old.items():
            t.check(np.array_equal(z[key], value), "old member %s" % key)
    with open(path, "rb") as f:
        before = f.read()
    for clash in ("x", "x.npy"):
        got = run(tool, "savez-append", path, clash, 0)
        t.check(got.returncode != 0 and clash in got.stderr,
                "savez_append of key %r: %r" % (clash, got.stderr))
    with open(path, "rb") as f:
        t.check(f.read() == before, "savez_append refused: archive changed")


def check_load(t, tool, work):
    cases = [np.arange(12, dtype=">i2").reshape(3, 4),
             np.asfortranarray(np.arange(6, dtype="<f8").reshape(2, 3)),
             np.zeros((0, 5), dtype="<U3"),
             np.zeros(2, dtype=[("id", "<i4"), ("pos", ">f8", (3,))])]
    for n, array in enumerate(cases):
        path = os.path.join(work, "load%d.npy" % n)
        np.save(path, array)
        got = run(tool, "load", path)
        native = array.astype(array.dtype.newbyteorder("="))
        want_type = (str(native.dtype.descr) if native.dtype.names
                     else native.dtype.str)
        want = "%s %d %s %d" % (want_type, array.ndim,
                                " ".join(str(d) for d in array.shape),
                                array.nbytes)
        t.check(got.stdout.split() == want.split(),
                "npyio_load %s: %r, want %r" % (array.dtype, got.stdout,
                                                want))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    t = Tally()
    check_typed(t, args.tool, args.workdir)
    check_append(t, args.tool, args.workdir)
    check_savez(t, args.tool, args.workdir)
    check_savez_append(t, args.tool, args.workdir)
    check_load(t, args.tool, args.workdir)
    return t.summary()


if __name__ == "__main__":
    sys.exit(main())
