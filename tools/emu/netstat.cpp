// netstat.cpp - /proc/net/netstat's TcpExt counters and the loss counters
// derived from them (netstat.h).
#include "netstat.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <vector>

namespace mltcp_emu {

using mltcp_workload::kCounterUnknown;
using mltcp_workload::LossCounters;

namespace {

std::vector<std::string> words(const std::string &line)
{
	std::vector<std::string> w;
	std::istringstream in(line);
	std::string x;
	while (in >> x)
		w.push_back(x);
	return w;
}

bool parse_counter(const std::string &s, int64_t *v)
{
	char *end = nullptr;
	errno = 0;
	unsigned long long x = strtoull(s.c_str(), &end, 10);
	if (s.empty() || *end || errno || s[0] == '-' || x > (unsigned long long)INT64_MAX)
		return false;
	*v = (int64_t)x;
	return true;
}

// The sum of the named fields, unknown if any is missing.
int64_t sum_of(const NetstatSection &s, std::initializer_list<const char *> names)
{
	int64_t sum = 0;
	for (const char *n : names) {
		auto it = s.find(n);
		if (it == s.end())
			return kCounterUnknown;
		sum += it->second;
	}
	return sum;
}

}  // namespace

NetstatSection parse_netstat_section(const std::string &text, const std::string &section)
{
	const std::string prefix = section + ":";
	std::istringstream in(text);
	std::string line;
	std::vector<std::string> names;
	while (std::getline(in, line)) {
		std::vector<std::string> w = words(line);
		if (w.empty() || w[0] != prefix)
			continue;
		if (names.empty()) {	// the header line comes first
			names.assign(w.begin() + 1, w.end());
			continue;
		}
		NetstatSection out;
		if (w.size() != names.size() + 1)
			return {};
		for (size_t i = 0; i < names.size(); i++) {
			int64_t v;
			if (!parse_counter(w[i + 1], &v))
				return {};
			out[names[i]] = v;
		}
		return out;
	}
	return {};
}

LossCounters loss_totals(const NetstatSection &t)
{
	LossCounters c;
	c.rto = sum_of(t, {"TCPTimeouts"});
	c.recoveries = sum_of(t, {"TCPSackRecovery", "TCPRenoRecovery"});
	c.tlp = sum_of(t, {"TCPLossProbes"});
	c.undo = sum_of(t, {"TCPFullUndo", "TCPPartialUndo", "TCPDSACKUndo", "TCPLossUndo"});
	c.spurious_rto = sum_of(t, {"TCPSpuriousRTOs"});
	return c;
}

LossCounters loss_delta(const LossCounters &start, const LossCounters &end)
{
	LossCounters d;
	for (size_t i = 0; i < mltcp_workload::kLossCounterCount; i++) {
		int64_t a = loss_counter(start, i), b = loss_counter(end, i);
		loss_counter(d, i) = a == kCounterUnknown || b == kCounterUnknown || b < a
					     ? kCounterUnknown
					     : b - a;
	}
	return d;
}

LossCounters read_loss_totals(const char *path)
{
	std::ifstream f(path);
	if (!f)
		return {};
	std::stringstream ss;
	ss << f.rdbuf();
	return loss_totals(parse_netstat_section(ss.str(), "TcpExt"));
}

}  // namespace mltcp_emu
