#!/usr/bin/env bash
# run.sh - boot Debian's own kernel (the image matching the installed
# linux-headers-amd64) under qemu-system-x86_64 -accel tcg with a busybox
# initramfs, run guest test scripts, and turn the serial console's result
# section into an exit code.  Reusable: the kernel-module tests, the BPF
# objects on 6.1 and soft-RoCE all run through it with their own scripts,
# files and modules.
#
#   tests/vm/run.sh [options] GUEST_SCRIPT...
#
# Options:
#   --name NAME          run name: initramfs and log go to build/vm/NAME.*
#                        (default: vm)
#   --add SRC[:DEST]     copy a file or directory into the initramfs (default
#                        DEST: /mltcp/<basename>); dynamic ELF binaries get
#                        their libraries (ldd) too; repeatable
#   --ko FILE.ko         add an out-of-tree module (lib/modules/<abi>/extra);
#                        repeatable; depmod runs on the initramfs
#   --modules "A B ..."  modules of the Debian kernel to include, with their
#                        dependencies (default: veth bridge sch_netem sch_tbf
#                        sch_htb sch_ingress inet_diag tcp_diag)
#   --extra-modules "A B ..."  more Debian modules on top of --modules
#                        (e.g. "rdma_rxe crc32_generic sch_red" for soft-RoCE)
#   --timeout SEC        hard limit for the whole VM run (default 170)
#   --mem MB             guest memory (default 1024)
#   --cpus N             guest vCPUs (default 2)
#   --append "ARGS"      extra kernel command line
#   --expect NAME        a result line "name=NAME status=pass" must appear;
#                        repeatable
#   -h, --help           this text
#
# Guest side: /init mounts proc/sys/dev/debugfs, brings up lo, then runs each
# GUEST_SCRIPT (copied to /mltcp/) with busybox sh, in order, with
# /mltcp/lib.sh available.  Scripts print result lines
#     MLTCP-VM-RESULT name=<test> status=pass|fail|skip [key=value ...]
# and the init ends the section with "MLTCP-VM-DONE".  Debian's busybox sh
# runs its own applets before PATH: lib.sh defines ip/tc/ss functions that
# call the real iproute2 in /usr/sbin; use absolute paths for other tools.  The run fails when a
# result is "fail", when MLTCP-VM-DONE is missing (guest hung or died: the
# hard timeout kills qemu), when the console shows a panic, oops, BUG or
# WARNING, or when an --expect'ed test did not pass.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$root/build}

die() { echo "vm: $*" >&2; exit 2; }

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }

name=vm
adds=()
kos=()
modules="veth bridge sch_netem sch_tbf sch_htb sch_ingress inet_diag tcp_diag"
timeout=170
mem=1024
cpus=2
append=""
expects=()
scripts=()
while [[ $# -gt 0 ]]; do
	case $1 in
	--name) name=$2; shift 2 ;;
	--add) adds+=("$2"); shift 2 ;;
	--ko) kos+=("$2"); shift 2 ;;
	--modules) modules=$2; shift 2 ;;
	--extra-modules) modules="$modules $2"; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--append) append=$2; shift 2 ;;
	--expect) expects+=("$2"); shift 2 ;;
	-h|--help) usage; exit 0 ;;
	-*) die "unknown option $1 (see --help)" ;;
	*) scripts+=("$1"); shift ;;
	esac
done
[[ ${#scripts[@]} -gt 0 ]] || die "no guest script given (see --help)"
for s in "${scripts[@]}"; do
	[[ -f $s ]] || die "guest script $s: no such file"
done
[[ $name =~ ^[A-Za-z0-9_.-]+$ ]] || die "--name must be [A-Za-z0-9_.-]+"
for t in qemu-system-x86_64 busybox cpio depmod modprobe; do
	command -v "$t" >/dev/null || die "$t not found (run: make deps)"
done
busybox_bin=$(command -v busybox)
file -b "$busybox_bin" 2>/dev/null | grep -q 'statically linked' ||
	ldd "$busybox_bin" 2>&1 | grep -q 'not a dynamic' ||
	die "$busybox_bin is not static (install busybox-static)"

ktree=$("$here/fetch-kernel.sh" "$BUILD/vm/cache")
abi=$(basename "$ktree")

stage=$BUILD/vm/$name.root
rm -rf "$stage"
mkdir -p "$stage"/{bin,sbin,etc,proc,sys,dev,tmp,run,mltcp,lib/modules/"$abi"/extra,usr/bin,usr/sbin,var/run}

# Copy an ELF binary and the libraries ldd names, keeping their paths.
copy_with_libs() {
	local src=$1 dest=$2 lib
	install -D -m 0755 "$src" "$stage$dest"
	while read -r lib; do
		[[ -n $lib && -e $lib ]] || continue
		[[ -e $stage$lib ]] || install -D -m 0755 "$(readlink -f "$lib")" "$stage$lib"
	done < <(ldd "$src" 2>/dev/null | grep -o '/[^ )]*' || true)
}

cp "$busybox_bin" "$stage/bin/busybox"
for tool in ip tc ss; do
	p=$(command -v "$tool") || die "$tool (iproute2) not found"
	copy_with_libs "$p" "/usr/sbin/$tool"
done
# Real iproute2 in /usr/sbin, ahead of busybox's applets in PATH.
# tc looks up its netem distribution tables here.
[[ -d /usr/lib/x86_64-linux-gnu/tc ]] && mkdir -p "$stage/usr/lib/x86_64-linux-gnu" &&
	cp -r /usr/lib/x86_64-linux-gnu/tc "$stage/usr/lib/x86_64-linux-gnu/"

# Debian kernel modules and their dependencies.
moddir=$ktree/lib/modules/$abi
for m in $modules; do
	deps=$(modprobe -d "$ktree" -S "$abi" --show-depends "$m" 2>&1) ||
		die "module $m not in Debian's $abi: $deps"
	while read -r kind path _; do
		[[ $kind == insmod ]] || continue
		rel=${path#"$ktree"}
		install -D -m 0644 "$path" "$stage$rel"
	done <<<"$deps"
done
cp "$moddir"/modules.{order,builtin,builtin.modinfo} "$stage/lib/modules/$abi/"
for ko in "${kos[@]}"; do
	[[ -f $ko ]] || die "--ko $ko: no such file"
	install -m 0644 "$ko" "$stage/lib/modules/$abi/extra/"
done
depmod -b "$stage" "$abi"

for a in "${adds[@]}"; do
	src=${a%%:*}
	if [[ $a == *:* ]]; then dest=${a#*:}; else dest=/mltcp/$(basename "$src"); fi
	[[ -e $src ]] || die "--add $src: no such file or directory"
	if [[ -d $src ]]; then
		mkdir -p "$stage$dest" && cp -r "$src/." "$stage$dest/"
	elif file -b "$src" | grep -q 'dynamically linked'; then
		copy_with_libs "$src" "$dest"
	else
		install -D "$src" "$stage$dest"
	fi
done

install -m 0755 "$here/guest/lib.sh" "$stage/mltcp/lib.sh"
: >"$stage/mltcp/scripts.list"
for s in "${scripts[@]}"; do
	[[ -f $s ]] || die "guest script $s: no such file"
	install -m 0755 "$s" "$stage/mltcp/$(basename "$s")"
	echo "$(basename "$s")" >>"$stage/mltcp/scripts.list"
done
install -m 0755 "$here/init" "$stage/init"

initrd=$BUILD/vm/$name.cpio
(cd "$stage" && find . -print0 | cpio --null -o -H newc --quiet) >"$initrd"

log=$BUILD/vm/$name.log
echo "vm: booting Debian $abi under TCG ($(du -h "$initrd" | cut -f1) initramfs, timeout ${timeout}s, log $log)"
start=$(date +%s)
set +e
timeout --foreground -k 5 "$timeout" \
	qemu-system-x86_64 -accel tcg -nographic -no-reboot \
	-m "$mem" -smp "$cpus" -cpu max \
	-kernel "$ktree/boot/vmlinuz-$abi" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 oops=panic loglevel=5 quiet $append" \
	</dev/null 2>&1 | stdbuf -oL tr -d '\r' | tee "$log" | grep --line-buffered -E \
	'^(MLTCP-VM-|# |RESULT )|Kernel panic|Oops|BUG:|WARNING:|Call Trace|MLTCP-VM-DONE'
rc=${PIPESTATUS[0]}
set -e
elapsed=$(($(date +%s) - start))

fail=0
npass=$(grep -c '^MLTCP-VM-RESULT .*status=pass' "$log" || true)
nfail=$(grep -c '^MLTCP-VM-RESULT .*status=fail' "$log" || true)
nskip=$(grep -c '^MLTCP-VM-RESULT .*status=skip' "$log" || true)
if [[ $rc -eq 124 || $rc -eq 137 ]]; then
	echo "vm: FAIL: guest did not finish within ${timeout}s (hang?); qemu killed" >&2
	fail=1
fi
if grep -qE 'Kernel panic|Oops|BUG:|WARNING:|general protection fault|Call Trace' "$log"; then
	echo "vm: FAIL: kernel panic/oops/BUG/WARNING on the guest console:" >&2
	grep -E -m 5 'Kernel panic|Oops|BUG:|WARNING:|general protection fault' "$log" >&2
	fail=1
fi
if ! grep -q '^MLTCP-VM-DONE' "$log"; then
	echo "vm: FAIL: no MLTCP-VM-DONE on the console (guest died or hung); last lines:" >&2
	tail -n 15 "$log" >&2
	fail=1
fi
((nfail == 0)) || fail=1
for e in "${expects[@]}"; do
	if ! grep -q "^MLTCP-VM-RESULT name=$e status=pass" "$log"; then
		echo "vm: FAIL: expected test '$e' did not pass" >&2
		fail=1
	fi
done
echo "vm: $npass passed, $nfail failed, $nskip skipped in ${elapsed}s (log: $log)"
exit $fail
