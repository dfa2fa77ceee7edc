// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// copy_ceiling.cpp - the most bytes per second two cores of this host can
// hand each other through shared memory, for bench-dpdk to print next to
// the memif goodput: a producer thread on one CPU copies frames from its
// own buffer into a ring of slots, a consumer thread on another CPU copies
// each slot out into its own buffer, with one acquire/release index per
// side and no protocol, checksum or I/O layer at all.  A transport between
// two processes on two cores moves every byte at least this way (the
// sender writes it where the receiver can read it, the receiver reads it),
// so its goodput cannot exceed this figure.  Median of kRounds.
//
// usage: dpdk_copy_ceiling [FRAME_BYTES [SLOTS]]   (defaults 9216, 256)
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr uint64_t kBytesPerRound = 4ULL << 30;
constexpr int kRounds = 5;
constexpr size_t kLocalFrames = 64;	// each side's own buffer, in frames
constexpr int kProducerCpu = 0, kConsumerCpu = 1;

bool PinTo(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

struct alignas(64) Index {
	std::atomic<uint64_t> v{0};
};

// One round: returns Gbit/s of frames moved producer -> ring -> consumer.
double Round(size_t frame, size_t slots)
{
	std::vector<char> ring(frame * slots, 0), src(frame * kLocalFrames, 1),
		dst(frame * kLocalFrames, 2);
	Index produced, consumed;
	const uint64_t frames = kBytesPerRound / frame;
	bool consumer_pinned = false;
	std::thread consumer([&] {
		consumer_pinned = PinTo(kConsumerCpu);
		for (uint64_t i = 0; i < frames; i++) {
			while (produced.v.load(std::memory_order_acquire) == i)
				;
			memcpy(&dst[(i % kLocalFrames) * frame], &ring[(i % slots) * frame], frame);
			consumed.v.store(i + 1, std::memory_order_release);
		}
	});
	const bool producer_pinned = PinTo(kProducerCpu);
	auto t0 = std::chrono::steady_clock::now();
	for (uint64_t i = 0; i < frames; i++) {
		while (i - consumed.v.load(std::memory_order_acquire) >= slots)
			;
		memcpy(&ring[(i % slots) * frame], &src[(i % kLocalFrames) * frame], frame);
		produced.v.store(i + 1, std::memory_order_release);
	}
	consumer.join();
	double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	if (!producer_pinned || !consumer_pinned) {
		fprintf(stderr, "dpdk_copy_ceiling: cannot pin to CPUs %d and %d (needs two CPUs)\n",
			kProducerCpu, kConsumerCpu);
		exit(1);
	}
	return frames * frame * 8 / secs / 1e9;
}

size_t ParseSize(const char *s, size_t min, size_t max, const char *what)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || v < min || v > max) {
		fprintf(stderr, "dpdk_copy_ceiling: %s must be in [%zu, %zu]\n", what, min, max);
		exit(2);
	}
	return (size_t)v;
}

}  // namespace

int main(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: dpdk_copy_ceiling [FRAME_BYTES [SLOTS]]   (defaults 9216, 256)\n"
		       "Bytes/s two cores move through a shared ring with one memcpy on each side.\n");
		return 0;
	}
	size_t frame = argc > 1 ? ParseSize(argv[1], 64, 1 << 20, "FRAME_BYTES") : 9216;
	size_t slots = argc > 2 ? ParseSize(argv[2], 2, 1 << 16, "SLOTS") : 256;
	std::vector<double> g;
	for (int r = 0; r < kRounds; r++)
		g.push_back(Round(frame, slots));
	std::sort(g.begin(), g.end());
	printf("COPY-CEILING frame=%zu slots=%zu gbps=%.1f min=%.1f max=%.1f\n", frame, slots,
	       g[kRounds / 2], g.front(), g.back());
	return 0;
}
