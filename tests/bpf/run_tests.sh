#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# run_tests.sh - host-kernel tests of the MLTCP BPF datapath (make check-bpf).
#
# Runs as root on the real kernel: loads the struct_ops congestion controls
# with mltcpctl, drives loopback, cross-namespace and cgroup traffic
# (mltcp_traffic.py) and checks the results from getsockopt(TCP_CONGESTION),
# TCP_INFO and `mltcpctl stats --json`.  Holds /run/lock/mltcp-host.lock for
# its whole run; everything it creates is named mltcp-t<pid>-* and removed
# by the EXIT trap, even on failure or Ctrl-C.  Takes about 80 s (the loss
# comparison, ~22 s, included).
#
#   MLTCPCTL=path MLTCP_LIBRARY=path tests/bpf/run_tests.sh [test ...]
#   tests: select cgroup iterations jobhints jobs bulk loss badinput   (default: all)
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
export MLTCPCTL=${MLTCPCTL:-$BUILD/cmake/tools/mltcpctl/mltcpctl}
export MLTCP_LIBRARY=${MLTCP_LIBRARY:-$BUILD/cmake/bpf/libmltcp.so.0}
CTL=$MLTCPCTL
PY=/usr/bin/python3
TRAFFIC="$ROOT/tests/bpf/mltcp_traffic.py"
PYDIR="$ROOT/bpf/python"
TAG=mltcp-t$$
NS_A=$TAG-a NS_R=$TAG-r NS_B=$TAG-b
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
CG_A=$CG2/mltcp-test-$$-a CG_B=$CG2/mltcp-test-$$-b
CG_S=$CG_A/mltcp-seed	# below CG_A: a job of its own from its first hint
WORK=$(mktemp -d /tmp/mltcp-test-XXXXXX)
# Test servers listen on ports just below the ephemeral range: the job tests
# run on the host's loopback, where a port inside it may be some connection's
# local port (an earlier test's client took 47118 once: EADDRINUSE).
read -r EPHEMERAL_LOW _ < /proc/sys/net/ipv4/ip_local_port_range
PORT=$((EPHEMERAL_LOW > 2048 ? EPHEMERAL_LOW - 1024 : 47100))
FAILS=0
PASSES=0

die() { echo "run_tests: $*" >&2; exit 1; }
((EUID == 0)) || die "needs root (struct_ops registration, netns, cgroups)"
[[ -x $CTL ]] || die "mltcpctl not built at $CTL (make cmake-build)"
[[ -e $MLTCP_LIBRARY ]] || die "libmltcp not built at $MLTCP_LIBRARY"
[[ -n $CG2 ]] || die "no cgroup2 mount found"

exec 9>/run/lock/mltcp-host.lock
flock 9

ok() { PASSES=$((PASSES + 1)); echo "  ok   $*"; }
bad() { FAILS=$((FAILS + 1)); echo "  FAIL $*"; }
check() { # check "description" command...
	local what=$1; shift
	if "$@" >"$WORK/last.out" 2>&1; then
		ok "$what"; [[ -s $WORK/last.out ]] && tail -n 1 "$WORK/last.out" | sed 's/^/       : /'
		return 0
	fi
	bad "$what"; sed 's/^/       | /' "$WORK/last.out" | tail -n 15
	return 1
}
# expect_rc RC "description" command...: exit code and a non-empty message
expect_rc() {
	local want=$1 what=$2; shift 2
	"$@" >"$WORK/rc.out" 2>&1
	local rc=$?
	if [[ $rc == "$want" ]] && [[ -s $WORK/rc.out ]]; then
		ok "$what -> exit $rc: $(head -n 1 "$WORK/rc.out")"
	else
		bad "$what: exit $rc, wanted $want"; sed 's/^/       | /' "$WORK/rc.out" | tail -n 5
	fi
}
next_port() { PORT=$((PORT + 1)); }
cc_avail() { grep -qw "$1" /proc/sys/net/ipv4/tcp_available_congestion_control; }
nothing_loaded() {
	[[ ! -e /sys/fs/bpf/mltcp ]] && ! cc_avail mltcp && ! cc_avail mltcp_cubic
}
pyeval() { $PY -c "$@"; }
kernel_at_least() { # MAJOR MINOR
	local maj min
	IFS=. read -r maj min _ < /proc/sys/kernel/osrelease
	((maj > $1 || (maj == $1 && ${min%%[^0-9]*} >= $2)))
}

BG_PIDS=()
cleanup() {
	local p
	for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[[ -e /sys/fs/bpf/mltcp ]] && "$CTL" unload >/dev/null 2>&1
	for ns in $NS_A $NS_R $NS_B; do ip netns del "$ns" 2>/dev/null; done
	for cg in "$CG_S" "$CG_A" "$CG_B"; do
		if [[ -d $cg ]]; then
			while read -r p; do echo "$p" > "$CG2/cgroup.procs"; done < "$cg/cgroup.procs"
			rmdir "$cg"
		fi
	done
}
trap 'cleanup; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

# Leftovers of an earlier crashed run (we hold the lock, so nobody else's).
if [[ -e /sys/fs/bpf/mltcp ]]; then
	echo "run_tests: unloading a leftover MLTCP load"; "$CTL" unload >/dev/null 2>&1
fi
for ns in $(ip netns list | awk '/^mltcp-t[0-9]+-/ { print $1 }'); do
	pid=${ns#mltcp-t}; pid=${pid%%-*}
	kill -0 "$pid" 2>/dev/null || ip netns del "$ns"
done
HOST_DEFAULT_CC=$(cat /proc/sys/net/ipv4/tcp_congestion_control)

# server NS PORT OUT [extra args]: start a one-connection server, wait until listening
server() {
	local ns=$1 port=$2 out=$3; shift 3
	local pre=()
	[[ $ns != - ]] && pre=(nsenter --net=/run/netns/"$ns")
	rm -f "$out" "$out.ready"
	"${pre[@]}" $PY "$TRAFFIC" server --port "$port" --out "$out" --ready "$out.ready" "$@" &
	BG_PIDS+=($!)
	for _ in $(seq 100); do [[ -e $out.ready ]] && return 0; sleep 0.02; done
	echo "server on port $port did not start" >&2; return 1
}
wait_file() { for _ in $(seq 300); do [[ -s $1 ]] && return 0; sleep 0.02; done; return 1; }
json() { pyeval "import json,sys; print(json.load(open('$1'))$2)"; }
# status_json PYEXPR: 'mltcpctl status --json' parses, and PYEXPR (over it, s) holds
status_json() {
	"$CTL" status --json | $PY -c 'import json, sys; s = json.load(sys.stdin); sys.exit(0 if eval(sys.argv[1]) else 1)' "$1"
}

make_ns_pair() { # A <-> B over one veth pair, 10.201.0.1 <-> 10.201.0.2
	ip netns add "$NS_A" && ip netns add "$NS_B" || return 1
	ip link add mltcp$$a netns "$NS_A" type veth peer name mltcp$$b netns "$NS_B" || return 1
	ip -n "$NS_A" addr add 10.201.0.1/24 dev mltcp$$a
	ip -n "$NS_B" addr add 10.201.0.2/24 dev mltcp$$b
	for n in $NS_A $NS_B; do ip -n "$n" link set lo up; done
	ip -n "$NS_A" link set mltcp$$a up && ip -n "$NS_B" link set mltcp$$b up
}
del_ns() { for ns in "$@"; do ip netns del "$ns" 2>/dev/null; done; return 0; }

# ---------------------------------------------------------------------------
test_select() {
	echo "== load, select by setsockopt and sysctl, loopback and across namespaces"
	check "load (all variants)" "$CTL" load
	check "mltcp in tcp_available_congestion_control" cc_avail mltcp
	check "mltcp_cubic in tcp_available_congestion_control" cc_avail mltcp_cubic
	if kernel_at_least 6 4; then
		check "status shows struct_ops links (kernel >= 6.4)" grep -q "struct_ops links" <("$CTL" status)
	else
		check "status shows plain registration (kernel < 6.4)" grep -q "plain registration" <("$CTL" status)
	fi
	for cc in mltcp mltcp_cubic; do
		next_port
		server - $PORT "$WORK/srv.json" --bind 127.0.0.1 --cc $cc
		local c; c=$($PY "$TRAFFIC" client --host 127.0.0.1 --port $PORT --cc $cc --probe)
		wait_file "$WORK/srv.json"
		check "loopback setsockopt($cc): client getsockopt = $cc" \
			test "$(pyeval "import json; print(json.loads('$c')['cc'])")" = $cc
		check "loopback setsockopt($cc): accepted socket = $cc" \
			test "$(json "$WORK/srv.json" "['cc']")" = $cc
	done
	make_ns_pair || { bad "namespace setup"; return; }
	ip netns exec "$NS_A" sysctl -qw net.ipv4.tcp_congestion_control=mltcp_cubic
	ip netns exec "$NS_B" sysctl -qw net.ipv4.tcp_congestion_control=mltcp
	next_port
	server "$NS_B" $PORT "$WORK/srv.json"
	local c; c=$(nsenter --net=/run/netns/"$NS_A" $PY "$TRAFFIC" client --host 10.201.0.2 --port $PORT --probe)
	wait_file "$WORK/srv.json"
	check "cross-netns sysctl: client in $NS_A = mltcp_cubic" \
		test "$(pyeval "import json; print(json.loads('$c')['cc'])")" = mltcp_cubic
	check "cross-netns sysctl: server in $NS_B = mltcp" test "$(json "$WORK/srv.json" "['cc']")" = mltcp
	check "host default untouched" test "$(cat /proc/sys/net/ipv4/tcp_congestion_control)" = "$HOST_DEFAULT_CC"
	check "unload" "$CTL" unload
	check "nothing of MLTCP remains after unload" nothing_loaded

	echo "== load --default (in a namespace) and its restoration"
	ip netns exec "$NS_A" sysctl -qw net.ipv4.tcp_congestion_control=reno
	check "load --default --variant cubic (netns $NS_A)" nsenter --net=/run/netns/"$NS_A" "$CTL" load --default --variant cubic
	check "netns default is mltcp_cubic" test "$(ip netns exec "$NS_A" sysctl -n net.ipv4.tcp_congestion_control)" = mltcp_cubic
	check "only mltcp_cubic registered" bash -c "! grep -qw mltcp /proc/sys/net/ipv4/tcp_available_congestion_control"
	check "unload (netns $NS_A)" nsenter --net=/run/netns/"$NS_A" "$CTL" unload
	check "netns default restored to reno" test "$(ip netns exec "$NS_A" sysctl -n net.ipv4.tcp_congestion_control)" = reno
	check "nothing of MLTCP remains" nothing_loaded

	echo "== plain struct_ops registration (the pre-6.4 path, forced)"
	check "MLTCP_FORCE_PLAIN=1 load" env MLTCP_FORCE_PLAIN=1 "$CTL" load
	check "status shows plain registration" grep -q "plain registration" <("$CTL" status)
	check "ops_mltcp pinned" test -e /sys/fs/bpf/mltcp/ops_mltcp
	next_port
	server "$NS_B" $PORT "$WORK/srv.json" --cc mltcp_cubic
	c=$(nsenter --net=/run/netns/"$NS_A" $PY "$TRAFFIC" client --host 10.201.0.2 --port $PORT --cc mltcp --probe)
	wait_file "$WORK/srv.json"
	check "plain: client = mltcp" test "$(pyeval "import json; print(json.loads('$c')['cc'])")" = mltcp
	check "plain: server = mltcp_cubic" test "$(json "$WORK/srv.json" "['cc']")" = mltcp_cubic
	check "unload (plain)" "$CTL" unload
	check "nothing of MLTCP remains" nothing_loaded
	del_ns "$NS_A" "$NS_B"
}

# ---------------------------------------------------------------------------
# in_cg CG command...: run a command inside cgroup CG
in_cg() { local cg=$1; shift; bash -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" "$@"; }

test_cgroup() {
	echo "== per-cgroup attach"
	mkdir -p "$CG_A" "$CG_B"
	check "load" "$CTL" load
	check "attach reno to $CG_A" "$CTL" attach --cgroup "$CG_A" --variant reno
	check "attach cubic to $CG_B" "$CTL" attach --cgroup "$CG_B" --variant cubic
	expect_rc 1 "second attach to the same cgroup" "$CTL" attach --cgroup "$CG_A" --variant cubic
	check "status lists both cgroups" bash -c "'$CTL' status | grep -q 'mltcp-test-$$-a *mltcp$' && '$CTL' status | grep -q 'mltcp-test-$$-b *mltcp_cubic$'"
	check "status --json lists both cgroups" status_json \
		"sorted((a['cgroup'], a['cc']) for a in s['attachments']) == [('$CG_A', 'mltcp'), ('$CG_B', 'mltcp_cubic')] and all(v['registered'] for v in s['variants'])"
	local c
	# active: the client asks for reno; the cgroup's variant wins
	for pair in "$CG_A:mltcp" "$CG_B:mltcp_cubic" "-:reno"; do
		local cg=${pair%%:*} want=${pair##*:}
		next_port
		server - $PORT "$WORK/srv.json" --bind 127.0.0.1 --cc cubic
		if [[ $cg == - ]]; then
			c=$($PY "$TRAFFIC" client --host 127.0.0.1 --port $PORT --cc reno --probe)
		else
			c=$(in_cg "$cg" $PY "$TRAFFIC" client --host 127.0.0.1 --port $PORT --cc reno --probe)
		fi
		wait_file "$WORK/srv.json"
		check "active in ${cg##*/} (asked reno) -> $want" \
			test "$(pyeval "import json; print(json.loads('$c')['cc'])")" = "$want"
		check "server outside the cgroups keeps its own cubic" test "$(json "$WORK/srv.json" "['cc']")" = cubic
	done
	# passive: a listener in the cgroup, the client outside
	next_port
	rm -f "$WORK/srv.json" "$WORK/srv.json.ready"
	in_cg "$CG_A" $PY "$TRAFFIC" server --bind 127.0.0.1 --port $PORT --cc cubic --out "$WORK/srv.json" --ready "$WORK/srv.json.ready" &
	BG_PIDS+=($!)
	for _ in $(seq 100); do [[ -e $WORK/srv.json.ready ]] && break; sleep 0.02; done
	c=$($PY "$TRAFFIC" client --host 127.0.0.1 --port $PORT --cc reno --probe)
	wait_file "$WORK/srv.json"
	check "passive in ${CG_A##*/} (listener asked cubic) -> mltcp" test "$(json "$WORK/srv.json" "['cc']")" = mltcp
	check "client outside keeps reno" test "$(pyeval "import json; print(json.loads('$c')['cc'])")" = reno
	check "detach $CG_A" "$CTL" detach --cgroup "$CG_A"
	expect_rc 1 "detach again" "$CTL" detach --cgroup "$CG_A"
	next_port
	server - $PORT "$WORK/srv.json" --bind 127.0.0.1
	c=$(in_cg "$CG_A" $PY "$TRAFFIC" client --host 127.0.0.1 --port $PORT --cc reno --probe)
	wait_file "$WORK/srv.json"
	check "after detach: ${CG_A##*/} asks reno -> reno" \
		test "$(pyeval "import json; print(json.loads('$c')['cc'])")" = reno
	check "unload (with ${CG_B##*/} still attached)" "$CTL" unload
	check "no sock_ops program left on ${CG_B##*/}" bash -c "! bpftool cgroup show '$CG_B' | grep -q sock_ops"
	check "nothing of MLTCP remains" nothing_loaded
}

# ---------------------------------------------------------------------------
# norm_of CC: the norm (1/1024) CC's variant applies now, as mltcpctl shows it
norm_of() {
	local key=norm_reno
	[[ $1 == mltcp_cubic ]] && key=norm_cubic
	"$CTL" status | awk -v k=$key '$1 == k { print $2 }'
}

# check_phases FILE K N MODE SLOPE INTERCEPT [EXTRA [NORM]]: assert iteration tracking
# from phase-end stats; EXTRA iterations more are expected (1 when a cgroup's
# sock_ops set the cc at connect: the SYN's acked byte is the first "iteration")
check_phases() {
	$PY - "$1" "$2" "$3" "$4" "$5" "$6" "${7:-0}" "${8:-1024}" <<'EOF'
import json, sys
f, K, N, mode, slope, intercept = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
extra, norm = int(sys.argv[7]), int(sys.argv[8])
d = json.load(open(f))
ph = d["phase_end"]
errs = []
if len(ph) != K or any(p is None for p in ph):
    sys.exit("missing stats: %r" % ph)
last = ph[-1]
if last["iterations"] != K - 1 + extra:
    errs.append("iterations %d, want %d" % (last["iterations"], K - 1 + extra))
want_h = K - 1 + extra if mode == "hint" else 0
if last["hinted"] != want_h or last["detected"] != K - 1 + extra - want_h:
    errs.append("hinted %d detected %d, want %d/%d" % (last["hinted"], last["detected"], want_h, K - 1 + extra - want_h))
for i, p in enumerate(ph[1:], 2):
    if abs(p["bytes_per_iter"] - N) > 0.05 * N:
        errs.append("phase %d: bytes_per_iter %d not within 5%% of %d" % (i, p["bytes_per_iter"], N))
    r = p["bytes_ratio"]
    if r is None or r < 0.95:
        errs.append("phase %d: bytes_ratio %r at phase end, want ~1" % (i, r))
        continue
    r1024 = round(r * 1024)
    f = intercept + (slope * min(r1024, 1024) >> 10)
    f = min(max(f * norm >> 10 if norm != 1024 else f, 64), 4096)
    if round(p["gain"] * 1024) != f:
        errs.append("phase %d: gain %.4f, F(%.3f) = %.4f" % (i, p["gain"], r, f / 1024))
print("phase ends: iterations=%d hinted=%d bytes_per_iter=%d ratio=%s gain=%.3f" % (
    last["iterations"], last["hinted"], last["bytes_per_iter"], last["bytes_ratio"], last["gain"]))
if errs:
    sys.exit("; ".join(errs))
EOF
}

run_iterations() { # CC MODE K N GAP_MS -> $WORK/iter.json
	next_port
	server - $PORT "$WORK/srv.json" --bind 127.0.0.1
	local hint=(); [[ $2 == hint ]] && hint=(--hint --pydir "$PYDIR")
	$PY "$TRAFFIC" client --host 127.0.0.1 --port $PORT --cc "$1" --iterations "$3" \
		--bytes "$4" --gap-ms "$5" "${hint[@]}" > "$WORK/iter.json"
	wait_file "$WORK/srv.json"
}

test_iterations() {
	echo "== iteration tracking on the real kernel"
	# Boundary threshold 20..50 ms: a stall of a loaded machine inside a
	# phase is not a boundary, and the 60 ms compute gap always is.
	check "load --param idle_min_us=20000" "$CTL" load --param idle_min_us=20000
	local K=6 N=2000000
	for cc in mltcp mltcp_cubic; do
		run_iterations $cc detect $K $N 60
		check "$cc detection: $((K - 1)) iterations of $N B, ratio ~1 at phase ends, gain = F" \
			check_phases "$WORK/iter.json" $K $N detect 1536 256 0 "$(norm_of $cc)"
	done
	check "set slope=2048 intercept=128 at runtime" "$CTL" set slope=2048 intercept=128
	run_iterations mltcp detect $K $N 60
	check "mltcp detection after set: gain follows the new F" check_phases "$WORK/iter.json" $K $N detect 2048 128 0 "$(norm_of mltcp)"
	# A live flow in the Prometheus exposition and in a repeating table.
	next_port
	server - $PORT "$WORK/srv.json" --bind 127.0.0.1
	$PY "$TRAFFIC" client --host 127.0.0.1 --port $PORT --cc mltcp_cubic --iterations 2 \
		--bytes 100000 --gap-ms 60 --hold 2 > /dev/null &
	BG_PIDS+=($!)
	sleep 0.8
	check "stats --prometheus shows the live flow" bash -c \
		"'$CTL' stats --prometheus | grep -E '^mltcp_flow_gain_ratio\{variant=\"mltcp_cubic\",netns=\"[0-9]+\",local=\"127.0.0.1:[0-9]+\",remote=\"127.0.0.1:$PORT\"\} '"
	check "stats --watch 0.2 repeats" bash -c \
		"timeout 0.9 '$CTL' stats --watch 0.2 | grep -c '^netns' | awk '{ exit !(\$1 >= 3) }'"
	wait_file "$WORK/srv.json"
	# Hints only: make detection impossible (idle threshold >= 5 s).
	check "set idle_min_us=5000000 idle_max_us=10000000" "$CTL" set idle_min_us=5000000 idle_max_us=10000000 slope=1536 intercept=256
	for cc in mltcp mltcp_cubic; do
		run_iterations $cc hint $K 1500000 10
		check "$cc hints: $((K - 1)) hinted iterations of 1500000 B, gain = F" \
			check_phases "$WORK/iter.json" $K 1500000 hint 1536 256 0 "$(norm_of $cc)"
	done
	# A slow reader closes the window; the sender pauses with data queued:
	# not an idle gap, so no iteration (and a neutral gain).
	check "set idle_min_us=2000 idle_max_us=50000 (defaults)" "$CTL" set idle_min_us=2000 idle_max_us=50000
	next_port
	server - $PORT "$WORK/srv.json" --bind 127.0.0.1 --stall-every 4000000 --stall-ms 100
	$PY "$TRAFFIC" client --host 127.0.0.1 --port $PORT --cc mltcp --bulk 24000000 > "$WORK/slow.json"
	wait_file "$WORK/srv.json"
	check "receive-window stalls of a slow reader are no iteration boundaries" \
		$PY - "$WORK/slow.json" <<'EOF2'
import json, sys
d = json.load(open(sys.argv[1]))
st = d["stats"]
print("%.2f s for %d B (reader stalls 100 ms per 4 MB); iterations %s, gains %s" % (
    d["seconds"], d["sent"], sorted({s["iterations"] for s in st}), sorted({s["gain"] for s in st})))
# Six stalls of 100 ms: counted as boundaries they give 3-5 iterations (the
# unfiltered datapath measured 3).  At most one is allowed: if the writer
# itself (a Python thread on a busy 2-core host) leaves the queue empty for
# more than the 2 ms threshold, that is a real application pause.
sys.exit(0 if st and d["seconds"] > 0.4 and all(s["iterations"] <= 1 for s in st)
         and all(s["gain"] == 1.0 for s in st if s["iterations"] == 0) else 1)
EOF2
	check "stats entries removed when sockets close" bash -c "sleep 0.2; '$CTL' stats --json | grep -q '\"flows\": \[\]'"
	check "unload" "$CTL" unload
}

# ---------------------------------------------------------------------------
# make_bottleneck BURST LIMIT: $NS_A (10.202.1.1) -> router $NS_R -> $NS_B
# (10.202.2.2), a 200 Mbit/s tbf with that burst and queue towards $NS_B.
make_bottleneck() {
	local burst=$1 limit=$2
	ip netns add "$NS_A" && ip netns add "$NS_R" && ip netns add "$NS_B" || return 1
	ip link add mltcp$$a netns "$NS_A" type veth peer name mltcp$$ra netns "$NS_R"
	ip link add mltcp$$b netns "$NS_B" type veth peer name mltcp$$rb netns "$NS_R"
	ip -n "$NS_A" addr add 10.202.1.1/24 dev mltcp$$a
	ip -n "$NS_R" addr add 10.202.1.2/24 dev mltcp$$ra
	ip -n "$NS_R" addr add 10.202.2.1/24 dev mltcp$$rb
	ip -n "$NS_B" addr add 10.202.2.2/24 dev mltcp$$b
	for n in $NS_A $NS_R $NS_B; do ip -n "$n" link set lo up; ip netns exec "$n" sysctl -qw net.ipv4.tcp_no_metrics_save=1; done
	ip -n "$NS_A" link set mltcp$$a up; ip -n "$NS_B" link set mltcp$$b up
	ip -n "$NS_R" link set mltcp$$ra up; ip -n "$NS_R" link set mltcp$$rb up
	ip -n "$NS_A" route add default via 10.202.1.2
	ip -n "$NS_B" route add default via 10.202.2.1
	ip netns exec "$NS_R" sysctl -qw net.ipv4.ip_forward=1
	tc -n "$NS_R" qdisc add dev mltcp$$rb root tbf rate 200mbit burst "$burst" limit "$limit"
}

bulk_run() { # CC OUT [client args]: 60 MB from $NS_A to $NS_B through the tbf
	local cc=$1 out=$2; shift 2
	next_port
	server "$NS_B" $PORT "$WORK/srv.json"
	nsenter --net=/run/netns/"$NS_A" $PY "$TRAFFIC" client --host 10.202.2.2 --port $PORT \
		--cc "$cc" --bulk 60000000 "$@" > "$out"
	wait_file "$WORK/srv.json"
}

test_bulk() {
	echo "== bulk transfer through a bottleneck (namespaces, tbf 200 Mbit/s)"
	check "namespaces and tbf bottleneck (burst 128 KB, queue 256 KB)" make_bottleneck 128kb 256kb ||
		{ del_ns "$NS_A" "$NS_R" "$NS_B"; return; }
	check "load" "$CTL" load
	local cc
	for cc in mltcp mltcp_cubic; do
		check "set slope=1536 intercept=256 normalize=1 (defaults)" "$CTL" set slope=1536 intercept=256 normalize=1
		bulk_run $cc "$WORK/bulk.json"
		check "$cc: same bytes and sha256 at the receiver" $PY - "$WORK/bulk.json" "$WORK/srv.json" $cc <<'EOF2'
import json, sys
c, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
print("sent %d received %d in %.2f s" % (c["sent"], s["bytes"], c["seconds"]))
sys.exit(0 if c["sent"] == s["bytes"] and c["sha256"] == s["sha256"] and c["cc"] == sys.argv[3] else 1)
EOF2
		check "$cc: sawtooth (cuts and climbs), neutral gain without iteration structure" \
			$PY - "$WORK/bulk.json" <<'EOF2'
import json, sys
d = json.load(open(sys.argv[1]))
w = d["cwnd"]
# A cut: cwnd falls to <= 75% of the running peak; between cuts it grows.
# Not 70%: CUBIC keeps 717/1024 of cwnd, so its cuts land on 70% itself
# (180 -> 126) and rounding decided whether they counted.
cuts, peak, grow = 0, w[0], 0
for a, b in zip(w, w[1:]):
    if b <= 0.75 * peak and b < a:
        cuts += 1
        peak = b
    else:
        grow += b > a
        peak = max(peak, b)
# A scheduler stall of the sending thread longer than the 8 MB send buffer
# takes to drain (~0.3 s), or a pause before the first bytes, is a real idle
# gap: on a loaded machine it may end one "iteration".  The property under
# test is that the gain stays neutral, except where the core's first-iteration
# seed may act: the first 4 MiB (MLTCP_SEED_BYTES_MAX) after that boundary
# (mltcp_traffic.py marks those samples).
st = d["stats"]
seeded = [s for s in st if s["seeded"]]
rest = [s for s in st if s not in seeded]
gains = sorted({s["gain"] for s in rest})
iters = max(s["iterations"] for s in st) if st else -1
print("cwnd samples %d, min %d max %d, cuts %d, growth steps %d; stats samples %d gains %s "
      "iterations %d; %d samples in a seeded first iteration, gains %s"
      % (len(w), min(w), max(w), cuts, grow, len(st), gains, iters, len(seeded),
         sorted({s["gain"] for s in seeded})))
ok = cuts >= 2 and grow >= 3 * cuts and rest and gains == [1.0] and iters <= 1 \
     and all(s["bytes_ratio"] is None for s in rest)
sys.exit(0 if ok else 1)
EOF2
		# The gain really scales growth: hint one huge iteration (bytes_ratio
		# stays ~0) with F = intercept = 4, and compare the climb.
		# Like its base: the kernel's own algorithm on the same path.
		local base=reno; [[ $cc == mltcp_cubic ]] && base=cubic
		bulk_run $base "$WORK/bulk_base.json"
		check "$cc climbs like the kernel's $base (ratio 0.5..1.8)" \
			$PY - "$WORK/bulk.json" "$WORK/bulk_base.json" <<'EOF2'
import json, sys
# climb_seg_per_s: cwnd segments gained per second after the first cut,
# without a seeded first iteration (mltcp_traffic.py).
a, b = (json.load(open(f)) for f in sys.argv[1:3])
ca, cb = a["climb_seg_per_s"], b["climb_seg_per_s"]
if not ca or not cb:
    print("no climb measured: %s %s, %s %s" % (a["cc"], ca, b["cc"], cb))
    sys.exit(1)
print("climb %s: %.0f seg/s (%d seeded samples left out), %s: %.0f seg/s (x%.2f); %.2f s vs %.2f s"
      % (a["cc"], ca, a["climb_excluded_samples"], b["cc"], cb, ca / cb, a["seconds"], b["seconds"]))
sys.exit(0 if 0.5 <= ca / cb <= 1.8 else 1)
EOF2
		# F scales Reno's additive increase and CUBIC's clock: F = 4 must
		# climb at least twice as fast as F = 1 for both (growth alone:
		# the decrease is left unscaled for this run; no norm, which would
		# bring a constant F = 4 back to 1).
		local want=">=2"
		check "set slope=0 intercept=4096 scale_decrease=0 normalize=0 (F = 4 at any ratio)" \
			"$CTL" set slope=0 intercept=4096 scale_decrease=0 normalize=0
		bulk_run $cc "$WORK/bulkF.json" --hint-bytes 1000000000000 --pydir "$PYDIR"
		check "$cc: gain F = 4 (hinted) applies; climb vs F = 1 $want" \
			$PY - "$WORK/bulk.json" "$WORK/bulkF.json" 4 "$want" <<'EOF2'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
F, want = float(sys.argv[3]), sys.argv[4]
gains = sorted({s["gain"] for s in b["stats"]})
ca, cb = a["climb_seg_per_s"], b["climb_seg_per_s"]
if not ca or not cb:
    print("no climb measured: F=1 %s, F=%g %s" % (ca, F, cb))
    sys.exit(1)
print("climb F=1: %.0f seg/s (%d seeded samples left out), F=%g: %.0f seg/s (x%.2f); "
      "F=%g run gains %s" % (ca, a["climb_excluded_samples"], F, cb, cb / ca, F, gains))
sys.exit(0 if gains == [F] and cb / ca >= float(want[2:]) else 1)
EOF2
		# F scales the decrease: with F = 4 a loss keeps (1 + beta)/2 of
		# the window (Reno 3/4, CUBIC 870/1024) instead of beta (1/2,
		# 717/1024).  Kept fraction per loss event: the new ssthresh over
		# the largest cwnd sampled since the previous one.
		# A second unscaled run: the decrease check below pools both.
		bulk_run $cc "$WORK/bulkF2.json" --hint-bytes 1000000000000 --pydir "$PYDIR"
		check "set scale_decrease=1" "$CTL" set scale_decrease=1
		bulk_run $cc "$WORK/bulkD.json" --hint-bytes 1000000000000 --pydir "$PYDIR"
		bulk_run $cc "$WORK/bulkD2.json" --hint-bytes 1000000000000 --pydir "$PYDIR"
		local keep="0.50 0.75"; [[ $cc == mltcp_cubic ]] && keep="0.70 0.85"
		check "$cc: gain F = 4 scales the decrease (kept fraction $keep, +-0.06)" \
			$PY - "$WORK/bulkF.json" "$WORK/bulkF2.json" "$WORK/bulkD.json" \
			"$WORK/bulkD2.json" $keep <<'EOF2'
import json, statistics, sys
def events(d):
    """ssthresh / preceding cwnd peak, per loss event of one run."""
    out, peak, last = [], 0, None
    for cwnd, ss in zip(d["cwnd"], d["ssthresh"]):
        if last is not None and ss != last and ss < 0x7fffffff and peak:
            out.append(ss / peak)
            peak = 0
        last = ss
        peak = max(peak, cwnd)
    return out
def kept(files):
    """Median over the loss events of two runs.  A 60 MB run with the large
    queue sees 2-15 events; most are exact (ssthresh is computed from cwnd),
    but the peak comes from cwnd samples a few ms apart and one event can be
    off (a CI run measured 0.40 as the median of two events where 0.50 was
    due), so the median needs at least three."""
    out = [x for f in files for x in events(json.load(open(f)))]
    return statistics.median(out) if len(out) >= 3 else None, len(out)
(off, n_off), (on, n_on) = kept(sys.argv[1:3]), kept(sys.argv[3:5])
print("kept fraction per loss, F = 4: unscaled %s (%d events), scaled %s (%d events)" % (
    off and "%.2f" % off, n_off, on and "%.2f" % on, n_on))
want_off, want_on = float(sys.argv[5]), float(sys.argv[6])
sys.exit(0 if off is not None and on is not None and abs(off - want_off) <= 0.06
         and abs(on - want_on) <= 0.06 else 1)
EOF2
	done
	check "unload" "$CTL" unload
	del_ns "$NS_A" "$NS_R" "$NS_B"
}

# ---------------------------------------------------------------------------
# Losses with MLTCP neutral (enabled=0) must be those of the base algorithm.
# The host kernel sometimes runs no program for a struct_ops call; a skipped
# .ssthresh returned pointer bits that became cwnd (mltcp_guard in
# bpf/mltcp.bpf.c), and 4 flows into a 32 KB queue then retransmitted 4-8x
# as much as the kernel's reno.  Runs alternate so machine load hits both alike.
# One run's count varies 3.5x between runs of the same algorithm (48 runs:
# 330-1460 segments, reno and mltcp alike), so the check sums three runs of
# each and allows 2.5x: a false failure about 1 in 1000 by resampling those
# runs, against 6% for two runs and 1.5x (which a CI run hit).
LOSS_FLOWS=4 LOSS_ITER=30 LOSS_BYTES=500000 LOSS_GAP_MS=70

retrans_of_a() { ip netns exec "$NS_A" nstat -as TcpRetransSegs 2>/dev/null | awk '$1 == "TcpRetransSegs" { print $2 }'; }

guard_repairs() { "$CTL" stats --prometheus | awk '$1 == "mltcp_window_repairs_total" { print $2 }'; }

loss_run() { # CC: $LOSS_FLOWS iteration flows $NS_A -> $NS_B; prints TcpRetransSegs of $NS_A
	local cc=$1 i before after pids=() rc=0 repairs=() guard0 guard1 flows=0
	[[ $cc == mltcp ]] && repairs=(--repairs)
	guard0=$(guard_repairs)
	for ((i = 1; i <= LOSS_FLOWS; i++)); do
		next_port
		server "$NS_B" $PORT "$WORK/loss$i.json" >&2 || return 1
		nsenter --net=/run/netns/"$NS_A" $PY "$TRAFFIC" client --host 10.202.2.2 --port $PORT \
			--cc "$cc" --iterations $LOSS_ITER --bytes $LOSS_BYTES --gap-ms $LOSS_GAP_MS \
			"${repairs[@]}" > "$WORK/lossc$i.json" &
		pids+=($!)
	done
	before=$(retrans_of_a)
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	after=$(retrans_of_a)
	((rc == 0)) || return 1
	if [[ $cc == mltcp ]]; then
		# The guard's repairs, per socket (libmltcp) and host-wide: the same.
		guard1=$(guard_repairs)
		for ((i = 1; i <= LOSS_FLOWS; i++)); do
			flows=$((flows + $(json "$WORK/lossc$i.json" "['window_repairs']")))
		done
		echo "  window repairs: $flows on the flows' sockets, $((guard1 - guard0)) host-wide" >&2
		((flows == guard1 - guard0)) || { echo "  per-socket repairs differ from the host's" >&2; return 1; }
	fi
	echo $((after - before))
}

test_loss() {
	echo "== losses of 4 iteration flows through a small queue: mltcp (enabled=0) vs reno"
	check "namespaces and tbf bottleneck (burst 8 KB, queue 32 KB)" make_bottleneck 8kb 32kb ||
		{ del_ns "$NS_A" "$NS_R" "$NS_B"; return; }
	ip netns exec "$NS_A" ethtool -K mltcp$$a tso off gso off >/dev/null 2>&1
	check "load" "$CTL" load
	check "set enabled=0" "$CTL" set enabled=0
	local cc n sum_reno=0 sum_mltcp=0 runs=""
	for cc in reno mltcp mltcp reno reno mltcp; do
		n=$(loss_run $cc) || { bad "$cc: traffic run failed"; continue; }
		runs+=" $cc=$n"
		if [[ $cc == reno ]]; then sum_reno=$((sum_reno + n)); else sum_mltcp=$((sum_mltcp + n)); fi
	done
	echo "  retransmitted segments:$runs"
	check "the bottleneck drops (reno retransmits >= 300 in 3 runs: $sum_reno)" \
		test "$sum_reno" -ge 300
	check "mltcp (enabled=0) retransmits $sum_mltcp <= 2.5 x reno's $sum_reno" \
		test "$sum_mltcp" -le $((sum_reno * 5 / 2))
	check "unload" "$CTL" unload
	del_ns "$NS_A" "$NS_R" "$NS_B"
}

# ---------------------------------------------------------------------------
# in_cgroup CG CMD...: run CMD as a process of cgroup CG
in_cgroup() { local cg=$1; shift; bash -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" "$@"; }

# job_hint_probe WANT BYTES [raw]: mltcp.hint_job (raw: the bare setsockopt,
# bypassing libmltcp's checks) from this process; WANT: OK, ValueError, errno
job_hint_probe() {
	$PY - "$1" "$2" "${3:-}" "$PYDIR" <<'EOF'
import errno, socket, struct, sys
want, nbytes, raw = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "raw"
sys.path.insert(0, sys.argv[4])
import mltcp
try:
    if raw:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(0x4d4c, 1, struct.pack("=Q", nbytes & (2**64 - 1)))
    else:
        mltcp.hint_job(nbytes)
except ValueError as e:
    print("ValueError: %s" % e)
    sys.exit(0 if want == "ValueError" else 1)
except OSError as e:
    print("%s %s: %s" % (type(e).__name__, errno.errorcode.get(e.errno), e.strerror))
    sys.exit(0 if e.errno == getattr(errno, want, None) else 1)
print("job hint accepted")
sys.exit(0 if want == "OK" else 1)
EOF
}
jobs_dump() { bpftool -j map dump pinned /sys/fs/bpf/mltcp/jobs; }
# jobs_without_hints N: the jobs map has N entries (one per attached cgroup),
# none with a hint (the value's first 8 bytes, seq, are 0)
jobs_without_hints() {
	jobs_dump | $PY -c "
import json, sys
d = json.load(sys.stdin)
print('%d entries, seqs %s' % (len(d), [int(e['value'][0], 16) for e in d]))
assert len(d) == $1 and all(int(b, 16) == 0 for e in d for b in e['value'][:8]), d"
}

# hint_loop CG N: a process in CG announcing job iterations of N bytes every 5 ms
hint_loop() {
	bash -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$1" $PY -c "
import sys, time; sys.path.insert(0, '$PYDIR'); import mltcp
while True:
    mltcp.hint_job($2); time.sleep(0.005)" &
	BG_PIDS+=($!)
}

test_jobhints() {
	echo "== job-level hints: per cgroup, only from inside it, per-socket hints win"
	local K=6 N=1500000 n before
	mkdir -p "$CG_A" "$CG_B"
	# Detection impossible (idle threshold >= 5 s): every boundary is a hint.
	check "load, detection off (idle_min_us=5000000)" "$CTL" load \
		--param idle_min_us=5000000 --param idle_max_us=10000000
	check "jobs map is root-only (mode 0600)" test "$(stat -c '%a %u' /sys/fs/bpf/mltcp/jobs)" = "600 0"
	check "job hint outside any attached cgroup -> ENOPROTOOPT" job_hint_probe ENOPROTOOPT 1000
	check "attach ${CG_A##*/}" "$CTL" attach --cgroup "$CG_A"
	check "attach ${CG_B##*/} (cubic)" "$CTL" attach --cgroup "$CG_B" --variant cubic
	check "  ... job-hint programs on both" bash -c \
		"bpftool cgroup show '$CG_A' | grep -q setsockopt && bpftool cgroup show '$CG_B' | grep -q setsockopt"
	check "job hint from the test shell's cgroup -> ENOPROTOOPT" job_hint_probe ENOPROTOOPT 1000
	check "  ... jobs map: the two attached cgroups, no hint yet" jobs_without_hints 2
	for n in 0 -5 $((2**48 + 1)) 18446744073709551616; do
		check "hint_job($n) in ${CG_A##*/} -> ValueError" in_cgroup "$CG_A" bash -c \
			"$(declare -f job_hint_probe); PY=$PY PYDIR=$PYDIR job_hint_probe ValueError $n"
	done
	for n in 0 $((2**48 + 1)); do
		check "bare setsockopt of $n bytes in ${CG_A##*/} -> EINVAL (BPF checks too)" in_cgroup \
			"$CG_A" bash -c "$(declare -f job_hint_probe); PY=$PY PYDIR=$PYDIR job_hint_probe EINVAL $n raw"
	done
	check "  ... jobs map: still no hint" jobs_without_hints 2
	check "  ... the exporter counts the 2 refused writes, 0 stored" bash -c \
		"'$CTL' stats --prometheus | grep -qx 'mltcp_job_hints_refused_total 2' &&
		 '$CTL' stats --prometheus | grep -qx 'mltcp_job_hints_total 0'"
	check "non-root process in ${CG_A##*/} may hint its job" in_cgroup "$CG_A" \
		setpriv --reuid=65534 --regid=65534 --clear-groups bash -c \
		"$(declare -f job_hint_probe); PY=$PY PYDIR=$PYDIR MLTCP_LIBRARY=$MLTCP_LIBRARY job_hint_probe OK 1000"
	before=$(jobs_dump)
	check "non-root process outside: refused" setpriv --reuid=65534 --regid=65534 --clear-groups \
		bash -c "$(declare -f job_hint_probe); PY=$PY PYDIR=$PYDIR MLTCP_LIBRARY=$MLTCP_LIBRARY job_hint_probe ENOPROTOOPT 1000"
	check "  ... jobs map unchanged" test "$(jobs_dump)" = "$before"

	next_port
	server - $PORT "$WORK/srv.json" --bind 127.0.0.1
	in_cgroup "$CG_A" $PY "$TRAFFIC" client --host 127.0.0.1 --port $PORT --iterations $K \
		--bytes $N --gap-ms 10 --hint-job --pydir "$PYDIR" > "$WORK/iter.json"
	wait_file "$WORK/srv.json"
	check "job hints: $((K - 1)) (+ the SYN's) hinted iterations of $N B on ${CG_A##*/}'s socket" \
		check_phases "$WORK/iter.json" $K $N hint 1536 256 1 "$(norm_of mltcp)"

	# A job's seed (MLTCP_JOB_SEED) reaches a socket created before its
	# sub-cgroup became a job (as Gloo's are), hashed as mltcp.bpf.c does.
	# The socket joins the job at its first send after the entry appeared;
	# the hint made while it was silent is its first hinted iteration (the
	# one that runs at the seed's stand-in), the rest run at the flow's own
	# ratio.
	mkdir -p "$CG_S"
	next_port
	server - $PORT "$WORK/srv.json" --bind 127.0.0.1
	in_cgroup "$CG_S" $PY "$TRAFFIC" client --host 127.0.0.1 --port $PORT --iterations $K \
		--bytes $N --gap-ms 10 --hint-job --seed-job 12345 --pydir "$PYDIR" > "$WORK/seed.json"
	wait_file "$WORK/srv.json"
	check "job seed 12345: the first hinted iteration at the seed's ratio, then the own" $PY -c "
import json; ph = json.load(open('$WORK/seed.json'))['phase_end']
h = (12345 * 0x9E3779B97F4A7C15 % 2**64) >> 32
want = ((h >> 24) << 2) + 2   # seed_ratio's 1/256 step, middle, in 1/1024
r = [p['bytes_ratio'] for p in ph]
print('bytes_ratio at phase ends %s, want %d/1024 at the first' % (r, want))
assert r[0] is not None and round(r[0] * 1024) == want, ph[0]
assert all(x is not None and x > 0.95 for x in r[1:]), r
assert ph[-1]['hinted'] == $K, ph[-1]"
	check "bare setsockopt of a 4-byte job seed -> EINVAL" in_cgroup "$CG_S" $PY -c "
import errno, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.setsockopt(0x4d4c, 2, b'1234')
except OSError as e:
    print(errno.errorcode.get(e.errno)); sys.exit(e.errno != errno.EINVAL)
sys.exit('accepted')"

	# Another job's hints never reach this job's sockets.
	hint_loop "$CG_B" 700000
	next_port
	server - $PORT "$WORK/srv.json" --bind 127.0.0.1
	in_cgroup "$CG_A" $PY "$TRAFFIC" client --host 127.0.0.1 --port $PORT --iterations 3 \
		--bytes $N --gap-ms 30 > "$WORK/iso.json"
	wait_file "$WORK/srv.json"
	check "${CG_B##*/} hinting every 5 ms: ${CG_A##*/}'s socket has 0 iterations" $PY -c "
import json; p = json.load(open('$WORK/iso.json'))['phase_end'][-1]
print('iterations %d hinted %d' % (p['iterations'], p['hinted'])); assert p['iterations'] == 0, p"

	# A socket with hints of its own ignores its job's hints.
	hint_loop "$CG_A" 700000
	next_port
	server - $PORT "$WORK/srv.json" --bind 127.0.0.1
	in_cgroup "$CG_A" $PY "$TRAFFIC" client --host 127.0.0.1 --port $PORT --iterations $K \
		--bytes $N --gap-ms 10 --hint --pydir "$PYDIR" > "$WORK/iter.json"
	wait_file "$WORK/srv.json"
	check "per-socket hints win over the job's (every 5 ms): no extra iterations" \
		check_phases "$WORK/iter.json" $K $N hint 1536 256 1 "$(norm_of mltcp)"
	for n in "${BG_PIDS[@]}"; do kill "$n" 2>/dev/null; done
	wait 2>/dev/null
	BG_PIDS=()
	check "detach ${CG_A##*/} removes its job-hint program" bash -c \
		"'$CTL' detach --cgroup '$CG_A' && ! bpftool cgroup show '$CG_A' | grep -q setsockopt"
	check "unload" "$CTL" unload
	check "nothing of MLTCP remains" nothing_loaded
}

# ---------------------------------------------------------------------------
# job_client CG PORT OUT ARGS...: a traffic client in $NS_A (and in cgroup CG,
# unless CG is -) to the server on $NS_B's PORT
job_client() {
	local cg=$1 port=$2 out=$3; shift 3
	local pre=(); [[ $cg != - ]] && pre=(in_cgroup "$cg")
	"${pre[@]}" nsenter --net=/run/netns/"$NS_A" $PY "$TRAFFIC" client --host 10.202.2.2 \
		--port "$port" "$@" > "$out"
}

# job_u64 OFFSET...: the one job's u64 fields (struct mltcp_job) at these
# byte offsets, space-separated
job_u64() {
	jobs_dump | $PY -c "
import json, sys
v = bytes(int(b, 16) for b in json.load(sys.stdin)[0]['value'])
print(' '.join(str(int.from_bytes(v[int(o):int(o) + 8], 'little')) for o in sys.argv[1:]))" "$@"
}

# job_sums_zero: the one job's progress sums (bytes 24..39) are 0 within a
# second (the sockets release as their connections close)
job_sums_zero() {
	local i sums
	for i in $(seq 50); do
		sums=$(job_u64 24 32)
		[[ $sums == "0 0" ]] && return 0
		sleep 0.02
	done
	echo "iter_bytes_sum, bytes_per_iter_sum: $sums"
	return 1
}

# job_traffic_is ACKED RECEIVED: within 2 s, the one job's traffic (bytes
# 72..87: what its sockets acked and received) is within 1% of ACKED and
# RECEIVED (the last report of a closed socket comes with its FIN)
job_traffic_is() {
	local i got
	for i in $(seq 100); do
		got=($(job_u64 72 80))
		(( (got[0] > $1 ? got[0] - $1 : $1 - got[0]) * 100 <= $1 &&
		   (got[1] > $2 ? got[1] - $2 : $2 - got[1]) * 100 <= $2 )) && return 0
		sleep 0.02
	done
	echo "acked ${got[0]}, received ${got[1]}"
	return 1
}

# wait_flow_iterations PORT N: within 10 s, the MLTCP flow of $NS_A to
# remote port PORT has completed N iterations (mltcpctl stats, whose
# iterator shows the reader's namespace)
wait_flow_iterations() {
	local i
	for i in $(seq 500); do
		nsenter --net=/run/netns/"$NS_A" "$CTL" stats --json 2>/dev/null | $PY -c "
import json, sys
f = [f for f in json.load(sys.stdin)['flows'] if f['remote'].endswith(':$1')]
sys.exit(not (f and f[0]['iterations'] >= $2))" && return 0
		sleep 0.02
	done
	echo "no flow to port $1 with $2 iterations in 10 s"
	return 1
}

# last_ratio FILE: the bytes ratio at the last phase end of a client's JSON
last_ratio() { json "$1" "['phase_end'][-1]['bytes_ratio']"; }

# job_members_run TAG: members B and A of the job in $CG_A and outsider C
# (mltcp by setsockopt, no cgroup).  B: 2 iterations of 60 MB, 2.4 s each
# alone.  A and C: 3 iterations of 2 MB, started once B has begun its
# second iteration (B has structure from then on), so that they end while
# B is in the middle of it (after about 1 s of B's 2.4 s or more).
# Compute gaps of 100 ms: above idle_max_us, a boundary whatever the
# queue's RTT, where a connection's own gap counts.  At A's last phase end
# its own ratio is 1, as C's is; its job's is (2 + what B has sent of its
# 60) / 62.  Clients' JSON in $WORK/j{a,b,c}c-TAG.json.
job_members_run() {
	local tag=$1 pb pa pc wa wb
	next_port; pb=$PORT; server "$NS_B" $pb "$WORK/jb-$tag.json"
	next_port; pa=$PORT; server "$NS_B" $pa "$WORK/ja-$tag.json"
	next_port; pc=$PORT; server "$NS_B" $pc "$WORK/jc-$tag.json"
	job_client "$CG_A" $pb "$WORK/jbc-$tag.json" --iterations 2 --bytes 60000000 --gap-ms 100 &
	wb=$!
	# Its first iteration is the connection's handshake (1 byte), so
	# iteration 2 is B's first of 60 MB done.
	check "  ... B begins its second iteration" wait_flow_iterations $pb 2
	job_client "$CG_A" $pa "$WORK/jac-$tag.json" --iterations 3 --bytes 2000000 --gap-ms 100 &
	wa=$!
	job_client - $pc "$WORK/jcc-$tag.json" --cc mltcp --iterations 3 --bytes 2000000 --gap-ms 100
	wait $wa; wait $wb
	wait_file "$WORK/jb-$tag.json" && wait_file "$WORK/ja-$tag.json" && wait_file "$WORK/jc-$tag.json"
	check "  ... A and B got mltcp from the attachment" test \
		"$(json "$WORK/jac-$tag.json" "['cc']") $(json "$WORK/jbc-$tag.json" "['cc']")" = "mltcp mltcp"
	echo "  ratio at the last phase end: A (job member) $(last_ratio "$WORK/jac-$tag.json"), C (alone) $(last_ratio "$WORK/jcc-$tag.json")"
}

test_jobs() {
	echo "== job progress: the MLTCP sockets of one attached cgroup share one bytes ratio"
	check "namespaces and tbf bottleneck (200 Mbit/s, queue 256 KB)" make_bottleneck 32kb 256kb ||
		{ del_ns "$NS_A" "$NS_R" "$NS_B"; return; }
	mkdir -p "$CG_A"
	check "load" "$CTL" load
	check "attach ${CG_A##*/}" "$CTL" attach --cgroup "$CG_A"
	check "  ... its job entry, no hint yet" jobs_without_hints 1
	# With job_gap (the default) A's compute gaps are not its job's while
	# B sends: A closes no iteration and stays neutral.
	job_members_run gap
	check "job_gap=1: A's 100 ms gaps while B sends are no boundaries: no ratio" \
		pyeval "import sys; sys.exit($(last_ratio "$WORK/jac-gap.json") is not None)"
	check "C's ratio is its own: 1.0" \
		pyeval "import sys; sys.exit(not ($(last_ratio "$WORK/jcc-gap.json") == 1.0))"
	check "set job_gap=0" "$CTL" set job_gap=0
	job_members_run own
	check "job_gap=0: A's ratio is its job's: below 0.9 while B is mid-iteration" \
		pyeval "import sys; r = $(last_ratio "$WORK/jac-own.json"); sys.exit(not (r is not None and r < 0.9))"
	check "C's ratio is its own: 1.0" \
		pyeval "import sys; sys.exit(not ($(last_ratio "$WORK/jcc-own.json") == 1.0))"
	check "  ... closed members took their shares out: the job's sums are 0" job_sums_zero
	# Both runs' A and B sent 2 x 60 MB + 3 x 2 MB to servers outside the
	# job: a one-way job.  Then a server in the job too (a ring's receiving
	# rank): what it receives is the job's as well (mltcp_sockops.bpf.c).
	check "the job's traffic: its clients' 252 MB acked, nothing received" \
		job_traffic_is 252000000 0
	next_port
	in_cgroup "$CG_A" nsenter --net=/run/netns/"$NS_B" $PY "$TRAFFIC" server --port $PORT \
		--out "$WORK/jr.json" --ready "$WORK/jr.json.ready" &
	BG_PIDS+=($!)
	for _ in $(seq 100); do [[ -e $WORK/jr.json.ready ]] && break; sleep 0.02; done
	job_client "$CG_A" $PORT "$WORK/jrc.json" --bulk 20000000
	wait_file "$WORK/jr.json"
	check "  ... with a receiver in the job: 20 MB more acked and 20 MB received" \
		job_traffic_is 272000000 20000000
	check "detach ${CG_A##*/}" "$CTL" detach --cgroup "$CG_A"
	check "  ... its job entry is gone" test "$(jobs_dump)" = "[]"
	check "unload" "$CTL" unload
	del_ns "$NS_A" "$NS_R" "$NS_B"
}

# ---------------------------------------------------------------------------
# lib_probe WANT_ERRNO CC [repairs]: on a loopback socket using CC, a hint
# (mltcp.hint) or, with "repairs", the window repair count after some data
# (mltcp.window_repairs); WANT_ERRNO: OK or the errno expected
lib_probe() {
	$PY - "$1" "$2" "${3:-hint}" "$PYDIR" <<'EOF'
import errno, socket, sys
want, cc, what = sys.argv[1:4]
sys.path.insert(0, sys.argv[4])
import mltcp
ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen(1)
s = socket.socket()
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
s.connect(ls.getsockname())
try:
    if what == "repairs":
        peer, got = ls.accept()[0], 0
        s.sendall(b"x" * 100000)        # acks give the socket its stats entry
        while got < 100000:
            got += len(peer.recv(65536))
        print("window repairs %d" % mltcp.window_repairs(s))
    else:
        mltcp.hint(s, 1000)
        print("hint accepted")
except mltcp.MltcpError as e:
    print("MltcpError %s: %s" % (errno.errorcode.get(e.errno), e.strerror))
    sys.exit(0 if e.errno == getattr(errno, want, None) else 1)
sys.exit(0 if want == "OK" else 1)
EOF
}

test_badinput() {
	echo "== bad input: clear error, right exit code, no partial state"
	expect_rc 2 "load --variant bogus" "$CTL" load --variant bogus
	check "  ... left nothing" nothing_loaded
	expect_rc 2 "load --param slope=99999" "$CTL" load --param slope=99999
	check "  ... left nothing" nothing_loaded
	expect_rc 2 "load --param nosuch=1" "$CTL" load --param nosuch=1
	expect_rc 2 "load --param slope=-1" "$CTL" load --param slope=-1
	expect_rc 2 "load --hint-group nosuchgroup" "$CTL" load --hint-group mltcp-nosuchgroup
	check "  ... left nothing" nothing_loaded
	mkdir -p "$CG_A"
	expect_rc 1 "attach before load" "$CTL" attach --cgroup "$CG_A"
	expect_rc 1 "unload when nothing is loaded" "$CTL" unload
	expect_rc 1 "set before load" "$CTL" set slope=1024
	expect_rc 2 "set slope=99999 before load: the range, not 'not loaded'" "$CTL" set slope=99999
	expect_rc 1 "stats before load" "$CTL" stats
	check "hint when MLTCP is not loaded -> ENOENT" lib_probe ENOENT cubic
	check "status --json when nothing is loaded" status_json "s == {'default_cc': '$(cat /proc/sys/net/ipv4/tcp_congestion_control)', 'loaded': False}"
	expect_rc 2 "status --bogus" "$CTL" status --bogus
	expect_rc 2 "unknown command" "$CTL" frobnicate
	expect_rc 2 "no command" "$CTL"
	local cmd
	for cmd in load unload attach detach status set stats; do
		check "$cmd --help" bash -c "'$CTL' $cmd --help | grep '^usage: mltcpctl $cmd' >/dev/null"
	done
	check "load" "$CTL" load
	expect_rc 1 "double load" "$CTL" load
	check "  ... first load intact" bash -c "'$CTL' status | grep -q 'mltcp_cubic *registered'"
	expect_rc 2 "attach --cgroup /nonexistent" "$CTL" attach --cgroup /nonexistent/mltcp
	expect_rc 2 "attach --cgroup /tmp (not cgroup v2)" "$CTL" attach --cgroup /tmp
	expect_rc 2 "attach --variant bogus" "$CTL" attach --cgroup "$CG_A" --variant bogus
	expect_rc 2 "attach without --cgroup" "$CTL" attach
	check "  ... no attachment made" bash -c "'$CTL' status | grep -q 'cgroup attachments: 0'"
	expect_rc 2 "set slope=99999 (out of range)" "$CTL" set slope=99999
	expect_rc 2 "set gain_min=2000 (above gain_max? no: above 1024)" "$CTL" set gain_min=2000
	expect_rc 2 "set idle_min_us=60000 (above idle_max_us)" "$CTL" set idle_min_us=60000
	expect_rc 2 "set nosuch=1" "$CTL" set nosuch=1
	check "  ... parameters unchanged" bash -c "'$CTL' status | grep -q 'slope *1536' && '$CTL' status | grep -q 'idle_min_us *2000'"
	check "  ... and in status --json, with the derived norms" status_json \
		"s['parameters']['slope'] == 1536 and s['parameters']['idle_min_us'] == 2000 and s['parameters']['norm_reno'] == 1768"
	expect_rc 2 "stats --watch abc" "$CTL" stats --watch abc
	check "hint for a socket using cubic -> EOPNOTSUPP" lib_probe EOPNOTSUPP cubic
	check "hint for a socket using mltcp (root) -> accepted" lib_probe OK mltcp
	check "window repairs of a socket using cubic -> EOPNOTSUPP" lib_probe EOPNOTSUPP cubic repairs
	check "window repairs of a socket using mltcp_cubic (root) -> a count" lib_probe OK mltcp_cubic repairs
	expect_rc 1 "non-root mltcpctl status" setpriv --reuid=65534 --regid=65534 --clear-groups "$CTL" status
	# Before 6.5 the bpf() syscall itself refuses unprivileged users (EPERM)
	# while kernel.unprivileged_bpf_disabled is set; from 6.5 the pin's
	# file permissions decide (EACCES).
	local denied=EACCES
	kernel_at_least 6 5 || denied=EPERM
	check "non-root hint without --hint-group -> $denied" \
		setpriv --reuid=65534 --regid=65534 --clear-groups bash -c "$(declare -f lib_probe); PY=$PY PYDIR=$PYDIR MLTCP_LIBRARY=$MLTCP_LIBRARY lib_probe $denied mltcp"
	check "non-root window repairs -> $denied" \
		setpriv --reuid=65534 --regid=65534 --clear-groups bash -c "$(declare -f lib_probe); PY=$PY PYDIR=$PYDIR MLTCP_LIBRARY=$MLTCP_LIBRARY lib_probe $denied mltcp repairs"
	check "unload" "$CTL" unload
	local grp; grp=$(getent group 65534 | cut -d: -f1)
	check "load --hint-group $grp" "$CTL" load --hint-group "$grp"
	check "hint map is mode 0660 group $grp" test "$(stat -c '%a %g' /sys/fs/bpf/mltcp/hints)" = "660 65534"
	if kernel_at_least 6 5; then
		check "non-root member of $grp may hint (kernel >= 6.5)" \
			setpriv --reuid=65534 --regid=65534 --clear-groups bash -c "$(declare -f lib_probe); PY=$PY PYDIR=$PYDIR MLTCP_LIBRARY=$MLTCP_LIBRARY lib_probe OK mltcp"
	fi
	check "unload" "$CTL" unload
	check "nothing of MLTCP remains" nothing_loaded
}

# ---------------------------------------------------------------------------
START=$(date +%s)
TESTS=("$@")
((${#TESTS[@]})) || TESTS=(select cgroup iterations jobhints jobs bulk loss badinput)
for t in "${TESTS[@]}"; do
	"test_$t"
	[[ -e /sys/fs/bpf/mltcp ]] && "$CTL" unload >/dev/null 2>&1
done
cleanup
trap - EXIT
echo "== cleanup"
check "no MLTCP registration or pins" nothing_loaded
check "no test namespaces" bash -c "! ip netns list | grep -q '^$TAG-'"
check "no test cgroups" bash -c "! ls -d $CG2/mltcp-test-$$-* 2>/dev/null | grep -q ."
check "host default congestion control unchanged ($HOST_DEFAULT_CC)" \
	test "$(cat /proc/sys/net/ipv4/tcp_congestion_control)" = "$HOST_DEFAULT_CC"
rm -rf "$WORK"
echo "bpf tests: $PASSES passed, $FAILS failed in $(($(date +%s) - START)) s"
((FAILS == 0))
