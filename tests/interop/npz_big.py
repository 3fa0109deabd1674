#!/usr/bin/env python3
"""Large .npz archives (ctest label `slow`):

    npz_big.py --tool PATH --workdir DIR

1. A sparse archive over 4 GiB (zipfile, ZIP64: a 4.5 GiB stored member,
   then a small one that starts past 4 GiB; 1 MB on disk): libnpyio lists
   both with ZIP64 sizes and offsets, reads rows at the big member's end
   and the small member whole, and checks the big member's CRC.
2. np.savez of 70,000 members (ZIP64 end record, counts saturated): every
   member is listed, in order; the untrusted preset (4096 members) refuses
   the archive.
Prints "N passed, M failed"; exits 77 without NumPy.
"""
import argparse
import io
import os
import shutil
import subprocess
import sys
import zipfile

from tally import Tally

try:
    import numpy as np
    from numpy.lib import format as npformat
except ImportError:
    print("NumPy is not available: skipped")
    sys.exit(77)


class Sparse(io.RawIOBase):
    """A file that skips over whole MiBs of zeros (holes)."""

    def __init__(self, path):
        self.f = open(path, "w+b")
        self.zero = bytes(1 << 20)

    def writable(self):
        return True

    def seekable(self):
        return True

    def readable(self):
        return True

    def write(self, b):
        b = bytes(b)
        if len(b) == len(self.zero) and b == self.zero:
            self.f.seek(len(b), 1)
        else:
            self.f.write(b)
        return len(b)

    def seek(self, offset, whence=0):
        return self.f.seek(offset, whence)

    def tell(self):
        return self.f.tell()

    def read(self, n=-1):
        return self.f.read(n)

    def close(self):
        end = self.f.seek(0, 2)
        self.f.truncate(end)
        self.f.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    tally = Tally()
    check = tally.check

    # 1. over 4 GiB
    n = (9 << 29)  # 4.5 GiB
    big = os.path.join(args.workdir, "big.npz")
    sp = Sparse(big)
    with zipfile.ZipFile(sp, "w", allowZip64=True) as z:
        with z.open("big.npy", "w", force_zip64=True) as f:
            npformat.write_array_header_1_0(
                f, {"descr": "|u1", "fortran_order": False, "shape": (n,)})
            f.write(b"\x07" * (1 << 20))
            left = n - (1 << 20) - 16
            zero = bytes(1 << 20)
            while left >= len(zero):
                f.write(zero)
                left -= len(zero)
            f.write(bytes(left))
            f.write(bytes(range(1, 17)))
        with z.open("small.npy", "w", force_zip64=True) as f:
            npformat.write_array(f, np.arange(5, dtype="<i4"))
    sp.close()
    r = subprocess.run([args.tool, "list", big], capture_output=True,
                       text=True)
    check(r.returncode == 0, "list over 4 GiB: " + r.stderr)
    lines = r.stdout.split("\n")
    check(lines[0] == "2", "two members")
    with zipfile.ZipFile(big) as z:
        infos = z.infolist()
        for line, info in zip(lines[1:3], infos):
            key, size, at = line.split("\t")
            check(int(size) == info.file_size, "size of " + key)
            check(int(at) > info.header_offset, "offset of " + key)
    check(int(lines[2].split("\t")[2]) > (1 << 32), "small starts past 4 GiB")
    out = os.path.join(args.workdir, "rows.bin")
    r = subprocess.run([args.tool, "rows", big, "big", str(n - 20), "20",
                        out], capture_output=True, text=True)
    check(r.returncode == 0, "rows at the end, CRC: " + r.stderr)
    if r.returncode == 0:
        with open(out, "rb") as f:
            check(f.read() == bytes(4) + bytes(range(1, 17)), "last rows")
    r = subprocess.run([args.tool, "rows", big, "small", "0", "5", out],
                       capture_output=True, text=True)
    check(r.returncode == 0, "small member: " + r.stderr)
    if r.returncode == 0:
        with open(out, "rb") as f:
            check(f.read() == np.arange(5, dtype="<i4").tobytes(),
                  "small member's values")
    os.remove(big)

    # 2. 70,000 members
    many = os.path.join(args.workdir, "many.npz")
    arrays = {"a%d" % i: np.array([i], dtype="<i4") for i in range(70000)}
    np.savez(many, **arrays)
    r = subprocess.run([args.tool, "list", many], capture_output=True,
                       text=True)
    check(r.returncode == 0, "70,000 members listed: " + r.stderr)
    lines = r.stdout.split("\n")
    check(lines[0] == "70000", "count 70000")
    check([l.split("\t")[0] for l in lines[1:70001]] == list(arrays),
          "keys in order")
    r = subprocess.run([args.tool, "list", many, "untrusted"],
                       capture_output=True, text=True)
    check(r.returncode == 1 and "NPYIO_LIMIT_NPZ_MEMBERS" in r.stderr,
          "untrusted refuses 70,000 members: " + r.stderr)
    return tally.summary()


if __name__ == "__main__":
    sys.exit(main())
