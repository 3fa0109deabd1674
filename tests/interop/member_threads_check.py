#!/usr/bin/env python3
"""Interop test: a big-endian stored member written by np.savez, loaded
on 1, 2 and 3 threads (NPYIO_LIMIT_THREADS), as native and with a type,
gives the bytes of NumPy's np.load(path)[key].astype(type).

    member_threads_check.py --tool CAST_TOOL --workdir DIR

The members are large enough (over 3 x 2 MiB, the smallest part a thread
takes) for every count to cut them into parts, so the reader's parallel
conversion of stored members (byte swap, cast) runs with its parts' CRC-32
checks: a '>f8' vector and a '>i4' matrix. cast_tool's npz command loads a
member with npyio_npz_load_as and reads it again in chunks through its
reader (the same bytes); CAST_TOOL_THREADS sets its thread limit. Prints
one line per failure, then `N passed, M failed`; exit 0 only if all
passed, 77 without NumPy.
"""

import argparse
import os
import subprocess
import sys

from tally import Tally

try:
    import numpy as np
except ImportError:
    print("member_threads_check.py: NumPy is not available; skipping")
    sys.exit(77)

# (target type, NPYIO_READ_CAST_* flags) per member, besides the native
# form of its type (the byte swap): the floats fit every integer asked.
TARGETS = {"f8": [(">f8", 0), ("<f4", 4), ("<i8", 8), ("<c16", 0)],
           "i4": [(">i4", 0), ("<f8", 0), ("<i2", 8), ("<u8", 8)]}


def members():
    """The arrays of the archive: big-endian, stored."""
    n = 800_003  # 6.4 MB: parts for 3 threads
    f8 = (np.arange(n, dtype=">f8") * 0.37 - 1.0e5).astype(">f8")
    i4 = (np.arange(1_700_000, dtype=">i4") * 7919 - 3).reshape(1000, 1700)
    return {"f8": f8, "i4": i4}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tool", required=True)
    p.add_argument("--workdir", required=True)
    args = p.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    t = Tally()
    path = os.path.join(args.workdir, "big_endian.npz")
    arrays = members()
    np.savez(path, **arrays)
    out = os.path.join(args.workdir, "out.bin")
    with np.load(path) as z:
        keys = z.files
        loaded = {k: z[k] for k in keys}
    for index, key in enumerate(keys):
        native = loaded[key].dtype.newbyteorder("=").str
        for target, flags in [(native, 0)] + TARGETS[key]:
            with np.errstate(all="ignore"):
                want = loaded[key].astype(target).tobytes()
            for threads in (1, 2, 3):
                what = "%s as %s on %d threads" % (key, target, threads)
                env = dict(os.environ, CAST_TOOL_THREADS=str(threads))
                r = subprocess.run([args.tool, "npz", path, str(index),
                                    target, str(flags), out], env=env,
                                   capture_output=True, text=True)
                if not t.check(r.returncode == 0,
                               "%s: %s" % (what, r.stderr.strip())):
                    continue
                with open(out, "rb") as f:
                    t.check(f.read() == want, what + ": not NumPy's bytes")
    return t.summary()


if __name__ == "__main__":
    sys.exit(main())
