// SPDX-License-Identifier: GPL-2.0-only
//
// options.cc - mltcp-sim's command line: --help and the options with their
// ranges (options.h).
#include "options.h"

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "mltcp_options.hpp"
#include "sim-profile.h"

namespace mltcp_sim {

namespace {

// The simulator's flows are window flows and DCQCN flows, without jobs: the
// parameter rows it takes and lists.
constexpr unsigned kParamScope = MLTCP_PS_WINDOW | MLTCP_PS_RATE;

const char* kUsage =
    "usage: mltcp-sim [options]\n"
    "  N training jobs share a dumbbell bottleneck (or a leaf-spine) in ns-3;\n"
    "  each job is also run alone; prints mean/p99 iteration time ratios.\n"
    "  --jobs N               number of jobs (default: one per --profile-mix entry;\n"
    "                         with N given, the mix is repeated to N jobs)\n"
    "  --link-gbps R          bottleneck / fabric link rate (default 1)\n"
    "  --cc C                 reno|cubic|mltcp|mltcp_cubic|dcqcn|mltcp_dcqcn (default mltcp)\n"
    "  --profile-mix M        e.g. vgg16:2,resnet50 (names from --profiles; default vgg16);\n"
    "                         a bulk=1 profile adds the long-lived flow of --bulk\n"
    "  --profiles F1,F2       profile files, shared format of profiles/README.md\n"
    "                         (default " MLTCP_SIM_PROFILES ")\n"
    "                         bytes are for 200 Mbit/s and scaled to --link-gbps\n"
    "  --ring-workers K       leaf-spine: workers per job in a ring (default 2)\n"
    "  --seed S               random seed (start offsets, compute jitter, ECMP hash; default 1)\n"
    "  --iterations I         iterations per job (default 10)\n"
    "  --warmup W             iterations excluded from mean/p99 (default iterations/5)\n"
    "  --topology T           dumbbell|leafspine (default dumbbell)\n"
    "  --leaves L --spines S  leaf-spine size (default 4 and 2)\n"
    "  --time-scale X         multiply compute time and bytes by X (default 1)\n"
    "  --rtt-us U             base round-trip time in microseconds (default 60)\n"
    "  --mtu B                link MTU in bytes (default 9000)\n"
    "  --queue-pkts Q         bottleneck queue for TCP (default: 2 BDP, at least 32)\n"
    "  --access-factor F      host link rate / fabric rate (default 4 for TCP, 1 for\n"
    "                         DCQCN; also the DCQCN line rate)\n"
    "  --start-spread-ms D    job start offsets uniform in [0, D] (default 0: together)\n"
    "  --start-gap-ms G       job j starts j*G ms late (added to the spread)\n"
    "  --compute-jitter J     compute time uniform in (1 +- J) (default 0)\n"
    "  --stop-when-done       each job stops after its --iterations (the host\n"
    "                         emulator's behaviour), so a job with a short period\n"
    "                         finishes early and the others' later iterations run\n"
    "                         alone; default: every job keeps running, unrecorded,\n"
    "                         until every job has done --iterations, so all recorded\n"
    "                         iterations run under the mix's contention\n"
    "  --hints                MLTCP flows get iteration hints instead of detecting\n"
    "  --no-isolated          skip the isolated runs (no ratios)\n"
    "  --bulk                 add a long-lived non-ML flow (base algorithm)\n"
    "  --no-scale-decrease    same as --scale-decrease 0\n"
    "  --min-rto-ms M         TCP minimum RTO (default 10)\n"
    "  --red-kmin K --red-kmax K --red-pmax P   DCQCN ECN marking (packets)\n"
    "  --dcqcn-idle-reset-us U  a DCQCN sender idle for U us restarts at line rate\n"
    "                         (default 0: never; the core's catch-up bounds recovery)\n"
    "  --dcqcn-byte-counter B  DCQCN byte counter at 40 Gbit/s, scaled to the line\n"
    "                         (default 150K, one of the paper's; the core's default is 10M)\n"
    "  --out PREFIX           write PREFIX.csv (per iteration) and PREFIX.json\n"
    "  --quiet                only the RESULT line\n"
    "  --help                 this text\n"
    "MLTCP parameters (core/mltcp_param_table.h; --name N or --name=N):\n";

double NumberArg(const std::string& opt, const std::string& v, double lo, double hi) {
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !std::isfinite(d))
    Fail(opt + ": '" + v + "' is not a number");
  if (d < lo || d > hi) {
    std::ostringstream os;
    os << opt << ": " << v << " is out of range [" << lo << ", " << hi << "]";
    Fail(os.str());
  }
  return d;
}

uint32_t IntArg(const std::string& opt, const std::string& v, double lo, double hi) {
  const double d = NumberArg(opt, v, lo, hi);
  if (d != std::floor(d))
    Fail(opt + ": '" + v + "' is not an integer");
  return static_cast<uint32_t>(d);
}

}  // namespace

void Fail(const std::string& msg) {
  std::cerr << "mltcp-sim: " << msg << "\n";
  std::exit(2);
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << kUsage << mltcp::ParamHelp<mltcp_params>("  ", true, "", kParamScope);
      std::exit(0);
    }
    if (a.rfind("--", 0) != 0)
      Fail("unexpected argument '" + a + "' (see --help)");
    try {
      if (mltcp::ParseParamOption(o.mltcp, "", argc, argv, i, kParamScope))
        continue;
    } catch (const std::invalid_argument& e) {
      Fail(e.what());
    }
    std::string v;
    bool has_v = false;
    const auto eq = a.find('=');
    if (eq != std::string::npos) {
      v = a.substr(eq + 1);
      a = a.substr(0, eq);
      has_v = true;
    }
    auto flag = [&](bool& f) {
      if (has_v)
        Fail(a + " takes no value");
      f = true;
    };
    auto val = [&]() -> std::string {
      if (has_v)
        return v;
      if (i + 1 >= argc)
        Fail(a + " needs a value (see --help)");
      return argv[++i];
    };
    if (a == "--jobs") o.jobs = IntArg(a, val(), 1, 4096);
    else if (a == "--link-gbps") o.link_gbps = NumberArg(a, val(), 0.001, 1600);
    else if (a == "--cc") o.cc = val();
    else if (a == "--profile-mix") o.mix = val();
    else if (a == "--profiles") o.profiles = val();
    else if (a == "--seed") o.seed = IntArg(a, val(), 0, 4e9);
    else if (a == "--iterations") o.iterations = IntArg(a, val(), 1, 100000);
    else if (a == "--warmup") o.warmup = static_cast<int>(IntArg(a, val(), 0, 100000));
    else if (a == "--topology") o.topology = val();
    else if (a == "--ring-workers") o.ring_workers = IntArg(a, val(), 2, 1024);
    else if (a == "--leaves") o.leaves = IntArg(a, val(), 2, 256);
    else if (a == "--spines") o.spines = IntArg(a, val(), 1, 64);
    else if (a == "--time-scale") o.time_scale = NumberArg(a, val(), 1e-4, 1e4);
    else if (a == "--rtt-us") o.rtt_us = NumberArg(a, val(), 1, 1e7);
    else if (a == "--mtu") o.mtu = IntArg(a, val(), 576, 9000);
    else if (a == "--queue-pkts") o.queue_pkts = IntArg(a, val(), 2, 1e6);
    else if (a == "--access-factor") o.access_factor = NumberArg(a, val(), 1, 100);
    else if (a == "--start-spread-ms") o.start_spread_ms = NumberArg(a, val(), 0, 1e7);
    else if (a == "--start-gap-ms") o.start_gap_ms = NumberArg(a, val(), 0, 1e7);
    else if (a == "--compute-jitter") o.compute_jitter = NumberArg(a, val(), 0, 0.9);
    else if (a == "--hints") flag(o.hints);
    else if (a == "--no-isolated") { bool f = false; flag(f); o.isolated = false; }
    else if (a == "--bulk") flag(o.bulk);
    else if (a == "--stop-when-done") { bool f = false; flag(f); o.keep_running = false; }
    else if (a == "--no-scale-decrease") { bool f = false; flag(f); o.mltcp.scale_decrease = 0; }
    else if (a == "--min-rto-ms") o.min_rto_ms = NumberArg(a, val(), 0.1, 10000);
    else if (a == "--red-kmin") o.red_kmin = IntArg(a, val(), 1, 1e6);
    else if (a == "--red-kmax") o.red_kmax = IntArg(a, val(), 1, 1e6);
    else if (a == "--red-pmax") o.red_pmax = NumberArg(a, val(), 1e-4, 1);
    else if (a == "--dcqcn-idle-reset-us") o.dcqcn_idle_reset_us = NumberArg(a, val(), 0, 1e9);
    else if (a == "--dcqcn-byte-counter") {
      try {
        o.dcqcn_byte_counter = mltcp_sim::ParseBytes(val());
      } catch (const std::exception& e) {
        Fail(std::string("--dcqcn-byte-counter: ") + e.what());
      }
    }
    else if (a == "--out") o.out = val();
    else if (a == "--quiet") flag(o.quiet);
    else Fail("unknown option '" + a + "' (see --help)");
  }
  if (const char* why = mltcp::ParamTable<mltcp_params>::Check(o.mltcp))
    Fail(why);
  if (o.topology != "dumbbell" && o.topology != "leafspine")
    Fail("--topology: unknown '" + o.topology + "' (known: dumbbell leafspine)");
  if (o.red_kmin && o.red_kmax && o.red_kmin >= o.red_kmax)
    Fail("--red-kmin must be below --red-kmax");
  if (o.warmup >= 0 && static_cast<uint32_t>(o.warmup) >= o.iterations)
    Fail("--warmup must be below --iterations");
  return o;
}

}  // namespace mltcp_sim
