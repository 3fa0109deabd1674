#!/usr/bin/python3
"""Generate archives of np.savez_compressed with one bit flipped in one
member's deflate data, for test_npz_damage.c (issue 27 item 5):

    /usr/bin/python3 tests/data/gen_npz_damage.py

Each flip is one whose symptom, read naively, is not the damage: the
inflated bytes no longer start with NumPy's magic, the deflate stream
ends before the declared size, the header text is garbled, the data
values change, or zlib refuses the stream. zipfile reading the member whole
checks its CRC-32 (or meets zlib's error): a flip is kept only if that
gives BadZipFile("Bad CRC-32 ...") or zlib.error, which is what libnpyio
must report too. np.load, which parses the header as the bytes come,
may complain of the garbled header first: its verdict is recorded as
well, and it must fail on the damaged member and load the others.

Output (tests/data/npz/damage/, removed and rewritten on every run):

  NAME.npz      the archive (members a, b, c: float64 arrays of 10,
                1000 and 500 elements)
  manifest.tsv  archive, member file name, status libnpyio must give
                (E_CHECKSUM where zipfile says Bad CRC-32, E_FORMAT where
                zlib says the data is corrupt), the symptom, zipfile's
                verdict and np.load's
"""
import io
import os
import shutil
import struct
import zipfile
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "npz", "damage")

# name -> (member, offset into its deflate data, bit, symptom). The
# offsets were found by flipping every bit of b.npy's and c.npy's data
# with zlib 1.2.13 and keeping the first of each symptom.
CASES = {
    "magic_garbled": ("b.npy", 9, 2, "the inflated bytes start "
                      "\\x93NUMX, not \\x93NUMPY"),
    "ends_early": ("b.npy", 151, 64, "the deflate stream ends after 40 "
                   "of the 8128 bytes declared"),
    "header_garbled": ("b.npy", 119, 1, "the header text is garbled "
                       "(NumPy's parser fails on it)"),
    "start_garbled": ("b.npy", 112, 1, "the inflated bytes start "
                      "93 4e 55 4d e4 27, not \\x93NUMPY"),
    "data_changed": ("b.npy", 300, 16, "array values change; the header "
                     "is intact"),
    "block_type": ("b.npy", 0, 2, "zlib: invalid block type in the "
                   "first byte"),
    "literals": ("b.npy", 0, 16, "zlib: invalid literal/lengths set"),
}


def base_archive():
    buf = io.BytesIO()
    np.savez_compressed(buf, a=np.arange(10.0), b=np.arange(1000.0) * 1.5,
                        c=np.linspace(0.0, 1.0, 500))
    return bytearray(buf.getvalue())


def data_start(raw, info):
    at = info.header_offset
    n, e = struct.unpack("<HH", raw[at + 26:at + 30])
    return at + 30 + n + e


def zipfile_verdict(path, member):
    """zipfile reading the member whole: Bad CRC-32 or zlib.error, as
    libnpyio must say (np.load may meet the garbled header first)."""
    with zipfile.ZipFile(path) as z:
        try:
            z.read(member)
        except (zipfile.BadZipFile, zlib.error) as e:
            return "%s: %s" % (type(e).__name__, e)
    raise SystemExit("%s: zipfile reads %s whole" % (path, member))


def numpy_verdict(path, member):
    """What np.load says: the damaged member fails, the others load."""
    verdict = None
    with np.load(path) as z:
        for key in z.files:
            try:
                z[key]
            except Exception as e:  # noqa: BLE001 (any failure is recorded)
                if key + ".npy" != member:
                    raise SystemExit("%s: %s fails too: %r" % (path, key, e))
                verdict = "%s: %s" % (type(e).__name__, e)
    if verdict is None:
        raise SystemExit("%s: np.load reads %s" % (path, member))
    return verdict


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    raw = base_archive()
    with zipfile.ZipFile(io.BytesIO(bytes(raw))) as z:
        infos = {i.filename: i for i in z.infolist()}
    rows = []
    for name, (member, offset, bit, symptom) in CASES.items():
        damaged = bytearray(raw)
        damaged[data_start(raw, infos[member]) + offset] ^= bit
        path = os.path.join(OUT, name + ".npz")
        with open(path, "wb") as f:
            f.write(damaged)
        zip_says = zipfile_verdict(path, member)
        status = "E_CHECKSUM" if "CRC" in zip_says else "E_FORMAT"
        rows.append("\t".join([name + ".npz", member, status, symptom,
                               "zipfile: " + zip_says,
                               "np.load: " + numpy_verdict(path, member)]))
    with open(os.path.join(OUT, "manifest.tsv"), "w") as f:
        f.write("#archive\tmember\tstatus\tsymptom\tzipfile\tnumpy\n")
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
