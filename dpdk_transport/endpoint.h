// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// endpoint.h - the public API of the MLTCP-DPDK transport, for a training
// framework's communication backend:
//
//   std::string err;
//   auto ep = mltcp_dpdk::Endpoint::Open(opts, &err);   // EAL args pass through
//   Connection *c = ep->Connect(peer_ip, cc, &status);  // or Listen + Accept
//   c->Send(std::move(buf), ep->now_ns());               // moved, not copied
//   ep->Poll();                                          // rx, timers, tx
//   c->Recv(&msg);  c->Hint(bytes, ep->now_ns());  c->Stats();  c->Close();
//
// One endpoint = one DPDK port and one protocol Stack, driven by Poll() from
// the caller's thread (run-to-completion, no locks).  Send copies nothing:
// the message buffer is moved in and segments are copied once, into mbufs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dpdk_io.h"
#include "engine.h"

namespace mltcp_dpdk {

struct EndpointOptions {
	std::vector<std::string> eal_args;
	PortOptions port;	// name, local_ip, fault injection
	EngineConfig engine;	// mss 0: the largest that fits the port's mbufs
	// sched_yield() after a poll that received nothing: on a host with
	// more runnable threads than cores this lets the peer run sooner.
	bool yield_when_idle = false;
};

class Endpoint {
      public:
	// nullptr and *err (what failed and what to do) on error.
	static std::unique_ptr<Endpoint> Open(const EndpointOptions &o, std::string *err);
	~Endpoint();

	Connection *Connect(uint32_t peer_ip, const CcConfig &cc, Status *err);
	void Listen(const CcConfig &cc) { stack_->Listen(cc); }
	Connection *Accept() { return stack_->Accept(); }
	void Release(Connection *c) { stack_->Release(c); }
	// One round: receive a burst, run timers, transmit.  Returns the
	// number of packets received.
	uint16_t Poll();
	// Polls until pred() or timeout; returns pred().
	template <typename F>
	bool PollUntil(F pred, uint64_t timeout_ns)
	{
		uint64_t end = now_ns() + timeout_ns;
		while (!pred()) {
			if (now_ns() > end)
				return false;
			Poll();
		}
		return true;
	}
	static uint64_t now_ns();
	const Port &port() const { return *port_; }
	const Stack &stack() const { return *stack_; }
	const EngineConfig &engine_config() const { return stack_->config(); }

      private:
	Endpoint() = default;
	bool yield_when_idle_ = false;
	std::unique_ptr<Port> port_;
	std::unique_ptr<Stack> stack_;
};

}  // namespace mltcp_dpdk
