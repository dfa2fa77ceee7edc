// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// dp_reference.h - the datapath agreement test's generator and reference
// (formats and the TCP stack's part in mltcp_dp_replay.h).  The reference
// drives the policy core directly, as a datapath that keeps its own window
// would; every datapath's adapter must make the same decisions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

extern "C" {
#include "mltcp.h"
#include "mltcp_dp_replay.h"
}

namespace mltcp_dp {

inline uint32_t SndUna(const mltcp_dp_event& e) { return (uint32_t)e.acked_total; }
inline uint32_t SndNxt(const mltcp_dp_event& e) { return (uint32_t)e.acked_total + e.inflight_bytes; }

// Training-like event sequences: iterations of acked bursts separated by
// compute gaps, with RTT jitter, losses, timeouts, intra-phase pauses and
// (optionally) hints; for DCQCN sends, CNPs, acks and timer ticks, one flow
// with MLTCP and one without.
class Generator {
 public:
  Generator(uint32_t algo, uint32_t seed, bool hints) : algo_(algo), hints_(hints), rng_(seed) {}

  std::vector<mltcp_dp_event> Run() {
    if (algo_ == MLTCP_DP_DCQCN) {
      DcqcnFlow(1);
      DcqcnFlow(0);
    } else {
      WindowFlow(40, true, 150, 400);
      WindowFlow(25, false, 150, 400);
      // Iterations of many windows, on which the start drain acts
      // (start_drain_windows).
      WindowFlow(12, true, 1500, 2500);
      // The same, with the peer sending as much back (a two-way connection,
      // which the start drain leaves alone).
      WindowFlow(8, true, 1500, 2500, true);
    }
    return out_;
  }

 private:
  uint32_t U(uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng_); }

  mltcp_dp_event& Emit(uint32_t kind) {
    mltcp_dp_event e{};
    e.kind = kind;
    e.now_us = now_;
    e.acked_total = acked_;
    e.received_total = received_;
    e.srtt_us = srtt_;
    e.min_rtt_us = min_rtt_;
    e.inflight_bytes = inflight_;
    e.rtt_us = -1;
    out_.push_back(e);
    return out_.back();
  }

  // Linux-style smoothed RTT: EWMA 1/8, and the smallest sample (ns-3's
  // model keeps both the same way).
  void Sample(int32_t rtt) {
    if (rtt <= 0)
      return;
    if (min_rtt_ == 0 || (uint32_t)rtt < min_rtt_)
      min_rtt_ = (uint32_t)rtt;
    srtt_ = srtt_ == 0 ? (uint32_t)rtt : srtt_ - (srtt_ >> 3) + ((uint32_t)rtt >> 3);
  }

  // hello: the flow opens with a message of a segment or two, as the job
  // emulator's connections do; its first real iteration then has no size it
  // can trust and runs at the seed's ratio.
  // An iteration is min_segs..max_segs segments.  two_way: the peer's data
  // arrives at the rate this flow's is acked.
  void WindowFlow(int iterations, bool hello, uint32_t min_segs, uint32_t max_segs,
                  bool two_way = false) {
    now_ += 1000;
    acked_ = 0;
    received_ = 0;
    inflight_ = 0;
    srtt_ = 0;
    min_rtt_ = 0;
    mltcp_dp_event& init = Emit(MLTCP_DP_INIT);
    init.bytes = algo_;
    init.seed = U(0, UINT32_MAX);
    const uint64_t size = U(min_segs, max_segs) * (uint64_t)MLTCP_DP_SEGMENT;
    const uint32_t base_rtt = U(500, 3000);
    for (int i = 0; i < iterations; ++i) {
      now_ += U(20000, 120000);  // compute phase
      inflight_ = 0;
      if (hints_ && i > 2 && i % 3)
        Emit(MLTCP_DP_HINT).bytes = U(0, 5) ? size : 0;
      Emit(MLTCP_DP_TX_START);
      uint64_t this_iter = size;
      if (U(0, 11) == 0)
        this_iter = size * U(2, 4);  // an outlier iteration
      if (hello && i == 0)
        this_iter = 1;
      for (uint64_t sent = 0; sent < this_iter;) {
        const uint32_t segs = U(1, 4);
        sent += segs * MLTCP_DP_SEGMENT;
        acked_ += segs * MLTCP_DP_SEGMENT;
        if (two_way)
          received_ += U(segs - 1, segs + 1) * MLTCP_DP_SEGMENT;
        now_ += U(20, 400);
        inflight_ = U(2, 80) * MLTCP_DP_SEGMENT;
        const int32_t rtt = U(0, 30) ? (int32_t)(base_rtt + U(0, 4000)) : -1;
        Sample(rtt);
        mltcp_dp_event& e = Emit(MLTCP_DP_ACK);
        e.acked_pkts = segs;
        e.rtt_us = rtt;
        e.cwnd_limited = U(0, 9) != 0;
        const uint32_t r = U(0, 999);
        if (r < 12) {
          Emit(MLTCP_DP_LOSS);
        } else if (r < 14) {
          now_ += U(200000, 400000);  // the timeout
          Emit(MLTCP_DP_RTO);
        } else if (r < 24) {
          now_ += U(100, 3000);  // a pause inside the phase (DDP bucket)
          inflight_ = 0;
          Emit(MLTCP_DP_TX_START);
        }
      }
    }
  }

  void DcqcnFlow(uint32_t mltcp) {
    now_ += 1000;
    acked_ = 0;
    inflight_ = 0;
    srtt_ = U(10, 200);
    mltcp_dp_event& init = Emit(MLTCP_DP_INIT);
    init.bytes = MLTCP_DP_DCQCN;
    init.acked_pkts = mltcp;
    init.seed = U(0, UINT32_MAX);
    const uint64_t size = U(200, 600) * 4096ULL;
    uint64_t sent_total = 0;
    for (int i = 0; i < 30; ++i) {
      now_ += U(2000, 30000);
      if (hints_ && i > 1 && i % 4)
        Emit(MLTCP_DP_HINT).bytes = size;
      bool first = true;
      // A hello first (see WindowFlow): the next iteration runs at the seed.
      const uint64_t this_iter = i == 0 ? 4096 : size;
      for (uint64_t sent = 0; sent < this_iter;) {
        const uint32_t n = U(1, 16) * 4096;
        sent += n;
        sent_total += n;
        now_ += U(1, 60);
        mltcp_dp_event& s = Emit(MLTCP_DP_SENT);
        s.bytes = n;
        s.cwnd_limited = first;
        first = false;
        if (acked_ < sent_total && U(0, 2) == 0) {
          acked_ = std::min<uint64_t>(sent_total, acked_ + U(1, 32) * 4096);
          Emit(MLTCP_DP_ACK);
        }
        if (U(0, 40) == 0)
          Emit(MLTCP_DP_CNP);
        if (U(0, 3) == 0) {
          now_ += U(1, 200);
          Emit(MLTCP_DP_ADVANCE);
        }
      }
      acked_ = sent_total;  // the phase completes
      now_ += U(10, 100);
      Emit(MLTCP_DP_ACK);
    }
  }

  uint32_t algo_;
  bool hints_;
  std::mt19937 rng_;
  std::vector<mltcp_dp_event> out_;
  uint32_t now_ = 0;
  uint64_t acked_ = 0;
  uint64_t received_ = 0;
  uint32_t inflight_ = 0;
  uint32_t srtt_ = 0;
  uint32_t min_rtt_ = 0;
};

// The core driven directly.
class Reference {
 public:
  Reference() { mltcp_params_default(&p_); mltcp_dcqcn_params_default(&dp_); }

  mltcp_dp_decision Step(const mltcp_dp_event& e, uint32_t seq) {
    switch (e.kind) {
      case MLTCP_DP_INIT: Init(e); break;
      case MLTCP_DP_ACK: Ack(e); break;
      case MLTCP_DP_TX_START:
        if (algo_ == MLTCP_DP_CUBIC)
          mltcp_cubic_flow_tx_start(&cubic_, e.now_us);
        mltcp_iter_on_tx_start(&Iter(), &p_, e.acked_total, e.now_us, e.srtt_us);
        mltcp_window_start(&w_, algo_ == MLTCP_DP_RENO
                                    ? mltcp_reno_flow_start_cwnd(&reno_, &p_, w_.cwnd,
                                                                 MLTCP_DP_SEGMENT, e.min_rtt_us,
                                                                 e.srtt_us, e.acked_total,
                                                                 e.received_total, nullptr)
                                    : mltcp_cubic_flow_start_cwnd(&cubic_, &p_, w_.cwnd,
                                                                  MLTCP_DP_SEGMENT, e.min_rtt_us,
                                                                  e.srtt_us, e.acked_total,
                                                                  e.received_total, nullptr));
        break;
      case MLTCP_DP_HINT:
        if (algo_ == MLTCP_DP_DCQCN)
          mltcp_dcqcn_flow_hint(&dcqcn_, &p_, &dp_, e.acked_total, e.bytes, e.now_us);
        else
          mltcp_iter_hint(&Iter(), e.acked_total, e.bytes, e.now_us);
        break;
      case MLTCP_DP_LOSS:
      case MLTCP_DP_RTO:
        w_.ssthresh = algo_ == MLTCP_DP_RENO ? mltcp_reno_flow_ssthresh(&reno_, &p_, w_.cwnd)
                                             : mltcp_cubic_flow_ssthresh(&cubic_, &p_, w_.cwnd);
        w_.cwnd = e.kind == MLTCP_DP_RTO ? 1 : w_.ssthresh;
        w_.cwnd_cnt = 0;
        if (e.kind == MLTCP_DP_RTO && algo_ == MLTCP_DP_CUBIC)
          mltcp_bictcp_on_rto(&cubic_.bic, e.now_us, SndNxt(e));
        break;
      case MLTCP_DP_SENT:
        if (e.cwnd_limited)
          mltcp_dcqcn_flow_on_tx_start(&dcqcn_, &p_, &dp_, e.acked_total, e.now_us, e.srtt_us);
        mltcp_dcqcn_flow_on_sent(&dcqcn_, &p_, &dp_, e.bytes, e.now_us);
        break;
      case MLTCP_DP_CNP: mltcp_dcqcn_flow_on_cnps(&dcqcn_, &dp_, 1, e.now_us); break;
      case MLTCP_DP_ADVANCE: mltcp_dcqcn_flow_advance(&dcqcn_, &p_, &dp_, e.now_us); break;
    }
    mltcp_dp_decision d{};
    d.seq = seq;
    const mltcp_iter& it = Iter();
    if (algo_ == MLTCP_DP_DCQCN) {
      d.gain = mltcp_dcqcn_flow_gain(&dcqcn_, &p_);
      d.rate_bps = dcqcn_.rp.rate_cur_bps;
      d.target_bps = dcqcn_.rp.rate_target_bps;
    } else {
      d.cwnd = w_.cwnd;
      d.ssthresh = w_.ssthresh;
      d.gain = algo_ == MLTCP_DP_RENO ? mltcp_reno_gain(&it, &p_) : mltcp_cubic_gain(&it, &p_);
    }
    d.iterations = it.iterations;
    d.hinted = it.hinted;
    d.iter_bytes = it.iter_bytes;
    return d;
  }

 private:
  mltcp_iter& Iter() {
    return algo_ == MLTCP_DP_RENO ? reno_.it : algo_ == MLTCP_DP_CUBIC ? cubic_.it : dcqcn_.it;
  }

  void Init(const mltcp_dp_event& e) {
    algo_ = (uint32_t)e.bytes;
    mltcp_window_init(&w_, MLTCP_DP_INIT_CWND, UINT32_MAX);
    if (algo_ == MLTCP_DP_RENO)
      mltcp_reno_flow_init(&reno_, e.acked_total, e.now_us);
    else if (algo_ == MLTCP_DP_CUBIC)
      mltcp_cubic_flow_init(&cubic_, e.acked_total, e.now_us, SndNxt(e));
    else
      mltcp_dcqcn_flow_init(&dcqcn_, &dp_, e.acked_pkts, e.now_us);
    mltcp_iter_seed(&Iter(), &p_, e.seed);
  }

  void Ack(const mltcp_dp_event& e) {
    if (algo_ == MLTCP_DP_DCQCN) {
      mltcp_dcqcn_flow_on_ack(&dcqcn_, e.acked_total, e.now_us);
      return;
    }
    mltcp_iter_on_ack(&Iter(), e.acked_total, e.now_us);
    if (algo_ == MLTCP_DP_CUBIC) {
      mltcp_cubic_rtt_sample s{};
      s.rtt_us = e.rtt_us;
      s.now_us = e.now_us;
      s.cwnd = w_.cwnd;
      s.snd_una = SndUna(e);
      s.snd_nxt = SndNxt(e);
      s.in_slow_start = mltcp_window_in_slow_start(&w_);
      if (mltcp_bictcp_on_rtt(&cubic_.bic, &s))
        w_.ssthresh = w_.cwnd;
    }
    if (!e.cwnd_limited)
      return;
    if (algo_ == MLTCP_DP_RENO)
      mltcp_reno_flow_cong_avoid(&reno_, &p_, &w_, e.acked_pkts, MLTCP_DP_SEGMENT);
    else
      mltcp_cubic_flow_cong_avoid(&cubic_, &p_, &w_, e.acked_pkts, e.now_us, MLTCP_DP_SEGMENT);
  }

  mltcp_params p_;
  mltcp_dcqcn_params dp_;
  uint32_t algo_ = MLTCP_DP_RENO;
  mltcp_window w_{};
  mltcp_reno_flow reno_{};
  mltcp_cubic_flow cubic_{};
  mltcp_dcqcn_flow dcqcn_{};
};

}  // namespace mltcp_dp
