// SPDX-License-Identifier: GPL-2.0-only
//
// profile.h - training-job profiles for the simulator: what one job does per
// iteration (compute time, bytes, buckets, variation, asynchrony).  Plain
// C++ (no ns-3), so the parser is unit-tested without a simulation.
//
// File format (sim/profiles.txt is the reference; shared with the host
// emulator until tools/emu publishes its own, see docs/simulation.md):
//   # comment
//   ref_mbps <rate>                     link rate the bytes below are sized for
//   <name> key=value ...                one profile per line
// keys: compute_ms (> 0 unless async), bytes (per iteration, K/M/G suffixes,
// decimal), buckets (>= 1), bucket_gap_us, bytes_var (0..0.9: TAG-like, each
// iteration's bytes drawn uniformly in bytes*(1 +- var)), async (0/1:
// Dorylus-like, compute overlaps communication, no idle gap), workers (>= 2:
// ring all-reduce participants).
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace mltcp_sim {

struct JobProfile {
  std::string name;
  double compute_ms = 0;     // compute phase per iteration
  uint64_t bytes = 0;        // bytes per iteration at ref_mbps
  uint32_t buckets = 1;      // communication split into this many buckets
  double bucket_gap_us = 0;  // gap between bucket releases
  double bytes_var = 0;      // TAG-like relative variation of bytes
  bool async = false;        // Dorylus-like overlapped pipeline
  uint32_t workers = 2;      // ring all-reduce workers
};

struct ProfileSet {
  double ref_mbps = 200;  // link rate the profiles' bytes are sized for
  std::map<std::string, JobProfile> profiles;
  const JobProfile& Get(const std::string& name) const;  // throws ProfileError
};

// Thrown with a message naming file, line and field.
struct ProfileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

ProfileSet ParseProfiles(const std::string& text, const std::string& origin);
ProfileSet LoadProfiles(const std::string& path);

// "--profile-mix resnet50:2,bert" -> {resnet50, resnet50, bert}; every name
// must exist in `set`.
std::vector<JobProfile> ParseMix(const std::string& mix, const ProfileSet& set);

// "2.5M" -> 2500000; throws std::invalid_argument on junk or negatives.
uint64_t ParseBytes(const std::string& s);

}  // namespace mltcp_sim
