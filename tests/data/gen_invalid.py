#!/usr/bin/python3
"""Generate the malformed-header corpus: tests/data/headers/invalid/.

Run with /usr/bin/python3 (NumPy 1.24). Each case is a file of header bytes
and a manifest row naming the status libnpyio must return and a piece of
text its message must contain. The script checks every case against NumPy:

  rejects   NumPy refuses to read the header too (np.lib.format's reader
            raises); libnpyio must fail the same input.
  refused   NumPy's literal_eval takes it, but no .npy writer produces it,
            and libnpyio refuses it on purpose with a message naming the
            form (documented in npyio.h). The script checks that NumPy
            really does accept it, so the list of deliberate differences
            stays honest.

Also writes headers/repr.tsv: Python's repr() of strings (hex-encoded
UTF-8 in, repr text out), which header emission must reproduce.
"""
import io
import os
import sys

import numpy as np
import numpy.lib.format as npf

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "headers", "invalid")
MAGIC = b"\x93NUMPY"
GOOD = "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }"


def npy(text, version=1, encoding=None, pad=True):
    """Header bytes for `text` (str or bytes) in the given version, padded
    to 64 like np.save unless pad is False."""
    if isinstance(text, str):
        text = text.encode(encoding or ("utf-8" if version == 3 else "latin-1"))
    prefix = 10 if version == 1 else 12
    body = text
    if pad:
        hlen = len(text) + 1
        body = text + b" " * (64 - (prefix + hlen) % 64) + b"\n"
    size = len(body).to_bytes(2 if version == 1 else 4, "little")
    return MAGIC + bytes([version, 0]) + size + body


def raw_hlen(version, hlen, follow=b""):
    """A preamble with an arbitrary length field and what follows it."""
    size = hlen.to_bytes(2 if version == 1 else 4, "little")
    return MAGIC + bytes([version, 0]) + size + follow


def numpy_reads(data):
    """True if NumPy 1.24 loads an array from these header bytes followed
    by the data they promise (zeros, up to 1 MiB: a header promising more
    fails to load, which is NumPy refusing it too). Some header faults
    (bool or overflowing dimensions) only surface when np.load builds the
    array, so the whole load is tried, not just the header reader."""
    fp = io.BytesIO(data)
    try:
        version = npf.read_magic(fp)
        npf._check_version(version)
        shape, _, dtype = npf._read_array_header(fp, version)
        nbytes = dtype.itemsize
        for d in shape:
            nbytes *= int(d)
        np.load(io.BytesIO(data + b"\0" * min(nbytes, 1 << 20)),
                allow_pickle=False)
    except Exception:
        return False
    return True


def cases():
    """(name, bytes, expected status, message needle, 'rejects'|'refused')"""
    c = []

    def add(name, data, status, needle, kind="rejects"):
        c.append((name, data, status, needle, kind))

    def hdr(name, text, status, needle, kind="rejects", version=1):
        add(name, npy(text, version), status, needle, kind)

    # -- preamble
    add("magic_numpx", npy(GOOD).replace(b"NUMPY", b"NUMPX", 1), "FORMAT",
        "not the magic string")
    add("magic_lowercase", npy(GOOD).replace(b"NUMPY", b"numpy", 1), "FORMAT",
        "not the magic string")
    add("magic_zip", b"PK\x03\x04" + b"\x00" * 60, "FORMAT", "ZIP archive")
    add("magic_text", b"hello, world", "FORMAT", "not the magic string")
    for major, minor in ((1, 1), (2, 1), (0, 0), (4, 0), (3, 1), (255, 0)):
        data = bytearray(npy(GOOD))
        data[6:8] = bytes([major, minor])
        add("version_%d_%d" % (major, minor), bytes(data), "UNSUPPORTED",
            "version %d.%d is not supported" % (major, minor))
    add("hlen_beyond_data", raw_hlen(1, 255, b"x" * 57), "TRUNCATED",
        "only 57 follow")
    add("hlen_beyond_data_v2", raw_hlen(2, 1000, GOOD.encode()), "TRUNCATED",
        "says 1000 bytes")
    add("hlen_4gib_v2", raw_hlen(2, 0xFFFFFFFF), "LIMIT",
        "NPYIO_LIMIT_HEADER_SIZE")
    add("hlen_over_limit_v1", raw_hlen(1, 60000, b"{"), "LIMIT",
        "NPYIO_LIMIT_HEADER_SIZE")
    add("hlen_zero", raw_hlen(1, 0), "FORMAT", "ends where a value")
    # -- text and syntax
    hdr("only_newline", "", "FORMAT", "ends where a value")
    add("only_spaces", raw_hlen(1, 4, b"   \n"), "FORMAT", "ends where a value")
    hdr("trailing_token", GOOD + " x", "FORMAT", "the end of the header")
    hdr("unclosed_paren", GOOD.replace("(2,)", "(2,"), "FORMAT",
        "unexpected ','")
    hdr("unclosed_paren_at_end", GOOD.replace("(2,), }", "(2,"), "FORMAT",
        "ends where a value or a closing bracket")
    hdr("unclosed_dict", GOOD[:-1], "FORMAT", "ends where")
    hdr("extra_close", GOOD + "}", "FORMAT", "unexpected '}'")
    hdr("unterminated_string", "{'descr': '<f8, 'fortran_order': False}",
        "FORMAT", "unexpected 'f'")
    hdr("unterminated_at_end", "{'descr': '<f8", "FORMAT",
        "unterminated string")
    hdr("string_line_break", "{'descr': '<f\n8', }", "FORMAT",
        "line break inside quotes")
    hdr("nul_byte", GOOD.replace("<f8", "<f\x008"), "FORMAT", "NUL byte")
    hdr("bare_name_false", GOOD.replace("False", "false"), "FORMAT",
        "bare name 'false'")
    hdr("bare_name_descr", GOOD.replace("'<f8'", "f8"), "FORMAT",
        "bare name 'f8'")
    hdr("call", GOOD.replace("False", "bool(0)"), "FORMAT", "bare name 'bool'")
    hdr("arithmetic", GOOD.replace("(2,)", "(1+1,)"), "FORMAT",
        "unexpected '+'")
    hdr("not_dict_list", "['descr', '<f8']", "FORMAT", "is a list, not a dict")
    hdr("not_dict_tuple", "(1, 2)", "FORMAT", "is a tuple, not a dict")
    hdr("not_dict_set", "{'descr', '<f8'}", "FORMAT", "sets are not supported")
    hdr("not_dict_int", "5", "FORMAT", "is an int, not a dict")
    hdr("empty_dict", "{}", "FORMAT", "key 'descr' is missing")
    hdr("missing_fortran", "{'descr': '<f8', 'shape': (2,), }", "FORMAT",
        "key 'fortran_order' is missing")
    hdr("missing_shape", "{'descr': '<f8', 'fortran_order': False, }",
        "FORMAT", "key 'shape' is missing")
    hdr("extra_key", GOOD.replace("}", "'x': 1, }"), "FORMAT",
        "unexpected key 'x'")
    hdr("bytes_key", GOOD.replace("'descr'", "b'descr'"), "FORMAT",
        "a key is a bytes literal")
    hdr("int_key", GOOD.replace("}", "1: 1, }"), "FORMAT", "a key is an int")
    hdr("colon_missing", "{'descr' '<f8'}", "FORMAT",
        "unexpected \"'\" where ':' after a dict key")
    hdr("value_missing", "{'descr': , }", "FORMAT", "unexpected ','")
    # -- shape
    hdr("shape_list", GOOD.replace("(2,)", "[2]"), "FORMAT",
        "'shape' is a list, not a tuple")
    hdr("shape_int", GOOD.replace("(2,)", "2"), "FORMAT",
        "'shape' is an int, not a tuple")
    hdr("shape_paren_int", GOOD.replace("(2,)", "(2)"), "FORMAT",
        "'shape' is an int, not a tuple")
    hdr("shape_float", GOOD.replace("(2,)", "(2.0,)"), "FORMAT",
        "floating-point")
    hdr("shape_complex", GOOD.replace("(2,)", "(1+1j,)"), "FORMAT",
        "unexpected '+'")
    hdr("shape_nested", GOOD.replace("(2,)", "((2,),)"), "FORMAT",
        "shape entry 0 is a tuple")
    hdr("shape_string", GOOD.replace("(2,)", "('2',)"), "FORMAT",
        "shape entry 0 is a string")
    hdr("shape_none", GOOD.replace("(2,)", "(None,)"), "FORMAT",
        "shape entry 0 is None")
    hdr("shape_bool", GOOD.replace("(2,)", "(True, True)"), "FORMAT",
        "shape entry 0 is True")
    hdr("shape_negative", GOOD.replace("(2,)", "(-2,)"), "FORMAT",
        "shape entry 0 is negative (-2)")
    hdr("shape_two_negative", GOOD.replace("(2,)", "(3, -1, -2)"), "FORMAT",
        "shape entry 1 is negative (-1)")
    hdr("shape_int64_min", GOOD.replace("(2,)", "(-9223372036854775808,)"),
        "FORMAT", "is negative")
    hdr("shape_2p63", GOOD.replace("(2,)", "(9223372036854775808,)"),
        "OVERFLOW", "does not fit in 64 bits")
    hdr("shape_huge", GOOD.replace("(2,)", "(99999999999999999999999,)"),
        "OVERFLOW", "integer 99999999999999999999999 does not fit")
    hdr("shape_count_overflow",
        GOOD.replace("(2,)", "(4294967296, 4294967296)"), "OVERFLOW",
        "more elements than a 64-bit count")
    hdr("shape_nbytes_overflow", GOOD.replace("(2,)", "(4611686018427387904,)"),
        "OVERFLOW", "more bytes than a 64-bit size")
    # NumPy's size rule holds for empty arrays too: the itemsize times the
    # dimensions other than 0 must fit in int64 ("array is too big").
    hdr("shape_empty_too_big", GOOD.replace("(2,)", "(0, %d)" % 2**60),
        "OVERFLOW", "array is too big")
    hdr("shape_empty_too_big_3d",
        GOOD.replace("(2,)", "(%d, %d, 0)" % (2**30, 2**30)), "OVERFLOW",
        "array is too big")
    hdr("shape_empty_too_big_i2",
        GOOD.replace("'<f8'", "'<i2'").replace("(2,)", "(%d, 0)" % 2**62),
        "OVERFLOW", "array is too big")
    hdr("shape_leading_zero", GOOD.replace("(2,)", "(02,)"), "FORMAT",
        "leading zeros")
    hdr("shape_empty_comma", GOOD.replace("(2,)", "(,)"), "FORMAT",
        "unexpected ','")
    hdr("shape_65_dims", GOOD.replace("(2,)", "(" + "1, " * 65 + ")"),
        "LIMIT", "NPYIO_LIMIT_NDIM")
    hdr("shape_long_suffix_v3", GOOD.replace("(2,)", "(2L,)"), "FORMAT",
        "not allowed in a format 3.0 header", version=3)
    hdr("shape_lowercase_l", GOOD.replace("(2,)", "(2l,)"), "FORMAT",
        "lowercase 'l'")
    # -- fortran_order
    hdr("fortran_int", GOOD.replace("False", "0"), "FORMAT",
        "'fortran_order' is an int, not True or False")
    hdr("fortran_string", GOOD.replace("False", "'False'"), "FORMAT",
        "'fortran_order' is a string")
    hdr("fortran_none", GOOD.replace("False", "None"), "FORMAT",
        "'fortran_order' is None")
    # -- descr
    for name, descr, status, needle in (
            ("descr_x8", "'<x8'", "FORMAT", "unknown type or size"),
            ("descr_empty", "''", "FORMAT", "no type is named"),
            ("descr_i3", "'<i3'", "FORMAT", "unknown type or size"),
            ("descr_f3", "'f3'", "FORMAT", "unknown type or size"),
            ("descr_bad_unit", "'<M8[xx]'", "FORMAT", "datetime unit"),
            ("descr_unit_on_f8", "'<f8[s]'", "FORMAT", "only datetime64"),
            ("descr_order_word", "'<float64'", "FORMAT",
             "cannot precede a type name"),
            ("descr_int", "8", "FORMAT", "it is an int"),
            ("descr_none", "None", "FORMAT", "it is None"),
            ("descr_bytes", "b'<f8'", "FORMAT", "it is a bytes literal"),
            ("descr_true", "True", "FORMAT", "it is True"),
            ("descr_high_byte", "'<f8\xe9'", "FORMAT", "not a valid dtype"),
    ):
        hdr(name, GOOD.replace("'<f8'", descr), status, needle)
    # -- record descrs NumPy 1.24 refuses (too few or many items, a string
    # or dict for a field, a name or title used twice, names that are not
    # strings, a tuple for the list, field metadata), and more
    for name, descr, status, needle in (
            ("record_one_item", "[('a',)]", "FORMAT",
             "not a tuple of 1 items"),
            ("record_four_items", "[('a', '<f8', (1,), 1)]", "FORMAT",
             "of 4 items"),
            ("record_string_field", "['<f8']", "FORMAT", "not a string of"),
            ("record_dict_field", "[{'a': '<f8'}]", "FORMAT", "not a dict"),
            ("record_duplicate_name", "[('a', '<f8'), ('a', '<f8')]",
             "FORMAT", "field name 'a' is already used"),
            ("record_title_is_name", "[(('a', 'a'), '<i4')]", "FORMAT",
             "title 'a' is already used"),
            ("record_title_is_other_name",
             "[(('b', 'a'), '<i4'), ('b', '<i4')]", "FORMAT",
             "field name 'b' is already used"),
            ("record_int_name", "[(1, '<i4')]", "FORMAT",
             "field names must be strings"),
            ("record_bytes_name", "[(b'a', '<i4')]", "FORMAT",
             "field names must be strings"),
            ("record_title_name_int", "[(('t', 1), '<i4')]", "FORMAT",
             "field names must be strings, not an int"),
            ("record_tuple_of_fields", "(('a', '<f8'),)", "FORMAT",
             "not a 1-tuple"),
            ("record_metadata", "[('a', ('<i4', {'k': 1}))]", "FORMAT",
             "a subarray shape is a dict"),
            ("record_bad_field_type", "[('a', '<x4')]", "FORMAT",
             "unknown type or size"),
            ("record_negative_subarray", "[('a', '<f8', (-1,))]", "FORMAT",
             "subarray dimension 0 is negative"),
            ("record_negative_int_shape", "[('a', '<f8', -2)]", "FORMAT",
             "subarray dimension is negative (-2)"),
            ("record_float_subarray", "[('a', '<f8', (2.5,))]", "FORMAT",
             "floating-point"),
            ("record_none_descr", "[('a', None)]", "FORMAT", "it is None"),
            ("record_huge_subarray", "[('a', '<f8', (1000000, 1000000))]",
             "OVERFLOW", "above NumPy's limit"),
            ("subarray_three_items", "('<f8', (2,), 1)", "FORMAT",
             "not a 3-tuple"),
            # Each subarray dimension must fit in a C int, even beside a 0.
            ("subarray_dim_over_int", "[('a', '<f8', (0, 2147483648))]",
             "OVERFLOW", "above NumPy's limit of 2147483647 (a C int)"),
            ("subarray_folded_65_dims", "('<f8', (%s))" % ("1, " * 64),
             "LIMIT", "65 dimensions (1 + 64)"),
            # Type strings with a shape are subarrays; NumPy reads such a
            # descr only when the array is empty or the subarray has one
            # element ("cannot reshape array of size 6 into shape (2,)").
            ("string_subarray", "'(3,)<f8'", "FORMAT",
             "is a subarray type string"),
            ("string_subarray_empty_sub", "'(0,)<f8'", "FORMAT",
             "is a subarray type string"),
            ("string_subarray_leading_int", "'3<f8'", "FORMAT",
             "is a subarray type string"),
            # Comma-separated type strings as np.dtype() parses them.
            ("comma_bad_item", "'i4,x8'", "FORMAT",
             "format number 2: type string \"x8\": unknown type"),
            # The second ',' is taken as an item's shape, which Python
            # cannot evaluate (NumPy: SyntaxError).
            ("comma_empty_item", "'i4,,f8'", "FORMAT",
             "not an int or a tuple of ints"),
            # Two explicit orders that differ: refused on every host. ('='
            # is the host's order to NumPy's _commastring: '=(2,)>i2' is
            # refused on a little-endian host and read on a big-endian
            # one; comma_strings.tsv has both answers.)
            ("comma_two_orders", "'i4,<(2,)>i2'", "FORMAT",
             "two different byte orders"),
            ("comma_bad_shape", "'i4,(2,,3)f8'", "FORMAT",
             "not an int or a tuple of ints"),
            ("comma_shape_on_s", "'i4,(2,)S'", "FORMAT",
             "the size of a type without one"),
            ("subarray_bad_shape", "('<f8', 'x')", "FORMAT",
             "a subarray shape is a string"),
    ):
        hdr(name, GOOD.replace("'<f8'", descr), status, needle)
    hdr("string_subarray_0d",
        "{'descr': '(2,)<f8', 'fortran_order': False, 'shape': (), }",
        "FORMAT", "is a subarray type string")
    # A valid record nested 20 deep: 41 brackets, beyond the default
    # NPYIO_LIMIT_DEPTH of 32 (NumPy has no such limit).
    hdr("record_nested_too_deep",
        GOOD.replace("'<f8'", "[('a', " * 20 + "'<i4'" + ")]" * 20), "LIMIT",
        "NPYIO_LIMIT_DEPTH", kind="refused")
    hdr("record_title_not_string", GOOD.replace("'<f8'", "[((1, 'a'), '<i4')]"),
        "UNSUPPORTED", "only string titles are supported", kind="refused")

    # -- encodings
    add("v1_stray_high_byte", npy(GOOD.replace("False", "False\x80")),
        "FORMAT", "unexpected '\\x80'")
    add("v3_latin1_byte", npy(GOOD.replace("<f8", "<f8\xe9").encode("latin-1"),
                              version=3), "FORMAT", "invalid UTF-8")
    add("v3_overlong", npy(GOOD.encode().replace(b"<f8", b"<f8\xc0\x80"),
                           version=3), "FORMAT", "invalid UTF-8")
    add("v3_surrogate", npy(GOOD.encode().replace(b"<f8", b"<f8\xed\xa0\x80"),
                            version=3), "FORMAT", "invalid UTF-8")
    add("v3_truncated_sequence",
        npy(GOOD.encode().replace(b"<f8", b"<f8\xe2\x82"), version=3),
        "FORMAT", "invalid UTF-8")
    # -- limits
    hdr("over_10000_chars", GOOD[:-1] + " " * 10000 + "}", "LIMIT",
        "NPYIO_LIMIT_HEADER_SIZE")
    hdr("nesting_40_deep",
        GOOD.replace("'<f8'", "[" * 40 + "]" * 40), "LIMIT",
        "NPYIO_LIMIT_DEPTH")
    # -- escapes
    hdr("escape_truncated_x", GOOD.replace("<f8", "\\x3"), "FORMAT",
        "truncated \\x")
    # -- forms NumPy's literal_eval takes but no writer writes: refused
    for name, text, needle in (
            ("refused_hex", GOOD.replace("(2,)", "(0x2,)"), "hexadecimal"),
            ("refused_octal", GOOD.replace("(2,)", "(0o2,)"), "octal"),
            ("refused_underscore", GOOD.replace("(2,)", "(1_0,)"), "'_'"),
            ("refused_comment", GOOD + " # note", "comments"),
            ("refused_concat", GOOD.replace("'<f8'", "'<' 'f8'"),
             "implicit string concatenation"),
            ("refused_triple", GOOD.replace("'<f8'", "'''<f8'''"),
             "triple-quoted"),
            ("refused_raw", GOOD.replace("'<f8'", "r'<f8'"), "raw"),
            ("refused_continuation", GOOD.replace(", 'shape'", ", \\\n'shape'"),
             "line continuation"),
            ("refused_named_escape",
             GOOD.replace("'<f8'", "'\\N{LESS-THAN SIGN}f8'"), "\\N{"),
    ):
        if needle is None:
            continue
        hdr(name, text, "FORMAT", needle, kind="refused")
    return c


# Python repr() of str, for emission of names: inputs chosen to hit every
# rule (quote choice, escapes, printable and non-printable characters).
REPR_INPUTS = [
    "", "a", "<f8", "a'b", 'a"b', "a'b\"c", "a\\b", "a\nb\tc\rd", "\x00\x1f",
    "\x7f", "caf\xe9", "\xa0", "\xad", "\xa1\xff", "\u0109", "\u200b",
    "\u2028", "\ufeff", "\U0001f600", "\U000e0001", "\u0378", "\ue000",
    "\uffff", "\U0010ffff", "x" * 3, "\u3000", "\u00b7", "\u0600",
]


def write_all():
    os.makedirs(OUT, exist_ok=True)
    for fn in os.listdir(OUT):
        os.remove(os.path.join(OUT, fn))
    rows = []
    names = set()
    for name, data, status, needle, kind in cases():
        assert name not in names, name
        names.add(name)
        accepted = numpy_reads(data)
        if kind == "rejects":
            assert not accepted, "NumPy reads %s" % name
        else:
            assert accepted, "NumPy refuses %s (not a deliberate refusal)" % name
        with open(os.path.join(OUT, name + ".bin"), "wb") as f:
            f.write(data)
        rows.append("\t".join((name, name + ".bin", status, needle, kind)))
    with open(os.path.join(OUT, "manifest.tsv"), "w") as f:
        f.write("#name\tfile\tstatus\tneedle\tnumpy\n")
        f.write("\n".join(rows) + "\n")
    with open(os.path.join(HERE, "headers", "repr.tsv"), "w",
              encoding="utf-8") as f:
        f.write("#input_utf8_hex\trepr\n")
        for s in REPR_INPUTS:
            f.write("%s\t%s\n" % (s.encode("utf-8").hex(), repr(s)))
    return len(rows)


if __name__ == "__main__":
    print("NumPy", np.__version__, "Python", sys.version.split()[0])
    n = write_all()
    print("%d invalid headers written and checked against NumPy" % n)
