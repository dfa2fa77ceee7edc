/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * mltcp_window.h - how the gain F changes a window-based congestion control.
 *
 * Reno: congestion avoidance grows cwnd by one segment per w segments acked
 * (tcp_cong_avoid_ai(tp, w, acked) with w = cwnd).  MLTCP passes
 * w = cwnd / F, so the window grows F segments per RTT instead of one.
 *
 * CUBIC: bictcp_update() computes ca->cnt, the number of acks per one-segment
 * increase, from the cubic curve and the TCP-friendly estimate.  MLTCP
 * divides that cnt by F, which scales the growth speed in every CUBIC region
 * (concave, convex, TCP-friendly) by F while leaving the curve's origin
 * (W_max, K) and the multiplicative decrease (beta) untouched: the decrease
 * is what keeps competing flows fair, the growth speed is what MLTCP steers.
 * Slow start is never scaled (F only acts in congestion avoidance).
 */
#ifndef MLTCP_WINDOW_H
#define MLTCP_WINDOW_H

#include "mltcp_compat.h"
#include "mltcp_params.h"

/* Smallest ca->cnt bictcp_update() allows: at most 1.5x growth per RTT. */
#define MLTCP_CUBIC_CNT_MIN	2U

/* Acks per one-segment increase, scaled: n * ONE / gain, at least min. */
MLTCP_INLINE __u32 mltcp_scale_acks_per_inc(__u32 n, __u32 gain, __u32 min)
{
	__u64 w;

	if (gain == 0)
		gain = MLTCP_GAIN_ONE;	/* never divide by zero */
	w = MLTCP_DIV64((__u64)n << MLTCP_GAIN_SHIFT, gain);
	return (__u32)mltcp_clamp_u64(w, min, MLTCP_U32_MAX);
}

/* The w to pass to tcp_cong_avoid_ai() for a Reno-based MLTCP flow. */
MLTCP_INLINE __u32 mltcp_reno_ai_w(__u32 cwnd, __u32 gain)
{
	return mltcp_scale_acks_per_inc(cwnd, gain, 1);
}

/* CUBIC's ca->cnt after MLTCP scaling (applied before its own max(cnt, 2)). */
MLTCP_INLINE __u32 mltcp_cubic_cnt(__u32 cnt, __u32 gain)
{
	return mltcp_scale_acks_per_inc(cnt, gain, MLTCP_CUBIC_CNT_MIN);
}

#endif /* MLTCP_WINDOW_H */
