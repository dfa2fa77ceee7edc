# bench.sh - RDMA figures on soft-RoCE in the guest (make bench-rdma):
# paced-rate accuracy at several rates (software pacing; rxe has no per-QP
# rate limit), the CNP round trip (first CE mark seen by the notification
# point -> first rate cut at the reaction point) and, last, the two-job
# interleaving run of interleave.sh with dcqcn and mltcp_dcqcn.
. /mltcp/rdma_lib.sh
trap 'observers_down; rdma_net_down' EXIT
rdma_modules && rdma_net_up || { echo "bench: soft-RoCE set-up failed"; exit 0; }

# Unpaced throughput: what rxe moves under TCG right now (the baseline).
server cap 7470
cap=$($R client --src $A_IP --host $B_IP --port 7470 --bytes 3000000 --rate-mbps 100000 | grep ^CLIENT)
wait $SRV_cap
echo "RESULT bench=rdma-capacity unpaced_mbps=$(kv rate_mbps "$cap")"

port=7471
for target in 2 4 8; do
	server p$port $port
	cli=$($R client --src $A_IP --host $B_IP --port $port --bytes $((target * 250000)) \
		--rate-mbps $target | grep ^CLIENT)
	eval "wait \$SRV_p$port"
	rate=$(kv paced_mbps "$cli")
	err=$(awk -v r="$rate" -v t=$target 'BEGIN { d = (r - t) / t * 100; printf "%.2f", d }')
	echo "RESULT bench=rdma-paced target_mbps=$target paced_mbps=$rate rate_incl_burst_mbps=$(kv rate_mbps "$cli") error_pct=$err ratio_to_unpaced=$(awk -v r="$rate" -v c="$(kv rate_mbps "$cap")" 'BEGIN { printf "%.3f", c ? r / c : 0 }')"
	port=$((port + 1))
done

# CNP round trip, 3 runs: CE seen at the receiver -> rate cut at the sender.
observers_up || { echo "bench: observer attach failed"; exit 0; }
bottleneck 20mbit 15000 45000
for run in 1 2 3; do
	$R server --bind $B_IP --port $port --ce-map $RX/ce_count --cnp-interval-us 1000 \
		>$LOG/srv-rtt 2>&1 &
	spid=$!
	for _ in $(seq 1 100); do grep -q listening $LOG/srv-rtt && break; sleep 0.05; done
	cli=$($R client --src $A_IP --host $B_IP --port $port --bytes 2000000 --control dcqcn \
		--line-mbps 60 --cnp-map $TX/cnp_count | grep ^CLIENT)
	wait $spid
	srv=$(grep ^SERVER $LOG/srv-rtt | grep bytes=)
	rtt=$(( $(kv first_cut_us "$cli") - $(kv first_ce_us "$srv") ))
	echo "RESULT bench=rdma-cnp-rtt run=$run cnp_rtt_us=$rtt cnps_sent=$(kv cnps_sent "$srv") cnps_used=$(kv cnps "$cli") min_rate_mbps=$(kv min_rate_mbps "$cli")"
	port=$((port + 1))
done
observers_down
rdma_net_down
trap - EXIT

# Interleaving (its own set-up), REPS times: one RESULT line per run, then
# the mean over runs per control.
REPS=${REPS:-3}
for rep in $(seq 1 $REPS); do
	( . /mltcp/interleave.sh ) 2>&1 | grep '^RESULT-RDMA\|status=fail\|^#' | sed "s/^RESULT-RDMA /RESULT bench=rdma-interleave rep=$rep /" | tee -a $LOG/interleave.results
done
for cc in dcqcn mltcp_dcqcn; do
	failed=$(grep -c "name=rdma-interleave-$cc status=fail" $LOG/interleave.results)
	grep " control=$cc " $LOG/interleave.results | awk -v cc=$cc -v failed=$failed '
		{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] += kv[2] } n++ }
		END { if (n) printf "RESULT bench=rdma-interleave-mean control=%s runs=%d failed=%d mean_ratio=%.3f overlap=%.2f red_early=%.1f\n", cc, n, failed, v["mean_ratio"] / n, v["overlap"] / n, v["red_early"] / n
		      else printf "RESULT bench=rdma-interleave-mean control=%s runs=0 failed=%d\n", cc, failed }'
done
