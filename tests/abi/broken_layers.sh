#!/bin/sh
# broken_layers.sh KIND SRC_DIR LAYER_TABLE WORKDIR
# Copies the modules of SRC_DIR into WORKDIR/KIND, breaks the copy, runs
# check_layers.sh on it with the real table and prints its exit status, so
# that ctest can see the check fail (the negative abi_layers_fails_* tests):
#   back-edge  dtype.h includes record.h, a module of a higher layer;
#   cycle      header.h and convert.h (one layer) include each other;
#   missing    a new module stream_zip.c that the table does not list.
set -eu
kind=$1
src=$2
table=$3
dir=$4/$kind
rm -rf "$dir"
mkdir -p "$dir"
cp "$src"/*.c "$src"/*.h "$dir"/
case $kind in
back-edge) printf '#include "record.h"\n' >>"$dir/dtype.h" ;;
cycle)
    printf '#include "convert.h"\n' >>"$dir/header.h"
    printf '#include "header.h"\n' >>"$dir/convert.h"
    ;;
missing) printf '#include "stream.h"\n' >"$dir/stream_zip.c" ;;
*)
    echo "broken_layers.sh: unknown kind $kind" >&2
    exit 2
    ;;
esac
status=0
sh "$(dirname "$0")/check_layers.sh" "$dir" "$table" || status=$?
echo "check_layers.sh exited with $status"
