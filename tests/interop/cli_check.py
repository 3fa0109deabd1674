#!/usr/bin/env python3
"""Interop test of the `npyio` command (ctest label `interop`):

    cli_check.py --tool PATH/npyio --data tests/data

- `info --json` of every file in tests/data/arrays equals NumPy's facts;
- `dump` equals NumPy's C-ordered, native-order bytes;
- `validate` accepts every valid file;
- every malformed header of tests/data/headers/invalid through info,
  validate and dump: exit 1 with a message on stderr, never a signal;
- usage errors exit 2.
Prints "N passed, M failed"; exits 77 without NumPy.
"""
import argparse
import ast
import json
import os
import subprocess
import sys

try:
    import numpy as np
    import numpy.lib.format as npf
except ImportError:
    print("NumPy is not available: skipped")
    sys.exit(77)


def facts(path):
    """What `npyio info --json` must say, from NumPy."""
    with open(path, "rb") as f:
        major, _ = npf.read_magic(f)
        hlen = int.from_bytes(f.read(2 if major == 1 else 4), "little")
        offset = f.tell() + hlen
        f.seek(0)
        npf.read_magic(f)
        shape, fortran, dtype = npf._read_array_header(
            f, (major, 0), max_header_size=2**30)
    descr = dtype.str if dtype.names is None else repr(dtype.descr)
    count = int(np.prod(shape, dtype=object)) if shape else 1
    return {"version": "%d.0" % major, "header_len": hlen,
            "data_offset": offset, "descr": descr, "shape": list(shape),
            "fortran_order": fortran, "itemsize": dtype.itemsize,
            "count": count, "nbytes": count * dtype.itemsize}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--data", required=True)
    args = ap.parse_args()
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print("FAIL", what)

    def run(*words):
        return subprocess.run([args.tool] + list(words), capture_output=True)

    arrays = os.path.join(args.data, "arrays")
    for name in sorted(os.listdir(arrays)):
        if not name.endswith(".npy"):
            continue
        path = os.path.join(arrays, name)
        r = run("info", "--json", path)
        check(r.returncode == 0 and json.loads(r.stdout) == facts(path),
              "info --json " + name + ": " + r.stdout.decode(errors="replace"))
        check(run("validate", path).returncode == 0, "validate " + name)
        a = np.load(path, allow_pickle=True)
        r = run("dump", path)
        if a.dtype.hasobject:
            check(r.returncode == 1 and r.stderr, "dump refuses " + name)
            continue
        native = a.dtype.newbyteorder("=")
        if a.dtype.names is None:
            want = np.ascontiguousarray(a.astype(native)).tobytes()
            ok = r.stdout == want
        else:
            # NumPy's own conversions leave record padding uninitialised:
            # compare the values field by field instead of the bytes.
            got = np.frombuffer(r.stdout, native).reshape(a.shape)
            ok = len(r.stdout) == a.nbytes and bool((got == a).all())
        check(r.returncode == 0 and ok, "dump " + name)

    invalid = os.path.join(args.data, "headers", "invalid")
    for name in sorted(os.listdir(invalid)):
        if not name.endswith(".bin"):
            continue
        path = os.path.join(invalid, name)
        for command in ("info", "validate", "dump"):
            r = run(command, path)
            check(r.returncode == 1 and r.stderr.startswith(b"npyio: "),
                  "%s %s: exit %d" % (command, name, r.returncode))

    for words in ([], ["frobnicate"], ["info"], ["info", "--bogus", "x"],
                  ["dump", "a", "b"], ["info", "--max-header-size", "x", "f"]):
        check(run(*words).returncode == 2, "usage error: %r" % words)
    check(run("--version").stdout.startswith(b"npyio "), "--version")
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
