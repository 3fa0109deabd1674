#!/usr/bin/env python3
"""Crash safety of .npz writes and appends (ctest labels interop, crash):

    npz_crash.py --tool PATH --workdir DIR [--trials N]

N times each (default 100): a writer that rewrites an archive as
generation 1, 2, ... and an appender that adds one member per round are
killed with SIGKILL at a random moment. Afterwards the archive must load
in NumPy as one whole generation (every element of both members equal)
or, for the appender, as members g0 .. gk in order, each holding its
index; and after the next write no temporary file is left beside it.
Prints "N passed, M failed"; exits 77 without NumPy.
"""
import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import time

try:
    import numpy as np
except ImportError:
    print("NumPy is not available: skipped")
    sys.exit(77)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--trials", type=int, default=100)
    args = ap.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    rng = random.Random(20261203)
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print("FAIL", what)

    def consistent(path, mode):
        try:
            with np.load(path) as z:
                if mode == "save":
                    a, b = z["a"], z["b"]
                    return (z.files == ["a", "b"] and a.shape == (4096,) and
                            (a == a[0]).all() and (b == a[0]).all())
                for n, key in enumerate(z.files):
                    if key != "g%d" % n or not (z[key] == n).all():
                        return False
                return True
        except Exception as e:  # any failure to load is a failure
            print("  load:", e)
            return False

    for mode in ("save", "append"):
        path = os.path.join(args.workdir, mode + ".npz")
        if mode == "append":
            np.savez(path, g0=np.zeros(4096, "<i8"))
        for trial in range(args.trials):
            p = subprocess.Popen([args.tool, "churn", path, mode])
            time.sleep(rng.uniform(0.0, 0.08))
            p.send_signal(signal.SIGKILL)
            p.wait()
            if not os.path.exists(path):
                check(mode == "save" and trial == 0 and False, mode +
                      ": archive missing after a kill")
                continue
            check(consistent(path, mode), "%s trial %d: old or new archive"
                  % (mode, trial))
        # One write that completes: the temporaries of the killed go.
        extra = os.path.join(args.workdir, "extra.npy")
        np.save(extra, np.arange(3))
        if mode == "save":
            cmd = [args.tool, "pack", path, "6", "0", "1", "a=" + extra]
        else:
            cmd = [args.tool, "append", path, "0", "last=" + extra]
        r = subprocess.run(cmd)
        os.remove(extra)
        check(r.returncode == 0, mode + ": a write after the kills")
        left = [f for f in os.listdir(args.workdir)
                if f not in ("save.npz", "append.npz")]
        check(not left, "%s: temporaries left: %s" % (mode, left))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
