// stats.h - iteration-time statistics: mean, p50 and p99 (nearest rank)
// after a warm-up, for the emulator's JSON summary and the metrics
// (metrics.h) that every workload tool and the benchmarks share.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace mltcp_workload {

struct IterStats {
	size_t n = 0;
	double mean_us = 0;
	double p50_us = 0;
	double p99_us = 0;
};

// Nearest-rank percentile (q in (0, 100]) of a non-empty sample.
inline double percentile(std::vector<double> v, double q)
{
	std::sort(v.begin(), v.end());
	size_t rank = (size_t)std::ceil(q / 100.0 * (double)v.size());
	if (rank < 1)
		rank = 1;
	return v[std::min(rank, v.size()) - 1];
}

// Statistics of the samples after the first `warmup` ones (all of them if
// fewer remain than one).
inline IterStats iter_stats(const std::vector<double> &us, size_t warmup)
{
	IterStats s;
	if (us.empty())
		return s;
	if (warmup >= us.size())
		warmup = 0;
	std::vector<double> v(us.begin() + (long)warmup, us.end());
	s.n = v.size();
	double sum = 0;
	for (double x : v)
		sum += x;
	s.mean_us = sum / (double)v.size();
	s.p50_us = percentile(v, 50);
	s.p99_us = percentile(v, 99);
	return s;
}

}  // namespace mltcp_workload
