// metrics.cpp - ratios, overlap and interleaved_at of a run (metrics.h).
#include "metrics.h"

#include <algorithm>
#include <cmath>

#include "stats.h"

namespace mltcp_workload {

double overlap_fraction(Phase iv, const std::vector<Phase> &others)
{
	if (iv.end_us <= iv.start_us)
		return 0.0;
	std::vector<Phase> cut;
	for (const Phase &o : others)
		if (o.end_us > iv.start_us && o.start_us < iv.end_us)
			cut.push_back({std::max(iv.start_us, o.start_us), std::min(iv.end_us, o.end_us)});
	std::sort(cut.begin(), cut.end(), [](const Phase &a, const Phase &b) {
		return a.start_us < b.start_us || (a.start_us == b.start_us && a.end_us < b.end_us);
	});
	int64_t covered = 0;
	bool open = false;
	Phase cur{0, 0};
	for (const Phase &p : cut) {
		if (!open || p.start_us > cur.end_us) {
			if (open)
				covered += cur.end_us - cur.start_us;
			cur = p;
			open = true;
		} else {
			cur.end_us = std::max(cur.end_us, p.end_us);
		}
	}
	if (open)
		covered += cur.end_us - cur.start_us;
	return (double)covered / (double)(iv.end_us - iv.start_us);
}

std::vector<std::vector<double>> phase_overlaps(const std::vector<JobIterations> &jobs,
						const Contention &c)
{
	std::vector<std::vector<double>> out(jobs.size());
	for (size_t j = 0; j < jobs.size(); j++) {
		std::vector<Phase> others;
		for (size_t k = 0; k < jobs.size(); k++) {
			if (k == j || (c.contend && !c.contend(j, k)))
				continue;
			for (const Iteration &r : jobs[k].iterations)
				others.push_back({r.comm_start_us, r.comm_end_us});
			if (k < c.background.size())
				others.insert(others.end(), c.background[k].begin(), c.background[k].end());
		}
		for (const Iteration &r : jobs[j].iterations)
			out[j].push_back(overlap_fraction({r.comm_start_us, r.comm_end_us}, others));
	}
	return out;
}

int interleaved_at(const std::vector<JobIterations> &jobs,
		   const std::vector<std::vector<double>> &overlaps)
{
	if (jobs.size() < 2)
		return -1;
	const auto &first = jobs[0].iterations;
	for (size_t k = 0; k + kCleanRun <= first.size(); k++) {
		const int64_t lo = first[k].comm_start_us, hi = first[k + kCleanRun - 1].comm_end_us;
		bool clean = true;
		for (size_t j = 0; j < jobs.size() && clean; j++) {
			const auto &its = jobs[j].iterations;
			for (size_t i = 0; i < its.size() && i < overlaps[j].size(); i++)
				if (its[i].comm_end_us > lo && its[i].comm_start_us < hi &&
				    overlaps[j][i] >= kOverlapClean) {
					clean = false;
					break;
				}
		}
		if (clean)
			return (int)k;
	}
	return -1;
}

namespace {

std::vector<double> iteration_times(const std::vector<Iteration> &its)
{
	std::vector<double> t;
	for (const Iteration &r : its)
		t.push_back((double)(r.end_us - r.start_us));
	return t;
}

double mean_of(const std::vector<double> &v)
{
	double s = 0;
	for (double x : v)
		s += x;
	return v.empty() ? 0 : s / (double)v.size();
}

}  // namespace

LossSummary::LossSummary()
{
	for (size_t c = 0; c < kLossCounterCount; c++) {
		total[c] = kCounterUnknown;
		per_100_iter[c] = NAN;
	}
	rto_unrepaired_per_100_iter = NAN;
}

namespace {

double per_100(int64_t total, size_t iterations)
{
	return total == kCounterUnknown || !iterations ? NAN
						       : 100.0 * (double)total / (double)iterations;
}

void set_rates(LossSummary &s)
{
	for (size_t c = 0; c < kLossCounterCount; c++)
		s.per_100_iter[c] = per_100(s.total[c], s.iterations);
	s.rto_unrepaired_per_100_iter = per_100(s.rto_unrepaired, s.iterations);
}

int64_t add_counts(int64_t a, int64_t b)
{
	return a == kCounterUnknown || b == kCounterUnknown ? kCounterUnknown : a + b;
}

}  // namespace

LossSummary loss_summary(const std::vector<Iteration> &its, size_t warmup)
{
	LossSummary s;
	if (warmup >= its.size())
		warmup = 0;
	s.iterations = its.size() - warmup;
	if (!s.iterations)
		return s;
	for (size_t c = 0; c < kLossCounterCount; c++)
		s.total[c] = 0;
	s.rto_unrepaired = 0;
	for (size_t i = warmup; i < its.size(); i++) {
		const LossCounters &l = its[i].loss;
		for (size_t c = 0; c < kLossCounterCount; c++)
			s.total[c] = add_counts(s.total[c], loss_counter(l, c));
		if (l.rto > 0)
			s.rto_iterations.push_back(i);
		s.rto_unrepaired = add_counts(s.rto_unrepaired, l.window_repairs == kCounterUnknown
									? kCounterUnknown
									: l.window_repairs ? 0 : l.rto);
	}
	set_rates(s);
	return s;
}

LossSummary combine_losses(const std::vector<LossSummary> &jobs)
{
	LossSummary s;
	if (jobs.empty())
		return s;
	for (size_t c = 0; c < kLossCounterCount; c++)
		s.total[c] = 0;
	s.rto_unrepaired = 0;
	for (const LossSummary &j : jobs) {
		s.iterations += j.iterations;
		for (size_t c = 0; c < kLossCounterCount; c++)
			s.total[c] = add_counts(s.total[c], j.total[c]);
		s.rto_unrepaired = add_counts(s.rto_unrepaired, j.rto_unrepaired);
	}
	set_rates(s);
	return s;
}

void add_rank_losses(JobIterations &job, const JobIterations &rank)
{
	if (rank.iterations.size() != job.iterations.size())
		throw IterationCsvError("job " + job.job + " has " +
					std::to_string(job.iterations.size()) + " iterations, its rank " +
					rank.job + " " + std::to_string(rank.iterations.size()));
	for (size_t i = 0; i < job.iterations.size(); i++)
		for (size_t c = 0; c < kLossCounterCount; c++) {
			int64_t &mine = loss_counter(job.iterations[i].loss, c);
			mine = add_counts(mine, loss_counter(rank.iterations[i].loss, c));
		}
}

IsoBySize iso_size_means(const JobIterations &iso_run, size_t warmup)
{
	const auto &its = iso_run.iterations;
	size_t from = warmup < its.size() ? warmup : 0;
	std::map<uint64_t, std::pair<double, size_t>> sum;
	for (size_t i = from; i < its.size(); i++) {
		auto &e = sum[its[i].bytes];
		e.first += (double)(its[i].end_us - its[i].start_us);
		e.second++;
	}
	IsoBySize out;
	for (const auto &[bytes, e] : sum)
		out[bytes] = e.first / (double)e.second;
	return out;
}

namespace {

// Each of `its` from `from` on (those that start at `since_us` or later;
// with `unrepaired_only`, those whose window_repairs is 0) over the
// isolated time of its size, or the isolated mean.
std::vector<double> iteration_ratios(const std::vector<Iteration> &its, size_t from,
				     int64_t since_us, double iso_mean_us, const IsoBySize *by_size,
				     bool unrepaired_only = false)
{
	std::vector<double> out;
	for (size_t i = from; i < its.size(); i++) {
		if (its[i].start_us < since_us || (unrepaired_only && its[i].loss.window_repairs != 0))
			continue;
		double base = iso_mean_us;
		if (by_size) {
			auto it = by_size->find(its[i].bytes);
			if (it != by_size->end() && it->second > 0)
				base = it->second;
		}
		out.push_back((double)(its[i].end_us - its[i].start_us) / base);
	}
	return out;
}

}  // namespace

RunMetrics run_metrics(const std::vector<JobIterations> &jobs,
		       const std::vector<double> &iso_mean_us, size_t warmup, const Contention &c,
		       const std::vector<IsoBySize> &iso_by_size)
{
	RunMetrics m;
	m.overlaps = phase_overlaps(jobs, c);
	m.interleaved_at = interleaved_at(jobs, m.overlaps);
	std::vector<double> ratios, p99s, p99s_unrepaired, overlap_means;
	std::vector<LossSummary> losses;
	for (size_t j = 0; j < jobs.size(); j++) {
		JobMetrics jm;
		const auto &its = jobs[j].iterations;
		jm.iterations = its.size();
		IterStats s = iter_stats(iteration_times(its), warmup);
		jm.mean_us = s.mean_us;
		jm.p99_us = s.p99_us;
		jm.iso_mean_us = j < iso_mean_us.size() && iso_mean_us[j] > 0 ? iso_mean_us[j] : 0;
		jm.mean_ratio = jm.p99_ratio = NAN;
		if (jm.iso_mean_us > 0 && !its.empty()) {
			const size_t from = warmup < its.size() ? warmup : 0;
			const IsoBySize *by_size = j < iso_by_size.size() ? &iso_by_size[j] : nullptr;
			auto r = iteration_ratios(its, from, INT64_MIN, jm.iso_mean_us, by_size);
			jm.mean_ratio = mean_of(r);
			jm.p99_ratio = percentile(r, 99);
			if (std::all_of(its.begin() + (long)from, its.end(), [](const Iteration &x) {
				    return x.loss.window_repairs != kCounterUnknown;
			    })) {
				auto u = iteration_ratios(its, from, INT64_MIN, jm.iso_mean_us, by_size,
							  true);
				jm.p99_ratio_unrepaired = u.empty() ? NAN : percentile(u, 99);
			}
		}
		const auto &ov = m.overlaps[j];
		size_t w = warmup < ov.size() ? warmup : 0;
		jm.overlap_mean = mean_of(std::vector<double>(ov.begin() + (long)w, ov.end()));
		jm.losses = loss_summary(its, warmup);
		losses.push_back(jm.losses);
		if (jm.iso_mean_us > 0) {
			ratios.push_back(jm.mean_ratio);
			p99s.push_back(jm.p99_ratio);
			p99s_unrepaired.push_back(jm.p99_ratio_unrepaired);
		}
		overlap_means.push_back(jm.overlap_mean);
		m.jobs.push_back(jm);
	}
	m.mean_ratio = ratios.empty() ? NAN : mean_of(ratios);
	m.p99_ratio = p99s.empty() ? NAN : *std::max_element(p99s.begin(), p99s.end());
	if (!p99s_unrepaired.empty() &&
	    std::none_of(p99s_unrepaired.begin(), p99s_unrepaired.end(),
			 [](double x) { return std::isnan(x); }))
		m.p99_ratio_unrepaired =
			*std::max_element(p99s_unrepaired.begin(), p99s_unrepaired.end());
	m.overlap_mean = mean_of(overlap_means);
	m.losses = combine_losses(losses);
	if (m.interleaved_at >= 0) {
		const int64_t t_il = jobs[0].iterations[(size_t)m.interleaved_at].start_us;
		std::vector<double> after_mean, after_p99;
		for (size_t j = 0; j < jobs.size(); j++) {
			if (m.jobs[j].iso_mean_us <= 0)
				continue;
			auto r = iteration_ratios(jobs[j].iterations, 0, t_il, m.jobs[j].iso_mean_us,
						  j < iso_by_size.size() ? &iso_by_size[j] : nullptr);
			if (r.empty())
				continue;
			after_mean.push_back(mean_of(r));
			after_p99.push_back(percentile(r, 99));
		}
		if (!after_mean.empty()) {
			m.have_after = true;
			m.mean_ratio_after = mean_of(after_mean);
			m.p99_ratio_after = *std::max_element(after_p99.begin(), after_p99.end());
		}
	}
	return m;
}

}  // namespace mltcp_workload
