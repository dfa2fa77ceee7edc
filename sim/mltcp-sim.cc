// SPDX-License-Identifier: GPL-2.0-only
//
// mltcp-sim.cc - the MLTCP ns-3 scenario: N training jobs on a dumbbell (one
// bottleneck) or a two-tier leaf-spine with per-flow ECMP, with Reno, CUBIC
// or DCQCN as the base algorithm, with or without MLTCP.  Each job is also
// run alone (same topology, same congestion control) in the same invocation,
// so every iteration time is reported as a ratio to the isolated one.
// Output: per-iteration CSV, JSON summary, and a RESULT line on stdout.
// Every job keeps running (and contending) until the slowest job has done
// --iterations; only each job's first --iterations are recorded, so a job
// with a short period never leaves the others to run alone in the measured
// iterations (--stop-when-done: each job stops after its own, as the host
// emulator does).
//
// Scale: ns-3 here delivers ~10-15 k segments per wall second, so the
// scenario uses jumbo frames (MTU 9000 by default) and sizes bytes with the
// link rate (profile bytes are for 200 Mbit/s; --time-scale shrinks compute
// time and bytes together), keeping each job's communication fraction.
//
// This file plans the jobs and runs the mixed and isolated simulations; the
// command line is options.cc, the topology topology.cc, a run run.cc, the
// statistics analysis.cc and the outputs report.cc.
#include <cmath>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "analysis.h"
#include "options.h"
#include "sim-profile.h"
#include "report.h"
#include "scenario.h"

using namespace mltcp_sim;
using ns3::CcName;
using ns3::ParseCc;

int main(int argc, char** argv) {
  Options o = ParseOptions(argc, argv);
  CcKind cc;
  try {
    cc = ParseCc(o.cc);
  } catch (const std::exception& e) {
    Fail(std::string("--cc: ") + e.what());
  }
  std::vector<JobProfile> mix;
  try {
    std::vector<std::string> files;
    std::stringstream ss(o.profiles);
    std::string f;
    while (std::getline(ss, f, ','))
      if (!f.empty())
        files.push_back(f);
    if (files.empty())
      Fail("--profiles: no file given");
    const auto set = LoadProfiles(files);
    for (const auto& p : ParseMix(o.mix, set)) {
      if (p.bulk)
        o.bulk = true;  // the mix names a long-lived non-ML flow
      else
        mix.push_back(p);
    }
  } catch (const std::exception& e) {
    Fail(e.what());
  }
  if (mix.empty())
    Fail("--profile-mix names no training job (only bulk flows)");
  const uint32_t njobs = o.jobs ? o.jobs : static_cast<uint32_t>(mix.size());
  const uint32_t warmup = o.warmup >= 0 ? static_cast<uint32_t>(o.warmup) : o.iterations / 5;

  // Scale each profile to the link rate (bytes sized for 200 Mbit/s) and to
  // the time scale (compute time and bytes together).
  std::vector<JobPlan> plan;
  std::mt19937_64 gen(o.seed);
  std::uniform_real_distribution<double> uni(0.0, 1.0);
  const double byte_scale = o.link_gbps * 1000.0 / kProfileRefMbps * o.time_scale;
  for (uint32_t j = 0; j < njobs; j++) {
    JobPlan p;
    p.profile = mix[j % mix.size()];
    p.profile.bytes = static_cast<uint64_t>(std::llround(static_cast<double>(p.profile.bytes) * byte_scale));
    p.profile.compute_ms *= o.time_scale;
    p.profile.bucket_gap_us *= o.time_scale;
    if (p.profile.bytes < static_cast<uint64_t>(p.profile.buckets) * p.profile.conns)
      Fail("profile '" + p.profile.name + "' scales to fewer bytes than buckets x conns at this "
           "link rate and time scale");
    p.start_offset_s = o.start_spread_ms * 1e-3 * uni(gen) + o.start_gap_ms * 1e-3 * j;
    plan.push_back(p);
  }

  if (!o.quiet)
    std::cout << "mltcp-sim: " << njobs << " jobs, " << o.topology << ", " << o.link_gbps
              << " Gbit/s, cc " << CcName(cc) << ", " << o.iterations << " iterations\n";

  // Mixed run.
  Scenario mixed(o, cc);
  const RunResult res = mixed.Run(plan);
  if (!res.finished)
    Fail("simulation did not finish: a job stalled (simulated " + std::to_string(res.sim_end_s) +
         " s):" + res.stall);

  // Isolated runs: each distinct profile alone, same topology and cc.
  std::map<std::string, double> iso_mean_us;
  double iso_wall = 0;
  if (o.isolated) {
    Options io = o;
    io.bulk = false;
    for (const auto& p : plan) {
      if (iso_mean_us.count(p.profile.name))
        continue;
      JobPlan alone = p;
      alone.start_offset_s = 0;
      Scenario s(io, cc);
      const RunResult r = s.Run({alone});
      if (!r.finished)
        Fail("isolated run of '" + p.profile.name + "' did not finish:" + r.stall);
      iso_mean_us[p.profile.name] = IsolatedMeanUs(r, warmup);
      iso_wall += r.wall_s;
    }
  }

  const Summary sum = Analyse(o, plan, res, iso_mean_us, warmup);
  if (!o.quiet)
    PrintTable(plan, res, sum, iso_wall);
  if (!o.out.empty())
    WriteFiles(o, cc, plan, res, sum, warmup, iso_wall);
  PrintResult(cc, o, res, sum, njobs);
  return 0;
}
