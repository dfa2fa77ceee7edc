#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# concurrency_test.sh - state-changing mltcpctl commands run at the same
# time must not undo each other's work (make check-ops-concurrency).
#
# Starts loads, attaches, sets, detaches and unloads concurrently and checks
# the final host state: exactly one of several simultaneous loads wins and
# the losers leave its registrations and pins alone; concurrent attaches and
# sets all land; a command waits while another holds the state lock
# (/run/lock/mltcp.lock, tools/mltcpctl/lock.cpp).  Root; holds
# /run/lock/mltcp-host.lock; removes what it made in its EXIT trap.  ~5 s.
#
#   MLTCPCTL=path tests/bpf/concurrency_test.sh
set -uo pipefail

NAME=concurrency_test
. "$(dirname "$0")/ops_lib.sh"
ops_test_start
WORK=$(mktemp -d /tmp/mltcp-conc-XXXXXX)
CGS=()
ROUNDS=3

cleanup() {
	jobs -p | xargs -r kill 2>/dev/null
	wait 2>/dev/null
	[[ -e /sys/fs/bpf/mltcp ]] && "$CTL" unload >/dev/null 2>&1
	for cg in "${CGS[@]}"; do rmdir "$cg" 2>/dev/null; done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
[[ -e /sys/fs/bpf/mltcp ]] && { echo "concurrency_test: unloading a leftover load"; "$CTL" unload >/dev/null 2>&1; }

# fully_loaded: the config pin, both registrations and their pins exist
fully_loaded() {
	local d=/sys/fs/bpf/mltcp
	[[ -e $d/config && -e $d/stats && -e $d/state && -e $d/hints ]] &&
		cc_avail mltcp && cc_avail mltcp_cubic &&
		{ [[ -e $d/link_mltcp || -e $d/ops_mltcp ]]; } &&
		{ [[ -e $d/link_mltcp_cubic || -e $d/ops_mltcp_cubic ]]; } &&
		"$CTL" status | grep -q "MLTCP: loaded"
}

# start N copies of a command together (released by one file appearing)
together() { # N OUTPREFIX command...
	local n=$1 out=$2 i; shift 2
	rm -f "$WORK/go"
	for ((i = 0; i < n; i++)); do
		( while [[ ! -e $WORK/go ]]; do :; done; "$@" >"$out.$i" 2>&1; echo $? >"$out.$i.rc" ) &
	done
	touch "$WORK/go"
	wait
}
count_rc() { local want=$1 n=0 f; shift; for f in "$@"; do [[ $(cat "$f") == "$want" ]] && n=$((n + 1)); done; echo $n; }

echo "== $ROUNDS rounds of 4 simultaneous 'load --variant all'"
for ((r = 1; r <= ROUNDS; r++)); do
	together 4 "$WORK/load" "$CTL" load --variant all
	won=$(count_rc 0 "$WORK"/load.?.rc)
	lost=$(grep -l "already loaded" "$WORK"/load.? 2>/dev/null | wc -l)
	if [[ $won == 1 && $lost == 3 ]] && fully_loaded; then
		ok "round $r: 1 load won, 3 said 'already loaded', MLTCP fully loaded"
	else
		bad "round $r: $won won, $lost 'already loaded'; final state:"
		cat "$WORK"/load.? | sed 's/^/       | /'; "$CTL" status 2>&1 | sed 's/^/       | /'
	fi
	"$CTL" unload >/dev/null 2>&1
done

echo "== simultaneous attaches, sets and a failing load on a loaded host"
"$CTL" load --variant all >/dev/null || die "load failed"
for i in 0 1 2 3; do CGS+=("$CG2/mltcp-conc-$$-$i"); mkdir -p "${CGS[$i]}"; done
rm -f "$WORK/go"
for i in 0 1 2 3; do
	v=reno; ((i % 2)) && v=cubic
	( while [[ ! -e $WORK/go ]]; do :; done; "$CTL" attach --cgroup "${CGS[$i]}" --variant $v >"$WORK/att.$i" 2>&1; echo $? >"$WORK/att.$i.rc" ) &
done
( while [[ ! -e $WORK/go ]]; do :; done; "$CTL" set slope=1536 >"$WORK/set.0" 2>&1; echo $? >"$WORK/set.0.rc" ) &
( while [[ ! -e $WORK/go ]]; do :; done; "$CTL" set intercept=320 >"$WORK/set.1" 2>&1; echo $? >"$WORK/set.1.rc" ) &
( while [[ ! -e $WORK/go ]]; do :; done; "$CTL" load >"$WORK/load.x" 2>&1; echo $? >"$WORK/load.x.rc" ) &
touch "$WORK/go"; wait
st=$("$CTL" status)
atts=$(grep -c "mltcp-conc-$$-" <<<"$st")
if [[ $(count_rc 0 "$WORK"/att.?.rc) == 4 && $atts == 4 ]]; then
	ok "4 concurrent attaches: all 4 in 'mltcpctl status'"
else
	bad "concurrent attaches: $atts of 4 attached"; cat "$WORK"/att.? | sed 's/^/       | /'
fi
if grep -Eq "slope +1536" <<<"$st" && grep -Eq "intercept +320" <<<"$st"; then
	ok "2 concurrent sets of different keys: both kept (slope 1536, intercept 320)"
else
	bad "concurrent sets lost one:"; grep -E "slope|intercept" <<<"$st" | sed 's/^/       | /'
fi
if [[ $(cat "$WORK/load.x.rc") == 1 ]] && grep -q "already loaded" "$WORK/load.x" && fully_loaded; then
	ok "a load failing meanwhile left everything in place"
else
	bad "the failing load: rc $(cat "$WORK/load.x.rc"): $(cat "$WORK/load.x")"
fi

echo "== detaches and an unload at once; then load and unload at once"
rm -f "$WORK/go"
for i in 0 1; do ( while [[ ! -e $WORK/go ]]; do :; done; "$CTL" detach --cgroup "${CGS[$i]}" >/dev/null 2>&1 ) & done
( while [[ ! -e $WORK/go ]]; do :; done; "$CTL" unload >"$WORK/unl" 2>&1; echo $? >"$WORK/unl.rc" ) &
touch "$WORK/go"; wait
if [[ $(cat "$WORK/unl.rc") == 0 ]] && nothing_loaded; then
	ok "unload racing detaches: nothing of MLTCP remains"
else
	bad "unload racing detaches: rc $(cat "$WORK/unl.rc"), leftovers: $(ls -R /sys/fs/bpf/mltcp 2>&1 | tr '\n' ' ')"
fi
for ((r = 1; r <= ROUNDS; r++)); do
	"$CTL" load >/dev/null 2>&1
	rm -f "$WORK/go"
	( while [[ ! -e $WORK/go ]]; do :; done; "$CTL" unload >/dev/null 2>&1 ) &
	( while [[ ! -e $WORK/go ]]; do :; done; "$CTL" load >/dev/null 2>&1 ) &
	touch "$WORK/go"; wait
	if fully_loaded || nothing_loaded; then
		ok "round $r: load racing unload ends fully loaded or fully unloaded"
	else
		bad "round $r: half a load remains: $(ls /sys/fs/bpf/mltcp 2>&1 | tr '\n' ' ')"
	fi
	"$CTL" unload >/dev/null 2>&1
done

echo "== a command waits while another holds the state lock"
"$CTL" load >/dev/null || die "load failed"
flock /run/lock/mltcp.lock sleep 1.5 &
sleep 0.2
t0=$(date +%s%N)
"$CTL" set slope=1024 >/dev/null 2>&1
t1=$(date +%s%N)
waited=$(((t1 - t0) / 1000000))
if ((waited >= 1000)); then ok "set waited ${waited} ms for the lock holder"; else bad "set did not wait (${waited} ms)"; fi
wait
"$CTL" unload >/dev/null 2>&1

finish
