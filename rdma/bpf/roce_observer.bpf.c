// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * roce_observer.bpf.c - tc ingress observer of RoCEv2 packets (UDP 4791)
 * for soft-RoCE, where CE marks and CNPs are invisible through verbs.
 *
 * Per destination QP it counts CE-marked packets (the DCQCN notification
 * point's input, read by the receiver) and CNPs, BTH opcode 0x81 (the
 * reaction point's input, read by the sender).  Packets are never changed
 * or dropped.  Only stable uapi (__sk_buff, packet headers) is used, so the
 * object loads unchanged on the guest's 6.1 kernel and on newer ones.
 * IPv4 without IP options only (what rxe sends); anything else is ignored.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define ROCE_V2_UDP_PORT	4791
#define BTH_OPCODE_CNP		0x81
#define IP_ECN_MASK		0x03
#define IP_ECN_CE		0x03
#define BTH_LEN			12
#define MAX_QPS			4096

struct bth {
	__u8 opcode;
	__u8 flags;
	__be16 pkey;
	__be32 dqpn;	/* 8 reserved bits, then the 24-bit destination QP */
	__be32 psn;
};

/* Destination QP number -> count. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_QPS);
	__type(key, __u32);
	__type(value, __u64);
} ce_count SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_QPS);
	__type(key, __u32);
	__type(value, __u64);
} cnp_count SEC(".maps");

enum { STAT_ROCE, STAT_CE, STAT_CNP, STAT_MAX };

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void count(void *map, __u32 key)
{
	__u64 one = 1, *v = bpf_map_lookup_elem(map, &key);

	if (v) {
		__sync_fetch_and_add(v, 1);
		return;
	}
	/* First packet of this QP; if another CPU inserted it first, add. */
	if (bpf_map_update_elem(map, &key, &one, BPF_NOEXIST) == 0)
		return;
	v = bpf_map_lookup_elem(map, &key);
	if (v)
		__sync_fetch_and_add(v, 1);
}

SEC("tc")
int roce_ingress(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	struct bth *bth = (void *)(udp + 1);
	__u32 qpn;

	if ((void *)(bth + 1) > end)
		return TC_ACT_OK;
	if (eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5 ||
	    ip->protocol != IPPROTO_UDP || udp->dest != bpf_htons(ROCE_V2_UDP_PORT))
		return TC_ACT_OK;
	count(&stats, STAT_ROCE);
	qpn = bpf_ntohl(bth->dqpn) & 0xffffff;
	if (bth->opcode == BTH_OPCODE_CNP) {
		count(&cnp_count, qpn);
		count(&stats, STAT_CNP);
	} else if ((ip->tos & IP_ECN_MASK) == IP_ECN_CE) {
		count(&ce_count, qpn);
		count(&stats, STAT_CE);
	}
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
