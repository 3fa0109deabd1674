#!/bin/sh
# check_layers.sh SRC_DIR LAYER_TABLE
#
# The library's modules depend on each other one way only. Every module of
# SRC_DIR (x.c and its header x.h are the module x; subfolders such as the
# tool's src/cli are not looked at) has a layer in LAYER_TABLE
# (tests/abi/layers.txt: lines "module layer"), and its #include "y.h"
# lines may name modules of its own layer or of lower ones only. Fails
# (exit 1, one "LAYER CHECK FAILED: ..." line per problem, naming the file,
# the include and both layers) when
#   - a module includes a module of a higher layer;
#   - modules of one layer include each other (a cycle);
#   - a module is missing from the table (the line says what to add);
#   - the table has a malformed or repeated line.
# Includes of files that are not in SRC_DIR (npyio.h, system headers) are
# not dependencies between modules and are skipped. Prints "layers OK"
# and exits 0 otherwise.
#
# check_layers.sh --table LAYER_TABLE is the one reader of the table (the
# other layer check, check_layer_symbols.sh, uses it too): it prints a line
# "module layer" for every module, and a "LAYER CHECK FAILED: ..." line
# for every malformed or repeated line of the table, and exits 0.
set -eu

# The table's modules and its faults, as --table prints them.
read_table() {
    awk -v table="$1" '
    {
        line = $0
        sub(/#.*/, "", line)
        n = split(line, w, " ")
        if (n == 0)
            next
        if (n != 2 || w[2] !~ /^[0-9]+$/)
            print "LAYER CHECK FAILED: " table ":" FNR ": expected \"module layer\" (a name and a whole number), not \"" $0 "\""
        else if (w[1] in layer)
            print "LAYER CHECK FAILED: " table ":" FNR ": module " w[1] " is listed twice (layers " layer[w[1]] " and " w[2] ")"
        else {
            layer[w[1]] = w[2] + 0
            print w[1], w[2] + 0
        }
    }' "$1"
}

if [ $# -eq 2 ] && [ "$1" = --table ] && [ -f "$2" ]; then
    read_table "$2"
    exit 0
fi
if [ $# -ne 2 ] || [ ! -d "$1" ] || [ ! -f "$2" ]; then
    echo "usage: check_layers.sh SRC_DIR LAYER_TABLE" >&2
    echo "       check_layers.sh --table LAYER_TABLE" >&2
    exit 2
fi
src=${1%/}
table=$2
layers=$(mktemp)
trap 'rm -f "$layers"' EXIT
read_table "$table" >"$layers"

files=
for f in "$src"/*.c "$src"/*.h; do
    [ -f "$f" ] && files="$files $f"
done

# The table first (as read_table gives it), then the sources, whose names
# are known beforehand so that a file without any include still counts as
# a module.
# shellcheck disable=SC2086 # the paths have no blanks: split them
awk -v layers="$layers" -v src="$src" -v files="$files" '
function base_of(path) {
    sub(/.*\//, "", path)
    return path
}
function module_of(path) {
    path = base_of(path)
    sub(/\.[ch]$/, "", path)
    return path
}
function fail(msg) {
    print "LAYER CHECK FAILED: " msg
    failed = 1
}
# The include of the edge a -> b, as "FILE includes "NAME"".
function edge_text(a, b,    key) {
    key = a SUBSEP b
    return edge_file[key] " includes \"" edge_inc[key] "\""
}
BEGIN {
    n = split(files, list, " ")
    for (i = 1; i <= n; i++) {
        present[base_of(list[i])] = 1
        m = module_of(list[i])
        if (!(m in is_module)) {
            is_module[m] = 1
            first_file[m] = list[i]
            mods[++nmods] = m
        }
    }
}
FILENAME == layers && /^LAYER CHECK FAILED: / { print; failed = 1; next }
FILENAME == layers { layer[$1] = $2 + 0; next }
/^[ \t]*#[ \t]*include[ \t]*"/ {
    name = $0
    sub(/^[^"]*"/, "", name)
    sub(/".*/, "", name)
    if (!(base_of(name) in present))
        next            # not one of ours: npyio.h, a system header
    from = module_of(FILENAME)
    to = module_of(name)
    if (from == to)
        next            # x.c includes x.h: one module
    key = from SUBSEP to
    if (!(key in edge_file)) {
        edge_file[key] = FILENAME
        edge_inc[key] = name
        edge_from[++nedges] = from
        edge_to[nedges] = to
    }
}
END {
    # Modules missing from the table, with the layers their includes allow
    # (one-way includes within a layer are fine, so the lowest is the
    # highest layer among the modules it includes).
    for (i = 1; i <= nmods; i++) {
        m = mods[i]
        if (m in layer)
            continue
        lo = 0; lo_why = ""
        hi = -1; hi_why = ""
        for (e = 1; e <= nedges; e++) {
            if (edge_from[e] == m && (edge_to[e] in layer) &&
                layer[edge_to[e]] >= lo) {
                lo = layer[edge_to[e]]
                lo_why = edge_to[e]
            }
            if (edge_to[e] == m && (edge_from[e] in layer) &&
                (hi < 0 || layer[edge_from[e]] < hi)) {
                hi = layer[edge_from[e]]
                hi_why = edge_from[e]
            }
        }
        msg = first_file[m] ": module " m " is not in the layer table: add it to tests/abi/layers.txt"
        if (hi >= 0 && hi < lo) {
            fail(msg ", but no layer fits: it includes " lo_why " (layer " lo ") and is included by " hi_why " (layer " hi "); one of those includes has to go")
            continue
        }
        why = lo_why == "" ? "it includes no module of the table" : "it includes " lo_why " (layer " lo ")"
        if (hi < 0)
            why = why "; any layer from " lo " up will do"
        else
            why = why "; any layer from " lo " to " hi " will do, as " hi_why " (layer " hi ") includes it"
        fail(msg " as the line \"" m " " lo "\" (" why ")")
    }
    # Includes of a higher layer; same-layer ones kept for the cycle walk.
    for (e = 1; e <= nedges; e++) {
        a = edge_from[e]; b = edge_to[e]
        if (!(a in layer) || !(b in layer))
            continue
        if (layer[b] > layer[a])
            fail(edge_text(a, b) ": " a " (layer " layer[a] ") must not include " b " (layer " layer[b] "), a higher layer")
        else if (layer[b] == layer[a])
            same[a, ++nsame[a]] = b
    }
    # Cycles among the modules of one layer (across layers, a cycle needs
    # an include of a higher layer, reported above).
    for (i = 1; i <= nmods; i++)
        if (state[mods[i]] == 0)
            visit(mods[i], 0)
    if (failed)
        exit 1
    print "layers OK: " nmods " modules, " nedges " includes between them"
}
# Depth-first walk over same-layer includes: state 1 on the path, 2 done.
function visit(m, depth,    k, t, j, text, names) {
    state[m] = 1
    path[depth] = m
    for (k = 1; k <= nsame[m]; k++) {
        t = same[m, k]
        if (state[t] == 1) {
            for (j = depth; path[j] != t; j--)
                ;
            text = ""; names = ""
            for (; j <= depth; j++) {
                text = text (text == "" ? "" : " and ") edge_text(path[j], j < depth ? path[j + 1] : t)
                names = names (names == "" ? "" : ", ") path[j] " (layer " layer[path[j]] ")"
            }
            fail(text ": " names " include each other; one layer may include another only one way, so move one of them to a lower layer or drop an include")
        } else if (state[t] == 0) {
            visit(t, depth + 1)
        }
    }
    state[m] = 2
}
' "$layers" $files
