// iteration.h - the per-iteration record of a training job and its CSV, the
// one schema every workload tool writes (mltcp-emu send/ring, mltcp-dpdk emu,
// mltcp-rdma, mltcp-sim) and the benchmarks and mltcp-metrics read:
//
//   job,iteration,bytes,start_us,comm_start_us,comm_end_us,end_us
//
// one row per iteration, times in microseconds from the run's time origin
// (t0: CLOCK_REALTIME --t0-us on the host, simulated time 0 in ns-3).
#pragma once

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace mltcp_workload {

// One iteration: compute from start_us, communication from comm_start_us
// (first byte released) to comm_end_us (every byte confirmed), end at end_us.
// All four on one clock, in microseconds.
struct Iteration {
	uint64_t bytes = 0;
	int64_t start_us = 0;
	int64_t comm_start_us = 0;
	int64_t comm_end_us = 0;
	int64_t end_us = 0;
};

// A job's recorded iterations, in order (iteration i is iterations[i]).
struct JobIterations {
	std::string job;
	std::vector<Iteration> iterations;
};

extern const char kIterationCsvHeader[];	// the header line, without '\n'

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
