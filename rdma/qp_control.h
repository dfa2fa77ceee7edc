// qp_control.h - per-QP MLTCP-DCQCN control for the RDMA datapath: a thin
// adapter from verbs events (work request posted, send completed, CNP
// counted, application hint) to the core's DCQCN flow
// (core/mltcp_dcqcn_flow.h: iteration tracker and reaction point, in the
// order the core fixes), plus the software pacer that enforces the
// reaction point's rate when the device has no per-QP rate limiter
// (soft-RoCE).  No verbs calls here: the
// pacer and the adapter run with a caller-supplied clock, so tests drive
// them with a fake one.
//
// Mapping to the TCP hooks the core was written for: a send completion on an
// RC QP is the peer's transport ack, so completed bytes are the "acked
// total"; posting after the send queue drained is CA_EVENT_TX_START.
#pragma once

#include <cstdint>
#include <string>

#include "mltcp.hpp"

namespace mltcp_rdma {

// Token bucket in bytes, refilled at the paced rate.  Times in ns.
class Pacer {
 public:
	// burst: bytes that may leave back to back after an idle period.
	Pacer(uint64_t rate_bps, uint64_t burst_bytes, uint64_t now_ns);

	void SetRate(uint64_t rate_bps, uint64_t now_ns);
	// ns until `bytes` may be sent (0: now).
	uint64_t DelayNs(uint64_t bytes, uint64_t now_ns);
	// Account a transmission of `bytes` at now_ns (may go into debt).
	void Consume(uint64_t bytes, uint64_t now_ns);

	uint64_t rate_bps() const { return rate_bps_; }

 private:
	void Refill(uint64_t now_ns);

	uint64_t rate_bps_;
	uint64_t burst_bytes_;
	// Credit in bits; negative after a message larger than the credit left
	// (the debt delays the next one, so the long-run rate stays exact).
	int64_t credit_bits_;
	uint64_t last_ns_;
};

enum class Control {
	kFixed,		// constant rate: --rate (pacer accuracy tests)
	kDcqcn,		// DCQCN reaction point, neutral gain
	kMltcpDcqcn,	// DCQCN with the MLTCP gain on R_AI / R_HAI
};

bool ParseControl(const std::string &s, Control *c);
const char *ControlName(Control c);

struct QpStats {
	uint64_t posted_bytes = 0;
	uint64_t completed_bytes = 0;
	uint64_t cnps = 0;
	uint64_t rate_cuts = 0;
	uint64_t min_rate_bps = 0;
	uint32_t iterations = 0;
	uint32_t hinted = 0;
	uint64_t paced_wait_ns = 0;
};

class QpControl {
 public:
	// seed: a uniform random value for the first iteration (mltcp_iter_seed).
	QpControl(Control mode, const mltcp::Params &p, const mltcp::DcqcnParams &dp,
		  uint64_t fixed_rate_bps, uint64_t burst_bytes, uint64_t now_ns, uint32_t seed);

	// ns until a work request of `bytes` may be posted (software pacing).
	uint64_t DelayNs(uint64_t bytes, uint64_t now_ns);
	// A work request of `bytes` was posted; `queue_empty`: nothing in flight.
	void OnPost(uint64_t bytes, bool queue_empty, uint64_t now_ns);
	// A send completed (the peer acknowledged its bytes).
	void OnCompletion(uint64_t bytes, uint64_t now_ns);
	// `n` CNPs arrived for this QP (counted by the observer or the NIC).
	void OnCnps(uint64_t n, uint64_t now_ns);
	// The application announces an iteration of `bytes` (0: unknown).
	void Hint(uint64_t bytes, uint64_t now_ns);
	// Let the reaction point's timers run (call often, e.g. per post).
	void Tick(uint64_t now_ns);

	uint64_t RateBps() const;
	uint64_t TargetBps() const { return flow_.rp.rate_target_bps; }
	uint32_t Gain() const;
	const QpStats &stats() const { return stats_; }
	const mltcp_iter &iter() const { return flow_.it; }

	void set_srtt_us(uint32_t s) { srtt_us_ = s; }

 private:
	void UpdatePacer(uint64_t now_ns);

	Control mode_;
	mltcp::Params params_;
	mltcp::DcqcnParams dcqcn_params_;
	mltcp_dcqcn_flow flow_{};
	Pacer pacer_;
	uint64_t fixed_rate_bps_;
	uint64_t completed_total_ = 0;
	uint32_t srtt_us_ = 100;
	QpStats stats_;
};

}  // namespace mltcp_rdma
