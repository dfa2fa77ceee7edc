#!/usr/bin/python3
"""plots.py - pictures of a bench-interleave session (interleave.py output):

  plots/timeline-<mix>-<cc>-r<rep>.png|svg  per run: communication phases per
      job over time, per-job received throughput, iteration time / isolated
  plots/overview.png|svg  all mixes: median mean ratio per congestion control
  plots/compare-<mix>.png|svg  per mix: median mean and p99 ratio per
      congestion control, with the spread over repetitions

usage: /usr/bin/python3 plots.py <session dir>   (Debian's python3-matplotlib)
"""
import csv
import json
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"]
SMOOTH_BINS = 5     # throughput curve: moving average over 5 x 10 ms


def read_rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def timeline(run, out_base):
    d = run["dir"]
    jobs = [j for j in run["jobs"]]
    bulk = [f[3:-4] for f in os.listdir(d) if f.startswith("rx-") and f[3:-4] not in jobs]
    fig, (ax1, ax2, ax3) = plt.subplots(3, 1, figsize=(11, 7.5),
                                        gridspec_kw={"height_ratios": [1.2, 1.4, 1.2]})
    fig.suptitle("%s, %s, repetition %d: mean ratio %.2f, p99 ratio %.2f, interleaved at %s" % (
        run["mix"], run["cc"], run["rep"], run["mean_ratio"], run["p99_ratio"],
        "none" if run["interleaved_at"] is None else "iteration %d" % run["interleaved_at"]))
    for i, j in enumerate(jobs):
        rows = read_rows(os.path.join(d, j + ".csv"))
        c = COLORS[i % len(COLORS)]
        bars = [(int(r["comm_start_us"]) / 1e6, (int(r["comm_end_us"]) - int(r["comm_start_us"])) / 1e6)
                for r in rows]
        ax1.broken_barh(bars, (i - 0.4, 0.8), facecolors=c)
        iso = run["jobs"][j]["iso_mean_us"]
        ax3.plot([int(r["iteration"]) for r in rows],
                 [(int(r["end_us"]) - int(r["start_us"])) / iso for r in rows],
                 marker="o", ms=3, color=c, label=j)
    ax1.set_yticks(range(len(jobs)))
    ax1.set_yticklabels(jobs)
    ax1.set_xlabel("time (s): bars are communication phases")
    for i, j in enumerate(jobs + bulk):
        path = os.path.join(d, "rx-%s.csv" % j)
        if not os.path.exists(path):
            continue
        rows = read_rows(path)
        t = [int(r["bin_start_us"]) / 1e6 for r in rows]
        mbps = [int(r["bytes"]) * 8 / 1e4 for r in rows]   # 10 ms bins -> Mbit/s
        sm = [sum(mbps[max(0, k - SMOOTH_BINS + 1):k + 1]) / len(mbps[max(0, k - SMOOTH_BINS + 1):k + 1])
              for k in range(len(mbps))]
        ax2.plot(t, sm, lw=1, color=COLORS[i % len(COLORS)] if j in jobs else "gray",
                 label=j)
    ax2.set_ylabel("received Mbit/s")
    ax2.set_xlabel("time (s), 50 ms moving average")
    if ax2.get_lines():
        ax2.legend(loc="upper right", fontsize=8)
    else:   # e.g. the PyTorch benchmark, whose receivers keep no byte bins
        ax2.text(0.5, 0.5, "no receive-side throughput samples in this run",
                 transform=ax2.transAxes, ha="center", va="center", color="gray")
    ax2.set_xlim(ax1.get_xlim())
    ax3.axhline(1.0, color="black", lw=0.8, ls="--")
    ax3.set_ylabel("iteration time /\nisolated")
    ax3.set_xlabel("iteration")
    ax3.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(out_base + "." + ext, dpi=90)
    plt.close(fig)


def compare(mix, runs, ccs, out_base):
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.38
    for k, (key, label) in enumerate((("mean_ratio", "mean"), ("p99_ratio", "p99"))):
        meds, lo, hi = [], [], []
        for cc in ccs:
            v = sorted(r[key] for r in runs if r["cc"] == cc)
            m = v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2
            meds.append(m)
            lo.append(m - v[0])
            hi.append(v[-1] - m)
        xs = [i + (k - 0.5) * width for i in range(len(ccs))]
        ax.bar(xs, meds, width, yerr=[lo, hi], capsize=3, label=label + " ratio (median, min-max)",
               color=["#4c72b0", "#dd8452"][k])
    ax.axhline(1.0, color="black", lw=0.8, ls="--")
    ax.set_xticks(range(len(ccs)))
    ax.set_xticklabels(ccs)
    ax.set_ylabel("iteration time / isolated")
    ax.set_title("%s: %d repetitions" % (mix, max(r["rep"] for r in runs)))
    ax.legend(fontsize=8)
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(out_base + "." + ext, dpi=90)
    plt.close(fig)


def overview(runs, ccs, out_base):
    """All mixes side by side: median mean ratio per congestion control."""
    mixes = list(dict.fromkeys(r["mix"] for r in runs))
    fig, ax = plt.subplots(figsize=(12, 4.2))
    width = 0.8 / max(1, len(ccs))
    for k, cc in enumerate(ccs):
        meds = []
        for mix in mixes:
            v = sorted(r["mean_ratio"] for r in runs if r["mix"] == mix and r["cc"] == cc)
            meds.append(v[len(v) // 2] if len(v) % 2 else
                        (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2 if v else 0)
        ax.bar([i + (k - (len(ccs) - 1) / 2) * width for i in range(len(mixes))], meds, width,
               label=cc, color=COLORS[k % len(COLORS)])
    ax.axhline(1.0, color="black", lw=0.8, ls="--")
    ax.set_xticks(range(len(mixes)))
    ax.set_xticklabels(mixes)
    ax.set_ylabel("mean iteration time / isolated\n(median over repetitions)")
    ax.set_ylim(0.8, None)
    ax.legend(ncol=len(ccs), fontsize=8)
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(out_base + "." + ext, dpi=90)
    plt.close(fig)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    session = sys.argv[1]
    with open(os.path.join(session, "summary.json")) as f:
        summary = json.load(f)
    out = os.path.join(session, "plots")
    os.makedirs(out, exist_ok=True)
    runs = summary["runs"]
    ccs = summary["args"]["ccs"].split()
    for r in runs:
        timeline(r, os.path.join(out, "timeline-%s-%s-r%d" % (r["mix"], r["cc"], r["rep"])))
    overview(runs, [c for c in ccs if any(r["cc"] == c for r in runs)],
             os.path.join(out, "overview"))
    for mix in dict.fromkeys(r["mix"] for r in runs):
        mr = [r for r in runs if r["mix"] == mix]
        compare(mix, mr, [c for c in ccs if any(r["cc"] == c for r in mr)],
                os.path.join(out, "compare-%s" % mix))


if __name__ == "__main__":
    main()
