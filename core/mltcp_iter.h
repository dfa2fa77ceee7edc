/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * mltcp_iter.h - per-flow iteration tracking and the MLTCP gain F.
 *
 * A training flow sends a burst of bytes per iteration, separated by the
 * compute phase's silence.  The tracker counts the bytes acknowledged in the
 * current iteration, learns how many bytes an iteration has, and finds
 * iteration boundaries either from idle gaps (detection) or from an explicit
 * "an iteration of N bytes starts now" hint from the application.
 *
 * The state is 40 bytes so that it fits in inet_csk_ca() next to CUBIC's own
 * 64 bytes of state (ICSK_CA_PRIV_SIZE is 104 on 6.x kernels).
 *
 * A flow that belongs to a job with several connections (mltcp_job.h) can
 * be given the job's bytes ratio, which then replaces its own in the gain.
 *
 * Differs from the MLTCP paper, which assumes bytes per iteration is given:
 * here it is learned (robust to one odd iteration), boundaries are detected
 * with a threshold that adapts to the flow, and a flow without iteration
 * structure gets the neutral gain, i.e. behaves exactly like its base
 * algorithm.  docs/design.md describes every rule.
 */
#ifndef MLTCP_ITER_H
#define MLTCP_ITER_H

#include "mltcp_compat.h"
#include "mltcp_params.h"

/* An idle gap shorter than the threshold is an intra-phase pause (e.g. between
 * DDP buckets); the threshold stays at least this multiple of their EWMA. */
#define MLTCP_GAP_MULT		2U
#define MLTCP_GAP_EWMA_SHIFT	2	/* EWMA weight 1/4 */
/* A new iteration size within [E/2, 2E] of the estimate E updates it with
 * weight 1/4 and confirms E; anything else is an outlier, accepted only when
 * it repeats.  An E that rests on one sample is not confirmed yet, and the
 * next sample that disagrees replaces it at once: the first "iteration" of a
 * connection is often a handshake or bootstrap message, and waiting for the
 * size to repeat would keep the gain neutral for one more real iteration. */
#define MLTCP_LEARN_EWMA_SHIFT	2
#define MLTCP_LEARN_BAND	2U
/* An iteration running past this multiple of the learned size has lost its
 * structure (e.g. a bulk transfer): the gain goes back to neutral. */
#define MLTCP_OVERRUN_MULT	2U
/* A jump of the cumulative acked counter above this is taken as the counter
 * restarting (new socket state, wrap of the 32-bit snapshot), not as progress. */
#define MLTCP_MAX_ACK_DELTA	(1U << 30)
/* The seed acts for at most this many bytes of a first iteration, then the
 * flow is neutral.  A flow with no idle gap after a short exchange (a bulk
 * transfer after a request, a pipelined job without compute gaps) looks like
 * a first iteration that never ends; bounded, it runs at a random ratio for
 * 0.17 s at 200 Mbit/s instead of for its whole life (with 16 MiB, the
 * Dorylus mix's job ran seeded for all of a run).  A larger job iteration
 * keeps the head start its first 4 MiB gave it: both jobs are neutral after
 * it. */
#define MLTCP_SEED_BYTES_MAX	(4ULL << 20)
/* Largest hinted iteration size (256 TiB; the ratio is exact below 2^54). */
#define MLTCP_HINT_BYTES_MAX	(1ULL << 48)

#define MLTCP_RATIO_NONE	MLTCP_U32_MAX	/* no iteration structure */

enum mltcp_iter_flags {
	MLTCP_F_HINTED	= 1 << 0,	/* application hints drive boundaries */
	MLTCP_F_OUTLIER	= 1 << 1,	/* last closed iteration was an outlier */
	MLTCP_F_CONFIRMED = 1 << 2,	/* E agreed with a second sample (or a hint) */
	MLTCP_F_JOB	= 1 << 3,	/* job_ratio replaces the flow's own ratio */
	MLTCP_F_SEEDED	= 1 << 4,	/* seed_ratio stands in for the ratio (mltcp_iter_seed) */
	MLTCP_F_TWO_WAY	= 1 << 5,	/* this iteration carries the peer's data too (mltcp_start_cwnd) */
};

/* seed_ratio is a ratio in 1/256: RATIO units >> MLTCP_SEED_SHIFT. */
#define MLTCP_SEED_SHIFT	(MLTCP_RATIO_SHIFT - 8)

struct mltcp_iter {
	__u64 iter_bytes;	/* bytes acked since the current iteration began */
	__u64 bytes_per_iter;	/* learned or hinted iteration size, 0 = unknown */
	__u32 acked_snap;	/* low 32 bits of the acked counter at last update */
	__u32 last_active_us;	/* last ack or transmit start, wraps */
	__u32 gap_ewma_us;	/* EWMA of idle gaps that were not boundaries */
	__u32 iterations;	/* completed iterations (detected + hinted) */
	__u32 hinted;		/* of which started by a hint */
	__u8 flags;		/* enum mltcp_iter_flags */
	__u8 seed_ratio;	/* first iteration's stand-in ratio, 1/256 */
	__u16 job_ratio;	/* the job's bytes ratio, RATIO units (MLTCP_F_JOB) */
};

/* Microseconds from a to b on a wrapping 32-bit clock; 0 if b is before a. */
MLTCP_INLINE __u32 mltcp_elapsed_us(__u32 a, __u32 b)
{
	__u32 d = b - a;

	return d > (MLTCP_U32_MAX >> 1) ? 0 : d;
}

MLTCP_INLINE void mltcp_iter_init(struct mltcp_iter *it, __u64 acked_total,
				  __u32 now_us)
{
	it->iter_bytes = 0;
	it->bytes_per_iter = 0;
	it->acked_snap = (__u32)acked_total;
	it->last_active_us = now_us;
	it->gap_ewma_us = 0;
	it->iterations = 0;
	it->hinted = 0;
	it->flags = 0;
	it->seed_ratio = 0;
	it->job_ratio = 0;
}

/*
 * Fold the cumulative acked counter (the kernel's tcp_sock->bytes_acked) into
 * the current iteration; returns the new bytes.  Only the counter's low 32
 * bits are kept, so calls must come at least once per 1 GB of progress, which
 * any per-ack hook does.
 */
MLTCP_INLINE __u32 mltcp_iter_account(struct mltcp_iter *it, __u64 acked_total)
{
	__u32 delta = (__u32)acked_total - it->acked_snap;

	it->acked_snap = (__u32)acked_total;
	if (delta > MLTCP_MAX_ACK_DELTA)
		return 0;	/* counter restarted: resynchronise */
	it->iter_bytes += delta;
	/* Saturate rather than wrap (after 2^64 bytes, i.e. never in practice). */
	if (it->iter_bytes < delta)
		it->iter_bytes = MLTCP_U64_MAX;
	return delta;
}

/* An ack arrived: account its bytes; progress marks the flow active. */
MLTCP_INLINE void mltcp_iter_on_ack(struct mltcp_iter *it, __u64 acked_total,
				    __u32 now_us)
{
	if (mltcp_iter_account(it, acked_total))
		it->last_active_us = now_us;
}

/* Idle gap that separates two iterations for this flow, in microseconds. */
MLTCP_INLINE __u32 mltcp_idle_threshold_us(const struct mltcp_iter *it,
					   const struct mltcp_params *p,
					   __u32 srtt_us)
{
	__u64 by_rtt = (__u64)srtt_us * p->idle_rtt_mult;
	__u64 by_gaps = (__u64)it->gap_ewma_us * MLTCP_GAP_MULT;
	__u64 t = mltcp_max_u64(by_rtt, by_gaps);

	return (__u32)mltcp_clamp_u64(t, p->idle_min_us, p->idle_max_us);
}

/* Fold a finished iteration of size s into the learned size. */
MLTCP_INLINE void mltcp_iter_learn(struct mltcp_iter *it, __u64 s)
{
	__u64 e = it->bytes_per_iter;

	if (e == 0) {
		it->bytes_per_iter = s;
		it->flags &= ~(MLTCP_F_OUTLIER | MLTCP_F_CONFIRMED);
		return;
	}
	if (s >= (e >> 1) && s <= mltcp_mul_sat_u64(e, MLTCP_LEARN_BAND)) {
		if (s >= e)
			it->bytes_per_iter = e + ((s - e) >> MLTCP_LEARN_EWMA_SHIFT);
		else
			it->bytes_per_iter = e - ((e - s) >> MLTCP_LEARN_EWMA_SHIFT);
		it->flags &= ~MLTCP_F_OUTLIER;
		it->flags |= MLTCP_F_CONFIRMED;
	} else if (!(it->flags & MLTCP_F_CONFIRMED)) {
		it->bytes_per_iter = s;	/* one sample was all E rested on */
		it->flags &= ~MLTCP_F_OUTLIER;
	} else if (it->flags & MLTCP_F_OUTLIER) {
		it->bytes_per_iter = s;	/* two in a row: the size changed */
		it->flags &= ~MLTCP_F_OUTLIER;
	} else {
		it->flags |= MLTCP_F_OUTLIER;	/* ignore one odd iteration */
	}
}

/* Close the current iteration; an empty one is not an iteration. */
MLTCP_INLINE int mltcp_iter_close(struct mltcp_iter *it, int learn)
{
	__u64 s = it->iter_bytes;

	if (s == 0)
		return 0;
	if (learn)
		mltcp_iter_learn(it, s);
	it->iter_bytes = 0;
	if (it->iterations < MLTCP_U32_MAX)
		it->iterations++;
	return 1;
}

/*
 * Sending resumes with nothing in flight (the kernel's CA_EVENT_TX_START)
 * after an idle gap of gap_us: the flow's own (mltcp_iter_on_tx_start), or
 * less where its job was busy meanwhile (mltcp_job_member_on_tx_start).
 * Returns 1 when this starts a new iteration by detection.  Flows driven by
 * hints never detect boundaries: the hint overrides detection.
 */
MLTCP_INLINE int mltcp_iter_on_tx_start_gap(struct mltcp_iter *it,
					    const struct mltcp_params *p,
					    __u64 acked_total, __u32 now_us,
					    __u32 srtt_us, __u32 gap_us)
{
	__u32 thresh;
	int boundary = 0;

	/* Late bytes count for the ending iteration, not as activity now. */
	mltcp_iter_account(it, acked_total);
	thresh = mltcp_idle_threshold_us(it, p, srtt_us);
	if (it->flags & MLTCP_F_HINTED) {
		/* nothing to detect */
	} else if (gap_us >= thresh) {
		boundary = mltcp_iter_close(it, 1);
	} else if (it->iter_bytes != 0) {
		/* A pause inside a communication phase: adapt the threshold. */
		if (gap_us >= it->gap_ewma_us)
			it->gap_ewma_us += (gap_us - it->gap_ewma_us) >> MLTCP_GAP_EWMA_SHIFT;
		else
			it->gap_ewma_us -= (it->gap_ewma_us - gap_us) >> MLTCP_GAP_EWMA_SHIFT;
	}
	it->last_active_us = now_us;
	return boundary;
}

MLTCP_INLINE int mltcp_iter_on_tx_start(struct mltcp_iter *it,
					const struct mltcp_params *p,
					__u64 acked_total, __u32 now_us,
					__u32 srtt_us)
{
	return mltcp_iter_on_tx_start_gap(it, p, acked_total, now_us, srtt_us,
					  mltcp_elapsed_us(it->last_active_us, now_us));
}

/*
 * The application announces "an iteration of `bytes` bytes starts now".
 * bytes == 0 means the size is not known: keep the learned one.  From the
 * first hint on, the flow's boundaries come from hints only.
 */
MLTCP_INLINE void mltcp_iter_hint(struct mltcp_iter *it, __u64 acked_total,
				  __u64 bytes, __u32 now_us)
{
	mltcp_iter_account(it, acked_total);
	/* The seed (mltcp_iter_seed) acts from the first hint to the next, and
	 * not at all for a flow whose detected size was confirmed before it:
	 * that flow's first iteration is long past. */
	if ((it->flags & (MLTCP_F_HINTED | MLTCP_F_CONFIRMED)) == MLTCP_F_CONFIRMED)
		it->flags &= ~MLTCP_F_SEEDED;
	if (mltcp_iter_close(it, bytes == 0)) {
		if (it->flags & MLTCP_F_HINTED)
			it->flags &= ~MLTCP_F_SEEDED;
		if (it->hinted < MLTCP_U32_MAX)
			it->hinted++;
	}
	if (bytes) {
		it->bytes_per_iter = bytes;
		it->flags |= MLTCP_F_CONFIRMED;
	}
	it->flags |= MLTCP_F_HINTED;
	it->flags &= ~MLTCP_F_OUTLIER;
	it->last_active_us = now_us;
}

/* b / e in RATIO units, at most 1; e > 0. */
MLTCP_INLINE __u32 mltcp_ratio_of(__u64 b, __u64 e)
{
	if (b >= e)
		return MLTCP_RATIO_ONE;
	/* Common case first, with the cheaper 32-bit division. */
	if (e <= MLTCP_U32_MAX && b <= (MLTCP_U32_MAX >> MLTCP_RATIO_SHIFT))
		return ((__u32)b << MLTCP_RATIO_SHIFT) / (__u32)e;
	/* b < e here; b << 10 overflows only for b >= 2^54 bytes. */
	if (b > (MLTCP_U64_MAX >> MLTCP_RATIO_SHIFT))
		return (__u32)MLTCP_DIV64(b, (e >> MLTCP_RATIO_SHIFT) | 1);
	return (__u32)MLTCP_DIV64(b << MLTCP_RATIO_SHIFT, e);
}

/* Does the flow have iteration structure: a known size, an iteration seen
 * (or a hint), and the current one not run past 2E (a bulk transfer)? */
MLTCP_INLINE int mltcp_iter_structured(const struct mltcp_iter *it)
{
	__u64 e = it->bytes_per_iter;

	if (e == 0 || (it->iterations == 0 && !(it->flags & MLTCP_F_HINTED)))
		return 0;
	return it->iter_bytes <= mltcp_mul_sat_u64(e, MLTCP_OVERRUN_MULT);
}

/* The flow's own bytes_ratio in RATIO units, or MLTCP_RATIO_NONE without
 * structure. */
MLTCP_INLINE __u32 mltcp_iter_own_ratio(const struct mltcp_iter *it)
{
	if (!mltcp_iter_structured(it))
		return MLTCP_RATIO_NONE;
	return mltcp_ratio_of(it->iter_bytes, it->bytes_per_iter);
}

/*
 * The first iteration's stand-in ratio.  Jobs that start together are tied:
 * every flow's first real iteration has no size yet, so all of them run at
 * the neutral gain and leave each other only as far apart as chance puts
 * them (0.3-24 ms on the host testbed), and F(r) amplifies that seed by a
 * few times per iteration.  Hinted jobs are tied as well: each knows its
 * size from the first byte, so identical jobs that start together have the
 * same ratio at every moment.  So a flow acts in its first iteration at a
 * bytes ratio drawn at random for it (for a job, once for all its flows):
 * two jobs then take unequal shares from their first byte and leave that
 * iteration far apart.  The first iteration is, by detection, the one after
 * the first boundary while the size is not yet confirmed; with hints, the
 * one from the first hint to the next (mltcp_iter_hint ends it).  F averaged
 * over the draw is F averaged over an iteration, so a seeded flow is as
 * aggressive as its base in expectation.  Not for a flow that has never
 * had a boundary or a hint (bulk traffic stays neutral), nor past
 * MLTCP_SEED_BYTES_MAX of the iteration; `random` is any uniform 32-bit
 * value from the datapath.  With first_seed = 0 the flow keeps its own
 * ratio, as in the paper; a hinted DCQCN QP keeps it too
 * (mltcp_dcqcn_flow_hint).  Called once, after the flow's init.
 */
MLTCP_INLINE void mltcp_iter_seed(struct mltcp_iter *it, const struct mltcp_params *p,
				  __u32 random)
{
	it->seed_ratio = (__u8)(random >> 24);
	if (p->first_seed)
		it->flags |= MLTCP_F_SEEDED;
	else
		it->flags &= ~MLTCP_F_SEEDED;
}

/* seed_ratio in RATIO units: the middle of its 1/256 step. */
MLTCP_INLINE __u32 mltcp_iter_seed_stand_in(const struct mltcp_iter *it)
{
	return ((__u32)it->seed_ratio << MLTCP_SEED_SHIFT) + (1U << (MLTCP_SEED_SHIFT - 1));
}

/* The ratio of a flow without structure: the seed's stand-in when the flow
 * is seeded, has seen a boundary, has no size it can trust (none confirmed
 * or hinted) and is not yet MLTCP_SEED_BYTES_MAX into the iteration; else
 * MLTCP_RATIO_NONE.  Only for flows mltcp_iter_structured() rejected. */
MLTCP_INLINE __u32 mltcp_iter_unstructured_ratio(const struct mltcp_iter *it)
{
	if (!(it->flags & MLTCP_F_SEEDED) ||
	    (it->flags & (MLTCP_F_HINTED | MLTCP_F_CONFIRMED)) ||
	    it->iterations == 0 || it->iter_bytes > MLTCP_SEED_BYTES_MAX)
		return MLTCP_RATIO_NONE;
	return mltcp_iter_seed_stand_in(it);
}

/* The ratio the gain uses: the seed's in a first iteration (mltcp_iter_seed);
 * else the job's when the datapath set one and the flow has iteration
 * structure of its own (a bulk flow of a job stays neutral); else the
 * flow's own. */
MLTCP_INLINE __u32 mltcp_iter_ratio(const struct mltcp_iter *it)
{
	if (!mltcp_iter_structured(it))
		return mltcp_iter_unstructured_ratio(it);
	if ((it->flags & (MLTCP_F_SEEDED | MLTCP_F_HINTED)) ==
	    (MLTCP_F_SEEDED | MLTCP_F_HINTED) && it->iter_bytes <= MLTCP_SEED_BYTES_MAX)
		return mltcp_iter_seed_stand_in(it);	/* the first hinted iteration */
	if (it->flags & MLTCP_F_JOB)
		return it->job_ratio;	/* no division for the flow's own */
	return mltcp_ratio_of(it->iter_bytes, it->bytes_per_iter);
}

/* The datapath hands over its job's ratio (MLTCP_RATIO_NONE: no job, the
 * flow's own ratio applies). */
MLTCP_INLINE void mltcp_iter_set_job_ratio(struct mltcp_iter *it, __u32 ratio)
{
	if (ratio == MLTCP_RATIO_NONE) {
		it->flags &= ~MLTCP_F_JOB;
		it->job_ratio = 0;
		return;
	}
	it->flags |= MLTCP_F_JOB;
	it->job_ratio = (__u16)mltcp_min_u32(ratio, MLTCP_RATIO_ONE);
}

/* norm * (intercept + slope * bytes_ratio), clamped; GAIN units.  norm is
 * a base's norm (mltcp_params_derive); 0 (never derived) counts as 1. */
MLTCP_INLINE __u32 mltcp_gain_of_ratio_norm(const struct mltcp_params *p,
					    __u32 ratio, __u32 norm)
{
	__u64 f;

	if (!p->enabled || ratio == MLTCP_RATIO_NONE)
		return MLTCP_GAIN_ONE;
	ratio = mltcp_min_u32(ratio, MLTCP_RATIO_ONE);
	f = (__u64)p->intercept + (((__u64)p->slope * ratio) >> MLTCP_RATIO_SHIFT);
	if (norm && norm != MLTCP_GAIN_ONE)
		f = (f * norm) >> MLTCP_GAIN_SHIFT;
	return (__u32)mltcp_clamp_u64(f, p->gain_min, p->gain_max);
}

/* F(bytes_ratio) = intercept + slope * bytes_ratio, clamped: the paper's F,
 * as DCQCN applies it. */
MLTCP_INLINE __u32 mltcp_gain_of_ratio(const struct mltcp_params *p,
				       __u32 ratio)
{
	return mltcp_gain_of_ratio_norm(p, ratio, MLTCP_GAIN_ONE);
}

MLTCP_INLINE __u32 mltcp_gain(const struct mltcp_iter *it,
			      const struct mltcp_params *p)
{
	return mltcp_gain_of_ratio(p, mltcp_iter_ratio(it));
}

/* The iteration keeps its base's beta at a loss and grows with the two-way
 * norm (two_way_decrease): it carries its peer's data as well (docs/design.md,
 * "Two-way paths keep the base's beta"). */
MLTCP_INLINE int mltcp_iter_two_way(const struct mltcp_iter *it,
				    const struct mltcp_params *p)
{
	return p->two_way_decrease && (it->flags & MLTCP_F_TWO_WAY);
}

/* The gain a Reno (CUBIC) flow applies: F times its base's norm, the one
 * for the decrease the iteration takes. */
MLTCP_INLINE __u32 mltcp_reno_gain(const struct mltcp_iter *it,
				   const struct mltcp_params *p)
{
	return mltcp_gain_of_ratio_norm(p, mltcp_iter_ratio(it),
					mltcp_iter_two_way(it, p) ? p->norm_reno_two_way :
								    p->norm_reno);
}

MLTCP_INLINE __u32 mltcp_cubic_gain(const struct mltcp_iter *it,
				    const struct mltcp_params *p)
{
	return mltcp_gain_of_ratio_norm(p, mltcp_iter_ratio(it),
					mltcp_iter_two_way(it, p) ? p->norm_cubic_two_way :
								    p->norm_cubic);
}

#endif /* MLTCP_ITER_H */
