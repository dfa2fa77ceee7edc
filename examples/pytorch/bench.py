#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench.py - make bench-pytorch: two identical PyTorch DDP jobs (ddp_train.py,
two ranks each, Gloo) through the testbed's bottleneck (launch.py), per
congestion control and repetition, against each job alone with the same
congestion control, measured in the same session.

Mixes:
  two_identical       DDP's default 25 MB bucket: one all-reduce per iteration
  small_buckets       --small-bucket-mb buckets: several all-reduces per iteration
  two_identical_hint  two_identical with job-level hints (mltcp ccs only)

Metrics are interleave.py's (imported; computed by workload/'s mltcp-metrics,
$MLTCP_METRICS or the build tree's; docs/evaluation.md): per run the mean
and p99 ratio of iteration times after --warmup iterations over the isolated
mean, and the iteration at which the schedule is interleaved; for the mltcp
ccs, the host-corrupted windows the BPF datapath repaired during the run
(window_repairs=, interleave.py's).  Prints a RESULT line per run, per
isolated job (mix=alone, with its communication fraction and, for mltcp
ccs, the ratio to its base algorithm alone), then the medians, TARGET
lines and timelines under <out>/plots/.  Each isolated baseline is the
median of --iso-reps runs.  This host has no GPU: --compute-ms stands in
for GPU compute.
"""
import argparse
import json
import os
import signal
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import launch  # noqa: E402
from launch import interleave  # noqa: E402

MIXES = ("two_identical", "small_buckets", "two_identical_hint")
CCS = ("cubic", "reno", "mltcp", "mltcp_cubic")


def train_args(args, mix, iterations):
    a = ["--iterations", str(iterations), "--compute-ms", str(args.compute_ms),
         "--hidden", str(args.hidden)]
    if mix == "small_buckets":
        a += ["--bucket-mb", str(args.small_bucket_mb)]
    return a


def config_of(mix):
    """Isolated baseline a mix's jobs compare against: (bucket config, hints)."""
    return ("small" if mix == "small_buckets" else "default", mix.endswith("_hint"))


def link_job_csvs(rundir, rows):
    for job in rows:
        dst = os.path.join(rundir, job + ".csv")   # plots.timeline's name
        if not os.path.exists(dst):
            os.symlink(job + "-rank0.csv", dst)


def analyse(mix, cc, rundir, rows_by_job, iso, warmup):
    """interleave.py's metrics of one run (mltcp-metrics, workload/);
    rows_by_job: {job: rank 0's CSV rows}, as Session.run returns them."""
    jobs = list(rows_by_job)
    base = iso[config_of(mix) + (cc,)]["mean_us"]
    # Rank 1's CSV adds its namespace's loss counters to its job's.
    m = interleave.run_metrics([os.path.join(rundir, j + ".csv") for j in jobs],
                               {j: base for j in jobs}, warmup,
                               {j: [os.path.join(rundir, j + "-rank1.csv")] for j in jobs})
    res = {"mix": mix, "cc": cc, "jobs": {jm["job"]: dict(jm, cc=cc) for jm in m["jobs"]}}
    for k in ("mean_ratio", "p99_ratio", "p99_ratio_unrepaired", "overlap_mean",
              "interleaved_at", "mean_ratio_after", "p99_ratio_after", "losses"):
        res[k] = m.get(k)
    res["rto_iterations"] = interleave.rto_iterations(rows_by_job, m["jobs"])
    return res


def measure_isolated(s, args, ccs, mixes):
    """Each baseline the mixes need, --iso-reps times (interleave.round_robin);
    a baseline is the median of its runs' means, so that one slow
    run (a 200 ms stall in 7 measured iterations moves a mean by 10%) does not
    set every ratio of its cc."""
    mix_of = {}   # baseline -> the first mix that needs it, in order
    for mix in mixes:
        for cc in ccs:
            key = config_of(mix) + (cc,)
            if key not in mix_of and not (key[1] and cc not in launch.MLTCP_CCS):
                mix_of[key] = mix
    keys = list(mix_of)

    def alone(key, rep):
        d = os.path.join(args.out, "isolated", "%s%s-%s-r%d" % (key[0], "-hint" * key[1],
                                                                key[2], rep))
        rows = s.run(key[2], d, train_args(args, mix_of[key], args.iso_iterations), hint=key[1],
                     timeout=args.timeout, jobs=1)["job1"][args.warmup:]
        solo = interleave.run_metrics([os.path.join(d, "job1-rank0.csv")], {},
                                      args.warmup)["jobs"][0]
        c = statistics.mean(r["comm_end_us"] - r["comm_start_us"] for r in rows)
        interleave.log("isolated %-7s %-5s %-12s run %d: mean %.1f ms, communication "
                       "%.1f ms (%.0f%%)" % (key[0], "hint" if key[1] else "", key[2], rep,
                                             solo["mean_us"] / 1e3, c / 1e3,
                                             100 * c / solo["mean_us"]))
        return {"mean_us": solo["mean_us"], "comm_us": c}
    runs = interleave.round_robin(keys, args.iso_reps, alone)
    iso = {key: {"mean_us": statistics.median(r["mean_us"] for r in runs[key]),
                 "comm_us": statistics.median(r["comm_us"] for r in runs[key]),
                 "runs_mean_us": [r["mean_us"] for r in runs[key]]} for key in keys}
    for key, v in iso.items():
        extra = ""
        base = interleave.BASE_OF.get(key[2])
        if base and (key[0], False, base) in iso:
            extra = " vs_%s_alone=%.3f" % (base, v["mean_us"] / iso[(key[0], False, base)]["mean_us"])
        interleave.log("RESULT framework=pytorch mix=alone%s%s cc=%s mean_ms=%.1f "
                       "comm_fraction=%.2f runs_ms=%s%s" % (
                           "" if key[0] == "default" else "_" + key[0],
                           "_hint" if key[1] else "", key[2], v["mean_us"] / 1e3,
                           v["comm_us"] / v["mean_us"],
                           ",".join("%.1f" % (x / 1e3) for x in v["runs_mean_us"]), extra))
    return iso


def check_targets(table, iso):
    out = []

    def add(name, ok, detail):
        out.append("TARGET %-52s %-6s %s" % (name, "met" if ok else "MISSED", detail))

    for ml, base in interleave.BASE_OF.items():
        for mix in ("two_identical", "small_buckets"):
            a, b = table.get((mix, ml)), table.get((mix, base))
            if a and b:
                add("%s %s mean<=1.05 il<=10 in >=4/5, %s>=1.25" % (mix, ml, base),
                    a["mean_ratio"] <= 1.05 and a["il_within_10"] >= 4 and b["mean_ratio"] >= 1.25,
                    "mean %.3f interleaved<=10 in %d/%d; %s mean %.3f" % (
                        a["mean_ratio"], a["il_within_10"], a["reps"], base, b["mean_ratio"]))
        h = table.get(("two_identical_hint", ml))
        if h:
            add("two_identical_hint %s il<=5 in >=4/5" % ml, h["il_within_5"] >= 4,
                "interleaved<=5 in %d/%d, mean %.3f" % (h["il_within_5"], h["reps"],
                                                      h["mean_ratio"]))
    a, b = iso.get(("default", False, "mltcp")), iso.get(("default", False, "reno"))
    if a and b:
        r = a["mean_us"] / b["mean_us"]
        add("alone mltcp within 2% of reno alone", r <= 1.02, "ratio %.3f" % r)
    for t in out:
        interleave.log(t)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=18)
    ap.add_argument("--iso-iterations", type=int, default=10)
    ap.add_argument("--iso-reps", type=int, default=3,
                    help="runs of each job alone; its baseline is their median (default 3)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--compute-ms", type=float, default=150.0)
    ap.add_argument("--hidden", type=int, default=700, help="MLP width (700: 2.7 MB gradients)")
    ap.add_argument("--small-bucket-mb", type=float, default=0.5)
    ap.add_argument("--mixes", default=" ".join(MIXES))
    ap.add_argument("--ccs", default=" ".join(CCS))
    ap.add_argument("--timeout", type=float, default=180.0, help="per run, seconds")
    ap.add_argument("--mltcpctl", required=True)
    ap.add_argument("--param", action="append", default=[], metavar="K=V",
                    help="mltcpctl set K=V before the runs (repeatable), as interleave.py's")
    ap.add_argument("--testbed", default="",
                    help="extra options for mltcp-testbed up, as interleave.py's, "
                         "e.g. --testbed=--reorder")
    ap.add_argument("--pin-cpus", action="store_true",
                    help="each job on CPUs of its own, alone and in a pair (launch.py "
                         "--pin-cpus); by default a pair's four ranks share the CPUs that a "
                         "job alone has for itself")
    ap.add_argument("--no-plots", action="store_true")
    args = ap.parse_args()
    mixes, ccs = args.mixes.split(), args.ccs.split()
    for m in mixes:
        if m not in MIXES:
            ap.error("unknown mix %r (known: %s)" % (m, " ".join(MIXES)))
    if args.reps < 1 or args.iterations <= args.warmup + interleave.CLEAN_RUN:
        ap.error("need --reps >= 1 and --iterations > --warmup + %d" % interleave.CLEAN_RUN)
    if args.iso_reps < 1 or args.iso_iterations <= args.warmup:
        ap.error("need --iso-reps >= 1 and --iso-iterations > --warmup")
    if os.geteuid() != 0:
        ap.error("must run as root (namespaces, cgroups, BPF)")
    missing = launch.torch_missing()
    if missing:
        sys.exit("bench-pytorch: " + missing)
    os.makedirs(args.out, exist_ok=True)
    results = []

    def on_signal(signum, frame):
        raise KeyboardInterrupt("signal %d" % signum)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        with launch.Session(2, args.mltcpctl, testbed_opts=args.testbed.split(),
                            params=args.param, pin_cpus=args.pin_cpus) as s:
            iso = measure_isolated(s, args, ccs, mixes)
            for rep in range(1, args.reps + 1):
                for mix in mixes:
                    for cc in ccs:
                        hint = mix.endswith("_hint")
                        if hint and cc not in launch.MLTCP_CCS:
                            continue
                        d = os.path.join(args.out, "runs", "%s-%s-r%d" % (mix, cc, rep))
                        def one():
                            return s.run(cc, d, train_args(args, mix, args.iterations),
                                         hint=hint, timeout=args.timeout)
                        # The BPF datapath's repairs of host-corrupted
                        # windows over the run (interleave.py's).
                        rows, repairs = s.mltcp.counting_repairs(one) \
                            if cc in launch.MLTCP_CCS else (one(), None)
                        link_job_csvs(d, rows)
                        res = analyse(mix, cc, d, rows, iso, args.warmup)
                        res["window_repairs"] = repairs
                        res.update(rep=rep, dir=d)
                        results.append(res)
                        with open(os.path.join(d, "result.json"), "w") as f:
                            json.dump(res, f, indent=1)
                        interleave.log(
                            "RESULT framework=pytorch mix=%s cc=%s mean_ratio=%.3f p99_ratio=%.3f "
                            "interleaved_at=%s rep=%d overlap=%.2f %s" % (
                                mix, cc, res["mean_ratio"], res["p99_ratio"],
                                interleave.fmt_iter(res["interleaved_at"]), rep,
                                res["overlap_mean"], interleave.loss_fields(res)))
    except launch.Busy as e:
        sys.exit("bench-pytorch: refused: %s" % e)
    except launch.LaunchError as e:
        sys.exit("bench-pytorch: %s" % e)
    except KeyboardInterrupt:
        sys.exit("bench-pytorch: interrupted; everything torn down")
    used = [c for c in ccs if any(r["cc"] == c for r in results)]
    table = interleave.summarise(results, used, mixes)
    for (mix, cc), t in table.items():
        il = [r["interleaved_at"] for r in results if r["mix"] == mix and r["cc"] == cc]
        t["il_within_10"] = sum(1 for x in il if x is not None and x <= 10)
        t["il_within_5"] = sum(1 for x in il if x is not None and x <= 5)
    interleave.print_table(table, used, mixes)
    targets = check_targets(table, iso)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump({"runs": results, "targets": targets,
                   "isolated": {"-".join(str(x) for x in k): v for k, v in iso.items()},
                   "args": dict(vars(args), ccs=" ".join(used))}, f, indent=1)
    if not args.no_plots:
        sys.path.insert(0, os.path.join(launch.ROOT, "tools", "bench"))
        import plots  # noqa: E402  (Debian's python3-matplotlib)
        pdir = os.path.join(args.out, "plots")
        os.makedirs(pdir, exist_ok=True)
        for r in results:
            plots.timeline(r, os.path.join(pdir, "timeline-%s-%s-r%d" % (r["mix"], r["cc"],
                                                                         r["rep"])))
        for mix in mixes:
            runs = [r for r in results if r["mix"] == mix]
            if runs:
                plots.compare(mix, runs, [c for c in used if any(r["cc"] == c for r in runs)],
                              os.path.join(pdir, "compare-%s" % mix))
        interleave.log("pictures: %s/ (timeline-<mix>-<cc>-r<rep>, compare-<mix>)" % pdir)


if __name__ == "__main__":
    main()
