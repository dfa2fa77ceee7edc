// iteration.cpp - the per-iteration CSV: its one writer and its reader, and
// the clock its host tools stamp it with (iteration.h).
#include "iteration.h"

#include <cerrno>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

namespace mltcp_workload {

uint64_t realtime_us()
{
	timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

const char kIterationCsvHeaderV1[] = "job,iteration,bytes,start_us,comm_start_us,comm_end_us,end_us";
const char kIterationCsvHeaderV2[] =
	"job,iteration,bytes,start_us,comm_start_us,comm_end_us,end_us,"
	"rto,recoveries,tlp,undo,spurious_rto";
const char kIterationCsvHeader[] =
	"job,iteration,bytes,start_us,comm_start_us,comm_end_us,end_us,"
	"rto,recoveries,tlp,undo,spurious_rto,window_repairs";
const char *const kLossCounterNames[kLossCounterCount] = {"rto", "recoveries", "tlp", "undo",
							   "spurious_rto", "window_repairs"};

int64_t &loss_counter(LossCounters &c, size_t i)
{
	int64_t *fields[kLossCounterCount] = {&c.rto, &c.recoveries, &c.tlp, &c.undo,
					      &c.spurious_rto, &c.window_repairs};
	return *fields[i];
}

int64_t loss_counter(const LossCounters &c, size_t i)
{
	return loss_counter(const_cast<LossCounters &>(c), i);
}

void write_iteration_csv_header(FILE *f)
{
	fprintf(f, "%s\n", kIterationCsvHeader);
}

void write_iteration_csv_rows(FILE *f, const std::string &job, const std::vector<Iteration> &its,
			      int64_t t0_us)
{
	for (size_t i = 0; i < its.size(); i++) {
		const Iteration &r = its[i];
		fprintf(f, "%s,%zu,%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64,
			job.c_str(), i, r.bytes, r.start_us - t0_us, r.comm_start_us - t0_us,
			r.comm_end_us - t0_us, r.end_us - t0_us);
		for (size_t c = 0; c < kLossCounterCount; c++) {
			int64_t v = loss_counter(r.loss, c);
			if (v == kCounterUnknown)
				fputs(",", f);
			else
				fprintf(f, ",%" PRId64, v);
		}
		fputs("\n", f);
	}
}

std::string write_iteration_csv(const std::string &path, const std::string &job,
				const std::vector<Iteration> &its, int64_t t0_us)
{
	FILE *f = fopen(path.c_str(), "w");
	if (!f)
		return "cannot write " + path + ": " + strerror(errno);
	write_iteration_csv_header(f);
	write_iteration_csv_rows(f, job, its, t0_us);
	if (fclose(f))
		return "write error on " + path;
	return "";
}

namespace {

int64_t parse_int(const std::string &s, const std::string &where, bool is_unsigned)
{
	char *end = nullptr;
	errno = 0;
	long long v = strtoll(s.c_str(), &end, 10);
	if (s.empty() || *end || errno || (is_unsigned && v < 0))
		throw IterationCsvError(where + ": '" + s + "' is not " +
					(is_unsigned ? "a non-negative integer" : "an integer"));
	return v;
}

}  // namespace

std::vector<JobIterations> parse_iteration_csv(const std::string &text, const std::string &origin)
{
	static const char *kColumns[] = {"job", "iteration", "bytes", "start_us",
					 "comm_start_us", "comm_end_us", "end_us"};
	constexpr size_t kTimeColumns = 7;
	std::vector<JobIterations> jobs;
	std::istringstream in(text);
	std::string line;
	int lineno = 0;
	if (!std::getline(in, line) || (line != kIterationCsvHeader && line != kIterationCsvHeaderV2 &&
					line != kIterationCsvHeaderV1))
		throw IterationCsvError(origin + ":1: header is not '" + std::string(kIterationCsvHeader) +
					"' (or its first 12 or 7 columns)");
	const size_t columns = line == kIterationCsvHeader     ? kTimeColumns + kLossCounterCount
			       : line == kIterationCsvHeaderV2 ? kTimeColumns + kLossCounterCount - 1
							       : kTimeColumns;
	lineno = 1;
	while (std::getline(in, line)) {
		lineno++;
		if (line.empty())
			continue;
		std::vector<std::string> f;
		std::stringstream ss(line);
		std::string cell;
		while (std::getline(ss, cell, ','))
			f.push_back(cell);
		if (!line.empty() && line.back() == ',')
			f.push_back("");
		const std::string at = origin + ":" + std::to_string(lineno);
		if (f.size() != columns)
			throw IterationCsvError(at + ": " + std::to_string(f.size()) +
						" columns, the header has " + std::to_string(columns));
		if (f[0].empty())
			throw IterationCsvError(at + ": column job is empty");
		auto col = [&](int c) { return at + ": column " + kColumns[c]; };
		int64_t iter = parse_int(f[1], col(1), true);
		Iteration r;
		r.bytes = (uint64_t)parse_int(f[2], col(2), true);
		r.start_us = parse_int(f[3], col(3), false);
		r.comm_start_us = parse_int(f[4], col(4), false);
		r.comm_end_us = parse_int(f[5], col(5), false);
		r.end_us = parse_int(f[6], col(6), false);
		for (size_t c = 0; kTimeColumns + c < columns; c++) {
			const std::string &cell = f[kTimeColumns + c];
			if (!cell.empty())	// empty: unknown
				loss_counter(r.loss, c) = parse_int(
					cell, at + ": column " + kLossCounterNames[c], true);
		}
		if (r.comm_start_us > r.comm_end_us || r.start_us > r.end_us)
			throw IterationCsvError(at + ": a phase ends before it starts "
						     "(comm_start_us > comm_end_us or start_us > end_us)");
		JobIterations *j = nullptr;
		for (auto &x : jobs)
			if (x.job == f[0])
				j = &x;
		if (!j) {
			jobs.push_back({f[0], {}});
			j = &jobs.back();
		}
		if ((size_t)iter != j->iterations.size())
			throw IterationCsvError(col(1) + ": job " + f[0] + " iteration " + f[1] +
						" where " + std::to_string(j->iterations.size()) +
						" comes next");
		j->iterations.push_back(r);
	}
	return jobs;
}

std::vector<JobIterations> read_iteration_csv(const std::string &path)
{
	std::ifstream f(path);
	if (!f)
		throw IterationCsvError(path + ": cannot read: " + strerror(errno));
	std::stringstream ss;
	ss << f.rdbuf();
	return parse_iteration_csv(ss.str(), path);
}

}  // namespace mltcp_workload
