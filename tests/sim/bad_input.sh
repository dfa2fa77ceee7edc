#!/usr/bin/env bash
# bad_input.sh - mltcp-sim rejects bad input with a clear message and a
# non-zero exit, never a crash (exit >= 128 would be a signal).
# usage: bad_input.sh <path to mltcp-sim>
set -u
sim=${1:?usage: bad_input.sh <mltcp-sim>}
tmp=$(mktemp -d /tmp/mltcp-sim-bad.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0

expect_error() {  # expect_error <needle> <args...>
	local needle=$1 rc
	shift
	"$sim" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if ((rc == 0 || rc >= 128)); then
		echo "FAIL: mltcp-sim $* exited $rc (want a clean error)"; fails=$((fails + 1)); return
	fi
	if ! grep -q -- "$needle" "$tmp/err"; then
		echo "FAIL: mltcp-sim $*: message lacks '$needle':"; cat "$tmp/err"; fails=$((fails + 1)); return
	fi
	echo "ok: $* -> $(head -n1 "$tmp/err")"
}

printf 'profile a compute_us=10000 bytes=1M\nprofile b compute_us=oops bytes=1M\n' >"$tmp/bad.txt"
printf 'profile a compute_us=10000 bytes=1M\n' >"$tmp/unreadable.txt"
chmod 000 "$tmp/unreadable.txt"

expect_error "unknown congestion control 'vegas'" --cc vegas
expect_error "unknown profile 'nosuch'" --profile-mix nosuch
expect_error "--jobs: 0 is out of range" --jobs 0
expect_error "--link-gbps: -1 is out of range" --link-gbps -1
expect_error "--link-gbps: 'fast' is not a number" --link-gbps fast
expect_error "cannot read profile file '/nonexistent/p.txt'" --profiles /nonexistent/p.txt
expect_error "bad.txt:2: field 'compute_us'" --profiles "$tmp/bad.txt" --profile-mix a
expect_error "--iterations: 0 is out of range" --iterations 0
expect_error "unknown option '--frobnicate'" --frobnicate
expect_error "slope must be in \\[0, 8192\\] 1/1024, got 9000" --slope 9000
expect_error "idle_min_us must not exceed idle_max_us" --idle-min-us=60000
expect_error "--no-scale-decrease takes no value" --no-scale-decrease=1
expect_error "--job-gap does not apply here: it acts on jobs of several connections" --job-gap 0
expect_error "--stop-when-done takes no value" --stop-when-done=yes
expect_error "--topology: unknown 'torus'" --topology torus
expect_error "--red-pmax" --cc dcqcn --red-pmax -0.5
expect_error "cannot read profile file" --profiles "$tmp"
# root reads mode-000 files; only check the unreadable case as a normal user
if ((EUID != 0)); then
	expect_error "cannot read profile file" --profiles "$tmp/unreadable.txt"
fi
"$sim" --help | grep -- "--profile-mix" >/dev/null || { echo "FAIL: --help"; fails=$((fails + 1)); }
"$sim" --help | grep -- "--stop-when-done" >/dev/null || { echo "FAIL: --help lacks --stop-when-done"; fails=$((fails + 1)); }

((fails == 0)) && echo "bad input: all rejected cleanly" || exit 1
