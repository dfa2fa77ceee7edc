// SPDX-License-Identifier: GPL-2.0-only
//
// sim-profile.h - training-job profiles for the simulator.  The file format
// is the one every workload tool reads (profiles/README.md) and is parsed by
// the workload library (workload/profile.cpp), so all read the same
// bytes the same way; this adapter adds what the simulator needs: the
// profile-mix list, several files at once, and scaling from the 200 Mbit/s
// host testbed the profiles are sized for to the simulated link rate.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace mltcp_sim {

// Link rate the shared profiles' bytes are sized for (profiles/README.md).
constexpr double kProfileRefMbps = 200.0;

struct JobProfile {
  std::string name;
  double compute_ms = 0;            // compute phase per iteration
  uint64_t bytes = 0;               // bytes per iteration (whole job)
  uint32_t buckets = 1;             // sent as this many buckets
  double bucket_gap_us = 0;         // pause between two buckets
  std::vector<double> bytes_cycle{1.0};  // TAG-like: iteration i x f[i mod n]
  bool async = false;               // Dorylus-like: compute of i+1 overlaps comm of i
  uint32_t conns = 1;               // parallel connections sharing the bytes
  bool bulk = false;                // long-lived non-ML flow, not a job
};

// Bytes of iteration i: round(bytes x bytes_cycle[i mod n]), at least 1
// (profiles/README.md).
uint64_t IterationBytes(const JobProfile& p, uint64_t i);
// Share `part` of `total` split into `parts` (the first total % parts
// shares get one byte more), as the emulator splits buckets and conns.
uint64_t SplitShare(uint64_t total, uint32_t parts, uint32_t part);

struct ProfileSet {
  std::map<std::string, JobProfile> profiles;
  const JobProfile& Get(const std::string& name) const;  // throws ProfileError
};

// Thrown with a message naming file, line and field.
struct ProfileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

ProfileSet ParseProfiles(const std::string& text, const std::string& origin);
// Several files: later ones may add profiles, never redefine one.
ProfileSet LoadProfiles(const std::vector<std::string>& paths);

// "--profile-mix vgg16:2,gpt2" -> {vgg16, vgg16, gpt2}; every name must exist.
std::vector<JobProfile> ParseMix(const std::string& mix, const ProfileSet& set);

// "2.5M" -> 2500000 (decimal suffixes k M G); throws std::invalid_argument.
uint64_t ParseBytes(const std::string& s);

}  // namespace mltcp_sim
