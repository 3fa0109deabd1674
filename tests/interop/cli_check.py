#!/usr/bin/env python3
"""Interop test of the `npyio` command (ctest label `interop`):

    cli_check.py --tool PATH/npyio --data tests/data

- `info --json` of every file in tests/data/arrays equals NumPy's facts;
- `dump` equals NumPy's C-ordered, native-order bytes;
- `validate` accepts every valid file;
- `convert` with every --order and --byteorder: byte-identical to np.save of
  NumPy's converted array (records: the header byte for byte and the values
  field by field, since NumPy leaves record padding uninitialised), from
  files and from pipes; a failed convert leaves an existing OUT untouched;
- every malformed header of tests/data/headers/invalid through info,
  validate and dump: exit 1 with a message on stderr, never a signal;
- usage errors exit 2;
- a header beyond NumPy's 10000-character read limit (hundreds of record
  fields) with --max-header-size raised: convert to either order, from C
  and Fortran files and pipes, and dump, byte-identical to NumPy's;
- object arrays: `validate` walks the pickle's opcodes (protocols 0-5, as
  NumPy and pickle.dumps write them): complete pickles (with bytes after
  STOP, which pickle.load ignores) are valid; every cut of one, an unknown
  opcode, a negative or huge length exit 1 naming the problem and the byte;
- file names with control, non-printable and non-UTF-8 bytes appear
  escaped (as Python's repr of os.fsdecode(name) without the quotes) in
  messages and `info` text, and exactly (JSON-escaped) as "path" in
  `info --json`;
- `print a.npy b.npy` and `dump a.npy b.npy` explain MEMBER; the help
  documents it;
- `print` of empty bool arrays, long doubles (more than 8 decimals, 0-d,
  complex), elements over 4 MiB and generic datetime64/timedelta64 is
  NumPy's repr; the long double size NumPy lacks on this host (f12 or f16)
  prints as raw hex, most significant byte first, and datetime64[Y] past
  the last representable year as its integer;
- `info` of a file whose data is one byte short (every corpus array with
  data), from the file and from a pipe: the header's facts as NumPy reads
  them from the cut file, then the error, exit 1; `info --json` and
  `info --short` print no line for it.
Prints "N passed, M failed"; exits 77 without NumPy.
"""
import argparse
import io
import json
import os
import re
import pickle
import pickletools
import subprocess
import sys
import tempfile

from tally import Tally

try:
    import numpy as np
    import numpy.lib.format as npf
except ImportError:
    print("NumPy is not available: skipped")
    sys.exit(77)

from npyfacts import npy_facts  # noqa: E402 (needs NumPy)


def facts(path):
    """What `npyio info --json` must say, from NumPy."""
    with open(path, "rb") as f:
        return npy_facts(f)[0]


ORDERS = {"native": "=", "little": "<", "big": ">"}


def saved(a):
    f = io.BytesIO()
    np.save(f, a)
    return f.getvalue()


def convert_expectation(a, order, byteorder):
    """np.save's bytes for the converted array, and the array itself."""
    b = a.astype(a.dtype.newbyteorder(ORDERS[byteorder]))
    # Not np.ascontiguousarray: in NumPy 1.x it makes 0-d arrays 1-d.
    b = b.copy(order=order)
    return saved(b), b


def same_output(got, want, b):
    """got equals np.save's bytes; for records, equal header and values."""
    if b.dtype.names is None:
        return got == want
    offset = len(want) - b.nbytes
    if got[:offset] != want[:offset] or len(got) != len(want):
        return False
    loaded = np.load(io.BytesIO(got))
    return loaded.dtype == b.dtype and bool((loaded == b).all())


def shown_name(raw):
    """How the tool shows a file name in text: Python's repr() of the name
    decoded as os.fsdecode does (bad bytes as \\udcXX), without the quotes
    (the names tested here hold no quote)."""
    return repr(raw.decode("utf-8", "surrogateescape"))[1:-1].encode()


def plain_text(b):
    """No raw control or non-UTF-8 bytes, besides the line ends."""
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return all(c >= 0x20 and c != 0x7F for c in b.replace(b"\n", b""))


def check_big_header(check, run, tmp):
    """Issue 14 item 21: a header beyond NumPy's 10000-character read limit,
    through every reader the tool opens (the reversed view of convert
    --order F, the temporary copy of a pipe), with --max-header-size."""
    a = np.zeros((2, 3), dtype=[("f%d" % i, "<i4") for i in range(800)],
                 order="F")
    for i in range(0, 800, 7):
        a["f%d" % i] = np.arange(6).reshape(2, 3) * (i + 1)
    limit = "--max-header-size=1000000"
    out = os.path.join(tmp, "big_out.npy")
    for layout in "CF":
        path = os.path.join(tmp, "big_%s.npy" % layout)
        np.save(path, a.copy(order=layout))
        check(facts(path)["header_len"] > 10000, "big header: %s" % path)
        for order in "CF":
            want = saved(a.copy(order=order))
            r = run("convert", limit, "--order", order, path, out)
            with open(out, "rb") as f:
                got = f.read()
            check(r.returncode == 0 and got == want,
                  "convert --order %s of a %s-order file with an 800-field "
                  "header: exit %d %s" % (order, layout, r.returncode,
                                          r.stderr[:300]))
            with open(path, "rb") as f:
                r = run("convert", limit, "--order", order, "-", "-",
                        stdin=f)
            check(r.returncode == 0 and r.stdout == want,
                  "convert --order %s - - (%s-order, 800 fields): exit %d %s"
                  % (order, layout, r.returncode, r.stderr[:300]))
        want = np.ascontiguousarray(a).tobytes()
        r = run("dump", limit, path)
        check(r.returncode == 0 and r.stdout == want,
              "dump of a %s-order file with an 800-field header: exit %d %s"
              % (layout, r.returncode, r.stderr[:300]))
        with open(path, "rb") as f:
            r = run("dump", limit, "-", stdin=f)
        check(r.returncode == 0 and r.stdout == want,
              "dump - of a %s-order file with an 800-field header: exit %d %s"
              % (layout, r.returncode, r.stderr[:300]))
        # and a limit below the header is honoured too
        r = run("convert", "--max-header-size=5000", "--order", "F", path,
                out)
        check(r.returncode == 1 and b"NPYIO_LIMIT_HEADER_SIZE" in r.stderr,
              "convert --max-header-size=5000 of an 800-field header: "
              "exit %d %s" % (r.returncode, r.stderr[:300]))
    os.remove(out)


def object_items():
    """Objects exercising most opcodes of protocols 0-5: small, long and
    huge ints, floats, short and long str and bytes, containers, a shared
    list (memo GET), bytearray (BYTEARRAY8 in protocol 5), sets."""
    shared = [7, 8]
    return [1, "a", None, [1, 2], 2**70, -2**40, 300, 70000, 1.5,
            b"xy", "\u00e9" * 300, b"q" * 300, {"k": (1, 2)}, {1, 2},
            frozenset([3]), bytearray(b"z"), True, False, 2**3000,
            shared, shared, (), (1,), (1, 2, 3, 4)]


def object_array(items):
    a = np.empty(len(items), dtype=object)
    for i, x in enumerate(items):
        a[i] = x
    return a


def npy_with_data(path, a, data):
    """Write np.save's header for a, followed by data (the pickle)."""
    whole = saved(a)
    major = whole[6]
    hlen = int.from_bytes(whole[8:10] if major == 1 else whole[8:12],
                          "little")
    offset = (10 if major == 1 else 12) + hlen
    with open(path, "wb") as f:
        f.write(whole[:offset] + data)
    return offset


def numpy_loads(path):
    try:
        np.load(path, allow_pickle=True)
        return True
    except Exception:  # noqa: BLE001 (any failure: NumPy refuses it)
        return False


def validate_lines(run, paths, stdin=None):
    """Run validate over paths; per path, its stdout or stderr line."""
    r = run("validate", *paths, stdin=stdin)
    lines = {}
    for line in r.stdout.splitlines() + r.stderr.splitlines():
        for p in paths:
            for prefix in (p.encode() + b": ", b"npyio: " + p.encode() + b": "):
                if line.startswith(prefix):
                    lines[p] = line[len(prefix):]
    return r, lines


def check_pickles(check, run, tmp):
    """Issue 14 item 22: validate walks an object array's pickle."""
    a = object_array(object_items())
    d = os.path.join(tmp, "pickles")
    os.mkdir(d)
    # What NumPy itself writes (protocol 3), then every protocol.
    path = os.path.join(d, "numpy.npy")
    np.save(path, a, allow_pickle=True)
    r = run("validate", path)
    check(r.returncode == 0 and r.stdout == path.encode() + b": valid\n",
          "validate np.save's object array: %r" % r.stderr)
    for proto in range(6):
        data = pickle.dumps(a, protocol=proto)
        ops = [(op.name, pos) for op, _, pos in pickletools.genops(data)]
        whole = os.path.join(d, "p%d.npy" % proto)
        offset = npy_with_data(whole, a, data)
        extra = os.path.join(d, "p%d_extra.npy" % proto)
        npy_with_data(extra, a, data + b"trailing garbage \x00\xff\x80")
        r, lines = validate_lines(run, [whole, extra])
        check(r.returncode == 0 and lines.get(whole) == b"valid" and
              lines.get(extra) == b"valid" and numpy_loads(whole) and
              numpy_loads(extra),
              "validate protocol %d pickle (with bytes after STOP): %r %r"
              % (proto, r.stdout, r.stderr[:300]))
        with open(whole, "rb") as f:
            r = run("validate", "-", stdin=f)
        check(r.returncode == 0 and r.stdout == b"-: valid\n",
              "validate - (protocol %d): %r" % (proto, r.stderr))
        # Every cut: a truncated argument names its opcode and where it
        # starts; a cut between opcodes has no STOP. NumPy fails on each.
        cuts, paths = {}, []
        for n in range(len(data)):
            p = os.path.join(d, "p%d_cut%d.npy" % (proto, n))
            npy_with_data(p, a, data[:n])
            cuts[p] = n
            paths.append(p)
        r, lines = validate_lines(run, paths)
        bad = []
        for p in paths:
            n = cuts[p]
            name, pos = [(o, q) for o, q in ops if q <= n][-1] \
                if n > 0 else ("", 0)
            line = lines.get(p, b"")
            if n == pos:
                ok = b"without STOP" in line
            else:
                ok = (line.startswith(b"pickle byte %d (file byte %d): "
                                      b"opcode %s: " % (pos, offset + pos,
                                                        name.encode()))
                      and b"truncated" in line)
            if not ok or numpy_loads(p):
                bad.append((n, name, pos, line))
        check(r.returncode == 1 and not bad and len(lines) == len(paths),
              "validate of every cut of a protocol %d pickle: %d wrong, "
              "first %r" % (proto, len(bad), bad[:1]))
        for p in paths:
            os.remove(p)
        # An unknown opcode where the third opcode was.
        at = ops[2][1]
        for code in (b"\xff", b"\x00", b"A"):
            p = os.path.join(d, "unknown.npy")
            npy_with_data(p, a, data[:at] + code + data[at + 1:])
            r = run("validate", p)
            want = (b"npyio: %s: pickle byte %d (file byte %d): unknown "
                    b"opcode 0x%02x\n" % (p.encode(), at, offset + at,
                                          code[0]))
            check(r.returncode == 1 and r.stderr == want and
                  not numpy_loads(p),
                  "unknown opcode %r in protocol %d: %r"
                  % (code, proto, r.stderr))
        with open(whole[:-4] + "_cut.npy", "wb") as f:
            f.write(open(whole, "rb").read()[:offset + len(data) // 2])
        with open(whole[:-4] + "_cut.npy", "rb") as f:
            r = run("validate", "-", stdin=f)
        check(r.returncode == 1 and r.stderr.startswith(b"npyio: -: ") and
              (b"truncated" in r.stderr or b"without STOP" in r.stderr),
              "validate - of a cut protocol %d pickle: %r"
              % (proto, r.stderr))

    # Hand-made pickles: hostile lengths never allocate or overflow.
    def u(n, size):
        return n.to_bytes(size, "little")
    hostile = [  # (what, data, the opcode's byte or None, message)
        ("LONG4 negative", b"\x80\x02\x8b" + u(2**32 - 1, 4) + b".", 2,
         b"opcode LONG4: negative length -1\n"),
        ("BINSTRING negative", b"T" + u(2**32 - 2, 4) + b"ab.", 0,
         b"opcode BINSTRING: negative length -2\n"),
        ("BINBYTES8 huge", b"\x80\x04\x8e" + u(2**63, 8) + b"abc.", 2,
         b"opcode BINBYTES8: its argument is truncated: the data ends at "
         b"pickle byte 15\n"),
        ("BINUNICODE8 max", b"\x80\x04\x8d" + u(2**64 - 1, 8) + b".", 2,
         b"opcode BINUNICODE8: its argument is truncated: the data ends at "
         b"pickle byte 12\n"),
        ("BINUNICODE max", b"X" + u(2**32 - 1, 4) + b"abc.", 0,
         b"opcode BINUNICODE: its argument is truncated: the data ends at "
         b"pickle byte 9\n"),
        ("FRAME past the end", b"\x80\x04\x95" + u(100, 8) + b"N.", 2,
         b"FRAME of 100 bytes runs past the end of the data at pickle "
         b"byte 13\n"),
        ("FRAME of 2**64-1", b"\x80\x04\x95" + u(2**64 - 1, 8) + b"N.", 2,
         b"FRAME of 18446744073709551615 bytes runs past the end of the "
         b"data at pickle byte 13\n"),
        ("protocol 6", b"\x80\x06N.", 0,
         b"PROTO 6: pickle protocols above 5 are unknown\n"),
        ("out-of-band buffer", b"\x80\x05\x97.", 2,
         b"opcode NEXT_BUFFER: an out-of-band buffer, which np.load cannot "
         b"supply\n"),
        ("GLOBAL without its second line", b"c__builtin__\nlist", 0,
         b"opcode GLOBAL: its argument is truncated: the data ends at "
         b"pickle byte 17\n"),
        ("empty data", b"", None,
         b"the pickle ends after 0 bytes without STOP: the data is cut "
         b"short\n"),
    ]
    for what, data, pos, message in hostile:
        p = os.path.join(d, "hostile.npy")
        offset = npy_with_data(p, a, data)
        if pos is not None:
            message = (b"pickle byte %d (file byte %d): " % (pos, offset + pos)
                       + message)
        r = run("validate", p)
        check(r.returncode == 1 and r.stdout == b"" and
              r.stderr == b"npyio: " + p.encode() + b": " + message and
              not numpy_loads(p),
              "validate %s: exit %d %r" % (what, r.returncode, r.stderr))
    # A frame that ends after STOP but within the data, and a protocol 0
    # pickle of every text opcode, are whole.
    for what, data in (
            ("FRAME beyond STOP", b"\x80\x04\x95" + u(5, 8) + b"N.xyz"),
            ("text opcodes", b"(I1\nL2L\nF1.5\nS'x'\nVy\np0\ng0\nl"
                             b"c__builtin__\nlist\n(tR.")):
        p = os.path.join(d, "whole.npy")
        npy_with_data(p, a, data)
        r = run("validate", p)
        check(r.returncode == 0 and r.stdout == p.encode() + b": valid\n",
              "validate %s: %r" % (what, r.stderr))

    # Pickles of several MiB: many reads, arguments across them.
    big = object_array([b"x" * 3000000, "y" * 2000001, list(range(50000))])
    path = os.path.join(d, "big.npy")
    np.save(path, big, allow_pickle=True)
    with open(path, "rb") as f:
        whole = f.read()
    short = os.path.join(d, "big_short.npy")
    with open(short, "wb") as f:
        f.write(whole[:-1])
    r, lines = validate_lines(run, [path, short])
    check(r.returncode == 1 and lines.get(path) == b"valid" and
          b"without STOP" in lines.get(short, b""),
          "validate of a 5 MB pickle and of it cut by one byte: %r"
          % r.stderr)
    for p, want in ((path, b"-: valid\n"), (short, b"")):
        with open(p, "rb") as f:
            r = run("validate", "-", stdin=f)
        check(r.stdout == want and r.returncode == (0 if want else 1),
              "validate - of %s: %r" % (p, r.stderr))
    for name in os.listdir(d):
        os.remove(os.path.join(d, name))
    os.rmdir(d)


def check_names(check, run, tmp):
    """Issue 14 items 23 and 24: file names in text are escaped; in
    info --json "path" is the argument exactly."""
    base = os.fsencode(tmp)
    odd = (base + b"/odd\x1b[31m\tname\x7f\xff\xcd\xb8\xe2\x80\xae"
           b"\xf3\xa0\x80\x81\\.npy")
    np.save(os.fsdecode(odd), np.arange(3))
    shown = shown_name(odd)
    check(b"\\x1b" in shown and b"\\udcff" in shown and b"\\u0378" in shown
          and b"\\u202e" in shown and b"\\U000e0001" in shown and
          b"\\\\" in shown,
          "expected escaping: %r" % shown)
    r = run("info", odd)
    check(r.returncode == 0 and r.stdout.startswith(shown + b":\n") and
          plain_text(r.stdout), "info of an odd name: %r" % r.stdout[:200])
    r = run("validate", odd)
    check(r.returncode == 0 and r.stdout == shown + b": valid\n",
          "validate of an odd name: %r" % r.stdout)
    missing = base + b"/gone\x07\n\xc3.npy"
    r = run("info", missing)
    check(r.returncode == 1 and r.stderr == b"npyio: " + shown_name(missing) +
          b": No such file or directory\n",
          "a missing odd name: %r" % r.stderr)
    short = base + b"/short\x01\x9b.npy"
    with open(os.fsdecode(odd), "rb") as f:
        head = f.read(40)
    with open(os.fsdecode(short), "wb") as f:
        f.write(head)
    for words in (["info"], ["validate"], ["print"], ["dump"],
                  ["convert", os.devnull]):
        r = run(words[0], short, *words[1:])
        check(r.returncode == 1 and
              r.stderr.startswith(b"npyio: " + shown_name(short) + b": ") and
              plain_text(r.stderr),
              "%s of a short odd name: %r" % (words[0], r.stderr))
    r = run("print", odd, b"member\x1b")
    check(r.returncode == 1 and plain_text(r.stderr) and
          shown in r.stderr, "print odd member: %r" % r.stderr)
    out = base + b"/no\x1bdir/out\x08.npy"
    r = run("convert", odd, out)
    check(r.returncode == 1 and plain_text(r.stderr) and
          shown_name(out) in r.stderr,
          "convert to an odd name that fails: %r" % r.stderr)

    for words in ([b"info", b"--bad\x1b[2J"], [b"frob\x1b[2J"]):
        r = run(*words)
        check(r.returncode == 2 and plain_text(r.stderr) and
              b"\\x1b[2J" in r.stderr, "usage error %r: %r" % (words, r.stderr))

    # info --json: "path" is the argument as given; a failing file has no
    # line, so the paths say which lines are which.
    with open(os.fsdecode(odd), "rb") as f:
        r = run("info", "--json", odd, missing, "-", short, stdin=f)
    lines = r.stdout.splitlines()
    objs = [json.loads(line) for line in lines]
    check(r.returncode == 1 and len(objs) == 2 and
          os.fsencode(objs[0]["path"]) == odd and objs[1]["path"] == "-" and
          all(plain_text(line) for line in lines) and
          all(dict(o, path=None) == dict(facts(os.fsdecode(odd)), path=None)
              for o in objs),
          "info --json paths: %r" % r.stdout)
    rel = os.path.relpath(os.fsdecode(odd))
    for given in ("./" + rel, rel + "", os.fsdecode(odd)):
        r = run("info", "--json", given)
        check(r.returncode == 0 and json.loads(r.stdout)["path"] == given,
              "info --json path %r: %r" % (given, r.stdout))
    for p in (odd, short):
        os.remove(p)


def check_member(check, run, tmp):
    """Issue 14 item 25: a second argument of print or dump is a MEMBER."""
    path = os.path.join(tmp, "one.npy")
    np.save(path, np.arange(3))
    for command in ("print", "dump"):
        r = run(command, path, "two.npy")
        want = ("npyio: %s: a second argument is a MEMBER "
                "name (of an array in an .npz archive), and %s is an .npy "
                "file, which has no members\n" % (command, path)).encode()
        check(r.returncode == 1 and r.stdout == b"" and r.stderr == want,
              "%s a.npy b.npy: %r" % (command, r.stderr))
        r = run(command, "--help")
        check(r.returncode == 0 and b"[MEMBER]" in r.stdout and
              b"MEMBER" in r.stdout.split(b"\n", 1)[1] and
              b".npz" in r.stdout,
              "%s --help documents MEMBER: %r" % (command, r.stdout))
    os.remove(path)


def npy_bytes(descr, shape, data, fortran=False):
    """An .npy file as np.save lays it out, for a descr NumPy may not have
    on this host (the other platforms' long doubles)."""
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': %r, }" % (
        descr, fortran, tuple(shape))
    n = 10 + len(d) + 1
    d += " " * (-n % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(d).to_bytes(2, "little") + \
        d.encode() + data


def check_print_more(check, run, tmp):
    """print as NumPy's repr: empty bool arrays (dtype shown), long doubles
    with more than 8 decimals, elements over 4 MiB, the generic datetime
    unit; the tool's own forms
    where NumPy has none: the other platforms' long doubles as raw hex,
    most significant byte first, and datetime64[Y] values past year
    2**63 - 1 as their integers."""
    path = os.path.join(tmp, "p.npy")
    cases = [
        ("empty bool", np.array([], dtype=bool)),
        ("empty 2-d bool", np.zeros((2, 0), dtype=bool)),
        ("long double", np.array([1 / 3, 0.1, 2.5], dtype=np.longdouble)),
        ("long double sci", np.array([1e-30, 1 / 3], dtype=np.longdouble)),
        ("long double 0-d", np.array(1 / 7, dtype=np.longdouble)),
        ("clongdouble", np.array([1 / 3 + 2j], dtype=np.clongdouble)),
        ("4 MiB elements", np.array([(np.arange(4200000) % 251,)],
                                    dtype=[("a", "u1", (4200000,))])),
        ("generic datetime64", np.array(["NaT", "NaT"], dtype="M8")),
        ("generic timedelta64", np.array([3, -2], dtype="i8").view("m8")),
        ("empty generic datetime64", np.zeros(0, dtype="M8")),
    ]
    for what, a in cases:
        np.save(path, a)
        r = run("print", path)
        check(r.returncode == 0 and r.stdout.decode() == repr(a) + "\n",
              "print %s: exit %d\n%s\nwant\n%s" % (
                  what, r.returncode, r.stdout[:300].decode(errors="replace"),
                  repr(a)[:300]))
    # The long double NumPy lacks here: f12 on hosts of 16-byte ones, f16
    # on i386.
    size = 12 if np.dtype(np.longdouble).itemsize != 12 else 16
    data = bytes(range(1, size + 1))
    for order in "<>":
        with open(path, "wb") as f:
            f.write(npy_bytes("%sf%d" % (order, size), (1,), data))
        digits = (data[::-1] if order == "<" else data).hex()
        native = (order == "<") == (sys.byteorder == "little")
        dtype = "float%d" % (8 * size) if native else "'%sf%d'" % (order, size)
        want = "array([0x%s], dtype=%s)\n" % (digits, dtype)
        r = run("print", path)
        check(r.returncode == 0 and r.stdout.decode() == want,
              "print %sf%d: %r, want %r" % (order, size, r.stdout, want))
    a = np.array([2**63 - 1, 5], dtype="M8[Y]")
    np.save(path, a)
    r = run("print", path)
    want = ("array([9223372036854775807, %19s], dtype='datetime64[Y]')\n"
            % "'1975'")
    check(r.returncode == 0 and r.stdout.decode() == want,
          "print datetime64[Y] past the last year: %r, want %r"
          % (r.stdout, want))
    os.remove(path)


TEXT_KEYS = {"format version": "version", "header length": "header_len",
             "data offset": "data_offset", "descr": "descr",
             "shape": "shape", "fortran order": "fortran_order",
             "itemsize": "itemsize", "elements": "count",
             "data bytes": "nbytes"}


def text_facts(out):
    """`info`'s text of one .npy file as the nine keys of --json: the first
    line (the name and a colon), then the facts."""
    lines = out.decode(errors="replace").splitlines()
    got = {}
    for line in lines[1:]:
        m = re.match(r"  (\S.*?)\s{2,}(.*)$", line)
        if m is None or m.group(1) not in TEXT_KEYS:
            return lines[:1], {"bad line": line}
        got[TEXT_KEYS[m.group(1)]] = m.group(2)
    return lines[:1], got


def facts_as_text(f):
    """The nine keys as info's text shows them (NumPy's values)."""
    return {k: (str(tuple(v)) if k == "shape" else str(v))
            for k, v in f.items()}


def check_cut_info(check, run, tmp, arrays):
    """An .npy file whose data is one byte short (issue 39): info's text
    shows the header's facts (NumPy's, read from the cut file), then the
    error, exit 1; from a pipe too; --json and --short give no line."""
    short = os.path.join(tmp, "cut.npy")
    for name in sorted(os.listdir(arrays)):
        path = os.path.join(arrays, name)
        if not name.endswith(".npy"):
            continue
        with open(path, "rb") as f:
            whole = f.read()
        want = facts(path)
        if want["nbytes"] == 0 or np.load(path, allow_pickle=True).dtype \
                .hasobject:
            continue
        with open(short, "wb") as f:
            f.write(whole[:-1])
        with open(short, "rb") as f:
            want = facts_as_text(npy_facts(f)[0])
        for arg, stdin in ((short, None), ("-", subprocess.PIPE)):
            r = subprocess.run([run.tool, "info", arg], capture_output=True,
                               input=whole[:-1] if stdin else None)
            first, got = text_facts(r.stdout)
            check(r.returncode == 1 and first == [arg + ":"] and
                  got == want and r.stderr.count(b"\n") == 1 and
                  b"promises %d" % int(want["nbytes"]) in r.stderr,
                  "info %s of %s cut by a byte: exit %d, %r, %r" % (
                      arg, name, r.returncode, got, r.stderr))
        for form in ("--json", "--short"):
            r = run("info", form, short)
            check(r.returncode == 1 and not r.stdout and
                  r.stderr.count(b"\n") == 1,
                  "info %s of %s cut by a byte: no line: %r" % (
                      form, name, r.stdout))
    os.remove(short)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--data", required=True)
    args = ap.parse_args()
    tally = Tally()
    check = tally.check

    def run(*words, stdin=None):
        return subprocess.run([args.tool] + list(words), capture_output=True,
                              stdin=stdin)
    run.tool = args.tool

    arrays = os.path.join(args.data, "arrays")
    for name in sorted(os.listdir(arrays)):
        if not name.endswith(".npy"):
            continue
        path = os.path.join(arrays, name)
        r = run("info", "--json", path)
        check(r.returncode == 0 and
              json.loads(r.stdout) == dict(facts(path), path=path),
              "info --json " + name + ": " + r.stdout.decode(errors="replace"))
        check(run("validate", path).returncode == 0, "validate " + name)
        a = np.load(path, allow_pickle=True)
        r = run("dump", path)
        if a.dtype.hasobject:
            check(r.returncode == 1 and r.stderr, "dump refuses " + name)
            continue
        native = a.dtype.newbyteorder("=")
        if a.dtype.names is None or a.nbytes == 0:
            # (frombuffer cannot count 0-byte elements)
            want = np.ascontiguousarray(a.astype(native)).tobytes()
            ok = r.stdout == want
        else:
            # NumPy's own conversions leave record padding uninitialised:
            # compare the values field by field instead of the bytes.
            got = np.frombuffer(r.stdout, native).reshape(a.shape)
            ok = len(r.stdout) == a.nbytes and bool((got == a).all())
        check(r.returncode == 0 and ok, "dump " + name)

    tmp = tempfile.mkdtemp(prefix="npyio-cli-")
    out = os.path.join(tmp, "out.npy")
    for name in sorted(os.listdir(arrays)):
        if not name.endswith(".npy"):
            continue
        path = os.path.join(arrays, name)
        a = np.load(path, allow_pickle=True)
        if a.dtype.hasobject:
            r = run("convert", path, out)
            check(r.returncode == 1 and b"objects" in r.stderr,
                  "convert refuses " + name)
            continue
        for order in "CF":
            for byteorder in ORDERS:
                want, b = convert_expectation(a, order, byteorder)
                r = run("convert", "--order", order, "--byteorder",
                        byteorder, path, out)
                with open(out, "rb") as f:
                    got = f.read()
                check(r.returncode == 0 and not r.stderr and
                      same_output(got, want, b),
                      "convert --order %s --byteorder %s %s"
                      % (order, byteorder, name))
        # From a pipe, to standard output.
        with open(path, "rb") as f:
            r = subprocess.run([args.tool, "convert", "--order=F",
                                "--byteorder=big", "-", "-"], stdin=f,
                               capture_output=True)
        want, b = convert_expectation(a, "F", "big")
        check(r.returncode == 0 and same_output(r.stdout, want, b),
              "convert - - " + name)

    # On a terminal, and only there, a progress bar on stderr (where a
    # terminal can be had: containers may lack /dev/pts).
    import pty
    try:
        leader, follower = pty.openpty()
    except OSError as e:
        print("no pseudo-terminal (%s): progress bar not checked" % e)
    else:
        r = subprocess.run([args.tool, "convert",
                            os.path.join(arrays, "f8be_3x5_f.npy"), out],
                           stderr=follower, stdout=subprocess.DEVNULL)
        os.close(follower)
        bar = os.read(leader, 4096)
        os.close(leader)
        check(r.returncode == 0 and b"converting [" in bar and b"100%" in bar,
              "progress bar on a terminal: %r" % bar)

    # A failed convert leaves OUT as it was.
    with open(os.path.join(arrays, "f8be_3x5_f.npy"), "rb") as f:
        whole = f.read()
    short = os.path.join(tmp, "short.npy")
    with open(short, "wb") as f:
        f.write(whole[:len(whole) - 1])
    with open(out, "wb") as f:
        f.write(b"precious")
    r = run("convert", short, out)
    with open(out, "rb") as f:
        kept = f.read()
    check(r.returncode == 1 and kept == b"precious" and
          sorted(os.listdir(tmp)) == ["out.npy", "short.npy"],
          "failed convert keeps OUT: exit %d" % r.returncode)
    os.remove(short)
    os.remove(out)
    os.rmdir(tmp)

    invalid = os.path.join(args.data, "headers", "invalid")
    for name in sorted(os.listdir(invalid)):
        if not name.endswith(".bin"):
            continue
        path = os.path.join(invalid, name)
        for words in (["info"], ["validate"], ["dump"], ["print"],
                      ["convert", path, os.devnull]):
            r = run(*(words[:1] + [path] + words[2:]))
            check(r.returncode == 1 and r.stderr.startswith(b"npyio: "),
                  "%s %s: exit %d" % (words[0], name, r.returncode))

    for words in ([], ["frobnicate"], ["info"], ["info", "--bogus", "x"],
                  ["dump", "a", "b", "c"], ["convert", "a"],
                  ["convert", "--order", "X", "a", "b"],
                  ["convert", "--byteorder=middle", "a", "b"],
                  ["print", "--max", "-1", "a"], ["info", "--json=1", "a"], ["info", "--max-header-size", "x", "f"]):
        check(run(*words).returncode == 2, "usage error: %r" % words)
    check(run("--version").stdout.startswith(b"npyio "), "--version")
    for words, message in ((["info", args.data], b"is a directory"),
                           (["info", os.path.join(args.data, "missing.npy")],
                            b"No such file or directory")):
        r = run(*words)
        check(r.returncode == 1 and message in r.stderr,
              "%r: %r" % (words, r.stderr))
    for command in ("info", "print", "dump", "validate", "convert"):
        r = run(command, "--help")
        check(r.returncode == 0 and
              r.stdout.startswith(b"usage: npyio " + command.encode()),
              command + " --help")
    with tempfile.TemporaryDirectory(prefix="npyio-cli-") as tmp:
        check_big_header(check, run, tmp)
        check_pickles(check, run, tmp)
        check_names(check, run, tmp)
        check_member(check, run, tmp)
        check_print_more(check, run, tmp)
        check_cut_info(check, run, tmp, arrays)
    return tally.summary()


if __name__ == "__main__":
    sys.exit(main())
