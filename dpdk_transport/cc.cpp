// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// cc.cpp - the congestion-control adapters (cc.h).  Reno follows
// tcp_cong.c (tcp_reno_cong_avoid, tcp_cong_avoid_ai); CUBIC follows
// tcp_cubic.c (bictcp_update, bictcp_recalc_ssthresh) with time in
// milliseconds as its jiffies, std::cbrt instead of the kernel's table-based
// cube root, and without HyStart (slow start exits on the first loss).
// The MLTCP variants scale the growth by F and, at a loss, keep beta * F of
// the window (LossSsthresh, core/mltcp_window.h).
#include "cc.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace mltcp_dpdk {

namespace {

struct CcName_ {
	const char *name;
	CcKind kind;
};
constexpr CcName_ kCcNames[] = {
	{"reno", CcKind::kReno},   {"mltcp", CcKind::kMltcp},
	{"cubic", CcKind::kCubic}, {"mltcp_cubic", CcKind::kMltcpCubic},
	{"dcqcn", CcKind::kDcqcn}, {"mltcp_dcqcn", CcKind::kMltcpDcqcn},
};

bool IsMltcp(CcKind k)
{
	return k == CcKind::kMltcp || k == CcKind::kMltcpCubic || k == CcKind::kMltcpDcqcn;
}

// tcp_cwnd_restart(): halve per idle RTO, not below the initial window.
uint32_t RestartCwnd(uint32_t cwnd, uint32_t init, uint32_t rtos)
{
	uint32_t restart = std::min(init, cwnd);
	while (rtos-- && cwnd > restart)
		cwnd >>= 1;
	return std::max(cwnd, restart);
}

// ---------------------------------------------------------------- Reno
class Reno : public CongestionControl {
      public:
	Reno(const CcConfig &c, uint64_t now) : CongestionControl(c, now), cwnd_(c.initial_cwnd) {}

	void OnAck(const AckSample &s) override
	{
		TrackAck(s.acked_bytes_total, s.now_ns);
		if (!s.cwnd_limited || s.in_recovery)
			return;
		uint32_t acked = s.acked_pkts;
		if (cwnd_ < ssthresh_) {	// slow start: never scaled
			uint32_t inc = std::min(acked, ssthresh_ - cwnd_);
			cwnd_ += inc;
			acked -= inc;
			if (!acked)
				return Clamp();
		}
		uint32_t w = tracking() ? mltcp_reno_ai_w_cached(&cache_, &it_, &cfg_.mltcp, cwnd_)
					: cwnd_;
		CongAvoidAi(w, acked);
	}
	void OnLoss(uint64_t) override
	{
		ssthresh_ = LossSsthresh(cwnd_, MLTCP_RENO_BETA);
		cwnd_ = ssthresh_;
		cwnd_cnt_ = 0;
	}
	void OnRto(uint64_t) override
	{
		ssthresh_ = LossSsthresh(cwnd_, MLTCP_RENO_BETA);
		cwnd_ = 1;
		cwnd_cnt_ = 0;
	}
	uint32_t cwnd() const override { return cwnd_; }
	void RestartAfterIdle(uint32_t rtos) override
	{
		ssthresh_ = std::max(ssthresh_, (cwnd_ >> 1) + (cwnd_ >> 2));	// tcp_current_ssthresh()
		cwnd_ = RestartCwnd(cwnd_, cfg_.initial_cwnd, rtos);
		cwnd_cnt_ = 0;
	}

      private:
	// tcp_cong_avoid_ai(): one segment per w acked.
	void CongAvoidAi(uint32_t w, uint32_t acked)
	{
		if (cwnd_cnt_ >= w) {
			cwnd_cnt_ = 0;
			cwnd_++;
		}
		cwnd_cnt_ += acked;
		if (cwnd_cnt_ >= w) {
			uint32_t delta = cwnd_cnt_ / w;
			cwnd_cnt_ -= delta * w;
			cwnd_ += delta;
		}
		Clamp();
	}
	void Clamp() { cwnd_ = std::min(cwnd_, cfg_.max_cwnd); }

	uint32_t cwnd_;
	uint32_t ssthresh_ = UINT32_MAX;
	uint32_t cwnd_cnt_ = 0;
};

// ---------------------------------------------------------------- CUBIC
constexpr uint32_t kBictcpBetaScale = 1024;
constexpr uint32_t kBictcpHz = 10;	// BIC HZ 2^10 = 1024
constexpr uint32_t kCubicBeta = 717;	// 0.7 * 1024
constexpr uint32_t kCubicBicScale = 41;
constexpr uint32_t kCubeRttScale = kCubicBicScale * 10;
constexpr uint32_t kBetaScale = 8 * (kBictcpBetaScale + kCubicBeta) / 3 /
				(kBictcpBetaScale - kCubicBeta);
constexpr uint64_t kCubeFactor = (1ULL << (10 + 3 * kBictcpHz)) / kCubeRttScale;
constexpr uint32_t kJiffyHz = 1000;	// our jiffies are milliseconds

class Cubic : public CongestionControl {
      public:
	Cubic(const CcConfig &c, uint64_t now) : CongestionControl(c, now), cwnd_(c.initial_cwnd) {}

	void OnAck(const AckSample &s) override
	{
		TrackAck(s.acked_bytes_total, s.now_ns);
		uint32_t rtt_us = s.srtt_us ? s.srtt_us : 1;
		if (delay_min_us_ == 0 || rtt_us < delay_min_us_)
			delay_min_us_ = rtt_us;
		if (!s.cwnd_limited || s.in_recovery)
			return;
		uint32_t acked = s.acked_pkts;
		if (cwnd_ < ssthresh_) {
			uint32_t inc = std::min(acked, ssthresh_ - cwnd_);
			cwnd_ += inc;
			acked -= inc;
			if (!acked)
				return Clamp();
		}
		// MLTCP: F scales CUBIC's clock, its TCP-friendly estimate and the
		// catch-up towards the curve (core/mltcp_window.h).
		const uint32_t gain = Gain();	// neutral when not tracking
		Update(acked, Jiffies(s.now_ns), gain);
		// tcp_cong_avoid_ai(tp, ca->cnt, acked), with CUBIC's max(cnt, 2)
		const uint32_t cnt = mltcp_cubic_cnt(cnt_, gain);
		if (cwnd_cnt_ >= cnt) {
			cwnd_cnt_ = 0;
			cwnd_++;
		}
		cwnd_cnt_ += acked;
		if (cwnd_cnt_ >= cnt) {
			uint32_t delta = cwnd_cnt_ / cnt;
			cwnd_cnt_ -= delta * cnt;
			cwnd_ += delta;
		}
		Clamp();
	}
	void OnLoss(uint64_t) override
	{
		epoch_start_ = 0;
		// fast convergence
		if (cwnd_ < last_max_cwnd_)
			last_max_cwnd_ = (cwnd_ * (kBictcpBetaScale + kCubicBeta)) /
					 (2 * kBictcpBetaScale);
		else
			last_max_cwnd_ = cwnd_;
		ssthresh_ = LossSsthresh(cwnd_, kCubicBeta);	// MLTCP: 0.7 * F
		cwnd_ = ssthresh_;
		cwnd_cnt_ = 0;
	}
	void OnRto(uint64_t now) override
	{
		OnLoss(now);
		cwnd_ = 1;
		// bictcp_state(TCP_CA_Loss): reset everything but delay_min.
		last_max_cwnd_ = 0;
		epoch_start_ = 0;
		last_cwnd_ = 0;
	}
	uint32_t cwnd() const override { return cwnd_; }
	void RestartAfterIdle(uint32_t rtos) override
	{
		ssthresh_ = std::max(ssthresh_, (cwnd_ >> 1) + (cwnd_ >> 2));	// tcp_current_ssthresh()
		cwnd_ = RestartCwnd(cwnd_, cfg_.initial_cwnd, rtos);
		cwnd_cnt_ = 0;
		epoch_start_ = 0;	// a new cubic epoch from the restart window
	}

      private:
	static uint32_t Jiffies(uint64_t ns) { return (uint32_t)(ns / 1000000); }
	void Clamp() { cwnd_ = std::min(cwnd_, cfg_.max_cwnd); }

	// bictcp_update(): computes cnt_ (acks per one-packet increase), raw:
	// before CUBIC's max(cnt, 2) and MLTCP's scaling, which the caller
	// applies (scaling in place would compound over the early returns).
	void Update(uint32_t acked, uint32_t now_j, uint32_t gain)
	{
		ack_cnt_ += acked;
		if (last_cwnd_ == cwnd_ && (int32_t)(now_j - last_time_) <= (int32_t)(kJiffyHz / 32))
			return;
		if (!(epoch_start_ && now_j == last_time_)) {
			const uint32_t dt = now_j - last_time_;
			last_cwnd_ = cwnd_;
			last_time_ = now_j;
			if (epoch_start_) {
				// MLTCP: the curve advances F * dt over the last dt.
				epoch_start_ = mltcp_cubic_epoch_scale(epoch_start_, now_j, dt, gain,
								       &epoch_carry_);
				epoch_start_ = epoch_start_ ? epoch_start_ : 1;
			} else {
				epoch_carry_ = 0;
				epoch_start_ = now_j ? now_j : 1;
				ack_cnt_ = acked;
				tcp_cwnd_ = cwnd_;
				if (last_max_cwnd_ <= cwnd_) {
					bic_k_ = 0;
					origin_ = cwnd_;
				} else {
					bic_k_ = (uint32_t)std::cbrt(
						(double)(kCubeFactor * (last_max_cwnd_ - cwnd_)));
					origin_ = last_max_cwnd_;
				}
			}
			uint64_t t = (uint32_t)(now_j - epoch_start_);
			t += delay_min_us_ / 1000;	// usecs_to_jiffies
			t <<= kBictcpHz;
			t /= kJiffyHz;
			uint64_t offs = t < bic_k_ ? bic_k_ - t : t - bic_k_;
			uint32_t delta = (uint32_t)((kCubeRttScale * offs * offs * offs) >>
						    (10 + 3 * kBictcpHz));
			uint32_t target = t < bic_k_ ? origin_ - delta : origin_ + delta;
			if (target > cwnd_)
				cnt_ = cwnd_ / (target - cwnd_);
			else
				cnt_ = 100 * cwnd_;
			if (last_max_cwnd_ == 0 && cnt_ > 20)
				cnt_ = 20;
		}
		// TCP friendliness; MLTCP: the Reno estimate grows F segments per RTT
		uint32_t d = (cwnd_ * kBetaScale) >> 3;
		if (d)
			d = mltcp_cubic_friendly_acks(d, gain);
		while (d && ack_cnt_ > d) {
			ack_cnt_ -= d;
			tcp_cwnd_++;
		}
		if (tcp_cwnd_ > cwnd_) {
			uint32_t max_cnt = cwnd_ / (tcp_cwnd_ - cwnd_);
			if (cnt_ > max_cnt)
				cnt_ = max_cnt;
		}
	}

	uint32_t cwnd_;
	uint32_t ssthresh_ = UINT32_MAX;
	uint32_t cwnd_cnt_ = 0;
	uint32_t cnt_ = 2;
	uint32_t last_max_cwnd_ = 0;
	uint32_t last_cwnd_ = 0;
	uint32_t last_time_ = 0;
	uint32_t origin_ = 0;
	uint32_t bic_k_ = 0;
	uint32_t delay_min_us_ = 0;
	uint32_t epoch_start_ = 0;
	uint16_t epoch_carry_ = 0;	// MLTCP: sub-jiffy remainder of the clock scaling
	uint32_t ack_cnt_ = 0;
	uint32_t tcp_cwnd_ = 0;
};

// ---------------------------------------------------------------- DCQCN
class Dcqcn : public CongestionControl {
      public:
	Dcqcn(const CcConfig &c, uint64_t now) : CongestionControl(c, now)
	{
		mltcp_dcqcn_rp_init(&rp_, &cfg_.dcqcn, now / 1000);
	}
	void OnAck(const AckSample &s) override { TrackAck(s.acked_bytes_total, s.now_ns); }
	void OnLoss(uint64_t) override {}	// DCQCN reacts to CNPs only
	void OnRto(uint64_t) override {}
	void OnCnp(uint64_t now) override { mltcp_dcqcn_on_cnp(&rp_, &cfg_.dcqcn, now / 1000); }
	void OnSent(uint64_t bytes, uint64_t) override
	{
		mltcp_dcqcn_on_sent(&rp_, &cfg_.dcqcn, bytes, Gain());
	}
	void Advance(uint64_t now) override
	{
		mltcp_dcqcn_advance(&rp_, &cfg_.dcqcn, now / 1000, Gain());
	}
	uint32_t cwnd() const override { return cfg_.max_cwnd; }
	uint64_t rate_bps() const override { return rp_.rate_cur_bps; }
	uint32_t cnps() const { return rp_.cnps; }

      private:
	mltcp_dcqcn_rp rp_{};
};

}  // namespace

bool ParseCcKind(const std::string &name, CcKind *out)
{
	for (const auto &n : kCcNames)
		if (name == n.name) {
			*out = n.kind;
			return true;
		}
	return false;
}

const char *CcName(CcKind k)
{
	for (const auto &n : kCcNames)
		if (n.kind == k)
			return n.name;
	return "?";
}

const char *CcNameList() { return "reno, mltcp, cubic, mltcp_cubic, dcqcn, mltcp_dcqcn"; }

CongestionControl::CongestionControl(const CcConfig &c, uint64_t now_ns)
	: cfg_(c), kind_(c.kind), tracking_(IsMltcp(c.kind))
{
	mltcp_iter_init(&it_, 0, Us32(now_ns));
	mltcp_reno_cache_init(&cache_);
	mltcp_gain_cache_init(&gain_cache_);
}

void CongestionControl::OnTxStart(uint64_t acked_total, uint64_t now_ns, uint32_t srtt_us)
{
	if (!tracking_)
		return;
	Advance(now_ns);	// as in Hint(): the idle time under the ending gain
	mltcp_iter_on_tx_start(&it_, &cfg_.mltcp, acked_total, Us32(now_ns), srtt_us);
}

void CongestionControl::Hint(uint64_t acked_total, uint64_t bytes, uint64_t now_ns)
{
	if (!tracking_)
		return;
	// Rate timers ran since the last send under the ending iteration's gain:
	// apply them before the hint resets F (mltcp_dcqcn_advance()).
	Advance(now_ns);
	mltcp_iter_hint(&it_, acked_total, bytes, Us32(now_ns));
}

CcStats CongestionControl::Stats() const
{
	CcStats s;
	s.iterations = it_.iterations;
	s.hinted = it_.hinted;
	s.iter_bytes = it_.iter_bytes;
	s.bytes_per_iter = it_.bytes_per_iter;
	s.ratio = tracking_ ? mltcp_iter_ratio(&it_) : MLTCP_RATIO_NONE;
	s.gain = tracking_ ? mltcp_gain(&it_, &cfg_.mltcp) : MLTCP_GAIN_ONE;
	s.cwnd = cwnd();
	s.rate_bps = rate_bps();
	if (auto *d = dynamic_cast<const Dcqcn *>(this))
		s.cnps = d->cnps();
	return s;
}

std::unique_ptr<CongestionControl> MakeCongestionControl(const CcConfig &c, uint64_t now_ns)
{
	switch (c.kind) {
	case CcKind::kReno:
	case CcKind::kMltcp:
		return std::make_unique<Reno>(c, now_ns);
	case CcKind::kCubic:
	case CcKind::kMltcpCubic:
		return std::make_unique<Cubic>(c, now_ns);
	case CcKind::kDcqcn:
	case CcKind::kMltcpDcqcn:
		return std::make_unique<Dcqcn>(c, now_ns);
	}
	return nullptr;
}

}  // namespace mltcp_dpdk
