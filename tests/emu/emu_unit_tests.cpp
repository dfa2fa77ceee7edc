// emu_unit_tests.cpp - unit tests of the job-profile parser (the format shared
// with ns-3, profiles/README.md), the byte splitting rules, the statistics and
// the ring all-reduce schedule (ring.h).
#include <gtest/gtest.h>

#include <fstream>
#include <numeric>
#include <set>

#include "profile.h"
#include "ring.h"
#include "stats.h"

using namespace mltcp_emu;

namespace {

std::string error_of(const std::string &text)
{
	try {
		parse_profiles(text, "t.prof");
	} catch (const ProfileError &e) {
		return e.what();
	}
	return "";
}

}  // namespace

TEST(Profile, ParsesAllFields)
{
	auto ps = parse_profiles("# comment\n\n"
				 "profile a bytes=2.5M compute_us=100000 # trailing\n"
				 "profile b bytes=300k compute_us=5 buckets=4 bucket_gap_us=3000 "
				 "bytes_cycle=1,0.5 async=1 conns=2 model_params=25.6e6\n"
				 "profile c bulk=1\n",
				 "t.prof");
	ASSERT_EQ(ps.size(), 3u);
	EXPECT_EQ(ps[0].name, "a");
	EXPECT_EQ(ps[0].bytes, 2500000u);
	EXPECT_EQ(ps[0].compute_us, 100000u);
	EXPECT_EQ(ps[0].buckets, 1u);
	EXPECT_EQ(ps[0].line, 3);
	EXPECT_EQ(ps[1].bytes, 300000u);
	EXPECT_EQ(ps[1].buckets, 4u);
	EXPECT_EQ(ps[1].bucket_gap_us, 3000u);
	EXPECT_EQ(ps[1].bytes_cycle, (std::vector<double>{1.0, 0.5}));
	EXPECT_TRUE(ps[1].async);
	EXPECT_EQ(ps[1].conns, 2u);
	EXPECT_TRUE(ps[2].bulk);
	EXPECT_EQ(&find_profile(ps, "b", "t.prof"), &ps[1]);
}

TEST(Profile, ErrorsNameLineAndField)
{
	EXPECT_EQ(error_of("profile a bytes=1M compute_us=1\nprofile b bytes=2.5X compute_us=1\n"),
		  "t.prof:2: field 'bytes': '2.5X' is not a byte count (e.g. 2500000, 2.5M, 300k)");
	EXPECT_NE(error_of("profile a bytes=1M compute_us=1 color=red\n").find("t.prof:1: field 'color': unknown field"),
		  std::string::npos);
	EXPECT_NE(error_of("profile a compute_us=1\n").find("t.prof:1: profile 'a' field 'bytes': missing"),
		  std::string::npos);
	EXPECT_NE(error_of("profile a bytes=1M\n").find("field 'compute_us': missing"), std::string::npos);
	EXPECT_NE(error_of("profile a bytes=1M compute_us=1 async=2\n").find("field 'async': must be 0 or 1"),
		  std::string::npos);
	EXPECT_NE(error_of("profile a bytes=1M compute_us=-5\n").find("field 'compute_us'"), std::string::npos);
	EXPECT_NE(error_of("profile a bytes=1M compute_us=1 buckets=0\n").find("field 'buckets'"),
		  std::string::npos);
	EXPECT_NE(error_of("profile a bytes=1M compute_us=1 bytes_cycle=1,,2\n").find("field 'bytes_cycle'"),
		  std::string::npos);
	EXPECT_NE(error_of("profile a bytes=1M compute_us=1 bytes_cycle=1,0\n").find("must be > 0"),
		  std::string::npos);
	EXPECT_NE(error_of("profile a bytes=1M compute_us=1 bytes=2M\n").find("field 'bytes' given twice"),
		  std::string::npos);
	EXPECT_NE(error_of("profile a bytes=1M compute_us=1\nprofile a bytes=1M compute_us=1\n")
			  .find("t.prof:2: profile 'a' already defined on line 1"),
		  std::string::npos);
	EXPECT_NE(error_of("job a bytes=1M\n").find("t.prof:1: expected 'profile"), std::string::npos);
	EXPECT_NE(error_of("profile a bytes\n").find("t.prof:1: field 'bytes' is not key=value"), std::string::npos);
	EXPECT_NE(error_of("profile a bytes=1.5 compute_us=1\n").find("whole number"), std::string::npos);
	EXPECT_NE(error_of("profile a bytes=100G compute_us=1\n").find("64 GiB"), std::string::npos);
	EXPECT_NE(error_of("profile a bytes=3 compute_us=1 buckets=2 conns=2\n").find("smaller than buckets x conns"),
		  std::string::npos);
	EXPECT_NE(error_of("# only a comment\n").find("no profiles"), std::string::npos);
	EXPECT_THROW(find_profile(parse_profiles("profile a bulk=1\n", "t"), "zz", "t"), ProfileError);
}

TEST(Profile, ByteCounts)
{
	EXPECT_EQ(parse_byte_count("2500000"), 2500000u);
	EXPECT_EQ(parse_byte_count("2.5M"), 2500000u);
	EXPECT_EQ(parse_byte_count("300k"), 300000u);
	EXPECT_EQ(parse_byte_count("1G"), 1000000000u);
	EXPECT_THROW(parse_byte_count(""), std::invalid_argument);
	EXPECT_THROW(parse_byte_count("M"), std::invalid_argument);
	EXPECT_THROW(parse_byte_count("-1"), std::invalid_argument);
	EXPECT_THROW(parse_byte_count("1e6"), std::invalid_argument);
}

TEST(Profile, IterationBytesFollowTheCycle)
{
	auto p = parse_profiles("profile t bytes=1M compute_us=1 bytes_cycle=1,0.5,0.25\n", "t")[0];
	EXPECT_EQ(iteration_bytes(p, 0), 1000000u);
	EXPECT_EQ(iteration_bytes(p, 1), 500000u);
	EXPECT_EQ(iteration_bytes(p, 2), 250000u);
	EXPECT_EQ(iteration_bytes(p, 3), 1000000u);
}

TEST(Profile, SplitSharesAddUp)
{
	for (uint64_t total : {1ull, 7ull, 1000ull, 2500001ull})
		for (uint32_t parts : {1u, 3u, 4u, 7u}) {
			if (total < parts)
				continue;
			uint64_t sum = 0, lo = UINT64_MAX, hi = 0;
			for (uint32_t k = 0; k < parts; k++) {
				uint64_t s = split_share(total, parts, k);
				sum += s;
				lo = std::min(lo, s);
				hi = std::max(hi, s);
			}
			EXPECT_EQ(sum, total);
			EXPECT_LE(hi - lo, 1u);
		}
}

TEST(Profile, ProjectProfilesParse)
{
	auto ps = load_profiles(MLTCP_PROFILES);
	EXPECT_GE(ps.size(), 8u);
	bool tag = false, dorylus = false, bulk = false;
	for (const auto &p : ps) {
		tag |= p.bytes_cycle.size() > 1;
		dorylus |= p.async;
		bulk |= p.bulk;
	}
	EXPECT_TRUE(tag && dorylus && bulk);
	EXPECT_THROW(load_profiles("/nonexistent/x.prof"), ProfileError);
}

TEST(Stats, NearestRankPercentile)
{
	std::vector<double> v(100);
	std::iota(v.begin(), v.end(), 1.0);
	EXPECT_EQ(percentile(v, 99), 99.0);
	EXPECT_EQ(percentile(v, 50), 50.0);
	EXPECT_EQ(percentile({5.0}, 99), 5.0);
	auto s = iter_stats({1000, 10, 20, 30}, 1);
	EXPECT_EQ(s.n, 3u);
	EXPECT_DOUBLE_EQ(s.mean_us, 20.0);
	EXPECT_EQ(s.p99_us, 30.0);
}

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
