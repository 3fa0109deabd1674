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
import os
import subprocess
import sys

try:
    import numpy as np
except ImportError:
    print("NumPy is not available: skipped")
    sys.exit(77)

from crash_trials import kill_at_random, left_over, setup


def main():
    args, rng, tally = setup(__doc__)
    check = tally.check

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
        landed = False
        if mode == "append":
            np.savez(path, g0=np.zeros(4096, "<i8"))
        for trial in range(args.trials):
            kill_at_random([args.tool, "churn", path, mode], rng, 0.08)
            if not os.path.exists(path):
                # Absent only before the first generation has landed.
                check(mode == "save" and not landed, "%s trial %d: archive "
                      "missing after a kill" % (mode, trial))
                continue
            landed = True
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
        left = left_over(args.workdir, ("save.npz", "append.npz"))
        check(not left, "%s: temporaries left: %s" % (mode, left))
    return tally.summary()


if __name__ == "__main__":
    sys.exit(main())
