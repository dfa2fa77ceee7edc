#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# transfer_test.sh - integration test of the MLTCP-DPDK transport between
# two processes: over net_memif, and over net_af_packet across a veth pair
# between two network namespaces.  For each injected loss rate (0, 1, 5 %,
# both directions, plus 2 % reordering) the receiver's SHA-256 of the byte
# stream must equal the sender's, and every message must arrive exactly once
# and in order (recv checks each message's sequence number).
#
# usage: transfer_test.sh MLTCP_DPDK_BINARY [memif|af_packet|all]
# env:   MLTCP_DPDK_BYTES="0:N0 0.01:N1 0.05:N2" bytes per loss rate over memif
#        (default 1 GB each), MLTCP_DPDK_BYTES_AF_PACKET the same over af_packet
#        (default 256 MB each; check-dpdk-full uses 1 GB)
#        MLTCP_DPDK_CC congestion control (default reno)
# Needs root.  Everything it creates is named mltcp-dpdk-<pid>-... and
# removed on exit, also on failure or interrupt.
set -euo pipefail

BIN=${1:?usage: transfer_test.sh MLTCP_DPDK_BINARY [memif|af_packet|all]}
WHICH=${2:-all}
BYTES=${MLTCP_DPDK_BYTES:-"0:1000000000 0.01:1000000000 0.05:1000000000"}
BYTES_AF=${MLTCP_DPDK_BYTES_AF_PACKET:-"0:256000000 0.01:256000000 0.05:256000000"}
CC=${MLTCP_DPDK_CC:-reno}
REORDER=0.02
TAG=mltcp-dpdk-$$
EAL="--no-huge --no-pci -m 256"
NS_A=$TAG-a NS_B=$TAG-b
LOG=$(mktemp -d /tmp/$TAG.XXXX)
PIDS=()

[ "$(id -u)" = 0 ] || { echo "transfer_test: needs root (DPDK memif/af_packet, namespaces)"; exit 1; }
[ -x "$BIN" ] || { echo "transfer_test: $BIN is not built"; exit 1; }

cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	ip netns del $NS_A 2>/dev/null || true
	ip netns del $NS_B 2>/dev/null || true
	rm -rf /var/run/dpdk/$TAG-* "$LOG"
}
trap cleanup EXIT INT TERM

# Leftovers of a crashed earlier run (their owner process is gone).
for ns in $(ip netns list | awk '/^mltcp-dpdk-[0-9]+-[ab]/ {print $1}'); do
	pid=${ns#mltcp-dpdk-}; pid=${pid%%-*}
	kill -0 "$pid" 2>/dev/null || ip netns del "$ns" 2>/dev/null || true
done

field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" "$2" | head -n 1; }

# run_pair NAME "recv prefix" "send prefix" "recv vdev" "send vdev" LOSS BYTES EXTRA
run_pair() {
	local name=$1 rx_pre=$2 tx_pre=$3 rx_vdev=$4 tx_vdev=$5 loss=$6 bytes=$7 extra=$8
	local t0=$SECONDS
	# A 2 ms timeout floor: these runs repair many losses, and the
	# default 10 ms floor (for busy shared hosts) would dominate their time.
	$rx_pre "$BIN" recv --local-ip 10.77.0.2 --cc "$CC" --loss "$loss" --reorder $REORDER \
		--min-rto-us 2000 \
		--timeout 300 $extra -- $EAL --file-prefix=$TAG-rx --vdev="$rx_vdev" \
		>"$LOG/rx" 2>&1 &
	local rx=$!
	PIDS+=($rx)
	sleep 1
	if ! $tx_pre "$BIN" send --local-ip 10.77.0.1 --peer-ip 10.77.0.2 --cc "$CC" \
		--loss "$loss" --reorder $REORDER --bytes "$bytes" --msg-size 1000003 --min-rto-us 2000 \
		--seed $RANDOM --timeout 300 $extra -- $EAL --file-prefix=$TAG-tx \
		--vdev="$tx_vdev" >"$LOG/tx" 2>&1; then
		echo "FAIL $name loss=$loss: sender failed:"; grep -v '^EAL\|^TELEMETRY' "$LOG/tx" | tail -n 5
		wait $rx || true; grep -v '^EAL\|^TELEMETRY' "$LOG/rx" | tail -n 5; return 1
	fi
	if ! wait $rx; then
		echo "FAIL $name loss=$loss: receiver failed:"; grep -v '^EAL\|^TELEMETRY' "$LOG/rx" | tail -n 5
		return 1
	fi
	local s_sha r_sha s_msgs r_msgs s_bytes r_bytes order
	s_sha=$(field sha256 "$LOG/tx"); r_sha=$(field sha256 "$LOG/rx")
	s_msgs=$(field msgs "$LOG/tx"); r_msgs=$(field msgs "$LOG/rx")
	s_bytes=$(field bytes "$LOG/tx"); r_bytes=$(field bytes "$LOG/rx")
	order=$(field in_order "$LOG/rx")
	local retx; retx=$(field retx "$LOG/tx")
	if [ -z "$s_sha" ] || [ "$s_sha" != "$r_sha" ] || [ "$s_msgs" != "$r_msgs" ] ||
	   [ "$s_bytes" != "$bytes" ] || [ "$r_bytes" != "$bytes" ] || [ "$order" != yes ]; then
		echo "FAIL $name loss=$loss: sent $s_bytes B/$s_msgs msgs sha $s_sha," \
		     "received $r_bytes B/$r_msgs msgs sha $r_sha in_order=$order"
		return 1
	fi
	if [ "$loss" != 0 ] && [ "${retx:-0}" = 0 ]; then
		echo "FAIL $name loss=$loss: no retransmissions, so the loss was not injected"; return 1
	fi
	echo "ok $name cc=$CC loss=$loss reorder=$REORDER bytes=$bytes msgs=$r_msgs" \
	     "sha256=${r_sha:0:16}... retx=$retx goodput_gbps=$(field goodput_gbps "$LOG/tx")" \
	     "($((SECONDS - t0)) s)"
}

fail=0
if [ "$WHICH" = memif ] || [ "$WHICH" = all ]; then
	for lb in $BYTES; do
		sock=/run/$TAG.sock
		run_pair memif "" "" "net_memif0,role=server,socket=$sock" \
			"net_memif0,role=client,socket=$sock" "${lb%%:*}" "${lb#*:}" "" || fail=1
	done
fi
if [ "$WHICH" = af_packet ] || [ "$WHICH" = all ]; then
	ip netns add $NS_A; ip netns add $NS_B
	ip link add $TAG-va netns $NS_A type veth peer name $TAG-vb netns $NS_B 2>/dev/null ||
		ip link add mdpa$$ netns $NS_A type veth peer name mdpb$$ netns $NS_B
	VA=$(ip -n $NS_A -o link show type veth | awk -F': ' '{print $2}' | cut -d@ -f1)
	VB=$(ip -n $NS_B -o link show type veth | awk -F': ' '{print $2}' | cut -d@ -f1)
	ip -n $NS_A link set "$VA" up; ip -n $NS_B link set "$VB" up
	for lb in $BYTES_AF; do
		# Standard 1500-byte MTU: 1392 B of payload per packet.
		run_pair af_packet "ip netns exec $NS_B" "ip netns exec $NS_A" \
			"net_af_packet0,iface=$VB" "net_af_packet0,iface=$VA" \
			"${lb%%:*}" "${lb#*:}" "--port net_af_packet0 --mss 1392" || fail=1
	done
fi
exit $fail
