/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mltcp_job_map.bpf.h - the job-level hint map, defined identically in both
 * BPF objects that use it: mltcp.bpf.c reads it, mltcp_jobhint.bpf.c writes
 * it; mltcpctl makes the second reuse the first's pinned map (jobs).
 * Keyed by cgroup v2 id; LRU, since cgroup ids are never reused.
 */
#ifndef MLTCP_JOB_MAP_BPF_H
#define MLTCP_JOB_MAP_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MLTCP_MAX_JOBS);
	__type(key, __u64);
	__type(value, struct mltcp_job_hint);
} mltcp_job_hints SEC(".maps");

#endif /* MLTCP_JOB_MAP_BPF_H */
