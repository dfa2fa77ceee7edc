#!/usr/bin/env bash
# Install the Debian packages named on the command line that are missing.
# Idempotent and silent when everything is present; needs root only when
# something must be installed.
set -euo pipefail

missing=()
for pkg in "$@"; do
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
	[[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
((${#missing[@]} == 0)) && exit 0

if ((EUID != 0)); then
	echo "install-deps: missing Debian packages: ${missing[*]}" >&2
	echo "install-deps: run as root (or install them) and retry" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# A fresh machine has no package lists yet; an old list may miss versions.
if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/mltcp-apt.log 2>&1; then
	apt-get update -q >>/tmp/mltcp-apt.log 2>&1
	if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >>/tmp/mltcp-apt.log 2>&1; then
		tail -n 20 /tmp/mltcp-apt.log >&2
		echo "install-deps: apt-get install failed (full log: /tmp/mltcp-apt.log)" >&2
		exit 1
	fi
fi
