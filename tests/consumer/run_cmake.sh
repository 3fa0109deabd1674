#!/bin/sh
# run_cmake.sh PREFIX WORKDIR CC SHARED(ON|OFF) [EXTRA_CFLAGS]
# Configure and build a downstream CMake project that uses
# find_package(npyio) and npyio::npyio against the installed library, run
# its program, and check that a shared build loads the installed library.
set -eu
prefix=$1
work=$2
cc=$3
shared=$4
extra=${5:-}
cmake=${CMAKE:-cmake}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
"$cmake" -S "$here/cmake-project" -B "$work" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="-Wall -Wextra -Werror $extra" \
    -DCMAKE_EXE_LINKER_FLAGS="$extra" >"$work.log" 2>&1 || {
    cat "$work.log"; exit 1; }
"$cmake" --build "$work" >>"$work.log" 2>&1 || { cat "$work.log"; exit 1; }
if [ "$shared" = ON ]; then
    loaded=$(ldd "$work/consumer" | awk '$1 == "libnpyio.so.1" { print $3 }')
    case $loaded in
    "$prefix"/*) echo "loads $loaded" ;;
    *) echo "consumer loads libnpyio.so.1 from '$loaded', not under $prefix"; exit 1 ;;
    esac
fi
"$work/consumer"
