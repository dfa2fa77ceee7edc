/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * mltcp_reno.h - the Reno step with the MLTCP gain, and the window
 * arithmetic of Linux's net/ipv4/tcp_cong.c for datapaths that keep their
 * own window (the DPDK transport, the agreement test's reference).
 *
 * The kernel module and BPF call the kernel's own tcp_slow_start() and
 * tcp_cong_avoid_ai() on the socket instead of struct mltcp_window: the
 * window lives in tcp_sock there.  mltcp_window_slow_start() and
 * mltcp_window_cong_avoid_ai() are those two functions of Linux 6.1 on a
 * struct of the same four fields, so every datapath grows a window alike
 * (the agreement test, tests/vm/replay, holds them to it).
 *
 * MLTCP-Reno: congestion avoidance grows cwnd F segments per RTT (w =
 * cwnd / F through the per-ack cache, mltcp_reno_ai_w_cached) and a loss
 * keeps cwnd * F/2 (mltcp_decrease_beta); slow start is never scaled; in
 * the iteration's last windows the window does not grow (mltcp_tail_hold);
 * an iteration starts from the part of the window that was not queue
 * (mltcp_start_cwnd).
 */
#ifndef MLTCP_RENO_H
#define MLTCP_RENO_H

#include "mltcp_compat.h"
#include "mltcp_params.h"
#include "mltcp_iter.h"
#include "mltcp_window.h"

/* A window in segments, as tcp_sock keeps it. */
struct mltcp_window {
	__u32 cwnd;		/* snd_cwnd */
	__u32 ssthresh;		/* snd_ssthresh */
	__u32 cwnd_cnt;		/* snd_cwnd_cnt: acks towards the next increase */
	__u32 cwnd_clamp;	/* snd_cwnd_clamp */
};

#define MLTCP_INFINITE_SSTHRESH	0x7fffffffU	/* TCP_INFINITE_SSTHRESH */

MLTCP_INLINE void mltcp_window_init(struct mltcp_window *w, __u32 initial_cwnd,
				    __u32 clamp)
{
	w->cwnd = initial_cwnd;
	w->ssthresh = MLTCP_INFINITE_SSTHRESH;
	w->cwnd_cnt = 0;
	w->cwnd_clamp = clamp;
}

MLTCP_INLINE int mltcp_window_in_slow_start(const struct mltcp_window *w)
{
	return w->cwnd < w->ssthresh;
}

/* tcp_slow_start(): grow by the acked segments up to ssthresh; returns the
 * segments left over for congestion avoidance. */
MLTCP_INLINE __u32 mltcp_window_slow_start(struct mltcp_window *w, __u32 acked)
{
	__u32 cwnd = mltcp_min_u32(w->cwnd + acked, w->ssthresh);

	acked -= cwnd - w->cwnd;
	w->cwnd = mltcp_min_u32(cwnd, w->cwnd_clamp);
	return acked;
}

/* tcp_cong_avoid_ai(): one segment per `ai_w` segments acked. */
MLTCP_INLINE void mltcp_window_cong_avoid_ai(struct mltcp_window *w, __u32 ai_w,
					     __u32 acked)
{
	__u32 delta;

	if (ai_w == 0)	/* the core never asks for 0; guard the division */
		ai_w = 1;
	/* If credits accumulated at a higher w, apply them gently now. */
	if (w->cwnd_cnt >= ai_w) {
		w->cwnd_cnt = 0;
		w->cwnd++;
	}
	w->cwnd_cnt += acked;
	if (w->cwnd_cnt >= ai_w) {
		delta = w->cwnd_cnt / ai_w;
		w->cwnd_cnt -= delta * ai_w;
		w->cwnd += delta;
	}
	w->cwnd = mltcp_min_u32(w->cwnd, w->cwnd_clamp);
}

/* One MLTCP-Reno flow: the tracker and the per-ack cache of w. */
struct mltcp_reno_flow {
	struct mltcp_iter it;
	struct mltcp_reno_cache cache;
};

MLTCP_INLINE void mltcp_reno_flow_init(struct mltcp_reno_flow *f, __u64 acked_total,
				       __u32 now_us)
{
	mltcp_iter_init(&f->it, acked_total, now_us);
	mltcp_reno_cache_init(&f->cache);
}

/* w for tcp_cong_avoid_ai() in congestion avoidance (tcp_reno_cong_avoid). */
MLTCP_INLINE __u32 mltcp_reno_flow_ai_w(struct mltcp_reno_flow *f,
					const struct mltcp_params *p, __u32 cwnd)
{
	return mltcp_reno_ai_w_cached(&f->cache, &f->it, p, cwnd);
}

/* tcp_reno_ssthresh() keeping cwnd * F/2 instead of cwnd / 2, with the
 * recovery floor (mltcp_decrease_ssthresh); F without the norm, which
 * scales the growth only. */
MLTCP_INLINE __u32 mltcp_reno_flow_ssthresh(const struct mltcp_reno_flow *f,
					    const struct mltcp_params *p, __u32 cwnd)
{
	return mltcp_decrease_ssthresh(cwnd, MLTCP_RENO_BETA, mltcp_gain(&f->it, p), p,
				       mltcp_iter_two_way(&f->it, p));
}

/* The window must not grow now (mltcp_tail_hold): checked before slow start. */
MLTCP_INLINE int mltcp_reno_flow_hold(const struct mltcp_reno_flow *f,
				      const struct mltcp_params *p, __u32 cwnd, __u32 mss)
{
	return mltcp_tail_hold(&f->it, p, cwnd, mss);
}

/* At a transmit start with nothing in flight: the window the iteration
 * starts with (mltcp_start_cwnd).  When it is below cwnd the datapath sets
 * cwnd and ssthresh to it and clears the ack counter (mltcp_window_start). */
MLTCP_INLINE __u32 mltcp_reno_flow_start_cwnd(struct mltcp_reno_flow *f,
					      const struct mltcp_params *p, __u32 cwnd,
					      __u32 mss, __u32 min_rtt_us, __u32 srtt_us,
					      __u64 acked_total, __u64 received_total,
					      const struct mltcp_traffic *job)
{
	return mltcp_start_cwnd(&f->it, p, cwnd, mss, min_rtt_us, srtt_us, acked_total,
				received_total, job);
}

/* The start drain on a struct mltcp_window: cwnd and ssthresh to start, as
 * at the end of a window reduction. */
MLTCP_INLINE void mltcp_window_start(struct mltcp_window *w, __u32 start)
{
	if (start >= w->cwnd)
		return;
	w->cwnd = start;
	w->ssthresh = start;
	w->cwnd_cnt = 0;
}

/*
 * tcp_reno_cong_avoid() on a struct mltcp_window, for datapaths that keep
 * their own window; the caller has checked that the flow is cwnd-limited.
 */
MLTCP_INLINE void mltcp_reno_flow_cong_avoid(struct mltcp_reno_flow *f,
					     const struct mltcp_params *p,
					     struct mltcp_window *w, __u32 acked, __u32 mss)
{
	if (mltcp_reno_flow_hold(f, p, w->cwnd, mss))
		return;
	if (mltcp_window_in_slow_start(w)) {
		acked = mltcp_window_slow_start(w, acked);
		if (!acked)
			return;
	}
	mltcp_window_cong_avoid_ai(w, mltcp_reno_flow_ai_w(f, p, w->cwnd), acked);
}

#endif /* MLTCP_RENO_H */
