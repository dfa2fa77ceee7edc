// mltcp_emu.cpp - mltcp-emu: emulates the network behaviour of data-parallel
// training jobs over real TCP sockets, for the interleaving testbed.
//
// A job repeats { compute (silence); communication phase: send the
// iteration's bytes, optionally in buckets with gaps, over one or more
// connections; wait for the receiver's confirmation that every byte arrived
// (as an all-reduce completes) }.  Per-iteration times go to a CSV, a summary
// to JSON.  The receiver (same binary) confirms iterations and logs the bytes
// it receives per job in time bins (throughput timelines, bulk-flow share).
//
// Differs from a real all-reduce: the K connections of a job all go to one
// receiver instead of forming a ring among K workers; on a single bottleneck
// that is the same traffic pattern.
#include <arpa/inet.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "profile.h"
#include "stats.h"
#include "wire.h"

#ifdef MLTCP_EMU_HAVE_LIBMLTCP
#include <mltcp/libmltcp.h>
#endif

using namespace mltcp_emu;

namespace {

// Exit codes (documented in --help): scripts and tests tell failures apart.
constexpr int kExitUsage = 2;		// bad command line or profile
constexpr int kExitCc = 3;		// congestion control not available
constexpr int kExitNet = 4;		// connect / transfer failure
constexpr int kExitHints = 5;		// --hints without libmltcp

constexpr size_t kChunk = 256 * 1024;	// bytes per send()/recv() call
constexpr int kConnectTimeoutMs = 5000;
constexpr int kIoTimeoutMs = 60000;	// a phase stuck this long is a failure
constexpr uint64_t kDefaultBinUs = 10000;

const char *kAvailCcPath = "/proc/sys/net/ipv4/tcp_available_congestion_control";

[[noreturn]] void fatal(int code, const std::string &msg)
{
	fprintf(stderr, "mltcp-emu: %s\n", msg.c_str());
	exit(code);
}

uint64_t now_us()
{
	timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

void sleep_until_us(uint64_t t)
{
	timespec ts{(time_t)(t / 1000000), (long)(t % 1000000) * 1000};
	while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
	}
}

std::string read_small_file(const char *path)
{
	std::ifstream f(path);
	std::string s;
	std::getline(f, s);
	return s;
}

uint64_t parse_u64_opt(const char *opt, const char *s, uint64_t max)
{
	char *end = nullptr;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (!*s || *end || errno || v > max || s[0] == '-')
		fatal(kExitUsage, std::string("option ") + opt + ": '" + s +
					  "' is not an integer in 0.." + std::to_string(max));
	return v;
}

// ---------------------------------------------------------------- sockets

void set_nonblocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		fatal(kExitNet, std::string("fcntl: ") + strerror(errno));
}

// Waits for `ev` on fd; false on timeout.
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

// Reads exactly n bytes (non-blocking fd); false on EOF before n.
bool read_full(int fd, void *buf, size_t n)
{
	auto *p = (char *)buf;
	while (n) {
		ssize_t r = recv(fd, p, n, 0);
		if (r > 0) {
			p += r;
			n -= (size_t)r;
		} else if (r == 0) {
			return false;
		} else if (errno == EAGAIN) {
			if (!wait_fd(fd, POLLIN, kIoTimeoutMs))
				fatal(kExitNet, "no data from the peer for 60 s");
		} else if (errno != EINTR) {
			return false;
		}
	}
	return true;
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

// Sets TCP_CONGESTION; on failure names the ones the kernel has.
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

sockaddr_in parse_endpoint(const std::string &s)
{
	sockaddr_in a{};
	a.sin_family = AF_INET;
	auto colon = s.rfind(':');
	if (colon == std::string::npos)
		fatal(kExitUsage, "--dst '" + s + "' must be IPV4:PORT");
	std::string ip = s.substr(0, colon), port = s.substr(colon + 1);
	if (inet_pton(AF_INET, ip.c_str(), &a.sin_addr) != 1)
		fatal(kExitUsage, "--dst '" + s + "': '" + ip + "' is not an IPv4 address");
	a.sin_port = htons((uint16_t)parse_u64_opt("--dst port", port.c_str(), 65535));
	return a;
}

int connect_to(const sockaddr_in &dst, const std::string &cc)
{
	uint64_t deadline = now_us() + (uint64_t)kConnectTimeoutMs * 1000;
	for (;;) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			fatal(kExitNet, std::string("socket: ") + strerror(errno));
		if (!cc.empty())
			set_congestion(fd, cc);
		if (connect(fd, (const sockaddr *)&dst, sizeof(dst)) == 0) {
			set_nonblocking(fd);
			return fd;
		}
		int err = errno;
		close(fd);
		// The receiver may still be starting: retry refusals briefly.
		if ((err != ECONNREFUSED && err != EINTR) || now_us() > deadline) {
			char ip[INET_ADDRSTRLEN];
			inet_ntop(AF_INET, &dst.sin_addr, ip, sizeof(ip));
			fatal(kExitNet, std::string("connect to ") + ip + ":" +
						std::to_string(ntohs(dst.sin_port)) + ": " + strerror(err) +
						" (is 'mltcp-emu recv' running there?)");
		}
		usleep(50000);
	}
}

// ---------------------------------------------------------------- sender

struct SendOptions {
	std::string dst;
	std::string profile_file;
	std::string profile;
	std::string job;
	std::string cc;
	uint64_t iterations = 20;
	uint64_t start_at_us = 0;	// absolute CLOCK_REALTIME; 0 = now
	uint64_t offset_us = 0;
	uint64_t t0_us = 0;		// CSV time origin; 0 = start time
	uint64_t bulk_seconds = 10;
	uint64_t warmup = 3;
	bool hints = false;
	std::string csv;
	std::string json;
};

struct IterRecord {
	uint64_t bytes, start, comm_start, comm_end, end;
};

// One connection's share of a message, written without blocking so that all
// connections of a job progress together.
struct Outgoing {
	int fd;
	emu_msg_hdr hdr;
	size_t hdr_left;
	uint64_t payload_left;
};

void send_parallel(std::vector<Outgoing> &out)
{
	static const std::vector<char> zeros(kChunk, 0);
	size_t pending = out.size();
	std::vector<pollfd> pfds(out.size());
	while (pending) {
		pending = 0;
		for (size_t i = 0; i < out.size(); i++) {
			auto &o = out[i];
			pfds[i] = {o.fd, 0, 0};
			while (o.hdr_left || o.payload_left) {
				ssize_t r;
				if (o.hdr_left) {
					auto *h = (const char *)&o.hdr + sizeof(o.hdr) - o.hdr_left;
					r = send(o.fd, h, o.hdr_left, MSG_NOSIGNAL);
				} else {
					size_t n = (size_t)std::min<uint64_t>(o.payload_left, kChunk);
					r = send(o.fd, zeros.data(), n, MSG_NOSIGNAL);
				}
				if (r < 0 && errno == EAGAIN) {
					pfds[i].events = POLLOUT;
					pending++;
					break;
				}
				if (r < 0 && errno == EINTR)
					continue;
				if (r < 0)
					fatal(kExitNet, std::string("send: ") + strerror(errno));
				size_t w = (size_t)r;
				if (o.hdr_left) {
					o.hdr_left -= w;
				} else {
					o.payload_left -= w;
				}
			}
		}
		if (pending && poll(pfds.data(), pfds.size(), kIoTimeoutMs) == 0)
			fatal(kExitNet, "receiver accepted no data for 60 s");
	}
}

void hint_iteration(int fd, uint64_t bytes)
{
#ifdef MLTCP_EMU_HAVE_LIBMLTCP
	if (mltcp_hint_iteration(fd, bytes) < 0)
		fatal(kExitHints, std::string("mltcp hint failed: ") + mltcp_last_error());
#else
	(void)fd;
	(void)bytes;
#endif
}

std::vector<IterRecord> run_iterations(const Profile &p, const SendOptions &o,
				       const std::vector<int> &fds, uint64_t t_start)
{
	std::vector<IterRecord> recs;
	uint64_t prev_end = t_start, prev_comm_start = 0;
	for (uint64_t i = 0; i < o.iterations; i++) {
		IterRecord r{};
		r.bytes = iteration_bytes(p, i);
		r.start = prev_end;
		// Async (Dorylus-like): the compute of this iteration started with
		// the previous communication phase, so only its remainder waits.
		uint64_t compute_from = (p.async && i > 0) ? prev_comm_start : r.start;
		sleep_until_us(compute_from + p.compute_us);
		r.comm_start = now_us();
		if (o.hints)
			for (uint32_t c = 0; c < fds.size(); c++)
				hint_iteration(fds[c], split_share(r.bytes, p.conns, c));
		for (uint32_t b = 0; b < p.buckets; b++) {
			uint64_t bucket = split_share(r.bytes, p.buckets, b);
			std::vector<Outgoing> out;
			for (uint32_t c = 0; c < fds.size(); c++) {
				uint64_t share = split_share(bucket, p.conns, c);
				uint32_t fl = (b + 1 == p.buckets) ? (uint32_t)EMU_MSG_CONFIRM : 0u;
				out.push_back({fds[c], {share, fl, kMsgMagic}, sizeof(emu_msg_hdr), share});
			}
			send_parallel(out);
			if (b + 1 < p.buckets && p.bucket_gap_us)
				sleep_until_us(now_us() + p.bucket_gap_us);
		}
		for (uint32_t c = 0; c < fds.size(); c++) {
			uint64_t got = 0, want = split_share(r.bytes, p.conns, c);
			if (!read_full(fds[c], &got, sizeof(got)))
				fatal(kExitNet, "receiver closed the connection during iteration " +
							std::to_string(i));
			if (got != want)
				fatal(kExitNet, "receiver confirmed " + std::to_string(got) +
							" bytes, sent " + std::to_string(want));
		}
		r.comm_end = r.end = now_us();
		prev_end = r.end;
		prev_comm_start = r.comm_start;
		recs.push_back(r);
	}
	return recs;
}

uint64_t run_bulk(const SendOptions &o, const std::vector<int> &fds, uint64_t t_start)
{
	static const std::vector<char> zeros(kChunk, 0);
	uint64_t deadline = t_start + o.bulk_seconds * 1000000, sent = 0;
	for (int fd : fds) {
		emu_msg_hdr h{0, EMU_MSG_BULK, kMsgMagic};
		if (!write_full(fd, &h, sizeof(h)))
			fatal(kExitNet, "send: connection lost");
	}
	while (now_us() < deadline) {
		for (int fd : fds) {
			ssize_t r = send(fd, zeros.data(), kChunk, MSG_NOSIGNAL);
			if (r > 0)
				sent += (uint64_t)r;
			else if (r < 0 && errno != EAGAIN && errno != EINTR)
				fatal(kExitNet, std::string("send: ") + strerror(errno));
		}
		std::vector<pollfd> p;
		for (int fd : fds)
			p.push_back({fd, POLLOUT, 0});
		poll(p.data(), p.size(), 20);
	}
	return sent;
}

void write_outputs(const SendOptions &o, const Profile &p, const std::vector<IterRecord> &recs,
		   uint64_t t0, uint64_t bulk_bytes)
{
	if (!o.csv.empty()) {
		FILE *f = fopen(o.csv.c_str(), "w");
		if (!f)
			fatal(kExitUsage, "cannot write --csv " + o.csv + ": " + strerror(errno));
		fprintf(f, "job,iteration,bytes,start_us,comm_start_us,comm_end_us,end_us\n");
		for (size_t i = 0; i < recs.size(); i++) {
			const auto &r = recs[i];
			fprintf(f, "%s,%zu,%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "\n",
				o.job.c_str(), i, r.bytes, (int64_t)(r.start - t0),
				(int64_t)(r.comm_start - t0), (int64_t)(r.comm_end - t0),
				(int64_t)(r.end - t0));
		}
		if (fclose(f))
			fatal(kExitUsage, "write error on " + o.csv);
	}
	std::vector<double> it_us, comm_us;
	uint64_t total = bulk_bytes;
	for (const auto &r : recs) {
		it_us.push_back((double)(r.end - r.start));
		comm_us.push_back((double)(r.comm_end - r.comm_start));
		total += r.bytes;
	}
	IterStats s = iter_stats(it_us, o.warmup), c = iter_stats(comm_us, o.warmup);
	std::ostringstream js;
	js << "{\"job\":\"" << o.job << "\",\"profile\":\"" << p.name << "\",\"cc\":\""
	   << (o.cc.empty() ? read_small_file("/proc/sys/net/ipv4/tcp_congestion_control") : o.cc)
	   << "\",\"bulk\":" << (p.bulk ? "true" : "false") << ",\"iterations\":" << recs.size()
	   << ",\"warmup\":" << o.warmup << ",\"bytes_total\":" << total
	   << ",\"iter_mean_us\":" << (uint64_t)s.mean_us << ",\"iter_p50_us\":" << (uint64_t)s.p50_us
	   << ",\"iter_p99_us\":" << (uint64_t)s.p99_us << ",\"comm_mean_us\":" << (uint64_t)c.mean_us
	   << ",\"hints\":" << (o.hints ? "true" : "false") << "}\n";
	if (!o.json.empty()) {
		std::ofstream f(o.json);
		f << js.str();
		if (!f)
			fatal(kExitUsage, "cannot write --json " + o.json);
	} else {
		fputs(js.str().c_str(), stdout);
	}
}

int cmd_send(const SendOptions &o)
{
	if (o.dst.empty() || o.profile_file.empty() || o.profile.empty())
		fatal(kExitUsage, "send needs --dst, --profile-file and --profile (see --help)");
#ifndef MLTCP_EMU_HAVE_LIBMLTCP
	if (o.hints)
		fatal(kExitHints, "--hints: this mltcp-emu was built without libmltcp "
				  "(build tools/mltcpctl first, then re-run cmake; see tools/emu/CMakeLists.txt)");
#endif
	Profile p;
	try {
		p = find_profile(load_profiles(o.profile_file), o.profile, o.profile_file);
	} catch (const ProfileError &e) {
		fatal(kExitUsage, e.what());
	}
	if (o.job.size() >= kJobNameMax)
		fatal(kExitUsage, "--job name longer than 23 characters");
	if (!p.bulk && o.iterations == 0)
		fatal(kExitUsage, "--iterations must be at least 1");
	sockaddr_in dst = parse_endpoint(o.dst);

	std::vector<int> fds;
	for (uint32_t c = 0; c < p.conns; c++) {
		int fd = connect_to(dst, o.cc);
		emu_hello h{kHelloMagic, c, {}};
		snprintf(h.job, sizeof(h.job), "%s", o.job.c_str());
		if (!write_full(fd, &h, sizeof(h)))
			fatal(kExitNet, "send hello: connection lost");
		fds.push_back(fd);
	}
	uint64_t t_start = (o.start_at_us ? o.start_at_us : now_us()) + o.offset_us;
	sleep_until_us(t_start);
	uint64_t t0 = o.t0_us ? o.t0_us : t_start;

	std::vector<IterRecord> recs;
	uint64_t bulk_bytes = 0;
	if (p.bulk)
		bulk_bytes = run_bulk(o, fds, t_start);
	else
		recs = run_iterations(p, o, fds, t_start);
	for (int fd : fds)
		close(fd);
	write_outputs(o, p, recs, t0, bulk_bytes);
	return 0;
}

// ---------------------------------------------------------------- receiver

struct RecvOptions {
	uint64_t port = 0;	// 0: the kernel picks one (see --port-file)
	std::string bind = "0.0.0.0";
	std::string port_file;
	std::string log_dir;
	uint64_t t0_us = 0;
	uint64_t bin_us = kDefaultBinUs;
	uint64_t duration_s = 0;	// 0: until SIGTERM/SIGINT
};

std::atomic<bool> g_stop{false};
std::mutex g_bins_mu;
std::map<std::string, std::vector<uint64_t>> g_bins;	// job -> bytes per bin
uint64_t g_t0_us, g_bin_us;

void on_signal(int)
{
	g_stop = true;
}

void account(const std::string &job, uint64_t n)
{
	uint64_t t = now_us();
	if (t < g_t0_us)
		return;
	size_t bin = (size_t)((t - g_t0_us) / g_bin_us);
	if (bin > 10000000)
		return;
	std::lock_guard<std::mutex> lk(g_bins_mu);
	auto &v = g_bins[job];
	if (v.size() <= bin)
		v.resize(bin + 1, 0);
	v[bin] += n;
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
			account(job, (uint64_t)r);
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

void write_rx_logs(const RecvOptions &o)
{
	if (o.log_dir.empty())
		return;
	std::lock_guard<std::mutex> lk(g_bins_mu);
	for (const auto &[job, bins] : g_bins) {
		std::string path = o.log_dir + "/rx-" + job + ".csv";
		FILE *f = fopen(path.c_str(), "w");
		if (!f) {
			fprintf(stderr, "mltcp-emu: cannot write %s: %s\n", path.c_str(), strerror(errno));
			continue;
		}
		fprintf(f, "bin_start_us,bytes\n");
		for (size_t i = 0; i < bins.size(); i++)
			fprintf(f, "%" PRIu64 ",%" PRIu64 "\n", (uint64_t)i * o.bin_us, bins[i]);
		fclose(f);
	}
}

int cmd_recv(const RecvOptions &o)
{
	g_t0_us = o.t0_us ? o.t0_us : now_us();
	g_bin_us = o.bin_us ? o.bin_us : kDefaultBinUs;
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
	uint64_t deadline = o.duration_s ? now_us() + o.duration_s * 1000000 : 0;
	while (!g_stop && (!deadline || now_us() < deadline)) {
		pollfd p{ls, POLLIN, 0};
		if (poll(&p, 1, 100) <= 0)
			continue;
		int fd = accept(ls, nullptr, nullptr);
		if (fd < 0)
			continue;
		set_nonblocking(fd);
		std::thread(serve_conn, fd).detach();
	}
	write_rx_logs(o);
	return 0;
}

// ---------------------------------------------------------------- CLI

void usage(FILE *f)
{
	fprintf(f,
		"usage: mltcp-emu send --dst IP:PORT --profile-file FILE --profile NAME [options]\n"
		"       mltcp-emu recv [--port P] [--port-file F] [--log-dir D] [options]\n"
		"       mltcp-emu profiles --profile-file FILE   (validate and list)\n"
		"\n"
		"send: one training job. Per iteration: compute (sleep compute_us), send the\n"
		"iteration's bytes (in buckets, over conns connections), wait until the receiver\n"
		"confirms every byte. Profile fields: profiles/README.md.\n"
		"  --job NAME            job name in outputs (default: profile name)\n"
		"  --cc NAME             TCP_CONGESTION for the job's sockets (default: system)\n"
		"  --iterations N        iterations to run (default 20)\n"
		"  --start-at-us T       start at this CLOCK_REALTIME time (us since epoch)\n"
		"  --offset-ms X         start X ms after --start-at-us\n"
		"  --t0-us T             time origin of the CSV (default: the start time)\n"
		"  --warmup N            iterations left out of the JSON statistics (default 3)\n"
		"  --bulk-seconds S      duration of a bulk=1 profile's flow (default 10)\n"
		"  --hints               announce each iteration's bytes through libmltcp\n"
		"  --csv FILE            per-iteration CSV: job,iteration,bytes,start_us,\n"
		"                        comm_start_us,comm_end_us,end_us (microseconds from t0)\n"
		"  --json FILE           summary JSON (default: stdout)\n"
		"recv: confirms iterations; logs received bytes per job per time bin.\n"
		"  --port P              listen port (default 0: any, see --port-file)\n"
		"  --bind IP             listen address (default 0.0.0.0)\n"
		"  --port-file F         write the listening port to F\n"
		"  --log-dir D           on exit write D/rx-<job>.csv (bin_start_us,bytes)\n"
		"  --t0-us T, --bin-us B time origin and bin width (default now, 10000)\n"
		"  --duration-s S        exit after S seconds (default: at SIGTERM/SIGINT)\n"
		"exit codes: 0 ok, 2 bad usage or profile file, 3 congestion control not\n"
		"registered, 4 network failure, 5 --hints without libmltcp. hints support: %s\n",
#ifdef MLTCP_EMU_HAVE_LIBMLTCP
		"built in"
#else
		"not built (no libmltcp at build time)"
#endif
	);
}

}  // namespace

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? kExitUsage : 0;
	}
	std::string cmd = argv[1];
	enum { O_DST = 256, O_PF, O_PROF, O_JOB, O_CC, O_ITER, O_START, O_OFF, O_T0, O_WARM,
	       O_BULK, O_HINTS, O_CSV, O_JSON, O_PORT, O_BIND, O_PORTF, O_LOG, O_BIN, O_DUR,
	       O_HELP };
	static const option opts[] = {
		{"dst", 1, nullptr, O_DST}, {"profile-file", 1, nullptr, O_PF},
		{"profile", 1, nullptr, O_PROF}, {"job", 1, nullptr, O_JOB},
		{"cc", 1, nullptr, O_CC}, {"iterations", 1, nullptr, O_ITER},
		{"start-at-us", 1, nullptr, O_START}, {"offset-ms", 1, nullptr, O_OFF},
		{"t0-us", 1, nullptr, O_T0}, {"warmup", 1, nullptr, O_WARM},
		{"bulk-seconds", 1, nullptr, O_BULK}, {"hints", 0, nullptr, O_HINTS},
		{"csv", 1, nullptr, O_CSV}, {"json", 1, nullptr, O_JSON},
		{"port", 1, nullptr, O_PORT}, {"bind", 1, nullptr, O_BIND},
		{"port-file", 1, nullptr, O_PORTF}, {"log-dir", 1, nullptr, O_LOG},
		{"bin-us", 1, nullptr, O_BIN}, {"duration-s", 1, nullptr, O_DUR},
		{"help", 0, nullptr, O_HELP}, {nullptr, 0, nullptr, 0}};
	SendOptions so;
	RecvOptions ro;
	const uint64_t kBig = 1ULL << 62;
	optind = 2;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, nullptr)) != -1) {
		const char *a = optarg;
		switch (c) {
		case O_DST: so.dst = a; break;
		case O_PF: so.profile_file = a; break;
		case O_PROF: so.profile = a; break;
		case O_JOB: so.job = a; break;
		case O_CC: so.cc = a; break;
		case O_ITER: so.iterations = parse_u64_opt("--iterations", a, 1000000); break;
		case O_START: so.start_at_us = parse_u64_opt("--start-at-us", a, kBig); break;
		case O_OFF: so.offset_us = parse_u64_opt("--offset-ms", a, 3600000) * 1000; break;
		case O_T0: so.t0_us = ro.t0_us = parse_u64_opt("--t0-us", a, kBig); break;
		case O_WARM: so.warmup = parse_u64_opt("--warmup", a, 1000000); break;
		case O_BULK: so.bulk_seconds = parse_u64_opt("--bulk-seconds", a, 86400); break;
		case O_HINTS: so.hints = true; break;
		case O_CSV: so.csv = a; break;
		case O_JSON: so.json = a; break;
		case O_PORT: ro.port = parse_u64_opt("--port", a, 65535); break;
		case O_BIND: ro.bind = a; break;
		case O_PORTF: ro.port_file = a; break;
		case O_LOG: ro.log_dir = a; break;
		case O_BIN: ro.bin_us = parse_u64_opt("--bin-us", a, 10000000); break;
		case O_DUR: ro.duration_s = parse_u64_opt("--duration-s", a, 86400); break;
		case O_HELP: usage(stdout); return 0;
		default:
			fprintf(stderr, "mltcp-emu: bad option '%s' (see mltcp-emu --help)\n",
				argv[optind - 1]);
			return kExitUsage;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "mltcp-emu: unexpected argument '%s'\n", argv[optind]);
		return kExitUsage;
	}
	if (cmd == "send") {
		if (so.job.empty())
			so.job = so.profile;
		return cmd_send(so);
	}
	if (cmd == "recv")
		return cmd_recv(ro);
	if (cmd == "profiles") {
		if (so.profile_file.empty())
			fatal(kExitUsage, "profiles needs --profile-file FILE");
		try {
			for (const auto &p : load_profiles(so.profile_file))
				printf("%-16s bytes=%" PRIu64 " compute_us=%" PRIu64
				       " buckets=%u gap_us=%" PRIu64 " cycle=%zu async=%d conns=%u bulk=%d\n",
				       p.name.c_str(), p.bytes, p.compute_us, p.buckets, p.bucket_gap_us,
				       p.bytes_cycle.size(), p.async, p.conns, p.bulk);
		} catch (const ProfileError &e) {
			fatal(kExitUsage, e.what());
		}
		return 0;
	}
	fprintf(stderr, "mltcp-emu: unknown command '%s' (send, recv, profiles; see --help)\n",
		cmd.c_str());
	return kExitUsage;
}
