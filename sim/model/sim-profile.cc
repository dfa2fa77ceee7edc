// SPDX-License-Identifier: GPL-2.0-only
//
// sim-profile.cc - the simulator's view of the shared job-profile format
// (parsed by the workload library's parser, workload/profile.cpp).
#include "sim-profile.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "profile.h"  // workload/: the format's parser

namespace mltcp_sim {

namespace {

JobProfile FromEmu(const mltcp_workload::Profile& e) {
  JobProfile p;
  p.name = e.name;
  p.compute_ms = static_cast<double>(e.compute_us) / 1000.0;
  p.bytes = e.bytes;
  p.buckets = e.buckets;
  p.bucket_gap_us = static_cast<double>(e.bucket_gap_us);
  p.bytes_cycle = e.bytes_cycle;
  p.async = e.async;
  p.conns = e.conns;
  p.bulk = e.bulk;
  return p;
}

void Add(ProfileSet& set, const std::vector<mltcp_workload::Profile>& all, const std::string& origin) {
  for (const auto& e : all) {
    if (set.profiles.count(e.name))
      throw ProfileError(origin + ":" + std::to_string(e.line) + ": profile '" + e.name +
                         "' is already defined by an earlier profile file");
    set.profiles[e.name] = FromEmu(e);
  }
}

}  // namespace

uint64_t IterationBytes(const JobProfile& p, uint64_t i) {
  const double f = p.bytes_cycle.empty() ? 1.0 : p.bytes_cycle[i % p.bytes_cycle.size()];
  const double b = std::round(static_cast<double>(p.bytes) * f);
  return b < 1 ? 1 : static_cast<uint64_t>(b);
}

uint64_t SplitShare(uint64_t total, uint32_t parts, uint32_t part) {
  if (parts == 0)
    return total;
  return total / parts + (part < total % parts ? 1 : 0);
}

uint64_t ParseBytes(const std::string& s) {
  if (!s.empty() && s[0] == '-')
    throw std::invalid_argument("'" + s + "' is negative");
  return mltcp_workload::parse_byte_count(s);
}

const JobProfile& ProfileSet::Get(const std::string& name) const {
  const auto it = profiles.find(name);
  if (it == profiles.end()) {
    std::string known;
    for (const auto& kv : profiles)
      known += (known.empty() ? "" : " ") + kv.first;
    throw ProfileError("unknown profile '" + name + "' (known: " + known + ")");
  }
  return it->second;
}

ProfileSet ParseProfiles(const std::string& text, const std::string& origin) {
  ProfileSet set;
  try {
    Add(set, mltcp_workload::parse_profiles(text, origin), origin);
  } catch (const mltcp_workload::ProfileError& e) {
    throw ProfileError(e.what());
  }
  return set;
}

ProfileSet LoadProfiles(const std::vector<std::string>& paths) {
  ProfileSet set;
  for (const auto& path : paths) {
    std::ifstream f(path);
    if (!f)
      throw ProfileError("cannot read profile file '" + path + "': " + std::strerror(errno) +
                         " (pass --profiles <file>)");
    std::stringstream ss;
    ss << f.rdbuf();
    if (f.bad() || (!f.eof() && f.fail()) || ss.fail())
      throw ProfileError("cannot read profile file '" + path +
                         "': read failed (is it a directory?) (pass --profiles <file>)");
    try {
      Add(set, mltcp_workload::parse_profiles(ss.str(), path), path);
    } catch (const mltcp_workload::ProfileError& e) {
      throw ProfileError(e.what());
    }
  }
  return set;
}

std::vector<JobProfile> ParseMix(const std::string& mix, const ProfileSet& set) {
  std::vector<JobProfile> out;
  std::stringstream ss(mix);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty())
      continue;
    uint32_t count = 1;
    const auto colon = item.find(':');
    const std::string name = item.substr(0, colon);
    if (colon != std::string::npos) {
      const std::string n = item.substr(colon + 1);
      char* end = nullptr;
      const long v = std::strtol(n.c_str(), &end, 10);
      if (n.empty() || *end != '\0' || v < 1 || v > 100000)
        throw ProfileError("profile mix '" + item + "': count must be an integer >= 1");
      count = static_cast<uint32_t>(v);
    }
    const JobProfile& p = set.Get(name);
    for (uint32_t i = 0; i < count; i++)
      out.push_back(p);
  }
  if (out.empty())
    throw ProfileError("profile mix '" + mix + "' names no profile");
  return out;
}

}  // namespace mltcp_sim
