// Extremes: 400 Gbit/s links, 10 GB and 1-byte iterations, zero gaps,
// counters that wrap or restart.  Run under ASan/UBSan by `make check`.
#include <gtest/gtest.h>

#include "mltcp.hpp"
#include "test_util.h"

using mltcp_test::Driver;

TEST(Extremes, TenGigabyteIterations) {
  Driver d;
  const uint64_t ten_gb = 10ULL * 1000 * 1000 * 1000;
  d.Phase(ten_gb, 1U << 29, 1);  // 512 MB per callback, under the 1 GB bound
  ASSERT_TRUE(d.Idle(100000));
  EXPECT_EQ(d.it.bytes_per_iter, ten_gb);
  d.Phase(ten_gb / 2, 1U << 29, 1);
  EXPECT_EQ(d.Ratio(), 512u);
  EXPECT_EQ(d.Gain(), 1024u);
  d.Phase(ten_gb / 2, 1U << 29, 1);
  EXPECT_EQ(d.Ratio(), 1024u);
}

TEST(Extremes, OneByteIterations) {
  Driver d;
  for (int i = 0; i < 5; i++) {
    d.Phase(1);
    d.Idle(100000);
  }
  EXPECT_EQ(d.it.iterations, 5u);
  EXPECT_EQ(d.it.bytes_per_iter, 1u);
  EXPECT_EQ(d.Ratio(), 0u);
  d.Phase(1);
  EXPECT_EQ(d.Ratio(), 1024u);
  EXPECT_EQ(d.Gain(), 1792u);
}

TEST(Extremes, ZeroLengthGaps) {
  Driver d;
  for (int i = 0; i < 1000; i++) {
    d.Phase(1448, 1448, 0);
    EXPECT_FALSE(d.Idle(0));
  }
  EXPECT_EQ(d.it.iterations, 0u);
  EXPECT_EQ(d.it.gap_ewma_us, 0u);
  EXPECT_EQ(d.Gain(), MLTCP_GAIN_ONE);
}

TEST(Extremes, AckCounterCrossing32BitsIsSeamless) {
  Driver d;
  d.acked = 0xffffffffULL - 5000;
  mltcp_iter_init(&d.it, d.acked, d.now);
  d.Phase(100000);
  EXPECT_EQ(d.it.iter_bytes, 100000u);
}

TEST(Extremes, AckCounterRestartIsIgnored) {
  Driver d;
  d.Phase(100000);
  d.acked = 0;  // e.g. the datapath's counter was reset
  mltcp_iter_on_ack(&d.it, d.acked, d.now + 10);
  EXPECT_EQ(d.it.iter_bytes, 100000u);
  d.Phase(5000);
  EXPECT_EQ(d.it.iter_bytes, 105000u);
}

TEST(Extremes, IterationAndHintCountersSaturate) {
  Driver d;
  d.it.iterations = 0xffffffffu;
  d.it.hinted = 0xffffffffu;
  d.Phase(10);
  mltcp_iter_hint(&d.it, d.acked, 10, d.now);
  EXPECT_EQ(d.it.iterations, 0xffffffffu);
  EXPECT_EQ(d.it.hinted, 0xffffffffu);
}

TEST(Extremes, HugeHintAndHugeProgress) {
  Driver d;
  mltcp_iter_hint(&d.it, d.acked, ~0ULL, d.now);
  d.it.iter_bytes = ~0ULL - 1;  // beyond any real counter
  EXPECT_LE(d.Ratio(), 1024u);
  d.it.iter_bytes = ~0ULL;
  mltcp_iter_on_ack(&d.it, d.acked + 1000, d.now);  // saturates, no wrap
  EXPECT_EQ(d.it.iter_bytes, ~0ULL);
  EXPECT_LE(d.Ratio(), 1024u);
}

TEST(Extremes, FourHundredGigabitDcqcn) {
  mltcp_dcqcn_params p;
  mltcp_dcqcn_params_default(&p);
  p.line_rate_bps = 400000000000ULL;
  p.rai_bps = 400000000ULL;
  p.rhai_bps = 2000000000ULL;
  ASSERT_EQ(mltcp_dcqcn_params_validate(&p), MLTCP_DCQCN_PARAM_OK);
  mltcp_dcqcn_rp rp;
  mltcp_dcqcn_rp_init(&rp, &p, 0);
  mltcp_dcqcn_on_cnp(&rp, &p, 0);
  EXPECT_EQ(rp.rate_cur_bps, 200000000000ULL);
  mltcp_dcqcn_on_sent(&rp, &p, 1ULL << 40, MLTCP_DEF_GAIN_MAX * 4);
  EXPECT_LE(rp.rate_target_bps, p.line_rate_bps);
  EXPECT_LE(rp.rate_cur_bps, p.line_rate_bps);
  EXPECT_EQ(rp.byte_stage, MLTCP_DCQCN_MAX_CATCHUP);
  EXPECT_LT(rp.bytes_since_inc, p.byte_counter);
}

TEST(Extremes, SaturatingArithmetic) {
  EXPECT_EQ(mltcp_mul_sat_u64(1ULL << 32, 1ULL << 32), ~0ULL);
  EXPECT_EQ(mltcp_mul_sat_u64(1ULL << 31, 1ULL << 32), 1ULL << 63);
  EXPECT_EQ(mltcp_mul_sat_u64(0xffffffffULL, 0xffffffffULL),
            0xfffffffe00000001ULL);
  EXPECT_EQ(mltcp_mul_sat_u64(3ULL << 62, 2), ~0ULL);
  EXPECT_EQ(mltcp_mul_sat_u64(0, ~0ULL), 0u);
  EXPECT_EQ(mltcp_add_sat_u64(~0ULL, 1), ~0ULL);
}
