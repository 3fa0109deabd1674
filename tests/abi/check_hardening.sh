#!/bin/sh
# check_hardening.sh TOOL LIBRARY|- RELRO NOW PIE PROTECTOR
# What NpyioCompilerFlags.cmake added (each flag ON or OFF; OFF where the
# builder's own flags decided) must be in the binaries: GNU_RELRO and
# BIND_NOW in the tool and the shared library (LIBRARY "-" for a static
# build), a PIE tool (ELF type DYN), and, in an optimized build, a
# stack-protector or fortify symbol (__stack_chk_fail*, __*_chk) referenced
# by the library (by the tool, which contains it, in a static build).
set -eu
tool=$1
lib=$2
relro=$3
now=$4
pie=$5
protector=$6
readelf=${READELF:-readelf}
fail=0
bad() { echo "HARDENING CHECK FAILED: $*"; fail=1; }
bins=$tool
[ "$lib" = - ] || bins="$bins $lib"
for bin in $bins; do
    if [ "$relro" = ON ]; then
        "$readelf" -lW "$bin" | grep -q 'GNU_RELRO' || bad "$bin has no GNU_RELRO segment"
    fi
    if [ "$now" = ON ]; then
        "$readelf" -dW "$bin" | grep -Eq '\(FLAGS\).*BIND_NOW|\(FLAGS_1\).*NOW|\(BIND_NOW\)' ||
            bad "$bin is not linked with -z now (no BIND_NOW)"
    fi
done
if [ "$pie" = ON ]; then
    "$readelf" -hW "$tool" | grep -Eq 'Type: *DYN' || bad "$tool is not a PIE (ELF type is not DYN)"
fi
if [ "$protector" = ON ]; then
    target=$lib
    [ "$lib" = - ] && target=$tool
    "$readelf" -sW "$target" | grep -Eq '__stack_chk_fail|__[a-z0-9_]+_chk(@|$| )' ||
        bad "$target references no __stack_chk_fail nor fortified __*_chk function"
else
    echo "not an optimized build with stack protector and fortify: symbol check skipped"
fi
[ "$fail" -eq 0 ] && echo "hardening OK: $bins"
exit "$fail"
