#!/bin/sh
# check_docs.sh HEADER
# Every function the public header exports (NPYIO_API) is documented by the
# comment block right before it, which says since which version it exists
# (@since) and, unless it returns void, what it returns (@return). Prints
# each function that lacks one and exits 1; "docs OK: N functions" else.
set -eu
awk '
    /^\/\*\*/ { doc = ""; in_doc = 1 }
    in_doc    { doc = doc "\n" $0 }
    /\*\//    { if (in_doc) { in_doc = 0; last = doc } }
    /^NPYIO_API / {
        line = $0
        name = line
        sub(/\(.*/, "", name)
        sub(/.*[ *]/, "", name)
        void = line ~ /^NPYIO_API void /
        n++
        if (last !~ /@since/) { print name ": no @since"; bad++ }
        if (!void && last !~ /@return/) { print name ": no @return"; bad++ }
        last = ""
    }
    END {
        if (bad) { printf "DOCS CHECK FAILED: %d missing\n", bad; exit 1 }
        printf "docs OK: %d functions\n", n
    }' "$1"
