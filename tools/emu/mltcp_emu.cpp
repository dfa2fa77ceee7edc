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
// `send` differs from a real all-reduce: the K connections of a job all go to
// one receiver instead of forming a ring among K workers; on a single
// bottleneck that is the same traffic pattern.  `ring` is the real thing: K
// processes (one per worker, e.g. in separate namespaces) run a ring
// all-reduce with its data dependencies (ring.h); each writes the same CSV.
#include <arpa/inet.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <climits>
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
#include "ring.h"
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

enum class ReadResult { kOk, kClosed, kTimeout };

int ms_until(uint64_t deadline_us)
{
	uint64_t t = now_us();
	return t >= deadline_us ? 0 : (int)std::min<uint64_t>((deadline_us - t + 999) / 1000, INT_MAX);
}

// Reads exactly n bytes from a non-blocking fd.  kTimeout when the data
// stops for idle_ms or the deadline passes, kClosed on EOF or an error.
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

// Reads exactly n bytes; false on EOF before n; a peer silent for
// kIoTimeoutMs is fatal.
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

// `what` names the option in error messages ("--dst", "--peers entry").
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

// The iteration schedule every job kind shares: compute (for an async,
// Dorylus-like profile overlapped with the previous communication phase, so
// only its remainder waits), then communicate(i, bytes), one record each.
template <typename Communicate>
std::vector<IterRecord> run_schedule(const Profile &p, uint64_t iterations, uint64_t t_start,
				     Communicate communicate)
{
	std::vector<IterRecord> recs;
	uint64_t prev_end = t_start, prev_comm_start = 0;
	for (uint64_t i = 0; i < iterations; i++) {
		IterRecord r{};
		r.bytes = iteration_bytes(p, i);
		r.start = prev_end;
		uint64_t compute_from = (p.async && i > 0) ? prev_comm_start : r.start;
		sleep_until_us(compute_from + p.compute_us);
		r.comm_start = now_us();
		communicate(i, r.bytes);
		r.comm_end = r.end = now_us();
		prev_end = r.end;
		prev_comm_start = r.comm_start;
		recs.push_back(r);
	}
	return recs;
}

std::vector<IterRecord> run_iterations(const Profile &p, const SendOptions &o,
				       const std::vector<int> &fds, uint64_t t_start)
{
	return run_schedule(p, o.iterations, t_start, [&](uint64_t i, uint64_t bytes) {
		if (o.hints)
			for (uint32_t c = 0; c < fds.size(); c++)
				hint_iteration(fds[c], split_share(bytes, p.conns, c));
		for (uint32_t b = 0; b < p.buckets; b++) {
			uint64_t bucket = split_share(bytes, p.buckets, b);
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
			uint64_t got = 0, want = split_share(bytes, p.conns, c);
			if (!read_full(fds[c], &got, sizeof(got)))
				fatal(kExitNet, "receiver closed the connection during iteration " +
							std::to_string(i));
			if (got != want)
				fatal(kExitNet, "receiver confirmed " + std::to_string(got) +
							" bytes, sent " + std::to_string(want));
		}
	});
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

// `extra_json` (",\"key\":value..." or empty) is appended to the summary.
void write_outputs(const SendOptions &o, const Profile &p, const std::vector<IterRecord> &recs,
		   uint64_t t0, uint64_t bulk_bytes, const std::string &extra_json = "")
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
	   << ",\"hints\":" << (o.hints ? "true" : "false") << extra_json << "}\n";
	if (!o.json.empty()) {
		std::ofstream f(o.json);
		f << js.str();
		if (!f)
			fatal(kExitUsage, "cannot write --json " + o.json);
	} else {
		fputs(js.str().c_str(), stdout);
	}
}

// Checks shared by send and ring: --hints support, the profile, the job name.
Profile load_job_profile(const SendOptions &o)
{
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
	return p;
}

int cmd_send(const SendOptions &o)
{
	if (o.dst.empty() || o.profile_file.empty() || o.profile.empty())
		fatal(kExitUsage, "send needs --dst, --profile-file and --profile (see --help)");
	Profile p = load_job_profile(o);
	sockaddr_in dst = parse_endpoint(o.dst, "--dst");

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

// One job's received bytes per time bin: bin_start_us,bytes.
bool write_bins(const std::string &path, const std::vector<uint64_t> &bins, uint64_t bin_us)
{
	FILE *f = fopen(path.c_str(), "w");
	if (!f) {
		fprintf(stderr, "mltcp-emu: cannot write %s: %s\n", path.c_str(), strerror(errno));
		return false;
	}
	fprintf(f, "bin_start_us,bytes\n");
	for (size_t i = 0; i < bins.size(); i++)
		fprintf(f, "%" PRIu64 ",%" PRIu64 "\n", (uint64_t)i * bin_us, bins[i]);
	return fclose(f) == 0;
}

void write_rx_logs(const RecvOptions &o)
{
	if (o.log_dir.empty())
		return;
	std::lock_guard<std::mutex> lk(g_bins_mu);
	for (const auto &[job, bins] : g_bins)
		write_bins(o.log_dir + "/rx-" + job + ".csv", bins, o.bin_us);
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

// ---------------------------------------------------------------- ring

struct RingOptions {
	uint64_t rank = 0;
	bool rank_given = false;
	std::string peers;			// IP:PORT of every rank, in ring order
	std::string bind;			// empty: this rank's address in peers
	uint64_t connect_timeout_s = 10;	// ranks may start in any order
	uint64_t io_timeout_s = 60;		// a step stuck this long is a failure
	std::string rx_log;
	uint64_t bin_us = kDefaultBinUs;
};

// The payload pattern: a prime period, so a block that arrives at the wrong
// offset never matches by alignment.
constexpr uint64_t kPatternPeriod = 65521;

// kPatternPeriod pseudo-random bytes stored twice: any slice of up to
// kPatternPeriod bytes starting in the first copy is contiguous.
const std::vector<char> &payload_pattern()
{
	static const std::vector<char> pattern = [] {
		std::vector<char> v(2 * kPatternPeriod);
		uint64_t x = 0x6d6c7463702d656dULL;	// any non-zero seed
		for (size_t i = 0; i < kPatternPeriod; i++) {
			x ^= x << 13;	// xorshift64
			x ^= x >> 7;
			x ^= x << 17;
			v[i] = v[i + kPatternPeriod] = (char)(x >> 56);
		}
		return v;
	}();
	return pattern;
}

struct RingPeer {
	sockaddr_in addr;
	std::string text;	// as given, for messages
};

std::vector<RingPeer> parse_peers(const std::string &list)
{
	std::vector<RingPeer> peers;
	std::stringstream ss(list);
	std::string item;
	while (std::getline(ss, item, ','))
		peers.push_back({parse_endpoint(item, "--peers entry"), item});
	if (list.empty() || list.back() == ',' || peers.size() < kMinRingRanks ||
	    peers.size() > kMaxRingRanks)
		fatal(kExitUsage, "--peers '" + list + "' must list " + std::to_string(kMinRingRanks) +
					  " to " + std::to_string(kMaxRingRanks) +
					  " IPV4:PORT entries, comma-separated, in ring order");
	for (size_t i = 0; i < peers.size(); i++)
		for (size_t j = 0; j < i; j++)
			if (peers[i].addr.sin_addr.s_addr == peers[j].addr.sin_addr.s_addr &&
			    peers[i].addr.sin_port == peers[j].addr.sin_port)
				fatal(kExitUsage, "--peers: ranks " + std::to_string(j) + " and " +
							  std::to_string(i) + " both listen on " + peers[i].text);
	return peers;
}

// Profiles the ring can run: iterations (not bulk), one connection to each
// neighbour, and at least one byte per chunk of every bucket.
void check_ring_profile(const Profile &p, uint32_t ranks)
{
	if (p.bulk)
		fatal(kExitUsage, "ring: profile '" + p.name + "' is bulk=1; a ring runs iterations");
	if (p.conns != 1)
		fatal(kExitUsage, "ring: profile '" + p.name + "' has conns=" + std::to_string(p.conns) +
					  "; a ring uses one connection to each neighbour (conns=1)");
	for (uint64_t i = 0; i < p.bytes_cycle.size(); i++)
		if (iteration_bytes(p, i) / p.buckets < ranks)
			fatal(kExitUsage, "ring: profile '" + p.name + "': a bucket of iteration " +
						  std::to_string(i) + " is smaller than the " +
						  std::to_string(ranks) + " chunks of the ring");
}

// One worker's view of the ring: its two connections and, for messages, who
// is on the other end.
struct RingLinks {
	uint32_t ranks = 0, rank = 0;
	int next_fd = -1, prev_fd = -1;
	std::string self, next, prev;	// "rank 1 (10.199.0.51:5002)"
	std::string job;
	bool log_rx = false;
	uint64_t bytes_sent = 0, bytes_received = 0;
};

std::string rank_name(uint32_t rank, const std::vector<RingPeer> &peers)
{
	return "rank " + std::to_string(rank) + " (" + peers[rank].text + ")";
}

// Reads exactly n bytes from a non-blocking fd before the deadline.
ReadResult read_until(int fd, void *buf, size_t n, uint64_t deadline_us)
{
	return read_exact(fd, buf, n, deadline_us, INT_MAX);
}

// Each step ends with a partial segment that the next step waits for: with
// Nagle it would sit until the receiver's delayed ACK (40 ms).  NCCL's socket
// transport sets TCP_NODELAY too.
void set_nodelay(int fd)
{
	int one = 1;
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		fatal(kExitNet, std::string("setsockopt TCP_NODELAY: ") + strerror(errno));
}

bool retry_connect_after(int err)
{
	// The neighbour's process or namespace may not be up yet.
	return err == ECONNREFUSED || err == ETIMEDOUT || err == ENETUNREACH ||
	       err == EHOSTUNREACH || err == ECONNRESET || err == EINTR || err == EAGAIN;
}

// Connects to the next rank, retrying until the deadline: ranks start in any
// order.  The connect itself is non-blocking, so an address that never
// answers cannot hold us past the deadline either.
int connect_next(const RingLinks &l, const sockaddr_in &dst, const std::string &cc,
		 uint64_t deadline_us, uint64_t timeout_s)
{
	for (;;) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			fatal(kExitNet, std::string("socket: ") + strerror(errno));
		if (!cc.empty())
			set_congestion(fd, cc);
		set_nodelay(fd);
		set_nonblocking(fd);
		int err = 0;
		if (connect(fd, (const sockaddr *)&dst, sizeof(dst)) == 0)
			return fd;
		err = errno;
		if (err == EINPROGRESS) {
			if (wait_fd(fd, POLLOUT, ms_until(deadline_us))) {
				socklen_t len = sizeof(err);
				if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
					err = errno;
				if (err == 0)
					return fd;
			} else {
				err = ETIMEDOUT;
			}
		}
		close(fd);
		if (!retry_connect_after(err) || now_us() >= deadline_us)
			fatal(kExitNet, l.self + ": cannot connect to the next " + l.next + " within " +
						std::to_string(timeout_s) + " s: " + strerror(err) +
						" (is 'mltcp-emu ring --rank " +
						std::to_string(ring_next(l.ranks, l.rank)) + "' running there?)");
		usleep((useconds_t)std::min<uint64_t>(50000, deadline_us - now_us()));
	}
}

emu_ring_hello make_hello(const RingLinks &l)
{
	emu_ring_hello h{kRingHelloMagic, l.rank, l.ranks, 0, {}};
	snprintf(h.job, sizeof(h.job), "%s", l.job.c_str());
	return h;
}

// A neighbour that runs a different job, ring size or rank order is a
// configuration error of the ranks' command lines.
void check_hello(const RingLinks &l, emu_ring_hello h, uint32_t want_rank, const std::string &who)
{
	h.job[kJobNameMax - 1] = '\0';
	std::string from = l.self + ": the " + who;
	if (h.ranks != l.ranks)
		fatal(kExitUsage, from + " is in a ring of " + std::to_string(h.ranks) + ", this rank in one of " +
					  std::to_string(l.ranks) + ": every rank needs the same --peers");
	if (h.rank != want_rank)
		fatal(kExitUsage, from + " says it is rank " + std::to_string(h.rank) +
					  ": every rank needs the same --peers, in the same order");
	if (l.job != h.job)
		fatal(kExitUsage, from + " runs job '" + h.job + "', this rank job '" + l.job +
					  "': every rank needs the same --job");
}

// Accepts the previous rank before the deadline.  A connection that does not
// start with a ring hello (a stray client) is dropped, not fatal.
int accept_prev(const RingLinks &l, int ls, uint64_t deadline_us, uint64_t timeout_s)
{
	for (;;) {
		if (!wait_fd(ls, POLLIN, ms_until(deadline_us)))
			fatal(kExitNet, l.self + ": the previous " + l.prev + " did not connect within " +
						std::to_string(timeout_s) + " s (is 'mltcp-emu ring --rank " +
						std::to_string(ring_prev(l.ranks, l.rank)) + "' running there?)");
		int fd = accept(ls, nullptr, nullptr);
		if (fd < 0)
			continue;
		set_nodelay(fd);
		set_nonblocking(fd);
		emu_ring_hello h{};
		if (read_until(fd, &h, sizeof(h), deadline_us) != ReadResult::kOk ||
		    h.magic != kRingHelloMagic) {
			close(fd);
			continue;
		}
		check_hello(l, h, ring_prev(l.ranks, l.rank), "previous " + l.prev);
		return fd;
	}
}

int listen_on(const RingLinks &l, const sockaddr_in &addr, const std::string &text)
{
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ls < 0 || bind(ls, (const sockaddr *)&addr, sizeof(addr)) || listen(ls, 16))
		fatal(kExitNet, l.self + ": listen on " + text + ": " + strerror(errno) +
					" (is that address configured here?)");
	set_nonblocking(ls);
	return ls;
}

// Sets up both connections.  Every rank listens first, then connects to the
// next (which only needs the next to listen), then accepts the previous and
// answers its hello, then reads the next's answer: no rank waits for
// another's accept, so any start order works.
void ring_connect(RingLinks &l, const std::vector<RingPeer> &peers, const RingOptions &o,
		  const std::string &cc)
{
	sockaddr_in self = peers[l.rank].addr;
	std::string self_text = peers[l.rank].text;
	if (!o.bind.empty()) {
		if (inet_pton(AF_INET, o.bind.c_str(), &self.sin_addr) != 1)
			fatal(kExitUsage, "--bind '" + o.bind + "' is not an IPv4 address");
		self_text = o.bind + ":" + std::to_string(ntohs(self.sin_port));
	}
	uint64_t deadline = now_us() + o.connect_timeout_s * 1000000;
	int ls = listen_on(l, self, self_text);
	l.next_fd = connect_next(l, peers[ring_next(l.ranks, l.rank)].addr, cc, deadline,
				 o.connect_timeout_s);
	emu_ring_hello mine = make_hello(l);
	if (!write_full(l.next_fd, &mine, sizeof(mine)))
		fatal(kExitNet, l.self + ": the next " + l.next + " closed the connection during setup");
	l.prev_fd = accept_prev(l, ls, deadline, o.connect_timeout_s);
	close(ls);
	if (!write_full(l.prev_fd, &mine, sizeof(mine)))
		fatal(kExitNet, l.self + ": the previous " + l.prev + " closed the connection during setup");
	emu_ring_hello answer{};
	switch (read_until(l.next_fd, &answer, sizeof(answer), deadline)) {
	case ReadResult::kOk:
		break;
	case ReadResult::kClosed:
		fatal(kExitNet, l.self + ": the next " + l.next +
					" closed the connection during setup (is it an 'mltcp-emu ring' rank?)");
	case ReadResult::kTimeout:
		fatal(kExitNet, l.self + ": no answer from the next " + l.next + " within " +
					std::to_string(o.connect_timeout_s) + " s");
	}
	if (answer.magic != kRingHelloMagic)
		fatal(kExitNet, l.self + ": the next " + l.next + " is not an 'mltcp-emu ring' rank");
	check_hello(l, answer, ring_next(l.ranks, l.rank), "next " + l.next);
}

// The next rank never sends after setup: readable means it went away.
void check_next_alive(const RingLinks &l)
{
	char c;
	ssize_t r = recv(l.next_fd, &c, 1, 0);
	if (r == 0)
		fatal(kExitNet, l.self + ": the next " + l.next + " closed the connection (did it exit?)");
	if (r < 0 && errno != EAGAIN && errno != EINTR)
		fatal(kExitNet, l.self + ": connection to the next " + l.next + ": " + strerror(errno) +
					" (did it exit?)");
	if (r > 0)
		fatal(kExitNet, l.self + ": protocol error: unexpected data from the next " + l.next);
}

// What arrived must be the message the schedule says comes next.
void check_step_hdr(const RingLinks &l, const emu_ring_step_hdr &got, const emu_ring_step_hdr &want)
{
	if (got.magic != kRingStepMagic)
		fatal(kExitNet, l.self + ": protocol error: no step header from the previous " + l.prev);
	if (got.iteration != want.iteration || got.bucket != want.bucket || got.step != want.step ||
	    got.chunk != want.chunk || got.bytes != want.bytes)
		fatal(kExitUsage,
		      l.self + ": the previous " + l.prev + " sent iteration " + std::to_string(got.iteration) +
			      " bucket " + std::to_string(got.bucket) + " step " + std::to_string(got.step) +
			      " chunk " + std::to_string(got.chunk) + " of " + std::to_string(got.bytes) +
			      " bytes, expected iteration " + std::to_string(want.iteration) + " bucket " +
			      std::to_string(want.bucket) + " step " + std::to_string(want.step) + " chunk " +
			      std::to_string(want.chunk) + " of " + std::to_string(want.bytes) +
			      " bytes: do all ranks use the same profile file, profile and --peers?");
}

// One step: sends this rank's chunk to the next rank while receiving the
// previous rank's chunk (both at once, or K ranks that all send first would
// deadlock on full socket buffers); returns when both are complete, so the
// next step can forward what arrived.  Every received byte is checked against
// the pattern.  In the run's last step the next rank may finish and close as
// soon as it has our chunk: its EOF is then no failure.
void ring_exchange(RingLinks &l, const emu_ring_step_hdr &out, const emu_ring_step_hdr &want,
		   bool last_step, int stall_ms)
{
	const std::vector<char> &pattern = payload_pattern();
	static std::vector<char> buf(kPatternPeriod);
	uint64_t out_off = ring_pattern_offset(out.iteration, out.bucket, out.step, kPatternPeriod);
	uint64_t in_off = ring_pattern_offset(want.iteration, want.bucket, want.step, kPatternPeriod);
	emu_ring_step_hdr in{};
	size_t hdr_sent = 0, hdr_got = 0;
	uint64_t sent = 0, got = 0;
	auto out_pending = [&] { return hdr_sent < sizeof(out) || sent < out.bytes; };
	auto in_pending = [&] { return hdr_got < sizeof(in) || got < in.bytes; };
	while (out_pending() || in_pending()) {
		while (out_pending()) {
			const char *p = (const char *)&out + hdr_sent;
			size_t n = sizeof(out) - hdr_sent;
			int flags = MSG_NOSIGNAL | MSG_MORE;	// the header rides with the payload
			if (!n) {
				p = pattern.data() + (out_off + sent) % kPatternPeriod;
				n = (size_t)std::min<uint64_t>(out.bytes - sent, kPatternPeriod);
				flags = MSG_NOSIGNAL;
			}
			ssize_t r = send(l.next_fd, p, n, flags);
			if (r < 0 && (errno == EAGAIN || errno == EINTR))
				break;
			if (r < 0)
				fatal(kExitNet, l.self + ": send to the next " + l.next + ": " +
							strerror(errno) + " (did it exit?)");
			if (hdr_sent < sizeof(out))
				hdr_sent += (size_t)r;
			else
				sent += (uint64_t)r;
		}
		while (in_pending()) {
			char *p = (char *)&in + hdr_got;
			size_t n = sizeof(in) - hdr_got;
			if (!n) {
				p = buf.data();
				n = (size_t)std::min<uint64_t>(in.bytes - got, kPatternPeriod);
			}
			ssize_t r = recv(l.prev_fd, p, n, 0);
			if (r < 0 && (errno == EAGAIN || errno == EINTR))
				break;
			if (r == 0)
				fatal(kExitNet, l.self + ": the previous " + l.prev +
							" closed the connection in iteration " +
							std::to_string(want.iteration) + " (did it exit?)");
			if (r < 0)
				fatal(kExitNet, l.self + ": receive from the previous " + l.prev + ": " +
							strerror(errno) + " (did it exit?)");
			if (hdr_got < sizeof(in)) {
				hdr_got += (size_t)r;
				if (hdr_got == sizeof(in))
					check_step_hdr(l, in, want);
				continue;
			}
			if (memcmp(p, pattern.data() + (in_off + got) % kPatternPeriod, (size_t)r))
				fatal(kExitNet, l.self + ": corrupt payload from the previous " + l.prev +
							" in iteration " + std::to_string(want.iteration) +
							" step " + std::to_string(want.step) + " at byte " +
							std::to_string(got));
			got += (uint64_t)r;
			if (l.log_rx)
				account(l.job, (uint64_t)r);
		}
		if (!out_pending() && !in_pending())
			break;
		bool watch_next = out_pending() || !last_step;
		pollfd p[2] = {{l.next_fd, (short)(watch_next ? POLLIN : 0), 0},
			       {l.prev_fd, (short)(in_pending() ? POLLIN : 0), 0}};
		if (out_pending())
			p[0].events |= POLLOUT;
		int r = poll(p, 2, stall_ms);
		if (r < 0 && errno != EINTR)
			fatal(kExitNet, std::string("poll: ") + strerror(errno));
		if (r == 0)
			fatal(kExitNet, l.self + ": no progress for " + std::to_string(stall_ms / 1000) +
						" s in iteration " + std::to_string(want.iteration) + " step " +
						std::to_string(want.step) + ", waiting for " +
						(in_pending() ? "data from the previous " + l.prev
							      : "the next " + l.next + " to take data") +
						" (stopped, or its network down?)");
		if (watch_next && (p[0].revents & (POLLIN | POLLERR | POLLHUP)))
			check_next_alive(l);
	}
	l.bytes_sent += out.bytes;
	l.bytes_received += in.bytes;
}

// One all-reduce of `bytes` (one bucket of one iteration).
void ring_allreduce(RingLinks &l, uint64_t iteration, uint32_t bucket, uint64_t bytes,
		    bool last_of_run, int stall_ms)
{
	uint32_t steps = ring_steps(l.ranks);
	for (uint32_t t = 0; t < steps; t++) {
		RingStep s = ring_step(l.ranks, l.rank, t);
		emu_ring_step_hdr out{iteration, split_share(bytes, l.ranks, s.send_chunk), bucket, t,
				      s.send_chunk, kRingStepMagic};
		emu_ring_step_hdr want{iteration, split_share(bytes, l.ranks, s.recv_chunk), bucket, t,
				       s.recv_chunk, kRingStepMagic};
		ring_exchange(l, out, want, last_of_run && t + 1 == steps, stall_ms);
	}
}

std::vector<IterRecord> run_ring_iterations(const Profile &p, const SendOptions &o, RingLinks &l,
					    uint64_t t_start, int stall_ms)
{
	return run_schedule(p, o.iterations, t_start, [&](uint64_t i, uint64_t bytes) {
		if (o.hints) {
			uint64_t mine = 0;
			for (uint32_t b = 0; b < p.buckets; b++)
				mine += ring_bytes_sent(split_share(bytes, p.buckets, b), l.ranks, l.rank);
			hint_iteration(l.next_fd, mine);
		}
		for (uint32_t b = 0; b < p.buckets; b++) {
			bool last = i + 1 == o.iterations && b + 1 == p.buckets;
			ring_allreduce(l, i, b, split_share(bytes, p.buckets, b), last, stall_ms);
			if (b + 1 < p.buckets && p.bucket_gap_us)
				sleep_until_us(now_us() + p.bucket_gap_us);
		}
	});
}

// Fails with exit 3 before any connection if the congestion control is
// missing, whatever the neighbours are doing.
void check_congestion(const std::string &cc)
{
	if (cc.empty())
		return;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		fatal(kExitNet, std::string("socket: ") + strerror(errno));
	set_congestion(fd, cc);
	close(fd);
}

int cmd_ring(const SendOptions &o, const RingOptions &ro)
{
	if (!ro.rank_given || ro.peers.empty() || o.profile_file.empty() || o.profile.empty())
		fatal(kExitUsage, "ring needs --rank, --peers, --profile-file and --profile (see --help)");
	if (!o.dst.empty())
		fatal(kExitUsage, "ring takes --peers (every rank's IP:PORT), not --dst");
	if (ro.connect_timeout_s == 0 || ro.io_timeout_s == 0)
		fatal(kExitUsage, "--connect-timeout-s and --io-timeout-s must be at least 1");
	Profile p = load_job_profile(o);
	std::vector<RingPeer> peers = parse_peers(ro.peers);
	if (ro.rank >= peers.size())
		fatal(kExitUsage, "--rank " + std::to_string(ro.rank) + " is not in --peers (ranks 0.." +
					  std::to_string(peers.size() - 1) + ")");
	check_ring_profile(p, (uint32_t)peers.size());
	check_congestion(o.cc);

	RingLinks l;
	l.ranks = (uint32_t)peers.size();
	l.rank = (uint32_t)ro.rank;
	l.self = "ring " + rank_name(l.rank, peers);
	l.next = rank_name(ring_next(l.ranks, l.rank), peers);
	l.prev = rank_name(ring_prev(l.ranks, l.rank), peers);
	l.job = o.job;
	ring_connect(l, peers, ro, o.cc);

	uint64_t t_start = (o.start_at_us ? o.start_at_us : now_us()) + o.offset_us;
	uint64_t t0 = o.t0_us ? o.t0_us : t_start;
	g_t0_us = t0;
	g_bin_us = ro.bin_us ? ro.bin_us : kDefaultBinUs;
	l.log_rx = !ro.rx_log.empty();
	// A neighbour may be a compute phase behind: only a stall beyond that fails.
	int stall_ms = (int)(ro.io_timeout_s * 1000 + (p.compute_us + p.buckets * p.bucket_gap_us) / 1000);
	sleep_until_us(t_start);
	std::vector<IterRecord> recs = run_ring_iterations(p, o, l, t_start, stall_ms);
	close(l.next_fd);
	close(l.prev_fd);
	if (l.log_rx && !write_bins(ro.rx_log, g_bins[l.job], g_bin_us))
		fatal(kExitUsage, "cannot write --rx-log " + ro.rx_log);
	std::ostringstream extra;
	extra << ",\"mode\":\"ring\",\"rank\":" << l.rank << ",\"ranks\":" << l.ranks
	      << ",\"bytes_sent\":" << l.bytes_sent << ",\"bytes_received\":" << l.bytes_received;
	write_outputs(o, p, recs, t0, 0, extra.str());
	return 0;
}

// ---------------------------------------------------------------- CLI

void usage(FILE *f)
{
	fprintf(f,
		"usage: mltcp-emu send --dst IP:PORT --profile-file FILE --profile NAME [options]\n"
		"       mltcp-emu recv [--port P] [--port-file F] [--log-dir D] [options]\n"
		"       mltcp-emu ring --rank I --peers IP:PORT,IP:PORT,... --profile-file FILE\n"
		"                      --profile NAME [options]\n"
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
		"ring: one worker of a job whose K workers (K = entries in --peers, 2..64) run\n"
		"a ring all-reduce, one process per worker (e.g. in separate namespaces).\n"
		"Rank I listens on the I-th --peers address and connects to rank I+1 (mod K).\n"
		"Per iteration: compute, then all-reduce the iteration's bytes (each bucket\n"
		"separately): 2(K-1) steps; in each the rank sends a chunk of bytes/K to the\n"
		"next rank and receives one from the previous, and the next step waits for\n"
		"both. Every received byte is checked. Takes send's options except --dst and\n"
		"--bulk-seconds; the profile needs conns=1 and no bulk. The CSV is send's\n"
		"(bytes = the buffer all-reduced); the JSON adds rank, ranks, bytes_sent and\n"
		"bytes_received (payload bytes on the wire).\n"
		"  --rank I              this worker's position in --peers (0-based)\n"
		"  --peers LIST          IP:PORT of every rank, comma-separated, in ring order\n"
		"  --bind IP             listen address (default: this rank's --peers address)\n"
		"  --connect-timeout-s S ranks may start in any order; fail if the ring is not\n"
		"                        connected after S seconds (default 10)\n"
		"  --io-timeout-s S      fail if a step makes no progress for S seconds beyond\n"
		"                        a compute phase (default 60)\n"
		"  --rx-log FILE         on exit write received payload bytes per time bin\n"
		"                        (bin_start_us,bytes; origin --t0-us, width --bin-us)\n"
		"exit codes: 0 ok, 2 bad usage or profile file (ring: also ranks that disagree\n"
		"on job, --peers or profile), 3 congestion control not registered, 4 network\n"
		"failure (ring: a neighbour that does not come up in time, goes away or\n"
		"stalls), 5 --hints without libmltcp. hints support: %s\n",
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
	       O_RANK, O_PEERS, O_CONN_TO, O_IO_TO, O_RXLOG, O_HELP };
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
		{"rank", 1, nullptr, O_RANK}, {"peers", 1, nullptr, O_PEERS},
		{"connect-timeout-s", 1, nullptr, O_CONN_TO}, {"io-timeout-s", 1, nullptr, O_IO_TO},
		{"rx-log", 1, nullptr, O_RXLOG},
		{"help", 0, nullptr, O_HELP}, {nullptr, 0, nullptr, 0}};
	SendOptions so;
	RecvOptions ro;
	RingOptions rg;
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
		case O_BIND: ro.bind = rg.bind = a; break;
		case O_PORTF: ro.port_file = a; break;
		case O_LOG: ro.log_dir = a; break;
		case O_BIN: ro.bin_us = rg.bin_us = parse_u64_opt("--bin-us", a, 10000000); break;
		case O_DUR: ro.duration_s = parse_u64_opt("--duration-s", a, 86400); break;
		case O_RANK:
			rg.rank = parse_u64_opt("--rank", a, kMaxRingRanks - 1);
			rg.rank_given = true;
			break;
		case O_PEERS: rg.peers = a; break;
		case O_CONN_TO:
			rg.connect_timeout_s = parse_u64_opt("--connect-timeout-s", a, 3600);
			break;
		case O_IO_TO: rg.io_timeout_s = parse_u64_opt("--io-timeout-s", a, 3600); break;
		case O_RXLOG: rg.rx_log = a; break;
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
	if (cmd == "ring") {
		if (so.job.empty())
			so.job = so.profile;
		return cmd_ring(so, rg);
	}
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
	fprintf(stderr, "mltcp-emu: unknown command '%s' (send, recv, ring, profiles; see --help)\n",
		cmd.c_str());
	return kExitUsage;
}
