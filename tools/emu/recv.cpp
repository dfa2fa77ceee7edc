// recv.cpp - `mltcp-emu recv`: the receiver of `send` jobs.  One thread per
// connection reads each message, answers a confirming one with the bytes of
// the iteration (the all-reduce "done" signal, wire.h), and accounts the
// bytes per job in time bins (rx_log.h), written at exit.
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"
#include "emu_util.h"
#include "rx_log.h"
#include "sockets.h"
#include "wire.h"

namespace mltcp_emu {

namespace {

std::atomic<bool> g_stop{false};

void on_signal(int)
{
	g_stop = true;
}

void serve_conn(int fd)
{
	static thread_local std::vector<char> buf(kChunk);
	emu_hello h{};
	if (!read_full(fd, &h, sizeof(h)) || h.magic != kHelloMagic) {
		close(fd);
		return;
	}
	h.job[kJobNameMax - 1] = '\0';
	std::string job = h.job;
	uint64_t since_confirm = 0;
	for (;;) {
		emu_msg_hdr m{};
		if (!read_full(fd, &m, sizeof(m)) || m.magic != kMsgMagic)
			break;
		bool bulk = m.flags & EMU_MSG_BULK;
		uint64_t left = m.bytes, got = 0;
		while (bulk || left) {
			size_t want = bulk ? kChunk : (size_t)std::min<uint64_t>(left, kChunk);
			ssize_t r = recv(fd, buf.data(), want, 0);
			if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
				goto out;
			if (r < 0) {
				wait_fd(fd, POLLIN, 1000);
				continue;
			}
			rx_log_account(job, (uint64_t)r);
			got += (uint64_t)r;
			if (!bulk)
				left -= (uint64_t)r;
		}
		// Buckets of one iteration add up until the confirming one.
		since_confirm += got;
		if (m.flags & EMU_MSG_CONFIRM) {
			if (!write_full(fd, &since_confirm, sizeof(since_confirm)))
				break;
			since_confirm = 0;
		}
	}
out:
	close(fd);
}

}  // namespace

int cmd_recv(const RecvOptions &o)
{
	rx_log_start(o.t0_us ? o.t0_us : realtime_us(), o.bin_us);
	struct sigaction sa {};
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, nullptr);
	sigaction(SIGINT, &sa, nullptr);

	int ls = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)o.port);
	if (inet_pton(AF_INET, o.bind.c_str(), &a.sin_addr) != 1)
		fatal(kExitUsage, "--bind '" + o.bind + "' is not an IPv4 address");
	if (bind(ls, (sockaddr *)&a, sizeof(a)) || listen(ls, 64))
		fatal(kExitNet, "listen on " + o.bind + ":" + std::to_string(o.port) + ": " +
					strerror(errno));
	socklen_t al = sizeof(a);
	getsockname(ls, (sockaddr *)&a, &al);
	if (!o.port_file.empty()) {
		std::ofstream f(o.port_file + ".tmp");
		f << ntohs(a.sin_port) << "\n";
		f.close();
		if (!f || rename((o.port_file + ".tmp").c_str(), o.port_file.c_str()))
			fatal(kExitUsage, "cannot write --port-file " + o.port_file);
	}
	uint64_t deadline = o.duration_s ? realtime_us() + o.duration_s * 1000000 : 0;
	while (!g_stop && (!deadline || realtime_us() < deadline)) {
		pollfd p{ls, POLLIN, 0};
		if (poll(&p, 1, 100) <= 0)
			continue;
		int fd = accept(ls, nullptr, nullptr);
		if (fd < 0)
			continue;
		set_nonblocking(fd);
		std::thread(serve_conn, fd).detach();
	}
	if (!o.log_dir.empty())
		rx_log_write_all(o.log_dir);
	return 0;
}

}  // namespace mltcp_emu
