#!/bin/sh
# Prints the final state hash of every built-in scene after FRAMES frames (default 30) for each
# thread count and SIMD kernel, one line per run: "scene threads simd hash". Two builds that must
# agree bit for bit (a refactor, another compiler flag that claims to change nothing) are compared
# by diffing their outputs.
#
#   scripts/scene_hashes.sh PBD_PROGRAM [FRAMES] > hashes.txt
set -eu
pbd=$1
frames=${2:-30}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for scene in $("$pbd" list | awk '{print $1}'); do
	for threads in 1 2; do
		for simd in scalar avx2 avx512; do
			if "$pbd" run "$scene" -n "$frames" --threads "$threads" --simd "$simd" -o "$out/run" >"$out/log" 2>&1; then
				hash=$(sed -n 's/^# hash //p' "$out/run/state.txt")
			else
				hash="failed($(tail -n 1 "$out/log" | tr ' ' '_'))"
			fi
			echo "$scene $threads $simd $hash"
			rm -rf "$out/run"
		done
	done
done
