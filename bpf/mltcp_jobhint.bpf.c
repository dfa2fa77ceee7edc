// SPDX-License-Identifier: GPL-2.0
/*
 * mltcp_jobhint.bpf.c - job-level iteration hints through setsockopt().
 *
 * A cgroup/setsockopt program that `mltcpctl attach` puts on the same
 * cgroup as the congestion-control selector (mltcp_sockops.bpf.c).  A
 * process in that cgroup (or below it) announces "an iteration of N bytes
 * starts now" for all of its cgroup's MLTCP sockets with
 *
 *   setsockopt(fd, MLTCP_SOL_JOB, MLTCP_JOB_HINT, &n, sizeof(__u64))
 *
 * on any socket it created (libmltcp uses a throwaway UDP socket).  The
 * program stores the hint in the shared jobs map under the caller's own
 * cgroup v2 id, so a process can only ever write the entry of the cgroup it
 * runs in: permission is cgroup membership, which the operator controls.
 * Processes outside attached cgroups never reach this program and get the
 * protocol's ENOPROTOOPT.  MLTCP_JOB_SEED (mltcp_bpf_shared.h) sets the
 * same entry's seed.  Every other option passes through untouched.
 * mltcp.bpf.c applies the entry to the sockets created in that cgroup.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "mltcp_iter.h"
#include "mltcp_bpf_shared.h"

char _license[] SEC("license") = "GPL";

#define EINVAL		22
#define ENOSPC		28
#define ENOPROTOOPT	92

/* The same map as mltcp.bpf.c's; mltcpctl reuses the pinned one. */
#include "mltcp_job_map.bpf.h"

static __always_inline void mltcp_count(int refused)
{
	__u32 zero = 0;
	struct mltcp_job_counters *c = bpf_map_lookup_elem(&mltcp_job_counters, &zero);

	if (c)
		__sync_fetch_and_add(refused ? &c->refused : &c->accepted, 1);
}

static __always_inline int mltcp_refuse(int err)
{
	mltcp_count(1);
	bpf_set_retval(-err);
	return 0;
}

/* The caller's own cgroup's entry, created if it has none yet. */
static __always_inline struct mltcp_job *mltcp_own_job(void)
{
	struct mltcp_job fresh = {}, *j;
	__u64 cgid = bpf_get_current_cgroup_id();

	j = bpf_map_lookup_elem(&mltcp_jobs, &cgid);
	if (j)
		return j;
	/* A cgroup below the attached one: its own job from now on. */
	fresh.epoch = bpf_ktime_get_ns() | 1;
	bpf_map_update_elem(&mltcp_jobs, &cgid, &fresh, BPF_NOEXIST);
	return bpf_map_lookup_elem(&mltcp_jobs, &cgid);
}

SEC("cgroup/setsockopt")
int mltcp_job_hint_set(struct bpf_sockopt *ctx)
{
	__u64 *val = ctx->optval;
	struct mltcp_job *j;
	__u64 v;

	if (ctx->level != MLTCP_SOL_JOB) {
		ctx->optlen = 0;	/* the kernel uses the caller's buffer as is */
		return 1;
	}
	if (ctx->optname != MLTCP_JOB_HINT && ctx->optname != MLTCP_JOB_SEED)
		return mltcp_refuse(ENOPROTOOPT);
	if (ctx->optlen != sizeof(__u64) || (void *)(val + 1) > ctx->optval_end)
		return mltcp_refuse(EINVAL);
	v = *val;
	if (ctx->optname == MLTCP_JOB_HINT && (v == 0 || v > MLTCP_HINT_BYTES_MAX))
		return mltcp_refuse(EINVAL);
	j = mltcp_own_job();
	if (!j)
		return mltcp_refuse(ENOSPC);
	if (ctx->optname == MLTCP_JOB_SEED) {
		j->seed = v;	/* any value: it is hashed where it is used */
		j->has_seed = 1;
	} else {
		j->bytes = v;
		__sync_fetch_and_add(&j->seq, 1);
	}
	mltcp_count(0);
	ctx->optlen = -1;	/* handled: the kernel returns 0 */
	return 1;
}
