// SPDX-License-Identifier: GPL-2.0
/*
 * mltcp_sockops.bpf.c - per-cgroup selection of an MLTCP congestion control.
 *
 * A cgroup v2 sock_ops program: for every TCP socket of a process in the
 * cgroup it sets TCP_CONGESTION to the configured variant when the socket
 * connects (before the SYN) and again when the connection is established,
 * active or passive, so the variant wins even over an application's own
 * setsockopt before connect().  Sockets outside the cgroup never reach it.
 * mltcpctl loads one instance per attached cgroup, with the variant's name
 * in .rodata, and pins its link under /sys/fs/bpf/mltcp/cgroups/.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "mltcp_bpf_shared.h"

char _license[] SEC("license") = "GPL";

#define SOL_TCP		6
#define TCP_CONGESTION	13

/* Set by mltcpctl before load: "mltcp" or "mltcp_cubic". */
const volatile char mltcp_cc_name[MLTCP_CC_NAME_MAX] = MLTCP_CC_RENO;

SEC("sockops")
int mltcp_select_cc(struct bpf_sock_ops *skops)
{
	char name[MLTCP_CC_NAME_MAX];

	switch (skops->op) {
	case BPF_SOCK_OPS_TCP_CONNECT_CB:
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		break;
	default:
		return 1;
	}
	/* The helper wants writable memory; .rodata is read-only.  Copy byte
	 * by byte: memcpy would drop volatile and fold in the default name. */
	for (int i = 0; i < MLTCP_CC_NAME_MAX - 1; i++)
		name[i] = mltcp_cc_name[i];
	name[MLTCP_CC_NAME_MAX - 1] = '\0';
	bpf_setsockopt(skops, SOL_TCP, TCP_CONGESTION, name, sizeof(name));
	return 1;
}
