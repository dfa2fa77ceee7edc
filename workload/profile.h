// profile.h - training-job profiles: the line-oriented file format every
// workload reads (mltcp-emu, the ns-3 job application in sim/, mltcp-dpdk
// emu).  The format is described in profiles/README.md; this parser is its
// only implementation.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace mltcp_workload {

// Bounds that keep a typo from asking for a terabyte or a day of compute.
constexpr uint64_t kMaxBytesPerIteration = 64ULL << 30;	// 64 GiB
constexpr uint64_t kMaxComputeUs = 600ULL * 1000 * 1000;	// 10 min
constexpr uint32_t kMaxBuckets = 1024;
constexpr uint32_t kMaxConns = 64;
// NCCL's socket transport never sends smaller chunks (MIN_CHUNKSIZE).
constexpr uint64_t kMinStripeChunk = 64 * 1024;
constexpr double kMaxCycleFactor = 16.0;

struct Profile {
	std::string name;
	uint64_t bytes = 0;		// bytes per iteration, whole job
	uint64_t compute_us = 0;	// compute phase per iteration
	uint32_t buckets = 1;		// communication split into this many sends
	uint64_t bucket_gap_us = 0;	// pause between two buckets
	std::vector<double> bytes_cycle{1.0};	// per-iteration factor on bytes
	bool async = false;	// compute of i+1 overlaps communication of i
	uint32_t conns = 1;	// parallel connections the bytes are spread over
	uint64_t stripe_chunk = 0;	// > 0: NCCL-style round-robin chunks of
					// this size over the conns (tools/emu/stripe.h)
	bool bulk = false;	// long-lived non-ML flow: no iterations
	int line = 0;		// where it was defined
};

// A profile file error: names the file, the line and the field.
class ProfileError : public std::runtime_error {
      public:
	using std::runtime_error::runtime_error;
};

// Parses a whole profile file's text; `origin` names it in error messages.
std::vector<Profile> parse_profiles(const std::string &text, const std::string &origin);
std::vector<Profile> load_profiles(const std::string &path);
const Profile &find_profile(const std::vector<Profile> &all, const std::string &name,
			    const std::string &origin);

// "2500000", "2.5M", "300k", "1.2G" (decimal multipliers); throws
// std::invalid_argument with the reason on anything else.
uint64_t parse_byte_count(const std::string &s);

// Bytes of iteration `i` (0-based): bytes x bytes_cycle[i mod n], at least 1.
uint64_t iteration_bytes(const Profile &p, uint64_t i);

// Share `part` (0-based) of `total` split into `parts` nearly equal shares
// (the first total % parts shares get one byte more).
uint64_t split_share(uint64_t total, uint32_t parts, uint32_t part);

}  // namespace mltcp_workload
