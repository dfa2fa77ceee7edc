/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * mltcp_params.h - MLTCP policy parameters: fixed-point scales, defaults,
 * allowed ranges and the validation every datapath runs before it accepts a
 * value (module parameter write, BPF config map update, tool option).
 *
 * Fixed point follows tcp_dctcp.c / tcp_cubic.c: a named shift per scale.
 * The gain F and the bytes ratio are both kept in units of 1/1024.
 * See docs/design.md for why each default was chosen.
 */
#ifndef MLTCP_PARAMS_H
#define MLTCP_PARAMS_H

#include "mltcp_compat.h"

#define MLTCP_GAIN_SHIFT	10
#define MLTCP_GAIN_ONE		(1U << MLTCP_GAIN_SHIFT)	/* F = 1.0: neutral */
#define MLTCP_RATIO_SHIFT	10
#define MLTCP_RATIO_ONE		(1U << MLTCP_RATIO_SHIFT)	/* bytes_ratio = 1.0 */

/*
 * Defaults: F(r) = 0.25 + 1.5 * r.  Its mean over an iteration (r uniform in
 * bytes from 0 to 1) is 0.25 + 1.5/2 = 1.0, so an MLTCP flow is on average as
 * aggressive as its base algorithm, and slope/intercept = 6 makes a small
 * start-time gap grow about 7x per iteration (docs/design.md, "Convergence").
 */
#define MLTCP_DEF_SLOPE		1536U	/* 1.5  */
#define MLTCP_DEF_INTERCEPT	256U	/* 0.25 */
#define MLTCP_DEF_GAIN_MIN	64U	/* 1/16 */
#define MLTCP_DEF_GAIN_MAX	4096U	/* 4.0  */

/*
 * Iteration boundary = an idle gap longer than
 *   clamp(max(idle_rtt_mult * srtt, MLTCP_GAP_MULT * intra-phase gap EWMA),
 *         idle_min_us, idle_max_us).
 */
#define MLTCP_DEF_IDLE_MIN_US	2000U		/* 2 ms   */
#define MLTCP_DEF_IDLE_MAX_US	50000U		/* 50 ms  */
#define MLTCP_DEF_IDLE_RTT_MULT	8U
#define MLTCP_DEF_SCALE_DECREASE 1U	/* F also scales the window kept after a loss */

/* Allowed ranges (inclusive), enforced by mltcp_params_validate(). */
#define MLTCP_SLOPE_MAX		(8U * MLTCP_GAIN_ONE)
#define MLTCP_INTERCEPT_MIN	(MLTCP_GAIN_ONE / 64)
#define MLTCP_INTERCEPT_MAX	(4U * MLTCP_GAIN_ONE)
#define MLTCP_GAIN_MIN_MIN	(MLTCP_GAIN_ONE / 64)
#define MLTCP_GAIN_MAX_MAX	(16U * MLTCP_GAIN_ONE)
#define MLTCP_IDLE_US_MIN	50U		/* 50 us */
#define MLTCP_IDLE_US_MAX	10000000U	/* 10 s  */
#define MLTCP_IDLE_RTT_MULT_MAX	64U

struct mltcp_params {
	__u32 enabled;		/* 0: every flow uses the neutral gain */
	__u32 slope;		/* F slope, GAIN units */
	__u32 intercept;	/* F at bytes_ratio 0, GAIN units */
	__u32 gain_min;		/* lower clamp of F, GAIN units */
	__u32 gain_max;		/* upper clamp of F, GAIN units */
	__u32 idle_min_us;	/* lower bound of the boundary idle threshold */
	__u32 idle_max_us;	/* upper bound of the boundary idle threshold */
	__u32 idle_rtt_mult;	/* threshold is at least this many smoothed RTTs */
	__u32 scale_decrease;	/* 1: loss keeps beta*F of cwnd (mltcp_window.h) */
};

MLTCP_INLINE void mltcp_params_default(struct mltcp_params *p)
{
	p->enabled = 1;
	p->slope = MLTCP_DEF_SLOPE;
	p->intercept = MLTCP_DEF_INTERCEPT;
	p->gain_min = MLTCP_DEF_GAIN_MIN;
	p->gain_max = MLTCP_DEF_GAIN_MAX;
	p->idle_min_us = MLTCP_DEF_IDLE_MIN_US;
	p->idle_max_us = MLTCP_DEF_IDLE_MAX_US;
	p->idle_rtt_mult = MLTCP_DEF_IDLE_RTT_MULT;
	p->scale_decrease = MLTCP_DEF_SCALE_DECREASE;
}

/* Validation results; mltcp_params_reason() turns one into text. */
enum mltcp_param_error {
	MLTCP_PARAM_OK = 0,
	MLTCP_PARAM_BAD_ENABLED,
	MLTCP_PARAM_BAD_SLOPE,
	MLTCP_PARAM_BAD_INTERCEPT,
	MLTCP_PARAM_BAD_GAIN_MIN,
	MLTCP_PARAM_BAD_GAIN_MAX,
	MLTCP_PARAM_GAIN_MIN_ABOVE_MAX,
	MLTCP_PARAM_BAD_IDLE_MIN,
	MLTCP_PARAM_BAD_IDLE_MAX,
	MLTCP_PARAM_IDLE_MIN_ABOVE_MAX,
	MLTCP_PARAM_BAD_IDLE_RTT_MULT,
	MLTCP_PARAM_BAD_SCALE_DECREASE,
};

MLTCP_INLINE enum mltcp_param_error
mltcp_params_validate(const struct mltcp_params *p)
{
	if (p->enabled > 1)
		return MLTCP_PARAM_BAD_ENABLED;
	if (p->slope > MLTCP_SLOPE_MAX)
		return MLTCP_PARAM_BAD_SLOPE;
	if (p->intercept < MLTCP_INTERCEPT_MIN || p->intercept > MLTCP_INTERCEPT_MAX)
		return MLTCP_PARAM_BAD_INTERCEPT;
	if (p->gain_min < MLTCP_GAIN_MIN_MIN || p->gain_min > MLTCP_GAIN_ONE)
		return MLTCP_PARAM_BAD_GAIN_MIN;
	if (p->gain_max < MLTCP_GAIN_ONE || p->gain_max > MLTCP_GAIN_MAX_MAX)
		return MLTCP_PARAM_BAD_GAIN_MAX;
	if (p->gain_min > p->gain_max)
		return MLTCP_PARAM_GAIN_MIN_ABOVE_MAX;
	if (p->idle_min_us < MLTCP_IDLE_US_MIN || p->idle_min_us > MLTCP_IDLE_US_MAX)
		return MLTCP_PARAM_BAD_IDLE_MIN;
	if (p->idle_max_us < MLTCP_IDLE_US_MIN || p->idle_max_us > MLTCP_IDLE_US_MAX)
		return MLTCP_PARAM_BAD_IDLE_MAX;
	if (p->idle_min_us > p->idle_max_us)
		return MLTCP_PARAM_IDLE_MIN_ABOVE_MAX;
	if (p->idle_rtt_mult < 1 || p->idle_rtt_mult > MLTCP_IDLE_RTT_MULT_MAX)
		return MLTCP_PARAM_BAD_IDLE_RTT_MULT;
	if (p->scale_decrease > 1)
		return MLTCP_PARAM_BAD_SCALE_DECREASE;
	return MLTCP_PARAM_OK;
}

#if !defined(__bpf__)
/* Human-readable reason, naming the allowed range (not used from BPF). */
MLTCP_INLINE const char *mltcp_params_reason(enum mltcp_param_error e)
{
	switch (e) {
	case MLTCP_PARAM_OK:
		return "ok";
	case MLTCP_PARAM_BAD_ENABLED:
		return "enabled must be 0 or 1";
	case MLTCP_PARAM_BAD_SLOPE:
		return "slope must be in [0, 8192] (units of 1/1024, i.e. 0..8.0)";
	case MLTCP_PARAM_BAD_INTERCEPT:
		return "intercept must be in [16, 4096] (units of 1/1024, i.e. 1/64..4.0)";
	case MLTCP_PARAM_BAD_GAIN_MIN:
		return "gain_min must be in [16, 1024] (units of 1/1024, i.e. 1/64..1.0)";
	case MLTCP_PARAM_BAD_GAIN_MAX:
		return "gain_max must be in [1024, 16384] (units of 1/1024, i.e. 1.0..16.0)";
	case MLTCP_PARAM_GAIN_MIN_ABOVE_MAX:
		return "gain_min must not exceed gain_max";
	case MLTCP_PARAM_BAD_IDLE_MIN:
		return "idle_min_us must be in [50, 10000000]";
	case MLTCP_PARAM_BAD_IDLE_MAX:
		return "idle_max_us must be in [50, 10000000]";
	case MLTCP_PARAM_IDLE_MIN_ABOVE_MAX:
		return "idle_min_us must not exceed idle_max_us";
	case MLTCP_PARAM_BAD_IDLE_RTT_MULT:
		return "idle_rtt_mult must be in [1, 64]";
	case MLTCP_PARAM_BAD_SCALE_DECREASE:
		return "scale_decrease must be 0 or 1";
	}
	return "unknown parameter error";
}
#endif

#endif /* MLTCP_PARAMS_H */
