// emu_unit_tests.cpp - unit tests of the job-profile parser (the format shared
// with ns-3, profiles/README.md), the byte splitting rules and the statistics.
#include <gtest/gtest.h>

#include <fstream>
#include <numeric>

#include "profile.h"
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
