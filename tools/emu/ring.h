// ring.h - the schedule of a ring all-reduce among K workers (mltcp-emu ring),
// as pure functions so that tests can check it without sockets.
//
// The buffer is split into K chunks (split_share).  Rank r sends to rank
// r+1 and receives from rank r-1 (mod K), in 2(K-1) steps:
//   reduce-scatter, steps s = 0..K-2: send chunk (r - s), receive chunk
//     (r - s - 1) and reduce it into the local copy;
//   all-gather, steps K-1+s for s = 0..K-2: send chunk (r + 1 - s), receive
//     chunk (r - s) and keep it.
// Every send after step 0 forwards the chunk received in the step before (the
// data dependency that makes a step wait for the previous rank, as in NCCL's
// ring), and after the last step every rank holds every fully reduced chunk.
#pragma once

#include <cstdint>

namespace mltcp_emu {

constexpr uint32_t kMinRingRanks = 2;
constexpr uint32_t kMaxRingRanks = 64;

struct RingStep {
	uint32_t send_chunk;	// chunk index sent to the next rank
	uint32_t recv_chunk;	// chunk index received from the previous rank
	bool reduce;		// reduce-scatter (true) or all-gather (false)
};

inline uint32_t ring_next(uint32_t ranks, uint32_t rank)
{
	return (rank + 1) % ranks;
}

inline uint32_t ring_prev(uint32_t ranks, uint32_t rank)
{
	return (rank + ranks - 1) % ranks;
}

// Steps of one all-reduce: 2(K-1).
inline uint32_t ring_steps(uint32_t ranks)
{
	return 2 * (ranks - 1);
}

// What rank `rank` of `ranks` sends and receives in step `step`
// (0 <= step < ring_steps(ranks)).
RingStep ring_step(uint32_t ranks, uint32_t rank, uint32_t step);

// Payload bytes rank `rank` sends in one all-reduce of `total` bytes.
uint64_t ring_bytes_sent(uint64_t total, uint32_t ranks, uint32_t rank);

// Where in the emulator's payload pattern the message of (iteration, bucket,
// step) starts: both ends derive it, so the receiver can check every byte.
uint64_t ring_pattern_offset(uint64_t iteration, uint32_t bucket, uint32_t step,
			     uint64_t period);

}  // namespace mltcp_emu
