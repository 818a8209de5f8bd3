#!/bin/sh
# Files that are not files, and output that cannot be written. Every input of `pbd` (a scene, what
# a scene names, a metrics.csv to plot) that is a FIFO without a writer, /dev/zero or a directory
# is refused at once with one line on stderr and exit status 1; every command whose standard
# output cannot be written (/dev/full) exits 1 with one line saying so.
#   sh cli_files.sh <path to pbd> <scratch folder>
set -u
pbd=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1

fail() {
	echo "cli_files: $*" >&2
	exit 1
}

if ! command -v timeout >/dev/null 2>&1 || ! command -v mkfifo >/dev/null 2>&1; then
	echo "cli_files: skipped: timeout or mkfifo is missing"
	exit 77
fi

# expect_refusal WHAT REGEX pbd-arguments...: exit status 1 within 20 s (a reader that blocks on
# a FIFO is killed and fails the test instead of hanging it), stderr one line matching REGEX.
expect_refusal() {
	what=$1
	regex=$2
	shift 2
	timeout -k 5 20 "$pbd" "$@" >out.txt 2>err.txt </dev/null
	rc=$?
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		fail "$what: still reading after 20 s: pbd $*"
	fi
	[ "$rc" -eq 1 ] || fail "$what: exit status $rc, expected 1: pbd $*; stderr: $(cat err.txt)"
	[ "$(wc -l <err.txt)" -eq 1 ] || fail "$what: stderr is not one line: $(cat err.txt)"
	grep -Eq "$regex" err.txt || fail "$what: stderr does not match '$regex': $(cat err.txt)"
}

mkfifo fifo.json fifo.csv fifo.pgm fifo.obj
mkdir folder.json
zero=
[ -r /dev/zero ] && zero=/dev/zero

# The scene itself, as `pbd run` and `pbd compare` take it.
for cmd in run compare; do
	set -- -n 1 -o "out_$cmd"
	[ "$cmd" = compare ] && set -- --methods pbd,xpbd "$@"
	expect_refusal "$cmd FIFO" '^pbd: \./fifo\.json: cannot read a FIFO, only a regular file$' "$cmd" ./fifo.json "$@"
	expect_refusal "$cmd folder" '^pbd: \./folder\.json: cannot read a directory, only a regular file$' \
		"$cmd" ./folder.json "$@"
	[ -n "$zero" ] && expect_refusal "$cmd /dev/zero" '^pbd: /dev/zero: cannot read a device, only a regular file$' \
		"$cmd" /dev/zero "$@"
done

# What a scene names: an include, a height image, an OBJ mesh, a TetGen .node.
printf '{"include": ["fifo.json"]}\n' >include.json
printf '{"colliders": [{"type": "heightfield", "image": "fifo.pgm"}]}\n' >image.json
printf '{"objects": [{"type": "mesh_cloth", "obj": "fifo.obj"}]}\n' >obj.json
printf '{"objects": [{"type": "tetgen", "node": "fifo.obj", "ele": "fifo.obj"}]}\n' >tetgen.json
for s in include image obj tetgen; do
	expect_refusal "$s FIFO" 'fifo\.(json|pgm|obj): cannot read a FIFO, only a regular file$' run "$s.json" -n 1 -o "out_$s"
done
if [ -n "$zero" ]; then
	printf '{"colliders": [{"type": "heightfield", "image": "/dev/zero"}]}\n' >image_zero.json
	expect_refusal "image /dev/zero" '/dev/zero: cannot read a device, only a regular file$' run image_zero.json -n 1
fi

# The metrics.csv of `pbd plot` (refused before gnuplot is looked for).
expect_refusal "plot FIFO" '^pbd: fifo\.csv: cannot read a FIFO, only a regular file$' plot fifo.csv -o plots
[ -n "$zero" ] && expect_refusal "plot /dev/zero" '^pbd: /dev/zero: cannot read a device, only a regular file$' \
	plot /dev/zero -o plots

# Standard output that cannot be written: every command that writes to it fails, with a line
# that says so, whether the bytes were lost in a write along the way or at the last flush.
if [ -w /dev/full ]; then
	for args in "list" "list --help" "--help" "--version" "new" "run --help" "compare --help" "plot --help" \
		"run double_pendulum -n 3 -o out_full_run --format none" \
		"compare double_pendulum --methods pbd,xpbd -n 3 -o out_full_compare"; do
		# shellcheck disable=SC2086
		timeout -k 5 120 "$pbd" $args >/dev/full 2>err.txt </dev/null
		rc=$?
		[ "$rc" -eq 1 ] || fail "pbd $args >/dev/full: exit status $rc, expected 1; stderr: $(cat err.txt)"
		[ "$(wc -l <err.txt)" -eq 1 ] || fail "pbd $args >/dev/full: stderr is not one line: $(cat err.txt)"
		grep -q '^pbd: standard output: write failed' err.txt ||
			fail "pbd $args >/dev/full: unexpected message: $(cat err.txt)"
	done
	# Nothing written to stdout, nothing to fail.
	"$pbd" run double_pendulum -n 3 -o out_quiet --format none -q >/dev/full 2>err.txt ||
		fail "pbd run -q >/dev/full failed: $(cat err.txt)"
fi
echo "cli_files: FIFOs, devices and directories refused; unwritable output fails"
