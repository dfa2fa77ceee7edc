// SPDX-License-Identifier: GPL-2.0-only
//
// mltcp-dcqcn.h - a RoCEv2-like flow with DCQCN (Zhu et al., SIGCOMM 2015)
// for ns-3, plain or with the MLTCP gain.  The rate decisions are the core's
// (mltcp_dcqcn_flow_*: tracker and reaction point in the core's order, and
// the notification point mltcp::DcqcnReceiver); this file only moves
// packets:
//   - reaction point (sender): paces UDP datagrams, ECN-capable (ECT(0)),
//     at the core's current rate R_C; on a CNP it calls the core's cut; time
//     passing (alpha and rate timers) and bytes sent (byte counter) are
//     handed to the core before every packet.  MLTCP-DCQCN passes the gain
//     F(bytes_ratio) of an mltcp::Flow fed with the bytes sent in the current
//     iteration (hinted at each message post, as a verbs application knows
//     its message sizes); plain DCQCN passes the neutral gain.
//   - notification point (receiver): on a CE-marked packet asks the core
//     whether to send a CNP (one per flow per CNP interval) and returns it
//     as a small UDP datagram to the sender.
// Differs from RoCE hardware: no PFC; the fabric approximates lossless with
// queues deep enough that nothing drops (the scenario counts drops and
// reports them), so there is no go-back-N retransmission either.
#pragma once

#include <cstdint>

#include "ns3/event-id.h"
#include "ns3/ipv4-address.h"
#include "ns3/node.h"
#include "ns3/socket.h"

#include "mltcp.hpp"
#include "training-job.h"

namespace ns3 {

struct DcqcnFlowConfig {
  mltcp_dcqcn_params dcqcn{};
  mltcp_params mltcp{};
  bool use_mltcp = false;
  uint16_t port = 0;          // data port on the receiver
  uint16_t cnp_port = 0;      // CNP port on the sender
  uint32_t payload = 8972;    // UDP payload per packet (MTU - 28)
  // A QP idle this long restarts at line rate (0: never), as NICs release
  // the rate limiter of an idle QP.
  uint64_t idle_reset_us = 0;
};

// Line rates of this size suit the DCQCN paper's 40 Gbit/s settings scaled
// linearly (R_AI, R_HAI, R_min, byte counter); timers stay as in the paper.
// byte_counter_at_40g: 0 keeps the core's default (10 MB at 40 Gbit/s).
mltcp_dcqcn_params DcqcnParamsForLine(uint64_t line_bps, uint64_t byte_counter_at_40g = 0);

class DcqcnFlow : public JobFlow {
 public:
  DcqcnFlow(Ptr<Node> src, Ipv4Address src_addr, Ptr<Node> dst, Ipv4Address dst_addr,
            const DcqcnFlowConfig& cfg);
  void Send(uint64_t bytes) override;
  void Hint(uint64_t bytes) override;

  uint64_t rate_bps() const { return mltcp_dcqcn_flow_rate_bps(&flow_); }
  uint64_t target_bps() const { return flow_.rp.rate_target_bps; }
  uint32_t cnps_received() const { return flow_.rp.cnps; }
  uint32_t cnps_sent() const { return cnps_sent_; }
  uint32_t ce_marked() const { return ce_marked_; }

 private:
  static uint64_t NowUs();
  void SendNext();
  void OnData(Ptr<Socket> s);
  void OnCnp(Ptr<Socket> s);

  DcqcnFlowConfig cfg_;
  mltcp_dcqcn_flow flow_{};
  mltcp::DcqcnReceiver np_;
  mltcp::Params mltcp_params_;
  Ptr<Socket> tx_, rx_;
  Address sender_cnp_addr_;
  EventId next_send_;
  uint64_t pending_ = 0;
  uint64_t sent_total_ = 0;
  uint64_t last_send_us_ = 0;
  uint32_t cnps_sent_ = 0;
  uint32_t ce_marked_ = 0;
};

}  // namespace ns3
