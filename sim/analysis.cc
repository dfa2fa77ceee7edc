// SPDX-License-Identifier: GPL-2.0-only
//
// analysis.cc - mltcp-sim's statistics of a run (analysis.h).
#include "analysis.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "stats.h"

namespace mltcp_sim {

namespace {

int64_t Us(double s) { return static_cast<int64_t>(std::llround(s * 1e6)); }

// Dumbbell: every job contends with every other (one bottleneck);
// leaf-spine: jobs contend when their flows cross a common fabric link
// (hosts are never shared), so jobs on disjoint paths may overlap in time
// freely.
bool Contend(const RunResult& r, size_t a, size_t b) {
  if (r.job_links.empty())
    return true;
  for (uint32_t l : r.job_links[a])
    if (r.job_links[b].count(l))
      return true;
  return false;
}

double BulkFairBytes(const RunResult& r, double link_bps) {
  std::vector<std::pair<double, int>> ev;
  for (const auto& job : r.records)
    for (const auto& it : job) {
      ev.emplace_back(std::max(it.comm_start_s, r.bulk_start_s), +1);
      ev.emplace_back(std::max(it.comm_end_s, r.bulk_start_s), -1);
    }
  for (const auto& job : r.background)
    for (const auto& iv : job) {
      ev.emplace_back(std::max(iv.first, r.bulk_start_s), +1);
      ev.emplace_back(std::max(iv.second, r.bulk_start_s), -1);
    }
  ev.emplace_back(r.bulk_start_s, 0);
  ev.emplace_back(r.bulk_end_s, 0);
  std::sort(ev.begin(), ev.end());
  double fair = 0, t = r.bulk_start_s;
  int active = 0;
  for (const auto& e : ev) {
    const double now = std::min(e.first, r.bulk_end_s);
    if (now > t)
      fair += (now - t) * link_bps / 8 / (1 + active);
    t = std::max(t, now);
    active += e.second;
  }
  return fair;
}

}  // namespace

std::vector<mltcp_workload::JobIterations> JobIterationsOf(const RunResult& r) {
  std::vector<mltcp_workload::JobIterations> jobs;
  for (size_t j = 0; j < r.records.size(); j++) {
    mltcp_workload::JobIterations ji{std::to_string(j), {}};
    for (const auto& it : r.records[j])
      ji.iterations.push_back(
          {it.bytes, Us(it.start_s), Us(it.comm_start_s), Us(it.comm_end_s), Us(it.end_s)});
    jobs.push_back(std::move(ji));
  }
  return jobs;
}

double IsolatedMeanUs(const RunResult& r, uint32_t warmup) {
  std::vector<double> t;
  for (const auto& it : JobIterationsOf(r)[0].iterations)
    t.push_back(static_cast<double>(it.end_us - it.start_us));
  return mltcp_workload::iter_stats(t, warmup).mean_us;
}

Summary Analyse(const Options& o, const std::vector<JobPlan>& plan, const RunResult& res,
                const std::map<std::string, double>& iso_mean_us, uint32_t warmup) {
  Summary sum;
  sum.jobs = JobIterationsOf(res);
  std::vector<double> iso;
  if (o.isolated)
    for (const auto& p : plan)
      iso.push_back(iso_mean_us.at(p.profile.name));
  // A job that has done its iterations and keeps running contends too.
  mltcp_workload::Contention c;
  for (const auto& job : res.background) {
    c.background.emplace_back();
    for (const auto& b : job)
      c.background.back().push_back({Us(b.first), Us(b.second)});
  }
  c.contend = [&res](size_t a, size_t b) { return Contend(res, a, b); };
  sum.metrics = mltcp_workload::run_metrics(sum.jobs, iso, warmup, c);
  // Utilisation window: from the first communication (or the bulk flow's
  // start) to the last iteration's end (or the bulk flow's end).
  double t0 = o.bulk ? res.bulk_start_s : 1e300, t1 = o.bulk ? res.bulk_end_s : 0;
  for (const auto& job : res.records)
    for (const auto& r : job) {
      t0 = std::min(t0, r.comm_start_s);
      t1 = std::max(t1, r.end_s);
    }
  // Dumbbell: the bottleneck's; leaf-spine: the mean over leaf -> spine links.
  const double link_bytes = res.uplinks ? static_cast<double>(res.uplink_bytes) / res.uplinks
                                        : static_cast<double>(res.bottleneck_bytes);
  sum.utilisation =
      link_bytes > 0 && t1 > t0 ? link_bytes * 8 / (o.link_gbps * 1e9) / (t1 - t0) : NAN;
  sum.bulk_share = NAN;
  if (o.bulk && res.bulk_end_s > res.bulk_start_s)
    sum.bulk_share = static_cast<double>(res.bulk_bytes) / BulkFairBytes(res, o.link_gbps * 1e9);
  sum.events_per_s = res.wall_s > 0 ? static_cast<double>(res.events) / res.wall_s : 0;
  return sum;
}

}  // namespace mltcp_sim
