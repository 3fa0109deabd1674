#!/bin/sh
# win_consumer.sh BUILD PREFIX WORK TOOLCHAIN EMULATOR...
#
# The Windows build installed (cmake --install BUILD --prefix PREFIX) and
# used as a mingw-w64 program would: consumer/consumer.c compiled with
# the flags `pkg-config npyio` gives and, as a second program, by the
# CMake project consumer/cmake-project (find_package(npyio), with
# TOOLCHAIN), each linked against the import library and run under the
# emulator (Wine) with PREFIX/bin, where libnpyio.dll is, on WINEPATH.
# Prints "windows consumers OK".
set -eu
build=$1 prefix=$2 work=$3 toolchain=$4
shift 4
here=$(cd "$(dirname "$0")/../consumer" && pwd)
rm -rf "$prefix" "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
[ -f "$prefix/bin/libnpyio.dll" ] && [ -f "$prefix/lib/libnpyio.dll.a" ] ||
    { echo "no DLL or import library installed"; exit 1; }
flags=$(PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig pkg-config --cflags --libs npyio)
echo "pkg-config npyio: $flags"
# shellcheck disable=SC2086
x86_64-w64-mingw32-gcc-posix -std=c11 -Wall -Wextra -Werror \
    -o "$work/consumer.exe" "$here/consumer.c" $flags
cmake -S "$here/cmake-project" -B "$work/cmake" \
    -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
    -Dnpyio_DIR="$prefix/lib/cmake/npyio" \
    -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >"$work/cmake.log" 2>&1 ||
    { cat "$work/cmake.log"; exit 1; }
cmake --build "$work/cmake" >>"$work/cmake.log" 2>&1 ||
    { cat "$work/cmake.log"; exit 1; }
export NPYIO_WINEPATH="Z:$prefix/bin;${NPYIO_WINEPATH:-}"
"$@" "$work/consumer.exe"
"$@" "$work/cmake/consumer.exe"
echo "windows consumers OK"
