// SPDX-License-Identifier: GPL-2.0-only
//
// report.cc - mltcp-sim's table, files and RESULT line (report.h).
#include "report.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace mltcp_sim {

using ns3::CcName;

namespace {

std::string Json(double v) {
  if (!std::isfinite(v))
    return "null";
  std::ostringstream os;
  os.precision(6);
  os << v;
  return os.str();
}

}  // namespace

void PrintTable(const std::vector<JobPlan>& plan, const RunResult& res, const Summary& sum,
                double iso_wall) {
  const uint32_t njobs = static_cast<uint32_t>(plan.size());
  const auto& st = sum.jobs;
  const double util = sum.utilisation;
  std::printf("%-4s %-14s %10s %10s %10s %8s %8s\n", "job", "profile", "mean_ms", "p99_ms",
              "alone_ms", "mean_x", "p99_x");
  for (uint32_t j = 0; j < njobs; j++)
    std::printf("%-4u %-14s %10.3f %10.3f %10.3f %8.3f %8.3f\n", j, plan[j].profile.name.c_str(),
                st[j].mean_s * 1e3, st[j].p99_s * 1e3, st[j].iso_mean_s * 1e3, st[j].mean_ratio,
                st[j].p99_ratio);
  std::printf("utilisation %.3f  drops %llu  events %llu  wall %.2f s (+%.2f s isolated)\n", util,
              static_cast<unsigned long long>(res.drops),
              static_cast<unsigned long long>(res.events), res.wall_s, iso_wall);
}

void WriteFiles(const Options& o, CcKind cc, const std::vector<JobPlan>& plan,
                const RunResult& res, const Summary& sum, uint32_t warmup, double iso_wall) {
  const uint32_t njobs = static_cast<uint32_t>(plan.size());
  const auto& st = sum.jobs;
  const auto& overlaps = sum.overlaps;
  const double mean_ratio = sum.mean_ratio, p99_ratio = sum.p99_ratio;
  const double util = sum.utilisation, bulk_share = sum.bulk_share;
  const double events_per_s = sum.events_per_s;
  const int interleaved_at = sum.interleaved_at;
  std::ofstream csv(o.out + ".csv");
  if (!csv)
    Fail("cannot write " + o.out + ".csv");
  csv << "job,profile,iteration,start_s,comm_start_s,comm_end_s,end_s,bytes,overlap\n";
  csv.precision(9);
  for (uint32_t j = 0; j < njobs; j++)
    for (size_t i = 0; i < res.records[j].size(); i++) {
      const auto& r = res.records[j][i];
      csv << j << ',' << plan[j].profile.name << ',' << r.iter << ',' << r.start_s << ','
          << r.comm_start_s << ',' << r.comm_end_s << ',' << r.end_s << ',' << r.bytes << ','
          << overlaps[j][i] << '\n';
    }
  std::ofstream js(o.out + ".json");
  if (!js)
    Fail("cannot write " + o.out + ".json");
  js << "{\n  \"cc\": \"" << CcName(cc) << "\", \"topology\": \"" << o.topology
     << "\", \"jobs\": " << njobs << ", \"link_gbps\": " << Json(o.link_gbps)
     << ", \"iterations\": " << o.iterations << ", \"warmup\": " << warmup
     << ", \"seed\": " << o.seed << ", \"mix\": \"" << o.mix << "\",\n"
     << "  \"keep_running\": " << (o.keep_running ? "true" : "false") << ",\n"
     << "  \"mean_ratio\": " << Json(mean_ratio) << ", \"p99_ratio\": " << Json(p99_ratio)
     << ", \"interleaved_at\": " << (interleaved_at < 0 ? "null" : std::to_string(interleaved_at))
     << ", \"utilisation\": " << Json(util) << ", \"drops\": " << res.drops
     << ", \"bulk_fair_share\": " << Json(bulk_share) << ",\n"
     << "  \"sim_s\": " << Json(res.sim_end_s) << ", \"wall_s\": " << Json(res.wall_s)
     << ", \"isolated_wall_s\": " << Json(iso_wall) << ", \"events\": " << res.events
     << ", \"events_per_s\": " << Json(events_per_s) << ", \"cnps\": " << res.cnps << ",\n"
     << "  \"per_job\": [\n";
  for (uint32_t j = 0; j < njobs; j++)
    js << "    {\"job\": " << j << ", \"profile\": \"" << plan[j].profile.name
       << "\", \"mean_s\": " << Json(st[j].mean_s) << ", \"p99_s\": " << Json(st[j].p99_s)
       << ", \"isolated_mean_s\": " << Json(st[j].iso_mean_s)
       << ", \"mean_ratio\": " << Json(st[j].mean_ratio)
       << ", \"p99_ratio\": " << Json(st[j].p99_ratio)
       << ", \"extra_iterations\": " << res.extra_iterations[j] << "}" << (j + 1 < njobs ? "," : "")
       << "\n";
  js << "  ]\n}\n";
}

void PrintResult(CcKind cc, const Options& o, const RunResult& res, const Summary& sum,
                 uint32_t njobs) {
  const double mean_ratio = sum.mean_ratio, p99_ratio = sum.p99_ratio;
  const double util = sum.utilisation, bulk_share = sum.bulk_share;
  const double events_per_s = sum.events_per_s;
  const int interleaved_at = sum.interleaved_at;
  std::printf("RESULT sim cc=%s jobs=%u topology=%s link_gbps=%g mean_ratio=%.3f p99_ratio=%.3f "
              "interleaved_at=%s utilisation=%.3f drops=%llu bulk_share=%.3f wall_s=%.2f "
              "events=%llu events_per_s=%.0f\n",
              CcName(cc), njobs, o.topology.c_str(), o.link_gbps, mean_ratio, p99_ratio,
              interleaved_at < 0 ? "none" : std::to_string(interleaved_at).c_str(), util,
              static_cast<unsigned long long>(res.drops), bulk_share, res.wall_s,
              static_cast<unsigned long long>(res.events), events_per_s);
}

}  // namespace mltcp_sim
