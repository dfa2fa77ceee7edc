#!/usr/bin/python3
"""run.py - the MLTCP simulation study, regenerated in one command.

  run.py --sim build/cmake/sim/mltcp-sim --docs docs     full study: writes
      docs/simulation-results.md (tables), docs/img/sim-*.png (plots) and
      docs/simulation-validation.md (the host testbed's mixes and settings)
  run.py --sim ... --docs docs --validation-only --host-summary
      build/bench-interleave/<session>/summary.json      only the validation
      table, with its host columns from a `make bench-interleave` session
  run.py --sim ... --bench                               `make bench-sim`: a
      smaller subset, printed, ending in RESULT lines

Every figure comes from mltcp-sim runs made here (each run also measures
every job alone, in the same invocation).  Speedup = mean (or p99) iteration
time under the base algorithm / the same under its MLTCP variant, averaged
over jobs, median over seeds.  In the mixes every job keeps running (and
contending) until the slowest job has done its iterations, and only each
job's first iterations are recorded (mltcp-sim's default), so base and MLTCP
are compared over iterations that all run under the whole mix.  The
validation runs use --stop-when-done, as the host emulator does.  Uses
/usr/bin/python3 + matplotlib.
"""
import argparse
import concurrent.futures as cf
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

BASES = [("reno", "mltcp"), ("cubic", "mltcp_cubic"), ("dcqcn", "mltcp_dcqcn")]
# Link settings per base.  TCP: 1 Gbit/s, profiles at full length
# (communication phases of 40-100 ms, hundreds of base RTTs).  DCQCN: its
# control loop (55 us timers, 50 us CNP interval) needs packet times well
# below them, i.e. >= 10 Gbit/s with 9000-byte frames; --time-scale 0.1
# keeps the packet count of 1 Gbit/s (phases of 4-10 ms).
LINK = {"tcp": ["--link-gbps", "1"],
        "dcqcn": ["--link-gbps", "10", "--time-scale", "0.1"]}

# Mixes (profiles/jobs.prof, sim/sim.prof; all periods ~200 ms at the
# reference scale).  Communication fraction of each profile alone:
# resnet18 0.10, resnet50 0.19, gpt2 0.22, bert_large 0.32, tag 0.36,
# vgg16 0.44, dorylus (async) ~1.
COMPATIBLE = [("3 jobs", "resnet50,gpt2,bert_large", 0.73, 30),
              ("4 jobs", "resnet50:2,gpt2:2", 0.82, 30),
              ("8 jobs", "resnet18:8", 0.79, 50)]
INCOMPATIBLE = [("3x vgg16", "vgg16:3", 1.31, 30),
                ("dorylus+vgg16", "dorylus,vgg16", 1.44, 30)]
VGG16_COMPUTE_S = 0.110  # profiles/jobs.prof vgg16 compute_us


class Runner:
    def __init__(self, sim, workdir, parallel):
        self.sim, self.workdir, self.parallel = sim, workdir, parallel
        self.n = 0
        self.log = []

    def run(self, args):
        """One mltcp-sim run -> its JSON summary (+ 'csv' path, 'cmd')."""
        self.n += 1
        out = os.path.join(self.workdir, "run%04d" % self.n)
        cmd = [self.sim, "--quiet", "--out", out] + args
        t0 = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError("%s failed: %s" % (" ".join(cmd), p.stderr.strip()))
        with open(out + ".json") as f:
            js = json.load(f)
        js["csv"] = out + ".csv"
        js["cmd"] = "mltcp-sim " + " ".join(args)
        js["total_wall_s"] = time.time() - t0
        self.log.append(js["cmd"])
        return js

    def many(self, arglists):
        with cf.ThreadPoolExecutor(self.parallel) as ex:
            return list(ex.map(self.run, arglists))


def link_args(cc):
    return LINK["dcqcn" if "dcqcn" in cc else "tcp"]


def mean_job(js, key):
    return statistics.mean(j[key] for j in js["per_job"])


def slowest_job_speedup(jb, jm):
    """The smallest per-job speedup (base / MLTCP mean iteration time) of a
    run pair: how much the job that MLTCP helps least gains (or loses)."""
    return min(b["mean_s"] / m["mean_s"] for b, m in zip(jb["per_job"], jm["per_job"]))


def speedups(r, mixes, seeds, spread_ms="10"):
    """Per mix and base: median over seeds of base/mltcp mean and p99."""
    grid = []
    for name, mix, frac, iters in mixes:
        for base, ml in BASES:
            for s in seeds:
                for cc in (base, ml):
                    grid.append((name, mix, base, cc, s, iters))
    results = r.many([["--cc", cc, "--profile-mix", mix, "--iterations", str(it),
                       "--seed", str(s), "--start-spread-ms", spread_ms] + link_args(cc)
                      for (_, mix, _, cc, s, it) in grid])
    by = {}
    for g, js in zip(grid, results):
        by[g] = js
    rows = []
    for name, mix, frac, iters in mixes:
        for base, ml in BASES:
            sm, sp, sj, ib, im, rb, rm = [], [], [], [], [], [], []
            for s in seeds:
                jb, jm = by[(name, mix, base, base, s, iters)], by[(name, mix, base, ml, s, iters)]
                sm.append(mean_job(jb, "mean_s") / mean_job(jm, "mean_s"))
                sj.append(slowest_job_speedup(jb, jm))
                sp.append(mean_job(jb, "p99_s") / mean_job(jm, "p99_s"))
                ib.append(jb["interleaved_at"])
                im.append(jm["interleaved_at"])
                rb.append(jb["mean_ratio"])
                rm.append(jm["mean_ratio"])
            rows.append(dict(name=name, mix=mix, frac=frac, base=base, ml=ml,
                             mean_speedup=statistics.median(sm), p99_speedup=statistics.median(sp),
                             slowest_speedup=statistics.median(sj), seed_speedups=sm,
                             base_ratio=statistics.median(rb), ml_ratio=statistics.median(rm),
                             base_inter=ib, ml_inter=im, seeds=len(seeds)))
    return rows


def shift_prediction(slope, intercept, a_t, d0, limit=200):
    """Iterations for the gap d to exceed 0.9 aT by the shift equation
    (docs/design.md): shift(d) = s d (aT - d) / (aT i + d s)."""
    d, k = d0, 0
    while d < 0.9 * a_t and k < limit:
        d += slope * d * (a_t - d) / (a_t * intercept + d * slope)
        k += 1
    return k if k < limit else None


def convergence(r, gap_ms=2.0):
    """2 identical jobs (vgg16) d0 apart: iterations until interleaved vs
    slope and intercept, against the shift equation."""
    grid = [(s, i) for s in (768, 1536, 3072) for i in (256, 512, 1024)]
    base_args = ["--profile-mix", "vgg16:2", "--iterations", "30", "--start-gap-ms", str(gap_ms),
                 "--link-gbps", "1"]
    res = r.many([["--cc", "mltcp", "--slope", str(s), "--intercept", str(i)] + base_args
                  for s, i in grid])
    # The shift equation is Reno's AIMD; MLTCP-CUBIC and MLTCP-DCQCN are
    # swept too, measured only (DCQCN: its time scale, so a 10x smaller gap).
    dc_args = ["--profile-mix", "vgg16:2", "--iterations", "30",
               "--start-gap-ms", str(gap_ms / 10)] + LINK["dcqcn"]
    other = r.many([["--cc", "mltcp_cubic", "--slope", str(s), "--intercept", str(i)] + base_args
                    for s, i in grid] +
                   [["--cc", "mltcp_dcqcn", "--slope", str(s), "--intercept", str(i)] + dc_args
                    for s, i in grid])
    ref = r.many([["--cc", cc] + base_args for cc in ("reno", "cubic", "mltcp_cubic")] +
                 [["--cc", cc] + dc_args for cc in ("dcqcn", "mltcp_dcqcn")])
    rows = []
    for (s, i), js in zip(grid, res):
        t_iso = js["per_job"][0]["isolated_mean_s"]
        a_t = t_iso - VGG16_COMPUTE_S
        pred = shift_prediction(s / 1024, i / 1024, a_t, gap_ms * 1e-3)
        cu, dc = other[len(rows)], other[len(grid) + len(rows)]
        rows.append(dict(slope=s, intercept=i, measured=js["interleaved_at"], predicted=pred,
                         mean_ratio=js["mean_ratio"], csv=js["csv"], cmd=js["cmd"],
                         cubic_at=cu["interleaved_at"], cubic_ratio=cu["mean_ratio"],
                         dcqcn_at=dc["interleaved_at"], dcqcn_ratio=dc["mean_ratio"]))
    return rows, ref


def fairness(r, seeds):
    rows = []
    for base, ml in BASES:
        args = [[("--cc", cc), s] for cc in (base, ml) for s in seeds]
        res = r.many([["--cc", cc, "--profile-mix", "vgg16", "--bulk", "--iterations", "30",
                       "--seed", str(s)] + link_args(base) for (_, cc), s in args])
        for cc in (base, ml):
            got = [js for ((_, c), _), js in zip(args, res) if c == cc]
            shares = [js["bulk_fair_share"] for js in got]
            rows.append(dict(cc=cc, share=statistics.median(shares), shares=shares,
                             util=statistics.median(js["utilisation"] for js in got),
                             job_ratio=statistics.median(js["mean_ratio"] for js in got)))
    return rows


def timeline(csv_path, title, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    jobs = {}
    with open(csv_path) as f:  # the workload CSV (workload/iteration.h), simulated us
        for r in csv.DictReader(f):
            cs, ce = int(r["comm_start_us"]) / 1e6, int(r["comm_end_us"]) / 1e6
            jobs.setdefault(int(r["job"]), []).append((cs, ce - cs))
    fig, ax = plt.subplots(figsize=(9, 1 + 0.5 * len(jobs)))
    for j, bars in sorted(jobs.items()):
        ax.broken_barh(bars, (j - 0.35, 0.7), color="C%d" % (j % 10))
    ax.set_yticks(sorted(jobs))
    ax.set_yticklabels(["job %d" % j for j in sorted(jobs)])
    ax.set_xlabel("simulated time (s): bars are communication phases")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def speedup_plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = sorted({r["name"] for r in rows}, key=lambda n: [x["name"] for x in rows].index(n))
    fig, ax = plt.subplots(figsize=(8, 3.5))
    w = 0.25
    for k, (base, ml) in enumerate(BASES):
        vals = [next(r["mean_speedup"] for r in rows if r["name"] == n and r["base"] == base)
                for n in names]
        ax.bar([i + k * w for i in range(len(names))], vals, w, label="%s vs %s" % (ml, base))
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xticks([i + w for i in range(len(names))])
    ax.set_xticklabels(names)
    ax.set_ylabel("mean iteration speedup")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def fmt_inter(v):
    return ",".join("-" if x is None else str(x) for x in v)


def scale_run(r, jobs, time_scale, iterations=30, cc="mltcp"):
    args = ["--cc", cc, "--topology", "leafspine", "--leaves", "8", "--spines", "4",
            "--jobs", str(jobs), "--profile-mix", "vgg16,gpt2,bert_large,resnet50,resnet18,gpt2_xl",
            "--link-gbps", "100", "--time-scale", str(time_scale), "--iterations", str(iterations),
            "--start-spread-ms", "1", "--no-isolated"]
    return r.run(args)


def bench(r):
    seeds = [1, 2, 3]
    rows = speedups(r, [COMPATIBLE[0], COMPATIBLE[1]], seeds)
    conv, ref = convergence_default(r)
    t0 = time.time()
    eight = r.run(["--cc", "mltcp", "--profile-mix", "resnet18:8", "--iterations", "50",
                   "--link-gbps", "10", "--start-spread-ms", "10"])
    eight_wall = time.time() - t0
    big = scale_run(r, 64, 0.005, 30)
    print("%-8s %-12s %-8s %9s %9s %12s %12s" % ("mix", "base", "mltcp", "mean_x", "p99_x",
                                                 "base_inter", "mltcp_inter"))
    for x in rows:
        print("%-8s %-12s %-12s %9.3f %9.3f %12s %12s" % (x["name"], x["base"], x["ml"],
              x["mean_speedup"], x["p99_speedup"], fmt_inter(x["base_inter"]),
              fmt_inter(x["ml_inter"])))
    for x in rows:
        print("RESULT sim_speedup mix=%s base=%s mean_speedup=%.3f p99_speedup=%.3f "
              "slowest_job_speedup=%.3f base_mean_ratio=%.3f mltcp_mean_ratio=%.3f" % (
                  x["name"].replace(" ", ""), x["base"], x["mean_speedup"], x["p99_speedup"],
                  x["slowest_speedup"],
                  x["base_ratio"], x["ml_ratio"]))
    for js in [conv] + ref:
        print("RESULT sim_interleave cc=%s mix=vgg16:2 interleaved_at=%s mean_ratio=%.3f" % (
            js["cc"], "none" if js["interleaved_at"] is None else js["interleaved_at"],
            js["mean_ratio"]))
    print("RESULT sim_speed run=8jobs_10G_50it wall_s=%.1f events=%d events_per_s=%.0f "
          "(mixed run %.1f s + isolated %.1f s; target < 120 s)" % (
              eight_wall, eight["events"], eight["events_per_s"], eight["wall_s"],
              eight["isolated_wall_s"]))
    print("validation against the host testbed: not run here (make sim-experiments "
          "SIM_HOST_SUMMARY=build/bench-interleave/<session>/summary.json; docs/simulation.md)")
    print("RESULT sim_speed run=64jobs_leafspine_100G_30it time_scale=0.005 wall_s=%.1f "
          "events=%d events_per_s=%.0f sim_s=%.3f" % (big["wall_s"], big["events"],
                                                       big["events_per_s"], big["sim_s"]))


def convergence_default(r):
    args = ["--profile-mix", "vgg16:2", "--iterations", "30", "--start-gap-ms", "2", "--link-gbps", "1"]
    conv = r.run(["--cc", "mltcp"] + args)
    ref = r.many([["--cc", cc] + args for cc in ("reno", "cubic", "mltcp_cubic")] +
                 [["--cc", cc, "--profile-mix", "vgg16:2", "--iterations", "30",
                   "--start-gap-ms", "0.2"] + LINK["dcqcn"] for cc in ("dcqcn", "mltcp_dcqcn")])
    return conv, ref


def docs(r, docdir, seeds, no_scale=False):
    img = os.path.join(docdir, "img")
    os.makedirs(img, exist_ok=True)
    t_start = time.time()
    conv, ref = convergence(r)
    comp = speedups(r, COMPATIBLE, seeds)
    incomp = speedups(r, INCOMPATIBLE, seeds)
    fair = fairness(r, seeds)
    t0 = time.time()
    eight = r.run(["--cc", "mltcp", "--profile-mix", "resnet18:8", "--iterations", "50",
                   "--link-gbps", "10", "--start-spread-ms", "10"])
    eight_wall = time.time() - t0
    scale = [] if no_scale else [(64, "mltcp", scale_run(r, 64, 0.005)),
                                 (128, "mltcp", scale_run(r, 128, 0.005)),
                                 (64, "mltcp_cubic", scale_run(r, 64, 0.005, cc="mltcp_cubic")),
                                 (64, "mltcp_dcqcn", scale_run(r, 64, 0.005, cc="mltcp_dcqcn"))]

    default = next(c for c in conv if c["slope"] == 1536 and c["intercept"] == 256)
    timeline(default["csv"], "mltcp, 2x vgg16 starting 2 ms apart, 1 Gbit/s",
             os.path.join(img, "sim-timeline-mltcp.png"))
    timeline(ref[0]["csv"], "reno, same jobs", os.path.join(img, "sim-timeline-reno.png"))
    speedup_plot(comp + incomp, os.path.join(img, "sim-speedup.png"))

    L = []
    L.append("# Simulation results (generated)\n")
    L.append("Generated by `make sim-experiments` (sim/experiments/run.py) on %s; %d mltcp-sim "
             "runs, %.0f s wall. Seeds: %s. Do not edit: rerun.\n" % (
                 time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), r.n, time.time() - t_start,
                 ",".join(map(str, seeds))))
    L.append("## Convergence: 2 identical jobs (vgg16) starting 2 ms apart\n")
    L.append("MLTCP-Reno and MLTCP-CUBIC at 1 Gbit/s; MLTCP-DCQCN at 10 Gbit/s with time scale 0.1 "
             "and a 0.2 ms gap. Predicted: iterations for the start gap d to pass 0.9 aT by the "
             "shift equation of docs/design.md (Reno's AIMD), with aT = isolated iteration time - "
             "compute time.\n")
    L.append("| slope | intercept | MLTCP-Reno interleaved at | predicted | mean ratio | "
             "MLTCP-CUBIC interleaved at | mean ratio | MLTCP-DCQCN interleaved at | mean ratio |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    never = lambda v: "never" if v is None else v
    for c in conv:
        L.append("| %.2f | %.2f | %s | %s | %.3f | %s | %.3f | %s | %.3f |" % (
            c["slope"] / 1024, c["intercept"] / 1024, never(c["measured"]), never(c["predicted"]),
            c["mean_ratio"], never(c["cubic_at"]), c["cubic_ratio"], never(c["dcqcn_at"]),
            c["dcqcn_ratio"]))
    L.append("\nSame jobs, other algorithms (default slope 1.5, intercept 0.25):\n")
    L.append("| cc | interleaved at | mean ratio | p99 ratio |")
    L.append("|---|---|---|---|")
    for js in ref:
        L.append("| %s | %s | %.3f | %.3f |" % (js["cc"], "never" if js["interleaved_at"] is None
                                                else js["interleaved_at"], js["mean_ratio"],
                                                js["p99_ratio"]))
    L.append("\n![mltcp timeline](img/sim-timeline-mltcp.png)\n![reno timeline](img/sim-timeline-reno.png)\n")
    for title, rows in (("Compatible mixes (sum of communication fractions < 1)", comp),
                        ("Incompatible mixes (sum > 1): MLTCP must do no harm", incomp)):
        L.append("## %s\n" % title)
        L.append("Dumbbell; Reno and CUBIC at 1 Gbit/s, DCQCN at 10 Gbit/s with time scale 0.1; "
                 "starts spread over 10 ms; speedup = base / MLTCP iteration time (median of %d "
                 "seeds; per seed in brackets) after a warm-up of iterations/5 (%s); "
                 "every job keeps running, and contending, until the slowest job has done its "
                 "iterations, and only each job's first iterations are recorded, so a job with a "
                 "short period never leaves the others to run alone in the measured iterations; "
                 "slowest job = the smallest per-job speedup (median of seeds); ratio = iteration "
                 "time / isolated; interleaved at: per seed, - = never.\n" % (
                     len(seeds), ", ".join("%d of %d" % (it // 5, it) for it in sorted(
                         {it for _, _, _, it in (COMPATIBLE if rows is comp else INCOMPATIBLE)}))))
        L.append("| mix | sum | base | mean speedup | p99 speedup | slowest job speedup | base mean ratio | MLTCP mean ratio | interleaved at (base; MLTCP) |")
        L.append("|---|---|---|---|---|---|---|---|---|")
        for x in rows:
            L.append("| %s (`%s`) | %.2f | %s | %.3f (%s) | %.3f | %.3f | %.3f | %.3f | %s; %s |" % (
                x["name"], x["mix"], x["frac"], x["base"], x["mean_speedup"],
                ", ".join("%.3f" % v for v in x["seed_speedups"]), x["p99_speedup"],
                x["slowest_speedup"],
                x["base_ratio"], x["ml_ratio"], fmt_inter(x["base_inter"]), fmt_inter(x["ml_inter"])))
        L.append("")
    L.append("![speedups](img/sim-speedup.png)\n")
    L.append("## Fairness: one vgg16 job and a long-lived bulk flow\n")
    L.append("Bulk share = bulk bytes / its max-min fair share (link shared equally with every job "
             "in its communication phase); the bulk flow runs the base algorithm. Median of seeds; "
             "link utilisation and the job's mean iteration ratio to isolated, medians too. "
             "Reno and CUBIC at 1 Gbit/s, DCQCN at 10 Gbit/s with time scale 0.1.\n")
    L.append("| cc | bulk share | per seed | link utilisation | job mean ratio |")
    L.append("|---|---|---|---|---|")
    for f in fair:
        L.append("| %s | %.3f | %s | %.3f | %.3f |" % (f["cc"], f["share"],
                 ", ".join("%.3f" % s for s in f["shares"]), f["util"], f["job_ratio"]))
    L.append("\n## Simulator speed\n")
    L.append("| run | wall (s) | events | events/s | simulated (s) |")
    L.append("|---|---|---|---|---|")
    L.append("| 8 jobs dumbbell 10 Gbit/s 50 iterations (mixed + isolated) | %.1f | %d | %.0f | %.3f |" % (
        eight_wall, eight["events"], eight["events_per_s"], eight["sim_s"]))
    for n, cc, js in scale:
        L.append("| %d jobs %s, leaf-spine 8x4, 100 Gbit/s, 30 iterations, time scale 0.005 | %.1f | %d | %.0f | %.3f |" % (
            n, cc, js["wall_s"], js["events"], js["events_per_s"], js["sim_s"]))
    L.append("\n## Commands\n")
    L.append("```")
    L.extend(sorted(set(r.log)))
    L.append("```")
    with open(os.path.join(docdir, "simulation-results.md"), "w") as f:
        f.write("\n".join(L) + "\n")
    print("wrote %s and %s/sim-*.png" % (os.path.join(docdir, "simulation-results.md"), img))


# (name, sim mix, host mix of tools/bench/interleave.py MIXES or None).  The
# host's two_identical is 2 x vgg16 and three_mixed resnet50 + bert_large +
# gpt2; the benchmark has no mix of the `testbed` profile (sim/sim.prof:
# 100 ms compute, 2.5 MB), so testbed:2 has no host counterpart.
VALIDATION_MIXES = [("2 jobs", "testbed:2", None), ("2x vgg16", "vgg16:2", "two_identical"),
                    ("3 jobs", "resnet50,gpt2,bert_large", "three_mixed")]
VALIDATION_CCS = ("reno", "mltcp", "cubic", "mltcp_cubic")
# The host testbed's settings (issue 5, docs/evaluation.md): 200 Mbit/s
# bottleneck, 32 KB queue, MTU 1500 with TSO/GSO off; profiles unscaled.
# Iterations and warm-up: make bench-interleave's defaults (30, 5), or the
# host session's when --host-summary is given.
TESTBED = ["--link-gbps", "0.2", "--mtu", "1500", "--queue-pkts", "21"]
TESTBED_ITERATIONS, TESTBED_WARMUP = 30, 5
# What a study takes from a row, and how close the simulator must come to the
# host for it.  Ratios near 1.0 agree trivially (1.106 is within 10% of
# 1.177, yet the slowdowns 0.106 and 0.177 differ by 40%), so the slowdown
# (mean ratio - 1) and the p99 slowdown (p99 ratio - 1) are compared: within
# SLOWDOWN_AGREEMENT of the host's, or within SLOWDOWN_FLOOR of an iteration
# time when both are that small (differences below 1% of an iteration do not
# change a study's conclusion; a relative band around a host slowdown of
# 0.007 would be narrower than one host timer tick).  Interleaving agrees
# when most runs interleave on both sides, or on neither, and, when both do,
# the median iterations differ by at most INTERLEAVE_AGREEMENT (one clean
# window of the metric, workload/metrics.h).
SLOWDOWN_AGREEMENT = 0.20
SLOWDOWN_FLOOR = 0.01
INTERLEAVE_AGREEMENT = 3


def slowdown_agrees(sim_ratio, host_ratio):
    """Slowdowns (ratio - 1) within SLOWDOWN_AGREEMENT of the host's or
    SLOWDOWN_FLOOR."""
    sim_sd, host_sd = sim_ratio - 1, host_ratio - 1
    return abs(sim_sd - host_sd) <= max(SLOWDOWN_AGREEMENT * abs(host_sd), SLOWDOWN_FLOOR)


def interleaving(runs):
    """Per-run interleaved_at values (None: never) -> (most interleave,
    median iteration of those that do or None)."""
    done = sorted(x for x in runs if x is not None)
    return 2 * len(done) > len(runs), (statistics.median(done) if done else None)


def interleaving_agrees(sim_runs, host_runs):
    sim_il, sim_at = interleaving(sim_runs)
    host_il, host_at = interleaving(host_runs)
    if sim_il != host_il:
        return False
    return not sim_il or abs(sim_at - host_at) <= INTERLEAVE_AGREEMENT


def compare_row(sim, host):
    """sim, host: {mean_ratio, p99_ratio (medians over runs), inter (per-run
    interleaved_at)} -> {slowdown, p99, interleave, all}: does each agree."""
    out = dict(slowdown=slowdown_agrees(sim["mean_ratio"], host["mean_ratio"]),
               p99=slowdown_agrees(sim["p99_ratio"], host["p99_ratio"]),
               interleave=interleaving_agrees(sim["inter"], host["inter"]))
    out["all"] = all(out.values())
    return out


def mix_profiles(mix):
    """'vgg16:2,gpt2' -> sorted list of profile names, one per job."""
    out = []
    for part in mix.split(","):
        name, _, n = part.partition(":")
        out += [name] * (int(n) if n else 1)
    return sorted(out)


def load_host_summary(path):
    """A `make bench-interleave` summary.json (tools/bench/interleave.py):
    'table' holds per 'mix/cc' the medians over repetitions (mean_ratio,
    p99_ratio = largest job's, interleaved_at = median iteration,
    interleaved_runs, reps); 'runs' the per-repetition results, whose jobs
    name their profiles; 'args' the session's options."""
    try:
        with open(path) as f:
            js = json.load(f)
        table, runs, args = js["table"], js["runs"], js["args"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit("run.py: --host-summary %s: not a bench-interleave summary.json (%s)" % (path, e))
    profiles = {}
    for run in runs:
        profiles.setdefault(run["mix"], sorted(j["profile"] for j in run["jobs"].values()))
    for _, m, hm in VALIDATION_MIXES:
        if hm is not None and hm in profiles and profiles[hm] != mix_profiles(m):
            sys.exit("run.py: --host-summary: host mix %s runs %s, not the simulator's %s" % (
                hm, ",".join(profiles[hm]), m))
    inter = {}
    for run in sorted(runs, key=lambda x: x.get("rep", 0)):
        inter.setdefault("%s/%s" % (run["mix"], run["cc"]), []).append(run["interleaved_at"])
    return dict(path=path, table=table, profiles=profiles, args=args, inter=inter)


def display_path(path):
    root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    full = os.path.abspath(path)
    return os.path.relpath(full, root) if full.startswith(root + os.sep) else full


def yes_no(ok):
    return "yes" if ok else "**no**"


def host_cells(host, hmix, cc, sim):
    """The host columns of one validation row and the comparison (None
    without a host counterpart).  sim: as compare_row's."""
    if host is None:
        return ["not measured here"] + ["-"] * 6, None
    if hmix is None:
        return ["no host counterpart"] + ["-"] * 6, None
    t = host["table"].get("%s/%s" % (hmix, cc))
    if t is None:
        return ["not in the host session"] + ["-"] * 6, None
    h = dict(mean_ratio=t["mean_ratio"], p99_ratio=t["p99_ratio"],
             inter=host["inter"].get("%s/%s" % (hmix, cc), []))
    c = compare_row(sim, h)
    return ["%.3f" % (h["mean_ratio"] - 1), yes_no(c["slowdown"]), "%.3f" % h["p99_ratio"],
            yes_no(c["p99"]), fmt_inter(h["inter"]), yes_no(c["interleave"]),
            yes_no(c["all"])], c


def validation(r, docdir, seeds, host=None):
    """The simulator's half of the validation against the host testbed (the
    same profiles and mixes at the testbed's rate and queue) and, with a
    host summary, the comparison."""
    iters, warmup = TESTBED_ITERATIONS, TESTBED_WARMUP
    if host is not None:
        iters = int(host["args"].get("iterations", TESTBED_ITERATIONS))
        warmup = int(host["args"].get("warmup", TESTBED_WARMUP))
    setting = TESTBED + ["--iterations", str(iters), "--warmup", str(warmup)]
    grid = [(n, m, cc, s) for n, m, _ in VALIDATION_MIXES for cc in VALIDATION_CCS for s in seeds]
    # --stop-when-done: like the host emulator, each job stops after its
    # iterations (these mixes' periods are alike, so little runs alone).
    res = r.many([["--cc", cc, "--profile-mix", m, "--seed", str(s), "--start-spread-ms", "10",
                   "--stop-when-done"] + setting for (_, m, cc, s) in grid])
    if host is None:
        src = ("The host column is to be filled from `make bench-interleave` (docs/evaluation.md) "
               "with `make sim-experiments SIM_HOST_SUMMARY=<session>/summary.json`")
    else:
        a = host["args"]
        src = ("Host columns: `make bench-interleave` session `%s` (%s repetitions, %s iterations, "
               "warm-up %s; host ratios: median over repetitions; host interleaved at: per "
               "repetition). Host mixes: %s" % (
                   display_path(host["path"]), a["reps"], a["iterations"], a["warmup"],
                   "; ".join("`%s` = %s" % (m, hm) for _, m, hm in VALIDATION_MIXES if hm)))
        if a.get("hints") or a.get("param"):
            src += (". Not like for like: the host session ran with %s, the simulator with "
                    "the core's defaults and no hints" % ", ".join(
                        (["hints"] if a.get("hints") else []) + list(a.get("param") or [])))
    L = ["# Validation of the simulator against the host testbed (generated)\n",
         "Generated by `make sim-experiments` (sim/experiments/run.py) on %s. Same profile file "
         "and mixes as the host testbed, at its 200 Mbit/s bottleneck, 21-packet (32 KB) queue "
         "and MTU 1500, %d iterations, warm-up %d, each job stopping after its iterations as on "
         "the host (`--stop-when-done`); ratio = mean (p99) iteration time / isolated mean "
         "with the same congestion control, slowdown = mean ratio - 1; mean ratio, p99 ratio "
         "(the largest job's) and interleaved at are the workload library's metrics on both "
         "sides (workload/metrics.h; the host through mltcp-metrics); simulator: median of "
         "seeds %s. %s. Agreement: slowdown and p99 slowdown within %d%% of the host's (or "
         "within %.2f of an iteration when both are smaller); interleaving: most runs "
         "interleave on both sides or on neither, and the median iterations differ by at "
         "most %d.\n" % (
             time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), iters, warmup,
             ",".join(map(str, seeds)), src, round(SLOWDOWN_AGREEMENT * 100), SLOWDOWN_FLOOR,
             INTERLEAVE_AGREEMENT),
         "| mix | cc | sim slowdown | host slowdown | slowdown agrees | sim p99 ratio | "
         "host p99 ratio | p99 agrees | sim interleaved at | host interleaved at | "
         "interleaving agrees | row agrees |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    agree = []
    for n, m, hm in VALIDATION_MIXES:
        for cc in VALIDATION_CCS:
            js = [j for (nn, mm, c, s), j in zip(grid, res) if nn == n and c == cc]
            sim = dict(mean_ratio=statistics.median(j["mean_ratio"] for j in js),
                       p99_ratio=statistics.median(j["p99_ratio"] for j in js),
                       inter=[j["interleaved_at"] for j in js])
            cells, c = host_cells(host, hm, cc, sim)
            if c is not None:
                agree.append(c)
            L.append("| %s (`%s`) | %s | %.3f | %s | %s | %.3f | %s | %s | %s |" % (
                n, m, cc, sim["mean_ratio"] - 1, cells[0], cells[1], sim["p99_ratio"],
                " | ".join(cells[2:4]), fmt_inter(sim["inter"]), " | ".join(cells[4:])))
    if agree:
        L.append("\nOf %d rows with a host counterpart: slowdown agrees in %d, p99 in %d, "
                 "interleaving in %d; all three in %d." % (
                     len(agree), sum(c["slowdown"] for c in agree), sum(c["p99"] for c in agree),
                     sum(c["interleave"] for c in agree), sum(c["all"] for c in agree)))
    L.append("\n```")
    L.extend(sorted(set(j["cmd"] for j in res)))
    L.append("```")
    with open(os.path.join(docdir, "simulation-validation.md"), "w") as f:
        f.write("\n".join(L) + "\n")
    print("wrote %s" % os.path.join(docdir, "simulation-validation.md"))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim", required=True, help="path to mltcp-sim")
    ap.add_argument("--docs", help="write results into this docs directory")
    ap.add_argument("--bench", action="store_true", help="bench-sim subset with RESULT lines")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--parallel", type=int, default=2, help="concurrent simulations")
    ap.add_argument("--no-scale", action="store_true", help="skip the 64/128-job runs")
    ap.add_argument("--validation-only", action="store_true",
                    help="with --docs: only the testbed-validation table")
    ap.add_argument("--host-summary", metavar="PATH",
                    help="with --docs: fill the validation table's host columns (host slowdown, "
                    "p99 ratio and interleaved at, and whether each agrees) from this `make "
                    "bench-interleave` summary.json (e.g. build/bench-interleave/<session>/"
                    "summary.json); the simulator then uses that session's iterations and "
                    "warm-up.  Sim mixes map to host mixes vgg16:2 = two_identical and "
                    "resnet50,gpt2,bert_large = three_mixed (checked against the profiles the "
                    "session ran); testbed:2 has none")
    a = ap.parse_args()
    if not os.access(a.sim, os.X_OK):
        sys.exit("run.py: %s is not an executable mltcp-sim (make sim)" % a.sim)
    if not a.docs and not a.bench:
        sys.exit("run.py: pass --docs DIR or --bench")
    if a.host_summary and not a.docs:
        sys.exit("run.py: --host-summary needs --docs")
    host = load_host_summary(a.host_summary) if a.host_summary else None
    with tempfile.TemporaryDirectory(prefix="mltcp-sim-") as tmp:
        r = Runner(a.sim, tmp, a.parallel)
        if a.bench:
            bench(r)
        if a.docs:
            seeds = list(range(1, a.seeds + 1))
            if not a.validation_only:
                docs(r, a.docs, seeds, a.no_scale)
            validation(r, a.docs, seeds, host)


if __name__ == "__main__":
    main()
