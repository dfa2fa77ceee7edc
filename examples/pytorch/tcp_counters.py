# SPDX-License-Identifier: BSD-3-Clause
"""tcp_counters.py - the loss-recovery counters of this process's network
namespace (Linux's /proc/net/netstat, TcpExt), for the per-iteration columns
of the workload CSV.  The same fields as mltcp-emu's (tools/emu/netstat.cpp;
workload/iteration.h defines the columns): a counter whose fields the kernel
lacks, or an unreadable file, is None (an empty cell), never 0.
"""

COLUMNS = ("rto", "recoveries", "tlp", "undo", "spurious_rto")
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
    return {c: (sum(tcpext[f] for f in fs) if all(f in tcpext for f in fs) else None)
            for c, fs in FIELDS.items()}


def delta(start, end):
    """end - start per column; None when either is unknown or it went back."""
    return {c: (end[c] - start[c] if start[c] is not None and end[c] is not None
                and end[c] >= start[c] else None) for c in COLUMNS}
