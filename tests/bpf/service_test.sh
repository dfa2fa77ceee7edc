#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# service_test.sh - mltcp.service and /etc/mltcp/mltcp.conf
# (make check-ops-service; tests/deb/deb_test.sh runs it on the installed
# package).
#
# This host has no systemd as PID 1, so the unit's ExecStart/ExecReload/
# ExecStop lines are run as systemd would: Environment= expanded, a clean
# environment, an override of MLTCP_CONFIG as a drop-in would give.  Checks
# start (variants, parameters, cgroup attachments), MLTCP traffic in an
# attached cgroup, reload of parameters with a flow kept open, stop; bad
# configurations (unknown key, out-of-range value, a combination, a missing
# cgroup, a missing file) each fail naming the line with nothing loaded; a
# start racing an operator's load.  `systemd-analyze verify` on the units.
# Root; holds /run/lock/mltcp-host.lock; cleans up in its EXIT trap.  ~15 s.
#
#   MLTCPCTL=path [UNIT_DIR=dir] tests/bpf/service_test.sh
#   UNIT_DIR: installed units, run as they are (default: the build tree's,
#   with their mltcpctl path replaced by $MLTCPCTL)
set -uo pipefail

NAME=service_test
. "$(dirname "$0")/ops_lib.sh"
ops_test_start
WORK=$(mktemp -d /tmp/mltcp-service-XXXXXX)
CONF=$WORK/mltcp.conf
CG_REL=mltcp-svc-$$-a CG_B=$CG2/mltcp-svc-$$-b
CG_A=$CG2/$CG_REL
BG_PIDS=()

if [[ -n ${UNIT_DIR:-} ]]; then
	cp "$UNIT_DIR"/mltcp.service "$UNIT_DIR"/mltcp-exporter.service "$WORK/" || die "no units in $UNIT_DIR"
else
	for u in mltcp mltcp-exporter; do
		src=$BUILD/cmake/tools/mltcpctl/$u.service
		[[ -e $src ]] || die "$src not built (make cmake-build)"
		sed -E "s#=[^ =]*/mltcpctl #=$CTL #" "$src" >"$WORK/$u.service"
	done
fi
UNIT=$WORK/mltcp.service

cleanup() {
	local p cg
	for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[[ -e /sys/fs/bpf/mltcp ]] && "$CTL" unload >/dev/null 2>&1
	for cg in "$CG_A" "$CG_B"; do
		if [[ -d $cg ]]; then
			while read -r p; do echo "$p" >"$CG2/cgroup.procs"; done <"$cg/cgroup.procs"
			rmdir "$cg"
		fi
	done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
[[ -e /sys/fs/bpf/mltcp ]] && { echo "service_test: unloading a leftover load"; "$CTL" unload >/dev/null 2>&1; }
HOST_DEFAULT_CC=$(cat /proc/sys/net/ipv4/tcp_congestion_control)

# unit_exec KEY: run the unit's KEY= command line as systemd would
unit_exec() {
	local line name val
	line=$(sed -n "s/^$1=//p" "$UNIT")
	[[ -n $line ]] || { echo "no $1= in $UNIT"; return 99; }
	line=${line#-}
	local -A env=()
	while IFS= read -r kv; do
		kv=${kv#\"}; kv=${kv%\"}
		env[${kv%%=*}]=${kv#*=}
	done < <(sed -n 's/^Environment=//p' "$UNIT")
	env[MLTCP_CONFIG]=$CONF	# as a drop-in: [Service] Environment=MLTCP_CONFIG=...
	for name in "${!env[@]}"; do
		val=${env[$name]}
		line=${line//\$\{$name\}/$val}
		line=${line//\$$name/$val}
	done
	# shellcheck disable=SC2086  # systemd splits the line on whitespace
	env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin $line
}
# expect_start_fails "description" LINE_PATTERN: ExecStart exits 2 naming it, nothing loaded
expect_start_fails() {
	local what=$1 pat=$2
	unit_exec ExecStart >"$WORK/out" 2>&1
	local rc=$?
	if [[ $rc == 2 ]] && grep -q -- "$pat" "$WORK/out" && nothing_loaded; then
		ok "$what -> exit 2, nothing loaded: $(head -n 1 "$WORK/out" | sed "s#$WORK/##")"
	else
		bad "$what: exit $rc (want 2, message with '$pat', nothing loaded: $(nothing_loaded && echo yes || echo no))"
		sed 's/^/       | /' "$WORK/out"
	fi
	nothing_loaded || "$CTL" unload >/dev/null 2>&1
}

echo "== the units"
if systemd-analyze verify "$WORK/mltcp.service" "$WORK/mltcp-exporter.service" >"$WORK/verify" 2>&1 &&
	! [[ -s $WORK/verify ]]; then
	ok "systemd-analyze verify accepts mltcp.service and mltcp-exporter.service"
else
	bad "systemd-analyze verify:"; sed 's/^/       | /' "$WORK/verify"
fi

echo "== start, traffic, reload, stop"
mkdir -p "$CG_A" "$CG_B"
write_conf() { # SLOPE
	cat >"$CONF" <<EOC
# test configuration
variants = all
default = no
attach = $CG_REL reno
attach = $CG_B cubic
slope = $1
intercept = 128
idle_min_us = 20000
EOC
}
write_conf 2048
if unit_exec ExecStart >"$WORK/out" 2>&1; then ok "ExecStart: $(tail -n 1 "$WORK/out" | sed "s#$WORK/##")"; else bad "ExecStart failed:"; sed 's/^/       | /' "$WORK/out"; fi
st=$("$CTL" status 2>&1)
if cc_avail mltcp && cc_avail mltcp_cubic && grep -Eq "slope +2048" <<<"$st" &&
	grep -Eq "intercept +128" <<<"$st" && grep -q "cgroup attachments: 2" <<<"$st" &&
	grep -Eq "mltcp-svc-$$-a +mltcp$" <<<"$st" && grep -Eq "mltcp-svc-$$-b +mltcp_cubic$" <<<"$st"; then
	ok "registered mltcp and mltcp_cubic, slope 2048 intercept 128, both cgroups attached"
else
	bad "state after ExecStart:"; sed 's/^/       | /' <<<"$st"
fi
[[ $(cat /proc/sys/net/ipv4/tcp_congestion_control) == "$HOST_DEFAULT_CC" ]] &&
	ok "default = no: host default still $HOST_DEFAULT_CC" || bad "host default changed"

# A flow from the attached cgroup: MLTCP by attachment, kept open over the reload.
PORT=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
$PY "$TRAFFIC" server --bind 127.0.0.1 --port "$PORT" --out "$WORK/srv.json" --ready "$WORK/srv.ready" &
BG_PIDS+=($!)
for _ in $(seq 100); do [[ -e $WORK/srv.ready ]] && break; sleep 0.02; done
bash -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$CG_A" $PY "$TRAFFIC" client --host 127.0.0.1 \
	--port "$PORT" --iterations 4 --bytes 300000 --gap-ms 60 --hold 3 >"$WORK/cli.json" &
CLI=$!; BG_PIDS+=($CLI)
flow() { "$CTL" stats --json | $PY -c 'import json,sys; print(*("%s %d" % (x["local"], x["iterations"]) for x in json.load(sys.stdin)["flows"]))'; }
for _ in $(seq 100); do b=$(flow); [[ -n $b ]] && ((${b##* } >= 3)) && break; sleep 0.05; done
write_conf 1024
if unit_exec ExecReload >"$WORK/out" 2>&1 && "$CTL" status | grep -Eq "slope +1024"; then
	ok "ExecReload: slope 2048 -> 1024 on the running MLTCP"
else
	bad "ExecReload:"; sed 's/^/       | /' "$WORK/out"
fi
a=$(flow)
if [[ -n $b && ${a%% *} == "${b%% *}" && ${a##* } -ge ${b##* } ]]; then
	ok "the flow survived the reload: $b (local, iterations) before, $a after"
else
	bad "flow before reload '$b', after '$a'"
fi
wait $CLI
if [[ $($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["cc"])' "$WORK/cli.json" 2>/dev/null) == mltcp ]]; then
	ok "the attached cgroup's socket used mltcp"
else
	bad "the attached cgroup's socket: $(cat "$WORK/cli.json")"
fi

echo "== bad configurations while loaded: reload refuses, nothing changes"
printf 'variants = all\nslope = 9000\n' >"$CONF"
unit_exec ExecReload >"$WORK/out" 2>&1
rc=$?
if [[ $rc == 2 ]] && grep -q "mltcp.conf:2: slope must be in" "$WORK/out" && "$CTL" status | grep -Eq "slope +1024"; then
	ok "reload with slope = 9000 -> exit 2, slope still 1024: $(sed "s#$WORK/##" "$WORK/out")"
else
	bad "reload with a bad value: exit $rc"; sed 's/^/       | /' "$WORK/out"
fi
if unit_exec ExecStop >"$WORK/out" 2>&1 && nothing_loaded; then
	ok "ExecStop: nothing of MLTCP remains ($(tail -n 1 "$WORK/out"))"
else
	bad "ExecStop:"; sed 's/^/       | /' "$WORK/out"
fi
if unit_exec ExecStop >"$WORK/out" 2>&1; then ok "ExecStop again: exit 0 ($(cat "$WORK/out"))"; else bad "second ExecStop failed"; fi
[[ $(cat /proc/sys/net/ipv4/tcp_congestion_control) == "$HOST_DEFAULT_CC" ]] &&
	ok "host default is $HOST_DEFAULT_CC again" || bad "host default not restored"

echo "== bad configurations at start: the line is named, nothing is loaded"
printf '# c\nvariants = all\nslpoe = 3\n' >"$CONF"
expect_start_fails "unknown key" "mltcp.conf:3: unknown parameter 'slpoe'"
printf 'variants = all\nattach = %s reno\nslope = 99999\n' "$CG_REL" >"$CONF"
expect_start_fails "out-of-range value" "mltcp.conf:3: slope must be in \[0, 8192\]"
printf 'idle_min_us = 40000\nidle_max_us = 30000\n' >"$CONF"
expect_start_fails "values valid alone, invalid together" "mltcp.conf:1,2: idle_min_us"
printf 'slope = lots\n' >"$CONF"
expect_start_fails "not a number" "mltcp.conf:1: slope must be in .0, 8192. 1/1024, got 'lots'"
printf 'variants = all\n\nattach = mltcp-no-such-cgroup-%s\n' $$ >"$CONF"
expect_start_fails "nonexistent cgroup" "mltcp.conf:3: cgroup path .*mltcp-no-such-cgroup-$$ does not exist"
printf 'attach = %s vegas\n' "$CG_REL" >"$CONF"
expect_start_fails "unknown variant" "mltcp.conf:1: unknown variant 'vegas'"
printf 'default = maybe\n' >"$CONF"
expect_start_fails "bad default" "mltcp.conf:1: default must be yes or no"
rm -f "$CONF"
expect_start_fails "missing file" "cannot read the configuration .*mltcp.conf: No such file"

echo "== the service starting while an operator loads"
write_conf 1536
rm -f "$WORK/go"
( while [[ ! -e $WORK/go ]]; do :; done; unit_exec ExecStart >"$WORK/svc" 2>&1; echo $? >"$WORK/svc.rc" ) &
( while [[ ! -e $WORK/go ]]; do :; done; "$CTL" load --variant reno >"$WORK/op" 2>&1; echo $? >"$WORK/op.rc" ) &
touch "$WORK/go"; wait
svc=$(cat "$WORK/svc.rc") op=$(cat "$WORK/op.rc")
st=$("$CTL" status 2>&1)
if [[ $svc == 0 && $op == 1 ]] && grep -q "already loaded" "$WORK/op" && grep -q "cgroup attachments: 2" <<<"$st"; then
	ok "service won, the operator's load said 'already loaded', service state intact"
elif [[ $svc == 1 && $op == 0 ]] && grep -q "already loaded" "$WORK/svc" && cc_avail mltcp && ! cc_avail mltcp_cubic; then
	ok "operator won, the service said 'already loaded' and left the operator's load alone"
else
	bad "service rc $svc, operator rc $op:"; cat "$WORK/svc" "$WORK/op" | sed 's/^/       | /'
	sed 's/^/       | /' <<<"$st"
fi
unit_exec ExecStop >/dev/null 2>&1
nothing_loaded && ok "stopped" || bad "leftovers after stop"

finish
