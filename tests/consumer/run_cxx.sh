#!/bin/sh
# run_cxx.sh PREFIX WORKDIR CXX [EXTRA_FLAGS [PYTHON]]: build
# cxx_consumer.cpp (npyio.hpp, header-only: consumers need only -lnpyio)
# against the installed package as C++17 with every warning an error,
# twice: with the flags `pkg-config npyio` gives, and as a CMake project
# with find_package(npyio) and npyio::npyio (cmake-project with
# NPYIO_CONSUMER_CXX=ON). Each program must load the installed
# libnpyio.so.1, and runs under cxx_numpy_check.py when PYTHON has NumPy
# (NumPy's files in, its files checked with np.load), else alone.
set -eu
prefix=$1
work=$2
cxx=$3
extra=${4:-}
python=${5:-}
cmake=${CMAKE:-cmake}
here=$(cd "$(dirname "$0")" && pwd)
pcdir=$(dirname "$(find "$prefix" -name npyio.pc | head -n 1)")
libdir=$(PKG_CONFIG_PATH=$pcdir pkg-config --variable=libdir npyio)
flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs npyio)
warn="-std=c++17 -Wall -Wextra -Wpedantic -Werror"
rm -rf "$work" && mkdir -p "$work/pkgconfig"
# shellcheck disable=SC2086
"$cxx" $warn $extra -o "$work/pkgconfig/cxx_consumer" \
    "$here/cxx_consumer.cpp" $flags -Wl,-rpath,"$libdir"
"$cmake" -S "$here/cmake-project" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
    -DNPYIO_CONSUMER_CXX=ON -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_CXX_FLAGS="-Wall -Wextra -Wpedantic -Werror $extra" \
    -DCMAKE_EXE_LINKER_FLAGS="$extra" >"$work/cmake.log" 2>&1 || {
    cat "$work/cmake.log"; exit 1; }
"$cmake" --build "$work/cmake" --verbose >>"$work/cmake.log" 2>&1 || {
    cat "$work/cmake.log"; exit 1; }
grep -q -- '-std=c++17' "$work/cmake.log" || {
    echo "the find_package build did not compile as -std=c++17"; exit 1; }
for kind in pkgconfig cmake; do
    program=$work/$kind/cxx_consumer
    loaded=$(ldd "$program" | awk '$1 == "libnpyio.so.1" { print $3 }')
    case $loaded in
    "$prefix"/*) echo "$kind: loads $loaded" ;;
    *) echo "$kind: loads libnpyio.so.1 from '$loaded', not under $prefix"; exit 1 ;;
    esac
    if [ -n "$python" ] && "$python" -c 'import numpy' 2>/dev/null; then
        "$python" "$here/cxx_numpy_check.py" "$program" "$work/$kind-run"
    else
        echo "$kind: no NumPy: the program's own checks only"
        mkdir -p "$work/$kind-run"
        "$program" "$work/$kind-run"
    fi
done
echo "C++ consumers OK (pkg-config and find_package)"
