// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// endpoint.cpp - the public API (endpoint.h): EAL + port + protocol stack.
#include "endpoint.h"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <stdexcept>

namespace mltcp_dpdk {

uint64_t Endpoint::now_ns()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * kNsPerSec + (uint64_t)ts.tv_nsec;
}

std::unique_ptr<Endpoint> Endpoint::Open(const EndpointOptions &o, std::string *err)
{
	if (o.port.local_ip == 0) {
		*err = "no local IPv4 address given";
		return nullptr;
	}
	std::string e = EalInit(o.eal_args);
	if (!e.empty()) {
		*err = e;
		return nullptr;
	}
	std::unique_ptr<Endpoint> ep(new Endpoint());
	ep->yield_when_idle_ = o.yield_when_idle;
	try {
		ep->port_ = std::make_unique<Port>(o.port);
		EngineConfig cfg = o.engine;
		uint16_t room = ep->port_->max_payload();
		if (cfg.mss == 0 || cfg.mss > room)
			cfg.mss = std::min<uint16_t>(room, kMaxMss);
		cfg.sw_checksum = !ep->port_->checksum_offload();
		std::string why = ValidateEngineConfig(cfg);
		if (!why.empty()) {
			*err = "bad transport configuration: " + why;
			return nullptr;
		}
		ep->stack_ = std::make_unique<Stack>(cfg, ep->port_.get(), o.port.seed ^ now_ns());
	} catch (const std::exception &ex) {
		*err = ex.what();
		return nullptr;
	}
	return ep;
}

Endpoint::~Endpoint()
{
	if (stack_ && port_) {
		// Give pending resets/FINs a last chance to leave.
		stack_->Poll(now_ns());
		port_->Flush();
	}
	stack_.reset();
	port_.reset();
}

Connection *Endpoint::Connect(uint32_t peer_ip, const CcConfig &cc, Status *err)
{
	return stack_->Connect(peer_ip, cc, now_ns(), err);
}

uint16_t Endpoint::Poll()
{
	uint64_t now = now_ns();
	RxPacket rx[kBurst];
	uint16_t n = port_->Receive(rx);
	for (uint16_t i = 0; i < n; i++)
		stack_->OnPacket(rx[i].src_addr, rx[i].payload, rx[i].len, rx[i].ce, now);
	stack_->Poll(now);
	port_->Flush();
	if (!n && yield_when_idle_)
		sched_yield();
	return n;
}

}  // namespace mltcp_dpdk
