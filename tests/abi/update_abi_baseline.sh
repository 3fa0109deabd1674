#!/bin/sh
# update_abi_baseline.sh LIBRARY: write tests/abi/libnpyio.abi, the ABI
# check_abi.sh holds every later build to, from a shared x86-64 build with
# debug information (the default RelWithDebInfo):
#
#   sh tests/abi/update_abi_baseline.sh build/src/libnpyio.so.1
#
# Only when the ABI may change on purpose: before 1.0, or at a new SONAME.
# Additions need no update (they are compatible).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
abidw --no-corpus-path --no-comp-dir-path --no-show-locs \
      --headers-dir "$here/../../include" --drop-private-types \
      --type-id-style hash --out-file "$here/libnpyio.abi" "$1"
echo "wrote $here/libnpyio.abi"
