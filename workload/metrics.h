// metrics.h - the metrics of a run of training jobs, the one implementation
// the emulator's benchmarks (tools/bench/interleave.py through mltcp-metrics),
// the simulator and the simulator-versus-host validation use:
//
//   ratio           a job's mean (p99, nearest rank) iteration time after the
//                   warm-up over its isolated mean iteration time; a run's
//                   mean_ratio is the mean over its jobs, its p99_ratio the
//                   largest job's.  Given the job's isolated time per
//                   iteration size (IsoBySize), each iteration counts against
//                   the isolated time of its own size: the mean and p99 of
//                   those ratios (the same for a job of one size; for one
//                   whose sizes vary by design, such as the tag profile's
//                   cycle, the p99 over the mean alone would be its largest
//                   size's, not a tail);
//   overlap         of a communication phase: the fraction of it during
//                   which a contending job's communication phase is active;
//   interleaved_at  the first iteration k of the first job such that every
//                   communication phase of any job that intersects the
//                   window [comm_start(k), comm_end(k + kCleanRun - 1)] has
//                   overlap < kOverlapClean: kCleanRun consecutive iterations
//                   without contention (-1: never);
//   after           the ratios over the iterations that start once the
//                   schedule is interleaved;
//   losses          per job, the loss-recovery counters of its iterations
//                   after the warm-up (Iteration::loss): totals, per 100
//                   iterations, and which iterations had an RTO; for the
//                   run, the same over all its jobs' iterations.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
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

// Loss recoveries over a set of iterations (LossCounters, iteration.h).
struct LossSummary {
	size_t iterations = 0;	// iterations summed over
	// Per counter (kLossCounterNames order): the sum, kCounterUnknown if any
	// iteration lacks it (or there are none); per 100 iterations, NaN then.
	int64_t total[kLossCounterCount];
	double per_100_iter[kLossCounterCount];
	std::vector<size_t> rto_iterations;	// iteration numbers with rto > 0
	// RTOs in iterations without a window repair: the ones a host that
	// corrupts no window would have had too (kCounterUnknown, NaN: rto or
	// window_repairs unknown in some iteration).
	int64_t rto_unrepaired = kCounterUnknown;
	double rto_unrepaired_per_100_iter;
	LossSummary();
};

// Over a job's iterations after the first `warmup` (all of them when it has
// no more than that, as the iteration statistics).
LossSummary loss_summary(const std::vector<Iteration> &its, size_t warmup);

// Over several jobs: totals and iterations add up (a counter unknown in one
// of them is unknown); rto_iterations stays empty (iteration numbers are
// per job).
LossSummary combine_losses(const std::vector<LossSummary> &jobs);

// Adds another rank's counters to a job's, iteration by iteration: a ring
// job's ranks run in namespaces of their own, its CSV (rank 0's) counts only
// rank 0's.  A counter unknown in either is unknown.  Throws
// IterationCsvError when the ranks recorded different numbers of iterations.
void add_rank_losses(JobIterations &job, const JobIterations &rank);

struct JobMetrics {
	size_t iterations = 0;
	double mean_us = 0, p99_us = 0;	// after the warm-up
	double iso_mean_us = 0;		// 0: no isolated run
	double mean_ratio = 0, p99_ratio = 0;	// NaN without an isolated run
	// p99_ratio over the iterations without a window repair (NaN: none, no
	// isolated run, or window_repairs unknown in one of them)
	double p99_ratio_unrepaired = NAN;
	double overlap_mean = 0;	// after the warm-up
	LossSummary losses;		// after the warm-up
};

struct RunMetrics {
	std::vector<JobMetrics> jobs;
	std::vector<std::vector<double>> overlaps;
	double mean_ratio = 0, p99_ratio = 0;	// NaN if no job has an isolated run
	double p99_ratio_unrepaired = NAN;	// the largest job's; NaN if one's is
	double overlap_mean = 0;
	int interleaved_at = -1;
	bool have_after = false;	// the after ratios below exist
	double mean_ratio_after = 0, p99_ratio_after = 0;
	LossSummary losses;	// every job's iterations after the warm-up
};

// A job's isolated iteration time per iteration size (bytes -> us).
using IsoBySize = std::map<uint64_t, double>;

// The mean time of an isolated run's iterations of each size, after the
// warm-up (all of them when it has no more than that).
IsoBySize iso_size_means(const JobIterations &iso_run, size_t warmup);

// `iso_mean_us[j]`: job j's isolated mean iteration time (<= 0: none; may be
// empty).  `iso_by_size[j]` (may be empty or shorter): job j's isolated time
// per iteration size; an iteration of a size it lacks counts against
// iso_mean_us[j].  The warm-up leaves out each job's first `warmup`
// iterations (none when it has no more than that).
RunMetrics run_metrics(const std::vector<JobIterations> &jobs,
		       const std::vector<double> &iso_mean_us, size_t warmup,
		       const Contention &c = {}, const std::vector<IsoBySize> &iso_by_size = {});

}  // namespace mltcp_workload
