// SPDX-License-Identifier: GPL-2.0-only
//
// analysis.cc - mltcp-sim's statistics of a run (analysis.h).
#include "analysis.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace mltcp_sim {

namespace {

double Percentile(std::vector<double> v, double q) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

std::vector<double> IterTimes(const std::vector<IterationRecord>& r, uint32_t warmup) {
  std::vector<double> t;
  for (size_t i = warmup; i < r.size(); i++)
    t.push_back(r[i].end_s - r[i].start_s);
  return t;
}

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v)
    s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

// Fraction of [a, b] covered by the union of `others`.
double Covered(double a, double b, std::vector<std::pair<double, double>> others) {
  std::sort(others.begin(), others.end());
  double covered = 0, cur = a;
  for (const auto& iv : others) {
    const double lo = std::max(iv.first, cur), hi = std::min(iv.second, b);
    if (hi > lo) {
      covered += hi - lo;
      cur = hi;
    }
  }
  return b > a ? covered / (b - a) : 0;
}

// Per job and iteration: the share of its communication phase that overlaps
// the communication of another job it contends with.  The schedule is
// interleaved from iteration k on when every job's iterations from k on
// overlap by less than 10%.  Dumbbell: every job contends with every other
// (one bottleneck); leaf-spine: jobs contend when their flows cross a common
// fabric link (hosts are never shared), so jobs on disjoint paths may
// overlap in time freely.
constexpr double kInterleavedOverlap = 0.10;

bool Contend(const RunResult& r, size_t a, size_t b) {
  if (r.job_links.empty())
    return true;
  for (uint32_t l : r.job_links[a])
    if (r.job_links[b].count(l))
      return true;
  return false;
}

std::vector<std::vector<double>> Overlaps(const RunResult& res) {
  const auto& recs = res.records;
  std::vector<std::vector<double>> out(recs.size());
  for (size_t j = 0; j < recs.size(); j++) {
    for (const auto& r : recs[j]) {
      std::vector<std::pair<double, double>> others;
      for (size_t k = 0; k < recs.size(); k++) {
        if (k == j || !Contend(res, j, k))
          continue;
        for (const auto& o : recs[k])
          if (o.comm_end_s > r.comm_start_s && o.comm_start_s < r.comm_end_s)
            others.emplace_back(o.comm_start_s, o.comm_end_s);
        // A job that has done its iterations and keeps running contends too.
        if (k < res.background.size())
          for (const auto& b : res.background[k])
            if (b.second > r.comm_start_s && b.first < r.comm_end_s)
              others.push_back(b);
      }
      out[j].push_back(Covered(r.comm_start_s, r.comm_end_s, others));
    }
  }
  return out;
}

int InterleavedAt(const std::vector<std::vector<double>>& ov) {
  if (ov.size() < 2)
    return -1;
  size_t n = SIZE_MAX;
  for (const auto& v : ov)
    n = std::min(n, v.size());
  if (n == 0 || n == SIZE_MAX)
    return -1;
  int at = -1;
  for (int k = static_cast<int>(n) - 1; k >= 0; k--) {
    bool clean = true;
    for (const auto& v : ov)
      clean = clean && v[static_cast<size_t>(k)] < kInterleavedOverlap;
    if (!clean)
      break;
    at = k;
  }
  // The last iteration alone being clean is not a schedule.
  return at >= 0 && static_cast<size_t>(at) + 2 <= n ? at : -1;
}

// Max-min fair bytes of the bulk flow: the link shared with every job in its
// communication phase (an upper bound on what the jobs can take from it).
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

double IsolatedMean(const RunResult& r, uint32_t warmup) {
  return Mean(IterTimes(r.records[0], warmup));
}

Summary Analyse(const Options& o, const std::vector<JobPlan>& plan, const RunResult& res,
                const std::map<std::string, double>& iso_mean, uint32_t warmup) {
  Summary sum;
  const uint32_t njobs = static_cast<uint32_t>(plan.size());
  auto& st = sum.jobs;
  st.resize(njobs);
  std::vector<double> pooled_ratio;
  double mean_ratio_sum = 0;
  for (uint32_t j = 0; j < njobs; j++) {
    const auto t = IterTimes(res.records[j], warmup);
    st[j].mean_s = Mean(t);
    st[j].p99_s = Percentile(t, 0.99);
    if (o.isolated) {
      st[j].iso_mean_s = iso_mean.at(plan[j].profile.name);
      st[j].mean_ratio = st[j].mean_s / st[j].iso_mean_s;
      st[j].p99_ratio = st[j].p99_s / st[j].iso_mean_s;
      mean_ratio_sum += st[j].mean_ratio;
      for (double x : t)
        pooled_ratio.push_back(x / st[j].iso_mean_s);
    }
  }
  sum.mean_ratio = o.isolated ? mean_ratio_sum / njobs : NAN;
  sum.p99_ratio = o.isolated ? Percentile(pooled_ratio, 0.99) : NAN;
  sum.overlaps = Overlaps(res);
  sum.interleaved_at = InterleavedAt(sum.overlaps);
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
