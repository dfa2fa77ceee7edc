// SPDX-License-Identifier: GPL-2.0
/*
 * mltcp.bpf.c - MLTCP as BPF struct_ops congestion controls:
 *
 *   "mltcp"        Reno whose congestion-avoidance growth is scaled by the
 *                  MLTCP gain F and whose loss keeps cwnd * F/2
 *                  (mltcp_reno_flow_* in core/mltcp_reno.h);
 *   "mltcp_cubic"  CUBIC with HyStart, F scaling its clock, its
 *                  TCP-friendly estimate, ca->cnt and the window kept at a
 *                  loss (mltcp_cubic_flow_* in core/mltcp_cubic.h, which
 *                  lists how it differs from tcp_cubic.c).
 *
 * All policy comes from core/mltcp.h; this file only adapts the kernel's
 * hooks to it, as the kernel module does.  Differences from the module:
 * the window guard below; HyStart's TSO cushion uses a fixed 64 KiB GSO
 * size (bpf_cubic.c does the same); and jobs: the sockets of one job's
 * cgroup share one bytes ratio (core/mltcp_job.h, the jobs map below), one
 * first-iteration seed and the job's idle gaps, and the start drain spares
 * a job that receives as it sends (its traffic, which the cgroup's
 * mltcp_sockops.bpf.c counts), where the module keeps a ratio, a seed and a
 * gap per socket and tests only a socket's own traffic.
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
 * Pinned by mltcpctl under /sys/fs/bpf/mltcp/: config (the .data map
 * holding the runtime parameters mltcp_cfg, a global read directly on every
 * ack), hints (socket storage: "an iteration of N bytes starts now"), jobs
 * (per cgroup: the same hints, written through mltcp_jobhint.bpf.c, the
 * job's progress and activity, which its sockets keep here, and its
 * traffic, which mltcp_sockops.bpf.c adds), stats (an
 * iterator link that reads the socket storage mltcp_flows, which holds the
 * per-flow counters and is deleted in .release), state (mltcpctl's own),
 * counters (the .bss with the host counters).
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
/* Like reno and cubic: any process (no CAP_NET_ADMIN) may select it, and a
 * non-initial network namespace may make it its default. */
#define TCP_CONG_NON_RESTRICTED	0x1

extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

/*
 * Runtime parameters: a global in .data, read directly on every ack (no map
 * lookup).  mltcpctl fills it before load and rewrites it through the
 * pinned .data map (MLTCP_PIN_CONFIG) on `mltcpctl set`.
 */
struct mltcp_params mltcp_cfg = MLTCP_PARAMS_INIT;

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct mltcp_hint);
} mltcp_hints SEC(".maps");

/* Jobs, keyed by cgroup v2 id (mltcp_bpf_shared.h), and per socket what it
 * knows of its job: the last job hint seq it has seen and its share of the
 * job's progress. */
#include "mltcp_job_map.bpf.h"

struct mltcp_job_sock {
	__u64 seen_seq;
	__u64 epoch;			/* of the entry `share` was added to */
	struct mltcp_job_member share;
	struct mltcp_traffic traffic_seen; /* the job's at the last transmit start */
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct mltcp_job_sock);
} mltcp_job_socks SEC(".maps");

/* Per-flow stats, in the socket itself: no capacity, no key to compute per
 * ack; read through the iterator mltcp_stats_iter below. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct mltcp_flow_stats);
} mltcp_flows SEC(".maps");

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

/* Host counters since load, both variants (the .bss map is pinned as
 * MLTCP_PIN_COUNTERS; mltcpctl exporter serves them): flows that got a
 * stats entry, flows refused one (no memory for its socket storage),
 * iterations completed and
 * of those started by a hint, summed over flows. */
volatile __u64 mltcp_flows_tracked;
volatile __u64 mltcp_flows_untracked;
volatile __u64 mltcp_iterations;
volatile __u64 mltcp_iterations_hinted;

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
	if (ss_fixed || cwnd_fixed) {
		struct mltcp_flow_stats *st = bpf_sk_storage_get(&mltcp_flows, sk, NULL, 0);

		__sync_fetch_and_add(&mltcp_guard_repairs, 1);
		if (st)		/* none before the flow's first stats update */
			st->window_repairs++;
	}
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

static __always_inline struct mltcp_job *mltcp_job_of(const struct sock *sk)
{
	__u64 cgid = sk->sk_cgrp_data.cgroup->kn->id;

	return bpf_map_lookup_elem(&mltcp_jobs, &cgid);
}

/* Add the socket's change to its job's sums (atomics: the members run on
 * any CPU). */
static __always_inline void mltcp_job_add(struct mltcp_job *j, const struct mltcp_job_delta *d)
{
	if (d->iter_bytes)
		__sync_fetch_and_add(&j->iter_bytes_sum, d->iter_bytes);
	if (d->bytes_per_iter)
		__sync_fetch_and_add(&j->bytes_per_iter_sum, d->bytes_per_iter);
}

/* .release: the socket's share leaves its job. */
static __always_inline void mltcp_job_leave(struct sock *sk)
{
	struct mltcp_job *j = mltcp_job_of(sk);
	struct mltcp_job_sock *js;
	struct mltcp_job_delta d;

	js = bpf_sk_storage_get(&mltcp_job_socks, sk, NULL, 0);
	if (!js)
		return;
	if (j && js->epoch == j->epoch) {
		mltcp_job_member_leave(&js->share, &d);
		mltcp_job_add(j, &d);
	}
	bpf_sk_storage_delete(&mltcp_job_socks, sk);
}

/* Golden-ratio multiplier (Knuth): spreads an entry's epoch, or a job's
 * seed (small integers too), over the top bits the seed is taken from. */
#define MLTCP_SEED_HASH_MUL	0x9E3779B97F4A7C15ULL

static __always_inline __u32 mltcp_seed_hash(__u64 v)
{
	return (__u32)((v * MLTCP_SEED_HASH_MUL) >> 32);
}

/* A new job-level hint for the cgroup the socket was created in; 1 if one
 * was applied. */
static __always_inline int mltcp_apply_job_hint(struct sock *sk, struct mltcp_iter *it,
						struct mltcp_job *j, struct mltcp_job_sock *js)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (js->seen_seq == j->seq)
		return 0;
	js->seen_seq = j->seq;
	if (j->bytes == 0 || j->bytes > MLTCP_HINT_BYTES_MAX)
		return 0;	/* the writer validates; never trust a map */
	/* A socket created before its job had a seed (Gloo's, before the
	 * training loop sets it) takes the job's at its first hint, when its
	 * first hinted iteration, the seeded one, begins. */
	if (j->has_seed && !(it->flags & MLTCP_F_HINTED))
		mltcp_iter_seed(it, &mltcp_cfg, mltcp_seed_hash(j->seed));
	mltcp_iter_hint(it, tp->bytes_acked, j->bytes, mltcp_now_us(tp));
	return 1;
}

/* The job the socket tracks with, if any: not one with hints of its own
 * (those are per socket), and its storage synchronised with the entry.
 * joining_late: called at an ack or a transmit start, not at .init. */
static __always_inline struct mltcp_job *mltcp_job_track_of(struct sock *sk,
							   int joining_late,
							   struct mltcp_job_sock **jsp)
{
	struct mltcp_job *j = mltcp_job_of(sk);
	struct mltcp_job_sock *js;

	if (!j)
		return NULL;
	js = bpf_sk_storage_get(&mltcp_job_socks, sk, NULL, BPF_SK_STORAGE_GET_F_CREATE);
	if (!js)
		return NULL;
	if (js->epoch != j->epoch) {
		/* Created before its job (attach after connect; Gloo's
		 * connections, opened before the training loop's first hint),
		 * or the entry was removed and created anew: start from
		 * nothing.  A socket joins at its first ack or send after the
		 * entry appeared, so the entry's last hint, if any, came while
		 * it was silent: what it sends now is in the iteration that
		 * hint announced, which it applies next.  At .init, a new
		 * socket's, the hints so far are history. */
		js->seen_seq = joining_late ? 0 : j->seq;
		js->epoch = j->epoch;
		mltcp_job_member_init(&js->share);
		js->traffic_seen = j->traffic;
	}
	*jsp = js;
	return j;
}

/* At .init: the job's hints so far are history, not this socket's start,
 * and the socket has added nothing to the job's progress yet.  Returns the
 * socket's first-iteration seed (mltcp_iter_seed): one per job, from its
 * entry's epoch or the seed the job set (MLTCP_JOB_SEED), so that a job's
 * connections agree; a socket without a job draws its own. */
static __always_inline __u32 mltcp_job_join(struct sock *sk)
{
	struct mltcp_job_sock *js;
	struct mltcp_job *j;

	/* No job: the job's first hint, when it comes, is new. */
	j = mltcp_job_track_of(sk, 0, &js);
	if (!j)
		return bpf_get_prandom_u32();
	return mltcp_seed_hash(j->has_seed ? j->seed : j->epoch);
}

/* After the flow's own tracking: its activity and share into the job's
 * (app_start: the application resumed sending) and the job's ratio back
 * into the flow. */
static __always_inline void mltcp_job_update(struct sock *sk, struct mltcp_iter *it,
					     struct mltcp_job *j, struct mltcp_job_sock *js,
					     int app_start)
{
	struct mltcp_job_delta d;

	if (!j) {
		mltcp_iter_set_job_ratio(it, MLTCP_RATIO_NONE);
		return;
	}
	mltcp_job_activity_touch(&j->activity, &mltcp_cfg, it, mltcp_now_us(tcp_sk(sk)),
				 app_start);
	if (mltcp_job_member_update(&js->share, it, &d))
		mltcp_job_add(j, &d);
	mltcp_iter_set_job_ratio(it, mltcp_job_ratio(j->iter_bytes_sum, j->bytes_per_iter_sum));
}

/* Apply a pending hint from the application; 1 if one was applied.  A
 * socket with hints of its own ignores its job: *jp is its job otherwise. */
static __always_inline int mltcp_apply_hint(struct sock *sk, struct mltcp_iter *it,
					    struct mltcp_job **jp, struct mltcp_job_sock **jsp)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct mltcp_hint *h;

	*jp = NULL;
	h = bpf_sk_storage_get(&mltcp_hints, sk, NULL, 0);
	if (!h) {
		*jp = mltcp_job_track_of(sk, 1, jsp);
		return *jp ? mltcp_apply_job_hint(sk, it, *jp, *jsp) : 0;
	}
	if (h->seq == h->applied_seq)
		return 0;
	h->applied_seq = h->seq;
	mltcp_iter_hint(it, tp->bytes_acked, h->bytes, mltcp_now_us(tp));
	return 1;
}

static __always_inline void mltcp_stats_update(struct sock *sk,
					       const struct mltcp_iter *it,
					       __u32 variant)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct mltcp_flow_stats *st;

	st = bpf_sk_storage_get(&mltcp_flows, sk, NULL, 0);
	if (!st) {
		st = bpf_sk_storage_get(&mltcp_flows, sk, NULL, BPF_SK_STORAGE_GET_F_CREATE);
		if (!st) {
			__sync_fetch_and_add(&mltcp_flows_untracked, 1);
			return;	/* no memory: this flow is not shown */
		}
		__sync_fetch_and_add(&mltcp_flows_tracked, 1);
		st->variant = variant;
	}
	if (it->iterations > st->iterations)
		__sync_fetch_and_add(&mltcp_iterations, it->iterations - st->iterations);
	if (it->hinted > st->hinted)
		__sync_fetch_and_add(&mltcp_iterations_hinted, it->hinted - st->hinted);
	st->iter_bytes = it->iter_bytes;
	st->bytes_per_iter = it->bytes_per_iter;
	st->bytes_acked = tp->bytes_acked;
	st->iterations = it->iterations;
	st->hinted = it->hinted;
	st->ratio = mltcp_iter_ratio(it);
	st->gain = variant == MLTCP_VARIANT_CUBIC ? mltcp_cubic_gain(it, &mltcp_cfg) :
						    mltcp_reno_gain(it, &mltcp_cfg);
	st->cwnd = tp->snd_cwnd;
	st->ssthresh = tp->snd_ssthresh;
	st->srtt_us = tp->srtt_us >> 3;
}

/* .release: the socket leaves MLTCP (close, or another congestion control). */
static __always_inline void mltcp_release(struct sock *sk)
{
	bpf_sk_storage_delete(&mltcp_flows, sk);
	mltcp_job_leave(sk);
}

/* Every ack that acknowledges data: hints first, then the bytes, then the
 * job. */
static __always_inline void mltcp_track_ack(struct sock *sk, struct mltcp_iter *it,
					    __u32 variant)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct mltcp_job_sock *js = NULL;
	struct mltcp_job *j;

	mltcp_apply_hint(sk, it, &j, &js);
	mltcp_iter_on_ack(it, tp->bytes_acked, mltcp_now_us(tp));
	mltcp_job_update(sk, it, j, js, 0);
	mltcp_stats_update(sk, it, variant);
}

/* CA_EVENT_TX_START: did the application resume sending after a pause? */
static __always_inline int mltcp_tx_resumed(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);

	/* CA_EVENT_TX_START also fires for the retransmission after an RTO
	 * (everything in flight was marked lost, so "in flight" is 0) and
	 * that gap is no iteration boundary.  Only packets_out == 0, i.e.
	 * everything acked, means the application resumed sending. */
	if (tp->packets_out)
		return 0;
	/* Nor is a pause forced by the receiver's window: the application had
	 * data, the peer had no room (e.g. a slow reader).  The kernel's
	 * chronograph still says so while this first segment is sent: as
	 * RWND_LIMITED, or as SNDBUF_LIMITED, which outranks it when the
	 * writer blocked on the full send buffer meanwhile.  After a real
	 * pause the queues were empty, so the chronograph is UNSPEC or BUSY. */
	return BPF_CORE_READ_BITFIELD(tp, chrono_type) < TCP_CHRONO_RWND_LIMITED;
}

/* Sending resumes with nothing in flight: a hint or a detected boundary,
 * then the job; 1 if the application resumed (the start drain may act).
 * *job_traffic: the job's traffic since the socket's previous application
 * start, for the start drain; NULL without a job. */
static __always_inline int mltcp_track_tx_start(struct sock *sk, struct mltcp_iter *it,
						struct mltcp_traffic **job_traffic)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct mltcp_job_sock *js = NULL;
	struct mltcp_job *j;
	int resumed = mltcp_tx_resumed(sk);
	int hinted = mltcp_apply_hint(sk, it, &j, &js);

	if (j && resumed)
		mltcp_job_traffic_since(&js->traffic_seen, j->traffic.acked, j->traffic.received,
					*job_traffic);
	else
		*job_traffic = NULL;

	/* A hint is the boundary; a retransmission after a timeout is none. */
	if (!hinted && resumed)
		mltcp_job_member_on_tx_start(it, j ? &j->activity : NULL, &mltcp_cfg,
					     tp->bytes_acked, mltcp_now_us(tp), tp->srtt_us >> 3);
	mltcp_job_update(sk, it, j, js, resumed);
	return resumed;
}

/* The start drain's result (mltcp_*_flow_start_cwnd): a lower window
 * becomes cwnd and ssthresh, as at the end of a window reduction. */
static __always_inline void mltcp_start_window(struct tcp_sock *tp, __u32 start)
{
	if (start >= tp->snd_cwnd)
		return;
	tp->snd_cwnd = start;
	tp->snd_ssthresh = start;
	tp->snd_cwnd_cnt = 0;
}

/* tcp_min_rtt(): the path's RTT without a queue (~0U before a sample). */
static __always_inline __u32 mltcp_min_rtt_us(const struct tcp_sock *tp)
{
	return tp->rtt_min.s[0].v;
}

/* ---------------------------------------------------------------------- */
/* "mltcp": Reno with MLTCP-scaled additive increase.                      */

struct mltcp_reno_ca {
	struct mltcp_reno_flow f;	/* core: tracker and w cache */
	__u32 guard_high;		/* mltcp_guard's high-water window */
};
_Static_assert(sizeof(struct mltcp_reno_ca) <= ICSK_CA_PRIV_BYTES,
	       "mltcp state must fit in inet_csk_ca()");

SEC("struct_ops/mltcp_reno_init")
void BPF_PROG(mltcp_reno_init, struct sock *sk)
{
	struct mltcp_reno_ca *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	mltcp_reno_flow_init(&ca->f, tp->bytes_acked, mltcp_now_us(tp));
	mltcp_iter_seed(&ca->f.it, &mltcp_cfg, mltcp_job_join(sk));
	ca->guard_high = 0;
	mltcp_guard(sk, &ca->guard_high, MLTCP_RENO_BETA);
}

SEC("struct_ops/mltcp_reno_cong_avoid")
void BPF_PROG(mltcp_reno_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct mltcp_reno_ca *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	mltcp_guard(sk, &ca->guard_high, MLTCP_RENO_BETA);
	if (!tcp_is_cwnd_limited(sk) ||
	    mltcp_reno_flow_hold(&ca->f, &mltcp_cfg, tp->snd_cwnd, tp->mss_cache))
		return;
	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	tcp_cong_avoid_ai(tp, mltcp_reno_flow_ai_w(&ca->f, &mltcp_cfg, tp->snd_cwnd), acked);
}

SEC("struct_ops/mltcp_reno_ssthresh")
__u32 BPF_PROG(mltcp_reno_ssthresh, struct sock *sk)
{
	struct mltcp_reno_ca *ca = inet_csk_ca(sk);

	return mltcp_reno_flow_ssthresh(&ca->f, &mltcp_cfg, tcp_sk(sk)->snd_cwnd);
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
	struct tcp_sock *tp = tcp_sk(sk);
	struct mltcp_traffic job_traffic, *job = &job_traffic;

	mltcp_guard(sk, &ca->guard_high, MLTCP_RENO_BETA);
	if (ev == CA_EVENT_TX_START && mltcp_track_tx_start(sk, &ca->f.it, &job))
		mltcp_start_window(tp, mltcp_reno_flow_start_cwnd(&ca->f, &mltcp_cfg, tp->snd_cwnd,
								  tp->mss_cache, mltcp_min_rtt_us(tp),
								  tp->srtt_us >> 3, tp->bytes_acked,
								  tp->bytes_received, job));
}

SEC("struct_ops/mltcp_reno_pkts_acked")
void BPF_PROG(mltcp_reno_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct mltcp_reno_ca *ca = inet_csk_ca(sk);

	mltcp_guard(sk, &ca->guard_high, MLTCP_RENO_BETA);
	mltcp_track_ack(sk, &ca->f.it, MLTCP_VARIANT_RENO);
}

SEC("struct_ops/mltcp_reno_release")
void BPF_PROG(mltcp_reno_release, struct sock *sk)
{
	mltcp_release(sk);
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
/* "mltcp_cubic": CUBIC and HyStart from the core (core/mltcp_cubic.h).    */

#define GSO_MAX_SIZE		65536

/* The core's flow; mltcp_guard's high-water window is its adapter_word. */
struct mltcp_cubic_ca {
	struct mltcp_cubic_flow f;
};
_Static_assert(sizeof(struct mltcp_cubic_ca) <= ICSK_CA_PRIV_BYTES,
	       "mltcp_cubic state (core iteration + CUBIC) must fit in inet_csk_ca()");

/* mltcp_guard for CUBIC: a repaired ssthresh also redoes .ssthresh's
 * bookkeeping, which did not run either. */
static __always_inline void mltcp_cubic_guard(struct sock *sk, struct mltcp_cubic_ca *ca)
{
	if (mltcp_guard(sk, &ca->f.adapter_word, MLTCP_CUBIC_BETA))
		mltcp_bictcp_on_loss(&ca->f.bic,
				     mltcp_min_u32(tcp_sk(sk)->prior_cwnd, ca->f.adapter_word));
}

SEC("struct_ops/mltcp_cubic_init")
void BPF_PROG(mltcp_cubic_init, struct sock *sk)
{
	struct mltcp_cubic_ca *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	mltcp_cubic_flow_init(&ca->f, tp->bytes_acked, mltcp_now_us(tp), tp->snd_nxt);
	mltcp_iter_seed(&ca->f.it, &mltcp_cfg, mltcp_job_join(sk));
	mltcp_cubic_guard(sk, ca);
}

SEC("struct_ops/mltcp_cubic_cwnd_event")
void BPF_PROG(mltcp_cubic_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct mltcp_cubic_ca *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	struct mltcp_traffic job_traffic, *job = &job_traffic;

	mltcp_cubic_guard(sk, ca);
	if (ev != CA_EVENT_TX_START)
		return;
	mltcp_cubic_flow_tx_start(&ca->f, mltcp_now_us(tp));
	if (mltcp_track_tx_start(sk, &ca->f.it, &job))
		mltcp_start_window(tp, mltcp_cubic_flow_start_cwnd(&ca->f, &mltcp_cfg, tp->snd_cwnd,
								   tp->mss_cache, mltcp_min_rtt_us(tp),
								   tp->srtt_us >> 3, tp->bytes_acked,
								   tp->bytes_received, job));
}

SEC("struct_ops/mltcp_cubic_cong_avoid")
void BPF_PROG(mltcp_cubic_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct mltcp_cubic_ca *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	mltcp_cubic_guard(sk, ca);
	if (!tcp_is_cwnd_limited(sk) ||
	    mltcp_cubic_flow_hold(&ca->f, &mltcp_cfg, tp->snd_cwnd, tp->mss_cache))
		return;
	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	tcp_cong_avoid_ai(tp, mltcp_cubic_flow_ai_w(&ca->f, &mltcp_cfg, tp->snd_cwnd, acked,
						    mltcp_now_us(tp)), acked);
}

SEC("struct_ops/mltcp_cubic_recalc_ssthresh")
__u32 BPF_PROG(mltcp_cubic_recalc_ssthresh, struct sock *sk)
{
	struct mltcp_cubic_ca *ca = inet_csk_ca(sk);

	return mltcp_cubic_flow_ssthresh(&ca->f, &mltcp_cfg, tcp_sk(sk)->snd_cwnd);
}

SEC("struct_ops/mltcp_cubic_state")
void BPF_PROG(mltcp_cubic_state, struct sock *sk, __u8 new_state)
{
	struct mltcp_cubic_ca *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	if (new_state == TCP_CA_Loss)
		mltcp_bictcp_on_rto(&ca->f.bic, mltcp_now_us(tp), tp->snd_nxt);
}

/* tcp_cubic.c's hystart_ack_delay(): the TSO/GRO cushion, capped at 1 ms.
 * Kept here: it reads the socket's pacing rate, which the core does not
 * see; GSO_MAX_SIZE stands in for sk_gso_max_size, as in bpf_cubic.c. */
static __always_inline __u32 hystart_ack_delay(struct sock *sk)
{
	unsigned long rate = sk->sk_pacing_rate;

	if (!rate)
		return 0;
	return mltcp_min_u64((__u64)USEC_PER_MSEC,
			     (__u64)GSO_MAX_SIZE * 4 * USEC_PER_SEC / rate);
}

SEC("struct_ops/mltcp_cubic_acked")
void BPF_PROG(mltcp_cubic_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct mltcp_cubic_ca *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	struct mltcp_cubic_rtt_sample s = {};

	mltcp_cubic_guard(sk, ca);
	mltcp_track_ack(sk, &ca->f.it, MLTCP_VARIANT_CUBIC);

	s.rtt_us = sample->rtt_us;
	s.now_us = mltcp_now_us(tp);
	s.cwnd = tp->snd_cwnd;
	s.snd_una = tp->snd_una;
	s.snd_nxt = tp->snd_nxt;
	s.in_slow_start = tcp_in_slow_start(tp);
	s.ack_delay_us = hystart_ack_delay(sk);
	s.paced = sk->sk_pacing_status != SK_PACING_NONE;
	if (mltcp_bictcp_on_rtt(&ca->f.bic, &s))
		tp->snd_ssthresh = tp->snd_cwnd;
}

SEC("struct_ops/mltcp_cubic_undo_cwnd")
__u32 BPF_PROG(mltcp_cubic_undo_cwnd, struct sock *sk)
{
	struct mltcp_cubic_ca *ca = inet_csk_ca(sk);

	return mltcp_guard_undo(tcp_reno_undo_cwnd(sk), ca->f.adapter_word);
}

SEC("struct_ops/mltcp_cubic_release")
void BPF_PROG(mltcp_cubic_release, struct sock *sk)
{
	mltcp_release(sk);
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

/* ---------------------------------------------------------------------- */
/* `mltcpctl stats`: one struct mltcp_flow_record per MLTCP socket.         */

/* The flow's addresses, read when the stats are read rather than per ack. */
static __always_inline void mltcp_flow_key(const struct sock *sk,
					   struct mltcp_flow_key *key)
{
	const struct sock_common *c = &sk->__sk_common;

	key->netns = c->skc_net.net->ns.inum;
	key->family = c->skc_family;
	key->sport = c->skc_num;
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

/*
 * Pinned by mltcpctl load as MLTCP_PIN_STATS: each read of that file walks
 * the TCP sockets of the reader's network namespace (the kernel's "tcp"
 * iterator, as in the selftest bpf_iter_bpf_sk_storage_helpers.c) and
 * writes the record of each that has MLTCP stats.  mltcpctl reads it once
 * per namespace.  The storage map's own iterator (iter/bpf_sk_storage_map,
 * one walk for every namespace) would be simpler, but the host kernel
 * (6.18.44-fc) refuses to load any map iterator with EPERM.
 */
SEC("iter/tcp")
int mltcp_stats_iter(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	struct mltcp_flow_stats *st;
	struct mltcp_flow_record rec;
	struct tcp_sock *tp;

	if (!skc)
		return 0;
	tp = bpf_skc_to_tcp_sock(skc);
	if (!tp)
		return 0;	/* a request or time-wait socket */
	st = bpf_sk_storage_get(&mltcp_flows, tp, NULL, 0);
	if (!st)
		return 0;	/* not an MLTCP socket, or no ack yet */
	__builtin_memset(&rec, 0, sizeof(rec));
	mltcp_flow_key((const struct sock *)tp, &rec.key);
	rec.stats = *st;
	bpf_seq_write(ctx->meta->seq, &rec, sizeof(rec));
	return 0;
}
