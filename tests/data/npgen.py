"""What the NumPy-using data generators share (gen_arrays.py,
gen_headers.py, gen_records.py and gen_npz.py): the host and NumPy they
must run on, the .npy preamble and NumPy's own reading of a header, the
header np.save writes for a dtype, shape and order, a case of header
bytes, tab-separated manifests written and read back, and an output
directory emptied of an earlier run's files.

Not a script: the generators import it from their own directory.
"""
import io
import os
import struct
import sys
import warnings

import numpy as np
from numpy.lib import format as npf

MAGIC = b"\x93NUMPY"


def check_host(script, numpy_version=None):
    """Exit unless long double is x87 80-bit extended in 16 bytes on a
    little-endian host (x86_64), as on the reference host: the corpora hold
    long double bytes, which are only the same on every run there.  With
    numpy_version ("1.24."), also unless NumPy's version starts with it."""
    info = np.finfo(np.longdouble)
    if (np.dtype(np.longdouble).itemsize != 16 or info.nmant != 63
            or sys.byteorder != "little"):
        sys.exit("%s: needs x86_64 (little-endian, 80-bit long "
                 "double in 16 bytes) to reproduce the reference bytes"
                 % script)
    if numpy_version is not None and not np.__version__.startswith(
            numpy_version):
        sys.exit("%s: needs NumPy %s (found %s)"
                 % (script, numpy_version.rstrip("."), np.__version__))


def preamble(buf):
    """Return (major, hlen, data_offset) from the first bytes of a .npy."""
    assert buf[:6] == MAGIC, buf[:10]
    major, minor = buf[6], buf[7]
    assert minor == 0 and major in (1, 2, 3)
    if major == 1:
        (hlen,) = struct.unpack("<H", buf[8:10])
        return major, hlen, 10 + hlen
    (hlen,) = struct.unpack("<I", buf[8:12])
    return major, hlen, 12 + hlen


def numpy_read(hdr, max_header_size=None):
    """Parse header bytes as np.load does (read_magic + _read_array_header).

    Returns (major, shape, fortran_order, dtype) and insists that NumPy
    read them without a warning and consumed every byte (so data_offset ==
    len(hdr)).  max_header_size, if given, replaces np.load's limit."""
    fp = io.BytesIO(hdr)
    version = npf.read_magic(fp)
    limit = {} if max_header_size is None else {
        "max_header_size": max_header_size}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 1.24 must read these silently
        shape, fortran, dtype = npf._read_array_header(fp, version, **limit)
    assert fp.tell() == len(hdr), "NumPy did not consume the whole header"
    return version[0], shape, fortran, dtype


def canonical_header(dtype, shape, fortran):
    """What np.save (version=None) writes for an array of this dtype, shape
    and order.  np.save writes fortran_order True only for an array that is
    F-contiguous and not C-contiguous; an F-ordered array is also
    C-contiguous when it is empty or has at most one dimension above 1."""
    if sum(1 for d in shape if d > 1) <= 1 or 0 in shape:
        fortran = False
    buf = io.BytesIO()
    d = {"descr": npf.dtype_to_descr(dtype), "fortran_order": fortran,
         "shape": tuple(shape)}
    with warnings.catch_warnings():
        # A v2/v3 header warns; the callers check versions themselves.
        warnings.simplefilter("ignore")
        npf._write_array_header(buf, d, None)
    return buf.getvalue()


class HeaderCase:
    """Header bytes (data) of one case, how they were made (origin) and
    what NumPy must read from them (expect); see each generator."""

    def __init__(self, name, data, origin, expect):
        self.name = name
        self.data = data
        self.origin = origin
        self.expect = expect


def write_tsv(path, columns, rows, encoding="utf-8"):
    """A manifest: '#' and the column names, then a line a row, fields
    tab-separated, '\\n' terminated."""
    with open(path, "w", encoding=encoding, newline="\n") as f:
        f.write("#" + "\t".join(columns) + "\n")
        for row in rows:
            f.write("\t".join(str(v) for v in row) + "\n")


def read_tsv(path, columns, encoding="utf-8"):
    """A manifest of write_tsv, read back as one dict a row; its column
    line and the width of every row are checked."""
    with open(path, encoding=encoding, newline="\n") as f:
        lines = f.read().split("\n")
    assert lines[0] == "#" + "\t".join(columns), lines[0]
    assert lines[-1] == ""
    rows = [line.split("\t") for line in lines[1:-1]]
    for r in rows:
        assert len(r) == len(columns), r
    return [dict(zip(columns, r)) for r in rows]


def clean_dir(path, endings):
    """Make the directory if need be and remove its files whose names end
    with one of endings (earlier output), so renamed cases do not
    linger."""
    os.makedirs(path, exist_ok=True)
    for fn in os.listdir(path):
        if fn.endswith(tuple(endings)):
            os.remove(os.path.join(path, fn))
