#!/bin/sh
# run_cxx_example.sh CXX SOURCE INCLUDE_DIR LIBRARY WORKDIR [FLAGS]: build
# the C++ example SOURCE that npyio.hpp(3) shows (as C++17, every warning
# an error, FLAGS added: the sanitizers' in such builds) against the
# shared LIBRARY of the build tree and INCLUDE_DIR's npyio.hpp, then run it
# in the empty folder WORKDIR; its output is checked by ctest.
set -eu
cxx=$1 source=$2 include=$3 library=$4 work=$5
flags=${6:-}
rm -rf "$work" && mkdir -p "$work"
# shellcheck disable=SC2086
"$cxx" -std=c++17 -Wall -Wextra -Wpedantic -Werror $flags -I"$include" \
    -o "$work/example" "$source" "$library" \
    -Wl,-rpath,"$(dirname "$library")"
cd "$work"
./example
