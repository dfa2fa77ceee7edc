#!/bin/bash
# bad_input_test.sh - mltcp-rdma on a host without an RDMA device (this
# one; the guest tests cover device-present errors): every command fails
# fast with a clear message and the documented exit status, never hangs.
#   usage: bad_input_test.sh BUILD/rdma/mltcp-rdma
set -u -o pipefail
R=${1:?usage: $0 path/to/mltcp-rdma}
fails=0
# expect NAME RC PATTERN CMD...: exit status RC, output matching PATTERN,
# within 10 s.
expect() {
	local name=$1 rc=$2 pat=$3 out got
	shift 3
	out=$(timeout 10 "$@" 2>&1); got=$?
	if [ "$got" = "$rc" ] && grep -q -- "$pat" <<<"$out"; then
		echo "PASS $name"
	else
		echo "FAIL $name: rc=$got (want $rc), output: $out"
		fails=$((fails + 1))
	fi
}
if "$R" devices >/dev/null 2>&1; then
	echo "SKIP: this host has an RDMA device; the no-device cases need a host without one"
	exit 0
fi
expect no-device-list 3 "no RDMA device found" "$R" devices
expect no-device-client 3 "no RDMA device found" "$R" client --host 10.0.0.1 --bytes 1000 --control dcqcn
expect no-device-server 3 "no RDMA device found" "$R" server --bind 127.0.0.1
expect usage-no-command 2 "usage:" "$R"
expect usage-bad-command 2 "unknown command 'foo'" "$R" foo
expect usage-no-host 2 "client needs --host" "$R" client --bytes 10
expect usage-no-size 2 "either --bytes N or --iterations" "$R" client --host 1.2.3.4
expect usage-bad-control 2 "use fixed, dcqcn or mltcp_dcqcn" "$R" client --host 1.2.3.4 --bytes 8 --control cubic
expect usage-fixed-no-rate 2 "needs --rate-mbps" "$R" client --host 1.2.3.4 --bytes 8
expect usage-bad-slope 2 "slope must be in \\[0, 8192\\] 1/1024, got 9999" "$R" client --host 1.2.3.4 --bytes 8 --slope 9999
expect usage-bad-number 2 "is not an integer" "$R" client --host 1.2.3.4 --bytes 8x
expect usage-msg-align 2 "multiple of 8" "$R" server --msg 100
expect usage-icrc-no-pcap 2 "icrc-check needs --pcap" "$R" icrc-check
expect icrc-missing-pcap 2 "No such file" "$R" icrc-check --pcap /nonexistent/x.pcap
expect help 0 "Exit status" "$R" --help
# Only the core's rows that act on a DCQCN flow: a window rule is refused.
expect usage-window-param 2 "tail-windows does not apply here: it acts on window flows" \
	"$R" client --host 1.2.3.4 --bytes 8 --control mltcp_dcqcn --tail-windows 4
# (The help read whole first: under pipefail, grep -q leaving early can
# fail the pipe with the writer's SIGPIPE.)
help=$("$R" --help 2>&1)
if grep -q -- "--tail-windows\|--start-drain-windows" <<<"$help"; then
	echo "FAIL help-scope: --help lists window rules"; fails=$((fails + 1))
elif ! grep -q -- "--slope N" <<<"$help"; then
	echo "FAIL help-scope: --help lacks --slope"; fails=$((fails + 1))
else
	echo "PASS help-scope"
fi
[ $fails = 0 ] && echo "bad input: all passed"
exit $((fails > 0))
