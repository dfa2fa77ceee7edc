// SPDX-License-Identifier: GPL-2.0
/*
 * mltcp_sockops.bpf.c - per-cgroup selection of an MLTCP congestion control,
 * and the cgroup's job traffic.
 *
 * A cgroup v2 sock_ops program: for every TCP socket of a process in the
 * cgroup it sets TCP_CONGESTION to the configured variant when the socket
 * connects (before the SYN) and again when the connection is established,
 * active or passive, so the variant wins even over an application's own
 * setsockopt before connect().  Sockets outside the cgroup never reach it.
 * mltcpctl loads one instance per attached cgroup, with the variant's name
 * in .rodata, and pins its link under /sys/fs/bpf/mltcp/cgroups/.
 *
 * It also counts what the job's sockets acked and received, into the job's
 * entry in the jobs map (core/mltcp_job.h, "The job's traffic"; mltcpctl
 * makes this object reuse the pinned map), for the start drain's two-way
 * test in mltcp.bpf.c.  No congestion-control hook sees a socket that only
 * receives (a ring all-reduce's receiving connection), but every socket
 * sends: data, or acks.  So the count is taken where the kernel asks for
 * header options on each outgoing packet (BPF_SOCK_OPS_HDR_OPT_LEN_CB),
 * which reserves no option space and writes none: the callback is used
 * only for when it runs.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "mltcp_bpf_shared.h"

char _license[] SEC("license") = "GPL";

#define SOL_TCP		6
#define TCP_CONGESTION	13

/* Set by mltcpctl before load: "mltcp" or "mltcp_cubic". */
const volatile char mltcp_cc_name[MLTCP_CC_NAME_MAX] = MLTCP_CC_RENO;

#include "mltcp_job_map.bpf.h"

/* Per socket: its counters as last added to its job's traffic. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct mltcp_traffic);
} mltcp_traffic_socks SEC(".maps");

static __always_inline void mltcp_select(struct bpf_sock_ops *skops)
{
	char name[MLTCP_CC_NAME_MAX];

	/* The helper wants writable memory; .rodata is read-only.  Copy byte
	 * by byte: memcpy would drop volatile and fold in the default name. */
	for (int i = 0; i < MLTCP_CC_NAME_MAX - 1; i++)
		name[i] = mltcp_cc_name[i];
	name[MLTCP_CC_NAME_MAX - 1] = '\0';
	bpf_setsockopt(skops, SOL_TCP, TCP_CONGESTION, name, sizeof(name));
}

/* The socket's growth in acked and received bytes into its job's traffic,
 * in steps (mltcp_job_traffic_report).  The job is the socket's cgroup, as
 * in mltcp.bpf.c: a socket of a sub-cgroup that is no job adds nothing. */
static __always_inline void mltcp_count_traffic(struct bpf_sock_ops *skops)
{
	struct mltcp_traffic *reported, d;
	struct bpf_sock *sk = skops->sk;
	struct tcp_sock *tp;
	struct mltcp_job *j;
	__u64 cgid;

	if (!sk)
		return;
	reported = bpf_sk_storage_get(&mltcp_traffic_socks, sk, NULL,
				      BPF_SK_STORAGE_GET_F_CREATE);
	if (!reported ||
	    !mltcp_job_traffic_report(reported, skops->bytes_acked, skops->bytes_received, &d))
		return;
	tp = bpf_skc_to_tcp_sock(sk);
	if (!tp)
		return;
	cgid = tp->inet_conn.icsk_inet.sk.sk_cgrp_data.cgroup->kn->id;
	j = bpf_map_lookup_elem(&mltcp_jobs, &cgid);
	if (!j)
		return;
	if (d.acked)
		__sync_fetch_and_add(&j->traffic.acked, d.acked);
	if (d.received)
		__sync_fetch_and_add(&j->traffic.received, d.received);
}

SEC("sockops")
int mltcp_select_cc(struct bpf_sock_ops *skops)
{
	switch (skops->op) {
	case BPF_SOCK_OPS_TCP_CONNECT_CB:
		mltcp_select(skops);
		break;
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		mltcp_select(skops);
		bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
					  BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		mltcp_count_traffic(skops);
		break;
	}
	return 1;
}
