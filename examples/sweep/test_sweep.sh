#!/bin/sh
# The ctest of the sweep: two tiny cases under GNU parallel with one job and with two; the
# tables must agree in every column but the wall time (each run is one single-threaded process,
# bit-identical wherever and alongside whatever it runs).
set -eu
here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
export N=8 FRAMES=10
JOBS=1 "$here/sweep_parallel.sh" 0 1e-3 > sweep_j1.csv
JOBS=2 "$here/sweep_parallel.sh" 0 1e-3 > sweep_j2.csv
[ "$(wc -l < sweep_j1.csv)" -eq 3 ] || { echo "expected a header and 2 lines:"; cat sweep_j1.csv; exit 1; }
cut -d, -f1-8,10 sweep_j1.csv > a.csv
cut -d, -f1-8,10 sweep_j2.csv > b.csv
if ! cmp -s a.csv b.csv; then echo "-j1 and -j2 differ:"; diff a.csv b.csv; exit 1; fi
echo "sweep: 2 cases, -j1 and -j2 identical"
