// roce_observer.h - the tc ingress RoCEv2 observer (bpf/roce_observer.bpf.c):
// attach/detach with pinned per-QP CE and CNP counters, and the DCQCN
// notification point that turns CE counts into real RoCEv2 CNP packets.
#pragma once

#include <cstdint>
#include <string>

#include "mltcp.hpp"

namespace mltcp_rdma {

// Loads the observer, attaches it at tc ingress of `iface` and pins its
// maps as DIR/ce_count, DIR/cnp_count, DIR/stats.  Throws RdmaError.
void ObserverAttach(const std::string &iface, const std::string &pin_dir);
// Removes the tc filter and the pins (tolerates leftovers of a crashed run).
void ObserverDetach(const std::string &iface, const std::string &pin_dir);
// "roce=N ce=N cnp=N" from DIR/stats.
std::string ObserverStats(const std::string &pin_dir);

// Reads a pinned QPN -> u64 counter map.
class QpCounter {
 public:
	explicit QpCounter(const std::string &pinned_map);
	~QpCounter();
	uint64_t Read(uint32_t qpn) const;

 private:
	int fd_ = -1;
};

// Notification point of one QP: CE counts in, RoCEv2 CNPs (BTH opcode 0x81,
// UDP 4791, correct ICRC; built by BuildCnp in roce_wire.h, sent through a
// raw IPv4 socket, so CAP_NET_RAW is needed) out, at most one per
// cnp_interval_us (core/mltcp_dcqcn.h).
class CnpSender {
 public:
	// ce_base: the QP's CE count at connection time (QP numbers are reused;
	// an earlier QP's marks are not this one's).
	CnpSender(const mltcp::DcqcnParams &p, uint32_t local_ip, uint32_t peer_ip,
		  uint32_t peer_qpn, uint64_t ce_base);
	~CnpSender();
	// ce_total: cumulative CE count of the local QP.  Returns CNPs sent now.
	int OnCeCount(uint64_t ce_total, uint64_t now_us);
	uint64_t sent() const { return sent_; }
	uint64_t ce_seen() const { return ce_seen_ - ce_base_; }
	uint64_t first_ce_us() const { return first_ce_us_; }
	uint64_t first_cnp_us() const { return first_cnp_us_; }

 private:
	mltcp::DcqcnReceiver np_;
	int fd_ = -1;
	uint32_t local_ip_ = 0, peer_ip_, peer_qpn_;
	uint64_t ce_base_ = 0, ce_seen_ = 0, sent_ = 0, first_ce_us_ = 0, first_cnp_us_ = 0;
};

}  // namespace mltcp_rdma
