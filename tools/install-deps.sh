#!/usr/bin/env bash
# Install what the project needs to build and test: the Build-Depends of
# debian/control (the one list; test-only entries are marked <!nocheck>).
# Idempotent and silent when everything is present (dpkg-checkbuilddeps);
# needs root only when something must be installed, then runs
# 'apt-get build-dep' on the source tree.
#
#   tools/install-deps.sh [--profile nocheck]   (nocheck: build deps only)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
profiles=()
if [[ ${1:-} == --profile ]]; then
	[[ -n ${2:-} ]] || { echo "install-deps: --profile needs a build profile (e.g. nocheck)" >&2; exit 2; }
	profiles=(-P "$2")
elif [[ -n ${1:-} ]]; then
	echo "install-deps: unknown argument '$1' (usage: install-deps.sh [--profile nocheck])" >&2
	exit 2
fi

if command -v dpkg-checkbuilddeps >/dev/null &&
	(cd "$ROOT" && dpkg-checkbuilddeps "${profiles[@]}" debian/control) 2>/tmp/mltcp-deps.$$; then
	rm -f /tmp/mltcp-deps.$$
	exit 0
fi
missing=$(sed -n 's/.*Unmet build dependencies: //p' /tmp/mltcp-deps.$$ 2>/dev/null || true)
rm -f /tmp/mltcp-deps.$$
[[ -n $missing ]] || missing="(dpkg-dev is not installed: cannot tell)"

if ((EUID != 0)); then
	echo "install-deps: missing Debian packages: $missing" >&2
	echo "install-deps: run as root (or: sudo apt-get build-dep $ROOT) and retry" >&2
	exit 1
fi
echo "install-deps: installing $missing"
export DEBIAN_FRONTEND=noninteractive
# A fresh machine has no package lists yet; an old list may miss versions.
if ! apt-get build-dep -y -q --no-install-recommends "${profiles[@]}" "$ROOT" >/tmp/mltcp-apt.log 2>&1; then
	apt-get update -q >>/tmp/mltcp-apt.log 2>&1
	if ! apt-get build-dep -y -q --no-install-recommends "${profiles[@]}" "$ROOT" >>/tmp/mltcp-apt.log 2>&1; then
		tail -n 20 /tmp/mltcp-apt.log >&2
		echo "install-deps: apt-get build-dep failed (full log: /tmp/mltcp-apt.log)" >&2
		exit 1
	fi
fi
