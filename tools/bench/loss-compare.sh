#!/usr/bin/env bash
# loss-compare.sh - one job alone on the testbed, per congestion control:
# iteration times and the sender namespace's TCP loss counters (nstat).
# Shows whether a datapath loses more than its base algorithm where MLTCP
# should be neutral (docs/evaluation.md, "Loss behaviour").
#
#   tools/bench/loss-compare.sh <mltcp-emu> <mltcpctl> [profile] [ccs] [k=v ...]
#   e.g. loss-compare.sh build/cmake/tools/emu/mltcp-emu \
#            build/cmake/tools/mltcpctl/mltcpctl dorylus "reno mltcp" enabled=0
#
# Holds the host lock while MLTCP is loaded; unloads (if it loaded) and tears
# the testbed down on exit, also when interrupted.
set -euo pipefail
EMU=${1:?usage: $0 <mltcp-emu> <mltcpctl> [profile] [ccs] [k=v ...]}
CTL=${2:?usage: $0 <mltcp-emu> <mltcpctl> [profile] [ccs] [k=v ...]}
PROFILE=${3:-dorylus}
CCS=${4:-reno mltcp cubic mltcp_cubic}
shift $(($# < 4 ? $# : 4))
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TB=$ROOT/tools/testbed/mltcp-testbed
ITERATIONS=${ITERATIONS:-40}
# DUMP_COUNTERS=/path/prefix writes every changed nstat counter per cc.
((EUID == 0)) || { echo "loss-compare: must run as root" >&2; exit 2; }

exec 9>/run/lock/mltcp-host.lock
flock 9
loaded=0
RX=
cleanup() {
	[[ -n "$RX" ]] && kill "$RX" 2>/dev/null || true
	"$TB" down >/dev/null 2>&1 || true
	((loaded)) && "$CTL" unload >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if ! grep -qw mltcp /proc/sys/net/ipv4/tcp_available_congestion_control; then
	"$CTL" load --variant all >/dev/null
	loaded=1
fi
(($#)) && "$CTL" set "$@"
"$TB" up --senders 1 >/dev/null
netns() { nsenter --net=/run/netns/mltcp-tb-$1 -- "${@:2}"; }
printf '%-12s %9s %9s %9s %10s %10s %9s\n' cc mean_ms p50_ms p99_ms retrans lost_retx timeouts
for cc in $CCS; do
	nsenter --net=/run/netns/mltcp-tb-rx -- "$EMU" recv --port 5001 >/dev/null &
	RX=$!
	before=$(netns s1 nstat -as 2>/dev/null)
	json=$(netns s1 "$EMU" send --dst 10.199.0.2:5001 --profile-file "$ROOT/profiles/jobs.prof" \
		--profile "$PROFILE" --cc "$cc" --iterations "$ITERATIONS" --warmup 5)
	after=$(netns s1 nstat -as 2>/dev/null)
	kill "$RX"; wait "$RX" 2>/dev/null || true; RX=
	# Absolute counters of the namespace, before and after: the difference.
	get() {
		awk -v k="$1" 'FNR == 1 {file++} $1 == k {v[file] = $2} END {print v[2] - v[1]}' \
			<(echo "$before") <(echo "$after")
	}
	num() { grep -o "\"$1\":[0-9]*" <<<"$json" | cut -d: -f2; }
	if [[ -n "${DUMP_COUNTERS:-}" ]]; then   # every counter that moved
		awk 'FNR == 1 {file++} file == 1 {a[$1] = $2} file == 2 && $2 != a[$1] {print "  " $1, $2 - a[$1]}' \
			<(echo "$before") <(echo "$after") >"$DUMP_COUNTERS.$cc"
	fi
	printf '%-12s %9.1f %9.1f %9.1f %10s %10s %9s\n' "$cc" "$(num iter_mean_us)e-3" \
		"$(num iter_p50_us)e-3" "$(num iter_p99_us)e-3" "$(get TcpRetransSegs)" \
		"$(get TcpExtTCPLostRetransmit)" "$(get TcpExtTCPTimeouts)"
done
