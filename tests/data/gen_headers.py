#!/usr/bin/python3
"""Generate the .npy header test corpus for libnpyio's C unit tests.

Run with a Python that has NumPy (the reference build is NumPy 1.24.2 on
x86_64 Linux):

    /usr/bin/python3 tests/data/gen_headers.py

Output (under tests/data/headers/, next to this script):

  valid/<name>.hdr        the first data_offset bytes of a .npy file
                          (magic, version, length field, dict text, padding)
  valid/<name>.canon.hdr  what np.save would write for the same array, for
                          the cases NumPy did not write with version=None
  valid/manifest.tsv      one row per case: what NumPy reads from the header
  dtype_strings.tsv       which type strings np.dtype() accepts, and as what
  comma_strings.tsv       comma-separated type strings and leading shapes
                          ('i4,f8', '(2,3)f4', '3S'): accepted or not, and
                          the dtype np.dtype() makes of them, here and as
                          NumPy's rules give them on a big-endian host
  sizes.tsv               dtypes and shapes at the edge of NumPy's size
                          rule: whether np.load of such a header works

The C tests read these files without NumPy, so the formats are fixed (see the
column lists below).  The output is deterministic: nothing depends on time,
randomness or dict/set ordering, and every file is rewritten on each run.
After writing, the script re-reads everything and checks it against NumPy.
"""

import ast
import contextlib
import io
import math
import os
import struct
import sys
import warnings

import numpy as np
import numpy.core._internal as internal
from numpy.lib import format as npf

import npgen
from npgen import MAGIC, canonical_header, numpy_read, preamble

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "headers")
VALID_DIR = os.path.join(OUT_DIR, "valid")
MANIFEST = os.path.join(VALID_DIR, "manifest.tsv")
DTYPE_TSV = os.path.join(OUT_DIR, "dtype_strings.tsv")
COMMA_TSV = os.path.join(OUT_DIR, "comma_strings.tsv")
SIZES_TSV = os.path.join(OUT_DIR, "sizes.tsv")

MANIFEST_COLUMNS = [
    "name", "file", "version", "hlen", "data_offset", "descr", "kind",
    "itemsize", "alignment", "byteorder", "ndim", "shape", "fortran",
    "count", "nbytes", "dt_unit", "dt_mult", "canonical",
]
DTYPE_COLUMNS = [
    "input", "accepted", "str", "kind", "itemsize", "alignment",
    "host_dependent",
]
COMMA_COLUMNS = [
    "input_hex", "accepted", "descr", "itemsize", "inconsistent",
    "be_accepted", "be_descr", "be_itemsize", "be_inconsistent",
    "host_dependent", "shown",
]
SIZES_COLUMNS = ["descr", "shape", "loads", "needle", "numpy_error"]

# Datetime units in the order NumPy documents them.
DT_UNITS = ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs",
            "as"]
# File names must stay distinct on case-insensitive file systems, and the
# units 'M' (month) and 'm' (minute) differ only by case, so spell them out.
DT_UNIT_NAMES = {"Y": "year", "M": "month", "W": "week", "D": "day",
                 "h": "hour", "m": "minute"}


class Case(npgen.HeaderCase):
    """One valid/ header.

    origin is 'save' (bytes written by NumPy with version=None, so the file is
    its own canonical form), 'forced' (NumPy with an explicit version) or
    'legacy' (hand-crafted bytes that NumPy 1.24 still loads).  expect is
    (dtype.str, shape, fortran_order) as we intend NumPy to read it; the
    check against NumPy's actual reading catches mistakes in this script.
    """


# ---------------------------------------------------------------------------
# Low-level helpers
# ---------------------------------------------------------------------------

def frame(body, major):
    """Wrap raw header text bytes (dict + padding + newline, whatever the
    caller wants) in magic, version and a length field that fits exactly."""
    if major == 1:
        length = struct.pack("<H", len(body))
    else:
        length = struct.pack("<I", len(body))
    return MAGIC + bytes([major, 0]) + length + body


# ---------------------------------------------------------------------------
# Cases written by NumPy
# ---------------------------------------------------------------------------

def save_case(cases, name, arr, version=None):
    """Add a case whose bytes come from np.save (or write_array)."""
    origin = "save" if version is None else "forced"
    expect = (arr.dtype.str, arr.shape, npgen.saved_fortran(arr))
    data = npgen.header_from_save(arr, version=version)
    cases.append(Case(name, data, origin, expect))


def dict_case(cases, name, descr, fortran, shape, version=None):
    """Add a case written by _write_array_header without any array."""
    origin = "save" if version is None else "forced"
    expect = (np.dtype(descr).str, tuple(shape), fortran)
    data = npgen.header_from_dict(descr, fortran, shape, version=version)
    cases.append(Case(name, data, origin, expect))


def numpy_written_cases():
    cases = []

    # Every scalar kind, little- and big-endian where '>' means something.
    # Types of itemsize 1 (and S, V, O) have no byte order: NumPy writes '|'.
    for code in ["b1", "i1", "u1"]:
        save_case(cases, "save_" + code, np.zeros(3, code))
    multi_byte = ["i2", "i4", "i8", "u2", "u4", "u8", "f2", "f4", "f8",
                  "c8", "c16"]
    for code in multi_byte:
        save_case(cases, "save_%s_le" % code, np.zeros(3, "<" + code))
        save_case(cases, "save_%s_be" % code, np.zeros(3, ">" + code))
    # longdouble / clongdouble: '<f16' and '<c32' on x86_64 Linux.  Use the
    # type chars so the script still runs (with other names) elsewhere.
    for char, label in [("g", "longdouble"), ("G", "clongdouble")]:
        save_case(cases, "save_%s_le" % label, np.zeros(3, "<" + char))
        save_case(cases, "save_%s_be" % label, np.zeros(3, ">" + char))
    save_case(cases, "save_s5", np.zeros(3, "S5"))
    save_case(cases, "save_s1", np.zeros(3, "S1"))
    save_case(cases, "save_u3_le", np.zeros(3, "<U3"))
    save_case(cases, "save_u3_be", np.zeros(3, ">U3"))
    save_case(cases, "save_v4", np.zeros(3, "V4"))
    # V0 has no data at all whatever the shape; np.zeros keeps it V0
    # (unlike S0, which np.zeros turns into S1).
    save_case(cases, "save_v0", np.zeros(3, "V0"))
    save_case(cases, "save_v0_empty", np.zeros(0, "V0"))
    # Object arrays: np.save writes a normal header with descr '|O' and then
    # a pickle; only the header is kept.
    save_case(cases, "save_object", np.array([1, "a", None], dtype=object))

    # Datetimes.
    save_case(cases, "save_datetime_generic", np.zeros(3, "M8"))
    save_case(cases, "save_timedelta_generic", np.zeros(3, "m8"))
    save_case(cases, "save_datetime_ns_le", np.zeros(3, "<M8[ns]"))
    save_case(cases, "save_datetime_ns_be", np.zeros(3, ">M8[ns]"))
    save_case(cases, "save_datetime_day_be", np.zeros(3, ">M8[D]"))
    save_case(cases, "save_timedelta_25s_le", np.zeros(3, "<m8[25s]"))
    save_case(cases, "save_timedelta_25s_be", np.zeros(3, ">m8[25s]"))
    save_case(cases, "save_timedelta_3h", np.zeros(3, "m8[3h]"))
    save_case(cases, "save_datetime_10us", np.zeros(3, "M8[10us]"))
    for unit in DT_UNITS:
        label = DT_UNIT_NAMES.get(unit, unit)
        save_case(cases, "save_datetime_unit_" + label,
                  np.zeros(2, "M8[%s]" % unit))

    # Memory order.  Only arrays that are F- but not C-contiguous get
    # fortran_order True, so use genuine multi-dimensional F layouts.
    save_case(cases, "save_c_2d", np.zeros((3, 4), "<f8"))
    save_case(cases, "save_f_2d", np.asfortranarray(np.zeros((3, 4), "<f8")))
    save_case(cases, "save_c_3d", np.zeros((2, 3, 4), "<i4"))
    save_case(cases, "save_f_3d",
              np.asfortranarray(np.zeros((2, 3, 4), "<i4")))
    save_case(cases, "save_f_2d_be",
              np.asfortranarray(np.zeros((5, 2), ">i2")))
    # a.T of a C array is F-contiguous: written as fortran, bytes as in memory.
    save_case(cases, "save_transposed", np.zeros((3, 2), "<u4").T)
    # Growth padding counts the digits of the last axis for fortran order
    # (the first for C order): make the two differ.
    save_case(cases, "save_f_wide_last",
              np.asfortranarray(np.zeros((2, 123456), "|u1")))

    # 0-d arrays: shape (), no growth padding.
    save_case(cases, "save_0d_i2_be", np.array(7, ">i2"))
    save_case(cases, "save_0d_f8", np.array(1.5, "<f8"))
    save_case(cases, "save_0d_s2", np.array(b"ab", "S2"))
    save_case(cases, "save_0d_datetime", np.array(0, "<M8[s]"))

    # Empty arrays.  A size-0 array is both C- and F-contiguous, so np.save
    # writes fortran_order False even for asfortranarray; the explicit
    # fortran=True variant needs _write_array_header.
    save_case(cases, "save_empty_0", np.zeros((0,), "<f8"))
    save_case(cases, "save_empty_3_0", np.zeros((3, 0), "<i4"))
    save_case(cases, "save_empty_0_5_f",
              np.asfortranarray(np.zeros((0, 5), "<f8")))
    dict_case(cases, "hdr_empty_0_5_fortran", "<f8", True, (0, 5))

    # Shapes too big to allocate, written by the np.save code path.
    dict_case(cases, "hdr_big_12345678901", "<f8", False, (12345678901,))
    dict_case(cases, "hdr_big_2p40_2p20", "|u1", False, (2**40, 2**20))
    dict_case(cases, "hdr_big_2p40_2p20_fortran", "<u2", True,
              (2**40, 2**20))
    dict_case(cases, "hdr_big_int64_max", "|u1", False,
              (9223372036854775807,))

    # Many dimensions: NumPy 1.24 arrays have at most 32; 64 is header-only.
    save_case(cases, "save_ndim10", np.zeros((1, 2) * 5, "<f4"))
    save_case(cases, "save_ndim32", np.ones((1,) * 32, "<f8"))
    save_case(cases, "save_ndim32_f",
              np.asfortranarray(np.zeros((2,) + (1,) * 30 + (3,), "|i1")))
    dict_case(cases, "hdr_ndim64", "<f8", False, (1,) * 64)
    # Mixed sizes whose product still fits in int64 (2**32 elements); a
    # product beyond int64 is an error for libnpyio, not a valid header.
    dict_case(cases, "hdr_ndim64_mixed", "<i4", False,
              tuple(1 + (i % 2) for i in range(64)))

    # Forced versions (write_array(version=...)).  NumPy itself would have
    # written v1.0, so these get a .canon.hdr file.
    save_case(cases, "forced_v2_c_2d", np.zeros((3, 4), "<f8"), (2, 0))
    save_case(cases, "forced_v3_c_2d", np.zeros((3, 4), "<f8"), (3, 0))
    save_case(cases, "forced_v2_0d", np.array(3, ">u2"), (2, 0))
    save_case(cases, "forced_v3_f_3d",
              np.asfortranarray(np.zeros((2, 3, 4), "<c8")), (3, 0))
    save_case(cases, "forced_v2_datetime", np.zeros(4, "<m8[25s]"), (2, 0))
    save_case(cases, "forced_v1_u3", np.zeros(2, "<U3"), (1, 0))
    dict_case(cases, "forced_v2_big", "|u1", False,
              (9223372036854775807,), (2, 0))
    return cases


# ---------------------------------------------------------------------------
# Legacy / lenient headers, crafted by hand
# ---------------------------------------------------------------------------

def dict_text(descr="'<f8'", fortran="False", shape="(3,)"):
    """The dict text in NumPy's own style, values given as source text."""
    return "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (
        descr, fortran, shape)


def pad_align(text, major, align=64, newline="\n"):
    """Pad with spaces so that prefix + text + pad + newline is a multiple
    of align (pad in 1..align, never 0, as NumPy's writers do).  No growth
    padding: this is the layout of NumPy 1.14..1.23 with align=64."""
    prefix = 10 if major == 1 else 12
    used = prefix + len(text) + len(newline)
    pad = align - used % align
    return (text + " " * pad + newline).encode("latin-1")


def pad_pre114(text, major):
    """Padding as NumPy < 1.14 wrote it: 16-byte alignment computed with a
    2-byte length field even for v2.0, so v2.0 data ended up misaligned
    (numpy issue #8085; 64 bytes since numpy PR #9025, 1.14)."""
    used = 8 + 2 + len(text) + 1
    pad = 16 - used % 16
    return (text + " " * pad + "\n").encode("latin-1")


def legacy_cases():
    cases = []

    def add(name, body, expect, major=1):
        # expect: (dtype.str NumPy should produce, shape, fortran)
        cases.append(Case(name, frame(body, major), "legacy", expect))

    f8_3 = ("<f8", (3,), False)
    f8_34 = ("<f8", (3, 4), False)

    # Layouts of older writers.
    add("legacy_pad16_v1", pad_pre114(dict_text(shape="(3, 4)"), 1), f8_34)
    add("legacy_pad16_v2", pad_pre114(dict_text(shape="(3, 4)"), 2), f8_34,
        major=2)
    add("legacy_nogrowth_pad64_v1",
        pad_align(dict_text(shape="(3, 4)"), 1), f8_34)
    add("legacy_nogrowth_pad64_fortran",
        pad_align(dict_text(fortran="True", shape="(3, 4)"), 1),
        ("<f8", (3, 4), True))
    add("legacy_v2_tiny", pad_align(dict_text(), 2), f8_3, major=2)
    add("legacy_v3_ascii", pad_align(dict_text(), 3), f8_3, major=3)
    add("legacy_v3_ascii_unpadded", (dict_text() + "\n").encode(), f8_3,
        major=3)

    # Terminator and padding variations (the reader checks neither).
    add("legacy_no_newline", pad_align(dict_text(), 1, newline=""), f8_3)
    add("legacy_no_padding", (dict_text() + "\n").encode(), f8_3)
    add("legacy_bare_dict", dict_text().encode(), f8_3)
    add("legacy_crlf_then_pad",
        pad_align(dict_text() + "\r\n", 1), f8_3)
    add("legacy_pad_then_crlf", pad_align(dict_text(), 1, newline="\r\n"),
        f8_3)
    add("legacy_no_trailing_comma",
        pad_align("{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}",
                  1), f8_3)

    # Key order and duplicate keys (a dict literal: the last value wins).
    add("legacy_keys_shape_first",
        pad_align("{'shape': (3,), 'fortran_order': False, 'descr': '<f8'}",
                  1), f8_3)
    add("legacy_keys_fortran_first",
        pad_align("{'fortran_order': False, 'descr': '<f8', 'shape': (3,), }",
                  1), f8_3)
    add("legacy_dup_shape",
        pad_align("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), "
                  "'shape': (2,), }", 1), ("<f8", (2,), False))
    add("legacy_dup_descr",
        pad_align("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 2), "
                  "'descr': '>u2', 'fortran_order': False, }", 1),
        (">u2", (2, 2), False))

    # Whitespace between tokens inside the dict (spaces, tabs, newlines:
    # inside brackets Python ignores indentation).
    add("legacy_spaces",
        pad_align("{ 'descr' : '<f8' , 'fortran_order' : False , "
                  "'shape' : ( 3 , 4 ) , }", 1), f8_34)
    add("legacy_tabs",
        pad_align("{'descr':\t'<f8',\t'fortran_order':\tFalse,\t"
                  "'shape':\t(3,\t4),\t}", 1), f8_34)
    add("legacy_newlines",
        pad_align("{\n  'descr': '<f8',\n  'fortran_order': False,\n"
                  "  'shape': (3,\n 4),\n}", 1), f8_34)
    add("legacy_no_spaces",
        pad_align("{'descr':'<f8','fortran_order':False,'shape':(3,4)}", 1),
        f8_34)
    add("legacy_mixed_ws",
        pad_align("{\t'descr'  :\n'<f8' ,\n\n\t 'fortran_order':False ,"
                  "'shape':(\t3 ,\n4\t)\n}", 1), f8_34)

    # Quoting.
    add("legacy_double_quotes",
        pad_align('{"descr": "<f8", "fortran_order": False, '
                  '"shape": (3,), }', 1), f8_3)
    add("legacy_mixed_quotes",
        pad_align("{\"descr\": '<f8', 'fortran_order': False, "
                  "\"shape\": (3,), }", 1), f8_3)

    # descr spellings that np.dtype() accepts.
    for label, descr, result in [
            ("f8", "'f8'", "<f8"), ("eq_f8", "'=f8'", "<f8"),
            ("d", "'d'", "<f8"), ("float64", "'float64'", "<f8"),
            ("lt_u1", "'<u1'", "|u1"), ("gt_b1", "'>b1'", "|b1"),
            ("bar_i1", "'|i1'", "|i1"), ("lt_i1", "'<i1'", "|i1"),
            ("i4", "'i4'", "<i4"), ("eq_c8", "'=c8'", "<c8"),
            ("m8_s", "'m8[s]'", "<m8[s]"), ("dq_gt_i2", '">i2"', ">i2")]:
        add("legacy_descr_" + label,
            pad_align(dict_text(descr=descr), 1), (result, (3,), False))

    # Python 2 long literals: '3L' is filtered out for v1.0 and v2.0.
    add("legacy_long_suffix_v1",
        pad_align(dict_text(shape="(3L, 4L)"), 1), f8_34)
    add("legacy_long_suffix_v2",
        pad_align(dict_text(shape="(3L, 4L)"), 2), f8_34, major=2)
    add("legacy_long_suffix_1d",
        pad_pre114(dict_text(descr="'<i8'", shape="(5L,)"), 1),
        ("<i8", (5,), False))

    # Shape and fortran_order spellings.
    add("legacy_fortran_1d",
        pad_align(dict_text(fortran="True", shape="(5,)"), 1),
        ("<f8", (5,), True))
    add("legacy_fortran_0d",
        pad_align(dict_text(fortran="True", shape="()"), 1),
        ("<f8", (), True))
    add("legacy_shape_spaced_trailing_comma",
        pad_align(dict_text(shape="( 3 , 4 , )"), 1), f8_34)
    add("legacy_shape_empty_spaced",
        pad_align(dict_text(shape="( )"), 1), ("<f8", (), False))
    add("legacy_shape_neg_zero",
        pad_align(dict_text(shape="(-0, 3)"), 1), ("<f8", (0, 3), False))
    add("legacy_shape_plus",
        pad_align(dict_text(shape="(+2, 3)"), 1), ("<f8", (2, 3), False))
    add("legacy_shape_1d_spaced",
        pad_align(dict_text(shape="(3 ,)"), 1), f8_3)
    return cases


# ---------------------------------------------------------------------------
# Manifest
# ---------------------------------------------------------------------------

def manifest_row(case, canonical_file):
    """Describe a case from NumPy's own reading of its bytes."""
    major, hlen, offset = preamble(case.data)
    assert offset == len(case.data)
    rmajor, shape, fortran, dtype = numpy_read(case.data)
    assert rmajor == major
    got = (dtype.str, tuple(shape), fortran)
    assert got == case.expect, (case.name, got, case.expect)
    assert dtype.names is None and dtype.subdtype is None, case.name
    count = math.prod(shape)  # exact Python int; prod(()) == 1
    if dtype.kind in "Mm":
        unit, mult = np.datetime_data(dtype)
    else:
        unit, mult = "-", "-"
    return [
        case.name, case.name + ".hdr", major, hlen, offset, dtype.str,
        dtype.kind, dtype.itemsize, dtype.alignment, dtype.str[0],
        len(shape), ",".join(str(n) for n in shape), int(fortran), count,
        count * dtype.itemsize, unit, mult, canonical_file,
    ]


def write_valid(cases):
    """Write the .hdr files, canonical companions and manifest.tsv."""
    npgen.clean_dir(VALID_DIR, (".hdr", "manifest.tsv"))

    names = [c.name for c in cases]
    assert len({n.lower() for n in names}) == len(names), "duplicate name"

    rows = []
    n_canon = 0
    for case in cases:
        _, shape, fortran, dtype = numpy_read(case.data)
        canon = canonical_header(dtype, shape, fortran)
        canon_file = npgen.write_case_files(VALID_DIR, case, canon,
                                            case.name.startswith("save_"))
        n_canon += canon != case.data
        rows.append(manifest_row(case, canon_file))

    npgen.write_tsv(MANIFEST, MANIFEST_COLUMNS, rows, encoding="ascii")
    return n_canon


# ---------------------------------------------------------------------------
# dtype string probe
# ---------------------------------------------------------------------------

PREFIXES = ["", "<", ">", "=", "|"]
TYPE_CHARS = "?bBhHiIlLqQpPefdgFDGSUVOMmca"
BAD_CHARS = "xtuzj"
SIZED_KINDS = ["b", "i", "u", "f", "c", "S", "a", "U", "V", "O", "M", "m"]
SIZES = [0, 1, 2, 3, 4, 5, 8, 10, 12, 16, 24, 32, 64]
DT_BASES = ["M8", "m8", "M", "m", "datetime64", "timedelta64"]
DT_SUFFIXES = ([""] + ["[%s]" % u for u in DT_UNITS]
               + ["[25s]", "[3h]", "[1s]", "[2D]", "[10us]", "[generic]"]
               + ["[xx]", "[]", "[0s]", "[-1s]", "[s", "[2147483648s]"])
EXTRA_INVALID = ["", " ", "<", "f8 ", " f8", "F8", "i3", "<x8", "<f12",
                 "S-1", "S99999999999999999999", "U536870912", "U536870911",
                 "V2147483648", "S2147483647"]

# Spellings whose meaning follows C types of the host: C long (l, L, long,
# int_, int, uint: 4 bytes on Windows), intptr/pointer (p, P, intp, int0,
# object: 4 bytes on 32-bit) and long double (g, G: 8, 12 or 16 bytes, and
# whether 'f12'/'f16'/'c24'/'c32'/'float128'/'complex256' exist at all).
HOST_CHARS = set("lLpPgGO")
HOST_NAMES = {
    "long", "ulong", "int", "int_", "uint", "intp", "uintp", "int0",
    "uint0", "longdouble", "longfloat", "clongdouble", "clongfloat",
    "longcomplex", "float128", "complex256", "float96", "complex192",
    "object", "object_", "object0",
}
HOST_SIZED = {"f12", "f16", "c24", "c32"}


def dtype_inputs():
    """All probe strings, in a fixed order, duplicates dropped."""
    cores = list(TYPE_CHARS) + list(BAD_CHARS)
    cores += ["%s%d" % (k, n) for k in SIZED_KINDS for n in SIZES]
    # sctypeDict also has int keys (type numbers); only strings are probed.
    cores += [k for k in np.sctypeDict if isinstance(k, str)]
    cores += [b + s for b in DT_BASES for s in DT_SUFFIXES]
    seen, out = set(), []
    for s in [p + c for p in PREFIXES for c in cores] + EXTRA_INVALID:
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


def host_dependent(s, dtype):
    """1 if the answer for s may differ on another platform because of C
    type sizes (see HOST_* above).  Errs on the side of 1."""
    core = s[1:] if s[:1] in ("<", ">", "=", "|") else s
    if core in HOST_CHARS or core in HOST_NAMES or core in HOST_SIZED:
        return 1
    if core[:1] == "O" and core[1:].isdigit():  # O4 / O8: pointer size
        return 1
    if dtype is not None:
        # Anything that came out as object or long double, whatever the
        # spelling, has a host-sized layout.
        if dtype.kind == "O":
            return 1
        if dtype.type in (np.longdouble, np.clongdouble):
            return 1
    return 0


def probe_dtype(s):
    """np.dtype(s) or None if NumPy refuses it.  Deprecation warnings
    (e.g. 'int0', 'bool8' in 1.24) do not count as refusal."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return np.dtype(s)
        except Exception:  # TypeError, ValueError, OverflowError, ...
            return None


def dtype_row(s):
    dt = probe_dtype(s)
    if dt is None:
        return [s, 0, "-", "-", "-", "-", host_dependent(s, None)]
    return [s, 1, dt.str, dt.kind, dt.itemsize, dt.alignment,
            host_dependent(s, dt)]


def write_dtype_strings():
    rows = [dtype_row(s) for s in dtype_inputs()]
    for row in rows:
        assert "\t" not in row[0] and "\n" not in row[0]
    npgen.write_tsv(DTYPE_TSV, DTYPE_COLUMNS, rows, encoding="ascii")
    return rows


# ---------------------------------------------------------------------------
# Comma-separated type strings (np.dtype('i4,f8'), '(2,3)f4', '3S', ...)
# ---------------------------------------------------------------------------

# Columns of comma_strings.tsv:
#   input_hex     the string, UTF-8, as hex (it may hold tabs and newlines)
#   accepted      1 if np.dtype() takes it
#   descr         what libnpyio's npyio_dtype_descr writes for that dtype:
#                 repr(dtype.descr) for a record, repr((base descr, shape))
#                 for a subarray, "'" + dtype.str + "'" otherwise; '-' if
#                 refused
#   itemsize      dtype.itemsize, '-' if refused
#   inconsistent  1 if NumPy 1.24 builds a dtype that contradicts itself
#                 (sizes wrapped negative, a subarray of 0 bytes given a
#                 size): libnpyio refuses those on purpose
#   be_accepted, be_descr, be_itemsize, be_inconsistent
#                 the same four answers for a big-endian host (with the
#                 same C type sizes), derived below (numpy_host) from
#                 NumPy's own _commastring: byte orders in comma strings
#                 are relative to the host's, so the two differ in more
#                 than '<' becoming '>'
#   host_dependent  1 if the answer may differ on a host with other C type
#                 sizes (long, pointer, long double: see HOST_* above)
#   shown         Python's repr of the string, for people
#
# What depends on the host's byte order, in NumPy 1.24: _commastring
# (numpy/core/_internal.py) takes '=' for _nbo, the host's order, when an
# item has two orders ('=(2,)>i2' is consistent on a big-endian host only),
# and drops an item's order when it is '|', '=' or _nbo, so '<' survives
# on a big-endian host only ('<float64,i4' is then refused, as '<float64'
# is; 'i4,<' ends with the item '<', refused, instead of an empty item,
# ignored); an item left without an order is of the host's order.  Nothing
# else on the way (_check_for_commastring, _convert_from_str, _from_list,
# _from_tuple in descriptor.c) accepts or refuses by the host's order.

SEPARATED = [
    "i4,f8", "i4 ,f8", "i4, f8", "i4 , f8", "i4,\tf8", "i4,\nf8",
    "i4\x0b,f8", "i4\x0c,\rf8", "i4,\x1cf8", "i4,\xa0f8", "i4,\x85f8",
    "i4,\u3000f8", "i4,\u2028f8", "i4,\u200bf8", "i4,f8 ", "i4,f8\t",
    "i4,f8\n", "i4,f8 \u3000", "i4,f8,", "i4,f8, ", "i4,,f8", ",i4",
    ",", "i4,", "i4, ", "i4;f8", "i4 f8", " i4,f8", "\ti4,f8", "i4,f8,<",
    "i4,f8,>", "i4,<", "i4,>", "i4,|", "i4,=", "i4,<,f8", "i4,f8,=,",
    "i4,()", "i4,(2,)", "2,", "2", "(2,)", "()", "<()", "<()f8",
    ">()f8", "|()f8", "=()f8", "!()f8", "()f8", "!2f8", "(2)f8",
    "(2)f8,i4", "[2]f8", "i4],f8", "]i4,f8", "M8[s],M8[D]", "M8[2,3]",
    "M8[2,3],i4", "M8[s,f8", "M8[ns]2,i4", "f8[ns],i4", "f8.5,i4",
    "f8?,i4", "?,b1", "i4,f8,S5,U3,M8[s],m8[25s],c16,?,V4,e",
    "float64,int32", "<float64,i4", ">float64,i4", "=float64,i4",
    "|float64,i4", "datetime64[ns],timedelta64[25s]",
    "<datetime64[ns],>timedelta64", "i4,datetime64", "i4,M", "i4,m8",
    "i4,O", "i4,O8", "i4,O4", "O,O", "i4,g", "i4,f16", "i4,f12",
    "i4,c32", "i4,float128", "i4,l", "i4,p", "int,intp", "i4,S", "i4,U",
    "i4,V", "i4,a", "i4,a0", "i4,c", "S0,U0,V0", "S1,U1,V1", "b,B,h,H",
    "i4,x8", "i4,i3", "x,y", "i4," + "f8," * 30 + "u1",
    ",".join("i%d" % (1 << (i % 4)) for i in range(40)),
    "i4,S2147483647", "i4,S2147483648", "i4,S99999999999999999999",
    "i4,U536870911", "i4,U536870912", "i4,V2147483647",
    "2147483647S", "2147483648S", "536870911U", "536870912U",
    "(2147483647,)u1", "(2147483647,)u1,i1", "(1073741823,)u2",
    "(1073741824,)u2", "(1073741824,)u2,i1", "i4,(2147483647,0)f8",
    "i4,(2147483648,0)f8", "i4,(0,2147483648)f8", "i4,2147483648S",
    "i4,(9223372036854775808,0)f8", "i4,99999999999999999999f8",
    "(2)0f8,i4", "(2)0f8", "(3)0S,i4", "2<0f8,i4", "(2)3S,i4",
    "(2)3U,i4", "(2,)3f8", "2<3f8", "2<3f8,i4", "(2)(2)", "(2)2,i4",
    "2,2,", "3(2,)f8", "(2,)(3,)f8,i4", "3 f8", "3 f8,i4",
    "(" + ",".join(["1"] * 32) + ")f8",
    "(" + ",".join(["2"] * 16) + ")u1,i1",
]

SHAPES = [
    "", "2", "3", "1", "0", "00", "02", "(2,)", "(2,3)", "(2, 3)",
    "( 2 , 3 , )", "()", "( )", "(1,)", "(1)", "(2)", "(0,)", "(0)",
    "(2,0)", "(1,1)", "2,3", "2,3,", "2 ,", "2 3", "(2 3)", " 2", "2 ",
    " (2,)", "(2,) ", "(,)", "(2,,3)", "(2", "2)", ",", ",2", " ",
    "(2147483647,)", "(0,2147483647)", "(2147483648,)",
]
SHAPED_TYPES = ["f8", "i4", "<i2", ">i2", "u1", "S3", "S", "a", "U2", "U",
                ">U", "V", "V0", "M8[ns]", "b1", "c8", "float32", "x4", ""]
ORDERS = ["", "<", ">", "=", "|"]


def comma_inputs():
    """All probe strings, in a fixed order, duplicates dropped."""
    out = list(SEPARATED)
    for shape in SHAPES:
        for t in SHAPED_TYPES:
            out.append(shape + t)
            out.append(shape + t + ",i2")
            out.append("u1," + shape + t)
    for o1 in ORDERS:
        for o2 in ORDERS:
            for t in ["i2", "S3", "U2"]:
                out.append(o1 + "(2,)" + o2 + t)
                out.append("f8," + o1 + "(2,)" + o2 + t)
                out.append(o1 + "3" + o2 + t + ",u1")
    seen, unique = set(), []
    for s in out:
        if s not in seen:
            seen.add(s)
            unique.append(s)
    return unique


def lib_descr(dt):
    """The descr npyio_dtype_descr writes (np.save's for records)."""
    if dt.names is not None:
        return dt.descr
    if dt.subdtype is not None:
        base, shape = dt.subdtype
        return (lib_descr(base), shape)
    return dt.str


def consistent(dt):
    """False for the dtypes NumPy 1.24 builds with contradictory sizes."""
    if dt.itemsize < 0 or "-" in dt.str:
        return False
    if dt.names is not None:
        end = 0
        for name in dt.names:
            fdt, off = dt.fields[name][:2]
            if not consistent(fdt) or off < end:
                return False
            end = off + fdt.itemsize
        return end <= dt.itemsize
    if dt.subdtype is not None:
        base, shape = dt.subdtype
        return consistent(base) and \
            base.itemsize * math.prod(shape) == dt.itemsize
    return True


def comma_host_dependent(s, dt):
    """Conservative: host-sized types (see HOST_* above), whatever the
    spelling, count.  (Byte orders have the be_* columns.)"""
    words = [w for w in
             "".join(c if c.isalnum() else " " for c in s).split()]
    for w in words:
        core = w.lstrip("0123456789")
        if core in HOST_CHARS or core in HOST_NAMES or core in HOST_SIZED:
            return 1
        if core[:1] == "O" and core[1:].isdigit():
            return 1
    if dt is not None:
        return max(host_dependent("", leaf) for leaf in leaves(dt))
    return 0


def leaves(dt):
    """The scalar dtypes inside dt: its fields' and subarrays' bases."""
    if dt.names is not None:
        return [leaf for name in dt.names
                for leaf in leaves(dt.fields[name][0])]
    if dt.subdtype is not None:
        return leaves(dt.subdtype[0])
    return [dt]


@contextlib.contextmanager
def numpy_host(order):
    """np.dtype() as NumPy 1.24 behaves on a host of byte order `order`
    ('<' or '>'), for comma strings, emulated on this one.

    _commastring reads its module globals at each call: _nbo is set to
    `order` and _convorder to {'=': order}, as _internal.py sets them on
    such a host.  Its items are then converted in C, where a type without
    a byte order is of the host's order; so the items it returns that have
    no order left ('|' and '=' never are left) are handed to NumPy already
    converted and turned to `order`, the shape of a (type, shape) item
    kept.  The items with an order ('<' or '>'), and the empty last item
    that _convert_from_list ignores, stay strings for NumPy to convert.
    An item's own comma string ('3f8' of '(2)3f8') comes through here too.
    With this host's order the emulation gives np.dtype()'s answer for
    every input (check_comma_strings checks that it does)."""
    saved = (internal._nbo, internal._convorder, internal._commastring)
    commastring = internal._commastring
    used = []

    def host_commastring(astr):
        used.append(astr)
        items = []
        for item in commastring(astr):
            t, shape = item if isinstance(item, tuple) else (item, None)
            if t != "" and t[0] not in "<>":
                t = np.dtype(t).newbyteorder(order)
            items.append(t if shape is None else (t, shape))
        return items

    internal._nbo, internal._convorder = order, {"=": order}
    internal._commastring = host_commastring
    try:
        yield used
    finally:
        internal._nbo, internal._convorder, internal._commastring = saved


def probe_on_host(s, order):
    """probe_dtype(s) on a host of byte order `order` (see numpy_host).  A
    string that is not a comma string (_commastring never called) is one
    type, of the host's order unless it names '<' or '>'."""
    with numpy_host(order) as used:
        dt = probe_dtype(s)
    if dt is not None and not used and s[:1] not in ("<", ">"):
        dt = dt.newbyteorder(order)
    return dt


def comma_answers(dt):
    """accepted, descr, itemsize, inconsistent for np.dtype()'s dtype."""
    if dt is None:
        return [0, "-", "-", 0]
    ok = consistent(dt)
    return [1, repr(lib_descr(dt)) if ok else "-",
            dt.itemsize if ok else "-", 0 if ok else 1]


def comma_row(s):
    dt = probe_dtype(s)
    shown = ascii(s)
    assert "\t" not in shown
    return [s.encode("utf-8").hex()] + comma_answers(dt) + \
        comma_answers(probe_on_host(s, ">")) + \
        [comma_host_dependent(s, dt), shown]


def write_comma_strings():
    rows = [comma_row(s) for s in comma_inputs()]
    npgen.write_tsv(COMMA_TSV, COMMA_COLUMNS, rows)
    return rows


# ---------------------------------------------------------------------------
# NumPy's size rule: itemsize times every dimension but 0 fits in intp
# ---------------------------------------------------------------------------

INTP_MAX = 2**63 - 1
SIZE_DESCRS = ["'|i1'", "'<i2'", "'|S3'", "'<f8'", "'<c16'", "'|V0'",
               "'|S0'", "'<U0'", "[('a', '<i4'), ('b', '<f8')]",
               "[('a', '<f8', (0, 2147483647))]", "[]"]


def size_shapes(itemsize):
    """Shapes at the edges of the rule for this itemsize."""
    shapes = [(), (0,), (5,), (2, 3), (0, 0), (0, INTP_MAX),
              (INTP_MAX, 0), (2**31, 2**31, 0), (2**30, 2**30, 0),
              (2**32, 2**32), (2**62, 4), (3, 0, 2**62, 2**62)]
    if itemsize > 0:
        edge = INTP_MAX // itemsize
        shapes += [(0, edge), (0, edge + 1), (edge, 0), (edge + 1, 0),
                   (0, 0, edge + 1), (4, 0, edge // 4),
                   (4, 0, edge // 4 + 1), (0, 2**31, edge // 2**31),
                   (0, 2**31, edge // 2**31 + 1), (edge + 1,)]
    return shapes


def size_probes():
    seen, out = set(), []
    for descr in SIZE_DESCRS:
        itemsize = npf.descr_to_dtype(ast.literal_eval(descr)).itemsize
        for shape in size_shapes(itemsize):
            count = math.prod(shape)
            # A dimension beyond int64 is refused as an integer that does
            # not fit (invalid/shape_2p63), before any size rule.
            if max(shape, default=0) > INTP_MAX:
                continue
            # Non-empty arrays whose data exists but cannot be allocated
            # would fail for want of memory, not by the rule: only keep
            # those that are small or beyond int64 anyway.
            if 0 < count * itemsize <= INTP_MAX and count * itemsize > 2**20:
                continue
            if 0 < count <= INTP_MAX and itemsize == 0 and count > 2**20:
                continue
            if (descr, shape) not in seen:
                seen.add((descr, shape))
                out.append((descr, shape))
    return out


def size_verdict(descr, shape):
    """(loads, NumPy's message) for np.load of the header and its data."""
    text = "{'descr': %s, 'fortran_order': False, 'shape': %r, }" % (
        descr, tuple(shape))
    hdr = frame(pad_align(text, 1), 1) if len(text) < 60000 else None
    itemsize = npf.descr_to_dtype(ast.literal_eval(descr)).itemsize
    count = math.prod(shape)
    data = bytes(count * itemsize) if 0 <= count * itemsize <= 2**20 else b""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            np.load(io.BytesIO(hdr + data))
        return 1, "-"
    except Exception as e:  # ValueError, MemoryError, ...
        return 0, "%s: %s" % (type(e).__name__, str(e).split("\n")[0])


def size_needle(descr, shape):
    """The part of libnpyio's message naming the fault, for refusals."""
    itemsize = npf.descr_to_dtype(ast.literal_eval(descr)).itemsize
    count = math.prod(shape)
    if count == 0:
        return "array is too big"
    if count > INTP_MAX:
        return "more elements than a 64-bit count"
    return "more bytes than a 64-bit size"


def size_rule(descr, shape):
    """The rule as libnpyio states it, to check NumPy against."""
    itemsize = npf.descr_to_dtype(ast.literal_eval(descr)).itemsize
    span = itemsize
    for d in shape:
        if d != 0:
            span *= d
    count = math.prod(shape)
    return span <= INTP_MAX and count <= INTP_MAX and \
        count * itemsize <= INTP_MAX


def write_sizes():
    rows = []
    for descr, shape in size_probes():
        loads, error = size_verdict(descr, shape)
        # NumPy must agree with the rule libnpyio implements.
        assert bool(loads) == size_rule(descr, shape), (descr, shape, error)
        rows.append([descr, repr(tuple(shape)), loads,
                     "-" if loads else size_needle(descr, shape), error])
    npgen.write_tsv(SIZES_TSV, SIZES_COLUMNS, rows, encoding="ascii")
    return rows


# ---------------------------------------------------------------------------
# Self-check: re-read the written files the way a C test would, and compare
# with NumPy.
# ---------------------------------------------------------------------------

def check_valid():
    rows = npgen.read_tsv(MANIFEST, MANIFEST_COLUMNS, encoding="ascii")
    files = set(os.listdir(VALID_DIR))
    expected_files = {"manifest.tsv"}
    for r in rows:
        expected_files.add(r["file"])
        expected_files.add(r["canonical"])
        with open(os.path.join(VALID_DIR, r["file"]), "rb") as f:
            data = f.read()
        major, shape, fortran, dtype = numpy_read(data)
        _, hlen, offset = preamble(data)
        shape_txt = ",".join(str(n) for n in shape)
        count = math.prod(shape)
        # Element count and byte size must fit in int64 (NumPy computes
        # them there); anything larger is a malformed header.
        assert count * dtype.itemsize < 2**63, r["name"]
        assert (int(r["version"]), int(r["hlen"]), int(r["data_offset"])) \
            == (major, hlen, offset) and offset == len(data)
        assert np.dtype(r["descr"]) == dtype and r["descr"] == dtype.str
        assert r["kind"] == dtype.kind
        assert int(r["itemsize"]) == dtype.itemsize
        assert int(r["alignment"]) == dtype.alignment
        assert r["byteorder"] == dtype.str[0] and r["byteorder"] in "<>|"
        assert int(r["ndim"]) == len(shape) and r["shape"] == shape_txt
        assert int(r["fortran"]) == int(fortran)
        assert int(r["count"]) == count
        assert int(r["nbytes"]) == count * dtype.itemsize
        if dtype.kind in "Mm":
            assert (r["dt_unit"], int(r["dt_mult"])) == \
                np.datetime_data(dtype)
        else:
            assert r["dt_unit"] == "-" and r["dt_mult"] == "-"
        # The canonical file is what np.save writes, and it reads back to
        # the same dtype, shape and order.
        with open(os.path.join(VALID_DIR, r["canonical"]), "rb") as f:
            canon = f.read()
        assert canon == canonical_header(dtype, shape, fortran)
        c_shape, c_fortran, c_dtype = numpy_read(canon)[1:]
        assert (c_shape, c_dtype) == (shape, dtype)
        assert c_fortran == (fortran and sum(d > 1 for d in shape) > 1
                             and 0 not in shape)
        _, _, coff = preamble(canon)
        assert coff % 64 == 0 and canon.endswith(b"\n")
        # Full np.load of header + zero data, where the data is small
        # enough to allocate (object arrays would need a pickle).
        if dtype.kind != "O" and count * dtype.itemsize < 2**20 \
                and len(shape) <= 32:
            blob = data + bytes(count * dtype.itemsize)
            arr = np.load(io.BytesIO(blob))
            assert arr.dtype == dtype and arr.shape == tuple(shape)
            if fortran and len(shape) > 1 and count > 1:
                assert arr.flags.f_contiguous
    assert files == expected_files, sorted(files ^ expected_files)
    return rows


def check_dtype_strings():
    rows = npgen.read_tsv(DTYPE_TSV, DTYPE_COLUMNS, encoding="ascii")
    inputs = dtype_inputs()
    assert [r["input"] for r in rows] == inputs
    for r in rows:
        dt = probe_dtype(r["input"])
        if dt is None:
            assert r["accepted"] == "0"
            assert [r[c] for c in DTYPE_COLUMNS[2:6]] == ["-"] * 4
        else:
            assert r["accepted"] == "1" and r["str"] == dt.str
            assert (r["kind"], int(r["itemsize"]), int(r["alignment"])) \
                == (dt.kind, dt.itemsize, dt.alignment)
        assert r["host_dependent"] in ("0", "1")
    return rows


def check_comma_answers(s, dt, accepted, descr, itemsize, inconsistent):
    assert accepted == ("0" if dt is None else "1"), s
    if descr != "-":
        # The descr text reads back (as np.save's reader reads a descr)
        # to the same dtype.
        back = ast.literal_eval(descr)
        if isinstance(back, tuple):
            back = np.dtype((npf.descr_to_dtype(back[0]), back[1]))
        else:
            back = npf.descr_to_dtype(back)
        assert back == dt and int(itemsize) == dt.itemsize, s
    else:
        assert dt is None or inconsistent == "1", s


def check_comma_strings():
    rows = npgen.read_tsv(COMMA_TSV, COMMA_COLUMNS, encoding="ascii")
    assert [bytes.fromhex(r["input_hex"]).decode("utf-8") for r in rows] \
        == comma_inputs()
    here = "<" if sys.byteorder == "little" else ">"
    for r in rows:
        s = bytes.fromhex(r["input_hex"]).decode("utf-8")
        dt = probe_dtype(s)
        check_comma_answers(s, dt, r["accepted"], r["descr"],
                            r["itemsize"], r["inconsistent"])
        # The emulation of another host's NumPy is NumPy on this one.
        assert comma_answers(probe_on_host(s, here)) == \
            comma_answers(dt), s
        check_comma_answers(s, probe_on_host(s, ">"), r["be_accepted"],
                            r["be_descr"], r["be_itemsize"],
                            r["be_inconsistent"])
    # _commastring's rules for _nbo, as the be_* columns must show them.
    be = {bytes.fromhex(r["input_hex"]).decode("utf-8"): r for r in rows}
    for s, le_ok, be_ok in [("i4,<", "1", "0"), ("i4,>", "0", "1"),
                            ("i4,=", "1", "1"), ("=(2,)>i2", "0", "1"),
                            ("=(2,)<i2", "1", "0"), ("<(2,)>i2", "0", "0"),
                            ("<float64,i4", "1", "0"),
                            (">float64,i4", "0", "1")]:
        assert (be[s]["accepted"], be[s]["be_accepted"]) == \
            (le_ok, be_ok), s
    assert be["i4,f8"]["be_descr"] == "[('f0', '>i4'), ('f1', '>f8')]"
    assert be["i4,>"]["be_descr"] == "[('f0', '>i4')]"
    return rows


def check_sizes():
    rows = npgen.read_tsv(SIZES_TSV, SIZES_COLUMNS, encoding="ascii")
    assert [(r["descr"], r["shape"]) for r in rows] == \
        [(d, repr(tuple(s))) for d, s in size_probes()]
    for r in rows:
        loads, _ = size_verdict(r["descr"], ast.literal_eval(r["shape"]))
        assert int(r["loads"]) == loads
    return rows


def main():
    print("NumPy %s, Python %s" % (np.__version__, sys.version.split()[0]))
    valid = numpy_written_cases() + legacy_cases()
    n_canon = write_valid(valid)
    write_dtype_strings()
    write_comma_strings()
    write_sizes()

    rows = check_valid()
    drows = check_dtype_strings()
    crows = check_comma_strings()
    srows = check_sizes()

    by_origin = {}
    for c in valid:
        by_origin[c.origin] = by_origin.get(c.origin, 0) + 1
    acc = sum(r["accepted"] == "1" for r in drows)
    host = sum(r["host_dependent"] == "1" for r in drows)
    print("valid/: %d cases (%s), %d .canon.hdr files, manifest %d rows"
          % (len(valid), ", ".join("%s %d" % kv for kv in
                                   sorted(by_origin.items())),
             n_canon, len(rows)))
    for v in (1, 2, 3):
        print("  version %d: %d" % (v, sum(r["version"] == str(v)
                                           for r in rows)))
    print("dtype_strings.tsv: %d inputs, %d accepted, %d rejected, "
          "%d host-dependent" % (len(drows), acc, len(drows) - acc, host))
    print("comma_strings.tsv: %d inputs, %d accepted (%d inconsistent), "
          "%d host-dependent"
          % (len(crows), sum(r["accepted"] == "1" for r in crows),
             sum(r["inconsistent"] == "1" for r in crows),
             sum(r["host_dependent"] == "1" for r in crows)))
    print("sizes.tsv: %d shapes, %d load in NumPy"
          % (len(srows), sum(r["loads"] == "1" for r in srows)))
    print("all checks passed")


if __name__ == "__main__":
    main()
