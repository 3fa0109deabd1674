#!/usr/bin/python3
"""Generate archives whose member names attack `npyio unpack`.

    /usr/bin/python3 tests/data/gen_npz_hostile.py

Needs only Python's zipfile (no NumPy): every member holds the bytes of
tests/data/arrays/i1.npy, so each is a valid .npy file and would be
written if its name were not refused. The output (tests/data/npz/hostile/,
rewritten on every run, the same bytes every time) and a manifest:

  <archive> <tab> <what the name does>

`npyio unpack` must refuse every archive here, before writing anything.
"""
import os
import shutil
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


if __name__ == "__main__":
    main()
