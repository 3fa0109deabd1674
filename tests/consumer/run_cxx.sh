#!/bin/sh
# run_cxx.sh PREFIX WORKDIR CXX [EXTRA_FLAGS]: compile cxx_consumer.cpp
# against the installed library as C++17 with every warning an error,
# with the flags `pkg-config npyio` gives, and run it.
set -eu
prefix=$1
work=$2
cxx=$3
extra=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
pcdir=$(dirname "$(find "$prefix" -name npyio.pc | head -n 1)")
libdir=$(PKG_CONFIG_PATH=$pcdir pkg-config --variable=libdir npyio)
flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs npyio)
rm -rf "$work" && mkdir -p "$work"
# shellcheck disable=SC2086
"$cxx" -std=c++17 -Wall -Wextra -Wpedantic -Werror $extra \
    -o "$work/cxx_consumer" "$here/cxx_consumer.cpp" $flags \
    -Wl,-rpath,"$libdir"
"$work/cxx_consumer" "$work"
