#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#
# bench.sh - make bench-dpdk: the MLTCP-DPDK transport next to kernel TCP,
# all measured in the same run on this machine:
#   1. goodput of one connection over net_memif between two processes
#      (9 KB frames), vs kernel TCP cubic across a veth pair between two
#      namespaces (the kernel's defaults: TSO/GSO/GRO on, MTU 1500), and
#      the ceiling of any two-core transport here: what two cores move
#      through shared memory with one memcpy on each side (dpdk_copy_ceiling)
#   2. goodput over net_af_xdp on that same veth pair (MTU 1500)
#   3. 64 B request/response latency (median, p99) over net_af_xdp vs kernel
#      TCP (TCP_NODELAY) on that veth pair, and over net_memif
#   4. congestion-control cost per packet per mode vs reno (dpdk_cc_bench)
# Each DPDK process has a core of its own (EAL -l: without it the EAL pins
# every process's main thread to CPU 0, and sender and receiver share one
# core) and polls without yielding, as DPDK is deployed; the kernel TCP pair
# runs where the scheduler puts it.  Over memif the sender is the zero-copy
# client (it builds packets in the shared region; the receiver does the one
# copy out) and the window is 128 frames (1.1 MB, far above the path's
# bandwidth-delay product): the default 2048 x 9 KB = 18 MB in flight spills
# the frames from the caches (about 30 against 45 Gbit/s, docs/dpdk.md).
# Ends with RESULT lines.  usage: bench.sh CMAKE_BUILD_DIR   (as root)
set -euo pipefail
BUILD=${1:?usage: bench.sh CMAKE_BUILD_DIR}
BIN=$BUILD/dpdk_transport/mltcp-dpdk
TCPB=$BUILD/dpdk_transport/mltcp-tcp-baseline
CCB=$BUILD/tests/dpdk/dpdk_cc_bench
CEIL=$BUILD/tests/dpdk/dpdk_copy_ceiling
BYTES=${MLTCP_DPDK_BENCH_BYTES:-1000000000}
TAG=mltcp-dpdk-$$
NS_A=$TAG-a NS_B=$TAG-b VA=mdba$$ VB=mdbb$$
EAL="--no-huge --no-pci -m 512"
RX_CORE="-l 1" TX_CORE="-l 0"
[ "$(nproc)" -ge 2 ] || { echo "bench-dpdk: needs two CPUs (one per DPDK process)"; exit 1; }
LOG=$(mktemp -d /tmp/$TAG.XXXX)
PIDS=()
[ "$(id -u)" = 0 ] || { echo "bench-dpdk: needs root"; exit 1; }
for f in "$BIN" "$TCPB" "$CCB" "$CEIL"; do [ -x "$f" ] || { echo "bench-dpdk: $f not built"; exit 1; }; done

cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	ip netns del $NS_A 2>/dev/null || true
	ip netns del $NS_B 2>/dev/null || true
	rm -rf /var/run/dpdk/$TAG-* "$LOG"
}
trap cleanup EXIT INT TERM
field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" "$2" | head -n 1; }
quiet() { grep -v '^EAL\|^TELEMETRY\|^libbpf\|^libxdp' "$1" || true; }

# dpdk_pair NAME RX_NS TX_NS RX_VDEV TX_VDEV "extra options" ["sender EAL options"]
dpdk_pair() {
	local rx_pre="" tx_pre=""
	[ -n "$2" ] && rx_pre="ip netns exec $2"
	[ -n "$3" ] && tx_pre="ip netns exec $3"
	$rx_pre "$BIN" recv --local-ip 10.78.1.2 --no-sha --no-yield $6 -- $EAL $RX_CORE \
		--file-prefix=$TAG-rx --vdev="$4" >"$LOG/$1.rx" 2>&1 &
	PIDS+=($!)
	sleep 1.5
	$tx_pre "$BIN" send --local-ip 10.78.1.1 --peer-ip 10.78.1.2 --no-sha --no-yield \
		--bytes "$BYTES" $6 -- $EAL $TX_CORE ${7:-} --file-prefix=$TAG-tx --vdev="$5" \
		>"$LOG/$1.tx" 2>&1 || { quiet "$LOG/$1.tx"; exit 1; }
	wait "${PIDS[-1]}" || { quiet "$LOG/$1.rx"; exit 1; }
	quiet "$LOG/$1.tx" | head -n 1
}

echo "== 1. goodput, one connection, $BYTES bytes"
dpdk_pair memif "" "" "net_memif0,role=server,socket=/run/$TAG.sock,bsize=9216" \
	"net_memif0,role=client,socket=/run/$TAG.sock,bsize=9216,zero-copy=yes" \
	"--frame-room 9216 --port net_memif0 --rcv-wnd 128" "--single-file-segments"
MEMIF=$(field goodput_gbps "$LOG/memif.tx")
"$CEIL" | tee "$LOG/ceiling"
CEILING=$(field gbps "$LOG/ceiling")

ip netns add $NS_A; ip netns add $NS_B
ip link add $VA netns $NS_A type veth peer name $VB netns $NS_B
ip -n $NS_A addr add 10.78.0.1/24 dev $VA; ip -n $NS_B addr add 10.78.0.2/24 dev $VB
ip -n $NS_A link set $VA up; ip -n $NS_B link set $VB up
ip -n $NS_A link set lo up; ip -n $NS_B link set lo up
ip netns exec $NS_B "$TCPB" server >"$LOG/tcpserver" 2>&1 &
PIDS+=($!)
sleep 0.5
ip netns exec $NS_A "$TCPB" stream --host 10.78.0.2 --bytes "$BYTES" --cc cubic | tee "$LOG/tcp"
TCP=$(field goodput_gbps "$LOG/tcp")
ip netns exec $NS_A "$TCPB" ping --host 10.78.0.2 --count 20000 --size 64 | tee "$LOG/tcpping"
ip netns exec $NS_A "$TCPB" quit --host 10.78.0.2 || true

echo "== 2. net_af_xdp on the same veth pair (MTU 1500)"
XDP_A="net_af_xdp0,iface=$VA,start_queue=0,queue_count=1"
XDP_B="net_af_xdp0,iface=$VB,start_queue=0,queue_count=1"
dpdk_pair afxdp $NS_B $NS_A "$XDP_B" "$XDP_A" "--port net_af_xdp0 --mss 1392"
AFXDP=$(field goodput_gbps "$LOG/afxdp.tx")

echo "== 3. 64 B request/response over net_af_xdp"
ip netns exec $NS_B "$BIN" pong --local-ip 10.78.1.2 --port net_af_xdp0 --no-yield -- $EAL \
	$RX_CORE --file-prefix=$TAG-rx --vdev="$XDP_B" >"$LOG/pong" 2>&1 &
PIDS+=($!)
sleep 1.5
ip netns exec $NS_A "$BIN" ping --local-ip 10.78.1.1 --peer-ip 10.78.1.2 --port net_af_xdp0 \
	--count 20000 --size 64 --no-yield -- $EAL $TX_CORE --file-prefix=$TAG-tx --vdev="$XDP_A" \
	>"$LOG/ping" 2>&1 ||
	{ quiet "$LOG/ping"; exit 1; }
wait "${PIDS[-1]}" || true
quiet "$LOG/ping"

echo "== 3b. 64 B request/response over net_memif (no kernel in the path)"
"$BIN" pong --local-ip 10.78.1.2 --no-yield -- $EAL $RX_CORE --file-prefix=$TAG-rx \
	--vdev=net_memif0,role=server,socket=/run/$TAG-p.sock >"$LOG/mpong" 2>&1 &
PIDS+=($!)
sleep 1.5
"$BIN" ping --local-ip 10.78.1.1 --peer-ip 10.78.1.2 --count 20000 --size 64 --no-yield -- $EAL \
	$TX_CORE --file-prefix=$TAG-tx --vdev=net_memif0,role=client,socket=/run/$TAG-p.sock \
	>"$LOG/mping" 2>&1 ||
	{ quiet "$LOG/mping"; exit 1; }
wait "${PIDS[-1]}" || true
quiet "$LOG/mping"

echo "== 4. congestion-control cost per packet"
"$CCB" | tee "$LOG/cc"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
echo "RESULT memif_gbps=$MEMIF kernel_tcp_cubic_veth_gbps=$TCP ratio=$(ratio "$MEMIF" "$TCP") target_ratio=2"
echo "RESULT two_core_copy_ceiling_gbps=$CEILING ceiling_vs_kernel_tcp=$(ratio "$CEILING" "$TCP")" \
     "memif_vs_ceiling=$(ratio "$MEMIF" "$CEILING")"
echo "RESULT af_xdp_gbps=$AFXDP kernel_tcp_cubic_veth_gbps=$TCP ratio=$(ratio "$AFXDP" "$TCP")"
echo "RESULT latency_64B af_xdp_median_us=$(field median_us "$LOG/ping") af_xdp_p99_us=$(field p99_us "$LOG/ping")" \
     "kernel_tcp_median_us=$(field median_us "$LOG/tcpping") kernel_tcp_p99_us=$(field p99_us "$LOG/tcpping")"
echo "RESULT latency_64B memif_median_us=$(field median_us "$LOG/mping") memif_p99_us=$(field p99_us "$LOG/mping")"
awk '/^CC-COST/ { split($2, m, "="); split($3, n, "="); split($4, r, "=");
	printf "RESULT cc_cost mode=%s ns_per_pkt=%s ratio_vs_reno=%s\n", m[2], n[2], r[2] }' "$LOG/cc"
