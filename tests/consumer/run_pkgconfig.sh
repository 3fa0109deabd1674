#!/bin/sh
# run_pkgconfig.sh PREFIX WORKDIR CC SHARED(ON|OFF) [EXTRA_CFLAGS]
# Compile consumer.c against the installed library with the flags that
# `pkg-config npyio` gives, run it, and check that a shared build really
# linked (and loaded) the installed libnpyio.so.1.
set -eu
prefix=$1
work=$2
cc=$3
shared=$4
extra=${5:-}
here=$(cd "$(dirname "$0")" && pwd)
pcdir=$(dirname "$(find "$prefix" -name npyio.pc | head -n 1)")
libdir=$(PKG_CONFIG_PATH=$pcdir pkg-config --variable=libdir npyio)
rm -rf "$work" && mkdir -p "$work"
if [ "$shared" = ON ]; then
    flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs npyio)
else
    flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --static --cflags --libs npyio)
fi
echo "pkg-config npyio: $flags"
# shellcheck disable=SC2086
"$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror $extra \
    -o "$work/consumer" "$here/consumer.c" $flags -Wl,-rpath,"$libdir"
if [ "$shared" = ON ]; then
    readelf -d "$work/consumer" | grep -q 'NEEDED.*\[libnpyio\.so\.1\]' || {
        echo "consumer does not link libnpyio.so.1"; exit 1; }
    loaded=$(ldd "$work/consumer" | awk '$1 == "libnpyio.so.1" { print $3 }')
    case $loaded in
    "$libdir"/*) echo "loads $loaded" ;;
    *) echo "consumer loads libnpyio.so.1 from '$loaded', not $libdir"; exit 1 ;;
    esac
fi
"$work/consumer"
