#!/bin/sh
# check_soname.sh LIBRARY SONAME
# The shared library must carry the expected SONAME, and the real file,
# the SONAME link and the development link must all be in place.
set -eu
lib=$1
want=$2
dir=$(dirname "$lib")
soname=$(${READELF:-readelf} -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$soname" != "$want" ]; then
    echo "ABI CHECK FAILED: SONAME is '$soname', expected '$want'"
    exit 1
fi
if [ "$(readlink "$dir/$want")" = "" ] || [ ! -e "$dir/$want" ]; then
    echo "ABI CHECK FAILED: $dir/$want is not a link to the library"
    exit 1
fi
echo "SONAME $soname; $(ls "$dir" | grep '^libnpyio\.so' | tr '\n' ' ')"
