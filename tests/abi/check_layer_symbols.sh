#!/bin/sh
# check_layer_symbols.sh [--table LAYER_TABLE] [--allow-cycle A,B...]... OBJECT...
#
# The one-way dependencies of check_layers.sh, checked where they are
# made: by the calls in the compiled objects, not the #include lines (a
# module can declare a function of another without its header, or call
# one through a header that a third module includes). The OBJECTs are the
# objects of one program or library (x.c.o is the module x); an argument
# may hold several, separated by ';' (CMake's $<TARGET_OBJECTS:...>).
# Every undefined symbol an object uses that another object defines is
# an edge user -> definer. Fails (exit 1, one "LAYER CHECK FAILED: ..."
# line per problem, naming both objects, the symbols and both layers) when
#   - with LAYER_TABLE (tests/abi/layers.txt): an object calls a module of
#     a higher layer, or is a module missing from the table;
#   - modules call each other in a loop, directly or through others, in
#     one layer or not: a strongly connected set of modules, reported
#     with one shortest loop through it (and its other members).
# --allow-cycle A,B names a set of modules whose loop is known and
# tolerated for now: exactly that set may call each other (a loop that
# takes in another module still fails), and it is printed as a note. An
# allowance that matches no loop fails, so that it is dropped once the
# loop is gone. NM (environment) is the nm to use (a cross build's).
# Prints "layer symbols OK" and exits 0 otherwise.
set -eu

usage() {
    echo "usage: check_layer_symbols.sh [--table LAYER_TABLE]" \
         "[--allow-cycle A,B...]... OBJECT..." >&2
    exit 2
}

table=
allow=
while [ $# -gt 0 ]; do
    case $1 in
    --table)
        if [ $# -lt 2 ] || [ ! -f "$2" ]; then
            usage
        fi
        table=$2
        shift 2 ;;
    --allow-cycle)
        if [ $# -lt 2 ]; then
            usage
        fi
        allow="$allow $2"
        shift 2 ;;
    --)
        shift
        break ;;
    -*)
        usage ;;
    *)
        break ;;
    esac
done
[ $# -gt 0 ] || usage

# Each object's external symbols as "OBJECT<tab>NAME<tab>TYPE" (nm -P:
# "name type value size"), so that awk needs no nm of its own.
listing=$(mktemp)
symbols=$(mktemp)
layers=$(mktemp)
trap 'rm -f "$listing" "$symbols" "$layers"' EXIT
# The table as check_layers.sh reads it: "module layer" lines and a
# "LAYER CHECK FAILED: ..." line for each fault.
if [ -n "$table" ]; then
    sh "$(dirname "$0")/check_layers.sh" --table "$table" >"$layers"
fi
# shellcheck source=nm_objects.sh source-path=SCRIPTDIR
. "$(dirname "$0")/nm_objects.sh"
nm_objects "$listing" "$symbols" "$@"

awk -v table="$table" -v layers="$layers" -v allow="$allow" \
    -v nobjects="$nobjects" '
function module_of(path) {
    sub(/.*\//, "", path)
    sub(/\.(o|obj)$/, "", path)
    sub(/\.c$/, "", path)
    return path
}
function fail(msg) {
    print "LAYER CHECK FAILED: " msg
    failed = 1
}
function layer_text(m) {
    return table == "" ? m : m " (layer " (m in layer ? layer[m] : "?") ")"
}
# The symbols of the edge a -> b: up to three, then how many more.
function syms_text(a, b,    key, n, i, w, text) {
    key = a SUBSEP b
    n = split(edge_syms[key], w, " ")
    text = w[1]
    for (i = 2; i <= n && i <= 3; i++)
        text = text ", " w[i]
    if (n > 3)
        text = text " and " (n - 3) " more"
    return text
}
function edge_text(a, b) {
    return obj[a] " uses " syms_text(a, b) " (defined in " obj[b] ")"
}
FILENAME == layers && /^LAYER CHECK FAILED: / { print; failed = 1; next }
FILENAME == layers { layer[$1] = $2 + 0; next }
{
    split($0, f, "\t")
    m = module_of(f[1])
    if (!(m in obj)) {
        obj[m] = f[1]
        mods[++nmods] = m
    } else if (obj[m] != f[1]) {
        fail(obj[m] " and " f[1] " are both module " m ": name one once")
        next
    }
    if (f[3] == "U" || f[3] == "w" || f[3] == "v") {
        nuses++
        use_mod[nuses] = m
        use_sym[nuses] = f[2]
    } else if (f[3] ~ /^[A-TV-Z]$/ && f[3] != "N" && !(f[2] in def)) {
        def[f[2]] = m
    }
}
END {
    for (i = 1; i <= nuses; i++) {
        a = use_mod[i]
        if (!(use_sym[i] in def) || def[use_sym[i]] == a)
            continue
        b = def[use_sym[i]]
        key = a SUBSEP b
        if (!(key in edge_syms)) {
            edge_from[++nedges] = a
            edge_to[nedges] = b
            edge_syms[key] = use_sym[i]
        } else {
            edge_syms[key] = edge_syms[key] " " use_sym[i]
        }
        reach[a, b] = 1
    }
    if (table != "")
        check_layers()
    check_loops()
    if (failed)
        exit 1
    print "layer symbols OK: " nobjects " objects, " nedges " calls between modules"
}
function check_layers(    i, e, a, b) {
    for (i = 1; i <= nmods; i++)
        if (!(mods[i] in layer))
            fail(obj[mods[i]] ": module " mods[i] " is not in the layer table " table)
    for (e = 1; e <= nedges; e++) {
        a = edge_from[e]; b = edge_to[e]
        if ((a in layer) && (b in layer) && layer[b] > layer[a])
            fail(edge_text(a, b) ": " layer_text(a) " must not call " layer_text(b) ", a higher layer")
    }
}
# Strongly connected sets from the transitive closure (a few dozen
# modules: cubic is nothing), each reported once, with its allowance.
function check_loops(    i, j, k, a, n, w, set, text, name) {
    for (k = 1; k <= nmods; k++)
        for (i = 1; i <= nmods; i++)
            if ((mods[i], mods[k]) in reach)
                for (j = 1; j <= nmods; j++)
                    if ((mods[k], mods[j]) in reach)
                        reach[mods[i], mods[j]] = 1
    n = split(allow, w, " ")
    for (i = 1; i <= n; i++)
        allowed[sorted_set(w[i])] = w[i]
    for (i = 1; i <= nmods; i++) {
        a = mods[i]
        if (a in in_set || !((a, a) in reach))
            continue
        set = ""
        for (j = 1; j <= nmods; j++)
            if (mods[j] == a || (((a, mods[j]) in reach) && ((mods[j], a) in reach))) {
                in_set[mods[j]] = 1
                set = set (set == "" ? "" : ",") mods[j]
            }
        name = sorted_set(set)
        text = loop_text(a, set)
        if (name in allowed) {
            print "LAYER CHECK NOTE: allowed for now (--allow-cycle " allowed[name] "): " text
            used[name] = 1
        } else {
            fail(text)
        }
    }
    for (name in allowed)
        if (!(name in used))
            fail("--allow-cycle " allowed[name] ": these modules do not call each other in a loop (any more): drop the allowance")
}
# A comma-separated set of names in one order (insertion sort).
function sorted_set(s,    n, v, i, j, t, out) {
    n = split(s, v, ",")
    for (i = 2; i <= n; i++)
        for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
            t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
        }
    out = v[1]
    for (i = 2; i <= n; i++)
        out = out "," v[i]
    return out
}
# The shortest loop from a through the set back to a (breadth first), as
# "X uses S (defined in Y) and ...: x, y call each other ...".
function loop_text(a, set,    member, parent, q, n, w, i, j, head, tail, u, e, v, last, path, np, text, names, others) {
    n = split(set, w, ",")
    for (i = 1; i <= n; i++)
        member[w[i]] = 1
    q[1] = a; head = 1; tail = 1; parent[a] = ""; last = ""
    while (head <= tail && last == "") {
        u = q[head++]
        for (e = 1; e <= nedges && last == ""; e++) {
            v = edge_to[e]
            if (edge_from[e] != u || !(v in member))
                continue
            if (v == a)
                last = u
            else if (!(v in parent)) {
                parent[v] = u
                q[++tail] = v
            }
        }
    }
    # path[1] = a, ..., path[np] = last; the loop closes with last -> a.
    np = 0
    for (u = last; u != a; u = parent[u])
        np++
    np++
    i = np
    for (u = last; i >= 1; u = parent[u])
        path[i--] = u
    text = ""; names = ""
    for (i = 1; i <= np; i++) {
        v = i < np ? path[i + 1] : a
        text = text (text == "" ? "" : " and ") edge_text(path[i], v)
        names = names (names == "" ? "" : ", ") layer_text(path[i])
    }
    others = ""
    for (i = 1; i <= n; i++) {
        for (j = 1; j <= np && path[j] != w[i]; j++)
            ;
        if (j > np)
            others = others (others == "" ? "" : ", ") w[i]
    }
    text = text ": " names (np == 2 ? " call each other" : " call each other in a loop")
    if (others != "")
        text = text " (as do " others ", through them)"
    return text "; one of these calls has to go (move what both need to a lower module)"
}
' ${table:+"$layers"} "$listing"
