#!/bin/sh
# The compliance sweep as one MPI job (Open MPI's mpirun): NP ranks, each a plain process
# running its share of the cases (sweep_rank.sh); the table, in the order of the values, goes
# to stdout. No MPI call is made: mpirun only starts and places the processes, here or on the
# hosts of a --hostfile.
#
#   NP=2 N=64 FRAMES=300 sweep_mpi.sh [COMPLIANCE ...]
set -eu
here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
# shellcheck source=examples/sweep/sweep_values.sh
. "$here/sweep_values.sh"
[ $# -gt 0 ] && values=$* || values=$SWEEP_VALUES
# The ranks' lines meet in a folder under SWEEP_OUT: on several hosts it must be a shared one.
mkdir -p "${SWEEP_OUT:-out/sweep}"
dir=$(mktemp -d "${SWEEP_OUT:-out/sweep}/mpi.XXXXXX")
trap 'rm -rf "$dir"' EXIT
# Open MPI refuses to start as root unless told; containers and CI often run as root.
if [ "$(id -u)" -eq 0 ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# shellcheck disable=SC2086
mpirun -np "${NP:-2}" ${MPIRUN_ARGS:-} -x N="${N:-64}" -x FRAMES="${FRAMES:-300}" -x SWEEP_OUT="${SWEEP_OUT:-out/sweep}" \
	"$here/sweep_rank.sh" "$dir" $values
echo "$SWEEP_HEADER"
cat "$dir"/rank_*.csv | sort -t, -k1,1n | cut -d, -f2-
