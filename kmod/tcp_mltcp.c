// SPDX-License-Identifier: GPL-2.0-only
/*
 * tcp_mltcp.c - MLTCP congestion control as a kernel module: two variants,
 * "mltcp" (Reno-based) and "mltcp_cubic" (CUBIC-based), in one module.
 *
 * A training flow scales its congestion-avoidance growth by
 * F(bytes_ratio) = intercept + slope * bytes_ratio (MLTCP, arXiv 2402.09589),
 * so that competing training jobs drift into an interleaved schedule.  All
 * policy (iteration tracking, learning bytes per iteration, F, how F scales
 * the window) comes from the shared core in core/; this file only adapts it
 * to the kernel's tcp_congestion_ops hooks:
 *
 *   in_ack_event           -> mltcp_iter_on_ack(tp->bytes_acked, tcp_mstamp)
 *   cwnd_event(TX_START)   -> mltcp_iter_on_tx_start(..., srtt_us)
 *   cong_avoid (Reno)      -> tcp_cong_avoid_ai(tp, mltcp_reno_ai_w_cached(..))
 *   cong_avoid (CUBIC)     -> bictcp_update(.., F): clock and TCP-friendly
 *                             estimate scaled by F, then
 *                             tcp_cong_avoid_ai(tp, mltcp_cubic_cnt(cnt, F))
 *
 * The "mltcp" variant follows tcp_reno_cong_avoid() (net/ipv4/tcp_cong.c).
 * The "mltcp_cubic" variant is a port of Linux 6.1's net/ipv4/tcp_cubic.c,
 * HyStart included, with these differences:
 *   - F scales CUBIC's clock (mltcp_cubic_epoch_scale moves epoch_start so
 *     that the curve advances F * dt; its sub-jiffy remainder lives in the
 *     u16 that tcp_cubic leaves unused) and the TCP-friendly estimate
 *     (mltcp_cubic_friendly_acks).
 *   - ca->cnt keeps CUBIC's raw value (before its final max(cnt, 2)); the
 *     value handed to tcp_cong_avoid_ai() is mltcp_cubic_cnt(cnt, F), which
 *     applies that max itself.  With F = 1 this is exactly CUBIC.
 *   - CUBIC's tunables (beta, bic_scale, fast_convergence, tcp_friendliness,
 *     hystart*) are fixed at tcp_cubic's defaults; they are not module
 *     parameters here.  The BPF kfunc id set of tcp_cubic is not registered.
 *   - F is computed on every update (no per-ack cache): CUBIC's 60 bytes
 *     plus the 40-byte tracker leave no room for the core's 40-byte Reno
 *     cache in the 104 bytes of inet_csk_ca().
 * Restart after idle: CUBIC's epoch shift on CA_EVENT_TX_START is kept; the
 * same event is the core's iteration-boundary check.
 * ssthresh: a loss keeps beta * F of cwnd (Reno's 1/2, CUBIC's 0.7), within
 * [beta/2, (1+beta)/2] (mltcp_decrease_beta; module parameter
 * scale_decrease=0 keeps the base's beta).  Slow start, CUBIC's W_max and
 * undo are never scaled.  With the module parameter enabled=0 the gain is
 * always neutral and both variants behave exactly like their base algorithm.
 *
 * Per-flow state is visible through getsockopt(TCP_CC_INFO) (struct
 * tcp_mltcp_info) and, for operators, the debugfs file
 * /sys/kernel/debug/tcp_mltcp/flows; see docs/kmod.md.
 */

#include <linux/module.h>
#include <linux/mm.h>
#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/inet_diag.h>
#include <net/tcp.h>
#include <net/inet_hashtables.h>

#include "mltcp.h"
#include "tcp_mltcp_info.h"

#define MLTCP_MODULE_VERSION	"0.1.0"

/* ---------------------------------------------------------------------- */
/* Module parameters: one struct mltcp_params shared by both variants.     */

/*
 * One module parameter per row of the core's MLTCP_PARAMS_TABLE
 * (core/mltcp_param_table.h), starting at the table's defaults.  Load-time
 * arguments such as "modprobe tcp_mltcp slope=..." go through
 * mltcp_param_set() like runtime writes, in the order given.
 */
static struct mltcp_params mltcp_params __read_mostly = MLTCP_PARAMS_INIT;

static DEFINE_MUTEX(mltcp_params_lock);

/* Give the field of *p that corresponds to the live field `live` value v.
 * Field by field, by address: with a store at the live field's offset into
 * the copy instead, GCC 12 validated the old value of the first field
 * (enabled=2 was accepted in the VM test). */
static void mltcp_param_assign(struct mltcp_params *p, const void *live, u32 v)
{
#define MLTCP_ASSIGN(type, field, unit, def, lo, hi, help)		\
	if (live == &mltcp_params.field)				\
		p->field = v;
	MLTCP_PARAMS_TABLE(MLTCP_ASSIGN)
#undef MLTCP_ASSIGN
}

/*
 * Set one field: parse, validate the whole parameter set with the field
 * changed, and only then publish it.  An out-of-range value fails with
 * -EINVAL and leaves the old value.
 */
static int mltcp_param_set(const char *val, const struct kernel_param *kp)
{
	struct mltcp_params candidate;
	enum mltcp_param_error err;
	unsigned int v;
	int ret;

	ret = kstrtouint(val, 0, &v);
	if (ret)
		return ret;

	mutex_lock(&mltcp_params_lock);
	candidate = mltcp_params;
	mltcp_param_assign(&candidate, kp->arg, v);
	err = mltcp_params_validate(&candidate);
	if (err == MLTCP_PARAM_OK)
		WRITE_ONCE(*(u32 *)kp->arg, v);
	mutex_unlock(&mltcp_params_lock);

	if (err != MLTCP_PARAM_OK) {
		pr_warn_ratelimited("tcp_mltcp: %s=%u rejected: %s\n",
				    kp->name, v, mltcp_params_reason(err));
		return -EINVAL;
	}
	return 0;
}

static const struct kernel_param_ops mltcp_param_ops = {
	.set = mltcp_param_set,
	.get = param_get_uint,
};

/* Every field is a u32: mltcp_param_set() parses and stores one. */
#define MLTCP_MODULE_PARAM(type, field, unit, def, lo, hi, help)		\
	static_assert(sizeof(((struct mltcp_params *)0)->field) == sizeof(u32)); \
	module_param_cb(field, &mltcp_param_ops, &mltcp_params.field, 0644);	\
	MODULE_PARM_DESC(field, MLTCP_PT_DESC(field, unit, def, lo, hi, help));
MLTCP_PARAMS_TABLE(MLTCP_MODULE_PARAM)

static const struct mltcp_params *mltcp_p(void)
{
	return &mltcp_params;
}

/* ---------------------------------------------------------------------- */
/* Glue to the core shared by both variants.                               */

static inline u32 mltcp_now_us(const struct tcp_sock *tp)
{
	return (u32)tp->tcp_mstamp;
}

static void mltcp_track_init(struct sock *sk, struct mltcp_iter *it)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	mltcp_iter_init(it, tp->bytes_acked, mltcp_now_us(tp));
}

static void mltcp_track_ack(struct sock *sk, struct mltcp_iter *it)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	mltcp_iter_on_ack(it, tp->bytes_acked, mltcp_now_us(tp));
}

static void mltcp_track_tx_start(struct sock *sk, struct mltcp_iter *it)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	/* CA_EVENT_TX_START also fires for the retransmission after an RTO
	 * (everything in flight was marked lost) and after a pause forced by
	 * the receiver's window (a slow reader; the chronograph then says
	 * RWND_LIMITED, or SNDBUF_LIMITED, which outranks it once the writer
	 * blocked): neither is the application resuming, so neither may end
	 * an iteration.  After a real pause the chronograph is UNSPEC or BUSY. */
	if (tp->packets_out || tp->chrono_type >= TCP_CHRONO_RWND_LIMITED)
		return;
	mltcp_iter_on_tx_start(it, mltcp_p(), tp->bytes_acked,
			       mltcp_now_us(tp), tp->srtt_us >> 3);
}

static void mltcp_fill_info(const struct mltcp_iter *it,
			    struct tcp_mltcp_info *info)
{
	u64 per_iter = READ_ONCE(it->bytes_per_iter);
	u32 ratio = mltcp_iter_ratio(it);

	memset(info, 0, sizeof(*info));
	info->iterations = READ_ONCE(it->iterations);
	info->iter_bytes = (u32)min_t(u64, READ_ONCE(it->iter_bytes), U32_MAX);
	info->bytes_per_iter_lo = lower_32_bits(per_iter);
	info->bytes_per_iter_hi = upper_32_bits(per_iter);
	info->gain = (u16)min_t(u32, mltcp_gain(it, mltcp_p()), U16_MAX);
	info->ratio = ratio == MLTCP_RATIO_NONE ? TCP_MLTCP_INFO_RATIO_NONE :
		      (u16)ratio;
}

/*
 * get_info for getsockopt(TCP_CC_INFO), which passes ext = ~0U.  inet_diag
 * (ss -ti) passes an 8-bit extension mask and only knows the vegas, dctcp
 * and bbr layouts; a private layout there would be misread, so that path
 * gets nothing and operators use the debugfs file instead.
 */
#define MLTCP_INFO_EXT_SOCKOPT	(1U << 31)

static size_t mltcp_info_common(const struct mltcp_iter *it, u32 ext,
				 int *attr, union tcp_cc_info *info)
{
	BUILD_BUG_ON(sizeof(struct tcp_mltcp_info) > sizeof(union tcp_cc_info));

	if (!(ext & MLTCP_INFO_EXT_SOCKOPT))
		return 0;
	mltcp_fill_info(it, (struct tcp_mltcp_info *)info);
	*attr = INET_DIAG_NONE;	/* unused by getsockopt */
	return sizeof(struct tcp_mltcp_info);
}

/* ---------------------------------------------------------------------- */
/* "mltcp": Reno with MLTCP-scaled additive increase.                      */

struct mltcp_reno {
	struct mltcp_iter iter;
	struct mltcp_reno_cache cache;	/* core's per-ack fast path for w */
};

static struct mltcp_reno *mltcp_reno_ca(const struct sock *sk)
{
	return inet_csk_ca(sk);
}

static void mltcp_reno_init(struct sock *sk)
{
	struct mltcp_reno *ca = mltcp_reno_ca(sk);

	mltcp_track_init(sk, &ca->iter);
	mltcp_reno_cache_init(&ca->cache);
}

/*
 * tcp_reno_cong_avoid() with w = cwnd / F, through the core's per-ack cache
 * (F recomputed at most 64 times per iteration, as in the BPF and DPDK
 * datapaths; see docs/design.md, "The per-ack fast path").
 */
static void mltcp_reno_cong_avoid(struct sock *sk, u32 ack, u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct mltcp_reno *ca = mltcp_reno_ca(sk);

	if (!tcp_is_cwnd_limited(sk))
		return;

	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	tcp_cong_avoid_ai(tp, mltcp_reno_ai_w_cached(&ca->cache, &ca->iter, mltcp_p(),
						     tcp_snd_cwnd(tp)), acked);
}

/* tcp_reno_ssthresh() keeping cwnd * F/2 instead of cwnd / 2. */
static u32 mltcp_reno_ssthresh(struct sock *sk)
{
	const struct mltcp_params *p = mltcp_p();
	u32 gain = mltcp_gain(&mltcp_reno_ca(sk)->iter, p);

	return mltcp_ssthresh(tcp_snd_cwnd(tcp_sk(sk)),
			      mltcp_decrease_beta(MLTCP_RENO_BETA, gain, p));
}

static void mltcp_reno_in_ack_event(struct sock *sk, u32 flags)
{
	mltcp_track_ack(sk, &mltcp_reno_ca(sk)->iter);
}

static void mltcp_reno_cwnd_event(struct sock *sk, enum tcp_ca_event event)
{
	if (event == CA_EVENT_TX_START)
		mltcp_track_tx_start(sk, &mltcp_reno_ca(sk)->iter);
}

static size_t mltcp_reno_get_info(struct sock *sk, u32 ext, int *attr,
				  union tcp_cc_info *info)
{
	return mltcp_info_common(&mltcp_reno_ca(sk)->iter, ext, attr, info);
}

static struct tcp_congestion_ops mltcp_reno __read_mostly = {
	.init		= mltcp_reno_init,
	.ssthresh	= mltcp_reno_ssthresh,
	.cong_avoid	= mltcp_reno_cong_avoid,
	.undo_cwnd	= tcp_reno_undo_cwnd,
	.in_ack_event	= mltcp_reno_in_ack_event,
	.cwnd_event	= mltcp_reno_cwnd_event,
	.get_info	= mltcp_reno_get_info,
	.owner		= THIS_MODULE,
	.name		= "mltcp",
};

/* ---------------------------------------------------------------------- */
/* "mltcp_cubic": Linux 6.1 CUBIC with MLTCP-scaled ca->cnt.               */

#define BICTCP_BETA_SCALE	1024	/* Scale factor beta calculation
					 * max_cwnd = snd_cwnd * beta
					 */
#define BICTCP_HZ		10	/* BIC HZ 2^10 = 1024 */

/* Two methods of hybrid slow start */
#define HYSTART_ACK_TRAIN	0x1
#define HYSTART_DELAY		0x2

/* Number of delay samples for detecting the increase of delay */
#define HYSTART_MIN_SAMPLES	8
#define HYSTART_DELAY_MIN	(4000U)	/* 4 ms */
#define HYSTART_DELAY_MAX	(16000U)	/* 16 ms */
#define HYSTART_DELAY_THRESH(x)	clamp(x, HYSTART_DELAY_MIN, HYSTART_DELAY_MAX)

/* tcp_cubic's defaults, fixed here (see the header comment). */
#define CUBIC_FAST_CONVERGENCE	1
#define CUBIC_BETA		717	/* = 717/1024 (BICTCP_BETA_SCALE) */
#define CUBIC_BIC_SCALE		41
#define CUBIC_TCP_FRIENDLINESS	1
#define CUBIC_HYSTART		1
#define CUBIC_HYSTART_DETECT	(HYSTART_ACK_TRAIN | HYSTART_DELAY)
#define CUBIC_HYSTART_LOW_WINDOW	16
#define CUBIC_HYSTART_ACK_DELTA_US	2000

static u32 cube_rtt_scale __read_mostly;
static u32 beta_scale __read_mostly;
static u64 cube_factor __read_mostly;

/* BIC TCP Parameters (tcp_cubic.c's struct bictcp, unchanged) */
struct bictcp {
	u32	cnt;		/* increase cwnd by 1 after ACKs (raw, unscaled) */
	u32	last_max_cwnd;	/* last maximum snd_cwnd */
	u32	last_cwnd;	/* the last snd_cwnd */
	u32	last_time;	/* time when updated last_cwnd */
	u32	bic_origin_point;/* origin point of bic function */
	u32	bic_K;		/* time to origin point
				   from the beginning of the current epoch */
	u32	delay_min;	/* min delay (usec) */
	u32	epoch_start;	/* beginning of an epoch */
	u32	ack_cnt;	/* number of acks */
	u32	tcp_cwnd;	/* estimated tcp cwnd */
	u16	epoch_carry;	/* MLTCP: sub-jiffy remainder of the clock scaling */
	u8	sample_cnt;	/* number of samples to decide curr_rtt */
	u8	found;		/* the exit point is found? */
	u32	round_start;	/* beginning of each round */
	u32	end_seq;	/* end_seq of the round */
	u32	last_ack;	/* last time when the ACK spacing is close */
	u32	curr_rtt;	/* the minimum rtt of current round */
};

struct mltcp_cubic {
	struct mltcp_iter iter;
	struct bictcp cubic;
};

static struct mltcp_cubic *mltcp_cubic_ca(const struct sock *sk)
{
	return inet_csk_ca(sk);
}

static struct bictcp *bictcp_ca(const struct sock *sk)
{
	return &mltcp_cubic_ca(sk)->cubic;
}

static inline void bictcp_reset(struct bictcp *ca)
{
	memset(ca, 0, offsetof(struct bictcp, epoch_carry));
	ca->found = 0;
}

static inline u32 bictcp_clock_us(const struct sock *sk)
{
	return tcp_sk(sk)->tcp_mstamp;
}

static inline void bictcp_hystart_reset(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bictcp *ca = bictcp_ca(sk);

	ca->round_start = ca->last_ack = bictcp_clock_us(sk);
	ca->end_seq = tp->snd_nxt;
	ca->curr_rtt = ~0U;
	ca->sample_cnt = 0;
}

static void mltcp_cubic_init(struct sock *sk)
{
	bictcp_reset(bictcp_ca(sk));

	if (CUBIC_HYSTART)
		bictcp_hystart_reset(sk);

	mltcp_track_init(sk, &mltcp_cubic_ca(sk)->iter);
}

static void mltcp_cubic_cwnd_event(struct sock *sk, enum tcp_ca_event event)
{
	if (event == CA_EVENT_TX_START) {
		struct bictcp *ca = bictcp_ca(sk);
		u32 now = tcp_jiffies32;
		s32 delta;

		delta = now - tcp_sk(sk)->lsndtime;

		/* We were application limited (idle) for a while.
		 * Shift epoch_start to keep cwnd growth to cubic curve.
		 */
		if (ca->epoch_start && delta > 0) {
			ca->epoch_start += delta;
			if (after(ca->epoch_start, now))
				ca->epoch_start = now;
		}
		mltcp_track_tx_start(sk, &mltcp_cubic_ca(sk)->iter);
	}
}

/* calculate the cubic root of x using a table lookup followed by one
 * Newton-Raphson iteration.
 * Avg err ~= 0.195%
 */
static u32 cubic_root(u64 a)
{
	u32 x, b, shift;
	/*
	 * cbrt(x) MSB values for x MSB values in [0..63].
	 * Precomputed then refined by hand - Willy Tarreau
	 *
	 * For x in [0..63],
	 *   v = cbrt(x << 18) - 1
	 *   cbrt(x) = (v[x] + 10) >> 6
	 */
	static const u8 v[] = {
		/* 0x00 */    0,   54,   54,   54,  118,  118,  118,  118,
		/* 0x08 */  123,  129,  134,  138,  143,  147,  151,  156,
		/* 0x10 */  157,  161,  164,  168,  170,  173,  176,  179,
		/* 0x18 */  181,  185,  187,  190,  192,  194,  197,  199,
		/* 0x20 */  200,  202,  204,  206,  209,  211,  213,  215,
		/* 0x28 */  217,  219,  221,  222,  224,  225,  227,  229,
		/* 0x30 */  231,  232,  234,  236,  237,  239,  240,  242,
		/* 0x38 */  244,  245,  246,  248,  250,  251,  252,  254,
	};

	b = fls64(a);
	if (b < 7) {
		/* a in [0..63] */
		return ((u32)v[(u32)a] + 35) >> 6;
	}

	b = ((b * 84) >> 8) - 1;
	shift = (a >> (b * 3));

	x = ((u32)(((u32)v[shift] + 10) << b)) >> 6;

	/*
	 * Newton-Raphson iteration
	 *                         2
	 * x    = ( 2 * x  +  a / x  ) / 3
	 *  k+1          k         k
	 */
	x = (2 * x + (u32)div64_u64(a, (u64)x * (u64)(x - 1)));
	x = ((x * 341) >> 10);
	return x;
}

/*
 * Compute congestion window to use.  As tcp_cubic.c's bictcp_update(), except
 * that the final max(cnt, 2) is left to mltcp_cubic_cnt() at the point of use.
 */
static inline void bictcp_update(struct bictcp *ca, u32 cwnd, u32 acked, u32 gain)
{
	u32 delta, bic_target, max_cnt, dt;
	u64 offs, t;

	ca->ack_cnt += acked;	/* count the number of ACKed packets */

	if (ca->last_cwnd == cwnd &&
	    (s32)(tcp_jiffies32 - ca->last_time) <= HZ / 32)
		return;

	/* The CUBIC function can update ca->cnt at most once per jiffy.
	 * On all cwnd reduction events, ca->epoch_start is set to 0,
	 * which will force a recalculation of ca->cnt.
	 */
	if (ca->epoch_start && tcp_jiffies32 == ca->last_time)
		goto tcp_friendliness;

	ca->last_cwnd = cwnd;
	dt = tcp_jiffies32 - ca->last_time;
	ca->last_time = tcp_jiffies32;

	if (ca->epoch_start) {
		/* MLTCP: the curve advances F * dt over the last dt jiffies. */
		ca->epoch_start = mltcp_cubic_epoch_scale(ca->epoch_start, tcp_jiffies32,
							  dt, gain, &ca->epoch_carry);
	} else {
		ca->epoch_start = tcp_jiffies32;	/* record beginning */
		ca->epoch_carry = 0;
		ca->ack_cnt = acked;			/* start counting */
		ca->tcp_cwnd = cwnd;			/* syn with cubic */

		if (ca->last_max_cwnd <= cwnd) {
			ca->bic_K = 0;
			ca->bic_origin_point = cwnd;
		} else {
			/* Compute new K based on
			 * (wmax-cwnd) * (srtt>>3 / HZ) / c * 2^(3*bictcp_HZ)
			 */
			ca->bic_K = cubic_root(cube_factor
					       * (ca->last_max_cwnd - cwnd));
			ca->bic_origin_point = ca->last_max_cwnd;
		}
	}

	/* cubic function - calc*/
	/* calculate c * time^3 / rtt,
	 *  while considering overflow in calculation of time^3
	 * (so time^3 is done by using 64 bit)
	 * and without the support of division of 64bit numbers
	 * (so all divisions are done by using 32 bit)
	 *  also NOTE the unit of those veriables
	 *	  time  = (t - K) / 2^bictcp_HZ
	 *	  c = bic_scale >> 10
	 * rtt  = (srtt >> 3) / HZ
	 * !!! The following code does not have overflow problems,
	 * if the cwnd < 1 million packets !!!
	 */

	t = (s32)(tcp_jiffies32 - ca->epoch_start);
	t += usecs_to_jiffies(ca->delay_min);
	/* change the unit from HZ to bictcp_HZ */
	t <<= BICTCP_HZ;
	do_div(t, HZ);

	if (t < ca->bic_K)		/* t - K */
		offs = ca->bic_K - t;
	else
		offs = t - ca->bic_K;

	/* c/rtt * (t-K)^3 */
	delta = (cube_rtt_scale * offs * offs * offs) >> (10+3*BICTCP_HZ);
	if (t < ca->bic_K)                            /* below origin*/
		bic_target = ca->bic_origin_point - delta;
	else                                          /* above origin*/
		bic_target = ca->bic_origin_point + delta;

	/* cubic function - calc bictcp_cnt*/
	if (bic_target > cwnd) {
		ca->cnt = cwnd / (bic_target - cwnd);
	} else {
		ca->cnt = 100 * cwnd;              /* very small increment*/
	}

	/*
	 * The initial growth of cubic function may be too conservative
	 * when the available bandwidth is still unknown.
	 */
	if (ca->last_max_cwnd == 0 && ca->cnt > 20)
		ca->cnt = 20;	/* increase cwnd 5% per RTT */

tcp_friendliness:
	/* TCP Friendly */
	if (CUBIC_TCP_FRIENDLINESS) {
		u32 scale = beta_scale;

		/* MLTCP: the Reno estimate grows F segments per RTT. */
		delta = mltcp_cubic_friendly_acks((cwnd * scale) >> 3, gain);
		while (ca->ack_cnt > delta) {		/* update tcp cwnd */
			ca->ack_cnt -= delta;
			ca->tcp_cwnd++;
		}

		if (ca->tcp_cwnd > cwnd) {	/* if bic is slower than tcp */
			delta = ca->tcp_cwnd - cwnd;
			max_cnt = cwnd / delta;
			if (ca->cnt > max_cnt)
				ca->cnt = max_cnt;
		}
	}
	/* tcp_cubic.c ends with ca->cnt = max(ca->cnt, 2U): here that bound
	 * (at most 1.5x per RTT) is applied by mltcp_cubic_cnt().
	 */
}

static void mltcp_cubic_cong_avoid(struct sock *sk, u32 ack, u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct mltcp_cubic *mc = mltcp_cubic_ca(sk);
	u32 gain;

	if (!tcp_is_cwnd_limited(sk))
		return;

	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	gain = mltcp_gain(&mc->iter, mltcp_p());
	bictcp_update(&mc->cubic, tcp_snd_cwnd(tp), acked, gain);
	tcp_cong_avoid_ai(tp, mltcp_cubic_cnt(mc->cubic.cnt, gain), acked);
}

static u32 mltcp_cubic_recalc_ssthresh(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	const struct mltcp_params *p = mltcp_p();
	struct mltcp_cubic *mc = mltcp_cubic_ca(sk);
	struct bictcp *ca = &mc->cubic;

	ca->epoch_start = 0;	/* end of epoch */

	/* Wmax and fast convergence */
	if (tcp_snd_cwnd(tp) < ca->last_max_cwnd && CUBIC_FAST_CONVERGENCE)
		ca->last_max_cwnd = (tcp_snd_cwnd(tp) * (BICTCP_BETA_SCALE + CUBIC_BETA))
			/ (2 * BICTCP_BETA_SCALE);
	else
		ca->last_max_cwnd = tcp_snd_cwnd(tp);

	/* MLTCP: keep 0.7 * F of the window (W_max above stays CUBIC's). */
	return mltcp_ssthresh(tcp_snd_cwnd(tp),
			      mltcp_decrease_beta(CUBIC_BETA, mltcp_gain(&mc->iter, p), p));
}

static void mltcp_cubic_state(struct sock *sk, u8 new_state)
{
	if (new_state == TCP_CA_Loss) {
		bictcp_reset(bictcp_ca(sk));
		bictcp_hystart_reset(sk);
	}
}

/* Account for TSO/GRO delays.
 * Otherwise short RTT flows could get too small ssthresh, since during
 * slow start we begin with small TSO packets and ca->delay_min would
 * not account for long aggregation delay when TSO packets get bigger.
 * Ideally even with a very small RTT we would like to have at least one
 * TSO packet being sent and received by GRO, and another one in qdisc layer.
 * We apply another 100% factor because @rate is doubled at this point.
 * We cap the cushion to 1ms.
 */
static u32 hystart_ack_delay(const struct sock *sk)
{
	unsigned long rate;

	rate = READ_ONCE(sk->sk_pacing_rate);
	if (!rate)
		return 0;
	return min_t(u64, USEC_PER_MSEC,
		     div64_ul((u64)sk->sk_gso_max_size * 4 * USEC_PER_SEC, rate));
}

static void hystart_update(struct sock *sk, u32 delay)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bictcp *ca = bictcp_ca(sk);
	u32 threshold;

	if (after(tp->snd_una, ca->end_seq))
		bictcp_hystart_reset(sk);

	/* hystart triggers when cwnd is larger than some threshold */
	if (tcp_snd_cwnd(tp) < CUBIC_HYSTART_LOW_WINDOW)
		return;

	if (CUBIC_HYSTART_DETECT & HYSTART_ACK_TRAIN) {
		u32 now = bictcp_clock_us(sk);

		/* first detection parameter - ack-train detection */
		if ((s32)(now - ca->last_ack) <= CUBIC_HYSTART_ACK_DELTA_US) {
			ca->last_ack = now;

			threshold = ca->delay_min + hystart_ack_delay(sk);

			/* Hystart ack train triggers if we get ack past
			 * ca->delay_min/2.
			 * Pacing might have delayed packets up to RTT/2
			 * during slow start.
			 */
			if (sk->sk_pacing_status == SK_PACING_NONE)
				threshold >>= 1;

			if ((s32)(now - ca->round_start) > threshold) {
				ca->found = 1;
				NET_INC_STATS(sock_net(sk),
					      LINUX_MIB_TCPHYSTARTTRAINDETECT);
				NET_ADD_STATS(sock_net(sk),
					      LINUX_MIB_TCPHYSTARTTRAINCWND,
					      tcp_snd_cwnd(tp));
				tp->snd_ssthresh = tcp_snd_cwnd(tp);
			}
		}
	}

	if (CUBIC_HYSTART_DETECT & HYSTART_DELAY) {
		/* obtain the minimum delay of more than sampling packets */
		if (ca->curr_rtt > delay)
			ca->curr_rtt = delay;
		if (ca->sample_cnt < HYSTART_MIN_SAMPLES) {
			ca->sample_cnt++;
		} else {
			if (ca->curr_rtt > ca->delay_min +
			    HYSTART_DELAY_THRESH(ca->delay_min >> 3)) {
				ca->found = 1;
				NET_INC_STATS(sock_net(sk),
					      LINUX_MIB_TCPHYSTARTDELAYDETECT);
				NET_ADD_STATS(sock_net(sk),
					      LINUX_MIB_TCPHYSTARTDELAYCWND,
					      tcp_snd_cwnd(tp));
				tp->snd_ssthresh = tcp_snd_cwnd(tp);
			}
		}
	}
}

static void mltcp_cubic_acked(struct sock *sk, const struct ack_sample *sample)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct bictcp *ca = bictcp_ca(sk);
	u32 delay;

	/* Some calls are for duplicates without timetamps */
	if (sample->rtt_us < 0)
		return;

	/* Discard delay samples right after fast recovery */
	if (ca->epoch_start && (s32)(tcp_jiffies32 - ca->epoch_start) < HZ)
		return;

	delay = sample->rtt_us;
	if (delay == 0)
		delay = 1;

	/* first time call or link delay decreases */
	if (ca->delay_min == 0 || ca->delay_min > delay)
		ca->delay_min = delay;

	if (!ca->found && tcp_in_slow_start(tp) && CUBIC_HYSTART)
		hystart_update(sk, delay);
}

static void mltcp_cubic_in_ack_event(struct sock *sk, u32 flags)
{
	mltcp_track_ack(sk, &mltcp_cubic_ca(sk)->iter);
}

static size_t mltcp_cubic_get_info(struct sock *sk, u32 ext, int *attr,
				   union tcp_cc_info *info)
{
	return mltcp_info_common(&mltcp_cubic_ca(sk)->iter, ext, attr, info);
}

static struct tcp_congestion_ops mltcp_cubic __read_mostly = {
	.init		= mltcp_cubic_init,
	.ssthresh	= mltcp_cubic_recalc_ssthresh,
	.cong_avoid	= mltcp_cubic_cong_avoid,
	.set_state	= mltcp_cubic_state,
	.undo_cwnd	= tcp_reno_undo_cwnd,
	.cwnd_event	= mltcp_cubic_cwnd_event,
	.pkts_acked	= mltcp_cubic_acked,
	.in_ack_event	= mltcp_cubic_in_ack_event,
	.get_info	= mltcp_cubic_get_info,
	.owner		= THIS_MODULE,
	.name		= "mltcp_cubic",
};

static void mltcp_cubic_precompute(void)
{
	/* As cubictcp_register(): scaling factors for an SRTT of 100 ms. */
	beta_scale = 8 * (BICTCP_BETA_SCALE + CUBIC_BETA) / 3
		/ (BICTCP_BETA_SCALE - CUBIC_BETA);

	cube_rtt_scale = (CUBIC_BIC_SCALE * 10);	/* 1024*c/rtt */

	/* 1/c * 2^2*bictcp_HZ * srtt */
	cube_factor = 1ull << (10 + 3 * BICTCP_HZ); /* 2^40 */

	/* divide by bic_scale and by constant Srtt (100ms) */
	do_div(cube_factor, CUBIC_BIC_SCALE * 10);
}

/* ---------------------------------------------------------------------- */
/* debugfs: /sys/kernel/debug/tcp_mltcp/flows lists every MLTCP socket.    */

/* The tracker of an MLTCP socket and the name of its variant, or NULL. */
static const struct mltcp_iter *mltcp_iter_of(const struct sock *sk,
					      const char **name)
{
	const struct tcp_congestion_ops *ops = READ_ONCE(inet_csk(sk)->icsk_ca_ops);

	if (ops == &mltcp_reno) {
		*name = mltcp_reno.name;
		return &mltcp_reno_ca(sk)->iter;
	}
	if (ops == &mltcp_cubic) {
		*name = mltcp_cubic.name;
		return &mltcp_cubic_ca(sk)->iter;
	}
	return NULL;
}

static void mltcp_show_sock(struct seq_file *m, const struct sock *sk,
			    const struct mltcp_iter *it, const char *name)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct tcp_mltcp_info info;

	mltcp_fill_info(it, &info);
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6)
		seq_printf(m, "[%pI6c]:%u [%pI6c]:%u", &sk->sk_v6_rcv_saddr,
			   sk->sk_num, &sk->sk_v6_daddr, ntohs(sk->sk_dport));
	else
#endif
		seq_printf(m, "%pI4:%u %pI4:%u", &sk->sk_rcv_saddr, sk->sk_num,
			   &sk->sk_daddr, ntohs(sk->sk_dport));
	seq_printf(m, " %s netns=%u cwnd=%u ssthresh=%u srtt_us=%u"
		   " iterations=%u hinted=%u iter_bytes=%llu bytes_per_iter=%llu"
		   " ratio=%u gain=%u\n",
		   name, sock_net(sk)->ns.inum, tcp_snd_cwnd(tp),
		   tp->snd_ssthresh, tp->srtt_us >> 3,
		   info.iterations, READ_ONCE(it->hinted),
		   (unsigned long long)READ_ONCE(it->iter_bytes),
		   (unsigned long long)READ_ONCE(it->bytes_per_iter),
		   info.ratio, info.gain);
}

/*
 * Walk the global TCP established hash like inet_diag does.  Sockets of a
 * network namespace with its own hash (net.ipv4.tcp_child_ehash_entries)
 * are not listed.  The state is read without the socket lock: each field is
 * a naturally aligned word, so a line may mix two moments, never garbage.
 */
static int mltcp_flows_show(struct seq_file *m, void *v)
{
	struct inet_hashinfo *hinfo = &tcp_hashinfo;
	unsigned int i;

	seq_puts(m, "# local remote cc netns cwnd ssthresh srtt_us iterations hinted"
		 " iter_bytes bytes_per_iter ratio(1/1024,65535=none) gain(1/1024)\n");
	for (i = 0; i <= hinfo->ehash_mask; i++) {
		struct inet_ehash_bucket *head = &hinfo->ehash[i];
		spinlock_t *lock = inet_ehash_lockp(hinfo, i);
		struct hlist_nulls_node *node;
		struct sock *sk;

		if (hlist_nulls_empty(&head->chain))
			continue;
		spin_lock_bh(lock);
		sk_nulls_for_each(sk, node, &head->chain) {
			const struct mltcp_iter *it;
			const char *name;

			if (!sk_fullsock(sk))
				continue;
			it = mltcp_iter_of(sk, &name);
			if (it)
				mltcp_show_sock(m, sk, it, name);
		}
		spin_unlock_bh(lock);
		cond_resched();
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(mltcp_flows);

static struct dentry *mltcp_debugfs_dir;

/* ---------------------------------------------------------------------- */

static int __init mltcp_register(void)
{
	int ret;

	BUILD_BUG_ON(sizeof(struct mltcp_reno) > ICSK_CA_PRIV_SIZE);
	BUILD_BUG_ON(sizeof(struct mltcp_cubic) > ICSK_CA_PRIV_SIZE);

	mltcp_cubic_precompute();

	ret = tcp_register_congestion_control(&mltcp_reno);
	if (ret)
		return ret;
	ret = tcp_register_congestion_control(&mltcp_cubic);
	if (ret) {
		tcp_unregister_congestion_control(&mltcp_reno);
		return ret;
	}
	mltcp_debugfs_dir = debugfs_create_dir("tcp_mltcp", NULL);
	debugfs_create_file("flows", 0444, mltcp_debugfs_dir, NULL,
			    &mltcp_flows_fops);
	return 0;
}

static void __exit mltcp_unregister(void)
{
	debugfs_remove_recursive(mltcp_debugfs_dir);
	tcp_unregister_congestion_control(&mltcp_cubic);
	tcp_unregister_congestion_control(&mltcp_reno);
}

module_init(mltcp_register);
module_exit(mltcp_unregister);

MODULE_AUTHOR("MLTCP developers");
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("MLTCP: iteration-aware Reno and CUBIC for ML training flows");
MODULE_VERSION(MLTCP_MODULE_VERSION);
MODULE_ALIAS("tcp_mltcp_cubic");
