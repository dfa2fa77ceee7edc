// SPDX-License-Identifier: BSD-3-Clause
/*
 * lock.cpp - the lock that serialises every mltcpctl command changing
 * MLTCP's host state (load, unload, attach, detach, set, service
 * start/reload/stop).
 *
 * Without it two loads started together interleave: the second finds the
 * first's pins half made, fails, and its rollback removes what the first
 * had put there.  With it the second waits, then sees "already loaded" and
 * touches nothing.
 *
 * The lock is flock(2) on /run/lock/mltcp.lock (a regular file on tmpfs:
 * bpffs, where the pins live, holds no regular files, and the pin directory
 * itself comes and goes with load/unload).  flock is released by the
 * kernel when the holder exits, even by a crash, so a stale lock file is
 * harmless.  The holder writes "<pid> <command>" into the file so a waiter
 * can say whom it waits for.  Read-only commands (status, stats, the
 * exporter) do not take it.
 */
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mltcpctl.h"

namespace {

constexpr const char *kLockPath = "/run/lock/mltcp.lock";
// A load takes well under a second; a waiter that has waited this long is
// looking at a hung holder and says so instead of hanging too.
constexpr int kWaitSeconds = 60;

int g_lock_fd = -1;

std::string holder(int fd)
{
	char buf[128] = "";
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return "another mltcpctl";
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	int pid = std::atoi(buf);
	const char *cmd = strchr(buf, ' ');
	return "pid " + std::to_string(pid) + (cmd ? std::string(" (mltcpctl") + cmd + ")" : "");
}

}  // namespace

const char *state_lock_path() { return kLockPath; }

void lock_host_state(const char *command)
{
	if (g_lock_fd >= 0)
		return;
	mkdir("/run/lock", 01777);	// exists on Debian; tolerate a bare /run
	int fd = open(kLockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		fail(kRuntime, "cannot open the mltcpctl lock %s: %s", kLockPath, strerror(errno));
	auto start = std::chrono::steady_clock::now();
	bool told = false;
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			int e = errno;
			close(fd);
			fail(kRuntime, "locking %s failed: %s", kLockPath, strerror(e));
		}
		double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() -
							      start).count();
		if (waited >= kWaitSeconds) {
			std::string who = holder(fd);
			close(fd);
			fail(kRuntime, "%s has held %s for over %d s: gave up waiting; is it hung?",
			     who.c_str(), kLockPath, kWaitSeconds);
		}
		if (!told && waited >= 1.0) {
			std::fprintf(stderr, "mltcpctl %s: waiting for %s to finish (%s)\n", command,
				     holder(fd).c_str(), kLockPath);
			told = true;
		}
		std::this_thread::sleep_for(std::chrono::milliseconds(5));
	}
	std::string me = std::to_string(getpid()) + " " + command + "\n";
	if (ftruncate(fd, 0) == 0 && pwrite(fd, me.data(), me.size(), 0) < 0) {
		/* only the waiters' message loses the holder's name */
	}
	g_lock_fd = fd;	// closed (and released) by the kernel at exit
}
