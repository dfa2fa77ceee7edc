#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench_bpf.py - cost of the MLTCP BPF congestion controls (make bench-bpf).

One bulk TCP flow across a veth pair between two network namespaces (no
bottleneck), sender in mltcp-b<pid>-s, receiver in mltcp-b<pid>-r.  Each
repetition runs, in alternating order, mltcp vs the kernel's reno and
mltcp_cubic vs the kernel's cubic.  Per run: throughput = bytes / (first
send .. all bytes acked) and sender CPU (user+system from wait4 rusage of
the sending process) per GB.  A third pair measures what selecting MLTCP
the operator's way costs: mltcp with sender and receiver in a cgroup that
`mltcpctl attach` selected (its sock_ops program then runs for every
packet either side sends, counting the job's traffic) against mltcp
chosen by setsockopt.  Reports the medians, and as
RESULT the median over repetitions of the paired ratio variant/base (the
two runs of a pair are adjacent in time, which cancels most of a shared
machine's drifting background load), ending with
  RESULT variant=mltcp base=reno tput_ratio=<x> cpu_ratio=<y>
  RESULT variant=mltcp_cubic base=cubic tput_ratio=<x> cpu_ratio=<y>
  RESULT variant=mltcp_attached base=mltcp tput_ratio=<x> cpu_ratio=<y>

Options: --reps N (default 9), --bytes B per run (default 2 GiB).  The
sender runs on CPU 0, the receiver on CPU 1.  Root;
holds /run/lock/mltcp-host.lock; loads and unloads MLTCP with $MLTCPCTL.
"""
import argparse
import fcntl
import os
import socket
import statistics
import struct
import subprocess
import sys
import termios
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CTL = os.environ.get("MLTCPCTL", os.path.join(ROOT, "build/cmake/tools/mltcpctl/mltcpctl"))
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
# "<cc>_attached": cc by the cgroup attachment, both ends in the cgroup.
ATTACHED = "_attached"
PAIRS = [("mltcp", "reno"), ("mltcp_cubic", "cubic"), ("mltcp" + ATTACHED, "mltcp")]
CHUNK = 1 << 20
PORT = 47900
ATTACHED_PORT = PORT + 1    # the receiver in the attached cgroup
# Sender and receiver on different cores so that they do not take turns.
SENDER_CPU, RECEIVER_CPU = "0", str(min(1, os.cpu_count() - 1))


def sender(host, cc, nbytes):
    """Child: send nbytes with cc; print elapsed seconds (first send .. acked).
    An attached cc leaves the choice to the cgroup's attachment."""
    s = socket.socket()
    port = PORT
    if cc.endswith(ATTACHED):
        cc, port = cc[:-len(ATTACHED)], ATTACHED_PORT
    else:
        s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
    s.connect((host, port))
    got = s.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).split(b"\0")[0].decode()
    if got != cc:
        sys.exit("socket uses %s, not %s" % (got, cc))
    buf = memoryview(os.urandom(CHUNK))
    t0 = time.monotonic()
    left = nbytes
    while left > 0:
        n = s.send(buf[: min(left, CHUNK)])
        left -= n
    while struct.unpack("i", fcntl.ioctl(s.fileno(), termios.TIOCOUTQ, b"\0" * 4))[0] > 0:
        time.sleep(0.0005)
    print(time.monotonic() - t0)
    s.close()


def receiver(port):
    """Child: accept connections forever, discard everything."""
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(4)
    buf = bytearray(CHUNK)
    print("ready", flush=True)
    while True:
        c, _ = ls.accept()
        while c.recv_into(buf):
            pass
        c.close()


def sh(*cmd):
    subprocess.run(cmd, check=True)


def in_cgroup(path):
    """A preexec_fn: the child enters cgroup path (None: stays)."""
    def enter():
        if path:
            with open(os.path.join(path, "cgroup.procs"), "w") as f:
                f.write("0")
    return enter


def run_one(ns_s, cc, nbytes, cgroup):
    p = subprocess.Popen(["nsenter", "--net=/run/netns/" + ns_s, "taskset", "-c", SENDER_CPU,
                          sys.executable, __file__,
                          "--send", cc, "--bytes", str(nbytes)], stdout=subprocess.PIPE, text=True,
                         preexec_fn=in_cgroup(cgroup if cc.endswith(ATTACHED) else None))
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        raise RuntimeError("sender with %s failed (status %d)" % (cc, status))
    secs = float(out.strip())
    return nbytes * 8 / secs / 1e9, (ru.ru_utime + ru.ru_stime) / (nbytes / 1e9)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--bytes", type=int, default=2 << 30)
    ap.add_argument("--send", help=argparse.SUPPRESS)
    ap.add_argument("--receive", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.send:
        return sender("10.203.0.2", args.send, args.bytes)
    if args.receive:
        return receiver(args.receive)
    if os.geteuid() != 0:
        sys.exit("bench_bpf: needs root")
    if not os.access(CTL, os.X_OK):
        sys.exit("bench_bpf: mltcpctl not built at %s (make cmake-build)" % CTL)
    lock = open("/run/lock/mltcp-host.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    tag = "mltcp-b%d" % os.getpid()
    ns_s, ns_r = tag + "-s", tag + "-r"
    cgroup2 = next((m.split()[1] for m in open("/proc/self/mounts") if m.split()[2] == "cgroup2"),
                   None)
    if not cgroup2:
        sys.exit("bench_bpf: no cgroup2 mount (the attached pair needs cgroup v2)")
    cgroup = os.path.join(cgroup2, tag)
    rxs = []
    loaded = False
    try:
        sh("ip", "netns", "add", ns_s)
        sh("ip", "netns", "add", ns_r)
        sh("ip", "link", "add", "mltcpb%ds" % os.getpid(), "netns", ns_s, "type", "veth",
           "peer", "name", "mltcpb%dr" % os.getpid(), "netns", ns_r)
        sh("ip", "-n", ns_s, "addr", "add", "10.203.0.1/24", "dev", "mltcpb%ds" % os.getpid())
        sh("ip", "-n", ns_r, "addr", "add", "10.203.0.2/24", "dev", "mltcpb%dr" % os.getpid())
        for ns, dev in ((ns_s, "s"), (ns_r, "r")):
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            sh("ip", "-n", ns, "link", "set", "mltcpb%d%s" % (os.getpid(), dev), "up")
            sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.tcp_no_metrics_save=1")
        if os.path.exists("/sys/fs/bpf/mltcp"):
            sys.exit("bench_bpf: MLTCP is already loaded; run 'mltcpctl unload' first")
        sh(CTL, "load")
        loaded = True
        os.mkdir(cgroup)
        sh(CTL, "attach", "--cgroup", cgroup, "--variant", "reno")
        for port, cg in ((PORT, None), (ATTACHED_PORT, cgroup)):
            rxs.append(subprocess.Popen(["nsenter", "--net=/run/netns/" + ns_r, "taskset", "-c",
                                         RECEIVER_CPU, sys.executable, __file__,
                                         "--receive", str(port)], stdout=subprocess.PIPE,
                                        text=True, preexec_fn=in_cgroup(cg)))
            rxs[-1].stdout.readline()
        res = {cc: ([], []) for pair in PAIRS for cc in pair}
        for rep in range(args.reps):
            for variant, base in PAIRS:
                order = (variant, base) if rep % 2 == 0 else (base, variant)
                for cc in order:
                    tput, cpu = run_one(ns_s, cc, args.bytes, cgroup)
                    res[cc][0].append(tput)
                    res[cc][1].append(cpu)
                    print("rep %d %-12s %7.2f Gbit/s  %.3f CPU s/GB" % (rep + 1, cc, tput, cpu),
                          flush=True)
        print("median over %d runs of %d MB each:" % (args.reps, args.bytes >> 20))
        lines = []
        for variant, base in PAIRS:
            m = {cc: (statistics.median(res[cc][0]), statistics.median(res[cc][1]))
                 for cc in (variant, base)}
            for cc in (variant, base):
                print("  %-12s %7.2f Gbit/s  %.3f CPU s/GB" % (cc, m[cc][0], m[cc][1]))
            # Ratio of the two runs of one repetition (adjacent in time, so
            # under the same background load), then the median over reps.
            tr = statistics.median(v / b for v, b in zip(res[variant][0], res[base][0]))
            cr = statistics.median(v / b for v, b in zip(res[variant][1], res[base][1]))
            print("  ratio of medians: tput %.3f cpu %.3f; median of paired ratios: "
                  "tput %.3f cpu %.3f" % (m[variant][0] / m[base][0],
                                          m[variant][1] / m[base][1], tr, cr))
            lines.append("RESULT variant=%s base=%s tput_ratio=%.3f cpu_ratio=%.3f" % (
                variant, base, tr, cr))
        print("\n".join(lines))
    finally:
        for rx in rxs:
            rx.kill()
            rx.wait()
        if loaded:
            subprocess.run([CTL, "unload"], stdout=subprocess.DEVNULL)
        if os.path.isdir(cgroup):
            os.rmdir(cgroup)
        for ns in (ns_s, ns_r):
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
