#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# deb_test.sh - the Debian packages end to end (make check-ops-deb).
#
# Builds the packages from a clean copy of the tree (tools/build-debs.sh:
# dpkg-buildpackage -b, lintian without errors), installs them on this host
# with dpkg -i, and checks the installed files: mltcp.service's Exec lines
# with the installed units and mltcpctl (tests/bpf/service_test.sh), the
# packaged /etc/mltcp/mltcp.conf, the Python module and pkg-config/header
# of libmltcp, tcp-mltcp-dkms registered with DKMS and built by
# 'dkms autoinstall' (what a kernel upgrade runs) for Debian's 6.1 headers.
# Then loads MLTCP from the installed files, purges every package and
# asserts that nothing remains: files, DKMS registrations and modules,
# systemd enablement links, registrations, pins.  Root; holds
# /run/lock/mltcp-host.lock; purges in its EXIT trap.  ~100 s.
#
#   tests/deb/deb_test.sh
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
OUT=$BUILD/deb-test
PKGS=(mltcp-tools libmltcp0 libmltcp-dev python3-mltcp tcp-mltcp-dkms)
WORK=$(mktemp -d /tmp/mltcp-deb-XXXXXX)
FAILS=0 PASSES=0
CTL=/usr/sbin/mltcpctl

die() { echo "deb_test: $*" >&2; exit 1; }
((EUID == 0)) || die "needs root (dpkg -i)"
exec 9>/run/lock/mltcp-host.lock
flock 9
export MLTCP_HOST_LOCK_FD=9

ok() { PASSES=$((PASSES + 1)); echo "  ok   $*"; }
bad() { FAILS=$((FAILS + 1)); echo "  FAIL $*"; }
cc_avail() { grep -qw "$1" /proc/sys/net/ipv4/tcp_available_congestion_control; }
installed() { dpkg-query -W -f='${db:Status-Status}\n' "$1" 2>/dev/null | grep -qx installed; }
purge_all() {
	local p present=()
	for p in "${PKGS[@]}"; do
		dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^[a-z][a-z]' && present+=("$p")
	done
	((${#present[@]} == 0)) || dpkg --purge "${present[@]}"
}
cleanup() {
	purge_all >/dev/null 2>&1
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# Leftovers of a crashed run of this test (we hold the lock).
purge_all >/dev/null 2>&1
[[ -e /sys/fs/bpf/mltcp ]] && die "MLTCP is loaded on this host; unload it first (mltcpctl unload)"
ABI=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null |
	sed -n 's/.*linux-headers-\([0-9][^ ]*-amd64\) .*/\1/p')

echo "== build (dpkg-buildpackage -b from a clean copy) and lintian"
t0=$(date +%s)
if DEB_BUILD_OPTIONS=noddebs "$ROOT/tools/build-debs.sh" "$OUT" >"$WORK/build.out" 2>&1; then
	ok "packages built in $(($(date +%s) - t0)) s, lintian without errors"
	sed -n 's/^build-debs: \(.*bytes\)$/       : \1/p; s/^build-debs: \(lintian: .*\)$/       : \1/p' "$WORK/build.out"
	grep '^[EW]: ' "$OUT/lintian.txt" | sed 's/^/       : /'
else
	bad "build-debs.sh:"; sed 's/^/       | /' "$WORK/build.out" | tail -n 30
	exit 1
fi
debs=()
for p in "${PKGS[@]}"; do debs+=("$(ls "$OUT/${p}_"*.deb)"); done

echo "== dpkg -i"
if dpkg -i "${debs[@]}" >"$WORK/dpkg.out" 2>&1; then
	ok "dpkg -i ${PKGS[*]}"
else
	bad "dpkg -i:"; sed 's/^/       | /' "$WORK/dpkg.out"; exit 1
fi
for p in "${PKGS[@]}"; do dpkg -L "$p"; done | sort -u >"$WORK/files"
for p in "${PKGS[@]}"; do installed "$p" || bad "$p not installed"; done

echo "== the installed files"
if $CTL service check --config /etc/mltcp/mltcp.conf >"$WORK/check" 2>&1; then
	ok "the packaged /etc/mltcp/mltcp.conf is valid: $(sed -n 2p "$WORK/check" | sed 's/^ *//')"
else
	bad "mltcpctl service check /etc/mltcp/mltcp.conf:"; sed 's/^/       | /' "$WORK/check"
fi
if MLTCPCTL=$CTL UNIT_DIR=/lib/systemd/system "$ROOT/tests/bpf/service_test.sh" >"$WORK/svc" 2>&1; then
	ok "service_test.sh with the installed units and mltcpctl: $(tail -n 1 "$WORK/svc")"
else
	bad "service_test.sh on the installed package:"; grep -E "FAIL|\|" "$WORK/svc" | sed 's/^/       /'
fi
if /usr/bin/python3 - >"$WORK/py" 2>&1 <<'EOP'
import socket, mltcp
s = socket.socket()
try:
    mltcp.hint(s, 1000)
except mltcp.MltcpError as e:
    print("import mltcp from %s; hint on a non-MLTCP socket: %s" % (mltcp.__file__, e))
else:
    raise SystemExit("hint on a plain socket was accepted")
EOP
then ok "python3-mltcp: $(cat "$WORK/py")"; else bad "python3-mltcp:"; sed 's/^/       | /' "$WORK/py"; fi
cat >"$WORK/hint.c" <<'EOC'
#include <stdio.h>
#include <sys/socket.h>
#include <mltcp/libmltcp.h>
int main(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	return mltcp_socket_uses_mltcp(fd) == 0 ? 0 : 1;
}
EOC
if gcc "$WORK/hint.c" -o "$WORK/hint" $(pkg-config --cflags --libs libmltcp) >"$WORK/cc" 2>&1 && "$WORK/hint"; then
	ok "libmltcp-dev: a program built with 'pkg-config --cflags --libs libmltcp' runs against libmltcp0"
else
	bad "libmltcp-dev:"; sed 's/^/       | /' "$WORK/cc"
fi
if dkms status -m tcp_mltcp | grep -q "tcp_mltcp/"; then
	ok "tcp-mltcp-dkms registered: $(dkms status -m tcp_mltcp | head -n 1)"
else
	bad "DKMS does not know tcp_mltcp"
fi
if [[ -n $ABI && -d /lib/modules/$ABI/build ]]; then
	if dkms autoinstall -k "$ABI" >"$WORK/dkms" 2>&1 &&
		ko=$(find "/lib/modules/$ABI/updates/dkms" -name 'tcp_mltcp.ko*' | head -n 1) && [[ -n $ko ]] &&
		modinfo -F vermagic "$ko" | grep -q "^$ABI "; then
		ok "dkms autoinstall -k $ABI built and installed $ko ($(modinfo -F vermagic "$ko" | cut -d' ' -f1))"
		# That module, on the kernel it was built for: the VM rig.
		case $ko in
		*.xz) xz -dc "$ko" >"$WORK/tcp_mltcp.ko" ;;
		*.zst) zstd -qdc "$ko" >"$WORK/tcp_mltcp.ko" ;;
		*) cp "$ko" "$WORK/tcp_mltcp.ko" ;;
		esac
		if BUILD=$BUILD "$ROOT/tests/vm/run.sh" --name dkms --timeout 150 --ko "$WORK/tcp_mltcp.ko" \
			--expect dkms-module-load "$ROOT/tests/deb/guest-dkms.sh" >"$WORK/vm" 2>&1; then
			ok "the DKMS-built module loads in the VM rig on $ABI: $(grep -o 'name=dkms-module-load.*' "$WORK/vm" | head -n 1)"
		else
			bad "the DKMS-built module in the VM rig:"; tail -n 15 "$WORK/vm" | sed 's/^/       | /'
		fi
	else
		bad "dkms autoinstall -k $ABI:"; tail -n 15 "$WORK/dkms" | sed 's/^/       | /'
	fi
else
	bad "no Debian kernel headers (linux-headers-amd64) to build the DKMS module against"
fi

echo "== load from the installed files, then dpkg --purge"
if $CTL load >"$WORK/load" 2>&1 && cc_avail mltcp && cc_avail mltcp_cubic; then
	ok "installed mltcpctl: $(cat "$WORK/load")"
else
	bad "installed mltcpctl load:"; sed 's/^/       | /' "$WORK/load"
fi
if dpkg --purge "${PKGS[@]}" >"$WORK/purge" 2>&1; then ok "dpkg --purge ${PKGS[*]}"; else bad "dpkg --purge:"; sed 's/^/       | /' "$WORK/purge"; fi
left=()
while read -r f; do
	[[ -e $f && ! -d $f ]] && left+=("$f")
	[[ -d $f && $f == */mltcp* ]] && left+=("$f/")
done <"$WORK/files"
for f in /etc/mltcp /usr/src/tcp_mltcp-* /var/lib/dkms/tcp_mltcp /run/lock/mltcp.lock \
	/etc/systemd/system/multi-user.target.wants/mltcp.service \
	/etc/systemd/system/multi-user.target.wants/mltcp-exporter.service \
	/var/lib/systemd/deb-systemd-helper-enabled/mltcp.service.dsh-also \
	/var/lib/systemd/deb-systemd-helper-enabled/mltcp-exporter.service.dsh-also; do
	[[ -e $f ]] && left+=("$f")
done
[[ -n $ABI ]] && left+=($(find "/lib/modules/$ABI" -name 'tcp_mltcp.ko*' 2>/dev/null))
if ((${#left[@]} == 0)); then ok "no file of the packages, DKMS tree, module or unit link remains"; else bad "left behind: ${left[*]}"; fi
if [[ ! -e /sys/fs/bpf/mltcp ]] && ! cc_avail mltcp && ! cc_avail mltcp_cubic; then
	ok "purge unloaded MLTCP: no registration, no pins"
else
	bad "MLTCP still loaded after purge"; ls /sys/fs/bpf/mltcp 2>&1 | sed 's/^/       | /'
fi
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^[a-z][a-z]' && bad "$p still known to dpkg"
done

echo "deb_test: $PASSES passed, $FAILS failed"
((FAILS == 0))
