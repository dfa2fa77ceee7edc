// SPDX-License-Identifier: GPL-2.0-only
//
// mltcp-tcp.h - MLTCP congestion control for ns-3: TcpMltcpReno extends
// ns-3's TcpLinuxReno (Linux's tcp_reno_cong_avoid, i.e. tcp_cong_avoid_ai
// counting acked segments, which is what the kernel and BPF datapaths scale)
// and TcpMltcpCubic extends ns-3's TcpCubic.  Every MLTCP decision comes from
// core/ (mltcp_iter_*, mltcp_gain, mltcp_reno_ai_w, mltcp_cubic_epoch_scale,
// mltcp_cubic_cnt, mltcp_decrease_beta for the window kept at a loss); these
// classes only feed it the same signals the kernel hooks see:
//   - cumulative bytes acked = sum of snd_una advances (tcp_sock->bytes_acked),
//     kept from TcpSocketState::m_lastAckedSeq,
//   - CA_EVENT_TX_START (ns-3 3.37 fires it when sending resumes with nothing
//     in flight, as tcp_event_data_sent does),
//   - a smoothed RTT (Linux srtt: EWMA 1/8 of the RTT samples PktsAcked gets),
//   - time in microseconds (Simulator::Now), truncated to u32 like the kernel.
// Differs from the kernel datapath: ns-3 3.37 has no cwnd validation
// (tcp_is_cwnd_limited) and no slow-start-after-idle, so neither does this.
#pragma once

#include <cstdint>

#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-cubic.h"
#include "ns3/tcp-linux-reno.h"

#include "mltcp.hpp"

namespace ns3 {

// The per-flow MLTCP state both congestion ops share: the core's tracker plus
// the few signals ns-3 does not keep for us.
class MltcpFlowState {
 public:
  // Called from every hook before a decision: folds new snd_una progress.
  // Hint() uses the socket state the last hook saw (acks between hooks
  // always pass through PktsAcked, so its snd_una is current).
  void Sync(Ptr<const TcpSocketState> tcb);
  void OnRtt(const Time& rtt);
  bool OnTxStart(Ptr<const TcpSocketState> tcb);
  void Hint(uint64_t bytes);
  uint32_t Gain() const { return flow_.Gain(params_); }

  void SetParams(const mltcp::Params& p) { params_ = p; }
  const mltcp::Params& params() const { return params_; }
  const mltcp::Flow& flow() const { return flow_; }
  uint64_t acked_total() const { return acked_total_; }
  uint32_t srtt_us() const { return srtt_us_; }
  uint32_t tx_starts() const { return tx_starts_; }

  static uint32_t NowUs();

 private:
  void Start();

  mltcp::Params params_;
  mltcp::Flow flow_;
  Ptr<const TcpSocketState> tcb_;  // last socket state a hook saw
  bool started_ = false;
  bool have_una_ = false;
  SequenceNumber32 last_una_{0};
  uint64_t acked_total_ = 0;
  uint32_t srtt_us_ = 0;  // 0 until the first sample
  uint32_t tx_starts_ = 0;
};

// Attributes shared by both classes: one per row of the core's parameter
// table, "Enabled", "Slope", "Intercept", "GainMin", ... (mltcp-tcp.cc).
class TcpMltcpReno : public TcpLinuxReno {
 public:
  static TypeId GetTypeId();
  TcpMltcpReno() = default;
  TcpMltcpReno(const TcpMltcpReno& other) = default;

  std::string GetName() const override { return "TcpMltcpReno"; }
  uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override;
  void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt) override;
  void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event) override;
  Ptr<TcpCongestionOps> Fork() override { return CopyObject<TcpMltcpReno>(this); }

  // The application announces "an iteration of `bytes` bytes starts now".
  void Hint(uint64_t bytes) { state_.Hint(bytes); }
  MltcpFlowState& state() { return state_; }
  uint32_t last_ai_w() const { return last_ai_w_; }

 protected:
  void CongestionAvoidance(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override;

 private:

  MltcpFlowState state_;
  uint32_t cwnd_cnt_ = 0;  // tcp_sock->snd_cwnd_cnt
  uint32_t last_ai_w_ = 0;
};

class TcpMltcpCubic : public TcpCubic {
 public:
  static TypeId GetTypeId();
  TcpMltcpCubic() = default;
  TcpMltcpCubic(const TcpMltcpCubic& other) = default;

  std::string GetName() const override { return "TcpMltcpCubic"; }
  uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override;
  void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override;
  void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt) override;
  void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event) override;
  Ptr<TcpCongestionOps> Fork() override { return CopyObject<TcpMltcpCubic>(this); }

  void Hint(uint64_t bytes) { state_.Hint(bytes); }
  MltcpFlowState& state() { return state_; }
  uint32_t last_cnt() const { return last_cnt_; }
  uint32_t last_base_cnt() const { return last_base_cnt_; }

 private:

  MltcpFlowState state_;
  uint32_t last_cnt_ = 0;
  uint32_t last_base_cnt_ = 0;
  uint32_t last_eval_us_ = 0;  // previous curve evaluation
  uint16_t epoch_carry_ = 0;   // sub-microsecond remainder of the clock scaling
  bool epoch_seen_ = false;
};

// Hands an iteration hint to whichever MLTCP congestion ops `cc` is; returns
// false (and does nothing) for a non-MLTCP algorithm.
bool MltcpHint(Ptr<TcpCongestionOps> cc, uint64_t bytes);

}  // namespace ns3
