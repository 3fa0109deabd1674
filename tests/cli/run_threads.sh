#!/bin/bash
# convert and dump with --threads N (src/cli/pipeline.c): the data in parts
# of 4 MiB made on N threads and written in order. Without Python (runs
# under the sanitizers and on the cross hosts):
#
#   run_threads.sh BYTE_ORDER TOOL DATA_DIR [EMULATOR [ARGS...]]
#
# - arrays of several parts (a part boundary inside no element: odd sizes),
#   of less than one part, of 0 elements, 0-d, in Fortran order (kept, and
#   reordered: one thread), cast with --dtype: the output of --threads 2,
#   3 and 5 is the output of one thread, byte for byte;
# - a cast that fails mid-way (NaN to an integer, in the third part): the
#   failure named as one thread names it, exit 1, and on standard output
#   exactly the parts before the failing one (the header, then whole
#   parts), never bytes after it;
# - standard output that fails (/dev/full; a pipe closed early): exit 1 or
#   SIGPIPE, with a message for /dev/full, and no hang (timeout);
# - memory bounded: convert --threads 2 of a 1 GiB file (sparse) under a
#   virtual memory limit of 384 MiB, and dump --threads 2 of a 304 MiB
#   deflated member, with and without a block index (streamed on one
#   thread) under 256 MiB (not under the sanitizers, whose shadow memory needs
#   terabytes of address space: NPYIO_TEST_SANITIZED).
. "$(dirname "$0")/common.sh"

# A .npy header (version 1.0) for DESCR, FORTRAN (True/False), SHAPE
# (Python's tuple text), padded as np.save pads it.
npy_header() {
    local dict="{'descr': '$1', 'fortran_order': $2, 'shape': $3, }"
    local len=$(( ${#dict} + 1 ))
    local total=$(( (10 + len + 63) / 64 * 64 ))
    local pad=$(( total - 10 - len ))
    local hl=$(( total - 10 ))
    printf '\x93NUMPY\x01\x00'
    printf "\\x$(printf %02x $((hl % 256)))\\x$(printf %02x $((hl / 256)))"
    printf '%s%*s\n' "$dict" "$pad" ''
}

# result_of ARGS...: where `npyio ARGS` put its result: stdout for dump
# and for an output of -, else the file its last argument names.
result_of() {
    if [ "$1" = dump ] || [ "${*: -1}" = "-" ]; then
        echo "$tmp/out"
    else
        echo "${*: -1}"
    fi
}

# same_output WHAT COMMAND ARGS...: `npyio COMMAND --threads N ARGS` gives
# at N = 2, 3 and 5 the bytes it gives at N = 1.
same_output() {
    local what=$1 command=$2 result
    shift 2
    result=$(result_of "$command" "$@")
    npyio "$command" --threads 1 "$@"
    check $? "$what --threads 1"
    cp "$result" "$tmp/one"
    for n in 2 3 5; do
        npyio "$command" --threads "$n" "$@"
        [ "$status" -eq 0 ] && cmp -s "$result" "$tmp/one"
        check $? "$what --threads $n: the bytes of one thread"
    done
}

# Arrays from random bytes: 3 parts of 4 MiB and an odd tail (>i2, 3
# bytes past a part boundary would split an element of <c16), less than
# one part, 0 elements, 0-d, Fortran order.
head -c $(( (12 << 20) + 4098 )) /dev/urandom >"$tmp/raw"
npyio wrap --dtype '>i2' --shape $(( ((12 << 20) + 4098) / 2 )) "$tmp/raw" "$tmp/i2.npy"
check $? "wrap the >i2 array"
head -c $(( (12 << 20) + 4096 )) /dev/urandom >"$tmp/rawc"
npyio wrap --dtype '<c16' --shape $(( ((12 << 20) + 4096) / 16 )) "$tmp/rawc" "$tmp/c16.npy"
check $? "wrap the <c16 array"
head -c 12000 "$tmp/raw" >"$tmp/small"
npyio wrap --dtype '<f4' --shape 3000 "$tmp/small" "$tmp/small.npy"
check $? "wrap the small array"
: >"$tmp/empty"
npyio wrap --dtype '<f8' --shape 0,7 "$tmp/empty" "$tmp/zero.npy"
check $? "wrap the 0-element array"
head -c 8 "$tmp/raw" >"$tmp/one8"
npyio wrap --dtype '>f8' --shape '' "$tmp/one8" "$tmp/scalar.npy"
check $? "wrap the 0-d array"
head -c $(( 1000 * 1500 * 8 )) "$tmp/raw" >"$tmp/rawf"
npyio wrap --dtype '>u8' --shape 1000,1500 --order F "$tmp/rawf" "$tmp/f.npy"
check $? "wrap the Fortran-order array"

for a in i2 c16 small zero scalar f; do
    same_output "dump $a" dump "$tmp/$a.npy"
    same_output "convert $a" convert "$tmp/$a.npy" "$tmp/conv.npy"
    same_output "convert --byteorder big $a" convert --byteorder big \
        "$tmp/$a.npy" "$tmp/conv.npy"
    same_output "convert --byteorder little to - $a" convert \
        --byteorder little "$tmp/$a.npy" -
done
same_output "convert --order F f (as stored)" convert --order F "$tmp/f.npy" "$tmp/conv.npy"
same_output "convert --order C i2 (as stored)" convert --order C "$tmp/i2.npy" "$tmp/conv.npy"
same_output "convert --order F i2 (reordered)" convert --order F \
    --byteorder big "$tmp/i2.npy" "$tmp/conv.npy"
same_output "convert --dtype f8 i2" convert --dtype f8 "$tmp/i2.npy" "$tmp/conv.npy"
same_output "convert --dtype '>f4' --casting unsafe c16" convert \
    --dtype '>f4' --casting unsafe "$tmp/c16.npy" "$tmp/conv.npy"
same_output "convert --dtype i1 --casting unsafe i2" convert --dtype i1 \
    --casting unsafe "$tmp/i2.npy" "$tmp/conv.npy"

# A cast that fails in the third part: NaN at element 2.5 Mi of <f8 data
# (parts of 4 MiB of int32 hold 1 Mi elements), zeros elsewhere.
nan_at=$(( 5 << 19 ))
{
    head -c $(( nan_at * 8 )) /dev/zero
    printf '\x00\x00\x00\x00\x00\x00\xf8\x7f'
    head -c $(( (3 << 20) * 8 - nan_at * 8 - 8 )) /dev/zero
} >"$tmp/rawnan"
npyio wrap --dtype '<f8' --shape $(( 3 << 20 )) "$tmp/rawnan" "$tmp/nan.npy"
check $? "wrap the array with a NaN"
npyio convert --threads 1 --dtype i4 --casting unsafe "$tmp/nan.npy" -
cp "$tmp/err" "$tmp/err1"
one=$status
# Parts of 4 MiB of int32: the parts before the NaN's, whole.
part=$(( (4 << 20) / 4 ))
before=$(( 128 + nan_at / part * part * 4 ))
for n in 2 3; do
    npyio convert --threads "$n" --dtype i4 --casting unsafe "$tmp/nan.npy" -
    [ "$status" -eq 1 ] && [ "$one" -eq 1 ] && cmp -s "$tmp/err" "$tmp/err1" &&
        grep -q "$nan_at" "$tmp/err"
    check $? "convert --threads $n: the failing element named as one thread names it"
    size=$(wc -c <"$tmp/out")
    [ "$size" -eq "$before" ] &&
        cmp -s <(tail -c +129 "$tmp/out") <(head -c $(( before - 128 )) /dev/zero)
    check $? "convert --threads $n: stdout holds the header and the parts before the failing one ($size bytes, $before expected)"
done

# Standard output that fails.
if ! wine_skips "/dev/full and SIGPIPE are POSIX's"; then
    for n in 2 3; do
        timeout 120 "${emulator[@]}" "$tool" dump --threads "$n" "$tmp/c16.npy" \
            >/dev/full 2>"$tmp/err"
        status=$?
        [ "$status" -eq 1 ] && grep -q "^npyio: writing: " "$tmp/err"
        check $? "dump --threads $n >/dev/full: exit 1, the write failure named"
        timeout 120 "${emulator[@]}" "$tool" convert --byteorder big \
            --threads "$n" "$tmp/c16.npy" - >/dev/full 2>"$tmp/err"
        status=$?
        [ "$status" -eq 1 ] && [ "$(head -c 7 "$tmp/err")" = "npyio: " ]
        check $? "convert --threads $n to - >/dev/full: exit 1, a message"
        set -o pipefail
        timeout 120 "${emulator[@]}" "$tool" dump --threads "$n" "$tmp/c16.npy" \
            2>"$tmp/err" | head -c 10 >/dev/null
        status=$?
        set +o pipefail
        # SIGPIPE (141), or exit 1 where SIGPIPE is ignored; 124 is a hang.
        [ "$status" -eq 141 ] || [ "$status" -eq 1 ]
        check $? "dump --threads $n into a pipe closed early: ended (no hang)"
    done
fi

# Memory bounded: 1 GiB of (sparse) data under a 384 MiB address space.
if [ -z "${NPYIO_TEST_SANITIZED:-}" ] && [ ${#emulator[@]} -eq 0 ] &&
    ! wine_skips "ulimit -v is POSIX's"; then
    npy_header '<f8' False '(134217728,)' >"$tmp/big.npy"
    truncate -s $(( 128 + (1 << 30) )) "$tmp/big.npy"
    (ulimit -v $(( 384 << 10 )); "$tool" convert --no-sync --threads 2 \
        --byteorder big "$tmp/big.npy" "$tmp/bigc.npy") 2>"$tmp/err"
    status=$?
    [ "$status" -eq 0 ] && [ "$(wc -c <"$tmp/bigc.npy")" -eq $(( 128 + (1 << 30) )) ]
    check $? "convert --threads 2 of 1 GiB under ulimit -v 384 MiB"
    rm -f "$tmp/bigc.npy" "$tmp/big.npy"
    # A deflated member beyond the one libdeflate call (257 MiB), packed
    # on one thread and on two (with a block index): streamed on one
    # thread, not read whole.
    npy_header '<f8' False '(39845888,)' >"$tmp/zeros.npy"
    truncate -s $(( 128 + 39845888 * 8 )) "$tmp/zeros.npy"
    for packed in 1 2; do
        "$tool" pack --compress=1 --threads "$packed" --no-sync "$tmp/z.npz" "a=$tmp/zeros.npy"
        check $? "pack the 304 MiB member of zeros on $packed thread(s)"
        (ulimit -v $(( 256 << 10 )); "$tool" dump --threads 2 "$tmp/z.npz" a) \
            2>"$tmp/err" | wc -c >"$tmp/count"
        [ "$(cat "$tmp/count")" -eq $(( 39845888 * 8 )) ] && [ ! -s "$tmp/err" ]
        check $? "dump --threads 2 of a 304 MiB member packed on $packed thread(s) under ulimit -v 256 MiB"
        rm -f "$tmp/z.npz"
    done
    rm -f "$tmp/zeros.npy" "$tmp/z.npz"
fi
finish
