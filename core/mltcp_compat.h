/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * mltcp_compat.h - the few definitions the MLTCP policy core needs from its
 * host world.  The core is plain C that compiles unchanged in three worlds:
 *
 *   - the Linux kernel (kbuild; __KERNEL__ is defined),
 *   - BPF programs (clang -target bpf; __bpf__ is defined; the including
 *     program has already pulled in vmlinux.h or <linux/types.h>),
 *   - userspace C and C++17.
 *
 * Everything the core uses is an __u8/__u16/__u32/__u64 integer type, which
 * all three worlds spell the same way, plus one macro for 64-bit division,
 * which 32-bit kernels cannot do with a plain '/'.
 */
#ifndef MLTCP_COMPAT_H
#define MLTCP_COMPAT_H

#if defined(__KERNEL__)
#include <linux/types.h>
#include <linux/math64.h>
#define MLTCP_DIV64(n, d) div64_u64((n), (d))
#elif defined(__bpf__)
/* Types come from vmlinux.h or <linux/types.h>, included by the program. */
#define MLTCP_DIV64(n, d) ((n) / (d))
#else
#include <linux/types.h>
#define MLTCP_DIV64(n, d) ((n) / (d))
#endif

#ifndef MLTCP_INLINE
#if defined(__bpf__)
#define MLTCP_INLINE static __always_inline
#else
#define MLTCP_INLINE static inline
#endif
#endif

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#define MLTCP_U32_MAX ((__u32)~0U)
#define MLTCP_U64_MAX ((__u64)~0ULL)

MLTCP_INLINE __u64 mltcp_min_u64(__u64 a, __u64 b) { return a < b ? a : b; }
MLTCP_INLINE __u64 mltcp_max_u64(__u64 a, __u64 b) { return a > b ? a : b; }
MLTCP_INLINE __u32 mltcp_min_u32(__u32 a, __u32 b) { return a < b ? a : b; }
MLTCP_INLINE __u32 mltcp_max_u32(__u32 a, __u32 b) { return a > b ? a : b; }

MLTCP_INLINE __u32 mltcp_clamp_u32(__u32 v, __u32 lo, __u32 hi)
{
	return v < lo ? lo : (v > hi ? hi : v);
}

MLTCP_INLINE __u64 mltcp_clamp_u64(__u64 v, __u64 lo, __u64 hi)
{
	return v < lo ? lo : (v > hi ? hi : v);
}

/* a + b, saturating at U64_MAX. */
MLTCP_INLINE __u64 mltcp_add_sat_u64(__u64 a, __u64 b)
{
	return a > MLTCP_U64_MAX - b ? MLTCP_U64_MAX : a + b;
}

/*
 * a * b, saturating at U64_MAX instead of wrapping.  Used where a product of
 * a byte count and a fixed-point scale could exceed 64 bits for absurd input.
 * Built from 32-bit halves: the usual "b > MAX / a" test is turned by clang
 * into a 128-bit multiply, which BPF cannot call.
 */
MLTCP_INLINE __u64 mltcp_mul_sat_u64(__u64 a, __u64 b)
{
	__u64 a_hi = a >> 32, a_lo = a & 0xffffffffULL;
	__u64 b_hi = b >> 32, b_lo = b & 0xffffffffULL;
	__u64 cross;

	if (a_hi && b_hi)
		return MLTCP_U64_MAX;
	cross = a_hi * b_lo + b_hi * a_lo;	/* one term is zero: no wrap */
	if (cross >> 32)
		return MLTCP_U64_MAX;
	return mltcp_add_sat_u64(cross << 32, a_lo * b_lo);
}


#endif /* MLTCP_COMPAT_H */
