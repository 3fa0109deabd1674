#!/usr/bin/python3
"""Generate the structured-dtype (record) header corpus for libnpyio's C tests.

Run with a Python that has NumPy (the reference build is NumPy 1.24.2 on
x86_64 Linux):

    /usr/bin/python3 tests/data/gen_records.py

Output (under tests/data/records/valid/, next to this script):

  <name>.hdr        the first data_offset bytes of a .npy file whose descr is
                    a record (a list of fields)
  <name>.canon.hdr  what np.save writes for the array NumPy loads from
                    <name>.hdr, for the cases whose bytes are not already that
  manifest.tsv      one row per case: what NumPy reads from the header
  fields.tsv        every field of every case, pre-order depth-first
  swaps.tsv         per case, the byte-swap units of one element

All three .tsv files are UTF-8 (field names may be non-ASCII), '\n'
terminated, one header line starting with '#' that lists the columns:

  manifest.tsv  name file version hlen data_offset descr itemsize alignment
                nfields ndim shape fortran count nbytes has_object canonical
  fields.tsv    case depth index name_hex title_hex offset shape base_str
                base_kind base_itemsize itemsize
  swaps.tsv     case swap_on_le swap_on_be

manifest.tsv:
  descr     the text of the 'descr' value exactly as it stands in the header
            (NumPy writes repr(dtype.descr)).  The header is latin-1 (v1/v2)
            or UTF-8 (v3); this column is that text re-encoded as UTF-8, so
            a v1 name byte E9 appears here as C3 A9.  repr escapes tabs and
            newlines, so the column never contains a raw one.
  itemsize, alignment, nfields   of the dtype NumPy reads back (nfields =
            len(dtype.names), 0 for []).  NumPy's reader never builds an
            aligned struct, so alignment is 1 for every record.
  shape     comma-separated, empty for 0-d; count = product (1 for 0-d);
            nbytes = count * itemsize; fortran 0/1; has_object 0/1.
  canonical file name of what np.save writes for the array NumPy loads
            (the case's own file when the bytes are identical).

fields.tsv (only the top-level record's tree; a field row is followed by the
rows of its sub-fields, found through any depth of nested subarrays):
  depth     0 for the top-level record's fields, 1 for their sub-fields, ...
  index     position among its siblings (dtype.names order)
  name_hex, title_hex   UTF-8 bytes as lowercase hex; title '-' when none;
            the empty name '' gives an empty column.
  offset    relative to the enclosing record (for sub-fields of a record
            inside a subarray: relative to one element of that subarray).
  shape     the field dtype's subdtype[1], comma-separated; '-' if the field
            is not a subarray.  Nested subarrays stay nested in NumPy:
            ('a', ('<i4', (2,)), (3,)) has shape 3 and base ('<i4', (2,)).
  base_*    str/kind/itemsize of subdtype[0] for a subarray field, else of
            the field dtype; itemsize = the whole field dtype's itemsize.

swaps.tsv: the units a reader must byte-reverse to bring one element to
native order on a little-endian (swap_on_le: the '>' leaves) and on a
big-endian host (swap_on_be: the '<' leaves).  Space-separated offset:unit,
absolute within one element, sorted by offset, subarrays and nested records
expanded.  Integers, floats (long double: one unit of its whole itemsize),
datetimes: one unit; complex: two halves; U<n>: n units of 4.  Bytes, void,
bool, 1-byte types, objects and padding give none.

Case origins:
  save      np.save wrote the bytes (file is its own canonical form)
  dict      numpy.lib.format._write_array_header (the function np.save
            calls), for shapes too big to allocate or orders np.save would
            not write
  legacy    hand-written text in forms NumPy 1.24 still reads
  toplevel  descr is a top-level subarray ('<f8', (2,)): newer NumPy writes
            these; 1.24 parses the header but np.load then fails to reshape
            the data.  The manifest gives the facts after folding the
            subarray shape into the array shape; fields.tsv lists nothing;
            swaps.tsv covers the whole unfolded subarray element.
  toplevel_string  the same with the descr a type string ('(2,)<f8'):
            1.24 loads these only when the array is empty or the subarray
            has one element (as the base type in the header's shape, not
            folded); libnpyio folds them like the tuples.

The output is deterministic, every file is rewritten on each run, and the
script re-reads everything and checks it against NumPy at the end.
"""

import ast
import io
import math
import os
import random
import struct
import sys
import warnings

import numpy as np
from numpy.lib import format as npf

import npgen
from npgen import (MAGIC, canonical_header, header_from_dict,
                   header_from_save, masked_dtype, preamble, read_tsv,
                   write_tsv)

HERE = os.path.dirname(os.path.abspath(__file__))
VALID_DIR = os.path.join(HERE, "records", "valid")
MANIFEST = os.path.join(VALID_DIR, "manifest.tsv")
FIELDS = os.path.join(VALID_DIR, "fields.tsv")
SWAPS = os.path.join(VALID_DIR, "swaps.tsv")

MANIFEST_COLUMNS = [
    "name", "file", "version", "hlen", "data_offset", "descr", "itemsize",
    "alignment", "nfields", "ndim", "shape", "fortran", "count", "nbytes",
    "has_object", "canonical",
]
FIELD_COLUMNS = [
    "case", "depth", "index", "name_hex", "title_hex", "offset", "shape",
    "base_str", "base_kind", "base_itemsize", "itemsize",
]
SWAP_COLUMNS = ["case", "swap_on_le", "swap_on_be"]

class Case(npgen.HeaderCase):
    """One header of valid/.

    origin: 'save', 'dict', 'legacy', 'toplevel' or 'toplevel_string' (see
    the module doc).
    expect: (descr list NumPy's writer gives for the dtype NumPy reads back,
    shape, fortran_order), i.e. what we intend NumPy to read; comparing it
    with NumPy's actual reading catches mistakes in this script.  For
    'toplevel' cases it is (base descr, folded shape, fortran).
    """


# ---------------------------------------------------------------------------
# Low-level helpers
# ---------------------------------------------------------------------------

def header_text(hdr):
    """The header text (dict + padding), decoded as NumPy decodes it."""
    major, _, offset = preamble(hdr)
    body = hdr[10 if major == 1 else 12:offset]
    return body.decode("utf-8" if major == 3 else "latin-1")


def descr_source(hdr):
    """The exact source text of the 'descr' value in the header dict.

    Found with Python's own parser (the one NumPy uses, ast.literal_eval),
    so it works for any spelling a legacy file may use.  With duplicate
    keys the last one wins, as in NumPy."""
    text = header_text(hdr)
    tree = ast.parse(text.strip(), mode="eval")
    assert isinstance(tree.body, ast.Dict)
    found = None
    for key, value in zip(tree.body.keys, tree.body.values):
        if ast.literal_eval(key) == "descr":
            found = ast.get_source_segment(text.strip(), value)
    assert found is not None
    return found


def numpy_read(hdr):
    """npgen.numpy_read with max_header_size raised to the header's length:
    np.load's default limit (10000 characters) refuses the header of the
    thousands-of-fields case that NumPy itself wrote, and allow_pickle=True
    would lift it the same way."""
    return npgen.numpy_read(hdr, max_header_size=len(hdr))


def fold_toplevel(dtype, shape):
    """A top-level subarray dtype (base, sub) over shape is, to np.save, an
    array of base with shape + sub: its header's descr is the base's and
    its shape the two joined."""
    base, sub = dtype.subdtype
    return base, tuple(shape) + tuple(sub)


# ---------------------------------------------------------------------------
# Cases written by NumPy (np.save or _write_array_header)
# ---------------------------------------------------------------------------

def save_case(cases, name, arr, major=1):
    """Add a case whose bytes come from np.save."""
    expect = (npf.dtype_to_descr(arr.dtype), arr.shape,
              npgen.saved_fortran(arr))
    cases.append(Case(name, header_from_save(arr, major), "save", expect))


def dict_case(cases, name, dtype, fortran, shape, major=1):
    """Add a case written by _write_array_header without an array."""
    descr = npf.dtype_to_descr(dtype)
    data = header_from_dict(descr, fortran, shape, major)
    cases.append(Case(name, data, "dict", (descr, tuple(shape), fortran)))


def offsets_dtype(names, formats, offsets, itemsize):
    """A record with explicit offsets: NumPy fills the gaps with ('', '|Vn')
    entries when it writes the descr."""
    return np.dtype({"names": names, "formats": formats, "offsets": offsets,
                     "itemsize": itemsize})


def numpy_written_cases():
    cases = []

    def save(name, dtype, shape=(2,), major=1):
        save_case(cases, name, np.zeros(shape, np.dtype(dtype)), major)

    # --- flat records --------------------------------------------------------
    save("flat_basic", [("x", "<i4"), ("y", "<f8")])
    save("flat_single", [("a", "<f8")], shape=(5,))
    # A worked example: 106 characters of dict text + 20 growth spaces +
    # '\n' = 127, padded by 55 to HLEN 182 (0xB6), data at 192.
    save("flat_doc_example",
         [("id", "<u4"), ("pos", "<f4", (3,)), ("name", "S8")])
    # One field of every scalar kind, native (little-endian) order.
    save("flat_all_kinds",
         [("b", "?"), ("i1", "i1"), ("u1", "u1"), ("i2", "<i2"),
          ("u2", "<u2"), ("i4", "<i4"), ("u4", "<u4"), ("i8", "<i8"),
          ("u8", "<u8"), ("f2", "<f2"), ("f4", "<f4"), ("f8", "<f8"),
          ("g", "<g"), ("c8", "<c8"), ("c16", "<c16"), ("cg", "<G"),
          ("s", "S5"), ("u", "<U3"), ("v", "V4"), ("dt", "<M8[D]"),
          ("td", "<m8[s]")], shape=(3,))
    save("flat_big_endian",
         [("i2", ">i2"), ("u4", ">u4"), ("i8", ">i8"), ("f4", ">f4"),
          ("f8", ">f8"), ("c8", ">c8"), ("u", ">U2"), ("dt", ">M8[us]")])

    # --- nested records ------------------------------------------------------
    save("nested_doc_example",
         [("a", "u1"), ("b", [("c", "<i2"), ("d", "S3")])])
    # Depths 0..3: a record in a record in a record in the top level.
    save("nested_3_deep",
         [("a", "<i2"),
          ("b", [("c", "<f4"),
                 ("d", [("e", "u1"),
                        ("f", [("g", ">i8"), ("h", "S2")]),
                        ("i", "<u2")])]),
          ("j", "<f8")])
    save("nested_mixed_endian",
         [("le", [("a", "<i4"), ("b", ">i4")]),
          ("be", [("c", ">f8"), ("d", [("e", "<c8"), ("f", ">c8")])]),
          ("x", "|u1")])

    # --- titles --------------------------------------------------------------
    save("titled_basic", [(("Title A", "a"), "<i4"), ("b", "<f4")])
    save("titled_nested",
         [(("outer title", "r"), [(("inner title", "s"), ">i2"),
                                   ("t", "<f4")]),
          (("sub title", "v"), "<u2", (3,))])
    # A latin-1 title stays format 1.0 (byte E9 in the header).
    save("titled_latin1", [(("Größe é", "size"), "<f8"), ("n", "<i4")])

    # --- explicit offsets: gaps become ('', '|Vn') entries -------------------
    save("offsets_leading_gap", offsets_dtype(["a"], ["<i4"], [4], 8))
    save("offsets_internal_gaps",
         offsets_dtype(["a", "b", "c"], ["u1", "<f8", "<i2"],
                       [0, 8, 20], 22))
    # An internal gap (bytes 1-3), then trailing padding (bytes 8-11).
    save("offsets_trailing_pad",
         offsets_dtype(["a", "b"], ["u1", "<i4"], [0, 4], 12))
    save("offsets_all_gaps",
         offsets_dtype(["a", "b"], [">i2", "<u4"], [3, 9], 20))
    save("offsets_nested",
         offsets_dtype(["p", "q"],
                       ["<i4", offsets_dtype(["x", "y"], [">i2", "u1"],
                                             [2, 6], 8)],
                       [0, 8], 24))

    # --- align=True layouts (written as explicit padding) --------------------
    save("align_u1_i4",
         np.dtype([("a", "u1"), ("b", "<i4")], align=True))
    save("align_trailing",
         np.dtype([("a", "u1"), ("b", "<f8"), ("c", "<i2"), ("d", "u1")],
                  align=True))
    save("align_nested",
         np.dtype([("a", "u1"),
                   ("b", np.dtype([("c", "u1"), ("d", "<i8")], align=True)),
                   ("e", "<i2")], align=True))
    save("align_subarray",
         np.dtype([("a", "u1"), ("b", "<f4", (3,)), ("c", "u1")],
                  align=True))

    # --- subarray fields -----------------------------------------------------
    save("subarray_1d", [("a", "<f8", (3,)), ("b", "<i2")])
    save("subarray_2d", [("m", "<f4", (2, 3)), ("v", ">i2", (4,))])
    save("subarray_size_1", [("a", "<f8", (1,)), ("b", "<f8", (1, 1))])
    save("subarray_size_0", [("a", "<i4", (0,)), ("b", "<i4")])
    save("subarray_of_record", [("a", [("b", "<i4")], (2,))])
    # Records inside subarrays inside records, twice.
    save("subarray_record_in_record",
         [("p", [("q", [("r", ">i2"), ("s", "<f4", (2,))], (2, 2)),
                 ("t", "u1")]),
          ("u", "<u8")])
    # NumPy keeps the nesting: field shape (3,), base ('<i4', (2,)).
    save("subarray_nested", [("a", ("<i4", (2,)), (3,))])
    save("subarray_nested_record",
         [("a", ([("b", ">i4"), ("c", "S1")], (2,)), (3,)), ("d", "<i2")])

    # --- mixed byte orders ---------------------------------------------------
    save("endian_mixed",
         [("a", ">i4"), ("b", "<f8"), ("c", ">c16"), ("d", ">U3"),
          ("e", ">M8[ns]"), ("f", ">g"), ("g", "<c8"), ("h", ">m8[us]"),
          ("i", "u1"), ("j", ">f2"), ("k", "<U1"), ("l", ">G")])
    save("endian_longdouble",
         [("le", "<g"), ("be", ">g"), ("cle", "<G"), ("cbe", ">G")])

    # --- empty records and zero-size fields ----------------------------------
    save("empty_record", [], shape=(3,))
    save("empty_record_field", [("a", []), ("b", "<i4")])
    save("empty_record_0d", [], shape=())
    save("s0_field", [("a", "S0"), ("b", "<i4")])
    save("u0_v0_fields", [("a", "<U0"), ("b", "V0"), ("c", ">i2")])

    # --- objects: header only (np.save writes a pickle after it) -------------
    save("object_field", [("a", "<i4"), ("o", "O")])
    save("object_nested", [("r", [("o", "O"), ("x", ">f8")]), ("y", "u1")])

    # --- other kinds ---------------------------------------------------------
    save("kinds_u_v_datetime",
         [("u", "<U7"), ("v", "V3"), ("dt", "<M8"), ("td", "<m8[25s]"),
          ("d2", ">M8[2D]"), ("t3", "<m8[3h]"), ("s", "S1")])

    # --- names that need repr quoting or are not ASCII -----------------------
    save("name_apostrophe", [("a'b", "<i4")])    # repr: "a'b"
    save("name_dquote", [('a"b', "<i4")])         # repr: 'a"b'
    save("name_both_quotes", [("a'\"b", "<i4")])  # repr: 'a\'"b'
    save("name_newline", [("a\nb", "<i4")])       # repr: 'a\nb'
    save("name_backslash", [("a\\b", "<i4")])     # repr: 'a\\b'
    save("name_tab", [("a\tb", "<i4")])           # repr: 'a\tb'
    save("name_all_escapes",
         [("'", "u1"), ('"', "u1"), ("\\", "u1"), ("\n\t\r\x00", "u1")])
    save("name_latin1", [("é", "<i4")])           # format 1.0, byte E9
    save("name_non_latin1", [("ĉ", "<i4")], major=3)  # format 3.0, UTF-8
    save("name_emoji", [("\U0001F600", "<i4"), ("b", "<f8")], major=3)
    save("title_non_latin1", [(("ĉapelo", "hat"), "<i4")], major=3)

    # --- many fields ---------------------------------------------------------
    # ~50 fields of varied kinds (benchmark input).
    kinds50 = ["<i4", "<f8", "u1", ">i2", "<c8", "S3", "<u8", "<f4",
               ">f8", "<M8[s]"]
    save("fields_50", [("field_%02d" % i, kinds50[i % len(kinds50)])
                       for i in range(50)])
    # Enough fields that the header exceeds 65535 bytes: np.save picks 2.0.
    save("fields_4000_v2", [("f%04d" % i, "<i4") for i in range(4000)],
         shape=(1,), major=2)

    # --- array shapes and orders ---------------------------------------------
    rec = np.dtype([("x", "<i4"), ("y", ">f8", (2,)), ("s", "S3")])
    save_case(cases, "shape_0d", np.zeros((), rec))
    save_case(cases, "shape_0d_nested",
              np.zeros((), [("a", [("b", "<i2")]), ("c", "u1")]))
    save_case(cases, "shape_empty_0", np.zeros((0,), rec))
    save_case(cases, "shape_empty_3_0_f",
              np.asfortranarray(np.zeros((3, 0), rec)))
    save_case(cases, "shape_3d", np.zeros((2, 3, 4), rec))
    save_case(cases, "fortran_2d", np.asfortranarray(np.zeros((3, 4), rec)))
    save_case(cases, "fortran_3d",
              np.asfortranarray(np.zeros((2, 3, 2), [("a", "<u2")])))
    # a.T of a C array is F-contiguous: written as fortran.
    save_case(cases, "fortran_transposed", np.zeros((3, 2), rec).T)
    # Only one dimension > 1: also C-contiguous, so written fortran False.
    save_case(cases, "fortran_1_by_n",
              np.asfortranarray(np.zeros((1, 5), rec)))

    # Shapes too big to allocate, and a fortran_order np.save would not
    # write for an empty array (its canonical form is fortran False).
    dict_case(cases, "dict_big_1d", rec, False, (2**40,))
    dict_case(cases, "dict_big_2d_fortran", rec, True, (2**20, 2**24))
    dict_case(cases, "dict_empty_fortran", rec, True, (0, 5))
    return cases


# ---------------------------------------------------------------------------
# Legacy / hand-written headers
# ---------------------------------------------------------------------------

def frame_text(text, major=1):
    """Frame dict text as NumPy 1.14..1.23 did: magic, version, length,
    text, spaces to a 64-byte boundary (never 0 spaces), newline.  No
    growth padding; but when NumPy's text with its growth spaces still fits
    the same 64-byte block, the bytes equal np.save's (the growth spaces
    just take the place of pad spaces), and the case is its own canonical
    form."""
    prefix = 10 if major == 1 else 12
    raw = text.encode("utf-8" if major == 3 else "latin-1")
    pad = 64 - (prefix + len(raw) + 1) % 64
    body = raw + b" " * pad + b"\n"
    size = struct.pack("<H" if major == 1 else "<I", len(body))
    return MAGIC + bytes([major, 0]) + size + body


def legacy_cases():
    cases = []

    def add(name, descr_text, expect_descr, shape="(2,)", expect_shape=(2,),
            fortran="False", text=None):
        # expect_descr: the descr NumPy's writer gives for what NumPy reads.
        if text is None:
            text = "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (
                descr_text, fortran, shape)
        cases.append(Case(name, frame_text(text), "legacy",
                          (expect_descr, expect_shape, fortran == "True")))

    ab = [("a", "<i4"), ("b", "<f8")]
    # Fields as lists instead of tuples (descr_to_dtype just unpacks them).
    add("legacy_list_fields", "[['a', '<i4'], ['b', '<f8']]", ab)
    add("legacy_list_nested",
        "[['a', '<i4'], ['r', [['x', '>i2'], ['y', '<f4', [2]]]]]",
        [("a", "<i4"), ("r", [("x", ">i2"), ("y", "<f4", (2,))])])
    # Subarray shape as a plain int.
    add("legacy_int_shape", "[('a', '<f4', 2)]", [("a", "<f4", (2,))])
    # Shape () is normalised away: a plain field.
    add("legacy_empty_shape", "[('a', '<f8', ()), ('b', '<i2')]",
        [("a", "<f8"), ("b", "<i2")])
    # Explicit padding entry in the middle: dropped, but advances the offset.
    add("legacy_explicit_pad", "[('a', '<i4'), ('', '|V4'), ('b', '<f8')]",
        [("a", "<i4"), ("", "|V4"), ("b", "<f8")])
    # A non-void unnamed field is kept as a field named ''.
    add("legacy_unnamed_field", "[('', '<i4'), ('b', '<f8')]",
        [("", "<i4"), ("b", "<f8")])
    # Padding spelt as a void subarray: its dtype's type is void and it has
    # no names, so it is padding too (4 bytes).
    add("legacy_void_subarray_pad",
        "[('a', '<i4'), ('', '|V2', (2,)), ('b', '<i2')]",
        [("a", "<i4"), ("", "|V4"), ("b", "<i2")])
    # Type strings without a byte order (native: '<' on x86_64).
    add("legacy_no_byteorder", "[('a', 'i4'), ('b', 'f8'), ('c', 'u1')]",
        [("a", "<i4"), ("b", "<f8"), ("c", "|u1")])
    add("legacy_double_quoted", '[("a", "<i4"), ("b", "<f8")]', ab)
    add("legacy_double_quoted_dict", None, ab,
        text='{"descr": [("a", "<i4"), ("b", "<f8")], '
             '"fortran_order": False, "shape": (2,)}')
    # A (title, name) pair must be a tuple (as a list: "field names must be
    # strings"); here with double quotes.
    add("legacy_titled_dq", '[(("T", "a"), "<i4")]', [(("T", "a"), "<i4")])
    # Whitespace and layout freedom inside the descr list.
    add("legacy_spacing",
        "[ ( 'a' , '<i4' ) , ( 'b' , '<f8' , ( 2 , ) ) , ]",
        [("a", "<i4"), ("b", "<f8", (2,))])
    # Comma-separated type strings (np.dtype() makes fields f0, f1, ...;
    # a leading shape is a subarray field; '3S' is S3).  Items without a
    # byte order are native ('<' here): the C tests list these cases as
    # host-order ones (testdata.h), so their explicit orders are all '>'.
    add("legacy_comma_string", "'i4,f8'", [("f0", "<i4"), ("f1", "<f8")])
    add("legacy_comma_shapes", "'(2,)i4, (2,3)>f4,3S , a10'",
        [("f0", "<i4", (2,)), ("f1", ">f4", (2, 3)), ("f2", "|S3"),
         ("f3", "|S10")])
    add("legacy_comma_kinds", '"M8[ns],>m8[25s],U2,?,c16,float32"',
        [("f0", "<M8[ns]"), ("f1", ">m8[25s]"), ("f2", "<U2"),
         ("f3", "|b1"), ("f4", "<c16"), ("f5", "<f4")])
    # An empty last item: the list is still a record, of one field.  ('='
    # is dropped on every host; 'i4,<' is this on a little-endian host
    # only: where '<' is not the host's order NumPy keeps it, and the item
    # '<' is refused.  comma_strings.tsv has both answers.)
    add("legacy_comma_one_field", "'i4,='", [("f0", "<i4")])
    # As a field's descr: a nested record, and a subarray field.
    add("legacy_comma_in_field", "[('a', 'i4,f8'), ('b', '(2,)>i2')]",
        [("a", [("f0", "<i4"), ("f1", "<f8")]), ("b", ">i2", (2,))])
    # 1.14..1.23 layout (no growth padding) of an ordinary record, F order.
    # The text (109 characters) fits a 128-byte header only without the 20
    # growth spaces 1.24 adds, so the canonical header is 192 bytes.
    # (Shorter texts give identical bytes: growth spaces just replace pad.)
    abcd = [("a", "<i4"), ("b", "<f8"), ("c", "<f8"), ("d", "<f8")]
    add("legacy_nogrowth_fortran",
        "[('a', '<i4'), ('b', '<f8'), ('c', '<f8'), ('d', '<f8')]", abcd,
        shape="(3, 4)", expect_shape=(3, 4), fortran="True")
    return cases


# ---------------------------------------------------------------------------
# Top-level subarray descrs (newer NumPy writes them; 1.24 cannot load them)
# ---------------------------------------------------------------------------

def toplevel_cases():
    cases = []
    for name, descr, shape in [
            ("toplevel_subarray_f8", ("<f8", (2,)), (3,)),
            ("toplevel_subarray_record", ([("x", "<i4")], (2, 2)), (4,)),
            # Big-endian base and a 0-d array: folds to shape (3,).
            ("toplevel_subarray_be_0d", (">i2", (3,)), ())]:
        data = header_from_dict(descr, False, shape)
        dtype = np.dtype((npf.descr_to_dtype(descr[0]), descr[1]))
        base, folded = fold_toplevel(dtype, shape)
        cases.append(Case(name, data, "toplevel",
                          (npf.dtype_to_descr(base), folded, False)))
    # The same as a type string ('(2,)<f8'), which np.dtype() also makes a
    # subarray of. NumPy 1.24 does not fold it: it loads count elements of
    # the subarray and reshapes them to the header's shape, which works
    # only for an empty array or a subarray of one element (and gives an
    # array of the base type with the header's shape). libnpyio folds these
    # as it folds tuples.
    for name, descr, shape, fortran in [
            ("toplevel_string_empty", "(2,)<f8", (0,), False),
            ("toplevel_string_empty_fortran", "(2,3)>u4", (4, 0), True),
            ("toplevel_string_one", "(1,)>i2", (3,), False),
            ("toplevel_string_one_2d", "(1,1)f4", (2,), False)]:
        data = header_from_dict(descr, fortran, shape)
        base, folded = fold_toplevel(np.dtype(descr), shape)
        cases.append(Case(name, data, "toplevel_string",
                          (npf.dtype_to_descr(base), folded, fortran)))
    return cases


# ---------------------------------------------------------------------------
# Facts: fields and swap units
# ---------------------------------------------------------------------------

def innermost(dtype):
    """Strip nested subarrays: ('<i4', (2,)) inside (3,) -> '<i4'."""
    while dtype.subdtype is not None:
        dtype = dtype.subdtype[0]
    return dtype


def field_rows(case, record, depth=0):
    """fields.tsv rows of record's tree, pre-order depth-first."""
    rows = []
    for index, name in enumerate(record.names):
        # (dtype, offset) or (dtype, offset, title)
        entry = record.fields[name]
        fdt, offset = entry[0], entry[1]
        title = entry[2] if len(entry) > 2 else None
        if fdt.subdtype is not None:
            base, sub = fdt.subdtype
            shape = ",".join(str(n) for n in sub)
        else:
            base, shape = fdt, "-"
        rows.append([case, depth, index, name.encode("utf-8").hex(),
                     "-" if title is None else title.encode("utf-8").hex(),
                     offset, shape, base.str, base.kind, base.itemsize,
                     fdt.itemsize])
        inner = innermost(fdt)
        if inner.names is not None:
            rows += field_rows(case, inner, depth + 1)
    return rows


def swap_units(dtype, order, offset=0):
    """[(offset, unit)] of the leaves of dtype whose byte order is order."""
    if dtype.names is not None:
        units = []
        for name in dtype.names:
            fdt, foff = dtype.fields[name][:2]
            units += swap_units(fdt, order, offset + foff)
        return units
    if dtype.subdtype is not None:
        base, sub = dtype.subdtype
        units = []
        for i in range(math.prod(sub)):
            units += swap_units(base, order, offset + i * base.itemsize)
        return units
    # A scalar leaf.  dtype.str resolves native order to '<'/'>' and gives
    # '|' to everything without one (1-byte types, S, V, O).
    if dtype.itemsize <= 1 or dtype.str[0] != order:
        return []
    if dtype.kind == "c":  # real and imaginary parts separately
        half = dtype.itemsize // 2
        return [(offset, half), (offset + half, half)]
    if dtype.kind == "U":  # one UCS4 code unit per character
        return [(offset + 4 * i, 4) for i in range(dtype.itemsize // 4)]
    assert dtype.kind in "iufMm", dtype
    return [(offset, dtype.itemsize)]


def swap_text(units):
    return " ".join("%d:%d" % u for u in sorted(units))


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------

def manifest_row(case, canonical_file):
    """Describe a case from NumPy's own reading of its bytes."""
    major, hlen, offset = preamble(case.data)
    assert offset == len(case.data)
    _, shape, fortran, dtype = numpy_read(case.data)
    if case.origin.startswith("toplevel"):
        dtype, shape = fold_toplevel(dtype, shape)
    got = (npf.dtype_to_descr(dtype), tuple(shape), fortran)
    assert got == case.expect, (case.name, got, case.expect)
    descr = descr_source(case.data)
    assert "\t" not in descr and "\n" not in descr, case.name
    count = math.prod(shape)  # exact Python int; prod(()) == 1
    return [
        case.name, case.name + ".hdr", major, hlen, offset, descr,
        dtype.itemsize, dtype.alignment, len(dtype.names or ()),
        len(shape), ",".join(str(n) for n in shape), int(fortran), count,
        count * dtype.itemsize, int(dtype.hasobject), canonical_file,
    ]


def write_valid(cases):
    """Write the .hdr files, canonical companions and the three .tsv."""
    npgen.clean_dir(VALID_DIR, (".hdr", ".tsv"))

    names = [c.name for c in cases]
    assert len({n.lower() for n in names}) == len(names), "duplicate name"
    assert all(n == n.lower() for n in names)

    manifest, fields, swaps = [], [], []
    for case in cases:
        _, shape, fortran, dtype = numpy_read(case.data)
        if case.origin.startswith("toplevel"):
            canon = canonical_header(*fold_toplevel(dtype, shape), fortran)
        else:
            canon = canonical_header(dtype, shape, fortran)
        if "nogrowth" in case.name:
            assert len(canon) > len(case.data), case.name
        canon_file = npgen.write_case_files(VALID_DIR, case, canon,
                                            case.origin == "save")
        manifest.append(manifest_row(case, canon_file))
        if not case.origin.startswith("toplevel"):
            fields += field_rows(case.name, dtype)
        swaps.append([case.name, swap_text(swap_units(dtype, ">")),
                      swap_text(swap_units(dtype, "<"))])

    write_tsv(MANIFEST, MANIFEST_COLUMNS, manifest)
    write_tsv(FIELDS, FIELD_COLUMNS, fields)
    write_tsv(SWAPS, SWAP_COLUMNS, swaps)


# ---------------------------------------------------------------------------
# Self-check: re-read the written files the way a C test would, and compare
# with NumPy by routes independent of the code that wrote them.
# ---------------------------------------------------------------------------

def check_swaps(text, dtype, order, rng):
    """Apply the listed units to a random element and compare with NumPy's
    own ndarray.byteswap() of the leaves of that byte order (byteswap
    recurses through fields and subarrays and swaps complex halves and UCS4
    characters separately)."""
    units = [tuple(int(x) for x in u.split(":")) for u in text.split()]
    assert units == sorted(units)
    end = 0
    for off, size in units:  # in bounds, not overlapping, real swaps
        assert off >= end and size in (2, 4, 8, 16), units
        end = off + size
    assert end <= dtype.itemsize
    if dtype.itemsize == 0:
        assert units == []
        return
    pattern = bytes(rng.randrange(256) for _ in range(dtype.itemsize))
    mine = bytearray(pattern)
    for off, size in units:
        mine[off:off + size] = pattern[off:off + size][::-1]
    # In place on a buffer of the pattern: a copying byteswap() would not
    # preserve the padding bytes between fields.
    theirs = bytearray(pattern)
    np.frombuffer(theirs, masked_dtype(dtype, order)).byteswap(inplace=True)
    assert theirs == mine, (text, list(theirs))


def check_field_tree(rows, record, depth=0):
    """Check fields.tsv rows (pre-order) against record, recursively.

    rows is consumed from the front (it is shared with the recursive calls,
    which is what makes the order pre-order)."""
    for index, name in enumerate(record.names):
        r = rows.pop(0)
        entry = record.fields[name]
        fdt, offset = entry[0], entry[1]
        title = entry[2] if len(entry) > 2 else None
        assert (int(r["depth"]), int(r["index"])) == (depth, index)
        assert bytes.fromhex(r["name_hex"]).decode("utf-8") == name
        assert r["title_hex"] == ("-" if title is None
                                  else title.encode("utf-8").hex())
        assert int(r["offset"]) == offset
        assert int(r["itemsize"]) == fdt.itemsize
        # The field lies inside its record.
        assert offset + fdt.itemsize <= record.itemsize
        if r["shape"] == "-":
            assert fdt.subdtype is None
            base = fdt
        else:
            base, sub = fdt.subdtype
            assert r["shape"] == ",".join(str(n) for n in sub)
            # The subarray is its base repeated prod(shape) times.
            assert math.prod(sub) * base.itemsize == fdt.itemsize
        assert (r["base_str"], r["base_kind"], int(r["base_itemsize"])) == \
            (base.str, base.kind, base.itemsize)
        inner = innermost(fdt)
        if inner.names is not None:
            check_field_tree(rows, inner, depth + 1)


def check_valid(cases):
    manifest = read_tsv(MANIFEST, MANIFEST_COLUMNS)
    fields = read_tsv(FIELDS, FIELD_COLUMNS)
    swaps = read_tsv(SWAPS, SWAP_COLUMNS)
    assert [r["name"] for r in manifest] == [c.name for c in cases]
    assert [r["case"] for r in swaps] == [c.name for c in cases]
    origin = {c.name: c.origin for c in cases}
    files = set(os.listdir(VALID_DIR))
    expected_files = {"manifest.tsv", "fields.tsv", "swaps.tsv"}
    rng = random.Random(20240601)  # fixed: the check is reproducible too
    field_rows_left = list(fields)

    for r in manifest:
        name = r["name"]
        expected_files.add(r["file"])
        expected_files.add(r["canonical"])
        with open(os.path.join(VALID_DIR, r["file"]), "rb") as f:
            data = f.read()
        major, hlen, offset = preamble(data)
        assert (int(r["version"]), int(r["hlen"]), int(r["data_offset"])) \
            == (major, hlen, offset) and offset == len(data)
        # The descr column is the header's text (re-encoded as UTF-8).
        text = header_text(data)
        assert r["descr"] in text
        descr_value = ast.literal_eval(r["descr"])
        _, shape, fortran, dtype = numpy_read(data)
        elem = dtype
        if origin[name] == "toplevel":
            # NumPy 1.24 parses the header into a subarray dtype but cannot
            # load the data (it reshapes count*prod(sub) items to shape).
            sub = npf.descr_to_dtype(descr_value)
            assert sub.subdtype is not None and sub == dtype
            dtype, shape = fold_toplevel(dtype, shape)
            blob = data + bytes(math.prod(shape) * dtype.itemsize)
            try:
                np.load(io.BytesIO(blob))
                raise AssertionError("NumPy 1.24 loaded " + name)
            except ValueError as e:
                assert "cannot reshape" in str(e), e
        elif origin[name] == "toplevel_string":
            # A type string: NumPy 1.24 loads these (empty, or a subarray
            # of one element) as the base type in the header's shape.
            assert isinstance(descr_value, str)
            sub = np.dtype(descr_value)
            assert sub.subdtype is not None and sub == dtype
            header_shape = shape
            dtype, shape = fold_toplevel(dtype, shape)
            blob = data + bytes(math.prod(shape) * dtype.itemsize)
            got = np.load(io.BytesIO(blob))
            assert got.dtype == dtype and got.shape == header_shape, name
        else:
            assert dtype.names is not None, name
            assert npf.descr_to_dtype(descr_value) == dtype
        count = math.prod(shape)
        assert count * dtype.itemsize < 2**63, name
        assert int(r["itemsize"]) == dtype.itemsize
        assert int(r["alignment"]) == dtype.alignment
        assert int(r["nfields"]) == len(dtype.names or ())
        assert int(r["ndim"]) == len(shape)
        assert r["shape"] == ",".join(str(n) for n in shape)
        assert int(r["fortran"]) == int(fortran)
        assert int(r["count"]) == count
        assert int(r["nbytes"]) == count * dtype.itemsize
        assert int(r["has_object"]) == int(dtype.hasobject)
        if major == 3:  # only when latin-1 cannot encode the text
            try:
                text.encode("latin-1")
                raise AssertionError("needless v3: " + name)
            except UnicodeEncodeError:
                pass

        # Canonical: what np.save writes for the array NumPy loads.
        with open(os.path.join(VALID_DIR, r["canonical"]), "rb") as f:
            canon = f.read()
        if count * dtype.itemsize < 2**20 and not dtype.hasobject:
            # Build the real array and np.save it.
            arr = np.zeros(shape, dtype, order="F" if fortran else "C")
            buf = io.BytesIO()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # v2/v3 warnings
                np.save(buf, arr)
            assert buf.getvalue()[:len(canon)] == canon, name
            assert len(buf.getvalue()) == len(canon) + arr.nbytes
            if not origin[name].startswith("toplevel"):
                # np.load of header + zero data gives that array.
                # (np.load's default max_header_size is 10000 characters;
                # see numpy_read.)
                got = np.load(io.BytesIO(data + bytes(arr.nbytes)),
                              max_header_size=max(10000, len(data)))
                assert got.dtype == dtype and got.shape == tuple(shape)
        else:
            assert canon == canonical_header(dtype, shape, fortran)
        c_shape, c_fortran, c_dtype = numpy_read(canon)[1:]
        assert (c_shape, c_dtype) == (tuple(shape), dtype)
        assert preamble(canon)[2] % 64 == 0 and canon.endswith(b"\n")

        # fields.tsv: the rows of this case, in order, cover the tree.
        mine = [f for f in field_rows_left if f["case"] == name]
        n = len(mine)
        assert field_rows_left[:n] == mine  # contiguous, in case order
        del field_rows_left[:n]
        if origin[name].startswith("toplevel"):
            assert n == 0
        else:
            top = [f for f in mine if f["depth"] == "0"]
            assert len(top) == int(r["nfields"])
            rest = list(mine)
            check_field_tree(rest, dtype)
            assert rest == [], rest[:1]
            # Sizes: fields at depth 0 never exceed the record.
            assert sum(int(f["itemsize"]) for f in top) <= dtype.itemsize

        # swaps.tsv: the element as written (unfolded for toplevel cases).
        s = swaps[manifest.index(r)]
        for col, order in (("swap_on_le", ">"), ("swap_on_be", "<")):
            check_swaps(s[col], elem, order, rng)
        both = s["swap_on_le"].split() + s["swap_on_be"].split()
        assert len(set(both)) == len(both)
    assert field_rows_left == []
    assert files == expected_files, sorted(files ^ expected_files)

    # Spot checks of np.save's version rule: 1.0 while the header is
    # latin-1 and HLEN fits 16 bits, 2.0 when it does not fit, 3.0 (UTF-8)
    # when the text is not latin-1.
    def raw(name):
        with open(os.path.join(VALID_DIR, name + ".hdr"), "rb") as f:
            return f.read()
    # 'é' is latin-1: format 1.0 with the single byte E9.
    assert raw("name_latin1")[6] == 1 and b"[('\xe9', " in raw("name_latin1")
    # Not latin-1: format 3.0, UTF-8 (C4 89 for 'ĉ').
    assert raw("name_non_latin1")[6] == 3
    assert "[('ĉ', ".encode("utf-8") in raw("name_non_latin1")
    # Over 65535 bytes of header: format 2.0.
    big = raw("fields_4000_v2")
    assert big[6] == 2 and preamble(big)[1] > 65535
    return manifest, fields


def main():
    print("NumPy %s, Python %s" % (np.__version__, sys.version.split()[0]))
    cases = numpy_written_cases() + legacy_cases() + toplevel_cases()
    write_valid(cases)
    manifest, fields = check_valid(cases)

    by_origin = {}
    for c in cases:
        by_origin[c.origin] = by_origin.get(c.origin, 0) + 1
    n_canon = sum(r["canonical"] != r["file"] for r in manifest)
    print("records/valid/: %d cases (%s), %d .canon.hdr files"
          % (len(cases), ", ".join("%s %d" % kv for kv in
                                   sorted(by_origin.items())), n_canon))
    for v in (1, 2, 3):
        print("  version %d: %d" % (v, sum(r["version"] == str(v)
                                           for r in manifest)))
    print("fields.tsv: %d rows, max depth %d"
          % (len(fields), max(int(f["depth"]) for f in fields)))
    print("all checks passed")


if __name__ == "__main__":
    main()
