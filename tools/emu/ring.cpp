// ring.cpp - the ring all-reduce schedule (ring.h).
#include "ring.h"

#include "profile.h"

namespace mltcp_emu {

RingStep ring_step(uint32_t ranks, uint32_t rank, uint32_t step)
{
	// Indices are taken mod K; adding multiples of K keeps them unsigned.
	uint32_t k = ranks, r = rank % k;
	if (step < k - 1) {
		uint32_t s = step;
		return {(r + k - s) % k, (r + 2 * k - s - 1) % k, true};
	}
	uint32_t s = step - (k - 1);
	return {(r + 1 + k - s) % k, (r + k - s) % k, false};
}

uint64_t ring_bytes_sent(uint64_t total, uint32_t ranks, uint32_t rank)
{
	uint64_t sum = 0;
	for (uint32_t t = 0; t < ring_steps(ranks); t++)
		sum += mltcp_workload::split_share(total, ranks, ring_step(ranks, rank, t).send_chunk);
	return sum;
}

uint64_t ring_pattern_offset(uint64_t iteration, uint32_t bucket, uint32_t step,
			     uint64_t period)
{
	// splitmix64 finaliser: neighbouring messages start far apart in the
	// pattern, so a misplaced or repeated block does not match by chance.
	uint64_t z = iteration * 0x9e3779b97f4a7c15ULL + ((uint64_t)bucket << 16) + step;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return z % period;
}

}  // namespace mltcp_emu
