/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * tcp_mltcp_info.h - per-socket MLTCP state as the kernel module reports it
 * through getsockopt(IPPROTO_TCP, TCP_CC_INFO) (the congestion control's
 * get_info hook).  Shared by the module and userspace readers.
 *
 * The kernel copies at most sizeof(union tcp_cc_info) = 20 bytes, so the
 * 64-bit learned size is split in two 32-bit halves (the union is only
 * 4-byte aligned) and the current iteration's bytes saturate at 4 GiB.
 */
#ifndef TCP_MLTCP_INFO_H
#define TCP_MLTCP_INFO_H

#include <linux/types.h>

#define TCP_MLTCP_INFO_RATIO_NONE	0xffffU	/* no iteration structure */

struct tcp_mltcp_info {
	__u32 iterations;		/* completed iterations (detected + hinted) */
	__u32 iter_bytes;		/* bytes acked in this iteration, saturating */
	__u32 bytes_per_iter_lo;	/* learned bytes per iteration, low half */
	__u32 bytes_per_iter_hi;	/* ... high half; 0 and 0 = not learned yet */
	__u16 gain;			/* current F, units of 1/1024 */
	__u16 ratio;			/* bytes_ratio, 1/1024, or RATIO_NONE */
};

#endif /* TCP_MLTCP_INFO_H */
