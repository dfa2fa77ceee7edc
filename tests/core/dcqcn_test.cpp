// DCQCN reaction and notification points, plain and with the MLTCP gain.
// Defaults: 40 Gbit/s line, R_AI 40 Mbit/s, R_HAI 200 Mbit/s, g = 1/256,
// 55 us timers, F = 5 fast recovery stages, 10 MB byte counter.
#include <gtest/gtest.h>

#include <cmath>

#include "mltcp.hpp"
#include "test_util.h"

namespace {

constexpr uint64_t kG = 1000000000ULL;  // 1 Gbit/s
constexpr uint64_t kM = 1000000ULL;     // 1 Mbit/s
constexpr uint32_t kAlphaOne = MLTCP_DCQCN_ALPHA_ONE;

struct Rp {
  mltcp_dcqcn_params p;
  mltcp_dcqcn_rp rp;
  Rp() {
    mltcp_dcqcn_params_default(&p);
    mltcp_dcqcn_rp_init(&rp, &p, 0);
  }
};

}  // namespace

TEST(Dcqcn, CnpCutsByHalfAlpha) {
  Rp r;
  EXPECT_EQ(r.rp.rate_cur_bps, 40 * kG);
  mltcp_dcqcn_on_cnp(&r.rp, &r.p, 0);
  // alpha = (1 - 1/256) * 1 + 1/256 = 1; R_C = 40G * (1 - 1/2).
  EXPECT_EQ(r.rp.alpha, kAlphaOne);
  EXPECT_EQ(r.rp.rate_target_bps, 40 * kG);
  EXPECT_EQ(r.rp.rate_cur_bps, 20 * kG);
  mltcp_dcqcn_on_cnp(&r.rp, &r.p, 0);
  EXPECT_EQ(r.rp.rate_target_bps, 20 * kG);
  EXPECT_EQ(r.rp.rate_cur_bps, 10 * kG);
  EXPECT_EQ(r.rp.cnps, 2u);
}

TEST(Dcqcn, FastRecoveryThenAdditiveIncrease) {
  Rp r;
  mltcp_dcqcn_on_cnp(&r.rp, &r.p, 0);
  mltcp_dcqcn_on_cnp(&r.rp, &r.p, 0);  // R_T 20G, R_C 10G
  mltcp_dcqcn_advance(&r.rp, &r.p, 55, MLTCP_GAIN_ONE);
  // One alpha period: 2^20 * (2^20 - 2^12) >> 20.
  EXPECT_EQ(r.rp.alpha, kAlphaOne - 4096);
  EXPECT_EQ(r.rp.timer_stage, 1u);
  EXPECT_EQ(r.rp.rate_target_bps, 20 * kG);  // fast recovery keeps R_T
  EXPECT_EQ(r.rp.rate_cur_bps, 15 * kG);     // (20 + 10) / 2
  mltcp_dcqcn_advance(&r.rp, &r.p, 5 * 55, MLTCP_GAIN_ONE);
  // 17.5, 18.75, 19.375, 19.6875 Gbit/s
  EXPECT_EQ(r.rp.timer_stage, 5u);
  EXPECT_EQ(r.rp.rate_cur_bps, 19687500000ULL);
  mltcp_dcqcn_advance(&r.rp, &r.p, 6 * 55, MLTCP_GAIN_ONE);
  // Stage 6 > F: additive increase R_T = 20G + 40M; R_C = (20.04 + 19.6875)/2
  EXPECT_EQ(r.rp.rate_target_bps, 20 * kG + 40 * kM);
  EXPECT_EQ(r.rp.rate_cur_bps, 19863750000ULL);
}

TEST(Dcqcn, MltcpGainScalesIncreaseSteps) {
  Rp r;
  mltcp_dcqcn_on_cnp(&r.rp, &r.p, 0);
  mltcp_dcqcn_advance(&r.rp, &r.p, 5 * 55, 2048);  // F = 2, still fast recovery
  EXPECT_EQ(r.rp.rate_target_bps, 40 * kG);
  mltcp_dcqcn_on_cnp(&r.rp, &r.p, 5 * 55);
  const uint64_t rt = r.rp.rate_target_bps;
  mltcp_dcqcn_advance(&r.rp, &r.p, 5 * 55 + 6 * 55, 2048);
  EXPECT_EQ(r.rp.rate_target_bps, rt + 80 * kM);  // 2 x R_AI
  mltcp_dcqcn_advance(&r.rp, &r.p, 5 * 55 + 7 * 55, 256);
  EXPECT_EQ(r.rp.rate_target_bps, rt + 80 * kM + 10 * kM);  // 0.25 x R_AI
}

TEST(Dcqcn, ByteCounterDrivesHyperIncrease) {
  Rp r;
  mltcp_dcqcn_on_cnp(&r.rp, &r.p, 0);
  mltcp_dcqcn_on_cnp(&r.rp, &r.p, 0);
  mltcp_dcqcn_advance(&r.rp, &r.p, 6 * 55, MLTCP_GAIN_ONE);  // timer stage 6
  const uint64_t rt = r.rp.rate_target_bps;                   // 20.04G
  mltcp_dcqcn_on_sent(&r.rp, &r.p, 60 * 1000 * 1000, MLTCP_GAIN_ONE);
  // Byte stages 1..5 are additive (timer stage > F), stage 6 is hyper.
  EXPECT_EQ(r.rp.byte_stage, 6u);
  EXPECT_EQ(r.rp.rate_target_bps, rt + 5 * 40 * kM + 200 * kM);
  EXPECT_LT(r.rp.rate_cur_bps, r.rp.rate_target_bps);
  mltcp_dcqcn_on_sent(&r.rp, &r.p, 9999999, MLTCP_GAIN_ONE);
  EXPECT_EQ(r.rp.byte_stage, 6u);  // one byte short of the next expiry
  mltcp_dcqcn_on_sent(&r.rp, &r.p, 1, MLTCP_GAIN_ONE);
  EXPECT_EQ(r.rp.byte_stage, 7u);
}

TEST(Dcqcn, RatesStayWithinMinAndLine) {
  Rp r;
  for (int i = 0; i < 20; i++) mltcp_dcqcn_on_cnp(&r.rp, &r.p, 0);
  EXPECT_EQ(r.rp.rate_cur_bps, r.p.min_rate_bps);  // 40G / 2^9 < 100M
  // Far more increase events than needed to reach the line rate.
  for (uint64_t t = 1; t <= 20000; t++)
    mltcp_dcqcn_advance(&r.rp, &r.p, t * 55, 4096);
  EXPECT_EQ(r.rp.rate_target_bps, r.p.line_rate_bps);
  EXPECT_LE(r.rp.rate_cur_bps, r.p.line_rate_bps);
  EXPECT_GE(r.rp.rate_cur_bps, r.p.line_rate_bps - 1);
}

TEST(Dcqcn, AlphaDecayClosedFormMatchesRepeatedSteps) {
  uint32_t stepwise = kAlphaOne;
  for (int i = 0; i < 256; i++) stepwise = mltcp_dcqcn_alpha_decay(stepwise, 256, 1);
  const uint32_t closed = mltcp_dcqcn_alpha_decay(kAlphaOne, 256, 256);
  const double exact = std::pow(1.0 - 1.0 / 256, 256) * kAlphaOne;  // 0.36716
  EXPECT_NEAR(closed, exact, exact * 1e-3);
  EXPECT_NEAR(stepwise, exact, exact * 1e-3);
  EXPECT_EQ(mltcp_dcqcn_alpha_decay(kAlphaOne, 256, 0), kAlphaOne);
  EXPECT_LE(mltcp_dcqcn_alpha_decay(kAlphaOne, 256, ~0ULL), 1u);
}

TEST(Dcqcn, LongSilenceIsBounded) {
  Rp r;
  mltcp_dcqcn_on_cnp(&r.rp, &r.p, 0);
  const uint64_t rt = r.rp.rate_target_bps;
  mltcp_dcqcn_advance(&r.rp, &r.p, 1000000, MLTCP_GAIN_ONE);  // 1 s later
  EXPECT_LE(r.rp.alpha, 1u);                                  // fully decayed
  EXPECT_EQ(r.rp.timer_stage, MLTCP_DCQCN_MAX_CATCHUP);       // bounded
  EXPECT_EQ(r.rp.rate_target_bps,
            std::min<uint64_t>(rt + (MLTCP_DCQCN_MAX_CATCHUP - 5) * 40 * kM,
                               r.p.line_rate_bps));
  EXPECT_EQ(r.rp.last_rate_us, 1000000 - 1000000 % 55);       // no backlog left
}

TEST(Dcqcn, ClockGoingBackwardsChangesNothing) {
  Rp r;
  mltcp_dcqcn_advance(&r.rp, &r.p, 1000, MLTCP_GAIN_ONE);
  const mltcp_dcqcn_rp before = r.rp;
  mltcp_dcqcn_advance(&r.rp, &r.p, 10, MLTCP_GAIN_ONE);
  EXPECT_EQ(r.rp.rate_cur_bps, before.rate_cur_bps);
  EXPECT_EQ(r.rp.alpha, before.alpha);
  EXPECT_EQ(r.rp.timer_stage, before.timer_stage);
}

TEST(Dcqcn, NotificationPointRateLimitsCnps) {
  mltcp_dcqcn_params p;
  mltcp_dcqcn_params_default(&p);  // 50 us interval
  mltcp_dcqcn_np np;
  mltcp_dcqcn_np_init(&np);
  EXPECT_TRUE(mltcp_dcqcn_np_on_ce(&np, &p, 0));
  EXPECT_FALSE(mltcp_dcqcn_np_on_ce(&np, &p, 10));
  EXPECT_FALSE(mltcp_dcqcn_np_on_ce(&np, &p, 49));
  EXPECT_TRUE(mltcp_dcqcn_np_on_ce(&np, &p, 50));
  EXPECT_FALSE(mltcp_dcqcn_np_on_ce(&np, &p, 60));
  EXPECT_TRUE(mltcp_dcqcn_np_on_ce(&np, &p, 5));  // clock reset: resync
  EXPECT_FALSE(mltcp_dcqcn_np_on_ce(&np, &p, 6));
}

TEST(Dcqcn, WrapperMatchesC) {
  mltcp::DcqcnParams params;
  mltcp::DcqcnSender s(params, 0);
  s.OnCnp(0);
  EXPECT_EQ(s.RateBps(), 20 * kG);
  s.Advance(55, mltcp::kGainOne);
  EXPECT_EQ(s.RateBps(), 30 * kG);
  mltcp::DcqcnReceiver np(params);
  EXPECT_TRUE(np.OnCeMarked(0));
  EXPECT_FALSE(np.OnCeMarked(1));
}
