#!/usr/bin/python3
"""Generate archives whose member names attack `npyio unpack`.

    /usr/bin/python3 tests/data/gen_npz_hostile.py

Needs only Python's zipfile (no NumPy): every member holds the bytes of
tests/data/arrays/i1.npy, so each is a valid .npy file and would be
written if its name were not refused. The output (tests/data/npz/hostile/,
rewritten on every run, the same bytes every time) and a manifest:

  <archive> <tab> <what the name does>

`npyio unpack` must refuse every archive here, before writing anything.

With NumPy, it also writes tests/data/npz/append/: valid archives (zipfile
and np.load read them, and so does our reader) whose bytes would mislead
minizip's append mode, which looks for the last ZIP64 locator signature in
the final 64 KiB wherever it lies. Appending to each must keep every old
member (test_npz.c test_append_hostile, npz_cli_check.py). Manifest:

  <archive> <tab> <its keys, comma-separated> <tab> <what it does>
"""
import io
import os
import shutil
import struct
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "npz", "hostile")
NPY = open(os.path.join(HERE, "arrays", "i1.npy"), "rb").read()

# archive: (member names in order, what it tests). "\0" is patched in
# after writing (zipfile cuts names at a NUL); "|" stands for it.
CASES = {
    "dotdot.npz": (["ok.npy", "../x.npy"], "a '..' component leaves DIR"),
    "dotdot_deep.npz": (["a/../../x.npy"], "'..' inside the name leaves DIR"),
    "absolute.npz": (["/tmp/npyio-hostile-absolute.npy"],
                     "an absolute path"),
    "backslash.npz": (["..\\x.npy"], "a backslash (a Windows separator)"),
    "nul.npz": (["ok.npy|../x.npy"],
                "a NUL byte in the stored name (zipfile cuts it there)"),
    "collide.npz": (["a.npy", "a", "a/b.npy"],
                    "member 'a' is a file where 'a/b.npy' needs a folder"),
    "dot.npz": (["./x.npy"], "a '.' component"),
    "empty_component.npz": (["a//x.npy"], "an empty component"),
    "long_component.npz": (["ok.npy", "a" * 300 + ".npy"],
                           "a component longer than 255 bytes (NAME_MAX)"),
}


def write(path, names):
    with zipfile.ZipFile(path, "w") as z:
        for name in names:
            info = zipfile.ZipInfo(name.replace("|", "X"),
                                   date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o600 << 16
            z.writestr(info, NPY)
    data = open(path, "rb").read()
    for name in names:
        if "|" in name:
            # The name appears twice: local header and directory entry.
            fake = name.replace("|", "X").encode()
            data = data.replace(fake, name.replace("|", "\0").encode())
    open(path, "wb").write(data)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    with open(os.path.join(OUT, "manifest.tsv"), "w") as m:
        m.write("#archive\twhat\n")
        for archive, (names, what) in sorted(CASES.items()):
            write(os.path.join(OUT, archive), names)
            m.write("%s\t%s\n" % (archive, what))


# ---- archives that mislead minizip's append mode ----------------------------

APPEND_OUT = os.path.join(HERE, "npz", "append")


def zip64_end(at, count, cd_size, cd_offset):
    """A ZIP64 end record at file offset `at` and its locator (76 bytes)."""
    return (struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count,
                        count, cd_size, cd_offset) +
            struct.pack("<IIQI", 0x07064B50, 0, at, 1))


def savez(**arrays):
    import numpy as np
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def fake_in_comment():
    """np.savez's archive with a 76-byte comment: a ZIP64 end record of an
    empty directory and its locator. minizip appended where the record
    says the directory is, and the old members were gone."""
    import numpy as np
    data = bytearray(savez(a=np.arange(4), b=np.ones(3)))
    at = len(data)  # the comment starts right after the end record
    comment = zip64_end(at, 0, 0, at)
    struct.pack_into("<H", data, len(data) - 2, len(comment))
    return bytes(data) + comment


def with_payload_in(last, make):
    """np.savez(a=..., b=last bytes) where b's data is make(offset of b's
    data in the file): the layout is known from a first build."""
    import numpy as np
    first = savez(a=np.arange(4), b=np.frombuffer(last, np.uint8))
    at = first.index(last)
    payload = make(at)
    assert len(payload) == len(last)
    data = savez(a=np.arange(4), b=np.frombuffer(payload, np.uint8))
    assert data.index(payload) == at
    return data


def fake_in_data():
    """The same 76 bytes inside the last array's data: no structural
    hostility at all."""
    return with_payload_in(b"\xAA" * 76, lambda at: zip64_end(at, 0, 0, at))


def directory_in_data():
    """The last array's data carries a whole archive (a.npy: the
    attacker's array), its directory and a ZIP64 end record: minizip kept
    that directory, and np.load(F)['a'] was the attacker's array."""
    import numpy as np
    buf = io.BytesIO()
    np.save(buf, np.full(4, 666))
    evil = io.BytesIO()
    with zipfile.ZipFile(evil, "w") as z:
        info = zipfile.ZipInfo("a.npy", date_time=(1980, 1, 1, 0, 0, 0))
        z.writestr(info, buf.getvalue())
    raw = evil.getvalue()
    cd_offset = struct.unpack("<I", raw[-6:-2])[0]
    cd_size = struct.unpack("<I", raw[-10:-6])[0]
    inner = raw[:cd_offset + cd_size]  # members and directory, no end
    filler = b"\xAA" * (len(inner) + 76)
    return with_payload_in(filler, lambda at: inner + zip64_end(
        at + len(inner), 1, cd_size, cd_offset))


APPEND_CASES = {
    "comment_zip64.npz": (fake_in_comment, "a, b",
                          "the comment holds a ZIP64 end record and locator"),
    "data_zip64.npz": (fake_in_data, "a, b",
                       "the last array's data holds a ZIP64 end record and "
                       "locator"),
    "data_directory.npz": (directory_in_data, "a, b",
                           "the last array's data holds a whole archive "
                           "(another a.npy), its directory and ZIP64 end "
                           "records"),
}


def check_append_case(path, keys):
    """zipfile and np.load read the archive as np.savez wrote it."""
    import numpy as np
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None, path
    with np.load(path) as npz:
        assert npz.files == keys, (path, npz.files)
        assert list(npz["a"]) == [0, 1, 2, 3], path


def main_append():
    shutil.rmtree(APPEND_OUT, ignore_errors=True)
    os.makedirs(APPEND_OUT)
    with open(os.path.join(APPEND_OUT, "manifest.tsv"), "w") as m:
        m.write("#archive\tkeys\twhat\n")
        for archive, (make, keys, what) in sorted(APPEND_CASES.items()):
            path = os.path.join(APPEND_OUT, archive)
            with open(path, "wb") as f:
                f.write(make())
            check_append_case(path, keys.split(", "))
            m.write("%s\t%s\t%s\n" % (archive, keys.replace(" ", ""),
                                      what))


if __name__ == "__main__":
    main()
    main_append()
