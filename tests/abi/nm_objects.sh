# shellcheck shell=sh
# nm_objects.sh - the objects' symbols for the checks that read compiled
# objects (check_layer_symbols.sh, check_internal_calls.sh), which source
# it and call
#
#   nm_objects LISTING SCRATCH OBJECT...
#
# Each OBJECT argument may hold several objects, separated by ';' (CMake's
# $<TARGET_OBJECTS:...>; paths may have blanks). Appends every external
# symbol of every object to LISTING as "OBJECT<tab>NAME<tab>TYPE" (nm -P:
# "name type value size"), so that awk needs no nm of its own; SCRATCH is
# a file it may overwrite. Sets nobjects to their number. A missing object
# or a failing nm exits 2, naming the check ($0). NM (environment) is the
# nm to use (a cross build's).

nm_objects() {
    _listing=$1
    _scratch=$2
    shift 2
    nobjects=0
    for _arg in "$@"; do
        # Split on ';' only, without globbing.
        _old_ifs=$IFS
        IFS=';'
        set -f
        for _obj in $_arg; do
            IFS=$_old_ifs
            [ -n "$_obj" ] || continue
            if [ ! -f "$_obj" ]; then
                echo "${0##*/}: no object $_obj" >&2
                exit 2
            fi
            # Not in a pipe: a failing nm must fail the check, not empty it.
            if ! "${NM:-nm}" -P -g "$_obj" >"$_scratch"; then
                echo "${0##*/}: ${NM:-nm} failed on $_obj" >&2
                exit 2
            fi
            awk -v obj="$_obj" 'NF >= 2 { print obj "\t" $1 "\t" $2 }' \
                "$_scratch" >>"$_listing"
            nobjects=$((nobjects + 1))
        done
        set +f
        IFS=$_old_ifs
    done
}
