#!/bin/bash
# The npyio tool where the system says no, without Python, so that it also
# runs under the sanitizers and on the cross (qemu) hosts:
#
#   run_errors.sh BYTE_ORDER TOOL DATA_DIR [EMULATOR [ARGS...]]
#
# Real conditions only (no fault injection), each checked by its exit
# status, its message and what it leaves on disk:
#
# - standard output that cannot be written (/dev/full, closed): print,
#   dump (buffered, and more than a buffer at once), info of an archive,
#   convert to -; info and validate of .npy files too;
# - files that reach the file size limit (ulimit -f, SIGXFSZ ignored, so
#   write() fails with EFBIG): dump's copy inside the kernel, convert's
#   OUT (an old OUT kept), pack's members and its central directory, pack
#   --append, unpack's files (no temporary left), the temporary copies of
#   a pipe's archive and of a pipe's Fortran data;
# - TMPDIR missing, too long or empty for those temporary copies;
# - inputs that are FIFOs given by name, pipes (object arrays, short
#   data), standard input opened at an offset (an .npy, Fortran data, an
#   object array, an archive), compact (16-byte aligned) headers from a
#   pipe and converted to Fortran order with --max-header-size at their
#   length;
# - a 4 MiB array reordered both ways (the buffer for large reorders);
# - progress bars on a terminal (script(1), where there is one) for pack,
#   unpack, validate and dump, and none when standard error is a file;
# - the command line: --, an option without its value (a usage error,
#   not an unknown option), an empty command name, pack's NAME=FILE
#   errors, pack of a folder and into a missing folder, unpack of an .npy
#   file, into a file, under a file, onto a folder, with too few file
#   descriptors (ulimit -n, one more each run); names with invalid
#   UTF-8 escaped in messages; a subarray field too large to print.
#
# Under valgrind (given as EMULATOR) the TMPDIR failures and the descriptor
# limits are left out: valgrind needs both for itself.
. "$(dirname "$0")/common.sh"

# mknpy ALIGN DICT: a version 1.0 header whose dict is DICT, padded with
# spaces and a newline to a multiple of ALIGN bytes (np.save: 64; NumPy
# before 1.14: 16).
mknpy() {
    local align=$1 dict=$2 n pad hlen
    n=$((10 + ${#dict} + 1))
    pad=$(((align - n % align) % align))
    hlen=$((${#dict} + pad + 1))
    printf '\223NUMPY\001\000'
    printf "\\$(printf %03o $((hlen & 255)))\\$(printf %03o $((hlen >> 8)))"
    printf '%s%*s\n' "$dict" "$pad" ''
}

# limited ARGS...: npyio with files limited to 256 KiB (the coverage
# build's own .gcda files stay below that), write() failing with EFBIG
# beyond it rather than the process being killed by SIGXFSZ.
limited() {
    (
        trap '' XFSZ
        ulimit -f 256
        npyio "$@"
        exit "$status"
    )
    status=$?
    return $status
}

# one_line TEXT: stderr is exactly that line.
one_line() { [ "$(cat "$tmp/err")" = "$1" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ]; }
# full_line: stderr is the one line of a write to /dev/full (under Wine,
# whose C runtime leaves errno unset for a failed buffered write, the tool
# says only that the write failed).
full_line() {
    one_line "npyio: writing: No space left on device" ||
        { [ -n "${NPYIO_TEST_WINE:-}" ] &&
            one_line "npyio: writing: a write to standard output failed"; }
}

# The messages below name files as the tool shows them (escaped): $tmp
# must hold only characters shown as they are.
case $tmp in *[!A-Za-z0-9/._-]*) echo "odd scratch path $tmp"; exit 1 ;; esac

valgrind=0
case ${emulator[0]:-} in *valgrind*) valgrind=1 ;; esac
w=$tmp/w # the folder outputs go to: empty after every failure
mkdir "$w"
empty_w() { [ -z "$(ls -A "$w")" ]; }

# ---- test files -----------------------------------------------------------------
# A 2048 x 2048 uint8 array (4 MiB) of varied bytes, in C order, and the
# same array in Fortran order made by the tool (checked both ways).
seq 1 1000000 | head -c 4194304 >"$tmp/data.bin"
c=$tmp/c.npy f=$tmp/f.npy
{ mknpy 64 "{'descr': '|u1', 'fortran_order': False, 'shape': (2048, 2048), }"
  cat "$tmp/data.bin"; } >"$c"
npyio convert --order F "$c" "$f"
[ "$status" -eq 0 ] && grep -q "'fortran_order': True" "$f" &&
    ! cmp -s <(tail -c 4194304 "$f") "$tmp/data.bin"
check $? "convert --order F of a 4 MiB array"
npyio dump "$f"
[ "$status" -eq 0 ] && cmp -s "$tmp/out" "$tmp/data.bin"
check $? "dump of the 4 MiB Fortran array (reordered)"
npyio convert --order C "$f" "$w/back.npy"
[ "$status" -eq 0 ] && cmp -s "$w/back.npy" "$c"
check $? "convert --order C of the 4 MiB Fortran array gives the C file"
rm -f "$w/back.npy"
# Small ones: a 2 x 3 Fortran array of the bytes "abcdef" (C order
# "acebdf"), as np.save writes it and with a 16-byte aligned header.
small=$tmp/small_f.npy compact=$tmp/compact_f.npy compact_c=$tmp/compact_c.npy
{ mknpy 64 "{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3), }"
  printf abcdef; } >"$small"
{ mknpy 16 "{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3), }"
  printf abcdef; } >"$compact"
{ mknpy 16 "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }"
  printf abcdef; } >"$compact_c"
obj=$data/arrays/object_mixed.npy
keys=$data/npz/keys.npz
# An archive of the 4 MiB array (4 MiB: beyond the file size limit).
big_npz=$tmp/big.npz
npyio pack --no-sync "$big_npz" "$c"
check $? "pack the 4 MiB array"

# ---- standard output that cannot be written --------------------------------------
# to_full ARGS...: the tool with stdout /dev/full (writes fail with ENOSPC).
to_full() {
    "${emulator[@]}" "$tool" "$@" >/dev/full 2>"$tmp/err"
    status=$?
}
to_full print "$small"
[ "$status" -eq 1 ] && full_line
check $? "print to /dev/full"
to_full dump "$small"
[ "$status" -eq 1 ] && full_line
check $? "dump to /dev/full (a small write, buffered)"
to_full dump "$c"
[ "$status" -eq 1 ] && full_line
check $? "dump of 4 MiB to /dev/full"
to_full convert "$small" -
[ "$status" -eq 1 ] && grep -q '^npyio: -: .*No space left on device$' "$tmp/err"
check $? "convert to - on /dev/full"
to_full info --json "$data/npz/savez.npz"
[ "$status" -eq 1 ] && full_line
check $? "info --json of an archive (over 4 KiB of text) to /dev/full"
# info and validate: output that did not reach standard output is an
# error (it once exited 0, the text lost).
lost_output() {
    to_full "$@"
    [ "$status" -eq 1 ] && full_line
    check $? "$* to /dev/full: exit 1"
}
lost_output info "$small"
lost_output info --json "$small"
lost_output validate "$small"
lost_output info "$keys"
lost_output validate "$keys"
# A closed standard output (natively only: an emulator may hold low
# descriptors of its own, which the tool's files would then not get).
if [ ${#emulator[@]} -eq 0 ]; then
    "$tool" dump "$small" >&- 2>"$tmp/err"
    status=$?
    [ "$status" -eq 1 ] && one_line "npyio: writing: Bad file descriptor"
    check $? "dump to a closed standard output"
fi

# ---- the file size limit: writes fail with EFBIG -----------------------------------
if ! wine_skips "the file size limit: ulimit -f and SIGXFSZ are POSIX's; a Windows program has no such limit"; then
# dump: the kernel's copy fails part way; one message, and no second copy
# through a buffer after it (cli_input_copy_data's "cannot copy here"
# was once 1, which is also EXIT_INVALID: dump copied again and said so
# twice).
limited dump "$c"
[ "$status" -eq 1 ] &&
    { one_line "npyio: $c: copying the data: File too large" ||
      one_line "npyio: writing: File too large"; }
check $? "dump beyond the file size limit: one message"
# convert: OUT absent, or an old OUT unchanged; no temporary left.
limited convert --order F "$c" "$w/out.npy"
[ "$status" -eq 1 ] && grep -q "^npyio: $w/out.npy: .*File too large$" "$tmp/err" &&
    empty_w
check $? "convert beyond the file size limit leaves no OUT"
printf precious >"$w/out.npy"
limited convert "$c" "$w/out.npy"
[ "$status" -eq 1 ] && [ "$(cat "$w/out.npy")" = precious ] &&
    [ "$(ls -A "$w")" = out.npy ]
check $? "convert beyond the file size limit keeps the old OUT"
rm -f "$w/out.npy"
# pack: a member beyond the limit; then one that fits, with the central
# directory beyond it (a 261,900-byte array: 64 bytes of local header and
# padding, the 262,028-byte file, 73 bytes of directory and end record
# across 262,144): OUT is never made.
limited pack "$w/p.npz" "$c"
# The archive failed, not the input: the message names OUT.
[ "$status" -eq 1 ] && grep -q "^npyio: $w/p.npz: .*File too large$" "$tmp/err" &&
    empty_w
check $? "pack of a member beyond the file size limit"
{ mknpy 64 "{'descr': '|u1', 'fortran_order': False, 'shape': (261900,), }"
  head -c 261900 "$tmp/data.bin"; } >"$tmp/m.npy"
limited pack "$w/q.npz" x="$tmp/m.npy"
[ "$status" -eq 1 ] &&
    one_line "npyio: $w/q.npz: writing the archive at stream offset 262144: write: File too large" &&
    empty_w
check $? "pack whose central directory is beyond the file size limit"
# pack --append: the old archive stays as it was.
npyio pack --no-sync "$w/a.npz" x="$data/arrays/u1.npy"
cp "$w/a.npz" "$tmp/a.npz"
limited pack --append "$w/a.npz" y="$c"
[ "$status" -eq 1 ] && grep -q "File too large$" "$tmp/err" &&
    cmp -s "$w/a.npz" "$tmp/a.npz" && [ "$(ls -A "$w")" = a.npz ]
check $? "pack --append beyond the file size limit keeps the archive"
rm -f "$w/a.npz"
# unpack: the member's temporary file is removed.
limited unpack "$big_npz" "$w/u"
[ "$status" -eq 1 ] &&
    one_line "npyio: $w/u/c.npy: writing the file at stream offset 262144: write: File too large" &&
    [ -d "$w/u" ] && [ -z "$(ls -A "$w/u")" ]
check $? "unpack beyond the file size limit leaves no file"
rm -rf "$w/u"
# unpack killed mid-write (SIGXFSZ at the same limit, not ignored: a kill
# at a known point, in the middle of c.npy's bytes) leaves no temporary of
# its own (Linux: its temporary is unnamed); a portable build
# (NPYIO_TEST_NAMED_TEMPORARIES=1, set by the build) leaves its named one,
# which the next unpack, its process dead, removes. Not under valgrind,
# which takes the signal for itself.
if [ "$valgrind" = 0 ]; then
    (ulimit -c 0; ulimit -f 256; npyio unpack "$big_npz" "$w/u"; exit "$status")
    status=$?
    if [ "${NPYIO_TEST_NAMED_TEMPORARIES:-0}" = 1 ]; then
        left=$(cd "$w/u" 2>/dev/null && ls -A)
        [ "$status" -gt 128 ] && case $left in
            .c.npy.npyio-*.tmp) ! [ -e "$w/u/c.npy" ] ;;
            *) false ;;
            esac
        check $? "unpack killed mid-write leaves its named temporary"
        npyio unpack "$big_npz" "$w/u"
        [ "$status" -eq 0 ] && [ -z "$(cd "$w/u" && ls -A | grep '^\.')" ]
        check $? "the next unpack removes the dead one's temporary"
    else
        [ "$status" -gt 128 ] && [ -d "$w/u" ] && [ -z "$(ls -A "$w/u")" ]
        check $? "unpack killed mid-write leaves no temporary"
    fi
    rm -rf "$w/u"
fi
# The temporary copies of a pipe's archive and Fortran data.
TMPDIR=$w limited info - < <(cat "$big_npz")
[ "$status" -eq 1 ] &&
    one_line "npyio: -: copying the archive to a temporary file: File too large" &&
    empty_w
check $? "an archive from a pipe beyond the file size limit"
TMPDIR=$w limited dump - < <(cat "$f")
[ "$status" -eq 1 ] &&
    one_line "npyio: -: copying the data to a temporary file: File too large" &&
    empty_w
check $? "Fortran data from a pipe beyond the file size limit"
fi  # (wine_skips)

# The listing of keys.npz, which later checks compare with.
npyio info --json - <"$keys"
cp "$tmp/out" "$tmp/keys.json"

# ---- TMPDIR ---------------------------------------------------------------------------
if ! wine_skips "TMPDIR: the tool's temporaries go to Windows' temporary folder (TMP, TEMP), and Wine's server keeps its own in \$TMPDIR"; then
TMPDIR='' npyio info --json - < <(cat "$keys")
[ "$status" -eq 0 ] && cmp -s "$tmp/out" "$tmp/keys.json"
check $? "an archive from a pipe, TMPDIR empty (/tmp)"
# (valgrind makes files of its own in TMPDIR, and says so when it cannot)
if [ "$valgrind" = 0 ]; then
    TMPDIR=$tmp/missing npyio info - < <(cat "$keys")
    [ "$status" -eq 1 ] &&
        one_line "npyio: -: copying the archive to a temporary file: No such file or directory"
    check $? "an archive from a pipe, TMPDIR missing"
    long=$(printf '%05000d' 0)
    TMPDIR=$tmp/$long npyio info - < <(cat "$keys")
    [ "$status" -eq 1 ] &&
        one_line "npyio: -: copying the archive to a temporary file: File name too long"
    check $? "an archive from a pipe, TMPDIR too long"
    TMPDIR=$tmp/missing npyio dump - < <(cat "$small")
    [ "$status" -eq 1 ] &&
        one_line "npyio: -: copying the data to a temporary file: No such file or directory"
    check $? "dump - of Fortran data from a pipe, TMPDIR missing"
    TMPDIR=$tmp/missing npyio convert - "$w/out.npy" < <(cat "$small")
    [ "$status" -eq 1 ] &&
        one_line "npyio: -: copying the data to a temporary file: No such file or directory" &&
        empty_w
    check $? "convert - of Fortran data from a pipe, TMPDIR missing"
fi
fi  # (wine_skips)

# ---- inputs: FIFOs, pipes, offsets ----------------------------------------------------
mkfifo "$tmp/fifo"
# from_fifo FILE ARGS...: the tool reads $tmp/fifo, which FILE is written to.
from_fifo() {
    local file=$1 writer
    shift
    cat "$file" >"$tmp/fifo" &
    writer=$!
    npyio "$@"
    kill "$writer" 2>/dev/null
    wait "$writer" 2>/dev/null
    return $status
}
from_fifo "$keys" info --json "$tmp/fifo"
[ "$status" -eq 0 ] &&
    [ "$(sed 's/^{"path": "[^"]*", //' "$tmp/out")" = \
      "$(sed 's/^{"path": "[^"]*", //' "$tmp/keys.json")" ] &&
    grep -q "^{\"path\": \"$tmp/fifo\", " "$tmp/out"
check $? "info --json of an archive in a FIFO"
from_fifo "$small" dump "$tmp/fifo"
[ "$status" -eq 0 ] && [ "$(cat "$tmp/out")" = acebdf ]
check $? "dump of Fortran data in a FIFO"
npyio validate - < <(cat "$obj")
[ "$status" -eq 0 ] && [ "$(cat "$tmp/out")" = "-: valid" ]
check $? "validate - of an object array from a pipe"
npyio info --json "$obj"
sed 's/^{"path": "[^"]*", //' "$tmp/out" >"$tmp/obj.json"
npyio info --json - < <(cat "$obj")
[ "$status" -eq 0 ] && [ "$(sed 's/^{"path": "-", //' "$tmp/out")" = "$(cat "$tmp/obj.json")" ]
check $? "info --json - of an object array from a pipe"
head -c -1 "$small" >"$tmp/short.npy"
npyio info "$small"
sed 1d "$tmp/out" >"$tmp/facts"
npyio info - < <(cat "$tmp/short.npy")
[ "$status" -eq 1 ] && [ "$(head -n 1 "$tmp/out")" = "-:" ] &&
    [ "$(sed 1d "$tmp/out")" = "$(cat "$tmp/facts")" ] &&
    one_line "npyio: -: the data section ends after 5 bytes, but the header promises 6"
check $? "info - of data cut short, from a pipe: the facts, then the error"
for form in --json --short; do
    npyio info $form - < <(cat "$tmp/short.npy")
    [ "$status" -eq 1 ] && [ ! -s "$tmp/out" ] &&
        one_line "npyio: -: the data section ends after 5 bytes, but the header promises 6"
    check $? "info $form - of data cut short, from a pipe: no line"
done
# Standard input opened 10 bytes into a file, where the .npy starts.
# at_offset FILE ARGS...: the tool with FILE after 10 other bytes as stdin.
at_offset() {
    local file=$1
    shift
    { printf '0123456789'; cat "$file"; } >"$tmp/prefixed"
    { dd bs=10 count=1 of=/dev/null 2>/dev/null; npyio "$@"; } <"$tmp/prefixed"
}
at_offset "$c" dump -
[ "$status" -eq 0 ] && cmp -s "$tmp/out" "$tmp/data.bin"
check $? "dump - of standard input at an offset"
at_offset "$small" dump -
[ "$status" -eq 0 ] && [ "$(cat "$tmp/out")" = acebdf ]
check $? "dump - of Fortran data on standard input at an offset"
at_offset "$obj" validate -
[ "$status" -eq 0 ] && [ "$(cat "$tmp/out")" = "-: valid" ]
check $? "validate - of an object array on standard input at an offset"
at_offset "$keys" info --json -
[ "$status" -eq 0 ] && cmp -s "$tmp/out" "$tmp/keys.json"
check $? "info --json - of an archive on standard input at an offset"
# A compact header (16-byte aligned, NumPy before 1.14: 70 bytes where
# np.save's has 118) with --max-header-size=70: the file is accepted, so
# its copy from a pipe and its Fortran view must be too (both are
# re-emitted as np.save's 118-byte header, once refused by the limit).
npyio dump --max-header-size=70 "$compact"
[ "$status" -eq 0 ] && [ "$(cat "$tmp/out")" = acebdf ]
check $? "dump --max-header-size=70 of a compact header"
npyio dump --max-header-size=70 - < <(cat "$compact")
[ "$status" -eq 0 ] && [ "$(cat "$tmp/out")" = acebdf ]
check $? "dump --max-header-size=70 - of a compact header from a pipe"
npyio convert --order F --max-header-size=70 "$compact_c" "$w/out.npy"
[ "$status" -eq 0 ] && [ "$(tail -c 6 "$w/out.npy")" = adbecf ]
check $? "convert --order F --max-header-size=70 of a compact header"
rm -f "$w/out.npy"

# ---- progress bars on a terminal --------------------------------------------------------
if ! wine_skips "progress bars on a terminal: script(1) gives a Unix pty, no Windows console"; then
# on_tty COMMAND: run the shell words COMMAND with a terminal for stdin,
# stdout and stderr; what the terminal showed goes to $tmp/tty.
on_tty() {
    script -qec "$1" /dev/null </dev/null >"$tmp/tty" 2>&1
    status=$?
    return $status
}
words() { printf '%q ' "${emulator[@]}" "$tool" "$@"; }
bar() { grep -q "$1 \[========================================\] 100%" "$tmp/tty"; }
if command -v script >/dev/null 2>&1 && on_tty true && [ "$status" -eq 0 ]; then
    on_tty "$(words pack --no-sync "$w/t.npz" "$c")"
    [ "$status" -eq 0 ] && bar packing && npyio unpack "$w/t.npz" "$w/tu" &&
        cmp -s "$w/tu/c.npy" "$c"
    check $? "pack on a terminal: a progress bar"
    rm -rf "$w/tu"
    on_tty "$(words unpack --no-sync "$w/t.npz" "$w/tu")"
    [ "$status" -eq 0 ] && bar unpacking && cmp -s "$w/tu/c.npy" "$c"
    check $? "unpack on a terminal: a progress bar"
    on_tty "$(words validate "$data/npz/bad/ratio_64mib_zeros.npz")"
    [ "$status" -eq 0 ] && bar validating
    check $? "validate of a 64 MiB archive on a terminal: a progress bar"
    # 64 MiB of zeros, sparse: dump and validate show bars from 64 MiB on.
    { mknpy 64 "{'descr': '|u1', 'fortran_order': False, 'shape': (67108864,), }"; } \
        >"$tmp/zeros.npy"
    truncate -s $((128 + 67108864)) "$tmp/zeros.npy"
    on_tty "$(words dump "$tmp/zeros.npy") >/dev/null"
    [ "$status" -eq 0 ] && bar dumping
    check $? "dump of 64 MiB on a terminal: a progress bar"
    on_tty "$(words validate "$tmp/zeros.npy")"
    [ "$status" -eq 0 ] && bar validating
    check $? "validate of 64 MiB on a terminal: a progress bar"
    rm -f "$tmp/zeros.npy"
    rm -rf "$w/tu" "$w/t.npz"
else
    echo "no terminal (script(1) missing or without a pty): progress bars not checked"
fi
npyio pack --no-sync "$w/t.npz" "$c"
[ "$status" -eq 0 ] && [ ! -s "$tmp/err" ]
check $? "pack with standard error a file: no progress bar"
rm -f "$w/t.npz"
fi  # (wine_skips)

# ---- the command line ---------------------------------------------------------------------
cp "$data/arrays/u1.npy" "$tmp/-x.npy"
(cd "$tmp" && npyio info --json -- -x.npy; exit $status)
status=$?
[ "$status" -eq 0 ] && grep -q '^{"path": "-x.npy", "version": "1.0", ' "$tmp/out"
check $? "-- ends the options: a file named -x.npy"
(cd "$tmp" && npyio info -x.npy; exit $status)
status=$?
[ "$status" -eq 2 ] && grep -q "^npyio info: unknown option -x.npy$" "$tmp/err"
check $? "without --, -x.npy is an option"
for option in --max-header-size --max; do
    npyio print "$small" "$option"
    [ "$status" -eq 2 ] && [ "$(head -n 1 "$tmp/err")" = "npyio: $option takes a $(
        [ "$option" = --max ] && echo "number of elements" || echo "byte count")" ] &&
        grep -q "^usage: npyio print " "$tmp/err" && [ ! -s "$tmp/out" ]
    check $? "$option without its value: usage (not an unknown option)"
done
npyio ''
[ "$status" -eq 2 ] && grep -q "^npyio: unknown command $" "$tmp/err"
check $? "an empty command name"
for case in "x=|npyio: x=: no FILE after NAME=" \
            "-|npyio: standard input needs a key: NAME=-" \
            "=$small|npyio: =$small: an empty NAME"; do
    npyio pack "$w/p.npz" "${case%%|*}"
    [ "$status" -eq 1 ] && one_line "${case#*|}" && empty_w
    check $? "pack $w/p.npz ${case%%|*}"
done
npyio pack "$w/p.npz" a=- b=- </dev/null
[ "$status" -eq 1 ] && one_line "npyio: standard input can be packed once" && empty_w
check $? "pack a=- b=-"
npyio pack "$w/p.npz" x="$tmp"
[ "$status" -eq 1 ] && grep -q "^npyio: $tmp: .*Is a directory$" "$tmp/err" &&
    empty_w
check $? "pack of a folder: EISDIR, not a failed callback"
npyio pack "$w/missing/p.npz" "$small"
[ "$status" -eq 1 ] && grep -q "^npyio: $w/missing/p.npz: .*No such file or directory$" "$tmp/err" &&
    empty_w
check $? "pack into a missing folder"
npyio unpack "$small" "$w/u"
[ "$status" -eq 1 ] &&
    one_line "npyio: $small: an .npy file, not an .npz archive: nothing to unpack" &&
    empty_w
check $? "unpack of an .npy file"
touch "$w/plain"
npyio unpack "$keys" "$w/plain"
[ "$status" -eq 1 ] && one_line "npyio: $w/plain: Not a directory" &&
    [ "$(ls -A "$w")" = plain ] && [ ! -s "$w/plain" ]
check $? "unpack into a file"
npyio unpack "$keys" "$w/plain/sub"
[ "$status" -eq 1 ] &&
    one_line "npyio: $w/plain/sub: making the folder: Not a directory" &&
    [ "$(ls -A "$w")" = plain ]
check $? "unpack under a file"
rm -f "$w/plain"
mkdir -p "$w/u/plain.npy"
npyio unpack "$keys" "$w/u"
[ "$status" -eq 1 ] && one_line "npyio: $w/u: 'plain.npy' is a folder" &&
    [ "$(ls -A "$w/u")" = plain.npy ] && [ -z "$(ls -A "$w/u/plain.npy")" ]
check $? "unpack onto a folder of a member's name: nothing written"
rm -rf "$w/u"

# (valgrind keeps descriptors of its own: not under valgrind)
if [ "$valgrind" = 0 ] &&
    ! wine_skips "ever more descriptors: ulimit -n is POSIX's; a Windows program has no such limit"; then
    # Out of descriptors (ulimit -n): from 4 open files on, one more each time
    # until unpack succeeds. Each step needs one more (the DIR, a copy of it
    # per folder on the way, the library's own descriptors of DIR and the
    # folder, the temporary file): on the way the folder of a/b.npy fails
    # to open (keys.npz) and so does the temporary file of x.npy (an archive
    # of that one member); a failed run writes nothing.
    npyio pack --no-sync "$tmp/flat.npz" x="$data/arrays/u1.npy"
    # sweep ARCHIVE: runs unpack with ever more descriptors; the messages of the
    # failed runs to $tmp/sweep; 0 if it ended in success, every failure
    # having left DIR without files.
    sweep() {
        local n clean=0
        : >"$tmp/sweep"
        for n in $(seq 4 64); do
            rm -rf "$w/u"
            : >"$tmp/err"
            # (the shell's own complaints, when it cannot open $tmp/out: away)
            (ulimit -n "$n"; npyio unpack --no-sync "$1" "$w/u"; exit "$status") \
                2>/dev/null
            status=$?
            [ "$status" -eq 0 ] && return $clean
            cat "$tmp/err" >>"$tmp/sweep"
            [ -z "$(find "$w/u" -type f 2>/dev/null)" ] || clean=1
        done
        return 1
    }
    sweep "$keys" && cmp -s "$w/u/a/b.npy" "$data/arrays/i1.npy" &&
        grep -qx "npyio: $w/u: folder 'a' of 'a/b.npy': Too many open files" "$tmp/sweep"
    check $? "unpack with ever more descriptors: a folder that cannot be opened"
    sweep "$tmp/flat.npz" && cmp -s "$w/u/x.npy" "$data/arrays/u1.npy" &&
        grep -qx "npyio: $w/u/x.npy: cannot create a file in its directory: open: Too many open files" "$tmp/sweep" &&
        grep -qx "npyio: $w/u: Too many open files" "$tmp/sweep"
    check $? "unpack with ever more descriptors: no temporary file"
    rm -rf "$w/u"
fi

# Invalid UTF-8 in names: each bad byte shown as \udcXX (os.fsdecode's
# surrogateescape, as Python's repr shows it): cut short at the end, a
# surrogate, an overlong form, beyond U+10FFFF.
if ! wine_skips "names that are not UTF-8: a Windows program's arguments are UTF-16"; then
for case in $'\xe2\x82|\\udce2\\udc82' $'\xed\xa0\x80|\\udced\\udca0\\udc80' \
            $'\xe0\x80\x80|\\udce0\\udc80\\udc80' \
            $'\xf4\x90\x80\x80|\\udcf4\\udc90\\udc80\\udc80'; do
    npyio info "$tmp/gone${case%%|*}"
    [ "$status" -eq 1 ] &&
        one_line "npyio: $tmp/gone${case#*|}: No such file or directory"
    check $? "a missing file named with ${case#*|}"
done
fi

# A record whose subarray field holds 100,000,001 elements (a sparse file).
{ mknpy 64 "{'descr': [('a', '|u1', (100000001,))], 'fortran_order': False, 'shape': (1,), }"; } \
    >"$tmp/huge.npy"
truncate -s $((128 + 100000001)) "$tmp/huge.npy"
npyio print "$tmp/huge.npy"
[ "$status" -eq 1 ] && [ ! -s "$tmp/out" ] &&
    one_line "npyio: $tmp/huge.npy: a subarray field is too large to print"
check $? "print of a subarray field too large to print"
rm -f "$tmp/huge.npy"

[ -z "$(ls -A "$w")" ]
check $? "nothing left in the output folder"
finish
