// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// mltcp.hpp - a thin C++17 wrapper over the C policy core for userspace
// datapaths (DPDK, RDMA), tools and the simulator.  In the style of eRPC's
// timely.h: congestion control as a pure class, samples in, decisions out,
// testable without a NIC.  All logic stays in the C headers; these classes
// only own the state and give the calls names.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

extern "C" {
#include "mltcp.h"
}

namespace mltcp {

// The congestion controls MLTCP offers by name: a base algorithm with or
// without the gain.  The one name table of the userspace datapaths and tools.
enum class Cc { kReno, kMltcp, kCubic, kMltcpCubic, kDcqcn, kMltcpDcqcn };

struct CcInfo {
  const char* name;
  Cc cc;
  Cc base;     // the same algorithm without MLTCP
  bool mltcp;  // the gain scales it
  bool rate;   // rate-based (DCQCN), not window-based
};

inline constexpr CcInfo kCcTable[] = {
    {"reno", Cc::kReno, Cc::kReno, false, false},
    {"mltcp", Cc::kMltcp, Cc::kReno, true, false},
    {"cubic", Cc::kCubic, Cc::kCubic, false, false},
    {"mltcp_cubic", Cc::kMltcpCubic, Cc::kCubic, true, false},
    {"dcqcn", Cc::kDcqcn, Cc::kDcqcn, false, true},
    {"mltcp_dcqcn", Cc::kMltcpDcqcn, Cc::kDcqcn, true, true},
};

inline const CcInfo& CcInfoOf(Cc cc) {
  for (const auto& e : kCcTable)
    if (e.cc == cc)
      return e;
  return kCcTable[0];  // unreachable: every Cc has a row
}
inline const char* CcName(Cc cc) { return CcInfoOf(cc).name; }
// false for a name that is not in the table.
inline bool ParseCc(const std::string& name, Cc* out) {
  for (const auto& e : kCcTable)
    if (name == e.name) {
      *out = e.cc;
      return true;
    }
  return false;
}
// "reno, mltcp, cubic, ..." for error messages and --help.
inline std::string CcNameList(const char* sep = ", ") {
  std::string s;
  for (const auto& e : kCcTable)
    s += (s.empty() ? "" : sep) + std::string(e.name);
  return s;
}

inline constexpr uint32_t kGainOne = MLTCP_GAIN_ONE;
inline constexpr uint32_t kRatioOne = MLTCP_RATIO_ONE;
inline constexpr uint32_t kRatioNone = MLTCP_RATIO_NONE;

// Policy parameters; construction from raw values validates them.
class Params {
 public:
  Params() { mltcp_params_default(&p_); }
  explicit Params(const mltcp_params& raw) : p_(raw) {
    Validate(p_);
    mltcp_params_derive(&p_);
  }

  static void Validate(const mltcp_params& raw) {
    const auto err = mltcp_params_validate(&raw);
    if (err != MLTCP_PARAM_OK)
      throw std::invalid_argument(mltcp_params_reason(err));
  }
  // Checked setter: applies the change only if the whole set stays valid.
  void Set(const mltcp_params& raw) {
    Validate(raw);
    p_ = raw;
    mltcp_params_derive(&p_);
  }
  const mltcp_params& raw() const { return p_; }

 private:
  mltcp_params p_;
};

// Iteration tracking and gain for one flow.
class Flow {
 public:
  explicit Flow(uint64_t acked_total = 0, uint32_t now_us = 0) {
    mltcp_iter_init(&it_, acked_total, now_us);
  }
  // The first iteration's seed (mltcp_iter_seed): any uniform 32-bit value.
  void Seed(const Params& p, uint32_t random) { mltcp_iter_seed(&it_, &p.raw(), random); }
  void OnAck(uint64_t acked_total, uint32_t now_us) {
    mltcp_iter_on_ack(&it_, acked_total, now_us);
  }
  bool OnTxStart(const Params& p, uint64_t acked_total, uint32_t now_us,
                 uint32_t srtt_us) {
    return mltcp_iter_on_tx_start(&it_, &p.raw(), acked_total, now_us,
                                  srtt_us) != 0;
  }
  void Hint(uint64_t acked_total, uint64_t bytes, uint32_t now_us) {
    mltcp_iter_hint(&it_, acked_total, bytes, now_us);
  }
  uint32_t Ratio() const { return mltcp_iter_ratio(&it_); }
  uint32_t Gain(const Params& p) const { return mltcp_gain(&it_, &p.raw()); }
  uint32_t IdleThresholdUs(const Params& p, uint32_t srtt_us) const {
    return mltcp_idle_threshold_us(&it_, &p.raw(), srtt_us);
  }
  const mltcp_iter& state() const { return it_; }
  // For the core's window steps that update the tracker's flags
  // (mltcp_start_cwnd).
  mltcp_iter& mutable_state() { return it_; }

 private:
  mltcp_iter it_{};
};

class DcqcnParams {
 public:
  DcqcnParams() { mltcp_dcqcn_params_default(&p_); }
  explicit DcqcnParams(const mltcp_dcqcn_params& raw) : p_(raw) {
    const auto err = mltcp_dcqcn_params_validate(&p_);
    if (err != MLTCP_DCQCN_PARAM_OK)
      throw std::invalid_argument(mltcp_dcqcn_params_reason(err));
  }
  const mltcp_dcqcn_params& raw() const { return p_; }

 private:
  mltcp_dcqcn_params p_;
};

// DCQCN reaction point; the caller supplies the MLTCP gain (kGainOne for
// plain DCQCN).
class DcqcnSender {
 public:
  DcqcnSender(const DcqcnParams& p, uint64_t now_us) : p_(p) {
    mltcp_dcqcn_rp_init(&rp_, &p_.raw(), now_us);
  }
  void Advance(uint64_t now_us, uint32_t gain) {
    mltcp_dcqcn_advance(&rp_, &p_.raw(), now_us, gain);
  }
  void OnSent(uint64_t bytes, uint32_t gain) {
    mltcp_dcqcn_on_sent(&rp_, &p_.raw(), bytes, gain);
  }
  void OnCnp(uint64_t now_us) { mltcp_dcqcn_on_cnp(&rp_, &p_.raw(), now_us); }
  uint64_t RateBps() const { return rp_.rate_cur_bps; }
  uint64_t TargetBps() const { return rp_.rate_target_bps; }
  const mltcp_dcqcn_rp& state() const { return rp_; }

 private:
  DcqcnParams p_;
  mltcp_dcqcn_rp rp_{};
};

// DCQCN notification point for one flow.
class DcqcnReceiver {
 public:
  explicit DcqcnReceiver(const DcqcnParams& p) : p_(p) { mltcp_dcqcn_np_init(&np_); }
  bool OnCeMarked(uint64_t now_us) {
    return mltcp_dcqcn_np_on_ce(&np_, &p_.raw(), now_us) != 0;
  }

 private:
  DcqcnParams p_;
  mltcp_dcqcn_np np_{};
};

}  // namespace mltcp
