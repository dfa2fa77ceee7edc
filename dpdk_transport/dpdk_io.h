// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// dpdk_io.h - the small DPDK I/O layer under the transport: EAL start-up
// with pass-through arguments, one port (by name, e.g. net_memif0) with one
// rx/tx queue pair and its mbuf pool, and Ethernet/IPv4/UDP framing of the
// engine's packets in rx/tx bursts.  Addresses are IPv4; MAC addresses are
// derived from them (02:00:a.b.c.d), so no ARP is needed on point-to-point
// and switched virtual links.  Optional loss/reorder injection on transmit
// for the integration tests.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "engine.h"

struct rte_mbuf;
struct rte_mempool;

namespace mltcp_dpdk {

constexpr uint16_t kUdpPort = 7719;	// the transport's UDP port
constexpr uint16_t kBurst = 32;

// Starts the EAL once per process with argv0 + args.  Returns "" or a clear
// error (not root, bad argument, ...).
std::string EalInit(const std::vector<std::string> &args);
void EalCleanup();

// "10.0.0.1" -> host-order address; false if malformed.
bool ParseIpv4(const std::string &s, uint32_t *out);
std::string Ipv4ToString(uint32_t a);

struct PortOptions {
	std::string name;	// DPDK device name, e.g. net_memif0, net_af_packet0
	uint32_t local_ip = 0;
	uint16_t frame_room = 2048;	// mbuf data room (bytes)
	uint32_t nb_mbufs = 8191;
	uint16_t rx_desc = 1024, tx_desc = 1024;
	double inject_loss = 0;		// drop this fraction of transmitted packets
	double inject_reorder = 0;	// hold this fraction back behind the next one
	uint64_t seed = 1;
	bool ecn = true;		// set ECT(0) on packets the engine asks for
};

// One received packet of ours: the UDP payload, valid until the next Receive().
struct RxPacket {
	uint32_t src_addr;	// IPv4, host order
	const uint8_t *payload;
	uint32_t len;
	bool ce;		// the IP header's ECN field says Congestion Experienced
};

struct PortStats {
	uint64_t rx_pkts = 0, tx_pkts = 0, rx_not_ours = 0, rx_bad_ip = 0;
	uint64_t injected_drops = 0, injected_reorders = 0, tx_full = 0;
};

class Port : public PacketSink {
      public:
	// Throws std::runtime_error with a clear message.
	explicit Port(const PortOptions &o);
	~Port() override;
	Port(const Port &) = delete;
	Port &operator=(const Port &) = delete;

	bool Send(const OutPacket &p) override;
	// Receives up to one burst; the packets that are ours (UDP to our port
	// and address, checksums good) go to out[], valid until the next call.
	// Returns how many; the caller hands them to the protocol engine.
	uint16_t Receive(RxPacket out[kBurst]);
	void Flush();
	// True when the port checks UDP checksums itself (engine skips its own).
	bool checksum_offload() const { return csum_offload_; }
	uint16_t max_payload() const;	// engine MSS that fits one mbuf
	const PortStats &stats() const { return st_; }
	uint16_t port_id() const { return port_id_; }

      private:
	void TxOne(rte_mbuf *m);
	PortOptions o_;
	uint16_t port_id_ = 0;
	rte_mempool *pool_ = nullptr;
	bool started_ = false;
	bool is_memif_ = false;	// stopped on the EAL interrupt thread
	bool csum_offload_ = false, ipcsum_offload_ = false;
	rte_mbuf *tx_[kBurst * 2];
	uint16_t tx_n_ = 0;
	rte_mbuf *rx_[kBurst];		// the last burst, freed by the next Receive()
	uint16_t rx_n_ = 0;
	std::vector<uint8_t> rx_linear_;	// copies of chained mbufs, kBurst slots
	rte_mbuf *held_ = nullptr;	// reorder injection
	uint32_t held_flushes_ = 0;
	std::mt19937_64 rng_;
	PortStats st_;
};

// Lists the ports DPDK knows, for error messages.
std::string PortNames();

}  // namespace mltcp_dpdk
