// emu_unit_tests.cpp - unit tests of the emulator's ring all-reduce schedule
// (ring.h), message striping (stripe.h) and the namespace's loss counters
// from /proc/net/netstat (netstat.h).  The profile parser, byte splitting and statistics it uses are
// tested with the workload library (tests/workload).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <numeric>
#include <set>

#include "netstat.h"
#include "profile.h"
#include "ring.h"
#include "stripe.h"

using namespace mltcp_emu;
using namespace mltcp_workload;

TEST(Ring, Neighbours)
{
	EXPECT_EQ(ring_next(3, 2), 0u);
	EXPECT_EQ(ring_prev(3, 0), 2u);
	EXPECT_EQ(ring_next(2, 0), 1u);
	EXPECT_EQ(ring_prev(2, 0), 1u);
	EXPECT_EQ(ring_steps(2), 2u);
	EXPECT_EQ(ring_steps(8), 14u);
}

TEST(Ring, TwoRanksSwapHalves)
{
	// Rank 0 sends chunk 0 and gets chunk 1 to reduce, then sends the
	// reduced chunk 1 back and gets the reduced chunk 0.
	RingStep s0 = ring_step(2, 0, 0), s1 = ring_step(2, 0, 1);
	EXPECT_EQ(s0.send_chunk, 0u);
	EXPECT_EQ(s0.recv_chunk, 1u);
	EXPECT_TRUE(s0.reduce);
	EXPECT_EQ(s1.send_chunk, 1u);
	EXPECT_EQ(s1.recv_chunk, 0u);
	EXPECT_FALSE(s1.reduce);
}

// Every step: a rank receives what its previous rank sends, and (after step 0)
// sends what it received in the step before: the data dependency.
TEST(Ring, StepsMatchNeighboursAndForwardWhatArrived)
{
	for (uint32_t k = kMinRingRanks; k <= 9; k++)
		for (uint32_t r = 0; r < k; r++)
			for (uint32_t t = 0; t < ring_steps(k); t++) {
				RingStep s = ring_step(k, r, t);
				ASSERT_LT(s.send_chunk, k);
				ASSERT_LT(s.recv_chunk, k);
				EXPECT_EQ(s.recv_chunk, ring_step(k, ring_prev(k, r), t).send_chunk)
					<< "K=" << k << " rank " << r << " step " << t;
				EXPECT_EQ(s.reduce, t < k - 1);
				if (t > 0) {
					EXPECT_EQ(s.send_chunk, ring_step(k, r, t - 1).recv_chunk)
						<< "K=" << k << " rank " << r << " step " << t;
				}
			}
}

// Simulates the all-reduce on sets of contributions: after 2(K-1) steps every
// rank holds every chunk reduced over all K ranks.
TEST(Ring, EveryRankEndsWithEveryChunkFullyReduced)
{
	for (uint32_t k = kMinRingRanks; k <= 9; k++) {
		// have[r][c]: the ranks whose contribution rank r's copy of chunk c holds.
		std::vector<std::vector<uint64_t>> have(k, std::vector<uint64_t>(k));
		for (uint32_t r = 0; r < k; r++)
			for (uint32_t c = 0; c < k; c++)
				have[r][c] = 1ull << r;
		for (uint32_t t = 0; t < ring_steps(k); t++) {
			auto before = have;	// all ranks send at once
			for (uint32_t r = 0; r < k; r++) {
				RingStep s = ring_step(k, r, t);
				uint64_t got = before[ring_prev(k, r)][s.recv_chunk];
				if (s.reduce) {
					EXPECT_EQ(before[r][s.recv_chunk] & got, 0u) << "reduced twice";
					have[r][s.recv_chunk] |= got;
				} else {
					have[r][s.recv_chunk] = got;
				}
			}
		}
		uint64_t all = (k == 64) ? ~0ull : (1ull << k) - 1;
		for (uint32_t r = 0; r < k; r++)
			for (uint32_t c = 0; c < k; c++)
				EXPECT_EQ(have[r][c], all) << "K=" << k << " rank " << r << " chunk " << c;
	}
}

TEST(Ring, BytesSentAddUp)
{
	for (uint64_t total : {3ull, 1000ull, 2130001ull})
		for (uint32_t k : {2u, 3u, 8u}) {
			if (total < k)
				continue;
			uint64_t sum = 0;
			for (uint32_t r = 0; r < k; r++) {
				uint64_t mine = ring_bytes_sent(total, k, r);
				// 2(K-1)/K of the buffer, give or take a byte per step.
				double ideal = 2.0 * (k - 1) * (double)total / k;
				EXPECT_NEAR((double)mine, ideal, ring_steps(k));
				sum += mine;
			}
			// Each step moves every chunk once.
			EXPECT_EQ(sum, ring_steps(k) * total);
		}
	EXPECT_EQ(ring_bytes_sent(2130000, 2, 0), 2130000u);	// K=2: the whole buffer
}

TEST(Ring, PatternOffsetsInRangeAndDistinct)
{
	const uint64_t period = 65521;
	std::set<uint64_t> seen;
	for (uint64_t i = 0; i < 4; i++)
		for (uint32_t b = 0; b < 4; b++)
			for (uint32_t t = 0; t < 4; t++) {
				uint64_t off = ring_pattern_offset(i, b, t, period);
				EXPECT_LT(off, period);
				seen.insert(off);
			}
	EXPECT_EQ(seen.size(), 64u);
	EXPECT_EQ(ring_pattern_offset(7, 1, 2, period), ring_pattern_offset(7, 1, 2, period));
}

// NCCL-style striping (stripe.h): chunk j goes to connection j mod K.
TEST(Stripe, RoundRobinChunks)
{
	const uint64_t k64 = 64 * 1024;
	// 10 chunks + 1000 bytes over 4: chunks 0,4,8 | 1,5,9 | 2,6,(10: short) | 3,7
	uint64_t total = 10 * k64 + 1000;
	EXPECT_EQ(stripe_share(total, 4, k64, 0), 3 * k64);
	EXPECT_EQ(stripe_share(total, 4, k64, 1), 3 * k64);
	EXPECT_EQ(stripe_share(total, 4, k64, 2), 2 * k64 + 1000);
	EXPECT_EQ(stripe_share(total, 4, k64, 3), 2 * k64);
	// Smaller than K chunks: the last connections stay idle.
	EXPECT_EQ(stripe_share(k64 + 5, 8, k64, 0), k64);
	EXPECT_EQ(stripe_share(k64 + 5, 8, k64, 1), 5u);
	EXPECT_EQ(stripe_share(k64 + 5, 8, k64, 2), 0u);
	EXPECT_EQ(stripe_share(total, 4, k64, 4), 0u);	// no such connection
	// Every byte goes to exactly one connection.
	for (uint64_t t : {uint64_t{1}, k64, 3 * k64 - 1, uint64_t{2130000}, uint64_t{7777777}})
		for (uint32_t k : {2u, 4u, 8u}) {
			uint64_t sum = 0;
			for (uint32_t c = 0; c < k; c++)
				sum += stripe_share(t, k, 128 * 1024, c);
			EXPECT_EQ(sum, t) << t << " over " << k;
		}
}

TEST(Stripe, IterationSharesAddUpOverBuckets)
{
	Profile p;
	p.bytes = 2130000;
	p.buckets = 3;
	p.conns = 8;
	p.stripe_chunk = 128 * 1024;
	uint64_t sum = 0;
	for (uint32_t c = 0; c < p.conns; c++) {
		uint64_t mine = 0;
		for (uint32_t b = 0; b < p.buckets; b++)
			mine += message_share(p, split_share(p.bytes, p.buckets, b), c);
		EXPECT_EQ(iteration_share(p, p.bytes, c), mine);
		sum += mine;
	}
	EXPECT_EQ(sum, p.bytes);
	p.stripe_chunk = 0;	// equal shares: the nearly equal split
	EXPECT_EQ(message_share(p, 1000, 0), split_share(1000, 8, 0));
}

namespace {

// /proc/net/netstat as Linux prints it: a name line and a value line per
// section; fields in the kernel's order, which the parser must not rely on.
const char kNetstat[] =
	"TcpExt: SyncookiesSent TCPRenoRecovery TCPSackRecovery TCPFullUndo TCPPartialUndo "
	"TCPDSACKUndo TCPLossUndo TCPTimeouts TCPLossProbes TCPSpuriousRTOs\n"
	"TcpExt: 7 1 20 2 3 4 5 30 40 6\n"
	"IpExt: InNoRoutes TCPTimeouts\n"
	"IpExt: 0 999\n";

}  // namespace

TEST(Netstat, ParsesASectionByFieldName)
{
	NetstatSection t = parse_netstat_section(kNetstat, "TcpExt");
	EXPECT_EQ(t.size(), 10u);
	EXPECT_EQ(t.at("TCPTimeouts"), 30);	// TcpExt's, not IpExt's 999
	EXPECT_EQ(t.at("SyncookiesSent"), 7);
	EXPECT_EQ(parse_netstat_section(kNetstat, "IpExt").at("TCPTimeouts"), 999);
	EXPECT_TRUE(parse_netstat_section(kNetstat, "MPTcpExt").empty());
	// Lines that do not pair up give nothing rather than shifted values.
	EXPECT_TRUE(parse_netstat_section("TcpExt: A B\nTcpExt: 1\n", "TcpExt").empty());
	EXPECT_TRUE(parse_netstat_section("TcpExt: A B\nTcpExt: 1 x\n", "TcpExt").empty());
	EXPECT_TRUE(parse_netstat_section("TcpExt: A B\n", "TcpExt").empty());
	// Counters are unsigned 64-bit in the kernel; above INT64_MAX is no value.
	EXPECT_TRUE(parse_netstat_section("TcpExt: A\nTcpExt: 18446744073709551615\n", "TcpExt")
			    .empty());
}

TEST(Netstat, LossCountersSumTheirFields)
{
	LossCounters c = loss_totals(parse_netstat_section(kNetstat, "TcpExt"));
	EXPECT_EQ(c.rto, 30);
	EXPECT_EQ(c.recoveries, 21);	// SACK 20 + Reno 1
	EXPECT_EQ(c.tlp, 40);
	EXPECT_EQ(c.undo, 14);	// 2 + 3 + 4 + 5
	EXPECT_EQ(c.spurious_rto, 6);
}

TEST(Netstat, MissingFieldsAreUnknownNotZero)
{
	// An older kernel: no TCPLossProbes, no TCPSpuriousRTOs, no TCPDSACKUndo.
	LossCounters c = loss_totals(parse_netstat_section(
		"TcpExt: TCPTimeouts TCPSackRecovery TCPRenoRecovery TCPFullUndo TCPPartialUndo "
		"TCPLossUndo\nTcpExt: 3 2 0 0 0 1\n",
		"TcpExt"));
	EXPECT_EQ(c.rto, 3);
	EXPECT_EQ(c.recoveries, 2);
	EXPECT_EQ(c.tlp, kCounterUnknown);
	EXPECT_EQ(c.undo, kCounterUnknown);	// one of its four fields is missing
	EXPECT_EQ(c.spurious_rto, kCounterUnknown);
	LossCounters none = loss_totals({});
	for (size_t i = 0; i < kLossCounterCount; i++)
		EXPECT_EQ(loss_counter(none, i), kCounterUnknown) << kLossCounterNames[i];
	EXPECT_EQ(read_loss_totals("/nonexistent/netstat").rto, kCounterUnknown);
}

TEST(Netstat, DeltaOfTwoReadings)
{
	LossCounters a, b;
	a.rto = 5, a.recoveries = 10, a.tlp = 1, a.undo = 0;
	b.rto = 7, b.recoveries = 10, b.tlp = 0, b.undo = 3, b.spurious_rto = 2;
	LossCounters d = loss_delta(a, b);
	EXPECT_EQ(d.rto, 2);
	EXPECT_EQ(d.recoveries, 0);
	EXPECT_EQ(d.tlp, kCounterUnknown);	// went backwards: not this namespace's
	EXPECT_EQ(d.undo, 3);
	EXPECT_EQ(d.spurious_rto, kCounterUnknown);	// unknown at the start
}

TEST(Netstat, ThisKernelHasEveryField)
{
	// The counters the benchmark reports exist on the kernels it runs on
	// (Linux >= 3.10); if this fails the CSV says unknown, and the test
	// names the field.
	std::ifstream f("/proc/net/netstat");
	if (!f)
		GTEST_SKIP() << "no /proc/net/netstat";
	std::stringstream ss;
	ss << f.rdbuf();
	NetstatSection t = parse_netstat_section(ss.str(), "TcpExt");
	for (const char *n : {"TCPTimeouts", "TCPSackRecovery", "TCPRenoRecovery", "TCPLossProbes",
			      "TCPFullUndo", "TCPPartialUndo", "TCPDSACKUndo", "TCPLossUndo",
			      "TCPSpuriousRTOs"})
		EXPECT_TRUE(t.count(n)) << n;
	EXPECT_GE(read_loss_totals().rto, 0);
}
