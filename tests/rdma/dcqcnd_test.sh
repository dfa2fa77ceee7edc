#!/bin/bash
# dcqcnd_test.sh - mltcp-dcqcnd against a directory tree that mirrors the
# mlx5 sysfs layout (no such NIC on this host: the only stand-in of the RDMA
# tests).  Checks: refusal on missing / read-only files, per-phase scaling of
# rpg_ai_rate and rpg_hai_rate by F (hints and detection from the port byte
# counter), restore on SIGTERM, and restore after kill -9 on the next start.
# Touches no host state: everything lives in a mktemp directory.
#   usage: dcqcnd_test.sh BUILD/rdma/mltcp-dcqcnd
set -u -o pipefail
D=${1:?usage: $0 path/to/mltcp-dcqcnd}
T=$(mktemp -d /tmp/mltcp-dcqcnd-test.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

fails=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); }

RP=$T/sys/class/net/mltcp0/ecn/roce_rp
PORT=$T/sys/class/infiniband/mltcp_mlx5_0/ports/1
AI0=40
HAI0=200
make_tree() {
	rm -rf "$T/sys" "$T/state" "$T/hints"
	mkdir -p "$RP" "$PORT/counters" "$PORT/hw_counters"
	echo $AI0 >"$RP/rpg_ai_rate"
	echo $HAI0 >"$RP/rpg_hai_rate"
	echo 300 >"$RP/rpg_time_reset"
	echo 0 >"$PORT/counters/port_xmit_data"
	echo 0 >"$PORT/hw_counters/rp_cnp_handled"
}
ARGS=(--root "$T" --netdev mltcp0 --ibdev mltcp_mlx5_0 --port 1 --state-file "$T/state")
ai() { cat "$RP/rpg_ai_rate" 2>/dev/null; }
hai() { cat "$RP/rpg_hai_rate" 2>/dev/null; }
# wait_val FILE VALUE: the file holds VALUE within 5 s.
wait_val() {
	for _ in $(seq 1 250); do
		[ "$(cat "$1" 2>/dev/null)" = "$2" ] && return 0
		sleep 0.02
	done
	return 1
}
add_bytes() {	# bytes: advance the 4-byte-word counter
	local w
	w=$(cat "$PORT/counters/port_xmit_data")
	echo $((w + $1 / 4)) >"$PORT/counters/port_xmit_data.tmp"
	mv "$PORT/counters/port_xmit_data.tmp" "$PORT/counters/port_xmit_data"
}

# --- refusals -----------------------------------------------------------
make_tree
out=$("$D" "${ARGS[@]}" --netdev mltcp9 --duration 1 2>&1); rc=$?
if [ $rc = 3 ] && grep -q "roce_rp does not exist" <<<"$out"; then pass refuse-missing-dir
else fail refuse-missing-dir "rc=$rc $out"; fi
chmod 444 "$RP/rpg_hai_rate"
out=$("$D" "${ARGS[@]}" --duration 1 2>&1); rc=$?
if [ $rc = 3 ] && grep -q "rpg_hai_rate: not writable" <<<"$out" && [ "$(ai)" = $AI0 ] &&
   [ ! -e "$T/state" ]; then pass refuse-read-only
else fail refuse-read-only "rc=$rc $out"; fi
chmod 644 "$RP/rpg_hai_rate"
rm "$RP/rpg_ai_rate"
out=$("$D" "${ARGS[@]}" --duration 1 2>&1); rc=$?
if [ $rc = 3 ] && grep -q "rpg_ai_rate: No such file" <<<"$out"; then pass refuse-missing-file
else fail refuse-missing-file "rc=$rc $out"; fi
make_tree
rm "$PORT/counters/port_xmit_data"
out=$("$D" "${ARGS[@]}" --duration 1 2>&1); rc=$?
if [ $rc = 3 ] && grep -q "port byte counter" <<<"$out"; then pass refuse-missing-counter
else fail refuse-missing-counter "rc=$rc $out"; fi
out=$("$D" --ibdev x 2>&1); rc=$?
if [ $rc = 2 ] && grep -q -- "--netdev IF is required" <<<"$out"; then pass usage-error
else fail usage-error "rc=$rc $out"; fi

# --- hints: F = 0.25 + 1.5 * ratio scales both parameters ----------------
make_tree
mkfifo "$T/hints"
"$D" "${ARGS[@]}" --hints "$T/hints" -v >"$T/log" 2>&1 &
PIDS+=($!); pid=$!
exec 8>"$T/hints"
echo "iter 1000000" >&8
ok=1
wait_val "$RP/rpg_ai_rate" 10 && wait_val "$RP/rpg_hai_rate" 50 || { ok=0; echo "# ratio 0: $(ai) $(hai)"; }
add_bytes 500000	# ratio 0.5: F = 1.0
wait_val "$RP/rpg_ai_rate" 40 && wait_val "$RP/rpg_hai_rate" 200 || { ok=0; echo "# ratio 0.5: $(ai) $(hai)"; }
add_bytes 500000	# ratio 1.0: F = 1.75
wait_val "$RP/rpg_ai_rate" 70 && wait_val "$RP/rpg_hai_rate" 350 || { ok=0; echo "# ratio 1: $(ai) $(hai)"; }
echo "iter 1000000" >&8	# next iteration: back to F = 0.25
wait_val "$RP/rpg_ai_rate" 10 || { ok=0; echo "# next iteration: $(ai)"; }
[ -f "$T/state" ] || { ok=0; echo "# no state file while running"; }
[ $ok = 1 ] && pass scale-by-hints || { fail scale-by-hints "see log"; sed 's/^/#   /' "$T/log"; }

# --- SIGTERM restores -----------------------------------------------------
kill -TERM $pid
wait $pid; rc=$?
exec 8>&-
if [ $rc = 0 ] && [ "$(ai)" = $AI0 ] && [ "$(hai)" = $HAI0 ] && [ ! -e "$T/state" ]; then
	pass restore-on-sigterm
else fail restore-on-sigterm "rc=$rc ai=$(ai) hai=$(hai)"; fi

# --- detection from the port byte counter ---------------------------------
# Iterations of 20 x 50 KB with ~3 ms between steps, 60 ms idle between
# iterations (above the 16 ms idle threshold that --srtt-us 2000 sets).
make_tree
"$D" "${ARGS[@]}" -v --interval-us 500 --srtt-us 2000 >"$T/log" 2>&1 &
PIDS+=($!); pid=$!
sleep 0.2
for it in 1 2 3 4 5; do
	for s in $(seq 1 20); do add_bytes 51200; sleep 0.001; done
	sleep 0.06
done
kill -TERM $pid; wait $pid
lo=$(sed -n 's/.*gain=\([0-9]*\)\/1024 ratio=[0-9].*/\1/p' "$T/log" | sort -n | head -n1)
hi=$(sed -n 's/.*gain=\([0-9]*\)\/1024 ratio=[0-9].*/\1/p' "$T/log" | sort -n | tail -n1)
iters=$(sed -n 's/.*done: \([0-9]*\) iterations.*/\1/p' "$T/log")
if [ -n "$lo" ] && [ "$lo" -le 512 ] && [ "$hi" -ge 1536 ] && [ "${iters:-0}" -ge 3 ] &&
   [ "$(ai)" = $AI0 ] && [ "$(hai)" = $HAI0 ]; then
	pass scale-by-detection "(gain $lo..$hi /1024, $iters iterations)"
else fail scale-by-detection "gain ${lo:-?}..${hi:-?} iterations=${iters:-?}"; sed 's/^/#   /' "$T/log" | tail -n 30; fi

# --- kill -9, then the next start restores ----------------------------------
make_tree
mkfifo "$T/hints"
"$D" "${ARGS[@]}" --hints "$T/hints" >"$T/log" 2>&1 &
PIDS+=($!); pid=$!
echo "iter 1000000" >"$T/hints"
wait_val "$RP/rpg_ai_rate" 10
kill -9 $pid; wait $pid 2>/dev/null
if [ "$(ai)" = 10 ] && [ -f "$T/state" ]; then
	out=$("$D" "${ARGS[@]}" --restore 2>&1); rc=$?
	if [ $rc = 0 ] && [ "$(ai)" = $AI0 ] && [ "$(hai)" = $HAI0 ] && [ ! -e "$T/state" ] &&
	   grep -q "left by a previous run" <<<"$out"; then pass restore-after-kill9
	else fail restore-after-kill9 "rc=$rc ai=$(ai) hai=$(hai) $out"; fi
else
	fail restore-after-kill9 "precondition: ai=$(ai) state=$(ls "$T")"
fi
# The same through a normal start: recover, then modulate from the originals.
"$D" "${ARGS[@]}" --hints "$T/hints" >"$T/log" 2>&1 &
PIDS+=($!); pid=$!
echo "iter 1000000" >"$T/hints"
wait_val "$RP/rpg_ai_rate" 10
kill -9 $pid; wait $pid 2>/dev/null
"$D" "${ARGS[@]}" --duration 0.3 >"$T/log" 2>&1; rc=$?
if [ $rc = 0 ] && grep -q "left by a previous run" "$T/log" && [ "$(ai)" = $AI0 ] &&
   [ "$(hai)" = $HAI0 ] && [ ! -e "$T/state" ] && grep -q "rpg_ai_rate=$AI0 " "$T/log"; then
	pass recover-on-next-start
else fail recover-on-next-start "rc=$rc ai=$(ai)"; sed 's/^/#   /' "$T/log"; fi

# A corrupt state file is reported, not guessed at.
make_tree
echo "garbage" >"$T/state"
out=$("$D" "${ARGS[@]}" --duration 0.2 2>&1); rc=$?
if [ $rc = 4 ] && grep -q "corrupt state file" <<<"$out" && [ "$(ai)" = $AI0 ]; then
	pass corrupt-state-refused
else fail corrupt-state-refused "rc=$rc $out"; fi

[ $fails = 0 ] && echo "dcqcnd: all tests passed" || echo "dcqcnd: $fails failed"
exit $((fails > 0))
