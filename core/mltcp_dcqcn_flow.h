/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * mltcp_dcqcn_flow.h - one DCQCN flow (a QP) with MLTCP: the iteration
 * tracker, the reaction point of mltcp_dcqcn.h, and the order in which
 * they see events.  The DPDK transport's rate modes, the RDMA datapath and
 * the simulator's RoCE flow all run it; none calls the reaction point
 * directly.
 *
 * The ordering rule: the reaction point's timers (alpha decay, rate-timer
 * increases) advance under the gain that held while the time passed.  So
 * an event that changes F, a hint or a detected boundary, and a
 * transmission (which counts towards the byte counter at the current F)
 * first let time pass up to now under the current F.  Without it the idle
 * time before a new iteration would be scaled by the new iteration's F(0)
 * instead of the ended one's F(1) (docs/design.md, "DCQCN with MLTCP").
 * A CNP cuts the rate the sender is pacing at: it restarts the timers, and
 * periods since the flow's last event are not applied first (a sender that
 * paces slowly would otherwise gain, between two packets, increases that it
 * never sent at, and cut from a rate it never used).
 *
 * F is computed exactly on every event, not through the per-ack cache:
 * the cache's last step of an iteration is F at 63/64 of it, and the whole
 * idle time after the iteration would be scaled by that instead of F(1).
 * A flow with mltcp = 0 is plain DCQCN: F is always 1 and no tracking runs.
 */
#ifndef MLTCP_DCQCN_FLOW_H
#define MLTCP_DCQCN_FLOW_H

#include "mltcp_compat.h"
#include "mltcp_params.h"
#include "mltcp_iter.h"
#include "mltcp_window.h"
#include "mltcp_dcqcn.h"

struct mltcp_dcqcn_flow {
	struct mltcp_iter it;
	struct mltcp_dcqcn_rp rp;
	__u32 mltcp;		/* 1: F scales R_AI and R_HAI; 0: plain DCQCN */
	__u32 pad;
};

MLTCP_INLINE void mltcp_dcqcn_flow_init(struct mltcp_dcqcn_flow *f,
					const struct mltcp_dcqcn_params *dp,
					__u32 mltcp, __u64 now_us)
{
	mltcp_iter_init(&f->it, 0, (__u32)now_us);
	mltcp_dcqcn_rp_init(&f->rp, dp, now_us);
	f->mltcp = mltcp ? 1 : 0;
	f->pad = 0;
}

/* The gain that scales the increase steps now. */
MLTCP_INLINE __u32 mltcp_dcqcn_flow_gain(const struct mltcp_dcqcn_flow *f,
					 const struct mltcp_params *p)
{
	return f->mltcp ? mltcp_gain(&f->it, p) : MLTCP_GAIN_ONE;
}

/* Let time pass up to now_us under the current gain. */
MLTCP_INLINE void mltcp_dcqcn_flow_advance(struct mltcp_dcqcn_flow *f,
					   const struct mltcp_params *p,
					   const struct mltcp_dcqcn_params *dp,
					   __u64 now_us)
{
	mltcp_dcqcn_advance(&f->rp, dp, now_us, mltcp_dcqcn_flow_gain(f, p));
}

/* `bytes` left the sender: byte-counter increases. */
MLTCP_INLINE void mltcp_dcqcn_flow_on_sent(struct mltcp_dcqcn_flow *f,
					   const struct mltcp_params *p,
					   const struct mltcp_dcqcn_params *dp,
					   __u64 bytes, __u64 now_us)
{
	mltcp_dcqcn_flow_advance(f, p, dp, now_us);
	mltcp_dcqcn_on_sent(&f->rp, dp, bytes, mltcp_dcqcn_flow_gain(f, p));
}

/* `n` CNPs arrived (several counted in one poll are several events; at
 * most MLTCP_DCQCN_MAX_CATCHUP are applied per call).  The cut applies to
 * the rate in use; see the ordering rule above. */
MLTCP_INLINE void mltcp_dcqcn_flow_on_cnps(struct mltcp_dcqcn_flow *f,
					   const struct mltcp_dcqcn_params *dp,
					   __u64 n, __u64 now_us)
{
	__u32 i;

	for (i = 0; i < MLTCP_DCQCN_MAX_CATCHUP && i < n; i++)
		mltcp_dcqcn_on_cnp(&f->rp, dp, now_us);
}

/* Progress: the flow's cumulative acknowledged (or, without acks, sent)
 * bytes reached acked_total. */
MLTCP_INLINE void mltcp_dcqcn_flow_on_ack(struct mltcp_dcqcn_flow *f,
					  __u64 acked_total, __u64 now_us)
{
	if (f->mltcp)
		mltcp_iter_on_ack(&f->it, acked_total, (__u32)now_us);
}

/* Sending resumes with nothing in flight; returns 1 if this started an
 * iteration by detection. */
MLTCP_INLINE int mltcp_dcqcn_flow_on_tx_start(struct mltcp_dcqcn_flow *f,
					      const struct mltcp_params *p,
					      const struct mltcp_dcqcn_params *dp,
					      __u64 acked_total, __u64 now_us,
					      __u32 srtt_us)
{
	mltcp_dcqcn_flow_advance(f, p, dp, now_us);
	if (!f->mltcp)
		return 0;
	return mltcp_iter_on_tx_start(&f->it, p, acked_total, (__u32)now_us, srtt_us);
}

/* The application announces "an iteration of `bytes` starts now".
 * A hinted QP keeps its own ratio from the first hint: the first
 * iteration's seed (mltcp_iter_seed), which helps window-based flows, slows
 * DCQCN's convergence (docs/design.md, "The seed and DCQCN"), so a hint
 * turns it off; a QP that detects its iterations keeps it. */
MLTCP_INLINE void mltcp_dcqcn_flow_hint(struct mltcp_dcqcn_flow *f,
					const struct mltcp_params *p,
					const struct mltcp_dcqcn_params *dp,
					__u64 acked_total, __u64 bytes, __u64 now_us)
{
	mltcp_dcqcn_flow_advance(f, p, dp, now_us);
	if (!f->mltcp)
		return;
	f->it.flags &= ~MLTCP_F_SEEDED;
	mltcp_iter_hint(&f->it, acked_total, bytes, (__u32)now_us);
}

/* An idle QP released its rate limiter (NICs do): back to line rate. */
MLTCP_INLINE void mltcp_dcqcn_flow_restart_rate(struct mltcp_dcqcn_flow *f,
						const struct mltcp_dcqcn_params *dp,
						__u64 now_us)
{
	mltcp_dcqcn_rp_init(&f->rp, dp, now_us);
}

MLTCP_INLINE __u64 mltcp_dcqcn_flow_rate_bps(const struct mltcp_dcqcn_flow *f)
{
	return f->rp.rate_cur_bps;
}

#endif /* MLTCP_DCQCN_FLOW_H */
