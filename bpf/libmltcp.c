// SPDX-License-Identifier: BSD-3-Clause
/*
 * libmltcp.c - iteration hints for the MLTCP BPF datapath.
 *
 * A per-socket hint is a read-modify-write of the socket's element in the
 * pinned sk_storage map: bump seq, set bytes, keep applied_seq (written by
 * the congestion control).  Concurrent hints on one socket may merge into
 * one, which is harmless: each says "an iteration starts now".
 *
 * A job hint is a setsockopt(MLTCP_SOL_JOB) on a throwaway UDP socket,
 * handled by the cgroup/setsockopt program of the caller's cgroup
 * (mltcp_jobhint.bpf.c); it needs no BPF permission at all.
 */
#include "mltcp/libmltcp.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/types.h>
#include <bpf/bpf.h>

#include "mltcp_iter.h"
#include "mltcp_bpf_shared.h"

#define MLTCP_ERR_LEN 256

static __thread char mltcp_err[MLTCP_ERR_LEN];

static int mltcp_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(mltcp_err, sizeof(mltcp_err), fmt, ap);
	va_end(ap);
	errno = err;
	return -1;
}

const char *mltcp_last_error(void)
{
	return mltcp_err;
}

static int mltcp_is_mltcp_name(const char *name)
{
	return strcmp(name, MLTCP_CC_RENO) == 0 || strcmp(name, MLTCP_CC_CUBIC) == 0;
}

int mltcp_socket_uses_mltcp(int sockfd)
{
	char name[MLTCP_CC_NAME_MAX + 1] = "";
	socklen_t len = MLTCP_CC_NAME_MAX;

	if (getsockopt(sockfd, IPPROTO_TCP, TCP_CONGESTION, name, &len) < 0) {
		int err = errno;

		if (err == EBADF || err == ENOTSOCK)
			return mltcp_fail(err, "fd %d is not an open socket", sockfd);
		return mltcp_fail(EOPNOTSUPP, "fd %d is not a TCP socket (%s)",
				  sockfd, strerror(err));
	}
	name[MLTCP_CC_NAME_MAX] = '\0';
	if (!mltcp_is_mltcp_name(name)) {
		snprintf(mltcp_err, sizeof(mltcp_err),
			 "socket %d uses congestion control '%s', not %s or %s: "
			 "select one with setsockopt(TCP_CONGESTION), the sysctl "
			 "net.ipv4.tcp_congestion_control or 'mltcpctl attach --cgroup'",
			 sockfd, name, MLTCP_CC_RENO, MLTCP_CC_CUBIC);
		return 0;
	}
	return 1;
}

uint64_t mltcp_hint_bytes_max(void)
{
	return MLTCP_HINT_BYTES_MAX;
}

static int mltcp_check_bytes(uint64_t bytes)
{
	if (bytes >= 1 && bytes <= MLTCP_HINT_BYTES_MAX)
		return 0;
	return mltcp_fail(EINVAL, "hint size %llu bytes is out of range: an iteration's "
			  "bytes must be 1..%llu", (unsigned long long)bytes,
			  (unsigned long long)MLTCP_HINT_BYTES_MAX);
}

/* A pinned map of MLTCP's, or -1 with errno set and the error text saying
 * what to do; `missing` and `denied` finish the text for ENOENT and for
 * EACCES/EPERM. */
static int mltcp_open_pin(const char *path, const char *missing, const char *denied)
{
	int map_fd = bpf_obj_get(path), err;

	if (map_fd >= 0)
		return map_fd;
	err = errno;
	if (err == ENOENT)
		return mltcp_fail(ENOENT, "%s is missing: %s", path, missing);
	if (err == EACCES || err == EPERM)
		return mltcp_fail(err, "no permission to open %s: %s", path, denied);
	return mltcp_fail(err, "cannot open %s: %s", path, strerror(err));
}

int mltcp_hint_iteration(int sockfd, uint64_t bytes)
{
	struct mltcp_hint h;
	int map_fd, err, uses;

	mltcp_err[0] = '\0';
	if (mltcp_check_bytes(bytes) < 0)
		return -1;
	map_fd = mltcp_open_pin(MLTCP_PIN_HINTS, "MLTCP is not loaded: run 'mltcpctl load' as root",
				"writing MLTCP hints needs root or the group of "
				"'mltcpctl load --hint-group GROUP' (on kernels before 6.5 "
				"also sysctl kernel.unprivileged_bpf_disabled=0)");
	if (map_fd < 0)
		return -1;
	uses = mltcp_socket_uses_mltcp(sockfd);
	if (uses <= 0) {
		err = uses < 0 ? errno : EOPNOTSUPP;
		close(map_fd);
		errno = err;
		return -1;
	}
	memset(&h, 0, sizeof(h));
	if (bpf_map_lookup_elem(map_fd, &sockfd, &h) < 0 && errno != ENOENT) {
		err = errno;
		close(map_fd);
		return mltcp_fail(err, "reading the hint of socket %d failed: %s",
				  sockfd, strerror(err));
	}
	h.seq++;
	h.bytes = bytes;
	if (bpf_map_update_elem(map_fd, &sockfd, &h, BPF_ANY) < 0) {
		err = errno;
		close(map_fd);
		return mltcp_fail(err, "writing the hint of socket %d failed: %s",
				  sockfd, strerror(err));
	}
	close(map_fd);
	return 0;
}

int mltcp_socket_window_repairs(int sockfd, uint64_t *repairs)
{
	struct mltcp_flow_stats st;
	int map_fd, err, uses;

	mltcp_err[0] = '\0';
	if (!repairs)
		return mltcp_fail(EINVAL, "no place for the count (repairs is NULL)");
	uses = mltcp_socket_uses_mltcp(sockfd);
	if (uses <= 0) {
		if (uses == 0)
			errno = EOPNOTSUPP;
		return -1;
	}
	map_fd = mltcp_open_pin(MLTCP_PIN_FLOWS,
				"MLTCP's BPF datapath is not loaded, or was loaded by an "
				"mltcpctl older than this library: run 'mltcpctl load' as root",
				"reading window repairs needs root");
	if (map_fd < 0)
		return -1;
	memset(&st, 0, sizeof(st));
	if (bpf_map_lookup_elem(map_fd, &sockfd, &st) < 0 && errno != ENOENT) {
		err = errno;
		close(map_fd);
		return mltcp_fail(err, "reading the stats of socket %d failed: %s", sockfd,
				  strerror(err));
	}
	close(map_fd);
	*repairs = st.window_repairs;	/* no entry yet (nothing acked): 0 */
	return 0;
}

/* The caller's cgroup v2 path ("0::/path" in /proc/self/cgroup), for errors. */
static void mltcp_own_cgroup(char *buf, size_t len)
{
	char line[512];
	FILE *f = fopen("/proc/self/cgroup", "re");

	snprintf(buf, len, "?");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(buf, len, "%.200s", line + 3);
			break;
		}
	}
	fclose(f);
}

/* One job option (mltcp_jobhint.bpf.c) for the caller's cgroup; `what`
 * names it in errors. */
static int mltcp_job_option(int optname, __u64 val, const char *what)
{
	char cg[256];
	int fd, err;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return mltcp_fail(errno, "cannot create the socket that carries the %s: %s",
				  what, strerror(errno));
	if (setsockopt(fd, MLTCP_SOL_JOB, optname, &val, sizeof(val)) == 0) {
		close(fd);
		return 0;
	}
	err = errno;
	close(fd);
	mltcp_own_cgroup(cg, sizeof(cg));
	if (err == ENOPROTOOPT)
		return mltcp_fail(err, "this process's cgroup %s has no MLTCP attachment, so it "
				  "may not set the %s: ask the operator for "
				  "'mltcpctl attach --cgroup' on it (or a parent)", cg, what);
	if (err == ENOSPC)
		return mltcp_fail(err, "MLTCP's job table (%d cgroups) is full", MLTCP_MAX_JOBS);
	return mltcp_fail(err, "the %s for cgroup %s was refused: %s", what, cg, strerror(err));
}

int mltcp_hint_job(uint64_t bytes)
{
	mltcp_err[0] = '\0';
	if (mltcp_check_bytes(bytes) < 0)
		return -1;
	return mltcp_job_option(MLTCP_JOB_HINT, bytes, "job hint");
}

int mltcp_seed_job(uint64_t seed)
{
	mltcp_err[0] = '\0';
	return mltcp_job_option(MLTCP_JOB_SEED, seed, "job seed");
}
