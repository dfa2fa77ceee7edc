#!/bin/sh
# guest-dkms.sh - the module DKMS built from the tcp-mltcp-dkms package
# (tests/deb/deb_test.sh), loaded in the VM guest on the kernel it was
# built for (tests/vm/run.sh --ko): modprobe, both congestion controls
# available and selectable as the default, rmmod.
#   MLTCP-VM-RESULT name=dkms-module-load status=pass|fail
. /mltcp/lib.sh

AVAIL=/proc/sys/net/ipv4/tcp_available_congestion_control
DEFAULT=/proc/sys/net/ipv4/tcp_congestion_control

t_dkms_load() {
	modprobe tcp_mltcp || return 1
	for cc in mltcp mltcp_cubic; do
		grep -qw "$cc" $AVAIL || { echo "$cc missing: $(cat $AVAIL)"; return 1; }
	done
	old=$(cat $DEFAULT)
	echo mltcp_cubic >$DEFAULT && [ "$(cat $DEFAULT)" = mltcp_cubic ] || return 1
	echo "$old" >$DEFAULT
	echo "srcversion $(cat /sys/module/tcp_mltcp/srcversion 2>/dev/null)"
	rmmod tcp_mltcp
}
check dkms-module-load t_dkms_load
