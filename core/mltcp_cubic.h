/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * mltcp_cubic.h - CUBIC with HyStart, after Linux 6.1's net/ipv4/tcp_cubic.c,
 * with the MLTCP gain F scaling its growth (mltcp_window.h says what F
 * scales and why).  Every CUBIC-based datapath runs this code: the kernel
 * module and BPF struct_ops from their tcp_congestion_ops hooks, the DPDK
 * transport and the simulator from their own window code.  With F = 1 it
 * decides as CUBIC does.
 *
 * Differences from tcp_cubic.c:
 *  - One clock, in microseconds (tcp_mstamp in the kernel and in BPF, which
 *    has no CONFIG_HZ), for the curve and for HyStart.  The curve is
 *    re-evaluated at most once per millisecond (tcp_cubic: once per jiffy,
 *    i.e. HZ = 1000) and kept for HZ/32 = 31.25 ms while cwnd is unchanged.
 *    On CA_EVENT_TX_START the epoch moves by the idle time since the flow's
 *    last acked progress (the caller passes it; tcp_cubic uses lsndtime).
 *  - An epoch start of 0 means "no epoch", as in tcp_cubic; a clock reading
 *    of 0 is stored as 1 (one microsecond later).
 *  - Tunables fixed at tcp_cubic's defaults: beta 717/1024, bic_scale 41,
 *    fast convergence, TCP friendliness, HyStart with both detectors, low
 *    window 16, ack delta 2 ms; no initial_ssthresh.
 *  - The TCP-friendly estimate's "while (ack_cnt > delta)" loop is one
 *    division with the loop's result (bounded, as BPF needs).
 *  - ca->cnt keeps CUBIC's value before its final max(cnt, 2):
 *    mltcp_bictcp_cong_avoid() returns mltcp_cubic_cnt(cnt, F), which
 *    scales it and applies that max.
 *  - HyStart reports what it found (MLTCP_HYSTART_FOUND_*); the caller sets
 *    ssthresh to cwnd and counts its statistics.  The TSO/GRO cushion
 *    (hystart_ack_delay) depends on the socket and is the caller's input.
 *  - MLTCP: a loss keeps beta * F of cwnd (mltcp_decrease_beta); W_max, K,
 *    fast convergence and undo stay CUBIC's.  An iteration starts from the
 *    part of the window that was not queue (mltcp_cubic_flow_start_cwnd),
 *    which ends the epoch as a loss does.
 */
#ifndef MLTCP_CUBIC_H
#define MLTCP_CUBIC_H

#include "mltcp_compat.h"
#include "mltcp_params.h"
#include "mltcp_iter.h"
#include "mltcp_window.h"
#include "mltcp_reno.h"

#define MLTCP_CUBIC_BETA_SCALE		1024U	/* BICTCP_BETA_SCALE */
#define MLTCP_CUBIC_HZ_SHIFT		10	/* BICTCP_HZ: time in 1/1024 s */
#define MLTCP_CUBIC_BIC_SCALE		41U
#define MLTCP_CUBIC_RTT_SCALE		(MLTCP_CUBIC_BIC_SCALE * 10)	/* 1024*c/rtt */
/* 8 * (1 + beta) / 3 / (1 - beta), the TCP-friendly growth in 1/8 units. */
#define MLTCP_CUBIC_FRIENDLY_SCALE	(8 * (MLTCP_CUBIC_BETA_SCALE + MLTCP_CUBIC_BETA) / 3 / \
					 (MLTCP_CUBIC_BETA_SCALE - MLTCP_CUBIC_BETA))
/* 1/c * 2^(3 * BICTCP_HZ) * srtt for srtt = 100 ms, as cubictcp_register(). */
#define MLTCP_CUBIC_CUBE_FACTOR		((1ULL << (10 + 3 * MLTCP_CUBIC_HZ_SHIFT)) / \
					 MLTCP_CUBIC_RTT_SCALE)
#define MLTCP_CUBIC_USEC_PER_SEC	1000000U
#define MLTCP_CUBIC_UPDATE_MIN_US	1000U		/* one jiffy at HZ = 1000 */
#define MLTCP_CUBIC_SAME_CWND_US	(MLTCP_CUBIC_USEC_PER_SEC / 32)	/* HZ / 32 */
#define MLTCP_CUBIC_CNT_NEW_FLOW	20U	/* at least 5% growth per RTT at first */

#define MLTCP_HYSTART_LOW_WINDOW	16U
#define MLTCP_HYSTART_ACK_DELTA_US	2000
#define MLTCP_HYSTART_MIN_SAMPLES	8
#define MLTCP_HYSTART_DELAY_MIN_US	4000U
#define MLTCP_HYSTART_DELAY_MAX_US	16000U

enum mltcp_hystart_found {
	MLTCP_HYSTART_FOUND_TRAIN = 1 << 0,	/* ack train longer than delay_min/2 */
	MLTCP_HYSTART_FOUND_DELAY = 1 << 1,	/* round's min RTT rose */
};

/* tcp_cubic.c's struct bictcp; its unused u16 holds MLTCP's clock carry. */
struct mltcp_bictcp {
	__u32 cnt;		/* acks per one-segment increase, before max(cnt, 2) */
	__u32 last_max_cwnd;	/* W_max */
	__u32 last_cwnd;	/* cwnd at the last curve evaluation */
	__u32 last_time;	/* time (us) of the last curve evaluation */
	__u32 bic_origin_point;	/* origin point of the cubic function */
	__u32 bic_K;		/* time (1/1024 s) from epoch start to origin */
	__u32 delay_min;	/* min RTT (us) */
	__u32 epoch_start;	/* beginning of an epoch (us), 0 = none */
	__u32 ack_cnt;		/* acks counted for the TCP-friendly estimate */
	__u32 tcp_cwnd;		/* the TCP-friendly (Reno) estimate */
	__u16 epoch_carry;	/* MLTCP: sub-us remainder of the clock scaling */
	__u8 sample_cnt;	/* HyStart: RTT samples in this round */
	__u8 found;		/* HyStart: slow-start exit found */
	__u32 round_start;	/* HyStart: beginning of the round (us) */
	__u32 end_seq;		/* HyStart: snd_nxt at the round's start */
	__u32 last_ack;		/* HyStart: last ack of the train (us) */
	__u32 curr_rtt;		/* HyStart: min RTT of the round (us) */
};

/* What one ack with an RTT sample tells CUBIC (the pkts_acked hook). */
struct mltcp_cubic_rtt_sample {
	__s32 rtt_us;		/* < 0: no sample (a duplicate without timestamp) */
	__u32 now_us;
	__u32 cwnd;		/* segments */
	__u32 snd_una;		/* oldest unacknowledged sequence number */
	__u32 snd_nxt;		/* next sequence number to send */
	__u32 in_slow_start;	/* cwnd < ssthresh */
	__u32 ack_delay_us;	/* hystart_ack_delay(): the TSO/GRO cushion */
	__u32 paced;		/* the socket paces (sk_pacing_status != NONE) */
};

MLTCP_INLINE int mltcp_cubic_after(__u32 a, __u32 b)
{
	return (__s32)(b - a) < 0;
}

/* A clock reading as an epoch start: 0 is reserved for "no epoch". */
MLTCP_INLINE __u32 mltcp_cubic_epoch_of(__u32 now_us)
{
	return now_us ? now_us : 1;
}

/* bictcp_reset(): everything before the carry, and found. */
MLTCP_INLINE void mltcp_bictcp_reset(struct mltcp_bictcp *ca)
{
	ca->cnt = 0;
	ca->last_max_cwnd = 0;
	ca->last_cwnd = 0;
	ca->last_time = 0;
	ca->bic_origin_point = 0;
	ca->bic_K = 0;
	ca->delay_min = 0;
	ca->epoch_start = 0;
	ca->ack_cnt = 0;
	ca->tcp_cwnd = 0;
	ca->found = 0;
}

/* bictcp_hystart_reset(): a new HyStart round starts at snd_nxt. */
MLTCP_INLINE void mltcp_hystart_reset(struct mltcp_bictcp *ca, __u32 now_us,
				      __u32 snd_nxt)
{
	ca->round_start = now_us;
	ca->last_ack = now_us;
	ca->end_seq = snd_nxt;
	ca->curr_rtt = ~0U;
	ca->sample_cnt = 0;
}

/* cubictcp_init() */
MLTCP_INLINE void mltcp_bictcp_init(struct mltcp_bictcp *ca, __u32 now_us,
				   __u32 snd_nxt)
{
	mltcp_bictcp_reset(ca);
	ca->epoch_carry = 0;
	mltcp_hystart_reset(ca, now_us, snd_nxt);
}

/* Index of the most significant set bit, 1-based (fls64). */
MLTCP_INLINE __u32 mltcp_fls64(__u64 x)
{
	__u32 n = 64;

	if (x == 0)
		return 0;
	if (!(x & 0xffffffff00000000ULL)) {
		n -= 32;
		x <<= 32;
	}
	if (!(x & 0xffff000000000000ULL)) {
		n -= 16;
		x <<= 16;
	}
	if (!(x & 0xff00000000000000ULL)) {
		n -= 8;
		x <<= 8;
	}
	if (!(x & 0xf000000000000000ULL)) {
		n -= 4;
		x <<= 4;
	}
	if (!(x & 0xc000000000000000ULL)) {
		n -= 2;
		x <<= 2;
	}
	if (!(x & 0x8000000000000000ULL))
		n -= 1;
	return n;
}

/* Cube root by table lookup and one Newton-Raphson step (~0.195% error). */
MLTCP_INLINE __u32 mltcp_cubic_root(__u64 a)
{
	/* cbrt(x) MSB values for x MSB values in [0..63] (Willy Tarreau):
	 * v = cbrt(x << 18) - 1, cbrt(x) = (v[x] + 10) >> 6. */
	static const __u8 v[64] = {
		/* 0x00 */    0,   54,   54,   54,  118,  118,  118,  118,
		/* 0x08 */  123,  129,  134,  138,  143,  147,  151,  156,
		/* 0x10 */  157,  161,  164,  168,  170,  173,  176,  179,
		/* 0x18 */  181,  185,  187,  190,  192,  194,  197,  199,
		/* 0x20 */  200,  202,  204,  206,  209,  211,  213,  215,
		/* 0x28 */  217,  219,  221,  222,  224,  225,  227,  229,
		/* 0x30 */  231,  232,  234,  236,  237,  239,  240,  242,
		/* 0x38 */  244,  245,  246,  248,  250,  251,  252,  254,
	};
	__u32 x, b, shift;
	__u64 d;

	b = mltcp_fls64(a);
	if (b < 7)	/* a in [0..63] */
		return ((__u32)v[(__u32)a & 63] + 35) >> 6;
	b = ((b * 84) >> 8) - 1;
	/* b makes shift < 64, as in tcp_cubic.c.  The mask (not a branch,
	 * which clang folds into the index) bounds the index for the BPF
	 * verifier, whose range tracking on 6.1 rejects the access otherwise. */
	shift = (__u32)(a >> (b * 3)) & 63;
	x = ((__u32)(((__u32)v[shift] + 10) << b)) >> 6;
	/* Newton-Raphson: x = (2 x + a / x^2) / 3; x >= 2 here. */
	d = (__u64)x * (__u64)(x - 1);
	if (!d)
		return x;
	x = 2 * x + (__u32)MLTCP_DIV64(a, d);
	return (x * 341) >> 10;
}

/*
 * bictcp_update(): recompute ca->cnt for a window of cwnd segments after
 * `acked` more segments were acked, at now_us.  MLTCP: the curve's clock
 * advances F * dt over the last dt and the TCP-friendly estimate grows F
 * segments per RTT.  ca->cnt stays CUBIC's raw value (the early returns
 * reuse it, so scaling it in place would compound).
 */
MLTCP_INLINE void mltcp_bictcp_update(struct mltcp_bictcp *ca, __u32 cwnd,
				     __u32 acked, __u32 now_us, __u32 gain)
{
	__u32 delta, bic_target, max_cnt, dt, n;
	__u64 offs, t;

	ca->ack_cnt += acked;	/* count the number of ACKed packets */

	if (ca->last_cwnd == cwnd &&
	    (__s32)(now_us - ca->last_time) <= (__s32)MLTCP_CUBIC_SAME_CWND_US)
		return;

	/* The curve is evaluated at most once per millisecond; every cwnd
	 * reduction sets epoch_start to 0, which forces a recalculation. */
	if (ca->epoch_start &&
	    (__s32)(now_us - ca->last_time) < (__s32)MLTCP_CUBIC_UPDATE_MIN_US)
		goto tcp_friendliness;

	ca->last_cwnd = cwnd;
	dt = now_us - ca->last_time;
	ca->last_time = now_us;

	if (ca->epoch_start) {
		/* MLTCP: the curve advances F * dt over the last dt. */
		ca->epoch_start = mltcp_cubic_epoch_of(
			mltcp_cubic_epoch_scale(ca->epoch_start, now_us, dt, gain,
						&ca->epoch_carry));
	} else {
		ca->epoch_start = mltcp_cubic_epoch_of(now_us);	/* record beginning */
		ca->epoch_carry = 0;
		ca->ack_cnt = acked;		/* start counting */
		ca->tcp_cwnd = cwnd;		/* sync with cubic */
		if (ca->last_max_cwnd <= cwnd) {
			ca->bic_K = 0;
			ca->bic_origin_point = cwnd;
		} else {
			/* K = cbrt((W_max - cwnd) * 2^(3 * BICTCP_HZ) / c) */
			ca->bic_K = mltcp_cubic_root(MLTCP_CUBIC_CUBE_FACTOR *
						     (ca->last_max_cwnd - cwnd));
			ca->bic_origin_point = ca->last_max_cwnd;
		}
	}

	/* t = time since the epoch plus min RTT, in 1/1024 s.  No overflow
	 * below a million segments of cwnd (tcp_cubic.c's argument). */
	t = (__u64)(__u32)(now_us - ca->epoch_start);
	t += ca->delay_min;
	t = MLTCP_DIV64(t << MLTCP_CUBIC_HZ_SHIFT, MLTCP_CUBIC_USEC_PER_SEC);

	if (t < ca->bic_K)		/* t - K */
		offs = ca->bic_K - t;
	else
		offs = t - ca->bic_K;

	/* c/rtt * (t-K)^3 */
	delta = (__u32)((MLTCP_CUBIC_RTT_SCALE * offs * offs * offs) >>
			(10 + 3 * MLTCP_CUBIC_HZ_SHIFT));
	if (t < ca->bic_K)		/* below origin */
		bic_target = ca->bic_origin_point - delta;
	else				/* above origin */
		bic_target = ca->bic_origin_point + delta;

	if (bic_target > cwnd)
		ca->cnt = cwnd / (bic_target - cwnd);
	else
		ca->cnt = 100 * cwnd;	/* very small increment */

	/* The initial growth may be too conservative while the available
	 * bandwidth is still unknown. */
	if (ca->last_max_cwnd == 0 && ca->cnt > MLTCP_CUBIC_CNT_NEW_FLOW)
		ca->cnt = MLTCP_CUBIC_CNT_NEW_FLOW;

tcp_friendliness:
	/* MLTCP: the Reno estimate grows F segments per RTT. */
	delta = mltcp_cubic_friendly_acks((cwnd * MLTCP_CUBIC_FRIENDLY_SCALE) >> 3, gain);
	if (ca->ack_cnt > delta) {
		/* tcp_cubic.c's loop leaves ack_cnt in (0, delta]. */
		n = (ca->ack_cnt - 1) / delta;
		ca->ack_cnt -= n * delta;
		ca->tcp_cwnd += n;
	}
	if (ca->tcp_cwnd > cwnd) {	/* if bic is slower than tcp */
		delta = ca->tcp_cwnd - cwnd;
		max_cnt = cwnd / delta;
		if (ca->cnt > max_cnt)
			ca->cnt = max_cnt;
	}
}

/*
 * cubictcp_cong_avoid() after slow start: `acked` segments in congestion
 * avoidance.  Returns w for tcp_cong_avoid_ai(): CUBIC's cnt scaled by F,
 * at least 2 (at most 1.5x growth per RTT).
 */
MLTCP_INLINE __u32 mltcp_bictcp_cong_avoid(struct mltcp_bictcp *ca, __u32 cwnd,
					  __u32 acked, __u32 now_us, __u32 gain)
{
	mltcp_bictcp_update(ca, cwnd, acked, now_us, gain);
	return mltcp_cubic_cnt(ca->cnt, gain);
}

/* What bictcp_recalc_ssthresh() does to CUBIC's state at a loss with cwnd
 * segments: end the epoch, set W_max with fast convergence. */
MLTCP_INLINE void mltcp_bictcp_on_loss(struct mltcp_bictcp *ca, __u32 cwnd)
{
	ca->epoch_start = 0;	/* end of epoch */
	if (cwnd < ca->last_max_cwnd)	/* fast convergence */
		ca->last_max_cwnd = (cwnd * (MLTCP_CUBIC_BETA_SCALE + MLTCP_CUBIC_BETA)) /
				    (2 * MLTCP_CUBIC_BETA_SCALE);
	else
		ca->last_max_cwnd = cwnd;
}

/* bictcp_recalc_ssthresh(): the new ssthresh after a loss.  MLTCP keeps
 * 0.7 * F of cwnd (mltcp_decrease_beta) above the recovery floor
 * (mltcp_decrease_ssthresh); W_max stays CUBIC's. */
MLTCP_INLINE __u32 mltcp_bictcp_ssthresh(struct mltcp_bictcp *ca, __u32 cwnd,
					 __u32 gain, const struct mltcp_params *p, int two_way)
{
	mltcp_bictcp_on_loss(ca, cwnd);
	return mltcp_decrease_ssthresh(cwnd, MLTCP_CUBIC_BETA, gain, p, two_way);
}

/* bictcp_state(TCP_CA_Loss): a retransmission timeout restarts CUBIC. */
MLTCP_INLINE void mltcp_bictcp_on_rto(struct mltcp_bictcp *ca, __u32 now_us,
				     __u32 snd_nxt)
{
	mltcp_bictcp_reset(ca);
	mltcp_hystart_reset(ca, now_us, snd_nxt);
}

/*
 * CA_EVENT_TX_START: the flow was application-limited (idle) for idle_us;
 * shift the epoch so that cwnd growth stays on the cubic curve.
 */
MLTCP_INLINE void mltcp_bictcp_on_tx_start(struct mltcp_bictcp *ca, __u32 now_us,
					  __u32 idle_us)
{
	if (ca->epoch_start && (__s32)idle_us > 0) {
		ca->epoch_start += idle_us;
		if (mltcp_cubic_after(ca->epoch_start, now_us))
			ca->epoch_start = now_us;
		ca->epoch_start = mltcp_cubic_epoch_of(ca->epoch_start);
	}
}

MLTCP_INLINE __u32 mltcp_hystart_delay_thresh(__u32 delay_min)
{
	return mltcp_clamp_u32(delay_min >> 3, MLTCP_HYSTART_DELAY_MIN_US,
			       MLTCP_HYSTART_DELAY_MAX_US);
}

/* hystart_update(): returns the detectors that found the exit (0: none). */
MLTCP_INLINE __u32 mltcp_hystart_update(struct mltcp_bictcp *ca,
					const struct mltcp_cubic_rtt_sample *s,
					__u32 delay)
{
	__u32 found = 0, threshold;

	if (mltcp_cubic_after(s->snd_una, ca->end_seq))
		mltcp_hystart_reset(ca, s->now_us, s->snd_nxt);

	/* HyStart triggers when cwnd is larger than some threshold. */
	if (s->cwnd < MLTCP_HYSTART_LOW_WINDOW)
		return 0;

	/* First detector: the ack train (acks closer than 2 ms apart). */
	if ((__s32)(s->now_us - ca->last_ack) <= MLTCP_HYSTART_ACK_DELTA_US) {
		ca->last_ack = s->now_us;
		threshold = ca->delay_min + s->ack_delay_us;
		/* Pacing might have delayed packets up to RTT/2 in slow start. */
		if (!s->paced)
			threshold >>= 1;
		/* tcp_cubic compares (s32) with u32: an unsigned comparison. */
		if (s->now_us - ca->round_start > threshold) {
			ca->found = 1;
			found |= MLTCP_HYSTART_FOUND_TRAIN;
		}
	}

	/* Second detector: the round's min RTT rose above delay_min. */
	if (ca->curr_rtt > delay)
		ca->curr_rtt = delay;
	if (ca->sample_cnt < MLTCP_HYSTART_MIN_SAMPLES) {
		ca->sample_cnt++;
	} else if (ca->curr_rtt > ca->delay_min +
		   mltcp_hystart_delay_thresh(ca->delay_min)) {
		ca->found = 1;
		found |= MLTCP_HYSTART_FOUND_DELAY;
	}
	return found;
}

/*
 * cubictcp_acked(): an RTT sample.  Updates delay_min and runs HyStart in
 * slow start; returns what HyStart found (the caller then sets ssthresh to
 * cwnd, as tcp_cubic does, and counts it).
 */
MLTCP_INLINE __u32 mltcp_bictcp_on_rtt(struct mltcp_bictcp *ca,
				      const struct mltcp_cubic_rtt_sample *s)
{
	__u32 delay;

	if (s->rtt_us < 0)
		return 0;	/* duplicates without timestamps */
	/* Discard delay samples right after fast recovery. */
	if (ca->epoch_start &&
	    (__s32)(s->now_us - ca->epoch_start) < (__s32)MLTCP_CUBIC_USEC_PER_SEC)
		return 0;
	delay = s->rtt_us ? (__u32)s->rtt_us : 1;
	if (ca->delay_min == 0 || ca->delay_min > delay)
		ca->delay_min = delay;
	if (!ca->found && s->in_slow_start)
		return mltcp_hystart_update(ca, s, delay);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* One MLTCP-CUBIC flow: the tracker and CUBIC's state (104 bytes, all
 * of inet_csk_ca() on 6.x kernels).  F is computed on every update: there is no
 * room for the per-ack cache next to CUBIC's 60 bytes. */

struct mltcp_cubic_flow {
	struct mltcp_iter it;
	struct mltcp_bictcp bic;
	__u32 adapter_word;	/* the padding to 104 bytes, free for the datapath
				 * (BPF keeps its window guard's mark here) */
};

MLTCP_INLINE void mltcp_cubic_flow_init(struct mltcp_cubic_flow *f, __u64 acked_total,
					__u32 now_us, __u32 snd_nxt)
{
	mltcp_iter_init(&f->it, acked_total, now_us);
	mltcp_bictcp_init(&f->bic, now_us, snd_nxt);
	f->adapter_word = 0;
}

/* w for tcp_cong_avoid_ai() after slow start (cubictcp_cong_avoid). */
MLTCP_INLINE __u32 mltcp_cubic_flow_ai_w(struct mltcp_cubic_flow *f,
					 const struct mltcp_params *p, __u32 cwnd,
					 __u32 acked, __u32 now_us)
{
	return mltcp_bictcp_cong_avoid(&f->bic, cwnd, acked, now_us,
				      mltcp_cubic_gain(&f->it, p));
}

/* .ssthresh: a loss with cwnd segments (bictcp_recalc_ssthresh); the
 * decrease takes F without the norm, which scales the growth only. */
MLTCP_INLINE __u32 mltcp_cubic_flow_ssthresh(struct mltcp_cubic_flow *f,
					     const struct mltcp_params *p, __u32 cwnd)
{
	return mltcp_bictcp_ssthresh(&f->bic, cwnd, mltcp_gain(&f->it, p), p,
				     mltcp_iter_two_way(&f->it, p));
}

/* CA_EVENT_TX_START, before the tracker sees it: the epoch moves by the
 * idle time since the flow's last acked progress. */
MLTCP_INLINE void mltcp_cubic_flow_tx_start(struct mltcp_cubic_flow *f, __u32 now_us)
{
	mltcp_bictcp_on_tx_start(&f->bic, now_us,
				mltcp_elapsed_us(f->it.last_active_us, now_us));
}

/* At a transmit start with nothing in flight, after the tracker: the
 * window the iteration starts with (mltcp_start_cwnd; the datapath sets
 * cwnd and ssthresh to it when lower, as mltcp_window_start).  A drained
 * window ends CUBIC's epoch as a loss does, with W_max the window it came
 * from: a new epoch grows from the drained window at the iteration's F.
 * For datapaths that keep CUBIC and the tracker apart (ns-3). */
MLTCP_INLINE __u32 mltcp_bictcp_start_cwnd(struct mltcp_bictcp *ca, struct mltcp_iter *it,
					   const struct mltcp_params *p, __u32 cwnd, __u32 mss,
					   __u32 min_rtt_us, __u32 srtt_us, __u64 acked_total,
					   __u64 received_total, const struct mltcp_traffic *job)
{
	__u32 start = mltcp_start_cwnd(it, p, cwnd, mss, min_rtt_us, srtt_us, acked_total,
				       received_total, job);

	if (start < cwnd)
		mltcp_bictcp_on_loss(ca, cwnd);
	return start;
}

MLTCP_INLINE __u32 mltcp_cubic_flow_start_cwnd(struct mltcp_cubic_flow *f,
					       const struct mltcp_params *p, __u32 cwnd,
					       __u32 mss, __u32 min_rtt_us, __u32 srtt_us,
					       __u64 acked_total, __u64 received_total,
					       const struct mltcp_traffic *job)
{
	return mltcp_bictcp_start_cwnd(&f->bic, &f->it, p, cwnd, mss, min_rtt_us, srtt_us,
				       acked_total, received_total, job);
}

/* The window must not grow now (mltcp_tail_hold): checked before slow start. */
MLTCP_INLINE int mltcp_cubic_flow_hold(const struct mltcp_cubic_flow *f,
				       const struct mltcp_params *p, __u32 cwnd, __u32 mss)
{
	return mltcp_tail_hold(&f->it, p, cwnd, mss);
}

/* cubictcp_cong_avoid() on a struct mltcp_window, for datapaths that keep
 * their own window; the caller has checked that the flow is cwnd-limited. */
MLTCP_INLINE void mltcp_cubic_flow_cong_avoid(struct mltcp_cubic_flow *f,
					      const struct mltcp_params *p,
					      struct mltcp_window *w, __u32 acked,
					      __u32 now_us, __u32 mss)
{
	if (mltcp_cubic_flow_hold(f, p, w->cwnd, mss))
		return;
	if (mltcp_window_in_slow_start(w)) {
		acked = mltcp_window_slow_start(w, acked);
		if (!acked)
			return;
	}
	mltcp_window_cong_avoid_ai(w, mltcp_cubic_flow_ai_w(f, p, w->cwnd, acked, now_us),
				   acked);
}

#endif /* MLTCP_CUBIC_H */
