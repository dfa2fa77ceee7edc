# rdma.sh - guest tests of the RDMA datapath on soft-RoCE (rdma_rxe) in
# Debian's 6.1 kernel, run by tests/vm/run.sh (busybox sh).
# (topology: see rdma_lib.sh)
. /mltcp/rdma_lib.sh

trap rdma_net_down EXIT
rdma_modules || {
	vm_result rdma-setup fail "modprobe failed"
	exit 0
}

# --- no device yet: clear error ------------------------------------------
t_no_device() {
	out=$($R devices 2>&1); rc=$?
	[ $rc = 3 ] && echo "$out" | grep -q "no RDMA device found" || { echo "rc=$rc $out"; return 1; }
}
check rdma-no-device t_no_device

if ! rdma_net_up; then
	vm_result rdma-setup fail "soft-RoCE set-up failed"
	exit 0
fi
vm_result rdma-setup pass "devices=$($R devices | tr '\n' ,)"

# --- capacity of rxe under TCG (unpaced), for the report -------------------
server cap 7470
out=$($R client --src $A_IP --host $B_IP --port 7470 --bytes 2000000 --rate-mbps 10000 2>&1)
rc=$?
wait $SRV_cap
cli=$(echo "$out" | grep ^CLIENT)
srv=$(grep ^SERVER $LOG/srv-cap | grep bytes=)
CAP=$(kv rate_mbps "$cli")
if [ $rc = 0 ] && [ "$(kv checksum "$cli")" = "$(kv checksum "$srv")" ]; then
	vm_result rdma-capacity pass "unpaced_mbps=${CAP:-?}"
else
	vm_result rdma-capacity fail "rc=$rc"
	echo "$out" | sed 's/^/#   /'
fi

# --- paced transfer: checksum and rate within 10% ---------------------------
PACE_MBPS=${PACE_MBPS:-8}
t_paced() {
	server paced 7471 || return 1
	out=$($R client --src $A_IP --host $B_IP --port 7471 --dev rxea --bytes 1500000 --rate-mbps $PACE_MBPS 2>&1)
	rc=$?
	wait $SRV_paced
	srv=$(grep ^SERVER $LOG/srv-paced | grep bytes=)
	cli=$(echo "$out" | grep ^CLIENT)
	echo "$out"
	# The whole server log: its error, if it stopped early (one CI run had
	# no SERVER bytes= line, and the reason was not shown).
	echo "server (log $LOG/srv-paced):"; cat $LOG/srv-paced
	[ $rc = 0 ] || { echo "client exit status $rc"; return 1; }
	echo "$out" | grep -q "no per-QP rate limit (Operation not supported): pacing work requests in software" || return 1
	[ "$(kv bytes "$cli")" = 1500000 ] && [ "$(kv bytes "$srv")" = 1500000 ] ||
		{ echo "bytes: client $(kv bytes "$cli"), server $(kv bytes "$srv")"; return 1; }
	[ "$(kv checksum "$cli")" = "$(kv checksum "$srv")" ] || { echo "checksums differ"; return 1; }
	# Both the paced rate (after the 2-message initial burst) and the rate
	# including it must be within 10% of the target.
	for rate in $(kv paced_mbps "$cli") $(kv rate_mbps "$cli"); do
		awk -v r="$rate" -v t="$PACE_MBPS" 'BEGIN { exit !(r >= 0.9 * t && r <= 1.1 * t) }' || return 1
	done
}
out=$(t_paced 2>&1); rc=$?
cli=$(echo "$out" | grep ^CLIENT)
if [ $rc = 0 ]; then
	vm_result rdma-paced-transfer pass "target_mbps=$PACE_MBPS paced_mbps=$(kv paced_mbps "$cli") rate_mbps=$(kv rate_mbps "$cli") checksum=$(kv checksum "$cli")"
else
	vm_result rdma-paced-transfer fail "target_mbps=$PACE_MBPS"
	echo "$out" | sed 's/^/#   /'
fi

# --- bad input with a device present ---------------------------------------
t_unknown_dev() {
	out=$($R client --src $A_IP --host $B_IP --bytes 8 --rate-mbps 1 --dev mlx5_9 2>&1); rc=$?
	[ $rc = 3 ] && echo "$out" | grep -q "unknown RDMA device 'mlx5_9'; devices present: rxea rxeb" ||
		{ echo "rc=$rc $out"; return 1; }
}
check rdma-unknown-device t_unknown_dev
t_refused() {
	out=$(timeout 20 $R client --src $A_IP --host $B_IP --port 7499 --bytes 8 --rate-mbps 1 2>&1); rc=$?
	[ $rc = 3 ] && echo "$out" | grep -q "connection refused" || { echo "rc=$rc $out"; return 1; }
}
check rdma-connection-refused t_refused
# The server dies mid-transfer: the client reports it, within seconds.
t_server_gone() {
	server gone 7472 || return 1
	$R client --src $A_IP --host $B_IP --port 7472 --bytes 50000000 --rate-mbps 4 >$LOG/cli-gone 2>&1 &
	cpid=$!
	sleep 2
	kill -9 $SRV_gone
	for _ in $(seq 1 100); do kill -0 $cpid 2>/dev/null || break; sleep 0.1; done
	if kill -0 $cpid 2>/dev/null; then kill -9 $cpid; echo "client still running 10 s after the server died"; return 1; fi
	wait $cpid; rc=$?
	cat $LOG/cli-gone
	[ $rc = 4 ] && grep -q "mid-transfer\|peer stopped answering\|torn down" $LOG/cli-gone
}
check rdma-server-gone t_server_gone
# The client dies mid-transfer: the server reports it instead of waiting.
t_client_gone() {
	server cgone 7473 || return 1
	$R client --src $A_IP --host $B_IP --port 7473 --bytes 50000000 --rate-mbps 4 >$LOG/cli-cgone 2>&1 &
	cpid=$!
	sleep 2
	kill -9 $cpid
	for _ in $(seq 1 100); do kill -0 $SRV_cgone 2>/dev/null || break; sleep 0.1; done
	if kill -0 $SRV_cgone 2>/dev/null; then kill -9 $SRV_cgone; echo "server still running 10 s after the client died"; return 1; fi
	wait $SRV_cgone; rc=$?
	cat $LOG/srv-cgone
	[ $rc = 4 ] && grep -q "client .* mid-transfer" $LOG/srv-cgone
}
check rdma-client-gone t_client_gone
# Nothing left behind: no QPs of ours survive their processes.
t_resources() {
	n=$(rdma resource show qp 2>/dev/null | grep -c "comm mltcp-rdma")
	[ "$n" = 0 ] || { rdma resource show qp; return 1; }
}
check rdma-resources-released t_resources

# --- CE marks -> real CNPs -> reaction point cuts (dcqcn) --------------------
# The observer counts CE-marked RoCEv2 packets at the receiver's ingress (b0)
# and CNPs at the sender's ingress (a0): the CNP count there is a capture of
# real packets on the wire, compared with what the notification point sent.
# tcpdump records the same run on both veths for the ICRC check below.
t_cnp() {
	observers_up || return 1
	bottleneck 20mbit 15000 45000 || return 1
	capture_start a0 && capture_start b0 || return 1
	$R server --bind $B_IP --port 7474 --idle-timeout 20 --ce-map $RX/ce_count \
		--cnp-interval-us 1000 >$LOG/srv-cnp 2>&1 &
	spid=$!
	for _ in $(seq 1 100); do grep -q listening $LOG/srv-cnp && break; sleep 0.05; done
	cli=$($R client --src $A_IP --host $B_IP --port 7474 --bytes 4000000 --control dcqcn \
		--line-mbps 60 --cnp-map $TX/cnp_count 2>&1 | grep ^CLIENT)
	wait $spid
	capture_stop
	srv=$(grep ^SERVER $LOG/srv-cnp | grep bytes=)
	tx=$($R observe --pin $TX --stats)
	rx=$($R observe --pin $RX --stats)
	marked=$(tc -n mltcp-br -s qdisc show dev b1 | sed -n 's/.*marked \([0-9]*\).*/\1/p')
	echo "$cli"; echo "$srv"; echo "rx: $rx"; echo "tx: $tx"; echo "red marked=$marked"
	ce=$(kv ce "$srv"); sent=$(kv cnps_sent "$srv"); got=$(kv cnps "$cli")
	wire=$(kv cnp "$tx"); minr=$(kv min_rate_mbps "$cli")
	CNP_RTT_US=$(( $(kv first_cut_us "$cli") - $(kv first_ce_us "$srv") ))
	echo "cnp_rtt_us=$CNP_RTT_US"
	[ "$(kv checksum "$cli")" = "$(kv checksum "$srv")" ] || return 1
	[ "${marked:-0}" -gt 0 ] && [ "${ce:-0}" -gt 0 ] && [ "${sent:-0}" -gt 0 ] || return 1
	# Every CNP sent is seen on the sender's wire; the client uses those that
	# arrive before its last post (later ones find no sender to slow down).
	[ "$wire" = "$sent" ] && [ "${got:-0}" -gt 0 ] && [ "$got" -le "$sent" ] || return 1
	float_le "$minr" 30
}
out=$(t_cnp 2>&1); rc=$?
capture_stop
observers_down
tc -n mltcp-br qdisc del dev b1 root 2>/dev/null
cli=$(echo "$out" | grep ^CLIENT); srv=$(echo "$out" | grep ^SERVER)
details="ce=$(kv ce "$srv") cnps_sent=$(kv cnps_sent "$srv") cnps_on_wire=$(kv cnp "$(echo "$out" | grep '^tx:')") cnps_used=$(kv cnps "$cli") min_rate_mbps=$(kv min_rate_mbps "$cli") rate_mbps=$(kv rate_mbps "$cli") cnp_rtt_us=$(echo "$out" | sed -n 's/^cnp_rtt_us=//p')"
if [ $rc = 0 ]; then vm_result rdma-cnp-dcqcn pass "$details"
else vm_result rdma-cnp-dcqcn fail "$details"; echo "$out" | sed 's/^/#   /'; fi

# --- ICRC: rxe's own packets and our CNPs, as captured on the wire -----------
# Our RoceV2Icrc (rdma/roce_wire.cpp) must reproduce the ICRC that rxe put on
# every packet it sent (requests, acknowledgements, CE-marked or not; CM
# packets on QP 1 too), and every CNP we sent must carry a correct one.  On
# b0 the data arrives after the RED queue (some CE), the CNPs leave; on a0
# the data leaves, the CNPs arrive.
t_icrc() {
	sent=$(kv cnps_sent "$(grep ^SERVER $LOG/srv-cnp | grep bytes=)")
	for ifc in a0 b0; do
		r=$($R icrc-check --pcap $LOG/cap-$ifc.pcap --dump 1 2>&1); rc=$?
		echo "$r" | sed "s/^/$ifc: /"
		res=$(echo "$r" | grep '^ICRC')
		drops=$(sed -n 's/^\([0-9]*\) packets* dropped by kernel.*/\1/p' $LOG/tcpdump-$ifc.err)
		echo "$ifc: tcpdump dropped=${drops:-?}"
		res="$res dropped=${drops:-?}"
		eval "ICRC_$ifc=\"\$res\""
		[ $rc = 0 ] && [ "$(kv bad "$res")" = 0 ] || return 1
		# rxe's packets: at least 1000 checked.  CNPs: all correct, and all
		# that were sent when tcpdump lost nothing.
		ok=$(kv ok "$res"); cnp=$(kv cnp "$res"); cnp_ok=$(kv cnp_ok "$res")
		[ $(( ${ok:-0} - ${cnp_ok:-0} )) -ge 1000 ] || return 1
		[ "${cnp:-0}" -gt 0 ] && [ "$cnp_ok" = "$cnp" ] && [ "$cnp" -le "${sent:-0}" ] || return 1
		[ "$drops" != 0 ] || [ "$cnp" = "$sent" ] || return 1
	done
	[ "$(kv ce_ok "$ICRC_b0")" -gt 0 ] 2>/dev/null	# CE-marked packets check too
}
out=$(t_icrc 2>&1); rc=$?
details="cnps_sent=$(kv cnps_sent "$(grep ^SERVER $LOG/srv-cnp | grep bytes=)")"
for ifc in a0 b0; do
	res=$(echo "$out" | grep "^$ifc: ICRC")
	details="$details ${ifc}_checked=$(kv checked "$res") ${ifc}_bad=$(kv bad "$res") ${ifc}_ce_ok=$(kv ce_ok "$res") ${ifc}_cnp_ok=$(kv cnp_ok "$res") ${ifc}_capture_drops=$(echo "$out" | sed -n "s/^$ifc: tcpdump dropped=//p")"
done
if [ $rc = 0 ]; then vm_result rdma-icrc pass "$details"
else vm_result rdma-icrc fail "$details"; fi
# Summaries on the console; the hex dumps (one packet per opcode, the
# source of tests/rdma/roce_wire_test.cpp's vectors) only in the log.
echo "$out" | grep -v ': FRAME ' | sed 's/^/#   /'
echo "$out" | grep ': FRAME '

# --- two jobs through the ECN bottleneck: mltcp_dcqcn interleaves, dcqcn ------
# stays overlapped (the judgement in interleave.sh; it sets up its own
# namespaces, observers and bottleneck).
rdma_net_down
trap - EXIT
( JUDGE=1; . /mltcp/interleave.sh ) 2>&1 | grep '^RESULT-RDMA\|^MLTCP-VM-RESULT\|^#'
