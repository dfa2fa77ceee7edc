// SPDX-License-Identifier: GPL-2.0-only
//
// sim_model_tests.cc - unit tests of the ns-3 MLTCP models (ctest label sim):
//   - TcpMltcpReno / TcpMltcpCubic make the core's gain and window decisions
//     for a scripted ack sequence, and equal their ns-3 base when disabled;
//   - ns-3 fires CA_EVENT_TX_START, so boundary detection works in a real
//     simulated connection;
//   - the DCQCN flow cuts and recovers its rate as hand-computed for a
//     scripted CNP sequence;
//   - the profile parser rejects bad files naming line and field.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include "mltcp-dcqcn.h"
#include "mltcp-tcp.h"
#include "profile.h"
#include "training-job.h"

using namespace ns3;

namespace {

constexpr uint32_t kSeg = 1000;

Ptr<TcpSocketState> MakeTcb(uint32_t cwnd_segs, uint32_t ssthresh_segs) {
  auto tcb = CreateObject<TcpSocketState>();
  tcb->m_segmentSize = kSeg;
  tcb->m_cWnd = cwnd_segs * kSeg;
  tcb->m_ssThresh = ssthresh_segs * kSeg;
  tcb->m_lastAckedSeq = SequenceNumber32(1);
  return tcb;
}

// A scripted connection: bursts of `per_iter` segments acked two at a time
// every `ack_gap`, separated by idle gaps that start a new iteration with a
// CA_EVENT_TX_START, as the kernel and ns-3 report them.
struct Step {
  double t_s;
  bool tx_start;
  uint32_t segs;
};

std::vector<Step> Script(uint32_t iterations, uint32_t per_iter) {
  std::vector<Step> s;
  double t = 0.001;
  for (uint32_t i = 0; i < iterations; i++) {
    s.push_back({t, true, 0});
    for (uint32_t k = 0; k < per_iter; k += 2) {
      t += 50e-6;
      s.push_back({t, false, 2});
    }
    t += 0.05;  // compute phase: 50 ms idle
  }
  return s;
}

// Runs `script` through `cc` inside the simulator; `check` runs after each
// step with the number of acked bytes so far.
void RunScript(Ptr<TcpCongestionOps> cc, Ptr<TcpSocketState> tcb, const std::vector<Step>& script,
               std::function<void(const Step&, uint64_t)> check) {
  auto acked = std::make_shared<uint64_t>(0);
  const Time rtt = MicroSeconds(100);
  for (const auto& st : script) {
    Simulator::Schedule(Seconds(st.t_s), [=] {
      if (st.tx_start) {
        cc->CwndEvent(tcb, TcpSocketState::CA_EVENT_TX_START);
      } else {
        tcb->m_lastAckedSeq = tcb->m_lastAckedSeq + st.segs * kSeg;
        *acked += st.segs * kSeg;
        cc->PktsAcked(tcb, st.segs, rtt);
        cc->IncreaseWindow(tcb, st.segs);
      }
      check(st, *acked);
    });
  }
  Simulator::Run();
  Simulator::Destroy();
}

// The same decisions computed straight from the core.
struct CoreReference {
  mltcp::Params p;
  mltcp::Flow flow;
  uint32_t srtt_us = 0;
  void Step(const ::Step& st, uint64_t acked) {
    const uint32_t now = static_cast<uint32_t>(Simulator::Now().GetMicroSeconds());
    if (st.tx_start) {
      flow.OnTxStart(p, acked, now, srtt_us);
    } else {
      srtt_us = srtt_us == 0 ? 100 : srtt_us - (srtt_us >> 3) + (100 >> 3);
      flow.OnAck(acked, now);
    }
  }
};

TEST(TcpMltcpReno, SameGainAndWindowAsCore) {
  auto cc = CreateObject<TcpMltcpReno>();
  auto tcb = MakeTcb(20, 10);  // congestion avoidance from the start
  CoreReference ref;
  ref.flow = mltcp::Flow(0, 0);
  uint32_t ref_cwnd = 20, ref_cnt = 0, non_neutral = 0, steps = 0;
  bool ref_started = false;
  RunScript(cc, tcb, Script(6, 200), [&](const Step& st, uint64_t acked) {
    if (!ref_started) {  // the model starts its tracker on the first hook
      ref.flow = mltcp::Flow(0, static_cast<uint32_t>(Simulator::Now().GetMicroSeconds()));
      ref_started = true;
    }
    ref.Step(st, acked);
    const uint32_t gain = ref.flow.Gain(ref.p);
    ASSERT_EQ(cc->state().Gain(), gain) << "at " << Simulator::Now().GetSeconds();
    if (!st.tx_start) {
      const uint32_t w = mltcp_reno_ai_w(ref_cwnd, gain);  // tcp_cong_avoid_ai
      if (ref_cnt >= w) {
        ref_cnt = 0;
        ref_cwnd++;
      }
      ref_cnt += st.segs;
      if (ref_cnt >= w) {
        ref_cwnd += ref_cnt / w;
        ref_cnt -= (ref_cnt / w) * w;
      }
      ASSERT_EQ(cc->last_ai_w(), w);
      ASSERT_EQ(tcb->GetCwndInSegments(), ref_cwnd);
      non_neutral += gain != mltcp::kGainOne;
      steps++;
    }
  });
  EXPECT_EQ(cc->state().flow().state().iterations, 5u);
  EXPECT_EQ(cc->state().flow().state().bytes_per_iter, 200u * kSeg);
  EXPECT_GT(non_neutral, steps / 2);  // F really steered the window
}

TEST(TcpMltcpReno, DisabledEqualsLinuxReno) {
  auto cc = CreateObject<TcpMltcpReno>();
  cc->SetAttribute("Enabled", BooleanValue(false));
  auto base = CreateObject<TcpLinuxReno>();
  auto tcb = MakeTcb(4, 10), tcb_base = MakeTcb(4, 10);  // slow start, then CA
  std::vector<uint32_t> a, b;
  RunScript(cc, tcb, Script(3, 300), [&](const Step&, uint64_t) { a.push_back(tcb->m_cWnd); });
  RunScript(base, tcb_base, Script(3, 300),
            [&](const Step&, uint64_t) { b.push_back(tcb_base->m_cWnd); });
  EXPECT_EQ(a, b);
  EXPECT_GT(a.back(), 4 * kSeg * 10);
}

TEST(TcpMltcpCubic, DisabledEqualsCubic) {
  auto cc = CreateObject<TcpMltcpCubic>();
  cc->SetAttribute("Enabled", BooleanValue(false));
  auto base = CreateObject<TcpCubic>();
  auto tcb = MakeTcb(4, 30), tcb_base = MakeTcb(4, 30);
  std::vector<uint32_t> a, b;
  RunScript(cc, tcb, Script(3, 400), [&](const Step&, uint64_t) { a.push_back(tcb->m_cWnd); });
  RunScript(base, tcb_base, Script(3, 400),
            [&](const Step&, uint64_t) { b.push_back(tcb_base->m_cWnd); });
  EXPECT_EQ(a, b);
  EXPECT_GT(a.back(), 30 * kSeg);
}

TEST(TcpMltcpCubic, CntScaledByCoreGain) {
  auto cc = CreateObject<TcpMltcpCubic>();
  auto tcb = MakeTcb(20, 10);
  CoreReference ref;
  bool ref_started = false;
  uint32_t scaled = 0;
  RunScript(cc, tcb, Script(6, 200), [&](const Step& st, uint64_t acked) {
    if (!ref_started) {
      ref.flow = mltcp::Flow(0, static_cast<uint32_t>(Simulator::Now().GetMicroSeconds()));
      ref_started = true;
    }
    ref.Step(st, acked);
    const uint32_t gain = ref.flow.Gain(ref.p);
    ASSERT_EQ(cc->state().Gain(), gain);
    if (!st.tx_start) {
      ASSERT_EQ(cc->last_cnt(), mltcp_cubic_cnt(cc->last_base_cnt(), gain));
      scaled += cc->last_cnt() != cc->last_base_cnt();
    }
  });
  EXPECT_GT(scaled, 100u);
}

TEST(TcpMltcp, HintDrivesIterations) {
  auto cc = CreateObject<TcpMltcpReno>();
  auto tcb = MakeTcb(20, 10);
  auto script = Script(1, 100);
  uint32_t gain_mid = 0;
  Simulator::Schedule(Seconds(0.0005), [&] { cc->Hint(400 * kSeg); });
  RunScript(cc, tcb, script, [&](const Step&, uint64_t acked) {
    if (acked == 100 * kSeg)
      gain_mid = cc->state().Gain();
  });
  // A quarter of the hinted iteration: F = 0.25 + 1.5 * 0.25 = 0.625.
  EXPECT_EQ(gain_mid, MLTCP_DEF_INTERCEPT + MLTCP_DEF_SLOPE / 4);
}

// ---------------------------------------------------------------------------
struct TwoNodes {
  NodeContainer n;
  Ipv4InterfaceContainer ifs;
  explicit TwoNodes(const char* rate, const char* delay) {
    n.Create(2);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue(rate));
    p2p.SetChannelAttribute("Delay", StringValue(delay));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(9000));
    NetDeviceContainer d = p2p.Install(n);
    InternetStackHelper().Install(n);
    Ipv4AddressHelper ip("10.1.0.0", "255.255.255.0");
    ifs = ip.Assign(d);
  }
  ~TwoNodes() {
    Simulator::Destroy();
    Ipv4AddressGenerator::Reset();
  }
};

TEST(TcpMltcp, Ns3FiresTxStartAndDetectionFindsIterations) {
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(8948));
  Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(1)));
  TwoNodes net("1Gbps", "10us");
  TcpFlowConfig c;
  c.cc = CcKind::kMltcpReno;
  mltcp_params_default(&c.mltcp);
  c.port = 4000;
  auto flow = Create<TcpJobFlow>(net.n.Get(0), net.n.Get(1), net.ifs.GetAddress(1), c);
  for (int i = 0; i < 5; i++)
    Simulator::Schedule(MilliSeconds(10 + 30 * i), [flow] { flow->Send(1000000); });
  Simulator::Stop(Seconds(1));
  Simulator::Run();
  auto cc = DynamicCast<TcpMltcpReno>(flow->cc());
  ASSERT_TRUE(cc);
  EXPECT_EQ(flow->received(), 5000000u);
  EXPECT_GE(cc->state().tx_starts(), 5u);
  EXPECT_EQ(cc->state().flow().state().iterations, 4u);
  // Learned size: 1 MB per iteration (the first also carries the SYN's byte).
  EXPECT_NEAR(static_cast<double>(cc->state().flow().state().bytes_per_iter), 1e6, 2.0);
}

// ---------------------------------------------------------------------------
// DCQCN: a sender kept busy at 10 Gbit/s receives CNPs at scripted times; its
// rate follows the DCQCN equations computed here by hand in floating point.
TEST(DcqcnFlow, CutAndRecoverAsHandComputed) {
  TwoNodes net("10Gbps", "0us");
  DcqcnFlowConfig c;
  c.dcqcn = DcqcnParamsForLine(10000000000ULL);
  mltcp_params_default(&c.mltcp);
  c.port = 4791;
  c.cnp_port = 4792;
  auto flow = Create<DcqcnFlow>(net.n.Get(0), net.ifs.GetAddress(0), net.n.Get(1),
                                net.ifs.GetAddress(1), c);
  Ptr<Socket> cnp_src = Socket::CreateSocket(net.n.Get(1), UdpSocketFactory::GetTypeId());
  const Address sender(InetSocketAddress(net.ifs.GetAddress(0), c.cnp_port));
  auto send_cnp = [&] { cnp_src->SendTo(Create<Packet>(64), 0, sender); };
  std::vector<std::pair<double, double>> samples;  // (time us, rate)
  auto sample = [&] { samples.emplace_back(Simulator::Now().GetMicroSeconds(), flow->rate_bps()); };

  Simulator::Schedule(MicroSeconds(10), [&] { flow->Send(50000000); });
  Simulator::Schedule(MicroSeconds(1000), send_cnp);  // CNP 1 (arrives within 1 us)
  for (int k = 0; k < 8; k++)
    Simulator::Schedule(MicroSeconds(1000 + 30 + 55 * k), sample);
  Simulator::Schedule(MicroSeconds(2000), send_cnp);  // CNP 2
  Simulator::Schedule(MicroSeconds(2030), sample);
  Simulator::Stop(MicroSeconds(2100));
  Simulator::Run();
  const uint32_t cnps = flow->cnps_received();
  ASSERT_EQ(cnps, 2u);

  // Hand computation (DCQCN paper, g = 1/256, F = 5 fast-recovery stages,
  // 55 us timers; byte counter 2.5 MB is not reached in this window).
  const double line = 10e9, g = 1.0 / 256;
  double alpha = 1.0;                        // initial alpha
  alpha = (1 - g) * alpha + g;               // CNP 1: alpha stays 1
  double rt = line, rc = line * (1 - alpha / 2);  // 5 Gbit/s
  std::vector<double> expect;
  expect.push_back(rc);  // 30 us after the cut: no timer yet
  for (int k = 1; k < 8; k++) {
    rc = (rt + rc) / 2;  // fast recovery (stages 1..5), then AI (R_AI = 10 Mbit/s)
    if (k > 5) {
      rt += 40e6 / 4;
      rc = (rt + (rc * 2 - rt)) / 2;  // undo and redo with the raised target
    }
    expect.push_back(rc);
  }
  for (int k = 0; k < 8; k++)
    EXPECT_NEAR(samples[k].second, expect[k], expect[k] * 1e-3) << "sample " << k;
  // CNP 2, 1000 us after CNP 1: alpha decayed over 18 alpha periods first.
  alpha = alpha * std::pow(1 - g, 18);
  alpha = (1 - g) * alpha + g;
  const double before = samples.size() > 8 ? 0 : 0;
  (void)before;
  EXPECT_LT(samples[8].second, samples[7].second);
  EXPECT_GT(samples[8].second, samples[7].second * (1 - 0.5));
}

// ---------------------------------------------------------------------------
TEST(Profiles, ParseAndMix) {
  const auto set = mltcp_sim::ParseProfiles(
      "ref_mbps 100\n# c\na compute_ms=10 bytes=2.5M\nb compute_ms=5 bytes=1k buckets=4 "
      "bucket_gap_us=100 bytes_var=0.2\nc bytes=1G async=1 workers=8\n",
      "t");
  EXPECT_EQ(set.ref_mbps, 100);
  EXPECT_EQ(set.Get("a").bytes, 2500000u);
  EXPECT_EQ(set.Get("b").buckets, 4u);
  EXPECT_TRUE(set.Get("c").async);
  const auto mix = mltcp_sim::ParseMix("a:2,c", set);
  ASSERT_EQ(mix.size(), 3u);
  EXPECT_EQ(mix[1].name, "a");
  EXPECT_EQ(mix[2].workers, 8u);
}

void ExpectProfileError(const std::string& text, const std::string& needle) {
  try {
    mltcp_sim::ParseProfiles(text, "f");
    ADD_FAILURE() << "accepted: " << text;
  } catch (const mltcp_sim::ProfileError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Profiles, BadInputNamesLineAndField) {
  ExpectProfileError("a compute_ms=1 bytes=1M\nb compute_ms=-3 bytes=1M\n", "f:2: profile 'b' field compute_ms");
  ExpectProfileError("a compute_ms=1 bytes=-1M\n", "field bytes");
  ExpectProfileError("a compute_ms=1 bytes=1M colour=red\n", "unknown field");
  ExpectProfileError("a compute_ms=1\n", "bytes is required");
  ExpectProfileError("a compute_ms=1 bytes=1M\na compute_ms=1 bytes=1M\n", "defined twice");
  ExpectProfileError("# nothing\n", "no profiles");
  const auto set = mltcp_sim::ParseProfiles("a compute_ms=1 bytes=1M\n", "f");
  EXPECT_THROW(mltcp_sim::ParseMix("zzz", set), mltcp_sim::ProfileError);
  EXPECT_THROW(mltcp_sim::ParseMix("a:0", set), mltcp_sim::ProfileError);
  EXPECT_THROW(mltcp_sim::LoadProfiles("/nonexistent/profiles.txt"), mltcp_sim::ProfileError);
}

}  // namespace
