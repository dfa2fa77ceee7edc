#!/usr/bin/env bash
# smoke.sh - `make sim-smoke`: two identical jobs (100 ms compute, 100 ms of
# communication alone: communication fraction 0.5) start together on a
# 1 Gbit/s dumbbell for 10 iterations, once with reno, once with mltcp; then
# the same pair with dcqcn and mltcp_dcqcn at 10 Gbit/s with time scale 0.1
# (10 ms + 10 ms: the same packet count; DCQCN's 55 us timers need packet
# times well below them).
#
# Bounds: fully overlapped under fair sharing, each phase takes twice as
# long, so an iteration takes 100 + 200 ms = 1.5x its isolated time;
# perfectly interleaved it takes 1.0x.  MLTCP starts from the overlapped
# state (d = 0 is its unstable fixed point) and needs a few iterations to
# drift apart, so the mean over iterations 2..9 lies between: it must stay
# below 1.25 (half-way) and the schedule must become interleaved, while the
# base must stay above 1.30 and never interleave (the problem MLTCP exists
# for).
# The simulation is deterministic: these are exact, not noisy, figures.
# usage: smoke.sh <path to mltcp-sim>
set -euo pipefail
sim=${1:?usage: smoke.sh <mltcp-sim>}
MLTCP_MAX=1.25
RENO_MIN=1.30
start=$(date +%s.%N)

run() {  # run <cc> [args] -> RESULT line
	"$sim" --cc "$@" --profile-mix testbed:2 --iterations 10 --quiet
}
field() {  # field <line> <key>
	sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<"$1"
}

fail=0
check_pair() {  # check_pair <base RESULT> <mltcp RESULT>
	local base=$1 ml=$2 bn mn
	if [[ -z $base || -z $ml ]]; then
		echo "FAIL: a simulation run failed (see its message above)"; fail=1; return
	fi
	bn=$(field "$base" cc)
	mn=$(field "$ml" cc)
	echo "$base"
	echo "$ml"
	awk -v r="$(field "$ml" mean_ratio)" -v b=$MLTCP_MAX 'BEGIN { exit !(r < b) }' ||
		{ echo "FAIL: $mn mean_ratio $(field "$ml" mean_ratio) >= $MLTCP_MAX"; fail=1; }
	[[ $(field "$ml" interleaved_at) != none ]] ||
		{ echo "FAIL: $mn never interleaved"; fail=1; }
	awk -v r="$(field "$base" mean_ratio)" -v b=$RENO_MIN 'BEGIN { exit !(r > b) }' ||
		{ echo "FAIL: $bn mean_ratio $(field "$base" mean_ratio) <= $RENO_MIN (the scenario does not show the problem)"; fail=1; }
	[[ $(field "$base" interleaved_at) == none ]] ||
		{ echo "FAIL: $bn interleaved: the scenario does not show the problem"; fail=1; }
	summary+="$mn $(field "$ml" mean_ratio) (interleaved at $(field "$ml" interleaved_at)) vs $bn $(field "$base" mean_ratio); "
}
summary=""
check_pair "$(run reno --link-gbps 1)" "$(run mltcp --link-gbps 1)"
check_pair "$(run dcqcn --link-gbps 10 --time-scale 0.1)" "$(run mltcp_dcqcn --link-gbps 10 --time-scale 0.1)"
elapsed=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
((fail == 0)) || exit 1
echo "sim-smoke: mean ratios ${summary}bounds < $MLTCP_MAX and > $RENO_MIN; ${elapsed} s"
