/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * mltcp_dcqcn_params.h - DCQCN parameters (struct mltcp_dcqcn_params), their
 * defaults and validation, generated from MLTCP_DCQCN_PARAMS_TABLE
 * (mltcp_param_table.h).  The algorithm that uses them is mltcp_dcqcn.h.
 */
#ifndef MLTCP_DCQCN_PARAMS_H
#define MLTCP_DCQCN_PARAMS_H

#include "mltcp_compat.h"
#include "mltcp_param_table.h"

struct mltcp_dcqcn_params {
	MLTCP_DCQCN_PARAMS_TABLE(MLTCP_PT_FIELD)
	__u32 pad;		/* keeps the size a multiple of 8 */
};

#define MLTCP_DCQCN_PARAMS_INIT { MLTCP_DCQCN_PARAMS_TABLE(MLTCP_PT_INIT) 0 }

MLTCP_INLINE void mltcp_dcqcn_params_default(struct mltcp_dcqcn_params *p)
{
	const struct mltcp_dcqcn_params def = MLTCP_DCQCN_PARAMS_INIT;

	*p = def;
}

/* MLTCP_DCQCN_PARAM_BAD_<field> in table order, then the rules between
 * fields. */
#define MLTCP_PT_ERR(type, field, unit, def, lo, hi, scope, help) MLTCP_DCQCN_PARAM_BAD_##field,
enum mltcp_dcqcn_param_error {
	MLTCP_DCQCN_PARAM_OK = 0,
	MLTCP_DCQCN_PARAMS_TABLE(MLTCP_PT_ERR)
	MLTCP_DCQCN_PARAM_MIN_RATE_ABOVE_LINE,
	MLTCP_DCQCN_PARAM_RAI_ABOVE_LINE,
	MLTCP_DCQCN_PARAM_RHAI_OUTSIDE_RAI_LINE,
};
#undef MLTCP_PT_ERR

MLTCP_INLINE enum mltcp_dcqcn_param_error
mltcp_dcqcn_params_validate(const struct mltcp_dcqcn_params *p)
{
#define MLTCP_PT_CHECK(type, field, unit, def, lo, hi, scope, help)	\
	if (!mltcp_pt_in_range(p->field, (lo), (hi)))			\
		return MLTCP_DCQCN_PARAM_BAD_##field;
	MLTCP_DCQCN_PARAMS_TABLE(MLTCP_PT_CHECK)
#undef MLTCP_PT_CHECK
	if (p->min_rate_bps > p->line_rate_bps)
		return MLTCP_DCQCN_PARAM_MIN_RATE_ABOVE_LINE;
	if (p->rai_bps > p->line_rate_bps)
		return MLTCP_DCQCN_PARAM_RAI_ABOVE_LINE;
	if (p->rhai_bps < p->rai_bps || p->rhai_bps > p->line_rate_bps)
		return MLTCP_DCQCN_PARAM_RHAI_OUTSIDE_RAI_LINE;
	return MLTCP_DCQCN_PARAM_OK;
}

#if !defined(__bpf__)
/* Human-readable reason naming the parameter, its range and unit. */
MLTCP_INLINE const char *
mltcp_dcqcn_params_reason(enum mltcp_dcqcn_param_error e)
{
	static const char *const range[] = { MLTCP_DCQCN_PARAMS_TABLE(MLTCP_PT_REASON) };
	const char *why = mltcp_pt_row_reason(range, sizeof(range) / sizeof(range[0]),
					      (unsigned int)e);

	if (why)
		return why;
	switch (e) {
	case MLTCP_DCQCN_PARAM_OK:
		return "ok";
	case MLTCP_DCQCN_PARAM_MIN_RATE_ABOVE_LINE:
		return "min_rate_bps must not exceed line_rate_bps (bit/s)";
	case MLTCP_DCQCN_PARAM_RAI_ABOVE_LINE:
		return "rai_bps must not exceed line_rate_bps (bit/s)";
	case MLTCP_DCQCN_PARAM_RHAI_OUTSIDE_RAI_LINE:
		return "rhai_bps must be in [rai_bps, line_rate_bps] (bit/s)";
	default:
		return "unknown DCQCN parameter error";
	}
}
#endif

#endif /* MLTCP_DCQCN_PARAMS_H */
