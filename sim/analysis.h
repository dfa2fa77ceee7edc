// SPDX-License-Identifier: GPL-2.0-only
//
// analysis.h - what mltcp-sim reports about a run: per-job mean and p99
// iteration times and their ratios to the job alone, the overlap of the
// jobs' communication phases and the iteration from which they interleave,
// the link utilisation and the bulk flow's share of its fair bytes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "options.h"
#include "scenario.h"

namespace mltcp_sim {

struct JobStats {
  double mean_s = 0, p99_s = 0;
  double iso_mean_s = 0;
  double mean_ratio = 0, p99_ratio = 0;
};

struct Summary {
  std::vector<JobStats> jobs;
  double mean_ratio = 0, p99_ratio = 0;  // NaN without isolated runs
  std::vector<std::vector<double>> overlaps;  // per job and iteration
  int interleaved_at = -1;                    // -1: never
  double utilisation = 0;
  double bulk_share = 0;  // NaN without a bulk flow
  double events_per_s = 0;
};

// Mean iteration time of a run's first job after `warmup` iterations.
double IsolatedMean(const RunResult& r, uint32_t warmup);

// `iso_mean`: each profile's mean iteration time alone (empty when
// o.isolated is off).
Summary Analyse(const Options& o, const std::vector<JobPlan>& plan, const RunResult& res,
                const std::map<std::string, double>& iso_mean, uint32_t warmup);

}  // namespace mltcp_sim
