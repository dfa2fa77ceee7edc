/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * mltcp_job.h - one bytes ratio for all the connections of a job.
 *
 * A job that stripes each iteration over several connections (NCCL's
 * socket transport, Gloo's pairs) is one job to the network, but each flow
 * tracks its own iteration (mltcp_iter.h).  With a ratio per flow, the
 * connections of one job compete with each other as two jobs would: the one
 * ahead grows faster, finishes first, and the job waits for the one behind,
 * which ran at the lowest F (docs/evaluation.md, "Striped jobs").  So the
 * flows of a job share one ratio: the bytes acked on all of them in the
 * current iteration over the job's iteration size.
 *
 * The job's progress is two sums that every member adds to: the bytes it
 * acked in its current iteration (capped at its iteration size, so a member
 * that finished counts as done until its next iteration starts) and its
 * iteration size.  A member keeps what it has added and hands the datapath
 * the difference to add (mod 2^64, so a decrease is a wrapping add; atomic
 * adds in the datapath, no lock).  A member adds nothing while it has no
 * iteration structure, or has acked nothing of its current iteration: a
 * connection of the job that carries no part of this iteration (PyTorch's
 * store connection, which a job hint also reaches) does not hold the ratio
 * down.  Sizes are per connection, as a job hint's are, so the job's size
 * is the sum of its active members' sizes.  The datapath decides what a job is (BPF: the cgroup that
 * `mltcpctl attach` selected, or that sends job hints) and where the sums
 * live; the paper has no jobs of several flows.
 */
#ifndef MLTCP_JOB_H
#define MLTCP_JOB_H

#include "mltcp_iter.h"
#include "mltcp_window.h"	/* struct mltcp_traffic */

/* Sums beyond this are no job's (2^62 bytes in flight in one iteration):
 * a member's subtraction reached an entry it never added to.  The datapath
 * guards against that with an epoch; this is the last line. */
#define MLTCP_JOB_SUM_MAX	(1ULL << 62)

/* What one member has added to its job's sums. */
struct mltcp_job_member {
	__u64 iter_bytes;
	__u64 bytes_per_iter;
};

/* Amounts to add to the job's sums, mod 2^64. */
struct mltcp_job_delta {
	__u64 iter_bytes;
	__u64 bytes_per_iter;
};

MLTCP_INLINE void mltcp_job_member_init(struct mltcp_job_member *m)
{
	m->iter_bytes = 0;
	m->bytes_per_iter = 0;
}

/* Bring the member's share up to date with its flow; returns 1 when the
 * sums must change by *d. */
MLTCP_INLINE int mltcp_job_member_update(struct mltcp_job_member *m,
					 const struct mltcp_iter *it,
					 struct mltcp_job_delta *d)
{
	__u64 b = 0, e = 0;

	if (it->iter_bytes && mltcp_iter_structured(it)) {
		e = it->bytes_per_iter;
		b = mltcp_min_u64(it->iter_bytes, e);
	}
	d->iter_bytes = b - m->iter_bytes;
	d->bytes_per_iter = e - m->bytes_per_iter;
	m->iter_bytes = b;
	m->bytes_per_iter = e;
	return d->iter_bytes != 0 || d->bytes_per_iter != 0;
}

/* The member leaves (socket closed): the amounts that take its share out. */
MLTCP_INLINE void mltcp_job_member_leave(struct mltcp_job_member *m,
					 struct mltcp_job_delta *d)
{
	d->iter_bytes = 0 - m->iter_bytes;
	d->bytes_per_iter = 0 - m->bytes_per_iter;
	mltcp_job_member_init(m);
}

/* The job's ratio from its sums; MLTCP_RATIO_NONE when no member is active
 * with structure. */
MLTCP_INLINE __u32 mltcp_job_ratio(__u64 iter_bytes_sum, __u64 bytes_per_iter_sum)
{
	if (bytes_per_iter_sum == 0 || bytes_per_iter_sum > MLTCP_JOB_SUM_MAX ||
	    iter_bytes_sum > MLTCP_JOB_SUM_MAX)
		return MLTCP_RATIO_NONE;
	return mltcp_ratio_of(iter_bytes_sum, bytes_per_iter_sum);
}

/*
 * The job's traffic (the start drain's two-way test, mltcp_start_cwnd):
 * the bytes its connections had acked and received, summed by the datapath
 * from each member's lifetime counters (BPF: tcp_sock's bytes_acked and
 * bytes_received, reported as the socket sends, which a connection that
 * only receives does too, with its acks).  A member reports its growth
 * once it reaches MLTCP_JOB_TRAFFIC_STEP, so that a busy connection moves
 * the shared entry once per 64 KiB, not once per packet.  Traffic stays in
 * the sums when a member leaves: they are the job's history, and a member
 * reads only their growth since its own previous transmit start.
 */
#define MLTCP_JOB_TRAFFIC_STEP	(64ULL << 10)

/* Bring what a member has reported up to date with its counters; 1 when
 * the job's sums must grow by *d (mod 2^64). */
MLTCP_INLINE int mltcp_job_traffic_report(struct mltcp_traffic *reported,
					  __u64 acked_total, __u64 received_total,
					  struct mltcp_traffic *d)
{
	d->acked = acked_total - reported->acked;
	d->received = received_total - reported->received;
	if (d->acked < MLTCP_JOB_TRAFFIC_STEP && d->received < MLTCP_JOB_TRAFFIC_STEP)
		return 0;
	reported->acked = acked_total;
	reported->received = received_total;
	return 1;
}

/* At a member's transmit start: the job's traffic since its previous one
 * (*seen), for mltcp_start_cwnd, and the sums seen now. */
MLTCP_INLINE void mltcp_job_traffic_since(struct mltcp_traffic *seen,
					  __u64 acked_sum, __u64 received_sum,
					  struct mltcp_traffic *since)
{
	since->acked = acked_sum - seen->acked;
	since->received = received_sum - seen->received;
	seen->acked = acked_sum;
	seen->received = received_sum;
}

/*
 * The job's idle gap.  A member's own silence is not its job's: where the
 * connections of a job take turns (the Dorylus job: four connections, no
 * pause between phases), one can be silent for longer than the idle
 * threshold while its job never paused, and each such silence ends an
 * "iteration" that was a piece of one.  The flow's F then swings over the
 * real iteration and its timeouts double (docs/evaluation.md, "The Dorylus
 * job alone").  So with job_gap a member counts an idle gap only as far as
 * its job was idle too.
 *
 * The job's last pause is recorded when an application start (sending
 * resumes with nothing in flight, not after a timeout) ends at least
 * idle_min_us of silence on all members; an ack never ends one.  A member
 * silent since before that start (the siblings of the connection that
 * began the phase, which start a moment later, with the job busy) counts
 * the recorded pause.  A member that ran MLTCP_SEED_BYTES_MAX without a
 * boundary and has no size does not make the job busy: a bulk flow in the
 * job's cgroup (a checkpoint upload) must not hide the training
 * connections' pauses.
 *
 * The fields are written without a lock from any CPU; a torn pair (a pause
 * with another's end) costs one boundary, as any mistaken gap does.
 */
struct mltcp_job_activity {
	__u32 last_active_us;	/* a member's last ack or transmit start */
	__u32 pause_us;		/* the job's last pause an application start ended */
	__u32 pause_end_us;	/*   and when it ended */
	__u32 known;		/* 1 once last_active_us was set */
};

/* A member acked data or started sending (app_start: the application
 * resumed, mltcp's tx-start rule), after its own tracking.  Nothing to keep
 * without job_gap: the entry is shared by the job's sockets on every CPU,
 * and each store moves its cache line. */
MLTCP_INLINE void mltcp_job_activity_touch(struct mltcp_job_activity *a,
					   const struct mltcp_params *p,
					   const struct mltcp_iter *it,
					   __u32 now_us, int app_start)
{
	__u32 silence;

	if (!p->job_gap)
		return;
	if (it->bytes_per_iter == 0 && it->iter_bytes > MLTCP_SEED_BYTES_MAX)
		return;	/* no boundary in 4 MiB: a bulk flow */
	silence = mltcp_elapsed_us(a->last_active_us, now_us);
	if (a->known && app_start && silence >= p->idle_min_us) {
		a->pause_us = silence;
		a->pause_end_us = now_us;
	}
	a->last_active_us = now_us;
	if (!a->known)
		a->known = 1;
}

/* The idle gap a member resuming now counts: its own, at most as long as
 * the job's (the silence now, or the pause that ended while the member was
 * quiet).  a is NULL for a flow without a job: its own gap. */
MLTCP_INLINE __u32 mltcp_job_member_gap_us(const struct mltcp_job_activity *a,
					   const struct mltcp_params *p,
					   const struct mltcp_iter *it,
					   __u32 now_us)
{
	__u32 own = mltcp_elapsed_us(it->last_active_us, now_us);
	__u32 job;

	if (!a || !p->job_gap || !a->known)
		return own;
	job = mltcp_elapsed_us(a->last_active_us, now_us);
	if (mltcp_elapsed_us(it->last_active_us, a->pause_end_us) > 0 && a->pause_us > job)
		job = a->pause_us;
	return mltcp_min_u32(own, job);
}

/* mltcp_iter_on_tx_start for a member of a job (a: its activity), or for a
 * flow without one (a NULL). */
MLTCP_INLINE int mltcp_job_member_on_tx_start(struct mltcp_iter *it,
					      const struct mltcp_job_activity *a,
					      const struct mltcp_params *p,
					      __u64 acked_total, __u32 now_us,
					      __u32 srtt_us)
{
	return mltcp_iter_on_tx_start_gap(it, p, acked_total, now_us, srtt_us,
					  mltcp_job_member_gap_us(a, p, it, now_us));
}

#endif /* MLTCP_JOB_H */
