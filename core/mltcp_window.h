/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * mltcp_window.h - how the gain F changes a window-based congestion control.
 *
 * Reno: congestion avoidance grows cwnd by one segment per w segments acked
 * (tcp_cong_avoid_ai(tp, w, acked) with w = cwnd).  MLTCP passes
 * w = cwnd / F, so the window grows F segments per RTT instead of one.
 *
 * CUBIC: the window follows a curve in time, W(t) = C (t - K)^3 + W_max,
 * from the start of the epoch (the last loss).  How fast the window grows is
 * set by how fast t advances, so MLTCP scales CUBIC's clock: between two
 * evaluations of the curve dt apart, t advances by F * dt
 * (mltcp_cubic_epoch_scale moves the epoch start).  F also scales the two
 * ack-counted parts, as it does for Reno: the TCP-friendly estimate grows F
 * segments per RTT (mltcp_cubic_friendly_acks) and ca->cnt, the acks per
 * one-segment step towards the curve, is divided by F (mltcp_cubic_cnt).
 * The curve's origin (W_max, K) is untouched.  Scaling ca->cnt alone does
 * not work: it only sets how fast cwnd catches up with a target that still
 * moves at CUBIC's own speed (measured on the BPF datapath: no change in
 * growth).  Slow start is never scaled.
 *
 * Decrease (both, unless scale_decrease = 0): on a loss a flow keeps
 * beta * F of its window instead of beta (Reno 1/2, CUBIC 0.7), within
 * [beta / 2, (1 + beta) / 2].  This goes beyond the paper, which scales the
 * growth only.  Why: with the small buffers of real switches, windows are a
 * few segments to a few tens of segments and losses come every few RTTs, so
 * a flow's share follows its decrease at least as much as its growth.  With
 * growth scaling alone a 4:1 gain ratio moved the share of two flows only
 * from 50% to about 45% within a communication phase, and two identical
 * jobs needed a median of 11-12 iterations to interleave on the host
 * testbed; with the decrease scaled as well, 5 (docs/evaluation.md).  The
 * mean is kept: averaged over an iteration F is 1, and a flow with F = 1
 * backs off exactly as its base algorithm.
 */
#ifndef MLTCP_WINDOW_H
#define MLTCP_WINDOW_H

#include "mltcp_compat.h"
#include "mltcp_params.h"
#include "mltcp_iter.h"

/* Smallest ca->cnt bictcp_update() allows: at most 1.5x growth per RTT. */
#define MLTCP_CUBIC_CNT_MIN	2U

/* Acks per one-segment increase, scaled: n * ONE / gain, at least min. */
MLTCP_INLINE __u32 mltcp_scale_acks_per_inc(__u32 n, __u32 gain, __u32 min)
{
	__u64 w;

	if (gain == 0 || gain == MLTCP_GAIN_ONE)	/* never divide by zero */
		return mltcp_max_u32(n, min);		/* neutral: unscaled */
	/* Per-ack path: a 32-bit division is several times cheaper than a
	 * 64-bit one on common x86 cores, and suffices below 4M segments. */
	if (n <= (MLTCP_U32_MAX >> MLTCP_GAIN_SHIFT))
		w = (n << MLTCP_GAIN_SHIFT) / gain;
	else
		w = MLTCP_DIV64((__u64)n << MLTCP_GAIN_SHIFT, gain);
	return (__u32)mltcp_clamp_u64(w, min, MLTCP_U32_MAX);
}

/* The w to pass to tcp_cong_avoid_ai() for a Reno-based MLTCP flow. */
MLTCP_INLINE __u32 mltcp_reno_ai_w(__u32 cwnd, __u32 gain)
{
	return mltcp_scale_acks_per_inc(cwnd, gain, 1);
}

/* Fixed-point scale of beta, the fraction of cwnd kept after a loss (as
 * tcp_cubic.c's BICTCP_BETA_SCALE). */
#define MLTCP_BETA_SHIFT	10
#define MLTCP_BETA_ONE		(1U << MLTCP_BETA_SHIFT)
#define MLTCP_RENO_BETA		(MLTCP_BETA_ONE / 2)	/* tcp_reno_ssthresh() */
#define MLTCP_CUBIC_BETA	717U	/* 717/1024 of cwnd kept at a loss (tcp_cubic.c) */

/*
 * The fraction of cwnd a flow keeps after a loss: the base algorithm's beta
 * times F, within [beta * decrease_floor / 1024, (1 + beta) / 2]: by
 * default (decrease_floor 512) a flow keeps at least half of what its
 * base would keep, and it always cuts at least half of what its base would
 * cut.  beta when scale_decrease is off or the flow has no iteration
 * structure (F neutral).  decrease_floor also sets the norms
 * (mltcp_params_derive): the deeper the cut at a small F, the faster every
 * flow must grow to be as aggressive as its base on average.
 */
MLTCP_INLINE __u32 mltcp_decrease_beta(__u32 beta, __u32 gain,
				       const struct mltcp_params *p)
{
	__u64 keep, floor;

	if (!p->scale_decrease || gain == MLTCP_GAIN_ONE || beta >= MLTCP_BETA_ONE)
		return beta;
	keep = ((__u64)beta * gain) >> MLTCP_GAIN_SHIFT;
	floor = ((__u64)beta * p->decrease_floor) >> MLTCP_BETA_SHIFT;
	return (__u32)mltcp_clamp_u64(keep, floor, (MLTCP_BETA_ONE + beta) >> 1);
}

/* The fraction kept on the iteration's path: mltcp_decrease_beta, and on a
 * two-way path (mltcp_iter_two_way) never less than the base's beta
 * (mltcp_decrease_ssthresh says why). */
MLTCP_INLINE __u32 mltcp_path_decrease_beta(__u32 beta, __u32 gain,
					    const struct mltcp_params *p, int two_way)
{
	__u32 keep = mltcp_decrease_beta(beta, gain, p);

	return two_way ? mltcp_max_u32(keep, beta) : keep;
}

/* ssthresh after a loss from a window of cwnd segments: max(cwnd * beta, 2),
 * as tcp_reno_ssthresh() and bictcp_recalc_ssthresh() compute it. */
MLTCP_INLINE __u32 mltcp_ssthresh(__u32 cwnd, __u32 beta)
{
	__u64 s = ((__u64)cwnd * beta) >> MLTCP_BETA_SHIFT;

	return (__u32)mltcp_clamp_u64(s, 2, MLTCP_U32_MAX);
}

/*
 * Tail hold: no window growth (slow start or congestion avoidance) while the
 * bytes left in the current iteration fit in tail_windows windows of cwnd
 * segments of mss bytes, and in tail_share / 1024 of the iteration.  Why: the
 * iteration's last segment has no segment behind it to trigger fast
 * retransmit or RACK, and with it alone in flight Linux arms the tail-loss
 * probe at 2 srtt + TCP_RTO_MIN (200 ms, tcp_schedule_loss_probe()), so
 * losing it stalls the whole iteration for 200 ms.  On the host testbed nine
 * of the ten stalls traced were that lone segment, dropped by a queue the
 * flow was still filling by growing in its last RTTs, half of the time with
 * no other flow active (docs/design.md, "The tail") - and F is largest
 * exactly there.  Holding the window keeps the flow from pushing the queue
 * over at that moment; it costs at most the growth of tail_windows RTTs per
 * iteration.  The share bounds that cost where a phase is only a few windows
 * (a real RTT): there the last two windows are a third of the phase and the
 * leading job's edge, and holding them slowed convergence at a 5 ms RTT.
 * Off without a known iteration size, past the expected end (the estimate
 * is wrong), or with MLTCP off.
 */
MLTCP_INLINE int mltcp_tail_hold(const struct mltcp_iter *it, const struct mltcp_params *p,
				 __u32 cwnd, __u32 mss)
{
	__u64 e = it->bytes_per_iter, b = it->iter_bytes, windows, share;

	if (!p->enabled || !p->tail_windows || e == 0 || b > e ||
	    (it->iterations == 0 && !(it->flags & MLTCP_F_HINTED)))
		return 0;
	windows = (__u64)cwnd * mss * p->tail_windows;
	share = mltcp_mul_sat_u64(e, p->tail_share) >> MLTCP_RATIO_SHIFT;
	return e - b <= mltcp_min_u64(windows, share);
}

/*
 * Coexistence (docs/design.md, "Coexistence").  Against a flow that is not
 * MLTCP, an AIMD flow that grows a segments per RTT and keeps beta of its
 * window at a loss takes a share in proportion to a (1 + beta) / (1 - beta)
 * (synchronised losses, steady state).  An MLTCP flow at bytes ratio r has
 * a = F and beta = mltcp_decrease_beta(beta0, F), so against its base its
 * share is m(F) = F h(beta(F)) / h(beta0) times the base's, h(b) = (1 + b)
 * / (1 - b).  A phase of B bytes lasts B / rate, so what the job feels is
 * the mean of 1 / m over its bytes - the harmonic mean of m, not the mean
 * of F: with the defaults (F = 0.25 + 1.5 r, mean F = 1) the model makes a
 * phase 1.36x (Reno) and 1.67x (CUBIC) as long as the base's against bulk
 * traffic.  A base's norm N is the factor on the growth, a = clamp(N F(r)),
 * for which the mean of 1 / m is 1: as aggressive as the base on average,
 * while the ratio between two MLTCP flows at different r, which interleaves
 * them, is unchanged below the clamps (CUBIC's is then corrected by
 * measurement: mltcp_norm_scale_excess).  The decrease keeps F itself: scaled
 * by N, beta(F) would sit at its upper clamp for most of the iteration and
 * stop telling two flows apart (measured with the kernel module at a 5 ms
 * RTT: CUBIC's two jobs then took 1.15-1.18 of their isolated time, not
 * 1.05).  Computed once per parameter change (a bisection over a 32-point
 * midpoint rule), never per ack.
 */
#define MLTCP_NORM_SAMPLES	32U
#define MLTCP_NORM_STEPS	16U
#define MLTCP_NORM_MIN		(MLTCP_GAIN_ONE / 8)
#define MLTCP_NORM_MAX		(MLTCP_GAIN_ONE * 8)

/* h(beta) = (1 + beta) / (1 - beta) in BETA units, for beta < 1. */
MLTCP_INLINE __u64 mltcp_aimd_share(__u32 beta)
{
	if (beta >= MLTCP_BETA_ONE)	/* never from the core; guard the division */
		beta = MLTCP_BETA_ONE - 1;
	return ((__u64)(MLTCP_BETA_ONE + beta) << MLTCP_BETA_SHIFT) / (MLTCP_BETA_ONE - beta);
}

/* The mean over an iteration of 1 / m, GAIN units, for growth clamp(norm
 * F(r)) and the decrease of F(r) on a one-way or two-way path
 * (mltcp_path_decrease_beta). */
MLTCP_INLINE __u64 mltcp_norm_mean_inverse_share(const struct mltcp_params *p,
						 __u32 beta0, __u32 norm, int two_way)
{
	__u64 h0 = mltcp_aimd_share(beta0), sum = 0, m;
	__u32 j, ratio, growth, f;

	for (j = 0; j < MLTCP_NORM_SAMPLES; j++) {
		ratio = ((2 * j + 1) << MLTCP_RATIO_SHIFT) / (2 * MLTCP_NORM_SAMPLES);
		growth = mltcp_gain_of_ratio_norm(p, ratio, norm);
		f = mltcp_gain_of_ratio(p, ratio);
		m = (__u64)growth *
		    mltcp_aimd_share(mltcp_path_decrease_beta(beta0, f, p, two_way)) / h0;
		sum += (1ULL << (2 * MLTCP_GAIN_SHIFT)) / mltcp_max_u64(m, 1);
	}
	return sum / MLTCP_NORM_SAMPLES;
}

/* The smallest norm (1/1024 steps, within [1/8, 8]) whose mean 1 / m is at
 * most 1 (8 when none is); 1 with normalize off.  Independent of `enabled`,
 * so that switching MLTCP off and on again needs no new derivation. */
MLTCP_INLINE __u32 mltcp_norm_for_beta(const struct mltcp_params *p, __u32 beta0, int two_way)
{
	__u32 lo = MLTCP_NORM_MIN, hi = MLTCP_NORM_MAX, mid, step;
	struct mltcp_params on = *p;

	if (!p->normalize)
		return MLTCP_GAIN_ONE;
	on.enabled = 1;
	for (step = 0; step < MLTCP_NORM_STEPS && lo < hi; step++) {
		mid = lo + (hi - lo) / 2;
		if (mltcp_norm_mean_inverse_share(&on, beta0, mid, two_way) <= MLTCP_GAIN_ONE)
			hi = mid;
		else
			lo = mid + 1;
	}
	return hi;
}

/*
 * CUBIC's norm is 1 + cubic_norm_excess / 1024 times the model's excess over
 * 1.  The model treats CUBIC as an AIMD flow of its TCP-friendly region and
 * overestimates what an MLTCP-CUBIC flow whose F varies over its iteration
 * takes from a CUBIC flow: in the bulk mix (one vgg16 job against a bulk
 * CUBIC flow, host testbed, one session per norm, 5 runs, decrease_floor
 * 512) the job took 1.061 times its time with CUBIC with the model's norm
 * (2.35 at the defaults), 1.018 with 3.0 and 1.019 with 3.5
 * (docs/design.md, "Coexistence"); hence the default 1536 (3.02).  Only
 * the excess is scaled, so a flow whose F is 1 throughout stays CUBIC.
 * Reno's model norm measured 0.94 there (slightly ahead of Reno) and is
 * kept.  Returns 1 + scale (model - 1), GAIN units, within
 * [MLTCP_NORM_MIN, MLTCP_NORM_MAX].
 */
MLTCP_INLINE __u32 mltcp_norm_scale_excess(__u32 model, __u32 scale)
{
	__u64 d;

	if (model >= MLTCP_GAIN_ONE) {
		d = ((__u64)(model - MLTCP_GAIN_ONE) * scale) >> MLTCP_GAIN_SHIFT;
		return (__u32)mltcp_min_u64(MLTCP_GAIN_ONE + d, MLTCP_NORM_MAX);
	}
	d = ((__u64)(MLTCP_GAIN_ONE - model) * scale) >> MLTCP_GAIN_SHIFT;
	if (d >= MLTCP_GAIN_ONE - MLTCP_NORM_MIN)
		return MLTCP_NORM_MIN;
	return (__u32)(MLTCP_GAIN_ONE - d);
}

/* Fills the derived fields of *p from its table fields; every writer of a
 * parameter set calls it after validation. */
MLTCP_INLINE void mltcp_params_derive(struct mltcp_params *p)
{
	p->norm_reno = mltcp_norm_for_beta(p, MLTCP_RENO_BETA, 0);
	p->norm_cubic = mltcp_norm_scale_excess(mltcp_norm_for_beta(p, MLTCP_CUBIC_BETA, 0),
						p->cubic_norm_excess);
	p->norm_reno_two_way = mltcp_norm_for_beta(p, MLTCP_RENO_BETA, 1);
	p->norm_cubic_two_way =
		mltcp_norm_scale_excess(mltcp_norm_for_beta(p, MLTCP_CUBIC_BETA, 1),
					p->cubic_norm_excess);
}

/* The smallest window with which fast retransmit can still repair a loss:
 * three duplicate acks need four segments in flight (dupthresh + 1). */
#define MLTCP_RECOVERY_WINDOW	4U

/*
 * ssthresh after a loss with the scaled decrease: cwnd * beta(F)
 * (mltcp_decrease_beta), but never below the base's own ssthresh when
 * that is at most MLTCP_RECOVERY_WINDOW, and never below that window
 * otherwise.  Why: a flow early in its iteration (F small) would cut a
 * window of 6 to 2, where a second loss can only be repaired by a
 * retransmission timeout; with many jobs on a link every window is that
 * small (crowd mix: about 3 segments each).  Above a few segments the
 * floor is inactive and the decrease is the one the convergence needs.
 *
 * two_way (mltcp_iter_two_way): never below the base's own ssthresh at
 * all.  Where the flow's acks wait behind its peer's data the path holds
 * the reverse queue too, so a window cut to beta/2 leaves the link idle
 * until the flow has regrown at a small F: a job alone paid 3-5% of its
 * time for it (a two-rank ring, a PyTorch pair; docs/design.md, "Two-way
 * paths keep the base's beta").  F above 1 still keeps more than the base.
 */
MLTCP_INLINE __u32 mltcp_decrease_ssthresh(__u32 cwnd, __u32 beta0, __u32 gain,
					   const struct mltcp_params *p, int two_way)
{
	__u32 scaled = mltcp_ssthresh(cwnd, mltcp_path_decrease_beta(beta0, gain, p, two_way));
	__u32 floor = mltcp_min_u32(mltcp_ssthresh(cwnd, beta0), MLTCP_RECOVERY_WINDOW);

	return mltcp_max_u32(scaled, floor);
}

/*
 * Start drain: the window an iteration starts with.  At a transmit start
 * with nothing in flight that begins an iteration (none of its bytes acked
 * yet; a detected boundary or a hint), a flow that has a bytes ratio drops
 * cwnd, and ssthresh with it, to cwnd * min_rtt / srtt: the part of its
 * window that the path held without a queue when its last phase ended, but
 * never below MLTCP_RECOVERY_WINDOW and never up.  Why: the window carried
 * across the compute phase was grown at the end of the last communication
 * phase, where F is largest, and its queue part lands as one burst on
 * whatever phase is running when this one begins.  On the host testbed that
 * burst dropped the running job's last segments (a tail-loss probe, 200 ms
 * with one segment out, docs/design.md "The tail") and took the newcomer a
 * share its small F does not give it, so the phases separated slowly.
 * Drained, the newcomer starts from its share of the path without a queue
 * and grows at its F: the phase ahead ends at full speed.  Alone, the
 * window keeps the path full (a lone flow's srtt is min_rtt plus its own
 * queue, so the drained window is the bandwidth-delay product); only the
 * standing queue goes.
 *
 * Only where an iteration is at least start_drain_windows drained windows,
 * i.e. lasts that many round trips at the rate the path holds without a
 * queue: the drained flows regrow the queue part within a few RTTs of their
 * phase, and their losses, which the scaled decrease needs to tell two
 * jobs apart, still come.  Where a phase is only a few round trips (a real
 * RTT: a VM rig phase of 180 KB is about 9 drained windows, 31 at the
 * 4-segment floor), regrowing takes most of the phase, the flows lose late
 * or not at all and two jobs stay collided longer (docs/design.md, "The
 * start of an iteration"); at 32 no VM phase is drained and nearly every
 * host phase is.  The bound counts drained windows, not cwnd: a window
 * carried with a large queue would otherwise exempt exactly the flows with
 * the most queue to land on the running phase (a striped job's connections
 * whose window had grown past an eighth of their iteration).
 *
 * Not for a connection that carries its peer's data as well (it has
 * received more than 1/2^MLTCP_DRAIN_PEER_DATA_SHIFT of what it has had
 * acked; e.g. Gloo's pair of two ranks, which all-reduce both ways at once):
 * its acks wait behind the peer's data on the way back, so srtt holds the
 * reverse path's queue too, cwnd * min_rtt / srtt is below what the path
 * holds, and a drained flow runs below the link's rate until it has grown
 * back.  Measured with two-rank PyTorch DDP jobs on the testbed, whose
 * bottleneck queues both ways (docs/pytorch.md): with the drain an
 * `mltcp_cubic` job alone took 1.040-1.075 times CUBIC's time (four
 * blocks), without it 1.021-1.035, and in four of five pairs of blocks two
 * jobs together took 5-11% longer with it (the fifth: equal).  The counters
 * are the connection's lifetime totals (tcp_sock's bytes_acked and
 * bytes_received; 0 received for a datapath whose flows are one-way), so
 * the test needs no state.
 *
 * Nor, with job_two_way, for a connection whose job carries its peer's data
 * (job: the job's traffic since the connection's previous transmit start,
 * mltcp_job_traffic_since; NULL for a datapath without jobs).  A ring
 * all-reduce sends on one connection and receives on another, so each is
 * one-way, yet the acks of each wait behind the other's data all the same
 * (a two-rank ring: rank 0 sends to rank 1 while rank 1 sends to rank 0).
 * Measured with two-rank emulator rings on the BPF datapath: an
 * `mltcp_cubic` ring alone took 1.030-1.042 times CUBIC's time with this
 * test, 1.053-1.135 without it (three alternated blocks; docs/evaluation.md,
 * "A job that receives as it sends").  The window is the connection's
 * previous phase, not its lifetime: a job that once downloaded its dataset
 * is not two-way for good.
 *
 * The test's outcome marks the iteration it begins (MLTCP_F_TWO_WAY, set
 * or cleared here and nowhere else), with MLTCP off too: the decrease and
 * the norm of a two-way iteration differ (mltcp_iter_two_way).
 *
 * Off with MLTCP off, for a flow without iteration structure (a bulk flow
 * stays its base), without an RTT sample or an MSS, and mid-iteration.
 */
#define MLTCP_DRAIN_PEER_DATA_SHIFT	2	/* a quarter of what was acked */

/* Bytes some connections had acked and received over some stretch: a
 * job's, for the start drain's two-way test (mltcp_start_cwnd). */
struct mltcp_traffic {
	__u64 acked;		/* of ours, acked by the peers */
	__u64 received;		/* of the peers', received */
};

/* The connection carries its peer's data as well: srtt is not only its own
 * queue (mltcp_start_cwnd). */
MLTCP_INLINE int mltcp_carries_peer_data(__u64 acked_total, __u64 received_total)
{
	return received_total > (acked_total >> MLTCP_DRAIN_PEER_DATA_SHIFT);
}

MLTCP_INLINE __u32 mltcp_start_cwnd(struct mltcp_iter *it, const struct mltcp_params *p,
				    __u32 cwnd, __u32 mss, __u32 min_rtt_us, __u32 srtt_us,
				    __u64 acked_total, __u64 received_total,
				    const struct mltcp_traffic *job)
{
	__u64 w, windows;

	if (it->iter_bytes != 0)
		return cwnd;	/* mid-iteration */
	if (mltcp_carries_peer_data(acked_total, received_total) ||
	    (job && p->job_two_way && mltcp_carries_peer_data(job->acked, job->received))) {
		it->flags |= MLTCP_F_TWO_WAY;
		return cwnd;
	}
	it->flags &= ~MLTCP_F_TWO_WAY;
	if (!p->enabled || !p->start_drain_windows || mss == 0 ||
	    min_rtt_us == 0 || srtt_us <= min_rtt_us || cwnd <= MLTCP_RECOVERY_WINDOW ||
	    mltcp_iter_ratio(it) == MLTCP_RATIO_NONE)
		return cwnd;
	w = MLTCP_DIV64((__u64)cwnd * min_rtt_us, srtt_us);	/* < cwnd: srtt > min_rtt */
	w = mltcp_max_u64(w, MLTCP_RECOVERY_WINDOW);
	windows = mltcp_mul_sat_u64(w * mss, p->start_drain_windows);
	if (it->bytes_per_iter < windows)
		return cwnd;	/* a phase of a few round trips: its losses are needed */
	return (__u32)w;
}

/* CUBIC's ca->cnt after MLTCP scaling (applied before its own max(cnt, 2)). */
MLTCP_INLINE __u32 mltcp_cubic_cnt(__u32 cnt, __u32 gain)
{
	return mltcp_scale_acks_per_inc(cnt, gain, MLTCP_CUBIC_CNT_MIN);
}

/* Acks per segment of CUBIC's TCP-friendly (Reno) estimate, scaled by F. */
MLTCP_INLINE __u32 mltcp_cubic_friendly_acks(__u32 acks_per_seg, __u32 gain)
{
	return mltcp_scale_acks_per_inc(acks_per_seg, gain, 1);
}

/*
 * The epoch start that makes CUBIC's curve advance by F * dt over the last dt
 * units of real time: moved earlier by (F - 1) dt when F > 1, later by
 * (1 - F) dt when F < 1 (never past now, so t never goes backwards).  Any
 * time unit works (jiffies in the kernel's tcp_cubic, microseconds in the BPF
 * port); the remainder below one unit is carried in *carry (1/1024 units), so
 * a coarse clock is scaled exactly on average.  Call only while an epoch is
 * running, with dt = now - the previous evaluation.
 */
MLTCP_INLINE __u32 mltcp_cubic_epoch_scale(__u32 epoch_start, __u32 now,
					   __u32 dt, __u32 gain, __u16 *carry)
{
	__u64 scaled;
	__u32 shift;

	if (gain == MLTCP_GAIN_ONE || gain == 0)
		return epoch_start;
	if (gain > MLTCP_GAIN_ONE)
		scaled = (__u64)dt * (gain - MLTCP_GAIN_ONE) + *carry;
	else
		scaled = (__u64)dt * (MLTCP_GAIN_ONE - gain) + *carry;
	*carry = (__u16)(scaled & (MLTCP_GAIN_ONE - 1));
	shift = (__u32)mltcp_min_u64(scaled >> MLTCP_GAIN_SHIFT, MLTCP_U32_MAX >> 1);
	if (gain > MLTCP_GAIN_ONE)
		return epoch_start - shift;
	epoch_start += shift;
	if ((__s32)(epoch_start - now) > 0)
		epoch_start = now;
	return epoch_start;
}

/*
 * Per-ack fast path.  Computing F costs a division per ack, and Reno's w a
 * second, dependent one: together about three times a plain Reno step.  F
 * moves slowly (from intercept to intercept + slope over a whole
 * iteration), so struct mltcp_gain_cache recomputes it only when the
 * iteration has progressed by another 1/MLTCP_GAIN_STEPS of its size or
 * when the iteration size changes; F is thus piecewise constant in 64 steps
 * per iteration (error at most slope/64).  It holds a Reno flow's F
 * (mltcp_reno_gain); struct mltcp_reno_cache adds w for the current cwnd.
 * `enabled` is read on every call, so switching MLTCP off is immediate;
 * other parameter changes apply from the next step.  The two-way mark
 * (which norm applies) changes only where an iteration begins, and the new
 * iteration's bytes are outside the cached step's range.
 */
#define MLTCP_GAIN_STEP_SHIFT	6
#define MLTCP_GAIN_STEPS	(1U << MLTCP_GAIN_STEP_SHIFT)

struct mltcp_gain_cache {
	__u64 valid_from;	/* cached F holds for iter_bytes in        */
	__u64 valid_span;	/*   [valid_from, valid_from + valid_span) */
	__u64 bytes_per_iter;	/*   and this iteration size */
	__u32 gain;		/* cached F, GAIN units */
	__u32 job_step;		/*   and this step of the job's ratio */
};

struct mltcp_reno_cache {
	struct mltcp_gain_cache f;
	__u32 cwnd;		/* cwnd that w was computed for */
	__u32 w;		/* mltcp_reno_ai_w(cwnd, f.gain) */
};

MLTCP_INLINE void mltcp_gain_cache_init(struct mltcp_gain_cache *c)
{
	c->valid_from = 0;
	c->valid_span = 0;	/* empty: the first call computes */
	c->bytes_per_iter = 0;
	c->gain = MLTCP_GAIN_ONE;
	c->job_step = MLTCP_U32_MAX;
}

MLTCP_INLINE void mltcp_reno_cache_init(struct mltcp_reno_cache *c)
{
	mltcp_gain_cache_init(&c->f);
	c->cwnd = 0;
	c->w = 1;
}

/* A job's ratio (mltcp_job.h) moves with other flows' bytes: F follows it
 * in the same 64 steps as the flow's own. */
MLTCP_INLINE __u32 mltcp_gain_cache_job_step(const struct mltcp_iter *it)
{
	if (!(it->flags & MLTCP_F_JOB))
		return MLTCP_U32_MAX;
	return (__u32)it->job_ratio >> (MLTCP_RATIO_SHIFT - MLTCP_GAIN_STEP_SHIFT);
}

MLTCP_INLINE int mltcp_gain_cache_holds(const struct mltcp_gain_cache *c,
					const struct mltcp_iter *it)
{
	return it->iter_bytes - c->valid_from < c->valid_span &&
	       it->bytes_per_iter == c->bytes_per_iter &&
	       mltcp_gain_cache_job_step(it) == c->job_step;
}

/* A Reno flow's F for this ack (mltcp_reno_gain), recomputed at most
 * MLTCP_GAIN_STEPS times per iteration. */
MLTCP_INLINE __u32 mltcp_gain_cached(struct mltcp_gain_cache *c,
				     const struct mltcp_iter *it,
				     const struct mltcp_params *p)
{
	__u64 e = it->bytes_per_iter;

	if (!p->enabled)
		return MLTCP_GAIN_ONE;
	if (mltcp_gain_cache_holds(c, it))
		return c->gain;
	c->gain = mltcp_reno_gain(it, p);
	c->valid_from = it->iter_bytes;
	/* Without a known size F is neutral until a size appears. */
	c->valid_span = e ? mltcp_max_u64(e >> MLTCP_GAIN_STEP_SHIFT, 1) :
			    MLTCP_U64_MAX;
	c->bytes_per_iter = e;
	c->job_step = mltcp_gain_cache_job_step(it);
	return c->gain;
}

/* The w to pass to tcp_cong_avoid_ai(), from the cache when possible. */
MLTCP_INLINE __u32 mltcp_reno_ai_w_cached(struct mltcp_reno_cache *c,
					  const struct mltcp_iter *it,
					  const struct mltcp_params *p,
					  __u32 cwnd)
{
	__u32 gain;

	if (p->enabled && cwnd == c->cwnd && mltcp_gain_cache_holds(&c->f, it))
		return c->w;	/* the per-ack common case */
	gain = mltcp_gain_cached(&c->f, it, p);
	c->w = mltcp_reno_ai_w(cwnd, gain);
	c->cwnd = p->enabled ? cwnd : 0;
	return c->w;
}

#endif /* MLTCP_WINDOW_H */
