#!/usr/bin/env bash
# testbed_test.sh - the namespace testbed: up with a leftover of a "crashed"
# run present, traffic through the bottleneck (the tbf counts it, iteration
# time above the line-rate minimum), two competing flows arrive in order
# (every veth steers by flow; --reorder leaves that off), --routed forwards
# at IP through the same tbf, down leaves no namespace behind, and non-root
# gets a clear message; then the ring layout (--rx-workers, --bidir):
# a 2-rank mltcp-emu ring between a sender and a receiver-side worker crosses
# the bottleneck in both directions, and down removes the workers too.
# Needs root (else skipped: 77).
set -euo pipefail
EMU=${1:?usage: $0 <mltcp-emu> <mltcp-testbed>}
TB=${2:?usage: $0 <mltcp-emu> <mltcp-testbed>}
# A prefix of its own per run: never touches a benchmark's testbed or
# another concurrent run of this test.
export MLTCP_TB_PREFIX=mltcp-t$(($$ % 100000))
fail() { echo "FAIL: $*" >&2; exit 1; }
if ((EUID != 0)); then
	echo "SKIP: the testbed test needs root"
	exit 77
fi
TMP=$(mktemp -d /tmp/mltcp-tb-test.XXXXXX)
trap '"$TB" down >/dev/null 2>&1 || true; rm -rf "$TMP"' EXIT
left() { ip netns list | awk '{print $1}' | grep -c "^$MLTCP_TB_PREFIX-" || true; }

# Not root: clear message, nothing created.
if command -v setpriv >/dev/null; then
	rc=0
	setpriv --reuid=65534 --regid=65534 --clear-groups "$TB" up >"$TMP/out" 2>&1 || rc=$?
	[[ $rc -ne 0 ]] && grep -q "must run as root" "$TMP/out" || fail "non-root: rc $rc: $(cat "$TMP/out")"
	echo "ok: non-root refused: $(cat "$TMP/out")"
fi
# Bad option: refused before anything is built.
rc=0; "$TB" up --senders 0 >"$TMP/out" 2>&1 || rc=$?
[[ $rc -ne 0 && $(left) -eq 0 ]] || fail "--senders 0 accepted"
grep -q -- "--senders must be" "$TMP/out" || fail "bad --senders message: $(cat "$TMP/out")"

ip netns add "$MLTCP_TB_PREFIX-s1"   # leftover of a crashed run
"$TB" up --senders 2
[[ $(left) -eq 4 ]] || fail "expected 4 namespaces, have $(left)"

printf 'profile t bytes=500k compute_us=10000\n' >"$TMP/t.prof"
ip netns exec "$MLTCP_TB_PREFIX-rx" "$EMU" recv --port 5001 --duration-s 30 >/dev/null &
ip netns exec "$MLTCP_TB_PREFIX-s1" "$EMU" send --dst "$("$TB" addr rx):5001" --profile-file "$TMP/t.prof" \
	--profile t --cc cubic --iterations 3 --csv "$TMP/t.csv" --json "$TMP/t.json"
[[ $(wc -l <"$TMP/t.csv") -eq 4 ]] || fail "3 iterations expected: $(cat "$TMP/t.csv")"
# 500 kB of payload at 200 Mbit/s takes at least 20.9 ms (headers, an 8 KB
# burst aside); without the bottleneck a veth moves it in well under 1 ms.
awk -F, 'NR>1 && $6-$5 < 18000 { print "comm " $6-$5 " us < 18 ms"; exit 1 }' "$TMP/t.csv" ||
	fail "communication faster than the 200 Mbit/s bottleneck allows"
sent=$(tc -s -n "$MLTCP_TB_PREFIX-br" qdisc show dev p-rx | awk '/Sent/ {print $2; exit}')
((sent >= 1500000)) || fail "tbf saw only $sent bytes"
echo "ok: 3 iterations through the tbf ($sent bytes)"

# Per-flow order: every veth steers its receive processing by flow (RPS);
# the masks are what pins that.  Then two competing flows must see no
# reordering (the kernel's counters stay 0): a sanity check of what the
# masks do, not a sensitive one (unsteered, two continuous bulk flows here
# reordered about 8 times a second each; flows this short, about once).
rps_of() {   # namespace suffix: "dev=rps_cpus" for every veth in it
	local ns=$MLTCP_TB_PREFIX-$1 dev
	for dev in $(ip -n "$ns" -o link show type veth | awk -F': ' '{print $2}' | cut -d@ -f1); do
		echo "$dev=$(ip netns exec "$ns" cat "/sys/class/net/$dev/queues/rx-0/rps_cpus")"
	done
}
[[ $(rps_of br | wc -l) -eq 3 ]] || fail "expected 3 veths in the bridge namespace: $(rps_of br)"
for ns in s1 s2 br rx; do
	for dm in $(rps_of $ns); do
		[[ "${dm#*=}" =~ [1-9a-f] ]] || fail "$ns: ${dm%%=*} does not steer (rps_cpus ${dm#*=})"
	done
done
printf 'profile big bytes=2M compute_us=1000\n' >>"$TMP/t.prof"
senders=()
for i in 1 2; do
	ip netns exec "$MLTCP_TB_PREFIX-s$i" "$EMU" send --dst "$("$TB" addr rx):5001" --profile-file "$TMP/t.prof" \
		--profile big --cc reno --iterations 10 --csv /dev/null --json /dev/null &
	senders+=($!)
done
for pid in "${senders[@]}"; do
	wait "$pid" || fail "a competing flow failed"
done
reordered=0
for i in 1 2; do
	n=$(ip netns exec "$MLTCP_TB_PREFIX-s$i" awk '/^TcpExt:/ { if (!h) { for (k = 2; k <= NF; k++) f[k] = $k; h = 1 }
		else for (k = 2; k <= NF; k++) if (f[k] ~ /^TCP(SACK|TS|Reno)Reorder$/) s += $k } END { print s + 0 }' /proc/net/netstat)
	reordered=$((reordered + n))
done
((reordered == 0)) || fail "two flows saw $reordered reordering events through the steered testbed"
echo "ok: two competing flows, 40 MB, no reordering"

"$TB" down
[[ $(left) -eq 0 ]] || fail "namespaces left after down: $(ip netns list)"
"$TB" down >/dev/null   # idempotent

# Ring layout: a worker namespace behind the bottleneck, tbf both ways.
rc=0; "$TB" up --rx-workers 40 >"$TMP/out" 2>&1 || rc=$?
[[ $rc -ne 0 && $(left) -eq 0 ]] && grep -q -- "--rx-workers must be" "$TMP/out" ||
	fail "--rx-workers 40: rc $rc: $(cat "$TMP/out")"
"$TB" up --senders 1 --reorder >"$TMP/out"
grep -q "may reorder" "$TMP/out" || fail "--reorder not reported: $(cat "$TMP/out")"
for dm in $(rps_of br) $(rps_of s1); do
	[[ ! "${dm#*=}" =~ [1-9a-f] ]] || fail "--reorder: ${dm%%=*} still steers (rps_cpus ${dm#*=})"
done
echo "ok: --reorder leaves the veths unsteered"
"$TB" down

# Routed: the middle namespace forwards at IP (no bridge port), traffic
# still crosses the tbf; the ring layout is refused.
rc=0; "$TB" up --senders 1 --rx-workers 1 --routed >"$TMP/out" 2>&1 || rc=$?
[[ $rc -ne 0 && $(left) -eq 0 ]] && grep -q -- "--routed builds the plain dumbbell" "$TMP/out" ||
	fail "--routed --rx-workers 1: rc $rc: $(cat "$TMP/out")"
"$TB" up --senders 2 --routed >"$TMP/out"
grep -q "routed (proxy ARP)" "$TMP/out" || fail "--routed not reported: $(cat "$TMP/out")"
for dev in p-rx p-s1 p-s2; do
	! ip -n "$MLTCP_TB_PREFIX-br" link show "$dev" | grep -q " master " || fail "--routed: $dev is a bridge port"
done
[[ $(ip netns exec "$MLTCP_TB_PREFIX-br" sysctl -n net.ipv4.ip_forward) == 1 ]] || fail "--routed: no forwarding"
ip netns exec "$MLTCP_TB_PREFIX-rx" "$EMU" recv --port 5003 --duration-s 30 >/dev/null &
ip netns exec "$MLTCP_TB_PREFIX-s2" "$EMU" send --dst "$("$TB" addr rx):5003" --profile-file "$TMP/t.prof" \
	--profile t --cc cubic --iterations 3 --csv "$TMP/r.csv" --json /dev/null
awk -F, 'NR>1 && $6-$5 < 18000 { print "comm " $6-$5 " us < 18 ms"; exit 1 }' "$TMP/r.csv" ||
	fail "--routed: communication faster than the 200 Mbit/s bottleneck allows"
sent=$(tc -s -n "$MLTCP_TB_PREFIX-br" qdisc show dev p-rx | awk '/Sent/ {print $2; exit}')
((sent >= 1500000)) || fail "--routed: tbf saw only $sent bytes"
echo "ok: --routed forwards through the tbf ($sent bytes)"
"$TB" down

ip netns add "$MLTCP_TB_PREFIX-r1"   # leftover
"$TB" up --senders 1 --rx-workers 1 --bidir
[[ $(left) -eq 4 ]] || fail "expected 4 namespaces (s1 br rx r1), have $(left)"
[[ $("$TB" addr r1) == 10.199.0.51 ]] || fail "addr r1: $("$TB" addr r1)"
peers=$("$TB" addr 1):5002,$("$TB" addr r1):5002
ring_rank() {   # rank, namespace
	ip netns exec "$MLTCP_TB_PREFIX-$2" "$EMU" ring --rank "$1" --peers "$peers" \
		--profile-file "$TMP/t.prof" --profile t --cc cubic --iterations 3 \
		--connect-timeout-s 5 --csv "$TMP/ring$1.csv" --json /dev/null
}
ring_rank 1 r1 &
worker=$!
ring_rank 0 s1 || fail "ring rank 0 failed"
wait $worker || fail "ring rank 1 failed"
[[ $(wc -l <"$TMP/ring0.csv") -eq 4 ]] || fail "ring: 3 iterations expected: $(cat "$TMP/ring0.csv")"
# 500 kB per iteration, 250 kB each way per step, two steps: >= 20.9 ms.
awk -F, 'NR>1 && $6-$5 < 18000 { print "comm " $6-$5 " us < 18 ms"; exit 1 }' "$TMP/ring0.csv" ||
	fail "ring faster than the 200 Mbit/s bottleneck allows"
for dev in p-rx p-rxb; do
	sent=$(tc -s -n "$MLTCP_TB_PREFIX-br" qdisc show dev $dev | awk '/Sent/ {print $2; exit}')
	((sent >= 1500000)) || fail "tbf on $dev saw only $sent bytes"
done
"$TB" status >"$TMP/status"
grep -q "towards the senders (p-rxb)" "$TMP/status" || fail "status does not show the second tbf"
echo "ok: 2-rank ring through the bottleneck in both directions"
"$TB" down
[[ $(left) -eq 0 ]] || fail "namespaces left after down: $(ip netns list)"
echo "PASS emu_testbed"
