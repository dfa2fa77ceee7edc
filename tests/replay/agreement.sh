#!/usr/bin/env bash
# agreement.sh - the datapath agreement test on the host: one Reno, one
# CUBIC and one DCQCN event sequence (tests/replay/mltcp_dp_replay.h) go
# through the core driven directly (the reference) and through every
# datapath adapter that runs here: the DPDK transport's CongestionControl
# (Reno, CUBIC, DCQCN), the ns-3 models (Reno, CUBIC) and the RDMA QP
# control (DCQCN).  Each decision file must equal the reference byte for
# byte; the first differing decision is printed.  tcp_mltcp.ko's own hooks
# replay the same Reno and CUBIC sequences in the VM (tests/vm/guest/kmod.sh).
#
#   agreement.sh REPLAY DPDK_REPLAY SIM_REPLAY RDMA_REPLAY [SEED]
# A replayer given as "-" (its datapath was not built) is reported and
# fails the test: every datapath must be checked.
set -euo pipefail

(($# >= 4)) || { echo "usage: $0 REPLAY DPDK_REPLAY SIM_REPLAY RDMA_REPLAY [SEED]" >&2; exit 2; }
replay=$1 dpdk=$2 sim=$3 rdma=$4 seed=${5:-20241130}
dir=$(mktemp -d /tmp/mltcp-agreement.XXXXXX)
trap 'rm -rf "$dir"' EXIT

# Field offsets of struct mltcp_dp_decision, for the report of a mismatch.
first_difference() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import struct, sys
fmt = "<6IQQQ"
names = "seq cwnd ssthresh gain iterations hinted iter_bytes rate_bps target_bps".split()
a, b = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
n = struct.calcsize(fmt)
for i in range(min(len(a), len(b)) // n):
    x, y = struct.unpack_from(fmt, a, i * n), struct.unpack_from(fmt, b, i * n)
    if x != y:
        diff = ", ".join("%s %d != %d" % (k, u, v) for k, u, v in zip(names, x, y) if u != v)
        print("  first difference at event %d: %s" % (i, diff))
        break
else:
    print("  lengths differ: %d vs %d records" % (len(a) // n, len(b) // n))
PY
}

failed=0 checked=0
check() {	# ALGO NAME REPLAYER
	local algo=$1 name=$2 bin=$3
	if [[ $bin == - || ! -x $bin ]]; then
		echo "FAIL $algo $name: replayer not built ($bin)"
		failed=$((failed + 1))
		return
	fi
	if ! "$bin" "$dir/$algo-events.bin" >"$dir/$algo-$name.bin"; then
		echo "FAIL $algo $name: the replayer failed"
		failed=$((failed + 1))
	elif cmp -s "$dir/$algo-$name.bin" "$dir/$algo-reference.bin"; then
		echo "ok   $algo $name: $(($(stat -c %s "$dir/$algo-reference.bin") / 48)) decisions identical"
		checked=$((checked + 1))
	else
		echo "FAIL $algo $name: decisions differ from the core's"
		first_difference "$dir/$algo-$name.bin" "$dir/$algo-reference.bin"
		failed=$((failed + 1))
	fi
}

for algo in reno cubic dcqcn; do
	"$replay" gen-dp "$algo" "$seed" >"$dir/$algo-events.bin"
	"$replay" run-dp "$dir/$algo-events.bin" >"$dir/$algo-reference.bin"
done
# The sequences must exercise what they are meant to: F away from 1, losses
# and timeouts changing the window, iterations starting from a drained
# window (the start drain), rate cuts and recoveries.
/usr/bin/python3 - "$dir" <<'PY'
import struct, sys
d = sys.argv[1]
fmt = "<6IQQQ"
TX_START, EVENT_SIZE = 2, 64
for algo in ("reno", "cubic", "dcqcn"):
    raw = open("%s/%s-reference.bin" % (d, algo), "rb").read()
    recs = [struct.unpack_from(fmt, raw, o) for o in range(0, len(raw), 48)]
    evs = open("%s/%s-events.bin" % (d, algo), "rb").read()
    kinds = [struct.unpack_from("<I", evs, o)[0] for o in range(0, len(evs), EVENT_SIZE)]
    drains = sum(1 for i in range(1, len(recs))
                 if kinds[i] == TX_START and recs[i][1] < recs[i - 1][1])
    gains = {r[3] for r in recs}
    its = max(r[4] for r in recs)
    if algo == "dcqcn":
        rates = {r[7] for r in recs}
        ok = len(gains) > 20 and len(rates) > 100 and its > 10
        what = "%d gains, %d rates, %d iterations" % (len(gains), len(rates), its)
    else:
        cw = [r[1] for r in recs]
        ok = len(gains) > 20 and max(cw) > 40 and min(cw) == 1 and its > 10 and drains > 5
        what = "%d gains, cwnd %d..%d, %d iterations, %d drained starts" % (
            len(gains), min(cw), max(cw), its, drains)
    print("     %s sequence: %d events, %s" % (algo, len(recs), what))
    if not ok:
        print("FAIL %s: the sequence does not exercise the policy" % algo)
        sys.exit(1)
PY

check reno dpdk "$dpdk"
check cubic dpdk "$dpdk"
check dcqcn dpdk "$dpdk"
check reno ns-3 "$sim"
check cubic ns-3 "$sim"
check dcqcn rdma "$rdma"
echo "agreement: $checked passed, $failed failed"
((failed == 0))
