#!/usr/bin/env python3
"""The tool on archives whose block index lies (ctest label `interop`):

    index_cli_check.py --tool PATH/npyio --data tests/data

For every archive of tests/data/npz/index (gen_npz_index.py: valid
archives, np.load reads them, whose member carries an index that does not
describe its data, and one whose index is true):

- `npyio dump --threads N ARCHIVE a`, N = 1, 2, 3, writes exactly NumPy's
  C-ordered native bytes of np.load(ARCHIVE)["a"], and exits 0;
- `npyio validate` calls it valid (exit 0), and warns that the index does
  not match its data exactly when the manifest's block_index is -1 (what
  NPYIO_NPZ_STAT_BLOCK_INDEX says; test_npz_threads checks the stat): the
  warning, the stat and the data path agree.

The expectations are NumPy's, read here; the manifest only says which
archives carry a lying index.
"""
import argparse
import os
import subprocess
import sys

import numpy as np

WARNING = "its block index does not match its data"


def run(tool, *args):
    return subprocess.run([tool, *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=120)


def manifest(folder):
    with open(os.path.join(folder, "manifest.tsv"), encoding="utf-8") as f:
        lines = f.read().splitlines()
    cols = lines[0].lstrip("#").split("\t")
    return [dict(zip(cols, line.split("\t"))) for line in lines[1:]]


def check_archive(tool, path, lying):
    failures = []
    with np.load(path) as f:
        want = np.ascontiguousarray(f["a"]).astype(
            f["a"].dtype.newbyteorder("=")).tobytes()
    for threads in (1, 2, 3):
        r = run(tool, "dump", "--threads", str(threads), path, "a")
        if r.returncode != 0 or r.stdout != want:
            failures.append("dump --threads %d: exit %d, %d bytes, %s "
                            "NumPy's; %s" % (threads, r.returncode,
                                             len(r.stdout),
                                             "equal to" if r.stdout == want
                                             else "not",
                                             r.stderr.decode(errors="replace")))
    r = run(tool, "validate", path)
    warned = WARNING in r.stderr.decode(errors="replace")
    if r.returncode != 0 or warned != lying:
        failures.append("validate: exit %d, warned %s, the index lies: %s; "
                        "%s" % (r.returncode, warned, lying,
                                r.stderr.decode(errors="replace")))
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--data", required=True)
    args = ap.parse_args()
    folder = os.path.join(args.data, "npz", "index")
    rows = manifest(folder)
    failed = 0
    for row in rows:
        path = os.path.join(folder, row["archive"])
        for failure in check_archive(args.tool, path,
                                     row["block_index"] == "-1"):
            print("FAIL: %s: %s" % (row["archive"], failure))
            failed += 1
    print("%d archives, %d failures" % (len(rows), failed))
    return 1 if failed or len(rows) < 8 else 0


if __name__ == "__main__":
    sys.exit(main())
