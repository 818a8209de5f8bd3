#!/bin/sh
# The compliance sweep under GNU parallel: one process per case, JOBS at a time; the table
# (header + one line per case, in the order of the values) goes to stdout.
#
#   JOBS=2 N=64 FRAMES=300 sweep_parallel.sh [COMPLIANCE ...]
set -eu
here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
# shellcheck source=examples/sweep/sweep_values.sh
. "$here/sweep_values.sh"
[ $# -gt 0 ] && values=$* || values=$SWEEP_VALUES
echo "$SWEEP_HEADER"
# shellcheck disable=SC2086
parallel --will-cite --halt now,fail=1 --keep-order -j "${JOBS:-2}" \
	"$here/sweep_case.sh" {} "${N:-64}" "${FRAMES:-300}" ::: $values
