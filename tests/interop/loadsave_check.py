#!/usr/bin/env python3
"""Interop test: what npyio_load_with_header hands back, saved with npyio_save_with_header, is the
array NumPy loads; and npyio_load / npyio_save round-trip.

    loadsave_check.py --tool PATH --data DIR --workdir DIR

For every array of the corpus (DIR/arrays/manifest.tsv; object arrays
left out) and every flag combination (0, native byte order, C order,
both), io_tool.c loads it with npyio_load_with_header and saves the header and data it
got back with npyio_save_with_header. The result must be, header byte for byte, what
np.save writes of the array NumPy gets with the same conversion
(astype to native byte order, C-order copy), and NumPy must load it with
that dtype, shape and order, and the data bytes must be io_tool's own
`read` of the same file with the same flags (checked against NumPy by
io_roundtrip.py). Then io_tool's `arrays` command: npyio_load must
give NumPy's dtype.str (the descr list for records) and shape, and
npyio_save of those must write np.save's file of the native C-order
array, header byte for byte. Prints one line per failure, then
`N passed, M failed`; exit 0 only if all passed, 77 without NumPy.
"""

import argparse
import ast
import os
import subprocess
import sys

from tally import Tally

try:
    import numpy as np
    from numpy.lib import format as npf
except ImportError:
    print("loadsave_check.py: NumPy is not available; skipping")
    sys.exit(77)


def converted(array, flags):
    if flags & 1:
        array = array.astype(array.dtype.newbyteorder("="))
    if flags & 2:
        array = array.astype(array.dtype, order="C")
    return array


def np_save_bytes(array, path):
    np.save(path, array)
    with open(path, "rb") as f:
        return f.read()


def data_offset(data):
    major = data[6]
    if major == 1:
        return 10 + int.from_bytes(data[8:10], "little")
    return 12 + int.from_bytes(data[8:12], "little")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    arrays = os.path.join(args.data, "arrays")
    tally = Tally()
    check = tally.check

    with open(os.path.join(arrays, "manifest.tsv")) as f:
        rows = [line.rstrip("\n").split("\t") for line in f
                if not line.startswith("#")]
    for row in rows:
        name, file, has_object = row[0], row[1], row[-1]
        if has_object == "1":
            continue
        src = os.path.join(arrays, file)
        array = np.load(src)
        for flags in (0, 1, 2, 3):
            out = os.path.join(args.workdir, "%s.%d.npy" % (name, flags))
            raw = os.path.join(args.workdir, "%s.%d.bin" % (name, flags))
            r1 = subprocess.run([args.tool, "loadsave", src, str(flags), out],
                                capture_output=True, text=True)
            r2 = subprocess.run([args.tool, "read", src, str(flags), raw],
                                capture_output=True, text=True)
            if not check(r1.returncode == 0 and r2.returncode == 0,
                         "%s flags %d: io_tool: %s%s" % (name, flags,
                                                         r1.stderr, r2.stderr)):
                continue
            want = converted(array, flags)
            # Elements of 0 bytes: every layout is the same (no) bytes,
            # and NumPy's own save is no fixed point there (a loaded array
            # is C- and F-contiguous, np.asfortranarray's only F), so
            # either order is np.save's.
            degenerate = want.dtype.itemsize == 0
            candidates = [want] + ([np.zeros(want.shape, want.dtype, order="F")]
                                   if degenerate
                                   else [])
            expected = [np_save_bytes(c, out + ".expected%d.npy" % i)
                        for i, c in enumerate(candidates)]
            with open(out, "rb") as f:
                got = f.read()
            with open(raw, "rb") as f:
                data = f.read()
            off = data_offset(expected[0])
            check(any(got[:off] == e[:off] for e in expected),
                  "%s flags %d: header %r, np.save's %r" %
                  (name, flags, got[:off], expected[0][:off]))
            check(got[off:] == data, "%s flags %d: data differs from what "
                  "io_tool read" % (name, flags))
            back = np.load(out)
            check(back.dtype == want.dtype and back.shape == want.shape and
                  (degenerate or
                   back.flags.f_contiguous == want.flags.f_contiguous),
                  "%s flags %d: NumPy loads %s %s" %
                  (name, flags, back.dtype, back.shape))
        # npyio_load and npyio_save.
        out = os.path.join(args.workdir, "%s.array.npy" % name)
        r = subprocess.run([args.tool, "arrays", src, out],
                           capture_output=True, text=True)
        if not check(r.returncode == 0, "%s: io_tool arrays: %s" %
                     (name, r.stderr)):
            continue
        lines = r.stdout.split("\n")
        want = converted(array, 3)
        if want.dtype.names is not None:
            type_ok = ast.literal_eval(lines[0]) == npf.dtype_to_descr(want.dtype)
        else:
            type_ok = lines[0] == want.dtype.str
        check(type_ok, "%s: npyio_load type %r, NumPy %r" %
              (name, lines[0], want.dtype.str))
        shape = tuple(int(x) for x in lines[1].split())
        check(shape == want.shape, "%s: shape %r, NumPy %r" %
              (name, shape, want.shape))
        expected = np_save_bytes(want, out + ".expected.npy")
        with open(out, "rb") as f:
            got = f.read()
        off = data_offset(expected)
        check(got[:off] == expected[:off],
              "%s: npyio_save header %r, np.save's %r" %
              (name, got[:off], expected[:off]))
    return tally.summary()


if __name__ == "__main__":
    sys.exit(main())
