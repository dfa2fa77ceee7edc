#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""launch.py - run PyTorch DDP jobs (ddp_train.py) across the namespace
testbed (tools/testbed/mltcp-testbed) with a chosen congestion control, the
way an operator would select it, and tear everything down afterwards.

  launch.py --cc mltcp [--jobs 2] [--hint] [--pin-cpus] [--out DIR] [-- ddp_train.py options]

Job j's two ranks run in different namespaces with the bottleneck between
them: rank 0 in sender namespace s<j>, rank 1 in receiver-side worker
namespace r<j> (mltcp-testbed up --rx-workers --bidir: the tbf on both
directions), Gloo on eth0 (GLOO_SOCKET_IFNAME).  Every job gets a cgroup v2,
<cgroup2>/mltcp-pt-<pid>/job<j>, each rank a sub-cgroup rank<r>.  The
congestion control:

  mltcp, mltcp_cubic   `mltcpctl attach --cgroup <job cgroup>` (loaded with
                       `mltcpctl load` first if needed, unloaded afterwards);
                       --hint: the ranks announce iterations (job hints)
  reno, cubic, ...     the namespaces' default, net.ipv4.tcp_congestion_control
                       (added to the host's tcp_allowed_congestion_control for
                       the run if it is not there, as a namespace needs)

--pin-cpus splits the CPUs this launcher may use evenly among the jobs and
keeps each job's ranks on its own share (sched_setaffinity), as a host that
gives each job its cores does: a job then computes as fast beside another
job as alone.  Without it every rank may run on every CPU.

The ranks start together (a ready/go barrier), each writes
DIR/<job>-rank<r>.csv (workload format) and DIR/<job>-rank<r>.log.  A rank
that fails, or no progress within --timeout seconds, stops the run: the
other ranks are killed, the failing (or every hanging) rank's last lines are
shown.  Teardown (ranks, attachments, cgroups, sysctls, testbed, MLTCP if we
loaded it) runs on every exit, Ctrl-C and SIGTERM included.  One launcher at
a time: a second one is refused (/run/lock/mltcp-pytorch.lock); it also holds
the project's host lock /run/lock/mltcp-host.lock while it runs.

Exit codes: 0 ok, 1 a rank failed or hung, 2 usage, 3 PyTorch missing,
4 another launcher is running, 130 interrupted.  Root, /usr/bin/python3.
"""
import argparse
import fcntl
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "bench"))
import interleave  # noqa: E402  (the testbed's names, MLTCP loading, CSV reading)

TRAIN = os.path.join(HERE, "ddp_train.py")
PYDIR = os.path.join(ROOT, "bpf", "python")
LAUNCH_LOCK = "/run/lock/mltcp-pytorch.lock"
ALLOWED_CC = "/proc/sys/net/ipv4/tcp_allowed_congestion_control"
CG_PREFIX = "mltcp-pt-"
MASTER_PORT = 29500
RANKS = 2
MAX_JOBS = 16
MLTCP_CCS = ("mltcp", "mltcp_cubic")
VARIANT = {"mltcp": "reno", "mltcp_cubic": "cubic"}
TAIL_LINES = 15


class LaunchError(Exception):
    """A run failed; str() says which rank and why, with its last lines."""


class Busy(Exception):
    pass


def log(msg):
    print("launch: " + msg, file=sys.stderr, flush=True)


def torch_missing():
    """None if /usr/bin/python3 can import torch, else the message to show."""
    r = subprocess.run(["/usr/bin/python3", "-c", "import torch"], capture_output=True, text=True)
    if r.returncode == 0:
        return None
    return ("PyTorch is missing for /usr/bin/python3 (%s): install Debian's python3-torch "
            "(apt-get install python3-torch, or 'make deps')"
            % (r.stderr.strip().splitlines() or ["import torch failed"])[-1])


def tail(path, n=TAIL_LINES):
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return "    (no output)"
    return "\n".join("    | " + l for l in lines[-n:]) or "    (no output)"


class Session:
    """Locks, MLTCP loading, the testbed and the host's allowed-cc list for
    one or more runs; undo() puts everything back (idempotent)."""

    def __init__(self, jobs, mltcpctl, rate=None, testbed_opts=(), params=(), pin_cpus=False):
        if not 1 <= jobs <= MAX_JOBS:
            raise ValueError("--jobs must be 1..%d, got %d" % (MAX_JOBS, jobs))
        self.jobs = jobs
        self.job_cpus = job_cpu_sets(jobs) if pin_cpus else None
        self.mltcpctl = mltcpctl
        self.testbed_opts = list(testbed_opts) + (["--rate", rate] if rate else [])
        self.mltcp = interleave.Mltcp(mltcpctl, list(params))
        self.cg_root = os.path.join(interleave.cgroup2_root(), CG_PREFIX + str(os.getpid()))
        self.locks = []
        self.allowed_orig = None
        self.testbed_up = False

    def __enter__(self):
        try:
            self.setup()
        except BaseException:
            self.undo()
            raise
        return self

    def __exit__(self, *exc):
        self.undo()

    def setup(self):
        lock = open(LAUNCH_LOCK, "a+")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            raise Busy("another PyTorch launcher (pid %s) is running and owns the testbed "
                       "%s-*: wait for it to finish" % (lock.read().strip() or "?",
                                                       interleave.PREFIX))
        lock.truncate(0)
        lock.write(str(os.getpid()))
        lock.flush()
        self.locks.append(lock)
        host = open(interleave.HOST_LOCK, "w")
        try:
            fcntl.flock(host, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log("waiting for the host lock %s (another MLTCP test or benchmark) ..."
                % interleave.HOST_LOCK)
            fcntl.flock(host, fcntl.LOCK_EX)
        self.locks.append(host)
        self.remove_leftovers()
        with open(ALLOWED_CC) as f:
            self.allowed_orig = f.read().split()
        os.makedirs(self.cg_root)
        interleave.run([interleave.TESTBED, "up", "--senders", str(self.jobs), "--rx-workers",
                        str(self.jobs), "--bidir"] + self.testbed_opts)
        self.testbed_up = True

    def remove_leftovers(self):
        """cgroups of launchers that died without cleaning up."""
        root = os.path.dirname(self.cg_root)
        for d in os.listdir(root):
            if d.startswith(CG_PREFIX) and d[len(CG_PREFIX):].isdigit():
                pid = int(d[len(CG_PREFIX):])
                if pid != os.getpid() and not os.path.exists("/proc/%d" % pid):
                    log("removing leftover cgroup %s" % d)
                    interleave.remove_cgroup_tree(os.path.join(root, d))

    def allow_cc(self, cc):
        with open(ALLOWED_CC) as f:
            cur = f.read().split()
        if cc not in cur:
            with open(ALLOWED_CC, "w") as f:
                f.write(" ".join(cur + [cc]))

    def undo(self):
        if os.path.isdir(self.cg_root):
            for d in sorted(os.listdir(self.cg_root)):   # run() was cut short
                p = os.path.join(self.cg_root, d)
                if os.path.isdir(p) and self.mltcp.loaded_by_us:
                    interleave.run([self.mltcpctl, "detach", "--cgroup", p], check=False)
            try:
                interleave.remove_cgroup_tree(self.cg_root)
            except RuntimeError as e:
                log(str(e))
        if self.testbed_up:
            r = interleave.run([interleave.TESTBED, "down"], check=False)
            if r.returncode != 0:
                log("testbed down failed: %s" % (r.stderr or r.stdout).strip())
            self.testbed_up = False
        if self.allowed_orig is not None:
            with open(ALLOWED_CC, "w") as f:
                f.write(" ".join(self.allowed_orig))
            self.allowed_orig = None
        self.mltcp.release()
        while self.locks:
            self.locks.pop().close()

    # -------------------------------------------------------------- one run

    def rank_ns(self, job, rank):
        return "%s-%s%d" % (interleave.PREFIX, "s" if rank == 0 else "r", job)

    def rank_addr(self, job, rank):
        return interleave.ns_addr("s%d" % job if rank == 0 else "r%d" % job)

    def select_cc(self, cc, job_cgroups):
        if cc in MLTCP_CCS:
            self.mltcp.ensure()
            for cg in job_cgroups:
                interleave.run([self.mltcpctl, "attach", "--cgroup", cg, "--variant",
                                VARIANT[cc]])
            return
        if cc not in interleave.available_ccs():
            raise LaunchError("congestion control %s is not available on this kernel (%s)"
                              % (cc, " ".join(interleave.available_ccs())))
        self.allow_cc(cc)
        for j in range(1, self.jobs + 1):
            for r in range(RANKS):
                interleave.run(interleave.in_netns(self.rank_ns(j, r)) +
                               ["sysctl", "-q", "-w", "net.ipv4.tcp_congestion_control=" + cc])

    def run(self, cc, outdir, train_args, hint=False, timeout=300.0, jobs=None):
        """One run of `jobs` (default all) DDP jobs; returns {job: rank 0's CSV rows}."""
        jobs = jobs or self.jobs
        os.makedirs(outdir, exist_ok=True)
        start_dir = os.path.join(outdir, ".start")
        os.makedirs(start_dir, exist_ok=True)
        for f in os.listdir(start_dir):
            os.unlink(os.path.join(start_dir, f))
        job_cgs = [os.path.join(self.cg_root, "job%d" % j) for j in range(1, jobs + 1)]
        for cg in job_cgs:
            for r in range(RANKS):
                os.makedirs(os.path.join(cg, "rank%d" % r))
        procs = []
        try:
            self.select_cc(cc, job_cgs)
            env = dict(os.environ, GLOO_SOCKET_IFNAME="eth0", WORLD_SIZE=str(RANKS),
                       PYTHONPATH=PYDIR + os.pathsep + os.environ.get("PYTHONPATH", ""),
                       PYTHONUNBUFFERED="1")
            for j in range(1, jobs + 1):
                for r in range(RANKS):
                    name = "job%d-rank%d" % (j, r)
                    cmd = interleave.in_netns(self.rank_ns(j, r)) + [
                        "/usr/bin/python3", TRAIN, "--job", "job%d" % j, "--start-dir", start_dir,
                        "--csv", os.path.join(outdir, name + ".csv"),
                        "--start-timeout", str(timeout)] + (["--hint"] if hint else []) + \
                        list(train_args)
                    renv = dict(env, RANK=str(r), MASTER_ADDR=self.rank_addr(j, 0),
                                MASTER_PORT=str(MASTER_PORT + j))
                    cg = os.path.join(job_cgs[j - 1], "rank%d" % r, "cgroup.procs")
                    cpus = self.job_cpus[j - 1] if self.job_cpus else None
                    logf = open(os.path.join(outdir, name + ".log"), "w")
                    p = subprocess.Popen(cmd, env=renv, stdout=logf, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL,
                                         preexec_fn=lambda cg=cg, cpus=cpus: enter_job(cg, cpus))
                    logf.close()
                    procs.append((name, p))
            self.supervise(procs, outdir, start_dir, timeout,
                           stats=os.path.join(outdir, "mltcp-stats.jsonl") if cc in MLTCP_CCS
                           else None)
        finally:
            for _, p in procs:
                if p.poll() is None:
                    p.kill()
            for _, p in procs:
                p.wait()
            for cg in job_cgs:
                if cc in MLTCP_CCS:
                    interleave.run([self.mltcpctl, "detach", "--cgroup", cg], check=False)
                interleave.remove_cgroup_tree(cg)
        return {"job%d" % j: interleave.read_csv(os.path.join(outdir, "job%d-rank0.csv" % j))
                for j in range(1, jobs + 1)}

    def supervise(self, procs, outdir, start_dir, timeout, stats=None):
        """Wait for all ranks: the start barrier, then their exit; a failing
        or stalled rank raises LaunchError (the caller kills the rest).  With
        stats, every 0.5 s of training one `mltcpctl stats --json` sample is
        appended there (one JSON object per line)."""
        want = {n.replace("-rank", "-") for n, _ in procs}
        started = False
        deadline = time.monotonic() + timeout
        next_stats = 0.0
        while True:
            codes = {n: p.poll() for n, p in procs}
            bad = [n for n, c in codes.items() if c not in (None, 0)]
            if bad:
                # Every rank that has exited by now: when one fails, its peers'
                # collectives fail soon after, and one poll may see them all.
                raise LaunchError("\n".join(
                    "rank %s failed (exit %d); its last lines (%s.log):\n%s"
                    % (n, codes[n], os.path.join(outdir, n),
                       tail(os.path.join(outdir, n + ".log"))) for n in bad))
            if all(c == 0 for c in codes.values()):
                return
            if not started:
                ready = {f[len("ready-"):] for f in os.listdir(start_dir) if f.startswith("ready-")}
                if want <= ready:
                    tmp = os.path.join(start_dir, "go.tmp")
                    with open(tmp, "w") as f:
                        f.write(str(interleave.now_us() + 300000))
                    os.rename(tmp, os.path.join(start_dir, "go"))
                    started = True
            if stats and started and time.monotonic() >= next_stats:
                r = interleave.run([self.mltcpctl, "stats", "--json"], check=False)
                if r.returncode == 0 and json.loads(r.stdout).get("flows"):
                    with open(stats, "a") as f:
                        f.write(json.dumps(json.loads(r.stdout)) + "\n")
                next_stats = time.monotonic() + 0.5
            if time.monotonic() > deadline:
                hung = [n for n, p in procs if p.poll() is None]
                raise LaunchError("timed out after %g s (--timeout): rank(s) %s still running; "
                                  "their last lines:\n%s" % (
                                      timeout, " ".join(hung),
                                      "\n".join("  %s:\n%s" % (n, tail(os.path.join(
                                          outdir, n + ".log"))) for n in hung)))
            time.sleep(0.1)


def job_cpu_sets(jobs):
    """The CPUs this process may use, split into `jobs` equal sets, one per
    job; LaunchError if there are fewer CPUs than jobs."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < jobs:
        raise LaunchError("--pin-cpus: %d jobs need at least %d CPUs, this process may use %d "
                          "(%s)" % (jobs, jobs, len(cpus), ",".join(map(str, cpus))))
    per = len(cpus) // jobs
    return [set(cpus[k * per:(k + 1) * per]) for k in range(jobs)]


def enter_job(procs_file, cpus):
    """In a rank's child before exec: its cgroup, and its job's CPUs if pinned."""
    with open(procs_file, "w") as f:
        f.write(str(os.getpid()))
    if cpus:
        os.sched_setaffinity(0, cpus)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--cc", required=True,
                    help="mltcp, mltcp_cubic (per-cgroup attach) or a kernel algorithm")
    ap.add_argument("--jobs", type=int, default=2, help="DDP jobs of 2 ranks (default 2)")
    ap.add_argument("--hint", action="store_true", help="job-level hints (mltcp ccs only)")
    ap.add_argument("--out", default="", help="output directory (default: a new one in /tmp)")
    ap.add_argument("--timeout", type=float, default=300.0,
                    help="seconds a run may take before its ranks are killed (default 300)")
    ap.add_argument("--rate", default=None, help="bottleneck rate (mltcp-testbed --rate)")
    ap.add_argument("--pin-cpus", action="store_true",
                    help="give each job CPUs of its own (the CPUs split evenly among --jobs; "
                         "needs at least one per job), as on a host where each job has its "
                         "cores; without it all ranks share all CPUs")
    ap.add_argument("--mltcpctl", default=os.environ.get("MLTCPCTL", os.path.join(
        ROOT, "build", "cmake", "tools", "mltcpctl", "mltcpctl")),
        help="mltcpctl binary (default $MLTCPCTL, else the build tree's)")
    ap.add_argument("train_args", nargs="*", help="options for ddp_train.py, after --")
    args = ap.parse_args()
    if os.geteuid() != 0:
        ap.error("must run as root (namespaces, cgroups, BPF)")
    if not 1 <= args.jobs <= MAX_JOBS:
        ap.error("--jobs must be 1..%d (DDP jobs), got %d" % (MAX_JOBS, args.jobs))
    if args.timeout <= 0:
        ap.error("--timeout must be > 0 seconds, got %g" % args.timeout)
    if args.hint and args.cc not in MLTCP_CCS:
        ap.error("--hint needs --cc mltcp or mltcp_cubic (hints go to MLTCP)")
    missing = torch_missing()
    if missing:
        print("launch: " + missing, file=sys.stderr)
        return 3
    out = args.out or "/tmp/mltcp-pytorch-%d" % os.getpid()

    def on_signal(signum, frame):
        raise KeyboardInterrupt("signal %d" % signum)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        with Session(args.jobs, args.mltcpctl, args.rate, pin_cpus=args.pin_cpus) as s:
            rows = s.run(args.cc, out, args.train_args, hint=args.hint, timeout=args.timeout)
    except Busy as e:
        print("launch: refused: %s" % e, file=sys.stderr)
        return 4
    except (LaunchError, RuntimeError) as e:
        print("launch: %s" % e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("launch: interrupted; everything torn down", file=sys.stderr)
        return 130
    for job, r in rows.items():
        t = [x["end_us"] - x["start_us"] for x in r]
        print("%s: %d iterations, mean %.1f ms, CSVs and logs in %s" % (
            job, len(t), sum(t) / len(t) / 1e3 if t else 0, out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
