#!/bin/sh
# Builds pbd and runs every test in the configurations CI requires: gcc Release, gcc Debug
# with AddressSanitizer + UndefinedBehaviorSanitizer, clang Release, the threaded tests under
# ThreadSanitizer, and clang in double precision. Warnings are errors in all of them. Then the fuzz targets share 180 s.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
jobs=$(nproc)

# Formatting is part of the build: the sources must match .clang-format.
if command -v clang-format >/dev/null 2>&1; then
	echo "=== clang-format"
	clang-format --dry-run --Werror src/*/*.c src/*/*.h include/pbd/*.h scene/*.c scene/*.h app/*.c app/*.h ui/*.c ui/*.h bench/*.c bench/*.h \
		bench/*.cpp tests/*.c tests/*.h examples/*.c tests/consumer/*.c viewer/*.c viewer/*.h render/*.c render/*.h \
		soak/*.c soak/*.h fuzz/*.c fuzz/*.h python/*.c
fi

run_config() {
	dir=$1
	shift
	echo "=== $dir: $*"
	cmake -S . -B "$dir" -DPBD_WERROR=ON "$@"
	cmake --build "$dir" -j "$jobs"
	(cd "$dir" && ctest --output-on-failure -j "$jobs")
}

run_config build-ci-release -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++
run_config build-ci-asan -DCMAKE_BUILD_TYPE=Debug -DPBD_SANITIZE=ON -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++
run_config build-ci-clang -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
# ThreadSanitizer over the threaded tests: the pool, the stages and every built-in scene on 1 to 8 threads.
echo "=== build-ci-tsan"
cmake -S . -B build-ci-tsan -DPBD_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPBD_SANITIZE_THREAD=ON \
	-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
cmake --build build-ci-tsan -j "$jobs" --target test_threads test_determinism
(cd build-ci-tsan && ctest --output-on-failure -R '^(threads.*|determinism)$')
run_config build-ci-clang-double -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPBD_DOUBLE=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++

# The install must give a usable package: the three libraries with their headers, pkg-config and
# CMake files, the program and the scenes, usable from a non-system prefix.
echo "=== install"
tests/consumer/check.sh build-ci-release
# Fuzzing: 180 s shared evenly among the libFuzzer targets, each from its seed corpus
# (docs/fuzzing.md). A crash fails CI; without clang's libFuzzer the script says it skipped.
echo "=== fuzz"
PBD_FUZZ_BUILD=build-ci-fuzz ./scripts/fuzz.sh --total 180
echo "all configurations passed"
