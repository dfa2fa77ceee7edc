// SPDX-License-Identifier: GPL-2.0-only
//
// sim_model_tests.cc - unit tests of the ns-3 MLTCP models (ctest label sim):
//   - TcpMltcpReno / TcpMltcpCubic make the core's gain and window decisions
//     for a scripted ack sequence; disabled, Reno equals ns-3's TcpLinuxReno
//     and CUBIC the core's CUBIC driven directly;
//   - their loss response keeps beta * F of the window, as hand-computed;
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
#include "sim-profile.h"
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

// These tests check the models' mechanics against the paper's F as given:
// no norm, no tail hold, no seed (the core's tests cover those, the agreement test
// holds the models to the core with every default).
template <typename Cc>
void UsePaperGain(Ptr<Cc> cc) {
  cc->SetAttribute("Normalize", BooleanValue(false));
  cc->SetAttribute("TailWindows", UintegerValue(0));
  cc->SetAttribute("FirstSeed", BooleanValue(false));
}

mltcp::Params PaperParams() {
  mltcp_params raw = MLTCP_PARAMS_INIT;
  raw.normalize = 0;
  raw.tail_windows = 0;
  raw.first_seed = 0;
  return mltcp::Params(raw);
}

// The same decisions computed straight from the core.
struct CoreReference {
  mltcp::Params p = PaperParams();
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
  UsePaperGain(cc);
  auto tcb = MakeTcb(20, 10);  // congestion avoidance from the start
  CoreReference ref;
  ref.flow = mltcp::Flow(0, 0);
  uint32_t ref_cwnd = 20, ref_cnt = 0, non_neutral = 0, steps = 0;
  bool ref_started = false;
  mltcp_reno_cache ref_cache;
  mltcp_reno_cache_init(&ref_cache);
  RunScript(cc, tcb, Script(6, 200), [&](const Step& st, uint64_t acked) {
    if (!ref_started) {  // the model starts its tracker on the first hook
      ref.flow = mltcp::Flow(0, static_cast<uint32_t>(Simulator::Now().GetMicroSeconds()));
      ref_started = true;
    }
    ref.Step(st, acked);
    const uint32_t gain = ref.flow.Gain(ref.p);
    ASSERT_EQ(cc->state().Gain(), gain) << "at " << Simulator::Now().GetSeconds();
    if (!st.tx_start) {
      // tcp_cong_avoid_ai with w from the core's per-ack cache
      const uint32_t w =
          mltcp_reno_ai_w_cached(&ref_cache, &ref.flow.state(), &ref.p.raw(), ref_cwnd);
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

// Disabled, the model is the core's CUBIC with nothing added: the same
// window, ack for ack, as mltcp_bictcp_* and mltcp_window_* driven directly.
TEST(TcpMltcpCubic, DisabledEqualsCoreCubic) {
  auto cc = CreateObject<TcpMltcpCubic>();
  cc->SetAttribute("Enabled", BooleanValue(false));
  auto tcb = MakeTcb(4, 30);
  mltcp_bictcp ref;
  mltcp_window w;
  mltcp_window_init(&w, 4, UINT32_MAX / kSeg);
  w.ssthresh = 30;
  bool started = false;
  uint32_t last_active = 0;  // the tracker's last acked progress
  std::vector<uint32_t> a, b;
  RunScript(cc, tcb, Script(3, 400), [&](const Step& st, uint64_t) {
    const uint32_t now = static_cast<uint32_t>(Simulator::Now().GetMicroSeconds());
    if (!started) {
      mltcp_bictcp_init(&ref, now, 0);
      last_active = now;
      started = true;
    }
    if (st.tx_start) {
      mltcp_bictcp_on_tx_start(&ref, now, now - last_active);
      last_active = now;
    } else {
      last_active = now;
      uint32_t acked = st.segs;
      if (mltcp_window_in_slow_start(&w))
        acked = mltcp_window_slow_start(&w, acked);
      if (acked)
        mltcp_window_cong_avoid_ai(
            &w, mltcp_bictcp_cong_avoid(&ref, w.cwnd, acked, now, MLTCP_GAIN_ONE), acked);
    }
    a.push_back(tcb->GetCwndInSegments());
    b.push_back(w.cwnd);
  });
  EXPECT_EQ(a, b);
  EXPECT_GT(a.back(), 30u);
}

TEST(TcpMltcpCubic, CntScaledByCoreGain) {
  auto cc = CreateObject<TcpMltcpCubic>();
  UsePaperGain(cc);
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
      ASSERT_EQ(cc->last_cnt(), mltcp_cubic_cnt(cc->bic().cnt, gain));
      scaled += cc->last_cnt() != mltcp_cubic_cnt(cc->bic().cnt, MLTCP_GAIN_ONE);
    }
  });
  EXPECT_GT(scaled, 100u);
}

// F scales CUBIC's clock: over the same acks and time, F = 0.25 grows the
// window less than CUBIC, F rising to 1.75 more (core/mltcp_window.h).
uint32_t CubicCwndAfter(bool enabled, uint64_t hint_bytes) {
  auto cc = CreateObject<TcpMltcpCubic>();
  cc->SetAttribute("Enabled", BooleanValue(enabled));
  cc->SetAttribute("FirstSeed", BooleanValue(false));  // F from the first hint
  auto tcb = MakeTcb(20, 10);
  if (hint_bytes)
    Simulator::Schedule(MicroSeconds(500), [cc, hint_bytes] { cc->Hint(hint_bytes); });
  std::vector<Step> script;
  for (int k = 0; k < 300; k++)
    script.push_back({0.001 + 0.01 * k, false, 2});  // 2 segments every 10 ms
  RunScript(cc, tcb, script, [](const Step&, uint64_t) {});
  return tcb->GetCwndInSegments();
}

TEST(TcpMltcpCubic, ClockScaledByGain) {
  const uint32_t plain = CubicCwndAfter(false, 0);
  const uint32_t slow = CubicCwndAfter(true, 1000000000000ull);  // ratio ~0: F = 0.25
  const uint32_t fast = CubicCwndAfter(true, 300 * kSeg);        // F 0.25 -> 1.75
  EXPECT_LT(slow, plain);
  EXPECT_GT(fast, plain);
  EXPECT_GT(plain, 25u);  // CUBIC itself grew
}

TEST(TcpMltcp, HintDrivesIterations) {
  auto cc = CreateObject<TcpMltcpReno>();
  cc->SetAttribute("FirstSeed", BooleanValue(false));  // F from the first hint
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

// The loss response: ssthresh keeps beta * F of a 40-segment window, clamped
// to [beta/2, (1 + beta)/2] (docs/design.md, "Decrease"), computed here by
// hand.  A hinted iteration of 400 segments: F = 0.25 at its start, 0.625
// after a quarter, 1.75 at its end.
template <typename Cc>
std::vector<uint32_t> SsThreshAlongHintedIteration(bool scale_decrease) {
  auto cc = CreateObject<Cc>();
  UsePaperGain(cc);
  cc->SetAttribute("ScaleDecrease", BooleanValue(scale_decrease));
  std::vector<uint32_t> segs;
  auto tcb = MakeTcb(40, 10);
  Simulator::Schedule(Seconds(0.0005), [cc] { cc->Hint(400 * kSeg); });
  RunScript(cc, tcb, Script(1, 400), [&](const Step& st, uint64_t acked) {
    if (st.tx_start || (acked != 2 * kSeg && acked != 100 * kSeg && acked != 400 * kSeg))
      return;
    // A fresh copy answers, so CUBIC's W_max bookkeeping cannot carry over.
    auto probe = DynamicCast<Cc>(cc->Fork());
    auto at = CopyObject<TcpSocketState>(tcb);
    at->m_cWnd = 40 * kSeg;
    segs.push_back(probe->GetSsThresh(at, 40 * kSeg) / kSeg);
  });
  return segs;
}

TEST(TcpMltcpReno, LossKeepsBetaTimesGain) {
  // 1/2 * F: 0.125 -> clamp 0.25 (10), 0.3125 (12.5 -> 12), 0.875 -> 0.75 (30).
  // F at 2 segments acked is 0.25 + 1.5 * 2/400, still below the clamp.
  EXPECT_EQ(SsThreshAlongHintedIteration<TcpMltcpReno>(true), (std::vector<uint32_t>{10, 12, 30}));
  EXPECT_EQ(SsThreshAlongHintedIteration<TcpMltcpReno>(false), (std::vector<uint32_t>{20, 20, 20}));
}

TEST(TcpMltcpCubic, LossKeepsBetaTimesGain) {
  // CUBIC's 717/1024 * F: 0.175 -> clamp 358/1024 (13.98 -> 13), 448/1024
  // (17.5 -> 17), 1.225 -> clamp 870/1024 (33.98 -> 33).  Unscaled:
  // 40 * 717/1024 = 28.
  EXPECT_EQ(SsThreshAlongHintedIteration<TcpMltcpCubic>(true), (std::vector<uint32_t>{13, 17, 33}));
  EXPECT_EQ(SsThreshAlongHintedIteration<TcpMltcpCubic>(false), (std::vector<uint32_t>{28, 28, 28}));
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
  c.cc = CcKind::kMltcp;
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
// A DCQCN flow over a 10 Gbit/s link, and a socket at the receiver that
// sends it CNPs (2.5 MB byte counter: not reached by these scripts).
struct DcqcnUnderTest {
  TwoNodes net{"10Gbps", "0us"};
  Ptr<DcqcnFlow> flow;
  Ptr<Socket> cnp_src;
  explicit DcqcnUnderTest(bool use_mltcp) {
    DcqcnFlowConfig c;
    c.dcqcn = DcqcnParamsForLine(10000000000ULL);
    mltcp_params_default(&c.mltcp);
    c.mltcp.first_seed = 0;  // F(1) at the first iteration's end, no seed's stand-in
    c.use_mltcp = use_mltcp;
    c.port = 4791;
    c.cnp_port = 4792;
    flow = Create<DcqcnFlow>(net.n.Get(0), net.ifs.GetAddress(0), net.n.Get(1),
                             net.ifs.GetAddress(1), c);
    cnp_src = Socket::CreateSocket(net.n.Get(1), UdpSocketFactory::GetTypeId());
    cnp_src->Connect(InetSocketAddress(net.ifs.GetAddress(0), c.cnp_port));
  }
  void SendCnp() { cnp_src->Send(Create<Packet>(64)); }
};

TEST(DcqcnFlow, CutAndRecoverAsHandComputed) {
  DcqcnUnderTest t(false);
  auto& flow = t.flow;
  auto send_cnp = [&] { t.SendCnp(); };
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

  // Hand computation (DCQCN paper, g = 1/256, F = 5, 55 us timers; the
  // 2.5 MB byte counter is not reached here).  alpha starts at 1 and decays
  // once per 55 us period without CNP; the sender applies elapsed periods
  // at each packet (every 7.2 us at 10 Gbit/s), so at the first CNP 18
  // periods have passed.  At a CNP R_T <- R_C, so afterwards every rate
  // timer expiry halves the distance to R_T = line rate (fast recovery for
  // 5 stages; the additive steps after that are capped by the line rate).
  const double line = 10e9, g = 1.0 / 256;
  double alpha = std::pow(1 - g, 18);
  alpha = (1 - g) * alpha + g;
  const double rc0 = line * (1 - alpha / 2);
  for (int k = 0; k < 8; k++) {
    const double expect = line - (line - rc0) / std::pow(2, k);
    EXPECT_NEAR(samples[k].second, expect, expect * 1e-4) << "sample " << k;
  }
  // CNP 2, 1000 us later: alpha decayed over 18 more periods, then the cut.
  alpha = alpha * std::pow(1 - g, 18);
  alpha = (1 - g) * alpha + g;
  const double before = line - (line - rc0) / std::pow(2, 18);
  const double after = before * (1 - alpha / 2);
  EXPECT_NEAR(samples[8].second, after, after * 1e-4);
}

// The rate timer runs through the compute phase under the ending iteration's
// gain, F(1) = 1.75, not the next iteration's F(0) = 0.25: the flow brings
// its rate up to date before a hint resets F.  Script: a 100 KB iteration at
// 10 Gbit/s; two CNPs at 30 and 31 us (alpha stays 1: R_T = 5 Gbit/s, R_C =
// 2.5); the 5 fast recovery stages end while bytes are still sent, every
// later timer expiry is additive (R_AI = 10 Mbit/s at 10 Gbit/s) with all
// bytes sent; the next iteration is hinted at 2010 us.  So the increase of
// R_T over the idle time is 1.75x plain DCQCN's (was 0.25x).
uint64_t TargetAfterIdle(bool use_mltcp) {
  DcqcnUnderTest t(use_mltcp);
  auto& flow = t.flow;
  auto send_cnp = [&] { t.SendCnp(); };
  uint64_t rt = 0;
  Simulator::Schedule(MicroSeconds(0), [&] { flow->Hint(100000); flow->Send(100000); });
  Simulator::Schedule(MicroSeconds(30), send_cnp);
  Simulator::Schedule(MicroSeconds(31), send_cnp);
  Simulator::Schedule(MicroSeconds(2010), [&] {
    EXPECT_EQ(flow->received(), 100000u);
    flow->Hint(100000);
    flow->Send(100000);
    rt = flow->target_bps();
  });
  Simulator::Stop(MicroSeconds(2011));
  Simulator::Run();
  EXPECT_EQ(flow->cnps_received(), 2u);
  return rt;
}

TEST(DcqcnFlow, IdleTimeScaledByEndingIterationsGain) {
  const uint64_t base = 5000000000ULL;  // R_T after the second CNP
  const uint64_t plain = TargetAfterIdle(false), mltcp = TargetAfterIdle(true);
  ASSERT_GT(plain, base);
  EXPECT_EQ((plain - base) % 10000000ULL, 0u);  // whole R_AI steps
  EXPECT_EQ(mltcp - base, (plain - base) * 7 / 4);  // F(1) = 1792 / 1024
}

// ---------------------------------------------------------------------------
// The job model's timing rules (profiles/README.md) with a flow that delivers
// at a fixed rate: 1 byte per microsecond.
class FakeFlow : public JobFlow {
 public:
  void Send(uint64_t bytes) override {
    queued_ += bytes;
    complete_ = false;
    sends.emplace_back(Simulator::Now().GetMicroSeconds(), bytes);
    const uint64_t start = std::max<uint64_t>(busy_until_, Simulator::Now().GetMicroSeconds());
    busy_until_ = start + bytes;
    Simulator::Schedule(MicroSeconds(busy_until_) - Simulator::Now(),
                        [this, bytes] { Received(bytes); });
  }
  void Hint(uint64_t) override {}
  std::vector<std::pair<int64_t, uint64_t>> sends;

 private:
  uint64_t busy_until_ = 0;
};

std::vector<IterationRecord> RunJob(mltcp_sim::JobProfile p, uint32_t iterations,
                                    Ptr<FakeFlow> flow) {
  JobConfig c;
  c.profile = p;
  c.iterations = iterations;
  auto job = CreateObject<TrainingJob>();
  job->Configure(c, {flow});
  job->Start();
  Simulator::Run();
  auto r = job->records();
  Simulator::Destroy();
  return r;
}

TEST(TrainingJob, SyncAsyncAndBuckets) {
  mltcp_sim::JobProfile p;
  p.compute_ms = 10;
  p.bytes = 15000;  // 15 ms of communication
  auto sync = RunJob(p, 3, Create<FakeFlow>());
  ASSERT_EQ(sync.size(), 3u);
  EXPECT_NEAR(sync[1].comm_start_s - sync[0].end_s, 0.010, 1e-9);  // compute after comm
  EXPECT_NEAR(sync[1].end_s - sync[1].start_s, 0.025, 1e-9);

  p.async = true;  // compute of i+1 runs during comm of i: no idle gap
  auto async = RunJob(p, 3, Create<FakeFlow>());
  EXPECT_NEAR(async[1].comm_start_s, async[0].comm_end_s, 1e-9);
  EXPECT_NEAR(async[2].end_s - async[2].start_s, 0.015, 1e-9);

  p.async = false;
  p.buckets = 4;
  p.bucket_gap_us = 1000;
  p.bytes_cycle = {1.0, 0.5};
  p.bytes = 4002;
  auto flow = Create<FakeFlow>();
  auto b = RunJob(p, 2, flow);
  ASSERT_EQ(flow->sends.size(), 8u);
  EXPECT_EQ(flow->sends[0].second, 1001u);  // 4002 in 4: 1001, 1001, 1000, 1000
  EXPECT_EQ(flow->sends[3].second, 1000u);
  EXPECT_EQ(flow->sends[3].first - flow->sends[0].first, 3000);
  EXPECT_EQ(b[1].bytes, 2001u);  // second iteration: x 0.5
  // The flow is busy 1001 us per bucket from t = 0, so it ends at 4002 us.
  EXPECT_NEAR(b[0].comm_end_s - b[0].comm_start_s, 0.004002, 1e-9);
}

// keep_running: after its recorded iterations the job signals on_finished
// and keeps iterating (still sending, so still contending) until the
// simulation stops; those iterations are not recorded but are reported as
// background communication, the one in progress ending at the stop.
TEST(TrainingJob, KeepRunningAfterRecordedIterations) {
  mltcp_sim::JobProfile p;
  p.compute_ms = 10;
  p.bytes = 15000;  // 15 ms of communication: a 25 ms period
  for (bool keep : {false, true}) {
    JobConfig c;
    c.profile = p;
    c.iterations = 3;
    c.keep_running = keep;
    auto flow = Create<FakeFlow>();
    auto job = CreateObject<TrainingJob>();
    job->Configure(c, {flow});
    int finished = 0;
    double finished_at = -1;
    job->on_finished = [&] {
      finished++;
      finished_at = Simulator::Now().GetSeconds();
      // The slowest job of a mix would finish 62 ms later.
      Simulator::Stop(MilliSeconds(62));
    };
    job->Start();
    Simulator::Run();
    EXPECT_EQ(finished, 1);
    EXPECT_NEAR(finished_at, 0.075, 1e-9);
    ASSERT_EQ(job->records().size(), 3u);
    EXPECT_TRUE(job->finished());
    const auto bg = job->background();
    if (!keep) {
      EXPECT_EQ(job->extra_iterations(), 0u);
      EXPECT_TRUE(bg.empty());
      EXPECT_EQ(flow->sends.size(), 3u);
    } else {
      // Iterations 4 and 5 end at 100 and 125 ms; the 6th communicates from
      // 135 ms until the stop at 137 ms.
      EXPECT_EQ(job->extra_iterations(), 2u);
      ASSERT_EQ(bg.size(), 3u);
      EXPECT_NEAR(bg[0].first, 0.085, 1e-9);
      EXPECT_NEAR(bg[0].second, 0.100, 1e-9);
      EXPECT_NEAR(bg[2].first, 0.135, 1e-9);
      EXPECT_NEAR(bg[2].second, 0.137, 1e-9);
      EXPECT_EQ(flow->sends.size(), 6u);
    }
    Simulator::Destroy();
  }
}

// ---------------------------------------------------------------------------
TEST(Profiles, SharedFormatAndMix) {
  const auto set = mltcp_sim::ParseProfiles(
      "# c\nprofile a compute_us=10000 bytes=2.5M\n"
      "profile b compute_us=5000 bytes=1k buckets=4 bucket_gap_us=100 bytes_cycle=1,0.5\n"
      "profile c bytes=1G compute_us=0 async=1 conns=4\nprofile d bulk=1\n",
      "t");
  EXPECT_EQ(set.Get("a").bytes, 2500000u);
  EXPECT_DOUBLE_EQ(set.Get("a").compute_ms, 10.0);
  EXPECT_EQ(set.Get("b").buckets, 4u);
  EXPECT_EQ(mltcp_sim::IterationBytes(set.Get("b"), 3), 500u);
  EXPECT_TRUE(set.Get("c").async);
  EXPECT_EQ(set.Get("c").conns, 4u);
  EXPECT_TRUE(set.Get("d").bulk);
  const auto mix = mltcp_sim::ParseMix("a:2,c", set);
  ASSERT_EQ(mix.size(), 3u);
  EXPECT_EQ(mix[1].name, "a");
  EXPECT_EQ(mltcp_sim::SplitShare(10, 4, 0), 3u);
  EXPECT_EQ(mltcp_sim::SplitShare(10, 4, 3), 2u);
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
  ExpectProfileError("profile a compute_us=1 bytes=1M\nprofile b compute_us=x bytes=1M\n",
                     "f:2:");
  ExpectProfileError("profile a compute_us=1 bytes=-1M\n", "bytes");
  ExpectProfileError("profile a compute_us=1 bytes=1M colour=red\n", "unknown field");
  ExpectProfileError("profile a compute_us=1\n", "bytes");
  ExpectProfileError("# nothing\n", "no profiles");
  const auto set = mltcp_sim::ParseProfiles("profile a compute_us=1 bytes=1M\n", "f");
  EXPECT_THROW(mltcp_sim::ParseMix("zzz", set), mltcp_sim::ProfileError);
  EXPECT_THROW(mltcp_sim::ParseMix("a:0", set), mltcp_sim::ProfileError);
  EXPECT_THROW(mltcp_sim::LoadProfiles({"/nonexistent/profiles.txt"}), mltcp_sim::ProfileError);
  EXPECT_THROW(mltcp_sim::ParseBytes("-3"), std::invalid_argument);
}

}  // namespace
