/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * mltcp_bpf_shared.h - the layout shared by the MLTCP BPF programs
 * (mltcp.bpf.c, mltcp_sockops.bpf.c) and userspace (mltcpctl, libmltcp):
 * map values, the stats records, variant names and the bpffs pin layout.
 *
 * Included from BPF (after vmlinux.h) and from userspace C/C++ (after
 * <linux/types.h>); only __u* types are used.
 */
#ifndef MLTCP_BPF_SHARED_H
#define MLTCP_BPF_SHARED_H

#include "mltcp_job.h"	/* struct mltcp_job_activity */

/* Congestion control names registered by the struct_ops maps. */
#define MLTCP_CC_RENO		"mltcp"
#define MLTCP_CC_CUBIC		"mltcp_cubic"
#define MLTCP_CC_NAME_MAX	16	/* TCP_CA_NAME_MAX */

/* Everything MLTCP pins lives below this bpffs directory. */
#define MLTCP_PIN_DIR		"/sys/fs/bpf/mltcp"
/* The program's .data map: its global struct mltcp_params mltcp_cfg. */
#define MLTCP_PIN_CONFIG	MLTCP_PIN_DIR "/config"
#define MLTCP_PIN_HINTS		MLTCP_PIN_DIR "/hints"
#define MLTCP_PIN_JOBS		MLTCP_PIN_DIR "/jobs"
#define MLTCP_PIN_JOB_COUNTERS	MLTCP_PIN_DIR "/job_counters"	/* struct mltcp_job_counters */
/* A bpf_iter link over the TCP sockets: each read() of this file gives one
 * struct mltcp_flow_record per MLTCP socket of the reader's namespace. */
#define MLTCP_PIN_STATS		MLTCP_PIN_DIR "/stats"
#define MLTCP_PIN_STATE		MLTCP_PIN_DIR "/state"
#define MLTCP_PIN_COUNTERS	MLTCP_PIN_DIR "/counters"	/* mltcp.bpf.c .bss */
/* The per-socket stats (SK_STORAGE, struct mltcp_flow_stats), keyed by the
 * socket's fd from userspace: a process reads its own sockets' entries
 * (libmltcp's mltcp_socket_window_repairs). */
#define MLTCP_PIN_FLOWS		MLTCP_PIN_DIR "/flows"
/* struct_ops registration: "<dir>/link_<cc>" (link) or "<dir>/ops_<cc>" (map) */
#define MLTCP_PIN_CGROUP_DIR	MLTCP_PIN_DIR "/cgroups"
/* one cgroup/setsockopt link per attachment: "<dir>/<cgroup id>" */
#define MLTCP_PIN_JOBHINT_DIR	MLTCP_PIN_DIR "/jobhint"

/* Hint map value (BPF_MAP_TYPE_SK_STORAGE, keyed by socket fd from
 * userspace).  The application bumps seq; the congestion control applies
 * the hint once per new seq and records it in applied_seq. */
struct mltcp_hint {
	__u64 seq;		/* bumped by each hint */
	__u64 bytes;		/* bytes of the iteration that starts now */
	__u64 applied_seq;	/* last seq the datapath applied */
};

/*
 * Jobs: the MLTCP sockets of one cgroup, the one `mltcpctl attach` selected
 * or one whose processes send job hints, keyed by cgroup v2 id.
 *
 * Job-level hints: "an iteration of N bytes starts now" for every MLTCP
 * socket of a cgroup.  A process announces it with
 * setsockopt(any socket it creates, MLTCP_SOL_JOB, MLTCP_JOB_HINT, &bytes,
 * sizeof(__u64)); the cgroup/setsockopt program that `mltcpctl attach`
 * puts on the cgroup (mltcp_jobhint.bpf.c) stores it in the jobs map under
 * the caller's cgroup v2 id, and the congestion control applies it to the
 * sockets created in that cgroup.  Outside an attached cgroup the option
 * does not exist (ENOPROTOOPT).  The level is no protocol's SOL_* number.
 *
 * Job progress: the sockets created in a job's cgroup share one bytes ratio
 * (core/mltcp_job.h), from the sums below, to which each socket adds its
 * own progress.  An entry's epoch tells a socket that the entry it added to
 * was removed (detach) and created anew: it then starts over rather than
 * subtract from sums it never added to.
 *
 * Job seed: setsockopt(..., MLTCP_SOL_JOB, MLTCP_JOB_SEED, &seed,
 * sizeof(__u64)) gives the cgroup's job the value its sockets' first-
 * iteration seed (core/mltcp_iter.h, mltcp_iter_seed) is hashed from, in
 * place of the entry's epoch.  A job that spans hosts (a cgroup on each)
 * passes the same value on all of them, so that its connections agree on
 * one draw everywhere, as they do on one host.
 */
#define MLTCP_SOL_JOB		0x4d4c	/* "ML" */
#define MLTCP_JOB_HINT		1
#define MLTCP_JOB_SEED		2
#define MLTCP_MAX_JOBS		16384	/* LRU: cgroup ids are never reused */

struct mltcp_job {
	__u64 seq;		/* bumped by each hint */
	__u64 bytes;		/* bytes of the iteration that starts now */
	__u64 epoch;		/* set when the entry is created, never 0 */
	__u64 iter_bytes_sum;	/* core/mltcp_job.h: the members' progress */
	__u64 bytes_per_iter_sum; /*   and their iteration sizes */
	__u64 seed;		/* MLTCP_JOB_SEED's value, if has_seed */
	__u64 has_seed;		/* 1 once MLTCP_JOB_SEED was set */
	struct mltcp_job_activity activity; /* core/mltcp_job.h: its pauses */
	struct mltcp_traffic traffic;	/* core/mltcp_job.h: what its sockets
					 * acked and received (mltcp_sockops.bpf.c) */
};

/* Job-hint writes since load, over all attached cgroups (one-entry array,
 * shared by every job-hint program; the exporter serves it). */
struct mltcp_job_counters {
	__u64 accepted;		/* hints stored */
	__u64 refused;		/* bad size, unknown option, no room */
};

/* The addresses of one live TCP connection (in a stats record). */
struct mltcp_flow_key {
	__u32 netns;		/* network namespace inode number */
	__u16 family;		/* AF_INET or AF_INET6 */
	__u16 sport;		/* host order */
	__u16 dport;		/* host order */
	__u16 pad;
	__u32 saddr[4];		/* IPv4 in saddr[0], network order */
	__u32 daddr[4];
};

enum mltcp_variant {
	MLTCP_VARIANT_RENO = 1,
	MLTCP_VARIANT_CUBIC = 2,
};

/* Per-socket stats (socket-local storage), refreshed on every ack; removed
 * when the socket releases its congestion control (close, or a switch to
 * another one). */
struct mltcp_flow_stats {
	__u64 iter_bytes;	/* bytes acked in the current iteration */
	__u64 bytes_per_iter;	/* learned or hinted bytes per iteration */
	__u64 bytes_acked;	/* tcp_sock->bytes_acked */
	__u32 iterations;	/* completed iterations (detected + hinted) */
	__u32 hinted;		/* of which started by a hint */
	__u32 ratio;		/* bytes_ratio, 1/1024 units, U32_MAX = none */
	__u32 gain;		/* F, 1/1024 units */
	__u32 cwnd;		/* segments */
	__u32 ssthresh;		/* segments */
	__u32 srtt_us;
	__u32 variant;		/* enum mltcp_variant */
	__u32 hint_seq;		/* last hint seq applied (low 32 bits) */
	__u32 window_repairs;	/* corrupted windows the guard repaired */
};

/* What the stats iterator writes per socket. */
struct mltcp_flow_record {
	struct mltcp_flow_key key;
	struct mltcp_flow_stats stats;
};

/* Host state remembered across mltcpctl runs (array map, 1 entry). */
struct mltcp_state {
	char prev_default_cc[MLTCP_CC_NAME_MAX];	/* before load --default */
	__u32 default_changed;				/* load --default set it */
	__u32 variants;					/* bit per enum mltcp_variant */
	__u32 link_mode;				/* 1: struct_ops links */
	__u32 pad;
};

#endif /* MLTCP_BPF_SHARED_H */
