#!/bin/sh
# run_mpi.sh MPIEXEC MPI_ROWS WORKDIR PYTHON [RANKS]: mpi_rows under
# `MPIEXEC --oversubscribe -np RANKS` (4 by default; as root also
# --allow-run-as-root, as on CI machines), in both modes, each followed by
# NumPy's check of the file (tests/mpi/check_mpi.py).
set -eu
mpiexec=$1
program=$2
work=$3
python=$4
ranks=${5:-4}
here=$(cd "$(dirname "$0")" && pwd)
root=
[ "$(id -u)" -ne 0 ] || root=--allow-run-as-root
rm -rf "$work" && mkdir -p "$work"
for mode in fill append; do
    # shellcheck disable=SC2086
    "$mpiexec" $root --oversubscribe -np "$ranks" "$program" \
        "$work/$mode.npy" "$mode"
    PYTHONPATH="$here/../interop" "$python" "$here/check_mpi.py" \
        "$work/$mode.npy" "$mode" "$ranks"
done
echo "mpi OK"
