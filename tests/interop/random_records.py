#!/usr/bin/env python3
"""Interop test: random structured dtypes written by NumPy, parsed and
re-emitted by libnpyio.

    random_records.py --tool PATH --seed N --count M --workdir DIR

Draws M random record dtypes and array shapes from random.Random(N), has
NumPy's np.save write each one, and keeps the header (the file cut at its
data offset) as DIR/case_NNNN.hdr.  Then it runs

    PATH DIR/case_0000.hdr DIR/case_0001.hdr ...

once.  The tool parses each header with libnpyio, emits it again and
compares the bytes with the file; it prints `ok FILE` or `FAIL FILE: reason`
per file, then `N passed, M failed`, and exits 0 only if all passed.  Its
output goes straight to ours and its exit status becomes ours.

Exit 77 (ctest: skipped) if NumPy cannot be imported.

The draws are deterministic for a given seed and list of choices below, so a
failure is reproduced by rerunning with the printed seed.  Note that
np.save writes NumPy-version-dependent bytes (e.g. the growth padding of
1.24+), which is fine: the tool compares against what this NumPy wrote.

What is drawn (per the NPY format reference, sections 3-4):
  * records of 1-8 fields, nested up to depth 3 (a field of the top-level
    record is at depth 0; its sub-fields at depth 1, ...), records also as
    subarray bases;
  * scalar bases of every kind NumPy writes without a pickle (no 'O'),
    both byte orders where there is one, long double and complex long
    double, S/U/V of several sizes, datetimes and timedeltas with units
    and multipliers;
  * subarray shapes of 0-2 dimensions of size 1-3, rarely nested subarrays;
  * names that are plain ASCII, latin-1, beyond latin-1 (v3 headers),
    unprintable (repr escapes them) or need quote/backslash escaping;
    titles sometimes; rarely one name of ~66000 characters, which makes a
    format 2.0 header (only way to exceed 65535 bytes with 1-8 fields);
  * so some headers exceed 10000 characters, NumPy's default np.load limit
    and libnpyio's default NPYIO_LIMIT_HEADER_SIZE: the tool must raise
    it, as np.load does with allow_pickle=True (counted in the summary);
  * layouts: packed, align=True, or explicit increasing offsets with gaps
    and trailing padding;
  * array shapes of 0-3 dimensions of size 0-3, C or Fortran order.
A draw that NumPy refuses to build or np.save refuses to write is dropped
and drawn again (counted as "rejected").
"""

import argparse
import io
import os
import random
import struct
import subprocess
import sys
import warnings

try:
    import numpy as np
    from numpy.lib import format as npf
except ImportError:
    print("random_records.py: NumPy is not available to %s; skipping"
          % sys.executable)
    sys.exit(77)

SKIP = 77
MAX_DEPTH = 3  # deepest field depth; records nest at depths 0..2
LONG_NAME_RATE = 0.01  # share of dtypes with a name of ~66000 characters

# Scalar bases.  'g'/'G' are long double / complex long double ('<f16' and
# '<c32' on x86_64 Linux; other hosts have other sizes, NumPy decides).
# 1-byte types, S and V have no byte order ('|').
ORDERED = ["i2", "i4", "i8", "u2", "u4", "u8", "f2", "f4", "f8", "g",
           "c8", "c16", "G", "U1", "U3"]
UNORDERED = ["?", "i1", "u1", "S1", "S3", "S7", "V1", "V3", "V8"]
DT_UNITS = ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs",
            "as"]

# Pieces of field names.  Latin-1 names keep format 1.0 (bytes 80-FF in the
# header); anything beyond needs format 3.0 (UTF-8).  Unprintable characters
# come out of repr as escapes (\x00, \xa0, \u200b, ...), quotes and
# backslashes need escaping or a change of quote character.
ASCII = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_ "
LATIN1 = ["é", "ß", "ñ", "Ø", "ÿ", "µ", "\xa0", "\xad", "\x85"]
BEYOND = ["ĉ", "Ω", "ж", "中", "\U0001F600", "\u200b", "\u2028", "\ufeff"]
ESCAPES = ["'", '"', "\\", "\n", "\t", "\r", "\x00", "\x7f", "'\""]


class Stats:
    """What the generated corpus contains, for the one-line summary."""

    def __init__(self):
        self.counts = dict.fromkeys(
            ["nested", "titled", "aligned", "offsets", "non_ascii", "v2",
             "v3", "fortran", "over_10000_chars", "rejected"], 0)


class Draw:
    """One random dtype, with flags recording what it used."""

    def __init__(self, rng):
        self.rng = rng
        self.nested = False
        self.titled = False
        self.aligned = False
        self.offsets = False

    # -- names ----------------------------------------------------------

    def text(self):
        """A random non-empty string for a name or title."""
        rng = self.rng
        n = rng.randint(1, 6)
        chars = [rng.choice(ASCII) for _ in range(n)]
        # Mostly ASCII: a dtype has ~10 names, and one name beyond latin-1
        # already makes the whole header format 3.0.
        style = rng.random()
        if style < 0.06:
            chars.insert(rng.randint(0, n), rng.choice(LATIN1))
        elif style < 0.08:
            chars.insert(rng.randint(0, n), rng.choice(BEYOND))
        elif style < 0.16:
            chars.insert(rng.randint(0, n), rng.choice(ESCAPES))
        return "".join(chars)

    def unique_texts(self, count):
        """count distinct strings (names and titles of one record share a
        namespace in NumPy: a title may not equal any name or title)."""
        out = []
        while len(out) < count:
            t = self.text()
            if t not in out:
                out.append(t)
        return out

    # -- types ------------------------------------------------------------

    def scalar(self):
        rng = self.rng
        r = rng.random()
        if r < 0.15:
            # datetime64 / timedelta64: generic, unit, or multiplier*unit.
            kind = rng.choice(["M8", "m8"])
            unit = rng.choice(["", "[%s]" % rng.choice(DT_UNITS),
                               "[%d%s]" % (rng.randint(2, 30),
                                           rng.choice(DT_UNITS))])
            return np.dtype(rng.choice("<>") + kind + unit)
        if r < 0.35:
            return np.dtype(rng.choice(UNORDERED))
        return np.dtype(rng.choice("<>") + rng.choice(ORDERED))

    def sub_shape(self):
        """Subarray shape: () (no subarray) most of the time."""
        ndim = self.rng.choice([0, 0, 0, 1, 1, 2])
        return tuple(self.rng.randint(1, 3) for _ in range(ndim))

    def field_type(self, depth):
        """The dtype of a field at depth `depth`."""
        rng = self.rng
        if depth < MAX_DEPTH and rng.random() < 0.2:
            self.nested = True
            base = self.record(depth + 1)
        else:
            base = self.scalar()
            if rng.random() < 0.05:  # nested subarray ('<i4', (2,))
                base = np.dtype((base, (rng.randint(1, 3),)))
        shape = self.sub_shape()
        return np.dtype((base, shape)) if shape else base

    def record(self, depth=0):
        """A record whose fields sit at depth `depth`."""
        rng = self.rng
        n = rng.randint(1, 8)
        formats = [self.field_type(depth) for _ in range(n)]
        titled = rng.random() < 0.15
        texts = self.unique_texts(2 * n if titled else n)
        if depth == 0 and rng.random() < LONG_NAME_RATE:
            # Records have at most 8 fields, so only a very long name gets
            # the header over 65535 bytes, where np.save switches to
            # format 2.0 (or stays 3.0).
            texts[0] = "".join(rng.choice(ASCII) for _ in range(
                rng.randint(65600, 70000)))
        names = texts[:n]
        titles = None
        if titled:
            self.titled = True
            # Some fields get a title, others None.
            titles = [t if rng.random() < 0.6 else None for t in texts[n:]]
        layout = rng.random()
        if layout < 0.2:
            # Explicit, increasing, non-overlapping offsets with gaps and
            # trailing padding.
            self.offsets = True
            offsets, pos = [], 0
            for f in formats:
                pos += rng.choice([0, 0, 1, 2, 3, 5])
                offsets.append(pos)
                pos += f.itemsize
            spec = {"names": names, "formats": formats, "offsets": offsets,
                    "itemsize": pos + rng.choice([0, 0, 1, 4])}
            if titles:
                spec["titles"] = titles
            return np.dtype(spec)
        spec = {"names": names, "formats": formats}
        if titles:
            spec["titles"] = titles
        if layout < 0.4:
            self.aligned = True
            return np.dtype(spec, align=True)
        return np.dtype(spec)


def array_shape(rng):
    return tuple(rng.randint(0, 3) for _ in range(rng.randint(0, 3)))


def npy_header(arr):
    """np.save's bytes for arr, cut at the data offset."""
    buf = io.BytesIO()
    with warnings.catch_warnings():
        # np.save warns when it has to use format 2.0 or 3.0.
        warnings.simplefilter("ignore")
        np.save(buf, arr, allow_pickle=False)
    raw = buf.getvalue()
    if raw[6] == 1:
        (hlen,) = struct.unpack("<H", raw[8:10])
        offset = 10 + hlen
    else:
        (hlen,) = struct.unpack("<I", raw[8:12])
        offset = 12 + hlen
    assert len(raw) == offset + arr.nbytes
    return raw[:offset]


def check_with_numpy(hdr, arr):
    """NumPy must read its own header back (guards this script)."""
    fp = io.BytesIO(hdr)
    version = npf.read_magic(fp)
    shape, _, dtype = npf._read_array_header(fp, version,
                                             max_header_size=len(hdr))
    assert shape == arr.shape and fp.tell() == len(hdr)
    assert npf.dtype_to_descr(dtype) == npf.dtype_to_descr(arr.dtype)


def non_ascii(dtype):
    """Whether any name or title in the dtype's tree is non-ASCII."""
    while dtype.subdtype is not None:
        dtype = dtype.subdtype[0]
    if dtype.names is None:
        return False
    for name in dtype.names:
        entry = dtype.fields[name]
        title = entry[2] if len(entry) > 2 else None
        if not name.isascii() or (title is not None
                                  and not title.isascii()):
            return True
        if non_ascii(entry[0]):
            return True
    return False


def generate(rng, count, workdir, stats):
    """Write count headers; return their paths."""
    paths = []
    while len(paths) < count:
        draw = Draw(rng)
        shape = array_shape(rng)
        order = rng.choice("CF")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                dtype = draw.record()
                arr = np.zeros(shape, dtype, order=order)
            hdr = npy_header(arr)
        except (TypeError, ValueError, OverflowError, MemoryError):
            # A combination NumPy cannot build or np.save cannot write.
            stats.counts["rejected"] += 1
            continue
        check_with_numpy(hdr, arr)
        c = stats.counts
        c["nested"] += draw.nested
        c["titled"] += draw.titled
        c["aligned"] += draw.aligned
        c["offsets"] += draw.offsets
        c["non_ascii"] += non_ascii(dtype)
        c["v2"] += hdr[6] == 2
        c["v3"] += hdr[6] == 3
        c["fortran"] += b"'fortran_order': True" in hdr
        # NumPy's default np.load limit (and libnpyio's default
        # NPYIO_LIMIT_HEADER_SIZE): headers longer than this need it raised.
        c["over_10000_chars"] += len(hdr) - (10 if hdr[6] == 1 else 12) \
            > 10000
        path = os.path.join(workdir, "case_%04d.hdr" % len(paths))
        with open(path, "wb") as f:
            f.write(hdr)
        paths.append(path)
    return paths


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tool", required=True,
                    help="program that checks libnpyio against the headers")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    if args.count < 1:
        ap.error("--count must be at least 1")

    os.makedirs(args.workdir, exist_ok=True)
    # Files of an earlier run with a larger --count must not linger.
    for fn in os.listdir(args.workdir):
        if fn.startswith("case_") and fn.endswith(".hdr"):
            os.remove(os.path.join(args.workdir, fn))

    print("random_records: seed %d, count %d, NumPy %s"
          % (args.seed, args.count, np.__version__))
    stats = Stats()
    paths = generate(random.Random(args.seed), args.count, args.workdir,
                     stats)
    print("generated %d headers: %s" % (len(paths), ", ".join(
        "%s %d" % kv for kv in stats.counts.items())))
    sys.stdout.flush()  # before the tool's output, which shares our stdout

    try:
        proc = subprocess.run([args.tool] + paths)
    except OSError as e:
        print("random_records: cannot run %s: %s" % (args.tool, e))
        return 1
    if proc.returncode < 0:
        # Killed by a signal: report it as the shell would (never 0 or 77).
        print("random_records: %s killed by signal %d"
              % (args.tool, -proc.returncode))
        return 128 - proc.returncode
    if proc.returncode == SKIP:
        # 77 would make ctest report a skip; a tool failure is a failure.
        print("random_records: %s exited with 77; reporting failure"
              % args.tool)
        return 1
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
