# shellcheck shell=sh disable=SC2154 # max, allow_form, usage_args: the caller's
# length_args.sh - the command line of the length checks
# (check_function_length.sh, check_file_length.sh), which source it:
#
#   CHECK [--max N] [--allow ALLOWANCE]... PATH...
#
# Set before sourcing: max (the default limit), allow_form (a case pattern
# each ALLOWANCE must match) and usage_args (the usage line after the
# check's name). Sets max, allow (the allowances, each after a blank) and
# files (the C sources and headers of the PATHs: files, or directories
# searched for *.c and *.h, subfolders included; each after a blank). A
# bad command line exits 2 with the usage line, naming the check ($0).

check_name=${0##*/}

usage() {
    echo "usage: $check_name $usage_args" >&2
    exit 2
}

allow=
while [ $# -gt 0 ]; do
    case $1 in
    --max)
        [ $# -ge 2 ] || usage
        max=$2
        shift 2
        ;;
    --allow)
        [ $# -ge 2 ] || usage
        # shellcheck disable=SC2254 # allow_form is a pattern
        case $2 in $allow_form) ;; *) usage ;; esac
        allow="$allow $2"
        shift 2
        ;;
    --) shift; break ;;
    -*) usage ;;
    *) break ;;
    esac
done
[ $# -ge 1 ] || usage
case $max in '' | *[!0-9]*) usage ;; esac

files=
for p in "$@"; do
    if [ -d "$p" ]; then
        # Sorted, so that the report reads the same on every system.
        files="$files $(find "$p" -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort | tr '\n' ' ')"
    elif [ -f "$p" ]; then
        files="$files $p"
    else
        echo "$check_name: no such file or directory: $p" >&2
        exit 2
    fi
done
[ -n "${files# }" ] || { echo "$check_name: no C sources in $*" >&2; exit 2; }
