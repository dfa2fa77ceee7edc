// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// dpdk_io.cpp - EAL start-up, port setup and Ethernet/IPv4/UDP framing
// (dpdk_io.h), in the style of DPDK's skeleton/l2fwd examples.
// rte_intr_instance_alloc() and its accessors (StopMemifPort) are still
// "experimental" in DPDK 22.11, though memif and every PMD use them.
#define ALLOW_EXPERIMENTAL_API
#include "dpdk_io.h"

#include <arpa/inet.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_interrupts.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

namespace mltcp_dpdk {

namespace {
constexpr uint32_t kMempoolCache = 256;
constexpr uint8_t kIpTtl = 64;
constexpr uint32_t kHeldMaxFlushes = 4;
constexpr uint8_t kEcnMask = 0x03, kEcnEct0 = 0x02, kEcnCe = 0x03;
constexpr uint16_t kHdrBytes = sizeof(rte_ether_hdr) + sizeof(rte_ipv4_hdr) + sizeof(rte_udp_hdr);
constexpr auto kStopWait = std::chrono::seconds(5);
bool g_eal_up = false;

struct StopRequest {
	uint16_t port_id;
	int event_fd;
	std::atomic<bool> done{false};
};

void StopOnInterruptThread(void *arg)
{
	auto *r = static_cast<StopRequest *>(arg);
	uint64_t count;
	if (read(r->event_fd, &count, sizeof(count)) != sizeof(count))
		return;	// not our wake-up
	rte_eth_dev_stop(r->port_id);
	r->done.store(true, std::memory_order_release);
}

// Stops a memif port on the EAL interrupt thread.  memif handles its peer's
// disconnect on that thread and rte_eth_dev_stop() runs the same teardown
// (memif_disconnect) with no lock around the shared regions, so when both
// ends exit together the regions are freed twice and the process crashes in
// the EAL heap (DPDK 22.11; seen once in ~40 memif transfers with each
// process on its own core).  A callback on an eventfd of our own runs on the
// interrupt thread, which serialises the two; it is unregistered before we
// return.  (Not an EAL alarm: rte_eal_cleanup() frees the alarm's handle
// while the interrupt thread still watches it, and a late wake-up then
// crashes the exiting process.)
void StopMemifPort(uint16_t port_id)
{
	StopRequest req;
	req.port_id = port_id;
	req.event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	rte_intr_handle *h = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
	const uint64_t one = 1;
	if (req.event_fd < 0 || !h || rte_intr_fd_set(h, req.event_fd) != 0 ||
	    rte_intr_type_set(h, RTE_INTR_HANDLE_EXT) != 0 ||
	    rte_intr_callback_register(h, StopOnInterruptThread, &req) != 0) {
		rte_eth_dev_stop(port_id);	// no interrupt thread to use
	} else {
		if (write(req.event_fd, &one, sizeof(one)) == sizeof(one)) {
			const auto deadline = std::chrono::steady_clock::now() + kStopWait;
			while (!req.done.load(std::memory_order_acquire) &&
			       std::chrono::steady_clock::now() < deadline)
				std::this_thread::sleep_for(std::chrono::milliseconds(1));
		}
		// -EAGAIN while the callback runs; afterwards it cannot run again.
		while (rte_intr_callback_unregister(h, StopOnInterruptThread, &req) == -EAGAIN)
			std::this_thread::sleep_for(std::chrono::milliseconds(1));
		if (!req.done.load(std::memory_order_acquire))
			rte_eth_dev_stop(port_id);
	}
	rte_intr_instance_free(h);
	if (req.event_fd >= 0)
		close(req.event_fd);
}

void MacOf(uint32_t ip, rte_ether_addr *mac)
{
	mac->addr_bytes[0] = 0x02;	// locally administered, unicast
	mac->addr_bytes[1] = 0x00;
	mac->addr_bytes[2] = (uint8_t)(ip >> 24);
	mac->addr_bytes[3] = (uint8_t)(ip >> 16);
	mac->addr_bytes[4] = (uint8_t)(ip >> 8);
	mac->addr_bytes[5] = (uint8_t)ip;
}
}  // namespace

std::string EalInit(const std::vector<std::string> &args)
{
	if (g_eal_up)
		return "";
	if (geteuid() != 0)
		return "DPDK needs root here (memif sockets, AF_XDP/AF_PACKET and the EAL's "
		       "memory setup): run as root, e.g. with sudo";
	std::vector<std::string> store;
	store.push_back("mltcp-dpdk");
	store.insert(store.end(), args.begin(), args.end());
	std::vector<char *> argv;
	for (auto &s : store)
		argv.push_back(s.data());
	argv.push_back(nullptr);
	int ret = rte_eal_init((int)store.size(), argv.data());
	if (ret < 0) {
		std::string joined;
		for (auto &a : args)
			joined += " " + a;
		return "DPDK EAL initialisation failed (" + std::string(rte_strerror(rte_errno)) +
		       ") with arguments:" + joined +
		       "\n  on this machine use e.g. --no-huge --no-pci -m 256 --file-prefix=<unique> "
		       "--vdev=net_memif0,role=server; see the EAL messages above";
	}
	g_eal_up = true;
	return "";
}

void EalCleanup()
{
	if (g_eal_up)
		rte_eal_cleanup();
	g_eal_up = false;
}

bool ParseIpv4(const std::string &s, uint32_t *out)
{
	in_addr a;
	if (inet_pton(AF_INET, s.c_str(), &a) != 1)
		return false;
	*out = ntohl(a.s_addr);
	return true;
}

std::string Ipv4ToString(uint32_t a)
{
	return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 255) + "." +
	       std::to_string((a >> 8) & 255) + "." + std::to_string(a & 255);
}

std::string PortNames()
{
	std::string s;
	uint16_t pid;
	RTE_ETH_FOREACH_DEV(pid)
	{
		char name[RTE_ETH_NAME_MAX_LEN];
		if (rte_eth_dev_get_name_by_port(pid, name) == 0)
			s += (s.empty() ? "" : ", ") + std::string(name);
	}
	return s.empty() ? "none (add one with --vdev=..., e.g. --vdev=net_memif0)" : s;
}

Port::Port(const PortOptions &o) : o_(o), rng_(o.seed)
{
	if (rte_eth_dev_get_port_by_name(o.name.c_str(), &port_id_) != 0)
		throw std::runtime_error("port '" + o.name + "' does not exist; DPDK has: " +
					 PortNames());
	std::string pool_name = "mltcp_pool_" + std::to_string(port_id_);
	pool_ = rte_pktmbuf_pool_create(pool_name.c_str(), o.nb_mbufs, kMempoolCache, 0,
					(uint16_t)(o.frame_room + RTE_PKTMBUF_HEADROOM),
					rte_eth_dev_socket_id(port_id_));
	if (!pool_)
		throw std::runtime_error("cannot create the mbuf pool (" +
					 std::string(rte_strerror(rte_errno)) +
					 "): give the EAL more memory, e.g. -m 256");
	rte_eth_dev_info info;
	int ret = rte_eth_dev_info_get(port_id_, &info);
	if (ret != 0)
		throw std::runtime_error("cannot query port " + o.name + ": " + rte_strerror(-ret));
	rte_eth_conf conf{};
	const uint64_t tx_csum = RTE_ETH_TX_OFFLOAD_UDP_CKSUM | RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
	const uint64_t rx_csum = RTE_ETH_RX_OFFLOAD_UDP_CKSUM | RTE_ETH_RX_OFFLOAD_IPV4_CKSUM;
	if ((info.tx_offload_capa & tx_csum) == tx_csum &&
	    (info.rx_offload_capa & rx_csum) == rx_csum) {
		conf.txmode.offloads |= tx_csum;
		conf.rxmode.offloads |= rx_csum;
		csum_offload_ = ipcsum_offload_ = true;
	}
	ret = rte_eth_dev_configure(port_id_, 1, 1, &conf);
	if (ret != 0)
		throw std::runtime_error("cannot configure port " + o.name + ": " + rte_strerror(-ret));
	uint16_t rxd = o.rx_desc, txd = o.tx_desc;
	rte_eth_dev_adjust_nb_rx_tx_desc(port_id_, &rxd, &txd);
	int sock = rte_eth_dev_socket_id(port_id_);
	rte_eth_rxconf rxc = info.default_rxconf;
	rxc.offloads = conf.rxmode.offloads;
	ret = rte_eth_rx_queue_setup(port_id_, 0, rxd, sock, &rxc, pool_);
	if (ret == 0) {
		rte_eth_txconf txc = info.default_txconf;
		txc.offloads = conf.txmode.offloads;
		ret = rte_eth_tx_queue_setup(port_id_, 0, txd, sock, &txc);
	}
	if (ret != 0)
		throw std::runtime_error("cannot set up queues of port " + o.name + ": " +
					 rte_strerror(-ret));
	is_memif_ = info.driver_name && !strcmp(info.driver_name, "net_memif");
	ret = rte_eth_dev_start(port_id_);
	if (ret != 0)
		throw std::runtime_error("cannot start port " + o.name + ": " + rte_strerror(-ret));
	started_ = true;
	rte_eth_promiscuous_enable(port_id_);	// derived MACs are not the port's own
}

Port::~Port()
{
	for (uint16_t i = 0; i < rx_n_; i++)
		rte_pktmbuf_free(rx_[i]);
	if (held_)
		rte_pktmbuf_free(held_);
	for (uint16_t i = 0; i < tx_n_; i++)
		rte_pktmbuf_free(tx_[i]);
	if (started_) {
		if (is_memif_)
			StopMemifPort(port_id_);
		else
			rte_eth_dev_stop(port_id_);
		rte_eth_dev_close(port_id_);
	}
	if (pool_)
		rte_mempool_free(pool_);
}

uint16_t Port::max_payload() const
{
	return (uint16_t)(o_.frame_room - kHdrBytes - sizeof(WireHeader));
}

void Port::Flush()
{
	// A held-back packet leaves behind later ones, or after a few polls
	// if none come (a window-limited sender must not stall on it).
	if (held_ && ++held_flushes_ > kHeldMaxFlushes && tx_n_ < kBurst * 2) {
		tx_[tx_n_++] = held_;
		held_ = nullptr;
	}
	if (!tx_n_)
		return;
	uint16_t sent = rte_eth_tx_burst(port_id_, 0, tx_, tx_n_);
	st_.tx_pkts += sent;
	if (sent < tx_n_)
		memmove(tx_, tx_ + sent, (tx_n_ - sent) * sizeof(tx_[0]));
	tx_n_ -= sent;
}

void Port::TxOne(rte_mbuf *m)
{
	tx_[tx_n_++] = m;
	if (tx_n_ >= kBurst)
		Flush();
}

bool Port::Send(const OutPacket &p)
{
	if (tx_n_ >= kBurst) {
		Flush();
		if (tx_n_ >= kBurst) {
			st_.tx_full++;
			return false;
		}
	}
	rte_mbuf *m = rte_pktmbuf_alloc(pool_);
	if (!m) {
		st_.tx_full++;
		return false;
	}
	uint16_t wire_len = (uint16_t)(sizeof(WireHeader) + p.hdr.payload_len);
	uint16_t total = (uint16_t)(kHdrBytes + wire_len);
	uint8_t *d = (uint8_t *)rte_pktmbuf_append(m, total);
	if (!d) {
		rte_pktmbuf_free(m);
		throw std::logic_error("packet larger than the mbuf: mss above max_payload()");
	}
	auto *eth = (rte_ether_hdr *)d;
	auto *ip = (rte_ipv4_hdr *)(eth + 1);
	auto *udp = (rte_udp_hdr *)(ip + 1);
	MacOf(p.peer_addr, &eth->dst_addr);
	MacOf(o_.local_ip, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = (p.ect && o_.ecn) ? kEcnEct0 : 0;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(total - sizeof(rte_ether_hdr)));
	ip->packet_id = 0;
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = kIpTtl;
	ip->next_proto_id = IPPROTO_UDP;
	ip->hdr_checksum = 0;
	ip->src_addr = rte_cpu_to_be_32(o_.local_ip);
	ip->dst_addr = rte_cpu_to_be_32(p.peer_addr);
	udp->src_port = rte_cpu_to_be_16(kUdpPort);
	udp->dst_port = rte_cpu_to_be_16(kUdpPort);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(sizeof(rte_udp_hdr) + wire_len));
	udp->dgram_cksum = 0;	// 0: none; the engine's checksum covers the payload
	Serialize(p.hdr, p.payload, (uint8_t *)(udp + 1), !csum_offload_);
	if (csum_offload_) {
		m->l2_len = sizeof(rte_ether_hdr);
		m->l3_len = sizeof(rte_ipv4_hdr);
		m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_UDP_CKSUM;
		udp->dgram_cksum = rte_ipv4_phdr_cksum(ip, m->ol_flags);
	} else {
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	}
	// Fault injection for the tests: the engine sees these as network loss.
	if (o_.inject_loss > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < o_.inject_loss) {
		st_.injected_drops++;
		rte_pktmbuf_free(m);
		return true;
	}
	if (o_.inject_reorder > 0) {
		if (held_) {
			TxOne(m);
			TxOne(held_);
			held_ = nullptr;
			return true;
		}
		if (std::uniform_real_distribution<double>(0, 1)(rng_) < o_.inject_reorder) {
			st_.injected_reorders++;
			held_ = m;
			held_flushes_ = 0;
			return true;
		}
	}
	TxOne(m);
	return true;
}

uint16_t Port::Receive(RxPacket out[kBurst])
{
	constexpr uint32_t kLinearSlot = 65536;	// largest packet a slot holds
	for (uint16_t i = 0; i < rx_n_; i++)
		rte_pktmbuf_free(rx_[i]);
	rx_n_ = 0;
	rte_mbuf *pkts[kBurst];
	uint16_t n = rte_eth_rx_burst(port_id_, 0, pkts, kBurst), ours = 0;
	for (uint16_t i = 0; i < n; i++) {
		rte_mbuf *m = pkts[i];
		st_.rx_pkts++;
		uint32_t len = rte_pktmbuf_pkt_len(m);
		const uint8_t *d = nullptr;
		if (rte_pktmbuf_is_contiguous(m)) {
			d = rte_pktmbuf_mtod(m, const uint8_t *);
		} else if (len <= kLinearSlot) {
			if (rx_linear_.empty())
				rx_linear_.resize((size_t)kBurst * kLinearSlot);
			d = (const uint8_t *)rte_pktmbuf_read(m, 0, len,
							      &rx_linear_[(size_t)ours * kLinearSlot]);
		}
		if (!d || len < kHdrBytes) {
			st_.rx_not_ours++;
			rte_pktmbuf_free(m);
			continue;
		}
		auto *eth = (const rte_ether_hdr *)d;
		auto *ip = (const rte_ipv4_hdr *)(eth + 1);
		auto *udp = (const rte_udp_hdr *)(ip + 1);
		if (eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
		    ip->version_ihl != RTE_IPV4_VHL_DEF || ip->next_proto_id != IPPROTO_UDP ||
		    udp->dst_port != rte_cpu_to_be_16(kUdpPort) ||
		    rte_be_to_cpu_32(ip->dst_addr) != o_.local_ip) {
			st_.rx_not_ours++;
			rte_pktmbuf_free(m);
			continue;
		}
		bool ip_ok, l4_ok = true;
		if (ipcsum_offload_) {
			ip_ok = (m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) != RTE_MBUF_F_RX_IP_CKSUM_BAD;
			l4_ok = (m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) != RTE_MBUF_F_RX_L4_CKSUM_BAD;
		} else {
			ip_ok = rte_raw_cksum(ip, sizeof(*ip)) == 0xffff;
		}
		uint16_t ip_len = rte_be_to_cpu_16(ip->total_length);
		if (!ip_ok || !l4_ok || ip_len + sizeof(rte_ether_hdr) > len ||
		    ip_len < sizeof(rte_ipv4_hdr) + sizeof(rte_udp_hdr)) {
			st_.rx_bad_ip++;
			rte_pktmbuf_free(m);
			continue;
		}
		out[ours] = {rte_be_to_cpu_32(ip->src_addr), (const uint8_t *)(udp + 1),
			     (uint32_t)(ip_len - sizeof(rte_ipv4_hdr) - sizeof(rte_udp_hdr)),
			     (ip->type_of_service & kEcnMask) == kEcnCe};
		rx_[ours++] = m;	// its data stays valid until the next call
	}
	rx_n_ = ours;
	return ours;
}

}  // namespace mltcp_dpdk
