// SPDX-License-Identifier: GPL-2.0
/*
 * core_world.bpf.c - proves the policy core compiles unchanged as BPF: one
 * program exercising every core entry point, built by `make check` with
 * clang -target bpf -Werror.  It is compiled, not loaded (loading real
 * congestion controls is the BPF datapath's test).
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "mltcp.h"

struct core_world_state {
	struct mltcp_params params;
	struct mltcp_iter iter;
	struct mltcp_dcqcn_params dcqcn_params;
	struct mltcp_dcqcn_rp rp;
	struct mltcp_dcqcn_np np;
	struct mltcp_reno_flow reno;
	struct mltcp_cubic_flow cubic;
	struct mltcp_dcqcn_flow dcqcn;
	struct mltcp_window win;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct core_world_state);
} core_world_map SEC(".maps");

SEC("tc")
int core_world(struct __sk_buff *skb)
{
	__u32 key = 0, gain, w, cnt;
	__u64 now = bpf_ktime_get_ns() / 1000;
	struct core_world_state *s = bpf_map_lookup_elem(&core_world_map, &key);

	if (!s)
		return 0;
	if (mltcp_params_validate(&s->params) != MLTCP_PARAM_OK)
		mltcp_params_default(&s->params);
	mltcp_iter_on_ack(&s->iter, skb->len, (__u32)now);
	mltcp_iter_on_tx_start(&s->iter, &s->params, skb->len, (__u32)now, 100);
	if (skb->mark)
		mltcp_iter_hint(&s->iter, skb->len, skb->mark, (__u32)now);
	gain = mltcp_gain(&s->iter, &s->params);
	w = mltcp_reno_ai_w(skb->len, gain);
	cnt = mltcp_cubic_cnt(skb->len, gain);

	if (mltcp_dcqcn_params_validate(&s->dcqcn_params) != MLTCP_DCQCN_PARAM_OK)
		mltcp_dcqcn_params_default(&s->dcqcn_params);
	mltcp_dcqcn_advance(&s->rp, &s->dcqcn_params, now, gain);
	mltcp_dcqcn_on_sent(&s->rp, &s->dcqcn_params, skb->len, gain);
	if (mltcp_dcqcn_np_on_ce(&s->np, &s->dcqcn_params, now))
		mltcp_dcqcn_on_cnp(&s->rp, &s->dcqcn_params, now);

	/* The per-base flows and the window arithmetic. */
	mltcp_reno_flow_cong_avoid(&s->reno, &s->params, &s->win, skb->len & 63, skb->len);
	w += mltcp_reno_flow_ssthresh(&s->reno, &s->params, s->win.cwnd);
	mltcp_cubic_flow_tx_start(&s->cubic, (__u32)now);
	mltcp_cubic_flow_cong_avoid(&s->cubic, &s->params, &s->win, skb->len & 63, (__u32)now,
				    skb->len);
	w += mltcp_cubic_flow_ssthresh(&s->cubic, &s->params, s->win.cwnd);
	{
		struct mltcp_cubic_rtt_sample rs = {
			.rtt_us = (__s32)(skb->len & 0xffff), .now_us = (__u32)now,
			.cwnd = s->win.cwnd, .snd_una = skb->len, .snd_nxt = skb->len + 10,
			.in_slow_start = 1,
		};
		w += mltcp_bictcp_on_rtt(&s->cubic.bic, &rs);
	}
	if (skb->priority)
		mltcp_bictcp_on_rto(&s->cubic.bic, (__u32)now, skb->len);
	mltcp_dcqcn_flow_on_ack(&s->dcqcn, skb->len, now);
	mltcp_dcqcn_flow_on_tx_start(&s->dcqcn, &s->params, &s->dcqcn_params, skb->len, now, 100);
	mltcp_dcqcn_flow_hint(&s->dcqcn, &s->params, &s->dcqcn_params, skb->len, skb->mark, now);
	mltcp_dcqcn_flow_on_sent(&s->dcqcn, &s->params, &s->dcqcn_params, skb->len, now);
	mltcp_dcqcn_flow_on_cnps(&s->dcqcn, &s->dcqcn_params, skb->mark & 3, now);
	return (w + cnt + (__u32)mltcp_dcqcn_flow_rate_bps(&s->dcqcn)) & 1;
}

char LICENSE[] SEC("license") = "GPL";
