// SPDX-License-Identifier: GPL-2.0-only
//
// mltcp-tcp.h - MLTCP congestion control for ns-3: TcpMltcpReno and
// TcpMltcpCubic run the policy core's Reno step and CUBIC with HyStart
// (core/mltcp_reno.h, core/mltcp_cubic.h), the same code as the kernel and
// BPF datapaths, with the core's window arithmetic (tcp_slow_start,
// tcp_cong_avoid_ai) on ns-3's byte-counted window.  With the attribute
// Enabled=false they are the base algorithms, which is what the simulator
// runs as "reno" and "cubic": base and MLTCP runs differ in F only.  These
// classes only feed the core the signals the kernel hooks see:
//   - cumulative bytes acked = sum of snd_una advances (tcp_sock->bytes_acked),
//     kept from TcpSocketState::m_lastAckedSeq,
//   - CA_EVENT_TX_START (ns-3 3.37 fires it when sending resumes with nothing
//     in flight, as tcp_event_data_sent does),
//   - a smoothed RTT (Linux srtt: EWMA 1/8 of the RTT samples PktsAcked gets)
//     and the smallest of those samples (tcp_min_rtt, for the start drain),
//   - time in microseconds (Simulator::Now), truncated to u32 like the kernel.
// Differs from the kernel datapath: ns-3 3.37 has no cwnd validation
// (tcp_is_cwnd_limited) and no slow-start-after-idle, so neither does this;
// HyStart's TSO cushion is 0 (ns-3 sends no TSO bursts).
#pragma once

#include <cstdint>

#include "ns3/tcp-congestion-ops.h"

#include "mltcp.hpp"

namespace ns3 {

// The per-flow MLTCP state both congestion ops share: the core's tracker plus
// the few signals ns-3 does not keep for us.

// A 32-bit sequence number's forward progress as a 64-bit byte count (as
// tcp_sock's bytes_acked and bytes_received), counted from the first Fold().
class SequenceTotal {
 public:
  void Fold(SequenceNumber32 seq) {
    if (!have_last_) {
      last_ = seq;
      have_last_ = true;
    } else if (seq > last_) {
      total_ += static_cast<uint32_t>(seq - last_);
      last_ = seq;
    }
  }
  uint64_t total() const { return total_; }

 private:
  bool have_last_ = false;
  SequenceNumber32 last_{0};
  uint64_t total_ = 0;
};

class MltcpFlowState {
 public:
  // Called from every hook before a decision: folds new snd_una progress,
  // and the peer's data received (the receive buffer's next sequence).
  // Hint() uses the socket state the last hook saw (acks between hooks
  // always pass through PktsAcked, so its snd_una is current).
  void Sync(Ptr<const TcpSocketState> tcb);
  void OnRtt(const Time& rtt);
  bool OnTxStart(Ptr<const TcpSocketState> tcb);
  void Hint(uint64_t bytes);
  // Replaces the first-iteration seed drawn at the flow's start (DrawSeed).
  void Seed(uint32_t random);
  uint32_t Gain() const { return flow_.Gain(params_); }  // the paper's F
  // The gain each base applies: F times its norm (mltcp_params_derive).
  uint32_t RenoGain() const { return mltcp_reno_gain(&flow_.state(), &params_.raw()); }
  uint32_t CubicGain() const { return mltcp_cubic_gain(&flow_.state(), &params_.raw()); }
  // The window must not grow now: the iteration's last windows
  // (mltcp_tail_hold), checked before slow start.
  bool TailHold(Ptr<const TcpSocketState> tcb) const;

  void SetParams(const mltcp::Params& p) { params_ = p; }
  const mltcp::Params& params() const { return params_; }
  const mltcp::Flow& flow() const { return flow_; }
  mltcp::Flow& flow() { return flow_; }
  // The iteration keeps its base's beta at a loss (mltcp_iter_two_way).
  bool TwoWay() const { return mltcp_iter_two_way(&flow_.state(), &params_.raw()) != 0; }
  uint64_t acked_total() const { return acked_.total(); }
  uint64_t received_total() const { return received_.total(); }
  uint32_t srtt_us() const { return srtt_us_; }
  uint32_t min_rtt_us() const { return min_rtt_us_; }
  uint32_t tx_starts() const { return tx_starts_; }

  static uint32_t NowUs();
  // A first-iteration seed (mltcp_iter_seed) from ns-3's generator, so that
  // a run is reproducible from its seed and run number.
  static uint32_t DrawSeed();

 private:
  void Start();

  mltcp::Params params_;
  mltcp::Flow flow_;
  Ptr<const TcpSocketState> tcb_;  // last socket state a hook saw
  bool started_ = false;
  SequenceTotal acked_;     // snd_una's progress: bytes_acked
  SequenceTotal received_;  // the receive buffer's: bytes_received
  uint32_t srtt_us_ = 0;  // 0 until the first sample
  // The smallest RTT sample (tcp_min_rtt(); Linux keeps a 5-minute windowed
  // minimum, a simulated connection is shorter); 0 until the first sample.
  uint32_t min_rtt_us_ = 0;
  uint32_t tx_starts_ = 0;
};

// Attributes shared by both classes: one per row of the core's parameter
// table, "Enabled", "Slope", "Intercept", "GainMin", ... (mltcp-tcp.cc).
class TcpMltcpReno : public TcpCongestionOps {
 public:
  static TypeId GetTypeId();
  TcpMltcpReno();
  TcpMltcpReno(const TcpMltcpReno& other) = default;

  std::string GetName() const override { return "TcpMltcpReno"; }
  void Init(Ptr<TcpSocketState> tcb) override;
  uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override;
  void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override;
  void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt) override;
  void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event) override;
  Ptr<TcpCongestionOps> Fork() override { return CopyObject<TcpMltcpReno>(this); }

  // The application announces "an iteration of `bytes` bytes starts now".
  void Hint(uint64_t bytes) { state_.Hint(bytes); }
  MltcpFlowState& state() { return state_; }
  uint32_t last_ai_w() const { return last_ai_w_; }


 private:
  MltcpFlowState state_;
  mltcp_reno_cache cache_{};  // the core's per-ack cache of w
  uint32_t cwnd_cnt_ = 0;     // tcp_sock->snd_cwnd_cnt
  uint32_t last_ai_w_ = 0;
};

class TcpMltcpCubic : public TcpCongestionOps {
 public:
  static TypeId GetTypeId();
  TcpMltcpCubic();
  TcpMltcpCubic(const TcpMltcpCubic& other) = default;

  std::string GetName() const override { return "TcpMltcpCubic"; }
  void Init(Ptr<TcpSocketState> tcb) override;
  uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override;
  void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override;
  void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt) override;
  void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event) override;
  void CongestionStateSet(Ptr<TcpSocketState> tcb,
                          const TcpSocketState::TcpCongState_t newState) override;
  Ptr<TcpCongestionOps> Fork() override { return CopyObject<TcpMltcpCubic>(this); }

  void Hint(uint64_t bytes) { state_.Hint(bytes); }
  MltcpFlowState& state() { return state_; }
  const mltcp_bictcp& bic() const { return bic_; }
  uint32_t last_cnt() const { return last_cnt_; }

 private:
  void Start(Ptr<const TcpSocketState> tcb);

  MltcpFlowState state_;
  mltcp_bictcp bic_{};
  bool bic_started_ = false;
  uint32_t cwnd_cnt_ = 0;  // tcp_sock->snd_cwnd_cnt
  uint32_t last_cnt_ = 0;  // the last w handed to tcp_cong_avoid_ai
};

// Hands an iteration hint to whichever MLTCP congestion ops `cc` is; returns
// false (and does nothing) for a non-MLTCP algorithm.
bool MltcpHint(Ptr<TcpCongestionOps> cc, uint64_t bytes);

}  // namespace ns3
