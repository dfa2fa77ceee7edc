// roce_wire.cpp - see roce_wire.h.
#include "roce_wire.h"

#include <pcap/pcap.h>
#include <zlib.h>

#include <cstring>

namespace mltcp_rdma {

namespace {

uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)(v >> 16)); put16(p + 2, (uint16_t)v); }

// Offsets into IPv4 (IHL 5) + UDP + BTH.
constexpr size_t kIpTos = 1, kIpTotLen = 2, kIpId = 4, kIpFrag = 6, kIpTtl = 8, kIpProto = 9,
		 kIpCheck = 10, kIpSrc = 12, kIpDst = 16;
constexpr size_t kUdp = kIpv4HeaderBytes;
constexpr size_t kBth = kUdp + kUdpHeaderBytes;
constexpr size_t kMaskedBytes = kBth + kBthBytes;	// the part with masked fields

}  // namespace

uint32_t Crc32(uint32_t crc, const uint8_t *p, size_t n)
{
	return (uint32_t)crc32_z(crc, p, n);
}

uint32_t RoceV2Icrc(const uint8_t *ip, size_t len)
{
	static const uint8_t kLrh[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	uint8_t h[kMaskedBytes];
	memcpy(h, ip, sizeof h);
	h[kIpTos] = 0xff;			// DSCP + ECN
	h[kIpTtl] = 0xff;
	h[kIpCheck] = h[kIpCheck + 1] = 0xff;
	h[kUdp + 6] = h[kUdp + 7] = 0xff;	// UDP checksum
	h[kBth + 4] = 0xff;			// FECN, BECN, reserved
	uint32_t crc = Crc32(0, kLrh, sizeof kLrh);
	crc = Crc32(crc, h, sizeof h);
	return Crc32(crc, ip + sizeof h, len - sizeof h);
}

void StoreIcrc(uint8_t *p, uint32_t icrc)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(icrc >> (8 * i));
}

uint32_t LoadIcrc(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint16_t Ipv4HeaderChecksum(const uint8_t *ip, size_t len)
{
	uint32_t s = 0;
	for (size_t i = 0; i + 1 < len; i += 2)
		if (i != kIpCheck)
			s += be16(ip + i);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

void BuildCnp(const CnpFields &f, uint8_t out[kCnpPacketBytes])
{
	memset(out, 0, kCnpPacketBytes);
	uint8_t *ip = out, *udp = out + kUdp, *bth = out + kBth;
	ip[0] = 0x45;
	ip[kIpTos] = f.tos;
	put16(ip + kIpTotLen, (uint16_t)kCnpPacketBytes);
	put16(ip + kIpId, 0);
	put16(ip + kIpFrag, 0x4000);	// DF
	ip[kIpTtl] = f.ttl;
	ip[kIpProto] = 17;		// UDP
	memcpy(ip + kIpSrc, &f.src_ip, 4);
	memcpy(ip + kIpDst, &f.dst_ip, 4);
	put16(ip + kIpCheck, Ipv4HeaderChecksum(ip, kIpv4HeaderBytes));
	put16(udp, f.src_port);
	put16(udp + 2, kRoceV2Port);
	put16(udp + 4, (uint16_t)(kCnpPacketBytes - kIpv4HeaderBytes));
	// udp + 6: checksum 0 (none), as rxe sends RoCEv2
	bth[0] = kBthOpcodeCnp;
	bth[1] = 0;			// SE, M, pad count 0, TVer 0
	put16(bth + 2, f.pkey);
	put32(bth + 4, 0x40000000u | (f.dest_qpn & 0xffffff));	// BECN
	put32(bth + 8, 0);		// AckReq 0, PSN 0
	// 16 reserved bytes stay zero
	size_t n = kCnpPacketBytes - kIcrcBytes;
	StoreIcrc(out + n, RoceV2Icrc(out, n));
}

RoceFrame ParseRoceFrame(const uint8_t *frame, size_t caplen)
{
	RoceFrame r;
	if (caplen < kEthHeaderBytes + kMaskedBytes || be16(frame + 12) != 0x0800)
		return r;
	const uint8_t *ip = frame + kEthHeaderBytes;
	if (ip[0] != 0x45 || ip[kIpProto] != 17 || be16(ip + kUdp + 2) != kRoceV2Port)
		return r;
	size_t tot = be16(ip + kIpTotLen);
	if (tot < kMaskedBytes + kIcrcBytes)
		return r;
	r.roce = true;
	r.ip_len = tot;
	r.tos = ip[kIpTos];
	r.ecn = ip[kIpTos] & 3;
	r.ip_id = be16(ip + kIpId);
	memcpy(&r.src_ip, ip + kIpSrc, 4);
	memcpy(&r.dst_ip, ip + kIpDst, 4);
	r.src_port = be16(ip + kUdp);
	r.opcode = ip[kBth];
	r.dest_qpn = be32(ip + kBth + 4) & 0xffffff;
	r.psn = be32(ip + kBth + 8) & 0xffffff;
	r.complete = caplen >= kEthHeaderBytes + tot;
	if (r.complete) {
		r.icrc_wire = LoadIcrc(ip + tot - kIcrcBytes);
		r.icrc_computed = RoceV2Icrc(ip, tot - kIcrcBytes);
	}
	return r;
}

bool ReadPcap(const std::string &path,
	      const std::function<void(const uint8_t *data, size_t caplen, size_t origlen)> &frame,
	      std::string *err)
{
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	pcap_t *pc = pcap_open_offline(path.c_str(), errbuf);
	if (!pc) {
		*err = path + ": " + errbuf;
		return false;
	}
	bool ok = true;
	int linktype = pcap_datalink(pc);
	if (linktype != DLT_EN10MB) {
		*err = path + ": link type " + std::to_string(linktype) +
		       ", not Ethernet (capture on one interface, not -i any)";
		ok = false;
	}
	pcap_pkthdr *h;
	const u_char *data;
	int r;
	while (ok && (r = pcap_next_ex(pc, &h, &data)) == 1)
		frame(data, h->caplen, h->len);
	if (ok && r == PCAP_ERROR) {
		*err = path + ": " + pcap_geterr(pc);	// e.g. a capture cut short
		ok = false;
	}
	pcap_close(pc);
	return ok;
}

}  // namespace mltcp_rdma
