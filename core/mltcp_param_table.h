/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * mltcp_param_table.h - every tunable of the policy core, once: its type,
 * field name, unit, default, allowed range (inclusive), the flows it acts on
 * and help text.
 *
 * Each row is X(type, field, unit, default, min, max, scope, help).  From
 * these lists are generated the structs (struct mltcp_params, struct
 * mltcp_dcqcn_params), their defaults, their range checks and error
 * reasons (mltcp_params.h, mltcp_dcqcn_params.h), the kernel module
 * parameters (kmod/tcp_mltcp.c), `mltcpctl set` and its help, and the
 * options of the userspace tools and the simulator (mltcp_options.hpp).
 * Adding a parameter is one row here plus its use.
 *
 * Default, min and max are plain decimal literals so that they can also be
 * turned into text (help and error messages) by the preprocessor.  Rules
 * that relate two fields (gain_min <= gain_max, ...) are not expressible
 * per row; they are written out in the validate functions.
 *
 * Gain values are in units of 1/1024 (1024 = 1.0, MLTCP_GAIN_ONE).
 */
#ifndef MLTCP_PARAM_TABLE_H
#define MLTCP_PARAM_TABLE_H

#include "mltcp_compat.h"

/*
 * The scope column: which flows a row acts on.  A tool takes and lists only
 * the rows of the flows it drives (mltcp_options.hpp), so that its --help
 * tells what acts and a setting that would act on nothing is refused rather
 * than ignored.  The kernel module keeps a parameter per row; the
 * description of a job row says that it does nothing there.
 */
#define MLTCP_PS_RATE	1U	/* rate flows: DCQCN QPs */
#define MLTCP_PS_WINDOW	2U	/* window flows: Reno and CUBIC */
#define MLTCP_PS_JOB	4U	/* jobs of several connections (BPF: an attached cgroup) */
#define MLTCP_PS_GAIN	(MLTCP_PS_RATE | MLTCP_PS_WINDOW)	/* F and the iteration tracking */

/*
 * F(r) = intercept + slope * r, clamped to [gain_min, gain_max]; a window
 * flow (Reno, CUBIC) uses N F(r), N its base's norm (normalize, derived by
 * mltcp_params_derive()).  slope / intercept sets how fast jobs drift apart
 * (docs/design.md, "Convergence"), N that they lose nothing to non-MLTCP
 * traffic ("Coexistence").  An iteration boundary is an idle gap longer than
 * clamp(max(idle_rtt_mult * srtt, MLTCP_GAP_MULT * intra-phase gap EWMA),
 * idle_min_us, idle_max_us).
 */
#define MLTCP_PARAMS_TABLE(X)						\
	X(__u32, enabled, "0/1", 1, 0, 1, MLTCP_PS_GAIN,		\
	  "1: scale window growth (DCQCN: the rate increase steps) by F; 0: every flow gets the neutral gain") \
	X(__u32, slope, "1/1024", 1536, 0, 8192, MLTCP_PS_GAIN,		\
	  "F slope over bytes_ratio")					\
	X(__u32, intercept, "1/1024", 256, 16, 4096, MLTCP_PS_GAIN,	\
	  "F at bytes_ratio 0")						\
	X(__u32, gain_min, "1/1024", 64, 16, 1024, MLTCP_PS_GAIN,	\
	  "lower clamp of F")						\
	X(__u32, gain_max, "1/1024", 4096, 1024, 16384, MLTCP_PS_GAIN,	\
	  "upper clamp of F")						\
	X(__u32, idle_min_us, "us", 2000, 50, 10000000, MLTCP_PS_GAIN,	\
	  "lower bound of the iteration-boundary idle gap")		\
	X(__u32, idle_max_us, "us", 50000, 50, 10000000, MLTCP_PS_GAIN,	\
	  "upper bound of the iteration-boundary idle gap")		\
	X(__u32, idle_rtt_mult, "srtt", 8, 1, 64, MLTCP_PS_GAIN,	\
	  "idle gap is at least this many smoothed RTTs")		\
	X(__u32, scale_decrease, "0/1", 1, 0, 1, MLTCP_PS_WINDOW,	\
	  "1: a loss keeps beta*F of cwnd, within [beta*decrease_floor/1024, (1+beta)/2]; 0: the base's beta") \
	X(__u32, decrease_floor, "1/1024", 512, 256, 1024, MLTCP_PS_WINDOW, \
	  "the scaled decrease keeps at least this fraction of the base's beta: 512 = beta/2; 1024: never below the base, only F above 1 keeps more") \
	X(__u32, tail_windows, "windows", 2, 0, 16, MLTCP_PS_WINDOW,	\
	  "no window growth while the iteration's remaining bytes fit in this many windows; 0: off") \
	X(__u32, tail_share, "1/1024", 64, 1, 1024, MLTCP_PS_WINDOW,	\
	  "the tail hold covers at most this share of the iteration's bytes, so it shrinks where a phase is only a few windows") \
	X(__u32, first_seed, "0/1", 1, 0, 1, MLTCP_PS_GAIN,		\
	  "1: a flow's first iteration (unsized, or from its first hint to the next; not for a hinted DCQCN QP) runs at a random bytes ratio (breaks ties); 0: no stand-in") \
	X(__u32, normalize, "0/1", 1, 0, 1, MLTCP_PS_WINDOW,		\
	  "1: F times the base's norm, so that a window flow is as aggressive as its base on average; 0: F as given") \
	X(__u32, cubic_norm_excess, "1/1024", 1536, 0, 8192, MLTCP_PS_WINDOW, \
	  "CUBIC's norm is 1 + cubic_norm_excess/1024 times the model's excess over 1 (the model, made for AIMD, misjudges CUBIC; 1536 measured at decrease_floor 512); 0: CUBIC's norm is 1") \
	X(__u32, start_drain_windows, "windows", 32, 0, 1024, MLTCP_PS_WINDOW, \
	  "an iteration of at least this many drained windows starts from the part of the window that was not queue (the drained window: cwnd * min_rtt / srtt, at least 4 segments; ssthresh too; not on a connection that carries its peer's data as well); 0: off, the window carries over") \
	X(__u32, job_gap, "0/1", 1, 0, 1, MLTCP_PS_JOB,			\
	  "1: a connection of a job (BPF: the attached cgroup) counts an idle gap only as far as its whole job was idle; 0: its own gap") \
	X(__u32, job_two_way, "0/1", 1, 0, 1, MLTCP_PS_JOB,		\
	  "1: no start drain for a connection whose job (BPF: the attached cgroup) received more than a quarter of what it had acked since the connection's previous transmit start (a ring all-reduce's one-way connections); 0: only the connection's own counters count") \
	X(__u32, two_way_decrease, "0/1", 1, 0, 1, MLTCP_PS_WINDOW,	\
	  "1: an iteration that carries its peer's data as well (the start drain's two-way test) keeps at least its base's beta at a loss and grows with the two-way norm; 0: every iteration takes the whole scaled decrease (down to beta * decrease_floor / 1024)")

/* DCQCN (Zhu et al., SIGCOMM 2015); defaults are the paper's 40 Gbit/s
 * settings (docs/design.md). */
#define MLTCP_DCQCN_PARAMS_TABLE(X)					\
	X(__u64, line_rate_bps, "bit/s", 40000000000, 1000000, 1600000000000, MLTCP_PS_RATE, \
	  "line rate: R_C and R_T never exceed it")			\
	X(__u64, min_rate_bps, "bit/s", 100000000, 1, 1600000000000, MLTCP_PS_RATE, \
	  "a rate cut never goes below this (at most the line rate)")	\
	X(__u64, rai_bps, "bit/s", 40000000, 1, 1600000000000, MLTCP_PS_RATE, \
	  "additive increase step R_AI (at most the line rate)")	\
	X(__u64, rhai_bps, "bit/s", 200000000, 1, 1600000000000, MLTCP_PS_RATE, \
	  "hyper increase step R_HAI (from R_AI to the line rate)")	\
	X(__u64, byte_counter, "bytes", 10000000, 1024, 1099511627776, MLTCP_PS_RATE, \
	  "bytes sent per byte-counter expiry")				\
	X(__u32, g_inv, "1/g", 256, 2, 65536, MLTCP_PS_RATE,		\
	  "alpha EWMA gain g = 1/g_inv")				\
	X(__u32, alpha_timer_us, "us", 55, 1, 1000000, MLTCP_PS_RATE,	\
	  "alpha decay period")						\
	X(__u32, rate_timer_us, "us", 55, 1, 1000000, MLTCP_PS_RATE,	\
	  "rate increase timer period")					\
	X(__u32, fr_stages, "stages", 5, 0, 64, MLTCP_PS_RATE,		\
	  "fast recovery stages F")					\
	X(__u32, cnp_interval_us, "us", 50, 0, 1000000, MLTCP_PS_RATE,	\
	  "notification point: minimum gap between two CNPs of a flow")

/* Helpers for the generators. */
#define MLTCP_PT_STR_(x)	#x
#define MLTCP_PT_STR(x)		MLTCP_PT_STR_(x)

/* A struct field. */
#define MLTCP_PT_FIELD(type, field, unit, def, lo, hi, scope, help)	type field;
/* The default, as one element of a positional initializer (C++17 has no
 * designated initializers; the struct is generated in the same order). */
#define MLTCP_PT_INIT(type, field, unit, def, lo, hi, scope, help)	(type)(def),
/* "slope must be in [0, 8192] 1/1024" */
#define MLTCP_PT_REASON(type, field, unit, def, lo, hi, scope, help)	\
	#field " must be in [" #lo ", " #hi "] " unit,
/* "F slope over bytes_ratio (1/1024, 0..8192, default 1536)" */
#define MLTCP_PT_DESC(field, unit, def, lo, hi, help)			\
	help " (" unit ", " #lo ".." #hi ", default " #def ")"

MLTCP_INLINE int mltcp_pt_in_range(__u64 v, __u64 lo, __u64 hi)
{
	return v >= lo && v <= hi;
}

/* Reason of validation error e when it is a row's range error (e = row
 * index + 1, as the generated enums number them), else 0. */
MLTCP_INLINE const char *mltcp_pt_row_reason(const char *const *rows,
					     unsigned int n, unsigned int e)
{
	return e >= 1 && e <= n ? rows[e - 1] : (const char *)0;
}

#endif /* MLTCP_PARAM_TABLE_H */
