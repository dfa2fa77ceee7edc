// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// tcp_baseline.cpp - the kernel-TCP baseline of bench-dpdk, measured on the
// same veth pair in the same run: one connection's goodput (a chosen
// congestion control, by TCP_CONGESTION) and 64 B request/response latency.
//
//   mltcp-tcp-baseline server [--port P]
//   mltcp-tcp-baseline stream --host A --bytes N [--cc cubic] [--port P]
//   mltcp-tcp-baseline ping --host A [--count N] [--size 64] [--port P]
//
// The stream's time runs from connect until the server confirmed receipt of
// every byte, as for mltcp-dpdk send (which waits for all acks).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kDefaultPort = 7720;
constexpr size_t kChunk = 1 << 20;

[[noreturn]] void Die(const std::string &m)
{
	fprintf(stderr, "mltcp-tcp-baseline: %s\n", m.c_str());
	exit(1);
}

double NowS()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

bool ReadFull(int fd, void *buf, size_t n)
{
	auto *p = static_cast<char *>(buf);
	while (n) {
		ssize_t r = read(fd, p, n);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return false;
		}
		p += r;
		n -= (size_t)r;
	}
	return true;
}

bool WriteFull(int fd, const void *buf, size_t n)
{
	auto *p = static_cast<const char *>(buf);
	while (n) {
		ssize_t r = write(fd, p, n);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return false;
		}
		p += r;
		n -= (size_t)r;
	}
	return true;
}

void Serve(int port)
{
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	if (bind(ls, (sockaddr *)&a, sizeof(a)) != 0 || listen(ls, 4) != 0)
		Die("cannot listen on port " + std::to_string(port) + ": " + strerror(errno));
	std::vector<char> buf(kChunk);
	for (;;) {
		int fd = accept(ls, nullptr, nullptr);
		if (fd < 0)
			continue;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		char mode;
		uint64_t size = 0;
		if (!ReadFull(fd, &mode, 1) || !ReadFull(fd, &size, 8)) {
			close(fd);
			continue;
		}
		if (mode == 'S') {	// stream: count, then confirm
			uint64_t got = 0;
			ssize_t r;
			while (got < size && (r = read(fd, buf.data(), buf.size())) > 0)
				got += (uint64_t)r;
			WriteFull(fd, &got, 8);
		} else if (mode == 'P') {	// ping: echo messages of `size`
			while (ReadFull(fd, buf.data(), size) && WriteFull(fd, buf.data(), size)) {
			}
		} else if (mode == 'Q') {
			close(fd);
			break;
		}
		close(fd);
	}
	close(ls);
}

int Connect(const std::string &host, int port, const std::string &cc)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (!cc.empty() &&
	    setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc.c_str(), (socklen_t)cc.size()) != 0)
		Die("congestion control '" + cc + "' not available: " + strerror(errno) +
		    " (see /proc/sys/net/ipv4/tcp_available_congestion_control)");
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1)
		Die("bad --host '" + host + "'");
	for (int i = 0; i < 50; i++) {	// the server may still be starting
		if (connect(fd, (sockaddr *)&a, sizeof(a)) == 0)
			return fd;
		usleep(100000);
	}
	Die("cannot connect to " + host + ":" + std::to_string(port) + ": " + strerror(errno));
}

}  // namespace

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help")) {
		printf("usage: mltcp-tcp-baseline server|stream|ping|quit [--host A] [--port P]\n"
		       "       [--bytes N] [--cc NAME] [--count N] [--size N]\n");
		return argc < 2 ? 2 : 0;
	}
	std::string cmd = argv[1], host = "127.0.0.1", cc = "cubic";
	int port = kDefaultPort;
	uint64_t bytes = 1000000000, count = 20000, size = 64;
	for (int i = 2; i + 1 < argc; i += 2) {
		std::string k = argv[i], v = argv[i + 1];
		if (k == "--host") host = v;
		else if (k == "--port") port = atoi(v.c_str());
		else if (k == "--bytes") bytes = (uint64_t)strtod(v.c_str(), nullptr);
		else if (k == "--cc") cc = v;
		else if (k == "--count") count = strtoull(v.c_str(), nullptr, 10);
		else if (k == "--size") size = strtoull(v.c_str(), nullptr, 10);
		else Die("unknown option " + k);
	}
	if (cmd == "server") {
		Serve(port);
		return 0;
	}
	int fd = Connect(host, port, cmd == "stream" ? cc : "");
	if (cmd == "quit") {
		char q = 'Q';
		uint64_t z = 0;
		WriteFull(fd, &q, 1);
		WriteFull(fd, &z, 8);
		return 0;
	}
	if (cmd == "stream") {
		double t0 = NowS();
		char m = 'S';
		WriteFull(fd, &m, 1);
		WriteFull(fd, &bytes, 8);
		std::vector<char> buf(kChunk, 7);
		for (uint64_t left = bytes; left;) {
			size_t n = (size_t)std::min<uint64_t>(left, buf.size());
			if (!WriteFull(fd, buf.data(), n))
				Die(std::string("write: ") + strerror(errno));
			left -= n;
		}
		uint64_t got = 0;
		if (!ReadFull(fd, &got, 8) || got != bytes)
			Die("server confirmed " + std::to_string(got) + " of " + std::to_string(bytes));
		double s = NowS() - t0;
		printf("TCP-STREAM cc=%s bytes=%" PRIu64 " seconds=%.3f goodput_gbps=%.3f\n", cc.c_str(),
		       bytes, s, bytes * 8 / s / 1e9);
	} else if (cmd == "ping") {
		char m = 'P';
		WriteFull(fd, &m, 1);
		WriteFull(fd, &size, 8);
		std::vector<char> buf(size, 1);
		std::vector<double> us;
		uint64_t warm = std::min<uint64_t>(1000, count / 10);
		for (uint64_t i = 0; i < count + warm; i++) {
			double t = NowS();
			if (!WriteFull(fd, buf.data(), size) || !ReadFull(fd, buf.data(), size))
				Die("ping: connection lost");
			if (i >= warm)
				us.push_back((NowS() - t) * 1e6);
		}
		std::sort(us.begin(), us.end());
		printf("TCP-PING size=%" PRIu64 " count=%zu median_us=%.2f p99_us=%.2f\n", size, us.size(),
		       us[us.size() / 2], us[us.size() * 99 / 100]);
	} else {
		Die("unknown command '" + cmd + "'");
	}
	close(fd);
	return 0;
}
