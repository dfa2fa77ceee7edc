// metrics_cli.cpp - mltcp-metrics: the metrics of metrics.h over per-iteration
// CSV files (iteration.h), as JSON on stdout.  tools/bench/interleave.py
// computes every run's ratios, overlap and interleaved_at through it, so the
// benchmarks and the simulator (which links metrics.cpp) share one
// implementation.
#include <getopt.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "iteration.h"
#include "metrics.h"

using namespace mltcp_workload;

namespace {

constexpr int kExitUsage = 2;

const char kUsage[] =
	"usage: mltcp-metrics [--warmup N] [--iso JOB=US ...] [--iso-run JOB=FILE.csv ...]\n"
	"                     [--rank JOB=FILE.csv ...] FILE.csv ...\n"
	"\n"
	"Reads per-iteration CSVs (job,iteration,bytes,start_us,comm_start_us,\n"
	"comm_end_us,end_us,rto,recoveries,tlp,undo,spurious_rto,window_repairs,\n"
	"workload/iteration.h;\n"
	"one or more jobs per file; the first job is the one\n"
	"interleaved_at counts iterations of) and prints the run's metrics as JSON:\n"
	"per job iterations, mean_us, p99_us (nearest rank, after the warm-up),\n"
	"iso_mean_us, mean_ratio, p99_ratio, overlap_mean and overlaps (per\n"
	"iteration); for the run mean_ratio (mean over jobs), p99_ratio (largest\n"
	"job's), overlap_mean, interleaved_at (first iteration k of the first job\n"
	"with 3 consecutive iterations whose intersecting phases overlap < 10%),\n"
	"mean_ratio_after and p99_ratio_after (iterations starting once\n"
	"interleaved).  Loss recoveries (the CSV's rto, recoveries, tlp, undo,\n"
	"spurious_rto: counters of the job's network namespace during each\n"
	"communication phase; window_repairs: corrupted windows MLTCP's BPF\n"
	"datapath repaired on the job's sockets) per job after the warm-up in\n"
	"\"losses\": totals, <counter>_per_100_iter, rto_iterations (the\n"
	"iterations with an RTO) and rto_unrepaired (RTOs in phases without a\n"
	"window repair; null if window_repairs is unknown), and p99_ratio_unrepaired\n"
	"per job and run (the p99 ratio over the iterations without a repair),\n"
	"and per iteration in \"loss_per_iteration\"; for the run the same totals\n"
	"and rates over all jobs.  null: not defined (no isolated mean, never\n"
	"interleaved, a counter the CSV does not know).\n"
	"  --warmup N     iterations of each job left out of mean, p99 and overlap\n"
	"                 (0..1000000, default 0)\n"
	"  --iso JOB=US   JOB's isolated mean iteration time in microseconds (> 0);\n"
	"                 without it JOB has no ratios\n"
	"  --iso-run JOB=F  F is JOB's isolated run (one job): each of JOB's\n"
	"                 iterations counts against the isolated mean of its size\n"
	"                 (after the warm-up), a size F lacks against --iso's; the\n"
	"                 same ratios for a job of one size, the right ones for a\n"
	"                 job whose sizes vary by design (needs --iso for JOB)\n"
	"  --rank JOB=F   F is another rank of ring job JOB (its own namespace): its\n"
	"                 loss counters are added to JOB's, iteration by iteration\n"
	"                 (times are JOB's own)\n"
	"exit codes: 0 ok, 2 bad usage or a CSV not in the schema\n";

[[noreturn]] void usage_error(const std::string &msg)
{
	fprintf(stderr, "mltcp-metrics: %s (see --help)\n", msg.c_str());
	exit(kExitUsage);
}

std::string num(double v)
{
	if (!std::isfinite(v))
		return "null";
	char b[40];
	snprintf(b, sizeof(b), "%.17g", v);
	return b;
}

std::string json_string(const std::string &s)
{
	std::string o = "\"";
	for (char ch : s) {
		if (ch == '"' || ch == '\\')
			o += '\\';
		if ((unsigned char)ch < 0x20) {
			char b[8];
			snprintf(b, sizeof(b), "\\u%04x", ch);
			o += b;
			continue;
		}
		o += ch;
	}
	return o + "\"";
}

std::string counter(int64_t v)
{
	return v == kCounterUnknown ? "null" : std::to_string(v);
}

std::string losses_json(const LossSummary &s, bool with_iterations)
{
	std::string o = "{\"iterations\": " + std::to_string(s.iterations);
	for (size_t c = 0; c < kLossCounterCount; c++)
		o += std::string(", \"") + kLossCounterNames[c] + "\": " + counter(s.total[c]) +
		     ", \"" + kLossCounterNames[c] + "_per_100_iter\": " + num(s.per_100_iter[c]);
	o += ", \"rto_unrepaired\": " + counter(s.rto_unrepaired) +
	     ", \"rto_unrepaired_per_100_iter\": " + num(s.rto_unrepaired_per_100_iter);
	if (with_iterations) {
		o += ", \"rto_iterations\": [";
		for (size_t i = 0; i < s.rto_iterations.size(); i++)
			o += (i ? ", " : "") + std::to_string(s.rto_iterations[i]);
		o += "]";
	}
	return o + "}";
}

std::string per_iteration_json(const std::vector<Iteration> &its)
{
	std::string o = "[";
	for (size_t i = 0; i < its.size(); i++) {
		o += i ? ", {" : "{";
		for (size_t c = 0; c < kLossCounterCount; c++)
			o += std::string(c ? ", \"" : "\"") + kLossCounterNames[c] +
			     "\": " + counter(loss_counter(its[i].loss, c));
		o += "}";
	}
	return o + "]";
}

// The index of job `name` among `jobs`; a usage error naming `option` if
// there is none.
size_t job_index(const std::vector<JobIterations> &jobs, const std::string &name,
		 const char *option)
{
	for (size_t j = 0; j < jobs.size(); j++)
		if (jobs[j].job == name)
			return j;
	usage_error(std::string(option) + ": no job '" + name + "' in the CSV files");
}

// The one job of `file` (a rank, a run alone); IterationCsvError otherwise.
JobIterations read_one_job(const std::string &file, const char *option)
{
	auto run = read_iteration_csv(file);
	if (run.size() != 1)
		throw IterationCsvError(file + ": " + option + " needs one job per file, it has " +
					std::to_string(run.size()));
	return std::move(run[0]);
}

}  // namespace

int main(int argc, char **argv)
{
	static const option opts[] = {{"warmup", 1, nullptr, 'w'},
				      {"iso", 1, nullptr, 'i'},
				      {"iso-run", 1, nullptr, 's'},
				      {"rank", 1, nullptr, 'r'},
				      {"help", 0, nullptr, 'h'},
				      {nullptr, 0, nullptr, 0}};
	size_t warmup = 0;
	std::vector<std::pair<std::string, double>> iso;
	std::vector<std::pair<std::string, std::string>> ranks;	// job, file
	std::vector<std::pair<std::string, std::string>> iso_runs;	// job, file
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, nullptr)) != -1) {
		switch (c) {
		case 'w': {
			char *end = nullptr;
			errno = 0;
			unsigned long long v = strtoull(optarg, &end, 10);
			if (!*optarg || *end || errno || optarg[0] == '-' || v > 1000000)
				usage_error(std::string("--warmup '") + optarg +
					    "' is not an integer in 0..1000000 (iterations)");
			warmup = (size_t)v;
			break;
		}
		case 'i': {
			std::string a = optarg;
			size_t eq = a.rfind('=');
			char *end = nullptr;
			double us = eq == std::string::npos ? 0 : strtod(a.c_str() + eq + 1, &end);
			if (eq == std::string::npos || eq == 0 || !end || *end || !(us > 0) ||
			    !std::isfinite(us))
				usage_error("--iso '" + a + "' is not JOB=US with US > 0 (microseconds)");
			iso.emplace_back(a.substr(0, eq), us);
			break;
		}
		case 'r':
		case 's': {
			const char *name = c == 'r' ? "--rank" : "--iso-run";
			std::string a = optarg;
			size_t eq = a.find('=');
			if (eq == std::string::npos || eq == 0 || eq + 1 == a.size())
				usage_error(std::string(name) + " '" + a + "' is not JOB=FILE.csv");
			(c == 'r' ? ranks : iso_runs).emplace_back(a.substr(0, eq), a.substr(eq + 1));
			break;
		}
		case 'h':
			fputs(kUsage, stdout);
			return 0;
		default:
			usage_error(std::string("bad option '") + argv[optind - 1] + "'");
		}
	}
	if (optind >= argc)
		usage_error("no CSV file given");
	std::vector<JobIterations> jobs;
	try {
		for (int i = optind; i < argc; i++)
			for (auto &j : read_iteration_csv(argv[i])) {
				for (const auto &k : jobs)
					if (k.job == j.job)
						throw IterationCsvError(std::string(argv[i]) + ": job " +
									j.job + " is in two files");
				jobs.push_back(std::move(j));
			}
		for (const auto &[name, file] : ranks) {
			JobIterations &job = jobs[job_index(jobs, name, "--rank")];
			JobIterations rank = read_one_job(file, "--rank");
			try {
				add_rank_losses(job, rank);
			} catch (const IterationCsvError &e) {
				throw IterationCsvError(file + ": " + e.what());
			}
		}
	} catch (const IterationCsvError &e) {
		fprintf(stderr, "mltcp-metrics: %s\n", e.what());
		return kExitUsage;
	}
	std::vector<double> iso_us(jobs.size(), 0);
	for (const auto &[name, us] : iso)
		iso_us[job_index(jobs, name, "--iso")] = us;
	std::vector<IsoBySize> iso_by_size(jobs.size());
	for (const auto &[name, file] : iso_runs) {
		size_t j = job_index(jobs, name, "--iso-run");
		if (iso_us[j] <= 0)
			usage_error("--iso-run " + name + " needs --iso " + name + "=US");
		try {
			iso_by_size[j] = iso_size_means(read_one_job(file, "--iso-run"), warmup);
		} catch (const IterationCsvError &e) {
			fprintf(stderr, "mltcp-metrics: %s\n", e.what());
			return kExitUsage;
		}
	}
	RunMetrics m = run_metrics(jobs, iso_us, warmup, {}, iso_by_size);
	std::string o = "{\"jobs\": [";
	for (size_t j = 0; j < jobs.size(); j++) {
		const JobMetrics &jm = m.jobs[j];
		o += std::string(j ? ", " : "") + "{\"job\": " + json_string(jobs[j].job) +
		     ", \"iterations\": " + std::to_string(jm.iterations) + ", \"mean_us\": " +
		     num(jm.mean_us) + ", \"p99_us\": " + num(jm.p99_us) + ", \"iso_mean_us\": " +
		     (jm.iso_mean_us > 0 ? num(jm.iso_mean_us) : "null") + ", \"mean_ratio\": " +
		     num(jm.mean_ratio) + ", \"p99_ratio\": " + num(jm.p99_ratio) +
		     ", \"p99_ratio_unrepaired\": " + num(jm.p99_ratio_unrepaired) +
		     ", \"overlap_mean\": " + num(jm.overlap_mean) +
		     ", \"losses\": " + losses_json(jm.losses, true) +
		     ", \"loss_per_iteration\": " + per_iteration_json(jobs[j].iterations) +
		     ", \"overlaps\": [";
		for (size_t i = 0; i < m.overlaps[j].size(); i++)
			o += (i ? ", " : "") + num(m.overlaps[j][i]);
		o += "]}";
	}
	o += "], \"warmup\": " + std::to_string(warmup) + ", \"mean_ratio\": " + num(m.mean_ratio) +
	     ", \"p99_ratio\": " + num(m.p99_ratio) +
	     ", \"p99_ratio_unrepaired\": " + num(m.p99_ratio_unrepaired) +
	     ", \"overlap_mean\": " + num(m.overlap_mean) +
	     ", \"interleaved_at\": " +
	     (m.interleaved_at < 0 ? std::string("null") : std::to_string(m.interleaved_at)) +
	     ", \"mean_ratio_after\": " + (m.have_after ? num(m.mean_ratio_after) : "null") +
	     ", \"p99_ratio_after\": " + (m.have_after ? num(m.p99_ratio_after) : "null") +
	     ", \"losses\": " + losses_json(m.losses, false) + "}\n";
	fputs(o.c_str(), stdout);
	return 0;
}
