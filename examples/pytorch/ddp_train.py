#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""ddp_train.py - a PyTorch DDP training job to copy: a real model (an MLP
classifier), real gradients, the Gloo backend over TCP, DDP's own gradient
bucketing, and optionally MLTCP's job-level iteration hints (one line:
mltcp_torch.announce_iterations).

This host has no GPU: --compute-ms is a stand-in for the GPU's forward and
backward time (a sleep before backward(); the CPU's own forward and backward
of the model are real but short).  Each iteration:

    start   forward on a random batch, then --compute-ms of "GPU compute"
    comm    backward(): DDP all-reduces the gradient buckets as they fill;
            comm_start is when the first bucket's all-reduce is launched,
            comm_end when backward() returns (every all-reduce done)
    end     optimizer step

Rendezvous: torch.distributed's env:// (RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT, as torchrun sets them; or --rank etc.).  Across network
namespaces set GLOO_SOCKET_IFNAME to the interface on every rank: Gloo binds
to the address its hostname resolves to, 127.0.0.1 in a namespace.

--csv writes one row per iteration in the project's workload format
(job,iteration,bytes,start_us,comm_start_us,comm_end_us,end_us,rto,
recoveries,tlp,undo,spurious_rto,window_repairs; iterations from 0, us from
t0, bytes = what the rank's ring all-reduce sends per iteration, then the
loss recoveries of the rank's network namespace and the window repairs on
the rank's MLTCP sockets, tcp_counters.py, from the phase's start to the next
phase's start: a rank's all-reduce returns once its last bytes are handed to
the socket, so the loss of its last segments, and their recovery, come after
its comm_end).
--start-dir synchronises several jobs: the rank creates
<dir>/ready-<job>-<rank> once set up and waits for <dir>/go (its content: t0
in microseconds since the epoch, also the CSV's time origin).  Exit codes: 0 ok, 2 usage, 3 torch missing,
1 anything else.
"""
import argparse
import os
import sys
import time

try:
    import torch
    import torch.distributed as dist
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    from torch.nn.parallel import DistributedDataParallel as DDP
except ImportError as e:
    print("ddp_train.py: PyTorch is missing (%s): install Debian's python3-torch "
          "(apt-get install python3-torch, or 'make deps') and run it with /usr/bin/python3"
          % e, file=sys.stderr)
    sys.exit(3)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bpf", "python"))


def now_us():
    return time.time_ns() // 1000


def positive(kind):
    def parse(s):
        try:
            v = kind(s)
        except ValueError:
            raise argparse.ArgumentTypeError("%r is not a number" % s)
        if v <= 0:
            raise argparse.ArgumentTypeError("must be > 0, got %s" % s)
        return v
    return parse


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iterations", type=positive(int), default=20)
    ap.add_argument("--compute-ms", type=float, default=150.0,
                    help="stand-in for GPU compute per iteration, ms (default 150)")
    ap.add_argument("--hidden", type=positive(int), default=700,
                    help="MLP hidden width (default 700: 2.6 MB of fp32 gradients)")
    ap.add_argument("--layers", type=positive(int), default=2, help="hidden layers (default 2)")
    ap.add_argument("--inputs", type=positive(int), default=256, help="input features")
    ap.add_argument("--batch", type=positive(int), default=8, help="batch size per rank")
    ap.add_argument("--bucket-mb", type=positive(float), default=25.0,
                    help="DDP bucket_cap_mb (default 25, PyTorch's)")
    ap.add_argument("--hint", action="store_true",
                    help="announce iterations to MLTCP (mltcp_torch.announce_iterations)")
    ap.add_argument("--hint-bytes", type=int, default=None,
                    help="hinted bytes per iteration (default: the ring all-reduce's)")
    ap.add_argument("--job", default="job", help="job name in the CSV")
    ap.add_argument("--csv", help="per-iteration CSV (workload format)")
    ap.add_argument("--start-dir", help="directory of the ready/go start barrier")
    ap.add_argument("--start-timeout", type=positive(float), default=300.0,
                    help="seconds to wait for <start-dir>/go")
    ap.add_argument("--rank", type=int, help="default: $RANK")
    ap.add_argument("--world-size", type=int, help="default: $WORLD_SIZE")
    ap.add_argument("--master-addr", help="default: $MASTER_ADDR")
    ap.add_argument("--master-port", type=int, help="default: $MASTER_PORT")
    ap.add_argument("--fail-at", type=int, default=0,
                    help="(tests) rank --test-rank exits with an error at this iteration")
    ap.add_argument("--hang-at", type=int, default=0,
                    help="(tests) rank --test-rank stops making progress at this iteration")
    ap.add_argument("--test-rank", type=int, default=1, help="(tests) the rank that fails or hangs")
    args = ap.parse_args()
    for opt, env in (("rank", "RANK"), ("world_size", "WORLD_SIZE"),
                     ("master_addr", "MASTER_ADDR"), ("master_port", "MASTER_PORT")):
        v = getattr(args, opt)
        if v is not None:
            os.environ[env] = str(v)
        elif env not in os.environ:
            ap.error("--%s or $%s is required" % (opt.replace("_", "-"), env))
    if args.compute_ms < 0:
        ap.error("--compute-ms must be >= 0 (milliseconds), got %g" % args.compute_ms)
    return args


def build_model(args):
    layers, width = [], args.inputs
    for _ in range(args.layers):
        layers += [torch.nn.Linear(width, args.hidden), torch.nn.ReLU()]
        width = args.hidden
    layers.append(torch.nn.Linear(width, 10))
    return torch.nn.Sequential(*layers)


def wait_for_go(args, rank):
    open(os.path.join(args.start_dir, "ready-%s-%d" % (args.job, rank)), "w").close()
    go = os.path.join(args.start_dir, "go")
    deadline = time.monotonic() + args.start_timeout
    while not os.path.exists(go):
        if time.monotonic() > deadline:
            raise TimeoutError("no %s within %g s" % (go, args.start_timeout))
        time.sleep(0.01)
    time.sleep(0.02)  # the launcher writes it atomically (rename); be safe
    with open(go) as f:
        t0 = int(f.read().strip())
    while True:
        left_us = t0 - now_us()  # read once: the clock moves between two reads
        if left_us <= 0:
            return t0
        time.sleep(min(0.01, left_us / 1e6))


def main():
    args = parse_args()
    torch.set_num_threads(1)  # two ranks of each job share this host's cores
    dist.init_process_group("gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(1234)  # the same initial model on every rank
    model = DDP(build_model(args), bucket_cap_mb=args.bucket_mb)
    import mltcp_torch  # noqa: E402  (bpf/python, next to mltcp.py)
    import tcp_counters  # noqa: E402  (next to this script)
    nbytes = args.hint_bytes or mltcp_torch.ring_allreduce_bytes(model.module, world)
    marks = {}

    def timed_allreduce(process_group, bucket):
        if bucket.index() == 0:   # the counters first: their reading is not communication
            marks["counters"] = tcp_counters.read()
            marks["comm_start"] = now_us()
        return default_hooks.allreduce_hook(process_group, bucket)

    if args.hint:
        mltcp_torch.announce_iterations(model, nbytes=nbytes, then=timed_allreduce)
    else:
        model.register_comm_hook(None, timed_allreduce)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(rank)
    x = torch.randn(args.batch, args.inputs, generator=gen)
    y = torch.randint(0, 10, (args.batch,), generator=gen)
    # Every iteration is timed from the start barrier on, the first too (DDP
    # rebuilds its buckets after it; the benchmark's warm-up leaves it out of
    # the ratios): jobs launched together meet in their first iteration, as
    # they would in a cluster, and are not lined up again after it.
    t0 = wait_for_go(args, rank) if args.start_dir else now_us()
    rows, phase_counters = [], []
    for it in range(1, args.iterations + 1):
        if it == args.fail_at and rank == args.test_rank:
            raise RuntimeError("failing at iteration %d as asked (--fail-at)" % it)
        if it == args.hang_at and rank == args.test_rank:
            print("rank %d: hanging at iteration %d as asked (--hang-at)" % (rank, it), flush=True)
            time.sleep(1e6)
        start = now_us()
        loss = loss_fn(model(x), y)
        time.sleep(args.compute_ms / 1000.0)  # stand-in for GPU compute
        marks.pop("counters", None)
        loss.backward()
        comm_end = now_us()
        opt.step()
        opt.zero_grad()
        end = now_us()
        rows.append((args.job, it - 1, nbytes, start - t0, marks.get("comm_start", comm_end) - t0,
                     comm_end - t0, end - t0))
        phase_counters.append(marks.get("counters"))   # None: no all-reduce ran (unknown)
    dist.barrier()   # every rank has received every byte: the last phase's losses are in
    final = tcp_counters.read()
    rows = [r + tcp_counters.iteration_cells(phase_counters, i, final)
            for i, r in enumerate(rows)]
    if args.csv:
        tmp = args.csv + ".tmp"
        with open(tmp, "w") as f:
            f.write("job,iteration,bytes,start_us,comm_start_us,comm_end_us,end_us,%s\n"
                    % ",".join(tcp_counters.COLUMNS))
            for r in rows:
                f.write(",".join(str(v) for v in r) + "\n")
        os.rename(tmp, args.csv)
    times = [(r[6] - r[3]) / 1e3 for r in rows]
    comm = [(r[5] - r[4]) / 1e3 for r in rows]
    print("rank %d/%d %s: %d iterations, mean %.1f ms (communication %.1f ms), %d B per "
          "iteration and connection, hints %s, CPUs %s" % (
              rank, world, args.job, len(rows), sum(times) / len(times), sum(comm) / len(comm),
              nbytes, "on" if args.hint else "off",
              ",".join(map(str, sorted(os.sched_getaffinity(0))))),
          flush=True)
    # Leave without tearing Gloo down: with the peer gone first, its
    # destructor (torch 1.13) can block for ever.  Everything is written.
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
