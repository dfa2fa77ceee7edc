// SPDX-License-Identifier: GPL-2.0-only
/*
 * tcp_mltcp.c - MLTCP congestion control as a kernel module: two variants,
 * "mltcp" (Reno-based) and "mltcp_cubic" (CUBIC-based), in one module.
 *
 * A training flow scales its congestion-avoidance growth by
 * F(bytes_ratio) = intercept + slope * bytes_ratio (MLTCP, arXiv 2402.09589),
 * so that competing training jobs drift into an interleaved schedule.  All
 * policy (iteration tracking, F, the Reno step, CUBIC with HyStart, the
 * window kept at a loss) comes from the shared core in core/; this file
 * only adapts it to the kernel's tcp_congestion_ops hooks:
 *
 *   in_ack_event           -> mltcp_iter_on_ack(tp->bytes_acked, tcp_mstamp)
 *   cwnd_event(TX_START)   -> mltcp_cubic_flow_tx_start (CUBIC's epoch),
 *                             mltcp_iter_on_tx_start(..., srtt_us), then
 *                             the window the iteration starts with
 *                             (mltcp_*_flow_start_cwnd: tcp_min_rtt, and
 *                             bytes_acked, bytes_received for a two-way
 *                             connection)
 *   cong_avoid             -> tcp_slow_start(), then tcp_cong_avoid_ai(tp,
 *                             mltcp_reno_flow_ai_w / mltcp_cubic_flow_ai_w)
 *   ssthresh               -> mltcp_reno_flow_ssthresh / mltcp_cubic_flow_ssthresh
 *   pkts_acked (CUBIC)     -> mltcp_cubic_on_rtt (delay_min, HyStart)
 *   set_state(Loss)        -> mltcp_cubic_on_rto
 *
 * core/mltcp_cubic.h lists how its CUBIC differs from Linux 6.1's
 * tcp_cubic.c (one microsecond clock, tcp_cubic's default tunables).  The
 * BPF kfunc id set of tcp_cubic is not registered.  With the module
 * parameter enabled=0 the gain is always neutral and both variants behave
 * like their base algorithm.
 *
 * Per-flow state is visible through getsockopt(TCP_CC_INFO) (struct
 * tcp_mltcp_info) and, for operators, the debugfs file
 * /sys/kernel/debug/tcp_mltcp/flows; see docs/kmod.md.
 */

#include <linux/module.h>
#include <linux/mm.h>
#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/inet_diag.h>
#include <net/tcp.h>
#include <net/inet_hashtables.h>

#include "mltcp.h"
#include "tcp_mltcp_info.h"

#define MLTCP_MODULE_VERSION	"0.1.2"

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
#define MLTCP_ASSIGN(type, field, unit, def, lo, hi, scope, help)	\
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
	if (err == MLTCP_PARAM_OK) {
		mltcp_params_derive(&candidate);
		WRITE_ONCE(*(u32 *)kp->arg, v);
		WRITE_ONCE(mltcp_params.norm_reno, candidate.norm_reno);
		WRITE_ONCE(mltcp_params.norm_cubic, candidate.norm_cubic);
		WRITE_ONCE(mltcp_params.norm_reno_two_way, candidate.norm_reno_two_way);
		WRITE_ONCE(mltcp_params.norm_cubic_two_way, candidate.norm_cubic_two_way);
	}
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

/* What modinfo adds to a row's description, by the row's scope: the module
 * has no jobs of several connections, so the job rows do nothing here. */
#define MLTCP_KMOD_NOTE_MLTCP_PS_GAIN	""
#define MLTCP_KMOD_NOTE_MLTCP_PS_WINDOW	""
#define MLTCP_KMOD_NOTE_MLTCP_PS_JOB	"; no effect in the module, which has no jobs"

/* Every field is a u32: mltcp_param_set() parses and stores one. */
#define MLTCP_MODULE_PARAM(type, field, unit, def, lo, hi, scope, help)	\
	static_assert(sizeof(((struct mltcp_params *)0)->field) == sizeof(u32)); \
	module_param_cb(field, &mltcp_param_ops, &mltcp_params.field, 0644);	\
	MODULE_PARM_DESC(field, MLTCP_PT_DESC(field, unit, def, lo, hi, help)	\
			 MLTCP_KMOD_NOTE_##scope);
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

static void mltcp_track_ack(struct sock *sk, struct mltcp_iter *it)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	mltcp_iter_on_ack(it, tp->bytes_acked, mltcp_now_us(tp));
}

/* Returns 1 if the application resumed sending (the start drain may act). */
static int mltcp_track_tx_start(struct sock *sk, struct mltcp_iter *it)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	/* CA_EVENT_TX_START also fires for the retransmission after an RTO
	 * (everything in flight was marked lost) and after a pause forced by
	 * the receiver's window (a slow reader; the chronograph then says
	 * RWND_LIMITED, or SNDBUF_LIMITED, which outranks it once the writer
	 * blocked): neither is the application resuming, so neither may end
	 * an iteration.  After a real pause the chronograph is UNSPEC or BUSY. */
	if (tp->packets_out || tp->chrono_type >= TCP_CHRONO_RWND_LIMITED)
		return 0;
	mltcp_iter_on_tx_start(it, mltcp_p(), tp->bytes_acked,
			       mltcp_now_us(tp), tp->srtt_us >> 3);
	return 1;
}

/* The start drain's result (mltcp_*_flow_start_cwnd): a lower window
 * becomes cwnd and ssthresh, as at the end of a window reduction. */
static void mltcp_start_window(struct tcp_sock *tp, u32 start)
{
	if (start >= tcp_snd_cwnd(tp))
		return;
	tcp_snd_cwnd_set(tp, start);
	tp->snd_ssthresh = start;
	tp->snd_cwnd_cnt = 0;
}

/* cubic: the variant, whose gain (F times its norm) is the one shown. */
static void mltcp_fill_info(const struct mltcp_iter *it, bool cubic,
			    struct tcp_mltcp_info *info)
{
	u64 per_iter = READ_ONCE(it->bytes_per_iter);
	u32 ratio = mltcp_iter_ratio(it);

	memset(info, 0, sizeof(*info));
	info->iterations = READ_ONCE(it->iterations);
	info->iter_bytes = (u32)min_t(u64, READ_ONCE(it->iter_bytes), U32_MAX);
	info->bytes_per_iter_lo = lower_32_bits(per_iter);
	info->bytes_per_iter_hi = upper_32_bits(per_iter);
	info->gain = (u16)min_t(u32, cubic ? mltcp_cubic_gain(it, mltcp_p()) :
					     mltcp_reno_gain(it, mltcp_p()), U16_MAX);
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

static size_t mltcp_info_common(const struct mltcp_iter *it, bool cubic, u32 ext,
				 int *attr, union tcp_cc_info *info)
{
	BUILD_BUG_ON(sizeof(struct tcp_mltcp_info) > sizeof(union tcp_cc_info));

	if (!(ext & MLTCP_INFO_EXT_SOCKOPT))
		return 0;
	mltcp_fill_info(it, cubic, (struct tcp_mltcp_info *)info);
	*attr = INET_DIAG_NONE;	/* unused by getsockopt */
	return sizeof(struct tcp_mltcp_info);
}

/* ---------------------------------------------------------------------- */
/* "mltcp": Reno with MLTCP-scaled additive increase.                      */

static struct mltcp_reno_flow *mltcp_reno_ca(const struct sock *sk)
{
	return inet_csk_ca(sk);
}

static void mltcp_reno_init(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	mltcp_reno_flow_init(mltcp_reno_ca(sk), tp->bytes_acked, mltcp_now_us(tp));
	mltcp_iter_seed(&mltcp_reno_ca(sk)->it, mltcp_p(), get_random_u32());
}

/*
 * tcp_reno_cong_avoid() with the core's w (mltcp_reno_flow_ai_w).  The
 * window is tcp_sock's, so the kernel's own tcp_slow_start() and
 * tcp_cong_avoid_ai() grow it (the core's mltcp_window_* are their
 * userspace twins).
 */
static void mltcp_reno_cong_avoid(struct sock *sk, u32 ack, u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (!tcp_is_cwnd_limited(sk) ||
	    mltcp_reno_flow_hold(mltcp_reno_ca(sk), mltcp_p(), tcp_snd_cwnd(tp), tp->mss_cache))
		return;

	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	tcp_cong_avoid_ai(tp, mltcp_reno_flow_ai_w(mltcp_reno_ca(sk), mltcp_p(),
						   tcp_snd_cwnd(tp)), acked);
}

static u32 mltcp_reno_ssthresh(struct sock *sk)
{
	return mltcp_reno_flow_ssthresh(mltcp_reno_ca(sk), mltcp_p(),
					tcp_snd_cwnd(tcp_sk(sk)));
}

static void mltcp_reno_in_ack_event(struct sock *sk, u32 flags)
{
	mltcp_track_ack(sk, &mltcp_reno_ca(sk)->it);
}

static void mltcp_reno_cwnd_event(struct sock *sk, enum tcp_ca_event event)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (event == CA_EVENT_TX_START && mltcp_track_tx_start(sk, &mltcp_reno_ca(sk)->it))
		mltcp_start_window(tp, mltcp_reno_flow_start_cwnd(mltcp_reno_ca(sk), mltcp_p(),
								  tcp_snd_cwnd(tp), tp->mss_cache,
								  tcp_min_rtt(tp), tp->srtt_us >> 3,
								  tp->bytes_acked,
								  tp->bytes_received, NULL));
}

static size_t mltcp_reno_get_info(struct sock *sk, u32 ext, int *attr,
				  union tcp_cc_info *info)
{
	return mltcp_info_common(&mltcp_reno_ca(sk)->it, false,
				 ext, attr, info);
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
/* "mltcp_cubic": CUBIC and HyStart from the core (core/mltcp_cubic.h).    */

static struct mltcp_cubic_flow *mltcp_cubic_ca(const struct sock *sk)
{
	return inet_csk_ca(sk);
}

static void mltcp_cubic_init(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	mltcp_cubic_flow_init(mltcp_cubic_ca(sk), tp->bytes_acked,
			      mltcp_now_us(tp), tp->snd_nxt);
	mltcp_iter_seed(&mltcp_cubic_ca(sk)->it, mltcp_p(), get_random_u32());
}

static void mltcp_cubic_cwnd_event(struct sock *sk, enum tcp_ca_event event)
{
	if (event == CA_EVENT_TX_START) {
		struct mltcp_cubic_flow *f = mltcp_cubic_ca(sk);
		struct tcp_sock *tp = tcp_sk(sk);

		mltcp_cubic_flow_tx_start(f, mltcp_now_us(tp));
		if (mltcp_track_tx_start(sk, &f->it))
			mltcp_start_window(tp, mltcp_cubic_flow_start_cwnd(f, mltcp_p(),
									   tcp_snd_cwnd(tp),
									   tp->mss_cache,
									   tcp_min_rtt(tp),
									   tp->srtt_us >> 3,
									   tp->bytes_acked,
									   tp->bytes_received, NULL));
	}
}

/* As cubictcp_cong_avoid(), the window grown by the kernel's helpers. */
static void mltcp_cubic_cong_avoid(struct sock *sk, u32 ack, u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (!tcp_is_cwnd_limited(sk) ||
	    mltcp_cubic_flow_hold(mltcp_cubic_ca(sk), mltcp_p(), tcp_snd_cwnd(tp), tp->mss_cache))
		return;

	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	tcp_cong_avoid_ai(tp, mltcp_cubic_flow_ai_w(mltcp_cubic_ca(sk), mltcp_p(),
						    tcp_snd_cwnd(tp), acked,
						    mltcp_now_us(tp)), acked);
}

static u32 mltcp_cubic_recalc_ssthresh(struct sock *sk)
{
	return mltcp_cubic_flow_ssthresh(mltcp_cubic_ca(sk), mltcp_p(),
					 tcp_snd_cwnd(tcp_sk(sk)));
}

static void mltcp_cubic_state(struct sock *sk, u8 new_state)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (new_state == TCP_CA_Loss)
		mltcp_bictcp_on_rto(&mltcp_cubic_ca(sk)->bic, mltcp_now_us(tp),
				   tp->snd_nxt);
}

/* tcp_cubic.c's hystart_ack_delay(): the TSO/GRO cushion for short-RTT
 * flows, capped at 1 ms.  Kept here: it reads the socket's pacing rate and
 * GSO size, which the core does not see. */
static u32 hystart_ack_delay(const struct sock *sk)
{
	unsigned long rate;

	rate = READ_ONCE(sk->sk_pacing_rate);
	if (!rate)
		return 0;
	return min_t(u64, USEC_PER_MSEC,
		     div64_ul((u64)sk->sk_gso_max_size * 4 * USEC_PER_SEC, rate));
}

static void mltcp_cubic_acked(struct sock *sk, const struct ack_sample *sample)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct mltcp_cubic_rtt_sample s = {
		.rtt_us		= sample->rtt_us,
		.now_us		= mltcp_now_us(tp),
		.cwnd		= tcp_snd_cwnd(tp),
		.snd_una	= tp->snd_una,
		.snd_nxt	= tp->snd_nxt,
		.in_slow_start	= tcp_in_slow_start(tp),
		.ack_delay_us	= hystart_ack_delay(sk),
		.paced		= sk->sk_pacing_status != SK_PACING_NONE,
	};
	u32 found = mltcp_bictcp_on_rtt(&mltcp_cubic_ca(sk)->bic, &s);

	if (found & MLTCP_HYSTART_FOUND_TRAIN) {
		NET_INC_STATS(sock_net(sk), LINUX_MIB_TCPHYSTARTTRAINDETECT);
		NET_ADD_STATS(sock_net(sk), LINUX_MIB_TCPHYSTARTTRAINCWND,
			      tcp_snd_cwnd(tp));
	}
	if (found & MLTCP_HYSTART_FOUND_DELAY) {
		NET_INC_STATS(sock_net(sk), LINUX_MIB_TCPHYSTARTDELAYDETECT);
		NET_ADD_STATS(sock_net(sk), LINUX_MIB_TCPHYSTARTDELAYCWND,
			      tcp_snd_cwnd(tp));
	}
	if (found)
		tp->snd_ssthresh = tcp_snd_cwnd(tp);
}

static void mltcp_cubic_in_ack_event(struct sock *sk, u32 flags)
{
	mltcp_track_ack(sk, &mltcp_cubic_ca(sk)->it);
}

static size_t mltcp_cubic_get_info(struct sock *sk, u32 ext, int *attr,
				   union tcp_cc_info *info)
{
	return mltcp_info_common(&mltcp_cubic_ca(sk)->it, true,
				 ext, attr, info);
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

/* ---------------------------------------------------------------------- */
/* debugfs: /sys/kernel/debug/tcp_mltcp/flows lists every MLTCP socket.    */

/* The tracker of an MLTCP socket and the name of its variant (*cubic: the
 * CUBIC one), or NULL. */
static const struct mltcp_iter *mltcp_iter_of(const struct sock *sk,
					      const char **name, bool *cubic)
{
	const struct tcp_congestion_ops *ops = READ_ONCE(inet_csk(sk)->icsk_ca_ops);

	if (ops == &mltcp_reno) {
		*name = mltcp_reno.name;
		*cubic = false;
		return &mltcp_reno_ca(sk)->it;
	}
	if (ops == &mltcp_cubic) {
		*name = mltcp_cubic.name;
		*cubic = true;
		return &mltcp_cubic_ca(sk)->it;
	}
	return NULL;
}

static void mltcp_show_sock(struct seq_file *m, const struct sock *sk,
			    const struct mltcp_iter *it, const char *name, bool cubic)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct tcp_mltcp_info info;

	mltcp_fill_info(it, cubic, &info);
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
			bool cubic;

			if (!sk_fullsock(sk))
				continue;
			it = mltcp_iter_of(sk, &name, &cubic);
			if (it)
				mltcp_show_sock(m, sk, it, name, cubic);
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

	BUILD_BUG_ON(sizeof(struct mltcp_reno_flow) > ICSK_CA_PRIV_SIZE);
	BUILD_BUG_ON(sizeof(struct mltcp_cubic_flow) > ICSK_CA_PRIV_SIZE);

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
