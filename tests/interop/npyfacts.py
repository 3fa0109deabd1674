"""What `npyio info --json` must say of an .npy file's header, from NumPy:
the nine keys of the tool's contract (shared by cli_check.py and
npz_cli_check.py)."""
import numpy as np
import numpy.lib.format as npf


def npy_facts(f):
    """The nine keys for the .npy file open as f (from its start), and the
    dtype NumPy reads."""
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
            "count": count, "nbytes": count * dtype.itemsize}, dtype
