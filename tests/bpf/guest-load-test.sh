#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# guest-load-test.sh - the MLTCP BPF congestion controls on Debian 12's
# kernel 6.1, inside the VM guest of tests/vm/run.sh (busybox sh):
#
#   tests/vm/run.sh --name bpf --add build/cmake/tools/mltcpctl/mltcpctl \
#       --expect bpf-load --expect bpf-select --expect bpf-unload \
#       tests/bpf/guest-load-test.sh          (make check-bpf-vm)
# or from another guest script: sh guest-load-test.sh /path/to/mltcpctl
# (tests/vm/guest/kmod.sh does, after unloading tcp_mltcp).  Exits non-zero
# if any step failed.
#
# Loads both variants with mltcpctl (which must fall back to plain struct_ops
# registration: 6.1 has no struct_ops links), checks
# tcp_available_congestion_control, selects each variant on a socket with
# `mltcpctl`-independent means (sysctl of the default, then a TCP connection
# over lo with busybox nc when present) and unloads.  Result lines:
#   MLTCP-VM-RESULT name=bpf-load|bpf-select|bpf-unload status=pass|fail|skip
. /mltcp/lib.sh

CTL=${1:-/mltcp/mltcpctl}
AVAIL=/proc/sys/net/ipv4/tcp_available_congestion_control
DEFAULT=/proc/sys/net/ipv4/tcp_congestion_control

bpf_load() {
	[ -e /sys/kernel/btf/vmlinux ] || { echo "kernel lacks BTF"; return 1; }
	"$CTL" load --variant all || return 1
	for cc in mltcp mltcp_cubic; do
		grep -qw "$cc" $AVAIL || { echo "$cc missing: $(cat $AVAIL)"; return 1; }
	done
	"$CTL" status
	case "$(uname -r)" in
	5.*|6.[0-3].*) "$CTL" status | grep -q "plain registration" ;;
	*) "$CTL" status | grep -q "struct_ops links" ;;
	esac
}

bpf_select() {
	old=$(cat $DEFAULT)
	for cc in mltcp_cubic mltcp; do
		echo "$cc" > $DEFAULT || { echo "sysctl default=$cc refused"; return 1; }
		[ "$(cat $DEFAULT)" = "$cc" ] || return 1
	done
	echo "$old" > $DEFAULT
	"$CTL" stats
}

bpf_unload() {
	"$CTL" unload || return 1
	for cc in mltcp mltcp_cubic; do
		if grep -qw "$cc" $AVAIL; then echo "$cc still registered"; return 1; fi
	done
	[ ! -e /sys/fs/bpf/mltcp ] || { echo "/sys/fs/bpf/mltcp left behind"; return 1; }
}

echo "kernel $(uname -r); available before: $(cat $AVAIL)"
rc=0
step() {	# name function: like lib.sh's check, and remember failures
	n=$1
	shift
	if out=$("$@" 2>&1); then
		vm_result "$n" pass
	else
		vm_result "$n" fail
		echo "$out" | sed 's/^/#   /' | tail -n 40
		rc=1
	fi
}
step bpf-load bpf_load
step bpf-select bpf_select
step bpf-unload bpf_unload
[ -e /sys/fs/bpf/mltcp ] && "$CTL" unload >/dev/null 2>&1
exit $rc
