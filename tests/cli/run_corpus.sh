#!/bin/bash
# The npyio tool over the library's corpora, without Python, so that it also
# runs under the sanitizers and on the cross (qemu) hosts:
#
#   run_corpus.sh BYTE_ORDER TOOL DATA_DIR [EMULATOR [ARGS...]]
#
# BYTE_ORDER is CMake's CMAKE_C_BYTE_ORDER of the target (LITTLE_ENDIAN or
# BIG_ENDIAN); EMULATOR, if given, runs the tool (qemu for cross builds).
#
# - every NumPy-made array in DATA_DIR/arrays through info, validate, print,
#   dump and convert: exit 0 (object arrays: exit 1 for print, dump and
#   convert); dump (also --threads 3) gives the C-order native bytes of
#   the corpus, and
#   convert --byteorder little|big writes the data of the C-order
#   little/big-endian .bin files (--threads 3: the same file); wrap of its data section (descr, shape
#   and order from info --json) gives the file back byte for byte;
# - every valid header of DATA_DIR/headers/valid (legacy forms included)
#   followed by its data: validate, info and dump accept it (object arrays:
#   with a pickle for data; zeros instead are refused by validate);
# - every malformed header (DATA_DIR/headers/invalid) and each array cut
#   short (in its header, in its data) through every command: exit 1 with a
#   message starting "npyio: ", never a signal or another status; info's
#   text of data cut short shows the header's facts first, --json and
#   --short no line;
# - -h gives the same help as --help, for the tool and each command.
. "$(dirname "$0")/common.sh"

# The data section of a .npy file of nbytes bytes: its last nbytes bytes.
data_of() { tail -c "$2" "$1"; }

# Tabs are whitespace to read, which would merge the empty shape of 0-d
# arrays with its neighbours: split on the ASCII unit separator instead.
us=$'\037'
while IFS=$us read -r name file fortran ndim shape itemsize nbytes offset object; do
    case $name in '#'*) continue ;; esac
    path=$data/arrays/$file
    for command in info validate; do
        npyio "$command" "$path"
        check $? "$command $name"
    done
    if [ "$object" = 1 ]; then
        for command in print dump; do
            expect_error "$command refuses $name" "$command" "$path"
        done
        expect_error "convert refuses $name" convert "$path" "$tmp/c.npy"
        continue
    fi
    npyio print "$path"
    check $? "print $name"
    npyio dump "$path"
    [ "$status" -eq 0 ] && cmp -s "$tmp/out" "$data/arrays/$name.$native.bin"
    check $? "dump $name"
    # On 3 threads (in parts, or read whole): the same bytes.
    npyio dump --threads 3 "$path"
    [ "$status" -eq 0 ] && cmp -s "$tmp/out" "$data/arrays/$name.$native.bin"
    check $? "dump --threads 3 $name"
    for byteorder in little big; do
        want=$data/arrays/$name.c_${byteorder:0:1}e.bin
        npyio convert --byteorder "$byteorder" "$path" "$tmp/c.npy"
        [ "$status" -eq 0 ] && cmp -s <(data_of "$tmp/c.npy" "$nbytes") "$want"
        check $? "convert --byteorder $byteorder $name"
        cp "$tmp/c.npy" "$tmp/c1.npy"
        # In parts on threads (src/cli/pipeline.c): the same file.
        npyio convert --threads 3 --byteorder "$byteorder" "$path" "$tmp/c.npy"
        [ "$status" -eq 0 ] && cmp -s "$tmp/c.npy" "$tmp/c1.npy"
        check $? "convert --threads 3 --byteorder $byteorder $name"
    done
    # Fortran data from a pipe, in C order: through a temporary copy.
    if [ "$fortran" = 1 ]; then
        cat "$path" | npyio dump -
        [ "$status" -eq 0 ] && cmp -s "$tmp/out" "$data/arrays/$name.$native.bin"
        check $? "dump - (pipe) $name"
        cat "$path" | npyio convert --byteorder little - "$tmp/c.npy"
        [ "$status" -eq 0 ] &&
            cmp -s <(data_of "$tmp/c.npy" "$nbytes") "$data/arrays/$name.c_le.bin"
        check $? "convert - (pipe) $name"
    fi
    # Fortran order back from Fortran files: the file's own layout.
    if [ "$fortran" = 1 ]; then
        npyio convert --order F --byteorder big "$path" "$tmp/c.npy"
        [ "$status" -eq 0 ] &&
            cmp -s <(data_of "$tmp/c.npy" "$nbytes") "$data/arrays/$name.be.bin"
        check $? "convert --order F $name"
    fi
    # wrap makes the file again from its data section as stored, given
    # the header's descr, shape and order (names JSON escapes: skipped).
    npyio info --json "$path"
    facts='.*"descr": "\(.*\)", "shape": \[\(.*\)\], "fortran_order": \([a-z]*\),.*'
    descr=$(sed "s/$facts/\1/" "$tmp/out")
    dims=$(sed "s/$facts/\2/" "$tmp/out" | tr -d ' ')
    [ "$(sed "s/$facts/\3/" "$tmp/out")" = true ] && layout=F || layout=C
    if [ "${descr#*\\}" = "$descr" ]; then
        data_of "$path" "$nbytes" >"$tmp/raw"
        npyio wrap --dtype "$descr" --shape "$dims" --order $layout "$tmp/raw" "$tmp/w.npy"
        [ "$status" -eq 0 ] && cmp -s "$tmp/w.npy" "$path"
        check $? "wrap $name again from its data"
    fi
    # Cut short: in the header, and one byte before the end of the data.
    head -c $((offset / 2)) "$path" >"$tmp/short.npy"
    if [ "$nbytes" -gt 0 ]; then
        head -c $((offset + nbytes - 1)) "$path" >"$tmp/short_data.npy"
    else
        cp "$tmp/short.npy" "$tmp/short_data.npy"
    fi
    for short in short short_data; do
        for command in info validate print dump; do
            expect_error "$command $name ($short)" "$command" "$tmp/$short.npy"
        done
        expect_error "convert $name ($short)" convert "$tmp/$short.npy" "$tmp/c.npy"
    done
    # Data cut short: info's text shows the header's facts (the whole
    # file's), then the error; --json and --short print no line for it.
    if [ "$nbytes" -gt 0 ] && [ "$object" != 1 ]; then
        npyio info "$path"
        sed 1d "$tmp/out" >"$tmp/facts"
        npyio info "$tmp/short_data.npy"
        [ "$status" -eq 1 ] && [ "$(head -n 1 "$tmp/out")" = "$tmp/short_data.npy:" ] &&
            [ "$(sed 1d "$tmp/out")" = "$(cat "$tmp/facts")" ] &&
            grep -q "but the header promises $nbytes\$" "$tmp/err"
        check $? "info $name (data cut short): the facts, then the error"
        for form in --json --short; do
            npyio info $form "$tmp/short_data.npy"
            [ "$status" -eq 1 ] && [ ! -s "$tmp/out" ]
            check $? "info $form $name (data cut short): no line"
        done
    fi
done < <(tr '\t' '\037' <"$data/arrays/manifest.tsv")

# dump copies a native file's data inside the kernel when both ends are
# regular files; into a pipe, or appended to a file (O_APPEND), through a
# buffer: the same bytes each way, for every array whose bytes dump writes.
while IFS=$us read -r name file fortran ndim shape itemsize nbytes offset object; do
    case $name in '#'*) continue ;; esac
    [ "$object" = 1 ] && continue
    path=$data/arrays/$file
    want=$data/arrays/$name.$native.bin
    "${emulator[@]}" "$tool" dump "$path" 2>"$tmp/err" | cat >"$tmp/piped"
    status=${PIPESTATUS[0]}
    [ "$status" -eq 0 ] && cmp -s "$tmp/piped" "$want"
    check $? "dump $name into a pipe"
    printf 'kept' >"$tmp/appended"
    "${emulator[@]}" "$tool" dump "$path" >>"$tmp/appended" 2>"$tmp/err"
    status=$?
    [ "$status" -eq 0 ] && cmp -s <(printf 'kept'; cat "$want") "$tmp/appended"
    check $? "dump $name appended to a file"
done < <(tr '\t' '\037' <"$data/arrays/manifest.tsv" | head -12)

# Every valid header of the header corpus (np.save's, forced versions, and
# the legacy forms NumPy still loads: 16-byte alignment, no final newline,
# Python 2 L suffixes, ...) with its data: valid for validate, info, dump.
while IFS=$us read -r name file version hlen offset descr kind itemsize rest; do
    case $name in '#'*) continue ;; esac
    nbytes=$(echo "$rest" | cut -d"$us" -f7)
    [ "$nbytes" -le 65536 ] || continue
    if [ "$kind" = O ]; then
        # Object arrays hold a pickle, which validate walks: zeros are
        # none (0x00 is no opcode); PROTO 3, NONE, STOP is one.
        { cat "$data/headers/valid/$file"; head -c "$nbytes" /dev/zero; } >"$tmp/v.npy"
        npyio validate "$tmp/v.npy"
        [ "$status" -eq 1 ] && grep -q "pickle byte 0 (file byte [0-9]*): unknown opcode 0x00" "$tmp/err"
        check $? "validate header $name with zeros for a pickle"
        { cat "$data/headers/valid/$file"; printf '\200\003N.'; } >"$tmp/v.npy"
    else
        { cat "$data/headers/valid/$file"; head -c "$nbytes" /dev/zero; } >"$tmp/v.npy"
    fi
    npyio validate "$tmp/v.npy"
    check $? "validate header $name"
    npyio info --json "$tmp/v.npy"
    check $? "info header $name"
    [ "$kind" = O ] && continue
    npyio dump "$tmp/v.npy"
    [ "$status" -eq 0 ] && [ "$(wc -c <"$tmp/out")" -eq "$nbytes" ]
    check $? "dump header $name"
done < <(tr '\t' '\037' <"$data/headers/valid/manifest.tsv")

for path in "$data"/headers/invalid/*.bin; do
    name=${path##*/}
    for command in info validate print dump; do
        expect_error "$command $name" "$command" "$path"
    done
    expect_error "convert $name" convert "$path" "$tmp/c.npy"
done

# -h is --help, before a command and after one: the same text, exit 0.
for command in "" info print dump validate convert wrap; do
    npyio $command --help
    cp "$tmp/out" "$tmp/long"
    [ "$status" -eq 0 ] && [ -s "$tmp/long" ]
    check $? "${command:-npyio} --help"
    npyio $command -h
    [ "$status" -eq 0 ] && cmp -s "$tmp/out" "$tmp/long"
    check $? "${command:-npyio} -h is --help"
done

# convert --no-sync: the same file, without the fsyncs (counted with
# strace where it is installed and the tool runs natively); other commands
# refuse the switch (usage, exit 2).
sample=$data/sample.npy
npyio convert "$sample" "$tmp/synced.npy"
npyio convert --no-sync "$sample" "$tmp/unsynced.npy"
[ "$status" -eq 0 ] && cmp -s "$tmp/synced.npy" "$tmp/unsynced.npy"
check $? "convert --no-sync writes the same file"
npyio info --no-sync "$sample"
[ "$status" -eq 2 ]
check $? "info refuses --no-sync"
if [ ${#emulator[@]} -eq 0 ] && command -v strace >/dev/null 2>&1; then
    syncs_of() {
        strace -f -e trace=fsync,fdatasync -o "$tmp/trace" "$tool" "$@" \
            >/dev/null 2>&1
        grep -c 'sync(' "$tmp/trace"
    }
    with=$(syncs_of convert "$sample" "$tmp/s.npy")
    without=$(syncs_of convert --no-sync "$sample" "$tmp/s.npy")
    [ "$with" -ge 2 ] && [ "$without" -eq 0 ]
    status=$?
    check $status "convert syncs ($with calls), --no-sync does not ($without)"
fi

finish
