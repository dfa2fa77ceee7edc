// Parameter defaults, validation and reasons; the C++ wrapper's checks.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>

#include "mltcp.hpp"
#include "test_util.h"

using mltcp_test::DefaultParams;

TEST(Params, DefaultsAreValidAndAverageToNeutral) {
  const mltcp_params p = DefaultParams();
  EXPECT_EQ(mltcp_params_validate(&p), MLTCP_PARAM_OK);
  // Mean of F over bytes_ratio in [0,1] is intercept + slope/2 == 1.0.
  EXPECT_EQ(p.intercept + p.slope / 2, MLTCP_GAIN_ONE);
  EXPECT_EQ(p.enabled, 1u);
}

struct BadCase {
  const char* name;
  void (*mutate)(mltcp_params*);
  mltcp_param_error expected;
};

TEST(Params, RejectsEachOutOfRangeField) {
  const BadCase cases[] = {
      {"enabled=2", [](mltcp_params* p) { p->enabled = 2; }, MLTCP_PARAM_BAD_ENABLED},
      {"slope>8", [](mltcp_params* p) { p->slope = 8 * 1024 + 1; }, MLTCP_PARAM_BAD_SLOPE},
      {"intercept=0", [](mltcp_params* p) { p->intercept = 0; }, MLTCP_PARAM_BAD_INTERCEPT},
      {"intercept>4", [](mltcp_params* p) { p->intercept = 4097; }, MLTCP_PARAM_BAD_INTERCEPT},
      {"gain_min=0", [](mltcp_params* p) { p->gain_min = 0; }, MLTCP_PARAM_BAD_GAIN_MIN},
      {"gain_min>1", [](mltcp_params* p) { p->gain_min = 1025; }, MLTCP_PARAM_BAD_GAIN_MIN},
      {"gain_max<1", [](mltcp_params* p) { p->gain_max = 1023; }, MLTCP_PARAM_BAD_GAIN_MAX},
      {"gain_max>16", [](mltcp_params* p) { p->gain_max = 16385; }, MLTCP_PARAM_BAD_GAIN_MAX},
      {"idle_min=0", [](mltcp_params* p) { p->idle_min_us = 0; }, MLTCP_PARAM_BAD_IDLE_MIN},
      {"idle_max absurd", [](mltcp_params* p) { p->idle_max_us = 0xffffffffu; }, MLTCP_PARAM_BAD_IDLE_MAX},
      {"idle min>max", [](mltcp_params* p) { p->idle_min_us = 60000; p->idle_max_us = 50000; },
       MLTCP_PARAM_IDLE_MIN_ABOVE_MAX},
      {"rtt_mult=0", [](mltcp_params* p) { p->idle_rtt_mult = 0; }, MLTCP_PARAM_BAD_IDLE_RTT_MULT},
      {"rtt_mult>64", [](mltcp_params* p) { p->idle_rtt_mult = 65; }, MLTCP_PARAM_BAD_IDLE_RTT_MULT},
      {"scale_decrease=2", [](mltcp_params* p) { p->scale_decrease = 2; },
       MLTCP_PARAM_BAD_SCALE_DECREASE},
  };
  for (const auto& c : cases) {
    mltcp_params p = DefaultParams();
    c.mutate(&p);
    EXPECT_EQ(mltcp_params_validate(&p), c.expected) << c.name;
    // Every rejection explains itself and names the allowed range or rule.
    const char* why = mltcp_params_reason(c.expected);
    EXPECT_NE(std::strstr(why, "must"), nullptr) << c.name << ": " << why;
  }
}

TEST(Params, BoundaryValuesAreAccepted) {
  mltcp_params p = DefaultParams();
  p.slope = 0;
  p.intercept = 16;
  p.gain_min = 16;
  p.gain_max = 16384;
  p.idle_min_us = 50;
  p.idle_max_us = 10000000;
  p.idle_rtt_mult = 64;
  p.scale_decrease = 0;
  EXPECT_EQ(mltcp_params_validate(&p), MLTCP_PARAM_OK);
}

TEST(Params, WrapperThrowsWithReasonAndKeepsOldValue) {
  mltcp::Params params;
  mltcp_params bad = params.raw();
  bad.intercept = 0;
  try {
    params.Set(bad);
    FAIL() << "invalid intercept accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("intercept"), std::string::npos);
  }
  EXPECT_EQ(params.raw().intercept, MLTCP_DEF_INTERCEPT);
  EXPECT_THROW(mltcp::Params{bad}, std::invalid_argument);
}

TEST(DcqcnParams, DefaultsValidAndBadOnesRejected) {
  mltcp_dcqcn_params p;
  mltcp_dcqcn_params_default(&p);
  EXPECT_EQ(mltcp_dcqcn_params_validate(&p), MLTCP_DCQCN_PARAM_OK);

  mltcp_dcqcn_params q = p;
  q.line_rate_bps = 0;
  EXPECT_EQ(mltcp_dcqcn_params_validate(&q), MLTCP_DCQCN_PARAM_BAD_LINE_RATE);
  q = p;
  q.min_rate_bps = p.line_rate_bps + 1;
  EXPECT_EQ(mltcp_dcqcn_params_validate(&q), MLTCP_DCQCN_PARAM_BAD_MIN_RATE);
  q = p;
  q.rhai_bps = q.rai_bps - 1;
  EXPECT_EQ(mltcp_dcqcn_params_validate(&q), MLTCP_DCQCN_PARAM_BAD_STEP);
  q = p;
  q.g_inv = 1;
  EXPECT_EQ(mltcp_dcqcn_params_validate(&q), MLTCP_DCQCN_PARAM_BAD_G);
  q = p;
  q.rate_timer_us = 0;
  EXPECT_EQ(mltcp_dcqcn_params_validate(&q), MLTCP_DCQCN_PARAM_BAD_TIMER);
  q = p;
  q.byte_counter = 10;
  EXPECT_EQ(mltcp_dcqcn_params_validate(&q), MLTCP_DCQCN_PARAM_BAD_BYTE_COUNTER);
  q = p;
  q.fr_stages = 1000;
  EXPECT_EQ(mltcp_dcqcn_params_validate(&q), MLTCP_DCQCN_PARAM_BAD_FR_STAGES);
  EXPECT_THROW(mltcp::DcqcnParams{q}, std::invalid_argument);
}
