#!/bin/sh
# Installs what pbd needs to build, test and benchmark on Debian 12. Idempotent: packages that
# are already present are not touched, and nothing is fetched when all are there.
set -eu

# Rendering (pbd_render, `pbd run --render`): the GL loader, EGL and GL headers, stb for PNG,
# ffmpeg for videos, and Mesa's drivers (llvmpipe draws without a GPU or an X server). The
# viewer (`pbd view`): GLFW, and Xvfb with xauth to run it in tests without a display.
# Fuzzing (scripts/fuzz.sh): clang's libFuzzer and sanitizer runtimes are in libclang-rt-dev,
# which clang only recommends, so an install without recommends lacks -fsanitize=fuzzer.
# The Python module (import pbd): Debian's python3 with its headers, NumPy, pytest for its tests
# and matplotlib for the example sweep; python3's standard library also reads back the USD and
# VTK files of the output tests.
PACKAGES="cmake make gcc g++ clang libclang-rt-dev pkg-config libcjson-dev libcmocka-dev libbullet-dev gnuplot-nox
libepoxy-dev libegl-dev libgl-dev libstb-dev ffmpeg libgl1-mesa-dri libegl-mesa0 libglx-mesa0
libglfw3-dev xvfb xauth python3 python3-dev python3-numpy python3-pytest python3-matplotlib"

missing=""
for p in $PACKAGES; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done

if [ -z "$missing" ]; then
	echo "install-deps: all packages present"
	exit 0
fi

echo "install-deps: installing$missing"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing
