// sockets.cpp - mltcp-emu's socket helpers (sockets.h).
#include "sockets.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "emu_util.h"

namespace mltcp_emu {

namespace {

const char *kAvailCcPath = "/proc/sys/net/ipv4/tcp_available_congestion_control";

}  // namespace

void set_nonblocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		fatal(kExitNet, std::string("fcntl: ") + strerror(errno));
}

bool wait_fd(int fd, short ev, int timeout_ms)
{
	pollfd p{fd, ev, 0};
	for (;;) {
		int r = poll(&p, 1, timeout_ms);
		if (r > 0)
			return true;
		if (r == 0)
			return false;
		if (errno != EINTR)
			fatal(kExitNet, std::string("poll: ") + strerror(errno));
	}
}

int ms_until(uint64_t deadline_us)
{
	uint64_t t = realtime_us();
	return t >= deadline_us ? 0 : (int)std::min<uint64_t>((deadline_us - t + 999) / 1000, INT_MAX);
}

ReadResult read_exact(int fd, void *buf, size_t n, uint64_t deadline_us, int idle_ms)
{
	auto *p = (char *)buf;
	while (n) {
		ssize_t r = recv(fd, p, n, 0);
		if (r > 0) {
			p += r;
			n -= (size_t)r;
		} else if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (!wait_fd(fd, POLLIN, std::min(idle_ms, ms_until(deadline_us))))
				return ReadResult::kTimeout;
		} else {
			return ReadResult::kClosed;
		}
	}
	return ReadResult::kOk;
}

bool read_full(int fd, void *buf, size_t n)
{
	ReadResult r = read_exact(fd, buf, n, UINT64_MAX, kIoTimeoutMs);
	if (r == ReadResult::kTimeout)
		fatal(kExitNet, "no data from the peer for 60 s");
	return r == ReadResult::kOk;
}

bool write_full(int fd, const void *buf, size_t n)
{
	auto *p = (const char *)buf;
	while (n) {
		ssize_t r = send(fd, p, n, MSG_NOSIGNAL);
		if (r > 0) {
			p += r;
			n -= (size_t)r;
		} else if (r < 0 && errno == EAGAIN) {
			if (!wait_fd(fd, POLLOUT, kIoTimeoutMs))
				fatal(kExitNet, "peer accepted no data for 60 s");
		} else if (r < 0 && errno != EINTR) {
			return false;
		}
	}
	return true;
}

void set_congestion(int fd, const std::string &cc)
{
	if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc.c_str(), (socklen_t)cc.size()) == 0)
		return;
	int err = errno;
	std::string avail = read_small_file(kAvailCcPath);
	std::string msg = "congestion control '" + cc + "' is not available (" + strerror(err) +
			  "); registered: " + avail;
	if (cc.rfind("mltcp", 0) == 0)
		msg += "\nmltcp-emu: mltcp not registered: run mltcpctl load";
	fatal(kExitCc, msg);
}

sockaddr_in parse_endpoint(const std::string &s, const std::string &what)
{
	sockaddr_in a{};
	a.sin_family = AF_INET;
	auto colon = s.rfind(':');
	if (colon == std::string::npos)
		fatal(kExitUsage, what + " '" + s + "' must be IPV4:PORT");
	std::string ip = s.substr(0, colon), port = s.substr(colon + 1);
	if (inet_pton(AF_INET, ip.c_str(), &a.sin_addr) != 1)
		fatal(kExitUsage, what + " '" + s + "': '" + ip + "' is not an IPv4 address");
	a.sin_port = htons((uint16_t)parse_u64_opt((what + " port").c_str(), port.c_str(), 65535));
	return a;
}

int tcp_socket(const std::string &cc)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		fatal(kExitNet, std::string("socket: ") + strerror(errno));
	if (!cc.empty())
		set_congestion(fd, cc);
	return fd;
}

int connect_to(const sockaddr_in &dst, const std::string &cc)
{
	uint64_t deadline = realtime_us() + (uint64_t)kConnectTimeoutMs * 1000;
	for (;;) {
		int fd = tcp_socket(cc);
		if (connect(fd, (const sockaddr *)&dst, sizeof(dst)) == 0) {
			set_nonblocking(fd);
			return fd;
		}
		int err = errno;
		close(fd);
		// The receiver may still be starting: retry refusals briefly.
		if ((err != ECONNREFUSED && err != EINTR) || realtime_us() > deadline) {
			char ip[INET_ADDRSTRLEN];
			inet_ntop(AF_INET, &dst.sin_addr, ip, sizeof(ip));
			fatal(kExitNet, std::string("connect to ") + ip + ":" +
						std::to_string(ntohs(dst.sin_port)) + ": " + strerror(err) +
						" (is 'mltcp-emu recv' running there?)");
		}
		usleep(50000);
	}
}

void check_congestion(const std::string &cc)
{
	if (!cc.empty())
		close(tcp_socket(cc));
}

}  // namespace mltcp_emu
