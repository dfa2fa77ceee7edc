// SPDX-License-Identifier: GPL-2.0-only
//
// profile.cc - parser for the job-profile file and the --profile-mix list.
#include "profile.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace mltcp_sim {

namespace {

double ParseNumber(const std::string& s) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || errno != 0 || !std::isfinite(v))
    throw std::invalid_argument("'" + s + "' is not a number");
  return v;
}

std::string Where(const std::string& origin, int line) {
  return origin + ":" + std::to_string(line) + ": ";
}

void SetKey(JobProfile& p, const std::string& key, const std::string& val) {
  if (key == "compute_ms") {
    p.compute_ms = ParseNumber(val);
    if (p.compute_ms < 0 || p.compute_ms > 3.6e6)
      throw std::invalid_argument("must be in [0, 3600000]");
  } else if (key == "bytes") {
    p.bytes = ParseBytes(val);
    if (p.bytes == 0)
      throw std::invalid_argument("must be > 0");
  } else if (key == "buckets") {
    const double v = ParseNumber(val);
    if (v < 1 || v > 1000 || v != std::floor(v))
      throw std::invalid_argument("must be an integer in [1, 1000]");
    p.buckets = static_cast<uint32_t>(v);
  } else if (key == "bucket_gap_us") {
    p.bucket_gap_us = ParseNumber(val);
    if (p.bucket_gap_us < 0 || p.bucket_gap_us > 1e6)
      throw std::invalid_argument("must be in [0, 1000000]");
  } else if (key == "bytes_var") {
    p.bytes_var = ParseNumber(val);
    if (p.bytes_var < 0 || p.bytes_var > 0.9)
      throw std::invalid_argument("must be in [0, 0.9]");
  } else if (key == "async") {
    if (val != "0" && val != "1")
      throw std::invalid_argument("must be 0 or 1");
    p.async = val == "1";
  } else if (key == "workers") {
    const double v = ParseNumber(val);
    if (v < 2 || v > 1024 || v != std::floor(v))
      throw std::invalid_argument("must be an integer in [2, 1024]");
    p.workers = static_cast<uint32_t>(v);
  } else {
    throw std::invalid_argument(
        "unknown field (known: compute_ms bytes buckets bucket_gap_us bytes_var async workers)");
  }
}

}  // namespace

uint64_t ParseBytes(const std::string& s) {
  if (s.empty())
    throw std::invalid_argument("empty byte count");
  double mult = 1;
  std::string num = s;
  switch (s.back()) {
    case 'K': case 'k': mult = 1e3; num.pop_back(); break;
    case 'M': case 'm': mult = 1e6; num.pop_back(); break;
    case 'G': case 'g': mult = 1e9; num.pop_back(); break;
    default: break;
  }
  const double v = ParseNumber(num) * mult;
  if (v < 0)
    throw std::invalid_argument("'" + s + "' is negative");
  if (v > 1e15)
    throw std::invalid_argument("'" + s + "' is too large (max 1e15)");
  return static_cast<uint64_t>(std::llround(v));
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
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    lineno++;
    const auto hash = line.find('#');
    if (hash != std::string::npos)
      line.erase(hash);
    std::istringstream words(line);
    std::string name;
    if (!(words >> name))
      continue;
    if (name == "ref_mbps") {
      std::string v;
      words >> v;
      try {
        set.ref_mbps = ParseNumber(v);
      } catch (const std::exception& e) {
        throw ProfileError(Where(origin, lineno) + "ref_mbps: " + e.what());
      }
      if (set.ref_mbps <= 0)
        throw ProfileError(Where(origin, lineno) + "ref_mbps: must be > 0");
      continue;
    }
    JobProfile p;
    p.name = name;
    std::string kv;
    while (words >> kv) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0)
        throw ProfileError(Where(origin, lineno) + "'" + kv + "': expected key=value");
      const std::string key = kv.substr(0, eq);
      try {
        SetKey(p, key, kv.substr(eq + 1));
      } catch (const std::invalid_argument& e) {
        throw ProfileError(Where(origin, lineno) + "profile '" + name + "' field " + key +
                           ": " + e.what());
      }
    }
    if (p.bytes == 0)
      throw ProfileError(Where(origin, lineno) + "profile '" + name + "': field bytes is required");
    if (p.compute_ms <= 0 && !p.async)
      throw ProfileError(Where(origin, lineno) + "profile '" + name +
                         "': field compute_ms must be > 0 (or async=1)");
    if (set.profiles.count(name))
      throw ProfileError(Where(origin, lineno) + "profile '" + name + "' defined twice");
    set.profiles[name] = p;
  }
  if (set.profiles.empty())
    throw ProfileError(origin + ": no profiles defined");
  return set;
}

ProfileSet LoadProfiles(const std::string& path) {
  std::ifstream f(path);
  if (!f)
    throw ProfileError("cannot read profile file '" + path + "': " + std::strerror(errno) +
                       " (pass --profiles <file>)");
  std::stringstream ss;
  ss << f.rdbuf();
  return ParseProfiles(ss.str(), path);
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
    std::string name = item.substr(0, colon);
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
