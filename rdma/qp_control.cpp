// qp_control.cpp - see qp_control.h.  Policy lives in core/; this file only
// converts units (ns clock -> the core's us), paces and keeps counters.
#include "qp_control.h"

#include <algorithm>

namespace mltcp_rdma {

namespace {
constexpr uint64_t kNsPerSec = 1000000000ULL;
constexpr uint64_t kNsPerUs = 1000;
constexpr uint64_t kMinRateBps = 1000;	// the pacer never stalls forever

uint64_t us_of(uint64_t ns) { return ns / kNsPerUs; }
}  // namespace

// ---------------------------------------------------------------- Pacer

Pacer::Pacer(uint64_t rate_bps, uint64_t burst_bytes, uint64_t now_ns)
    : rate_bps_(std::max(rate_bps, kMinRateBps)),
      burst_bytes_(burst_bytes),
      credit_bits_((int64_t)(burst_bytes * 8)),
      last_ns_(now_ns)
{
}

void Pacer::Refill(uint64_t now_ns)
{
	if (now_ns <= last_ns_)
		return;
	uint64_t dt = now_ns - last_ns_;
	last_ns_ = now_ns;
	const int64_t cap = (int64_t)(burst_bytes_ * 8);
	// dt * rate overflows 64 bits after a few seconds: 128-bit product.
	unsigned __int128 add128 = (unsigned __int128)dt * rate_bps_ / kNsPerSec;
	uint64_t add = add128 > (unsigned __int128)cap ? (uint64_t)cap : (uint64_t)add128;
	if (add >= (uint64_t)cap || credit_bits_ + (int64_t)add >= cap)
		credit_bits_ = cap;
	else
		credit_bits_ += (int64_t)add;
}

void Pacer::SetRate(uint64_t rate_bps, uint64_t now_ns)
{
	Refill(now_ns);	// credit earned so far was earned at the old rate
	rate_bps_ = std::max(rate_bps, kMinRateBps);
}

uint64_t Pacer::DelayNs(uint64_t bytes, uint64_t now_ns)
{
	Refill(now_ns);
	// A message larger than the burst may leave once the bucket is full.
	int64_t need = (int64_t)(std::min(bytes, burst_bytes_) * 8);
	if (credit_bits_ >= need)
		return 0;
	unsigned __int128 missing = (uint64_t)(need - credit_bits_);
	return (uint64_t)((missing * kNsPerSec + rate_bps_ - 1) / rate_bps_);
}

void Pacer::Consume(uint64_t bytes, uint64_t now_ns)
{
	Refill(now_ns);
	credit_bits_ -= (int64_t)(bytes * 8);
}

// ---------------------------------------------------------------- control

bool ParseControl(const std::string &s, Control *c)
{
	if (s == "fixed")
		*c = Control::kFixed;
	else if (s == "dcqcn")
		*c = Control::kDcqcn;
	else if (s == "mltcp_dcqcn")
		*c = Control::kMltcpDcqcn;
	else
		return false;
	return true;
}

const char *ControlName(Control c)
{
	switch (c) {
	case Control::kFixed: return "fixed";
	case Control::kDcqcn: return "dcqcn";
	case Control::kMltcpDcqcn: return "mltcp_dcqcn";
	}
	return "?";
}

QpControl::QpControl(Control mode, const mltcp::Params &p, const mltcp::DcqcnParams &dp,
		     uint64_t fixed_rate_bps, uint64_t burst_bytes, uint64_t now_ns, uint32_t seed)
    : mode_(mode),
      params_(p),
      dcqcn_params_(dp),
      pacer_(mode == Control::kFixed ? fixed_rate_bps : dp.raw().line_rate_bps,
	     burst_bytes, now_ns),
      fixed_rate_bps_(fixed_rate_bps)
{
	mltcp_dcqcn_flow_init(&flow_, &dcqcn_params_.raw(), mode == Control::kMltcpDcqcn,
			      us_of(now_ns));
	mltcp_iter_seed(&flow_.it, &params_.raw(), seed);
	stats_.min_rate_bps = RateBps();
}

uint32_t QpControl::Gain() const
{
	return mltcp_dcqcn_flow_gain(&flow_, &params_.raw());
}

uint64_t QpControl::RateBps() const
{
	return mode_ == Control::kFixed ? fixed_rate_bps_ : mltcp_dcqcn_flow_rate_bps(&flow_);
}

void QpControl::UpdatePacer(uint64_t now_ns)
{
	uint64_t r = RateBps();
	if (r != pacer_.rate_bps())
		pacer_.SetRate(r, now_ns);
	stats_.min_rate_bps = std::min(stats_.min_rate_bps, r);
}

void QpControl::Tick(uint64_t now_ns)
{
	if (mode_ == Control::kFixed)
		return;
	mltcp_dcqcn_flow_advance(&flow_, &params_.raw(), &dcqcn_params_.raw(), us_of(now_ns));
	UpdatePacer(now_ns);
}

uint64_t QpControl::DelayNs(uint64_t bytes, uint64_t now_ns)
{
	Tick(now_ns);
	return pacer_.DelayNs(bytes, now_ns);
}

void QpControl::OnPost(uint64_t bytes, bool queue_empty, uint64_t now_ns)
{
	if (queue_empty &&
	    mltcp_dcqcn_flow_on_tx_start(&flow_, &params_.raw(), &dcqcn_params_.raw(),
					 completed_total_, us_of(now_ns), srtt_us_))
		stats_.iterations = flow_.it.iterations;
	pacer_.Consume(bytes, now_ns);
	stats_.posted_bytes += bytes;
	if (mode_ != Control::kFixed) {
		mltcp_dcqcn_flow_on_sent(&flow_, &params_.raw(), &dcqcn_params_.raw(), bytes,
					 us_of(now_ns));
		UpdatePacer(now_ns);
	}
}

void QpControl::OnCompletion(uint64_t bytes, uint64_t now_ns)
{
	completed_total_ += bytes;
	stats_.completed_bytes += bytes;
	mltcp_dcqcn_flow_on_ack(&flow_, completed_total_, us_of(now_ns));
}

void QpControl::OnCnps(uint64_t n, uint64_t now_ns)
{
	stats_.cnps += n;
	if (mode_ == Control::kFixed || n == 0)
		return;
	// Several CNPs counted in one poll are several reaction-point events.
	mltcp_dcqcn_flow_on_cnps(&flow_, &dcqcn_params_.raw(), n, us_of(now_ns));
	stats_.rate_cuts += n;
	UpdatePacer(now_ns);
}

void QpControl::Hint(uint64_t bytes, uint64_t now_ns)
{
	mltcp_dcqcn_flow_hint(&flow_, &params_.raw(), &dcqcn_params_.raw(), completed_total_,
			      bytes, us_of(now_ns));
	stats_.hinted = flow_.it.hinted;
	stats_.iterations = flow_.it.iterations;
}

}  // namespace mltcp_rdma
