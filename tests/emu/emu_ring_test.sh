#!/usr/bin/env bash
# emu_ring_test.sh - mltcp-emu ring end to end over loopback (127.0.0.1, no
# namespaces): K=3 ranks started in reverse order form the ring; every byte
# of every step arrives (the ranks check the payload; here the byte counts
# add up between neighbours and against the receive logs); every rank's CSV
# has the right rows; the all-reduce is collective (no rank ends an
# iteration's phase before every rank has started it).  Then failures end
# with exit 4 and a clear message, never a hang: a rank that never comes up,
# one killed mid-run, one stopped mid-run; and bad usage (2, 3).
# Usage: emu_ring_test.sh <mltcp-emu>
set -euo pipefail
EMU=${1:?usage: $0 <mltcp-emu>}
TMP=$(mktemp -d /tmp/mltcp-emu-ring.XXXXXX)
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null || true   # also ends a stopped rank
	done
	wait 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$(dirname "$0")/lib.sh"

# Three free loopback ports, comma-joined as --peers.
peers3() {
	python3 -c 'import socket
ss = [socket.socket() for _ in range(3)]
for s in ss: s.bind(("127.0.0.1", 0))
print(",".join("127.0.0.1:%d" % s.getsockname()[1] for s in ss))'
}

# ms since the epoch, for elapsed-time checks
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# json_field FILE KEY -> the integer value of "KEY":N
json_field() { sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p" "$1"; }

cat >"$TMP/p.prof" <<'PROF'
profile tiny bytes=300001 compute_us=20000 buckets=2 bytes_cycle=1,0.5
profile other bytes=200k compute_us=20000
profile long bytes=300k compute_us=20000
PROF

# ---- K=3, started in reverse order, common start time
PEERS=$(peers3)
start=$(($(date +%s%N) / 1000 + 1000000))
for r in 2 1 0; do
	"$EMU" ring --rank $r --peers "$PEERS" --profile-file "$TMP/p.prof" --profile tiny \
		--job j --cc reno --iterations 4 --warmup 1 --start-at-us $start --t0-us $start \
		--csv "$TMP/r$r.csv" --json "$TMP/r$r.json" --rx-log "$TMP/rx$r.csv" \
		2>"$TMP/err$r" &
	PIDS+=($!)
	sleep 0.2
done
for r in 0 1 2; do
	wait "${PIDS[$((2 - r))]}" || fail "rank $r: exit $?: $(cat "$TMP/err$r")"
done
PIDS=()
for r in 0 1 2; do
	csv=$TMP/r$r.csv
	# bytes follow the cycle 1,0.5 (round(150000.5) = 150001)
	check_iteration_csv "$csv" j 4 300001 150001 "rank $r"
	grep -q '"mode":"ring","rank":'$r',"ranks":3' "$TMP/r$r.json" || fail "rank $r JSON: $(cat "$TMP/r$r.json")"
	grep -q '"bytes_total":900004' "$TMP/r$r.json" || fail "rank $r JSON bytes_total"
done
# Each step moves every chunk once: over the ring 2(K-1) x the buffers.
sent=0
for r in 0 1 2; do
	prev=$(((r + 2) % 3))
	got=$(json_field "$TMP/r$r.json" bytes_received)
	[[ "$got" -eq $(json_field "$TMP/r$prev.json" bytes_sent) ]] ||
		fail "rank $r received $got bytes, rank $prev sent $(json_field "$TMP/r$prev.json" bytes_sent)"
	logged=$(awk -F, 'NR>1 {s += $2} END {print s}' "$TMP/rx$r.csv")
	[[ "$logged" -eq "$got" ]] || fail "rank $r: rx log has $logged bytes, JSON $got"
	sent=$((sent + $(json_field "$TMP/r$r.json" bytes_sent)))
done
[[ $sent -eq $((4 * 900004)) ]] || fail "ranks sent $sent bytes in all, expected $((4 * 900004))"
# Collective: in every iteration the last rank to start its phase starts
# before the first rank to end it ends.
awk -F, 'FNR>1 { i = $2
	if (!(i in s) || $5 > s[i]) s[i] = $5
	if (!(i in e) || $6 < e[i]) e[i] = $6 }
	END { for (i in s) if (s[i] > e[i]) { print "iteration " i ": a rank ended at " e[i] " before another started at " s[i]; exit 1 } }' \
	"$TMP/r0.csv" "$TMP/r1.csv" "$TMP/r2.csv" || fail "all-reduce not collective"
echo "ok: K=3 ring, 4 iterations, $sent payload bytes checked, CSVs consistent"

# ---- failures: exit 4 with a clear message, within the deadline
expect_rank() {   # rank, code, pattern
	local rc=0
	wait "${PIDS[$1]}" 2>/dev/null || rc=$?   # (no shell notice of the killed rank)
	[[ $rc -eq $2 ]] || fail "rank $1: exit $rc (want $2): $(cat "$TMP/err$1")"
	grep -q -- "$3" "$TMP/err$1" || fail "rank $1: no '$3' in: $(cat "$TMP/err$1")"
	echo "ok: rank $1 exit $2: $(head -1 "$TMP/err$1")"
}

# Rank 2 never comes up: rank 1 cannot connect, rank 0 is never connected to.
PEERS=$(peers3)
t=$(now_ms)
"$EMU" ring --rank 0 --peers "$PEERS" --profile-file "$TMP/p.prof" --profile tiny \
	--connect-timeout-s 1 2>"$TMP/err0" & PIDS=($!)
"$EMU" ring --rank 1 --peers "$PEERS" --profile-file "$TMP/p.prof" --profile tiny \
	--connect-timeout-s 1 2>"$TMP/err1" & PIDS+=($!)
expect_rank 0 4 "the previous rank 2 (.*) did not connect within 1 s"
expect_rank 1 4 "cannot connect to the next rank 2 (.*) within 1 s"
(($(now_ms) - t < 4000)) || fail "gave up after $(($(now_ms) - t)) ms, deadline 1 s"

# Rank 1 killed mid-run, then rank 1 stopped mid-run: the others end.
for how in KILL STOP; do
	PEERS=$(peers3)
	PIDS=()
	for r in 0 1 2; do
		"$EMU" ring --rank $r --peers "$PEERS" --profile-file "$TMP/p.prof" --profile long \
			--iterations 100000 --io-timeout-s 1 --json /dev/null 2>"$TMP/err$r" &
		PIDS+=($!)
	done
	sleep 0.5
	kill -0 "${PIDS[0]}" "${PIDS[2]}" || fail "ranks ended before the $how: $(cat "$TMP"/err*)"
	kill -$how "${PIDS[1]}"
	t=$(now_ms)
	pat="did it exit?"
	[[ $how == STOP ]] && pat="no progress for 1 s\|did it exit?"
	expect_rank 0 4 "$pat"
	expect_rank 2 4 "$pat"
	(($(now_ms) - t < 4000)) || fail "$how: ranks took $(($(now_ms) - t)) ms to give up"
	kill -9 "${PIDS[1]}" 2>/dev/null || true
	wait "${PIDS[1]}" 2>/dev/null || true
done
grep -q "no progress for 1 s" "$TMP/err0" "$TMP/err2" || fail "stopped rank: no stall message"

# ---- bad usage: 2 (usage, disagreeing ranks) and 3 (congestion control)
PEERS=$(peers3)
R=("$EMU" ring --profile-file "$TMP/p.prof" --profile tiny)
expect_exit 2 "ring needs --rank" "${R[@]}" --peers "$PEERS"
expect_exit 2 "is not in --peers" "${R[@]}" --rank 3 --peers "$PEERS"
expect_exit 2 "must list 2 to 64" "${R[@]}" --rank 0 --peers 127.0.0.1:1
expect_exit 2 "both listen on" "${R[@]}" --rank 0 --peers 127.0.0.1:1,127.0.0.1:1
expect_exit 2 "not an IPv4 address" "${R[@]}" --rank 0 --peers 127.0.0.1:1,nohost:2
printf 'profile b bulk=1\nprofile c bytes=1M compute_us=1 conns=2\n' >"$TMP/bad.prof"
expect_exit 2 "a ring runs iterations" "$EMU" ring --rank 0 --peers "$PEERS" \
	--profile-file "$TMP/bad.prof" --profile b
expect_exit 2 "conns=1" "$EMU" ring --rank 0 --peers "$PEERS" --profile-file "$TMP/bad.prof" --profile c
avail=$(cat /proc/sys/net/ipv4/tcp_available_congestion_control)
expect_exit 3 "registered: $avail" "${R[@]}" --rank 0 --peers "$PEERS" --cc no_such_cc
# Ranks that disagree on the profile: the receiving rank names the mismatch.
PEERS=$(peers3)
PEERS=${PEERS%,*}
"$EMU" ring --rank 0 --peers "$PEERS" --profile-file "$TMP/p.prof" --profile tiny --job j \
	--connect-timeout-s 3 --json /dev/null 2>"$TMP/err0" & PIDS=($!)
"$EMU" ring --rank 1 --peers "$PEERS" --profile-file "$TMP/p.prof" --profile other --job j \
	--connect-timeout-s 3 --json /dev/null 2>"$TMP/err1" & PIDS+=($!)
rc0=0; wait "${PIDS[0]}" || rc0=$?
rc1=0; wait "${PIDS[1]}" || rc1=$?
PIDS=()
grep -q "do all ranks use the same profile" "$TMP/err0" "$TMP/err1" ||
	fail "profile mismatch not reported: $(cat "$TMP/err0" "$TMP/err1")"
[[ $rc0 -eq 2 || $rc1 -eq 2 ]] && ((rc0 != 0 && rc1 != 0)) || fail "profile mismatch: exits $rc0 $rc1"
echo "ok: profile mismatch: exits $rc0 $rc1"
"$EMU" --help | grep "mltcp-emu ring --rank" >/dev/null || fail "--help does not show ring"
echo "PASS emu_ring"
