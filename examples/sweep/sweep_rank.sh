#!/bin/sh
# Run by every rank of an MPI job (mpirun -np P sweep_rank.sh OUTDIR VALUES...): rank r of P
# runs cases r, r + P, r + 2P ... and writes their lines, prefixed by the case's index, to
# OUTDIR/rank_<r>.csv. Open MPI and MPICH both name the rank and size in the environment.
set -eu
here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
dir=$1
shift
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
size=${OMPI_COMM_WORLD_SIZE:-${PMI_SIZE:-1}}
: > "$dir/rank_$rank.csv"
i=0
for c in "$@"; do
	if [ $((i % size)) -eq "$rank" ]; then
		printf '%d,%s\n' "$i" "$("$here/sweep_case.sh" "$c" "${N:-64}" "${FRAMES:-300}")" >> "$dir/rank_$rank.csv"
	fi
	i=$((i + 1))
done
