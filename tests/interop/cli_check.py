#!/usr/bin/env python3
"""Interop test of the `npyio` command (ctest label `interop`):

    cli_check.py --tool PATH/npyio --data tests/data

- `info --json` of every file in tests/data/arrays equals NumPy's facts;
- `dump` equals NumPy's C-ordered, native-order bytes;
- `validate` accepts every valid file;
- `convert` with every --order and --byteorder: byte-identical to np.save of
  NumPy's converted array (records: the header byte for byte and the values
  field by field, since NumPy leaves record padding uninitialised), from
  files and from pipes; a failed convert leaves an existing OUT untouched;
- every malformed header of tests/data/headers/invalid through info,
  validate and dump: exit 1 with a message on stderr, never a signal;
- usage errors exit 2.
Prints "N passed, M failed"; exits 77 without NumPy.
"""
import argparse
import io
import json
import os
import subprocess
import sys
import tempfile

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


ORDERS = {"native": "=", "little": "<", "big": ">"}


def saved(a):
    f = io.BytesIO()
    np.save(f, a)
    return f.getvalue()


def convert_expectation(a, order, byteorder):
    """np.save's bytes for the converted array, and the array itself."""
    b = a.astype(a.dtype.newbyteorder(ORDERS[byteorder]))
    # Not np.ascontiguousarray: in NumPy 1.x it makes 0-d arrays 1-d.
    b = b.copy(order=order)
    return saved(b), b


def same_output(got, want, b):
    """got equals np.save's bytes; for records, equal header and values."""
    if b.dtype.names is None:
        return got == want
    offset = len(want) - b.nbytes
    if got[:offset] != want[:offset] or len(got) != len(want):
        return False
    loaded = np.load(io.BytesIO(got))
    return loaded.dtype == b.dtype and bool((loaded == b).all())


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

    tmp = tempfile.mkdtemp(prefix="npyio-cli-")
    out = os.path.join(tmp, "out.npy")
    for name in sorted(os.listdir(arrays)):
        if not name.endswith(".npy"):
            continue
        path = os.path.join(arrays, name)
        a = np.load(path, allow_pickle=True)
        if a.dtype.hasobject:
            r = run("convert", path, out)
            check(r.returncode == 1 and b"objects" in r.stderr,
                  "convert refuses " + name)
            continue
        for order in "CF":
            for byteorder in ORDERS:
                want, b = convert_expectation(a, order, byteorder)
                r = run("convert", "--order", order, "--byteorder",
                        byteorder, path, out)
                with open(out, "rb") as f:
                    got = f.read()
                check(r.returncode == 0 and not r.stderr and
                      same_output(got, want, b),
                      "convert --order %s --byteorder %s %s"
                      % (order, byteorder, name))
        # From a pipe, to standard output.
        with open(path, "rb") as f:
            r = subprocess.run([args.tool, "convert", "--order=F",
                                "--byteorder=big", "-", "-"], stdin=f,
                               capture_output=True)
        want, b = convert_expectation(a, "F", "big")
        check(r.returncode == 0 and same_output(r.stdout, want, b),
              "convert - - " + name)

    # On a terminal, and only there, a progress bar on stderr (where a
    # terminal can be had: containers may lack /dev/pts).
    import pty
    try:
        leader, follower = pty.openpty()
    except OSError as e:
        print("no pseudo-terminal (%s): progress bar not checked" % e)
    else:
        r = subprocess.run([args.tool, "convert",
                            os.path.join(arrays, "f8be_3x5_f.npy"), out],
                           stderr=follower, stdout=subprocess.DEVNULL)
        os.close(follower)
        bar = os.read(leader, 4096)
        os.close(leader)
        check(r.returncode == 0 and b"converting [" in bar and b"100%" in bar,
              "progress bar on a terminal: %r" % bar)

    # A failed convert leaves OUT as it was.
    with open(os.path.join(arrays, "f8be_3x5_f.npy"), "rb") as f:
        whole = f.read()
    short = os.path.join(tmp, "short.npy")
    with open(short, "wb") as f:
        f.write(whole[:len(whole) - 1])
    with open(out, "wb") as f:
        f.write(b"precious")
    r = run("convert", short, out)
    with open(out, "rb") as f:
        kept = f.read()
    check(r.returncode == 1 and kept == b"precious" and
          sorted(os.listdir(tmp)) == ["out.npy", "short.npy"],
          "failed convert keeps OUT: exit %d" % r.returncode)
    os.remove(short)
    os.remove(out)
    os.rmdir(tmp)

    invalid = os.path.join(args.data, "headers", "invalid")
    for name in sorted(os.listdir(invalid)):
        if not name.endswith(".bin"):
            continue
        path = os.path.join(invalid, name)
        for words in (["info"], ["validate"], ["dump"], ["print"],
                      ["convert", path, os.devnull]):
            r = run(*(words[:1] + [path] + words[2:]))
            check(r.returncode == 1 and r.stderr.startswith(b"npyio: "),
                  "%s %s: exit %d" % (words[0], name, r.returncode))

    for words in ([], ["frobnicate"], ["info"], ["info", "--bogus", "x"],
                  ["dump", "a", "b", "c"], ["convert", "a"],
                  ["convert", "--order", "X", "a", "b"],
                  ["convert", "--byteorder=middle", "a", "b"],
                  ["print", "--max", "-1", "a"], ["info", "--json=1", "a"], ["info", "--max-header-size", "x", "f"]):
        check(run(*words).returncode == 2, "usage error: %r" % words)
    check(run("--version").stdout.startswith(b"npyio "), "--version")
    for words, message in ((["info", args.data], b"is a directory"),
                           (["info", os.path.join(args.data, "missing.npy")],
                            b"No such file or directory")):
        r = run(*words)
        check(r.returncode == 1 and message in r.stderr,
              "%r: %r" % (words, r.stderr))
    for command in ("info", "print", "dump", "validate", "convert"):
        r = run(command, "--help")
        check(r.returncode == 0 and
              r.stdout.startswith(b"usage: npyio " + command.encode()),
              command + " --help")
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
