#!/bin/sh
# check_function_length.sh [--max N] [--allow FILE:FUNCTION]... PATH...
#
# No function body in the C sources under PATH (files, or directories
# searched for *.c and *.h, subfolders included) is longer than N lines
# (60 unless --max says otherwise). The sources keep one layout, which this
# relies on: a function's body opens with a "{" at column 0 after its header
# and closes with the next "}" at column 0 (the braces inside a body are
# indented); the lines between the two are the body's length. A "{" at
# column 0 that follows no function header (a struct, an initializer) is no
# function.
#
# --allow FILE:FUNCTION lets one known long function pass (FILE is the
# path, or its trailing part from a "/" on, as in src/platform.c); an
# allowance that matches no long function is reported as unused, so that
# it is removed once the function is split, but does not fail the check.
#
# Prints "FUNCTION TOO LONG: file:line name N lines" for each function over
# the limit and exits 1; otherwise "function lengths OK: N functions,
# longest M lines (file:name)" (the longest not allowed) and exits 0.
set -eu

max=60
allow_form='*?:?*'
usage_args="[--max N] [--allow FILE:FUNCTION]... PATH..."
# shellcheck source=length_args.sh source-path=SCRIPTDIR
. "$(dirname "$0")/length_args.sh"

# shellcheck disable=SC2086 # the paths have no blanks: split them
awk -v max="$max" -v allow="$allow" '
# The header of a function is the run of lines before its "{": it starts
# after the last blank line, preprocessor line, comment line, end of a
# statement, or closing brace at column 0 (a comment after the code of a
# line is part of the header).
function starts_over(line) {
    return line ~ /^[ \t]*$/ || line ~ /^#/ ||
           line ~ /^[ \t]*(\/\*|\*|\/\/)/ || line ~ /;[ \t]*$/ ||
           line ~ /^}/
}
# The function named by a header: the identifier before its first "(";
# "" when the header names none (a struct, an array initializer).
function name_of(text,    head) {
    if (index(text, "(") == 0)
        return ""
    head = substr(text, 1, index(text, "(") - 1)
    if (head ~ /=/)
        return ""
    sub(/[ \t]+$/, "", head)
    if (!match(head, /[A-Za-z_][A-Za-z_0-9]*$/))
        return ""
    return substr(head, RSTART, RLENGTH)
}
# Whether FILE:NAME is allowed; marks the allowance used.
function allowed(file, name,    i, f, fn) {
    for (i = 1; i <= nallow; i++) {
        f = allow_list[i]
        fn = f
        sub(/:[^:]*$/, "", f)
        sub(/^.*:/, "", fn)
        if (fn == name && (file == f || substr(file, length(file) - length(f)) == "/" f)) {
            used[i] = 1
            return 1
        }
    }
    return 0
}
BEGIN {
    nallow = split(allow, allow_list, " ")
}
FNR == 1 {
    header = ""
    name = ""
}
/^\{/ {
    name = name_of(header)
    start = FNR
    header = ""
    next
}
/^}/ && name != "" {
    n = FNR - start - 1
    count++
    if (n > max && !allowed(FILENAME, name)) {
        print "FUNCTION TOO LONG: " FILENAME ":" start " " name " " n " lines"
        failed = 1
    } else if (n > max) {
        allowed_text = allowed_text " " FILENAME ":" name " (" n " lines)"
    } else if (n > longest) {
        longest = n
        longest_at = FILENAME ":" name
    }
    name = ""
    header = ""
    next
}
name == "" {
    header = starts_over($0) ? "" : header " " $0
}
END {
    for (i = 1; i <= nallow; i++)
        if (!(i in used))
            print "note: unused allowance " allow_list[i] " (no such function over " max " lines): remove it"
    if (failed)
        exit 1
    if (allowed_text != "")
        print "allowed over " max " lines:" allowed_text
    print "function lengths OK: " count " functions, longest " longest \
          " lines (" longest_at ")"
}
' $files
