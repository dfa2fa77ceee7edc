// SPDX-License-Identifier: GPL-2.0-only
//
// dp_replay.cc - the simulator's half of the datapath agreement test
// (tests/replay/mltcp_dp_replay.h): plays a Reno or CUBIC event sequence
// through the ns-3 models TcpMltcpReno / TcpMltcpCubic, each event at its
// time in the simulator, the TCP stack's part done on a TcpSocketState as
// TcpSocketBase does it, and writes one decision per event.  (The ns-3
// DCQCN flow is packet-driven; its rate decisions are mltcp_dcqcn_flow_*,
// checked against hand-computed values in sim_model_tests.)
//
//   sim_dp_replay EVENTS > DECISIONS
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "ns3/core-module.h"
#include "ns3/internet-module.h"

#include "mltcp-tcp.h"

extern "C" {
#include "mltcp_dp_replay.h"
}

using namespace ns3;

namespace {

struct Replay {
  uint32_t algo = MLTCP_DP_RENO;
  Ptr<TcpCongestionOps> cc;
  Ptr<TcpSocketState> tcb;
  std::vector<mltcp_dp_decision> out;
  bool failed = false;

  MltcpFlowState& State() {
    return algo == MLTCP_DP_RENO ? DynamicCast<TcpMltcpReno>(cc)->state()
                                 : DynamicCast<TcpMltcpCubic>(cc)->state();
  }

  void Seq(const mltcp_dp_event& e) {
    tcb->m_lastAckedSeq = SequenceNumber32(static_cast<uint32_t>(e.acked_total));
    tcb->m_nextTxSequence = SequenceNumber32(static_cast<uint32_t>(e.acked_total) + e.inflight_bytes);
    tcb->m_rxBuffer->SetNextRxSequence(SequenceNumber32(static_cast<uint32_t>(e.received_total)));
  }

  void Step(const mltcp_dp_event& e, uint32_t seq) {
    if (e.kind == MLTCP_DP_INIT) {
      algo = static_cast<uint32_t>(e.bytes);
      if (algo == MLTCP_DP_RENO)
        cc = CreateObject<TcpMltcpReno>();
      else if (algo == MLTCP_DP_CUBIC)
        cc = CreateObject<TcpMltcpCubic>();
      else
        return Fail(seq, "only Reno and CUBIC sequences");
      tcb = CreateObject<TcpSocketState>();
      tcb->m_segmentSize = MLTCP_DP_SEGMENT;
      tcb->m_cWnd = MLTCP_DP_INIT_CWND * MLTCP_DP_SEGMENT;
      tcb->m_ssThresh = UINT32_MAX;
      tcb->m_rxBuffer = CreateObject<TcpRxBuffer>();
      Seq(e);
      cc->Init(tcb);
      State().Seed(e.seed);  // in place of the model's own draw
    } else if (!cc) {
      return Fail(seq, "an event before the first INIT");
    }
    switch (e.kind) {
      case MLTCP_DP_ACK:
        Seq(e);
        cc->PktsAcked(tcb, e.acked_pkts, MicroSeconds(e.rtt_us));
        if (e.cwnd_limited)
          cc->IncreaseWindow(tcb, e.acked_pkts);
        break;
      case MLTCP_DP_TX_START:
        Seq(e);
        cc->CwndEvent(tcb, TcpSocketState::CA_EVENT_TX_START);
        break;
      case MLTCP_DP_HINT:
        MltcpHint(cc, e.bytes);
        break;
      case MLTCP_DP_LOSS:
      case MLTCP_DP_RTO:
        Seq(e);
        tcb->m_ssThresh = cc->GetSsThresh(tcb, e.inflight_bytes);
        tcb->m_cWnd = e.kind == MLTCP_DP_RTO ? tcb->m_segmentSize : tcb->m_ssThresh.Get();
        if (e.kind == MLTCP_DP_RTO)
          cc->CongestionStateSet(tcb, TcpSocketState::CA_LOSS);
        break;
      case MLTCP_DP_INIT:
        break;
      default:
        return Fail(seq, "a DCQCN event in a window sequence");
    }
    const mltcp_iter& it = State().flow().state();
    mltcp_dp_decision d{};
    d.seq = seq;
    d.cwnd = tcb->GetCwndInSegments();
    d.ssthresh = tcb->m_ssThresh == UINT32_MAX ? MLTCP_INFINITE_SSTHRESH : tcb->GetSsThreshInSegments();
    d.gain = algo == MLTCP_DP_RENO ? State().RenoGain() : State().CubicGain();
    d.iterations = it.iterations;
    d.hinted = it.hinted;
    d.iter_bytes = it.iter_bytes;
    out.push_back(d);
  }

  void Fail(uint32_t seq, const char* why) {
    if (!failed)
      std::fprintf(stderr, "sim_dp_replay: event %u: %s\n", seq, why);
    failed = true;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: sim_dp_replay EVENTS > DECISIONS\n");
    return 2;
  }
  FILE* f = std::fopen(argv[1], "rb");
  if (!f) {
    std::fprintf(stderr, "sim_dp_replay: %s: %s\n", argv[1], std::strerror(errno));
    return 1;
  }
  std::vector<mltcp_dp_event> evs;
  mltcp_dp_event e;
  while (std::fread(&e, sizeof(e), 1, f) == 1)
    evs.push_back(e);
  std::fclose(f);
  Replay r;
  for (size_t i = 0; i < evs.size(); ++i)
    Simulator::Schedule(MicroSeconds(evs[i].now_us), [&r, &evs, i] { r.Step(evs[i], i); });
  Simulator::Run();
  Simulator::Destroy();
  if (r.failed)
    return 1;
  if (std::fwrite(r.out.data(), sizeof(r.out[0]), r.out.size(), stdout) != r.out.size()) {
    std::fprintf(stderr, "sim_dp_replay: write failed\n");
    return 1;
  }
  return 0;
}
