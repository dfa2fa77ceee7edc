#!/usr/bin/python3
"""interleave_py_test.py - the benchmark's analysis (tools/bench/interleave.py
analyse) on the recorded CSVs of data/: its ratios, overlap and
interleaved_at come from mltcp-metrics, so they are the figures of
data/README.md, the ones workload_unit_tests checks in C++; a ring job's
loss counters summed over its ranks, the per-iteration file it writes, the
per-job congestion control of a partial-deployment mix and the targets'
verdict on it; the window guard's repairs per run.
usage: interleave_py_test.py <mltcp-metrics> <data dir>"""
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "bench"))
import interleave as il  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    metrics, src = sys.argv[1:]
    il.set_metrics(metrics)
    data = tempfile.mkdtemp(prefix="mltcp-interleave-py-")    # analyse writes into the run dir
    try:
        for f in os.listdir(src):
            shutil.copy(os.path.join(src, f), data)
        check(data)
    finally:
        shutil.rmtree(data)


def check(data):
    il.MIXES["mltcp_test"] = ("two jobs of data/", [("a", "p"), ("b", "p")])
    rows = {j: il.read_csv(os.path.join(data, j + ".csv")) for j in ("a", "b")}
    res = il.analyse("mltcp_test", "reno", rows, {("p", "reno"): 200}, 1, data, {}, 0)
    want = {"mean_ratio": 1.15, "p99_ratio": 1.5, "overlap_mean": 0.2, "interleaved_at": 2,
            "mean_ratio_after": 1.0625, "p99_ratio_after": 1.5}
    bad = {k: res.get(k) for k, v in want.items() if res.get(k) is None or abs(res[k] - v) > 1e-9}
    if res["jobs"]["b"]["mean_ratio"] != 1.2 or res["jobs"]["a"]["profile"] != "p":
        bad["jobs"] = res["jobs"]
    if res["losses"]["rto"] is not None or res["losses"]["rto_per_100_iter"] is not None:
        bad["losses of CSVs without counters"] = res["losses"]
    if bad:
        sys.exit("FAIL: interleave.py analyse differs from data/README.md: %s" % bad)
    print("ok: interleave.py analyse = mltcp-metrics = data/README.md")

    # A ring job (ring.csv, its rank ring.rank1.csv) with base:-jobs around
    # it: the job of "base:p" in an mltcp run uses reno and reno's baseline.
    il.MIXES["partial_test"] = ("partial", [("ring", "p"), ("a", "base:p")])
    rows = {j: il.read_csv(os.path.join(data, j + ".csv")) for j in ("ring", "a")}
    res = il.analyse("partial_test", "mltcp", rows, {("p", "mltcp"): 200, ("p", "reno"): 100},
                     1, data, {}, 0)
    lo = res["losses"]
    if (lo["rto"], lo["recoveries"], lo["spurious_rto"]) != (None, None, None) or \
            res["jobs"]["ring"]["losses"]["rto"] != 3 or \
            res["jobs"]["ring"]["losses"]["rto_per_100_iter"] != 60 or \
            [x[:2] for x in res["rto_iterations"]] != [("ring", 2), ("ring", 3)]:
        sys.exit("FAIL: ring losses (data/README.md: rto 3 in iterations 2 and 3; a.csv has "
                 "none, so the run's are unknown): %s %s" % (lo, res["rto_iterations"]))
    if res["jobs"]["a"]["cc"] != "reno" or res["jobs"]["a"]["mean_ratio"] != 2.2 or \
            res["jobs"]["ring"]["cc"] != "mltcp":
        sys.exit("FAIL: base:p job not on reno's baseline: %s" % res["jobs"])
    with open(os.path.join(data, "iterations.csv")) as f:
        lines = f.read().splitlines()
    if lines[0] != "job,cc,iteration,iter_ms,comm_ms,overlap,rto,recoveries,tlp,undo," \
                   "spurious_rto,window_repairs" or \
            lines[4] != "ring,mltcp,3,0.200,0.100,1.000,2,1,0,0,0," or \
            lines[7] != "a,reno,0,0.300,0.200,1.000,,,,,,":
        sys.exit("FAIL: iterations.csv: %s" % lines[:8])
    if il.mix_cc_profiles("partial_test", ["mltcp", "cubic"]) != {
            ("p", "mltcp"), ("p", "reno"), ("p", "cubic")}:
        sys.exit("FAIL: isolated baselines of partial_test")
    print("ok: ring losses over ranks, iterations.csv, base: jobs")

    # The partial target: each job against its ratio in the all-base run.
    def run(cc, ratios):
        return {"mix": "partial", "cc": cc, "mean_ratio": 1, "p99_ratio": 1, "overlap_mean": 0,
                "interleaved_at": None, "losses": {"rto": 0, **{
                    c + "_per_100_iter": 0 for c in il.LOSS_COUNTERS}},
                "jobs": {j: {"mean_ratio": r, "mean_us": 1, "p99_us": 1,
                             "cc": "reno" if j == "base" or cc == "reno" else cc}
                         for j, r in ratios.items()}}
    for ml_base, want in ((1.03, "met"), (1.031, "MISSED")):
        table = il.summarise([run("reno", {"ml1": 1.2, "base": 1.0}),
                              run("mltcp", {"ml1": 1.0, "base": ml_base})],
                             ["reno", "mltcp"], ["partial"])
        got = [t for t in il.check_targets(table, {}, show=lambda _: None)
               if t.startswith("TARGET partial mltcp every job")]
        if len(got) != 1 or got[0].split()[8] != want:
            sys.exit("FAIL: partial target with base job x%s: %s (want %s)" % (ml_base, got, want))
    print("ok: partial target at 1.03 x the all-base ratio")

    # The guard's repairs: read from mltcpctl's exposition, summed over the
    # repetitions in the table, unknown when one run has none.
    fake = os.path.join(data, "mltcpctl")
    with open(fake, "w") as f:
        f.write("#!/bin/sh\n[ \"$*\" = \"stats --prometheus\" ] || exit 2\n"
                "echo 'mltcp_window_repairs_totals 9'\necho 'mltcp_window_repairs_total 27'\n")
    os.chmod(fake, 0o755)
    if il.Mltcp(fake, []).window_repairs() != 27 or \
            il.Mltcp("/bin/false", []).window_repairs() is not None or \
            il.Mltcp(fake, []).counting_repairs(lambda: "rows") != ("rows", 0) or \
            il.Mltcp("/bin/false", []).counting_repairs(lambda: "rows") != ("rows", None):
        sys.exit("FAIL: Mltcp.window_repairs from mltcpctl stats --prometheus")
    runs = [dict(run("mltcp", {"ml1": 1.0}), window_repairs=n) for n in (3, 0, 4)]
    table = il.summarise(runs, ["mltcp"], ["partial"])
    text = il.print_table(table, ["mltcp"], ["partial"], out=lambda _: None)
    if table[("partial", "mltcp")]["window_repairs"] != 7 or \
            not text.splitlines()[1].endswith("  7") or \
            " window_repairs=3 " not in il.loss_fields(dict(runs[0], rto_iterations=[])) + " ":
        sys.exit("FAIL: window repairs in the table and RESULT fields: %s" % text)
    if il.summarise(runs + [run("mltcp", {"ml1": 1.0})], ["mltcp"],
                    ["partial"])[("partial", "mltcp")]["window_repairs"] is not None:
        sys.exit("FAIL: a run without a repair count must make the sum unknown")
    print("ok: window repairs read, summed and shown")

    # Per phase (window_repairs, data/README.md's rep.csv): RTOs in phases
    # without a repair are counted apart, in the RESULT fields and table, and
    # the p99 ratio is also given over the iterations without one.
    il.MIXES["repairs_test"] = ("one job with repairs", [("rep", "p")])
    rows = {"rep": il.read_csv(os.path.join(data, "rep.csv"))}
    res = il.analyse("repairs_test", "mltcp", rows, {("p", "mltcp"): 200}, 1, data, {}, 0)
    lo = res["losses"]
    fields = il.loss_fields(dict(res, rto_iterations=[])) + " "
    if (lo["rto"], lo["window_repairs"], lo["rto_unrepaired"]) != (3, 3, 1) or \
            lo["rto_unrepaired_per_100_iter"] != 20 or \
            " rto_unrepaired=1 rto_unrepaired_per_100_iter=20.0 " not in fields or \
            " window_repairs_per_100_iter=60.0 " not in fields or \
            (res["p99_ratio"], res["p99_ratio_unrepaired"]) != (3.0, 1.5) or \
            " p99_ratio_unrepaired=1.500 " not in fields:
        sys.exit("FAIL: RTOs and p99 without a window repair (rep.csv: rto 3, 1 of them in a "
                 "phase without a repair; p99 3, 1.5 without): %s | %s" % (lo, fields))
    table = il.summarise([dict(res, mix="repairs_test", cc="mltcp")], ["mltcp"],
                         ["repairs_test"])
    text = il.print_table(table, ["mltcp"], ["repairs_test"], out=lambda _: None)
    if text.splitlines()[1].split()[10:12] != ["60.0", "20.0"]:
        sys.exit("FAIL: rto/100 and rto_u/100 columns: %s" % text)
    print("ok: RTOs in phases without a window repair")

    # Periods: job q (period 190 ms, phase 40 ms) must be slowed to p's 200
    # ms by sharing the link; 10 of its 50 ms is 0.20 of the phase, no
    # schedule without contention.  At 198 ms it is 2 of 42 ms.
    il.MIXES["periods_test"] = ("compatible", [("a", "p"), ("b", "q"), ("c", "base:q")])
    for q_period, want in ((190000, "NO schedule"), (198000, "a schedule without")):
        phases = {("p", "mltcp"): (200000, 60000), ("q", "mltcp"): (q_period, 40000),
                  ("q", "reno"): (q_period, 40000)}
        got = il.period_lines(phases, ["periods_test", "mltcp_test"], ["mltcp"],
                              show=lambda _: None)
        if len(got) != 1 or want not in got[0] or not got[0].startswith(
                "PERIODS periods_test mltcp: alone a 200.0 b %.1f c %.1f ms;" % (
                    q_period / 1e3, q_period / 1e3)):
            sys.exit("FAIL: period_lines with q at %d us: %s (want '%s')" % (q_period, got, want))
    print("ok: period_lines tells a mix without a contention-free schedule")


if __name__ == "__main__":
    main()
