// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// cc.cpp - the DPDK transport's congestion control (cc.h): the transport's
// events mapped to the policy core's calls, in the order the kernel's hooks
// make them (tcp_reno_cong_avoid, cubictcp_cong_avoid, .ssthresh at a
// loss, bictcp_state(TCP_CA_Loss) at an RTO).
#include "cc.h"

#include <algorithm>

namespace mltcp_dpdk {

namespace {

// tcp_cwnd_restart(): halve per idle RTO, not below the initial window.
uint32_t RestartCwnd(uint32_t cwnd, uint32_t init, uint32_t rtos)
{
	uint32_t restart = std::min(init, cwnd);
	while (rtos-- && cwnd > restart)
		cwnd >>= 1;
	return std::max(cwnd, restart);
}

}  // namespace

CongestionControl::CongestionControl(const CcConfig &c, uint64_t now_ns, uint32_t seed)
	: cfg_(c), rate_based_(CcIsRateBased(c.kind)), tracking_(CcIsMltcp(c.kind)),
	  params_(c.mltcp)
{
	if (!tracking_)
		params_.enabled = 0;	// the core's neutral gain: the base algorithm
	mltcp_params_derive(&params_);	// whoever filled c.mltcp, the norms match it
	mltcp_window_init(&win_, c.initial_cwnd, c.max_cwnd);
	switch (c.kind) {
	case CcKind::kReno:
	case CcKind::kMltcp:
		base_ = Base::kReno;
		mltcp_reno_flow_init(&reno_, 0, Us32(now_ns));
		break;
	case CcKind::kCubic:
	case CcKind::kMltcpCubic:
		base_ = Base::kCubic;
		mltcp_cubic_flow_init(&cubic_, 0, Us32(now_ns), 0);
		break;
	case CcKind::kDcqcn:
	case CcKind::kMltcpDcqcn:
		base_ = Base::kDcqcn;
		mltcp_dcqcn_flow_init(&dcqcn_, &cfg_.dcqcn, tracking_, now_ns / 1000);
		break;
	}
	mltcp_iter_seed(&iter(), &params_, seed);
}

const mltcp_iter &CongestionControl::iter() const
{
	switch (base_) {
	case Base::kReno:
		return reno_.it;
	case Base::kCubic:
		return cubic_.it;
	case Base::kDcqcn:
		break;
	}
	return dcqcn_.it;
}

mltcp_iter &CongestionControl::iter()
{
	return const_cast<mltcp_iter &>(static_cast<const CongestionControl *>(this)->iter());
}

void CongestionControl::OnAck(const AckSample &s)
{
	const uint32_t now_us = Us32(s.now_ns);
	if (base_ == Base::kDcqcn) {
		mltcp_dcqcn_flow_on_ack(&dcqcn_, s.acked_bytes_total, s.now_ns / 1000);
		return;
	}
	if (tracking_)
		mltcp_iter_on_ack(&iter(), s.acked_bytes_total, now_us);
	if (base_ == Base::kCubic) {
		mltcp_cubic_rtt_sample rs{};
		rs.rtt_us = s.rtt_us;
		rs.now_us = now_us;
		rs.cwnd = win_.cwnd;
		rs.snd_una = s.snd_una;
		rs.snd_nxt = s.snd_nxt;
		rs.in_slow_start = mltcp_window_in_slow_start(&win_);
		// No TSO here: no cushion; the sender paces only in the rate modes.
		if (mltcp_bictcp_on_rtt(&cubic_.bic, &rs))
			win_.ssthresh = win_.cwnd;	// HyStart found the exit
	}
	if (!s.cwnd_limited || s.in_recovery)
		return;
	if (base_ == Base::kReno)
		mltcp_reno_flow_cong_avoid(&reno_, &params_, &win_, s.acked_pkts, s.mss_bytes);
	else
		mltcp_cubic_flow_cong_avoid(&cubic_, &params_, &win_, s.acked_pkts, now_us,
					    s.mss_bytes);
}

void CongestionControl::OnLoss(uint64_t)
{
	switch (base_) {
	case Base::kReno:
		win_.ssthresh = mltcp_reno_flow_ssthresh(&reno_, &params_, win_.cwnd);
		break;
	case Base::kCubic:
		win_.ssthresh = mltcp_cubic_flow_ssthresh(&cubic_, &params_, win_.cwnd);
		break;
	case Base::kDcqcn:
		return;	// DCQCN reacts to CNPs only
	}
	win_.cwnd = win_.ssthresh;
	win_.cwnd_cnt = 0;
}

void CongestionControl::OnRto(uint64_t now_ns, uint32_t snd_nxt)
{
	if (base_ == Base::kDcqcn)
		return;
	OnLoss(now_ns);
	win_.cwnd = 1;
	if (base_ == Base::kCubic)
		mltcp_bictcp_on_rto(&cubic_.bic, Us32(now_ns), snd_nxt);
}

void CongestionControl::OnCnp(uint64_t now_ns)
{
	if (base_ == Base::kDcqcn)
		mltcp_dcqcn_flow_on_cnps(&dcqcn_, &cfg_.dcqcn, 1, now_ns / 1000);
}

void CongestionControl::OnSent(uint64_t bytes, uint64_t now_ns)
{
	if (base_ == Base::kDcqcn)
		mltcp_dcqcn_flow_on_sent(&dcqcn_, &params_, &cfg_.dcqcn, bytes, now_ns / 1000);
}

void CongestionControl::Advance(uint64_t now_ns)
{
	if (base_ == Base::kDcqcn)
		mltcp_dcqcn_flow_advance(&dcqcn_, &params_, &cfg_.dcqcn, now_ns / 1000);
}

void CongestionControl::RestartAfterIdle(uint32_t rtos)
{
	if (base_ == Base::kDcqcn)
		return;
	win_.ssthresh = std::max(win_.ssthresh, (win_.cwnd >> 1) + (win_.cwnd >> 2));	// tcp_current_ssthresh()
	win_.cwnd = RestartCwnd(win_.cwnd, cfg_.initial_cwnd, rtos);
	win_.cwnd_cnt = 0;
	if (base_ == Base::kCubic)
		cubic_.bic.epoch_start = 0;	// a new cubic epoch from the restart window
}

void CongestionControl::OnTxStart(const TxStartSample &s)
{
	const uint32_t now_us = Us32(s.now_ns);
	switch (base_) {
	case Base::kDcqcn:
		mltcp_dcqcn_flow_on_tx_start(&dcqcn_, &params_, &cfg_.dcqcn, s.acked_bytes_total,
					     s.now_ns / 1000, s.srtt_us);
		return;
	case Base::kCubic:
		mltcp_cubic_flow_tx_start(&cubic_, now_us);
		break;
	case Base::kReno:
		break;
	}
	if (!tracking_)
		return;
	mltcp_iter_on_tx_start(&iter(), &params_, s.acked_bytes_total, now_us, s.srtt_us);
	mltcp_window_start(&win_, base_ == Base::kCubic ?
			   mltcp_cubic_flow_start_cwnd(&cubic_, &params_, win_.cwnd, s.mss_bytes,
						       s.min_rtt_us, s.srtt_us, s.acked_bytes_total,
						       s.received_bytes_total, nullptr) :
			   mltcp_reno_flow_start_cwnd(&reno_, &params_, win_.cwnd, s.mss_bytes,
						      s.min_rtt_us, s.srtt_us, s.acked_bytes_total,
						      s.received_bytes_total, nullptr));
}

void CongestionControl::Hint(uint64_t acked_total, uint64_t bytes, uint64_t now_ns)
{
	if (base_ == Base::kDcqcn)	// plain DCQCN: only time passes
		mltcp_dcqcn_flow_hint(&dcqcn_, &params_, &cfg_.dcqcn, acked_total, bytes,
				      now_ns / 1000);
	else if (tracking_)
		mltcp_iter_hint(&iter(), acked_total, bytes, Us32(now_ns));
}

uint32_t CongestionControl::gain() const
{
	if (!tracking_)
		return MLTCP_GAIN_ONE;
	switch (base_) {
	case Base::kReno:
		return mltcp_reno_gain(&iter(), &params_);
	case Base::kCubic:
		return mltcp_cubic_gain(&iter(), &params_);
	case Base::kDcqcn:
		break;
	}
	return mltcp_dcqcn_flow_gain(&dcqcn_, &params_);
}

CcStats CongestionControl::Stats() const
{
	CcStats s;
	const mltcp_iter &it = iter();
	s.iterations = it.iterations;
	s.hinted = it.hinted;
	s.iter_bytes = it.iter_bytes;
	s.bytes_per_iter = it.bytes_per_iter;
	s.ratio = tracking_ ? mltcp_iter_ratio(&it) : MLTCP_RATIO_NONE;
	s.gain = gain();
	s.cwnd = cwnd();
	s.rate_bps = rate_bps();
	s.rate_target_bps = base_ == Base::kDcqcn ? dcqcn_.rp.rate_target_bps : 0;
	s.cnps = base_ == Base::kDcqcn ? dcqcn_.rp.cnps : 0;
	return s;
}

}  // namespace mltcp_dpdk
