# interleave.sh - guest side of "make bench-interleave-vm"
# (tools/bench/interleave_vm.py): the interleaving benchmark with the kernel
# module, inside the VM rig, with a real (netem) RTT.
#
# A dumbbell of namespaces: il-s1, il-s2 (one sender per job, 10.78.0.11/.12),
# il-br (a router; the bottleneck tbf sits on its port towards the receiver;
# IL_TOPOLOGY=bridged: a bridge, il_up says what that changes),
# il-rx (receiver, 10.78.1.2, bridged 10.78.0.2; netem delay on its egress,
# i.e. on the acks and the emulator's confirmations); every veth steers a
# flow to one CPU (RPS), so a flow's packets stay in order.  Per repetition
# and congestion control: job a alone (il-s1), job b alone (il-s2), then both
# together from the same start instant; mltcp-emu's per-iteration CSVs and
# the receiver's 10 ms bins are kept in /tmp/il in interleave.py's layout
# (runs/<mix>-<cc>-r<rep>/, isolated/<cc>-r<rep>-<job>/).  At the end the
# whole tree goes to the console as a base64 tar.gz between
#   MLTCP-VM-ARCHIVE-BEGIN name=il.tgz md5=<md5> bytes=<n>
#   MLTCP-VM-ARCHIVE-END
# which the host decodes and checks (nothing is printed during the runs but
# short "# " progress lines, so the console does not load the emulated CPU).
#
# Settings come from /mltcp/il.conf (written by the host; defaults below).
. /mltcp/lib.sh
IL_RATE=25mbit			# bottleneck tbf rate
IL_BURST=8kb			# tbf burst
IL_LIMIT=16kb			# tbf queue
IL_DELAY=5ms			# netem delay on the receiver's egress
IL_CCS="reno cubic mltcp mltcp_cubic"
IL_REPS=5
IL_ITERATIONS=30		# iterations of each job in a pair run
IL_ISO_ITERATIONS=15		# iterations of a job alone
IL_WARMUP=5
IL_PROFILE=vm_vgg		# profile name in /mltcp/il.prof
IL_MIX=two_identical_vm
IL_CALIBRATE=""			# e.g. "10mbit 20mbit 40mbit": bulk goodput at these rates first
IL_CALIB_BYTES=""		# e.g. "150k 450k/250000": calibration runs with these bytes[/compute_us]
IL_CALIB_NETS=""		# e.g. "25mbit:8kb:16kb 25mbit:8kb:64kb:2ms": ... through these bottlenecks
IL_CALIB_CCS=""			# ... with these congestion controls (default reno cubic)
IL_CALIB_PAIRS=1		# ... this many times
IL_ONLY_CALIBRATE=0
IL_PARAMS=""			# module parameters "k=v ..." (e.g. "slope=2048 scale_decrease=0")
IL_TOPOLOGY=routed		# or bridged: il-br bridges (il_up says what that changes)
[ -f /mltcp/il.conf ] && . /mltcp/il.conf

EMU=/mltcp/mltcp-emu
PROF=/mltcp/il.prof
OUT=/tmp/il
RX=10.78.1.2
[ "$IL_TOPOLOGY" = bridged ] && RX=10.78.0.2
FLOWS=/sys/kernel/debug/tcp_mltcp/flows
PORT=5100
NFAIL=0
NRUNS=0
mkdir -p $OUT/runs $OUT/isolated

modprobe tcp_mltcp || { vm_result bench-interleave-vm fail reason=modprobe; exit 1; }
modprobe -a veth bridge sch_netem sch_tbf || { vm_result bench-interleave-vm fail reason=modules; exit 1; }
for kv in $IL_PARAMS; do
	echo "${kv#*=}" >/sys/module/tcp_mltcp/parameters/${kv%%=*} ||
		{ vm_result bench-interleave-vm fail reason=param-$kv; exit 1; }
done

il_down() {
	for ns in il-s1 il-s2 il-br il-rx; do ip netns del $ns 2>/dev/null; done
	return 0
}

# il_up RATE: the dumbbell with a tbf at RATE (or none for "none").
# il-br routes between the senders' subnet (br0, 10.78.0.1) and the
# receiver's (p-rx, 10.78.1.1), so every data packet passes ip_rcv in il-br,
# which orphans it from its socket before the tbf, as a NIC frees it before
# a switch.  IL_TOPOLOGY=bridged keeps p-rx on the bridge: a packet then
# stays charged to its socket up to the receiver's ip_rcv, and TCP small
# queues (about a millisecond of the flow's pacing rate below the socket,
# a few packets at this rate and RTT) counts the tbf's queue as the
# sender's own.  Measured (docs/evaluation.md, "TCP small queues"): each
# flow kept a few packets in the tbf whatever its window, in flight below
# cwnd in most samples, so the windows hardly set the shares.
il_up() {
	il_down
	ip netns add il-br && ip netns add il-rx && ip netns add il-s1 && ip netns add il-s2 || return 1
	ip -n il-br link add br0 type bridge || return 1
	ip link add rx0 netns il-rx type veth peer name p-rx netns il-br || return 1
	for i in 1 2; do
		ip link add s0 netns il-s$i type veth peer name p-s$i netns il-br || return 1
	done
	for d in p-rx p-s1 p-s2; do
		if [ $d = p-rx ] && [ "$IL_TOPOLOGY" != bridged ]; then
			ip -n il-br link set $d up
		else
			ip -n il-br link set $d master br0 up
		fi
		net_offloads_off il-br $d
		net_keep_flow_order il-br $d || return 1
	done
	ip -n il-br link set br0 up
	ip -n il-rx addr add $RX/24 dev rx0
	ip -n il-s1 addr add 10.78.0.11/24 dev s0
	ip -n il-s2 addr add 10.78.0.12/24 dev s0
	for ns in il-rx il-s1 il-s2; do
		ip -n $ns link set lo up
		dev=s0
		[ $ns = il-rx ] && dev=rx0
		ip -n $ns link set $dev up
		net_offloads_off $ns $dev
		net_keep_flow_order $ns $dev || return 1
		ip netns exec $ns sysctl -q -w net.ipv4.tcp_no_metrics_save=1
		ip netns exec $ns sysctl -q -w net.ipv4.tcp_rmem="4096 1048576 6291456"
	done
	if [ "$IL_TOPOLOGY" != bridged ]; then
		ip -n il-br addr add 10.78.0.1/24 dev br0 &&
			ip -n il-br addr add 10.78.1.1/24 dev p-rx &&
			ip netns exec il-br sysctl -q -w net.ipv4.ip_forward=1 &&
			ip -n il-rx route add default via 10.78.1.1 &&
			ip -n il-s1 route add default via 10.78.0.1 &&
			ip -n il-s2 route add default via 10.78.0.1 || return 1
	fi
	if [ "$1" != none ]; then
		tc -n il-br qdisc add dev p-rx root tbf rate "$1" burst "$IL_BURST" limit "$IL_LIMIT" || return 1
	fi
	tc -n il-rx qdisc add dev rx0 root netem delay "$IL_DELAY" || return 1
	for _ in $(seq 1 50); do
		ip netns exec il-s1 ping -c 1 -W 1 $RX >/dev/null 2>&1 &&
			ip netns exec il-s2 ping -c 1 -W 1 $RX >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# mean_iter CSV: mean iteration time (ms) after the warm-up.
mean_iter() {
	awk -F, -v w="$IL_WARMUP" 'NR > 1 && $2 >= w { s += $7 - $4; n++ }
		END { if (n) printf "%.1f", s / n / 1000; else printf "nan" }' "$1"
}

# bulk_mbps NS CC: goodput of one 2 MB transfer to the receiver.
bulk_mbps() {
	PORT=$((PORT + 1))
	srv=/tmp/il-srv.$PORT
	ip netns exec il-rx $VMTOOL server --port $PORT --count 1 >$srv 2>&1 &
	spid=$!
	wait_listening $srv
	out=$(ip netns exec $1 $VMTOOL client --host $RX --port $PORT --bytes 2000000 --cc $2)
	wait $spid
	kv mbps "$(echo "$out" | grep '^CLIENT')"
}

# emu_run DIR ITERATIONS CC PROFILE_FILE PROFILE JOB:NS...: the receiver and
# one sender per JOB:NS, all starting at the same instant; returns non-zero
# if a sender failed.
emu_run() {
	local dir=$1 n=$2 cc=$3 pf=$4 prof=$5 t0 rxpid pids fpid rc jn job ns p
	shift 5
	mkdir -p "$dir"
	PORT=$((PORT + 1))
	# Start at a whole second (busybox date has no %N) 1-2 s from now: time
	# for the connections; the jobs then start within microseconds.
	t0=$((($(date +%s) + 2) * 1000000))
	rm -f "$dir/port"
	/usr/sbin/ip netns exec il-rx $EMU recv --port $PORT --log-dir "$dir" --t0-us $t0 \
		--bin-us 10000 --port-file "$dir/port" >/dev/null 2>"$dir/rx.err" &
	rxpid=$!
	for _ in $(seq 1 200); do
		[ -s "$dir/port" ] && break
		sleep 0.05
	done
	# TCP counters of the senders' namespaces before and after (the host
	# reports retransmissions and timeouts per run).
	for jn in "$@"; do
		ip netns exec ${jn#*:} cat /proc/net/snmp /proc/net/netstat >"$dir/tcpstat-${jn%%:*}.before"
	done
	pids=""
	for jn in "$@"; do
		job=${jn%%:*} ns=${jn#*:}
		# A hung job must not cost the other runs: 3 s per iteration at most.
		timeout -s KILL $((10 + 3 * n)) /usr/sbin/ip netns exec $ns $EMU send \
			--dst $RX:$PORT --profile-file "$pf" --profile "$prof" --job "$job" \
			--cc "$cc" --iterations "$n" --start-at-us $t0 --t0-us $t0 \
			--warmup "$IL_WARMUP" --csv "$dir/$job.csv" --json "$dir/$job.json" \
			>/dev/null 2>"$dir/$job.err" &
		pids="$pids $!"
	done
	fpid=
	case $cc in mltcp*)
		# The module's view of the flows, once a second (debugfs).
		(while :; do echo "t=$(date +%s)"; grep " $cc " $FLOWS; sleep 1; done) >"$dir/flows.txt" 2>&1 &
		fpid=$!
	esac
	rc=0
	for p in $pids; do wait $p || rc=1; done
	[ -n "$fpid" ] && kill $fpid 2>/dev/null && wait $fpid 2>/dev/null
	for jn in "$@"; do
		ip netns exec ${jn#*:} cat /proc/net/snmp /proc/net/netstat >"$dir/tcpstat-${jn%%:*}.after"
	done
	sleep 0.05
	kill $rxpid 2>/dev/null
	wait $rxpid
	rm -f "$dir/port"
	if [ $rc != 0 ]; then
		for jn in "$@"; do sed "s/^/# ${jn%%:*}: /" "$dir/${jn%%:*}.err" | head -n 3; done
	fi
	return $rc
}

echo "# bench-interleave-vm: tbf $IL_RATE burst $IL_BURST limit $IL_LIMIT, netem delay $IL_DELAY on the receiver; ccs: $IL_CCS; reps $IL_REPS; iterations $IL_ITERATIONS (alone $IL_ISO_ITERATIONS), warm-up $IL_WARMUP; profile $IL_PROFILE"
sed -n "s/^profile $IL_PROFILE /# profile: /p" $PROF

# --- what the guest can do -------------------------------------------------
{
	for rate in none $IL_CALIBRATE; do
		il_up $rate || { vm_result bench-interleave-vm fail reason=netns-setup; exit 1; }
		echo "calib rate=$rate bulk_cubic_mbps=$(bulk_mbps il-s1 cubic) bulk_reno_mbps=$(bulk_mbps il-s2 reno)"
	done
	il_up "$IL_RATE" || { vm_result bench-interleave-vm fail reason=netns-setup; exit 1; }
	rtt=$(ip netns exec il-s1 ping -c 5 -i 0.2 -q $RX | sed -n 's/.*= \([0-9.]*\)\/\([0-9.]*\)\/\([0-9.]*\).*/min=\1 avg=\2 max=\3/p')
	echo "calib ping_rtt_ms $rtt"
	echo "calib module $(cat /sys/module/tcp_mltcp/srcversion 2>/dev/null | sed 's/^/srcversion=/') $(cd /sys/module/tcp_mltcp/parameters && for f in *; do printf '%s=%s ' $f $(cat $f); done)"
	echo "calib rate=$IL_RATE bulk_cubic_mbps=$(bulk_mbps il-s1 cubic) bulk_reno_mbps=$(bulk_mbps il-s2 reno) bulk_mltcp_mbps=$(bulk_mbps il-s1 mltcp)"
} >$OUT/calib.txt 2>&1
sed 's/^/# /' $OUT/calib.txt

# Calibration only: a job alone (reno) and pairs of IL_CALIB_CCS (default
# reno cubic) per profile variant "bytes[/compute_us]" in IL_CALIB_BYTES and
# per bottleneck "rate:burst:limit[:delay]" in IL_CALIB_NETS (default: the
# run's), IL_CALIB_PAIRS times.
if [ -n "$IL_CALIB_BYTES" ]; then
	: >/tmp/il-calib.prof
	for v in $IL_CALIB_BYTES; do
		b=${v%%/*} c=$(echo $v | sed -n 's|.*/||p')
		grep "^profile $IL_PROFILE " $PROF | sed "s/^profile $IL_PROFILE /profile c$b-$c /; s/ bytes=[^ ]*/ bytes=$b/" |
			sed "s/ compute_us=[0-9]*/ compute_us=${c:-&}/; s/compute_us= compute_us=/compute_us=/" >>/tmp/il-calib.prof
	done
	cp /tmp/il-calib.prof $OUT/calib.prof
	run_burst=$IL_BURST run_limit=$IL_LIMIT run_delay=$IL_DELAY
	for net in ${IL_CALIB_NETS:-$IL_RATE:$IL_BURST:$IL_LIMIT:$IL_DELAY}; do
		IL_BURST=$(echo $net | cut -d: -f2) IL_LIMIT=$(echo $net | cut -d: -f3)
		IL_DELAY=$(echo $net | cut -d: -f4)
		IL_DELAY=${IL_DELAY:-$run_delay}
		il_up ${net%%:*} || { vm_result bench-interleave-vm fail reason=netns-setup; exit 1; }
		for v in $IL_CALIB_BYTES; do
			b=${v%%/*} c=$(echo $v | sed -n 's|.*/||p')
			cprof=c$b-$c
			d=$OUT/calib/$net-$cprof-alone-reno
			emu_run $d $IL_ISO_ITERATIONS reno /tmp/il-calib.prof $cprof a:il-s1 &&
				echo "# calib net=$net profile=$cprof alone cc=reno mean_ms=$(mean_iter $d/a.csv)"
			for i in $(seq 1 ${IL_CALIB_PAIRS:-1}); do
				for cc in ${IL_CALIB_CCS:-reno cubic}; do
					d=$OUT/calib/$net-$cprof-pair-$cc-$i
					emu_run $d $IL_ITERATIONS $cc /tmp/il-calib.prof $cprof a:il-s1 b:il-s2 &&
						echo "# calib net=$net profile=$cprof pair cc=$cc a_ms=$(mean_iter $d/a.csv) b_ms=$(mean_iter $d/b.csv)"
				done
			done
		done
	done
	IL_BURST=$run_burst IL_LIMIT=$run_limit IL_DELAY=$run_delay
	il_up "$IL_RATE" || { vm_result bench-interleave-vm fail reason=netns-setup; exit 1; }
fi

# --- the runs ----------------------------------------------------------------
if [ "$IL_ONLY_CALIBRATE" != 1 ]; then
	rep=1
	while [ $rep -le "$IL_REPS" ]; do
		# Rotate the order per repetition: drifts of TCG's speed (the host's
		# load) then do not always hit the same congestion control.
		order=$(echo $IL_CCS | awk -v r=$rep '{ for (i = 0; i < NF; i++) printf "%s ", $((i + r - 1) % NF + 1) }')
		for cc in $order; do
			for jn in a:il-s1 b:il-s2; do
				d=$OUT/isolated/$cc-r$rep-${jn%%:*}
				NRUNS=$((NRUNS + 1))
				if emu_run $d $IL_ISO_ITERATIONS $cc $PROF $IL_PROFILE $jn; then
					echo "# alone rep=$rep cc=$cc job=${jn%%:*} mean_ms=$(mean_iter $d/${jn%%:*}.csv)"
				else
					NFAIL=$((NFAIL + 1)); echo "# alone rep=$rep cc=$cc job=${jn%%:*} FAILED"
				fi
			done
			d=$OUT/runs/$IL_MIX-$cc-r$rep
			NRUNS=$((NRUNS + 1))
			if emu_run $d $IL_ITERATIONS $cc $PROF $IL_PROFILE a:il-s1 b:il-s2; then
				echo "# pair rep=$rep cc=$cc a_ms=$(mean_iter $d/a.csv) b_ms=$(mean_iter $d/b.csv) uptime=$(cut -d' ' -f1 /proc/uptime)"
			else
				NFAIL=$((NFAIL + 1)); echo "# pair rep=$rep cc=$cc FAILED"
			fi
		done
		rep=$((rep + 1))
	done
fi
il_down

# --- results to the host ----------------------------------------------------
tar -C /tmp -czf /tmp/il.tgz il || { vm_result bench-interleave-vm fail reason=tar; exit 1; }
echo "MLTCP-VM-ARCHIVE-BEGIN name=il.tgz md5=$(md5sum /tmp/il.tgz | cut -d' ' -f1) bytes=$(wc -c </tmp/il.tgz)"
base64 /tmp/il.tgz
echo "MLTCP-VM-ARCHIVE-END"
if [ $NFAIL = 0 ]; then
	vm_result bench-interleave-vm pass runs=$NRUNS
else
	vm_result bench-interleave-vm fail runs=$NRUNS failed=$NFAIL
fi
