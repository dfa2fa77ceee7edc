// SPDX-License-Identifier: GPL-2.0-only
//
// scenario.h - one simulation of mltcp-sim: a set of jobs (and maybe a bulk
// flow) on a dumbbell or a leaf-spine.  The topology is built in
// topology.cc, the run in run.cc; what a run measured is a RunResult.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/traffic-control-module.h"

#include "mltcp-dcqcn.h"
#include "mltcp-tcp.h"
#include "options.h"
#include "sim-profile.h"
#include "training-job.h"

namespace mltcp_sim {

using ns3::CcIsDcqcn;
using ns3::CcKind;
using ns3::DcqcnFlow;
using ns3::IterationRecord;
using ns3::Ipv4Address;
using ns3::JobFlow;
using ns3::NetDevice;
using ns3::NetDeviceContainer;
using ns3::Node;
using ns3::NodeContainer;
using ns3::Ptr;
using ns3::QueueDisc;

struct JobPlan {
  JobProfile profile;  // scaled
  double start_offset_s = 0;
};

struct RunResult {
  std::vector<std::vector<IterationRecord>> records;  // per job
  // Per job: communication phases after its recorded iterations (it kept
  // running until the slowest job was done; Options::keep_running).
  std::vector<std::vector<std::pair<double, double>>> background;
  std::vector<size_t> extra_iterations;  // per job: iterations after those
  bool finished = false;
  double sim_end_s = 0;
  double wall_s = 0;
  uint64_t events = 0;
  uint64_t bottleneck_bytes = 0;  // dumbbell: bytes through the bottleneck
  uint64_t uplink_bytes = 0;      // leaf-spine: bytes on leaf -> spine links
  uint32_t uplinks = 0;
  uint64_t drops = 0;             // packets dropped in fabric queues
  uint64_t bulk_bytes = 0;
  double bulk_start_s = 0, bulk_end_s = 0;
  uint64_t cnps = 0, ce_marks = 0;
  std::string stall;  // what was still missing when a run did not finish
  // Leaf-spine: the fabric links (LeafSpineLink ids) each job's flows cross;
  // empty for the dumbbell, whose jobs all share the bottleneck.
  std::vector<std::set<uint32_t>> job_links;
};

// Leaf-spine routing: traffic to host h leaves any other leaf through spine
// SpineFor(h) (per-destination hashing; see BuildLeafSpine).
uint32_t SpineFor(uint32_t host, uint64_t seed, uint32_t spines);

// Ids of the directed fabric links: leaf l -> spine s, then spine s -> leaf l.
uint32_t LeafSpineLink(bool up, uint32_t leaf, uint32_t spine, uint32_t leaves, uint32_t spines);

class Scenario {
 public:
  Scenario(const Options& o, CcKind cc) : o_(o), cc_(cc) {}
  RunResult Run(const std::vector<JobPlan>& plan);

 private:
  void Configure();
  void BuildDumbbell(uint32_t hosts);
  void BuildLeafSpine(uint32_t hosts);
  NetDeviceContainer Link(Ptr<Node> a, Ptr<Node> b, double gbps, bool queue_a, bool queue_b);
  void InstallFabricQueue(Ptr<NetDevice> dev);
  Ptr<JobFlow> MakeFlow(uint32_t src, uint32_t dst, CcKind cc);
  uint32_t QueuePkts() const;
  uint64_t AccessBps() const {
    double factor = o_.access_factor;
    if (factor == 0)  // DCQCN's lossless fabrics run hosts at the fabric's rate
      factor = CcIsDcqcn(cc_) ? 1.0 : 4.0;
    return static_cast<uint64_t>(o_.link_gbps * 1e9 * factor);
  }

  const Options& o_;
  CcKind cc_;
  NodeContainer hosts_, switches_;
  std::vector<Ipv4Address> host_addr_;
  std::vector<Ptr<QueueDisc>> fabric_queues_;
  Ptr<QueueDisc> bottleneck_;
  std::vector<Ptr<QueueDisc>> uplink_queues_;  // leaf-spine: leaf -> spine
  std::vector<Ptr<DcqcnFlow>> dcqcn_flows_;
  std::vector<Ptr<JobFlow>> all_flows_;
  uint16_t next_port_ = 5000;
  uint32_t next_subnet_ = 0;
};

}  // namespace mltcp_sim
