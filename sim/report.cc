// SPDX-License-Identifier: GPL-2.0-only
//
// report.cc - mltcp-sim's table, files and RESULT line (report.h).
#include "report.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "iteration.h"

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
  std::printf("%-4s %-14s %10s %10s %10s %8s %8s\n", "job", "profile", "mean_ms", "p99_ms",
              "alone_ms", "mean_x", "p99_x");
  for (size_t j = 0; j < plan.size(); j++) {
    const auto& jm = sum.metrics.jobs[j];
    std::printf("%-4zu %-14s %10.3f %10.3f %10.3f %8.3f %8.3f\n", j, plan[j].profile.name.c_str(),
                jm.mean_us * 1e-3, jm.p99_us * 1e-3, jm.iso_mean_us * 1e-3, jm.mean_ratio,
                jm.p99_ratio);
  }
  std::printf("utilisation %.3f  drops %llu  events %llu  wall %.2f s (+%.2f s isolated)\n",
              sum.utilisation, static_cast<unsigned long long>(res.drops),
              static_cast<unsigned long long>(res.events), res.wall_s, iso_wall);
}

void WriteFiles(const Options& o, CcKind cc, const std::vector<JobPlan>& plan,
                const RunResult& res, const Summary& sum, uint32_t warmup, double iso_wall) {
  const size_t njobs = plan.size();
  const auto& m = sum.metrics;
  // PREFIX.csv: the per-iteration schema of every workload tool
  // (workload/iteration.h), simulated microseconds from 0, job j named "j".
  FILE* csv = std::fopen((o.out + ".csv").c_str(), "w");
  if (!csv)
    Fail("cannot write " + o.out + ".csv");
  mltcp_workload::write_iteration_csv_header(csv);
  for (const auto& job : sum.jobs)
    mltcp_workload::write_iteration_csv_rows(csv, job.job, job.iterations, 0);
  if (std::fclose(csv) != 0)
    Fail("write error on " + o.out + ".csv");
  std::ofstream js(o.out + ".json");
  if (!js)
    Fail("cannot write " + o.out + ".json");
  js << "{\n  \"cc\": \"" << CcName(cc) << "\", \"topology\": \"" << o.topology
     << "\", \"jobs\": " << njobs << ", \"link_gbps\": " << Json(o.link_gbps)
     << ", \"iterations\": " << o.iterations << ", \"warmup\": " << warmup
     << ", \"seed\": " << o.seed << ", \"mix\": \"" << o.mix << "\",\n"
     << "  \"keep_running\": " << (o.keep_running ? "true" : "false") << ",\n"
     << "  \"mean_ratio\": " << Json(m.mean_ratio) << ", \"p99_ratio\": " << Json(m.p99_ratio)
     << ", \"interleaved_at\": "
     << (m.interleaved_at < 0 ? "null" : std::to_string(m.interleaved_at))
     << ", \"overlap_mean\": " << Json(m.overlap_mean)
     << ", \"mean_ratio_after\": " << (m.have_after ? Json(m.mean_ratio_after) : "null")
     << ", \"p99_ratio_after\": " << (m.have_after ? Json(m.p99_ratio_after) : "null") << ",\n"
     << "  \"utilisation\": " << Json(sum.utilisation) << ", \"drops\": " << res.drops
     << ", \"bulk_fair_share\": " << Json(sum.bulk_share) << ",\n"
     << "  \"sim_s\": " << Json(res.sim_end_s) << ", \"wall_s\": " << Json(res.wall_s)
     << ", \"isolated_wall_s\": " << Json(iso_wall) << ", \"events\": " << res.events
     << ", \"events_per_s\": " << Json(sum.events_per_s) << ", \"cnps\": " << res.cnps << ",\n"
     << "  \"per_job\": [\n";
  for (size_t j = 0; j < njobs; j++) {
    const auto& jm = m.jobs[j];
    js << "    {\"job\": " << j << ", \"profile\": \"" << plan[j].profile.name
       << "\", \"mean_s\": " << Json(jm.mean_us * 1e-6) << ", \"p99_s\": " << Json(jm.p99_us * 1e-6)
       << ", \"isolated_mean_s\": " << Json(jm.iso_mean_us * 1e-6)
       << ", \"mean_ratio\": " << Json(jm.mean_ratio)
       << ", \"p99_ratio\": " << Json(jm.p99_ratio)
       << ", \"overlap_mean\": " << Json(jm.overlap_mean)
       << ", \"extra_iterations\": " << res.extra_iterations[j] << "}" << (j + 1 < njobs ? "," : "")
       << "\n";
  }
  js << "  ]\n}\n";
}

void PrintResult(CcKind cc, const Options& o, const RunResult& res, const Summary& sum,
                 uint32_t njobs) {
  const auto& m = sum.metrics;
  std::printf("RESULT sim cc=%s jobs=%u topology=%s link_gbps=%g mean_ratio=%.3f p99_ratio=%.3f "
              "interleaved_at=%s utilisation=%.3f drops=%llu bulk_share=%.3f wall_s=%.2f "
              "events=%llu events_per_s=%.0f\n",
              CcName(cc), njobs, o.topology.c_str(), o.link_gbps, m.mean_ratio, m.p99_ratio,
              m.interleaved_at < 0 ? "none" : std::to_string(m.interleaved_at).c_str(),
              sum.utilisation, static_cast<unsigned long long>(res.drops), sum.bulk_share,
              res.wall_s, static_cast<unsigned long long>(res.events), sum.events_per_s);
}

}  // namespace mltcp_sim
