#!/usr/bin/env python3
"""The C++ consumer (npyio.hpp, built against the installed package)
against NumPy.

    cxx_numpy_check.py PROGRAM WORKDIR

Writes NumPy's files into WORKDIR/in (a '>f8' array, an int32 array, a
record of mixed byte orders with a bytes field, an np.savez_compressed
archive, an np.savez archive with one changed byte), runs
`PROGRAM WORKDIR/out WORKDIR/in` (tests/consumer/cxx_consumer.cpp: its
own checks, then NumPy's files read and written back), and checks with
np.load and zipfile what it wrote: the 2-D array and its appended rows,
the archive of stored and deflated members and its appended member, the
archive it reads member by member, its big-endian and record files,
every deduced C++ type as NumPy's dtype of the same C type, and NumPy's
files as it loaded them (doubles, untyped records). Prints one line per
failed check, then `N passed, M failed`; exits 0 only if all passed,
77 (ctest: skipped) without NumPy.
"""

import os
import shutil
import subprocess
import sys
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "interop"))
from tally import Tally  # noqa: E402

try:
    import numpy as np
except ImportError:
    print("no NumPy")
    sys.exit(77)

RECORD = np.dtype([("x", "<i4"), ("y", ">f8"), ("s", "S3")])


def ramp(n, step):
    """cxx_consumer.cpp's ramp(): step * i - 1."""
    return np.arange(n, dtype="f8") * step - 1.0


def write_inputs(d):
    """NumPy's files for the program to read."""
    np.save(os.path.join(d, "big.npy"), ramp(6, 0.75).reshape(2, 3).astype(">f8"))
    np.save(os.path.join(d, "i4.npy"), np.array([-5, 0, 2**31 - 1], "<i4"))
    rec = np.array([(1, 2.5, b"ab"), (-2, -0.5, b"xyz")], RECORD)
    np.save(os.path.join(d, "rec.npy"), rec)
    np.savez_compressed(os.path.join(d, "comp.npz"),
                        a=np.arange(4.0).reshape(2, 2),
                        b=np.array([1, 2, 3], "<i2"),
                        c=np.array([0.5, 1.5], ">f4"))
    corrupt = os.path.join(d, "corrupt.npz")
    np.savez(corrupt, a=np.arange(16.0))
    flip_last_data_byte(corrupt, "a.npy")


def member_place(path, name):
    """Where a member's data starts in the archive, and its length."""
    with zipfile.ZipFile(path) as z:
        info = z.getinfo(name)
    with open(path, "rb") as f:
        f.seek(info.header_offset + 26)
        name_len = int.from_bytes(f.read(2), "little")
        extra_len = int.from_bytes(f.read(2), "little")
    return info.header_offset + 30 + name_len + extra_len, info.compress_size


def flip_last_data_byte(path, name):
    """Change the last byte of a stored member's data (an element)."""
    start, size = member_place(path, name)
    with open(path, "r+b") as f:
        end = start + size
        f.seek(end - 1)
        byte = f.read(1)[0]
        f.seek(end - 1)
        f.write(bytes([byte ^ 0xFF]))


def check_tasks(t, out):
    """The one-liners' files."""
    a = np.load(os.path.join(out, "save2d.npy"))
    t.check(a.shape == (5, 4) and a.dtype == np.float64, "save2d: %s %s" % (a.shape, a.dtype))
    t.check(np.array_equal(a[:3].ravel(), ramp(12, 0.5)), "save2d: saved rows")
    t.check(np.array_equal(a[3:].ravel(), ramp(8, 1.0)), "save2d: appended rows")
    mix = os.path.join(out, "mix.npz")
    with zipfile.ZipFile(mix) as z:
        t.check(z.testzip() is None, "mix.npz: CRCs")
        methods = {i.filename: i.compress_type for i in z.infolist()}
    t.check(methods == {"a.npy": 0, "b.npy": 0, "c.npy": 8, "d.npy": 8},
            "mix.npz: stored and deflated members: %s" % methods)
    with np.load(mix) as z:
        t.check(np.array_equal(z["a"], ramp(12, 0.25).reshape(3, 4)), "mix: a")
        t.check(z["b"].dtype == np.int64 and list(z["b"]) == [1, 2, 3], "mix: b")
        t.check(z["c"].dtype == np.float32 and z["c"].shape == (10, 10)
                and (z["c"] == 1.5).all(), "mix: c")
        t.check(z["d"].dtype == np.int16 and list(z["d"]) == [-1, 1], "mix: d")
    with np.load(os.path.join(out, "comp.npz")) as z:
        t.check(np.array_equal(z["x"], ramp(6, 2.0).reshape(2, 3)), "comp: x")
        t.check(list(z["y"]) == [5, 6] and z["y"].dtype == np.uint8, "comp: y")
    ref = os.path.join(out, "zlib_ref.npz")
    np.savez_compressed(ref, x=ramp(6, 2.0).reshape(2, 3))
    t.check(compressed_of(os.path.join(out, "zlib.npz"), "x.npy") ==
            compressed_of(ref, "x.npy"),
            "savez with npyio::zlib_deflate: np.savez_compressed's bytes")


def compressed_of(path, name):
    """A member's compressed bytes as the archive holds them."""
    start, size = member_place(path, name)
    with open(path, "rb") as f:
        f.seek(start)
        return f.read(size)


def check_files(t, out):
    """The big-endian and record files the program wrote."""
    big = np.load(os.path.join(out, "big.npy"))
    t.check(big.dtype == np.dtype(">f8") and
            np.array_equal(big, ramp(6, 0.75).reshape(2, 3)), "big.npy")
    rec = np.load(os.path.join(out, "rec.npy"))
    t.check(rec.dtype.names == ("x", "y") and list(rec["x"]) == [-1, 0, 1]
            and list(rec["y"]) == [0.0, 0.5, 1.0], "rec.npy: %r" % rec)


# types.npz's keys, and NumPy's character code of the same C type.
TYPES = {"bool": "?", "byte": "b", "ubyte": "B", "short": "h", "ushort": "H",
         "intc": "i", "uintc": "I", "long": "l", "ulong": "L",
         "longlong": "q", "ulonglong": "Q", "single": "f", "double": "d",
         "longdouble": "g", "csingle": "F", "cdouble": "D",
         "clongdouble": "G"}


def check_types(t, out):
    """Each deduced type is NumPy's dtype of the same C type."""
    with np.load(os.path.join(out, "types.npz")) as z:
        t.check(sorted(z.files) == sorted(TYPES), "types: keys %s" % z.files)
        for key, code in TYPES.items():
            a = z[key]
            want = [True, False] if key == "bool" else [1, 2]
            t.check(a.dtype == np.dtype(code) and list(a) == want,
                    "types: %s is %s %r, not %s" % (key, a.dtype, a, np.dtype(code)))


def check_from_numpy(t, out):
    """NumPy's files as the program loaded them."""
    rec = np.load(os.path.join(out, "np_rec.npy"))
    want = np.array([(1, 2.5, b"ab"), (-2, -0.5, b"xyz")], RECORD)
    t.check(rec.dtype.names == want.dtype.names and all(
        np.array_equal(rec[n], want[n]) for n in want.dtype.names),
        "records: %r" % rec)
    big = np.load(os.path.join(out, "np_big.npy"))
    t.check(big.dtype == np.float64 and big.dtype.isnative and
            np.array_equal(big, ramp(6, 0.75).reshape(2, 3)), "'>f8' as doubles: %r" % big)
    i4 = np.load(os.path.join(out, "np_i4.npy"))
    t.check(i4.dtype == np.float64 and list(i4) == [-5.0, 0.0, 2**31 - 1.0],
            "int32 as doubles: %r" % i4)
    with np.load(os.path.join(out, "..", "in", "comp.npz")) as z:
        for key in ("a", "b", "c"):
            got = np.load(os.path.join(out, "np_comp_%s.npy" % key))
            t.check(got.dtype == np.float64 and
                    np.array_equal(got, z[key].astype("f8")), "comp.npz %s" % key)


def main():
    program, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    inp, out = os.path.join(work, "in"), os.path.join(work, "out")
    os.makedirs(inp)
    os.makedirs(out)
    write_inputs(inp)
    run = subprocess.run([program, out, inp], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, universal_newlines=True)
    sys.stdout.write(run.stdout)
    t = Tally()
    t.check(run.returncode == 0 and "cxx consumer OK" in run.stdout,
            "the program's own checks (exit %d)" % run.returncode)
    for check in (check_tasks, check_files, check_types, check_from_numpy):
        try:
            check(t, out)
        except Exception as e:  # a file missing or unreadable: one failure
            t.check(False, "%s: %r" % (getattr(check, "__name__", "check"), e))
    status = t.summary()
    if status == 0:
        print("cxx numpy check OK")
    return status


if __name__ == "__main__":
    sys.exit(main())
