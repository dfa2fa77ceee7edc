// send.cpp - `mltcp-emu send`: one training job over `conns` connections to
// one receiver.  Per iteration: compute, send the iteration's bytes (in
// buckets, each split over the connections equally or striped NCCL-style,
// stripe.h; all connections progressing together), wait for the receiver's
// confirmation of every byte.  A bulk=1 profile streams instead.
//
// This differs from a real all-reduce: the K connections of a job all go to
// one receiver instead of forming a ring among K workers; on a single
// bottleneck that is the same traffic pattern (ring_worker.cpp is the ring).
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "commands.h"
#include "emu_util.h"
#include "job.h"
#include "profile.h"
#include "sockets.h"
#include "stripe.h"
#include "wire.h"

namespace mltcp_emu {

namespace {

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

std::vector<IterRecord> run_iterations(const Profile &p, const SendOptions &o,
				       const std::vector<int> &fds, uint64_t t_start)
{
	return run_schedule(p, o.iterations, t_start, fds, [&](uint64_t i, uint64_t bytes) {
		if (o.hints)
			for (uint32_t c = 0; c < fds.size(); c++)
				if (uint64_t mine = iteration_share(p, bytes, c))
					hint_iteration(fds[c], mine);
		for (uint32_t b = 0; b < p.buckets; b++) {
			uint64_t bucket = split_share(bytes, p.buckets, b);
			std::vector<Outgoing> out;
			for (uint32_t c = 0; c < fds.size(); c++) {
				uint64_t share = message_share(p, bucket, c);
				uint32_t fl = (b + 1 == p.buckets) ? (uint32_t)EMU_MSG_CONFIRM : 0u;
				out.push_back({fds[c], {share, fl, kMsgMagic}, sizeof(emu_msg_hdr), share});
			}
			send_parallel(out);
			if (b + 1 < p.buckets && p.bucket_gap_us)
				sleep_until_us(realtime_us() + p.bucket_gap_us);
		}
		for (uint32_t c = 0; c < fds.size(); c++) {
			uint64_t got = 0, want = iteration_share(p, bytes, c);
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
	while (realtime_us() < deadline) {
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

}  // namespace

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
	uint64_t t_start = (o.start_at_us ? o.start_at_us : realtime_us()) + o.offset_us;
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

}  // namespace mltcp_emu
