#!/usr/bin/env python3
"""Interop and crash test for growing files (ctest labels `interop`,
`crash`):

    grow_check.py --tool PATH --workdir DIR [--trials N]

- append: NumPy saves (2, 3) '<i4'; libnpyio appends 500 rows one call
  at a time; NumPy loads the concatenation.
- unknown row count: libnpyio writes 123 rows without announcing them;
  NumPy loads them.
- four processes fill interleaved row ranges of a file NumPy made;
  NumPy loads the expected array.
- crash: N times (default 200), a child appending rows in a loop is
  killed with SIGKILL at a random moment; at the end one NumPy process
  checks that every file loads and its rows are a prefix of what was
  appended. Row i of every file is (i, i, i).
Prints "N passed, M failed"; exits 77 without NumPy.
"""
import argparse
import os
import random
import signal
import subprocess
import sys
import time

try:
    import numpy as np
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
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print("FAIL", what)

    def tool(*words):
        return subprocess.run([args.tool] + [str(w) for w in words]).returncode

    f = os.path.join(args.workdir, "append.npy")
    np.save(f, rows(2))
    check(tool("append", f, 500) == 0, "io_tool append")
    a = np.load(f)
    check(a.dtype == np.dtype("<i4") and np.array_equal(a, rows(502)),
          "NumPy loads the appended rows")

    f = os.path.join(args.workdir, "unknown.npy")
    check(tool("unknown", f, 123) == 0, "io_tool unknown")
    check(np.array_equal(np.load(f), rows(123)), "NumPy loads unknown rows")

    f = os.path.join(args.workdir, "fill.npy")
    np.save(f, np.zeros((1000, 3), "<i4"))
    procs = [subprocess.Popen([args.tool, "fill", f, str(p)])
             for p in range(4)]
    check(all(p.wait() == 0 for p in procs), "four io_tool fill")
    check(np.array_equal(np.load(f), rows(1000)), "NumPy loads filled rows")

    rng = random.Random(20261202)
    files = []
    for k in range(args.trials):
        f = os.path.join(args.workdir, "crash%03d.npy" % k)
        np.save(f, rows(0))
        p = subprocess.Popen([args.tool, "append-loop", f])
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
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
