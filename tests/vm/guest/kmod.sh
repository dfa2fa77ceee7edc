# kmod.sh - guest tests of tcp_mltcp.ko on Debian's kernel (issue 4, section 6).
# Runs under busybox sh inside the VM started by tests/vm/run.sh.
. /mltcp/lib.sh
P=/sys/module/tcp_mltcp/parameters
AVAIL=/proc/sys/net/ipv4/tcp_available_congestion_control
DEFCC=/proc/sys/net/ipv4/tcp_congestion_control
ITER_BYTES=200000

has_cc() { grep -qw "$1" "$AVAIL"; }
loaded() { grep -q '^tcp_mltcp ' /proc/modules; }
set_default() { echo "$1" >"$DEFCC"; }

# --- load, names, autoload ------------------------------------------------
t_modprobe() {
	modprobe tcp_mltcp || return 1
	loaded && has_cc mltcp && has_cc mltcp_cubic || return 1
	[ "$(cat /sys/module/tcp_mltcp/version)" != "" ] || return 1
	rmmod tcp_mltcp && ! loaded && ! has_cc mltcp
}
t_autoload_sysctl() {
	! loaded || rmmod tcp_mltcp || return 1
	sysctl -w net.ipv4.tcp_congestion_control=mltcp_cubic >/dev/null || return 1
	loaded && [ "$(cat $DEFCC)" = mltcp_cubic ] || return 1
	[ "$($VMTOOL getcc)" = mltcp_cubic ] || return 1
	set_default cubic && rmmod tcp_mltcp || return 1
	sysctl -w net.ipv4.tcp_congestion_control=mltcp >/dev/null || return 1
	loaded && [ "$($VMTOOL getcc)" = mltcp ] || return 1
	set_default cubic
}
check load-modprobe t_modprobe
check autoload-by-sysctl t_autoload_sysctl

# --- parameters ----------------------------------------------------------
write_param() { echo "$2" >"$P/$1" 2>/dev/null; }
t_params() {
	for kv in slope=1536 intercept=256 gain_min=64 gain_max=4096 \
		  idle_min_us=2000 idle_max_us=50000 idle_rtt_mult=8 scale_decrease=1 decrease_floor=512 \
		  tail_windows=2 tail_share=64 first_seed=1 normalize=1 cubic_norm_excess=1536 start_drain_windows=32 job_gap=1 job_two_way=1 two_way_decrease=1 enabled=1; do
		[ "$(cat "$P/${kv%%=*}")" = "${kv#*=}" ] || { echo "default ${kv}: $(cat "$P/${kv%%=*}")"; return 1; }
	done
	write_param slope 1024 && [ "$(cat $P/slope)" = 1024 ] || return 1
	write_param idle_rtt_mult 4 && [ "$(cat $P/idle_rtt_mult)" = 4 ] || return 1
	for bad in "slope 9000" "intercept 0" "intercept 5000" "gain_min 2000" \
		   "gain_max 100" "idle_min_us 60000" "idle_max_us 10" "idle_rtt_mult 0" \
		   "enabled 2" "scale_decrease 2" "decrease_floor 255" "decrease_floor 1025" "tail_windows 17" "tail_share 0" "tail_share 1025" "first_seed 2" "normalize 2" "cubic_norm_excess 8193" "start_drain_windows 1025" "job_gap 2" "job_two_way 2" "two_way_decrease 2" "slope abc"; do
		set -- $bad
		old=$(cat "$P/$1")
		if write_param "$1" "$2"; then echo "write $1=$2 accepted"; return 1; fi
		[ "$(cat "$P/$1")" = "$old" ] || { echo "$1 changed by rejected write"; return 1; }
	done
	# The kernel's answer to a rejected write is EINVAL.
	err=$(sh -c "echo 9000 >$P/slope" 2>&1)
	echo "$err" | grep -q "Invalid argument" || { echo "not EINVAL: $err"; return 1; }
	write_param slope 1536 && write_param idle_rtt_mult 8 && write_param enabled 0 &&
		[ "$(cat $P/enabled)" = 0 ] && write_param enabled 1
}
check params-valid-and-invalid t_params

# --- network -------------------------------------------------------------
# 2% random loss on the data path: every variant sees enough loss events to
# measure its backoff factor even when the emulated CPU, not the tbf, is the
# limit on a busy host (TCG speed varies with the host's load).
NET_LOSS=2%
if ! net_up; then
	vm_result netns-setup fail
	echo "MLTCP-VM-RESULT name=kmod-network status=skip reason=netns-setup-failed"
	exit 1
fi
vm_result netns-setup pass "rate=$NET_RATE delay=$NET_DELAY loss=$NET_LOSS"

# bulk CC [EXPECTED_CC] [hold]: 4 MB through the bottleneck; checks bytes and
# checksum; leaves the client line in $CLIENT.
BULK_BYTES=${BULK_BYTES:-2000000}
PORT=5000
bulk() {
	PORT=$((PORT + 1))
	out=$(transfer $PORT --bytes "$BULK_BYTES" --cc "$1" --trace /tmp/mltcp-trace.$1) || return 1
	CLIENT=$(echo "$out" | grep '^CLIENT')
	SERVER=$(echo "$out" | grep '^SERVER')
	echo "# $CLIENT"
	[ "$(kv cc "$CLIENT")" = "$1" ] || { echo "cc mismatch: $CLIENT"; return 1; }
	[ "$(kv bytes "$CLIENT")" = "$BULK_BYTES" ] && [ "$(kv bytes "$SERVER")" = "$BULK_BYTES" ] &&
		[ "$(kv fnv "$CLIENT")" = "$(kv fnv "$SERVER")" ] || { echo "bytes/checksum: $CLIENT / $SERVER"; return 1; }
}

# Backoff class: Reno halves (ssthresh = cwnd/2), CUBIC keeps 717/1024.  The
# client classifies each loss event by the exact integer formulas; the
# variant's class must win clearly (at least 5 votes and 3x the other).
backoff_is() {	# reno|cubic
	r=$(kv backoff_reno "$CLIENT")
	c=$(kv backoff_cubic "$CLIENT")
	if [ "$1" = reno ]; then win=$r lose=$c; else win=$c lose=$r; fi
	[ "$win" -ge 5 ] && [ "$win" -ge $((3 * lose)) ] ||
		{ echo "backoff votes reno=$r cubic=$c, expected $1"; return 1; }
}

within() {	# a b frac: |a-b| <= frac * b
	awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= f * b) }'
}
# With 2% random loss one 2 MB transfer sees only ~25 loss events, so one
# run's mean cwnd varies by a third or more: averages of two runs are compared.
# mean2 CC BACKOFF: two transfers, each with the right backoff; sets MEAN2.
mean2() {
	bulk "$1" && backoff_is "$2" || return 1
	m1=$(kv cwnd_mean "$CLIENT")
	bulk "$1" && backoff_is "$2" || return 1
	MEAN2=$(awk -v a="$m1" -v b="$(kv cwnd_mean "$CLIENT")" 'BEGIN { print (a + b) / 2 }')
	echo "# mean cwnd of two $1 runs: $MEAN2"
}

t_bulk_reno() { mean2 reno reno && MEAN_reno=$MEAN2; }
t_bulk_cubic() { mean2 cubic cubic && MEAN_cubic=$MEAN2; }
t_bulk_mltcp() {
	mean2 mltcp reno || return 1
	# No iteration structure: neutral gain, Reno-like window.
	[ "$(kv gain "$CLIENT")" = 1024 ] && within "$MEAN2" "$MEAN_reno" 0.50 ||
		{ echo "gain/cwnd_mean vs reno $MEAN_reno: $CLIENT"; return 1; }
}
t_bulk_mltcp_cubic() {
	mean2 mltcp_cubic cubic || return 1
	[ "$(kv gain "$CLIENT")" = 1024 ] && within "$MEAN2" "$MEAN_cubic" 0.50 ||
		{ echo "gain/cwnd_mean vs cubic $MEAN_cubic: $CLIENT"; return 1; }
}
t_bulk_disabled() {
	write_param enabled 0 || return 1
	mean2 mltcp reno && within "$MEAN2" "$MEAN_reno" 0.50 &&
	mean2 mltcp_cubic cubic && within "$MEAN2" "$MEAN_cubic" 0.50
	rc=$?
	write_param enabled 1
	return $rc
}
# Run in the parent shell (check runs a subshell) so the means carry over.
run_check() {	# name fn
	if out=$($2 2>&1); then vm_result "$1" pass; else vm_result "$1" fail; fi
	echo "$out" | sed 's/^/#   /' | tail -n 6
}
MEAN_reno=; MEAN_cubic=
t_bulk_reno >/tmp/o 2>&1 && vm_result bulk-reno pass || vm_result bulk-reno fail; sed 's/^/#   /' /tmp/o | tail -n 4
t_bulk_cubic >/tmp/o 2>&1 && vm_result bulk-cubic pass || vm_result bulk-cubic fail; sed 's/^/#   /' /tmp/o | tail -n 4
run_check bulk-mltcp t_bulk_mltcp
run_check bulk-mltcp_cubic t_bulk_mltcp_cubic
run_check bulk-enabled0-matches-base t_bulk_disabled

# --- selection by sysctl inside a namespace and by setsockopt -------------
t_select() {
	# setsockopt of a name whose module is not loaded loads it (root).
	set_default cubic
	! loaded || rmmod tcp_mltcp || return 1
	PORT=$((PORT + 1))
	out=$(transfer $PORT --bytes 100000 --cc mltcp_cubic) || return 1
	echo "$out" | grep -q ' cc=mltcp_cubic ' && loaded || { echo "setsockopt autoload: $out"; return 1; }
	# A namespace may make only allowed (non-restricted) names its default.
	# (Linux 6.1 leaks a module reference when that fails with EPERM, after
	# which tcp_mltcp can never be unloaded: allow the names first.)
	allowed=$(cat /proc/sys/net/ipv4/tcp_allowed_congestion_control)
	echo "$allowed mltcp mltcp_cubic" >/proc/sys/net/ipv4/tcp_allowed_congestion_control || return 1
	ip netns exec mltcp-a sysctl -q -w net.ipv4.tcp_congestion_control=mltcp || return 1
	PORT=$((PORT + 1))
	out=$(transfer $PORT --bytes 100000) || return 1
	echo "$out" | grep -q ' cc=mltcp ' || { echo "sysctl selection: $out"; return 1; }
	ip netns exec mltcp-a sysctl -q -w net.ipv4.tcp_congestion_control=cubic
	echo "$allowed" >/proc/sys/net/ipv4/tcp_allowed_congestion_control
	PORT=$((PORT + 1))
	out=$(transfer $PORT --bytes 100000 --cc mltcp_cubic) || return 1
	echo "$out" | grep -q ' cc=mltcp_cubic ' || { echo "setsockopt selection: $out"; return 1; }
	# An unknown name is refused by setsockopt.
	! $A "$VMTOOL" client --host 10.77.0.2 --port 1 --bytes 1 --cc mltcp_nosuch 2>/dev/null
}
check select-sysctl-and-setsockopt t_select

# --- iterations: detection and learned bytes, via TCP_CC_INFO and debugfs --
# iter CC: 8 iterations of ITER_BYTES with 100 ms compute gaps (above the
# 50 ms idle_max_us, so every gap is a boundary): 7 closed iterations.
iter() {
	PORT=$((PORT + 1))
	$B "$VMTOOL" server --port $PORT --count 1 >/tmp/mltcp-isrv 2>&1 &
	spid=$!
	wait_listening /tmp/mltcp-isrv
	$A "$VMTOOL" client --host 10.77.0.2 --port $PORT --bytes $ITER_BYTES \
		--iters 8 --gap-ms 100 --cc "$1" --hold-ms 1500 >/tmp/mltcp-icli 2>&1 &
	cpid=$!
	for _ in $(seq 1 300); do
		grep -q '^CLIENT-HOLDING' /tmp/mltcp-icli && break
		sleep 0.1
	done
	FLOWS=$(grep " $1 " /sys/kernel/debug/tcp_mltcp/flows)
	wait $cpid
	wait $spid
	CLIENT=$(grep '^CLIENT ' /tmp/mltcp-icli)
	echo "# $CLIENT"
	echo "# flows: $FLOWS"
	[ "$(kv iterations "$CLIENT")" = 7 ] || { echo "iterations: $CLIENT"; return 1; }
	bpi=$(kv bytes_per_iter "$CLIENT")
	within "$bpi" $ITER_BYTES 0.05 || { echo "bytes_per_iter $bpi vs $ITER_BYTES"; return 1; }
	# Last iteration complete: ratio 1, F = intercept + slope (or 1 if off).
	[ "$(kv gain "$CLIENT")" = "$2" ] || { echo "gain $(kv gain "$CLIENT") != $2"; return 1; }
	[ "$(kv iterations "$FLOWS")" = 7 ] && [ "$(kv bytes_per_iter "$FLOWS")" = "$bpi" ] ||
		{ echo "debugfs disagrees: $FLOWS"; return 1; }
	grep -q "bytes=$((ITER_BYTES * 8))" /tmp/mltcp-isrv || { echo "server: $(cat /tmp/mltcp-isrv)"; return 1; }
}
# The paper's F as reported (normalize=0); with the norm the gain shown is
# F times the variant's norm (1768/1024 for mltcp, 3092/1024 for mltcp_cubic
# with the defaults, clamped to gain_max).
paper_f() { write_param normalize 0 && "$@"; rc=$?; write_param normalize 1; return $rc; }
t_iter_mltcp() { paper_f iter mltcp 1792; }
t_iter_cubic() { paper_f iter mltcp_cubic 1792; }
t_iter_norm() { iter mltcp $((1792 * 1768 / 1024)); }
t_iter_norm_cubic() { iter mltcp_cubic 4096; }
t_iter_disabled() { write_param enabled 0 && iter mltcp 1024; rc=$?; write_param enabled 1; return $rc; }
run_check iterations-mltcp t_iter_mltcp
run_check iterations-mltcp_cubic t_iter_cubic
run_check iterations-mltcp-normalized-gain t_iter_norm
run_check iterations-mltcp_cubic-normalized-gain t_iter_norm_cubic
run_check iterations-enabled0-neutral-gain t_iter_disabled
# A parameter write takes effect: F at the end of an iteration = 256 + 512.
t_iter_slope() { write_param slope 512 && paper_f iter mltcp 768; rc=$?; write_param slope 1536; return $rc; }
run_check param-slope-takes-effect t_iter_slope

# --- rmmod refused while in use, works after, reload works ----------------
t_rmmod() {
	PORT=$((PORT + 1))
	$B "$VMTOOL" server --port $PORT --count 1 >/tmp/mltcp-rsrv 2>&1 &
	spid=$!
	wait_listening /tmp/mltcp-rsrv
	$A "$VMTOOL" client --host 10.77.0.2 --port $PORT --bytes 100000 --cc mltcp \
		--hold-ms 2000 >/tmp/mltcp-rcli 2>&1 &
	cpid=$!
	for _ in $(seq 1 200); do grep -q '^CLIENT-HOLDING' /tmp/mltcp-rcli && break; sleep 0.1; done
	if rmmod tcp_mltcp 2>/dev/null; then echo "rmmod succeeded with a socket open"; return 1; fi
	loaded || return 1
	wait $cpid; wait $spid
	set_default mltcp
	if rmmod tcp_mltcp 2>/dev/null; then echo "rmmod succeeded while default"; return 1; fi
	set_default cubic
	rmmod tcp_mltcp || { echo "rmmod failed after close: $(cat /proc/modules | grep mltcp)"; return 1; }
	! loaded && ! has_cc mltcp || return 1
	modprobe tcp_mltcp && has_cc mltcp && has_cc mltcp_cubic
}
check rmmod-busy-then-unload-reload t_rmmod

# --- optional: the BPF objects of the BPF issue on this 6.1 kernel --------
# Both register the names mltcp and mltcp_cubic: unload the module first.
if [ -f /mltcp/bpf/guest-load-test.sh ] && [ -x /mltcp/bin/mltcpctl ]; then
	set_default cubic
	rmmod tcp_mltcp
	check bpf-load-on-6.1 sh /mltcp/bpf/guest-load-test.sh /mltcp/bin/mltcpctl
else
	vm_result bpf-load-on-6.1 skip reason=tests/bpf/guest-load-test.sh-or-mltcpctl-not-built
fi

net_down

# --- same-input agreement: the core in this kernel vs in userspace ---------
# The host generated an event sequence and the userspace core's decisions
# (tests/vm/replay/mltcp_replay.cpp); the test-only module replays the same
# events through the same core compiled by kbuild; the records must match
# byte for byte.
t_replay() {
	R=/mltcp/replay
	insmod $R/mltcp_replay_kmod.ko || return 1
	cat $R/events.bin >/sys/kernel/debug/mltcp_replay/run &&
		cat /sys/kernel/debug/mltcp_replay/run >/tmp/mltcp-decisions.bin
	rc=$?
	rmmod mltcp_replay_kmod
	[ $rc = 0 ] || return 1
	echo "events $(wc -c <$R/events.bin) B, decisions $(wc -c </tmp/mltcp-decisions.bin) B, expected $(wc -c <$R/expected.bin) B"
	cmp /tmp/mltcp-decisions.bin $R/expected.bin
}
if [ -f /mltcp/replay/events.bin ]; then
	if out=$(t_replay 2>&1); then
		vm_result replay-agreement pass "$(cat /mltcp/replay/summary.txt)"
	else
		vm_result replay-agreement fail
		echo "$out" | sed 's/^/#   /'
	fi
else
	vm_result replay-agreement skip reason=no-replay-data-in-initramfs
fi

# --- datapath agreement: tcp_mltcp.ko's own hooks vs the core -------------
# The same Reno and CUBIC event sequences the DPDK, ns-3 and RDMA adapters
# replay on the host (tests/replay/agreement.sh), played through the
# module's tcp_congestion_ops on a kernel socket by the test-only module;
# the decisions (cwnd, ssthresh, F, iterations) must equal the reference.
t_replay_dp() {
	R=/mltcp/replay
	a=$1
	modprobe tcp_mltcp 2>/dev/null
	insmod $R/mltcp_replay_kmod.ko || return 1
	cat $R/dp-$a-events.bin >/sys/kernel/debug/mltcp_replay/dp &&
		cat /sys/kernel/debug/mltcp_replay/dp >/tmp/mltcp-dp-$a.bin
	rc=$?
	rmmod mltcp_replay_kmod
	[ $rc = 0 ] || return 1
	echo "events $(wc -c <$R/dp-$a-events.bin) B, decisions $(wc -c </tmp/mltcp-dp-$a.bin) B"
	cmp /tmp/mltcp-dp-$a.bin $R/dp-$a-expected.bin
}
for a in reno cubic; do
	if [ -f /mltcp/replay/dp-$a-events.bin ]; then
		if out=$(t_replay_dp $a 2>&1); then
			vm_result replay-kmod-$a pass "$(echo "$out" | head -1)"
		else
			vm_result replay-kmod-$a fail
			echo "$out" | sed 's/^/#   /'
		fi
	else
		vm_result replay-kmod-$a skip reason=no-replay-data-in-initramfs
	fi
done

# --- the kernel log stays clean --------------------------------------------
t_dmesg() {
	if dmesg | grep -E 'Oops|WARNING|BUG|Call Trace|general protection|refcount'; then
		return 1
	fi
	return 0
}
check dmesg-clean t_dmesg
