// iteration.h - the per-iteration record of a training job and its CSV, the
// one schema every workload tool writes (mltcp-emu send/ring, mltcp-dpdk emu,
// mltcp-rdma, mltcp-sim) and the benchmarks and mltcp-metrics read:
//
//   job,iteration,bytes,start_us,comm_start_us,comm_end_us,end_us,
//   rto,recoveries,tlp,undo,spurious_rto,window_repairs
//
// one row per iteration, times in microseconds from the run's time origin
// (t0: CLOCK_REALTIME --t0-us on the host, simulated time 0 in ns-3).  The
// last six columns count the loss recoveries and window repairs during the
// iteration's communication phase (LossCounters); a cell is empty when the
// tool cannot tell (all but mltcp-emu on Linux and the PyTorch example's
// ddp_train.py).  The reader also accepts the older headers of 7 columns (no
// counters: all unknown) and 12 (no window_repairs: unknown).
#pragma once

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace mltcp_workload {

// The host tools' clock for these records: CLOCK_REALTIME in microseconds,
// so that jobs started as separate processes share one time origin
// (--start-at-us, --t0-us).
uint64_t realtime_us();

// A counter a tool could not read (an older kernel without the field, or a
// datapath that does not count it).
constexpr int64_t kCounterUnknown = -1;

// Loss recoveries during one communication phase: differences of the TCP
// counters of the job's network namespace (Linux's /proc/net/netstat,
// TcpExt) between the phase's start and end, so they count every socket of
// that namespace (the benchmarks give each job, each ring rank, its own):
//   rto           retransmission timeouts (TCPTimeouts)
//   recoveries    fast-retransmit recoveries (TCPSackRecovery + TCPRenoRecovery)
//   tlp           tail-loss probes sent (TCPLossProbes)
//   undo          recoveries undone as spurious (TCPFullUndo + TCPPartialUndo +
//                 TCPDSACKUndo + TCPLossUndo)
//   spurious_rto  of the undone, RTOs that F-RTO found spurious (TCPSpuriousRTOs;
//                 they are counted in undo, as TCPLossUndo, too)
// and one of the job's own sending sockets, not of the namespace:
//   window_repairs  corrupted cwnd/ssthresh values MLTCP's BPF datapath
//                 repaired on them (libmltcp's mltcp_socket_window_repairs;
//                 unknown for any other congestion control)
// kCounterUnknown where unknown.
struct LossCounters {
	int64_t rto = kCounterUnknown;
	int64_t recoveries = kCounterUnknown;
	int64_t tlp = kCounterUnknown;
	int64_t undo = kCounterUnknown;
	int64_t spurious_rto = kCounterUnknown;
	int64_t window_repairs = kCounterUnknown;
};

constexpr size_t kLossCounterCount = 6;
extern const char *const kLossCounterNames[kLossCounterCount];	// the CSV column names
// Counter i (0 <= i < kLossCounterCount) in the order of kLossCounterNames.
int64_t &loss_counter(LossCounters &c, size_t i);
int64_t loss_counter(const LossCounters &c, size_t i);

// One iteration: compute from start_us, communication from comm_start_us
// (first byte released) to comm_end_us (every byte confirmed), end at end_us.
// All four on one clock, in microseconds.
struct Iteration {
	Iteration() = default;
	// The times as brace lists give them ({bytes, start, comm_start,
	// comm_end, end}); the counters stay unknown unless given.
	Iteration(uint64_t bytes_, int64_t start, int64_t comm_start, int64_t comm_end, int64_t end,
		  LossCounters loss_ = {})
	    : bytes(bytes_), start_us(start), comm_start_us(comm_start), comm_end_us(comm_end),
	      end_us(end), loss(loss_)
	{
	}
	uint64_t bytes = 0;
	int64_t start_us = 0;
	int64_t comm_start_us = 0;
	int64_t comm_end_us = 0;
	int64_t end_us = 0;
	LossCounters loss;	// during the communication phase; unknown by default
};

// A job's recorded iterations, in order (iteration i is iterations[i]).
struct JobIterations {
	std::string job;
	std::vector<Iteration> iterations;
};

extern const char kIterationCsvHeader[];	// the header line, without '\n'
extern const char kIterationCsvHeaderV2[];	// the 12-column header the reader also takes
extern const char kIterationCsvHeaderV1[];	// the 7-column header the reader also takes

// Writes the header line.
void write_iteration_csv_header(FILE *f);

// Writes one row per iteration of `job`, times relative to t0_us.
void write_iteration_csv_rows(FILE *f, const std::string &job, const std::vector<Iteration> &its,
			      int64_t t0_us);

// The whole file for one job: header and rows.  Returns "" or the reason it
// could not be written (naming the path).
std::string write_iteration_csv(const std::string &path, const std::string &job,
				const std::vector<Iteration> &its, int64_t t0_us);

// A CSV that is not in the schema: names the file, the line and the column.
class IterationCsvError : public std::runtime_error {
      public:
	using std::runtime_error::runtime_error;
};

// Reads a CSV of the schema (one or more jobs, in the order they first
// appear; a job's rows must come with consecutive iterations from 0).
std::vector<JobIterations> read_iteration_csv(const std::string &path);
std::vector<JobIterations> parse_iteration_csv(const std::string &text,
					       const std::string &origin);

}  // namespace mltcp_workload
