// metrics.h - the metrics of a run of training jobs, the one implementation
// the emulator's benchmarks (tools/bench/interleave.py through mltcp-metrics),
// the simulator and the simulator-versus-host validation use:
//
//   ratio           a job's mean (p99, nearest rank) iteration time after the
//                   warm-up over its isolated mean iteration time; a run's
//                   mean_ratio is the mean over its jobs, its p99_ratio the
//                   largest job's;
//   overlap         of a communication phase: the fraction of it during
//                   which a contending job's communication phase is active;
//   interleaved_at  the first iteration k of the first job such that every
//                   communication phase of any job that intersects the
//                   window [comm_start(k), comm_end(k + kCleanRun - 1)] has
//                   overlap < kOverlapClean: kCleanRun consecutive iterations
//                   without contention (-1: never);
//   after           the ratios over the iterations that start once the
//                   schedule is interleaved.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "iteration.h"

namespace mltcp_workload {

constexpr double kOverlapClean = 0.10;	// less overlap: the phase ran alone
constexpr size_t kCleanRun = 3;		// consecutive clean iterations

struct Phase {
	int64_t start_us, end_us;
};

// Fraction of `iv` covered by the union of `others`.
double overlap_fraction(Phase iv, const std::vector<Phase> &others);

// What a job's phases contend with besides the recorded iterations of the
// other jobs: `background[j]` are communication phases of job j that were
// not recorded (a simulated job that kept running after its iterations);
// `contend(a, b)` says whether jobs a and b share a link (empty: every job
// shares one bottleneck).
struct Contention {
	std::vector<std::vector<Phase>> background;
	std::function<bool(size_t, size_t)> contend;
};

// Per job and recorded iteration: the overlap of its communication phase.
std::vector<std::vector<double>> phase_overlaps(const std::vector<JobIterations> &jobs,
						const Contention &c = {});

// interleaved_at as above; -1 when never or with fewer than two jobs.
int interleaved_at(const std::vector<JobIterations> &jobs,
		   const std::vector<std::vector<double>> &overlaps);

struct JobMetrics {
	size_t iterations = 0;
	double mean_us = 0, p99_us = 0;	// after the warm-up
	double iso_mean_us = 0;		// 0: no isolated run
	double mean_ratio = 0, p99_ratio = 0;	// NaN without an isolated run
	double overlap_mean = 0;	// after the warm-up
};

struct RunMetrics {
	std::vector<JobMetrics> jobs;
	std::vector<std::vector<double>> overlaps;
	double mean_ratio = 0, p99_ratio = 0;	// NaN if no job has an isolated run
	double overlap_mean = 0;
	int interleaved_at = -1;
	bool have_after = false;	// the after ratios below exist
	double mean_ratio_after = 0, p99_ratio_after = 0;
};

// `iso_mean_us[j]`: job j's isolated mean iteration time (<= 0: none; may be
// empty).  The warm-up leaves out each job's first `warmup` iterations
// (none when it has no more than that).
RunMetrics run_metrics(const std::vector<JobIterations> &jobs,
		       const std::vector<double> &iso_mean_us, size_t warmup,
		       const Contention &c = {});

}  // namespace mltcp_workload
