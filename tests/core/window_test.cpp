// What F does to Reno's and CUBIC's window growth.
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>

#include "test_util.h"

using mltcp_test::Driver;

// The kernel's tcp_cong_avoid_ai() (net/ipv4/tcp_cong.c), for the test only.
static void CongAvoidAi(uint32_t* cwnd, uint32_t* cwnd_cnt, uint32_t w,
                        uint32_t acked) {
  if (*cwnd_cnt >= w) {
    *cwnd_cnt = 0;
    (*cwnd)++;
  }
  *cwnd_cnt += acked;
  if (*cwnd_cnt >= w) {
    const uint32_t delta = *cwnd_cnt / w;
    *cwnd_cnt -= delta * w;
    *cwnd += delta;
  }
}

TEST(Window, RenoW) {
  EXPECT_EQ(mltcp_reno_ai_w(100, 1024), 100u);   // F = 1: plain Reno
  EXPECT_EQ(mltcp_reno_ai_w(100, 2048), 50u);    // F = 2: twice as fast
  EXPECT_EQ(mltcp_reno_ai_w(100, 256), 400u);    // F = 0.25
  EXPECT_EQ(mltcp_reno_ai_w(100, 1792), 57u);    // 102400 / 1792 = 57.1
  EXPECT_EQ(mltcp_reno_ai_w(0, 1024), 1u);       // never 0: the kernel divides by w
  EXPECT_EQ(mltcp_reno_ai_w(100, 0), 100u);      // gain 0 guarded
  EXPECT_EQ(mltcp_reno_ai_w(0xffffffffu, 16), 0xffffffffu);  // saturates
}

TEST(Window, DecreaseKeepsBetaTimesFWithinHalfwayBounds) {
  mltcp_params p;
  mltcp_params_default(&p);
  ASSERT_EQ(p.scale_decrease, 1u);
  // Reno, beta 1/2: keep F/2 within [1/4, 3/4].
  EXPECT_EQ(mltcp_decrease_beta(MLTCP_RENO_BETA, 1024, &p), 512u);  // F = 1: Reno
  EXPECT_EQ(mltcp_decrease_beta(MLTCP_RENO_BETA, 768, &p), 384u);   // F = 0.75
  EXPECT_EQ(mltcp_decrease_beta(MLTCP_RENO_BETA, 256, &p), 256u);   // 128, raised to 1/4
  EXPECT_EQ(mltcp_decrease_beta(MLTCP_RENO_BETA, 1792, &p), 768u);  // 896, lowered to 3/4
  EXPECT_EQ(mltcp_decrease_beta(MLTCP_RENO_BETA, 0, &p), 256u);     // never below beta/2
  // CUBIC, beta 717/1024: keep 0.7 F within [358, 870].
  EXPECT_EQ(mltcp_decrease_beta(717, 1229, &p), 860u);  // 717 * 1229 / 1024 = 860.5
  EXPECT_EQ(mltcp_decrease_beta(717, 512, &p), 358u);   // 358.5 -> beta/2 = 358
  EXPECT_EQ(mltcp_decrease_beta(717, 4096, &p), 870u);  // (1024 + 717) / 2
  // Off, or a beta that keeps everything: the base's beta, whatever F.
  p.scale_decrease = 0;
  EXPECT_EQ(mltcp_decrease_beta(MLTCP_RENO_BETA, 256, &p), 512u);
  p.scale_decrease = 1;
  EXPECT_EQ(mltcp_decrease_beta(MLTCP_BETA_ONE, 256, &p), MLTCP_BETA_ONE);
}

// decrease_floor moves the lower clamp (1/1024 of the base's beta); the
// upper one stays, and so does F above 1.
TEST(Window, DecreaseFloorSetsTheLowerClamp) {
  mltcp_params p;
  mltcp_params_default(&p);
  ASSERT_EQ(p.decrease_floor, 512u);
  p.decrease_floor = 1024;  // never below the base
  EXPECT_EQ(mltcp_decrease_beta(MLTCP_RENO_BETA, 256, &p), 512u);
  EXPECT_EQ(mltcp_decrease_beta(MLTCP_CUBIC_BETA, 512, &p), 717u);
  EXPECT_EQ(mltcp_decrease_beta(MLTCP_RENO_BETA, 1536, &p), 768u);  // F 1.5: 3/4
  EXPECT_EQ(mltcp_decrease_beta(MLTCP_CUBIC_BETA, 4096, &p), 870u);
  p.decrease_floor = 768;  // 3/4 of the base's beta
  EXPECT_EQ(mltcp_decrease_beta(MLTCP_RENO_BETA, 256, &p), 384u);
  EXPECT_EQ(mltcp_decrease_beta(MLTCP_CUBIC_BETA, 256, &p), 537u);  // 717 * 3/4 = 537.75
  EXPECT_EQ(mltcp_decrease_beta(MLTCP_CUBIC_BETA, 896, &p), 627u);  // 627.4: above the floor
  // At 1024 every iteration is decreased as a two-way one, so the one-way
  // norms become the two-way ones; the deeper the floor, the larger the norm.
  p.decrease_floor = 1024;
  mltcp_params_derive(&p);
  EXPECT_EQ(p.norm_reno, p.norm_reno_two_way);
  EXPECT_EQ(p.norm_cubic, p.norm_cubic_two_way);
  uint32_t last_reno = 0, last_cubic = 0;
  for (uint32_t f = 1024; f >= 256; f -= 256) {
    p.decrease_floor = f;
    mltcp_params_derive(&p);
    EXPECT_GT(p.norm_reno, last_reno) << f;
    EXPECT_GT(p.norm_cubic, last_cubic) << f;
    last_reno = p.norm_reno;
    last_cubic = p.norm_cubic;
  }
}

TEST(Window, ScaledDecreaseKeepsTheRecoveryFloor) {
  const mltcp_params p = mltcp_test::DefaultParams();
  // Large windows: the scaled decrease as it is (F = 0.25: keep 1/4).
  EXPECT_EQ(mltcp_decrease_ssthresh(100, MLTCP_RENO_BETA, 256, &p, 0), 25u);
  EXPECT_EQ(mltcp_decrease_ssthresh(100, MLTCP_RENO_BETA, 1792, &p, 0), 75u);
  // 12 -> 3 would leave no room for three duplicate acks: 4.
  EXPECT_EQ(mltcp_decrease_ssthresh(12, MLTCP_RENO_BETA, 256, &p, 0), MLTCP_RECOVERY_WINDOW);
  // 6 -> 1.5: never below the base's own 3 when that is under the floor.
  EXPECT_EQ(mltcp_decrease_ssthresh(6, MLTCP_RENO_BETA, 256, &p, 0), 3u);
  EXPECT_EQ(mltcp_decrease_ssthresh(3, MLTCP_RENO_BETA, 256, &p, 0), 2u);  // the base's 2
  // CUBIC: 10 -> 3.5 floored at 4; the base would keep 7.
  EXPECT_EQ(mltcp_decrease_ssthresh(10, MLTCP_CUBIC_BETA, 256, &p, 0), 4u);
  // A high F keeps more than the base, floor or not.
  EXPECT_EQ(mltcp_decrease_ssthresh(6, MLTCP_RENO_BETA, 1792, &p, 0), 4u);
}

// An iteration that carries its peer's data (mltcp_iter_two_way) never cuts
// deeper than its base: F below 1 keeps the base's beta, above 1 more.
TEST(Window, TwoWayDecreaseKeepsAtLeastTheBasesBeta) {
  mltcp_params p = mltcp_test::DefaultParams();
  EXPECT_EQ(mltcp_decrease_ssthresh(100, MLTCP_RENO_BETA, 256, &p, 1), 50u);
  EXPECT_EQ(mltcp_decrease_ssthresh(100, MLTCP_CUBIC_BETA, 256, &p, 1), 70u);
  EXPECT_EQ(mltcp_decrease_ssthresh(100, MLTCP_RENO_BETA, 1792, &p, 1), 75u);
  EXPECT_EQ(mltcp_decrease_ssthresh(6, MLTCP_RENO_BETA, 256, &p, 1), 3u);
  EXPECT_EQ(mltcp_decrease_ssthresh(3, MLTCP_RENO_BETA, 256, &p, 1), 2u);
  p.scale_decrease = 0;
  EXPECT_EQ(mltcp_decrease_ssthresh(100, MLTCP_RENO_BETA, 1792, &p, 1), 50u);
}

TEST(Window, SsthreshIsCwndTimesBetaAtLeastTwo) {
  EXPECT_EQ(mltcp_ssthresh(100, MLTCP_RENO_BETA), 50u);  // tcp_reno_ssthresh
  EXPECT_EQ(mltcp_ssthresh(101, MLTCP_RENO_BETA), 50u);  // cwnd >> 1
  EXPECT_EQ(mltcp_ssthresh(100, 717), 70u);              // bictcp_recalc_ssthresh: 70.02
  EXPECT_EQ(mltcp_ssthresh(10, 384), 3u);                // 3.75, floored
  EXPECT_EQ(mltcp_ssthresh(3, 256), 2u);                 // 0.75: at least 2
  EXPECT_EQ(mltcp_ssthresh(0xffffffffu, 870), 0xd97fffffu);  // 64-bit product, no overflow
}

TEST(Window, RenoGrowsFSegmentsPerRtt) {
  const struct {
    uint32_t gain;
    uint32_t growth_per_rtt_x4;  // expected growth over 4 RTTs
  } cases[] = {{1024, 4}, {2048, 8}, {256, 1}, {4096, 16}};
  for (const auto& c : cases) {
    uint32_t cwnd = 1000, cnt = 0;
    for (int rtt = 0; rtt < 4; rtt++) {
      const uint32_t acks = cwnd;  // one RTT acks a window, one ack each
      for (uint32_t a = 0; a < acks; a++)
        CongAvoidAi(&cwnd, &cnt, mltcp_reno_ai_w(cwnd, c.gain), 1);
    }
    EXPECT_NEAR(cwnd - 1000, c.growth_per_rtt_x4, 1) << "gain " << c.gain;
  }
}

TEST(Window, CubicCnt) {
  EXPECT_EQ(mltcp_cubic_cnt(10, 1024), 10u);
  EXPECT_EQ(mltcp_cubic_cnt(10, 1792), 5u);    // 10240 / 1792 = 5.7
  EXPECT_EQ(mltcp_cubic_cnt(10, 256), 40u);
  EXPECT_EQ(mltcp_cubic_cnt(3, 4096), 2u);     // CUBIC's own floor of 2 holds
  EXPECT_EQ(mltcp_cubic_cnt(100, 0), 100u);
  // bictcp's "no growth" cnt of 100 * cwnd stays huge, never wraps.
  EXPECT_EQ(mltcp_cubic_cnt(0xffffffffu, 64), 0xffffffffu);
}

// The Reno fast path: F cached between 1/64 steps of an iteration.
TEST(RenoCache, MatchesExactGainAtEveryStepAndStaysWithinOneStep) {
  Driver d;
  d.p.normalize = 0;  // the paper's F, to compare with d.Gain()
  mltcp_params_derive(&d.p);
  mltcp_reno_cache c;
  mltcp_reno_cache_init(&c);
  d.Phase(640000);
  ASSERT_TRUE(d.Idle(100000));  // E = 640000: steps of 10000 bytes
  uint32_t recomputes = 0, last_gain = 0;
  for (int i = 0; i < 640; i++) {
    d.Phase(1000, 1000);
    const uint32_t cached = mltcp_gain_cached(&c.f, &d.it, &d.p);
    const uint32_t exact = d.Gain();
    if (cached != last_gain) recomputes++;
    last_gain = cached;
    // Stale by less than one step: slope / 64 = 24 units at most.
    EXPECT_LE(exact - cached, 24u) << "at " << d.it.iter_bytes;
    if (d.it.iter_bytes % 10000 == 1000) {
      EXPECT_EQ(cached, exact);
    }
  }
  EXPECT_LE(recomputes, 65u);
  EXPECT_GE(recomputes, 60u);
}

TEST(RenoCache, WFollowsCwndHintsAndDisable) {
  Driver d;
  d.p.normalize = 0;  // F as given: 0.25 at the start, 1.75 at the end
  mltcp_params_derive(&d.p);
  mltcp_reno_cache c;
  mltcp_reno_cache_init(&c);
  EXPECT_EQ(mltcp_reno_ai_w_cached(&c, &d.it, &d.p, 100), 100u);  // neutral
  mltcp_iter_hint(&d.it, d.acked, 100000, d.now);
  EXPECT_EQ(mltcp_reno_ai_w_cached(&c, &d.it, &d.p, 100), 400u);  // F = 0.25
  EXPECT_EQ(mltcp_reno_ai_w_cached(&c, &d.it, &d.p, 101), 404u);  // new cwnd
  d.Phase(100000);
  EXPECT_EQ(mltcp_reno_ai_w_cached(&c, &d.it, &d.p, 101), 57u);   // F = 1.75
  mltcp_iter_hint(&d.it, d.acked, 100000, d.now);  // same size, new iteration
  EXPECT_EQ(mltcp_reno_ai_w_cached(&c, &d.it, &d.p, 101), 404u);
  d.p.enabled = 0;  // switching off is immediate
  EXPECT_EQ(mltcp_reno_ai_w_cached(&c, &d.it, &d.p, 101), 101u);
  d.p.enabled = 1;
  EXPECT_EQ(mltcp_reno_ai_w_cached(&c, &d.it, &d.p, 101), 404u);
}

TEST(Cubic, FriendlyAcksScaleLikeReno) {
  EXPECT_EQ(mltcp_cubic_friendly_acks(100, 1024), 100u);
  EXPECT_EQ(mltcp_cubic_friendly_acks(100, 2048), 50u);
  EXPECT_EQ(mltcp_cubic_friendly_acks(100, 256), 400u);
  EXPECT_EQ(mltcp_cubic_friendly_acks(0, 4096), 1u);  // CUBIC divides by it
}

TEST(Cubic, EpochScaleAdvancesTheCurveByFTimesDt) {
  uint16_t carry = 0;
  // F = 2: the curve advances 2000 us over 1000 us: epoch 1000 us earlier.
  EXPECT_EQ(mltcp_cubic_epoch_scale(50000, 60000, 1000, 2048, &carry), 49000u);
  EXPECT_EQ(carry, 0u);
  // F = 0.25: 250 us of curve per 1000 us: epoch 750 us later.
  EXPECT_EQ(mltcp_cubic_epoch_scale(50000, 60000, 1000, 256, &carry), 50750u);
  // F = 1: unchanged.
  EXPECT_EQ(mltcp_cubic_epoch_scale(50000, 60000, 1000, 1024, &carry), 50000u);
  // Never past now: t = now - epoch never goes negative.
  EXPECT_EQ(mltcp_cubic_epoch_scale(59900, 60000, 1000, 64, &carry), 60000u);
  // Wraps like the kernel's u32 clocks.
  EXPECT_EQ(mltcp_cubic_epoch_scale(100, 2000, 1000, 3072, &carry), 0xffffffffu - 1899);
}

TEST(Cubic, EpochScaleCarriesFractionsOfACoarseClock) {
  // jiffies: one tick per evaluation, F = 1.75 → 0.75 tick per tick.
  uint16_t carry = 0;
  uint32_t epoch = 1000, now = 2000;
  for (int i = 0; i < 4; i++) epoch = mltcp_cubic_epoch_scale(epoch, ++now, 1, 1792, &carry);
  EXPECT_EQ(epoch, 1000u - 3);  // 0.75 x 4 = 3 ticks, none lost
  EXPECT_EQ(carry, 0u);
  // Over a long run the curve time is F x real time within one tick.
  epoch = 1000;
  now = 2000;
  for (int i = 0; i < 1000; i++) epoch = mltcp_cubic_epoch_scale(epoch, ++now, 1, 1300, &carry);
  const uint32_t curve_time = now - epoch;           // t at the end
  const double expected = 1000 + 1000 * 1300.0 / 1024;  // 1000 + 1269.5
  EXPECT_NEAR(curve_time, expected, 1.0);
}

TEST(TailHold, HoldsOnlyInTheIterationsLastWindows) {
  Driver d;
  d.p.tail_share = 1024;  // the windows alone
  EXPECT_FALSE(mltcp_tail_hold(&d.it, &d.p, 10, 1000));  // no size known: never
  mltcp_iter_hint(&d.it, d.acked, 100000, d.now);
  EXPECT_FALSE(mltcp_tail_hold(&d.it, &d.p, 10, 1000));  // 100000 left > 2 x 10000
  d.Phase(80000, 1000);
  EXPECT_TRUE(mltcp_tail_hold(&d.it, &d.p, 10, 1000));   // 20000 left = 2 windows
  EXPECT_FALSE(mltcp_tail_hold(&d.it, &d.p, 9, 1000));   // 20000 > 2 x 9000
  d.p.tail_windows = 3;
  EXPECT_TRUE(mltcp_tail_hold(&d.it, &d.p, 7, 1000));
  d.p.tail_windows = 0;  // off
  EXPECT_FALSE(mltcp_tail_hold(&d.it, &d.p, 10, 1000));
  d.p.tail_windows = 2;
  d.p.enabled = 0;  // MLTCP off: the base algorithm exactly
  EXPECT_FALSE(mltcp_tail_hold(&d.it, &d.p, 10, 1000));
  d.p.enabled = 1;
  d.Phase(20001, 1000);  // past the expected end the estimate is wrong
  EXPECT_FALSE(mltcp_tail_hold(&d.it, &d.p, 10, 1000));
  EXPECT_FALSE(mltcp_tail_hold(&d.it, &d.p, 10, 0));
}

// Where two windows are a large part of the phase (a real RTT), the share
// bounds the hold: 1/16 of 100000 bytes is 6250.
TEST(TailHold, ShareBoundsTheHoldInShortPhases) {
  Driver d;
  EXPECT_EQ(d.p.tail_share, 64u);
  mltcp_iter_hint(&d.it, d.acked, 100000, d.now);
  d.Phase(80000, 1000);
  EXPECT_FALSE(mltcp_tail_hold(&d.it, &d.p, 10, 1000));  // 20000 left > 6250
  d.Phase(13000, 1000);
  EXPECT_FALSE(mltcp_tail_hold(&d.it, &d.p, 10, 1000));  // 7000 left > 6250
  d.Phase(1000, 1000);
  EXPECT_TRUE(mltcp_tail_hold(&d.it, &d.p, 10, 1000));   // 6000 left
  EXPECT_FALSE(mltcp_tail_hold(&d.it, &d.p, 2, 1000));   // 6000 > 2 x 2000: windows bind
  d.p.tail_share = 16;                                   // 1562 bytes
  EXPECT_FALSE(mltcp_tail_hold(&d.it, &d.p, 10, 1000));
  // A size whose product with the share overflows saturates: 2^54 + 5000
  // times 1024 would wrap to 5000 x 1024, a share of 5000 bytes.
  d.it.bytes_per_iter = (1ULL << 54) + 5000;
  d.it.iter_bytes = d.it.bytes_per_iter - 10000;
  d.p.tail_share = 1024;
  EXPECT_TRUE(mltcp_tail_hold(&d.it, &d.p, 10, 1000));  // 10000 left < 2 x 10000
}

// A Reno and a CUBIC flow, both started at time 1000 us; `it` is the one
// under test's tracker, hinted an iteration of `bytes` from its first byte.
struct HintedFlows {
  mltcp_reno_flow reno;
  mltcp_cubic_flow cubic;
  mltcp_iter* it;
  HintedFlows(bool use_cubic, uint64_t bytes) {
    mltcp_reno_flow_init(&reno, 0, 1000);
    mltcp_cubic_flow_init(&cubic, 0, 1000, 0);
    it = use_cubic ? &cubic.it : &reno.it;
    mltcp_iter_hint(it, 0, bytes, 1000);
  }
};

// One phase of 100 acks of 1000 bytes: every growth comes while more than two
// windows (and more than the tail share) are left, and without the hold the
// window ends larger.
static uint32_t TailPhase(bool cubic, uint32_t tail_windows) {
  mltcp_params p = mltcp_test::DefaultParams();
  p.tail_windows = tail_windows;
  HintedFlows flows(cubic, 100000);
  mltcp_reno_flow& rf = flows.reno;
  mltcp_cubic_flow& cf = flows.cubic;
  mltcp_iter* it = flows.it;
  mltcp_window w;
  mltcp_window_init(&w, 4, 1000);
  uint64_t acked = 0;
  uint32_t now = 1000;
  while (acked < 100000) {
    acked += 1000;
    now += 100;
    mltcp_iter_on_ack(it, acked, now);
    const uint32_t before = w.cwnd;
    if (cubic)
      mltcp_cubic_flow_cong_avoid(&cf, &p, &w, 1, now, 1000);
    else
      mltcp_reno_flow_cong_avoid(&rf, &p, &w, 1, 1000);
    if (w.cwnd > before && tail_windows) {
      const uint64_t held_below = std::min<uint64_t>((uint64_t)tail_windows * before * 1000,
                                                     100000ULL * p.tail_share / 1024);
      EXPECT_GT(100000 - acked, held_below) << cubic << " at " << acked;
    }
  }
  return w.cwnd;
}

TEST(TailHold, RenoAndCubicFlowsDoNotGrowInTheTail) {
  for (bool cubic : {false, true}) {
    const uint32_t held = TailPhase(cubic, 2), free_running = TailPhase(cubic, 0);
    EXPECT_GT(held, 4u) << cubic;  // it did grow before the tail
    EXPECT_GT(free_running, held) << cubic;
  }
}

// Coexistence: the norms make the mean inverse share 1 (docs/design.md).
TEST(Norm, DefaultsAreTheDerivedValues) {
  mltcp_params p = mltcp_test::DefaultParams();
  const uint32_t reno = p.norm_reno, cubic = p.norm_cubic;
  EXPECT_EQ(reno, MLTCP_DEF_NORM_RENO);
  EXPECT_EQ(cubic, MLTCP_DEF_NORM_CUBIC);
  EXPECT_EQ(p.norm_reno_two_way, MLTCP_DEF_NORM_RENO_TWO_WAY);
  EXPECT_EQ(p.norm_cubic_two_way, MLTCP_DEF_NORM_CUBIC_TWO_WAY);
  mltcp_params_derive(&p);
  EXPECT_EQ(p.norm_reno, reno);
  EXPECT_EQ(p.norm_cubic, cubic);
  EXPECT_EQ(p.norm_reno_two_way, MLTCP_DEF_NORM_RENO_TWO_WAY);
  EXPECT_EQ(p.norm_cubic_two_way, MLTCP_DEF_NORM_CUBIC_TWO_WAY);
  // Without the decrease's lower half an MLTCP flow needs far less: 1.16
  // and 1.19 (1 + 1.5 x CUBIC's model excess, 1.13).
  EXPECT_NEAR(p.norm_reno_two_way / 1024.0, 1.16, 0.01);
  EXPECT_NEAR(mltcp_norm_for_beta(&p, MLTCP_CUBIC_BETA, 1) / 1024.0, 1.13, 0.01);
  EXPECT_NEAR(p.norm_cubic_two_way / 1024.0, 1.19, 0.01);
  // The model's numbers (docs/design.md): 1.73 and 2.35; CUBIC's applied
  // norm is 1 + 1.5 x its excess, 3.02.
  EXPECT_NEAR(reno / 1024.0, 1.73, 0.01);
  EXPECT_NEAR(mltcp_norm_for_beta(&p, MLTCP_CUBIC_BETA, 0) / 1024.0, 2.35, 0.01);
  EXPECT_NEAR(cubic / 1024.0, 3.02, 0.01);
}

TEST(Norm, CubicsCorrectionScalesOnlyTheExcessOverOne) {
  EXPECT_EQ(mltcp_norm_scale_excess(1024, 1536), 1024u);
  EXPECT_EQ(mltcp_norm_scale_excess(2048, 1536), 2560u);
  EXPECT_EQ(mltcp_norm_scale_excess(768, 1536), 640u);  // below 1: 1 - 1.5 x 0.25
  EXPECT_EQ(mltcp_norm_scale_excess(MLTCP_NORM_MAX, 1536), MLTCP_NORM_MAX);
  EXPECT_EQ(mltcp_norm_scale_excess(MLTCP_NORM_MIN, 1536), MLTCP_NORM_MIN);
  EXPECT_EQ(mltcp_norm_scale_excess(300, 4096), MLTCP_NORM_MIN);
}

// cubic_norm_excess sets CUBIC's correction (both paths); Reno's norms do
// not depend on it, and 0 leaves CUBIC at its base's growth.
TEST(Norm, CubicNormExcessIsAParameter) {
  mltcp_params p = mltcp_test::DefaultParams();
  ASSERT_EQ(p.cubic_norm_excess, 1536u);
  const uint32_t reno = p.norm_reno, reno_two_way = p.norm_reno_two_way;
  const uint32_t model = mltcp_norm_for_beta(&p, MLTCP_CUBIC_BETA, 0);
  const uint32_t model_two_way = mltcp_norm_for_beta(&p, MLTCP_CUBIC_BETA, 1);
  for (uint32_t excess : {0u, 1024u, 3072u, 8192u}) {
    p.cubic_norm_excess = excess;
    mltcp_params_derive(&p);
    EXPECT_EQ(p.norm_cubic, mltcp_norm_scale_excess(model, excess)) << excess;
    EXPECT_EQ(p.norm_cubic_two_way, mltcp_norm_scale_excess(model_two_way, excess)) << excess;
    EXPECT_EQ(p.norm_reno, reno);
    EXPECT_EQ(p.norm_reno_two_way, reno_two_way);
  }
  p.cubic_norm_excess = 0;
  mltcp_params_derive(&p);
  EXPECT_EQ(p.norm_cubic, MLTCP_GAIN_ONE);
  p.cubic_norm_excess = 1024;  // the model as it is
  mltcp_params_derive(&p);
  EXPECT_EQ(p.norm_cubic, model);
}

TEST(Norm, IsTheSmallestNormWithMeanInverseShareAtMostOne) {
  mltcp_params p = mltcp_test::DefaultParams();
  for (uint32_t slope : {0u, 512u, 1536u, 4096u}) {
    for (uint32_t intercept : {128u, 256u, 1024u}) {
      for (uint32_t dec : {0u, 1u}) {
        p.slope = slope;
        p.intercept = intercept;
        p.scale_decrease = dec;
        mltcp_params_derive(&p);
        for (int two_way : {0, 1}) {
          const uint32_t cubic_model = mltcp_norm_for_beta(&p, MLTCP_CUBIC_BETA, two_way);
          EXPECT_EQ(two_way ? p.norm_cubic_two_way : p.norm_cubic,
                    mltcp_norm_scale_excess(cubic_model, p.cubic_norm_excess));
          const uint32_t reno = two_way ? p.norm_reno_two_way : p.norm_reno;
          for (auto [beta, norm] : {std::pair<uint32_t, uint32_t>{MLTCP_RENO_BETA, reno},
                                    {MLTCP_CUBIC_BETA, cubic_model}}) {
            // A decrease harsh enough that no norm up to 8 compensates:
            // the largest.
            if (norm == MLTCP_NORM_MAX &&
                mltcp_norm_mean_inverse_share(&p, beta, norm, two_way) > 1024u)
              continue;
            EXPECT_LE(mltcp_norm_mean_inverse_share(&p, beta, norm, two_way), 1024u)
                << slope << " " << intercept << " " << dec << " " << two_way;
            EXPECT_GT(mltcp_norm_mean_inverse_share(&p, beta, norm - 1, two_way), 1024u)
                << slope << " " << intercept << " " << dec << " " << two_way;
          }
        }
      }
    }
  }
  // F = 1 everywhere: already neutral.
  p.slope = 0;
  p.intercept = 1024;
  mltcp_params_derive(&p);
  EXPECT_EQ(p.norm_reno, 1024u);
  EXPECT_EQ(p.norm_cubic, 1024u);
  EXPECT_EQ(p.norm_reno_two_way, 1024u);
  EXPECT_EQ(p.norm_cubic_two_way, 1024u);
}

TEST(Norm, OffWithNormalizeOrMltcpOffAndKeepsRatiosBetweenFlows) {
  mltcp_params p = mltcp_test::DefaultParams();
  p.normalize = 0;
  mltcp_params_derive(&p);
  EXPECT_EQ(p.norm_reno, 1024u);
  EXPECT_EQ(p.norm_cubic, 1024u);
  EXPECT_EQ(p.norm_reno_two_way, 1024u);
  EXPECT_EQ(p.norm_cubic_two_way, 1024u);
  p = mltcp_test::DefaultParams();
  p.enabled = 0;  // the norm stays; the gain is neutral
  mltcp_params_derive(&p);
  EXPECT_EQ(p.norm_reno, MLTCP_DEF_NORM_RENO);
  EXPECT_EQ(mltcp_gain_of_ratio_norm(&p, 512, p.norm_reno), MLTCP_GAIN_ONE);
  // Two flows at r = 0.25 and r = 0.5 keep the ratio of their F (below the
  // clamps), which is what interleaves them.
  p = mltcp_test::DefaultParams();
  const double f1 = mltcp_gain_of_ratio(&p, 256), f2 = mltcp_gain_of_ratio(&p, 512);
  const double n1 = mltcp_gain_of_ratio_norm(&p, 256, p.norm_reno),
               n2 = mltcp_gain_of_ratio_norm(&p, 512, p.norm_reno);
  EXPECT_NEAR(n2 / n1, f2 / f1, 0.01);
  EXPECT_NEAR(n1 / f1, p.norm_reno / 1024.0, 0.01);
  // A never-derived norm (0) counts as 1.
  EXPECT_EQ(mltcp_gain_of_ratio_norm(&p, 256, 0), mltcp_gain_of_ratio(&p, 256));
}

// A one-way connection: acked 1 MB, nothing received from the peer.
static uint32_t StartOneWay(mltcp_iter* it, const mltcp_params* p, uint32_t cwnd, uint32_t mss,
                            uint32_t min_rtt_us, uint32_t srtt_us) {
  return mltcp_start_cwnd(it, p, cwnd, mss, min_rtt_us, srtt_us, 1000000, 0, nullptr);
}

// The start drain: at the first transmit start of an iteration the window
// falls to cwnd * min_rtt / srtt, at least 4 segments, never up.  Segments
// of 100 bytes: a 200000-byte iteration is 100 drained windows of 20.
TEST(StartDrain, AnIterationStartsFromTheWindowWithoutItsQueue) {
  Driver d;
  ASSERT_EQ(d.p.start_drain_windows, 32u);
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 40, 100, 500, 1000), 40u);  // no iteration yet
  mltcp_iter_hint(&d.it, d.acked, 200000, d.now);
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 40, 100, 500, 1000), 20u);   // half of srtt was queue
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 40, 100, 999, 1000), 39u);   // 39.96: rounds down
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 30, 100, 100, 1000), 4u);    // 3, raised to the floor
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 5, 100, 100, 1000), 4u);
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 4, 100, 100, 1000), 4u);     // never below what it had
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 3, 100, 100, 1000), 3u);     // nor up to the floor
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 40, 100, 1000, 1000), 40u);  // no queue: unchanged
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 40, 100, 2000, 1000), 40u);  // stale srtt below min
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 40, 100, 0, 1000), 40u);     // no RTT sample
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 40, 100, 0xffffffffu, 1000), 40u);  // the kernel's "none"
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 40, 0, 500, 1000), 40u);     // no MSS
  // Extremes stay exact in 64 bits: (x + 1)(x - 1) / x rounds down to x - 1,
  // and drained window * mss * the bound saturates (it would wrap to a small product).
  d.it.bytes_per_iter = MLTCP_U64_MAX;
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 0xffffffffu, 1, 0xfffffffdu, 0xfffffffeu), 0xfffffffdu);
  d.it.bytes_per_iter = 1ULL << 40;
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 0xffffffffu, 0xffffffffu, 500, 1000), 0xffffffffu);
  d.it.bytes_per_iter = 200000;
  // Off: MLTCP off, the parameter off.
  d.p.enabled = 0;
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 40, 100, 500, 1000), 40u);
  d.p.enabled = 1;
  d.p.start_drain_windows = 0;
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 40, 100, 500, 1000), 40u);
  d.p.start_drain_windows = 32;
  // Mid-iteration (a pause between buckets): the window stays.
  d.Phase(1000, 1000);
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 40, 100, 500, 1000), 40u);
}

// Only where an iteration lasts at least start_drain_windows round trips at
// the drained window: a phase of a few round trips (a real RTT) needs the
// losses that a drained window would not reach.  The bound counts drained
// windows, so a window carried with a large queue is drained, not exempted.
TEST(StartDrain, OnlyWhereAnIterationIsLongEnoughInDrainedWindows) {
  Driver d;
  mltcp_iter_hint(&d.it, d.acked, 10000, d.now);                        // 10-25 drained windows: a real RTT
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 20, 100, 500, 1000), 20u);   // 10 of 1000: exempt
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 40, 100, 100, 1000), 40u);   // 25 of 400: exempt at 32
  d.p.start_drain_windows = 16;
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 40, 100, 100, 1000), 4u);    // 90% queue: 25 of 400 at 16
  d.p.start_drain_windows = 8;
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 20, 100, 500, 1000), 10u);   // 10 of 1000 at 8
  d.p.start_drain_windows = 16;
  mltcp_iter_hint(&d.it, d.acked, 64000, d.now);
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 80, 100, 500, 1000), 40u);   // 16 windows of 4000
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 82, 100, 500, 1000), 82u);   // 15.6 windows of 4100
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 80, 101, 500, 1000), 80u);
}

// Detected iterations: the drain acts once the size is known and at the
// transmit start that begins an iteration, not at one inside it; a bulk
// transfer (never a boundary) keeps its window.
TEST(StartDrain, DetectedBoundariesOnlyAndNeverABulkFlow) {
  Driver bulk;
  bulk.p.first_seed = 0;
  bulk.Phase(10000000);
  EXPECT_EQ(StartOneWay(&bulk.it, &bulk.p, 40, 100, 500, 1000), 40u);
  Driver d;
  d.p.first_seed = 0;
  d.Phase(100000);
  ASSERT_TRUE(d.Idle(50000));  // the first boundary: no size yet
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 40, 100, 500, 1000), 20u);  // learned 100000 from it
  d.Phase(50000);
  ASSERT_FALSE(d.Idle(100));   // a pause inside the phase
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 40, 100, 500, 1000), 40u);
  d.Phase(50000);
  ASSERT_TRUE(d.Idle(50000));
  EXPECT_EQ(StartOneWay(&d.it, &d.p, 40, 100, 500, 1000), 20u);
}

// A connection that carries its peer's data as well (more than a quarter of
// what it had acked) keeps its window: its srtt holds the queue its acks wait
// in behind the peer's data, not only its own.
TEST(StartDrain, NotOnATwoWayConnection) {
  Driver d;
  mltcp_iter_hint(&d.it, d.acked, 200000, d.now);
  EXPECT_EQ(mltcp_start_cwnd(&d.it, &d.p, 40, 100, 500, 1000, 1000000, 250000, nullptr), 20u);  // a quarter
  EXPECT_EQ(mltcp_start_cwnd(&d.it, &d.p, 40, 100, 500, 1000, 1000000, 250001, nullptr), 40u);
  EXPECT_EQ(mltcp_start_cwnd(&d.it, &d.p, 40, 100, 500, 1000, 1000000, 1000000, nullptr), 40u);
  EXPECT_EQ(mltcp_start_cwnd(&d.it, &d.p, 40, 100, 500, 1000, 0, 0, nullptr), 20u);  // nothing either way
  EXPECT_EQ(mltcp_start_cwnd(&d.it, &d.p, 40, 100, 500, 1000, 0, 1, nullptr), 40u);
  EXPECT_EQ(mltcp_start_cwnd(&d.it, &d.p, 40, 100, 500, 1000, MLTCP_U64_MAX, MLTCP_U64_MAX, nullptr), 40u);
  EXPECT_EQ(mltcp_start_cwnd(&d.it, &d.p, 40, 100, 500, 1000, MLTCP_U64_MAX, MLTCP_U64_MAX / 4, nullptr), 20u);
}

// A one-way connection of a job that carries its peers' data as well (a ring
// all-reduce: it sends on this connection and receives on another) keeps
// its window too, unless job_two_way is off; a job that only sends, or one
// with nothing yet, is drained.
TEST(StartDrain, NotForAConnectionOfATwoWayJob) {
  Driver d;
  mltcp_iter_hint(&d.it, d.acked, 200000, d.now);
  const mltcp_traffic ring{1000000, 1000000}, sender{1000000, 20000}, quarter{1000000, 250000},
      idle{0, 0};
  EXPECT_EQ(mltcp_start_cwnd(&d.it, &d.p, 40, 100, 500, 1000, 1000000, 0, &ring), 40u);
  EXPECT_EQ(mltcp_start_cwnd(&d.it, &d.p, 40, 100, 500, 1000, 1000000, 0, &sender), 20u);
  EXPECT_EQ(mltcp_start_cwnd(&d.it, &d.p, 40, 100, 500, 1000, 1000000, 0, &quarter), 20u);
  EXPECT_EQ(mltcp_start_cwnd(&d.it, &d.p, 40, 100, 500, 1000, 1000000, 0, &idle), 20u);
  EXPECT_EQ(mltcp_start_cwnd(&d.it, &d.p, 40, 100, 500, 1000, 1000000, 0, nullptr), 20u);
  // The connection's own counters still count with a one-way job.
  EXPECT_EQ(mltcp_start_cwnd(&d.it, &d.p, 40, 100, 500, 1000, 1000000, 1000000, &sender), 40u);
  d.p.job_two_way = 0;
  EXPECT_EQ(mltcp_start_cwnd(&d.it, &d.p, 40, 100, 500, 1000, 1000000, 0, &ring), 20u);
}

// The start drain's two-way test marks the iteration it begins
// (MLTCP_F_TWO_WAY), whatever else exempts it, and only where an iteration
// begins; with two_way_decrease the mark makes a flow keep its base's beta
// and grow with the two-way norm, for Reno and CUBIC alike.
TEST(TwoWay, TheIterationsStartMarksItAndItsFlowKeepsTheBasesBeta) {
  Driver d;
  mltcp_iter_hint(&d.it, d.acked, 200000, d.now);
  const mltcp_traffic ring{1000000, 1000000}, sender{1000000, 0};
  EXPECT_EQ(mltcp_start_cwnd(&d.it, &d.p, 40, 100, 500, 1000, 1000000, 1000000, nullptr), 40u);
  EXPECT_TRUE(d.it.flags & MLTCP_F_TWO_WAY);
  EXPECT_EQ(mltcp_start_cwnd(&d.it, &d.p, 40, 100, 500, 1000, 1000000, 0, &sender), 20u);
  EXPECT_FALSE(d.it.flags & MLTCP_F_TWO_WAY);
  d.p.start_drain_windows = 0;  // marked without a drain to spare, too
  EXPECT_EQ(mltcp_start_cwnd(&d.it, &d.p, 40, 100, 500, 1000, 1000000, 0, &ring), 40u);
  EXPECT_TRUE(d.it.flags & MLTCP_F_TWO_WAY);
  d.Phase(1000, 1000);  // mid-iteration: the mark stays
  EXPECT_EQ(mltcp_start_cwnd(&d.it, &d.p, 40, 100, 500, 1000, 1000000, 0, &sender), 40u);
  EXPECT_TRUE(d.it.flags & MLTCP_F_TWO_WAY);

  for (bool cubic : {false, true}) {
    mltcp_params p = mltcp_test::DefaultParams();
    p.first_seed = 0;  // the hinted iteration's own ratio, 0
    HintedFlows flows(cubic, 1000000);
    mltcp_reno_flow& reno = flows.reno;
    mltcp_cubic_flow& cub = flows.cubic;
    mltcp_iter* it = flows.it;
    ASSERT_EQ(mltcp_gain(it, &p), 256u) << cubic;  // r = 0: F = 0.25
    const uint32_t beta = cubic ? MLTCP_CUBIC_BETA : MLTCP_RENO_BETA;
    auto ssthresh = [&](const mltcp_params& q) {
      return cubic ? mltcp_cubic_flow_ssthresh(&cub, &q, 100)
                   : mltcp_reno_flow_ssthresh(&reno, &q, 100);
    };
    auto gain = [&](const mltcp_params& q) {
      return cubic ? mltcp_cubic_gain(it, &q) : mltcp_reno_gain(it, &q);
    };
    const uint32_t deep = ssthresh(p), one_way_gain = gain(p);
    EXPECT_EQ(deep, mltcp_decrease_ssthresh(100, beta, 256, &p, 0)) << cubic;
    mltcp_start_cwnd(it, &p, 40, 100, 1000, 1000, 1000000, 1000000, nullptr);
    EXPECT_EQ(ssthresh(p), mltcp_ssthresh(100, beta)) << cubic;
    EXPECT_LT(deep, ssthresh(p)) << cubic;
    EXPECT_EQ(gain(p), mltcp_gain_of_ratio_norm(&p, 0, cubic ? p.norm_cubic_two_way
                                                            : p.norm_reno_two_way)) << cubic;
    EXPECT_LT(gain(p), one_way_gain) << cubic;
    mltcp_params off = p;
    off.two_way_decrease = 0;  // the mark is ignored
    EXPECT_EQ(ssthresh(off), deep) << cubic;
    EXPECT_EQ(gain(off), one_way_gain) << cubic;
  }
}

// On a window and on CUBIC's state: cwnd and ssthresh fall together, the
// ack counter restarts, and a drained CUBIC flow ends its epoch with W_max
// the window it came from, as after a loss.
TEST(StartDrain, ReducesTheWindowAndEndsCubicsEpoch) {
  mltcp_window w;
  mltcp_window_init(&w, 40, 1000);
  w.ssthresh = 30;
  w.cwnd_cnt = 7;
  mltcp_window_start(&w, 40);  // not lower: nothing changes
  EXPECT_EQ(w.cwnd, 40u);
  EXPECT_EQ(w.ssthresh, 30u);
  EXPECT_EQ(w.cwnd_cnt, 7u);
  mltcp_window_start(&w, 12);
  EXPECT_EQ(w.cwnd, 12u);
  EXPECT_EQ(w.ssthresh, 12u);
  EXPECT_EQ(w.cwnd_cnt, 0u);

  const mltcp_params p = mltcp_test::DefaultParams();
  mltcp_cubic_flow f;
  mltcp_cubic_flow_init(&f, 0, 1000, 0);
  mltcp_iter_hint(&f.it, 0, 100000, 1000);
  f.bic.epoch_start = 900;
  f.bic.last_max_cwnd = 30;
  EXPECT_EQ(mltcp_cubic_flow_start_cwnd(&f, &p, 40, 100, 1000, 1000, 0, 0, nullptr), 40u);  // no queue
  EXPECT_EQ(f.bic.epoch_start, 900u);                                               // epoch untouched
  EXPECT_EQ(mltcp_cubic_flow_start_cwnd(&f, &p, 40, 100, 250, 1000, 0, 0, nullptr), 10u);
  EXPECT_EQ(f.bic.epoch_start, 0u);
  EXPECT_EQ(f.bic.last_max_cwnd, 40u);
  mltcp_reno_flow r;
  mltcp_reno_flow_init(&r, 0, 1000);
  EXPECT_EQ(mltcp_reno_flow_start_cwnd(&r, &p, 40, 100, 250, 1000, 0, 0, nullptr), 40u);  // no iteration yet
  mltcp_iter_hint(&r.it, 0, 100000, 1000);
  EXPECT_EQ(mltcp_reno_flow_start_cwnd(&r, &p, 40, 100, 250, 1000, 0, 0, nullptr), 10u);
}
