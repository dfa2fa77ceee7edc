#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# interleave_test.sh - two emulated training jobs (mltcp-dpdk emu, profile
# tests/dpdk/interleave.prof) share the bottleneck of mltcp-dpdk-switch
# (300 Mbit/s by default, 128 KiB buffer, RED-style ECN marking 16-64 KiB,
# P_max 0.2), all in userspace over net_memif.  For each congestion control
# the script measures one job alone (isolated iteration time), then two
# jobs started together for 80 iterations, and reports each job's mean
# iteration time over iterations 30-79 divided by the isolated one, and in
# how many of those iterations the two jobs' communication phases did not
# overlap.
# Pairs: reno vs mltcp, dcqcn vs mltcp_dcqcn.  (Measured here since the
# loss decrease is scaled by F, docs/dpdk.md: mltcp pushes the two jobs'
# communication phases apart within 5-30 iterations, to adjacent phases,
# and pushes them back when host noise makes them overlap; reno
# random-walks in partial overlap.)
#
# usage: interleave_test.sh CMAKE_BUILD_DIR [cc ...]      (as root)
# env:   MLTCP_DPDK_ITERS (80), MLTCP_DPDK_WARMUP (30), MLTCP_DPDK_CHECK=1 to
#        fail unless mltcp interleaves and reno does less (see below);
#        MLTCP_DPDK_REQUIRE_MARKS=1 to fail unless the dcqcn modes' packets were
#        CE-marked and answered with CNPs (the functional run in make check);
#        MLTCP_DPDK_EMU_ARGS extra emu options (e.g. --no-scale-decrease,
#        --dcqcn-timer-us 1000), MLTCP_DPDK_RECV_ARGS extra receiver options
#        (e.g. --cnp-interval-us 1000), MLTCP_DPDK_LINE_RATE the senders'
#        DCQCN line rate (default: the bottleneck's), MLTCP_DPDK_RATE the
#        bottleneck rate in bit/s (300000000), MLTCP_DPDK_PROFILE the job
#        profile in interleave.prof (dpdk_pair), MLTCP_DPDK_GAP_US how
#        long after job 1 job 2 starts, in us (0: together);
#        MLTCP_DPDK_OUT=DIR keep the CSVs and logs there (emu --verbose
#        prints one line per iteration: losses, cwnd, F).
set -euo pipefail
BUILD=${1:?usage: interleave_test.sh CMAKE_BUILD_DIR [cc ...]}
shift
CCS=${*:-reno mltcp dcqcn mltcp_dcqcn}
BIN=$BUILD/dpdk_transport/mltcp-dpdk
SW=$BUILD/dpdk_transport/mltcp-dpdk-switch
PROF=$(dirname "$0")/interleave.prof
ITERS=${MLTCP_DPDK_ITERS:-80}
WARMUP=${MLTCP_DPDK_WARMUP:-30}
RATE=${MLTCP_DPDK_RATE:-300000000}
TAG=mltcp-dpdk-$$
EAL="--no-huge --no-pci -m 256"
OUT=${MLTCP_DPDK_OUT:-$(mktemp -d /tmp/$TAG.XXXX)}
mkdir -p "$OUT"
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
trap cleanup EXIT
trap "exit 130" INT TERM

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
		${MLTCP_DPDK_RECV_ARGS:-} -- $EAL --file-prefix=$TAG-rx \
		--vdev=net_memif0,role=client,socket=/run/$TAG-r.sock >"$s-recv.log" 2>&1 &
	local rx=$!; PIDS+=($rx)
	sleep 1
	local start=$(( $(date +%s%6N) + 1500000 )) j jobs=()
	for ((j = 1; j <= n; j++)); do
		local sock=$([ $j = 1 ] && echo a || echo b)
		local at=$((start + (j - 1) * ${MLTCP_DPDK_GAP_US:-0}))
		"$BIN" emu --local-ip 10.79.0.$j --peer-ip 10.79.0.100 --cc "$cc" --profile-file "$PROF" \
			--profile ${MLTCP_DPDK_PROFILE:-dpdk_pair} --job job$j --iterations "$iters" --start-at-us $at \
			--t0-us $start --csv "$s-job$j.csv" --idle-us 20 --msg-size 262144 \
			--line-rate ${MLTCP_DPDK_LINE_RATE:-$RATE} --hold --timeout 120 --verbose ${MLTCP_DPDK_EMU_ARGS:-} \
			-- $EAL --file-prefix=$TAG-j$j \
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

# Iterations >= WARMUP in which job1's communication phase overlaps none of
# job2's (the phases of neighbouring iterations included).
apart_iters() {
	awk -F, -v w="${WARMUP}" '
		FNR == 1 { f++; next }
		f == 1 { cs[$2] = $5; ce[$2] = $6; next }
		$2 >= w { n++; ov = 0
			for (k = $2 - 2; k <= $2 + 2; k++)
				if (k in cs && cs[k] < $6 && ce[k] > $5) ov = 1
			if (!ov) a++ }
		END { printf "%d/%d", a, n }' "$2" "$1"
}

# measure CC [TAG]: isolated run, then the pair; sets ISO[CC] and RATIO[CC].
measure() {
	local cc=$1 n=$cc${2:-}
	run "$cc" 1 20 "$n-alone" || return 1
	local iso; iso=$(WARMUP=5 mean_iter_us "$OUT/$n-alone-job1.csv")
	ISO[$cc]=$iso
	run "$cc" 2 "$ITERS" "$n-pair" || return 1
	local r1 r2 mean
	r1=$(awk -v a="$(mean_iter_us "$OUT/$n-pair-job1.csv")" -v b="$iso" 'BEGIN { printf "%.3f", a / b }')
	r2=$(awk -v a="$(mean_iter_us "$OUT/$n-pair-job2.csv")" -v b="$iso" 'BEGIN { printf "%.3f", a / b }')
	mean=$(awk -v a="$r1" -v b="$r2" 'BEGIN { printf "%.3f", (a + b) / 2 }')
	RATIO[$cc]=$mean
	echo "RESULT mix=dpdk_two_identical cc=$cc isolated_ms=$(awk -v a="$iso" 'BEGIN { printf "%.1f", a / 1000 }')" \
	     "job1_ratio=$r1 job2_ratio=$r2 mean_ratio=$mean iters=$WARMUP-$((ITERS - 1))" \
	     "apart_iters=$(apart_iters "$OUT/$n-pair-job1.csv" "$OUT/$n-pair-job2.csv")${2:+ ($2)}"
}

# mltcp interleaved: within 6 % of isolated and below reno (see below).
mltcp_ok() {
	awk -v m="${RATIO[mltcp]}" -v b="${RATIO[reno]:-9}" 'BEGIN { exit !(m <= 1.06 && m < b) }'
}

fail=0
declare -A RATIO ISO
for cc in $CCS; do
	measure "$cc" || fail=1
done

# Pass/fail (MLTCP_DPDK_CHECK=1), judged for reno vs mltcp: mltcp's mean
# ratio over iterations 30-79 must be at most 1.06, and below reno's.
# Interleaved jobs iterate as if alone (1.0); fully overlapped ones at
# 1 + comm/iteration ~ 1.24.  Measured in 21 runs of 80 iterations on a
# quiet or moderately loaded host (docs/dpdk.md): mltcp 0.989-1.049 in 20
# (median of all 1.009), reno 1.062-1.133 (median 1.093); 1.06 lies
# between the two ranges.  The dcqcn pair is reported, not judged: its
# rate cut is deliberately not scaled by F (docs/design.md).
#
# Precondition: the transport must reach the bottleneck's rate, i.e. a job
# alone iterates in at most 140 ms (131-134 ms measured, of which 31-33 ms
# communication).  On a saturated host (measured with CPU hogs beside the
# test: 153-198 ms alone, communication phases of 50-100 ms with
# retransmission timeouts) scheduling, not congestion control, decides the
# schedule, and neither mode interleaves; the judgement is then skipped,
# with a message.  The isolated run is repeated after the pairs to catch
# load that started during them.
#
# Retry: in 1 of the 21 runs mltcp did not separate the jobs within 80
# iterations (1.077, reno 1.062; another run took 34 iterations); a failed
# first attempt is followed by a second, which is judged (both printed).
if [ "${MLTCP_DPDK_CHECK:-0}" = 1 ] && [ -n "${RATIO[mltcp]:-}" ]; then
	if ! mltcp_ok; then
		echo "interleave: mltcp ${RATIO[mltcp]} (reno ${RATIO[reno]:-not run}): not interleaved" \
		     "within $ITERS iterations; one more attempt"
		measure mltcp -retry || fail=1
	fi
	m=${RATIO[mltcp]} b=${RATIO[reno]:-}
	after=0
	if run mltcp 1 12 mltcp-after; then
		after=$(WARMUP=4 mean_iter_us "$OUT/mltcp-after-job1.csv")
	fi
	slow=$(awk -v a="${ISO[mltcp]}" -v b="$after" -v r="${ISO[reno]:-0}" \
		'BEGIN { m = a > b ? a : b; m = m > r ? m : r; if (m > 140000) printf "%.1f", m / 1000 }')
	if [ "$after" = 0 ]; then
		echo "FAIL interleave: the isolated run after the pairs failed"
		fail=1
	elif [ -n "$slow" ]; then
		echo "SKIP interleave: a job alone took $slow ms per iteration (> 140 ms; 131-134 ms" \
		     "on a quiet host): the host is too loaded to judge interleaving (mltcp $m, reno ${b:-not run})"
	elif ! awk -v m="$m" 'BEGIN { exit !(m <= 1.06) }'; then
		echo "FAIL interleave: mltcp mean ratio $m > 1.06 (reno: ${b:-not run})"
		fail=1
	elif [ -n "$b" ] && ! awk -v m="$m" -v b="$b" 'BEGIN { exit !(m < b) }'; then
		echo "FAIL interleave: mltcp mean ratio $m not below reno's $b"
		fail=1
	else
		echo "ok interleave: mltcp mean ratio $m <= 1.06 and below reno's ${b:-(not run)}" \
		     "(isolated $(awk -v a="${ISO[mltcp]}" -v b="$after" 'BEGIN { printf "%.1f/%.1f", a / 1000, b / 1000 }') ms before/after)"
	fi
fi
exit $fail
