#!/usr/bin/env bash
# metrics_agree.sh - the simulator and mltcp-metrics compute one metric: a
# short dumbbell run (each job stopping after its iterations, so its CSV
# holds every communication phase) is analysed again by mltcp-metrics from
# the CSV mltcp-sim wrote, with the isolated means of its JSON; mean ratio,
# p99 ratio and interleaved_at must be the simulator's.
# usage: metrics_agree.sh <mltcp-sim> <mltcp-metrics>
set -euo pipefail
sim=${1:?usage: metrics_agree.sh <mltcp-sim> <mltcp-metrics>}
metrics=${2:?usage: metrics_agree.sh <mltcp-sim> <mltcp-metrics>}
dir=$(mktemp -d /tmp/mltcp-sim-agree.XXXXXX)
trap 'rm -rf "$dir"' EXIT
"$sim" --cc mltcp --profile-mix testbed:2 --iterations 10 --warmup 2 --start-spread-ms 10 \
	--stop-when-done --quiet --out "$dir/run" >/dev/null
/usr/bin/python3 - "$dir/run" "$metrics" <<'PY'
import json, subprocess, sys
run, metrics = sys.argv[1:]
js = json.load(open(run + ".json"))
cmd = [metrics, "--warmup", str(js["warmup"])]
for j in js["per_job"]:
    cmd += ["--iso", "%d=%r" % (j["job"], j["isolated_mean_s"] * 1e6)]
m = json.loads(subprocess.run(cmd + [run + ".csv"], check=True, capture_output=True,
                              text=True).stdout)
# The JSON prints 6 significant digits (and the isolated means with them).
close = lambda a, b: a is not None and b is not None and abs(a - b) <= 1e-4 * abs(b)
bad = [k for k in ("mean_ratio", "p99_ratio") if not close(m[k], js[k])]
if m["interleaved_at"] != js["interleaved_at"] or js["interleaved_at"] is None:
    bad.append("interleaved_at")
if bad:
    sys.exit("FAIL: mltcp-metrics on the simulator's CSV differs in %s: sim %s, metrics %s" % (
        bad, {k: js[k] for k in ("mean_ratio", "p99_ratio", "interleaved_at")},
        {k: m[k] for k in ("mean_ratio", "p99_ratio", "interleaved_at")}))
print("ok: sim and mltcp-metrics agree: mean_ratio %.4f p99_ratio %.4f interleaved_at %s" % (
    m["mean_ratio"], m["p99_ratio"], m["interleaved_at"]))
PY
