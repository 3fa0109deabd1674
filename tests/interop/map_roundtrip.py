#!/usr/bin/env python3
"""Interop test for memory maps (ctest label `interop`):

    map_roundtrip.py --tool PATH --workdir DIR

1. libnpyio creates and maps a (1000, 1000) '<f8' file and fills it;
   NumPy must load it equal to arange(10**6).reshape(1000, 1000).
2. NumPy saves an array; libnpyio maps it read-write and negates it in
   place; NumPy must see the change.
Prints "N passed, M failed"; exits 77 without NumPy.
"""
import argparse
import os
import subprocess
import sys

from tally import Tally

try:
    import numpy as np
except ImportError:
    print("NumPy is not available: skipped")
    sys.exit(77)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    tally = Tally()
    check = tally.check

    made = os.path.join(args.workdir, "created.npy")
    r = subprocess.run([args.tool, "create", made, "1000", "1000"])
    check(r.returncode == 0, "io_tool create")
    if r.returncode == 0:
        a = np.load(made)
        want = np.arange(10**6, dtype="<f8").reshape(1000, 1000)
        check(a.dtype == want.dtype and a.shape == want.shape and
              np.array_equal(a, want), "created file loads equal")

    saved = os.path.join(args.workdir, "negate.npy")
    b = np.arange(12, dtype="<f8").reshape(3, 4) + 0.5
    np.save(saved, b)
    r = subprocess.run([args.tool, "negate", saved])
    check(r.returncode == 0, "io_tool negate")
    check(np.array_equal(np.load(saved), -b), "NumPy sees the mapped change")
    return tally.summary()


if __name__ == "__main__":
    sys.exit(main())
