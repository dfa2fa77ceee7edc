# SPDX-License-Identifier: BSD-3-Clause
# ops_lib.sh - what the operations tests (concurrency_test.sh,
# exporter_test.sh, service_test.sh) share; sourced after each sets NAME.
# Paths of the tree and mltcpctl, result counters, the host lock.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
export MLTCPCTL=${MLTCPCTL:-$BUILD/cmake/tools/mltcpctl/mltcpctl}
CTL=$MLTCPCTL
PY=/usr/bin/python3
TRAFFIC="$ROOT/tests/bpf/mltcp_traffic.py"
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
FAILS=0 PASSES=0

die() { echo "$NAME: $*" >&2; exit 1; }
ok() { PASSES=$((PASSES + 1)); echo "  ok   $*"; }
bad() { FAILS=$((FAILS + 1)); echo "  FAIL $*"; }
cc_avail() { grep -qw "$1" /proc/sys/net/ipv4/tcp_available_congestion_control; }
nothing_loaded() { [[ ! -e /sys/fs/bpf/mltcp ]] && ! cc_avail mltcp && ! cc_avail mltcp_cubic; }
finish() { echo "$NAME: $PASSES passed, $FAILS failed"; ((FAILS == 0)); }

# Root, a built mltcpctl, then the host lock for the whole run.  A caller
# that holds the lock already (tests/deb/deb_test.sh) hands its descriptor
# down in MLTCP_HOST_LOCK_FD: flock on the holder's own open file returns
# at once, where a second open of the lock file would wait for ever.
ops_test_start() {
	((EUID == 0)) || die "needs root"
	[[ -x $CTL ]] || die "mltcpctl not built at $CTL"
	[[ -n $CG2 ]] || die "no cgroup2 mount found"
	if [[ -n ${MLTCP_HOST_LOCK_FD:-} ]]; then
		flock "$MLTCP_HOST_LOCK_FD"
	else
		exec 9>/run/lock/mltcp-host.lock
		flock 9
	fi
}
