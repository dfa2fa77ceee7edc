// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// cc.h - per-connection congestion control of the DPDK transport: thin
// adapters over the policy core (core/), one class per mode.
//
//   reno         Reno (slow start, tcp_cong_avoid_ai, halve on loss)
//   mltcp        Reno with w = mltcp_reno_ai_w_cached() (core/mltcp_window.h)
//   cubic        a port of the kernel's tcp_cubic.c without HyStart
//   mltcp_cubic  that CUBIC with ca->cnt scaled by mltcp_cubic_cnt()
//   dcqcn        DCQCN reaction point (core/mltcp_dcqcn.h), paced, ECN-capable
//   mltcp_dcqcn  the same with the MLTCP gain on its increase steps
//
// Windows count packets (the transport's sequence numbers count packets).
// Iteration tracking (mltcp_iter) runs only in the mltcp modes, so the cost
// difference against the base algorithm is what MLTCP adds.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

extern "C" {
#include "mltcp.h"
}

namespace mltcp_dpdk {

enum class CcKind { kReno, kMltcp, kCubic, kMltcpCubic, kDcqcn, kMltcpDcqcn };

// "reno" -> kReno ...; false for an unknown name.
bool ParseCcKind(const std::string &name, CcKind *out);
const char *CcName(CcKind k);
// "reno, mltcp, cubic, mltcp_cubic, dcqcn, mltcp_dcqcn" (for error messages).
const char *CcNameList();
inline bool CcIsRateBased(CcKind k) { return k == CcKind::kDcqcn || k == CcKind::kMltcpDcqcn; }

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
	uint32_t cnps = 0;
};

class CongestionControl {
      public:
	virtual ~CongestionControl() = default;
	virtual void OnAck(const AckSample &s) = 0;
	// A loss detected by SACK/dupthresh, at most once per window.
	virtual void OnLoss(uint64_t now_ns) = 0;
	virtual void OnRto(uint64_t now_ns) = 0;
	virtual void OnCnp(uint64_t now_ns) { (void)now_ns; }
	virtual void OnSent(uint64_t bytes, uint64_t now_ns) { (void)bytes; (void)now_ns; }
	// Time passes (rate timers).
	virtual void Advance(uint64_t now_ns) { (void)now_ns; }
	// Sending resumes after `rtos` whole retransmission timeouts of idle
	// time (tcp_cwnd_restart(), net.ipv4.tcp_slow_start_after_idle=1).
	virtual void RestartAfterIdle(uint32_t rtos) { (void)rtos; }
	virtual uint32_t cwnd() const = 0;	// packets allowed in flight
	virtual uint64_t rate_bps() const { return 0; }	// 0: not paced
	bool ecn_capable() const { return CcIsRateBased(kind_) || cfg_.ecn; }
	CcKind kind() const { return kind_; }

	// Sending resumes with nothing in flight (CA_EVENT_TX_START).
	void OnTxStart(uint64_t acked_total, uint64_t now_ns, uint32_t srtt_us);
	// "An iteration of `bytes` starts now" (mltcp_iter_hint).
	void Hint(uint64_t acked_total, uint64_t bytes, uint64_t now_ns);
	CcStats Stats() const;

      protected:
	CongestionControl(const CcConfig &c, uint64_t now_ns);
	bool tracking() const { return tracking_; }
	void TrackAck(uint64_t acked_total, uint64_t now_ns)
	{
		if (tracking_)
			mltcp_iter_on_ack(&it_, acked_total, Us32(now_ns));
	}
	// F, recomputed at most MLTCP_GAIN_STEPS times per iteration.
	uint32_t Gain()
	{
		return tracking_ ? mltcp_gain_cached(&gain_cache_, &it_, &cfg_.mltcp) : MLTCP_GAIN_ONE;
	}
	// ssthresh after a loss: the base's beta scaled by F (mltcp_decrease_beta).
	uint32_t LossSsthresh(uint32_t cwnd, uint32_t beta) const
	{
		if (tracking_)
			beta = mltcp_decrease_beta(beta, mltcp_gain(&it_, &cfg_.mltcp), &cfg_.mltcp);
		return mltcp_ssthresh(cwnd, beta);
	}
	static uint32_t Us32(uint64_t ns) { return (uint32_t)(ns / 1000); }

	CcConfig cfg_;
	CcKind kind_;
	bool tracking_;
	mltcp_iter it_{};
	mltcp_reno_cache cache_{};	// Reno's w
	mltcp_gain_cache gain_cache_{};	// F for CUBIC and DCQCN
};

std::unique_ptr<CongestionControl> MakeCongestionControl(const CcConfig &c, uint64_t now_ns);

}  // namespace mltcp_dpdk
