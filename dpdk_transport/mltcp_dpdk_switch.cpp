// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// mltcp_dpdk_switch.cpp - a bottleneck switch for userspace experiments
// without hardware: forwards IPv4 packets between DPDK ports (e.g. one
// net_memif port per endpoint process) by destination address, learned
// from source addresses (unknown destinations are flooded).  One port is
// the bottleneck: its egress is served at --rate bits/s from a --buffer
// byte FIFO with tail drop, and ECN-capable packets are CE-marked RED-style
// on the instantaneous queue (probability 0 below K_min, rising linearly to
// P_max at K_max, 1 above), as DCQCN's switches do, decided as a packet
// arrives or, with --mark-on-dequeue, as it leaves.  Like DPDK's l2fwd, one
// run-to-completion loop, which may sleep until the next departure
// (--idle-us); differs from a hardware RED: no averaging of the queue
// length (DCQCN uses the instantaneous queue, and so do we).
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "dpdk_io.h"

using namespace mltcp_dpdk;

namespace {

constexpr uint16_t kRing = 1024;
constexpr uint32_t kPoolMbufs = 16383;
constexpr uint8_t kEcnMask = 0x03, kEcnCe = 0x03;
// A departure served late (the loop slept or was descheduled) may be made
// up for by this much, so that a sleeping switch still serves its rate
// (a sleep lasts ~40 us longer than asked here, even with 1 us timer slack).
constexpr uint64_t kLateDepartureNs = 100 * 1000;
volatile sig_atomic_t g_stop = 0;

struct Options {
	uint64_t rate_bps = 500000000;
	uint64_t buffer_bytes = 256 * 1024;
	uint64_t kmin = 20 * 1024, kmax = 200 * 1024;
	double pmax = 0.1;
	bool ecn = true;
	bool mark_on_dequeue = false;
	std::string bottleneck;	// port name
	uint16_t frame_room = 2048;
	uint32_t idle_us = 0;
	uint64_t seed = 1;
	std::vector<std::string> eal;
};

[[noreturn]] void Die(const std::string &m)
{
	fprintf(stderr, "mltcp-dpdk-switch: %s\n", m.c_str());
	exit(1);
}

uint64_t NowNs()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void Usage()
{
	printf("usage: mltcp-dpdk-switch --bottleneck PORT [options] -- EAL arguments with the ports\n"
	       "  --rate BPS        bottleneck egress rate (default 500e6)\n"
	       "  --buffer BYTES    bottleneck queue, tail drop above (default 262144)\n"
	       "  --kmin B --kmax B --pmax P   RED-style ECN marking (20 KiB, 200 KiB, 0.1)\n"
	       "  --no-ecn          never mark (tail drop only)\n"
	       "  --mark-on-dequeue decide the mark as a packet leaves, on the queue it leaves\n"
	       "                    (default: on arrival); the mark then does not wait out the queue\n"
	       "  --frame-room N    mbuf data room (default 2048)\n"
	       "  --idle-us N       sleep when idle, N us at most or until the next departure\n"
	       "                    (timer slack 1 us; default 0: busy poll)\n"
	       "Runs until SIGINT/SIGTERM, then prints counters.\n"
	       "example: mltcp-dpdk-switch --bottleneck net_memif2 --rate 300e6 -- --no-huge --no-pci \\\n"
	       "  -m 256 --file-prefix=sw --vdev=net_memif0,role=server,socket=/run/a.sock \\\n"
	       "  --vdev=net_memif1,role=server,socket=/run/b.sock --vdev=net_memif2,role=server,socket=/run/r.sock\n");
}

double Num(const char *opt, const char *v)
{
	char *end;
	double d = strtod(v, &end);
	if (*end || d < 0)
		Die(std::string("--") + opt + ": '" + v + "' is not a non-negative number");
	return d;
}

Options Parse(int argc, char **argv)
{
	Options o;
	int dash = argc;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			dash = i;
			break;
		}
	for (int i = dash + 1; i < argc; i++)
		o.eal.push_back(argv[i]);
	static const option lo[] = {{"rate", 1, 0, 'r'},   {"buffer", 1, 0, 'b'},
				    {"kmin", 1, 0, 'k'},   {"kmax", 1, 0, 'K'},
				    {"pmax", 1, 0, 'p'},   {"no-ecn", 0, 0, 'n'},
				    {"mark-on-dequeue", 0, 0, 'd'},
				    {"bottleneck", 1, 0, 'B'}, {"frame-room", 1, 0, 'f'},
				    {"idle-us", 1, 0, 'i'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
	int c;
	while ((c = getopt_long(dash, argv, "", lo, nullptr)) != -1) {
		switch (c) {
		case 'r': o.rate_bps = (uint64_t)Num("rate", optarg); break;
		case 'b': o.buffer_bytes = (uint64_t)Num("buffer", optarg); break;
		case 'k': o.kmin = (uint64_t)Num("kmin", optarg); break;
		case 'K': o.kmax = (uint64_t)Num("kmax", optarg); break;
		case 'p': o.pmax = Num("pmax", optarg); break;
		case 'n': o.ecn = false; break;
		case 'd': o.mark_on_dequeue = true; break;
		case 'B': o.bottleneck = optarg; break;
		case 'f': o.frame_room = (uint16_t)Num("frame-room", optarg); break;
		case 'i': o.idle_us = (uint32_t)Num("idle-us", optarg); break;
		case 'h': Usage(); exit(0);
		default: Die("bad option (see --help)");
		}
	}
	if (o.bottleneck.empty())
		Die("--bottleneck PORT is required (see --help)");
	if (o.rate_bps < 1000000 || o.rate_bps > 100000000000ULL)
		Die("--rate must be in [1e6, 1e11] bits/s");
	if (o.kmin > o.kmax || o.pmax > 1)
		Die("need kmin <= kmax and pmax in [0, 1]");
	if (o.buffer_bytes < 2 * o.frame_room)
		Die("--buffer must hold at least two frames");
	return o;
}

struct PortState {
	uint16_t id;
	std::string name;
	uint64_t rx = 0, tx = 0, tx_fail = 0;
};

struct Bottleneck {
	std::deque<rte_mbuf *> q;
	uint64_t bytes = 0, next_departure_ns = 0;
	uint64_t enq = 0, drops = 0, marks = 0, max_bytes = 0;
	bool head_judged = false;	// --mark-on-dequeue: the head's mark is decided
};

void StartPort(uint16_t pid, rte_mempool *pool)
{
	rte_eth_conf conf{};
	if (rte_eth_dev_configure(pid, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(pid, 0, kRing, rte_eth_dev_socket_id(pid), nullptr, pool) != 0 ||
	    rte_eth_tx_queue_setup(pid, 0, kRing, rte_eth_dev_socket_id(pid), nullptr) != 0 ||
	    rte_eth_dev_start(pid) != 0)
		Die("cannot start port " + std::to_string(pid) + ": " + rte_strerror(rte_errno));
	rte_eth_promiscuous_enable(pid);
}

void OnSignal(int) { g_stop = 1; }

// Nothing arrived and nothing left: without --idle-us, yield when the queue
// is empty and spin for the next departure otherwise (exact departures,
// one core); with it, sleep until the next departure or for idle_us,
// whichever is sooner (departures up to a few us late, the CPU left to the
// endpoints).
void Idle(const Options &o, const Bottleneck &b)
{
	if (!o.idle_us) {
		if (b.q.empty())
			sched_yield();	// let the endpoints run on a crowded host
		return;
	}
	uint64_t sleep_ns = (uint64_t)o.idle_us * 1000;
	if (!b.q.empty()) {
		uint64_t now = NowNs();
		if (b.next_departure_ns <= now)
			return;
		sleep_ns = std::min(sleep_ns, b.next_departure_ns - now);
	}
	timespec ts{(time_t)(sleep_ns / 1000000000ULL), (long)(sleep_ns % 1000000000ULL)};
	nanosleep(&ts, nullptr);
}

}  // namespace

int main(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		Usage();
		return 0;
	}
	Options o = Parse(argc, argv);
	std::string err = EalInit(o.eal);
	if (!err.empty())
		Die(err);
	if (o.idle_us)	// the default 50 us slack would delay departures
		prctl(PR_SET_TIMERSLACK, 1000UL);
	signal(SIGINT, OnSignal);
	signal(SIGTERM, OnSignal);
	rte_mempool *pool = rte_pktmbuf_pool_create("mltcp_switch", kPoolMbufs, 256, 0,
						    (uint16_t)(o.frame_room + RTE_PKTMBUF_HEADROOM),
						    (int)rte_socket_id());
	if (!pool)
		Die("cannot create the mbuf pool: give the EAL more memory (-m)");
	std::vector<PortState> ports;
	uint16_t pid;
	int bott = -1;
	RTE_ETH_FOREACH_DEV(pid)
	{
		char name[RTE_ETH_NAME_MAX_LEN];
		rte_eth_dev_get_name_by_port(pid, name);
		StartPort(pid, pool);
		if (o.bottleneck == name)
			bott = (int)ports.size();
		ports.push_back({pid, name});
	}
	if (ports.size() < 2)
		Die("need at least two ports (--vdev=...), have: " + PortNames());
	if (bott < 0)
		Die("bottleneck port '" + o.bottleneck + "' does not exist; ports: " + PortNames());
	printf("mltcp-dpdk-switch: %zu ports, bottleneck %s at %.1f Mbit/s, buffer %" PRIu64
	       " B, ECN %s (K_min %" PRIu64 ", K_max %" PRIu64 ", P_max %.2f)\n",
	       ports.size(), o.bottleneck.c_str(), o.rate_bps / 1e6, o.buffer_bytes,
	       o.ecn ? "on" : "off", o.kmin, o.kmax, o.pmax);
	fflush(stdout);

	std::map<uint32_t, size_t> where;	// learned: IPv4 -> port index
	Bottleneck b;
	std::mt19937_64 rng(o.seed);
	std::uniform_real_distribution<double> u(0, 1);
	auto send_one = [&](size_t out, rte_mbuf *m) {
		if (rte_eth_tx_burst(ports[out].id, 0, &m, 1) == 1) {
			ports[out].tx++;
		} else {
			ports[out].tx_fail++;
			rte_pktmbuf_free(m);
		}
	};
	// RED-style CE mark of an ECN-capable packet on the queue it sees.
	auto maybe_mark = [&](rte_mbuf *m) {
		auto *eth = rte_pktmbuf_mtod(m, rte_ether_hdr *);
		auto *ip = (rte_ipv4_hdr *)(eth + 1);
		uint8_t ecn = ip->type_of_service & kEcnMask;
		if (!o.ecn || ecn == 0 || ecn == kEcnCe || b.bytes <= o.kmin)
			return;
		double p = b.bytes >= o.kmax ? 1.0
					     : o.pmax * (double)(b.bytes - o.kmin) /
						       (double)(o.kmax - o.kmin + 1);
		if (u(rng) < p) {
			ip->type_of_service |= kEcnCe;
			ip->hdr_checksum = 0;
			ip->hdr_checksum = rte_ipv4_cksum(ip);
			b.marks++;
		}
	};
	auto enqueue_bottleneck = [&](rte_mbuf *m) {
		uint32_t len = rte_pktmbuf_pkt_len(m);
		if (b.bytes + len > o.buffer_bytes) {
			b.drops++;
			rte_pktmbuf_free(m);
			return;
		}
		if (!o.mark_on_dequeue)
			maybe_mark(m);
		b.q.push_back(m);
		b.bytes += len;
		b.enq++;
		b.max_bytes = std::max(b.max_bytes, b.bytes);
	};

	rte_mbuf *pkts[kBurst];
	while (!g_stop) {
		bool busy = false;
		for (size_t in = 0; in < ports.size(); in++) {
			uint16_t n = rte_eth_rx_burst(ports[in].id, 0, pkts, kBurst);
			busy |= n > 0;
			ports[in].rx += n;
			for (uint16_t i = 0; i < n; i++) {
				rte_mbuf *m = pkts[i];
				auto *eth = rte_pktmbuf_mtod(m, rte_ether_hdr *);
				if (rte_pktmbuf_data_len(m) < sizeof(rte_ether_hdr) + sizeof(rte_ipv4_hdr) ||
				    eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4)) {
					rte_pktmbuf_free(m);
					continue;
				}
				auto *ip = (rte_ipv4_hdr *)(eth + 1);
				where[rte_be_to_cpu_32(ip->src_addr)] = in;
				auto it = where.find(rte_be_to_cpu_32(ip->dst_addr));
				if (it == where.end()) {	// flood (not through the queue)
					for (size_t out = 0; out < ports.size(); out++) {
						if (out == in)
							continue;
						rte_mbuf *c = rte_pktmbuf_copy(m, pool, 0, UINT32_MAX);
						if (c)
							send_one(out, c);
					}
					rte_pktmbuf_free(m);
				} else if (it->second == in) {
					rte_pktmbuf_free(m);
				} else if ((int)it->second == bott) {
					enqueue_bottleneck(m);
				} else {
					send_one(it->second, m);
				}
			}
		}
		// Serve the bottleneck at its rate (virtual departure times).
		uint64_t now = NowNs();
		while (!b.q.empty() && now >= b.next_departure_ns) {
			rte_mbuf *m = b.q.front();
			if (o.mark_on_dequeue && !b.head_judged)
				maybe_mark(m);	// once, not again when the tx is retried
			b.head_judged = true;
			uint32_t len = rte_pktmbuf_pkt_len(m);
			uint64_t wire = (uint64_t)(len + 24) * 8;	// + preamble, IFG, FCS
			if (rte_eth_tx_burst(ports[bott].id, 0, &m, 1) != 1)
				break;	// receiver ring full: retry
			b.q.pop_front();
			b.head_judged = false;
			b.bytes -= len;
			ports[bott].tx++;
			uint64_t floor = now > kLateDepartureNs ? now - kLateDepartureNs : 0;
			b.next_departure_ns = std::max(b.next_departure_ns, floor) +
					      wire * 1000000000ULL / o.rate_bps;
			busy = true;
		}
		if (!busy)
			Idle(o, b);
	}
	printf("mltcp-dpdk-switch: bottleneck enqueued=%" PRIu64 " dropped=%" PRIu64 " marked=%" PRIu64
	       " max_queue_bytes=%" PRIu64 "\n",
	       b.enq, b.drops, b.marks, b.max_bytes);
	for (auto &p : ports)
		printf("  port %s rx=%" PRIu64 " tx=%" PRIu64 " tx_fail=%" PRIu64 "\n", p.name.c_str(), p.rx,
		       p.tx, p.tx_fail);
	for (rte_mbuf *m : b.q)
		rte_pktmbuf_free(m);
	for (auto &p : ports) {
		rte_eth_dev_stop(p.id);
		rte_eth_dev_close(p.id);
	}
	EalCleanup();
	return 0;
}
