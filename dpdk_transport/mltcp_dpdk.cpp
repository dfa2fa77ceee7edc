// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// mltcp_dpdk.cpp - the example program of the MLTCP-DPDK transport and its
// test/benchmark driver:
//
//   send / recv   a stream of numbered messages; both ends print the byte
//                 count, message count and SHA-256 of the byte stream, and
//                 recv checks every message arrives exactly once, in order
//   ping / pong   request/response latency (median, p99)
//   emu           the job emulator: per iteration a compute gap, then N
//                 bytes, done when the peer acknowledged all of them; writes
//                 the same per-iteration CSV as the host emulator (mltcp-emu)
//
// Everything after "--" is passed to the DPDK EAL unchanged.
#include <getopt.h>
#include <openssl/evp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "endpoint.h"
#include "mltcp_options.hpp"
#ifdef MLTCP_DPDK_HAVE_PROFILES
#include "iteration.h"
#include "profile.h"
#endif

using namespace mltcp_dpdk;

namespace {

enum ExitCode { kExitOk = 0, kExitFail = 1, kExitUsage = 2 };

// DCQCN's byte counter: the paper's small setting (with its headline 10 MB a
// communication phase of ~1 MB would see no byte-counter increase at all).
constexpr uint64_t kDefaultByteCounter = 150000;
// Unacknowledged bytes a sender queues, like Linux's default tcp_wmem
// maximum: a few MB keep the messages being sent in the cache, while 64 MB
// made every segment copy a DRAM read (memif goodput 20 -> 34 Gbit/s).
constexpr uint64_t kDefaultSendQueue = 4ULL << 20;
// A receiver accepts messages up to this size.
constexpr uint64_t kMaxRecvMessage = 64ULL << 20;
// Its flows are window flows (Reno, CUBIC) and DCQCN flows, without jobs:
// the parameter rows it takes and lists.
constexpr unsigned kParamScope = MLTCP_PS_WINDOW | MLTCP_PS_RATE;

struct Options {
	std::string cmd;
	std::string port = "net_memif0";
	std::string local_ip, peer_ip;
	std::string cc = "reno";
	double loss = 0, reorder = 0;
	uint64_t seed = 1;
	uint64_t bytes = 64ULL << 20;
	uint64_t msg_size = 1 << 20;
	uint32_t mss = 0;
	uint32_t frame_room = 2048;
	uint32_t rcv_wnd = 2048;
	uint64_t send_queue = 0;	// 0: kDefaultSendQueue or two messages
	uint64_t line_rate_bps = 10000000000ULL;
	uint32_t dcqcn_timer_us = (uint32_t)mltcp::dcqcn_spec::rate_timer_us.def;
	uint32_t cnp_interval_us = (uint32_t)mltcp::dcqcn_spec::cnp_interval_us.def;
	uint64_t dcqcn_byte_counter = kDefaultByteCounter;
	uint32_t dcqcn_g_inv = (uint32_t)mltcp::dcqcn_spec::g_inv.def;
	uint64_t count = 20000, size = 64;
	double timeout_s = 60;
	bool sha = true;
	// emu
	std::string profile_file, profile, job = "job0", csv;
	uint64_t iterations = 20, start_at_us = 0, t0_us = 0;
	bool hints = false;
	bool verbose = false;
	uint64_t conns = 1;
	bool hold = false;
	bool yield = true;
	uint32_t idle_us = 0;
	uint64_t min_rto_us = 10000;
	uint64_t idle_restart_ms = 200;
	mltcp_params mltcp = MLTCP_PARAMS_INIT;	// --<name> rows of the core's table
	bool ecn = false;
	std::vector<std::string> eal;
};

[[noreturn]] void Die(int code, const std::string &msg)
{
	fprintf(stderr, "mltcp-dpdk: %s\n", msg.c_str());
	exit(code);
}

void Usage(FILE *f)
{
	fprintf(f,
		"usage: mltcp-dpdk COMMAND [options] -- [DPDK EAL arguments]\n"
		"commands:\n"
		"  send    connect to --peer-ip and send --bytes in messages of --msg-size\n"
		"  recv    accept --conns connections (1), receive until the peers close, check order\n"
		"  ping    64 B (--size) request/response latency, --count rounds\n"
		"  pong    answer ping\n"
		"  emu     job emulator (sender side; the peer runs recv --no-sha)\n"
		"options:\n"
		"  --port NAME          DPDK port (default net_memif0)\n"
		"  --local-ip A.B.C.D   this endpoint's address (required)\n"
		"  --peer-ip A.B.C.D    peer address (send, ping, emu)\n"
		"  --cc NAME            congestion control: %s (default reno)\n"
		"  --loss P --reorder P inject loss / reordering on transmit (fractions)\n"
		"  --bytes N --msg-size N   send: total bytes (default 64 MiB), message size (1 MiB)\n"
		"  --no-sha             skip the SHA-256 of the stream (benchmarks)\n"
		"  --mss N --frame-room N   payload per packet (default: fits the mbuf), mbuf room (2048)\n"
		"  --rcv-wnd N          receive window in packets (2048)\n"
		"  --send-queue N       send, emu: unacknowledged bytes queued at most (default\n"
		"                       4 MiB or two messages, whichever is larger)\n"
		"  --line-rate BPS      DCQCN line rate (default 10e9)\n"
		"  --dcqcn-timer-us N   DCQCN rate-increase and alpha timers (default 55, the\n"
		"                       paper's, for RTTs of a few us; use about one RTT here)\n"
		"  --cnp-interval-us N  receiver: at most one CNP per N us per connection (50)\n"
		"  --dcqcn-byte-counter N  DCQCN byte counter: a rate increase every N bytes\n"
		"                       sent (default 150000, the paper's small setting)\n"
		"  --dcqcn-g-inv N      DCQCN alpha gain g = 1/N (default 256, the paper's,\n"
		"                       for one CNP per 50 us; slower feedback wants a larger g)\n"
		"  --count N --size N   ping rounds (20000) and message size (64)\n"
		"  --timeout S          give up after S seconds (60)\n"
		"  --seed N             fault-injection / stream seed (1)\n"
		"  --verbose            send: print connection statistics every 100 ms;\n"
		"                       emu: one line per iteration (losses, cwnd, F, rate, CNPs)\n"
		"  --ecn                window modes: send ECN-capable packets and reduce the window\n"
		"                       once per window when a CNP echoes a CE mark (RFC 3168)\n"
		"  --no-scale-decrease  same as --scale-decrease 0 (below)\n"
		"  --hold               after the results, stay attached to the port (without\n"
		"                       polling) until SIGINT/SIGTERM: keeps a memif peer connected\n"
		"  --no-yield           never sched_yield(); by default a poll that finds nothing\n"
		"                       yields the CPU (this 2-core host runs more pollers than cores)\n"
		"  --min-rto-us N       retransmission timeout floor (default 10000; see docs/dpdk.md)\n"
		"  --idle-restart-ms N  restart the window after sending paused longer than N ms and\n"
		"                       the RTO (default 200, Linux's minimum RTO; 0: after an RTO)\n"
		"  --conns N            recv: serve N connections (SHA over all, in arrival order)\n"
		"  --idle-us N          recv, emu: sleep N us (1 us timer slack) when a poll finds\n"
		"                       nothing or the send queue is full (shares the CPU)\n"
		"emu options:\n"
		"  --profile-file F --profile NAME   job profile (profiles/README.md)\n"
		"  --job NAME --iterations N --csv FILE\n"
		"  --start-at-us T      absolute CLOCK_REALTIME start; --t0-us T: CSV origin\n"
		"  --hints              announce each iteration's bytes (Connection::Hint)\n"
		"CSV: job,iteration,bytes,start_us,comm_start_us,comm_end_us,end_us and the loss\n"
		"     counters rto,recoveries,tlp,undo,spurious_rto,window_repairs, empty here\n"
		"     (the schema of mltcp-emu)\n"
		"example (two processes over memif, each on its own core: without the EAL's -l\n"
		"every DPDK process runs on CPU 0):\n"
		"  mltcp-dpdk recv --local-ip 10.0.0.2 -- --no-huge --no-pci -m 256 -l 1 \\\n"
		"      --file-prefix=rx --vdev=net_memif0,role=server,socket=/run/x.sock\n"
		"  mltcp-dpdk send --local-ip 10.0.0.1 --peer-ip 10.0.0.2 -- --no-huge --no-pci \\\n"
		"      -m 256 -l 0 --file-prefix=tx --vdev=net_memif0,role=client,socket=/run/x.sock\n"
		"MLTCP parameters of the mltcp modes (core/mltcp_param_table.h; --name N or --name=N):\n",
		mltcp::CcNameList().c_str());
	fputs(mltcp::ParamHelp<mltcp_params>("  ", true, "", kParamScope).c_str(), f);
}

uint64_t ParseU64(const char *opt, const char *v)
{
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	if (errno || *end || d < 0 || d > 1.8e19)
		Die(kExitUsage, std::string("--") + opt + ": '" + v + "' is not a non-negative number");
	return (uint64_t)d;
}

uint64_t ParseRange(const char *opt, const char *v, uint64_t min, uint64_t max,
		    const char *unit = "")
{
	uint64_t n = ParseU64(opt, v);
	if (n < min || n > max)
		Die(kExitUsage, std::string("--") + opt + " must be in [" + std::to_string(min) +
					", " + std::to_string(max) + "]" + unit);
	return n;
}

uint32_t ParseTimerUs(const char *opt, const char *v, uint32_t min)
{
	return (uint32_t)ParseRange(opt, v, min, mltcp::dcqcn_spec::rate_timer_us.max, " us");
}

double ParseFrac(const char *opt, const char *v)
{
	char *end;
	double d = strtod(v, &end);
	if (*end || d < 0 || d > 0.5)
		Die(kExitUsage, std::string("--") + opt + ": '" + v + "' must be a fraction in [0, 0.5]");
	return d;
}

Options ParseArgs(int argc, char **argv)
{
	Options o;
	if (argc < 2)
		Die(kExitUsage, "no command (send, recv, ping, pong, emu; see --help)");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		Usage(stdout);
		exit(0);
	}
	o.cmd = argv[1];
	int dash = argc;
	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			dash = i;
			break;
		}
	for (int i = dash + 1; i < argc; i++)
		o.eal.push_back(argv[i]);
	// The core's parameters first; getopt_long sees the rest.
	std::vector<char *> rest;
	try {
		rest = mltcp::TakeParamOptions(o.mltcp, "", dash, argv, 2, kParamScope);
	} catch (const std::invalid_argument &e) {
		Die(kExitUsage, e.what());
	}
	const int nrest = (int)rest.size() - 1;
	static const option longopts[] = {
		{"port", 1, 0, 'p'},	    {"local-ip", 1, 0, 'l'},   {"peer-ip", 1, 0, 'P'},
		{"cc", 1, 0, 'c'},	    {"loss", 1, 0, 'L'},       {"reorder", 1, 0, 'R'},
		{"bytes", 1, 0, 'b'},	    {"msg-size", 1, 0, 'm'},   {"no-sha", 0, 0, 'N'},
		{"mss", 1, 0, 'M'},	    {"frame-room", 1, 0, 'f'}, {"rcv-wnd", 1, 0, 'w'},
		{"line-rate", 1, 0, 'r'},   {"count", 1, 0, 'n'},      {"size", 1, 0, 's'},
		{"timeout", 1, 0, 't'},	    {"seed", 1, 0, 'S'},       {"profile-file", 1, 0, 'F'},
		{"profile", 1, 0, 'j'},	    {"job", 1, 0, 'J'},        {"iterations", 1, 0, 'i'},
		{"csv", 1, 0, 'C'},	    {"start-at-us", 1, 0, 'A'}, {"t0-us", 1, 0, 'T'},
		{"min-rto-us", 1, 0, 'X'},   {"idle-restart-ms", 1, 0, 'E'},   {"no-yield", 0, 0, 'Y'},
		{"conns", 1, 0, 'k'},	    {"hold", 0, 0, 'O'},	    {"idle-us", 1, 0, 'I'},
		{"hints", 0, 0, 'H'},	    {"verbose", 0, 0, 'v'},	    {"help", 0, 0, 'h'},
		{"no-scale-decrease", 0, 0, 'D'}, {"ecn", 0, 0, 'e'}, {"dcqcn-timer-us", 1, 0, 'G'},
		{"cnp-interval-us", 1, 0, 'Q'}, {"dcqcn-byte-counter", 1, 0, 'B'},
		{"dcqcn-g-inv", 1, 0, 'g'},   {"send-queue", 1, 0, 'K'}, {0, 0, 0, 0}};
	optind = 2;
	int c;
	while ((c = getopt_long(nrest, rest.data(), "", longopts, nullptr)) != -1) {
		const char *name = "";
		for (auto *lo = longopts; lo->name; lo++)
			if (lo->val == c)
				name = lo->name;
		switch (c) {
		case 'p': o.port = optarg; break;
		case 'l': o.local_ip = optarg; break;
		case 'P': o.peer_ip = optarg; break;
		case 'c': o.cc = optarg; break;
		case 'L': o.loss = ParseFrac(name, optarg); break;
		case 'R': o.reorder = ParseFrac(name, optarg); break;
		case 'b': o.bytes = ParseU64(name, optarg); break;
		case 'm': o.msg_size = ParseRange(name, optarg, 1, 1ULL << 31, " bytes"); break;
		case 'N': o.sha = false; break;
		case 'M': o.mss = (uint32_t)ParseU64(name, optarg); break;
		case 'f': o.frame_room = (uint32_t)ParseU64(name, optarg); break;
		case 'w': o.rcv_wnd = (uint32_t)ParseU64(name, optarg); break;
		case 'K': o.send_queue = ParseU64(name, optarg); break;
		case 'r': o.line_rate_bps = ParseU64(name, optarg); break;
		case 'G': o.dcqcn_timer_us = ParseTimerUs(name, optarg, (uint32_t)mltcp::dcqcn_spec::rate_timer_us.min); break;
		case 'Q': o.cnp_interval_us = ParseTimerUs(name, optarg, 0); break;
		case 'B': o.dcqcn_byte_counter = ParseRange(name, optarg, mltcp::dcqcn_spec::byte_counter.min,
						      mltcp::dcqcn_spec::byte_counter.max);
			break;
		case 'g': o.dcqcn_g_inv = (uint32_t)ParseRange(name, optarg, mltcp::dcqcn_spec::g_inv.min,
							     mltcp::dcqcn_spec::g_inv.max);
			break;
		case 'n': o.count = ParseU64(name, optarg); break;
		case 's': o.size = ParseU64(name, optarg); break;
		case 't': o.timeout_s = (double)ParseU64(name, optarg); break;
		case 'S': o.seed = ParseU64(name, optarg); break;
		case 'F': o.profile_file = optarg; break;
		case 'j': o.profile = optarg; break;
		case 'J': o.job = optarg; break;
		case 'i': o.iterations = ParseU64(name, optarg); break;
		case 'C': o.csv = optarg; break;
		case 'A': o.start_at_us = ParseU64(name, optarg); break;
		case 'T': o.t0_us = ParseU64(name, optarg); break;
		case 'H': o.hints = true; break;
		case 'v': o.verbose = true; break;
		case 'D': o.mltcp.scale_decrease = 0; break;
		case 'e': o.ecn = true; break;
		case 'O': o.hold = true; break;
		case 'Y': o.yield = false; break;
		case 'X': o.min_rto_us = ParseU64(name, optarg); break;
		case 'E': o.idle_restart_ms = ParseRange(name, optarg, 0, 60000, " ms"); break;
		case 'k': o.conns = std::max<uint64_t>(1, ParseU64(name, optarg)); break;
		case 'I': o.idle_us = (uint32_t)ParseU64(name, optarg); break;
		case 'h': Usage(stdout); exit(0);
		default: Die(kExitUsage, "bad option (see mltcp-dpdk --help)");
		}
	}
	if (optind < nrest)
		Die(kExitUsage, std::string("unexpected argument '") + rest[optind] +
					"' (EAL arguments go after --)");
	if (const char *why = mltcp::ParamTable<mltcp_params>::Check(o.mltcp))
		Die(kExitUsage, why);
	return o;
}

CcConfig MakeCc(const Options &o)
{
	CcConfig cc;
	if (!ParseCcKind(o.cc, &cc.kind))
		Die(kExitUsage, "unknown congestion control '" + o.cc + "'; available: " + mltcp::CcNameList());
	cc.dcqcn.line_rate_bps = o.line_rate_bps;
	cc.dcqcn.min_rate_bps = std::min<uint64_t>(cc.dcqcn.min_rate_bps, o.line_rate_bps / 100);
	cc.dcqcn.rai_bps = std::min<uint64_t>(cc.dcqcn.rai_bps, o.line_rate_bps / 100);
	cc.dcqcn.rhai_bps = std::min<uint64_t>(cc.dcqcn.rhai_bps, o.line_rate_bps / 20);
	cc.dcqcn.byte_counter = o.dcqcn_byte_counter;
	cc.dcqcn.rate_timer_us = o.dcqcn_timer_us;
	cc.dcqcn.alpha_timer_us = o.dcqcn_timer_us;
	cc.dcqcn.cnp_interval_us = o.cnp_interval_us;
	cc.dcqcn.g_inv = o.dcqcn_g_inv;
	cc.max_cwnd = o.rcv_wnd;
	cc.mltcp = o.mltcp;
	cc.ecn = o.ecn;
	return cc;
}

std::unique_ptr<Endpoint> OpenEndpoint(const Options &o)
{
	EndpointOptions eo;
	eo.eal_args = o.eal;
	eo.port.name = o.port;
	if (o.local_ip.empty() || !ParseIpv4(o.local_ip, &eo.port.local_ip))
		Die(kExitUsage, "--local-ip: give this endpoint's IPv4 address, e.g. 10.0.0.1");
	eo.yield_when_idle = o.yield;
	if (o.idle_us)	// the default 50 us slack makes usleep(20) last ~100 us
		prctl(PR_SET_TIMERSLACK, 1000UL);
	eo.port.inject_loss = o.loss;
	eo.port.inject_reorder = o.reorder;
	eo.port.seed = o.seed;
	if (o.frame_room < 512 || o.frame_room > 65000)
		Die(kExitUsage, "--frame-room must be in [512, 65000]");
	eo.port.frame_room = (uint16_t)o.frame_room;
	// Keep the mbuf pool near 256 MB whatever the frame size.
	eo.port.nb_mbufs = (uint32_t)std::clamp<uint64_t>((256ULL << 20) / o.frame_room, 1023, 8191);
	if (o.mss > kMaxMss)
		Die(kExitUsage, "--mss must be at most " + std::to_string(kMaxMss));
	eo.engine.mss = (uint16_t)o.mss;
	eo.engine.rcv_wnd_pkts = o.rcv_wnd;
	eo.engine.min_rto_ns = o.min_rto_us * kNsPerUs;
	eo.engine.idle_restart_min_ns = o.idle_restart_ms * kNsPerMs;
	eo.engine.initial_rto_ns = std::max(eo.engine.min_rto_ns, eo.engine.initial_rto_ns);
	// Senders send messages of at most --msg-size; a receiver takes any.
	const bool sender = o.cmd == "send" || o.cmd == "emu";
	eo.engine.max_message_bytes = sender ? o.msg_size : std::max(o.msg_size, kMaxRecvMessage);
	if (sender && o.send_queue && o.send_queue < o.msg_size)
		Die(kExitUsage, "--send-queue must be at least the message size (" +
					std::to_string(o.msg_size) + " bytes)");
	eo.engine.max_send_queue_bytes = (sender && o.send_queue)
						 ? o.send_queue
						 : std::max({kDefaultSendQueue, 2 * o.msg_size,
							     eo.engine.max_message_bytes});
	std::string err;
	auto ep = Endpoint::Open(eo, &err);
	if (!ep)
		Die(kExitFail, err);
	return ep;
}

uint64_t TimeoutNs(const Options &o) { return (uint64_t)(o.timeout_s * 1e9); }

Connection *ConnectOrDie(Endpoint &ep, const Options &o)
{
	uint32_t peer;
	if (o.peer_ip.empty() || !ParseIpv4(o.peer_ip, &peer))
		Die(kExitUsage, "--peer-ip: give the peer's IPv4 address, e.g. 10.0.0.2");
	Status st;
	Connection *c = ep.Connect(peer, MakeCc(o), &st);
	if (!c)
		Die(kExitUsage, st.message);
	ep.PollUntil([&] { return c->established() || c->closed(); }, TimeoutNs(o));
	if (!c->established())
		Die(kExitFail, "cannot connect to " + o.peer_ip + ": " +
				       (c->closed() ? c->error().message : "timed out"));
	return c;
}

Connection *AcceptOrDie(Endpoint &ep, const Options &o)
{
	ep.Listen(MakeCc(o));
	Connection *c = nullptr;
	if (!ep.PollUntil([&] { return (c = ep.Accept()) != nullptr; }, TimeoutNs(o)))
		Die(kExitFail, "no connection within the timeout");
	return c;
}

// Message i: 8-byte index, then a pseudo-random fill keyed by (seed, i).
void FillMessage(std::vector<uint8_t> &m, uint64_t seed, uint64_t i)
{
	uint64_t x = (seed * 0x9E3779B97F4A7C15ULL) ^ (i + 1) * 0xBF58476D1CE4E5B9ULL;
	size_t n = m.size();
	size_t k = 0;
	if (n >= 8) {
		memcpy(m.data(), &i, 8);
		k = 8;
	}
	for (; k + 8 <= n; k += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(m.data() + k, &x, 8);
	}
	for (; k < n; k++)
		m[k] = (uint8_t)(x >> (8 * (k & 7)));
}

struct Sha {
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	Sha() { EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr); }
	~Sha() { EVP_MD_CTX_free(ctx); }
	void Update(const std::vector<uint8_t> &m) { EVP_DigestUpdate(ctx, m.data(), m.size()); }
	std::string Hex()
	{
		unsigned char d[32];
		unsigned int n = 0;
		EVP_DigestFinal_ex(ctx, d, &n);
		char s[65];
		for (unsigned i = 0; i < n; i++)
			snprintf(s + 2 * i, 3, "%02x", d[i]);
		return std::string(s, 2 * n);
	}
};

void PrintConnStats(const char *who, const Connection &c, const Endpoint &ep)
{
	ConnStats s = c.Stats();
	const PortStats &ps = ep.port().stats();
	printf("%s-stats acked=%" PRIu64 " pkts_sent=%" PRIu64 " retx=%" PRIu64 " lost_detected=%" PRIu64
	       " rtos=%" PRIu64 " tlps=%" PRIu64 " dup_rx=%" PRIu64 " ooo_rx=%" PRIu64 " bad_checksum=%" PRIu64
	       " injected_drops=%" PRIu64 " injected_reorders=%" PRIu64 " srtt_us=%u rto_us=%u cwnd=%u"
	       " rate_bps=%" PRIu64 " cnp_rx=%" PRIu64 " cnp_tx=%" PRIu64 " ecn_reductions=%" PRIu64
	       " iterations=%u hinted=%u bytes_per_iter=%" PRIu64 " gain=%.3f\n",
	       who, s.bytes_acked, s.pkts_sent, s.pkts_retx, s.fast_retx, s.rtos, s.tlps, s.dup_rx, s.ooo_rx,
	       ep.stack().stats().rx_bad_checksum, ps.injected_drops, ps.injected_reorders,
	       s.srtt_us, s.rto_us, s.cc.cwnd, s.cc.rate_bps, s.cnp_rx, s.cnp_tx, s.ecn_reductions, s.cc.iterations,
	       s.cc.hinted, s.cc.bytes_per_iter, s.cc.gain / 1024.0);
}

// A closed connection still answers a retransmitted FIN for this long, so
// the peer finishes even if our last FIN-ACK was lost (TCP's TIME_WAIT).
constexpr uint64_t kLingerNs = 200 * kNsPerMs;

// Orderly close from either side; waits for the peer's half.
void CloseAndWait(Endpoint &ep, Connection *c, const Options &o)
{
	c->Close();
	ep.PollUntil([&] { return c->closed(); }, TimeoutNs(o));
	if (!c->closed() || !c->error().ok())
		Die(kExitFail, "close: " + (c->closed() ? c->error().message
						       : std::string("peer did not finish closing")));
	ep.PollUntil([] { return false; }, kLingerNs);
}

// DPDK 22.11's memif tears a connection down in its interrupt thread while
// the data path may run: a switch forwarding for other jobs can crash when
// one peer leaves.  With --hold, a finished program stays attached (port
// open, not polling) until SIGINT/SIGTERM, so test scripts stop the switch
// first.
void MaybeHold(const Options &o)
{
	if (!o.hold)
		return;
	printf("HOLDING\n");
	fflush(stdout);
	signal(SIGINT, [](int) {});
	signal(SIGTERM, [](int) {});
	pause();
}

int CmdSend(const Options &o)
{
	auto ep = OpenEndpoint(o);
	Connection *c = ConnectOrDie(*ep, o);
	Sha sha;
	uint64_t sent = 0, idx = 0;
	uint64_t t0 = Endpoint::now_ns(), deadline = t0 + TimeoutNs(o);
	std::vector<uint8_t> next;
	uint64_t next_report = 0;
	while (sent < o.bytes) {
		if (next.empty()) {
			// An acknowledged message's buffer when there is one: no
			// allocation, page faults or zeroing (its old bytes are
			// overwritten below, or are don't-care with --no-sha).
			next = c->TakeBuffer();
			next.resize(std::min<uint64_t>(o.msg_size, o.bytes - sent));
			if (o.sha) {
				FillMessage(next, o.seed, idx);
				sha.Update(next);
			} else if (next.size() >= 8) {	// benchmarks: the index only
				memcpy(next.data(), &idx, 8);
			}
		}
		size_t len = next.size();
		Status st = c->Send(std::move(next), Endpoint::now_ns());
		if (st.ok()) {
			sent += len;
			idx++;
			next.clear();
			continue;
		}
		if (st.code != Errc::kWouldBlock)
			Die(kExitFail, "send: " + st.message);
		ep->Poll();	// Send() left `next` intact: retry it
		if (o.verbose && Endpoint::now_ns() > next_report) {
			next_report = Endpoint::now_ns() + 100 * kNsPerMs;
			PrintConnStats("progress", *c, *ep);
		}
		if (c->closed())
			Die(kExitFail, "connection failed: " + c->error().message);
		if (Endpoint::now_ns() > deadline)
			Die(kExitFail, "timed out sending");
	}
	ep->PollUntil([&] {
		if (o.verbose && Endpoint::now_ns() > next_report) {
			next_report = Endpoint::now_ns() + 100 * kNsPerMs;
			PrintConnStats("progress", *c, *ep);
		}
		return c->unacked_bytes() == 0 || c->closed();
	}, TimeoutNs(o));
	if (c->closed() || c->unacked_bytes())
		Die(kExitFail, "not all data acknowledged: " + c->error().message);
	double secs = (Endpoint::now_ns() - t0) / 1e9;
	std::string hex = o.sha ? sha.Hex() : "-";
	CloseAndWait(*ep, c, o);
	printf("SENT bytes=%" PRIu64 " msgs=%" PRIu64 " seconds=%.3f goodput_gbps=%.3f sha256=%s\n",
	       sent, idx, secs, sent * 8 / secs / 1e9, hex.c_str());
	PrintConnStats("send", *c, *ep);
	return kExitOk;
}

int CmdRecv(const Options &o)
{
	auto ep = OpenEndpoint(o);
	ep->Listen(MakeCc(o));
	struct Peer {
		Connection *c;
		uint64_t bytes = 0, msgs = 0;
		bool done = false;
	};
	std::vector<Peer> peers;
	Sha sha;
	uint64_t t0 = 0;
	uint64_t deadline = Endpoint::now_ns() + TimeoutNs(o);
	std::vector<uint8_t> m;
	bool in_order = true;
	size_t done = 0;
	while (done < o.conns) {
		uint16_t rx = ep->Poll();
		if (Connection *c = ep->Accept())
			peers.push_back({c});
		for (auto &p : peers) {
			if (p.done)
				continue;
			while (p.c->Recv(&m)) {
				if (!t0)
					t0 = Endpoint::now_ns();
				uint64_t idx = p.msgs;
				if (m.size() >= 8)
					memcpy(&idx, m.data(), 8);
				if (idx != p.msgs && in_order) {
					in_order = false;
					fprintf(stderr, "mltcp-dpdk: message %" PRIu64 " arrived as number %" PRIu64 "\n",
						idx, p.msgs);
				}
				if (o.sha)
					sha.Update(m);
				p.bytes += m.size();
				p.msgs++;
			}
			if (p.c->peer_closed() && !p.c->pending_messages()) {
				p.c->Close();
				p.done = true;
				done++;
			} else if (p.c->closed()) {
				Die(kExitFail, "connection failed after " + std::to_string(p.bytes) +
						       " bytes: " + p.c->error().message);
			}
		}
		if (Endpoint::now_ns() > deadline)
			Die(kExitFail, "timed out receiving");
		if (!rx && o.idle_us)
			usleep(o.idle_us);
	}
	double secs = t0 ? (Endpoint::now_ns() - t0) / 1e9 : 0;
	std::string hex = o.sha ? sha.Hex() : "-";
	uint64_t bytes = 0, msgs = 0;
	for (auto &p : peers) {
		CloseAndWait(*ep, p.c, o);
		bytes += p.bytes;
		msgs += p.msgs;
	}
	printf("RECEIVED bytes=%" PRIu64 " msgs=%" PRIu64 " seconds=%.3f in_order=%s sha256=%s\n",
	       bytes, msgs, secs, in_order ? "yes" : "no", hex.c_str());
	PrintConnStats("recv", *peers[0].c, *ep);
	MaybeHold(o);
	return in_order ? kExitOk : kExitFail;
}

int CmdPing(const Options &o, bool client)
{
	auto ep = OpenEndpoint(o);
	Connection *c = client ? ConnectOrDie(*ep, o) : AcceptOrDie(*ep, o);
	std::vector<uint8_t> m;
	uint64_t deadline = Endpoint::now_ns() + TimeoutNs(o);
	if (!client) {
		for (;;) {
			ep->Poll();
			while (c->Recv(&m))
				if (!c->Send(std::move(m), Endpoint::now_ns()).ok())
					Die(kExitFail, "pong: send failed");
			if (c->peer_closed())
				break;
			if (c->closed() || Endpoint::now_ns() > deadline)
				Die(kExitFail, "pong: " + c->error().message);
		}
		CloseAndWait(*ep, c, o);
		return kExitOk;
	}
	const uint64_t warmup = std::min<uint64_t>(1000, o.count / 10);
	std::vector<double> rtt_us;
	for (uint64_t i = 0; i < o.count + warmup; i++) {
		uint64_t t = Endpoint::now_ns();
		if (!c->Send(std::vector<uint8_t>(o.size, (uint8_t)i), t).ok())
			Die(kExitFail, "ping: send failed");
		if (!ep->PollUntil([&] { return c->Recv(&m) || c->closed(); }, TimeoutNs(o)) || c->closed())
			Die(kExitFail, "ping: no answer: " + c->error().message);
		if (i >= warmup)
			rtt_us.push_back((Endpoint::now_ns() - t) / 1e3);
	}
	std::sort(rtt_us.begin(), rtt_us.end());
	double med = rtt_us[rtt_us.size() / 2], p99 = rtt_us[rtt_us.size() * 99 / 100];
	CloseAndWait(*ep, c, o);
	printf("PING size=%" PRIu64 " count=%zu median_us=%.2f p99_us=%.2f\n", o.size, rtt_us.size(),
	       med, p99);
	return kExitOk;
}

#ifdef MLTCP_DPDK_HAVE_PROFILES
int CmdEmu(const Options &o)
{
	using namespace mltcp_workload;
	if (o.profile_file.empty() || o.profile.empty())
		Die(kExitUsage, "emu needs --profile-file F and --profile NAME");
	Profile p;
	try {
		auto all = load_profiles(o.profile_file);
		p = find_profile(all, o.profile, o.profile_file);
	} catch (const std::exception &e) {
		Die(kExitUsage, e.what());
	}
	if (p.bulk || p.conns != 1)
		Die(kExitUsage, "emu: profile '" + p.name +
					"' uses bulk or conns > 1, which the DPDK emulator does not support");
	auto ep = OpenEndpoint(o);
	Connection *c = ConnectOrDie(*ep, o);
	auto busy_until_us = [&](uint64_t t_us) {
		while (mltcp_workload::realtime_us() < t_us) {
			if (!ep->Poll() && o.idle_us)
				usleep(o.idle_us);
			if (c->closed())
				Die(kExitFail, "connection failed: " + c->error().message);
		}
	};
	if (o.start_at_us)
		busy_until_us(o.start_at_us);
	const uint64_t t_start = mltcp_workload::realtime_us();
	const uint64_t t0 = o.t0_us ? o.t0_us : t_start;
	std::vector<Iteration> recs;
	uint64_t prev_end = t_start, prev_comm_start = 0, msg_idx = 0;
	uint64_t prev_retx = 0, prev_lost = 0, prev_rtos = 0, prev_cnps = 0;	// --verbose
	for (uint64_t i = 0; i < o.iterations; i++) {
		Iteration r{};
		r.bytes = iteration_bytes(p, i);
		r.start_us = (int64_t)prev_end;
		uint64_t compute_from = (p.async && i > 0) ? prev_comm_start : prev_end;
		busy_until_us(std::max(compute_from + p.compute_us, prev_end));
		r.comm_start_us = (int64_t)mltcp_workload::realtime_us();
		if (o.hints)
			c->Hint(r.bytes, Endpoint::now_ns());
		for (uint32_t b = 0; b < p.buckets; b++) {
			if (b && p.bucket_gap_us)
				busy_until_us(mltcp_workload::realtime_us() + p.bucket_gap_us);
			uint64_t left = split_share(r.bytes, p.buckets, b);
			while (left) {
				uint64_t n = std::min<uint64_t>(left, o.msg_size);
				std::vector<uint8_t> m(n);
				if (n >= 8)	// the receiver checks message order
					memcpy(m.data(), &msg_idx, 8);
				Status st = c->Send(std::move(m), Endpoint::now_ns());
				if (st.code == Errc::kWouldBlock) {	// queue full: wait for acks
					if (!ep->Poll() && o.idle_us)
						usleep(o.idle_us);
					continue;
				}
				if (!st.ok())
					Die(kExitFail, "send: " + st.message);
				left -= n;
				msg_idx++;
			}
		}
		uint64_t wait_end = Endpoint::now_ns() + TimeoutNs(o);
		while (c->unacked_bytes() && !c->closed() && Endpoint::now_ns() < wait_end)
			if (!ep->Poll() && o.idle_us)
				usleep(o.idle_us);	// leave the CPU to the switch
		if (c->unacked_bytes() || c->closed())
			Die(kExitFail, "iteration " + std::to_string(i) + " not acknowledged: " +
					       c->error().message);
		r.comm_end_us = r.end_us = (int64_t)mltcp_workload::realtime_us();
		prev_end = (uint64_t)r.end_us;
		prev_comm_start = (uint64_t)r.comm_start_us;
		recs.push_back(r);
		if (o.verbose) {	// after the communication phase: not in its timing
			ConnStats s = c->Stats();
			printf("emu-iter i=%" PRIu64 " comm_us=%" PRIu64 " retx=%" PRIu64 " lost_detected=%" PRIu64
			       " rtos=%" PRIu64 " cwnd=%u srtt_us=%u gain=%.3f rate_mbps=%.1f cnps=%" PRIu64 "\n",
			       i, (uint64_t)(r.comm_end_us - r.comm_start_us), s.pkts_retx - prev_retx, s.fast_retx - prev_lost,
			       s.rtos - prev_rtos, s.cc.cwnd, s.srtt_us, s.cc.gain / 1024.0,
			       s.cc.rate_bps / 1e6, s.cnp_rx - prev_cnps);
			prev_cnps = s.cnp_rx;
			prev_retx = s.pkts_retx;
			prev_lost = s.fast_retx;
			prev_rtos = s.rtos;
		}
	}
	CloseAndWait(*ep, c, o);
	FILE *f = o.csv.empty() ? stdout : fopen(o.csv.c_str(), "w");
	if (!f)
		Die(kExitUsage, "cannot write --csv " + o.csv + ": " + strerror(errno));
	write_iteration_csv_header(f);
	write_iteration_csv_rows(f, o.job, recs, (int64_t)t0);
	if (f != stdout && fclose(f) != 0)
		Die(kExitUsage, "write error on " + o.csv);
	PrintConnStats("emu", *c, *ep);
	MaybeHold(o);
	return kExitOk;
}
#endif

}  // namespace

int main(int argc, char **argv)
{
	Options o = ParseArgs(argc, argv);
	setvbuf(stdout, nullptr, _IOLBF, 0);
	int rc;
	MakeCc(o);	// reject an unknown congestion control before starting DPDK
	if (o.cmd == "send")
		rc = CmdSend(o);
	else if (o.cmd == "recv")
		rc = CmdRecv(o);
	else if (o.cmd == "ping")
		rc = CmdPing(o, true);
	else if (o.cmd == "pong")
		rc = CmdPing(o, false);
	else if (o.cmd == "emu")
#ifdef MLTCP_DPDK_HAVE_PROFILES
		rc = CmdEmu(o);
#else
		Die(kExitUsage, "emu: built without the workload library (workload/)");
#endif
	else
		Die(kExitUsage, "unknown command '" + o.cmd + "' (send, recv, ping, pong, emu; see --help)");
	EalCleanup();
	return rc;
}
