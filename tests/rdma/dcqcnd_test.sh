#!/bin/bash
# dcqcnd_test.sh - mltcp-dcqcnd against directory trees that mirror both
# host interfaces of mlx5 firmware DCQCN (no such NIC on this host: the only
# stand-in of the RDMA tests): the inbox driver's debugfs
# (sys/kernel/debug/mlx5/<pci>/cc_params/, every file the driver creates,
# from tests/rdma/dcqcnd_mlx5_cc_names.txt = cong.c's name list) and
# MLNX_OFED's sysfs (sys/class/net/<if>/ecn/roce_rp|roce_np/), plus the
# RDMA device's sysfs (device link, gid_attrs, port counters).
# Checks: the daemon's table names the driver's files; refusals; the
# gain-to-parameter mapping for a scripted iteration sequence on each
# backend; backend choice when both exist; the write limit; restore on
# SIGTERM and after kill -9 (next start, --restore); a device whose files
# vanish mid-run while another carries on; a read-only and a failing file;
# the status file; a two-job run whose write rate is printed.
# Touches no host state: everything lives in a mktemp directory.
#   usage: dcqcnd_test.sh BUILD/rdma/mltcp-dcqcnd [VM_KERNEL_CACHE]
set -u -o pipefail
D=${1:?usage: $0 path/to/mltcp-dcqcnd [vm-kernel-cache]}
KCACHE=${2:-}
HERE=$(cd "$(dirname "$0")" && pwd)
NAMES=$HERE/dcqcnd_mlx5_cc_names.txt
T=$(mktemp -d /tmp/mltcp-dcqcnd-test.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	exec 8>&- 9>&-
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

fails=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); }
showlog() { sed 's/^/#   /' "$1" | tail -n "${2:-25}"; }

AI0=40
HAI0=200
TABLE=$("$D" --list-params | grep -v '^#')
DBG=$T/sys/kernel/debug

# The table's default for a name in column $1 (2: debugfs, 3: sysfs).
default_of() { awk -F'\t' -v c="$1" -v n="$2" '$c == n { print $7 }' <<<"$TABLE"; }

# make_debugfs PCI: cc_params/ as mlx5_ib_init_cong_debugfs creates it.
make_debugfs() {
	local dir=$DBG/mlx5/$1/cc_params n v
	mkdir -p "$dir"
	grep -v '^#' "$NAMES" | while read -r n; do
		v=$(default_of 2 "$n")
		echo "${v:-0}" >"$dir/$n"
		chmod 600 "$dir/$n"
	done
	echo $AI0 >"$dir/rp_ai_rate"
	echo $HAI0 >"$dir/rp_hai_rate"
}
# make_sysfs NETDEV: ecn/roce_rp/ and roce_np/ as MLNX_OFED has them.
make_sysfs() {
	local ecn=$T/sys/class/net/$1/ecn n v
	awk -F'\t' '$3 != "-" { print $3 }' <<<"$TABLE" | while read -r n; do
		v=$(default_of 3 "$n")
		mkdir -p "$(dirname "$ecn/$n")"
		echo "$v" >"$ecn/$n"
		chmod 644 "$ecn/$n"
	done
	echo $AI0 >"$ecn/roce_rp/rpg_ai_rate"
	echo $HAI0 >"$ecn/roce_rp/rpg_hai_rate"
}
# make_dev IBDEV NETDEV PCI debugfs|sysfs|both|none
make_dev() {
	local ib=$1 nd=$2 pci=$3 pdir=$T/sys/devices/pci0000:00/$3
	local port=$T/sys/class/infiniband/$1/ports/1
	mkdir -p "$pdir/net/$nd" "$pdir/infiniband/$ib" "$port/counters" "$port/hw_counters" \
		"$port/gid_attrs/ndevs" "$T/sys/class/net/$nd" "$DBG"
	ln -sfn "$pdir" "$T/sys/class/infiniband/$ib/device"
	ln -sfn "$pdir" "$T/sys/class/net/$nd/device"
	echo "$nd" >"$port/gid_attrs/ndevs/0"
	echo 0 >"$port/counters/port_xmit_data"
	echo 0 >"$port/hw_counters/rp_cnp_handled"
	echo 100000 >"$T/sys/class/net/$nd/speed"
	case $4 in debugfs | both) make_debugfs "$pci" ;; esac
	case $4 in sysfs | both) make_sysfs "$nd" ;; esac
}
reset_tree() {
	rm -rf "$T/sys" "$T/state" "$T"/*.fifo "$T"/log* "$T/status.json"
	mkdir -p "$T/state" "$DBG"
}
P0=0000:03:00.0
P1=0000:04:00.0
DBG0=$DBG/mlx5/$P0/cc_params
DBG1=$DBG/mlx5/$P1/cc_params
SYS0=$T/sys/class/net/mltcp0/ecn/roce_rp
SYS1=$T/sys/class/net/mltcp1/ecn/roce_rp
CTR0=$T/sys/class/infiniband/mltcp_mlx5_0/ports/1/counters/port_xmit_data
CTR1=$T/sys/class/infiniband/mltcp_mlx5_1/ports/1/counters/port_xmit_data
# --first-seed 0: the gain follows the bytes from the first hint, without the
# seed that stands in for that iteration's ratio (core/mltcp_iter.h).
COMMON=(--root "$T" --state-dir "$T/state" --status-file "$T/status.json" --first-seed 0)

val() { cat "$1" 2>/dev/null; }
# wait_val FILE VALUE: the file holds VALUE within 5 s.
wait_val() {
	for _ in $(seq 1 250); do
		[ "$(val "$1")" = "$2" ] && return 0
		sleep 0.02
	done
	return 1
}
wait_file() {
	for _ in $(seq 1 250); do
		[ -e "$1" ] && return 0
		sleep 0.02
	done
	return 1
}
# hint FIFO LINE: once the daemon reads FIFO (at most 5 s, so that a daemon
# that exited cannot hang the test).  Long-lived writers open the FIFO
# read-write instead (exec 8<>FIFO), which never blocks and keeps the data.
hint() { timeout 5 sh -c 'echo "$1" >"$2"' _ "$2" "$1"; }
add_bytes() {	# COUNTER BYTES: advance a 4-byte-word counter atomically
	local w
	w=$(cat "$1")
	echo $((w + $2 / 4)) >"$1.tmp"
	mv "$1.tmp" "$1"
}
# Checksum of every file in a directory except the two the daemon writes.
others_sum() {
	find "$1" -type f ! -name '*ai_rate' ! -name '*hai_rate' -exec cat {} + | md5sum
}
# status KEY DEVICE: a field of the status file's entry for DEVICE.
status() {
	python3 -c 'import json,sys
d=[x for x in json.load(open(sys.argv[1]))["devices"] if x["device"]==sys.argv[3]]
print(d[0][sys.argv[2]] if d else "")' "$T/status.json" "$1" "$2" 2>/dev/null
}

# busiest_second LOG DEVICE: most parameter writes the verbose log shows
# for DEVICE in any 1-second window (lines "DEVICE...: t=<ms> writes=<n>").
busiest_second() {
	sed -n "s/.*: $2\/.* t=\([0-9]*\)ms writes=\([0-9]*\) .*/\1 \2/p" "$1" | awk '
		{ t[NR] = $1; w[NR] = $2 }
		END { m = 0; for (i = 1; i <= NR; i++) { s = 0
			for (j = i; j <= NR && t[j] - t[i] < 1000; j++) s += w[j]
			if (s > m) m = s }
		      print m }'
}

# --- the table names exactly the driver's files -------------------------
tbl=$(awk -F'\t' '{ print $2 }' <<<"$TABLE")
drv=$(grep -v '^#' "$NAMES")
if [ "$tbl" = "$drv" ] && [ "$(wc -l <<<"$drv")" = 22 ]; then pass table-matches-driver
else fail table-matches-driver "$(diff <(echo "$drv") <(echo "$tbl") | head)"; fi
ko=$(find "${KCACHE:-/nonexistent}" -path '*/hw/mlx5/mlx5_ib.ko' 2>/dev/null | head -n1)
if [ -n "$ko" ]; then
	# The module's strings hold the name array in order, then its counters.
	mod=$(strings -a "$ko" | sed -n '/^rp_clamp_tgt_rate$/,/^np_cnp_prio$/p')
	if [ -n "$mod" ] && [ "$mod" = "$(sed -n '/^rp_clamp_tgt_rate$/,/^np_cnp_prio$/p' <<<"$drv")" ]
	then pass "names-match-module ($ko)"
	else fail names-match-module "$ko: $(echo $mod)"; fi
else
	echo "SKIP names-match-module (no Debian mlx5_ib.ko in ${KCACHE:-the VM kernel cache}; make check-rdma-vm fetches it)"
fi

# --- command line -----------------------------------------------------------
out=$("$D" --help); rc=$?
if [ $rc = 0 ] && grep -q 'debugfs .*inbox' <<<"$out" && grep -q 'cc_params/rp_ai_rate' <<<"$out" &&
   grep -q 'sysfs .*MLNX_OFED' <<<"$out" && grep -q 'roce_rp/rpg_ai_rate' <<<"$out"; then
	pass help-names-both-backends
else fail help-names-both-backends "rc=$rc"; fi
ok=1
out=$("$D" "${COMMON[@]}" 2>&1); [ $? = 2 ] && grep -q "no device" <<<"$out" || { ok=0; echo "# $out"; }
out=$("$D" "${COMMON[@]}" --device x --max-writes-per-sec 1 2>&1)
[ $? = 2 ] && grep -q -- "--max-writes-per-sec: '1' is not an integer in 2..10000" <<<"$out" || { ok=0; echo "# $out"; }
out=$("$D" "${COMMON[@]}" --device x,backend=nic 2>&1)
[ $? = 2 ] && grep -q "expected auto, debugfs or sysfs" <<<"$out" || { ok=0; echo "# $out"; }
out=$("$D" "${COMMON[@]}" --device x,colour=red 2>&1)
[ $? = 2 ] && grep -q "unknown key 'colour'" <<<"$out" || { ok=0; echo "# $out"; }
# MLTCP parameters come from the core's table: name, range and unit.
out=$("$D" "${COMMON[@]}" --device x --slope 99999 2>&1)
[ $? = 2 ] && grep -q "slope must be in .0, 8192. 1/1024" <<<"$out" || { ok=0; echo "# $out"; }
# ... only those that act on a DCQCN flow.
out=$("$D" "${COMMON[@]}" --device x --normalize 0 2>&1)
[ $? = 2 ] && grep -q -- "--normalize does not apply here: it acts on window flows" <<<"$out" || { ok=0; echo "# $out"; }
[ $ok = 1 ] && pass usage-errors || fail usage-errors "see above"

# --- refusals: nothing to write, nothing changed -------------------------------
reset_tree
make_dev mltcp_mlx5_0 mltcp0 $P0 none
out=$("$D" "${COMMON[@]}" --device mltcp_mlx5_0 --duration 1 2>&1); rc=$?
if [ $rc = 3 ] && grep -q "ecn/roce_rp is missing (no MLNX_OFED)" <<<"$out" &&
   grep -q "debugfs is not mounted" <<<"$out" && grep -q "nothing was changed" <<<"$out"; then
	pass refuse-no-backend
else fail refuse-no-backend "rc=$rc $out"; fi
mkdir -p "$DBG/mlx5/$P0"
out=$("$D" "${COMMON[@]}" --device mltcp0,backend=debugfs --duration 1 2>&1); rc=$?
if [ $rc = 3 ] && grep -q "cc_params is missing: the firmware does not allow" <<<"$out"; then
	pass refuse-no-cc-params
else fail refuse-no-cc-params "rc=$rc $out"; fi
out=$("$D" "${COMMON[@]}" --device mltcp9 --duration 1 2>&1); rc=$?
if [ $rc = 3 ] && grep -q "mltcp9: neither an RDMA device" <<<"$out"; then pass refuse-unknown-device
else fail refuse-unknown-device "rc=$rc $out"; fi
reset_tree
make_dev mltcp_mlx5_0 mltcp0 $P0 sysfs
rm "$T/sys/class/infiniband/mltcp_mlx5_0/ports/1/counters/port_xmit_data"
out=$("$D" "${COMMON[@]}" --device mltcp0 --duration 1 2>&1); rc=$?
if [ $rc = 3 ] && grep -q "port byte counter" <<<"$out" && [ ! -e "$T/state/mltcp_mlx5_0.state" ]; then
	pass refuse-missing-counter
else fail refuse-missing-counter "rc=$rc $out"; fi
reset_tree
make_dev mltcp_mlx5_0 mltcp0 $P0 sysfs
out=$("$D" "${COMMON[@]}" --device mltcp_mlx5_0 --device mltcp0 --duration 1 2>&1); rc=$?
if [ $rc = 2 ] && grep -q "mltcp_mlx5_0 is named twice" <<<"$out" && [ -z "$(ls "$T/state")" ]; then
	pass refuse-device-named-twice
else fail refuse-device-named-twice "rc=$rc $out"; fi

# --- gain-to-parameter mapping for a scripted iteration sequence ----------------
# F = 0.25 + 1.5 * ratio in steps of 1/16; ratios 0, 1/4, 1/2, 3/4, 1 of a
# 1 MB iteration -> F 0.25, 0.625, 1.0, 1.375, 1.75 -> AI 10 25 40 55 70 and
# HAI 50 125 200 275 350 (from 40 and 200); then the next iteration: F 0.25.
for b in debugfs sysfs; do
	reset_tree
	make_dev mltcp_mlx5_0 mltcp0 $P0 $b
	if [ $b = debugfs ]; then AI=$DBG0/rp_ai_rate HAI=$DBG0/rp_hai_rate DIR=$DBG0
	else AI=$SYS0/rpg_ai_rate HAI=$SYS0/rpg_hai_rate DIR=$T/sys/class/net/mltcp0/ecn; fi
	before=$(others_sum "$DIR")
	mkfifo "$T/h0.fifo"
	# Named by its netdev: the RDMA device and PCI function are looked up.
	"$D" "${COMMON[@]}" --device "mltcp0,hints=$T/h0.fifo" -v >"$T/log" 2>&1 &
	PIDS+=($!); pid=$!
	exec 8<>"$T/h0.fifo"
	echo "iter 1000000" >&8
	ok=1 seen=""
	for step in "0 10 50" "250000 25 125" "250000 40 200" "250000 55 275" "250000 70 350"; do
		set -- $step
		[ "$1" != 0 ] && add_bytes "$CTR0" "$1"
		if wait_val "$AI" "$2" && wait_val "$HAI" "$3"; then seen="$seen $2/$3"
		else ok=0; seen="$seen [want $2/$3 got $(val "$AI")/$(val "$HAI")]"; fi
	done
	echo "iter 1000000" >&8
	wait_val "$AI" 10 && wait_val "$HAI" 50 || { ok=0; seen="$seen [next iteration: $(val "$AI")]"; }
	[ -f "$T/state/mltcp_mlx5_0.state" ] || { ok=0; seen="$seen [no state file]"; }
	grep -q "modulating mltcp_mlx5_0/mltcp0 \[$b\]" "$T/log" || { ok=0; seen="$seen [backend]"; }
	[ "$(others_sum "$DIR")" = "$before" ] || { ok=0; seen="$seen [other parameters changed]"; }
	[ $ok = 1 ] && pass "gain-mapping-$b ($seen)" || { fail "gain-mapping-$b" "$seen"; showlog "$T/log"; }
	kill -TERM $pid
	wait $pid; rc=$?
	exec 8>&-
	if [ $rc = 0 ] && [ "$(val "$AI")" = $AI0 ] && [ "$(val "$HAI")" = $HAI0 ] &&
	   [ ! -e "$T/state/mltcp_mlx5_0.state" ] && grep -q '"state": "stopped"' "$T/status.json"; then
		pass "restore-on-sigterm-$b"
	else fail "restore-on-sigterm-$b" "rc=$rc ai=$(val "$AI") hai=$(val "$HAI")"; showlog "$T/log"; fi
done

# --- both backends present: one is chosen, the other left alone ---------------
for choice in auto debugfs; do
	reset_tree
	make_dev mltcp_mlx5_0 mltcp0 $P0 both
	if [ $choice = auto ]; then W=$SYS0 U=$DBG0 wai=rpg_ai_rate uai=rp_ai_rate
	else W=$DBG0 U=$SYS0 wai=rp_ai_rate uai=rpg_ai_rate; fi
	usum=$(find "$U" -type f -exec cat {} + | md5sum)
	mkfifo "$T/h0.fifo"
	"$D" "${COMMON[@]}" --device "mltcp_mlx5_0,hints=$T/h0.fifo" --backend $choice >"$T/log" 2>&1 &
	PIDS+=($!); pid=$!
	hint "$T/h0.fifo" "iter 1000000"
	if wait_val "$W/$wai" 10 && [ "$(val "$U/$uai")" = $AI0 ] &&
	   [ "$(find "$U" -type f -exec cat {} + | md5sum)" = "$usum" ] &&
	   grep -q "$U exists too; it is left alone" "$T/log"; then
		pass "both-backends-$choice (wrote $W)"
	else fail "both-backends-$choice" "written=$(val "$W/$wai") other=$(val "$U/$uai")"; showlog "$T/log"; fi
	kill -TERM $pid; wait $pid
done

# --- the write limit: at most N parameter writes in any second -------------------
# 30 quantised gain changes in 1.5 s (each changes both parameters) against a
# limit of 6 writes per second: updates wait, the values still end at the
# last gain, and no 1-second window holds more than 6 writes.
reset_tree
make_dev mltcp_mlx5_0 mltcp0 $P0 debugfs
mkfifo "$T/h0.fifo"
"$D" "${COMMON[@]}" --device "mltcp_mlx5_0,hints=$T/h0.fifo" --max-writes-per-sec 6 -v \
	--status-interval-ms 50 >"$T/log" 2>&1 &
PIDS+=($!); pid=$!
exec 8<>"$T/h0.fifo"
for i in $(seq 1 15); do
	echo "iter 1000000" >&8; sleep 0.05	# F 0.25
	add_bytes "$CTR0" 1000000; sleep 0.05	# F 1.75
done
wait_val "$DBG0/rp_ai_rate" 70; final=$(val "$DBG0/rp_ai_rate")
sleep 1.1	# let the last deferred update through, if any
deferred=$(status gain_updates_deferred_total mltcp_mlx5_0)
writes=$(status param_writes_total mltcp_mlx5_0)
kill -TERM $pid; wait $pid
exec 8>&-
busiest=$(busiest_second "$T/log" mltcp_mlx5_0)
if [ "$final" = 70 ] && [ "${busiest:-99}" -le 6 ] && [ "${busiest:-0}" -ge 4 ] &&
   [ "${deferred:-0}" -ge 5 ]; then
	pass "write-limit (busiest second: $busiest writes, $deferred updates deferred, $writes writes incl. 2 probes)"
else fail write-limit "final=$final busiest=$busiest deferred=$deferred writes=$writes"; showlog "$T/log"; fi

# --- kill -9: the next start or --restore puts the originals back ---------------
for b in debugfs sysfs; do
	reset_tree
	make_dev mltcp_mlx5_0 mltcp0 $P0 $b
	[ $b = debugfs ] && AI=$DBG0/rp_ai_rate HAI=$DBG0/rp_hai_rate || AI=$SYS0/rpg_ai_rate HAI=$SYS0/rpg_hai_rate
	mkfifo "$T/h0.fifo"
	"$D" "${COMMON[@]}" --device "mltcp0,hints=$T/h0.fifo" >"$T/log" 2>&1 &
	PIDS+=($!); pid=$!
	hint "$T/h0.fifo" "iter 1000000"
	wait_val "$AI" 10
	kill -9 $pid; wait $pid 2>/dev/null
	if [ "$(val "$AI")" = 10 ] && [ -f "$T/state/mltcp_mlx5_0.state" ]; then
		out=$("$D" "${COMMON[@]}" --restore 2>&1); rc=$?
		if [ $rc = 0 ] && [ "$(val "$AI")" = $AI0 ] && [ "$(val "$HAI")" = $HAI0 ] &&
		   [ ! -e "$T/state/mltcp_mlx5_0.state" ] && grep -q "left by a previous run" <<<"$out"; then
			pass "restore-after-kill9-$b"
		else fail "restore-after-kill9-$b" "rc=$rc ai=$(val "$AI") $out"; fi
	else
		fail "restore-after-kill9-$b" "precondition: ai=$(val "$AI") state=$(ls "$T/state")"
	fi
	# The same through a normal start: recover, then modulate from the originals.
	"$D" "${COMMON[@]}" --device "mltcp0,hints=$T/h0.fifo" >"$T/log" 2>&1 &
	PIDS+=($!); pid=$!
	hint "$T/h0.fifo" "iter 1000000"
	wait_val "$AI" 10
	kill -9 $pid; wait $pid 2>/dev/null
	"$D" "${COMMON[@]}" --device mltcp0 --duration 0.3 >"$T/log" 2>&1; rc=$?
	if [ $rc = 0 ] && grep -q "left by a previous run" "$T/log" && [ "$(val "$AI")" = $AI0 ] &&
	   [ "$(val "$HAI")" = $HAI0 ] && [ ! -e "$T/state/mltcp_mlx5_0.state" ] &&
	   grep -q "_ai_rate=$AI0 " "$T/log"; then
		pass "recover-on-next-start-$b"
	else fail "recover-on-next-start-$b" "rc=$rc ai=$(val "$AI")"; showlog "$T/log"; fi
done

# --- a device vanishes mid-run; the other carries on ----------------------------
reset_tree
make_dev mltcp_mlx5_0 mltcp0 $P0 debugfs
make_dev mltcp_mlx5_1 mltcp1 $P1 sysfs
mkfifo "$T/h0.fifo" "$T/h1.fifo"
"$D" "${COMMON[@]}" --device "mltcp_mlx5_0,hints=$T/h0.fifo" \
	--device "mltcp_mlx5_1,hints=$T/h1.fifo" --status-interval-ms 50 >"$T/log" 2>&1 &
PIDS+=($!); pid=$!
exec 8<>"$T/h0.fifo" 9<>"$T/h1.fifo"
echo "iter 1000000" >&8
echo "iter 1000000" >&9
ok=1 why=""
wait_val "$DBG0/rp_ai_rate" 10 && wait_val "$SYS1/rpg_ai_rate" 10 || { ok=0; why="not modulated"; }
rm -rf "$T/sys/class/net/mltcp1/ecn"	# hot-unplug / reset of device 1
add_bytes "$CTR1" 500000		# its next update must fail
for _ in $(seq 1 100); do grep -q "disappeared" "$T/log" && break; sleep 0.02; done
grep -q "mltcp_mlx5_1/mltcp1 \[sysfs\]: write failed: .*rpg_ai_rate: No such file or directory: the device disappeared (reset or hot-unplug?); restoring its originals and stopping this device (other devices carry on)" "$T/log" ||
	{ ok=0; why="$why [no clear message]"; }
grep -q "the originals stay in $T/state/mltcp_mlx5_1.state" "$T/log" || { ok=0; why="$why [state kept?]"; }
add_bytes "$CTR0" 500000			# device 0 still follows its job
wait_val "$DBG0/rp_ai_rate" 40 || { ok=0; why="$why [device 0 stopped: $(val "$DBG0/rp_ai_rate")]"; }
sleep 0.15
[ "$(status state mltcp_mlx5_1)" = failed ] && [ "$(status state mltcp_mlx5_0)" = active ] &&
   [ "$(status param_write_failures_total mltcp_mlx5_1)" = 1 ] || { ok=0; why="$why [status]"; }
kill -TERM $pid; wait $pid; rc=$?
exec 8>&- 9>&-
[ $rc = 3 ] && [ "$(val "$DBG0/rp_ai_rate")" = $AI0 ] && [ ! -e "$T/state/mltcp_mlx5_0.state" ] &&
   [ -f "$T/state/mltcp_mlx5_1.state" ] || { ok=0; why="$why [exit rc=$rc ai0=$(val "$DBG0/rp_ai_rate")]"; }
[ $ok = 1 ] && pass vanish-mid-run || { fail vanish-mid-run "$why"; showlog "$T/log"; }
# The device comes back with other values (as after a firmware reset):
# --restore puts the originals back from the state file that was kept.
make_sysfs mltcp1
echo 5 >"$SYS1/rpg_ai_rate"
echo 50 >"$SYS1/rpg_hai_rate"
out=$("$D" "${COMMON[@]}" --restore --device mltcp_mlx5_1 2>&1); rc=$?
if [ $rc = 0 ] && [ "$(val "$SYS1/rpg_ai_rate")" = $AI0 ] && [ "$(val "$SYS1/rpg_hai_rate")" = $HAI0 ] &&
   [ ! -e "$T/state/mltcp_mlx5_1.state" ]; then pass restore-after-device-returns
else fail restore-after-device-returns "rc=$rc $out"; fi

# --- a read-only file refuses its device only; a failing file stops its own ------
reset_tree
make_dev mltcp_mlx5_0 mltcp0 $P0 debugfs
make_dev mltcp_mlx5_1 mltcp1 $P1 debugfs
chmod 400 "$DBG1/rp_hai_rate"
mkfifo "$T/h0.fifo" "$T/h1.fifo"
"$D" "${COMMON[@]}" --device "mltcp_mlx5_0,hints=$T/h0.fifo" \
	--device "mltcp_mlx5_1,hints=$T/h1.fifo" >"$T/log" 2>&1 &
PIDS+=($!); pid=$!
hint "$T/h0.fifo" "iter 1000000"
ok=1 why=""
wait_val "$DBG0/rp_ai_rate" 10 || { ok=0; why="device 0 not modulated"; }
grep -q "mltcp_mlx5_1/mltcp1 \[debugfs\]: cannot modulate DCQCN: .*rp_hai_rate: not writable (mode 400).*nothing was changed" "$T/log" ||
	{ ok=0; why="$why [no clear refusal]"; }
[ "$(val "$DBG1/rp_ai_rate")" = $AI0 ] && [ ! -e "$T/state/mltcp_mlx5_1.state" ] || { ok=0; why="$why [device 1 touched]"; }
# A write that fails (ENOSPC from /dev/full stands for EIO): device 0 stops
# and says so; its values cannot be put back, so the state file stays.
ln -sfn /dev/full "$DBG0/rp_hai_rate.new" && mv -T "$DBG0/rp_hai_rate.new" "$DBG0/rp_hai_rate"
add_bytes "$CTR0" 500000
for _ in $(seq 1 100); do grep -q "No space left" "$T/log" && break; sleep 0.02; done
grep -q "mltcp_mlx5_0/mltcp0 \[debugfs\]: write failed: .*rp_hai_rate: write: No space left on device" "$T/log" ||
	{ ok=0; why="$why [no write-failure message]"; }
wait $pid; rc=$?	# no device left: exits by itself
[ $rc = 3 ] && grep -q "no device left to modulate" "$T/log" && [ -f "$T/state/mltcp_mlx5_0.state" ] &&
	[ "$(val "$DBG0/rp_ai_rate")" = $AI0 ] || { ok=0; why="$why [rc=$rc ai0=$(val "$DBG0/rp_ai_rate")]"; }
[ $ok = 1 ] && pass read-only-and-failing-file || { fail read-only-and-failing-file "$why"; showlog "$T/log"; }

# A corrupt state file is reported, not guessed at.
reset_tree
make_dev mltcp_mlx5_0 mltcp0 $P0 sysfs
echo "garbage" >"$T/state/mltcp_mlx5_0.state"
out=$("$D" "${COMMON[@]}" --device mltcp0 --duration 0.2 2>&1); rc=$?
if [ $rc = 4 ] && grep -q "corrupt state file" <<<"$out" && [ "$(val "$SYS0/rpg_ai_rate")" = $AI0 ]; then
	pass corrupt-state-refused
else fail corrupt-state-refused "rc=$rc $out"; fi

# --- two jobs, one per device, tracked from the byte counters ---------------------
# Each job: 6 iterations of 20 x 50 KB, ~3 ms between messages, 120 ms idle
# between iterations (above the 48 ms idle threshold --srtt-us 6000 sets);
# job b starts 30 ms after job a.  Device 0 on debugfs, device 1 on sysfs.
# The limit (the default 50 writes per second per device, or
# $DCQCND_TWO_JOB_LIMIT) holds in every second; the mean rate over the run
# is printed.
reset_tree
make_dev mltcp_mlx5_0 mltcp0 $P0 debugfs
make_dev mltcp_mlx5_1 mltcp1 $P1 sysfs
LIMIT=${DCQCND_TWO_JOB_LIMIT:-50}
"$D" "${COMMON[@]}" --device mltcp_mlx5_0 --device mltcp_mlx5_1 --interval-us 500 \
	--srtt-us 6000 --status-interval-ms 100 --max-writes-per-sec "$LIMIT" -v >"$T/log" 2>&1 &
PIDS+=($!); pid=$!
sleep 0.2
# job COUNTER DELAY: one process per job (forks per message would stretch
# the gaps on a loaded host past the idle threshold).
job() {
	python3 - "$1" "$2" <<'PY'
import os, sys, time
path, delay = sys.argv[1], float(sys.argv[2])
time.sleep(delay)
words = int(open(path).read())
for _ in range(6):
    for _ in range(20):
        words += 51200 // 4
        with open(path + ".tmp", "w") as f:
            f.write(f"{words}\n")
        os.rename(path + ".tmp", path)
        time.sleep(0.003)
    time.sleep(0.12)
PY
}
t0=$(date +%s.%N)
job "$CTR0" 0 & ja=$!
job "$CTR1" 0.03 & jb=$!
wait $ja $jb
t1=$(date +%s.%N)
sleep 0.15
kill -TERM $pid; wait $pid; rc=$?
ok=1 res=""
for dev in mltcp_mlx5_0 mltcp_mlx5_1; do
	w=$(status param_writes_total $dev); it=$(status iterations $dev)
	dfr=$(status gain_updates_deferred_total $dev); busy=$(busiest_second "$T/log" $dev)
	rate=$(python3 -c "print(f'{($w - 2) / ($t1 - $t0):.1f}')")
	res="$res $dev: $((w - 2)) writes in $(python3 -c "print(f'{$t1 - $t0:.2f}')") s = $rate/s"
	res="$res (busiest second $busy, $dfr updates deferred), $it iterations;"
	[ "${it:-0}" -ge 4 ] && [ "${it:-0}" -le 12 ] && [ "${busy:-99999}" -le "$LIMIT" ] && [ "$((w - 2))" -gt 0 ] || ok=0
done
[ "$(val "$DBG0/rp_ai_rate")" = $AI0 ] && [ "$(val "$SYS1/rpg_ai_rate")" = $AI0 ] && [ $rc = 0 ] || ok=0
[ $ok = 1 ] && pass "two-jobs (limit $LIMIT/s:$res)" || { fail two-jobs "$res rc=$rc"; showlog "$T/log"; }

[ $fails = 0 ] && echo "dcqcnd: all tests passed" || echo "dcqcnd: $fails failed"
exit $((fails > 0))
