"""What the NumPy-using data generators share (gen_arrays.py,
gen_headers.py, gen_records.py and gen_npz.py): the host and NumPy they
must run on, the .npy preamble and NumPy's own reading of a header, the
header np.save writes for an array, for a header dict and for a dtype,
shape and order (with the warnings it gives and its rule for
fortran_order), the scalars of a dtype and their byte orders, a case of
header bytes and its files, tab-separated manifests written and read
back, and an output directory emptied of an earlier run's files.

Not a script: the generators import it from their own directory (and
tests/interop/io_roundtrip.py its dtype helpers, from there).
"""
import io
import math
import os
import struct
import sys
import warnings

import numpy as np
from numpy.lib import format as npf

MAGIC = b"\x93NUMPY"

# np.save's warnings when it has to leave format 1.0 (the missing space in
# "beread" is NumPy's own).
VERSION_WARNINGS = {
    2: "Stored array in format 2.0. It can only beread by NumPy >= 1.9",
    3: "Stored array in format 3.0. It can only be read by NumPy >= 1.17",
}


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


def saved_fortran(arr):
    """The fortran_order np.save writes for arr: True only for an array
    that is F-contiguous but not C-contiguous
    (format.header_data_from_array_1_0)."""
    return bool(arr.flags.f_contiguous and not arr.flags.c_contiguous)


def quiet_write(write, major):
    """Run write() (an np.save-like call that picks the format version
    itself) and check its version warning: np.save warns exactly when it
    falls back from format 1.0, so the warning must match the version
    intended (major), and nothing else may warn."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        write()
    got = [str(w.message) for w in caught]
    want = [VERSION_WARNINGS[major]] if major in VERSION_WARNINGS else []
    assert got == want, (got, want)


def header_from_save(arr, major=1, version=None):
    """Header bytes np.save writes for arr, in format major: the stream cut
    at the data offset, the bytes after it checked to be the data (object
    data is a pickle of any length: not checked).  An explicit version
    (major, minor) goes through write_array instead, as np.save has no
    version argument; it never warns."""
    buf = io.BytesIO()
    if version is None:
        quiet_write(lambda: np.save(buf, arr), major)
    else:
        major = version[0]
        quiet_write(lambda: npf.write_array(buf, arr, version=version), 1)
    raw = buf.getvalue()
    got_major, _, offset = preamble(raw)
    assert got_major == major, (got_major, major)
    if not arr.dtype.hasobject:
        assert len(raw) - offset == arr.nbytes, (len(raw), offset)
    return raw[:offset]


def header_from_dict(descr, fortran, shape, major=1, version=None):
    """Header bytes from _write_array_header, the function np.save calls,
    without any array (for shapes whose data could not be allocated or,
    like 64 dimensions, cannot exist in NumPy 1.24 at all), in format
    major; an explicit version (major, minor) is written as it is."""
    buf = io.BytesIO()
    d = {"descr": descr, "fortran_order": fortran, "shape": tuple(shape)}
    if version is None:
        quiet_write(lambda: npf._write_array_header(buf, d, None), major)
    else:
        major = version[0]
        npf._write_array_header(buf, d, version)
    data = buf.getvalue()
    assert preamble(data)[0] == major
    return data


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


def leaves(dtype, offset=0):
    """Yield (offset, scalar dtype) for every scalar of one element, nested
    records and subarrays expanded, in field order."""
    if dtype.names is not None:
        for name in dtype.names:
            fdt, foff = dtype.fields[name][:2]
            yield from leaves(fdt, offset + foff)
    elif dtype.subdtype is not None:
        base, sub = dtype.subdtype
        for i in range(math.prod(sub)):
            yield from leaves(base, offset + i * base.itemsize)
    else:
        yield offset, dtype


def leaf_view(arr, offset, leaf):
    """A view of arr that shows only the scalar at `offset` of each element
    (a one-field record of the same itemsize; same-itemsize views work for
    any strides, so this also works on Fortran-order arrays)."""
    if arr.dtype.names is None:
        assert offset == 0 and leaf == arr.dtype
        return arr
    one = np.dtype({"names": ["v"], "formats": [leaf], "offsets": [offset],
                    "itemsize": arr.dtype.itemsize})
    return arr.view(one)["v"]


def masked_dtype(dtype, order):
    """dtype with the same layout in which every scalar whose byte order is
    not `order` is replaced by plain void of its size (object scalars too,
    so byteswap never touches a pointer), so that byteswap() on it reverses
    exactly the `order` scalars.  Names become f0, f1, ... (only the layout
    matters, and '' is not a dict-form name)."""
    if dtype.names is not None:
        return np.dtype({
            "names": ["f%d" % i for i in range(len(dtype.names))],
            "formats": [masked_dtype(dtype.fields[n][0], order)
                        for n in dtype.names],
            "offsets": [dtype.fields[n][1] for n in dtype.names],
            "itemsize": dtype.itemsize})
    if dtype.subdtype is not None:
        base, sub = dtype.subdtype
        return np.dtype((masked_dtype(base, order), sub))
    # dtype.str gives '|' to bool, 1-byte ints, S, V and O.
    if dtype.kind != "O" and dtype.str[0] == order:
        return dtype
    return np.dtype("V%d" % dtype.itemsize)


class HeaderCase:
    """Header bytes (data) of one case, how they were made (origin) and
    what NumPy must read from them (expect); see each generator."""

    def __init__(self, name, data, origin, expect):
        self.name = name
        self.data = data
        self.origin = origin
        self.expect = expect


def write_case_files(directory, case, canon, saved):
    """Write the case's header bytes as NAME.hdr and, where np.save writes
    other bytes (canon) for what NumPy reads from them, those as
    NAME.canon.hdr; return the name of the file with np.save's bytes.  A
    header np.save wrote (saved) must be canonical by definition."""
    with open(os.path.join(directory, case.name + ".hdr"), "wb") as f:
        f.write(case.data)
    if saved:
        assert canon == case.data, case.name
    if canon == case.data:
        return case.name + ".hdr"
    canon_file = case.name + ".canon.hdr"
    with open(os.path.join(directory, canon_file), "wb") as f:
        f.write(canon)
    return canon_file


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
