#!/bin/sh
# check_abi.sh BASELINE LIBRARY INCLUDE_DIR [remove-symbol]
#
# The library's ABI against the baseline in the tree (tests/abi/
# libnpyio.abi, written by abidw: see update_abi_baseline.sh), with
# abidiff: added functions are compatible; a removed or changed function
# or type is not, and fails the check. Public types only (INCLUDE_DIR).
#
# With "remove-symbol", the baseline is first given a function the library
# does not have (npyio_version_number renamed): the check must then fail,
# which proves that it can.
set -u
baseline=$1 lib=$2 include=$3
if [ "${4:-}" = remove-symbol ]; then
    tmp=$(mktemp "${TMPDIR:-/tmp}/npyio-abi.XXXXXX") || exit 1
    trap 'rm -f "$tmp"' EXIT
    sed "s/'npyio_version_number'/'npyio_version_number_gone'/g" \
        "$baseline" >"$tmp"
    baseline=$tmp
fi
abidiff --headers-dir2 "$include" "$baseline" "$lib"
status=$?
# abidiff's status bits: 1 error, 2 usage error, 4 ABI change, 8 an
# incompatible change. A change alone (4) is an addition.
if [ $((status & 11)) -ne 0 ]; then
    echo "ABI CHECK FAILED: abidiff exited with $status (see above)"
    exit 1
fi
echo "abi compatible with the baseline"
