#!/bin/sh
# Builds the libFuzzer targets of fuzz/ (clang, -DPBD_FUZZ=ON, in build-fuzz/ or $PBD_FUZZ_BUILD)
# and runs each for SECONDS (default 30) from a fresh copy of its seed corpus, after replaying
# the saved reproducers in fuzz/regressions/<target>/. A crash, a sanitizer report, a leak, a
# broken check or a timeout fails the script and leaves the input under <build>/work/<target>/.
# Without clang's libFuzzer runtime it says it skipped and exits 0. See docs/fuzzing.md.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]          each target for SECONDS
#   scripts/fuzz.sh --total SECONDS [TARGET...]    SECONDS in all, shared evenly among the targets
#
# TARGET is a name of fuzz/fuzz_<name>.c (scene, obj, tet, step, ...); the default is every
# target the build made.
set -eu
cd "$(dirname "$0")/.."
total=""
if [ "${1:-}" = "--total" ]; then
	if [ $# -lt 2 ]; then
		echo "fuzz: --total needs a number of seconds" >&2
		exit 2
	fi
	total=$2
	shift 2
else
	seconds=${1:-30}
	[ $# -gt 0 ] && shift
fi
case "${total:-$seconds}" in
'' | *[!0-9]*)
	echo "fuzz: the time must be a whole number of seconds (got '${total:-$seconds}')" >&2
	exit 2
	;;
esac
targets=$*
build=${PBD_FUZZ_BUILD:-build-fuzz}
rss_mb=${PBD_FUZZ_RSS_MB:-3072}
# No single allocation may exceed 1 GiB: a larger request is a finding (a size read from the input).
malloc_mb=${PBD_FUZZ_MALLOC_MB:-1024}

probe=$(mktemp -d)
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t* d, size_t n);\nint LLVMFuzzerTestOneInput(const uint8_t* d, size_t n) { return d && n ? 0 : 0; }\n' >"$probe/probe.c"
if ! command -v clang >/dev/null 2>&1 ||
	! clang -fsanitize=fuzzer,address,undefined "$probe/probe.c" -o "$probe/probe" >/dev/null 2>&1; then
	rm -rf "$probe"
	echo "fuzz: skipped: clang with libFuzzer not found (Debian packages clang and libclang-rt-dev)"
	exit 0
fi
rm -rf "$probe"

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
	-DPBD_FUZZ=ON -DPBD_WERROR=ON -DPBD_BUILD_TESTS=OFF -DPBD_BUILD_BENCH=OFF -DPBD_BUILD_EXAMPLES=OFF \
	-DPBD_BUILD_RENDER=OFF -DPBD_BUILD_VIEWER=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target pbd_fuzz
if [ -z "$targets" ]; then
	targets=$(for f in "$build"/fuzz/fuzz_*; do [ -f "$f" ] && [ -x "$f" ] && basename "$f"; done | sed 's/^fuzz_//')
fi
if [ -n "$total" ]; then
	count=$(echo "$targets" | wc -w)
	seconds=$((total / count))
	[ "$seconds" -ge 1 ] || seconds=1
	echo "fuzz: ${total} s shared among $count targets ($(printf '%s\n' "$targets" | tr '\n' ' ' | sed 's/ $//')): ${seconds} s each"
fi

for t in $targets; do
	bin="$build/fuzz/fuzz_$t"
	work="$build/work/$t"
	rm -rf "$work"
	mkdir -p "$work/corpus"
	# Inputs that once failed must keep passing: libFuzzer runs files given by name once each.
	if [ -d "fuzz/regressions/$t" ] && [ -n "$(ls "fuzz/regressions/$t")" ]; then
		if ! "$bin" -rss_limit_mb="$rss_mb" -malloc_limit_mb="$malloc_mb" -timeout=60 "fuzz/regressions/$t"/* >"$work/regressions.log" 2>&1; then
			tail -n 40 "$work/regressions.log"
			echo "fuzz: fuzz_$t fails on a saved reproducer in fuzz/regressions/$t/"
			exit 1
		fi
	fi
	cp "fuzz/corpus/$t"/* "$work/corpus/"
	dict=""
	[ -f "fuzz/$t.dict" ] && dict="-dict=fuzz/$t.dict"
	# shellcheck disable=SC2086
	if ! "$bin" -max_total_time="$seconds" -rss_limit_mb="$rss_mb" -malloc_limit_mb="$malloc_mb" -timeout=60 -print_final_stats=1 $dict \
		-artifact_prefix="$work/" "$work/corpus" </dev/null >"$work/log" 2>&1; then
		tail -n 60 "$work/log"
		echo "fuzz: fuzz_$t failed; the input is in $work/ (crash-*, leak-*, timeout-* or oom-*)"
		exit 1
	fi
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
	edges=$(grep -o 'cov: [0-9]*' "$work/log" | tail -n 1 | sed 's/cov: //')
	echo "fuzz: fuzz_$t: ${seconds} s, ${runs:-?} inputs, ${edges:-?} edges, no failure (corpus $(ls "$work/corpus" | wc -l) files)"
done
