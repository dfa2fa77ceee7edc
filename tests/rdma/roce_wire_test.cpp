// roce_wire_test.cpp - the RoCEv2 ICRC, CNP builder, frame parser and pcap
// reader of rdma/roce_wire.h.
//
// The packet vectors are real soft-RoCE packets: captured by tcpdump on b0
// in the guest test (tests/rdma/guest/rdma.sh, `mltcp-rdma icrc-check
// --dump 1` prints them from the IP header on), rxe in Debian's 6.1 kernel
// as sender.  Their last 4 bytes are the ICRC rxe computed; Python's
// zlib.crc32 over 8 x 0xFF + the masked headers + the rest gives the same
// values, as an implementation independent of ours.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "roce_wire.h"

using namespace mltcp_rdma;

namespace {

std::vector<uint8_t> Hex(const char *h)
{
	std::vector<uint8_t> v;
	for (size_t i = 0; h[i] && h[i + 1]; i += 2)
		v.push_back((uint8_t)std::stoul(std::string(h + i, 2), nullptr, 16));
	return v;
}

// RC ACKNOWLEDGE (0x11) from rxeb (10.77.0.2) to rxea, QP 0x16, ECT(0).
const char *kAck =
	"45020030270d40004011ff110a4d00020a4d0001e1d012b7001c00001100ffff00000016"
	"00b02de21f000001bef96021";
// RC SEND ONLY WITH IMMEDIATE (0x05), 24-byte payload, ECT(0).
const char *kSendImm =
	"45020030c2404000401163de0a4d00010a4d0002e1d012b7001c00000500ffff00000015"
	"80b03d16ffffffff0951a46c";
// RC SEND MIDDLE (0x01), 1024-byte payload, marked CE by the RED queue.
const char *kSendMiddleCe =
	"4503042cb241400040116fe00a4d00010a4d0002e1d012b7041800000100ffff00000015"
	"00b02e006bdd2d5253d9d69b11fd225991f84bb9d59ca3c90bf0c90b61f8ec44f8ab5380"
	"bdd399c8b198a5a9c3f3b0c53f0f3f04a632eeda06889921de8fa18afc23f2fd99992a50"
	"47544d756943d0e6b5d98e379f1a506013e35539d379be8a03286867ae7dee59b934f994"
	"b4ecbb860bbcd041ae9737166ec733cdd4cce5376cc5f5b35ea5e08306787cd08ed489da"
	"da56693383d3fe286bdad3b7cde6ff2129f4f1769eeacc46b08e27cc1c823284a2cba482"
	"d7cc9578c16ec07b2bfdfc28a8a9920be0aa4c2b87113e9b693a217da30644dd89fc3a9c"
	"b9cc1638b62966e1f35852c47a800e0e9f68c83ddbcbe61aa7087349d344d5825044fb4b"
	"66485d2de43a738d0ddf2ebe2e1489ead01e2e987ab7dd17a0c33b9599d660ac0c0a16d0"
	"f0ce9b99e9ecf6b684ac45d911c097ceee857f6409cde52af7fc465f1f0bac9fbbd69472"
	"0011f06105867d3e327e9e3f6b7c07aeb6b9ec594ca48de24face7da7f993449ae3ea423"
	"5ac04f070ae6e7de2ad1ff68171ed4f1ec6143a51215c24d2113fdee8103679d1bb6d386"
	"60c14069226aca3c231027655db93a89b822fe38b0aca5a9b7a65075e6844ebe98a195f8"
	"36a81c8de4649504be5027d275422c7d9547c20cbad17f3a61b09ee379a744ac52fbcc7d"
	"4abd0c779b4fae87bf32ee15c55abfab10386f8291caeeeb6ac9cf690d00360644553dab"
	"755f3923be93677337f9673302c7e4f0e1e4cbe81eca4f24d199e5a6e54ad3440909f88f"
	"fecf9a1906bbc8a2477142ca7c13d67f4cf86ccb6a3981230159abfab1f7551c81993f6f"
	"76827a2d384dcf09c08b82493828bbe1f89874db7c21ed85b7023acafee23bc8b8818ebe"
	"0219b873a9b7c148e827ba6523f0ac6835ee9cc1d7ca618438da1e5ddeb780e5ece0cdfd"
	"bb95bafc5f844c14eb397b6eaf54fdb42d8c929160ebeb72e232399d3adee3ac381e81c1"
	"81032334ad118ef3e406300ec971a9598151b7f66c31c21e19df9957ab82d83f0e5a281f"
	"96ea76ec2dd74df49847a66553de24c2516f9edd6c252c02ace8d4ec1dff0267a8a5a144"
	"55050ea25e60469cb99db1e56f2a9fd1c67dda6be0dcba207fb159ee47720cb411159f8d"
	"e52534caff7bfad139d53f2fb6c6aa635808201aa4aabb77d81aa54b407f47b2e5c7348c"
	"4c534e31c5236501a6b79d3b446c83c0171cd0e9eb4304cbffd81a2e0c55cfc723e3ffc8"
	"af1e52d037db70ea3f84d20f94349707b6db690fb06871fffbd00e6cd1c61ef914c4d053"
	"65b913354eacc2e38ce9c8d895aba3408af6ea213314247477e6d6cd7faaa42c5810c57b"
	"be3ba4f21297c538704998d4682fa53c7fbc1eeb5f3a35ca32bbc62ea32a377db189aa11"
	"0c7faef4ac27d1b17edff6114391fd2667521c92ec7cf7d2a9e0b4503ee54ce7916478b7"
	"bdcf5628b30d41203c4228d243762e1eeae8b3639ac231fe";
// UD SEND ONLY (0x64) to QP 1: an rdma_cm MAD, with DETH.
const char *kCmMad =
	"45020134b2114000401173090a4d00010a4d0002d87212b7012000006400ffff00000001"
	"8000000d80010000000000010107020300000000000000024fd64cf90010000000000000"
	"f94cd64f000000000000000001061d32a0bd84fffeb131df000000000000000000001600"
	"00000000000000a0230490a7ffff37f0ffffffff00000000000000000000ffff0a4d0001"
	"00000000000000000000ffff0a4d00021e1d700002400098000000000000000000000000"
	"0000000000000000000000000000000000000000000000000000000000000000004092bb"
	"0000000000000000000000000a4d00010000000000000000000000000a4d000200000000"
	"000000000000000000000000000000000000000000000000000000000000000000000000"
	"00000000000000000000000000000000019c9a77";
// A CNP as our notification point sent it (BuildCnp + raw socket).
const char *kCnp =
	"45c0003c00004000401125550a4d00020a4d0001c01612b7002800008100ffff40000016"
	"0000000000000000000000000000000000000000f2612f1d";

struct Vector {
	const char *name, *hex;
	uint8_t opcode, ecn;
	uint32_t icrc;	// as rxe / we stored it (least significant byte first)
};
const Vector kVectors[] = {
	{"ack", kAck, 0x11, 2, 0x2160f9be},
	{"send-imm", kSendImm, 0x05, 2, 0x6ca45109},
	{"send-middle-ce", kSendMiddleCe, 0x01, 3, 0xfe31c29a},
	{"cm-mad", kCmMad, 0x64, 2, 0x779a9c01},
	{"cnp", kCnp, 0x81, 0, 0x1d2f61f2},
};

std::vector<uint8_t> WithEthernet(const std::vector<uint8_t> &ip)
{
	std::vector<uint8_t> f = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00};
	f.insert(f.end(), ip.begin(), ip.end());
	return f;
}

}  // namespace

TEST(Crc32, CheckValueAndContinuation)
{
	const uint8_t s[] = "123456789";
	EXPECT_EQ(Crc32(0, s, 9), 0xcbf43926u);
	EXPECT_EQ(Crc32(Crc32(0, s, 4), s + 4, 5), 0xcbf43926u);
	EXPECT_EQ(Crc32(0, s, 0), 0u);
	// rxe's seed: the CRC state after 8 bytes of 0xFF is ~0xdebb20e3.
	const uint8_t ff[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	EXPECT_EQ(~Crc32(0, ff, 8), 0xdebb20e3u);
}

TEST(RoceV2Icrc, ReproducesRxeOnItsOwnPackets)
{
	for (const Vector &v : kVectors) {
		SCOPED_TRACE(v.name);
		std::vector<uint8_t> p = Hex(v.hex);
		ASSERT_GE(p.size(), 44u);
		ASSERT_EQ(p.size(), (size_t)(p[2] << 8 | p[3]));	// IP total length
		EXPECT_EQ(LoadIcrc(p.data() + p.size() - 4), v.icrc);
		EXPECT_EQ(RoceV2Icrc(p.data(), p.size() - 4), v.icrc);
		uint8_t b[4];
		StoreIcrc(b, v.icrc);
		EXPECT_EQ(0, memcmp(b, p.data() + p.size() - 4, 4));
		EXPECT_EQ(Ipv4HeaderChecksum(p.data(), 20), (uint16_t)(p[10] << 8 | p[11]));
	}
}

// Every byte of the ack: flipping a bit changes the ICRC unless the spec
// masks that byte (TOS, TTL, IP checksum, UDP checksum, BTH byte 4).
TEST(RoceV2Icrc, CoversExactlyTheUnmaskedBytes)
{
	std::vector<uint8_t> p = Hex(kAck);
	size_t n = p.size() - 4;
	uint32_t ref = RoceV2Icrc(p.data(), n);
	for (size_t i = 0; i < n; i++) {
		bool masked = i == 1 || i == 8 || i == 10 || i == 11 || i == 26 || i == 27 || i == 32;
		for (uint8_t bit : {0x01, 0x80}) {
			std::vector<uint8_t> q = p;
			q[i] ^= bit;
			if (masked)
				EXPECT_EQ(RoceV2Icrc(q.data(), n), ref) << "byte " << i;
			else
				EXPECT_NE(RoceV2Icrc(q.data(), n), ref) << "byte " << i;
		}
	}
	// CE marking (ECN 2 -> 3) keeps the ICRC valid, as switches need.
	std::vector<uint8_t> q = p;
	q[1] |= 3;
	EXPECT_EQ(RoceV2Icrc(q.data(), n), ref);
}

TEST(BuildCnp, ReproducesTheCapturedCnp)
{
	CnpFields f;
	inet_pton(AF_INET, "10.77.0.2", &f.src_ip);
	inet_pton(AF_INET, "10.77.0.1", &f.dst_ip);
	f.src_port = 0xc016;
	f.dest_qpn = 0x16;
	f.pkey = 0xffff;
	f.tos = 48 << 2;
	f.ttl = 64;
	uint8_t out[kCnpPacketBytes];
	BuildCnp(f, out);
	std::vector<uint8_t> want = Hex(kCnp);
	ASSERT_EQ(want.size(), kCnpPacketBytes);
	EXPECT_EQ(std::vector<uint8_t>(out, out + kCnpPacketBytes), want);
}

TEST(BuildCnp, Fields)
{
	CnpFields f;
	f.src_ip = htonl(0x0a000001);
	f.dst_ip = htonl(0x0a000002);
	f.dest_qpn = 0x12345678;	// only 24 bits go out
	uint8_t out[kCnpPacketBytes];
	BuildCnp(f, out);
	EXPECT_EQ(out[0], 0x45);
	EXPECT_EQ(out[4] | out[5], 0);		// ID 0
	EXPECT_EQ(out[6], 0x40);		// DF
	EXPECT_EQ(out[9], 17);
	EXPECT_EQ(out[22] << 8 | out[23], 4791);
	EXPECT_EQ(out[24] << 8 | out[25], 40);	// UDP length
	EXPECT_EQ(out[26] | out[27], 0);	// no UDP checksum
	EXPECT_EQ(out[28], 0x81);
	EXPECT_EQ(out[32], 0x40);		// BECN
	EXPECT_EQ(out[33] << 16 | out[34] << 8 | out[35], 0x345678);
	for (size_t i = 40; i < 56; i++)
		EXPECT_EQ(out[i], 0) << i;
	EXPECT_EQ(RoceV2Icrc(out, 56), LoadIcrc(out + 56));
	std::vector<uint8_t> fr = WithEthernet(std::vector<uint8_t>(out, out + kCnpPacketBytes));
	RoceFrame r = ParseRoceFrame(fr.data(), fr.size());
	EXPECT_TRUE(r.icrc_ok());
	EXPECT_EQ(r.dest_qpn, 0x345678u);
}

TEST(ParseRoceFrame, Vectors)
{
	for (const Vector &v : kVectors) {
		SCOPED_TRACE(v.name);
		std::vector<uint8_t> f = WithEthernet(Hex(v.hex));
		RoceFrame r = ParseRoceFrame(f.data(), f.size());
		EXPECT_TRUE(r.roce);
		EXPECT_TRUE(r.complete);
		EXPECT_TRUE(r.icrc_ok());
		EXPECT_EQ(r.opcode, v.opcode);
		EXPECT_EQ(r.ecn, v.ecn);
		EXPECT_EQ(r.icrc_wire, v.icrc);
		// Ethernet padding after the IP packet is not part of it.
		f.resize(f.size() + 6, 0);
		EXPECT_TRUE(ParseRoceFrame(f.data(), f.size()).icrc_ok());
	}
	std::vector<uint8_t> f = WithEthernet(Hex(kAck));
	RoceFrame r = ParseRoceFrame(f.data(), f.size());
	EXPECT_EQ(r.dest_qpn, 0x16u);
	EXPECT_EQ(r.psn, 0xb02de2u);
	// One payload bit off: the ICRC no longer matches.
	f[f.size() - 6] ^= 1;
	r = ParseRoceFrame(f.data(), f.size());
	EXPECT_TRUE(r.roce && r.complete);
	EXPECT_FALSE(r.icrc_ok());
	// Cut short by the capture: recognised, not checked.
	f = WithEthernet(Hex(kSendMiddleCe));
	r = ParseRoceFrame(f.data(), 200);
	EXPECT_TRUE(r.roce);
	EXPECT_FALSE(r.complete);
	EXPECT_FALSE(r.icrc_ok());
	// Another UDP port, another EtherType: not RoCEv2.
	f = WithEthernet(Hex(kAck));
	f[14 + 22] = 0x12;
	f[14 + 23] = 0x34;
	EXPECT_FALSE(ParseRoceFrame(f.data(), f.size()).roce);
	f = WithEthernet(Hex(kAck));
	f[12] = 0x86;
	f[13] = 0xdd;
	EXPECT_FALSE(ParseRoceFrame(f.data(), f.size()).roce);
	EXPECT_FALSE(ParseRoceFrame(f.data(), 10).roce);
}

namespace {

void Put32(std::vector<uint8_t> &b, uint32_t v, bool big)
{
	for (int i = 0; i < 4; i++)
		b.push_back((uint8_t)(big ? v >> (24 - 8 * i) : v >> (8 * i)));
}

std::string WritePcap(bool big, uint32_t linktype, const std::vector<std::vector<uint8_t>> &frames)
{
	std::vector<uint8_t> b;
	Put32(b, 0xa1b2c3d4, big);
	b.push_back(big ? 0 : 2); b.push_back(big ? 2 : 0);	// version 2.4
	b.push_back(big ? 0 : 4); b.push_back(big ? 4 : 0);
	Put32(b, 0, big);
	Put32(b, 0, big);
	Put32(b, 262144, big);
	Put32(b, linktype, big);
	for (const auto &f : frames) {
		Put32(b, 1, big);
		Put32(b, 2, big);
		Put32(b, (uint32_t)f.size(), big);
		Put32(b, (uint32_t)f.size(), big);
		b.insert(b.end(), f.begin(), f.end());
	}
	char path[] = "/tmp/mltcp-rdma-pcap-XXXXXX";
	int fd = mkstemp(path);
	EXPECT_GE(fd, 0);
	EXPECT_EQ(write(fd, b.data(), b.size()), (ssize_t)b.size());
	close(fd);
	return path;
}

}  // namespace

TEST(ReadPcap, BothByteOrders)
{
	std::vector<std::vector<uint8_t>> frames = {WithEthernet(Hex(kAck)),
						    WithEthernet(Hex(kCnp))};
	for (bool big : {false, true}) {
		std::string p = WritePcap(big, 1, frames);
		std::vector<std::vector<uint8_t>> got;
		std::string err;
		EXPECT_TRUE(ReadPcap(p, [&](const uint8_t *d, size_t n, size_t orig) {
			EXPECT_EQ(n, orig);
			got.emplace_back(d, d + n);
		}, &err)) << err;
		EXPECT_EQ(got, frames);
		unlink(p.c_str());
	}
}

TEST(ReadPcap, Errors)
{
	std::string err;
	auto none = [](const uint8_t *, size_t, size_t) {};
	EXPECT_FALSE(ReadPcap("/nonexistent/x.pcap", none, &err));
	EXPECT_NE(err.find("No such file"), std::string::npos) << err;
	std::string p = WritePcap(false, 113, {});	// Linux cooked (-i any)
	EXPECT_FALSE(ReadPcap(p, none, &err));
	EXPECT_NE(err.find("not Ethernet"), std::string::npos) << err;
	unlink(p.c_str());
	p = WritePcap(false, 1, {WithEthernet(Hex(kAck))});
	EXPECT_EQ(truncate(p.c_str(), 24 + 16 + 10), 0);	// record cut short
	int n = 0;
	EXPECT_FALSE(ReadPcap(p, [&](const uint8_t *, size_t, size_t) { n++; }, &err));
	EXPECT_EQ(n, 0);
	EXPECT_NE(err.find("truncated"), std::string::npos) << err;	// libpcap's words
	FILE *f = fopen(p.c_str(), "wb");
	fputs("not a pcap file at all, no", f);
	fclose(f);
	EXPECT_FALSE(ReadPcap(p, none, &err));
	EXPECT_NE(err.find("unknown file format"), std::string::npos) << err;	// libpcap's words
	unlink(p.c_str());
}
