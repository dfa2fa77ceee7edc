/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mltcp_job_map.bpf.h - the jobs map (hints, progress and traffic) and the
 * hint write counters, defined identically in the BPF objects that use
 * them: mltcp.bpf.c reads the hints and traffic and keeps the progress,
 * mltcp_jobhint.bpf.c writes hints and counters, mltcp_sockops.bpf.c adds
 * the traffic; mltcpctl makes the last two reuse the first's pinned maps
 * (jobs, job_counters) and creates a job's entry at attach.
 * Keyed by cgroup v2 id; LRU, since cgroup ids are never reused.
 */
#ifndef MLTCP_JOB_MAP_BPF_H
#define MLTCP_JOB_MAP_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MLTCP_MAX_JOBS);
	__type(key, __u64);
	__type(value, struct mltcp_job);
} mltcp_jobs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mltcp_job_counters);
} mltcp_job_counters SEC(".maps");

#endif /* MLTCP_JOB_MAP_BPF_H */
