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

# --cflags names our include folder and nothing else: no other package's
# folder (minizip's crypt.h would shadow the C library's), with or without
# --static.
includedir=$(PKG_CONFIG_PATH=$pcdir pkg-config --variable=includedir npyio)
for static in "" --static; do
    # shellcheck disable=SC2086
    cflags=$(PKG_CONFIG_PATH=$pcdir pkg-config $static --cflags npyio)
    for word in $cflags; do
        [ "$word" = "-I$includedir" ] || {
            echo "pkg-config $static --cflags npyio gives '$cflags': '$word' is not -I$includedir"
            exit 1; }
    done
done
# Where no other package's .pc file is found (minizip's -dev package
# absent), a shared build's flags still come.
if [ "$shared" = ON ]; then
    PKG_CONFIG_LIBDIR=$pcdir PKG_CONFIG_PATH= pkg-config --cflags --libs npyio >/dev/null || {
        echo "pkg-config --cflags --libs npyio fails without the other .pc files"
        exit 1; }
fi
# A program with the C library's <crypt.h> next to <npyio.h>.
# shellcheck disable=SC2086
"$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror $extra \
    -o "$work/crypt_consumer" "$here/crypt_consumer.c" $flags -lcrypt \
    -Wl,-rpath,"$libdir"
"$work/crypt_consumer"
echo "pkg-config consumers OK"
