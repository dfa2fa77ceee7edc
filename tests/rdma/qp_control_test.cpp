// qp_control_test.cpp - unit tests of the RDMA datapath's software pacer and
// its adapter to the core (rdma/qp_control.h), driven by a fake clock: no
// RDMA device needed.
#include <gtest/gtest.h>

#include "qp_control.h"

using mltcp_rdma::Control;
using mltcp_rdma::Pacer;
using mltcp_rdma::QpControl;

namespace {

constexpr uint64_t kMs = 1000000;	// ns
constexpr uint64_t kMsg = 16384;

// Sends `total` bytes in kMsg messages, advancing the fake clock by the
// pacer's delays; returns the elapsed ns.
uint64_t PaceTransfer(Pacer &p, uint64_t total, uint64_t *now)
{
	const uint64_t start = *now;
	for (uint64_t sent = 0; sent < total; sent += kMsg) {
		*now += p.DelayNs(kMsg, *now);
		EXPECT_EQ(p.DelayNs(kMsg, *now), 0u);
		p.Consume(kMsg, *now);
	}
	return *now - start;
}

mltcp::DcqcnParams SmallLink()
{
	mltcp_dcqcn_params raw;
	mltcp_dcqcn_params_default(&raw);
	raw.line_rate_bps = 100000000;	// 100 Mbit/s, as in the guest tests
	raw.min_rate_bps = 1000000;
	raw.rai_bps = 2000000;
	raw.rhai_bps = 10000000;
	raw.byte_counter = 64 * 1024;
	raw.rate_timer_us = 1000;
	raw.alpha_timer_us = 1000;
	return mltcp::DcqcnParams(raw);
}

}  // namespace

TEST(Pacer, HoldsTheRate)
{
	uint64_t now = 0;
	Pacer p(100000000, kMsg, now);	// 100 Mbit/s
	// 10 MB at 100 Mbit/s = 800 ms; the first burst leaves immediately.
	uint64_t el = PaceTransfer(p, 10 * 1000 * kMsg / 16, &now);
	double rate = 8.0 * (10 * 1000 * kMsg / 16) / (el / 1e9);
	EXPECT_NEAR(rate, 100e6, 100e6 * 0.005);
}

TEST(Pacer, RateChangeTakesEffect)
{
	uint64_t now = 0;
	Pacer p(100000000, kMsg, now);
	PaceTransfer(p, 100 * kMsg, &now);
	p.SetRate(25000000, now);
	uint64_t el = PaceTransfer(p, 100 * kMsg, &now);
	EXPECT_NEAR(el / 1e6, 100 * kMsg * 8 / 25e6 * 1e3, 1.5);	// ms
}

TEST(Pacer, IdleCreditIsCappedAtTheBurst)
{
	uint64_t now = 0;
	Pacer p(100000000, 2 * kMsg, now);
	now += 1000 * kMs;	// a long idle period earns at most the burst
	EXPECT_EQ(p.DelayNs(kMsg, now), 0u);
	p.Consume(kMsg, now);
	EXPECT_EQ(p.DelayNs(kMsg, now), 0u);
	p.Consume(kMsg, now);
	EXPECT_GT(p.DelayNs(kMsg, now), 0u);
	// A message above the burst size still goes once the bucket is full.
	now += 10 * kMs;
	EXPECT_EQ(p.DelayNs(100 * kMsg, now), 0u);
}

TEST(Pacer, HugeTimeJumpDoesNotOverflow)
{
	uint64_t now = 1;
	Pacer p(400000000000ULL, kMsg, now);
	now += 3600ULL * 1000 * kMs;	// an hour idle at 400 Gbit/s
	EXPECT_EQ(p.DelayNs(kMsg, now), 0u);
}

TEST(QpControl, FixedRateIgnoresCnps)
{
	QpControl c(Control::kFixed, mltcp::Params(), SmallLink(), 50000000, kMsg, 0, 0);
	c.OnCnps(5, 1000);
	EXPECT_EQ(c.RateBps(), 50000000u);
	EXPECT_EQ(c.stats().cnps, 5u);
	EXPECT_EQ(c.stats().rate_cuts, 0u);
}

TEST(QpControl, CnpCutsAndTimersRecover)
{
	QpControl c(Control::kDcqcn, mltcp::Params(), SmallLink(), 0, kMsg, 0, 0);
	EXPECT_EQ(c.RateBps(), 100000000u);
	c.OnCnps(1, 1 * kMs);
	const uint64_t cut = c.RateBps();
	// alpha starts at 1 (one alpha period of decay before the CNP): ~halve
	EXPECT_GT(cut, 49000000u);
	EXPECT_LT(cut, 51000000u);
	c.OnCnps(1, 2 * kMs);
	const uint64_t cut2 = c.RateBps();
	EXPECT_LT(cut2, cut);
	c.Tick(200 * kMs);	// rate timer expiries: recovery
	EXPECT_GT(c.RateBps(), cut);
	EXPECT_EQ(c.stats().rate_cuts, 2u);
	EXPECT_EQ(c.stats().min_rate_bps, cut2);
}

TEST(QpControl, DcqcnGainIsNeutral)
{
	QpControl c(Control::kDcqcn, mltcp::Params(), SmallLink(), 0, kMsg, 0, 0);
	c.Hint(1000000, 0);
	EXPECT_EQ(c.Gain(), mltcp::kGainOne);
	c.OnCompletion(900000, kMs);
	EXPECT_EQ(c.Gain(), mltcp::kGainOne);
}

// The gain from the first hinted iteration on, without the seed that stands
// in for that iteration's ratio (mltcp_iter_seed).
static mltcp::Params UnseededParams()
{
	mltcp_params raw;
	mltcp_params_default(&raw);
	raw.first_seed = 0;
	return mltcp::Params(raw);
}

TEST(QpControl, MltcpGainFollowsCompletedBytes)
{
	QpControl c(Control::kMltcpDcqcn, UnseededParams(), SmallLink(), 0, kMsg, 0, 0);
	EXPECT_EQ(c.Gain(), mltcp::kGainOne);	// no structure yet: neutral
	c.Hint(1000000, 0);
	EXPECT_EQ(c.Gain(), 256u);	// F(0) = 0.25
	c.OnPost(500000, true, kMs);
	EXPECT_EQ(c.Gain(), 256u);	// posted is not acknowledged
	c.OnCompletion(500000, 2 * kMs);
	EXPECT_EQ(c.Gain(), 256u + 1536u * 512u / 1024u);	// ratio 0.5
	EXPECT_EQ(c.stats().hinted, 0u);	// counts iterations a hint closed
	c.Hint(1000000, 3 * kMs);
	EXPECT_EQ(c.stats().hinted, 1u);
	EXPECT_EQ(c.Gain(), 256u);
}

TEST(QpControl, LaterPhaseRecoversFaster)
{
	// Two QPs cut by the same CNP; the one further into its iteration
	// regains rate faster: the mechanism that makes jobs drift apart.
	QpControl early(Control::kMltcpDcqcn, UnseededParams(), SmallLink(), 0, kMsg, 0, 0);
	QpControl late(Control::kMltcpDcqcn, UnseededParams(), SmallLink(), 0, kMsg, 0, 0);
	early.Hint(1000000, 0);
	late.Hint(1000000, 0);
	early.OnCompletion(100000, kMs);
	late.OnCompletion(900000, kMs);
	early.OnCnps(3, 2 * kMs);	// R_T falls too: recovery needs increases
	late.OnCnps(3, 2 * kMs);
	EXPECT_EQ(early.RateBps(), late.RateBps());
	for (uint64_t t = 3; t < 25; t++) {
		early.Tick(t * kMs);
		late.Tick(t * kMs);
	}
	EXPECT_GT(late.RateBps(), early.RateBps() + 10000000);
	EXPECT_LT(late.RateBps(), 100000000u);
	EXPECT_GT(late.Gain(), early.Gain());
}

TEST(QpControl, DetectsIterationsFromIdleGaps)
{
	QpControl c(Control::kMltcpDcqcn, mltcp::Params(), SmallLink(), 0, kMsg, 0, 0);
	uint64_t now = 0;
	for (int it = 0; it < 4; it++) {
		for (int m = 0; m < 10; m++) {
			c.OnPost(kMsg, m == 0, now);
			now += 100000;	// 0.1 ms
			c.OnCompletion(kMsg, now);
		}
		now += 100 * kMs;	// compute phase, above the 50 ms maximum threshold
	}
	EXPECT_EQ(c.iter().iterations, 3u);
	EXPECT_EQ(c.iter().bytes_per_iter, 10 * kMsg);
	EXPECT_EQ(c.stats().iterations, 3u);
}

TEST(QpControl, PacesAtTheReactionPointRate)
{
	QpControl c(Control::kDcqcn, mltcp::Params(), SmallLink(), 0, kMsg, 0, 0);
	c.OnCnps(1, 0);	// 50 Mbit/s; timers then raise it slowly
	uint64_t now = 0, sent = 0;
	while (sent < 100 * kMsg) {
		now += c.DelayNs(kMsg, now);
		c.OnPost(kMsg, false, now);
		sent += kMsg;
	}
	double rate = 8.0 * sent / (now / 1e9);
	EXPECT_GT(rate, 50e6 * 0.95);
	EXPECT_LT(rate, 100e6);
}

TEST(QpControl, ParseControl)
{
	Control c;
	EXPECT_TRUE(mltcp_rdma::ParseControl("mltcp_dcqcn", &c));
	EXPECT_EQ(c, Control::kMltcpDcqcn);
	EXPECT_FALSE(mltcp_rdma::ParseControl("cubic", &c));
}
