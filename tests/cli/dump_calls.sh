#!/bin/sh
# dump_calls.sh TOOL - the system calls of `npyio dump` of an 8 MiB array
# (data at byte 128, as np.save puts it) into a pipe, counted by strace:
# one read and one write() per 1 MiB chunk. The bound fails if chunks are
# split again (stdio's 4 KiB buffer cut each read and each write in two:
# 1 MiB - 4 KiB, then 4 KiB). Deterministic: counts, never times. Skipped
# (77) without strace or where ptrace is refused.
set -u
tool=$1
command -v strace >/dev/null 2>&1 || { echo "no strace: skipped"; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/npyio-dump-calls.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
# np.save's header of a (1048576,) '<f8' array: 10 bytes of prefix, the
# dictionary padded with spaces to byte 127, a newline.
dict="{'descr': '<f8', 'fortran_order': False, 'shape': (1048576,), }"
{
    printf '\223NUMPY\001\000\166\000%s' "$dict"
    printf '%*s\n' $((127 - 10 - ${#dict})) ''
    head -c 8388608 /dev/zero
} >"$dir/a.npy"
size=$(wc -c <"$dir/a.npy")
[ "$size" -eq 8388736 ] || { echo "FAIL: made $size bytes"; exit 1; }
strace -o "$dir/trace" -e trace=openat,read,pread64,write,close "$tool" dump \
    "$dir/a.npy" | cat >/dev/null ||
    { echo "strace cannot run here: skipped"; exit 77; }
# From the array's open to its close (start-up reads its libraries first,
# and a coverage build writes its counters at exit): the reads of the
# array's descriptor, and the writes to standard output.
sed -n '/a\.npy/,$p' "$dir/trace" >"$dir/calls"
fd=$(sed -n '1s/.*= \([0-9][0-9]*\)$/\1/p' "$dir/calls")
[ -n "$fd" ] || { echo "FAIL: no open of a.npy in the trace"; exit 1; }
writes=$(grep -c '^write(1,' "$dir/calls")
reads=$(awk -v fd="$fd" '
    $0 ~ "^close\\(" fd "\\)" { exit }
    $0 ~ "^(read|pread64)\\(" fd "," { n++ }
    END { print n + 0 }' "$dir/calls")
echo "dump of 8 MiB into a pipe: $writes writes, $reads reads of the file"
if [ "$writes" -gt 8 ] || [ "$reads" -gt 14 ]; then
    echo "FAIL: more than one write (8) or read (8, and 6 for the" \
        "header) per 1 MiB"
    cat "$dir/calls"
    exit 1
fi
echo "PASS"
