// stripe.cpp - message shares per connection, equal or NCCL-style striped
// (see stripe.h).
#include "stripe.h"

namespace mltcp_emu {

using mltcp_workload::split_share;

uint64_t stripe_share(uint64_t total, uint32_t conns, uint64_t chunk, uint32_t c)
{
	if (conns == 0 || chunk == 0 || c >= conns)
		return 0;
	uint64_t full = total / chunk, rest = total % chunk;
	// Chunks c, c + conns, c + 2 conns, ... of the `full` whole ones.
	uint64_t share = (full / conns + (c < full % conns ? 1 : 0)) * chunk;
	if (rest && full % conns == c)
		share += rest;	// the short last chunk, index `full`
	return share;
}

uint64_t message_share(const mltcp_workload::Profile &p, uint64_t message, uint32_t c)
{
	if (p.stripe_chunk)
		return stripe_share(message, p.conns, p.stripe_chunk, c);
	return split_share(message, p.conns, c);
}

uint64_t iteration_share(const mltcp_workload::Profile &p, uint64_t bytes, uint32_t c)
{
	uint64_t sum = 0;
	for (uint32_t b = 0; b < p.buckets; b++)
		sum += message_share(p, split_share(bytes, p.buckets, b), c);
	return sum;
}

}  // namespace mltcp_emu
