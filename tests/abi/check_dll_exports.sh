#!/bin/sh
# check_dll_exports.sh MAP DLL
#
# The Windows DLL exports exactly the functions the version script MAP
# (cmake/npyio.map) lists, no more and no fewer: NPYIO_API's dllexport
# is the only way out of the DLL (no --export-all-symbols). Reads DLL's
# export table with $OBJDUMP -p (x86_64-w64-mingw32-objdump). Fails
# (exit 1, one "DLL EXPORT CHECK FAILED: ..." line per name) on a
# difference; prints "dll exports OK: N functions" otherwise.
set -eu

if [ $# -ne 2 ] || [ ! -f "$1" ] || [ ! -f "$2" ]; then
    echo "usage: check_dll_exports.sh MAP DLL" >&2
    exit 2
fi
objdump=${OBJDUMP:-x86_64-w64-mingw32-objdump}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The map's names: the lines "name;" inside its nodes.
sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\);[[:space:]]*$/\1/p' "$1" |
    grep -v '^local$' | sort -u >"$tmp/map"
"$objdump" -p "$2" |
    sed -n '/\[Ordinal\/Name Pointer\] Table/,/^$/s/^[[:space:]]*\[ *[0-9]*\] //p' |
    sort -u >"$tmp/dll"
[ -s "$tmp/dll" ] || { echo "DLL EXPORT CHECK FAILED: $2 exports nothing"; exit 1; }
failed=0
for name in $(comm -23 "$tmp/map" "$tmp/dll"); do
    echo "DLL EXPORT CHECK FAILED: $name is in $1 but not exported by $2"
    failed=1
done
for name in $(comm -13 "$tmp/map" "$tmp/dll"); do
    echo "DLL EXPORT CHECK FAILED: $name is exported by $2 but not in $1"
    failed=1
done
[ "$failed" -eq 0 ] || exit 1
echo "dll exports OK: $(wc -l <"$tmp/dll") functions"
