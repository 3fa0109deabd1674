#!/bin/sh
# check_internal_calls.sh HEADER OBJECT...
#
# Inside the library, code calls internal functions, never a public
# function that returns a status (issue 40): a public entry names itself
# in the message of a failure (npyio__as_called), so a public call made
# inside would name a call the caller never made, and the caller's entry
# would have to strip it again. The OBJECTs are the library's objects (an
# argument may hold several, separated by ';', as CMake's
# $<TARGET_OBJECTS:...>); HEADER is the public header, whose lines
# "NPYIO_API npyio_status npyio_<name>(" declare the functions checked.
# An object may call its own public functions only through their bodies
# too, but nm sees only the calls between objects, which are the ones
# checked. Public functions that return no status (npyio_dtype_unref,
# npyio_header_free, getters) may be called anywhere.
#
# Fails (exit 1, one "INTERNAL CALL CHECK FAILED: ..." line per call,
# naming the object and the function) when an object uses such a
# function that it does not define; prints "internal calls OK: ..." and
# exits 0 otherwise. NM (environment) is the nm to use.
set -eu

if [ $# -lt 2 ] || [ ! -f "$1" ]; then
    echo "usage: check_internal_calls.sh HEADER OBJECT..." >&2
    exit 2
fi
header=$1
shift

public=$(mktemp)
listing=$(mktemp)
symbols=$(mktemp)
trap 'rm -f "$public" "$listing" "$symbols"' EXIT
# The declarations of the public functions that return a status (the
# return type and the name on one line, as the header writes them).
sed -n 's/^NPYIO_API npyio_status[[:space:]]*\(npyio_[a-z0-9_]*\)[[:space:]]*(.*/\1/p' \
    "$header" | sort -u >"$public"
if [ ! -s "$public" ]; then
    echo "check_internal_calls.sh: no \"NPYIO_API npyio_status npyio_...(\"" \
         "declaration in $header" >&2
    exit 2
fi

# shellcheck source=nm_objects.sh source-path=SCRIPTDIR
. "$(dirname "$0")/nm_objects.sh"
nm_objects "$listing" "$symbols" "$@"
# Every use of a listed function is a call into another object: an object
# that defines a function has no undefined use of it.
calls=$(awk -v list="$public" '
    BEGIN { while ((getline name < list) > 0) status[name] = 1 }
    {
        split($0, f, "\t")
        if ((f[3] == "U" || f[3] == "w" || f[3] == "v") && (f[2] in status))
            print f[1] "\t" f[2]
    }' "$listing")
failed=0
if [ -n "$calls" ]; then
    failed=1
    printf '%s\n' "$calls" | while IFS="$(printf '\t')" read -r obj name; do
        echo "INTERNAL CALL CHECK FAILED: $obj calls $name, a public" \
             "function that returns a status: call its internal body," \
             "given the caller's public name as \`where', so that" \
             "messages name only the public call the caller made"
    done
fi

[ "$failed" -eq 0 ] || exit 1
echo "internal calls OK: $nobjects objects call none of the" \
     "$(wc -l <"$public" | tr -d ' ') public functions that return a status"
