#!/bin/sh
# check_pair.sh WORKDIR LINUX_WRITE_PAIR [EMULATOR...] WINDOWS_WRITE_PAIR
#
# An .npy and an .npz written by the Windows build (WINDOWS_WRITE_PAIR
# run under the emulator, Wine) are byte-identical to the Linux build's
# (LINUX_WRITE_PAIR, native), and NumPy (/usr/bin/python3) reads them:
# the same values, the UTF-8-named file too. Prints "pair OK" or fails.
set -eu
work=$1 linux=$2
shift 2
rm -rf "$work"
mkdir -p "$work/linux" "$work/windows"
"$linux" "$work/linux"
"$@" "$work/windows"
for f in pair.npy pair.npz "café-日本.npy"; do
    [ -f "$work/windows/$f" ] || { echo "check_pair: Windows wrote no $f"; exit 1; }
    cmp "$work/linux/$f" "$work/windows/$f" ||
        { echo "check_pair: $f differs between the builds"; exit 1; }
done
/usr/bin/python3 - "$work/windows" <<'PY'
import sys, numpy as np
d = sys.argv[1]
grid = np.arange(12, dtype='<f8').reshape(3, 4) * 0.25 - 1.0
for name in ("pair.npy", "café-日本.npy"):
    a = np.load(f"{d}/{name}")
    assert a.dtype == np.dtype('<f8') and (a == grid).all(), name
with np.load(f"{d}/pair.npz") as z:
    assert sorted(z.files) == ["deflated", "stored"], z.files
    assert (z["stored"] == grid).all()
    assert (z["deflated"] == np.array([1, -2, 3, -4, 5], '<i4')).all()
PY
echo "pair OK"
