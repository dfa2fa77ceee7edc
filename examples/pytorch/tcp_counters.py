# SPDX-License-Identifier: BSD-3-Clause
"""tcp_counters.py - the loss-recovery counters of this process's network
namespace (Linux's /proc/net/netstat, TcpExt), for the per-iteration columns
of the workload CSV.  The same fields as mltcp-emu's (tools/emu/netstat.cpp;
workload/iteration.h defines the columns): a counter whose fields the kernel
lacks, or an unreadable file, is None (an empty cell), never 0.  And as
mltcp-emu, window_repairs: the window guard's repairs on this process's own
MLTCP sockets (mltcp.window_repairs; the framework owns the sockets, so they
are found among the process's descriptors); None unless some socket uses
MLTCP's BPF datapath and the count can be read (root).
"""
import errno
import os

COLUMNS = ("rto", "recoveries", "tlp", "undo", "spurious_rto", "window_repairs")
FIELDS = {
    "rto": ("TCPTimeouts",),
    "recoveries": ("TCPSackRecovery", "TCPRenoRecovery"),
    "tlp": ("TCPLossProbes",),
    "undo": ("TCPFullUndo", "TCPPartialUndo", "TCPDSACKUndo", "TCPLossUndo"),
    "spurious_rto": ("TCPSpuriousRTOs",),
}


def read(path="/proc/net/netstat"):
    """{column: running total or None}."""
    tcpext = {}
    try:
        with open(path) as f:
            lines = [ln.split() for ln in f if ln.startswith("TcpExt:")]
        if len(lines) == 2 and len(lines[0]) == len(lines[1]):
            tcpext = {k: int(v) for k, v in zip(lines[0][1:], lines[1][1:])}
    except (OSError, ValueError):
        tcpext = {}
    out = {c: (sum(tcpext[f] for f in fs) if all(f in tcpext for f in fs) else None)
           for c, fs in FIELDS.items()}
    out["window_repairs"] = own_window_repairs()
    return out


def own_window_repairs(fd_dir="/proc/self/fd"):
    """The repairs summed over this process's MLTCP sockets, or None."""
    try:
        import mltcp  # bpf/python, on the path of ddp_train.py
    except ImportError:
        return None
    total, found = 0, False
    for name in os.listdir(fd_dir):
        try:
            if not os.readlink(os.path.join(fd_dir, name)).startswith("socket:"):
                continue
            total += mltcp.window_repairs(int(name))
            found = True
        except OSError as e:   # mltcp.MltcpError is one
            if isinstance(e, mltcp.MltcpError) and e.errno not in (errno.EOPNOTSUPP,
                                                                    errno.EBADF):
                return None    # MLTCP not loaded, no permission, an old libmltcp
            continue   # not an MLTCP socket, or closed meanwhile
    return total if found else None


def delta(start, end):
    """end - start per column; None when either is unknown or it went back."""
    return {c: (end[c] - start[c] if start[c] is not None and end[c] is not None
                and end[c] >= start[c] else None) for c in COLUMNS}


def iteration_cells(phase_starts, i, final):
    """Iteration i's CSV cells: the counters from its phase's start to the
    next known phase start (final: read after the last phase), "" where
    unknown.  phase_starts[i] is read() at iteration i's first all-reduce,
    None if it had none."""
    started = phase_starts[i]
    if started is None:
        return ("",) * len(COLUMNS)
    ended = next((c for c in phase_starts[i + 1:] if c is not None), final)
    losses = delta(started, ended)
    return tuple("" if losses[c] is None else losses[c] for c in COLUMNS)
