// The core's CUBIC (core/mltcp_cubic.h) against what tcp_cubic.c does, and
// the window arithmetic of core/mltcp_reno.h against tcp_cong.c's.
#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"

namespace {

// The kernel's "while (ca->ack_cnt > delta)" loop, for the test only.
void FriendlyLoop(uint32_t* ack_cnt, uint32_t* tcp_cwnd, uint32_t delta) {
  while (*ack_cnt > delta) {
    *ack_cnt -= delta;
    (*tcp_cwnd)++;
  }
}

// Runs CUBIC in congestion avoidance: one ack per `ack_gap_us`, one segment
// each, from `from_us` for `span_us`; returns the window reached.
uint32_t RunAvoidance(mltcp_bictcp* ca, mltcp_window* w, uint32_t from_us,
                      uint32_t span_us, uint32_t gain, uint32_t ack_gap_us = 100) {
  for (uint32_t t = from_us; t - from_us < span_us; t += ack_gap_us)
    mltcp_window_cong_avoid_ai(w, mltcp_bictcp_cong_avoid(ca, w->cwnd, 1, t, gain), 1);
  return w->cwnd;
}

}  // namespace

TEST(Cubic, CubeRootWithinAFewTenthsOfAPercent) {
  for (uint64_t a = 1; a < (1ULL << 50); a = a * 3 + 7) {
    const double want = std::cbrt(static_cast<double>(a));
    const double got = mltcp_cubic_root(a);
    // tcp_cubic.c: average error ~0.195%; small a are coarse integers.
    EXPECT_NEAR(got, want, std::max(1.0, want * 0.01)) << "a=" << a;
  }
  EXPECT_EQ(mltcp_cubic_root(0), 0u);
}

TEST(Cubic, FriendlyDivisionEqualsTheKernelLoop) {
  // The division in mltcp_bictcp_update() must leave what the loop leaves,
  // also for exact multiples (the loop stops at ack_cnt == delta).
  for (uint32_t delta : {1u, 2u, 7u, 18u, 1000u}) {
    for (uint32_t ack = 0; ack < 5 * delta + 3; ++ack) {
      uint32_t a_loop = ack, c_loop = 10;
      FriendlyLoop(&a_loop, &c_loop, delta);
      uint32_t a_div = ack, c_div = 10;
      if (a_div > delta) {
        const uint32_t n = (a_div - 1) / delta;
        a_div -= n * delta;
        c_div += n;
      }
      ASSERT_EQ(a_div, a_loop) << "ack=" << ack << " delta=" << delta;
      ASSERT_EQ(c_div, c_loop);
    }
  }
}

TEST(Cubic, KAfterALossIsTheCubeRootOfTheWindowDropOverC) {
  mltcp_bictcp ca;
  mltcp_bictcp_init(&ca, 1000, 0);
  mltcp_params p = mltcp_test::DefaultParams();
  const uint32_t ss = mltcp_bictcp_ssthresh(&ca, 1000, MLTCP_GAIN_ONE, &p, 0);
  EXPECT_EQ(ss, 1000u * MLTCP_CUBIC_BETA / 1024);  // 700: beta 717/1024
  EXPECT_EQ(ca.last_max_cwnd, 1000u);
  EXPECT_EQ(ca.epoch_start, 0u);
  mltcp_bictcp_update(&ca, ss, 1, 5000, MLTCP_GAIN_ONE);
  // K = cbrt((W_max - cwnd) / C) seconds, C = 0.4 (bic_scale 41 / 102.4).
  const double k_s = std::cbrt((1000.0 - ss) / (41.0 / 102.4));
  EXPECT_NEAR(ca.bic_K / 1024.0, k_s, 0.02 * k_s);
  EXPECT_EQ(ca.bic_origin_point, 1000u);
  EXPECT_EQ(ca.epoch_start, 5000u);
}

TEST(Cubic, FastConvergenceLowersWmaxBelowTheLastMaximum) {
  mltcp_bictcp ca;
  mltcp_bictcp_init(&ca, 1, 0);
  mltcp_bictcp_on_loss(&ca, 1000);
  mltcp_bictcp_on_loss(&ca, 800);  // below W_max: (1 + beta) / 2 of cwnd
  EXPECT_EQ(ca.last_max_cwnd, 800u * (1024 + 717) / 2048);
}

TEST(Cubic, WindowFollowsTheCurveAndTheGainSpeedsItsClock) {
  mltcp_params p = mltcp_test::DefaultParams();
  uint32_t reached[2];
  const uint32_t gains[2] = {MLTCP_GAIN_ONE, 2 * MLTCP_GAIN_ONE};
  for (int i = 0; i < 2; ++i) {
    mltcp_bictcp ca;
    mltcp_bictcp_init(&ca, 1, 0);
    mltcp_window w;
    mltcp_window_init(&w, 100, 1 << 20);
    w.ssthresh = mltcp_bictcp_ssthresh(&ca, 100, MLTCP_GAIN_ONE, &p, 0);
    w.cwnd = w.ssthresh;
    // One ack per ms for 1 s (slow enough that the TCP-friendly estimate
    // stays below the curve).
    reached[i] = RunAvoidance(&ca, &w, 10, 1000000, gains[i], 1000);
  }
  // W(t) = C (t - K)^3 + W_max, K = 4.2 s for W_max 100: W(1 s) = 86.9,
  // and with the clock at F = 2, W(2 s) = 95.7.
  EXPECT_NEAR(reached[0], 87.0, 2.0);
  EXPECT_NEAR(reached[1], 95.7, 2.0);
}

TEST(Cubic, NoEpochAtClockZero) {
  mltcp_bictcp ca;
  mltcp_bictcp_init(&ca, 0, 0);
  mltcp_bictcp_update(&ca, 50, 1, 0, MLTCP_GAIN_ONE);
  EXPECT_EQ(ca.epoch_start, 1u);  // 0 would mean "no epoch"
}

TEST(Cubic, IdleShiftsTheEpochButNotPastNow) {
  mltcp_bictcp ca;
  mltcp_bictcp_init(&ca, 1, 0);
  ca.epoch_start = 1000;
  mltcp_bictcp_on_tx_start(&ca, 50000, 20000);
  EXPECT_EQ(ca.epoch_start, 21000u);
  mltcp_bictcp_on_tx_start(&ca, 30000, 20000);
  EXPECT_EQ(ca.epoch_start, 30000u);  // 41000 would be in the future
  ca.epoch_start = 0;
  mltcp_bictcp_on_tx_start(&ca, 30000, 20000);
  EXPECT_EQ(ca.epoch_start, 0u);  // no epoch: nothing to shift
}

TEST(Cubic, HyStartDelayDetectorFindsTheExit) {
  mltcp_bictcp ca;
  mltcp_bictcp_init(&ca, 0, 100);
  mltcp_cubic_rtt_sample s{};
  s.cwnd = 32;
  s.snd_una = 50;  // still in the round that ends at 100
  s.snd_nxt = 200;
  s.in_slow_start = 1;
  uint32_t found = 0, now = 0;
  // First the minimum, then samples well above it (acks 5 ms apart: no
  // ack train).
  s.rtt_us = 10000;
  for (int i = 0; i < 3; ++i) {
    s.now_us = now += 5000;
    found |= mltcp_bictcp_on_rtt(&ca, &s);
  }
  EXPECT_EQ(found, 0u);
  EXPECT_EQ(ca.delay_min, 10000u);
  // The next round (snd_una past its end): its min RTT is 20 ms, above
  // 10 ms + clamp(10/8 ms, 4, 16) ms, after 8 samples.
  s.snd_una = 150;
  s.snd_nxt = 400;
  s.rtt_us = 20000;
  for (int i = 0; i < 12 && !found; ++i) {
    s.now_us = now += 5000;
    found |= mltcp_bictcp_on_rtt(&ca, &s);
  }
  EXPECT_EQ(found, (uint32_t)MLTCP_HYSTART_FOUND_DELAY);
  EXPECT_EQ(ca.found, 1u);
  s.now_us = now += 5000;
  EXPECT_EQ(mltcp_bictcp_on_rtt(&ca, &s), 0u);  // found once
}

TEST(Cubic, HyStartAckTrainFindsTheExitAndSmallWindowsAreExempt) {
  mltcp_bictcp ca;
  mltcp_bictcp_init(&ca, 0, 100);
  mltcp_cubic_rtt_sample s{};
  s.snd_una = 50;
  s.snd_nxt = 200;
  s.in_slow_start = 1;
  s.rtt_us = 1000;
  s.cwnd = 8;  // below the low window: never
  uint32_t found = 0;
  for (uint32_t t = 100; t < 3000; t += 100) {
    s.now_us = t;
    found |= mltcp_bictcp_on_rtt(&ca, &s);
  }
  EXPECT_EQ(found, 0u);
  s.cwnd = 64;  // a new round, an ack train longer than delay_min / 2 = 500 us
  s.snd_una = 150;
  s.snd_nxt = 400;
  for (uint32_t t = 3000; t < 4000 && !found; t += 100) {
    s.now_us = t;
    found |= mltcp_bictcp_on_rtt(&ca, &s);
  }
  EXPECT_TRUE(found & MLTCP_HYSTART_FOUND_TRAIN);
}

TEST(Cubic, RttSamplesRightAfterRecoveryAreDiscarded) {
  mltcp_bictcp ca;
  mltcp_bictcp_init(&ca, 0, 0);
  ca.epoch_start = 1000;
  mltcp_cubic_rtt_sample s{};
  s.rtt_us = 500;
  s.now_us = 1000 + 999999;
  mltcp_bictcp_on_rtt(&ca, &s);
  EXPECT_EQ(ca.delay_min, 0u);
  s.now_us = 1000 + 1000000;
  mltcp_bictcp_on_rtt(&ca, &s);
  EXPECT_EQ(ca.delay_min, 500u);
  s.rtt_us = -1;  // no sample
  mltcp_bictcp_on_rtt(&ca, &s);
  EXPECT_EQ(ca.delay_min, 500u);
}

TEST(RenoWindow, SlowStartAndAdditiveIncreaseAsTcpCong) {
  mltcp_window w;
  mltcp_window_init(&w, 10, 100);
  w.ssthresh = 15;
  EXPECT_EQ(mltcp_window_slow_start(&w, 8), 3u);  // 10 -> 15, 3 left over
  EXPECT_EQ(w.cwnd, 15u);
  mltcp_window_cong_avoid_ai(&w, 15, 3);
  EXPECT_EQ(w.cwnd, 15u);
  EXPECT_EQ(w.cwnd_cnt, 3u);
  mltcp_window_cong_avoid_ai(&w, 15, 30);  // 33 acks: two more segments
  EXPECT_EQ(w.cwnd, 17u);
  EXPECT_EQ(w.cwnd_cnt, 3u);
  mltcp_window_cong_avoid_ai(&w, 2, 0);  // credit at a higher w applied gently
  EXPECT_EQ(w.cwnd, 18u);
  EXPECT_EQ(w.cwnd_cnt, 0u);
  w.cwnd = 99;
  mltcp_window_cong_avoid_ai(&w, 1, 10);
  EXPECT_EQ(w.cwnd, 100u);  // clamp
  mltcp_window_cong_avoid_ai(&w, 0, 1);  // w = 0 never divides by zero
  EXPECT_EQ(w.cwnd, 100u);
}

TEST(RenoFlow, NeutralFlowIsReno) {
  mltcp_params p = mltcp_test::DefaultParams();
  mltcp_reno_flow f;
  mltcp_reno_flow_init(&f, 0, 0);
  EXPECT_EQ(mltcp_reno_flow_ai_w(&f, &p, 80), 80u);  // no structure: F = 1
  EXPECT_EQ(mltcp_reno_flow_ssthresh(&f, &p, 80), 40u);
  EXPECT_EQ(mltcp_reno_flow_ssthresh(&f, &p, 3), 2u);
}
