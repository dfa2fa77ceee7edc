// ring_worker.cpp - `mltcp-emu ring`: one worker of a job whose K workers
// run a ring all-reduce, one process per worker (e.g. in separate
// namespaces).  Rank r listens on its --peers address, connects to rank r+1
// and accepts rank r-1; per iteration: compute, then each bucket's 2(K-1)
// steps of the schedule in ring.h, every received byte checked against a
// pattern both ends derive.  Writes the same CSV and JSON as `send`.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "emu_util.h"
#include "job.h"
#include "profile.h"
#include "ring.h"
#include "rx_log.h"
#include "sockets.h"
#include "wire.h"

namespace mltcp_emu {

namespace {

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
		int fd = tcp_socket(cc);
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
		if (!retry_connect_after(err) || realtime_us() >= deadline_us)
			fatal(kExitNet, l.self + ": cannot connect to the next " + l.next + " within " +
						std::to_string(timeout_s) + " s: " + strerror(err) +
						" (is 'mltcp-emu ring --rank " +
						std::to_string(ring_next(l.ranks, l.rank)) + "' running there?)");
		usleep((useconds_t)std::min<uint64_t>(50000, deadline_us - realtime_us()));
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
	uint64_t deadline = realtime_us() + o.connect_timeout_s * 1000000;
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
				rx_log_account(l.job, (uint64_t)r);
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
	// This rank sends on next_fd only (prev_fd is the previous rank's sender).
	return run_schedule(p, o.iterations, t_start, {l.next_fd}, [&](uint64_t i, uint64_t bytes) {
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
				sleep_until_us(realtime_us() + p.bucket_gap_us);
		}
	});
}

}  // namespace

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

	uint64_t t_start = (o.start_at_us ? o.start_at_us : realtime_us()) + o.offset_us;
	uint64_t t0 = o.t0_us ? o.t0_us : t_start;
	rx_log_start(t0, ro.bin_us);
	l.log_rx = !ro.rx_log.empty();
	// A neighbour may be a compute phase behind: only a stall beyond that fails.
	int stall_ms = (int)(ro.io_timeout_s * 1000 + (p.compute_us + p.buckets * p.bucket_gap_us) / 1000);
	sleep_until_us(t_start);
	std::vector<IterRecord> recs = run_ring_iterations(p, o, l, t_start, stall_ms);
	close(l.next_fd);
	close(l.prev_fd);
	if (l.log_rx && !rx_log_write(ro.rx_log, l.job))
		fatal(kExitUsage, "cannot write --rx-log " + ro.rx_log);
	std::ostringstream extra;
	extra << ",\"mode\":\"ring\",\"rank\":" << l.rank << ",\"ranks\":" << l.ranks
	      << ",\"bytes_sent\":" << l.bytes_sent << ",\"bytes_received\":" << l.bytes_received;
	write_outputs(o, p, recs, t0, 0, extra.str());
	return 0;
}

}  // namespace mltcp_emu
