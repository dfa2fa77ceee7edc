// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// engine_test.cpp - unit tests of the DPDK transport's protocol engine
// without DPDK I/O: two Stacks over FakeNet (fake clock, injected loss,
// reordering, duplication, corruption, silence).  Every transfer checks
// that each message arrives exactly once, in order, byte for byte.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "fake_net.h"

using namespace mltcp_dpdk;
using namespace mltcp_dpdk_test;

namespace {

// Message i of a stream: a deterministic length and content.
std::vector<uint8_t> MakeMsg(uint64_t seed, uint32_t i, uint32_t max_len)
{
	std::mt19937 r((uint32_t)(seed * 7919 + i));
	uint32_t len = r() % (max_len + 1);
	std::vector<uint8_t> m(len);
	for (auto &b : m)
		b = (uint8_t)r();
	return m;
}

struct Pair {
	Connection *client = nullptr, *server = nullptr;
};

Pair Open(FakeNet &net, const CcConfig &cc)
{
	Pair p;
	net.b->Listen(cc);
	Status err;
	p.client = net.a->Connect(FakeNet::kAddrB, cc, net.now, &err);
	EXPECT_NE(p.client, nullptr) << err.message;
	net.RunUntil([&] {
		if (!p.server)
			p.server = net.b->Accept();
		return p.server && p.client->established();
	}, kNsPerSec);
	EXPECT_TRUE(p.client->established());
	EXPECT_NE(p.server, nullptr);
	return p;
}

// Sends n messages client -> server while the server reads; checks order,
// content and exactly-once.  Returns the number received.
uint32_t Transfer(FakeNet &net, Pair p, uint32_t n, uint32_t max_len, uint64_t limit_ns,
		  uint64_t seed = 3)
{
	uint32_t sent = 0, got = 0;
	std::vector<uint8_t> m;
	net.RunUntil([&] {
		while (sent < n) {
			Status s = p.client->Send(MakeMsg(seed, sent, max_len), net.now);
			if (s.code == Errc::kWouldBlock)
				break;
			EXPECT_TRUE(s.ok()) << s.message;
			sent++;
		}
		while (p.server->Recv(&m)) {
			EXPECT_EQ(m, MakeMsg(seed, got, max_len)) << "message " << got;
			got++;
		}
		return got == n || p.client->closed() || p.server->closed();
	}, limit_ns);
	return got;
}

EngineConfig SmallConfig()
{
	EngineConfig c;
	c.mss = 1000;
	c.rcv_wnd_pkts = 256;
	return c;
}

}  // namespace

TEST(Wire, ChecksumDetectsEveryFlippedByte)
{
	WireHeader h{};
	h.type = (uint8_t)PacketType::kData;
	h.payload_len = 100;
	std::vector<uint8_t> payload(100, 0x5a), buf(sizeof(WireHeader) + 100);
	Serialize(h, payload.data(), buf.data(), true);
	WireHeader out;
	const uint8_t *pl;
	ASSERT_EQ(Parse(buf.data(), buf.size(), &out, &pl), ParseError::kOk);
	for (size_t i = 0; i < buf.size(); i++) {
		auto bad = buf;
		bad[i] ^= 0x10;
		EXPECT_NE(Parse(bad.data(), bad.size(), &out, &pl), ParseError::kOk) << "byte " << i;
	}
	EXPECT_EQ(Parse(buf.data(), 10, &out, &pl), ParseError::kTooShort);
	EXPECT_EQ(Parse(buf.data(), buf.size() - 1, &out, &pl), ParseError::kTooShort);
}

// The vector sums against the word-at-a-time reference: every length up
// to 300 and long ones, at every alignment.
TEST(Wire, VectorChecksumMatchesTheReference)
{
	std::mt19937 rng(7);
	std::vector<uint8_t> src(20000 + 64);
	for (auto &b : src)
		b = (uint8_t)rng();
	std::vector<size_t> lens;
	for (size_t n = 0; n <= 300; n++)
		lens.push_back(n);
	for (size_t n : {1023u, 1024u, 1025u, 8943u, 9000u, 16384u, 20000u})
		lens.push_back(n);
	for (size_t n : lens)
		for (size_t off = 0; off < 8; off++) {
			uint32_t init = (uint32_t)rng() & 0xffff;
			uint16_t ref = OnesComplementSumScalar(src.data() + off, n, init);
			ASSERT_EQ(OnesComplementSum(src.data() + off, n, init), ref) << n << " @" << off;
		}
	// All ones: the 64-bit lanes carry into the fold.
	std::vector<uint8_t> ff(65536, 0xff);
	EXPECT_EQ(OnesComplementSum(ff.data(), ff.size()), OnesComplementSumScalar(ff.data(), ff.size()));
}

// TakeBuffer() hands back acknowledged messages' buffers, within the send
// queue limit, and only once the application asks for them.
TEST(Engine, AcknowledgedBuffersAreRecycled)
{
	EngineConfig cfg = SmallConfig();
	cfg.max_message_bytes = 16 * 1024;
	cfg.max_send_queue_bytes = 64 * 1024;
	FakeNet net(cfg);
	Pair p = Open(net, CcConfig());
	EXPECT_EQ(Transfer(net, p, 20, 5000, kNsPerSec), 20u);
	ASSERT_TRUE(net.RunUntil([&] { return p.client->unacked_bytes() == 0; }, kNsPerSec));
	EXPECT_EQ(p.client->TakeBuffer().capacity(), 0u);	// none kept before the first call
	uint32_t got = 0, reused = 0;
	std::vector<uint8_t> m;
	for (uint32_t i = 0; i < 50; i++) {
		std::vector<uint8_t> b = p.client->TakeBuffer();
		reused += b.capacity() >= 4000;
		b.assign(4000, (uint8_t)i);	// stale contents overwritten
		ASSERT_TRUE(p.client->Send(std::move(b), net.now).ok());
		ASSERT_TRUE(net.RunUntil([&] {
			while (p.server->Recv(&m)) {
				EXPECT_EQ(m, std::vector<uint8_t>(4000, (uint8_t)got)) << got;
				got++;
			}
			return got == i + 1 && p.client->unacked_bytes() == 0;
		}, kNsPerSec));
	}
	EXPECT_EQ(got, 50u);
	EXPECT_GE(reused, 48u);
}

// Recv() keeps the storage it is handed and reassembles the next message
// into it, instead of allocating (and the kernel zeroing) a fresh buffer.
TEST(Engine, ReceivedMessagesReuseTheStorageHandedBack)
{
	FakeNet net(SmallConfig());
	Pair p = Open(net, CcConfig());
	std::vector<uint8_t> m, first;
	m.reserve(1 << 20);
	const uint8_t *handed_back = m.data();
	ASSERT_TRUE(p.client->Send(std::vector<uint8_t>(4000, 1), net.now).ok());
	ASSERT_TRUE(net.RunUntil([&] { return p.server->Recv(&m); }, kNsPerSec));
	EXPECT_EQ(m, std::vector<uint8_t>(4000, 1));
	ASSERT_TRUE(p.client->Send(std::vector<uint8_t>(5000, 2), net.now).ok());
	ASSERT_TRUE(net.RunUntil([&] { return p.server->Recv(&first); }, kNsPerSec));
	EXPECT_EQ(first, std::vector<uint8_t>(5000, 2));
	EXPECT_EQ(first.data(), handed_back);	// the 1 MB storage, not a new 5000 B one
	EXPECT_GE(first.capacity(), 1u << 20);
}

TEST(Engine, HandshakeTransferAndOrderlyClose)
{
	FakeNet net(SmallConfig());
	Pair p = Open(net, CcConfig());
	EXPECT_EQ(Transfer(net, p, 200, 5000, kNsPerSec), 200u);
	// Reverse direction on the same connection.
	std::vector<uint8_t> m;
	ASSERT_TRUE(p.server->Send({1, 2, 3}, net.now).ok());
	ASSERT_TRUE(net.RunUntil([&] { return p.client->Recv(&m); }, kNsPerSec));
	EXPECT_EQ(m, (std::vector<uint8_t>{1, 2, 3}));
	// Empty messages are messages too.
	ASSERT_TRUE(p.client->Send({}, net.now).ok());
	ASSERT_TRUE(net.RunUntil([&] { return p.server->Recv(&m); }, kNsPerSec));
	EXPECT_TRUE(m.empty());

	p.client->Close();
	ASSERT_TRUE(net.RunUntil([&] { return p.server->peer_closed(); }, kNsPerSec));
	EXPECT_FALSE(p.client->closed());	// waits for the server's FIN
	p.server->Close();
	ASSERT_TRUE(net.RunUntil([&] { return p.client->closed() && p.server->closed(); },
				 kNsPerSec));
	EXPECT_TRUE(p.client->error().ok()) << p.client->error().message;
	EXPECT_TRUE(p.server->error().ok()) << p.server->error().message;
}

class Impaired : public ::testing::TestWithParam<std::tuple<std::string, double>> {};

TEST_P(Impaired, ExactlyOnceInOrderUnderLossReorderDuplication)
{
	auto [cc_name, loss] = GetParam();
	CcConfig cc;
	ASSERT_TRUE(ParseCcKind(cc_name, &cc.kind));
	cc.dcqcn.line_rate_bps = 10000000000ULL;
	FakeNet net(SmallConfig(), 11);
	net.imp.loss = loss;
	net.imp.reorder = 0.05;
	net.imp.dup = 0.01;
	Pair p = Open(net, cc);
	const uint32_t n = 600;
	EXPECT_EQ(Transfer(net, p, n, 8000, 20 * kNsPerSec), n)
		<< "client: " << p.client->error().message
		<< " server: " << p.server->error().message;
	EXPECT_TRUE(net.RunUntil([&] { return p.client->unacked_bytes() == 0; }, kNsPerSec));
	ConnStats cs = p.client->Stats(), ss = p.server->Stats();
	EXPECT_EQ(ss.msgs_delivered, n);
	if (loss > 0) {
		EXPECT_GT(cs.pkts_retx, 0u);
	}
	EXPECT_GT(ss.ooo_rx + ss.dup_rx, 0u);
	EXPECT_EQ(cs.bytes_acked, cs.bytes_sent);
}

INSTANTIATE_TEST_SUITE_P(
	AllModes, Impaired,
	::testing::Combine(::testing::Values("reno", "mltcp", "cubic", "mltcp_cubic", "dcqcn",
					     "mltcp_dcqcn"),
			   ::testing::Values(0.0, 0.01, 0.05)),
	[](const auto &info) {
		return std::get<0>(info.param) + "_loss" +
		       std::to_string((int)(std::get<1>(info.param) * 100));
	});

TEST(Engine, CorruptedPacketsAreDroppedAndRecovered)
{
	FakeNet net(SmallConfig(), 5);
	net.imp.corrupt = 0.03;
	Pair p = Open(net, CcConfig());
	EXPECT_EQ(Transfer(net, p, 400, 6000, 20 * kNsPerSec), 400u);
	EXPECT_GT(net.corrupted, 0u);
	EXPECT_GT(net.a->stats().rx_bad_checksum + net.b->stats().rx_bad_checksum, 0u);
	EXPECT_GT(p.client->Stats().pkts_retx, 0u);
}

TEST(Engine, WindowExhaustionStallsSenderUntilReceiverReads)
{
	EngineConfig cfg = SmallConfig();
	cfg.rcv_wnd_pkts = 64;
	FakeNet net(cfg, 9);
	Pair p = Open(net, CcConfig());
	// 200 messages of one full packet each: 3x the receive window.
	for (uint32_t i = 0; i < 200; i++)
		ASSERT_TRUE(p.client->Send(std::vector<uint8_t>(1000, (uint8_t)i), net.now).ok());
	// Let it run far longer than the peer timeout: zero-window probes keep
	// the connection alive, and the receiver never buffers beyond its window.
	net.RunUntil([] { return false; }, 5 * kNsPerSec);
	EXPECT_FALSE(p.client->closed()) << p.client->error().message;
	EXPECT_LE(p.server->pending_messages(), 64u + 1);
	EXPECT_GE(p.server->pending_messages(), 32u);
	EXPECT_EQ(p.client->Stats().peer_wnd, 0u);
	EXPECT_GT(p.client->Stats().probes, 0u);
	// Now read everything: the window reopens and all 200 arrive in order.
	std::vector<uint8_t> m;
	uint32_t got = 0;
	net.RunUntil([&] {
		while (p.server->Recv(&m)) {
			EXPECT_EQ(m, std::vector<uint8_t>(1000, (uint8_t)got));
			got++;
		}
		return got == 200;
	}, 5 * kNsPerSec);
	EXPECT_EQ(got, 200u);
}

TEST(Engine, SilentPeerTimesOutWithError)
{
	EngineConfig cfg = SmallConfig();
	cfg.peer_timeout_ns = 500 * kNsPerMs;
	FakeNet net(cfg, 4);
	Pair p = Open(net, CcConfig());
	net.silent_b = true;
	ASSERT_TRUE(p.client->Send(std::vector<uint8_t>(50000, 1), net.now).ok());
	uint64_t t0 = net.now;
	ASSERT_TRUE(net.RunUntil([&] { return p.client->closed(); }, 3 * kNsPerSec));
	EXPECT_EQ(p.client->error().code, Errc::kTimeout);
	EXPECT_NE(p.client->error().message.find("peer silent"), std::string::npos);
	EXPECT_LE(net.now - t0, cfg.peer_timeout_ns + cfg.max_rto_ns + kNsPerMs);
	EXPECT_EQ(p.client->Send({1}, net.now).code, Errc::kNotOpen);
}

TEST(Engine, ConnectWithoutListenerIsRefused)
{
	FakeNet net(SmallConfig());
	Status err;
	Connection *c = net.a->Connect(FakeNet::kAddrB, CcConfig(), net.now, &err);
	ASSERT_NE(c, nullptr);
	ASSERT_TRUE(net.RunUntil([&] { return c->closed(); }, kNsPerSec));
	EXPECT_EQ(c->error().code, Errc::kReset);
	EXPECT_NE(c->error().message.find("not listening"), std::string::npos);
}

TEST(Engine, ConnectToSilentHostTimesOut)
{
	EngineConfig cfg = SmallConfig();
	cfg.connect_timeout_ns = 300 * kNsPerMs;
	FakeNet net(cfg);
	net.silent_b = true;
	net.b->Listen(CcConfig());
	Status err;
	Connection *c = net.a->Connect(FakeNet::kAddrB, CcConfig(), net.now, &err);
	ASSERT_TRUE(net.RunUntil([&] { return c->closed(); }, 2 * kNsPerSec));
	EXPECT_EQ(c->error().code, Errc::kTimeout);
	EXPECT_NE(c->error().message.find("is the peer running"), std::string::npos);
}

TEST(Engine, BadInputGetsClearErrors)
{
	EngineConfig cfg = SmallConfig();
	cfg.max_message_bytes = 10000;
	FakeNet net(cfg);
	Pair p = Open(net, CcConfig());
	Status s = p.client->Send(std::vector<uint8_t>(10001), net.now);
	EXPECT_EQ(s.code, Errc::kTooLarge);
	EXPECT_NE(s.message.find("exceeds the maximum message size of 10000"), std::string::npos);
	EXPECT_TRUE(p.client->Send(std::vector<uint8_t>(10000), net.now).ok());
	p.client->Close();
	s = p.client->Send({1}, net.now);
	EXPECT_EQ(s.code, Errc::kNotOpen);
	p.client->Abort();
	EXPECT_EQ(p.client->Send({1}, net.now).code, Errc::kNotOpen);
	// The aborted peer's reset reaches the server.
	ASSERT_TRUE(net.RunUntil([&] { return p.server->closed(); }, kNsPerSec));
	EXPECT_EQ(p.server->error().code, Errc::kReset);

	CcKind k;
	EXPECT_FALSE(ParseCcKind("bbr", &k));
	EXPECT_NE(mltcp::CcNameList().find("mltcp_dcqcn"), std::string::npos);

	CcConfig bad;
	bad.mltcp.slope = 100000;
	Status err;
	EXPECT_EQ(net.a->Connect(FakeNet::kAddrB, bad, net.now, &err), nullptr);
	EXPECT_EQ(err.code, Errc::kInvalid);
	EXPECT_NE(err.message.find("slope"), std::string::npos);
	EngineConfig badcfg;
	badcfg.mss = 10;
	EXPECT_NE(ValidateEngineConfig(badcfg), "");
	EXPECT_THROW(Stack(badcfg, nullptr, 1), std::invalid_argument);
}

// Bursts separated by compute gaps: MLTCP detects iteration boundaries and
// its gain follows bytes_ratio; hints take over detection.
TEST(Engine, MltcpDetectsIterationsAndTakesHints)
{
	FakeNet net(SmallConfig(), 21);
	CcConfig cc;
	cc.kind = CcKind::kMltcp;
	Pair p = Open(net, cc);
	std::vector<uint8_t> m;
	const uint32_t kIterBytes = 200000;
	for (int iter = 0; iter < 6; iter++) {
		for (uint32_t i = 0; i < kIterBytes / 10000; i++)
			ASSERT_TRUE(p.client->Send(std::vector<uint8_t>(10000, 7), net.now).ok());
		ASSERT_TRUE(net.RunUntil([&] {
			while (p.server->Recv(&m)) {
			}
			return p.client->unacked_bytes() == 0;
		}, kNsPerSec));
		net.RunUntil([] { return false; }, 60 * kNsPerMs);	// compute gap
	}
	CcStats st = p.client->Stats().cc;
	EXPECT_GE(st.iterations, 5u);
	EXPECT_EQ(st.hinted, 0u);
	EXPECT_NEAR((double)st.bytes_per_iter, kIterBytes, kIterBytes * 0.05);

	p.client->Hint(300000, net.now);
	for (uint32_t i = 0; i < 15; i++)
		ASSERT_TRUE(p.client->Send(std::vector<uint8_t>(10000, 7), net.now).ok());
	ASSERT_TRUE(net.RunUntil([&] {
		while (p.server->Recv(&m)) {
		}
		return p.client->unacked_bytes() == 0;
	}, kNsPerSec));
	st = p.client->Stats().cc;
	EXPECT_EQ(st.hinted, 1u);
	EXPECT_EQ(st.bytes_per_iter, 300000u);
	EXPECT_NEAR(st.ratio, MLTCP_RATIO_ONE / 2, 20u);
	// F(0.5) = 0.25 + 1.5 * 0.5 = 1.0 in the defaults, times Reno's norm.
	EXPECT_NEAR(st.gain, (MLTCP_DEF_INTERCEPT + MLTCP_DEF_SLOPE / 2) * MLTCP_DEF_NORM_RENO / 1024,
		    30u);

	// Plain Reno tracks nothing.
	FakeNet net2(SmallConfig(), 22);
	Pair q = Open(net2, CcConfig());
	q.client->Hint(300000, net2.now);
	EXPECT_EQ(q.client->Stats().cc.hinted, 0u);
	EXPECT_EQ(q.client->Stats().cc.gain, MLTCP_GAIN_ONE);
}

// MLTCP-DCQCN: the rate timer runs through the compute phase under the ended
// iteration's gain F(1), so a hint advances the rate before it resets F: the
// rate then equals the core's reaction point advanced over the idle time
// with F = 1.75 (not with the next iteration's F(0) = 0.25).
TEST(Cc, DcqcnHintAppliesIdleTimeWithEndingGain)
{
	CcConfig c;
	c.kind = CcKind::kMltcpDcqcn;
	c.mltcp.first_seed = 0;	// F(1) at the first iteration's end, no seed's stand-in
	CongestionControl cc(c, 0, 0);
	cc.Hint(0, 1000000, 0);	// a 1 MB iteration starts
	cc.OnCnp(0);
	cc.OnCnp(0);			// alpha 1: R_T 20, R_C 10 Gbit/s
	AckSample a{};
	a.now_ns = 1000;
	a.acked_bytes_total = 1000000;	// all acked: F(1)
	cc.OnAck(a);
	const uint64_t idle_ns = 36 * 55 * 1000ULL;	// 5 fast recovery + 31 additive
	cc.Hint(1000000, 1000000, idle_ns);
	cc.Advance(idle_ns);		// the engine's next send pass

	mltcp_dcqcn_rp ref;
	mltcp_dcqcn_rp_init(&ref, &c.dcqcn, 0);
	mltcp_dcqcn_on_cnp(&ref, &c.dcqcn, 0);
	mltcp_dcqcn_on_cnp(&ref, &c.dcqcn, 0);
	mltcp_dcqcn_advance(&ref, &c.dcqcn, idle_ns / 1000, MLTCP_DEF_INTERCEPT + MLTCP_DEF_SLOPE);
	EXPECT_EQ(ref.rate_target_bps, 20000000000ULL + 31 * 70000000ULL);	// 1.75 x 40 Mbit/s
	EXPECT_EQ(cc.rate_bps(), ref.rate_cur_bps);
	EXPECT_EQ(cc.Stats().gain, (uint32_t)MLTCP_DEF_INTERCEPT);	// the new iteration: F(0)
}

// DCQCN: CE marks on ECN-capable packets make the receiver return CNPs and
// the sender cut its paced rate; window modes send no ECN-capable packets.
TEST(Engine, DcqcnCutsRateOnCnps)
{
	for (CcKind kind : {CcKind::kDcqcn, CcKind::kMltcpDcqcn}) {
		FakeNet net(SmallConfig(), 31);
		net.imp.ce_mark = 0.2;
		CcConfig cc;
		cc.kind = kind;
		cc.dcqcn.line_rate_bps = 10000000000ULL;
		Pair p = Open(net, cc);
		EXPECT_EQ(Transfer(net, p, 300, 8000, 10 * kNsPerSec), 300u);
		ConnStats cs = p.client->Stats(), ss = p.server->Stats();
		EXPECT_GT(ss.ce_rx, 0u);
		EXPECT_GT(ss.cnp_tx, 0u);
		EXPECT_EQ(cs.cnp_rx, ss.cnp_tx);
		EXPECT_GT(cs.cc.cnps, 0u);
		EXPECT_LT(cs.cc.rate_bps, cc.dcqcn.line_rate_bps);
	}
	FakeNet net(SmallConfig(), 32);
	net.imp.ce_mark = 1.0;
	Pair p = Open(net, CcConfig());
	EXPECT_EQ(Transfer(net, p, 50, 8000, kNsPerSec), 50u);
	EXPECT_EQ(p.server->Stats().ce_rx, 0u);
}

// Reno with ECN (CcConfig::ecn): its packets are ECN-capable, the receiver
// answers CE marks with CNPs, and the sender cuts its window as for a loss,
// retransmitting nothing.  Once the window has grown, the network marks
// every packet for one RTT (400 us): the window is cut once (twice if the
// marks reach into the next window), not collapsed.  (Here the acks clock
// out each window as one burst, which earns one CNP, so the once-per-window
// rule, shared with loss recovery, is not what limits the cuts.)
TEST(Engine, EcnEchoCutsTheWindowWithoutRetransmitting)
{
	for (CcKind kind : {CcKind::kReno, CcKind::kMltcp}) {
		FakeNet net(SmallConfig(), 33, 200 * kNsPerUs);
		CcConfig cc;
		cc.kind = kind;
		cc.ecn = true;
		Pair p = Open(net, cc);
		uint32_t sent = 0, got = 0;
		std::vector<uint8_t> m;
		auto pump = [&] {
			while (sent < 2000 && p.client->Send(MakeMsg(9, sent, 8000), net.now).ok())
				sent++;
			while (p.server->Recv(&m))
				got++;
		};
		ASSERT_TRUE(net.RunUntil([&] { pump(); return p.client->Stats().cc.cwnd >= 40; }, kNsPerSec));
		// Marks for one RTT, then none; the window just before the echo
		// returns is the peak (slow start may still double it meanwhile).
		uint32_t peak = 0;
		for (uint64_t t = 0; t < 1600; t += 50) {
			net.imp.ce_mark = t < 400 ? 1.0 : 0;
			net.RunUntil([&] { pump(); return false; }, 50 * kNsPerUs);
			ConnStats x = p.client->Stats();
			if (!x.ecn_reductions)
				peak = std::max(peak, x.cc.cwnd);
		}
		const uint32_t cut = p.client->Stats().cc.cwnd;
		EXPECT_LT(cut, peak) << CcName(kind);
		EXPECT_GE(cut, peak / 5) << CcName(kind);
		ASSERT_TRUE(net.RunUntil([&] { pump(); return got == sent && sent == 2000; }, 10 * kNsPerSec));
		ConnStats cs = p.client->Stats(), ss = p.server->Stats();
		EXPECT_GE(ss.ce_rx, 20u) << CcName(kind);
		EXPECT_EQ(cs.cnp_rx, ss.cnp_tx) << CcName(kind);
		EXPECT_GE(cs.ecn_reductions, 1u) << CcName(kind);
		EXPECT_LE(cs.ecn_reductions, 2u) << CcName(kind);
		EXPECT_EQ(cs.pkts_retx, 0u) << CcName(kind);
	}
}

// The window restarts only after an idle period longer than the RTO and
// EngineConfig::idle_restart_min_ns (Linux: RTO >= 200 ms), so an iteration
// after a 100 ms compute phase keeps its window; with the threshold at 0
// the 10 ms RTO floor decides, and it restarts.
TEST(Engine, WindowRestartsOnlyAfterALongIdlePeriod)
{
	for (uint64_t restart_ms : {200, 0}) {
		EngineConfig cfg = SmallConfig();
		cfg.idle_restart_min_ns = restart_ms * kNsPerMs;
		FakeNet net(cfg, 34);
		Pair p = Open(net, CcConfig());
		ASSERT_EQ(Transfer(net, p, 200, 8000, 10 * kNsPerSec), 200u);
		const uint32_t grown = p.client->Stats().cc.cwnd;
		ASSERT_GE(grown, 40u);
		net.RunUntil([] { return false; }, 100 * kNsPerMs);	// compute
		ASSERT_EQ(Transfer(net, p, 1, 1000, kNsPerSec, 5), 1u);
		if (restart_ms)
			EXPECT_GE(p.client->Stats().cc.cwnd, grown);
		else
			EXPECT_LE(p.client->Stats().cc.cwnd, grown / 4);
		net.RunUntil([] { return false; }, 450 * kNsPerMs);	// longer
		ASSERT_EQ(Transfer(net, p, 1, 1000, kNsPerSec, 6), 1u);
		EXPECT_LE(p.client->Stats().cc.cwnd, std::max(grown / 4, 11u)) << restart_ms;
	}
}

// A paced sender whose poll loop runs only every 200 us (usleep() granularity
// on a shared host) still sends at its rate: the pacer lets it catch up on
// the time it slept.  With a catch-up of 4 packets only, 1000-byte packets
// at 400 Mbit/s (21 us apart) were capped near 5 per poll: 216 Mbit/s.
TEST(Engine, PacedRateHoldsWithSparsePolls)
{
	constexpr uint64_t kPollNs = 200 * kNsPerUs, kRateBps = 400000000;
	FakeNet net(SmallConfig(), 41, 20000, kPollNs);
	CcConfig cc;
	cc.kind = CcKind::kDcqcn;
	cc.dcqcn.line_rate_bps = kRateBps;
	Pair p = Open(net, cc);
	const uint64_t t0 = net.now;
	ASSERT_EQ(Transfer(net, p, 100, 50000, 10 * kNsPerSec), 100u);
	ConnStats cs = p.client->Stats();
	double wire_bits = 8.0 * (double)(cs.bytes_sent + cs.pkts_sent * (14 + 20 + 8 + sizeof(WireHeader)));
	double rate = wire_bits * 1e9 / (double)(net.now - t0);
	EXPECT_EQ(cs.cc.cnps, 0u);
	EXPECT_GT(rate, 0.95 * kRateBps) << "paced at " << rate / 1e6 << " Mbit/s";
	EXPECT_LT(rate, 1.05 * kRateBps) << "paced at " << rate / 1e6 << " Mbit/s";
}

// Reno: loss halves cwnd; without loss cwnd grows.
TEST(Cc, RenoAndCubicReactToLoss)
{
	for (CcKind kind : {CcKind::kReno, CcKind::kMltcp, CcKind::kCubic, CcKind::kMltcpCubic}) {
		CcConfig c;
		c.kind = kind;
		CongestionControl cc(c, 0, 0);
		uint64_t acked = 0, now = 0;
		for (int i = 0; i < 200; i++) {
			acked += 1000;
			now += 10000;
			cc.OnAck({now, acked, 1, 100, true, false});
		}
		uint32_t before = cc.cwnd();
		EXPECT_GT(before, c.initial_cwnd) << CcName(kind);
		cc.OnLoss(now);
		EXPECT_LT(cc.cwnd(), before) << CcName(kind);
		EXPECT_GE(cc.cwnd(), before / 2) << CcName(kind);
		cc.OnRto(now, 0);
		EXPECT_EQ(cc.cwnd(), 1u) << CcName(kind);
	}
}
