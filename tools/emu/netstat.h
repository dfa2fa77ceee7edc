// netstat.h - the TCP loss-recovery counters of this process's network
// namespace, read from Linux's /proc/net/netstat (the TcpExt section) at the
// start and end of every communication phase; their differences are the
// per-iteration LossCounters of the CSV (workload/iteration.h).
//
// /proc/net/netstat shows the namespace of the reading process, and its
// counters count every socket in it: a job's figures are its own only when
// the job has the namespace to itself (the benchmarks give every job, and
// every rank of a ring job, its own).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "iteration.h"

namespace mltcp_emu {

// Counter name -> value of one section of /proc/net/netstat.
using NetstatSection = std::map<std::string, int64_t>;

// The `section` ("TcpExt") of /proc/net/netstat's text: a line
// "TcpExt: Name1 Name2 ..." followed by "TcpExt: v1 v2 ...", fields matched
// by name, so any order and any set of fields works.  A section whose lines
// do not pair up (count or numbers) is returned empty.
NetstatSection parse_netstat_section(const std::string &text, const std::string &section);

// The loss counters as running totals: each is the sum of its TcpExt fields
// (iteration.h says which); kCounterUnknown when one of them is missing (an
// older kernel), never 0 for a field that is not there.
mltcp_workload::LossCounters loss_totals(const NetstatSection &tcpext);

// end - start per counter; unknown when either is unknown or the counter
// went backwards (it cannot, unless the namespace changed between the reads).
mltcp_workload::LossCounters loss_delta(const mltcp_workload::LossCounters &start,
					const mltcp_workload::LossCounters &end);

// loss_totals() of this namespace now (all unknown if /proc/net/netstat
// cannot be read).
mltcp_workload::LossCounters read_loss_totals(const char *path = "/proc/net/netstat");

}  // namespace mltcp_emu
