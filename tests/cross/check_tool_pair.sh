#!/usr/bin/env bash
# check_tool_pair.sh WORKDIR DATA LINUX_NPYIO [EMULATOR...] WINDOWS_NPYIO
#
# The Windows tool (WINDOWS_NPYIO under the emulator, Wine) writes the
# corpus's arrays byte for byte as the Linux tool (LINUX_NPYIO, native)
# does: every .npy of DATA/arrays packed into an archive stored, deflated
# at level 6, and deflated on two threads (the block index), and corpus
# files converted (byte order, memory order, element type). Prints "tool
# pair OK" or names the first output that differs.
set -euo pipefail
work=$1 data=$2 linux=$3
shift 3
windows=("$@")
rm -rf "$work"
mkdir -p "$work/linux" "$work/windows"
arrays=("$data"/arrays/*.npy)

# both OUT ARGS...: each tool run with ARGS in its own folder, where each
# writes OUT; the two OUTs compared.
both() {
    local out=$1
    shift
    (cd "$work/linux" && "$linux" "$@") ||
        { echo "check_tool_pair: the Linux tool failed: $1 ... $out"; exit 1; }
    (cd "$work/windows" && "${windows[@]}" "$@") ||
        { echo "check_tool_pair: the Windows tool failed: $1 ... $out"; exit 1; }
    cmp "$work/linux/$out" "$work/windows/$out" ||
        { echo "check_tool_pair: $out differs between the builds"; exit 1; }
}

both stored.npz pack --no-sync stored.npz "${arrays[@]}"
both deflated.npz pack --no-sync --compress deflated.npz "${arrays[@]}"
both threads.npz pack --no-sync --compress --threads 2 threads.npz \
    "${arrays[@]}"
both little.npy convert --no-sync --byteorder little \
    "$data/arrays/f8be_3x5_f.npy" little.npy
both fortran.npy convert --no-sync --order F --byteorder big \
    "$data/arrays/f4le_3x5_c.npy" fortran.npy
both f4.npy convert --no-sync --dtype f4 --casting same_kind \
    "$data/arrays/big_f8_fortran.npy" f4.npy
echo "tool pair OK (${#arrays[@]} corpus arrays packed three ways, three conversions)"
