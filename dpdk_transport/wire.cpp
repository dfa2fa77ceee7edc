// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// wire.cpp - serialisation and validation of the transport header (wire.h).
#include "wire.h"

#include <cstring>

namespace mltcp_dpdk {

uint16_t OnesComplementSum(const void *data, size_t len, uint32_t initial)
{
	const uint8_t *p = static_cast<const uint8_t *>(data);
	uint64_t sum = initial;

	// 32-bit words into a 64-bit accumulator: no carry handling needed
	// for any buffer below 16 GiB.
	while (len >= 4) {
		uint32_t w;
		memcpy(&w, p, 4);
		sum += w;
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		uint16_t w;
		memcpy(&w, p, 2);
		sum += w;
		p += 2;
		len -= 2;
	}
	if (len)
		sum += *p;
	sum = (sum & 0xffffffffULL) + (sum >> 32);
	sum = (sum & 0xffffffffULL) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

const char *ParseErrorName(ParseError e)
{
	switch (e) {
	case ParseError::kOk: return "ok";
	case ParseError::kTooShort: return "truncated packet";
	case ParseError::kBadMagic: return "not an MLTCP-DPDK packet";
	case ParseError::kBadChecksum: return "bad checksum";
	}
	return "unknown parse error";
}

// Checksum of header (with a zero checksum field) plus payload; never 0,
// because 0 on the wire means "not computed".
static uint16_t PacketChecksum(const uint8_t *hdr, const uint8_t *payload, size_t plen)
{
	WireHeader h;
	memcpy(&h, hdr, sizeof(h));
	h.checksum = 0;
	uint16_t s = OnesComplementSum(&h, sizeof(h));
	s = OnesComplementSum(payload, plen, s);
	uint16_t c = (uint16_t)~s;
	return c ? c : 0xffff;
}

size_t Serialize(const WireHeader &h, const uint8_t *payload, uint8_t *buf,
		 bool checksum)
{
	WireHeader out = h;
	out.magic = kWireMagic;
	out.version = kWireVersion;
	out.checksum = 0;
	memcpy(buf, &out, sizeof(out));
	if (out.payload_len)
		memcpy(buf + sizeof(out), payload, out.payload_len);
	if (checksum) {
		out.checksum = PacketChecksum(buf, buf + sizeof(out), out.payload_len);
		memcpy(buf + offsetof(WireHeader, checksum), &out.checksum,
		       sizeof(out.checksum));
	}
	return sizeof(out) + out.payload_len;
}

ParseError Parse(const uint8_t *buf, size_t len, WireHeader *h, const uint8_t **payload)
{
	if (len < sizeof(WireHeader))
		return ParseError::kTooShort;
	memcpy(h, buf, sizeof(*h));
	if (h->magic != kWireMagic || h->version != kWireVersion)
		return ParseError::kBadMagic;
	if (len < sizeof(WireHeader) + h->payload_len)
		return ParseError::kTooShort;
	if (h->checksum &&
	    PacketChecksum(buf, buf + sizeof(WireHeader), h->payload_len) != h->checksum)
		return ParseError::kBadChecksum;
	*payload = buf + sizeof(WireHeader);
	return ParseError::kOk;
}

}  // namespace mltcp_dpdk
