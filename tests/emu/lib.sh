# lib.sh - sourced by the emulator's end-to-end tests: the checks every
# per-iteration CSV of mltcp-emu must pass, and exit-code expectations.
# Needs fail() and $TMP from the caller.

# check_iteration_csv CSV JOB ROWS EVEN_BYTES ODD_BYTES LABEL: a header and
# ROWS rows of JOB; iteration i carries EVEN_BYTES (even i) or ODD_BYTES (the
# tests' 1,0.5 byte cycle); times are ordered; compute lasts >= 20 ms; the
# loss counters are non-negative integers (this host's kernel has every
# field they are made of, tests/emu/emu_unit_tests.cpp).
check_iteration_csv() {
	local csv=$1 job=$2 rows=$3 even=$4 odd=$5 label=$6
	[[ $(wc -l <"$csv") -eq $((rows + 1)) ]] ||
		fail "$label: CSV should have a header and $rows rows: $(cat "$csv")"
	head -1 "$csv" | grep -qx 'job,iteration,bytes,start_us,comm_start_us,comm_end_us,end_us,rto,recoveries,tlp,undo,spurious_rto,window_repairs' ||
		fail "$label: CSV header"
	awk -F, -v job="$job" -v even="$even" -v odd="$odd" 'NR>1 {
		want = ($2 % 2 == 0) ? even : odd
		if ($1 != job || $2 != NR-2 || $3 != want) { print "row " NR ": " $0; exit 1 }
		if (!($4 <= $5 && $5 < $6 && $6 <= $7)) { print "order " NR ": " $0; exit 1 }
		if ($5 - $4 < 20000) { print "compute too short " NR ": " $0; exit 1 }
		if (NF != 13) { print "columns " NR ": " $0; exit 1 }
		for (c = 8; c <= 12; c++)
			if ($c !~ /^[0-9]+$/) { print "loss counter " c " " NR ": " $0; exit 1 }
		# window_repairs: known only for MLTCP BPF sockets
		if ($13 !~ /^[0-9]*$/) { print "window_repairs " NR ": " $0; exit 1 }
	}' "$csv" || fail "$label: CSV content"
}

# expect_exit CODE PATTERN COMMAND...: the command exits with CODE and its
# output contains PATTERN.
expect_exit() {
	local code=$1 pat=$2 rc=0
	shift 2
	"$@" >"$TMP/out" 2>&1 || rc=$?
	[[ $rc -eq $code ]] || fail "exit $rc (want $code) from: $* -- $(cat "$TMP/out")"
	grep -q -- "$pat" "$TMP/out" || fail "no '$pat' in: $(cat "$TMP/out")"
	echo "ok: exit $code: $(head -1 "$TMP/out")"
}
