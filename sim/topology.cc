// SPDX-License-Identifier: GPL-2.0-only
//
// topology.cc - mltcp-sim's networks: the dumbbell (one bottleneck) and the
// two-tier leaf-spine with per-flow ECMP, their fabric queues (FIFO, or RED
// as an ECN marker for DCQCN), and the flows (TCP or DCQCN) of the jobs.
#include <algorithm>
#include <string>

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include "scenario.h"

using namespace ns3;

namespace mltcp_sim {

uint32_t SpineFor(uint32_t host, uint64_t seed, uint32_t spines) {
  uint64_t x = (static_cast<uint64_t>(host) + 1) * 0x9E3779B97F4A7C15ull ^ (seed * 0xBF58476D1CE4E5B9ull);
  x ^= x >> 31;
  return static_cast<uint32_t>(x % spines);
}

uint32_t LeafSpineLink(bool up, uint32_t leaf, uint32_t spine, uint32_t leaves, uint32_t spines) {
  return up ? leaf * spines + spine : leaves * spines + spine * leaves + leaf;
}

uint32_t Scenario::QueuePkts() const {
  if (o_.queue_pkts)
    return o_.queue_pkts;
  const double bdp_bytes = o_.link_gbps * 1e9 / 8 * o_.rtt_us * 1e-6;
  return std::max<uint32_t>(32, static_cast<uint32_t>(2 * bdp_bytes / o_.mtu));
}

void Scenario::Configure() {
  const uint32_t seg = o_.mtu - 52;  // IPv4 20 + TCP 20 + timestamps 12
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(seg));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1u << 28));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1u << 26));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
  Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(1)));
  Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MicroSeconds(
                                                        static_cast<int64_t>(o_.min_rto_ms * 1000))));
  Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MicroSeconds(100)));
  RngSeedManager::SetSeed(std::max<uint32_t>(1, o_.seed));
  RngSeedManager::SetRun(1);
}

// queue_a / queue_b: the device of a / b gets the fabric queue disc (FIFO
// or RED/ECN) instead of the default pfifo_fast.
NetDeviceContainer Scenario::Link(Ptr<Node> a, Ptr<Node> b, double gbps, bool queue_a,
                                  bool queue_b) {
  PointToPointHelper p2p;
  p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(static_cast<uint64_t>(gbps * 1e9))));
  p2p.SetDeviceAttribute("Mtu", UintegerValue(o_.mtu));
  // 3 hops each way on the dumbbell (host-switch-switch-host), 4 on the
  // leaf-spine's cross-rack path: a per-hop delay that gives --rtt-us.
  const double hops = o_.topology == "dumbbell" ? 3 : 4;
  p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(
                                       static_cast<int64_t>(o_.rtt_us * 1000 / (2 * hops)))));
  // The device queue is a one-packet staging slot: queueing happens in the
  // queue disc above it, where FIFO limits and ECN marking apply.
  p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));
  NetDeviceContainer d = p2p.Install(a, b);
  if (queue_a)
    InstallFabricQueue(d.Get(0));
  if (queue_b)
    InstallFabricQueue(d.Get(1));
  Ipv4AddressHelper ip;
  const uint32_t net = 0x0a000000u + (next_subnet_++ << 2);  // 10.0.0.0/8 in /30s
  ip.SetBase(Ipv4Address(net), Ipv4Mask("255.255.255.252"));
  ip.Assign(d);
  return d;
}

void Scenario::InstallFabricQueue(Ptr<NetDevice> dev) {
  TrafficControlHelper tch;
  if (CcIsDcqcn(cc_)) {
    // RED as an ECN marker on the instantaneous queue (QW = 1): probability
    // 0 below K_min, rising to P_max at K_max; deep buffer, no hard drops.
    const uint32_t kmin = o_.red_kmin ? o_.red_kmin : 4;
    const uint32_t kmax = o_.red_kmax ? o_.red_kmax : 32;
    tch.SetRootQueueDisc("ns3::RedQueueDisc", "UseEcn", BooleanValue(true), "UseHardDrop",
                         BooleanValue(false), "Gentle", BooleanValue(true), "QW", DoubleValue(1.0),
                         "MinTh", DoubleValue(kmin), "MaxTh", DoubleValue(kmax), "LInterm",
                         DoubleValue(1.0 / o_.red_pmax), "MeanPktSize", UintegerValue(o_.mtu),
                         "MaxSize", QueueSizeValue(QueueSize("100000p")));
  } else {
    tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize",
                         QueueSizeValue(QueueSize(std::to_string(QueuePkts()) + "p")));
  }
  QueueDiscContainer q = tch.Install(dev);
  fabric_queues_.push_back(q.Get(0));
}

void Scenario::BuildDumbbell(uint32_t hosts) {
  // Senders (even host ids) on the left switch, receivers (odd) on the right.
  switches_.Create(2);
  hosts_.Create(hosts);
  InternetStackHelper stack;
  stack.Install(switches_);
  stack.Install(hosts_);
  Link(switches_.Get(0), switches_.Get(1), o_.link_gbps, true, true);
  bottleneck_ = fabric_queues_.front();  // left to right
  for (uint32_t h = 0; h < hosts; h++) {
    Link(hosts_.Get(h), switches_.Get(h % 2), static_cast<double>(AccessBps()) / 1e9, false, true);
    host_addr_.push_back(hosts_.Get(h)->GetObject<Ipv4>()->GetAddress(1, 0).GetLocal());
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();
}

void Scenario::BuildLeafSpine(uint32_t hosts) {
  // Hosts spread round-robin over leaves (a job's workers land in different
  // racks); every leaf connects to every spine at the fabric rate.
  const uint32_t leaves = o_.leaves, spines = o_.spines;
  switches_.Create(leaves + spines);
  hosts_.Create(hosts);
  InternetStackHelper stack;
  stack.Install(switches_);
  stack.Install(hosts_);
  std::vector<std::vector<NetDeviceContainer>> up(leaves);
  for (uint32_t l = 0; l < leaves; l++)
    for (uint32_t s = 0; s < spines; s++) {
      up[l].push_back(Link(switches_.Get(l), switches_.Get(leaves + s), o_.link_gbps, true, true));
      uplink_queues_.push_back(fabric_queues_[fabric_queues_.size() - 2]);  // leaf -> spine
    }
  for (uint32_t h = 0; h < hosts; h++) {
    Link(hosts_.Get(h), switches_.Get(h % leaves), static_cast<double>(AccessBps()) / 1e9, false,
         true);
    host_addr_.push_back(hosts_.Get(h)->GetObject<Ipv4>()->GetAddress(1, 0).GetLocal());
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();
  // Per-flow ECMP.  ns-3's global routing either takes one path or, with
  // RandomEcmpRouting, sprays packets (reordering TCP).  Instead every leaf
  // gets a static /32 route per remote host through spine hash(host, seed):
  // a ring sends exactly one flow to each worker, so per-destination
  // hashing is per-flow hashing here, and a flow never changes path.
  // Static routes take precedence over global ones (list routing priority).
  Ipv4StaticRoutingHelper srh;
  for (uint32_t l = 0; l < leaves; l++) {
    Ptr<Ipv4> ipv4 = switches_.Get(l)->GetObject<Ipv4>();
    Ptr<Ipv4StaticRouting> rt = srh.GetStaticRouting(ipv4);
    for (uint32_t h = 0; h < hosts; h++) {
      if (h % leaves == l)
        continue;
      const uint32_t s = SpineFor(h, o_.seed, spines);
      const NetDeviceContainer& d = up[l][s];
      Ptr<Ipv4> spine = switches_.Get(leaves + s)->GetObject<Ipv4>();
      const Ipv4Address next_hop =
          spine->GetAddress(spine->GetInterfaceForDevice(d.Get(1)), 0).GetLocal();
      rt->AddHostRouteTo(host_addr_[h], next_hop, ipv4->GetInterfaceForDevice(d.Get(0)));
    }
  }
}

Ptr<JobFlow> Scenario::MakeFlow(uint32_t src, uint32_t dst, CcKind cc) {
  const uint16_t port = next_port_++;
  if (CcIsDcqcn(cc)) {
    DcqcnFlowConfig c;
    c.dcqcn = DcqcnParamsForLine(AccessBps(), o_.dcqcn_byte_counter);
    mltcp_params_default(&c.mltcp);
    c.mltcp.slope = o_.slope;
    c.mltcp.intercept = o_.intercept;
    c.use_mltcp = CcIsMltcp(cc);
    c.port = port;
    c.cnp_port = static_cast<uint16_t>(port + 20000);
    c.payload = o_.mtu - 28;
    c.idle_reset_us = static_cast<uint64_t>(o_.dcqcn_idle_reset_us);
    auto f = Create<DcqcnFlow>(hosts_.Get(src), host_addr_[src], hosts_.Get(dst), host_addr_[dst], c);
    dcqcn_flows_.push_back(f);
    all_flows_.push_back(f);
    return f;
  }
  TcpFlowConfig c;
  c.cc = cc;
  mltcp_params_default(&c.mltcp);
  c.mltcp.slope = o_.slope;
  c.mltcp.intercept = o_.intercept;
  c.mltcp.scale_decrease = o_.scale_decrease ? 1 : 0;
  c.port = port;
  auto f = Create<TcpJobFlow>(hosts_.Get(src), hosts_.Get(dst), host_addr_[dst], c);
  all_flows_.push_back(f);
  return f;
}

}  // namespace mltcp_sim
