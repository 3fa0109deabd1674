#!/usr/bin/env python3
"""Crash safety of .npz writes and appends (ctest labels interop, crash):

    npz_crash.py --tool PATH --workdir DIR [--trials N]
    npz_crash.py --zip64 --tool NPYIO --workdir DIR [--trials N]

N times each (default 100): a writer that rewrites an archive as
generation 1, 2, ... and an appender that adds one member per round are
killed with SIGKILL at a random moment. Afterwards the archive must load
in NumPy as one whole generation (every element of both members equal)
or, for the appender, as members g0 .. gk in order, each holding its
index; and after the next write no temporary file is left beside it.

--zip64 (ctest label slow; the tool is the npyio command): N appends
(`npyio pack --append`) to an archive that crosses 4 GiB are killed at a
random moment within one append's time. The archive, made sparse by
zipfile (a 4.5 GiB stored member of zeros as holes, then g0.npy past
4 GiB: ZIP64 sizes and offsets; 1 MB on disk), must afterwards be the
old one or the old one plus the new member: its names g0 .. gk in order
(each small member, read alone, holding its index; the 4.5 GiB member
is never loaded into NumPy), zipfile's testzip() and `npyio validate`
passing (both read all 4.5 GiB: seconds each), new members at offsets
past 4 GiB, and the file still sparse. Then one append that completes,
and no temporary left. Exits 77 where the file system keeps no holes.

Prints "N passed, M failed"; exits 77 without NumPy.
"""
import os
import subprocess
import sys
import time
import zipfile

try:
    import numpy as np
except ImportError:
    print("NumPy is not available: skipped")
    sys.exit(77)

from crash_trials import kill_at_random, left_over, setup


def main():
    args, rng, tally = setup(__doc__, lambda ap: ap.add_argument(
        "--zip64", action="store_true", help="appends over 4 GiB"))
    if args.zip64:
        return zip64_trials(args, rng, tally)
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


# ---- appends to an archive over 4 GiB ----------------------------------------

BIG = 9 << 29  # 4.5 GiB: the big member, and g0's offset past 4 GiB
SPARSE_MOST = 64 << 20  # bytes of blocks a sparse archive may take


def keeps_holes(workdir):
    """Does this file system keep a 64 MiB hole as a hole?"""
    probe = os.path.join(workdir, "probe")
    with open(probe, "wb") as f:
        f.truncate(SPARSE_MOST)
    blocks = os.stat(probe).st_blocks * 512
    os.remove(probe)
    return blocks < SPARSE_MOST // 2


def make_sparse_archive(path):
    """big.npy: BIG bytes of zeros, stored, written as holes; then g0.npy
    (four 0s) past 4 GiB."""
    from numpy.lib import format as npformat
    from npz_big import Sparse

    sp = Sparse(path)
    with zipfile.ZipFile(sp, "w", allowZip64=True) as z:
        with z.open("big.npy", "w", force_zip64=True) as f:
            npformat.write_array_header_1_0(
                f, {"descr": "|u1", "fortran_order": False, "shape": (BIG,)})
            zero = bytes(1 << 20)
            for _ in range(BIG // len(zero)):
                f.write(zero)
        with z.open("g0.npy", "w", force_zip64=True) as f:
            npformat.write_array(f, np.zeros(4, "<i8"))
    sp.close()


def member_count(path, cli, check, what):
    """k + 1 if the archive is whole with members big, g0 .. gk (each gi
    holding i, offsets past 4 GiB) by zipfile's testzip and npyio validate,
    still sparse; else None, with the failures counted."""
    try:
        with zipfile.ZipFile(path) as z:
            bad = z.testzip()
            infos = z.infolist()
            names = [i.filename for i in infos]
            k = len(names) - 2
            ok = (check(bad is None, what + ": testzip: bad member %s" % bad)
                  and check(names == ["big.npy"] + ["g%d.npy" % i for i in
                                                    range(k + 1)],
                            what + ": members %s" % names[:8])
                  and check(all(i.header_offset > (1 << 32)
                                for i in infos[1:]),
                            what + ": offsets past 4 GiB"))
            for i in range(k + 1) if ok else []:
                with z.open("g%d.npy" % i) as f:
                    a = np.lib.format.read_array(f)
                ok = check(a.shape == (4,) and (a == i).all(),
                           what + ": g%d holds %d" % (i, i)) and ok
    except Exception as e:  # any failure to read is a failure
        check(False, "%s: zipfile: %s" % (what, e))
        return None
    r = subprocess.run([cli, "validate", path], capture_output=True,
                       text=True)
    ok = check(r.returncode == 0, "%s: npyio validate: %s" %
               (what, r.stdout + r.stderr)) and ok
    ok = check(os.stat(path).st_blocks * 512 < SPARSE_MOST,
               what + ": still sparse") and ok
    return k + 1 if ok else None


def zip64_trials(args, rng, tally):
    check = tally.check
    if not keeps_holes(args.workdir):
        print("this file system keeps no holes: a 4.5 GiB archive would "
              "be written whole; skipped")
        return 77
    inputs = os.path.join(args.workdir, "in")
    arcdir = os.path.join(args.workdir, "archive")
    os.makedirs(inputs)
    os.makedirs(arcdir)
    path = os.path.join(arcdir, "big.npz")
    t = time.monotonic()
    make_sparse_archive(path)
    print("sparse archive: %.1f s, %d bytes, %d on disk" % (
        time.monotonic() - t, os.path.getsize(path),
        os.stat(path).st_blocks * 512))

    def append(k):
        member = os.path.join(inputs, "g%d.npy" % k)
        np.save(member, np.full(4, k, "<i8"))
        return [args.tool, "pack", "--append", path, "g%d=%s" % (k, member)]

    # One append that completes: how long one takes, and the first landing.
    t = time.monotonic()
    check(subprocess.run(append(1)).returncode == 0, "a whole append")
    took = time.monotonic() - t
    t = time.monotonic()
    count = member_count(path, args.tool, check, "after a whole append")
    print("one append: %.3f s; testzip + validate: %.1f s" % (
        took, time.monotonic() - t))
    if count != 2:
        return tally.summary()
    landed = 0
    for trial in range(args.trials):
        kill_at_random(append(count), rng, 1.5 * took)
        now = member_count(path, args.tool, check, "trial %d" % trial)
        if now is None:
            break  # the archive is damaged: nothing after means much
        check(now in (count, count + 1), "trial %d: %d members, not %d or "
              "%d" % (trial, now, count, count + 1))
        landed += now - count
        count = now
    print("%d trials: %d left the new archive, %d the old" % (
        args.trials, landed, args.trials - landed))
    check(subprocess.run(append(count)).returncode == 0, "a last append")
    check(member_count(path, args.tool, check, "after the last append") ==
          count + 1, "the last append landed")
    left = left_over(arcdir, ("big.npz",))
    check(not left, "temporaries left: %s" % left)
    os.remove(path)
    return tally.summary()


if __name__ == "__main__":
    sys.exit(main())
