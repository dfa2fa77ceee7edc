# bench.sh - guest side of "make bench-kmod": bulk throughput of mltcp vs the
# kernel's reno and mltcp_cubic vs cubic, through the same tbf bottleneck in
# the same boot.  Runs alternate base/variant REPEATS times so that drifts of
# the emulated CPU's speed hit both alike; the ratio is of the mean goodputs.
# Ends with "RESULT variant=<v> base=<b> tput_ratio=<x>" lines.
. /mltcp/lib.sh
REPEATS=${REPEATS:-6}
BYTES=${BYTES:-2000000}

modprobe tcp_mltcp || { vm_result bench-kmod fail reason=modprobe; exit 1; }
PORT=6000
run_one() {	# cc -> prints mbps
	PORT=$((PORT + 1))
	out=$(transfer $PORT --bytes "$BYTES" --cc "$1") || return 1
	c=$(echo "$out" | grep '^CLIENT')
	s=$(echo "$out" | grep '^SERVER')
	[ "$(kv fnv "$c")" = "$(kv fnv "$s")" ] && [ "$(kv bytes "$s")" = "$BYTES" ] || return 1
	kv mbps "$c"
}

# Two bottlenecks: 10 Mbit/s, which TCG always fills (the tbf decides), and
# 40 Mbit/s, where the emulated CPU may be the limit on a busy host.
ok=1
for bottleneck in 10mbit:16kb:16kb 40mbit:32kb:48kb; do
	NET_RATE=${bottleneck%%:*}
	NET_BURST=$(echo "$bottleneck" | cut -d: -f2)
	NET_LIMIT=${bottleneck##*:}
	net_up || { vm_result bench-kmod fail reason=netns-setup; exit 1; }
	echo "# bottleneck: tbf $NET_RATE burst $NET_BURST limit $NET_LIMIT, netem delay $NET_DELAY; $BYTES bytes x $REPEATS per variant"
	for pair in "mltcp reno" "mltcp_cubic cubic"; do
		set -- $pair
		v=$1 b=$2 sv=0 sb=0
		for i in $(seq 1 "$REPEATS"); do
			mb=$(run_one "$b") && mv=$(run_one "$v") || { ok=0; break; }
			echo "# run $i: $b ${mb} Mbit/s, $v ${mv} Mbit/s"
			sb=$(awk -v a="$sb" -v x="$mb" 'BEGIN { print a + x }')
			sv=$(awk -v a="$sv" -v x="$mv" 'BEGIN { print a + x }')
		done
		awk -v v="$v" -v b="$b" -v sv="$sv" -v sb="$sb" -v n="$REPEATS" -v r="$NET_RATE" 'BEGIN {
			printf "RESULT variant=%s base=%s tput_ratio=%.3f variant_mbps=%.2f base_mbps=%.2f bottleneck=%s repeats=%d\n",
			       v, b, (sb > 0 ? sv / sb : 0), sv / n, sb / n, r, n }'
	done
	net_down
done
[ $ok = 1 ] && vm_result bench-kmod pass || vm_result bench-kmod fail reason=transfer
