# Shared by the tool's bash tests (sourced): the command line
#
#   SCRIPT BYTE_ORDER TOOL DATA_DIR [EMULATOR [ARGS...]]
#
# read into $order $tool $data $emulator and $native (c_le or c_be, the
# corpus' native-order .bin files), a scratch directory $tmp removed on
# exit, and the helpers below. Results are counted; `finish` reports them.
set -u
# `cat FILE | npyio ...` runs npyio in this shell, so that it sets $status.
shopt -s lastpipe
order=$1 tool=$2 data=$3
shift 3
emulator=("$@")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/npyio-cli.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
native=c_le
[ "$order" = BIG_ENDIAN ] && native=c_be

# The tool with stdout in $tmp/out, stderr in $tmp/err; sets $status and
# returns it.
npyio() {
    "${emulator[@]}" "$tool" "$@" >"$tmp/out" 2>"$tmp/err"
    status=$?
    return $status
}

# check OK WHAT: count a result; OK is 0 for a pass.
check() {
    if [ "$1" -eq 0 ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL $2 (exit $status): $(head -c 300 "$tmp/err")"
    fi
}

# expect_error WHAT ARGS...: exit 1 and a message naming the tool.
expect_error() {
    local what=$1
    shift
    npyio "$@"
    [ "$status" -eq 1 ] && [ "$(head -c 7 "$tmp/err")" = "npyio: " ]
    check $? "$what"
}

# wine_skips WHY: true (and the check is left out, counted as skipped)
# when the tool runs under Wine (NPYIO_TEST_WINE, set by the Windows
# build's tests/windows.cmake, which lists every such check and why).
skipped=0
wine_skips() {
    [ -n "${NPYIO_TEST_WINE:-}" ] || return 1
    skipped=$((skipped + 1))
    echo "SKIP under Wine: $1"
}

finish() {
    echo "$passed passed, $failed failed$([ "$skipped" -gt 0 ] && echo ", $skipped skipped")"
    [ "$failed" -eq 0 ]
}
