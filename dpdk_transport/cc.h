// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// cc.h - per-connection congestion control of the DPDK transport: one
// concrete class (as eRPC's timely.h), samples in, window or rate out.
// Every decision is the policy core's (core/); this class owns the state
// and maps the transport's events to the core's calls:
//
//   reno, mltcp              mltcp_reno_flow_* on a struct mltcp_window
//   cubic, mltcp_cubic       mltcp_cubic_flow_* on a struct mltcp_window,
//                            HyStart on the acks' RTT samples (sequence
//                            numbers count packets here, bytes in TCP)
//   dcqcn, mltcp_dcqcn       mltcp_dcqcn_flow_* (paced, ECN-capable)
//
// A base mode is its MLTCP mode with the gain switched off (params.enabled
// = 0, which the core guarantees is exactly the base algorithm) and no
// iteration tracking, so the cost difference is what MLTCP adds.  Windows
// count packets (the transport's sequence numbers count packets).
#pragma once

#include <cstdint>
#include <string>

#include "mltcp.hpp"

namespace mltcp_dpdk {

// The names and kinds are the core's table (core/mltcp.hpp); CcName() is
// mltcp::CcName, found by argument-dependent lookup.
using CcKind = mltcp::Cc;
inline bool ParseCcKind(const std::string &name, CcKind *out) { return mltcp::ParseCc(name, out); }
inline bool CcIsRateBased(CcKind k) { return mltcp::CcInfoOf(k).rate; }
inline bool CcIsMltcp(CcKind k) { return mltcp::CcInfoOf(k).mltcp; }

struct CcConfig {
	CcKind kind = CcKind::kReno;
	uint32_t initial_cwnd = 10;	// packets
	uint32_t max_cwnd = 1 << 16;	// packets; also the rate modes' window cap
	mltcp_params mltcp;		// validated by the endpoint
	mltcp_dcqcn_params dcqcn;	// validated by the endpoint
	// Window modes: send ECN-capable packets and take the receiver's CNP as
	// the ECN echo (RFC 3168: one window reduction per window of data, no
	// retransmission).  The rate modes are always ECN-capable.
	bool ecn = false;
	CcConfig()
	{
		mltcp_params_default(&mltcp);
		mltcp_dcqcn_params_default(&dcqcn);
	}
};

// What one ack tells the congestion control.
struct AckSample {
	uint64_t now_ns;
	uint64_t acked_bytes_total;	// cumulative payload bytes acknowledged
	uint32_t acked_pkts;		// packets newly acknowledged (cum + sack)
	uint32_t srtt_us;
	bool cwnd_limited;		// the sender was limited by cwnd lately
	bool in_recovery;		// no growth while repairing a loss
	int32_t rtt_us = -1;		// this ack's RTT sample, < 0: none
	uint32_t snd_una = 0;		// oldest unacknowledged sequence number
	uint32_t snd_nxt = 0;		// next sequence number to send
	uint32_t mss_bytes = 0;		// payload bytes per packet; 0: unknown,
					// no tail hold (mltcp_tail_hold)
};

// What a transmit start with nothing in flight tells the congestion
// control (CA_EVENT_TX_START).
struct TxStartSample {
	uint64_t now_ns;
	uint64_t acked_bytes_total;	// cumulative payload bytes acknowledged
	uint32_t srtt_us;
	uint32_t min_rtt_us;		// smallest RTT sample, 0: none
	uint32_t mss_bytes;		// payload bytes per packet; 0: unknown,
					// no start drain (mltcp_start_cwnd)
	uint64_t received_bytes_total;	// cumulative payload bytes received
					// from the peer (no start drain for a
					// two-way connection)
};

// Iteration statistics, the same fields as `mltcpctl stats`.
struct CcStats {
	uint32_t iterations = 0;	// detected + hinted
	uint32_t hinted = 0;
	uint64_t iter_bytes = 0;
	uint64_t bytes_per_iter = 0;
	uint32_t ratio = MLTCP_RATIO_NONE;	// 1/1024 units
	uint32_t gain = MLTCP_GAIN_ONE;		// 1/1024 units
	uint32_t cwnd = 0;		// packets
	uint64_t rate_bps = 0;		// rate modes
	uint64_t rate_target_bps = 0;	// rate modes: R_T
	uint32_t cnps = 0;
};

class CongestionControl {
      public:
	// seed: a uniform random value for the first iteration (mltcp_iter_seed).
	CongestionControl(const CcConfig &c, uint64_t now_ns, uint32_t seed);

	void OnAck(const AckSample &s);
	// A loss detected by SACK/dupthresh, at most once per window.
	void OnLoss(uint64_t now_ns);
	// A retransmission timeout; snd_nxt starts HyStart's next round.
	void OnRto(uint64_t now_ns, uint32_t snd_nxt);
	void OnCnp(uint64_t now_ns);
	void OnSent(uint64_t bytes, uint64_t now_ns);
	// Time passes (rate timers).
	void Advance(uint64_t now_ns);
	// Sending resumes after `rtos` whole retransmission timeouts of idle
	// time (tcp_cwnd_restart(), net.ipv4.tcp_slow_start_after_idle=1):
	// the kernel's TCP does this, not its congestion control, so it stays
	// here rather than in the core.
	void RestartAfterIdle(uint32_t rtos);
	// Sending resumes with nothing in flight (CA_EVENT_TX_START); a window
	// mode then starts an iteration from the part of its window that was
	// not queue (the start drain, mltcp_start_cwnd).
	void OnTxStart(const TxStartSample &s);
	// "An iteration of `bytes` starts now" (mltcp_iter_hint).
	void Hint(uint64_t acked_total, uint64_t bytes, uint64_t now_ns);

	uint32_t cwnd() const { return rate_based_ ? cfg_.max_cwnd : win_.cwnd; }
	uint32_t ssthresh() const { return win_.ssthresh; }
	uint64_t rate_bps() const { return rate_based_ ? mltcp_dcqcn_flow_rate_bps(&dcqcn_) : 0; }
	bool ecn_capable() const { return rate_based_ || cfg_.ecn; }
	CcKind kind() const { return cfg_.kind; }
	// F now (kGainOne for the base modes).
	uint32_t gain() const;
	CcStats Stats() const;

      private:
	enum class Base { kReno, kCubic, kDcqcn };
	static uint32_t Us32(uint64_t ns) { return (uint32_t)(ns / 1000); }
	const mltcp_iter &iter() const;
	mltcp_iter &iter();

	CcConfig cfg_;
	Base base_;
	bool rate_based_;
	bool tracking_;		// the MLTCP modes track iterations
	mltcp_params params_;	// cfg_.mltcp, with enabled = 0 in the base modes
	mltcp_window win_{};
	// The state of the one base algorithm in use (base_).
	union {
		mltcp_reno_flow reno_;
		mltcp_cubic_flow cubic_;
		mltcp_dcqcn_flow dcqcn_;
	};
};

}  // namespace mltcp_dpdk
