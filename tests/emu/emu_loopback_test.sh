#!/usr/bin/env bash
# emu_loopback_test.sh - mltcp-emu end to end over loopback (host namespace,
# 127.0.0.1 only): iteration count, bytes per iteration (TAG-like cycle,
# buckets over two connections; NCCL-style striping over four), receiver byte
# log, timestamps in order; then
# bad input: unknown congestion control, profile errors, unreachable receiver,
# --hints without MLTCP.  Usage: emu_loopback_test.sh <mltcp-emu>
set -euo pipefail
EMU=${1:?usage: $0 <mltcp-emu>}
TMP=$(mktemp -d /tmp/mltcp-emu-test.XXXXXX)
RX=
cleanup() {
	[[ -n "$RX" ]] && kill "$RX" 2>/dev/null && wait "$RX" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$(dirname "$0")/lib.sh"

cat >"$TMP/p.prof" <<'PROF'
profile tiny bytes=300k compute_us=20000 buckets=3 bucket_gap_us=2000 conns=2 bytes_cycle=1,0.5
profile striped bytes=1M compute_us=20000 buckets=2 conns=4 stripe_chunk=65536
PROF

"$EMU" recv --bind 127.0.0.1 --port 0 --port-file "$TMP/port" --log-dir "$TMP" &
RX=$!
for _ in $(seq 50); do [[ -s "$TMP/port" ]] && break; sleep 0.05; done
PORT=$(cat "$TMP/port")

"$EMU" send --dst 127.0.0.1:"$PORT" --profile-file "$TMP/p.prof" --profile tiny --job j1 \
	--cc reno --iterations 4 --warmup 1 --csv "$TMP/j1.csv" --json "$TMP/j1.json"
kill "$RX"; wait "$RX" || true; RX=

# bytes follow the cycle 1,0.5
check_iteration_csv "$TMP/j1.csv" j1 4 300000 150000 j1
grep -q '"iterations":4' "$TMP/j1.json" || fail "JSON iterations: $(cat "$TMP/j1.json")"
grep -q '"bytes_total":900000' "$TMP/j1.json" || fail "JSON bytes: $(cat "$TMP/j1.json")"
grep -q '"cc":"reno"' "$TMP/j1.json" || fail "JSON cc"
rx_total=$(awk -F, 'NR>1 {s += $2} END {print s}' "$TMP/rx-j1.csv")
[[ "$rx_total" -eq 900000 ]] || fail "receiver logged $rx_total bytes, expected 900000"
echo "ok: 4 iterations, 900000 bytes sent and received"

# NCCL-style striping: 2 buckets of 500000 B in 64 KiB chunks round robin over
# 4 connections (7 whole chunks + 41248 B each: 2+1 chunks on the first ones);
# the sender checks every connection's confirmed bytes against its stripes.
"$EMU" recv --bind 127.0.0.1 --port 0 --port-file "$TMP/port3" --log-dir "$TMP" &
RX=$!
for _ in $(seq 50); do [[ -s "$TMP/port3" ]] && break; sleep 0.05; done
"$EMU" send --dst 127.0.0.1:"$(cat "$TMP/port3")" --profile-file "$TMP/p.prof" --profile striped \
	--job s1 --cc reno --iterations 3 --warmup 1 --csv "$TMP/s1.csv" --json "$TMP/s1.json"
kill "$RX"; wait "$RX" || true; RX=
check_iteration_csv "$TMP/s1.csv" s1 3 1000000 1000000 s1
rx_total=$(awk -F, 'NR>1 {s += $2} END {print s}' "$TMP/rx-s1.csv")
[[ "$rx_total" -eq 3000000 ]] || fail "striped: receiver logged $rx_total bytes, expected 3000000"
echo "ok: striped job, 3 iterations of 1000000 bytes over 4 connections"

"$EMU" recv --bind 127.0.0.1 --port 0 --port-file "$TMP/port2" &
RX=$!
for _ in $(seq 50); do [[ -s "$TMP/port2" ]] && break; sleep 0.05; done
PORT=$(cat "$TMP/port2")
avail=$(cat /proc/sys/net/ipv4/tcp_available_congestion_control)
expect_exit 3 "registered: $avail" "$EMU" send --dst 127.0.0.1:"$PORT" \
	--profile-file "$TMP/p.prof" --profile tiny --cc no_such_cc
if ! grep -qw mltcp /proc/sys/net/ipv4/tcp_available_congestion_control; then
	expect_exit 3 "mltcp not registered: run mltcpctl load" "$EMU" send \
		--dst 127.0.0.1:"$PORT" --profile-file "$TMP/p.prof" --profile tiny --cc mltcp
fi
printf 'profile ok bytes=1M compute_us=1\nprofile bad bytes=1M compute_us=1 buckts=2\n' >"$TMP/bad.prof"
expect_exit 2 "bad.prof:2: field 'buckts': unknown field" "$EMU" send --dst 127.0.0.1:"$PORT" \
	--profile-file "$TMP/bad.prof" --profile ok
expect_exit 2 "no profile 'nope' (defined: tiny striped)" "$EMU" send --dst 127.0.0.1:"$PORT" \
	--profile-file "$TMP/p.prof" --profile nope
expect_exit 2 "cannot open profile file" "$EMU" profiles --profile-file "$TMP/missing.prof"
expect_exit 2 "not an integer" "$EMU" send --dst 127.0.0.1:"$PORT" \
	--profile-file "$TMP/p.prof" --profile tiny --iterations -3
expect_exit 2 "bad option" "$EMU" send --frobnicate
expect_exit 2 "not an IPv4 address" "$EMU" send --dst nohost:1 --profile-file "$TMP/p.prof" --profile tiny
# --hints: compiled out (exit 5, says so) or built in but this socket is reno (exit 5).
expect_exit 5 "libmltcp\|mltcp hint failed" "$EMU" send --dst 127.0.0.1:"$PORT" \
	--profile-file "$TMP/p.prof" --profile tiny --cc reno --hints --iterations 1
kill "$RX"; wait "$RX" || true; RX=
expect_exit 4 "is 'mltcp-emu recv' running there" "$EMU" send --dst 127.0.0.1:"$PORT" \
	--profile-file "$TMP/p.prof" --profile tiny
"$EMU" --help | grep "exit codes" >/dev/null || fail "--help"
echo "PASS emu_loopback"
