#!/usr/bin/env python3
"""Interop test of the `npyio` command on .npz archives (ctest label
`interop`):

    npz_cli_check.py --tool PATH/npyio --data tests/data

Everything is compared with NumPy's and zipfile's own view of the files,
never with numbers taken from the tool:

1. `info --json` of every valid archive of tests/data/npz: one line per
   file, "path" as given, "members" in central directory order, each
   member object equal to what zipfile, the local header bytes and
   np.lib.format say (.npy members: the nine .npy keys, member_offset,
   compressed_size, crc32, aligned; other members: name, file,
   compression, array false; bzip2/lzma: array null); the names are
   np.load's keys; `info` text names every member in order; from a pipe
   the same members with path "-"; members of every compression method
   zipfile names (shrink ... ppmd, patched in) carry zipfile's name in
   `info --json` and `info`, and `validate` names each as one npyio
   cannot decompress;
2. `dump ARCHIVE MEMBER` (by key and by file name) equals NumPy's C-ordered,
   native-order bytes of np.load(ARCHIVE)[MEMBER]; objects, non-.npy and
   undecompressable members are refused; `print ARCHIVE MEMBER` equals
   `print` of the array np.save'd; without MEMBER or with a wrong one:
   exit 1 naming the keys (10 at most, each cut to 60 characters, then
   how many more: 20,000 members give one short line, and `info --short`
   lists np.load's keys, all of them); an .npy file with a MEMBER: exit 1;
   a key several members share (a, then a.npy; dups.npz) dumps np.load's
   array, with one note naming the member read by index and why;
3. `validate`: the valid archives are valid (odd.npz's bzip2/lzma members
   are named as undecompressable), every archive of npz/bad is not (but
   ratio_64mib_zeros.npz, bad only under a ratio limit), and no command on
   any bad or hostile archive ends by a signal; an object member is
   valid with bytes after its pickle's STOP, and fails its CRC-32 when one
   of them changes;
4. `convert ARCHIVE OUT` is refused, pointing at unpack;
5. `pack`: np.load gives exactly the keys, arrays equal to the inputs',
   members byte-identical to the input files, stored and 64-byte aligned
   by default, --no-align, --compress[=1|9], --threads 2 on 20 MB,
   --threads N (0: one per core) of dump, convert, pack and unpack giving
   one thread's bytes,
   --append (old members unchanged; a repeated key leaves the archive
   byte-identical), failures leave OUT as it was (or absent), NAME=-;
6. `unpack`: every .npy member byte-identical at DIR/<member file name>,
   DIR made, non-.npy members skipped with a line, no overwrite without
   --force, dups.npz and every hostile archive refused with nothing
   written anywhere, a symbolic link in DIR never followed, archives from
   standard input (file and pipe);
7. `--untrusted`: a member header over 10000 bytes is refused, a normal
   archive still validates;
8. usage errors exit 2 with a usage line; pack --help and unpack --help;
9. a member named "" or ".npy" (np.load's key ''): info, print and dump
   of key ''; `npyio ''` (issue 27 item 1);
10. info lists every member (issue 27 items 3-5): a stored member whose
   sizes differ (declined) as array null with its reason,
   exit 0; a member whose header np.load refuses with its error, exit 1;
   dump of members with a bit flipped in their deflate data reports the
   damage as zipfile does (Bad CRC-32: the CRC; zlib.error: corrupt
   deflate data), once, never as "not an .npy file".
11. `info --short` (one line a member, as unzip -l): for every valid
   archive a line "ARCHIVE:" then, in zipfile's order, key, descr, shape,
   order, compression, size and compressed size (zipfile's file_size and
   compress_size), tab-separated, the header facts from np.lib.format
   ("-" for members that are no .npy file, "?" for those npyio cannot
   decompress); an .npy file gives one line (its header plus data bytes,
   twice); --short with --json is a usage error. The column names (each
   named by `info --help`) make a line after an archive's line and before
   a run of .npy files' lines; --no-header leaves them out (the 1.0
   output), and is a usage error without --short.
Prints "N passed, M failed"; exits 77 without NumPy.
"""
import argparse
import io
import json
import os
import re
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib

try:
    import numpy as np
    import numpy.lib.format as npf
except ImportError:
    print("NumPy is not available: skipped")
    sys.exit(77)

from npyfacts import npy_facts  # noqa: E402 (needs NumPy)
from tally import Tally  # noqa: E402

# The tool names methods as zipfile does, but 0 and 8 (its contract).
METHODS = {**zipfile.compressor_names, 0: "stored", 8: "deflate"}
ARRAY_KEYS = {"name", "file", "compression", "version", "header_len",
              "data_offset", "descr", "shape", "fortran_order", "itemsize",
              "count", "nbytes", "member_offset", "compressed_size", "crc32",
              "array", "aligned"}
# Valid archives (tests/data/npz/manifest.tsv) and the special ones.
UNDECOMPRESSABLE = "odd.npz"      # bzip2 and lzma members
COLLIDING = "dups.npz"            # three members named a / a.npy
RATIO_ONLY = "ratio_64mib_zeros.npz"  # bad only under a ratio limit
ABSOLUTE_TARGET = "/tmp/npyio-hostile-absolute.npy"


def is_npy(data):
    return data[:len(npf.MAGIC_PREFIX)] == npf.MAGIC_PREFIX


def member_facts(data):
    """The nine .npy keys of `info --json` and the dtype, from NumPy, for
    a member's bytes."""
    return npy_facts(io.BytesIO(data))


def npz_load(path, allow_pickle=False):
    """NumPy's view of an archive: the NpzFile np.load returns (np.load
    itself takes prefix.npz, which starts with 100 other bytes, and the
    empty archive, which starts with its end record, for pickles)."""
    return np.lib.npyio.NpzFile(open(path, "rb"), own_fid=True,
                                allow_pickle=allow_pickle)


def local_data_start(raw, info):
    """The archive offset of a member's first data byte, from its local
    header (ZipInfo.header_offset is absolute: zipfile adds any prefix)."""
    at = info.header_offset
    sig, = struct.unpack("<I", raw[at:at + 4])
    assert sig == 0x04034B50, "no local header at %d" % at
    n, e = struct.unpack("<HH", raw[at + 26:at + 30])
    return at + 30 + n + e


def zip_start(raw):
    """np.load's test for an archive: its first bytes."""
    return raw[:4] in (b"PK\x03\x04", b"PK\x05\x06")


def np_load_takes_as_zip(path):
    """Whether np.load opens the file as an archive (not as a pickle)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            return isinstance(z, np.lib.npyio.NpzFile)
    except Exception:  # noqa: BLE001 (any refusal: not taken as a ZIP)
        return False


def undecompressable_reason(method_name):
    """info's reason for a member npyio cannot decompress (its text is
    the tool's; the method's name is zipfile's)."""
    return ("its compression is %s, which npyio cannot decompress (only "
            "stored and deflate)" % method_name)


def key_of(file_name):
    return file_name[:-4] if file_name.endswith(".npy") else file_name


def zip_view(path):
    """What `info --json` must list for the archive, from zipfile and
    np.lib.format; and per member, its bytes (None if not read) and
    dtype."""
    with open(path, "rb") as f:
        raw = f.read()
    members, extra = [], []
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            m = {"name": key_of(info.filename), "file": info.filename,
                 "compression": METHODS.get(info.compress_type,
                                            "method %d" % info.compress_type)}
            if info.compress_type not in (0, 8):
                m["array"] = None
                m["reason"] = undecompressable_reason(m["compression"])
                members.append(m)
                extra.append((info, None, None))
                continue
            data = z.read(info)
            if not is_npy(data):
                m["array"] = False
                members.append(m)
                extra.append((info, data, None))
                continue
            facts, dtype = member_facts(data)
            start = local_data_start(raw, info)
            m.update(facts)
            m.update({"member_offset": start,
                      "compressed_size": info.compress_size,
                      "crc32": info.CRC, "array": True,
                      "aligned": (info.compress_type == 0 and
                                  (start + facts["data_offset"]) % 64 == 0)})
            members.append(m)
            extra.append((info, data, dtype))
    return members, extra


def member_diff(got, want):
    """A short description of how two member lists differ, or ''."""
    if got == want:
        return ""
    if not isinstance(got, list):
        return "members is %r" % (got,)
    if len(got) != len(want):
        return "%d members, zipfile has %d: %r" % (
            len(got), len(want), [m.get("file") for m in got])
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            keys = sorted(set(g) | set(w), key=str)
            return "member %d (%r): %s" % (i, w["file"], ", ".join(
                "%s: got %r want %r" % (k, g.get(k, "<absent>"),
                                        w.get(k, "<absent>"))
                for k in keys if g.get(k, "<absent>") != w.get(k, "<absent>")))
    return "?"


def dump_expectation(a, got):
    """cli_check.py's rule: C order, native byte order; records compared
    field by field (NumPy leaves record padding uninitialised)."""
    native = a.dtype.newbyteorder("=")
    if a.dtype.names is None or a.nbytes == 0:
        return got == np.ascontiguousarray(a.astype(native)).tobytes()
    if len(got) != a.nbytes:
        return False
    back = np.frombuffer(got, native).reshape(a.shape)
    return bool((back == a).all())


def same_array(a, b):
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.hasobject:
        return a.tolist() == b.tolist()
    if a.dtype.names is not None:
        # np.load copies records field by field from anything but a real
        # file: their padding bytes are not the file's.
        return bool((a == b).all())
    return (np.ascontiguousarray(a).tobytes() ==
            np.ascontiguousarray(b).tobytes())


def shown(name):
    """How a name appears in the tool's text (escaped as repr, no quotes)."""
    return repr(name)[1:-1].encode()


def tree(top):
    """relative path -> (kind, bytes, inode, mtime_ns) of everything under
    top (symbolic links not followed); {} if top is absent."""
    out = {}
    if not os.path.lexists(top):
        return out
    for dirpath, dirnames, filenames in os.walk(top):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            rel = os.path.relpath(p, top)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(p), st.st_ino, st.st_mtime_ns)
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", None, st.st_ino, None)
            else:
                with open(p, "rb") as f:
                    out[rel] = ("file", f.read(), st.st_ino, st.st_mtime_ns)
    return out


def files_of(t):
    return {k: v[1] for k, v in t.items() if v[0] == "file"}


def read(path):
    with open(path, "rb") as f:
        return f.read()


class Checker(Tally):
    def __init__(self, tool):
        super().__init__()
        self.tool = tool
        self.signals = []

    def run(self, *words, stdin=None, input=None):
        r = subprocess.run([self.tool] + list(words), capture_output=True,
                           stdin=stdin, input=input)
        if r.returncode < 0:
            self.signals.append((words, r.returncode))
        return r


# ---- 1. info ---------------------------------------------------------------

def check_info(c, npz, valid):
    paths = [os.path.join(npz, n) for n in valid]
    views = {p: zip_view(p)[0] for p in paths}
    r = c.run("info", "--json", *paths)
    lines = r.stdout.splitlines()
    c.check(r.returncode == 0 and len(lines) == len(paths),
            "info --json of %d archives: exit %d, %d lines %r" % (
                len(paths), r.returncode, len(lines), r.stderr[:300]))
    for p, line in zip(paths, lines):
        try:
            obj = json.loads(line)
        except ValueError:
            c.check(False, "info --json %s: not JSON: %r" % (p, line[:200]))
            continue
        c.check(set(obj) == {"path", "members"} and obj.get("path") == p,
                "info --json %s: keys %r, path %r" % (
                    p, sorted(obj), obj.get("path")))
        want = views[p]
        diff = member_diff(obj.get("members"), want)
        c.check(not diff, "info --json %s: %s" % (p, diff))
        # The names are np.load's keys, in the same order.
        with npz_load(p) as z:
            keys = list(z.files)
        c.check([m.get("name") for m in obj.get("members") or []] == keys,
                "info --json %s: names are np.load's keys %r" % (p, keys))
        # Exact key sets by kind (member_diff compares whole objects; this
        # says it plainly).
        for m in obj.get("members") or []:
            kind = m.get("array")
            want_keys = (ARRAY_KEYS if kind is True else
                         {"name", "file", "compression", "array"} |
                         ({"reason"} if kind is None else set()))
            c.check(set(m) == want_keys,
                    "info --json %s member %r: keys %r" % (
                        p, m.get("file"), sorted(set(m) ^ want_keys)))
        # From a pipe: the same members, path "-"; but an archive that
        # does not start as a ZIP file (prefix.npz) is refused at once, as
        # np.load refuses it, rather than copied to find its end.
        r2 = c.run("info", "--json", "-", input=read(p))
        try:
            obj2 = json.loads(r2.stdout)
        except ValueError:
            obj2 = None
        if not zip_start(read(p)):
            c.check(r2.returncode == 1 and not r2.stdout and
                    b"not an .npy file" in r2.stderr and
                    not np_load_takes_as_zip(p),
                    "cat %s | info --json - (no ZIP start): exit %d %r %r"
                    % (p, r2.returncode, r2.stdout[:200], r2.stderr[:200]))
        else:
            c.check(r2.returncode == 0 and obj2 is not None and
                    obj2.get("path") == "-" and obj2.get("members") == want,
                    "cat %s | info --json -: exit %d %r %r" % (
                        p, r2.returncode, r2.stdout[:200], r2.stderr[:200]))
        # Text: exit 0, every member's file name, in order.
        r3 = c.run("info", p)
        at, missing = 0, []
        for m in want:
            i = r3.stdout.find(shown(m["file"]), at)
            if i < 0:
                missing.append(m["file"])
            else:
                at = i + 1
        c.check(r3.returncode == 0 and not missing,
                "info %s (text): exit %d, members not found in order: %r %r"
                % (p, r3.returncode, missing, r3.stderr[:200]))
    # Sanity of the corpus itself (what the checks above rely on).
    byname = dict(zip(valid, (views[p] for p in paths)))
    c.check(byname.get("empty.npz") == [] and
            [m["name"] for m in byname.get("keys.npz", [])] ==
            ["a/b", "é", "x.npy", "plain"] and
            byname["prefix.npz"][0]["member_offset"] > 100 and
            any(m["array"] is None for m in byname[UNDECOMPRESSABLE]) and
            any(m["array"] is False for m in byname[UNDECOMPRESSABLE]),
            "corpus as expected by this test")


def check_method_name(c, npz, tmp):
    """A compression method zipfile names has that name (the bad corpus'
    deflate64 member, method 9), one without a name is "method N" (an
    archive patched to method 99)."""
    path = os.path.join(tmp, "method99.npz")
    np.savez(path, a=np.arange(3, dtype="<i2"))
    raw = bytearray(read(path))
    with zipfile.ZipFile(path) as z:
        info = z.infolist()[0]
    raw[info.header_offset + 8:info.header_offset + 10] = struct.pack("<H", 99)
    cd = raw.rfind(b"PK\x01\x02")
    raw[cd + 10:cd + 12] = struct.pack("<H", 99)
    with open(path, "wb") as f:
        f.write(raw)
    for p, index, method in ((path, 0, 99),
                             (os.path.join(npz, "bad", "method_deflate64.npz"),
                              1, 9)):
        r = c.run("info", "--json", p)
        try:
            m = json.loads(r.stdout)["members"][index]
        except (ValueError, KeyError, IndexError):
            m = None
        with zipfile.ZipFile(p) as z:
            zi = z.infolist()[index]
        name = METHODS.get(method, "method %d" % method)
        want = {"name": key_of(zi.filename), "file": zi.filename,
                "compression": name, "array": None,
                "reason": undecompressable_reason(name)}
        c.check(r.returncode == 0 and zi.compress_type == method and
                m == want,
                "info --json %s: member %d (method %d) is %r, want %r" % (
                    os.path.basename(p), index, method, m, want))
    os.remove(path)
    check_every_method_name(c, tmp)


def patch_methods(path, methods):
    """Give member i of the archive at path the compression method
    methods[i], in its local header and its central directory entry."""
    raw = bytearray(read(path))
    with zipfile.ZipFile(path) as z:
        infos = z.infolist()
    cd = raw.rfind(b"PK\x05\x06")
    at, = struct.unpack("<I", raw[cd + 16:cd + 20])
    for info, method in zip(infos, methods):
        local = info.header_offset
        raw[local + 8:local + 10] = struct.pack("<H", method)
        assert raw[at:at + 4] == b"PK\x01\x02"
        raw[at + 10:at + 12] = struct.pack("<H", method)
        n, e, k = struct.unpack("<HHH", raw[at + 28:at + 34])
        at += 46 + n + e + k
    with open(path, "wb") as f:
        f.write(raw)


def check_every_method_name(c, tmp):
    """Every method zipfile names (shrink, reduce, implode, tokenize,
    terse, lz77, wavpack, ppmd, ...) has zipfile's name in info --json and
    info, and validate names it as what npyio cannot decompress."""
    methods = sorted(m for m in zipfile.compressor_names if m not in (0, 8))
    path = os.path.join(tmp, "methods.npz")
    np.savez(path, **{"m%d" % m: np.arange(3, dtype="<i2") for m in methods})
    patch_methods(path, methods)
    with zipfile.ZipFile(path) as z:
        got_methods = [zi.compress_type for zi in z.infolist()]
    r = c.run("info", "--json", path)
    try:
        members = json.loads(r.stdout)["members"]
    except (ValueError, KeyError):
        members = []
    want = [{"name": "m%d" % m, "file": "m%d.npy" % m,
             "compression": METHODS[m], "array": None,
             "reason": undecompressable_reason(METHODS[m])} for m in methods]
    c.check(r.returncode == 0 and got_methods == methods and members == want,
            "info --json of members of every method zipfile names: exit %d "
            "%r, want %r" % (r.returncode, members, want))
    r = c.run("info", path)
    text = r.stdout.decode(errors="replace")
    c.check(r.returncode == 0 and all(
        "    compression     %s\n" % METHODS[m] in text and
        "unknown content: its compression is %s, which npyio cannot "
        "decompress (only stored and deflate)" % METHODS[m] in text
        for m in methods),
        "info of members of every method: exit %d %r" % (r.returncode,
                                                          text[:300]))
    r = c.run("validate", path)
    lines = r.stderr.decode(errors="replace").splitlines()
    want = ["npyio: %s: member 'm%d.npy' cannot be checked: its compression "
            "is %s, which npyio cannot decompress (only stored and deflate)"
            % (path, m, METHODS[m]) for m in methods]
    c.check(r.returncode == 1 and r.stdout == b"" and lines == want,
            "validate of members of every method: exit %d %r" % (
                r.returncode, lines[:3]))
    os.remove(path)


# ---- 2. dump and print ------------------------------------------------------

def check_dump_print(c, npz, valid, tmp):
    for name in valid:
        path = os.path.join(npz, name)
        members, extra = zip_view(path)
        with npz_load(path) as z:
            keys = list(z.files)
        # Every member, by its key and by its file name.
        for m, (info, data, dtype) in zip(members, extra):
            for arg in dict.fromkeys([m["name"], m["file"]]):
                r = c.run("dump", path, arg)
                if m["array"] is None:  # bzip2, lzma
                    c.check(r.returncode == 1 and not r.stdout and
                            m["compression"].encode() in r.stderr,
                            "dump %s %s (%s) refused: exit %d %r" % (
                                name, arg, m["compression"], r.returncode,
                                r.stderr[:200]))
                    continue
                try:
                    with npz_load(path) as z:
                        a = z[arg]
                except ValueError as e:  # objects: NumPy refuses too
                    c.check(r.returncode == 1 and r.stderr and
                            not r.stdout and "pickle" in str(e).lower(),
                            "dump %s %s (objects) refused: exit %d %r" % (
                                name, arg, r.returncode, r.stderr[:200]))
                    continue
                if not isinstance(a, np.ndarray):  # np.load gives bytes
                    c.check(r.returncode == 1 and r.stderr and not r.stdout,
                            "dump %s %s (not an .npy) refused: exit %d %r" % (
                                name, arg, r.returncode, r.stderr[:200]))
                    continue
                c.check(r.returncode == 0 and dump_expectation(a, r.stdout),
                        "dump %s %s: exit %d, %d bytes (want %d) %r" % (
                            name, arg, r.returncode, len(r.stdout), a.nbytes,
                            r.stderr[:200]))
        # print ARCHIVE KEY equals print of the array np.save'd.
        if name in ("savez_compressed.npz", "keys.npz", "stream.npz",
                    "prefix.npz", "dups.npz", UNDECOMPRESSABLE):
            one = os.path.join(tmp, "one.npy")
            kinds = dict((m["name"], m["array"]) for m in members)
            for arg in dict.fromkeys(keys + ["a.npy"] * (name == COLLIDING)):
                if kinds.get(key_of(arg)) is not True:
                    continue  # bzip2, lzma, not .npy: not for print
                with npz_load(path, True) as z:
                    a = z[arg]
                if a.dtype.hasobject:
                    continue
                np.save(one, a)
                want = c.run("print", one)
                r = c.run("print", path, arg)
                c.check(r.returncode == 0 and want.returncode == 0 and
                        r.stdout == want.stdout and r.stdout,
                        "print %s %s: exit %d, %r; print of it saved: %r" % (
                            name, arg, r.returncode, r.stdout[:200],
                            want.stdout[:200]))
            if os.path.exists(one):
                os.remove(one)
        # Without MEMBER, and with a wrong one: exit 1 naming the first
        # 10 keys, then how many more.
        if keys:
            more = b" and %d more; `npyio info --short %s` lists them\n" % (
                len(keys) - 10, path.encode()) if len(keys) > 10 else b"\n"
            for words in (["print", path], ["dump", path],
                          ["print", path, "no-such-member"],
                          ["dump", path, "no-such-member.npy"]):
                r = c.run(*words)
                absent = [k for k in keys[:10] if k.encode() not in r.stderr]
                c.check(r.returncode == 1 and not r.stdout and not absent and
                        r.stderr.endswith(more),
                        "%s: exit %d, keys not named %r: %r" % (
                            " ".join(words[:1] + [name] + words[2:]),
                            r.returncode, absent, r.stderr[:300]))
    # An .npy FILE with a MEMBER.
    npy = os.path.join(os.path.dirname(npz), "arrays", "i1.npy")
    for command in ("print", "dump"):
        r = c.run(command, npy, "i1")
        c.check(r.returncode == 1 and not r.stdout and r.stderr,
                "%s i1.npy i1: exit %d %r" % (command, r.returncode,
                                               r.stderr[:200]))


# ---- 2b. which member a shared key reads; long lists of members -------------

def np_choice(path, key):
    """The index of the member np.load(path)[key] reads: the member whose
    own content equals it (each member of these archives holds a different
    array)."""
    with npz_load(path) as z:
        got = z[key]
    with zipfile.ZipFile(path) as z:
        hits = [i for i, info in enumerate(z.infolist())
                if same_array(np.load(io.BytesIO(z.read(info))), got)]
    assert len(hits) == 1, (path, key, hits)
    return hits[0], got


def check_member_choice(c, npz, tmp):
    """A key several members share (by name, or a name and that name plus
    .npy): dump gives np.load's array, and the note on standard error names
    the member read by index and why (issue 39: members a then a.npy, read
    as member 0, were said to be 'the last one')."""
    first = os.path.join(tmp, "a_then_a_npy.npz")
    with zipfile.ZipFile(first, "w") as z:
        for name, a in (("a", np.arange(3, dtype="<i2")),
                        ("a.npy", np.array([2.5, -1.0]))):
            b = io.BytesIO()
            np.save(b, a)
            z.writestr(name, b.getvalue())
    for path in (first, os.path.join(npz, COLLIDING)):
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
        for key in ("a", "a.npy"):
            index, a = np_choice(path, key)
            r = c.run("dump", path, key)
            err = r.stderr.decode(errors="replace")
            several = names.count(names[index]) > 1
            why = "the last of them" if several else \
                "named exactly as asked"
            c.check(r.returncode == 0 and dump_expectation(a, r.stdout) and
                    re.search(r"reading .*member %d\b" % index, err) and
                    why in err and ("last" in err) == several and
                    err.count("\n") == 1,
                    "dump %s %s: np.load reads member %d; exit %d: %r" % (
                        os.path.basename(path), key, index, r.returncode,
                        err))
    os.remove(first)


def check_long_member_list(c, tmp):
    """An archive of 20,000 members of 80-character keys, without MEMBER
    or with one not there: one short line naming the first 10 keys (each
    cut to 60 characters) and how many more, pointing at `info --short`,
    which lists np.load's keys, all of them (issue 39: a 789 KB line)."""
    path = os.path.join(tmp, "many members.npz")
    b = io.BytesIO()
    np.save(b, np.arange(2, dtype="<u1"))
    with zipfile.ZipFile(path, "w") as z:
        for i in range(20000):
            z.writestr("%05d" % i + "k" * 75 + ".npy", b.getvalue())
    with npz_load(path) as z:
        keys = list(z.files)
    want = ", ".join(k[:57] + "..." for k in keys[:10]) + \
        " and %d more; `npyio info --short '%s'` lists them" % (
            len(keys) - 10, path)
    for words in (["print", path], ["dump", path, "no-such-member"]):
        r = c.run(*words)
        err = r.stderr.decode(errors="replace")
        c.check(r.returncode == 1 and err.endswith(want + "\n") and
                err.count("\n") == 1 and len(err) < 1200 and
                keys[10][:5] not in err,
                "%s: exit %d, %d bytes: %r" % (" ".join(words[:1] + words[2:]),
                                               r.returncode, len(err),
                                               err[:400]))
    r = c.run("info", "--short", "--no-header", path)
    listed = {line.split(b"\t")[0].decode() for line in
              r.stdout.splitlines() if b"\t" in line}
    c.check(r.returncode == 0 and listed == set(keys),
            "info --short of 20,000 members lists %d of np.load's keys" %
            len(listed & set(keys)))
    os.remove(path)


# ---- 3. validate, and no signal on the bad corpus --------------------------

def read_manifest(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            rows.append(line.rstrip("\n").split("\t"))
    return rows


def check_validate(c, npz, valid, bad_dir, hostile_dir, tmp):
    for name in valid:
        p = os.path.join(npz, name)
        r = c.run("validate", p)
        if name == UNDECOMPRESSABLE:
            undecomp = [m["file"] for m in zip_view(p)[0]
                        if m["array"] is None]
            c.check(r.returncode == 1 and undecomp and
                    all(f.encode() in r.stderr for f in undecomp) and
                    b"decompress" in r.stderr,
                    "validate %s: exit %d, names %r as undecompressable: %r"
                    % (name, r.returncode, undecomp, r.stderr[:300]))
        else:
            c.check(r.returncode == 0 and r.stdout == p.encode() +
                    b": valid\n",
                    "validate %s: exit %d %r %r" % (name, r.returncode,
                                                    r.stdout, r.stderr[:300]))
    bad = [row[0] for row in read_manifest(os.path.join(bad_dir,
                                                        "manifest.tsv"))]
    c.check(sorted(bad) == sorted(n for n in os.listdir(bad_dir)
                                  if n.endswith(".npz")),
            "npz/bad/manifest.tsv lists every archive")
    for name in bad:
        p = os.path.join(bad_dir, name)
        r = c.run("validate", p)
        if name == RATIO_ONLY:
            c.check(r.returncode == 0 and r.stdout == p.encode() +
                    b": valid\n",
                    "validate bad/%s (valid under default limits): exit %d %r"
                    % (name, r.returncode, r.stderr[:300]))
        else:
            c.check(r.returncode == 1 and b": valid" not in r.stdout and
                    r.stderr.startswith(b"npyio: " + p.encode() + b": "),
                    "validate bad/%s: exit %d %r %r" % (
                        name, r.returncode, r.stdout, r.stderr[:300]))
    # Every command on every bad and hostile archive: never a signal.
    hostile = sorted(n for n in os.listdir(hostile_dir) if n.endswith(".npz"))
    for where, names in ((bad_dir, bad), (hostile_dir, hostile)):
        killed, runs = [], 0
        for name in names:
            p = os.path.join(where, name)
            try:
                with zipfile.ZipFile(p) as z:
                    files = z.namelist()
            except Exception:  # noqa: BLE001 (zipfile refuses it)
                files = []
            args = list(dict.fromkeys(
                files + [key_of(f) for f in files] + ["a", "b"]))
            words = [["info", p], ["info", "--json", p], ["validate", p],
                     ["print", p], ["dump", p],
                     ["unpack", "--no-sync", p, os.path.join(tmp, "sig")]]
            for a in args:
                words += [["print", p, a], ["dump", p, a]]
            for w in words:
                r = c.run(*w)
                runs += 1
                if r.returncode < 0 or r.returncode > 2:
                    killed.append((w[0], name, w[2:], r.returncode))
            shutil.rmtree(os.path.join(tmp, "sig"), ignore_errors=True)
        c.check(not killed, "commands on %s: %d runs, ended by a signal or "
                "an odd exit: %r" % (os.path.basename(where), runs, killed))
    check_object_member_crc(c, tmp)
    check_block_index_warning(c, tmp)


def check_block_index_warning(c, tmp):
    """A member packed with --zlib --threads 2 (zlib's blocks: without
    --zlib, 2 threads take one libdeflate call) carries a block index:
    validate
    says valid, with no warning. With the index's second block moved by
    one byte, np.load and zipfile still read it, and validate still says
    valid (exit 0) with one warning naming the member."""
    rng = np.random.default_rng(7)
    a = np.cumsum(rng.standard_normal(1500000))
    npy = os.path.join(tmp, "walk.npy")
    path = os.path.join(tmp, "indexed.npz")
    np.save(npy, a)
    r = c.run("pack", "--compress", "--zlib", "--threads", "2", path,
              "w=" + npy)
    c.check(r.returncode == 0, "pack --zlib --threads 2: exit %d" %
            r.returncode)
    r = c.run("validate", path)
    c.check(r.returncode == 0 and r.stderr == b"",
            "validate an indexed member: exit %d %r" % (r.returncode,
                                                        r.stderr[:300]))
    raw = bytearray(read(path))
    nlen = int.from_bytes(raw[26:28], "little")
    at = 30 + nlen
    c.check(raw[at:at + 2] == b"NI" and raw[at + 4] == 1,
            "the block index leads the local extra field")
    raw[at + 4 + 8 + 16] += 1  # the second block's compressed offset
    with open(path, "wb") as out:
        out.write(raw)
    with zipfile.ZipFile(path) as z:
        c.check(z.testzip() is None, "testzip with a wrong block index")
    c.check(np.array_equal(npz_load(path)["w"], a),
            "np.load with a wrong block index")
    r = c.run("validate", path)
    c.check(r.returncode == 0 and r.stdout == path.encode() + b": valid\n"
            and b"member 'w.npy'" in r.stderr and
            b"block index does not match" in r.stderr and
            r.stderr.count(b"\n") == 1,
            "validate a wrong block index: exit %d %r" % (r.returncode,
                                                          r.stderr[:300]))
    os.remove(path)
    os.remove(npy)


def check_object_member_crc(c, tmp):
    """An object array member whose pickle ends 2 MiB before the member
    does (pickle.load ignores what follows STOP): valid; with a byte after
    STOP changed, which the pickle's walk ignores, the member's CRC-32
    still fails it, in one message naming the member."""
    a = np.empty(3, dtype=object)
    a[:] = [1, "a", None]
    f = io.BytesIO()
    np.save(f, a, allow_pickle=True)
    path = os.path.join(tmp, "object_tail.npz")
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("o.npy", f.getvalue() + b"t" * (2 << 20))
    loaded = npz_load(path, allow_pickle=True)["o"]
    r = c.run("validate", path)
    c.check(r.returncode == 0 and r.stdout == path.encode() + b": valid\n" and
            list(loaded) == [1, "a", None],
            "validate an object member with 2 MiB after STOP: exit %d %r" % (
                r.returncode, r.stderr[:300]))
    raw = bytearray(read(path))
    raw[raw.rfind(b"tt")] = ord("T")
    with open(path, "wb") as out:
        out.write(raw)
    r = c.run("validate", path)
    c.check(r.returncode == 1 and r.stdout == b"" and
            r.stderr.startswith(b"npyio: " + path.encode() + b": ") and
            b"member 'o.npy': its CRC-32 is " in r.stderr and
            r.stderr.count(b"\n") == 1,
            "validate an object member changed after STOP: exit %d %r" % (
                r.returncode, r.stderr[:300]))
    os.remove(path)


# ---- 4. convert -------------------------------------------------------------

def check_convert(c, npz, tmp):
    out = os.path.join(tmp, "converted.npy")
    r = c.run("convert", os.path.join(npz, "savez.npz"), out)
    c.check(r.returncode == 1 and b"unpack" in r.stderr and
            not os.path.exists(out),
            "convert savez.npz out.npy: exit %d %r" % (r.returncode,
                                                       r.stderr[:300]))


# ---- 5. pack ----------------------------------------------------------------

def packed_view(c, path, what):
    """zipfile's and np.load's view of an archive the tool wrote."""
    try:
        with zipfile.ZipFile(path) as z:
            bad = z.testzip()
            infos = z.infolist()
            data = {i.filename: z.read(i) for i in infos}
        return infos, data, bad
    except Exception as e:  # noqa: BLE001
        c.check(False, "%s: zipfile cannot read it: %r" % (what, e))
        return None


def check_packed(c, out, inputs, what, method=0, aligned=True):
    """inputs: key -> the .npy path (or bytes) it came from."""
    v = packed_view(c, out, what)
    if v is None:
        return None
    infos, data, bad = v
    raw = read(out)
    want = {k: (src if isinstance(src, bytes) else read(src))
            for k, src in inputs.items()}
    with np.load(out, allow_pickle=True) as z:
        keys = list(z.files)
        arrays = {k: z[k] for k in keys}
    c.check(bad is None and sorted(keys) == sorted(want) and
            len(keys) == len(want),
            "%s: np.load keys %r, want %r (testzip %r)" % (
                what, sorted(keys), sorted(want), bad))
    differ = [k for k in want if data.get(k + ".npy") != want[k]]
    c.check(not differ and sorted(data) == sorted(k + ".npy" for k in want),
            "%s: members not byte-identical to their files: %r" % (
                what, differ))
    unequal = []
    for k in want:
        if k not in arrays:
            continue
        a = np.load(io.BytesIO(want[k]), allow_pickle=True)
        if not same_array(arrays[k], a):
            unequal.append(k)
    c.check(not unequal, "%s: arrays differ from np.load of the input: %r"
            % (what, unequal))
    methods = {i.compress_type for i in infos}
    c.check(methods <= {method} and infos,
            "%s: compress_type %r, want %d" % (what, methods, method))
    unaligned = []
    for i in infos:
        d = data[i.filename]
        if not is_npy(d):
            continue
        start = local_data_start(raw, i) + member_facts(d)[0]["data_offset"]
        if start % 64:
            unaligned.append(i.filename)
    if aligned:
        c.check(not unaligned,
                "%s: array data not at a multiple of 64: %r" % (what,
                                                                unaligned))
    # And the tool's own info agrees with zipfile's view of it.
    r = c.run("info", "--json", out)
    try:
        got = json.loads(r.stdout)["members"]
    except (ValueError, KeyError):
        got = None
    diff = member_diff(got, zip_view(out)[0])
    c.check(r.returncode == 0 and not diff,
            "%s: info --json of it: %s" % (what, diff))
    return unaligned


def member_raw(path, info):
    """A member's compressed bytes, as the archive holds them."""
    raw = read(path)
    at = local_data_start(raw, info)
    return raw[at:at + info.compress_size]


def check_pack_deflaters(c, d, npys):
    """pack --compress of files (read whole): each member is its .npy
    header in a stored block, then libdeflate's stream (not zlib's);
    --zlib: np.savez_compressed's compressed bytes, member for member;
    standard input goes through zlib either way."""
    picked = [p for p in npys if not np.load(p, allow_pickle=True)
              .dtype.hasobject][:12]
    arrays = {os.path.basename(p)[:-4]: np.load(p) for p in picked}
    ref = os.path.join(d, "ref.npz")
    np.savez_compressed(ref, **arrays)
    for extra in ([], ["--zlib"]):
        out = os.path.join(d, "deflaters.npz")
        r = c.run("pack", "--compress", *extra, out, *picked)
        what = "pack --compress %s" % " ".join(extra)
        c.check(r.returncode == 0, "%s: exit %d %r" % (
            what, r.returncode, r.stderr[:300]))
        if r.returncode != 0:
            continue
        with zipfile.ZipFile(out) as zo, zipfile.ZipFile(ref) as zr:
            c.check(zo.testzip() is None, what + ": testzip")
            for io_, ir in zip(zo.infolist(), zr.infolist()):
                ours, numpys = member_raw(out, io_), member_raw(ref, ir)
                member = zo.read(io_)
                head = 10 + int.from_bytes(member[8:10], "little")
                stored = (b"\0" + head.to_bytes(2, "little") +
                          (head ^ 0xFFFF).to_bytes(2, "little") +
                          member[:head])
                if extra:
                    c.check(ours == numpys and io_.CRC == ir.CRC,
                            what + ": np.savez_compressed's bytes of " +
                            io_.filename)
                else:
                    c.check(ours.startswith(stored) and ours != numpys and
                            member == zr.read(ir),
                            what + ": libdeflate's member " + io_.filename)
        os.remove(out)
    os.remove(ref)


def check_pack(c, data_dir, tmp):
    arrays = os.path.join(data_dir, "arrays")
    npys = sorted(os.path.join(arrays, n) for n in os.listdir(arrays)
                  if n.endswith(".npy"))
    d = os.path.join(tmp, "pack")
    os.mkdir(d)
    out = os.path.join(d, "all.npz")

    # Every corpus array (many dtypes, Fortran order, records, 0-d, empty,
    # objects), FILE alone: base names as keys.
    inputs = {os.path.basename(p)[:-4]: p for p in npys}
    r = c.run("pack", out, *npys)
    c.check(r.returncode == 0, "pack %d files: exit %d %r" % (
        len(npys), r.returncode, r.stderr[:300]))
    check_packed(c, out, inputs, "pack (stored, aligned)")
    # NAME=FILE, including names with '/', UTF-8 and a second '='.
    pick = {"first": "f8be_3x5_f.npy", "sub/dir/rec": "rec_nested_padded.npy",
            "é": "u3_str_le.npy", "zero_d": "i4le_0d.npy",
            "empty": "i4be_empty.npy", "f": "c16be_3x5_f.npy"}
    named = os.path.join(d, "named.npz")
    r = c.run("pack", named, *["%s=%s" % (k, os.path.join(arrays, v))
                               for k, v in pick.items()])
    c.check(r.returncode == 0, "pack NAME=FILE: exit %d %r" % (
        r.returncode, r.stderr[:300]))
    check_packed(c, named, {k: os.path.join(arrays, v)
                            for k, v in pick.items()}, "pack NAME=FILE")

    # --no-align: the tool's choice, but with 82 members some array data
    # must then start off a multiple of 64 (else the flag did nothing).
    noalign = os.path.join(d, "noalign.npz")
    r = c.run("pack", "--no-align", noalign, *npys)
    c.check(r.returncode == 0, "pack --no-align: exit %d %r" % (
        r.returncode, r.stderr[:300]))
    unaligned = check_packed(c, noalign, inputs, "pack --no-align",
                             aligned=False)
    c.check(unaligned is None or len(unaligned) > 0 or
            read(noalign) != read(out),
            "pack --no-align changes nothing")

    # --compress, --compress=1, --compress=9.
    for flag in ("--compress", "--compress=1", "--compress=9"):
        comp = os.path.join(d, "comp.npz")
        r = c.run("pack", flag, comp, *npys)
        c.check(r.returncode == 0, "pack %s: exit %d %r" % (
            flag, r.returncode, r.stderr[:300]))
        check_packed(c, comp, inputs, "pack " + flag, method=8,
                     aligned=False)
        os.remove(comp)

    check_pack_deflaters(c, d, npys)

    # --threads 2 on a 20 MB array, deflated and stored.
    big = os.path.join(d, "big.npy")
    rng = np.random.default_rng(20261203)
    a = np.round(rng.standard_normal(2500000), 3)
    np.save(big, a)
    for flags, method in ((["--compress", "--threads", "2"], 8),
                          (["--threads", "2"], 0)):
        bigz = os.path.join(d, "big.npz")
        t0 = time.monotonic()
        r = c.run("pack", *flags, bigz, "x=" + big, "small=" + npys[0])
        c.check(r.returncode == 0, "pack %s (20 MB): exit %d %r" % (
            " ".join(flags), r.returncode, r.stderr[:300]))
        check_packed(c, bigz, {"x": big, "small": npys[0]},
                     "pack %s (20 MB, %.1f s)" % (" ".join(flags),
                                                  time.monotonic() - t0),
                     method=method, aligned=method == 0)
        os.remove(bigz)
    check_threads(c, d, big, a)
    os.remove(big)

    # --append: old members as they were, the new ones there.
    base = os.path.join(d, "base.npz")
    first, second = npys[:10], npys[10:20]
    r = c.run("pack", base, *first)
    before = packed_view(c, base, "pack base")
    r2 = c.run("pack", "--append", base, *second)
    c.check(r.returncode == 0 and r2.returncode == 0,
            "pack then pack --append: exit %d, %d %r" % (
                r.returncode, r2.returncode, r2.stderr[:300]))
    after = packed_view(c, base, "pack --append")
    if before and after:
        old = {i.filename: (i.compress_type, before[1][i.filename])
               for i in before[0]}
        now = {i.filename: (i.compress_type, after[1][i.filename])
               for i in after[0]}
        c.check(all(now.get(k) == v for k, v in old.items()),
                "pack --append: an old member changed")
    check_packed(c, base, {os.path.basename(p)[:-4]: p
                           for p in first + second}, "pack --append")
    # Appending a key already present: exit 1, archive byte-identical.
    kept = read(base)
    for words in (["pack", "--append", base, second[0]],
                  ["pack", "--append", base, npys[30], first[3]]):
        r = c.run(*words)
        c.check(r.returncode == 1 and read(base) == kept and r.stderr,
                "%s (a key already there): exit %d, archive %s %r" % (
                    " ".join(os.path.basename(w) for w in words),
                    r.returncode,
                    "kept" if read(base) == kept else "CHANGED",
                    r.stderr[:300]))
    # A failed pack leaves an existing OUT byte-identical, and makes no
    # OUT where there was none (nor any other file).
    text = os.path.join(d, "notes.txt")
    with open(text, "w") as f:
        f.write("this is not an .npy file\n" * 20)
    missing = os.path.join(d, "missing.npy")
    listing = sorted(os.listdir(d))
    for bad_input in (text, missing):
        for extra in ([], ["--compress"], ["--append"]):
            r = c.run("pack", *extra, base, npys[40], bad_input, npys[41])
            c.check(r.returncode == 1 and read(base) == kept and
                    sorted(os.listdir(d)) == listing,
                    "failed pack %s onto an existing OUT (%s): exit %d, "
                    "OUT %s, files %r %r" % (
                        " ".join(extra), os.path.basename(bad_input),
                        r.returncode,
                        "kept" if read(base) == kept else "CHANGED",
                        sorted(set(os.listdir(d)) ^ set(listing)),
                        r.stderr[:200]))
        fresh = os.path.join(d, "fresh.npz")
        r = c.run("pack", fresh, npys[40], bad_input)
        c.check(r.returncode == 1 and not os.path.lexists(fresh) and
                sorted(os.listdir(d)) == listing,
                "failed pack to a new OUT (%s): exit %d, left %r" % (
                    os.path.basename(bad_input), r.returncode,
                    sorted(set(os.listdir(d)) ^ set(listing))))
    # Standard input: cat x.npy | npyio pack out.npz s=-
    src = os.path.join(arrays, "rec_subarrays.npy")
    piped = os.path.join(d, "piped.npz")
    r = c.run("pack", piped, "s=-", input=read(src))
    c.check(r.returncode == 0, "cat x.npy | pack out.npz s=-: exit %d %r"
            % (r.returncode, r.stderr[:300]))
    check_packed(c, piped, {"s": src}, "pack s=- (pipe)")
    with open(src, "rb") as f:
        r = c.run("pack", "--compress", piped, npys[5], "s=-", stdin=f)
    c.check(r.returncode == 0, "pack --compress out.npz FILE s=- < x.npy: "
            "exit %d %r" % (r.returncode, r.stderr[:300]))
    check_packed(c, piped, {"s": src, os.path.basename(npys[5])[:-4]:
                            npys[5]}, "pack FILE s=- (file on stdin)",
                 method=8, aligned=False)
    shutil.rmtree(d)


# ---- 6. unpack --------------------------------------------------------------

def expected_unpacked(path):
    """member file name -> bytes, for the .npy members zipfile reads (the
    last of members of one name), and the other members' names."""
    files, others = {}, []
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            try:
                data = z.read(info)
            except Exception:  # noqa: BLE001
                data = b""
            if is_npy(data):
                files[info.filename] = data
            else:
                others.append(info.filename)
    return files, others


def check_unpack(c, npz, valid, hostile_dir, tmp):
    d = os.path.join(tmp, "unpack")
    os.mkdir(d)
    for name in valid:
        p = os.path.join(npz, name)
        out = os.path.join(d, name + ".out")      # missing: unpack makes it
        r = c.run("unpack", p, out)
        files, others = expected_unpacked(p)
        got = files_of(tree(out))
        if name == COLLIDING:
            c.check(r.returncode == 1 and not got and b"a.npy" in r.stderr,
                    "unpack %s (two members a.npy): exit %d, wrote %r %r" % (
                        name, r.returncode, sorted(got), r.stderr[:300]))
            continue
        members = zip_view(p)[0]
        undecomp = [m["file"] for m in members if m["array"] is None]
        want = {k: v for k, v in files.items() if k not in undecomp}
        c.check(got == want,
                "unpack %s: files %r, want %r (differing: %r) %r" % (
                    name, sorted(got), sorted(want),
                    sorted(k for k in want if got.get(k) != want[k]),
                    r.stderr[:300]))
        if undecomp:
            # Documented: members npyio cannot decompress are named; the
            # tool cannot write them (exit status not fixed by the
            # contract: 1, as validate, or 0).
            c.check(r.returncode in (0, 1) and
                    all(shown(f) in r.stderr for f in undecomp),
                    "unpack %s: exit %d, names undecompressable %r: %r" % (
                        name, r.returncode, undecomp, r.stderr[:300]))
        else:
            c.check(r.returncode == 0, "unpack %s: exit %d %r" % (
                name, r.returncode, r.stderr[:300]))
        skipped = [o for o in others
                   if not any(b"'" + shown(o) + b"'" in line and
                              b"skip" in line
                              for line in r.stderr.splitlines())]
        c.check(not skipped, "unpack %s: no stderr line for the skipped %r: "
                "%r" % (name, skipped, r.stderr[:300]))
        if name in ("keys.npz", "savez_compressed.npz", "stream.npz",
                    "prefix.npz", "empty.npz"):
            # From a file on standard input and from a pipe: the same.
            for how in ("file", "pipe"):
                out2 = os.path.join(d, "%s.%s" % (name, how))
                if how == "file":
                    with open(p, "rb") as f:
                        r2 = c.run("unpack", "-", out2, stdin=f)
                else:
                    r2 = c.run("unpack", "-", out2, input=read(p))
                if how == "pipe" and not zip_start(read(p)):
                    # Not copied from a pipe: np.load's test (its start).
                    c.check(r2.returncode == 1 and not os.path.lexists(out2)
                            and b"not an .npy file" in r2.stderr,
                            "unpack - DIR < %s (pipe, no ZIP start): exit %d "
                            "%r" % (name, r2.returncode, r2.stderr[:300]))
                    continue
                c.check(r2.returncode == 0 and files_of(tree(out2)) == want,
                        "unpack - DIR < %s (%s): exit %d, files %r %r" % (
                            name, how, r2.returncode,
                            sorted(files_of(tree(out2))), r2.stderr[:300]))
                shutil.rmtree(out2, ignore_errors=True)
        if name in ("keys.npz", "savez.npz"):
            # Again without --force: exit 1, nothing changed (one file
            # altered first, to tell); with --force: restored.
            victim = os.path.join(out, sorted(want)[-1])
            with open(victim, "wb") as f:
                f.write(b"altered")
            snap = tree(out)
            r2 = c.run("unpack", p, out)
            c.check(r2.returncode == 1 and tree(out) == snap and r2.stderr,
                    "second unpack %s without --force: exit %d, %s %r" % (
                        name, r2.returncode,
                        "unchanged" if tree(out) == snap else "CHANGED",
                        r2.stderr[:300]))
            r2 = c.run("unpack", "--force", p, out)
            c.check(r2.returncode == 0 and files_of(tree(out)) == want,
                    "unpack --force %s: exit %d %r" % (
                        name, r2.returncode, r2.stderr[:300]))
            r2 = c.run("unpack", "--force", "--no-sync", p, out)
            c.check(r2.returncode == 0 and files_of(tree(out)) == want,
                    "unpack --force --no-sync %s: exit %d %r" % (
                        name, r2.returncode, r2.stderr[:300]))
        shutil.rmtree(out, ignore_errors=True)

    # Hostile names: refused, nothing written anywhere.
    hostile = [row[0] for row in read_manifest(os.path.join(hostile_dir,
                                                            "manifest.tsv"))]
    c.check(sorted(hostile) == sorted(n for n in os.listdir(hostile_dir)
                                      if n.endswith(".npz")) and hostile,
            "npz/hostile/manifest.tsv lists every archive")
    absolute_before = (read(ABSOLUTE_TARGET)
                       if os.path.lexists(ABSOLUTE_TARGET) else None)
    for name in hostile:
        for premade in (False, True):
            parent = os.path.join(d, "hostile-%s-%d" % (name, premade))
            os.mkdir(parent)
            out = os.path.join(parent, "out")
            if premade:
                os.mkdir(out)
            r = c.run("unpack", os.path.join(hostile_dir, name), out)
            left = tree(parent)
            absolute_now = (read(ABSOLUTE_TARGET)
                            if os.path.lexists(ABSOLUTE_TARGET) else None)
            c.check(r.returncode == 1 and set(left) <= {"out"} and
                    absolute_now == absolute_before and r.stderr,
                    "unpack hostile/%s (DIR %s): exit %d, written %r%s %r" % (
                        name, "existing" if premade else "missing",
                        r.returncode, sorted(set(left) - {"out"}),
                        "" if absolute_now == absolute_before else
                        ", and " + ABSOLUTE_TARGET, r.stderr[:300]))
            shutil.rmtree(parent)
            if absolute_before is None and absolute_now is not None:
                os.remove(ABSOLUTE_TARGET)  # the tool's, after the FAIL

    # A symbolic link inside DIR is never written through.
    out = os.path.join(d, "linked")
    elsewhere = os.path.join(d, "elsewhere")
    os.mkdir(out)
    os.mkdir(elsewhere)
    os.symlink(elsewhere, os.path.join(out, "a"))
    r = c.run("unpack", os.path.join(npz, "keys.npz"), out)
    c.check(r.returncode == 1 and tree(elsewhere) == {} and
            os.path.islink(os.path.join(out, "a")),
            "unpack keys.npz into DIR with DIR/a a link: exit %d, wrote "
            "through it %r %r" % (r.returncode, sorted(tree(elsewhere)),
                                  r.stderr[:300]))
    # (the help: refused before anything is written)
    c.check(set(tree(out)) == {"a"},
            "unpack keys.npz into DIR with DIR/a a link: also wrote %r" % (
                sorted(set(tree(out)) - {"a"})))
    shutil.rmtree(d)


# ---- 7. --untrusted ---------------------------------------------------------

def check_untrusted(c, npz, tmp):
    path = os.path.join(tmp, "big_header.npz")
    dt = np.dtype([("a_rather_long_field_name_number_%04d" % i, "<i4")
                   for i in range(600)])
    a = np.zeros(3, dt)
    a[dt.names[7]] = [1, 2, 3]
    np.savez(path, big=a)
    members, _ = zip_view(path)
    c.check(members[0]["header_len"] > 10000,
            "the test archive's header is %d bytes" % members[0]["header_len"])
    r = c.run("info", "--json", path)
    try:
        got = json.loads(r.stdout)["members"]
    except (ValueError, KeyError):
        got = None
    diff = member_diff(got, members)
    c.check(r.returncode == 0 and not diff,
            "info --json of a %d-byte member header: exit %d %s %r" % (
                members[0]["header_len"], r.returncode, diff, r.stderr[:200]))
    r = c.run("dump", path, "big")
    c.check(r.returncode == 0 and dump_expectation(a, r.stdout),
            "dump of a big-header member: exit %d %r" % (r.returncode,
                                                         r.stderr[:200]))
    for words in (["info", "--untrusted", path],
                  ["info", "--json", "--untrusted", path],
                  ["validate", "--untrusted", path],
                  ["dump", "--untrusted", path, "big"]):
        r = c.run(*words)
        # info lists the member all the same, its error in its entry.
        if "--json" in words:
            try:
                m = json.loads(r.stdout)["members"][0]
            except (ValueError, KeyError, IndexError):
                m = {}
            listed = (m.get("array") is True and "10000" in m.get("error", "")
                      and "version" not in m)
        elif "info" in words:
            listed = (b"big.npy" in r.stdout and b"    error " in r.stdout
                      and b"10000" in r.stdout)
        else:
            listed = not r.stdout
        c.check(r.returncode == 1 and listed and
                (b"limit" in r.stderr or b"LIMIT" in r.stderr) and
                b"10000" in r.stderr,
                "%s of a %d-byte member header: exit %d %r %r" % (
                    " ".join(words[:-1]), members[0]["header_len"],
                    r.returncode, r.stdout[:300], r.stderr[:300]))
    for name in ("savez.npz", "savez_compressed.npz", "keys.npz"):
        p = os.path.join(npz, name)
        r = c.run("validate", "--untrusted", p)
        c.check(r.returncode == 0 and r.stdout == p.encode() + b": valid\n",
                "validate --untrusted %s: exit %d %r" % (name, r.returncode,
                                                         r.stderr[:300]))
    os.remove(path)


# ---- 9. names that escape to nothing (issue 27 item 1) ---------------------

def stored_zip(members):
    """A ZIP file of stored members, written byte by byte: zipfile will
    not write a member whose name is empty."""
    out, cd = bytearray(), bytearray()
    for name, data in members:
        raw = name.encode()
        crc = zlib.crc32(data)
        at = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0x21,
                           crc, len(data), len(data), len(raw), 0) + raw + data
        cd += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 0, 0,
                          0x21, crc, len(data), len(data), len(raw), 0, 0, 0,
                          0, 0, at) + raw
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members),
                      len(members), len(cd), len(out), 0)
    return bytes(out + cd + end)


def check_empty_names(c, tmp):
    """A member named "" or ".npy" is np.load's key '': info lists it
    (the name shown as nothing), print and dump of key '' give the array;
    `npyio ''` is an unknown command. None ends by a signal (the empty
    name was escaped to a NULL pointer, which fputs was given)."""
    a = np.arange(6, dtype="<i2").reshape(2, 3)
    buf = io.BytesIO()
    np.save(buf, a)
    npy = buf.getvalue()
    for what, names in (("'.npy'", [".npy", "b.npy"]),
                        ("''", ["", "b.npy"])):
        path = os.path.join(tmp, "empty_name.npz")
        with open(path, "wb") as f:
            f.write(stored_zip([(n, npy) for n in names]))
        with np.load(path) as z:
            keys = list(z.files)
            loaded = z[""]
        want, _ = zip_view(path)
        r = c.run("info", "--json", path)
        try:
            got = json.loads(r.stdout)["members"]
        except (ValueError, KeyError):
            got = None
        diff = member_diff(got, want)
        c.check(r.returncode == 0 and not diff and keys[0] == "" and
                [m["name"] for m in got or []] == keys,
                "info --json of a member named %s: exit %d %s %r" % (
                    what, r.returncode, diff, r.stderr[:200]))
        r = c.run("info", path)
        c.check(r.returncode == 0 and
                ("  member 0: %s\n    key             \n" % names[0]).encode()
                in r.stdout,
                "info of a member named %s: exit %d %r %r" % (
                    what, r.returncode, r.stdout[:200], r.stderr[:200]))
        r = c.run("dump", path, "")
        c.check(r.returncode == 0 and dump_expectation(loaded, r.stdout),
                "dump of key '' (member %s): exit %d %r" % (
                    what, r.returncode, r.stderr[:200]))
        r = c.run("print", path, "")
        c.check(r.returncode == 0 and r.stdout.startswith(b"array([[0, 1, 2]"),
                "print of key '' (member %s): exit %d %r %r" % (
                    what, r.returncode, r.stdout[:200], r.stderr[:200]))
        os.remove(path)
    r = c.run("")
    c.check(r.returncode == 2 and b"unknown command" in r.stderr,
            "npyio '': exit %d %r" % (r.returncode, r.stderr[:200]))


# ---- 10. members npyio cannot read, listed all the same (issue 27) ----------

def check_unreadable_members(c, tmp):
    """np.load lists every member of an archive whatever one of them
    holds; so does info. A stored member whose sizes differ (zipfile reads
    the stored bytes, and checks their CRC-32) is an .npy file npyio
    declines to read: "array": null with the library's reason, exit 0. A member whose .npy header np.load refuses carries "error",
    exit 1. Damaged members (one bit flipped in the deflate data) are
    reported by dump as damaged, with zipfile's verdict: Bad CRC-32 is
    NPYIO_E_CHECKSUM's "CRC-32", zlib.error the corrupt deflate data."""
    path = os.path.join(tmp, "sizes.npz")
    np.savez(path, a=np.arange(4, dtype="<i4"), b=np.arange(3.0))
    raw = bytearray(read(path))
    with zipfile.ZipFile(path) as z:
        info = z.infolist()[0]
    at = info.header_offset
    cd = raw.rfind(b"PK\x01\x02", 0, raw.rfind(b"PK\x01\x02"))
    for field in (at + 22, cd + 24):   # usize, local and central
        usize, = struct.unpack("<I", raw[field:field + 4])
        raw[field:field + 4] = struct.pack("<I", usize + 4)
    # np.savez writes ZIP64 extras with the sizes too: patch them alike.
    n, e = struct.unpack("<HH", raw[at + 26:at + 30])
    extra = at + 30 + n
    if raw[extra:extra + 2] == b"\x01\x00":
        usize, = struct.unpack("<Q", raw[extra + 4:extra + 12])
        raw[extra + 4:extra + 12] = struct.pack("<Q", usize + 4)
    with open(path, "wb") as f:
        f.write(raw)
    with zipfile.ZipFile(path) as z:
        try:
            z.read("a.npy")
            zip_says = "read"
        except zipfile.BadZipFile as e:
            zip_says = str(e)
        keys = z.namelist()
    r = c.run("info", "--json", path)
    try:
        got = json.loads(r.stdout)["members"]
    except (ValueError, KeyError):
        got = []
    first = got[0] if got else {}
    c.check(r.returncode == 0 and [m.get("file") for m in got] == keys and
            first.get("array", False) is None and
            "sizes differ" in first.get("reason", "") and
            "error" not in first and got[1].get("array") is True,
            "info --json of a stored member whose sizes differ: exit %d %r "
            "%r (zipfile: %s)" % (r.returncode, got, r.stderr[:200],
                                  zip_says))
    os.remove(path)

    # A bad header np.load refuses: listed, with the error; exit 1.
    path = os.path.join(tmp, "badheader.npz")
    buf = io.BytesIO()
    np.save(buf, np.arange(3.0))
    bad = buf.getvalue().replace(b"'shape'", b"'shap_'")
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("a.npy", bad)
        buf = io.BytesIO()
        np.save(buf, np.arange(2, dtype="<u1"))
        z.writestr("b.npy", buf.getvalue())
    with np.load(path) as z:
        files = list(z.files)
        try:
            z["a"]
            np_says = "loads"
        except ValueError as e:
            np_says = str(e)
    r = c.run("info", "--json", path)
    try:
        got = json.loads(r.stdout)["members"]
    except (ValueError, KeyError):
        got = []
    c.check(r.returncode == 1 and [m.get("name") for m in got] == files and
            np_says != "loads" and "error" in got[0] and
            got[0].get("array") is True and "version" not in got[0] and
            got[1].get("shape") == [2] and
            got[0].get("error", "?").encode() in r.stderr,
            "info --json with a bad .npy member: exit %d %r %r (np.load: %s)"
            % (r.returncode, got, r.stderr[:200], np_says))
    r = c.run("info", path)
    c.check(r.returncode == 1 and b"  member 1: b.npy\n" in r.stdout and
            b"    error           " in r.stdout,
            "info with a bad .npy member: exit %d %r" % (r.returncode,
                                                         r.stdout[:300]))
    os.remove(path)

    # Damage: savez_compressed, one bit flipped in b's deflate data.
    src = os.path.join(tmp, "whole.npz")
    np.savez_compressed(src, a=np.arange(10.0), b=np.arange(1000.0) * 1.5)
    raw = read(src)
    with zipfile.ZipFile(src) as z:
        binfo = z.getinfo("b.npy")
    start = local_data_start(raw, binfo)
    seen = set()
    for offset in range(0, binfo.compress_size, 5):
        damaged = bytearray(raw)
        damaged[start + offset] ^= 0x10
        path = os.path.join(tmp, "damaged.npz")
        with open(path, "wb") as f:
            f.write(damaged)
        with zipfile.ZipFile(path) as z:
            try:
                z.read("b.npy")
                continue   # a flip zipfile does not notice
            except zipfile.BadZipFile as e:
                zip_says, want = str(e), "CRC-32"
            except zlib.error as e:
                zip_says, want = str(e), "its deflate data is corrupt"
        r = c.run("dump", path, "b")
        err = r.stderr.decode(errors="replace")
        ok = (r.returncode == 1 and
              err.startswith("npyio: %s: member 'b.npy' is damaged (" % path)
              and want in err and err.count("\n") == 1 and
              "not an .npy" not in err and "inflates to only" not in err)
        kind = (want, ok)
        if kind not in seen or not ok:
            seen.add(kind)
            c.check(ok, "dump of a damaged member (bit 4 of byte %d; "
                    "zipfile: %s): exit %d %r" % (offset, zip_says,
                                                  r.returncode, err[:300]))
        os.remove(path)
    os.remove(src)


def check_threads(c, d, big, a):
    """--threads N of dump, convert, pack and unpack (0: one per core):
    the same bytes as one thread, over a 20 MB array in native and
    swapped byte order, C and Fortran order (parts of 2 MiB: the threads
    run)."""
    swapped = os.path.join(d, "big_be_f.npy")
    np.save(swapped, np.asfortranarray(
        a.reshape(2500, 1000).astype(">f8")))
    for src in (big, swapped):
        one = c.run("dump", src)
        for n in ("2", "3", "0"):
            r = c.run("dump", "--threads", n, src)
            c.check(r.returncode == 0 and r.stdout == one.stdout,
                    "dump --threads %s %s: exit %d %r" % (
                        n, os.path.basename(src), r.returncode,
                        r.stderr[:300]))
        for opts in ([], ["--byteorder", "big"], ["--dtype", "f4",
                                                  "--casting", "same_kind"],
                     ["--order", "F"]):
            outs = []
            for n in ("1", "2"):
                out = os.path.join(d, "conv%s.npy" % n)
                r = c.run("convert", "--threads", n, *opts, src, out)
                c.check(r.returncode == 0, "convert --threads %s %r: exit "
                        "%d %r" % (n, opts, r.returncode, r.stderr[:300]))
                outs.append(read(out) if r.returncode == 0 else b"")
                if os.path.exists(out):
                    os.remove(out)
            c.check(outs[0] == outs[1] and outs[0] != b"",
                    "convert --threads 2 %r %s: differs from 1 thread" % (
                        opts, os.path.basename(src)))
    bigz = os.path.join(d, "threads.npz")
    r = c.run("pack", "--compress=1", "--threads", "0", bigz, "x=" + swapped)
    c.check(r.returncode == 0, "pack --threads 0: exit %d %r" % (
        r.returncode, r.stderr[:300]))
    out_dir = os.path.join(d, "unpacked")
    r = c.run("unpack", "--threads", "2", bigz, out_dir)
    c.check(r.returncode == 0 and
            read(os.path.join(out_dir, "x.npy")) == read(swapped),
            "unpack --threads 2: exit %d %r" % (r.returncode,
                                               r.stderr[:300]))
    shutil.rmtree(out_dir, ignore_errors=True)
    os.remove(bigz)
    os.remove(swapped)


# ---- 8. usage ---------------------------------------------------------------

def check_usage(c, data_dir, tmp):
    npy = os.path.join(data_dir, "arrays", "i1.npy")
    out = os.path.join(tmp, "usage.npz")
    for words, command in ((["pack", out], "pack"),
                           (["pack", "--compress=12", out, npy], "pack"),
                           (["pack", "--zlib", out, npy], "pack"),
                           (["pack", "--threads", "65", out, npy], "pack"),
                           (["dump", "--threads", "-1", npy], "dump"),
                           (["unpack", os.path.join(data_dir, "npz",
                                                    "keys.npz")], "unpack")):
        r = c.run(*words)
        c.check(r.returncode == 2 and
                b"usage: npyio " + command.encode() in r.stderr and
                not os.path.lexists(out),
                "usage error %r: exit %d %r" % (words[1:], r.returncode,
                                                r.stderr[:300]))
    options = {"pack": [b"--compress", b"--zlib", b"--threads", b"--no-align",
                        b"--append", b"--no-sync", b"NAME", b"-"],
               "unpack": [b"--force", b"--no-sync", b"DIR", b"--untrusted",
                          b"--threads"],
               "dump": [b"--threads"], "convert": [b"--threads"]}
    for command, opts in options.items():
        r = c.run(command, "--help")
        body = r.stdout.split(b"\n", 1)[-1]
        absent = [o for o in opts if o not in body]
        c.check(r.returncode == 0 and
                r.stdout.startswith(b"usage: npyio " + command.encode()) and
                not absent,
                "%s --help: exit %d, options not described %r" % (
                    command, r.returncode, absent))


def shape_text(shape):
    """NumPy's repr of a shape tuple."""
    return "(%s)" % (", ".join(str(n) for n in shape) +
                     ("," if len(shape) == 1 else ""))


def short_line(name, facts, method, size, csize):
    if facts is None:
        head = ["-", "-", "-"]
    elif facts == "?":
        head = ["?", "?", "?"]
    else:
        head = [facts["descr"], shape_text(facts["shape"]),
                "F" if facts["fortran_order"] else "C"]
    return b"\t".join([shown(name)] + [h.encode() for h in head] +
                      [method.encode(), b"%d" % size, b"%d" % csize])


COLUMNS = b"name\tdtype\tshape\torder\tcompression\tsize\tcompressed_size"


def without_columns(lines):
    return [x for x in lines if x != COLUMNS]


def check_short_lines(c, paths, want, what):
    """info --short of paths gives want; --no-header the same without the
    column names."""
    for opts, expect in ((["--short"], want),
                         (["--short", "--no-header"], without_columns(want))):
        r = c.run("info", *opts, *paths)
        got = r.stdout.splitlines()
        bad = [(g, w) for g, w in zip(got, expect) if g != w]
        c.check(r.returncode == 0 and got == expect,
                "info %s of %s: exit %d, %d lines of %d, first differences "
                "%r %r" % (" ".join(opts), what, r.returncode, len(got),
                           len(expect), bad[:3], r.stderr[:300]))


def check_info_short(c, npz, valid, data_dir):
    paths = [os.path.join(npz, n) for n in valid]
    want = []
    for p in paths:
        want += [shown(p) + b":", COLUMNS]
        members, extra = zip_view(p)
        for m, (info, data, _) in zip(members, extra):
            facts = (member_facts(data)[0] if m.get("array") is True else
                     "?" if m.get("array") is None else None)
            want.append(short_line(m["name"], facts, m["compression"],
                                   info.file_size, info.compress_size))
    check_short_lines(c, paths, want, "%d archives" % len(paths))
    arrays = os.path.join(data_dir, "arrays")
    npys = sorted(os.path.join(arrays, n) for n in os.listdir(arrays)
                  if n.endswith(".npy"))[:20]
    lines = []
    for p in npys:
        with open(p, "rb") as f:
            facts = npy_facts(f)[0]
        size = facts["data_offset"] + facts["nbytes"]
        lines.append(short_line(p, facts, "none", size, size))
    check_short_lines(c, npys, [COLUMNS] + lines, "%d .npy files" % len(npys))
    # A run of .npy files under its names, the archive under its own.
    mixed = npys[:2] + [os.path.join(npz, "keys.npz")] + npys[2:3]
    got = c.run("info", "--short", *mixed).stdout.splitlines()
    c.check([i for i, x in enumerate(got) if x == COLUMNS] ==
            [0, 4, len(got) - 2] and got[3] == shown(mixed[2]) + b":",
            "info --short of .npy, .npy, archive, .npy: %r" % got)
    r = c.run("info", "--short", "--json", npys[0])
    c.check(r.returncode == 2 and b"exclude" in r.stderr,
            "info --short --json: exit %d %r" % (r.returncode,
                                                r.stderr[:200]))
    r = c.run("info", "--no-header", npys[0])
    c.check(r.returncode == 2 and b"--no-header goes with --short"
            in r.stderr and r.stdout == b"",
            "info --no-header without --short: exit %d %r" % (
                r.returncode, r.stderr[:200]))
    r = c.run("info", "--help")
    unnamed = [n for n in COLUMNS.split(b"\t") if n not in r.stdout]
    c.check(r.returncode == 0 and b"--no-header" in r.stdout and
            not unnamed, "info --help: columns not named %r" % unnamed)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--data", required=True)
    args = ap.parse_args()
    c = Checker(args.tool)
    t0 = time.monotonic()

    npz = os.path.join(args.data, "npz")
    manifest = read_manifest(os.path.join(npz, "manifest.tsv"))
    valid = sorted({row[0] for row in manifest})
    c.check(valid and sorted(valid) == sorted(
        n for n in os.listdir(npz) if n.endswith(".npz")),
        "npz/manifest.tsv lists every archive: %r" % valid)
    bad_dir = os.path.join(npz, "bad")
    hostile_dir = os.path.join(npz, "hostile")

    tmp = tempfile.mkdtemp(prefix="npyio-npz-cli-")
    try:
        check_info(c, npz, valid)
        check_info_short(c, npz, valid, args.data)
        check_method_name(c, npz, tmp)
        check_dump_print(c, npz, valid, tmp)
        check_member_choice(c, npz, tmp)
        check_long_member_list(c, tmp)
        check_validate(c, npz, valid, bad_dir, hostile_dir, tmp)
        check_convert(c, npz, tmp)
        check_pack(c, args.data, tmp)
        check_unpack(c, npz, valid, hostile_dir, tmp)
        check_untrusted(c, npz, tmp)
        check_usage(c, args.data, tmp)
        check_empty_names(c, tmp)
        check_unreadable_members(c, tmp)
        c.check(not c.signals, "commands ended by a signal: %r" % c.signals)
        left = os.listdir(tmp)
        c.check(not left, "files left in the scratch folder: %r" % left)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed (%.1f s)" % (c.passed, c.failed,
                                            time.monotonic() - t0))
    return 0 if c.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
