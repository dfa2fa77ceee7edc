/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * mltcp_dcqcn.h - DCQCN (Zhu et al., SIGCOMM 2015) in integer arithmetic,
 * with the MLTCP gain scaling its additive and hyper increase steps.
 *
 * Reaction point (sender, per flow/QP):
 *   CNP:          alpha <- (1-g) alpha + g;  R_T <- R_C;
 *                 R_C <- max(R_C (1 - alpha/2), R_min);  stages reset
 *   alpha timer:  alpha <- (1-g) alpha, per period without CNP
 *   increase:     on each rate-timer expiry and each byte-counter expiry
 *                 fast recovery while both stage counters <= F,
 *                 hyper increase (R_T += F_mltcp * R_HAI) when both are > F,
 *                 additive increase (R_T += F_mltcp * R_AI) otherwise;
 *                 then R_T <- min(R_T, line rate), R_C <- (R_T + R_C) / 2.
 * Notification point (receiver): at most one CNP per interval per flow.
 *
 * Differs from the paper's pseudo-code: alpha is kept with 20 fractional bits
 * instead of 10 (with 10 bits and g = 1/256, alpha - alpha/256 stops decaying
 * below 0.25); the hyper increase adds a constant R_HAI per step, as NIC
 * firmware and the common ns-3 model do; many elapsed timer periods are
 * applied in closed form (alpha) or up to MLTCP_DCQCN_MAX_CATCHUP steps
 * (rate), so every call is bounded.
 */
#ifndef MLTCP_DCQCN_H
#define MLTCP_DCQCN_H

#include "mltcp_compat.h"
#include "mltcp_params.h"
#include "mltcp_dcqcn_params.h"

#define MLTCP_DCQCN_ALPHA_SHIFT		20
#define MLTCP_DCQCN_ALPHA_ONE		(1U << MLTCP_DCQCN_ALPHA_SHIFT)
#define MLTCP_DCQCN_MAX_CATCHUP		64U	/* increase steps per call */

struct mltcp_dcqcn_rp {
	__u64 rate_cur_bps;	/* R_C: the rate the sender paces at */
	__u64 rate_target_bps;	/* R_T */
	__u64 bytes_since_inc;	/* bytes toward the next byte-counter expiry */
	__u64 last_alpha_us;	/* start of the current alpha period */
	__u64 last_rate_us;	/* start of the current rate-timer period */
	__u32 alpha;		/* ALPHA units */
	__u32 timer_stage;	/* rate-timer expiries since the last cut */
	__u32 byte_stage;	/* byte-counter expiries since the last cut */
	__u32 cnps;		/* CNPs received (statistic) */
};

struct mltcp_dcqcn_np {
	__u64 last_cnp_us;
	__u32 sent_any;
	__u32 pad;
};

MLTCP_INLINE void mltcp_dcqcn_rp_init(struct mltcp_dcqcn_rp *rp,
				      const struct mltcp_dcqcn_params *p,
				      __u64 now_us)
{
	rp->rate_cur_bps = p->line_rate_bps;
	rp->rate_target_bps = p->line_rate_bps;
	rp->bytes_since_inc = 0;
	rp->last_alpha_us = now_us;
	rp->last_rate_us = now_us;
	rp->alpha = MLTCP_DCQCN_ALPHA_ONE;
	rp->timer_stage = 0;
	rp->byte_stage = 0;
	rp->cnps = 0;
}

/* alpha * (1 - 1/g_inv)^n, by squaring: at most 64 rounds for any n. */
MLTCP_INLINE __u32 mltcp_dcqcn_alpha_decay(__u32 alpha, __u32 g_inv, __u64 n)
{
	__u64 one = MLTCP_DCQCN_ALPHA_ONE;
	__u64 base, factor = one;
	__u32 i;

	if (g_inv == 0)
		return alpha;
	base = one - MLTCP_DIV64(one, (__u64)g_inv);
	for (i = 0; i < 64 && n; i++) {
		if (n & 1)
			factor = (factor * base) >> MLTCP_DCQCN_ALPHA_SHIFT;
		base = (base * base) >> MLTCP_DCQCN_ALPHA_SHIFT;
		n >>= 1;
	}
	return (__u32)(((__u64)alpha * factor) >> MLTCP_DCQCN_ALPHA_SHIFT);
}

/* A step of `step_bps` scaled by the MLTCP gain (GAIN units). */
MLTCP_INLINE __u64 mltcp_dcqcn_scaled_step(__u64 step_bps, __u32 gain)
{
	return mltcp_mul_sat_u64(step_bps, gain) >> MLTCP_GAIN_SHIFT;
}

/* One rate-increase event (timer or byte counter, after its stage++). */
MLTCP_INLINE void mltcp_dcqcn_increase(struct mltcp_dcqcn_rp *rp,
				       const struct mltcp_dcqcn_params *p,
				       __u32 gain)
{
	__u64 rt = rp->rate_target_bps;
	__u32 fr = p->fr_stages;

	if (rp->timer_stage > fr && rp->byte_stage > fr)
		rt = mltcp_add_sat_u64(rt, mltcp_dcqcn_scaled_step(p->rhai_bps, gain));
	else if (rp->timer_stage > fr || rp->byte_stage > fr)
		rt = mltcp_add_sat_u64(rt, mltcp_dcqcn_scaled_step(p->rai_bps, gain));
	rp->rate_target_bps = mltcp_min_u64(rt, p->line_rate_bps);
	rp->rate_cur_bps = (rp->rate_target_bps >> 1) + (rp->rate_cur_bps >> 1) +
			   (rp->rate_target_bps & rp->rate_cur_bps & 1);
	rp->rate_cur_bps = mltcp_clamp_u64(rp->rate_cur_bps, p->min_rate_bps,
					   p->line_rate_bps);
}

/* Number of whole periods from *start to now; advances *start by them. */
MLTCP_INLINE __u64 mltcp_dcqcn_periods(__u64 *start, __u64 now_us,
				       __u32 period_us)
{
	__u64 n;

	if (period_us == 0 || now_us <= *start)
		return 0;	/* clock went backwards: no time passed */
	n = MLTCP_DIV64(now_us - *start, (__u64)period_us);
	*start += n * period_us;
	return n;
}

/*
 * Let time pass: alpha decay and rate-timer increases up to now_us.  `gain`
 * scales every timer increase since the last call, so it must be the gain
 * that held over that time: a datapath advances before anything resets the
 * gain (an iteration hint, a detected boundary), or the idle time before a
 * new iteration is scaled by the new iteration's F(0) instead of the ended
 * one's F (docs/design.md, "DCQCN with MLTCP").
 */
MLTCP_INLINE void mltcp_dcqcn_advance(struct mltcp_dcqcn_rp *rp,
				      const struct mltcp_dcqcn_params *p,
				      __u64 now_us, __u32 gain)
{
	__u64 n = mltcp_dcqcn_periods(&rp->last_alpha_us, now_us,
				      p->alpha_timer_us);
	__u32 i;

	if (n)
		rp->alpha = mltcp_dcqcn_alpha_decay(rp->alpha, p->g_inv, n);

	n = mltcp_dcqcn_periods(&rp->last_rate_us, now_us, p->rate_timer_us);
	n = mltcp_min_u64(n, MLTCP_DCQCN_MAX_CATCHUP);
	for (i = 0; i < MLTCP_DCQCN_MAX_CATCHUP && i < n; i++) {
		if (rp->timer_stage < MLTCP_U32_MAX)
			rp->timer_stage++;
		mltcp_dcqcn_increase(rp, p, gain);
	}
}

/* The sender transmitted `bytes`: byte-counter increases. */
MLTCP_INLINE void mltcp_dcqcn_on_sent(struct mltcp_dcqcn_rp *rp,
				      const struct mltcp_dcqcn_params *p,
				      __u64 bytes, __u32 gain)
{
	__u64 bc = p->byte_counter ? p->byte_counter : 1;
	__u32 i;

	rp->bytes_since_inc = mltcp_add_sat_u64(rp->bytes_since_inc, bytes);
	for (i = 0; i < MLTCP_DCQCN_MAX_CATCHUP && rp->bytes_since_inc >= bc; i++) {
		rp->bytes_since_inc -= bc;
		if (rp->byte_stage < MLTCP_U32_MAX)
			rp->byte_stage++;
		mltcp_dcqcn_increase(rp, p, gain);
	}
	if (rp->bytes_since_inc >= bc)	/* beyond the per-call bound */
		rp->bytes_since_inc -= MLTCP_DIV64(rp->bytes_since_inc, bc) * bc;
}

/* A CNP arrived: update alpha, remember the target, cut the rate. */
MLTCP_INLINE void mltcp_dcqcn_on_cnp(struct mltcp_dcqcn_rp *rp,
				     const struct mltcp_dcqcn_params *p,
				     __u64 now_us)
{
	__u64 alpha = rp->alpha;
	__u64 cut;

	if (p->g_inv)
		alpha = alpha - MLTCP_DIV64(alpha, (__u64)p->g_inv) +
			MLTCP_DIV64((__u64)MLTCP_DCQCN_ALPHA_ONE, (__u64)p->g_inv);
	rp->alpha = (__u32)mltcp_min_u64(alpha, MLTCP_DCQCN_ALPHA_ONE);

	rp->rate_target_bps = rp->rate_cur_bps;
	/* rate <= 2^41 and alpha <= 2^20: the product fits; saturate anyway. */
	cut = mltcp_mul_sat_u64(rp->rate_cur_bps, rp->alpha) >>
	      (MLTCP_DCQCN_ALPHA_SHIFT + 1);
	rp->rate_cur_bps = mltcp_max_u64(rp->rate_cur_bps - cut, p->min_rate_bps);

	rp->timer_stage = 0;
	rp->byte_stage = 0;
	rp->bytes_since_inc = 0;
	rp->last_alpha_us = now_us;
	rp->last_rate_us = now_us;
	if (rp->cnps < MLTCP_U32_MAX)
		rp->cnps++;
}

MLTCP_INLINE void mltcp_dcqcn_np_init(struct mltcp_dcqcn_np *np)
{
	np->last_cnp_us = 0;
	np->sent_any = 0;
	np->pad = 0;
}

/* A CE-marked packet arrived: returns 1 if a CNP should be sent now. */
MLTCP_INLINE int mltcp_dcqcn_np_on_ce(struct mltcp_dcqcn_np *np,
				      const struct mltcp_dcqcn_params *p,
				      __u64 now_us)
{
	if (np->sent_any && now_us >= np->last_cnp_us &&
	    now_us - np->last_cnp_us < p->cnp_interval_us)
		return 0;
	np->last_cnp_us = now_us;
	np->sent_any = 1;
	return 1;
}

#endif /* MLTCP_DCQCN_H */
