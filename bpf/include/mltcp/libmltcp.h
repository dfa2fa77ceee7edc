/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libmltcp.h - tell MLTCP's BPF congestion control where training
 * iterations start, for one socket or for all sockets of the job.
 *
 *   #include <mltcp/libmltcp.h>      (pkg-config --cflags --libs libmltcp)
 *   mltcp_hint_iteration(fd, bytes_this_iteration);   before sending them
 *   mltcp_hint_job(bytes_per_connection);   the same for every socket of the
 *                                           caller's cgroup
 *   mltcp_seed_job(same_value_on_every_host);   once, before the first hint:
 *                                           one first-iteration seed per job
 *
 * Sizes are 1..MLTCP_HINT_BYTES_MAX (2^48) bytes; anything else is EINVAL.
 *
 * The hint lands in the pinned BPF_MAP_TYPE_SK_STORAGE map
 * /sys/fs/bpf/mltcp/hints; the congestion control picks it up when the
 * socket next starts sending after idle, or on its next ack.  Writing it
 * needs root, or membership of the group given to `mltcpctl load
 * --hint-group`.  Thread-safe; each call opens the map anew, so hints keep
 * working across `mltcpctl unload` / `load`.
 */
#ifndef MLTCP_LIBMLTCP_H
#define MLTCP_LIBMLTCP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * "An iteration of `bytes` bytes starts now on `sockfd`".  Returns 0, or -1
 * with errno set:
 *   EINVAL      bytes is 0 or above 2^48
 *   EOPNOTSUPP  the socket is not TCP or does not use mltcp / mltcp_cubic
 *   ENOENT      MLTCP is not loaded (no /sys/fs/bpf/mltcp/hints)
 *   EACCES/EPERM  not allowed to write hints (see mltcpctl load --hint-group)
 *   EBADF       sockfd is not an open file descriptor
 * mltcp_last_error() then says what failed and what to do.
 */
int mltcp_hint_iteration(int sockfd, uint64_t bytes);

/*
 * "An iteration starts now, each of my MLTCP connections sends `bytes` of
 * it", for every MLTCP socket created in the caller's cgroup v2 that has no
 * per-socket hints of its own.  Any process of the cgroup may call it, no
 * BPF permission needed; nobody outside the cgroup can.  Returns 0, or -1
 * with errno set:
 *   EINVAL       bytes is 0 or above 2^48
 *   ENOPROTOOPT  the caller's cgroup has no 'mltcpctl attach' (nor a parent)
 *   ENOSPC       MLTCP's job table is full
 */
int mltcp_hint_job(uint64_t bytes);

/*
 * The job's first-iteration seed, for every MLTCP socket of the caller's
 * cgroup v2: the value their seed is hashed from (any value).  A job whose
 * ranks run on several hosts passes the same value on all of them (e.g. a
 * hash of its rendezvous address) before its first hint, so that all its
 * connections act at one random ratio in its first iteration instead of a
 * draw per host.  Returns 0, or -1 with errno set:
 *   ENOPROTOOPT  the caller's cgroup has no 'mltcpctl attach' (nor a parent)
 *   ENOSPC       MLTCP's job table is full
 */
int mltcp_seed_job(uint64_t seed);

/* The largest valid hint size (the core's MLTCP_HINT_BYTES_MAX). */
uint64_t mltcp_hint_bytes_max(void);

/* 1 if sockfd uses an MLTCP congestion control, 0 if not, -1 on error. */
int mltcp_socket_uses_mltcp(int sockfd);

/*
 * Diagnostics: how many times MLTCP's BPF datapath has found this socket's
 * cwnd or ssthresh corrupted and repaired it (a kernel that skips a BPF
 * congestion control's call leaves a register's value there; docs/bpf.md,
 * "Window guard"), since the socket's first ack, into *repairs.  Returns 0,
 * or -1 with errno set:
 *   EOPNOTSUPP  the socket does not use mltcp / mltcp_cubic (the kernel
 *               module has no guard)
 *   ENOENT      MLTCP's BPF datapath is not loaded
 *   EACCES/EPERM  not root
 *   EBADF       sockfd is not an open file descriptor
 *   EINVAL      repairs is NULL
 */
int mltcp_socket_window_repairs(int sockfd, uint64_t *repairs);

/* Text of this thread's last failure ("" if none). */
const char *mltcp_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* MLTCP_LIBMLTCP_H */
