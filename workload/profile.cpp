// profile.cpp - parser of the job-profile format (profiles/README.md).
// Strict on purpose: an unknown field, a duplicate or a value out of range is
// an error naming the line and the field, never silently ignored.
#include "profile.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace mltcp_workload {
namespace {

// Fields the emulator does not use but the format documents (where the
// numbers came from); accepted so that profiles can carry their derivation.
const std::set<std::string> kInfoFields = {"model_params", "workers", "ref_gbps",
					   "ref_compute_ms"};

bool valid_name(const std::string &s)
{
	if (s.empty() || s.size() > 23)
		return false;
	for (char c : s)
		if (!(isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.'))
			return false;
	return true;
}

uint64_t parse_uint(const std::string &s, uint64_t max)
{
	if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos)
		throw std::invalid_argument("not a non-negative integer");
	errno = 0;
	unsigned long long v = strtoull(s.c_str(), nullptr, 10);
	if (errno == ERANGE || v > max)
		throw std::invalid_argument("out of range (max " + std::to_string(max) + ")");
	return v;
}

bool parse_bool(const std::string &s)
{
	if (s == "0")
		return false;
	if (s == "1")
		return true;
	throw std::invalid_argument("must be 0 or 1");
}

double parse_positive_double(const std::string &s)
{
	char *end = nullptr;
	errno = 0;
	double v = strtod(s.c_str(), &end);
	if (s.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
		throw std::invalid_argument("not a number");
	if (v <= 0)
		throw std::invalid_argument("must be > 0");
	return v;
}

std::vector<double> parse_cycle(const std::string &s)
{
	std::vector<double> out;
	std::stringstream ss(s);
	std::string item;
	while (std::getline(ss, item, ',')) {
		double v = parse_positive_double(item);
		if (v > kMaxCycleFactor)
			throw std::invalid_argument("factor " + item + " above " +
						    std::to_string((int)kMaxCycleFactor));
		out.push_back(v);
	}
	if (out.empty() || s.back() == ',')
		throw std::invalid_argument("needs a comma-separated list of factors, e.g. 1,0.5,0.75");
	if (out.size() > 1024)
		throw std::invalid_argument("more than 1024 factors");
	return out;
}

void set_field(Profile &p, const std::string &key, const std::string &val)
{
	if (key == "bytes")
		p.bytes = parse_byte_count(val);
	else if (key == "compute_us")
		p.compute_us = parse_uint(val, kMaxComputeUs);
	else if (key == "buckets")
		p.buckets = (uint32_t)parse_uint(val, kMaxBuckets);
	else if (key == "bucket_gap_us")
		p.bucket_gap_us = parse_uint(val, kMaxComputeUs);
	else if (key == "bytes_cycle")
		p.bytes_cycle = parse_cycle(val);
	else if (key == "async")
		p.async = parse_bool(val);
	else if (key == "conns")
		p.conns = (uint32_t)parse_uint(val, kMaxConns);
	else if (key == "stripe_chunk")
		p.stripe_chunk = parse_byte_count(val);
	else if (key == "bulk")
		p.bulk = parse_bool(val);
	else if (kInfoFields.count(key))
		parse_positive_double(val);
	else
		throw std::invalid_argument("unknown field (known: bytes compute_us buckets "
					    "bucket_gap_us bytes_cycle async conns stripe_chunk bulk "
					    "model_params workers ref_gbps ref_compute_ms)");
}

struct FieldError {
	std::string field, reason;
};

void check_profile(const Profile &p)
{
	if (p.buckets == 0)
		throw FieldError{"buckets", "must be at least 1"};
	if (p.conns == 0)
		throw FieldError{"conns", "must be at least 1"};
	if (p.stripe_chunk && p.stripe_chunk < kMinStripeChunk)
		throw FieldError{"stripe_chunk", "must be at least 65536 bytes (64 KiB, the smallest "
						 "chunk NCCL's socket transport sends)"};
	if (p.stripe_chunk && p.conns < 2)
		throw FieldError{"stripe_chunk", "stripes over conns connections: needs conns >= 2"};
	if (p.bulk)
		return;
	if (p.bytes == 0)
		throw FieldError{"bytes", "missing: every non-bulk profile needs bytes=<per iteration>"};
	if (p.bytes < (uint64_t)p.buckets * p.conns)
		throw FieldError{"bytes", "smaller than buckets x conns"};
}

}  // namespace

uint64_t parse_byte_count(const std::string &s)
{
	if (s.empty())
		throw std::invalid_argument("empty byte count");
	double mult = 1;
	std::string num = s;
	switch (s.back()) {
	case 'k': case 'K': mult = 1e3; break;
	case 'M': mult = 1e6; break;
	case 'G': mult = 1e9; break;
	default: break;
	}
	if (mult != 1)
		num.pop_back();
	if (num.empty() || num.find_first_not_of("0123456789.") != std::string::npos)
		throw std::invalid_argument("'" + s + "' is not a byte count (e.g. 2500000, 2.5M, 300k)");
	double v = strtod(num.c_str(), nullptr) * mult;
	if (v != std::floor(v))
		throw std::invalid_argument("'" + s + "' is not a whole number of bytes");
	if (v > (double)kMaxBytesPerIteration)
		throw std::invalid_argument("'" + s + "' is above the 64 GiB limit");
	return (uint64_t)v;
}

std::vector<Profile> parse_profiles(const std::string &text, const std::string &origin)
{
	std::vector<Profile> out;
	std::istringstream in(text);
	std::string raw;
	int lineno = 0;
	while (std::getline(in, raw)) {
		lineno++;
		std::string line = raw.substr(0, raw.find('#'));
		std::istringstream words(line);
		std::string word;
		if (!(words >> word))
			continue;
		auto where = origin + ":" + std::to_string(lineno) + ": ";
		if (word != "profile")
			throw ProfileError(where + "expected 'profile <name> key=value ...', got '" +
					   word + "'");
		Profile p;
		p.line = lineno;
		if (!(words >> p.name) || !valid_name(p.name))
			throw ProfileError(where + "profile name must be 1-23 of [A-Za-z0-9._-]");
		for (const auto &q : out)
			if (q.name == p.name)
				throw ProfileError(where + "profile '" + p.name +
						   "' already defined on line " + std::to_string(q.line));
		std::set<std::string> seen;
		while (words >> word) {
			auto eq = word.find('=');
			if (eq == std::string::npos || eq == 0)
				throw ProfileError(where + "field '" + word + "' is not key=value");
			std::string key = word.substr(0, eq), val = word.substr(eq + 1);
			if (!seen.insert(key).second)
				throw ProfileError(where + "field '" + key + "' given twice");
			try {
				set_field(p, key, val);
			} catch (const std::invalid_argument &e) {
				throw ProfileError(where + "field '" + key + "': " + e.what());
			}
		}
		try {
			if (!p.bulk && !seen.count("compute_us"))
				throw FieldError{"compute_us", "missing: every non-bulk profile needs compute_us=<microseconds>"};
			check_profile(p);
		} catch (const FieldError &e) {
			throw ProfileError(where + "profile '" + p.name + "' field '" + e.field +
					   "': " + e.reason);
		}
		out.push_back(p);
	}
	if (out.empty())
		throw ProfileError(origin + ": no profiles (lines 'profile <name> key=value ...')");
	return out;
}

std::vector<Profile> load_profiles(const std::string &path)
{
	std::ifstream f(path);
	if (!f)
		throw ProfileError(path + ": cannot open profile file: " + strerror(errno));
	std::stringstream ss;
	ss << f.rdbuf();
	if (f.bad())
		throw ProfileError(path + ": read error");
	return parse_profiles(ss.str(), path);
}

const Profile &find_profile(const std::vector<Profile> &all, const std::string &name,
			    const std::string &origin)
{
	std::string names;
	for (const auto &p : all) {
		if (p.name == name)
			return p;
		names += " " + p.name;
	}
	throw ProfileError(origin + ": no profile '" + name + "' (defined:" + names + ")");
}

uint64_t iteration_bytes(const Profile &p, uint64_t i)
{
	double f = p.bytes_cycle[i % p.bytes_cycle.size()];
	auto b = (uint64_t)std::llround((double)p.bytes * f);
	uint64_t floor = (uint64_t)p.buckets * p.conns;
	return b < floor ? floor : b;
}

uint64_t split_share(uint64_t total, uint32_t parts, uint32_t part)
{
	return total / parts + (part < total % parts ? 1 : 0);
}

}  // namespace mltcp_workload
