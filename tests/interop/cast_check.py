#!/usr/bin/env python3
"""Interop test: conversion on read (npyio_load_as, npyio_reader_set_type,
npyio_npz_load_as, `npyio convert --dtype`) against NumPy's astype.

    cast_check.py --tool CAST_TOOL --cli NPYIO --data DIR --workdir DIR

1. The casting table: for every pair of numeric types (bool, the eight
   integers, f2 f4 f8 and long double, c8 c16 and long-double complex) and
   every rule (safe, same_kind, unsafe), npyio_load_as must succeed
   exactly where np.can_cast(from, to, rule) says, refusing the others
   with "cannot cast '<from>' to '<to>' under the '<rule>' rule;
   NPYIO_READ_CAST_<SAME_KIND or UNSAFE, the weakest np.can_cast allows>
   allows it (NumPy's astype casts unsafely by default)"; the
   arrays are edge values of the source type (min/max integers, +-0,
   subnormals, inf, NaN, values just beyond each target's range, half
   float rounding ties) and random ones. Where allowed, the bytes must be
   astype's (values for long double targets, whose padding NumPy leaves
   unset); a float going to an integer type it does not fit must be
   NPYIO_E_OVERFLOW naming the first such element's index, and with
   those elements set to 0 the bytes must be astype's.
2. Every way of reading with a type (cast_tool modes: whole in C order
   and in file order, read_alloc, chunks of 1, 7 and 4096 elements, rows
   1 and 3 at a time, chunks in file order) over random arrays of every
   numeric type, Fortran and C order, both byte orders of the file and
   of the target, and the corpus of tests/data/arrays (non-numeric types
   refused by name); the .npy on a pipe; .npz members (stored and
   deflated) through npyio_npz_load_as.
3. `npyio convert --dtype TYPE --casting RULE` (with --order F and
   --byteorder big for some): byte for byte np.save of
   np.load(IN).astype(TYPE, casting=RULE) in the order and byte order
   asked; refusals fail naming both types and the --casting that allows
   the conversion. Arrays of 0, 1 and 2 elements
   (0-d too) through every pair of the numeric types above, under the
   safe rule where np.can_cast allows it, else unsafe.
Nothing here assumes the host's byte order or long double size. Prints one
line per failure, then `N passed, M failed`; exit 0 only if all passed, 77
without NumPy.
"""

import argparse
import io
import os
import subprocess
import sys
import warnings

from tally import Tally

try:
    import numpy as np
except ImportError:
    print("cast_check.py: NumPy is not available; skipping")
    sys.exit(77)

CODES = ["b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8",
         "f2", "f4", "f8", "g", "c8", "c16", "G"]
RULES = [("safe", 0), ("same_kind", 4), ("unsafe", 8)]
NUMERIC = "biufc"
HALF_TIES = [65519.0, 65520.0, 2049.0, 2051.0, 1 + 2.0 ** -11,
             1 + 2.0 ** -11 + 2.0 ** -40, 2.0 ** -25, 3 * 2.0 ** -25,
             2.0 ** -14 - 2.0 ** -25, 24776.00002887]
INT_EDGES = [2.0 ** 7 - 0.5, 2.0 ** 7, -2.0 ** 7 - 0.5, -2.0 ** 7 - 1,
             255.5, 256.0, -0.9, -1.0, 2.0 ** 15, 2.0 ** 16 - 0.5,
             2.0 ** 16, 2.0 ** 31 - 0.5, 2.0 ** 31, -2.0 ** 31 - 1,
             2.0 ** 32, 2.0 ** 63, -2.0 ** 63, 2.0 ** 64 - 2048, 2.0 ** 64,
             1e39, -1e39, 3.4e38]

rng = np.random.default_rng(20261205)


def quiet():
    return warnings.catch_warnings()


warnings.simplefilter("ignore")  # astype's ComplexWarning, overflows


def edge_values(d):
    """Edge values of a numeric dtype d (native order), then random ones."""
    if d.kind == "b":
        return np.array([False, True, True, False, True], dtype=d)
    if d.kind in "iu":
        info = np.iinfo(d)
        vals = [info.min, info.max, 0, 1, info.max - 1, info.min + 1]
        vals += [v for v in (-1, -2, 127, 128, -129, 255, 256, 32767, 32768,
                             65535, 65536, 2 ** 31, 2 ** 24 + 1, 2 ** 53 + 1,
                             2 ** 62 + 2 ** 38 + 1, -2 ** 31 - 1)
                 if info.min <= v <= info.max]
        rand = rng.integers(info.min, info.max, 40, dtype=d, endpoint=True)
        return np.concatenate([np.array(vals, dtype=d), rand])
    real = np.dtype(d.char.lower() if d.kind == "c" else d.char)
    if d.kind == "c":
        real = np.empty(0, d).real.dtype
    fi = np.finfo(real)
    with np.errstate(all="ignore"):
        vals = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, fi.tiny,
                -fi.tiny, fi.smallest_subnormal, -fi.smallest_subnormal,
                fi.tiny - fi.smallest_subnormal, fi.max, -fi.max, fi.eps,
                1 + fi.eps, 0.1, -2.5, 3.5, 1e-300, 1e300]
        base = np.array(vals + HALF_TIES + INT_EDGES, dtype=np.float64)
        x = np.concatenate([base.astype(real),
                            np.array([np.longdouble(1) + np.finfo(
                                np.longdouble).eps]).astype(real),
                            (rng.standard_normal(40) *
                             10.0 ** rng.integers(-10, 10, 40)).astype(real),
                            (rng.integers(-300, 300, 20) + 0.5).astype(real)])
    if d.kind == "f":
        return x.astype(d)
    y = np.roll(x, 7)
    out = np.empty(x.size, dtype=d)
    out.real = x
    out.imag = y
    return out


def int_bad(src, to):
    """Elements of a float/complex src that the integer type `to` cannot
    hold after truncation (NaN, inf, out of range)."""
    bad = np.zeros(src.size, dtype=bool)
    if to.kind not in "iu" or src.dtype.kind not in "fc":
        return bad.reshape(src.shape)
    info = np.iinfo(to)
    flat = src.ravel(order="C")
    x = flat.real if src.dtype.kind == "c" else flat
    for i, v in enumerate(x):
        v = np.longdouble(v)
        if not np.isfinite(v):
            bad[i] = True
        else:
            t = int(np.trunc(v))
            bad[i] = t < info.min or t > info.max
    return bad.reshape(src.shape, order="C")


def expected(src, to, rule):
    with quiet():
        with np.errstate(all="ignore"):
            return np.ascontiguousarray(src.astype(to, casting=rule))


def is_long(d):
    real = d.itemsize // 2 if d.kind == "c" else d.itemsize
    return d.kind in "fc" and real > 8


def same(got_bytes, want, t):
    """The bytes of a conversion against astype's array `want` (C order):
    exact bytes, or for long double targets the values (NumPy leaves
    their padding bytes unset)."""
    if not is_long(want.dtype):
        return got_bytes == want.tobytes()
    if len(got_bytes) != want.nbytes:
        return False
    got = np.frombuffer(got_bytes, dtype=want.dtype)
    w = want.ravel()
    parts = [(got.real, w.real), (got.imag, w.imag)] \
        if want.dtype.kind == "c" else [(got, w)]
    return all(np.array_equal(a, b, equal_nan=True) and
               np.array_equal(np.signbit(a), np.signbit(b))
               for a, b in parts)


class Checker:
    def __init__(self, args):
        self.args = args
        self.t = Tally()
        self.n = 0

    def path(self, name):
        self.n += 1
        return os.path.join(self.args.workdir, "%d_%s" % (self.n, name))

    def tool(self, *argv, stdin=None):
        return subprocess.run([self.args.tool] + [str(a) for a in argv],
                              input=stdin, capture_output=True)

    def save(self, array, name):
        p = self.path(name + ".npy")
        np.save(p, array)
        return p

    def refused(self, r, what, *needles):
        err = r.stderr.decode(errors="replace")
        ok = r.returncode == 1 and all(n in err for n in needles)
        self.t.check(ok, "%s: expected a refusal with %r, got rc %d: %s"
                     % (what, needles, r.returncode, err.strip()))

    def load_as(self, src, path, to, rule, flags, what):
        """npyio_load_as of path (array src) to `to` under `rule`."""
        out = self.path(os.path.basename(path) + ".out")
        r = self.tool("load-as", path, to.str, flags, out)
        if not np.can_cast(src.dtype, to, rule):
            way = "SAME_KIND" if np.can_cast(src.dtype, to, "same_kind") \
                else "UNSAFE"
            self.refused(r, what, "cannot cast '%s' to '%s' under the '%s' "
                         "rule; NPYIO_READ_CAST_%s allows it (NumPy's astype "
                         "casts unsafely by default)" % (
                             src.dtype.str, to.str, rule, way))
            return
        bad = int_bad(src, to)
        if bad.any():
            first = int(np.flatnonzero(bad.ravel(order="C"))[0])
            self.refused(r, what, "value too large",
                         "element %d: " % first)
            return
        if not self.t.check(r.returncode == 0, "%s: %s" % (
                what, r.stderr.decode(errors="replace").strip())):
            return
        shape = " ".join(str(n) for n in (src.ndim,) + src.shape)
        self.t.check(r.stdout.decode().strip() == shape,
                     "%s: shape %r" % (what, r.stdout))
        with open(out, "rb") as f:
            self.t.check(same(f.read(), expected(src, to, rule), to),
                         "%s: values differ from astype" % what)

    def table(self):
        for fc in CODES:
            fd = np.dtype(fc)
            src = edge_values(fd)
            path = self.save(src, "edge_" + fc)
            for tc in CODES:
                td = np.dtype(tc)
                for rule, flags in RULES:
                    what = "table %s -> %s %s" % (fd.str, td.str, rule)
                    self.load_as(src, path, td, rule, flags, what)
                bad = int_bad(src, td)
                if bad.any():  # the values, with the unfit ones as 0
                    ok = src.copy()
                    ok[bad] = 0
                    p = self.save(ok, "fit_%s_%s" % (fc, tc))
                    self.load_as(ok, p, td, "unsafe", 8,
                                 "fitting %s -> %s" % (fd.str, td.str))

    def modes(self, src, path, to, rule, flags, what):
        """Every way of reading path (array src, as stored) to `to`."""
        prefix = self.path(os.path.basename(path) + ".m")
        r = self.tool("modes", path, to.str, flags, prefix)
        if not self.t.check(r.returncode == 0, "%s: %s" % (
                what, r.stderr.decode(errors="replace").strip())):
            return
        want = expected(src, to, rule)
        fortran = src.ndim > 1 and np.isfortran(src)
        file_order = np.ravel(want, order="F" if fortran else "C")
        for mode in ("whole_c", "alloc_c", "chunk1_c", "chunk7_c",
                     "chunk4096_c", "rows1_c", "rows3_c", "whole_file",
                     "chunk5_file"):
            with open(prefix + "." + mode, "rb") as f:
                got = f.read()
            w = file_order if mode.endswith("_file") else want
            self.t.check(same(got, np.ascontiguousarray(w), to),
                         "%s: mode %s differs from astype" % (what, mode))

    def random_arrays(self):
        targets = [("f8", "unsafe", 8), ("c16", "safe", 0),
                   ("f2", "same_kind", 4), ("i4", "unsafe", 8),
                   ("b1", "unsafe", 8), ("u2", "unsafe", 8),
                   ("g", "safe", 0), ("f4", "unsafe", 8)]
        for k, fc in enumerate(CODES):
            base = np.resize(edge_values(np.dtype(fc)), 105)
            for order in "<>":
                fd = np.dtype(fc).newbyteorder(order)
                src = np.asfortranarray(base[:105].reshape(7, 5, 3)
                                        .astype(fd))
                if k % 2:
                    src = np.ascontiguousarray(src)
                for j in range(4):
                    tc, rule, flags = targets[(k + j + (order == ">"))
                                              % len(targets)]
                    td = np.dtype(tc).newbyteorder("<>"[j % 2])
                    if not np.can_cast(src.dtype, td, rule):
                        rule, flags = "unsafe", 8
                    s = src.copy(order="K")
                    s[int_bad(s, td)] = 0
                    p = self.save(s, "rand_%s_%s" % (fc, tc))
                    self.modes(s, p, td, rule, flags, "random %s %s -> %s"
                               % (p, s.dtype.str, td.str))

    def corpus(self):
        arrays = os.path.join(self.args.data, "arrays")
        with open(os.path.join(arrays, "manifest.tsv")) as f:
            rows = [l.rstrip("\n").split("\t") for l in f
                    if not l.startswith("#")]
        targets = [("c16", "unsafe", 8), ("f4", "same_kind", 4),
                   ("i8", "unsafe", 8), (">u1", "unsafe", 8),
                   ("=f8", "safe", 0)]
        for row in rows:
            path = os.path.join(arrays, row[1])
            if row[8] != "0":
                continue
            src = np.load(path)
            if src.dtype.kind not in NUMERIC or src.dtype.names:
                r = self.tool("load-as", path, "<f8", 8,
                              self.path(row[1] + ".x"))
                self.refused(r, "corpus %s" % row[1], "cannot cast",
                             "'%s' is a" % src.dtype.str)
                continue
            for tc, rule, flags in targets:
                td = np.dtype(tc)
                what = "corpus %s -> %s %s" % (row[1], td.str, rule)
                if not np.can_cast(src.dtype, td, rule) or \
                        int_bad(src, td).any():
                    # the refusal or the overflow, checked as in the table
                    self.load_as(src, path, td, rule, flags, what)
                    continue
                self.modes(src, path, td, rule, flags, what)
                self.load_as(src, path, td, rule, flags, what)

    def pipe_and_npz(self):
        src = np.asfortranarray(np.resize(edge_values(np.dtype("f4")), 60)
                                .astype(">f4").reshape(6, 10))
        buf = io.BytesIO()
        np.save(buf, src)
        for tc, rule, flags in (("f8", "safe", 0), ("<c8", "safe", 0),
                                (">f2", "same_kind", 4)):
            out = self.path("pipe.out")
            r = self.tool("pipe", np.dtype(tc).str, flags, out,
                          stdin=buf.getvalue())
            if self.t.check(r.returncode == 0, "pipe -> %s: %s" % (
                    tc, r.stderr.decode(errors="replace").strip())):
                with open(out, "rb") as f:
                    self.t.check(same(f.read(), expected(src, np.dtype(tc),
                                                         rule), tc),
                                 "pipe -> %s: values differ" % tc)
        arrays = [np.resize(edge_values(np.dtype(c)), 24).reshape(4, 6)
                  for c in ("i2", ">f8", "u1", "c8")]
        arrays[1] = np.asfortranarray(arrays[1])
        for save in (np.savez, np.savez_compressed):
            p = self.path(save.__name__ + ".npz")
            save(p, *arrays)
            for i, a in enumerate(arrays):
                for tc, rule, flags in (("c16", "safe", 0),
                                        ("f4", "same_kind", 4)):
                    td = np.dtype(tc)
                    out = self.path("member.out")
                    r = self.tool("npz", p, i, td.str, flags, out)
                    what = "%s member %d -> %s" % (save.__name__, i, tc)
                    if not np.can_cast(a.dtype, td, rule):
                        self.refused(r, what, "cannot cast")
                        continue
                    if self.t.check(r.returncode == 0, "%s: %s" % (
                            what, r.stderr.decode(errors="replace"))):
                        with open(out, "rb") as f:
                            self.t.check(same(f.read(),
                                              expected(a, td, rule), td),
                                         what + ": values differ")

    def convert(self, p, tc, rule, extra, what):
        """`npyio convert --dtype tc --casting rule` of p must write np.save's
        bytes of np.load(p).astype(tc, casting=rule) in the order and byte
        order `extra` asks for."""
        out = p + ".conv.npy"
        r = subprocess.run([self.args.cli, "convert", "--dtype", tc,
                            "--casting", rule] + extra + [p, out],
                           capture_output=True)
        if not self.t.check(r.returncode == 0, "%s: %s" % (
                what, r.stderr.decode(errors="replace"))):
            return
        with quiet():
            a = np.load(p).astype(tc, casting=rule)
        bo = {"big": ">", "little": "<"}.get(
            extra[extra.index("--byteorder") + 1]
            if "--byteorder" in extra else "", "=")
        a = a.astype(a.dtype.newbyteorder(bo))
        # copy, not asfortranarray/ascontiguousarray: they make 0-d 1-d
        a = a.copy(order="F" if "F" in extra else "C")
        buf = io.BytesIO()
        np.save(buf, a)
        with open(out, "rb") as f:
            got = f.read()
        if is_long(a.dtype):
            b = np.load(out)
            ok = b.dtype == a.dtype and b.shape == a.shape and \
                np.array_equal(b, a, equal_nan=True)
        else:
            ok = got == buf.getvalue()
        self.t.check(ok, "%s: not np.save's bytes" % what)

    def cli_small(self):
        """Arrays of 0, 1 (0-d and 1-d) and 2 elements through every pair
        of numeric types: the tool's chunks hold whole elements of the type
        handed out, however much smaller the file's elements are (a 0-d i4
        to f8 was refused: 'one element is 8 bytes, the buffer 4')."""
        for fc in CODES:
            vals = edge_values(np.dtype(fc))
            for shape in ((0,), (), (1,), (2,)):
                src = vals[:int(np.prod(shape))].reshape(shape)
                for tc in CODES:
                    a = src.copy()
                    a[int_bad(a, np.dtype(tc))] = 0
                    rule = "safe" if np.can_cast(fc, tc, "safe") \
                        else "unsafe"
                    self.convert(self.save(a, "small_%s_%s" % (fc, tc)), tc,
                                 rule, [], "convert %s%s -> %s %s" % (
                                     fc, list(shape), tc, rule))

    def cli(self):
        cases = [("i8", "f4", "same_kind", []), (">f8", "i2", "unsafe", []),
                 ("u2", "f2", "same_kind", ["--order", "F"]),
                 ("c8", "c16", "safe", ["--byteorder", "big"]),
                 ("f4", "b1", "unsafe", ["--order", "F", "--byteorder",
                                         "big"]),
                 ("i1", "u8", "unsafe", []), ("f2", "g", "safe", []),
                 ("b1", "i4", "safe", ["--byteorder", "little"])]
        for fc, tc, rule, extra in cases:
            src = np.asfortranarray(np.resize(edge_values(np.dtype(fc)), 30)
                                    .reshape(5, 6))
            src[int_bad(src, np.dtype(tc))] = 0
            self.convert(self.save(src, "cli_" + fc.strip("<>")), tc, rule,
                         extra, "convert %s -> %s %s %s" % (fc, tc, rule,
                                                            extra))
        src = edge_values(np.dtype("f8"))[:10]
        p = self.save(src, "cli_refused")
        for tc, rule, needle in (("i4", "safe", "cannot cast '<f8' to "
                                  "'<i4' under the 'safe' rule; --casting "
                                  "unsafe allows it (NumPy's astype casts "
                                  "unsafely by default)"),
                                 ("f4", "safe", "cannot cast '<f8' to "
                                  "'<f4' under the 'safe' rule; --casting "
                                  "same_kind allows it"),
                                 ("i4", "same_kind", "cannot cast '<f8' to "
                                  "'<i4' under the 'same_kind' rule; "
                                  "--casting unsafe allows it"),
                                 ("S3", "unsafe", "'|S3' is a bytes type"),
                                 ("M8[ns]", "unsafe", "datetime64")):
            r = subprocess.run([self.args.cli, "convert", "--dtype", tc,
                                "--casting", rule, p, p + ".r.npy"],
                               capture_output=True)
            err = r.stderr.decode(errors="replace")
            if np.dtype("<f8").str != "<f8":
                needle = needle.replace("<", np.dtype("f8").str[0])
            for t in ("i4", "f4"):
                needle = needle.replace("'<%s'" % t, "'%s'" % np.dtype(t).str)
            self.t.check(r.returncode == 1 and needle in err,
                "convert refusal %s: rc %d %s" % (tc, r.returncode, err))
        r = subprocess.run([self.args.cli, "convert", "--dtype", "f8",
                            "--casting", "sometimes", p, p + ".r.npy"],
                           capture_output=True)
        self.t.check(r.returncode == 2 and b"--casting takes" in r.stderr,
                     "convert --casting sometimes: %r" % r.stderr)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    c = Checker(args)
    c.table()
    c.random_arrays()
    c.corpus()
    c.pipe_and_npz()
    c.cli()
    c.cli_small()
    return c.t.summary()


if __name__ == "__main__":
    sys.exit(main())
