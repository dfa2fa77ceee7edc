// Iteration tracking, boundary detection, learning, hints and the gain F.
// Expected values are computed by hand in the comments next to them.
#include <gtest/gtest.h>

#include "test_util.h"

using mltcp_test::Driver;

TEST(Iter, NoStructureMeansNeutralGain) {
  Driver d;
  d.Phase(1000000);
  EXPECT_EQ(d.Ratio(), MLTCP_RATIO_NONE);
  EXPECT_EQ(d.Gain(), MLTCP_GAIN_ONE);
  EXPECT_EQ(d.it.iterations, 0u);
}

TEST(Iter, FirstBoundaryLearnsSizeAndGainFollowsF) {
  Driver d;
  d.Phase(100000);
  EXPECT_TRUE(d.Idle(100000));  // 100 ms > idle_max 50 ms
  EXPECT_EQ(d.it.iterations, 1u);
  EXPECT_EQ(d.it.bytes_per_iter, 100000u);
  EXPECT_EQ(d.it.iter_bytes, 0u);
  EXPECT_EQ(d.Ratio(), 0u);
  EXPECT_EQ(d.Gain(), 256u);  // F(0) = intercept = 0.25

  d.Phase(25000);
  EXPECT_EQ(d.Ratio(), 256u);   // 25000 * 1024 / 100000
  EXPECT_EQ(d.Gain(), 640u);    // 256 + 1536 * 256 / 1024
  d.Phase(25000);
  EXPECT_EQ(d.Ratio(), 512u);
  EXPECT_EQ(d.Gain(), 1024u);   // 256 + 768: neutral at mid-iteration
  d.Phase(50000);
  EXPECT_EQ(d.Ratio(), 1024u);
  EXPECT_EQ(d.Gain(), 1792u);   // 256 + 1536 = 1.75
}

TEST(Iter, OverrunLosesStructure) {
  Driver d;
  d.Phase(100000);
  ASSERT_TRUE(d.Idle(100000));
  d.Phase(200000);  // exactly 2x: still clamped at ratio 1
  EXPECT_EQ(d.Ratio(), 1024u);
  d.Phase(1);       // beyond 2x: a bulk transfer, not an iteration
  EXPECT_EQ(d.Ratio(), MLTCP_RATIO_NONE);
  EXPECT_EQ(d.Gain(), MLTCP_GAIN_ONE);
}

TEST(Iter, ShortGapIsNotABoundaryAndAdaptsThreshold) {
  Driver d;
  // srtt 100 us * 8 = 800 us, below idle_min: threshold is 2000 us.
  EXPECT_EQ(mltcp_idle_threshold_us(&d.it, &d.p, d.srtt), 2000u);
  d.Phase(10000);
  EXPECT_FALSE(d.Idle(1500));
  EXPECT_EQ(d.it.gap_ewma_us, 375u);  // 0 + 1500/4
  // Repeated 1900 us pauses (DDP buckets) pull the EWMA up to >= 1897
  // (it stops moving once the difference is below 4).
  for (int i = 0; i < 100; i++) {
    d.Phase(10000);
    EXPECT_FALSE(d.Idle(1900));
  }
  EXPECT_GE(d.it.gap_ewma_us, 1897u);
  EXPECT_LE(d.it.gap_ewma_us, 1900u);
  const uint32_t thresh = mltcp_idle_threshold_us(&d.it, &d.p, d.srtt);
  EXPECT_EQ(thresh, 2 * d.it.gap_ewma_us);
  // A 3 ms gap would have been a boundary with the fixed 2 ms minimum.
  d.Phase(10000);
  EXPECT_FALSE(d.Idle(3000));
  EXPECT_EQ(d.it.iterations, 0u);
  d.Phase(10000);
  EXPECT_TRUE(d.Idle(thresh + 2000));
}

TEST(Iter, ThresholdFollowsRttWithinBounds) {
  Driver d;
  EXPECT_EQ(mltcp_idle_threshold_us(&d.it, &d.p, 0), 2000u);      // no RTT yet
  EXPECT_EQ(mltcp_idle_threshold_us(&d.it, &d.p, 1000), 8000u);   // 8 RTTs
  EXPECT_EQ(mltcp_idle_threshold_us(&d.it, &d.p, 10000), 50000u); // capped
}

TEST(Iter, LearningIgnoresOneOddIterationAndFollowsSlowChange) {
  Driver d;
  d.Phase(100000);
  ASSERT_TRUE(d.Idle(100000));
  d.Phase(100000);  // agrees: E confirmed
  ASSERT_TRUE(d.Idle(100000));
  d.Phase(300000);  // 3x: outlier, ignored
  ASSERT_TRUE(d.Idle(100000));
  EXPECT_EQ(d.it.bytes_per_iter, 100000u);
  d.Phase(100000);
  ASSERT_TRUE(d.Idle(100000));
  EXPECT_EQ(d.it.bytes_per_iter, 100000u);
  d.Phase(120000);  // +20%: 100000 + 20000/4
  ASSERT_TRUE(d.Idle(100000));
  EXPECT_EQ(d.it.bytes_per_iter, 105000u);
  d.Phase(80000);   // 105000 - 25000/4
  ASSERT_TRUE(d.Idle(100000));
  EXPECT_EQ(d.it.bytes_per_iter, 98750u);
  // A lasting change is accepted on its second occurrence.
  d.Phase(400000);
  ASSERT_TRUE(d.Idle(100000));
  EXPECT_EQ(d.it.bytes_per_iter, 98750u);
  d.Phase(400000);
  ASSERT_TRUE(d.Idle(100000));
  EXPECT_EQ(d.it.bytes_per_iter, 400000u);
  EXPECT_EQ(d.it.iterations, 8u);
}

TEST(Iter, UnconfirmedSizeIsReplacedByTheFirstRealIteration) {
  // A connection's first "iteration" is its 32-byte bootstrap message: the
  // first real iteration replaces it at once, so the gain acts from the
  // second real iteration on, instead of the third.
  Driver d;
  d.Phase(32);
  ASSERT_TRUE(d.Idle(100000));
  EXPECT_EQ(d.it.bytes_per_iter, 32u);
  d.Phase(2130000);
  EXPECT_EQ(mltcp_iter_ratio(&d.it), MLTCP_RATIO_NONE);  // ran past 2E
  ASSERT_TRUE(d.Idle(100000));
  EXPECT_EQ(d.it.bytes_per_iter, 2130000u);
  d.Phase(1065000);
  EXPECT_EQ(mltcp_iter_ratio(&d.it), MLTCP_RATIO_ONE / 2);
  ASSERT_TRUE(d.Idle(100000));
  // E rests on two agreeing samples now: one odd iteration is ignored.
  EXPECT_EQ(d.it.bytes_per_iter, 2130000u - 1065000u / 4);
  d.Phase(32);
  ASSERT_TRUE(d.Idle(100000));
  EXPECT_EQ(d.it.bytes_per_iter, 2130000u - 1065000u / 4);
}

TEST(Iter, HintOverridesDetection) {
  Driver d;
  mltcp_iter_hint(&d.it, d.acked, 50000, d.now);
  EXPECT_EQ(d.it.bytes_per_iter, 50000u);
  EXPECT_EQ(d.it.iterations, 0u);  // nothing was sent before: no iteration
  EXPECT_EQ(d.Ratio(), 0u);        // structure known from the hint
  EXPECT_EQ(d.Gain(), 256u);
  d.Phase(25000);
  EXPECT_EQ(d.Ratio(), 512u);
  d.Phase(25000);
  // A long idle gap is not a boundary once hints drive the flow.
  EXPECT_FALSE(d.Idle(200000));
  EXPECT_EQ(d.it.iter_bytes, 50000u);
  mltcp_iter_hint(&d.it, d.acked, 80000, d.now);
  EXPECT_EQ(d.it.iterations, 1u);
  EXPECT_EQ(d.it.hinted, 1u);
  EXPECT_EQ(d.it.bytes_per_iter, 80000u);
  d.Phase(20000);
  EXPECT_EQ(d.Ratio(), 256u);  // 20000 * 1024 / 80000
}

TEST(Iter, HintWithoutSizeKeepsLearnedSize) {
  Driver d;
  d.Phase(100000);
  ASSERT_TRUE(d.Idle(100000));
  d.Phase(120000);
  mltcp_iter_hint(&d.it, d.acked, 0, d.now);
  EXPECT_EQ(d.it.bytes_per_iter, 105000u);  // learned from the closed one
  EXPECT_EQ(d.it.iterations, 2u);
  EXPECT_EQ(d.it.hinted, 1u);
}

TEST(Iter, DisabledIsAlwaysNeutral) {
  Driver d;
  d.p.enabled = 0;
  d.Phase(100000);
  ASSERT_TRUE(d.Idle(100000));
  d.Phase(90000);
  EXPECT_EQ(d.Ratio(), 921u);  // tracking continues: 90000*1024/100000
  EXPECT_EQ(d.Gain(), MLTCP_GAIN_ONE);
}

TEST(Iter, LateAcksAtTxStartStillShowTheGap) {
  Driver d;
  d.Phase(50000);
  // 10000 more bytes were acked without an ack callback (e.g. in recovery);
  // the datapath hands the counter over at TX_START.
  d.acked += 10000;
  EXPECT_TRUE(d.Idle(100000));
  EXPECT_EQ(d.it.bytes_per_iter, 60000u);
}

TEST(Iter, EmptyIterationIsNotCounted) {
  Driver d;
  EXPECT_FALSE(d.Idle(100000));  // connection idle before its first byte
  EXPECT_EQ(d.it.iterations, 0u);
  EXPECT_EQ(d.it.bytes_per_iter, 0u);
}

TEST(Iter, TimeCrossesClockWrap) {
  Driver d;
  d.now = 0xffffffffu - 50;
  d.Phase(100000, 1448, 1);  // 70 acks: the clock wraps during the phase
  EXPECT_LT(d.now, 1000u);
  EXPECT_TRUE(d.Idle(60000));
  EXPECT_EQ(d.it.iterations, 1u);
  EXPECT_EQ(mltcp_elapsed_us(0xfffffff0u, 0x10u), 0x20u);
}

TEST(Iter, ClockGoingBackwardsIsNoGap) {
  Driver d;
  d.Phase(100000);
  d.now -= 1000000;  // stepped back 1 s
  EXPECT_FALSE(mltcp_iter_on_tx_start(&d.it, &d.p, d.acked, d.now, d.srtt));
  EXPECT_EQ(d.it.iterations, 0u);
}

// The first real iteration after a hello runs at the seed's stand-in ratio
// (mltcp_iter_seed), the next one at its own.
TEST(Iter, SeedStandsInForTheFirstIterationsRatio) {
  Driver d;
  mltcp_iter_seed(&d.it, &d.p, 0xC0000000u);  // seed_ratio 192 of 256
  const uint32_t stand_in = (192u << MLTCP_SEED_SHIFT) + (1u << (MLTCP_SEED_SHIFT - 1));
  EXPECT_EQ(d.Ratio(), MLTCP_RATIO_NONE);  // no boundary yet: could be bulk
  d.Phase(32);
  ASSERT_TRUE(d.Idle(100000));
  d.Phase(1000000);
  EXPECT_EQ(d.Ratio(), stand_in);
  EXPECT_EQ(d.Gain(), mltcp_gain_of_ratio(&d.p, stand_in));
  EXPECT_EQ(mltcp_reno_gain(&d.it, &d.p), mltcp_gain_of_ratio_norm(&d.p, stand_in, d.p.norm_reno));
  ASSERT_TRUE(d.Idle(100000));
  d.Phase(250000);
  EXPECT_EQ(d.Ratio(), MLTCP_RATIO_ONE / 4);  // sized now: the flow's own
  d.Phase(750000);
  ASSERT_TRUE(d.Idle(100000));
  ASSERT_TRUE(d.it.flags & MLTCP_F_CONFIRMED);
  d.Phase(2100000);
  EXPECT_EQ(d.Ratio(), MLTCP_RATIO_NONE);  // a confirmed size overrun: neutral
}

// Without a boundary (bulk traffic), hinted without a size it can trust,
// with first_seed = 0, and past MLTCP_SEED_BYTES_MAX the seed does not apply.
TEST(Iter, SeedLeavesBulkHintedAndSwitchedOffFlowsNeutral) {
  Driver bulk;
  mltcp_iter_seed(&bulk.it, &bulk.p, 0xffffffffu);
  bulk.Phase(10000000);
  EXPECT_EQ(bulk.Ratio(), MLTCP_RATIO_NONE);

  Driver hinted;
  mltcp_iter_seed(&hinted.it, &hinted.p, 0xffffffffu);
  hinted.Phase(32);
  ASSERT_TRUE(hinted.Idle(100000));
  mltcp_iter_hint(&hinted.it, hinted.acked, 0, hinted.now);  // size unknown
  hinted.Phase(1000000);
  EXPECT_EQ(hinted.Ratio(), MLTCP_RATIO_NONE);

  Driver off;
  off.p.first_seed = 0;
  mltcp_iter_seed(&off.it, &off.p, 0xffffffffu);
  off.Phase(32);
  ASSERT_TRUE(off.Idle(100000));
  off.Phase(1000000);
  EXPECT_EQ(off.Ratio(), MLTCP_RATIO_NONE);

  Driver long_one;
  mltcp_iter_seed(&long_one.it, &long_one.p, 0);
  long_one.Phase(32);
  ASSERT_TRUE(long_one.Idle(100000));
  long_one.Phase(1000000);
  EXPECT_EQ(long_one.Ratio(), 1u << (MLTCP_SEED_SHIFT - 1));  // seed_ratio 0
  long_one.Phase(MLTCP_SEED_BYTES_MAX, 1u << 20, 1);
  EXPECT_EQ(long_one.Ratio(), MLTCP_RATIO_NONE);  // a bulk transfer after all
}

// Hinted flows know their size from the first byte, so identical hinted
// jobs are tied too: the seed stands in from the first hint to the next,
// ahead of a job's ratio, and for at most MLTCP_SEED_BYTES_MAX.
TEST(Iter, SeedStandsInForTheFirstHintedIteration) {
  Driver d;
  mltcp_iter_seed(&d.it, &d.p, 0xC0000000u);  // seed_ratio 192 of 256
  const uint32_t stand_in = (192u << MLTCP_SEED_SHIFT) + (1u << (MLTCP_SEED_SHIFT - 1));
  d.Phase(32);  // a hello before the first hint
  mltcp_iter_hint(&d.it, d.acked, 1000000, d.now);
  EXPECT_EQ(d.it.hinted, 1u);  // the hello was closed by the first hint
  EXPECT_EQ(d.Ratio(), stand_in);
  d.Phase(750000);
  EXPECT_EQ(d.Ratio(), stand_in);
  mltcp_iter_set_job_ratio(&d.it, 100);
  EXPECT_EQ(d.Ratio(), stand_in);  // one draw per job already: the seed first
  d.Phase(250000);
  mltcp_iter_hint(&d.it, d.acked, 1000000, d.now);
  EXPECT_FALSE(d.it.flags & MLTCP_F_SEEDED);
  EXPECT_EQ(d.Ratio(), 100u);  // the job's ratio from the second hint on
  mltcp_iter_set_job_ratio(&d.it, MLTCP_RATIO_NONE);
  d.Phase(250000);
  EXPECT_EQ(d.Ratio(), MLTCP_RATIO_ONE / 4);

  // An empty first hinted iteration (two hints in a row) keeps the seed.
  Driver twice;
  mltcp_iter_seed(&twice.it, &twice.p, 0);
  mltcp_iter_hint(&twice.it, twice.acked, 1000000, twice.now);
  mltcp_iter_hint(&twice.it, twice.acked, 1000000, twice.now);
  twice.Phase(100000);
  EXPECT_EQ(twice.Ratio(), 1u << (MLTCP_SEED_SHIFT - 1));  // seed_ratio 0

  // Past MLTCP_SEED_BYTES_MAX the flow's own ratio applies.
  Driver big;
  mltcp_iter_seed(&big.it, &big.p, 0xffffffffu);
  mltcp_iter_hint(&big.it, big.acked, 4 * MLTCP_SEED_BYTES_MAX, big.now);
  big.Phase(MLTCP_SEED_BYTES_MAX, 1u << 20, 1);
  EXPECT_EQ(big.Ratio(), (255u << MLTCP_SEED_SHIFT) + (1u << (MLTCP_SEED_SHIFT - 1)));
  big.Phase(1);
  EXPECT_EQ(big.Ratio(), MLTCP_RATIO_ONE / 4);

  // A flow whose detected size was confirmed before its first hint is past
  // its first iteration: no seed.
  Driver late;
  mltcp_iter_seed(&late.it, &late.p, 0xffffffffu);
  for (int i = 0; i < 3; i++) {
    late.Phase(100000);
    ASSERT_TRUE(late.Idle(100000));
  }
  ASSERT_TRUE(late.it.flags & MLTCP_F_CONFIRMED);
  mltcp_iter_hint(&late.it, late.acked, 100000, late.now);
  late.Phase(25000);
  EXPECT_EQ(late.Ratio(), MLTCP_RATIO_ONE / 4);

  // first_seed = 0: the flow's own ratio from the first hint.
  Driver off;
  off.p.first_seed = 0;
  mltcp_iter_seed(&off.it, &off.p, 0xffffffffu);
  mltcp_iter_hint(&off.it, off.acked, 100000, off.now);
  off.Phase(25000);
  EXPECT_EQ(off.Ratio(), MLTCP_RATIO_ONE / 4);
}

// A seed drawn uniformly leaves a seeded flow as aggressive as its base on
// average: the mean of F over the 256 stand-in ratios is F's mean over an
// iteration, 1 with the defaults (0.25 + 1.5 r).
TEST(Iter, SeedsAverageToTheNeutralGain) {
  const mltcp_params p = mltcp_test::DefaultParams();
  uint64_t sum = 0;
  for (uint32_t s = 0; s < 256; s++)
    sum += mltcp_gain_of_ratio(&p, (s << MLTCP_SEED_SHIFT) + (1u << (MLTCP_SEED_SHIFT - 1)));
  EXPECT_NEAR((double)sum / 256, (double)MLTCP_GAIN_ONE, 2.0);
}
