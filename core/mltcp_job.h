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

#endif /* MLTCP_JOB_H */
