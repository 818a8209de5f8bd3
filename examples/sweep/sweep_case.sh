#!/bin/sh
# One case of the compliance sweep: the built-in hanging cloth at N x N particles with the given
# structural compliance, run headless; prints one CSV line (no header) on stdout.
#
#   sweep_case.sh COMPLIANCE [N] [FRAMES]
#
# Environment: PBD (the pbd program; default build/app/pbd, then build-rel/app/pbd, then pbd
# on PATH), SWEEP_OUT (folder for the runs' files; default out/sweep).
# Columns: compliance,n,frames,substeps,final_mean_strain,final_max_strain,elastic_energy,
#          total_energy,wall_s,state_sha256
set -eu
here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
root=$(CDPATH='' cd -- "$here/../.." && pwd)
compliance=$1
n=${2:-64}
frames=${3:-300}
if [ -z "${PBD:-}" ]; then
	for p in "$root/build/app/pbd" "$root/build-rel/app/pbd"; do
		if [ -x "$p" ]; then PBD=$p; break; fi
	done
	PBD=${PBD:-pbd}
fi
out=${SWEEP_OUT:-out/sweep}/n${n}_c${compliance}
mkdir -p "$out"
# The variant: the scene file with its size, pinned corners and structural compliance replaced.
jq --argjson n "$n" --argjson c "$compliance" --arg name "sweep_n${n}_c${compliance}" \
	'.name = $name | .frames = 300
	 | .objects[0].nx = $n | .objects[0].ny = $n | .objects[0].pinned = [0, $n - 1]
	 | .objects[0].material.structural.compliance = $c' \
	"$root/scenes/hanging_cloth.json" > "$out/scene.json"
t0=$(date +%s.%N)
"$PBD" run "$out/scene.json" -n "$frames" -o "$out" --format none -q
t1=$(date +%s.%N)
substeps=$(jq '.world.substeps' "$out/scene.json")
hash=$(sha256sum "$out/state.txt" | cut -c1-16)
# metrics.csv columns: 5 elastic, 6 total energy, 10 max strain, 11 mean strain.
tail -n 1 "$out/metrics.csv" | awk -F, -v c="$compliance" -v n="$n" -v f="$frames" -v s="$substeps" \
	-v t0="$t0" -v t1="$t1" -v h="$hash" \
	'{ printf "%s,%d,%d,%d,%s,%s,%s,%s,%.3f,%s\n", c, n, f, f * s, $11, $10, $5, $6, t1 - t0, h }'
