// SPDX-License-Identifier: GPL-2.0-only
//
// report.h - mltcp-sim's outputs: the per-job table, PREFIX.csv (one row
// per iteration) and PREFIX.json (the summary), and the RESULT line.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis.h"
#include "options.h"
#include "scenario.h"

namespace mltcp_sim {

// The human-readable table (skipped with --quiet).
void PrintTable(const std::vector<JobPlan>& plan, const RunResult& res, const Summary& sum,
                double iso_wall);

// --out PREFIX: PREFIX.csv and PREFIX.json.
void WriteFiles(const Options& o, CcKind cc, const std::vector<JobPlan>& plan,
                const RunResult& res, const Summary& sum, uint32_t warmup, double iso_wall);

void PrintResult(CcKind cc, const Options& o, const RunResult& res, const Summary& sum,
                 uint32_t njobs);

}  // namespace mltcp_sim
