#!/usr/bin/env python3
"""Interop test of `npyio wrap` (ctest label `interop`):

    wrap_check.py --tool PATH/npyio --data tests/data

- for every element type of tests/data/arrays (but Python objects), and
  type strings as people type them (f8, i4,f8, U10, M8[ns]), in C and
  Fortran order, over shapes 0-d, empty (1-D and 3-D), 1-D, 2-D, 3-D and
  ones with a single axis longer than 1 (which np.save writes as C-order
  files whatever the order): `npyio wrap --dtype T --shape S --order O RAW
  OUT` writes exactly the bytes np.save writes for
  np.fromfile(RAW, T).reshape(S, order=O), RAW random bytes; RAW read from
  a file and from standard input, OUT also written to standard output;
- a header beyond --untrusted's 10000 bytes (a record of 700 fields) is
  written as np.save writes it, and refused with --untrusted;
- refused, exit 1, with a message naming the problem, and an existing OUT
  left byte for byte as it was (no temporary left beside it): object
  types, records holding objects, subarray types, RAW short or long by one
  byte (from a file and from a pipe), RAW a directory or missing, shapes
  whose size overflows int64, a dimension beyond 2**63 - 1, more
  dimensions than --untrusted allows (33; 33 pass without it), a header
  longer than --max-header-size;
- usage errors, exit 2, OUT untouched: a bad --shape ('3,,4', '3,x', '-1',
  ' 3', '(3,4)', '3,'), an unknown --dtype, no --dtype or no --shape,
  --casting (convert's, not wrap's).
Prints "N passed, M failed"; exits 77 without NumPy.
"""
import argparse
import ast
import io
import os
import subprocess
import sys
import tempfile

from tally import Tally

try:
    import numpy as np
    import numpy.lib.format as npf
except ImportError:
    print("NumPy is not available: skipped")
    sys.exit(77)

SHAPES = [(), (0,), (7,), (3, 5), (1, 5), (5, 1), (3, 0), (0, 3, 4),
          (2, 3, 4), (4, 1, 3)]
TYPED = ["f8", "i4", "u2", "U10", "S3", "M8[ns]", "m8[25s]", "c16", "?",
         "i4,f8", "[('x', '<i4'), ('y', '>f8', (2,))]"]
SENTINEL = b"an existing OUT, to be left as it is\n"
TOO_BIG = "as np.save writes it) would be refused on reading"


def type_text(dt):
    """The --dtype text of a dtype: its header descr."""
    descr = npf.dtype_to_descr(dt)
    return descr if isinstance(descr, str) else repr(descr)


def header_dtype(path):
    """The dtype of the .npy file at path, from its header."""
    with open(path, "rb") as f:
        version = npf.read_magic(f)
        read = (npf.read_array_header_1_0 if version == (1, 0)
                else npf.read_array_header_2_0)
        return read(f, max_header_size=1 << 20)[2]


def corpus_types(data):
    """The distinct element types of the array corpus, objects left out."""
    seen, out = set(), []
    with open(os.path.join(data, "arrays", "manifest.tsv")) as f:
        for line in f:
            if line.startswith("#"):
                continue
            name, file = line.split("\t")[:2]
            dt = header_dtype(os.path.join(data, "arrays", file))
            text = type_text(dt)
            if not dt.hasobject and text not in seen:
                seen.add(text)
                out.append((text, dt))
    return out


def user_types():
    """Type strings as typed, with the dtype NumPy makes of them."""
    out = []
    for text in TYPED:
        lit = text.startswith("[")
        out.append((text, np.dtype(ast.literal_eval(text) if lit else text)))
    return out


def saved(raw, dt, shape, order):
    """np.save's file of np.fromfile(raw, dt).reshape(shape, order);
    elements of 0 bytes, which np.fromfile cannot count, from zeros."""
    count = int(np.prod(shape, dtype=np.int64))
    flat = np.zeros(count, dt) if dt.itemsize == 0 else np.frombuffer(raw, dt)
    a = flat.reshape(shape, order=order)
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    return buf.getvalue()


class Runner:
    def __init__(self, tool, work):
        self.tool = tool
        self.work = work
        self.raw = os.path.join(work, "raw.bin")
        self.out = os.path.join(work, "out.npy")

    def run(self, args, stdin=None):
        return subprocess.run([self.tool, "wrap"] + args, input=stdin,
                              capture_output=True, timeout=120)

    def wrap(self, text, shape, order, raw, how):
        """Wrap raw as text/shape/order: RAW from a file, a pipe ("-"), or
        OUT to standard output. The file written, or None."""
        with open(self.raw, "wb") as f:
            f.write(raw)
        args = ["--dtype", text, "--shape", ",".join(map(str, shape)),
                "--order", order]
        if how == "stdout":
            r = self.run(args + [self.raw, "-"])
            return r.stdout if r.returncode == 0 else None
        if how == "pipe":
            r = self.run(args + ["-", self.out], stdin=raw)
        else:
            r = self.run(args + [self.raw, self.out])
        if r.returncode != 0:
            print(r.stderr.decode(errors="replace").strip())
            return None
        with open(self.out, "rb") as f:
            return f.read()


def check_types(t, runner, types):
    rng = np.random.default_rng(39)
    n = 0
    for text, dt in types:
        for shape in SHAPES:
            for order in "CF":
                size = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
                raw = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
                how = ("file", "pipe", "stdout")[n % 3]
                n += 1
                got = runner.wrap(text, shape, order, raw, how)
                t.check(got == saved(raw, dt, shape, order),
                        "wrap --dtype %.200s --shape %s --order %s (%s): not "
                        "np.save's bytes" % (text, shape, order, how))


def refused(t, runner, args, status, message, stdin=None, raw=b""):
    """wrap fails with status and message; OUT and the folder unchanged."""
    with open(runner.raw, "wb") as f:
        f.write(raw)
    with open(runner.out, "wb") as f:
        f.write(SENTINEL)
    before = sorted(os.listdir(runner.work))
    r = runner.run(args, stdin=stdin)
    err = r.stderr.decode(errors="replace")
    what = ("wrap %s" % " ".join(args))[:300]
    t.check(r.returncode == status,
            "%s: exit %d, not %d (%s)" % (what, r.returncode, status, err))
    t.check(message in err, "%s: no %r in %r" % (what, message, err))
    with open(runner.out, "rb") as f:
        t.check(f.read() == SENTINEL, "%s: OUT changed" % what)
    t.check(sorted(os.listdir(runner.work)) == before,
            "%s: files left: %s" % (what, os.listdir(runner.work)))


def check_refusals(t, runner):
    raw, out = runner.raw, runner.out
    f8 = ["--dtype", "f8"]
    for typ, message in [("O", "Python objects"),
                         ("[('a', '<i4'), ('b', '|O')]", "Python objects"),
                         ("(2,)f8", "subarray type")]:
        refused(t, runner, ["--dtype", typ, "--shape", "3", raw, out], 1,
                message)
    for extra in (-1, 1):
        data = bytes(120 + extra)
        message = ("119 bytes, not the 120 bytes of shape (3, 5) of f8"
                   if extra < 0 else "120")
        refused(t, runner, f8 + ["--shape", "3,5", raw, out], 1, message,
                raw=data)
        message = ("119 bytes, not the 120" if extra < 0
                   else "more than the 120 bytes of shape (3, 5) of f8")
        refused(t, runner, f8 + ["--shape", "3,5", "-", out], 1, message,
                stdin=data)
    refused(t, runner, f8 + ["--shape", "3", runner.work, out], 1,
            "is a directory")
    refused(t, runner, f8 + ["--shape", "3", raw + ".none", out], 1,
            "No such file")
    refused(t, runner, f8 + ["--shape", "%d,4" % 2**62, raw, out], 1,
            "--shape: ")
    refused(t, runner, f8 + ["--shape", "%d" % 2**63, raw, out], 1,
            "beyond 2**63 - 1")
    refused(t, runner, f8 + ["--shape", ",".join(["1"] * 33), "--untrusted",
                             raw, out], 1, "33 dimensions")
    refused(t, runner, f8 + ["--shape", ",".join(["1"] * 65), raw, out], 1,
            "65 dimensions")
    refused(t, runner, f8 + ["--shape", "3", "--max-header-size", "100",
                             raw, out], 1, TOO_BIG)
    for shape in ["3,,4", "3,x", "-1", " 3", "(3,4)", "3,"]:
        refused(t, runner, f8 + ["--shape", shape, raw, out], 2, "--shape")
    refused(t, runner, ["--dtype", "f9", "--shape", "3", raw, out], 2,
            "--dtype: ")
    refused(t, runner, ["--shape", "3", raw, out], 2, "needs --dtype")
    refused(t, runner, f8 + [raw, out], 2, "needs --dtype")
    refused(t, runner, f8 + ["--shape", "3", "--casting", "unsafe", raw, out],
            2, "unknown option")


def check_limits(t, runner):
    # 33 dimensions pass without --untrusted (NumPy 1.x has 32 at most:
    # nothing to compare with; the header is checked by reading it back).
    got = runner.wrap("f8", (1,) * 33, "C", bytes(8), "file")
    t.check(got is not None and b"(1, 1, 1," in got[:200],
            "33 dimensions without --untrusted")
    # A record whose header is beyond 10000 bytes: np.save's file without
    # --untrusted, refused with it.
    dt = np.dtype([("field_%03d" % i, "<f8") for i in range(700)])
    raw = bytes(range(256)) * (dt.itemsize * 2 // 256) + bytes(
        dt.itemsize * 2 % 256)
    got = runner.wrap(type_text(dt), (2,), "C", raw, "file")
    t.check(got == saved(raw, dt, (2,), "C"),
            "a 700-field record: not np.save's bytes")
    refused(t, runner, ["--dtype", type_text(dt), "--shape", "2",
                        "--untrusted", runner.raw, runner.out], 1,
            TOO_BIG, raw=raw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--data", required=True)
    args = ap.parse_args()
    t = Tally()
    with tempfile.TemporaryDirectory(prefix="npyio-wrap-") as work:
        runner = Runner(args.tool, work)
        check_types(t, runner, corpus_types(args.data) + user_types())
        check_refusals(t, runner)
        check_limits(t, runner)
    return t.summary()


if __name__ == "__main__":
    sys.exit(main())
