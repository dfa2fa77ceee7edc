#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# bad_input_test.sh - the MLTCP-DPDK program's errors on bad input: each
# case must exit non-zero, without a crash, with a message that says what
# is wrong.  (Message too large, send on a closed connection and bad
# parameters are covered at the API level by dpdk_engine_tests, also under
# ASan in check-dpdk-asan.)
#
# usage: bad_input_test.sh MLTCP_DPDK_BINARY      (as root)
set -uo pipefail
BIN=${1:?usage: bad_input_test.sh MLTCP_DPDK_BINARY}
TAG=mltcp-dpdk-$$
EAL="--no-huge --no-pci -m 128"
trap 'rm -rf /var/run/dpdk/$TAG-*' EXIT INT TERM
[ "$(id -u)" = 0 ] || { echo "bad_input_test: needs root"; exit 1; }
fail=0

# expect NAME WANT_RC PATTERN -- command...
expect() {
	local name=$1 want=$2 pat=$3; shift 4
	local out rc
	out=$("$@" 2>&1); rc=$?
	if [ $rc -ge 128 ] || [ $rc -eq 0 ] || { [ "$want" != any ] && [ $rc -ne "$want" ]; }; then
		echo "FAIL $name: exit $rc (want $want)"; echo "$out" | tail -n 3; fail=1; return
	fi
	if ! grep -q -- "$pat" <<<"$out"; then
		echo "FAIL $name: message lacks '$pat':"; echo "$out" | tail -n 3; fail=1; return
	fi
	echo "ok $name: $(grep -- "$pat" <<<"$out" | head -n 1 | cut -c1-150)"
}

expect unknown-cc 2 "unknown congestion control 'bbr'; available: reno, mltcp" -- \
	"$BIN" send --cc bbr --local-ip 10.0.0.1 --peer-ip 10.0.0.2
expect unknown-command 2 "unknown command 'sned'" -- "$BIN" sned
expect bad-ip 2 "local-ip: give this endpoint's IPv4 address" -- \
	"$BIN" recv --local-ip 10.0.0 -- $EAL --file-prefix=$TAG-1
expect bad-number 2 "is not a non-negative number" -- "$BIN" send --bytes lots
expect bad-dcqcn-timer 2 "dcqcn-timer-us must be in \[1, 1000000\] us" -- "$BIN" emu --dcqcn-timer-us 0
expect bad-dcqcn-byte-counter 2 "dcqcn-byte-counter must be in \[1024, " -- "$BIN" emu --dcqcn-byte-counter 100
expect bad-dcqcn-g 2 "dcqcn-g-inv must be in \[2, 65536\]" -- "$BIN" emu --dcqcn-g-inv 1
expect bad-gain-min 2 "gain_min must be in \[16, 1024\] 1/1024, got 2000" -- "$BIN" emu --gain-min 2000
expect bad-idle-order 2 "idle_min_us must not exceed idle_max_us" -- "$BIN" emu --idle-min-us=60000
expect job-param 2 "job-two-way does not apply here: it acts on jobs of several connections" -- \
	"$BIN" emu --job-two-way 0
expect bad-idle-restart 2 "idle-restart-ms must be in \[0, 60000\] ms" -- "$BIN" emu --idle-restart-ms 70000
expect bad-msg-size 2 "msg-size must be in \[1, 2147483648\] bytes" -- "$BIN" send --msg-size 0
expect small-send-queue 2 "send-queue must be at least the message size (1048576 bytes)" -- \
	"$BIN" send --local-ip 10.0.0.1 --send-queue 4096
expect no-such-port 1 "port 'net_memif3' does not exist; DPDK has: net_null0" -- \
	"$BIN" recv --local-ip 10.0.0.2 --port net_memif3 -- $EAL --file-prefix=$TAG-2 --vdev=net_null0
expect bad-eal-arg 1 "DPDK EAL initialisation failed" -- \
	"$BIN" recv --local-ip 10.0.0.2 -- --no-such-eal-flag --file-prefix=$TAG-3
expect not-root 1 "DPDK needs root" -- \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$BIN" recv --local-ip 10.0.0.2 -- $EAL --file-prefix=$TAG-4
expect no-listener 1 "connection refused: the peer is not listening" -- \
	"$BIN" send --local-ip 10.0.0.1 --peer-ip 10.0.0.1 --port net_ring0 --timeout 5 -- $EAL \
	--file-prefix=$TAG-5 --vdev=net_ring0
exit $fail
