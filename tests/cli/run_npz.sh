#!/bin/bash
# The npyio tool over the NPZ corpus, without Python, so that it also runs
# under the sanitizers and on the cross (qemu) hosts:
#
#   run_npz.sh BYTE_ORDER TOOL DATA_DIR [EMULATOR [ARGS...]]
#
# - every valid archive of DATA_DIR/npz (its manifest): info and info
#   --json list every member in order; validate exits 0 (odd.npz, with
#   bzip2 and lzma members, 1 naming them); dump ARCHIVE KEY of every
#   array member gives the C-order native bytes of the arrays corpus case
#   it was made from (object arrays: exit 1), print exits 0, and without a
#   MEMBER both exit 1 naming the members; a key several members share
#   reads np.load's choice with a note naming it by index and saying why;
#   a message naming members names 10 keys at most, each cut to 60
#   characters, then how many more;
# - unpack of every valid archive gives each array member as the corpus
#   .npy file it was made from, byte for byte (dups.npz is refused: two
#   members collide); a second unpack needs --force;
# - every malformed archive (npz/bad) fails validate (but the ratio case,
#   valid without a ratio limit), and no command dies of a signal on it;
# - members npyio cannot read are listed by info all the same: declined
#   (sizes that differ: array null and the reason, exit 0), a bad header
#   or damage (the error in the entry, exit 1); damaged members (npz/
#   damage) are reported as damaged by dump and validate, never by their
#   symptom;
# - every hostile archive (npz/hostile) makes unpack exit 1 having written
#   nothing, and so does a symbolic link planted in DIR;
# - pack of corpus arrays (stored, deflated, with threads, appended, from
#   standard input) then unpack and dump give the inputs back; a failed
#   pack leaves the old archive; archives on standard input work.
. "$(dirname "$0")/common.sh"
npz=$data/npz

# no_signal WHAT ARGS...: exit 0 or 1, never a signal (status > 128).
no_signal() {
    local what=$1
    shift
    npyio "$@"
    [ "$status" -le 1 ]
    check $? "$what"
}

us=$'\037'
# ---- every valid archive, member by member ----------------------------------
prev=""
while IFS=$us read -r archive index file key method flags csize usize crc \
        header_at data_at is_array source choice; do
    case $archive in '#'*) continue ;; esac
    path=$npz/$archive
    if [ "$archive" != "$prev" ]; then
        prev=$archive
        want=0
        [ "$archive" = odd.npz ] && want=1
        npyio validate "$path"
        [ "$status" -eq "$want" ]
        check $? "validate $archive"
        npyio info "$path"
        check $? "info $archive"
        npyio info --json "$path"
        [ "$status" -eq 0 ] && [ "$(wc -l <"$tmp/out")" -eq 1 ] &&
            grep -q '^{"path": ' "$tmp/out"
        check $? "info --json $archive"
        cp "$tmp/out" "$tmp/json"
        for command in print dump; do
            npyio "$command" "$path"
            [ "$status" -eq 1 ] && grep -q "MEMBER" "$tmp/err"
            check $? "$command $archive without MEMBER"
        done
    fi
    [ "$index" = -1 ] && continue
    grep -qF "\"file\": \"$file\"" "$tmp/json"
    check $? "info --json $archive lists $file"
    [ "$is_array" = 1 ] && [ "$choice" = 1 ] || continue
    case $method in 0 | 8) ;; *) continue ;; esac
    if [ "$source" = object_mixed ]; then
        npyio dump "$path" "$key"
        [ "$status" -eq 1 ]
        check $? "dump refuses $archive $key (objects)"
        continue
    fi
    npyio dump "$path" "$key"
    [ "$status" -eq 0 ] && cmp -s "$tmp/out" "$data/arrays/$source.$native.bin"
    check $? "dump $archive $key"
    npyio print "$path" "$key"
    check $? "print $archive $key"
done < <(tr '\t' '\037' <"$npz/manifest.tsv")

# ---- which member a repeated key reads, and the note saying so ---------------
# dups.npz holds members named a, a.npy, a.npy: np.load reads member 0 for
# "a" (the manifest's np_key_choice; the exact name wins over a.npy) and
# the last a.npy, member 2, for "a.npy" (tests/data/gen_npz.py checks both
# with NumPy). The note names the member read, by index, and why.
for pick in "a 0 i1 named exactly as asked" "a.npy 2 bool the last of them"; do
    read -r key index source why <<<"$pick"
    npyio dump "$npz/dups.npz" "$key"
    [ "$status" -eq 0 ] && cmp -s "$tmp/out" "$data/arrays/$source.$native.bin" &&
        grep -q "reading .*member $index\b" "$tmp/err" && grep -q "$why" "$tmp/err" &&
        [ "$(wc -l <"$tmp/err")" -eq 1 ]
    check $? "dump dups.npz $key: member $index and why"
done

# ---- a long list of members is cut --------------------------------------------
# Messages name the first 10 keys, each cut to 60 characters, then how many
# more and the command that lists them all.
long=$(printf 'k%.0s' $(seq 70))
members=()
for i in $(seq 10 21); do members+=("$i$long=$data/arrays/i1.npy"); done
npyio pack --no-sync "$tmp/many.npz" "${members[@]}"
check $? "pack 12 members of 72-character keys"
for member in "" no-such-member; do
    npyio dump "$tmp/many.npz" $member
    cut=19${long:0:55}...
    [ "$status" -eq 1 ] && grep -qF "10${long:0:55}..., 11" "$tmp/err" &&
        grep -qF ", $cut and 2 more; \`npyio info --short $tmp/many.npz\` lists them" "$tmp/err" &&
        ! grep -q "20$long\|21$long\|${long:0:56}" "$tmp/err" &&
        [ "$(wc -c <"$tmp/err")" -lt 1000 ]
    check $? "dump many.npz $member: 10 keys, cut, and 2 more"
done
# The hint's file name is one shell word: quoted where the shell would
# split or expand it, UTF-8 kept.
cp "$tmp/many.npz" "$tmp/it's é.npz"
npyio print "$tmp/it's é.npz"
[ "$status" -eq 1 ] &&
    grep -qF "and 2 more; \`npyio info --short '$tmp/it'\\''s é.npz'\` lists them" "$tmp/err"
check $? "the hint quotes a name with a quote and a space"
rm -f "$tmp/it's é.npz"
npyio info --short "$tmp/many.npz"
[ "$status" -eq 0 ] && [ "$(grep -c "^[12][0-9]$long	" "$tmp/out")" -eq 12 ]
check $? "info --short many.npz lists all 12"
rm -f "$tmp/many.npz"

# ---- unpack: the corpus .npy files back ---------------------------------------
for path in "$npz"/*.npz; do
    archive=${path##*/}
    out=$tmp/unpacked/$archive
    npyio unpack "$path" "$out"
    case $archive in
    dups.npz)
        [ "$status" -eq 1 ] && [ ! -e "$out" ]
        check $? "unpack refuses $archive (members collide)"
        continue ;;
    odd.npz)
        [ "$status" -eq 1 ] && grep -q "bzip2.npy' skipped" "$tmp/err" &&
            grep -q "notes.txt' skipped: not an .npy" "$tmp/err" ;;
    *) [ "$status" -eq 0 ] ;;
    esac
    check $? "unpack $archive"
    while IFS=$us read -r a index file key method flags csize usize crc \
            header_at data_at is_array source choice; do
        [ "$a" = "$archive" ] && [ "$is_array" = 1 ] || continue
        case $method in 0 | 8) ;; *) continue ;; esac
        cmp -s "$out/$file" "$data/arrays/$source.npy"
        check $? "unpack $archive: $file"
    done < <(tr '\t' '\037' <"$npz/manifest.tsv")
done
npyio unpack "$npz/keys.npz" "$tmp/unpacked/keys.npz"
[ "$status" -eq 1 ] && grep -q "exists" "$tmp/err"
check $? "unpack again without --force"
npyio unpack --force --no-sync "$npz/keys.npz" "$tmp/unpacked/keys.npz"
check $? "unpack again with --force"
# From standard input, as a pipe (through a temporary copy) and a file.
npyio unpack - "$tmp/piped" <"$npz/keys.npz"
[ "$status" -eq 0 ] && cmp -s "$tmp/piped/a/b.npy" "$data/arrays/i1.npy"
check $? "unpack - < file"
cat "$npz/savez_compressed.npz" | npyio info --json -
[ "$status" -eq 0 ] && grep -q '^{"path": "-", "members": \[{"name": "bool"' "$tmp/out"
check $? "info --json - from a pipe"

# ---- malformed and hostile archives ----------------------------------------------
for path in "$npz"/bad/*.npz; do
    archive=${path##*/}
    want=1
    [ "$archive" = ratio_64mib_zeros.npz ] && want=0
    npyio validate "$path"
    [ "$status" -eq "$want" ] && { [ "$want" = 0 ] || grep -q '^npyio: ' "$tmp/err"; }
    check $? "validate $archive"
    no_signal "info $archive" info --json "$path"
    no_signal "dump $archive" dump "$path" b
    no_signal "unpack $archive" unpack "$path" "$tmp/bad/$archive"
done
mkdir -p "$tmp/hostile"
for path in "$npz"/hostile/*.npz; do
    archive=${path##*/}
    [ "$archive" = nul.npz ] && wine_skips "$archive: NUL names a device on Windows" &&
        continue
    npyio unpack "$path" "$tmp/hostile/$archive/dir"
    [ "$status" -eq 1 ] && grep -q "refusing the archive" "$tmp/err" &&
        [ -z "$(ls -A "$tmp/hostile")" ] &&
        [ ! -e /tmp/npyio-hostile-absolute.npy ]
    check $? "unpack refuses $archive"
    npyio validate "$path"
    check $? "validate $archive (its members are fine)"
done
# A symbolic link planted where a folder will be: never followed.
mkdir -p "$tmp/planted" "$tmp/elsewhere"
ln -s "$tmp/elsewhere" "$tmp/planted/a"
if ! wine_skips "a symbolic link in DIR: Wine shows a Unix link as what it points to"; then
    npyio unpack "$npz/keys.npz" "$tmp/planted"
    [ "$status" -eq 1 ] && [ -z "$(ls -A "$tmp/elsewhere")" ] &&
        [ ! -e "$tmp/planted/plain.npy" ]
    check $? "unpack refuses a symbolic link in DIR"
fi
npyio convert "$npz/savez.npz" "$tmp/c.npy"
[ "$status" -eq 1 ] && grep -q unpack "$tmp/err" && [ ! -e "$tmp/c.npy" ]
check $? "convert refuses an archive"

# ---- members that cannot be read: listed all the same (issue 27) ---------------------
# A stored member whose sizes differ is an .npy file npyio declines to
# read: array null with the reason, exit 0 (as for encrypted members).
sizes=$data/zip64/stored_sizes_differ.npz
npyio info --json "$sizes"
[ "$status" -eq 0 ] &&
    grep -qF '{"name": "a", "file": "a.npy", "compression": "stored", "array": null, "reason": "member 0 (' "$tmp/out" &&
    grep -q 'is stored, yet its sizes differ' "$tmp/out" &&
    grep -qF '"file": "b.npy", "compression": "deflate", "version": "1.0"' "$tmp/out"
check $? "info --json: a stored member whose sizes differ is array null, with the reason"
npyio info "$sizes"
[ "$status" -eq 0 ] && grep -q "^    unknown content: member 0 ('a.npy') is stored, yet its sizes differ" "$tmp/out" &&
    ! grep -q "not an .npy file" "$tmp/out"
check $? "info: a stored member whose sizes differ is of unknown content, with the reason"
# An .npy member with a bad header: every member listed, its error in its
# entry and on standard error, exit 1.
noshape=$npz/bad/npy_header_no_shape.npz
npyio info --json "$noshape"
[ "$status" -eq 1 ] && [ "$(wc -l <"$tmp/out")" -eq 1 ] &&
    grep -qF '{"name": "a", "file": "a.npy", "compression": "deflate", "version": ' "$tmp/out" &&
    grep -qF '{"name": "b", "file": "b.npy", "compression": "stored", "array": true, "error": "member 1 ('"'"'b.npy'"'"'): header: key '"'"'shape'"'"' is missing' "$tmp/out" &&
    grep -q "^npyio: $noshape: member 1 ('b.npy'): header: key 'shape' is missing" "$tmp/err"
check $? "info --json lists every member, a bad one with its error"
npyio info "$noshape"
[ "$status" -eq 1 ] && grep -q "^  member 0: a.npy$" "$tmp/out" &&
    grep -q "^  member 1: b.npy$" "$tmp/out" &&
    grep -q "^    error           member 1 ('b.npy'): header: key 'shape' is missing" "$tmp/out"
check $? "info lists every member, a bad one with its error"
# Damaged members (np.savez_compressed, one bit flipped: tests/data/npz/
# damage, zipfile's verdict in its manifest): the damage, said once,
# never its symptom.
while IFS=$'\t' read -r archive member want symptom rest; do
    case $archive in '#'*) continue ;; esac
    path=$npz/damage/$archive
    case $want in E_CHECKSUM) says='its CRC-32 is\|its deflate stream ends after' ;;
                  *) says='its deflate data is corrupt' ;; esac
    for command in dump validate; do
        if [ "$command" = dump ]; then npyio dump "$path" b; else npyio validate "$path"; fi
        [ "$status" -eq 1 ] &&
            grep -q "^npyio: $path: member 'b.npy' is damaged (\($says\)" "$tmp/err" &&
            [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
            ! grep -q "not an .npy file\|inflates to only\|header byte\|member 1 (" "$tmp/err"
        check $? "$command $archive: damaged ($symptom)"
    done
    npyio dump "$path" c
    [ "$status" -eq 0 ]
    check $? "dump $archive c: the other members read"
    [ "$archive" = data_changed.npz ] && continue # info reads no data
    npyio info --json "$path"
    [ "$status" -eq 1 ] && grep -q '"name": "a", .*"name": "b", .*"error": "member '"'"'b.npy'"'"' is damaged (.*"name": "c", ' "$tmp/out"
    check $? "info --json $archive lists every member, b damaged"
done <"$npz/damage/manifest.tsv"
# Dumped as stored, a deflated member up to 257 MiB is inflated whole (one
# libdeflate call), not in chunks: a wrong CRC-32 fails before any byte
# goes out (8 MiB of zeros, its CRC-32 set to 0 in both headers).
head -c 8388608 /dev/zero >"$tmp/zeros.raw"
npyio wrap --dtype f8 --shape 1048576 "$tmp/zeros.raw" "$tmp/zeros.npy" &&
    npyio pack --compress "$tmp/crc.npz" "a=$tmp/zeros.npy"
check $? "pack 8 MiB of zeros"
central=$(grep -obUaP 'PK\x01\x02' "$tmp/crc.npz" | tail -1 | cut -d: -f1)
for at in 14 $((central + 16)); do
    printf '\0\0\0\0' | dd of="$tmp/crc.npz" bs=1 seek="$at" conv=notrunc 2>/dev/null
done
npyio dump "$tmp/crc.npz" a
[ "$status" -eq 1 ] && [ ! -s "$tmp/out" ] && grep -q "its CRC-32 is" "$tmp/err"
check $? "dump of a deflated member: inflated whole, nothing written on a bad CRC-32"

# ---- pack -------------------------------------------------------------------------
names=(bool i2_be f8_be c32_be u3_str_be datetime_ns_le i2be_3x5_f
       rec_nested_padded_3x4_f rec_subarrays i4le_0d i4be_empty f8le_3x0_f
       object_mixed)
members=()
for name in "${names[@]}"; do members+=("$name=$data/arrays/$name.npy"); done
# unpacked_equal DIR: every member of the last pack back, byte for byte.
unpacked_equal() {
    local name
    for name in "${names[@]}"; do
        cmp -s "$1/$name.npy" "$data/arrays/$name.npy" || return 1
    done
}
for options in "" "--compress" "--compress=1 --threads 2" "--no-align" \
               "--compress=9 --no-sync"; do
    rm -rf "$tmp/p.npz" "$tmp/pu"
    # shellcheck disable=SC2086
    npyio pack $options "$tmp/p.npz" "${members[@]}"
    check $? "pack $options"
    npyio validate "$tmp/p.npz"
    check $? "validate the pack $options"
    npyio unpack "$tmp/p.npz" "$tmp/pu"
    [ "$status" -eq 0 ] && unpacked_equal "$tmp/pu"
    check $? "unpack the pack $options"
    npyio dump "$tmp/p.npz" f8_be
    [ "$status" -eq 0 ] && cmp -s "$tmp/out" "$data/arrays/f8_be.$native.bin"
    check $? "dump the pack $options"
    npyio info --json "$tmp/p.npz"
    case $options in
    *compress*) grep -q '"compression": "deflate"' "$tmp/out" &&
                ! grep -q '"compression": "stored"' "$tmp/out" ;;
    *no-align*) ! grep -q '"aligned": true' "$tmp/out" ;;
    *) ! grep -q '"aligned": false' "$tmp/out" ;;
    esac
    check $? "info --json of the pack $options"
done
npyio pack --append "$tmp/p.npz" extra=- <"$data/arrays/u1.npy"
[ "$status" -eq 0 ] && npyio unpack "$tmp/p.npz" "$tmp/pa" &&
    unpacked_equal "$tmp/pa" && cmp -s "$tmp/pa/extra.npy" "$data/arrays/u1.npy"
check $? "pack --append from standard input"
cp "$tmp/p.npz" "$tmp/old.npz"
npyio pack --append "$tmp/p.npz" more="$data/arrays/i1.npy" bad="$npz/manifest.tsv"
[ "$status" -eq 1 ] && cmp -s "$tmp/p.npz" "$tmp/old.npz"
check $? "a failed pack --append leaves the archive"
npyio pack "$tmp/p.npz" extra="$data/arrays/i1.npy" extra="$data/arrays/u1.npy"
[ "$status" -eq 1 ] && cmp -s "$tmp/p.npz" "$tmp/old.npz"
check $? "a failed pack (a key twice) leaves the old archive"
npyio pack "$tmp/none.npz" x="$tmp/missing.npy"
[ "$status" -eq 1 ] && [ ! -e "$tmp/none.npz" ]
check $? "a failed pack leaves no archive"
[ -z "$(find "$tmp" -name '*.tmp*' -o -name '.npyio*')" ]
check $? "no temporary files left"

finish
