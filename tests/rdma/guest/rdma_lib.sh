# rdma_lib.sh - shared set-up of the soft-RoCE guest tests (sourced).
#
# Topology.  rxe in 6.1 opens its UDP 4791 socket in the initial network
# namespace only (netns support came later), so two rxe devices in two
# namespaces cannot talk (measured: RDMA_CM_EVENT_UNREACHABLE).  Both ends
# therefore live in the guest's initial namespace, on veths a0 (10.77.0.1,
# rxea) and b0 (10.77.0.2, rxeb) joined by a bridge in namespace mltcp-br,
# which holds the bottleneck (htb + red ecn on b1).  Policy routing makes
# packets between the two local addresses leave through their own veth
# instead of the loopback: rules "iif lo" (output lookups) and "oif <dev>"
# (rxe's and rdma_cm's device-bound lookups) select per-destination tables,
# and the local table moves below them.
. /mltcp/lib.sh
R=/mltcp/bin/mltcp-rdma
A_IP=10.77.0.1
B_IP=10.77.0.2
LOG=/tmp/mltcp-rdma
mkdir -p $LOG

rdma_net_down() {
	rdma link del rxea 2>/dev/null
	rdma link del rxeb 2>/dev/null
	ip link del a0 2>/dev/null
	ip link del b0 2>/dev/null
	ip netns del mltcp-br 2>/dev/null
	for p in 10 11 12 13; do ip rule del pref $p 2>/dev/null; done
	ip rule add pref 0 lookup local 2>/dev/null
	ip rule del pref 100 2>/dev/null
	return 0
}

rdma_net_up() {
	rdma_net_down
	ip netns add mltcp-br || return 1
	ip -n mltcp-br link add br0 type bridge || return 1
	ip link add a0 type veth peer name a1 netns mltcp-br || return 1
	ip link add b0 type veth peer name b1 netns mltcp-br || return 1
	for d in a1 b1; do ip -n mltcp-br link set $d master br0 up || return 1; done
	ip -n mltcp-br link set br0 up
	ip addr add $A_IP/32 dev a0 && ip addr add $B_IP/32 dev b0 || return 1
	ip link set a0 up && ip link set b0 up || return 1
	for d in all default a0 b0; do
		sysctl -q -w net.ipv4.conf.$d.rp_filter=0
		sysctl -q -w net.ipv4.conf.$d.accept_local=1
	done
	ip route add $B_IP dev a0 src $A_IP table 101 || return 1
	ip route add $A_IP dev b0 src $B_IP table 102 || return 1
	ip rule add pref 10 iif lo to $B_IP lookup 101
	ip rule add pref 11 iif lo to $A_IP lookup 102
	ip rule add pref 12 oif a0 to $B_IP lookup 101
	ip rule add pref 13 oif b0 to $A_IP lookup 102
	ip rule add pref 100 lookup local && ip rule del pref 0 || return 1
	ping -c 1 -W 5 -I $A_IP $B_IP >/dev/null || return 1
	rdma link add rxea type rxe netdev a0 && rdma link add rxeb type rxe netdev b0
}

# Bottleneck on the bridge port towards the receiver, shaped as a RoCE
# switch port: RoCEv2 (UDP 4791) in its own class, htb at RATE with a RED
# child that ECN-marks between MIN and MAX bytes of queue; everything else
# (ARP, IPv6 neighbour discovery) in a small class of its own without RED.
# With one RED queue for all, RED dropped the non-ECT ARP replies towards
# b0 ("early" drops), b0's neighbour entry for a0 went FAILED and every
# answer of rxeb was discarded (unresolved_discards in
# /proc/net/stat/arp_cache): the two-job stall in docs/rdma.md.
bottleneck() {	# rate min max
	tc -n mltcp-br qdisc del dev b1 root 2>/dev/null
	tc -n mltcp-br qdisc add dev b1 root handle 1: htb default 20 &&
	tc -n mltcp-br class add dev b1 parent 1: classid 1:1 htb rate "$1" burst 16k &&
	tc -n mltcp-br class add dev b1 parent 1:1 classid 1:10 htb rate "$1" burst 16k prio 1 &&
	tc -n mltcp-br class add dev b1 parent 1:1 classid 1:20 htb rate 64kbit ceil "$1" burst 16k prio 0 &&
	tc -n mltcp-br filter add dev b1 parent 1: protocol ip prio 1 u32 \
		match ip protocol 17 0xff match ip dport 4791 0xffff flowid 1:10 &&
	tc -n mltcp-br qdisc add dev b1 parent 1:10 handle 10: red limit 400000 min "$2" max "$3" \
		avpkt 1100 burst 20 bandwidth "$1" probability 0.2 ecn
}

# server NAME PORT: start a server in the background, wait until it listens.
server() {
	$R server --bind $B_IP --port "$2" --idle-timeout 20 >$LOG/srv-$1 2>&1 &
	eval "SRV_$1=$!"
	for _ in $(seq 1 100); do
		grep -q listening $LOG/srv-$1 && return 0
		sleep 0.05
	done
	return 1
}


BPFFS=/sys/fs/bpf
RX=$BPFFS/mltcp-rdma-rx
TX=$BPFFS/mltcp-rdma-tx
observers_up() {
	grep -q " $BPFFS bpf" /proc/mounts || mount -t bpf bpf $BPFFS
	$R observe --iface b0 --pin $RX && $R observe --iface a0 --pin $TX
}
observers_down() {
	$R observe --iface b0 --pin $RX --detach 2>/dev/null
	$R observe --iface a0 --pin $TX --detach 2>/dev/null
	return 0
}
# capture_start IF: tcpdump of RoCEv2 (UDP 4791) on IF, whole packets, to
# $LOG/cap-IF.pcap; capture_stop ends all of them (from any subshell: the
# pids are in a file) once they have written everything.
# Debian's tcpdump switches to a user "tcpdump" unless -Z root, and looks
# root up even then: the initramfs has no user database, so give it one.
capture_start() {
	[ -f /etc/passwd ] || echo "root:x:0:0:root:/:/bin/sh" >/etc/passwd
	[ -f /etc/group ] || echo "root:x:0:" >/etc/group
	[ -f /etc/nsswitch.conf ] || printf 'passwd: files\ngroup: files\n' >/etc/nsswitch.conf
	rm -f $LOG/cap-$1.pcap
	/usr/sbin/tcpdump -Z root -n -s 0 -B 16384 -U --immediate-mode -i "$1" -w $LOG/cap-$1.pcap udp port 4791 \
		>/dev/null 2>$LOG/tcpdump-$1.err &
	echo $! >>$LOG/capture.pids
	for _ in $(seq 1 100); do
		grep -q "listening on" $LOG/tcpdump-$1.err && return 0
		kill -0 $! 2>/dev/null || break
		sleep 0.05
	done
	cat $LOG/tcpdump-$1.err
	return 1
}
capture_stop() {
	[ -f $LOG/capture.pids ] || return 0
	sleep 0.5
	for p in $(cat $LOG/capture.pids); do kill $p 2>/dev/null; done
	for p in $(cat $LOG/capture.pids); do
		for _ in $(seq 1 100); do kill -0 $p 2>/dev/null || break; sleep 0.05; done
	done
	rm -f $LOG/capture.pids
	return 0
}
rdma_modules() {
	modprobe -a crc32_generic rdma_rxe ib_uverbs rdma_ucm veth bridge sch_htb sch_red \
		sch_ingress cls_bpf cls_u32
}
