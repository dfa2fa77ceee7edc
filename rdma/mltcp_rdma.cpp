// mltcp_rdma.cpp - mltcp-rdma: bulk transfers and training-job emulation
// over RC queue pairs, paced at the rate of the core's DCQCN reaction point
// (dcqcn or mltcp_dcqcn) or at a fixed rate.
//
//   mltcp-rdma devices
//   mltcp-rdma server --bind IP [--port P]
//   mltcp-rdma client --host IP [--port P] --bytes N          (one transfer)
//   mltcp-rdma client --host IP --iterations K --iter-bytes B --compute-ms C
//                     --job NAME --csv FILE                    (job emulator)
//   mltcp-rdma observe --iface IF --pin DIR                    (tc observer)
//   mltcp-rdma icrc-check --pcap FILE [--dump N]   (ICRCs of captured RoCEv2)
//
// Wire protocol: data SENDs of --msg bytes; the last SEND of an iteration
// carries an immediate (iteration + 1); the receiver answers each one with a
// 24-byte SEND {iteration, bytes so far, checksum so far}, which ends the
// iteration's communication phase (as an all-reduce completes); a 0-byte
// SEND with immediate kBye ends the session.  The payload is a
// deterministic pattern, so both sides compute the same checksum and any
// lost or corrupted byte shows.
//
// The job emulator's CSV is the workload library's (workload/iteration.h):
// job,iteration,bytes,start_us,comm_start_us,comm_end_us,end_us, with times
// in microseconds of CLOCK_REALTIME relative to --t0-us, and the loss
// counters (rto,recoveries,tlp,undo,spurious_rto,window_repairs), which stay
// empty here.
#include <arpa/inet.h>
#include <getopt.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "iteration.h"
#include "mltcp_options.hpp"
#include "qp_control.h"
#include "roce_observer.h"
#include "roce_wire.h"
#include "verbs.h"

using namespace mltcp_rdma;

namespace {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;
constexpr int kExitRdma = 3;	// device / connection problem
constexpr int kExitData = 4;	// peer gone, checksum mismatch, timeout
constexpr uint32_t kBye = 0xffffffffu;
constexpr uint64_t kSendFlag = 1ULL << 63;
constexpr int64_t kMaxWaitNs = 2000000;	// recheck CNPs/disconnects every 2 ms
constexpr uint64_t kReplyBytes = 24;
constexpr uint64_t kBurstMsgs = 2;	// pacer bucket size, in messages

struct Reply {
	uint64_t iter, bytes, checksum;
};

uint64_t now_ns()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t mono_us() { return now_ns() / 1000; }

uint64_t real_us()
{
	timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

// The payload word at word index i of the stream (splitmix64).
uint64_t pattern_word(uint64_t i)
{
	uint64_t z = i + 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

// Order-dependent checksum of a byte stream fed in multiples of 8 bytes.
struct Checksum {
	uint64_t h = 0xcbf29ce484222325ULL;
	void Add(const uint8_t *p, size_t n)
	{
		for (size_t i = 0; i + 8 <= n; i += 8) {
			uint64_t w;
			memcpy(&w, p + i, 8);
			h = (h ^ w) * 0x100000001b3ULL;
			h ^= h >> 29;
		}
	}
};

[[noreturn]] void fatal(int code, const std::string &msg)
{
	fprintf(stderr, "mltcp-rdma: %s\n", msg.c_str());
	exit(code);
}

uint64_t parse_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi)
{
	char *end = nullptr;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (!*s || *end || errno || s[0] == '-' || v < lo || v > hi)
		fatal(kExitUsage, std::string(opt) + ": '" + s + "' is not an integer in " +
					  std::to_string(lo) + ".." + std::to_string(hi));
	return v;
}

struct Options {
	std::string mode;
	std::string host, src, bind = "0.0.0.0", dev, job = "job0", csv;
	uint16_t port = 7471;
	uint64_t bytes = 0;		// single transfer
	uint64_t iterations = 0, iter_bytes = 0, compute_ms = 0, offset_ms = 0;
	uint64_t t0_us = 0;
	uint64_t start_us = 0;		// CLOCK_REALTIME start (after connecting)
	std::string control = "fixed";
	uint64_t rate_mbps = 0;		// fixed control rate; 0 = unpaced line
	uint64_t line_mbps = 100;	// DCQCN line rate
	uint64_t rai_mbps = 0, rhai_mbps = 0;	// 0: line/50, line/10
	uint64_t min_mbps = 0;			// 0: line/100
	uint32_t rate_timer_us = 1000, byte_counter = 0;
	uint32_t fr_stages = (uint32_t)mltcp::dcqcn_spec::fr_stages.def;
	bool hints = false;
	std::string cnp_map;		// pinned BPF map: QPN -> CNPs received
	std::string ce_map;		// pinned BPF map: QPN -> CE marks (server)
	uint32_t cnp_interval_us = 1000;
	std::string iface, pin_dir;	// observe
	std::string pcap;		// icrc-check
	uint64_t dump = 0;
	bool detach = false, stats = false;
	QpConfig qp;
	mltcp_params mltcp = MLTCP_PARAMS_INIT;	// --<name> rows of the core's table
	int idle_timeout_s = 30;
	bool verbose = false;
};

// ------------------------------------------------------------------ server

int run_server(const Options &o)
{
	Listener l(o.bind, o.port, o.qp);
	printf("SERVER listening %s:%u\n", o.bind.c_str(), o.port);
	fflush(stdout);
	std::unique_ptr<Conn> c(l.Accept(o.idle_timeout_s * 1000));
	std::unique_ptr<QpCounter> ce;
	std::unique_ptr<CnpSender> np;
	if (!o.ce_map.empty()) {
		mltcp_dcqcn_params raw;
		mltcp_dcqcn_params_default(&raw);
		raw.cnp_interval_us = o.cnp_interval_us;
		ce.reset(new QpCounter(o.ce_map));
		np.reset(new CnpSender(mltcp::DcqcnParams(raw), c->local_ip(), c->peer_ip(),
				       c->remote_qpn(), ce->Read(c->qpn())));
	}
	// The notification point polls the CE counter at this period.
	const int64_t poll_ns = np ? 500000 : 100000000;
	Checksum sum;
	uint64_t bytes = 0, iters = 0, send_slot = 0, last_ns = now_ns();
	ibv_wc wc[32];
	for (;;) {
		int n = c->Poll(wc, 32, poll_ns);
		if (np)
			np->OnCeCount(ce->Read(c->qpn()), mono_us());
		if (n == 0) {
			if (c->PeerDisconnected())
				fatal(kExitData, "client disconnected mid-transfer after " +
							 std::to_string(bytes) + " bytes");
			if (now_ns() - last_ns > (uint64_t)o.idle_timeout_s * 1000000000ULL)
				fatal(kExitData, "no data from the client for " +
							 std::to_string(o.idle_timeout_s) + " s");
			continue;
		}
		last_ns = now_ns();
		for (int i = 0; i < n; i++) {
			const ibv_wc &w = wc[i];
			if (w.status != IBV_WC_SUCCESS) {
				if (c->PeerDisconnected() || w.status == IBV_WC_WR_FLUSH_ERR)
					fatal(kExitData, "client went away mid-transfer after " +
								 std::to_string(bytes) + " bytes (" + WcError(w) + ")");
				fatal(kExitData, "receive failed: " + WcError(w));
			}
			if (w.wr_id & kSendFlag)
				continue;	// our reply went out
			uint32_t slot = (uint32_t)w.wr_id;
			sum.Add(c->recv_buf(slot), w.byte_len);
			bytes += w.byte_len;
			bool imm = w.wc_flags & IBV_WC_WITH_IMM;
			uint32_t imm_data = imm ? ntohl(w.imm_data) : 0;
			c->PostRecv(slot);
			if (!imm)
				continue;
			if (imm_data == kBye) {
				printf("SERVER bytes=%" PRIu64 " iterations=%" PRIu64 " checksum=%016" PRIx64
				       " device=%s qpn=%u ce=%" PRIu64 " cnps_sent=%" PRIu64
				       " first_ce_us=%" PRIu64 " first_cnp_us=%" PRIu64 "\n",
				       bytes, iters, sum.h, c->device().c_str(), c->qpn(),
				       np ? np->ce_seen() : 0, np ? np->sent() : 0,
				       np ? np->first_ce_us() : 0, np ? np->first_cnp_us() : 0);
				return kExitOk;
			}
			Reply r{imm_data - 1ULL, bytes, sum.h};
			uint32_t s = (uint32_t)(send_slot++ % c->cfg().depth);
			memcpy(c->send_buf(s), &r, sizeof r);
			c->PostSend(s, kReplyBytes, false, 0, kSendFlag | s);
			iters++;
		}
	}
}

// ------------------------------------------------------------------ client

class Client {
 public:
	Client(const Options &o, Conn *c, QpControl *ctl) : o_(o), c_(c), ctl_(ctl)
	{
		for (uint32_t s = 0; s < c->cfg().depth; s++)
			free_.push_back(s);
		slot_len_.assign(c->cfg().depth, 0);
		if (!o.cnp_map.empty()) {
			cnp_.reset(new QpCounter(o.cnp_map));
			// QP numbers are reused: counts of an earlier QP are not ours.
			cnps_seen_ = cnp_->Read(c->qpn());
		}
	}

	// Sends `n` bytes and waits for the receiver's confirmation.
	void Phase(uint64_t n, uint32_t iter)
	{
		uint64_t left = n;
		const uint32_t msg = c_->cfg().msg_bytes;
		while (left > 0) {
			uint64_t t = now_ns();
			ReadCnps(t);
			if (free_.empty()) {
				Drain(kMaxWaitNs);
				continue;
			}
			uint32_t len = (uint32_t)std::min<uint64_t>(left, msg);
			uint64_t d = ctl_->DelayNs(len, t);
			if (d > 0 && !hw_paced_) {
				Drain((int64_t)std::min<uint64_t>(d, kMaxWaitNs));
				continue;
			}
			uint32_t s = free_.back();
			free_.pop_back();
			Fill(s, len);
			bool last = left == len;
			bool empty = free_.size() + 1 == c_->cfg().depth;
			c_->PostSend(s, len, last, iter + 1, kSendFlag | s);
			slot_len_[s] = len;
			ctl_->OnPost(len, empty, t);
			if (first_post_ns_ == 0)
				first_post_ns_ = t;
			left -= len;
			Drain(0);
			if (hw_paced_)
				UpdateHwRate();
		}
		while (!have_reply_ || reply_.iter != iter)
			Drain(kMaxWaitNs);
		have_reply_ = false;
		if (reply_.bytes != sent_ || reply_.checksum != sum_.h)
			fatal(kExitData, "iteration " + std::to_string(iter) + ": receiver has " +
						 std::to_string(reply_.bytes) + " bytes, checksum " +
						 std::to_string(reply_.checksum) + "; sent " + std::to_string(sent_) +
						 " bytes, checksum " + std::to_string(sum_.h));
	}

	void Bye()
	{
		while (free_.empty())
			Drain(kMaxWaitNs);
		uint32_t s = free_.back();
		free_.pop_back();
		slot_len_[s] = 0;
		c_->PostSend(s, 0, true, kBye, kSendFlag | s);
		while (free_.size() < c_->cfg().depth)
			Drain(kMaxWaitNs);
	}

	void TryHardwarePacing(uint64_t rate_bps)
	{
		std::string why;
		if (c_->SetRateLimit(rate_bps, &why)) {
			hw_paced_ = true;
			hw_rate_ = rate_bps;
			printf("mltcp-rdma: pacing with the device's per-QP rate limit\n");
		} else {
			printf("mltcp-rdma: device %s has no per-QP rate limit (%s): pacing work "
			       "requests in software\n", c_->device().c_str(), why.c_str());
		}
		fflush(stdout);
	}

	uint64_t sent() const { return sent_; }
	uint64_t first_post_ns() const { return first_post_ns_; }
	uint64_t last_done_ns() const { return last_done_ns_; }
	bool hw_paced() const { return hw_paced_; }
	uint64_t checksum() const { return sum_.h; }
	uint64_t first_cut_us() const { return first_cut_us_; }

 private:
	void Fill(uint32_t s, uint32_t len)
	{
		uint8_t *p = c_->send_buf(s);
		for (uint32_t i = 0; i + 8 <= len; i += 8) {
			uint64_t w = pattern_word(word_++);
			memcpy(p + i, &w, 8);
		}
		sum_.Add(p, len);
		sent_ += len;
	}

	void ReadCnps(uint64_t t)
	{
		if (!cnp_)
			return;
		uint64_t v = cnp_->Read(c_->qpn());
		if (v > cnps_seen_) {
			ctl_->OnCnps(v - cnps_seen_, t);
			if (!first_cut_us_)
				first_cut_us_ = t / 1000;
			if (o_.verbose)
				fprintf(stderr, "mltcp-rdma: %" PRIu64 " CNP(s), rate now %" PRIu64 " bit/s\n",
					v - cnps_seen_, ctl_->RateBps());
			cnps_seen_ = v;
		}
	}

	void UpdateHwRate()
	{
		uint64_t r = ctl_->RateBps();
		std::string why;
		if (r != hw_rate_ && c_->SetRateLimit(r, &why))
			hw_rate_ = r;
	}

	void Drain(int64_t timeout_ns)
	{
		ibv_wc wc[32];
		int n = c_->Poll(wc, 32, timeout_ns);
		if (n == 0 && timeout_ns > 0) {
			if (c_->PeerDisconnected())
				fatal(kExitData, "the server disconnected mid-transfer after " +
							 std::to_string(sent_) + " bytes posted");
			uint64_t t = now_ns();
			if (last_progress_ns_ && t - last_progress_ns_ >
						   (uint64_t)o_.idle_timeout_s * 1000000000ULL)
				fatal(kExitData, "no completion for " + std::to_string(o_.idle_timeout_s) +
							 " s: the peer is not answering (" +
							 std::to_string(c_->cfg().depth - free_.size()) +
							 " sends in flight, paced rate " +
							 std::to_string(ctl_->RateBps()) + " bit/s, " +
							 std::to_string(sent_) + " bytes posted)");
		}
		for (int i = 0; i < n; i++) {
			const ibv_wc &w = wc[i];
			if (w.status != IBV_WC_SUCCESS)
				fatal(kExitData, "transfer failed after " + std::to_string(sent_) +
							 " bytes posted: " + WcError(w));
			last_progress_ns_ = now_ns();
			if (w.wr_id & kSendFlag) {
				uint32_t s = (uint32_t)(w.wr_id & ~kSendFlag);
				ctl_->OnCompletion(slot_len_[s], last_progress_ns_);
				free_.push_back(s);
				last_done_ns_ = last_progress_ns_;
			} else {
				uint32_t s = (uint32_t)w.wr_id;
				if (w.byte_len == kReplyBytes) {
					memcpy(&reply_, c_->recv_buf(s), sizeof reply_);
					have_reply_ = true;
				}
				c_->PostRecv(s);
			}
		}
		if (last_progress_ns_ == 0)
			last_progress_ns_ = now_ns();
	}

	const Options &o_;
	Conn *c_;
	QpControl *ctl_;
	std::vector<uint32_t> free_;
	std::vector<uint32_t> slot_len_;
	Checksum sum_;
	uint64_t word_ = 0, sent_ = 0;
	uint64_t first_post_ns_ = 0, last_done_ns_ = 0, last_progress_ns_ = 0;
	Reply reply_{};
	bool have_reply_ = false;
	bool hw_paced_ = false;
	uint64_t hw_rate_ = 0;
	std::unique_ptr<QpCounter> cnp_;
	uint64_t cnps_seen_ = 0;
	uint64_t first_cut_us_ = 0;
};

// Default byte counter: the bytes one rate-timer period carries at line
// rate, so the byte counter expires about as often as the timer when the QP
// sends at full speed (the ns-3 model's ratio).  A fixed 256 KB, more than a
// whole communication phase here, never expired: F, which acts only through
// increase events, then had only the timer, and the jobs did not interleave
// (docs/rdma.md, "Interleaving").
uint64_t line_rate_timer_bytes(uint64_t line_bps, uint32_t timer_us)
{
	const uint64_t bytes = line_bps / 8 * timer_us / 1000000;
	return std::max<uint64_t>(bytes, mltcp::dcqcn_spec::byte_counter.min);
}

mltcp::DcqcnParams dcqcn_params(const Options &o)
{
	mltcp_dcqcn_params raw;
	mltcp_dcqcn_params_default(&raw);
	const uint64_t line = o.line_mbps * 1000000;
	raw.line_rate_bps = line;
	raw.min_rate_bps = o.min_mbps ? o.min_mbps * 1000000 : line / 100;
	raw.rai_bps = o.rai_mbps ? o.rai_mbps * 1000000 : line / 50;
	raw.rhai_bps = o.rhai_mbps ? o.rhai_mbps * 1000000 : line / 10;
	raw.rate_timer_us = o.rate_timer_us;
	raw.alpha_timer_us = o.rate_timer_us;
	raw.byte_counter = o.byte_counter ? o.byte_counter
					  : line_rate_timer_bytes(line, o.rate_timer_us);
	raw.cnp_interval_us = 1000;
	raw.fr_stages = o.fr_stages;
	try {
		return mltcp::DcqcnParams(raw);
	} catch (const std::invalid_argument &e) {
		fatal(kExitUsage, std::string("bad DCQCN parameters: ") + e.what());
	}
}

void sleep_ms(uint64_t ms)
{
	timespec ts{(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
	}
}

int run_client(const Options &o)
{
	Control mode;
	if (!ParseControl(o.control, &mode))
		fatal(kExitUsage, "--control '" + o.control + "': use fixed, dcqcn or mltcp_dcqcn");
	if (mode == Control::kFixed && o.rate_mbps == 0)
		fatal(kExitUsage, "--control fixed needs --rate-mbps R");
	std::unique_ptr<Conn> c(Conn::Connect(o.host, o.port, o.src, o.dev, o.qp));
	const uint64_t t0 = o.t0_us ? o.t0_us : real_us();
	// Two messages of burst: a pacing wake-up that comes late (timer slack,
	// a busy CPU) is made up by the next post instead of lost.
	QpControl ctl(mode, mltcp::Params(o.mltcp), dcqcn_params(o), o.rate_mbps * 1000000,
		      kBurstMsgs * o.qp.msg_bytes, now_ns(), std::random_device{}());
	Client cl(o, c.get(), &ctl);
	if (mode == Control::kFixed)
		cl.TryHardwarePacing(o.rate_mbps * 1000000);
	else
		printf("mltcp-rdma: %s reaction point paces QP %u in software\n",
		       ControlName(mode), c->qpn());

	std::vector<mltcp_workload::Iteration> recs;
	if (o.iterations == 0) {
		cl.Phase(o.bytes, 0);
	} else {
		if (o.start_us) {	// jobs connect first, then start together
			uint64_t t = real_us();
			if (t < o.start_us)
				sleep_ms((o.start_us - t) / 1000);
		}
		sleep_ms(o.offset_ms);
		for (uint64_t i = 0; i < o.iterations; i++) {
			mltcp_workload::Iteration r{};
			r.bytes = o.iter_bytes;
			r.start_us = (int64_t)real_us();
			sleep_ms(o.compute_ms);
			r.comm_start_us = (int64_t)real_us();
			if (o.hints)
				ctl.Hint(o.iter_bytes, now_ns());
			cl.Phase(o.iter_bytes, (uint32_t)i);
			r.comm_end_us = r.end_us = (int64_t)real_us();
			recs.push_back(r);
		}
	}
	cl.Bye();
	double secs = (cl.last_done_ns() - cl.first_post_ns()) / 1e9;
	const QpStats &st = ctl.stats();
	// The bucket lets `burst` bytes go at once: the paced rate is the rest
	// over the elapsed time (a token bucket sends at most burst + R * T).
	const uint64_t burst = kBurstMsgs * o.qp.msg_bytes;
	const double paced = secs > 0 && cl.sent() > burst ? (cl.sent() - burst) * 8 / secs / 1e6 : 0.0;
	printf("CLIENT bytes=%" PRIu64 " seconds=%.4f rate_mbps=%.2f paced_mbps=%.2f checksum=%016" PRIx64
	       " verified=yes control=%s pacing=%s cnps=%" PRIu64 " min_rate_mbps=%.2f"
	       " iterations=%u hinted=%u device=%s qpn=%u first_cut_us=%" PRIu64 "\n",
	       cl.sent(), secs, secs > 0 ? cl.sent() * 8 / secs / 1e6 : 0.0, paced, cl.checksum(),
	       ControlName(mode), cl.hw_paced() ? "hardware" : "software", st.cnps,
	       st.min_rate_bps / 1e6, st.iterations, st.hinted, c->device().c_str(), c->qpn(),
	       cl.first_cut_us());
	if (!o.csv.empty()) {
		std::string err = mltcp_workload::write_iteration_csv(o.csv, o.job, recs, (int64_t)t0);
		if (!err.empty())
			fatal(kExitUsage, "--csv: " + err);
	}
	return kExitOk;
}

// ---------------------------------------------------------------- icrc-check

std::string hex(const uint8_t *p, size_t n)
{
	std::string s;
	char b[4];
	for (size_t i = 0; i < n; i++) {
		snprintf(b, sizeof b, "%02x", p[i]);
		s += b;
	}
	return s;
}

std::string ip_text(uint32_t a)
{
	char b[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &a, b, sizeof b);
	return b;
}

// Checks the ICRC of every RoCEv2 packet in a pcap file (tcpdump -w on one
// Ethernet interface).  CNPs are counted apart from the other packets, and
// CE-marked ones apart too (the ECN bits are masked out of the ICRC).
int run_icrc_check(const Options &o)
{
	uint64_t frames = 0, roce = 0, incomplete = 0, ok = 0, bad = 0, cnp = 0, cnp_ok = 0,
		 ce = 0, ce_ok = 0, bad_shown = 0;
	uint64_t by_opcode[256] = {}, dumped_ce = 0;
	std::string err;
	bool read = ReadPcap(o.pcap, [&](const uint8_t *d, size_t caplen, size_t) {
		frames++;
		RoceFrame r = ParseRoceFrame(d, caplen);
		if (!r.roce)
			return;
		roce++;
		if (!r.complete) {
			incomplete++;
			return;
		}
		bool first_ce = r.ecn == 3 && r.opcode != kBthOpcodeCnp && dumped_ce < o.dump;
		bool dump = by_opcode[r.opcode] < o.dump || first_ce;
		dumped_ce += first_ce;
		by_opcode[r.opcode]++;
		bool good = r.icrc_ok();
		(good ? ok : bad)++;
		if (r.opcode == kBthOpcodeCnp) {
			cnp++;
			cnp_ok += good;
		} else if (r.ecn == 3) {
			ce++;
			ce_ok += good;
		}
		if (dump)
			printf("FRAME opcode=0x%02x ecn=%u ip_len=%zu icrc=%08x ok=%d ip=%s\n", r.opcode,
			       r.ecn, r.ip_len, r.icrc_wire, good, hex(d + kEthHeaderBytes, r.ip_len).c_str());
		if (!good && bad_shown++ < 5)
			printf("BAD-ICRC opcode=0x%02x %s:%u -> %s qpn=%u psn=%u ip_id=%u ip_len=%zu "
			       "wire=%08x computed=%08x\n",
			       r.opcode, ip_text(r.src_ip).c_str(), r.src_port, ip_text(r.dst_ip).c_str(),
			       r.dest_qpn, r.psn, r.ip_id, r.ip_len, r.icrc_wire, r.icrc_computed);
	}, &err);
	if (!read && frames == 0)
		fatal(kExitUsage, err);
	std::string ops;
	for (int i = 0; i < 256; i++)
		if (by_opcode[i]) {
			char b[32];
			snprintf(b, sizeof b, "%s0x%02x:%" PRIu64, ops.empty() ? "" : ",", i, by_opcode[i]);
			ops += b;
		}
	printf("ICRC frames=%" PRIu64 " roce=%" PRIu64 " checked=%" PRIu64 " ok=%" PRIu64
	       " bad=%" PRIu64 " incomplete=%" PRIu64 " cnp=%" PRIu64 " cnp_ok=%" PRIu64
	       " ce=%" PRIu64 " ce_ok=%" PRIu64 " opcodes=%s\n",
	       frames, roce, ok + bad, ok, bad, incomplete, cnp, cnp_ok, ce, ce_ok,
	       ops.empty() ? "-" : ops.c_str());
	if (!read)	// a capture cut off mid-record: the records before it count
		fprintf(stderr, "mltcp-rdma: warning: %s\n", err.c_str());
	return bad ? kExitData : kExitOk;
}

void usage(FILE *f)
{
	fputs("usage: mltcp-rdma devices\n"
	      "       mltcp-rdma server [--bind IP] [--port P] [options]\n"
	      "       mltcp-rdma observe --iface IF --pin DIR [--detach | --stats]\n"
	      "       mltcp-rdma icrc-check --pcap FILE [--dump N]\n"
	      "       mltcp-rdma client --host IP [--port P] (--bytes N | --iterations K\n"
	      "                         --iter-bytes B [--compute-ms C]) [options]\n"
	      "\n"
	      "RC queue-pair transfers over RDMA (librdmacm + libibverbs), paced at the\n"
	      "rate chosen by MLTCP's DCQCN reaction point.  Every byte is checksummed\n"
	      "end to end.\n"
	      "\n"
	      "Common:\n"
	      "  --port P            RDMA CM port (default 7471)\n"
	      "  --msg BYTES         bytes per SEND, multiple of 8 (default 16384)\n"
	      "  --depth N           SENDs in flight / RECVs posted (default 16)\n"
	      "  --tos T             IP TOS of the RoCEv2 packets (default 2 = ECT(0))\n"
	      "  --idle-timeout S    fail when the peer is silent this long (default 30)\n"
	      "  -v, --verbose\n"
	      "Server:\n"
	      "  --bind IP           local IPv4 address on an RDMA interface (default any)\n"
	      "  --ce-map PATH       pinned BPF map QPN -> CE-marked packets (from observe):\n"
	      "                      act as DCQCN notification point, send RoCEv2 CNPs\n"
	      "  --cnp-interval-us N at most one CNP per N us per QP (default 1000)\n"
	      "Observe (tc ingress BPF counter of RoCEv2 CE marks and CNPs per QP):\n"
	      "  --iface IF --pin DIR  attach on IF, pin DIR/{ce_count,cnp_count,stats}\n"
	      "  --detach            remove the filter and the pins\n"
	      "  --stats             print roce=N ce=N cnp=N totals\n"
	      "Icrc-check (RoCEv2 invariant CRC of captured packets, e.g. tcpdump -w):\n"
	      "  --pcap FILE         pcap or pcapng capture of one Ethernet interface; prints\n"
	      "                      ICRC ... ok=N bad=N cnp=N cnp_ok=N; exit 4 if any\n"
	      "                      ICRC is wrong\n"
	      "  --dump N            print the first N RoCEv2 packets of each BTH opcode\n"
	      "                      and the first N CE-marked ones in hex (from IP)\n"
	      "Client:\n"
	      "  --host IP           server address\n"
	      "  --src IP            local address (selects the RDMA device)\n"
	      "  --dev NAME          RDMA device the connection must use (checked)\n"
	      "  --bytes N           one transfer of N bytes (rounded up to 8)\n"
	      "  --iterations K --iter-bytes B --compute-ms C [--offset-ms D]\n"
	      "                      job emulator: D ms, then K x {C ms compute, B bytes}\n"
	      "  --start-us T        begin at CLOCK_REALTIME T us (after connecting), so\n"
	      "                      several jobs start together\n"
	      "  --job NAME --csv FILE [--t0-us T]\n"
	      "                      per-iteration CSV (the workload schema, as mltcp-emu)\n"
	      "  --hints             announce each iteration's bytes to the tracker\n"
	      "  --control C         fixed (needs --rate-mbps), dcqcn, mltcp_dcqcn\n"
	      "  --rate-mbps R       fixed pacing rate (device rate limit if supported,\n"
	      "                      otherwise software pacing)\n"
	      "  --line-mbps R       DCQCN line rate (default 100); R_AI, R_HAI, min rate\n"
	      "                      default to R/50, R/10, R/100: --rai-mbps --rhai-mbps\n"
	      "                      --min-mbps override them\n"
	      "  --rate-timer-us N   DCQCN rate and alpha timers (default 1000)\n"
	      "  --byte-counter N    DCQCN byte counter (default: line rate x rate timer,\n"
	      "                      at least 1024; 2000 at 16 Mbit/s and 1 ms)\n"
	      "  --fr-stages N       DCQCN fast recovery stages (default 5); the MLTCP\n"
	      "                      gain scales only the increases after them\n"
	      "  --cnp-map PATH      pinned BPF map QPN -> CNPs received (from observe);\n"
	      "                      feeds the reaction point\n"
	      "\n"
	      "MLTCP parameters of mltcp_dcqcn (core/mltcp_param_table.h; --name N or --name=N):\n",
	      f);
	fputs(mltcp::ParamHelp<mltcp_params>("  ", true, "", MLTCP_PS_RATE).c_str(), f);
	fputs("\n"
	      "Exit status: 0 ok, 2 usage, 3 RDMA device or connection, 4 transfer failed\n"
	      "(peer gone, checksum mismatch, timeout) or a wrong ICRC (icrc-check).\n",
	      f);
}

Options parse(int argc, char **argv)
{
	Options o;
	if (argc < 2) {
		usage(stderr);
		exit(kExitUsage);
	}
	o.mode = argv[1];
	if (o.mode == "-h" || o.mode == "--help") {
		usage(stdout);
		exit(kExitOk);
	}
	if (o.mode != "server" && o.mode != "client" && o.mode != "devices" && o.mode != "observe" &&
	    o.mode != "icrc-check")
		fatal(kExitUsage, "unknown command '" + o.mode +
					  "': use devices, server, client, observe or icrc-check (see --help)");
	enum { O_SRC = 255, O_HOST = 256, O_BIND, O_PORT, O_DEV, O_BYTES, O_ITERS, O_IBYTES, O_COMPUTE, O_OFFSET,
	       O_JOB, O_CSV, O_T0, O_HINTS, O_CONTROL, O_RATE, O_LINE, O_RAI, O_RHAI, O_MIN,
	       O_RTIMER, O_BC, O_CNPMAP, O_MSG, O_DEPTH, O_TOS, O_IDLE, O_CEMAP, O_CNPINT,
	       O_IFACE, O_PIN, O_DETACH, O_STATS, O_START, O_FR, O_PCAP, O_DUMP };
	static const option lo[] = {
		{"host", 1, nullptr, O_HOST}, {"src", 1, nullptr, O_SRC}, {"bind", 1, nullptr, O_BIND},
		{"port", 1, nullptr, O_PORT}, {"dev", 1, nullptr, O_DEV},
		{"bytes", 1, nullptr, O_BYTES}, {"iterations", 1, nullptr, O_ITERS},
		{"iter-bytes", 1, nullptr, O_IBYTES}, {"compute-ms", 1, nullptr, O_COMPUTE},
		{"offset-ms", 1, nullptr, O_OFFSET}, {"job", 1, nullptr, O_JOB},
		{"csv", 1, nullptr, O_CSV}, {"t0-us", 1, nullptr, O_T0},
		{"hints", 0, nullptr, O_HINTS}, {"control", 1, nullptr, O_CONTROL},
		{"rate-mbps", 1, nullptr, O_RATE}, {"line-mbps", 1, nullptr, O_LINE},
		{"rai-mbps", 1, nullptr, O_RAI}, {"rhai-mbps", 1, nullptr, O_RHAI},
		{"min-mbps", 1, nullptr, O_MIN}, {"rate-timer-us", 1, nullptr, O_RTIMER},
		{"byte-counter", 1, nullptr, O_BC}, {"cnp-map", 1, nullptr, O_CNPMAP},
		{"msg", 1, nullptr, O_MSG}, {"depth", 1, nullptr, O_DEPTH},
		{"tos", 1, nullptr, O_TOS}, {"idle-timeout", 1, nullptr, O_IDLE},
		{"ce-map", 1, nullptr, O_CEMAP}, {"cnp-interval-us", 1, nullptr, O_CNPINT},
		{"iface", 1, nullptr, O_IFACE}, {"pin", 1, nullptr, O_PIN},
		{"detach", 0, nullptr, O_DETACH}, {"stats", 0, nullptr, O_STATS},
		{"start-us", 1, nullptr, O_START}, {"fr-stages", 1, nullptr, O_FR},
		{"pcap", 1, nullptr, O_PCAP}, {"dump", 1, nullptr, O_DUMP},
		{"verbose", 0, nullptr, 'v'}, {"help", 0, nullptr, 'h'}, {nullptr, 0, nullptr, 0}};
	// The core's parameters first; getopt_long sees the rest.
	std::vector<char *> rest;
	try {
		rest = mltcp::TakeParamOptions(o.mltcp, "", argc, argv, 2, MLTCP_PS_RATE);
	} catch (const std::invalid_argument &e) {
		fatal(kExitUsage, e.what());
	}
	if (const char *why = mltcp::ParamTable<mltcp_params>::Check(o.mltcp))
		fatal(kExitUsage, why);
	const int nrest = (int)rest.size() - 1;
	optind = 2;
	int ch;
	const uint64_t kMax = 1ULL << 40;
	while ((ch = getopt_long(nrest, rest.data(), "vh", lo, nullptr)) != -1) {
		switch (ch) {
		case O_HOST: o.host = optarg; break;
		case O_SRC: o.src = optarg; break;
		case O_BIND: o.bind = optarg; break;
		case O_PORT: o.port = (uint16_t)parse_u64("--port", optarg, 1, 65535); break;
		case O_DEV: o.dev = optarg; break;
		case O_BYTES: o.bytes = (parse_u64("--bytes", optarg, 1, kMax) + 7) & ~7ULL; break;
		case O_ITERS: o.iterations = parse_u64("--iterations", optarg, 1, 1000000); break;
		case O_IBYTES:
			o.iter_bytes = (parse_u64("--iter-bytes", optarg, 1, kMax) + 7) & ~7ULL;
			break;
		case O_COMPUTE: o.compute_ms = parse_u64("--compute-ms", optarg, 0, 3600000); break;
		case O_OFFSET: o.offset_ms = parse_u64("--offset-ms", optarg, 0, 3600000); break;
		case O_JOB: o.job = optarg; break;
		case O_CSV: o.csv = optarg; break;
		case O_T0: o.t0_us = parse_u64("--t0-us", optarg, 1, ~0ULL >> 1); break;
		case O_HINTS: o.hints = true; break;
		case O_CONTROL: o.control = optarg; break;
		case O_RATE: o.rate_mbps = parse_u64("--rate-mbps", optarg, 1, 1600000); break;
		case O_LINE: o.line_mbps = parse_u64("--line-mbps", optarg, 1, 1600000); break;
		case O_RAI: o.rai_mbps = parse_u64("--rai-mbps", optarg, 1, 1600000); break;
		case O_RHAI: o.rhai_mbps = parse_u64("--rhai-mbps", optarg, 1, 1600000); break;
		case O_MIN: o.min_mbps = parse_u64("--min-mbps", optarg, 1, 1600000); break;
		case O_RTIMER:
			o.rate_timer_us = (uint32_t)parse_u64("--rate-timer-us", optarg, mltcp::dcqcn_spec::rate_timer_us.min,
							 mltcp::dcqcn_spec::rate_timer_us.max);
			break;
		case O_BC: o.byte_counter = (uint32_t)parse_u64("--byte-counter", optarg, mltcp::dcqcn_spec::byte_counter.min, 1U << 31); break;
		case O_CNPMAP: o.cnp_map = optarg; break;
		case O_MSG: o.qp.msg_bytes = (uint32_t)parse_u64("--msg", optarg, 64, 1 << 20); break;
		case O_DEPTH: o.qp.depth = (uint32_t)parse_u64("--depth", optarg, 2, 1024); break;
		case O_TOS: o.qp.tos = (uint8_t)parse_u64("--tos", optarg, 0, 255); break;
		case O_IDLE: o.idle_timeout_s = (int)parse_u64("--idle-timeout", optarg, 1, 3600); break;
		case O_CEMAP: o.ce_map = optarg; break;
		case O_CNPINT:
			o.cnp_interval_us = (uint32_t)parse_u64("--cnp-interval-us", optarg, mltcp::dcqcn_spec::cnp_interval_us.min,
							   mltcp::dcqcn_spec::cnp_interval_us.max);
			break;
		case O_FR: o.fr_stages = (uint32_t)parse_u64("--fr-stages", optarg, mltcp::dcqcn_spec::fr_stages.min,
							      mltcp::dcqcn_spec::fr_stages.max); break;
		case O_START: o.start_us = parse_u64("--start-us", optarg, 1, ~0ULL >> 1); break;
		case O_IFACE: o.iface = optarg; break;
		case O_PIN: o.pin_dir = optarg; break;
		case O_DETACH: o.detach = true; break;
		case O_STATS: o.stats = true; break;
		case O_PCAP: o.pcap = optarg; break;
		case O_DUMP: o.dump = parse_u64("--dump", optarg, 0, 1000000); break;
		case 'v': o.verbose = true; break;
		case 'h': usage(stdout); exit(kExitOk);
		default: usage(stderr); exit(kExitUsage);
		}
	}
	if (optind < nrest)
		fatal(kExitUsage, std::string("unexpected argument '") + rest[optind] + "'");
	if (o.mode == "observe" && (o.pin_dir.empty() || (o.iface.empty() && !o.stats)))
		fatal(kExitUsage, "observe needs --iface IF and --pin DIR (or --pin DIR --stats)");
	if (o.mode == "icrc-check" && o.pcap.empty())
		fatal(kExitUsage, "icrc-check needs --pcap FILE");
	if (o.qp.msg_bytes % 8)
		fatal(kExitUsage, "--msg must be a multiple of 8");
	if (o.mode == "client") {
		if (o.host.empty())
			fatal(kExitUsage, "client needs --host IP");
		if ((o.bytes == 0) == (o.iterations == 0))
			fatal(kExitUsage, "client needs either --bytes N or --iterations K --iter-bytes B");
		if (o.iterations && o.iter_bytes == 0)
			fatal(kExitUsage, "--iterations needs --iter-bytes B");
	}
	return o;
}

}  // namespace

int main(int argc, char **argv)
{
	Options o = parse(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	try {
		if (o.mode == "devices") {
			for (const auto &d : ListDevices())
				printf("%s\n", d.c_str());
			return kExitOk;
		}
		if (o.mode == "icrc-check")
			return run_icrc_check(o);
		if (o.mode == "observe") {
			if (o.stats)
				printf("%s\n", ObserverStats(o.pin_dir).c_str());
			else if (o.detach)
				ObserverDetach(o.iface, o.pin_dir);
			else
				ObserverAttach(o.iface, o.pin_dir);
			return kExitOk;
		}
		if (o.mode == "server")
			return run_server(o);
		return run_client(o);
	} catch (const RdmaError &e) {
		fatal(kExitRdma, e.what());
	}
}
