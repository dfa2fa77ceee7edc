#!/usr/bin/env bash
# metrics_cli_test.sh - mltcp-metrics over the recorded CSVs in data/: the
# hand-computed figures of data/README.md, and bad input (exit 2 with a
# message naming the option, file or line).
# usage: metrics_cli_test.sh <mltcp-metrics> <data dir>
set -euo pipefail
bin=${1:?usage: metrics_cli_test.sh <mltcp-metrics> <data dir>}
data=${2:?usage: metrics_cli_test.sh <mltcp-metrics> <data dir>}
fail=0

out=$("$bin" --warmup 1 --iso a=200 --iso b=200 "$data/a.csv" "$data/b.csv")
/usr/bin/python3 - "$out" <<'PY' || fail=1
import json, sys
m = json.loads(sys.argv[1])
want = {"mean_ratio": 1.15, "p99_ratio": 1.5, "overlap_mean": 0.2, "interleaved_at": 2,
        "mean_ratio_after": 1.0625, "p99_ratio_after": 1.5}
bad = [k for k, v in want.items() if m[k] is None or abs(m[k] - v) > 1e-9]
jobs = {j["job"]: j for j in m["jobs"]}
if [jobs["a"]["mean_ratio"], jobs["b"]["mean_ratio"]] != [1.1, 1.2] or \
        jobs["a"]["overlaps"] != [1, 1, 0, 0, 0, 0]:
    bad.append("per-job")
if bad:
    sys.exit("FAIL: mltcp-metrics %s differ from data/README.md: %s" % (bad, m))
print("ok: figures of data/README.md")
PY
# Loss counters: a ring job's two ranks (data/README.md); a.csv has none.
out=$("$bin" --warmup 1 --rank ring=$data/ring.rank1.csv "$data/ring.csv" "$data/a.csv")
alone=$("$bin" --warmup 1 "$data/ring.csv")
/usr/bin/python3 - "$out" "$alone" <<'PY' || fail=1
import json, sys
m, alone = json.loads(sys.argv[1]), json.loads(sys.argv[2])
ring = m["jobs"][0]["losses"]
want = {"iterations": 5, "rto": 3, "recoveries": 5, "tlp": 3, "undo": 1, "spurious_rto": None,
        "rto_per_100_iter": 60, "recoveries_per_100_iter": 100, "spurious_rto_per_100_iter": None,
        "rto_iterations": [2, 3], "rto_unrepaired": None}   # 12-column CSVs: no repairs
bad = {k: ring.get(k) for k, v in want.items() if ring.get(k) != v}
if m["jobs"][0]["loss_per_iteration"][3] != {"rto": 2, "recoveries": 1, "tlp": 0, "undo": 0,
                                             "spurious_rto": 0, "window_repairs": None}:
    bad["loss_per_iteration"] = m["jobs"][0]["loss_per_iteration"]
if m["jobs"][1]["losses"]["rto"] is not None or m["losses"]["rto"] is not None:
    bad["unknown"] = (m["jobs"][1]["losses"], m["losses"])
if alone["losses"]["rto"] != 1 or alone["jobs"][0]["losses"]["rto_iterations"] != [2]:
    bad["rank 0 alone"] = alone["losses"]
if bad:
    sys.exit("FAIL: mltcp-metrics losses differ from data/README.md: %s" % bad)
print("ok: loss counters of data/README.md")
PY
# No isolated means: no ratios, null in the JSON.
"$bin" "$data/a.csv" "$data/b.csv" | grep -q '"mean_ratio": null, "p99_ratio": null' ||
	{ echo "FAIL: ratios without --iso are not null"; fail=1; }

expect_error() {  # expect_error <text the message must contain> <args...>
	local want=$1 msg rc=0
	shift
	msg=$("$bin" "$@" 2>&1 >/dev/null) || rc=$?
	if [[ $rc -ne 2 || $msg != *"$want"* ]]; then
		echo "FAIL: mltcp-metrics $* -> exit $rc, '$msg' (want exit 2 and '$want')"
		fail=1
	else
		echo "ok: $* -> $msg"
	fi
}
expect_error "no CSV file given"
expect_error "--warmup 'x' is not an integer in 0..1000000 (iterations)" --warmup x "$data/a.csv"
expect_error "--iso 'a' is not JOB=US with US > 0 (microseconds)" --iso a "$data/a.csv"
expect_error "--iso 'a=-3' is not JOB=US" --iso a=-3 "$data/a.csv"
expect_error "--iso: no job 'c' in the CSV files" --iso c=10 "$data/a.csv"
expect_error "/nonexistent.csv: cannot read" /nonexistent.csv
expect_error "bad-order.csv:3: column iteration: job a iteration 2 where 1 comes next" \
	"$data/bad-order.csv"
expect_error "job a is in two files" "$data/a.csv" "$data/a.csv"
expect_error "bad option '--bogus'" --bogus
expect_error "--rank 'ring' is not JOB=FILE.csv" --rank ring "$data/ring.csv"
expect_error "--rank: no job 'x' in the CSV files" --rank "x=$data/a.csv" "$data/ring.csv"
expect_error "bad-order.csv:3" --rank "ring=$data/bad-order.csv" "$data/ring.csv"
expect_error "--iso-run 'a' is not JOB=FILE.csv" --iso a=200 --iso-run a "$data/a.csv"
expect_error "--iso-run: no job 'x' in the CSV files" --iso a=200 --iso-run "x=$data/a.csv" "$data/a.csv"
expect_error "--iso-run a needs --iso a=US" --iso-run "a=$data/a.csv" "$data/a.csv"
two=$(mktemp /tmp/mltcp-metrics-two.XXXXXX.csv)
{ cat "$data/a.csv"; tail -n +2 "$data/b.csv"; } >"$two"
expect_error "--iso-run needs one job per file, it has 2" --iso a=200 --iso-run "a=$two" \
	"$data/a.csv"
rm -f "$two"
expect_error "/nonexistent.csv: cannot read" --iso a=200 --iso-run a=/nonexistent.csv "$data/a.csv"
# Against its own run alone, size by size, a job's mean ratio is 1.
"$bin" --warmup 1 --iso a=200 --iso-run "a=$data/a.csv" "$data/a.csv" |
	/usr/bin/python3 -c 'import json, sys; r = json.load(sys.stdin)["jobs"][0]["mean_ratio"]; sys.exit(abs(r - 1) > 1e-12)' ||
	{ echo "FAIL: --iso-run: a against itself alone is not 1"; fail=1; }
"$bin" --help | grep '^usage: mltcp-metrics' >/dev/null || { echo "FAIL: --help"; fail=1; }
exit $fail
