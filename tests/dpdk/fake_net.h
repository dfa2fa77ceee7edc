// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// fake_net.h - a deterministic two-host network for the protocol engine's
// unit tests: a fake clock, a one-way delay, and injected loss, reordering
// (extra random delay), duplication, corruption (a flipped byte) and
// silence (one host stops answering).  Packets are really serialised and
// parsed, so corruption exercises the checksum.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "engine.h"

namespace mltcp_dpdk_test {

using namespace mltcp_dpdk;

struct Impairments {
	double loss = 0, reorder = 0, dup = 0, corrupt = 0, ce_mark = 0;
};

class FakeNet {
      public:
	static constexpr uint32_t kAddrA = 1, kAddrB = 2;

	explicit FakeNet(const EngineConfig &cfg, uint64_t seed = 1, uint64_t delay_ns = 20000,
			 uint64_t step_ns = 5000)
		: rng_(seed), delay_ns_(delay_ns), step_ns_(step_ns), sink_a_(this, kAddrA),
		  sink_b_(this, kAddrB)
	{
		a = std::make_unique<Stack>(cfg, &sink_a_, seed * 2 + 1);
		b = std::make_unique<Stack>(cfg, &sink_b_, seed * 2 + 2);
	}

	void Step()
	{
		now += step_ns_;
		while (!q_.empty() && q_.begin()->first <= now) {
			Pkt p = std::move(q_.begin()->second);
			q_.erase(q_.begin());
			Stack *to = p.dst == kAddrA ? a.get() : b.get();
			to->OnPacket(p.src, p.bytes.data(), p.bytes.size(), p.ce, now);
		}
		a->Poll(now);
		b->Poll(now);
	}
	// Runs until done() or the fake clock passes limit_ns; returns done().
	template <typename F>
	bool RunUntil(F done, uint64_t limit_ns)
	{
		uint64_t end = now + limit_ns;
		while (now < end) {
			if (done())
				return true;
			Step();
		}
		return done();
	}

	Impairments imp;
	bool silent_b = false;	// B's packets vanish
	uint64_t now = 1000000;
	uint64_t delivered_pkts = 0, dropped = 0, corrupted = 0, duplicated = 0;
	std::unique_ptr<Stack> a, b;

      private:
	struct Pkt {
		uint32_t src, dst;
		std::vector<uint8_t> bytes;
		bool ce;
	};
	class Sink : public PacketSink {
	      public:
		Sink(FakeNet *n, uint32_t self) : net_(n), self_(self) {}
		bool Send(const OutPacket &p) override
		{
			std::vector<uint8_t> b(sizeof(WireHeader) + p.hdr.payload_len);
			Serialize(p.hdr, p.payload, b.data(), true);
			net_->Inject(self_, p.peer_addr, std::move(b), p.ect);
			return true;
		}

	      private:
		FakeNet *net_;
		uint32_t self_;
	};
	double U() { return std::uniform_real_distribution<double>(0, 1)(rng_); }
	void Inject(uint32_t src, uint32_t dst, std::vector<uint8_t> &&b, bool ect)
	{
		if (src == kAddrB && silent_b)
			return;
		if (U() < imp.loss) {
			dropped++;
			return;
		}
		if (U() < imp.corrupt) {
			size_t i = std::uniform_int_distribution<size_t>(0, b.size() - 1)(rng_);
			b[i] ^= (uint8_t)(1 + rng_() % 255);
			corrupted++;
		}
		bool ce = ect && U() < imp.ce_mark;
		uint64_t at = now + delay_ns_;
		if (U() < imp.reorder)
			at += std::uniform_int_distribution<uint64_t>(1, 3 * delay_ns_)(rng_);
		if (U() < imp.dup) {
			duplicated++;
			q_.emplace(at + step_ns_, Pkt{src, dst, b, ce});
		}
		q_.emplace(at, Pkt{src, dst, std::move(b), ce});
		delivered_pkts++;
	}

	std::mt19937_64 rng_;
	uint64_t delay_ns_, step_ns_;
	Sink sink_a_, sink_b_;
	std::multimap<uint64_t, Pkt> q_;
};

}  // namespace mltcp_dpdk_test
