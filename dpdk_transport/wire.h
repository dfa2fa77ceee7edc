// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// wire.h - the MLTCP-DPDK transport header, carried as the payload of an
// Ethernet/IPv4/UDP packet, and its (de)serialisation with an end-to-end
// ones'-complement checksum (the UDP algorithm) over header and payload.
//
// Sequence numbers count packets, not bytes (one message segment per packet),
// as in RDMA transports; the cumulative ack is the next expected packet and a
// 256-bit selective-ack bitmap covers the packets after it.  The header is
// little-endian: both ends are the same host type (x86-64 DPDK processes).
// No DPDK dependency: the protocol engine and its unit tests use this alone.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mltcp_dpdk {

constexpr uint16_t kWireMagic = 0x4d4c;	// "ML"
constexpr uint8_t kWireVersion = 1;
constexpr uint32_t kSackWords = 4;
constexpr uint32_t kSackBits = kSackWords * 64;	// packets after ack covered

enum class PacketType : uint8_t {
	kSyn = 1,	// open: msg_len carries the sender's MSS, wnd its window
	kSynAck = 2,
	kData = 3,	// one message segment; also carries ack/sack/wnd
	kAck = 4,	// pure acknowledgement / window update
	kFin = 5,	// seq = the sender's next sequence: all data before it sent
	kFinAck = 6,
	kReset = 7,	// connection unknown or aborted
	kCnp = 8,	// DCQCN congestion notification (receiver saw CE marks)
	kProbe = 9,	// zero-window probe / keepalive: asks for an ack
};

struct __attribute__((packed)) WireHeader {
	uint16_t magic;
	uint8_t version;
	uint8_t type;		// PacketType
	uint32_t src_conn;	// sender's connection id
	uint32_t dst_conn;	// receiver's connection id (0 in a SYN)
	uint32_t seq;		// packet sequence number
	uint32_t ack;		// next packet sequence expected
	uint64_t sack[kSackWords];	// bit i: packet ack + 1 + i received
	uint32_t wnd;		// packets the receiver accepts beyond ack
	uint32_t msg_id;	// message this segment belongs to
	uint32_t msg_len;	// that message's length in bytes
	uint32_t msg_off;	// this segment's offset in the message
	uint32_t ts_us;		// sender's clock, microseconds (wraps)
	uint32_t ts_echo;	// echo of the latest ts the acker received
	uint16_t payload_len;
	uint16_t checksum;	// 0: not computed (the UDP checksum covers it)
};
static_assert(sizeof(WireHeader) == 80, "wire header layout changed");

// Wrap-safe sequence comparisons (RFC 1982 style).
inline bool SeqLt(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }
inline bool SeqLeq(uint32_t a, uint32_t b) { return (int32_t)(a - b) <= 0; }

// Ones'-complement sum of a buffer folded to 16 bits (not inverted).
uint16_t OnesComplementSum(const void *data, size_t len, uint32_t initial = 0);
// The same, one word at a time (the reference the tests compare against).
uint16_t OnesComplementSumScalar(const void *data, size_t len, uint32_t initial = 0);

enum class ParseError {
	kOk = 0,
	kTooShort,	// shorter than a header or than header + payload_len
	kBadMagic,	// not our protocol (or wrong version)
	kBadChecksum,	// corrupted in flight
};
const char *ParseErrorName(ParseError e);

// Writes header (checksum field filled in if `checksum`) and payload to buf,
// which must hold sizeof(WireHeader) + payload_len bytes.  Returns bytes.
size_t Serialize(const WireHeader &h, const uint8_t *payload, uint8_t *buf,
		 bool checksum);

// Validates a received packet; on success *h is the header and *payload
// points into buf.  A non-zero checksum field is always verified.
ParseError Parse(const uint8_t *buf, size_t len, WireHeader *h,
		 const uint8_t **payload);

}  // namespace mltcp_dpdk
