// One DCQCN flow with MLTCP (core/mltcp_dcqcn_flow.h): the ordering rule
// (time passes under the gain that held) is the API's, not the caller's.
#include <gtest/gtest.h>

#include "test_util.h"

namespace {

constexpr uint64_t kMtu = 4096;

struct FlowFixture {
  mltcp_params p = mltcp_test::DefaultParams();
  mltcp_dcqcn_params dp;
  mltcp_dcqcn_flow f;
  uint64_t acked = 0;
  explicit FlowFixture(uint32_t mltcp) {
    mltcp_dcqcn_params_default(&dp);
    dp.fr_stages = 0;  // straight to additive increase: steps show F
    mltcp_dcqcn_flow_init(&f, &dp, mltcp, 0);
  }
  // One iteration of `bytes`, hinted, all sent and acked by now_us.
  void Iteration(uint64_t bytes, uint64_t now_us) {
    mltcp_dcqcn_flow_hint(&f, &p, &dp, acked, bytes, now_us);
    for (uint64_t sent = 0; sent < bytes; sent += kMtu) {
      mltcp_dcqcn_flow_on_sent(&f, &p, &dp, kMtu, now_us);
      acked += kMtu;
      mltcp_dcqcn_flow_on_ack(&f, acked, now_us);
    }
  }
};

}  // namespace

TEST(DcqcnFlow, IdleBeforeAHintRunsUnderTheEndingIterationsGain) {
  FlowFixture a(1), b(1);
  for (FlowFixture* x : {&a, &b}) {
    x->Iteration(1 << 20, 10);
    x->Iteration(1 << 20, 20);  // learned: F(1) = 1.75 at the end
    mltcp_dcqcn_flow_on_cnps(&x->f, &x->dp, 2, 30);  // R_T 20, R_C 10 Gbit/s
  }
  ASSERT_EQ(mltcp_dcqcn_flow_gain(&a.f, &a.p), 1792u);
  // a: the hint at t = 30 + 10 rate periods; the API advances first.
  mltcp_dcqcn_flow_hint(&a.f, &a.p, &a.dp, a.acked, 1 << 20, 30 + 550);
  // b: what a caller that resets F first would get: the same periods at F(0).
  mltcp_iter_hint(&b.f.it, b.acked, 1 << 20, 30 + 550);
  mltcp_dcqcn_advance(&b.f.rp, &b.dp, 30 + 550, mltcp_dcqcn_flow_gain(&b.f, &b.p));
  EXPECT_EQ(mltcp_dcqcn_flow_gain(&a.f, &a.p), 256u);  // both now at F(0)
  // a recovered with steps of 1.75 R_AI, b with 0.25 R_AI.
  EXPECT_GT(a.f.rp.rate_target_bps, b.f.rp.rate_target_bps);
  EXPECT_EQ(a.f.rp.rate_target_bps - b.f.rp.rate_target_bps,
            10 * (mltcp_dcqcn_scaled_step(a.dp.rai_bps, 1792) -
                  mltcp_dcqcn_scaled_step(a.dp.rai_bps, 256)));
}

TEST(DcqcnFlow, ACnpCutsTheRateInUseAndRestartsTheTimers) {
  FlowFixture x(0);
  mltcp_dcqcn_flow_on_cnps(&x.f, &x.dp, 1, 0);
  // Five rate periods pass without an event, then a CNP: it cuts the rate
  // the sender paced at (no increases first) and restarts the timers.
  mltcp_dcqcn_rp manual = x.f.rp;
  mltcp_dcqcn_on_cnp(&manual, &x.dp, 275);
  mltcp_dcqcn_flow_on_cnps(&x.f, &x.dp, 1, 275);
  EXPECT_EQ(x.f.rp.rate_cur_bps, manual.rate_cur_bps);
  EXPECT_EQ(x.f.rp.rate_target_bps, manual.rate_target_bps);
  EXPECT_EQ(x.f.rp.last_rate_us, 275u);
  // A send at the same instant has no period left to apply.
  mltcp_dcqcn_flow_on_sent(&x.f, &x.p, &x.dp, 4096, 275);
  EXPECT_EQ(x.f.rp.rate_cur_bps, manual.rate_cur_bps);
}

TEST(DcqcnFlow, PlainDcqcnNeverScalesAndNeverTracks) {
  FlowFixture x(0);
  x.Iteration(1 << 20, 10);
  x.Iteration(1 << 20, 20);
  EXPECT_EQ(mltcp_dcqcn_flow_gain(&x.f, &x.p), MLTCP_GAIN_ONE);
  EXPECT_EQ(x.f.it.iterations, 0u);
  EXPECT_EQ(mltcp_dcqcn_flow_on_tx_start(&x.f, &x.p, &x.dp, x.acked, 100000, 100), 0);
}

TEST(DcqcnFlow, ManyCnpsInOnePollAreBoundedEvents) {
  FlowFixture x(0);
  mltcp_dcqcn_flow_on_cnps(&x.f, &x.dp, 3, 0);
  EXPECT_EQ(x.f.rp.cnps, 3u);
  mltcp_dcqcn_flow_on_cnps(&x.f, &x.dp, 1ULL << 40, 0);
  EXPECT_EQ(x.f.rp.cnps, 3u + MLTCP_DCQCN_MAX_CATCHUP);
  EXPECT_EQ(mltcp_dcqcn_flow_rate_bps(&x.f), x.dp.min_rate_bps);
}

TEST(DcqcnFlow, AHintedQpKeepsItsOwnRatioFromTheFirstHint) {
  FlowFixture hinted(1), detecting(1);
  mltcp_iter_seed(&hinted.f.it, &hinted.p, 0xffffffffu);  // stand-in near 1
  mltcp_iter_seed(&detecting.f.it, &detecting.p, 0xffffffffu);
  mltcp_dcqcn_flow_hint(&hinted.f, &hinted.p, &hinted.dp, 0, 1 << 20, 10);
  for (uint64_t sent = 0; sent < (1 << 18); sent += kMtu) {
    mltcp_dcqcn_flow_on_sent(&hinted.f, &hinted.p, &hinted.dp, kMtu, 10);
    hinted.acked += kMtu;
    mltcp_dcqcn_flow_on_ack(&hinted.f, hinted.acked, 10);
  }
  EXPECT_FALSE(hinted.f.it.flags & MLTCP_F_SEEDED);
  EXPECT_EQ(mltcp_iter_ratio(&hinted.f.it), MLTCP_RATIO_ONE / 4);  // not the seed
  // A QP without hints keeps the seed for its first detected iteration.
  EXPECT_TRUE(detecting.f.it.flags & MLTCP_F_SEEDED);
}
