#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""mltcp_traffic.py - traffic and checks for the MLTCP BPF tests (run_tests.sh).

  server  --port P [--cc NAME] [--out FILE] [--stall-every B --stall-ms MS]
          accept one connection, read to EOF (optionally pausing like a slow
          reader), write {"bytes", "sha256", "cc"}
          (cc = the accepted socket's TCP_CONGESTION) as JSON to FILE/stdout.
  client  --host H --port P [--cc NAME] then one of
          --probe                       connect, report cc, close
          --bulk BYTES [--hint-bytes B] send random bytes, sample cwnd and stats
                                        (optionally after hinting an iteration)
                                        and the climb: cwnd segments gained per
                                        second after the first cut, without a
                                        seeded first iteration
          --iterations K --bytes N --gap-ms G [--hint] [--hint-job]
                                        emulated training: compute gap, then N
                                        bytes (waiting until all are acked), K
                                        times; with --hint, mltcp.hint() first,
                                        with --hint-job, mltcp.hint_job()
                                        (after one mltcp.seed_job(S) with
                                        --seed-job S);
                                        stats are sampled at each phase end.
          --repairs                     report mltcp.window_repairs() before
                                        closing (window_repairs)
          prints one JSON object on stdout.

Stats come from `mltcpctl stats --json` ($MLTCPCTL), matched by local port.
"""
import argparse
import fcntl
import hashlib
import json
import os
import socket
import struct
import subprocess
import sys
import termios
import threading
import time

TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
TCP_INFO = getattr(socket, "TCP_INFO", 11)
SIOCOUTQ = termios.TIOCOUTQ
CHUNK = 1 << 16


def get_cc(sock):
    return sock.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).split(b"\0")[0].decode()


def snd_window(sock):
    """(snd_cwnd, snd_ssthresh) from TCP_INFO."""
    info = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 104)
    # struct tcp_info: 8 u8 fields, then u32s; tcpi_snd_ssthresh is u32 #17
    # and tcpi_snd_cwnd #18 (0-based)
    ssthresh, cwnd = struct.unpack_from("II", info, 8 + 17 * 4)
    return cwnd, ssthresh


def outq(sock):
    buf = fcntl.ioctl(sock.fileno(), SIOCOUTQ, b"\0" * 4)
    return struct.unpack("i", buf)[0]


def wait_drained(sock, timeout=10.0):
    end = time.monotonic() + timeout
    while outq(sock) > 0:
        if time.monotonic() > end:
            raise RuntimeError("send queue did not drain in %.0f s" % timeout)
        time.sleep(0.0002)


def flow_stats(local_port):
    ctl = os.environ.get("MLTCPCTL", "mltcpctl")
    out = subprocess.run([ctl, "stats", "--json"], check=True, capture_output=True,
                         text=True).stdout
    for f in json.loads(out)["flows"]:
        if f["local"].endswith(":%d" % local_port):
            return f
    return None


def server(args):
    ls = socket.socket(socket.AF_INET6 if ":" in args.bind else socket.AF_INET)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if args.cc:
        ls.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, args.cc.encode())
    ls.bind((args.bind, args.port))
    ls.listen(1)
    if args.ready:
        open(args.ready, "w").close()
    conn, _ = ls.accept()
    cc = get_cc(conn)
    h = hashlib.sha256()
    n = next_stall = 0
    while True:
        b = conn.recv(1 << 20)
        if not b:
            break
        h.update(b)
        n += len(b)
        if args.stall_every and n >= next_stall:
            next_stall = n + args.stall_every
            time.sleep(args.stall_ms / 1000.0)  # a slow reader: the window closes
    res = {"bytes": n, "sha256": h.hexdigest(), "cc": cc}
    conn.close()
    text = json.dumps(res)
    if args.out:
        with open(args.out + ".tmp", "w") as f:
            f.write(text)
        os.rename(args.out + ".tmp", args.out)
    else:
        print(text)


def connect(args):
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    if args.cc:
        s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, args.cc.encode())
    for _ in range(100):
        try:
            s.connect((args.host, args.port))
            return s
        except ConnectionRefusedError:
            time.sleep(0.05)
    raise RuntimeError("cannot connect to %s:%d" % (args.host, args.port))


SO_SNDBUFFORCE = getattr(socket, "SO_SNDBUFFORCE", 32)
BULK_SNDBUF = 8 << 20


def client_bulk(s, args, res):
    # A big send buffer: a stall of this (busy, shared) machine's scheduler
    # must not drain the flow idle, or it would be an idle gap like an
    # iteration boundary.  SO_SNDBUFFORCE needs root; else plain SO_SNDBUF.
    try:
        s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, BULK_SNDBUF)
    except PermissionError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, BULK_SNDBUF)
    if args.hint_bytes:
        sys.path.insert(0, args.pydir)
        import mltcp  # noqa: E402  (the binding under test)
        mltcp.hint(s, args.hint_bytes)
    payload = os.urandom(CHUNK)
    h = hashlib.sha256()
    samples, ssthresh, stats = [], [], []
    done = threading.Event()

    def sender():
        left = args.bulk
        while left > 0:
            b = payload[: min(left, CHUNK)]
            s.sendall(b)
            h.update(b)
            left -= len(b)
        done.set()

    t = threading.Thread(target=sender)
    t.start()
    port = s.getsockname()[1]
    last_stats = 0.0
    t0 = time.monotonic()
    while not done.is_set():
        cwnd, ss = snd_window(s)
        samples.append(cwnd)
        ssthresh.append(ss)
        if time.monotonic() - last_stats > 0.2:
            st = flow_stats(port)
            if st:
                st["cwnd_index"] = len(samples)
                st["seeded"] = seeded(st)
                stats.append(st)
            last_stats = time.monotonic()
        time.sleep(0.002)
    t.join()
    wait_drained(s, 30)
    seconds = time.monotonic() - t0
    st = flow_stats(port)
    if st:
        st["cwnd_index"] = len(samples)
        st["seeded"] = seeded(st)
        stats.append(st)
    climb, excluded = climb_seg_per_s(samples, stats, seconds)
    res.update(sent=args.bulk, sha256=h.hexdigest(), cwnd=samples, ssthresh=ssthresh, stats=stats,
               seconds=seconds, climb_seg_per_s=climb, climb_excluded_samples=excluded)


SEED_BYTES_MAX = 4 << 20  # core/mltcp_iter.h, MLTCP_SEED_BYTES_MAX


def seeded(st):
    """A stats sample taken where the core's first-iteration seed may act: a
    bulk flow that paused once (a scheduler stall of the sender on a loaded
    machine) has seen a boundary, and runs its next 4 MiB at a random ratio."""
    return st["iterations"] >= 1 and st["iter_bytes"] <= SEED_BYTES_MAX


def climb_seg_per_s(w, stats, seconds):
    """cwnd segments gained per second after the first cut (no slow start),
    leaving out the samples around a seeded stretch (between the stats
    samples on either side of it), where the gain is not the run's.  Returns
    (climb, samples left out)."""
    first = next((i for i in range(1, len(w)) if w[i] <= 0.7 * max(w[:i])), None)
    if first is None:
        return None, 0
    out = [False] * len(w)
    for k, st in enumerate(stats):
        if st["seeded"]:
            lo = stats[k - 1]["cwnd_index"] if k > 0 else 0
            hi = stats[k + 1]["cwnd_index"] if k + 1 < len(stats) else len(w)
            for i in range(lo, min(hi + 1, len(w))):
                out[i] = True
    pairs = [(w[i], w[i + 1]) for i in range(first, len(w) - 1) if not (out[i] or out[i + 1])]
    if not pairs:
        return None, sum(out)
    up = sum(max(b - a, 0) for a, b in pairs)
    return up / (seconds * len(pairs) / len(w)), sum(out)


def client_iterations(s, args, res):
    payload = os.urandom(args.bytes)
    port = s.getsockname()[1]
    phase_end = []
    if args.hint or args.hint_job or args.seed_job is not None:
        sys.path.insert(0, args.pydir)
        import mltcp  # noqa: E402  (the binding under test)
    if args.seed_job is not None:
        mltcp.seed_job(args.seed_job)
    for _ in range(args.iterations):
        time.sleep(args.gap_ms / 1000.0)  # "compute"
        if args.hint:
            mltcp.hint(s, args.bytes)
        if args.hint_job:
            mltcp.hint_job(args.bytes)
        s.sendall(payload)
        wait_drained(s)
        phase_end.append(flow_stats(port))
    res.update(phase_end=phase_end)


def client(args):
    s = connect(args)
    res = {"cc": get_cc(s), "local_port": s.getsockname()[1]}
    if args.bulk:
        client_bulk(s, args, res)
    elif args.iterations:
        client_iterations(s, args, res)
    if args.repairs:
        sys.path.insert(0, args.pydir)
        import mltcp  # noqa: E402  (the binding under test)
        res["window_repairs"] = mltcp.window_repairs(s)
    if args.hold:
        time.sleep(args.hold)
    s.close()
    print(json.dumps(res))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sv = sub.add_parser("server")
    sv.add_argument("--bind", default="0.0.0.0")
    sv.add_argument("--port", type=int, required=True)
    sv.add_argument("--cc")
    sv.add_argument("--out")
    sv.add_argument("--ready", help="touch this file once listening")
    sv.add_argument("--stall-every", type=int, default=0,
                    help="stop reading for --stall-ms after every this many bytes")
    sv.add_argument("--stall-ms", type=float, default=100.0)
    cl = sub.add_parser("client")
    cl.add_argument("--host", required=True)
    cl.add_argument("--port", type=int, required=True)
    cl.add_argument("--cc")
    cl.add_argument("--probe", action="store_true")
    cl.add_argument("--bulk", type=int, default=0)
    cl.add_argument("--iterations", type=int, default=0)
    cl.add_argument("--bytes", type=int, default=0)
    cl.add_argument("--gap-ms", type=float, default=20.0)
    cl.add_argument("--hint", action="store_true")
    cl.add_argument("--hint-job", action="store_true")
    cl.add_argument("--seed-job", type=int, help="mltcp.seed_job() before the first --hint-job")
    cl.add_argument("--hint-bytes", type=int, default=0,
                    help="bulk: hint one iteration of this many bytes first")
    cl.add_argument("--repairs", action="store_true",
                    help="report the socket's window repairs (libmltcp) before closing")
    cl.add_argument("--hold", type=float, default=0.0, help="seconds to keep the socket open")
    cl.add_argument("--pydir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                    "..", "..", "bpf", "python"))
    args = ap.parse_args()
    server(args) if args.cmd == "server" else client(args)


if __name__ == "__main__":
    main()
