#!/bin/sh
# Builds pbd (Release) and runs the default scene, the Games103 cloth draped on a sphere.
# Frames land in out/cloth_sphere/ as Wavefront OBJ files, with metrics.csv and state.txt.
# Extra arguments go to `pbd run`, e.g. scripts/run.sh double_pendulum -n 500
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)"
./build/app/pbd run "$@"
