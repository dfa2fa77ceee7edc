// What F does to Reno's and CUBIC's window growth.
#include <gtest/gtest.h>

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
  mltcp_reno_cache c;
  mltcp_reno_cache_init(&c);
  d.Phase(640000);
  ASSERT_TRUE(d.Idle(100000));  // E = 640000: steps of 10000 bytes
  uint32_t recomputes = 0, last_gain = 0;
  for (int i = 0; i < 640; i++) {
    d.Phase(1000, 1000);
    const uint32_t cached = mltcp_gain_cached(&c, &d.it, &d.p);
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
