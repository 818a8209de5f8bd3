#!/bin/sh
# SIGINT and SIGTERM during `pbd run`: the run stops after the frame it is on, with metrics.csv
# and state.txt whole up to that frame, says so in one line on stderr and exits with 130 / 143.
#   sh cli_signal.sh <path to pbd> <scratch folder>
set -u
pbd=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1

fail() {
	echo "cli_signal: $*" >&2
	exit 1
}

# A background job of a shell script starts with SIGINT ignored, which pbd respects; env
# --default-signal (GNU coreutils 8.31 and later) puts back the default for it.
if ! env --default-signal=INT,TERM true 2>/dev/null; then
	echo "cli_signal: skipped: env --default-signal is missing (GNU coreutils 8.31 or later)"
	exit 77
fi

for sig in INT TERM; do
	dir=run_$sig
	# Far more frames than it will get through: only the signal ends it.
	env --default-signal=INT,TERM "$pbd" run hanging_cloth -n 100000000 --format none --max-output 0 -o "$dir" -q \
		2>"$sig.err" &
	pid=$!
	# Until a few rows have reached the file (they arrive a buffer at a time), at most 120 s.
	tries=0
	while [ "$(cat "$dir/metrics.csv" 2>/dev/null | wc -l)" -lt 5 ]; do
		kill -0 "$pid" 2>/dev/null || fail "$sig: pbd ended before the signal: $(cat "$sig.err")"
		tries=$((tries + 1))
		if [ "$tries" -gt 1200 ]; then
			kill -9 "$pid"
			fail "$sig: no metrics rows after 120 s"
		fi
		sleep 0.1
	done
	kill -s "$sig" "$pid"
	# It has a frame to finish, then the files: 60 s at most.
	tries=0
	while kill -0 "$pid" 2>/dev/null; do
		tries=$((tries + 1))
		if [ "$tries" -gt 600 ]; then
			kill -9 "$pid"
			fail "$sig: still running 60 s after the signal"
		fi
		sleep 0.1
	done
	wait "$pid"
	rc=$?
	want=130
	[ "$sig" = TERM ] && want=143
	[ "$rc" -eq "$want" ] || fail "$sig: exit status $rc, expected $want; stderr: $(cat "$sig.err")"

	# One line, naming the frame the files end at.
	[ "$(wc -l <"$sig.err")" -eq 1 ] || fail "$sig: stderr is not one line: $(cat "$sig.err")"
	frame=$(sed -n "s/^pbd: hanging_cloth: interrupted by SIG$sig at frame \([0-9][0-9]*\) of 100000000; .*metrics\.csv and state\.txt are complete up to it\$/\1/p" "$sig.err")
	[ -n "$frame" ] || fail "$sig: unexpected message: $(cat "$sig.err")"

	# metrics.csv: ends with a newline, every row whole (26 fields), one row per frame 0..frame.
	[ "$(tail -c 1 "$dir/metrics.csv" | od -An -c | tr -d ' ')" = '\n' ] || fail "$sig: metrics.csv is cut mid-line"
	awk -F, 'NF != 26 { bad = 1 } END { exit bad }' "$dir/metrics.csv" || fail "$sig: metrics.csv has a partial row"
	rows=$(wc -l <"$dir/metrics.csv")
	[ "$rows" -eq $((frame + 2)) ] || fail "$sig: metrics.csv has $rows lines for frames 0..$frame"
	last=$(tail -n 1 "$dir/metrics.csv" | cut -d, -f1)
	[ "$last" = "$frame" ] || fail "$sig: metrics.csv ends at frame $last, the message says $frame"

	# state.txt: that frame, every particle.
	[ -f "$dir/state.txt" ] || fail "$sig: no state.txt"
	grep -qx "# frame $frame" "$dir/state.txt" || fail "$sig: state.txt is not at frame $frame"
	particles=$(sed -n 's/^# particles //p' "$dir/state.txt")
	lines=$(grep -vc '^#' "$dir/state.txt")
	[ "$particles" = 1024 ] && [ "$lines" -eq 1024 ] || fail "$sig: state.txt has $lines of $particles particles"
done
echo "cli_signal: SIGINT and SIGTERM runs ended whole"
