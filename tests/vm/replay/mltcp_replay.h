/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * mltcp_replay.h - record formats of the same-input agreement test: an event
 * sequence (what a congestion control sees: acks, transmit starts after idle,
 * hints, on/off switch) and the decisions the core makes for each event.
 * The same events go through the core in userspace (mltcp_replay.cpp) and in
 * the guest kernel (mltcp_replay_kmod.c); the two decision files must be
 * byte-identical.  Fixed-size little-endian records, both sides x86_64.
 */
#ifndef MLTCP_REPLAY_H
#define MLTCP_REPLAY_H

#include <linux/types.h>

enum mltcp_replay_kind {
	MLTCP_REPLAY_ACK	= 0,	/* mltcp_iter_on_ack */
	MLTCP_REPLAY_TX_START	= 1,	/* mltcp_iter_on_tx_start */
	MLTCP_REPLAY_HINT	= 2,	/* mltcp_iter_hint(bytes) */
	MLTCP_REPLAY_ENABLE	= 3,	/* params.enabled = bytes */
	MLTCP_REPLAY_INIT	= 4,	/* mltcp_iter_init + mltcp_iter_seed: a new flow */
};

struct mltcp_replay_event {
	__u32 kind;		/* enum mltcp_replay_kind */
	__u32 now_us;		/* tcp_mstamp, wrapping */
	__u64 acked_total;	/* tcp_sock->bytes_acked */
	__u64 bytes;		/* HINT: iteration size; ENABLE: 0 or 1 */
	__u32 srtt_us;		/* TX_START: smoothed RTT */
	__u32 cwnd;		/* window the decision is evaluated for */
	__u32 cubic_cnt;	/* raw CUBIC ca->cnt to scale */
	__u32 seed;		/* INIT: mltcp_iter_seed's random value */
};

struct mltcp_replay_decision {
	__u32 seq;		/* event index */
	__u32 boundary;		/* TX_START: 1 if it started an iteration */
	__u32 ratio;		/* mltcp_iter_ratio */
	__u32 gain;		/* mltcp_gain */
	__u32 reno_w;		/* mltcp_reno_ai_w(cwnd, gain) */
	__u32 cubic_cnt;	/* mltcp_cubic_cnt(cubic_cnt, gain) */
	__u32 threshold_us;	/* mltcp_idle_threshold_us(srtt_us) */
	__u32 iterations;
	__u32 hinted;
	__u32 gap_ewma_us;
	__u64 iter_bytes;
	__u64 bytes_per_iter;
	__u32 flags;
	__u32 reno_w_cached;	/* mltcp_reno_ai_w_cached(cache, cwnd) */
};

/* One flow as a datapath keeps it: tracker plus Reno's per-ack cache. */
struct mltcp_replay_flow {
	struct mltcp_iter it;
	struct mltcp_reno_cache cache;
};

#define MLTCP_REPLAY_EVENT_SIZE		40
#define MLTCP_REPLAY_DECISION_SIZE	64

/*
 * Apply one event to a flow and record the decisions.  Included by both
 * sides after mltcp.h, so both run the same calls in the same order; only
 * the compiler and the world (kbuild flags, div64_u64 vs '/') differ.
 */
static inline void mltcp_replay_step(struct mltcp_replay_flow *fl,
				     struct mltcp_params *p,
				     const struct mltcp_replay_event *ev,
				     __u32 seq,
				     struct mltcp_replay_decision *d)
{
	struct mltcp_iter *it = &fl->it;
	__u32 boundary = 0;

	switch (ev->kind) {
	case MLTCP_REPLAY_ACK:
		mltcp_iter_on_ack(it, ev->acked_total, ev->now_us);
		break;
	case MLTCP_REPLAY_TX_START:
		boundary = (__u32)mltcp_iter_on_tx_start(it, p, ev->acked_total,
							 ev->now_us, ev->srtt_us);
		break;
	case MLTCP_REPLAY_HINT:
		mltcp_iter_hint(it, ev->acked_total, ev->bytes, ev->now_us);
		break;
	case MLTCP_REPLAY_ENABLE:
		p->enabled = ev->bytes ? 1 : 0;
		break;
	default:
		mltcp_iter_init(it, ev->acked_total, ev->now_us);
		mltcp_iter_seed(it, p, ev->seed);
		mltcp_reno_cache_init(&fl->cache);
		break;
	}
	d->seq = seq;
	d->boundary = boundary;
	d->ratio = mltcp_iter_ratio(it);
	d->gain = mltcp_gain(it, p);
	d->reno_w = mltcp_reno_ai_w(ev->cwnd, d->gain);
	d->cubic_cnt = mltcp_cubic_cnt(ev->cubic_cnt, d->gain);
	d->threshold_us = mltcp_idle_threshold_us(it, p, ev->srtt_us);
	d->iterations = it->iterations;
	d->hinted = it->hinted;
	d->gap_ewma_us = it->gap_ewma_us;
	d->iter_bytes = it->iter_bytes;
	d->bytes_per_iter = it->bytes_per_iter;
	d->flags = it->flags;
	/* Acks drive the cached path as cong_avoid would, once per ack. */
	d->reno_w_cached = mltcp_reno_ai_w_cached(&fl->cache, it, p, ev->cwnd);
}

#endif /* MLTCP_REPLAY_H */
