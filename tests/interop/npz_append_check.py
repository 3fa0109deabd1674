#!/usr/bin/python3
"""Appends to archives that mislead minizip, and end records, checked
against NumPy and zipfile (issue 27):

    npz_append_check.py --tool build/src/npyio --data tests/data

- every archive of npz/append/ (gen_npz_hostile.py: a ZIP64 end record
  and locator in the comment or in the last array's data, a whole archive
  in an array's data): `npyio pack --append` exits 0, and afterwards
  zipfile's testzip passes, the comment is the old one, np.load lists the
  old keys plus the new one, and every old array is as np.load read it
  before (the attacker's a.npy is never what np.load finds);
- an archive whose comment holds a second directory and end record
  (zip64/two_ends.npz: zipfile reads other members than a reader that
  checks comment lengths): `npyio validate` and `pack --append` refuse
  it, naming both offsets, and the file is left as it was;
- an np.savez archive whose data holds a whole end record stays
  readable: `npyio print` gives np.load's values.
Prints "N passed, M failed"; exit 0 only if all passed, 77 (skipped)
without NumPy.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

from tally import Tally

try:
    import numpy as np
except ImportError:
    sys.exit(77)

TALLY = Tally()
check = TALLY.check


def run(tool, *args):
    r = subprocess.run([tool] + list(args), capture_output=True, text=True)
    print("$", " ".join(args[:-1]), os.path.basename(args[-1]), "->",
          r.returncode, r.stderr.strip()[:200])
    return r


def snapshot(path):
    with zipfile.ZipFile(path) as z:
        comment = z.comment
    with np.load(path) as npz:
        return comment, {k: npz[k].copy() for k in npz.files}, list(npz.files)


def append_cases(tool, data, work):
    new = os.path.join(work, "new.npy")
    np.save(new, np.arange(6, dtype="<i8") * 7)
    manifest = os.path.join(data, "npz", "append", "manifest.tsv")
    rows = [line.rstrip("\n").split("\t") for line in open(manifest)
            if not line.startswith("#")]
    check(len(rows) == 3, "npz/append lists 3 archives")
    for name, keys, what in rows:
        path = os.path.join(work, name)
        shutil.copy(os.path.join(data, "npz", "append", name), path)
        comment, arrays, files = snapshot(path)
        check(files == keys.split(","), "%s: np.load's keys before" % name)
        r = run(tool, "pack", "--append", "--no-sync", path,
                "new=" + new)
        check(r.returncode == 0, "%s (%s): pack --append exits 0: %s"
              % (name, what, r.stderr.strip()))
        with zipfile.ZipFile(path) as z:
            check(z.testzip() is None, "%s: testzip after the append" % name)
            check(z.comment == comment, "%s: the comment kept" % name)
        with np.load(path) as npz:
            check(npz.files == files + ["new"],
                  "%s: np.load's keys after: %s" % (name, npz.files))
            for k, v in arrays.items():
                check(k in npz.files and np.array_equal(npz[k], v),
                      "%s: array %s as it was" % (name, k))
            check("new" in npz.files and
                  np.array_equal(npz["new"], np.arange(6) * 7),
                  "%s: the new array" % name)
        r = run(tool, "validate", path)
        check(r.returncode == 0, "%s: validate after the append: %s"
              % (name, r.stderr.strip()))


def end_records(tool, data, work):
    src = os.path.join(data, "zip64", "two_ends.npz")
    path = os.path.join(work, "two_ends.npz")
    shutil.copy(src, path)
    before = open(path, "rb").read()
    with zipfile.ZipFile(path) as z:
        theirs = z.namelist()
    check(theirs == ["b.npy"], "zipfile lists only b.npy in two_ends.npz")
    r = run(tool, "validate", path)
    check(r.returncode == 1 and "two end records" in r.stderr and
          "offset 512" in r.stderr and "offset 439" in r.stderr,
          "validate refuses two_ends.npz naming both offsets: %s"
          % r.stderr.strip())
    r = run(tool, "pack", "--append", "--no-sync", path,
            "x=" + os.path.join(work, "new.npy"))
    check(r.returncode == 1 and "two end records" in r.stderr,
          "pack --append refuses two_ends.npz: %s" % r.stderr.strip())
    check(open(path, "rb").read() == before, "two_ends.npz left as it was")
    path = os.path.join(data, "zip64", "end_sig_in_data.npz")
    with np.load(path) as npz:
        want = npz["sig"]
    r = run(tool, "print", path, "sig")
    check(r.returncode == 0, "print of end_sig_in_data.npz: %s"
          % r.stderr.strip())
    numbers = [int(x) for x in
               re.findall(r"-?\d+", r.stdout.split("]")[0])]
    check(numbers == [int(x) for x in want],
          "print gives np.load's values for end_sig_in_data.npz")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--data", required=True)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="npz-append-check-")
    try:
        append_cases(args.tool, args.data, work)
        end_records(args.tool, args.data, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return TALLY.summary()


if __name__ == "__main__":
    sys.exit(main())
