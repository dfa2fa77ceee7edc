#!/usr/bin/python3
"""interleave_vm.py - make bench-interleave-vm: the interleaving benchmark with
the kernel module (tcp_mltcp.ko) inside the VM rig (tests/vm/run.sh: Debian's
6.1 kernel under qemu TCG), with a netem RTT, which this host does not have.

The guest (tests/vm/guest/interleave.sh) builds a dumbbell of namespaces (two
senders, a router with a tbf bottleneck, a receiver with netem delay on its
egress; --topology bridged: a bridge instead, as before 5 December, which
leaves the tbf's queue in the senders' TCP small queues budget) and runs, per
repetition and congestion control, each job alone and then two identical jobs
(mltcp-emu, profile in tests/vm/interleave.prof) starting at the same instant.
It returns every CSV as a base64 tar.gz on the serial console; this script
decodes it into the session directory and
analyses it with interleave.py's own functions (analyse, summarise,
print_table: overlap, interleaved_at, mean/p99 ratios), so the figures mean
exactly what they mean for make bench-interleave.  Isolated baseline of a
run: the mean iteration time (after the warm-up) of its repetition's two
alone-runs with the same congestion control, which ran just before it
(--baseline session: over all of the session's alone-runs, as interleave.py
does; TCG's speed drifts with the host's load, hence the default).

Prints one "RESULT mix=two_identical_vm cc=..." line per run, a table and
TARGET lines (issue 17's VM target per variant; whether its base reached
1.25, i.e. the rig shows the problem);
writes <out>/summary.json, table.txt, console.log, runs/, isolated/, plots/.
qemu is a plain child process: nothing on the host needs cleaning up.

  interleave_vm.py --out DIR --emu MLTCP_EMU --ko TCP_MLTCP_KO --vmtool VMTOOL [...]
  interleave_vm.py --out DIR --from-log CONSOLE_LOG   (analyse a kept log)
  interleave_vm.py --out DIR --report                 (re-analyse DIR's CSVs)
"""
import argparse
import base64
import hashlib
import io
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import interleave as il  # noqa: E402  (the analysis of make bench-interleave)

MIX = "two_identical_vm"
JOBS = ("a", "b")
RUN_SH = os.path.join(ROOT, "tests", "vm", "run.sh")
GUEST = os.path.join(ROOT, "tests", "vm", "guest", "interleave.sh")
PROFILES = os.path.join(ROOT, "tests", "vm", "interleave.prof")
VM_NAME = "bench-interleave-vm"


def log(msg):
    print(msg, flush=True)


def die(msg, code=1):
    print("bench-interleave-vm: " + msg, file=sys.stderr, flush=True)
    sys.exit(code)


def register_mix(profile):
    """The VM mix in interleave.py's table of mixes (at run time only, so that
    make bench-interleave does not list it)."""
    il.MIXES[MIX] = ("compatible", [(j, profile) for j in JOBS])


# ------------------------------------------------------------ the VM

def guest_conf(args):
    conf = {
        "IL_RATE": args.rate, "IL_BURST": args.burst, "IL_LIMIT": args.limit,
        "IL_DELAY": args.delay, "IL_CCS": " ".join(args.ccs.split()),
        "IL_REPS": args.reps, "IL_ITERATIONS": args.iterations,
        "IL_ISO_ITERATIONS": args.iso_iterations, "IL_WARMUP": args.warmup,
        "IL_PROFILE": args.profile, "IL_MIX": MIX, "IL_CALIBRATE": args.calibrate,
        "IL_CALIB_BYTES": args.calib_bytes, "IL_CALIB_NETS": args.calib_nets,
        "IL_PARAMS": " ".join(args.param), "IL_CALIB_CCS": args.calib_ccs,
        "IL_CALIB_PAIRS": args.calib_pairs, "IL_ONLY_CALIBRATE": int(args.only_calibrate),
        "IL_TOPOLOGY": args.topology,
    }
    return "".join("%s=%s\n" % (k, shlex.quote(str(v))) for k, v in conf.items())


def default_timeout(args):
    """Boot, calibration and archive ~150 s, then per run ~4 s of start-up
    plus ~0.5 s per iteration (0.2-0.3 s measured, TCG speed varies)."""
    n_cc = len(args.ccs.split())
    per_cc = 3 * 4 + 0.5 * (2 * args.iso_iterations + args.iterations)
    return int(150 + args.reps * n_cc * per_cc)


def boot(args):
    for path, what in ((args.emu, "mltcp-emu (--emu)"), (args.ko, "tcp_mltcp.ko (--ko)"),
                       (args.vmtool, "mltcp_vmtool (--vmtool)")):
        if not path or not os.path.exists(path):
            die("%s not found at %r (make bench-interleave-vm builds them)" % (what, path), 2)
    r = subprocess.run([args.emu, "profiles", "--profile-file", args.profiles],
                       capture_output=True, text=True)
    if r.returncode != 0:
        die(r.stderr.strip(), 2)
    if not re.search(r"^%s\s" % re.escape(args.profile), r.stdout, re.M):
        die("profile %s not in %s" % (args.profile, args.profiles), 2)
    conf = os.path.join(args.out, "il.conf")
    with open(conf, "w") as f:
        f.write(guest_conf(args))
    shutil.copy(args.profiles, os.path.join(args.out, "il.prof"))
    timeout = args.timeout or default_timeout(args)
    cmd = [RUN_SH, "--name", VM_NAME, "--timeout", str(timeout), "--ko", args.ko,
           "--add", args.vmtool, "--add", args.emu + ":/mltcp/mltcp-emu",
           "--add", conf + ":/mltcp/il.conf", "--add", args.profiles + ":/mltcp/il.prof"]
    if args.ethtool and os.path.exists(args.ethtool):
        cmd += ["--add", args.ethtool + ":/usr/sbin/ethtool"]
    cmd.append(GUEST)
    build = os.environ.get("BUILD", os.path.join(ROOT, "build"))
    console = os.path.join(build, "vm", VM_NAME + ".log")
    if os.path.exists(console):
        os.remove(console)      # never analyse an earlier boot's console
    log("bench-interleave-vm: %s" % " ".join(shlex.quote(c) for c in cmd))
    rc = subprocess.call(cmd)
    if os.path.exists(console):
        shutil.copy(console, os.path.join(args.out, "console.log"))
    return rc


def extract(console, out):
    """Decode the guest's archive from the console log into out/."""
    with open(console, errors="replace") as f:
        lines = f.read().splitlines()
    begin = [i for i, l in enumerate(lines) if l.startswith("MLTCP-VM-ARCHIVE-BEGIN")]
    if not begin:
        die("no MLTCP-VM-ARCHIVE-BEGIN in %s (guest did not finish?)" % console)
    head = dict(kv.split("=", 1) for kv in lines[begin[-1]].split()[1:])
    body = []
    for l in lines[begin[-1] + 1:]:
        if l.startswith("MLTCP-VM-ARCHIVE-END"):
            break
        if re.fullmatch(r"[A-Za-z0-9+/=]+", l.strip()):
            body.append(l.strip())
    else:
        die("archive in %s is not terminated (guest killed while printing it?)" % console)
    data = base64.b64decode("".join(body))
    if hashlib.md5(data).hexdigest() != head.get("md5"):
        die("archive checksum mismatch (%d bytes, expected %s bytes md5 %s): console "
            "output mixed into it?" % (len(data), head.get("bytes"), head.get("md5")))
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for m in tar.getmembers():
            name = os.path.normpath(m.name)
            if name == "il" or not name.startswith("il/") or ".." in name.split("/"):
                continue
            if not (m.isfile() or m.isdir()):
                continue
            dest = os.path.join(out, name[3:])
            if m.isdir():
                os.makedirs(dest, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                with tar.extractfile(m) as src, open(dest, "wb") as dst:
                    shutil.copyfileobj(src, dst)
    log("bench-interleave-vm: %d bytes of results from the guest, checksum ok" % len(data))


# ------------------------------------------------------------ analysis

def read_rows(path):
    return il.read_csv(path) if os.path.exists(path) else []


def tcp_counters(rundir, job):
    """Deltas of the job's sender namespace's TCP counters over the run
    (tcpstat-<job>.before/.after: /proc/net/snmp + netstat in the guest)."""
    def parse(path):
        vals, lines = {}, open(path).read().splitlines()
        for head, val in zip(lines[0::2], lines[1::2]):
            kind, names = head.split(":", 1)
            for k, v in zip(names.split(), val.split(":", 1)[1].split()):
                vals[kind + "." + k] = int(v)
        return vals
    paths = [os.path.join(rundir, "tcpstat-%s.%s" % (job, w)) for w in ("before", "after")]
    if not all(os.path.exists(p) for p in paths):
        return None
    b, a = parse(paths[0]), parse(paths[1])
    return {"retrans_segs": a["Tcp.RetransSegs"] - b["Tcp.RetransSegs"],
            "out_segs": a["Tcp.OutSegs"] - b["Tcp.OutSegs"],
            "timeouts": a.get("TcpExt.TCPTimeouts", 0) - b.get("TcpExt.TCPTimeouts", 0)}


def isolated(out, ccs, warmup):
    """{cc: {"mean_us", "p99_us", "runs": [(rep, job, mean_us)],
    "rep_mean_us": {rep: mean_us}}} from isolated/<cc>-r<rep>-<job>/: over
    the whole session and per repetition (that repetition's alone-runs)."""
    res = {}
    base = os.path.join(out, "isolated")
    for cc in ccs:
        times, runs, per_rep = [], [], {}
        for d in sorted(os.listdir(base)) if os.path.isdir(base) else []:
            m = re.fullmatch(r"%s-r(\d+)-(\w+)" % re.escape(cc), d)
            if not m:
                continue
            rows = read_rows(os.path.join(base, d, m.group(2) + ".csv"))
            t = [r["end_us"] - r["start_us"] for r in rows][warmup:]
            if t:
                times += t
                per_rep.setdefault(int(m.group(1)), []).extend(t)
                runs.append((int(m.group(1)), m.group(2), statistics.mean(t)))
        if times:
            res[cc] = {"mean_us": statistics.mean(times), "p99_us": il.p99(times),
                       "runs": runs,
                       "rep_mean_us": {r: statistics.mean(t) for r, t in per_rep.items()}}
    return res


def analyse_session(out, meta, ccs, reps, warmup, profile, elapsed, plots=True,
                    baseline="rep"):
    register_mix(profile)
    iso_runs = isolated(out, ccs, warmup)
    iso = {(profile, cc): v["mean_us"] for cc, v in iso_runs.items()}
    log("baseline: %s" % ("each repetition's own alone-runs of the congestion control (the "
                          "~10 s before its pair run)" if baseline == "rep" else
                          "all alone-runs of the congestion control in the session"))
    for cc in ccs:
        v = iso_runs.get(cc)
        if v:
            log("isolated %-12s mean %.1f ms p99 %.1f ms (%d alone-runs: %s ms)" % (
                cc, v["mean_us"] / 1e3, v["p99_us"] / 1e3, len(v["runs"]),
                " ".join("%.1f" % (x[2] / 1e3) for x in v["runs"])))
        else:
            log("isolated %-12s MISSING (no alone-run finished)" % cc)
    results, missing = [], []
    for rep in range(1, reps + 1):
        for cc in ccs:
            rundir = os.path.join(out, "runs", "%s-%s-r%d" % (MIX, cc, rep))
            rows = {j: read_rows(os.path.join(rundir, j + ".csv")) for j in JOBS}
            if (profile, cc) not in iso or not all(len(r) > warmup for r in rows.values()):
                missing.append("%s r%d" % (cc, rep))
                continue
            base = dict(iso)
            rep_iso = iso_runs[cc]["rep_mean_us"].get(rep)
            if baseline == "rep" and rep_iso:
                base[(profile, cc)] = rep_iso
            res = il.analyse(MIX, cc, rows, base, warmup, rundir, {}, 0)
            res["rep"] = rep
            res["dir"] = rundir
            tcp = {j: tcp_counters(rundir, j) for j in JOBS}
            if all(tcp.values()):
                res["tcp"] = tcp
            results.append(res)
            with open(os.path.join(rundir, "result.json"), "w") as f:
                json.dump(res, f, indent=1)
            extra = ""
            if res.get("p99_ratio_after") is not None:
                extra = " p99_ratio_after_il=%.3f" % res["p99_ratio_after"]
            if res.get("tcp"):
                extra += " retrans=%d rto=%d" % (sum(t["retrans_segs"] for t in tcp.values()),
                                                 sum(t["timeouts"] for t in tcp.values()))
            # Per communication phase, from each sender namespace's counters
            # (mltcp-emu's CSV, as on the host testbed).
            extra += " " + il.loss_fields(res)
            log("RESULT mix=%s cc=%s mean_ratio=%.3f p99_ratio=%.3f interleaved_at=%s"
                " rep=%d overlap=%.2f%s" % (MIX, cc, res["mean_ratio"], res["p99_ratio"],
                                            il.fmt_iter(res["interleaved_at"]), rep,
                                            res["overlap_mean"], extra))
    if missing:
        log("bench-interleave-vm: runs missing (failed in the guest): %s" % ", ".join(missing))
    table = il.summarise(results, ccs, [MIX])
    log("\nmedians over %d repetitions (kernel module in the VM, %s, tbf %s, netem %s; %.0f s):" % (
        reps, meta.get("topology", "bridged"), meta.get("rate"), meta.get("delay"), elapsed))
    text = il.print_table(table, ccs, [MIX])
    # Absolute times too: TCG's speed moves both the baseline and the runs.
    lines = ["", "%-12s %9s %13s %9s %9s" % ("cc", "alone_ms", "alone_runs", "pair_ms",
                                             "pair_p99")]
    for cc in ccs:
        t = table.get((MIX, cc))
        if t and cc in iso_runs:
            ms = [x[2] / 1e3 for x in iso_runs[cc]["runs"]]
            lines.append("%-12s %9.1f %13s %9.1f %9.1f" % (
                cc, iso_runs[cc]["mean_us"] / 1e3, "%.0f-%.0f" % (min(ms), max(ms)),
                t["mean_us"] / 1e3, t["p99_us"] / 1e3))
    lines.append("(alone: mean over the session's alone-runs, range of their means; pair: "
                 "median over repetitions of the jobs' mean and largest p99)")
    log("\n".join(lines))
    text += "\n" + "\n".join(lines)
    targets = vm_targets(table)
    for line in targets:
        log(line)
    text += "\n" + "\n".join(targets)
    summary = {
        "args": dict(meta, mixes=MIX, ccs=" ".join(ccs), reps=reps, warmup=warmup,
                     bulk_seconds=0, profile=profile, baseline=baseline),
        "isolated_us": {"%s/%s" % k: v for k, v in iso.items()},
        "isolated_runs": iso_runs, "bulk_isolated_Bps": {}, "runs": results,
        "table": {"%s/%s" % k: v for k, v in table.items()}, "missing": missing,
        "elapsed_s": elapsed,
    }
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    with open(os.path.join(out, "table.txt"), "w") as f:
        f.write(text + "\n")
    if plots and results:
        r = subprocess.run([sys.executable, os.path.join(HERE, "plots.py"), out])
        if r.returncode == 0:
            log("pictures: %s/plots/ (timeline-%s-<cc>-r<rep>.png|svg, compare-%s.png|svg)"
                % (out, MIX, MIX))
        else:
            log("bench-interleave-vm: plotting failed (python3-matplotlib?)")
    return results, missing


# Issue 17's target for the kernel module at a real RTT: both variants at a
# mean ratio of at most VM_MEAN_MAX and interleaved within VM_CONVERGE_BY
# iterations in at least interleave.py's CONVERGED_RUNS of the runs; and, as
# on the host testbed, whether the rig shows the problem at all (the base at
# least VM_BASE_SHOWS_MIN).
VM_MEAN_MAX = 1.05
VM_CONVERGE_BY = 10
VM_BASE_SHOWS_MIN = 1.25


def vm_targets(table):
    """TARGET lines, as interleave.py's check_targets writes them."""
    out = []
    for ml, base in il.BASE_OF.items():
        a, b = table.get((MIX, ml)), table.get((MIX, base))
        if a:
            at = a["interleaved_runs_at"]
            early = sum(1 for x in at if x is not None and x <= VM_CONVERGE_BY)
            out.append(il.target_line(
                "%s %s mean<=%.2f il<=%d in %d%% of runs" % (
                    MIX, ml, VM_MEAN_MAX, VM_CONVERGE_BY, round(il.CONVERGED_RUNS * 100)),
                a["mean_ratio"] <= VM_MEAN_MAX and early >= il.CONVERGED_RUNS * a["reps"],
                "mean %.3f, %d of %d runs (interleaved_at %s)" % (
                    a["mean_ratio"], early, a["reps"], " ".join(il.fmt_iter(x) for x in at))))
        if b:
            out.append(il.target_line(
                "%s %s mean>=%.2f (the rig shows it)" % (MIX, base, VM_BASE_SHOWS_MIN),
                b["mean_ratio"] >= VM_BASE_SHOWS_MIN, "mean %.3f" % b["mean_ratio"]))
    return out


def source_state(ko):
    """Which module was measured: git HEAD, local changes under core/ and
    kmod/ (the module is built from the working tree), the .ko's sha256."""
    st = {}
    try:
        git = ["git", "-C", ROOT]
        st["git_head"] = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True,
                                        text=True).stdout.strip()
        diff = subprocess.run(git + ["diff", "HEAD", "--", "core", "kmod"],
                              capture_output=True, text=True).stdout
        st["core_kmod_changes"] = subprocess.run(
            git + ["diff", "HEAD", "--stat", "--", "core", "kmod"], capture_output=True,
            text=True).stdout.strip().splitlines()[-1:] if diff else []
        st["core_kmod_diff_sha256"] = hashlib.sha256(diff.encode()).hexdigest() if diff else ""
    except OSError:
        pass
    if ko and os.path.exists(ko):
        with open(ko, "rb") as f:
            st["ko_sha256"] = hashlib.sha256(f.read()).hexdigest()
    return st


def guest_meta(out):
    """Calibration lines of the guest (calib.txt) as a dict, for summary.json."""
    meta = {}
    path = os.path.join(out, "calib.txt")
    if os.path.exists(path):
        with open(path) as f:
            meta["calib"] = [l.strip() for l in f if l.strip()]
    return meta


def headroom_check(meta, rate):
    """The tbf must be the bottleneck, not the emulated CPU: warn when the
    guest moved less than 3x the tbf rate without it (host busy; qemu runs
    under nice, so other work on the host starves it and every figure of the
    session then measures TCG, not congestion control)."""
    m = re.match(r"([\d.]+)mbit$", rate)
    for l in meta.get("calib", []):
        if l.startswith("calib rate=none") and m:
            got = [float(x) for x in re.findall(r"_mbps=([\d.]+)", l)]
            if got and min(got) < 3 * float(m.group(1)):
                log("bench-interleave-vm: CAUTION: without the tbf the guest moved only %.0f "
                    "Mbit/s (< 3 x %s): the host was busy, TCG's speed may have limited "
                    "these runs" % (min(got), rate))
                meta["cpu_limited"] = True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="session directory")
    ap.add_argument("--emu", default="", help="mltcp-emu binary (copied into the guest)")
    ap.add_argument("--metrics", default=il.METRICS,
                    help="mltcp-metrics binary, the runs' metrics (default %(default)s)")
    ap.add_argument("--ko", default="", help="tcp_mltcp.ko built for Debian's kernel")
    ap.add_argument("--vmtool", default="", help="mltcp_vmtool (static)")
    ap.add_argument("--ethtool", default=shutil.which("ethtool") or "/usr/sbin/ethtool")
    ap.add_argument("--profiles", default=PROFILES, help="profile file (tests/vm/interleave.prof)")
    ap.add_argument("--profile", default="vm_vgg", help="profile of both jobs")
    ap.add_argument("--ccs", default="reno cubic mltcp mltcp_cubic")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=30, help="iterations per job in a pair run")
    ap.add_argument("--iso-iterations", type=int, default=15, help="iterations of an alone-run")
    ap.add_argument("--warmup", type=int, default=5, help="first iterations left out")
    ap.add_argument("--rate", default="25mbit", help="bottleneck tbf rate")
    ap.add_argument("--burst", default="8kb", help="tbf burst")
    ap.add_argument("--limit", default="16kb", help="tbf queue")
    ap.add_argument("--delay", default="5ms", help="netem delay on the receiver's egress")
    ap.add_argument("--topology", choices=("routed", "bridged"), default="routed",
                    help="routed: the middle namespace forwards at IP, so a packet leaves its "
                         "sender's TCP small queues budget before the tbf, as at a switch; "
                         "bridged: it stays in it up to the receiver (tests/vm/guest/interleave.sh)")
    ap.add_argument("--param", action="append", default=[],
                    help="module parameter k=v set in the guest before the runs (repeatable), "
                         "e.g. slope=2048")
    ap.add_argument("--timeout", type=int, default=0,
                    help="VM hard limit in s (default: from reps, ccs and iterations)")
    ap.add_argument("--calibrate", default="",
                    help="also measure bulk goodput at these tbf rates first, e.g. '20mbit 40mbit'")
    ap.add_argument("--calib-bytes", default="",
                    help="calibration: a job alone and pairs with these bytes[/compute_us] (e.g. '150k 450k/250000')")
    ap.add_argument("--calib-nets", default="",
                    help="... through these bottlenecks rate:burst:limit[:delay] (default: --rate etc.)")
    ap.add_argument("--calib-ccs", default="reno cubic", help="... with these congestion controls")
    ap.add_argument("--calib-pairs", type=int, default=1, help="... this many times")
    ap.add_argument("--only-calibrate", action="store_true", help="no benchmark runs")
    ap.add_argument("--baseline", choices=("rep", "session"), default="rep",
                    help="isolated time a run is divided by: its repetition's alone-runs "
                         "(default; TCG's speed drifts with the host's load) or the session's")
    ap.add_argument("--from-log", default="", help="analyse this console log instead of booting (give the options "
                         "of the boot too: --ccs, --reps, --warmup, --rate, ...)")
    ap.add_argument("--report", action="store_true", help="re-analyse the CSVs in --out")
    ap.add_argument("--no-plots", action="store_true")
    args = ap.parse_args()
    il.set_metrics(args.metrics)
    ccs = args.ccs.split()
    for kv in args.param:
        if not re.fullmatch(r"[a-z_]+=\d+", kv):
            die("--param %r: expected name=integer (e.g. slope=2048)" % kv, 2)
    for c in ccs:
        if c not in ("reno", "cubic", "mltcp", "mltcp_cubic"):
            die("unknown congestion control '%s' (reno cubic mltcp mltcp_cubic)" % c, 2)
    if args.reps < 1 or args.iterations <= args.warmup + il.CLEAN_RUN or \
            args.iso_iterations <= args.warmup:
        die("need --reps >= 1, --iterations > warmup + %d, --iso-iterations > warmup"
            % il.CLEAN_RUN, 2)

    args.out = os.path.abspath(args.out)
    if args.report:
        with open(os.path.join(args.out, "summary.json")) as f:
            a = json.load(f)["args"]
        analyse_session(args.out, a, a["ccs"].split(), a["reps"], a["warmup"], a["profile"],
                        a.get("elapsed_s", 0), plots=not args.no_plots, baseline=args.baseline)
        return

    os.makedirs(args.out, exist_ok=True)
    t_start = time.time()
    rc = 0
    source = {}
    if args.from_log:
        console = os.path.abspath(args.from_log)
        if console != os.path.join(args.out, "console.log"):
            shutil.copy(console, os.path.join(args.out, "console.log"))
    else:
        source = source_state(args.ko)
        if source.get("core_kmod_changes"):
            log("bench-interleave-vm: note: the module is built from uncommitted changes in "
                "core/ or kmod/ (%s)" % source["core_kmod_changes"][0].strip())
        rc = boot(args)
        console = os.path.join(args.out, "console.log")
        if not os.path.exists(console):
            die("no console log (the VM did not start)")
    extract(console, args.out)
    elapsed = time.time() - t_start
    meta = dict(guest_meta(args.out), rate=args.rate, burst=args.burst, limit=args.limit,
                delay=args.delay, topology=args.topology, iterations=args.iterations,
                iso_iterations=args.iso_iterations, elapsed_s=round(elapsed), source=source,
                params=args.param)
    if args.only_calibrate:
        with open(console, errors="replace") as f:
            for l in f:
                if l.startswith("# calib"):
                    log("guest: " + l.strip()[2:])
        return
    for l in meta.get("calib", []):
        log("guest: " + l)
    headroom_check(meta, args.rate)
    _, missing = analyse_session(args.out, meta, ccs, args.reps, args.warmup, args.profile,
                                 elapsed, plots=not args.no_plots, baseline=args.baseline)
    log("bench-interleave-vm: session %s (%.0f s)" % (args.out, time.time() - t_start))
    if rc != 0 or missing:
        die("the VM run reported failures (rc %d, %d runs missing); see %s/console.log"
            % (rc, len(missing), args.out))


if __name__ == "__main__":
    main()
