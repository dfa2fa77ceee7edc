// SPDX-License-Identifier: GPL-2.0-only
//
// mltcp-dcqcn.cc - RoCEv2-like DCQCN flow over ns-3 UDP sockets; rate
// decisions from core/mltcp_dcqcn.h (see mltcp-dcqcn.h).
#include "mltcp-dcqcn.h"

#include <algorithm>

#include "ns3/inet-socket-address.h"
#include "ns3/ipv4-header.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/udp-socket-factory.h"

#include "mltcp-tcp.h"
#include "mltcp_options.hpp"

namespace ns3 {

NS_LOG_COMPONENT_DEFINE("MltcpDcqcn");

namespace {

constexpr uint8_t kTosEct0 = 0x02;
constexpr uint8_t kEcnMask = 0x03;
constexpr uint8_t kEcnCe = 0x03;
constexpr uint32_t kCnpBytes = 64;         // RoCEv2 CNP is a small packet
constexpr uint32_t kUdpIpOverhead = 28;    // IPv4 + UDP headers
constexpr uint64_t kPaperLineBps = 40000000000ULL;

uint64_t ScaleToLine(uint64_t v, uint64_t line_bps) {
  // v * line / 40G without overflow for v, line < 2^42.
  return std::max<uint64_t>(1, static_cast<uint64_t>(
                                   static_cast<long double>(v) * line_bps / kPaperLineBps));
}

// A packet of n bytes tagged ECT(0): ns-3 3.37's UDP socket does not apply
// SetIpTos() to the ECN bits of what it sends, so the tag goes on directly.
Ptr<Packet> EctPacket(uint32_t n) {
  Ptr<Packet> p = Create<Packet>(n);
  SocketIpTosTag ect;
  ect.SetTos(kTosEct0);
  p->ReplacePacketTag(ect);
  return p;
}

}  // namespace

mltcp_dcqcn_params DcqcnParamsForLine(uint64_t line_bps, uint64_t byte_counter_at_40g) {
  mltcp_dcqcn_params p;
  mltcp_dcqcn_params_default(&p);
  if (byte_counter_at_40g)
    p.byte_counter = byte_counter_at_40g;
  p.line_rate_bps = line_bps;
  p.min_rate_bps = ScaleToLine(p.min_rate_bps, line_bps);
  p.rai_bps = ScaleToLine(p.rai_bps, line_bps);
  p.rhai_bps = ScaleToLine(p.rhai_bps, line_bps);
  p.byte_counter = std::max<uint64_t>(mltcp::dcqcn_spec::byte_counter.min,
                                      ScaleToLine(p.byte_counter, line_bps));
  return p;
}

uint64_t DcqcnFlow::NowUs() {
  return static_cast<uint64_t>(Simulator::Now().GetMicroSeconds());
}

DcqcnFlow::DcqcnFlow(Ptr<Node> src, Ipv4Address src_addr, Ptr<Node> dst, Ipv4Address dst_addr,
                     const DcqcnFlowConfig& cfg)
    : cfg_(cfg), np_(mltcp::DcqcnParams(cfg.dcqcn)), mltcp_params_(cfg.mltcp) {
  // np_ validated cfg.dcqcn (mltcp::DcqcnParams throws on bad values).
  mltcp_dcqcn_flow_init(&flow_, &cfg_.dcqcn, cfg.use_mltcp, NowUs());
  mltcp_iter_seed(&flow_.it, &mltcp_params_.raw(), MltcpFlowState::DrawSeed());
  rx_ = Socket::CreateSocket(dst, UdpSocketFactory::GetTypeId());
  rx_->Bind(InetSocketAddress(Ipv4Address::GetAny(), cfg.port));
  rx_->SetIpRecvTos(true);
  rx_->SetRecvCallback(MakeCallback(&DcqcnFlow::OnData, this));

  tx_ = Socket::CreateSocket(src, UdpSocketFactory::GetTypeId());
  tx_->Bind(InetSocketAddress(src_addr, cfg.cnp_port));
  tx_->Connect(InetSocketAddress(dst_addr, cfg.port));
  tx_->SetRecvCallback(MakeCallback(&DcqcnFlow::OnCnp, this));
}

void DcqcnFlow::Hint(uint64_t bytes) {
  // The core lets the rate timers run under the ending iteration's gain
  // before the hint restarts F (mltcp_dcqcn_flow_hint).
  mltcp_dcqcn_flow_hint(&flow_, &mltcp_params_.raw(), &cfg_.dcqcn, sent_total_, bytes, NowUs());
}

void DcqcnFlow::Send(uint64_t bytes) {
  if (bytes == 0)
    return;
  queued_ += bytes;
  complete_ = false;
  const bool idle = pending_ == 0 && !next_send_.IsRunning();
  pending_ += bytes;
  if (idle) {
    if (cfg_.idle_reset_us && NowUs() - last_send_us_ >= cfg_.idle_reset_us)
      mltcp_dcqcn_flow_restart_rate(&flow_, &cfg_.dcqcn, NowUs());
    mltcp_dcqcn_flow_on_tx_start(&flow_, &mltcp_params_.raw(), &cfg_.dcqcn, sent_total_, NowUs(),
                                 0);
    SendNext();
  }
}

void DcqcnFlow::SendNext() {
  if (pending_ == 0)
    return;
  const uint64_t now = NowUs();
  mltcp_dcqcn_flow_advance(&flow_, &mltcp_params_.raw(), &cfg_.dcqcn, now);
  const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(pending_, cfg_.payload));
  Ptr<Packet> pkt = EctPacket(n);  // every datagram ECN-capable
  if (tx_->Send(pkt) < 0) {
    // Host queue full (cannot happen at R_C <= line rate): retry shortly.
    next_send_ = Simulator::Schedule(MicroSeconds(1), &DcqcnFlow::SendNext, this);
    return;
  }
  pending_ -= n;
  sent_total_ += n;
  last_send_us_ = now;
  mltcp_dcqcn_flow_on_sent(&flow_, &mltcp_params_.raw(), &cfg_.dcqcn, n, now);
  // Without acks, the bytes sent are the iteration's progress.
  mltcp_dcqcn_flow_on_ack(&flow_, sent_total_, now);
  const uint64_t rate = std::max<uint64_t>(mltcp_dcqcn_flow_rate_bps(&flow_), 1);
  const double gap_s = static_cast<double>(n + kUdpIpOverhead) * 8.0 / static_cast<double>(rate);
  next_send_ = Simulator::Schedule(Seconds(gap_s), &DcqcnFlow::SendNext, this);
}

void DcqcnFlow::OnData(Ptr<Socket> s) {
  Address from;
  while (Ptr<Packet> p = s->RecvFrom(from)) {
    SocketIpTosTag tos;
    if (p->RemovePacketTag(tos) && (tos.GetTos() & kEcnMask) == kEcnCe) {
      ce_marked_++;
      if (np_.OnCeMarked(NowUs())) {
        // ECT(0) like the data: the RED marker drops non-ECT packets, and on
        // a leaf-spine reverse path that crosses congested queues it dropped
        // CNPs (~10 000 in a 64-job run).  A RoCE fabric carries CNPs in a
        // lossless (usually strict-priority) class; here they are marked,
        // never dropped, and a CE mark on a CNP means nothing to the sender.
        s->SendTo(EctPacket(kCnpBytes), 0, from);
        cnps_sent_++;
      }
    }
    Received(p->GetSize());
  }
}

void DcqcnFlow::OnCnp(Ptr<Socket> s) {
  while (Ptr<Packet> p = s->Recv())
    mltcp_dcqcn_flow_on_cnps(&flow_, &cfg_.dcqcn, 1, NowUs());
}

}  // namespace ns3
