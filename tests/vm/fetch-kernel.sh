#!/usr/bin/env bash
# fetch-kernel.sh - download Debian's kernel image package matching the
# installed linux-headers-amd64 (same ABI, same version) with apt-get download
# and unpack it with dpkg-deb -x into a cache.  Never installs it on the host.
#
#   tests/vm/fetch-kernel.sh CACHE_DIR
#
# Prints the unpacked tree's path (CACHE_DIR/<abi>) on stdout; the tree holds
# boot/vmlinuz-<abi>, lib/modules/<abi>/ with modules.dep, and a .complete
# stamp.  A second call with the same headers installed downloads nothing.
set -euo pipefail

die() { echo "fetch-kernel: $*" >&2; exit 1; }

[[ $# -eq 1 ]] || die "usage: $0 CACHE_DIR"
cache=$1
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

# linux-headers-amd64 depends on "linux-headers-<abi> (= <version>)".
dep=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null) ||
	die "linux-headers-amd64 is not installed (run: make deps)"
abi=$(sed -n 's/.*linux-headers-\([0-9][^ ]*-amd64\) (= \([^)]*\)).*/\1/p' <<<"$dep")
ver=$(sed -n 's/.*linux-headers-\([0-9][^ ]*-amd64\) (= \([^)]*\)).*/\2/p' <<<"$dep")
[[ -n "$abi" && -n "$ver" ]] || die "cannot parse linux-headers-amd64 dependency: '$dep'"
[[ -d /usr/src/linux-headers-$abi ]] || die "/usr/src/linux-headers-$abi missing (run: make deps)"

tree=$cache/$abi
if [[ -f $tree/.complete && "$(cat "$tree/.complete")" == "$ver" ]]; then
	echo "$tree"
	exit 0
fi

pkg=linux-image-$abi
deb=$cache/${pkg}_${ver}_amd64.deb
if [[ ! -s $deb ]]; then
	echo "fetch-kernel: apt-get download $pkg=$ver" >&2
	start=$(date +%s)
	# apt-get download writes into the current directory; _apt cannot write
	# into root-owned build trees, so apt falls back to root (a warning).
	(cd "$cache" && apt-get download -q "$pkg=$ver" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2) ||
		(apt-get update -q >/dev/null && cd "$cache" && apt-get download -q "$pkg=$ver" >&2) ||
		die "apt-get download $pkg=$ver failed (is bookworm-security in the apt sources?)"
	echo "fetch-kernel: downloaded $(du -h "$deb" | cut -f1) in $(($(date +%s) - start)) s" >&2
fi
rm -rf "$tree.tmp"
mkdir -p "$tree.tmp"
dpkg-deb -x "$deb" "$tree.tmp"
[[ -f $tree.tmp/boot/vmlinuz-$abi ]] || die "$deb has no boot/vmlinuz-$abi"
# modules.dep for resolving the dependencies of the modules a test needs.
depmod -b "$tree.tmp" "$abi"
echo "$ver" >"$tree.tmp/.complete"
rm -rf "$tree"
mv "$tree.tmp" "$tree"
echo "$tree"
