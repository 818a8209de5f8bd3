#!/bin/sh
# Builds pbd and runs its tests. Warnings are errors in every build.
#
#   scripts/test.sh         what CI runs (.ci/run): the clang-format check; gcc Release with every
#                           part (the benchmark with its Bullet peer, the renderer, the viewer, the
#                           Python module) and every test; gcc Debug (-O1) with AddressSanitizer and
#                           UndefinedBehaviorSanitizer, clang Release with every part (its unit
#                           tests), the threaded tests under ThreadSanitizer and clang in double
#                           precision, each of these without the tests labelled `slow` (the
#                           built-in scenes on every thread count and SIMD kernel, which gcc
#                           Release and ThreadSanitizer run, and which the short soak steps under
#                           the sanitizers too), the sanitizer and
#                           double builds without the benchmark, renderer and viewer; the install
#                           check; and, beside those, the fuzz targets for 60 s in all. Every
#                           configuration runs the tests of the built-in scenes at their short
#                           length (PBD_TEST_SHORT=1; `PBD_TEST_SHORT=0 ctest -L slow` in a build
#                           directory runs them at full length).
#   scripts/test.sh --fast  the clang-format check, one incremental Release build in build-fast/
#                           (or $PBD_FAST_BUILD) without the benchmark, renderer, viewer and Python
#                           module, and every test of it not labelled `slow`.
#
# Every test carries ctest labels (tests/CMakeLists.txt): unit, scene, cli, threads, soak,
# example, package, bench, render, view, python, and slow for the few that run longest; in any
# build directory `ctest -L scene` or `ctest -LE slow` runs a part by hand.
set -eu
cd "$(dirname "$0")/.."

usage() {
	echo "usage: scripts/test.sh [--fast]" >&2
	exit 2
}
fast=false
case $# in
0) ;;
1)
	[ "$1" = --fast ] || usage
	fast=true
	;;
*) usage ;;
esac

./scripts/install-deps.sh
jobs=$(nproc)

# Formatting is part of the build: the sources must match .clang-format.
if command -v clang-format >/dev/null 2>&1; then
	echo "=== clang-format"
	find src include scene app ui bench tests examples viewer render soak fuzz python -type f \
		\( -name '*.c' -o -name '*.h' -o -name '*.cpp' \) -exec clang-format --dry-run --Werror {} +
fi

# The parts whose tests only the Release configurations run: the sanitizer and double builds
# leave them out.
lean="-DPBD_BUILD_BENCH=OFF -DPBD_BUILD_RENDER=OFF -DPBD_BUILD_VIEWER=OFF"

# PBD_TEST_SHORT=1 gives the tests of every built-in scene (threads_scenes_*, simd) their short
# length.
short=1
# --timeout bounds the tests that set no TIMEOUT of their own: a hang fails the run instead of
# holding it.
run_ctest() {
	dir=$1
	shift
	(cd "$dir" && PBD_TEST_SHORT=$short ctest --output-on-failure -j "$jobs" --timeout 600 "$@")
}

# run_config DIR [CMAKE ARGS...]: configures, builds and tests; $ctest_args are passed to ctest.
ctest_args=""
run_config() {
	dir=$1
	shift
	echo "=== $dir: $* $ctest_args"
	cmake -S . -B "$dir" -DPBD_WERROR=ON "$@"
	cmake --build "$dir" -j "$jobs"
	# shellcheck disable=SC2086
	run_ctest "$dir" $ctest_args
}

if $fast; then
	# Incremental: after a change to one file this recompiles it and relinks what uses it.
	dir=${PBD_FAST_BUILD:-build-fast}
	echo "=== $dir"
	# shellcheck disable=SC2086
	cmake -S . -B "$dir" --log-level=WARNING -DPBD_WERROR=ON -DCMAKE_BUILD_TYPE=Release $lean -DPBD_BUILD_PYTHON=OFF
	cmake --build "$dir" -j "$jobs"
	run_ctest "$dir" -LE slow
	echo "fast tests passed (scripts/test.sh without --fast runs every configuration)"
	exit 0
fi

run_config build-ci-release -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++
# The other configurations leave out what gcc Release has just run at length.
ctest_args="-LE slow"
# The fuzz targets (docs/fuzzing.md) share 60 s, one process at a time, so they run beside the
# next configurations on the core those leave free; their log is shown at the end. A crash fails
# CI; without clang's libFuzzer the script says it skipped. In a process group of their own
# (setsid), they are ended with the script if a configuration fails first.
mkdir -p build-ci-fuzz
echo "=== fuzz: started beside the next configurations (build-ci-fuzz/fuzz.log)"
PBD_FUZZ_BUILD=build-ci-fuzz setsid -w ./scripts/fuzz.sh --total 60 >build-ci-fuzz/fuzz.log 2>&1 &
fuzz=$!
trap 'kill -- "-$fuzz" 2>/dev/null || kill "$fuzz" 2>/dev/null || true' EXIT
trap 'exit 130' INT TERM
# Debug keeps the assertions; -O1, as the sanitizers' manuals advise, runs the tests 4 to 5 times
# faster than -O0; -g1 (line tables) is what the sanitizers' reports need.
# shellcheck disable=SC2086
run_config build-ci-asan -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-g1 -O1" -DPBD_SANITIZE=ON \
	-DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ $lean
# clang: every part built, to hold its warnings too, and the unit tests run (the scenes, programs
# and packages are gcc Release's and the sanitizers').
ctest_args="-L unit -LE slow"
run_config build-ci-clang -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
ctest_args="-LE slow"
# The optimised builds with debugging information keep line tables only (-g1): what a sanitizer's
# report or a backtrace needs, and a shorter build.
relg1="-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
# ThreadSanitizer over the tests labelled `threads`: the pool, the stages, every built-in scene on
# 1 to 8 threads, attachments to a rigid body on 1 to 3, and the soft step's colours on 1 to 3.
# Only their programs are built (a test labelled `threads` needs its program in this list).
echo "=== build-ci-tsan"
# shellcheck disable=SC2086
cmake -S . -B build-ci-tsan -DPBD_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo "$relg1" -DPBD_SANITIZE_THREAD=ON \
	-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ $lean -DPBD_BUILD_EXAMPLES=OFF -DPBD_BUILD_SOAK=OFF
cmake --build build-ci-tsan -j "$jobs" --target test_threads test_determinism test_body_attachment test_joint test_sleep \
	test_contact_events test_soft_step test_avbd
run_ctest build-ci-tsan -L threads
# shellcheck disable=SC2086
run_config build-ci-clang-double -DCMAKE_BUILD_TYPE=RelWithDebInfo "$relg1" -DPBD_DOUBLE=ON -DCMAKE_C_COMPILER=clang \
	-DCMAKE_CXX_COMPILER=clang++ $lean

# The install must give a usable package: the three libraries with their headers, pkg-config and
# CMake files, the program and the scenes, usable from a non-system prefix.
echo "=== install"
tests/consumer/check.sh build-ci-release
echo "=== fuzz"
fuzz_status=0
wait "$fuzz" || fuzz_status=$?
trap - EXIT INT TERM
cat build-ci-fuzz/fuzz.log
if [ "$fuzz_status" -ne 0 ]; then
	echo "fuzz failed (exit status $fuzz_status)"
	exit 1
fi
echo "all configurations passed"
