// Parameter defaults, validation and reasons; the C++ wrapper's checks;
// every row of the parameter tables (mltcp_param_table.h) through the
// option helper (mltcp_options.hpp).
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <stdexcept>

#include "mltcp.hpp"
#include "mltcp_options.hpp"
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
      {"enabled=2", [](mltcp_params* p) { p->enabled = 2; }, MLTCP_PARAM_BAD_enabled},
      {"slope>8", [](mltcp_params* p) { p->slope = 8 * 1024 + 1; }, MLTCP_PARAM_BAD_slope},
      {"intercept=0", [](mltcp_params* p) { p->intercept = 0; }, MLTCP_PARAM_BAD_intercept},
      {"intercept>4", [](mltcp_params* p) { p->intercept = 4097; }, MLTCP_PARAM_BAD_intercept},
      {"gain_min=0", [](mltcp_params* p) { p->gain_min = 0; }, MLTCP_PARAM_BAD_gain_min},
      {"gain_min>1", [](mltcp_params* p) { p->gain_min = 1025; }, MLTCP_PARAM_BAD_gain_min},
      {"gain_max<1", [](mltcp_params* p) { p->gain_max = 1023; }, MLTCP_PARAM_BAD_gain_max},
      {"gain_max>16", [](mltcp_params* p) { p->gain_max = 16385; }, MLTCP_PARAM_BAD_gain_max},
      {"idle_min=0", [](mltcp_params* p) { p->idle_min_us = 0; }, MLTCP_PARAM_BAD_idle_min_us},
      {"idle_max absurd", [](mltcp_params* p) { p->idle_max_us = 0xffffffffu; }, MLTCP_PARAM_BAD_idle_max_us},
      {"idle min>max", [](mltcp_params* p) { p->idle_min_us = 60000; p->idle_max_us = 50000; },
       MLTCP_PARAM_IDLE_MIN_ABOVE_MAX},
      {"rtt_mult=0", [](mltcp_params* p) { p->idle_rtt_mult = 0; }, MLTCP_PARAM_BAD_idle_rtt_mult},
      {"rtt_mult>64", [](mltcp_params* p) { p->idle_rtt_mult = 65; }, MLTCP_PARAM_BAD_idle_rtt_mult},
      {"scale_decrease=2", [](mltcp_params* p) { p->scale_decrease = 2; },
       MLTCP_PARAM_BAD_scale_decrease},
      {"decrease_floor=255", [](mltcp_params* p) { p->decrease_floor = 255; },
       MLTCP_PARAM_BAD_decrease_floor},
      {"decrease_floor=1025", [](mltcp_params* p) { p->decrease_floor = 1025; },
       MLTCP_PARAM_BAD_decrease_floor},
      {"cubic_norm_excess=8193", [](mltcp_params* p) { p->cubic_norm_excess = 8193; },
       MLTCP_PARAM_BAD_cubic_norm_excess},
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
  EXPECT_EQ(mltcp_dcqcn_params_validate(&q), MLTCP_DCQCN_PARAM_BAD_line_rate_bps);
  q = p;
  q.min_rate_bps = p.line_rate_bps + 1;
  EXPECT_EQ(mltcp_dcqcn_params_validate(&q), MLTCP_DCQCN_PARAM_MIN_RATE_ABOVE_LINE);
  q = p;
  q.rhai_bps = q.rai_bps - 1;
  EXPECT_EQ(mltcp_dcqcn_params_validate(&q), MLTCP_DCQCN_PARAM_RHAI_OUTSIDE_RAI_LINE);
  q = p;
  q.g_inv = 1;
  EXPECT_EQ(mltcp_dcqcn_params_validate(&q), MLTCP_DCQCN_PARAM_BAD_g_inv);
  q = p;
  q.rate_timer_us = 0;
  EXPECT_EQ(mltcp_dcqcn_params_validate(&q), MLTCP_DCQCN_PARAM_BAD_rate_timer_us);
  q = p;
  q.byte_counter = 10;
  EXPECT_EQ(mltcp_dcqcn_params_validate(&q), MLTCP_DCQCN_PARAM_BAD_byte_counter);
  q = p;
  q.fr_stages = 1000;
  EXPECT_EQ(mltcp_dcqcn_params_validate(&q), MLTCP_DCQCN_PARAM_BAD_fr_stages);
  EXPECT_THROW(mltcp::DcqcnParams{q}, std::invalid_argument);
}

// ---------------------------------------------------------------------------
// The tables, row by row, through the C validation and the C++ option helper.

template <class Raw>
Raw TableDefaults();
template <>
mltcp_params TableDefaults<mltcp_params>() {
  mltcp_params p;
  mltcp_params_default(&p);
  return p;
}
template <>
mltcp_dcqcn_params TableDefaults<mltcp_dcqcn_params>() {
  mltcp_dcqcn_params p;
  mltcp_dcqcn_params_default(&p);
  return p;
}

// The message names the parameter, its range "[min, max]" and its unit.
template <class Raw>
void ExpectNamesRow(const std::string& msg, const mltcp::ParamSpec& r) {
  EXPECT_NE(msg.find(r.name), std::string::npos) << msg;
  const std::string range = "[" + std::to_string(r.min) + ", " + std::to_string(r.max) + "]";
  EXPECT_NE(msg.find(range), std::string::npos) << msg << " lacks " << range;
  EXPECT_NE(msg.find(r.unit), std::string::npos) << msg << " lacks unit " << r.unit;
}

template <class Raw>
void CheckEveryRow() {
  const auto& rows = mltcp::ParamTable<Raw>::Rows();
  ASSERT_FALSE(rows.empty());
  const Raw defaults = TableDefaults<Raw>();
  EXPECT_EQ(mltcp::ParamTable<Raw>::Check(defaults), nullptr);
  for (size_t i = 0; i < rows.size(); i++) {
    const auto& r = rows[i];
    SCOPED_TRACE(r.name);
    EXPECT_LE(r.min, r.def);
    EXPECT_LE(r.def, r.max);
    EXPECT_EQ(mltcp::GetParam(&defaults, r), r.def) << "struct default differs from the table";
    // Round trip: min, default and max, by "name=value" and as an option.
    for (uint64_t v : {r.min, r.def, r.max}) {
      Raw p = defaults;
      mltcp::SetParamKv(p, std::string(r.name) + "=" + std::to_string(v));
      EXPECT_EQ(mltcp::GetParam(p, r.name), v);
      Raw q = defaults;
      const std::string opt = mltcp::OptionName("x-", r) + "=" + std::to_string(v);
      std::vector<char*> argv{const_cast<char*>(opt.c_str())};
      int at = 0;
      EXPECT_TRUE(mltcp::ParseParamOption(q, "x-", 1, argv.data(), at));
      EXPECT_EQ(std::memcmp(&p, &q, sizeof(p)), 0);
      // The C check accepts it as far as this row goes.
      EXPECT_NE(mltcp::ParamTable<Raw>::Check(p),
                mltcp::ParamTable<Raw>::RangeReason(i));
    }
    // Out of range, both sides: the helper rejects the text, the C check
    // the struct, each with the row's name, range and unit.
    std::vector<uint64_t> bad{r.max + 1};
    if (r.min > 0) bad.push_back(r.min - 1);
    for (uint64_t v : bad) {
      Raw p = defaults;
      try {
        mltcp::SetParam(p, r.name, std::to_string(v));
        ADD_FAILURE() << r.name << "=" << v << " accepted";
      } catch (const std::invalid_argument& e) {
        ExpectNamesRow<Raw>(e.what(), r);
      }
      EXPECT_EQ(mltcp::GetParam(&p, r), r.def) << "a rejected value was stored";
      mltcp::PutParam(&p, r, v);
      const char* why = mltcp::ParamTable<Raw>::Check(p);
      ASSERT_NE(why, nullptr) << r.name << "=" << v << " passes validation";
      EXPECT_STREQ(why, mltcp::ParamTable<Raw>::RangeReason(i));
      ExpectNamesRow<Raw>(why, r);
    }
    for (const char* junk : {"", "-1", "12x", "+5", "99999999999999999999999"}) {
      Raw p = defaults;
      EXPECT_THROW(mltcp::SetParam(p, r.name, junk), std::invalid_argument) << junk;
    }
  }
}

TEST(ParamTable, EveryMltcpRowRoundTripsAndRejectsOutOfRange) {
  CheckEveryRow<mltcp_params>();
}

TEST(ParamTable, EveryDcqcnRowRoundTripsAndRejectsOutOfRange) {
  CheckEveryRow<mltcp_dcqcn_params>();
}

TEST(ParamTable, CrossFieldRulesNameBothFields) {
  mltcp_params p = DefaultParams();
  p.gain_min = 1024;
  p.gain_max = 1024;
  EXPECT_EQ(mltcp_params_validate(&p), MLTCP_PARAM_OK);
  mltcp_dcqcn_params d;
  mltcp_dcqcn_params_default(&d);
  d.rai_bps = d.line_rate_bps + 1;
  d.rhai_bps = d.line_rate_bps + 1;
  EXPECT_EQ(mltcp_dcqcn_params_validate(&d), MLTCP_DCQCN_PARAM_RAI_ABOVE_LINE);
  const std::string why = mltcp_dcqcn_params_reason(mltcp_dcqcn_params_validate(&d));
  EXPECT_NE(why.find("rai_bps"), std::string::npos);
  EXPECT_NE(why.find("line_rate_bps"), std::string::npos);
  EXPECT_THROW(mltcp::Validate(d), std::invalid_argument);
}

TEST(ParamTable, OptionsAndHelp) {
  mltcp_dcqcn_params d;
  mltcp_dcqcn_params_default(&d);
  const char* args[] = {"--dcqcn-g-inv", "512", "--dcqcn-rate_timer_us=100", "--other"};
  char** argv = const_cast<char**>(args);
  int i = 0;
  EXPECT_TRUE(mltcp::ParseParamOption(d, "dcqcn-", 4, argv, i));
  EXPECT_EQ(i, 1);  // consumed the separate value
  EXPECT_EQ(d.g_inv, 512u);
  i = 2;
  EXPECT_TRUE(mltcp::ParseParamOption(d, "dcqcn-", 4, argv, i));
  EXPECT_EQ(d.rate_timer_us, 100u);
  i = 3;
  EXPECT_FALSE(mltcp::ParseParamOption(d, "dcqcn-", 4, argv, i));
  EXPECT_EQ(i, 3);
  const std::string help = mltcp::ParamHelp<mltcp_params>("  ", false);
  for (const auto& r : mltcp::ParamTable<mltcp_params>::Rows())
    EXPECT_NE(help.find(std::string("  ") + r.name), std::string::npos) << r.name;
  EXPECT_NE(help.find("(1/1024, 0..8192, default 1536)"), std::string::npos) << help;
  // The help texts start in one column, past the longest name.
  std::set<size_t> columns;
  for (const auto& r : mltcp::ParamTable<mltcp_params>::Rows()) {
    const size_t line = help.find(std::string("  ") + r.name + " ");
    ASSERT_NE(line, std::string::npos) << r.name;
    columns.insert(help.find(r.help, line) - line);
  }
  EXPECT_EQ(columns.size(), 1u) << help;
  EXPECT_NE(mltcp::ParamHelp<mltcp_dcqcn_params>("", true, "dcqcn-").find("--dcqcn-g-inv N"),
            std::string::npos);
  mltcp_params m = DefaultParams();
  const char* mixed[] = {"tool", "cmd", "--slope", "2048", "--other", "x", "--gain-max=2048"};
  auto rest = mltcp::TakeParamOptions(m, "", 7, const_cast<char**>(mixed), 2);
  ASSERT_EQ(rest.size(), 5u);  // tool cmd --other x nullptr
  EXPECT_STREQ(rest[2], "--other");
  EXPECT_STREQ(rest[3], "x");
  EXPECT_EQ(rest[4], nullptr);
  EXPECT_EQ(m.slope, 2048u);
  EXPECT_EQ(m.gain_max, 2048u);
  EXPECT_THROW(mltcp::SetParamKv(d, "nosuch=1"), std::invalid_argument);
  EXPECT_THROW(mltcp::SetParamKv(d, "g_inv"), std::invalid_argument);
}

// A tool takes and lists only the rows that act on its flows; a row that
// would act on none of them is refused with what it acts on, not ignored.
TEST(ParamTable, ScopeFiltersOptionsAndHelp) {
  for (const auto& r : mltcp::ParamTable<mltcp_params>::Rows())
    EXPECT_NE(r.scope & mltcp::kEveryScope, 0u) << r.name;
  for (const auto& r : mltcp::ParamTable<mltcp_dcqcn_params>::Rows())
    EXPECT_EQ(r.scope, MLTCP_PS_RATE) << r.name;
  // The gain and the iteration tracking act on every flow, the window rules
  // on window flows, the job rules on jobs.
  EXPECT_EQ(mltcp::param_spec::slope.scope, MLTCP_PS_RATE | MLTCP_PS_WINDOW);
  EXPECT_EQ(mltcp::param_spec::idle_min_us.scope, MLTCP_PS_RATE | MLTCP_PS_WINDOW);
  EXPECT_EQ(mltcp::param_spec::tail_windows.scope, MLTCP_PS_WINDOW);
  EXPECT_EQ(mltcp::param_spec::start_drain_windows.scope, MLTCP_PS_WINDOW);
  EXPECT_EQ(mltcp::param_spec::job_gap.scope, MLTCP_PS_JOB);

  const std::string rate_help = mltcp::ParamHelp<mltcp_params>("  ", true, "", MLTCP_PS_RATE);
  EXPECT_NE(rate_help.find("--slope N"), std::string::npos) << rate_help;
  EXPECT_NE(rate_help.find("--first-seed N"), std::string::npos) << rate_help;
  EXPECT_EQ(rate_help.find("--tail-windows"), std::string::npos) << rate_help;
  EXPECT_EQ(rate_help.find("--job-gap"), std::string::npos) << rate_help;
  const std::string window_help =
      mltcp::ParamHelp<mltcp_params>("  ", true, "", MLTCP_PS_WINDOW | MLTCP_PS_RATE);
  EXPECT_NE(window_help.find("--tail-windows N"), std::string::npos) << window_help;
  EXPECT_EQ(window_help.find("--job-two-way"), std::string::npos) << window_help;
  const std::string all = mltcp::ParamHelp<mltcp_params>("  ", true);
  EXPECT_NE(all.find("--job-two-way N"), std::string::npos) << all;

  mltcp_params p = DefaultParams();
  const char* args[] = {"tool", "--tail-windows", "4", "--slope=2048", "--job-gap", "0"};
  char** argv = const_cast<char**>(args);
  int i = 1;
  try {
    mltcp::ParseParamOption(p, "", 6, argv, i, MLTCP_PS_RATE);
    ADD_FAILURE() << "--tail-windows taken by a tool of rate flows";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "--tail-windows does not apply here: it acts on window flows (Reno, CUBIC), "
                 "and this tool drives rate flows (DCQCN)");
  }
  EXPECT_EQ(p.tail_windows, (uint32_t)MLTCP_DEF_tail_windows);  // nothing changed
  EXPECT_EQ(i, 1);
  i = 3;
  EXPECT_TRUE(mltcp::ParseParamOption(p, "", 6, argv, i, MLTCP_PS_RATE));
  EXPECT_EQ(p.slope, 2048u);
  i = 4;
  EXPECT_THROW(mltcp::ParseParamOption(p, "", 6, argv, i, MLTCP_PS_WINDOW | MLTCP_PS_RATE),
               std::invalid_argument);
  EXPECT_EQ(p.job_gap, (uint32_t)MLTCP_DEF_job_gap);
  i = 4;
  EXPECT_TRUE(mltcp::ParseParamOption(p, "", 6, argv, i));  // every scope: the BPF datapath
  EXPECT_EQ(p.job_gap, 0u);
  EXPECT_THROW(mltcp::TakeParamOptions(p, "", 6, argv, 1, MLTCP_PS_RATE), std::invalid_argument);
}

// The derived norms follow every change, whichever way the change comes.
TEST(ParamTable, SettingARowRederivesTheNorms) {
  mltcp_params p = MLTCP_PARAMS_INIT;
  mltcp::SetParamKv(p, "slope=3072");
  mltcp_params q = p;
  mltcp_params_derive(&q);
  EXPECT_EQ(p.norm_reno, q.norm_reno);
  EXPECT_EQ(p.norm_cubic, q.norm_cubic);
  EXPECT_NE(p.norm_reno, (uint32_t)MLTCP_DEF_NORM_RENO);
  mltcp::SetParamKv(p, "normalize=0");
  EXPECT_EQ(p.norm_reno, 1024u);
  mltcp::Params wrapped;
  mltcp_params raw = wrapped.raw();
  raw.intercept = 512;
  wrapped.Set(raw);
  q = raw;
  mltcp_params_derive(&q);
  EXPECT_EQ(wrapped.raw().norm_cubic, q.norm_cubic);
}
