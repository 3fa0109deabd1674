#!/usr/bin/env python3
"""Crash safety of .npy writes to paths (ctest labels interop, crash):

    npy_crash.py --tool PATH --workdir DIR [--trials N]

N times each (default 100), a process that replaces one file with
generation 1, 2, ... of a (65536,) '<i8' array of one value is killed
with SIGKILL at a random moment:
  - by npyio_save_with_header (atomic): the file must load in NumPy as one whole
    generation (shape and every element equal);
  - by create-and-map, which replaces the file in place as NumPy's
    open_memmap does: the file may be absent, or must load with the
    right shape and dtype (its values may be a generation's or zeros).
After the trials one write that completes must leave no temporary file
beside it. (Appends killed at random: grow_check.py; archives:
npz_crash.py.) Prints "N passed, M failed"; exits 77 without NumPy.
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

    def state(path, how):
        """What the file holds: 'whole', 'sized' (map: right shape), or
        a description of what is wrong."""
        if not os.path.exists(path):
            return "absent"
        try:
            a = np.load(path)
        except Exception as e:  # any failure to load is a failure
            return "unloadable: %s" % e
        if a.shape != (65536,) or a.dtype != np.dtype("<i8"):
            return "wrong shape or dtype: %s %s" % (a.shape, a.dtype)
        if (a == a[0]).all() and a[0] > 0:
            return "whole"
        return "sized" if how == "map" else "mixed generations"

    for how in ("save", "map"):
        path = os.path.join(args.workdir, how + ".npy")
        seen = set()
        for trial in range(args.trials):
            kill_at_random([args.tool, "churn", path, how], rng, 0.05)
            s = state(path, how)
            seen.add(s)
            ok = s == "whole" or (how == "map" and s in ("absent", "sized"))
            # Before the first generation lands, a saved file is absent.
            ok = ok or (how == "save" and s == "absent" and
                        "whole" not in seen)
            check(ok, "%s trial %d: %s" % (how, trial, s))
        # One write that completes: the temporaries of the killed go.
        r = subprocess.run([args.tool, "create", path, "4", "4"])
        check(r.returncode == 0, how + ": a create after the kills")
        r = subprocess.run([args.tool, "loadsave", path, "0", path])
        check(r.returncode == 0, how + ": a save after the kills")
        left = left_over(args.workdir, ("save.npy", "map.npy"))
        check(not left, "%s: temporaries left: %s" % (how, left))
        print("%s: states seen: %s" % (how, sorted(seen)))
    return tally.summary()


if __name__ == "__main__":
    sys.exit(main())
