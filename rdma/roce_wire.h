// roce_wire.h - RoCEv2 packets as bytes: the invariant CRC (ICRC), the CNP
// that the notification point sends, a parser for captured Ethernet frames
// and a reader of classic pcap files.  Pure functions without device or
// socket, so the host unit tests (tests/rdma/roce_wire_test.cpp) cover them
// and the guest test checks them against soft-RoCE's packets on the wire.
//
// ICRC (InfiniBand Architecture Specification, Annex A17 "RoCEv2", A17.8):
// the CRC-32 of Ethernet (polynomial 0x04C11DB7, reflected, initial value
// and final XOR all ones) over
//   8 bytes 0xFF                    (stand-in for the LRH of native IB)
//   IPv4 header, with TOS (DSCP + ECN), TTL and header checksum set to ones
//   UDP header, with the checksum set to ones
//   BTH, with its fifth byte (FECN, BECN, 6 reserved bits) set to ones
//   the rest of the transport headers, payload and pad bytes
// and it is carried after the payload least significant byte first (as
// Ethernet's FCS).  Byte for byte what rxe does (drivers/infiniband/sw/rxe/
// rxe_icrc.c: its seed 0xdebb20e3 is the CRC state after the 8 bytes of
// 0xFF, and it stores ~crc as a little-endian u32).  IPv4 only, without IP
// options (rxe sends none; RoCEv2 over IPv6 masks other fields).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace mltcp_rdma {

constexpr uint16_t kRoceV2Port = 4791;
constexpr uint8_t kBthOpcodeCnp = 0x81;
constexpr size_t kEthHeaderBytes = 14;
constexpr size_t kIpv4HeaderBytes = 20;
constexpr size_t kUdpHeaderBytes = 8;
constexpr size_t kBthBytes = 12;
constexpr size_t kIcrcBytes = 4;
// IPv4 + UDP + BTH + 16 reserved bytes + ICRC (A17.9.3).
constexpr size_t kCnpPacketBytes = kIpv4HeaderBytes + kUdpHeaderBytes + kBthBytes + 16 + kIcrcBytes;

// CRC-32 of Ethernet / zlib, continued from `crc` (0 to start):
// Crc32(0, "123456789", 9) == 0xcbf43926.
uint32_t Crc32(uint32_t crc, const uint8_t *p, size_t n);

// ICRC of an IPv4 RoCEv2 packet.  `ip` points at the IPv4 header (IHL 5),
// `len` counts from there to the end of the payload and pad bytes, without
// the 4 ICRC bytes (so len = IP total length - 4).  Requires len >= 40
// (IP + UDP + BTH).
uint32_t RoceV2Icrc(const uint8_t *ip, size_t len);
// The ICRC's 4 bytes on the wire (least significant byte first).
void StoreIcrc(uint8_t *p, uint32_t icrc);
uint32_t LoadIcrc(const uint8_t *p);

// The Internet checksum of an IPv4 header (RFC 791/1071), to store as is.
uint16_t Ipv4HeaderChecksum(const uint8_t *ip, size_t len);

// A RoCEv2 CNP (A17.9.3): BTH opcode 0x81, P_Key, BECN set, the QP that
// gets slowed down as destination QP, PSN 0, 16 reserved bytes, ICRC.
// Addresses in network byte order.  IP ID 0 with DF, UDP checksum 0 (A17.4
// allows it for RoCEv2): every byte the ICRC covers is fixed here, so the
// packet must go out as built (a raw socket with IP_HDRINCL; Linux keeps an
// ID of 0 when DF is set and recomputes the same header checksum).
struct CnpFields {
	uint32_t src_ip = 0, dst_ip = 0;
	uint16_t src_port = 0xc000;
	uint32_t dest_qpn = 0;
	uint16_t pkey = 0xffff;
	uint8_t tos = 0;
	uint8_t ttl = 64;
};
void BuildCnp(const CnpFields &f, uint8_t out[kCnpPacketBytes]);

// One captured Ethernet frame, looked at as RoCEv2.
struct RoceFrame {
	bool roce = false;	// IPv4 without options, UDP to port 4791, room for BTH + ICRC
	bool complete = false;	// the capture holds the whole IP packet
	uint8_t opcode = 0;
	uint8_t ecn = 0;	// IP ECN field: 0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE
	uint8_t tos = 0;
	uint16_t ip_id = 0;
	uint32_t dest_qpn = 0, psn = 0;
	uint32_t src_ip = 0, dst_ip = 0;	// network byte order
	uint16_t src_port = 0;
	size_t ip_len = 0;	// IP total length
	uint32_t icrc_wire = 0, icrc_computed = 0;
	bool icrc_ok() const { return complete && icrc_wire == icrc_computed; }
};
// Frames without a VLAN tag (what veths carry); Ethernet padding is ignored.
RoceFrame ParseRoceFrame(const uint8_t *frame, size_t caplen);

// Calls `frame` with every record of a capture file (pcap or pcapng, read
// by libpcap) whose link type is Ethernet.
// False with *err set when the file cannot be read or is not such a file.
bool ReadPcap(const std::string &path,
	      const std::function<void(const uint8_t *data, size_t caplen, size_t origlen)> &frame,
	      std::string *err);

}  // namespace mltcp_rdma
