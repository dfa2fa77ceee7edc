// SPDX-License-Identifier: GPL-2.0-only
//
// analysis.h - what mltcp-sim reports about a run.  The ratios to the jobs
// alone, the overlap of communication phases and interleaved_at are the
// workload library's (workload/metrics.h), the same code the host
// benchmarks use through mltcp-metrics; this file adds what only a
// simulation knows: the unrecorded phases of jobs that kept running, which
// jobs share a fabric link, the link utilisation and the bulk flow's share
// of its fair bytes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "iteration.h"
#include "metrics.h"
#include "options.h"
#include "scenario.h"

namespace mltcp_sim {

struct Summary {
  std::vector<mltcp_workload::JobIterations> jobs;  // the recorded iterations, in us
  mltcp_workload::RunMetrics metrics;               // ratios NaN without isolated runs
  double utilisation = 0;
  double bulk_share = 0;  // NaN without a bulk flow
  double events_per_s = 0;
};

// A run's recorded iterations in the workload record (simulated us); job j
// is named "j".
std::vector<mltcp_workload::JobIterations> JobIterationsOf(const RunResult& r);

// Mean iteration time (us) of a run's first job after `warmup` iterations.
double IsolatedMeanUs(const RunResult& r, uint32_t warmup);

// `iso_mean_us`: each profile's mean iteration time alone (empty when
// o.isolated is off).
Summary Analyse(const Options& o, const std::vector<JobPlan>& plan, const RunResult& res,
                const std::map<std::string, double>& iso_mean_us, uint32_t warmup);

}  // namespace mltcp_sim
