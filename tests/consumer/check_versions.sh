#!/bin/sh
# check_versions.sh PREFIX SOURCE_DIR: every place an installed libnpyio
# states its version agrees: the header (NPYIO_VERSION_STRING and the
# numbers), npyio_version_string() through the tool (`npyio --version`),
# the shared library's file name and SONAME, npyio.pc (pkg-config
# --modversion), the CMake package's version file, the title lines of the
# man pages npyio(1) and npyio(3), and the newest release section of NEWS
# in the source tree.
set -eu
prefix=$1
src=$2
failed=0
fail() { echo "FAIL: $*"; failed=1; }
header=$prefix/include/npyio.h
want=$(sed -n 's/^#define NPYIO_VERSION_STRING "\(.*\)"$/\1/p' "$header")
major=$(sed -n 's/^#define NPYIO_VERSION_MAJOR \([0-9]*\)$/\1/p' "$header")
minor=$(sed -n 's/^#define NPYIO_VERSION_MINOR \([0-9]*\)$/\1/p' "$header")
patch=$(sed -n 's/^#define NPYIO_VERSION_PATCH \([0-9]*\)$/\1/p' "$header")
[ -n "$want" ] || { echo "no NPYIO_VERSION_STRING in $header"; exit 1; }
echo "header: $want"
[ "$major.$minor.$patch" = "$want" ] ||
    fail "NPYIO_VERSION_MAJOR/MINOR/PATCH give $major.$minor.$patch"
tool=$(env -i "$prefix/bin/npyio" --version)
[ "$tool" = "npyio $want" ] || fail "npyio --version says '$tool'"
lib=$(find "$prefix" -name "libnpyio.so.$want" | head -n 1)
if [ -n "$lib" ]; then
    soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')
    [ "$soname" = "libnpyio.so.$major" ] || fail "the SONAME is '$soname'"
else
    find "$prefix" -name 'libnpyio.so*' | grep -q . &&
        fail "no libnpyio.so.$want: $(find "$prefix" -name 'libnpyio.so*')"
    echo "(a static build: no shared library file)"
fi
pcdir=$(dirname "$(find "$prefix" -name npyio.pc | head -n 1)")
pc=$(PKG_CONFIG_PATH=$pcdir pkg-config --modversion npyio)
[ "$pc" = "$want" ] || fail "pkg-config --modversion npyio says '$pc'"
cfg=$(find "$prefix" -name npyioConfigVersion.cmake | head -n 1)
grep -q "^set(PACKAGE_VERSION \"$want\")\$" "$cfg" ||
    fail "$cfg: $(grep '^set(PACKAGE_VERSION ' "$cfg")"
man=$(find "$prefix" -name npyio.1 | head -n 1)
grep -q "^\.TH NPYIO 1 \"[0-9-]*\" \"libnpyio $want\"" "$man" ||
    fail "the man page's title line: $(grep '^\.TH' "$man")"
man3=$(find "$prefix" -name npyio.3 | head -n 1)
grep -q "^\.TH npyio 3 \"\" \"libnpyio $want\"" "$man3" ||
    fail "npyio.3's title line: $(grep '^\.TH' "$man3")"
news=$(grep -m 1 -E '^[0-9]+\.[0-9]+\.[0-9]+ ' "$src/NEWS" | cut -d' ' -f1)
[ "$news" = "$want" ] || fail "the newest release in NEWS is '$news'"
[ "$failed" -eq 0 ] && echo "versions agree: $want"
exit "$failed"
