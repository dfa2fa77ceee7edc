/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * mltcp_dp_replay.h - record formats of the datapath agreement test: an
 * event sequence as a transport sees it (acks with RTT samples, losses,
 * timeouts, transmit starts, hints; for DCQCN sends, CNPs and time) and the
 * decisions a congestion control makes after each event (window, ssthresh,
 * rate, gain).  The same sequence goes through the core driven directly
 * (the reference, tests/vm/replay/mltcp_replay.cpp) and through each
 * datapath's own adapter: tcp_mltcp.ko's tcp_congestion_ops on a real
 * socket in the guest (mltcp_replay_kmod.c), the DPDK transport's
 * CongestionControl, the ns-3 models, the RDMA QP control.  Every decision
 * file must equal the reference byte for byte.  Fixed-size little-endian
 * records (all sides x86_64).
 *
 * What the harnesses play, the TCP stack's part, the same everywhere:
 *   INIT      a new flow (cwnd 10, ssthresh infinite), the algorithm in
 *             `bytes` (enum mltcp_dp_algo); for DCQCN `acked_pkts` = 1
 *             turns MLTCP on; `seed` replaces the random value the
 *             datapath would seed the flow's first iteration with
 *   ACK       bytes_acked = acked_total, snd_una = (u32)acked_total,
 *             snd_nxt = snd_una + inflight_bytes; the tracker sees the ack,
 *             CUBIC the RTT sample, then congestion avoidance runs for
 *             acked_pkts segments if cwnd_limited
 *   TX_START  sending resumes with nothing in flight (the application
 *             resumed: the start drain may act, with min_rtt_us, srtt_us,
 *             acked_total and received_total)
 *   HINT      "an iteration of `bytes` starts now" (not on the kernel
 *             module, which has no hint interface)
 *   LOSS      fast retransmit: ssthresh from the congestion control, then
 *             cwnd = ssthresh and the ack counter cleared (as at the end
 *             of the reduction)
 *   RTO       ssthresh from the congestion control, cwnd = 1, CA_Loss
 *   SENT      DCQCN: `bytes` left; cwnd_limited = 1: the queue was empty
 *             (the transmit start comes first)
 *   CNP       DCQCN: one CNP
 *   ADVANCE   DCQCN: time passes
 */
#ifndef MLTCP_DP_REPLAY_H
#define MLTCP_DP_REPLAY_H

#include <linux/types.h>

enum mltcp_dp_kind {
	MLTCP_DP_INIT		= 0,
	MLTCP_DP_ACK		= 1,
	MLTCP_DP_TX_START	= 2,
	MLTCP_DP_HINT		= 3,
	MLTCP_DP_LOSS		= 4,
	MLTCP_DP_RTO		= 5,
	MLTCP_DP_SENT		= 6,
	MLTCP_DP_CNP		= 7,
	MLTCP_DP_ADVANCE	= 8,
};

enum mltcp_dp_algo {
	MLTCP_DP_RENO	= 0,
	MLTCP_DP_CUBIC	= 1,
	MLTCP_DP_DCQCN	= 2,
};

struct mltcp_dp_event {
	__u32 kind;		/* enum mltcp_dp_kind */
	__u32 now_us;
	__u64 acked_total;	/* cumulative bytes acknowledged */
	__u64 bytes;		/* INIT: algorithm; HINT: size; SENT: bytes */
	__u32 acked_pkts;	/* ACK: segments newly acked; INIT (DCQCN): MLTCP on */
	__s32 rtt_us;		/* ACK: RTT sample, < 0 none */
	__u32 srtt_us;		/* smoothed RTT the transport has now */
	__u32 inflight_bytes;	/* snd_nxt - snd_una */
	__u32 cwnd_limited;	/* ACK: growth allowed; SENT: queue was empty */
	__u32 seed;		/* INIT: the first iteration's seed (mltcp_iter_seed) */
	__u32 min_rtt_us;	/* smallest RTT sample so far (tcp_min_rtt), 0: none */
	__u32 reserved;		/* 0 */
	__u64 received_total;	/* cumulative bytes received from the peer
				 * (tcp_sock's bytes_received; a two-way
				 * connection is not drained) */
};

struct mltcp_dp_decision {
	__u32 seq;		/* event index */
	__u32 cwnd;		/* segments (window algorithms) */
	__u32 ssthresh;		/* segments (window algorithms) */
	__u32 gain;		/* F, 1/1024 units */
	__u32 iterations;
	__u32 hinted;
	__u64 iter_bytes;
	__u64 rate_bps;		/* DCQCN: R_C */
	__u64 target_bps;	/* DCQCN: R_T */
};

#define MLTCP_DP_EVENT_SIZE	64
#define MLTCP_DP_DECISION_SIZE	48
#define MLTCP_DP_INIT_CWND	10U
#define MLTCP_DP_SEGMENT	1448U	/* bytes per segment where one is needed */

#endif /* MLTCP_DP_REPLAY_H */
