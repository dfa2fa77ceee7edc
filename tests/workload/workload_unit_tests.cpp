// workload_unit_tests.cpp - unit tests of the workload library (workload/):
// the job-profile parser (profiles/README.md), the byte splitting rules, the
// statistics, the per-iteration CSV and the run metrics (ratios, overlap,
// interleaved_at, loss-recovery counters), the latter on hand-computed
// schedules.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <set>

#include "iteration.h"
#include "metrics.h"
#include "profile.h"
#include "stats.h"

using namespace mltcp_workload;

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
	EXPECT_EQ(parse_profiles("profile s bytes=1M compute_us=1 conns=4 stripe_chunk=65536\n", "t")[0]
			  .stripe_chunk,
		  65536u);
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
	EXPECT_NE(error_of("profile a bytes=1M compute_us=1 conns=4 stripe_chunk=64000\n")
			  .find("field 'stripe_chunk': must be at least 65536 bytes"),
		  std::string::npos);
	EXPECT_NE(error_of("profile a bytes=1M compute_us=1 stripe_chunk=128k\n").find("needs conns >= 2"),
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


namespace {

// Two jobs of six iterations (times in us): both communicate together in
// iterations 0 and 1, then job b's phases fall into job a's compute phases.
//   a: 300 300 200 200 200 200 us per iteration, comm 200 then 100 us
//   b: 300 300 300 200 200 200 us per iteration
std::vector<JobIterations> two_jobs()
{
	JobIterations a{"a", {{10, 0, 100, 300, 300},
			      {10, 300, 400, 600, 600},
			      {10, 600, 700, 800, 800},
			      {10, 800, 900, 1000, 1000},
			      {10, 1000, 1100, 1200, 1200},
			      {10, 1200, 1300, 1400, 1400}}};
	JobIterations b{"b", {{20, 0, 100, 300, 300},
			      {20, 300, 400, 600, 600},
			      {20, 600, 800, 900, 900},
			      {20, 900, 1000, 1100, 1100},
			      {20, 1100, 1200, 1300, 1300},
			      {20, 1300, 1400, 1500, 1500}}};
	return {a, b};
}

std::string temp_path(const char *name)
{
	return std::string(testing::TempDir()) + "/mltcp-workload-" + name;
}

}  // namespace

TEST(IterationCsv, WriterAndReaderRoundTrip)
{
	auto jobs = two_jobs();
	std::string path = temp_path("rt.csv");
	FILE *f = fopen(path.c_str(), "w");
	ASSERT_TRUE(f);
	write_iteration_csv_header(f);
	for (const auto &j : jobs)
		write_iteration_csv_rows(f, j.job, j.iterations, 0);
	fclose(f);
	auto back = read_iteration_csv(path);
	ASSERT_EQ(back.size(), 2u);
	EXPECT_EQ(back[1].job, "b");
	ASSERT_EQ(back[1].iterations.size(), 6u);
	EXPECT_EQ(back[1].iterations[2].comm_start_us, 800);
	EXPECT_EQ(back[1].iterations[2].bytes, 20u);
	// Times are written relative to t0.
	EXPECT_EQ(write_iteration_csv(path, "a", jobs[0].iterations, 100), "");
	std::ifstream in(path);
	std::string header, row;
	std::getline(in, header);
	std::getline(in, row);
	EXPECT_EQ(header, kIterationCsvHeader);
	EXPECT_EQ(row, "a,0,10,-100,0,200,200,,,,,,");	// counters unknown: empty
	// Known counters are written and read back; unknown ones stay unknown.
	LossCounters l;
	l.rto = 1, l.recoveries = 0, l.tlp = 12, l.spurious_rto = 3, l.window_repairs = 4;
	std::vector<Iteration> one = {{5, 0, 1, 2, 3, l}};
	EXPECT_EQ(write_iteration_csv(path, "c", one, 0), "");
	std::ifstream in2(path);
	std::getline(in2, header);
	std::getline(in2, row);
	EXPECT_EQ(row, "c,0,5,0,1,2,3,1,0,12,,3,4");
	auto c = read_iteration_csv(path)[0].iterations[0].loss;
	EXPECT_EQ(c.rto, 1);
	EXPECT_EQ(c.recoveries, 0);
	EXPECT_EQ(c.tlp, 12);
	EXPECT_EQ(c.undo, kCounterUnknown);
	EXPECT_EQ(c.spurious_rto, 3);
	EXPECT_EQ(c.window_repairs, 4);
	EXPECT_NE(write_iteration_csv("/nonexistent/x.csv", "a", {}, 0).find("/nonexistent/x.csv"),
		  std::string::npos);
}

TEST(IterationCsv, ErrorsNameLineAndColumn)
{
	auto error_of = [](const std::string &text) -> std::string {
		try {
			parse_iteration_csv(text, "t.csv");
		} catch (const IterationCsvError &e) {
			return e.what();
		}
		return "";
	};
	const std::string h = std::string(kIterationCsvHeaderV1) + "\n";
	const std::string h2 = std::string(kIterationCsvHeader) + "\n";
	EXPECT_NE(error_of("job,iteration\n").find("t.csv:1: header"), std::string::npos);
	EXPECT_NE(error_of(h + "a,0,1,0,1,2\n").find("t.csv:2: 6 columns"), std::string::npos);
	EXPECT_NE(error_of(h + "a,0,x,0,1,2,3\n").find("t.csv:2: column bytes"), std::string::npos);
	EXPECT_NE(error_of(h + "a,0,1,0,5,2,6\n").find("phase ends before it starts"),
		  std::string::npos);
	EXPECT_NE(error_of(h + "a,0,1,0,1,2,3\na,2,1,3,4,5,6\n").find("t.csv:3: column iteration"),
		  std::string::npos);
	EXPECT_EQ(error_of(h + "a,0,1,0,1,2,3\nb,0,1,0,1,2,3\na,1,1,3,4,5,6\n"), "");
	EXPECT_THROW(read_iteration_csv("/nonexistent/x.csv"), IterationCsvError);
	// The 13-column header: counters are non-negative integers or empty.
	EXPECT_EQ(error_of(h2 + "a,0,1,0,1,2,3,0,1,,2,,\n"), "");
	EXPECT_NE(error_of(h2 + "a,0,1,0,1,2,3\n").find("t.csv:2: 7 columns, the header has 13"),
		  std::string::npos);
	EXPECT_NE(error_of(h2 + "a,0,1,0,1,2,3,0,-1,0,0,0,0\n").find("t.csv:2: column recoveries"),
		  std::string::npos);
	EXPECT_NE(error_of(h2 + "a,0,1,0,1,2,3,0,0,x,0,0,0\n").find("t.csv:2: column tlp"),
		  std::string::npos);
	EXPECT_NE(error_of(h2 + "a,0,1,0,1,2,3,0,0,0,0,0,-2\n").find("t.csv:2: column window_repairs"),
		  std::string::npos);
	// The 12-column header (before window_repairs): that counter unknown.
	const std::string h12 = std::string(kIterationCsvHeaderV2) + "\n";
	auto old = parse_iteration_csv(h12 + "a,0,1,0,1,2,3,2,1,0,0,0\n", "t")[0].iterations[0].loss;
	EXPECT_EQ(old.rto, 2);
	EXPECT_EQ(old.window_repairs, kCounterUnknown);
	EXPECT_NE(error_of(h12 + "a,0,1,0,1,2,3,2,1,0,0,0,0\n").find("13 columns, the header has 12"),
		  std::string::npos);
	// The old header's rows have no counters: unknown.
	EXPECT_EQ(parse_iteration_csv(h + "a,0,1,0,1,2,3\n", "t")[0].iterations[0].loss.rto,
		  kCounterUnknown);
}

namespace {

LossCounters counters(int64_t rto, int64_t recoveries, int64_t tlp, int64_t undo, int64_t spurious,
		      int64_t repairs = 0)
{
	LossCounters c;
	c.rto = rto, c.recoveries = recoveries, c.tlp = tlp, c.undo = undo, c.spurious_rto = spurious;
	c.window_repairs = repairs;
	return c;
}

}  // namespace

TEST(Losses, SummaryAfterTheWarmup)
{
	auto jobs = two_jobs();
	auto &a = jobs[0].iterations;
	for (auto &r : a)
		r.loss = counters(0, 1, 0, 0, 0);
	a[0].loss = counters(9, 9, 9, 9, 9);	// warm-up: left out
	a[2].loss = counters(1, 2, 1, 1, 1);
	a[5].loss = counters(2, 0, 3, 0, 0);
	LossSummary s = loss_summary(a, 1);
	EXPECT_EQ(s.iterations, 5u);
	EXPECT_EQ(s.total[0], 3);	// rto
	EXPECT_EQ(s.total[1], 5);	// recoveries: 1 + 2 + 1 + 1 + 0
	EXPECT_EQ(s.total[2], 4);
	EXPECT_EQ(s.total[3], 1);
	EXPECT_DOUBLE_EQ(s.per_100_iter[0], 60.0);
	EXPECT_DOUBLE_EQ(s.per_100_iter[1], 100.0);
	EXPECT_EQ(s.rto_iterations, (std::vector<size_t>{2, 5}));
	EXPECT_EQ(s.rto_unrepaired, 3);
	// An RTO in a phase whose window the BPF datapath repaired is not counted
	// as unrepaired; repairs unknown in one iteration make it unknown.
	a[5].loss.window_repairs = 1;
	s = loss_summary(a, 1);
	EXPECT_EQ(s.total[0], 3);
	EXPECT_EQ(s.total[5], 1);
	EXPECT_EQ(s.rto_unrepaired, 1);
	EXPECT_DOUBLE_EQ(s.rto_unrepaired_per_100_iter, 20.0);
	a[4].loss.window_repairs = kCounterUnknown;
	s = loss_summary(a, 1);
	EXPECT_EQ(s.rto_unrepaired, kCounterUnknown);
	EXPECT_TRUE(std::isnan(s.rto_unrepaired_per_100_iter));
	a[4].loss.window_repairs = a[5].loss.window_repairs = 0;
	// Warm-up as long as the run: all iterations count (as iter_stats).
	EXPECT_EQ(loss_summary(a, 6).total[0], 12);
	// One unknown iteration makes that counter unknown, not smaller.
	a[3].loss.tlp = kCounterUnknown;
	s = loss_summary(a, 1);
	EXPECT_EQ(s.total[2], kCounterUnknown);
	EXPECT_TRUE(std::isnan(s.per_100_iter[2]));
	EXPECT_EQ(s.total[0], 3);
	// A datapath without counters: everything unknown, no RTO iterations.
	LossSummary u = loss_summary(jobs[1].iterations, 1);
	for (size_t c = 0; c < kLossCounterCount; c++)
		EXPECT_EQ(u.total[c], kCounterUnknown) << kLossCounterNames[c];
	EXPECT_TRUE(u.rto_iterations.empty());
	EXPECT_EQ(u.rto_unrepaired, kCounterUnknown);
	EXPECT_EQ(loss_summary({}, 0).total[0], kCounterUnknown);
}

TEST(Losses, RunCombinesJobsAndRanks)
{
	auto jobs = two_jobs();
	for (auto &j : jobs)
		for (auto &r : j.iterations)
			r.loss = counters(0, 0, 1, 0, 0);
	jobs[1].iterations[4].loss.rto = 3;
	RunMetrics m = run_metrics(jobs, {200, 200}, 1);
	EXPECT_EQ(m.jobs[1].losses.rto_iterations, (std::vector<size_t>{4}));
	EXPECT_EQ(m.losses.iterations, 10u);
	EXPECT_EQ(m.losses.total[0], 3);
	EXPECT_DOUBLE_EQ(m.losses.per_100_iter[0], 30.0);
	EXPECT_DOUBLE_EQ(m.losses.per_100_iter[2], 100.0);
	EXPECT_EQ(m.losses.rto_unrepaired, 3);
	// A job without counters makes the run's unknown.
	LossSummary unknown;
	unknown.iterations = 5;
	EXPECT_EQ(combine_losses({m.jobs[0].losses, unknown}).total[0], kCounterUnknown);
	EXPECT_EQ(combine_losses({m.jobs[0].losses, unknown}).rto_unrepaired, kCounterUnknown);
	EXPECT_EQ(combine_losses({}).total[0], kCounterUnknown);
	// A ring's other rank adds its own namespace's counters.
	JobIterations rank1 = jobs[0];
	rank1.job = "a.rank1";
	rank1.iterations[2].loss.rto = 1;
	rank1.iterations[3].loss.undo = kCounterUnknown;
	add_rank_losses(jobs[0], rank1);
	EXPECT_EQ(jobs[0].iterations[2].loss.rto, 1);
	EXPECT_EQ(jobs[0].iterations[2].loss.tlp, 2);
	EXPECT_EQ(jobs[0].iterations[3].loss.undo, kCounterUnknown);
	rank1.iterations.pop_back();
	EXPECT_THROW(add_rank_losses(jobs[0], rank1), IterationCsvError);
}

TEST(Metrics, OverlapIsTheUnionOfTheOthers)
{
	EXPECT_DOUBLE_EQ(overlap_fraction({0, 100}, {}), 0.0);
	EXPECT_DOUBLE_EQ(overlap_fraction({0, 100}, {{50, 200}}), 0.5);
	// Overlapping others count once; touching ends do not overlap.
	EXPECT_DOUBLE_EQ(overlap_fraction({0, 100}, {{10, 30}, {20, 40}, {100, 150}, {-50, 0}}), 0.3);
	EXPECT_DOUBLE_EQ(overlap_fraction({0, 100}, {{60, 70}, {0, 10}}), 0.2);
	EXPECT_DOUBLE_EQ(overlap_fraction({5, 5}, {{0, 10}}), 0.0);
}

TEST(Metrics, P99WithoutRepairedIterations)
{
	// data/README.md's rep.csv: iteration 2 (repaired) is the slowest.
	const std::string h = std::string(kIterationCsvHeader) + "\n";
	auto jobs = parse_iteration_csv(h + "r,0,10,0,100,300,300,0,0,0,0,0,0\n"
					    "r,1,10,300,400,600,600,0,0,0,0,0,0\n"
					    "r,2,10,600,700,1200,1200,1,0,0,0,0,2\n"
					    "r,3,10,1200,1300,1400,1400,0,0,0,0,0,1\n"
					    "r,4,10,1400,1500,1600,1600,0,0,0,0,0,0\n",
					"t");
	RunMetrics m = run_metrics(jobs, {200}, 1);
	EXPECT_DOUBLE_EQ(m.p99_ratio, 3.0);
	EXPECT_DOUBLE_EQ(m.jobs[0].p99_ratio_unrepaired, 1.5);
	EXPECT_DOUBLE_EQ(m.p99_ratio_unrepaired, 1.5);
	// A repair count unknown in one iteration: no such p99, for the run too.
	jobs[0].iterations[4].loss.window_repairs = kCounterUnknown;
	m = run_metrics(jobs, {200}, 1);
	EXPECT_TRUE(std::isnan(m.jobs[0].p99_ratio_unrepaired));
	EXPECT_TRUE(std::isnan(m.p99_ratio_unrepaired));
	EXPECT_DOUBLE_EQ(m.p99_ratio, 3.0);
}

TEST(Metrics, TwoJobsInterleaveAtTwo)
{
	auto jobs = two_jobs();
	RunMetrics m = run_metrics(jobs, {200, 200}, 1);
	EXPECT_EQ(m.overlaps[0], (std::vector<double>{1, 1, 0, 0, 0, 0}));
	EXPECT_EQ(m.overlaps[1], (std::vector<double>{1, 1, 0, 0, 0, 0}));
	EXPECT_EQ(m.interleaved_at, 2);
	EXPECT_DOUBLE_EQ(m.jobs[0].mean_us, 220);
	EXPECT_DOUBLE_EQ(m.jobs[0].p99_us, 300);
	EXPECT_DOUBLE_EQ(m.jobs[1].mean_ratio, 1.2);
	EXPECT_DOUBLE_EQ(m.mean_ratio, 1.15);
	EXPECT_DOUBLE_EQ(m.p99_ratio, 1.5);	// the largest job's
	EXPECT_DOUBLE_EQ(m.overlap_mean, 0.2);
	ASSERT_TRUE(m.have_after);	// iterations starting at a[2].start = 600
	EXPECT_DOUBLE_EQ(m.mean_ratio_after, (1.0 + 1.125) / 2);
	EXPECT_DOUBLE_EQ(m.p99_ratio_after, 1.5);
	// Without isolated means: no ratios, the rest unchanged.
	RunMetrics n = run_metrics(jobs, {}, 1);
	EXPECT_TRUE(std::isnan(n.mean_ratio) && std::isnan(n.jobs[0].p99_ratio));
	EXPECT_EQ(n.interleaved_at, 2);
	EXPECT_FALSE(n.have_after);
}

// A job whose iteration sizes cycle (the tag profile): against its mean alone
// the largest size alone is a tail; against the time of its own size each
// iteration that took as long as alone counts 1.
TEST(Metrics, IterationsCountAgainstTheirOwnSizeAlone)
{
	// Alone: 100-byte iterations take 300 us, 50-byte ones 150 us (after a
	// warm-up iteration of 1000 us, left out).
	JobIterations alone{"solo", {{100, 0, 0, 1000, 1000}}};
	for (int i = 0; i < 4; i++) {
		int64_t t = alone.iterations.back().end_us;
		alone.iterations.push_back({100, t, t, t + 300, t + 300});
		alone.iterations.push_back({50, t + 300, t + 300, t + 450, t + 450});
	}
	IsoBySize by = iso_size_means(alone, 1);
	ASSERT_EQ(by.size(), 2u);
	EXPECT_DOUBLE_EQ(by[100], 300);
	EXPECT_DOUBLE_EQ(by[50], 150);
	EXPECT_DOUBLE_EQ(iso_size_means(alone, 100)[100], (1000.0 + 4 * 300) / 5);  // no warm-up left
	// In the mix: the same times, then one 50-byte iteration of 300 us and a
	// size alone never had (20 bytes, 225 us: against the mean).
	JobIterations mix{"j", {{100, 0, 0, 300, 300}}};
	for (int i = 0; i < 3; i++) {
		int64_t t = mix.iterations.back().end_us;
		mix.iterations.push_back({50, t, t, t + 150, t + 150});
		mix.iterations.push_back({100, t + 150, t + 150, t + 450, t + 450});
	}
	int64_t t = mix.iterations.back().end_us;
	mix.iterations.push_back({50, t, t, t + 300, t + 300});
	mix.iterations.push_back({20, t + 300, t + 300, t + 525, t + 525});
	RunMetrics plain = run_metrics({mix}, {225}, 0);
	EXPECT_DOUBLE_EQ(plain.jobs[0].p99_ratio, 300.0 / 225);  // every 100-byte iteration
	RunMetrics sized = run_metrics({mix}, {225}, 0, {}, {by});
	EXPECT_DOUBLE_EQ(sized.jobs[0].p99_ratio, 2.0);  // the 50-byte one of 300 us
	EXPECT_DOUBLE_EQ(sized.jobs[0].mean_ratio, (7 * 1.0 + 2.0 + 1.0) / 9);
	EXPECT_DOUBLE_EQ(sized.jobs[0].mean_us, plain.jobs[0].mean_us);  // times are times
	// A job of one size: the same ratios either way.
	auto jobs = two_jobs();
	IsoBySize ten{{10, 200}}, twenty{{20, 200}};
	RunMetrics a = run_metrics(jobs, {200, 200}, 1), b = run_metrics(jobs, {200, 200}, 1, {}, {ten, twenty});
	EXPECT_DOUBLE_EQ(a.mean_ratio, b.mean_ratio);
	EXPECT_DOUBLE_EQ(a.p99_ratio, b.p99_ratio);
	EXPECT_DOUBLE_EQ(a.p99_ratio_after, b.p99_ratio_after);
}

TEST(Metrics, InterleavedNeedsThreeCleanIterationsBelowTenPercent)
{
	auto jobs = two_jobs();
	// b's iteration 3 now overlaps a's iteration 4 by exactly 10% of each:
	// the windows from k = 2 and 3 contain it, the one from 4 is too short.
	jobs[1].iterations[3].comm_end_us = 1110;
	auto ov = phase_overlaps(jobs);
	EXPECT_DOUBLE_EQ(ov[0][4], 0.10);
	EXPECT_EQ(interleaved_at(jobs, ov), -1);
	jobs[1].iterations[3].comm_end_us = 1109;	// 9 us of 100 and 109: clean
	EXPECT_EQ(interleaved_at(jobs, phase_overlaps(jobs)), 2);
	// One job alone never interleaves.
	EXPECT_EQ(interleaved_at({jobs[0]}, {{0, 0, 0, 0, 0, 0}}), -1);
}

TEST(Metrics, BackgroundPhasesAndContention)
{
	auto jobs = two_jobs();
	Contention c;
	c.background = {{}, {{700, 800}}};	// b kept running, unrecorded
	auto ov = phase_overlaps(jobs, c);
	EXPECT_DOUBLE_EQ(ov[0][2], 1.0);
	EXPECT_DOUBLE_EQ(ov[1][2], 0.0);	// a job's own background is not contention
	c.contend = [](size_t, size_t) { return false; };	// disjoint paths
	ov = phase_overlaps(jobs, c);
	EXPECT_DOUBLE_EQ(ov[0][0], 0.0);
	EXPECT_EQ(interleaved_at(jobs, ov), 0);
}
