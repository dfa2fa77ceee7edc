#!/usr/bin/env bash
# dkms-check.sh - prove that the DKMS packaging works: lay out the source tree
# (make -C kmod dkms-tree), dkms add / build / install for Debian's kernel
# ABI (the installed linux-headers-amd64), check the result, then remove all
# of it again (also on failure or interrupt).  Installs into
# /lib/modules/<abi>/updates/dkms of a kernel this host does not run, and
# only for the duration of the test.
#
#   tests/vm/dkms-check.sh [KERNEL_ABI]
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
die() { echo "dkms-check: FAIL: $*" >&2; exit 1; }

command -v dkms >/dev/null || die "dkms not installed (run: make deps)"
abi=${1:-$(dpkg-query -W -f='${Depends}' linux-headers-amd64 |
	sed -n 's/.*linux-headers-\([0-9][^ ]*-amd64\) .*/\1/p')}
[[ -d /lib/modules/$abi/build ]] || die "no headers for $abi (/lib/modules/$abi/build)"
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$root/kmod/dkms.conf")
src=/usr/src/tcp_mltcp-$ver

# DKMS state is host-global: one run at a time on this host.
exec 9>/run/lock/mltcp-host.lock
if ! flock -n 9; then
	echo "dkms-check: waiting for /run/lock/mltcp-host.lock (another test holds it)" >&2
	flock 9
fi

if dkms status -m tcp_mltcp 2>/dev/null | grep -q . || [[ -e $src ]]; then
	die "tcp_mltcp is already registered with DKMS or $src exists; not touching an existing installation"
fi

cleanup() {
	dkms remove -m tcp_mltcp -v "$ver" --all >/dev/null 2>&1 || true
	rm -rf "$src"
}
trap cleanup EXIT INT TERM

start=$(date +%s)
make --no-print-directory -C "$root/kmod" dkms-tree CORE="$root/core" >/dev/null
dkms add -m tcp_mltcp -v "$ver" >/dev/null
if ! dkms build -m tcp_mltcp -v "$ver" -k "$abi" >/tmp/mltcp-dkms-build.log 2>&1; then
	find /var/lib/dkms/tcp_mltcp -name make.log -exec tail -n 20 {} + >&2
	tail -n 5 /tmp/mltcp-dkms-build.log >&2
	die "dkms build failed (log above)"
fi
log=$(find /var/lib/dkms/tcp_mltcp -name make.log | head -n 1)
[[ -n $log ]] || die "dkms build left no make.log"
if grep -i 'warning:' "$log"; then
	die "warnings in the DKMS build ($log)"
fi
grep -q 'tcp_mltcp.o' "$log" || die "$log does not show tcp_mltcp.o being compiled"
dkms install -m tcp_mltcp -v "$ver" -k "$abi" >/dev/null
ko=$(find "/lib/modules/$abi/updates/dkms" -name 'tcp_mltcp.ko*' | head -n 1)
[[ -n $ko ]] || die "dkms install left no tcp_mltcp.ko under /lib/modules/$abi/updates/dkms"
# Read whole outputs before matching: with pipefail, grep -q closing the pipe
# early can make modinfo die of SIGPIPE and fail a check that matched.
info=$(modinfo "$ko")
grep -q '^alias: *tcp_mltcp_cubic' <<<"$info" || die "module lacks alias tcp_mltcp_cubic"
grep -q "^vermagic: *$abi " <<<"$info" || die "vermagic is not $abi: $(modinfo -F vermagic "$ko")"
# One parameter per row of the core's table; the job rows say they do nothing.
grep -q '^parm: *cubic_norm_excess:CUBIC' <<<"$info" || die "module lacks parameter cubic_norm_excess"
grep -q '^parm: *job_gap:.*no effect in the module' <<<"$info" || die "job_gap's description does not say it has no effect"
status=$(dkms status -m tcp_mltcp)
grep -q installed <<<"$status" || die "dkms status does not say installed: $status"
cleanup
[[ ! -e $ko && ! -e $src ]] || die "dkms remove left files behind"
trap - EXIT INT TERM
echo "dkms-check: add/build/install/remove of tcp_mltcp $ver for $abi ok in $(($(date +%s) - start)) s"
