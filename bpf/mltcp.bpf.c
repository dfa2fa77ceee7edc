// SPDX-License-Identifier: GPL-2.0
/*
 * mltcp.bpf.c - MLTCP as BPF struct_ops congestion controls:
 *
 *   "mltcp"        Reno (slow start, AIMD, reno undo) whose
 *                  congestion-avoidance growth is scaled by the MLTCP gain F
 *                  (tcp_cong_avoid_ai with w = mltcp_reno_ai_w(cwnd, F),
 *                  through the core's per-ack cache mltcp_reno_ai_w_cached)
 *                  and whose loss keeps cwnd * F/2 (mltcp_decrease_beta);
 *   "mltcp_cubic"  CUBIC ported the way the kernel selftest
 *                  tools/testing/selftests/bpf/progs/bpf_cubic.c does, with
 *                  F scaling CUBIC's clock (mltcp_cubic_epoch_scale), its
 *                  TCP-friendly estimate (mltcp_cubic_friendly_acks),
 *                  ca->cnt (mltcp_cubic_cnt, in place of its max(cnt, 2))
 *                  and the window kept at a loss (0.7 * F).
 *
 * All policy (iteration tracking, gain, scaling) comes from core/mltcp.h;
 * this file only adapts kernel hooks to it.  Differences from bpf_cubic.c:
 * every CUBIC clock is the microsecond tcp_mstamp instead of jiffies, so no
 * CONFIG_HZ kconfig extern is needed (the Debian guest has no kernel config
 * file); the "once per jiffy" update limit becomes once per millisecond
 * (the jiffy at HZ=1000), and on CA_EVENT_TX_START the epoch is shifted by
 * the idle time since the last acked progress (MLTCP's own clock) instead of
 * since lsndtime (a jiffies stamp).
 *
 * Window guard (mltcp_guard_*): on the host kernel (6.18.44-fc) a small
 * fraction of struct_ops calls run no program: about 0.5% of the CA-state
 * changes happen without .set_state, and a .ssthresh or .undo_cwnd call that
 * runs no program hands TCP an uninitialised return value, in practice the
 * low 32 bits of a kernel pointer (~1e8 segments).  At the end of recovery
 * that value becomes snd_cwnd, the next iteration bursts into the bottleneck
 * and losses, lost retransmissions and RTOs multiply (the same with a BPF
 * Reno that only calls the kernel's tcp_reno_* kfuncs; the built-in reno
 * never sees it).  Both variants therefore check snd_ssthresh and snd_cwnd in
 * every per-ack hook and repair values no congestion control could have
 * produced (mltcp_guard below).
 *
 * Maps (pinned by mltcpctl under /sys/fs/bpf/mltcp/): config (runtime
 * parameters), hints (per-socket "an iteration of N bytes starts now"),
 * jobs (the same per cgroup, written through mltcp_jobhint.bpf.c),
 * stats (per-flow counters, deleted in .release), state (mltcpctl's own).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "mltcp.h"
#include "mltcp_bpf_shared.h"

char _license[] SEC("license") = "GPL";

#define AF_INET		2
#define AF_INET6	10
#define USEC_PER_MSEC	1000U
#define USEC_PER_SEC	1000000U
#define MLTCP_MAX_FLOWS	65536
/* Like reno and cubic: any process (no CAP_NET_ADMIN) may select it, and a
 * non-initial network namespace may make it its default. */
#define TCP_CONG_NON_RESTRICTED	0x1

extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mltcp_params);
} mltcp_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct mltcp_hint);
} mltcp_hints SEC(".maps");

/* Job-level hints, keyed by cgroup v2 id (written by mltcp_jobhint.bpf.c),
 * and per socket the last job hint seq it has seen. */
#include "mltcp_job_map.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} mltcp_job_seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MLTCP_MAX_FLOWS);
	__type(key, struct mltcp_flow_key);
	__type(value, struct mltcp_flow_stats);
} mltcp_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mltcp_state);
} mltcp_state SEC(".maps");

static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline void *inet_csk_ca(const struct sock *sk)
{
	return (void *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

#define ICSK_CA_PRIV_BYTES sizeof(((struct inet_connection_sock *)0)->icsk_ca_priv)

static __always_inline __u32 mltcp_now_us(const struct tcp_sock *tp)
{
	return (__u32)tp->tcp_mstamp;
}

static __always_inline int tcp_in_slow_start(const struct tcp_sock *tp)
{
	return tp->snd_cwnd < tp->snd_ssthresh;
}

static __always_inline int tcp_is_cwnd_limited(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	/* If in slow start, ensure cwnd grows to twice what was ACKed. */
	if (tcp_in_slow_start(tp))
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return !!BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited);
}

static __always_inline const struct mltcp_params *mltcp_params_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&mltcp_config, &zero);
}

/* ---------------------------------------------------------------------- */
/* Window guard: repair an snd_ssthresh / snd_cwnd no algorithm produced.  */

#define TCP_INFINITE_SSTHRESH	0x7fffffffU
#define MLTCP_MIN_SSTHRESH	2U
/* Between two of our hooks a legitimate window at most doubles (slow start
 * over one round of acks) plus a few segments; the corrupted values are
 * pointer bits, millions of segments.  Before the high-water mark is known
 * (first hook), anything up to this is taken as it is. */
#define MLTCP_GUARD_SLACK	16U
#define MLTCP_GUARD_FIRST_MAX	(1U << 20)

/* Windows repaired since load (both variants), for tests and debugging. */
volatile __u64 mltcp_guard_repairs;

static __always_inline __u32 mltcp_guard_limit(__u32 high)
{
	return high ? high * 2 + MLTCP_GUARD_SLACK : MLTCP_GUARD_FIRST_MAX;
}

/* A value TCP itself can hold: ssthresh "infinite" or below the limit. */
static __always_inline int mltcp_ssthresh_plausible(__u32 ssthresh, __u32 limit)
{
	return ssthresh == TCP_INFINITE_SSTHRESH || ssthresh <= limit;
}

/*
 * Called at the start of every hook that sees the window.  *high is the
 * largest window seen by an earlier call (0: none yet).  A corrupted
 * ssthresh is recomputed from the window at the start of the reduction
 * (prior_cwnd) as the variant's own .ssthresh would have; a corrupted cwnd
 * falls back to that ssthresh, as at the end of a reduction.  Returns 1 when
 * ssthresh was repaired (the caller redoes its .ssthresh side effects).
 */
static __always_inline int mltcp_guard(struct sock *sk, __u32 *high, __u32 beta)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 cwnd = tp->snd_cwnd, ssthresh = tp->snd_ssthresh;
	__u32 limit = mltcp_guard_limit(*high), base;
	int ss_fixed = 0, cwnd_fixed = 0;

	if (!mltcp_ssthresh_plausible(ssthresh, limit)) {
		base = tp->prior_cwnd <= limit ? tp->prior_cwnd : *high;
		if (cwnd <= limit && cwnd > base)
			base = cwnd;
		ssthresh = mltcp_ssthresh(base, beta);
		tp->snd_ssthresh = ssthresh;
		ss_fixed = 1;
	}
	if (cwnd > limit) {
		cwnd = ssthresh != TCP_INFINITE_SSTHRESH ? ssthresh
							 : mltcp_ssthresh(*high, beta);
		tp->snd_cwnd = cwnd;
		cwnd_fixed = 1;
	}
	if (ss_fixed || cwnd_fixed)
		__sync_fetch_and_add(&mltcp_guard_repairs, 1);
	if (cwnd > *high)
		*high = cwnd;
	if (ssthresh != TCP_INFINITE_SSTHRESH && ssthresh > *high)
		*high = ssthresh;	/* e.g. a cached route metric at init */
	return ss_fixed;
}

/* .undo_cwnd's result, never above what the guard accepts: prior_cwnd may
 * have been taken from a corrupted window before the guard saw it. */
static __always_inline __u32 mltcp_guard_undo(__u32 undo, __u32 high)
{
	__u32 limit = mltcp_guard_limit(high);

	return undo <= limit ? undo : (high ? high : MLTCP_MIN_SSTHRESH);
}

/* ---------------------------------------------------------------------- */
/* Adapters shared by both variants: hints, iteration tracking, stats.     */

static __always_inline struct mltcp_job_hint *mltcp_job_of(const struct sock *sk)
{
	__u64 cgid = sk->sk_cgrp_data.cgroup->kn->id;

	return bpf_map_lookup_elem(&mltcp_job_hints, &cgid);
}

/* At .init: the job's hints so far are history, not this socket's start. */
static __always_inline void mltcp_job_hint_init(struct sock *sk)
{
	struct mltcp_job_hint *j = mltcp_job_of(sk);
	__u64 *seen;

	if (!j)
		return;	/* the job's first hint, when it comes, is new */
	seen = bpf_sk_storage_get(&mltcp_job_seen, sk, NULL, BPF_SK_STORAGE_GET_F_CREATE);
	if (seen)
		*seen = j->seq;
}

/* A new job-level hint for the cgroup the socket was created in; 1 if one
 * was applied. */
static __always_inline int mltcp_apply_job_hint(struct sock *sk, struct mltcp_iter *it)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct mltcp_job_hint *j = mltcp_job_of(sk);
	__u64 *seen;

	if (!j)
		return 0;
	seen = bpf_sk_storage_get(&mltcp_job_seen, sk, NULL, BPF_SK_STORAGE_GET_F_CREATE);
	if (!seen || *seen == j->seq)
		return 0;
	*seen = j->seq;
	if (j->bytes == 0 || j->bytes > MLTCP_HINT_BYTES_MAX)
		return 0;	/* the writer validates; never trust a map */
	mltcp_iter_hint(it, tp->bytes_acked, j->bytes, mltcp_now_us(tp));
	return 1;
}

/* Apply a pending hint from the application; 1 if one was applied.  A
 * socket with hints of its own ignores its job's hints. */
static __always_inline int mltcp_apply_hint(struct sock *sk, struct mltcp_iter *it)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct mltcp_hint *h;

	h = bpf_sk_storage_get(&mltcp_hints, sk, NULL, 0);
	if (!h)
		return mltcp_apply_job_hint(sk, it);
	if (h->seq == h->applied_seq)
		return 0;
	h->applied_seq = h->seq;
	mltcp_iter_hint(it, tp->bytes_acked, h->bytes, mltcp_now_us(tp));
	return 1;
}

static __always_inline void mltcp_flow_key(const struct sock *sk,
					   struct mltcp_flow_key *key)
{
	const struct sock_common *c = &sk->__sk_common;

	__builtin_memset(key, 0, sizeof(*key));
	key->netns = c->skc_net.net->ns.inum;
	key->family = c->skc_family;
	/* inet_sport, not skc_num: the port is unhashed (skc_num = 0) before
	 * .release runs at close, and release must find the same key. */
	key->sport = bpf_ntohs(((const struct inet_sock *)sk)->inet_sport);
	key->dport = bpf_ntohs(c->skc_dport);
	if (key->family == AF_INET6) {
		key->saddr[0] = c->skc_v6_rcv_saddr.in6_u.u6_addr32[0];
		key->saddr[1] = c->skc_v6_rcv_saddr.in6_u.u6_addr32[1];
		key->saddr[2] = c->skc_v6_rcv_saddr.in6_u.u6_addr32[2];
		key->saddr[3] = c->skc_v6_rcv_saddr.in6_u.u6_addr32[3];
		key->daddr[0] = c->skc_v6_daddr.in6_u.u6_addr32[0];
		key->daddr[1] = c->skc_v6_daddr.in6_u.u6_addr32[1];
		key->daddr[2] = c->skc_v6_daddr.in6_u.u6_addr32[2];
		key->daddr[3] = c->skc_v6_daddr.in6_u.u6_addr32[3];
	} else {
		key->saddr[0] = c->skc_rcv_saddr;
		key->daddr[0] = c->skc_daddr;
	}
}

static __always_inline void mltcp_stats_update(struct sock *sk,
					       const struct mltcp_iter *it,
					       const struct mltcp_params *p,
					       __u32 variant)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct mltcp_flow_stats *st, fresh = {};
	struct mltcp_flow_key key;

	mltcp_flow_key(sk, &key);
	st = bpf_map_lookup_elem(&mltcp_stats, &key);
	if (!st) {
		fresh.variant = variant;
		bpf_map_update_elem(&mltcp_stats, &key, &fresh, BPF_NOEXIST);
		st = bpf_map_lookup_elem(&mltcp_stats, &key);
		if (!st)
			return;	/* table full: this flow is not shown */
	}
	st->iter_bytes = it->iter_bytes;
	st->bytes_per_iter = it->bytes_per_iter;
	st->bytes_acked = tp->bytes_acked;
	st->iterations = it->iterations;
	st->hinted = it->hinted;
	st->ratio = mltcp_iter_ratio(it);
	st->gain = mltcp_gain_of_ratio(p, st->ratio);
	st->cwnd = tp->snd_cwnd;
	st->ssthresh = tp->snd_ssthresh;
	st->srtt_us = tp->srtt_us >> 3;
}

static __always_inline void mltcp_stats_delete(struct sock *sk)
{
	struct mltcp_flow_key key;

	mltcp_flow_key(sk, &key);
	bpf_map_delete_elem(&mltcp_stats, &key);
}

static __always_inline void mltcp_track_init(struct sock *sk, struct mltcp_iter *it)
{
	struct tcp_sock *tp = tcp_sk(sk);

	mltcp_iter_init(it, tp->bytes_acked, mltcp_now_us(tp));
	mltcp_job_hint_init(sk);
}

/* Every ack that acknowledges data: hints first, then the bytes. */
static __always_inline void mltcp_track_ack(struct sock *sk, struct mltcp_iter *it,
					    __u32 variant)
{
	struct tcp_sock *tp = tcp_sk(sk);
	const struct mltcp_params *p = mltcp_params_get();

	mltcp_apply_hint(sk, it);
	mltcp_iter_on_ack(it, tp->bytes_acked, mltcp_now_us(tp));
	if (p)
		mltcp_stats_update(sk, it, p, variant);
}

/* Sending resumes with nothing in flight: a hint or a detected boundary. */
static __always_inline void mltcp_track_tx_start(struct sock *sk, struct mltcp_iter *it)
{
	struct tcp_sock *tp = tcp_sk(sk);
	const struct mltcp_params *p;

	if (mltcp_apply_hint(sk, it))
		return;
	/* CA_EVENT_TX_START also fires for the retransmission after an RTO
	 * (everything in flight was marked lost, so "in flight" is 0) and
	 * that gap is no iteration boundary.  Only packets_out == 0, i.e.
	 * everything acked, means the application resumed sending. */
	if (tp->packets_out)
		return;
	/* Nor is a pause forced by the receiver's window: the application had
	 * data, the peer had no room (e.g. a slow reader).  The kernel's
	 * chronograph still says so while this first segment is sent: as
	 * RWND_LIMITED, or as SNDBUF_LIMITED, which outranks it when the
	 * writer blocked on the full send buffer meanwhile.  After a real
	 * pause the queues were empty, so the chronograph is UNSPEC or BUSY. */
	if (BPF_CORE_READ_BITFIELD(tp, chrono_type) >= TCP_CHRONO_RWND_LIMITED)
		return;
	p = mltcp_params_get();
	if (!p)
		return;
	mltcp_iter_on_tx_start(it, p, tp->bytes_acked, mltcp_now_us(tp),
			       tp->srtt_us >> 3);
}

static __always_inline __u32 mltcp_current_gain(const struct mltcp_iter *it)
{
	const struct mltcp_params *p = mltcp_params_get();

	return p ? mltcp_gain(it, p) : MLTCP_GAIN_ONE;
}

/* ---------------------------------------------------------------------- */
/* "mltcp": Reno with MLTCP-scaled additive increase.                      */

struct mltcp_reno_ca {
	struct mltcp_iter it;
	struct mltcp_reno_cache cache;	/* core's per-ack fast path for w */
	__u32 guard_high;		/* mltcp_guard's high-water window */
};
_Static_assert(sizeof(struct mltcp_reno_ca) <= ICSK_CA_PRIV_BYTES,
	       "mltcp state must fit in inet_csk_ca()");

SEC("struct_ops/mltcp_reno_init")
void BPF_PROG(mltcp_reno_init, struct sock *sk)
{
	struct mltcp_reno_ca *ca = inet_csk_ca(sk);

	mltcp_track_init(sk, &ca->it);
	mltcp_reno_cache_init(&ca->cache);
	ca->guard_high = 0;
	mltcp_guard(sk, &ca->guard_high, MLTCP_RENO_BETA);
}

SEC("struct_ops/mltcp_reno_cong_avoid")
void BPF_PROG(mltcp_reno_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct mltcp_reno_ca *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	const struct mltcp_params *p;
	__u32 w;

	mltcp_guard(sk, &ca->guard_high, MLTCP_RENO_BETA);
	if (!tcp_is_cwnd_limited(sk))
		return;
	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	p = mltcp_params_get();
	w = p ? mltcp_reno_ai_w_cached(&ca->cache, &ca->it, p, tp->snd_cwnd)
	      : tp->snd_cwnd;
	tcp_cong_avoid_ai(tp, w, acked);
}

SEC("struct_ops/mltcp_reno_ssthresh")
__u32 BPF_PROG(mltcp_reno_ssthresh, struct sock *sk)
{
	struct mltcp_reno_ca *ca = inet_csk_ca(sk);
	const struct mltcp_params *p = mltcp_params_get();
	__u32 beta = MLTCP_RENO_BETA;

	/* MLTCP: keep F/2 of the window instead of 1/2 (core/mltcp_window.h). */
	if (p)
		beta = mltcp_decrease_beta(beta, mltcp_gain(&ca->it, p), p);
	return mltcp_ssthresh(tcp_sk(sk)->snd_cwnd, beta);
}

SEC("struct_ops/mltcp_reno_undo_cwnd")
__u32 BPF_PROG(mltcp_reno_undo_cwnd, struct sock *sk)
{
	struct mltcp_reno_ca *ca = inet_csk_ca(sk);

	return mltcp_guard_undo(tcp_reno_undo_cwnd(sk), ca->guard_high);
}

SEC("struct_ops/mltcp_reno_cwnd_event")
void BPF_PROG(mltcp_reno_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct mltcp_reno_ca *ca = inet_csk_ca(sk);

	mltcp_guard(sk, &ca->guard_high, MLTCP_RENO_BETA);
	if (ev == CA_EVENT_TX_START)
		mltcp_track_tx_start(sk, &ca->it);
}

SEC("struct_ops/mltcp_reno_pkts_acked")
void BPF_PROG(mltcp_reno_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct mltcp_reno_ca *ca = inet_csk_ca(sk);

	mltcp_guard(sk, &ca->guard_high, MLTCP_RENO_BETA);
	mltcp_track_ack(sk, &ca->it, MLTCP_VARIANT_RENO);
}

SEC("struct_ops/mltcp_reno_release")
void BPF_PROG(mltcp_reno_release, struct sock *sk)
{
	mltcp_stats_delete(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops mltcp = {
	.init		= (void *)mltcp_reno_init,
	.ssthresh	= (void *)mltcp_reno_ssthresh,
	.cong_avoid	= (void *)mltcp_reno_cong_avoid,
	.undo_cwnd	= (void *)mltcp_reno_undo_cwnd,
	.cwnd_event	= (void *)mltcp_reno_cwnd_event,
	.pkts_acked	= (void *)mltcp_reno_pkts_acked,
	.release	= (void *)mltcp_reno_release,
	.flags		= TCP_CONG_NON_RESTRICTED,
	.name		= MLTCP_CC_RENO,
};

/* ---------------------------------------------------------------------- */
/* "mltcp_cubic": CUBIC (after bpf_cubic.c) with MLTCP-scaled ca->cnt.    */

#define BICTCP_BETA_SCALE	1024	/* scale of beta: max_cwnd = cwnd * beta */
#define BICTCP_HZ		10	/* BIC HZ 2^10 = 1024 */
#define HYSTART_ACK_TRAIN	0x1
#define HYSTART_DELAY		0x2
#define HYSTART_MIN_SAMPLES	8
#define HYSTART_DELAY_MIN	4000U	/* 4 ms */
#define HYSTART_DELAY_MAX	16000U	/* 16 ms */
#define HYSTART_LOW_WINDOW	16
#define HYSTART_ACK_DELTA_US	2000
#define CUBIC_BETA		717	/* 717/1024 */
#define CUBIC_BIC_SCALE		41
#define CUBIC_UPDATE_MIN_US	USEC_PER_MSEC		/* bpf_cubic: one jiffy */
#define CUBIC_SAME_CWND_US	(USEC_PER_SEC / 32)	/* bpf_cubic: HZ / 32 */
#define GSO_MAX_SIZE		65536

#define cubic_min(a, b) ((a) < (b) ? (a) : (b))
#define cubic_max(a, b) ((a) > (b) ? (a) : (b))
#define cubic_clamp(v, lo, hi) cubic_min(cubic_max((v), (lo)), (hi))
#define HYSTART_DELAY_THRESH(x) cubic_clamp(x, HYSTART_DELAY_MIN, HYSTART_DELAY_MAX)

static const __u32 cube_rtt_scale = CUBIC_BIC_SCALE * 10;	/* 1024*c/rtt */
static const __u32 beta_scale = 8 * (BICTCP_BETA_SCALE + CUBIC_BETA) / 3 /
				(BICTCP_BETA_SCALE - CUBIC_BETA);
/* 1/c * 2^2*bictcp_HZ * srtt, 2^40 */
static const __u64 cube_factor = (__u64)(1ull << (10 + 3 * BICTCP_HZ)) /
				 (CUBIC_BIC_SCALE * 10);

struct mltcp_bictcp {
	__u32 cnt;		/* increase cwnd by 1 after ACKs */
	__u32 last_max_cwnd;	/* last maximum snd_cwnd */
	__u32 last_cwnd;	/* the last snd_cwnd */
	__u32 last_time;	/* time (us) when last_cwnd was updated */
	__u32 bic_origin_point;	/* origin point of bic function */
	__u32 bic_K;		/* time to origin point from epoch start */
	__u32 delay_min;	/* min delay (usec) */
	__u32 epoch_start;	/* beginning of an epoch (us) */
	__u32 ack_cnt;		/* number of acks */
	__u32 tcp_cwnd;		/* estimated tcp cwnd */
	__u16 epoch_carry;	/* MLTCP: sub-us remainder of the clock scaling */
	__u8 sample_cnt;	/* number of samples to decide curr_rtt */
	__u8 found;		/* the exit point is found? */
	__u32 round_start;	/* beginning of each round */
	__u32 end_seq;		/* end_seq of the round */
	__u32 last_ack;		/* last time when the ACK spacing is close */
	__u32 curr_rtt;		/* the minimum rtt of current round */
};

struct mltcp_cubic_ca {
	struct mltcp_iter it;
	struct mltcp_bictcp bic;
	__u32 guard_high;		/* mltcp_guard's high-water window */
};
_Static_assert(sizeof(struct mltcp_cubic_ca) <= ICSK_CA_PRIV_BYTES,
	       "mltcp_cubic state (core iteration + CUBIC) must fit in inet_csk_ca()");

static __always_inline int before32(__u32 seq1, __u32 seq2)
{
	return (__s32)(seq1 - seq2) < 0;
}
#define after32(seq2, seq1) before32(seq1, seq2)

static __always_inline void bictcp_reset(struct mltcp_bictcp *ca)
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

static __always_inline void bictcp_hystart_reset(struct sock *sk, struct mltcp_bictcp *ca)
{
	struct tcp_sock *tp = tcp_sk(sk);

	ca->round_start = ca->last_ack = mltcp_now_us(tp);
	ca->end_seq = tp->snd_nxt;
	ca->curr_rtt = ~0U;
	ca->sample_cnt = 0;
}

static int fls64(__u64 x)
{
	int num = 63;

	if (x == 0)
		return 0;
	if (!(x & (~0ull << 32))) {
		num -= 32;
		x <<= 32;
	}
	if (!(x & (~0ull << 48))) {
		num -= 16;
		x <<= 16;
	}
	if (!(x & (~0ull << 56))) {
		num -= 8;
		x <<= 8;
	}
	if (!(x & (~0ull << 60))) {
		num -= 4;
		x <<= 4;
	}
	if (!(x & (~0ull << 62))) {
		num -= 2;
		x <<= 2;
	}
	if (!(x & (~0ull << 63)))
		num -= 1;
	return num + 1;
}

/* cbrt(x) MSB values for x MSB values in [0..63] (Willy Tarreau's table). */
static const __u8 cubic_v[] = {
	/* 0x00 */    0,   54,   54,   54,  118,  118,  118,  118,
	/* 0x08 */  123,  129,  134,  138,  143,  147,  151,  156,
	/* 0x10 */  157,  161,  164,  168,  170,  173,  176,  179,
	/* 0x18 */  181,  185,  187,  190,  192,  194,  197,  199,
	/* 0x20 */  200,  202,  204,  206,  209,  211,  213,  215,
	/* 0x28 */  217,  219,  221,  222,  224,  225,  227,  229,
	/* 0x30 */  231,  232,  234,  236,  237,  239,  240,  242,
	/* 0x38 */  244,  245,  246,  248,  250,  251,  252,  254,
};

/* Cubic root by table lookup and one Newton-Raphson step (~0.195% error). */
static __u32 cubic_root(__u64 a)
{
	__u32 x, b, shift;

	if (a < 64)
		return ((__u32)cubic_v[(__u32)a] + 35) >> 6;
	b = fls64(a);
	b = ((b * 84) >> 8) - 1;
	/* b makes shift < 64, as in tcp_cubic.c.  The mask (not a branch,
	 * which clang would fold into the index) bounds the index for the
	 * verifier: 6.1's range tracking can reach an impossible state
	 * (umin > umax) on a dead path here and then rejects the access. */
	shift = (a >> (b * 3)) & 63;
	x = ((__u32)(((__u32)cubic_v[shift] + 10) << b)) >> 6;
	x = (2 * x + (__u32)(a / ((__u64)x * (__u64)(x - 1))));
	x = ((x * 341) >> 10);
	return x;
}

/* CUBIC's window target; sets ca->cnt (acks per one-segment increase),
 * before CUBIC's final max(cnt, 2), which the caller applies with F.
 * MLTCP: F scales CUBIC's clock and its TCP-friendly estimate. */
static __always_inline void bictcp_update(struct mltcp_bictcp *ca, __u32 cwnd,
					  __u32 acked, __u32 now, __u32 gain)
{
	__u32 delta, bic_target, max_cnt, dt;
	__u64 offs, t;

	ca->ack_cnt += acked;	/* count the number of ACKed packets */

	if (ca->last_cwnd == cwnd &&
	    (__s32)(now - ca->last_time) <= (__s32)CUBIC_SAME_CWND_US)
		return;

	/* The CUBIC function updates ca->cnt at most once per millisecond;
	 * every cwnd reduction sets epoch_start to 0, forcing a recompute. */
	if (ca->epoch_start && (__s32)(now - ca->last_time) < (__s32)CUBIC_UPDATE_MIN_US)
		goto tcp_friendliness;

	ca->last_cwnd = cwnd;
	dt = now - ca->last_time;
	ca->last_time = now;

	if (ca->epoch_start) {
		/* MLTCP: the curve advances F * dt over the last dt. */
		ca->epoch_start = mltcp_cubic_epoch_scale(ca->epoch_start, now, dt, gain,
							  &ca->epoch_carry) | 1;
	} else {
		ca->epoch_start = now | 1;	/* 0 means "no epoch" */
		ca->epoch_carry = 0;
		ca->ack_cnt = acked;
		ca->tcp_cwnd = cwnd;
		if (ca->last_max_cwnd <= cwnd) {
			ca->bic_K = 0;
			ca->bic_origin_point = cwnd;
		} else {
			ca->bic_K = cubic_root(cube_factor * (ca->last_max_cwnd - cwnd));
			ca->bic_origin_point = ca->last_max_cwnd;
		}
	}

	/* time since epoch start plus min delay, in 1/1024 s */
	t = (__u64)(__u32)(now - ca->epoch_start);
	t += ca->delay_min;
	t <<= BICTCP_HZ;
	t /= USEC_PER_SEC;

	if (t < ca->bic_K)
		offs = ca->bic_K - t;
	else
		offs = t - ca->bic_K;

	/* c/rtt * (t-K)^3 */
	delta = (cube_rtt_scale * offs * offs * offs) >> (10 + 3 * BICTCP_HZ);
	if (t < ca->bic_K)
		bic_target = ca->bic_origin_point - delta;
	else
		bic_target = ca->bic_origin_point + delta;

	if (bic_target > cwnd)
		ca->cnt = cwnd / (bic_target - cwnd);
	else
		ca->cnt = 100 * cwnd;	/* very small increment */

	/* The initial growth may be too conservative while the available
	 * bandwidth is unknown: at least 5% per RTT. */
	if (ca->last_max_cwnd == 0 && ca->cnt > 20)
		ca->cnt = 20;

tcp_friendliness:
	delta = mltcp_cubic_friendly_acks((cwnd * beta_scale) >> 3, gain);
	if (ca->ack_cnt > delta && delta) {
		__u32 n = ca->ack_cnt / delta;

		ca->ack_cnt -= n * delta;
		ca->tcp_cwnd += n;
	}
	if (ca->tcp_cwnd > cwnd) {	/* bic is slower than tcp */
		delta = ca->tcp_cwnd - cwnd;
		max_cnt = cwnd / delta;
		if (ca->cnt > max_cnt)
			ca->cnt = max_cnt;
	}

	/* ca->cnt stays CUBIC's own value before its max(cnt, 2): the early
	 * returns above reuse it, so scaling it in place would compound.  The
	 * caller applies F and the max(cnt, 2) (mltcp_cubic_cnt does both). */
}

/* What .ssthresh does to CUBIC's state at a loss with the window cwnd. */
static __always_inline void bictcp_loss(struct mltcp_bictcp *ca, __u32 cwnd)
{
	ca->epoch_start = 0;	/* end of epoch */

	/* Wmax and fast convergence */
	if (cwnd < ca->last_max_cwnd)
		ca->last_max_cwnd = (cwnd * (BICTCP_BETA_SCALE + CUBIC_BETA))
				    / (2 * BICTCP_BETA_SCALE);
	else
		ca->last_max_cwnd = cwnd;
}

/* mltcp_guard for CUBIC: a repaired ssthresh also redoes .ssthresh's
 * bookkeeping, which did not run either. */
static __always_inline void mltcp_cubic_guard(struct sock *sk, struct mltcp_cubic_ca *ca)
{
	if (mltcp_guard(sk, &ca->guard_high, CUBIC_BETA))
		bictcp_loss(&ca->bic, mltcp_min_u32(tcp_sk(sk)->prior_cwnd, ca->guard_high));
}

SEC("struct_ops/mltcp_cubic_init")
void BPF_PROG(mltcp_cubic_init, struct sock *sk)
{
	struct mltcp_cubic_ca *ca = inet_csk_ca(sk);

	mltcp_track_init(sk, &ca->it);
	bictcp_reset(&ca->bic);
	bictcp_hystart_reset(sk, &ca->bic);
	ca->guard_high = 0;
	mltcp_cubic_guard(sk, ca);
}

SEC("struct_ops/mltcp_cubic_cwnd_event")
void BPF_PROG(mltcp_cubic_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct mltcp_cubic_ca *ca = inet_csk_ca(sk);
	__u32 now, idle;

	mltcp_cubic_guard(sk, ca);
	if (ev != CA_EVENT_TX_START)
		return;
	/* Application limited (idle) for a while: shift epoch_start to keep
	 * cwnd growth on the cubic curve. */
	now = mltcp_now_us(tcp_sk(sk));
	idle = mltcp_elapsed_us(ca->it.last_active_us, now);
	if (ca->bic.epoch_start && idle) {
		ca->bic.epoch_start += idle;
		if (after32(ca->bic.epoch_start, now))
			ca->bic.epoch_start = now;
		ca->bic.epoch_start |= 1;
	}
	mltcp_track_tx_start(sk, &ca->it);
}

SEC("struct_ops/mltcp_cubic_cong_avoid")
void BPF_PROG(mltcp_cubic_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct mltcp_cubic_ca *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 gain;

	mltcp_cubic_guard(sk, ca);
	if (!tcp_is_cwnd_limited(sk))
		return;
	if (tcp_in_slow_start(tp)) {
		if (after32(ack, ca->bic.end_seq))
			bictcp_hystart_reset(sk, &ca->bic);
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	gain = mltcp_current_gain(&ca->it);
	bictcp_update(&ca->bic, tp->snd_cwnd, acked, mltcp_now_us(tp), gain);
	/* MLTCP: F also scales the catch-up towards the curve; then CUBIC's
	 * "at most 1 packet per 2 acked" (1.5x per RTT). */
	tcp_cong_avoid_ai(tp, mltcp_cubic_cnt(ca->bic.cnt, gain), acked);
}

SEC("struct_ops/mltcp_cubic_recalc_ssthresh")
__u32 BPF_PROG(mltcp_cubic_recalc_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct mltcp_cubic_ca *ca = inet_csk_ca(sk);

	const struct mltcp_params *p = mltcp_params_get();
	__u32 beta = CUBIC_BETA;

	bictcp_loss(&ca->bic, tp->snd_cwnd);
	/* MLTCP: keep 0.7 * F of the window instead of 0.7; W_max and fast
	 * convergence above stay CUBIC's own. */
	if (p)
		beta = mltcp_decrease_beta(beta, mltcp_gain(&ca->it, p), p);
	return mltcp_ssthresh(tp->snd_cwnd, beta);
}

SEC("struct_ops/mltcp_cubic_state")
void BPF_PROG(mltcp_cubic_state, struct sock *sk, __u8 new_state)
{
	struct mltcp_cubic_ca *ca = inet_csk_ca(sk);

	if (new_state == TCP_CA_Loss) {
		bictcp_reset(&ca->bic);
		bictcp_hystart_reset(sk, &ca->bic);
	}
}

/* TSO/GRO delay cushion for short-RTT flows, capped at 1 ms. */
static __always_inline __u32 hystart_ack_delay(struct sock *sk)
{
	unsigned long rate = sk->sk_pacing_rate;

	if (!rate)
		return 0;
	return cubic_min((__u64)USEC_PER_MSEC,
			 (__u64)GSO_MAX_SIZE * 4 * USEC_PER_SEC / rate);
}

static __always_inline void hystart_update(struct sock *sk, struct mltcp_bictcp *ca,
					   __u32 delay)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 threshold, now = mltcp_now_us(tp);

	/* first detection parameter - ack-train detection */
	if ((__s32)(now - ca->last_ack) <= HYSTART_ACK_DELTA_US) {
		ca->last_ack = now;
		threshold = ca->delay_min + hystart_ack_delay(sk);
		/* Pacing might have delayed packets up to RTT/2 in slow start. */
		if (sk->sk_pacing_status == SK_PACING_NONE)
			threshold >>= 1;
		if ((__s32)(now - ca->round_start) > (__s32)threshold) {
			ca->found = 1;
			tp->snd_ssthresh = tp->snd_cwnd;
		}
	}

	/* second: a delay increase over the minimum of a few samples */
	if (ca->curr_rtt > delay)
		ca->curr_rtt = delay;
	if (ca->sample_cnt < HYSTART_MIN_SAMPLES) {
		ca->sample_cnt++;
	} else if (ca->curr_rtt > ca->delay_min +
		   HYSTART_DELAY_THRESH(ca->delay_min >> 3)) {
		ca->found = 1;
		tp->snd_ssthresh = tp->snd_cwnd;
	}
}

SEC("struct_ops/mltcp_cubic_acked")
void BPF_PROG(mltcp_cubic_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct mltcp_cubic_ca *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);
	__u32 delay;

	mltcp_cubic_guard(sk, ca);
	mltcp_track_ack(sk, &ca->it, MLTCP_VARIANT_CUBIC);

	/* Some calls are for duplicates without timestamps */
	if (sample->rtt_us < 0)
		return;
	/* Discard delay samples right after fast recovery */
	if (ca->bic.epoch_start &&
	    (__s32)(mltcp_now_us(tp) - ca->bic.epoch_start) < (__s32)USEC_PER_SEC)
		return;
	delay = sample->rtt_us;
	if (delay == 0)
		delay = 1;
	/* first time call or link delay decreases */
	if (ca->bic.delay_min == 0 || ca->bic.delay_min > delay)
		ca->bic.delay_min = delay;
	if (!ca->bic.found && tcp_in_slow_start(tp) &&
	    tp->snd_cwnd >= HYSTART_LOW_WINDOW)
		hystart_update(sk, &ca->bic, delay);
}

SEC("struct_ops/mltcp_cubic_undo_cwnd")
__u32 BPF_PROG(mltcp_cubic_undo_cwnd, struct sock *sk)
{
	struct mltcp_cubic_ca *ca = inet_csk_ca(sk);

	return mltcp_guard_undo(tcp_reno_undo_cwnd(sk), ca->guard_high);
}

SEC("struct_ops/mltcp_cubic_release")
void BPF_PROG(mltcp_cubic_release, struct sock *sk)
{
	mltcp_stats_delete(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops mltcp_cubic = {
	.init		= (void *)mltcp_cubic_init,
	.ssthresh	= (void *)mltcp_cubic_recalc_ssthresh,
	.cong_avoid	= (void *)mltcp_cubic_cong_avoid,
	.set_state	= (void *)mltcp_cubic_state,
	.undo_cwnd	= (void *)mltcp_cubic_undo_cwnd,
	.cwnd_event	= (void *)mltcp_cubic_cwnd_event,
	.pkts_acked	= (void *)mltcp_cubic_acked,
	.release	= (void *)mltcp_cubic_release,
	.flags		= TCP_CONG_NON_RESTRICTED,
	.name		= MLTCP_CC_CUBIC,
};
