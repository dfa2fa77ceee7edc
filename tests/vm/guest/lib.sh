# lib.sh - helpers for guest test scripts (busybox sh), sourced as
# ". /mltcp/lib.sh".  Results go to the console as
#   MLTCP-VM-RESULT name=<test> status=pass|fail|skip [key=value ...]
# which tests/vm/run.sh collects.

# Debian's busybox sh prefers its own applets over PATH; functions win over
# both, so these name the real iproute2 and ethtool.
ip() { /usr/sbin/ip "$@"; }
tc() { /usr/sbin/tc "$@"; }
ss() { /usr/sbin/ss "$@"; }

vm_result() {	# name status [details...]
	local n=$1 s=$2
	shift 2
	echo "MLTCP-VM-RESULT name=$n status=$s $*"
}

# check NAME CMD...: run CMD; pass if it succeeds, else fail with its output.
check() {
	local n=$1 out
	shift
	if out=$("$@" 2>&1); then
		vm_result "$n" pass
	else
		vm_result "$n" fail
		echo "$out" | sed 's/^/#   /' | tail -n 20
	fi
}

# Integer comparisons of decimal fractions: awk does the arithmetic.
float_le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }

# Value of key=... in a line of key=value words.
kv() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1; }

# ---------------------------------------------------------------------------
# Two namespaces, mltcp-a (sender, 10.77.0.1) and mltcp-b (receiver,
# 10.77.0.2), joined through a bridge in mltcp-br.  The bottleneck lives in
# mltcp-br (on a qdisc of the sender's own veth the sender would never be
# cwnd-limited): tbf at NET_RATE on the data direction, netem delay NET_DELAY
# on the ack direction.  Offloads off on every veth end so packets are MSS
# sized, as on a real path.
# 10 Mbit/s stays well below what TCG moves even on a busy host, so the tbf
# (not the emulated CPU) is the bottleneck and its short queue makes losses.
NET_RATE=${NET_RATE:-10mbit}
NET_BURST=${NET_BURST:-16kb}
NET_LIMIT=${NET_LIMIT:-16kb}
NET_DELAY=${NET_DELAY:-2ms}
# Random loss on the data path (e.g. 1%), for tests that must see backoffs
# even when the emulated CPU, not the tbf, limits the rate; empty: none.
NET_LOSS=${NET_LOSS:-}
VMTOOL=/mltcp/mltcp_vmtool
A="ip netns exec mltcp-a"
B="ip netns exec mltcp-b"

net_offloads_off() {	# ns dev
	if [ -x /usr/sbin/ethtool ]; then
		ip netns exec "$1" /usr/sbin/ethtool -K "$2" tso off gso off gro off >/dev/null 2>&1
	else
		ip -n "$1" link set dev "$2" gso_max_segs 1 gro_max_size 1500 2>/dev/null
	fi
}

# net_keep_flow_order NS DEV: RPS over every CPU on DEV's receive queues, so
# each flow is processed on one CPU and its packets stay in order; a veth
# otherwise queues a packet on the CPU that sent it (tools/testbed/mltcp-testbed
# says what that reordering costs).
net_keep_flow_order() {
	_cpus=$(grep -c '^processor' /proc/cpuinfo)
	_mask=$(printf '%x' $(((1 << _cpus) - 1)))
	ip netns exec "$1" sh -c "for q in /sys/class/net/$2/queues/rx-*; do echo $_mask > \$q/rps_cpus || exit 1; done"
}

net_down() {
	for ns in mltcp-a mltcp-b mltcp-br; do
		ip netns del "$ns" 2>/dev/null
	done
	return 0
}

net_up() {
	net_down
	modprobe -a veth bridge sch_netem sch_tbf || return 1
	ip netns add mltcp-a && ip netns add mltcp-b && ip netns add mltcp-br || return 1
	ip -n mltcp-br link add br0 type bridge || return 1
	ip link add a0 netns mltcp-a type veth peer name a1 netns mltcp-br || return 1
	ip link add b0 netns mltcp-b type veth peer name b1 netns mltcp-br || return 1
	for d in a1 b1; do
		ip -n mltcp-br link set "$d" master br0 up
		net_offloads_off mltcp-br "$d"
	done
	ip -n mltcp-br link set br0 up
	ip -n mltcp-a addr add 10.77.0.1/24 dev a0
	ip -n mltcp-b addr add 10.77.0.2/24 dev b0
	for x in a b; do
		ip -n "mltcp-$x" link set lo up
		ip -n "mltcp-$x" link set "${x}0" up
		net_offloads_off "mltcp-$x" "${x}0"
		ip netns exec "mltcp-$x" sysctl -q -w net.ipv4.tcp_no_metrics_save=1
		# Large receive buffers: the receiver window must not be the limit.
		ip netns exec "mltcp-$x" sysctl -q -w net.ipv4.tcp_rmem="4096 1048576 6291456"
	done
	if [ -n "$NET_LOSS" ]; then
		tc -n mltcp-br qdisc add dev b1 root handle 1: netem loss "$NET_LOSS" &&
		tc -n mltcp-br qdisc add dev b1 parent 1:1 handle 10: tbf rate "$NET_RATE" \
			burst "$NET_BURST" limit "$NET_LIMIT" || return 1
	else
		tc -n mltcp-br qdisc add dev b1 root tbf rate "$NET_RATE" burst "$NET_BURST" \
			limit "$NET_LIMIT" || return 1
	fi
	tc -n mltcp-br qdisc add dev a1 root netem delay "$NET_DELAY" || return 1
	# Several tries: with NET_LOSS the netem drops echo requests too, and one
	# lost ping must not fail the setup (it did, about once in 50 runs).
	for _ in $(seq 1 20); do
		$A ping -c 1 -W 1 10.77.0.2 >/dev/null 2>&1 && return 0
	done
	echo "# net_up: 10.77.0.2 unreachable from mltcp-a after 20 pings"
	return 1
}

# wait_listening FILE: until a server started with output to FILE listens.
wait_listening() {
	for _ in $(seq 1 100); do
		grep -q listening "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# transfer PORT CLIENT_ARGS...: server in mltcp-b, client in mltcp-a; prints
# the client's line then the server's line.
transfer() {
	local port=$1 srv=/tmp/mltcp-srv.$1 pid
	shift
	$B "$VMTOOL" server --port "$port" --count 1 >"$srv" 2>&1 &
	pid=$!
	wait_listening "$srv"
	$A "$VMTOOL" client --host 10.77.0.2 --port "$port" "$@" | grep -v '^CLIENT-HOLDING'
	wait "$pid"
	grep '^SERVER bytes' "$srv"
}
