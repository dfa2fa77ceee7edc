/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * mltcp_params.h - MLTCP policy parameters: fixed-point scales, and the
 * struct, defaults and validation generated from MLTCP_PARAMS_TABLE
 * (mltcp_param_table.h) that every datapath runs before it accepts a value
 * (module parameter write, mltcpctl set, tool option).
 *
 * Fixed point follows tcp_dctcp.c / tcp_cubic.c: a named shift per scale.
 * The gain F and the bytes ratio are both kept in units of 1/1024.
 * See docs/design.md for why each default was chosen.
 */
#ifndef MLTCP_PARAMS_H
#define MLTCP_PARAMS_H

#include "mltcp_compat.h"
#include "mltcp_param_table.h"

#define MLTCP_GAIN_SHIFT	10
#define MLTCP_GAIN_ONE		(1U << MLTCP_GAIN_SHIFT)	/* F = 1.0: neutral */
#define MLTCP_RATIO_SHIFT	10
#define MLTCP_RATIO_ONE		(1U << MLTCP_RATIO_SHIFT)	/* bytes_ratio = 1.0 */

/*
 * Constants of every row of MLTCP_PARAMS_TABLE (mltcp_param_table.h), for
 * code that needs one at compile time: MLTCP_DEF_<field>, MLTCP_MIN_<field>,
 * MLTCP_MAX_<field>.  All values fit an int.
 */
#define MLTCP_PT_CONST(type, field, unit, def, lo, hi, scope, help)	\
	MLTCP_DEF_##field = (def), MLTCP_MIN_##field = (lo), MLTCP_MAX_##field = (hi),
enum mltcp_param_const { MLTCP_PARAMS_TABLE(MLTCP_PT_CONST) };
#undef MLTCP_PT_CONST

/* Names used by the datapaths and their tests. */
#define MLTCP_DEF_SLOPE		((__u32)MLTCP_DEF_slope)
#define MLTCP_DEF_INTERCEPT	((__u32)MLTCP_DEF_intercept)
#define MLTCP_DEF_GAIN_MAX	((__u32)MLTCP_DEF_gain_max)
#define MLTCP_SLOPE_MAX		((__u32)MLTCP_MAX_slope)
#define MLTCP_INTERCEPT_MIN	((__u32)MLTCP_MIN_intercept)
#define MLTCP_INTERCEPT_MAX	((__u32)MLTCP_MAX_intercept)

/*
 * The norms of the defaults, as mltcp_params_derive() computes them (a unit
 * test holds the two to each other), so that a static initializer is
 * complete.
 */
#define MLTCP_DEF_NORM_RENO	1768U
#define MLTCP_DEF_NORM_CUBIC	3092U
#define MLTCP_DEF_NORM_RENO_TWO_WAY	1189U
#define MLTCP_DEF_NORM_CUBIC_TWO_WAY	1223U

struct mltcp_params {
	MLTCP_PARAMS_TABLE(MLTCP_PT_FIELD)
	/* Derived from the fields above by mltcp_params_derive(), never set
	 * on their own: the factor on F that makes a window flow as aggressive
	 * as its base on average (GAIN units; 1024 with normalize = 0), for
	 * an iteration with the scaled decrease and for one that keeps its
	 * base's beta (mltcp_iter_two_way). */
	__u32 norm_reno;
	__u32 norm_cubic;
	__u32 norm_reno_two_way;
	__u32 norm_cubic_two_way;
};

/* Static initializer with every default: struct mltcp_params p = MLTCP_PARAMS_INIT; */
#define MLTCP_PARAMS_INIT \
	{ MLTCP_PARAMS_TABLE(MLTCP_PT_INIT) MLTCP_DEF_NORM_RENO, MLTCP_DEF_NORM_CUBIC, \
	  MLTCP_DEF_NORM_RENO_TWO_WAY, MLTCP_DEF_NORM_CUBIC_TWO_WAY }

MLTCP_INLINE void mltcp_params_default(struct mltcp_params *p)
{
	const struct mltcp_params def = MLTCP_PARAMS_INIT;

	*p = def;
}

/*
 * Validation results: MLTCP_PARAM_BAD_<field> (value outside its row's
 * range) in table order, then the rules between fields.
 * mltcp_params_reason() turns one into text.
 */
#define MLTCP_PT_ERR(type, field, unit, def, lo, hi, scope, help) MLTCP_PARAM_BAD_##field,
enum mltcp_param_error {
	MLTCP_PARAM_OK = 0,
	MLTCP_PARAMS_TABLE(MLTCP_PT_ERR)
	MLTCP_PARAM_GAIN_MIN_ABOVE_MAX,
	MLTCP_PARAM_IDLE_MIN_ABOVE_MAX,
};
#undef MLTCP_PT_ERR

MLTCP_INLINE enum mltcp_param_error
mltcp_params_validate(const struct mltcp_params *p)
{
#define MLTCP_PT_CHECK(type, field, unit, def, lo, hi, scope, help)	\
	if (!mltcp_pt_in_range(p->field, (lo), (hi)))			\
		return MLTCP_PARAM_BAD_##field;
	MLTCP_PARAMS_TABLE(MLTCP_PT_CHECK)
#undef MLTCP_PT_CHECK
	if (p->gain_min > p->gain_max)
		return MLTCP_PARAM_GAIN_MIN_ABOVE_MAX;
	if (p->idle_min_us > p->idle_max_us)
		return MLTCP_PARAM_IDLE_MIN_ABOVE_MAX;
	return MLTCP_PARAM_OK;
}

#if !defined(__bpf__)
/* Human-readable reason naming the parameter, its range and unit. */
MLTCP_INLINE const char *mltcp_params_reason(enum mltcp_param_error e)
{
	static const char *const range[] = { MLTCP_PARAMS_TABLE(MLTCP_PT_REASON) };
	const char *why = mltcp_pt_row_reason(range, sizeof(range) / sizeof(range[0]),
					      (unsigned int)e);

	if (why)
		return why;
	switch (e) {
	case MLTCP_PARAM_OK:
		return "ok";
	case MLTCP_PARAM_GAIN_MIN_ABOVE_MAX:
		return "gain_min must not exceed gain_max (1/1024)";
	case MLTCP_PARAM_IDLE_MIN_ABOVE_MAX:
		return "idle_min_us must not exceed idle_max_us (us)";
	default:
		return "unknown parameter error";
	}
}
#endif

#endif /* MLTCP_PARAMS_H */
