#!/bin/sh
# The installed package is usable from a non-system prefix: C programs built against libpbd,
# libpbd_scene and pbd_render through pkg-config and through CMake's find_package start without
# LD_LIBRARY_PATH, and the installed pbd program runs an installed scene file.
# Usage: tests/consumer/check.sh BUILD_DIR (a configured and built tree); run from the source root.
set -eu
build=$(cd "$1" && pwd)
prefix="$build/stage"
out="$build/consumer"
rm -rf "$prefix" "$out"
cmake --install "$build" --prefix "$prefix" >/dev/null
mkdir -p "$out"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
unset LD_LIBRARY_PATH

echo "--- pkg-config"
# shellcheck disable=SC2046
cc -std=c17 tests/consumer/main.c $(pkg-config --cflags --libs pbd) -lm -o "$out/consumer_pc"
"$out/consumer_pc"
# shellcheck disable=SC2046
cc -std=c17 tests/consumer/scene_main.c $(pkg-config --cflags --libs pbd-scene) -lm -o "$out/scene_pc"
"$out/scene_pc"
if pkg-config --exists pbd-render; then
	# shellcheck disable=SC2046
	cc -std=c17 tests/consumer/render_main.c $(pkg-config --cflags --libs pbd-render pbd-scene) -o "$out/render_pc"
	"$out/render_pc"
fi

echo "--- CMake find_package"
cmake -S tests/consumer -B "$out/cmake" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$out/cmake" >/dev/null
"$out/cmake/consumer"
"$out/cmake/consumer_scene"
if [ -x "$out/cmake/consumer_render" ]; then "$out/cmake/consumer_render"; fi

echo "--- installed program and scenes"
"$prefix/bin/pbd" list >/dev/null
"$prefix/bin/pbd" run "$prefix/share/pbd/scenes/cloth_on_terrain.json" -n 2 --format none -o "$out/run" -q
pydir=$(find "$prefix" -path '*/dist-packages/pbd/__init__.py' 2>/dev/null | head -n 1)
if [ -n "$pydir" ]; then
	echo "--- import pbd from the installed tree"
	PYTHONPATH=$(dirname "$(dirname "$pydir")") /usr/bin/python3 -c '
import pbd
w = pbd.World.from_builtin("hanging_cloth")
y0 = float(w.positions[:, 1].mean())
w.step(30)
y1 = float(w.positions[:, 1].mean())
print(f"python: pbd {pbd.version} ({pbd.precision}) from {pbd.__file__}: mean height {y0:.4f} -> {y1:.4f} m")
assert y1 < y0
'
fi
echo "install check passed"
