#!/usr/bin/python3
"""interleave_py_test.py - the benchmark's analysis (tools/bench/interleave.py
analyse) on the recorded CSVs of data/: its ratios, overlap and
interleaved_at come from mltcp-metrics, so they are the figures of
data/README.md, the ones workload_unit_tests checks in C++.
usage: interleave_py_test.py <mltcp-metrics> <data dir>"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "bench"))
import interleave as il  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    metrics, data = sys.argv[1:]
    il.set_metrics(metrics)
    il.MIXES["mltcp_test"] = ("two jobs of data/", [("a", "p"), ("b", "p")])
    rows = {j: il.read_csv(os.path.join(data, j + ".csv")) for j in ("a", "b")}
    res = il.analyse("mltcp_test", "reno", rows, {("p", "reno"): 200}, 1, data, {}, 0)
    want = {"mean_ratio": 1.15, "p99_ratio": 1.5, "overlap_mean": 0.2, "interleaved_at": 2,
            "mean_ratio_after": 1.0625, "p99_ratio_after": 1.5}
    bad = {k: res.get(k) for k, v in want.items() if res.get(k) is None or abs(res[k] - v) > 1e-9}
    if res["jobs"]["b"]["mean_ratio"] != 1.2 or res["jobs"]["a"]["profile"] != "p":
        bad["jobs"] = res["jobs"]
    if bad:
        sys.exit("FAIL: interleave.py analyse differs from data/README.md: %s" % bad)
    print("ok: interleave.py analyse = mltcp-metrics = data/README.md")


if __name__ == "__main__":
    main()
