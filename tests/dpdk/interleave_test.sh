#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# interleave_test.sh - two emulated training jobs (mltcp-dpdk emu, profile
# tests/dpdk/interleave.prof) share the bottleneck of mltcp-dpdk-switch
# (300 Mbit/s, 128 KiB buffer, RED-style ECN marking 16-64 KiB, P_max 0.2),
# all in userspace over net_memif.  For each congestion control the script
# measures one job alone (isolated iteration time), then two jobs started
# together for 80 iterations, and reports each job's mean iteration time
# over the last 20 divided by the isolated one.  Pairs: reno vs mltcp,
# dcqcn vs mltcp_dcqcn.  (Measured here: MLTCP drives the two jobs apart
# but host noise can pull them back for a while, and it took up to ~30
# iterations to settle interleaved; the base algorithms random-walk, ending
# anywhere between 1.08 and 1.4.)
#
# usage: interleave_test.sh CMAKE_BUILD_DIR [cc ...]      (as root)
# env:   MLTCP_DPDK_ITERS (80), MLTCP_DPDK_WARMUP (60), MLTCP_DPDK_CHECK=1 to
#        fail unless each MLTCP mode interleaves (see below);
#        MLTCP_DPDK_REQUIRE_MARKS=1 to fail unless the dcqcn modes' packets were
#        CE-marked and answered with CNPs (the functional run in make check).
set -euo pipefail
BUILD=${1:?usage: interleave_test.sh CMAKE_BUILD_DIR [cc ...]}
shift
CCS=${*:-reno mltcp dcqcn mltcp_dcqcn}
BIN=$BUILD/dpdk_transport/mltcp-dpdk
SW=$BUILD/dpdk_transport/mltcp-dpdk-switch
PROF=$(dirname "$0")/interleave.prof
ITERS=${MLTCP_DPDK_ITERS:-80}
WARMUP=${MLTCP_DPDK_WARMUP:-60}
RATE=300000000
TAG=mltcp-dpdk-$$
EAL="--no-huge --no-pci -m 256"
OUT=${MLTCP_DPDK_OUT:-$(mktemp -d /tmp/$TAG.XXXX)}
PIDS=()
[ "$(id -u)" = 0 ] || { echo "interleave_test: needs root"; exit 1; }
for f in "$BIN" "$SW"; do [ -x "$f" ] || { echo "interleave_test: $f not built"; exit 1; }; done

cleanup() {
	for p in "${PIDS[@]}"; do kill -INT "$p" 2>/dev/null || true; done
	sleep 0.2
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf /var/run/dpdk/$TAG-*; [ -n "${MLTCP_DPDK_OUT:-}" ] || rm -rf "$OUT"
}
trap cleanup EXIT INT TERM

wait_for() {	# wait_for FILE PATTERN PID SECONDS
	local i
	for ((i = 0; i < $4 * 10; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || { grep -q "$2" "$1" 2>/dev/null && return 0; return 1; }
		sleep 0.1
	done
	return 1
}

# run CC NJOBS ITERS NAME: writes $OUT/NAME-jobJ.csv
run() {
	local cc=$1 n=$2 iters=$3 name=$4 ecn=()
	case $cc in *dcqcn) ;; *) ecn=(--no-ecn) ;; esac
	local s=$OUT/$name
	"$SW" --bottleneck net_memif2 --rate $RATE --buffer 131072 --kmin 16384 --kmax 65536 \
		--pmax 0.2 "${ecn[@]}" -- $EAL --file-prefix=$TAG-sw \
		--vdev=net_memif0,role=server,socket=/run/$TAG-a.sock \
		--vdev=net_memif1,role=server,socket=/run/$TAG-b.sock \
		--vdev=net_memif2,role=server,socket=/run/$TAG-r.sock >"$s-switch.log" 2>&1 &
	local sw=$!; PIDS+=($sw)
	wait_for "$s-switch.log" "3 ports" $sw 10 || { cat "$s-switch.log"; return 1; }
	"$BIN" recv --local-ip 10.79.0.100 --conns "$n" --no-sha --idle-us 20 --hold --timeout 120 \
		-- $EAL --file-prefix=$TAG-rx \
		--vdev=net_memif0,role=client,socket=/run/$TAG-r.sock >"$s-recv.log" 2>&1 &
	local rx=$!; PIDS+=($rx)
	sleep 1
	local start=$(( $(date +%s%6N) + 1500000 )) j jobs=()
	for ((j = 1; j <= n; j++)); do
		local sock=$([ $j = 1 ] && echo a || echo b)
		"$BIN" emu --local-ip 10.79.0.$j --peer-ip 10.79.0.100 --cc "$cc" --profile-file "$PROF" \
			--profile dpdk_pair --job job$j --iterations "$iters" --start-at-us $start \
			--t0-us $start --csv "$s-job$j.csv" --idle-us 20 --msg-size 262144 \
			--line-rate $RATE --hold --timeout 120 -- $EAL --file-prefix=$TAG-j$j \
			--vdev=net_memif0,role=client,socket=/run/$TAG-$sock.sock >"$s-job$j.log" 2>&1 &
		jobs+=($!); PIDS+=($!)
	done
	local ok=0
	for ((j = 1; j <= n; j++)); do
		wait_for "$s-job$j.log" HOLDING ${jobs[$((j - 1))]} 300 ||
			{ echo "FAIL $name: job$j:"; grep -v '^EAL\|^TELEM' "$s-job$j.log" | tail -n 3; ok=1; }
	done
	wait_for "$s-recv.log" HOLDING $rx 30 ||
		{ echo "FAIL $name: receiver:"; grep -v '^EAL\|^TELEM' "$s-recv.log" | tail -n 3; ok=1; }
	grep -q "in_order=yes" "$s-recv.log" || { echo "FAIL $name: receiver saw messages out of order"; ok=1; }
	kill -INT $sw; wait $sw || true	# switch first: see MaybeHold() in mltcp_dpdk.cpp
	for p in $rx "${jobs[@]}"; do kill -INT "$p" 2>/dev/null || true; done
	for p in $rx "${jobs[@]}"; do wait "$p" 2>/dev/null || true; done
	PIDS=()
	rm -rf /var/run/dpdk/$TAG-*
	grep "bottleneck enq" "$s-switch.log" | sed "s/^mltcp-dpdk-switch: /  $name: /"
	# Functional check of the ECN path: the switch marked, receivers
	# returned CNPs, senders received them.
	if [ "${MLTCP_DPDK_REQUIRE_MARKS:-0}" = 1 ] && [[ $cc == *dcqcn ]] && [ "$n" = 2 ]; then
		grep -q "marked=[1-9]" "$s-switch.log" || { echo "FAIL $name: switch marked nothing"; ok=1; }
		grep -q "cnp_rx=[1-9]" "$s-job1.log" "$s-job2.log" ||
			{ echo "FAIL $name: no CNP reached a sender"; ok=1; }
	fi
	return $ok
}

mean_iter_us() {	# CSV after the warm-up
	awk -F, -v w="${WARMUP}" 'NR > 1 && $2 >= w { s += $7 - $4; n++ } END { printf "%.0f", n ? s / n : 0 }' "$1"
}

fail=0
declare -A RATIO
for cc in $CCS; do
	run "$cc" 1 20 "$cc-alone" || { fail=1; continue; }
	iso=$(WARMUP=5 mean_iter_us "$OUT/$cc-alone-job1.csv")
	run "$cc" 2 "$ITERS" "$cc-pair" || { fail=1; continue; }
	r1=$(awk -v a="$(mean_iter_us "$OUT/$cc-pair-job1.csv")" -v b="$iso" 'BEGIN { printf "%.3f", a / b }')
	r2=$(awk -v a="$(mean_iter_us "$OUT/$cc-pair-job2.csv")" -v b="$iso" 'BEGIN { printf "%.3f", a / b }')
	mean=$(awk -v a="$r1" -v b="$r2" 'BEGIN { printf "%.3f", (a + b) / 2 }')
	RATIO[$cc]=$mean
	echo "RESULT mix=dpdk_two_identical cc=$cc isolated_ms=$(awk -v a="$iso" 'BEGIN { printf "%.1f", a / 1000 }')" \
	     "job1_ratio=$r1 job2_ratio=$r2 mean_ratio=$mean"
done

# Pass/fail (MLTCP_DPDK_CHECK=1): each MLTCP mode's mean ratio over the last
# iterations must be at most 1.12: interleaved jobs iterate as if alone
# (1.0); the margin covers this shared two-core host, where four processes
# poll during communication (settled runs measured 1.02-1.06).  Fully
# overlapped jobs would be at 1 + comm/iteration ~ 1.4.  The base
# algorithm's ratio is reported next to it, not judged: with no force
# between the jobs it drifts at random (1.08-1.39 measured).
if [ "${MLTCP_DPDK_CHECK:-0}" = 1 ]; then
	for pair in "reno mltcp" "dcqcn mltcp_dcqcn"; do
		set -- $pair
		[ -n "${RATIO[$2]:-}" ] || continue
		if ! awk -v m="${RATIO[$2]}" 'BEGIN { exit !(m <= 1.12) }'; then
			echo "FAIL interleave: $2 mean ratio ${RATIO[$2]} > 1.12 (its base $1: ${RATIO[$1]:-not run})"
			fail=1
		else
			echo "ok interleave: $2 mean ratio ${RATIO[$2]} <= 1.12 (its base $1: ${RATIO[$1]:-not run})"
		fi
	done
fi
exit $fail
