#!/usr/bin/env python3
"""Interop test for .npz archives (ctest label `interop`):

    npz_check.py --tool PATH --workdir DIR [--via-callbacks KIND]

1. Archives libnpyio writes (npz_tool pack), for stored and deflate levels
   1, 6 and 9 (on 1, 2 and 3 threads, with and without
   NPYIO_NPZ_WRITE_ZLIB), aligned or not, with known and unknown row
   counts: np.load gives the same keys and arrays; zipfile's testzip()
   finds nothing; `unzip -t`, `7z t` and miniunzip (each when installed)
   and minizip's own reader read every member; stored members are aligned
   at 64 when asked; the same inputs give the same bytes. A whole array
   on 1 or 2 threads without the flag is libdeflate's member (its .npy
   header in a stored block first); with the flag on one thread it is
   zlib's raw deflate of the member, np.savez_compressed's bytes.
   A large member deflated on 3 and 7 threads, or on 2 with the flag,
   carries a block index (local extra id 0x494E) that all of them ignore,
   whose blocks each inflate alone to their declared length; one thread,
   and 2 without the flag (one libdeflate call), give none.
   Members appended (npyio_npz_writer_open_append_path) to archives of NumPy's and
   ours: the same checks, old and new keys.
2. Archives np.savez and np.savez_compressed write (keys with '/', 'é',
   'x.npy'): libnpyio lists NumPy's keys and hands back each member's
   bytes exactly as zipfile reads them.
Prints "N passed, M failed"; exits 77 without NumPy.
"""
import argparse
import os
import shutil
import subprocess
import sys
import zipfile
import zlib

from tally import Tally

try:
    import numpy as np
except ImportError:
    print("NumPy is not available: skipped")
    sys.exit(77)


def arrays():
    rng = np.random.default_rng(17)
    rec = np.dtype([("x", "<i4"), ("y", [("a", ">f8"), ("b", "S3")]),
                    ("z", "<c8", (2,))])
    r = np.zeros(7, dtype=rec)
    r["x"] = np.arange(7)
    r["y"]["a"] = np.linspace(0, 1, 7)
    r["y"]["b"] = b"ab"
    return {
        "f8": rng.standard_normal((40, 3)),
        "i2_be": np.arange(-50, 50, dtype=">i2").reshape(10, 10),
        "fortran": np.asfortranarray(rng.standard_normal((6, 5))),
        "u1_big": (np.arange(300000) % 7).astype("u1").reshape(1000, 300),
        "scalar": np.float32(2.5) * np.ones((), "<f4"),
        "empty": np.zeros((0, 4), "<u4"),
        "bool": rng.standard_normal(33) > 0,
        "text": np.array(["é", "ab", ""], dtype="<U2"),
        "when": np.arange(5).astype("M8[h]"),
        "rec": r,
        "dir/nested": np.arange(6, dtype="<i8"),
        "x.npy": np.arange(3, dtype="<f2"),
        "é": np.arange(4, dtype="<u2"),
        "objects": np.array([1, "two", None], dtype=object),
    }


def same(a, b):
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.hasobject:
        return list(a.ravel()) == list(b.ravel())
    return a.tobytes() == b.tobytes()


INDEX_ID = 0x494E
BLOCK = 4 << 20


def local_extra(path, info):
    """The local header's extra field of a member, as bytes."""
    with open(path, "rb") as f:
        f.seek(info.header_offset + 26)
        n = int.from_bytes(f.read(2), "little")
        x = int.from_bytes(f.read(2), "little")
        f.seek(info.header_offset + 30 + n)
        return f.read(x), info.header_offset + 30 + n + x


def index_blocks(extra):
    """Our block index in an extra field: [(coff, uoff)], or None."""
    at = 0
    while at + 4 <= len(extra):
        hid = int.from_bytes(extra[at:at + 2], "little")
        n = int.from_bytes(extra[at + 2:at + 4], "little")
        if hid == INDEX_ID:
            d = extra[at + 4:at + 4 + n]
            assert d[0] == 1 and d[1:4] == b"\0\0\0", "version 1"
            count = int.from_bytes(d[4:8], "little")
            assert n == 8 + 16 * count, "length"
            return [(int.from_bytes(d[8 + 16 * i:16 + 16 * i], "little"),
                     int.from_bytes(d[16 + 16 * i:24 + 16 * i], "little"))
                    for i in range(count)]
        at += 4 + n
    return None


def other_readers(path, what, check):
    """7-Zip's `7z t` and miniunzip (minizip's extractor), when installed,
    read every member with its CRC-32; miniunzip's files are zipfile's
    bytes."""
    if shutil.which("7z"):
        r = subprocess.run(["7z", "t", path], capture_output=True)
        check(r.returncode == 0 and b"Everything is Ok" in r.stdout,
              what + ": 7z t")
    if shutil.which("miniunzip"):
        out = path + ".miniunzip"
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        r = subprocess.run(["miniunzip", "-o", os.path.abspath(path)],
                           cwd=out, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        check(r.returncode == 0, what + ": miniunzip")
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                with open(os.path.join(out, info.filename), "rb") as f:
                    check(f.read() == zf.read(info),
                          what + ": miniunzip's " + info.filename)
        shutil.rmtree(out)


def raw_member(path, info):
    """A member's compressed bytes."""
    _, data_at = local_extra(path, info)
    with open(path, "rb") as f:
        f.seek(data_at)
        return f.read(info.compress_size)


def check_deflater(path, level, zlib_flag, check, what, whole_keys):
    """Members given whole (whole_keys), on 1 or 2 threads: without the
    flag, the .npy header in a stored block, not final, then libdeflate's
    stream (it is no zlib stream of the member); with it, on one thread,
    zlib's raw deflate of the member at that level (zipfile's)."""
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            if info.filename[:-4] not in whole_keys:
                continue
            member, comp = zf.read(info), raw_member(path, info)
            z = zlib.compressobj(level, zlib.DEFLATED, -15)
            zlib_bytes = z.compress(member) + z.flush()
            if zlib_flag:
                check(comp == zlib_bytes, what + ": zlib's bytes of " +
                      info.filename)
                continue
            head = 10 + int.from_bytes(member[8:10], "little")
            stored = (b"\0" + head.to_bytes(2, "little") +
                      (head ^ 0xFFFF).to_bytes(2, "little") + member[:head])
            check(comp.startswith(stored) and comp != zlib_bytes,
                  what + ": libdeflate's member " + info.filename)


def block_index(args, tool, unzip, check):
    """1c. A 20 MB member deflated on 2 and 3 threads carries a block
    index (id 0x494E, version 1) in its local extra field that everyone
    else ignores; each block inflates alone to its declared length; one
    thread and small members carry none."""
    rng = np.random.default_rng(5)
    big = np.cumsum(rng.standard_normal(2_500_000))
    path = os.path.join(args.workdir, "walk.npy")
    np.save(path, big)
    small = os.path.join(args.workdir, "small.npy")
    np.save(small, np.arange(10))
    for level, threads, flag in ((6, 1, ""), (6, 2, ""), (6, 2, "1"),
                                 (1, 3, ""), (6, 7, "")):
        what = "index level %d threads %d zlib %s" % (level, threads, flag)
        out = os.path.join(args.workdir, "index_%d_%d%s.npz" % (
            level, threads, flag))
        os.environ["NPZ_TOOL_THREADS"] = str(threads)
        os.environ["NPZ_TOOL_ZLIB"] = flag
        r = subprocess.run(tool + ["pack", out, str(level), "0", "0",
                                   "w=" + path, "s=" + small])
        os.environ.pop("NPZ_TOOL_THREADS", None)
        os.environ.pop("NPZ_TOOL_ZLIB", None)
        check(r.returncode == 0, what + ": pack")
        if r.returncode != 0:
            continue
        with np.load(out) as z:
            check(np.array_equal(z["w"], big), what + ": np.load")
        with zipfile.ZipFile(out) as zf:
            check(zf.testzip() is None, what + ": testzip")
            infos = zf.infolist()
            check(all(i.extra == b"" for i in infos),
                  what + ": no central extra")
        if unzip:
            r = subprocess.run([unzip, "-tq", out], stdout=subprocess.DEVNULL)
            check(r.returncode == 0, what + ": unzip -t")
        r = subprocess.run([args.tool, "minizip", out],
                           stdout=subprocess.DEVNULL)
        check(r.returncode == 0, what + ": minizip reads it")
        other_readers(out, what, check)
        extra, data_at = local_extra(out, infos[0])
        blocks = index_blocks(extra)
        check(index_blocks(local_extra(out, infos[1])[0]) is None,
              what + ": no index in a small member")
        if threads == 1 or (threads == 2 and not flag):
            check(blocks is None, what + ": no index on one thread, nor "
                  "on two in one libdeflate call")
            continue
        usize, csize = infos[0].file_size, infos[0].compress_size
        check(blocks is not None and
              len(blocks) == (usize + BLOCK - 1) // BLOCK,
              what + ": one entry a block")
        if not blocks:
            continue
        check(blocks[0] == (0, 0), what + ": first block at 0")
        with open(out, "rb") as f:
            f.seek(data_at)
            comp = f.read(csize)
        ends = blocks[1:] + [(csize, usize)]
        whole = b""
        for (c0, u0), (c1, u1) in zip(blocks, ends):
            d = zlib.decompressobj(-15)
            part = d.decompress(comp[c0:c1])
            check(len(part) == u1 - u0, what + ": block at %d" % c0)
            whole += part
        with open(path, "rb") as f:
            check(whole == f.read(), what + ": blocks give the member")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--via-callbacks", metavar="KIND",
                    help="run the tool's pack, append and unpack through "
                    "streams of callbacks of that kind (full, nolock, old) "
                    "and compare what they write with the path calls'")
    args = ap.parse_args()
    via = args.via_callbacks
    tool = [args.tool] + (["--via-callbacks=" + via] if via else [])
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    tally = Tally()
    check = tally.check

    data = arrays()
    specs = []
    for i, (key, a) in enumerate(data.items()):
        path = os.path.join(args.workdir, "in%d.npy" % i)
        np.save(path, a, allow_pickle=True)
        specs.append("%s=%s" % (key, path))
    unzip = shutil.which("unzip")

    # 1. ours, read by everyone else
    whole_keys = [k for k, a in data.items() if not a.dtype.hasobject]
    for level, threads, flag in ((0, 1, ""), (1, 1, ""), (6, 1, ""),
                                 (9, 1, ""), (6, 2, ""), (1, 3, ""),
                                 (1, 1, "1"), (6, 1, "1"), (9, 1, "1"),
                                 (6, 2, "1")):
        os.environ["NPZ_TOOL_THREADS"] = str(threads)
        os.environ["NPZ_TOOL_ZLIB"] = flag
        for align in (0, 1):
            for unknown in (0, 1):
                what = "level %d threads %d zlib %s align %d unknown %d" % (
                    level, threads, flag, align, unknown)
                out = os.path.join(args.workdir,
                                   "ours_%d_%d%s_%d_%d.npz" % (
                                       level, threads, flag, align, unknown))
                r = subprocess.run(tool + ["pack", out, str(level),
                                           str(unknown), str(align)] + specs)
                check(r.returncode == 0, what + ": pack")
                if r.returncode != 0:
                    continue
                if via:
                    by_path = out + ".path"
                    subprocess.run([args.tool, "pack", by_path, str(level),
                                    str(unknown), str(align)] + specs,
                                   check=True)
                    with open(out, "rb") as f1, open(by_path, "rb") as f2:
                        check(f1.read() == f2.read(),
                              what + ": the same bytes as by path")
                with np.load(out, allow_pickle=True) as z:
                    check(sorted(z.files) == sorted(data), what + ": keys")
                    for key, a in data.items():
                        check(same(z[key], a), what + ": " + key)
                with zipfile.ZipFile(out) as zf:
                    check(zf.testzip() is None, what + ": testzip")
                    for info in zf.infolist():
                        if level == 0 and align:
                            with open(out, "rb") as f:
                                f.seek(info.header_offset + 26)
                                n = int.from_bytes(f.read(2), "little")
                                x = int.from_bytes(f.read(2), "little")
                            at = info.header_offset + 30 + n + x
                            check(at % 64 == 0, what + ": aligned " +
                                  info.filename)
                    check([i.filename for i in zf.infolist()] ==
                          [k + ".npy" for k in data], what + ": names")
                if unzip:
                    r = subprocess.run([unzip, "-tq", out],
                                       stdout=subprocess.DEVNULL)
                    check(r.returncode == 0, what + ": unzip -t")
                r = subprocess.run([args.tool, "minizip", out],
                                   stdout=subprocess.DEVNULL)
                check(r.returncode == 0, what + ": minizip reads it")
                other_readers(out, what, check)
                if level > 0 and threads <= 2 and not unknown:
                    check_deflater(out, level, flag, check, what,
                                   whole_keys if threads == 1 or not flag
                                   else [])
                again = out + ".again"
                subprocess.run(tool + ["pack", again, str(level),
                                       str(unknown), str(align)] + specs)
                with open(out, "rb") as f1, open(again, "rb") as f2:
                    check(f1.read() == f2.read(), what + ": reproducible")

    os.environ.pop("NPZ_TOOL_THREADS", None)
    os.environ.pop("NPZ_TOOL_ZLIB", None)
    block_index(args, tool, unzip, check)

    # 1b. appended to NumPy's archives and to ours
    extra = {"added": np.arange(10, dtype="<f4"),
             "added_2d": np.arange(12, dtype=">i4").reshape(3, 4)}
    extra_specs = []
    for i, (key, a) in enumerate(extra.items()):
        path = os.path.join(args.workdir, "extra%d.npy" % i)
        np.save(path, a)
        extra_specs.append("%s=%s" % (key, path))
    for name, save in (("np_savez", np.savez),
                       ("np_savez_compressed", np.savez_compressed),
                       ("ours", None)):
        for level in (0, 6):
            what = "append to %s at level %d" % (name, level)
            path = os.path.join(args.workdir, "%s_app%d.npz" % (name, level))
            if save is not None:
                save(path, **data)
            else:
                subprocess.run([args.tool, "pack", path, "6", "0", "1"] +
                               specs, check=True)
            with open(path, "rb") as f:
                before = f.read()
            r = subprocess.run(tool + ["append", path, str(level)] +
                               extra_specs)
            if via == "old":
                # No positioned writes, no truncate: refused, untouched.
                with open(path, "rb") as f:
                    check(r.returncode != 0 and f.read() == before and
                          not os.path.exists(path + ".tmp"),
                          what + ": refused on the old table, untouched")
                continue
            check(r.returncode == 0, what)
            if r.returncode != 0:
                continue
            if via:
                by_path = path + ".path"
                with open(by_path, "wb") as f:
                    f.write(before)
                subprocess.run([args.tool, "append", by_path, str(level)] +
                               extra_specs, check=True)
                with open(path, "rb") as f1, open(by_path, "rb") as f2:
                    check(f1.read() == f2.read(),
                          what + ": the same bytes as by path")
            with np.load(path, allow_pickle=True) as z:
                check(z.files == list(data) + list(extra), what + ": keys")
                for key, a in list(data.items()) + list(extra.items()):
                    check(same(z[key], a), what + ": " + key)
            with zipfile.ZipFile(path) as zf:
                check(zf.testzip() is None, what + ": testzip")
            if unzip:
                r = subprocess.run([unzip, "-tq", path],
                                   stdout=subprocess.DEVNULL)
                check(r.returncode == 0, what + ": unzip -t")
            r = subprocess.run([args.tool, "minizip", path],
                               stdout=subprocess.DEVNULL)
            check(r.returncode == 0, what + ": minizip reads it")

    # 2. NumPy's, read by us
    for name, save in (("savez", np.savez),
                       ("savez_compressed", np.savez_compressed)):
        path = os.path.join(args.workdir, name + ".npz")
        save(path, **data)
        out = os.path.join(args.workdir, name + ".out")
        os.makedirs(out)
        r = subprocess.run(tool + ["unpack", path, out],
                           capture_output=True, text=True)
        check(r.returncode == 0, name + ": unpack " + r.stderr)
        if r.returncode != 0:
            continue
        lines = [l.split("\t") for l in r.stdout.splitlines()]
        check([l[1] for l in lines] == list(data), name + ": keys")
        with zipfile.ZipFile(path) as zf:
            for l, info in zip(lines, zf.infolist()):
                with open(os.path.join(out, l[0] + ".bin"), "rb") as f:
                    check(f.read() == zf.read(info), name + ": bytes of " +
                          info.filename)
                check(l[2] == "1", name + ": is an array " + info.filename)
    return tally.summary()


if __name__ == "__main__":
    sys.exit(main())
