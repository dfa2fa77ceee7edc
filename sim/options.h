// SPDX-License-Identifier: GPL-2.0-only
//
// options.h - mltcp-sim's options (filled from the command line by
// options.cc) and the usage-error exit every part of the scenario uses.
#pragma once

#include <cstdint>
#include <string>

#include "mltcp_params.h"

#ifndef MLTCP_SIM_PROFILES
#define MLTCP_SIM_PROFILES "profiles/jobs.prof,sim/sim.prof"
#endif

namespace mltcp_sim {

struct Options {
  uint32_t jobs = 0;  // 0: one per mix entry
  double link_gbps = 1.0;
  std::string cc = "mltcp";
  std::string mix = "vgg16";
  uint32_t ring_workers = 2;
  std::string profiles = MLTCP_SIM_PROFILES;
  uint32_t seed = 1;
  uint32_t iterations = 10;
  int warmup = -1;  // -1: iterations / 5
  std::string topology = "dumbbell";
  uint32_t leaves = 4, spines = 2;
  double time_scale = 1.0;
  double rtt_us = 60;
  uint32_t mtu = 9000;
  uint32_t queue_pkts = 0;  // 0: automatic
  double access_factor = 0;  // 0: 4 for TCP, 1 for DCQCN
  double start_spread_ms = 0;
  double start_gap_ms = 0;
  double compute_jitter = 0;
  bool hints = false;
  bool isolated = true;
  bool bulk = false;
  bool keep_running = true;  // --stop-when-done clears it
  uint32_t slope = MLTCP_DEF_SLOPE;
  bool scale_decrease = true;
  uint32_t intercept = MLTCP_DEF_INTERCEPT;
  double min_rto_ms = 10;
  uint32_t red_kmin = 0, red_kmax = 0;  // packets; 0: automatic
  double red_pmax = 0.2;
  double dcqcn_idle_reset_us = 0;
  uint64_t dcqcn_byte_counter = 150000;  // at 40 Gbit/s (the paper's 150 KB)
  std::string out;  // output prefix; empty: no files
  bool quiet = false;
};

// Parses the command line (prints --help and exits 0; exits 2 on bad input
// with a message naming the option and its range).
Options ParseOptions(int argc, char** argv);

// "mltcp-sim: msg" on stderr, exit 2.
[[noreturn]] void Fail(const std::string& msg);

}  // namespace mltcp_sim
